//! `remodel replay`: proves a plan on its workload, against generated data on both sides or
//! (`--existing`) against the rows already there, read-only.

use super::backfill::{runtime, Endpoints};
use crate::progress::thousands;
use anyhow::{bail, Context};
use remodel_model::{PatternReplay, ReplayMismatch, ReplayOutcome, ReplayReport, StatementKind};
use remodel_replay::clock::Clock;
use remodel_replay::run::Options;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code: a read or a write differs between the two sides.
pub const EXIT_MISMATCH: u8 = 1;

/// The long help of `remodel replay` (`--help`), set on its subcommand in `lib.rs`: the
/// subcommand's doc comment would replace one set here alone.
pub const LONG_ABOUT: &str = "Proves a plan on its own workload: runs every read and write of plan.json \
    against generated data on Postgres and, through the plan's own CQL, on Cassandra, and compares \
    the results as SQL defines them.\n\n\
    1. The source schema (the plan's tables) is created in Postgres and filled with small generated \
    data that respects its types, keys and foreign keys (--rows for the largest tables, parents \
    fewer); the same --seed gives the same rows. The source must not hold the plan's tables yet \
    (--replace drops them).\n\
    2. The rows are backfilled into the plan's tables (schema.cql next to plan.json, or --schema).\n\
    3. Per read pattern, --samples parameter sets are drawn from real rows (equality values, range \
    bounds on real values, the time window and LIMIT the workload uses); the SQL runs on Postgres, \
    the plan's CQL on Cassandra (bind values as the plan says, lookups followed, client filters, \
    sorting, OFFSET and LIMIT applied as its notes say), and the rows are compared: the same rows, \
    in an order the ORDER BY allows (ties in any order), as many as the LIMIT.\n\
    4. With --writes, each write pattern runs with generated values on Postgres and through the \
    plan's write path on Cassandra (reads before write, current and new values), then every read \
    of the written table runs again on the rows written, as they are now and as they were.\n\n\
    With --existing, steps 1 and 2 are skipped: replay reads the source as it is and the keyspace \
    `remodel backfill` filled, read-only on both sides (the proof to run before cut-over); \
    --writes is refused then.\n\n\
    Parameters are adversarial as well as typical: time windows aligned on the session's days, \
    windows across bucket boundaries and over several buckets, NULLs for nullable columns, \
    LIMIT 0, 1 and exactly the rows there are, IN lists with a repeated value. The SQL runs in \
    the application's session time zone (--timezone, by default the source's TimeZone).\n\n\
    Each difference is printed with the pattern, its parameters and both results. replay.json \
    (--out) has per pattern the samples, differences, p50/p99 latency on both sides (one request \
    at a time) and partitions read beside the plan's estimate. A read that compared no sample is \
    'not replayed', never 'replayed'.\n\n\
    Exit codes: 0 no difference, 1 a difference, 2 could not replay.";

/// Arguments of `remodel replay`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  remodel plan examples/rideshare --out out/rideshare\n  \
    remodel replay --plan out/rideshare/plan.json --source postgres://app@127.0.0.1:5432/scratch \\\n    \
    --target 127.0.0.1:9042 --samples 20 --writes\n\n\
  remodel backfill --plan out/rideshare/plan.json --source postgres://app@db/prod --target 10.0.0.5:9042\n  \
  remodel replay --plan out/rideshare/plan.json --source postgres://app@db/prod --target 10.0.0.5:9042 \\\n    \
    --existing --timezone Europe/Berlin"
)]
pub struct Args {
    #[command(flatten)]
    pub endpoints: Endpoints,
    /// Parameter sets drawn per pattern.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub samples: usize,
    /// Replay the write patterns too, and the reads they affect after each.
    #[arg(long)]
    pub writes: bool,
    /// Seed of the generated rows and of the parameters drawn.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Replay's clock: what every now(), current_date and DEFAULT now() of the replayed SQL
    /// reads, and what the generated rows' dates are around; each write moves it one second
    /// (YYYY-MM-DD[THH:MM[:SS]][Z|±HH:MM], UTC when no offset) [default: an instant fixed by
    /// --seed; with --existing, the wall clock].
    #[arg(long, value_name = "INSTANT", value_parser = parse_now)]
    pub now: Option<Clock>,
    /// Rows generated for the largest tables (a table referenced by others gets fewer).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub rows: u64,
    /// Drop the plan's tables on both sides first when they exist.
    #[arg(long)]
    pub replace: bool,
    /// The CQL that creates the target tables [default: schema.cql next to plan.json].
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Folder for replay.json and the backfill's run folder [default: the plan's folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these patterns (comma-separated ids).
    #[arg(long, value_delimiter = ',', value_name = "ID,…")]
    pub patterns: Vec<String>,
    /// Replay on the rows already there: the source as it is and the keyspace the backfill
    /// filled, read-only on both sides (no generated rows, no backfill; --writes refused).
    #[arg(long)]
    pub existing: bool,
    /// The application's session time zone (IANA name, e.g. Europe/Berlin) the SQL runs in and
    /// its parameters mean [default: the source's TimeZone].
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Replay in this keyspace instead of the plan's (a scratch one: the generated rows never
    /// reach the plan's keyspace) [default: the plan's keyspace].
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
    /// Once replay.json is written, drop what the replay generated: the --keyspace keyspace and
    /// the plan's source tables (and enum types) in the source.
    #[arg(long, requires = "keyspace", conflicts_with = "existing")]
    pub cleanup: bool,
    /// Run the plan's side through this program instead of replay's own executor (`sh -c
    /// COMMAND`): one JSON request a line on its stdin (pattern, parameters, the clock), one
    /// answer a line on its stdout (rows, or done for a write); its environment has REMODEL_CQL
    /// and REMODEL_KEYSPACE. `remodel codegen` writes one: `python -m PACKAGE.executor`.
    #[arg(long, value_name = "COMMAND")]
    pub executor: Option<String>,
}

/// `--now`'s value.
fn parse_now(text: &str) -> Result<Clock, String> {
    Clock::parse(text)
}

/// Runs `remodel replay`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.existing && args.writes {
        bail!(remodel_replay::run::WRITES_REFUSED);
    }
    if args.existing && (args.replace || args.schema.is_some()) {
        bail!("--replace and --schema cannot be combined with --existing: it creates, drops and fills nothing");
    }
    let (mut plan, plan_file, source, target) = args.endpoints.open()?;
    if args.samples == 0 || args.rows == 0 {
        bail!("--samples and --rows must be at least 1");
    }
    let plan_keyspace = plan.design.keyspace.name.clone();
    if let Some(k) = &args.keyspace {
        super::plan::check_keyspace(k)?;
        if args.cleanup && *k == plan_keyspace {
            bail!("--cleanup drops the --keyspace keyspace: give one other than the plan's own ({plan_keyspace})");
        }
        remodel_replay::scratch::rename_keyspace(&mut plan, k);
    }
    let (opts, out) = options(&args, &plan, &plan_file, &plan_keyspace)?;
    // The plan's own keyspace, when --keyspace moved the replay to another (said in replay.json).
    let moved_from = (plan.design.keyspace.name != plan_keyspace).then(|| plan_keyspace.clone());
    if !opts.existing {
        let _ = std::fs::remove_dir_all(&opts.run_dir);
    }
    eprintln!(
        "replay: {} against {} (keyspace {}{}){}",
        source.display,
        target.node,
        plan.design.keyspace.name,
        match &moved_from {
            Some(k) => format!(", in place of the plan's {k}"),
            None => String::new(),
        },
        if opts.existing {
            ", the rows already there, read-only"
        } else {
            ""
        }
    );
    let started = std::time::Instant::now();
    let notify = |m: &str| eprintln!("replay: {m}");
    let runtime = runtime()?;
    let mut report = runtime.block_on(remodel_replay::run::replay(
        &plan, &source, &target, &opts, &notify,
    ))?;
    report.plan_keyspace = moved_from;
    let file = out.join(ReplayReport::FILE);
    let json = serde_json::to_vec_pretty(&report).context("serialise replay.json")?;
    crate::files::write_atomic(&file, &json)?;
    let mut out = std::io::stdout().lock();
    print_report(&mut out, &report)?;
    writeln!(
        out,
        "wrote {} ({:.1} s)",
        file.display(),
        started.elapsed().as_secs_f64()
    )?;
    if args.cleanup {
        let scratch = remodel_replay::scratch::clean_up(&plan, &plan_keyspace, &source, &target);
        for line in runtime.block_on(scratch)? {
            writeln!(out, "cleanup: {line}")?;
        }
    }
    Ok(if report.mismatches() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_MISMATCH)
    })
}

/// The replay's options and its output folder (created): the schema to create (`schema.cql`
/// in `plan`'s keyspace, which `--keyspace` may have changed from `plan_keyspace`), the patterns
/// checked against the plan.
fn options(
    args: &Args,
    plan: &remodel_model::Plan,
    plan_file: &Path,
    plan_keyspace: &str,
) -> anyhow::Result<(Options, PathBuf)> {
    let folder = plan_file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let schema_cql = if args.existing {
        String::new()
    } else {
        let schema_file = args
            .schema
            .clone()
            .unwrap_or_else(|| folder.join("schema.cql"));
        let cql = std::fs::read_to_string(&schema_file).with_context(|| {
            format!(
                "cannot read {} (the CQL that creates the plan's tables; give --schema FILE)",
                schema_file.display()
            )
        })?;
        let ks = &plan.design.keyspace.name;
        remodel_replay::scratch::rename_in_cql(&cql, plan_keyspace, ks)
    };
    for id in &args.patterns {
        if plan.workload.pattern(id).is_none() {
            bail!(
                "--patterns {id}: no such pattern in {}",
                plan_file.display()
            );
        }
    }
    let out = args.out.clone().unwrap_or(folder);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let opts = Options {
        samples: args.samples,
        writes: args.writes,
        seed: args.seed,
        rows: args.rows,
        replace: args.replace,
        schema_cql,
        run_dir: out.join("replay-backfill"),
        only: args.patterns.clone(),
        existing: args.existing,
        time_zone: args.timezone.clone(),
        now: args.now,
        executor: args.executor.clone(),
    };
    Ok((opts, out))
}

/// The kind as replay names it (`?` when replay.json does not say).
fn kind(k: Option<StatementKind>) -> &'static str {
    k.map_or("?", StatementKind::action)
}

fn line(p: &PatternReplay) -> String {
    let head = format!("{:<6} {:<6}", p.pattern, kind(p.kind));
    match p.outcome {
        ReplayOutcome::Exception => {
            return format!(
                "{head} exception: {}",
                p.reason.as_deref().unwrap_or_default()
            )
        }
        ReplayOutcome::NotReplayed => {
            return format!(
                "{head} not replayed: {}",
                p.reason.as_deref().unwrap_or_default()
            )
        }
        ReplayOutcome::Replayed => {}
    }
    let parts = match (p.partitions_read, p.plan_partitions) {
        (Some(m), Some(e)) => format!("{m:.2} ({e:.2})"),
        (Some(m), None) => format!("{m:.2}"),
        _ => "-".into(),
    };
    let mut s = format!(
        "{head} {:>7} {:>6} {:>10} {:>8.2} / {:<8.2} {:>8.2} / {:<8.2} {parts}",
        p.samples,
        thousands(p.rows),
        p.mismatches.len(),
        p.postgres.p50_ms,
        p.postgres.p99_ms,
        p.cassandra.p50_ms,
        p.cassandra.p99_ms,
    );
    if p.refused > 0 {
        s.push_str(&format!("; {} refused by Postgres", p.refused));
    }
    if let Some(why) = &p.refused_because {
        s.push_str(&format!(" (first: {why})"));
    }
    if p.reads_after > 0 {
        s.push_str(&format!("; {} reads after", p.reads_after));
    }
    s
}

/// Mismatches printed per pattern at most (all are in replay.json).
const SHOW: usize = 5;

/// Prints the outcome table and the differences; a closed stdout is an `Err` (ends quietly).
fn print_report(out: &mut impl Write, r: &ReplayReport) -> std::io::Result<()> {
    let rows: Vec<String> = r
        .rows
        .iter()
        .map(|t| format!("{} {}", t.table, thousands(t.rows)))
        .collect();
    writeln!(
        out,
        "replay: keyspace {}, seed {}, now() {}, {} samples per pattern, one request at a time, session time zone {}",
        r.keyspace, r.seed, r.now, r.samples, r.time_zone
    )?;
    if let Some(e) = &r.executor {
        writeln!(out, "the plan's side executed by `{e}`")?;
    }
    if r.existing {
        writeln!(out, "existing rows (estimated): {}", rows.join(", "))?;
    } else {
        writeln!(out, "generated rows: {}", rows.join(", "))?;
    }
    if r.rejected > 0 {
        writeln!(
            out,
            "the backfill could not store {} rows (they are missing on the Cassandra side)",
            thousands(r.rejected)
        )?;
    }
    writeln!(
        out,
        "{:<6} {:<6} {:>7} {:>6} {:>10} {:>19} {:>19} partitions (plan)",
        "id",
        "kind",
        "samples",
        "rows",
        "mismatches",
        "postgres p50/p99 ms",
        "cassandra p50/p99 ms"
    )?;
    for p in &r.patterns {
        writeln!(out, "{}", line(p))?;
    }
    for p in r.patterns.iter().filter(|p| !p.mismatches.is_empty()) {
        for m in p.mismatches.iter().take(SHOW) {
            print_mismatch(out, m)?;
        }
        if p.mismatches.len() > SHOW {
            writeln!(
                out,
                "  … and {} more differences of {} (see replay.json)",
                p.mismatches.len() - SHOW,
                p.pattern
            )?;
        }
    }
    if r.retries > 0 {
        writeln!(
            out,
            "replay: {} Cassandra requests were sent again (timeouts, nodes down)",
            r.retries
        )?;
    }
    let samples: usize = r.patterns.iter().map(|p| p.samples).sum();
    writeln!(
        out,
        "replay: {} of {} patterns replayed, {} not replayed, {} exceptions; {samples} samples, {} mismatches",
        r.count(ReplayOutcome::Replayed),
        r.patterns.len(),
        r.count(ReplayOutcome::NotReplayed),
        r.count(ReplayOutcome::Exception),
        r.mismatches()
    )
}

/// One difference: the pattern, its parameters, the write before it, and both results.
fn print_mismatch(out: &mut impl Write, m: &ReplayMismatch) -> std::io::Result<()> {
    let after = m
        .after
        .as_ref()
        .map(|a| format!(" after {a}"))
        .unwrap_or_default();
    writeln!(
        out,
        "MISMATCH {} ({}){after}: {}",
        m.pattern, m.params, m.reason
    )?;
    if m.sql.is_empty() && m.cql.is_empty() {
        return Ok(());
    }
    writeln!(out, "  SQL ({} rows shown):", m.sql.len())?;
    for row in &m.sql {
        writeln!(out, "    {row}")?;
    }
    writeln!(out, "  Cassandra ({} rows shown):", m.cql.len())?;
    for row in &m.cql {
        writeln!(out, "    {row}")?;
    }
    Ok(())
}
