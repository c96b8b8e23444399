//! The rideshare example (`examples/rideshare`), read with the real front end from all three
//! captures of the same workload: the SQL file, the pg_stat_statements export and the server log.

mod common;

use common::*;
use remodel_model::Analysis;
use remodel_model::{Cardinality, ColumnRef, Decision, EqualityOp, StatementKind, TimeWindow};
use remodel_sql::workload::Format;

const SCHEMA: &str = "examples/rideshare/schema.sql";

fn rideshare(queries: &str, format: Format) -> Analysis {
    load_and_analyze(&[SCHEMA], &[queries], format)
}

/// The four reads and three writes, whatever the capture.
/// The server log also holds the example's data load (`INSERT … SELECT … generate_series`,
/// `INSERT INTO cities VALUES …`): not application patterns.
fn is_data_load(p: &remodel_model::AccessPattern) -> bool {
    p.sql.contains("generate_series") || p.sql.starts_with("INSERT INTO cities VALUES")
}

fn check_patterns(a: &Analysis, windows_known: bool) {
    let app: Vec<_> = a
        .workload
        .patterns
        .iter()
        .filter(|p| !is_data_load(p))
        .collect();
    assert_eq!(
        app.len(),
        7,
        "{:#?}",
        a.workload
            .patterns
            .iter()
            .map(|p| &p.sql)
            .collect::<Vec<_>>()
    );
    for p in app {
        assert!(
            p.analysis.unmodeled.is_none(),
            "{}: {:?}",
            p.id,
            p.analysis.unmodeled
        );
    }

    // (1) a driver's trips, newest first, 10 of them.
    let p1 = find(a, &["distance_km", "order by started_at desc"]);
    let x = &p1.analysis;
    assert_eq!(x.tables, ["trips"]);
    assert_eq!(x.equality.len(), 1);
    assert_eq!(x.equality[0].column, ColumnRef::new("trips", "driver_id"));
    assert_eq!(x.equality[0].op, EqualityOp::Eq);
    assert_eq!(x.order_by.len(), 1);
    assert_eq!(x.order_by[0].column, ColumnRef::new("trips", "started_at"));
    assert!(x.order_by[0].desc);
    assert_eq!(x.limit, Some(10));
    assert!(!x.key_lookup);

    // (2) trips in a city on one day.
    let p2 = find(a, &["city =", "started_at >="]);
    let x = &p2.analysis;
    assert_eq!(x.equality.len(), 1);
    assert_eq!(x.equality[0].column, ColumnRef::new("trips", "city"));
    assert_eq!(x.ranges.len(), 1);
    let r = &x.ranges[0];
    assert_eq!(r.column, ColumnRef::new("trips", "started_at"));
    assert!(r.lower.as_ref().is_some_and(|b| b.inclusive));
    assert!(r.upper.as_ref().is_some_and(|b| !b.inclusive));
    if windows_known {
        assert_eq!(r.window, Some(TimeWindow::Day));
    }
    assert_eq!(x.limit, Some(100));
    assert_eq!(x.projection.len(), 3);

    // (3) one trip by id.
    let p3 = find(a, &["select * from trips"]);
    assert!(p3.analysis.key_lookup);
    assert_eq!(
        p3.analysis.projection.len(),
        7,
        "* expanded from the schema"
    );
    assert_eq!(p3.analysis.rows_expected, Some(1.0));

    // (4) the driver's profile joins drivers → cities along the declared FK.
    let p4 = find(a, &["join cities"]);
    let x = &p4.analysis;
    assert_eq!(x.tables, ["drivers", "cities"]);
    assert_eq!(x.join_path.len(), 1);
    let j = &x.join_path[0];
    assert_eq!(
        (j.left_table.as_str(), j.right_table.as_str()),
        ("drivers", "cities")
    );
    assert_eq!(
        (j.left_columns.as_slice(), j.right_columns.as_slice()),
        (&["home_city".to_string()][..], &["city".to_string()][..])
    );
    assert_eq!(
        j.foreign_key.as_deref(),
        Some("drivers(home_city) -> cities(city)")
    );
    assert_eq!(x.equality[0].column, ColumnRef::new("drivers", "driver_id"));
    assert!(x.projection.contains(&ColumnRef::new("cities", "country")));
    assert_eq!(x.rows_expected, Some(1.0));

    // The trip INSERT writes trips; both UPDATEs identify rows by primary key.
    let ins = find(a, &["insert into trips (trip_id"]);
    let w = ins.analysis.write.as_ref().expect("write info");
    assert_eq!(w.table, "trips");
    assert_eq!(w.columns_written.len(), 7);
    let updates: Vec<_> = a
        .workload
        .patterns
        .iter()
        .filter(|p| p.kind == StatementKind::Update)
        .collect();
    assert_eq!(ins.kind, StatementKind::Insert);
    assert_eq!(updates.len(), 2);
    for u in updates {
        let w = u.analysis.write.as_ref().expect("write info");
        assert!(w.by_primary_key, "{}: {w:?}", u.sql);
        assert_eq!(w.key_columns.len(), 1);
    }
}

fn check_relationships(a: &Analysis) {
    assert_eq!(a.relationships.len(), 3);
    let rel = |from: &str, to: &str| {
        a.relationships
            .iter()
            .find(|r| r.from == from && r.to == to)
            .unwrap_or_else(|| panic!("{from} -> {to}"))
    };
    // drivers → cities: a lookup read together, few attributes: copy `country` into driver rows.
    let dc = rel("cities", "drivers");
    assert_eq!(dc.cardinality, Cardinality::OneToMany);
    assert_eq!(
        dc.decision,
        Decision::DuplicateColumns,
        "{}",
        dc.rationale.text
    );
    assert_eq!(dc.rationale.columns, ["country"]);
    assert_eq!(dc.rationale.co_access_share, 1.0);
    // A driver's trips: unbounded → reference, never embedded.
    let dt = rel("drivers", "trips");
    assert_eq!(dt.decision, Decision::Reference, "{}", dt.rationale.text);
    assert_eq!(dt.rationale.bounded, Some(false));
    assert!(
        dt.rationale.rule.contains("unbounded"),
        "{}",
        dt.rationale.rule
    );
    assert_eq!(rel("cities", "trips").decision, Decision::Reference);
    // Declared keys only: nothing inferred.
    assert!(a
        .diagnostics
        .iter()
        .all(|d| !d.message.contains("inferred foreign key")));
}

#[test]
fn rideshare_sql_file() {
    let a = rideshare("examples/rideshare/queries.sql", Format::Sql);
    check_patterns(&a, true);
    check_relationships(&a);
    let p2 = find(&a, &["city =", "started_at >="]);
    let lower = p2.analysis.ranges[0]
        .lower
        .as_ref()
        .and_then(|b| b.example.as_deref());
    assert_eq!(lower, Some("'2025-01-15'"));
}

#[test]
fn rideshare_server_log() {
    // The extended-protocol log: `'drv_' || $1`, array subscripts, make_interval bounds.
    let a = rideshare("examples/rideshare/postgres.log", Format::Auto);
    check_patterns(&a, true);
    check_relationships(&a);
}

#[test]
fn rideshare_pg_stat_statements() {
    // No literal instance in pg_stat_statements: the window and LIMIT values are unknown, but
    // every predicate is still found, and rows per call come from the export.
    let a = rideshare("examples/rideshare/pg_stat_statements.csv", Format::Pgss);
    check_patterns(&a, false);
    check_relationships(&a);
    let p1 = find(&a, &["distance_km", "order by started_at desc"]);
    assert_eq!(p1.analysis.rows_expected, Some(10.0));
}
