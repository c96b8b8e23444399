//! `remodel sync`: backfill inside a logical replication slot's snapshot, then apply the slot's
//! changes through the plan's target tables until caught up (or until Ctrl-C or SIGTERM); `--finish` drops
//! the slot and the publication.

use super::backfill::resume::{connection_words, on_command_line, render, Word};
use super::backfill::{load_plan, runtime, target, SourceArg, TargetTls};
use crate::progress::{self, thousands, Mode};
use anyhow::bail;
use indicatif::{ProgressBar, ProgressStyle};
use remodel_backfill::{BackfillOptions, Concurrency};
use remodel_conn::redact_text as redact;
use remodel_model::ConsistencyLevel;
use remodel_sync::state::SyncState;
use remodel_sync::{Error, Progress, Status, StopAt, SyncOptions, Synced};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The long help of `remodel sync` (`--help`), set on its subcommand in `lib.rs`: the
/// subcommand's doc comment would replace one set here alone.
pub const LONG_ABOUT: &str = "Zero-downtime cut-over: copies the plan's tables and then follows the source.\n\n\
    Checks the source first (wal_level = logical, a role with REPLICATION, each table's REPLICA \
    IDENTITY against what the target keys need of old rows), creates a publication over the plan's \
    source tables and a logical replication slot (pgoutput) whose exported snapshot the backfill \
    reads in, then streams the slot's committed transactions: each row change becomes the target \
    rows it feeds (computed by Postgres from each table's source_sql, converted as the backfill \
    converts), written USING TIMESTAMP of the commit, so a change applied twice or a backfilled row \
    never wins over a newer change. The applied LSN is kept in DIR/sync.json and confirmed to the \
    slot only after Cassandra acknowledged: kill it at any point and run the same command again.\n\n\
    --follow runs until stopped: Ctrl-C, or SIGTERM (`kill PID`) for one in the background; it \
    ends after the transaction being applied (exit 130) and the same command resumes it. \
    \"caught up\" counts what this command applied and what the run folder holds since its slot \
    was created. One sync runs per run folder (DIR/lock holds its pid).\n\n\
    A slot keeps WAL on the source until it is dropped: `remodel sync --finish` drops the slot and \
    the publication once writes have moved to the target, and renames DIR/sync.json to \
    DIR/sync.finished.json (run again, it says the folder is finished already).\n\n\
    Exit codes: 0 caught up (or finished), 1 stopped (a database failed, DDL or TRUNCATE on a \
    plan table; resumable where the message says so), 2 unusable input, a failed check or a \
    database that cannot be reached (nothing created), 3 the plan fails its checks, 130 \
    interrupted (Ctrl-C or SIGTERM; resumable).";

/// Arguments of `remodel sync`.
#[derive(Debug, clap::Args)]
#[command(
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
    /// Follow the source until stopped (Ctrl-C, or SIGTERM: `kill PID`).
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
    /// Target writes in flight (the backfill's and the stream's): `auto` adapts the level to
    /// the cluster, N keeps N at most.
    #[arg(long, default_value = "auto", value_name = "auto|N")]
    pub concurrency: Concurrency,
    /// Consistency level of every target write [default: the plan's writes' level].
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<ConsistencyLevel>,
    /// Progress display.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub progress: Mode,
}

/// Runs `remodel sync`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let source = args.source.pg()?;
    let runtime = runtime()?;
    if args.finish {
        return Ok(
            match runtime.block_on(remodel_sync::finish(&source, &args.run_dir)) {
                Ok(lines) => {
                    for l in lines {
                        println!("{l}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{}", redact(&format!("remodel: error: {e}")));
                    ExitCode::from(exit_code(&e))
                }
            },
        );
    }
    let (Some(plan_path), Some(node)) = (&args.plan, &args.target) else {
        bail!("--plan and --target are needed (or --finish)");
    };
    let (plan, plan_file) = load_plan(plan_path)?;
    let opts = options(&args, &plan_file)?;
    let mut target = target(node, args.target_user.as_ref())?;
    if let Some(tls) = args.target_tls.settings()? {
        target = target.with_tls(tls)?;
    }
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
    runtime.spawn(end_on_signal(opts.clone()));
    let outcome = runtime.block_on(remodel_sync::sync(
        &plan,
        &source,
        &target,
        &opts,
        shown.clone(),
        backfill_progress,
    ));
    shown.done();
    Ok(ended(&args, &source.display, outcome))
}

/// Prints how the sync ended, the commands to run next (no password in them) and the slot's
/// warning; returns the exit code.
fn ended(args: &Args, source: &str, outcome: Result<Synced, Error>) -> ExitCode {
    let (resume, note) = resume_line(args, source, &on_command_line);
    let warning = remodel_sync::run::slot_warning(&args.slot, &args.run_dir);
    let e = match outcome {
        Ok(done) => {
            println!("{}", caught_up(&done, &args.run_dir));
            println!("follow on with: {}", follow_line(&resume));
            if let Some(note) = &note {
                println!("({note})");
            }
            eprintln!("{warning}");
            return ExitCode::SUCCESS;
        }
        Err(e) => e,
    };
    let code = exit_code(&e);
    eprintln!("{}", redact(&format!("remodel: error: {e}")));
    if matches!(e, Error::Stopped { .. }) {
        // Resuming would meet the same change again: the fix is on the source, then a new sync.
        eprintln!(
            "(resuming would stop at the same change: do as said above, drop this sync's slot with `remodel sync --finish --source … --run-dir {}`, then start a new sync)",
            args.run_dir.display()
        );
        eprintln!("{warning}");
    } else if code != crate::EXIT_UNUSABLE_INPUT && args.run_dir.join(SyncState::FILE).is_file() {
        eprintln!("{}", redact(&format!("resume with: {resume}")));
        if let Some(note) = &note {
            eprintln!("({note})");
        }
        eprintln!("{warning}");
    }
    ExitCode::from(code)
}

/// The sync's options from the flags (checked), the schema to create read next to the plan.
fn options(args: &Args, plan_file: &std::path::Path) -> anyhow::Result<SyncOptions> {
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
    Ok(SyncOptions {
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
            concurrency: args.concurrency,
            consistency: args.consistency,
            plan_label: plan_file.display().to_string(),
            request_timeout: Duration::from_secs_f64(args.request_timeout),
            retry_for: Duration::from_secs_f64(args.retry_for),
            ..BackfillOptions::default()
        },
        retry_for: Duration::from_secs_f64(args.retry_for),
        cancel: Default::default(),
    })
}

/// The exit code of a sync that ended with `e`.
fn exit_code(e: &Error) -> u8 {
    use remodel_backfill::Error as Backfill;
    match e {
        Error::Interrupted | Error::Backfill(Backfill::Interrupted) => crate::EXIT_INTERRUPTED,
        // Refused before anything was created: a check, the input, a database not reached.
        Error::Check(_) | Error::Input(_) | Error::Connect(_) => crate::EXIT_UNUSABLE_INPUT,
        Error::Database(Backfill::Plan(_) | Backfill::Input(_)) => crate::EXIT_UNUSABLE_INPUT,
        _ => super::backfill::EXIT_STOPPED,
    }
}

/// The line of a sync that caught up: what this command applied, and what the run folder has
/// since its slot was created (`sync.json` counts every command on the folder).
fn caught_up(done: &Synced, run_dir: &std::path::Path) -> String {
    let s = &done.state;
    format!(
        "caught up at LSN {}: this command applied {} transactions ({} row changes); run folder {}: {} transactions ({} row changes) since its slot was created",
        s.resume_lsn(),
        thousands(done.transactions),
        thousands(done.changes),
        run_dir.display(),
        thousands(s.transactions),
        thousands(s.changes)
    )
}

/// `resume` (a command that ends once caught up, unless it follows) made to follow.
fn follow_line(resume: &str) -> String {
    if resume.ends_with(" --follow") {
        resume.to_string()
    } else {
        format!("{resume} --follow")
    }
}

/// The command that resumes this sync, as it was run (`--follow` kept): its flags, the source
/// redacted (never a password), and the note to print under it when the password was left out;
/// `given` tells whether a flag was on the command line.
fn resume_line(
    args: &Args,
    source: &str,
    given: &dyn Fn(&str) -> bool,
) -> (String, Option<String>) {
    let mut words: Vec<Word> = Vec::new();
    if let Some(p) = &args.plan {
        words.push(("--plan".into(), Some(p.display().to_string())));
    }
    let (connection, note) = connection_words(
        &args.source,
        source,
        args.target.as_deref(),
        args.target_user.as_ref(),
        &args.target_tls,
        given,
    );
    words.extend(connection);
    words.push(("--run-dir".into(), Some(args.run_dir.display().to_string())));
    words.push(("--slot".into(), Some(args.slot.clone())));
    for (flag, secs, default) in [
        ("--request-timeout", args.request_timeout, 12.0),
        ("--retry-for", args.retry_for, 300.0),
    ] {
        if secs != default {
            words.push((flag.into(), Some(secs.to_string())));
        }
    }
    if args.concurrency != Concurrency::Auto {
        words.push(("--concurrency".into(), Some(args.concurrency.to_string())));
    }
    if let Some(level) = args.consistency {
        words.push(("--consistency".into(), Some(level.cql_name().to_string())));
    }
    if args.follow {
        words.push(("--follow".into(), None));
    }
    (render("remodel sync", words), note)
}

/// Ctrl-C or SIGTERM (`kill PID`: a `--follow` in the background gets no Ctrl-C): the backfill
/// ends cleanly, streaming after the transaction being applied; a second one quits at once.
async fn end_on_signal(opts: SyncOptions) {
    let mut stops = crate::signals::Stops::new();
    let Some(signal) = stops.next().await else {
        return;
    };
    eprintln!(
        "sync: interrupted ({signal}): ending after the transaction being applied (again to quit at once)"
    );
    opts.backfill.interrupt.trigger();
    opts.cancel.cancel();
    if stops.next().await.is_some() {
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
            "applied {} transactions ({} row changes) by this command, {} in the run folder, at {}, lag {} bytes / {:.1} s{to_go}, {} in flight, {} retries",
            thousands(s.transactions),
            thousands(s.changes),
            thousands(s.total_transactions),
            remodel_sync::state::format_lsn(s.applied_lsn),
            thousands(behind),
            s.lag_seconds,
            thousands(s.level as u64),
            thousands(s.retries)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn resume(line: &[&str]) -> (String, Option<String>) {
        let args: Args = super::super::parse_args(line);
        let shown = remodel_conn::redact_url(&args.source.source);
        let given = |flag: &str| line.contains(&flag);
        resume_line(&args, &shown, &given)
    }

    #[test]
    fn the_resume_command_keeps_follow_and_says_where_the_password_went() {
        let (line, note) = resume(&[
            "--plan",
            "p/plan.json",
            "--source",
            "postgres://app:secret@db:5432/x",
            "--target",
            "h:9042",
            "--target-tls",
            "require",
            "--run-dir",
            "runs/s",
            "--follow",
        ]);
        assert_eq!(
            line,
            "remodel sync --plan p/plan.json --source postgres://app@db:5432/x --target h:9042 \
             --target-tls require --run-dir runs/s --slot remodel_sync --follow"
        );
        assert_eq!(
            note.as_deref(),
            Some(super::super::backfill::resume::PASSWORD_NOTE)
        );
        assert_eq!(follow_line(&line), line);
        let (line, note) = resume(&[
            "--plan",
            "p/plan.json",
            "--source",
            "postgres://app@db:5432/x",
            "--target",
            "h:9042",
            "--until-caught-up",
        ]);
        assert_eq!(
            follow_line(&line),
            "remodel sync --plan p/plan.json --source postgres://app@db:5432/x --target h:9042 \
             --run-dir runs/sync --slot remodel_sync --follow"
        );
        assert_eq!(note, None, "no password to leave out");
    }
}
