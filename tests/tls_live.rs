//! TLS on both connections, end to end (issue 14, part 5): `example-data`, `plan --source`,
//! `backfill` and `verify` run with the source URL's `sslmode=verify-full` (the test CA in
//! `sslrootcert`, a client certificate in `sslcert`/`sslkey`) and `--target-tls verify-full`
//! with `--target-ca`, `--target-cert` and `--target-key`; then each side with a CA that did not
//! sign its server's certificate fails in one line that names the connection, the TLS settings
//! and the reason, without the password. Needs `REMODEL_PG_URL`, `REMODEL_CQL_URL` and
//! `REMODEL_DB_TLS` (the servers as `scripts/db up` configures them).

mod support;

use remodel_testdb::db_tls;
use remodel_testdb::pki::Pki;
use support::live::{refs, Case};
use support::{remodel, remodel_ok, text};

#[tokio::test(flavor = "multi_thread")]
async fn backfill_and_verify_over_tls_on_both_sides() {
    remodel_testdb::live!(Postgres, Cassandra, DbTls);
    let case = Case::new("tls").await;
    let (source, target_tls, [ca, cert, key]) = full_tls(&case.url);
    remodel_ok(&[
        "example-data",
        "rideshare",
        "--source",
        &source,
        "--trips",
        "500",
    ]);
    let plan = case.plan("examples/rideshare");
    let run = case.dir.join("run");
    let mut args = case.backfill_args(&plan, &run, &["--create-schema"]);
    let at = args.iter().position(|a| a == "--source").expect("--source") + 1;
    args[at] = source.clone();
    args.extend(target_tls.iter().cloned());
    let out = remodel_ok(&refs(&args));
    assert!(out.contains("completed"), "{out}");
    let node = case.ks.node().to_string();
    let mut verify = vec![
        "verify", "--plan", &plan, "--source", &source, "--target", &node,
    ];
    verify.extend(target_tls.iter().map(String::as_str));
    let out = remodel_ok(&verify);
    assert!(
        out.contains("verify: all") && out.contains("tables match"),
        "{out}"
    );

    // The live planner reads the catalog over TLS too.
    let pg_schema = case.pg.name().to_string();
    let out = remodel_ok(&["schema", "--source", &source, "--schemas", &pg_schema]);
    assert!(out.contains("trips"), "{out}");

    // A CA that did not sign the servers' certificates: each side fails in one line.
    let stranger = Pki::generate("tls-e2e").unwrap();
    let other_ca = stranger.ca.display().to_string();
    let password = case.password();
    // `verify` with the source and the target CA given; it must fail (exit 2): its stderr.
    let fails = |source: &str, target_ca: &str| {
        let out = remodel(&[
            "verify",
            "--plan",
            &plan,
            "--source",
            source,
            "--target",
            &node,
            "--target-tls",
            "verify-full",
            "--target-ca",
            target_ca,
            "--target-cert",
            &cert,
            "--target-key",
            &key,
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains(&format!(":{password}@")), "{err}");
        err
    };
    let err = fails(
        &format!("{}&sslmode=verify-full&sslrootcert={other_ca}", case.url),
        &ca,
    );
    assert!(
        err.contains(&format!(
            ": connect (sslmode=verify-full, sslrootcert={other_ca}): "
        )) && err.contains("certificate verify failed"),
        "{err}"
    );
    let err = fails(&source, &other_ca);
    assert!(
        err.contains(&format!(
            "Cassandra at {node}: connect (TLS verify-full, CA {other_ca}, client certificate {cert}): "
        )) && err.contains("certificate verify failed"),
        "{err}"
    );
    case.cleanup().await;
}

/// The source URL and `--target-tls …` flags of full checks with the test CA and client
/// certificate on both sides, and the paths of the CA, the certificate and the key.
fn full_tls(url: &str) -> (String, Vec<String>, [String; 3]) {
    let tls = db_tls().unwrap_or_else(|e| panic!("{e}"));
    let files = [&tls.ca, &tls.client_cert, &tls.client_key].map(|p| p.display().to_string());
    let [ca, cert, key] = &files;
    let source = format!("{url}&sslmode=verify-full&sslrootcert={ca}&sslcert={cert}&sslkey={key}");
    let flags = [
        "--target-tls",
        "verify-full",
        "--target-ca",
        ca,
        "--target-cert",
        cert,
        "--target-key",
        key,
    ];
    (source, flags.map(str::to_string).to_vec(), files.clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_over_tls_on_both_sides() {
    remodel_testdb::live!(Postgres, Cassandra, DbTls);
    let case = Case::new("tls_replay").await;
    let (source, flags, _) = full_tls(&case.url);
    let plan = case.plan("examples/rideshare");
    let out_dir = case.dir.join("replay").to_string_lossy().into_owned();
    let node = case.ks.node().to_string();
    let mut args: Vec<&str> = vec![
        "replay",
        "--plan",
        &plan,
        "--source",
        &source,
        "--target",
        &node,
        "--rows",
        "60",
        "--samples",
        "3",
        "--writes",
        "--now",
        support::REPLAY_NOW,
        "--out",
        &out_dir,
    ];
    args.extend(flags.iter().map(String::as_str));
    let out = remodel_ok(&args);
    assert!(out.contains(" 0 mismatches"), "{out}");
    case.cleanup().await;
}
