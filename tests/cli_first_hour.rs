//! The first hour at the terminal (issue 14, part 6): every subcommand ends quietly with exit 0
//! when its output pipe is closed, input mistakes get messages that say what is wrong, and no
//! password typed on the command line comes back in any output.

mod support;

use std::process::Stdio;
use support::{command, text};

/// One command line per subcommand and output form.
const EVERY_SUBCOMMAND: &[&[&str]] = &[
    &["--help"],
    &["plan", "--help"],
    &["schema", "examples/rideshare/schema.sql"],
    &["schema", "--json", "examples/rideshare/schema.sql"],
    &["workload", "examples/rideshare/queries.sql"],
    &["workload", "--json", "examples/rideshare/postgres.log"],
    &[
        "analyze",
        "--schema",
        "examples/rideshare/schema.sql",
        "--queries",
        "examples/rideshare/queries.sql",
    ],
    &[
        "analyze",
        "--json",
        "--schema",
        "examples/rideshare/schema.sql",
        "--queries",
        "examples/rideshare/queries.sql",
    ],
];

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let out = std::env::temp_dir().join(format!("remodel-pipe-{}", std::process::id()));
    let plan = [
        "plan",
        "examples/rideshare",
        "--out",
        out.to_str().expect("utf-8 temp dir"),
    ];
    let plan_json = out.join("plan.json");
    let report_out = out.join("report-again");
    let report = [
        "report",
        "--plan",
        plan_json.to_str().expect("utf-8"),
        "--out",
        report_out.to_str().expect("utf-8"),
    ];
    // `plan` first: `report` reads the plan.json it writes.
    for args in [&plan[..], &report[..]]
        .into_iter()
        .chain(EVERY_SUBCOMMAND.iter().copied())
    {
        // The read end is closed before the command starts: its first write fails with EPIPE,
        // as when `| head -1` has read its line.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let run = command()
            .args(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("the remodel binary runs");
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn missing_and_wrong_paths_say_which() {
    let run = command()
        .args(["plan", "no/such/folder"])
        .output()
        .expect("runs");
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("no/such/folder does not exist"),
        "{}",
        text(&run.stderr)
    );
    let run = command()
        .args(["plan", "README.md"])
        .output()
        .expect("runs");
    assert!(
        text(&run.stderr).contains("README.md is not a folder"),
        "{}",
        text(&run.stderr)
    );
    // No arguments: both forms of the command.
    let run = command().args(["plan"]).output().expect("runs");
    let err = text(&run.stderr);
    assert!(err.contains("remodel plan DIR"), "{err}");
    assert!(
        err.contains("remodel plan --schema FILE... --queries FILE... --out DIR"),
        "{err}"
    );
}

#[test]
fn plan_says_why_it_rejected_its_input() {
    // A binary "schema": the same error `remodel schema` gives, then the one-line reason.
    let run = command()
        .args([
            "plan",
            "--schema",
            "fixtures/ddl/garbage.bin",
            "--queries",
            "examples/rideshare/queries.sql",
            "--out",
            "/nonexistent/never-written",
        ])
        .output()
        .expect("runs");
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("garbage.bin:1:1: error: not SQL text"),
        "{err}"
    );
    assert!(
        err.contains("no CREATE TABLE found in fixtures/ddl/garbage.bin (1 error above)"),
        "{err}"
    );
}

#[test]
fn the_start_hint_works_outside_the_checkout() {
    let run = command()
        .arg("--help")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("runs");
    let help = text(&run.stdout);
    let hint = help
        .lines()
        .find(|l| l.starts_with("Start with"))
        .unwrap_or_else(|| panic!("no hint in\n{help}"));
    // From elsewhere the hint names the example by a path that exists.
    let path = hint
        .split_whitespace()
        .nth(4)
        .expect("remodel plan PATH --out …");
    assert!(
        std::path::Path::new(path).join("schema.sql").is_file(),
        "{hint}"
    );
}

#[test]
fn no_password_in_any_output() {
    let secret = "s3cr3t-Pa55";
    let url = format!("postgres://app:{secret}@db.example:5432/prod");
    let conninfo = format!("host=db user=app password={secret}");
    let runs = [
        vec!["schema", url.as_str()],
        vec!["workload", conninfo.as_str()],
        vec![
            "analyze",
            "--schema",
            url.as_str(),
            "--queries",
            url.as_str(),
        ],
        vec!["plan", url.as_str()],
        vec![
            "plan",
            "--schema",
            url.as_str(),
            "--queries",
            url.as_str(),
            "--out",
            "/tmp/x",
        ],
    ];
    for args in runs {
        let run = command()
            .args(&args)
            .env("PGPASSWORD", secret)
            .output()
            .expect("runs");
        let all = text(&run.stdout) + &text(&run.stderr);
        assert!(
            !all.contains(secret),
            "{args:?} printed the password:\n{all}"
        );
        assert!(
            all.contains("***"),
            "{args:?} names the input masked:\n{all}"
        );
    }
}
