//! The live-Postgres front end: what the running database knows about itself, read into the
//! same models as the file front ends.
//!
//! - [`schema`]: tables, columns, types, keys, foreign keys, indexes, enums, sequences,
//!   partitions and comments from `pg_catalog`, into a [`remodel_model::Schema`] equal to what
//!   the DDL front end reads from the DDL that made them (up to the normalisations listed there);
//! - [`pgss`]: the statements of `pg_stat_statements` (calls, total time, rows), or why they
//!   cannot be read and how to enable them;
//! - [`stats`]: `reltuples` and `pg_stats` into [`remodel_model::Statistics`], with a counted
//!   fallback where `ANALYZE` never ran;
//! - [`probes`]: foreign keys the schema does not declare, found in the data by bounded
//!   inclusion tests.
//!
//! Architecture invariant: everything runs in one `READ ONLY` transaction with a statement
//! timeout ([`Source::open`]); nothing is ever written to the source. The URL's password stays in
//! [`Source`]; messages name the database by the redacted form the caller gives.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod error;
pub mod pgss;
pub mod probes;
pub mod schema;
pub mod stats;

pub use error::Error;

use remodel_conn::message as pg_message;
use remodel_model::ident::quote;
use std::time::Duration;
use tokio_postgres::Client;

/// A live source database, read in one read-only transaction.
pub struct Source {
    client: Client,
    /// The URL without its password, for messages.
    display: String,
    /// The Postgres schemas read.
    schemas: Vec<String>,
    /// The server's version number (`server_version_num`, e.g. 150018).
    version: i32,
    /// `current_database()`.
    database: String,
    /// The statement timeout of the transaction, in milliseconds.
    timeout_ms: u128,
    /// The session's `TimeZone` (the database's, the role's or the server's setting).
    time_zone: String,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("display", &self.display)
            .field("schemas", &self.schemas)
            .finish()
    }
}

/// How a source is opened.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Postgres schemas to read; empty: the connection's `current_schema()`.
    pub schemas: Vec<String>,
    /// Longest any one statement may run (catalog reads, counts, probes).
    pub statement_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            schemas: Vec::new(),
            statement_timeout: Duration::from_secs(30),
        }
    }
}

/// How long connecting may take before it is given up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

impl Source {
    /// Connects to `url` (its password is never shown: `display` names the database in
    /// messages), starts a `READ ONLY` repeatable-read transaction with the statement timeout,
    /// checks the schemas exist and puts them on the transaction's search path, so types and
    /// defaults read back unqualified as the DDL wrote them.
    pub async fn open(url: &str, display: &str, options: &Options) -> Result<Source, Error> {
        Self::open_with_password(url, None, display, options).await
    }

    /// [`Source::open`], with `password` used when the URL has none (the caller's
    /// `PGPASSWORD`, as libpq uses it).
    pub async fn open_with_password(
        url: &str,
        password: Option<&str>,
        display: &str,
        options: &Options,
    ) -> Result<Source, Error> {
        let connecting = remodel_conn::connect(url, password);
        let client = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
            .await
            .map_err(|_| Error::Timeout {
                target: display.to_string(),
                what: "connecting".into(),
                secs: CONNECT_TIMEOUT.as_secs(),
            })?
            .map_err(|e| Error::Postgres {
                target: display.to_string(),
                what: e.what,
                message: e.message,
            })?;
        let ms = options.statement_timeout.as_millis().max(1);
        client
            .batch_execute(&format!(
                "SET application_name = 'remodel catalog'; \
                 BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; \
                 SET LOCAL statement_timeout = {ms}; SET LOCAL lock_timeout = {ms}"
            ))
            .await
            .map_err(pg_error(display, "begin a read-only transaction"))?;
        let mut source = Source {
            client,
            display: display.to_string(),
            schemas: Vec::new(),
            version: 0,
            database: String::new(),
            timeout_ms: ms,
            time_zone: String::new(),
        };
        let row = source
            .query_one(
                "SELECT current_setting('server_version_num')::int4, current_schema()::text, \
                 current_database()::text, current_setting('TimeZone')::text",
                &[],
                "read the server version",
            )
            .await?;
        source.version = row.get(0);
        let current: Option<String> = row.get(1);
        source.database = row.get(2);
        source.time_zone = row.get(3);
        source.schemas = if options.schemas.is_empty() {
            vec![current.ok_or_else(|| Error::Usage(format!(
                "{display}: the connection has no current schema (its search_path names none that exists): give --schemas NAME"
            )))?]
        } else {
            options.schemas.clone()
        };
        source.check_schemas().await?;
        let path: Vec<String> = source.schemas.iter().map(|s| quote(s)).collect();
        source
            .client
            .batch_execute(&format!(
                "SET LOCAL search_path = {}, pg_catalog",
                path.join(", ")
            ))
            .await
            .map_err(pg_error(display, "set the search path"))?;
        Ok(source)
    }

    /// Fails naming the schemas that do not exist and those that do.
    async fn check_schemas(&self) -> Result<(), Error> {
        let rows = self
            .query(
                "SELECT nspname::text FROM pg_namespace \
                 WHERE nspname !~ '^pg_' AND nspname <> 'information_schema' ORDER BY 1",
                &[],
                "list the schemas",
            )
            .await?;
        let known: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let missing: Vec<&String> = self.schemas.iter().filter(|s| !known.contains(s)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = missing.iter().map(|s| format!("`{s}`")).collect();
        Err(Error::Usage(format!(
            "{}: no schema {} (it has {})",
            self.display,
            names.join(", "),
            known.join(", ")
        )))
    }

    /// The Postgres schemas read.
    pub fn schemas(&self) -> &[String] {
        &self.schemas
    }

    /// The database as messages name it (no password).
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The database's name.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The session's `TimeZone` setting as the source gives it to a new connection of this
    /// user (the application's sessions get the same unless they set their own).
    pub fn time_zone(&self) -> &str {
        &self.time_zone
    }

    /// `server_version_num` (150018 for 15.18).
    pub fn server_version(&self) -> i32 {
        self.version
    }

    /// True when names are schema-qualified: more than one schema is read.
    pub(crate) fn qualify(&self) -> bool {
        self.schemas.len() > 1
    }

    /// A table's name as the model holds it: bare when one schema is read, else `schema.name`.
    pub(crate) fn name_of(&self, schema: &str, name: &str) -> String {
        if self.qualify() {
            format!("{schema}.{name}")
        } else {
            name.to_string()
        }
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        what: &str,
    ) -> Result<Vec<tokio_postgres::Row>, Error> {
        self.client
            .query(sql, params)
            .await
            .map_err(pg_error(&self.display, what))
    }

    async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        what: &str,
    ) -> Result<tokio_postgres::Row, Error> {
        self.client
            .query_one(sql, params)
            .await
            .map_err(pg_error(&self.display, what))
    }

    async fn execute(&self, sql: &str, what: &str) -> Result<(), Error> {
        self.client
            .batch_execute(sql)
            .await
            .map_err(pg_error(&self.display, what))
    }

    /// Runs one query that may fail or time out without ending the transaction: inside a
    /// savepoint, with its own statement timeout. `Ok(Err(message))` when the statement failed
    /// (a timeout, a type the comparison does not take); `Err` when the connection did.
    pub(crate) async fn bounded(
        &self,
        sql: &str,
        timeout_ms: u128,
        what: &str,
    ) -> Result<Result<Vec<tokio_postgres::Row>, String>, Error> {
        self.execute(
            &format!(
                "SAVEPOINT remodel_probe; SET LOCAL statement_timeout = {}",
                timeout_ms.max(1)
            ),
            what,
        )
        .await?;
        let result = self.client.query(sql, &[]).await;
        let undo = if result.is_ok() {
            "RELEASE SAVEPOINT remodel_probe"
        } else {
            "ROLLBACK TO SAVEPOINT remodel_probe; RELEASE SAVEPOINT remodel_probe"
        };
        self.execute(
            &format!("{undo}; SET LOCAL statement_timeout = {}", self.timeout_ms),
            what,
        )
        .await?;
        Ok(result.map_err(|e| pg_message(&e)))
    }

    /// The statement timeout, in milliseconds.
    pub fn timeout_ms(&self) -> u128 {
        self.timeout_ms
    }

    /// Ends the transaction (it wrote nothing; a rollback says so).
    pub async fn close(self) -> Result<(), Error> {
        self.execute("ROLLBACK", "end the read-only transaction")
            .await
    }
}

fn pg_error(target: &str, what: &str) -> impl FnOnce(tokio_postgres::Error) -> Error {
    let target = target.to_string();
    let what = what.to_string();
    move |e| Error::Postgres {
        target,
        what,
        message: pg_message(&e),
    }
}
