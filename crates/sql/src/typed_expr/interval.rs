//! Interval text as Postgres reads it (`DecodeInterval`, `IntervalStyle = postgres`), exactly
//! or not at all: months, days and microseconds kept apart.
//!
//! Read: `[@] {[+-]number unit | [+-]h:mm[:ss[.f]] | number} … [ago]`, the units Postgres knows
//! (`microsecond` … `millennium` and their abbreviations, case-insensitive), a trailing bare
//! number as seconds, `ago` negating everything. A fraction is spread as Postgres spreads it
//! (`1.5 days` = 1 day 12 hours, `0.5 mon` = 15 days, `0.5 year` = 6 months) only where the
//! result is whole (no rounding happens); `1.3 years` (Postgres rounds 15.6 months) is refused,
//! as are ISO 8601 (`P1D`), SQL-standard `Y-M` forms and numbers with exponents.

use remodel_model::Literal;

/// A Postgres interval: the three fields it keeps apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Interval {
    pub months: i64,
    pub days: i64,
    pub micros: i64,
}

const MICROS_PER_SECOND: i128 = 1_000_000;
const MICROS_PER_MINUTE: i128 = 60 * MICROS_PER_SECOND;
const MICROS_PER_HOUR: i128 = 60 * MICROS_PER_MINUTE;
const MICROS_PER_DAY: i128 = 24 * MICROS_PER_HOUR;
/// Postgres spreads a fraction of a month as 30 days (`DAYS_PER_MONTH`).
const DAYS_PER_MONTH: i128 = 30;

/// A unit of interval text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

impl Unit {
    /// The unit a word names (Postgres' `deltatktbl`, lower-cased; words are cut at 10
    /// characters there, so `microseconds` is `microsecon`).
    pub(crate) fn of_word(word: &str) -> Option<Unit> {
        let w = word.to_ascii_lowercase();
        Some(match w.as_str() {
            "us" | "usec" | "usecs" | "usecond" | "useconds" | "microsecond" | "microseconds"
            | "microsecon" => Unit::Microsecond,
            "ms" | "msec" | "msecs" | "msecond" | "mseconds" | "millisecond" | "milliseconds"
            | "millisecon" => Unit::Millisecond,
            "s" | "sec" | "secs" | "second" | "seconds" => Unit::Second,
            "m" | "min" | "mins" | "minute" | "minutes" => Unit::Minute,
            "h" | "hr" | "hrs" | "hour" | "hours" => Unit::Hour,
            "d" | "day" | "days" => Unit::Day,
            "w" | "week" | "weeks" => Unit::Week,
            "mon" | "mons" | "month" | "months" => Unit::Month,
            "y" | "yr" | "yrs" | "year" | "years" => Unit::Year,
            "dec" | "decs" | "decade" | "decades" => Unit::Decade,
            "c" | "cent" | "century" | "centuries" => Unit::Century,
            "mil" | "mils" | "millennium" | "millennia" => Unit::Millennium,
            _ => return None,
        })
    }
}

/// A decimal number as written: sign, whole part and fraction digits, exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub negative: bool,
    pub whole: i128,
    /// The fraction's digits (`"5"` for `.5`).
    pub fraction: String,
}

impl Decimal {
    /// `[+-]digits[.digits]` (no exponent), at most 30 digits in all.
    pub(crate) fn parse(s: &str) -> Option<Decimal> {
        let (negative, rest) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let (whole, fraction) = rest.split_once('.').unwrap_or((rest, ""));
        if whole.is_empty() && fraction.is_empty()
            || whole.len() + fraction.len() > 30
            || !whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let whole = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        Some(Decimal {
            negative,
            whole,
            fraction: fraction.to_string(),
        })
    }

    /// `self × factor` when it is a whole number, signed; `None` when a fraction is left.
    fn times(&self, factor: i128) -> Option<i128> {
        let scale = 10i128.checked_pow(u32::try_from(self.fraction.len()).ok()?)?;
        let frac: i128 = if self.fraction.is_empty() {
            0
        } else {
            self.fraction.parse().ok()?
        };
        let scaled = frac.checked_mul(factor)?;
        if scaled % scale != 0 {
            return None;
        }
        let v = self
            .whole
            .checked_mul(factor)?
            .checked_add(scaled / scale)?;
        Some(if self.negative { -v } else { v })
    }

    /// The whole part, signed.
    fn whole_signed(&self) -> i128 {
        if self.negative {
            -self.whole
        } else {
            self.whole
        }
    }

    /// The fraction alone (signed) times `factor`, when whole.
    fn fraction_times(&self, factor: i128) -> Option<i128> {
        Decimal {
            whole: 0,
            ..self.clone()
        }
        .times(factor)
    }
}

impl Interval {
    fn add(&mut self, unit: Unit, n: &Decimal) -> Result<(), String> {
        let inexact = || {
            format!(
                "a fraction of {unit:?} that Postgres would round (not a whole number of the next unit)"
            )
            .to_lowercase()
        };
        let micros = |factor: i128| n.times(factor).ok_or_else(inexact);
        let (months, days, us): (i128, i128, i128) = match unit {
            Unit::Microsecond => (0, 0, micros(1)?),
            Unit::Millisecond => (0, 0, micros(1000)?),
            Unit::Second => (0, 0, micros(MICROS_PER_SECOND)?),
            Unit::Minute => (0, 0, micros(MICROS_PER_MINUTE)?),
            Unit::Hour => (0, 0, micros(MICROS_PER_HOUR)?),
            Unit::Day => {
                let us = n.fraction_times(MICROS_PER_DAY).ok_or_else(inexact)?;
                (0, n.whole_signed(), us)
            }
            Unit::Week => {
                // Whole weeks are days; a fraction of a week is days, then time.
                let us = n.fraction_times(7 * MICROS_PER_DAY).ok_or_else(inexact)?;
                let days = n.whole_signed() * 7 + us / MICROS_PER_DAY;
                (0, days, us % MICROS_PER_DAY)
            }
            Unit::Month => {
                // A fraction of a month is 30 days a month, then time.
                let us = n
                    .fraction_times(DAYS_PER_MONTH * MICROS_PER_DAY)
                    .ok_or_else(inexact)?;
                (n.whole_signed(), us / MICROS_PER_DAY, us % MICROS_PER_DAY)
            }
            Unit::Year => (whole_months(n, 12).ok_or_else(inexact)?, 0, 0),
            Unit::Decade => (whole_months(n, 120).ok_or_else(inexact)?, 0, 0),
            Unit::Century => (whole_months(n, 1200).ok_or_else(inexact)?, 0, 0),
            Unit::Millennium => (whole_months(n, 12000).ok_or_else(inexact)?, 0, 0),
        };
        let overflow = || "the interval is out of range".to_string();
        self.months = checked(self.months, months).ok_or_else(overflow)?;
        self.days = checked(self.days, days).ok_or_else(overflow)?;
        self.micros = checked(self.micros, us).ok_or_else(overflow)?;
        Ok(())
    }

    /// The model's literal; `Err` when a field does not fit Postgres' range (months and days
    /// are 32-bit there).
    pub(crate) fn literal(self) -> Result<Literal, String> {
        let months = i32::try_from(self.months).map_err(|_| "the interval is out of range")?;
        let days = i32::try_from(self.days).map_err(|_| "the interval is out of range")?;
        Ok(Literal::Interval {
            months,
            days,
            micros: self.micros,
        })
    }

    fn negated(self) -> Interval {
        Interval {
            months: -self.months,
            days: -self.days,
            micros: -self.micros,
        }
    }
}

/// `n × months_per_unit` months, when whole.
fn whole_months(n: &Decimal, months_per_unit: i128) -> Option<i128> {
    n.times(months_per_unit)
}

fn checked(a: i64, b: i128) -> Option<i64> {
    i64::try_from(i128::from(a).checked_add(b)?).ok()
}

/// Reads interval text (`'14 days'`, `'1 day 02:00:00'`, `'-1:30'`, `'1.5 hours'`).
pub(crate) fn parse(text: &str) -> Result<Interval, String> {
    let refuse = |why: &str| Err(format!("interval '{text}': {why}"));
    let mut words: Vec<&str> = text.split_whitespace().collect();
    if words.first() == Some(&"@") {
        words.remove(0);
    }
    let ago = words.last().is_some_and(|w| w.eq_ignore_ascii_case("ago"));
    if ago {
        words.pop();
    }
    if words.is_empty() {
        return refuse("no value");
    }
    let mut iv = Interval::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if w.contains(':') {
            let us =
                time_field(w).ok_or_else(|| format!("interval '{text}': {w} is not h:mm[:ss]"))?;
            iv.micros =
                checked(iv.micros, us).ok_or_else(|| format!("interval '{text}': out of range"))?;
            i += 1;
            continue;
        }
        let Some(n) = Decimal::parse(w) else {
            return refuse(&format!("{w} is not a number Postgres reads here exactly"));
        };
        match words.get(i + 1) {
            Some(u) => {
                let Some(unit) = Unit::of_word(u) else {
                    return refuse(&format!("{u} is not a unit"));
                };
                iv.add(unit, &n)
                    .map_err(|e| format!("interval '{text}': {e}"))?;
                i += 2;
            }
            None => {
                // A trailing bare number is seconds.
                iv.add(Unit::Second, &n)
                    .map_err(|e| format!("interval '{text}': {e}"))?;
                i += 1;
            }
        }
    }
    Ok(if ago { iv.negated() } else { iv })
}

/// `INTERVAL 'n' unit` (SQL standard): a whole number of the unit (a fraction of `SECOND`);
/// anything else is refused, since Postgres cuts the value to the unit (`INTERVAL '1.5' DAY` is
/// one day, `INTERVAL '1 day 2 hours' DAY` too).
pub(crate) fn with_field(
    text: &str,
    field: &sqlparser::ast::DateTimeField,
) -> Result<Interval, String> {
    use sqlparser::ast::DateTimeField as F;
    let unit = match field {
        F::Year | F::Years => Unit::Year,
        F::Month | F::Months => Unit::Month,
        F::Day | F::Days => Unit::Day,
        F::Hour | F::Hours => Unit::Hour,
        F::Minute | F::Minutes => Unit::Minute,
        F::Second | F::Seconds => Unit::Second,
        other => {
            return Err(format!(
                "INTERVAL '{text}' {other}: a field the model does not read"
            ))
        }
    };
    let n = Decimal::parse(text.trim())
        .filter(|n| n.fraction.is_empty() || unit == Unit::Second)
        .ok_or_else(|| format!("INTERVAL '{text}' {field}: not a whole number of the unit"))?;
    let mut iv = Interval::default();
    iv.add(unit, &n)?;
    Ok(iv)
}

/// `[+-]h:mm[:ss[.f]]` in microseconds, signed (the sign applies to every part). The two-part
/// form with a fraction (`1:30.5`, read by Postgres as minutes and seconds) is refused.
fn time_field(w: &str) -> Option<i128> {
    let (negative, rest) = match w.as_bytes().first()? {
        b'-' => (true, &w[1..]),
        b'+' => (false, &w[1..]),
        _ => (false, w),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    let (h, m, s) = match parts.as_slice() {
        [h, m] if digits(h) && digits(m) => (*h, *m, "0"),
        [h, m, s] if digits(h) && digits(m) => (*h, *m, *s),
        _ => return None,
    };
    let h: i128 = h.parse().ok()?;
    let m: i128 = m.parse().ok()?;
    if m > 59 {
        return None;
    }
    let sec = Decimal::parse(s).filter(|d| !d.negative && !s.starts_with('+'))?;
    if sec.whole > 59 || sec.fraction.len() > 6 {
        return None;
    }
    let us = h * MICROS_PER_HOUR + m * MICROS_PER_MINUTE + sec.times(MICROS_PER_SECOND)?;
    Some(if negative { -us } else { us })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(months: i64, days: i64, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    #[test]
    fn reads_postgres_interval_text() {
        let h = 3_600_000_000;
        for (text, want) in [
            ("14 days", iv(0, 14, 0)),
            ("1 day", iv(0, 1, 0)),
            ("2 hours 30 minutes", iv(0, 0, 2 * h + h / 2)),
            ("1 mon", iv(1, 0, 0)),
            ("1 Month 2 DAYS", iv(1, 2, 0)),
            ("01:00:00", iv(0, 0, h)),
            ("-1:30", iv(0, 0, -(h + h / 2))),
            ("1 day 02:00:00.5", iv(0, 1, 2 * h + 500_000)),
            ("1.5 days", iv(0, 1, 12 * h)),
            ("-1.5 days", iv(0, -1, -12 * h)),
            ("1.5 weeks", iv(0, 10, 12 * h)),
            ("0.5 mon", iv(0, 15, 0)),
            ("0.1 mon", iv(0, 3, 0)),
            ("0.5 years", iv(6, 0, 0)),
            ("1 year -2 mons", iv(10, 0, 0)),
            ("1 mon -2 days 3 microseconds", iv(1, -2, 3)),
            ("1 day ago", iv(0, -1, 0)),
            ("@ 2 hours ago", iv(0, 0, -2 * h)),
            ("14", iv(0, 0, 14_000_000)),
            ("1 day 3", iv(0, 1, 3_000_000)),
            ("90 minutes", iv(0, 0, 90 * 60_000_000)),
            ("1 millisecond", iv(0, 0, 1000)),
            ("2 decades", iv(240, 0, 0)),
        ] {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
        for text in [
            "",
            "P1D",
            "1-2",
            "1.3 years",
            "1e3 days",
            "1 fortnight",
            "0.0000001 seconds",
            "1:30.5",
            "1:60",
            "99999999999 days",
        ] {
            assert!(parse(text).and_then(Interval::literal).is_err(), "{text}");
        }
    }
}
