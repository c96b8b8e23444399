//! The PySpark job's pure parts (CQL types, JSON rules, dates, ranges, URLs) pass their unit tests
//! (`job/test_backfill.py`, the Rust engine's own test values) under the machine's python3, the
//! interpreter `scripts/spark install` builds the job's venv from. No Spark is needed: the job
//! imports pyspark only when it runs.

use std::process::Command;

#[test]
fn the_jobs_python_unit_tests_pass() {
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/job");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", "test_backfill"])
        .current_dir(job)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs (scripts/test needs it for the Spark job too)");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python3 -m unittest failed:\n{log}");
    let ran = log
        .lines()
        .find_map(|l| l.strip_prefix("Ran "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    assert!(ran >= 10, "too few Python tests ran ({ran}):\n{log}");
}
