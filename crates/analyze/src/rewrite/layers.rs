//! An expression of one column as layers around it, outermost first:
//! `now() - (c + interval '1 hour')` is `SubFrom(now())` over `Add(interval '1 hour')` over `c`.

use super::Solver;
use crate::exprs::{bare_name, column_paths};
use remodel_model::TimeWindow;
use sqlparser::ast::{
    BinaryOperator, CastKind, DataType, DateTimeField, Expr, Function, FunctionArg,
    FunctionArgExpr, FunctionArguments, UnaryOperator, Value,
};

/// One step between the column and the compared expression; `&Expr` is the other operand.
#[derive(Debug)]
pub(crate) enum Layer<'e> {
    /// `f + v` or `v + f`.
    Add(&'e Expr),
    /// `f - v`.
    Sub(&'e Expr),
    /// `v - f`.
    SubFrom(&'e Expr),
    /// `-f`.
    Neg,
    /// `f * k` or `k * f`.
    Mul(&'e Expr),
    /// `f / k`.
    Div(&'e Expr),
    /// `date_trunc('unit', f)`.
    Trunc(Unit),
    /// `f::type`, `CAST(f AS type)`.
    Cast(&'e DataType),
    /// `extract(epoch FROM f)`.
    Epoch,
}

/// Most layers solved; deeper expressions stay residual.
const MAX_LAYERS: usize = 16;

/// A `date_trunc` unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Unit {
    /// The unit `date_trunc` reads from `s` (`'day'`, `'DAYS'`).
    pub(crate) fn parse(s: &str) -> Option<Unit> {
        Some(match s.trim().to_ascii_lowercase().trim_end_matches('s') {
            "second" => Unit::Second,
            "minute" => Unit::Minute,
            "hour" => Unit::Hour,
            "day" => Unit::Day,
            "week" => Unit::Week,
            "month" => Unit::Month,
            "quarter" => Unit::Quarter,
            "year" => Unit::Year,
            _ => return None,
        })
    }

    /// The name `date_trunc` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Unit::Second => "second",
            Unit::Minute => "minute",
            Unit::Hour => "hour",
            Unit::Day => "day",
            Unit::Week => "week",
            Unit::Month => "month",
            Unit::Quarter => "quarter",
            Unit::Year => "year",
        }
    }

    /// One unit as an interval literal's text.
    pub(crate) fn one(self) -> &'static str {
        match self {
            Unit::Second => "1 second",
            Unit::Minute => "1 minute",
            Unit::Hour => "1 hour",
            Unit::Day => "1 day",
            Unit::Week => "1 week",
            Unit::Month => "1 month",
            Unit::Quarter => "3 months",
            Unit::Year => "1 year",
        }
    }

    /// The time window one unit spans, for bucketing.
    pub(crate) fn window(self) -> Option<TimeWindow> {
        match self {
            Unit::Hour => Some(TimeWindow::Hour),
            Unit::Day => Some(TimeWindow::Day),
            Unit::Week => Some(TimeWindow::Week),
            Unit::Month => Some(TimeWindow::Month),
            Unit::Year => Some(TimeWindow::Year),
            _ => None,
        }
    }

    /// True when every value truncated to `self` is also aligned to `finer`.
    pub(crate) fn covers(self, finer: Unit) -> bool {
        const CHAIN: [Unit; 7] = [
            Unit::Second,
            Unit::Minute,
            Unit::Hour,
            Unit::Day,
            Unit::Month,
            Unit::Quarter,
            Unit::Year,
        ];
        let rank = |u: Unit| CHAIN.iter().position(|c| *c == u);
        match (self, finer) {
            (a, b) if a == b => true,
            (Unit::Week, b) => rank(b).is_some_and(|r| r <= 3),
            (_, Unit::Week) => false,
            (a, b) => rank(a) >= rank(b),
        }
    }
}

impl Solver<'_> {
    /// The layers of `e` down to its column, outermost first; the reason when a node is none of
    /// the invertible or monotone steps.
    pub(crate) fn peel<'e>(&mut self, e: &'e Expr) -> Result<Vec<Layer<'e>>, String> {
        let mut layers = Vec::new();
        let mut cur = e;
        loop {
            if layers.len() > MAX_LAYERS {
                return Err(format!("more than {MAX_LAYERS} operations on the column"));
            }
            let (layer, inner) = match cur {
                Expr::Identifier(_) | Expr::CompoundIdentifier(_) => return Ok(layers),
                Expr::Nested(x)
                | Expr::UnaryOp {
                    op: UnaryOperator::Plus,
                    expr: x,
                } => {
                    cur = x;
                    continue;
                }
                Expr::UnaryOp {
                    op: UnaryOperator::Minus,
                    expr,
                } => (Layer::Neg, expr.as_ref()),
                Expr::BinaryOp { left, op, right } => binary(left, op, right)?,
                Expr::Cast {
                    kind: CastKind::Cast | CastKind::DoubleColon,
                    expr,
                    data_type,
                    format: None,
                } => (Layer::Cast(data_type), expr.as_ref()),
                Expr::Extract {
                    field: DateTimeField::Epoch,
                    expr,
                    ..
                } => (Layer::Epoch, expr.as_ref()),
                // pg_stat_statements shows the field as a placeholder (read as `'$n'`): it
                // may have been epoch, but which field it was is not known.
                Expr::Extract {
                    field: DateTimeField::Custom(f),
                    ..
                } if f.value.starts_with('$') => {
                    return Err(format!(
                        "the field of extract({} …) is hidden by pg_stat_statements' normalization: not known to be monotone in the column",
                        f.value
                    ))
                }
                Expr::Extract { field, .. } => {
                    return Err(format!(
                        "extract({field} …) is not monotone in the column (it wraps around)"
                    ))
                }
                Expr::Function(f) => self.function(f)?,
                other => return Err(format!("{} is not invertible", kind_of(other))),
            };
            layers.push(layer);
            cur = inner;
        }
    }

    /// `date_trunc('unit', f)`; every other function is not invertible, with the reason.
    fn function<'e>(&mut self, f: &'e Function) -> Result<(Layer<'e>, &'e Expr), String> {
        let name = bare_name(&f.name);
        let args: Vec<&Expr> = match &f.args {
            FunctionArguments::List(l) if f.over.is_none() && f.filter.is_none() => l
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Some(x),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        match (name.as_str(), args.as_slice()) {
            ("date_trunc", [unit, inner]) if column_paths(unit).is_empty() => {
                let text = self.literal_of(unit).and_then(|u| string_of(&u));
                match text.as_deref().and_then(Unit::parse) {
                    Some(u) => Ok((Layer::Trunc(u), inner)),
                    None => Err(format!(
                        "date_trunc unit {unit} is not a unit read from the SQL or its example"
                    )),
                }
            }
            ("date_trunc", _) => Err("date_trunc with a time zone argument".into()),
            ("lower" | "upper" | "initcap", _) => Err(format!(
                "{name}() folds case: several values of the column give one value"
            )),
            ("coalesce" | "nullif", _) => Err(format!(
                "{name}() is not strict: it maps NULL to a value or a value to NULL"
            )),
            ("date_part", _) => Err(
                "date_part() computes in double precision (it rounds); extract(epoch …) does not"
                    .into(),
            ),
            _ => Err(format!("{name}() is not invertible")),
        }
    }
}

/// The column side of `left op right` and the layer around it.
fn binary<'e>(
    left: &'e Expr,
    op: &BinaryOperator,
    right: &'e Expr,
) -> Result<(Layer<'e>, &'e Expr), String> {
    let col_left = !column_paths(left).is_empty();
    let (col, other) = if col_left {
        (left, right)
    } else {
        (right, left)
    };
    Ok(match (op, col_left) {
        (BinaryOperator::Plus, _) => (Layer::Add(other), col),
        (BinaryOperator::Minus, true) => (Layer::Sub(other), col),
        (BinaryOperator::Minus, false) => (Layer::SubFrom(other), col),
        (BinaryOperator::Multiply, _) => (Layer::Mul(other), col),
        (BinaryOperator::Divide, true) => (Layer::Div(other), col),
        (BinaryOperator::Divide, false) => {
            return Err("dividing by the column is not monotone across zero".into())
        }
        (BinaryOperator::StringConcat, _) => {
            return Err("|| (concatenation) does not map onto a range of the column".into())
        }
        (BinaryOperator::Modulo, _) => return Err("% is not monotone (it wraps around)".into()),
        (op, _) => return Err(format!("the operator {op} is not invertible")),
    })
}

/// The text of a string literal.
pub(crate) fn string_of(e: &Expr) -> Option<String> {
    match e {
        Expr::Nested(x) => string_of(x),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A short name for an expression kind, for reasons.
fn kind_of(e: &Expr) -> String {
    match e {
        Expr::Case { .. } => "CASE".into(),
        Expr::AtTimeZone { .. } => "AT TIME ZONE".into(),
        Expr::Collate { .. } => "COLLATE".into(),
        Expr::Subquery(_) => "a subquery".into(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(40) {
                Some((i, _)) => format!("{}…", &text[..i]),
                None => text,
            }
        }
    }
}
