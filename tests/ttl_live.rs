//! Issue 24's TTL against real Postgres and Cassandra (`fixtures/plan/expiring`): the backfill
//! writes each `password_resets` row with the seconds left until its `expires_at`, skips and
//! counts the rows already past it, and Cassandra drops the short-lived rows once their instant
//! passes; verify counts what is left. Then `remodel replay --writes` runs the plan's INSERT and
//! UPDATE (each `USING TTL ?` bound to `seconds_until`) against the same SQL in Postgres.
//! Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_testdb::scylla::value::{CqlValue, Row};
use std::time::Duration;
use support::live::{json, refs, Case};

/// `(token, TTL(user_id))` of every row of `password_resets_by_id`.
async fn stored(case: &Case) -> Vec<(String, Option<i32>)> {
    let rows = case
        .ks
        .session()
        .query_unpaged(
            "SELECT \"token\", TTL(user_id) FROM password_resets_by_id",
            &[],
        )
        .await
        .expect("select")
        .into_rows_result()
        .expect("rows");
    let mut out: Vec<(String, Option<i32>)> = rows
        .rows::<Row>()
        .expect("rows")
        .map(|r| {
            let c = r.expect("row").columns;
            let token = match &c[0] {
                Some(CqlValue::Text(s)) => s.clone(),
                other => panic!("token {other:?}"),
            };
            let ttl = match &c[1] {
                Some(CqlValue::Int(n)) => Some(*n),
                _ => None,
            };
            (token, ttl)
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn expiring_rows_are_backfilled_with_their_ttl_and_gone_after_it() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("ttl_expiry").await;
    let schema = std::fs::read_to_string(support::root().join("fixtures/plan/expiring/schema.sql"))
        .expect("schema.sql");
    let pg = case.pg.client();
    pg.batch_execute(&schema).await.expect("create the source");
    pg.batch_execute(
        "INSERT INTO users VALUES (1, 'a@x'), (2, 'b@x');
         INSERT INTO password_resets VALUES
           ('long', 1, now() + interval '1 hour'),
           ('short_1', 1, now() + interval '4 seconds'),
           ('short_2', 2, now() + interval '4 seconds'),
           ('gone_1', 1, now() - interval '1 hour'),
           ('gone_2', 2, now() - interval '1 second');",
    )
    .await
    .expect("rows");
    let plan = case.plan("fixtures/plan/expiring");
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema", "--tables", "password_resets_by_id"],
    )));

    // Read = written + rejected + expired: the two past rows are counted, not lost.
    let summary = json(&run.join("summary.json"));
    let t = summary["tables"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == "password_resets_by_id"))
        .expect("table in summary.json");
    assert_eq!(t["rows_read"], 5, "{t}");
    assert_eq!(t["rows_written"], 3, "{t}");
    assert_eq!(t["rows_expired"], 2, "{t}");
    assert_eq!(t["rows_rejected"], 0, "{t}");

    // Each row carries the seconds left until its expires_at.
    let rows = stored(&case).await;
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["long", "short_1", "short_2"], "{rows:?}");
    let ttl = |name: &str| rows.iter().find(|(n, _)| n == name).and_then(|(_, t)| *t);
    let long = ttl("long").expect("long has a TTL");
    assert!((3590..=3600).contains(&long), "{long}");
    for s in ["short_1", "short_2"] {
        let t = ttl(s).unwrap_or_else(|| panic!("{s} has no TTL"));
        assert!((1..=4).contains(&t), "{s}: {t}");
    }

    // After their instant, Cassandra holds only the long-lived row.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let rows = stored(&case).await;
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["long"], "{rows:?}");

    // verify: 5 source rows, 4 past their instant now, 1 stored.
    let out = case.verify(
        &plan,
        &["--tables", "password_resets_by_id", "--sample", "5"],
    );
    assert!(
        out.contains(
            "counts ok: expected 1 (5 source rows less 4 past their TTL instant), stored 1"
        ),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replayed_inserts_and_updates_carry_the_ttl() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("ttl_replay").await;
    let plan = case.plan("fixtures/plan/expiring");
    let (report, shown) = case.replay_writes(&plan, 6, 200, 5);
    let patterns = report["patterns"].as_array().expect("patterns");
    let plan_json = json(std::path::Path::new(&plan));
    for start in [
        "INSERT INTO password_resets",
        "UPDATE password_resets",
        "INSERT INTO login_sessions",
        "UPDATE login_sessions",
    ] {
        let id = support::live::pattern_id(&plan_json, start);
        let p = patterns
            .iter()
            .find(|p| p["pattern"] == id && p["kind"] != "select")
            .unwrap_or_else(|| panic!("{id} not replayed:\n{shown}"));
        assert_eq!(p["outcome"], "replayed", "{id}: {p:#}\n{shown}");
        let mismatches = p["mismatches"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(mismatches, 0, "{id}: {p:#}\n{shown}");
    }
    // Every row the replay wrote carries a TTL (none is left to live forever).
    let rows = case
        .ks
        .session()
        .query_unpaged("SELECT TTL(user_id) FROM login_sessions_by_id", &[])
        .await
        .expect("select")
        .into_rows_result()
        .expect("rows");
    let ttls: Vec<Option<CqlValue>> = rows
        .rows::<Row>()
        .expect("rows")
        .map(|r| r.expect("row").columns[0].clone())
        .collect();
    assert!(!ttls.is_empty(), "replay wrote no login_sessions row");
    assert!(
        ttls.iter()
            .all(|t| matches!(t, Some(CqlValue::Int(n)) if *n > 0)),
        "{ttls:?}"
    );
}
