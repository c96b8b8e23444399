//! Connecting to Postgres as libpq would with the same connection string: its `sslmode`
//! decides whether TLS is tried, required, and how the certificate is checked; `prefer` and
//! `allow` fall back as libpq does.

use crate::pgurl::{self, SslMode, TlsPlan};
use crate::tls::{self, TlsFiles};
use crate::Error;
use postgres_openssl::MakeTlsConnector;
use tokio_postgres::config::{SslMode as DriverMode, SslNegotiation};
use tokio_postgres::error::SqlState;
use tokio_postgres::Client;

/// A Postgres error as one line: the server's severity, message, detail and hint; a failed TLS
/// handshake as what OpenSSL says failed; else the driver's error with its causes.
pub fn message(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        if let Some(d) = db.detail() {
            text.push_str(&format!(" ({d})"));
        }
        if let Some(h) = db.hint() {
            text.push_str(&format!("; hint: {h}"));
        }
        return text;
    }
    if let Some(text) = handshake_failure(e) {
        return text;
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        // Drivers often repeat their cause in their own text.
        let part = c.to_string();
        if !text.contains(&part) {
            text.push_str(&format!(": {part}"));
        }
        cause = c.source();
    }
    text
}

/// `TLS handshake failed: certificate verify failed (self-signed certificate in certificate
/// chain)` or `TLS failed: tlsv1 alert unknown ca` when TLS failed (see [`tls::failure`]).
fn handshake_failure(e: &tokio_postgres::Error) -> Option<String> {
    std::error::Error::source(e).and_then(tls::failure)
}

/// Whether TLS failed (rather than the network or the server's login): the case where `prefer`
/// tries again without TLS.
fn handshake_failed(e: &tokio_postgres::Error) -> bool {
    handshake_failure(e).is_some()
}

/// The settings and connector of one connection string.
struct Prepared {
    config: tokio_postgres::Config,
    plan: TlsPlan,
    connector: MakeTlsConnector,
}

fn prepare(url: &str, password: Option<&str>) -> Result<Prepared, Error> {
    let (rest, settings) = pgurl::split(url).map_err(|m| Error::new("read the URL", m))?;
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e| Error::new("read the URL", message(&e)))?;
    if let (None, Some(pw)) = (config.get_password(), password) {
        config.password(pw);
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let plan = settings
        .plan(home.as_deref())
        .map_err(|m| Error::new("TLS settings", m))?;
    let mut builder = tls::connector(
        &plan.files,
        ["sslrootcert=", "sslcert=", "sslkey="],
        plan.key_password.as_deref(),
    )?;
    if config.get_ssl_negotiation() == SslNegotiation::Direct {
        postgres_openssl::set_postgresql_alpn(&mut builder)
            .map_err(|e| Error::new("TLS setup", e.to_string()))?;
    }
    let mut connector = MakeTlsConnector::new(builder.build());
    if !plan.sni {
        connector.set_callback(|c, _| {
            c.set_use_server_name_indication(false);
            Ok(())
        });
    }
    Ok(Prepared {
        config,
        plan,
        connector,
    })
}

/// Reads `url` as [`connect`] would, without connecting: a string that is no connection string
/// (or names TLS files that do not exist) is refused before anything else runs. The error never
/// holds the string.
pub fn check(url: &str) -> Result<(), Error> {
    prepare(url, None).map(|_| ())
}

/// One attempt: connects and drives the connection on the current tokio runtime.
async fn attempt(
    config: &tokio_postgres::Config,
    connector: MakeTlsConnector,
) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(connector).await?;
    tokio::spawn(async move {
        // The connection ends with an error only when the server goes away; the client's next
        // call reports it, so nothing is lost by dropping it here.
        let _ = connection.await;
    });
    Ok(client)
}

/// Connects to `url` (`password` is used when the URL has none, as libpq uses `PGPASSWORD`) and
/// drives the connection on the current tokio runtime. An error's `what` says how TLS was used
/// (`connect (sslmode=verify-full, sslrootcert=…)`; plain `connect` for libpq's default, `prefer`
/// with no certificate at hand); no password is in it.
pub async fn connect(url: &str, password: Option<&str>) -> Result<Client, Error> {
    let Prepared {
        mut config,
        plan,
        connector,
    } = prepare(url, password)?;
    // libpq's default (prefer, no certificate at hand) goes unsaid.
    let what = if plan.mode == SslMode::Prefer && plan.files == TlsFiles::default() {
        "connect".to_string()
    } else {
        format!("connect ({plan})")
    };
    // libpq's order of attempts: `allow` tries TLS only when the server refused the
    // connection without it; `prefer` tries without when the handshake failed.
    let (first, fallback) = match plan.mode {
        SslMode::Disable => (DriverMode::Disable, None),
        SslMode::Allow => (DriverMode::Disable, Some(DriverMode::Require)),
        SslMode::Prefer => (DriverMode::Prefer, Some(DriverMode::Disable)),
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => (DriverMode::Require, None),
    };
    config.ssl_mode(first);
    let e = match attempt(&config, connector.clone()).await {
        Ok(client) => return Ok(client),
        Err(e) => e,
    };
    let retry = match fallback {
        Some(mode) if plan.mode == SslMode::Prefer && handshake_failed(&e) => {
            Some((mode, "without TLS"))
        }
        Some(mode)
            if plan.mode == SslMode::Allow
                && e.code() == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION) =>
        {
            Some((mode, "with TLS"))
        }
        _ => None,
    };
    let Some((mode, how)) = retry else {
        return Err(Error::new(what, message(&e)));
    };
    config.ssl_mode(mode);
    attempt(&config, connector).await.map_err(|again| {
        Error::new(
            what,
            format!("{}; then {how}: {}", message(&e), message(&again)),
        )
    })
}
