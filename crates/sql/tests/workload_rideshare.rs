//! The rideshare example's three workload captures: the hand-written `queries.sql`, the real
//! `pg_stat_statements.csv` export and the real server log (extended protocol with bound
//! parameters) give the same seven application patterns.

use remodel_model::{StatementKind, Workload};
use remodel_sql::normalize::StatementClass;
use remodel_sql::workload::{read_files, Format};
use std::path::PathBuf;

fn example(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/rideshare")
        .join(file)
}

fn load(file: &str) -> remodel_sql::workload::WorkloadLoad {
    read_files(&[example(file)], Format::Auto).expect("readable")
}

/// The seven patterns as (kind, calls), heaviest first.
fn kinds_and_calls(w: &Workload) -> Vec<(StatementKind, u64)> {
    w.patterns.iter().map(|p| (p.kind, p.calls)).collect()
}

/// Every normalized pattern and every example of `w` parses as PostgreSQL.
fn assert_patterns_parse(w: &Workload) {
    for p in &w.patterns {
        for text in [Some(p.sql.as_str()), p.example.as_deref()]
            .into_iter()
            .flatten()
        {
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, text)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
        }
    }
}

#[test]
fn queries_sql_gives_q1_to_q7_with_their_calls() {
    let l = load("queries.sql");
    let w = &l.workload;
    let by_id: Vec<(&str, u64)> = (1..=7)
        .map(|n| {
            let p = w.pattern(&format!("q{n}")).expect("pattern");
            (p.id.as_str(), p.calls)
        })
        .collect();
    assert_eq!(
        by_id,
        [
            ("q1", 1_200_000),
            ("q2", 86_400),
            ("q3", 300_000),
            ("q4", 150_000),
            ("q5", 400_000),
            ("q6", 2_000),
            ("q7", 50)
        ]
    );
    assert_eq!(w.patterns.len(), 7);
    // Sorted by calls.
    assert!(w.patterns.windows(2).all(|p| p[0].calls >= p[1].calls));
    let q1 = w.pattern("q1").expect("q1");
    assert_eq!(
        q1.label.as_deref(),
        Some("(1) a driver's trip history, newest first (driver app, very frequent)")
    );
    assert_eq!(q1.fingerprint.len(), 16);
    assert_eq!(
        q1.locations[0].to_string(),
        format!("{}:6:1", example("queries.sql").display())
    );
    let q2 = w.pattern("q2").expect("q2");
    assert_eq!(
        q2.sql,
        "SELECT started_at, driver_id, fare_usd FROM trips WHERE city = $1 AND started_at >= $2 AND started_at < $3 ORDER BY started_at DESC LIMIT $4"
    );
    // The example keeps the literal one-day window and parses.
    let ex = q2.example.as_deref().expect("example");
    assert!(
        ex.contains("started_at >= '2025-01-15' AND started_at < '2025-01-16'"),
        "{ex}"
    );
    assert_patterns_parse(w);
    assert!(w.skipped.is_empty(), "{:?}", w.skipped);
}

#[test]
fn pg_stat_statements_gives_seven_patterns_and_the_reset_as_utility() {
    let l = load("pg_stat_statements.csv");
    let w = &l.workload;
    assert_eq!(w.sources[0].format, "pgss");
    use StatementKind::*;
    assert_eq!(
        kinds_and_calls(w),
        [
            (Select, 226_379),
            (Insert, 75_347),
            (Select, 56_710),
            (Select, 28_241),
            (Select, 16_149),
            (Update, 924),
            (Update, 919)
        ]
    );
    assert!(w
        .patterns
        .iter()
        .all(|p| p.total_ms.is_some() && p.rows.is_some() && p.example.is_none()));
    assert_eq!(w.utility.len(), 1);
    assert_eq!(w.utility[0].kind, "SELECT pg_stat_statements_reset()");
    assert!(l
        .statements
        .iter()
        .any(|s| s.class == StatementClass::Utility("SELECT pg_stat_statements_reset()".into())));
}

#[test]
fn server_log_gives_the_same_shapes_with_bound_values_in_examples() {
    let pgss = load("pg_stat_statements.csv");
    let log = load("postgres.log");
    let w = &log.workload;
    assert_eq!(w.sources[0].format, "pg-log");
    // Same fingerprints as pg_stat_statements for all seven application patterns.
    for p in &pgss.workload.patterns {
        let same = w.patterns.iter().find(|q| q.fingerprint == p.fingerprint);
        let same =
            same.unwrap_or_else(|| panic!("no log pattern with the fingerprint of {}", p.sql));
        assert_eq!(same.sql, p.sql);
        assert!(same.calls > 0 && same.mean_ms.is_some() && same.first_seen.is_some());
        let ex = same.example.as_deref().expect("example");
        assert!(!ex.contains('$'), "bound values substituted: {ex}");
    }
    assert_patterns_parse(w);
    // The execute of P_1 had `$1 = '1', $2 = '18', $3 = '18'`.
    let city = w
        .patterns
        .iter()
        .find(|p| p.sql.contains("make_interval"))
        .expect("city pattern");
    let ex = city.example.as_deref().expect("example");
    assert!(
        ex.contains("(ARRAY['London', 'Paris', 'Lyon', 'Berlin'])['"),
        "{ex}"
    );
    assert!(
        ex.contains("timestamptz '2025-01-01' + make_interval(days => '"),
        "{ex}"
    );
    sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, ex)
        .expect("example parses");
    // The setup statements before the benchmark are there too, the DDL as utility.
    assert!(w
        .utility
        .iter()
        .any(|u| u.kind == "DDL CREATE TABLE" && u.count == 3));
    assert!(w.skipped.iter().any(|s| s.kind.starts_with("parse/bind")));
}

#[test]
fn all_three_files_together_number_patterns_by_first_appearance() {
    let l = read_files(
        &[example("queries.sql"), example("pg_stat_statements.csv")],
        Format::Auto,
    )
    .expect("readable");
    // queries.sql has literals where the application binds parameters ('drv_' || $1), so its
    // shapes differ from the real ones: 7 + 7 patterns, ids in file order.
    assert_eq!(l.workload.patterns.len(), 14);
    assert_eq!(l.workload.sources.len(), 2);
    assert!(l.workload.pattern("q8").is_some_and(|p| p.calls == 226_379));
}
