//! A fresh Cassandra keyspace per test, through the scylla driver.

use std::time::Duration;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;

use crate::env::cql_node;
use crate::{names, Error, Result};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

fn cql_error(
    node: &str,
    what: impl Into<String>,
) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> Error + '_ {
    let what = what.into();
    move |source| Error::Cassandra {
        node: node.to_owned(),
        what,
        source,
    }
}

/// Opens a session on the node at `host:port`, giving up after `timeout`.
pub async fn connect_cql(node: &str, timeout: Duration) -> Result<Session> {
    let builder = SessionBuilder::new()
        .known_node(node)
        .connection_timeout(timeout);
    tokio::time::timeout(timeout, builder.build())
        .await
        .map_err(|_| Error::Timeout {
            what: format!("connecting to Cassandra at {node}"),
            secs: timeout.as_secs(),
        })?
        .map_err(|e| cql_error(node, "connect")(Box::new(e)))
}

/// `SELECT release_version FROM system.local`: the server's version, proof that it answers CQL.
pub async fn release_version(session: &Session, node: &str) -> Result<String> {
    let what = "SELECT release_version FROM system.local";
    let result = session
        .query_unpaged(what, &[])
        .await
        .map_err(|e| cql_error(node, what)(Box::new(e)))?
        .into_rows_result()
        .map_err(|e| cql_error(node, what)(Box::new(e)))?;
    let (version,): (String,) = result
        .single_row()
        .map_err(|e| cql_error(node, what)(Box::new(e)))?;
    Ok(version)
}

/// The version of the node at `host:port` itself: the query is sent to that node only (in a
/// cluster any node could answer [`release_version`]), so an answer proves that node is up.
pub async fn release_version_of_node(session: &Session, node: &str) -> Result<String> {
    let what = format!("SELECT release_version FROM system.local on {node} only");
    let addr: std::net::SocketAddr = node.parse().map_err(|_| {
        cql_error(node, what.clone())("not an IP address and port (127.0.0.2:9042)".into())
    })?;
    let mut stmt =
        scylla::statement::unprepared::Statement::new("SELECT release_version FROM system.local");
    stmt.set_load_balancing_policy(Some(
        scylla::policies::load_balancing::SingleTargetLoadBalancingPolicy::new(
            scylla::policies::load_balancing::NodeIdentifier::NodeAddress(addr),
            None,
        ),
    ));
    let result = session
        .query_unpaged(stmt, &[])
        .await
        .map_err(|e| cql_error(node, what.clone())(Box::new(e)))?
        .into_rows_result()
        .map_err(|e| cql_error(node, what.clone())(Box::new(e)))?;
    let (version,): (String,) = result
        .single_row()
        .map_err(|e| cql_error(node, what.clone())(Box::new(e)))?;
    Ok(version)
}

/// A keyspace of its own for one test (SimpleStrategy, replication factor 1, unless made by
/// [`CqlKeyspace::create_replicated`]), the
/// current keyspace of [`CqlKeyspace::session`]; dropped by [`CqlKeyspace::cleanup`] or,
/// failing that, on drop.
pub struct CqlKeyspace {
    session: Session,
    node: String,
    name: String,
    cleaned: bool,
}

impl CqlKeyspace {
    /// Creates `t_<label>_<pid>_<n>` on the node of `REMODEL_CQL_URL`.
    pub async fn create(label: &str) -> Result<Self> {
        let node = cql_node()?;
        Self::create_at(&node, label).await
    }

    /// Creates a fresh keyspace on the node at `host:port`.
    pub async fn create_at(node: &str, label: &str) -> Result<Self> {
        Self::create_replicated(
            node,
            label,
            "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        )
        .await
    }

    /// Creates a fresh keyspace on the cluster of the node at `host:port` with `replication`, a
    /// CQL replication map (`{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}`).
    pub async fn create_replicated(node: &str, label: &str, replication: &str) -> Result<Self> {
        let session = connect_cql(node, CONNECT_TIMEOUT).await?;
        let name = names::unique(label);
        // A leftover of a crashed run that had the same pid goes first.
        for cql in [
            format!("DROP KEYSPACE IF EXISTS {name}"),
            format!("CREATE KEYSPACE {name} WITH replication = {replication}"),
        ] {
            session
                .query_unpaged(cql.as_str(), &[])
                .await
                .map_err(|e| cql_error(node, cql.clone())(Box::new(e)))?;
        }
        session
            .use_keyspace(name.as_str(), false)
            .await
            .map_err(|e| cql_error(node, format!("USE {name}"))(Box::new(e)))?;
        Ok(Self {
            session,
            node: node.to_owned(),
            name,
            cleaned: false,
        })
    }

    /// A session whose current keyspace is this one.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's `host:port`, for code under test that opens its own session.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Drops the keyspace and everything in it.
    pub async fn cleanup(mut self) -> Result<()> {
        self.cleaned = true;
        drop_keyspace(&self.session, &self.node, &self.name).await
    }
}

async fn drop_keyspace(session: &Session, node: &str, name: &str) -> Result<()> {
    let cql = format!("DROP KEYSPACE IF EXISTS {name}");
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map(|_| ())
        .map_err(|e| cql_error(node, cql.clone())(Box::new(e)))
}

impl Drop for CqlKeyspace {
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        // Drop cannot await, and the test's runtime may be single-threaded and busy
        // with this very call: drop the keyspace from a thread with its own runtime.
        let node = self.node.clone();
        let name = self.name.clone();
        let outcome = std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(Error::Runtime)?;
            runtime.block_on(async {
                let session = connect_cql(&node, CONNECT_TIMEOUT).await?;
                drop_keyspace(&session, &node, &name).await
            })
        })
        .join();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("remodel-testdb: leaving keyspace {} behind: {e}", self.name),
            Err(_) => eprintln!(
                "remodel-testdb: leaving keyspace {} behind: cleanup thread panicked",
                self.name
            ),
        }
    }
}
