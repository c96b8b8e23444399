//! Errors of a sync run.

/// Why a sync run ended without finishing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The source does not provide what sync needs (nothing was created).
    #[error("{0}")]
    Check(String),
    /// Unusable input: the plan, the run folder, a flag.
    #[error("{0}")]
    Input(String),
    /// A database could not be reached when the command started (nothing was created or
    /// changed).
    #[error(transparent)]
    Connect(remodel_backfill::Error),
    /// The backfill under the slot's snapshot stopped.
    #[error("backfill: {0}")]
    Backfill(remodel_backfill::Error),
    /// A connection or statement of the sync itself (not of its backfill) failed.
    #[error(transparent)]
    Database(#[from] remodel_backfill::Error),
    /// Postgres failed (replication or SQL).
    #[error("Postgres at {target}: {what}: {message}")]
    Postgres {
        /// The source, as redacted.
        target: String,
        /// The step that failed.
        what: String,
        /// Postgres' message, one line.
        message: String,
    },
    /// Cassandra refused or failed a write.
    #[error("Cassandra: {0}")]
    Cassandra(String),
    /// A change sync cannot apply (DDL on a plan table, TRUNCATE, a row it cannot convert).
    #[error("stopped at LSN {lsn}: {reason}")]
    Stopped {
        /// The commit LSN of the transaction it stopped at.
        lsn: String,
        /// What happened.
        reason: String,
    },
    /// Interrupted (Ctrl-C); everything acknowledged is recorded.
    #[error("interrupted")]
    Interrupted,
    /// A file of the run folder.
    #[error("{}: {message}", .path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        message: String,
    },
}

impl Error {
    /// A Postgres error of step `what` on `target`, as one line.
    pub fn pg(
        target: &str,
        what: impl Into<String>,
    ) -> impl FnOnce(tokio_postgres::Error) -> Error {
        let target = target.to_string();
        let what = what.into();
        move |e| Error::Postgres {
            target,
            what,
            message: remodel_conn::pg::message(&e),
        }
    }

    /// A replication error of step `what` on `target`.
    pub fn repl(
        target: &str,
        what: impl Into<String>,
    ) -> impl FnOnce(pg_walstream::ReplicationError) -> Error {
        let target = target.to_string();
        let what = what.into();
        move |e| Error::Postgres {
            target,
            what,
            message: remodel_conn::one_line(&e.to_string()),
        }
    }
}
