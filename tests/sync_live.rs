//! `remodel sync` (issue 22) against real Postgres and Cassandra, at the size: rideshare
//! with 100,000 trips; a writer inserts, updates (a status; a key-changing start time, city and
//! driver, which moves the trip's rows in all three trip tables; a driver's rating; a city's
//! country, copied into drivers_by_id) and deletes at a steady pace while `sync --follow`
//! backfills inside the slot's snapshot and streams. The sync is killed with SIGKILL twice at
//! random points mid-stream and started again; after `--until-caught-up`, the row changes applied
//! equal those the writer committed, `verify` and `replay --existing` find no difference, and the
//! three trip tables equal `trips` row for row. Then a DDL change of a plan table stops the sync
//! with the LSN and the table. The slot and publication are dropped whatever happens.

mod support;

use std::process::{Child, Command};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::live::Case;
use support::sync::{
    assert_no_differences, assert_trip_tables_equal, follow, shown, state, sync_args, SlotGuard,
    Writer,
};

/// Trips loaded: the figure.
const TRIPS: u64 = 100_000;
/// Drivers `example-data` makes for them (one per 200 trips).
const DRIVERS: u64 = TRIPS / 200;
/// The writer's pace: a round (2 or 3 transactions, 5 or 6 row changes) every 40 ms at most.
const PACE: Duration = Duration::from_millis(40);

/// Waits until the streaming of `child` has applied `more` transactions past `from`, then kills
/// it with SIGKILL; returns the transactions recorded when it died.
fn kill_9_after(child: &mut Child, run: &str, from: u64, more: u64, what: &str) -> u64 {
    support::live::wait_until(child, 600, what, || {
        let s = std::fs::read_to_string(std::path::Path::new(run).join("sync.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        s.is_some_and(|s| s["transactions"].as_u64().unwrap_or(0) >= from + more)
    });
    Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .expect("kill -9");
    let _ = child.wait();
    state(run)["transactions"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_follows_writes_through_two_kill_9_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let started = Instant::now();
    let case = Case::new("sync_live").await;
    let plan = case.rideshare(TRIPS);
    eprintln!(
        "sync live: {TRIPS} trips loaded and planned in {:.1} s",
        started.elapsed().as_secs_f64()
    );
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

    // Random kill points, shown so that a failure can be replayed.
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(7);
    let (first, second) = (10 + seed % 300, 10 + (seed / 300) % 300);
    eprintln!("sync live: kill -9 after {first}, then {second} more transactions");

    // The writer starts once the slot exists (its consistent point is in sync.json), so that
    // every change it commits is streamed, and counted.
    let mut child = follow(&case, &plan, &run, &slot, &["--create-schema"]);
    support::live::wait_until(&mut child, 120, "the slot is created", || {
        std::path::Path::new(&run).join("sync.json").is_file()
    });
    let next = Arc::new(AtomicU64::new(1));
    let writer = Writer::start(&case.url, TRIPS, DRIVERS, PACE, next.clone());
    let at = kill_9_after(
        &mut child,
        &run,
        0,
        first,
        "the first streamed transactions",
    );
    let s = state(&run);
    assert_eq!(s["backfill_done"], true, "{s}");
    eprintln!(
        "sync live: backfill and {at} transactions at the first kill -9, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mut child = follow(&case, &plan, &run, &slot, &[]);
    let at = kill_9_after(
        &mut child,
        &run,
        at,
        second,
        "transactions after the restart",
    );
    eprintln!(
        "sync live: {at} transactions at the second kill -9, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_millis(500));
    let (rounds, written) = writer.stop();

    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = shown(&out);
    for line in [
        "check: trips has REPLICA IDENTITY FULL",
        "check: drivers has REPLICA IDENTITY DEFAULT (its primary key), enough",
        "resuming: slot",
        "caught up at LSN ",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // Every change the writer committed is applied once, whatever the kills interrupted.
    let s = state(&run);
    assert_eq!(
        s["changes"].as_u64().unwrap_or(0),
        written,
        "row changes applied vs committed by the writer ({rounds} rounds): {s}\n{text}"
    );
    eprintln!(
        "sync live: caught up, {written} row changes in {rounds} rounds, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_no_differences(&case, &plan, "after two kill -9");
    assert_trip_tables_equal(&case, "after two kill -9").await;

    // A DDL change of a plan table: the next change of the table stops the sync with the LSN
    // and the table, and nothing after it is applied.
    let before = s["changes"].as_u64().unwrap_or(0);
    case.pg
        .client()
        .batch_execute(
            "ALTER TABLE drivers ADD COLUMN nickname text; \
             UPDATE drivers SET rating = 1.5, nickname = 'x' WHERE driver_id = 'drv_1'",
        )
        .await
        .expect("ddl");
    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let err = support::text(&out.stderr);
    assert!(
        err.contains("remodel: error: stopped at LSN ")
            && err.contains(": DDL changed table drivers (columns now driver_id, full_name, home_city, rating, joined_at, nickname; the plan has driver_id, full_name, home_city, rating, joined_at): plan again"),
        "{err}"
    );
    assert_eq!(state(&run)["changes"].as_u64(), Some(before));
    // Resuming would meet the same change: no resume command, what to do instead.
    assert!(!err.contains("resume with"), "{err}");
    assert!(
        err.contains("resuming would stop at the same change"),
        "{err}"
    );

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

/// A table whose key is its primary key (DEFAULT identity is enough for that) but which already
/// holds a value stored out of line (a long, incompressible `full_name`): an UPDATE that leaves
/// it unchanged sends no value of it in the WAL, and sync would stop at the first one. The
/// start-up check says so first, before any slot is made.
#[tokio::test(flavor = "multi_thread")]
async fn a_toasted_column_needs_full_identity_before_the_start_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("sync_toast").await;
    let plan = case.rideshare(50);
    let slot = format!("remodel_sync_x{}", std::process::id());
    let _guard = SlotGuard {
        url: case.url.clone(),
        slot: slot.clone(),
    };
    let run = case.dir.join("sync").to_string_lossy().to_string();
    case.pg
        .client()
        .batch_execute(
            "ALTER TABLE trips REPLICA IDENTITY FULL; \
             UPDATE drivers SET full_name = (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 400)) \
             WHERE driver_id = (SELECT min(driver_id) FROM drivers)",
        )
        .await
        .expect("a long name");
    let out = support::remodel(&sync_args(&case, &plan, &run, &slot));
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let err = support::text(&out.stderr);
    assert!(
        err.contains("check: drivers has REPLICA IDENTITY DEFAULT; it needs FULL because it holds values stored out of line (TOAST, in full_name, home_city: the columns that can be)"),
        "{err}"
    );
    assert!(!std::path::Path::new(&run).join("sync.json").exists());
    case.cleanup().await;
}
