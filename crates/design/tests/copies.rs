//! Copies the write paths must keep in step (`fixtures/plan/copies/`), the two defects
//! `remodel replay` found in AuctionMark, reduced: a grandparent's column that an UPDATE changes
//! (no write path can find the rows that copy it through two joins) and a partial table (rows
//! with `answer IS NULL`) that copies a parent column an UPDATE changes.

mod support;

use remodel_model::{BindValue, ColumnRef, DesignColumn, Guard, Plan};
use support::pipeline::{pattern_id, plan_fixture, strict_violations};

fn copies() -> Plan {
    plan_fixture("copies")
}

#[test]
fn the_plan_passes_the_validator() {
    let plan = copies();
    let v = strict_violations(&plan);
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn an_updated_grandparent_column_is_read_by_key_not_copied() {
    let plan = copies();
    let d = &plan.design;
    let q = pattern_id(&plan, "SELECT t.item_id");
    let m = d.queries.iter().find(|m| m.pattern == q).expect("mapping");
    let first = m.table.as_deref().expect("a table");
    let t = d.tables.iter().find(|t| t.name == first).expect("table");
    assert!(
        !t.columns.iter().any(|c| c.name == "balance"),
        "{first} copies balance"
    );
    let [step] = m.then.as_slice() else {
        panic!("one lookup after the rows: {:#?}", m.then)
    };
    assert!(step.cql.contains("balance"), "{}", step.cql);
    assert_eq!(
        step.binds[0].value,
        BindValue::Current {
            column: ColumnRef::new("bids", "buyer_id")
        },
        "the account is found by the buyer the bid names"
    );
    assert!(!m.single_partition);
}

#[test]
fn the_validator_finds_a_copy_no_write_keeps_in_step() {
    // The copy the designer no longer makes, put back by hand: `SET balance = balance - $1`
    // writes it (a read-modify-write is a write of the column), so the check (f) must say so.
    let mut plan = copies();
    let q = pattern_id(&plan, "SELECT t.item_id");
    let m = plan.design.queries.iter().find(|m| m.pattern == q);
    let first = m.and_then(|m| m.table.clone()).expect("a table");
    let t = plan.design.tables.iter_mut().find(|t| t.name == first);
    t.expect("table").columns.push(DesignColumn {
        name: "balance".into(),
        cql_type: "decimal".parse().expect("a CQL type"),
        source: Some(ColumnRef::new("accounts", "balance")),
        is_static: false,
        embeds: None,
        encoding: None,
        row_id: None,
        equals: Vec::new(),
    });
    let v = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    let update = pattern_id(&plan, "UPDATE accounts");
    assert!(
        v.iter()
            .any(|x| x.check == "f" && x.message.contains(&update) && x.message.contains(&first)),
        "{v:#?}"
    );
}

#[test]
fn a_partial_table_is_updated_only_for_the_rows_it_holds() {
    let plan = copies();
    let d = &plan.design;
    let price = pattern_id(&plan, "UPDATE items SET price");
    let w = d.writes.iter().find(|w| w.pattern == price).expect("path");
    let partial = d
        .tables
        .iter()
        .find(|t| t.name.contains("_without_answer"))
        .expect("the partial table");
    let targets: Vec<_> = w
        .targets
        .iter()
        .filter(|x| x.table == partial.name)
        .collect();
    assert!(!targets.is_empty(), "{:#?}", w.targets);
    for x in targets {
        assert_eq!(
            x.guard,
            Some(Guard::NewIsNull {
                column: ColumnRef::new("questions", "answer")
            }),
            "{}",
            x.cql
        );
        let ri = x.for_each.expect("once per question of the item");
        let read = &w.read_before_write[ri];
        assert!(
            read.columns.iter().any(|c| c == "answer"),
            "the guard's value is read with the rows: {}",
            read.cql
        );
    }
}
