//! plan.json as a contract: every plan the fixtures make follows the JSON Schema of plan.json
//! (derived from the model types), the stored rideshare plan does too, and the schema names
//! what a hand-broken plan gets wrong by its JSON path.

mod support;

use support::contract::{assert_follows_schema, schema_errors};
use support::pipeline::{plan_fixture, plan_rideshare, root};

/// Every `fixtures/plan/<case>/` planned from its own `schema.sql` and `queries.sql`.
fn fixture_cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("fixtures/plan"))
        .expect("fixtures/plan")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("schema.sql").is_file() && e.path().join("queries.sql").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_fixture_plan_follows_the_schema() {
    let cases = fixture_cases();
    assert!(cases.len() >= 8, "{cases:?}");
    for name in &cases {
        assert_follows_schema(name, &plan_fixture(name));
    }
    assert_follows_schema("rideshare", &plan_rideshare(None).0);
}

#[test]
fn the_stored_rideshare_plan_follows_the_schema() {
    let path = root().join("fixtures/plan/rideshare/plan.json");
    let text = std::fs::read_to_string(&path).expect("the stored plan");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let errors = schema_errors(&value);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_schema_names_what_a_broken_plan_gets_wrong() {
    let plan = plan_rideshare(None).0;
    let mut value = serde_json::to_value(&plan).expect("JSON");
    value["design"]["queries"][0]["binds"][0]["value"] =
        serde_json::json!({"from": "guess", "sql": "$1"});
    value["format_version"] = serde_json::json!(1);
    let errors = schema_errors(&value);
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("/design/queries/0/binds/0/value")),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("/format_version")),
        "{errors:#?}"
    );
}
