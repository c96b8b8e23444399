//! Shared by the `remodel sync` live tests: the slot guard, the command line, a writer of every
//! kind of change sync must carry, and the comparisons that find a lost or misapplied change.

use super::live::{json, Case};
use remodel_testdb::scylla::response::{PagingState, PagingStateResponse};
use remodel_testdb::scylla::statement::unprepared::Statement;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Drops the test's slot and publication when the test ends, passed or not (a forgotten slot
/// holds WAL on the shared Postgres).
pub struct SlotGuard {
    /// The Postgres URL.
    pub url: String,
    /// The slot's (and publication's) name.
    pub slot: String,
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

/// `sync --plan … --source … --target … --run-dir RUN --slot SLOT --progress lines`.
pub fn sync_args<'a>(case: &'a Case, plan: &'a str, run: &'a str, slot: &'a str) -> Vec<&'a str> {
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

/// `sync --follow EXTRA…` in the background; what it prints is added to `RUN.log`.
pub fn follow(case: &Case, plan: &str, run: &str, slot: &str, extra: &[&str]) -> Child {
    let mut args = sync_args(case, plan, run, slot);
    args.push("--follow");
    args.extend(extra);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(format!("{run}.log"))
        .expect("the sync's log");
    super::command()
        .args(&args)
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("sync --follow")
}

/// A `sync --follow` started on the rideshare example: its plan, its slot (dropped when this is
/// dropped), its run folder and its process.
pub struct Following {
    /// The plan.json.
    pub plan: String,
    /// The slot's guard.
    pub guard: SlotGuard,
    /// The run folder (what the sync prints goes to `RUN.log`).
    pub run: String,
    /// The sync.
    pub child: Child,
}

impl Following {
    /// Loads `trips` trips with `trips` in `REPLICA IDENTITY FULL`, plans, and starts `sync
    /// --follow EXTRA…` with a slot named `prefix` and the pid; returns once its slot exists.
    pub async fn start(case: &Case, trips: u64, prefix: &str, extra: &[&str]) -> Following {
        let plan = case.rideshare(trips);
        case.pg
            .client()
            .batch_execute("ALTER TABLE trips REPLICA IDENTITY FULL")
            .await
            .expect("replica identity");
        let slot = format!("{prefix}{}", std::process::id());
        let guard = SlotGuard {
            url: case.url.clone(),
            slot: slot.clone(),
        };
        let run = case.dir.join("sync").to_string_lossy().to_string();
        let mut child = follow(case, &plan, &run, &slot, extra);
        let state = Path::new(&run).join("sync.json");
        super::live::wait_until(&mut child, 120, "the slot is created", || state.is_file());
        Following {
            plan,
            guard,
            run,
            child,
        }
    }
}

/// What a command printed, both streams.
pub fn shown(out: &Output) -> String {
    format!("{}\n{}", super::text(&out.stdout), super::text(&out.stderr))
}

/// `sync.json` of the run folder.
pub fn state(run: &str) -> serde_json::Value {
    json(&Path::new(run).join("sync.json"))
}

/// True once `sync.json` of `run` counts `n` transactions applied (for [`super::live::wait_until`]).
pub fn applied(run: &str, n: u64) -> impl FnMut() -> bool {
    let file = Path::new(run).join("sync.json");
    move || {
        std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|s| s["transactions"].as_u64().unwrap_or(0) >= n)
    }
}

/// A pseudo-random number of round `i` and salt `s` (splitmix64): which rows a round touches.
fn mix(i: u64, s: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(s.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One round of the writer; returns the row changes it committed (the rows each statement
/// affected: an update or delete of a trip deleted earlier changes nothing).
async fn write_round(
    c: &mut remodel_testdb::tokio_postgres::Client,
    i: u64,
    trips: u64,
    drivers: u64,
) -> Result<u64, remodel_testdb::tokio_postgres::Error> {
    let id = format!("00000000-0000-4000-8000-{i:012}");
    let pick = |s: u64, n: u64| (1 + mix(i, s) % n) as i64;
    let mut n = c
        .execute(
            "INSERT INTO trips VALUES ($1::text::uuid, 'drv_' || $2::int8, 'sf', \
             timestamptz '2025-03-01 00:00:00+00' + $3::int8 * interval '1 minute', 3.5, 9.75, 'completed')",
            &[&id, &pick(1, drivers), &(i as i64)],
        )
        .await?;
    // Another transaction: a status change; a key change of an older trip (start time, city
    // and driver: its rows move in all three trip tables); a driver's rating; a deletion.
    let tx = c.transaction().await?;
    n += tx
        .execute(
            "UPDATE trips SET status = 'disputed' WHERE trip_id = $1::text::uuid",
            &[&id],
        )
        .await?;
    n += tx
        .execute(
            "UPDATE trips SET started_at = started_at + interval '3 days', city = 'london', \
             driver_id = 'drv_' || $2::int8 WHERE trip_id = md5('trip-' || $1::int8)::uuid",
            &[&pick(2, trips), &pick(3, drivers)],
        )
        .await?;
    n += tx
        .execute(
            "UPDATE drivers SET rating = round((3 + random() * 2)::numeric, 2) \
             WHERE driver_id = 'drv_' || $1::int8",
            &[&pick(4, drivers)],
        )
        .await?;
    n += tx
        .execute(
            "DELETE FROM trips WHERE trip_id = md5('trip-' || $1::int8)::uuid",
            &[&pick(5, trips)],
        )
        .await?;
    tx.commit().await?;
    if i.is_multiple_of(10) {
        // A column drivers_by_id copies from cities.
        n += c
            .execute(
                "UPDATE cities SET country = 'F' || $1::int8 WHERE city = 'paris'",
                &[&(i as i64)],
            )
            .await?;
    }
    Ok(n)
}

/// A writer on its own thread: a round of [`write_round`] every `pace`, until stopped.
pub struct Writer {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<(u64, u64)>,
}

impl Writer {
    /// Starts writing to the rideshare tables at `url` (`trips` generated trips, `drivers`
    /// drivers); round numbers come from `next` (a trip id each: never reused).
    pub fn start(
        url: &str,
        trips: u64,
        drivers: u64,
        pace: Duration,
        next: Arc<AtomicU64>,
    ) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let url = url.to_string();
        let handle = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async {
                let mut c = remodel_testdb::connect_pg(&url)
                    .await
                    .expect("writer connects");
                // Asynchronous commit, whatever the server's setting: a commit can be visible
                // before pg_current_wal_lsn() (the WAL written) reaches it; catching up must not
                // stop there.
                c.batch_execute("SET synchronous_commit = off")
                    .await
                    .expect("synchronous_commit");
                let (mut rounds, mut changes) = (0, 0);
                while !stopping.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    changes += write_round(&mut c, i, trips, drivers)
                        .await
                        .expect("writer round");
                    rounds += 1;
                    tokio::time::sleep(pace).await;
                }
                (rounds, changes)
            })
        });
        Writer { stop, handle }
    }

    /// The writer of the follow tests: a round every 20 ms over the rideshare example with
    /// `trips` trips (and a driver per 200 trips), from round 1.
    pub fn steady(url: &str, trips: u64) -> Writer {
        Writer::start(
            url,
            trips,
            trips / 200,
            Duration::from_millis(20),
            Arc::new(AtomicU64::new(1)),
        )
    }

    /// Stops it; returns the rounds written and the row changes they committed.
    pub fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("writer")
    }
}

/// `verify` passes, and `replay --existing` of every read finds no difference.
pub fn assert_no_differences(case: &Case, plan: &str, when: &str) {
    let verified = case.verify(plan, &[]);
    assert!(
        verified.contains("verify: all 4 tables match"),
        "{when}: {verified}"
    );
    let designed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(plan).expect("plan")).expect("plan.json");
    let q2 = super::buckets::every_bucket(
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

/// The three trip tables, row for row, against `trips`: every key (a row left behind at a moved
/// key, or missing, shows) and in trips_by_id the status, city, driver and start time (a lost
/// update shows). `verify` samples; this reads everything.
pub async fn assert_trip_tables_equal(case: &Case, when: &str) {
    let micros = "(extract(epoch FROM started_at) * 1000000)::int8::text";
    for (table, pg, cql) in [
        (
            "trips_by_id",
            format!("trip_id::text, driver_id, city, {micros}, status"),
            "CAST(trip_id AS text), driver_id, city, CAST(started_at AS text), status",
        ),
        (
            "trips_by_driver",
            format!("driver_id, {micros}, trip_id::text"),
            "driver_id, CAST(started_at AS text), CAST(trip_id AS text)",
        ),
        (
            "trips_by_city_date",
            format!("city, {micros}, trip_id::text"),
            "city, CAST(started_at AS text), CAST(trip_id AS text)",
        ),
    ] {
        let source: BTreeSet<String> = case
            .pg
            .client()
            .query(&format!("SELECT concat_ws('|', {pg}) FROM trips"), &[])
            .await
            .expect("read trips")
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect();
        let target = cql_rows(
            case,
            &format!("SELECT {cql} FROM {}.{table}", case.ks.name()),
        )
        .await;
        let missing: Vec<_> = source.difference(&target).take(5).collect();
        let extra: Vec<_> = target.difference(&source).take(5).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{when}: {table}: {} rows in Postgres, {} in Cassandra; missing there (first 5): {missing:?}; there and not in Postgres: {extra:?}",
            source.len(),
            target.len()
        );
    }
}

/// Every row of a CQL query of text columns, joined by `|` (NULL as empty), all pages.
async fn cql_rows(case: &Case, cql: &str) -> BTreeSet<String> {
    let statement = Statement::new(cql).with_page_size(5_000);
    let mut paging = PagingState::start();
    let mut out = BTreeSet::new();
    loop {
        let (result, next) = case
            .ks
            .session()
            .query_single_page(statement.clone(), &[], paging)
            .await
            .unwrap_or_else(|e| panic!("{cql}: {e}"));
        let rows = result.into_rows_result().expect("rows");
        for row in rows
            .rows::<remodel_testdb::scylla::value::Row>()
            .expect("typed rows")
        {
            let row = row.expect("a row");
            let cols: Vec<String> = row
                .columns
                .iter()
                .map(|c| match c {
                    Some(remodel_testdb::scylla::value::CqlValue::Text(t)) => t.clone(),
                    Some(other) => format!("{other:?}"),
                    None => String::new(),
                })
                .collect();
            out.insert(cols.join("|"));
        }
        match next {
            PagingStateResponse::HasMorePages { state } => paging = state,
            PagingStateResponse::NoMorePages => return out,
        }
    }
}
