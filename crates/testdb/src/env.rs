//! Where the test databases are: the environment variables printed by `scripts/db env`.

use crate::{Error, Result};

/// Variable holding the Postgres URL, e.g. `postgres://remodel:remodel@127.0.0.1:54329/remodel`.
pub const PG_URL_VAR: &str = "REMODEL_PG_URL";
/// Variable holding the Cassandra contact point, `host:port` (a `cql://` prefix is accepted).
pub const CQL_URL_VAR: &str = "REMODEL_CQL_URL";

/// Variable holding a contact point of the local cluster of `scripts/db up cluster` (three
/// nodes, `host:port` of the first), e.g. `127.0.0.2:9042`.
pub const CLUSTER_URL_VAR: &str = "REMODEL_CLUSTER_URL";

/// Variable holding the folder of the test databases' TLS files (`scripts/db` makes them).
pub const TLS_DIR_VAR: &str = "REMODEL_DB_TLS";

fn lookup(var: &'static str) -> Result<String> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Ok(value.trim().to_owned()),
        Ok(_) | Err(std::env::VarError::NotPresent) => Err(Error::MissingEnv {
            var,
            ci: if is_ci() {
                " (CI=true: tests that need a database fail rather than skip)"
            } else {
                ""
            },
        }),
        Err(std::env::VarError::NotUnicode(raw)) => Err(Error::BadEnv {
            var,
            value: raw.to_string_lossy().into_owned(),
            reason: "not UTF-8",
        }),
    }
}

fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The Postgres URL from `REMODEL_PG_URL`.
pub fn pg_url() -> Result<String> {
    lookup(PG_URL_VAR)
}

/// The Cassandra contact point (`host:port`) from `REMODEL_CQL_URL`.
pub fn cql_node() -> Result<String> {
    let value = lookup(CQL_URL_VAR)?;
    normalize_cql_node(&value).ok_or(Error::BadEnv {
        var: CQL_URL_VAR,
        value,
        reason: "expected host:port, e.g. 127.0.0.1:9042",
    })
}

/// The local cluster's contact point (`host:port`) from `REMODEL_CLUSTER_URL`.
pub fn cluster_node() -> Result<String> {
    let value = lookup(CLUSTER_URL_VAR)?;
    normalize_cql_node(&value).ok_or(Error::BadEnv {
        var: CLUSTER_URL_VAR,
        value,
        reason: "expected host:port, e.g. 127.0.0.2:9042",
    })
}

/// The TLS files of the test databases, made by `scripts/db up` in `REMODEL_DB_TLS`: the CA
/// that signed both servers' certificates (for `localhost` and `127.0.0.1`) and a client
/// certificate it signed (`CN=remodel`).
#[derive(Debug, Clone)]
pub struct DbTls {
    /// The CA certificate (PEM).
    pub ca: std::path::PathBuf,
    /// The client certificate (PEM).
    pub client_cert: std::path::PathBuf,
    /// Its key (PEM, not encrypted).
    pub client_key: std::path::PathBuf,
}

/// The TLS files in `REMODEL_DB_TLS`; an error says how to make them when they are missing.
pub fn db_tls() -> Result<DbTls> {
    let dir = std::path::PathBuf::from(lookup(TLS_DIR_VAR)?);
    let tls = DbTls {
        ca: dir.join("ca.crt"),
        client_cert: dir.join("client.crt"),
        client_key: dir.join("client.key"),
    };
    for f in [&tls.ca, &tls.client_cert, &tls.client_key] {
        if !f.is_file() {
            return Err(Error::BadEnv {
                var: TLS_DIR_VAR,
                value: dir.display().to_string(),
                reason: "holds no ca.crt, client.crt and client.key: `scripts/db up` makes them \
                         (restart the databases with `scripts/db down` and `scripts/db up` \
                         to give them TLS)",
            });
        }
    }
    Ok(tls)
}

/// Accepts `host:port`, `cql://host:port` and `cql://host:port/`; `None` for anything else.
pub(crate) fn normalize_cql_node(value: &str) -> Option<String> {
    let rest = value.strip_prefix("cql://").unwrap_or(value);
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = rest.rsplit_once(':')?;
    if host.is_empty() || port.parse::<u16>().is_err() || rest.contains('/') {
        return None;
    }
    Some(rest.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cql_node_forms() {
        assert_eq!(
            normalize_cql_node("127.0.0.1:9042").as_deref(),
            Some("127.0.0.1:9042")
        );
        assert_eq!(
            normalize_cql_node("cql://localhost:9142/").as_deref(),
            Some("localhost:9142")
        );
        assert_eq!(normalize_cql_node("127.0.0.1"), None);
        assert_eq!(normalize_cql_node("127.0.0.1:x"), None);
        assert_eq!(normalize_cql_node("cql://h:1/ks"), None);
    }

    #[test]
    fn missing_variable_says_how_to_start_the_databases() {
        let err = lookup("REMODEL_TESTDB_SURELY_UNSET").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("scripts/db up"), "{text}");
        assert!(text.contains("eval \"$(scripts/db env)\""), "{text}");
    }
}
