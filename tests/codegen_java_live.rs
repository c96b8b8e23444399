//! The generated Java access layer proven by replay, as `tests/codegen_live.rs` proves the
//! Python one. For each case: `remodel codegen --lang java` writes the Maven module of the
//! case's plan; Maven compiles it with `-Xlint:all -Werror` (offline first: `tests/codegen/
//! setup-java` caches the driver and the plugins); then `remodel replay --writes --executor
//! 'java -cp … PKG.Executor'` runs every read and every write path of the workload through the
//! generated methods and compares their answers with Postgres. The patterns whose samples differ
//! must be exactly the case's known design defects (`fixtures/replay/known-defects.txt`) and each
//! pattern's outcome must be the Python package's (`fixtures/codegen/replay/<case>.txt`): both
//! layers execute the plan alike. A hand-broken copy of the generated rideshare module (a dropped
//! bucket, a skipped copy) must be caught. Needs `REMODEL_PG_URL`, `REMODEL_CQL_URL`, a JDK 17
//! and Maven.

mod support;

use remodel_model::{PatternReplay, ReplayMismatch, ReplayOutcome, ReplayReport};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use support::live::{json, Case};

/// Caches the driver and the plugins (`tests/codegen/setup-java`).
fn setup() {
    let out = Command::new(support::root().join("tests/codegen/setup-java"))
        .output()
        .expect("tests/codegen/setup-java runs");
    assert!(
        out.status.success(),
        "tests/codegen/setup-java failed:\n{}",
        support::text(&out.stderr)
    );
}

/// Compiles the module in `dir` (offline first) and writes its classpath to `dir/cp.txt`.
fn build(dir: &Path) {
    let run = |offline: bool| {
        let mut cmd = Command::new("mvn");
        cmd.args(["-q", "-B"]);
        if offline {
            cmd.arg("-o");
        }
        cmd.args([
            "compile",
            "dependency:build-classpath",
            "-Dmdep.outputFile=cp.txt",
        ])
        .current_dir(dir)
        .output()
        .expect("mvn runs")
    };
    let mut out = run(true);
    if !out.status.success() {
        out = run(false);
    }
    assert!(
        out.status.success(),
        "mvn compile (javac -Xlint:all -Werror) in {} failed:\n{}\n{}",
        dir.display(),
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
}

/// Recompiles the module in `dir` with javac alone (`-Xlint:all -Werror`, the classpath Maven
/// wrote to `cp.txt`): a hand-broken copy, seconds faster than Maven's start.
fn rebuild(dir: &Path) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(
            "javac -Xlint:all -Werror -d target/classes -cp \"$(cat cp.txt)\" \
             $(find src/main/java -name '*.java')",
        )
        .current_dir(dir)
        .output()
        .expect("javac runs");
    assert!(
        out.status.success(),
        "javac in {} failed:\n{}",
        dir.display(),
        support::text(&out.stderr)
    );
}

/// `remodel codegen --lang java` of `plan` into `out` as package `package`, compiled.
fn generate(plan: &str, out: &Path, package: &str) {
    let out_s = out.to_string_lossy().to_string();
    let printed = support::remodel_ok(&[
        "codegen",
        "--plan",
        plan,
        "--lang",
        "java",
        "--out",
        &out_s,
        "--package",
        package,
    ]);
    assert!(printed.contains("wrote "), "{printed}");
    build(out);
}

/// `remodel replay --writes` of `plan` (seed 1, at [`support::REPLAY_NOW`]) with the plan's side
/// run by the compiled module in `dir`; `replace`: over an earlier replay's tables.
fn replay(
    case: &Case,
    plan: &str,
    dir: &Path,
    package: &str,
    out: &Path,
    replace: bool,
) -> (ReplayReport, String) {
    let executor = format!(
        "cd '{}' && exec java -cp \"target/classes:$(cat cp.txt)\" {package}.Executor",
        dir.display()
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

/// The patterns whose differences a replay shows.
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

/// A pattern's outcome (as `tests/codegen_live.rs` writes it).
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

/// Generates, compiles and replays `input`'s plan as `name`; returns the case, the plan and the
/// module's folder.
async fn prove(name: &str, input: &str) -> (Case, String, std::path::PathBuf) {
    let case = Case::new(&format!("cgj_{name}")).await;
    let plan = case.plan(input);
    let package = format!("{}_dal", name.replace('-', "_"));
    let dir = case.dir.join("java");
    generate(&plan, &dir, &package);
    let (report, stdout) = replay(
        &case,
        &plan,
        &dir,
        &package,
        &case.dir.join("replay"),
        false,
    );
    println!("{name} through the generated Java:\n{stdout}");
    let lines: Vec<String> = report.patterns.iter().map(outcome).collect();
    let python = support::root().join(format!("fixtures/codegen/replay/{name}.txt"));
    let expected = std::fs::read_to_string(&python).expect("the Python package's outcomes");
    assert_eq!(
        lines.join("\n") + "\n",
        expected,
        "{name}: each pattern's outcome through the Java module is the Python package's \
         ({}):\n{stdout}",
        python.display()
    );
    assert_eq!(
        defects(&report),
        known(name),
        "{name}: the patterns that differ through the generated Java are the known defects of \
         the plan (fixtures/replay/known-defects.txt):\n{stdout}"
    );
    (case, plan, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare_java_replays_and_a_broken_copy_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    setup();
    let (case, plan, dir) = prove("rideshare", "examples/rideshare").await;
    let queries = dir.join("src/main/java/rideshare_dal/Queries.java");
    let good = std::fs::read_to_string(&queries).expect("Queries.java");
    // A window read sent to the first day bucket only, and an INSERT that skips one copy.
    let breaks = [
        (
            "a dropped bucket",
            "for (Object v1 : b1) {",
            "for (Object v1 : b1.subList(0, Math.min(1, b1.size()))) {",
            "q2",
        ),
        (
            "a skipped copy",
            "main.add(new Driver.Bound(ps6, new Object[] {",
            "java.util.Objects.hash(new Driver.Bound(ps6, new Object[] {",
            "q5",
        ),
    ];
    for (i, (what, from, to, culprit)) in breaks.into_iter().enumerate() {
        assert_eq!(
            good.matches(from).count(),
            1,
            "{what}: `{from}` once in Queries.java"
        );
        std::fs::write(&queries, good.replace(from, to)).expect("write Queries.java");
        rebuild(&dir);
        let out = case.dir.join(format!("broken-{i}"));
        let (report, stdout) = replay(&case, &plan, &dir, "rideshare_dal", &out, true);
        assert!(
            defects(&report).contains(culprit),
            "{what}: replay through the broken module shows differences of {culprit}:\n{stdout}"
        );
    }
    case.cleanup().await;
}

/// The library fixture's lookups and folded loops, buckets cut in their zone, and sort keys that
/// store NULL (a date, integers, a millisecond timestamp). CI keeps to these three (each case
/// builds a Maven module and replays it: about 20 s each); the generated
/// Java of a one-to-few child folded into a collection, upserts, counter tables and rows that
/// expire (TTLs) replay the same way with `REMODEL_JAVA_ALL=1` (all passed when the generator
/// was written), and the Python layer replays every one of them in `codegen_live`.
#[tokio::test(flavor = "multi_thread")]
async fn fixtures_java_replay() {
    remodel_testdb::live!(Postgres, Cassandra);
    setup();
    let all = std::env::var("REMODEL_JAVA_ALL").is_ok_and(|v| v == "1");
    let more: &[&str] = if all {
        &[
            "embed_one_to_few",
            "upserts",
            "counters-read-heavy",
            "expiring",
        ]
    } else {
        &[]
    };
    for name in ["library", "buckets", "null_sort_keys_typed"]
        .iter()
        .chain(more)
    {
        let (case, ..) = prove(name, &format!("fixtures/plan/{name}")).await;
        case.cleanup().await;
    }
}
