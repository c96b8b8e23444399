//! Front end of `remodel`: Postgres DDL into a [`remodel_model::Schema`], query files and logs
//! into a [`remodel_model::Workload`].
//!
//! Architecture invariant: front ends never fail on content. They return the model plus
//! diagnostics with locations; only an unreadable file is an error.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

/// Statement splitter (comments, quotes, dollar quotes, psql meta-commands, COPY data).
pub mod split;

/// The Postgres DDL front end: DDL files into a `Schema` plus diagnostics.
pub mod ddl;
/// Errors of the front end (only unreadable input; content problems are diagnostics).
pub mod error;
/// Long operator chains in parsed statements: rebalanced or refused before any recursive walk.
pub mod long_chains;
/// Statement normalization and fingerprints (token-level, then one parse per distinct shape).
pub mod normalize;
/// The forms of a statement replay runs on Postgres (every row, a tie rank, `RETURNING`, its
/// clock replaced).
pub mod replay_forms;
/// SQL expressions as the plan's dialect-neutral typed expressions (`Expr`), exactly or refused.
pub mod typed_expr;
/// Query workload ingestion: SQL files, Postgres logs, pg_stat_statements exports.
pub mod workload;
pub use error::SqlError;
