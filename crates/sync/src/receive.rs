//! The slot's stream read in a task of its own: events assembled into committed transactions and
//! handed to the applier through a bounded channel. The replication connection keeps answering
//! the server (keepalives, feedback) while Cassandra is slow or paused, and the applier takes
//! every transaction already received in one round. A change sync cannot follow (DDL on a plan
//! table, TRUNCATE, a row image without a needed value) ends the channel with an error after the
//! transactions committed before it, so those are applied and confirmed first.

use crate::apply::Change;
use crate::derive::Source;
use crate::state::{format_lsn, SlotColumn};
use crate::Error;
use pg_walstream::{
    CancellationToken, ChangeEvent, EventType, LogicalReplicationStream, RelationColumn,
    ReplicaIdentity, ReplicationError, RowData,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Transactions received and not yet applied, at most: a bound on memory while Cassandra is
/// slow (the server keeps the rest in the slot).
const QUEUE: usize = 10_000;

/// A committed transaction of the plan's tables, as received.
#[derive(Debug)]
pub struct Committed {
    /// Its row changes in order (none: it touched no plan table; its LSN still confirms).
    pub changes: Vec<Change>,
    /// Its end LSN: where a restart after it begins.
    pub end_lsn: u64,
    /// Its commit time, microseconds since the epoch.
    pub commit_micros: i64,
}

/// What the reader knows of the plan's tables.
pub struct Tables {
    /// The plan's source tables (the applier's indexes).
    pub sources: Vec<Source>,
    /// Each source table's index by where the WAL names it (schema, name).
    pub by_name: HashMap<(String, String), usize>,
    /// Each table's columns with their types when the slot was created (by table key; empty for
    /// a run folder of an older remodel: the names are checked against the plan only).
    pub columns: BTreeMap<String, Vec<SlotColumn>>,
}

/// The reading task's end of the channel.
pub struct Reader {
    /// Committed transactions in commit order, then at most one error; closed at the end of the
    /// stream (caught up, cancelled).
    pub rx: mpsc::Receiver<Result<Committed, Error>>,
    /// The furthest LSN the server sent.
    pub received: Arc<AtomicU64>,
}

/// Starts reading `repl` (already started) into a channel.
pub fn spawn(
    mut repl: LogicalReplicationStream,
    tables: Tables,
    display: String,
    cancel: CancellationToken,
) -> Reader {
    let (tx, rx) = mpsc::channel(QUEUE);
    let received = Arc::new(AtomicU64::new(0));
    let seen = received.clone();
    tokio::spawn(async move {
        let mut txn = Vec::new();
        loop {
            let event = match repl.next_event(&cancel).await {
                Ok(e) => e,
                Err(ReplicationError::StreamStopped { .. }) => break,
                Err(_) if cancel.is_cancelled() => break,
                Err(e) => {
                    let _ = tx.send(Err(Error::repl(&display, "stream")(e))).await;
                    break;
                }
            };
            seen.store(repl.current_lsn(), Ordering::Relaxed);
            let sent = match on_event(event, &tables, &mut txn) {
                Ok(None) => continue,
                Ok(Some(c)) => tx.send(Ok(c)).await,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    break;
                }
            };
            if sent.is_err() {
                // The applier stopped (an error of its own): nothing more to read for.
                break;
            }
        }
        let _ = repl.stop().await;
    });
    Reader { rx, received }
}

/// Takes one event into the transaction being received; returns it once committed.
fn on_event(
    event: ChangeEvent,
    tables: &Tables,
    txn: &mut Vec<Change>,
) -> Result<Option<Committed>, Error> {
    let lsn = event.lsn.value();
    let find = |schema: &str, table: &str| {
        tables
            .by_name
            .get(&(schema.to_string(), table.to_string()))
            .copied()
    };
    match event.event_type {
        EventType::Begin { .. } => txn.clear(),
        EventType::Insert {
            schema,
            table,
            data,
            ..
        } => {
            if let Some(i) = find(&schema, &table) {
                let new = image(&tables.sources[i], &data, None, lsn)?;
                txn.push(Change {
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
            if let Some(i) = find(&schema, &table) {
                let s = &tables.sources[i];
                let old = old_data
                    .as_ref()
                    .map(|o| image(s, o, None, 0))
                    .transpose()?;
                let new = image(s, &new_data, old_data.as_ref(), lsn)?;
                txn.push(Change {
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
            if let Some(i) = find(&schema, &table) {
                let old = image(&tables.sources[i], &old_data, None, 0)?;
                txn.push(Change {
                    source: i,
                    old: Some(old),
                    new: None,
                });
            }
        }
        EventType::Truncate { tables: names, .. } => not_truncated(tables, &names, lsn)?,
        EventType::Relation {
            namespace,
            relation_name,
            replica_identity,
            columns,
            ..
        } => {
            if let Some(i) = find(&namespace, &relation_name) {
                relation_unchanged(tables, i, &replica_identity, &columns, lsn)?;
            }
        }
        EventType::Commit {
            commit_timestamp,
            end_lsn,
            ..
        } => {
            return Ok(Some(Committed {
                changes: std::mem::take(txn),
                end_lsn: end_lsn.value(),
                commit_micros: commit_timestamp.timestamp_micros(),
            }));
        }
        _ => {}
    }
    Ok(None)
}

/// What a Relation message (pgoutput sends one before a table's first change on a connection
/// and after each change of its definition) tells that sync cannot follow: columns other than
/// the plan's (a DDL since the plan was made), a column's type changed since the slot was
/// created, or a replica identity that no longer gives the old values the targets need.
/// Stops the stream (at `lsn`) at a TRUNCATE of a table the plan reads: sync cannot follow it.
fn not_truncated(tables: &Tables, names: &[Arc<str>], lsn: u64) -> Result<(), Error> {
    let ours = |t: &&Arc<str>| {
        tables
            .by_name
            .keys()
            .any(|(s, n)| t.as_ref() == format!("{s}.{n}") || t.as_ref() == n)
    };
    match names.iter().find(ours) {
        Some(t) => Err(Error::Stopped {
            lsn: format_lsn(lsn),
            reason: format!("TRUNCATE of {t}: sync does not follow it; truncate the target tables it feeds by hand, then start a new sync"),
        }),
        None => Ok(()),
    }
}

/// Stops the stream (at `lsn`) when the Relation message of the plan's source table `i` differs
/// from the columns and replica identity sync follows.
fn relation_unchanged(
    tables: &Tables,
    i: usize,
    identity: &ReplicaIdentity,
    columns: &[RelationColumn],
    lsn: u64,
) -> Result<(), Error> {
    let s = &tables.sources[i];
    let expected = tables.columns.get(&s.key).map(Vec::as_slice);
    match relation_change(s, expected, identity, columns) {
        Some(reason) => Err(Error::Stopped {
            lsn: format_lsn(lsn),
            reason,
        }),
        None => Ok(()),
    }
}

pub fn relation_change(
    s: &Source,
    expected: Option<&[SlotColumn]>,
    identity: &ReplicaIdentity,
    columns: &[RelationColumn],
) -> Option<String> {
    let now: Vec<&str> = columns.iter().map(|c| c.name.as_ref()).collect();
    if now != s.columns.iter().map(String::as_str).collect::<Vec<_>>() {
        return Some(format!(
            "DDL changed table {} (columns now {}; the plan has {}): plan again for the new schema, then start a new sync",
            s.key,
            now.join(", "),
            s.columns.join(", ")
        ));
    }
    if let Some(expected) = expected {
        let changed = columns
            .iter()
            .zip(expected)
            .find(|(c, e)| c.type_id != e.type_oid || c.type_modifier != e.type_modifier);
        if let Some((c, e)) = changed {
            return Some(format!(
                "DDL changed table {}: column {} has type oid {} (modifier {}) where the slot's start had {} ({}): plan again for the new schema, then start a new sync",
                s.key, c.name, c.type_id, c.type_modifier, e.type_oid, e.type_modifier
            ));
        }
    }
    if !s.needs_full.is_empty() && !matches!(identity, ReplicaIdentity::Full) {
        return Some(format!(
            "the REPLICA IDENTITY of {} is no longer FULL ({identity:?}); it needs FULL because {}: ALTER TABLE {} REPLICA IDENTITY FULL, then start a new sync",
            s.key,
            s.needs_full.join("; "),
            s.sql
        ));
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    fn source(needs_full: bool) -> Source {
        Source {
            key: "trips".into(),
            sql: "\"trips\"".into(),
            columns: vec!["trip_id".into(), "status".into()],
            primary_key: vec!["trip_id".into()],
            feeds: Vec::new(),
            needs_full: if needs_full {
                vec!["trips_by_status is keyed by status (outside the primary key)".into()]
            } else {
                Vec::new()
            },
        }
    }

    fn column(name: &str, type_id: u32, type_modifier: i32) -> RelationColumn {
        RelationColumn {
            name: name.into(),
            type_id,
            type_modifier,
            is_key: false,
        }
    }

    fn typed(name: &str, type_oid: u32, type_modifier: i32) -> SlotColumn {
        SlotColumn {
            name: name.into(),
            type_oid,
            type_modifier,
        }
    }

    #[test]
    fn the_plan_s_columns_and_the_slot_s_types_pass() {
        let expected = [typed("trip_id", 2950, -1), typed("status", 25, -1)];
        let now = [column("trip_id", 2950, -1), column("status", 25, -1)];
        assert_eq!(
            relation_change(&source(true), Some(&expected), &ReplicaIdentity::Full, &now),
            None
        );
        // A run folder without the slot's types checks the names only.
        assert_eq!(
            relation_change(&source(false), None, &ReplicaIdentity::Default, &now),
            None
        );
    }

    #[test]
    fn an_added_column_a_changed_type_and_a_lost_identity_stop() {
        let expected = [typed("trip_id", 2950, -1), typed("status", 25, -1)];
        let added = [
            column("trip_id", 2950, -1),
            column("status", 25, -1),
            column("note", 25, -1),
        ];
        let why = relation_change(
            &source(false),
            Some(&expected),
            &ReplicaIdentity::Default,
            &added,
        );
        assert_eq!(
            why.as_deref(),
            Some("DDL changed table trips (columns now trip_id, status, note; the plan has trip_id, status): plan again for the new schema, then start a new sync")
        );
        let retyped = [column("trip_id", 2950, -1), column("status", 1043, 24)];
        let why = relation_change(
            &source(false),
            Some(&expected),
            &ReplicaIdentity::Default,
            &retyped,
        );
        assert!(
            why.as_deref()
                .is_some_and(|w| w.starts_with("DDL changed table trips: column status has type oid 1043 (modifier 24) where the slot's start had 25 (-1)")),
            "{why:?}"
        );
        let now = [column("trip_id", 2950, -1), column("status", 25, -1)];
        let why = relation_change(
            &source(true),
            Some(&expected),
            &ReplicaIdentity::Default,
            &now,
        );
        assert!(
            why.as_deref().is_some_and(|w| w.starts_with(
                "the REPLICA IDENTITY of trips is no longer FULL (Default); it needs FULL because trips_by_status is keyed by status"
            )),
            "{why:?}"
        );
    }
}
