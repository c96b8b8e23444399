//! The Cassandra side: one session (token-aware by default in the scylla driver), prepared
//! statements marked idempotent, rows of one partition sent as one UNLOGGED batch, and our own
//! retry loop with exponential back-off (the driver's default policy retries once, without
//! waiting), so that a node that stops answering for a while delays the run instead of ending it.

use crate::adaptive::Limiter;
use crate::rows::Row;
use crate::Error;
use remodel_conn::tls::{self, ClientCert, Roots, TlsFiles, Verify};
use remodel_model::{ConsistencyLevel, Plan, RetryCauses};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::{OpenSsl010Config, Session};
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
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

/// What made a retryable request fail, for the counts of `summary.json` and for the adaptive
/// level (a timeout or an overloaded node means: fewer requests in flight).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// No answer in time: the client's timeout, or the coordinator's (too few replicas answered).
    Timeout,
    /// Too few replicas alive for the consistency level.
    Unavailable,
    /// Overloaded, rate-limited or still starting.
    Overloaded,
    /// No connection to a node, or one broken mid-request.
    Connection,
    /// Another retryable failure.
    Other,
}

/// Sorts a retryable driver error by its cause.
pub fn cause(e: &ExecutionError) -> Cause {
    match e {
        ExecutionError::RequestTimeout(_) => Cause::Timeout,
        ExecutionError::ConnectionPoolError(_) | ExecutionError::EmptyPlan => Cause::Connection,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => Cause::Timeout,
            DbError::Unavailable { .. } => Cause::Unavailable,
            DbError::Overloaded | DbError::IsBootstrapping | DbError::RateLimitReached { .. } => {
                Cause::Overloaded
            }
            _ => Cause::Other,
        },
        ExecutionError::LastAttemptError(
            RequestAttemptError::UnableToAllocStreamId
            | RequestAttemptError::BrokenConnectionError(_),
        ) => Cause::Connection,
        _ => Cause::Other,
    }
}

/// True when the coordinator answered that the consistency level could not be reached: too few
/// replicas alive, or answering in time, or applying the write. Past the retries, such a
/// request's rows go to the rejects file with the reason, and the run goes on; any other
/// failure past the retries (no node answering at all) stops the run.
pub fn consistency_not_reached(e: &ExecutionError) -> bool {
    matches!(
        e,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Unavailable { .. }
                | DbError::ReadTimeout { .. }
                | DbError::WriteTimeout { .. }
                | DbError::ReadFailure { .. }
                | DbError::WriteFailure { .. },
            _
        ))
    )
}

/// The driver's consistency level for the plan's.
pub fn consistency_of(level: ConsistencyLevel) -> Consistency {
    match level {
        ConsistencyLevel::One => Consistency::One,
        ConsistencyLevel::LocalOne => Consistency::LocalOne,
        ConsistencyLevel::Quorum => Consistency::Quorum,
        ConsistencyLevel::LocalQuorum => Consistency::LocalQuorum,
        ConsistencyLevel::EachQuorum => Consistency::EachQuorum,
        ConsistencyLevel::All => Consistency::All,
    }
}

/// A driver's level as CQL names it (`LOCAL_QUORUM`), for messages.
pub fn level_name(c: Consistency) -> String {
    let name = match c {
        Consistency::Any => "ANY",
        Consistency::One => "ONE",
        Consistency::Two => "TWO",
        Consistency::Three => "THREE",
        Consistency::Quorum => "QUORUM",
        Consistency::All => "ALL",
        Consistency::LocalQuorum => "LOCAL_QUORUM",
        Consistency::EachQuorum => "EACH_QUORUM",
        Consistency::LocalOne => "LOCAL_ONE",
        Consistency::Serial => "SERIAL",
        Consistency::LocalSerial => "LOCAL_SERIAL",
    };
    name.to_string()
}

/// The level the plan's writes are sent at ([`remodel_model::Design::write_level`]).
pub fn plan_write_level(plan: &Plan) -> ConsistencyLevel {
    plan.design.write_level()
}

/// The level the plan's reads are sent at ([`remodel_model::Design::read_level`]).
pub fn plan_read_level(plan: &Plan) -> ConsistencyLevel {
    plan.design.read_level()
}

/// Retries counted by cause, shared by the tasks of a run.
#[derive(Debug, Default)]
pub struct RetryCounter {
    counts: [AtomicU64; 5],
}

impl RetryCounter {
    /// Counts one retry after a failure of `cause`.
    pub fn count(&self, cause: Cause) {
        self.counts[cause as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Every retry so far.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// The counts by cause.
    pub fn causes(&self) -> RetryCauses {
        let n = |c: Cause| self.counts[c as usize].load(Ordering::Relaxed);
        RetryCauses {
            timeout: n(Cause::Timeout),
            unavailable: n(Cause::Unavailable),
            overloaded: n(Cause::Overloaded),
            connection: n(Cause::Connection),
            other: n(Cause::Other),
        }
    }
}

/// Why rows were not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server refused them: the reason goes to the rejects file.
    Rejected(String),
    /// The consistency level could not be reached in the retry budget: every row of the
    /// request goes to the rejects file with the reason (kind `consistency`).
    NotStored(String),
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

/// A row the target did not store, with the reject's kind and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Its index in the rows written.
    pub index: usize,
    /// `refused` (the server refused the values) or `consistency` (not stored at the level).
    pub kind: &'static str,
    /// Why, in the server's words.
    pub reason: String,
}

/// Called with a message when the writer starts retrying after a healthy period.
pub type Notify = Arc<dyn Fn(String) + Send + Sync>;

/// Sends rows with retries; shared by every writer task of a run.
pub struct Writer {
    session: Arc<Session>,
    retry_for: Duration,
    retries: RetryCounter,
    /// When the last success was, to announce a new outage once rather than per request.
    outage: std::sync::Mutex<Option<Instant>>,
    notify: Notify,
    limiter: Arc<Limiter>,
    consistency: Consistency,
}

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

impl Writer {
    /// A writer on `session` that keeps retrying one request for at most `retry_for`, sending
    /// batches at `consistency` (prepared statements carry their own), telling `limiter` how
    /// each attempt went.
    pub fn new(
        session: Arc<Session>,
        retry_for: Duration,
        notify: Notify,
        limiter: Arc<Limiter>,
        consistency: Consistency,
    ) -> Writer {
        Writer {
            session,
            retry_for,
            retries: RetryCounter::default(),
            outage: std::sync::Mutex::new(None),
            notify,
            limiter,
            consistency,
        }
    }

    /// Retries so far (every attempt after a first failed one).
    pub fn retries(&self) -> u64 {
        self.retries.total()
    }

    /// Retries so far by cause.
    pub fn retry_causes(&self) -> RetryCauses {
        self.retries.causes()
    }

    /// The requests in flight.
    pub fn limiter(&self) -> &Arc<Limiter> {
        &self.limiter
    }

    /// Writes `rows` (all of one partition when more than one) as one request.
    pub async fn write(&self, stmt: &PreparedStatement, rows: &[Row]) -> Result<(), Failure> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut retried = 0u32;
        loop {
            let sent = Instant::now();
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
                batch.set_consistency(stmt.get_consistency().unwrap_or(self.consistency));
                self.session.batch(&batch, rows).await.map(|_| ())
            };
            let e = match outcome {
                Ok(()) => {
                    self.limiter.answered(rows.len(), sent.elapsed());
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
                Class::Retry => {
                    let cause = cause(&e);
                    if matches!(cause, Cause::Timeout | Cause::Overloaded) {
                        self.limiter.overloaded();
                    }
                    if started.elapsed() + backoff > self.retry_for {
                        return Err(self.give_up(&e, stmt, started, retried));
                    }
                    retried += 1;
                    self.retries.count(cause);
                    self.unhealthy(&e, backoff);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// The failure of a request whose retry budget is spent: its rows are rejects when the
    /// coordinator said the consistency level could not be reached, else the run stops.
    fn give_up(
        &self,
        e: &ExecutionError,
        stmt: &PreparedStatement,
        started: Instant,
        retried: u32,
    ) -> Failure {
        let secs = started.elapsed().as_secs();
        let last = remodel_conn::one_line(&e.to_string());
        if consistency_not_reached(e) {
            let level = level_name(stmt.get_consistency().unwrap_or(self.consistency));
            return Failure::NotStored(format!(
                "not stored at consistency {level}: {retried} retries over {secs} s (--retry-for {}), the last answer: {last}",
                self.retry_for.as_secs()
            ));
        }
        Failure::GaveUp { secs, last }
    }

    /// Writes `rows`; when the server refuses the batch, writes them one by one to find the
    /// rows at fault. Returns the rows not stored with the kind and the reason.
    pub async fn write_isolating(
        &self,
        stmt: &PreparedStatement,
        rows: &[Row],
    ) -> Result<Vec<Refused>, Failure> {
        let all = |kind: &'static str, reason: String| {
            (0..rows.len())
                .map(|index| Refused {
                    index,
                    kind,
                    reason: reason.clone(),
                })
                .collect()
        };
        match self.write(stmt, rows).await {
            Ok(()) => Ok(Vec::new()),
            // Every row of the request met the same replicas: no row is at fault.
            Err(Failure::NotStored(reason)) => Ok(all("consistency", reason)),
            Err(Failure::Rejected(reason)) if rows.len() == 1 => Ok(all("refused", reason)),
            Err(Failure::Rejected(_)) => {
                let mut refused = Vec::new();
                for (index, row) in rows.iter().enumerate() {
                    match self.write(stmt, std::slice::from_ref(row)).await {
                        Ok(()) => {}
                        Err(Failure::Rejected(reason)) => refused.push(Refused {
                            index,
                            kind: "refused",
                            reason,
                        }),
                        Err(Failure::NotStored(reason)) => refused.push(Refused {
                            index,
                            kind: "consistency",
                            reason,
                        }),
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
                "Cassandra: {}; retrying with back-off (first wait {} ms, at most {} s per request)",
                remodel_conn::one_line(&e.to_string()),
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

    #[test]
    fn causes_are_counted_and_only_a_coordinator_answer_is_a_consistency_failure() {
        let unavailable = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Unavailable {
                consistency: Consistency::LocalQuorum,
                required: 2,
                alive: 1,
            },
            String::new(),
        ));
        assert_eq!(cause(&unavailable), Cause::Unavailable);
        assert!(consistency_not_reached(&unavailable));
        let timeout = ExecutionError::RequestTimeout(Duration::from_secs(1));
        assert_eq!(cause(&timeout), Cause::Timeout);
        // No answer at all: the cluster, not the row, is at fault.
        assert!(!consistency_not_reached(&timeout));
        let counter = RetryCounter::default();
        counter.count(Cause::Unavailable);
        counter.count(Cause::Timeout);
        counter.count(Cause::Timeout);
        assert_eq!(counter.total(), 3);
        assert_eq!(counter.causes().describe(), "2 timeout, 1 unavailable");
    }
}
