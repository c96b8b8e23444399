//! End to end: the `remodel plan` binary on the rideshare example and on unusable input.

use remodel_model::Plan;
use std::path::{Path, PathBuf};
use std::process::Output;

mod support;

use support::command as bin;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("remodel-cli-plan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `remodel ARGS… PATH` in the repository root.
fn remodel_on(args: &[&str], path: &Path) -> Output {
    bin().args(args).arg(path).output().expect("run remodel")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn plan_rideshare_writes_plan_and_cql_deterministically() {
    let out = scratch("rideshare");
    let run = remodel_on(&["plan", "examples/rideshare", "--out"], &out);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("reads served single-partition: 4/4"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "trips_by_city_date  ((city, trip_date=day(started_at)), started_at DESC, trip_id)"
        ),
        "{stdout}"
    );
    // Each table holds what its reads need: only trips_by_id holds the status.
    assert!(
        stdout.contains("write q6: 1 statement -> trips_by_id\n"),
        "{stdout}"
    );

    let json = read(&out.join("plan.json"));
    let cql = read(&out.join("schema.cql"));
    let plan: Plan = serde_json::from_str(&json).expect("plan.json is a Plan");
    assert_eq!(plan.design.keyspace.name, "rideshare");
    assert_eq!(
        serde_json::to_string_pretty(&plan).expect("serialize") + "\n",
        json,
        "plan.json round-trips byte for byte"
    );
    assert!(cql.contains("CREATE TABLE IF NOT EXISTS rideshare.trips_by_driver ("));
    assert!(cql.contains("PRIMARY KEY ((city, trip_date), started_at, trip_id)"));
    // What the application will run — every read, lookup, write and read before write of
    // plan.json — never needs ALLOW FILTERING (the CREATE script could not hold it anyway).
    let emitted = plan.design.statements();
    assert!(emitted.len() >= 4 + 3, "{emitted:?}");
    for (what, c) in &emitted {
        assert!(
            !c.to_ascii_uppercase().contains("ALLOW FILTERING"),
            "{what}: {c}"
        );
    }

    // Same inputs, same bytes.
    let again = remodel_on(&["plan", "examples/rideshare", "--out"], &out);
    assert!(again.status.success());
    assert_eq!(read(&out.join("plan.json")), json);
    assert_eq!(read(&out.join("schema.cql")), cql);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn plan_with_explicit_files_and_options() {
    let out = scratch("explicit");
    let run = remodel_on(
        &[
            "plan",
            "--schema",
            "fixtures/corpora/twitter/ddl-postgres.sql",
            "--queries",
            "fixtures/corpora/twitter/queries.sql",
            "--keyspace",
            "tw",
            "--replication",
            "dc1=3,dc2=2",
            "--out",
        ],
        &out,
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let cql = read(&out.join("schema.cql"));
    assert!(cql.contains("CREATE KEYSPACE IF NOT EXISTS tw WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2};"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn unusable_input_exits_2_with_one_line() {
    let out = scratch("bad");
    for (args, with_out) in [
        (vec!["plan", "no/such/dir"], true),
        (
            vec![
                "plan",
                "--schema",
                "no_such.sql",
                "--queries",
                "examples/rideshare/queries.sql",
            ],
            true,
        ),
        (
            vec![
                "plan",
                "--schema",
                "examples/rideshare/schema.sql",
                "--queries",
                "examples/rideshare/queries.sql",
            ],
            false,
        ),
        (
            vec!["plan", "examples/rideshare", "--replication", "zero"],
            true,
        ),
    ] {
        let mut cmd = bin();
        cmd.args(&args);
        if with_out {
            cmd.arg("--out").arg(&out);
        }
        let run = cmd.output().expect("run");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("remodel: error: "), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "{args:?}: one line: {stderr}"
        );
        assert!(!out.join("plan.json").exists(), "{args:?} wrote a plan");
    }
    // An input with no statements is unusable too.
    let dir = scratch("empty-in");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("schema.sql"),
        "CREATE TABLE t (id int PRIMARY KEY);\n",
    )
    .expect("write");
    std::fs::write(dir.join("queries.sql"), "-- nothing here\n").expect("write");
    let run = remodel_on(&["plan"], &dir);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no SELECT/INSERT/UPDATE/DELETE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plan_dir_defaults_to_dir_plan_and_the_folder_keyspace() {
    let dir = scratch("My-App");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for f in ["schema.sql", "queries.sql"] {
        std::fs::copy(Path::new("examples/rideshare").join(f), dir.join(f)).expect("copy");
    }
    // The output goes to out/<keyspace> where the command runs, never into the input folder.
    let cwd = dir.join("elsewhere");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let run = bin()
        .current_dir(&cwd)
        .arg("plan")
        .arg(&dir)
        .output()
        .expect("run");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let expected = format!("remodel_cli_plan_{}_my_app", std::process::id());
    let out = cwd.join("out").join(&expected);
    let plan: Plan = serde_json::from_str(&read(&out.join("plan.json"))).expect("plan");
    assert_eq!(plan.design.keyspace.name, expected);
    assert!(!dir.join("plan").exists());
    assert!(read(&out.join("schema.cql")).contains(&format!(
        "CREATE TABLE IF NOT EXISTS {expected}.trips_by_driver"
    )));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plans rideshare into a scratch folder and returns the plan.json path.
fn rideshare_plan(name: &str) -> PathBuf {
    let out = scratch(name);
    let run = remodel_on(
        &["plan", "examples/rideshare", "--no-report", "--out"],
        &out,
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    out.join("plan.json")
}

#[test]
fn plan_check_passes_a_real_plan_and_names_what_a_hand_edit_broke() {
    let plan_path = rideshare_plan("check");
    let ok = remodel_on(&["plan", "--check"], &plan_path);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr)
    );
    // Remove the trip INSERT's write of a table that keeps a copy of the trip.
    let mut plan: serde_json::Value = serde_json::from_str(&read(&plan_path)).expect("JSON");
    let writes = plan["design"]["writes"].as_array_mut().expect("writes");
    let insert = writes
        .iter_mut()
        .find(|w| w["targets"].as_array().is_some_and(|t| t.len() > 1))
        .expect("a write with several targets");
    let dropped = insert["targets"][0]["table"]
        .as_str()
        .expect("table")
        .to_string();
    insert["targets"].as_array_mut().expect("targets").remove(0);
    let broken = plan_path.with_file_name("broken.json");
    std::fs::write(&broken, serde_json::to_string_pretty(&plan).expect("JSON")).expect("write");
    let run = remodel_on(&["plan", "--check"], &broken);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("plan check (f)") && stdout.contains(&dropped),
        "{stdout}"
    );
    // A source query reading a column its table lacks: the backfill would fail on it.
    let mut bad_source = plan.clone();
    let table = bad_source["design"]["tables"][0]["name"]
        .as_str()
        .expect("name")
        .to_string();
    let value = bad_source["design"]["tables"][0]["source"]["columns"]
        .as_array_mut()
        .expect("source columns")
        .iter_mut()
        .map(|c| &mut c["value"])
        .find(|v| v["kind"] == "column")
        .expect("a column value");
    value["column"] = serde_json::json!("no_such_column");
    std::fs::write(
        &broken,
        serde_json::to_string_pretty(&bad_source).expect("JSON"),
    )
    .expect("write");
    let run = remodel_on(&["plan", "--check"], &broken);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "plan check (p): table {table}: its source query cannot fill it: it reads `no_such_column`"
        )),
        "{stdout}"
    );
    // A value the schema does not allow: its JSON path.
    plan["design"]["queries"][0]["binds"][0]["value"] = serde_json::json!({"from": "guess"});
    std::fs::write(&broken, serde_json::to_string_pretty(&plan).expect("JSON")).expect("write");
    let run = remodel_on(&["plan", "--check"], &broken);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("/design/queries/0/binds/0/value"),
        "{stdout}"
    );
}

#[test]
fn an_older_format_plan_is_refused_with_one_line_by_every_reader() {
    let plan_path = rideshare_plan("format2");
    let mut plan: serde_json::Value = serde_json::from_str(&read(&plan_path)).expect("JSON");
    // A plan of format 2 as remodel wrote it: no typed source query, no bind types.
    plan["format_version"] = serde_json::json!(2);
    for t in plan["design"]["tables"].as_array_mut().expect("tables") {
        t.as_object_mut().expect("table").remove("source");
    }
    for q in plan["design"]["queries"].as_array_mut().expect("queries") {
        for b in q["binds"].as_array_mut().into_iter().flatten() {
            b.as_object_mut().expect("bind").remove("type");
        }
    }
    let old = plan_path.with_file_name("old.json");
    std::fs::write(&old, serde_json::to_string_pretty(&plan).expect("JSON")).expect("write");
    let old_s = old.to_string_lossy().to_string();
    let report_out = plan_path.with_file_name("report-old");
    let report_out = report_out.to_string_lossy().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["plan", "--check", &old_s],
        vec!["report", "--plan", &old_s, "--out", &report_out],
        vec![
            "backfill",
            "--plan",
            &old_s,
            "--source",
            "postgres://u@127.0.0.1:1/db",
            "--target",
            "127.0.0.1:1",
        ],
        vec!["export", "spark", "--plan", &old_s, "--out", &report_out],
        vec![
            "replay",
            "--plan",
            &old_s,
            "--source",
            "postgres://u@127.0.0.1:1/db",
            "--target",
            "127.0.0.1:1",
        ],
    ];
    for args in cases {
        let run = bin().args(&args).output().expect("run remodel");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        let want =
            format!("{old_s} is format 2 (written by an older remodel): run remodel plan again");
        assert!(
            stderr.lines().filter(|l| !l.trim().is_empty()).count() == 1 && stderr.contains(&want),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn plan_schema_out_writes_the_json_schema() {
    let out = scratch("schema-out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let file = out.join("plan.schema.json");
    let run = remodel_on(&["plan", "--schema-out"], &file);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let schema: serde_json::Value = serde_json::from_str(&read(&file)).expect("JSON");
    assert_eq!(schema["title"], "Plan", "{schema:#}");
    assert!(schema["$defs"]["BindValue"].is_object());
}

/// `remodel plan examples/rideshare` with `extra` arguments in a scratch folder: its exit code,
/// stderr and, when it wrote one, the plan's `semantics.time_zone`.
fn plan_zone(name: &str, extra: &[&str]) -> (Option<i32>, String, Option<String>) {
    let out = scratch(name);
    let run = bin()
        .args(["plan", "examples/rideshare", "--no-report", "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .expect("run remodel");
    let zone = std::fs::read_to_string(out.join("plan.json"))
        .ok()
        .map(|j| {
            let plan: Plan = serde_json::from_str(&j).expect("plan.json is a Plan");
            plan.semantics.time_zone
        });
    let _ = std::fs::remove_dir_all(&out);
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
        zone,
    )
}

#[test]
fn plan_timezone_is_checked_spelled_as_the_tz_database_and_recorded() {
    let (code, err, zone) = plan_zone("tz-default", &[]);
    assert_eq!((code, zone.as_deref()), (Some(0), Some("UTC")), "{err}");
    let (code, err, zone) = plan_zone("tz-flag", &["--timezone", "europe/berlin"]);
    assert_eq!(
        (code, zone.as_deref()),
        (Some(0), Some("Europe/Berlin")),
        "{err}"
    );
    // A POSIX zone reads its offset west of Greenwich in Postgres: refused with one line.
    let (code, err, zone) = plan_zone("tz-posix", &["--timezone", "UTC+3"]);
    assert_eq!((code, zone), (Some(2), None), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--timezone: UTC+3 is not a time zone"),
        "{err}"
    );

    // The configuration's zone, from either table; two different zones are refused.
    let dir = scratch("tz-config");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write config");
        p.to_string_lossy().into_owned()
    };
    let design = config("design.toml", "[design]\ntime_zone = \"europe/paris\"\n");
    let (code, err, zone) = plan_zone("tz-design", &["--config", &design]);
    assert_eq!(
        (code, zone.as_deref()),
        (Some(0), Some("Europe/Paris")),
        "{err}"
    );
    let both = config(
        "both.toml",
        "[analyze]\ntime_zone = \"Europe/Berlin\"\n[design]\ntime_zone = \"Europe/Paris\"\n",
    );
    let (code, err, _) = plan_zone("tz-both", &["--config", &both]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("differ"), "{err}");
    // The flag wins over the configuration.
    let (code, err, zone) = plan_zone("tz-over", &["--config", &design, "--timezone", "UTC"]);
    assert_eq!((code, zone.as_deref()), (Some(0), Some("UTC")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
