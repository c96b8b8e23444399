//! `remodel example-data rideshare`: loads the rideshare example's schema and N generated trips
//! into Postgres, so that plan → backfill → verify can run end to end.
//!
//! The rows are generated inside Postgres (`generate_series` and hash functions), so a million
//! trips load in seconds and the same N gives the same rows on every run.

use super::backfill::{runtime, SourceArg};
use crate::progress::thousands;
use anyhow::{bail, Context};
use remodel_backfill::PgSource;
use std::process::ExitCode;
use std::time::Instant;

/// The long help of `remodel example-data` (`--help`), set on its subcommand in `lib.rs`: the
/// subcommand's doc comment would replace one set here alone.
pub const LONG_ABOUT: &str = "Loads an example's schema and generated rows into Postgres.\n\n\
    `rideshare`: the tables of examples/rideshare/schema.sql (cities, drivers, trips) with 4 cities \
    (40/30/20/10 % of the trips), --drivers drivers (10% without a rating) and --trips trips spread \
    over 2024 (one millisecond apart at least, so no two trips share a start time), 95% completed, \
    4% cancelled, 1% disputed. The rows are deterministic: the same counts give the same rows.";

/// Arguments of `remodel example-data`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The example to load (only `rideshare` so far).
    #[arg(value_name = "EXAMPLE", value_parser = ["rideshare"])]
    pub example: String,
    // Where to load (the URL's search_path decides the Postgres schema).
    #[command(flatten)]
    pub source: SourceArg,
    /// Trips to generate.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub trips: u64,
    /// Drivers to generate [default: trips / 200, at least 10].
    #[arg(long, value_name = "N")]
    pub drivers: Option<u64>,
    /// Drop the example's tables first when they exist.
    #[arg(long)]
    pub replace: bool,
}

const SCHEMA: &str = include_str!("../../../../examples/rideshare/schema.sql");

const CITIES: &str = "INSERT INTO cities (city, country, timezone) VALUES \
    ('nyc', 'US', 'America/New_York'), ('sf', 'US', 'America/Los_Angeles'), \
    ('london', 'GB', 'Europe/London'), ('paris', 'FR', 'Europe/Paris')";

/// `h(i, s)`: a non-negative pseudo-random int8 from row number `i` and salt `s`.
const DRIVERS: &str = "INSERT INTO drivers (driver_id, full_name, home_city, rating, joined_at) \
    SELECT 'drv_' || i, 'Driver ' || i, \
           (ARRAY['nyc', 'sf', 'london', 'paris'])[(1 + i % 4)::int], \
           CASE WHEN i % 10 = 0 THEN NULL \
                ELSE round(3.5 + (hashint8extended(i, 1) & 2147483647) % 151 / 100.0, 2) END, \
           timestamptz '2019-01-01 00:00:00+00' \
             + ((hashint8extended(i, 2) & 2147483647) % (5 * 365 * 86400)) * interval '1 second' \
    FROM generate_series(1::int8, $1::int8) AS i";

const TRIPS: &str =
    "INSERT INTO trips (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) \
    SELECT md5('trip-' || i)::uuid, \
           'drv_' || (1 + h1 % $2::int8), \
           CASE WHEN h2 % 10 < 4 THEN 'nyc' WHEN h2 % 10 < 7 THEN 'sf' \
                WHEN h2 % 10 < 9 THEN 'london' ELSE 'paris' END, \
           timestamptz '2024-01-01 00:00:00+00' \
             + floor(i * 31536000000.0 / $1::int8)::int8 * interval '1 millisecond', \
           d, \
           round(2.50 + d * 1.75, 2), \
           CASE WHEN h3 % 100 < 95 THEN 'completed' WHEN h3 % 100 < 99 THEN 'cancelled' \
                ELSE 'disputed' END \
    FROM (SELECT i, hashint8extended(i, 11) & 2147483647 AS h1, \
                 hashint8extended(i, 12) & 2147483647 AS h2, \
                 hashint8extended(i, 13) & 2147483647 AS h3, \
                 round(0.5 + (hashint8extended(i, 14) & 2147483647) % 3000 / 100.0, 2) AS d \
          FROM generate_series(1::int8, $1::int8) AS i) g";

/// Runs `remodel example-data`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.trips == 0 {
        bail!("--trips 0: nothing to generate");
    }
    let drivers = args.drivers.unwrap_or((args.trips / 200).max(10));
    let source = args.source.pg()?;
    runtime()?.block_on(load(
        &source,
        args.trips as i64,
        drivers as i64,
        args.replace,
    ))?;
    Ok(ExitCode::SUCCESS)
}

async fn load(source: &PgSource, trips: i64, drivers: i64, replace: bool) -> anyhow::Result<()> {
    let client = source.connect().await?;
    let where_ = &source.display;
    let existing: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_class c WHERE c.relkind IN ('r', 'p') \
             AND c.relname IN ('cities', 'drivers', 'trips') AND pg_table_is_visible(c.oid)",
            &[],
        )
        .await
        .with_context(|| format!("looking for the rideshare tables at {where_}"))?
        .get(0);
    if existing > 0 && !replace {
        bail!("{where_} already has rideshare tables (cities, drivers, trips): pass --replace to drop them first");
    }
    let t0 = Instant::now();
    let mut script = String::from(
        "SET client_min_messages = warning; DROP TABLE IF EXISTS trips, drivers, cities CASCADE;\n",
    );
    script.push_str(SCHEMA);
    client
        .batch_execute(&script)
        .await
        .with_context(|| format!("creating the rideshare schema at {where_}"))?;
    client
        .batch_execute(CITIES)
        .await
        .context("loading cities")?;
    client
        .execute(DRIVERS, &[&drivers])
        .await
        .context("generating drivers")?;
    client
        .execute(TRIPS, &[&trips, &drivers])
        .await
        .context("generating trips")?;
    client
        .batch_execute("ANALYZE cities; ANALYZE drivers; ANALYZE trips")
        .await
        .context("ANALYZE")?;
    println!(
        "loaded rideshare into {where_}: 4 cities, {} drivers, {} trips in {:.1} s",
        thousands(drivers as u64),
        thousands(trips as u64),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
