//! `remodel sync` (issue 22) against real Postgres and Cassandra: rideshare with a few thousand
//! trips; a writer inserts, updates (a status, a key-changing start time, a driver's rating, a
//! city's country copied into drivers_by_id) and deletes while sync backfills inside the slot's
//! snapshot and streams; after `--until-caught-up`, `verify` and `replay --existing` find no
//! difference. Then `sync --follow` is killed with SIGKILL mid-stream and run again: still no
//! difference. The slot and publication are dropped whatever happens (a forgotten slot holds
//! WAL on the shared Postgres).

mod support;

use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::live::{json, Case};

/// Trips loaded: enough for the backfill to overlap the writer, small for CI time.
const TRIPS: u64 = 3_000;

/// Drops the test's slot and publication when the test ends, passed or not.
struct SlotGuard {
    url: String,
    slot: String,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let sql = format!(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{0}'; DROP PUBLICATION IF EXISTS {0};",
            self.slot
        );
        let url = self.url.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async {
                if let Ok(c) = remodel_testdb::connect_pg(&url).await {
                    let _ = c.batch_execute(&sql).await;
                }
            })
        })
        .join();
    }
}

fn sync_args<'a>(case: &'a Case, plan: &'a str, run: &'a str, slot: &'a str) -> Vec<&'a str> {
    vec![
        "sync",
        "--plan",
        plan,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--run-dir",
        run,
        "--slot",
        slot,
        "--progress",
        "lines",
    ]
}

fn shown(out: &Output) -> String {
    format!(
        "{}\n{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    )
}

/// One round of the writer: every kind of change the sync must carry, on random rows.
async fn write_round(
    c: &remodel_testdb::tokio_postgres::Client,
    i: u64,
) -> Result<(), remodel_testdb::tokio_postgres::Error> {
    let id = format!("00000000-0000-4000-8000-{i:012}");
    c.execute(
        "INSERT INTO trips VALUES ($1::text::uuid, 'drv_' || (1 + $2::int8 % 15), 'sf', \
         timestamptz '2025-03-01 00:00:00+00' + $2::int8 * interval '1 minute', 3.5, 9.75, 'completed')",
        &[&id, &(i as i64)],
    )
    .await?;
    // Another transaction: a status change, a key-changing start time of an older trip, a
    // driver's rating, and a deletion.
    c.batch_execute(&format!(
        "BEGIN; \
         UPDATE trips SET status = 'disputed' WHERE trip_id = '{id}'; \
         UPDATE trips SET started_at = started_at + interval '3 days', city = 'london' \
           WHERE trip_id = (SELECT trip_id FROM trips ORDER BY md5(trip_id::text || {i}) LIMIT 1); \
         UPDATE drivers SET rating = round((3 + random() * 2)::numeric, 2) WHERE driver_id = 'drv_{d}'; \
         DELETE FROM trips WHERE trip_id = (SELECT trip_id FROM trips ORDER BY md5(trip_id::text || 'x{i}') LIMIT 1); \
         COMMIT",
        d = 1 + i % 15
    ))
    .await?;
    if i.is_multiple_of(10) {
        c.execute(
            "UPDATE cities SET country = 'F' || $1::int8 WHERE city = 'paris'",
            &[&(i as i64)],
        )
        .await?;
    }
    Ok(())
}

/// The row changes rounds `from..to` of [`write_round`] make in the tables the plan reads: an
/// insert; a status, a start time, a rating and a deletion; every tenth round a country.
fn round_changes(from: u64, to: u64) -> u64 {
    (from..to)
        .map(|i| 5 + u64::from(i.is_multiple_of(10)))
        .sum()
}

/// Writes rounds until `stop`; returns the rounds written.
fn writer(
    url: String,
    stop: Arc<AtomicBool>,
    next: Arc<AtomicU64>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(async {
            let c = remodel_testdb::connect_pg(&url)
                .await
                .expect("writer connects");
            // Asynchronous commit, whatever the server's setting: a commit can be visible before
            // pg_current_wal_lsn() (the WAL written) reaches it; catching up must not stop there.
            c.batch_execute("SET synchronous_commit = off")
                .await
                .expect("synchronous_commit");
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                write_round(&c, i).await.expect("writer round");
                n += 1;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            n
        })
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_follows_writes_and_survives_kill_9_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let started = Instant::now();
    let case = Case::new("sync_live").await;
    let plan = case.rideshare(TRIPS);
    let slot = format!("remodel_sync_t{}", std::process::id());
    let _guard = SlotGuard {
        url: case.url.clone(),
        slot: slot.clone(),
    };
    let run = case.dir.join("sync").to_string_lossy().to_string();

    // trips' target keys hold columns outside its primary key: DEFAULT identity is refused,
    // with one line naming the table and why, before anything is created.
    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let err = support::text(&out.stderr);
    assert!(
        err.contains("check: trips has REPLICA IDENTITY DEFAULT; it needs FULL because trips_by_driver is keyed by driver_id, started_at (outside the primary key)"),
        "{err}"
    );
    assert!(!std::path::Path::new(&run).join("sync.json").exists());
    case.pg
        .client()
        .batch_execute("ALTER TABLE trips REPLICA IDENTITY FULL")
        .await
        .expect("replica identity");

    // Backfill and stream while the writer runs.
    let stop = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicU64::new(1));
    let w = writer(case.url.clone(), stop.clone(), next.clone());
    std::thread::sleep(Duration::from_millis(300));
    let mut args = sync_args(&case, &plan, &run, &slot);
    args.extend(["--create-schema", "--until-caught-up"]);
    let out = support::remodel(&args);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = shown(&out);
    for line in [
        "check: wal_level = logical",
        "has REPLICATION",
        "check: trips has REPLICA IDENTITY FULL",
        "check: drivers has REPLICA IDENTITY DEFAULT (its primary key), enough",
        "WARNING: replication slot",
        "inside the slot's snapshot",
        "caught up:",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // More writes after the first catch-up, then stop the writer and catch up again.
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let rounds = w.join().expect("writer");
    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    // A change of a copied column after every driver's own change is applied: only the copy's
    // maintenance (the drivers its foreign key links) can bring it to drivers_by_id.
    case.pg
        .client()
        .batch_execute("UPDATE cities SET country = 'ZZ' WHERE city = 'paris'")
        .await
        .expect("country");
    let args = sync_args(&case, &plan, &run, &slot);
    let out = support::remodel(&args);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let state = json(&std::path::Path::new(&run).join("sync.json"));
    assert!(state["changes"].as_u64().unwrap_or(0) > rounds, "{state}");
    assert_no_differences(&case, &plan, "first");

    // kill -9 while following a writer, then the same command again.
    let stop = Arc::new(AtomicBool::new(false));
    let first_round = next.load(Ordering::Relaxed);
    let w = writer(case.url.clone(), stop.clone(), next.clone());
    let mut args = sync_args(&case, &plan, &run, &slot);
    args.push("--follow");
    let mut child = support::command()
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sync --follow");
    let before = state["transactions"].as_u64().unwrap_or(0);
    support::live::wait_until(&mut child, 30, "sync applies transactions", || {
        let s = json(&std::path::Path::new(&run).join("sync.json"));
        s["transactions"].as_u64().unwrap_or(0) > before + 20
    });
    Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .expect("kill -9");
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    w.join().expect("writer");
    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(shown(&out).contains("resuming: slot"), "{}", shown(&out));
    // Every change the writer made is applied once caught up, whatever the kill interrupted.
    let resumed = json(&std::path::Path::new(&run).join("sync.json"));
    let written = round_changes(first_round, next.load(Ordering::Relaxed));
    assert_eq!(
        resumed["changes"].as_u64().unwrap_or(0) - state["changes"].as_u64().unwrap_or(0),
        written,
        "row changes applied since the first catch-up vs made by the writer: {resumed}\n{}",
        shown(&out)
    );
    assert_no_differences(&case, &plan, "after kill -9");

    // --finish drops the slot and the publication.
    let out = support::remodel(&["sync", "--finish", "--source", &case.url, "--run-dir", &run]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let left = case
        .pg
        .client()
        .query(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1",
            &[&slot],
        )
        .await
        .expect("slots");
    assert!(left.is_empty(), "the slot is still there");
    eprintln!("sync live test: {:.1} s", started.elapsed().as_secs_f64());
    case.cleanup().await;
}

/// `verify` passes, and `replay --existing` of every read finds no difference.
fn assert_no_differences(case: &Case, plan: &str, when: &str) {
    let verified = case.verify(plan, &[]);
    assert!(!verified.is_empty(), "{when}: verify printed nothing");
    let designed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plan).expect("plan")).expect("plan.json");
    let q2 = support::buckets::every_bucket(
        &designed,
        "q2",
        "trip_date",
        (2, 3),
        serde_json::json!({
            "sort": [{"by": {"kind": "column", "column": {"table": "trips", "column": "started_at"}},
                      "desc": true, "nulls_first": true}],
            "limit": {"kind": "param", "n": 4}
        }),
    );
    let (status, shown, report) = case.replay_existing(
        &q2,
        &format!("replay-{}", when.replace(' ', "-")),
        &["--samples", "20"],
    );
    assert_eq!(status, Some(0), "{when}: {shown}");
    for p in report["patterns"].as_array().expect("patterns") {
        assert_eq!(
            p["mismatches"].as_array().map(Vec::len),
            Some(0),
            "{when}: {p}"
        );
    }
}
