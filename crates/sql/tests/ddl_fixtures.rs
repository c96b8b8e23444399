//! Data-driven DDL cases: each `fixtures/ddl/<case>/schema.sql` is loaded and the result (the
//! `Schema` as JSON, then the diagnostics) is compared with `fixtures/ddl/<case>/expected.txt`.
//! `UPDATE_EXPECT=1 cargo test -p remodel-sql --test ddl_fixtures` rewrites the expectations, so
//! a change in what the loader produces shows up as a reviewable diff.

use expect_test::expect_file;
use remodel_sql::ddl::load_str;
use std::path::Path;

#[test]
fn ddl_fixture_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ddl");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures/ddl exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("schema.sql").is_file())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no fixture case found");
    for case in cases {
        let text = std::fs::read_to_string(case.join("schema.sql")).expect("schema.sql is UTF-8");
        // A fixed file name keeps the expectations independent of where the repository lives.
        let load = load_str("schema.sql", &text);
        let mut actual = serde_json::to_string_pretty(&load.schema).expect("the schema serializes");
        actual.push_str("\n\n-- diagnostics\n");
        for d in &load.diagnostics {
            actual.push_str(&format!("{d}\n"));
        }
        actual.push_str(&format!("-- {} statements read\n", load.statements));
        expect_file![case.join("expected.txt")].assert_eq(&actual);
    }
}
