//! Data-driven cases: `fixtures/analyze/<case>/{schema.sql, queries.sql}` → `expected.txt`
//! (the text `remodel analyze` prints). `UPDATE_EXPECT=1` rewrites the expected files.

mod common;

use common::*;
use remodel_analyze::render;
use remodel_model::{Cardinality, Decision, FkOrigin};
use remodel_sql::workload::Format;

fn case(name: &str) -> remodel_model::Analysis {
    let dir = format!("fixtures/analyze/{name}");
    let a = load_and_analyze(
        &[&format!("{dir}/schema.sql")],
        &[&format!("{dir}/queries.sql")],
        Format::Sql,
    );
    let text = render::text(&a);
    expect_test::expect_file![root().join(&dir).join("expected.txt")].assert_eq(&text);
    a
}

fn inferred(a: &remodel_model::Analysis) -> Vec<String> {
    a.schema
        .foreign_keys()
        .filter(|(_, fk)| matches!(fk.origin, FkOrigin::Inferred { .. }))
        .map(|(t, fk)| {
            format!(
                "{}({}) -> {}({})",
                t.name,
                fk.columns.join(","),
                fk.ref_table,
                fk.ref_columns.join(",")
            )
        })
        .collect()
}

#[test]
fn infer_fk_from_joins_and_naming() {
    let a = case("infer_fk");
    let fks = inferred(&a);
    // From join predicates of the workload.
    assert!(
        fks.contains(&"items(seller) -> users(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"bids(user_id) -> users(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"comments(from_user_id) -> users(id)".to_string()),
        "{fks:?}"
    );
    // From naming against primary keys.
    assert!(
        fks.contains(&"bids(item_id) -> items(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"comments(item_id) -> items(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"items(category) -> categories(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"users(region) -> regions(id)".to_string()),
        "{fks:?}"
    );
    // A role prefix before a referencing name resolves to the named table (issue: role-prefixed
    // names such as `reviewer_member_id`); values named after a table (`max_bid`, `nb_of_bids`) do not.
    assert!(
        fks.contains(&"comments(to_user_id) -> users(id)".to_string()),
        "{fks:?}"
    );
    assert!(
        !fks.iter()
            .any(|f| f.starts_with("items(max_bid)") || f.starts_with("items(nb_of_bids)")),
        "{fks:?}"
    );
    assert_eq!(fks.len(), 8, "{fks:?}");
    // The evidence says where it came from.
    let seller = a
        .schema
        .table("items")
        .and_then(|t| t.foreign_keys.iter().find(|f| f.columns == ["seller"]))
        .expect("fk");
    let FkOrigin::Inferred { evidence } = &seller.origin else {
        panic!("declared?")
    };
    assert!(evidence.contains("items.seller = users.id"), "{evidence}");
    // Joins now follow the inferred keys.
    let p = find(&a, &["join users u on i.seller = u.id"]);
    assert_eq!(
        p.analysis.join_path[0].foreign_key.as_deref(),
        Some("items(seller) -> users(id)")
    );
}

#[test]
fn junction_is_many_to_many_and_few_children_embed() {
    let a = case("junction");
    let m = a
        .relationships
        .iter()
        .find(|r| matches!(&r.cardinality, Cardinality::ManyToMany { via } if via == "enrolments"))
        .expect("M-N");
    assert_eq!((m.from.as_str(), m.to.as_str()), ("students", "courses"));
    let phones = a
        .relationships
        .iter()
        .find(|r| r.to == "phones")
        .expect("phones");
    assert_eq!(phones.cardinality, Cardinality::OneToMany);
    assert_eq!(
        phones.decision,
        Decision::Embed,
        "{}",
        phones.rationale.text
    );
    assert_eq!(phones.rationale.bounded, Some(true));
}

/// A table's own primary key is never a reference by naming (`accounts.id` next to a table
/// `ids`), and role-prefixed names resolve through the table or its key's name.
#[test]
fn naming_inference_skips_own_keys_and_reads_role_prefixes() {
    let schema = remodel_sql::ddl::load_str("inline.sql", 
        "CREATE TABLE ids (id int PRIMARY KEY);
         CREATE TABLE accounts (id int PRIMARY KEY, owner text);
         CREATE TABLE members (member_id int PRIMARY KEY, name text);
         CREATE TABLE loans (loan_id int PRIMARY KEY, lender_member_id int, reviewer_member_id int, max_member int);",
    )
    .schema;
    let a = remodel_analyze::analyze(
        &schema,
        &remodel_model::Workload::default(),
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let fks = inferred(&a);
    assert!(
        !fks.iter().any(|f| f.starts_with("accounts(id)")),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"loans(lender_member_id) -> members(member_id)".to_string()),
        "{fks:?}"
    );
    assert!(
        fks.contains(&"loans(reviewer_member_id) -> members(member_id)".to_string()),
        "{fks:?}"
    );
    assert!(
        !fks.iter().any(|f| f.starts_with("loans(max_member)")),
        "{fks:?}"
    );
}
