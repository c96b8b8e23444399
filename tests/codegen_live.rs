//! The generated Python access layer proven by replay. For each case: `remodel codegen --lang
//! python` writes the package of the case's plan; `ruff check` and `mypy --strict` must pass on
//! it; then `remodel replay --writes --executor 'python -m PKG.executor'` runs every read and
//! every write path of the workload through the generated functions, on generated rows loaded
//! on both sides, and compares their answers with Postgres, as replay compares its own
//! executor's. The patterns whose samples differ must be exactly the case's known design
//! defects (`fixtures/replay/known-defects.txt`, the ones replay's own executor shows too), and
//! each pattern's outcome is `fixtures/codegen/replay/<case>.txt` (`UPDATE_EXPECT=1` rewrites
//! it). A hand-broken copy of the generated rideshare package (a dropped bucket, a skipped copy)
//! must be caught. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`, and PyPI (the venv of
//! `tests/codegen/setup`: cassandra-driver, ruff, mypy).

mod support;

use remodel_model::{PatternReplay, ReplayMismatch, ReplayOutcome, ReplayReport};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::live::{json, Case};

/// The venv's python, from `tests/codegen/setup` (installed on first use).
fn python() -> PathBuf {
    let out = Command::new(support::root().join("tests/codegen/setup"))
        .output()
        .expect("tests/codegen/setup runs");
    assert!(
        out.status.success(),
        "tests/codegen/setup failed:\n{}",
        support::text(&out.stderr)
    );
    PathBuf::from(support::text(&out.stdout).trim())
}

/// `tool ARGS…` of the venv (`ruff`, `mypy`) run in `dir`; panics with its output when it fails.
fn tool_ok(py: &Path, tool: &str, args: &[&str], dir: &Path) {
    let bin = py.with_file_name(tool);
    let out = Command::new(&bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    assert!(
        out.status.success(),
        "{tool} {} in {} failed:\n{}\n{}",
        args.join(" "),
        dir.display(),
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
}

/// `remodel codegen` of `plan` into `out` as package `package`, checked by ruff and mypy.
fn generate(py: &Path, plan: &str, out: &Path, package: &str) {
    let out_s = out.to_string_lossy().to_string();
    let printed = support::remodel_ok(&[
        "codegen",
        "--plan",
        plan,
        "--lang",
        "python",
        "--out",
        &out_s,
        "--package",
        package,
    ]);
    assert!(printed.contains("wrote "), "{printed}");
    tool_ok(py, "ruff", &["check", "--no-cache", "."], out);
    tool_ok(
        py,
        "mypy",
        &["--strict", "--cache-dir=/dev/null", package],
        out,
    );
}

/// `remodel replay --writes` of `plan` (seed 1, at [`support::REPLAY_NOW`]) with the plan's side
/// run by the generated package in `pkg_dir`; `replace`: over an earlier replay's tables.
fn replay(
    case: &Case,
    py: &Path,
    plan: &str,
    pkg_dir: &Path,
    package: &str,
    out: &Path,
    replace: bool,
) -> (ReplayReport, String) {
    let executor = format!(
        "cd '{}' && exec '{}' -m {package}.executor",
        pkg_dir.display(),
        py.display()
    );
    let out_s = out.to_string_lossy().to_string();
    let mut args = vec![
        "replay",
        "--plan",
        plan,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--samples",
        "5",
        "--writes",
        "--seed",
        "1",
        "--now",
        support::REPLAY_NOW,
        "--out",
        &out_s,
        "--executor",
        &executor,
    ];
    if replace {
        args.push("--replace");
    }
    let run = support::remodel(&args);
    let stdout = support::text(&run.stdout);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "remodel replay --executor failed:\n{stdout}\n{}",
        support::text(&run.stderr)
    );
    let report: ReplayReport =
        serde_json::from_value(json(&out.join("replay.json"))).expect("replay.json");
    assert_eq!(report.executor.as_deref(), Some(executor.as_str()));
    (report, stdout)
}

/// The pattern whose defect difference `m` shows: the write it was read after, else itself.
fn defect_of(m: &ReplayMismatch) -> String {
    m.after
        .as_deref()
        .and_then(|a| a.split_whitespace().next())
        .unwrap_or(&m.pattern)
        .to_string()
}

/// The patterns whose differences a replay shows (see [`defect_of`]).
fn defects(report: &ReplayReport) -> BTreeSet<String> {
    report
        .patterns
        .iter()
        .flat_map(|p| &p.mismatches)
        .map(defect_of)
        .collect()
}

/// The known design defects of `corpus` (`fixtures/replay/known-defects.txt`).
fn known(corpus: &str) -> BTreeSet<String> {
    let path = support::root().join("fixtures/replay/known-defects.txt");
    let text = std::fs::read_to_string(path).expect("known-defects.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with(' '))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some(corpus)).then(|| f.next().unwrap_or_default().to_string())
        })
        .collect()
}

/// A pattern's outcome (its figures move with the rows drawn, so they are left out).
fn outcome(p: &PatternReplay) -> String {
    let kind = p.kind.map_or("?", |k| k.action());
    let head = format!("{:<5} {:<6}", p.pattern, kind);
    let why = p.reason.as_deref().unwrap_or("");
    match p.outcome {
        ReplayOutcome::Exception => format!("{head} exception: {why}"),
        ReplayOutcome::NotReplayed => format!("{head} not replayed: {why}"),
        ReplayOutcome::Replayed => format!("{head} replayed"),
    }
}

/// Generates, checks and replays `input`'s plan as `name` (see the module documentation);
/// returns the case (to break its package) when `keep`, else cleans it up.
async fn prove(name: &str, input: &str, corpus: &str) -> (Case, String, PathBuf, PathBuf) {
    let case = Case::new(&format!("cg_{name}")).await;
    let plan = case.plan(input);
    let py = python();
    let package = format!("{}_dal", name.replace('-', "_"));
    let pkg_dir = case.dir.join("python");
    generate(&py, &plan, &pkg_dir, &package);
    let (report, stdout) = replay(
        &case,
        &py,
        &plan,
        &pkg_dir,
        &package,
        &case.dir.join("replay"),
        false,
    );
    let lines: Vec<String> = report.patterns.iter().map(outcome).collect();
    expect_test::expect_file![support::root().join(format!("fixtures/codegen/replay/{name}.txt"))]
        .assert_eq(&(lines.join("\n") + "\n"));
    let replayed = report
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::Replayed && p.samples > 0)
        .count();
    assert!(
        replayed * 2 > report.patterns.len(),
        "most patterns replay:\n{stdout}"
    );
    assert_eq!(
        defects(&report),
        known(corpus),
        "{name}: the patterns that differ through the generated code are the known defects \
         of the plan (fixtures/replay/known-defects.txt):\n{stdout}"
    );
    (case, plan, py, pkg_dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare_python_replays_and_a_broken_copy_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    let (case, plan, py, pkg_dir) = prove("rideshare", "examples/rideshare", "rideshare").await;
    let queries = pkg_dir.join("rideshare_dal/queries.py");
    let good = std::fs::read_to_string(&queries).expect("queries.py");
    // A window read sent to the first day bucket only, and an INSERT that skips one copy.
    let breaks = [
        (
            "a dropped bucket",
            "for v1 in b1:",
            "for v1 in b1[:1]:",
            "q2",
        ),
        (
            "a skipped copy",
            "main.append((self._s6, [",
            "(lambda *_: None)((self._s6, [",
            "q5",
        ),
    ];
    for (i, (what, from, to, culprit)) in breaks.into_iter().enumerate() {
        assert_eq!(
            good.matches(from).count(),
            1,
            "{what}: `{from}` once in queries.py"
        );
        std::fs::write(&queries, good.replace(from, to)).expect("write queries.py");
        let out = case.dir.join(format!("broken-{i}"));
        let (report, stdout) = replay(&case, &py, &plan, &pkg_dir, "rideshare_dal", &out, true);
        assert!(
            defects(&report).contains(culprit),
            "{what}: replay through the broken package shows differences of {culprit}:\n{stdout}"
        );
    }
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auctionmark_python_replays() {
    remodel_testdb::live!(Postgres, Cassandra);
    let (case, ..) = prove("auctionmark", "fixtures/corpora/auctionmark", "auctionmark").await;
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn library_python_replays() {
    remodel_testdb::live!(Postgres, Cassandra);
    let (case, ..) = prove("library", "fixtures/plan/library", "library").await;
    case.cleanup().await;
}

/// The fixtures of the plan's other kinds of statement: buckets cut in their zone, a one-to-few
/// child folded into a collection (its entries read and written), counter tables, rows that
/// expire (TTLs), upserts, sort keys that store NULL (a date, integers, a millisecond timestamp).
#[tokio::test(flavor = "multi_thread")]
async fn fixtures_python_replay() {
    remodel_testdb::live!(Postgres, Cassandra);
    for name in [
        "buckets",
        "embed_one_to_few",
        "counters-read-heavy",
        "expiring",
        "upserts",
        "null_sort_keys_typed",
    ] {
        let (case, ..) = prove(name, &format!("fixtures/plan/{name}"), name).await;
        case.cleanup().await;
    }
}
