//! Keyless tables (no primary or unique key) may hold duplicate rows: the validator assumes
//! nothing of them (`support::pipeline::strict_violations` recomputes its findings).

mod support;

use remodel_model::Plan;
use support::pipeline::{plan_files, strict_violations};

const SCHEMA: &str = "\
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE follows (
    follower_id bigint NOT NULL REFERENCES users (id),
    followee_id bigint NOT NULL REFERENCES users (id),
    since date,
    PRIMARY KEY (follower_id, followee_id)
);
";

const QUERIES: &str = "\
-- calls: 100
SELECT f.followee_id, f.since FROM follows f WHERE f.follower_id = 1;
-- calls: 10
INSERT INTO follows (follower_id, followee_id, since) VALUES (1, 2, '2025-01-01');
";

/// Plans `schema` and `queries` (written to a scratch folder).
fn plan(label: &str, schema: &str) -> Plan {
    let dir = std::env::temp_dir().join(format!("remodel-keyless-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    std::fs::write(dir.join("schema.sql"), schema).expect("write schema");
    std::fs::write(dir.join("queries.sql"), QUERIES).expect("write queries");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "ks",
    );
    std::fs::remove_dir_all(&dir).expect("remove the scratch folder");
    plan
}

/// A design made for `follows` with its primary key, judged after the key is dropped from the
/// schema: the validator does not take the two NOT NULL columns as unique, and says the key may
/// collapse duplicate rows. (The design is the keyed schema's, so this holds whatever the designer
/// does with keyless tables.)
#[test]
fn the_validator_does_not_take_not_null_columns_as_a_key() {
    let mut p = plan("keyed", SCHEMA);
    assert!(
        strict_violations(&p).is_empty(),
        "{:#?}",
        strict_violations(&p)
    );
    let follows = p
        .schema
        .tables
        .iter_mut()
        .find(|t| t.name == "follows")
        .expect("follows");
    follows.primary_key.clear();
    follows.unique_keys.clear();
    let strict = strict_violations(&p);
    assert!(
        strict
            .iter()
            .any(|v| v.check == "a" && v.message.contains("no generated row id of follows")),
        "{strict:#?}"
    );
}

/// The designer on a keyless join table: its plan must keep duplicate rows apart (a key made
/// unique by a generated row id), so the validator passes it.
#[test]
fn a_keyless_join_table_gets_a_plan_that_keeps_duplicate_rows() {
    let keyless = SCHEMA.replace(",\n    PRIMARY KEY (follower_id, followee_id)", "");
    let p = plan("keyless", &keyless);
    let v = strict_violations(&p);
    assert!(v.is_empty(), "{v:#?}");
}
