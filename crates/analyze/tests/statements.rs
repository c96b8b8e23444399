//! Statement-level behaviour on schemas written in code: each SQL shape the analyzer models.

mod common;

use common::*;
use remodel_analyze::{analyze, analyze_pattern, AnalyzeConfig};
use remodel_model::{ColumnRef, Decision, EqualityOp, TimeWindow};

fn one(sql: &str, example: Option<&str>) -> remodel_model::PatternAnalysis {
    let schema = rideshare_schema(true);
    let (a, _) = analyze_pattern(&schema, &pattern("q1", sql, example, 1));
    a
}

#[test]
fn driver_log_shapes_still_count_as_equality_and_range() {
    let a = one(
        "SELECT started_at, driver_id, fare_usd FROM trips WHERE city = (ARRAY[$4,$5,$6,$7])[$1 + $8] \
         AND started_at >= timestamptz $9 + make_interval(days => $2) \
         AND started_at < timestamptz $10 + make_interval(days => $3 + $11) ORDER BY started_at DESC LIMIT $12",
        Some(
            "SELECT started_at, driver_id, fare_usd FROM trips WHERE city = (ARRAY['London','Paris','Lyon','Berlin'])['1' + 1] \
             AND started_at >= timestamptz '2025-01-01' + make_interval(days => '18') \
             AND started_at < timestamptz '2025-01-01' + make_interval(days => '18' + 1) ORDER BY started_at DESC LIMIT 100",
        ),
    );
    assert_eq!(a.equality.len(), 1, "{a:#?}");
    assert_eq!(a.equality[0].column, ColumnRef::new("trips", "city"));
    assert_eq!(a.ranges.len(), 1);
    assert_eq!(a.ranges[0].column, ColumnRef::new("trips", "started_at"));
    assert_eq!(a.ranges[0].window, Some(TimeWindow::Day));
    assert_eq!(a.limit, Some(100));
    assert_eq!(a.order_by[0].column, ColumnRef::new("trips", "started_at"));
    assert!(a.order_by[0].desc);
    assert_eq!(a.projection.len(), 3);
}

#[test]
fn concatenated_key_is_equality() {
    let a = one(
        "SELECT * FROM trips WHERE driver_id = $2 || $1 ORDER BY started_at DESC LIMIT $3",
        Some(
            "SELECT * FROM trips WHERE driver_id = 'drv_' || '1' ORDER BY started_at DESC LIMIT 10",
        ),
    );
    assert_eq!(a.equality[0].column.column, "driver_id");
    assert_eq!(a.equality[0].value.as_deref(), Some("$2 || $1"));
    assert_eq!(a.limit, Some(10));
    assert_eq!(a.projection.len(), 7, "* expands to the 7 trip columns");
    assert!(!a.key_lookup);
}

#[test]
fn alias_join_follows_declared_fk() {
    let a = one("SELECT d.full_name, d.rating, c.country FROM drivers d JOIN cities c ON c.city = d.home_city WHERE d.driver_id = $1", None);
    assert_eq!(a.tables, vec!["drivers", "cities"]);
    assert_eq!(a.join_path.len(), 1);
    let j = &a.join_path[0];
    assert_eq!(
        (j.left_table.as_str(), j.right_table.as_str()),
        ("drivers", "cities")
    );
    assert_eq!(j.left_columns, vec!["home_city"]);
    assert_eq!(a.rows_expected, Some(1.0));
    assert!(a.projection.contains(&ColumnRef::new("cities", "country")));
}

#[test]
fn predicates_of_every_kind() {
    let a = one(
        "SELECT trip_id FROM trips WHERE status IN ($1) AND city IS NULL AND fare_usd BETWEEN $2 AND $3 \
         AND driver_id LIKE 'drv%' AND date_trunc('day', started_at) = $4 AND distance_km <> $5 AND (status = $6 OR city = $7)",
        None,
    );
    let ops: Vec<(String, EqualityOp, bool)> = a
        .equality
        .iter()
        .map(|p| (p.column.column.clone(), p.op, p.rewritten_from.is_some()))
        .collect();
    assert!(ops.contains(&("status".into(), EqualityOp::In, false)));
    assert!(ops.contains(&("city".into(), EqualityOp::IsNull, false)));
    // `date_trunc('day', started_at) = $4` is one day of the bare column, not an equality.
    assert!(!ops.iter().any(|(c, ..)| c == "started_at"), "{ops:?}");
    let day = a
        .ranges
        .iter()
        .find(|r| r.column.column == "started_at")
        .expect("started_at range");
    assert_eq!(day.window, Some(TimeWindow::Day));
    assert_eq!(
        day.lower.as_ref().map(|b| (b.inclusive, b.value.as_str())),
        Some((true, "$4::TIMESTAMPTZ"))
    );
    assert_eq!(
        day.upper.as_ref().map(|b| (b.inclusive, b.value.as_str())),
        Some((false, "CASE WHEN date_trunc('day', $4::TIMESTAMPTZ) = $4::TIMESTAMPTZ THEN $4::TIMESTAMPTZ + INTERVAL '1 day' ELSE $4::TIMESTAMPTZ END"))
    );
    assert_eq!(
        day.rewritten_from[0].sql,
        "date_trunc('day', started_at) = $4"
    );
    let fare = a
        .ranges
        .iter()
        .find(|r| r.column.column == "fare_usd")
        .expect("fare range");
    assert!(
        fare.lower.as_ref().is_some_and(|b| b.inclusive)
            && fare.upper.as_ref().is_some_and(|b| b.inclusive)
    );
    assert!(a
        .ranges
        .iter()
        .any(|r| r.column.column == "driver_id" && r.prefix));
    let residual: Vec<&str> = a.residual.iter().map(|r| r.sql.as_str()).collect();
    assert_eq!(residual, ["distance_km <> $5", "status = $6 OR city = $7"]);
    assert_eq!(a.residual[0].reason, "<> is not an equality or a range");
    assert_eq!(
        a.residual[0].columns,
        [ColumnRef::new("trips", "distance_km")]
    );
}

#[test]
fn like_with_parameter_uses_example() {
    let a = one(
        "SELECT trip_id FROM trips WHERE driver_id LIKE $1",
        Some("SELECT trip_id FROM trips WHERE driver_id LIKE 'drv_8%'"),
    );
    // `_` is a wildcard, so 'drv_8%' is not a pure prefix: kept as a residual filter.
    assert!(a.ranges.is_empty());
    assert_eq!(a.residual.len(), 1);
    assert_eq!(a.residual[0].sql, "driver_id LIKE $1");
    assert!(a.residual[0].reason.contains("no fixed prefix"));
    let a = one(
        "SELECT trip_id FROM trips WHERE city LIKE $1",
        Some("SELECT trip_id FROM trips WHERE city LIKE 'Lon%'"),
    );
    assert!(a.ranges[0].prefix);
    assert_eq!(
        a.ranges[0]
            .lower
            .as_ref()
            .and_then(|b| b.example.as_deref()),
        Some("'Lon%'")
    );
}

#[test]
fn aggregates_group_by_distinct() {
    let a = one("SELECT city, count(*), sum(fare_usd), count(DISTINCT driver_id) FROM trips WHERE started_at >= $1 GROUP BY city", None);
    assert_eq!(a.aggregates.len(), 3);
    assert_eq!(a.aggregates[0].function, "count");
    assert!(a.aggregates[0].column.is_none());
    assert!(a.aggregates[2].distinct);
    assert_eq!(a.group_by, vec![ColumnRef::new("trips", "city")]);
    assert_eq!(a.projection, vec![ColumnRef::new("trips", "city")]);
    let a = one("SELECT DISTINCT city FROM trips", None);
    assert!(a.distinct);
}

#[test]
fn subqueries_and_ctes() {
    let a = one(
        "WITH recent AS (SELECT trip_id, driver_id FROM trips WHERE started_at >= $1) \
         SELECT d.full_name FROM recent r JOIN drivers d ON d.driver_id = r.driver_id",
        None,
    );
    assert_eq!(a.tables, vec!["trips", "drivers"]);
    assert_eq!(a.join_path[0].left_table, "trips");
    assert!(a.unmodeled.is_none());
    let a = one("SELECT full_name FROM drivers d WHERE EXISTS (SELECT 1 FROM trips t WHERE t.driver_id = d.driver_id AND t.status = $1)", None);
    assert_eq!(a.tables, vec!["drivers", "trips"]);
    assert_eq!(a.join_path.len(), 1);
    assert!(
        a.equality.is_empty(),
        "the subquery's filter is not the pattern's"
    );
    let a = one("SELECT full_name FROM drivers WHERE driver_id IN (SELECT driver_id FROM trips WHERE city = $1)", None);
    assert_eq!(a.join_path.len(), 1);
}

#[test]
fn unmodeled_statements_are_marked_not_dropped() {
    for sql in [
        "SELECT trip_id, row_number() OVER (PARTITION BY driver_id ORDER BY started_at) FROM trips",
        "SELECT city FROM trips UNION SELECT city FROM cities",
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
        "SELECT now()",
        "SELECT * FROM generate_series(1, 10)",
    ] {
        let a = one(sql, None);
        assert!(a.unmodeled.is_some(), "{sql}");
    }
    let schema = rideshare_schema(true);
    let (a, d) = analyze_pattern(&schema, &pattern("q9", "SELEC oops FROM", None, 1));
    assert!(a
        .unmodeled
        .as_deref()
        .is_some_and(|r| r.starts_with("does not parse")));
    assert_eq!(d.len(), 1);
}

#[test]
fn writes() {
    let a = one("INSERT INTO trips (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) VALUES ($1, $2, $3, $4, $5, $6, $7)", None);
    let w = a.write.expect("write");
    assert_eq!(w.table, "trips");
    assert_eq!(w.columns_written.len(), 7);
    assert!(w.by_primary_key);
    let a = one(
        "UPDATE trips SET status = $2 WHERE trip_id = md5($1::text)::uuid",
        None,
    );
    let w = a.write.expect("write");
    assert_eq!(w.columns_written, vec!["status"]);
    assert_eq!(w.key_columns, vec!["trip_id"]);
    assert!(w.by_primary_key);
    let a = one("INSERT INTO cities (city, country, timezone) VALUES ($1, $2, $3) ON CONFLICT (city) DO UPDATE SET country = excluded.country RETURNING city", None);
    let w = a.write.expect("write");
    assert!(w.on_conflict);
    assert_eq!(w.returning, vec!["city"]);
    let a = one("UPDATE trips t SET status = $1 FROM drivers d WHERE d.driver_id = t.driver_id AND d.home_city = $2", None);
    let w = a.write.expect("write");
    assert_eq!(w.reads, vec!["drivers"]);
    assert!(!w.by_primary_key);
    assert_eq!(a.join_path.len(), 1);
    let a = one(
        "DELETE FROM trips WHERE driver_id = $1 AND started_at < $2",
        None,
    );
    let w = a.write.expect("write");
    assert_eq!(w.key_columns, vec!["driver_id"]);
}

/// The value each written column takes, and whether it reads the row's current value
/// (`SET n = n + 1`: a read-modify-write in Cassandra).
#[test]
fn written_values_and_reads_of_the_current_row() {
    let values = |sql: &str| -> Vec<(String, String, bool)> {
        one(sql, None)
            .write
            .expect("write")
            .values
            .into_iter()
            .map(|v| (v.column, v.sql, v.reads_current))
            .collect()
    };
    assert_eq!(
        values("UPDATE trips SET distance_km = distance_km + $1, status = $2 WHERE trip_id = $3"),
        [
            (
                "distance_km".to_string(),
                "distance_km + $1".to_string(),
                true
            ),
            ("status".to_string(), "$2".to_string(), false)
        ]
    );
    assert!(
        values("UPDATE trips SET fare_usd = coalesce(trips.fare_usd, 0) - $1 WHERE trip_id = $2")
            [0]
        .2
    );
    assert_eq!(
        values("UPDATE trips SET (status, city) = ($1, $2) WHERE trip_id = $3"),
        [
            ("status".to_string(), "$1".to_string(), false),
            ("city".to_string(), "$2".to_string(), false)
        ]
    );
    assert_eq!(
        values("INSERT INTO cities (city, country, timezone) VALUES ($1, $2, DEFAULT)"),
        [
            ("city".to_string(), "$1".to_string(), false),
            ("country".to_string(), "$2".to_string(), false),
            ("timezone".to_string(), "DEFAULT".to_string(), false)
        ]
    );
    // Several rows or a query: no single value per column.
    assert!(values(
        "INSERT INTO cities (city, country, timezone) VALUES ($1, $2, $3), ($4, $5, $6)"
    )
    .is_empty());
}

#[test]
fn whole_rideshare_in_code() {
    let schema = rideshare_schema(true);
    let wl = workload(vec![
        pattern("q1", "SELECT started_at, city, distance_km, fare_usd FROM trips WHERE driver_id = $1 ORDER BY started_at DESC LIMIT $2", Some("SELECT started_at, city, distance_km, fare_usd FROM trips WHERE driver_id = 'drv_882' ORDER BY started_at DESC LIMIT 10"), 1_200_000),
        pattern("q4", "SELECT d.full_name, d.rating, c.country FROM drivers d JOIN cities c ON c.city = d.home_city WHERE d.driver_id = $1", None, 150_000),
        pattern("q5", "INSERT INTO trips (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) VALUES ($1, $2, $3, $4, $5, $6, $7)", None, 400_000),
    ]);
    let an = analyze(&schema, &wl, &AnalyzeConfig::default());
    // One relationship per declared foreign key, each decided with a reason: the home city's
    // country is copied into the driver rows (q4 reads them together, as the expert answer of
    // examples/rideshare/expected.md does); no read joins trips with their driver or city.
    let mut decided: Vec<(&str, &str, Decision)> = an
        .relationships
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str(), r.decision))
        .collect();
    decided.sort_by_key(|(from, to, _)| (*from, *to));
    assert_eq!(
        decided,
        [
            ("cities", "drivers", Decision::DuplicateColumns),
            ("cities", "trips", Decision::Reference),
            ("drivers", "trips", Decision::Reference),
        ],
        "{:#?}",
        an.relationships
    );
    for r in &an.relationships {
        assert!(!r.rationale.text.trim().is_empty(), "{r:#?}");
    }
}

#[test]
fn rideshare_without_declared_keys_infers_all_three() {
    let schema = rideshare_schema(false);
    let wl = workload(vec![
        pattern("q1", "SELECT started_at FROM trips WHERE driver_id = $1 ORDER BY started_at DESC LIMIT $2", None, 1_200_000),
        pattern("q4", "SELECT d.full_name, c.country FROM drivers d JOIN cities c ON c.city = d.home_city WHERE d.driver_id = $1", None, 150_000),
    ]);
    let an = analyze(&schema, &wl, &AnalyzeConfig::default());
    let mut fks: Vec<String> = an
        .schema
        .foreign_keys()
        .map(|(t, fk)| {
            let how = match &fk.origin {
                remodel_model::FkOrigin::Inferred { evidence } => {
                    evidence.split(':').next().unwrap_or("").to_string()
                }
                remodel_model::FkOrigin::Declared => "declared".into(),
            };
            format!(
                "{}({}) -> {}({}) [{how}]",
                t.name,
                fk.columns.join(","),
                fk.ref_table,
                fk.ref_columns.join(",")
            )
        })
        .collect();
    fks.sort();
    assert_eq!(
        fks,
        [
            "drivers(home_city) -> cities(city) [joined in 1 pattern of the workload (q4; 150,000 calls)]",
            "trips(city) -> cities(city) [naming]",
            "trips(driver_id) -> drivers(driver_id) [naming]",
        ]
    );
    // The join now follows the inferred key, and the decision is the same as with declared keys.
    assert_eq!(
        an.workload.patterns[1].analysis.join_path[0]
            .foreign_key
            .as_deref(),
        Some("drivers(home_city) -> cities(city)")
    );
    let dc = an
        .relationships
        .iter()
        .find(|r| r.to == "drivers")
        .expect("cities -> drivers");
    assert_eq!(dc.decision, Decision::DuplicateColumns);
}

#[test]
fn one_to_one_join_infers_towards_the_primary_key() {
    let none: &[(&[&str], &str, &[&str])] = &[];
    let mut store = table(
        "store",
        &[("store_id", "integer"), ("manager_staff_id", "integer")],
        &["store_id"],
        none,
    );
    store.unique_keys.push(remodel_model::UniqueKey {
        name: None,
        columns: vec!["manager_staff_id".into()],
    });
    let staff = table(
        "staff",
        &[("staff_id", "integer"), ("name", "text")],
        &["staff_id"],
        none,
    );
    let schema = remodel_model::Schema {
        tables: vec![store, staff],
        ..Default::default()
    };
    let wl = workload(vec![pattern(
        "q1",
        "SELECT m.name FROM store s JOIN staff m ON s.manager_staff_id = m.staff_id WHERE s.store_id = $1",
        None,
        10,
    )]);
    let an = analyze(&schema, &wl, &AnalyzeConfig::default());
    let fk = an
        .schema
        .table("store")
        .and_then(|t| t.foreign_keys.first())
        .expect("inferred");
    assert_eq!(
        (fk.columns.as_slice(), fk.ref_table.as_str()),
        (&["manager_staff_id".to_string()][..], "staff")
    );
    let r = &an.relationships[0];
    assert_eq!(r.cardinality, remodel_model::Cardinality::OneToOne);
    assert_eq!(r.decision, Decision::Embed);
}

#[test]
fn outer_join_on_conditions_are_not_filters() {
    let a = one("SELECT d.full_name, t.fare_usd FROM drivers d LEFT JOIN trips t ON t.driver_id = d.driver_id AND t.status = $1 WHERE d.driver_id = $2", None);
    assert_eq!(a.join_path.len(), 1);
    let eq: Vec<String> = a.equality.iter().map(|e| e.column.to_string()).collect();
    assert_eq!(eq, ["drivers.driver_id"]);
    let residual: Vec<&str> = a.residual.iter().map(|r| r.sql.as_str()).collect();
    assert_eq!(residual, ["outer join ON t.status = $1"]);
    // In an inner join the same condition filters the result.
    let a = one("SELECT d.full_name FROM drivers d JOIN trips t ON t.driver_id = d.driver_id AND t.status = $1", None);
    assert_eq!(a.equality.len(), 1);
}
