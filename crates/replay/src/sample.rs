//! Parameter sets drawn from the source's real rows.
//!
//! Each `$n` of a pattern gets a role from what the analyzer recorded: the value of an equality
//! column (taken from a real row), several values for a collapsed `IN` list, a range bound (a real
//! value, so inclusive and exclusive bounds both meet a row on the boundary; with both bounds,
//! the values of two real rows, or the time window the workload uses aligned on a real row), the
//! LIMIT the workload uses, an OFFSET (0 and the example's), the example's constant, or, for a
//! write, the row written (its key) and its new values (another row's, so foreign keys stay
//! valid; fresh ones for key and unique columns; NULL one sample in four where the column may
//! hold it).
//!
//! The real rows ("anchors") are drawn in Postgres: rows of the pattern's tables joined along
//! its join path, in a random order fixed by the seed, and every parameter is computed there
//! and cast to the type Postgres gives the parameter. A [`Focus`] narrows the anchors to rows a
//! write just changed, as they are after it or as they were before it.

use crate::clock::clocked;
use crate::exec::Prepared;
use crate::pg::{read_params, type_name, Params};
use crate::Error;
use remodel_model::ident::quote;
use remodel_model::pgtype;
use remodel_model::{ColumnRef, Schema, StatementKind, TimeWindow};
use std::collections::BTreeSet;
use tokio_postgres::Client;

/// How one parameter gets its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A real value of the column.
    Value(ColumnRef),
    /// Real values of the column (an `IN` list).
    List(ColumnRef),
    /// A lone range bound: the anchor's value or another row's.
    Bound(ColumnRef),
    /// The lower bound of a range with both bounds.
    Lower(ColumnRef, Option<TimeWindow>),
    /// The upper bound of a range with both bounds.
    Upper(ColumnRef, Option<TimeWindow>),
    /// A constant SQL expression (the example's literal).
    Const(String),
    /// A LIMIT: the one the workload uses, or a boundary (see [`adversarial_expr`]).
    Limit(String),
    /// An OFFSET: 0, or the given one.
    Offset(String),
    /// An inserted row's foreign-key column: the referenced column of a parent row drawn for
    /// the sample (one parent for all the key's columns; one no row references yet when the
    /// key is the whole primary key).
    Parent {
        /// Index of the foreign key among the written table's.
        fk: usize,
        /// The referenced column.
        column: String,
    },
    /// Another row's value of the column: the row an `UPDATE … FROM` joins besides the written
    /// one (`… FROM accounts s WHERE accounts.id = $1 AND s.id = $2` draws `$1 <> $2`).
    Other(ColumnRef),
    /// A write's condition on a column besides the one that finds its rows (`AND version = $3`):
    /// the anchor's value or another row's, so some samples meet rows the condition leaves alone.
    Either(ColumnRef),
    /// A parameter the application feeds into its own computation of the column's value
    /// (`conversation_id = md5($2 || $1)::uuid`): a computation cannot be inverted, so a made-up
    /// value (the read finds no row on either side) — except in the reads after a write that
    /// computed the same value, which take that write's parameters ([`from_write`]). Each
    /// parameter `k` of it takes another value, so a computation that swaps its arguments shows.
    Computed(ColumnRef, usize),
    /// The value a lookup column (`lower_email`, [`remodel_model::Lookup`]) is compared with a
    /// function of (`lower($1)`): the looked-up column's value, its case or spacing changed in
    /// the adversarial samples, so a plan that compares it as written shows.
    Folded(ColumnRef),
    /// A new value of a written column: another row's, or a fresh one for a key.
    New {
        /// The column.
        column: ColumnRef,
        /// A value no row has yet (a key or unique column).
        fresh: bool,
    },
}

/// Rows a write changed: anchors are drawn among them, as they are now or as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    /// The written source table.
    pub table: String,
    /// The rows, a JSON array of objects (column → value).
    pub rows: String,
    /// True: the rows as they were before the write stand in for the table's.
    pub before: bool,
    /// For a read whose rows hold the written rows folded in (a collection of children): the
    /// written rows' column and the read's column equal to it (the children's foreign key, the
    /// parent's key). Anchors are the parents of the written rows, which the write leaves as
    /// they are.
    pub link: Option<(ColumnRef, ColumnRef)>,
}

/// The LIMIT used when the workload gives none.
pub const DEFAULT_LIMIT: u64 = 10;

/// True when `sql` holds placeholder `$k` (not `$k0…`).
fn mentions(sql: &str, k: usize) -> bool {
    let tag = format!("${k}");
    sql.match_indices(&tag).any(|(i, _)| {
        !sql[i + tag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

fn exact(sql: &str, k: usize) -> bool {
    let t = sql
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    t == format!("${k}")
}

/// True when `e` is `c IN ($k)`: parameter `k` is the whole list (`= ANY($k)`, `= ANY($k::int[])`).
fn list_param(e: Option<&remodel_model::Expr>, k: usize) -> bool {
    matches!(
        e,
        Some(remodel_model::Expr::InList { list, .. })
            if matches!(list.as_slice(), [remodel_model::Expr::Param { n }] if *n as usize == k)
    )
}

/// The table a write pattern writes (`None` for a read).
fn written_table<'s>(p: &Prepared<'_>, schema: &'s Schema) -> Option<&'s remodel_model::Table> {
    schema.table(&p.pattern.analysis.write.as_ref()?.table)
}

/// The role of `$k` when a write sets a column with it.
fn write_role(p: &Prepared<'_>, schema: &Schema, k: usize) -> Option<Role> {
    let w = p.pattern.analysis.write.as_ref()?;
    let t = schema.table(&w.table);
    let v = w.values.iter().find(|v| mentions(&v.sql, k))?;
    if matches!(&v.expr, Some(remodel_model::Expr::Computed { params, .. }) if params.contains(&(k as u32)))
    {
        return Some(Role::Computed(ColumnRef::new(&w.table, &v.column), k));
    }
    if !exact(&v.sql, k) {
        // A term of an expression (`s_ytd + $2`): a small one keeps the sum in range.
        return Some(Role::Const("1".into()));
    }
    // A foreign-key column takes a parent row's value (for an UPDATE, a parent that agrees
    // with the row's other columns of the same key).
    let parent = t.and_then(|t| {
        t.foreign_keys.iter().enumerate().find_map(|(i, f)| {
            let at = f.columns.iter().position(|c| *c == v.column)?;
            Some(Role::Parent {
                fk: i,
                column: f.ref_columns.get(at)?.clone(),
            })
        })
    });
    let is_key = t.is_some_and(|t| {
        t.primary_key.contains(&v.column)
            || t.unique_keys
                .iter()
                .any(|u| u.columns.len() == 1 && u.columns[0] == v.column)
    });
    Some(parent.unwrap_or(Role::New {
        column: ColumnRef::new(&w.table, &v.column),
        fresh: is_key,
    }))
}

/// The role of `$k` when a condition of the statement compares a column with it.
fn condition_role(a: &remodel_model::PatternAnalysis, k: usize) -> Option<Role> {
    let eq = a.equality.iter().find_map(|e| {
        let v = e.value.as_deref()?;
        match e.op {
            remodel_model::EqualityOp::Eq if exact(v, k) => Some(Role::Value(e.column.clone())),
            remodel_model::EqualityOp::In if exact(v, k) || list_param(e.expr.as_ref(), k) => {
                Some(Role::List(e.column.clone()))
            }
            _ => None,
        }
    });
    eq.or_else(|| {
        a.ranges.iter().find_map(|r| {
            let lo = r.lower.as_ref().filter(|b| exact(&b.value, k));
            let hi = r.upper.as_ref().filter(|b| exact(&b.value, k));
            let both = r.lower.is_some() && r.upper.is_some();
            match (lo, hi, both) {
                (Some(_), _, true) => Some(Role::Lower(r.column.clone(), r.window)),
                (_, Some(_), true) => Some(Role::Upper(r.column.clone(), r.window)),
                (Some(_), _, false) | (_, Some(_), false) => Some(Role::Bound(r.column.clone())),
                _ => None,
            }
        })
    })
}

/// The role of each parameter of `p`, or why one has none; a write's conditions are drawn to
/// meet the rows it must leave alone too ([`write_conditions`]).
pub fn roles(p: &Prepared<'_>, schema: &Schema) -> Result<Vec<Role>, String> {
    let mut roles = plain_roles(p, schema)?;
    write_conditions(p, schema, &mut roles);
    Ok(roles)
}

/// The role of `$k` when it finds a row an `UPDATE … FROM` joins (`s.id = $k`).
fn from_row_role(a: &remodel_model::PatternAnalysis, k: usize) -> Option<Role> {
    a.write.as_ref()?.from_rows.iter().find_map(|f| {
        f.equality.iter().find_map(|(c, e)| {
            matches!(e, remodel_model::Expr::Param { n } if *n as usize == k)
                .then(|| Role::Other(ColumnRef::new(&f.table, c)))
        })
    })
}

/// For an UPDATE or DELETE: the conditions besides the one that finds its rows take another
/// row's value half the time (a later `=` on the column an earlier one binds, a self-join's
/// other row, always), so replay meets rows the statement must leave alone.
fn write_conditions(p: &Prepared<'_>, schema: &Schema, roles: &mut [Role]) {
    if !matches!(
        p.pattern.kind,
        StatementKind::Update | StatementKind::Delete
    ) {
        return;
    }
    let Some(t) = written_table(p, schema) else {
        return;
    };
    let own = |c: &ColumnRef| c.table == t.name;
    // The condition that finds the rows: on the primary key when one is, else the first.
    let locator = roles
        .iter()
        .position(|r| matches!(r, Role::Value(c) if own(c) && t.primary_key.contains(&c.column)))
        .or_else(|| {
            roles
                .iter()
                .position(|r| matches!(r, Role::Value(c) if own(c)))
        });
    let mut seen: Vec<ColumnRef> = Vec::new();
    for (i, r) in roles.iter_mut().enumerate() {
        let Role::Value(c) = r else { continue };
        if seen.contains(c) {
            *r = Role::Other(c.clone());
        } else if own(c) && Some(i) != locator {
            seen.push(c.clone());
            *r = Role::Either(c.clone());
        } else {
            seen.push(c.clone());
        }
    }
}

fn plain_roles(p: &Prepared<'_>, schema: &Schema) -> Result<Vec<Role>, String> {
    let a = &p.pattern.analysis;
    let examples = p
        .pattern
        .example
        .as_deref()
        .and_then(|e| remodel_sql::normalize::example_values(e).ok())
        .unwrap_or_default();
    let example = |k: usize| examples.get(k - 1).cloned().flatten();
    (1..=p.param_types.len())
        .map(|k| {
            write_role(p, schema, k)
                .or_else(|| from_row_role(a, k))
                .or_else(|| condition_role(a, k))
                .or_else(|| folded_role(schema, a, k))
                .or_else(|| {
                    let limit = a.limit_sql.as_deref().is_some_and(|l| exact(l, k));
                    limit.then(|| Role::Limit(a.limit.unwrap_or(DEFAULT_LIMIT).to_string()))
                })
                .or_else(|| {
                    let offset = a.offset_sql.as_deref().is_some_and(|o| exact(o, k));
                    offset.then(|| Role::Offset(example(k).unwrap_or_else(|| "3".into())))
                })
                .or_else(|| example(k).map(Role::Const))
                .or_else(|| computed_role(a, k))
                .or_else(|| row_role(a, k))
                .or_else(|| {
                    a.residual.iter().find_map(|r| match r.columns.as_slice() {
                        [c] if mentions(&r.sql, k) => Some(Role::Value(c.clone())),
                        _ => None,
                    })
                })
                .ok_or_else(|| {
                    format!(
                        "${k} is neither a column's value, a bound, a LIMIT nor a constant of the example"
                    )
                })
        })
        .collect()
}

fn column_of(r: &Role) -> Option<&ColumnRef> {
    match r {
        Role::Value(c)
        | Role::List(c)
        | Role::Bound(c)
        | Role::Lower(c, _)
        | Role::Upper(c, _)
        | Role::Other(c)
        | Role::Either(c)
        | Role::Folded(c)
        // Its rows are the anchors (the written ones after a write), though no value is read.
        | Role::Computed(c, _) => Some(c),
        Role::New { column, .. } => Some(column),
        Role::Const(_) | Role::Limit(_) | Role::Offset(_) | Role::Parent { .. } => None,
    }
}

/// The role of `$k` when it is an argument of an application-computed value a column is
/// compared with.
fn computed_role(a: &remodel_model::PatternAnalysis, k: usize) -> Option<Role> {
    a.equality.iter().find_map(|e| match &e.expr {
        Some(remodel_model::Expr::Computed { params, .. }) if params.contains(&(k as u32)) => {
            Some(Role::Computed(e.column.clone(), k))
        }
        _ => None,
    })
}

/// The role of `$k` when a lookup column is compared with a function of it (`lower_email =
/// lower($k)`): the looked-up column's values.
fn folded_role(schema: &Schema, a: &remodel_model::PatternAnalysis, k: usize) -> Option<Role> {
    use remodel_model::Expr;
    a.equality.iter().find_map(|e| {
        let lookup = schema
            .table(&e.column.table)?
            .column(&e.column.column)?
            .lookup
            .as_ref()?;
        let Some(Expr::Call { args, .. }) = &e.expr else {
            return None;
        };
        let param = match args.as_slice() {
            [Expr::Param { n }] => *n,
            [Expr::Cast { arg, .. }] => match arg.as_ref() {
                Expr::Param { n } => *n,
                _ => return None,
            },
            _ => return None,
        };
        (param as usize == k).then(|| Role::Folded(ColumnRef::new(&e.column.table, &lookup.column)))
    })
}

/// The role of `$k` in a row comparison (`(created_at, id) < ($2, $3)`, a keyset page): the value
/// of the column in its place, all from one anchor row (the page after a row there is).
fn row_role(a: &remodel_model::PatternAnalysis, k: usize) -> Option<Role> {
    use remodel_model::Expr;
    a.residual.iter().find_map(|r| {
        let Some(Expr::Binary { left, right, .. }) = &r.expr else {
            return None;
        };
        let (Expr::Row { items: l }, Expr::Row { items: v }) = (left.as_ref(), right.as_ref())
        else {
            return None;
        };
        [(l, v), (v, l)].into_iter().find_map(|(cols, vals)| {
            let at = vals
                .iter()
                .position(|x| matches!(x, Expr::Param { n } if *n as usize == k))?;
            match cols.get(at) {
                Some(Expr::Column { column, .. }) => Some(Role::Value(column.clone())),
                _ => None,
            }
        })
    })
}

/// `sql` with its placeholders numbered by first use (`md5($3 || $2)` → `md5($1 || $2)`): two
/// computations are the same when these are equal.
fn canonical(sql: &str, params: &[u32]) -> String {
    let mut out = sql.to_string();
    // Highest first, so `$1` is not replaced inside `$12`; through a marker, so a renumbered
    // placeholder is not renumbered again.
    let mut order: Vec<(usize, u32)> = params.iter().copied().enumerate().collect();
    order.sort_by_key(|o| std::cmp::Reverse(o.1));
    for (i, n) in &order {
        out = out.replace(&format!("${n}"), &format!("$\u{1}{}", i + 1));
    }
    out.replace("$\u{1}", "$")
}

/// For a read run after write `w` (with `wp`): every parameter of an application-computed value
/// the read compares a column with takes the write's parameter in the same place, when the
/// write computed the column's value the same way — so the read looks for the row the write
/// wrote (a computation cannot be inverted from the row).
pub fn from_write(read: &Prepared<'_>, params: &mut Params, w: &Prepared<'_>, wp: &Params) {
    use remodel_model::Expr;
    let Some(write) = &w.pattern.analysis.write else {
        return;
    };
    for e in &read.pattern.analysis.equality {
        let Some(Expr::Computed {
            sql, params: rps, ..
        }) = &e.expr
        else {
            continue;
        };
        let written = write
            .values
            .iter()
            .filter(|v| e.column.table == write.table && v.column == e.column.column)
            .find_map(|v| match &v.expr {
                Some(Expr::Computed {
                    sql: wsql,
                    params: wps,
                    ..
                }) if canonical(wsql, wps) == canonical(sql, rps) => Some(wps),
                _ => None,
            });
        let Some(wps) = written else { continue };
        for (r, w) in rps.iter().zip(wps) {
            let (r, w) = (*r as usize - 1, *w as usize - 1);
            if r < params.values.len() && w < wp.values.len() {
                params.values[r] = wp.values[w].clone();
                params.text[r] = wp.text[w].clone();
            }
        }
    }
}

fn window_unit(w: TimeWindow) -> &'static str {
    match w {
        TimeWindow::Hour => "hour",
        TimeWindow::Day => "day",
        TimeWindow::Week => "week",
        TimeWindow::Month => "month",
        TimeWindow::Year => "year",
    }
}

/// The FROM clause of the anchors: the tables the roles read, and the tables the pattern joins
/// them with, along its join path.
fn anchor_from(p: &Prepared<'_>, needed: &BTreeSet<String>) -> String {
    let a = &p.pattern.analysis;
    let mut tables: Vec<String> = needed.iter().cloned().collect();
    if tables.len() > 1 || a.write.is_none() {
        for j in &a.join_path {
            if j.left_table != j.right_table && tables.len() > 1 {
                for t in [&j.left_table, &j.right_table] {
                    if !tables.contains(t) {
                        tables.push(t.clone());
                    }
                }
            }
        }
    }
    let Some(first) = tables.first() else {
        return String::new();
    };
    let mut from = quote(first);
    let mut joined = vec![first.clone()];
    let mut pending: Vec<&remodel_model::JoinStep> = a
        .join_path
        .iter()
        .filter(|j| {
            j.left_table != j.right_table
                && tables.contains(&j.left_table)
                && tables.contains(&j.right_table)
        })
        .collect();
    let cond = |j: &remodel_model::JoinStep| -> String {
        let parts: Vec<String> = j
            .left_columns
            .iter()
            .zip(&j.right_columns)
            .map(|(l, r)| {
                format!(
                    "{}.{} = {}.{}",
                    quote(&j.left_table),
                    quote(l),
                    quote(&j.right_table),
                    quote(r)
                )
            })
            .collect();
        parts.join(" AND ")
    };
    while !pending.is_empty() {
        let Some(i) = pending
            .iter()
            .position(|j| joined.contains(&j.left_table) || joined.contains(&j.right_table))
        else {
            break;
        };
        let j = pending.remove(i);
        let other = if joined.contains(&j.left_table) {
            &j.right_table
        } else {
            &j.left_table
        };
        if joined.contains(other) {
            from.push_str(&format!(" AND {}", cond(j)));
        } else {
            from.push_str(&format!(" JOIN {} ON {}", quote(other), cond(j)));
            joined.push(other.clone());
        }
    }
    for t in &tables {
        if !joined.contains(t) {
            from.push_str(&format!(" CROSS JOIN {}", quote(t)));
            joined.push(t.clone());
        }
    }
    from
}

/// The SQL of one parameter's value, from the anchor rows `a1` (the sample's) and `a2` (another
/// one); `col` names an anchor column.
fn param_expr(
    role: &Role,
    schema: &Schema,
    seed: u64,
    col: &dyn Fn(&ColumnRef, &str) -> String,
) -> String {
    match role {
        Role::Value(c) => col(c, "a1"),
        Role::List(c) => format!("ARRAY[{}, {}]", col(c, "a1"), col(c, "a2")),
        Role::Bound(c) | Role::Either(c) => format!(
            "CASE WHEN a1.__n % 2 = 1 THEN {} ELSE {} END",
            col(c, "a1"),
            col(c, "a2")
        ),
        Role::Other(c) => col(c, "a2"),
        Role::Lower(c, Some(w)) => format!("date_trunc('{}', {})", window_unit(*w), col(c, "a1")),
        Role::Upper(c, Some(w)) => format!(
            "date_trunc('{u}', {}) + interval '1 {u}'",
            col(c, "a1"),
            u = window_unit(*w)
        ),
        Role::Lower(c, None) => format!("LEAST({}, {})", col(c, "a1"), col(c, "a2")),
        Role::Upper(c, None) => format!("GREATEST({}, {})", col(c, "a1"), col(c, "a2")),
        Role::Const(sql) | Role::Limit(sql) => format!("({sql})"),
        Role::Offset(sql) => format!("CASE WHEN a1.__n % 2 = 1 THEN 0 ELSE ({sql}) END"),
        Role::New {
            column,
            fresh: false,
        } => col(column, "a2"),
        Role::New {
            column,
            fresh: true,
        } => fresh(schema, column, &col(column, "a2"), seed),
        Role::Parent { fk, column } => format!("fk{fk}.{}", quote(column)),
        Role::Computed(_, k) => format!("(a1.__n * 1000 + {k} + {})", seed % 1000),
        Role::Folded(c) => col(c, "a1"),
    }
}

/// How many samples one turn of the adversarial variants takes: sample `n` plays variant
/// `n % VARIANTS` of its parameter's role (sample 1, and every fourth after it, is the typical
/// one).
pub const VARIANTS: u64 = 4;

/// The SQL type of a source column as the schema declares it (lower case, no length).
fn declared_type(schema: &Schema, c: &ColumnRef) -> String {
    schema
        .table(&c.table)
        .and_then(|t| t.column(&c.column))
        .map(|col| col.sql_type.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The variant in which a write sets its nullable columns to NULL: not the one in which a
/// condition on a nullable column takes NULL (that write would change no row).
const NULL_VARIANT: u64 = 2;

/// True when `role` gives a value to a column of the written row that may be NULL.
fn writes_nullable(p: &Prepared<'_>, schema: &Schema, role: &Role) -> bool {
    match role {
        Role::New { column, .. } => nullable(schema, column),
        Role::Parent { fk, column } => {
            let Some(t) = written_table(p, schema) else {
                return false;
            };
            t.foreign_keys.get(*fk).is_some_and(|f| {
                f.ref_columns
                    .iter()
                    .position(|r| r == column)
                    .and_then(|at| f.columns.get(at))
                    .is_some_and(|c| nullable(schema, &ColumnRef::new(&t.name, c)))
            })
        }
        _ => false,
    }
}

fn nullable(schema: &Schema, c: &ColumnRef) -> bool {
    schema
        .table(&c.table)
        .and_then(|t| t.column(&c.column))
        .is_some_and(|col| col.nullable)
}

/// True for an instant (`timestamptz`): its windows are cut in a time zone.
fn is_instant(ty: &str) -> bool {
    ty.starts_with("timestamptz") || ty.starts_with("timestamp with time zone")
}

fn is_time(ty: &str) -> bool {
    ty.starts_with("timestamp") || ty == "date"
}

/// `CASE a1.__n % VARIANTS WHEN 1 THEN … END` over the variants, the first being the typical
/// value.
fn by_variant(variants: [String; VARIANTS as usize]) -> String {
    let [typical, second, third, fourth] = variants;
    format!(
        "CASE a1.__n % {VARIANTS} WHEN 1 THEN {typical} WHEN 2 THEN {second} WHEN 3 THEN {third} ELSE {fourth} END"
    )
}

/// The adversarial values of a parameter, by sample (`None`: the role has none, see
/// [`param_expr`]). They attack what a plan may assume of its parameters:
///
/// - a time window (`>= $2 AND < $3` over a unit `w`): aligned on the unit in the session's
///   time zone (`'2025-01-15'` meaning local midnight, the typical case); centred on the unit's
///   boundary nearest the anchor in UTC, then in the session's zone (the window crosses a bucket
///   boundary: `20:00 → 04:00`); three units long (several buckets). A range without a fixed
///   window gets the same crossing windows a day wide.
/// - `LIMIT $n`: the workload's, 0, 1 (and the read's exact size, set after drawing by
///   [`exact_limits`]).
/// - `IN ($n)`: two values, one value twice, a NULL beside two values.
/// - `c = $n`, `c > $n` on a nullable column: NULL one sample in four.
///
/// Besides these, a write's value of a nullable column is NULL one sample in four
/// ([`NULL_VARIANT`]).
pub fn adversarial_expr(
    role: &Role,
    schema: &Schema,
    col: &dyn Fn(&ColumnRef, &str) -> String,
) -> Option<String> {
    match role {
        Role::Lower(c, w) | Role::Upper(c, w) if is_time(&declared_type(schema, c)) => {
            let upper = matches!(role, Role::Upper(..));
            Some(window_variants(
                c,
                *w,
                upper,
                &declared_type(schema, c),
                col,
            ))
        }
        Role::Limit(sql) => Some(by_variant([
            format!("({sql})"),
            "0".into(),
            "1".into(),
            format!("({sql})"),
        ])),
        Role::List(c) => {
            let (a, b) = (col(c, "a1"), col(c, "a2"));
            let null = if nullable(schema, c) {
                "NULL"
            } else {
                b.as_str()
            };
            Some(by_variant([
                format!("ARRAY[{a}, {b}]"),
                format!("ARRAY[{a}, {a}, {b}]"),
                format!("ARRAY[{a}, {null}, {b}]"),
                format!("ARRAY[{b}, {a}, {b}]"),
            ]))
        }
        Role::Folded(c) => {
            let v = format!("({})::text", col(c, "a1"));
            Some(by_variant([
                v.clone(),
                format!("upper({v})"),
                format!("initcap({v})"),
                format!("(' ' || {v})"),
            ]))
        }
        Role::Value(c) if nullable(schema, c) => {
            let v = col(c, "a1");
            Some(by_variant([v.clone(), v.clone(), v, "NULL".into()]))
        }
        _ => None,
    }
}

/// One bound of a time window, by variant (see [`adversarial_expr`]).
fn window_variants(
    c: &ColumnRef,
    w: Option<TimeWindow>,
    upper: bool,
    ty: &str,
    col: &dyn Fn(&ColumnRef, &str) -> String,
) -> String {
    let a = col(c, "a1");
    let unit = w.map_or("day", window_unit);
    let one = format!("interval '1 {unit}'");
    // A third of the unit either side of a boundary: 16:00 → 08:00 for a day.
    let third = format!("({one} / 3)");
    // The boundary nearest the anchor, in UTC (instants only) and in the session's zone.
    let utc = if is_instant(ty) {
        format!("(date_trunc('{unit}', ({a}) AT TIME ZONE 'UTC' + {one} / 2) AT TIME ZONE 'UTC')")
    } else {
        format!("date_trunc('{unit}', ({a}) + {one} / 2)")
    };
    let local = format!("date_trunc('{unit}', ({a}) + {one} / 2)");
    let start = format!("date_trunc('{unit}', {a})");
    let around = |b: &str| {
        if upper {
            format!("({b} + {third})")
        } else {
            format!("({b} - {third})")
        }
    };
    let typical = match (w, upper) {
        (Some(_), false) => start.clone(),
        (Some(_), true) => format!("({start} + {one})"),
        (None, false) => format!("LEAST({a}, {})", col(c, "a2")),
        (None, true) => format!("GREATEST({a}, {})", col(c, "a2")),
    };
    let several = if upper {
        format!("({start} + 2 * {one})")
    } else {
        format!("({start} - {one})")
    };
    by_variant([typical, around(&utc), around(&local), several])
}

/// Sets the LIMIT of every [`VARIANTS`]-th sample (those whose adversarial LIMIT is the
/// workload's again) to exactly the number of rows the read returns without it: the size of the
/// partition, or of the partitions, it reads.
pub async fn exact_limits(
    client: &Client,
    p: &Prepared<'_>,
    schema: &Schema,
    params: &mut [Params],
) -> Result<(), Error> {
    let roles = roles(p, schema).map_err(Error::Plan)?;
    let Some(k) = roles.iter().position(|r| matches!(r, Role::Limit(_))) else {
        return Ok(());
    };
    let Some(full) = p.forms.full.as_deref() else {
        return Ok(());
    };
    for (i, set) in params.iter_mut().enumerate() {
        if !(i as u64 + 1).is_multiple_of(VARIANTS) {
            continue;
        }
        let typed = crate::exec::typed(set);
        let count = format!("SELECT count(*) FROM ({full}) AS __all");
        // A sample Postgres refuses keeps its LIMIT: comparing it will say so.
        let Ok(row) = client.query_typed(&count, &typed).await else {
            continue;
        };
        let size: i64 = row.first().map_or(0, |r| r.get(0));
        let mut texts: Vec<Option<String>> = set
            .text
            .iter()
            .zip(&set.values)
            .map(|(t, v)| v.raw.as_ref().map(|_| t.clone()))
            .collect();
        texts[k] = Some(size.to_string());
        let refs: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
        *set = Params::from_text(client, &set.types(), &refs).await?;
    }
    Ok(())
}

/// The pattern's conditions without parameters (`x IS NULL`, `status = 'open'`), which the
/// anchors must meet to be rows the pattern can return, and `IS NOT NULL` for each column a
/// value is compared with (an application passing NULL to `=` gets no row).
fn fixed_conditions(p: &Prepared<'_>, roles: &[Role], from: &str) -> Vec<String> {
    if p.pattern.kind != StatementKind::Select {
        return Vec::new();
    }
    let compared = roles.iter().filter_map(|r| match r {
        Role::Value(c) | Role::List(c) | Role::Bound(c) | Role::Lower(c, _) | Role::Upper(c, _) => {
            Some(format!(
                "{}.{} IS NOT NULL",
                quote(&c.table),
                quote(&c.column)
            ))
        }
        _ => None,
    });
    p.pattern
        .analysis
        .equality
        .iter()
        .filter(|e| from.contains(&quote(&e.column.table)))
        .filter_map(|e| {
            let col = format!("{}.{}", quote(&e.column.table), quote(&e.column.column));
            match (e.op, e.value.as_deref()) {
                (remodel_model::EqualityOp::IsNull, _) => Some(format!("{col} IS NULL")),
                (remodel_model::EqualityOp::Eq, Some(v)) if !v.contains('$') => {
                    Some(format!("{col} = ({})", clocked(v)))
                }
                _ => None,
            }
        })
        .chain(compared)
        .collect()
}

/// The anchors narrowed to the rows a write changed: a CTE standing for the table (the rows as
/// they were) or a condition (the rows as they are), both reading the rows from `$1`.
async fn focus_clause(
    client: &Client,
    f: &Focus,
) -> Result<(Option<String>, Option<String>), Error> {
    // The row type by its schema: a bare name can be a type too (a table named `text`).
    let row_type: String = client
        .query_one(
            "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::text::regclass",
            &[&quote(&f.table)],
        )
        .await
        .map_err(Error::pg(format!("the row type of {}", f.table)))?
        .get(0);
    let rows = format!("json_populate_recordset(NULL::{row_type}, $1::text::json)");
    if let Some((child, parent)) = &f.link {
        let cond = format!(
            "EXISTS (SELECT 1 FROM {rows} AS __w WHERE __w.{} = {}.{})",
            quote(&child.column),
            quote(&parent.table),
            quote(&parent.column)
        );
        return Ok((None, Some(cond)));
    }
    Ok(if f.before {
        (
            Some(format!("{} AS (SELECT * FROM {rows})", quote(&f.table))),
            None,
        )
    } else {
        // The rows as they are now: every column equal (NULLs too), no key needed; compared by
        // their text forms (the same row type), as `xml`, `json` … have no equality operator.
        let cond = format!(
            "EXISTS (SELECT 1 FROM {rows} AS __w WHERE ROW(__w.*)::text = ROW({}.*)::text)",
            quote(&f.table)
        );
        (None, Some(cond))
    })
}

/// `__a`: `n + 1` distinct anchors (each sample its own values), in a random order that
/// depends on the values and the seed only, not on where Postgres keeps the rows: the same seed
/// draws the same anchors after any update or vacuum.
fn anchor_cte(
    cols: &[ColumnRef],
    from: &str,
    filter: &str,
    prefer: Option<&str>,
    seed: u64,
    n: usize,
) -> String {
    let anchors = if cols.is_empty() {
        "1 AS a0".to_string()
    } else {
        let col = |c: &ColumnRef| format!("{}.{}", quote(&c.table), quote(&c.column));
        let select: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{} AS a{i}", col(c)))
            .collect();
        // Distinct by the text forms: `xml`, `json`, `point` … have no equality operator.
        let text: Vec<String> = cols
            .iter()
            .map(|c| format!("({}::text COLLATE \"C\")", col(c)))
            .collect();
        format!("DISTINCT ON ({}) {}", text.join(", "), select.join(", "))
    };
    // One collation for the concatenation, whatever the columns' (an ICU one beside "C").
    let keyed: Vec<String> = (0..cols.len())
        .map(|i| format!("(d.a{i}::text COLLATE \"C\")"))
        .collect();
    let mut order = if keyed.is_empty() {
        "1".to_string()
    } else {
        format!("md5(concat_ws('|', {}, '{seed}'))", keyed.join(", "))
    };
    if let Some(p) = prefer {
        order = format!("{p} DESC, {order}");
    }
    format!(
        "__a AS (SELECT * FROM (SELECT {anchors} FROM {from}{filter}) d ORDER BY {order} LIMIT {})",
        n + 1
    )
}

/// Draws `n` parameter sets for pattern `p` (fewer when the tables hold fewer rows).
pub async fn draw(
    client: &Client,
    p: &Prepared<'_>,
    schema: &Schema,
    n: usize,
    seed: u64,
    focus: Option<&Focus>,
) -> Result<Vec<Params>, Error> {
    let roles = roles(p, schema).map_err(Error::Plan)?;
    if roles.is_empty() {
        return Ok(vec![Params::default(); n]);
    }
    let pinned = pinned(p, schema, &roles);
    let mut cols: Vec<ColumnRef> = roles.iter().filter_map(column_of).cloned().collect();
    cols.extend(pinned.iter().map(|(_, c, _)| c.clone()));
    cols.sort();
    cols.dedup();
    let needed: BTreeSet<String> = cols.iter().map(|c| c.table.clone()).collect();
    let at = |c: &ColumnRef| cols.iter().position(|x| x == c).unwrap_or(0);
    let col = |c: &ColumnRef, row: &str| format!("{row}.a{}", at(c));
    let exprs: Vec<String> = roles
        .iter()
        .zip(&p.param_types)
        .map(|(role, ty)| {
            let mut sql = adversarial_expr(role, schema, &col)
                .unwrap_or_else(|| param_expr(role, schema, seed, &col));
            if writes_nullable(p, schema, role) {
                // The NULL an application writes into a column that may hold one: copies keyed,
                // filtered or grouped by it must take it as Postgres does.
                sql = format!(
                    "CASE WHEN a1.__n % {VARIANTS} = {NULL_VARIANT} THEN NULL ELSE {sql} END"
                );
            }
            format!("({sql})::{}", type_name(ty))
        })
        .collect();
    let texts: Vec<String> = exprs.iter().map(|e| format!("({e})::text")).collect();
    let from = if cols.is_empty() {
        format!("generate_series(1, {}) AS one(i)", n + 1)
    } else {
        anchor_from(p, &needed)
    };
    let mut with = Vec::new();
    let mut conds = Vec::new();
    if let Some(f) = focus {
        // The table the anchors are found in: the written one, or the parent it links to.
        let anchored = f
            .link
            .as_ref()
            .map_or(&f.table, |(_, parent)| &parent.table);
        if !needed.contains(anchored) && !from.contains(&quote(anchored)) {
            return Ok(Vec::new());
        }
        let (cte, cond) = focus_clause(client, f).await?;
        with.extend(cte);
        conds.extend(cond);
    }
    if !cols.is_empty() {
        conds.extend(fixed_conditions(p, &roles, &from));
    }
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    let prefer = split_groups(p, schema, &roles, &cols);
    with.push(anchor_cte(
        &cols,
        &from,
        &filter,
        prefer.as_deref(),
        seed,
        n,
    ));
    with.push("__s AS (SELECT row_number() OVER () AS __n, * FROM __a)".into());
    let pins: Vec<(usize, String, String)> = pinned
        .iter()
        .map(|(fk, c, r)| (*fk, r.clone(), col(c, "a1")))
        .collect();
    let parents = parent_joins(p, schema, &roles, &pins, seed);
    let sql = format!(
        "WITH {} SELECT {}, {} FROM __s a1 JOIN __s a2 ON a2.__n = a1.__n % (SELECT count(*) FROM __s) + 1 \
         {parents} WHERE a1.__n <= {n} ORDER BY a1.__n",
        with.join(", "),
        exprs.join(", "),
        texts.join(", ")
    );
    let rows = match focus {
        Some(f) => client.query(&sql, &[&f.rows]).await,
        None => client.query(&sql, &[]).await,
    }
    .map_err(Error::pg(format!(
        "{}: draw parameters with `{sql}`",
        p.pattern.id
    )))?;
    rows.iter()
        .map(|r| read_params(r, 0, roles.len()))
        .collect()
}

/// For an UPDATE or DELETE with conditions besides the one that finds its rows: an order that
/// puts first the anchors whose rows the conditions split — rows sharing the found value that
/// the statement's fixed conditions (`revoked_at IS NULL`) keep and rows they leave alone, then
/// rows sharing it at all — so a write path that drops a condition changes rows it must not.
fn split_groups(
    p: &Prepared<'_>,
    schema: &Schema,
    roles: &[Role],
    cols: &[ColumnRef],
) -> Option<String> {
    if !matches!(
        p.pattern.kind,
        StatementKind::Update | StatementKind::Delete
    ) {
        return None;
    }
    let a = &p.pattern.analysis;
    let t = schema.table(&a.write.as_ref()?.table)?;
    let at = |c: &ColumnRef| cols.iter().position(|x| x == c);
    let found: Vec<String> = roles
        .iter()
        .filter_map(|r| match r {
            Role::Value(c) if c.table == t.name => {
                Some(format!("x.{} = d.a{}", quote(&c.column), at(c)?))
            }
            _ => None,
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let fixed: Vec<String> = a
        .equality
        .iter()
        .filter(|e| e.column.table == t.name)
        .filter_map(|e| match (e.op, e.value.as_deref()) {
            (remodel_model::EqualityOp::IsNull, _) => {
                Some(format!("x.{} IS NULL", quote(&e.column.column)))
            }
            (remodel_model::EqualityOp::Eq, Some(v)) if !v.contains('$') => {
                Some(format!("x.{} = ({})", quote(&e.column.column), clocked(v)))
            }
            _ => None,
        })
        .collect();
    let group = format!("FROM {} x WHERE {}", quote(&t.name), found.join(" AND "));
    let several = format!("((SELECT count(*) {group}) > 1)::int");
    if fixed.is_empty() {
        return Some(several);
    }
    let keep = fixed.join(" AND ");
    Some(format!(
        "(EXISTS (SELECT 1 {group} AND {keep}) AND EXISTS (SELECT 1 {group} AND NOT coalesce({keep}, false)))::int * 2 + {several}"
    ))
}

/// For an UPDATE that sets some columns of a foreign key: the key's other columns (foreign key
/// index, the column, the referenced column), which the parent drawn must agree with.
fn pinned(p: &Prepared<'_>, schema: &Schema, roles: &[Role]) -> Vec<(usize, ColumnRef, String)> {
    let Some(t) = written_table(p, schema).filter(|_| p.pattern.kind == StatementKind::Update)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, f) in t.foreign_keys.iter().enumerate() {
        let set: Vec<&String> = roles
            .iter()
            .filter_map(|r| match r {
                Role::Parent { fk, column } if *fk == i => Some(column),
                _ => None,
            })
            .collect();
        if set.is_empty() {
            continue;
        }
        for (c, r) in f.columns.iter().zip(&f.ref_columns) {
            if !set.contains(&r) {
                out.push((i, ColumnRef::new(&t.name, c), r.clone()));
            }
        }
    }
    out
}

/// For the foreign keys a write sets: a parent row per sample (`fk<i>`), agreeing with the
/// `pins` (foreign key, referenced column, the row's value); for an INSERT, one no row of the
/// written table references yet when that key's columns hold its whole primary key.
fn parent_joins(
    p: &Prepared<'_>,
    schema: &Schema,
    roles: &[Role],
    pins: &[(usize, String, String)],
    seed: u64,
) -> String {
    let Some(t) = written_table(p, schema) else {
        return String::new();
    };
    let mut used: Vec<usize> = roles
        .iter()
        .filter_map(|r| match r {
            Role::Parent { fk, .. } => Some(*fk),
            _ => None,
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut out = String::new();
    for i in used {
        let Some(f) = t.foreign_keys.get(i) else {
            continue;
        };
        let Some(parent) = schema.table(&f.ref_table) else {
            continue;
        };
        let refs: Vec<String> = f
            .ref_columns
            .iter()
            .map(|c| format!("p.{}", quote(c)))
            .collect();
        let order: Vec<String> = refs
            .iter()
            .map(|r| format!("({r}::text COLLATE \"C\")"))
            .collect();
        let whole_key = p.pattern.kind == StatementKind::Insert
            && !t.primary_key.is_empty()
            && t.primary_key.iter().all(|k| f.columns.contains(k));
        let agree: Vec<String> = pins
            .iter()
            .filter(|(fk, _, _)| *fk == i)
            .map(|(_, r, v)| format!("p.{} = {v}", quote(r)))
            .collect();
        let unused = if !agree.is_empty() {
            format!(" WHERE {}", agree.join(" AND "))
        } else if whole_key {
            let same: Vec<String> = f
                .columns
                .iter()
                .zip(&f.ref_columns)
                .map(|(c, r)| format!("c.{} = p.{}", quote(c), quote(r)))
                .collect();
            format!(
                " WHERE NOT EXISTS (SELECT 1 FROM {} c WHERE {})",
                quote(&t.name),
                same.join(" AND ")
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "LEFT JOIN LATERAL (SELECT {} FROM {} p{unused} ORDER BY md5(concat_ws('-', {}, a1.__n, {seed})) LIMIT 1) AS fk{i} ON true ",
            refs.join(", "),
            quote(&parent.name),
            order.join(", ")
        ));
    }
    out
}

/// A value of `column` no row has: past the column's largest for numbers and times, a new text
/// or uuid; another row's value (`other`) for types without one.
fn fresh(schema: &Schema, column: &ColumnRef, other: &str, seed: u64) -> String {
    let ty = schema
        .table(&column.table)
        .and_then(|t| t.column(&column.column))
        .map(|c| c.sql_type.clone())
        .unwrap_or_default();
    let max = format!(
        "(SELECT max({}) FROM {})",
        quote(&column.column),
        quote(&column.table)
    );
    let base = ty.split('(').next().unwrap_or_default().trim();
    match base {
        b if pgtype::integer_width(b).is_some() || matches!(b, "numeric" | "decimal") => {
            format!("coalesce({max}, 0) + 1000 + a1.__n")
        }
        "timestamp" | "timestamptz" | "date" => {
            let now = crate::clock::NOW_SQL;
            format!("coalesce({max}, {now}) + a1.__n * interval '1 day'")
        }
        "uuid" => format!(
            "md5('replay-{seed}-' || a1.__n || '-{}')::uuid",
            column.column
        ),
        "text" | "varchar" | "character varying" | "char" | "character" | "citext" => {
            let len: Option<usize> = ty
                .split_once('(')
                .and_then(|(_, r)| r.trim_end_matches(')').parse().ok());
            let v = format!(
                "'r{seed}-' || a1.__n || '-' || left(md5('{seed}-' || a1.__n || (SELECT count(*) FROM {})), 6)",
                quote(&column.table)
            );
            match len {
                Some(n) => format!("left({v}, {n})"),
                None => v,
            }
        }
        // An ltree path no row has: labels of letters and digits.
        "ltree" => format!(
            "'r{seed}.n' || a1.__n || '.c' || (SELECT count(*) FROM {})",
            quote(&column.table)
        ),
        _ => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_matched_whole() {
        assert!(mentions("s_ytd + $2", 2));
        assert!(!mentions("s_ytd + $21", 2));
        assert!(exact("($1)", 1));
        assert!(exact(" $3 ", 3));
        assert!(!exact("$3 + $4", 3));
    }
}
