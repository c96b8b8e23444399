//! What `remodel replay` records (`replay.json`): the plan's statements run against generated
//! data on both sides, pattern by pattern, with every difference found. Every field has a
//! default so a reader accepts an older or partial file.

use crate::workload::StatementKind;
use serde::{Deserialize, Serialize};

/// The result of one replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ReplayReport {
    /// The keyspace replayed.
    pub keyspace: String,
    /// The plan's own keyspace, when the replay ran in another one (`--keyspace`: a scratch
    /// keyspace, so that the generated rows stay out of the plan's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_keyspace: Option<String>,
    /// The seed of the generated rows and of the parameters drawn.
    pub seed: u64,
    /// Parameter sets drawn per pattern.
    pub samples: usize,
    /// Requests in flight while timing (1: each statement alone).
    pub concurrency: usize,
    /// True when the write patterns were replayed too.
    pub writes: bool,
    /// True when replay read the rows already there (`--existing`: the source as it is and the
    /// keyspace the backfill filled, read-only on both sides) instead of generated ones.
    pub existing: bool,
    /// The application's session time zone replay ran the SQL in (IANA name).
    pub time_zone: String,
    /// Replay's clock at the start (RFC 3339, UTC): what `now()` read, moved one second
    /// forward at each write; the generated rows' dates are around it.
    pub now: String,
    /// Rows per source table: generated, or (`existing`) the planner's estimate of those there.
    pub rows: Vec<TableRows>,
    /// Rows the backfill could not store (they are missing on the Cassandra side).
    pub rejected: u64,
    /// One entry per pattern of the plan, reads first.
    pub patterns: Vec<PatternReplay>,
    /// The program that executed the plan's side (`--executor`: the generated access layer, or
    /// another executor of plan.json), when not replay's own executor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
    /// Cassandra requests sent again after a timeout or a node down (never counted as a
    /// difference).
    pub retries: u64,
}

impl ReplayReport {
    /// The file name.
    pub const FILE: &'static str = "replay.json";

    /// Differences found, all patterns together.
    pub fn mismatches(&self) -> usize {
        self.patterns.iter().map(|p| p.mismatches.len()).sum()
    }

    /// Patterns with this outcome.
    pub fn count(&self, outcome: ReplayOutcome) -> usize {
        self.patterns
            .iter()
            .filter(|p| p.outcome == outcome)
            .count()
    }
}

/// Rows of one source table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct TableRows {
    /// The table.
    pub table: String,
    /// Its rows.
    pub rows: u64,
}

/// Whether a pattern was replayed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReplayOutcome {
    /// Run on both sides and compared.
    #[default]
    Replayed,
    /// The plan itself declares it has no CQL, or a write it cannot apply: nothing to replay.
    Exception,
    /// Replay cannot run it, or compared no sample (the reason says why).
    NotReplayed,
}

/// Latency of one side, over the samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Latency {
    /// Median, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
}

/// One pattern replayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct PatternReplay {
    /// Pattern id.
    pub pattern: String,
    /// Read or write.
    pub kind: Option<StatementKind>,
    /// Replayed, or why not.
    pub outcome: ReplayOutcome,
    /// Why it is an exception or was not replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Parameter sets run.
    pub samples: usize,
    /// Rows Postgres returned over the samples (reads; for writes, over the reads run after).
    pub rows: u64,
    /// Samples Postgres refused (a constraint of the source, a division by zero in a SELECT),
    /// dropped without running on Cassandra.
    pub refused: usize,
    /// Why Postgres refused the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_because: Option<String>,
    /// Reads run again after this write's samples.
    pub reads_after: usize,
    /// Postgres latency of the statement as written.
    pub postgres: Latency,
    /// Cassandra latency of the plan's statements (all steps, reads before write included).
    pub cassandra: Latency,
    /// Partitions read per sample on Cassandra, mean (reads before write for a write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions_read: Option<f64>,
    /// The plan's estimate of the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_partitions: Option<f64>,
    /// Rows of a folded loop's lookup (run on Postgres for each row read) found in the
    /// collection of the row that carries them, over the samples: the fold checked, not only
    /// the list's own columns.
    #[serde(skip_serializing_if = "is_zero")]
    pub folded_rows: u64,
    /// Every difference found.
    pub mismatches: Vec<ReplayMismatch>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One difference: a read whose rows differ from the SQL's, or a write path that failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ReplayMismatch {
    /// The read (or write) pattern.
    pub pattern: String,
    /// Its parameters, `$1=…, $2=…`.
    pub params: String,
    /// The write that ran just before (pattern and parameters), for a read run after one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// What differs.
    pub reason: String,
    /// The rows SQL returns.
    pub sql: Vec<String>,
    /// The rows the plan's CQL returns.
    pub cql: Vec<String>,
}
