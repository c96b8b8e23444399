//! Issue 20, class 1 (time buckets), against real Postgres and Cassandra: a store's orders read
//! over day-long windows (`fixtures/plan/buckets/`), backfilled, then `remodel replay --existing`
//! in a session in Europe/Berlin. A plan that binds the bucket of the window's lower bound only
//! loses the rows past the first bucket; replay's adversarial windows (local midnight, across
//! the nearest UTC and local midnight, three days long) must say so, and must pass the plan that
//! reads every bucket between the bounds. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::{json, Value};
use support::live::{refs, Case};

/// 3 stores, 3,000 orders every 7 min 13 s from 2025-01-10 00:00 UTC (15 days, every hour of
/// the day, so every window crossing midnight holds rows on both sides of it).
const ORDERS: &str = "
INSERT INTO stores SELECT i, 'Store ' || i FROM generate_series(1, 3) i;
INSERT INTO orders SELECT i, 1 + i % 3,
    timestamptz '2025-01-10 00:00:00+00' + i * interval '7 minutes 13 seconds',
    (i % 500) / 7.0, CASE WHEN i % 5 = 0 THEN NULL ELSE 'n' || i END
  FROM generate_series(1, 3000) i;";

/// The plan with q1 reading the lower bound's bucket only (`broken`) or every bucket.
fn variant(designed: &Value, broken: bool) -> Value {
    if broken {
        support::buckets::lower_bound_only(designed, "q1", "order_date", 2)
    } else {
        support::buckets::every_bucket(designed, "q1", "order_date", (2, 3), json!({}))
    }
}

/// `remodel replay --existing --timezone ZONE` of q1 in `plan`, 16 samples.
fn replay(case: &Case, plan: &Value, name: &str, zone: &str) -> (Option<i32>, String, Value) {
    let flags = ["--timezone", zone, "--samples", "16", "--patterns", "q1"];
    case.replay_existing(plan, name, &flags)
}

#[tokio::test(flavor = "multi_thread")]
async fn windows_across_buckets_catch_a_plan_that_reads_one_bucket() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_buckets").await;
    let schema = std::fs::read_to_string(support::root().join("fixtures/plan/buckets/schema.sql"))
        .expect("buckets schema");
    case.load(&format!("{schema}\n{ORDERS}"), "the orders")
        .await;
    let plan_path = case.plan("fixtures/plan/buckets");
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan_path,
        &run,
        &["--create-schema"],
    )));
    let designed: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).expect("plan.json");

    // In UTC, windows aligned on days would meet one bucket each: only the windows across
    // midnight and over three days find the rows the plan loses.
    let broken = variant(&designed, true);
    let (status, shown, _) = replay(&case, &broken, "lower-bound-only-utc", "UTC");
    assert_eq!(status, Some(1), "{shown}");
    assert!(shown.contains("MISMATCH q1 ($1="), "{shown}");

    let (status, shown, _) = replay(&case, &broken, "lower-bound-only", "Europe/Berlin");
    assert_eq!(status, Some(1), "{shown}");
    assert!(shown.contains("MISMATCH q1 ($1="), "{shown}");
    assert!(
        shown.contains("of SQL's rows missing") || shown.contains("Cassandra returns"),
        "{shown}"
    );
    // The session ran in Berlin: the parameters are shown as the application means them.
    assert!(shown.contains("session time zone Europe/Berlin"), "{shown}");
    assert!(shown.contains(":00+01"), "{shown}");

    let fixed = variant(&designed, false);
    let (status, shown, report) = replay(&case, &fixed, "every-bucket", "Europe/Berlin");
    assert_eq!(status, Some(0), "{shown}");
    let q = &report["patterns"][0];
    assert_eq!(q["outcome"], "replayed", "{q}");
    assert_eq!(q["samples"], 16, "{q}");
    assert_eq!(q["mismatches"].as_array().map(Vec::len), Some(0), "{q}");
    // Windows across midnight and three days long read more than one partition on average.
    let partitions = q["partitions_read"].as_f64().expect("partitions_read");
    assert!(partitions > 1.2, "{q}");
    assert_eq!(report["existing"], true);
    case.cleanup().await;
}
