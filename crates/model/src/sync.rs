//! What a `remodel sync` run folder records: `sync.json` ([`SyncState`]), written by the sync
//! after every round Cassandra acknowledged and renamed to `sync.finished.json` by `remodel sync
//! --finish` once the slot and the publication are dropped. The sync reads it to resume, the
//! report to tell what the sync applied beside what its backfill copied. The one definition:
//! writers and readers share it. And what sync needs of the source's WAL for a plan
//! ([`replica_identity_full`]), which the sync checks and the report's runbook prints.

use crate::{DesignTable, Plan, Table};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The state of one sync run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SyncState {
    /// The logical replication slot.
    pub slot: String,
    /// The publication over the plan's source tables.
    pub publication: String,
    /// The source, redacted (no password).
    pub source: String,
    /// The slot's consistent point: the exported snapshot's position, where streaming starts.
    pub consistent_lsn: String,
    /// The write timestamp of backfilled rows (microseconds): before any streamed commit.
    pub backfill_timestamp: i64,
    /// True once the backfill finished.
    pub backfill_done: bool,
    /// The end LSN of the last transaction Cassandra acknowledged (`None`: none yet).
    #[serde(default)]
    pub applied_lsn: Option<String>,
    /// The write timestamp of that transaction (the next one writes later).
    #[serde(default)]
    pub last_timestamp: i64,
    /// Transactions applied over the run folder's life (every command on it, all attempts).
    #[serde(default)]
    pub transactions: u64,
    /// Row changes applied over the run folder's life.
    #[serde(default)]
    pub changes: u64,
    /// Target writes sent again after a timeout or a node down (every command on the folder),
    /// by cause.
    #[serde(default)]
    pub retry_causes: crate::RetryCauses,
    /// The target writes in flight of the last command: how they were set and how an adaptive
    /// level moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<crate::ConcurrencyReport>,
    /// Each source table's columns when the slot was created (by the plan's table key): a
    /// Relation message of the stream that differs is a DDL change, and stops the sync.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, Vec<SlotColumn>>,
}

/// A column as the catalog (and pgoutput's Relation message) gives it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SlotColumn {
    /// Its name.
    pub name: String,
    /// `pg_attribute.atttypid`.
    pub type_oid: u32,
    /// `pg_attribute.atttypmod` (-1: none).
    pub type_modifier: i32,
}

impl SyncState {
    /// The file's name in the run folder while the slot exists.
    pub const FILE: &'static str = "sync.json";

    /// Its name once `remodel sync --finish` dropped the slot and the publication.
    pub const FINISHED_FILE: &'static str = "sync.finished.json";

    /// The folder inside the run folder that the sync's backfill runs in.
    pub const BACKFILL_DIR: &'static str = "backfill";

    /// Where streaming resumes: after the last acknowledged transaction, else the consistent
    /// point.
    pub fn resume_lsn(&self) -> &str {
        self.applied_lsn.as_deref().unwrap_or(&self.consistent_lsn)
    }
}

/// Why a target table needs its driving table's old rows whole in the WAL (`REPLICA IDENTITY
/// FULL`), if it does: its key holds columns of the driving table (`entity`) outside that
/// table's primary key (or a bucket derived from one), so a change of them moves the target row,
/// and the row at the old values is found, to be deleted, only by the old values.
pub fn moved_key_reason(dt: &DesignTable, entity: &Table) -> Option<String> {
    let key_columns: Vec<&str> = dt
        .partition_key
        .iter()
        .chain(&dt.clustering)
        .map(|k| k.column.as_str())
        .collect();
    let mut moved: Vec<String> = Vec::new();
    for c in &dt.columns {
        let Some(src) = &c.source else { continue };
        if src.table == entity.key()
            && key_columns.contains(&c.name.as_str())
            && !entity.primary_key.contains(&src.column)
        {
            moved.push(src.column.clone());
        }
    }
    for k in dt.partition_key.iter().chain(&dt.clustering) {
        match &k.derived_from {
            Some(from) if !entity.primary_key.contains(from) && !moved.contains(from) => {
                moved.push(from.clone())
            }
            _ => {}
        }
    }
    (!moved.is_empty()).then(|| {
        format!(
            "{} is keyed by {} (outside the primary key): a change of them deletes the row at the old values",
            dt.name,
            moved.join(", ")
        )
    })
}

/// The columns a foreign key links a driving table's rows and the rows of `other` (a table
/// whose columns the driving table's targets copy) by, either way: (the driving table's, the
/// other's), in the same order.
pub fn link_columns(driving: &Table, other: &Table) -> Option<(Vec<String>, Vec<String>)> {
    let or_key = |columns: &[String], t: &Table| {
        if columns.is_empty() {
            t.primary_key.clone()
        } else {
            columns.to_vec()
        }
    };
    if let Some(fk) = driving
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == other.key())
    {
        return Some((fk.columns.clone(), or_key(&fk.ref_columns, other)));
    }
    let fk = other
        .foreign_keys
        .iter()
        .find(|fk| fk.ref_table == driving.key())?;
    Some((or_key(&fk.ref_columns, driving), fk.columns.clone()))
}

/// Why target table `target` needs the old rows of `other` (whose columns it copies) whole in
/// the WAL, if it does: it finds the rows a change of `other` feeds by `row`, columns of `other`
/// outside its primary key.
pub fn linked_reason(target: &str, other: &Table, row: &[String]) -> Option<String> {
    row.iter().any(|c| !other.primary_key.contains(c)).then(|| {
        format!(
            "{target} finds the rows a change of {} feeds by {} (not its primary key)",
            other.key(),
            row.join(", ")
        )
    })
}

/// The source tables `remodel sync` needs `REPLICA IDENTITY FULL` on for `plan`, by table key,
/// each with why (the check sync makes; the report's runbook prints the `ALTER TABLE`s).
pub fn replica_identity_full(plan: &Plan) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for dt in &plan.design.tables {
        let Some(entity) = plan.schema.table(&dt.entity) else {
            continue;
        };
        if let Some(why) = moved_key_reason(dt, entity) {
            out.entry(entity.key()).or_default().push(why);
        }
        let linked: BTreeSet<&str> = dt
            .columns
            .iter()
            .filter_map(|c| c.source.as_ref())
            .map(|s| s.table.as_str())
            .filter(|t| *t != entity.key())
            .collect();
        for other in linked.into_iter().filter_map(|k| plan.schema.table(k)) {
            let Some((_, row)) = link_columns(entity, other) else {
                continue;
            };
            if let Some(why) = linked_reason(&dt.name, other, &row) {
                out.entry(other.key()).or_default().push(why);
            }
        }
    }
    out
}
