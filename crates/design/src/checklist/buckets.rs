//! Time buckets of a window read: the bind that lists every bucket between a range's bounds,
//! the proof that a window lies in one bucket, and how many buckets the example window spans.
//!
//! A bucketed table (`((store_id, placed_date = day(placed_at)), …)`) holds the rows of one
//! bucket per partition. A read `placed_at >= $2 AND placed_at < $3` must read every bucket
//! from the one `$2` falls in to the one `$3` falls in: the bucket of the lower bound alone
//! would return only the rows before the first boundary the window crosses. Only a window the
//! SQL itself confines to one bucket (`>= d::date AND < d::date + 1`, cut in the bucket's zone)
//! is read as the one bucket of its lower bound; the validator holds the designer to that.

use remodel_model::time::{civil_from_days, days_from_civil, is_utc};
use remodel_model::{
    BinaryOp, BindValue, Bucket, Expr, Function, Literal, Parameter, RangeBound, RangePredicate,
    ScalarType,
};

/// The time zones buckets depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zones {
    /// The application's session zone: an instant written without an offset (a date, a
    /// timestamp literal) is read in it.
    pub session: String,
    /// The zone bucket columns are cut in.
    pub buckets: String,
}

impl Default for Zones {
    fn default() -> Self {
        Zones {
            session: "UTC".into(),
            buckets: "UTC".into(),
        }
    }
}

/// The bind of a bucket column for a read of the window `r` (both bounds typed): the one
/// bucket of the lower bound when [`one_bucket`] proves the window lies in it, else every
/// bucket between the bounds. `None` when a bound is missing or untyped (no bucketed read).
pub fn bind(
    r: &RangePredicate,
    b: Bucket,
    zones: &Zones,
    params: &[Parameter],
) -> Option<BindValue> {
    let lower = r.lower.as_ref()?.expr.clone()?;
    let upper = r.upper.as_ref()?;
    let upper_expr = upper.expr.clone()?;
    if one_bucket(r, b, zones, params) {
        return Some(BindValue::Bucket {
            bucket: b,
            of: Box::new(BindValue::Expr { expr: lower }),
            time_zone: zones.buckets.clone(),
        });
    }
    Some(BindValue::Buckets {
        bucket: b,
        time_zone: zones.buckets.clone(),
        lower: Box::new(BindValue::Expr { expr: lower }),
        upper: Box::new(BindValue::Expr { expr: upper_expr }),
        upper_exclusive: !upper.inclusive,
    })
}

/// True when the SQL confines the window to one bucket whatever the parameters: the lower
/// bound is the first instant of a bucket (a date, or `date_trunc` to the bucket's unit, read
/// in the session zone, which is the buckets' zone), included, and the upper bound is exactly
/// one bucket later, excluded.
pub fn one_bucket(r: &RangePredicate, b: Bucket, zones: &Zones, params: &[Parameter]) -> bool {
    let (Some(lower), Some(upper)) = (&r.lower, &r.upper) else {
        return false;
    };
    let (Some(l), Some(u)) = (&lower.expr, &upper.expr) else {
        return false;
    };
    if r.prefix || !lower.inclusive || upper.inclusive || !same_zone(&zones.session, &zones.buckets)
    {
        return false;
    }
    let Expr::Binary {
        op: BinaryOp::Add,
        left,
        right,
    } = u
    else {
        return false;
    };
    **left == *l && aligned(l, b, params) && one_unit(right, b, is_date(l, params))
}

/// True when two zone names are one zone: the same name in any case, or two names of UTC
/// (`Etc/UTC`, the zone a Postgres server often reports, is the buckets' default `UTC`).
fn same_zone(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b) || (is_utc(a) && is_utc(b))
}

/// True when `e` is the first instant of a bucket of width `b` in the session zone.
fn aligned(e: &Expr, b: Bucket, params: &[Parameter]) -> bool {
    match e {
        Expr::Call {
            function: Function::DateTrunc,
            args,
        } => matches!(
            args.first(),
            Some(Expr::Literal { value: Literal::Text { value } }) if value.eq_ignore_ascii_case(b.name())
        ),
        _ => b == Bucket::Day && is_date(e, params),
    }
}

/// True when `e` is typed `date` (a date is midnight of the session zone as an instant).
fn is_date(e: &Expr, params: &[Parameter]) -> bool {
    match e {
        Expr::Cast { to, .. } => *to == ScalarType::Date,
        Expr::Literal {
            value: Literal::Date { .. },
        } => true,
        Expr::Param { n } => params
            .iter()
            .any(|p| p.n == *n && p.sql_type == Some(ScalarType::Date)),
        _ => false,
    }
}

/// True when `e` is one bucket's width: an interval literal (`interval '1 day'`), or `1` added
/// to a date (one day).
fn one_unit(e: &Expr, b: Bucket, date: bool) -> bool {
    match e {
        Expr::Literal {
            value:
                Literal::Interval {
                    months,
                    days,
                    micros,
                },
        } => match b {
            Bucket::Hour => (*months, *days, *micros) == (0, 0, 3_600_000_000),
            Bucket::Day => (*months, *days, *micros) == (0, 1, 0),
            Bucket::Month => (*months, *days, *micros) == (1, 0, 0),
        },
        Expr::Literal {
            value: Literal::Integer { value: 1 },
        } => date && b == Bucket::Day,
        _ => false,
    }
}

/// How many buckets the window of the example statement spans (its bounds' example values,
/// read as the parameters' literals), when both are instants the designer can place: written
/// with an offset (buckets cut in UTC) or without one (read in the session zone, which is the
/// buckets' zone).
pub fn example_count(
    r: &RangePredicate,
    b: Bucket,
    zones: &Zones,
    params: &[Parameter],
) -> Option<u32> {
    let lower = r.lower.as_ref()?;
    let upper = r.upper.as_ref()?;
    let lo = example_instant(lower, params, zones)?;
    let hi = example_instant(upper, params, zones)?;
    // An excluded upper bound on a bucket's first instant needs nothing of that bucket.
    let last = if upper.inclusive { hi } else { hi - 1 };
    let (first, last) = (index(lo, b), index(last, b));
    u32::try_from(last - first + 1).ok().filter(|n| *n >= 1)
}

/// The example value of a bound in microseconds since the epoch on the buckets' calendar.
fn example_instant(bound: &RangeBound, params: &[Parameter], zones: &Zones) -> Option<i64> {
    let text = match (&bound.example, &bound.expr) {
        (Some(ex), _) => ex.clone(),
        (None, Some(Expr::Param { n })) => params
            .iter()
            .find(|p| p.n == *n)?
            .replaced_literal
            .clone()?,
        (
            None,
            Some(Expr::Literal {
                value:
                    Literal::Date { value }
                    | Literal::Timestamptz { value }
                    | Literal::Timestamp { value },
            }),
        ) => value.clone(),
        _ => return None,
    };
    let (micros, offset) = parse_instant(&text)?;
    match offset {
        // Written with an offset: an instant, placed on the UTC calendar.
        Some(off) if zones.buckets == "UTC" => Some(micros - off * 1_000_000),
        Some(_) => None,
        // Without one: a wall-clock time of the session zone.
        None if zones.session == zones.buckets => Some(micros),
        None => None,
    }
}

/// The bucket index of an instant (microseconds on the buckets' calendar).
fn index(micros: i64, b: Bucket) -> i64 {
    const HOUR: i64 = 3_600_000_000;
    match b {
        Bucket::Hour => micros.div_euclid(HOUR),
        Bucket::Day => micros.div_euclid(24 * HOUR),
        Bucket::Month => {
            let (y, m, _) = civil_from_days(micros.div_euclid(24 * HOUR));
            y * 12 + i64::from(m) - 1
        }
    }
}

/// Parses `'2025-01-15'`, `'2025-01-15 20:00:00+01'`, `TIMESTAMPTZ '…'`, `'…'::date`: the
/// wall-clock microseconds since 1970-01-01 and the offset in seconds when one is written.
fn parse_instant(sql: &str) -> Option<(i64, Option<i64>)> {
    let start = sql.find('\'')?;
    let end = sql.rfind('\'')?;
    if end <= start {
        return None;
    }
    let text = sql[start + 1..end].trim();
    let (date, rest) = text.split_at(text.find([' ', 'T']).unwrap_or(text.len()));
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: u32 = d.next()?.parse().ok()?;
    let day: u32 = d.next()?.parse().ok()?;
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(y, m, day);
    let rest = rest.trim_start_matches([' ', 'T']);
    let (clock, offset) = split_offset(rest)?;
    let mut secs = 0i64;
    let mut micros = 0i64;
    if !clock.is_empty() {
        let mut parts = clock.split(':');
        let h: i64 = parts.next()?.parse().ok()?;
        let min: i64 = parts.next().unwrap_or("0").parse().ok()?;
        let sec_text = parts.next().unwrap_or("0");
        let (s, frac) = sec_text.split_once('.').unwrap_or((sec_text, ""));
        let s: i64 = s.parse().ok()?;
        let digits: String = frac.chars().take(6).collect();
        micros = if digits.is_empty() {
            0
        } else {
            format!("{digits:0<6}").parse().ok()?
        };
        secs = h * 3600 + min * 60 + s;
    }
    Some(((days * 86_400 + secs) * 1_000_000 + micros, offset))
}

/// Splits `20:00:00+01:30` into the clock and the offset in seconds (`Z`, `UTC`, `±HH`,
/// `±HH:MM`, `±HHMM`).
fn split_offset(rest: &str) -> Option<(&str, Option<i64>)> {
    let rest = rest.trim();
    for suffix in ["Z", " UTC", "UTC", "+00"] {
        if let Some(clock) = rest.strip_suffix(suffix) {
            return Some((clock.trim(), Some(0)));
        }
    }
    let Some(at) = rest.rfind(['+', '-']) else {
        return Some((rest, None));
    };
    let (clock, off) = rest.split_at(at);
    let sign = if off.starts_with('-') { -1 } else { 1 };
    let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
    let (h, m) = match digits.len() {
        2 => (digits.parse::<i64>().ok()?, 0),
        4 => (
            digits[..2].parse::<i64>().ok()?,
            digits[2..].parse::<i64>().ok()?,
        ),
        _ => return None,
    };
    Some((clock.trim(), Some(sign * (h * 3600 + m * 60))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::ColumnRef;

    fn window(lo: &str, hi: &str, upper_inclusive: bool) -> RangePredicate {
        let bound = |v: &str, n: u32, inclusive: bool| RangeBound {
            inclusive,
            value: format!("${n}"),
            example: Some(v.to_string()),
            expr: Some(Expr::param(n)),
        };
        RangePredicate {
            column: ColumnRef::new("orders", "placed_at"),
            lower: Some(bound(lo, 2, true)),
            upper: Some(bound(hi, 3, upper_inclusive)),
            prefix: false,
            rewritten_from: Vec::new(),
            window: None,
        }
    }

    #[test]
    fn the_example_window_counts_every_bucket_it_touches() {
        let z = Zones::default();
        let count = |lo: &str, hi: &str, inc: bool, b: Bucket| {
            example_count(&window(lo, hi, inc), b, &z, &[])
        };
        // Midnight to midnight, the upper bound excluded: one day.
        assert_eq!(
            count("'2025-01-15'", "'2025-01-16'", false, Bucket::Day),
            Some(1)
        );
        assert_eq!(
            count("'2025-01-15'", "'2025-01-16'", true, Bucket::Day),
            Some(2)
        );
        // 20:00 → 04:00 UTC crosses midnight: two days.
        assert_eq!(
            count(
                "'2025-01-15 20:00:00+00'",
                "'2025-01-16 04:00:00+00'",
                false,
                Bucket::Day
            ),
            Some(2)
        );
        // Local midnight in Berlin is 23:00 UTC the day before.
        assert_eq!(
            count(
                "'2025-01-15 00:00:00+01'",
                "'2025-01-16 00:00:00+01'",
                false,
                Bucket::Day
            ),
            Some(2)
        );
        assert_eq!(
            count("'2024-12-31'", "'2025-03-01'", false, Bucket::Month),
            Some(3)
        );
        assert_eq!(
            count(
                "'2025-01-15 10:30'",
                "'2025-01-15 12:00'",
                false,
                Bucket::Hour
            ),
            Some(2)
        );
        assert_eq!(count("$2", "'2025-01-16'", false, Bucket::Day), None);
    }

    #[test]
    fn only_a_window_the_sql_confines_is_one_bucket() {
        let z = Zones::default();
        let date = |n| Expr::Cast {
            arg: Box::new(Expr::param(n)),
            to: ScalarType::Date,
        };
        let mut r = window("'2025-01-15'", "'2025-01-16'", false);
        r.lower.as_mut().unwrap().expr = Some(date(2));
        r.upper.as_mut().unwrap().expr = Some(Expr::binary(
            BinaryOp::Add,
            date(2),
            Expr::Literal {
                value: Literal::Integer { value: 1 },
            },
        ));
        assert!(one_bucket(&r, Bucket::Day, &z, &[]));
        assert!(matches!(
            bind(&r, Bucket::Day, &z, &[]),
            Some(BindValue::Bucket { .. })
        ));
        // In another zone than the session's, a date's midnight is not a bucket's first instant.
        let berlin = Zones {
            session: "UTC".into(),
            buckets: "Europe/Berlin".into(),
        };
        assert!(!one_bucket(&r, Bucket::Day, &berlin, &[]));
        // A source whose TimeZone reads `Etc/UTC` cuts days as the buckets' `UTC` does.
        let etc_utc = Zones {
            session: "Etc/UTC".into(),
            buckets: "UTC".into(),
        };
        assert!(one_bucket(&r, Bucket::Day, &etc_utc, &[]));
        // Two parameters: nothing confines the window, whatever the example shows.
        let open = window("'2025-01-15'", "'2025-01-16'", false);
        assert!(!one_bucket(&open, Bucket::Day, &z, &[]));
        assert!(matches!(
            bind(&open, Bucket::Day, &z, &[]),
            Some(BindValue::Buckets {
                upper_exclusive: true,
                ..
            })
        ));
        // An open upper bound: no bucketed read at all.
        let mut half = open.clone();
        half.upper = None;
        assert_eq!(bind(&half, Bucket::Day, &z, &[]), None);
    }
}
