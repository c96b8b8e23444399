//! One module per subcommand.

pub mod analyze;
pub mod backfill;
pub mod check;
pub mod example_data;
pub mod export;
pub mod live;
pub mod plan;
pub mod replay;
pub mod report;
pub mod resume;
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
