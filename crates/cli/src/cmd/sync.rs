//! `remodel sync`: backfill inside a logical replication slot's snapshot, then apply the slot's
//! changes through the plan's target tables until caught up (or until Ctrl-C); `--finish` drops
//! the slot and the publication.

use super::backfill::{load_plan, runtime, target, SourceArg, TargetTls};
use crate::progress::{self, thousands, Mode};
use anyhow::bail;
use indicatif::{ProgressBar, ProgressStyle};
use remodel_backfill::BackfillOptions;
use remodel_conn::redact_text as redact;
use remodel_sync::{Error, Progress, Status, StopAt, SyncOptions};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `remodel sync`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Zero-downtime cut-over: copies the plan's tables and then follows the source.\n\n\
    Checks the source first (wal_level = logical, a role with REPLICATION, each table's REPLICA \
    IDENTITY against what the target keys need of old rows), creates a publication over the plan's \
    source tables and a logical replication slot (pgoutput) whose exported snapshot the backfill \
    reads in, then streams the slot's committed transactions: each row change becomes the target \
    rows it feeds (computed by Postgres from each table's source_sql, converted as the backfill \
    converts), written USING TIMESTAMP of the commit, so a change applied twice or a backfilled row \
    never wins over a newer change. The applied LSN is kept in DIR/sync.json and confirmed to the \
    slot only after Cassandra acknowledged: kill it at any point and run the same command again.\n\n\
    A slot keeps WAL on the source until it is dropped: `remodel sync --finish` drops the slot and \
    the publication once writes have moved to the target.\n\n\
    Exit codes: 0 caught up (or finished), 1 stopped (a database failed, DDL or TRUNCATE on a \
    plan table; resumable where the message says so), 2 unusable input or a failed check (nothing \
    created), 3 the plan fails its checks, 130 interrupted (Ctrl-C; resumable).",
    after_help = "Example:\n  remodel sync --plan out/rideshare/plan.json --source postgres://app@127.0.0.1:5432/rideshare \\\n    --target 127.0.0.1:9042 --run-dir runs/sync --create-schema --until-caught-up\n  remodel sync --finish --source postgres://app@127.0.0.1:5432/rideshare --run-dir runs/sync"
)]
pub struct Args {
    /// The plan: a plan.json, or the folder `remodel plan --out` wrote it to.
    #[arg(long, value_name = "FILE", required_unless_present = "finish")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArg,
    /// Target Cassandra/ScyllaDB contact point, host:port (or set REMODEL_TARGET).
    #[arg(
        long,
        env = "REMODEL_TARGET",
        value_name = "HOST:PORT",
        required_unless_present = "finish"
    )]
    pub target: Option<String>,
    /// User for the target; the password is read from REMODEL_TARGET_PASSWORD.
    #[arg(long, value_name = "USER")]
    pub target_user: Option<String>,
    #[command(flatten)]
    pub target_tls: TargetTls,
    /// The run folder (sync.json, the backfill's folder backfill/); the same folder resumes.
    #[arg(long, value_name = "DIR", default_value = "runs/sync")]
    pub run_dir: PathBuf,
    /// Name of the replication slot and of the publication (letters, digits, _).
    #[arg(long, value_name = "NAME", default_value = "remodel_sync")]
    pub slot: String,
    /// Stop once the stream reaches the WAL position current when streaming starts (default).
    #[arg(long, conflicts_with = "follow")]
    pub until_caught_up: bool,
    /// Follow the source until Ctrl-C.
    #[arg(long)]
    pub follow: bool,
    /// Drop the run's slot and publication (after writes moved to the target).
    #[arg(long, conflicts_with_all = ["follow", "until_caught_up", "create_schema"])]
    pub finish: bool,
    /// Apply schema.cql (next to plan.json) before the backfill writes.
    #[arg(long)]
    pub create_schema: bool,
    /// Client timeout of one write request, in seconds (a request that times out is retried).
    #[arg(long, default_value_t = 12.0, value_name = "SECS")]
    pub request_timeout: f64,
    /// How long one target write is retried (timeouts, unavailable or unreachable node) before
    /// the run stops, in seconds.
    #[arg(long, default_value_t = 300.0, value_name = "SECS")]
    pub retry_for: f64,
    /// Progress display.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub progress: Mode,
}

/// Runs `remodel sync`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let source = args.source.pg()?;
    let runtime = runtime()?;
    if args.finish {
        let lines = runtime.block_on(remodel_sync::finish(&source, &args.run_dir))?;
        for l in lines {
            println!("{l}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.slot.is_empty()
        || args.slot.len() > 63
        || !args
            .slot
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        bail!(
            "--slot {}: expected lower-case letters, digits and _ (63 at most)",
            args.slot
        );
    }
    for (flag, secs) in [
        ("--request-timeout", args.request_timeout),
        ("--retry-for", args.retry_for),
    ] {
        if !(secs.is_finite() && secs > 0.0) {
            bail!("{flag} {secs}: expected a positive number of seconds");
        }
    }
    let (Some(plan_path), Some(node)) = (&args.plan, &args.target) else {
        bail!("--plan and --target are needed (or --finish)");
    };
    let (plan, plan_file) = load_plan(plan_path)?;
    let mut target = target(node, args.target_user.as_ref())?;
    if let Some(tls) = args.target_tls.settings()? {
        target = target.with_tls(tls)?;
    }
    let create_schema =
        if args.create_schema {
            let file = plan_file
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join("schema.cql");
            Some(std::fs::read_to_string(&file).map_err(|e| {
                anyhow::anyhow!("--create-schema: cannot read {}: {e}", file.display())
            })?)
        } else {
            None
        };
    let opts = SyncOptions {
        run_dir: args.run_dir.clone(),
        slot: args.slot.clone(),
        stop: if args.follow {
            StopAt::Follow
        } else {
            StopAt::CaughtUp
        },
        backfill: BackfillOptions {
            create_schema,
            readers: 2,
            concurrency: 32,
            plan_label: plan_file.display().to_string(),
            request_timeout: Duration::from_secs_f64(args.request_timeout),
            retry_for: Duration::from_secs_f64(args.retry_for),
            ..BackfillOptions::default()
        },
        retry_for: Duration::from_secs_f64(args.retry_for),
        cancel: Default::default(),
    };
    eprintln!(
        "sync: {} → {} (keyspace {}), run folder {}",
        source.display,
        target.node,
        plan.design.keyspace.name,
        opts.run_dir.display()
    );
    let shown: Arc<Shown> = Arc::new(Shown::new(args.progress));
    let backfill_progress: Arc<dyn remodel_backfill::Progress> =
        Arc::from(progress::reporter(args.progress));
    runtime.spawn(end_on_ctrl_c(opts.clone()));
    let outcome = runtime.block_on(remodel_sync::sync(
        &plan,
        &source,
        &target,
        &opts,
        shown.clone(),
        backfill_progress,
    ));
    shown.done();
    let resume = resume_line(&args, &source.display);
    let e = match outcome {
        Ok(state) => {
            println!(
                "caught up: {} transactions, {} row changes applied, at LSN {}; run folder {}",
                thousands(state.transactions),
                thousands(state.changes),
                state.resume_lsn(),
                args.run_dir.display()
            );
            println!("follow on with: {resume} --follow");
            eprintln!(
                "{}",
                remodel_sync::run::slot_warning(&args.slot, &args.run_dir)
            );
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => e,
    };
    let code = match &e {
        Error::Interrupted => crate::EXIT_INTERRUPTED,
        Error::Check(_) | Error::Input(_) => crate::EXIT_UNUSABLE_INPUT,
        Error::Backfill(remodel_backfill::Error::Interrupted) => crate::EXIT_INTERRUPTED,
        _ => super::backfill::EXIT_STOPPED,
    };
    eprintln!("{}", redact(&format!("remodel: error: {e}")));
    if code != crate::EXIT_UNUSABLE_INPUT && args.run_dir.join("sync.json").is_file() {
        eprintln!("{}", redact(&format!("resume with: {resume}")));
        eprintln!(
            "{}",
            remodel_sync::run::slot_warning(&args.slot, &args.run_dir)
        );
    }
    Ok(ExitCode::from(code))
}

/// The command that resumes this sync: its flags, the source redacted (never a password).
fn resume_line(args: &Args, source: &str) -> String {
    let mut parts = vec!["remodel".to_string(), "sync".to_string()];
    if let Some(p) = &args.plan {
        parts.extend(["--plan".into(), p.display().to_string()]);
    }
    parts.extend(["--source".into(), source.to_string()]);
    if let Some(t) = &args.target {
        parts.extend(["--target".into(), t.clone()]);
    }
    parts.extend([
        "--run-dir".into(),
        args.run_dir.display().to_string(),
        "--slot".into(),
        args.slot.clone(),
    ]);
    parts
        .iter()
        .map(|p| remodel_spark::shell_word(p))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ctrl-C: the backfill ends cleanly, streaming after the transaction being applied.
async fn end_on_ctrl_c(opts: SyncOptions) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("sync: interrupted: ending after the transaction being applied (Ctrl-C again to quit at once)");
    opts.backfill.interrupt.trigger();
    opts.cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(i32::from(crate::EXIT_INTERRUPTED));
    }
}

/// Lines and the streaming spinner (applied transactions, lag in bytes and seconds).
struct Shown {
    bar: Option<ProgressBar>,
    last_line: std::sync::Mutex<std::time::Instant>,
}

impl Shown {
    fn new(mode: Mode) -> Shown {
        let bars = match mode {
            Mode::Bars => true,
            Mode::Auto => std::io::stderr().is_terminal(),
            _ => false,
        };
        let bar = bars.then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Shown {
            bar,
            last_line: std::sync::Mutex::new(std::time::Instant::now()),
        }
    }

    fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Shown {
    fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn status(&self, s: &Status) {
        let behind = s.received_lsn.saturating_sub(s.applied_lsn);
        let to_go = s
            .target_lsn
            .map(|t| {
                format!(
                    ", {} bytes to the caught-up point",
                    thousands(t.saturating_sub(s.applied_lsn))
                )
            })
            .unwrap_or_default();
        let msg = format!(
            "applied {} transactions ({} row changes), at {}, lag {} bytes / {:.1} s{to_go}",
            thousands(s.transactions),
            thousands(s.changes),
            remodel_sync::state::format_lsn(s.applied_lsn),
            thousands(behind),
            s.lag_seconds
        );
        match &self.bar {
            Some(b) => b.set_message(msg),
            None => {
                let mut last = self.last_line.lock().unwrap_or_else(|p| p.into_inner());
                if last.elapsed() >= Duration::from_secs(5) {
                    *last = std::time::Instant::now();
                    eprintln!("sync: {msg}");
                }
            }
        }
    }
}
