//! Solving a comparison on an expression of one column for the bare column.
//!
//! `now() - due_at < interval '14 days'` restricts `due_at`, but only as
//! `due_at > now() - interval '14 days'`: the expression is peeled layer by layer (outermost
//! first, [`layers`]) and each layer maps the comparison onto its operand ([`rules`]) — a
//! translation keeps the operator, a decreasing step flips it, a floor (`date_trunc`, `::date`,
//! integer division) turns it into a bound rounded to the floor's grid. A layer is solved only
//! where the result is **exactly** the original condition for every value of the column
//! (NULLs included: every layer is strict, so NULL in gives NULL out on both sides); anything
//! else is refused with the reason, and the caller keeps the condition as a residual filter.
//! Exactness that rests on something outside the SQL (the session time zone, the example's value
//! of a `$n`) is recorded as an assumption for the reviewer.

mod layers;
mod literals;
mod rules;
mod types;

pub(crate) use literals::Literals;
pub(crate) use types::{ty_of_sql, Ty};

use layers::Layer;
use remodel_model::TimeWindow;
use sqlparser::ast::{BinaryOperator, Expr, Value};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// A comparison operator, column side on the left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    /// `=`.
    Eq,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl Cmp {
    /// The operator of a comparison, if it is one.
    pub(crate) fn of(op: &BinaryOperator) -> Option<Cmp> {
        Some(match op {
            BinaryOperator::Eq => Cmp::Eq,
            BinaryOperator::Lt => Cmp::Lt,
            BinaryOperator::LtEq => Cmp::Le,
            BinaryOperator::Gt => Cmp::Gt,
            BinaryOperator::GtEq => Cmp::Ge,
            _ => return None,
        })
    }

    /// The same comparison with its sides swapped (`a < b` is `b > a`).
    pub(crate) fn flip(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Eq,
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
        }
    }
}

/// A condition solved for the bare column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Solved {
    /// Restrictions of the bare column; the values reference no column.
    pub bounds: Vec<(Cmp, Expr)>,
    /// The window an `=` on a floor became (`date_trunc('day', c) = $1`: one day).
    pub window: Option<TimeWindow>,
    /// Why the rewrite is exact, step by step.
    pub reason: String,
    /// What exactness relies on beyond the SQL.
    pub assumes: Vec<String>,
}

/// State of one solve: the example's literals, and what the steps found.
pub(crate) struct Solver<'a> {
    lits: &'a Literals,
    reasons: Vec<String>,
    assumes: Vec<String>,
    window: Option<TimeWindow>,
}

/// Solves `expr cmp value` for each goal (one for a comparison, two for BETWEEN) for the column
/// inside `expr`, whose type is `col_ty`.
pub(crate) fn solve(
    expr: &Expr,
    col_ty: Ty,
    goals: &[(Cmp, &Expr)],
    lits: &Literals,
) -> Result<Solved, String> {
    let mut s = Solver::new(lits);
    let layers = s.peel(expr)?;
    let (inner, outer) = s.layer_types(&layers, col_ty)?;
    let mut cs: Vec<(Cmp, Expr)> = Vec::new();
    for (c, v) in goals {
        cs.push((*c, s.pin(v, outer.first().copied(), &layers)?));
    }
    for (i, layer) in layers.iter().enumerate() {
        cs = s.through(layer, inner[i], cs)?;
    }
    Ok(Solved {
        bounds: cs,
        window: s.window,
        reason: s.reasons.join("; "),
        assumes: s.assumes,
    })
}

/// Solves `expr IN (values)` into `column IN (…)`: only through one-to-one layers.
pub(crate) fn solve_in(
    expr: &Expr,
    col_ty: Ty,
    values: &[Expr],
    lits: &Literals,
) -> Result<Solved, String> {
    let mut out: Option<Solved> = None;
    for v in values {
        let one = solve(expr, col_ty, &[(Cmp::Eq, v)], lits)?;
        let [(Cmp::Eq, value)] = one.bounds.as_slice() else {
            return Err("each value of the IN list would become a range of the column".into());
        };
        match &mut out {
            Some(o) => o.bounds.push((Cmp::Eq, value.clone())),
            None => out = Some(one),
        }
    }
    out.ok_or_else(|| "empty IN list".into())
}

/// `expr IS NULL` is `column IS NULL` when every layer is strict and its other operand is never
/// NULL; the reason and assumptions of that, or why not.
pub(crate) fn solve_is_null(expr: &Expr, lits: &Literals) -> Result<Solved, String> {
    let mut s = Solver::new(lits);
    let layers = s.peel(expr)?;
    for layer in &layers {
        if let Layer::Add(v) | Layer::Sub(v) | Layer::SubFrom(v) | Layer::Mul(v) | Layer::Div(v) =
            layer
        {
            if !s.never_null(v) {
                return Err(format!(
                    "{v} may be NULL (a parameter): the expression is NULL whenever it is"
                ));
            }
        }
    }
    Ok(Solved {
        bounds: Vec::new(),
        window: None,
        reason: "every step is strict and its other operands are never NULL: the expression is NULL exactly when the column is".into(),
        assumes: s.assumes,
    })
}

impl<'a> Solver<'a> {
    fn new(lits: &'a Literals) -> Self {
        Solver {
            lits,
            reasons: Vec::new(),
            assumes: Vec::new(),
            window: None,
        }
    }

    /// `e` itself when it is a literal; the example's literal when `e` is a placeholder the
    /// example fills (an assumption: the application writes that constant in every call).
    pub(crate) fn literal_of(&mut self, e: &Expr) -> Option<Expr> {
        if let Some(lit) = self.param_literal(e) {
            return Some(lit);
        }
        match e {
            Expr::Value(v) if matches!(v.value, Value::Placeholder(_) | Value::Null) => None,
            Expr::Value(_) | Expr::TypedString(_) | Expr::Interval(_) => Some(e.clone()),
            Expr::Nested(x) => self.literal_of(x),
            Expr::UnaryOp { op, expr } => {
                let inner = self.literal_of(expr)?;
                Some(Expr::UnaryOp {
                    op: *op,
                    expr: Box::new(inner),
                })
            }
            Expr::Cast {
                kind,
                expr,
                data_type,
                format,
            } => {
                let inner = self.literal_of(expr)?;
                Some(Expr::Cast {
                    kind: kind.clone(),
                    expr: Box::new(inner),
                    data_type: data_type.clone(),
                    format: format.clone(),
                })
            }
            _ => None,
        }
    }

    /// The example's literal for a placeholder (recording the assumption), else `None`.
    pub(crate) fn param_literal(&mut self, e: &Expr) -> Option<Expr> {
        let lit = self.lits.get(e)?.clone();
        self.assume(format!(
            "{e} is {lit} in every call, as in the example (a constant of the application's SQL)"
        ));
        Some(lit)
    }

    fn assume(&mut self, a: String) {
        if !self.assumes.contains(&a) {
            self.assumes.push(a);
        }
    }

    fn because(&mut self, r: String) {
        self.reasons.push(r);
    }

    /// The type of each layer's operand and result, innermost computed first.
    fn layer_types(
        &mut self,
        layers: &[Layer<'_>],
        col_ty: Ty,
    ) -> Result<(Vec<Ty>, Vec<Ty>), String> {
        match col_ty {
            Ty::Unknown => return Err("the column's type is not known (not in the schema)".into()),
            Ty::Other => {
                return Err("the column's type has no order-preserving arithmetic here".into())
            }
            _ => {}
        }
        let mut inner = vec![Ty::Unknown; layers.len()];
        let mut outer = vec![Ty::Unknown; layers.len()];
        let mut t = col_ty;
        for (i, layer) in layers.iter().enumerate().rev() {
            inner[i] = t;
            t = self.result_ty(layer, t);
            if t == Ty::Unknown {
                return Err(format!("the type of {} is not known", describe(layer)));
            }
            outer[i] = t;
        }
        Ok((inner, outer))
    }

    /// Gives an untyped value (`$1`, `'2025-01-15'`) the type Postgres gave it next to the
    /// expression: once moved into the bound's arithmetic it would be typed differently
    /// (`$1 - interval '1 day'` makes `$1` an interval).
    fn pin(&self, v: &Expr, outer: Option<Ty>, layers: &[Layer<'_>]) -> Result<Expr, String> {
        let cast_first = matches!(layers.first(), Some(Layer::Cast(_)));
        match outer {
            Some(t) if cast_first => typed(v, t, true),
            Some(t) => typed(v, t, false),
            None => Ok(v.clone()),
        }
    }
}

/// `v` with a cast to `t` when it is untyped (`$1`, `'2025-01-15'`) and `t` is a time or an
/// interval (or any type, with `always`): moved into other arithmetic, Postgres would type it
/// from its new neighbours instead.
pub(crate) fn typed(v: &Expr, t: Ty, always: bool) -> Result<Expr, String> {
    let untyped = matches!(v, Expr::Value(x) if matches!(x.value,
        Value::Placeholder(_) | Value::SingleQuotedString(_)));
    match t.sql_name() {
        Some(name) if untyped && (always || t.is_time() || t == Ty::Interval) => {
            sql(&format!("{v}::{name}"))
        }
        _ => Ok(v.clone()),
    }
}

/// A layer in words, for reasons.
fn describe(layer: &Layer<'_>) -> String {
    match layer {
        Layer::Add(v) => format!("+ {v}"),
        Layer::Sub(v) => format!("- {v}"),
        Layer::SubFrom(v) => format!("{v} - …"),
        Layer::Neg => "-…".into(),
        Layer::Mul(k) => format!("* {k}"),
        Layer::Div(k) => format!("/ {k}"),
        Layer::Trunc(u) => format!("date_trunc('{}', …)", u.name()),
        Layer::Cast(t) => format!("::{t}"),
        Layer::Epoch => "extract(epoch FROM …)".into(),
    }
}

/// Parses SQL the rewrite builds from templates.
fn sql(text: &str) -> Result<Expr, String> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("internal: the bound {text} does not parse ({e})"))
}

/// True when `e` prints as one operand (no operator binds into it).
fn atomic(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::Value(_)
            | Expr::Function(_)
            | Expr::Nested(_)
            | Expr::Cast { .. }
            | Expr::TypedString(_)
            | Expr::Interval(_)
            | Expr::Case { .. }
            | Expr::Extract { .. }
    )
}

/// `e`, parenthesized unless atomic: safe to embed as an operand.
fn operand(e: Expr) -> Expr {
    if atomic(&e) {
        e
    } else {
        Expr::Nested(Box::new(e))
    }
}

/// `l op r` with each side parenthesized as needed.
fn bin(l: Expr, op: BinaryOperator, r: Expr) -> Expr {
    Expr::BinaryOp {
        left: Box::new(operand(l)),
        op,
        right: Box::new(operand(r)),
    }
}

#[cfg(test)]
mod tests;
