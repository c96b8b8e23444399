//! Every subcommand exits as the book's table says (issue 20): 0 done, 1 stopped or a difference
//! found, 2 unusable input or URL, 3 a plan that fails its checks. Each subcommand is run with a
//! missing file, a bad flag value, and (where it takes one) a malformed URL and a well-formed URL
//! whose server cannot be reached; the commands that execute a plan are given one that fails its
//! checks. No database is needed: nothing here reaches one.

mod support;

use std::path::Path;
use support::{scratch, text};

const PLAN: &str = "fixtures/plan/rideshare/plan.json";
/// Well formed, but nothing listens there.
const NOWHERE_PG: &str = "postgres://app@127.0.0.1:1/db?connect_timeout=5";
const NOWHERE_CQL: &str = "127.0.0.1:1";
const BAD_URL: &str = "postgres:/app:pw@db/x";

/// Runs `remodel ARGS` from the repository root, with no `REMODEL_*` in its environment.
fn remodel(args: &[&str]) -> std::process::Output {
    let mut c = support::command();
    for k in ["REMODEL_SOURCE", "REMODEL_TARGET", "PGPASSWORD"] {
        c.env_remove(k);
    }
    c.args(args).output().expect("run remodel")
}

/// Runs `remodel ARGS` ([`remodel`]) and returns a failure message when it does not exit with `code`.
fn expect(code: i32, args: &[&str]) -> Option<String> {
    let out = remodel(args);
    (out.status.code() != Some(code)).then(|| {
        format!(
            "remodel {}: exit {:?}, expected {code}\n{}",
            args.join(" "),
            out.status.code(),
            text(&out.stderr)
        )
    })
}

/// `plan.json` of the rideshare fixture with a violation of the designer's checks.
fn failing_plan(dir: &Path) -> String {
    let text = std::fs::read_to_string(support::root().join(PLAN)).expect("the fixture plan");
    let mut plan: serde_json::Value = serde_json::from_str(&text).expect("a plan");
    plan["design"]["violations"] =
        serde_json::json!([{"check": "key_unique", "message": "trips_by_id: key not unique"}]);
    let file = dir.join("failing-plan.json");
    std::fs::write(&file, plan.to_string()).expect("write the plan");
    file.to_string_lossy().into_owned()
}

#[test]
fn every_subcommand_exits_as_the_book_says() {
    let dir = scratch("exit-codes");
    let o = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (out, run, spark, report) = (o("out"), o("run"), o("spark"), o("report"));
    let failing = failing_plan(&dir);
    let endpoints = |plan: &str| {
        vec![
            "--plan".to_string(),
            plan.to_string(),
            "--source".to_string(),
            NOWHERE_PG.to_string(),
            "--target".to_string(),
            NOWHERE_CQL.to_string(),
        ]
    };
    let with = |head: &[&str], plan: &str, tail: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = head.iter().map(|s| s.to_string()).collect();
        v.extend(endpoints(plan));
        v.extend(tail.iter().map(|s| s.to_string()));
        v
    };
    let mut cases: Vec<(i32, Vec<String>)> = Vec::new();
    let mut case = |code: i32, args: &[&str]| {
        cases.push((code, args.iter().map(|s| s.to_string()).collect()));
    };
    // schema, workload, analyze: files, and the live source of the first two.
    case(2, &["schema", "no/such.sql"]);
    case(
        2,
        &["schema", "--json=yes", "examples/rideshare/schema.sql"],
    );
    case(2, &["schema", "--source", BAD_URL]);
    case(2, &["schema", "--source", NOWHERE_PG]);
    case(2, &["workload", "no/such.sql"]);
    case(
        2,
        &[
            "workload",
            "--format",
            "bogus",
            "examples/rideshare/queries.sql",
        ],
    );
    case(2, &["workload", "--source", BAD_URL]);
    case(2, &["workload", "--source", NOWHERE_PG]);
    let rideshare = [
        "--schema",
        "examples/rideshare/schema.sql",
        "--queries",
        "examples/rideshare/queries.sql",
    ];
    case(
        2,
        &[
            "analyze",
            "--schema",
            "no/such.sql",
            "--queries",
            "no/such.sql",
        ],
    );
    case(
        2,
        &[&rideshare[..], &["--max-embed-attributes", "x"]].concat(),
    );
    case(2, &[&rideshare[..], &["--config", "no/such.toml"]].concat());
    case(0, &[&["analyze"][..], &rideshare[..]].concat());
    // plan and report.
    case(2, &["plan", "no/such/dir", "--out", &out]);
    case(
        2,
        &[
            "plan",
            "examples/rideshare",
            "--out",
            &out,
            "--objective",
            "bogus",
        ],
    );
    case(2, &["plan", "--source", BAD_URL, "--out", &out]);
    case(2, &["plan", "--source", NOWHERE_PG, "--out", &out]);
    case(0, &["plan", "examples/rideshare", "--out", &out]);
    case(
        2,
        &["report", "--plan", "no/such/plan.json", "--out", &report],
    );
    case(
        2,
        &[
            "report",
            "--plan",
            PLAN,
            "--run",
            "no/such/run",
            "--out",
            &report,
        ],
    );
    case(0, &["report", "--plan", &failing, "--out", &report]);
    // example-data.
    case(2, &["example-data", "nope", "--source", NOWHERE_PG]);
    case(
        2,
        &[
            "example-data",
            "rideshare",
            "--source",
            NOWHERE_PG,
            "--trips",
            "x",
        ],
    );
    case(2, &["example-data", "rideshare", "--source", BAD_URL]);
    case(2, &["example-data", "rideshare", "--source", NOWHERE_PG]);
    // export spark.
    case(
        2,
        &[
            "export",
            "spark",
            "--plan",
            "no/such/plan.json",
            "--out",
            &spark,
        ],
    );
    case(
        2,
        &[
            "export", "spark", "--plan", PLAN, "--out", &spark, "--target", "x",
        ],
    );
    case(
        2,
        &[
            "export",
            "spark",
            "--plan",
            PLAN,
            "--out",
            &spark,
            "--source-url",
            BAD_URL,
        ],
    );
    case(3, &["export", "spark", "--plan", &failing, "--out", &spark]);
    case(0, &["export", "spark", "--plan", PLAN, "--out", &spark]);
    let mut failures: Vec<String> = cases
        .iter()
        .filter_map(|(code, args)| expect(*code, &support::live::refs(args)))
        .collect();
    // backfill, verify, replay: the plan, the source and the target.
    for (cmd, bad_flag) in [
        ("backfill", ["--readers", "0"]),
        ("verify", ["--sample", "x"]),
        ("replay", ["--samples", "0"]),
    ] {
        let run_dir: &[&str] = if cmd == "backfill" {
            &["--run-dir", &run]
        } else {
            &[]
        };
        let runs: Vec<(i32, Vec<String>)> = vec![
            (2, with(&[cmd], "no/such/plan.json", run_dir)),
            (2, with(&[cmd], PLAN, &[&bad_flag[..], run_dir].concat())),
            (3, with(&[cmd], &failing, run_dir)),
            (
                2,
                with(
                    &[cmd],
                    PLAN,
                    &[&["--source", BAD_URL][..], run_dir].concat(),
                ),
            ),
            (
                2,
                with(
                    &[cmd],
                    PLAN,
                    &[&["--target", "cql://u:pw@h:9042"][..], run_dir].concat(),
                ),
            ),
            // Well formed, unreachable: nothing could start.
            (2, with(&[cmd], PLAN, run_dir)),
        ];
        failures.extend(
            runs.iter()
                .filter_map(|(code, args)| expect(*code, &support::live::refs(args))),
        );
    }
    failures.extend(expect(
        2,
        &[
            "backfill",
            "--plan",
            PLAN,
            "--source",
            NOWHERE_PG,
            "--target",
            NOWHERE_CQL,
            "--resume",
            "no/such/run",
        ],
    ));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `remodel sync` without databases: one that cannot be reached exits 2 with its own message
/// (not the backfill's), nothing created; `--finish` of a folder finished already says so and
/// exits 0; of a folder that never held a sync, 2.
#[test]
fn sync_exits_2_on_an_unreachable_database_and_finishes_once() {
    let dir = scratch("exit-codes-sync");
    let run = dir.join("run");
    let run_s = run.to_string_lossy().into_owned();
    let sync = |args: &[&str]| remodel(&[&["sync"][..], args].concat());
    let out = sync(&[
        "--plan",
        PLAN,
        "--source",
        NOWHERE_PG,
        "--target",
        NOWHERE_CQL,
        "--run-dir",
        &run_s,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("remodel: error: Postgres at postgres://app@127.0.0.1:1/db"),
        "{err}"
    );
    assert!(!err.contains("backfill:"), "{err}");
    assert!(!run.join("sync.json").exists(), "nothing is created");

    let finish = ["--finish", "--source", NOWHERE_PG, "--run-dir", &run_s];
    let out = sync(&finish);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no sync.json there (give the --run-dir of the sync)"),
        "{}",
        text(&out.stderr)
    );
    std::fs::create_dir_all(&run).expect("run folder");
    std::fs::write(
        run.join("sync.finished.json"),
        r#"{"slot": "s1", "publication": "s1", "source": "x", "consistent_lsn": "0/1", "backfill_timestamp": 1, "backfill_done": true}"#,
    )
    .expect("a finished sync's state");
    let out = sync(&finish);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(
            "already finished: slot s1 and publication s1 were dropped by an earlier --finish"
        ),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
