//! PostgreSQL key words that cannot stand as a bare column name: the front end prints them in
//! capitals, the designer quotes identifiers that collide with them.

/// PostgreSQL's reserved key words and those reserved except as function or type names
/// (PostgreSQL 17, Appendix C), lower case and sorted.
pub const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "binary",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "group",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "intersect",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "natural",
    "not",
    "notnull",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "overlaps",
    "placing",
    "primary",
    "references",
    "returning",
    "right",
    "select",
    "session_user",
    "similar",
    "some",
    "symmetric",
    "system_user",
    "table",
    "tablesample",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
];

/// True when `word` (any case) is a key word PostgreSQL does not accept as a bare column name.
pub fn is_reserved(word: &str) -> bool {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        RESERVED
            .binary_search(&word.to_ascii_lowercase().as_str())
            .is_ok()
    } else {
        RESERVED.binary_search(&word).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_lower_case() {
        let mut sorted = RESERVED.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, RESERVED);
        assert!(RESERVED
            .iter()
            .all(|w| !w.bytes().any(|b| b.is_ascii_uppercase())));
    }

    #[test]
    fn reserved_words() {
        assert!(is_reserved("user"));
        assert!(is_reserved("Window"));
        assert!(is_reserved("left"));
        assert!(!is_reserved("between"));
        assert!(!is_reserved("trip_id"));
    }
}
