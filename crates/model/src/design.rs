//! The proposed Cassandra design: tables, keys, query mapping, write paths.

use crate::analysis::{Aggregate, ColumnRef};
pub use crate::bucket::{pg_at_utc, Bucket};
use crate::cqltype::CqlType;
use crate::expr::{Expr, Literal};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole proposed target model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The share of the workload's reads and writes the design serves, and every gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::coverage::Coverage>,
    /// Every target name that does not spell its source name as written, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renames: Vec<Rename>,
    /// The N+1 loops of the workload's sessions and what the design did with each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<crate::LoopDecision>,
    /// The writes observed together in transactions, each group with how it is sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_groups: Vec<crate::WriteGroup>,
    /// How a writer that reaches only Cassandra makes a new value of each column a write path
    /// takes from a Postgres sequence (`nextval`, a `serial` or identity column).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<IdAllocation>,
}

/// How new values of a sequence-fed column (`serial`, identity, `nextval(…)`) are made once the
/// application writes only to Cassandra, which has no sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdAllocation {
    /// The column (`table.column` of the source schema).
    pub column: ColumnRef,
    /// The Postgres sequence the source draws its values from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
    /// How a writer makes a new value.
    pub strategy: IdStrategy,
    /// Why this strategy (for humans).
    pub reason: String,
}

/// How a writer makes a new id ([`IdAllocation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdStrategy {
    /// A 64-bit id the client makes, increasing in time: `(ms − epoch_ms) << (node_bits +
    /// counter_bits) | node << counter_bits | counter`, where `ms` is the clock in milliseconds
    /// since 1970 (never going back within a process), `node` the writing process's number
    /// (unique among the processes writing the column) and `counter` the ids already made in
    /// that millisecond. It keeps the column's `bigint` type and lies above every value the
    /// source's sequence reached while that maximum is below `(cut-over ms − epoch_ms) <<
    /// (node_bits + counter_bits)`.
    TimeOrdered {
        /// The ids' epoch in milliseconds since 1970.
        epoch_ms: i64,
        /// Bits of the writing process's number.
        node_bits: u32,
        /// Bits of the counter within a millisecond.
        counter_bits: u32,
    },
    /// No client-made id fits the column (narrower than 64 bits, or not an integer): the
    /// application allocates every new value itself (keeps the Postgres sequence through the
    /// cut-over, or hands out ranges of its own).
    Application,
}

impl IdStrategy {
    /// The time-ordered ids' epoch: 2020-01-01T00:00:00Z in milliseconds (41 bits of
    /// milliseconds last until 2089, the sign bit unused).
    pub const EPOCH_MS: i64 = 1_577_836_800_000;

    /// The time-ordered strategy every 64-bit column gets: 10 bits of node (1,024 writing
    /// processes), 12 of counter (4,096 ids a millisecond a process).
    pub const TIME_ORDERED: IdStrategy = IdStrategy::TimeOrdered {
        epoch_ms: Self::EPOCH_MS,
        node_bits: 10,
        counter_bits: 12,
    };
}

impl Design {
    /// The level the plan's writes are sent at: the strongest where they differ, `LOCAL_QUORUM`
    /// when none is stated (what a backfill or a sync writes at, so that every read of the plan
    /// sees its rows as it sees the application's writes).
    pub fn write_level(&self) -> ConsistencyLevel {
        ConsistencyLevel::strongest(self.writes.iter().filter_map(|w| w.consistency.as_ref()))
    }

    /// The level the plan's reads are sent at: the strongest where they differ, `LOCAL_QUORUM`
    /// when none is stated (what `verify` reads at by default).
    pub fn read_level(&self) -> ConsistencyLevel {
        ConsistencyLevel::strongest(self.queries.iter().filter_map(|q| q.consistency.as_ref()))
    }

    /// The names of the counter tables (`counter` set), in plan order.
    pub fn counter_tables(&self) -> Vec<&str> {
        self.tables
            .iter()
            .filter(|t| t.counter.is_some())
            .map(|t| t.name.as_str())
            .collect()
    }

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CostFigures {
    /// Partitions read by the reads (a lookup chain counts each hop).
    pub partition_reads: f64,
    /// Table writes (CQL statements) made by the writes.
    pub table_writes: f64,
    /// Reads the writes make first (read-before-write), partitions.
    pub reads_before_write: f64,
    /// Bytes stored (one replica), for the whole data set.
    pub stored_bytes: f64,
    /// Rows the reads scan.
    #[serde(default)]
    pub rows_scanned: f64,
    /// Bytes the reads return.
    #[serde(default)]
    pub bytes_returned: f64,
    /// Bytes the writes send (their statements' values).
    #[serde(default)]
    pub bytes_written: f64,
}

/// How the set of tables was chosen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The weights of the terms beyond `weights`: a row scanned, a KiB returned by a read, a
    /// KiB written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term_weights: Option<(f64, f64, f64)>,
}

/// The cost of a design and of the normalized baseline (one table per source table keyed as
/// each read needs, no copies: joins are extra reads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Rows scanned per call.
    #[serde(default)]
    pub rows_scanned: f64,
    /// Bytes returned per call.
    #[serde(default)]
    pub bytes_returned: f64,
    /// Why the way was chosen or not, with the weighted costs it was compared by (a counter
    /// table against scanning the partition per call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Candidate {
    /// The `kind` of a counter table weighed for a count or sum read.
    pub const COUNTER_TABLE: &'static str = "counter table";

    /// A counter table weighed for the read.
    pub fn counter_table(&self) -> bool {
        self.kind == Self::COUNTER_TABLE
    }
}

/// How a count or sum read's `notes` begin the reason no counter table can serve it (the report
/// quotes the rest).
pub const NO_COUNTER_NOTE: &str = "no counter table: ";

/// A check a plan fails: it would lose rows, leave stale copies, read columns a table lacks or
/// change what a query returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Violation {
    /// The check (`a` keys unique … `f` copies maintained; see the designer's validator).
    pub check: String,
    /// What is wrong, naming the table or pattern.
    pub message: String,
    /// The pattern whose read or write it is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The table whose rows or copies it is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
}

/// Keyspace settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Replicas per datacenter: the replication factor, or the fewest of any datacenter.
    pub fn replicas(&self) -> u32 {
        match self {
            Replication::SimpleStrategy { replication_factor } => *replication_factor,
            Replication::NetworkTopologyStrategy { datacenters } => {
                datacenters.values().copied().min().unwrap_or(1)
            }
        }
    }

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// Clustering direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Ascending.
    Asc,
    /// Descending.
    Desc,
}

/// A primary-key column: a source column, or a bucket derived from one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeyColumn {
    /// Column name in the target table.
    pub column: String,
    /// CQL type.
    #[serde(rename = "type")]
    pub cql_type: CqlType,
    /// For a bucket: the source column it is computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    /// For a bucket: its width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<Bucket>,
    /// For a bucket: the time zone its buckets are cut in (IANA name): a day bucket holds the
    /// rows of one calendar day there. Every bind of the column states the same zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Clustering direction (clustering columns only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<SortOrder>,
    /// For a constant partition key (a small table read whole from one partition): its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<String>,
    /// How the column holds its source value when not as the plain CQL type of the source
    /// type (a timestamp kept exactly as microseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
}

/// How a target column holds its source value, when it is not the source type's plain CQL
/// mapping: every executor writes, binds and reads the column this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// A `bigint` of microseconds since 1970-01-01 00:00 UTC (a `timestamp` without time zone
    /// read as UTC; `infinity`/`-infinity` as the largest/smallest bigint), for a key column
    /// whose source keeps microseconds where CQL's `timestamp` keeps milliseconds: rows that
    /// differ below a millisecond stay distinct. `source_sql` computes it; a bind of the column
    /// takes [`BindValue::EpochMicros`].
    EpochMicros,
    /// [`Encoding::EpochMicros`] for a clustering column whose source may be NULL, which a CQL
    /// key cannot hold: NULL is stored as the largest bigint ([`NULL_MICROS`]), where SQL sorts
    /// NULLs by default (after every value ascending, before every value descending), and
    /// `infinity` one below it. Every writer stores NULL so (a bind takes
    /// [`BindValue::EpochMicros`] with `null_last`), every reader reads it back as NULL, and a
    /// read with only a lower bound on the column reads below it (`c < micros(NULL)`): no row
    /// Postgres accepts is refused, and a listing returns them where SQL puts them.
    EpochMicrosNullLast,
    /// [`Encoding::EpochMicros`] with NULL stored as the smallest bigint, where `NULLS FIRST`
    /// ascending (or `NULLS LAST` descending) puts NULLs; `-infinity` one above it. A bind takes
    /// [`BindValue::Encoded`]; a read with only an upper bound reads above it.
    EpochMicrosNullFirst,
    /// A `smallint` or `integer` clustering column whose source may be NULL, as a `bigint`: the
    /// value itself, NULL as the largest bigint (outside the source type's range). A bind takes
    /// [`BindValue::Encoded`].
    IntegerNullLast,
    /// [`Encoding::IntegerNullLast`] with NULL as the smallest bigint.
    IntegerNullFirst,
    /// A `date` clustering column whose source may be NULL, as a `bigint` of days since
    /// 1970-01-01 (`infinity`/`-infinity` as the largest/smallest bigint), NULL as the largest
    /// bigint and `infinity` one below. A bind takes [`BindValue::Encoded`].
    EpochDaysNullLast,
    /// [`Encoding::EpochDaysNullLast`] with NULL as the smallest bigint and `-infinity` one above.
    EpochDaysNullFirst,
}

/// The value an [`Encoding`] stores, before NULL is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedForm {
    /// Microseconds since 1970-01-01 00:00 UTC.
    Micros,
    /// The integer itself.
    Integer,
    /// Days since 1970-01-01.
    Days,
}

/// Where an encoding stores NULL: above every value (SQL's default order) or below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullsAt {
    /// As the largest bigint: after every value ascending, before every value descending.
    Last,
    /// As the smallest bigint.
    First,
}

impl Encoding {
    /// The stored value's form.
    pub fn form(self) -> EncodedForm {
        match self {
            Encoding::EpochMicros
            | Encoding::EpochMicrosNullLast
            | Encoding::EpochMicrosNullFirst => EncodedForm::Micros,
            Encoding::IntegerNullLast | Encoding::IntegerNullFirst => EncodedForm::Integer,
            Encoding::EpochDaysNullLast | Encoding::EpochDaysNullFirst => EncodedForm::Days,
        }
    }

    /// Where NULL is stored, for an encoding that stores it.
    pub fn nulls(self) -> Option<NullsAt> {
        match self {
            Encoding::EpochMicros => None,
            Encoding::EpochMicrosNullLast
            | Encoding::IntegerNullLast
            | Encoding::EpochDaysNullLast => Some(NullsAt::Last),
            Encoding::EpochMicrosNullFirst
            | Encoding::IntegerNullFirst
            | Encoding::EpochDaysNullFirst => Some(NullsAt::First),
        }
    }

    /// The encoding of `form` storing NULL at `nulls`.
    pub fn storing_null(form: EncodedForm, nulls: NullsAt) -> Encoding {
        match (form, nulls) {
            (EncodedForm::Micros, NullsAt::Last) => Encoding::EpochMicrosNullLast,
            (EncodedForm::Micros, NullsAt::First) => Encoding::EpochMicrosNullFirst,
            (EncodedForm::Integer, NullsAt::Last) => Encoding::IntegerNullLast,
            (EncodedForm::Integer, NullsAt::First) => Encoding::IntegerNullFirst,
            (EncodedForm::Days, NullsAt::Last) => Encoding::EpochDaysNullLast,
            (EncodedForm::Days, NullsAt::First) => Encoding::EpochDaysNullFirst,
        }
    }

    /// The encoding's name in plan.json (`epoch_micros_null_last` …).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::EpochMicros => "epoch_micros",
            Encoding::EpochMicrosNullLast => "epoch_micros_null_last",
            Encoding::EpochMicrosNullFirst => "epoch_micros_null_first",
            Encoding::IntegerNullLast => "integer_null_last",
            Encoding::IntegerNullFirst => "integer_null_first",
            Encoding::EpochDaysNullLast => "epoch_days_null_last",
            Encoding::EpochDaysNullFirst => "epoch_days_null_first",
        }
    }

    /// True when NULL is stored as a bigint (the column may be a key and still hold NULL rows).
    pub fn stores_null(self) -> bool {
        self.nulls().is_some()
    }

    /// The bigint stored for NULL, for an encoding that stores it.
    pub fn null_value(self) -> Option<i64> {
        self.nulls().map(|n| match n {
            NullsAt::Last => i64::MAX,
            NullsAt::First => i64::MIN,
        })
    }

    /// The bigint stored for `value` (in the encoding's form; NULL as [`Encoding::null_value`],
    /// a value equal to it one nearer the others). `None` for NULL where none is stored.
    pub fn store(self, value: Option<i64>) -> Option<i64> {
        match (value, self.nulls()) {
            (None, _) => self.null_value(),
            (Some(v), Some(NullsAt::Last)) if v == i64::MAX => Some(v - 1),
            (Some(v), Some(NullsAt::First)) if v == i64::MIN => Some(v + 1),
            (Some(v), _) => Some(v),
        }
    }

    /// The value (in the encoding's form) a stored bigint stands for: NULL for the NULL value,
    /// the extreme for the one beside it.
    pub fn unstore(self, stored: i64) -> Option<i64> {
        match self.nulls() {
            Some(_) if Some(stored) == self.null_value() => None,
            Some(NullsAt::Last) if stored == i64::MAX - 1 => Some(i64::MAX),
            Some(NullsAt::First) if stored == i64::MIN + 1 => Some(i64::MIN),
            _ => Some(stored),
        }
    }
}

/// The bigint an [`Encoding::EpochMicrosNullLast`] column stores for NULL.
pub const NULL_MICROS: i64 = i64::MAX;

/// How a generated id is made when a write inserts a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// A new time-based (version 1) UUID, made by the application once per call of the write
    /// and bound to every statement of the call.
    Timeuuid,
}

/// The id a table without a primary or unique key gets in the target: such a Postgres table can
/// hold equal rows, which a key of its columns would merge into one CQL row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RowId {
    /// The source table whose rows it tells apart.
    pub table: String,
    /// How the rows already in the source get theirs: the SQL expression `source_sql` computes it
    /// with (the backfill and any other executor read it like any column).
    pub existing: String,
    /// How a row a write inserts gets its.
    pub inserted: Generator,
    /// Why the table has one.
    pub reason: String,
}

/// A column of a target table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DesignColumn {
    /// Name in the target table.
    pub name: String,
    /// CQL type.
    #[serde(rename = "type")]
    pub cql_type: CqlType,
    /// The source column it comes from (absent for derived buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ColumnRef>,
    /// `STATIC` (one value per partition).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_static: bool,
    /// For a collection of embedded child rows: the child table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeds: Option<String>,
    /// How the column holds its source value, when not as the plain mapping of its type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// For a generated row id (no source column): how its values are made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<RowId>,
    /// Other source columns the table's joins make equal to `source` in every row
    /// (`film_actor.film_id` beside `film_category.film_id` joined on it): a unique key of a
    /// joined table may be held through them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equals: Vec<ColumnRef>,
}

/// Size estimates of a target table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// Machine-readable code (`large_partition`, `low_cardinality_key`, `hot_key`, `unbounded_growth`, …).
    pub code: String,
    /// A sentence for the reviewer, saying what to do.
    pub message: String,
}

/// One proposed Cassandra table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The Postgres query whose rows fill the table, as data: every executor (backfill,
    /// verify, sync, the Spark job) builds its SQL from it ([`crate::SourceSql::sql`]).
    pub source: crate::source::SourceQuery,
    /// The same query as SQL text, for the reviewer ([`crate::SourceSql::sql`] of `source`, checked
    /// equal by the plan's validator); no program reads it back.
    pub source_sql: String,
    /// Size estimates.
    pub estimates: Estimates,
    /// Warnings for the reviewer.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// For a counter table: what it counts. Its columns are its partition key (the groups) and
    /// `counter` columns only; it is written by `UPDATE … SET c = c + ?` alone (never INSERT,
    /// `USING TIMESTAMP` or `USING TTL`), and its `source_sql` returns each group's values
    /// (`SELECT count(*) AS n, t0.post_id FROM likes t0 GROUP BY t0.post_id`: the counters first, in the order of `columns`), which a backfill adds with `UPDATE … SET n = n + ? WHERE post_id = ?`, binding each row as it comes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterTable>,
    /// Its rows expire: every write gives them a TTL from a timestamp column (seed 003's TTL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<RowTtl>,
    /// The tombstones a read that starts at the oldest rows scans (seed 003: a queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tombstones: Option<Tombstones>,
}

/// What a counter table keeps: per group of the counted table's rows (the values of
/// `group_by`, its partition key), the count of the rows and, per summed column, their sum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CounterTable {
    /// The source table whose rows are counted.
    pub counts: String,
    /// The source columns that make a group (the partition key's sources, in key order).
    pub group_by: Vec<ColumnRef>,
    /// The counter column holding the number of rows of the group (`count(*)`): a group whose
    /// count is 0 (or that has no row) has no source row.
    pub count_column: String,
    /// The counter columns holding a sum, each with the source column it sums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sums: Vec<(String, ColumnRef)>,
}

/// The change a counter statement makes: `column = column + ?` or `column = column - ?`, the
/// `?` bound (in `binds`, under the counter column's name) to the amount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CounterChange {
    /// The counter columns changed, each with its sign (true: subtracted).
    pub columns: Vec<(String, bool)>,
}

/// A read served by a counter table: each row read holds one group's counters; the client
/// drops rows whose `count_column` is 0 (groups left without a row), and when the SQL has no
/// GROUP BY (`SELECT count(*) … WHERE post_id = $1`: one result row always) and no row is left,
/// returns one row where each column read from `count_column` is 0 and each other column
/// (a sum of no rows) is NULL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CounterRead {
    /// The counter column holding each group's row count.
    pub count_column: String,
    /// True when the SQL groups (GROUP BY): an empty group returns no row.
    pub grouped: bool,
}

/// Rows kept only until a timestamp column passes: the reads see no row past it and a purge
/// deletes those rows, so Cassandra expires them itself. Every INSERT and UPDATE of the table
/// carries `USING TTL ?` bound to [`BindValue::SecondsUntil`] of the column. A backfill (and a
/// sync's row copy) gives each row the TTL `SecondsUntil` would of `target_column`, counted
/// from when it converts the row (a later send only lengthens the life, which the reads'
/// filter covers); the backfill skips a row already past it (`rows_expired` of the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RowTtl {
    /// The source column whose instant ends a row's life (`password_resets.expires_at`).
    pub column: ColumnRef,
    /// The table's column holding it.
    pub target_column: String,
    /// The reads that keep only rows whose column is later than now (`expires_at > now()`).
    pub reads: Vec<String>,
    /// The write patterns that delete the rows whose column has passed
    /// (`DELETE … WHERE expires_at < now()`): served by the TTL, they send nothing.
    pub purges: Vec<String>,
    /// Why, for the reviewer.
    pub reason: String,
}

/// What an oldest-first read of a table whose rows are deleted about as often as they are
/// inserted scans: the deleted rows' tombstones lie before the live rows until compaction
/// drops them, `gc_grace_seconds` after the delete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tombstones {
    /// The read that starts at the oldest rows (pattern id).
    pub read: String,
    /// The write patterns that delete the table's rows.
    pub deletes: Vec<String>,
    /// Rows inserted per day (the workload's calls, taken over `workload_days`).
    pub inserted_per_day: f64,
    /// Rows deleted per day.
    pub deleted_per_day: f64,
    /// Partitions the deletes spread over (the table's estimate).
    pub partitions: f64,
    /// Seconds a tombstone is kept before compaction may drop it (Cassandra's default, 10 days).
    pub gc_grace_seconds: u64,
    /// Tombstones one read scans before its first live row: the deletes of its partition over
    /// `gc_grace_seconds`.
    pub per_read: f64,
}

/// A user-defined type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UserType {
    /// Type name.
    pub name: String,
    /// Fields: name and CQL type.
    pub fields: Vec<(String, CqlType)>,
}

/// How one read pattern is served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueryMapping {
    /// Pattern id.
    pub pattern: String,
    /// The name of the function that runs this read in a generated access layer (`remodel
    /// codegen`), snake_case, distinct among the plan's reads and writes: the statement's
    /// sqlc-style annotation (`-- name: TripsOfDriver :many` → `trips_of_driver`), else its table
    /// and what it restricts (`trips_by_driver_id`). Absent for a one-off read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
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
    /// The columns the read returns, in the order of the SQL's result: where each is found in
    /// the rows read (after the client's work), so an application maps them back without
    /// reading the SQL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<ReadColumn>,
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
    /// Which partitions the read touches, as data: one, one per value of a list-valued bind
    /// (an `IN`, the buckets between a window's bounds), or all of them (a scan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionRead>,
    /// What the client does with the rows once every request of the read (and every `then`
    /// step) has returned, in this order: filter, group and aggregate (or distinct), sort,
    /// offset, limit. Empty when the CQL returns the answer as it is.
    #[serde(default, skip_serializing_if = "ClientWork::is_empty")]
    pub client: ClientWork,
    /// The consistency level of the read's statements (`cql` and every `then` step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
    /// Why the read has no executable mapping (a filter no client can evaluate, a construct
    /// not modelled): stated instead of a mapping that would return other rows. A read with
    /// this set has no `cql`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    /// What the mapping changes in the statement's meaning that the reviewer must accept
    /// (`lock_dropped`: a `SELECT … FOR UPDATE` takes no lock in Cassandra; …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Set when a counter table serves the read: how its rows become the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterRead>,
    /// What the read costs per call, term by term (the way chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ReadTerms>,
}

/// A read's cost per call, term by term: what the designer's objective weighs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReadTerms {
    /// Partitions read (each lookup hop counts).
    pub partitions: f64,
    /// Rows the read scans in them (all the rows of each partition read for an aggregate; at
    /// most the LIMIT when no client-side filter comes before it).
    pub rows_scanned: f64,
    /// Bytes the read returns to the client.
    pub bytes_returned: f64,
    /// The weighted total: partitions × `read` + rows × `row` + KiB returned × `kib_read`.
    pub weighted: f64,
}

/// One column of a read's result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReadColumn {
    /// The name the SQL's result gives it (its alias, else the column's name).
    pub name: String,
    /// The source column it stands for; absent for a computed column (an aggregate or an
    /// expression of the SELECT list), which no CQL column holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ColumnRef>,
    /// The target table whose CQL column holds it: the read's table, a `then` step's, or the
    /// embedded child's entries (`unnest`: then `cql_column` is the entry's field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// The CQL column (or entry field) that holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cql_column: Option<String>,
    /// Its CQL type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub cql_type: Option<CqlType>,
    /// How the CQL column holds the source value when not as its type's plain mapping: the
    /// application decodes it (an [`Encoding::EpochMicros`] `bigint` back to its timestamp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// A computed column that is an aggregate of the SELECT list: its index in the pattern's
    /// `aggregates` (`workload.patterns[].analysis.aggregates`), which the client computes
    /// (`client.aggregates`) or the CQL does. Absent for a column that is not one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<usize>,
}

/// Which partitions a read touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PartitionRead {
    /// Exactly one: every partition-key column is bound to one value.
    One,
    /// One per value of the list-valued bind at `bind` (an index into `binds`): a `IN ?`
    /// bound to a list is one request; a [`BindValue::Buckets`] bind runs the statement once
    /// per bucket. The rows of all of them are the read's rows.
    Each {
        /// The index of the bind in `binds`.
        bind: usize,
    },
    /// Every partition: the statement restricts no partition key (a paged scan of the table).
    Scan,
}

/// The work a client does on the rows of a read, in SQL's order: `unnest`, then `filters`, then
/// `group_by` with `aggregates` (or `distinct`), then `sort`, then `offset`, then `limit`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClientWork {
    /// The rows of an embedded child table, read from a collection column of the rows: done
    /// first, before the filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unnest: Option<Unnest>,
    /// Conditions every row kept must satisfy (TRUE, not NULL), over the columns of the rows
    /// read (named by source column) and the statement's parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<Expr>,
    /// Group by these columns (one output row per distinct combination; NULLs form one group).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<ColumnRef>,
    /// Aggregates computed per group (over all rows kept when `group_by` is empty: one output
    /// row, also for no input rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<Aggregate>,
    /// For a GROUP BY without aggregates on columns that are not all grouped: which row of a
    /// group stands for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_row: Option<GroupRow>,
    /// Keep one row of each set of equal rows (`SELECT DISTINCT`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct: bool,
    /// Sort the rows by these keys (the first decides, the next breaks ties). Rows equal on
    /// every key may come in any order, as in SQL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sort: Vec<SortKey>,
    /// Skip this many rows (a column-free expression of the parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Expr>,
    /// Keep at most this many rows (a column-free expression of the parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Expr>,
}

/// An embedded child table's rows read from a collection column: each entry (of a list, or
/// each value of a map) becomes one row holding the entry's fields as the child's columns,
/// beside the other columns of the row it was read from; a row whose collection is empty or
/// NULL gives no row, as SQL's inner join of the child gives none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Unnest {
    /// The collection column of the table read.
    pub collection: String,
    /// The child table whose rows the entries are.
    pub table: String,
    /// The child's columns, in the order of the entry type's fields (the i-th field holds the
    /// i-th column).
    pub columns: Vec<String>,
    /// The child's columns the entries leave out (its foreign key to the row's table), each
    /// with the source column of the row that holds its value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<(String, ColumnRef)>,
}

impl QueryMapping {
    /// Every typed expression the read evaluates: its binds' (its lookups' too), then the
    /// client's filters, offset and limit.
    pub fn exprs(&self) -> Vec<&Expr> {
        let binds = self
            .binds
            .iter()
            .chain(self.then.iter().flat_map(|s| &s.binds));
        let mut out: Vec<&Expr> = binds.flat_map(|b| b.value.exprs()).collect();
        out.extend(self.client.filters.iter());
        out.extend(self.client.offset.iter());
        out.extend(self.client.limit.iter());
        out
    }
}

impl WritePath {
    /// Every typed expression the write path evaluates: its new values, its reads' binds and
    /// filters, its statements' binds, an upsert's `SET` and `WHERE`.
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.values.iter().map(|v| &v.value).collect();
        for r in &self.read_before_write {
            out.extend(r.binds.iter().flat_map(|b| b.value.exprs()));
            out.extend(r.filter.iter());
        }
        out.extend(
            self.targets
                .iter()
                .flat_map(|t| &t.binds)
                .flat_map(|b| b.value.exprs()),
        );
        if let Some(ConflictAction::Update { set, filter }) =
            self.upsert.as_ref().map(|u| &u.action)
        {
            out.extend(set.iter().map(|v| &v.value));
            out.extend(filter.iter());
        }
        out
    }
}

impl ClientWork {
    /// True when the client has nothing to do.
    pub fn is_empty(&self) -> bool {
        *self == ClientWork::default()
    }
}

/// Which row of a group stands for it when a GROUP BY has no aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroupRow {
    /// Any row: every column returned is functionally dependent on the grouped columns (a
    /// group by a primary key), so all rows of a group agree on them.
    Any,
}

/// One key of a client-side sort.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SortKey {
    /// What is compared: a source column of the rows, or an aggregate computed on the client.
    pub by: SortBy,
    /// Descending.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub desc: bool,
    /// NULLs before non-NULL values (Postgres' default: NULLs last ascending, first descending).
    pub nulls_first: bool,
}

/// The value a [`SortKey`] compares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SortBy {
    /// A source column.
    Column {
        /// The column.
        column: ColumnRef,
    },
    /// An aggregate of [`ClientWork::aggregates`] (or one the CQL returns).
    Aggregate {
        /// The aggregate.
        aggregate: Aggregate,
    },
}

/// A consistency level and why it was chosen (seed 003: read your own writes at LOCAL_QUORUM
/// after LOCAL_QUORUM writes; ONE where a stale answer is fine).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Consistency {
    /// The level.
    pub level: ConsistencyLevel,
    /// Why.
    pub reason: String,
    /// The writes whose rows this read follows in the same session (a user reading their own
    /// write), or, on a write, the reads that follow it so: empty where none was seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_your_writes: Vec<String>,
}

/// A Cassandra consistency level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConsistencyLevel {
    /// `ONE`.
    One,
    /// `LOCAL_ONE`.
    LocalOne,
    /// `QUORUM`.
    Quorum,
    /// `LOCAL_QUORUM`.
    LocalQuorum,
    /// `EACH_QUORUM` (writes only).
    EachQuorum,
    /// `ALL`.
    All,
}

impl std::str::FromStr for ConsistencyLevel {
    type Err = String;

    /// A level as CQL names it, in any case (`local_quorum`, `ALL`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let levels = [
            ConsistencyLevel::One,
            ConsistencyLevel::LocalOne,
            ConsistencyLevel::Quorum,
            ConsistencyLevel::LocalQuorum,
            ConsistencyLevel::EachQuorum,
            ConsistencyLevel::All,
        ];
        levels
            .into_iter()
            .find(|l| l.cql_name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = levels.iter().map(|l| l.cql_name()).collect();
                format!("`{s}` is not a consistency level ({})", names.join(", "))
            })
    }
}

impl ConsistencyLevel {
    /// How strong a level is (ONE and LOCAL_ONE weakest, ALL strongest).
    fn strength(self) -> u8 {
        match self {
            ConsistencyLevel::One | ConsistencyLevel::LocalOne => 0,
            ConsistencyLevel::LocalQuorum => 1,
            ConsistencyLevel::Quorum => 2,
            ConsistencyLevel::EachQuorum => 3,
            ConsistencyLevel::All => 4,
        }
    }

    /// The strongest of `levels`, `LOCAL_QUORUM` when there is none.
    pub fn strongest<'a>(levels: impl Iterator<Item = &'a Consistency>) -> ConsistencyLevel {
        levels
            .map(|c| c.level)
            .max_by_key(|l| l.strength())
            .unwrap_or(ConsistencyLevel::LocalQuorum)
    }

    /// The replicas of a datacenter of `replicas` that must answer (a quorum is counted in the
    /// datacenter, as the LOCAL and EACH levels count it).
    pub fn replicas_needed(self, replicas: u32) -> u32 {
        match self {
            ConsistencyLevel::One | ConsistencyLevel::LocalOne => 1,
            ConsistencyLevel::Quorum
            | ConsistencyLevel::LocalQuorum
            | ConsistencyLevel::EachQuorum => replicas / 2 + 1,
            ConsistencyLevel::All => replicas,
        }
    }

    /// `LOCAL_QUORUM`, as CQL names the level.
    pub fn cql_name(self) -> &'static str {
        match self {
            ConsistencyLevel::One => "ONE",
            ConsistencyLevel::LocalOne => "LOCAL_ONE",
            ConsistencyLevel::Quorum => "QUORUM",
            ConsistencyLevel::LocalQuorum => "LOCAL_QUORUM",
            ConsistencyLevel::EachQuorum => "EACH_QUORUM",
            ConsistencyLevel::All => "ALL",
        }
    }
}

/// A read after the first read of a query (a lookup by key of values the first rows name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bind {
    /// The target column it restricts or sets (`limit` for a LIMIT).
    pub column: String,
    /// The CQL type of the `?` marker, as Cassandra prepares the statement: the type the value
    /// is sent as. The column's type for `column = ?` (`bigint` for a column kept as
    /// [`Encoding::EpochMicros`]; each value of a [`BindValue::Buckets`] bind has it),
    /// `list<T>` for `column IN ?`, `int` for `LIMIT ?`; for a collection write the
    /// collection's type (`c = ?`, `c = c + ?`), its key's (`c[?]`) or its entry's (`c[k] = ?`).
    #[serde(rename = "type")]
    pub cql_type: CqlType,
    /// Where the value comes from.
    pub value: BindValue,
}

/// Where a bound value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum BindValue {
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
    /// The time bucket a value falls in, cut in `time_zone`.
    Bucket {
        /// The bucket width.
        bucket: Bucket,
        /// The value bucketed.
        of: Box<BindValue>,
        /// The time zone buckets are cut in (IANA name).
        #[serde(default = "utc")]
        time_zone: String,
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
    /// A column-free expression of the statement's parameters, constants and the clock.
    Expr {
        /// The expression.
        expr: Expr,
    },
    /// A typed constant.
    Literal {
        /// The value.
        value: Literal,
    },
    /// A list (what a CQL `IN ?` takes): the values of `items`, in order. (An `IN ?` bound to
    /// one parameter the application sends as a list, a normalized `IN ($n)`, is an
    /// [`BindValue::Expr`] of that parameter.)
    List {
        /// The values (column-free expressions).
        items: Vec<Expr>,
    },
    /// Every time bucket from the one `lower` falls in to the one `upper` falls in, both included,
    /// in ascending order: a list-valued bind — the statement runs once per bucket (see
    /// [`PartitionRead::Each`]).
    Buckets {
        /// The bucket width.
        bucket: Bucket,
        /// The time zone buckets are cut in (IANA name; the table's bucket column states the same).
        time_zone: String,
        /// The window's lower bound (an instant).
        lower: Box<BindValue>,
        /// The window's upper bound (an instant).
        upper: Box<BindValue>,
        /// The upper bound is excluded (`<`): when it falls exactly on the first instant of a
        /// bucket, that bucket holds no row of the window and is not read.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        upper_exclusive: bool,
    },
    /// A timestamp as a `bigint` of microseconds since the epoch ([`Encoding::EpochMicros`]):
    /// the bind of a column kept that way.
    EpochMicros {
        /// The timestamp value.
        of: Box<BindValue>,
        /// The column stores NULL as [`NULL_MICROS`] ([`Encoding::EpochMicrosNullLast`]): a
        /// NULL value is bound as it, `infinity` one below.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        null_last: bool,
    },
    /// The bind of a key column that stores NULL as a bigint ([`Encoding::stores_null`], but
    /// [`Encoding::EpochMicrosNullLast`], which takes [`BindValue::EpochMicros`]): `of`'s value
    /// in the encoding's form, stored as [`Encoding::store`] says.
    Encoded {
        /// The value (a timestamp, an integer or a date, NULL included).
        of: Box<BindValue>,
        /// The column's encoding.
        encoding: Encoding,
    },
    /// The generated id ([`RowId`]) of the written row of `table`: for an INSERT a new one, made
    /// as the column's `row_id.inserted` says, once per call; otherwise the id read before the
    /// write (of the row a `for_each` statement runs for).
    RowId {
        /// The source table.
        table: String,
    },
    /// A row's time to live (the `?` of `USING TTL ?`, an `int`): the whole seconds from `clock`
    /// until the instant `of`, rounded up, so the row lives at least until that instant (the
    /// reads' own `> now()` filter hides it for the rest of that second). A NULL instant binds
    /// 0, which CQL reads as no TTL: the row stays, as the source keeps a row whose column is
    /// NULL. An instant less than `min` seconds away binds `min` (the row is written and
    /// expires at once, hidden by the reads' filter meanwhile, and replaces any older version).
    /// More than `max` seconds away (Cassandra refuses a TTL over 20 years) binds 0 too.
    SecondsUntil {
        /// The instant (a timestamp value).
        of: Box<BindValue>,
        /// Whose clock "now" is.
        clock: TtlClock,
        /// The least TTL sent: 1.
        min: u32,
        /// The greatest TTL sent: 630,720,000 (20 years).
        max: u32,
    },
}

/// The clock a [`BindValue::SecondsUntil`] counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TtlClock {
    /// The executor's wall clock when it sends the statement (Cassandra counts a TTL from when
    /// the write arrives; the two clocks are assumed in step, as NTP keeps them).
    Sent,
}

impl BindValue {
    /// The typed expressions inside the value (an expression, a list's items, the instant of a
    /// bucket, of a TTL, …), in order: what an executor evaluates to bind it.
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.collect_exprs(&mut out);
        out
    }

    fn collect_exprs<'a>(&'a self, out: &mut Vec<&'a Expr>) {
        match self {
            BindValue::Expr { expr } => out.push(expr),
            BindValue::List { items } => out.extend(items.iter()),
            BindValue::Bucket { of, .. }
            | BindValue::EpochMicros { of, .. }
            | BindValue::Encoded { of, .. }
            | BindValue::SecondsUntil { of, .. } => of.collect_exprs(out),
            BindValue::Buckets { lower, upper, .. } => {
                lower.collect_exprs(out);
                upper.collect_exprs(out);
            }
            BindValue::Entry { key, fields } => {
                if let Some(k) = key {
                    k.collect_exprs(out);
                }
                for (_, f) in fields {
                    f.collect_exprs(out);
                }
            }
            BindValue::New { .. }
            | BindValue::Current { .. }
            | BindValue::Literal { .. }
            | BindValue::Rewritten { .. }
            | BindValue::RowId { .. } => {}
        }
    }
    /// The value an encoded bind converts (itself when it is not one).
    pub fn unencoded(&self) -> &BindValue {
        match self {
            BindValue::EpochMicros { of, .. } | BindValue::Encoded { of, .. } => of,
            other => other,
        }
    }

    /// The bind of `of` to a column kept in `encoding`: [`BindValue::EpochMicros`] for the
    /// microsecond encodings plan.json has always spelt so, [`BindValue::Encoded`] for the others.
    pub fn encoded(encoding: Encoding, of: BindValue) -> BindValue {
        let of = Box::new(of);
        match encoding {
            Encoding::EpochMicros | Encoding::EpochMicrosNullLast => BindValue::EpochMicros {
                of,
                null_last: encoding == Encoding::EpochMicrosNullLast,
            },
            encoding => BindValue::Encoded { of, encoding },
        }
    }

    /// The TTL bind of a row expiring at `of`: seconds until it, from the sender's clock.
    pub fn seconds_until(of: BindValue) -> BindValue {
        BindValue::SecondsUntil {
            of: Box::new(of),
            clock: TtlClock::Sent,
            min: 1,
            max: MAX_TTL_SECONDS,
        }
    }
}

/// Cassandra's largest TTL: 20 years (`MAX_TTL` of `Attributes`).
pub const MAX_TTL_SECONDS: u32 = 630_720_000;

/// The TTL of a row expiring `micros_until` microseconds from now, as [`BindValue::SecondsUntil`]
/// states it: the seconds rounded up, at least `min`; 0 (no TTL) past `max`.
pub fn ttl_seconds(micros_until: i64, min: u32, max: u32) -> i32 {
    let secs =
        micros_until.div_euclid(1_000_000) + i64::from(micros_until.rem_euclid(1_000_000) > 0);
    if secs > i64::from(max) {
        return 0;
    }
    secs.max(i64::from(min)) as i32
}

fn utc() -> String {
    "UTC".into()
}

/// What a write statement does to its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Only when none of these values is NULL: the key values of a table that leaves out the
    /// rows where they are NULL (a counter's group; a key every read served asks a value of):
    /// no read returns such a row, a NULL cannot be a key, and the backfill skips it too.
    AllNotNull {
        /// The values (each a source column's `new` or `current` value, or a bind value of it:
        /// its bucket, its epoch microseconds).
        values: Vec<BindValue>,
    },
    /// Only when every one of these holds.
    All {
        /// The conditions.
        all: Vec<Guard>,
    },
}

impl Guard {
    /// True when the guard holds only where `value` is not NULL (an `all_not_null` naming it,
    /// alone or among `all`).
    pub fn needs_not_null(&self, value: &BindValue) -> bool {
        self.conditions()
            .iter()
            .any(|g| matches!(g, Guard::AllNotNull { values } if values.contains(value)))
    }

    /// The conditions that must all hold: the guard itself, or those of `all` (flattened).
    pub fn conditions(&self) -> Vec<&Guard> {
        match self {
            Guard::All { all } => all.iter().flat_map(Guard::conditions).collect(),
            g => vec![g],
        }
    }

    /// `a` and `b` both (`a` absent: `b`).
    pub fn and(a: Option<Guard>, b: Guard) -> Guard {
        match a {
            None => b,
            Some(Guard::All { mut all }) => {
                all.push(b);
                Guard::All { all }
            }
            Some(a) => Guard::All { all: vec![a, b] },
        }
    }
}

/// One statement a write fans out to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// For a counter table's statement (`UPDATE … SET n = n + ?`): what it changes. Counter
    /// statements never carry `USING TIMESTAMP`/`TTL`, are not idempotent (sent once, never
    /// retried blindly) and go in the path's counter batch ([`BatchPlan::counters`]), never in a
    /// batch with other statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterChange>,
}

impl WriteTarget {
    fn default_action() -> WriteAction {
        WriteAction::Update
    }
}

/// Values a write must read first because the statement does not carry them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Only rows for which every condition holds are kept (the statement's predicates the key
    /// does not apply: `DELETE … WHERE user_id = $1 AND revoked_at IS NULL` reads the user's
    /// rows and keeps the unrevoked ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<Expr>,
    /// The name expressions use for its rows ([`crate::RowRef::Step`]): the alias of a table an
    /// `UPDATE … FROM` reads (`s` in `FROM accounts s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// How one write pattern is applied to the target tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WritePath {
    /// Pattern id.
    pub pattern: String,
    /// The name of the function that runs this write path in a generated access layer, as
    /// [`QueryMapping::function`] (`insert_trips`, `update_trips_status_by_trip_id`). Absent for
    /// a one-off write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
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
    /// The value every source column the statement gives a value takes after it, as the
    /// statement, a column default, a stored generated column or a sequence computes it:
    /// what [`BindValue::New`] of that column is. A column not listed keeps its current value
    /// (an INSERT's unlisted column without a default is NULL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<NewValue>,
    /// How the statements are sent together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchPlan>,
    /// For `INSERT … ON CONFLICT`: the read-modify-write that stands for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upsert: Option<Upsert>,
    /// The consistency level of the write's statements and of its reads before write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
    /// What the mapping changes in the statement's meaning that the reviewer must accept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// A purge of expired rows that the tables' TTL does instead (no statement is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by_ttl: Option<ServedByTtl>,
}

/// A DELETE of the rows whose timestamp has passed, done by Cassandra's TTL ([`RowTtl`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServedByTtl {
    /// The source column whose passing the purge deletes by.
    pub column: ColumnRef,
    /// The tables whose rows expire by it.
    pub tables: Vec<String>,
    /// Why, for the reviewer.
    pub reason: String,
}

/// The value a write gives one source column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NewValue {
    /// The source column.
    pub column: ColumnRef,
    /// Its new value: an expression of the parameters, the clock, the row's current values
    /// (`SET n = n + 1`), the proposed row of an upsert, or a named read step's row.
    pub value: Expr,
    /// Where the value comes from.
    pub origin: ValueOrigin,
}

/// Where a [`NewValue`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ValueOrigin {
    /// The statement gives it.
    Statement,
    /// The column's `DEFAULT` (an INSERT that does not list the column, or `DEFAULT`).
    Default,
    /// A stored generated column (`GENERATED ALWAYS AS (…) STORED`), recomputed on every write
    /// of a column it reads.
    Generated,
    /// An identity or serial column's sequence.
    Identity,
}

/// How the statements of a write path are sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BatchPlan {
    /// The kind (of the statements that are not counter statements, when the path has any).
    pub kind: BatchKind,
    /// Why.
    pub reason: String,
    /// How the path's counter statements (targets with `counter`) are sent, after the others:
    /// `single` or `counter` (a counter batch). Cassandra refuses counter and non-counter
    /// statements in one batch, so the two sends are not atomic together. (A path of counter
    /// statements only has them in `kind` too, and sends nothing else.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<BatchKind>,
    /// For a `logged` batch whose statements (once per row of a many-row read) can pass
    /// Cassandra's `batch_size_fail_threshold` for the rows with the most of them: send them as
    /// consecutive logged batches of at most this many statements, in order (each applied
    /// whole, not all together: the reason says so). Absent: one batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_statements: Option<u32>,
}

/// A way to send a write path's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// One statement: no batch.
    Single,
    /// A logged batch: every statement applies or, after a failure, is replayed by the
    /// coordinator's batch log (copies in several partitions stay in step).
    Logged,
    /// An unlogged batch (statements of one partition: atomic and isolated there).
    Unlogged,
    /// A counter batch (`BEGIN COUNTER BATCH`): counter updates only, not replayed by a batch
    /// log.
    Counter,
}

/// The read-modify-write an `INSERT … ON CONFLICT (cols) DO …` becomes: read the row with the
/// proposed key; none found → write the proposed row; found → `DO NOTHING` skips the write,
/// `DO UPDATE` writes the row with `set` applied (where `filter` holds). Not atomic: two
/// writers of one key race (stated in the path's warnings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Upsert {
    /// The conflict target's source columns.
    pub conflict: Vec<ColumnRef>,
    /// The index in `read_before_write` of the read of the existing row by those columns.
    pub existing: usize,
    /// What happens on a conflict.
    pub action: ConflictAction,
}

/// What an upsert does when the row exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum ConflictAction {
    /// `DO NOTHING`.
    Nothing,
    /// `DO UPDATE SET … [WHERE …]`: the new values (over the existing row, [`crate::RowRef::This`],
    /// and the proposed one, [`crate::RowRef::Excluded`]).
    Update {
        /// The columns set.
        set: Vec<NewValue>,
        /// The `WHERE` of `DO UPDATE`: the update happens only where it holds.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        filter: Vec<Expr>,
    },
}

/// A suggested extra table (counter or summary) for a pattern that cannot be one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
            BindValue::New { column } => write!(f, "new({column})"),
            BindValue::Current { column } => write!(f, "cur({column})"),
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                write!(f, "{}({of}", bucket.name())?;
                if time_zone != "UTC" {
                    write!(f, " in {time_zone}")?;
                }
                write!(f, ")")
            }
            BindValue::Buckets {
                bucket,
                time_zone,
                lower,
                upper,
                upper_exclusive,
            } => {
                let to = if *upper_exclusive { "..<" } else { ".." };
                write!(f, "each {}({lower} {to} {upper}", bucket.name())?;
                if time_zone != "UTC" {
                    write!(f, " in {time_zone}")?;
                }
                write!(f, ")")
            }
            BindValue::Expr { expr } => write!(f, "{expr}"),
            BindValue::SecondsUntil { of, .. } => write!(f, "seconds_until({of})"),
            BindValue::List { items } => {
                let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "({})", parts.join(", "))
            }
            BindValue::Literal { value } => write!(f, "{value}"),
            BindValue::Entry { key, fields } => {
                let parts: Vec<String> = fields.iter().map(|(n, v)| format!("{n}: {v}")).collect();
                match key {
                    Some(k) => write!(f, "{{{k}: {{{}}}}}", parts.join(", ")),
                    None => write!(f, "[{{{}}}]", parts.join(", ")),
                }
            }
            BindValue::Rewritten { column } => write!(f, "rewritten({column})"),
            BindValue::EpochMicros { of, null_last } => {
                write!(
                    f,
                    "micros({of}){}",
                    if *null_last { " null last" } else { "" }
                )
            }
            BindValue::Encoded { of, encoding } => write!(f, "{}({of})", encoding.name()),
            BindValue::RowId { table } => write!(f, "row_id({table})"),
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
            Guard::AllNotNull { values } => {
                let names: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                write!(f, "when {} IS NOT NULL", names.join(" AND "))
            }
            Guard::All { all } => {
                let parts: Vec<String> = all
                    .iter()
                    .map(|g| {
                        let s = g.to_string();
                        s.strip_prefix("when ").map(str::to_string).unwrap_or(s)
                    })
                    .collect();
                write!(f, "when {}", parts.join(" and "))
            }
        }
    }
}

#[cfg(test)]
mod ttl_tests {
    use super::*;

    #[test]
    fn a_ttl_rounds_up_and_keeps_to_its_bounds() {
        assert_eq!(ttl_seconds(5_000_000, 1, MAX_TTL_SECONDS), 5);
        assert_eq!(ttl_seconds(4_000_001, 1, MAX_TTL_SECONDS), 5);
        assert_eq!(ttl_seconds(1, 1, MAX_TTL_SECONDS), 1);
        assert_eq!(ttl_seconds(0, 1, MAX_TTL_SECONDS), 1);
        assert_eq!(ttl_seconds(-3_500_000, 1, MAX_TTL_SECONDS), 1);
        let max = i64::from(MAX_TTL_SECONDS) * 1_000_000;
        assert_eq!(ttl_seconds(max, 1, MAX_TTL_SECONDS), MAX_TTL_SECONDS as i32);
        assert_eq!(ttl_seconds(max + 1, 1, MAX_TTL_SECONDS), 0);
    }
}
