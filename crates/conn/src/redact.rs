//! Passwords never reach output: a connection string for messages ([`redact_url`]) and any text
//! about to be printed ([`redact_text`]).

use crate::pgurl::pairs;
use std::borrow::Cow;

/// What a hidden password is replaced with.
pub const MASK: &str = "***";

/// `text` with the password of every URL (`scheme://user:PASSWORD@host`), every `password=…`
/// of a libpq connection string and the value of `PGPASSWORD` (when set) replaced by [`MASK`].
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    if text.contains("://") {
        out = Cow::Owned(url_passwords(&out));
    }
    if out.to_ascii_lowercase().contains("password=") {
        out = Cow::Owned(keyword_passwords(&out));
    }
    if let Ok(pw) = std::env::var("PGPASSWORD") {
        if pw.len() >= 3 && out.contains(&pw) {
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
/// `sslpassword=…` pairs dropped, in both forms.
pub fn redact_url(url: &str) -> String {
    let secret = |kv: &str| kv.starts_with("password=") || kv.starts_with("sslpassword=");
    if let Some((scheme, rest)) = url.split_once("://") {
        let (main, query) = match rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (rest, None),
        };
        // The last `@` ends the user info, whatever the password holds.
        let main = match main.rfind('@') {
            Some(at) => format!(
                "{}@{}",
                main[..at].split(':').next().unwrap_or_default(),
                &main[at + 1..]
            ),
            None => main.to_string(),
        };
        let query: Vec<&str> = query
            .unwrap_or_default()
            .split('&')
            .filter(|kv| !kv.is_empty() && !secret(kv))
            .collect();
        if query.is_empty() {
            return format!("{scheme}://{main}");
        }
        return format!("{scheme}://{main}?{}", query.join("&"));
    }
    match pairs(url) {
        Ok(pairs) => pairs
            .iter()
            .filter(|p| p.key != "password" && p.key != "sslpassword")
            .map(|p| format!("{}={}", p.key, p.raw))
            .collect::<Vec<_>>()
            .join(" "),
        // Unreadable: what comes before the first secret (a quoted one may hold spaces).
        Err(_) => url
            .split_whitespace()
            .take_while(|kv| !secret(kv))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

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
}
