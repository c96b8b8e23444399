//! New ids after the cut-over (`design.ids`): a column a write path gives a sequence's next
//! value states how a writer that reaches only Cassandra makes one — a time-ordered 64-bit id
//! where the column holds 64 bits, the application's otherwise — and the validator refuses a
//! plan that leaves one out or gives a narrow column a time-ordered id.

mod support;

use remodel_model::{ColumnRef, IdStrategy, Plan};
use support::pipeline::{plan_schema, root};

/// `fixtures/plan/defaults/` planned with `ticket_notes.note_id` declared as `note_type`.
fn defaults_with(note_type: &str) -> Plan {
    let dir = root().join("fixtures/plan/defaults");
    let mut ddl = remodel_sql::ddl::load_files(&[dir.join("schema.sql")]).expect("schema");
    let note_id = ddl
        .schema
        .tables
        .iter_mut()
        .find(|t| t.name == "ticket_notes")
        .and_then(|t| t.columns.iter_mut().find(|c| c.name == "note_id"))
        .expect("ticket_notes.note_id");
    note_id.sql_type = note_type.into();
    plan_schema(&ddl.schema, &[dir.join("queries.sql")], None, "defaults").0
}

fn note_id() -> ColumnRef {
    ColumnRef::new("ticket_notes", "note_id")
}

fn id_messages(plan: &Plan) -> Vec<String> {
    remodel_design::validate::validate_plan(plan)
        .into_iter()
        .map(|v| v.message)
        .filter(|m| m.contains("design.ids"))
        .collect()
}

#[test]
fn a_bigserial_gets_a_time_ordered_id_and_a_serial_the_applications() {
    let plan = defaults_with("bigserial");
    let ids: Vec<_> = plan
        .design
        .ids
        .iter()
        .map(|i| (&i.column, i.strategy))
        .collect();
    assert_eq!(ids, [(&note_id(), IdStrategy::TIME_ORDERED)]);
    assert!(id_messages(&plan).is_empty(), "{:?}", id_messages(&plan));
    let narrow = defaults_with("serial");
    let ids: Vec<_> = narrow
        .design
        .ids
        .iter()
        .map(|i| (&i.column, i.strategy))
        .collect();
    assert_eq!(ids, [(&note_id(), IdStrategy::Application)]);
    assert!(
        narrow.design.ids[0].reason.contains("32-bit"),
        "{:?}",
        narrow.design.ids
    );
    assert!(
        id_messages(&narrow).is_empty(),
        "{:?}",
        id_messages(&narrow)
    );
}

#[test]
fn the_validator_refuses_a_missing_or_unfit_id_strategy() {
    let mut missing = defaults_with("bigserial");
    missing.design.ids.clear();
    let found = id_messages(&missing);
    assert!(
        found.len() == 1 && found[0].contains("ticket_notes.note_id"),
        "{found:?}"
    );
    let mut unfit = defaults_with("serial");
    unfit.design.ids[0].strategy = IdStrategy::TIME_ORDERED;
    let found = id_messages(&unfit);
    assert!(
        found.len() == 1 && found[0].contains("cannot hold"),
        "{found:?}"
    );
}
