//! `sync.json`: what a sync run has done, in its run folder, replaced whole (write then rename)
//! after every transaction Cassandra acknowledged. The slot is confirmed up to `applied_lsn` only
//! after this file holds it, so a restart never skips a change: it applies again, with the same
//! timestamps, what came after the file's LSN.

use crate::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// Transactions and row changes applied over the run's life.
    #[serde(default)]
    pub transactions: u64,
    /// Row changes applied.
    #[serde(default)]
    pub changes: u64,
    /// Each source table's columns when the slot was created (by the plan's table key): a
    /// Relation message of the stream that differs is a DDL change, and stops the sync.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, Vec<ColumnType>>,
}

/// A column as the catalog (and pgoutput's Relation message) gives it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ColumnType {
    /// Its name.
    pub name: String,
    /// `pg_attribute.atttypid`.
    pub type_oid: u32,
    /// `pg_attribute.atttypmod` (-1: none).
    pub type_modifier: i32,
}

impl SyncState {
    /// The file's name in the run folder.
    pub const FILE: &'static str = "sync.json";

    /// The state in `dir`, if a run wrote one.
    pub fn load(dir: &Path) -> Result<Option<SyncState>, Error> {
        let path = dir.join(Self::FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path, e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Io {
                path,
                message: format!("not a sync state: {e}"),
            })
    }

    /// Writes the state to `dir` whole: a crash leaves the old file or the new one.
    pub fn save(&self, dir: &Path) -> Result<(), Error> {
        let path = dir.join(Self::FILE);
        let tmp = dir.join("sync.json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(|e| Error::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))
    }

    /// Where streaming resumes: after the last acknowledged transaction, else the consistent
    /// point.
    pub fn resume_lsn(&self) -> &str {
        self.applied_lsn.as_deref().unwrap_or(&self.consistent_lsn)
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: PathBuf::from(path),
        message: e.to_string(),
    }
}

/// An LSN as Postgres prints it (`16/B374D848`).
pub fn format_lsn(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// An LSN printed by Postgres, as a number.
pub fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_round_trip_as_postgres_prints_them() {
        assert_eq!(parse_lsn("16/B374D848"), Some(0x16_B374_D848));
        assert_eq!(format_lsn(0x16_B374_D848), "16/B374D848");
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("x"), None);
    }
}
