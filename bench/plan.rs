//! Planning speed per corpus, end to end (read DDL → read workload → analyze → design →
//! plan.json + CQL), with the selection pass timed alone: the integer program beside the greedy
//! pass on the same candidates (the baseline measured in the same run), the program's size, and
//! the weighted cost each choice gives. Target: every corpus planned in under 1 s (median); the
//! process exits 1 when one is slower (`PLAN_TARGET_MS` sets another target, e.g. 0 to see the
//! failure; `PLAN_RUNS` the runs per corpus, 15 by default).
//!
//! Run: `cargo bench --bench plan`.

use remodel_design::costs::sizing;
use remodel_design::{candidates, emit_cql, select, DesignConfig};
use remodel_sql::workload::Format;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Inputs {
    schema: remodel_model::Schema,
    analysis: remodel_model::Analysis,
}

fn load(schema: &Path, queries: &Path) -> Result<Inputs, String> {
    let ddl = remodel_sql::ddl::load_files(&[schema]).map_err(|e| e.to_string())?;
    let wl =
        remodel_sql::workload::read_files(&[queries], Format::Auto).map_err(|e| e.to_string())?;
    let analysis = remodel_analyze::analyze(
        &ddl.schema,
        &wl.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    Ok(Inputs {
        schema: ddl.schema,
        analysis,
    })
}

/// The whole pipeline once; its output size.
fn plan_once(schema: &Path, queries: &Path) -> Result<usize, String> {
    let inputs = load(schema, queries)?;
    let (plan, _) = remodel_design::plan(inputs.analysis, None, &DesignConfig::default());
    let cql = emit_cql(&plan.design);
    let json = serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())?;
    Ok(json.len() + cql.len())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `a / b`, or `-` when `b` is zero (a time too short to measure): no floor hides it.
fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.3}", a / b)
    } else {
        "-".into()
    }
}

/// `a` as a share of `b` in percent, or `-` when `b` is zero.
fn percent(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.0}%", 100.0 * a / b)
    } else {
        "-".into()
    }
}

/// Plans one corpus `runs` times and prints the figures; its median plan time.
fn bench(name: &str, schema: PathBuf, queries: PathBuf, runs: usize) -> Result<Duration, String> {
    let bytes = plan_once(&schema, &queries)?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        plan_once(&schema, &queries)?;
        times.push(t.elapsed());
    }
    let total = median(times);

    // The selection pass alone, on the candidates and costs of this workload.
    let inputs = load(&schema, &queries)?;
    let config = DesignConfig::default();
    let a = &inputs.analysis;
    let sizer = sizing::Sizer {
        schema: &inputs.schema,
        stats: None,
        config: &config,
    };
    let embeds = remodel_design::assemble::embed::collect(&a.schema, &a.relationships);
    let cands = candidates::enumerate(
        &a.schema,
        &a.workload,
        &a.relationships,
        &embeds,
        &|_| false,
        (
            &config.zones(),
            &remodel_design::validate::self_check::Forbidden::new(),
        ),
    );
    let costs = select::costs(&sizer, &a.workload, &a.relationships, &cands);
    let ilp = select::select(&cands, &costs, &config.weights);
    let greedy = select::select_greedy(&cands, &costs, &config.weights);
    let time = |f: &dyn Fn()| {
        median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed()
                })
                .collect(),
        )
    };
    let t_ilp = time(&|| {
        select::select(&cands, &costs, &config.weights);
    });
    let t_greedy = time(&|| {
        select::select_greedy(&cands, &costs, &config.weights);
    });
    let objective = |c: &select::Chosen| select::objective(&cands, &costs, &config.weights, c);
    println!(
        "{name}: {} patterns, {} options over {} layouts -> {bytes} bytes of plan; plan median {:.1} ms; \
         selection: {} ({} variables, {} constraints) {:.2} ms = {} of the plan, \
         greedy {:.2} ms (ilp/greedy time {}x); objective ilp {:.2} vs greedy {:.2} (greedy/ilp {}x)",
        a.workload.patterns.len(),
        cands.options.len(),
        cands.layouts.len(),
        ms(total),
        ilp.info.method,
        ilp.info.variables,
        ilp.info.constraints,
        ms(t_ilp),
        percent(t_ilp.as_secs_f64(), total.as_secs_f64()),
        ms(t_greedy),
        ratio(t_ilp.as_secs_f64(), t_greedy.as_secs_f64()),
        objective(&ilp),
        objective(&greedy),
        ratio(objective(&greedy), objective(&ilp)),
    );
    Ok(total)
}

fn env_number(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("{var}={v:?}: expected a whole number");
            std::process::exit(2)
        }),
        Err(_) => default,
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Duration::from_millis(env_number("PLAN_TARGET_MS", 1000));
    let runs = env_number("PLAN_RUNS", 15).max(1) as usize;
    let mut cases: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    let corpora = root.join("fixtures/corpora");
    let mut names: Vec<String> = std::fs::read_dir(&corpora)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for n in names {
        let dir = corpora.join(&n);
        if dir.join("ddl-postgres.sql").is_file() && dir.join("queries.sql").is_file() {
            cases.push((n, dir.join("ddl-postgres.sql"), dir.join("queries.sql")));
        }
    }
    let am = root.join("fixtures/plan/auctionmark-weighted");
    cases.push((
        "auctionmark-weighted".into(),
        am.join("schema.sql"),
        am.join("queries.sql"),
    ));
    let rs = root.join("examples/rideshare");
    cases.push((
        "rideshare".into(),
        rs.join("schema.sql"),
        rs.join("queries.sql"),
    ));
    let mut slow = Vec::new();
    for (name, schema, queries) in cases {
        match bench(&name, schema, queries, runs) {
            Ok(t) if t < target => {}
            Ok(t) => slow.push(format!("{name} ({:.1} ms)", ms(t))),
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(2);
            }
        }
    }
    if slow.is_empty() {
        println!(
            "target met: every corpus planned in < {} ms",
            target.as_millis()
        );
    } else {
        println!(
            "target NOT met (< {} ms): {}",
            target.as_millis(),
            slow.join(", ")
        );
        std::process::exit(1);
    }
}
