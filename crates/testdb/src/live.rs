//! The one gate of the live tests: the tests that need something beyond cargo — the databases of
//! `scripts/db`, headless Chromium, `mdbook`, the Spark install of `scripts/spark`.
//!
//! Every such test starts with [`live`] (or the [`crate::live!`] macro) naming what it needs, and
//! is named by one rule: its test binary (`tests/NAME_live.rs`), one of its modules or its function
//! ends in `_live`, so `cargo test live` selects exactly them. What happens when a need is missing:
//!
//! - by default (a developer's `cargo test` without databases): the test returns at once and one
//!   line `skipped: TEST: WHY` goes to the terminal (not to the captured output of the test), so a
//!   run says what it did not check;
//! - with `REMODEL_LIVE=require` or `CI=true` (`scripts/test` sets the first): the test fails,
//!   naming what is missing — a CI run never passes by skipping.

use std::io::Write;
use std::path::Path;

/// Something a live test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Postgres: `REMODEL_PG_URL` (`eval "$(scripts/db env)"`).
    Postgres,
    /// Cassandra: `REMODEL_CQL_URL`.
    Cassandra,
    /// The databases' TLS files: `REMODEL_DB_TLS`.
    DbTls,
    /// The local three-node cluster: `REMODEL_CLUSTER_URL` (`scripts/db up cluster`).
    Cluster,
    /// Headless Chromium on `PATH` (`chromium`, `chromium-browser` or `google-chrome`).
    Chromium,
    /// `mdbook` on `PATH`.
    Mdbook,
    /// `psql` on `PATH` (the report's runbook runs it).
    Psql,
    /// PySpark and the connector jars of `scripts/spark install` (`scripts/spark env` succeeds).
    Spark,
}

/// The variable that makes a missing need a failure instead of a skip.
pub const REQUIRE_VAR: &str = "REMODEL_LIVE";

impl Need {
    /// Why the need is not met, `None` when it is.
    pub fn missing(self) -> Option<String> {
        let var = |name: &str| {
            let set = std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
            (!set).then(|| format!("{name} unset"))
        };
        match self {
            Need::Postgres => var(crate::PG_URL_VAR),
            Need::Cassandra => var(crate::CQL_URL_VAR),
            Need::DbTls => var(crate::TLS_DIR_VAR),
            Need::Cluster => var(crate::CLUSTER_URL_VAR),
            Need::Chromium => (chromium().is_none())
                .then(|| "no chromium on PATH (apt-get install chromium)".to_string()),
            Need::Mdbook => (!on_path("mdbook"))
                .then(|| "no mdbook on PATH (scripts/test installs it; see README)".to_string()),
            Need::Psql => (!on_path("psql"))
                .then(|| "no psql on PATH (apt-get install postgresql-client)".to_string()),
            Need::Spark => spark_missing(),
        }
    }
}

/// The Chromium binary on `PATH`: Debian's `chromium` first.
pub fn chromium() -> Option<std::path::PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| find_on_path(name))
}

fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn on_path(name: &str) -> bool {
    find_on_path(name).is_some()
}

/// `scripts/spark env` of the repository this crate is in says whether PySpark is installed.
fn spark_missing() -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/spark");
    let ok = std::process::Command::new("bash")
        .arg(&script)
        .arg("env")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| "PySpark not installed (`scripts/spark install`)".to_string())
}

/// True when a missing need fails the test rather than skipping it.
fn required() -> bool {
    let is = |var: &str, yes: &[&str]| {
        std::env::var(var).is_ok_and(|v| yes.iter().any(|y| v.eq_ignore_ascii_case(y)))
    };
    is(REQUIRE_VAR, &["require", "1", "true"]) || is("CI", &["true", "1"])
}

/// The running test as libtest names it: the test binary's name (without cargo's hash) and the
/// test's path, which libtest gives its thread.
fn test_name() -> (String, String) {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => s,
        })
        .unwrap_or_default();
    let thread = std::thread::current().name().unwrap_or("").to_string();
    (binary, thread)
}

/// True when the test binary, a module or the function of `test` ends in `_live`.
fn named_live(binary: &str, test: &str) -> bool {
    binary.ends_with("_live") || test.split("::").any(|part| part.ends_with("_live"))
}

/// The gate: true when every need is met and the test may run. Otherwise, by default, prints one
/// `skipped:` line and returns false (the test returns); with `REMODEL_LIVE=require` or
/// `CI=true`, panics naming what is missing. Panics too when the test is not named `*_live`.
pub fn live(needs: &[Need]) -> bool {
    let (binary, test) = test_name();
    assert!(
        // The main thread runs no test: a test binary run with one thread still names its thread.
        test.is_empty() || test == "main" || named_live(&binary, &test),
        "{binary}::{test} needs {needs:?}: a live test is named *_live (its file, a module or the \
         function), so that `cargo test live` selects the live tests"
    );
    let missing: Vec<String> = needs.iter().filter_map(|n| n.missing()).collect();
    if missing.is_empty() {
        return true;
    }
    let mut why = missing.join(", ");
    if missing
        .iter()
        .any(|m| m.starts_with(crate::CLUSTER_URL_VAR))
    {
        why.push_str(" (`scripts/db up cluster` and `eval \"$(scripts/db env cluster)\"`)");
    } else if missing.iter().any(|m| m.starts_with("REMODEL_")) {
        why.push_str(" (`scripts/db up` and `eval \"$(scripts/db env)\"`)");
    }
    if required() {
        panic!("{binary}::{test}: {why} ({REQUIRE_VAR}=require or CI=true: a live test fails rather than skip)");
    }
    // Straight to the terminal: libtest captures only the print macros of a passing test.
    let line = format!("skipped: {binary}::{test}: {why}\n");
    let _ignored = std::io::stderr().write_all(line.as_bytes());
    false
}

/// `live!(Postgres, Cassandra)` at the top of a test: returns from the test (after one `skipped:`
/// line) when a need is missing; see [`live`].
#[macro_export]
macro_rules! live {
    ($($need:ident),+ $(,)?) => {
        if !$crate::live::live(&[$($crate::live::Need::$need),+]) {
            return;
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_naming_rule() {
        assert!(named_live("backfill_live", "resume_after_kill"));
        assert!(named_live("remodel_conn", "tls::tests::connects_live"));
        assert!(named_live("live", "backfill_live::resume"));
        assert!(!named_live("cli_plan", "plan_writes_files"));
        assert!(!named_live("remodel_conn", "lively::tests::x"));
    }

    #[test]
    fn a_missing_variable_is_said() {
        let why = Need::Postgres.missing();
        let set = std::env::var(crate::PG_URL_VAR).is_ok_and(|v| !v.trim().is_empty());
        assert_eq!(why.is_none(), set, "{why:?}");
        if let Some(why) = why {
            assert!(why.starts_with("REMODEL_PG_URL unset"), "{why}");
        }
    }
}
