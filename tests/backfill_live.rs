//! `remodel example-data`, `backfill` and `verify` end to end against real Postgres and Cassandra:
//! 100k rideshare trips into the plan's four tables, verified and spot-checked; a run killed with
//! SIGKILL and resumed without reading its finished ranges again; rows with a NULL key in the
//! rejects file with counts that add up. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_testdb::scylla::value::{CqlDecimal, CqlValue, Row};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::live::{json, refs, wait_until, Case};

/// `summary.json` figures per table: name → (read, written, rejected).
fn table_counts(summary: &Value) -> BTreeMap<String, (u64, u64, u64)> {
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

/// A CQL decimal as Postgres prints a numeric (`12.50`), from its sign-extended bytes.
fn decimal_text(d: &CqlDecimal) -> String {
    let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
    let mut v: i128 = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        -1
    } else {
        0
    };
    for b in bytes {
        v = (v << 8) | *b as i128;
    }
    let digits = format!("{:0width$}", v.unsigned_abs(), width = scale as usize + 1);
    let (int, frac) = digits.split_at(digits.len() - scale as usize);
    let sign = if v < 0 { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rideshare_100k_trips_backfill_verify_and_spot_check() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_rs100k").await;
    let plan = case.rideshare(100_000);
    let run = case.dir.join("run");
    let t0 = Instant::now();
    let stdout = support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema"],
    )));
    eprintln!(
        "backfill of 100k trips took {:.1} s:\n{stdout}",
        t0.elapsed().as_secs_f64()
    );

    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed");
    let counts = table_counts(&summary);
    for t in ["trips_by_driver", "trips_by_id", "trips_by_city_date"] {
        assert_eq!(counts[t], (100_000, 100_000, 0), "{t}");
    }
    assert_eq!(counts["drivers_by_id"], (500, 500, 0));
    for f in ["checkpoint.json", "summary.json", "backfill.log"] {
        let text = std::fs::read_to_string(run.join(f)).unwrap();
        assert!(!text.contains(":remodel@"), "{f} holds the password");
    }

    let stdout = case.verify(&plan, &["--sample", "500"]);
    assert!(stdout.contains("verify: all 4 tables match"), "{stdout}");
    assert!(
        stdout.contains("trips_by_driver: counts ok: expected 100,000, stored 100,000"),
        "{stdout}"
    );

    // The newest 10 trips of one driver (q1 of the example: the table holds what q1 reads), the
    // CQL read the plan maps, against the Postgres query.
    let pg_rows = case
        .pg
        .client()
        .query(
            "SELECT trip_id::text, (extract(epoch FROM started_at) * 1000000)::int8, fare_usd::text, city \
             FROM trips WHERE driver_id = 'drv_7' ORDER BY started_at DESC LIMIT 10",
            &[],
        )
        .await
        .unwrap();
    let expected: Vec<(String, i64, String, String)> = pg_rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    assert_eq!(expected.len(), 10);
    let rows = case
        .ks
        .session()
        .query_unpaged(
            "SELECT trip_id, started_at, fare_usd, city FROM trips_by_driver WHERE driver_id = 'drv_7' LIMIT 10",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let got: Vec<(String, i64, String, String)> = rows
        .rows::<Row>()
        .unwrap()
        .map(|r| {
            let c = r.unwrap().columns;
            match (&c[0], &c[1], &c[2], &c[3]) {
                (
                    Some(CqlValue::Uuid(id)),
                    Some(CqlValue::BigInt(micros)),
                    Some(CqlValue::Decimal(fare)),
                    Some(CqlValue::Text(city)),
                ) => (id.to_string(), *micros, decimal_text(fare), city.clone()),
                other => panic!("unexpected row {other:?}"),
            }
        })
        .collect();
    assert_eq!(got, expected);
    case.cleanup().await;
}

/// Finished ranges per table in a checkpoint: table → {range index → rows read}.
fn finished(checkpoint: &Value) -> BTreeMap<String, BTreeMap<usize, u64>> {
    checkpoint["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let done = t["finished"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.parse().unwrap(), v["read"].as_u64().unwrap()))
                .collect();
            (t["name"].as_str().unwrap().to_string(), done)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_run_resumes_without_reading_finished_ranges_again() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_resume").await;
    let plan = case.rideshare(30_000);
    let run = case.dir.join("run");
    // Throttled and cut in small ranges, so that the kill lands with some ranges done and most not.
    let extra = [
        "--create-schema",
        "--range-rows",
        "1500",
        "--max-rows-per-second",
        "5000",
    ];
    let mut child = support::command()
        .args(case.backfill_args(&plan, &run, &extra))
        .spawn()
        .expect("start remodel backfill");
    let checkpoint = run.join("checkpoint.json");
    wait_until(&mut child, 120, "three finished ranges", || {
        checkpoint.exists()
            && finished(&json(&checkpoint))
                .values()
                .map(BTreeMap::len)
                .sum::<usize>()
                >= 3
    });
    // A random point after the third finished range.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::thread::sleep(Duration::from_millis(u64::from(nanos % 1500)));
    child.kill().expect("SIGKILL the backfill");
    child.wait().unwrap();
    let before = finished(&json(&checkpoint));
    let ranges_total: usize = json(&checkpoint)["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ranges"].as_array().unwrap().len())
        .sum();
    let done_before: usize = before.values().map(BTreeMap::len).sum();
    assert!(
        done_before < ranges_total,
        "killed after the last range: nothing left to resume"
    );

    let run_s = run.to_string_lossy();
    let stdout = support::remodel_ok(&[
        "backfill",
        "--plan",
        &plan,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--resume",
        &run_s,
        "--progress",
        "none",
    ]);
    assert!(
        stdout.contains("ranges skipped (finished earlier)"),
        "{stdout}"
    );
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["attempt"], 2);
    let totals = BTreeMap::from([
        ("trips_by_driver", 30_000u64),
        ("trips_by_id", 30_000),
        ("trips_by_city_date", 30_000),
        ("drivers_by_id", 150),
    ]);
    for t in summary["tables"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let old = before.get(name).cloned().unwrap_or_default();
        let old_rows: u64 = old.values().sum();
        assert_eq!(
            t["ranges_skipped"].as_u64(),
            Some(old.len() as u64),
            "{name}"
        );
        assert_eq!(t["rows_read"].as_u64(), Some(totals[name]), "{name}");
        assert_eq!(t["rows_written"].as_u64(), Some(totals[name]), "{name}");
        assert_eq!(
            t["rows_read_this_run"].as_u64(),
            Some(totals[name] - old_rows),
            "{name}: finished ranges read again"
        );
    }
    // The resumed attempt's log names every range it read: none finished before the kill.
    let log = std::fs::read_to_string(run.join("backfill.log")).unwrap();
    let second = log
        .split("attempt 2:")
        .nth(1)
        .expect("the resume logged its attempt");
    let mut reread = BTreeSet::new();
    for line in second.lines() {
        let Some((table, rest)) = line.split_once(": reading range ") else {
            continue;
        };
        let table = table.rsplit("] ").next().unwrap().trim();
        let idx: usize = rest.split_whitespace().next().unwrap().parse().unwrap();
        if before.get(table).is_some_and(|d| d.contains_key(&idx)) {
            reread.insert(format!("{table}#{idx}"));
        }
    }
    assert!(reread.is_empty(), "finished ranges read again: {reread:?}");
    let stdout = case.verify(&plan, &["--sample", "300"]);
    assert!(stdout.contains("verify: all 4 tables match"), "{stdout}");
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn null_key_rows_are_left_out_or_stored_and_counts_add_up() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_nullkeys").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/backfill/events/schema.sql"))
            .unwrap();
    case.pg.client().batch_execute(&schema).await.unwrap();
    // 37 rows without a device (partition key), 5 without a time, 3 without a batch and 4
    // without a label. Every read binds the device, which no NULL equals: the plan leaves those
    // rows out (its source query keeps `device IS NOT NULL`). One lists a device's events by
    // time, NULL times among them (Postgres returns them first, DESC), one by batch (an integer:
    // NULLs last, ASC): both store NULL as a sentinel bigint, where SQL sorts it. The third lists
    // them by label, a text no key form holds NULL in: it is sorted on the client from the table
    // by batch, which stores the rows without a label too. Three readings are NaN, which CQL's
    // decimal cannot hold: those rows go to each table's rejects file, with the reason.
    case.pg
        .client()
        .batch_execute(
            "INSERT INTO events SELECT i, CASE WHEN i % 27 = 0 THEN NULL ELSE 'dev-' || i % 7 END, \
             CASE WHEN i % 200 = 1 THEN NULL ELSE timestamptz '2024-05-01 00:00:00+00' + i * interval '1 minute' END, \
             CASE WHEN i % 300 = 5 THEN NULL ELSE i % 11 END, \
             CASE WHEN i % 250 = 3 THEN NULL ELSE 'label-' || i % 13 END, \
             CASE WHEN i % 400 = 7 THEN 'NaN' ELSE i / 8.0 END FROM generate_series(1, 1000) i",
        )
        .await
        .unwrap();
    let plan = case.plan("fixtures/backfill/events");
    let planned = json(std::path::Path::new(&plan));
    for t in planned["design"]["tables"].as_array().unwrap() {
        let source = t["source_sql"].as_str().unwrap_or_default();
        assert!(source.ends_with("WHERE t0.device IS NOT NULL"), "{source}");
        let keys = t["clustering"].as_array().unwrap();
        assert!(keys.iter().all(|k| k["column"] != "label"), "{t}");
    }
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema"],
    )));
    let summary = json(&run.join("summary.json"));
    let counts = table_counts(&summary);
    assert_eq!(counts.len(), 2, "{counts:?}");
    for table in ["events_by_device", "events_by_device_batch"] {
        assert_eq!(counts[table], (963, 960, 3), "{table}");
        let rejects = std::fs::read_to_string(run.join(format!("rejects/{table}.jsonl"))).unwrap();
        let ids: BTreeSet<u64> = rejects
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|l| {
                assert!(l["reason"].as_str().unwrap().contains("NaN"), "{l}");
                l["source_key"]["id"].as_str().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(ids, BTreeSet::from([7, 407, 807]), "{table}");
    }
    // The NULL times come back first in a device's listing, as Postgres returns them; the NULL
    // batch (id 5, on dev-5) last in its device's listing by batch.
    let session = case.ks.session();
    let first_row = |cql: &'static str| {
        let session = &session;
        async move {
            session
                .query_unpaged(cql, &[])
                .await
                .unwrap()
                .into_rows_result()
                .unwrap()
                .first_row::<(i64, i64)>()
                .unwrap()
        }
    };
    let first =
        first_row("SELECT at, id FROM events_by_device WHERE device = 'dev-1' LIMIT 1").await;
    assert_eq!(first, (i64::MAX, 1));
    let last = first_row(
        "SELECT \"batch\", id FROM events_by_device_batch WHERE device = 'dev-5' ORDER BY \"batch\" DESC LIMIT 1",
    )
    .await;
    assert_eq!(last, (i64::MAX, 5));
    // The rows without a label are stored (and compared) like the others; the three NaN rows
    // are not, and verify says so rather than calling the tables equal.
    let verify = || {
        let out = case.verify_output(&plan, &[]);
        (out.status.code(), support::text(&out.stdout))
    };
    let (status, stdout) = verify();
    assert_eq!(status, Some(1), "{stdout}");
    for table in ["events_by_device", "events_by_device_batch"] {
        assert!(
            stdout.contains(&format!("{table}: counts DIFFER: expected 963, stored 960")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("{table}: sample of 960 rows: all match (3 more sampled rows cannot be stored and were skipped)")),
            "{stdout}"
        );
    }

    // A changed value and a lost row: verify fails and shows both sides.
    session
        .query_unpaged(
            "UPDATE events_by_device SET reading = 0 WHERE device = 'dev-1' AND at = 1714524600000000 AND id = 50",
            &[],
        )
        .await
        .unwrap();
    session
        .query_unpaged(
            "DELETE FROM events_by_device WHERE device = 'dev-2' AND at = 1714524660000000 AND id = 51",
            &[],
        )
        .await
        .unwrap();
    let (status, stdout) = verify();
    assert_eq!(status, Some(1), "{stdout}");
    assert!(
        stdout.contains("events_by_device: counts DIFFER: expected 963, stored 959"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "[device=\"dev-1\", at=1714524600000000, id=50] reading: source 6.250 | target 0"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("[device=\"dev-2\", at=1714524660000000, id=51] missing in the target"),
        "{stdout}"
    );

    // --max-errors: 5 rejects stop a run allowed 2 (exit 1, resumable) but not one allowed 5%.
    let strict = case.dir.join("strict");
    let out = support::remodel(&refs(&case.backfill_args(
        &plan,
        &strict,
        &["--max-errors", "2"],
    )));
    assert_eq!(out.status.code(), Some(1), "{}", support::text(&out.stderr));
    let stderr = support::text(&out.stderr);
    assert!(stderr.contains("more than --max-errors 2"), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    assert_eq!(json(&strict.join("summary.json"))["status"], "stopped");
    let lenient = case.dir.join("lenient");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &lenient,
        &["--max-errors", "5%"],
    )));
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bucket_column_the_source_sql_lacks_is_computed_from_its_source() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_bucket").await;
    let plan = case.rideshare(3000);
    // A hand-edited plan whose source_sql does not compute trip_date (day of started_at, UTC).
    let text = std::fs::read_to_string(&plan).unwrap();
    let bucket = "(t0.started_at AT TIME ZONE 'UTC')::date AS trip_date, ";
    assert!(
        text.contains(bucket),
        "the designer's bucket expression changed: {text}"
    );
    std::fs::write(&plan, text.replace(bucket, "")).unwrap();
    let run = case.dir.join("run");
    let extra = ["--create-schema", "--tables", "trips_by_city_date"];
    support::remodel_ok(&refs(&case.backfill_args(&plan, &run, &extra)));
    let pg: i64 = case
        .pg
        .client()
        .query_one(
            "SELECT count(*) FROM trips WHERE city = 'nyc' \
             AND (started_at AT TIME ZONE 'UTC')::date = '2024-03-01'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let rows = case
        .ks
        .session()
        .query_unpaged(
            "SELECT count(*) FROM trips_by_city_date WHERE city = 'nyc' AND trip_date = '2024-03-01'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let (cql,): (i64,) = rows.single_row().unwrap();
    assert!(pg > 0);
    assert_eq!(cql, pg);
    let stdout = case.verify(&plan, &["--tables", "trips_by_city_date"]);
    assert!(stdout.contains("verify: all 1 tables match"), "{stdout}");
    case.cleanup().await;
}
