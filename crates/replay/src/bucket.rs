//! Time buckets as the plan defines them, cut by Postgres in the bucket's own time zone (any IANA
//! name Postgres knows): the bucket of one instant ([`BindValue::Bucket`]) and every bucket
//! between a window's bounds ([`BindValue::Buckets`], the statement then runs once per bucket).
//!
//! A bucket is the local calendar unit (hour, day, month) the instant falls in, in that zone: a
//! `date` bucket column holds the local date, a `timestamp` one the unit's first instant. Postgres
//! computes it from the instant (`AT TIME ZONE`, `date_trunc`, `generate_series` over local
//! wall-clock times), so days of 23 or 25 hours at a daylight-saving change are cut as the zone
//! cuts them.
//!
//! [`BindValue::Bucket`]: remodel_model::BindValue::Bucket
//! [`BindValue::Buckets`]: remodel_model::BindValue::Buckets

use crate::exec::Replayer;
use crate::pg::PgValue;
use crate::values::pg_literal;
use crate::Error;
use remodel_backfill::resolved_type::{Native, ResolvedType};
use remodel_model::Bucket;
use scylla::value::CqlValue;

/// Buckets one window may list at most (a year of hours is 8,760): more is refused rather than
/// sent as that many requests.
pub const MAX_BUCKETS: usize = 10_000;

/// The unit's name for `date_trunc` and its interval.
fn unit(b: Bucket) -> &'static str {
    b.name()
}

/// `'zone'` as a SQL literal.
fn zone_literal(zone: &str) -> String {
    remodel_model::ident::literal(zone)
}

/// The bucket of width `b` in `zone` that `instant` (a `timestamptz` expression) falls in, as the
/// column of CQL type `to` holds it: the model's one spelling ([`Bucket::pg_sql_in_zone`]: a day
/// the local date, an hour or a month its first instant), turned into the other type where a
/// plan stores it so.
fn stored(b: Bucket, instant: &str, zone: &str, to: &ResolvedType) -> Result<String, Error> {
    let bucket = b.pg_sql_in_zone(instant, zone);
    let z = zone_literal(zone);
    match (b, to) {
        (Bucket::Day, ResolvedType::Native(Native::Date))
        | (Bucket::Hour | Bucket::Month, ResolvedType::Native(Native::Timestamp)) => Ok(bucket),
        (Bucket::Day, ResolvedType::Native(Native::Timestamp)) => {
            Ok(format!("(({bucket})::timestamp AT TIME ZONE {z})"))
        }
        (Bucket::Hour | Bucket::Month, ResolvedType::Native(Native::Date)) => {
            Ok(format!("(({bucket}) AT TIME ZONE {z})::date"))
        }
        (_, other) => Err(Error::Value(format!(
            "a time bucket cannot be stored as CQL {other:?}"
        ))),
    }
}

/// The instant `v` (a CQL timestamp or date) as a Postgres `timestamptz` expression.
fn instant(v: &CqlValue) -> Result<String, Error> {
    match v {
        CqlValue::Timestamp(_) => pg_literal(Some(v), "timestamptz"),
        // A date stands for its midnight in UTC, as the backfill stores dates it buckets.
        CqlValue::Date(_) => {
            pg_literal(Some(v), "date").map(|d| format!("({d})::timestamp AT TIME ZONE 'UTC'"))
        }
        _ => None,
    }
    .ok_or_else(|| Error::Value(format!("{v:?} is not a time: it has no bucket")))
}

impl Replayer<'_> {
    /// The bucket of width `b` cut in `zone` that `v` falls in, as a value of CQL type `to`
    /// (NULL for NULL).
    pub async fn bucket(
        &self,
        b: Bucket,
        zone: &str,
        v: Option<&CqlValue>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let Some(v) = v else { return Ok(None) };
        let sql = format!("SELECT {}", stored(b, &instant(v)?, zone, to)?);
        let row = self
            .evaluator()
            .query_one(&sql, &[])
            .await
            .map_err(Error::pg(format!(
                "the {} bucket of {v:?} in {zone}",
                unit(b)
            )))?;
        PgValue::of(&row, 0)?.to_cql(to)
    }

    /// Every bucket of width `b` cut in `zone` from the one `lower` falls in to the one `upper`
    /// falls in, ascending, as values of CQL type `to`; none when a bound is NULL or `upper`
    /// comes before `lower`. An exclusive upper bound (`<`) belongs to the bucket of the instant
    /// just before it: on a bucket's first instant, that bucket holds no row of the window.
    pub async fn buckets(
        &self,
        b: Bucket,
        zone: &str,
        lower: Option<&CqlValue>,
        upper: Option<&CqlValue>,
        upper_exclusive: bool,
        to: &ResolvedType,
    ) -> Result<Vec<CqlValue>, Error> {
        let (Some(lo), Some(hi)) = (lower, upper) else {
            return Ok(Vec::new());
        };
        let z = zone_literal(zone);
        let u = unit(b);
        let hi = if upper_exclusive {
            format!("({} - interval '1 microsecond')", instant(hi)?)
        } else {
            instant(hi)?
        };
        let sql = format!(
            "SELECT {} FROM generate_series(date_trunc('{u}', {} AT TIME ZONE {z}), \
             date_trunc('{u}', {hi} AT TIME ZONE {z}), interval '1 {u}') AS g(b) ORDER BY g.b LIMIT {}",
            stored(b, &format!("(g.b AT TIME ZONE {z})"), zone, to)?,
            instant(lo)?,
            MAX_BUCKETS + 1
        );
        let rows = self
            .evaluator()
            .query(&sql, &[])
            .await
            .map_err(Error::pg(format!(
                "the {u} buckets in {zone} from {lo:?} to {hi:?}"
            )))?;
        if rows.len() > MAX_BUCKETS {
            return Err(Error::Unsupported(format!(
                "a window of more than {MAX_BUCKETS} {u} buckets (one request each)"
            )));
        }
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.extend(PgValue::of(r, 0)?.to_cql(to)?);
        }
        Ok(out)
    }
}
