//! The Cassandra side: one session (token-aware by default in the scylla driver), prepared
//! statements marked idempotent, rows of one partition sent as one UNLOGGED batch, and our own
//! retry loop with exponential back-off (the driver's default policy retries once, without
//! waiting), so that a node that stops answering for a while delays the run instead of ending it.

use crate::rows::Row;
use crate::Error;
use remodel_conn::tls::{self, ClientCert, Roots, TlsFiles, Verify};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::{OpenSsl010Config, Session};
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// TLS to the target: how much of the node's certificate is checked, the CA certificates it
/// must be signed by (the system's when none is given) and a client certificate for clusters
/// that require one (`require_client_auth`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlTls {
    /// `require` (not checked), `verify-ca` (signed by a trusted CA) or `verify-full` (and the
    /// node's IP address in its subjectAltName: the driver reaches every node by the address
    /// the cluster announces).
    pub verify: Verify,
    /// PEM CA certificates; `None`: the system's trusted CAs.
    pub ca: Option<std::path::PathBuf>,
    /// A PEM client certificate and its (unencrypted) key.
    pub client: Option<ClientCert>,
}

impl std::fmt::Display for CqlTls {
    /// `TLS verify-full, CA /x/ca.crt, client certificate /x/c.crt`, for messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TLS {}", self.verify.word())?;
        match (&self.ca, self.verify) {
            (Some(ca), _) => write!(f, ", CA {}", ca.display())?,
            (None, Verify::None) => {}
            (None, _) => write!(f, ", the system's CAs")?,
        }
        if let Some(c) = &self.client {
            write!(f, ", client certificate {}", c.cert.display())?;
        }
        Ok(())
    }
}

/// A Cassandra/ScyllaDB contact point, its credentials (the password is never printed) and TLS.
#[derive(Clone)]
pub struct CqlTarget {
    /// `host:port`.
    pub node: String,
    credentials: Option<(String, String)>,
    /// The TLS settings and the context made from their files.
    tls: Option<(CqlTls, OpenSsl010Config)>,
}

impl std::fmt::Debug for CqlTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CqlTarget")
            .field("node", &self.node)
            .field("user", &self.credentials.as_ref().map(|c| &c.0))
            .field("tls", &self.tls.as_ref().map(|t| &t.0))
            .finish()
    }
}

impl CqlTarget {
    /// A contact point `host:port` (a `cql://` prefix is accepted), with optional user and password.
    pub fn new(node: &str, credentials: Option<(String, String)>) -> Result<CqlTarget, Error> {
        if node.contains('@') {
            // A user or password in the address: the password is never repeated, nor used.
            return Err(Error::Input(format!(
                "target `{}` holds a user name or password: give host:port, the user with \
                 --target-user and the password in REMODEL_TARGET_PASSWORD",
                remodel_conn::redact_url(node)
            )));
        }
        let rest = node
            .strip_prefix("cql://")
            .unwrap_or(node)
            .trim_end_matches('/');
        let ok = rest
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
        if !ok {
            return Err(Error::Input(format!(
                "target `{node}` is not host:port (e.g. 127.0.0.1:9042)"
            )));
        }
        Ok(CqlTarget {
            node: rest.to_string(),
            credentials,
            tls: None,
        })
    }

    /// Connects with TLS as `settings` say; its files are read now, so that a missing or wrong
    /// file is reported before anything runs.
    pub fn with_tls(mut self, settings: CqlTls) -> Result<CqlTarget, Error> {
        let files = TlsFiles {
            verify: settings.verify,
            roots: match (&settings.ca, settings.verify) {
                (Some(ca), _) => Some(Roots::File(ca.clone())),
                (None, Verify::None) => None,
                (None, _) => Some(Roots::System),
            },
            client: settings.client.clone(),
        };
        let flags = ["--target-ca ", "--target-cert ", "--target-key "];
        let builder = tls::connector(&files, flags, None).map_err(|e| Error::Cassandra {
            node: self.node.clone(),
            what: e.what,
            message: e.message,
        })?;
        self.tls = Some((settings, OpenSsl010Config::new(builder)));
        Ok(self)
    }

    /// The TLS settings, when the target is reached over TLS.
    pub fn tls(&self) -> Option<&CqlTls> {
        self.tls.as_ref().map(|t| &t.0)
    }

    /// Opens a session: `connections` per node, requests timing out after `request_timeout`, and no
    /// driver retries (ours wait between attempts; see [`Writer`]).
    pub async fn connect(
        &self,
        connections: usize,
        request_timeout: Duration,
    ) -> Result<Session, Error> {
        let profile = ExecutionProfile::builder()
            .request_timeout(Some(request_timeout))
            .retry_policy(Arc::new(FallthroughRetryPolicy))
            .build();
        let mut builder = SessionBuilder::new()
            .known_node(&self.node)
            .connection_timeout(Duration::from_secs(10))
            .pool_size(PoolSize::PerHost(
                NonZeroUsize::new(connections.max(1)).unwrap_or(NonZeroUsize::MIN),
            ))
            .default_execution_profile_handle(profile.into_handle());
        if let Some((user, password)) = &self.credentials {
            builder = builder.user(user, password);
        }
        let what = match &self.tls {
            Some((tls, context)) => {
                builder = builder.tls_context(Some(context.clone()));
                format!("connect ({tls})")
            }
            None => "connect".into(),
        };
        builder.build().await.map_err(|e| Error::Cassandra {
            node: self.node.clone(),
            what,
            // One line: some of the driver's messages run over several.
            message: remodel_conn::one_line(&e.to_string()),
        })
    }

    /// A failed step on this node.
    pub fn failed(&self, what: impl Into<String>, e: impl std::fmt::Display) -> Error {
        Error::Cassandra {
            node: self.node.clone(),
            what: what.into(),
            message: e.to_string(),
        }
    }

    /// Prepares `cql`, idempotent (an INSERT of the same values may be applied twice).
    pub async fn prepare(&self, session: &Session, cql: &str) -> Result<PreparedStatement, Error> {
        let mut stmt = session
            .prepare(cql)
            .await
            .map_err(|e| self.failed(format!("prepare `{cql}`"), e))?;
        stmt.set_is_idempotent(true);
        Ok(stmt)
    }
}

/// What to do after an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The node is busy, slow or unreachable: wait and send again.
    Retry,
    /// The server refused these values (invalid request, value too large): the rows are rejects.
    Reject,
    /// Anything else (authorization, schema): the run cannot go on.
    Fatal,
}

/// Sorts a driver error into [`Class`].
pub fn classify(e: &ExecutionError) -> Class {
    match e {
        ExecutionError::BadQuery(_) => Class::Reject,
        ExecutionError::RequestTimeout(_)
        | ExecutionError::ConnectionPoolError(_)
        | ExecutionError::EmptyPlan => Class::Retry,
        ExecutionError::LastAttemptError(a) => match a {
            RequestAttemptError::SerializationError(_)
            | RequestAttemptError::CqlRequestSerialization(_) => Class::Reject,
            RequestAttemptError::UnableToAllocStreamId
            | RequestAttemptError::BrokenConnectionError(_) => Class::Retry,
            RequestAttemptError::DbError(db, _) => match db {
                DbError::Invalid => Class::Reject,
                DbError::Unavailable { .. }
                | DbError::Overloaded
                | DbError::IsBootstrapping
                | DbError::ReadTimeout { .. }
                | DbError::WriteTimeout { .. }
                | DbError::ReadFailure { .. }
                | DbError::WriteFailure { .. }
                | DbError::ServerError
                | DbError::TruncateError
                | DbError::RateLimitReached { .. } => Class::Retry,
                _ => Class::Fatal,
            },
            _ => Class::Fatal,
        },
        _ => Class::Fatal,
    }
}

/// Why rows were not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server refused them: the reason goes to the rejects file.
    Rejected(String),
    /// The cluster did not accept writes for longer than the retry budget.
    GaveUp {
        /// Seconds spent.
        secs: u64,
        /// The last error.
        last: String,
    },
    /// An error retrying cannot fix.
    Fatal(String),
}

/// Called with a message when the writer starts retrying after a healthy period.
pub type Notify = Arc<dyn Fn(String) + Send + Sync>;

/// Sends rows with retries; shared by every writer task of a run.
pub struct Writer {
    session: Arc<Session>,
    retry_for: Duration,
    retries: AtomicU64,
    /// When the last success was, to announce a new outage once rather than per request.
    outage: std::sync::Mutex<Option<Instant>>,
    notify: Notify,
}

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

impl Writer {
    /// A writer on `session` that keeps retrying one request for at most `retry_for`.
    pub fn new(session: Arc<Session>, retry_for: Duration, notify: Notify) -> Writer {
        Writer {
            session,
            retry_for,
            retries: AtomicU64::new(0),
            outage: std::sync::Mutex::new(None),
            notify,
        }
    }

    /// Retries so far (every attempt after a first failed one).
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Writes `rows` (all of one partition when more than one) as one request.
    pub async fn write(&self, stmt: &PreparedStatement, rows: &[Row]) -> Result<(), Failure> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        loop {
            let outcome = if let [row] = rows {
                self.session.execute_unpaged(stmt, row).await.map(|_| ())
            } else {
                let kind = if stmt.get_is_idempotent() {
                    BatchType::Unlogged
                } else {
                    BatchType::Counter
                };
                let mut batch = Batch::new(kind);
                for _ in rows {
                    batch.append_statement(stmt.clone());
                }
                batch.set_is_idempotent(stmt.get_is_idempotent());
                self.session.batch(&batch, rows).await.map(|_| ())
            };
            let e = match outcome {
                Ok(()) => {
                    self.healthy();
                    return Ok(());
                }
                Err(e) => e,
            };
            match classify(&e) {
                Class::Reject => return Err(Failure::Rejected(e.to_string())),
                // A counter update that timed out may have been applied: sending it again could
                // count it twice, so the run stops (a new attempt refills the table whole).
                Class::Retry if !stmt.get_is_idempotent() => {
                    return Err(Failure::Fatal(format!(
                        "a counter update failed and is not sent again (it may have been applied; the counter table is emptied and filled again by the next attempt): {e}"
                    )))
                }
                Class::Fatal => return Err(Failure::Fatal(e.to_string())),
                Class::Retry if started.elapsed() + backoff > self.retry_for => {
                    return Err(Failure::GaveUp {
                        secs: started.elapsed().as_secs(),
                        last: e.to_string(),
                    })
                }
                Class::Retry => {
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    self.unhealthy(&e, backoff);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Writes `rows`; when the server refuses the batch, writes them one by one to find the
    /// rows at fault. Returns the refused rows' indices with the server's reason.
    pub async fn write_isolating(
        &self,
        stmt: &PreparedStatement,
        rows: &[Row],
    ) -> Result<Vec<(usize, String)>, Failure> {
        match self.write(stmt, rows).await {
            Ok(()) => Ok(Vec::new()),
            Err(Failure::Rejected(reason)) if rows.len() == 1 => Ok(vec![(0, reason)]),
            Err(Failure::Rejected(_)) => {
                let mut refused = Vec::new();
                for (i, row) in rows.iter().enumerate() {
                    match self.write(stmt, std::slice::from_ref(row)).await {
                        Ok(()) => {}
                        Err(Failure::Rejected(reason)) => refused.push((i, reason)),
                        Err(other) => return Err(other),
                    }
                }
                Ok(refused)
            }
            Err(other) => Err(other),
        }
    }

    fn healthy(&self) {
        let mut outage = self.outage.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(since) = outage.take() {
            (self.notify)(format!(
                "Cassandra answers again after {:.1} s of retries",
                since.elapsed().as_secs_f64()
            ));
        }
    }

    fn unhealthy(&self, e: &ExecutionError, backoff: Duration) {
        let mut outage = self.outage.lock().unwrap_or_else(|p| p.into_inner());
        if outage.is_none() {
            *outage = Some(Instant::now());
            (self.notify)(format!(
                "Cassandra: {e}; retrying with back-off (first wait {} ms, at most {} s per request)",
                backoff.as_millis(),
                self.retry_for.as_secs()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_host_and_port() {
        assert_eq!(
            CqlTarget::new("cql://10.0.0.1:9042/", None).unwrap().node,
            "10.0.0.1:9042"
        );
        assert!(CqlTarget::new("10.0.0.1", None).is_err());
        let t = CqlTarget::new("h:1", Some(("u".into(), "secret".into()))).unwrap();
        assert!(!format!("{t:?}").contains("secret"));
    }

    #[test]
    fn tls_files_are_read_before_connecting_and_named_when_wrong() {
        let e = CqlTarget::new("h:1", None)
            .unwrap()
            .with_tls(CqlTls {
                verify: Verify::Ca,
                ca: Some("/nonexistent/ca.pem".into()),
                client: None,
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("Cassandra at h:1: --target-ca /nonexistent/ca.pem: "),
            "{e}"
        );
        // Checked against the system's CAs: no file to read.
        let t = CqlTarget::new("h:1", None)
            .unwrap()
            .with_tls(CqlTls {
                verify: Verify::Full,
                ca: None,
                client: None,
            })
            .unwrap();
        assert_eq!(
            t.tls().map(ToString::to_string).as_deref(),
            Some("TLS verify-full, the system's CAs")
        );
    }

    #[test]
    fn timeouts_retry_and_invalid_requests_reject() {
        assert_eq!(
            classify(&ExecutionError::RequestTimeout(Duration::from_secs(1))),
            Class::Retry
        );
        let invalid = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Invalid,
            "Key may not be empty".into(),
        ));
        assert_eq!(classify(&invalid), Class::Reject);
        let overloaded = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Overloaded,
            String::new(),
        ));
        assert_eq!(classify(&overloaded), Class::Retry);
        let unauthorized = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Unauthorized,
            String::new(),
        ));
        assert_eq!(classify(&unauthorized), Class::Fatal);
    }
}
