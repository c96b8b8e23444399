//! Replay's clock: one `now` per run, so that a replay is a function of its seed (or of
//! `--now`) and not of the day it runs.
//!
//! Every clock the replayed SQL reads — the pattern's own `now()`, `current_timestamp`,
//! `current_date` …, a column's `DEFAULT now()`, the generated rows' dates, the fresh values
//! the samplers draw, the plan's `now()` evaluated for the Cassandra side — reads the session
//! setting [`SETTING`] instead ([`NOW_SQL`]). Replay sets it on each of its Postgres sessions to
//! the run's start and moves it one second forward before each write, so two writes never share
//! an instant and a later write is later, as in the application. TTLs count from the same clock.

use crate::Error;
use remodel_backfill::time::{days_from_civil, format_rfc3339, parse_timestamp_ms};
use remodel_model::ident::literal;
use remodel_sql::replay_forms::{self, ClockSql, SqlForms};

/// The session setting that holds replay's `now` (a custom, dotted setting: any session may
/// set it, no extension needed).
pub const SETTING: &str = "remodel.now";

/// The SQL of replay's `now()`: an instant (`timestamptz`).
pub const NOW_SQL: &str = "current_setting('remodel.now')::timestamptz";

/// The SQL of replay's `current_date`: the date of its `now` in the session's zone, as
/// `current_date` is.
pub const CURRENT_DATE_SQL: &str = "(current_setting('remodel.now')::timestamptz)::date";

/// The SQL of replay's `localtimestamp`: its `now` in the session's zone, without the zone.
pub const LOCALTIMESTAMP_SQL: &str = "(current_setting('remodel.now')::timestamptz)::timestamp";

/// Replay's clock as the SQL rewriter takes it.
pub const CLOCK_SQL: ClockSql = ClockSql {
    now: NOW_SQL,
    current_date: CURRENT_DATE_SQL,
    localtimestamp: LOCALTIMESTAMP_SQL,
};

/// The forms of a pattern's SQL that replay runs on Postgres, on replay's clock.
pub fn forms(sql: &str) -> Result<SqlForms, String> {
    replay_forms::forms(sql, &CLOCK_SQL)
}

/// The SQL expression `sql` with every read of the clock a read of replay's.
pub fn on_replay_clock(sql: &str) -> Result<String, String> {
    replay_forms::on_clock(sql, &CLOCK_SQL)
}

/// `sql` (an expression the analysis recorded: a `SET` value, the value of an `=` condition) on
/// replay's clock; as written when it does not parse (Postgres then says what it refuses).
pub fn clocked(sql: &str) -> String {
    on_replay_clock(sql).unwrap_or_else(|_| sql.to_string())
}

/// Where a run's clock comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Fixed by the seed.
    Seed,
    /// Given (`--now`).
    Given,
    /// The wall clock at the start (replay of the rows already there: their dates are real).
    Wall,
}

/// A run's clock: its start, in seconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// The instant the run starts at.
    pub start: i64,
    /// Where it comes from.
    pub origin: Origin,
}

/// The first day a seed's clock may fall on (2024-01-01) and the span of days it may take (three
/// years: leap days, month and year ends, both sides of every daylight-saving change).
const SEED_FIRST_DAY: (i64, u32, u32) = (2024, 1, 1);
const SEED_DAYS: u64 = 3 * 365 + 1;

impl Clock {
    /// The clock `seed` fixes: a day of 2024–2026 and a second of that day, drawn from the seed.
    pub fn of_seed(seed: u64) -> Self {
        let h = mix(seed);
        let (y, m, d) = SEED_FIRST_DAY;
        let day = days_from_civil(y, m, d) + (h % SEED_DAYS) as i64;
        let second = ((h >> 32) % 86_400) as i64;
        Clock {
            start: day * 86_400 + second,
            origin: Origin::Seed,
        }
    }

    /// The wall clock, to the second.
    pub fn wall() -> Self {
        Clock {
            start: remodel_backfill::time::now_secs(),
            origin: Origin::Wall,
        }
    }

    /// Parses `--now`: `YYYY-MM-DD`, `YYYY-MM-DD[T| ]HH:MM[:SS]`, optionally followed by `Z` or an
    /// offset `±HH[:MM]` (none: UTC). Fractions of a second are refused (the clock ticks in
    /// seconds).
    pub fn parse(text: &str) -> Result<Self, String> {
        let expected = "expected an instant such as 2026-03-29, 2026-03-29T01:30:00Z or \
                        2026-03-29 03:30:00+02:00";
        let t = text.trim();
        if t.contains('.') {
            return Err(format!("`{text}`: the clock ticks in whole seconds"));
        }
        // `YYYY-MM-DD` is its midnight, `…THH:MM…` its minute's first second.
        let (date, rest) = t.split_once(['T', ' ']).unwrap_or((t, "00:00:00"));
        let digits = rest.find(['Z', '+', '-']).unwrap_or(rest.len());
        let (time, offset) = rest.split_at(digits);
        let time = if time.matches(':').count() == 1 {
            format!("{time}:00")
        } else {
            time.to_string()
        };
        let ms = parse_timestamp_ms(&format!("{date}T{time}{offset}"))
            .filter(|_| !time.is_empty())
            .ok_or_else(|| format!("`{text}`: {expected}"))?;
        Ok(Clock {
            start: ms.div_euclid(1000),
            origin: Origin::Given,
        })
    }

    /// The instant `tick` seconds after the start, RFC 3339 in UTC.
    pub fn at(&self, tick: u64) -> String {
        format_rfc3339(self.start.saturating_add(tick as i64))
    }

    /// Microseconds since the Unix epoch of the instant `tick` seconds after the start.
    pub fn micros_at(&self, tick: u64) -> i64 {
        self.start
            .saturating_add(tick as i64)
            .saturating_mul(1_000_000)
    }

    /// Where the clock comes from, in words.
    pub fn origin_text(&self, seed: u64) -> String {
        match self.origin {
            Origin::Seed => format!("fixed by --seed {seed}; --now sets another"),
            Origin::Given => "given by --now".into(),
            Origin::Wall => "the wall clock: the rows already there are real".into(),
        }
    }
}

/// Sets replay's clock on a Postgres session to `instant` (RFC 3339).
pub async fn set(pg: &tokio_postgres::Client, instant: &str) -> Result<(), Error> {
    pg.batch_execute(&format!("SET {SETTING} = {}", literal(instant)))
        .await
        .map_err(Error::pg(format!("set replay's clock ({SETTING})")))
}

/// SplitMix64's finalizer: a seed's bits spread over the whole word.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_fixes_one_instant_in_the_span() {
        let a = Clock::of_seed(1);
        assert_eq!(a, Clock::of_seed(1));
        assert_ne!(a.start, Clock::of_seed(2).start);
        let first = days_from_civil(2024, 1, 1) * 86_400;
        for seed in 0..1000 {
            let c = Clock::of_seed(seed);
            assert!(c.start >= first && c.start < first + SEED_DAYS as i64 * 86_400);
        }
    }

    #[test]
    fn now_is_parsed_with_its_offset() {
        let utc = Clock::parse("2026-03-29T01:30:00Z").unwrap();
        assert_eq!(utc.at(0), "2026-03-29T01:30:00Z");
        assert_eq!(
            Clock::parse("2026-03-29 03:30:00+02:00").unwrap().start,
            utc.start
        );
        assert_eq!(Clock::parse("2026-03-29 01:30").unwrap().start, utc.start);
        assert_eq!(
            Clock::parse("2026-03-29").unwrap().at(0),
            "2026-03-29T00:00:00Z"
        );
        assert_eq!(utc.at(61), "2026-03-29T01:31:01Z");
        assert_eq!(utc.micros_at(1), (utc.start + 1) * 1_000_000);
    }

    #[test]
    fn a_bad_now_says_what_was_expected() {
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-02-30T00:00",
            "2026-03-29T25:00:00",
        ] {
            let e = Clock::parse(bad).unwrap_err();
            assert!(e.contains("expected an instant"), "{bad}: {e}");
        }
        assert!(Clock::parse("2026-03-29T01:30:00.5Z")
            .unwrap_err()
            .contains("whole seconds"));
    }
}
