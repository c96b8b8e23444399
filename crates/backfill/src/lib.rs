//! Backfill and verification: fills the target tables of a reviewed `plan.json` from Postgres
//! and proves the result.
//!
//! - Reading ([`pg`]): one exported snapshot shared by parallel readers; the driving table of each
//!   source query (`design.tables[].source`, rendered by [`remodel_model::SourceSql`]) cut into
//!   ctid page ranges; each range streamed with binary `COPY` and decoded
//!   ([`convert`], [`numeric`], [`json`]) against the target column's CQL type ([`resolved_type`]).
//! - Writing ([`cql`]): prepared, idempotent INSERTs, one partition's rows per UNLOGGED batch,
//!   requests in flight bounded by an adaptive level ([`adaptive`]), retries with back-off
//!   counted by cause, and a request that cannot reach its consistency level rejected with the
//!   reason.
//! - Running ([`backfill`], [`run`]): the target's schema checked against the plan first
//!   ([`targetschema`]), the run folder locked, a checkpoint per finished range (atomic rename),
//!   rejects with their source key and reason, `summary.json` ([`remodel_model::RunSummary`]),
//!   resume, a clean end on [`Interrupt`].
//! - Proving ([`verify`]): counts, and sampled rows looked up by the target's own key
//!   ([`remodel_model::VerifyReport`], `verify.json` in the run folder).
//!
//! Architecture invariant: this crate reads `plan.json`'s model only; it never calls the analyzer
//! or the designer, so a reviewed plan is exactly what runs. It knows no terminal: progress goes
//! through the [`progress::Progress`] trait.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

pub mod adaptive;
pub mod backfill;
pub mod convert;
pub mod cql;
pub mod cqltext;
mod error;
pub mod json;
pub mod numeric;
pub mod pg;
pub mod progress;
pub mod resolved_type;
pub mod rows;
pub mod run;
pub mod target;
pub mod targetschema;
pub mod time;
pub mod verify;

pub use adaptive::Concurrency;
pub use backfill::{backfill, BackfillOptions, Interrupt, MaxErrors, WriteTimestamp};
pub use cql::{CqlTarget, CqlTls};
pub use error::Error;
pub use pg::PgSource;
pub use progress::{Progress, Silent, TableCounts, TableStart, WriteStatus};
/// TLS settings shared with the Postgres side (how much is checked, a client certificate).
pub use remodel_conn::tls::{ClientCert, Verify};
pub use run::save_verify;
pub use verify::{verify, VerifyOptions};
