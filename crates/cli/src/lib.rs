//! The `remodel` command line: argument parsing, output and exit codes.
//!
//! Architecture invariant: only this crate knows about terminals, files given on the command line
//! and exit codes; every other crate returns values and diagnostics.

mod cmd;
mod progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code: the input could not be used (missing file, nothing found).
pub const EXIT_UNUSABLE_INPUT: u8 = 2;

/// Exit code: the plan was written but fails its checks (it would lose or corrupt data).
pub const EXIT_PLAN_FAILS_CHECKS: u8 = 3;

/// The command line as clap sees it.
#[derive(Debug, Parser)]
#[command(
    name = "remodel",
    version,
    about = "From a Postgres schema and the queries an application really runs to a query-first \
             Cassandra/ScyllaDB design",
    long_about = "From a Postgres schema and the queries an application really runs to a query-first \
                  Cassandra/ScyllaDB design.\n\n\
                  Each subcommand runs the pipeline up to one stage: `schema` (DDL front end), \
                  `workload` (query files and logs), `analyze` (access patterns, embed or reference), \
                  `plan` (tables, keys, query mapping, write paths; writes plan.json and schema.cql). \
                  No database is needed for any of them. Then `backfill` fills the planned tables \
                  from Postgres (resumable, with a run folder) and `verify` proves the result; \
                  `example-data` loads an example's rows into Postgres to try them on.\n\n\
                  Exit codes: 0 done (diagnostics may have been printed), 1 backfill stopped or \
                  verify found a difference, 2 unusable input, 3 the plan fails its checks \
                  (written for review, not to be executed).",
    after_help = "Start with: remodel plan examples/rideshare --out out/rideshare",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load Postgres DDL (pg_dump --schema-only, structure.sql, hand-written) and summarise it.
    Schema(cmd::schema::Args),
    /// Read query files/logs/pg_stat_statements exports and list the normalized access patterns.
    Workload(cmd::workload::Args),
    /// Access patterns by weight and embed/reference decisions, from a schema and a workload.
    Analyze(cmd::analyze::Args),
    /// Design the query-first Cassandra tables: writes plan.json and schema.cql (no database needed).
    Plan(cmd::plan::Args),
    /// Fill the plan's tables from Postgres into Cassandra/ScyllaDB (resumable; checkpoints, rejects).
    Backfill(cmd::backfill::Args),
    /// Compare the target tables with the source: counts and sampled rows by the target's keys.
    Verify(cmd::verify::Args),
    /// Load an example's schema and generated rows into Postgres (rideshare: N trips).
    ExampleData(cmd::example_data::Args),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Schema(args) => cmd::schema::run(args),
        Command::Workload(args) => cmd::workload::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Backfill(args) => cmd::backfill::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::ExampleData(args) => cmd::example_data::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("remodel: error: {err:#}");
            ExitCode::from(EXIT_UNUSABLE_INPUT)
        }
    }
}
