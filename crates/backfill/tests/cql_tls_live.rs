//! TLS to Cassandra, against the test node: `scripts/db up` gives it client_encryption_options
//! (TLS and plain on the one port, a client certificate of its CA required on TLS connections;
//! the files in `REMODEL_DB_TLS`). A session over TLS answers with every check level; the node
//! refuses a TLS client without a certificate or with one of another CA; a node certificate of
//! another CA is refused by `verify-ca`. Needs `REMODEL_CQL_URL` and `REMODEL_DB_TLS`.

use remodel_backfill::{ClientCert, CqlTarget, CqlTls, Verify};
use remodel_testdb::pki::Pki;
use remodel_testdb::{cql_node, db_tls, release_version};
use std::time::Duration;

fn client(cert: &std::path::Path, key: &std::path::Path) -> Option<ClientCert> {
    Some(ClientCert {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
    })
}

/// The node refused the client after the handshake: its TLS alert (`tlsv13 alert certificate
/// required`; Java's `internal error` for a certificate of another CA), or, when the driver's
/// connection task saw the alert first, the broken connection it reports instead.
fn refused(e: &str) -> bool {
    (e.contains("SSL routines") && e.contains(" alert ")) || e.contains("Connection broken")
}

async fn session(tls: CqlTls) -> Result<String, String> {
    let node = cql_node().unwrap_or_else(|e| panic!("{e}"));
    let target = CqlTarget::new(&node, None)
        .and_then(|t| t.with_tls(tls))
        .map_err(|e| e.to_string())?;
    let session = target
        .connect(1, Duration::from_secs(10))
        .await
        .map_err(|e| e.to_string())?;
    // The connection is encrypted: the node's own view of it.
    let rows = session
        .query_unpaged("SELECT ssl_enabled FROM system_views.clients", &[])
        .await
        .map_err(|e| e.to_string())?
        .into_rows_result()
        .map_err(|e| e.to_string())?;
    let encrypted = rows
        .rows::<(Option<bool>,)>()
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .any(|(ssl,)| ssl == Some(true));
    assert!(encrypted, "no encrypted client in system_views.clients");
    release_version(&session, &node)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_check_level_connects_with_the_test_ca_and_a_client_certificate() {
    remodel_testdb::live!(Cassandra, DbTls);
    let tls = db_tls().unwrap_or_else(|e| panic!("{e}"));
    for verify in [Verify::None, Verify::Ca, Verify::Full] {
        let version = session(CqlTls {
            verify,
            ca: (verify != Verify::None).then(|| tls.ca.clone()),
            client: client(&tls.client_cert, &tls.client_key),
        })
        .await
        .unwrap_or_else(|e| panic!("{verify:?}: {e}"));
        assert!(version.starts_with('5'), "{version}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_node_refuses_tls_clients_without_a_certificate_of_its_ca() {
    remodel_testdb::live!(Cassandra, DbTls);
    let tls = db_tls().unwrap_or_else(|e| panic!("{e}"));
    let e = session(CqlTls {
        verify: Verify::Full,
        ca: Some(tls.ca.clone()),
        client: None,
    })
    .await
    .unwrap_err();
    assert!(
        e.contains(&format!(
            "connect (TLS verify-full, CA {}): ",
            tls.ca.display()
        )),
        "{e}"
    );
    assert!(refused(&e), "{e}");
    let stranger = Pki::generate("cql-stranger-client").unwrap();
    let e = session(CqlTls {
        verify: Verify::Full,
        ca: Some(tls.ca.clone()),
        client: client(&stranger.client_cert, &stranger.client_key),
    })
    .await
    .unwrap_err();
    assert!(refused(&e), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_certificate_of_another_ca_is_refused() {
    remodel_testdb::live!(Cassandra, DbTls);
    let tls = db_tls().unwrap_or_else(|e| panic!("{e}"));
    let stranger = Pki::generate("cql-stranger-ca").unwrap();
    for verify in [Verify::Ca, Verify::Full] {
        let e = session(CqlTls {
            verify,
            ca: Some(stranger.ca.clone()),
            client: client(&tls.client_cert, &tls.client_key),
        })
        .await
        .unwrap_err();
        assert!(e.contains("certificate verify failed"), "{verify:?}: {e}");
    }
}
