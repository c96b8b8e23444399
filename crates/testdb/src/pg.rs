//! A fresh Postgres schema per test.

use std::time::Duration;

use tokio_postgres::{Client, NoTls};

use crate::env::pg_url;
use crate::{names, Error, Result};
use remodel_conn::redact_url;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Connects to `url` and drives the connection on the current tokio runtime.
pub async fn connect_pg(url: &str) -> Result<Client> {
    let target = redact_url(url);
    let connecting = tokio_postgres::connect(url, NoTls);
    let (client, connection) = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
        .await
        .map_err(|_| Error::Timeout {
            what: format!("connecting to Postgres at {target}"),
            secs: CONNECT_TIMEOUT.as_secs(),
        })?
        .map_err(|source| Error::Postgres {
            target: target.clone(),
            what: "connect".into(),
            source,
        })?;
    tokio::spawn(async move {
        // The connection ends with an error only when the server goes away; the
        // client's next call then reports it, so nothing is lost by ignoring it here.
        let _ = connection.await;
    });
    Ok(client)
}

/// A schema of its own for one test, on the search path of [`PgSchema::client`], dropped
/// (with everything in it) by [`PgSchema::cleanup`] or, failing that, on drop.
pub struct PgSchema {
    client: Client,
    url: String,
    name: String,
    cleaned: bool,
}

impl PgSchema {
    /// Creates `t_<label>_<pid>_<n>` in the database of `REMODEL_PG_URL`.
    pub async fn create(label: &str) -> Result<Self> {
        let url = pg_url()?;
        Self::create_at(&url, label).await
    }

    /// Creates a fresh schema in the database at `url`.
    pub async fn create_at(url: &str, label: &str) -> Result<Self> {
        let client = connect_pg(url).await?;
        let name = names::unique(label);
        // A leftover of a crashed run that had the same pid goes first.
        let sql = format!(
            "DROP SCHEMA IF EXISTS \"{name}\" CASCADE; CREATE SCHEMA \"{name}\"; SET search_path TO \"{name}\""
        );
        client
            .batch_execute(&sql)
            .await
            .map_err(|source| Error::Postgres {
                target: redact_url(url),
                what: format!("create schema {name}"),
                source,
            })?;
        Ok(Self {
            client,
            url: url.to_owned(),
            name,
            cleaned: false,
        })
    }

    /// A client whose search path is this schema.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The database URL with this schema as search path, for code under test that opens
    /// its own connections (`?options=-c search_path=<schema>`).
    pub fn url(&self) -> String {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-c%20search_path%3D{}", self.url, self.name)
    }

    /// Refreshes the planner statistics of this schema's tables only. A bare `ANALYZE` visits
    /// every table of the database and fails ("relation with OID … does not exist") when a test
    /// running beside this one drops its schema meanwhile.
    pub async fn analyze(&self) -> Result<()> {
        let failed = |source| Error::Postgres {
            target: redact_url(&self.url),
            what: format!("analyze schema {}", self.name),
            source,
        };
        let rows = self
            .client
            .query(
                "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables \
                 WHERE schemaname = $1 ORDER BY tablename",
                &[&self.name],
            )
            .await
            .map_err(failed)?;
        let tables: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        if tables.is_empty() {
            return Ok(());
        }
        self.client
            .batch_execute(&format!("ANALYZE {}", tables.join(", ")))
            .await
            .map_err(failed)
    }

    /// Drops the schema and everything in it.
    pub async fn cleanup(mut self) -> Result<()> {
        self.cleaned = true;
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name);
        self.client
            .batch_execute(&sql)
            .await
            .map_err(|source| Error::Postgres {
                target: redact_url(&self.url),
                what: format!("drop schema {}", self.name),
                source,
            })
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        // Drop cannot await, and the test's runtime may be single-threaded and busy
        // with this very call: drop the schema from a thread with its own runtime.
        let url = self.url.clone();
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name);
        let name = self.name.clone();
        let outcome = std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(Error::Runtime)?;
            runtime.block_on(async {
                let client = connect_pg(&url).await?;
                client
                    .batch_execute(&sql)
                    .await
                    .map_err(|source| Error::Postgres {
                        target: redact_url(&url),
                        what: format!("drop schema {name}"),
                        source,
                    })
            })
        })
        .join();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("remodel-testdb: leaving schema {} behind: {e}", self.name),
            Err(_) => eprintln!(
                "remodel-testdb: leaving schema {} behind: cleanup thread panicked",
                self.name
            ),
        }
    }
}
