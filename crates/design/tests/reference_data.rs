//! Whole-table reads of small tables (categories, statuses): one constant partition, as experts
//! do, instead of a full scan — bounded by the row count (`fixtures/plan/reference_data/`).

mod support;

use remodel_model::Statistics;
use support::pipeline::{mapping_text, plan_files, root, strict_violations};

fn plan(stats: Option<&Statistics>) -> remodel_model::Plan {
    let dir = root().join("fixtures/plan/reference_data");
    plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        stats,
        "shop",
    )
    .0
}

#[test]
fn small_tables_read_whole_live_in_one_partition() {
    let p = plan(None);
    let d = &p.design;
    let violations = strict_violations(&p);
    assert!(violations.is_empty(), "{violations:#?}");
    let t = d
        .tables
        .iter()
        .find(|t| t.name == "categories_all")
        .expect("categories_all");
    assert_eq!(t.partition_key.len(), 1);
    assert_eq!(t.partition_key[0].constant.as_deref(), Some("all"));
    let ck: Vec<&str> = t.clustering.iter().map(|k| k.column.as_str()).collect();
    assert_eq!(ck, ["name", "category_id"]);
    assert!(
        t.warnings.iter().any(|w| w.code == "one_partition"),
        "{:#?}",
        t.warnings
    );
    let q = d
        .queries
        .iter()
        .find(|q| q.table.as_deref() == Some("categories_all"))
        .expect("read");
    assert!(q.single_partition);
    assert!(
        q.cql
            .as_deref()
            .is_some_and(|c| c.contains("WHERE part = ? ORDER BY name ASC")),
        "{q:#?}"
    );
    let dir = root().join("fixtures/plan/reference_data");
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&remodel_design::emit_cql(d));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&p));
}

#[test]
fn a_large_table_read_whole_stays_a_scan_with_its_reason() {
    let stats: Statistics = serde_json::from_value(serde_json::json!({
        "tables": {"categories": {"rows": 50000}}
    }))
    .expect("stats");
    let p = plan(Some(&stats));
    let q = p
        .design
        .queries
        .iter()
        .find(|q| q.cql.as_deref().is_some_and(|c| c.contains("categories")))
        .expect("read");
    assert!(!q.single_partition);
    assert!(
        q.reason.as_deref().is_some_and(|r| r.contains("full scan")),
        "{q:#?}"
    );
}
