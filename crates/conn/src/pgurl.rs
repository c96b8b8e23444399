//! A Postgres connection string split in two: what tokio-postgres reads itself, and the TLS
//! settings libpq takes that it does not (`sslmode` beyond `require`, `sslrootcert`, `sslcert`,
//! `sslkey`, `sslpassword`, `sslsni`). Both forms are read: `postgres://…?k=v&…` (values
//! percent-encoded) and `k=v k='quoted value' …`.

use crate::tls::{ClientCert, Roots, TlsFiles, Verify};
use std::path::{Path, PathBuf};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Without TLS first; with TLS when the server refuses that.
    Allow,
    /// With TLS when the server offers it, else without (libpq's default).
    #[default]
    Prefer,
    /// Always TLS; the certificate is checked only when a root certificate is at hand.
    Require,
    /// Always TLS, the certificate signed by a trusted CA.
    VerifyCa,
    /// Always TLS, the certificate signed by a trusted CA and naming the host.
    VerifyFull,
}

impl SslMode {
    /// The `sslmode` word.
    pub fn word(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn parse(value: &str) -> Result<SslMode, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other}: expected disable, allow, prefer, require, verify-ca or verify-full"
                ))
            }
        })
    }
}

/// The TLS settings of a connection string, as written in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgTls {
    /// `sslmode` (libpq's default `prefer` when absent).
    pub mode: SslMode,
    /// `sslrootcert`: a file, or `system`.
    pub root_cert: Option<String>,
    /// `sslcert`.
    pub cert: Option<PathBuf>,
    /// `sslkey`.
    pub key: Option<PathBuf>,
    /// `sslpassword`: the passphrase of an encrypted `sslkey` (never shown).
    pub key_password: Option<String>,
    /// `sslsni` (default on): send the host name in the TLS handshake.
    pub sni: bool,
}

/// The keys taken out of the connection string.
const TLS_KEYS: [&str; 6] = [
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslsni",
];

impl PgTls {
    fn set(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "sslmode" => self.mode = SslMode::parse(&value)?,
            "sslrootcert" => self.root_cert = Some(value),
            "sslcert" => self.cert = Some(PathBuf::from(value)),
            "sslkey" => self.key = Some(PathBuf::from(value)),
            "sslpassword" => self.key_password = Some(value),
            "sslsni" => {
                self.sni = match value.as_str() {
                    "1" => true,
                    "0" => false,
                    other => return Err(format!("sslsni={other}: expected 0 or 1")),
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// `url` without its TLS settings (to hand to tokio-postgres), and those settings.
pub fn split(url: &str) -> Result<(String, PgTls), String> {
    let mut tls = PgTls {
        sni: true,
        ..PgTls::default()
    };
    let rest = match url_scheme(url) {
        Some("postgres" | "postgresql") => split_url(url, &mut tls)?,
        // The scheme alone is shown: what follows it may hold the password.
        Some(other) => {
            return Err(format!(
                "a URL of scheme `{other}`: expected postgres:// or postgresql://"
            ))
        }
        None => split_keywords(url, &mut tls)?,
    };
    Ok((rest, tls))
}

/// The scheme of `scheme://…` (letters, digits, `+`, `-`, `.`, a letter first), if `url` has one.
pub(crate) fn url_scheme(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// A parameter name as libpq spells them (`sslmode`, `application_name`): safe to repeat in a
/// message. Anything else may be a password typed in the wrong place, and is not repeated.
fn plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// What is said of a string that is neither a URL nor `key=value` pairs: never the string itself.
const NOT_A_CONNECTION_STRING: &str =
    "expected postgres://user@host:port/db or key=value pairs (host=… dbname=…)";

/// `s` percent-decoded; `what` names it in the error (never `s`: it may be a password).
fn decode(s: &str, what: &str) -> Result<String, String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|v| v.into_owned())
        .map_err(|_| format!("{what} is not UTF-8 once percent-decoded"))
}

fn split_url(url: &str, tls: &mut PgTls) -> Result<String, String> {
    let Some((main, query)) = url.split_once('?') else {
        return Ok(url.to_string());
    };
    let mut kept = Vec::new();
    for (n, pair) in query.split('&').filter(|p| !p.is_empty()).enumerate() {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let what = format!("parameter {} of the URL", n + 1);
        let key_text = decode(key, &what)?;
        if !plain_key(&key_text) {
            return Err(format!("{what} is not a key=value pair"));
        }
        if TLS_KEYS.contains(&key_text.as_str()) {
            tls.set(
                &key_text,
                decode(value, &format!("the value of {key_text}"))?,
            )?;
        } else {
            kept.push(pair);
        }
    }
    Ok(if kept.is_empty() {
        main.to_string()
    } else {
        format!("{main}?{}", kept.join("&"))
    })
}

/// One `key=value` of the keyword form: the key, the value's text as written (quotes and
/// escapes kept, so the kept pairs read back the same) and the value it means.
pub(crate) struct Pair<'a> {
    pub(crate) key: &'a str,
    pub(crate) raw: &'a str,
    pub(crate) value: String,
}

/// The `key=value` pairs of a keyword connection string (libpq's grammar: spaces around `=`
/// allowed, values in single quotes or bare, `\` escaping the next character in both).
pub(crate) fn pairs(s: &str) -> Result<Vec<Pair<'_>>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = s.as_bytes();
    let skip_space = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    loop {
        i = skip_space(i);
        if i >= bytes.len() {
            return Ok(out);
        }
        let key_start = i;
        while i < bytes.len() && bytes[i] != b'=' && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &s[key_start..i];
        i = skip_space(i);
        if !plain_key(key) {
            return Err(format!(
                "word {} is not key=value: {NOT_A_CONNECTION_STRING}",
                out.len() + 1
            ));
        }
        if bytes.get(i) != Some(&b'=') {
            return Err(format!("`{key}` has no `=value`"));
        }
        i = skip_space(i + 1);
        let raw_start = i;
        let mut value = Vec::new();
        if bytes.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => {
                        return Err(format!("the quoted value of `{key}` has no closing quote"))
                    }
                    Some(b'\'') => break,
                    Some(b'\\') if i + 1 < bytes.len() => {
                        value.push(bytes[i + 1]);
                        i += 2;
                    }
                    Some(&b) => {
                        value.push(b);
                        i += 1;
                    }
                }
            }
            i += 1;
        } else {
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    i += 1;
                }
                value.push(bytes[i]);
                i += 1;
            }
        }
        out.push(Pair {
            key,
            raw: &s[raw_start..i],
            // Only ASCII bytes were dropped (quotes, backslashes): still UTF-8.
            value: String::from_utf8_lossy(&value).into_owned(),
        });
    }
}

fn split_keywords(s: &str, tls: &mut PgTls) -> Result<String, String> {
    let mut kept = Vec::new();
    for pair in pairs(s)? {
        if TLS_KEYS.contains(&pair.key) {
            tls.set(pair.key, pair.value)?;
        } else {
            kept.push(format!("{}={}", pair.key, pair.raw));
        }
    }
    Ok(kept.join(" "))
}

/// libpq's default files, under `~/.postgresql/`.
const DEFAULT_ROOT: &str = "root.crt";
const DEFAULT_CERT: &str = "postgresql.crt";
const DEFAULT_KEY: &str = "postgresql.key";

/// How to connect: the `sslmode` and, unless it is `disable`, the TLS files to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPlan {
    /// The mode asked for.
    pub mode: SslMode,
    /// What TLS is made with (unused with `disable`).
    pub files: TlsFiles,
    /// The passphrase of the client key.
    pub key_password: Option<String>,
    /// Send the host name in the handshake.
    pub sni: bool,
}

impl std::fmt::Display for TlsPlan {
    /// `sslmode=verify-full, sslrootcert=/x/ca.crt, sslcert=/x/c.crt`: what the connection
    /// was made with, for messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sslmode={}", self.mode.word())?;
        if self.mode == SslMode::Disable {
            return Ok(());
        }
        match &self.files.roots {
            Some(Roots::File(p)) => write!(f, ", sslrootcert={}", p.display())?,
            Some(Roots::System) => write!(f, ", sslrootcert=system")?,
            None => {}
        }
        if let Some(c) = &self.files.client {
            write!(f, ", sslcert={}", c.cert.display())?;
        }
        Ok(())
    }
}

fn existing(path: PathBuf) -> Option<PathBuf> {
    path.is_file().then_some(path)
}

fn must_exist(key: &str, path: &Path) -> Result<PathBuf, String> {
    if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(format!("{key}={}: no such file", path.display()))
    }
}

impl PgTls {
    /// The files to use, as libpq picks them: the ones named, else those of `home/.postgresql/`
    /// that exist. A root certificate turns on the CA check in every mode that uses TLS (libpq:
    /// `require` with a root certificate is `verify-ca`); the `verify-` modes need one.
    /// Unlike libpq, a file named in the string that does not exist is an error, not ignored.
    pub fn plan(&self, home: Option<&Path>) -> Result<TlsPlan, String> {
        let dot = home.map(|h| h.join(".postgresql"));
        if self.mode == SslMode::Disable {
            // libpq reads no TLS file then.
            return Ok(TlsPlan {
                mode: self.mode,
                files: TlsFiles::default(),
                key_password: None,
                sni: self.sni,
            });
        }
        let roots = match self.root_cert.as_deref() {
            Some("system") => Some(Roots::System),
            Some(file) => Some(Roots::File(must_exist("sslrootcert", Path::new(file))?)),
            None => dot
                .as_ref()
                .and_then(|d| existing(d.join(DEFAULT_ROOT)))
                .map(Roots::File),
        };
        let verify = match (self.mode, &roots) {
            (SslMode::VerifyFull, Some(_)) => Verify::Full,
            (_, Some(Roots::System)) => {
                return Err(format!(
                    "weak sslmode={} may not be used with sslrootcert=system (use verify-full)",
                    self.mode.word()
                ))
            }
            (SslMode::VerifyCa, Some(_)) => Verify::Ca,
            (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
                let default = dot.map_or_else(
                    || "~/.postgresql/root.crt".to_string(),
                    |d| d.join(DEFAULT_ROOT).display().to_string(),
                );
                return Err(format!(
                    "sslmode={} checks the server's certificate against a root certificate, and \
                     there is none: give sslrootcert=FILE (or sslrootcert=system for the system's \
                     CAs), put it in {default}, or use sslmode=require to skip the check",
                    self.mode.word()
                ));
            }
            (_, Some(_)) => Verify::Ca,
            (_, None) => Verify::None,
        };
        let cert = match &self.cert {
            Some(p) => Some(must_exist("sslcert", p)?),
            None => dot.as_ref().and_then(|d| existing(d.join(DEFAULT_CERT))),
        };
        let client = match cert {
            None => None,
            Some(cert) => {
                let key = match &self.key {
                    Some(p) => must_exist("sslkey", p)?,
                    None => dot
                        .as_ref()
                        .and_then(|d| existing(d.join(DEFAULT_KEY)))
                        .ok_or_else(|| {
                            format!("sslcert={} has no key: give sslkey=FILE", cert.display())
                        })?,
                };
                Some(ClientCert { cert, key })
            }
        };
        Ok(TlsPlan {
            mode: self.mode,
            files: TlsFiles {
                verify,
                roots,
                client,
            },
            key_password: self.key_password.clone(),
            sni: self.sni,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_ok(url: &str) -> (String, PgTls) {
        split(url).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    #[test]
    fn url_form_keeps_other_parameters_and_decodes_tls_ones() {
        let (rest, tls) = split_ok(
            "postgres://u:p@h:5/db?options=-c%20search_path%3Dx&sslmode=verify-full\
             &sslrootcert=%2Ftmp%2Fmy%20ca.crt&application_name=a&sslcert=c.crt&sslkey=c.key&sslsni=0",
        );
        assert_eq!(
            rest,
            "postgres://u:p@h:5/db?options=-c%20search_path%3Dx&application_name=a"
        );
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.root_cert.as_deref(), Some("/tmp/my ca.crt"));
        assert_eq!(tls.cert, Some(PathBuf::from("c.crt")));
        assert_eq!(tls.key, Some(PathBuf::from("c.key")));
        assert!(!tls.sni);
        let (rest, tls) = split_ok("postgresql://h/db?sslmode=require");
        assert_eq!(
            (rest.as_str(), tls.mode),
            ("postgresql://h/db", SslMode::Require)
        );
        let (rest, tls) = split_ok("postgres://h/db");
        assert_eq!(
            (rest.as_str(), tls.mode, tls.sni),
            ("postgres://h/db", SslMode::Prefer, true)
        );
    }

    #[test]
    fn keyword_form_keeps_quoting_of_the_other_pairs() {
        let (rest, tls) = split_ok(
            r"host=h  password='a b\'c' sslmode = verify-ca sslrootcert='/x/ca dir/ca.crt' dbname=d\ e",
        );
        assert_eq!(rest, r"host=h password='a b\'c' dbname=d\ e");
        assert_eq!(tls.mode, SslMode::VerifyCa);
        assert_eq!(tls.root_cert.as_deref(), Some("/x/ca dir/ca.crt"));
        // What is kept reads back as tokio-postgres reads the original.
        let config: tokio_postgres::Config = rest.parse().unwrap();
        assert_eq!(config.get_password(), Some(&b"a b'c"[..]));
        assert_eq!(config.get_dbname(), Some("d e"));
    }

    #[test]
    fn bad_values_say_what_is_expected() {
        let e = split("postgres://h/db?sslmode=strict").unwrap_err();
        assert_eq!(
            e,
            "sslmode=strict: expected disable, allow, prefer, require, verify-ca or verify-full"
        );
        assert_eq!(
            split("postgres://h/db?sslsni=yes").unwrap_err(),
            "sslsni=yes: expected 0 or 1"
        );
        assert_eq!(
            split("host=h sslrootcert='/x").unwrap_err(),
            "the quoted value of `sslrootcert` has no closing quote"
        );
        assert_eq!(
            split("host=h dbname").unwrap_err(),
            "`dbname` has no `=value`"
        );
    }

    /// A home folder with `.postgresql/` holding the given files (empty files: only their
    /// presence matters to the plan); removed when the test ends, passed or not.
    fn home(label: &str, files: &[&str]) -> remodel_testdb::ScratchDir {
        let dir = remodel_testdb::ScratchDir::new(&format!("conn-{label}")).unwrap();
        std::fs::create_dir_all(dir.join(".postgresql")).unwrap();
        for f in files {
            std::fs::write(dir.join(".postgresql").join(f), "").unwrap();
        }
        dir
    }

    fn plan(url: &str, home: &Path) -> Result<TlsPlan, String> {
        split(url)?.1.plan(Some(home))
    }

    #[test]
    fn modes_check_as_libpq_does() {
        let bare = home("bare", &[]);
        let full = home("full", &["root.crt", "postgresql.crt", "postgresql.key"]);
        let v = |url: &str, h: &Path| plan(url, h).unwrap().files.verify;
        // No root certificate: encrypted, unchecked.
        assert_eq!(v("postgres://h/db?sslmode=require", &bare), Verify::None);
        assert_eq!(v("postgres://h/db", &bare), Verify::None);
        // A root certificate (named, or the default one) turns on the CA check.
        assert_eq!(v("postgres://h/db?sslmode=require", &full), Verify::Ca);
        assert_eq!(v("postgres://h/db?sslmode=prefer", &full), Verify::Ca);
        assert_eq!(v("postgres://h/db?sslmode=verify-ca", &full), Verify::Ca);
        assert_eq!(
            v("postgres://h/db?sslmode=verify-full", &full),
            Verify::Full
        );
        let root = full.join(".postgresql/root.crt");
        let named = format!(
            "postgres://h/db?sslmode=verify-full&sslrootcert={}",
            root.display()
        );
        let p = plan(&named, &bare).unwrap();
        assert_eq!(p.files.roots, Some(Roots::File(root.clone())));
        assert_eq!(
            p.to_string(),
            format!("sslmode=verify-full, sslrootcert={}", root.display())
        );
        // The default client certificate and key are used when both exist.
        let p = plan("postgres://h/db?sslmode=require", &full).unwrap();
        assert_eq!(
            p.files.client.map(|c| c.key),
            Some(full.join(".postgresql/postgresql.key"))
        );
        assert_eq!(
            plan("postgres://h/db?sslmode=require", &bare)
                .unwrap()
                .files
                .client,
            None
        );
    }

    #[test]
    fn missing_files_are_errors_that_say_what_to_do() {
        let bare = home("missing", &[]);
        let e = plan("postgres://h/db?sslmode=verify-full", &bare).unwrap_err();
        assert!(
            e.starts_with("sslmode=verify-full checks the server's certificate"),
            "{e}"
        );
        assert!(
            e.contains("sslrootcert=FILE") && e.contains(".postgresql/root.crt"),
            "{e}"
        );
        let e = plan("postgres://h/db?sslrootcert=/nonexistent/ca.crt", &bare).unwrap_err();
        assert_eq!(e, "sslrootcert=/nonexistent/ca.crt: no such file");
        let cert = bare.join(".postgresql/c.crt");
        std::fs::write(&cert, "").unwrap();
        let e = plan(&format!("host=h sslcert={}", cert.display()), &bare).unwrap_err();
        assert_eq!(
            e,
            format!("sslcert={} has no key: give sslkey=FILE", cert.display())
        );
        let e = plan("postgres://h/db?sslmode=require&sslrootcert=system", &bare).unwrap_err();
        assert_eq!(
            e,
            "weak sslmode=require may not be used with sslrootcert=system (use verify-full)"
        );
        let p = plan(
            "postgres://h/db?sslmode=verify-full&sslrootcert=system",
            &bare,
        )
        .unwrap();
        assert_eq!(p.files.roots, Some(Roots::System));
    }

    #[test]
    fn errors_never_repeat_the_string() {
        for url in [
            "postgres:/u:PW1@h/db",
            "u:PW2@h/db",
            "postgres//u:PW3@h",
            "pg://u:PW4@h/db",
            "host=h u:PW6@x",
            "postgres://h/db?sslpassword=%FF%PW7",
            "postgres://h/db?PW8",
            "host=h PW9=x",
        ] {
            let e = split(url).unwrap_err();
            assert!(!e.contains("PW"), "{url}: {e}");
        }
        assert_eq!(
            split("pg://u:PW4@h/db").unwrap_err(),
            "a URL of scheme `pg`: expected postgres:// or postgresql://"
        );
        assert_eq!(
            split("u:PW2@h/db").unwrap_err(),
            "word 1 is not key=value: expected postgres://user@host:port/db or key=value pairs (host=… dbname=…)"
        );
        assert_eq!(
            split("host=h dbname").unwrap_err(),
            "`dbname` has no `=value`"
        );
    }
}
