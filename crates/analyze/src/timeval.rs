//! A tiny evaluator of time expressions, enough to recognise fixed windows in range bounds:
//! `'2025-01-15'` .. `'2025-01-16'`, `$1` .. `$1 + interval '1 day'`,
//! `timestamptz '2025-01-01' + make_interval(days => 18)` .. `… (days => 18 + 1)`.

use remodel_model::time::{civil_from_days, days_from_civil, days_in_month};
use remodel_model::TimeWindow;
use sqlparser::ast::{
    BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// A calendar timestamp: days since 1970-01-01 and seconds into the day (time zone ignored:
/// both bounds of a window are written in the same zone).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ts {
    days: i64,
    secs: f64,
}

/// An interval in Postgres' three parts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Iv {
    months: i64,
    days: i64,
    secs: f64,
}

#[derive(Debug, Clone, PartialEq)]
enum Tv {
    Num(f64),
    Str(String),
    Ts(Ts),
    Iv(Iv),
}

/// One of each window unit as an interval.
const WINDOW_UNITS: [(Iv, TimeWindow); 5] = [
    (
        Iv {
            months: 0,
            days: 0,
            secs: 3600.0,
        },
        TimeWindow::Hour,
    ),
    (
        Iv {
            months: 0,
            days: 1,
            secs: 0.0,
        },
        TimeWindow::Day,
    ),
    (
        Iv {
            months: 0,
            days: 7,
            secs: 0.0,
        },
        TimeWindow::Week,
    ),
    (
        Iv {
            months: 1,
            days: 0,
            secs: 0.0,
        },
        TimeWindow::Month,
    ),
    (
        Iv {
            months: 12,
            days: 0,
            secs: 0.0,
        },
        TimeWindow::Year,
    ),
];

/// The window between two bounds given as SQL expressions, when they differ by exactly one unit.
pub fn window_between(lower: &str, upper: &str) -> Option<TimeWindow> {
    let lo = parse_expr(lower)?;
    let hi = parse_expr(upper)?;
    // Structural: `upper` is `lower + interval` (placeholders allowed).
    if let Expr::BinaryOp {
        left,
        op: BinaryOperator::Plus,
        right,
    } = &hi
    {
        if left.to_string() == lo.to_string() {
            match eval(right) {
                Some(Tv::Iv(iv)) => return unit_of(iv),
                // `d::date .. d::date + 1`: integer days added to a date.
                Some(Tv::Num(n)) if n == 1.0 && is_date(left) => return Some(TimeWindow::Day),
                Some(Tv::Num(n)) if n == 7.0 && is_date(left) => return Some(TimeWindow::Week),
                _ => {}
            }
        }
    }
    let lo = as_ts(eval(&lo)?)?;
    let hi = as_ts(eval(&hi)?)?;
    WINDOW_UNITS
        .iter()
        .find(|(iv, _)| add(lo, *iv) == hi)
        .map(|(_, w)| *w)
}

/// The months, days and seconds of an interval literal (`interval '14 days'`,
/// `'1 mon'::interval`, `make_interval(days => 3)`), when the expression is one.
pub(crate) fn interval_parts(e: &Expr) -> Option<(i64, i64, f64)> {
    match eval(e)? {
        Tv::Iv(iv) => Some((iv.months, iv.days, iv.secs)),
        _ => None,
    }
}

/// True for an expression typed as a date (`$1::date`, `DATE '…'`, `CAST(… AS date)`).
fn is_date(e: &Expr) -> bool {
    match e {
        Expr::Nested(inner) => is_date(inner),
        Expr::Cast { data_type, .. } => matches!(data_type, DataType::Date),
        Expr::TypedString(t) => matches!(t.data_type, DataType::Date),
        _ => false,
    }
}

/// Parses one expression with the Postgres dialect.
pub(crate) fn parse_expr(sql: &str) -> Option<Expr> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .ok()?
        .parse_expr()
        .ok()
}

fn unit_of(iv: Iv) -> Option<TimeWindow> {
    const DAY_IN_SECONDS: Iv = Iv {
        months: 0,
        days: 0,
        secs: 86400.0,
    };
    if iv == DAY_IN_SECONDS {
        return Some(TimeWindow::Day);
    }
    WINDOW_UNITS.iter().find(|(u, _)| *u == iv).map(|(_, w)| *w)
}

fn eval(e: &Expr) -> Option<Tv> {
    match e {
        Expr::Nested(inner) => eval(inner),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok().map(Tv::Num),
            Value::SingleQuotedString(s) => Some(Tv::Str(s.clone())),
            _ => None,
        },
        Expr::TypedString(t) => {
            let s = match &t.value.value {
                Value::SingleQuotedString(s) => s.clone(),
                _ => return None,
            };
            coerce(Tv::Str(s), &t.data_type)
        }
        Expr::Cast {
            expr, data_type, ..
        } => coerce(eval(expr)?, data_type),
        Expr::Interval(iv) => match eval(&iv.value)? {
            Tv::Str(s) => {
                let text = match &iv.leading_field {
                    Some(f) => format!("{s} {f}"),
                    None => s,
                };
                parse_interval(&text).map(Tv::Iv)
            }
            Tv::Num(n) => {
                let f = iv.leading_field.as_ref()?.to_string();
                parse_interval(&format!("{n} {f}")).map(Tv::Iv)
            }
            _ => None,
        },
        Expr::Function(f) => {
            let name = f.name.to_string().to_lowercase();
            if name != "make_interval" {
                return None;
            }
            let FunctionArguments::List(list) = &f.args else {
                return None;
            };
            let mut iv = Iv::default();
            let order = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
            for (i, a) in list.args.iter().enumerate() {
                let (unit, arg) = match a {
                    FunctionArg::Named { name, arg, .. } => (name.value.to_lowercase(), arg),
                    FunctionArg::ExprNamed {
                        name: Expr::Identifier(n),
                        arg,
                        ..
                    } => (n.value.to_lowercase(), arg),
                    FunctionArg::Unnamed(arg) => ((*order.get(i)?).to_string(), arg),
                    _ => return None,
                };
                let FunctionArgExpr::Expr(x) = arg else {
                    return None;
                };
                let n = as_num(eval(x)?)?;
                iv = iv_add(iv, unit_iv(&unit, n)?);
            }
            Some(Tv::Iv(iv))
        }
        Expr::BinaryOp { left, op, right } => {
            let (l, r) = (eval(left)?, eval(right)?);
            match op {
                BinaryOperator::Plus => plus(l, r),
                BinaryOperator::Minus => match r {
                    Tv::Iv(iv) => plus(l, Tv::Iv(iv_neg(iv))),
                    other => plus(l, Tv::Num(-as_num(other)?)),
                },
                BinaryOperator::Multiply => match (l, r) {
                    (Tv::Iv(iv), n) | (n, Tv::Iv(iv)) => {
                        let k = bounded(as_num(n)?)?;
                        Some(Tv::Iv(Iv {
                            months: (iv.months as f64 * k) as i64,
                            days: (iv.days as f64 * k) as i64,
                            secs: iv.secs * k,
                        }))
                    }
                    (a, b) => Some(Tv::Num(bounded(as_num(a)? * as_num(b)?)?)),
                },
                _ => None,
            }
        }
        _ => None,
    }
}

fn plus(l: Tv, r: Tv) -> Option<Tv> {
    match (l, r) {
        (Tv::Iv(a), Tv::Iv(b)) => Some(Tv::Iv(iv_add(a, b))),
        (Tv::Iv(iv), other) | (other, Tv::Iv(iv)) => Some(Tv::Ts(add(as_ts(other)?, iv))),
        // `date + integer` adds days.
        (Tv::Ts(t), n) | (n, Tv::Ts(t)) => Some(Tv::Ts(add(
            t,
            Iv {
                days: bounded(as_num(n)?)? as i64,
                ..Iv::default()
            },
        ))),
        (a, b) => Some(Tv::Num(bounded(as_num(a)? + as_num(b)?)?)),
    }
}

fn coerce(v: Tv, ty: &DataType) -> Option<Tv> {
    match ty {
        DataType::Date | DataType::Timestamp(..) | DataType::Datetime(_) => as_ts(v).map(Tv::Ts),
        DataType::Interval { .. } => match v {
            Tv::Str(s) => parse_interval(&s).map(Tv::Iv),
            other => Some(other),
        },
        DataType::Custom(name, _) if name.to_string().eq_ignore_ascii_case("timestamptz") => {
            as_ts(v).map(Tv::Ts)
        }
        _ => Some(v),
    }
}

fn as_num(v: Tv) -> Option<f64> {
    match v {
        Tv::Num(n) => Some(n),
        Tv::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_ts(v: Tv) -> Option<Ts> {
    match v {
        Tv::Ts(t) => Some(t),
        Tv::Str(s) => parse_ts(&s),
        _ => None,
    }
}

/// Largest magnitude taken from an input number: keeps the calendar arithmetic far from overflow.
const MAX_UNITS: f64 = 1e6;

fn bounded(n: f64) -> Option<f64> {
    (n.is_finite() && n.abs() <= MAX_UNITS).then_some(n)
}

fn unit_iv(unit: &str, n: f64) -> Option<Iv> {
    let n = bounded(n)?;
    let u = unit.trim_end_matches('s');
    let whole = |k: f64| k as i64;
    Some(match u {
        "year" | "yr" | "y" => Iv {
            months: whole(n * 12.0),
            ..Iv::default()
        },
        "month" | "mon" => Iv {
            months: whole(n),
            ..Iv::default()
        },
        "week" | "w" => Iv {
            days: whole(n * 7.0),
            ..Iv::default()
        },
        "day" | "d" => Iv {
            days: whole(n),
            ..Iv::default()
        },
        "hour" | "h" | "hr" => Iv {
            secs: n * 3600.0,
            ..Iv::default()
        },
        "minute" | "min" | "m" => Iv {
            secs: n * 60.0,
            ..Iv::default()
        },
        "second" | "sec" | "" => Iv {
            secs: n,
            ..Iv::default()
        },
        _ => return None,
    })
}

/// `'1 day'`, `'2 hours 30 minutes'`, `'1 mon'`, `'01:00:00'`.
fn parse_interval(s: &str) -> Option<Iv> {
    let words: Vec<&str> = s.split_whitespace().collect();
    if words.len() == 1 && words[0].contains(':') {
        return parse_hms(words[0]).map(|secs| Iv {
            secs,
            ..Iv::default()
        });
    }
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return None;
    }
    let mut iv = Iv::default();
    for pair in words.chunks(2) {
        let n: f64 = pair[0].parse().ok()?;
        iv = iv_add(iv, unit_iv(&pair[1].to_lowercase(), n)?);
    }
    Some(iv)
}

fn parse_hms(s: &str) -> Option<f64> {
    let mut it = s.split(':');
    let h: f64 = it.next()?.parse().ok()?;
    let m: f64 = it.next().map(str::parse).transpose().ok()?.unwrap_or(0.0);
    let sec: f64 = it.next().map(str::parse).transpose().ok()?.unwrap_or(0.0);
    Some(bounded(h)? * 3600.0 + bounded(m)? * 60.0 + bounded(sec)?)
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS[.f]]][zone]`, the zone ignored (both bounds of a window are
/// written alike).
fn parse_ts(s: &str) -> Option<Ts> {
    let t = remodel_model::time::parse_timestamp(s)?;
    Some(Ts {
        days: t.days,
        secs: t.nanos as f64 / 1e9,
    })
}

fn iv_add(a: Iv, b: Iv) -> Iv {
    Iv {
        months: a.months + b.months,
        days: a.days + b.days,
        secs: a.secs + b.secs,
    }
}

fn iv_neg(a: Iv) -> Iv {
    Iv {
        months: -a.months,
        days: -a.days,
        secs: -a.secs,
    }
}

fn add(t: Ts, iv: Iv) -> Ts {
    let (mut y, mut m, mut d) = civil_from_days(t.days);
    if iv.months != 0 {
        let total = y * 12 + (m as i64 - 1) + iv.months;
        y = total.div_euclid(12);
        m = (total.rem_euclid(12) + 1) as u32;
        d = d.min(days_in_month(y, m));
    }
    let mut days = days_from_civil(y, m, d) + iv.days;
    let mut secs = t.secs + iv.secs;
    let carry = (secs / 86400.0).floor();
    secs -= carry * 86400.0;
    days += carry as i64;
    Ts { days, secs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(
            window_between("'2025-01-15'", "'2025-01-16'"),
            Some(TimeWindow::Day)
        );
        assert_eq!(
            window_between("$1", "$1 + interval '1 day'"),
            Some(TimeWindow::Day)
        );
        assert_eq!(
            window_between("$1", "$1 + INTERVAL '1' HOUR"),
            Some(TimeWindow::Hour)
        );
        assert_eq!(
            window_between("$1", "$1 + interval '86400 seconds'"),
            Some(TimeWindow::Day)
        );
        assert_eq!(
            window_between("$1", "$1 + interval '1 mon'"),
            Some(TimeWindow::Month)
        );
        assert_eq!(window_between("$1", "$1 + interval '90 minutes'"), None);
        assert_eq!(
            window_between(
                "timestamptz '2025-01-01' + make_interval(days => '18')",
                "timestamptz '2025-01-01' + make_interval(days => '18' + 1)"
            ),
            Some(TimeWindow::Day)
        );
        assert_eq!(
            window_between("'2025-01-31'", "'2025-02-28'"),
            Some(TimeWindow::Month)
        );
        assert_eq!(
            window_between("'2024-02-01'", "'2024-03-01'"),
            Some(TimeWindow::Month)
        );
        assert_eq!(
            window_between("'2025-01-01 10:00'", "'2025-01-01 11:00:00+00'"),
            Some(TimeWindow::Hour)
        );
        assert_eq!(
            window_between("'2025-01-01'", "'2025-01-08'"),
            Some(TimeWindow::Week)
        );
        assert_eq!(
            window_between("'2024-01-01'", "'2025-01-01'"),
            Some(TimeWindow::Year)
        );
        assert_eq!(window_between("'2025-01-15'", "'2025-01-18'"), None);
        assert_eq!(window_between("$1", "$2"), None);
        assert_eq!(window_between("'not a date'", "'x'"), None);
        // Huge numbers are refused, not overflowed.
        assert_eq!(
            window_between("'2025-01-01 99999999999999999999:00'", "'2025-01-02'"),
            None
        );
        assert_eq!(
            window_between(
                "'2025-01-01' + make_interval(days => 9.3e18)",
                "'2025-01-01' + make_interval(days => 9.3e18 * 1e10)"
            ),
            None
        );
        assert_eq!(
            window_between(
                "DATE '2025-01-01' + 1e300",
                "DATE '2025-01-01' + interval '1e300 years'"
            ),
            None
        );
        assert_eq!(
            window_between("DATE '2025-01-15'", "DATE '2025-01-15' + 1"),
            Some(TimeWindow::Day)
        );
    }
}
