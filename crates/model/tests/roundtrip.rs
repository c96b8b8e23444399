//! The plan model survives a JSON round trip unchanged.

use remodel_model::*;

fn sample_plan() -> Plan {
    let schema = Schema {
        tables: vec![Table {
            name: "trips".into(),
            columns: vec![
                Column {
                    name: "trip_id".into(),
                    sql_type: "uuid".into(),
                    nullable: false,
                    ..Default::default()
                },
                Column {
                    name: "driver_id".into(),
                    sql_type: "text".into(),
                    nullable: false,
                    ..Default::default()
                },
            ],
            primary_key: vec!["trip_id".into()],
            foreign_keys: vec![ForeignKey {
                name: None,
                columns: vec!["driver_id".into()],
                ref_table: "drivers".into(),
                ref_columns: vec!["driver_id".into()],
                origin: FkOrigin::Inferred {
                    evidence: "naming".into(),
                },
                location: Some(Location::new("schema.sql", 3, 5)),
            }],
            indexes: vec![Index {
                name: "i".into(),
                unique: false,
                method: None,
                keys: vec![IndexKey::Expression {
                    sql: "lower(x)".into(),
                }],
                predicate: Some("x > 0".into()),
                location: None,
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let pattern = AccessPattern {
        id: "q1".into(),
        fingerprint: "00000000deadbeef".into(),
        kind: StatementKind::Select,
        sql: "SELECT * FROM trips WHERE trip_id = $1".into(),
        example: None,
        sent_params: Vec::new(),
        calls: 3,
        total_ms: Some(1.5),
        mean_ms: None,
        rows: None,
        first_seen: None,
        last_seen: None,
        label: None,
        name: None,
        locations: vec![Location::new("q.sql", 1, 1)],
        analysis: PatternAnalysis {
            tables: vec!["trips".into()],
            equality: vec![Predicate {
                column: ColumnRef::new("trips", "trip_id"),
                op: EqualityOp::Eq,
                value: Some("$1".into()),
                rewritten_from: None,
                expr: Some(Expr::param(1)),
            }],
            key_lookup: true,
            ..Default::default()
        },
    };
    Plan {
        format_version: PLAN_FORMAT_VERSION,
        schema,
        workload: Workload {
            patterns: vec![pattern],
            ..Default::default()
        },
        semantics: Semantics {
            time_zone: "Europe/Berlin".into(),
            ..Default::default()
        },
        relationships: vec![Relationship {
            from: "drivers".into(),
            to: "trips".into(),
            columns: vec!["driver_id".into()],
            cardinality: Cardinality::ManyToMany { via: "x".into() },
            decision: Decision::Reference,
            rationale: Rationale {
                rule: "r".into(),
                text: "t".into(),
                ..Default::default()
            },
        }],
        design: Design {
            tables: vec![DesignTable {
                name: "trips_by_id".into(),
                entity: "trips".into(),
                partition_key: vec![KeyColumn {
                    column: "trip_day".into(),
                    cql_type: CqlType::DATE,
                    derived_from: Some("started_at".into()),
                    bucket: Some(Bucket::Day),
                    time_zone: Some("UTC".into()),
                    order: None,
                    constant: None,
                    encoding: None,
                }],
                clustering: vec![],
                columns: vec![],
                serves: vec!["q1".into()],
                source: Default::default(),
                source_sql: "SELECT 1".into(),
                estimates: Estimates::default(),
                warnings: vec![],
                counter: None,
                ttl: None,
                tombstones: None,
            }],
            ..Default::default()
        },
        inputs: vec![InputFile {
            path: "schema.sql".into(),
            role: "schema".into(),
            bytes: 512,
        }],
    }
}

#[test]
fn plan_round_trips_through_json() {
    let plan = sample_plan();
    let json = serde_json::to_string_pretty(&plan).expect("serialize");
    let back: Plan = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(plan, back);
    // The flattened analysis and the bucket fields appear where plan.json readers expect them.
    let v: serde_json::Value = serde_json::from_str(&json).expect("value");
    assert_eq!(v["workload"]["patterns"][0]["key_lookup"], true);
    assert_eq!(
        v["design"]["tables"][0]["partition_key"][0]["bucket"],
        "day"
    );
    assert_eq!(v["design"]["tables"][0]["partition_key"][0]["type"], "date");
}

#[test]
fn run_files_read_partial_and_newer_versions() {
    // A run that stopped early writes only some fields; a newer backfill may add fields and
    // statuses.
    let s: RunSummary = serde_json::from_str(
        r#"{"status": "paused", "tables": [{"name": "t", "rows_read": 5}], "extra": 1}"#,
    )
    .expect("partial summary");
    assert_eq!(s.status, RunStatus::Unknown);
    assert!(!s.complete());
    assert_eq!(s.tables[0].rows_read, 5);
    assert_eq!(s.tables[0].rows_written, 0);
    assert_eq!(s.tables[0].rows_per_second(), None);
    let v: VerifyReport = serde_json::from_str("{}").expect("empty verify");
    assert!(v.tables.is_empty());
}

#[test]
fn run_files_round_trip_and_say_what_they_found() {
    let summary = RunSummary {
        status: RunStatus::Completed,
        run_dir: "runs/1".into(),
        attempt: 2,
        started_at: Some("2026-05-04T09:00:00Z".into()),
        tables: vec![TableRun {
            name: "t".into(),
            rows_read: 10,
            rows_written: 9,
            rows_rejected: 1,
            rows_read_this_run: 6,
            seconds: 2.0,
            rejects_file: Some("rejects/t.jsonl".into()),
            ..TableRun::default()
        }],
        retries: 3,
        retry_causes: RetryCauses {
            timeout: 2,
            unavailable: 1,
            ..RetryCauses::default()
        },
        consistency: Some("LOCAL_QUORUM".into()),
        concurrency: Some(ConcurrencyReport {
            mode: "auto".into(),
            initial: 32,
            current: 64,
            min: 32,
            max: 128,
            changes_total: 1,
            changes: vec![ConcurrencyChange {
                at_seconds: 1.0,
                from: 32,
                to: 64,
                why: "trying more".into(),
            }],
        }),
        ..RunSummary::default()
    };
    let text = serde_json::to_string(&summary).expect("serialize");
    assert!(text.contains(r#""status":"completed""#), "{text}");
    assert_eq!(
        serde_json::from_str::<RunSummary>(&text).expect("read"),
        summary
    );
    assert!(summary.complete());
    assert_eq!(summary.retry_causes.total(), summary.retries);
    assert_eq!(summary.retry_causes.describe(), "2 timeout, 1 unavailable");
    assert_eq!(summary.tables[0].rows_per_second(), Some(3.0));

    let key = |v: &str| vec![("id".to_string(), v.to_string())];
    let verdict = VerifyReport {
        verified_at: None,
        sample: 100,
        consistency: Some("ALL".into()),
        retries: 0,
        tables: vec![TableVerify {
            name: "t".into(),
            expected: 9,
            stored: 9,
            sampled: 9,
            mismatches: vec![
                Mismatch {
                    key: key("1"),
                    column: None,
                    source: "a row".into(),
                    target: "no row with this key".into(),
                },
                Mismatch {
                    key: key("2"),
                    column: Some("a".into()),
                    source: "1".into(),
                    target: "2".into(),
                },
                Mismatch {
                    key: key("2"),
                    column: Some("b".into()),
                    source: "x".into(),
                    target: "y".into(),
                },
            ],
            ..TableVerify::default()
        }],
    };
    let text = serde_json::to_string(&verdict).expect("serialize");
    assert_eq!(
        serde_json::from_str::<VerifyReport>(&text).expect("read"),
        verdict
    );
    let t = &verdict.tables[0];
    assert_eq!((t.missing(), t.differing()), (1, 1));
    assert!(!t.passed() && !verdict.passed());
}

#[test]
fn skip_counts_keep_first_locations() {
    let mut list = Vec::new();
    for i in 0..5 {
        count_skip(
            &mut list,
            "CREATE FUNCTION",
            Some(Location::new("f.sql", i, 1)),
        );
    }
    count_skip(&mut list, "GRANT", None);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].count, 5);
    assert_eq!(list[0].first.len(), SkipCount::MAX_LOCATIONS);
    assert_eq!(list[1].count, 1);
}

/// The counting of cases that reached their assertion, shared with `remodel-sql`'s properties.
#[path = "../../sql/tests/reached/mod.rs"]
mod reached;

mod properties {
    use super::reached::Reached;
    use super::sample_plan;
    use proptest::prelude::*;
    use remodel_model::*;
    use std::collections::BTreeMap;

    /// Text with the characters JSON must escape, quotes, unicode and control characters.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ -~]{0,24}",
            "\\PC{0,12}",
            "[\"\\\\'\n\t\u{0}\u{1f}é€𝄞]{0,8}"
        ]
    }

    fn replication() -> impl Strategy<Value = Replication> {
        prop_oneof![
            any::<u32>().prop_map(|n| Replication::SimpleStrategy {
                replication_factor: n
            }),
            prop::collection::btree_map("[a-z][a-z0-9_-]{0,8}", any::<u32>(), 1..4)
                .prop_filter("`class` is the tag", |m: &BTreeMap<String, u32>| {
                    !m.contains_key("class")
                })
                .prop_map(|datacenters| Replication::NetworkTopologyStrategy { datacenters }),
        ]
    }

    /// Whatever text, counts and replication a plan holds, plan.json gives it back unchanged.
    #[test]
    fn any_plan_round_trips_through_json() {
        let config = super::reached::cases(128);
        let reached = Reached::default();
        proptest!(config.clone(), |(
            name in text(),
            sql in text(),
            example in proptest::option::of(text()),
            calls in any::<u64>(),
            mean in proptest::option::of(-1e300f64..1e300),
            repl in replication(),
        )| {
            let mut plan = sample_plan();
            plan.design.keyspace = Keyspace { name: name.clone(), replication: repl };
            plan.schema.tables[0].name = name;
            let p = &mut plan.workload.patterns[0];
            p.sql = sql;
            p.example = example;
            p.calls = calls;
            p.mean_ms = mean;
            let json = serde_json::to_string_pretty(&plan).expect("serialize");
            let back: Plan = serde_json::from_str(&json).expect("deserialize");
            reached.hit();
            prop_assert_eq!(back, plan);
        });
        reached.assert_share("any_plan_round_trips_through_json", &config, 1.0);
    }
}

/// `Design::statements` lists every statement the application runs, in plan order, labelled.
#[test]
fn design_statements_lists_reads_lookups_and_writes() {
    let design: Design = serde_json::from_value(serde_json::json!({
        "keyspace": {"name": "ks", "replication": {"class": "SimpleStrategy", "replication_factor": 1}},
        "tables": [],
        "queries": [
            {"pattern": "q1", "cql": "SELECT a FROM ks.t WHERE k = ?", "single_partition": true,
             "then": [{"table": "u", "cql": "SELECT b FROM ks.u WHERE a = ?", "binds": []}]},
            {"pattern": "q2", "single_partition": false, "reason": "no table can serve it"}
        ],
        "writes": [
            {"pattern": "q3", "batch_bytes": 0, "fits_batch": true,
             "read_before_write": [
                {"table": "t", "columns": ["a"], "for_tables": ["u"], "cql": "SELECT a FROM ks.t WHERE k = ?"},
                {"table": "v", "columns": ["c"], "for_tables": ["u"], "note": "no table serves it"}
             ],
             "targets": [
                {"table": "t", "cql": "UPDATE ks.t SET a = ? WHERE k = ?"},
                {"table": "u", "cql": "UPDATE ks.u SET b = ? WHERE a = ?"}
             ]}
        ]
    }))
    .expect("a design");
    assert_eq!(
        design.statements(),
        [
            ("q1 read".to_string(), "SELECT a FROM ks.t WHERE k = ?"),
            ("q1 then[0]".to_string(), "SELECT b FROM ks.u WHERE a = ?"),
            (
                "q3 read before write[0]".to_string(),
                "SELECT a FROM ks.t WHERE k = ?"
            ),
            (
                "q3 write of t".to_string(),
                "UPDATE ks.t SET a = ? WHERE k = ?"
            ),
            (
                "q3 write of u".to_string(),
                "UPDATE ks.u SET b = ? WHERE a = ?"
            ),
        ]
    );
}
