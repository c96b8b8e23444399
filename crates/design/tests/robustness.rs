//! The designer's cases of `fixtures/robustness/` (issue 14, copied from the shared robustness
//! cases): each is planned as `remodel plan` plans it, the emitted CQL is checked, the right
//! behaviour the cases' README states is asserted, and the whole plan (schema.cql, every read and
//! write, the diagnostics) is compared with `expected-<case>.txt`
//! (`UPDATE_EXPECT=1 cargo test -p remodel-design --test robustness` rewrites them).

mod support;

use expect_test::expect_file;
use remodel_model::{BindValue, ColumnRef, DesignTable, Diagnostic, Plan};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::PathBuf;
use support::cqlcheck::Catalog;
use support::pipeline::{mapping_text, plan_files};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/robustness")
}

/// Plans `<case>_schema.sql` (or `schema`) with `queries`; checks what every plan must satisfy.
fn plan(schema: &str, queries: &[&str]) -> (Plan, Vec<Diagnostic>) {
    let qs: Vec<PathBuf> = queries.iter().map(|q| dir().join(q)).collect();
    let (plan, diags) = plan_files(&[dir().join(schema)], &qs, None, "ks");
    let cql = remodel_design::emit_cql(&plan.design);
    let mut cat = Catalog::default();
    cat.load_schema(&cql)
        .unwrap_or_else(|e| panic!("{e}\n{cql}"));
    for q in plan.design.queries.iter().filter_map(|q| q.cql.as_ref()) {
        cat.check(q).unwrap_or_else(|e| panic!("{e}: {q}"));
    }
    for t in &plan.design.tables {
        let names: BTreeSet<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), t.columns.len(), "a column twice in {}", t.name);
    }
    assert!(
        plan.design.violations.is_empty(),
        "{:?}",
        plan.design.violations
    );
    (plan, diags)
}

/// schema.cql, the mapping of every read and write, and the diagnostics, paths relative.
fn summary(plan: &Plan, diags: &[Diagnostic]) -> String {
    let prefix = format!("{}/", dir().display());
    let mut out = remodel_design::emit_cql(&plan.design);
    out.push('\n');
    for t in &plan.design.tables {
        writeln!(out, "{} source_sql: {}", t.name, t.source_sql).unwrap();
    }
    out.push_str(&mapping_text(plan));
    for d in diags {
        writeln!(out, "{}", d.to_string().replace(&prefix, "")).unwrap();
    }
    out
}

fn table<'p>(plan: &'p Plan, name: &str) -> &'p DesignTable {
    plan.design
        .tables
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

/// The target column holding a source column in a table.
fn target_of<'t>(t: &'t DesignTable, table: &str, column: &str) -> &'t str {
    let src = ColumnRef::new(table, column);
    t.columns
        .iter()
        .find(|c| c.source.as_ref() == Some(&src))
        .map(|c| c.name.as_str())
        .unwrap_or_else(|| panic!("{} holds no {src}", t.name))
}

#[test]
fn copied_parent_columns_never_take_a_tables_own_column_name() {
    let (plan, diags) = plan("collide_schema.sql", &["collide_queries.sql"]);
    let users = table(&plan, "users_by_id");
    // The user's own org_name keeps its name; the organisation's name is copied beside it.
    assert_eq!(target_of(users, "users", "org_name"), "org_name");
    let copied = target_of(users, "orgs", "name");
    assert_ne!(copied, "org_name");
    // `UPDATE orgs SET name` sets the copy in users_by_id, never the user's own org_name.
    let q3 = plan
        .workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with("UPDATE orgs"));
    let q3 = &q3.expect("the UPDATE of orgs").id;
    let w = plan
        .design
        .writes
        .iter()
        .find(|w| &w.pattern == q3)
        .unwrap();
    let into_users: Vec<_> = w
        .targets
        .iter()
        .filter(|t| t.table == "users_by_id")
        .collect();
    assert_eq!(into_users.len(), 1);
    let set: Vec<&str> = into_users[0]
        .binds
        .iter()
        .filter(|b| matches!(&b.value, BindValue::New { column } if column.table == "orgs"))
        .map(|b| b.column.as_str())
        .collect();
    assert_eq!(set, vec![copied]);
    assert!(
        !into_users[0].cql.contains("SET org_name ="),
        "{}",
        into_users[0].cql
    );
    expect_file!["../../../fixtures/robustness/expected-collide.txt"]
        .assert_eq(&summary(&plan, &diags));
}
