//! What the analyzer finds: in one statement, tables, join path, predicates, order, projection;
//! in the whole workload, [`Analysis`].

pub use crate::column_ref::ColumnRef;
use crate::expr::{Expr, ScalarType};
use crate::{Diagnostic, Relationship, Schema, Workload};
use serde::{Deserialize, Serialize};

/// The analysis of one statement. Every field defaults to empty so an unanalysed pattern is valid.
///
/// Invariant: every [`Predicate`] in `equality` and every [`RangePredicate`] in `ranges` restricts
/// the **bare column** it names, and its values are column-free SQL (placeholders `$n`, literals,
/// `now()`, …). A predicate the application wrote on an expression of a column
/// (`now() - due_at < interval '14 days'`) is there only when the analyzer solved it exactly for
/// the column (`due_at > now() - interval '14 days'`, original kept in `rewritten_from`); anything
/// it cannot solve exactly is a [`Residual`] filter with the reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PatternAnalysis {
    /// Tables read or written, in the order they appear.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<String>,
    /// The joins, each along a foreign key where one matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub join_path: Vec<JoinStep>,
    /// Equality predicates (`=`, `IN`, `IS NULL`) on bare columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equality: Vec<Predicate>,
    /// Range predicates (`<`, `<=`, `>`, `>=`, `BETWEEN`, `LIKE 'prefix%'`) on bare columns, one per column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<RangePredicate>,
    /// `ORDER BY`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_by: Vec<OrderBy>,
    /// `LIMIT` when it is a constant (a placeholder limit is recorded from the example value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// `OFFSET` when it is a constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// The `LIMIT` expression of the normalized statement (`$3`): what a CQL `LIMIT ?` binds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_sql: Option<String>,
    /// The `OFFSET` expression of the normalized statement (`$4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_sql: Option<String>,
    /// Set when the statement is a one-off (a data load, a migration step): the reason. It shapes
    /// no table and no write path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_off: Option<String>,
    /// Projected columns (`*` expanded from the schema).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projection: Vec<ColumnRef>,
    /// Aggregates (`count`, `sum`, `avg`, `min`, `max`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<Aggregate>,
    /// The columns of a SELECT's result, in order (`*` expanded), as Postgres names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<OutputColumn>,
    /// `GROUP BY` columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<ColumnRef>,
    /// `SELECT DISTINCT`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct: bool,
    /// True when the equality predicates bind a whole primary key of the (single) table read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub key_lookup: bool,
    /// For INSERT/UPDATE/DELETE: what is written and how rows are identified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteInfo>,
    /// Estimated rows returned per call, where statistics or keys allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_expected: Option<f64>,
    /// Conditions that restrict rows but are neither equality, range nor join on a bare column
    /// (e.g. `a <> $1`, `lower(a) = $1`, `x OR y` across columns, `HAVING …`): client-side filters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residual: Vec<Residual>,
    /// Set when the analyzer could not model the statement (or part of it): the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmodeled: Option<String>,
    /// Columns the statement filters on that no table in scope has (Postgres would reject it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_columns: Vec<String>,
    /// The `LIMIT` as a typed expression (`$3`, `20`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_expr: Option<Expr>,
    /// The `OFFSET` as a typed expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_expr: Option<Expr>,
    /// A row-locking clause (`FOR UPDATE`, `FOR SHARE`, …) as written: Cassandra takes no row
    /// locks, so a plan that serves the read states that the lock is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locking: Option<String>,
    /// The statement's parameters (`$1` first): the type each takes and the literal of the
    /// original statement it replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Parameter>,
}

/// One parameter (`$n`) of a normalized statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Parameter {
    /// Its number (`$n`).
    pub n: u32,
    /// The SQL type it takes, from the column it is compared with or assigned to (or its cast);
    /// absent when nothing in the statement types it.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub sql_type: Option<ScalarType>,
    /// The literal of the example statement that normalization replaced by `$n`, as SQL
    /// (`'2025-01-15'`, `42`); absent when the application sent `$n` itself (a prepared
    /// statement's bound parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_literal: Option<String>,
}

impl PatternAnalysis {
    /// True when the statement puts a condition no NULL meets (`=`, `IN`, a range bound) on a
    /// column `is_column` accepts: it never returns a row where that column is NULL.
    pub fn excludes_null(&self, is_column: impl Fn(&ColumnRef) -> bool) -> bool {
        self.equality.iter().any(|e| {
            is_column(&e.column)
                && matches!(e.op, EqualityOp::Eq | EqualityOp::In)
                && e.value.is_some()
        }) || self
            .ranges
            .iter()
            .any(|r| is_column(&r.column) && (r.lower.is_some() || r.upper.is_some()))
    }
    /// Drops the spare capacity of every list: an analysis is built by pushes and then kept for
    /// the whole run (100,000 patterns carried about 15 MB of it).
    pub fn shrink_to_fit(&mut self) {
        self.tables.shrink_to_fit();
        self.join_path.shrink_to_fit();
        self.equality.shrink_to_fit();
        self.ranges.shrink_to_fit();
        self.order_by.shrink_to_fit();
        self.projection.shrink_to_fit();
        self.aggregates.shrink_to_fit();
        self.group_by.shrink_to_fit();
        self.residual.shrink_to_fit();
        self.unknown_columns.shrink_to_fit();
    }
}

/// One join: `left` columns = `right` columns, along `foreign_key` where one matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JoinStep {
    /// Left side table.
    pub left_table: String,
    /// Left side columns.
    pub left_columns: Vec<String>,
    /// Right side table.
    pub right_table: String,
    /// Right side columns.
    pub right_columns: Vec<String>,
    /// The foreign key followed, as `table(cols) -> ref(cols)`; absent when none matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_key: Option<String>,
}

/// An equality-style predicate operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EqualityOp {
    /// `=`.
    Eq,
    /// `IN (…)`.
    In,
    /// `IS NULL`.
    IsNull,
}

/// A filter the keys do not serve: the reader applies it to the rows it reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Residual {
    /// The condition as SQL (normalized, `$n` placeholders).
    pub sql: String,
    /// Why it is not an equality or range on a bare column (e.g. `lower() is not invertible`).
    pub reason: String,
    /// The columns it reads (the table serving the read must hold them), where resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<ColumnRef>,
    /// The condition as a typed expression; absent when it uses what the plan's expressions
    /// cannot state (a function of the source database, a subquery), which `reason_untyped` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<Expr>,
    /// Why `expr` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_untyped: Option<String>,
}

/// How a predicate on an expression of a column was solved exactly for the bare column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rewrite {
    /// The predicate as the application wrote it (normalized SQL), e.g. `now() - due_at < $2`.
    pub sql: String,
    /// Why the rewrite is exact (each step: a translation, a flip, a floor's ceiling, …).
    pub reason: String,
    /// What exactness relies on beyond the SQL itself (the session time zone, the example's
    /// literal value of a `$n`): the reviewer checks these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumes: Vec<String>,
}

/// An equality predicate on a bare column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Predicate {
    /// The column.
    pub column: ColumnRef,
    /// The operator.
    pub op: EqualityOp,
    /// The value side as normalized SQL (e.g. `$1`, `$2 || $1`, `$1 - 1`): references no column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Set when the application wrote the predicate on an expression of the column
    /// (`c + 1 = $1`) and the analyzer solved it for the column (`c = $1 - 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_from: Option<Rewrite>,
    /// The value side as a typed expression (absent for `IS NULL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<Expr>,
}

/// One bound of a range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RangeBound {
    /// `>=`/`<=` (true) or `>`/`<` (false).
    pub inclusive: bool,
    /// The value as normalized SQL: references no column.
    pub value: String,
    /// The value in the example instance, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// The value as a typed expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<Expr>,
}

/// A fixed time window recognised in a range (e.g. `>= day AND < day + 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TimeWindow {
    /// One hour.
    Hour,
    /// One day.
    Day,
    /// One week.
    Week,
    /// One month.
    Month,
    /// One year.
    Year,
}

/// A range predicate on one bare column, both bounds merged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RangePredicate {
    /// The column.
    pub column: ColumnRef,
    /// Lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<RangeBound>,
    /// Upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<RangeBound>,
    /// `LIKE 'prefix%'`: a prefix range.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefix: bool,
    /// The predicates on expressions of the column that were solved into these bounds
    /// (`date_trunc('day', c) = $1` gives both bounds), in the order written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewritten_from: Vec<Rewrite>,
    /// The fixed window the bounds span, where recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<TimeWindow>,
}

/// One `ORDER BY` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OrderBy {
    /// The column.
    pub column: ColumnRef,
    /// `DESC`.
    pub desc: bool,
    /// `NULLS FIRST` (true) or `NULLS LAST` (false) when the statement says it; absent: SQL's
    /// default (NULLs last ascending, first descending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nulls_first: Option<bool>,
}

impl OrderBy {
    /// True when NULLs come where SQL puts them by default (after every value ascending).
    pub fn nulls_as_default(&self) -> bool {
        self.nulls_first.is_none_or(|first| first == self.desc)
    }

    /// The side of the column's values its NULLs go on: above every value by SQL's default,
    /// below with `NULLS FIRST` ascending or `NULLS LAST` descending.
    pub fn nulls_at(&self) -> crate::NullsAt {
        if self.nulls_as_default() {
            crate::NullsAt::Last
        } else {
            crate::NullsAt::First
        }
    }
}

/// One column of a SELECT's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OutputColumn {
    /// The name Postgres gives it: its alias, else the column's or the function's name, else
    /// `?column?`.
    pub name: String,
    /// The source column it is, when the item is a bare column (absent for a computed one: an
    /// aggregate, an expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<ColumnRef>,
    /// When the item is one aggregate call and nothing else (`max(bid)`, not `max(bid) + 1`):
    /// its index in `aggregates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<usize>,
}

/// One aggregate in the projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Aggregate {
    /// `count`, `sum`, `avg`, `min`, `max`.
    pub function: String,
    /// The argument column; absent for `count(*)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<ColumnRef>,
    /// `DISTINCT` inside the call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct: bool,
}

/// What a write statement does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WriteInfo {
    /// Target table.
    pub table: String,
    /// Columns given values (INSERT column list or UPDATE SET targets).
    pub columns_written: Vec<String>,
    /// Columns that identify the rows (WHERE equality columns of UPDATE/DELETE).
    #[serde(default)]
    pub key_columns: Vec<String>,
    /// True when `key_columns` cover the table's primary key.
    #[serde(default)]
    pub by_primary_key: bool,
    /// `INSERT … ON CONFLICT` (upsert).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_conflict: bool,
    /// `RETURNING` columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub returning: Vec<String>,
    /// Other tables read by the write (`UPDATE … FROM`, `INSERT … SELECT`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// The value each written column takes (single-row `INSERT … VALUES` and `UPDATE … SET`),
    /// as column-free SQL of the parameters unless `reads_current` says otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<WrittenValue>,
    /// `ON CONFLICT (cols) DO NOTHING | DO UPDATE SET …`, typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<ConflictClause>,
    /// The rows an `UPDATE … FROM` / `DELETE … USING` reads besides the written table, each
    /// under its alias, with the equalities that find it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_rows: Vec<FromRow>,
}

/// The `ON CONFLICT` clause of an INSERT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConflictClause {
    /// The conflict target's columns (of the written table); empty when none is named.
    pub columns: Vec<String>,
    /// `DO NOTHING` (true) or `DO UPDATE` (false).
    pub do_nothing: bool,
    /// `DO UPDATE SET` values: over the existing row (`Column` of `RowRef::This`) and the
    /// proposed one (`RowRef::Excluded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<WrittenValue>,
    /// `DO UPDATE … WHERE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Expr>,
}

/// A row a write reads besides the written one (`UPDATE accounts SET … FROM accounts s WHERE …
/// s.id = $2`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FromRow {
    /// The alias the statement gives it (the table's name when none).
    pub alias: String,
    /// The table.
    pub table: String,
    /// Equalities on its columns (value: a column-free expression, or a column of the written
    /// row for a join condition).
    pub equality: Vec<(String, Expr)>,
}

/// The value a write gives one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WrittenValue {
    /// The column (as in the schema).
    pub column: String,
    /// The value expression as normalized SQL (`$1`, `now()`, `DEFAULT`, `n + 1`).
    pub sql: String,
    /// True when the expression reads columns of the row it writes (`SET n = n + 1`): the new
    /// value depends on the current one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_current: bool,
    /// The value as a typed expression; absent when it uses what expressions cannot state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<Expr>,
}

/// Everything the analyzer produces.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The input schema with the inferred foreign keys added (origin `Inferred { evidence }`).
    pub schema: Schema,
    /// The input workload with each pattern's `analysis` filled.
    pub workload: Workload,
    /// Every relationship with its embed / reference / duplicate-columns decision.
    pub relationships: Vec<Relationship>,
    /// Unmodelled statements, parse failures, inferred keys and other notes.
    pub diagnostics: Vec<Diagnostic>,
    /// N+1 loops found in the sessions.
    pub loops: Vec<crate::Loop>,
    /// Transactions with two writes or more, by their sequence of statements.
    pub transactions: Vec<crate::TransactionGroup>,
}
