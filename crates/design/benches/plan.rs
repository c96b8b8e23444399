//! Planning speed, end to end (read DDL → read workload → analyze → design → plan.json + CQL),
//! on the largest corpus workload (auctionmark, 60 statements) and on rideshare. Prints the time
//! and the ratio against NoSE's published advisor time for RUBiS (about 3.3 minutes, TKDE 2017).
//!
//! Run: `cargo bench -p remodel-design --bench plan`.

use remodel_design::{emit_cql, DesignConfig};
use remodel_sql::workload::Format;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// NoSE's advisor time for RUBiS, as published.
const NOSE_RUBIS: Duration = Duration::from_secs(198);

fn plan_once(schema: &Path, queries: &Path) -> Result<(usize, usize, usize), String> {
    let ddl = remodel_sql::ddl::load_files(&[schema]).map_err(|e| e.to_string())?;
    let wl =
        remodel_sql::workload::read_files(&[queries], Format::Auto).map_err(|e| e.to_string())?;
    let analysis = remodel_analyze::analyze(
        &ddl.schema,
        &wl.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let (plan, _) = remodel_design::plan(analysis, None, &DesignConfig::default());
    let cql = emit_cql(&plan.design);
    let json = serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())?;
    Ok((
        plan.workload.patterns.len(),
        plan.design.tables.len(),
        json.len() + cql.len(),
    ))
}

fn bench(name: &str, schema: PathBuf, queries: PathBuf) -> Result<(), String> {
    // Warm up (page cache, allocator), then time enough runs for a stable mean.
    let (patterns, tables, bytes) = plan_once(&schema, &queries)?;
    let runs = 30;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        plan_once(&schema, &queries)?;
        times.push(t.elapsed());
    }
    times.sort();
    let median = times[runs / 2];
    let mean = times.iter().sum::<Duration>() / runs as u32;
    println!(
        "{name}: {patterns} patterns -> {tables} tables ({bytes} bytes of plan.json + schema.cql); \
         median {:.2} ms, mean {:.2} ms, min {:.2} ms over {runs} runs; \
         NoSE on RUBiS 198 s / remodel = {:.0}x",
        median.as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        NOSE_RUBIS.as_secs_f64() / median.as_secs_f64()
    );
    Ok(())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let am = root.join("fixtures/corpora/auctionmark");
    let rs = root.join("examples/rideshare");
    for (name, schema, queries) in [
        (
            "auctionmark",
            am.join("ddl-postgres.sql"),
            am.join("queries.sql"),
        ),
        ("rideshare", rs.join("schema.sql"), rs.join("queries.sql")),
    ] {
        if let Err(e) = bench(name, schema, queries) {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
    }
}
