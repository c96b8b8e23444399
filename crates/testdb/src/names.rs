//! Unique, valid names for per-test schemas and keyspaces.

use std::sync::atomic::{AtomicU32, Ordering};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// `t_<label>_<pid>_<n>`: lower-case letters, digits and `_`, at most 48 bytes (Cassandra's
/// keyspace limit; Postgres allows 63). The pid and counter keep parallel tests and parallel
/// test binaries apart.
pub(crate) fn unique(label: &str) -> String {
    let mut clean: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    clean.truncate(24);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("t_{clean}_{}_{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_identifiers_and_distinct() {
        let a = unique("Smoke Test::with-dashes and a very long tail that goes on");
        let b = unique("Smoke Test::with-dashes and a very long tail that goes on");
        assert_ne!(a, b);
        for name in [&a, &b] {
            assert!(name.len() <= 48, "{name}");
            assert!(name.starts_with("t_"));
            assert!(name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        }
    }
}
