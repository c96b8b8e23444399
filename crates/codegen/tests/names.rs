//! The generated functions take the names the plan gives them (`design.queries[].function`,
//! `design.writes[].function`), in every language; a plan that names none is refused.

use remodel_codegen::{generate, Error, Lang, Options};
use remodel_model::Plan;
use std::path::Path;

/// The designer's expected rideshare plan (kept current by the design tests).
fn rideshare() -> Plan {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/plan/rideshare/plan.json");
    let text = std::fs::read_to_string(path).expect("fixtures/plan/rideshare/plan.json");
    serde_json::from_str(&text).expect("the fixture plan")
}

fn options(lang: Lang) -> Options {
    Options {
        lang,
        package: "rideshare_dal".into(),
    }
}

#[test]
fn functions_are_named_as_the_plan_names_them() {
    let mut plan = rideshare();
    plan.design.queries[0].function = Some("history_of_driver".into());
    let pattern = plan.design.queries[0].pattern.clone();
    let python = generate(&plan, &options(Lang::Python)).expect("python");
    assert!(python
        .functions
        .contains(&(pattern.clone(), "history_of_driver".into())));
    let queries = python.files.iter().find(|f| f.path.ends_with("queries.py"));
    let queries = &queries.expect("queries.py").contents;
    assert!(queries.contains("def history_of_driver("), "{queries}");
    let java = generate(&plan, &options(Lang::Java)).expect("java");
    assert!(java
        .functions
        .contains(&(pattern, "historyOfDriver".into())));
}

#[test]
fn a_plan_without_function_names_is_refused() {
    let mut plan = rideshare();
    plan.design.writes[0].function = None;
    let pattern = plan.design.writes[0].pattern.clone();
    for lang in [Lang::Python, Lang::Java] {
        let err = generate(&plan, &options(lang)).expect_err("no name");
        assert_eq!(err, Error::Unnamed(pattern.clone()));
        assert!(err.to_string().contains("run remodel plan again"), "{err}");
    }
}
