//! The write ceiling for `bench/backfill.sh`: the same rows a backfill writes, read and converted
//! first (untimed, all in memory), then written with nothing else going on: one prepared INSERT
//! per row with the same driver and pool, at each concurrency given; prints rows/s per level and
//! the best.
//!
//! `cargo run --release -p remodel-backfill --example ceiling_writer -- PLAN SOURCE_URL HOST:PORT 64,128,256`

use futures_util::{stream, StreamExt};
use remodel_backfill::convert::RawValue;
use remodel_backfill::rows::{convert_row, Row};
use remodel_backfill::target::TargetTable;
use remodel_backfill::{CqlTarget, PgSource};
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [plan, source, target, levels] = args.as_slice() else {
        return Err("usage: ceiling_writer PLAN.json SOURCE_URL HOST:PORT CONCURRENCY[,…]".into());
    };
    let plan: remodel_model::Plan = serde_json::from_str(&std::fs::read_to_string(plan)?)?;
    let tables = TargetTable::from_plan(&plan, &[])?;
    let source = PgSource::new(source);
    let target = CqlTarget::new(target, None)?;
    let levels: Vec<usize> = levels
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;

    let t0 = Instant::now();
    let client = source.connect().await?;
    let mut all: Vec<Vec<Row>> = Vec::new();
    for t in &tables {
        let shape = source.describe(&client, t).await?;
        let copy = source.copy_range(&client, t, &shape, None).await?;
        futures_util::pin_mut!(copy);
        let mut rows = Vec::new();
        while let Some(row) = copy.next().await {
            let row = row?;
            let raw = (0..t.columns.len())
                .map(|i| row.try_get::<RawValue<'_>>(i))
                .collect::<Result<Vec<_>, _>>()?;
            rows.extend(convert_row(t, &shape.kinds, &raw).ok());
        }
        all.push(rows);
    }
    let total: usize = all.iter().map(Vec::len).sum();
    eprintln!(
        "ceiling: {total} rows pre-built in {:.1} s (untimed)",
        t0.elapsed().as_secs_f64()
    );

    let mut best = (0, 0.0);
    for &level in &levels {
        let session = target
            .connect((level / 32).clamp(1, 8), Duration::from_secs(12))
            .await?;
        for t in &tables {
            session
                .query_unpaged(format!("TRUNCATE {}", t.qualified()), &[])
                .await?;
        }
        let started = Instant::now();
        for (t, rows) in tables.iter().zip(&all) {
            let insert = target.prepare(&session, &t.insert_cql(None)).await?;
            let results: Vec<_> = stream::iter(rows)
                .map(|row| session.execute_unpaged(&insert, row))
                .buffer_unordered(level)
                .collect()
                .await;
            if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
                return Err(format!("write failed at concurrency {level}: {e}").into());
            }
        }
        let rate = total as f64 / started.elapsed().as_secs_f64();
        println!("ceiling concurrency {level}: {rate:.0} rows/s");
        if rate > best.1 {
            best = (level, rate);
        }
    }
    println!(
        "ceiling best: {:.0} rows/s at concurrency {}",
        best.1, best.0
    );
    Ok(())
}
