//! What a generated function looks like from outside, the same for every language: its
//! parameters (name, type, whether a list) and the fields of the rows it returns, from the
//! pattern's parameters and the read's `columns`; and the plan's CQL without its keyspace (the
//! generated code runs in the keyspace its session is given).

use crate::names;
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, CqlType, EncodedForm, Encoding, Expr, NativeType, Plan,
    QueryMapping, ScalarType,
};

/// A value's type as the generated code holds it (the source's meaning, not the stored form: a
/// timestamp kept as epoch microseconds is a timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `boolean`.
    Bool,
    /// Any integer.
    Int,
    /// An exact decimal.
    Decimal,
    /// A float or double.
    Float,
    /// Text (also an enum's label, json, a type the plan carries as text).
    Text,
    /// A date.
    Date,
    /// A time of day.
    Time,
    /// A timestamp without time zone (a wall clock).
    Timestamp,
    /// An instant.
    Timestamptz,
    /// An interval (months, days, microseconds).
    Interval,
    /// A UUID.
    Uuid,
    /// Bytes.
    Bytes,
    /// Anything else (a collection, a user type, an aggregate of unknown type).
    Any,
}

impl Ty {
    /// The type of a statement parameter's SQL type.
    pub fn of_scalar(t: ScalarType) -> Ty {
        use ScalarType as S;
        match t {
            S::Boolean => Ty::Bool,
            S::Smallint | S::Integer | S::Bigint => Ty::Int,
            S::Numeric => Ty::Decimal,
            S::Real | S::Double => Ty::Float,
            S::Text | S::Json => Ty::Text,
            S::Date => Ty::Date,
            S::Time => Ty::Time,
            S::Timestamp => Ty::Timestamp,
            S::Timestamptz => Ty::Timestamptz,
            S::Interval => Ty::Interval,
            S::Uuid => Ty::Uuid,
            S::Bytea => Ty::Bytes,
        }
    }

    /// The type of a source column's declared SQL type (`numeric(8,2)`, `timestamptz`,
    /// `varchar(40)`), and whether it is an array.
    pub fn of_sql(sql_type: &str) -> (Ty, bool) {
        let t = sql_type.trim().to_ascii_lowercase();
        if let Some(inner) = t.strip_suffix("[]") {
            return (Ty::of_sql(inner).0, true);
        }
        let base = t.split('(').next().unwrap_or("").trim();
        let ty = match base {
            "boolean" | "bool" => Ty::Bool,
            "smallint" | "integer" | "int" | "int2" | "int4" | "int8" | "bigint" | "serial"
            | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2" | "oid" => Ty::Int,
            "numeric" | "decimal" | "money" => Ty::Decimal,
            "real" | "float4" | "double precision" | "float8" | "float" => Ty::Float,
            "date" => Ty::Date,
            "time" | "time without time zone" => Ty::Time,
            "timestamp" | "timestamp without time zone" => Ty::Timestamp,
            "timestamptz" | "timestamp with time zone" => Ty::Timestamptz,
            "interval" => Ty::Interval,
            "uuid" => Ty::Uuid,
            "bytea" => Ty::Bytes,
            _ => Ty::Text,
        };
        (ty, false)
    }

    /// How an executor reads a value of this type from its JSON (`replay --executor`).
    pub fn json_name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Decimal => "decimal",
            Ty::Float => "float",
            Ty::Text => "text",
            Ty::Date => "date",
            Ty::Time => "time",
            Ty::Timestamp => "timestamp",
            Ty::Timestamptz => "timestamptz",
            Ty::Interval => "interval",
            Ty::Uuid => "uuid",
            Ty::Bytes => "bytes",
            Ty::Any => "any",
        }
    }

    /// The type a CQL column's value stands for (`encoding` decoded: an epoch_micros `bigint`
    /// is an instant, an epoch_days one a date).
    pub fn of_cql(t: &CqlType, encoding: Option<Encoding>) -> Ty {
        if let Some(e) = encoding {
            return match e.form() {
                EncodedForm::Micros => Ty::Timestamptz,
                EncodedForm::Integer => Ty::Int,
                EncodedForm::Days => Ty::Date,
            };
        }
        use NativeType as N;
        match t.unfrozen().native() {
            Some(N::Boolean) => Ty::Bool,
            Some(N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Varint | N::Counter) => Ty::Int,
            Some(N::Decimal) => Ty::Decimal,
            Some(N::Float | N::Double) => Ty::Float,
            Some(N::Ascii | N::Text | N::Inet) => Ty::Text,
            Some(N::Date) => Ty::Date,
            Some(N::Time) => Ty::Time,
            Some(N::Timestamp) => Ty::Timestamptz,
            Some(N::Duration) => Ty::Interval,
            Some(N::Uuid | N::Timeuuid) => Ty::Uuid,
            Some(N::Blob) => Ty::Bytes,
            None => Ty::Any,
        }
    }
}

/// The type of source column `c` (its declared SQL type), if the schema has it.
pub fn column_ty(plan: &Plan, c: &ColumnRef) -> Option<(Ty, bool)> {
    let col = plan.schema.table(&c.table)?.column(&c.column)?;
    let (ty, list) = Ty::of_sql(&col.sql_type);
    Some((if list { Ty::Any } else { ty }, col.nullable))
}

/// One parameter of a generated function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// `$n`.
    pub n: u32,
    /// Its name (snake_case).
    pub name: String,
    /// Its type (of each element, for a list).
    pub ty: Ty,
    /// True when the application sends a list (an `IN ($n)`, `= ANY($n)`).
    pub list: bool,
}

/// The parameters of pattern `p`'s function, `$1` first.
pub fn params(plan: &Plan, p: &AccessPattern) -> Vec<Param> {
    let names = names::params(plan, p);
    let exprs = names::exprs_of(plan, p);
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let n = i as u32 + 1;
            let declared = p.analysis.params.iter().find(|x| x.n == n);
            let ty = declared
                .and_then(|x| x.sql_type)
                .map(Ty::of_scalar)
                .or_else(|| compared_column_ty(plan, p, n))
                .unwrap_or(Ty::Any);
            let list = exprs.iter().any(|e| is_list_param(e, n))
                || p.analysis
                    .equality
                    .iter()
                    .filter_map(|e| e.expr.as_ref())
                    .any(|e| is_list_param(e, n));
            Param { n, name, ty, list }
        })
        .collect()
}

/// The type of the column `$n` is compared with or assigned to, where no cast types it.
fn compared_column_ty(plan: &Plan, p: &AccessPattern, n: u32) -> Option<Ty> {
    let is_n = |e: Option<&Expr>| matches!(e, Some(Expr::Param { n: k }) if *k == n);
    p.analysis
        .equality
        .iter()
        .find(|e| is_n(e.expr.as_ref()))
        .map(|e| &e.column)
        .or_else(|| {
            p.analysis
                .ranges
                .iter()
                .find(|r| {
                    is_n(r.lower.as_ref().and_then(|b| b.expr.as_ref()))
                        || is_n(r.upper.as_ref().and_then(|b| b.expr.as_ref()))
                })
                .map(|r| &r.column)
        })
        .and_then(|c| column_ty(plan, c))
        .map(|(t, _)| t)
}

/// True when `e` holds `IN ($n)` / `= ANY($n)`: the parameter is a list.
fn is_list_param(e: &Expr, n: u32) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::InList { list, .. } = x {
            found |= matches!(list.as_slice(), [Expr::Param { n: k }] if *k == n);
        }
    });
    found
}

/// True when a bind of `q` sends `$n` itself as a CQL list (`IN ?` bound to the parameter).
pub fn bound_as_list(q: &QueryMapping, n: u32) -> bool {
    q.binds.iter().any(|b| {
        matches!(b.cql_type.unfrozen(), CqlType::List(_) | CqlType::Set(_))
            && matches!(&b.value, BindValue::Expr { expr: Expr::Param { n: k } } if *k == n)
    })
}

/// One field of the rows a read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The SQL result's name for it.
    pub sql_name: String,
    /// The field's identifier (snake_case, distinct).
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// True when it may be NULL.
    pub nullable: bool,
    /// The key of the rows read that holds it (see [`row_key`]); `None` when the plan does not
    /// state where it is (a computed column no CQL column holds).
    pub key: Option<String>,
}

/// The key of a target column in the rows the generated code reads: `@table.column`.
pub fn target_key(table: &str, column: &str) -> String {
    format!("@{table}.{column}")
}

/// The key of a source column in the rows the generated code reads: `table.column`.
pub fn row_key(c: &ColumnRef) -> String {
    format!("{}.{}", c.table, c.column)
}

/// The fields of the rows read `q` returns, in the SQL result's order.
pub fn fields(plan: &Plan, q: &QueryMapping) -> Vec<Field> {
    let mut computed = computed_fields(plan, q).into_iter();
    let mut out: Vec<Field> = Vec::with_capacity(q.columns.len());
    for (i, c) in q.columns.iter().enumerate() {
        let mut name = names::snake(&c.name);
        if out.iter().any(|f| f.name == name) {
            name = format!("{name}_{}", i + 1);
        }
        let declared = c.source.as_ref().and_then(|s| column_ty(plan, s));
        let stored = c.cql_type.as_ref().map(|t| Ty::of_cql(t, c.encoding));
        let ty = match (declared, stored) {
            // The source's own type says whether a timestamp has a zone.
            (Some((t, _)), _) => t,
            (None, Some(t)) => t,
            (None, None) => Ty::Any,
        };
        let (key, ty, nullable) = match (&c.table, &c.cql_column, &c.source) {
            (Some(t), Some(col), _) => (
                Some(target_key(t, col)),
                ty,
                declared.is_none_or(|(_, n)| n),
            ),
            (None, Some(_), Some(s)) => (Some(row_key(s)), ty, declared.is_none_or(|(_, n)| n)),
            (None, None, None) => computed.next().unwrap_or((None, Ty::Any, true)),
            _ => (None, ty, true),
        };
        out.push(Field {
            sql_name: c.name.clone(),
            name,
            ty,
            nullable,
            key,
        });
    }
    out
}

/// `cql` with every table of the plan named without the plan's keyspace (`rideshare.trips_by_id`
/// → `trips_by_id`), never inside a string literal: the generated code runs in the keyspace its
/// session is connected to, the plan's or a scratch one.
pub fn unqualified(cql: &str, keyspace: &str, tables: &[&str]) -> String {
    let ks = remodel_model::ident::cql_quote(keyspace);
    let prefixes: Vec<(String, String)> = tables
        .iter()
        .map(|t| {
            let q = remodel_model::ident::cql_quote(t);
            (format!("{ks}.{q}"), q)
        })
        .collect();
    let mut out = String::with_capacity(cql.len());
    let mut rest = cql;
    let mut in_string = false;
    while let Some(c) = rest.chars().next() {
        if c == '\'' {
            in_string = !in_string;
        }
        if !in_string {
            let boundary = out
                .chars()
                .last()
                .is_none_or(|p| !(p.is_alphanumeric() || p == '_' || p == '"'));
            let hit = prefixes.iter().find(|(full, _)| {
                boundary
                    && rest.starts_with(full.as_str())
                    && rest[full.len()..]
                        .chars()
                        .next()
                        .is_none_or(|n| !(n.is_alphanumeric() || n == '_'))
            });
            if let Some((full, table)) = hit {
                out.push_str(table);
                rest = &rest[full.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Where each computed column of read `q` is (its key in the rows, its type, whether NULL), in
/// the SQL result's order. plan.json links each computed column to the pattern's aggregate it
/// is (`columns[].aggregate`, book/src/plan-json.md "The result columns"): the client computes
/// an aggregate that `client.aggregates` lists (under [`aggregate_key`]); when the client
/// aggregates nothing, the CQL does, its result's last columns being the aggregates in their
/// order (`#-k`: the k-th column from the last). Empty when a computed column is no aggregate
/// (an expression of the SELECT list, which the plan does not state).
fn computed_fields(plan: &Plan, q: &QueryMapping) -> Vec<(Option<String>, Ty, bool)> {
    let Some(p) = plan.workload.patterns.iter().find(|p| p.id == q.pattern) else {
        return Vec::new();
    };
    let aggs = &p.analysis.aggregates;
    let computed = q
        .columns
        .iter()
        .filter(|c| c.source.is_none() && c.table.is_none() && c.cql_column.is_none());
    let linked: Option<Vec<usize>> = computed
        .map(|c| c.aggregate.filter(|k| *k < aggs.len()))
        .collect();
    let Some(linked) = linked else {
        return Vec::new();
    };
    if q.counter.is_some() {
        return Vec::new();
    }
    let client = &q.client.aggregates;
    linked
        .into_iter()
        .map(|k| {
            let a = &aggs[k];
            let key = if client.contains(a) {
                Some(aggregate_key(a))
            } else if client.is_empty() {
                Some(format!("#-{}", aggs.len() - k))
            } else {
                None
            };
            let (ty, nullable) = aggregate_ty(plan, a);
            (key, ty, nullable)
        })
        .collect()
}

/// The type of an aggregate's value: `count` an integer never NULL; `min`/`max` the column's
/// type; `sum`/`avg` a number whose kind depends on the column's (any).
fn aggregate_ty(plan: &Plan, a: &remodel_model::Aggregate) -> (Ty, bool) {
    match a.function.to_ascii_lowercase().as_str() {
        "count" => (Ty::Int, false),
        "min" | "max" => (
            a.column
                .as_ref()
                .and_then(|c| column_ty(plan, c))
                .map_or(Ty::Any, |(t, _)| t),
            true,
        ),
        _ => (Ty::Any, true),
    }
}

/// The key of an aggregate the client computes in the rows it groups: `max(trips.fare_usd)`.
pub fn aggregate_key(a: &remodel_model::Aggregate) -> String {
    let arg = a.column.as_ref().map_or("*".to_string(), row_key);
    let d = if a.distinct { "DISTINCT " } else { "" };
    format!("{}({d}{arg})", a.function.to_ascii_lowercase())
}

/// The runtime's decoder of a column kept in `e` (both languages name it so): the encoding's
/// name, with `_tz` or `_naive` for an instant (`aware`: of a `timestamptz`).
pub fn encoded_decoder(e: Encoding, aware: bool) -> String {
    match (e.form(), aware) {
        (EncodedForm::Micros, true) => format!("{}_tz", e.name()),
        (EncodedForm::Micros, false) => format!("{}_naive", e.name()),
        _ => e.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyspace_is_dropped_from_table_names_only() {
        let cql = "SELECT a FROM rideshare.trips_by_id WHERE b = 'rideshare.trips_by_id' AND c = ?";
        assert_eq!(
            unqualified(cql, "rideshare", &["trips_by_id"]),
            "SELECT a FROM trips_by_id WHERE b = 'rideshare.trips_by_id' AND c = ?"
        );
        // A longer table name that starts with a shorter one is left to its own prefix.
        assert_eq!(
            unqualified("INSERT INTO ks.t_2 (a)", "ks", &["t", "t_2"]),
            "INSERT INTO t_2 (a)"
        );
        assert_eq!(
            unqualified("UPDATE \"My Ks\".\"T\" SET", "My Ks", &["T"]),
            "UPDATE \"T\" SET"
        );
    }

    #[test]
    fn declared_types_read_their_parameters_off() {
        assert_eq!(Ty::of_sql("numeric(8,2)"), (Ty::Decimal, false));
        assert_eq!(Ty::of_sql("timestamptz"), (Ty::Timestamptz, false));
        assert_eq!(
            Ty::of_sql("timestamp without time zone"),
            (Ty::Timestamp, false)
        );
        assert_eq!(Ty::of_sql("text[]"), (Ty::Text, true));
        assert_eq!(Ty::of_sql("mood"), (Ty::Text, false));
    }
}
