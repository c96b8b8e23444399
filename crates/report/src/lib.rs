//! The migration report: an mdBook source tree (`book.toml`, `src/SUMMARY.md`, chapters, SVG
//! pictures and the bundled Mermaid script) that explains a plan to the people who approve it.
//!
//! Architecture invariant: the report reads the plan model only (`plan.json`, a backfill run
//! folder, a replay's `replay.json`): it never re-runs analysis or design, and it knows nothing of terminals. The CQL it
//! shows is handed in by the caller ([`Cql`]), who got it from the designer's emitter, so a table
//! page shows exactly what `schema.cql` holds; so are the generated functions' declarations
//! ([`Function`], from `remodel codegen`'s generator), beside the names plan.json gives them. Same inputs, same bytes: no clock, stable order.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod book;
mod chapters;
pub mod md;
pub mod run;
pub mod svg;

pub use book::{Book, BOOK_MARKER};
pub use run::{read_replay, read_run, Loaded, ReplayFolder, RunFolder, SyncFolder};

use remodel_model::Plan;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The CQL statements of a plan, as the designer emits them into `schema.cql`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cql {
    /// `CREATE TABLE …` (with its leading comments) by table name.
    pub tables: BTreeMap<String, String>,
    /// `CREATE TYPE …` by type name.
    pub types: BTreeMap<String, String>,
}

/// A function of the generated access layer (`remodel codegen`) as the caller got it from the
/// generator: its declaration in each language. Its name is the plan's (`function`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Function {
    /// The Python declaration (`def trips_by_driver_id(self, driver_id: str) -> …`).
    pub python: String,
    /// The Java declaration (`public List<…> tripsByDriverId(String driverId)`).
    pub java: String,
}

/// Where the plan's files are, as the runbook's commands should name them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `plan.json`.
    pub plan: String,
    /// `schema.cql`.
    pub schema_cql: String,
}

/// Everything a report is made from.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// Its CQL.
    pub cql: Cql,
    /// The generated access layer's functions by pattern id (empty: the pages show the plan's
    /// function names only).
    pub functions: BTreeMap<String, Function>,
    /// Its files' paths.
    pub paths: Paths,
    /// A backfill run folder, when the report covers one.
    pub run: Option<&'a RunFolder>,
    /// A replay of the plan (`remodel replay`), when the report covers one.
    pub replay: Option<&'a ReplayFolder>,
}

/// What can go wrong reading inputs or writing the book.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// `plan.json` is not a plan.
    #[error("{}:{line}:{column}: not a remodel plan: {message}", path.display())]
    BadPlan {
        /// The path.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde said.
        message: String,
    },
    /// `plan.json` is of another format than this remodel reads.
    #[error("{message}")]
    PlanFormat {
        /// The line to print (naming the file).
        message: String,
    },
    /// The output folder holds something other than an earlier report.
    #[error(
        "{} is not empty and holds no report written by remodel (its book.toml lacks the `{BOOK_MARKER}` line): \
         give --out a new or empty folder",
        path.display()
    )]
    NotAReport {
        /// The folder.
        path: PathBuf,
    },
    /// `--replay` names neither a folder nor a file.
    #[error(
        "{}: no such folder or file (expected the folder `remodel replay --out` wrote replay.json to, or that file)",
        path.display()
    )]
    NotAReplay {
        /// The path.
        path: PathBuf,
    },
    /// `--run` does not name a folder.
    #[error("{}: not a folder (expected a backfill run folder holding summary.json)", path.display())]
    NotARunFolder {
        /// The path.
        path: PathBuf,
    },
}

/// Reads `plan.json`.
pub fn read_plan(path: &Path) -> Result<Plan, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |e: serde_json::Error| ReportError::BadPlan {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let header: remodel_model::PlanHeader = serde_json::from_str(&text).map_err(bad)?;
    remodel_model::check_format(header).map_err(|e| ReportError::PlanFormat {
        message: e.message(&path.display().to_string()),
    })?;
    serde_json::from_str(&text).map_err(bad)
}

/// Renders the whole book in memory.
pub fn render(input: &ReportInput) -> Book {
    chapters::render(input)
}
