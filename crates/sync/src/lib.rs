//! Zero-downtime cut-over (`remodel sync`): a logical replication slot over the plan's source
//! tables, the backfill run inside the snapshot the slot exported when it was created, then the
//! slot's committed transactions applied to the target tables until caught up (or until
//! interrupted), resumable at any point.
//!
//! - [`checks`]: what the source must provide, one line each (`wal_level`, the REPLICATION
//!   attribute, each table's REPLICA IDENTITY against what the target keys need of old rows).
//! - [`derive`]: which target rows a source row change feeds, computed by Postgres from each
//!   target table's own `source_sql` (the backfill's definition of the table) with the changed
//!   row in place of its driving table, or, for a table a target copies columns of, the driving
//!   rows its foreign key links.
//! - [`receive`]: the slot's stream read in a task of its own into committed transactions, and
//!   what stops it (DDL on a plan table, TRUNCATE).
//! - [`apply`]: a round of transactions' target writes, collapsed per target row, sent `USING TIMESTAMP`
//!   of the commit (microseconds, strictly increasing along the stream), so a change applied twice
//!   or a backfilled row can never win over a newer change.
//! - [`state`]: `sync.json` in the run folder: slot, publication, the LSN Cassandra acknowledged
//!   last; the slot is confirmed up to it only after it is on disk.
//! - [`run`]: the whole command.
//!
//! Architecture invariant: `sync` reads the plan model only (`sync → backfill, conn, model`); it
//! never calls `analyze` or `design`, and it knows no terminal (progress through [`Progress`]).

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

pub mod apply;
pub mod checks;
pub mod derive;
mod error;
pub mod progress;
pub mod receive;
pub mod run;
pub mod state;

pub use error::Error;
pub use progress::{Progress, Status};
pub use run::{finish, sync, StopAt, SyncOptions, Synced};
