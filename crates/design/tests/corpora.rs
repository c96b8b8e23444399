//! The designer on the BenchBase corpora (real schemas and the statements their procedures run):
//! every read is single-partition or says why, no CQL needs ALLOW FILTERING, and the schema and
//! every mapped statement pass the CQL checker. Expected schema.cql and the query mapping are kept
//! in `fixtures/plan/<corpus>/` (UPDATE_EXPECT=1 rewrites them).

mod support;

use support::contract::assert_follows_schema;
use support::cqlcheck::{check_design, Catalog};
use support::pipeline::{mapping_text, plan_corpus, root, strict_violations};

fn check_corpus(name: &str) {
    let (plan, _diags) = plan_corpus(name);
    let d = &plan.design;
    let reads = plan
        .workload
        .patterns
        .iter()
        .filter(|p| !p.kind.is_write())
        .count();
    assert_eq!(
        d.queries.len(),
        reads,
        "{name}: every read pattern is mapped"
    );
    assert!(!d.tables.is_empty(), "{name}: no table designed");
    for q in &d.queries {
        assert!(
            q.single_partition || q.reason.as_deref().is_some_and(|r| !r.is_empty()),
            "{name} {}: neither single-partition nor a reason",
            q.pattern
        );
    }
    let violations = strict_violations(&plan);
    assert!(
        violations.is_empty(),
        "{name}: the plan fails its checks: {violations:#?}"
    );
    assert_follows_schema(name, &plan);
    // Every emitted statement (read, lookup, write, read before write) passes the checker
    // against schema.cql: none needs ALLOW FILTERING.
    assert!(check_design(name, d) > 0, "{name}: no statement emitted");
    let cql = remodel_design::emit_cql(d);
    for s in &d.suggestions {
        if let Some(c) = &s.cql {
            let mut c2 = Catalog::default();
            c2.load_schema(&format!("CREATE KEYSPACE {} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}};\n{c};", d.keyspace.name))
                .unwrap_or_else(|e| panic!("{name} suggestion {}: {e}\n{c}", s.pattern));
        }
    }
    let dir = root().join("fixtures/plan").join(name);
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&cql);
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
}

#[test]
fn tpcc() {
    check_corpus("tpcc");
}

#[test]
fn seats() {
    check_corpus("seats");
}

#[test]
fn twitter() {
    check_corpus("twitter");
}

#[test]
fn wikipedia() {
    check_corpus("wikipedia");
}

#[test]
fn smallbank() {
    check_corpus("smallbank");
}

#[test]
fn auctionmark() {
    check_corpus("auctionmark");
}

/// Inputs beyond the six: real pg_dump features (pagila: partitions, views, functions), a
/// voter schema with views, README examples with window functions and CTEs, and a pgbench log
/// read through the log front end. The designer must not panic, and what it emits must be valid.
#[test]
fn other_inputs_plan_to_valid_cql() {
    use support::pipeline::plan_files;
    let c = root().join("fixtures/corpora");
    let cases: [(&str, Vec<std::path::PathBuf>, Vec<std::path::PathBuf>); 4] = [
        (
            "voter",
            vec![c.join("voter/ddl-postgres.sql")],
            vec![c.join("voter/queries.sql")],
        ),
        (
            "pagila",
            vec![c.join("pagila/pagila-schema.sql")],
            vec![c.join("pagila/queries.sql")],
        ),
        (
            "pagila_readme",
            vec![c.join("pagila/pagila-schema.sql")],
            vec![c.join("pagila/readme-examples.sql")],
        ),
        (
            "pgbench",
            vec![c.join("pgbadger-logs/pgbench-schema.sql")],
            vec![c.join("pgbadger-logs/light.postgres.log.bz2")],
        ),
    ];
    for (name, schema, queries) in cases {
        let (plan, _) = plan_files(&schema, &queries, None, name);
        let d = &plan.design;
        for q in &d.queries {
            assert!(
                q.single_partition || q.reason.is_some(),
                "{name} {}",
                q.pattern
            );
        }
        check_design(name, d);
    }
}
