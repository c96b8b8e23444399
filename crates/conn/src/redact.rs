//! Passwords never reach output: a connection string for messages ([`redact_url`]) and any text
//! about to be printed ([`redact_text`]).
//!
//! Two nets for text: patterns (the password of every `scheme://user:PASSWORD@host` and
//! `password=…`), and the passwords of the connection strings on the command line and in the
//! environment that are not well formed ([`remember_command_line`]): found however the string is
//! mistyped (`postgres:/u:PW@h`, `u:PW@h/db`) and masked wherever they show up.

use crate::pgurl::{pairs, url_scheme};
use std::borrow::Cow;
use std::sync::Mutex;

/// What a hidden password is replaced with.
pub const MASK: &str = "***";

/// Passwords found on the command line and in the environment, longest first.
static REMEMBERED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Shorter candidates are not remembered: masking every `ab` would garble the output (the
/// patterns still mask them where they stand in a URL).
const MIN_REMEMBERED: usize = 3;

/// Remembers the passwords of every argument (the process's `args`) and of `REMODEL_SOURCE` and
/// `REMODEL_TARGET` that are not well-formed connection strings, and `PGPASSWORD`, for
/// [`redact_text`] to mask. A well-formed URL's password is left to the patterns: masking a password
/// such as `remodel` wherever the word shows would garble every message.
pub fn remember_command_line(args: impl IntoIterator<Item = String>) {
    let mut found = Vec::new();
    let values = args
        .into_iter()
        // `--source=URL` as well as `--source URL`.
        .map(
            |arg| match arg.strip_prefix("--").and_then(|a| a.split_once('=')) {
                Some((_, v)) => v.to_string(),
                None => arg,
            },
        )
        .chain(
            ["REMODEL_SOURCE", "REMODEL_TARGET"]
                .into_iter()
                .filter_map(|v| std::env::var(v).ok()),
        );
    for value in values {
        let candidates = passwords_in(&value);
        if !candidates.is_empty() && !well_formed(&value) {
            found.extend(candidates);
        }
    }
    found.extend(std::env::var("PGPASSWORD").ok());
    let mut remembered = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
    for pw in found {
        let decoded = percent_decode(&pw);
        for s in [pw, decoded] {
            if s.len() >= MIN_REMEMBERED && !remembered.contains(&s) {
                remembered.push(s);
            }
        }
    }
    remembered.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// A Postgres connection string the connection code reads (whose messages then show it
/// redacted by that code).
fn well_formed(value: &str) -> bool {
    crate::pg::check(value).is_ok()
}

/// The passwords a connection string holds, however malformed: the user info's (between the
/// first `:` after an optional scheme and the last `@`), and every `password=` value.
pub fn passwords_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(at) = text.rfind('@') {
        let userinfo = strip_scheme(&text[..at]);
        if let Some((_, pw)) = userinfo.split_once(':') {
            if !pw.is_empty() {
                out.push(pw.to_string());
            }
        }
    }
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find("password=") {
        let value = from + p + "password=".len();
        let (start, end) = value_span(text, value);
        if end > start {
            out.push(text[start..end].to_string());
        }
        from = end.max(value);
    }
    out
}

/// `userinfo` without a leading scheme, however it is spelled (`postgres://`, `postgres:/`,
/// `pg//`, `//`).
fn strip_scheme(userinfo: &str) -> &str {
    let end = userinfo
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .unwrap_or(0);
    let rest = &userinfo[end..];
    let rest = match rest.strip_prefix(':') {
        Some(r) if r.starts_with('/') => r,
        _ if rest.starts_with('/') => rest,
        _ => return userinfo,
    };
    rest.trim_start_matches('/')
}

/// The bytes of a `password=` value starting at `value`: quoted (`'a b'`, without the quotes)
/// or up to white space, `&`, `;` or `,`.
fn value_span(text: &str, value: usize) -> (usize, usize) {
    if text[value..].starts_with('\'') {
        let end = text[value + 1..]
            .find('\'')
            .map_or(text.len(), |q| value + 1 + q);
        return (value + 1, end);
    }
    let end = text[value..]
        .find(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | ','))
        .map_or(text.len(), |q| value + q);
    (value, end)
}

/// `%41` → `A`; bytes that do not decode stay as they are.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with the password of every URL (`scheme://user:PASSWORD@host`), every `password=…`
/// of a libpq connection string, every remembered password ([`remember_command_line`]) and the
/// value of `PGPASSWORD` (when set) replaced by [`MASK`].
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let remembered = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
    redact_with(text, &remembered)
}

/// [`redact_text`] with `remembered` as the passwords to mask wherever they are.
fn redact_with<'a>(text: &'a str, remembered: &[String]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for pw in remembered {
        if out.contains(pw.as_str()) {
            out = Cow::Owned(out.replace(pw.as_str(), MASK));
        }
    }
    if out.contains("://") {
        out = Cow::Owned(url_passwords(&out));
    }
    if out.to_ascii_lowercase().contains("password=") {
        out = Cow::Owned(keyword_passwords(&out));
    }
    // Read at each call: a library user (testdb) never calls `remember_command_line`.
    if let Ok(pw) = std::env::var("PGPASSWORD") {
        if pw.len() >= MIN_REMEMBERED && out.contains(&pw) {
            out = Cow::Owned(out.replace(&pw, MASK));
        }
    }
    out
}

/// Masks the `:PASSWORD` of `scheme://user:PASSWORD@` authorities.
fn url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the first `/`, `?`, `#` or white space; its password is between
        // the first `:` and the last `@` of the userinfo.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(a), Some(c)) if c < a => {
                out.push_str(&authority[..=c]);
                out.push_str(MASK);
                out.push_str(&authority[a..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Masks the value of `password=…` (libpq keyword/value strings, query parameters).
fn keyword_passwords(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(p) = lower[from..].find("password=") {
        let value = from + p + "password=".len();
        out.push_str(&text[from..value]);
        let quoted = text[value..].starts_with('\'');
        let end = if quoted {
            text[value + 1..]
                .find('\'')
                .map_or(text.len(), |q| value + q + 2)
        } else {
            text[value..]
                .find(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | ','))
                .map_or(text.len(), |q| value + q)
        };
        out.push_str(MASK);
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`; `password=…` and
/// `sslpassword=…` pairs dropped, in both forms. A string that is neither (`postgres:/u:pw@h`,
/// `u:pw@h/db`, an unterminated quote) keeps only what cannot be its password: everything up to
/// the last `@` is masked, and nothing from a `password` keyword on is shown.
pub fn redact_url(url: &str) -> String {
    if let Some(scheme) = url_scheme(url) {
        return redact_url_form(scheme, &url[scheme.len() + 3..]);
    }
    match pairs(url) {
        Ok(pairs) => pairs
            .iter()
            .filter(|p| !secret_key(p.key))
            .map(|p| format!("{}={}", p.key, p.raw))
            .collect::<Vec<_>>()
            .join(" "),
        Err(_) => redact_unreadable(url),
    }
}

/// `password`, `sslpassword`, and any spelling of them a server would refuse (`Password`).
fn secret_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("password")
}

/// The URL form: the user info's password dropped, and the secret query parameters.
fn redact_url_form(scheme: &str, rest: &str) -> String {
    // The last `@` ends the user info whatever the password holds (`/`, `?`, `@`): an `@` later
    // in the URL hides more than the password, never less.
    let (user, host) = match rest.rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or_default();
            // URL punctuation: the `@` was not the user info's, and what precedes it is hidden.
            let user = if user.contains(['/', '?', '&', '=', '#']) {
                "***"
            } else {
                user
            };
            (Some(user), &rest[at + 1..])
        }
        None => (None, rest),
    };
    let (main, query) = match host.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (host, None),
    };
    let query: Vec<&str> = query
        .unwrap_or_default()
        .split('&')
        .filter(|kv| {
            let key = kv.split('=').next().unwrap_or_default();
            let key = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
            !kv.is_empty() && !secret_key(&key)
        })
        .collect();
    let mut out = format!("{scheme}://");
    if let Some(user) = user {
        out.push_str(user);
        out.push('@');
    }
    out.push_str(main);
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query.join("&"));
    }
    out
}

/// Neither a URL nor `key=value` pairs: a scheme-like prefix (`postgres:/`) and what follows the
/// last `@` are kept, nothing before that `@` nor from a `password` keyword on.
fn redact_unreadable(text: &str) -> String {
    let mut out = match text.rfind('@') {
        Some(at) => {
            let scheme = scheme_prefix(text);
            format!("{scheme}***@{}", &text[at + 1..])
        }
        None => text.to_string(),
    };
    if let Some(p) = out.to_ascii_lowercase().find("password") {
        // From the start of the word (`sslpassword=`, `?password=`) on.
        let word = out[..p]
            .rfind(|c: char| c.is_whitespace() || matches!(c, '?' | '&'))
            .unwrap_or(0);
        out.truncate(word);
    }
    one_line(&out)
}

/// `text` on one line: runs of whitespace (driver messages span several lines) as one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `postgres:/`, `postgres//` or `pg://` at the start of `text`: a scheme, however mistyped.
fn scheme_prefix(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .unwrap_or(0);
    if end == 0 || !text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return "";
    }
    ["://", ":/", "//"]
        .iter()
        .find(|sep| text[end..].starts_with(*sep))
        .map_or("", |sep| &text[..end + sep.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_keywords_lose_their_passwords() {
        assert_eq!(
            redact_text(
                "cannot read postgres://app:s3cr%40t@db:5432/prod?sslmode=require: no such file"
            ),
            "cannot read postgres://app:***@db:5432/prod?sslmode=require: no such file"
        );
        assert_eq!(
            redact_text("host=db user=app password='a b' dbname=x PASSWORD=zz"),
            "host=db user=app password=*** dbname=x PASSWORD=***"
        );
        assert_eq!(
            redact_text("http://db?user=a&password=s3cret&x=1"),
            "http://db?user=a&password=***&x=1"
        );
        // Nothing to hide: the text is borrowed as it is.
        assert!(matches!(
            redact_text("q.sql:1:1: warning: x"),
            Cow::Borrowed(_)
        ));
        assert_eq!(redact_text("cql://cassandra@h/ks"), "cql://cassandra@h/ks");
    }

    #[test]
    fn redaction_drops_every_password() {
        assert_eq!(
            redact_url("postgres://app:s3cr%40t@db:5432/prod?sslmode=disable"),
            "postgres://app@db:5432/prod?sslmode=disable"
        );
        assert_eq!(
            redact_url("postgresql://db/prod?password=x&user=app&sslpassword=y"),
            "postgresql://db/prod?user=app"
        );
        assert_eq!(
            redact_url("host=db password='x y' user=app sslpassword=z"),
            "host=db user=app"
        );
        assert_eq!(redact_url("host=db password='x y"), "host=db");
        assert_eq!(redact_url("postgres://u:a/b@c@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact_url("postgres://u:pa?ss@h/db?password=x"),
            "postgres://u@h/db"
        );
    }

    #[test]
    fn malformed_strings_keep_no_password() {
        for (url, shown) in [
            ("postgres:/u:PW1@h/db", "postgres:/***@h/db"),
            ("u:PW2@h/db", "***@h/db"),
            ("postgres//u:PW3@h", "postgres//***@h"),
            ("pg://u:PW4@h/db", "pg://u@h/db"),
            ("postgresql://u:PW5@[bad/db", "postgresql://u@[bad/db"),
            ("host=h password=PW6 dbname", "host=h"),
            ("host=h sslpassword=PW6 dbname", "host=h"),
            ("host=h Password=PW6", "host=h"),
            ("cql://u:PW7@127.0.0.1:9042", "cql://u@127.0.0.1:9042"),
            ("u:PW8@h:9042", "***@h:9042"),
            ("x y=1 postgres://u:PW9@h", "***@h"),
            (
                "postgres://h/db?Password=PW10&sslpassword=PW10",
                "postgres://h/db",
            ),
            ("postgres://h/db?x=a@b", "postgres://***@b"),
        ] {
            let r = redact_url(url);
            assert_eq!(r, shown, "{url}");
        }
    }

    #[test]
    fn passwords_are_found_in_malformed_strings() {
        for (text, pw) in [
            ("postgres:/u:PW1@h/db", "PW1"),
            ("u:PW2@h/db", "PW2"),
            ("postgres//u:PW3@h", "PW3"),
            ("pg://u:PW4@h/db", "PW4"),
            ("postgresql://u:PW5@[bad/db", "PW5"),
            ("cql://u:PW7@127.0.0.1:9042", "PW7"),
            ("postgres://u:a/b@c@h/db", "a/b@c"),
        ] {
            assert_eq!(passwords_in(text), vec![pw.to_string()], "{text}");
        }
        assert_eq!(
            passwords_in("host=h password='P W6' sslpassword=K8&x=1"),
            vec!["P W6".to_string(), "K8".to_string()]
        );
        assert!(passwords_in("postgres://u@h/db").is_empty());
        assert!(passwords_in("examples/rideshare").is_empty());
    }

    #[test]
    fn remembered_passwords_are_masked_wherever_they_show() {
        let remembered = vec!["PW1-long".to_string(), "S3cret".to_string()];
        assert_eq!(
            redact_with(
                "`postgres:/u:PW1-long@h/db` has no =value; S3cret",
                &remembered
            ),
            "`postgres:/u:***@h/db` has no =value; ***"
        );
        assert_eq!(percent_decode("%53%33cr%zz"), "S3cr%zz");
    }
}
