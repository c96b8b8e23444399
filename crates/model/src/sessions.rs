//! The workload read as sessions: which statement ran right after which in one session (the
//! evidence of N+1 loops), the transactions, and what the analyzer and designer made of them.
//!
//! A log holds no result rows, so a loop is never seen directly: the front end records, per
//! session, the calls of each read that followed a call of another read before that read ran
//! again ([`Follow`]), and the analyzer keeps the pairs the schema explains ([`Loop`]).

use crate::column_ref::ColumnRef;
use crate::workload::AccessPattern;
use serde::{Deserialize, Serialize};

/// What the inputs said about sessions, aggregated (memory bounded by the distinct statements).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionStats {
    /// Distinct sessions seen.
    #[serde(default)]
    pub sessions: u64,
    /// Statements read with a session id.
    #[serde(default)]
    pub statements: u64,
    /// Statements read without one (their order in a session is unknown).
    #[serde(default)]
    pub without_session: u64,
    /// The log's sessions were a transaction pooler's backends (`--pooled transaction`):
    /// statements were linked into loops only inside one transaction.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transaction_pooled: bool,
    /// Sessions whose open windows were closed early to keep memory bounded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub evicted: u64,
    /// Pairs (read A, read B): B ran after a call of A, in the same session, before A ran again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follows: Vec<Follow>,
    /// Transactions by their sequence of statements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<TransactionShape>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SessionStats {
    /// True when nothing was counted (not written to `plan.json` then).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Calls of read `child` after one call of read `parent` in the same session (its "window":
/// until `parent` runs again, the session ends, or a bound is reached).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Follow {
    /// Fingerprint of the parent statement (A).
    pub parent: String,
    /// Fingerprint of the child statement (B).
    pub child: String,
    /// Calls of A that opened a window: read in a session and, behind a transaction pooler,
    /// inside a transaction (the calls a loop could be seen after; 0 when not recorded).
    #[serde(default)]
    pub parent_windows: u64,
    /// Calls of A whose window held at least one call of B.
    pub windows: u64,
    /// Calls of B in those windows.
    pub child_calls: u64,
    /// Distinct parameter values of B per window, summed over the windows (a loop over rows
    /// looks up distinct keys; a value repeated is a cache miss or a poll).
    pub distinct: u64,
    /// Windows by the number of B calls in them, fewest first (the fan-out distribution).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fan_out: Vec<FanOutBin>,
}

/// `windows` windows held `calls` calls of the child each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FanOutBin {
    /// Calls of the child in one window.
    pub calls: u64,
    /// Windows with that many.
    pub windows: u64,
}

impl Follow {
    /// Mean calls of B per window.
    pub fn mean(&self) -> f64 {
        if self.windows == 0 {
            0.0
        } else {
            self.child_calls as f64 / self.windows as f64
        }
    }

    /// The 95th percentile of calls of B per window.
    pub fn p95(&self) -> u64 {
        let total: u64 = self.fan_out.iter().map(|b| b.windows).sum();
        let rank = (total * 95).div_ceil(100).max(1);
        let mut seen = 0;
        for b in &self.fan_out {
            seen += b.windows;
            if seen >= rank {
                return b.calls;
            }
        }
        0
    }
}

/// One sequence of statements run between `BEGIN` and its end, and how often.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TransactionShape {
    /// Fingerprints of the statements in order (a statement repeated in a row counted once).
    pub statements: Vec<String>,
    /// Transactions that committed.
    pub committed: u64,
    /// Transactions rolled back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rolled_back: u64,
}

/// An N+1 loop: read `child` run once per row of read `parent`, with the row's column value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Loop {
    /// Pattern id of A (the read whose rows drive the loop).
    pub parent: String,
    /// Pattern id of B (the read run per row).
    pub child: String,
    /// The column of A's rows whose value B binds.
    pub parent_column: ColumnRef,
    /// The column B looks up by it.
    pub child_column: ColumnRef,
    /// The `$n` of B bound to it.
    pub param: u32,
    /// Calls of A followed by calls of B in the same session.
    pub calls: u64,
    /// Calls of B in those loops (removed from B's calls when the loop is folded).
    pub lookups: u64,
    /// Calls of B per call of A: mean.
    pub fan_out_mean: f64,
    /// Calls of B per call of A: 95th percentile.
    pub fan_out_p95: u64,
    /// Distinct values B looked up per call of A: mean.
    pub distinct_mean: f64,
    /// A's LIMIT, where it has one: the fan-out cannot exceed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_limit: Option<u64>,
    /// Why this pair is a loop, in words.
    pub evidence: String,
    /// A joined with B (its rows with B's columns), analysed: what the designer serves instead
    /// of A and the lookups; absent when the join cannot be stated, with `not_folded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<Box<AccessPattern>>,
    /// Why no joined read could be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_folded: Option<String>,
}

/// Writes observed together in transactions: they must land together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TransactionGroup {
    /// Pattern ids of every statement of the transaction, in order.
    pub statements: Vec<String>,
    /// Pattern ids of its writes, in order.
    pub writes: Vec<String>,
    /// Transactions committed with this sequence.
    pub committed: u64,
    /// Transactions rolled back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rolled_back: u64,
}

/// What the designer did with a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LoopChoice {
    /// A's table carries B's columns: the lookups are gone.
    Folded,
    /// The joined read still reads B by key per row (B's columns change too often to copy).
    KeptLookups,
    /// A and B are served as they are.
    NotFolded,
}

/// The designer's decision on one loop, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoopDecision {
    /// Pattern id of A.
    pub parent: String,
    /// Pattern id of B.
    pub child: String,
    /// The pattern that serves A and its lookups (the joined read), when folded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// What was decided.
    pub choice: LoopChoice,
    /// Calls of A that ran the loop.
    pub calls: u64,
    /// Lookups per call of A before: mean and 95th percentile.
    pub fan_out_mean: f64,
    /// 95th percentile.
    pub fan_out_p95: u64,
    /// Lookups per call of A left in the plan (0 when folded).
    pub lookups_after: f64,
    /// Calls of the writes that change the copied columns of B, per call of A.
    pub write_ratio: f64,
    /// A loop over children (B reads the rows that refer to each row of A): B's rows per row
    /// of A, as the analyzer knows it (configured, measured or from the inserts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children_per_row: Option<f64>,
    /// A loop over children: the weighted cost per 100 calls of the workload of keeping the
    /// lookups (B's partition reads), and of folding B's rows into A's table (the writes of B
    /// applied to A's rows, with the reads they need first), by `--objective`'s weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<LoopCosts>,
    /// A loop over children folded into A's rows: the lookups the collection replaces, so
    /// replay can check the collection against them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<FoldedLookup>,
    /// Why the pair is a loop: the sessions' figures and the key that links B's parameter to a
    /// column of A's rows (declared, confirmed on the data, or inferred), in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
    /// Why, in words.
    pub reason: String,
}

/// The lookup a loop over children ran per row of A, now read from a collection of A's rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FoldedLookup {
    /// B's SQL as the application ran it, once per row of A.
    pub sql: String,
    /// B's `$n` bound to each row's value.
    pub param: u32,
    /// The column of A's rows whose value B binds.
    pub parent_column: ColumnRef,
    /// The column B looks up by it (the children's foreign key, which the entries leave out:
    /// its value is the row's).
    pub child_column: ColumnRef,
    /// The collection column, in the table serving A, that holds B's rows (a map keyed by B's
    /// key, each entry's fields named after B's columns).
    pub column: String,
}

/// The two ways of serving a loop over children, costed per 100 calls of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoopCosts {
    /// Keeping the lookups: B's partition reads per 100 calls, weighted.
    pub lookups: f64,
    /// Folding: the writes of B on A's table and their reads first, per 100 calls, weighted.
    pub folded: f64,
}

/// How a transaction's writes are sent to Cassandra.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroupSend {
    /// One logged batch: all or none of the writes land.
    LoggedBatch,
    /// The writes in the stated order, each retried until it lands.
    Ordered,
}

/// A transaction's writes as one write path group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WriteGroup {
    /// Pattern ids of the writes, in the transaction's order.
    pub writes: Vec<String>,
    /// Transactions seen with these writes.
    pub transactions: u64,
    /// How they are sent.
    pub send: GroupSend,
    /// Target tables written by the group.
    pub tables: Vec<String>,
    /// Why, in words.
    pub reason: String,
}
