//! A WHERE of tens of thousands of terms (generated SQL: `a = 1 AND a = 2 AND …`) is analyzed in
//! time linear in its length: the 80,000-term statement against the 10,000-term baseline measured
//! in the same run (linear ≈ 8×, quadratic ≈ 64×). Run: `cargo bench -p remodel-analyze --bench and_terms`.

#[path = "../tests/common/mod.rs"]
mod common;

use remodel_analyze::analyze_pattern;
use remodel_model::{AccessPattern, Column, Schema, Table};
use std::time::Instant;

fn schema() -> Schema {
    let col = |name: &str| Column {
        name: name.into(),
        sql_type: "integer".into(),
        nullable: true,
        ..Default::default()
    };
    Schema {
        tables: vec![Table {
            name: "t".into(),
            columns: vec![col("a"), col("b")],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// The statement with `n` terms of one kind, as the workload reader gives it: normalized SQL
/// and the literal statement as example.
fn pattern(kind: &str, n: usize) -> AccessPattern {
    let term = |i: usize| match kind {
        "equality" => format!("a = {i}"),
        "residual" => format!("a <> {i}"),
        "range" => format!("b > {i}"),
        _ => format!("a + {i} > b"),
    };
    let sep = if kind == "or" { " OR " } else { " AND " };
    let sql = format!(
        "SELECT a FROM t WHERE {}",
        (0..n).map(term).collect::<Vec<_>>().join(sep)
    );
    let normalized = remodel_sql::normalize::normalize(&sql).expect("generated SQL normalizes");
    common::pattern("q1", &normalized.sql, Some(&sql), 1)
}

/// CPU seconds this process has used (user + system, from /proc/self/stat, Linux's 100 ticks a
/// second): a shared machine's load changes wall time, not this.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Best of three runs of the analysis of one pattern: (wall, CPU where known) seconds.
fn time(schema: &Schema, p: &AccessPattern) -> (f64, f64) {
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let (t, c) = (Instant::now(), cpu_seconds());
        let (a, _) = analyze_pattern(schema, p);
        let wall = t.elapsed().as_secs_f64();
        let cpu = match (c, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        assert!(a.unmodeled.is_none() || a.tables.is_empty());
        best = (best.0.min(wall), best.1.min(cpu));
    }
    best
}

fn main() {
    let schema = schema();
    println!("kind      10k terms (wall / cpu)   80k terms (wall / cpu)   cpu ratio (linear 8, quadratic 64)");
    for kind in ["equality", "residual", "range", "or"] {
        let base = time(&schema, &pattern(kind, 10_000));
        let big = time(&schema, &pattern(kind, 80_000));
        let ratio = big.1 / base.1.max(0.01);
        println!(
            "{kind:<9} {:>8.2} s / {:>6.2} s       {:>8.2} s / {:>6.2} s      {ratio:.1}",
            base.0, base.1, big.0, big.1
        );
    }
}
