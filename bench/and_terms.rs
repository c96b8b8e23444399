//! A WHERE of tens of thousands of terms (generated SQL: `a = 1 AND a = 2 AND …`) is analyzed in
//! time linear in its length: the 80,000-term statement against the 10,000-term baseline measured
//! in the same run (linear ≈ 8×, quadratic ≈ 64×). Target: at most 16× (twice linear) in CPU time
//! for every kind of term; the process exits 1 when a kind misses it (`AND_TERMS_MAX_RATIO` sets
//! another bound, e.g. 1 to see the failure; `AND_TERMS_BASE` another base size, e.g. 1000 for a
//! quick run). Run: `cargo bench --bench and_terms`.

use remodel_analyze::analyze_pattern;
use remodel_model::{AccessPattern, Column, Schema, StatementKind, Table};
use std::time::{Duration, Instant};

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
    AccessPattern {
        example: Some(sql),
        ..AccessPattern::new("q1", StatementKind::Select, normalized.sql, 1)
    }
}

/// CPU time this thread has used, from `/proc/thread-self/schedstat` (nanoseconds on the CPU:
/// no clock-tick unit to assume). A shared machine's load changes wall time, not this.
fn thread_cpu() -> Result<Duration, String> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| format!("/proc/thread-self/schedstat: {e} (Linux only)"))?;
    let ns: u64 = text
        .split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| format!("/proc/thread-self/schedstat: unexpected {text:?}"))?;
    Ok(Duration::from_nanos(ns))
}

/// Best of three runs of the analysis of one pattern: (wall, CPU) time.
fn time(schema: &Schema, p: &AccessPattern) -> Result<(Duration, Duration), String> {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let (t, c) = (Instant::now(), thread_cpu()?);
        let (a, _) = analyze_pattern(schema, p);
        let (wall, cpu) = (t.elapsed(), thread_cpu()? - c);
        if !(a.unmodeled.is_none() || a.tables.is_empty()) {
            return Err(format!("{}: analysed as unmodeled with tables", p.id));
        }
        best = (best.0.min(wall), best.1.min(cpu));
    }
    Ok(best)
}

fn env_number(var: &str, default: f64) -> Result<f64, String> {
    match std::env::var(var) {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("{var}={v:?}: expected a number")),
        Err(_) => Ok(default),
    }
}

fn run() -> Result<bool, String> {
    let max_ratio = env_number("AND_TERMS_MAX_RATIO", 16.0)?;
    let base_n = env_number("AND_TERMS_BASE", 10_000.0)? as usize;
    let big_n = 8 * base_n;
    let schema = schema();
    println!(
        "kind      {base_n} terms (wall / cpu)   {big_n} terms (wall / cpu)   cpu ratio (linear 8, quadratic 64; target <= {max_ratio})"
    );
    let mut met = true;
    for kind in ["equality", "residual", "range", "or"] {
        let base = time(&schema, &pattern(kind, base_n))?;
        let big = time(&schema, &pattern(kind, big_n))?;
        if base.1.is_zero() {
            return Err(format!(
                "{kind}: {base_n} terms took no measurable CPU time: raise AND_TERMS_BASE"
            ));
        }
        let ratio = big.1.as_secs_f64() / base.1.as_secs_f64();
        let ok = ratio <= max_ratio;
        met &= ok;
        println!(
            "{kind:<9} {:>8.3} s / {:>6.3} s       {:>8.3} s / {:>6.3} s      {ratio:.1}{}",
            base.0.as_secs_f64(),
            base.1.as_secs_f64(),
            big.0.as_secs_f64(),
            big.1.as_secs_f64(),
            if ok { "" } else { "  NOT met" }
        );
    }
    Ok(met)
}

fn main() {
    match run() {
        Ok(true) => println!("target met: every kind at most the bound"),
        Ok(false) => {
            println!("target NOT met");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("and_terms: {e}");
            std::process::exit(2);
        }
    }
}
