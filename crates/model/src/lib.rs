//! The plan model of `remodel`: the one intermediate representation every stage reads and writes.
//!
//! Architecture invariant: this crate does no I/O and parses no SQL (the one text it reads is
//! the CQL type of a column, [`CqlType`], so that no consumer matches type strings). It holds plain data with serde
//! derives so that `plan.json` is the contract between planning and execution.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

pub mod analysis;
pub mod bucket;
pub mod column_ref;
pub mod coverage;
pub mod cqltype;
pub mod design;
pub mod diagnostic;
pub mod expr;
pub mod ident;
pub mod keywords;
pub mod pgtype;
pub mod plan;
pub mod relationship;
pub mod replay;
pub mod run;
pub mod schema;
pub mod sessions;
pub mod source;
pub mod stats;
pub mod sync;
pub mod text;
pub mod time;
pub mod workload;

pub use analysis::*;
pub use coverage::*;
pub use cqltype::*;
pub use design::*;
pub use diagnostic::*;
pub use expr::*;
pub use plan::*;
pub use relationship::*;
pub use replay::*;
pub use run::*;
pub use schema::*;
pub use sessions::*;
pub use source::*;
pub use stats::*;
pub use sync::*;
pub use workload::*;
