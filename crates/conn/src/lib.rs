//! Connections to the databases, shared by every crate that opens one.
//!
//! - [`pg`]: connects to Postgres as libpq would with the same connection string, TLS included
//!   (`sslmode` disable, allow, prefer, require, verify-ca, verify-full; `sslrootcert`, `sslcert`,
//!   `sslkey`, `sslpassword`, `sslsni`; the `~/.postgresql/` defaults), over OpenSSL;
//! - [`pgurl`]: the connection string's TLS settings;
//! - [`redact`]: a connection string or any printed text without its passwords;
//! - [`tls`]: OpenSSL contexts from PEM files, for Postgres and for the Cassandra target.
//!
//! Architecture invariant: the URL's password stays in the connection; no error of this crate
//! holds it (errors name files and settings, never the URL).

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

pub mod pg;
pub mod pgurl;
pub mod redact;
pub mod tls;

pub use pg::{check, connect, message};
pub use redact::{one_line, redact_text, redact_url, remember_command_line};

/// A connection could not be set up: what was being done and why.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {message}")]
pub struct Error {
    /// What was being done (`read the URL`, `sslrootcert /x/ca.crt`, `connect (sslmode=…)`).
    pub what: String,
    /// Why it failed.
    pub message: String,
}

impl Error {
    /// An error of `what`, with `message`.
    pub fn new(what: impl Into<String>, message: impl Into<String>) -> Error {
        Error {
            what: what.into(),
            message: message.into(),
        }
    }
}
