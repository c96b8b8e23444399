//! The library example of the plan-correctness issue (`fixtures/plan/library/`): a plan that
//! looked right but would lose or corrupt data. Each defect is asserted gone, the plan passes
//! the validator, and its schema and mapping are kept as reviewed fixtures.

mod support;

use remodel_model::{BindValue, Guard, Plan, WriteAction};
use support::pipeline::{mapping_text, pattern_id, plan_files, plan_fixture, root, write_path_mut};

fn library() -> Plan {
    plan_fixture("library")
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
        let guard = del.guard.as_ref().expect("guarded");
        assert!(
            guard
                .conditions()
                .iter()
                .any(|g| matches!(g, Guard::KeyChanged { .. })),
            "{guard}"
        );
        let due_bind = del
            .binds
            .iter()
            .find(|b| b.column == "due_at")
            .expect("due_at bind");
        // due_at keeps microseconds: the key holds them (a bind of the current value, encoded).
        assert!(
            matches!(&due_bind.value, BindValue::EpochMicros { of, .. } if matches!(**of, BindValue::Current { .. })),
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
            matches!(&due_bind.value, BindValue::EpochMicros { of, .. } if matches!(**of, BindValue::New { .. })),
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

/// The checks the validator names, each of a plan broken on purpose from the library plan.
fn checks_of(plan: &Plan) -> Vec<String> {
    let mut c: Vec<String> =
        remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design)
            .into_iter()
            .map(|v| v.check)
            .collect();
    c.sort();
    c.dedup();
    c
}

#[test]
fn validator_fails_broken_plans() {
    let good = library();
    assert!(checks_of(&good).is_empty());

    // (a) A key that no longer holds a unique key of books: rows would collapse.
    let mut p = good.clone();
    let t = p
        .design
        .tables
        .iter_mut()
        .find(|t| t.name == "books_by_shelf")
        .expect("books_by_shelf");
    t.clustering.retain(|k| k.column != "book_id");
    assert_eq!(checks_of(&p), ["a"]);

    // (b) A read before write that asks a table for a column it lacks (city from books_by_id).
    let mut p = good.clone();
    let w = write_path_mut(&mut p, "UPDATE books SET holds");
    w.read_before_write[0].columns.push("city".into());
    assert!(
        checks_of(&p).contains(&"b".to_string()),
        "{:?}",
        checks_of(&p)
    );

    // (c) Without the read of the branch, the city in the key has no value.
    let mut p = good.clone();
    let w = write_path_mut(&mut p, "UPDATE books SET holds");
    w.read_before_write.retain(|r| r.table != "branches_by_id");
    assert_eq!(checks_of(&p), ["c"]);

    // (d) A key change written as a plain UPDATE of the old row: the moved row stays behind.
    let mut p = good.clone();
    let w = write_path_mut(&mut p, "UPDATE books SET due_at");
    w.targets
        .retain(|t| !(t.table == "books_by_shelf" && t.action == WriteAction::Delete));
    assert_eq!(checks_of(&p), ["d"]);

    // (e) A predicate dropped from a read: the PIN is neither in the key nor filtered. Format 2
    // states the filter twice (SQL text for people, the typed filter an executor applies): the
    // predicate is dropped from both.
    let mut p = good.clone();
    let login = pattern_id(&p, "SELECT member_id FROM members");
    let q = p
        .design
        .queries
        .iter_mut()
        .find(|q| q.pattern == login)
        .expect("login");
    q.client_filters.clear();
    q.client.filters.clear();
    assert_eq!(checks_of(&p), ["e"]);

    // (f) A copy the holds update no longer writes would go stale.
    let mut p = good.clone();
    let holder = p
        .design
        .tables
        .iter()
        .find(|t| t.name != "books_by_id" && t.columns.iter().any(|c| c.name == "holds"))
        .map(|t| t.name.clone())
        .expect("a table besides books_by_id holds `holds`");
    let w = write_path_mut(&mut p, "UPDATE books SET holds");
    w.targets.retain(|t| t.table != holder);
    assert_eq!(checks_of(&p), ["f"]);

    // (c) A statement with more bind markers than binds.
    let mut p = good;
    let w = write_path_mut(&mut p, "UPDATE books SET holds");
    w.targets[0].binds.pop();
    assert!(
        checks_of(&p).contains(&"c".to_string()),
        "{:?}",
        checks_of(&p)
    );
}

/// Types Postgres does not have, or that have no CQL mapping, are warned at the column's
/// declaration (file:line:column) with the type chosen; mapped types are not.
#[test]
fn foreign_types_are_warned_where_declared() {
    let dir = root().join("fixtures/plan/foreign_types");
    let (plan, diags) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "events",
    );
    let warned: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == remodel_model::Severity::Warning)
        .map(|d| {
            let at = d.location.as_ref().map(|l| l.line).unwrap_or(0);
            format!("{at}: {}", d.message)
        })
        .collect();
    assert_eq!(warned.len(), 3, "{warned:#?}");
    assert!(
        warned[0].starts_with("5: events.happened: `datetime`")
            && warned[0].contains("mapped to timestamp"),
        "{warned:#?}"
    );
    assert!(
        warned[1].starts_with("6: events.hits: `integer unsigned`")
            && warned[1].contains("mapped to bigint"),
        "{warned:#?}"
    );
    assert!(
        warned[2].starts_with("7: events.place: `public.geometry`"),
        "{warned:#?}"
    );
    let cql = remodel_design::emit_cql(&plan.design);
    assert!(
        cql.contains("happened timestamp") && cql.contains("hits bigint"),
        "{cql}"
    );
}
