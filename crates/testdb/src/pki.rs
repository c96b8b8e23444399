//! Throwaway certificates for TLS tests: a CA, a server certificate for `localhost` and
//! `127.0.0.1`, and a client certificate (also as an encrypted key), as PEM files in a fresh
//! folder. A second `Pki` is a stranger to the first: its certificates must be refused by a
//! server (or a client) that trusts the first one's CA only. The folder, private keys included,
//! is removed when the last clone of its `Pki` is dropped (also when the test panics).

use crate::ScratchDir;
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use openssl::symm::Cipher;
use openssl::x509::extension::{
    BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName,
};
use openssl::x509::{X509Name, X509};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

static SERIAL: AtomicU32 = AtomicU32::new(1);

/// The PEM files of one throwaway CA and the certificates it signed.
#[derive(Debug, Clone)]
pub struct Pki {
    /// The folder holding the files (removed with the last clone of this value: keep the `Pki`
    /// while its files are used).
    pub dir: PathBuf,
    /// Removes `dir` when the last clone goes.
    _guard: Arc<ScratchDir>,
    /// The CA certificate.
    pub ca: PathBuf,
    /// The server certificate (`CN=localhost`, SAN `DNS:localhost`, `IP:127.0.0.1`).
    pub server_cert: PathBuf,
    /// Its key.
    pub server_key: PathBuf,
    /// The client certificate (`CN=remodel`).
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
    /// The same key, encrypted with [`Pki::KEY_PASSPHRASE`] (PKCS#8, AES-256-CBC).
    pub client_key_encrypted: PathBuf,
}

fn name(cn: &str) -> Result<X509Name, ErrorStack> {
    let mut n = X509Name::builder()?;
    n.append_entry_by_text("O", "remodel tests")?;
    n.append_entry_by_text("CN", cn)?;
    Ok(n.build())
}

fn key() -> Result<PKey<Private>, ErrorStack> {
    PKey::ec_gen("prime256v1")
}

/// A certificate for `cn` with `key`, signed by `issuer` (self-signed when `None`).
fn certificate(
    cn: &str,
    key: &PKey<Private>,
    issuer: Option<(&X509, &PKey<Private>)>,
    kind: Kind,
) -> Result<X509, ErrorStack> {
    let mut b = X509::builder()?;
    b.set_version(2)?;
    let serial = BigNum::from_u32(
        SERIAL
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(std::process::id()),
    )?;
    let serial = serial.to_asn1_integer()?;
    b.set_serial_number(&serial)?;
    let subject = name(cn)?;
    b.set_subject_name(&subject)?;
    match issuer {
        Some((ca, _)) => b.set_issuer_name(ca.subject_name())?,
        None => b.set_issuer_name(&subject)?,
    }
    b.set_pubkey(key)?;
    // From a day ago: a clock a little behind still takes it.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (from, to) = (
        Asn1Time::from_unix(now - 86_400)?,
        Asn1Time::days_from_now(30)?,
    );
    b.set_not_before(&from)?;
    b.set_not_after(&to)?;
    match kind {
        Kind::Ca => {
            b.append_extension(BasicConstraints::new().critical().ca().build()?)?;
            b.append_extension(
                KeyUsage::new()
                    .critical()
                    .key_cert_sign()
                    .crl_sign()
                    .build()?,
            )?;
        }
        Kind::Server => {
            b.append_extension(BasicConstraints::new().build()?)?;
            b.append_extension(ExtendedKeyUsage::new().server_auth().build()?)?;
            let san = SubjectAlternativeName::new()
                .dns("localhost")
                .ip("127.0.0.1")
                .build(&b.x509v3_context(issuer.map(|(c, _)| &**c), None))?;
            b.append_extension(san)?;
        }
        Kind::Client => {
            b.append_extension(BasicConstraints::new().build()?)?;
            b.append_extension(ExtendedKeyUsage::new().client_auth().build()?)?;
        }
    }
    b.sign(issuer.map_or(key, |(_, k)| k), MessageDigest::sha256())?;
    Ok(b.build())
}

#[derive(Clone, Copy)]
enum Kind {
    Ca,
    Server,
    Client,
}

fn write(dir: &Path, file: &str, pem: &[u8]) -> std::io::Result<PathBuf> {
    let path = dir.join(file);
    std::fs::write(&path, pem)?;
    Ok(path)
}

impl Pki {
    /// The passphrase of [`Pki::client_key_encrypted`].
    pub const KEY_PASSPHRASE: &'static str = "pki-test-passphrase";

    /// Generates a CA and its certificates into a fresh folder of the temp dir named after
    /// `label` and the process (`remodel-pki-LABEL-PID`).
    pub fn generate(label: &str) -> std::io::Result<Pki> {
        let guard = ScratchDir::new(&format!("pki-{label}"))?;
        Self::write_into(guard, label).map_err(std::io::Error::other)
    }

    fn write_into(
        guard: ScratchDir,
        label: &str,
    ) -> Result<Pki, Box<dyn std::error::Error + Send + Sync>> {
        let dir = &guard.path().to_path_buf();
        let ca_key = key()?;
        let ca = certificate(&format!("remodel test CA {label}"), &ca_key, None, Kind::Ca)?;
        let server_key = key()?;
        let server = certificate("localhost", &server_key, Some((&ca, &ca_key)), Kind::Server)?;
        let client_key = key()?;
        let client = certificate("remodel", &client_key, Some((&ca, &ca_key)), Kind::Client)?;
        Ok(Pki {
            dir: dir.to_path_buf(),
            ca: write(dir, "ca.crt", &ca.to_pem()?)?,
            server_cert: write(dir, "server.crt", &server.to_pem()?)?,
            server_key: write(dir, "server.key", &server_key.private_key_to_pem_pkcs8()?)?,
            client_cert: write(dir, "client.crt", &client.to_pem()?)?,
            client_key: write(dir, "client.key", &client_key.private_key_to_pem_pkcs8()?)?,
            client_key_encrypted: write(
                dir,
                "client.enc.key",
                &client_key.private_key_to_pem_pkcs8_passphrase(
                    Cipher::aes_256_cbc(),
                    Self::KEY_PASSPHRASE.as_bytes(),
                )?,
            )?,
            _guard: Arc::new(guard),
        })
    }
}
