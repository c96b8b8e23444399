//! `remodel export spark` end to end: the exported PySpark job, run with `spark-submit --master
//! local[2]` (PySpark from PyPI, connector and pgjdbc jars from Maven Central, installed and
//! cached by `scripts/spark install`), fills every table of one plan that holds the rideshare
//! example (generated trips), the type round-trip fixture and the embedded one-to-few fixture; a
//! row inserted after the job exported its snapshot is not copied; `remodel verify --run-dir`
//! passes on the Spark-filled keyspace; the rejects are those of `remodel backfill`; and every
//! table holds exactly the rows `remodel backfill` writes from the same data into a second
//! keyspace. One job run for the whole test (Spark starts slowly). Needs `REMODEL_PG_URL`,
//! `REMODEL_CQL_URL` and `scripts/spark install`.

mod support;

use remodel_testdb::scylla::value::Row;
use remodel_testdb::CqlKeyspace;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::live::{json, refs, Case};

/// Generated rideshare trips, as many as the issue asks of CI: five ranges per trips table at
/// [`RANGE_ROWS`].
const TRIPS: u64 = 100_000;

/// The job's rows per JDBC partition.
const RANGE_ROWS: &str = "20000";

/// The plan's inputs: the rideshare example and the two backfill fixtures, side by side.
const SCHEMAS: [&str; 3] = [
    "examples/rideshare/schema.sql",
    "fixtures/backfill/types/schema.sql",
    "fixtures/plan/embed_one_to_few/schema.sql",
];
const QUERIES: [&str; 3] = [
    "examples/rideshare/queries.sql",
    "fixtures/backfill/types/queries.sql",
    "fixtures/plan/embed_one_to_few/queries.sql",
];

/// The type rows tests/backfill_types_live.rs loads too (every type with edge values, six rows CQL
/// cannot hold), then the embed fixture's customers and their addresses.
const TYPE_ROWS: &str = concat!(
    include_str!("../fixtures/backfill/types/rows.sql"),
    r#"
INSERT INTO customers VALUES (1, 'Ann', 'ann@x'), (2, 'Bo', 'bo@x'), (3, 'Čeněk', 'c@x');
INSERT INTO customer_addresses VALUES
  (2, 'home', '1 Main St', 'Springfield'),
  (3, 'home', 'Náměstí 1', 'Praha'), (3, 'work', '2 Office Rd', 'Brno'),
  (3, 'mum''s', '3 Lane', 'Plzeň');
"#
);

/// The trip the test inserts after the job exported its snapshot.
const LATE_TRIP: &str = "00000000-0000-4000-8000-000000001a7e";

/// `remodel plan --schema … --queries … --keyspace KS --out OUT`; the plan.json path.
fn plan_for(keyspace: &str, out: &Path) -> String {
    let out_s = out.to_string_lossy().to_string();
    let mut args = vec!["plan"];
    for s in SCHEMAS {
        args.extend(["--schema", s]);
    }
    for q in QUERIES {
        args.extend(["--queries", q]);
    }
    args.extend(["--keyspace", keyspace, "--out", &out_s]);
    support::remodel_ok(&args);
    out.join("plan.json").to_string_lossy().into_owned()
}

/// Every row of a table, each as its columns' Debug text (its keyspace's name left out), sorted.
async fn table_rows(ks: &CqlKeyspace, table: &str) -> Vec<String> {
    let cql = format!("SELECT * FROM \"{}\".\"{table}\"", ks.name());
    let mut out = Vec::new();
    let mut state = remodel_testdb::scylla::response::PagingState::start();
    loop {
        let (res, next) = ks
            .session()
            .query_single_page(cql.as_str(), &[], state)
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
        let rows = res.into_rows_result().expect("rows");
        for row in rows.rows::<Row>().expect("typed rows") {
            let row = row.expect("row");
            // A UDT value names its keyspace: the two keyspaces' rows compare without it.
            let text = format!("{:?}", row.columns);
            out.push(text.replace(&format!("keyspace: {:?}", ks.name()), "keyspace: _"));
        }
        match next.into_paging_control_flow() {
            std::ops::ControlFlow::Break(()) => break,
            std::ops::ControlFlow::Continue(s) => state = s,
        }
    }
    out.sort();
    out
}

/// The Spark job's per-table counts from its summary.json: table → (read, written, rejected).
fn spark_counts(summary: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    summary["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
            (
                t["name"].as_str().unwrap().to_string(),
                (n("rows_read"), n("rows_written"), n("rows_rejected")),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_exported_spark_job_fills_the_plan_like_remodel_backfill() {
    remodel_testdb::live!(Postgres, Cassandra, Spark);
    let case = Case::new("spark").await;
    support::remodel_ok(&[
        "example-data",
        "rideshare",
        "--source",
        &case.url,
        "--trips",
        &TRIPS.to_string(),
    ]);
    for file in &SCHEMAS[1..] {
        let ddl = std::fs::read_to_string(support::root().join(file)).unwrap();
        case.pg.client().batch_execute(&ddl).await.unwrap();
    }
    case.pg.client().batch_execute(TYPE_ROWS).await.unwrap();
    let plan = plan_for(case.ks.name(), &case.dir.join("plan"));
    let job = case.dir.join("job");
    let job_s = job.to_string_lossy().to_string();
    let out = support::remodel_ok(&[
        "export",
        "spark",
        "--plan",
        &plan,
        "--out",
        &job_s,
        "--source-url",
        &case.url,
        "--target",
        case.ks.node(),
    ]);
    assert!(out.contains("spark job for 6 tables"), "{out}");
    // The password of the URL is in no file of the job folder.
    for f in ["backfill.py", "job.json", "README.md", "log4j2.properties"] {
        let text = std::fs::read_to_string(job.join(f)).unwrap();
        assert!(!text.contains(":remodel@"), "{f} holds the password");
    }

    // A transaction that will insert a trip once the job has exported its snapshot; it holds
    // `trips` exclusively until then, so the job's reads of trips start after its commit.
    let late = remodel_testdb::connect_pg(&case.url).await.unwrap();
    late.batch_execute("BEGIN; LOCK TABLE trips IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();

    let run = case.dir.join("run");
    let t0 = Instant::now();
    let mut child = Command::new("bash")
        .current_dir(support::root())
        .args([
            "-c",
            r#"eval "$(scripts/spark env)" && exec "$REMODEL_SPARK_SUBMIT" --master 'local[2]' \
               --jars "$REMODEL_SPARK_JARS" "$@""#,
            "spark-submit",
            "--driver-java-options",
            &format!(
                "-Dlog4j2.configurationFile={}",
                job.join("log4j2.properties").display()
            ),
        ])
        .arg(job.join("backfill.py"))
        .args([
            "--create-schema",
            &case.dir.join("plan/schema.cql").to_string_lossy(),
            "--out",
            &run.to_string_lossy(),
            "--range-rows",
            RANGE_ROWS,
        ])
        // The password reaches the job through the environment only.
        .env("REMODEL_SOURCE", &case.url)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs spark-submit");
    let stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut stdout = String::new();
    let mut inserted = false;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.expect("job output");
        if line.starts_with("backfill: ") && !inserted {
            late.batch_execute(&format!(
                "INSERT INTO trips SELECT '{}', driver_id, city, started_at, distance_km, fare_usd, status \
                 FROM trips LIMIT 1; COMMIT",
                LATE_TRIP
            ))
            .await
            .unwrap();
            inserted = true;
        }
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let status = child.wait().unwrap();
    let stderr = errors.join().unwrap();
    assert!(
        status.success(),
        "the job failed ({status}):\n{stdout}\n{stderr}"
    );
    assert!(inserted, "the job printed no `backfill:` line:\n{stdout}");
    let spark_secs = t0.elapsed().as_secs_f64();
    assert!(
        !stdout.contains(":remodel@") && !stderr.contains(":remodel@"),
        "the job printed the password:\n{stdout}\n{stderr}"
    );

    // Every row of the snapshot, not the late one; the type fixture's six rejects (one too large).
    let trips = TRIPS;
    let counts = spark_counts(&json(&run.join("summary.json")));
    assert_eq!(counts["trips_by_id"], (trips, trips, 0), "{stdout}");
    assert_eq!(counts["trips_by_driver"], (trips, trips, 0));
    assert_eq!(counts["trips_by_city_date"], (trips, trips, 0));
    assert_eq!(counts["all_types_by_id"], (8, 2, 6));
    assert_eq!(counts["customers_by_id"], (3, 3, 0));
    // Each trips table is read in several ctid ranges (JDBC partitions), all in one snapshot.
    let partitions: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("trips_by_id: reading "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no partition count for trips_by_id:\n{stdout}"));
    assert!(partitions >= 2, "{stdout}");
    let late_rows = case
        .ks
        .session()
        .query_unpaged(
            format!(
                "SELECT trip_id FROM trips_by_id WHERE trip_id = {}",
                LATE_TRIP
            ),
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    assert_eq!(late_rows.rows_num(), 0, "the late trip was copied");

    let rejects = std::fs::read_to_string(run.join("rejects/all_types_by_id.jsonl")).unwrap();
    let mut got: Vec<(String, String, String, String)> = rejects
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (
                v["source_key"]["id"].as_str().unwrap().to_string(),
                s("column"),
                s("kind"),
                s("reason"),
            )
        })
        .collect();
    got.sort();
    let expected = [
        (
            "3",
            "c_numeric",
            "numeric NaN has no CQL decimal equivalent",
        ),
        ("4", "c_tstz", "timestamp 'infinity' has no CQL equivalent"),
        (
            "5",
            "c_inet",
            "10.1.2.3/24 has a netmask, which CQL inet cannot hold (map the column to text)",
        ),
        (
            "6",
            "c_ints",
            "array element is NULL (CQL collections cannot hold null)",
        ),
        (
            "7",
            "c_interval",
            "interval of 1 months, -1 days, 0 µs mixes signs (CQL duration cannot)",
        ),
    ];
    let mut expected: Vec<(String, String, String, String)> = expected
        .iter()
        .map(|(id, col, why)| {
            (
                id.to_string(),
                col.to_string(),
                "value".to_string(),
                why.to_string(),
            )
        })
        .collect();
    // The row over the request limit, counted as the Rust engine counts it.
    expected.push((
        "8".into(),
        String::new(),
        "too_large".into(),
        "row of 17000128 bytes is over the limit of 16777216 bytes (--max-row-bytes)".into(),
    ));
    assert_eq!(got, expected);

    // The late trip leaves the source again: then verify must find the source and the
    // Spark-filled keyspace equal, subtracting the job's rejects.
    case.pg
        .client()
        .batch_execute(&format!(
            "DELETE FROM trips WHERE trip_id = '{}'",
            LATE_TRIP
        ))
        .await
        .unwrap();
    let verified = case.verify(&plan, &["--run-dir", &run.to_string_lossy()]);
    assert!(
        verified.contains("verify: all 6 tables match"),
        "{verified}"
    );
    assert!(
        verified.contains("expected 2 (8 source rows less 6 rejected by the run), stored 2"),
        "{verified}"
    );

    // `remodel backfill` of the same data into a second keyspace writes the same rows.
    let rust_ks = CqlKeyspace::create("spark_rust").await.unwrap();
    let rust_plan = plan_for(rust_ks.name(), &case.dir.join("rust-plan"));
    support::remodel_ok(&refs(&[
        "backfill".to_string(),
        "--plan".into(),
        rust_plan.clone(),
        "--source".into(),
        case.url.clone(),
        "--target".into(),
        rust_ks.node().into(),
        "--run-dir".into(),
        case.dir.join("rust-run").to_string_lossy().into_owned(),
        "--progress".into(),
        "none".into(),
        "--create-schema".into(),
    ]));
    let tables: Vec<String> = counts.keys().cloned().collect();
    for table in &tables {
        let spark = table_rows(&case.ks, table).await;
        let rust = table_rows(&rust_ks, table).await;
        assert!(!rust.is_empty(), "{table}: remodel backfill wrote nothing");
        assert_eq!(spark.len(), rust.len(), "{table}: row counts differ");
        let diff: Vec<(&String, &String)> =
            spark.iter().zip(&rust).filter(|(a, b)| a != b).collect();
        assert!(
            diff.is_empty(),
            "{table}: {} rows differ between the Spark job and remodel backfill, first: {:?}",
            diff.len(),
            diff.first()
        );
    }
    eprintln!("spark job: {spark_secs:.1} s for {} tables", tables.len());
    rust_ks.cleanup().await.unwrap();
    case.cleanup().await;
}
