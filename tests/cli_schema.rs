//! End-to-end tests of `remodel schema`: the real binary on real inputs, its output and exit codes.

mod support;

use support::{remodel, root, text};

#[test]
fn rideshare_summary_exits_0() {
    let out = remodel(&["schema", "examples/rideshare/schema.sql"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("trips  7 columns  [examples/rideshare/schema.sql:16:1]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  foreign key  (driver_id) -> drivers (driver_id)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  index        trips_driver_started (driver_id, started_at DESC)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 tables, 15 columns, 3 foreign keys"),
        "{stdout}"
    );
    assert!(stdout.contains("CHECK constraint  23:5"), "{stdout}");
}

#[test]
fn json_prints_the_schema_model() {
    let out = remodel(&["schema", "--json", "examples/rideshare/schema.sql"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: remodel_model::Schema =
        serde_json::from_slice(&out.stdout).expect("stdout is a Schema in JSON");
    assert_eq!(schema.tables.len(), 3);
    assert_eq!(schema.foreign_keys().count(), 3);
}

#[test]
fn pagila_with_skipped_statements_exits_0() {
    // Notes (partitions folded in) are printed with --verbose only.
    let out = remodel(&["schema", "-v", "fixtures/corpora/pagila/pagila-schema.sql"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("16 tables, 94 columns"), "{stdout}");
    assert!(stdout.contains("19 foreign keys (+3 inferred)"), "{stdout}");
    assert!(stdout.contains("     106  ALTER … OWNER TO"), "{stdout}");
    assert!(text(&out.stderr)
        .contains("pagila-schema.sql:1897:1: note: `public.payment`: 55 partition(s) folded in (18 foreign-key declaration(s) on partitions, 3 kept on the parent as inferred"));
}

#[test]
fn parse_error_is_reported_with_location_and_the_rest_loads() {
    let out = remodel(&["schema", "fixtures/ddl/five-tables-third-bad.sql"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with("fixtures/ddl/five-tables-third-bad.sql:16:5: error: cannot parse CREATE TABLE: Expected:"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("4 tables, 9 columns"));
}

#[test]
fn missing_file_exits_2_with_one_line() {
    let out = remodel(&["schema", "no/such/schema.sql"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("remodel: error: cannot read no/such/schema.sql:"),
        "{stderr}"
    );
}

#[test]
fn no_table_exits_2() {
    for (file, why) in [
        ("fixtures/ddl/empty.sql", "no SQL statements found"),
        ("fixtures/ddl/garbage.bin", "not SQL text"),
        (
            "examples/rideshare/queries.sql",
            "remodel: error: no table found",
        ),
    ] {
        assert!(root().join(file).exists(), "{file}");
        let out = remodel(&["schema", file]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(why), "{file}: {stderr}");
        assert!(
            stderr
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("remodel: error: no table found in")),
            "{stderr}"
        );
    }
}
