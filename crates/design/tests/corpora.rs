//! The designer on the BenchBase corpora (real schemas and the statements their procedures run):
//! every read is single-partition or says why, no CQL needs ALLOW FILTERING, and the schema and
//! every mapped statement pass the CQL checker. Expected schema.cql and the query mapping are kept
//! in `fixtures/plan/<corpus>/` (UPDATE_EXPECT=1 rewrites them).

mod support;

use support::cqlcheck::Catalog;
use support::pipeline::{mapping_text, plan_corpus, root};

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
    let cql = remodel_design::emit_cql(d);
    assert!(!cql.contains("ALLOW FILTERING"), "{name}: schema.cql");
    let mut cat = Catalog::default();
    cat.load_schema(&cql)
        .unwrap_or_else(|e| panic!("{name}: schema.cql: {e}\n{cql}"));
    for q in &d.queries {
        if let Some(c) = &q.cql {
            cat.check(c)
                .unwrap_or_else(|e| panic!("{name} {}: {e}\n{c}", q.pattern));
        }
    }
    for w in &d.writes {
        for t in &w.targets {
            cat.check(&t.cql)
                .unwrap_or_else(|e| panic!("{name} {}: {e}\n{}", w.pattern, t.cql));
        }
    }
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
