//! A password in a connection string the user mistyped never leaves the process (issue 20): every
//! subcommand that takes a URL (`plan`, `schema` and `workload --source`, `backfill`, `verify`,
//! `replay`, `example-data`, `export spark --source-url`) is run with each malformed form, given
//! as the flag and (where the flag reads one) in `REMODEL_SOURCE`, and a Cassandra target written
//! as a URL with credentials is given to every subcommand that takes `--target`. Each run must
//! exit 2 with a message, and its password must be in neither stdout, stderr nor any file it
//! wrote. No database is needed: each string is refused before anything connects (the one
//! well-formed string points at a closed port).

mod support;

use std::path::Path;
use support::{files, scratch, text};

/// The password every form carries, with the form's number appended: a string found nowhere else.
const PASSWORD: &str = "Leak-Me-If-You-Can-4711";

/// The malformed (and one well-formed but unreachable) Postgres connection strings, `{}` standing
/// for the password.
const SOURCES: [&str; 9] = [
    "postgres:/u:{}@h/db",
    "u:{}@h/db",
    "postgres//u:{}@h",
    "pg://u:{}@h/db",
    "postgresql://u:{}@[bad/db",
    "host=h password={} dbname",
    "host=h password='{} and more",
    "cql://u:{}@127.0.0.1:9042",
    REACHABLE_NOWHERE,
];

/// The one well-formed string: it fails on connecting, and `export spark` (which does not
/// connect) takes it.
const REACHABLE_NOWHERE: &str = "host=127.0.0.1 port=1 password={} dbname=x connect_timeout=5";

/// Cassandra targets with credentials in them.
const TARGETS: [&str; 3] = [
    "cql://u:{}@127.0.0.1:9042",
    "u:{}@127.0.0.1:9042",
    "cassandra://u:{}@h:9042/ks",
];

/// Owned words of a command line.
fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|s| s.to_string()).collect()
}

const PLAN: &str = "fixtures/plan/rideshare/plan.json";

/// The command lines of every subcommand that takes a Postgres URL, `URL` standing for it;
/// `out` is where each may write.
fn source_commands(out: &Path) -> Vec<Vec<String>> {
    let o = |name: &str| out.join(name).to_string_lossy().into_owned();
    let (plan, plan2, run, replay, spark) =
        (o("plan"), o("plan2"), o("run"), o("replay"), o("spark"));
    let out = out.to_string_lossy();
    let target = ["--target", "127.0.0.1:1"];
    vec![
        words(&["plan", "--source", "URL", "--out", &plan]),
        words(&[
            "plan",
            "examples/rideshare",
            "--source",
            "URL",
            "--out",
            &plan2,
        ]),
        words(&["schema", "--source", "URL"]),
        words(&["workload", "--source", "URL"]),
        [
            words(&[
                "backfill",
                "--plan",
                PLAN,
                "--source",
                "URL",
                "--run-dir",
                &run,
            ]),
            words(&target),
        ]
        .concat(),
        [
            words(&[
                "verify",
                "--plan",
                PLAN,
                "--source",
                "URL",
                "--run-dir",
                &out,
            ]),
            words(&target),
        ]
        .concat(),
        [
            words(&[
                "replay", "--plan", PLAN, "--source", "URL", "--out", &replay,
            ]),
            words(&target),
        ]
        .concat(),
        words(&[
            "example-data",
            "rideshare",
            "--source",
            "URL",
            "--trips",
            "10",
        ]),
        words(&[
            "export",
            "spark",
            "--plan",
            PLAN,
            "--out",
            &spark,
            "--source-url",
            "URL",
        ]),
    ]
}

/// The command lines of every subcommand that takes `--target`, `URL` standing for it.
fn target_commands(out: &Path) -> Vec<Vec<String>> {
    let source = ["--source", "postgres://u@127.0.0.1:1/db", "--target", "URL"];
    let o = |name: &str| out.join(name).to_string_lossy().into_owned();
    let (run, spark) = (o("run"), o("spark"));
    vec![
        [
            words(&["backfill", "--plan", PLAN, "--run-dir", &run]),
            words(&source),
        ]
        .concat(),
        [words(&["verify", "--plan", PLAN]), words(&source)].concat(),
        [words(&["replay", "--plan", PLAN]), words(&source)].concat(),
        words(&[
            "export", "spark", "--plan", PLAN, "--out", &spark, "--target", "URL",
        ]),
    ]
}

/// Runs one command line with `url` in place of `URL` (or, with `env`, in `REMODEL_SOURCE` and the
/// flag left out), and checks its exit code and that `password` is nowhere in what it printed or
/// wrote. Returns a description of each failure.
fn check(line: &[String], form: &str, password: &str, env: bool, out: &Path) -> Vec<String> {
    let url = form.replace("{}", password);
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("create the output folder");
    let mut args: Vec<String> = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if env && line[i] == "--source" && line.get(i + 1).is_some_and(|v| v == "URL") {
            i += 2;
            continue;
        }
        args.push(if line[i] == "URL" {
            url.clone()
        } else {
            line[i].clone()
        });
        i += 1;
    }
    let mut c = support::command();
    for k in [
        "PGPASSWORD",
        "REMODEL_SOURCE",
        "REMODEL_TARGET",
        "REMODEL_TARGET_PASSWORD",
    ] {
        c.env_remove(k);
    }
    if env {
        c.env("REMODEL_SOURCE", &url);
    }
    let run = c.args(&args).output().expect("run remodel");
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    let shown = format!("remodel {} (REMODEL_SOURCE: {env})", args.join(" "));
    let mut failures = Vec::new();
    let expected = if form == REACHABLE_NOWHERE && line[0] == "export" {
        0
    } else {
        2
    };
    if run.status.code() != Some(expected) {
        failures.push(format!(
            "{shown}: exit {:?}, expected {expected}\n{stderr}",
            run.status.code()
        ));
    }
    if expected != 0 && !stderr.contains("error") {
        failures.push(format!("{shown}: no error message\n{stderr}"));
    }
    let mut places = vec![
        ("stdout".to_string(), stdout),
        ("stderr".to_string(), stderr),
    ];
    files(out, &mut places);
    for (place, content) in places {
        if content.contains(password) {
            failures.push(format!("{shown}: the password is in {place}:\n{content}"));
        }
    }
    failures
}

#[test]
fn no_subcommand_prints_or_writes_the_password_of_a_malformed_url() {
    let dir = scratch("secrets-malformed");
    let out = dir.join("out");
    let mut failures = Vec::new();
    let mut runs = 0;
    for (n, form) in SOURCES.iter().enumerate() {
        let password = format!("{PASSWORD}-{n}");
        for line in source_commands(&out) {
            let takes_env = matches!(
                line[0].as_str(),
                "backfill" | "verify" | "replay" | "example-data"
            );
            for env in [false, true] {
                if env && !takes_env {
                    continue;
                }
                failures.extend(check(&line, form, &password, env, &out));
                runs += 1;
            }
        }
    }
    for (n, form) in TARGETS.iter().enumerate() {
        let password = format!("{PASSWORD}-t{n}");
        for line in target_commands(&out) {
            failures.extend(check(&line, form, &password, false, &out));
            runs += 1;
        }
    }
    assert!(runs > 100, "{runs} runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
