//! The queue of issue 24 against real Postgres and Cassandra (`fixtures/plan/queue`): an outbox
//! written, read oldest-first and deleted row by row. The plan keeps it (with a `tombstones`
//! warning: each read walks the deleted rows before the live ones); `remodel replay --writes`
//! must find the reads and the write paths it has right: the oldest ten after inserts and after
//! deletes equal Postgres'. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use support::live::Case;

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
    let (report, shown) = case.replay_writes(&plan_path, 12, 300, 7);
    let read = support::live::replayed(&report, "SELECT id, payload FROM outbox", &plan);
    assert_eq!(read["outcome"], "replayed", "{read:#}\n{shown}");
    assert!(read["rows"].as_u64().unwrap_or(0) > 0, "{read:#}\n{shown}");
    assert_eq!(
        read["mismatches"].as_array().map(Vec::len).unwrap_or(0),
        0,
        "{read:#}\n{shown}"
    );
    for sql in ["INSERT INTO outbox", "DELETE FROM outbox"] {
        support::live::assert_write_clean(
            support::live::replayed(&report, sql, &plan),
            sql,
            &shown,
        );
    }
    case.cleanup().await;
}
