//! Errors of the front end. Content problems are never errors (they are diagnostics); only an
//! input that cannot be read at all is.

use std::path::PathBuf;

/// Why a front-end call could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// A file could not be opened or read (the reason is the error's source).
    #[error("cannot read {}", path.display())]
    Io {
        /// The file as given.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
}
