//! Test support for remodel against the real databases started by `scripts/db`.
//!
//! Each test gets its own Postgres schema ([`PgSchema`]) and its own Cassandra keyspace
//! ([`CqlKeyspace`]), named after the test and the process, and dropped afterwards, so
//! tests run in parallel without seeing each other's tables. The servers are found
//! through `REMODEL_PG_URL` and `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`); a missing
//! variable is an error here. Whether a test runs at all is decided before, by the one gate of the
//! live tests ([`live!`], [`live::live`]): without the databases it skips with one `skipped:` line,
//! under `REMODEL_LIVE=require` or `CI=true` it fails.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod cql;
mod env;
mod error;
pub mod live;
mod names;
mod pg;
pub mod pki;
mod scratch;

pub use cql::{connect_cql, release_version, release_version_of_node, CqlKeyspace};
pub use env::{
    cluster_node, cql_node, db_tls, pg_url, DbTls, CLUSTER_URL_VAR, CQL_URL_VAR, PG_URL_VAR,
    TLS_DIR_VAR,
};
pub use error::Error;
pub use pg::{connect_pg, PgSchema};
pub use scratch::ScratchDir;

/// The driver versions the helpers speak, for tests that need their types.
pub use scylla;
/// The driver versions the helpers speak, for tests that need their types.
pub use tokio_postgres;

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
