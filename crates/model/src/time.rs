//! Calendar arithmetic, timestamp literals and time-zone names every stage shares (designer
//! buckets, analyzer windows, backfill conversions, replay's executor answers): one home, so that
//! a day number and a written timestamp mean the same everywhere.

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date (year, month, day) of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days in month `m` (1–12) of year `y`, proleptic Gregorian.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// True for a zone name that is UTC all year (its offset is always zero).
pub fn is_utc(zone: &str) -> bool {
    matches!(
        zone.to_ascii_lowercase().as_str(),
        "utc"
            | "etc/utc"
            | "etc/uct"
            | "uct"
            | "zulu"
            | "etc/zulu"
            | "universal"
            | "etc/universal"
            | "gmt"
            | "etc/gmt"
            | "etc/gmt0"
            | "etc/gmt+0"
            | "etc/gmt-0"
            | "gmt0"
            | "gmt+0"
            | "gmt-0"
            | "greenwich"
            | "etc/greenwich"
    )
}

/// A timestamp as text writes it: its calendar day, its time of day and the zone it states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampText<'a> {
    /// Days since 1970-01-01 of the written date.
    pub days: i64,
    /// Nanoseconds since the written date's midnight (0 when no clock is written).
    pub nanos: i64,
    /// The zone written after the clock.
    pub zone: Zone<'a>,
}

/// The zone a timestamp's text states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone<'a> {
    /// None: a wall-clock time (of UTC where an instant is expected).
    Unstated,
    /// An offset east of UTC in seconds (`Z`, `UTC`, `±HH`, `±HHMM`, `±HH:MM[:SS]`).
    Offset(i64),
    /// Anything else after the clock, trimmed (`Europe/Berlin`, `BC`).
    Named(&'a str),
}

impl TimestampText<'_> {
    /// Microseconds since the Unix epoch of the instant, with no zone read as UTC; `None` for a
    /// named zone (which needs the tz database).
    pub fn utc_micros(&self) -> Option<i64> {
        let offset = match self.zone {
            Zone::Unstated => 0,
            Zone::Offset(secs) => secs,
            Zone::Named(_) => return None,
        };
        Some(self.days * 86_400_000_000 + self.nanos / 1000 - offset * 1_000_000)
    }
}

/// Parses `YYYY-MM-DD[( |T)H[H][:MM[:SS[.f…]]]][zone]` (what Postgres prints, ISO 8601 and what
/// SQL literals spell): the one reader of timestamp text.
pub fn parse_timestamp(text: &str) -> Option<TimestampText<'_>> {
    let text = text.trim();
    let (date, rest) = text.split_at(text.find(['T', ' ']).unwrap_or(text.len()));
    let days = parse_date(date)?;
    let rest = rest.trim_start_matches([' ', 'T']);
    let clock_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(rest.len());
    let (clock, after) = rest.split_at(clock_len);
    let nanos = if clock.is_empty() {
        0
    } else {
        parse_clock(clock)?
    };
    Some(TimestampText {
        days,
        nanos,
        zone: parse_zone(after)?,
    })
}

/// Parses `YYYY-MM-DD` to days since 1970-01-01 (a day the month does not have is refused).
pub fn parse_date(text: &str) -> Option<i64> {
    let (y, rest) = text.split_at_checked(4)?;
    let y: i64 = y.parse().ok()?;
    let rest = rest.strip_prefix('-')?;
    let (m, d) = rest.split_once('-')?;
    let (m, d): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// Parses `HH:MM:SS[.ffffff]` (all three fields) to nanoseconds since midnight.
pub fn parse_time(text: &str) -> Option<i64> {
    let fields = text.split_once('.').map_or(text, |(hms, _)| hms);
    (fields.split(':').count() == 3)
        .then(|| parse_clock(text))
        .flatten()
}

/// Parses `H[H][:MM[:SS[.f…]]]` (at most nine fraction digits) to nanoseconds since midnight.
fn parse_clock(text: &str) -> Option<i64> {
    let (hms, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut parts = hms.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    let s: i64 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    if parts.next().is_some() || h > 24 || m > 59 || s > 60 || frac.len() > 9 {
        return None;
    }
    let mut nanos: i64 = 0;
    for (i, c) in frac.chars().enumerate() {
        nanos += c.to_digit(10)? as i64 * 10i64.pow(8 - i as u32);
    }
    Some((h * 3600 + m * 60 + s) * 1_000_000_000 + nanos)
}

/// The zone written after a clock (see [`Zone`]); `None` for a malformed offset.
fn parse_zone(after: &str) -> Option<Zone<'_>> {
    let t = after.trim();
    if t.is_empty() {
        return Some(Zone::Unstated);
    }
    if t == "Z" || t.eq_ignore_ascii_case("UTC") {
        return Some(Zone::Offset(0));
    }
    let sign = match t.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return Some(Zone::Named(t)),
    };
    let digits = &t[1..];
    let fields: Vec<&str> = match digits.split(':').collect::<Vec<_>>()[..] {
        [hhmm] if hhmm.len() == 4 => vec![&hhmm[..2], &hhmm[2..]],
        ref fields if fields.len() <= 3 => fields.to_vec(),
        _ => return None,
    };
    let mut secs = 0i64;
    for (field, unit) in fields.iter().zip([3600, 60, 1]) {
        secs += field.parse::<i64>().ok()? * unit;
    }
    Some(Zone::Offset(sign * secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), 10_957);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(1900, 3, 1), -25_508);
        assert_eq!(days_from_civil(2025, 1, 15), 20_103);
        for z in [-800_000, -1, 0, 59, 365 * 30 + 7, 20_000, 2_000_000] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert!(is_utc("Etc/UTC") && !is_utc("Europe/London"));
    }

    #[test]
    fn timestamps_parse_with_their_zone() {
        let t = parse_timestamp("2024-02-29T12:30:00.123456-05:30").unwrap();
        assert_eq!(t.utc_micros(), Some(1_709_229_600_123_456));
        assert_eq!(t.zone, Zone::Offset(-(5 * 3600 + 30 * 60)));
        assert_eq!(parse_timestamp("1970-01-01").unwrap().utc_micros(), Some(0));
        assert_eq!(
            parse_timestamp("1970-01-01 01:00+0100")
                .unwrap()
                .utc_micros(),
            Some(0)
        );
        assert_eq!(
            parse_timestamp("1970-01-01 01:00+01:00:30").unwrap().zone,
            Zone::Offset(3630)
        );
        assert_eq!(
            parse_timestamp("2025-01-15 10:00Z").unwrap().zone,
            Zone::Offset(0)
        );
        let named = parse_timestamp("2025-01-15 10:00 Europe/Berlin").unwrap();
        assert_eq!(
            (named.nanos, named.zone),
            (36_000_000_000_000, Zone::Named("Europe/Berlin"))
        );
        assert_eq!(named.utc_micros(), None);
        assert_eq!(parse_timestamp("2024-02-30T00:00:00"), None);
        assert_eq!(parse_timestamp("2024-02-01T25:00:00"), None);
        assert_eq!(parse_timestamp("2024-02-01T10:00+1:2:3:4"), None);
        assert_eq!(parse_time("23:59:59.000001"), Some(86_399_000_001_000));
        assert_eq!(parse_time("23:59"), None);
    }
}
