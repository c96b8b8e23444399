//! Key words of Postgres and CQL that a name cannot be written as bare: the designer quotes
//! identifiers that collide with them, the SQL front end prints them in capitals.

/// PostgreSQL's reserved key words and those reserved except as function or type names
/// (PostgreSQL 17, Appendix C), lower case and sorted.
pub const PG_RESERVED: &[&str] = &[
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
pub fn is_pg_reserved(word: &str) -> bool {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        PG_RESERVED
            .binary_search(&word.to_ascii_lowercase().as_str())
            .is_ok()
    } else {
        PG_RESERVED.binary_search(&word).is_ok()
    }
}

/// CQL's reserved key words (Cassandra 5's grammar, Appendix A of the CQL reference), lower case
/// and sorted: a bare identifier spelt as one of these is a syntax error.
pub const CQL_RESERVED: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "columnfamily",
    "create",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "limit",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "replace",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "truncate",
    "unlogged",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

/// CQL words that are not reserved but that the designer quotes all the same (non-reserved key
/// words, consistency levels, function names), so that no reader mistakes a column for them;
/// lower case and sorted.
pub const CQL_AVOIDED: &[&str] = &[
    "aggregate",
    "all",
    "any",
    "as",
    "between",
    "cast",
    "default",
    "each_quorum",
    "function",
    "keyspaces",
    "like",
    "local_one",
    "local_quorum",
    "materialized",
    "maxwritetime",
    "mbean",
    "mbeans",
    "one",
    "partition",
    "password",
    "per",
    "permission",
    "permissions",
    "quorum",
    "three",
    "ttl",
    "two",
    "unmask",
    "unset",
    "writetime",
];

/// True when the designer quotes `word` (exactly as written) as a CQL identifier: reserved, or
/// one of [`CQL_AVOIDED`].
pub fn is_cql_reserved(word: &str) -> bool {
    CQL_RESERVED.binary_search(&word).is_ok() || CQL_AVOIDED.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_lower_case() {
        for list in [PG_RESERVED, CQL_RESERVED, CQL_AVOIDED] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, list);
            assert!(list
                .iter()
                .all(|w| !w.bytes().any(|b| b.is_ascii_uppercase())));
        }
        assert!(CQL_AVOIDED.iter().all(|w| !CQL_RESERVED.contains(w)));
    }

    #[test]
    fn reserved_words() {
        assert!(is_pg_reserved("user"));
        assert!(is_pg_reserved("Window"));
        assert!(is_pg_reserved("left"));
        assert!(!is_pg_reserved("between"));
        assert!(!is_pg_reserved("trip_id"));
        assert!(is_cql_reserved("token"));
        assert!(is_cql_reserved("ttl"));
        assert!(is_cql_reserved("maxwritetime"));
        assert!(!is_cql_reserved("trip_id"));
        assert!(!is_cql_reserved("Token"));
    }
}
