//! `remodel replay` of the corpus plans against the real databases: every read and write of the
//! library, rideshare, embedded-children and BenchBase plans run on generated data on both
//! sides. Each pattern's outcome is the expected file `fixtures/replay/<corpus>.txt`
//! (`UPDATE_EXPECT=1` rewrites it); every difference must be a design defect listed, with its
//! explanation, in `fixtures/replay/known-defects.txt`, and every listed defect must still show
//! (a fixed one is removed from the list).
//!
//! Then what replay does not show by itself: every CREATE of the plan's `schema.cql` was applied
//! on Cassandra 5 (each table and type is in the keyspace), and every statement of `plan.json` —
//! each read and its lookups, each write and its reads before write — prepares and runs there
//! once with typed sample values. Replay runs only the statements its samples reach: a write
//! Postgres refused every sample of, a guarded statement no sample met, a lookup after a read
//! that found no row, and the embedded collections replay does not replay would otherwise never
//! meet the server. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_model::{
    PatternReplay, Plan, ReplayMismatch, ReplayOutcome, ReplayReport, StatementKind,
};
use support::cql_statements::{assert_schema_loaded, run_every_statement};
use support::live::{json, Case};

/// One line of `known-defects.txt`: the defect of pattern `pattern` in `corpus`, explained.
struct Known {
    corpus: String,
    pattern: String,
    line: usize,
}

fn known() -> Vec<Known> {
    let path = support::root().join("fixtures/replay/known-defects.txt");
    let text = std::fs::read_to_string(&path).expect("known-defects.txt");
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with(' '))
        .map(|(n, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(
                f.len() == 2,
                "known-defects.txt:{}: `corpus pattern` expected",
                n + 1
            );
            Known {
                corpus: f[0].into(),
                pattern: f[1].into(),
                line: n + 1,
            }
        })
        .collect()
}

/// The pattern whose defect difference `m` shows: the write it was read after (its path failed,
/// or it left a row that reads differently), else the pattern itself. A write whose path fails
/// is rolled back on Postgres too, so what it would have left behind never surfaces later.
fn defect_of(m: &ReplayMismatch) -> &str {
    m.after
        .as_deref()
        .and_then(|a| a.split_whitespace().next())
        .unwrap_or(&m.pattern)
}

fn explains(k: &Known, corpus: &str, m: &ReplayMismatch) -> bool {
    k.corpus == corpus && k.pattern == defect_of(m)
}

/// The kind as replay names it (`?` when replay.json does not say).
fn kind(k: Option<StatementKind>) -> &'static str {
    k.map_or("?", StatementKind::action)
}

/// A pattern's outcome; the figures (samples, rows, timings) are not part of it: drawn rows
/// and `now()` move them.
fn outcome(p: &PatternReplay) -> String {
    let head = format!("{:<5} {:<6}", p.pattern, kind(p.kind));
    let why = p.reason.as_deref().unwrap_or("");
    match p.outcome {
        ReplayOutcome::Exception => format!("{head} exception: {why}"),
        ReplayOutcome::NotReplayed => format!("{head} not replayed: {why}"),
        ReplayOutcome::Replayed => format!("{head} replayed"),
    }
}

/// `remodel replay --writes` of `plan` with seed 1 at [`support::REPLAY_NOW`] into `out`
/// (`--replace`: over an earlier replay's tables); with `wall_offset` (libfaketime's `+7d`), the
/// process runs with its wall clock moved by that much. Returns replay.json and the output.
fn run_replay(
    case: &Case,
    plan: &str,
    out: &std::path::Path,
    wall_offset: Option<&str>,
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
        support::REPLAY_NOW,
        "--out",
        &out_s,
    ];
    let run = match wall_offset {
        None => support::remodel(&args),
        Some(offset) => {
            args.push("--replace");
            std::process::Command::new("faketime")
                .args(["-f", offset, env!("CARGO_BIN_EXE_remodel")])
                .args(&args)
                .current_dir(support::root())
                .env("DONT_FAKE_MONOTONIC", "1")
                .output()
                .expect("faketime (Debian package faketime; scripts/test installs it)")
        }
    };
    let stdout = support::text(&run.stdout);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "remodel replay {plan} failed:\n{stdout}\n{}",
        support::text(&run.stderr)
    );
    let report: ReplayReport =
        serde_json::from_value(json(&out.join("replay.json"))).expect("replay.json");
    assert_eq!(
        run.status.code() == Some(1),
        report.mismatches() > 0,
        "exit status and differences agree:\n{stdout}"
    );
    (report, stdout)
}

/// What a replay drew and found, as replay.json holds it: per pattern its samples, the rows SQL
/// returned, the samples Postgres refused, the reads after its writes, and every difference (the
/// timings left out: they are not the replay's to fix).
fn differences(report: &ReplayReport) -> String {
    type Drawn<'r> = (&'r str, usize, u64, usize, usize, &'r [ReplayMismatch]);
    let all: Vec<Drawn<'_>> = report
        .patterns
        .iter()
        .map(|p| {
            (
                p.pattern.as_str(),
                p.samples,
                p.rows,
                p.refused,
                p.reads_after,
                p.mismatches.as_slice(),
            )
        })
        .collect();
    serde_json::to_string_pretty(&all).expect("what the replay drew and found, as JSON")
}

/// Replays `input`'s plan as `corpus` and checks it (see the module documentation); with
/// `replays_most`, more than half of its patterns must be replayed; with `a_week_later`, it is
/// replayed again with the process's wall clock a week later and must differ in exactly the
/// same way (replay is a function of its seed and `--now`, not of the day).
async fn replay(corpus: &str, input: &str, replays_most: bool, a_week_later: bool) {
    let case = Case::new(&format!("replay_{corpus}")).await;
    let plan = case.plan(input);
    let (report, stdout) = run_replay(&case, &plan, &case.dir.join("replay"), None);
    let lines: Vec<String> = report.patterns.iter().map(outcome).collect();
    expect_test::expect_file![support::root().join(format!("fixtures/replay/{corpus}.txt"))]
        .assert_eq(&(lines.join("\n") + "\n"));
    let replayed = report
        .patterns
        .iter()
        .filter(|p| p.outcome == ReplayOutcome::Replayed && p.samples > 0)
        .count();
    assert!(
        !replays_most || replayed * 2 > report.patterns.len(),
        "most patterns replay:\n{stdout}"
    );
    let known: Vec<Known> = known().into_iter().filter(|k| k.corpus == corpus).collect();
    let unexplained: Vec<&ReplayMismatch> = report
        .patterns
        .iter()
        .flat_map(|p| &p.mismatches)
        .filter(|m| !known.iter().any(|k| explains(k, corpus, m)))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{} unexplained differences, the first: {:#?}\n{stdout}",
        unexplained.len(),
        unexplained.first()
    );
    for k in &known {
        let seen = report
            .patterns
            .iter()
            .flat_map(|p| &p.mismatches)
            .any(|m| explains(k, corpus, m));
        assert!(
            seen,
            "known-defects.txt:{}: {corpus} {} no longer differs: fixed? remove the entry",
            k.line, k.pattern
        );
    }
    if a_week_later {
        let (later, _) = run_replay(&case, &plan, &case.dir.join("replay-later"), Some("+7d"));
        assert_eq!(later.now, report.now, "the same --now");
        assert!(
            differences(&later) == differences(&report),
            "{corpus}: replayed a week later, it drew or found other rows:\n{}\n---- a week later:\n{}",
            differences(&report),
            differences(&later)
        );
    }
    let plan: Plan = serde_json::from_value(json(std::path::Path::new(&plan))).expect("plan.json");
    assert_schema_loaded(case.ks.session(), &plan, corpus).await;
    run_every_statement(case.ks.session(), &plan, corpus).await;
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn library() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("library", "fixtures/plan/library", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("rideshare", "examples/rideshare", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tpcc() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("tpcc", "fixtures/corpora/tpcc", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seats() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("seats", "fixtures/corpora/seats", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auctionmark() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("auctionmark", "fixtures/corpora/auctionmark", true, true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twitter() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("twitter", "fixtures/corpora/twitter", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn smallbank() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("smallbank", "fixtures/corpora/smallbank", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wikipedia() {
    remodel_testdb::live!(Postgres, Cassandra);
    replay("wikipedia", "fixtures/corpora/wikipedia", true, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn embed_one_to_few() {
    remodel_testdb::live!(Postgres, Cassandra);
    // A user type, a frozen map of it and the collection's entry updates of a one-to-few embed.
    // Replay does not read or write embedded collections (book/src/replay.md, Limits): those
    // patterns are listed as not replayed in fixtures/replay/embed_one_to_few.txt, and their
    // statements are run on Cassandra by run_every_statement.
    replay(
        "embed_one_to_few",
        "fixtures/plan/embed_one_to_few",
        false,
        false,
    )
    .await;
}
