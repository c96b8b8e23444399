//! WHERE / ON conjuncts → equality, range, join and residual predicates.
//!
//! A predicate counts on a column when one side references exactly that column (bare, or inside
//! an expression such as `date_trunc('day', c)`) and the other side references no column at all:
//! `driver_id = $2 || $1`, `city = (ARRAY[$4,$5])[$1 + $8]` and
//! `started_at >= timestamptz $9 + make_interval(days => $2)` all qualify.

use crate::exprs::column_paths;
use crate::joins::Edge;
use crate::pattern::{Ctx, Resolved};
use crate::timeval::window_between;
use remodel_model::{ColumnRef, EqualityOp, Predicate, RangeBound, RangePredicate};
use sqlparser::ast::{BinaryOperator, Expr, InTarget, Value};

/// One side of a comparison.
enum Side {
    /// A column, possibly inside an expression (the expression's SQL).
    Col(Resolved, Option<String>),
    /// An expression that references no column: its SQL.
    Value(String),
    /// Several columns, or a column that does not resolve.
    Other,
}

/// Range bounds gathered for one column (or expression of one) before merging.
#[derive(Debug, Clone)]
pub(crate) struct RangeAcc {
    pub column: ColumnRef,
    pub expression: Option<String>,
    pub lower: Option<RangeBound>,
    pub upper: Option<RangeBound>,
    pub prefix: bool,
}

/// Conjunct handling, implemented on the statement walker.
pub(crate) trait Conjuncts {
    /// Splits `e` on AND and classifies each conjunct; `main` records filters into the pattern.
    fn conjuncts(&mut self, e: &Expr, main: bool);
}

impl Conjuncts for Ctx<'_> {
    fn conjuncts(&mut self, e: &Expr, main: bool) {
        for term in and_terms(e) {
            if !conjunct(self, term, main) && main {
                self.res.analysis.residual.push(term.to_string());
            }
        }
    }
}

/// The terms of a conjunction, left to right: `a AND (b AND c)` → `[a, b, c]`.
pub(crate) fn and_terms(e: &Expr) -> Vec<&Expr> {
    fn collect<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match e {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::And,
                right,
            } => {
                collect(left, out);
                collect(right, out);
            }
            Expr::Nested(inner) => collect(inner, out),
            _ => out.push(e),
        }
    }
    let mut out = Vec::new();
    collect(e, &mut out);
    out
}

fn side(ctx: &mut Ctx<'_>, e: &Expr) -> Side {
    let mut paths = column_paths(e);
    paths.dedup();
    match paths.len() {
        0 => {
            ctx.expr_subqueries(e);
            Side::Value(e.to_string())
        }
        1 => match ctx.resolve(&paths[0]) {
            Some(r) => {
                let plain = matches!(
                    strip_nested(e),
                    Expr::Identifier(_) | Expr::CompoundIdentifier(_)
                );
                Side::Col(r, if plain { None } else { Some(e.to_string()) })
            }
            None => {
                ctx.note(format!("column {} not resolved", paths[0].join(".")));
                let name = paths[0].join(".");
                if !ctx.res.analysis.unknown_columns.contains(&name) {
                    ctx.res.analysis.unknown_columns.push(name);
                }
                Side::Other
            }
        },
        _ => Side::Other,
    }
}

fn strip_nested(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}

/// Classifies one conjunct; false when it is none of equality, range, join (kept as residual).
fn conjunct(ctx: &mut Ctx<'_>, e: &Expr, main: bool) -> bool {
    match e {
        Expr::BinaryOp { left, op, right } => {
            let (l, r) = (side(ctx, left), side(ctx, right));
            match op {
                BinaryOperator::Eq => match (l, r) {
                    (Side::Col(c, x), Side::Value(v)) | (Side::Value(v), Side::Col(c, x)) => {
                        equality(ctx, main, c.col, EqualityOp::Eq, x, Some(v));
                        true
                    }
                    (Side::Col(a, None), Side::Col(b, None)) if a.rel != b.rel => {
                        ctx.res.edges.push(Edge {
                            a_rel: a.rel,
                            a: a.col,
                            b_rel: b.rel,
                            b: b.col,
                        });
                        true
                    }
                    _ => false,
                },
                BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq => {
                    let (c, x, v, op) = match (l, r) {
                        (Side::Col(c, x), Side::Value(v)) => (c, x, v, op.clone()),
                        (Side::Value(v), Side::Col(c, x)) => (c, x, v, flip(op)),
                        _ => return false,
                    };
                    if main {
                        let lower = matches!(op, BinaryOperator::Gt | BinaryOperator::GtEq);
                        let inclusive = matches!(op, BinaryOperator::GtEq | BinaryOperator::LtEq);
                        let bound = RangeBound {
                            inclusive,
                            value: v,
                            example: None,
                        };
                        return add_bound(ctx, c.col, x, lower, bound);
                    }
                    true
                }
                BinaryOperator::Or => or_equality(ctx, e, main),
                _ => false,
            }
        }
        Expr::IsNotDistinctFrom(a, b) => match (side(ctx, a), side(ctx, b)) {
            (Side::Col(c, x), Side::Value(v)) | (Side::Value(v), Side::Col(c, x)) => {
                equality(ctx, main, c.col, EqualityOp::Eq, x, Some(v));
                true
            }
            _ => false,
        },
        Expr::IsNull(a) => match side(ctx, a) {
            Side::Col(c, x) => {
                equality(ctx, main, c.col, EqualityOp::IsNull, x, None);
                true
            }
            _ => false,
        },
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated: false,
            ..
        } => {
            let Side::Col(c, x) = side(ctx, expr) else {
                return false;
            };
            if list.iter().any(|v| !column_paths(v).is_empty()) {
                return false;
            }
            for v in list {
                ctx.expr_subqueries(v);
            }
            let value = list
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            equality(
                ctx,
                main,
                c.col,
                EqualityOp::In,
                x,
                Some(format!("({value})")),
            );
            true
        }
        Expr::AnyOp {
            left,
            compare_op: BinaryOperator::Eq,
            right,
            ..
        } => {
            let (Side::Col(c, x), Side::Value(v)) = (side(ctx, left), side(ctx, right)) else {
                return false;
            };
            equality(
                ctx,
                main,
                c.col,
                EqualityOp::In,
                x,
                Some(format!("ANY({v})")),
            );
            true
        }
        Expr::In {
            expr,
            target: InTarget::Subquery(subquery),
            negated,
            ..
        } => {
            let outer = side(ctx, expr);
            let inner = Some(ctx.next_rel_id());
            ctx.scopes.push(Vec::new());
            let outs = ctx.query(subquery, false);
            ctx.scopes.pop();
            // The semi-join `col IN (SELECT other_col …)` pairs two columns like a join.
            if let (Side::Col(c, None), [(_, Some(sub))], Some(inner_rel), false) =
                (&outer, outs.as_slice(), inner, *negated)
            {
                ctx.res.edges.push(Edge {
                    a_rel: c.rel,
                    a: c.col.clone(),
                    b_rel: inner_rel,
                    b: sub.clone(),
                });
            }
            false
        }
        Expr::Exists { subquery, .. } => {
            ctx.scopes.push(Vec::new());
            ctx.query(subquery, false);
            ctx.scopes.pop();
            false
        }
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } => {
            let (Side::Col(c, x), Side::Value(lo), Side::Value(hi)) =
                (side(ctx, expr), side(ctx, low), side(ctx, high))
            else {
                return false;
            };
            if main {
                let ok = add_bound(
                    ctx,
                    c.col.clone(),
                    x.clone(),
                    true,
                    RangeBound {
                        inclusive: true,
                        value: lo,
                        example: None,
                    },
                );
                return add_bound(
                    ctx,
                    c.col,
                    x,
                    false,
                    RangeBound {
                        inclusive: true,
                        value: hi,
                        example: None,
                    },
                ) && ok;
            }
            true
        }
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
        } => {
            let (Side::Col(c, x), Side::Value(v)) = (side(ctx, expr), side(ctx, pattern)) else {
                return false;
            };
            if !main {
                return true;
            }
            match literal_string(pattern) {
                Some(p) if is_prefix_pattern(&p) => {
                    let acc = range_acc(ctx, c.col, x);
                    acc.prefix = true;
                    acc.lower = Some(RangeBound {
                        inclusive: true,
                        value: v,
                        example: None,
                    });
                    true
                }
                Some(_) => false,
                None => {
                    ctx.res.pending_likes.push((c.col, x, v, e.to_string()));
                    true
                }
            }
        }
        Expr::Nested(inner) => conjunct(ctx, inner, main),
        _ => {
            ctx.expr_subqueries(e);
            false
        }
    }
}

/// `a = $1 OR a = $2` (one column) reads like `a IN ($1, $2)`.
fn or_equality(ctx: &mut Ctx<'_>, e: &Expr, main: bool) -> bool {
    fn disjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match e {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Or,
                right,
            } => {
                disjuncts(left, out);
                disjuncts(right, out);
            }
            Expr::Nested(inner) => disjuncts(inner, out),
            other => out.push(other),
        }
    }
    let mut parts = Vec::new();
    disjuncts(e, &mut parts);
    let mut col: Option<(ColumnRef, Option<String>)> = None;
    let mut values = Vec::new();
    for p in parts {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = p
        else {
            return false;
        };
        let (c, x, v) = match (side(ctx, left), side(ctx, right)) {
            (Side::Col(c, x), Side::Value(v)) | (Side::Value(v), Side::Col(c, x)) => (c.col, x, v),
            _ => return false,
        };
        match &col {
            Some((c0, x0)) if *c0 != c || *x0 != x => return false,
            Some(_) => {}
            None => col = Some((c, x)),
        }
        values.push(v);
    }
    let Some((c, x)) = col else { return false };
    equality(
        ctx,
        main,
        c,
        EqualityOp::In,
        x,
        Some(format!("({})", values.join(", "))),
    );
    true
}

fn flip(op: &BinaryOperator) -> BinaryOperator {
    match op {
        BinaryOperator::Lt => BinaryOperator::Gt,
        BinaryOperator::LtEq => BinaryOperator::GtEq,
        BinaryOperator::Gt => BinaryOperator::Lt,
        _ => BinaryOperator::LtEq,
    }
}

fn equality(
    ctx: &mut Ctx<'_>,
    main: bool,
    column: ColumnRef,
    op: EqualityOp,
    expression: Option<String>,
    value: Option<String>,
) {
    if !main {
        return;
    }
    let p = Predicate {
        column,
        op,
        expression,
        value,
    };
    if !ctx.res.analysis.equality.contains(&p) {
        ctx.res.analysis.equality.push(p);
    }
}

fn range_acc<'c>(
    ctx: &'c mut Ctx<'_>,
    column: ColumnRef,
    expression: Option<String>,
) -> &'c mut RangeAcc {
    let i = match ctx
        .ranges
        .iter()
        .position(|r| r.column == column && r.expression == expression)
    {
        Some(i) => i,
        None => {
            ctx.ranges.push(RangeAcc {
                column,
                expression,
                lower: None,
                upper: None,
                prefix: false,
            });
            ctx.ranges.len() - 1
        }
    };
    &mut ctx.ranges[i]
}

/// Adds a bound; false (residual) when that side already has one.
fn add_bound(
    ctx: &mut Ctx<'_>,
    column: ColumnRef,
    expression: Option<String>,
    lower: bool,
    b: RangeBound,
) -> bool {
    let acc = range_acc(ctx, column, expression);
    let slot = if lower {
        &mut acc.lower
    } else {
        &mut acc.upper
    };
    if slot.is_some() {
        return false;
    }
    *slot = Some(b);
    true
}

/// Moves the gathered ranges into the analysis, recognising fixed windows.
pub(crate) fn flush_ranges(ctx: &mut Ctx<'_>) {
    for acc in std::mem::take(&mut ctx.ranges) {
        let window = window_of(acc.lower.as_ref(), acc.upper.as_ref());
        ctx.res.analysis.ranges.push(RangePredicate {
            column: acc.column,
            lower: acc.lower,
            upper: acc.upper,
            prefix: acc.prefix,
            expression: acc.expression,
            window,
        });
    }
}

/// The window of `>= lower AND < upper` when the two differ by exactly one unit.
pub(crate) fn window_of(
    lower: Option<&RangeBound>,
    upper: Option<&RangeBound>,
) -> Option<remodel_model::TimeWindow> {
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
