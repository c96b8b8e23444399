//! Calendar arithmetic between Postgres' epoch (2000-01-01), the Unix epoch and ISO-8601 text:
//! enough to convert dates and timestamps exactly without a date crate (the calendar and the
//! reading of timestamp text are `remodel_model::time`'s).

/// Days from 1970-01-01 to 2000-01-01 (Postgres' epoch).
pub const PG_EPOCH_DAYS: i64 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * 86_400 * 1_000_000;
pub use remodel_model::time::{
    civil_from_days, days_from_civil, days_in_month, parse_date, parse_time, parse_timestamp,
};

/// Nanoseconds in a day.
pub const DAY_NANOS: i64 = 86_400 * 1_000_000_000;

/// `YYYY-MM-DD` of a day count since 1970-01-01.
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD HH:MM:SS.mmmZ` of milliseconds since the Unix epoch.
pub fn format_timestamp_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    format!(
        "{} {}Z",
        format_date(days),
        format_time_nanos(rest * 1_000_000)
    )
}

/// `HH:MM:SS.fff` of nanoseconds since midnight (fraction only as long as needed).
pub fn format_time_nanos(ns: i64) -> String {
    let secs = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    let hms = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac == 0 {
        hms
    } else if frac % 1_000_000 == 0 {
        format!("{hms}.{:03}", frac / 1_000_000)
    } else {
        format!("{hms}.{frac:09}")
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC) of seconds since the Unix epoch.
pub fn format_rfc3339(secs: i64) -> String {
    format!(
        "{}T{}Z",
        format_date(secs.div_euclid(86_400)),
        format_time_nanos(secs.rem_euclid(86_400) * 1_000_000_000)
    )
}

/// Seconds since the Unix epoch now (0 on a clock set before 1970).
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Microseconds since the Unix epoch now (0 on a clock set before 1970): the clock a row's TTL
/// counts from.
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Parses an ISO-8601 timestamp as Postgres' JSON functions print it
/// (`2024-03-01T10:00:00.5+01:00`, `…Z`, or no offset meaning UTC) to Unix milliseconds,
/// rounding sub-millisecond digits down like the binary path does.
pub fn parse_timestamp_ms(text: &str) -> Option<i64> {
    Some(parse_timestamp(text)?.utc_micros()?.div_euclid(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trips_around_the_epochs() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), PG_EPOCH_DAYS);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(1900, 3, 1), -25_508);
        for z in [-800_000, -1, 0, 1, 59, 60, 11_016, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(format_date(-25_508), "1900-03-01");
    }

    #[test]
    fn iso_timestamps_parse_with_offsets() {
        assert_eq!(parse_timestamp_ms("1970-01-01T00:00:00"), Some(0));
        assert_eq!(parse_timestamp_ms("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_timestamp_ms("1969-12-31T23:59:59.9995Z"), Some(-1));
        assert_eq!(
            parse_timestamp_ms("2024-02-29T12:30:00.123456-05:30"),
            Some(1_709_229_600_123)
        );
        assert_eq!(parse_timestamp_ms("2024-02-30T00:00:00"), None);
        assert_eq!(format_timestamp_ms(-1), "1969-12-31 23:59:59.999Z");
        assert_eq!(format_rfc3339(1_777_885_200), "2026-05-04T09:00:00Z");
        assert_eq!(parse_time("23:59:59.000001"), Some(86_399_000_001_000));
    }
}
