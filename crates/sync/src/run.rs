//! `remodel sync`: checks, publication and slot (with its exported snapshot), the backfill
//! inside that snapshot, then the slot's transactions applied until caught up or interrupted.

use crate::apply::{Applier, Change};
use crate::checks::{self, Resolved};
use crate::derive::{self, Source};
use crate::state::{format_lsn, parse_lsn, SyncState};
use crate::Error;
use pg_walstream::{
    CancellationToken, ChangeEvent, EventType, LogicalReplicationStream, ReplicationError,
    ReplicationSlotOptions, ReplicationStreamConfig, RowData, StreamingMode,
};
use remodel_backfill::target::TargetTable;
use remodel_backfill::{BackfillOptions, CqlTarget, PgSource, WriteTimestamp};
use remodel_model::Plan;
use std::collections::HashMap;
use std::path::PathBuf;
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

/// Where streaming is.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Transactions applied (this run's life, all attempts).
    pub transactions: u64,
    /// Row changes applied.
    pub changes: u64,
    /// The last acknowledged transaction's end LSN.
    pub applied_lsn: u64,
    /// The furthest LSN the server sent.
    pub received_lsn: u64,
    /// With `--until-caught-up`: the LSN to reach.
    pub target_lsn: Option<u64>,
    /// Seconds between the last applied commit and its application.
    pub lag_seconds: f64,
}

/// What a sync tells while it runs (the cli draws it; this crate knows no terminal).
pub trait Progress: Send + Sync {
    /// A line to show (checks, phases, warnings).
    fn line(&self, text: &str);
    /// Streaming progress, after each applied transaction.
    fn status(&self, status: &Status);
}

/// The loud warning of a slot left behind.
pub fn slot_warning(slot: &str, run_dir: &std::path::Path) -> String {
    format!(
        "WARNING: replication slot {slot} now keeps every WAL segment on the source until it is dropped: a forgotten slot fills the source's disk. When done (or to give up): remodel sync --finish --source URL --run-dir {} (or in psql: SELECT pg_drop_replication_slot('{slot}'); DROP PUBLICATION {slot};)",
        run_dir.display()
    )
}

/// Runs `remodel sync`: returns the state once caught up (or an error, `Interrupted` on Ctrl-C).
pub async fn sync(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &SyncOptions,
    progress: Arc<dyn Progress>,
    backfill_progress: Arc<dyn remodel_backfill::Progress>,
) -> Result<SyncState, Error> {
    let targets = TargetTable::from_plan(plan, &[])?;
    let sources = derive::sources(plan, &targets)?;
    let client = source.connect().await?;
    let say = |s: &str| progress.line(s);
    let resolved = checks::check(&client, &source.display, &sources, &say).await?;
    std::fs::create_dir_all(&opts.run_dir).map_err(|e| Error::Io {
        path: opts.run_dir.clone(),
        message: e.to_string(),
    })?;
    // A fresh run's backfill reads inside the slot's snapshot (held by the slot's connection
    // until the backfill ends); a resumed one in a snapshot of its own: every change since the
    // consistent point is streamed again after it, with later timestamps, so what it copies is
    // overwritten by anything newer.
    let (mut state, held) = match SyncState::load(&opts.run_dir)? {
        Some(s) => {
            resume_checks(&client, &source.display, &s).await?;
            progress.line(&format!(
                "resuming: slot {}, {}",
                s.slot,
                match (&s.applied_lsn, s.backfill_done) {
                    (_, false) => "the backfill first".to_string(),
                    (Some(l), true) => format!("after LSN {l}"),
                    (None, true) => format!("from LSN {}", s.consistent_lsn),
                }
            ));
            (s, None)
        }
        None => {
            let (s, holder, snapshot) = start(&client, source, opts, &sources, &progress).await?;
            (s, Some((holder, snapshot)))
        }
    };
    if !state.backfill_done {
        let mut bf = opts.backfill.clone();
        bf.run_dir = opts.run_dir.join("backfill");
        bf.write_timestamp = WriteTimestamp::Fixed(state.backfill_timestamp);
        bf.resume = held.is_none() && bf.run_dir.join("checkpoint.json").is_file();
        bf.snapshot = held.as_ref().map(|(_, id)| id.clone());
        progress.line(&format!(
            "backfill: {} (write timestamp {}, before every streamed change)",
            match (&bf.snapshot, bf.resume) {
                (Some(id), _) => format!("inside the slot's snapshot {id}"),
                (None, true) => "resuming in a new snapshot".to_string(),
                (None, false) => "in a new snapshot".to_string(),
            },
            state.backfill_timestamp
        ));
        let summary =
            remodel_backfill::backfill(plan, source, target, &bf, backfill_progress).await?;
        if let Some(e) = summary.error {
            return Err(Error::Input(format!("the backfill stopped: {e}")));
        }
        state.backfill_done = true;
        state.save(&opts.run_dir)?;
    }
    // The snapshot is no longer needed: the stream opens its own connection.
    drop(held);
    let session = Arc::new(
        target
            .connect(2, Duration::from_secs(12))
            .await
            .map_err(Error::Backfill)?,
    );
    let applier = Applier::new(source, session, targets, sources, opts.retry_for).await?;
    stream(&client, source, opts, applier, &resolved, state, progress).await
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
    progress.line(&slot_warning(&opts.slot, &opts.run_dir));
    let snapshot = holder
        .exported_snapshot_name()
        .map(str::to_string)
        .ok_or_else(|| {
            Error::Check(format!(
                "slot {} existed already (no snapshot exported): drop it or choose another --slot",
                opts.slot
            ))
        })?;
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
        ..SyncState::default()
    };
    state.save(&opts.run_dir)?;
    progress.line(&format!(
        "slot {} at LSN {}, snapshot {snapshot}",
        state.slot, state.consistent_lsn
    ));
    Ok((state, holder, snapshot))
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

/// The transaction being received.
#[derive(Default)]
struct Txn {
    changes: Vec<Change>,
}

/// Streams from the state's LSN and applies each committed transaction.
async fn stream(
    client: &tokio_postgres::Client,
    source: &PgSource,
    opts: &SyncOptions,
    mut applier: Applier,
    resolved: &[Resolved],
    mut state: SyncState,
    progress: Arc<dyn Progress>,
) -> Result<SyncState, Error> {
    let by_name: HashMap<(String, String), usize> = resolved
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.schema.clone(), r.name.clone()), i))
        .collect();
    let mut config =
        ReplicationStreamConfig::builder(state.slot.clone(), state.publication.clone())
            .with_protocol_version(1)
            .with_feedback_interval(Duration::from_secs(1));
    config = config
        .with_streaming_mode(StreamingMode::Off)
        .with_existing_slot_required(true);
    let mut status = Status {
        transactions: state.transactions,
        changes: state.changes,
        applied_lsn: parse_lsn(state.resume_lsn()).unwrap_or(0),
        ..Status::default()
    };
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
        status.target_lsn = Some(lsn);
        config = config.with_stop_at_lsn(lsn);
        progress.line(&format!(
            "streaming from LSN {} until LSN {text} (the current one)",
            state.resume_lsn()
        ));
    } else {
        progress.line(&format!(
            "streaming from LSN {} until Ctrl-C",
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
    let mut txn = Txn::default();
    loop {
        let event = match repl.next_event(&opts.cancel).await {
            Ok(e) => e,
            Err(ReplicationError::StreamStopped { .. }) => break,
            Err(_) if opts.cancel.is_cancelled() => return Err(Error::Interrupted),
            Err(e) => return Err(Error::repl(&source.display, "stream")(e)),
        };
        let commit = on_event(event, &by_name, &applier, &mut txn)?;
        let Some((end_lsn, commit_micros)) = commit else {
            continue;
        };
        let changes = std::mem::take(&mut txn.changes);
        if !changes.is_empty() {
            let ts = commit_micros.max(state.last_timestamp + 1);
            applier.apply(&changes, ts).await.map_err(|e| match e {
                Error::Input(reason) => Error::Stopped {
                    lsn: format_lsn(end_lsn),
                    reason,
                },
                e => e,
            })?;
            state.last_timestamp = ts;
            state.transactions += 1;
            state.changes += changes.len() as u64;
            state.applied_lsn = Some(format_lsn(end_lsn));
            // On disk before the slot hears of it: a restart begins after this transaction.
            state.save(&opts.run_dir)?;
        }
        repl.shared_lsn_feedback.update_flushed_lsn(end_lsn);
        repl.shared_lsn_feedback.update_applied_lsn(end_lsn);
        status.transactions = state.transactions;
        status.changes = state.changes;
        status.applied_lsn = end_lsn;
        status.received_lsn = repl.current_lsn();
        status.lag_seconds = (now_micros() - commit_micros).max(0) as f64 / 1e6;
        progress.status(&status);
        if opts.cancel.is_cancelled() {
            let _ = repl.stop().await;
            return Err(Error::Interrupted);
        }
    }
    state.save(&opts.run_dir)?;
    progress.status(&status);
    Ok(state)
}

/// Takes one event into the transaction; returns the end LSN and commit time (microseconds) on
/// a commit.
fn on_event(
    event: ChangeEvent,
    by_name: &HashMap<(String, String), usize>,
    applier: &Applier,
    txn: &mut Txn,
) -> Result<Option<(u64, i64)>, Error> {
    let lsn = event.lsn;
    let find = |schema: &str, table: &str| by_name.get(&(schema.to_string(), table.to_string()));
    match event.event_type {
        EventType::Begin { .. } => txn.changes.clear(),
        EventType::Insert {
            schema,
            table,
            data,
            ..
        } => {
            if let Some(&i) = find(&schema, &table) {
                let new = image(&applier.sources[i], &data, None, lsn.value())?;
                txn.changes.push(Change {
                    source: i,
                    old: None,
                    new: Some(new),
                });
            }
        }
        EventType::Update {
            schema,
            table,
            old_data,
            new_data,
            ..
        } => {
            if let Some(&i) = find(&schema, &table) {
                let s = &applier.sources[i];
                let old = old_data
                    .as_ref()
                    .map(|o| image(s, o, None, 0))
                    .transpose()?;
                let new = image(s, &new_data, old_data.as_ref(), lsn.value())?;
                txn.changes.push(Change {
                    source: i,
                    old,
                    new: Some(new),
                });
            }
        }
        EventType::Delete {
            schema,
            table,
            old_data,
            ..
        } => {
            if let Some(&i) = find(&schema, &table) {
                let old = image(&applier.sources[i], &old_data, None, 0)?;
                txn.changes.push(Change {
                    source: i,
                    old: Some(old),
                    new: None,
                });
            }
        }
        EventType::Truncate { tables, .. } => {
            if let Some(t) = tables.iter().find(|t| {
                by_name
                    .keys()
                    .any(|(s, n)| t.as_ref() == format!("{s}.{n}") || t.as_ref() == n)
            }) {
                return Err(Error::Stopped {
                    lsn: format_lsn(lsn.value()),
                    reason: format!("TRUNCATE of {t}: sync does not follow it; truncate the target tables it feeds by hand, then start a new sync"),
                });
            }
        }
        EventType::Relation {
            namespace,
            relation_name,
            columns,
            ..
        } => {
            if let Some(&i) = find(&namespace, &relation_name) {
                let s = &applier.sources[i];
                let now: Vec<&str> = columns.iter().map(|c| c.name.as_ref()).collect();
                if now != s.columns.iter().map(String::as_str).collect::<Vec<_>>() {
                    return Err(Error::Stopped {
                        lsn: format_lsn(lsn.value()),
                        reason: format!(
                            "DDL changed table {} (columns now {}; the plan has {}): plan again for the new schema, then start a new sync",
                            s.key,
                            now.join(", "),
                            s.columns.join(", ")
                        ),
                    });
                }
            }
        }
        EventType::Commit {
            commit_timestamp,
            end_lsn,
            ..
        } => {
            return Ok(Some((end_lsn.value(), commit_timestamp.timestamp_micros())));
        }
        _ => {}
    }
    Ok(None)
}

/// A row image as a JSON object of its columns' text (NULL as null); a column the WAL left out
/// (an unchanged TOAST value) is taken from `old`, else the change cannot be applied.
fn image(s: &Source, row: &RowData, old: Option<&RowData>, lsn: u64) -> Result<String, Error> {
    let mut obj = serde_json::Map::new();
    for (layer, from_old) in [(old, true), (Some(row), false)] {
        let Some(layer) = layer else { continue };
        for (name, v) in layer.iter() {
            let value = match v.as_str() {
                Some(t) if !v.is_null() => serde_json::Value::String(t.to_string()),
                _ => serde_json::Value::Null,
            };
            if from_old && obj.contains_key(name.as_ref()) {
                continue;
            }
            obj.insert(name.to_string(), value);
        }
    }
    if lsn != 0 {
        if let Some(missing) = s.columns.iter().find(|c| !obj.contains_key(c.as_str())) {
            return Err(Error::Stopped {
                lsn: format_lsn(lsn),
                reason: format!(
                    "the WAL left out {}.{missing} (an unchanged TOAST value) and no old row holds it: ALTER TABLE {} REPLICA IDENTITY FULL, then start a new sync",
                    s.key, s.sql
                ),
            });
        }
    }
    Ok(serde_json::Value::Object(obj).to_string())
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// `remodel sync --finish`: drops the run's slot and publication; returns what it did, a line
/// each.
pub async fn finish(source: &PgSource, run_dir: &std::path::Path) -> Result<Vec<String>, Error> {
    let state = SyncState::load(run_dir)?.ok_or_else(|| {
        Error::Input(format!(
            "{}: no {} there (give the --run-dir of the sync)",
            run_dir.display(),
            SyncState::FILE
        ))
    })?;
    let client = source.connect().await?;
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
    let done = run_dir.join("sync.finished.json");
    std::fs::rename(run_dir.join(SyncState::FILE), &done).map_err(|e| Error::Io {
        path: done,
        message: e.to_string(),
    })?;
    Ok(out)
}
