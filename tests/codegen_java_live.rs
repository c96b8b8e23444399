//! The generated Java access layer proven by replay, as `tests/codegen_live.rs` proves the
//! Python one (the harness is `tests/support/codegen.rs`, shared). For each case: `remodel
//! codegen --lang java` writes the Maven module of the case's plan; Maven compiles it with
//! `-Xlint:all -Werror` (offline first: `tests/codegen/setup-java` caches the driver and the
//! plugins); then `remodel replay --writes --executor 'java -cp … PKG.Executor'` runs every
//! read and every write path of the workload through the generated methods and compares their
//! answers with Postgres. The patterns whose samples differ must be exactly the case's known
//! design defects (`fixtures/replay/known-defects.txt`) and each pattern's outcome must be the
//! Python package's (`fixtures/codegen/replay/<case>.txt`): both layers execute the plan alike.
//! A hand-broken copy of the generated rideshare module (a dropped bucket, a skipped copy) must
//! be caught. Needs `REMODEL_PG_URL`, `REMODEL_CQL_URL`, a JDK 17 and Maven.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::codegen::{
    breaks_are_caught, codegen, existing_rideshare, outcomes_file, prove, run, run_ok, setup,
    Break, Layer,
};

/// The Java layer, built by Maven and run by `java`.
struct Java;

impl Java {
    /// The layer, the driver and the plugins cached (`tests/codegen/setup-java`).
    fn new() -> Java {
        setup("setup-java");
        Java
    }
}

/// Compiles the module in `dir` (offline first) and writes its classpath to `dir/cp.txt`.
fn build(dir: &Path) {
    let mvn = |offline: bool| {
        let mut cmd = Command::new("mvn");
        cmd.args(["-q", "-B"]);
        if offline {
            cmd.arg("-o");
        }
        cmd.args([
            "compile",
            "dependency:build-classpath",
            "-Dmdep.outputFile=cp.txt",
        ]);
        let what = format!(
            "mvn compile (javac -Xlint:all -Werror) in {}",
            dir.display()
        );
        run(cmd.current_dir(dir), &what)
    };
    if let Err(e) = mvn(true).or_else(|_| mvn(false)) {
        panic!("{e}");
    }
}

impl Layer for Java {
    const LABEL: &'static str = "cgj";

    /// `remodel codegen --lang java`, compiled.
    fn generate(&self, plan: &str, dir: &Path, package: &str) {
        codegen(plan, "java", dir, package);
        build(dir);
    }

    fn executor(&self, dir: &Path, package: &str) -> String {
        format!(
            "cd '{}' && exec java -cp \"target/classes:$(cat cp.txt)\" {package}.Executor",
            dir.display()
        )
    }

    fn queries(&self, dir: &Path, package: &str) -> PathBuf {
        dir.join("src/main/java").join(package).join("Queries.java")
    }

    /// Recompiles the module with javac alone (`-Xlint:all -Werror`, the classpath Maven wrote
    /// to `cp.txt`): a hand-broken copy, seconds faster than Maven's start.
    fn rebuild(&self, dir: &Path) {
        let javac = "javac -Xlint:all -Werror -d target/classes -cp \"$(cat cp.txt)\" \
                     $(find src/main/java -name '*.java')";
        let what = format!("javac in {}", dir.display());
        run_ok(
            Command::new("sh").args(["-c", javac]).current_dir(dir),
            &what,
        );
    }
}

/// Proves case `name` through `layer`: each pattern's outcome is the Python package's.
async fn prove_java(layer: &Java, name: &str, input: &str) -> support::codegen::Proven {
    let proven = prove(layer, name, input, name).await;
    println!("{name} through the generated Java:\n{}", proven.stdout);
    let python = outcomes_file(name);
    let expected = std::fs::read_to_string(&python).expect("the Python package's outcomes");
    assert_eq!(
        proven.outcomes,
        expected,
        "{name}: each pattern's outcome through the Java module is the Python package's \
         ({}):\n{}",
        python.display(),
        proven.stdout
    );
    proven
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare_java_replays_and_a_broken_copy_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    let layer = Java::new();
    let proven = prove_java(&layer, "rideshare", "examples/rideshare").await;
    // A window read sent to the first day bucket only, and an INSERT that skips one copy.
    let breaks = [
        Break {
            what: "a dropped bucket",
            from: "for (Object v1 : b1) {",
            to: "for (Object v1 : b1.subList(0, Math.min(1, b1.size()))) {",
            culprit: "q2",
        },
        Break {
            what: "a skipped copy",
            from: "main.add(new Driver.Bound(ps6, new Object[] {",
            to: "java.util.Objects.hash(new Driver.Bound(ps6, new Object[] {",
            culprit: "q5",
        },
    ];
    breaks_are_caught(&layer, &proven, "rideshare", &breaks);
    proven.case.cleanup().await;
}

/// After a backfill of 2,000 trips, `replay --existing` through the generated methods.
#[tokio::test(flavor = "multi_thread")]
async fn rideshare_java_replays_existing_rows_after_a_backfill() {
    remodel_testdb::live!(Postgres, Cassandra);
    existing_rideshare(&Java::new(), 2_000).await;
}

/// The AuctionMark corpus (its folded loops, lookups, upserts and write groups): each pattern's
/// outcome the Python package's.
#[tokio::test(flavor = "multi_thread")]
async fn auctionmark_java_replays() {
    remodel_testdb::live!(Postgres, Cassandra);
    let layer = Java::new();
    let proven = prove_java(&layer, "auctionmark", "fixtures/corpora/auctionmark").await;
    proven.case.cleanup().await;
}

/// The library fixture's lookups and folded loops, buckets cut in their zone, sort keys that
/// store NULL (a date, integers, a millisecond timestamp), a one-to-few child folded into a
/// collection, upserts, counter tables, rows that expire (TTLs) and listings sorted on the client
/// with SQL's NULL order: each case builds a Maven
/// module and replays it (about 20 s each), as `codegen_live` replays the Python layer.
#[tokio::test(flavor = "multi_thread")]
async fn fixtures_java_replay() {
    remodel_testdb::live!(Postgres, Cassandra);
    let layer = Java::new();
    for name in [
        "library",
        "buckets",
        "null_sort_keys_typed",
        "embed_one_to_few",
        "upserts",
        "counters-read-heavy",
        "expiring",
        "null_sort_keys_client",
    ] {
        let proven = prove_java(&layer, name, &format!("fixtures/plan/{name}")).await;
        proven.case.cleanup().await;
    }
}
