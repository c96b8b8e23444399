//! Names and string literals in Postgres and CQL text: the one place every stage folds an
//! identifier, quotes it or writes a string literal (design, backfill, catalog, replay, sql).

use crate::keywords::{is_cql_reserved, is_pg_reserved};

/// Postgres' longest identifier in bytes (`NAMEDATALEN - 1`): a longer name is cut, on a
/// character boundary, as Postgres cuts it (with a NOTICE) in DDL and queries alike.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// An identifier as a UTF-8 Postgres database stores it: an unquoted name folds its ASCII
/// letters to lower case (other letters keep their case: `CAFÉ` is `cafÉ`), a quoted one is
/// kept; both are cut to [`MAX_IDENTIFIER_BYTES`].
pub fn fold(value: &str, quoted: bool) -> String {
    let mut name = if quoted {
        value.to_string()
    } else {
        value.to_ascii_lowercase()
    };
    if name.len() > MAX_IDENTIFIER_BYTES {
        let mut cut = MAX_IDENTIFIER_BYTES;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

/// `ident` double-quoted with `"` doubled (`"a""b"`), whatever it holds: the same text in
/// Postgres and CQL, for statements built from names that are not checked first.
pub fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A Postgres identifier, double-quoted when it is not a plain lower-case word or is reserved.
pub fn pg_quote(ident: &str) -> String {
    quote_unless_plain(ident, true, is_pg_reserved(ident))
}

/// A CQL identifier, double-quoted when it is reserved, not lower case, or not a plain word.
pub fn cql_quote(ident: &str) -> String {
    quote_unless_plain(ident, false, is_cql_reserved(ident))
}

/// `ident` as is when it is a plain lower-case word (letters, digits, `_`; a leading `_` only
/// when `underscore_first`) and not `reserved`; otherwise [`quote`]d.
fn quote_unless_plain(ident: &str, underscore_first: bool, reserved: bool) -> String {
    let plain = ident
        .starts_with(|c: char| c.is_ascii_lowercase() || (underscore_first && c == '_'))
        && ident
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain && !reserved {
        ident.to_string()
    } else {
        quote(ident)
    }
}

/// `value` as a standard string literal, in Postgres and CQL alike: in single quotes, every `'`
/// doubled, nothing else escaped (backslashes are plain characters, as with
/// `standard_conforming_strings`).
pub fn literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_as_postgres() {
        assert_eq!(fold("Users", false), "users");
        assert_eq!(fold("Users", true), "Users");
        assert_eq!(fold("CAFÉ", false), "cafÉ");
        let long = "a".repeat(200);
        assert_eq!(fold(&long, true), "a".repeat(63));
        // 62 ASCII bytes and a two-byte letter: the letter does not fit whole and goes.
        let wide = format!("{}é", "b".repeat(62));
        assert_eq!(fold(&wide, false), "b".repeat(62));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("trips"), "\"trips\"");
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
        assert_eq!(cql_quote("trip_id"), "trip_id");
        assert_eq!(cql_quote("token"), "\"token\"");
        assert_eq!(cql_quote("Mixed"), "\"Mixed\"");
        assert_eq!(cql_quote("a\"b"), "\"a\"\"b\"");
        assert_eq!(pg_quote("user"), "\"user\"");
        assert_eq!(pg_quote("window"), "\"window\"");
        assert_eq!(pg_quote("Window"), "\"Window\"");
        assert_eq!(pg_quote("_x"), "_x");
        assert_eq!(cql_quote("_x"), "\"_x\"");
    }

    #[test]
    fn literals() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(r"a\b"), r"'a\b'");
        assert_eq!(literal(""), "''");
    }
}
