//! The queue of issue 24 against real Postgres and Cassandra (`fixtures/plan/queue`): an outbox
//! written, read oldest-first and deleted row by row. The plan keeps it (with a `tombstones`
//! warning: each read walks the deleted rows before the live ones); `remodel replay --writes`
//! must find the reads and the write paths it has right: the oldest ten after inserts and after
//! deletes equal Postgres'. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::Value;
use support::live::Case;

/// The replay report's entry of the pattern whose SQL starts with `sql_start`.
fn pattern<'r>(report: &'r Value, sql_start: &str, plan: &Value) -> &'r Value {
    let id = plan["workload"]["patterns"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["sql"].as_str().is_some_and(|s| s.starts_with(sql_start)))
        })
        .and_then(|p| p["id"].as_str())
        .unwrap_or_else(|| panic!("no pattern {sql_start}"));
    report["patterns"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pattern"] == id))
        .unwrap_or_else(|| panic!("{id} is not in replay.json"))
}

#[tokio::test(flavor = "multi_thread")]
async fn queue_live_reads_the_oldest_rows_after_inserts_and_deletes() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("queue").await;
    let plan_path = case.plan("fixtures/plan/queue");
    let plan = support::live::json(std::path::Path::new(&plan_path));
    let warned = plan["design"]["tables"].as_array().is_some_and(|ts| {
        ts.iter().any(|t| {
            t["entity"] == "outbox"
                && t["warnings"]
                    .as_array()
                    .is_some_and(|ws| ws.iter().any(|w| w["code"] == "tombstones"))
        })
    });
    assert!(warned, "the outbox's table states its tombstones");
    let out = case.dir.join("replay");
    let out_s = out.to_string_lossy().to_string();
    let run = support::remodel(&[
        "replay",
        "--plan",
        &plan_path,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--writes",
        "--samples",
        "12",
        "--rows",
        "300",
        "--seed",
        "7",
        "--out",
        &out_s,
    ]);
    let shown = format!(
        "{}\n{}",
        support::text(&run.stdout),
        support::text(&run.stderr)
    );
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "remodel replay failed:\n{shown}"
    );
    let report = support::live::json(&out.join("replay.json"));
    let read = pattern(&report, "SELECT id, payload FROM outbox", &plan);
    assert_eq!(read["outcome"], "replayed", "{read:#}\n{shown}");
    assert!(read["rows"].as_u64().unwrap_or(0) > 0, "{read:#}\n{shown}");
    assert_eq!(
        read["mismatches"].as_array().map(Vec::len).unwrap_or(0),
        0,
        "{read:#}\n{shown}"
    );
    for sql in ["INSERT INTO outbox", "DELETE FROM outbox"] {
        let w = pattern(&report, sql, &plan);
        assert_eq!(w["outcome"], "replayed", "{sql}: {w:#}\n{shown}");
        assert!(
            w["reads_after"].as_u64().unwrap_or(0) > 0,
            "{sql}: no read compared after the write: {w:#}\n{shown}"
        );
        assert_eq!(
            w["mismatches"].as_array().map(Vec::len).unwrap_or(0),
            0,
            "{sql}: {w:#}\n{shown}"
        );
    }
    case.cleanup().await;
}
