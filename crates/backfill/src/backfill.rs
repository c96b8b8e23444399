//! The backfill run: plan the ranges (or take them from the checkpoint), then readers inside one
//! snapshot stream ranges, convert rows and hand partition groups to writer tasks bounded by a
//! semaphore; a range is marked finished only after all its writes are acknowledged and its
//! rejects are on disk.

use crate::adaptive::{Concurrency, Limiter, Slot};
use crate::convert::RawValue;
use crate::cql::{CqlTarget, Failure, Refused, Writer};
use crate::pg::{PageRange, PgSource, ReadShape, Snapshot};
use crate::progress::{Progress, TableCounts, TableStart, WriteStatus};
use crate::rows::{convert_row, row_key, row_size, source_key, Row};
use crate::run::{
    Checkpoint, RangeDone, RejectRecord, RunDir, TableCheckpoint, CHECKPOINT_VERSION,
};
use crate::target::{TargetTable, Ttl};
use crate::targetschema;
use crate::time;
use crate::Error;
use futures_util::StreamExt;
use remodel_model::{ConsistencyLevel, DesignTable, Plan, RunStatus, RunSummary, TableRun};
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, MaybeUnset};
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// The write timestamp of backfilled rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteTimestamp {
    /// The server's (or driver's) time of each write.
    Server,
    /// The snapshot's start: any live write made after it wins.
    Snapshot,
    /// A fixed value, microseconds since the Unix epoch.
    Fixed(i64),
}

/// When to stop for rejected rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaxErrors {
    /// More than this many rows.
    Count(u64),
    /// More than this percentage of the rows read.
    Percent(f64),
}

impl std::str::FromStr for MaxErrors {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(p) = s.strip_suffix('%') {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("`{s}`: expected N or P% (e.g. 100 or 0.5%)"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("`{s}`: a percentage is between 0% and 100%"));
            }
            return Ok(MaxErrors::Percent(v));
        }
        s.parse()
            .map(MaxErrors::Count)
            .map_err(|_| format!("`{s}`: expected N or P% (e.g. 100 or 0.5%)"))
    }
}

impl std::fmt::Display for MaxErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxErrors::Count(n) => write!(f, "{n}"),
            MaxErrors::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// How to run a backfill.
#[derive(Debug, Clone)]
pub struct BackfillOptions {
    /// Target tables to fill (empty: all of the plan).
    pub tables: Vec<String>,
    /// The run folder.
    pub run_dir: PathBuf,
    /// Continue the run in `run_dir` (skip its finished ranges).
    pub resume: bool,
    /// CQL to apply before writing (`schema.cql`), when asked to.
    pub create_schema: Option<String>,
    /// Parallel Postgres readers (one connection each).
    pub readers: usize,
    /// Write requests in flight at most: adaptive, or a fixed number.
    pub concurrency: Concurrency,
    /// The consistency level of every write; `None`: the plan's writes' level.
    pub consistency: Option<ConsistencyLevel>,
    /// Rows per second at most, when throttled.
    pub max_rows_per_second: Option<f64>,
    /// The write timestamp.
    pub write_timestamp: WriteTimestamp,
    /// When to stop for rejects.
    pub max_errors: MaxErrors,
    /// Client-side timeout of one request.
    pub request_timeout: Duration,
    /// How long one request is retried before the run stops.
    pub retry_for: Duration,
    /// Rows per range (a checkpoint is written after each range).
    pub rows_per_range: u64,
    /// Bytes per batch at most (rows of one partition).
    pub batch_bytes: usize,
    /// Rows larger than this are rejected.
    pub max_row_bytes: usize,
    /// The plan file as named on the command line (recorded in the checkpoint).
    pub plan_label: String,
    /// Ends the run cleanly when triggered (Ctrl-C).
    pub interrupt: Interrupt,
    /// The command that resumes this run, for the summary (default: one built from the plan,
    /// source, target and run folder).
    pub resume_command: Option<String>,
    /// Read inside this snapshot, exported by another session (a replication slot's), instead of
    /// exporting one; `None`: export one.
    pub snapshot: Option<String>,
    /// The instant a row's TTL counts down from, in microseconds since the Unix epoch; `None`:
    /// the wall clock as each row is written. Replay sets its own clock, so generated rows
    /// expire as its SQL says they have.
    pub clock_micros: Option<i64>,
}

impl Default for BackfillOptions {
    fn default() -> Self {
        BackfillOptions {
            tables: Vec::new(),
            run_dir: PathBuf::from("runs/backfill"),
            resume: false,
            create_schema: None,
            readers: 4,
            concurrency: Concurrency::Auto,
            consistency: None,
            max_rows_per_second: None,
            write_timestamp: WriteTimestamp::Server,
            max_errors: MaxErrors::Count(100),
            request_timeout: Duration::from_secs(12),
            retry_for: Duration::from_secs(300),
            rows_per_range: 50_000,
            batch_bytes: 5 * 1024,
            max_row_bytes: crate::rows::MAX_ROW_BYTES,
            plan_label: "plan.json".into(),
            interrupt: Interrupt::default(),
            resume_command: None,
            snapshot: None,
            clock_micros: None,
        }
    }
}

/// Rows of one batch at most (a partition's rows beyond it go in the next batch).
const MAX_BATCH_ROWS: usize = 200;

/// Live counters of one table for this attempt, on top of what earlier attempts finished.
#[derive(Default)]
struct Counters {
    base: RangeDone,
    base_ranges: usize,
    ranges_total: usize,
    read: AtomicU64,
    written: AtomicU64,
    rejected: AtomicU64,
    ranges_done: AtomicUsize,
    first_start: Mutex<Option<Instant>>,
    last_end: Mutex<Option<Instant>>,
}

/// Caps the rows per second across all readers.
struct Throttle {
    per_row: f64,
    next: Mutex<Instant>,
}

impl Throttle {
    async fn wait(&self, rows: usize) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let start = (*next).max(Instant::now());
            *next = start + Duration::from_secs_f64(self.per_row * rows as f64);
            start
        };
        tokio::time::sleep_until(at.into()).await;
    }
}

/// What every task of a run shares.
struct Shared {
    tables: Vec<TargetTable>,
    shapes: Vec<ReadShape>,
    inserts: Vec<Arc<PreparedStatement>>,
    source: PgSource,
    target: CqlTarget,
    snapshot_id: String,
    /// The leader's transaction, which holds the snapshot open for the readers.
    _snapshot: Snapshot,
    writer: Arc<Writer>,
    consistency: ConsistencyLevel,
    throttle: Option<Throttle>,
    run: Arc<RunDir>,
    checkpoint: Mutex<Checkpoint>,
    counters: Vec<Counters>,
    jobs: Mutex<VecDeque<(usize, usize)>>,
    stop: AtomicBool,
    read_total: AtomicU64,
    rejected_total: AtomicU64,
    opts: BackfillOptions,
    progress: Arc<dyn Progress>,
}

impl Shared {
    fn range(&self, ti: usize, ri: usize) -> PageRange {
        let cp = self.checkpoint.lock().unwrap_or_else(|p| p.into_inner());
        cp.tables
            .iter()
            .find(|t| t.name == self.tables[ti].name)
            .and_then(|t| t.ranges.get(ri).copied())
            .unwrap_or(PageRange { lo: 0, hi: None })
    }

    fn note(&self, message: &str) {
        self.run.log(message);
        self.progress.note(message);
    }

    fn write_status(&self) -> WriteStatus {
        WriteStatus {
            level: self.writer.limiter().level(),
            retries: self.writer.retries(),
        }
    }

    fn counts(&self) -> Vec<TableCounts> {
        self.counters
            .iter()
            .map(|c| {
                let ranges_done = c.base_ranges + c.ranges_done.load(Ordering::Relaxed);
                TableCounts {
                    read: c.base.read + c.read.load(Ordering::Relaxed),
                    written: c.base.written + c.written.load(Ordering::Relaxed),
                    rejected: c.base.rejected + c.rejected.load(Ordering::Relaxed),
                    ranges_done,
                    finished: ranges_done == c.ranges_total,
                }
            })
            .collect()
    }
}

/// Runs (or resumes) a backfill of `plan` from `source` into `target`. Writes the run folder and
/// returns the summary; once the readers have started, an error still writes the summary (status
/// `stopped`) and comes back as [`Error::Stopped`] (or [`Error::Interrupted`]).
pub async fn backfill(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &BackfillOptions,
    progress: Arc<dyn Progress>,
) -> Result<RunSummary, Error> {
    let tables = TargetTable::from_plan(plan, &opts.tables)?;
    let run = RunDir::open(&opts.run_dir)?;
    let checkpoint = open_checkpoint(&run, opts, &plan.design.keyspace.name, source, target)?;
    // From here on the folder holds a checkpoint: a run killed at any later point resumes, and
    // creates the schema first when it was asked to.
    run.save_checkpoint(&checkpoint)?;
    let started = (Instant::now(), time::now_secs());
    let ready = interruptible(
        &opts.interrupt,
        prepare(plan, source, target, opts, &run, &tables, checkpoint),
    )
    .await?;
    let (attempt, write_ts) = (ready.checkpoint.attempts, ready.write_ts);
    let snapshot_id = ready.snapshot.id.clone();
    let shared = Arc::new(build_shared(
        tables,
        source,
        target,
        run,
        ready,
        opts,
        progress.clone(),
    ));
    let outcome = execute(&shared).await.map_err(|e| match e {
        Error::Interrupted => e,
        e => Error::Stopped(Box::new(e)),
    });
    let summary = summarize(&shared, attempt, started, write_ts, outcome.as_ref().err());
    shared.run.save_summary(&summary)?;
    shared.run.log(&format!(
        "{}: {} (snapshot {snapshot_id})",
        summary.status.as_str(),
        summary.error.as_deref().unwrap_or("all ranges finished")
    ));
    progress.finish(&summary);
    outcome.map(|()| summary)
}

/// `work`, or [`Error::Interrupted`] as soon as `interrupt` is triggered (what `work` had done
/// is dropped at its next await: the checkpoint is only ever replaced whole).
async fn interruptible<T>(
    interrupt: &Interrupt,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::select! {
        r = work => r,
        () = interrupt.wait() => Err(Error::Interrupted),
    }
}

/// Asks a running backfill to end cleanly (the command line triggers it on Ctrl-C): no new range
/// starts, the ranges being read are dropped (read again on resume), the summary is written.
#[derive(Clone)]
pub struct Interrupt(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt(Arc::new(tokio::sync::watch::channel(false).0))
    }
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Interrupt({})", self.is_triggered())
    }
}

impl Interrupt {
    /// Asks the run to end.
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

    /// Whether the run was asked to end.
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns once the run is asked to end.
    async fn wait(&self) {
        let mut rx = self.0.subscribe();
        // The sender lives in `self`: the channel cannot close while this waits.
        let _ = rx.wait_for(|asked| *asked).await;
    }
}

/// What a run needs before its readers start.
struct Ready {
    snapshot: Snapshot,
    checkpoint: Checkpoint,
    shapes: Vec<ReadShape>,
    session: Arc<Session>,
    inserts: Vec<Arc<PreparedStatement>>,
    write_ts: Option<i64>,
    consistency: ConsistencyLevel,
}

/// The snapshot, the target's schema (checked against the plan, created where it is missing and
/// this run was asked to), the ranges (new, or the checkpoint's), the prepared INSERTs.
async fn prepare(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &BackfillOptions,
    run: &RunDir,
    tables: &[TargetTable],
    mut checkpoint: Checkpoint,
) -> Result<Ready, Error> {
    let snapshot = match &opts.snapshot {
        Some(id) => source.import_snapshot(id).await?,
        None => source.export_snapshot().await?,
    };
    let session = Arc::new(
        target
            .connect(connections(opts.concurrency), opts.request_timeout)
            .await?,
    );
    let schema_cql = opts.create_schema.clone().or(checkpoint.schema_cql.clone());
    prepare_target(&session, target, plan, tables, schema_cql.as_deref(), run).await?;
    let shapes = prepare_source(source, &snapshot, tables, opts, run, &mut checkpoint).await?;
    let consistency = opts
        .consistency
        .unwrap_or_else(|| crate::cql::plan_write_level(plan));
    let write_ts = match opts.write_timestamp {
        WriteTimestamp::Server => None,
        WriteTimestamp::Snapshot => Some(snapshot.micros),
        WriteTimestamp::Fixed(v) => Some(v),
    };
    run.log(&format!(
        "attempt {}: source {}, target {}, snapshot {}, {} readers, {} requests in flight, consistency {}, write timestamp {}",
        checkpoint.attempts,
        source.display,
        target.node,
        snapshot.id,
        opts.readers,
        opts.concurrency,
        consistency.cql_name(),
        write_ts.map_or("server time".to_string(), |t| t.to_string())
    ));
    let mut inserts = Vec::with_capacity(tables.len());
    for t in tables {
        let mut stmt = target.prepare(&session, &t.insert_cql(write_ts)).await?;
        stmt.set_consistency(crate::cql::consistency_of(consistency));
        // A counter update sent twice counts twice: never retried blindly.
        stmt.set_is_idempotent(!t.counter);
        inserts.push(Arc::new(stmt));
    }
    empty_counters(&session, target, tables, &checkpoint, run).await?;
    Ok(Ready {
        snapshot,
        checkpoint,
        shapes,
        session,
        inserts,
        write_ts,
        consistency,
    })
}

/// Connections per node: enough that the node's request threads share the work (one
/// connection is served by one of its event loops), a few more for a high fixed level.
pub fn connections(c: Concurrency) -> usize {
    match c {
        Concurrency::Auto => 4,
        Concurrency::Fixed(n) => (n / 32).clamp(1, 8),
    }
}

/// Compares the target's keyspace with the plan's tables and types; creates what is missing
/// with `schema_cql` (when given) and compares again, so that a table `IF NOT EXISTS` kept is
/// never one that differs. Refuses any difference, and anything still missing.
async fn prepare_target(
    session: &Session,
    target: &CqlTarget,
    plan: &Plan,
    tables: &[TargetTable],
    schema_cql: Option<&str>,
    run: &RunDir,
) -> Result<(), Error> {
    let keyspace = &plan.design.keyspace.name;
    let design: Vec<&DesignTable> = tables
        .iter()
        .filter_map(|t| plan.design.tables.iter().find(|d| d.name == t.name))
        .collect();
    let compare = || async {
        let server = targetschema::read(session, target, keyspace).await?;
        Ok::<_, Error>(targetschema::compare(&server, &design, &plan.design.types))
    };
    let mut found = compare().await?;
    if let (true, false, Some(cql)) = (
        found.differences.is_empty(),
        found.missing.is_empty(),
        schema_cql,
    ) {
        apply_schema(session, target, cql).await?;
        run.log(&format!(
            "applied schema.cql: {} created",
            found.missing.join(", ")
        ));
        found = compare().await?;
    }
    if !found.differences.is_empty() {
        return Err(Error::TargetSchema(format!(
            "keyspace {keyspace} on the target differs from the plan: {}; nothing was written \
             (drop what differs, or plan into another keyspace)",
            found.differences.join("; ")
        )));
    }
    if !found.missing.is_empty() {
        return Err(Error::TargetSchema(format!(
            "keyspace {keyspace} on the target lacks {}: give --create-schema to create it from \
             schema.cql",
            found.missing.join(", ")
        )));
    }
    Ok(())
}

/// Empties every counter table this attempt fills (its ranges were all forgotten by
/// [`prepare_source`]): counters are added to, so a table must start from zero, and only a
/// table finished whole by an earlier attempt keeps what it holds.
async fn empty_counters(
    session: &scylla::client::session::Session,
    target: &CqlTarget,
    tables: &[TargetTable],
    cp: &Checkpoint,
    run: &RunDir,
) -> Result<(), Error> {
    for t in tables.iter().filter(|t| t.counter) {
        let done = cp
            .tables
            .iter()
            .find(|c| c.name == t.name)
            .is_some_and(|c| c.finished.len() == c.ranges.len() && !c.ranges.is_empty());
        if done {
            continue;
        }
        let cql = format!("TRUNCATE {}", t.qualified());
        session
            .query_unpaged(cql.as_str(), ())
            .await
            .map_err(|e| target.failed(format!("`{cql}`"), e))?;
        run.log(&format!(
            "{}: counter table emptied, filled whole in this attempt (an added count cannot be resumed half way)",
            t.name
        ));
    }
    Ok(())
}

/// Describes each table's read, then cuts new ranges for the tables the checkpoint lacks (its
/// finished ones are kept on resume), counts the attempt and saves the checkpoint.
async fn prepare_source(
    source: &PgSource,
    snapshot: &Snapshot,
    tables: &[TargetTable],
    opts: &BackfillOptions,
    run: &RunDir,
    cp: &mut Checkpoint,
) -> Result<Vec<ReadShape>, Error> {
    let mut shapes = Vec::with_capacity(tables.len());
    for t in tables {
        shapes.push(source.describe(&snapshot.client, t).await?);
    }
    for t in tables {
        match cp.tables.iter().find(|c| c.name == t.name) {
            Some(c) if c.fingerprint != t.fingerprint() => {
                return Err(Error::Resume {
                    path: run.checkpoint_path(),
                    reason: format!("table {} changed in the plan since the run started (its source_sql or columns differ); start a new run", t.name),
                });
            }
            Some(c) => {
                let whole = c.finished.len() == c.ranges.len();
                let finished: BTreeSet<usize> = if t.counter && !whole {
                    BTreeSet::new()
                } else {
                    c.finished.keys().copied().collect()
                };
                run.prune_rejects(&t.name, &finished)?;
                if t.counter && !whole {
                    // Emptied and filled again whole by this attempt (`empty_counters`).
                    if let Some(c) = cp.tables.iter_mut().find(|c| c.name == t.name) {
                        c.finished.clear();
                    }
                }
            }
            None => {
                let (ranges, rows) = source
                    .page_ranges(&snapshot.client, t, opts.rows_per_range)
                    .await?;
                run.log(&format!(
                    "{}: {} ranges over about {rows:.0} rows of {}",
                    t.name,
                    ranges.len(),
                    t.driving
                        .as_ref()
                        .map_or("the whole source_sql", |d| d.table.as_str())
                ));
                cp.tables.push(TableCheckpoint {
                    name: t.name.clone(),
                    fingerprint: t.fingerprint(),
                    estimated_rows: rows,
                    ranges,
                    finished: BTreeMap::new(),
                });
            }
        }
    }
    cp.attempts += 1;
    run.save_checkpoint(cp)?;
    Ok(shapes)
}

/// The checkpoint of the run being resumed, or a new one (refusing a folder that holds a run).
fn open_checkpoint(
    run: &RunDir,
    opts: &BackfillOptions,
    keyspace: &str,
    source: &PgSource,
    target: &CqlTarget,
) -> Result<Checkpoint, Error> {
    if opts.resume {
        let mut cp = run.load_checkpoint()?;
        if cp.keyspace != keyspace {
            return Err(Error::Resume {
                path: run.checkpoint_path(),
                reason: format!(
                    "it fills keyspace {}, the plan names {keyspace}",
                    cp.keyspace
                ),
            });
        }
        if opts.create_schema.is_some() {
            cp.schema_cql = opts.create_schema.clone();
        }
        return Ok(cp);
    }
    // A folder whose run never cut its ranges (refused, or killed while starting) holds nothing
    // to keep.
    if run.checkpoint_path().exists() && !run.load_checkpoint().is_ok_and(|cp| cp.is_fresh()) {
        return Err(Error::Resume {
            path: run.checkpoint_path(),
            reason: "this run folder already holds a run: pass --resume to continue it, or choose another --run-dir".into(),
        });
    }
    Ok(Checkpoint {
        format_version: CHECKPOINT_VERSION,
        plan: opts.plan_label.clone(),
        keyspace: keyspace.to_string(),
        source: source.display.clone(),
        target: target.node.clone(),
        attempts: 0,
        schema_cql: opts.create_schema.clone(),
        tables: Vec::new(),
    })
}

/// The mean latency past which an adaptive level is cut: an eighth of the request timeout, so
/// that the level goes down well before requests start timing out.
pub fn latency_ceiling(request_timeout: Duration) -> Duration {
    (request_timeout / 8).max(Duration::from_millis(200))
}

fn build_shared(
    tables: Vec<TargetTable>,
    source: &PgSource,
    target: &CqlTarget,
    run: RunDir,
    ready: Ready,
    opts: &BackfillOptions,
    progress: Arc<dyn Progress>,
) -> Shared {
    let Ready {
        snapshot,
        checkpoint,
        shapes,
        session,
        inserts,
        consistency,
        ..
    } = ready;
    let mut jobs = VecDeque::new();
    let mut counters = Vec::with_capacity(tables.len());
    for (ti, t) in tables.iter().enumerate() {
        let Some(c) = checkpoint.tables.iter().find(|c| c.name == t.name) else {
            counters.push(Counters::default());
            continue;
        };
        for ri in 0..c.ranges.len() {
            if !c.finished.contains_key(&ri) {
                jobs.push_back((ti, ri));
            }
        }
        counters.push(Counters {
            base: c.totals(),
            base_ranges: c.finished.len(),
            ranges_total: c.ranges.len(),
            ..Counters::default()
        });
    }
    let run = Arc::new(run);
    let (notify_progress, notify_run) = (progress.clone(), run.clone());
    let notify: crate::cql::Notify = Arc::new(move |m: String| {
        notify_run.log(&m);
        notify_progress.note(&m);
    });
    Shared {
        shapes,
        inserts,
        source: source.clone(),
        target: target.clone(),
        snapshot_id: snapshot.id.clone(),
        _snapshot: snapshot,
        writer: Arc::new(Writer::new(
            session,
            opts.retry_for,
            notify,
            Limiter::new(opts.concurrency, latency_ceiling(opts.request_timeout)),
            crate::cql::consistency_of(consistency),
        )),
        consistency,
        throttle: opts
            .max_rows_per_second
            .filter(|r| *r > 0.0)
            .map(|r| Throttle {
                per_row: 1.0 / r,
                next: Mutex::new(Instant::now()),
            }),
        run,
        counters,
        jobs: Mutex::new(jobs),
        stop: AtomicBool::new(false),
        read_total: AtomicU64::new(0),
        rejected_total: AtomicU64::new(checkpoint.tables.iter().map(|t| t.totals().rejected).sum()),
        checkpoint: Mutex::new(checkpoint),
        opts: opts.clone(),
        progress,
        tables,
    }
}

/// Runs the readers and the progress ticker until every range is done or one reader fails.
async fn execute(shared: &Arc<Shared>) -> Result<(), Error> {
    let starts: Vec<TableStart> = shared
        .tables
        .iter()
        .zip(&shared.counters)
        .map(|(t, c)| {
            let cp = shared.checkpoint.lock().unwrap_or_else(|p| p.into_inner());
            let est = cp
                .tables
                .iter()
                .find(|x| x.name == t.name)
                .map_or(0.0, |x| x.estimated_rows);
            TableStart {
                name: t.name.clone(),
                expected_rows: est.max(0.0) as u64,
                rows_done: c.base.read,
                ranges: c.ranges_total,
                ranges_done: c.base_ranges,
            }
        })
        .collect();
    shared.progress.start(&starts);
    let skipped: usize = shared.counters.iter().map(|c| c.base_ranges).sum();
    if skipped > 0 {
        shared.note(&format!(
            "resuming: {skipped} ranges finished by earlier attempts are skipped"
        ));
    }
    let pending = shared.jobs.lock().unwrap_or_else(|p| p.into_inner()).len();
    let mut readers = JoinSet::new();
    for _ in 0..shared.opts.readers.clamp(1, pending.max(1)) {
        let s = shared.clone();
        readers.spawn(async move { reader(&s).await });
    }
    let ticker = {
        let s = shared.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                s.progress.update(&s.counts(), &s.write_status());
            }
        })
    };
    let mut first_error = None;
    loop {
        let joined = tokio::select! {
            joined = readers.join_next() => joined,
            () = shared.opts.interrupt.wait(), if first_error.is_none() => {
                // The ranges being read are dropped at their next await (never while the
                // checkpoint is written: that holds no await), to be read again on resume.
                shared.stop.store(true, Ordering::Relaxed);
                readers.abort_all();
                first_error = Some(Error::Interrupted);
                shared.note("interrupted: the ranges being read are dropped and will be read again on resume");
                continue;
            }
        };
        let Some(joined) = joined else { break };
        let result = match joined {
            Err(e) if e.is_cancelled() => continue,
            joined => joined
                .map_err(|e| Error::Internal(format!("reader task: {e}")))
                .and_then(|r| r),
        };
        if let Err(e) = result {
            shared.stop.store(true, Ordering::Relaxed);
            first_error.get_or_insert(e);
        }
    }
    ticker.abort();
    shared
        .progress
        .update(&shared.counts(), &shared.write_status());
    match first_error {
        Some(e) => Err(e),
        None => check_percent(shared),
    }
}

fn next_job(shared: &Shared) -> Option<(usize, usize)> {
    if shared.stop.load(Ordering::Relaxed) {
        return None;
    }
    shared
        .jobs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop_front()
}

/// One reader: a connection inside the snapshot, ranges taken from the shared queue.
async fn reader(shared: &Shared) -> Result<(), Error> {
    let client = shared.source.reader(&shared.snapshot_id).await?;
    while let Some((ti, ri)) = next_job(shared) {
        RangeWork::new(shared, ti, ri).run(&client).await?;
    }
    Ok(())
}

/// What a write task hands back: rows sent, and the rows not stored with the reject's kind and
/// reason.
type Written = Result<(usize, Vec<(Row, &'static str, String)>), Failure>;

/// The state of one range being copied.
struct RangeWork<'a> {
    shared: &'a Shared,
    ti: usize,
    ri: usize,
    done: RangeDone,
    /// Rows read since the counters were last bumped.
    unreported: u64,
    pending: JoinSet<Written>,
    group: Vec<Row>,
    group_bytes: usize,
    /// The target keys written by this range so far (up to [`MAX_SEEN_KEYS`]): a second row
    /// with one of them would overwrite the first in Cassandra.
    seen: HashSet<String>,
}

/// Target keys a range remembers to find rows that would overwrite each other; past it, only
/// the rows of one batch are compared (memory stays bounded whatever the range holds).
const MAX_SEEN_KEYS: usize = 100_000;

impl<'a> RangeWork<'a> {
    fn new(shared: &'a Shared, ti: usize, ri: usize) -> Self {
        RangeWork {
            shared,
            ti,
            ri,
            done: RangeDone::default(),
            unreported: 0,
            pending: JoinSet::new(),
            group: Vec::new(),
            group_bytes: 0,
            seen: HashSet::new(),
        }
    }

    fn table(&self) -> &'a TargetTable {
        &self.shared.tables[self.ti]
    }

    async fn run(mut self, client: &tokio_postgres::Client) -> Result<(), Error> {
        let s = self.shared;
        let t = self.table();
        let shape = &s.shapes[self.ti];
        let range = s.range(self.ti, self.ri);
        let started = Instant::now();
        s.counters[self.ti]
            .first_start
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(started);
        s.run
            .log(&format!("{}: reading range {} ({range})", t.name, self.ri));
        let split = t.driving.is_some().then_some(&range);
        let stream = s.source.copy_range(client, t, shape, split).await?;
        futures_util::pin_mut!(stream);
        let width = t.columns.len();
        while let Some(row) = stream.next().await {
            let row = row.map_err(|e| s.source.failed(format!("COPY of {}", t.name), e))?;
            let raw = (0..width)
                .map(|i| row.try_get::<RawValue<'_>>(i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| s.source.failed(format!("decode a row of {}", t.name), e))?;
            self.done.read += 1;
            self.unreported += 1;
            match convert_row(t, &shape.kinds, &raw) {
                Ok(converted) => self.push(converted).await?,
                Err(p) => self.reject(
                    source_key(t, &shape.kinds, &raw),
                    p.column,
                    p.kind,
                    p.reason,
                )?,
            }
            if self.unreported >= 512 {
                if s.stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                self.report();
                self.drain(false).await?;
            }
        }
        self.flush().await?;
        self.drain(true).await?;
        self.report();
        self.finish(started)
    }

    fn report(&mut self) {
        self.shared.counters[self.ti]
            .read
            .fetch_add(self.unreported, Ordering::Relaxed);
        self.shared
            .read_total
            .fetch_add(self.unreported, Ordering::Relaxed);
        self.unreported = 0;
    }

    async fn push(&mut self, mut row: Row) -> Result<(), Error> {
        let t = self.table();
        if let Some(i) = t.ttl {
            let value = match row.get(i) {
                Some(MaybeUnset::Set(v)) => Some(v),
                _ => None,
            };
            let now = (self.shared.opts.clock_micros).unwrap_or_else(crate::time::now_micros);
            match t.ttl_of(value, now) {
                // Past its instant: the source's reads no longer see it; counted, not written.
                Some(Ttl::Expired) => {
                    self.done.expired += 1;
                    return Ok(());
                }
                Some(Ttl::Seconds(n)) => row.push(MaybeUnset::Set(CqlValue::Int(n))),
                None => {}
            }
        }
        let size = row_size(&row);
        if size > self.shared.opts.max_row_bytes {
            let reason = format!(
                "row of {size} bytes is over the limit of {} bytes (--max-row-bytes)",
                self.shared.opts.max_row_bytes
            );
            return self.reject(row_key(t, &row), None, "too_large", reason);
        }
        let key = target_key(t, &row);
        let repeated = if self.seen.len() < MAX_SEEN_KEYS {
            !self.seen.insert(key.clone())
        } else {
            self.seen.contains(&key) || self.group.iter().any(|g| target_key(t, g) == key)
        };
        if repeated {
            let reason = format!(
                "its target key ({key}) is the key of another row read before: Cassandra would keep one of the two (the plan's key does not tell these source rows apart)"
            );
            return self.reject(row_key(t, &row), None, "duplicate_key", reason);
        }
        let same = self
            .group
            .last()
            .is_some_and(|last| same_partition(t, last, &row));
        if !self.group.is_empty()
            && (!same
                || self.group_bytes + size > self.shared.opts.batch_bytes
                || self.group.len() >= MAX_BATCH_ROWS)
        {
            self.flush().await?;
        }
        self.group_bytes += size;
        self.group.push(row);
        Ok(())
    }

    /// Hands the current partition group to a writer task (waiting for a free slot first).
    async fn flush(&mut self) -> Result<(), Error> {
        if self.group.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.group);
        self.group_bytes = 0;
        if let Some(th) = &self.shared.throttle {
            th.wait(rows.len()).await;
        }
        let slot: Slot = self.shared.writer.limiter().acquire().await;
        let writer = self.shared.writer.clone();
        let stmt = self.shared.inserts[self.ti].clone();
        self.pending.spawn(async move {
            let refused = writer.write_isolating(&stmt, &rows).await;
            drop(slot);
            let n = rows.len();
            refused.map(|r| {
                (
                    n,
                    r.into_iter()
                        .map(
                            |Refused {
                                 index,
                                 kind,
                                 reason,
                             }| (rows[index].clone(), kind, reason),
                        )
                        .collect(),
                )
            })
        });
        Ok(())
    }

    /// Collects finished writes (all of them when `all`).
    async fn drain(&mut self, all: bool) -> Result<(), Error> {
        loop {
            let next = if all {
                self.pending.join_next().await
            } else {
                self.pending.try_join_next()
            };
            let Some(joined) = next else {
                return Ok(());
            };
            let (n, refused) =
                match joined.map_err(|e| Error::Internal(format!("writer task: {e}")))? {
                    Ok(v) => v,
                    Err(f) => return Err(self.failure(f)),
                };
            let written = (n - refused.len()) as u64;
            self.done.written += written;
            self.shared.counters[self.ti]
                .written
                .fetch_add(written, Ordering::Relaxed);
            for (row, kind, reason) in refused {
                let key = row_key(self.table(), &row);
                let reason = match kind {
                    "refused" => format!("Cassandra refused the row: {reason}"),
                    _ => reason,
                };
                self.reject(key, None, kind, reason)?;
            }
        }
    }

    fn failure(&self, f: Failure) -> Error {
        let node = self.shared.target.node.clone();
        match f {
            Failure::GaveUp { secs, last } => Error::GaveUp {
                node,
                secs,
                last,
                run_dir: self.shared.run.path.clone(),
            },
            Failure::Fatal(message) | Failure::Rejected(message) | Failure::NotStored(message) => {
                Error::Cassandra {
                    node,
                    what: format!("write to {}", self.table().name),
                    message,
                }
            }
        }
    }

    fn reject(
        &mut self,
        key: Vec<(String, String)>,
        column: Option<String>,
        kind: &str,
        reason: String,
    ) -> Result<(), Error> {
        // The rows read so far count before the reject does: a percentage of `--max-errors` is
        // checked against the rows read of every range at once.
        self.report();
        let s = self.shared;
        s.run.reject(&RejectRecord {
            table: self.table().name.clone(),
            range: self.ri,
            source_key: key.into_iter().collect(),
            column,
            kind: kind.to_string(),
            reason,
        })?;
        self.done.rejected += 1;
        s.counters[self.ti].rejected.fetch_add(1, Ordering::Relaxed);
        let total = s.rejected_total.fetch_add(1, Ordering::Relaxed) + 1;
        match s.opts.max_errors {
            MaxErrors::Count(limit) if total > limit => Err(too_many(s, total)),
            _ => Ok(()),
        }
    }

    /// Records the range as finished: its rejects flushed first, then the checkpoint renamed.
    fn finish(self, started: Instant) -> Result<(), Error> {
        let s = self.shared;
        s.run.flush_rejects()?;
        let mut done = self.done;
        done.attempt = 0;
        done.millis = started.elapsed().as_millis() as u64;
        {
            let mut cp = s.checkpoint.lock().unwrap_or_else(|p| p.into_inner());
            done.attempt = cp.attempts;
            let name = &self.table().name;
            if let Some(t) = cp.tables.iter_mut().find(|t| &t.name == name) {
                t.finished.insert(self.ri, done);
            }
            s.run.save_checkpoint(&cp)?;
        }
        let c = &s.counters[self.ti];
        c.ranges_done.fetch_add(1, Ordering::Relaxed);
        *c.last_end.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        s.run.log(&format!(
            "{}: range {} done: {} read, {} written, {} rejected, {} expired in {} ms",
            self.table().name,
            self.ri,
            done.read,
            done.written,
            done.rejected,
            done.expired,
            done.millis
        ));
        check_percent(s)
    }
}

fn too_many(s: &Shared, total: u64) -> Error {
    Error::TooManyRejects {
        rejected: total,
        limit: s.opts.max_errors.to_string(),
        rejects: s.run.rejects_dir(),
        run_dir: s.run.path.clone(),
    }
}

fn check_percent(s: &Shared) -> Result<(), Error> {
    let MaxErrors::Percent(p) = s.opts.max_errors else {
        return Ok(());
    };
    let read: u64 = s.counts().iter().map(|c| c.read).sum();
    let rejected = s.rejected_total.load(Ordering::Relaxed);
    if read > 0 && rejected as f64 > p / 100.0 * read as f64 {
        return Err(too_many(s, rejected));
    }
    Ok(())
}

/// A row's whole target key (partition and clustering), readable: `account_id=7, posted_at=…`.
fn target_key(t: &TargetTable, row: &Row) -> String {
    t.partition_key
        .iter()
        .chain(&t.clustering)
        .map(|&i| {
            let v = match &row[i] {
                MaybeUnset::Set(v) => crate::rows::show(v),
                MaybeUnset::Unset => "NULL".into(),
            };
            format!("{}={v}", t.columns[i].name)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn same_partition(t: &TargetTable, a: &Row, b: &Row) -> bool {
    t.partition_key.iter().all(|&i| match (&a[i], &b[i]) {
        (MaybeUnset::Set(x), MaybeUnset::Set(y)) => x == y,
        _ => false,
    })
}

fn summarize(
    shared: &Shared,
    attempt: u32,
    (started, started_secs): (Instant, i64),
    write_timestamp: Option<i64>,
    error: Option<&Error>,
) -> RunSummary {
    let cp = shared.checkpoint.lock().unwrap_or_else(|p| p.into_inner());
    let tables: Vec<TableRun> = shared
        .tables
        .iter()
        .zip(&shared.counters)
        .map(|(t, c)| {
            let Some(tc) = cp.tables.iter().find(|x| x.name == t.name) else {
                return TableRun {
                    name: t.name.clone(),
                    ..TableRun::default()
                };
            };
            let totals = tc.totals();
            let this_run: u64 = tc
                .finished
                .values()
                .filter(|d| d.attempt == attempt)
                .map(|d| d.read)
                .sum();
            let first = *c.first_start.lock().unwrap_or_else(|p| p.into_inner());
            let last = *c.last_end.lock().unwrap_or_else(|p| p.into_inner());
            TableRun {
                name: t.name.clone(),
                rows_read: totals.read,
                rows_written: totals.written,
                rows_rejected: totals.rejected,
                rows_expired: totals.expired,
                ranges_total: tc.ranges.len() as u64,
                ranges_done: tc.finished.len() as u64,
                ranges_skipped: c.base_ranges as u64,
                rows_read_this_run: this_run,
                seconds: match (first, last) {
                    (Some(a), Some(b)) if b > a => (b - a).as_secs_f64(),
                    _ => 0.0,
                },
                rejects_file: (totals.rejected > 0).then(|| RunDir::rejects_file(&t.name)),
            }
        })
        .collect();
    let complete = tables.iter().all(|t| t.ranges_done == t.ranges_total);
    let status = match (error, complete) {
        (None, true) => RunStatus::Completed,
        _ => RunStatus::Stopped,
    };
    RunSummary {
        status,
        error: error.map(|e| e.to_string()),
        plan: Some(shared.opts.plan_label.clone()),
        run_dir: shared.run.path.display().to_string(),
        attempt,
        started_at: Some(time::format_rfc3339(started_secs)),
        finished_at: Some(time::format_rfc3339(time::now_secs())),
        elapsed_seconds: started.elapsed().as_secs_f64(),
        retries: shared.writer.retries(),
        retry_causes: shared.writer.retry_causes(),
        consistency: Some(shared.consistency.cql_name().to_string()),
        concurrency: Some(shared.writer.limiter().report()),
        write_timestamp,
        tables,
        resume_hint: (status != RunStatus::Completed).then(|| {
            if let Some(command) = &shared.opts.resume_command {
                return command.clone();
            }
            format!(
                "remodel backfill --plan {} --source {} --target {} --resume {}",
                shared.opts.plan_label,
                shared.source.display,
                shared.target.node,
                shared.run.path.display()
            )
        }),
    }
}

/// Runs the statements of a `schema.cql` (keyspace, types, tables), then waits for every node to
/// agree on the schema.
async fn apply_schema(session: &Session, target: &CqlTarget, cql: &str) -> Result<(), Error> {
    for stmt in crate::cqltext::statements(cql) {
        session
            .query_unpaged(stmt.as_str(), &[])
            .await
            .map_err(|e| target.failed(format!("apply `{}`", first_line(&stmt)), e))?;
    }
    session
        .await_schema_agreement()
        .await
        .map_err(|e| target.failed("wait for schema agreement", e))?;
    Ok(())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_errors_parse_counts_and_percentages() {
        assert_eq!("100".parse::<MaxErrors>(), Ok(MaxErrors::Count(100)));
        assert_eq!("0.5%".parse::<MaxErrors>(), Ok(MaxErrors::Percent(0.5)));
        assert!("x".parse::<MaxErrors>().is_err());
        assert!("150%".parse::<MaxErrors>().is_err());
        assert_eq!(MaxErrors::Percent(2.5).to_string(), "2.5%");
    }
}
