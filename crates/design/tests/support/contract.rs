//! Every plan a design test makes follows the JSON Schema of plan.json (derived from the model
//! types, as `remodel plan --schema-out` writes it).

#![allow(dead_code)]

use remodel_model::Plan;
use std::sync::OnceLock;

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema = serde_json::to_value(remodel_model::json_schema()).expect("schema as JSON");
        jsonschema::validator_for(&schema).expect("the plan.json schema compiles")
    })
}

/// The schema errors of a plan.json value: `JSON path: what is wrong`.
pub fn schema_errors(value: &serde_json::Value) -> Vec<String> {
    validator()
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Panics with the first errors when `plan` does not follow the schema.
pub fn assert_follows_schema(name: &str, plan: &Plan) {
    let value = serde_json::to_value(plan).expect("plan as JSON");
    let errors = schema_errors(&value);
    assert!(
        errors.is_empty(),
        "{name}: plan.json breaks its schema:\n{}",
        errors
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
