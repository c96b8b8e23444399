//! `remodel sync --follow` rides out Cassandra not answering for 10 s (issue 22: "a Cassandra
//! pause of 10 s → it catches up"): the node's JVM is paused (SIGSTOP) while a writer commits and
//! sync streams, then resumed (SIGCONT). Writes time out (2 s) and are retried with back-off; the
//! sync neither dies nor loses a change: it catches up to every row change the writer committed,
//! and the target tables equal the source. Its own test
//! binary, so that no other test of this file runs during the pause; the node is never stopped
//! (other tests share it).

mod support;

use std::process::Command;
use std::time::{Duration, Instant};
use support::live::{wait_until, Case};
use support::pause::{cassandra_pid, Paused};
use support::sync::{
    applied, assert_no_differences, assert_trip_tables_equal, state, Following, Writer,
};

const TRIPS: u64 = 5_000;

#[tokio::test(flavor = "multi_thread")]
async fn sync_catches_up_after_cassandra_pauses_for_ten_seconds_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let pid = cassandra_pid();
    let started = Instant::now();
    let case = Case::new("sync_outage").await;
    // Requests time out after 2 s, so that the pause makes writes fail and be retried.
    let extra = [
        "--create-schema",
        "--request-timeout",
        "2",
        "--retry-for",
        "120",
    ];
    let Following {
        plan,
        guard: _guard,
        run,
        mut child,
    } = Following::start(&case, TRIPS, "remodel_sync_o", &extra).await;
    let writer = Writer::steady(&case.url, TRIPS);
    wait_until(&mut child, 300, "streaming", applied(&run, 20));

    let paused = Paused(pid);
    support::pause::signal("-STOP", pid);
    let during = state(&run)["transactions"].as_u64().unwrap_or(0);
    std::thread::sleep(Duration::from_secs(10));
    drop(paused);
    assert!(
        child.try_wait().expect("poll sync").is_none(),
        "sync died during the pause"
    );
    // Writes go on after the pause; then every committed change must arrive.
    std::thread::sleep(Duration::from_secs(3));
    let (rounds, written) = writer.stop();
    let caught_up = || state(&run)["changes"].as_u64().unwrap_or(0) >= written;
    wait_until(&mut child, 300, "catching up after the pause", caught_up);
    let s = state(&run);
    assert_eq!(s["changes"].as_u64(), Some(written), "{rounds} rounds: {s}");
    assert!(
        s["transactions"].as_u64().unwrap_or(0) > during,
        "nothing applied after the pause: {s}"
    );
    eprintln!(
        "sync outage: caught up {written} row changes ({rounds} rounds), {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Ctrl-C ends it cleanly (exit 130, resumable).
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    let status = child.wait().expect("sync exits");
    assert_eq!(status.code(), Some(130), "{status}");
    let log = std::fs::read_to_string(format!("{run}.log")).expect("the sync's log");
    assert!(
        log.contains("; retrying with back-off for up to 120 s"),
        "{log}"
    );
    assert!(log.contains("Cassandra answers again"), "{log}");
    assert_no_differences(&case, &plan, "after the pause");
    assert_trip_tables_equal(&case, "after the pause").await;
    let out = support::remodel(&["sync", "--finish", "--source", &case.url, "--run-dir", &run]);
    assert!(out.status.success(), "{}", support::sync::shown(&out));
    case.cleanup().await;
}
