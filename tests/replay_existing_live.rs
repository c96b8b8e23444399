//! `remodel replay --existing` on a backfilled 100,000-trip rideshare (issue 20's proof before
//! cut-over), against real Postgres and Cassandra: `example-data`, `backfill`, then replay of every
//! read on the rows already there, read-only, with the adversarial samplers. Needs
//! `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::{json, Value};
use std::time::Instant;
use support::live::{refs, Case};

/// Trips loaded (the figure).
const TRIPS: u64 = 100_000;

/// q2 (a city's trips of one day, newest first, LIMIT $4) reading every day bucket between its
/// bounds, merged newest first and cut at the LIMIT on the client.
fn q2_client() -> Value {
    json!({
        "sort": [{"by": {"kind": "column", "column": {"table": "trips", "column": "started_at"}},
                  "desc": true, "nulls_first": true}],
        "limit": {"kind": "param", "n": 4}
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn existing_rideshare_replays_every_read_read_only() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_existing").await;
    let started = Instant::now();
    let plan_path = case.rideshare(TRIPS);
    let loaded = started.elapsed();
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan_path,
        &run,
        &["--create-schema"],
    )));
    let backfilled = started.elapsed();
    let designed: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).expect("plan.json");

    // Writes are refused on the rows already there, with one line.
    let out = support::remodel(&[
        "replay",
        "--plan",
        &plan_path,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--existing",
        "--writes",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = support::text(&out.stderr);
    assert!(
        err.contains("--writes cannot be combined with --existing") && err.lines().count() == 1,
        "{err}"
    );

    let fixed = support::buckets::every_bucket(&designed, "q2", "trip_date", (2, 3), q2_client());
    let before = Instant::now();
    let (status, shown, report) =
        case.replay_existing(&fixed, "every-bucket", &["--samples", "20"]);
    let replayed = before.elapsed();
    eprintln!(
        "100k rideshare: example-data + plan {:.1} s, backfill {:.1} s, replay --existing {:.1} s\n{shown}",
        loaded.as_secs_f64(),
        (backfilled - loaded).as_secs_f64(),
        replayed.as_secs_f64()
    );
    assert_eq!(status, Some(0), "{shown}");
    assert_eq!(report["existing"], true);
    let patterns = report["patterns"].as_array().expect("patterns");
    assert_eq!(patterns.len(), 4, "every read, no write: {shown}");
    for p in patterns {
        assert_eq!(p["outcome"], "replayed", "{p}");
        assert_eq!(p["samples"], 20, "{p}");
        assert_eq!(p["mismatches"].as_array().map(Vec::len), Some(0), "{p}");
        assert!(p["partitions_read"].as_f64().is_some(), "{p}");
        assert!(p["plan_partitions"].as_f64().is_some(), "{p}");
    }
    assert!(
        shown.contains("replay: 4 of 4 patterns replayed, 0 not replayed"),
        "{shown}"
    );

    // The lower-bound-only plan loses the trips past the first day of a window.
    let broken = support::buckets::lower_bound_only(&designed, "q2", "trip_date", 2);
    let (status, shown, report) =
        case.replay_existing(&broken, "lower-bound-only", &["--samples", "20"]);
    assert_eq!(status, Some(1), "{shown}");
    let q2 = report["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pattern"] == "q2")
        .expect("q2");
    assert!(!q2["mismatches"].as_array().unwrap().is_empty(), "{q2}");
    case.cleanup().await;
}
