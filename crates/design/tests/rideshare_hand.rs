//! The designer on rideshare's seven patterns built by hand (the analysis the analyzer must give),
//! so the design rules are tested independently of the front end.

mod support;

use remodel_design::{design, DesignConfig, DesignOutput};
use remodel_model::{Relationship, Schema, Workload};
use serde_json::json;

fn schema() -> Schema {
    let v = json!({"tables": [
        {"name": "cities", "columns": [
            {"name": "city", "sql_type": "text", "nullable": false},
            {"name": "country", "sql_type": "text", "nullable": false},
            {"name": "timezone", "sql_type": "text", "nullable": false}],
         "primary_key": ["city"]},
        {"name": "drivers", "columns": [
            {"name": "driver_id", "sql_type": "text", "nullable": false},
            {"name": "full_name", "sql_type": "text", "nullable": false},
            {"name": "home_city", "sql_type": "text", "nullable": false},
            {"name": "rating", "sql_type": "numeric(3,2)", "nullable": true},
            {"name": "joined_at", "sql_type": "timestamptz", "nullable": false, "default": "now()"}],
         "primary_key": ["driver_id"],
         "foreign_keys": [{"columns": ["home_city"], "ref_table": "cities", "ref_columns": ["city"], "origin": {"kind": "declared"}}]},
        {"name": "trips", "columns": [
            {"name": "trip_id", "sql_type": "uuid", "nullable": false},
            {"name": "driver_id", "sql_type": "text", "nullable": false},
            {"name": "city", "sql_type": "text", "nullable": false},
            {"name": "started_at", "sql_type": "timestamptz", "nullable": false},
            {"name": "distance_km", "sql_type": "numeric(6,2)", "nullable": false},
            {"name": "fare_usd", "sql_type": "numeric(8,2)", "nullable": false},
            {"name": "status", "sql_type": "text", "nullable": false}],
         "primary_key": ["trip_id"],
         "foreign_keys": [
            {"columns": ["driver_id"], "ref_table": "drivers", "ref_columns": ["driver_id"], "origin": {"kind": "declared"}},
            {"columns": ["city"], "ref_table": "cities", "ref_columns": ["city"], "origin": {"kind": "declared"}}]}
    ]});
    serde_json::from_value(v).expect("schema json")
}

fn col(t: &str, c: &str) -> serde_json::Value {
    json!({"table": t, "column": c})
}

/// The typed values `$1`, `$2`, … a write gives `columns`, in order.
fn values(columns: &[&str]) -> serde_json::Value {
    let v: Vec<serde_json::Value> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"column": c, "sql": format!("${}", i + 1), "expr": {"kind": "param", "n": i + 1}}))
        .collect();
    json!(v)
}

fn workload() -> Workload {
    let trips_all = [
        "trip_id",
        "driver_id",
        "city",
        "started_at",
        "distance_km",
        "fare_usd",
        "status",
    ];
    let v = json!({"patterns": [
        {"id": "q1", "fingerprint": "1", "kind": "select", "calls": 1200000,
         "sql": "SELECT started_at, city, distance_km, fare_usd FROM trips WHERE driver_id = $1 ORDER BY started_at DESC LIMIT $2",
         "tables": ["trips"], "equality": [{"column": col("trips", "driver_id"), "op": "eq", "value": "$1"}],
         "order_by": [{"column": col("trips", "started_at"), "desc": true}], "limit": 10,
         "projection": [col("trips", "started_at"), col("trips", "city"), col("trips", "distance_km"), col("trips", "fare_usd")]},
        {"id": "q5", "fingerprint": "5", "kind": "insert", "calls": 400000,
         "sql": "INSERT INTO trips (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) VALUES ($1, $2, $3, $4, $5, $6, $7)",
         "tables": ["trips"], "write": {"table": "trips", "columns_written": trips_all, "key_columns": [], "by_primary_key": false, "values": values(&trips_all)}},
        {"id": "q3", "fingerprint": "3", "kind": "select", "calls": 300000,
         "sql": "SELECT * FROM trips WHERE trip_id = $1", "tables": ["trips"], "key_lookup": true,
         "equality": [{"column": col("trips", "trip_id"), "op": "eq", "value": "$1"}],
         "projection": trips_all.iter().map(|c| col("trips", c)).collect::<Vec<_>>()},
        {"id": "q4", "fingerprint": "4", "kind": "select", "calls": 150000,
         "sql": "SELECT d.full_name, d.rating, c.country FROM drivers d JOIN cities c ON c.city = d.home_city WHERE d.driver_id = $1",
         "tables": ["drivers", "cities"],
         "join_path": [{"left_table": "cities", "left_columns": ["city"], "right_table": "drivers", "right_columns": ["home_city"], "foreign_key": "drivers(home_city) -> cities(city)"}],
         "equality": [{"column": col("drivers", "driver_id"), "op": "eq", "value": "$1"}],
         "projection": [col("drivers", "full_name"), col("drivers", "rating"), col("cities", "country")]},
        {"id": "q2", "fingerprint": "2", "kind": "select", "calls": 86400,
         "sql": "SELECT started_at, driver_id, fare_usd FROM trips WHERE city = $1 AND started_at >= $2 AND started_at < $3 ORDER BY started_at DESC LIMIT $4",
         "tables": ["trips"], "equality": [{"column": col("trips", "city"), "op": "eq", "value": "$1"}],
         "ranges": [{"column": col("trips", "started_at"), "lower": {"inclusive": true, "value": "$2"}, "upper": {"inclusive": false, "value": "$3"}, "window": "day"}],
         "order_by": [{"column": col("trips", "started_at"), "desc": true}], "limit": 100,
         "projection": [col("trips", "started_at"), col("trips", "driver_id"), col("trips", "fare_usd")]},
        {"id": "q6", "fingerprint": "6", "kind": "update", "calls": 2000,
         "sql": "UPDATE trips SET status = $1 WHERE trip_id = $2", "tables": ["trips"],
         "equality": [{"column": col("trips", "trip_id"), "op": "eq", "value": "$2"}],
         "write": {"table": "trips", "columns_written": ["status"], "key_columns": ["trip_id"], "by_primary_key": true, "values": values(&["status"])}},
        {"id": "q7", "fingerprint": "7", "kind": "update", "calls": 50,
         "sql": "UPDATE drivers SET rating = $1 WHERE driver_id = $2", "tables": ["drivers"],
         "equality": [{"column": col("drivers", "driver_id"), "op": "eq", "value": "$2"}],
         "write": {"table": "drivers", "columns_written": ["rating"], "key_columns": ["driver_id"], "by_primary_key": true, "values": values(&["rating"])}}
    ]});
    let wl: Workload = serde_json::from_value(v).expect("workload json");
    support::typed::with_typed_twins(&schema(), wl)
}

fn relationships() -> Vec<Relationship> {
    serde_json::from_value(json!([
        {"from": "cities", "to": "drivers", "columns": ["home_city"], "cardinality": {"kind": "one_to_many"},
         "decision": "duplicate_columns", "rationale": {"rule": "N-1 read together", "attribute_count": 3, "co_access_share": 1.0, "text": "country read with the driver"}},
        {"from": "drivers", "to": "trips", "columns": ["driver_id"], "cardinality": {"kind": "one_to_many"},
         "decision": "reference", "rationale": {"rule": "unbounded", "attribute_count": 7, "co_access_share": 0.0, "text": "trips grow without bound"}}
    ]))
    .expect("relationships json")
}

/// The design of the hand-written rideshare inputs with the default configuration.
fn hand_design() -> DesignOutput {
    design(
        &schema(),
        &workload(),
        &relationships(),
        None,
        &DesignConfig::default(),
    )
}

#[test]
fn rideshare_by_hand_reaches_the_expert_design() {
    let out = hand_design();
    let d = &out.design;
    let violations = remodel_design::validate::validate(&schema(), &workload(), d);
    assert!(violations.is_empty(), "{violations:#?}");
    let names: Vec<&str> = d.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "trips_by_driver",
            "trips_by_id",
            "drivers_by_id",
            "trips_by_city_date"
        ],
        "{}",
        remodel_design::emit_cql(d)
    );

    let t = &d.tables[0];
    assert_eq!(
        t.partition_key
            .iter()
            .map(|k| k.column.as_str())
            .collect::<Vec<_>>(),
        ["driver_id"]
    );
    let ck: Vec<(String, String)> = t
        .clustering
        .iter()
        .map(|k| (k.column.clone(), format!("{:?}", k.order.expect("order"))))
        .collect();
    assert_eq!(
        ck,
        [
            ("started_at".into(), "Desc".into()),
            ("trip_id".into(), "Asc".into())
        ]
    );

    let t = &d.tables[3];
    assert_eq!(t.partition_key[0].column, "city");
    assert_eq!(t.partition_key[1].column, "trip_date");
    assert_eq!(
        t.partition_key[1].derived_from.as_deref(),
        Some("started_at")
    );
    assert_eq!(t.partition_key[1].cql_type.to_string(), "date");
    assert_eq!(format!("{:?}", t.partition_key[1].bucket), "Some(Day)");
    assert_eq!(
        t.clustering
            .iter()
            .map(|k| k.column.as_str())
            .collect::<Vec<_>>(),
        ["started_at", "trip_id"]
    );

    let t = &d.tables[2];
    assert!(t
        .columns
        .iter()
        .any(|c| c.name == "country" && c.source.as_ref().is_some_and(|s| s.table == "cities")));

    assert!(
        d.queries
            .iter()
            .filter(|q| q.pattern != "q2")
            .all(|q| q.single_partition),
        "{:#?}",
        d.queries
    );
    // q2's day window has no example to count from: a window from any instant but midnight
    // touches two days, so the read lists every day bucket between its bounds, one request
    // each (issue 20, class 1), never the lower bound's day alone.
    let q2 = d.queries.iter().find(|q| q.pattern == "q2").expect("q2");
    assert!(!q2.single_partition, "{q2:#?}");
    assert_eq!(q2.partition_reads, Some(2.0), "{q2:#?}");
    let (i, bucket) = q2
        .binds
        .iter()
        .enumerate()
        .find(|(_, b)| b.column == "trip_date")
        .expect("the bucket's bind");
    assert!(
        matches!(
            bucket.value,
            remodel_model::BindValue::Buckets {
                upper_exclusive: true,
                ..
            }
        ),
        "{q2:#?}"
    );
    assert_eq!(
        q2.partitions,
        Some(remodel_model::PartitionRead::Each { bind: i })
    );
    assert_eq!(
        q2.cql.as_deref(),
        Some("SELECT started_at, driver_id, fare_usd FROM remodel.trips_by_city_date WHERE city = ? AND trip_date = ? AND started_at >= ? AND started_at < ? ORDER BY started_at DESC LIMIT ?")
    );
    // The LIMIT is bound (the application may pass another value), to the statement's own.
    assert!(
        q2.binds.last().is_some_and(|b| b.column == "limit"),
        "{q2:#?}"
    );

    let w5 = d.writes.iter().find(|w| w.pattern == "q5").expect("q5");
    let mut targets: Vec<&str> = w5.targets.iter().map(|t| t.table.as_str()).collect();
    targets.sort();
    assert_eq!(
        targets,
        ["trips_by_city_date", "trips_by_driver", "trips_by_id"]
    );
    assert!(w5.read_before_write.is_empty());

    // Only trips_by_id holds the status (the other tables hold what their reads need).
    let w6 = d.writes.iter().find(|w| w.pattern == "q6").expect("q6");
    let written: Vec<&str> = w6.targets.iter().map(|t| t.table.as_str()).collect();
    assert_eq!(written, ["trips_by_id"]);
    assert!(w6.read_before_write.is_empty(), "{w6:#?}");

    let w7 = d.writes.iter().find(|w| w.pattern == "q7").expect("q7");
    assert_eq!(
        w7.targets
            .iter()
            .map(|t| t.table.as_str())
            .collect::<Vec<_>>(),
        ["drivers_by_id"]
    );
    // Every statement the plan emits (reads, lookups, writes, reads before write) passes the
    // CQL checker against the plan's schema: none needs ALLOW FILTERING.
    support::cqlcheck::check_design("rideshare by hand", d);
}
