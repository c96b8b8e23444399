//! The crate's error type: what failed, on which side, and what to do about it.

use crate::numeric::DecimalError;
use std::path::PathBuf;

/// Why one value cannot be stored: the reason written to the rejects file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl From<DecimalError> for ValueError {
    fn from(e: DecimalError) -> Self {
        ValueError(e.to_string())
    }
}

/// Why a backfill or a verification could not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `plan.json` lacks something the backfill needs, or names something that does not exist.
    #[error("plan: {0}")]
    Plan(String),
    /// An argument that cannot be used (a target that is not `host:port`).
    #[error("{0}")]
    Input(String),
    /// The source's rows do not fit the plan (a missing column, a type with no conversion).
    #[error("source: {0}")]
    Source(String),
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
    /// A Cassandra connection or statement failed for good.
    #[error("Cassandra at {node}: {what}: {message}")]
    Cassandra {
        /// `host:port`.
        node: String,
        /// What was being done.
        what: String,
        /// The driver's error, as text (the driver's errors are not all `'static`).
        message: String,
    },
    /// Cassandra kept failing for longer than the retry budget.
    #[error("Cassandra at {node}: gave up after retrying for {secs} s: {last} (fix the cluster, then rerun with --resume {run_dir})", run_dir = .run_dir.display())]
    GaveUp {
        /// `host:port`.
        node: String,
        /// Seconds spent retrying.
        secs: u64,
        /// The last error.
        last: String,
        /// The run folder to resume.
        run_dir: PathBuf,
    },
    /// More rows were rejected than `--max-errors` allows.
    #[error("stopped: {rejected} rows rejected, more than --max-errors {limit} (see {}; fix the data or raise the limit, then rerun with --resume {})", .rejects.display(), .run_dir.display())]
    TooManyRejects {
        /// Rows rejected so far.
        rejected: u64,
        /// The limit as given.
        limit: String,
        /// The rejects folder.
        rejects: PathBuf,
        /// The run folder to resume.
        run_dir: PathBuf,
    },
    /// `--resume` found a checkpoint that does not belong to this plan.
    #[error("cannot resume from {}: {reason}", .path.display())]
    Resume {
        /// The checkpoint file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Another process has the run folder open (its lock file is locked).
    #[error("run folder {} is in use by another remodel backfill{}: wait for it to end or stop it, or choose another --run-dir (two runs on one folder would overwrite each other's checkpoint)", .dir.display(), .pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Locked {
        /// The run folder.
        dir: PathBuf,
        /// The holder's pid, as it wrote it in the lock file.
        pid: Option<u32>,
    },
    /// The target's tables or types differ from the plan's, or are missing.
    #[error("{0}")]
    TargetSchema(String),
    /// The run was interrupted (Ctrl-C): every range recorded as finished is, the others are read
    /// again on resume.
    #[error("interrupted: the finished ranges are recorded, the others will be read again")]
    Interrupted,
    /// The run stopped after it had started writing; what is finished is in the checkpoint and
    /// the run can be resumed.
    #[error(transparent)]
    Stopped(Box<Error>),
    /// A file of the run folder could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A task of the run ended abnormally (a bug: a panic in a worker).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
