//! A bounded one-to-many read together with its parent (`fixtures/plan/embed_one_to_few/`), through
//! the real pipeline: the analyzer embeds the children, the designer stores them in a map of a
//! frozen user type in the parent's table, serves the join from the parent's one partition and
//! turns child writes into collection updates. Expected `schema.cql` and mapping are kept next to
//! the inputs (UPDATE_EXPECT=1 rewrites them).

mod support;

use remodel_model::{Cardinality, CqlType, Decision};
use support::cqlcheck::check_design;
use support::pipeline::{mapping_text, plan_files, root, strict_violations};

#[test]
fn bounded_children_read_with_their_parent_become_a_map_of_a_frozen_udt() {
    let dir = root().join("fixtures/plan/embed_one_to_few");
    let (plan, diags) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "shop",
    );
    assert!(
        diags
            .iter()
            .all(|d| d.severity < remodel_model::Severity::Warning),
        "{diags:?}"
    );

    // The analyzer: customers 1-N customer_addresses, bounded (5,000 inserted for 2,000 customers).
    let rel = plan
        .relationships
        .iter()
        .find(|r| r.from == "customers" && r.to == "customer_addresses")
        .expect("relationship customers -> customer_addresses");
    assert_eq!(rel.cardinality, Cardinality::OneToMany);
    assert_eq!(rel.decision, Decision::Embed, "{:?}", rel.rationale);
    assert_eq!(rel.rationale.bounded, Some(true));
    assert_eq!(rel.rationale.fanout, Some(2.5));

    // The designer: one table, the parent's, with the collection; the entry type.
    let d = &plan.design;
    let names: Vec<&str> = d.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["customers_by_id"], "no separate child table");
    let t = &d.tables[0];
    let col = t
        .columns
        .iter()
        .find(|c| c.name == "addresses")
        .expect("collection column");
    assert_eq!(col.cql_type.to_string(), "map<text, frozen<address_entry>>");
    assert_eq!(d.types.len(), 1);
    assert_eq!(d.types[0].name, "address_entry");
    assert_eq!(
        d.types[0].fields,
        [
            ("label".to_string(), CqlType::TEXT),
            ("street".to_string(), CqlType::TEXT),
            ("city".to_string(), CqlType::TEXT)
        ]
    );
    assert_eq!(
        t.source_sql,
        "SELECT t0.id, t0.name, e0.addresses FROM customers t0 LEFT JOIN LATERAL \
         (SELECT json_object_agg(c.label, json_build_object('label', c.label, 'street', c.street, \
         'city', c.city)) AS addresses FROM customer_addresses c WHERE c.customer_id = t0.id) e0 ON true"
    );

    // Each customer row carries its 2.5 addresses of three text columns.
    let entry = 3.0 * remodel_design::candidates::type_mapping::default_width("text");
    assert!(
        t.estimates.bytes_per_partition_avg >= 2.5 * entry,
        "{:?}",
        t.estimates
    );

    // The join is one partition of the parent's table, the collection projected.
    let q1 = d.queries.iter().find(|q| q.pattern == "q1").expect("q1");
    assert!(q1.single_partition);
    assert_eq!(q1.table.as_deref(), Some("customers_by_id"));
    assert_eq!(
        q1.cql.as_deref(),
        Some("SELECT name, addresses FROM shop.customers_by_id WHERE id = ?")
    );
    assert!(t.serves.contains(&"q1".to_string()));

    // Child writes: INSERT puts an entry in the map.
    let write = |sql_start: &str| {
        let p = plan
            .workload
            .patterns
            .iter()
            .find(|p| p.sql.starts_with(sql_start))
            .unwrap_or_else(|| panic!("pattern {sql_start}"));
        d.writes
            .iter()
            .find(|w| w.pattern == p.id)
            .expect("write path")
    };
    let ins = write("INSERT INTO customer_addresses");
    let cql: Vec<&str> = ins.targets.iter().map(|t| t.cql.as_str()).collect();
    assert_eq!(
        cql,
        ["UPDATE shop.customers_by_id SET addresses = addresses + ? WHERE id = ?"]
    );
    assert!(ins.read_before_write.is_empty());
    assert!(ins
        .note
        .as_deref()
        .is_some_and(|n| n.contains("idempotent")));
    // The statements bind the map key: UPDATE sets that entry (it sets every field, so nothing
    // is read first), DELETE removes it; neither rewrites the whole collection.
    let up = write("UPDATE customer_addresses");
    let cql: Vec<&str> = up.targets.iter().map(|t| t.cql.as_str()).collect();
    assert_eq!(
        cql,
        ["UPDATE shop.customers_by_id SET addresses[?] = ? WHERE id = ?"]
    );
    assert!(up.read_before_write.is_empty(), "{up:#?}");
    let del = write("DELETE FROM customer_addresses");
    let cql: Vec<&str> = del.targets.iter().map(|t| t.cql.as_str()).collect();
    assert_eq!(
        cql,
        ["DELETE addresses[?] FROM shop.customers_by_id WHERE id = ?"]
    );
    assert!(del.read_before_write.is_empty());
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");

    // The CQL: the type before the table, and every statement accepted by the checker.
    let schema_cql = remodel_design::emit_cql(d);
    let ty = schema_cql
        .find("CREATE TYPE IF NOT EXISTS shop.address_entry (label text, street text, city text);")
        .expect("CREATE TYPE");
    let table = schema_cql
        .find("CREATE TABLE IF NOT EXISTS shop.customers_by_id")
        .expect("CREATE TABLE");
    assert!(ty < table, "the type is created before the table using it");
    check_design("embed_one_to_few", d);
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&schema_cql);
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
}
