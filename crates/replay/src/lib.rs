//! Replay: proves a plan on its own workload. The plan's statements run against Cassandra as an
//! application would run them — reads with every `?` bound as the plan says, their lookups
//! followed and client filters applied; writes through their read-before-write steps and every
//! statement with its `current` and `new` values — and the pattern's SQL runs against Postgres
//! holding the same rows. The results are compared as SQL defines them ([`compare`]).
//!
//! Architecture invariant: this crate executes `plan.json` as written. It depends on the plan
//! model, on the backfill (connections, loading the target, exact value conversions) and on the
//! SQL front end only to read an example's constants; never on the analyzer or the designer.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

pub mod bucket;
pub mod clock;
pub mod compare;
mod error;
pub mod exec;
pub mod existing;
pub mod exprsql;
pub mod external;
pub mod folded;
pub mod generate;
pub mod pg;
pub mod read;
pub mod record;
pub mod run;
pub mod sample;
pub mod scratch;
pub mod values;
pub mod write;

pub use error::Error;
pub use exec::{CqlRows, Prepared, Replayer};
pub use pg::{Params, PgValue};
pub use remodel_backfill::{CqlTarget, PgSource};

/// A Postgres connection (session in UTC, as the backfill's, on the wall clock until
/// [`clock::set`] sets replay's) and a Cassandra session.
pub async fn connect(
    source: &PgSource,
    target: &CqlTarget,
) -> Result<(tokio_postgres::Client, scylla::client::session::Session), Error> {
    let pg = source.connect().await?;
    clock::set(&pg, &clock::Clock::wall().at(0)).await?;
    let session = target
        .connect(2, std::time::Duration::from_secs(30))
        .await?;
    Ok((pg, session))
}
