//! The classes of reads real applications run that the plan used to leave without a table
//! (issue "every read served"), one fixture each in `fixtures/plan/<case>/`: every read and
//! write served, the plan passes its own checks and the CQL checker, and the expected query
//! mapping and `schema.cql` are kept beside the inputs (`UPDATE_EXPECT=1` rewrites them). The
//! live replay of each is `tests/reads_served_live.rs`.

mod support;

use support::cqlcheck::check_design;
use support::pipeline::{mapping_text, plan_fixture, root, strict_violations};

fn check(name: &str) -> remodel_model::Plan {
    let plan = plan_fixture(name);
    let c = plan.design.coverage.clone().expect("coverage");
    assert!(
        c.gaps.is_empty(),
        "{name}: not every pattern served: {:#?}",
        c.gaps
    );
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{name}: {violations:#?}");
    assert!(check_design(name, &plan.design) > 0, "{name}: no statement");
    let dir = root().join("fixtures/plan").join(name);
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
    plan
}

/// Class 2: a key computed from parameters (`md5($2 || $1)::uuid`) is bound as the
/// application-computed value it is, on reads and on the INSERT; `= ANY($1::bigint[])` is an IN.
#[test]
fn expressions_over_parameters() {
    let plan = check("param_exprs");
    let computed = |id: &str| {
        plan.design
            .queries
            .iter()
            .find(|q| q.pattern == id)
            .is_some_and(|q| q.binds.iter().any(|b| b.value.to_string().contains("md5(")))
    };
    assert!(computed("q1"), "{}", mapping_text(&plan));
}

/// Class 4: keyset pages — `(created_at, id) < ($2, $3)` and the other three operators, either
/// side, with the clustering order mixed (`score DESC, player_id ASC`) — are CQL multi-column
/// slices of the clustering columns after the bound ones, so the LIMIT stays in the CQL and no
/// client filter is left; a slice removed from the mapping fails the plan's check (e).
#[test]
fn keyset_pages_are_clustering_slices() {
    let plan = check("keyset");
    let reads: Vec<&remodel_model::QueryMapping> = plan
        .design
        .queries
        .iter()
        .filter(|q| q.cql.is_some())
        .collect();
    assert_eq!(reads.len(), 4);
    for q in &reads {
        let cql = q.cql.as_deref().unwrap_or_default();
        assert!(
            cql.contains(") < (?, ?)")
                || cql.contains(") <= (?, ?)")
                || cql.contains(") > (?, ?)")
                || cql.contains(") >= (?, ?)"),
            "{}: {cql}",
            q.pattern
        );
        assert!(cql.ends_with("LIMIT ?"), "{}: {cql}", q.pattern);
        assert!(q.client.filters.is_empty(), "{}: {:?}", q.pattern, q.client);
    }
    // `($2, $3) < (score, player_id)`: the columns on the right, read as `(…) > (?, ?)`.
    let flipped = support::pipeline::read_mapping(
        &plan,
        "SELECT player_id, score FROM scores WHERE board_id = $1 AND ($2",
    );
    assert!(flipped
        .cql
        .as_deref()
        .unwrap_or_default()
        .contains("(score, player_id) > (?, ?)"));
    let mut broken = plan.clone();
    let q = broken
        .design
        .queries
        .iter_mut()
        .find(|q| q.pattern == reads[0].pattern)
        .expect("q");
    q.binds.retain(|b| b.column != "id");
    let violations = strict_violations(&broken);
    assert!(
        violations.iter().any(|v| v.check == "e"),
        "a slice without its binds is caught: {violations:#?}"
    );
}

/// Classes 1 and 3: `email = $1` on a `citext` column and `lower(email) = lower($1)` (under a
/// unique index on it) are equalities on a lookup column holding `lower(email)`, which keys a
/// table; the source query computes it, the write paths compute it from the row and move the
/// row when the e-mail changes.
#[test]
fn lookups_key_tables() {
    let plan = check("lookups");
    let users = plan.schema.table("users").expect("users");
    let lookup = users.column("lower_email").expect("the lookup column");
    assert_eq!(
        lookup
            .lookup
            .as_ref()
            .map(|l| (l.function, l.column.as_str())),
        Some((remodel_model::Function::Lower, "email"))
    );
    let t = plan
        .design
        .tables
        .iter()
        .find(|t| {
            t.partition_key.iter().any(|k| k.column == "lower_email") && t.name.starts_with("users")
        })
        .expect("a users table keyed by lower_email");
    assert!(
        t.source_sql
            .contains(r#"lower((t0."email")::text) AS "lower_email""#)
            || t.source_sql.contains(r#"lower((t0.email)::text)"#),
        "{}",
        t.source_sql
    );
    let q1 = support::pipeline::read_mapping(&plan, "SELECT id, name FROM users WHERE email =");
    assert_eq!(q1.binds[0].value.to_string(), "lower($1)", "{q1:?}");
}

/// Class 1: a column of a type the plan does not know (`ltree`) compared with `=` is carried as
/// its text form, the value sent made canonical by the type (`(($1)::ltree)::text`, an
/// application-computed value), and keys a table.
#[test]
fn types_the_plan_does_not_know_key_by_their_text() {
    let plan = check("text_forms");
    let q1 =
        support::pipeline::read_mapping(&plan, "SELECT id, title FROM categories WHERE path =");
    assert_eq!(q1.binds[0].column, "path");
    assert_eq!(
        q1.binds[0].value.to_string(),
        "((($1)::ltree)::text)",
        "{q1:?}"
    );
}

/// Class 1, domains: a column declared with a domain holds its base type — over `citext`, the
/// e-mail is looked up case-insensitively like a `citext` column (by `lower(email)`); over
/// `integer` (and a domain over that one), votes and ranks sort and compare as integers, not as
/// the text form an unknown type would get.
#[test]
fn columns_of_a_domain_hold_its_base_type() {
    let plan = check("domains");
    let column = |table: &str, name: &str| {
        plan.schema
            .table(table)
            .and_then(|t| t.column(name))
            .map(|c| (c.sql_type.clone(), c.domain.clone()))
    };
    assert_eq!(
        column("members", "email"),
        Some(("citext".into(), Some("email_address".into())))
    );
    assert_eq!(
        column("posts", "rank"),
        Some(("integer".into(), Some("rank_value".into())))
    );
    let cql = remodel_design::emit_cql(&plan.design);
    assert!(
        !cql.contains("votes text") && !cql.contains("rank text"),
        "{cql}"
    );
}

/// Class 5: an `ORDER BY` on text under a linguistic collation, or on an enum whose labels are
/// not in their bytes' order, is warned at the table that serves it (`collation_order`, naming
/// the read, the column, the collation and the fix); a column under "C" is not; a schema file
/// that does not say the database's default collation gets a note instead.
#[test]
fn orders_of_text_that_cassandra_does_not_keep_are_warned() {
    let plan = check("collations");
    let warned: Vec<(String, String)> = plan
        .design
        .tables
        .iter()
        .flat_map(|t| {
            t.warnings
                .iter()
                .filter(|w| w.code == "collation_order")
                .map(|w| (t.name.clone(), w.message.clone()))
        })
        .collect();
    assert_eq!(warned.len(), 2, "{warned:#?}");
    assert!(
        warned.iter().any(|(_, m)| m.contains("people.name")
            && m.contains("en-US-x-icu")
            && m.contains("COLLATE \"C\"")),
        "{warned:#?}"
    );
    assert!(
        warned
            .iter()
            .any(|(_, m)| m.contains("tickets.priority")
                && m.contains("(low, normal, high, urgent)")),
        "{warned:#?}"
    );
    assert!(
        !warned.iter().any(|(_, m)| m.contains("people.code")),
        "{warned:#?}"
    );
    let (_, diags) = support::pipeline::plan_files(
        &[root().join("examples/rideshare/schema.sql")],
        &[root().join("fixtures/coverage/collation-queries.sql")],
        None,
        "rideshare",
    );
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("default collation is not known")),
        "{diags:#?}"
    );
}
