//! A backfill survives Cassandra not answering for 10 s: the node's JVM is paused (SIGSTOP) in the
//! middle of a run and resumed (SIGCONT); the writes time out, are retried with back-off, and the
//! run completes; verify passes. The node is never stopped (other tests share it). Its own test
//! binary, so that no other test of this file runs during the pause. Needs `REMODEL_PG_URL` and
//! `REMODEL_CQL_URL`, and the pid file `scripts/db` writes (`.remodel-db/cassandra/cassandra.pid`).

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use support::live::{json, wait_until, Case};

/// Where `scripts/db` keeps the pid file: `$REMODEL_DB_DIR`, this checkout's `.remodel-db`, or
/// (in a git worktree) the main checkout's, whose databases a worktree uses.
fn pid_file_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(dir) = std::env::var("REMODEL_DB_DIR") {
        out.push(PathBuf::from(dir).join("cassandra/cassandra.pid"));
    }
    out.push(support::root().join(".remodel-db/cassandra/cassandra.pid"));
    let common = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(support::root())
        .output();
    if let Ok(o) = common {
        let dir = PathBuf::from(support::text(&o.stdout).trim());
        if let Some(main) = dir.parent() {
            out.push(main.join(".remodel-db/cassandra/cassandra.pid"));
        }
    }
    out
}

/// The pid of the Cassandra JVM `scripts/db` started (checked to be a CassandraDaemon).
fn cassandra_pid() -> u32 {
    let candidates = pid_file_candidates();
    for file in &candidates {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(pid) = text.trim().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("CassandraDaemon") {
            return pid;
        }
    }
    panic!("no running Cassandra started by scripts/db: looked for its pid in {candidates:?}");
}

fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .map(|s| s.success());
    assert_eq!(ok.ok(), Some(true), "kill {sig} {pid}");
}

/// Sends SIGCONT when dropped, so that a failing test never leaves the node paused.
struct Paused(u32);

impl Drop for Paused {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}

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
