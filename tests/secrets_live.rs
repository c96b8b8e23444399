//! Secrets never leave the process (issue 14, part 5): `example-data`, `plan` (from files and
//! from the live source), `backfill`, `verify` and `report` run against real Postgres and Cassandra with the Postgres password in
//! the URL (percent-encoded, so any copy of the URL is found), in `PGPASSWORD`, in
//! `REMODEL_SOURCE`, and a Cassandra password in `REMODEL_TARGET_PASSWORD`; runs that fail on a
//! wrong password too (also over TLS, `sslmode=require`, and with a wrong `sslpassword` of an
//! encrypted client key). Then stdout, stderr, every file of the run folders, plan.json and the
//! report are searched for each password: never present. Needs `REMODEL_PG_URL` and
//! `REMODEL_CQL_URL`.

mod support;

use remodel_testdb::pki::Pki;
use std::path::Path;
use std::process::Output;
use support::live::Case;
use support::{files, text};

/// A wrong Postgres password in a URL, one in `PGPASSWORD`, and the Cassandra password.
const WRONG_IN_URL: &str = "Wr0ng-S3cret-PgUrl-7731";
const WRONG_IN_ENV: &str = "Wr0ng-S3cret-PgEnv-5519";
const CQL_PASSWORD: &str = "CqlS3cret-Target-4402";
/// A wrong passphrase of an encrypted client key, in the URL's `sslpassword`.
const WRONG_KEY_PASSPHRASE: &str = "Wr0ng-S3cret-SslKey-3307";

/// The test database's URL split around its password: (before, password, after).
fn split_password(url: &str) -> (String, String, String) {
    let start = url.find("://").expect("a URL") + 3;
    let at = start + url[start..].find('@').expect("user info in REMODEL_PG_URL");
    let colon = start
        + url[start..at]
            .find(':')
            .expect("a password in REMODEL_PG_URL");
    (
        url[..colon].to_string(),
        url[colon + 1..at].to_string(),
        url[at..].to_string(),
    )
}

/// Every byte percent-encoded: the same password to Postgres, a string found nowhere else.
fn percent(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// Runs `remodel ARGS` with `env` set (and `PGPASSWORD`, `REMODEL_*` cleared otherwise).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = support::command();
    for k in ["PGPASSWORD", "REMODEL_SOURCE", "REMODEL_TARGET_PASSWORD"] {
        c.env_remove(k);
    }
    c.args(args).envs(env.iter().copied());
    c.output().expect("run remodel")
}

#[tokio::test(flavor = "multi_thread")]
async fn no_password_reaches_output_files_plan_or_report() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("secrets").await;
    let (before, pw, after) = split_password(&case.url);
    let encoded = format!("{before}:{}{after}", percent(&pw));
    let without = format!("{before}{after}");
    let wrong = format!("{before}:{WRONG_IN_URL}{after}");
    let needles = [
        percent(&pw),
        format!(":{pw}@"),
        format!("password={pw}"),
        WRONG_IN_URL.to_string(),
        WRONG_IN_ENV.to_string(),
        CQL_PASSWORD.to_string(),
        WRONG_KEY_PASSPHRASE.to_string(),
    ];
    let dir = case.dir.clone();
    let plan_dir = dir.join("plan");
    let (run_ok, run_bad, report) = (dir.join("run"), dir.join("run-bad"), dir.join("report"));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let node = case.ks.node().to_string();
    let ks = case.ks.name().to_string();
    let cql = [("REMODEL_TARGET_PASSWORD", CQL_PASSWORD)];
    let target = ["--target", node.as_str(), "--target-user", "remodel_user"];
    let mut outputs: Vec<(String, Output, bool)> = Vec::new();
    let mut step = |name: &str, args: Vec<String>, env: &[(&str, &str)], ok: bool| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        outputs.push((name.to_string(), run(&refs, env), ok));
    };
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();

    step(
        "example-data (password percent-encoded in the URL)",
        v(&[
            "example-data",
            "rideshare",
            "--source",
            &encoded,
            "--trips",
            "300",
        ]),
        &[],
        true,
    );
    step(
        "plan",
        v(&[
            "plan",
            "examples/rideshare",
            "--keyspace",
            &ks,
            "--out",
            &s(&plan_dir),
        ]),
        &[],
        true,
    );
    step(
        "plan given a URL where a file was expected",
        v(&[
            "plan",
            "--schema",
            &wrong,
            "--queries",
            &wrong,
            "--out",
            &s(&dir.join("x")),
        ]),
        &[],
        false,
    );
    let pg_schema = case.pg.name().to_string();
    let live = dir.join("plan-live");
    step(
        "plan --source (password in PGPASSWORD)",
        v(&[
            "plan",
            "--source",
            &without,
            "--schemas",
            &pg_schema,
            "--queries",
            "examples/rideshare/queries.sql",
            "--keyspace",
            &ks,
            "--out",
            &s(&live),
            "--stats-out",
            &s(&live.join("stats.json")),
        ]),
        &[("PGPASSWORD", &pw)],
        true,
    );
    step(
        "plan --source with a wrong password in the URL",
        v(&["plan", "--source", &wrong, "--out", &s(&dir.join("y"))]),
        &[],
        false,
    );
    let plan = s(&plan_dir.join("plan.json"));
    let mut backfill = v(&[
        "backfill",
        "--plan",
        &plan,
        "--create-schema",
        "--progress",
        "lines",
    ]);
    backfill.extend(v(&target));
    step(
        "backfill (password in REMODEL_SOURCE, percent-encoded)",
        [backfill.clone(), v(&["--run-dir", &s(&run_ok)])].concat(),
        &[("REMODEL_SOURCE", &encoded), cql[0]],
        true,
    );
    let mut verify = v(&["verify", "--plan", &plan, "--source", &without]);
    verify.extend(v(&target));
    step(
        "verify (password in PGPASSWORD)",
        verify.clone(),
        &[("PGPASSWORD", &pw), cql[0]],
        true,
    );
    step(
        "report",
        v(&[
            "report",
            "--plan",
            &plan,
            "--run",
            &s(&run_ok),
            "--out",
            &s(&report),
        ]),
        &[],
        true,
    );
    step(
        "backfill with a wrong password in the URL",
        [
            backfill.clone(),
            v(&["--source", &wrong, "--run-dir", &s(&run_bad)]),
        ]
        .concat(),
        &cql,
        false,
    );
    step(
        "verify with a wrong PGPASSWORD",
        verify,
        &[("PGPASSWORD", WRONG_IN_ENV), cql[0]],
        false,
    );
    step(
        "backfill --help with REMODEL_SOURCE set",
        v(&["backfill", "--help"]),
        &[("REMODEL_SOURCE", &wrong)],
        true,
    );
    let tls = format!("{wrong}&sslmode=require");
    step(
        "backfill with sslmode=require",
        [
            backfill.clone(),
            v(&["--source", &tls, "--run-dir", &s(&run_bad)]),
        ]
        .concat(),
        &cql,
        false,
    );
    let pki = Pki::generate("secrets").expect("test certificates");
    let key = format!(
        "{wrong}&sslmode=require&sslcert={}&sslkey={}&sslpassword={WRONG_KEY_PASSPHRASE}",
        pki.client_cert.display(),
        pki.client_key_encrypted.display()
    );
    step(
        "backfill with a wrong sslpassword",
        [backfill, v(&["--source", &key, "--run-dir", &s(&run_bad)])].concat(),
        &cql,
        false,
    );

    let mut places: Vec<(String, String)> = Vec::new();
    for (name, out, ok) in &outputs {
        assert_eq!(
            out.status.success(),
            *ok,
            "{name}: {}\n{}\n{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        places.push((format!("{name}: stdout"), text(&out.stdout)));
        places.push((format!("{name}: stderr"), text(&out.stderr)));
    }
    // The failures say what failed, with the URL shown without its password.
    let failed = |name: &str| {
        let (_, out, _) = outputs.iter().find(|(n, ..)| n == name).unwrap();
        text(&out.stderr)
    };
    let msg = failed("backfill with a wrong password in the URL");
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert!(msg.contains("postgres://"), "{msg}");
    let msg = failed("verify with a wrong PGPASSWORD");
    assert!(msg.contains("password authentication failed"), "{msg}");
    let msg = failed("backfill with sslmode=require");
    assert!(
        msg.contains(": connect (sslmode=require): ")
            && msg.contains("password authentication failed"),
        "{msg}"
    );
    let msg = failed("backfill with a wrong sslpassword");
    assert!(msg.contains("wrong passphrase"), "{msg}");
    assert!(live.join("stats.json").is_file(), "--stats-out written");
    for d in [&run_ok, &run_bad, &plan_dir, &report, &live] {
        if d.exists() {
            files(d, &mut places);
        }
    }
    assert!(places.iter().any(|(p, _)| p.ends_with("checkpoint.json")));
    assert!(places.iter().any(|(p, _)| p.ends_with("backfill.log")));
    assert!(places.iter().any(|(p, _)| p.ends_with("summary.json")));
    assert!(places.iter().any(|(p, _)| p.ends_with("plan.json")));
    assert!(places.iter().any(|(p, _)| p.contains("report/src/")));
    for (place, content) in &places {
        for (i, needle) in needles.iter().enumerate() {
            assert!(!content.contains(needle.as_str()), "secret #{i} in {place}");
        }
    }
    case.cleanup().await;
}
