//! `remodel sync`: checks, publication and slot (with its exported snapshot), the backfill
//! inside that snapshot, then the slot's transactions applied until caught up or interrupted.

use crate::apply::{Applier, Change, WriteSettings};
use crate::checks::{self, Resolved};
use crate::derive::{self, Source};
use crate::progress::{Progress, Status};
use crate::receive::{self, Committed, Tables};
use crate::state::{
    format_lsn, load as load_state, load_finished, parse_lsn, save as save_state, SlotColumn,
    SyncState,
};
use crate::Error;
use pg_walstream::{
    CancellationToken, LogicalReplicationStream, ReplicationSlotOptions, ReplicationStreamConfig,
    StreamingMode,
};
use remodel_backfill::adaptive::Limiter;
use remodel_backfill::run::RunLock;
use remodel_backfill::target::TargetTable;
use remodel_backfill::{BackfillOptions, CqlTarget, PgSource, WriteTimestamp};
use remodel_model::Plan;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// When streaming stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAt {
    /// Once the stream reaches the WAL insert position current when streaming started (every
    /// transaction committed by then).
    CaughtUp,
    /// Never: until interrupted.
    Follow,
}

/// How to run a sync.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The run folder (`sync.json`; the backfill's run folder is `backfill/` inside it).
    pub run_dir: PathBuf,
    /// The replication slot's name (also the publication's).
    pub slot: String,
    /// When streaming stops.
    pub stop: StopAt,
    /// The backfill's options (its run folder, snapshot and write timestamp are set here).
    pub backfill: BackfillOptions,
    /// How long one target write is retried before the run stops.
    pub retry_for: Duration,
    /// Cancelled on Ctrl-C: streaming ends after the transaction being applied.
    pub cancel: CancellationToken,
}

/// The loud warning of a slot left behind.
pub fn slot_warning(slot: &str, run_dir: &std::path::Path) -> String {
    format!(
        "WARNING: replication slot {slot} now keeps every WAL segment on the source until it is dropped: a forgotten slot fills the source's disk. When done (or to give up): remodel sync --finish --source URL --run-dir {} (or in psql: SELECT pg_drop_replication_slot('{slot}'); DROP PUBLICATION {slot};)",
        run_dir.display()
    )
}

/// Sync applies every change `USING TIMESTAMP` of its commit, so a change applied again (after
/// a kill) lands once; a counter update cannot carry a timestamp and counts again: a plan with
/// counter tables is refused before anything starts.
pub fn refuse_counters(plan: &Plan) -> Result<(), Error> {
    let counters = plan.design.counter_tables();
    if counters.is_empty() {
        return Ok(());
    }
    Err(Error::Input(format!(
        "the plan has counter tables ({}), which sync cannot keep exact: it applies changes idempotently with USING TIMESTAMP, which Cassandra refuses on counters (a change applied again after a restart would count twice); plan again without them (`counter_tables = false` in the [design] table of --config)",
        counters.join(", ")
    )))
}

/// What a sync command did: the run folder's state, and what this command applied (the
/// state counts every command on the folder).
#[derive(Debug, Clone)]
pub struct Synced {
    /// `sync.json` as the command left it.
    pub state: SyncState,
    /// Transactions this command applied.
    pub transactions: u64,
    /// Row changes this command applied.
    pub changes: u64,
}

/// Runs `remodel sync`: returns what it applied once caught up (or an error, `Interrupted` on
/// Ctrl-C or SIGTERM).
pub async fn sync(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &SyncOptions,
    progress: Arc<dyn Progress>,
    backfill_progress: Arc<dyn remodel_backfill::Progress>,
) -> Result<Synced, Error> {
    let targets = TargetTable::from_plan(plan, &[])?;
    refuse_counters(plan)?;
    let sources = derive::sources(plan, &targets)?;
    // Both databases answer before anything is created: one that cannot be reached is an
    // unusable input, never a stop with a slot left behind.
    let client = source.connect().await.map_err(Error::Connect)?;
    let session = target
        .connect(
            remodel_backfill::backfill::connections(opts.backfill.concurrency),
            opts.backfill.request_timeout,
        )
        .await
        .map_err(Error::Connect)?;
    let say = |s: &str| progress.line(s);
    let resolved = checks::check(&client, &source.display, &sources, &say).await?;
    let _lock = lock_run_dir(&opts.run_dir)?;
    let (mut state, held) = open_state(&client, source, opts, &sources, &progress).await?;
    let before = (state.transactions, state.changes);
    if !state.backfill_done {
        let snapshot = held.as_ref().map(|(_, id)| id.clone());
        let bf = backfill_options(opts, &state, snapshot);
        backfill(plan, source, target, &bf, backfill_progress, &progress).await?;
        state.backfill_done = true;
        save_state(&state, &opts.run_dir)?;
    }
    // The snapshot is no longer needed: the stream opens its own connection.
    drop(held);
    let level = opts
        .backfill
        .consistency
        .unwrap_or_else(|| remodel_backfill::cql::plan_write_level(plan));
    let writes = WriteSettings {
        retry_for: opts.retry_for,
        limiter: Limiter::new(
            opts.backfill.concurrency,
            remodel_backfill::backfill::latency_ceiling(opts.backfill.request_timeout),
        ),
        consistency: remodel_backfill::cql::consistency_of(level),
    };
    progress.line(&format!(
        "writes at consistency {}, {} in flight",
        level.cql_name(),
        match opts.backfill.concurrency {
            remodel_backfill::Concurrency::Auto => "an adaptive number of requests".to_string(),
            remodel_backfill::Concurrency::Fixed(n) => format!("{n} requests"),
        }
    ));
    let applier = Applier::new(
        source,
        Arc::new(session),
        targets,
        sources,
        writes,
        progress.clone(),
    )
    .await?;
    let state = stream(&client, source, opts, applier, &resolved, state, progress).await?;
    Ok(Synced {
        transactions: state.transactions.saturating_sub(before.0),
        changes: state.changes.saturating_sub(before.1),
        state,
    })
}

/// Locks the run folder (created when missing) for this process: a second sync, or a
/// `--finish`, on a folder a sync is running in is refused, naming the pid to stop.
fn lock_run_dir(dir: &Path) -> Result<RunLock, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    RunLock::acquire(dir).map_err(|e| match e {
        remodel_backfill::Error::Locked { pid, .. } => Error::Check(format!(
            "run folder {} is in use by a running remodel sync{}: stop it first ({}: it ends after the transaction it is applying, and the same command resumes it)",
            dir.display(),
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default(),
            match pid {
                Some(p) => format!("`kill {p}` sends SIGTERM"),
                None => "Ctrl-C, or SIGTERM".to_string(),
            }
        )),
        other => Error::Database(other),
    })
}

/// The run folder's state, or a fresh run's (publication, slot, and the slot's exported
/// snapshot held open for the backfill).
async fn open_state(
    client: &tokio_postgres::Client,
    source: &PgSource,
    opts: &SyncOptions,
    sources: &[Source],
    progress: &Arc<dyn Progress>,
) -> Result<(SyncState, Option<(LogicalReplicationStream, String)>), Error> {
    if let Some(s) = load_state(&opts.run_dir)? {
        resume_checks(client, &source.display, &s).await?;
        progress.line(&format!(
            "resuming: slot {}, {}",
            s.slot,
            match (&s.applied_lsn, s.backfill_done) {
                (_, false) => "the backfill first".to_string(),
                (Some(l), true) => format!("after LSN {l}"),
                (None, true) => format!("from LSN {}", s.consistent_lsn),
            }
        ));
        return Ok((s, None));
    }
    if let Some(done) = load_finished(&opts.run_dir)? {
        return Err(Error::Input(format!(
            "{}: this sync is finished (`sync --finish` dropped its slot {} and renamed {} to {}): start a new sync in a new --run-dir",
            opts.run_dir.display(),
            done.slot,
            SyncState::FILE,
            SyncState::FINISHED_FILE
        )));
    }
    let (s, holder, snapshot) = start(client, source, opts, sources, progress).await?;
    Ok((s, Some((holder, snapshot))))
}

/// The backfill's options: its run folder inside the sync's, the write timestamp before every
/// streamed change. A fresh run's backfill reads inside the slot's snapshot (held by the slot's
/// connection until the backfill ends); a resumed one in a snapshot of its own: every change
/// since the consistent point is streamed again after it, with later timestamps, so what it
/// copies is overwritten by anything newer.
fn backfill_options(
    opts: &SyncOptions,
    state: &SyncState,
    snapshot: Option<String>,
) -> BackfillOptions {
    let mut bf = opts.backfill.clone();
    bf.run_dir = opts.run_dir.join(SyncState::BACKFILL_DIR);
    bf.write_timestamp = WriteTimestamp::Fixed(state.backfill_timestamp);
    bf.resume = snapshot.is_none() && bf.run_dir.join("checkpoint.json").is_file();
    bf.snapshot = snapshot;
    bf
}

/// Runs the backfill of `bf`; a stop is the sync's (resumable by the same command).
async fn backfill(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    bf: &BackfillOptions,
    backfill_progress: Arc<dyn remodel_backfill::Progress>,
    progress: &Arc<dyn Progress>,
) -> Result<(), Error> {
    progress.line(&format!(
        "backfill: {} (write timestamp {}, before every streamed change)",
        match (&bf.snapshot, bf.resume) {
            (Some(id), _) => format!("inside the slot's snapshot {id}"),
            (None, true) => "resuming in a new snapshot".to_string(),
            (None, false) => "in a new snapshot".to_string(),
        },
        match bf.write_timestamp {
            WriteTimestamp::Fixed(t) => t.to_string(),
            _ => "of the server".to_string(),
        }
    ));
    let summary = remodel_backfill::backfill(plan, source, target, bf, backfill_progress)
        .await
        .map_err(Error::Backfill)?;
    match summary.error {
        Some(e) => Err(Error::Input(format!("the backfill stopped: {e}"))),
        None => Ok(()),
    }
}

/// A fresh run: the publication, the slot with its exported snapshot (held open for the
/// backfill), the state.
async fn start(
    client: &tokio_postgres::Client,
    source: &PgSource,
    opts: &SyncOptions,
    sources: &[Source],
    progress: &Arc<dyn Progress>,
) -> Result<(SyncState, LogicalReplicationStream, String), Error> {
    let names: Vec<&str> = sources.iter().map(|s| s.sql.as_str()).collect();
    client
        .batch_execute(&format!(
            "CREATE PUBLICATION {} FOR TABLE {}",
            remodel_model::ident::quote(&opts.slot),
            names.join(", ")
        ))
        .await
        .map_err(Error::pg(
            &source.display,
            format!("create publication {}", opts.slot),
        ))?;
    // Every transaction the slot streams commits after this instant.
    let row = client
        .query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8 - 1",
            &[],
        )
        .await
        .map_err(Error::pg(&source.display, "read the clock"))?;
    let backfill_timestamp: i64 = row.get(0);
    let (holder, snapshot) = match open_slot(source, opts).await {
        Ok(slot) => slot,
        Err(e) => {
            // Nothing reads the publication yet: a start that failed leaves nothing behind, and
            // is refused like a failed check (a replication connection the server does not
            // allow, a slot of that name in use).
            let drop = format!(
                "DROP PUBLICATION IF EXISTS {}",
                remodel_model::ident::quote(&opts.slot)
            );
            let _ = client.batch_execute(&drop).await;
            return Err(match e {
                Error::Postgres { .. } => Error::Check(format!("{e} (nothing was created)")),
                other => other,
            });
        }
    };
    progress.line(&slot_warning(&opts.slot, &opts.run_dir));
    let row = client
        .query_one(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
            &[&opts.slot],
        )
        .await
        .map_err(Error::pg(&source.display, "read the slot"))?;
    let state = SyncState {
        slot: opts.slot.clone(),
        publication: opts.slot.clone(),
        source: source.display.clone(),
        consistent_lsn: row.get(0),
        backfill_timestamp,
        columns: columns_now(client, &source.display, sources).await?,
        ..SyncState::default()
    };
    save_state(&state, &opts.run_dir)?;
    progress.line(&format!(
        "slot {} at LSN {}, snapshot {snapshot}",
        state.slot, state.consistent_lsn
    ));
    Ok((state, holder, snapshot))
}

/// Creates the slot over a replication connection that holds its exported snapshot open;
/// returns the connection and the snapshot's id.
async fn open_slot(
    source: &PgSource,
    opts: &SyncOptions,
) -> Result<(LogicalReplicationStream, String), Error> {
    let config = ReplicationStreamConfig::builder(opts.slot.clone(), opts.slot.clone())
        .with_protocol_version(1)
        .with_slot_options(ReplicationSlotOptions {
            snapshot: Some("export".into()),
            ..Default::default()
        });
    let config = config.with_streaming_mode(StreamingMode::Off);
    let mut holder = LogicalReplicationStream::new(&source.replication_conninfo(), config)
        .await
        .map_err(Error::repl(&source.display, "replication connection"))?;
    holder.ensure_replication_slot().await.map_err(Error::repl(
        &source.display,
        format!("create slot {}", opts.slot),
    ))?;
    let snapshot = holder
        .exported_snapshot_name()
        .map(str::to_string)
        .ok_or_else(|| {
            Error::Check(format!(
                "slot {} existed already (no snapshot exported): drop it or choose another --slot",
                opts.slot
            ))
        })?;
    Ok((holder, snapshot))
}

/// Each source table's columns and types in the catalog, by the plan's table key.
async fn columns_now(
    client: &tokio_postgres::Client,
    display: &str,
    sources: &[Source],
) -> Result<BTreeMap<String, Vec<SlotColumn>>, Error> {
    let mut out = BTreeMap::new();
    for s in sources {
        let rows = client
            .query(
                "SELECT attname::text, atttypid, atttypmod FROM pg_attribute \
                 WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                &[&s.sql],
            )
            .await
            .map_err(Error::pg(display, format!("read the columns of {}", s.key)))?;
        let columns = rows
            .iter()
            .map(|r| SlotColumn {
                name: r.get(0),
                type_oid: r.get(1),
                type_modifier: r.get(2),
            })
            .collect();
        out.insert(s.key.clone(), columns);
    }
    Ok(out)
}

/// A resumed run's slot must still be there (a dropped slot lost the changes since).
async fn resume_checks(
    client: &tokio_postgres::Client,
    display: &str,
    s: &SyncState,
) -> Result<(), Error> {
    let row = client
        .query_opt(
            "SELECT active FROM pg_replication_slots WHERE slot_name = $1",
            &[&s.slot],
        )
        .await
        .map_err(Error::pg(display, "read the slot"))?;
    match row.map(|r| r.get::<_, bool>(0)) {
        None => Err(Error::Check(format!(
            "slot {} of this run folder is gone from the source: the changes since it was dropped are lost; start again in a new --run-dir",
            s.slot
        ))),
        Some(true) => Err(Error::Check(format!(
            "slot {} is in use by another process (another remodel sync?): stop it first",
            s.slot
        ))),
        Some(false) => Ok(()),
    }
}

/// At most this many transactions, or about this many row changes, are applied in one round.
const ROUND_TRANSACTIONS: usize = 1_000;
const ROUND_CHANGES: usize = 5_000;

/// Streams from the state's LSN and applies the committed transactions, every one already
/// received in one round.
async fn stream(
    client: &tokio_postgres::Client,
    source: &PgSource,
    opts: &SyncOptions,
    mut applier: Applier,
    resolved: &[Resolved],
    mut state: SyncState,
    progress: Arc<dyn Progress>,
) -> Result<SyncState, Error> {
    let (repl, target_lsn) = open_stream(client, source, opts, &state, &progress).await?;
    let feedback = repl.shared_lsn_feedback.clone();
    let tables = Tables {
        sources: applier.sources.clone(),
        by_name: resolved
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.schema.clone(), r.name.clone()), i))
            .collect(),
        columns: state.columns.clone(),
    };
    let mut reader = receive::spawn(repl, tables, source.display.clone(), opts.cancel.clone());
    let started = (state.transactions, state.changes);
    let retried_before = state.retry_causes.clone();
    let mut status = Status {
        total_transactions: state.transactions,
        total_changes: state.changes,
        applied_lsn: parse_lsn(state.resume_lsn()).unwrap_or(0),
        target_lsn,
        ..Status::default()
    };
    while let Some(first) = reader.rx.recv().await {
        let (round, ended) = take_round(first, &mut reader.rx);
        if let Some(last) = round.last() {
            record_writes(&applier, &retried_before, &mut state);
            let written = apply_round(&mut applier, &round, &mut state, opts).await;
            if written.is_err() {
                // The retries of a round that stopped the run are on record too.
                record_writes(&applier, &retried_before, &mut state);
                save_state(&state, &opts.run_dir)?;
            }
            written?;
            feedback.update_flushed_lsn(last.end_lsn);
            feedback.update_applied_lsn(last.end_lsn);
            status.transactions = state.transactions - started.0;
            status.changes = state.changes - started.1;
            status.total_transactions = state.transactions;
            status.total_changes = state.changes;
            status.applied_lsn = last.end_lsn;
            status.received_lsn = reader.received.load(Ordering::Relaxed);
            status.lag_seconds = (now_micros() - last.commit_micros).max(0) as f64 / 1e6;
            status.level = applier.limiter().level();
            status.retries = applier.retry_causes().total();
            progress.status(&status);
        }
        if let Some(e) = ended {
            return Err(e);
        }
        if opts.cancel.is_cancelled() {
            return Err(Error::Interrupted);
        }
    }
    if opts.cancel.is_cancelled() {
        return Err(Error::Interrupted);
    }
    record_writes(&applier, &retried_before, &mut state);
    save_state(&state, &opts.run_dir)?;
    progress.status(&status);
    Ok(state)
}

/// The replication stream from the state's LSN, started; with `--until-caught-up`, bounded by
/// the WAL insert position now (returned).
async fn open_stream(
    client: &tokio_postgres::Client,
    source: &PgSource,
    opts: &SyncOptions,
    state: &SyncState,
    progress: &Arc<dyn Progress>,
) -> Result<(LogicalReplicationStream, Option<u64>), Error> {
    let mut config =
        ReplicationStreamConfig::builder(state.slot.clone(), state.publication.clone())
            .with_protocol_version(1)
            .with_feedback_interval(Duration::from_secs(1));
    config = config
        .with_streaming_mode(StreamingMode::Off)
        .with_existing_slot_required(true);
    let mut target_lsn = None;
    if opts.stop == StopAt::CaughtUp {
        // The insert position, not pg_current_wal_lsn() (the position written): with
        // synchronous_commit = off a transaction is committed and visible once its commit record
        // is inserted, up to wal_writer_delay before it is written, and a target below it ends
        // the stream at the first commit past the written position, leaving the rest unapplied.
        let row = client
            .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
            .await
            .map_err(Error::pg(&source.display, "pg_current_wal_insert_lsn()"))?;
        let text: String = row.get(0);
        let lsn = parse_lsn(&text).unwrap_or(0);
        target_lsn = Some(lsn);
        config = config.with_stop_at_lsn(lsn);
        progress.line(&format!(
            "streaming from LSN {} until LSN {text} (the current one)",
            state.resume_lsn()
        ));
    } else {
        progress.line(&format!(
            "streaming from LSN {} until stopped (Ctrl-C or SIGTERM)",
            state.resume_lsn()
        ));
    }
    let mut repl = LogicalReplicationStream::new(&source.replication_conninfo(), config)
        .await
        .map_err(Error::repl(&source.display, "replication connection"))?;
    let start_lsn = parse_lsn(state.resume_lsn()).unwrap_or(0);
    repl.start(Some(start_lsn)).await.map_err(Error::repl(
        &source.display,
        format!("start streaming slot {}", state.slot),
    ))?;
    Ok((repl, target_lsn))
}

/// The retries (those of earlier commands on the folder, `before`, plus this one's) and the
/// level of the writes, into the state (saved with the next round).
fn record_writes(applier: &Applier, before: &remodel_model::RetryCauses, state: &mut SyncState) {
    state.retry_causes = before.plus(&applier.retry_causes());
    state.concurrency = Some(applier.limiter().report());
}

/// `first` and every transaction already received after it, up to a round's size; the error
/// that ended the stream, when one came in the round (after its last transaction).
fn take_round(
    first: Result<Committed, Error>,
    rx: &mut tokio::sync::mpsc::Receiver<Result<Committed, Error>>,
) -> (Vec<Committed>, Option<Error>) {
    let mut round = Vec::new();
    let mut changes = 0;
    let mut next = Some(first);
    while let Some(item) = next.take() {
        match item {
            Ok(c) => {
                changes += c.changes.len();
                round.push(c);
            }
            Err(e) => return (round, Some(e)),
        }
        if round.len() < ROUND_TRANSACTIONS && changes < ROUND_CHANGES {
            next = rx.try_recv().ok();
        }
    }
    (round, None)
}

/// Applies a round of transactions, each `USING TIMESTAMP` of its commit (strictly increasing
/// along the stream), then records the last one's LSN. A change that cannot be applied is found
/// by applying the round's transactions one at a time, so the stop names its LSN and every
/// transaction before it is applied and recorded.
async fn apply_round(
    applier: &mut Applier,
    round: &[Committed],
    state: &mut SyncState,
    opts: &SyncOptions,
) -> Result<(), Error> {
    let mut ts = state.last_timestamp;
    let stamped: Vec<(&[Change], i64)> = round
        .iter()
        .filter(|c| !c.changes.is_empty())
        .map(|c| {
            ts = c.commit_micros.max(ts + 1);
            (c.changes.as_slice(), ts)
        })
        .collect();
    if stamped.is_empty() {
        return Ok(());
    }
    match applier.apply(&stamped).await {
        Ok(_) => {}
        Err(Error::Input(reason)) if round.len() == 1 => {
            return Err(Error::Stopped {
                lsn: format_lsn(round[0].end_lsn),
                reason,
            })
        }
        Err(Error::Input(_)) => {
            for one in round {
                Box::pin(apply_round(applier, std::slice::from_ref(one), state, opts)).await?;
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    state.last_timestamp = ts;
    state.transactions += stamped.len() as u64;
    state.changes += stamped.iter().map(|(c, _)| c.len() as u64).sum::<u64>();
    if let Some(last) = round.last() {
        state.applied_lsn = Some(format_lsn(last.end_lsn));
    }
    // On disk before the slot hears of it: a restart begins after this round.
    save_state(state, &opts.run_dir)
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// `remodel sync --finish`: drops the run's slot and publication, and renames `sync.json` to
/// `sync.finished.json`; returns what it did, a line each. Refused while a sync runs in the
/// folder; a folder finished already is said so.
pub async fn finish(source: &PgSource, run_dir: &Path) -> Result<Vec<String>, Error> {
    let Some(state) = load_state(run_dir)? else {
        return match load_finished(run_dir)? {
            Some(done) => Ok(vec![format!(
                "already finished: slot {} and publication {} were dropped by an earlier --finish ({})",
                done.slot,
                done.publication,
                run_dir.join(SyncState::FINISHED_FILE).display()
            )]),
            None => Err(Error::Input(format!(
                "{}: no {} there (give the --run-dir of the sync)",
                run_dir.display(),
                SyncState::FILE
            ))),
        };
    };
    let _lock = lock_run_dir(run_dir)?;
    let client = source.connect().await.map_err(Error::Connect)?;
    let mut out = Vec::new();
    let dropped = client
        .query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
            &[&state.slot],
        )
        .await
        .map_err(Error::pg(&source.display, format!("drop slot {}", state.slot)))?;
    out.push(if dropped.is_empty() {
        format!("slot {}: already gone", state.slot)
    } else {
        format!(
            "slot {}: dropped (the source keeps no WAL for it any more)",
            state.slot
        )
    });
    client
        .batch_execute(&format!(
            "DROP PUBLICATION IF EXISTS {}",
            remodel_model::ident::quote(&state.publication)
        ))
        .await
        .map_err(Error::pg(
            &source.display,
            format!("drop publication {}", state.publication),
        ))?;
    out.push(format!("publication {}: dropped", state.publication));
    let done = run_dir.join(SyncState::FINISHED_FILE);
    std::fs::rename(run_dir.join(SyncState::FILE), &done).map_err(|e| Error::Io {
        path: done.clone(),
        message: e.to_string(),
    })?;
    out.push(format!(
        "{} renamed to {}: a new sync needs a new --run-dir",
        SyncState::FILE,
        done.display()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("remodel-sync-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn state() -> SyncState {
        SyncState {
            slot: "s1".into(),
            publication: "s1".into(),
            consistent_lsn: "0/1".into(),
            ..SyncState::default()
        }
    }

    /// Nowhere: a finish that reached the database would fail differently.
    fn nowhere() -> PgSource {
        PgSource::new("postgres://app@127.0.0.1:1/db?connect_timeout=2")
    }

    #[tokio::test]
    async fn finish_is_refused_while_a_sync_holds_the_folder_and_leaves_no_lock() {
        let dir = scratch("locked");
        let held = lock_run_dir(&dir).expect("the first lock");
        save_state(&state(), &dir).expect("sync.json");
        let e = finish(&nowhere(), &dir).await.expect_err("a running sync");
        let pid = std::process::id();
        assert!(
            matches!(&e, Error::Check(m) if m.contains(&format!("in use by a running remodel sync (pid {pid}): stop it first (`kill {pid}` sends SIGTERM"))),
            "{e}"
        );
        drop(held);
        assert!(!dir.join(remodel_backfill::run::LOCK_FILE).exists());
        let e = finish(&nowhere(), &dir).await.expect_err("no database");
        assert!(matches!(e, Error::Connect(_)), "{e}");
        assert!(!dir.join(remodel_backfill::run::LOCK_FILE).exists());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[tokio::test]
    async fn finish_of_a_finished_folder_says_so() {
        let dir = scratch("finished");
        std::fs::create_dir_all(&dir).expect("folder");
        let text = serde_json::to_string(&state()).expect("json");
        std::fs::write(dir.join(SyncState::FINISHED_FILE), text).expect("finished state");
        let lines = finish(&nowhere(), &dir).await.expect("already finished");
        assert_eq!(
            lines,
            [format!(
                "already finished: slot s1 and publication s1 were dropped by an earlier --finish ({})",
                dir.join(SyncState::FINISHED_FILE).display()
            )]
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
