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
use support::cqlcheck::check_design;
use support::pipeline::{mapping_text, plan_files, strict_violations};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/robustness")
}

/// Plans `<case>_schema.sql` (or `schema`) with `queries`; checks what every plan must satisfy.
fn plan(schema: &str, queries: &[&str]) -> (Plan, Vec<Diagnostic>) {
    let qs: Vec<PathBuf> = queries.iter().map(|q| dir().join(q)).collect();
    let (plan, diags) = plan_files(&[dir().join(schema)], &qs, None, "ks");
    check_design(schema, &plan.design);
    for t in &plan.design.tables {
        let names: BTreeSet<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), t.columns.len(), "a column twice in {}", t.name);
    }
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:?}");
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

/// The renames of a plan, one line each.
fn renames(plan: &Plan) -> String {
    let mut out = String::new();
    for r in &plan.design.renames {
        writeln!(
            out,
            "rename {:?} {} -> {}: {}",
            r.kind, r.source, r.target, r.reason
        )
        .unwrap();
    }
    out
}

#[test]
fn quoted_column_names_keep_their_case() {
    let (plan, diags) = plan("casecols_schema.sql", &["casecols_queries.sql"]);
    // "Name", name and "NAME" are three columns in Postgres, in schema.cql and in source_sql.
    let t = table(&plan, "accounts_by_id");
    for c in ["Name", "name", "NAME"] {
        assert_eq!(target_of(t, "accounts", c), c);
    }
    assert!(
        t.source_sql.contains(r#"t0."Name", t0.name, t0."NAME""#),
        "{}",
        t.source_sql
    );
    let read = &plan.design.queries[0];
    assert!(
        read.cql
            .as_deref()
            .unwrap()
            .contains(r#"SELECT "Name", name, "NAME" FROM"#),
        "{read:?}"
    );
    // The UPDATE sets "Name" from $1 and name from $2: two columns, neither lost.
    let w = &plan
        .workload
        .patterns
        .iter()
        .find(|p| p.kind.is_write())
        .unwrap();
    let info = w.analysis.write.as_ref().unwrap();
    assert_eq!(info.columns_written, vec!["Name", "name"]);
    let path = plan
        .design
        .writes
        .iter()
        .find(|x| x.pattern == w.id)
        .unwrap();
    let sets: Vec<String> = path.targets[0]
        .binds
        .iter()
        .map(|b| b.to_string())
        .collect();
    assert!(
        sets.contains(&"Name=new(accounts.Name)".to_string()),
        "{sets:?}"
    );
    assert!(
        sets.contains(&"name=new(accounts.name)".to_string()),
        "{sets:?}"
    );
    assert!(plan.design.renames.is_empty(), "{}", renames(&plan));
    expect_file!["../../../fixtures/robustness/expected-casecols.txt"]
        .assert_eq(&summary(&plan, &diags));
}

#[test]
fn tables_differing_in_case_or_punctuation_stay_apart_and_renames_are_stated() {
    let (plan, diags) = plan("tblcase_schema.sql", &["tblcase_queries.sql"]);
    // Four source tables, four target tables, each read from its own.
    assert_eq!(plan.design.tables.len(), 4);
    for (sql, entity, column) in [
        (r#"FROM "Users""#, "Users", "name"),
        ("FROM users", "users", "email"),
        (r#"FROM "user-accounts""#, "user-accounts", "a"),
        ("FROM user_accounts", "user_accounts", "b"),
    ] {
        let p = plan
            .workload
            .patterns
            .iter()
            .find(|p| p.sql.contains(sql))
            .unwrap();
        assert_eq!(p.analysis.tables, vec![entity], "{}", p.sql);
        let q = plan
            .design
            .queries
            .iter()
            .find(|q| q.pattern == p.id)
            .unwrap();
        let t = table(&plan, q.table.as_deref().unwrap());
        assert_eq!(t.entity, entity);
        assert_eq!(target_of(t, entity, column), column);
        assert!(
            t.source_sql.ends_with(&format!("{} t0", &sql[5..])),
            "{}",
            t.source_sql
        );
    }
    // The plain names keep the plain table names; the others are suffixed, each with a note.
    assert_eq!(table(&plan, "users_by_id").entity, "users");
    assert_eq!(table(&plan, "user_accounts_by_id").entity, "user_accounts");
    let renamed: Vec<(&str, &str)> = plan
        .design
        .renames
        .iter()
        .map(|r| (r.source.as_str(), r.target.as_str()))
        .collect();
    assert_eq!(
        renamed,
        vec![
            ("user-accounts", "user_accounts_by_id_2"),
            ("Users", "users_by_id_2")
        ]
    );
    expect_file!["../../../fixtures/robustness/expected-tblcase.txt"]
        .assert_eq(&(summary(&plan, &diags) + &renames(&plan)));
}

#[test]
fn schema_qualified_names_are_kept_and_unqualified_ones_follow_the_search_path() {
    let (plan, diags) = plan("ns_schema.sql", &["ns_queries.sql"]);
    let tables_of = |sql: &str| {
        let p = plan
            .workload
            .patterns
            .iter()
            .find(|p| p.sql.starts_with(sql));
        p.unwrap_or_else(|| panic!("{sql}")).analysis.tables.clone()
    };
    // public.users and the unqualified users (search_path: public) are one table; auth.users another.
    assert_eq!(
        tables_of("SELECT name, org FROM public.users"),
        vec!["users"]
    );
    assert_eq!(tables_of("SELECT name FROM users"), vec!["users"]);
    assert_eq!(
        tables_of("SELECT password_hash FROM auth.users"),
        vec!["auth.users"]
    );
    assert_eq!(tables_of("UPDATE auth.users"), vec!["auth.users"]);
    // The password hash is read from a table of auth.users rows, filled from auth.users.
    let q2 = plan
        .workload
        .patterns
        .iter()
        .find(|p| p.sql.contains("auth.users WHERE"))
        .unwrap();
    let m = plan
        .design
        .queries
        .iter()
        .find(|q| q.pattern == q2.id)
        .unwrap();
    let t = table(&plan, m.table.as_deref().unwrap());
    assert_eq!(t.entity, "auth.users");
    assert_eq!(target_of(t, "auth.users", "password_hash"), "password_hash");
    assert!(
        t.source_sql.ends_with("FROM auth.users t0"),
        "{}",
        t.source_sql
    );
    for t in plan.design.tables.iter().filter(|t| t.entity == "users") {
        // (A table keyed by the nullable org leaves out its NULL rows: `WHERE t0.org IS NOT NULL`.)
        assert!(
            t.source_sql.contains("FROM public.users t0"),
            "{}",
            t.source_sql
        );
        assert!(t.columns.iter().all(|c| c.name != "password_hash"));
    }
    expect_file!["../../../fixtures/robustness/expected-ns.txt"]
        .assert_eq(&(summary(&plan, &diags) + &renames(&plan)));
}

#[test]
fn a_table_name_that_resolves_to_nothing_is_said() {
    let (plan, diags) = plan("ns_schema.sql", &["ns_unresolved_queries.sql"]);
    let said = |what: &str| {
        diags
            .iter()
            .filter(|d| d.message.contains(what))
            .map(|d| d.to_string().replace(&format!("{}/", dir().display()), ""))
            .collect::<Vec<_>>()
    };
    // `auth_users` names nothing; `billing.users` names no schema's table, though users is in
    // public and auth: a warning at the statement, naming both.
    assert!(said("auth_users").contains(
        &"ns_unresolved_queries.sql:3:1: note: q1: table auth_users is not in the schema".into()
    ));
    assert!(said("billing.users").contains(
        &"ns_unresolved_queries.sql:5:1: warning: q2: table billing.users is not in the schema; public.users and auth.users have that name (qualify it, or set search_path in the [analyze] configuration)".into()
    ));
    assert!(said("nosuch.users").contains(
        &"ns_unresolved_queries.sql:7:1: warning: q3: table nosuch.users is not in the schema; public.users and auth.users have that name (qualify it, or set search_path in the [analyze] configuration)".into()
    ));
    // None of them is served from, or writes to, a table of another schema's rows.
    for p in &plan.workload.patterns {
        assert!(!p
            .analysis
            .tables
            .iter()
            .any(|t| t == "users" || t == "auth.users"));
    }
    assert!(plan.design.tables.is_empty(), "{:?}", plan.design.tables);
    expect_file!["../../../fixtures/robustness/expected-ns-unresolved.txt"]
        .assert_eq(&summary(&plan, &diags));

    // With search_path = auth, public the unqualified users is auth.users.
    let ddl = remodel_sql::ddl::load_files(&[dir().join("ns_schema.sql")]).unwrap();
    let wl = remodel_sql::workload::read_files(
        &[dir().join("ns_queries.sql")],
        remodel_sql::workload::Format::Auto,
    )
    .unwrap();
    let config = remodel_analyze::AnalyzeConfig {
        search_path: vec!["auth".into(), "public".into()],
        ..Default::default()
    };
    let a = remodel_analyze::analyze(&ddl.schema, &wl.workload, &config);
    let p = a
        .workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with("SELECT name FROM users"))
        .unwrap();
    // auth.users has no `name` or `org`: the read names columns its table lacks.
    assert_eq!(p.analysis.tables, vec!["auth.users"]);
}

/// The query mapping of the pattern whose SQL starts with `sql`.
fn mapping<'p>(plan: &'p Plan, sql: &str) -> &'p remodel_model::QueryMapping {
    let p = plan
        .workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with(sql));
    let id = &p.unwrap_or_else(|| panic!("no pattern {sql}")).id;
    plan.design
        .queries
        .iter()
        .find(|q| &q.pattern == id)
        .unwrap()
}

#[test]
fn a_union_is_stated_not_modelled_never_one_table_of_both() {
    let (plan, diags) = plan("uo_schema.sql", &["union_queries.sql"]);
    let m = mapping(&plan, "SELECT name FROM users");
    assert_eq!(m.table, None);
    let reason = m.reason.as_deref().unwrap();
    assert!(
        reason.contains("set operation (UNION) of 2 queries"),
        "{reason}"
    );
    assert!(plan.design.tables.is_empty());
    expect_file!["../../../fixtures/robustness/expected-union.txt"]
        .assert_eq(&summary(&plan, &diags));
}

#[test]
fn a_cross_join_of_two_lookups_is_two_reads_by_key_never_a_null_key() {
    let (plan, diags) = plan("uo_schema.sql", &["cross_queries.sql"]);
    let m = mapping(&plan, "SELECT u.name, o.name FROM users u, orgs o");
    // users by its id ($1), then orgs by its own id ($2): two reads of one row each, paired.
    assert_eq!(m.table.as_deref(), Some("users_by_id"));
    assert_eq!(
        m.binds.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
        ["id=$1"]
    );
    assert_eq!(m.then.len(), 1);
    assert_eq!(m.then[0].table, "orgs_by_id");
    assert_eq!(
        m.then[0]
            .binds
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>(),
        ["id=$2"]
    );
    for t in &plan.design.tables {
        // Each table holds one entity's rows, joined to nothing.
        assert!(!t.source_sql.contains("JOIN"), "{}", t.source_sql);
        assert_eq!(t.partition_key.len(), 1);
        assert!(t.clustering.is_empty());
    }
    expect_file!["../../../fixtures/robustness/expected-cross.txt"]
        .assert_eq(&summary(&plan, &diags));
}

#[test]
fn a_lateral_limit_per_row_is_stated_not_modelled_never_one_limit() {
    let (plan, diags) = plan("uo_schema.sql", &["lateral_queries.sql"]);
    let p = &plan.workload.patterns[0];
    // The subquery's LIMIT 1 and ORDER BY are per user: never the statement's own.
    assert_eq!(p.analysis.limit, None);
    assert!(p.analysis.order_by.is_empty());
    let m = mapping(&plan, "SELECT u.name, o.total FROM users u, LATERAL");
    assert_eq!(m.table, None);
    assert!(m
        .reason
        .as_deref()
        .unwrap()
        .contains("LATERAL subquery with its own LIMIT"));
    assert!(plan.design.tables.is_empty());
    expect_file!["../../../fixtures/robustness/expected-lateral.txt"]
        .assert_eq(&summary(&plan, &diags));
}

#[test]
fn subqueries_and_unjoined_tables_are_stated_never_served_as_a_join() {
    let (plan, diags) = plan("uo_schema.sql", &["subquery_queries.sql"]);
    let reason = |sql: &str| mapping(&plan, sql).reason.clone().unwrap_or_default();
    for sql in [
        "SELECT u.name, (SELECT max(o.total)",
        "SELECT u.name FROM users u WHERE EXISTS",
        "SELECT u.name FROM users u WHERE u.id IN (SELECT",
    ] {
        assert!(
            reason(sql).contains("a subquery in an expression reads a table"),
            "{sql}"
        );
    }
    assert!(reason("SELECT u.name, c.n").contains("a subquery in FROM with its own GROUP BY"));
    assert!(reason("SELECT u.name, o.name FROM users u, orgs o")
        .starts_with("orgs is not joined to users (a cross join"));
    // A LATERAL subquery without a LIMIT of its own is a join, and is served as one.
    let m = mapping(&plan, "SELECT u.name, o.total FROM users u, LATERAL");
    assert!(m.table.is_some(), "{m:?}");
    expect_file!["../../../fixtures/robustness/expected-subquery.txt"]
        .assert_eq(&summary(&plan, &diags));
}
