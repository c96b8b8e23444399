//! `remodel export spark` without databases: the job folder's files for the rideshare plan
//! (`fixtures/spark/`, `UPDATE_EXPECT=1 cargo test --test cli_export` rewrites them), no
//! password in any of them, and the errors for a wrong table, target or plan.

mod support;

use expect_test::expect_file;
use support::{remodel, remodel_ok, root, text};

#[test]
fn the_rideshare_plan_exports_to_a_job_folder() {
    // A relative folder, so that the README's commands (which name it) are the same each run.
    let out = "target/cli_export/rideshare";
    let _ = std::fs::remove_dir_all(root().join("target/cli_export"));
    remodel_ok(&[
        "plan",
        "examples/rideshare",
        "--out",
        "target/cli_export/plan",
    ]);
    let stdout = remodel_ok(&[
        "export",
        "spark",
        "--plan",
        "target/cli_export/plan/plan.json",
        "--out",
        out,
        "--source-url",
        "postgres://app:s3cret@db.internal:5432/rideshare?sslmode=require",
        "--target",
        "cassandra-1:9042",
    ]);
    assert!(
        stdout.starts_with(
            "spark job for 4 tables of keyspace rideshare written to target/cli_export/rideshare"
        ),
        "{stdout}"
    );
    let dir = root().join(out);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    for f in ["backfill.py", "job.json", "README.md", "log4j2.properties"] {
        assert!(!read(f).contains("s3cret"), "{f} holds the password");
    }
    expect_file!["../fixtures/spark/rideshare/job.json"].assert_eq(&read("job.json"));
    expect_file!["../fixtures/spark/rideshare/README.md"].assert_eq(&read("README.md"));
    assert_eq!(read("backfill.py"), remodel_spark_job());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("backfill.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "backfill.py is executable");
    }
    let _ = std::fs::remove_dir_all(root().join("target/cli_export"));
}

/// The job as the source tree holds it.
fn remodel_spark_job() -> String {
    std::fs::read_to_string(root().join("crates/spark/job/backfill.py")).unwrap()
}

#[test]
fn unknown_tables_bad_targets_and_failing_plans_are_refused() {
    let dir = support::scratch("export-errors");
    let out = dir.join("job").to_string_lossy().into_owned();
    let plan_dir = dir.join("plan").to_string_lossy().into_owned();
    remodel_ok(&["plan", "examples/rideshare", "--out", &plan_dir]);
    let good = dir.join("plan/plan.json").to_string_lossy().into_owned();
    let run = |extra: &[&str], plan: &str| {
        let mut args = vec!["export", "spark", "--plan", plan, "--out", &out];
        args.extend(extra);
        remodel(&args)
    };
    let o = run(&["--tables", "nope"], &good);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no table `nope` in the plan (it has: trips_by_driver"),
        "{}",
        text(&o.stderr)
    );

    let o = run(&["--target", "cassandra-1"], &good);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("target `cassandra-1` is not host:port"),
        "{}",
        text(&o.stderr)
    );

    let o = run(&[], "fixtures/plan/nope/plan.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("cannot read fixtures/plan/nope/plan.json"),
        "{}",
        text(&o.stderr)
    );

    // A plan that fails the designer's checks is not exported (exit 3), as backfill refuses it.
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    plan["design"]["violations"] =
        serde_json::json!([{"check": "a", "message": "trips_by_city_date: key not unique"}]);
    let bad = dir.join("bad-plan.json");
    std::fs::write(&bad, plan.to_string()).unwrap();
    let o = run(&[], &bad.to_string_lossy());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("must not be executed"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        !dir.join("job").exists(),
        "nothing written for a refused plan"
    );
    let _ = std::fs::remove_dir_all(dir);
}
