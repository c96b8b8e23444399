//! Counter tables against real Postgres and Cassandra (issue 24): the read-heavy likes app of
//! `fixtures/plan/counters-read-heavy` keeps `count(*)` of a post's likes in a counter table.
//! `remodel replay --writes` generates the rows, backfills them (the counter table by adding each
//! post's count), then runs the plan's INSERT and DELETE write paths on both sides, each followed
//! by the reads it affects: the counter must equal `count(*)` in Postgres after every insert and
//! delete (a delete of a like that does not exist must change nothing). Then every post's counter
//! is compared with Postgres' count. The same for a group that may be NULL
//! (`fixtures/plan/counters-nullable-group`). Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use support::live::Case;

#[tokio::test(flavor = "multi_thread")]
async fn counters_live_equal_count_after_inserts_and_deletes() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("counters").await;
    let plan_path = case.plan("fixtures/plan/counters-read-heavy");
    let plan = support::live::json(std::path::Path::new(&plan_path));
    assert!(
        plan["design"]["tables"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["counter"].is_object())),
        "the read-heavy plan keeps a counter table"
    );
    let (report, shown) = case.replay_writes(&plan_path, 12, 300, 5);
    let count = support::live::replayed(&report, "SELECT count(*) FROM likes", &plan);
    assert_eq!(count["outcome"], "replayed", "{count:#}\n{shown}");
    assert_eq!(
        count["mismatches"].as_array().map(Vec::len).unwrap_or(0),
        0,
        "{count:#}\n{shown}"
    );
    for sql in ["INSERT INTO likes", "DELETE FROM likes"] {
        support::live::assert_write_clean(
            support::live::replayed(&report, sql, &plan),
            sql,
            &shown,
        );
    }
    case.cleanup().await;
}

/// The help desk of `fixtures/plan/counters-nullable-group`: tickets counted per assignee, and
/// listed per assignee, NULL while nobody has taken one. Replay writes NULL into the nullable
/// assignee one sample in four: tickets opened unassigned, given back, taken from the queue,
/// closed while unassigned. Each counter statement and each statement of the per-assignee table
/// must skip the row without an assignee (a NULL partition key fails the write), and every count
/// and list must still equal Postgres'.
#[tokio::test(flavor = "multi_thread")]
async fn counters_live_leave_rows_without_a_group_uncounted() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("counters_null").await;
    let plan_path = case.plan("fixtures/plan/counters-nullable-group");
    let plan = support::live::json(std::path::Path::new(&plan_path));
    let (report, shown) = case.replay_writes(&plan_path, 12, 300, 5);
    for sql in [
        "SELECT count(*) FROM tickets",
        "SELECT ticket_id, title, opened_at FROM tickets WHERE assignee_id",
    ] {
        let read = support::live::replayed(&report, sql, &plan);
        assert_eq!(read["outcome"], "replayed", "{sql}: {read:#}\n{shown}");
    }
    for sql in [
        "INSERT INTO tickets",
        "UPDATE tickets",
        "DELETE FROM tickets",
    ] {
        support::live::assert_write_clean(
            support::live::replayed(&report, sql, &plan),
            sql,
            &shown,
        );
    }
    case.cleanup().await;
}
