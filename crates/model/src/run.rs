//! What a backfill run folder records: the run summary and the verification result.
//!
//! `remodel backfill` writes [`RunSummary`] to `RUN_DIR/summary.json` when a run ends (finished or
//! stopped), and `remodel verify` writes [`VerifyReport`] to `RUN_DIR/verify.json`; the report reads
//! both. Every field has a default so a reader accepts a partial or older file, and writers may add
//! fields (readers ignore what they do not know).

use serde::{Deserialize, Serialize};

/// The final summary of one backfill run (`summary.json` in the run folder).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    /// The plan that was backfilled, as given on the command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// When the run started, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the run ended, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// `USING TIMESTAMP` given to every backfilled write (microseconds since the epoch), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_timestamp: Option<i64>,
    /// True when every range of every table finished (false: stopped, resume with `--resume`).
    pub complete: bool,
    /// One entry per target table, in plan order.
    pub tables: Vec<TableRun>,
}

impl RunSummary {
    /// The file name in the run folder.
    pub const FILE: &'static str = "summary.json";
}

/// What the backfill did for one target table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TableRun {
    /// Target table name (as in `design.tables[].name`).
    pub table: String,
    /// Rows read from Postgres (its `source_sql`).
    pub rows_read: u64,
    /// Rows written to Cassandra.
    pub rows_written: u64,
    /// Rows sent to the rejects file instead.
    pub rows_rejected: u64,
    /// Wall-clock seconds spent on the table.
    pub seconds: f64,
    /// Key ranges finished / planned.
    pub ranges_done: u64,
    /// Key ranges planned.
    pub ranges_total: u64,
    /// The rejects file, relative to the run folder, when any row was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejects_file: Option<String>,
}

/// The result of `remodel verify` (`verify.json` in the run folder).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyReport {
    /// When it ran, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<String>,
    /// True when every table matched.
    pub passed: bool,
    /// One entry per target table, in plan order.
    pub tables: Vec<TableVerify>,
}

impl VerifyReport {
    /// The file name in the run folder.
    pub const FILE: &'static str = "verify.json";
}

/// Verification of one target table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TableVerify {
    /// Target table name.
    pub table: String,
    /// `SELECT count(*)` over the table's `source_sql`.
    pub expected_rows: u64,
    /// Rows counted in Cassandra (token-range scan).
    pub stored_rows: u64,
    /// Source rows sampled and looked up by the target's primary key.
    pub sampled: u64,
    /// Sampled rows not found in the target.
    pub missing: u64,
    /// Sampled rows found with a differing column.
    pub mismatched: u64,
    /// True when counts agree and every sampled row matched.
    pub passed: bool,
    /// The first few differences, for the reader.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
}

/// One sampled row that differs between source and target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Mismatch {
    /// The target primary key, as `col=value, …`.
    pub key: String,
    /// The differing column; absent when the whole row is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The source value, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The target value, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}
