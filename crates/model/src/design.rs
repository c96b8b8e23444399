//! The proposed Cassandra design: tables, keys, query mapping, write paths.

use crate::analysis::ColumnRef;
use serde::{Deserialize, Serialize};

/// The whole proposed target model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Keyspace name and replication.
    pub keyspace: Keyspace,
    /// Proposed tables.
    pub tables: Vec<DesignTable>,
    /// User-defined types (for embedded bounded 1-N data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<UserType>,
    /// One entry per read pattern.
    pub queries: Vec<QueryMapping>,
    /// One entry per write pattern.
    pub writes: Vec<WritePath>,
    /// Suggested counter or summary tables for aggregates that cannot be served from one partition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
}

/// Keyspace settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keyspace {
    /// Name.
    pub name: String,
    /// Replication map as CQL text, e.g. `{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}`.
    pub replication: String,
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace {
            name: "remodel".into(),
            replication: "{'class': 'SimpleStrategy', 'replication_factor': 1}".into(),
        }
    }
}

/// Width of a time bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    /// One hour.
    Hour,
    /// One day.
    Day,
    /// One month.
    Month,
}

/// Clustering direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Ascending.
    Asc,
    /// Descending.
    Desc,
}

/// A primary-key column: a source column, or a bucket derived from one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyColumn {
    /// Column name in the target table.
    pub column: String,
    /// CQL type.
    #[serde(rename = "type")]
    pub cql_type: String,
    /// For a bucket: the source column it is computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    /// For a bucket: its width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<Bucket>,
    /// Clustering direction (clustering columns only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<SortOrder>,
}

/// A column of a target table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesignColumn {
    /// Name in the target table.
    pub name: String,
    /// CQL type.
    #[serde(rename = "type")]
    pub cql_type: String,
    /// The source column it comes from (absent for derived buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ColumnRef>,
    /// `STATIC` (one value per partition).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_static: bool,
}

/// Size estimates of a target table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimates {
    /// Average rows per partition.
    pub rows_per_partition_avg: f64,
    /// Maximum (or p99) rows per partition.
    pub rows_per_partition_max: f64,
    /// Average bytes per partition (one replica).
    pub bytes_per_partition_avg: f64,
    /// Maximum bytes per partition (one replica).
    pub bytes_per_partition_max: f64,
    /// Number of partitions.
    pub partitions: f64,
    /// Total rows.
    pub rows: f64,
    /// Where the inputs came from: `statistics` or `defaults`.
    pub basis: String,
}

/// A warning about a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Machine-readable code (`large_partition`, `low_cardinality_key`, `hot_key`, `unbounded_growth`, …).
    pub code: String,
    /// A sentence for the reviewer, saying what to do.
    pub message: String,
}

/// One proposed Cassandra table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignTable {
    /// Name, `<entity>_by_<key>`.
    pub name: String,
    /// Partition key columns.
    pub partition_key: Vec<KeyColumn>,
    /// Clustering columns with their order.
    #[serde(default)]
    pub clustering: Vec<KeyColumn>,
    /// All columns (key columns included).
    pub columns: Vec<DesignColumn>,
    /// Ids of the patterns this table serves.
    pub serves: Vec<String>,
    /// The Postgres SELECT whose rows fill the table (the backfill reads it).
    pub source_sql: String,
    /// Size estimates.
    pub estimates: Estimates,
    /// Warnings for the reviewer.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// A user-defined type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserType {
    /// Type name.
    pub name: String,
    /// Fields: name and CQL type.
    pub fields: Vec<(String, String)>,
}

/// How one read pattern is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryMapping {
    /// Pattern id.
    pub pattern: String,
    /// The table that serves it, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// The CQL to run (with `?` bind markers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cql: Option<String>,
    /// True when the read touches exactly one partition.
    pub single_partition: bool,
    /// Why not single-partition (when false), or a note on buckets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a bucketed table: how the reader computes the bucket value(s) to query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<String>,
    /// Work left to the client (sorting, filtering, computed values), one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One statement a write fans out to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteTarget {
    /// Target table.
    pub table: String,
    /// The CQL statement (with `?` bind markers).
    pub cql: String,
}

/// Values a write must read first because the statement does not carry them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBeforeWrite {
    /// The table to read them from.
    pub table: String,
    /// The columns needed.
    pub columns: Vec<String>,
    /// Which target tables need them.
    pub for_tables: Vec<String>,
    /// How the read works, or why no table can serve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How one write pattern is applied to the target tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WritePath {
    /// Pattern id.
    pub pattern: String,
    /// Statements it fans out to.
    pub targets: Vec<WriteTarget>,
    /// Reads needed before the writes.
    #[serde(default)]
    pub read_before_write: Vec<ReadBeforeWrite>,
    /// Estimated batch size in bytes.
    pub batch_bytes: u64,
    /// True when the batch stays under Cassandra's 5 KiB warning.
    pub fits_batch: bool,
    /// Notes for the reviewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A suggested extra table (counter or summary) for a pattern that cannot be one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suggestion {
    /// Pattern id.
    pub pattern: String,
    /// What to build, in a sentence.
    pub text: String,
    /// CQL of the suggested table, when one is proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cql: Option<String>,
}
