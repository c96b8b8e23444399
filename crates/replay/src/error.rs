//! The crate's error type: what could not be replayed, on which side.

/// Why a replay step could not run (a difference between the two sides is not an error: it is a
/// [`crate::compare::Mismatch`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `plan.json` lacks something replay needs, or its statements cannot be executed as written
    /// (a bind with no source, a column no step returns).
    #[error("plan: {0}")]
    Plan(String),
    /// Replay refuses to start: the input does not allow it (one line saying why: a flag
    /// combination, an unknown time zone, a keyspace without the plan's tables).
    #[error("{0}")]
    Refused(String),
    /// A Postgres statement failed.
    #[error("Postgres: {what}: {message}")]
    Postgres {
        /// What was being done.
        what: String,
        /// The server's or the driver's message.
        message: String,
    },
    /// Postgres refused the pattern's statement with these parameters (a constraint, a division
    /// by zero): the sample is dropped, it proves nothing either way.
    #[error("Postgres refused the statement: {0}")]
    SourceRefused(String),
    /// A Cassandra statement failed.
    #[error("Cassandra: {what}: {message}")]
    Cassandra {
        /// What was being done.
        what: String,
        /// The driver's message.
        message: String,
    },
    /// Something the plan asks that replay does not do yet (the pattern is listed as not
    /// replayed, with this reason).
    #[error("not replayed: {0}")]
    Unsupported(String),
    /// The program of `--executor` answered a request with an error, or with rows replay cannot
    /// read: the sample's difference.
    #[error("executor: {0}")]
    Executor(String),
    /// A value could not be converted between the two sides.
    #[error("value: {0}")]
    Value(String),
    /// The backfill (connections, loading the target) failed.
    #[error(transparent)]
    Backfill(#[from] remodel_backfill::Error),
}

impl Error {
    /// A Postgres error of `what`, with the server's message (and detail) on one line.
    pub fn pg(what: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> Error {
        let what = what.into();
        move |e| Error::Postgres {
            what,
            message: remodel_backfill::pg::pg_message(&e),
        }
    }

    /// A Cassandra error of `what`.
    pub fn cql<E: std::fmt::Display>(what: impl Into<String>) -> impl FnOnce(E) -> Error {
        let what = what.into();
        move |e| Error::Cassandra {
            what,
            message: e.to_string(),
        }
    }
}
