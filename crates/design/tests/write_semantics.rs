//! Write paths that do what their SQL does (issue 20, classes 3–5), on the fixtures
//! `fixtures/plan/defaults`, `upserts` and `write_filters`: defaults, sequences and generated
//! columns given to every copy; upserts as a read of the existing row; the row an `UPDATE … FROM`
//! joins read by name; every condition of an UPDATE/DELETE applied. Each fixture's expected write
//! paths are `writes.json` beside it, with `mapping.txt` and `schema.cql` (UPDATE_EXPECT=1
//! rewrites them). Each validator check of these classes is shown to fail on a path broken by
//! hand.

mod support;

use remodel_model::{
    BindValue, ColumnRef, ConflictAction, Expr, Function, Plan, RowRef, ValueOrigin, Violation,
    WritePath,
};
use support::pipeline::{mapping_text, pattern_id, plan_fixture, root, write_path, write_path_mut};

fn planned(case: &str) -> Plan {
    let plan = plan_fixture(case);
    let v = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    assert!(v.is_empty(), "{case}: {v:#?}");
    let dir = root().join("fixtures/plan").join(case);
    let writes = serde_json::to_string_pretty(&plan.design.writes).expect("json") + "\n";
    expect_test::expect_file![dir.join("writes.json")].assert_eq(&writes);
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
    plan
}

fn violations(plan: &Plan) -> Vec<Violation> {
    remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design)
}

/// Asserts that check `check` reports `needle` for the pattern of `sql_start`.
fn fails(plan: &Plan, check: &str, sql_start: &str, needle: &str) {
    let id = pattern_id(plan, sql_start);
    let v = violations(plan);
    assert!(
        v.iter().any(|x| x.check == check
            && x.message.contains(&format!("write {id}:"))
            && x.message.contains(needle)),
        "expected ({check}) on {id} naming {needle}: {v:#?}"
    );
}

fn value<'p>(w: &'p WritePath, column: &str) -> &'p remodel_model::NewValue {
    w.values
        .iter()
        .find(|v| v.column.column == column)
        .unwrap_or_else(|| panic!("no value for {column}: {:#?}", w.values))
}

#[test]
fn class3_an_insert_gives_every_copy_its_defaults_and_generated_columns() {
    let plan = planned("defaults");
    let w = write_path(&plan, "INSERT INTO tickets");
    assert!(w.unsupported.is_none(), "{w:#?}");
    assert_eq!(value(w, "opened_at").value, Expr::Now);
    assert_eq!(value(w, "opened_at").origin, ValueOrigin::Default);
    assert!(matches!(
        value(w, "ref").value,
        Expr::Call {
            function: Function::GenRandomUuid,
            ..
        }
    ));
    assert_eq!(value(w, "title_upper").value.to_string(), "upper($2)");
    assert_eq!(value(w, "title_upper").origin, ValueOrigin::Generated);
    // Every table of the row binds each value it holds (tickets_by_status is keyed by status,
    // which only the default gives).
    for t in &w.targets {
        let table = plan.design.tables.iter().find(|x| x.name == t.table);
        for c in table.expect("table").columns.iter() {
            let Some(src) = &c.source else { continue };
            assert!(
                t.binds.iter().any(|b| b.column == c.name
                    && b.value
                        == BindValue::New {
                            column: src.clone()
                        }),
                "{}: {} not bound: {}",
                t.table,
                c.name,
                t.cql
            );
        }
    }
    let notes = write_path(&plan, "INSERT INTO ticket_notes");
    assert_eq!(value(notes, "note_id").origin, ValueOrigin::Identity);
    assert!(notes
        .warnings
        .iter()
        .any(|x| x.code == "identity_allocation"));
    let audit = write_path(&plan, "INSERT INTO ticket_audit");
    let why = audit.unsupported.as_deref().expect("not modelled");
    assert!(why.contains("current_user"), "{why}");
    assert!(audit.targets.is_empty());
}

#[test]
fn class3_an_update_recomputes_the_generated_column_in_every_copy() {
    let plan = planned("defaults");
    let w = write_path(&plan, "UPDATE tickets SET title");
    assert_eq!(value(w, "title_upper").value.to_string(), "upper($1)");
    let holding: Vec<&str> = plan
        .design
        .tables
        .iter()
        .filter(|t| t.columns.iter().any(|c| c.name == "title_upper"))
        .map(|t| t.name.as_str())
        .collect();
    assert!(!holding.is_empty());
    for t in holding {
        assert!(
            w.targets
                .iter()
                .any(|x| x.table == t && x.cql.contains("title_upper")),
            "{t} keeps a stale title_upper: {:#?}",
            w.targets
        );
    }
}

#[test]
fn class3_checks_fail_on_paths_broken_by_hand() {
    let mut plan = planned("defaults");
    write_path_mut(&mut plan, "INSERT INTO tickets")
        .values
        .retain(|v| v.column.column != "opened_at");
    fails(&plan, "h", "INSERT INTO tickets", "tickets.opened_at");

    let mut plan = planned("defaults");
    for t in &mut write_path_mut(&mut plan, "INSERT INTO tickets").targets {
        t.binds.retain(|b| b.column != "ref");
        t.cql = t.cql.replacen("?, ", "", 1);
    }
    fails(&plan, "h", "INSERT INTO tickets", "new(tickets.ref)");

    let mut plan = planned("defaults");
    write_path_mut(&mut plan, "UPDATE tickets SET title")
        .values
        .retain(|v| v.column.column != "title_upper");
    fails(
        &plan,
        "i",
        "UPDATE tickets SET title",
        "tickets.title_upper",
    );
}

#[test]
fn class4_an_upsert_reads_the_existing_row_and_says_it_is_not_atomic() {
    let plan = planned("upserts");
    let w = write_path(&plan, "INSERT INTO cart_items");
    let u = w.upsert.as_ref().expect("an upsert");
    assert_eq!(
        u.conflict,
        [
            ColumnRef::new("cart_items", "cart_id"),
            ColumnRef::new("cart_items", "sku")
        ]
    );
    let existing = &w.read_before_write[u.existing];
    assert!(!existing.many);
    assert!(
        existing.cql.contains("\"qty\"") || existing.cql.contains(" qty"),
        "{}",
        existing.cql
    );
    let ConflictAction::Update { set, filter } = &u.action else {
        panic!("DO UPDATE: {:#?}", u.action)
    };
    assert!(filter.is_empty());
    assert_eq!(
        set[0].value.to_string(),
        "cart_items.qty + EXCLUDED.qty",
        "{set:#?}"
    );
    let warning = w.warnings.iter().find(|x| x.code == "not_atomic");
    assert!(
        warning.is_some_and(|x| x.message.contains("counter")),
        "{:#?}",
        w.warnings
    );

    let nothing = write_path(&plan, "INSERT INTO subscribers (id, email, name) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING");
    let u = nothing.upsert.as_ref().expect("an upsert");
    assert_eq!(u.action, ConflictAction::Nothing);
    let read = &nothing.read_before_write[u.existing];
    assert!(
        read.binds.iter().any(|b| b.value
            == BindValue::New {
                column: ColumnRef::new("subscribers", "email")
            }),
        "read by the proposed email: {read:#?}"
    );

    let update = write_path(&plan, "INSERT INTO subscribers (id, email, name) VALUES ($1, $2, $3) ON CONFLICT (email) DO UPDATE");
    let Some(ConflictAction::Update { filter, .. }) = update.upsert.as_ref().map(|u| &u.action)
    else {
        panic!("{update:#?}")
    };
    assert_eq!(filter.len(), 1, "the WHERE of DO UPDATE");
}

#[test]
fn class4_a_self_join_reads_the_other_row_by_name() {
    let plan = planned("upserts");
    let w = write_path(&plan, "UPDATE accounts");
    let step = w
        .read_before_write
        .iter()
        .find(|r| r.name.as_deref() == Some("s"))
        .unwrap_or_else(|| panic!("a read named s: {w:#?}"));
    assert_eq!(
        step.binds[0].value,
        BindValue::Expr {
            expr: Expr::param(2)
        }
    );
    assert_eq!(
        value(w, "balance").value,
        Expr::Column {
            column: ColumnRef::new("accounts", "balance"),
            row: RowRef::Step { name: "s".into() }
        }
    );
    // The target's own row is found by $1, the statement's WHERE.
    let target = &w.targets[0];
    assert!(target.binds.iter().any(|b| b.value
        == BindValue::Current {
            column: ColumnRef::new("accounts", "id")
        }));
}

#[test]
fn class4_checks_fail_on_paths_broken_by_hand() {
    let mut plan = planned("upserts");
    write_path_mut(&mut plan, "INSERT INTO cart_items").upsert = None;
    fails(&plan, "j", "INSERT INTO cart_items", "plain INSERT");

    let mut plan = planned("upserts");
    let w = write_path_mut(&mut plan, "UPDATE accounts");
    for r in &mut w.read_before_write {
        r.name = None;
    }
    fails(&plan, "l", "UPDATE accounts", "s.balance");
}

#[test]
fn class5_every_condition_of_a_write_is_applied_by_a_filtered_read() {
    let plan = planned("write_filters");
    let w = write_path(
        &plan,
        "DELETE FROM sessions WHERE user_id = $1 AND revoked_at IS NULL",
    );
    let rows = w.targets[0].for_each.expect("each kept row");
    let filter: Vec<String> = w.read_before_write[rows]
        .filter
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(filter, ["sessions.revoked_at IS NULL"]);
    assert!(w.targets.iter().all(|t| t.for_each == Some(rows)));

    let w = write_path(&plan, "UPDATE sessions");
    let rows = w.targets[0].for_each.expect("each kept row");
    let filter: Vec<String> = w.read_before_write[rows]
        .filter
        .iter()
        .map(ToString::to_string)
        .collect();
    // Every `=` by the read's key (a read by fewer would return rows the statement does not
    // pick), the rest by its filter.
    let by: Vec<&str> = w.read_before_write[rows]
        .binds
        .iter()
        .map(|b| b.column.as_str())
        .collect();
    assert_eq!(
        by,
        ["user_id", "device"],
        "{:#?}",
        w.read_before_write[rows]
    );
    assert_eq!(filter, ["sessions.revoked_at IS NULL"]);

    let w = write_path(
        &plan,
        "DELETE FROM sessions WHERE user_id = $1 AND created_at",
    );
    let rows = w.targets[0].for_each.expect("each kept row");
    assert_eq!(
        w.read_before_write[rows].filter[0].to_string(),
        "sessions.created_at < $2"
    );

    let w = write_path(&plan, "UPDATE documents");
    let rows = w.targets[0]
        .for_each
        .expect("the row, when its version is $4");
    assert_eq!(
        w.read_before_write[rows].filter[0].to_string(),
        "documents.version = $4"
    );
}

#[test]
fn class5_checks_fail_on_paths_broken_by_hand() {
    let mut plan = planned("write_filters");
    for r in &mut write_path_mut(
        &mut plan,
        "DELETE FROM sessions WHERE user_id = $1 AND revoked_at",
    )
    .read_before_write
    {
        r.filter.clear();
    }
    fails(
        &plan,
        "k",
        "DELETE FROM sessions WHERE user_id = $1 AND revoked_at",
        "revoked_at IS NULL",
    );

    let mut plan = planned("write_filters");
    for r in &mut write_path_mut(&mut plan, "UPDATE documents").read_before_write {
        r.filter.clear();
    }
    fails(&plan, "k", "UPDATE documents", "version");
}
