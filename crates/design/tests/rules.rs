//! Design rules on small hand-built cases: the partition-size formula against the Cassandra docs'
//! test vector, IN placement, windows wider than one bucket, unmodelled statements, quoting.

mod support;

use remodel_design::{design, DesignConfig};
use remodel_model::{Schema, Statistics, Workload};
use serde_json::{json, Value};
use support::cqlcheck::check_design;

fn col(t: &str, c: &str) -> Value {
    json!({"table": t, "column": c})
}

fn run(schema: Value, patterns: Value, stats: Option<Value>) -> remodel_design::DesignOutput {
    let schema: Schema = serde_json::from_value(schema).expect("schema");
    let workload: Workload =
        serde_json::from_value(json!({ "patterns": patterns })).expect("workload");
    let workload = support::typed::with_typed_twins(&schema, workload);
    let stats: Option<Statistics> = stats.map(|s| serde_json::from_value(s).expect("stats"));
    let out = design(
        &schema,
        &workload,
        &[],
        stats.as_ref(),
        &DesignConfig::default(),
    );
    // Whatever the case, every statement of the plan must be valid CQL on its schema.
    check_design("case", &out.design);
    out
}

/// `available_rooms_by_hotel_date` of the Apache Cassandra data-modelling docs: 100 rooms × 730
/// days per hotel, 5 B key, 7 B per row, 8 B per cell → 1,095,005 B.
#[test]
fn partition_size_matches_the_cassandra_docs_vector() {
    let schema = json!({"tables": [{"name": "available_rooms", "primary_key": ["hotel_id", "date", "room_number"], "columns": [
        {"name": "hotel_id", "sql_type": "text", "nullable": false},
        {"name": "date", "sql_type": "date", "nullable": false},
        {"name": "room_number", "sql_type": "smallint", "nullable": false},
        {"name": "is_available", "sql_type": "boolean", "nullable": false}]}]});
    let patterns = json!([{"id": "q1", "fingerprint": "1", "kind": "select", "calls": 1,
        "sql": "SELECT date, room_number, is_available FROM available_rooms WHERE hotel_id = $1 AND date >= $2 AND date <= $3",
        "tables": ["available_rooms"], "equality": [{"column": col("available_rooms", "hotel_id"), "op": "eq"}],
        "ranges": [{"column": col("available_rooms", "date"), "lower": {"inclusive": true, "value": "$2"}, "upper": {"inclusive": true, "value": "$3"}}],
        "projection": [col("available_rooms", "date"), col("available_rooms", "room_number"), col("available_rooms", "is_available")]}]);
    let stats = json!({"tables": {"available_rooms": {"rows": 730000, "columns": {
        "hotel_id": {"n_distinct": 10, "avg_width": 5}, "date": {"avg_width": 4},
        "room_number": {"avg_width": 2}, "is_available": {"avg_width": 1}}}}});
    let out = run(schema, patterns, Some(stats));
    let t = &out.design.tables[0];
    assert_eq!(t.name, "available_rooms_by_hotel");
    assert_eq!(
        t.clustering
            .iter()
            .map(|k| k.column.as_str())
            .collect::<Vec<_>>(),
        ["date", "room_number"]
    );
    assert_eq!(t.estimates.rows_per_partition_avg, 73_000.0);
    assert_eq!(t.estimates.bytes_per_partition_avg, 1_095_005.0);
    assert_eq!(t.estimates.partitions, 10.0);
    assert_eq!(t.estimates.basis, "statistics");
    assert!(
        t.warnings.iter().any(|w| w.code == "low_cardinality_key"),
        "{:#?}",
        t.warnings
    );
}

fn events_schema() -> Value {
    json!({"tables": [{"name": "events", "primary_key": ["id"], "columns": [
        {"name": "id", "sql_type": "bigint", "nullable": false},
        {"name": "account", "sql_type": "int", "nullable": false},
        {"name": "kind", "sql_type": "text", "nullable": false},
        {"name": "token", "sql_type": "text", "nullable": true},
        {"name": "at", "sql_type": "timestamp", "nullable": false}]}]})
}

#[test]
fn in_next_to_equalities_stays_in_one_partition() {
    let patterns = json!([{"id": "q1", "fingerprint": "1", "kind": "select", "calls": 1,
        "sql": "SELECT id, token FROM events WHERE account = $1 AND kind IN ($2)",
        "tables": ["events"],
        "equality": [{"column": col("events", "account"), "op": "eq"}, {"column": col("events", "kind"), "op": "in"}],
        "projection": [col("events", "id"), col("events", "token")]}]);
    let out = run(events_schema(), patterns, None);
    let t = &out.design.tables[0];
    assert_eq!(
        t.partition_key
            .iter()
            .map(|k| k.column.as_str())
            .collect::<Vec<_>>(),
        ["account"]
    );
    assert_eq!(t.clustering[0].column, "kind");
    let q = &out.design.queries[0];
    assert!(q.single_partition);
    assert_eq!(
        q.cql.as_deref(),
        Some("SELECT id, \"token\" FROM remodel.events_by_account WHERE account = ? AND kind IN ?")
    );
}

#[test]
fn a_week_window_reads_every_day_bucket_it_can_touch() {
    let patterns = json!([{"id": "q1", "fingerprint": "1", "kind": "select", "calls": 1,
        "sql": "SELECT id FROM events WHERE account = $1 AND at >= $2 AND at < $3",
        "tables": ["events"], "equality": [{"column": col("events", "account"), "op": "eq"}],
        "ranges": [{"column": col("events", "at"), "lower": {"inclusive": true, "value": "$2"}, "upper": {"inclusive": false, "value": "$3"}, "window": "week"}],
        "projection": [col("events", "id")]}]);
    let out = run(events_schema(), patterns, None);
    let t = &out.design.tables[0];
    assert_eq!(t.name, "events_by_account_date");
    assert_eq!(t.partition_key[1].column, "event_date");
    let q = &out.design.queries[0];
    assert!(!q.single_partition);
    // Seven days from any instant but midnight touch eight day buckets: with no example window
    // to count from, a read lists every bucket its window can touch (issue 20, class 1).
    assert_eq!(q.partition_reads, Some(8.0), "{q:#?}");
    assert!(
        q.reason
            .as_deref()
            .is_some_and(|r| r.contains("8 day buckets")),
        "{q:#?}"
    );
    assert!(q
        .buckets
        .as_deref()
        .is_some_and(|b| b.contains("event_date")));
}

#[test]
fn unmodelled_and_unknown_patterns_are_reported_not_dropped() {
    let patterns = json!([
        {"id": "q1", "fingerprint": "1", "kind": "select", "calls": 1, "sql": "SELECT 1", "unmodeled": "reads no table"},
        {"id": "q2", "fingerprint": "2", "kind": "select", "calls": 1, "sql": "SELECT * FROM nowhere", "tables": ["nowhere"]},
        {"id": "q3", "fingerprint": "3", "kind": "update", "calls": 1, "sql": "UPDATE nowhere SET a = $1"}
    ]);
    let out = run(events_schema(), patterns, None);
    assert_eq!(out.design.queries.len(), 2);
    assert!(out
        .design
        .queries
        .iter()
        .all(|q| !q.single_partition && q.reason.is_some() && q.table.is_none()));
    assert_eq!(out.design.writes.len(), 1);
    assert!(out.design.writes[0].note.is_some());
    assert!(out.diagnostics.len() >= 3, "{:#?}", out.diagnostics);
}
