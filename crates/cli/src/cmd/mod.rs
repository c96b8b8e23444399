//! One module per subcommand.

pub mod analyze;
pub mod backfill;
pub mod check;
pub mod codegen;
pub mod example_data;
pub mod export;
pub mod live;
pub mod plan;
pub mod replay;
pub mod report;
pub mod schema;
pub mod sync;
pub mod verify;
pub mod workload;

/// Files as the messages name them: `a.sql, b.sql`.
fn file_list(files: &[std::path::PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A subcommand's arguments parsed from `line` (its flags, without the program and subcommand
/// names), for the tests of what a command prints.
#[cfg(test)]
fn parse_args<A: clap::Args>(line: &[&str]) -> A {
    #[derive(Debug, clap::Parser)]
    struct Cli<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    use clap::Parser;
    Cli::<A>::try_parse_from(std::iter::once("remodel").chain(line.iter().copied()))
        .expect("a command line")
        .args
}
