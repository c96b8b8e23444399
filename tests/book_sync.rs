//! The book's sync chapter states each prerequisite sync checks with the command that sets it
//! and the one that reverts it (issue 37), in its table "Prerequisites, and how to revert them".

mod support;

/// The rows of the chapter's prerequisites table, as cells.
fn prerequisites(chapter: &str) -> Vec<Vec<String>> {
    let section = chapter
        .split("\n## Prerequisites, and how to revert them\n")
        .nth(1)
        .expect("the prerequisites section");
    section
        .lines()
        .skip_while(|l| !l.starts_with("| sync needs |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn each_prerequisite_has_the_command_that_sets_it_and_the_one_that_reverts_it() {
    let chapter = std::fs::read_to_string(support::root().join("book/src/sync.md"))
        .expect("book/src/sync.md");
    let rows = prerequisites(&chapter);
    // What sync's checks ask for (crates/sync/src/checks.rs), and how each is undone.
    let expected = [
        (
            "wal_level",
            "ALTER SYSTEM SET wal_level = logical;",
            "ALTER SYSTEM RESET wal_level;",
        ),
        (
            "REPLICATION",
            "ALTER ROLE app REPLICATION;",
            "ALTER ROLE app NOREPLICATION;",
        ),
        (
            "whole in the WAL",
            "ALTER TABLE trips REPLICA IDENTITY FULL;",
            "ALTER TABLE trips REPLICA IDENTITY DEFAULT;",
        ),
    ];
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for (row, (need, set, revert)) in rows.iter().zip(expected) {
        assert_eq!(row.len(), 4, "need, check, set, revert: {row:?}");
        assert!(row[0].contains(need), "{row:?}");
        assert!(row[2].contains(set), "set {need}: {row:?}");
        assert!(row[3].contains(revert), "revert {need}: {row:?}");
    }
}
