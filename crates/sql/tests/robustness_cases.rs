//! The front-end cases of `fixtures/robustness/` (issue 14, copied from the shared robustness
//! cases): each input is read and its summary compared with `expected-<case>.txt` next to it
//! (`UPDATE_EXPECT=1 cargo test -p remodel-sql --test robustness_cases` rewrites them).

use expect_test::expect_file;
use remodel_sql::ddl::load_files;
use remodel_sql::normalize::shape;
use remodel_sql::workload::{read_files, Format, WorkloadLoad};
use std::fmt::Write;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/robustness")
}

/// Patterns (calls, share, SQL, example) and every diagnostic, with paths relative to the folder.
fn workload_summary(load: &WorkloadLoad) -> String {
    let prefix = format!("{}/", dir().display());
    let w = &load.workload;
    let total = w.total_calls_wide();
    let mut out = String::new();
    for s in &w.sources {
        let file = s.file.replace(&prefix, "");
        writeln!(
            out,
            "source {file} as {}: {} statements",
            s.format, s.statements
        )
        .unwrap();
    }
    writeln!(out, "total calls {total}").unwrap();
    for p in &w.patterns {
        let share = p.calls as f64 * 100.0 / total as f64;
        writeln!(
            out,
            "{} calls={} share={share:.1}% {}",
            p.id, p.calls, p.sql
        )
        .unwrap();
        if let Some(e) = &p.example {
            writeln!(out, "   example: {e}").unwrap();
        }
    }
    for d in &load.diagnostics {
        writeln!(out, "{}", d.to_string().replace(&prefix, "")).unwrap();
    }
    out
}

fn read(files: &[&str]) -> WorkloadLoad {
    let paths: Vec<PathBuf> = files.iter().map(|f| dir().join(f)).collect();
    read_files(&paths, Format::Auto).expect("readable")
}

#[test]
fn byte_order_marks_are_skipped() {
    // The BOM hid the first `-- calls: 5`, and made the pg_stat_statements export a csvlog.
    let sql = read(&["bom_calls.sql"]);
    let calls: Vec<u64> = sql.workload.patterns.iter().map(|p| p.calls).collect();
    assert_eq!(calls, vec![9, 5]);
    let pgss = read(&["bom_pgss.csv"]);
    assert_eq!(pgss.workload.sources[0].format, "pgss");
    let text = workload_summary(&sql) + &workload_summary(&pgss);
    expect_file!["../../../fixtures/robustness/expected-bom.txt"].assert_eq(&text);
}

#[test]
fn calls_that_overflow_or_are_malformed_are_stated() {
    let over = read(&["calls_overflow.sql"]);
    assert!(over.workload.total_calls_wide() > u128::from(u64::MAX));
    let bad = read(&["calls_malformed.sql"]);
    // -5, 1e9 and the too-large count each get a warning at their line; none is silently 1.
    let lines: Vec<u32> = bad
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("-- calls:"))
        .filter_map(|d| d.location.as_ref().map(|l| l.line))
        .collect();
    assert_eq!(lines, vec![1, 3, 5]);
    let text = workload_summary(&over) + &workload_summary(&bad);
    expect_file!["../../../fixtures/robustness/expected-calls.txt"].assert_eq(&text);
}

#[test]
fn escaped_strings_never_change_the_example() {
    let load = read(&["estr_limit_queries.sql", "estr_noparse_queries.sql"]);
    for p in &load.workload.patterns {
        let example = p.example.as_deref().expect("every pattern has an example");
        // The example is an instance of the pattern: same shape, so the same LIMIT and WHERE.
        let again = shape(example).expect("the example parses");
        assert_eq!(again.sql, p.sql, "{example}");
    }
    expect_file!["../../../fixtures/robustness/expected-estr.txt"]
        .assert_eq(&workload_summary(&load));
}

#[test]
fn alter_table_history_is_applied_in_file_order() {
    let load = load_files(&[dir().join("mig1.sql"), dir().join("mig2.sql")]).expect("readable");
    let mut out = String::new();
    for t in &load.schema.tables {
        writeln!(out, "table {} primary key {:?}", t.name, t.primary_key).unwrap();
        for c in &t.columns {
            writeln!(out, "  {} {}", c.name, c.sql_type).unwrap();
        }
    }
    let prefix = format!("{}/", dir().display());
    for d in &load.diagnostics {
        writeln!(out, "{}", d.to_string().replace(&prefix, "")).unwrap();
    }
    assert!(load.schema.table("accounts").is_none());
    expect_file!["../../../fixtures/robustness/expected-mig.txt"].assert_eq(&out);
}
