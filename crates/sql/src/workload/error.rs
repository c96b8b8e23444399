//! Errors of workload ingestion: only an input that cannot be opened or read is an error.

use std::path::PathBuf;

/// Why a workload file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The file could not be opened, decompressed or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file as given.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
