//! The `remodel` command line: argument parsing, output and exit codes.
//!
//! Architecture invariant: only this crate knows about terminals, files given on the command line
//! and exit codes; every other crate returns values and diagnostics.

mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code: the input could not be used (missing file, nothing found).
pub const EXIT_UNUSABLE_INPUT: u8 = 2;

/// remodel: from a Postgres schema and the queries an application really runs, to a query-first
/// Cassandra/ScyllaDB design, a reviewed plan, a lossless backfill and a report.
#[derive(Debug, Parser)]
#[command(name = "remodel", version, about, long_about = None, propagate_version = true)]
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
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Schema(args) => cmd::schema::run(args),
        Command::Workload(args) => cmd::workload::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Plan(args) => cmd::plan::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("remodel: error: {err:#}");
            ExitCode::from(EXIT_UNUSABLE_INPUT)
        }
    }
}
