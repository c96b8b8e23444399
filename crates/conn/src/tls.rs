//! OpenSSL client contexts for both connections, from PEM files: the CA certificates to trust,
//! an optional client certificate with its key, and how much of the server's certificate is
//! checked. Every failure names the file and what was wrong with it.

use crate::Error;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{SslConnector, SslConnectorBuilder, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::X509;
use std::path::{Path, PathBuf};

/// How much of the server's certificate is checked (libpq's `sslmode` levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Encrypted, but any certificate is taken (`require`).
    #[default]
    None,
    /// Signed by a trusted CA; the name in it is not compared (`verify-ca`).
    Ca,
    /// Signed by a trusted CA and naming the host (or IP address) connected to (`verify-full`).
    Full,
}

impl Verify {
    /// The `sslmode` word of this level.
    pub fn word(self) -> &'static str {
        match self {
            Verify::None => "require",
            Verify::Ca => "verify-ca",
            Verify::Full => "verify-full",
        }
    }
}

/// Where the trusted CA certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// Only the certificates of this PEM file (as libpq trusts only `sslrootcert`).
    File(PathBuf),
    /// The system's trusted CAs (OpenSSL's default paths; `sslrootcert=system`).
    System,
}

/// A client certificate (PEM, the leaf first, then any intermediates) and its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// The certificate file.
    pub cert: PathBuf,
    /// The private key file.
    pub key: PathBuf,
}

/// What a TLS connection is made with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// How much of the server's certificate is checked.
    pub verify: Verify,
    /// The trusted CAs; `None` with [`Verify::None`] only.
    pub roots: Option<Roots>,
    /// A client certificate, for servers that ask for one.
    pub client: Option<ClientCert>,
}

/// The OpenSSL errors of a failed call, as one line.
fn ssl_message(e: &openssl::error::ErrorStack) -> String {
    let reasons: Vec<String> = e
        .errors()
        .iter()
        .map(|e| e.reason().unwrap_or("unknown reason").to_string())
        .collect();
    if reasons.is_empty() {
        e.to_string()
    } else {
        reasons.join("; ")
    }
}

fn read(flag: &str, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::new(format!("{flag}{}", path.display()), e.to_string()))
}

/// The certificates of a PEM file (at least one).
fn certificates(flag: &str, path: &Path) -> Result<Vec<X509>, Error> {
    let bytes = read(flag, path)?;
    let what = || format!("{flag}{}", path.display());
    match X509::stack_from_pem(&bytes) {
        Ok(certs) if !certs.is_empty() => Ok(certs),
        Ok(_) => Err(Error::new(
            what(),
            "no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)",
        )),
        Err(e) => Err(Error::new(
            what(),
            format!("not a PEM certificate file: {}", ssl_message(&e)),
        )),
    }
}

/// The private key of a PEM file; an encrypted key is refused rather than prompted for.
fn private_key(flag: &str, path: &Path, password: Option<&str>) -> Result<PKey<Private>, Error> {
    let bytes = read(flag, path)?;
    let what = || format!("{flag}{}", path.display());
    let text = String::from_utf8_lossy(&bytes);
    let encrypted = text.contains("ENCRYPTED");
    if encrypted && password.is_none() {
        return Err(Error::new(
            what(),
            "the private key is encrypted: give its passphrase (sslpassword=… in a Postgres URL), \
             or decrypt it (openssl pkey -in KEY -out PLAIN)",
        ));
    }
    let key = match password {
        Some(pw) => PKey::private_key_from_pem_passphrase(&bytes, pw.as_bytes()),
        None => PKey::private_key_from_pem(&bytes),
    };
    key.map_err(|e| {
        let why = if encrypted {
            "cannot decrypt the private key (wrong passphrase?)"
        } else {
            "not a PEM private key (expected -----BEGIN PRIVATE KEY-----)"
        };
        Error::new(what(), format!("{why}: {}", ssl_message(&e)))
    })
}

/// An OpenSSL connector builder for `files`; `flags` names the options the files came from, as
/// they are written before the file name (`["sslrootcert=", …]` or `["--target-ca ", …]`). Host name
/// checks are made per connection by the caller's driver ([`Verify::Ca`] accepts a certificate
/// whatever name or address it holds).
pub fn connector(
    files: &TlsFiles,
    flags: [&str; 3],
    key_password: Option<&str>,
) -> Result<SslConnectorBuilder, Error> {
    let mut builder = SslConnector::builder(SslMethod::tls_client())
        .map_err(|e| Error::new("TLS setup", ssl_message(&e)))?;
    if let Some(Roots::File(path)) = &files.roots {
        let mut store =
            X509StoreBuilder::new().map_err(|e| Error::new("TLS setup", ssl_message(&e)))?;
        for cert in certificates(flags[0], path)? {
            store.add_cert(cert).map_err(|e| {
                Error::new(format!("{}{}", flags[0], path.display()), ssl_message(&e))
            })?;
        }
        builder.set_cert_store(store.build());
    }
    if let Some(client) = &files.client {
        let mut chain = certificates(flags[1], &client.cert)?.into_iter();
        let cert_what = || format!("{}{}", flags[1], client.cert.display());
        if let Some(leaf) = chain.next() {
            builder
                .set_certificate(&leaf)
                .map_err(|e| Error::new(cert_what(), ssl_message(&e)))?;
        }
        for extra in chain {
            builder
                .add_extra_chain_cert(extra)
                .map_err(|e| Error::new(cert_what(), ssl_message(&e)))?;
        }
        let key = private_key(flags[2], &client.key, key_password)?;
        // OpenSSL checks the pair when the key is set (and again on demand).
        let mismatch = |e: openssl::error::ErrorStack| {
            Error::new(
                format!("{}{}", flags[2], client.key.display()),
                format!(
                    "this key does not belong to the certificate in {} ({})",
                    client.cert.display(),
                    ssl_message(&e)
                ),
            )
        };
        builder.set_private_key(&key).map_err(mismatch)?;
        builder.check_private_key().map_err(mismatch)?;
    }
    match files.verify {
        Verify::None => builder.set_verify(SslVerifyMode::NONE),
        // The chain is checked; a name or address that does not match is accepted.
        Verify::Ca => builder.set_verify_callback(SslVerifyMode::PEER, |ok, ctx| {
            ok || matches!(
                ctx.error().as_raw(),
                openssl_sys::X509_V_ERR_HOSTNAME_MISMATCH
                    | openssl_sys::X509_V_ERR_IP_ADDRESS_MISMATCH
            )
        }),
        Verify::Full => builder.set_verify(SslVerifyMode::PEER),
    }
    Ok(builder)
}

/// OpenSSL's error in `c`: `c` itself (a failed handshake), or inside an I/O error (the server
/// ended TLS after the handshake, e.g. refusing a client certificate).
fn ssl_error<'a>(
    c: &'a (dyn std::error::Error + 'static),
) -> Option<(&'a openssl::ssl::Error, bool)> {
    if let Some(ssl) = c.downcast_ref::<openssl::ssl::Error>() {
        return Some((ssl, true));
    }
    let io = c.downcast_ref::<std::io::Error>()?;
    io.get_ref()?
        .downcast_ref::<openssl::ssl::Error>()
        .map(|ssl| (ssl, false))
}

/// What failed when `e` (or an error it was caused by) is a TLS failure: `TLS handshake failed:
/// certificate verify failed (self-signed certificate in certificate chain)` or `TLS failed:
/// tlsv1 alert unknown ca`: OpenSSL's reasons without its codes and source lines, and the
/// certificate check's verdict a driver added after them.
pub(crate) fn failure(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut outer: Option<&(dyn std::error::Error + 'static)> = None;
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some((ssl, handshake)) = ssl_error(c) {
            let mut reasons: Vec<&str> = ssl
                .ssl_error()
                .map(|stack| stack.errors().iter().filter_map(|e| e.reason()).collect())
                .unwrap_or_default();
            reasons.dedup();
            let why = match (reasons.is_empty(), ssl.io_error()) {
                (false, _) => reasons.join("; "),
                (true, Some(io)) => io.to_string(),
                (true, None) => ssl.to_string(),
            };
            let verdict = outer
                .map(|o| o.to_string())
                .and_then(|o| o.strip_prefix(&ssl.to_string()).map(str::to_string))
                .map(|rest| rest.trim_start_matches(':').trim().to_string())
                .filter(|rest| !rest.is_empty());
            let what = if handshake {
                "TLS handshake failed"
            } else {
                "TLS failed"
            };
            return Some(match verdict {
                Some(v) => format!("{what}: {why} ({v})"),
                None => format!("{what}: {why}"),
            });
        }
        outer = Some(c);
        cause = c.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_testdb::pki::Pki;

    const FLAGS: [&str; 3] = ["--ca ", "--cert ", "--key "];

    fn failure(made: Result<SslConnectorBuilder, Error>) -> String {
        match made {
            Ok(_) => panic!("the connector was made"),
            Err(e) => e.to_string(),
        }
    }

    fn files(pki: &Pki, verify: Verify) -> TlsFiles {
        TlsFiles {
            verify,
            roots: Some(Roots::File(pki.ca.clone())),
            client: Some(ClientCert {
                cert: pki.client_cert.clone(),
                key: pki.client_key.clone(),
            }),
        }
    }

    #[test]
    fn good_files_make_a_connector() {
        let pki = Pki::generate("conn-good").unwrap();
        for verify in [Verify::None, Verify::Ca, Verify::Full] {
            connector(&files(&pki, verify), FLAGS, None).unwrap();
        }
    }

    #[test]
    fn each_bad_file_is_named_with_what_is_wrong() {
        let pki = Pki::generate("conn-bad").unwrap();
        let missing = pki.dir.join("missing.pem");
        let mut f = files(&pki, Verify::Full);
        f.roots = Some(Roots::File(missing.clone()));
        let e = failure(connector(&f, FLAGS, None));
        assert!(
            e.starts_with(&format!("--ca {}: ", missing.display())),
            "{e}"
        );

        // A key where the CA was expected.
        let mut f = files(&pki, Verify::Full);
        f.roots = Some(Roots::File(pki.client_key.clone()));
        let e = failure(connector(&f, FLAGS, None));
        assert!(e.contains("no PEM certificate"), "{e}");

        // A certificate where the key was expected.
        let mut f = files(&pki, Verify::Full);
        f.client.as_mut().unwrap().key = pki.ca.clone();
        let e = failure(connector(&f, FLAGS, None));
        assert!(
            e.starts_with("--key ") && e.contains("not a PEM private key"),
            "{e}"
        );

        // The server's key with the client's certificate.
        let mut f = files(&pki, Verify::Full);
        f.client.as_mut().unwrap().key = pki.server_key.clone();
        let e = failure(connector(&f, FLAGS, None));
        assert!(e.contains("does not belong to the certificate"), "{e}");
    }

    #[test]
    fn an_encrypted_key_needs_its_passphrase() {
        let pki = Pki::generate("conn-enc").unwrap();
        let mut f = files(&pki, Verify::Full);
        f.client.as_mut().unwrap().key = pki.client_key_encrypted.clone();
        let e = failure(connector(&f, FLAGS, None));
        assert!(e.contains("is encrypted"), "{e}");
        let e = failure(connector(&f, FLAGS, Some("not-it")));
        assert!(e.contains("wrong passphrase"), "{e}");
        connector(&f, FLAGS, Some(Pki::KEY_PASSPHRASE)).unwrap();
    }
}
