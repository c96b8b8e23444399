//! The crate's error type.

/// Why the source could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Postgres connection or statement failed.
    #[error("Postgres at {target}: {what}: {message}")]
    Postgres {
        /// Host, port and database, never the password.
        target: String,
        /// What was being done.
        what: String,
        /// The server's or the driver's message.
        message: String,
    },
    /// Something took longer than allowed.
    #[error("Postgres at {target}: {what}: no answer after {secs} s")]
    Timeout {
        /// Host, port and database, never the password.
        target: String,
        /// What was being done.
        what: String,
        /// The limit.
        secs: u64,
    },
    /// `pg_stat_statements` cannot give a workload: why, and how to enable it.
    #[error("{0}")]
    NoWorkload(String),
    /// The request cannot be served as given (a schema that does not exist).
    #[error("{0}")]
    Usage(String),
}
