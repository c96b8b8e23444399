//! The one error type of the test helpers.

/// Why a test database could not be reached or prepared.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL variable is not set: the databases were not started for this run.
    #[error(
        "{var} is not set{ci}: start the databases with `scripts/db up` and export their URLs \
         with `eval \"$(scripts/db env)\"`, or run everything with `scripts/test`"
    )]
    MissingEnv {
        /// The variable that was looked up.
        var: &'static str,
        /// Extra words when running under `CI=true`.
        ci: &'static str,
    },
    /// The URL variable is set but its value is unusable.
    #[error("{var}={value:?} is not usable: {reason}")]
    BadEnv {
        /// The variable that was looked up.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A Postgres connection or statement failed.
    #[error("Postgres at {target}: {what}: {source}")]
    Postgres {
        /// Host, port and database (no password).
        target: String,
        /// What was being done.
        what: String,
        /// The driver's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A Cassandra connection, statement or result failed.
    #[error("Cassandra at {node}: {what}: {source}")]
    Cassandra {
        /// `host:port` of the node.
        node: String,
        /// What was being done.
        what: String,
        /// The driver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A runtime for the cleanup on drop could not be started.
    #[error("starting a tokio runtime for cleanup: {0}")]
    Runtime(#[source] std::io::Error),
    /// A step did not finish in time (a server that accepts connections but hangs).
    #[error("{what} timed out after {secs} s")]
    Timeout {
        /// What was being done.
        what: String,
        /// The limit.
        secs: u64,
    },
}
