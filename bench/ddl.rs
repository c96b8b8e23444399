//! Benchmark of the DDL loader: `danbooru/structure.sql` and every corpus schema, loaded N times.
//! Prints lines/s, time per load and ratios against two baselines measured in the same run on the
//! same statements: sqlparser's tokenizer alone (the floor for any sqlparser-based loader) and a
//! naive loader that parses every statement with sqlparser. Target: the whole corpus in < 1 s
//! in release mode; the process exits 1 when a load takes longer (`DDL_TARGET_MS` sets another
//! target, e.g. 0 to see the failure).
//!
//! Run: `cargo bench --bench ddl` (optionally `-- N` for the iteration count).

use remodel_sql::ddl::load_str;
use remodel_sql::split::{split_statements, RawKind};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Tokenizer;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Every schema file of the corpora (the files the corpus tests load) and the example.
const CORPUS: &[&str] = &[
    "fixtures/corpora/tpcc/ddl-postgres.sql",
    "fixtures/corpora/auctionmark/ddl-postgres.sql",
    "fixtures/corpora/seats/ddl-postgres.sql",
    "fixtures/corpora/twitter/ddl-postgres.sql",
    "fixtures/corpora/wikipedia/ddl-postgres.sql",
    "fixtures/corpora/smallbank/ddl-postgres.sql",
    "fixtures/corpora/voter/ddl-postgres.sql",
    "fixtures/corpora/pagila/pagila-schema.sql",
    "fixtures/corpora/pagila/classic/pagila-schema.sql",
    "fixtures/corpora/chinook/Chinook_PostgreSql.sql",
    "fixtures/corpora/northwind/northwind.sql",
    "fixtures/corpora/danbooru/structure.sql",
    "fixtures/corpora/pgbadger-logs/pgbench-schema.sql",
    "examples/rideshare/schema.sql",
];

struct Input {
    name: String,
    text: String,
}

fn read(paths: &[&str]) -> Vec<Input> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    paths
        .iter()
        .map(|p| {
            let bytes =
                std::fs::read(root.join(p)).unwrap_or_else(|e| panic!("cannot read {p}: {e}"));
            Input {
                name: p.to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            }
        })
        .collect()
}

/// Best and mean wall time of `n` runs of `f` over all inputs.
fn time(n: usize, inputs: &[Input], f: impl Fn(&Input)) -> (Duration, Duration) {
    let mut best = Duration::MAX;
    let mut total = Duration::ZERO;
    for _ in 0..n {
        let start = Instant::now();
        for i in inputs {
            f(i);
        }
        let took = start.elapsed();
        best = best.min(took);
        total += took;
    }
    (best, total / n.max(1) as u32)
}

fn remodel(i: &Input) {
    black_box(load_str(&i.name, &i.text));
}

fn tokenize_only(i: &Input) {
    let dialect = PostgreSqlDialect {};
    for st in split_statements(&i.text) {
        if st.kind == RawKind::Sql {
            black_box(
                Tokenizer::new(&dialect, st.text)
                    .tokenize_with_location()
                    .is_ok(),
            );
        }
    }
}

fn parse_all(i: &Input) {
    let dialect = PostgreSqlDialect {};
    for st in split_statements(&i.text) {
        if st.kind == RawKind::Sql {
            black_box(Parser::parse_sql(&dialect, st.text).is_ok());
        }
    }
}

fn report(label: &str, n: usize, inputs: &[Input]) {
    let lines: usize = inputs.iter().map(|i| i.text.lines().count()).sum();
    let bytes: usize = inputs.iter().map(|i| i.text.len()).sum();
    let (best, mean) = time(n, inputs, remodel);
    let (tok_best, _) = time(n, inputs, tokenize_only);
    let (parse_best, _) = time(n, inputs, parse_all);
    let secs = best.as_secs_f64();
    println!(
        "{label}: {} file(s), {lines} lines, {:.1} KiB, {n} runs",
        inputs.len(),
        bytes as f64 / 1024.0
    );
    println!(
        "  remodel load_str          best {:>9.3} ms  mean {:>9.3} ms  {:>12.0} lines/s",
        secs * 1e3,
        mean.as_secs_f64() * 1e3,
        lines as f64 / secs
    );
    println!(
        "  baseline: tokenize only   best {:>9.3} ms  (remodel / baseline = {:.2}x)",
        tok_best.as_secs_f64() * 1e3,
        secs / tok_best.as_secs_f64()
    );
    println!(
        "  baseline: parse every st. best {:>9.3} ms  (remodel / baseline = {:.2}x)",
        parse_best.as_secs_f64() * 1e3,
        secs / parse_best.as_secs_f64()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a plain number sets the iteration count.
    let n = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(20);
    let danbooru = read(&["fixtures/corpora/danbooru/structure.sql"]);
    let corpus = read(CORPUS);
    report("danbooru/structure.sql", n, &danbooru);
    report("whole corpus", n, &corpus);
    let (best, _) = time(1, &corpus, remodel);
    let target = Duration::from_millis(target_ms());
    let met = best < target;
    println!(
        "target: whole corpus < {} ms -> one load took {:.3} ms ({})",
        target.as_millis(),
        best.as_secs_f64() * 1e3,
        if met { "met" } else { "NOT met" }
    );
    if !met {
        std::process::exit(1);
    }
}

/// The target for one load of the whole corpus: 1000 ms, or `DDL_TARGET_MS`.
fn target_ms() -> u64 {
    match std::env::var("DDL_TARGET_MS") {
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("DDL_TARGET_MS={v:?}: expected milliseconds");
            std::process::exit(2)
        }),
        Err(_) => 1000,
    }
}
