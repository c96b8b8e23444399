//! A write that cannot reach its consistency level is rejected with the reason after its
//! retries, never dropped; a read that cannot is an error, never a pass. On the one node of
//! `scripts/db`, a keyspace with two replicas can never reach LOCAL_QUORUM (two of two) nor ALL:
//! the node answers every request `Unavailable` at once, the case of a cluster with too many
//! nodes down, without stopping any node (other tests share it). ONE can: the level each
//! command is asked for is the level it sends.

mod support;

use support::live::{json, Case};

/// Two replicas on a one-node cluster: a quorum (two) is never alive.
const TWO_REPLICAS: (&str, &str) = ("{'class': 'SimpleStrategy', 'replication_factor': 2}", "2");

#[tokio::test(flavor = "multi_thread")]
async fn writes_that_cannot_reach_their_level_are_rejected_with_the_reason_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let node = remodel_testdb::cql_node().unwrap_or_else(|e| panic!("{e}"));
    let case = Case::replicated("bf_level", &node, TWO_REPLICAS).await;
    let plan = case.rideshare(30);
    let run = case.dir.join("run");
    let extra = [
        "--create-schema",
        "--retry-for",
        "1",
        "--max-errors",
        "100%",
    ];
    let args = case.backfill_args(&plan, &run, &extra);
    let out = support::remodel(&support::live::refs(&args));
    let shown = format!(
        "{}\n{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed", "{summary}");
    assert_eq!(summary["consistency"], "LOCAL_QUORUM", "{summary}");
    assert!(
        summary["retry_causes"]["unavailable"].as_u64().unwrap_or(0) > 0,
        "no write was retried as unavailable: {summary}"
    );
    let mut rejected = 0;
    for t in summary["tables"].as_array().expect("tables") {
        assert!(t["rows_read"].as_u64().unwrap_or(0) > 0, "{t}");
        assert_eq!(t["rows_read"], t["rows_rejected"], "{t}");
        assert_eq!(t["rows_written"], 0, "{t}");
        let file = run.join(t["rejects_file"].as_str().expect("a rejects file"));
        for line in std::fs::read_to_string(&file).expect("rejects").lines() {
            let r: serde_json::Value = serde_json::from_str(line).expect("a reject");
            assert_eq!(r["kind"], "consistency", "{r}");
            let reason = r["reason"].as_str().unwrap_or("");
            assert!(
                reason.starts_with("not stored at consistency LOCAL_QUORUM: ")
                    && reason.contains("retries over")
                    && reason.contains("Not enough nodes are alive"),
                "{reason}"
            );
            assert!(!r["source_key"].as_object().expect("key").is_empty(), "{r}");
            rejected += 1;
        }
    }
    assert!(rejected > 90, "{rejected} rejects: {shown}");
    assert!(
        shown.contains("(") && shown.contains("unavailable)"),
        "{shown}"
    );

    // A read at ALL (or at the plan's LOCAL_QUORUM) cannot be answered: verify fails (exit 2),
    // it never passes on what it could not read.
    let out = case.verify_output(
        &plan,
        &["--consistency", "ALL", "--retry-for", "1", "--sample", "10"],
    );
    let shown = format!(
        "{}\n{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("verify: reading the target at consistency ALL")
            && shown.contains("not readable at consistency ALL"),
        "{shown}"
    );
    // The level asked for is the level sent: at ONE the one replica answers, and every row the
    // run rejected is not expected (so the tables match); at the plan's level it cannot.
    let run_s = run.to_string_lossy().to_string();
    let at_one = case.verify(
        &plan,
        &[
            "--consistency",
            "ONE",
            "--run-dir",
            &run_s,
            "--sample",
            "10",
        ],
    );
    assert!(at_one.contains("verify: all 4 tables match"), "{at_one}");
    let out = case.verify_output(&plan, &["--retry-for", "1", "--sample", "10"]);
    let shown = format!(
        "{}\n{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("not readable at consistency LOCAL_QUORUM"),
        "{shown}"
    );
    case.cleanup().await;
}
