//! The library example of the plan-correctness issue (`fixtures/plan/library/`): a plan that
//! looked right but would lose or corrupt data. Each defect is asserted gone, the plan passes
//! the validator, and its schema and mapping are kept as reviewed fixtures.

mod support;

use remodel_model::{BindValue, Guard, Plan, WriteAction};
use support::pipeline::{mapping_text, plan_files, root};

fn library() -> Plan {
    let dir = root().join("fixtures/plan/library");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "library",
    );
    plan
}

fn pattern_id(plan: &Plan, sql_start: &str) -> String {
    plan.workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with(sql_start))
        .unwrap_or_else(|| panic!("pattern {sql_start}"))
        .id
        .clone()
}

#[test]
fn library_plan_is_safe_to_execute() {
    let plan = library();
    let d = &plan.design;
    let violations = remodel_design::validate::validate(&plan.schema, &plan.workload, d);
    assert!(violations.is_empty(), "{violations:#?}");
    let table = |name: &str| {
        d.tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("table {name}"))
    };

    // 1. The holds update reads each value from a table that has it: the book's shelf and
    //    branch from books_by_id, the branch's city from branches_by_id by that branch.
    let holds = pattern_id(&plan, "UPDATE books SET holds");
    let w = d.writes.iter().find(|w| w.pattern == holds).expect("holds");
    for r in &w.read_before_write {
        let t = table(&r.table);
        for c in &r.columns {
            assert!(
                t.columns.iter().any(|x| x.name == *c),
                "{} has no {c}",
                t.name
            );
        }
    }
    let city = w
        .read_before_write
        .iter()
        .find(|r| r.columns.contains(&"city".to_string()))
        .expect("a read of the city");
    assert_eq!(city.table, "branches_by_id");
    assert!(matches!(
        &city.binds[0].value,
        BindValue::Current { column } if column.table == "books" && column.column == "owner_branch"
    ));

    // 2. Moving a book (due_at is a clustering column): DELETE at the current key, guarded to
    //    run only when it changed, INSERT with the new values — in every table keyed by it.
    let due = pattern_id(&plan, "UPDATE books SET due_at");
    let w = d.writes.iter().find(|w| w.pattern == due).expect("due_at");
    for t in d
        .tables
        .iter()
        .filter(|t| t.clustering.iter().any(|k| k.column == "due_at"))
    {
        let del = w
            .targets
            .iter()
            .find(|x| x.table == t.name && x.action == WriteAction::Delete)
            .unwrap_or_else(|| panic!("no DELETE on {}", t.name));
        assert!(matches!(del.guard, Some(Guard::KeyChanged { .. })));
        let due_bind = del
            .binds
            .iter()
            .find(|b| b.column == "due_at")
            .expect("due_at bind");
        assert!(
            matches!(due_bind.value, BindValue::Current { .. }),
            "{due_bind:?}"
        );
        let ins = w
            .targets
            .iter()
            .find(|x| x.table == t.name && x.action == WriteAction::Insert)
            .unwrap_or_else(|| panic!("no INSERT on {}", t.name));
        let due_bind = ins
            .binds
            .iter()
            .find(|b| b.column == "due_at")
            .expect("due_at bind");
        assert!(
            matches!(due_bind.value, BindValue::New { .. }),
            "{due_bind:?}"
        );
    }

    // 4. A parameter LIMIT is a bind marker; OFFSET is stated, and the client skips the rows.
    let paged = pattern_id(&plan, "SELECT book_id, title FROM books WHERE shelf");
    let q = d
        .queries
        .iter()
        .find(|q| q.pattern == paged)
        .expect("paged read");
    assert!(
        q.cql.as_deref().is_some_and(|c| c.ends_with("LIMIT ?")),
        "{q:#?}"
    );
    assert!(q.notes.iter().any(|n| n.contains("OFFSET")), "{q:#?}");
    let literal = pattern_id(&plan, "SELECT b.book_id");
    let q = d
        .queries
        .iter()
        .find(|q| q.pattern == literal)
        .expect("shelf/city read");
    assert!(
        q.cql.as_deref().is_some_and(|c| c.ends_with("LIMIT ?")),
        "{q:#?}"
    );

    // 5. `email` is unique: the login reads members by email and compares the PIN on the
    //    client; no table is keyed by the PIN.
    let login = pattern_id(&plan, "SELECT member_id FROM members");
    let q = d
        .queries
        .iter()
        .find(|q| q.pattern == login)
        .expect("login");
    assert_eq!(q.table.as_deref(), Some("members_by_email"));
    assert_eq!(q.client_filters, ["members.pin = $2"]);
    assert!(d.tables.iter().all(|t| t
        .partition_key
        .iter()
        .chain(&t.clustering)
        .all(|k| k.column != "pin")));

    // Every read is one partition or says why.
    for q in &d.queries {
        assert!(q.single_partition || q.reason.is_some(), "{q:#?}");
    }
    let dir = root().join("fixtures/plan/library");
    expect_test::expect_file![dir.join("schema.cql")].assert_eq(&remodel_design::emit_cql(d));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
}
