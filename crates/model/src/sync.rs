//! What a `remodel sync` run folder records: `sync.json` ([`SyncState`]), written by the sync
//! after every round Cassandra acknowledged and renamed to `sync.finished.json` by `remodel sync
//! --finish` once the slot and the publication are dropped. The sync reads it to resume, the
//! report to tell what the sync applied beside what its backfill copied. The one definition:
//! writers and readers share it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
