//! A backfill survives Cassandra not answering for 10 s: the node's JVM is paused (SIGSTOP) in the
//! middle of a run and resumed (SIGCONT); the writes time out, are retried with back-off, and the
//! run completes; verify passes. The node is never stopped (other tests share it). Its own test
//! binary, so that no other test of this file runs during the pause. Needs `REMODEL_PG_URL` and
//! `REMODEL_CQL_URL`, and the pid file `scripts/db` writes (`.remodel-db/cassandra/cassandra.pid`).

mod support;

use std::time::{Duration, Instant};
use support::live::{json, wait_until, Case};
use support::pause::{cassandra_pid, signal, Paused};

#[tokio::test(flavor = "multi_thread")]
async fn backfill_survives_cassandra_pausing_for_ten_seconds() {
    remodel_testdb::live!(Postgres, Cassandra);
    let pid = cassandra_pid();
    let case = Case::new("bf_outage").await;
    let plan = case.rideshare(20_000);
    let run = case.dir.join("run");
    // About 15 s of throttled writing, with 2 s request timeouts so that the pause makes them fail.
    let extra = [
        "--create-schema",
        "--range-rows",
        "2000",
        "--max-rows-per-second",
        "4000",
        "--request-timeout",
        "2",
        "--retry-for",
        "120",
    ];
    let mut child = support::command()
        .args(case.backfill_args(&plan, &run, &extra))
        .spawn()
        .expect("start remodel backfill");
    let checkpoint = run.join("checkpoint.json");
    wait_until(&mut child, 120, "a finished range", || {
        std::fs::read_to_string(&checkpoint).is_ok_and(|t| t.contains("\"written\""))
    });
    signal("-STOP", pid);
    let paused = Paused(pid);
    std::thread::sleep(Duration::from_secs(10));
    drop(paused);

    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the backfill did not finish within 300 s of the pause"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "backfill failed after the pause: {status}"
    );
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed");
    assert!(
        summary["retries"].as_u64().unwrap() > 0,
        "no write was retried: {summary}"
    );
    for t in summary["tables"].as_array().unwrap() {
        assert_eq!(t["rows_read"], t["rows_written"], "{t}");
    }
    let log = std::fs::read_to_string(run.join("backfill.log")).unwrap();
    assert!(log.contains("retrying with back-off"), "{log}");
    assert!(log.contains("Cassandra answers again"), "{log}");
    let stdout = case.verify(&plan, &["--sample", "300"]);
    assert!(stdout.contains("verify: all 4 tables match"), "{stdout}");
    case.cleanup().await;
}
