//! The proposed Cassandra design: tables, keys, query mapping, write paths.

use crate::analysis::ColumnRef;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Checks the plan fails (from the designer's validator). A plan with any must not be
    /// executed: the backfill refuses it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// What the design costs on its workload, beside a normalized baseline, and how the
    /// tables were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<DesignCost>,
    /// Every target name that does not spell its source name as written, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renames: Vec<Rename>,
}

impl Design {
    /// Every CQL statement the plan has the application run — each read and the lookups after
    /// it (`then`), each write's reads before write and its statements — in plan order, each
    /// labelled by its pattern and role (`q1 read`, `q1 then[0]`, `q5 read before write[0]`,
    /// `q5 write of trips_by_id`). A read before write no table can serve has no CQL and is
    /// left out (the plan's checks report it).
    pub fn statements(&self) -> Vec<(String, &str)> {
        let mut out: Vec<(String, &str)> = Vec::new();
        for q in &self.queries {
            if let Some(c) = &q.cql {
                out.push((format!("{} read", q.pattern), c));
            }
            for (i, s) in q.then.iter().enumerate() {
                out.push((format!("{} then[{i}]", q.pattern), &s.cql));
            }
        }
        for w in &self.writes {
            for (i, r) in w.read_before_write.iter().enumerate() {
                if !r.cql.is_empty() {
                    out.push((format!("{} read before write[{i}]", w.pattern), &r.cql));
                }
            }
            for t in &w.targets {
                out.push((format!("{} write of {}", w.pattern, t.table), &t.cql));
            }
        }
        out
    }
}

/// What a [`Rename`] renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenameKind {
    /// A target table named after a source table it cannot spell (`"user-accounts"` →
    /// `user_accounts_by_id`), or suffixed apart from another (`users_by_id_2`).
    Table,
    /// A target column holding a source column under another name (a copied parent column
    /// named apart from the table's own: `orgs.name` → `org_name_2`).
    Column,
    /// An embedded collection named after a child table it cannot spell, or apart from
    /// another name of its table.
    Collection,
}

/// A target name that is not its source name as written: the reviewer (and the application
/// reading the target) finds each source name here, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rename {
    /// What is renamed.
    pub kind: RenameKind,
    /// The source: a table (`auth.users`, `Users`) or a column (`orgs.name`).
    pub source: String,
    /// The target: a table (`users_by_id_2`) or a table's column (`users_by_id.org_name_2`).
    pub target: String,
    /// Why the names differ.
    pub reason: String,
}

/// The workload's cost on a design, per 100 calls of the workload (each pattern weighted by its
/// share of the calls).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostFigures {
    /// Partitions read by the reads (a lookup chain counts each hop).
    pub partition_reads: f64,
    /// Table writes (CQL statements) made by the writes.
    pub table_writes: f64,
    /// Reads the writes make first (read-before-write), partitions.
    pub reads_before_write: f64,
    /// Bytes stored (one replica), for the whole data set.
    pub stored_bytes: f64,
}

/// How the set of tables was chosen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// `ilp` (an integer program solved to optimality or within `gap`) or `greedy` (when the
    /// program was too large or the solver gave up).
    pub method: String,
    /// Variables and constraints of the program.
    pub variables: usize,
    /// Constraints of the program.
    pub constraints: usize,
    /// Relative gap to the best bound when not proven optimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<f64>,
    /// The weights of the objective: a partition read (reads before write included), a table
    /// write, a GiB stored.
    pub weights: (f64, f64, f64),
    /// Why greedy ran instead of the program, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The cost of a design and of the normalized baseline (one table per source table keyed as
/// each read needs, no copies: joins are extra reads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DesignCost {
    /// This design.
    pub design: CostFigures,
    /// The normalized baseline.
    pub baseline: CostFigures,
    /// How the tables were chosen.
    pub selection: Selection,
}

/// One way a read could have been served, with its cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// `own table`, `own table, parents read by key`, `index table + row lookup`, `reuse`.
    pub kind: String,
    /// The table it reads first.
    pub table: String,
    /// Partitions read per call (lookups included).
    pub partition_reads: f64,
    /// Table writes and reads before write per 100 calls of the workload that this way adds to
    /// keep its tables in step (its share when tables are shared).
    pub write_cost: f64,
    /// Of `write_cost`, the partitions read before writing (the objective weighs them as
    /// reads, the rest as table writes).
    #[serde(default)]
    pub reads_before_write: f64,
    /// True for the way chosen.
    pub chosen: bool,
}

/// A check a plan fails: it would lose rows, leave stale copies, read columns a table lacks or
/// change what a query returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The check (`a` keys unique … `f` copies maintained; see the designer's validator).
    pub check: String,
    /// What is wrong, naming the table or pattern.
    pub message: String,
}

/// Keyspace settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keyspace {
    /// Name.
    pub name: String,
    /// Replication, as a typed map (the CQL emitter renders and quotes it; never pasted text).
    pub replication: Replication,
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace {
            name: "remodel".into(),
            replication: Replication::SimpleStrategy {
                replication_factor: 1,
            },
        }
    }
}

impl Replication {
    /// The CQL map literal (`{'class': 'SimpleStrategy', 'replication_factor': 1}`): every key a
    /// quoted string with quotes doubled, every count a number, so no datacenter name can end the
    /// map or the statement. `schema.cql` and the report both show this text.
    pub fn cql_map(&self) -> String {
        let string = crate::ident::literal;
        match self {
            Replication::SimpleStrategy { replication_factor } => {
                format!("{{'class': 'SimpleStrategy', 'replication_factor': {replication_factor}}}")
            }
            Replication::NetworkTopologyStrategy { datacenters } => {
                let mut parts = vec!["'class': 'NetworkTopologyStrategy'".to_string()];
                parts.extend(
                    datacenters
                        .iter()
                        .map(|(dc, n)| format!("{}: {n}", string(dc))),
                );
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}

/// A keyspace's replication: CQL's replication map, with its `class` as the tag
/// (`{"class": "NetworkTopologyStrategy", "dc1": 3}` in `plan.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class")]
pub enum Replication {
    /// One replica count for the whole cluster.
    SimpleStrategy {
        /// Replicas of each row.
        replication_factor: u32,
    },
    /// Replicas per datacenter.
    NetworkTopologyStrategy {
        /// Datacenter name → replicas there (at least one datacenter).
        #[serde(flatten)]
        datacenters: BTreeMap<String, u32>,
    },
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
    /// For a constant partition key (a small table read whole from one partition): its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<String>,
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
    /// For a collection of embedded child rows: the child table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeds: Option<String>,
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
    /// The source table whose rows it holds, one CQL row per source row (joined parents are copied in).
    #[serde(default)]
    pub entity: String,
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// What each `?` of `cql` is bound to, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binds: Vec<Bind>,
    /// SQL predicates the key does not serve: the client applies them to the rows read, as SQL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_filters: Vec<String>,
    /// Reads that follow the first one, each bound to values of the rows read before it
    /// (a parent kept by reference, or the full rows behind an index table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<ReadStep>,
    /// True when the pattern shapes no table (a one-off statement such as a data load).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_off: bool,
    /// The ways considered to serve the read, with their costs (the chosen one marked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// Partitions read per call, lookups included (the cost the design is judged by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_reads: Option<f64>,
}

/// A read after the first read of a query (a lookup by key of values the first rows name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStep {
    /// The table read.
    pub table: String,
    /// The CQL (with `?` bind markers).
    pub cql: String,
    /// What each `?` is bound to: `current` values are those of each row read by the step before.
    pub binds: Vec<Bind>,
    /// Why the data is read by a second step rather than copied into the first table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One bind marker (`?`) of a CQL statement and the value it takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bind {
    /// The target column it restricts or sets (`limit` for a LIMIT).
    pub column: String,
    /// Where the value comes from.
    pub value: BindValue,
}

/// Where a bound value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum BindValue {
    /// A column-free SQL expression of the statement's parameters (`$2`,
    /// `now() - interval '14 days'`): the application computes it as Postgres would.
    Sql {
        /// The expression.
        sql: String,
    },
    /// A source column's value after the write: the statement's new value where it sets the
    /// column, else its current value.
    New {
        /// The source column.
        column: ColumnRef,
    },
    /// A source column's current value (before the write): bound by the statement's WHERE `=`,
    /// else taken from a read-before-write (or, in a read step, from the rows read before).
    Current {
        /// The source column.
        column: ColumnRef,
    },
    /// The time bucket a value falls in (UTC).
    Bucket {
        /// The bucket width.
        bucket: Bucket,
        /// The value bucketed.
        of: Box<BindValue>,
    },
    /// A constant.
    Const {
        /// The value as CQL text.
        value: String,
    },
    /// A one-entry collection of an embedded child row: `{key: {fields}}` for a map, `[{fields}]`
    /// for a list.
    Entry {
        /// The map key, absent for a list.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<Box<BindValue>>,
        /// The entry's fields (UDT field name, value).
        fields: Vec<(String, BindValue)>,
    },
    /// The collection read first, with the statement applied to its entries on the client.
    Rewritten {
        /// The collection column.
        column: String,
    },
}

/// What a write statement does to its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteAction {
    /// `INSERT` (an upsert in CQL).
    Insert,
    /// `UPDATE … SET`.
    Update,
    /// `DELETE`.
    Delete,
}

/// A condition under which a write statement runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "when", rename_all = "snake_case")]
pub enum Guard {
    /// Only when a new value differs from the current one for one of these columns: the DELETE
    /// of a moved row (a DELETE and an INSERT of the same row in one batch share a timestamp,
    /// and the tombstone would win).
    KeyChanged {
        /// The source columns compared.
        columns: Vec<ColumnRef>,
    },
    /// Only when the new value of the column is NULL.
    NewIsNull {
        /// The source column.
        column: ColumnRef,
    },
    /// Only when the new value of the column is not NULL.
    NewIsNotNull {
        /// The source column.
        column: ColumnRef,
    },
}

/// One statement a write fans out to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteTarget {
    /// Target table.
    pub table: String,
    /// The CQL statement (with `?` bind markers).
    pub cql: String,
    /// What the statement does.
    #[serde(default = "WriteTarget::default_action")]
    pub action: WriteAction,
    /// What each `?` is bound to, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binds: Vec<Bind>,
    /// Run once per row returned by this read-before-write (index into `read_before_write`);
    /// `current` values then come from that row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<usize>,
    /// Run only under this condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Guard>,
}

impl WriteTarget {
    fn default_action() -> WriteAction {
        WriteAction::Update
    }
}

/// Values a write must read first because the statement does not carry them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBeforeWrite {
    /// The table to read them from.
    pub table: String,
    /// The columns needed (names in that table).
    pub columns: Vec<String>,
    /// Which target tables need them.
    pub for_tables: Vec<String>,
    /// How the read works, or why no table can serve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The CQL SELECT (with `?` bind markers).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cql: String,
    /// What each `?` is bound to (statement values, or values read by an earlier step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binds: Vec<Bind>,
    /// True when it returns several rows (every row that copies the written one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub many: bool,
    /// True when it is keyed by values the write sets (the parent a row moves to): the values
    /// it reads are `new` values; otherwise they are `current` ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_new: bool,
}

/// How one write pattern is applied to the target tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// True when the pattern shapes no write path (a one-off statement such as a data load).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_off: bool,
    /// Why the write cannot be applied to the designed tables by keyed CQL statements (rows
    /// chosen by a range, say): stated for the reviewer instead of a path that would miss rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    /// Table writes per call (statements run once per row read count that row estimate).
    #[serde(default)]
    pub table_writes: f64,
    /// Partitions read before writing, per call.
    #[serde(default)]
    pub reads_before_write: f64,
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

impl std::fmt::Display for BindValue {
    /// A compact form for summaries: `$2`, `cur(trips.city)`, `new(trips.status)`, `day($2)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindValue::Sql { sql } => write!(f, "{sql}"),
            BindValue::New { column } => write!(f, "new({column})"),
            BindValue::Current { column } => write!(f, "cur({column})"),
            BindValue::Bucket { bucket, of } => {
                let unit = match bucket {
                    Bucket::Hour => "hour",
                    Bucket::Day => "day",
                    Bucket::Month => "month",
                };
                write!(f, "{unit}({of})")
            }
            BindValue::Const { value } => write!(f, "{value}"),
            BindValue::Entry { key, fields } => {
                let parts: Vec<String> = fields.iter().map(|(n, v)| format!("{n}: {v}")).collect();
                match key {
                    Some(k) => write!(f, "{{{k}: {{{}}}}}", parts.join(", ")),
                    None => write!(f, "[{{{}}}]", parts.join(", ")),
                }
            }
            BindValue::Rewritten { column } => write!(f, "rewritten({column})"),
        }
    }
}

impl std::fmt::Display for Bind {
    /// `column=value`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.column, self.value)
    }
}

impl std::fmt::Display for Guard {
    /// `when t.c changed`, `when new t.c IS NULL`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Guard::KeyChanged { columns } => {
                let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
                write!(f, "when {} changed", names.join(", "))
            }
            Guard::NewIsNull { column } => write!(f, "when new {column} IS NULL"),
            Guard::NewIsNotNull { column } => write!(f, "when new {column} IS NOT NULL"),
        }
    }
}
