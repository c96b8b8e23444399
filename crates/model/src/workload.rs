//! The workload: what the application runs, as weighted normalized statements (access patterns).

use crate::analysis::PatternAnalysis;
use crate::diagnostic::{Location, SkipCount};
use serde::{Deserialize, Serialize};

/// Everything ingested from query files and logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workload {
    /// One entry per distinct normalized DML statement, heaviest first.
    pub patterns: Vec<AccessPattern>,
    /// Utility, transaction-control and DDL statements seen, counted by kind (not patterns).
    #[serde(default)]
    pub utility: Vec<SkipCount>,
    /// Lines or statements that could not be used, counted by reason.
    #[serde(default)]
    pub skipped: Vec<SkipCount>,
    /// The inputs that were read.
    #[serde(default)]
    pub sources: Vec<WorkloadSource>,
    /// What the inputs said about sessions (empty when they name none: `pg_stat_statements`,
    /// SQL files, a log without a session id in its prefix).
    #[serde(default, skip_serializing_if = "crate::SessionStats::is_empty")]
    pub sessions: crate::SessionStats,
}

impl Workload {
    /// Finds a pattern by id.
    pub fn pattern(&self, id: &str) -> Option<&AccessPattern> {
        self.patterns.iter().find(|p| p.id == id)
    }

    /// Sum of `calls` over all patterns, saturating at `u64::MAX` (see [`Workload::total_calls_wide`]).
    pub fn total_calls(&self) -> u64 {
        u64::try_from(self.total_calls_wide()).unwrap_or(u64::MAX)
    }

    /// Sum of `calls` over all patterns, exact: counts near `u64::MAX` (a malformed or
    /// saturated `-- calls:`) must not wrap, or shares come out as 4.6e20 %.
    pub fn total_calls_wide(&self) -> u128 {
        self.patterns.iter().map(|p| u128::from(p.calls)).sum()
    }
}

/// One input file of the workload and how it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkloadSource {
    /// The path as given.
    pub file: String,
    /// The format it was read as (`sql`, `pg-log`, `csvlog`, `jsonlog`, `pgss`).
    pub format: String,
    /// Statements taken from it.
    pub statements: u64,
    /// What identifies a session in it (`session id (%c)`, `process id (%p)`, `session_id`),
    /// absent when nothing does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
}

/// What a statement does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// `SELECT` (also `WITH … SELECT`).
    Select,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
}

impl StatementKind {
    /// True for INSERT/UPDATE/DELETE.
    pub fn is_write(self) -> bool {
        !matches!(self, StatementKind::Select)
    }

    /// `read`, `insert`, `update` or `delete`: how replay and its report name the kind.
    pub fn action(self) -> &'static str {
        match self {
            StatementKind::Select => "read",
            StatementKind::Insert => "insert",
            StatementKind::Update => "update",
            StatementKind::Delete => "delete",
        }
    }
}

/// One distinct normalized statement with its weight; the analyzer fills the `analysis` part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AccessPattern {
    /// Stable id, `q` + the first 8 hex digits of the fingerprint… or a caller-chosen label.
    pub id: String,
    /// 64-bit fingerprint of the normalized statement, as 16 hex digits.
    pub fingerprint: String,
    /// Select/insert/update/delete.
    pub kind: StatementKind,
    /// Normalized SQL: literals replaced by `$n`, `IN` lists collapsed, canonical spacing.
    pub sql: String,
    /// One instance with real values (from the input, or bound parameters substituted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// The `$n` of `sql` whose value in `example` is a bound parameter the application sent (a
    /// log's `DETAIL: parameters: $1 = '…'`), not a constant written in its statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent_params: Vec<u32>,
    /// How often it runs (sum of annotations, log occurrences or pg_stat_statements calls).
    pub calls: u64,
    /// Total execution time in milliseconds, where the input has durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<f64>,
    /// Mean execution time in milliseconds, where the input has durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ms: Option<f64>,
    /// Rows returned or affected, where the input has it (pg_stat_statements `rows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// First timestamp seen in a log, as written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<String>,
    /// Last timestamp seen in a log, as written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
    /// A label from the input (e.g. the comment above the statement in a SQL file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The name a sqlc-style annotation above the statement gives it (`-- name: TripsOfDriver
    /// :many`): `remodel codegen` names the statement's function so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The first few places it occurred.
    #[serde(default)]
    pub locations: Vec<Location>,
    /// What the analyzer found (tables, predicates, order, …); empty before analysis.
    #[serde(flatten)]
    pub analysis: PatternAnalysis,
}

impl AccessPattern {
    /// A pattern of `kind` whose normalized SQL is `sql`, run `calls` times, fingerprinted by the
    /// hash of that text ([`crate::text::fnv1a64`]; the workload reader sets its own token
    /// fingerprint), with nothing else known yet: no example, timings or locations, and an
    /// empty analysis. Set the rest with struct update syntax
    /// (`AccessPattern { example, ..AccessPattern::new(…) }`).
    pub fn new(
        id: impl Into<String>,
        kind: StatementKind,
        sql: impl Into<String>,
        calls: u64,
    ) -> Self {
        let sql = sql.into();
        AccessPattern {
            id: id.into(),
            fingerprint: format!("{:016x}", crate::text::fnv1a64(sql.as_bytes())),
            kind,
            sql,
            example: None,
            sent_params: Vec::new(),
            calls,
            total_ms: None,
            mean_ms: None,
            rows: None,
            first_seen: None,
            last_seen: None,
            label: None,
            name: None,
            locations: Vec::new(),
            analysis: PatternAnalysis::default(),
        }
    }
}
