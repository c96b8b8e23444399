//! WHERE / ON conjuncts → equality, range, join and residual predicates.
//!
//! A conjunct restricts a column when one side is the bare column and the other references no
//! column at all: `driver_id = $2 || $1`, `city = (ARRAY[$4,$5])[$1 + $8]` and
//! `started_at >= timestamptz $9 + make_interval(days => $2)` all qualify. When one side is an
//! *expression* of one column (`now() - due_at < interval '14 days'`), [`crate::rewrite`] solves
//! it for the bare column where that is exact (`due_at > now() - interval '14 days'`, the
//! original kept in `rewritten_from`); a lookup by a function of the column (`lower(email) =
//! lower($1)`, `=` on a `citext` column) is an equality on the lookup column the schema holds for
//! it ([`crate::lookups`]); otherwise the conjunct is a [`Residual`] with the reason. So every
//! equality and range the analysis records restricts a bare column.

use crate::exprs::column_paths;
use crate::joins::Edge;
use crate::lookups;
use crate::pattern::{Ctx, Resolved};
use crate::rewrite::{self, ty_of_sql, Cmp, Solved, Ty};
use crate::timeval::window_between;
use crate::typed;
use remodel_model::{
    ColumnRef, EqualityOp, Expr as TypedExpr, Predicate, RangeBound, RangePredicate, Residual,
    Rewrite, TimeWindow,
};
use sqlparser::ast::{BinaryOperator, Expr, InTarget, Value};
use std::collections::{HashMap, HashSet};

/// One side of a comparison.
enum Side<'e> {
    /// A column, bare (`None`) or inside an expression of it (`Some`).
    Col(Resolved, Option<&'e Expr>),
    /// An expression that references no column.
    Value(&'e Expr),
    /// Several columns, or a column that does not resolve: why it is not one column.
    Other(String),
}

/// Range bounds gathered for one column before merging.
#[derive(Debug, Clone)]
struct RangeAcc {
    column: ColumnRef,
    lower: Option<RangeBound>,
    upper: Option<RangeBound>,
    prefix: bool,
    rewritten_from: Vec<Rewrite>,
    window: Option<TimeWindow>,
}

/// The filters of one statement while its conjuncts are read: ranges by column (looked up by
/// hash, so thousands of conjuncts stay linear) and the equalities already recorded.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    ranges: Vec<RangeAcc>,
    index: HashMap<ColumnRef, usize>,
    equalities: HashSet<Predicate>,
    /// Column names that resolve to no relation (recorded once each).
    unknown: HashSet<String>,
}

/// Conjunct handling, implemented on the statement walker.
pub(crate) trait Conjuncts {
    /// Splits `e` on AND and classifies each conjunct; `main` records filters into the pattern.
    fn conjuncts(&mut self, e: &Expr, main: bool);
}

impl Conjuncts for Ctx<'_> {
    fn conjuncts(&mut self, e: &Expr, main: bool) {
        for term in and_terms(e) {
            let outcome = match other_row(self, term, main) {
                Some(o) => o,
                None => conjunct(self, term, main),
            };
            if let Err(reason) = outcome {
                if main {
                    push_residual(self, term, term.to_string(), reason);
                }
            }
        }
    }
}

/// Records `e` (written as `sql`) as a residual filter with the reason and the columns it reads.
pub(crate) fn push_residual(ctx: &mut Ctx<'_>, e: &Expr, sql: String, reason: impl Into<String>) {
    let mut columns: Vec<ColumnRef> = Vec::new();
    for p in column_paths(e) {
        if let Some(r) = ctx.resolve(&p) {
            if !columns.contains(&r.col) {
                columns.push(r.col);
            }
        }
    }
    let (expr, reason_untyped) = match typed::condition(ctx, e) {
        Ok(x) => (Some(x), None),
        Err(why) => (None, Some(why)),
    };
    ctx.res.analysis.residual.push(Residual {
        sql,
        reason: reason.into(),
        columns,
        expr,
        reason_untyped,
    });
}

/// In an UPDATE … FROM / DELETE … USING that reads other rows of the written table, a conjunct
/// on such a row: its equalities find that row (`s.id = $2`, `accounts.id = s.id`), anything
/// else is a residual filter; never a predicate of the written row. `None` when the conjunct
/// reads no other row of the written table.
fn other_row(ctx: &mut Ctx<'_>, e: &Expr, main: bool) -> Option<Result<(), String>> {
    ctx.write_rel?;
    let other = column_paths(e)
        .iter()
        .filter_map(|p| ctx.resolve(p))
        .find(|r| ctx.other_row_of_target(r.rel))?;
    let alias = ctx.rel_alias(other.rel).unwrap_or_default();
    let why = format!(
        "a condition on {alias}, another row of the written table {}",
        other.col.table
    );
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = e
    else {
        return Some(Err(why));
    };
    Some(match (side(ctx, left), side(ctx, right)) {
        (Side::Col(c, None), Side::Value(v)) | (Side::Value(v), Side::Col(c, None)) => {
            if main {
                if let Some(x) = typed::value(ctx, v, &c.col) {
                    typed::from_row_equality(ctx, c.rel, &c.col.column, x);
                }
            }
            Ok(())
        }
        (Side::Col(a, None), Side::Col(b, None)) if a.rel != b.rel => {
            ctx.res.edges.push(Edge {
                a_rel: a.rel,
                a: a.col.clone(),
                b_rel: b.rel,
                b: b.col.clone(),
            });
            if main {
                join_row_equality(ctx, &a, &b);
            }
            Ok(())
        }
        _ => Err(why),
    })
}

/// A join condition `a = b` between the written row and a row an UPDATE … FROM reads (or two
/// such rows): the equality that finds the read row.
fn join_row_equality(ctx: &mut Ctx<'_>, a: &Resolved, b: &Resolved) {
    let (found, by) = match (ctx.is_from_row(a.rel), ctx.is_from_row(b.rel)) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        (true, true) if a.rel > b.rel => (a, b),
        (true, true) => (b, a),
        (false, false) => return,
    };
    let value = TypedExpr::Column {
        column: by.col.clone(),
        row: ctx.row_of(by.rel),
    };
    typed::from_row_equality(ctx, found.rel, &found.col.column, value);
}

/// The terms of a conjunction, left to right: `a AND (b AND c)` → `[a, b, c]`. Iterative: the
/// tree may be a long chain.
pub(crate) fn and_terms(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::And,
                right,
            } => {
                stack.push(right);
                stack.push(left);
            }
            Expr::Nested(inner) => stack.push(inner),
            _ => out.push(x),
        }
    }
    out
}

fn side<'e>(ctx: &mut Ctx<'_>, e: &'e Expr) -> Side<'e> {
    let mut paths = column_paths(e);
    paths.dedup();
    match paths.len() {
        0 => {
            ctx.expr_subqueries(e);
            Side::Value(e)
        }
        1 => match ctx.resolve(&paths[0]) {
            Some(r) => {
                let plain = matches!(
                    strip_nested(e),
                    Expr::Identifier(_) | Expr::CompoundIdentifier(_)
                );
                Side::Col(r, (!plain).then_some(e))
            }
            None => {
                let name = paths[0].join(".");
                ctx.note(format!("column {name} not resolved"));
                if ctx.filters.unknown.insert(name.clone()) {
                    ctx.res.analysis.unknown_columns.push(name.clone());
                }
                Side::Other(format!("column {name} is not resolved"))
            }
        },
        _ => Side::Other("an expression of several columns".into()),
    }
}

fn strip_nested(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}

/// The type of a column, from the schema.
fn column_ty(ctx: &Ctx<'_>, c: &ColumnRef) -> Ty {
    ctx.schema
        .table(&c.table)
        .and_then(|t| t.column(&c.column))
        .map_or(Ty::Unknown, |col| ty_of_sql(&col.sql_type))
}

/// Classifies one conjunct: `Ok` when it is an equality, range or join on bare columns (or
/// solved into one), else the reason it stays a residual filter.
fn conjunct(ctx: &mut Ctx<'_>, e: &Expr, main: bool) -> Result<(), String> {
    match e {
        Expr::BinaryOp { left, op, right } => match Cmp::of(op) {
            Some(cmp) => comparison(ctx, e, left, cmp, right, main),
            None if *op == BinaryOperator::Or => or_equality(ctx, e, main),
            None => {
                ctx.expr_subqueries(e);
                Err(format!("{op} is not an equality or a range"))
            }
        },
        Expr::IsNotDistinctFrom(a, b) => not_distinct(ctx, a, b, main),
        Expr::IsNull(a) => is_null(ctx, e, a, main),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated: false,
            ..
        } => in_list(ctx, e, expr, list, main),
        Expr::AnyOp {
            left,
            compare_op: BinaryOperator::Eq,
            right,
            ..
        } => any_equality(ctx, left, right, main),
        Expr::In {
            expr,
            target: InTarget::Subquery(subquery),
            negated,
            ..
        } => semi_join(ctx, expr, subquery, *negated),
        Expr::Exists { subquery, .. } => {
            ctx.expr_subquery(subquery);
            Err("EXISTS (…): a subquery the reader evaluates".into())
        }
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } => between(ctx, e, expr, low, high, main),
        Expr::Like {
            negated: false,
            any: false,
            expr,
            pattern,
            ..
        }
        | Expr::ILike {
            negated: false,
            any: false,
            expr,
            pattern,
            ..
        } => like(ctx, e, expr, pattern, main),
        Expr::Nested(inner) => conjunct(ctx, inner, main),
        _ => {
            ctx.expr_subqueries(e);
            Err("not an equality or a range on one column".into())
        }
    }
}

/// `a IS NOT DISTINCT FROM v`: an equality, on a bare column only.
fn not_distinct(ctx: &mut Ctx<'_>, a: &Expr, b: &Expr, main: bool) -> Result<(), String> {
    match (side(ctx, a), side(ctx, b)) {
        (Side::Col(c, None), Side::Value(v)) | (Side::Value(v), Side::Col(c, None)) => {
            let x = typed::value(ctx, v, &c.col);
            equality(
                ctx,
                main,
                c.col,
                EqualityOp::Eq,
                Some(v.to_string()),
                None,
                x,
            );
            Ok(())
        }
        _ => Err("IS NOT DISTINCT FROM is kept only on a bare column".into()),
    }
}

/// `c = ANY(array)`: like `IN`, on a bare column only.
fn any_equality(ctx: &mut Ctx<'_>, left: &Expr, right: &Expr, main: bool) -> Result<(), String> {
    match (side(ctx, left), side(ctx, right)) {
        (Side::Col(c, None), Side::Value(v)) => {
            let value = Some(format!("ANY({v})"));
            let x = typed::any_list(ctx, &c.col, v);
            equality(ctx, main, c.col, EqualityOp::In, value, None, x);
            Ok(())
        }
        (Side::Col(..), Side::Value(_)) => {
            Err("= ANY on an expression of the column: the array's elements are not solved".into())
        }
        _ => Err("= ANY that is not a column against an array value".into()),
    }
}

/// `a cmp b`: an equality, a range bound, a join, or (on an expression) a solved rewrite.
fn comparison(
    ctx: &mut Ctx<'_>,
    e: &Expr,
    left: &Expr,
    cmp: Cmp,
    right: &Expr,
    main: bool,
) -> Result<(), String> {
    let (l, r) = (side(ctx, left), side(ctx, right));
    let (c, x, v, cmp) = match (l, r) {
        (Side::Col(c, x), Side::Value(v)) => (c, x, v, cmp),
        (Side::Value(v), Side::Col(c, x)) => (c, x, v, cmp.flip()),
        (Side::Col(a, None), Side::Col(b, None)) if cmp == Cmp::Eq && a.rel != b.rel => {
            if main {
                join_row_equality(ctx, &a, &b);
            }
            ctx.res.edges.push(Edge {
                a_rel: a.rel,
                a: a.col,
                b_rel: b.rel,
                b: b.col,
            });
            return Ok(());
        }
        (Side::Other(why), _) | (_, Side::Other(why)) => return Err(why),
        (Side::Col(..), Side::Col(..)) => return Err("compares columns with each other".into()),
        (Side::Value(_), Side::Value(_)) => return Err("references no column".into()),
    };
    if let Some(x) = x {
        let ty = column_ty(ctx, &c.col);
        let solved = rewrite::solve(x, ty, &[(cmp, v)], &ctx.literals);
        return match solved {
            Ok(s) => apply(ctx, c.col, s, e, main),
            // `lower(email) = lower($1)`: an equality on the lookup column, when there is one.
            Err(why) => match (cmp, lookups::equality(ctx, &c.col, Some(x), v)) {
                (Cmp::Eq, Some(p)) => {
                    lookup_equality(ctx, main, p);
                    Ok(())
                }
                _ => Err(why),
            },
        };
    }
    if !main {
        return Ok(());
    }
    if cmp == Cmp::Eq {
        // `email = $1` on a citext column: on its case-folded lookup column.
        if let Some(p) = lookups::equality(ctx, &c.col, None, v) {
            lookup_equality(ctx, main, p);
            return Ok(());
        }
    }
    let value = v.to_string();
    let typed = typed::value(ctx, v, &c.col);
    if cmp == Cmp::Eq && ctx.is_from_row(c.rel) {
        if let Some(x) = &typed {
            typed::from_row_equality(ctx, c.rel, &c.col.column, x.clone());
        }
    }
    match cmp {
        Cmp::Eq => {
            equality(ctx, main, c.col, EqualityOp::Eq, Some(value), None, typed);
            Ok(())
        }
        cmp => add_bounds(ctx, c.col, &[(cmp, value, typed)], None, None),
    }
}

/// Records a solved conjunct: one `=` is an equality, anything else range bounds.
fn apply(ctx: &mut Ctx<'_>, col: ColumnRef, s: Solved, e: &Expr, main: bool) -> Result<(), String> {
    if !main {
        return Ok(());
    }
    // The parameters take their types from the condition as written (`c * 2 = $1` makes `$1`
    // the column's type, which the solved `$1 / 2` alone would not say).
    let _ = typed::condition(ctx, e);
    let rewrite = Rewrite {
        sql: e.to_string(),
        reason: s.reason,
        assumes: s.assumes,
    };
    let bounds: Vec<(Cmp, String, Option<TypedExpr>)> = s
        .bounds
        .iter()
        .map(|(c, v)| (*c, v.to_string(), typed::value(ctx, v, &col)))
        .collect();
    match bounds.as_slice() {
        [(Cmp::Eq, v, x)] => {
            let (v, x) = (v.clone(), x.clone());
            equality(ctx, main, col, EqualityOp::Eq, Some(v), Some(rewrite), x);
            Ok(())
        }
        bounds => add_bounds(ctx, col, bounds, Some(rewrite), s.window),
    }
}

/// `e IS NULL`: on a bare column, or on an expression that is NULL exactly when its column is.
fn is_null(ctx: &mut Ctx<'_>, e: &Expr, a: &Expr, main: bool) -> Result<(), String> {
    let (c, x) = match side(ctx, a) {
        Side::Col(c, x) => (c, x),
        Side::Other(why) => return Err(why),
        Side::Value(_) => return Err("references no column".into()),
    };
    let rewritten = match x {
        None => None,
        Some(x) => {
            let s = rewrite::solve_is_null(x, &ctx.literals)?;
            Some(Rewrite {
                sql: e.to_string(),
                reason: s.reason,
                assumes: s.assumes,
            })
        }
    };
    equality(ctx, main, c.col, EqualityOp::IsNull, None, rewritten, None);
    Ok(())
}

/// `c IN (…)`, or an expression of `c` whose every value solves to one value of `c`.
fn in_list(
    ctx: &mut Ctx<'_>,
    e: &Expr,
    expr: &Expr,
    list: &[Expr],
    main: bool,
) -> Result<(), String> {
    let (c, x) = match side(ctx, expr) {
        Side::Col(c, x) => (c, x),
        Side::Other(why) => return Err(why),
        Side::Value(_) => return Err("references no column".into()),
    };
    if list.iter().any(|v| !column_paths(v).is_empty()) {
        return Err("the IN list references columns".into());
    }
    for v in list {
        ctx.expr_subqueries(v);
    }
    let (values, rewritten): (Vec<Expr>, _) = match x {
        None => (list.to_vec(), None),
        Some(x) => {
            let ty = column_ty(ctx, &c.col);
            let s = rewrite::solve_in(x, ty, list, &ctx.literals)?;
            if main {
                let _ = typed::condition(ctx, e);
            }
            let values = s.bounds.into_iter().map(|(_, v)| v).collect();
            let rw = Rewrite {
                sql: e.to_string(),
                reason: s.reason,
                assumes: s.assumes,
            };
            (values, Some(rw))
        }
    };
    if !main {
        return Ok(());
    }
    let texts: Vec<String> = values.iter().map(ToString::to_string).collect();
    let typed_values = values
        .iter()
        .map(|v| typed::value(ctx, v, &c.col))
        .collect();
    let x = typed::in_list(&c.col, typed_values);
    let value = Some(format!("({})", texts.join(", ")));
    equality(ctx, main, c.col, EqualityOp::In, value, rewritten, x);
    Ok(())
}

/// `col IN (SELECT …)`: the subquery's tables, and the semi-join edge `col = other_col`.
fn semi_join(
    ctx: &mut Ctx<'_>,
    expr: &Expr,
    subquery: &sqlparser::ast::Query,
    negated: bool,
) -> Result<(), String> {
    let outer = side(ctx, expr);
    let inner_rel = ctx.next_rel_id();
    let outs = ctx.expr_subquery(subquery);
    // The semi-join `col IN (SELECT other_col …)` pairs two columns like a join.
    if let (Side::Col(c, None), [(_, Some(sub))], false) = (&outer, outs.as_slice(), negated) {
        ctx.res.edges.push(Edge {
            a_rel: c.rel,
            a: c.col.clone(),
            b_rel: inner_rel,
            b: sub.clone(),
        });
    }
    Err("IN (SELECT …): a subquery the reader evaluates".into())
}

/// `x BETWEEN lo AND hi`: both bounds, on the column or solved through its expression.
fn between(
    ctx: &mut Ctx<'_>,
    e: &Expr,
    expr: &Expr,
    low: &Expr,
    high: &Expr,
    main: bool,
) -> Result<(), String> {
    let (c, x, lo, hi) = match (side(ctx, expr), side(ctx, low), side(ctx, high)) {
        (Side::Col(c, x), Side::Value(lo), Side::Value(hi)) => (c, x, lo, hi),
        _ => return Err("BETWEEN that is not one column between two values".into()),
    };
    if let Some(x) = x {
        let ty = column_ty(ctx, &c.col);
        let s = rewrite::solve(x, ty, &[(Cmp::Ge, lo), (Cmp::Le, hi)], &ctx.literals)?;
        return apply(ctx, c.col, s, e, main);
    }
    if !main {
        return Ok(());
    }
    let bounds = [
        (Cmp::Ge, lo.to_string(), typed::value(ctx, lo, &c.col)),
        (Cmp::Le, hi.to_string(), typed::value(ctx, hi, &c.col)),
    ];
    add_bounds(ctx, c.col, &bounds, None, None)
}

/// `c LIKE 'prefix%'` is a prefix range; a parameter pattern waits for the example.
fn like(
    ctx: &mut Ctx<'_>,
    e: &Expr,
    expr: &Expr,
    pattern: &Expr,
    main: bool,
) -> Result<(), String> {
    let (c, v, pattern_value) = match (side(ctx, expr), side(ctx, pattern)) {
        (Side::Col(c, None), Side::Value(v)) => (c, v.to_string(), v),
        (Side::Col(_, Some(_)), _) => return Err("LIKE on an expression of the column".into()),
        _ => return Err("LIKE that is not a column against a pattern value".into()),
    };
    if !main {
        return Ok(());
    }
    let typed = typed::value(ctx, pattern_value, &c.col);
    match literal_string(pattern) {
        Some(p) if is_prefix_pattern(&p) => {
            let acc = range_acc(ctx, c.col);
            if acc.lower.is_some() {
                return Err(format!(
                    "a second lower bound on {}: one range per column is kept",
                    acc.column
                ));
            }
            acc.prefix = true;
            acc.lower = Some(RangeBound {
                inclusive: true,
                value: v,
                example: None,
                expr: typed,
            });
            Ok(())
        }
        Some(_) => Err("the LIKE pattern is not a fixed prefix followed by %".into()),
        None => {
            let condition = typed::condition(ctx, e);
            ctx.res.pending_likes.push(crate::pattern::PendingLike {
                column: c.col,
                value: v,
                sql: e.to_string(),
                value_expr: typed,
                condition,
            });
            Ok(())
        }
    }
}

/// `a = $1 OR a = $2` (one bare column) reads like `a IN ($1, $2)`.
fn or_equality(ctx: &mut Ctx<'_>, e: &Expr, main: bool) -> Result<(), String> {
    const WHY: &str = "OR of conditions that are not equalities on one column";
    let mut parts = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Or,
                right,
            } => {
                stack.push(right);
                stack.push(left);
            }
            Expr::Nested(inner) => stack.push(inner),
            other => parts.push(other),
        }
    }
    let mut col: Option<ColumnRef> = None;
    let mut values = Vec::new();
    let mut exprs = Vec::new();
    for p in parts {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = p
        else {
            return Err(WHY.into());
        };
        let (c, v) = match (side(ctx, left), side(ctx, right)) {
            (Side::Col(c, None), Side::Value(v)) | (Side::Value(v), Side::Col(c, None)) => {
                (c.col, v)
            }
            _ => return Err(WHY.into()),
        };
        match &col {
            Some(c0) if *c0 != c => return Err(WHY.into()),
            Some(_) => {}
            None => col = Some(c),
        }
        values.push(v.to_string());
        exprs.push(v);
    }
    let Some(c) = col else { return Err(WHY.into()) };
    let value = Some(format!("({})", values.join(", ")));
    let x = if main {
        let typed_values = exprs.iter().map(|v| typed::value(ctx, v, &c)).collect();
        typed::in_list(&c, typed_values)
    } else {
        None
    };
    equality(ctx, main, c, EqualityOp::In, value, None, x);
    Ok(())
}

fn equality(
    ctx: &mut Ctx<'_>,
    main: bool,
    column: ColumnRef,
    op: EqualityOp,
    value: Option<String>,
    rewritten_from: Option<Rewrite>,
    expr: Option<TypedExpr>,
) {
    if !main {
        return;
    }
    let p = Predicate {
        column,
        op,
        value,
        rewritten_from,
        expr,
    };
    if ctx.filters.equalities.insert(p.clone()) {
        ctx.res.analysis.equality.push(p);
    }
}

/// Records an equality on a lookup column ([`lookups::equality`]).
fn lookup_equality(ctx: &mut Ctx<'_>, main: bool, p: Predicate) {
    equality(ctx, main, p.column, p.op, p.value, p.rewritten_from, p.expr);
}

fn range_acc<'c>(ctx: &'c mut Ctx<'_>, column: ColumnRef) -> &'c mut RangeAcc {
    let f = &mut ctx.filters;
    let i = match f.index.get(&column) {
        Some(i) => *i,
        None => {
            f.index.insert(column.clone(), f.ranges.len());
            f.ranges.push(RangeAcc {
                column,
                lower: None,
                upper: None,
                prefix: false,
                rewritten_from: Vec::new(),
                window: None,
            });
            f.ranges.len() - 1
        }
    };
    &mut f.ranges[i]
}

/// Adds bounds (`>`/`>=` lower, `<`/`<=` upper) to the column's range, all or none: a side that
/// already has a bound makes the conjunct residual (one range per column is kept).
fn add_bounds(
    ctx: &mut Ctx<'_>,
    column: ColumnRef,
    bounds: &[(Cmp, String, Option<TypedExpr>)],
    rewritten: Option<Rewrite>,
    window: Option<TimeWindow>,
) -> Result<(), String> {
    let acc = range_acc(ctx, column);
    let lower = |c: Cmp| matches!(c, Cmp::Gt | Cmp::Ge);
    let mut sides = (acc.lower.is_some(), acc.upper.is_some());
    for (c, _, _) in bounds {
        let slot = if lower(*c) {
            &mut sides.0
        } else {
            &mut sides.1
        };
        if *c == Cmp::Eq || *slot {
            let which = if lower(*c) { "lower" } else { "upper" };
            return Err(format!(
                "a second {which} bound on {}: one range per column is kept",
                acc.column
            ));
        }
        *slot = true;
    }
    for (c, v, x) in bounds {
        let b = RangeBound {
            inclusive: matches!(c, Cmp::Ge | Cmp::Le),
            value: v.clone(),
            example: None,
            expr: x.clone(),
        };
        if lower(*c) {
            acc.lower = Some(b);
        } else {
            acc.upper = Some(b);
        }
    }
    acc.rewritten_from.extend(rewritten);
    acc.window = window.or(acc.window);
    Ok(())
}

/// Moves the gathered ranges into the analysis, recognising fixed windows.
pub(crate) fn flush_ranges(ctx: &mut Ctx<'_>) {
    let filters = std::mem::take(&mut ctx.filters);
    for acc in filters.ranges {
        let window = acc
            .window
            .or_else(|| window_of(acc.lower.as_ref(), acc.upper.as_ref()));
        ctx.res.analysis.ranges.push(RangePredicate {
            column: acc.column,
            lower: acc.lower,
            upper: acc.upper,
            prefix: acc.prefix,
            rewritten_from: acc.rewritten_from,
            window,
        });
    }
}

/// The window of `>= lower AND < upper` when the two differ by exactly one unit.
pub(crate) fn window_of(
    lower: Option<&RangeBound>,
    upper: Option<&RangeBound>,
) -> Option<TimeWindow> {
    let (lo, hi) = (lower?, upper?);
    if !lo.inclusive || hi.inclusive {
        return None;
    }
    window_between(&lo.value, &hi.value)
        .or_else(|| window_between(lo.example.as_deref()?, hi.example.as_deref()?))
}

fn literal_string(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Some(s.clone()),
            _ => None,
        },
        Expr::Nested(inner) => literal_string(inner),
        Expr::Cast { expr, .. } => literal_string(expr),
        _ => None,
    }
}

/// `'abc%'`: a fixed prefix then one trailing `%`, no other wildcard.
pub(crate) fn is_prefix_pattern(p: &str) -> bool {
    match p.strip_suffix('%') {
        Some(head) => !head.is_empty() && !head.contains(['%', '_']),
        None => false,
    }
}
