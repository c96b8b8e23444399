//! Shared by the end-to-end tests: running the real `remodel` binary from the repository root.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

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
