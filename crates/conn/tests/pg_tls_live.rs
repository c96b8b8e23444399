//! Postgres over TLS, against the test server: `scripts/db up` turns `ssl` on with a CA of its
//! own (its files in `REMODEL_DB_TLS`), plain connections still allowed. Each `sslmode`, the CA
//! and host name checks, client certificates (also an encrypted key), and `prefer`'s fallback
//! when the handshake fails. Needs `REMODEL_PG_URL` and `REMODEL_DB_TLS`.

use remodel_testdb::pki::Pki;
use remodel_testdb::{db_tls, pg_url, DbTls};
use tokio_postgres::Client;

/// The test server's URL and TLS files, after checking that the server has TLS on.
async fn server() -> (String, DbTls) {
    let url = pg_url().unwrap_or_else(|e| panic!("{e}"));
    let tls = db_tls().unwrap_or_else(|e| panic!("{e}"));
    let plain = remodel_conn::connect(&with(&url, "sslmode=disable"), None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ssl: String = plain.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    assert_eq!(
        ssl, "on",
        "the test Postgres has ssl = off: it was started before scripts/db set up TLS; \
         restart it (scripts/db down pg; scripts/db up pg)"
    );
    (url, tls)
}

/// `url` with `params` added to its query.
fn with(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// Whether this connection is encrypted, and the subject of the client certificate it showed.
async fn tls_state(client: &Client) -> (bool, Option<String>) {
    let row = client
        .query_one(
            "SELECT ssl, client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

async fn connect(url: &str) -> Result<Client, remodel_conn::Error> {
    remodel_conn::connect(url, None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn each_sslmode_connects_as_libpq_would() {
    remodel_testdb::live!(Postgres, DbTls);
    let (url, tls) = server().await;
    let ca = tls.ca.display().to_string();
    for (params, encrypted) in [
        ("sslmode=disable".to_string(), false),
        ("sslmode=allow".to_string(), false),
        ("sslmode=prefer".to_string(), true),
        ("sslmode=require".to_string(), true),
        (format!("sslmode=require&sslrootcert={ca}"), true),
        (format!("sslmode=verify-ca&sslrootcert={ca}"), true),
        (format!("sslmode=verify-full&sslrootcert={ca}"), true),
    ] {
        let client = connect(&with(&url, &params))
            .await
            .unwrap_or_else(|e| panic!("{params}: {e}"));
        assert_eq!(tls_state(&client).await, (encrypted, None), "{params}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    remodel_testdb::live!(Postgres, DbTls);
    let (url, tls) = server().await;
    let ca = tls.ca.display().to_string();
    // The server's certificate names localhost and 127.0.0.1.
    let by_name = url.replacen("@127.0.0.1:", "@localhost:", 1);
    assert_ne!(by_name, url, "REMODEL_PG_URL reaches 127.0.0.1");
    let client = connect(&with(
        &by_name,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(tls_state(&client).await.0);
    // The same server under a name its certificate does not hold.
    let other = url.replacen("@127.0.0.1:", "@not-the-server.test:", 1);
    let params = format!("hostaddr=127.0.0.1&sslrootcert={ca}");
    let e = connect(&with(&other, &format!("{params}&sslmode=verify-full")))
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.what
            .starts_with(&format!("connect (sslmode=verify-full, sslrootcert={ca}")),
        "{e}"
    );
    assert!(e.message.contains("certificate verify failed"), "{e}");
    assert!(e.message.contains("hostname mismatch"), "{e}");
    let client = connect(&with(&other, &format!("{params}&sslmode=verify-ca")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(tls_state(&client).await.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_ca_is_refused_and_prefer_then_connects_without_tls() {
    remodel_testdb::live!(Postgres, DbTls);
    let (url, _) = server().await;
    let stranger = Pki::generate("pg-stranger").unwrap();
    let ca = stranger.ca.display().to_string();
    for mode in ["require", "verify-ca", "verify-full"] {
        let e = connect(&with(&url, &format!("sslmode={mode}&sslrootcert={ca}")))
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(
            e.message.contains("certificate verify failed"),
            "{mode}: {e}"
        );
        let password = url.split(':').nth(2).and_then(|s| s.split('@').next());
        assert!(password.is_some_and(|pw| !e.to_string().contains(&format!(":{pw}@"))));
    }
    // libpq's prefer: a handshake that fails is tried again without TLS.
    let client = connect(&with(&url, &format!("sslmode=prefer&sslrootcert={ca}")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tls_state(&client).await, (false, None));
}

#[tokio::test(flavor = "multi_thread")]
async fn client_certificates_are_sent_and_checked_by_the_server() {
    remodel_testdb::live!(Postgres, DbTls);
    let (url, tls) = server().await;
    let files = format!(
        "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
        tls.ca.display(),
        tls.client_cert.display(),
        tls.client_key.display()
    );
    let client = connect(&with(&url, &files))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (encrypted, dn) = tls_state(&client).await;
    assert!(encrypted);
    assert!(dn.is_some_and(|dn| dn.contains("CN=remodel")));

    // The same key encrypted, with its passphrase in sslpassword.
    // Kept to the end: the folder goes with the last clone of the Pki.
    let pki = Pki::generate("pg-enc").unwrap();
    let dir = &pki.dir;
    let key = openssl::pkey::PKey::private_key_from_pem(&std::fs::read(&tls.client_key).unwrap())
        .unwrap();
    let encrypted_key = dir.join("db-client.enc.key");
    let pem = key
        .private_key_to_pem_pkcs8_passphrase(openssl::symm::Cipher::aes_256_cbc(), b"k3y pass")
        .unwrap();
    std::fs::write(&encrypted_key, pem).unwrap();
    let files = format!(
        "sslmode=require&sslcert={}&sslkey={}&sslpassword=k3y%20pass",
        tls.client_cert.display(),
        encrypted_key.display()
    );
    let client = connect(&with(&url, &files))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(tls_state(&client)
        .await
        .1
        .is_some_and(|dn| dn.contains("CN=remodel")));

    // A certificate of another CA: the server (ssl_ca_file) refuses it.
    let stranger = Pki::generate("pg-stranger-client").unwrap();
    let files = format!(
        "sslmode=require&sslcert={}&sslkey={}",
        stranger.client_cert.display(),
        stranger.client_key.display()
    );
    let e = connect(&with(&url, &files)).await.map(|_| ()).unwrap_err();
    assert!(
        e.what.starts_with("connect (sslmode=require, sslcert="),
        "{e}"
    );
    // The server's TLS alert, or the reset that follows it when that is read first.
    assert!(
        e.message == "TLS failed: tlsv1 alert unknown ca"
            || e.message.contains("Connection reset by peer"),
        "{e}"
    );
}
