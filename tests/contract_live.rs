//! The contract test: an independent executor (`tests/contract/executor.py`, Python with the
//! PyPI cassandra-driver and psycopg) reads only plan.json and runs every read of the rideshare,
//! library and likes (a counter table) plans on their backfilled keyspaces, comparing with the
//! original SQL on Postgres.
//! It fails on a mismatch and on any read plan.json does not state well enough to execute.
//! Needs `REMODEL_PG_URL`, `REMODEL_CQL_URL` and PyPI (or the cached venv).

mod support;

use std::path::Path;
use std::process::Command;
use support::live::{refs, Case};

/// The executor's python, from `tests/contract/setup` (installs the cached venv when missing).
fn python() -> String {
    let out = Command::new(support::root().join("tests/contract/setup"))
        .output()
        .expect("run tests/contract/setup");
    assert!(
        out.status.success(),
        "tests/contract/setup failed:\n{}",
        support::text(&out.stderr)
    );
    support::text(&out.stdout).trim().to_string()
}

/// Runs the executor on `plan` against the case's databases; returns (exit code, its output).
fn execute(python: &str, case: &Case, plan: &Path) -> (Option<i32>, String) {
    let out = Command::new(python)
        .arg(support::root().join("tests/contract/executor.py"))
        .arg(plan)
        .args(["--pg", &case.url, "--cql", case.ks.node(), "--samples", "6"])
        .output()
        .expect("run the contract executor");
    let shown = format!(
        "{}{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    (out.status.code(), shown)
}

/// Runs the executor on a hand-broken plan: it must fail, naming `expected`.
fn must_fail(python: &str, case: &Case, plan: &Path, expected: &[&str]) {
    let (code, shown) = execute(python, case, plan);
    eprintln!("{}:\n{shown}", plan.display());
    assert_eq!(code, Some(1), "{shown}");
    for e in expected {
        assert!(shown.contains(e), "{e:?} not in:\n{shown}");
    }
}

/// Asserts every read of `plan` matched Postgres, each on some rows, and none was left out.
fn all_match(python: &str, case: &Case, plan: &Path, reads: usize) {
    let (code, shown) = execute(python, case, plan);
    // What was run and on how many rows, in the test's log.
    eprintln!("{shown}");
    assert_eq!(code, Some(0), "{shown}");
    let summary =
        format!("contract executor: {reads} reads matched, 0 mismatched, 0 not executable");
    assert!(shown.contains(&summary), "{shown}");
}

/// A fixture's schema and `rows` loaded and planned; the plan path.
async fn loaded(case: &Case, fixture: &str, rows: &str) -> String {
    let root = support::root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let sql = format!("{}\n{}", read(&format!("{fixture}/schema.sql")), read(rows));
    case.load(&sql, rows).await;
    case.plan(fixture)
}

fn backfill(case: &Case, plan: &str) {
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(plan, &run, &["--create-schema"])));
}

/// Writes a copy of `plan` with `edit` applied to the read mapping of `pattern`.
fn broken(
    plan: &str,
    pattern: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plan).expect("plan.json")).expect("json");
    let q = v["design"]["queries"]
        .as_array_mut()
        .expect("queries")
        .iter_mut()
        .find(|q| q["pattern"] == pattern)
        .unwrap_or_else(|| panic!("no read {pattern}"));
    edit(q);
    let out = Path::new(plan).with_file_name(format!("broken-{pattern}.json"));
    std::fs::write(&out, serde_json::to_string(&v).expect("json")).expect("write");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_read_runs_from_plan_json_alone_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let python = python();

    let case = Case::new("contract_rideshare").await;
    let plan = case.rideshare(2000);
    backfill(&case, &plan);
    all_match(&python, &case, Path::new(&plan), 4);
    // A window read bound to the lower bound's day only (not every bucket to the upper bound):
    // a window across midnight loses the next day's rows.
    let one_day = broken(&plan, "q2", |q| {
        let lower = q["binds"][1]["value"]["lower"].clone();
        q["binds"][1]["value"] = serde_json::json!(
            {"from": "bucket", "bucket": "day", "time_zone": "UTC", "of": lower});
        q["partitions"] = serde_json::json!({"kind": "one"});
    });
    must_fail(&python, &case, &one_day, &["MISMATCH q2 with "]);
    case.cleanup().await;

    let case = Case::new("contract_library").await;
    let plan = loaded(
        &case,
        "fixtures/plan/library",
        "tests/contract/library_rows.sql",
    )
    .await;
    backfill(&case, &plan);
    all_match(&python, &case, Path::new(&plan), 5);
    // The PIN check dropped from the client's filters: a wrong PIN logs in.
    let no_pin = broken(&plan, "q6", |q| {
        q["client"]["filters"] = serde_json::json!([])
    });
    must_fail(&python, &case, &no_pin, &["MISMATCH q6 with "]);
    // A bind typed as another CQL type than its marker takes: the value would be sent wrong.
    let mistyped = broken(&plan, "q6", |q| {
        q["binds"][0]["type"] = serde_json::json!("int");
    });
    must_fail(
        &python,
        &case,
        &mistyped,
        &[
            "NOT EXECUTABLE q6: contract gap: bind 0 ",
            "is typed 'int' in plan.json",
        ],
    );
    // The result columns swapped (book_id read from holds and back): rows mapped wrong.
    let swapped = broken(&plan, "q1", |q| {
        let first = q["columns"][0]["cql_column"].clone();
        q["columns"][0]["cql_column"] = q["columns"][1]["cql_column"].clone();
        q["columns"][1]["cql_column"] = first;
    });
    must_fail(&python, &case, &swapped, &["MISMATCH q1 with "]);
    case.cleanup().await;

    // Sort keys that store NULL (a date NULLS FIRST, integers, a millisecond timestamp): the
    // encodings as plan.json states them.
    let case = Case::new("contract_null_keys").await;
    let plan = loaded(
        &case,
        "fixtures/plan/null_sort_keys_typed",
        "tests/contract/null_keys_rows.sql",
    )
    .await;
    backfill(&case, &plan);
    all_match(&python, &case, Path::new(&plan), 6);
    // The due date read without its encoding: the stored day counts (and NULL's) come back.
    let raw = broken(&plan, "q1", |q| {
        for c in q["columns"].as_array_mut().expect("columns") {
            if let Some(c) = c.as_object_mut() {
                c.remove("encoding");
            }
        }
    });
    must_fail(&python, &case, &raw, &["MISMATCH q1 with "]);
    case.cleanup().await;

    // A count served by a counter table: the group's row, as plan.json's `counter` says.
    let case = Case::new("contract_counters").await;
    let plan = loaded(
        &case,
        "fixtures/plan/counters-read-heavy",
        "tests/contract/likes_rows.sql",
    )
    .await;
    backfill(&case, &plan);
    all_match(&python, &case, Path::new(&plan), 3);
    let count = pattern_of(&plan, "SELECT count(*) FROM likes");
    // The count read from the wrong counter column (the group's key): the figure is wrong.
    let wrong = broken(&plan, &count, |q| {
        q["columns"][0]["cql_column"] = serde_json::json!("post_id");
    });
    must_fail(
        &python,
        &case,
        &wrong,
        &[&format!("MISMATCH {count} with ")],
    );
    case.cleanup().await;
}

/// The id of the pattern of the plan at `plan` whose SQL starts with `sql_start`.
fn pattern_of(plan: &str, sql_start: &str) -> String {
    let v = support::live::json(std::path::Path::new(plan));
    support::live::pattern_id(&v, sql_start).to_string()
}
