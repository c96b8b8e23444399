//! What a backfill run folder records: the contract between execution and the report.
//!
//! `remodel backfill` writes [`RunSummary`] to `RUN_DIR/summary.json` when a run ends (finished or
//! stopped), and `remodel verify --run-dir RUN_DIR` writes [`VerifyReport`] to
//! `RUN_DIR/verify.json`; the report reads both. These are the only definitions: writers and
//! readers share them. Every field has a default so a reader accepts a partial or older file, and
//! readers ignore fields they do not know.

use serde::{Deserialize, Serialize};

/// How a backfill attempt ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every range of every table finished.
    Completed,
    /// An error stopped it; `--resume` carries on from its checkpoint.
    Stopped,
    /// Not recorded, or a status this version does not know.
    #[default]
    #[serde(other)]
    Unknown,
}

impl RunStatus {
    /// Its name in `summary.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Unknown => "unknown",
        }
    }
}

/// `summary.json`: how one backfill attempt ended, per table and overall.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct RunSummary {
    /// How the attempt ended.
    pub status: RunStatus,
    /// The error that stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The plan that was backfilled, as given on the command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The run folder, as given on the command line.
    pub run_dir: String,
    /// This attempt's number (1 = first run, 2 = first resume …).
    pub attempt: u32,
    /// When this attempt started, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it ended, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Seconds this attempt took.
    pub elapsed_seconds: f64,
    /// Requests sent again after a timeout or an unavailable node.
    pub retries: u64,
    /// The same retries by the failure that caused them.
    pub retry_causes: RetryCauses,
    /// The consistency level every write was sent at (`LOCAL_QUORUM`), when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency: Option<String>,
    /// The write requests in flight: how they were set, and how an adaptive level moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyReport>,
    /// `USING TIMESTAMP` given to every backfilled write (microseconds since the epoch), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_timestamp: Option<i64>,
    /// One entry per target table, in plan order.
    pub tables: Vec<TableRun>,
    /// The command that continues an unfinished run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_hint: Option<String>,
}

impl RunSummary {
    /// The file name in the run folder.
    pub const FILE: &'static str = "summary.json";

    /// True when every range of every table finished.
    pub fn complete(&self) -> bool {
        self.status == RunStatus::Completed
    }
}

/// Requests sent again, by what made the attempt before fail.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct RetryCauses {
    /// No answer in time: the client's request timeout, or the coordinator's read or write
    /// timeout (too few replicas answered in time).
    pub timeout: u64,
    /// The coordinator knew too few replicas alive for the consistency level.
    pub unavailable: u64,
    /// A node said it was overloaded (or rate-limited, or still starting).
    pub overloaded: u64,
    /// No connection: a node unreachable, a connection broken mid-request.
    pub connection: u64,
    /// Another retryable failure (a server error, a failed replica).
    pub other: u64,
}

impl RetryCauses {
    /// Every retry.
    pub fn total(&self) -> u64 {
        self.timeout + self.unavailable + self.overloaded + self.connection + self.other
    }

    /// The sum of two counts.
    pub fn plus(&self, other: &RetryCauses) -> RetryCauses {
        RetryCauses {
            timeout: self.timeout + other.timeout,
            unavailable: self.unavailable + other.unavailable,
            overloaded: self.overloaded + other.overloaded,
            connection: self.connection + other.connection,
            other: self.other + other.other,
        }
    }

    /// `12 timeout, 3 unavailable` (the causes seen), or `none`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            (self.timeout, "timeout"),
            (self.unavailable, "unavailable"),
            (self.overloaded, "overloaded"),
            (self.connection, "connection"),
            (self.other, "other"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", crate::text::thousands(*n)))
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The write requests a run kept in flight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ConcurrencyReport {
    /// `auto` (adapted to the cluster) or `fixed` (`--concurrency N`).
    pub mode: String,
    /// The level it started at.
    pub initial: u64,
    /// The level when the report was written (at the end of a run: the level it ended at).
    pub current: u64,
    /// The lowest level reached.
    pub min: u64,
    /// The highest level reached.
    pub max: u64,
    /// How many times the level changed.
    pub changes_total: u64,
    /// The first changes, each with when and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ConcurrencyChange>,
}

/// One change of an adaptive level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ConcurrencyChange {
    /// Seconds since the writes started.
    pub at_seconds: f64,
    /// The level before.
    pub from: u64,
    /// The level after.
    pub to: u64,
    /// Why (the throughput and latency seen, or the failures).
    pub why: String,
}

/// What the backfill did for one target table (totals over every attempt unless said).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct TableRun {
    /// Target table name (as in `design.tables[].name`).
    pub name: String,
    /// Rows read from Postgres (its `source_sql`), in finished ranges.
    pub rows_read: u64,
    /// Rows written to Cassandra.
    pub rows_written: u64,
    /// Rows sent to the rejects file instead (read = written + rejected + expired).
    pub rows_rejected: u64,
    /// Rows of a table whose rows expire ([`crate::RowTtl`]) already past their instant when
    /// read: not written, as the source's reads no longer see them and its purge deletes them.
    pub rows_expired: u64,
    /// Key ranges planned.
    pub ranges_total: u64,
    /// Key ranges finished.
    pub ranges_done: u64,
    /// Ranges finished by an earlier attempt and so not read again by this one.
    pub ranges_skipped: u64,
    /// Rows read by this attempt.
    pub rows_read_this_run: u64,
    /// Wall-clock seconds this attempt spent on the table.
    pub seconds: f64,
    /// The rejects file, relative to the run folder, when any row was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejects_file: Option<String>,
}

impl TableRun {
    /// Rows this attempt read per second spent on the table, when it read any.
    pub fn rows_per_second(&self) -> Option<f64> {
        (self.seconds > 0.0 && self.rows_read_this_run > 0)
            .then(|| self.rows_read_this_run as f64 / self.seconds)
    }
}

/// `verify.json`: the result of `remodel verify`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct VerifyReport {
    /// When it ran, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<String>,
    /// Source rows asked to be sampled per table (`--sample`).
    pub sample: u64,
    /// The consistency level of every read (`LOCAL_QUORUM`, `ALL`), when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency: Option<String>,
    /// Reads sent again after a timeout or an unavailable node.
    pub retries: u64,
    /// One entry per target table, in plan order.
    pub tables: Vec<TableVerify>,
}

impl VerifyReport {
    /// The file name in the run folder.
    pub const FILE: &'static str = "verify.json";

    /// True when every table passed.
    pub fn passed(&self) -> bool {
        self.tables.iter().all(TableVerify::passed)
    }
}

/// The verdict on one target table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct TableVerify {
    /// Target table name.
    pub name: String,
    /// `count(*)` over its `source_sql`.
    pub source_rows: u64,
    /// Source rows with a NULL key column (never stored; the backfill rejects them).
    pub null_key_rows: u64,
    /// Other rows the backfill run rejected (from its rejects files).
    pub rejected_rows: u64,
    /// Source rows past their TTL instant when counted (a table whose rows expire): Cassandra
    /// no longer holds them. A row expiring between the two counts can still differ.
    pub expired_rows: u64,
    /// Rows the table must hold: source rows less the three above.
    pub expected: u64,
    /// Rows it holds (a token-range count).
    pub stored: u64,
    /// Source rows sampled and looked up by the target's primary key.
    pub sampled: u64,
    /// Sampled rows that cannot be stored (a value CQL cannot hold), not looked up.
    pub sample_unstorable: u64,
    /// Differences found in the sample (every one, missing rows included).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
}

impl TableVerify {
    /// True when the counts agree and every sampled row matches.
    pub fn passed(&self) -> bool {
        self.expected == self.stored && self.mismatches.is_empty()
    }

    /// Sampled rows not found in the target.
    pub fn missing(&self) -> usize {
        self.mismatches
            .iter()
            .filter(|m| m.column.is_none())
            .count()
    }

    /// Sampled rows found with at least one differing column.
    pub fn differing(&self) -> usize {
        let mut keys: Vec<&[(String, String)]> = self
            .mismatches
            .iter()
            .filter(|m| m.column.is_some())
            .map(|m| m.key.as_slice())
            .collect();
        keys.sort();
        keys.dedup();
        keys.len()
    }
}

/// One difference between a sampled source row and the target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Mismatch {
    /// The row's target primary key, `(column, value)` in key order.
    pub key: Vec<(String, String)>,
    /// The column that differs; `None` when the whole row is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The source's value (converted as the backfill converts it).
    pub source: String,
    /// The stored value.
    pub target: String,
}
