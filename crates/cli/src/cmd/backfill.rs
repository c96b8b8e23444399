//! `remodel backfill`: fills the target tables of a plan from Postgres, resumable.

pub mod resume;

use crate::progress::{self, thousands, Mode};
use anyhow::{bail, Context};
use remodel_backfill::run::new_run_path;
use remodel_backfill::target::TargetTable;
use remodel_backfill::{
    BackfillOptions, ClientCert, Concurrency, CqlTarget, CqlTls, MaxErrors, PgSource, Verify,
    WriteTimestamp,
};
use remodel_conn::redact_text as redact;
use remodel_model::{ConsistencyLevel, Plan, RunSummary};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Exit code: the run stopped (a database failed for good, too many rejects); resumable.
pub const EXIT_STOPPED: u8 = 1;

/// The long help of `remodel backfill` (`--help`), set on its subcommand in `lib.rs`: the
/// subcommand's doc comment would replace one set here alone.
pub const LONG_ABOUT: &str = "Fills the target tables of a reviewed plan from Postgres.\n\n\
    For each table of plan.json, its source_sql runs on Postgres inside one exported snapshot \
    shared by parallel readers; the driving table is cut into ranges read with binary COPY; rows \
    are converted exactly (numeric to decimal with every digit, timestamps to UTC milliseconds) and \
    written with prepared, idempotent INSERTs, one partition's rows per UNLOGGED batch, at the \
    plan's writes' consistency level, as many in flight as an adaptive level allows (--concurrency). \
    A row that cannot be stored (NULL in a key column, NaN numeric, …) goes to the rejects file with \
    its source key and reason. A write that times out or finds a node down is retried with back-off \
    for --retry-for (the retries are counted by cause in summary.json); past it, rows the cluster \
    says cannot reach their consistency level go to the rejects file too, and the run stops when \
    no node answers.\n\n\
    The run folder (--run-dir, default runs/<UTC time>) holds checkpoint.json (finished ranges), \
    rejects/<table>.jsonl, backfill.log and summary.json; no password is written anywhere. After a \
    crash or a stop, `--resume DIR` skips the finished ranges and reads the others again.\n\n\
    A second process on the same run folder is refused (the folder is locked while a run has it \
    open). Before anything is written, the target's tables and user types are compared with the \
    plan (system_schema): one whose key, columns or types differ is refused, naming the difference \
    (--create-schema creates what is missing, and never keeps a table that differs). Ctrl-C ends \
    the run cleanly and prints the command that resumes it (so does SIGTERM, `kill PID`).\n\n\
    Exit codes: 0 completed, 1 stopped (see the message; resumable), 2 unusable input or URL (a \
    database that cannot be reached, a target that differs from the plan, a run folder in use), \
    3 the plan fails its checks, 130 interrupted (Ctrl-C or SIGTERM; resumable).";

/// Arguments of `remodel backfill`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  remodel backfill --plan out/rideshare/plan.json \\\n    --source postgres://app@127.0.0.1:5432/rideshare --target 127.0.0.1:9042 --create-schema"
)]
pub struct Args {
    #[command(flatten)]
    pub endpoints: Endpoints,
    /// Only these target tables (comma-separated) [default: all tables of the plan].
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    pub tables: Vec<String>,
    /// The run folder (checkpoint, rejects, log, summary) [default: runs/<UTC time>].
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub run_dir: Option<PathBuf>,
    /// Continue the run in DIR: finished ranges are skipped, unfinished ones read again.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Apply schema.cql (next to plan.json, or --schema FILE) before writing.
    #[arg(long)]
    pub create_schema: bool,
    /// The CQL to apply with --create-schema.
    #[arg(long, value_name = "FILE", requires = "create_schema")]
    pub schema: Option<PathBuf>,
    /// Parallel Postgres readers (one connection each, all in one snapshot).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub readers: usize,
    /// Write requests in flight: `auto` adapts the level to the cluster (grows while the rows
    /// written per second rise and latency holds, backs off on timeouts and overloaded nodes;
    /// 32 to start, 4 to 1024), N keeps N at most.
    #[arg(long, default_value = "auto", value_name = "auto|N")]
    pub concurrency: Concurrency,
    /// Consistency level of every write (ONE, LOCAL_ONE, QUORUM, LOCAL_QUORUM, EACH_QUORUM,
    /// ALL) [default: the plan's writes' level, LOCAL_QUORUM unless the plan says otherwise].
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<ConsistencyLevel>,
    /// Rows written per second at most, all tables together [default: no limit].
    #[arg(long, value_name = "N")]
    pub max_rows_per_second: Option<f64>,
    /// Write with USING TIMESTAMP: without a value, the snapshot's start (live writes made
    /// after it win); or MICROS since the Unix epoch.
    #[arg(long, num_args = 0..=1, default_missing_value = "snapshot", value_name = "MICROS")]
    pub write_timestamp: Option<String>,
    /// Stop once more than N rows (or P% of the rows read) are rejected.
    #[arg(long, default_value = "100", value_name = "N|P%")]
    pub max_errors: MaxErrors,
    /// Client timeout of one write request, in seconds.
    #[arg(long, default_value_t = 12.0, value_name = "SECS")]
    pub request_timeout: f64,
    /// How long one write is retried (timeouts, unavailable or unreachable node), in seconds;
    /// then its rows are rejected when the cluster answered that the consistency level cannot
    /// be reached, and the run stops when no node answered.
    #[arg(long, default_value_t = 300.0, value_name = "SECS")]
    pub retry_for: f64,
    /// Source rows per range (a checkpoint is written after each range).
    #[arg(long, default_value_t = 50_000, value_name = "N")]
    pub range_rows: u64,
    /// Rows larger than this many bytes are rejected.
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    pub max_row_bytes: usize,
    /// Progress display.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub progress: Mode,
}

/// The source URL, as `example-data` also takes it.
#[derive(Debug, clap::Args)]
pub struct SourceArg {
    /// Source Postgres URL, postgres://user:password@host:port/db (or set REMODEL_SOURCE); TLS
    /// as libpq takes it: ?sslmode=verify-full&sslrootcert=FILE (sslcert, sslkey too). The
    /// password is never printed nor stored.
    #[arg(
        long,
        env = "REMODEL_SOURCE",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub source: String,
}

/// What `backfill` and `verify` both need: the plan, the source and the target.
#[derive(Debug, clap::Args)]
pub struct Endpoints {
    /// The plan: a plan.json, or the folder `remodel plan --out` wrote it to.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub source: SourceArg,
    /// Target Cassandra/ScyllaDB contact point, host:port (or set REMODEL_TARGET).
    #[arg(long, env = "REMODEL_TARGET", value_name = "HOST:PORT")]
    pub target: String,
    /// User for the target; the password is read from REMODEL_TARGET_PASSWORD.
    #[arg(long, value_name = "USER")]
    pub target_user: Option<String>,
    #[command(flatten)]
    pub target_tls: TargetTls,
}

/// How much of the target node's certificate `--target-tls` checks (libpq's sslmode words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsMode {
    /// No TLS.
    Off,
    /// Encrypted; the certificate is not checked.
    Require,
    /// Signed by --target-ca (or a system CA); the address in it is not compared.
    VerifyCa,
    /// Signed as for verify-ca, and naming the node's IP address (subjectAltName).
    VerifyFull,
}

/// TLS to the target (Cassandra's client_encryption_options).
#[derive(Debug, Clone, clap::Args)]
pub struct TargetTls {
    /// TLS to the target: off, require, verify-ca, verify-full [default: off; verify-ca with
    /// --target-ca; require with --target-cert].
    #[arg(long, value_enum, value_name = "MODE")]
    pub target_tls: Option<TlsMode>,
    /// PEM file of the CA certificate(s) the target's certificate must be signed by (with
    /// verify-ca or verify-full; without it the system's CAs).
    #[arg(long, value_name = "FILE")]
    pub target_ca: Option<PathBuf>,
    /// PEM client certificate, for a cluster that requires one (require_client_auth).
    #[arg(long, value_name = "FILE", requires = "target_key")]
    pub target_cert: Option<PathBuf>,
    /// PEM private key of --target-cert (not encrypted).
    #[arg(long, value_name = "FILE", requires = "target_cert")]
    pub target_key: Option<PathBuf>,
}

impl TargetTls {
    /// The TLS settings these flags ask for (`None`: plain connections).
    pub fn settings(&self) -> anyhow::Result<Option<CqlTls>> {
        let client = match (&self.target_cert, &self.target_key) {
            (Some(cert), Some(key)) => Some(ClientCert {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        let mode = match self.target_tls {
            Some(mode) => mode,
            None if self.target_ca.is_some() => TlsMode::VerifyCa,
            None if client.is_some() => TlsMode::Require,
            None => return Ok(None),
        };
        let verify = match mode {
            TlsMode::Off => {
                if self.target_ca.is_some() || client.is_some() {
                    bail!("--target-tls off: --target-ca, --target-cert and --target-key need TLS (give require, verify-ca or verify-full)");
                }
                return Ok(None);
            }
            // libpq's rule: a root certificate given with `require` is checked.
            TlsMode::Require if self.target_ca.is_some() => Verify::Ca,
            TlsMode::Require => Verify::None,
            TlsMode::VerifyCa => Verify::Ca,
            TlsMode::VerifyFull => Verify::Full,
        };
        Ok(Some(CqlTls {
            verify,
            ca: self.target_ca.clone(),
            client,
        }))
    }
}

impl Endpoints {
    /// The plan (and its file), the source and the target.
    pub fn open(&self) -> anyhow::Result<(Plan, PathBuf, PgSource, CqlTarget)> {
        let (plan, file) = load_plan(&self.plan)?;
        let mut target = target(&self.target, self.target_user.as_ref())?;
        if let Some(tls) = self.target_tls.settings()? {
            target = target.with_tls(tls)?;
        }
        Ok((plan, file, self.source.pg()?, target))
    }
}

impl SourceArg {
    /// The source, with `PGPASSWORD` as its password when the URL has none (as libpq does); a
    /// URL that is no connection string is refused here, before anything runs.
    pub fn pg(&self) -> anyhow::Result<PgSource> {
        let source = PgSource::new(&self.source).with_password(std::env::var("PGPASSWORD").ok());
        source.check()?;
        Ok(source)
    }
}

/// Reads `plan.json` (or `DIR/plan.json`).
pub(crate) fn load_plan(path: &Path) -> anyhow::Result<(Plan, PathBuf)> {
    let file = if path.is_dir() {
        path.join("plan.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "cannot read {} (write one with `remodel plan DIR --out DIR`)",
            file.display()
        )
    })?;
    let plan = parse_plan(&text, &file)?;
    if plan.design.tables.is_empty() {
        bail!("{} has no target tables", file.display());
    }
    if !plan.design.violations.is_empty() {
        // The designer's checks failed: nothing runs it (exit 3), whatever the command.
        if let Err(remodel_backfill::Error::Plan(why)) = TargetTable::from_plan(&plan, &[]) {
            return Err(crate::PlanFailsChecks(format!("{}: {why}", file.display())).into());
        }
    }
    Ok((plan, file))
}

/// Parses a `plan.json`'s text: its format first (one line for a plan of another format), then
/// the plan.
pub(crate) fn parse_plan(text: &str, file: &Path) -> anyhow::Result<Plan> {
    let not_a_plan = || format!("{} is not a plan.json of remodel", file.display());
    let header: remodel_model::PlanHeader = serde_json::from_str(text).with_context(not_a_plan)?;
    if let Err(e) = remodel_model::check_format(header) {
        bail!("{}", e.message(&file.display().to_string()));
    }
    serde_json::from_str(text).with_context(not_a_plan)
}

/// The target contact point, with the password from the environment when a user is given.
pub(crate) fn target(node: &str, user: Option<&String>) -> anyhow::Result<CqlTarget> {
    let credentials = match user {
        Some(u) => {
            let password = std::env::var("REMODEL_TARGET_PASSWORD").map_err(|_| {
                anyhow::anyhow!("--target-user {u} needs the password in REMODEL_TARGET_PASSWORD")
            })?;
            Some((u.clone(), password))
        }
        None => None,
    };
    Ok(CqlTarget::new(node, credentials)?)
}

fn options(args: &Args, plan_file: &Path) -> anyhow::Result<BackfillOptions> {
    let write_timestamp = match args.write_timestamp.as_deref() {
        None => WriteTimestamp::Server,
        Some("snapshot") => WriteTimestamp::Snapshot,
        Some(v) => WriteTimestamp::Fixed(v.parse().with_context(|| {
            format!("--write-timestamp {v}: expected microseconds since the Unix epoch")
        })?),
    };
    let create_schema = if args.create_schema {
        let file = args.schema.clone().unwrap_or_else(|| {
            plan_file
                .parent()
                .unwrap_or(Path::new("."))
                .join("schema.cql")
        });
        Some(std::fs::read_to_string(&file).with_context(|| {
            format!(
                "--create-schema: cannot read {} (give --schema FILE)",
                file.display()
            )
        })?)
    } else {
        None
    };
    for (flag, secs) in [
        ("--request-timeout", args.request_timeout),
        ("--retry-for", args.retry_for),
    ] {
        if !(secs.is_finite() && secs > 0.0) {
            bail!("{flag} {secs}: expected a positive number of seconds");
        }
    }
    if args.readers == 0 || args.range_rows == 0 {
        bail!("--readers and --range-rows must be at least 1");
    }
    let (run_dir, resume) = match (&args.resume, &args.run_dir) {
        (Some(dir), _) => (dir.clone(), true),
        (None, Some(dir)) => (dir.clone(), false),
        (None, None) => (new_run_path(Path::new("runs")), false),
    };
    Ok(BackfillOptions {
        tables: args.tables.clone(),
        run_dir,
        resume,
        create_schema,
        readers: args.readers,
        concurrency: args.concurrency,
        consistency: args.consistency,
        max_rows_per_second: args.max_rows_per_second,
        write_timestamp,
        max_errors: args.max_errors,
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        retry_for: Duration::from_secs_f64(args.retry_for),
        rows_per_range: args.range_rows,
        batch_bytes: 5 * 1024,
        max_row_bytes: args.max_row_bytes,
        plan_label: plan_file.display().to_string(),
        interrupt: remodel_backfill::Interrupt::default(),
        resume_command: None,
        snapshot: None,
        clock_micros: None,
    })
}

/// A tokio runtime for one command.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `remodel backfill`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (plan, plan_file, source, target) = args.endpoints.open()?;
    let mut opts = options(&args, &plan_file)?;
    if opts.resume && !opts.run_dir.join("checkpoint.json").is_file() {
        bail!(
            "--resume {}: no checkpoint.json there (give the folder of an earlier run)",
            opts.run_dir.display()
        );
    }
    let resume = resume::command(&args, &opts.run_dir, &source.display);
    opts.resume_command = Some(resume.line.clone());
    eprintln!(
        "backfill: {} → {} (keyspace {}), run folder {}",
        source.display,
        target.node,
        plan.design.keyspace.name,
        opts.run_dir.display()
    );
    let reporter: Arc<dyn remodel_backfill::Progress> =
        Arc::from(progress::reporter(args.progress));
    let runtime = runtime()?;
    runtime.spawn(end_on_ctrl_c(opts.interrupt.clone()));
    let started = std::time::SystemTime::now();
    let outcome = runtime.block_on(remodel_backfill::backfill(
        &plan, &source, &target, &opts, reporter,
    ));
    let e = match outcome {
        Ok(summary) => {
            print_summary(&summary);
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => e,
    };
    let code = match &e {
        remodel_backfill::Error::Interrupted => crate::EXIT_INTERRUPTED,
        remodel_backfill::Error::Stopped(_) => EXIT_STOPPED,
        // Refused before anything was written: the input, a database, the target's schema.
        _ => crate::EXIT_UNUSABLE_INPUT,
    };
    if let Some(s) = summary_since(&opts.run_dir, started) {
        print_summary(&s);
    }
    eprintln!("{}", redact(&format!("remodel: error: {e}")));
    if code != crate::EXIT_UNUSABLE_INPUT {
        eprintln!("{}", redact(&format!("resume with: {}", resume.line)));
        if let Some(note) = resume.note {
            eprintln!("({note})");
        }
    }
    Ok(ExitCode::from(code))
}

/// The first Ctrl-C or SIGTERM ends the run cleanly (the ranges being read are read again on
/// resume); a second one ends the process at once, which a checkpoint only ever replaced whole
/// survives too.
async fn end_on_ctrl_c(interrupt: remodel_backfill::Interrupt) {
    let mut stops = crate::signals::Stops::new();
    let Some(signal) = stops.next().await else {
        return;
    };
    eprintln!("backfill: interrupted ({signal}): ending cleanly (again to quit at once)");
    interrupt.trigger();
    if stops.next().await.is_some() {
        std::process::exit(i32::from(crate::EXIT_INTERRUPTED));
    }
}

/// `summary.json` of the run folder when this attempt wrote it (after `since`).
fn summary_since(run_dir: &Path, since: std::time::SystemTime) -> Option<RunSummary> {
    let file = run_dir.join(RunSummary::FILE);
    let written = std::fs::metadata(&file).and_then(|m| m.modified()).ok()?;
    if written < since {
        return None;
    }
    serde_json::from_str(&std::fs::read_to_string(&file).ok()?).ok()
}

fn print_summary(s: &RunSummary) {
    let width = s
        .tables
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{:<width$} {:>12} {:>12} {:>10} {:>9} {:>9}",
        "table", "read", "written", "rejected", "ranges", "seconds"
    );
    for t in &s.tables {
        println!(
            "{:<width$} {:>12} {:>12} {:>10} {:>9} {:>9.1}",
            t.name,
            thousands(t.rows_read),
            thousands(t.rows_written),
            thousands(t.rows_rejected),
            format!("{}/{}", t.ranges_done, t.ranges_total),
            t.seconds
        );
    }
    let read: u64 = s.tables.iter().map(|t| t.rows_read).sum();
    let rejected: u64 = s.tables.iter().map(|t| t.rows_rejected).sum();
    let skipped: u64 = s.tables.iter().map(|t| t.ranges_skipped).sum();
    let expired: u64 = s.tables.iter().map(|t| t.rows_expired).sum();
    println!(
        "{} in {:.1} s: {} rows read, {} rejected{}, {} retries{}{}; run folder {}",
        s.status.as_str(),
        s.elapsed_seconds,
        thousands(read),
        thousands(rejected),
        if expired > 0 {
            format!(
                ", {} past their TTL instant (not written)",
                thousands(expired)
            )
        } else {
            String::new()
        },
        s.retries,
        if s.retries > 0 {
            format!(" ({})", s.retry_causes.describe())
        } else {
            String::new()
        },
        if skipped > 0 {
            format!(", {skipped} ranges skipped (finished earlier)")
        } else {
            String::new()
        },
        s.run_dir
    );
    if let Some(line) = writes_line(s) {
        println!("{line}");
    }
    if rejected > 0 {
        println!(
            "rejected rows, with their source key and reason: {}/rejects/",
            s.run_dir
        );
    }
}

/// `writes at LOCAL_QUORUM, 32 to 256 in flight (auto; 128 at the end, 5 changes)`.
fn writes_line(s: &RunSummary) -> Option<String> {
    let c = s.concurrency.as_ref()?;
    let level = s.consistency.as_deref().unwrap_or("?");
    Some(if c.mode == "auto" {
        format!(
            "writes at {level}, {} to {} in flight (auto; {} at the end, {} changes)",
            c.min, c.max, c.current, c.changes_total
        )
    } else {
        format!("writes at {level}, {} in flight", c.current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        tls: TargetTls,
    }

    fn settings(args: &[&str]) -> Result<Option<CqlTls>, String> {
        let flags = Flags::try_parse_from(std::iter::once("remodel").chain(args.iter().copied()))
            .map_err(|e| format!("{:?}", e.kind()))?;
        flags.tls.settings().map_err(|e| e.to_string())
    }

    fn tls(verify: Verify, ca: Option<&str>, client: Option<(&str, &str)>) -> Option<CqlTls> {
        Some(CqlTls {
            verify,
            ca: ca.map(PathBuf::from),
            client: client.map(|(c, k)| ClientCert {
                cert: c.into(),
                key: k.into(),
            }),
        })
    }

    #[test]
    fn target_tls_flags_pick_the_check_level() {
        assert_eq!(settings(&[]), Ok(None));
        assert_eq!(settings(&["--target-tls", "off"]), Ok(None));
        assert_eq!(
            settings(&["--target-tls", "require"]),
            Ok(tls(Verify::None, None, None))
        );
        assert_eq!(
            settings(&["--target-tls", "verify-full"]),
            Ok(tls(Verify::Full, None, None))
        );
        // A CA alone means its check, as libpq's sslrootcert does (also with `require`).
        assert_eq!(
            settings(&["--target-ca", "ca.pem"]),
            Ok(tls(Verify::Ca, Some("ca.pem"), None))
        );
        assert_eq!(
            settings(&["--target-tls", "require", "--target-ca", "ca.pem"]),
            Ok(tls(Verify::Ca, Some("ca.pem"), None))
        );
        assert_eq!(
            settings(&["--target-cert", "c.pem", "--target-key", "k.pem"]),
            Ok(tls(Verify::None, None, Some(("c.pem", "k.pem"))))
        );
    }

    #[test]
    fn inconsistent_target_tls_flags_are_refused() {
        assert_eq!(
            settings(&["--target-cert", "c.pem"]),
            Err("MissingRequiredArgument".into())
        );
        assert_eq!(
            settings(&["--target-tls", "strict"]),
            Err("InvalidValue".into())
        );
        let e = settings(&["--target-tls", "off", "--target-ca", "ca.pem"]).unwrap_err();
        assert!(e.starts_with("--target-tls off: --target-ca"), "{e}");
    }
}
