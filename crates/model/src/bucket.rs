//! Time buckets of a partition key (an hour, a day, a month of a timestamp) and their one
//! spelling in Postgres, shared by the designer's source query, the backfill's computed buckets
//! and replay.

use serde::{Deserialize, Serialize};

/// A Postgres `timestamptz` expression as the wall-clock time in UTC (a `timestamp`), the
/// calendar [`Bucket::pg_sql`] cuts buckets in.
pub fn pg_at_utc(value: &str) -> String {
    format!("({value} AT TIME ZONE 'UTC')")
}

/// Width of a time bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    /// One hour.
    Hour,
    /// One day.
    Day,
    /// One month.
    Month,
}

impl Bucket {
    /// The Postgres expression of the bucket `value` falls in, `value` being a `timestamp` (or
    /// `date`) on the buckets' calendar: the one spelling the designer's `source_sql` and the
    /// backfill's computed buckets share. A `timestamptz` goes through [`pg_at_utc`] first.
    pub fn pg_sql(self, value: &str) -> String {
        match self {
            Bucket::Day => format!("{value}::date"),
            Bucket::Hour => format!("date_trunc('hour', {value})"),
            Bucket::Month => format!("date_trunc('month', {value})"),
        }
    }

    /// The bucket the instant `instant` (a `timestamptz` expression) falls in on the calendar
    /// of `zone`, as replay cuts it: a day is the local date, an hour or a month its first
    /// instant (a `timestamptz`), so a day of 23 or 25 hours is cut as the zone cuts it.
    pub fn pg_sql_in_zone(self, instant: &str, zone: &str) -> String {
        let zone = crate::ident::literal(zone);
        let local = format!("({instant} AT TIME ZONE {zone})");
        match self {
            Bucket::Day => format!("{local}::date"),
            Bucket::Hour | Bucket::Month => {
                format!(
                    "(date_trunc('{}', {local}) AT TIME ZONE {zone})",
                    self.name()
                )
            }
        }
    }

    /// The bucket of `value`, a source column's expression (`timestamptz` when `tz`, else a
    /// `timestamp` or `date`, which the backfill stores as its wall clock read in UTC), cut in
    /// `zone` (UTC when `None`): the one spelling the designer's source query and the backfill's
    /// computed buckets share.
    pub fn pg_sql_of(self, value: &str, tz: bool, zone: Option<&str>) -> String {
        match zone.filter(|z| *z != "UTC") {
            None if tz => self.pg_sql(&pg_at_utc(value)),
            None => self.pg_sql(value),
            Some(z) if tz => self.pg_sql_in_zone(value, z),
            Some(z) => self.pg_sql_in_zone(&pg_at_utc(&format!("{value}::timestamp")), z),
        }
    }

    /// `hour`, `day` or `month`.
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Hour => "hour",
            Bucket::Day => "day",
            Bucket::Month => "month",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Bucket;

    /// The Spark job spells buckets itself (`bucket_sql` in `crates/spark/job/backfill.py`); its
    /// test holds the same texts.
    #[test]
    fn bucket_sql_is_spelt_as_the_spark_job_spells_it() {
        let v = "s.\"at\"";
        assert_eq!(
            Bucket::Day.pg_sql_of(v, true, None),
            "(s.\"at\" AT TIME ZONE 'UTC')::date"
        );
        assert_eq!(
            Bucket::Hour.pg_sql_of(v, false, Some("UTC")),
            "date_trunc('hour', s.\"at\")"
        );
        assert_eq!(
            Bucket::Day.pg_sql_of(v, true, Some("Europe/Paris")),
            "(s.\"at\" AT TIME ZONE 'Europe/Paris')::date"
        );
        assert_eq!(
            Bucket::Month.pg_sql_of(v, false, Some("America/New_York")),
            "(date_trunc('month', ((s.\"at\"::timestamp AT TIME ZONE 'UTC') AT TIME ZONE 'America/New_York')) AT TIME ZONE 'America/New_York')"
        );
    }
}
