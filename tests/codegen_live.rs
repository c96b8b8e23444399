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
//! `tests/codegen/setup`: cassandra-driver, ruff, mypy). The harness is `tests/support/codegen.rs`,
//! shared with the Java layer's test.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::codegen::{
    breaks_are_caught, codegen, existing_rideshare, outcomes_file, prove, run_ok, setup, Break,
    Layer,
};

/// The Python layer, run by the venv's python.
struct Python {
    py: PathBuf,
}

impl Python {
    /// The layer with the venv of `tests/codegen/setup` (installed on first use).
    fn new() -> Python {
        Python {
            py: PathBuf::from(setup("setup").trim()),
        }
    }

    /// `tool ARGS…` of the venv (`ruff`, `mypy`) run in `dir`; panics with its output when it
    /// fails.
    fn tool_ok(&self, tool: &str, args: &[&str], dir: &Path) {
        let mut cmd = Command::new(self.py.with_file_name(tool));
        let what = format!("{tool} {} in {}", args.join(" "), dir.display());
        run_ok(cmd.args(args).current_dir(dir), &what);
    }
}

impl Layer for Python {
    const LABEL: &'static str = "cg";

    /// `remodel codegen --lang python`, checked by ruff and mypy.
    fn generate(&self, plan: &str, dir: &Path, package: &str) {
        codegen(plan, "python", dir, package);
        self.tool_ok("ruff", &["check", "--no-cache", "."], dir);
        let mypy = ["--strict", "--cache-dir=/dev/null", package];
        self.tool_ok("mypy", &mypy, dir);
    }

    fn executor(&self, dir: &Path, package: &str) -> String {
        format!(
            "cd '{}' && exec '{}' -m {package}.executor",
            dir.display(),
            self.py.display()
        )
    }

    fn queries(&self, dir: &Path, package: &str) -> PathBuf {
        dir.join(package).join("queries.py")
    }
}

/// Proves case `name` through `layer` and checks each pattern's outcome against its expected
/// file.
async fn prove_python(layer: &Python, name: &str, input: &str) -> support::codegen::Proven {
    let proven = prove(layer, name, input, name).await;
    expect_test::expect_file![outcomes_file(name)].assert_eq(&proven.outcomes);
    proven
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare_python_replays_and_a_broken_copy_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    let layer = Python::new();
    let proven = prove_python(&layer, "rideshare", "examples/rideshare").await;
    // A window read sent to the first day bucket only, and an INSERT that skips one copy.
    let breaks = [
        Break {
            what: "a dropped bucket",
            from: "for v1 in b1:",
            to: "for v1 in b1[:1]:",
            culprit: "q2",
        },
        Break {
            what: "a skipped copy",
            from: "main.append((self._s6, [",
            to: "(lambda *_: None)((self._s6, [",
            culprit: "q5",
        },
    ];
    breaks_are_caught(&layer, &proven, "rideshare", &breaks);
    proven.case.cleanup().await;
}

/// After a backfill of 2,000 trips, `replay --existing` through the generated functions.
#[tokio::test(flavor = "multi_thread")]
async fn rideshare_python_replays_existing_rows_after_a_backfill() {
    remodel_testdb::live!(Postgres, Cassandra);
    existing_rideshare(&Python::new(), 2_000).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auctionmark_python_replays() {
    remodel_testdb::live!(Postgres, Cassandra);
    let proven = prove_python(
        &Python::new(),
        "auctionmark",
        "fixtures/corpora/auctionmark",
    )
    .await;
    proven.case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn library_python_replays() {
    remodel_testdb::live!(Postgres, Cassandra);
    let proven = prove_python(&Python::new(), "library", "fixtures/plan/library").await;
    proven.case.cleanup().await;
}

/// The fixtures of the plan's other kinds of statement: buckets cut in their zone, a one-to-few
/// child folded into a collection (its entries read and written), counter tables, rows that
/// expire (TTLs), upserts, sort keys that store NULL (a date, integers, a millisecond timestamp),
/// and listings by a nullable text, numeric or bigint sorted on the client, NULLs where SQL puts them.
#[tokio::test(flavor = "multi_thread")]
async fn fixtures_python_replay() {
    remodel_testdb::live!(Postgres, Cassandra);
    let layer = Python::new();
    for name in [
        "buckets",
        "embed_one_to_few",
        "counters-read-heavy",
        "expiring",
        "upserts",
        "null_sort_keys_typed",
        "null_sort_keys_client",
    ] {
        let proven = prove_python(&layer, name, &format!("fixtures/plan/{name}")).await;
        proven.case.cleanup().await;
    }
}
