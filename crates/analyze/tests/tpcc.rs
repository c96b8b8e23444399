//! TPC-C (BenchBase, `fixtures/corpora/tpcc`): every statement classified, Stock-Level's join and
//! count, New-Order's composite-key lookups.

mod common;

use common::*;
use remodel_model::{ColumnRef, StatementKind};
use remodel_sql::workload::Format;

fn tpcc() -> remodel_model::Analysis {
    load_and_analyze(
        &["fixtures/corpora/tpcc/ddl-postgres.sql"],
        &["fixtures/corpora/tpcc/queries.sql"],
        Format::Sql,
    )
}

#[test]
fn every_statement_is_classified() {
    let a = tpcc();
    assert!(
        a.workload.patterns.len() >= 30,
        "{}",
        a.workload.patterns.len()
    );
    for p in &a.workload.patterns {
        let x = &p.analysis;
        assert!(
            x.unmodeled.is_none(),
            "{}: {:?} ({})",
            p.id,
            x.unmodeled,
            p.sql
        );
        assert!(!x.tables.is_empty(), "{}: no table ({})", p.id, p.sql);
        if p.kind.is_write() {
            assert!(x.write.is_some(), "{}: no write info", p.id);
        } else {
            assert!(
                !x.projection.is_empty() || !x.aggregates.is_empty(),
                "{}: reads nothing",
                p.id
            );
        }
        // Every column named in a filter exists in the schema.
        for e in &x.equality {
            let t = a.schema.table(&e.column.table).expect("table");
            assert!(
                t.column(&e.column.column).is_some(),
                "{}: {}",
                p.id,
                e.column
            );
        }
    }
}

#[test]
fn stock_level_join_and_count() {
    let a = tpcc();
    let p = find(&a, &["count(distinct"]);
    let x = &p.analysis;
    assert_eq!(x.tables, ["order_line", "stock"]);
    assert_eq!(x.join_path.len(), 1);
    let j = &x.join_path[0];
    assert_eq!(
        (j.left_table.as_str(), j.left_columns.as_slice()),
        ("order_line", &["ol_i_id".to_string()][..])
    );
    assert_eq!(
        (j.right_table.as_str(), j.right_columns.as_slice()),
        ("stock", &["s_i_id".to_string()][..])
    );
    // The join uses the item half of order_line's (ol_supply_w_id, ol_i_id) -> stock key.
    assert_eq!(
        j.foreign_key.as_deref(),
        Some("order_line(ol_supply_w_id, ol_i_id) -> stock(s_w_id, s_i_id)")
    );
    assert_eq!(x.aggregates.len(), 1);
    assert_eq!(x.aggregates[0].function, "count");
    assert!(x.aggregates[0].distinct);
    assert_eq!(
        x.aggregates[0].column,
        Some(ColumnRef::new("stock", "s_i_id"))
    );
    let eq: Vec<String> = x.equality.iter().map(|e| e.column.to_string()).collect();
    assert_eq!(
        eq,
        ["order_line.ol_w_id", "order_line.ol_d_id", "stock.s_w_id"]
    );
    let ol = x
        .ranges
        .iter()
        .find(|r| r.column == ColumnRef::new("order_line", "ol_o_id"))
        .expect("ol_o_id range");
    assert!(ol.lower.is_some() && ol.upper.is_some());
    assert!(x
        .ranges
        .iter()
        .any(|r| r.column == ColumnRef::new("stock", "s_quantity") && r.upper.is_some()));
    assert_eq!(x.rows_expected, Some(1.0), "one count per call");
}

#[test]
fn new_order_composite_key_lookups() {
    let a = tpcc();
    for (needles, table) in [
        (&["c_discount", "from customer"][..], "customer"),
        (&["w_tax", "from warehouse"][..], "warehouse"),
        (&["d_next_o_id, d_tax"][..], "district"),
        (&["i_price", "from item"][..], "item"),
        (&["s_quantity, s_data", "from stock"][..], "stock"),
    ] {
        let p = find(&a, needles);
        assert_eq!(p.analysis.tables, [table]);
        assert!(p.analysis.key_lookup, "{}: {}", p.id, p.sql);
        assert_eq!(p.analysis.rows_expected, Some(1.0));
    }
    // Customer by last name binds (c_w_id, c_d_id) but not c_id: not a key lookup.
    let by_name = find(&a, &["c_last =", "order by c_first"]);
    assert!(!by_name.analysis.key_lookup);
    assert_eq!(
        by_name.analysis.order_by[0].column,
        ColumnRef::new("customer", "c_first")
    );
    // Writes by composite primary key.
    let upd = find(&a, &["update district", "set d_next_o_id = d_next_o_id +"]);
    let w = upd.analysis.write.as_ref().expect("write");
    assert!(w.by_primary_key);
    assert_eq!(w.columns_written, ["d_next_o_id"]);
    let del = a
        .workload
        .patterns
        .iter()
        .find(|p| p.kind == StatementKind::Delete)
        .expect("delete");
    assert!(del
        .analysis
        .write
        .as_ref()
        .is_some_and(|w| w.by_primary_key && w.table == "new_order"));
    // The oldest new order of a district: ORDER BY with LIMIT 1.
    let oldest = find(&a, &["select no_o_id from new_order"]);
    assert_eq!(oldest.analysis.limit, Some(1));
}

#[test]
fn order_lines_of_an_order_are_a_bounded_few() {
    let a = tpcc();
    // New-Order inserts about ten order lines per order: N is bounded and known from the rates.
    let r = a
        .relationships
        .iter()
        .find(|r| r.from == "oorder" && r.to == "order_line")
        .expect("oorder -> order_line");
    assert_eq!(r.rationale.bounded, Some(true), "{}", r.rationale.text);
    let n = r.rationale.fanout.expect("fan-out");
    assert!((5.0..=15.0).contains(&n), "{n}");
    // …so the Order-Status read of one order's lines expects that many rows.
    let p = find(
        &a,
        &["ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d"],
    );
    assert_eq!(p.analysis.rows_expected, Some(n));
    // A customer's orders grow without bound.
    let r = a
        .relationships
        .iter()
        .find(|r| r.from == "customer" && r.to == "oorder")
        .expect("customer -> oorder");
    assert_eq!(r.rationale.bounded, Some(false));
}
