//! A generated access layer proven by replay, whatever its language (`tests/codegen_live.rs`
//! for Python, `tests/codegen_java_live.rs` for Java): the layer of a case's plan generated and
//! checked, `remodel replay --writes --executor` run through it, the patterns that differ the
//! plan's known design defects, and a hand-broken copy caught.

use super::live::{json, Case};
use remodel_model::{PatternReplay, ReplayMismatch, ReplayOutcome, ReplayReport};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What differs from one language's layer to the other's.
pub trait Layer {
    /// The prefix of a case's databases and folder.
    const LABEL: &'static str;
    /// Generates the layer of `plan` into `dir` as `package` and checks it (lint, types,
    /// compiler); panics with why when it fails.
    fn generate(&self, plan: &str, dir: &Path, package: &str);
    /// The shell command that runs the layer's executor from `dir`.
    fn executor(&self, dir: &Path, package: &str) -> String;
    /// The file of the generated functions, which a test breaks by hand.
    fn queries(&self, dir: &Path, package: &str) -> PathBuf;
    /// Makes a hand-edited layer runnable again (a compiled language recompiles it).
    fn rebuild(&self, _dir: &Path) {}
}

/// A case whose layer was generated and replayed.
pub struct Proven {
    /// Its databases and folder.
    pub case: Case,
    /// Its plan.json.
    pub plan: String,
    /// The layer's folder.
    pub dir: PathBuf,
    /// Each pattern's outcome, one line each (see [`outcome`]).
    pub outcomes: String,
    /// What replay printed.
    pub stdout: String,
}

/// A hand-made break of the generated functions: what it does, the text it replaces and by
/// what (each once in the file), and the pattern whose differences must show it.
pub struct Break {
    /// What it breaks (`a dropped bucket`).
    pub what: &'static str,
    /// The generated text it replaces.
    pub from: &'static str,
    /// What it puts instead.
    pub to: &'static str,
    /// The pattern that must differ.
    pub culprit: &'static str,
}

/// Runs `cmd` (`what` in messages) and returns what it printed; `Err` with its output when it
/// fails.
pub fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    if out.status.success() {
        Ok(super::text(&out.stdout))
    } else {
        let (o, e) = (super::text(&out.stdout), super::text(&out.stderr));
        Err(format!("{what} failed:\n{o}\n{e}"))
    }
}

/// Runs `cmd` and returns what it printed; panics with its output when it fails.
pub fn run_ok(cmd: &mut Command, what: &str) -> String {
    run(cmd, what).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `tests/codegen/SCRIPT` (which installs what a layer needs, idempotent) and returns what
/// it printed.
pub fn setup(script: &str) -> String {
    let path = super::root().join("tests/codegen").join(script);
    run_ok(&mut Command::new(path), &format!("tests/codegen/{script}"))
}

/// `remodel codegen --lang LANG` of `plan` into `dir` as package `package`.
pub fn codegen(plan: &str, lang: &str, dir: &Path, package: &str) {
    let dir = dir.to_string_lossy().to_string();
    let printed = super::remodel_ok(&[
        "codegen",
        "--plan",
        plan,
        "--lang",
        lang,
        "--out",
        &dir,
        "--package",
        package,
    ]);
    assert!(printed.contains("wrote "), "{printed}");
}

/// `remodel replay --writes` of `plan` (seed 1, at [`super::REPLAY_NOW`]) with the plan's side
/// run by `executor`; `replace`: over an earlier replay's tables.
pub fn replay(
    case: &Case,
    plan: &str,
    executor: &str,
    out: &Path,
    replace: bool,
) -> (ReplayReport, String) {
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
        super::REPLAY_NOW,
        "--out",
        &out_s,
        "--executor",
        executor,
    ];
    if replace {
        args.push("--replace");
    }
    let run = super::remodel(&args);
    let stdout = super::text(&run.stdout);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "remodel replay --executor failed:\n{stdout}\n{}",
        super::text(&run.stderr)
    );
    let report: ReplayReport =
        serde_json::from_value(json(&out.join("replay.json"))).expect("replay.json");
    assert_eq!(report.executor.as_deref(), Some(executor));
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
pub fn defects(report: &ReplayReport) -> BTreeSet<String> {
    report
        .patterns
        .iter()
        .flat_map(|p| &p.mismatches)
        .map(defect_of)
        .collect()
}

/// The known design defects of `corpus` (`fixtures/replay/known-defects.txt`).
pub fn known(corpus: &str) -> BTreeSet<String> {
    let path = super::root().join("fixtures/replay/known-defects.txt");
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

/// The file of each pattern's outcome through the generated code of case `name`
/// (`fixtures/codegen/replay/<name>.txt`, written by the Python layer's test).
pub fn outcomes_file(name: &str) -> PathBuf {
    super::root().join(format!("fixtures/codegen/replay/{name}.txt"))
}

/// Generates, checks and replays `input`'s plan as case `name` through `layer`: most patterns
/// replay, and the patterns that differ are exactly the known defects of `corpus`.
pub async fn prove<L: Layer>(layer: &L, name: &str, input: &str, corpus: &str) -> Proven {
    let case = Case::new(&format!("{}_{name}", L::LABEL)).await;
    let plan = case.plan(input);
    let package = package(name);
    let dir = case.dir.join("layer");
    layer.generate(&plan, &dir, &package);
    let executor = layer.executor(&dir, &package);
    let (report, stdout) = replay(&case, &plan, &executor, &case.dir.join("replay"), false);
    let lines: Vec<String> = report.patterns.iter().map(outcome).collect();
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
    Proven {
        case,
        plan,
        dir,
        outcomes: lines.join("\n") + "\n",
        stdout,
    }
}

/// The rideshare example, `trips` trips backfilled, then `remodel replay --existing` (the rows
/// already there, read-only on both sides: the proof before cut-over) with every read run
/// through `layer`'s generated functions: each read replayed, no difference.
pub async fn existing_rideshare<L: Layer>(layer: &L, trips: u64) {
    let case = Case::new(&format!("{}_existing", L::LABEL)).await;
    let plan = case.rideshare(trips);
    case.backfill_created(&plan);
    let dir = case.dir.join("layer");
    layer.generate(&plan, &dir, "rideshare_dal");
    let executor = layer.executor(&dir, "rideshare_dal");
    let designed = std::fs::read_to_string(&plan).expect("plan.json");
    let designed: serde_json::Value = serde_json::from_str(&designed).expect("plan.json parses");
    let flags = ["--samples", "10", "--executor", &executor];
    let (status, shown, report) = case.replay_existing(&designed, "existing", &flags);
    assert_eq!(status, Some(0), "{shown}");
    let report: ReplayReport = serde_json::from_value(report).expect("replay.json");
    assert_eq!(report.executor.as_deref(), Some(executor.as_str()));
    assert_eq!(report.patterns.len(), 4, "every read, no write:\n{shown}");
    for p in &report.patterns {
        assert_eq!(
            p.outcome,
            ReplayOutcome::Replayed,
            "{}:\n{shown}",
            p.pattern
        );
        assert!(
            p.samples > 0 && p.mismatches.is_empty(),
            "{}:\n{shown}",
            p.pattern
        );
    }
    case.cleanup().await;
}

/// The package of case `name` (`rideshare_dal`).
pub fn package(name: &str) -> String {
    format!("{}_dal", name.replace('-', "_"))
}

/// Each of `breaks` applied alone to the layer of `proven` (case `name`), which replay must
/// catch: the break's culprit differs from Postgres.
pub fn breaks_are_caught<L: Layer>(layer: &L, proven: &Proven, name: &str, breaks: &[Break]) {
    let package = package(name);
    let queries = layer.queries(&proven.dir, &package);
    let good = std::fs::read_to_string(&queries).expect("the generated functions");
    let executor = layer.executor(&proven.dir, &package);
    for (i, b) in breaks.iter().enumerate() {
        let file = queries.display();
        assert_eq!(
            good.matches(b.from).count(),
            1,
            "{}: `{}` once in {file}",
            b.what,
            b.from
        );
        std::fs::write(&queries, good.replace(b.from, b.to)).expect("write the broken copy");
        layer.rebuild(&proven.dir);
        let out = proven.case.dir.join(format!("broken-{i}"));
        let (report, stdout) = replay(&proven.case, &proven.plan, &executor, &out, true);
        assert!(
            defects(&report).contains(b.culprit),
            "{}: replay through the broken copy shows differences of {}:\n{stdout}",
            b.what,
            b.culprit
        );
    }
}
