//! Damaged inputs: garbage lines, truncated statements, invalid UTF-8, statements sqlparser does
//! not understand. Each is counted by reason with its location, the run goes on, nothing panics.
//! The summary is compared with `fixtures/workload/damaged-log/expected.txt`
//! (`UPDATE_EXPECT=1 cargo test -p remodel-sql --test workload_damaged` rewrites it).

use expect_test::expect_file;
use remodel_sql::normalize::shape;
use remodel_sql::workload::{read_files, read_str, Format};
use std::fmt::Write;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/workload/damaged-log")
}

#[test]
fn damaged_log_is_counted_and_reported() {
    let dir = fixture();
    let load = read_files(&[dir.join("input.log")], Format::Auto).expect("readable");
    let prefix = format!("{}/", dir.display());
    let mut out = String::new();
    let w = &load.workload;
    for s in &w.sources {
        writeln!(
            out,
            "source {} as {}: {} statements",
            s.file.replace(&prefix, ""),
            s.format,
            s.statements
        )
        .unwrap();
    }
    for p in &w.patterns {
        writeln!(out, "{} {:?} calls={} {}", p.id, p.kind, p.calls, p.sql).unwrap();
        writeln!(out, "   example: {}", p.example.as_deref().unwrap_or("-")).unwrap();
    }
    for s in &w.skipped {
        let locs: Vec<String> = s
            .first
            .iter()
            .map(|l| l.to_string().replace(&prefix, ""))
            .collect();
        writeln!(
            out,
            "skipped {} × {} at {}",
            s.count,
            s.kind,
            locs.join(", ")
        )
        .unwrap();
    }
    for d in &load.diagnostics {
        writeln!(out, "{}", d.to_string().replace(&prefix, "")).unwrap();
    }
    expect_file!["../../../fixtures/workload/damaged-log/expected.txt"].assert_eq(&out);
}

#[test]
fn any_text_in_any_format_gives_a_consistent_load() {
    let samples = [
        "",
        "\u{0}\u{1}",
        "LOG:  statement: ",
        "x LOG:  execute : \n\tDETAIL:  parameters: $1 = '",
        "x DETAIL:  parameters: $0 = NULL, $99999999999 = 'a'",
        "{\"record\":{\"error_severity\":\"LOG\",\"message\":\"statement: SELECT (\"}}",
        "query,calls\n\"SELECT 1\",notanumber\n\"SELECT $1\",3\n",
        "\"2025-01-01 00:00:00 UTC\",,,,,,,,,,,LOG,,\"statement: SELECT 'x\",",
        "-- calls: 99999999999999999999999\nSELECT 1;\n-- calls: 2\nSELECT (",
        "$$ unterminated dollar",
        "SELECT 1; SELECT 2; ;;; \\meta",
        // Undamaged, so that some patterns are checked too.
        "SELECT a FROM t WHERE b = 1;\nSELECT a FROM t WHERE b = 22;\n",
        "2025-01-01 00:00:00 UTC [1] LOG:  statement: SELECT a FROM t WHERE b = 3\n",
    ];
    let (mut checked, mut patterns) = (0, 0);
    for s in samples {
        for f in [
            Format::Auto,
            Format::Sql,
            Format::PgLog,
            Format::Csvlog,
            Format::Jsonlog,
            Format::Pgss,
        ] {
            let load = read_str("sample", s, f);
            let w = &load.workload;
            // The input is named, each pattern is a statement in canonical form seen at least
            // once, and every location points inside the input.
            assert_eq!(
                w.sources
                    .iter()
                    .map(|src| src.file.as_str())
                    .collect::<Vec<_>>(),
                ["sample"],
                "{f:?} {s:?}"
            );
            for p in &w.patterns {
                assert!(p.calls >= 1, "{f:?} {s:?}: {p:?}");
                let canonical = shape(&p.sql).map(|c| c.sql);
                assert_eq!(canonical.as_deref(), Ok(p.sql.as_str()), "{f:?} {s:?}");
                patterns += 1;
            }
            let lines = s.lines().count().max(1) as u32;
            for d in &load.diagnostics {
                if let Some(loc) = &d.location {
                    assert!(
                        loc.file == "sample" && loc.line >= 1 && loc.line <= lines + 1,
                        "{f:?} {s:?}: {d}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * samples.len());
    assert!(patterns >= 2, "only {patterns} patterns checked");
}
