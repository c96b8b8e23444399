//! Deciding from a statement's leading keywords whether the loader models it, and if not, what
//! kind it is (for the skipped-by-kind report).
//!
//! Only the statements that shape the schema are parsed; everything else (function bodies, views,
//! `INSERT` data, grants, …) is counted by kind without being parsed. That keeps loading fast on
//! data-heavy dumps and stops unrelated grammar gaps in `sqlparser` (trigger and materialized-view
//! syntax, `ALTER DOMAIN … OWNER TO`) from turning into errors.

/// What the loader does with one SQL statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Class {
    /// `CREATE TABLE`.
    CreateTable,
    /// `CREATE [UNIQUE] INDEX`.
    CreateIndex,
    /// `CREATE TYPE` (enums are modelled; other representations are skipped after parsing).
    CreateType,
    /// `CREATE SEQUENCE`.
    CreateSequence,
    /// `CREATE DOMAIN` (its base type is what columns declared with it hold).
    CreateDomain,
    /// `ALTER TABLE`.
    AlterTable,
    /// `ALTER SEQUENCE` (only `OWNED BY` is modelled).
    AlterSequence,
    /// `COMMENT ON TABLE` / `COMMENT ON COLUMN`.
    Comment,
    /// `DROP TABLE`.
    DropTable,
    /// `ALTER <object> …`: skipped; the caller tells owner changes apart by their tokens.
    AlterOther(String),
    /// Not modelled: counted under this kind.
    Skip(String),
    /// The leading word is not an SQL statement keyword: parse it anyway for the parser's message.
    Unknown,
}

/// Keywords that start an SQL statement the loader never models (counted under the keyword).
const OTHER_STATEMENTS: &[&str] = &[
    "ABORT",
    "ANALYZE",
    "BEGIN",
    "CALL",
    "CHECKPOINT",
    "CLOSE",
    "CLUSTER",
    "COMMIT",
    "COPY",
    "DEALLOCATE",
    "DECLARE",
    "DELETE",
    "DISCARD",
    "DO",
    "END",
    "EXECUTE",
    "EXPLAIN",
    "FETCH",
    "GRANT",
    "INSERT",
    "LISTEN",
    "LOAD",
    "LOCK",
    "MERGE",
    "MOVE",
    "NOTIFY",
    "PREPARE",
    "REFRESH",
    "REINDEX",
    "RELEASE",
    "RESET",
    "REVOKE",
    "ROLLBACK",
    "SAVEPOINT",
    "SET",
    "SHOW",
    "TABLE",
    "TRUNCATE",
    "UNLISTEN",
    "UPDATE",
    "VACUUM",
    "VALUES",
    "WITH",
];

/// Statements named by two words.
const TWO_WORD_STATEMENTS: &[(&str, &str)] = &[
    ("START", "TRANSACTION"),
    ("SECURITY", "LABEL"),
    ("IMPORT", "FOREIGN"),
    ("REASSIGN", "OWNED"),
];

/// Words between `CREATE` and the object type that do not change what is created.
const CREATE_MODIFIERS: &[&str] = &[
    "OR",
    "REPLACE",
    "TEMP",
    "TEMPORARY",
    "UNLOGGED",
    "GLOBAL",
    "LOCAL",
    "UNIQUE",
    "CONSTRAINT",
    "TRUSTED",
    "PROCEDURAL",
    "RECURSIVE",
    "DEFAULT",
];

/// Object types written with two words (`MATERIALIZED VIEW`, …).
const TWO_WORD_OBJECTS: &[(&str, &str)] = &[
    ("MATERIALIZED", "VIEW"),
    ("FOREIGN", "TABLE"),
    ("FOREIGN", "DATA"),
    ("EVENT", "TRIGGER"),
    ("TEXT", "SEARCH"),
    ("ACCESS", "METHOD"),
    ("OPERATOR", "CLASS"),
    ("OPERATOR", "FAMILY"),
    ("USER", "MAPPING"),
    ("DEFAULT", "PRIVILEGES"),
    ("LARGE", "OBJECT"),
];

/// Classifies a statement (the splitter's trimmed text) by its leading keywords.
pub(crate) fn classify(text: &str) -> Class {
    let words = leading_words(text, 8);
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "CREATE" => {
            let mut i = 1;
            while CREATE_MODIFIERS.contains(&w(i)) {
                i += 1;
            }
            match w(i) {
                "TABLE" => Class::CreateTable,
                "INDEX" => Class::CreateIndex,
                "TYPE" => Class::CreateType,
                "SEQUENCE" => Class::CreateSequence,
                "DOMAIN" => Class::CreateDomain,
                _ => Class::Skip(format!("CREATE {}", object_type(&words, i))),
            }
        }
        "ALTER" => match w(1) {
            "TABLE" => Class::AlterTable,
            "SEQUENCE" => Class::AlterSequence,
            _ => Class::AlterOther(format!("ALTER {}", object_type(&words, 1))),
        },
        "COMMENT" if w(1) == "ON" => match w(2) {
            "TABLE" | "COLUMN" => Class::Comment,
            _ => Class::Skip(format!("COMMENT ON {}", object_type(&words, 2))),
        },
        "DROP" => match w(1) {
            "TABLE" => Class::DropTable,
            _ => Class::Skip(format!("DROP {}", object_type(&words, 1))),
        },
        "SELECT" => {
            // pg_dump's `SELECT pg_catalog.set_config('search_path', '', false)`.
            if text
                .get(..200.min(text.len()))
                .unwrap_or(text)
                .to_ascii_lowercase()
                .contains("set_config")
            {
                Class::Skip("SELECT set_config".into())
            } else {
                Class::Skip("SELECT".into())
            }
        }
        first => {
            if let Some((a, b)) = TWO_WORD_STATEMENTS
                .iter()
                .find(|(a, b)| *a == first && *b == w(1))
            {
                Class::Skip(format!("{a} {b}"))
            } else if OTHER_STATEMENTS.contains(&first) {
                Class::Skip(first.to_string())
            } else {
                Class::Unknown
            }
        }
    }
}

/// The object type starting at word `i` (one or two words); `?` when missing.
fn object_type(words: &[String], i: usize) -> String {
    let first = words.get(i).map(String::as_str).unwrap_or("?");
    let second = words.get(i + 1).map(String::as_str).unwrap_or("");
    if TWO_WORD_OBJECTS
        .iter()
        .any(|(a, b)| *a == first && *b == second)
    {
        format!("{first} {second}")
    } else {
        first.to_string()
    }
}

/// The first `max` bare words of `text`, upper-cased, skipping whitespace and comments; stops at
/// anything that is not a bare word (a quoted name, punctuation), so names never leak into kinds.
fn leading_words(text: &str, max: usize) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < max && i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            out.push(text[start..i].to_ascii_uppercase());
        } else {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modelled_statements() {
        assert_eq!(classify("CREATE TABLE t (a int)"), Class::CreateTable);
        assert_eq!(
            classify("create unlogged table t (a int)"),
            Class::CreateTable
        );
        assert_eq!(
            classify("CREATE UNIQUE INDEX i ON t (a)"),
            Class::CreateIndex
        );
        assert_eq!(
            classify("/* x */ CREATE TYPE e AS ENUM ('a')"),
            Class::CreateType
        );
        assert_eq!(
            classify("ALTER TABLE ONLY t ADD CONSTRAINT c PRIMARY KEY (a)"),
            Class::AlterTable
        );
        assert_eq!(
            classify("ALTER SEQUENCE s OWNED BY t.a"),
            Class::AlterSequence
        );
        assert_eq!(classify("COMMENT ON COLUMN t.a IS 'x'"), Class::Comment);
        assert_eq!(classify("DROP TABLE IF EXISTS t"), Class::DropTable);
    }

    #[test]
    fn skipped_kinds() {
        let kind = |s: &str| match classify(s) {
            Class::Skip(k) | Class::AlterOther(k) => k,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(
            kind("CREATE OR REPLACE FUNCTION f() RETURNS int AS $$ $$"),
            "CREATE FUNCTION"
        );
        assert_eq!(
            kind("CREATE MATERIALIZED VIEW v AS SELECT 1 WITH NO DATA"),
            "CREATE MATERIALIZED VIEW"
        );
        assert_eq!(
            kind("CREATE CONSTRAINT TRIGGER t AFTER INSERT ON x"),
            "CREATE TRIGGER"
        );
        assert_eq!(
            kind("SELECT pg_catalog.set_config('search_path', '', false)"),
            "SELECT set_config"
        );
        assert_eq!(kind("SET statement_timeout = 0"), "SET");
        assert_eq!(kind("INSERT INTO t VALUES (1)"), "INSERT");
        assert_eq!(kind("GRANT ALL ON t TO u"), "GRANT");
        assert_eq!(kind("ALTER TYPE public.e OWNER TO postgres"), "ALTER TYPE");
        assert_eq!(kind("ALTER INDEX i ATTACH PARTITION j"), "ALTER INDEX");
        assert_eq!(
            kind("COMMENT ON EXTENSION x IS 'y'"),
            "COMMENT ON EXTENSION"
        );
        assert_eq!(kind("DROP DATABASE IF EXISTS x"), "DROP DATABASE");
        assert_eq!(kind("START TRANSACTION"), "START TRANSACTION");
        assert_eq!(kind("CREATE \"odd\""), "CREATE ?");
    }

    #[test]
    fn unknown_first_word() {
        assert_eq!(classify("hello world"), Class::Unknown);
        assert_eq!(classify("\u{1}\u{2}"), Class::Unknown);
        assert_eq!(classify("(SELECT 1)"), Class::Unknown);
    }
}
