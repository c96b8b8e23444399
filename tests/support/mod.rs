//! Shared by the end-to-end tests: running the real `remodel` binary from the repository root.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod buckets;
pub mod codegen;
pub mod cql_statements;
pub mod live;
pub mod pause;
pub mod sync;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Replay's clock in every test that replays (`--now`): a replay is then a function of its
/// seed and of this instant, not of the day the tests run.
pub const REPLAY_NOW: &str = "2026-06-15T09:30:00Z";

/// The repository root (where `examples/` and `fixtures/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `remodel` command that runs in the repository root.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_remodel"));
    c.current_dir(root());
    c
}

/// Runs `remodel ARGS…` in the repository root and returns what it did.
pub fn remodel(args: &[&str]) -> Output {
    command()
        .args(args)
        .output()
        .expect("the remodel binary runs")
}

/// Process output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh scratch folder for one test (a leftover of a crashed run is removed first).
pub fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("remodel-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

/// Runs `remodel ARGS…`, asserts it exits 0 (showing its output otherwise), returns stdout.
pub fn remodel_ok(args: &[&str]) -> String {
    let out = remodel(args);
    assert!(
        out.status.success(),
        "remodel {} failed ({}):\n{}\n{}",
        args.join(" "),
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs `remodel plan INPUT --keyspace KS --out OUT` and returns the path of the plan.json.
pub fn plan_into(input: &str, keyspace: &str, out: &std::path::Path) -> PathBuf {
    let out_s = out.to_string_lossy().to_string();
    remodel_ok(&["plan", input, "--keyspace", keyspace, "--out", &out_s]);
    out.join("plan.json")
}

/// Every file under `dir`, recursively, as (path, text); nothing when `dir` does not exist.
pub fn files(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("a folder entry").path();
        if p.is_dir() {
            files(&p, out);
        } else {
            let bytes = std::fs::read(&p).unwrap_or_default();
            out.push((
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}
