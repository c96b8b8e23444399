//! A backfill never writes into a table that is not the plan's, never shares its run folder, and
//! ends cleanly on Ctrl-C (issue 20), against real Postgres and Cassandra:
//! - a target table whose column type, clustering order or key differs from the plan, or a user
//!   type whose field differs, is refused (exit 2) with one line naming the difference, with and
//!   without `--create-schema`, and nothing is created;
//! - a run killed before its schema was created resumes with `--resume DIR` alone and creates it;
//! - a second process on a run folder is refused with the holder's pid;
//! - SIGINT ends a run with exit 130 and the exact command that resumes it (no password in it),
//!   and that command completes the run, verify clean.
//!
//! Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};
use support::live::{json, refs, wait_until, Case};
use support::text;

/// A `remodel backfill` running in the background, killed if the test fails first (it holds a
/// snapshot transaction that would block the test's cleanup, and others' work, for good).
struct Running(Option<Child>);

impl Running {
    fn start(args: &[String]) -> Running {
        let child = support::command()
            .args(args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start remodel backfill");
        Running(Some(child))
    }

    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("running")
    }

    /// Waits for the end and returns what it printed.
    fn output(mut self) -> Output {
        self.0.take().expect("running").wait_with_output().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `remodel ARGS` and returns what it did.
fn remodel(args: &[String]) -> Output {
    support::remodel(&refs(args))
}

/// Asserts `out` exited with `code`, and returns its stderr.
fn exited(out: &Output, code: i32) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{stderr}",
        text(&out.stdout)
    );
    stderr
}

/// The `remodel: error:` line of a stderr (there is exactly one).
fn error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("remodel: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0]
}

/// The tables of the case's keyspace on the target.
async fn target_tables(case: &Case) -> Vec<String> {
    let rows = case
        .ks
        .session()
        .query_unpaged(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?",
            (case.ks.name(),),
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    rows.rows::<(String,)>()
        .unwrap()
        .map(|r| r.unwrap().0)
        .collect()
}

/// Replaces the case's `trips_by_driver` (when there is one) with the table `create` makes.
async fn trips_by_driver(case: &Case, create: &str) {
    let session = case.ks.session();
    for cql in ["DROP TABLE IF EXISTS trips_by_driver", create] {
        session.query_unpaged(cql, &[]).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_that_differs_from_the_plan_is_refused_naming_the_difference() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_schema_diff").await;
    let plan = case.rideshare(300);
    // started_at is a bigint in every table below: the plan keeps it as epoch microseconds.
    trips_by_driver(
        &case,
        "CREATE TABLE trips_by_driver (driver_id text, started_at bigint, trip_id uuid, \
             city text, distance_km decimal, fare_usd double, \
             PRIMARY KEY ((driver_id), started_at, trip_id)) \
             WITH CLUSTERING ORDER BY (started_at DESC, trip_id ASC)",
    )
    .await;
    let expected =
        "trips_by_driver: column fare_usd is double on the target, the plan says decimal";
    for extra in [&[][..], &["--create-schema"][..]] {
        let run = case.dir.join(format!("run{}", extra.len()));
        let out = remodel(&case.backfill_args(&plan, &run, extra));
        let stderr = exited(&out, 2);
        let line = error_line(&stderr);
        assert!(line.contains(expected), "{extra:?}: {line}");
        assert!(!stderr.contains("resume with"), "{stderr}");
        // Nothing was created beside the table that differs, nothing was written into it.
        assert_eq!(target_tables(&case).await, ["trips_by_driver"]);
    }
    // The other tables alone: missing, and created only when asked to.
    let others = ["--tables", "trips_by_id,drivers_by_id"];
    let out = remodel(&case.backfill_args(&plan, &case.dir.join("run-lacks"), &others));
    let line = exited(&out, 2);
    assert!(
        error_line(&line).contains(
            "lacks table trips_by_id, table drivers_by_id: give --create-schema to create it"
        ),
        "{line}"
    );
    let run = case.dir.join("run-others");
    let out =
        remodel(&case.backfill_args(&plan, &run, &[&others[..], &["--create-schema"]].concat()));
    exited(&out, 0);

    // A clustering order and a partition key that differ.
    trips_by_driver(
        &case,
        "CREATE TABLE trips_by_driver (driver_id text, started_at bigint, trip_id uuid, \
             city text, distance_km decimal, fare_usd decimal, \
             PRIMARY KEY ((driver_id), started_at, trip_id))",
    )
    .await;
    let out =
        remodel(&case.backfill_args(&plan, &case.dir.join("run-order"), &["--create-schema"]));
    let stderr = exited(&out, 2);
    assert!(
        error_line(&stderr).contains(
            "trips_by_driver: clustering (started_at ASC, trip_id ASC) on the target, the plan says (started_at DESC, trip_id ASC)"
        ),
        "{stderr}"
    );
    trips_by_driver(
        &case,
        "CREATE TABLE trips_by_driver (driver_id text, started_at bigint, trip_id uuid, \
             city text, distance_km decimal, fare_usd decimal, \
             PRIMARY KEY ((driver_id, started_at), trip_id))",
    )
    .await;
    let out = remodel(&case.backfill_args(&plan, &case.dir.join("run-key"), &["--create-schema"]));
    let stderr = exited(&out, 2);
    assert!(
        error_line(&stderr).contains(
            "trips_by_driver: partition key (driver_id, started_at) on the target, the plan says (driver_id)"
        ),
        "{stderr}"
    );
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_type_that_differs_from_the_plan_is_refused() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_udt_diff").await;
    let plan = case.plan("fixtures/plan/embed_one_to_few");
    let plan_json = json(Path::new(&plan));
    let udt = &plan_json["design"]["types"][0];
    assert_eq!(udt["name"], "address_entry", "{udt}");
    case.ks
        .session()
        .query_unpaged(
            "CREATE TYPE address_entry (label text, street text, city int)",
            &[],
        )
        .await
        .unwrap();
    let out = remodel(&case.backfill_args(&plan, &case.dir.join("run"), &["--create-schema"]));
    let stderr = exited(&out, 2);
    assert!(
        error_line(&stderr)
            .contains("type address_entry: field city is int on the target, the plan says text"),
        "{stderr}"
    );
    assert!(target_tables(&case).await.is_empty(), "a table was created");
    case.cleanup().await;
}

/// Finished ranges per table of a checkpoint.
fn finished(checkpoint: &serde_json::Value) -> BTreeMap<String, usize> {
    checkpoint["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["finished"].as_object().unwrap().len(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_before_its_schema_was_created_resumes_by_creating_it() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_schema_resume").await;
    let plan = case.rideshare(2000);
    let run = case.dir.join("run");
    // A target that takes the connection and never answers: the run waits for it with its
    // checkpoint written and no table created, and is killed there.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let node = silent.local_addr().unwrap().to_string();
    let mut args = case.backfill_args(&plan, &run, &["--create-schema"]);
    let at = args.iter().position(|a| a == "--target").unwrap();
    args[at + 1] = node;
    let mut running = Running::start(&args);
    let checkpoint = run.join("checkpoint.json");
    wait_until(running.child(), 60, "the checkpoint", || {
        checkpoint.exists()
    });
    // The snapshot is exported and the connection to the silent node is pending.
    std::thread::sleep(Duration::from_millis(500));
    running.child().kill().expect("SIGKILL the backfill");
    running.output();
    drop(silent);
    assert!(
        target_tables(&case).await.is_empty(),
        "the schema exists already"
    );
    let cp = json(&checkpoint);
    assert!(
        cp["schema_cql"]
            .as_str()
            .is_some_and(|c| c.contains("CREATE TABLE")),
        "{cp}"
    );

    // `--resume DIR` alone (no --create-schema): the run creates the schema and completes.
    let out = support::remodel(&[
        "backfill",
        "--plan",
        &plan,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--resume",
        &run.to_string_lossy(),
        "--progress",
        "none",
    ]);
    exited(&out, 0);
    assert_eq!(target_tables(&case).await.len(), 4);
    assert_eq!(json(&run.join("summary.json"))["status"], "completed");
    let log = std::fs::read_to_string(run.join("backfill.log")).unwrap();
    assert!(log.contains("applied schema.cql: "), "{log}");
    let stdout = case.verify(&plan, &["--run-dir", &run.to_string_lossy()]);
    assert!(stdout.contains("verify: all 4 tables match"), "{stdout}");
    case.cleanup().await;
}

/// Every file under `dir`, its subfolders' included.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Sends `sig` (`-INT`, …) to `pid`.
fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .map(|s| s.success());
    assert_eq!(ok.ok(), Some(true), "kill {sig} {pid}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_locked_run_folder_is_refused_and_ctrl_c_ends_with_the_command_that_resumes() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_sigint").await;
    let plan = case.rideshare(3000);
    let run = case.dir.join("run");
    // Throttled and cut in small ranges: about 12 s of writing, interrupted after two ranges.
    let extra = [
        "--create-schema",
        "--range-rows",
        "400",
        "--max-rows-per-second",
        "800",
    ];
    let mut running = Running::start(&case.backfill_args(&plan, &run, &extra));
    let pid = running.child().id();
    let checkpoint = run.join("checkpoint.json");
    wait_until(running.child(), 120, "two finished ranges", || {
        checkpoint.exists() && finished(&json(&checkpoint)).values().sum::<usize>() >= 2
    });

    // A second process on the same folder: refused, naming the holder.
    let run_s = run.to_string_lossy().into_owned();
    for extra in [&["--run-dir", &run_s][..], &["--resume", &run_s][..]] {
        let mut args = case.backfill_args(&plan, &run, &[]);
        let at = args.iter().position(|a| a == "--run-dir").unwrap();
        args.drain(at..at + 2);
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = remodel(&args);
        let stderr = exited(&out, 2);
        let line = error_line(&stderr);
        assert!(
            line.contains(&format!(
                "run folder {run_s} is in use by another remodel backfill (pid {pid})"
            )),
            "{line}"
        );
    }

    signal("-INT", pid);
    let t0 = Instant::now();
    let out = running.output();
    let stderr = exited(&out, 130);
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "took {:?} to end",
        t0.elapsed()
    );
    let resume = stderr
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume line:\n{stderr}"))
        .to_string();
    assert!(
        resume.starts_with(&format!("remodel backfill --plan {plan} --source ")),
        "{resume}"
    );
    assert!(resume.contains(&format!("--resume {run_s}")), "{resume}");
    assert!(resume.contains("--max-rows-per-second 800"), "{resume}");
    assert!(!resume.contains(":remodel@"), "the password is in {resume}");
    assert!(
        stderr.contains("the source's password is not repeated"),
        "{stderr}"
    );
    // The checkpoint is whole and what it says is finished is finished.
    let cp = json(&checkpoint);
    let done: usize = finished(&cp).values().sum();
    let total: usize = cp["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ranges"].as_array().unwrap().len())
        .sum();
    assert!(done >= 2 && done < total, "{done} of {total} ranges");
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "stopped");
    assert!(
        summary["error"]
            .as_str()
            .unwrap()
            .starts_with("interrupted"),
        "{summary}"
    );
    // No file of the run folder holds the password (the summary keeps the command too).
    let password = case.password();
    for file in files_under(&run) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains(&format!(":{password}@")),
            "the password is in {}",
            file.display()
        );
    }
    assert_eq!(summary["resume_hint"].as_str(), Some(resume.as_str()));

    // The printed command, as a shell runs it, completes the run; verify is clean.
    let bin = Path::new(env!("CARGO_BIN_EXE_remodel")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", &format!("{resume} --progress none")])
        .current_dir(support::root())
        .env("PATH", path)
        .env("PGPASSWORD", password)
        .output()
        .unwrap();
    exited(&out, 0);
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed");
    for t in summary["tables"].as_array().unwrap() {
        assert_eq!(t["rows_read"], t["rows_written"], "{t}");
    }
    let stdout = case.verify(&plan, &["--run-dir", &run_s]);
    assert!(stdout.contains("verify: all 4 tables match"), "{stdout}");
    case.cleanup().await;
}
