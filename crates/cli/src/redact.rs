//! Passwords never reach output: every message the binary prints goes through [`redact`].
//!
//! Today the inputs are files, so a password can only arrive as text the user typed where a path
//! or name was expected (`--schema postgres://u:secret@host/db`) or inside an input; once
//! `backfill` and `verify` take connection URLs, their messages go through the same function.

use std::borrow::Cow;

/// What a hidden password is replaced with.
pub const MASK: &str = "***";

/// `text` with the password of every URL (`scheme://user:PASSWORD@host`), every `password=…`
/// of a libpq connection string and the value of `PGPASSWORD` (when set) replaced by [`MASK`].
pub fn redact(text: &str) -> Cow<'_, str> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_keywords_lose_their_passwords() {
        assert_eq!(
            redact(
                "cannot read postgres://app:s3cr%40t@db:5432/prod?sslmode=require: no such file"
            ),
            "cannot read postgres://app:***@db:5432/prod?sslmode=require: no such file"
        );
        assert_eq!(
            redact("host=db user=app password='a b' dbname=x PASSWORD=zz"),
            "host=db user=app password=*** dbname=x PASSWORD=***"
        );
        assert_eq!(
            redact("http://db?user=a&password=s3cret&x=1"),
            "http://db?user=a&password=***&x=1"
        );
        // Nothing to hide: the text is borrowed as it is.
        assert!(matches!(redact("q.sql:1:1: warning: x"), Cow::Borrowed(_)));
        assert_eq!(redact("cql://cassandra@h/ks"), "cql://cassandra@h/ks");
    }
}
