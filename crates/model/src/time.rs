//! Calendar arithmetic and time-zone names every stage shares (designer buckets, analyzer
//! windows, backfill conversions): one home, so that a day number means the same everywhere.

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
}
