//! Rideshare through the real pipeline (DDL → workload → analyzer → designer) reaches the expert
//! answer of `examples/rideshare/expected.md`; the plan round-trips and is deterministic.

mod support;

use remodel_model::{Bucket, Plan, SortOrder, Statistics};
use support::cqlcheck::check_design;
use support::pipeline::{mapping_text, plan_rideshare, root, strict_violations};

fn keys(plan: &Plan, table: &str) -> (Vec<String>, Vec<(String, Option<SortOrder>)>) {
    let t = plan
        .design
        .tables
        .iter()
        .find(|t| t.name == table)
        .unwrap_or_else(|| {
            panic!(
                "no table {table}; tables: {:?}",
                plan.design
                    .tables
                    .iter()
                    .map(|t| &t.name)
                    .collect::<Vec<_>>()
            )
        });
    (
        t.partition_key.iter().map(|k| k.column.clone()).collect(),
        t.clustering
            .iter()
            .map(|k| (k.column.clone(), k.order))
            .collect(),
    )
}

#[test]
fn rideshare_reaches_the_expert_design() {
    let (plan, _) = plan_rideshare(None);
    let d = &plan.design;
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let id = |sql_start: &str| {
        plan.workload
            .patterns
            .iter()
            .find(|p| p.sql.starts_with(sql_start))
            .map(|p| p.id.clone())
            .unwrap_or_else(|| panic!("no pattern starting {sql_start}"))
    };

    // (1) trips of a driver, newest first.
    let (pk, ck) = keys(&plan, "trips_by_driver");
    assert_eq!(pk, ["driver_id"]);
    assert_eq!(
        ck,
        [
            ("started_at".into(), Some(SortOrder::Desc)),
            ("trip_id".into(), Some(SortOrder::Asc))
        ]
    );

    // (2) trips of a city on a day: (city, day bucket of started_at).
    let t = d
        .tables
        .iter()
        .find(|t| t.name == "trips_by_city_date")
        .expect("trips_by_city_date");
    assert_eq!(t.partition_key.len(), 2);
    assert_eq!(t.partition_key[0].column, "city");
    assert_eq!(
        t.partition_key[1].derived_from.as_deref(),
        Some("started_at")
    );
    assert_eq!(t.partition_key[1].bucket, Some(Bucket::Day));
    let (_, ck) = keys(&plan, "trips_by_city_date");
    assert_eq!(
        ck,
        [
            ("started_at".into(), Some(SortOrder::Desc)),
            ("trip_id".into(), Some(SortOrder::Asc))
        ]
    );

    // (3) a trip by id; (4) a driver with the home city's country embedded.
    assert_eq!(
        keys(&plan, "trips_by_id"),
        (vec!["trip_id".to_string()], vec![])
    );
    assert_eq!(
        keys(&plan, "drivers_by_id"),
        (vec!["driver_id".to_string()], vec![])
    );
    let drivers = d
        .tables
        .iter()
        .find(|t| t.name == "drivers_by_id")
        .expect("drivers_by_id");
    assert!(drivers
        .columns
        .iter()
        .any(|c| c.name == "country" && c.source.as_ref().is_some_and(|s| s.table == "cities")));

    // All four reads single-partition, on the tables above (their CQL is checked below).
    let reads: Vec<_> = plan
        .workload
        .patterns
        .iter()
        .filter(|p| !p.kind.is_write())
        .collect();
    assert_eq!(reads.len(), 4);
    assert_eq!(d.queries.len(), 4);
    for q in &d.queries {
        assert!(q.single_partition, "{q:#?}");
    }
    let table_of = |pid: &str| {
        d.queries
            .iter()
            .find(|q| q.pattern == pid)
            .and_then(|q| q.table.clone())
    };
    assert_eq!(
        table_of(&id("SELECT started_at, city")).as_deref(),
        Some("trips_by_driver")
    );
    assert_eq!(
        table_of(&id("SELECT started_at, driver_id")).as_deref(),
        Some("trips_by_city_date")
    );
    assert_eq!(
        table_of(&id("SELECT * FROM trips")).as_deref(),
        Some("trips_by_id")
    );
    assert_eq!(
        table_of(&id("SELECT d.full_name")).as_deref(),
        Some("drivers_by_id")
    );

    // The trip INSERT fans out to the three trip tables.
    let insert = d
        .writes
        .iter()
        .find(|w| w.pattern == id("INSERT INTO trips"))
        .expect("insert");
    let mut targets: Vec<&str> = insert.targets.iter().map(|t| t.table.as_str()).collect();
    targets.sort();
    assert_eq!(
        targets,
        ["trips_by_city_date", "trips_by_driver", "trips_by_id"]
    );
    assert!(insert.read_before_write.is_empty());
    assert!(insert.fits_batch);

    // The status UPDATE writes every table that holds the status — with the tables narrowed
    // to what their reads need, only trips_by_id (no read first: the statement binds its key).
    let status = d
        .writes
        .iter()
        .find(|w| w.pattern == id("UPDATE trips SET status"))
        .expect("status update");
    let holders: Vec<&str> = d
        .tables
        .iter()
        .filter(|t| t.columns.iter().any(|c| c.name == "status"))
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(holders, ["trips_by_id"]);
    let written: Vec<&str> = status.targets.iter().map(|t| t.table.as_str()).collect();
    assert_eq!(written, holders);
    assert!(status.read_before_write.is_empty(), "{status:#?}");

    // The rating UPDATE touches only drivers_by_id.
    let rating = d
        .writes
        .iter()
        .find(|w| w.pattern == id("UPDATE drivers SET rating"))
        .expect("rating update");
    assert_eq!(
        rating
            .targets
            .iter()
            .map(|t| t.table.as_str())
            .collect::<Vec<_>>(),
        ["drivers_by_id"]
    );
    assert!(rating.read_before_write.is_empty());

    // Every emitted statement (the four reads, the writes) passes the CQL checker against the
    // plan's schema: none needs ALLOW FILTERING.
    let checked = check_design("rideshare", d);
    assert!(checked >= 4 + 3, "{checked} statements");
}

#[test]
fn rideshare_plan_matches_the_fixture_round_trips_and_is_deterministic() {
    let (plan, _) = plan_rideshare(None);
    let json = serde_json::to_string_pretty(&plan).expect("serialize") + "\n";
    let back: Plan = serde_json::from_str(&json).expect("plan.json reads back");
    assert_eq!(back, plan);
    let (again, _) = plan_rideshare(None);
    assert_eq!(
        serde_json::to_string_pretty(&again).expect("serialize") + "\n",
        json,
        "same inputs, same bytes"
    );
    let cql = remodel_design::emit_cql(&plan.design);
    assert_eq!(remodel_design::emit_cql(&again.design), cql);
    // Paths in the plan are as the pipeline was given them; make them repository-relative.
    let rel = json.replace(&format!("{}/", root().display()), "");
    let dir = root().join("fixtures/plan/rideshare");
    expect_test::expect_file![dir.join("plan.json")].assert_eq(&rel);
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&cql);
}

#[test]
fn rideshare_with_statistics() {
    let dir = root().join("fixtures/plan/rideshare-stats");
    let text = std::fs::read_to_string(dir.join("stats.json")).expect("stats.json");
    let stats: Statistics = serde_json::from_str(&text).expect("stats parse");
    let (plan, _) = plan_rideshare(Some(&stats));
    let d = &plan.design;
    // Same tables and keys as without statistics: the statistics size them, they don't change them.
    let (plain, _) = plan_rideshare(None);
    let names = |p: &Plan| {
        p.design
            .tables
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&plan), names(&plain));
    let by_driver = d
        .tables
        .iter()
        .find(|t| t.name == "trips_by_driver")
        .expect("table");
    assert_eq!(by_driver.estimates.basis, "statistics");
    assert_eq!(by_driver.estimates.partitions, 500.0);
    assert_eq!(by_driver.estimates.rows_per_partition_avg, 200.0);
    assert_eq!(by_driver.estimates.rows_per_partition_max, 400.0);
    let by_city = d
        .tables
        .iter()
        .find(|t| t.name == "trips_by_city_date")
        .expect("table");
    // 4 cities × 365 days; the busiest city holds 40 % of the trips.
    assert_eq!(by_city.estimates.partitions, 1460.0);
    assert!(
        by_city.warnings.iter().any(|w| w.code == "hot_key"),
        "{:#?}",
        by_city.warnings
    );
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&remodel_design::emit_cql(d));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
}

/// With whole trip rows in every table (`copy_entity_columns`), the expert's write path: the
/// status UPDATE reaches the three trip tables, reading driver_id, started_at and city from
/// trips_by_id first for the two keyed by them.
#[test]
fn rideshare_with_whole_rows_updates_every_copy() {
    let dir = root().join("examples/rideshare");
    let ddl = remodel_sql::ddl::load_files(&[dir.join("schema.sql")]).expect("schema");
    let wl = remodel_sql::workload::read_files(
        &[dir.join("queries.sql")],
        remodel_sql::workload::Format::Auto,
    )
    .expect("workload");
    let a = remodel_analyze::analyze(&ddl.schema, &wl.workload, &Default::default());
    let config = remodel_design::DesignConfig {
        keyspace: "rideshare".into(),
        copy_entity_columns: true,
        ..Default::default()
    };
    let (plan, _) = remodel_design::plan(a, None, &config);
    let d = &plan.design;
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let status = d
        .writes
        .iter()
        .find(|w| {
            plan.workload
                .pattern(&w.pattern)
                .is_some_and(|p| p.sql.starts_with("UPDATE trips SET status"))
        })
        .expect("status update");
    assert_eq!(status.targets.len(), 3);
    assert_eq!(status.read_before_write.len(), 1, "{status:#?}");
    let rbw = &status.read_before_write[0];
    assert_eq!(rbw.table, "trips_by_id");
    let mut cols = rbw.columns.clone();
    cols.sort();
    assert_eq!(cols, ["city", "driver_id", "started_at"]);
    let mut for_tables = rbw.for_tables.clone();
    for_tables.sort();
    assert_eq!(for_tables, ["trips_by_city_date", "trips_by_driver"]);
}
