//! The `remodel` command line: argument parsing, output and exit codes.
//!
//! Architecture invariant: only this crate knows about terminals, files given on the command line
//! and exit codes; every other crate returns values and diagnostics.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod cmd;
pub mod diagnostics;
mod files;
mod progress;
mod signals;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::Path;
use std::process::ExitCode;

/// Exit code: the input could not be used (missing file, nothing found).
pub const EXIT_UNUSABLE_INPUT: u8 = 2;

/// Exit code: the plan was written but fails its checks (it would lose or corrupt data).
pub const EXIT_PLAN_FAILS_CHECKS: u8 = 3;

/// Exit code: Ctrl-C ended the command (128 + SIGINT, as a shell reports it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The error of a command given a plan that fails its checks (exit 3).
#[derive(Debug)]
pub(crate) struct PlanFailsChecks(pub String);

impl std::fmt::Display for PlanFailsChecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanFailsChecks {}

/// The command line as clap sees it.
#[derive(Debug, Parser)]
#[command(
    name = "remodel",
    version,
    about = "From a Postgres schema and the queries an application really runs to a query-first \
             Cassandra/ScyllaDB design",
    long_about = "From a Postgres schema and the queries an application really runs to a query-first \
                  Cassandra/ScyllaDB design, and the cut-over to it.\n\n\
                  Planning needs no database: `schema` (DDL front end), `workload` (query files and \
                  logs), `analyze` (access patterns, embed or reference), `plan` (tables, keys, query \
                  mapping, write paths; writes plan.json, schema.cql and the report's source) and \
                  `report` (the mdBook migration report of a plan, of a backfill or sync run and of a \
                  replay) read files only; `schema`, `workload` and `plan` read a live Postgres \
                  instead when given --source (read-only). Executing a plan needs Postgres and \
                  Cassandra: `backfill` fills the planned tables (resumable, with a run folder), \
                  `verify` proves the result, `replay` proves the plan on its workload (every read \
                  and write, Postgres against the plan's CQL), `sync` is the zero-downtime cut-over \
                  (the backfill inside a replication slot's snapshot, then the source's changes \
                  applied until caught up or stopped; --finish drops the slot); `export spark` writes \
                  the same backfill as a PySpark job for a cluster; `codegen` writes the \
                  application's data-access layer from plan.json (one function per pattern, proven \
                  by `replay --executor`); `example-data` loads an example's rows into Postgres to \
                  try them on.\n\n\
                  Exit codes: 0 done (diagnostics may have been printed; also when the output \
                  pipe closes early; sync caught up or finished), 1 backfill or sync stopped \
                  (resumable), verify or replay found a difference, 2 unusable input or URL (also a \
                  database that cannot be reached, a target that differs from the plan, a run folder \
                  in use, a failed check of sync), 3 the plan fails its checks (written for review, \
                  not to be executed), 130 interrupted (Ctrl-C, or SIGTERM for backfill and sync; \
                  resumable).",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load Postgres DDL (a dump, or the live catalog with --source) and summarise it.
    Schema(cmd::schema::Args),
    /// Turn query files, Postgres logs or pg_stat_statements into weighted statements.
    Workload(cmd::workload::Args),
    /// Access patterns by weight and embed/reference decisions, with their evidence.
    Analyze(cmd::analyze::Args),
    /// Design the query-first tables: plan.json, schema.cql and the report's source.
    #[command(override_usage = "remodel plan DIR [--out DIR] [OPTIONS]\n       \
                          remodel plan --schema FILE... --queries FILE... --out DIR [OPTIONS]")]
    Plan(cmd::plan::Args),
    /// Write the mdBook migration report of a plan (and of a run); --html builds it.
    ///
    /// The report is an mdBook source tree: book.toml, src/SUMMARY.md and chapters (overview and
    /// the decisions it needs, source schema with an ER diagram, access patterns by weight,
    /// relationships, one page per proposed table with its key diagram, CQL and sizes, SQL beside
    /// CQL for every statement, write paths, the backfill run when --run is given, and the
    /// cut-over runbook with this plan's commands).
    ///
    /// It renders offline: pictures are SVG files and the Mermaid script is bundled. --html builds
    /// it with the `mdbook` binary (0.4 or 0.5) into OUT/book/; without --html, run `mdbook build
    /// OUT` or `mdbook serve OUT`. The report reads plan.json and the run folder only: it never
    /// re-runs analysis or design, and the same inputs give the same bytes.
    Report(cmd::report::Args),
    /// Copy Postgres rows into the plan's tables in one snapshot (resumable, rejects).
    #[command(long_about = cmd::backfill::LONG_ABOUT)]
    Backfill(cmd::backfill::Args),
    /// Compare the target tables with the source: counts and sampled rows.
    #[command(long_about = cmd::verify::LONG_ABOUT)]
    Verify(cmd::verify::Args),
    /// Prove a plan on its workload: every read and write, Postgres against its CQL.
    #[command(long_about = cmd::replay::LONG_ABOUT)]
    Replay(cmd::replay::Args),
    /// Zero-downtime cut-over: backfill, then follow Postgres' changes (--finish ends it).
    #[command(long_about = cmd::sync::LONG_ABOUT)]
    Sync(cmd::sync::Args),
    /// Load an example's schema and generated rows into Postgres (rideshare: N trips).
    #[command(long_about = cmd::example_data::LONG_ABOUT)]
    ExampleData(cmd::example_data::Args),
    /// Export the plan for another engine: `export spark` writes a PySpark backfill job.
    Export(cmd::export::Args),
    /// Generate the application's data-access layer from plan.json (Python).
    #[command(long_about = cmd::codegen::LONG_ABOUT)]
    Codegen(cmd::codegen::Args),
}

/// The "Start with" line of `--help`: a command that works from where the user is. The example
/// ships in the source repository; a binary built from a checkout knows where that was.
fn start_hint() -> String {
    let here = Path::new("examples/rideshare");
    let built_from = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/rideshare"
    ));
    if here.join("schema.sql").is_file() {
        "Start with: remodel plan examples/rideshare --out out/rideshare".into()
    } else if let Ok(dir) = built_from.canonicalize() {
        format!(
            "Start with: remodel plan {} --out out/rideshare",
            dir.display()
        )
    } else {
        "Start with the example in examples/rideshare of the source repository:\n  \
         remodel plan path/to/remodel/examples/rideshare --out out/rideshare"
            .into()
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    remodel_conn::remember_command_line(
        std::env::args_os().map(|a| a.to_string_lossy().into_owned()),
    );
    let matches = Cli::command()
        .after_help(start_hint())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match matches {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        Command::Schema(args) => cmd::schema::run(args),
        Command::Workload(args) => cmd::workload::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Backfill(args) => cmd::backfill::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Sync(args) => cmd::sync::run(args),
        Command::ExampleData(args) => cmd::example_data::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Codegen(args) => cmd::codegen::run(args),
    };
    match result {
        Ok(code) => code,
        // `remodel … | head -1`: the reader closed the pipe; nothing went wrong.
        Err(err) if diagnostics::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            use std::io::Write;
            let message = format!("remodel: error: {err:#}");
            let _ = writeln!(std::io::stderr(), "{}", remodel_conn::redact_text(&message));
            if err.downcast_ref::<PlanFailsChecks>().is_some() {
                ExitCode::from(EXIT_PLAN_FAILS_CHECKS)
            } else {
                ExitCode::from(EXIT_UNUSABLE_INPUT)
            }
        }
    }
}

/// Help and version as clap prints them; a command line clap refuses (exit 2) with any password
/// of the command line masked (clap repeats a value it does not expect).
fn usage_error(e: clap::Error) -> ExitCode {
    use std::io::{IsTerminal, Write};
    if !e.use_stderr() {
        // --help and --version: the program's own text (the environment's values are hidden).
        e.exit();
    }
    let code = e.exit_code();
    let styled = e.render();
    let text = if std::io::stderr().is_terminal() {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    let _ = write!(std::io::stderr(), "{}", remodel_conn::redact_text(&text));
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_UNUSABLE_INPUT))
}
