//! The validator's checks of the reads (see [`crate::validate`]): (e) every predicate kept,
//! (n) a bucketed read reads every bucket of its window, (o) the contract is complete (every
//! bind typed as its marker takes it, result columns where their tables hold them, partitions,
//! consistency and batch stated) — each over the plan model only.

use crate::candidates::shape::{eq_expr, range_expr};
use crate::checklist::buckets::{self, Zones};
use remodel_model::{
    AccessPattern, Bind, BindValue, ColumnRef, CqlType, Design, EqualityOp, Expr, NativeType,
    PatternAnalysis, QueryMapping, RangePredicate, ReadColumn, Schema, Violation,
};
use std::collections::BTreeMap;

use crate::validate::v;

/// Columns a statement's joins make equal, each mapped to one name of its class (the smallest),
/// so that a filter written on `drivers.driver_id` is the one the rows hold as `trips.driver_id`.
struct Same {
    rep: BTreeMap<ColumnRef, ColumnRef>,
}

impl Same {
    fn of(schema: &Schema, a: &PatternAnalysis) -> Same {
        let canon = |t: &str, c: &str| match schema.table(t) {
            Some(st) => ColumnRef::new(
                st.key(),
                st.column(c)
                    .map_or_else(|| c.to_string(), |x| x.name.clone()),
            ),
            None => ColumnRef::new(t, c),
        };
        let mut classes: Vec<Vec<ColumnRef>> = Vec::new();
        for j in &a.join_path {
            for (l, r) in j.left_columns.iter().zip(&j.right_columns) {
                let (l, r) = (canon(&j.left_table, l), canon(&j.right_table, r));
                let found: Vec<usize> = (0..classes.len())
                    .filter(|&i| classes[i].contains(&l) || classes[i].contains(&r))
                    .collect();
                let mut merged = vec![l, r];
                for &i in found.iter().rev() {
                    merged.extend(classes.remove(i));
                }
                merged.sort();
                merged.dedup();
                classes.push(merged);
            }
        }
        let mut rep = BTreeMap::new();
        for class in &classes {
            for c in class {
                rep.insert(c.clone(), class[0].clone());
            }
        }
        Same { rep }
    }

    /// `e` with every column named by its class (canonical spelling first).
    fn norm(&self, schema: &Schema, e: &Expr) -> Expr {
        e.map_columns(&mut |c| {
            let c = match schema.table(&c.table) {
                Some(st) => ColumnRef::new(
                    st.key(),
                    st.column(&c.column)
                        .map_or_else(|| c.column.clone(), |x| x.name.clone()),
                ),
                None => c.clone(),
            };
            self.rep.get(&c).cloned().unwrap_or(c)
        })
    }
}

/// True when some bind of the read (or of a step after it) takes `value`.
fn bound(q: &QueryMapping, value: &Expr) -> bool {
    fn has(b: &BindValue, v: &Expr) -> bool {
        match b {
            BindValue::Expr { expr } => {
                expr == v
                    || matches!(v, Expr::InList { list, .. } if list.as_slice() == [expr.clone()])
            }
            BindValue::List { items } => crate::candidates::shape::in_items(v) == *items,
            BindValue::Bucket { of, .. }
            | BindValue::EpochMicros { of, .. }
            | BindValue::Encoded { of, .. } => has(of, v),
            BindValue::Buckets { lower, upper, .. } => has(lower, v) || has(upper, v),
            _ => false,
        }
    }
    q.binds
        .iter()
        .chain(q.then.iter().flat_map(|s| &s.binds))
        .any(|b| has(&b.value, value))
}

/// True when row comparison `e` (`(created_at, id) < ($2, $3)`) is a slice of the read's CQL:
/// each of its columns' value is bound to the CQL column that holds that source column.
fn row_sliced(design: &Design, q: &QueryMapping, e: &Expr) -> bool {
    let Expr::Binary { left, right, .. } = e else {
        return false;
    };
    let (Expr::Row { items: l }, Expr::Row { items: r }) = (left.as_ref(), right.as_ref()) else {
        return false;
    };
    let Some(t) = design
        .tables
        .iter()
        .find(|t| Some(&t.name) == q.table.as_ref())
    else {
        return false;
    };
    let held = |c: &ColumnRef, v: &Expr| {
        t.columns
            .iter()
            .filter(|col| col.source.as_ref() == Some(c))
            .any(|col| {
                let one = QueryMapping {
                    binds: q
                        .binds
                        .iter()
                        .filter(|b| b.column == col.name)
                        .cloned()
                        .collect(),
                    ..QueryMapping::default()
                };
                bound(&one, v)
            })
    };
    let pairs = |cols: &[Expr], vals: &[Expr]| {
        cols.iter().zip(vals).all(|(c, v)| match c {
            Expr::Column { column, .. } => v.is_column_free() && held(column, v),
            _ => false,
        })
    };
    l.len() == r.len() && (pairs(l, r) || pairs(r, l))
}

/// (e) Every predicate of the SQL is served by the key (its value bound) or applied by the
/// client (a filter of the same condition, the join's equal columns counted as one).
pub fn predicates_kept(
    schema: &Schema,
    design: &Design,
    p: &AccessPattern,
    q: &QueryMapping,
    out: &mut Vec<Violation>,
) {
    if q.one_off || q.table.is_none() || q.cql.is_none() {
        return;
    }
    let a = &p.analysis;
    let same = Same::of(schema, a);
    let filters: Vec<Expr> = q
        .client
        .filters
        .iter()
        .map(|f| same.norm(schema, f))
        .collect();
    let filtered = |e: &Expr| filters.contains(&same.norm(schema, e));
    let source = design
        .tables
        .iter()
        .find(|t| Some(&t.name) == q.table.as_ref())
        .map(|t| &t.source);
    let mut lost: Vec<String> = Vec::new();
    for e in &a.equality {
        let cond = eq_expr(&e.column, e.op, e.expr.as_ref());
        let ok = match (e.op, &e.expr) {
            (EqualityOp::IsNull, _) => {
                filtered(&cond)
                    || source.is_some_and(|s| s.keeps_only_null(&e.column.table, &e.column.column))
            }
            (_, Some(val)) => bound(q, val) || filtered(&cond),
            (_, None) => false,
        };
        if !ok {
            lost.push(crate::candidates::shape::predicate_sql(e));
        }
    }
    for r in &a.ranges {
        if !range_kept(q, r, &filtered) {
            lost.push(crate::candidates::shape::range_sql(r));
        }
    }
    for r in &a.residual {
        let kept = r
            .expr
            .as_ref()
            .is_some_and(|e| filtered(e) || row_sliced(design, q, e));
        if !kept {
            lost.push(r.sql.clone());
        }
    }
    if let Some(l) = crate::emit::queries::limit_expr(a).ok().flatten() {
        if !limited(q, &l) {
            lost.push(format!("LIMIT {l}"));
        }
    }
    if !lost.is_empty() {
        v(
            out,
            "e",
            format!(
                "read {}: {} neither served by the key of {} nor applied on the client",
                q.pattern,
                lost.join(", "),
                q.table.as_deref().unwrap_or_default()
            ),
        );
    }
}

/// A range is kept when the client applies it, or when every bound's value is bound.
fn range_kept(q: &QueryMapping, r: &RangePredicate, filtered: &dyn Fn(&Expr) -> bool) -> bool {
    if range_expr(&r.column, r).is_some_and(|e| filtered(&e)) {
        return true;
    }
    let values: Vec<Option<&Expr>> = r
        .lower
        .iter()
        .chain(r.upper.iter())
        .map(|b| b.expr.as_ref())
        .collect();
    !r.prefix && !values.is_empty() && values.iter().all(|v| v.is_some_and(|v| bound(q, v)))
}

/// The LIMIT is applied: by the client, or by a CQL `LIMIT ?` of it (plus the OFFSET the client
/// skips) on a read the client neither filters, groups, sorts nor merges.
fn limited(q: &QueryMapping, l: &Expr) -> bool {
    if q.client.limit.as_ref() == Some(l) {
        return true;
    }
    q.binds.iter().any(|b| {
        b.column == "limit"
            && matches!(&b.value, BindValue::Expr { expr } if expr == l
                || matches!(expr, Expr::Binary { op: remodel_model::BinaryOp::Add, left, .. } if **left == *l))
    })
}

/// (n) A bucketed partition key bound to the one bucket of a range's bound reads the whole
/// window only where the SQL confines the window to one bucket: any other window crossing a
/// bucket boundary would lose the rows past it.
pub fn buckets_read(
    design: &Design,
    p: &AccessPattern,
    q: &QueryMapping,
    session_zone: &str,
    out: &mut Vec<Violation>,
) {
    let Some(t) = design
        .tables
        .iter()
        .find(|t| Some(&t.name) == q.table.as_ref())
    else {
        return;
    };
    for k in t.partition_key.iter().filter(|k| k.bucket.is_some()) {
        let Some(b) = q.binds.iter().find(|b| b.column == k.column) else {
            continue;
        };
        let BindValue::Bucket {
            bucket,
            of,
            time_zone,
        } = &b.value
        else {
            continue;
        };
        let BindValue::Expr { expr: of } = of.as_ref() else {
            continue;
        };
        let source = k.derived_from.as_deref().unwrap_or_default();
        let held = |c: &ColumnRef| {
            t.columns
                .iter()
                .any(|dc| dc.name == source && dc.source.as_ref() == Some(c))
                || c.column == source
        };
        let zones = Zones {
            session: session_zone.to_string(),
            buckets: time_zone.clone(),
        };
        for r in p.analysis.ranges.iter().filter(|r| held(&r.column)) {
            let of_bound = r
                .lower
                .iter()
                .chain(r.upper.iter())
                .any(|x| x.expr.as_ref() == Some(of));
            if of_bound && !buckets::one_bucket(r, *bucket, &zones, &p.analysis.params) {
                v(out, "n", format!(
                    "read {}: {} of {} is bound to the one {} bucket of a bound of {}, but nothing confines the window to one bucket: a window crossing a bucket boundary would lose the rows past it (bind every bucket between the bounds)",
                    q.pattern,
                    k.column,
                    t.name,
                    bucket.name(),
                    crate::candidates::shape::range_sql(r)
                ));
            }
        }
    }
}

/// Why `b`, a bind of a statement on `table`, is not typed as its marker takes it: the
/// column's type (`list<T>` for `IN ?`), `int` for `LIMIT ?`; a collection's binds (its type,
/// its key's, its entry's) only need a type.
fn mistyped(design: &Design, table: &str, b: &Bind) -> Option<String> {
    if let BindValue::SecondsUntil { .. } = b.value {
        // `USING TTL ?` takes an int, whatever the table's columns.
        let int = CqlType::Native(NativeType::Int);
        return (b.cql_type != int)
            .then(|| format!("typed {} where USING TTL takes int", b.cql_type));
    }
    let col = design
        .tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.columns.iter().find(|c| c.name == b.column));
    let want = match col {
        Some(c) if c.embeds.is_some() => return None,
        Some(c) => c.cql_type.clone(),
        None if b.column == "limit" => CqlType::Native(NativeType::Int),
        None => return Some(format!("no column {} in {table}", b.column)),
    };
    let list = CqlType::List(Box::new(want.clone()));
    (b.cql_type != want && b.cql_type != list)
        .then(|| format!("typed {} where the marker takes {want}", b.cql_type))
}

/// A result column of `q` that names a CQL column its table does not have with that type.
fn misplaced(design: &Design, c: &ReadColumn) -> Option<String> {
    let (Some(table), Some(col)) = (&c.table, &c.cql_column) else {
        return None;
    };
    let held = design
        .tables
        .iter()
        .find(|t| t.name == *table)
        .and_then(|t| t.columns.iter().find(|d| d.name == *col));
    match held {
        Some(d) if Some(&d.cql_type) == c.cql_type.as_ref() && d.encoding == c.encoding => None,
        Some(d) => Some(format!(
            "result column {} is typed {:?} where {table}.{col} is {}",
            c.name, c.cql_type, d.cql_type
        )),
        None => Some(format!(
            "result column {} is read from {table}.{col}, which does not exist",
            c.name
        )),
    }
}

/// (o) Every bind typed as its marker takes it, every result column where the plan says.
fn typed_reads(design: &Design, q: &QueryMapping, out: &mut Vec<Violation>) {
    let steps = q.then.iter().map(|s| (s.table.as_str(), &s.binds));
    let first = q.table.as_deref().map(|t| (t, &q.binds));
    for (table, binds) in first.into_iter().chain(steps) {
        for b in binds {
            if let Some(why) = mistyped(design, table, b) {
                v(out, "o", format!("read {}: bind {b} is {why}", q.pattern));
            }
        }
    }
    for c in &q.columns {
        if let Some(why) = misplaced(design, c) {
            v(out, "o", format!("read {}: {why}", q.pattern));
        }
    }
}

/// (o) The plan states what an executor needs: every bind typed, every read its partitions,
/// result columns and consistency, every write its batch and consistency, no read both
/// unsupported and mapped, every read and write the name of its function.
pub fn contract(design: &Design, out: &mut Vec<Violation>) {
    function_names(design, out);
    for q in design.queries.iter().filter(|q| !q.one_off) {
        typed_reads(design, q, out);
        match (&q.cql, &q.unsupported) {
            (Some(_), Some(why)) => v(
                out,
                "o",
                format!("read {}: mapped to CQL and also unsupported ({why})", q.pattern),
            ),
            (Some(_), None) if q.partitions.is_none() || q.consistency.is_none() => v(
                out,
                "o",
                format!(
                    "read {}: the plan does not state which partitions it reads or at which consistency level",
                    q.pattern
                ),
            ),
            _ => {}
        }
    }
    for w in design
        .writes
        .iter()
        .filter(|w| !w.one_off && !w.targets.is_empty())
    {
        let statements = w.targets.iter().map(|t| (&t.table, &t.binds));
        let reads = w
            .read_before_write
            .iter()
            .filter(|r| !r.cql.is_empty())
            .map(|r| (&r.table, &r.binds));
        for (table, binds) in statements.chain(reads) {
            for b in binds {
                if let Some(why) = mistyped(design, table, b) {
                    v(out, "o", format!("write {}: bind {b} is {why}", w.pattern));
                }
            }
        }
        if w.batch.is_none() || w.consistency.is_none() {
            v(
                out,
                "o",
                format!(
                    "write {}: the plan does not state how its statements are batched or at which consistency level",
                    w.pattern
                ),
            );
        }
    }
}

/// (o) Every read and write that is not one-off names its function, a snake_case identifier no
/// other read or write takes: a generated access layer and the report use these names as given.
fn function_names(design: &Design, out: &mut Vec<Violation>) {
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let reads = design.queries.iter().filter(|q| !q.one_off);
    let reads = reads.map(|q| ("read", q.pattern.as_str(), q.function.as_deref()));
    let writes = design.writes.iter().filter(|w| !w.one_off);
    let writes = writes.map(|w| ("write", w.pattern.as_str(), w.function.as_deref()));
    for (what, pattern, function) in reads.chain(writes) {
        let Some(f) = function else {
            v(out, "o", format!("{what} {pattern}: no function name"));
            continue;
        };
        if remodel_model::text::snake(f) != f {
            v(
                out,
                "o",
                format!("{what} {pattern}: function name `{f}` is not a snake_case identifier"),
            );
        }
        if let Some(other) = seen.insert(f, pattern) {
            v(
                out,
                "o",
                format!("{what} {pattern}: function name `{f}` is also {other}'s"),
            );
        }
    }
}
