//! Keys that are not unique for the rows they store, two ways (classes 2 and 6 of the
//! silently-wrong issue), each a fixture in `fixtures/plan/<case>/` with its expected `plan.json`
//! and `schema.cql` (UPDATE_EXPECT=1 rewrites them), and the validator's check that fails a plan
//! which loses the decision again.

mod support;

use remodel_model::{BindValue, Encoding, Plan, Warning, WriteAction};
use support::pipeline::{pattern_id, plan_fixture, root};

/// The plan of a fixture, compared with its expected `plan.json` and `schema.cql`.
fn planned(case: &str) -> Plan {
    let plan = plan_fixture(case);
    let violations = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    assert!(violations.is_empty(), "{case}: {violations:#?}");
    let json = serde_json::to_string_pretty(&plan).expect("serialize") + "\n";
    let back: Plan = serde_json::from_str(&json).expect("plan.json reads back");
    assert_eq!(back, plan, "{case}: plan.json round-trips");
    let rel = json.replace(&format!("{}/", root().display()), "");
    let dir = root().join("fixtures/plan").join(case);
    expect_test::expect_file![dir.join("plan.json")].assert_eq(&rel);
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
    plan
}

fn checks(plan: &Plan) -> Vec<String> {
    let mut c: Vec<String> =
        remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design)
            .into_iter()
            .map(|v| v.check)
            .collect();
    c.sort();
    c.dedup();
    c
}

/// Every bind of `column` in the design's statements on `table`.
fn binds_of<'d>(plan: &'d Plan, table: &str, column: &str) -> Vec<&'d BindValue> {
    let d = &plan.design;
    let reads = d
        .queries
        .iter()
        .filter(|q| q.table.as_deref() == Some(table))
        .flat_map(|q| &q.binds);
    let rbw = d
        .writes
        .iter()
        .flat_map(|w| &w.read_before_write)
        .filter(|r| r.table == table)
        .flat_map(|r| &r.binds);
    let targets = d
        .writes
        .iter()
        .flat_map(|w| &w.targets)
        .filter(|t| t.table == table)
        .flat_map(|t| &t.binds);
    reads
        .chain(rbw)
        .chain(targets)
        .filter(|b| b.column == column)
        .map(|b| &b.value)
        .collect()
}

#[test]
fn a_key_timestamp_with_microseconds_is_kept_as_epoch_micros() {
    let plan = planned("ledger_precision");
    let d = &plan.design;
    let ledger = d
        .tables
        .iter()
        .find(|t| t.entity == "ledger")
        .expect("a ledger table");
    let key = ledger
        .clustering
        .iter()
        .find(|k| k.column == "posted_at")
        .expect("posted_at clusters");
    assert_eq!(key.cql_type.to_string(), "bigint");
    assert_eq!(key.encoding, Some(Encoding::EpochMicros));
    let col = ledger.columns.iter().find(|c| c.name == "posted_at");
    assert_eq!(col.and_then(|c| c.encoding), Some(Encoding::EpochMicros));
    assert!(
        ledger
            .source_sql
            .contains("extract(epoch FROM t0.posted_at) * 1000000"),
        "{}",
        ledger.source_sql
    );
    // Every read, read before write and write binds it as microseconds.
    let binds = binds_of(&plan, &ledger.name, "posted_at");
    assert!(binds.len() >= 5, "{binds:?}");
    for b in binds {
        assert!(matches!(b, BindValue::EpochMicros { .. }), "{b}");
    }
    // `timestamptz(3)` keeps milliseconds: CQL's timestamp holds it as it is.
    let audit = d
        .tables
        .iter()
        .find(|t| t.entity == "audit")
        .expect("an audit table");
    let seen = audit.clustering.iter().find(|k| k.column == "seen_at");
    assert_eq!(
        seen.map(|k| (k.cql_type.to_string(), k.encoding)),
        Some(("timestamp".to_string(), None))
    );
}

#[test]
fn the_validator_fails_a_millisecond_key_of_a_microsecond_column() {
    let good = plan_fixture("ledger_precision");
    let mut p = good.clone();
    let t = p
        .design
        .tables
        .iter_mut()
        .find(|t| t.entity == "ledger")
        .expect("ledger table");
    for k in t.clustering.iter_mut().filter(|k| k.column == "posted_at") {
        k.cql_type = "timestamp".parse().expect("a CQL type");
        k.encoding = None;
    }
    for c in t.columns.iter_mut().filter(|c| c.name == "posted_at") {
        c.cql_type = "timestamp".parse().expect("a CQL type");
        c.encoding = None;
    }
    // Its binds and result columns say so too (else check (o) names them).
    let d = &mut p.design;
    let reads = d.queries.iter_mut().flat_map(|q| {
        q.columns
            .iter_mut()
            .filter(|c| c.cql_column.as_deref() == Some("posted_at"))
            .for_each(|c| {
                c.cql_type = Some(remodel_model::CqlType::TIMESTAMP);
                c.encoding = None;
            });
        q.binds.iter_mut()
    });
    let writes = d.writes.iter_mut().flat_map(|w| {
        w.targets.iter_mut().flat_map(|t| t.binds.iter_mut()).chain(
            w.read_before_write
                .iter_mut()
                .flat_map(|r| r.binds.iter_mut()),
        )
    });
    for b in reads.chain(writes).filter(|b| b.column == "posted_at") {
        b.cql_type = remodel_model::CqlType::TIMESTAMP;
    }
    assert_eq!(checks(&p), ["g"]);
    // A stated decision (the collision risk accepted) passes.
    let t = p
        .design
        .tables
        .iter_mut()
        .find(|t| t.entity == "ledger")
        .expect("ledger table");
    t.warnings.push(Warning {
        code: "timestamp_precision".into(),
        message: "rows of one account less than 1 ms apart collapse; accepted".into(),
    });
    assert!(checks(&p).is_empty(), "{:?}", checks(&p));
}

#[test]
fn a_keyless_table_keys_each_row_by_a_generated_id() {
    let plan = planned("keyless_follows");
    let d = &plan.design;
    for entity in ["follows", "likes"] {
        let tables: Vec<_> = d.tables.iter().filter(|t| t.entity == entity).collect();
        assert!(!tables.is_empty(), "{entity}");
        for t in tables {
            let id = t
                .columns
                .iter()
                .find(|c| c.row_id.is_some())
                .unwrap_or_else(|| panic!("{}: no row id", t.name));
            assert_eq!(id.cql_type.to_string(), "uuid");
            assert_eq!(id.row_id.as_ref().map(|r| r.table.as_str()), Some(entity));
            assert!(
                t.clustering.last().is_some_and(|k| k.column == id.name),
                "{}: the row id ends the key",
                t.name
            );
            assert!(t
                .source_sql
                .contains("row_number() OVER (PARTITION BY record_send(r))"));
        }
    }
    // An INSERT binds a new id; a DELETE reads the ids of the rows it picks and deletes each.
    let insert = pattern_id(&plan, "INSERT INTO likes");
    let w = d
        .writes
        .iter()
        .find(|w| w.pattern == insert)
        .expect("insert");
    for t in &w.targets {
        assert!(t
            .binds
            .iter()
            .any(|b| matches!(&b.value, BindValue::RowId { table } if table == "likes")));
    }
    let delete = pattern_id(&plan, "DELETE FROM likes");
    let w = d
        .writes
        .iter()
        .find(|w| w.pattern == delete)
        .expect("delete");
    let r = &w.read_before_write[0];
    assert!(r.many && r.columns.iter().any(|c| c == "row_id"), "{r:?}");
    assert_eq!(
        r.binds
            .iter()
            .map(|b| b.column.as_str())
            .collect::<Vec<_>>(),
        ["user_id", "post_id"],
        "the read picks the rows by every = of the statement"
    );
    for t in &w.targets {
        assert_eq!((t.action, t.for_each), (WriteAction::Delete, Some(0)));
    }
}

#[test]
fn the_validator_fails_a_keyless_table_without_its_row_id() {
    let good = plan_fixture("keyless_follows");
    // The key without the id: equal rows would merge (NOT NULL columns prove nothing).
    let mut p = good.clone();
    let t = p
        .design
        .tables
        .iter_mut()
        .find(|t| t.entity == "follows")
        .expect("follows table");
    t.clustering.retain(|k| k.column != "row_id");
    assert!(checks(&p).contains(&"a".to_string()), "{:?}", checks(&p));
    // A DELETE whose statements do not run per row read: the id has no value.
    let mut p = good.clone();
    let delete = pattern_id(&p, "DELETE FROM follows");
    let w = p
        .design
        .writes
        .iter_mut()
        .find(|w| w.pattern == delete)
        .expect("delete");
    for t in &mut w.targets {
        t.for_each = None;
    }
    assert_eq!(checks(&p), ["c"]);
}

#[test]
fn a_non_key_microsecond_timestamp_cut_to_milliseconds_is_stated() {
    let millis = |plan: &Plan, table: &str| -> Vec<String> {
        let t = plan.design.tables.iter().find(|t| t.name == table);
        t.map(|t| &t.warnings)
            .into_iter()
            .flatten()
            .filter(|w| w.code == "timestamp_millis")
            .map(|w| w.message.clone())
            .collect()
    };
    // `follows.since` (timestamptz) is a regular column: cut, and said so with its source.
    let follows = planned("keyless_follows");
    let said = millis(&follows, "follows_by_follower");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("since (follows.since) keeps microseconds"),
        "{said:?}"
    );
    // A key kept as epoch microseconds loses nothing, and `timestamptz(3)` has nothing to lose.
    let ledger = planned("ledger_precision");
    for t in &ledger.design.tables {
        assert!(millis(&ledger, &t.name).is_empty(), "{}", t.name);
    }
}
