//! `remodel verify`: counts and sampled rows of the target against the source.

use super::backfill::{runtime, Endpoints};
use crate::progress::thousands;
use anyhow::{bail, Context};
use remodel_backfill::VerifyOptions;
use remodel_model::{ConsistencyLevel, TableVerify, VerifyReport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Exit code: some table differs from the source.
pub const EXIT_MISMATCH: u8 = 1;

/// Mismatches printed per table at most (the count of the rest is printed).
const SHOW_MISMATCHES: usize = 20;

/// The long help of `remodel verify` (`--help`), set on its subcommand in `lib.rs`: the
/// subcommand's doc comment would replace one set here alone.
pub const LONG_ABOUT: &str = "Checks that the target tables hold what the source says they must.\n\n\
    Per table of plan.json: (1) the expected count, `count(*)` over its source_sql (minus rows with \
    a NULL key column, which cannot be stored, and, with --run-dir, the rows that backfill run \
    rejected), against the stored count, summed over a parallel token-range scan; (2) N sampled \
    source rows, each converted as the backfill converts it, looked up in the target by the \
    target's own primary key and compared column by column. Source and target keys differ in a \
    query-first design: the lookup key is computed from the source row, never assumed equal.\n\n\
    Every read of the target is sent at the plan's reads' consistency level (--consistency ALL: \
    every replica must hold the rows), and a read that times out or finds too few replicas is \
    retried with back-off for --retry-for.\n\n\
    With --run-dir, the verdict is also written to RUN_DIR/verify.json, where `remodel report --run` \
    reads it.\n\n\
    Exit codes: 0 everything matches, 1 a difference (listed with both sides), 2 could not verify \
    (unusable input, unreachable database).";

/// Arguments of `remodel verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub endpoints: Endpoints,
    /// Only these target tables (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    pub tables: Vec<String>,
    /// Source rows sampled and compared per table (0: counts only).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub sample: usize,
    /// A backfill run folder: the rows it rejected are not expected in the target, and the verdict
    /// is written there as verify.json.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Requests in flight (counts and lookups).
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub parallelism: usize,
    /// Token ranges the stored count is split into.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub token_ranges: usize,
    /// Consistency level of every read of the target (ONE, LOCAL_ONE, QUORUM, LOCAL_QUORUM,
    /// EACH_QUORUM, ALL); ALL proves every replica holds the rows (every node must be up)
    /// [default: the plan's reads' level, LOCAL_QUORUM unless the plan says otherwise].
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<ConsistencyLevel>,
    /// How long one read is retried (timeouts, unavailable or unreachable node) before verify
    /// gives up (exit 2), in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub retry_for: f64,
}

/// Runs `remodel verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (plan, _, source, target) = args.endpoints.open()?;
    if let Some(dir) = &args.run_dir {
        if !dir.is_dir() {
            bail!(
                "--run-dir {}: not a folder (give the run folder of `remodel backfill`)",
                dir.display()
            );
        }
    }
    if !(args.retry_for.is_finite() && args.retry_for > 0.0) {
        bail!(
            "--retry-for {}: expected a positive number of seconds",
            args.retry_for
        );
    }
    let opts = VerifyOptions {
        tables: args.tables.clone(),
        sample: args.sample,
        parallelism: args.parallelism.max(1),
        token_ranges: args.token_ranges.max(1),
        run_dir: args.run_dir.clone(),
        request_timeout: Duration::from_secs(30),
        retry_for: Duration::from_secs_f64(args.retry_for),
        consistency: args.consistency,
    };
    eprintln!(
        "verify: {} against {} (keyspace {})",
        source.display, target.node, plan.design.keyspace.name
    );
    let notify = |m: &str| eprintln!("verify: {m}");
    let report = runtime()?.block_on(remodel_backfill::verify(
        &plan, &source, &target, &opts, &notify,
    ))?;
    for v in &report.tables {
        print_verdict(v);
    }
    if let Some(dir) = &args.run_dir {
        remodel_backfill::save_verify(dir, &report)
            .with_context(|| format!("cannot record the verdict in {}", dir.display()))?;
        println!(
            "verify: verdict written to {}",
            dir.join(VerifyReport::FILE).display()
        );
    }
    if report.retries > 0 {
        println!(
            "verify: {} reads were sent again (timeouts, nodes down)",
            thousands(report.retries)
        );
    }
    let bad = report.tables.iter().filter(|v| !v.passed()).count();
    if bad == 0 {
        println!("verify: all {} tables match", report.tables.len());
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "verify: {bad} of {} tables differ from the source",
            report.tables.len()
        );
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

fn print_verdict(v: &TableVerify) {
    let mut excluded = Vec::new();
    if v.null_key_rows > 0 {
        excluded.push(format!("{} with a NULL key", thousands(v.null_key_rows)));
    }
    if v.rejected_rows > 0 {
        excluded.push(format!(
            "{} rejected by the run",
            thousands(v.rejected_rows)
        ));
    }
    if v.expired_rows > 0 {
        excluded.push(format!(
            "{} past their TTL instant",
            thousands(v.expired_rows)
        ));
    }
    let excluded = if excluded.is_empty() {
        String::new()
    } else {
        format!(
            " ({} source rows less {})",
            thousands(v.source_rows),
            excluded.join(", ")
        )
    };
    let counts = if v.expected == v.stored {
        "ok"
    } else {
        "DIFFER"
    };
    println!(
        "{}: counts {counts}: expected {}{excluded}, stored {}",
        v.name,
        thousands(v.expected),
        thousands(v.stored)
    );
    let unstorable = if v.sample_unstorable > 0 {
        format!(
            " ({} more sampled rows cannot be stored and were skipped)",
            v.sample_unstorable
        )
    } else {
        String::new()
    };
    if v.mismatches.is_empty() {
        println!(
            "{}: sample of {} rows: all match{unstorable}",
            v.name,
            thousands(v.sampled)
        );
        return;
    }
    println!(
        "{}: sample of {} rows: {} differences{unstorable}",
        v.name,
        thousands(v.sampled),
        v.mismatches.len()
    );
    for m in v.mismatches.iter().take(SHOW_MISMATCHES) {
        let key: Vec<String> = m.key.iter().map(|(k, val)| format!("{k}={val}")).collect();
        match &m.column {
            Some(c) => println!(
                "  [{}] {c}: source {} | target {}",
                key.join(", "),
                m.source,
                m.target
            ),
            None => println!("  [{}] missing in the target", key.join(", ")),
        }
    }
    if v.mismatches.len() > SHOW_MISMATCHES {
        println!("  … and {} more", v.mismatches.len() - SHOW_MISMATCHES);
    }
}
