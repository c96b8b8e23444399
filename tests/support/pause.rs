//! Pausing the Cassandra node `scripts/db` started (SIGSTOP, then SIGCONT), for the outage
//! tests. The node is never stopped: other tests share it.

use std::path::PathBuf;
use std::process::Command;

/// Where `scripts/db` keeps the pid file: `$REMODEL_DB_DIR`, this checkout's `.remodel-db`, or
/// (in a git worktree) the main checkout's, whose databases a worktree uses.
fn pid_file_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(dir) = std::env::var("REMODEL_DB_DIR") {
        out.push(PathBuf::from(dir).join("cassandra/cassandra.pid"));
    }
    out.push(super::root().join(".remodel-db/cassandra/cassandra.pid"));
    let common = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(super::root())
        .output();
    if let Ok(o) = common {
        let dir = PathBuf::from(super::text(&o.stdout).trim());
        if let Some(main) = dir.parent() {
            out.push(main.join(".remodel-db/cassandra/cassandra.pid"));
        }
    }
    out
}

/// The pid of the Cassandra JVM `scripts/db` started (checked to be a CassandraDaemon).
pub fn cassandra_pid() -> u32 {
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

/// Sends `sig` (`-STOP`, `-CONT`) to `pid`.
pub fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .map(|s| s.success());
    assert_eq!(ok.ok(), Some(true), "kill {sig} {pid}");
}

/// Sends SIGCONT when dropped, so that a failing test never leaves the node paused.
pub struct Paused(pub u32);

impl Drop for Paused {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}
