//! Query mapping: each read pattern → the CQL SELECT against the table that serves it, every
//! `?` bound to a typed value, which partitions it reads, and what the client does with the
//! rows (filters, aggregates, sort, offset, limit) as data. Never `ALLOW FILTERING`.

use crate::candidates::keys::{KeyPlan, KeySrc};
use crate::candidates::shape::{range_filter, ClientFilter, Shape};
use crate::candidates::tables::TableBuild;
use crate::checklist::buckets::{self, Zones};
use remodel_model::ident::cql_quote;
use remodel_model::{
    AccessPattern, Aggregate, BinaryOp, Bind, BindValue, ClientWork, ColumnRef, CqlType,
    EqualityOp, Expr, Function, GroupRow, Literal, NativeType, NullsAt, PartitionRead,
    QueryMapping, ReadColumn, ReadStep, SortBy, SortKey, SortOrder, Suggestion, Warning,
};

/// A parent read by key after the main table (kept by reference).
pub struct LookupRead<'a> {
    /// The parent table's design table.
    pub table: &'a TableBuild,
    /// The parent columns read.
    pub columns: &'a [ColumnRef],
    /// For each partition-key column of `table`, its value (a column of the rows read first,
    /// or a parameter).
    pub via: Vec<BindValue>,
    /// Why it is a reference.
    pub rationale: String,
}

/// What every mapping is made in.
pub struct Context<'a> {
    /// The keyspace.
    pub keyspace: &'a str,
    /// Where buckets are cut and instants without an offset are read.
    pub zones: Zones,
}

/// A CQL restriction with the value its bind marker takes.
struct Cond {
    sql: String,
    bind: Bind,
    /// The binds of the markers after the first (a row slice's `(a, b) < (?, ?)`).
    more: Vec<Bind>,
    /// `=` (a bound clustering column is skipped by ORDER BY).
    eq: bool,
}

impl Cond {
    /// `name op ?` on a column of `t`: the marker typed as the column (`IN ?` a list of it).
    fn new(t: &TableBuild, name: &str, op: &str, value: BindValue) -> Self {
        let mut bind = t.bind(name, value);
        if op == "IN" {
            bind.cql_type = CqlType::List(Box::new(bind.cql_type));
        }
        Cond {
            sql: format!("{} {op} ?", cql_quote(name)),
            bind,
            more: Vec::new(),
            eq: op == "=",
        }
    }

    /// `(a, b) op (?, ?)` on clustering columns `names` of `t`, each marker typed as its column.
    fn row(t: &TableBuild, names: &[&str], op: &str, values: &[Expr]) -> Self {
        let mut binds = names.iter().zip(values).map(|(n, v)| t.bind(n, expr(v)));
        let quoted: Vec<String> = names.iter().map(|n| cql_quote(n)).collect();
        let marks = vec!["?"; names.len()].join(", ");
        Cond {
            sql: format!("({}) {op} ({marks})", quoted.join(", ")),
            bind: binds.next().expect("a row of two or more columns"),
            more: binds.collect(),
            eq: false,
        }
    }
}

/// A row comparison the client would filter with (`(created_at, id) < ($2, $3)`, a keyset page)
/// served as a CQL multi-column slice instead: its columns are the clustering columns that
/// follow the ones bound by `=`, in the table's order, and its other side reads no column. CQL
/// compares the rows as SQL does (item by item, whatever each column's clustering order), and a
/// clustering column is never NULL. The rows are then the clustering order's first ones, so the
/// LIMIT stays in the CQL.
fn row_slice(t: &TableBuild, r: &mut Restrictions, notes: &mut Vec<String>) {
    let bound: Vec<&str> = r
        .conds
        .iter()
        .filter(|c| c.eq)
        .map(|c| c.bind.column.as_str())
        .collect();
    let free: Vec<&ColumnRef> = t
        .clustering
        .iter()
        .filter_map(|(k, _)| match k {
            KeySrc::Col(c) => Some(c),
            _ => None,
        })
        .filter(|c| t.col_name(c).is_none_or(|n| !bound.contains(&n)))
        .collect();
    let slice = r.filters.iter().enumerate().find_map(|(i, f)| {
        let (op, cols, values) = row_comparison(&f.expr)?;
        let starts_free = cols.len() <= free.len() && cols.iter().zip(&free).all(|(a, b)| a == *b);
        let names: Option<Vec<&str>> = cols.iter().map(|c| t.col_name(c)).collect();
        (starts_free && values.iter().all(Expr::is_column_free)).then_some((i, op, names?, values))
    });
    if let Some((i, op, names, values)) = slice {
        let cond = Cond::row(t, &names, op, &values);
        let f = r.filters.remove(i);
        // The shape's note said the key does not serve it; the slice does.
        notes.retain(|n| !n.starts_with(&format!("{} is not served by the key", f.sql)));
        notes.push(format!(
            "{} read as a slice of the clustering columns: {}",
            f.sql, cond.sql
        ));
        r.conds.push(cond);
    }
}

/// `(c1, c2, …) op (v1, v2, …)` over columns of the rows read (either side): the operator as CQL
/// writes it with the columns on the left, the columns and the values.
fn row_comparison(e: &Expr) -> Option<(&'static str, Vec<ColumnRef>, Vec<Expr>)> {
    let Expr::Binary { op, left, right } = e else {
        return None;
    };
    let (Expr::Row { items: l }, Expr::Row { items: r }) = (left.as_ref(), right.as_ref()) else {
        return None;
    };
    let columns = |items: &[Expr]| -> Option<Vec<ColumnRef>> {
        items
            .iter()
            .map(|x| match x {
                Expr::Column {
                    column,
                    row: remodel_model::RowRef::This,
                } => Some(column.clone()),
                _ => None,
            })
            .collect()
    };
    let (cols, values, flipped) = match (columns(l), columns(r)) {
        (Some(c), None) => (c, r.clone(), false),
        (None, Some(c)) => (c, l.clone(), true),
        _ => return None,
    };
    let op = match (op, flipped) {
        (BinaryOp::Lt, false) | (BinaryOp::Gt, true) => "<",
        (BinaryOp::Le, false) | (BinaryOp::Ge, true) => "<=",
        (BinaryOp::Gt, false) | (BinaryOp::Lt, true) => ">",
        (BinaryOp::Ge, false) | (BinaryOp::Le, true) => ">=",
        _ => return None,
    };
    Some((op, cols, values))
}

fn expr(e: &Expr) -> BindValue {
    BindValue::Expr { expr: e.clone() }
}

/// The bind of an `=` or `IN` restriction: the value, or the list an `IN ?` takes (the
/// parameter the application sends as a list, as a normalized `IN ($n)` has it, else the list
/// of the values).
fn eq_bind(e: &crate::candidates::shape::EqPred) -> BindValue {
    match (e.op, crate::candidates::shape::in_items(&e.expr).as_slice()) {
        (EqualityOp::In, [one @ Expr::Param { .. }]) => expr(one),
        (EqualityOp::In, items) => BindValue::List {
            items: items.to_vec(),
        },
        _ => expr(&e.expr),
    }
}

/// The WHERE restrictions the key serves (in CQL order: partition, clustering `=`/`IN`,
/// range), the filters left to the client, and which partitions the statement reads.
struct Restrictions {
    conds: Vec<Cond>,
    filters: Vec<ClientFilter>,
    partitions: PartitionRead,
}

/// The restrictions of `shape` read from `t`; `Err` when a value cannot be stated.
fn restrictions(
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    zones: &Zones,
    notes: &mut Vec<String>,
) -> Result<Restrictions, String> {
    let mut r = Restrictions {
        conds: Vec::new(),
        filters: shape.client.clone(),
        partitions: PartitionRead::One,
    };
    if key.partitions_read.is_none() {
        // A scan restricts nothing: every predicate is a client filter.
        r.partitions = PartitionRead::Scan;
        r.filters.extend(shape.eq.iter().map(|e| e.filter()));
        if let Some((rc, rp)) = &shape.range {
            r.filters.push(typed_range(rc, rp)?);
        }
    } else {
        partition_conds(shape, t, zones, &mut r)?;
        let eq_of = |c: &ColumnRef| shape.eq.iter().find(|e| e.column == *c);
        for (c, _) in &key.clustering {
            if let (Some(e), Some(name)) = (eq_of(c), t.col_name(c)) {
                let op = if e.op == EqualityOp::In { "IN" } else { "=" };
                r.conds.push(Cond::new(t, name, op, eq_bind(e)));
            }
        }
        if let Some((rc, rp)) = &shape.range {
            range_conds(rc, rp, t, &mut r, notes)?;
        } else {
            row_slice(t, &mut r, notes);
        }
    }
    for (c, rp) in &shape.extra_ranges {
        r.filters.push(typed_range(c, rp)?);
    }
    for c in &shape.null_filter {
        if t.null_filter.contains(c) {
            notes.push(format!(
                "{c} IS NULL holds for every row of {} (the table keeps only those rows)",
                t.name
            ));
        } else {
            r.filters.push(ClientFilter {
                sql: format!("{c} IS NULL"),
                expr: crate::candidates::shape::eq_expr(c, EqualityOp::IsNull, None),
            });
        }
    }
    Ok(r)
}

fn typed_range(c: &ColumnRef, rp: &remodel_model::RangePredicate) -> Result<ClientFilter, String> {
    range_filter(c, rp).ok_or_else(|| {
        format!(
            "{} has no typed form in the plan",
            crate::candidates::shape::range_sql(rp)
        )
    })
}

/// The partition key's restrictions: a column by its `=`/`IN` value, a bucket by the buckets
/// of the window, a constant by its value.
fn partition_conds(
    shape: &Shape,
    t: &TableBuild,
    zones: &Zones,
    r: &mut Restrictions,
) -> Result<(), String> {
    for k in &t.partition {
        let Some(name) = t.name_of(k) else { continue };
        match k {
            KeySrc::Col(c) => {
                if let Some(e) = shape.eq.iter().find(|e| e.column == *c) {
                    let op = if e.op == EqualityOp::In { "IN" } else { "=" };
                    if e.op == EqualityOp::In && r.partitions == PartitionRead::One {
                        r.partitions = PartitionRead::Each {
                            bind: r.conds.len(),
                        };
                    }
                    r.conds.push(Cond::new(t, name, op, eq_bind(e)));
                }
            }
            KeySrc::Bucket(c, b) => {
                let window = shape.range.as_ref().filter(|(rc, _)| rc == c);
                let value = window
                    .and_then(|(_, rp)| buckets::bind(rp, *b, zones, &shape.params))
                    .ok_or_else(|| {
                        format!(
                            "the {} bucket of {c} has no window to compute it from",
                            b.name()
                        )
                    })?;
                if matches!(value, BindValue::Buckets { .. }) {
                    // The statement runs once per bucket: that is what decides the partitions.
                    r.partitions = PartitionRead::Each {
                        bind: r.conds.len(),
                    };
                }
                r.conds.push(Cond::new(t, name, "=", value));
            }
            KeySrc::Const(v) => r.conds.push(Cond::new(
                t,
                name,
                "=",
                BindValue::Literal {
                    value: Literal::Text { value: v.clone() },
                },
            )),
            // A row id is a clustering column: never in a partition key.
            KeySrc::RowId(_) => {}
        }
    }
    Ok(())
}

/// The range on the first clustering column after the bound ones; a prefix `LIKE` reads from
/// the prefix on and leaves the `LIKE` to the client.
fn range_conds(
    rc: &ColumnRef,
    rp: &remodel_model::RangePredicate,
    t: &TableBuild,
    r: &mut Restrictions,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Some(name) = t.col_name(rc) else {
        r.filters.push(typed_range(rc, rp)?);
        return Ok(());
    };
    let bound = |b: &Option<remodel_model::RangeBound>| b.as_ref().and_then(|b| b.expr.clone());
    if rp.prefix {
        let pattern = bound(&rp.lower).ok_or("the LIKE pattern has no typed form")?;
        // `LIKE 'abc%'`: every match is at or after 'abc' (the pattern without its final `%`).
        let one = || Expr::Literal {
            value: Literal::Integer { value: 1 },
        };
        let length = Expr::Call {
            function: Function::Length,
            args: vec![pattern.clone()],
        };
        let prefix = Expr::Call {
            function: Function::Substr,
            args: vec![pattern, one(), Expr::binary(BinaryOp::Sub, length, one())],
        };
        r.conds.push(Cond::new(t, name, ">=", expr(&prefix)));
        r.filters.push(typed_range(rc, rp)?);
        notes.push(format!(
            "LIKE prefix on {rc}: read from the prefix on (the pattern without its final %), the LIKE applied on the client; assumes the pattern is a fixed prefix followed by % in every call, as in the example"
        ));
        return Ok(());
    }
    if let Some(l) = &rp.lower {
        let v = bound(&rp.lower).ok_or("a lower bound has no typed form")?;
        r.conds.push(Cond::new(
            t,
            name,
            if l.inclusive { ">=" } else { ">" },
            expr(&v),
        ));
    }
    if let Some(u) = &rp.upper {
        let v = bound(&rp.upper).ok_or("an upper bound has no typed form")?;
        r.conds.push(Cond::new(
            t,
            name,
            if u.inclusive { "<=" } else { "<" },
            expr(&v),
        ));
    }
    // The rows whose value is NULL are stored above (or below) every value: a lower (upper)
    // bound alone would take them, which SQL's comparison never does.
    if let Some(e) = t.null_encoding(rc) {
        let open = match e.nulls() {
            Some(NullsAt::Last) if rp.upper.is_none() => Some("<"),
            Some(NullsAt::First) if rp.lower.is_none() => Some(">"),
            _ => None,
        };
        if let Some(op) = open {
            let null = BindValue::Literal {
                value: Literal::Null,
            };
            r.conds
                .push(Cond::new(t, name, op, BindValue::encoded(e, null)));
        }
    }
    Ok(())
}

/// What CQL cannot do or must not do of the aggregation: `group` is CQL's GROUP BY when it
/// serves the grouping; `client` when the client groups and aggregates.
struct Aggregation {
    group: String,
    client: bool,
}

/// CQL aggregates that give what SQL gives on the column's type: `count`, `min`, `max`; `sum`
/// and `avg` only of decimals and floating point (CQL keeps an integer column's type: its sum
/// overflows and its avg truncates, where Postgres widens).
fn cql_aggregate(f: &str, distinct: bool, col_type: Option<&CqlType>) -> bool {
    if distinct {
        return false;
    }
    match f {
        "count" | "min" | "max" => true,
        "sum" | "avg" => matches!(
            col_type.and_then(CqlType::native),
            Some(NativeType::Decimal | NativeType::Double | NativeType::Float)
        ),
        _ => false,
    }
}

/// Whether the aggregation runs in CQL or on the client.
fn aggregation(
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    r: &Restrictions,
    lookups: &[LookupRead<'_>],
) -> Aggregation {
    if shape.aggregates.is_empty() && shape.group_by.is_empty() {
        return Aggregation {
            group: String::new(),
            client: false,
        };
    }
    let type_of = |c: &ColumnRef| {
        t.columns
            .iter()
            .find(|(k, ..)| *k == KeySrc::Col(c.clone()))
            .map(|(_, _, ty, _)| ty)
    };
    let supported = shape
        .aggregates
        .iter()
        .all(|(f, c, d)| cql_aggregate(f, *d, c.as_ref().and_then(type_of)));
    // Rows the CQL returns that the answer does not hold (a filter, a lookup's inner join,
    // several requests) must be gone before aggregating.
    let whole = r.filters.is_empty()
        && lookups.is_empty()
        && match r.partitions {
            PartitionRead::One => true,
            PartitionRead::Scan => shape.group_by.is_empty(),
            PartitionRead::Each { .. } => false,
        };
    let group = cql_group_by(shape, key, t);
    let client = !supported || !whole || (!shape.group_by.is_empty() && group.is_none());
    Aggregation {
        group: if client {
            String::new()
        } else {
            group.unwrap_or_default()
        },
        client,
    }
}

/// CQL's GROUP BY when the grouping is a prefix of the key read from one partition (empty when
/// there is no grouping); `None` when CQL cannot group so.
fn cql_group_by(shape: &Shape, key: &KeyPlan, t: &TableBuild) -> Option<String> {
    if shape.group_by.is_empty() {
        return Some(String::new());
    }
    let names: Vec<&str> = shape
        .group_by
        .iter()
        .map(|g| t.col_name(g))
        .collect::<Option<_>>()?;
    let key_names: Vec<String> = t
        .key_elements()
        .iter()
        .filter_map(|k| t.name_of(k).map(str::to_string))
        .collect();
    let prefix = key.partitions_read == Some(1)
        && names.len() <= key_names.len()
        && names.iter().zip(&key_names).all(|(a, b)| a == b);
    prefix.then(|| {
        let items: Vec<String> = names.iter().map(|n| cql_quote(n)).collect();
        format!(" GROUP BY {}", items.join(", "))
    })
}

/// The SELECT list: projected columns and CQL aggregates (raw columns when the client
/// aggregates), the columns of the client's filters and the keys of the reads that follow.
fn select_list(shape: &Shape, t: &TableBuild, client_aggregates: bool) -> String {
    let mut items: Vec<String> = Vec::new();
    let add = |c: &ColumnRef, items: &mut Vec<String>| {
        if let Some(n) = t.col_name(c) {
            let q = cql_quote(n);
            if !items.contains(&q) {
                items.push(q);
            }
        }
    };
    let agg_cols: Vec<&ColumnRef> = shape
        .aggregates
        .iter()
        .filter_map(|(_, c, _)| c.as_ref())
        .collect();
    for c in &shape.projection {
        if shape.lookups.iter().any(|l| l.columns.contains(c)) {
            continue;
        }
        let aggregated = agg_cols.contains(&c) && !shape.group_by.contains(c);
        if !client_aggregates && !shape.aggregates.is_empty() && aggregated {
            continue;
        }
        add(c, &mut items);
    }
    let via = shape
        .lookups
        .iter()
        .flat_map(|l| &l.via)
        .filter_map(|v| match v {
            BindValue::Current { column } => Some(column),
            _ => None,
        });
    for c in shape.client_columns.iter().chain(via) {
        add(c, &mut items);
    }
    if client_aggregates {
        for c in shape.group_by.iter().chain(agg_cols.iter().copied()) {
            add(c, &mut items);
        }
    } else {
        for (f, c, _) in &shape.aggregates {
            match c.as_ref().and_then(|c| t.col_name(c)) {
                Some(n) => items.push(format!("{f}({})", cql_quote(n))),
                None => items.push("count(*)".into()),
            }
        }
    }
    if items.is_empty() {
        "*".into()
    } else {
        items.join(", ")
    }
}

/// ORDER BY in CQL when it names clustering columns after the bound ones, all in their declared
/// order or all reversed, and one request reads one partition; empty otherwise.
fn order_by(shape: &Shape, key: &KeyPlan, t: &TableBuild, r: &Restrictions) -> String {
    let order: Vec<(String, bool)> = shape
        .order
        .iter()
        .filter(|(c, _)| !t.partition.contains(&KeySrc::Col(c.clone())))
        .filter_map(|(c, d)| t.col_name(c).map(|n| (n.to_string(), *d)))
        .collect();
    if order.is_empty() || key.partition_in || r.partitions == PartitionRead::Scan {
        return String::new();
    }
    // Clustering columns bound by `=` come first; the order names the ones after them.
    let skip = t
        .clustering
        .iter()
        .take_while(|(k, _)| {
            t.name_of(k)
                .is_some_and(|n| r.conds.iter().any(|c| c.bind.column == n && c.eq))
        })
        .count();
    let prefix_ok = skip + order.len() <= t.clustering.len()
        && order
            .iter()
            .enumerate()
            .all(|(i, (n, _))| t.name_of(&t.clustering[skip + i].0) == Some(n.as_str()));
    let rel: Vec<bool> = order
        .iter()
        .enumerate()
        .map(|(i, (_, d))| {
            t.clustering
                .get(skip + i)
                .is_some_and(|(_, o)| (*o == SortOrder::Desc) == *d)
        })
        .collect();
    if !prefix_ok || !(rel.iter().all(|x| *x) || rel.iter().all(|x| !*x)) {
        return String::new();
    }
    // The bound columns are named too, in the same relation to their declared order
    // (Cassandra before 4.0 requires them).
    let same = rel.first().copied().unwrap_or(true);
    let bound = t.clustering[..skip].iter().filter_map(|(k, o)| {
        let desc = (*o == SortOrder::Desc) == same;
        t.name_of(k).map(|n| (n.to_string(), desc))
    });
    let items: Vec<String> = bound
        .chain(order.iter().cloned())
        .map(|(n, d)| format!("{} {}", cql_quote(&n), if d { "DESC" } else { "ASC" }))
        .collect();
    format!(" ORDER BY {}", items.join(", "))
}

/// The client's sort, in Postgres' order (NULLs where the statement puts them), when the
/// rows do not come in the requested order: sorted on the client, merged from several
/// requests or partitions, regrouped on the client, or a key whose order is not the
/// clustering's. Columns every row has equal (bound by `=`) are left out.
fn client_sort(shape: &Shape, order_sql: &str, r: &Restrictions, aggregated: bool) -> Vec<SortKey> {
    let fixed = |c: &ColumnRef| {
        shape
            .eq
            .iter()
            .any(|e| e.op == EqualityOp::Eq && e.column == *c)
    };
    let keys: Vec<SortKey> = shape
        .sort
        .iter()
        .filter(|(c, ..)| !fixed(c))
        .map(|(c, desc, nulls_first)| SortKey {
            by: SortBy::Column { column: c.clone() },
            desc: *desc,
            nulls_first: *nulls_first,
        })
        .collect();
    let served = !order_sql.is_empty() && r.partitions == PartitionRead::One && !aggregated;
    if keys.is_empty() || served {
        Vec::new()
    } else {
        keys
    }
}

/// The LIMIT: on the client when anything the client does comes before it (then also a CQL
/// `LIMIT ?` per request where each request's first rows are enough); else a CQL `LIMIT ?` of
/// the LIMIT plus the OFFSET the client skips. `Err` when it has no typed form.
fn limit(
    p: &AccessPattern,
    work: &ClientWork,
    r: &Restrictions,
    order_sql: &str,
) -> Result<(Option<Expr>, Option<Expr>), String> {
    let Some(l) = limit_expr(&p.analysis)? else {
        return Ok((None, None));
    };
    let offset = offset_expr(&p.analysis)?;
    // With an OFFSET the client skips the first rows itself: CQL reads LIMIT + OFFSET rows.
    let cql = match &offset {
        Some(o) => Expr::binary(BinaryOp::Add, l.clone(), o.clone()),
        None => l.clone(),
    };
    let before = !work.filters.is_empty()
        || !work.aggregates.is_empty()
        || !work.group_by.is_empty()
        || work.distinct
        || !work.sort.is_empty()
        || r.partitions != PartitionRead::One && r.partitions != PartitionRead::Scan;
    if !before {
        return Ok((None, Some(cql)));
    }
    // Several requests, each in the requested order with nothing dropped after it: each
    // request's first LIMIT + OFFSET rows hold the answer's.
    let per_request = matches!(r.partitions, PartitionRead::Each { bind } if matches!(r.conds.get(bind).map(|c| &c.bind.value), Some(BindValue::Buckets { .. })))
        && work.filters.is_empty()
        && work.aggregates.is_empty()
        && work.group_by.is_empty()
        && !work.distinct
        && (work.sort.is_empty() || !order_sql.is_empty());
    Ok((Some(l), per_request.then_some(cql)))
}

/// A LIMIT or OFFSET as the plan states it: its typed expression, or the constant the
/// statement wrote; `Err` when the statement has one that has no typed form.
fn typed_count(
    e: &Option<Expr>,
    sql: &Option<String>,
    constant: Option<u64>,
    what: &str,
) -> Result<Option<Expr>, String> {
    match (e, sql, constant) {
        (Some(e), _, _) => Ok(Some(e.clone())),
        (None, Some(s), _) => Err(format!("{what} {s} has no typed form in the plan")),
        (None, None, Some(n)) => Ok(i64::try_from(n).ok().map(|value| Expr::Literal {
            value: Literal::Integer { value },
        })),
        (None, None, None) => Ok(None),
    }
}

/// The statement's LIMIT, typed.
pub(crate) fn limit_expr(a: &remodel_model::PatternAnalysis) -> Result<Option<Expr>, String> {
    typed_count(&a.limit_expr, &a.limit_sql, a.limit, "LIMIT")
}

/// The statement's OFFSET, typed.
pub(crate) fn offset_expr(a: &remodel_model::PatternAnalysis) -> Result<Option<Expr>, String> {
    typed_count(&a.offset_expr, &a.offset_sql, a.offset, "OFFSET")
}

/// The mapping of a read no CQL can serve as it is (of table `t`, or of the entries it embeds):
/// stated, with the reason, and no CQL.
pub(crate) fn unsupported(p: &AccessPattern, t: &TableBuild, why: String) -> QueryMapping {
    QueryMapping {
        pattern: p.id.clone(),
        table: Some(t.name.clone()),
        reason: Some(why.clone()),
        unsupported: Some(why),
        ..Default::default()
    }
}

/// The client's work on the rows of a read, in SQL's order.
fn client_work(
    p: &AccessPattern,
    shape: &Shape,
    r: &Restrictions,
    agg: &Aggregation,
    order_sql: &str,
) -> ClientWork {
    let a = &p.analysis;
    let mut work = ClientWork {
        filters: r.filters.iter().map(|f| f.expr.clone()).collect(),
        distinct: a.distinct,
        sort: client_sort(shape, order_sql, r, agg.client),
        ..Default::default()
    };
    if agg.client {
        work.group_by = shape.group_by.clone();
        work.aggregates = shape
            .aggregates
            .iter()
            .map(|(f, c, d)| Aggregate {
                function: f.clone(),
                column: c.clone(),
                distinct: *d,
            })
            .collect();
        // A GROUP BY without aggregates that returns ungrouped columns: Postgres accepts it
        // only where they depend on the grouped key, so any row of a group stands for it.
        let ungrouped = shape.projection.iter().any(|c| !shape.group_by.contains(c));
        if work.aggregates.is_empty() && ungrouped && !work.group_by.is_empty() {
            work.group_row = Some(GroupRow::Any);
        }
    }
    work
}

/// Maps a read pattern served by `t` (keys laid out by `key`).
pub fn map(
    ctx: &Context<'_>,
    p: &AccessPattern,
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    lookups: &[LookupRead<'_>],
    scan_rows: Option<(f64, &str)>,
) -> QueryMapping {
    let mut notes: Vec<String> = shape.notes.clone();
    notes.extend(key.notes.iter().cloned());
    let r = match restrictions(shape, key, t, &ctx.zones, &mut notes) {
        Ok(r) => r,
        Err(why) => return unsupported(p, t, why),
    };
    let agg = aggregation(shape, key, t, &r, lookups);
    let select = select_list(shape, t, agg.client);
    let order_sql = order_by(shape, key, t, &r);
    let mut client = client_work(p, shape, &r, &agg, &order_sql);
    let (client_limit, cql_limit) = match limit(p, &client, &r, &order_sql) {
        Ok(l) => l,
        Err(why) => return unsupported(p, t, why),
    };
    client.limit = client_limit;
    client.offset = match offset_expr(&p.analysis) {
        Ok(o) => o,
        Err(why) => return unsupported(p, t, why),
    };
    human_notes(&client, &r, &agg, &mut notes);
    let mut binds: Vec<Bind> = r
        .conds
        .iter()
        .flat_map(|c| std::iter::once(c.bind.clone()).chain(c.more.iter().cloned()))
        .collect();
    let limit_sql = match cql_limit {
        Some(l) => {
            binds.push(Bind {
                column: "limit".into(),
                cql_type: CqlType::Native(NativeType::Int),
                value: BindValue::Expr { expr: l },
            });
            " LIMIT ?"
        }
        None => "",
    };
    let where_sql = if r.conds.is_empty() {
        String::new()
    } else {
        let parts: Vec<&str> = r.conds.iter().map(|c| c.sql.as_str()).collect();
        format!(" WHERE {}", parts.join(" AND "))
    };
    let cql = format!(
        "SELECT {select} FROM {}.{}{where_sql}{}{order_sql}{limit_sql}",
        cql_quote(ctx.keyspace),
        cql_quote(&t.name),
        agg.group
    );
    let reasons = not_single_reasons(key, t, &r, lookups, scan_rows);
    let single = reasons.is_empty();
    let mut warnings = Vec::new();
    if let Some(lock) = &p.analysis.locking {
        warnings.push(lock_dropped(lock));
    }
    QueryMapping {
        pattern: p.id.clone(),
        table: Some(t.name.clone()),
        cql: Some(cql),
        single_partition: single,
        reason: (!single).then(|| reasons.join("; ")),
        buckets: bucket_note(shape, key, &r),
        notes,
        binds,
        // A column a lookup reads is its step's, even where the read's table copies it too:
        // the first statement leaves it out of its SELECT.
        columns: read_columns(p, &|c| {
            lookups
                .iter()
                .filter(|l| l.columns.contains(c))
                .find_map(|l| held_in(l.table, c))
                .or_else(|| held_in(t, c))
                .or_else(|| lookups.iter().find_map(|l| held_in(l.table, c)))
        }),
        client_filters: r.filters.iter().map(|f| f.sql.clone()).collect(),
        then: lookups
            .iter()
            .map(|l| lookup_step(ctx.keyspace, l))
            .collect(),
        partitions: Some(r.partitions.clone()),
        client,
        warnings,
        ..Default::default()
    }
}

/// The read's result columns in the SQL's order, each found in the first of `held` (the read's
/// table, then its lookups) that holds its source column; a computed one has no CQL column, and
/// is linked to the aggregate it is, when it is one (the analyzer's `outputs[].aggregate`).
pub fn read_columns(
    p: &AccessPattern,
    held: &dyn Fn(&ColumnRef) -> Option<ReadColumn>,
) -> Vec<ReadColumn> {
    p.analysis
        .outputs
        .iter()
        .map(|o| {
            let found = o.column.as_ref().and_then(held);
            ReadColumn {
                name: o.name.clone(),
                source: o.column.clone(),
                aggregate: o.aggregate.filter(|_| o.column.is_none()),
                ..found.unwrap_or_default()
            }
        })
        .collect()
}

/// Where `t` holds source column `c`: its CQL column, type and encoding.
pub fn held_in(t: &TableBuild, c: &ColumnRef) -> Option<ReadColumn> {
    let name = t.col_name(c)?;
    Some(ReadColumn {
        name: String::new(),
        source: None,
        table: Some(t.name.clone()),
        cql_column: Some(name.to_string()),
        cql_type: t.type_of(name),
        encoding: t.encoding(&KeySrc::Col(c.clone())),
        aggregate: None,
    })
}

/// The warning of a `SELECT … FOR UPDATE/SHARE` served without its lock.
pub fn lock_dropped(lock: &str) -> Warning {
    Warning {
        code: "lock_dropped".into(),
        message: format!(
            "the statement locks the rows it reads ({lock}); Cassandra takes no row locks, so another writer can change them before this transaction's writes: make those writes conditional (a lightweight transaction, `IF …`) where that matters"
        ),
    }
}

/// The sentences the notes keep for humans about the client's work (nothing reads them).
fn human_notes(work: &ClientWork, r: &Restrictions, agg: &Aggregation, notes: &mut Vec<String>) {
    if !work.filters.is_empty() {
        let sql: Vec<&str> = r.filters.iter().map(|f| f.sql.as_str()).collect();
        notes.push(format!(
            "the client filters the rows read with {}",
            sql.join(" AND ")
        ));
    }
    if agg.client {
        notes.push("the client groups the rows and computes the aggregates".into());
    }
    if !work.sort.is_empty() {
        let merged = !matches!(r.partitions, PartitionRead::One);
        notes.push(if merged {
            "several partitions or requests are read: the client merges their rows in the requested order".into()
        } else {
            "the requested order is not the order the rows come in: the client sorts them".into()
        });
    }
    if let Some(l) = &work.limit {
        notes.push(format!(
            "LIMIT {l} is applied on the client, after its filters, grouping and sort"
        ));
    }
    if let Some(o) = &work.offset {
        notes.push(format!(
            "OFFSET {o} has no CQL equivalent: the client skips the first {o} rows"
        ));
    }
}
/// The read of a parent kept by reference, by the key each row read names.
fn lookup_step(keyspace: &str, l: &LookupRead<'_>) -> ReadStep {
    let t = l.table;
    let cols: Vec<String> = l
        .columns
        .iter()
        .filter_map(|c| t.col_name(c).map(cql_quote))
        .collect();
    let mut conds = Vec::new();
    let mut binds = Vec::new();
    for (k, via) in t.partition.iter().zip(&l.via) {
        let Some(name) = t.name_of(k) else { continue };
        conds.push(format!("{} = ?", cql_quote(name)));
        binds.push(t.bind(name, via.clone()));
    }
    ReadStep {
        table: t.name.clone(),
        cql: format!(
            "SELECT {} FROM {}.{} WHERE {}",
            if cols.is_empty() {
                "*".to_string()
            } else {
                cols.join(", ")
            },
            cql_quote(keyspace),
            cql_quote(&t.name),
            conds.join(" AND ")
        ),
        binds,
        note: Some(format!("kept by reference: {}", l.rationale)),
    }
}

/// Why a read is not one partition (empty when it is).
fn not_single_reasons(
    key: &KeyPlan,
    t: &TableBuild,
    r: &Restrictions,
    lookups: &[LookupRead<'_>],
    scan_rows: Option<(f64, &str)>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let buckets = match r.partitions {
        PartitionRead::Each { bind } => r.conds.get(bind).and_then(|c| match &c.bind.value {
            BindValue::Buckets { bucket, .. } => Some(*bucket),
            _ => None,
        }),
        _ => None,
    };
    if r.partitions == PartitionRead::Scan {
        let size = match scan_rows {
            Some((rows, "statistics")) => {
                format!(", about {} rows", crate::costs::sizing::human_count(rows))
            }
            Some((rows, _)) => format!(
                ", {} rows assumed without statistics",
                crate::costs::sizing::human_count(rows)
            ),
            None => String::new(),
        };
        reasons.push(format!(
            "no equality predicate: reads every partition of {} (a full scan, paged{size}); fine for a small table, otherwise precompute the answer",
            t.name
        ));
    } else if let Some(b) = buckets {
        let n = key.bucket.map(|(_, n)| n).unwrap_or(1);
        if n > 1 {
            reasons.push(format!(
                "the window spans about {n} {} buckets: one single-partition read per bucket, the rows merged on the client",
                b.name()
            ));
        }
    } else if key.partition_in {
        reasons.push("IN on the partition key: one partition per value, read as parallel single-partition queries".into());
    }
    for l in lookups {
        reasons.push(format!(
            "then reads {} by key from {} (kept by reference: {})",
            l.table.root, l.table.name, l.rationale
        ));
    }
    reasons
}

/// How the reader computes the bucket value(s) of a bucketed partition key (for humans).
fn bucket_note(shape: &Shape, key: &KeyPlan, r: &Restrictions) -> Option<String> {
    let (b, n) = key.bucket?;
    let (rc, _) = shape.range.as_ref()?;
    let cond = r.conds.iter().find(|c| {
        matches!(
            c.bind.value,
            BindValue::Bucket { .. } | BindValue::Buckets { .. }
        )
    })?;
    let bcol = &cond.bind.column;
    Some(match &cond.bind.value {
        BindValue::Bucket { time_zone, .. } => format!(
            "{bcol} = the {} ({time_zone}) of the lower bound of {}: the SQL confines the window to one {}",
            b.name(),
            rc.column,
            b.name()
        ),
        BindValue::Buckets {
            time_zone, upper_exclusive, ..
        } => format!(
            "{bcol} = each {} ({time_zone}) from the one the lower bound of {} falls in to the one its upper bound falls in{}: one request per bucket, about {n} for the example window",
            b.name(),
            rc.column,
            if *upper_exclusive {
                " (not that one when the excluded upper bound is its first instant)"
            } else {
                ""
            }
        ),
        _ => return None,
    })
}

pub fn suggest(
    keyspace: &str,
    p: &AccessPattern,
    shape: &Shape,
    t: &TableBuild,
) -> Option<Suggestion> {
    if shape.aggregates.is_empty() {
        return None;
    }
    let groups: Vec<(String, CqlType)> = shape
        .group_by
        .iter()
        .filter_map(|g| {
            let name = t.col_name(g)?;
            let ty = t
                .columns
                .iter()
                .find(|(_, n, ..)| n == name)
                .map(|(_, _, ty, _)| ty.clone())?;
            Some((name.to_string(), ty))
        })
        .collect();
    let counts_only = shape.aggregates.iter().all(|(f, _, d)| f == "count" && !d);
    let base = crate::candidates::naming::sanitize(&shape.root);
    let name = if groups.is_empty() {
        crate::candidates::naming::fit_length(&format!("{base}_totals"))
    } else {
        let w: Vec<String> = groups
            .iter()
            .map(|(n, _)| crate::candidates::naming::sanitize(n))
            .collect();
        crate::candidates::naming::fit_length(&format!("{base}_totals_by_{}", w.join("_")))
    };
    let value = if counts_only {
        "n counter"
    } else {
        "value decimal"
    };
    let mut cols = vec!["summary text".to_string()];
    cols.extend(
        groups
            .iter()
            .map(|(n, ty)| format!("{} {ty}", cql_quote(n))),
    );
    cols.push(value.to_string());
    let ck: Vec<String> = groups.iter().map(|(n, _)| cql_quote(n)).collect();
    let pk = if ck.is_empty() {
        "(summary)".to_string()
    } else {
        format!("(summary), {}", ck.join(", "))
    };
    let cql = format!(
        "CREATE TABLE IF NOT EXISTS {}.{} ({}, PRIMARY KEY ({pk}))",
        cql_quote(keyspace),
        cql_quote(&name),
        cols.join(", ")
    );
    let text = if counts_only {
        format!("keep the counts in {name}: increment on every insert into {} and decrement on delete; the read becomes one partition", shape.root)
    } else {
        format!("precompute the aggregate into {name} when {} changes (or on a schedule); the read becomes one partition", shape.root)
    };
    Some(Suggestion {
        pattern: p.id.clone(),
        text,
        cql: Some(cql),
    })
}
