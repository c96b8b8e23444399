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

/// Every `plan.json` stored under `fixtures/` (the expected plans the tests write and read).
fn stored_plans(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            stored_plans(&path, out);
        } else if path.file_name().is_some_and(|n| n == "plan.json") {
            out.push(path);
        }
    }
}

#[test]
fn every_stored_plan_follows_the_schema() {
    let mut paths = Vec::new();
    stored_plans(&root().join("fixtures"), &mut paths);
    paths.sort();
    assert!(
        paths
            .iter()
            .any(|p| p.ends_with("fixtures/plan/rideshare/plan.json")),
        "{paths:?}"
    );
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("the stored plan");
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let errors = schema_errors(&value);
        assert!(
            errors.is_empty(),
            "{}:\n{}",
            path.display(),
            errors.join("\n")
        );
    }
}

#[test]
fn the_schema_names_what_a_broken_plan_gets_wrong() {
    let plan = plan_rideshare(None).0;
    let mut value = serde_json::to_value(&plan).expect("JSON");
    value["design"]["queries"][0]["binds"][0]["value"] =
        serde_json::json!({"from": "guess", "sql": "$1"});
    value["format_version"] = serde_json::json!(2);
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

/// Every bind of a plan with its statement's label: reads, lookups, reads before write, writes.
fn binds(plan: &remodel_model::Plan) -> Vec<(String, &remodel_model::Bind)> {
    let d = &plan.design;
    let reads = d.queries.iter().flat_map(|q| {
        let steps = q.then.iter().flat_map(|s| &s.binds);
        q.binds
            .iter()
            .chain(steps)
            .map(move |b| (q.pattern.clone(), b))
    });
    let writes = d.writes.iter().flat_map(|w| {
        let rbw = w.read_before_write.iter().flat_map(|r| &r.binds);
        let targets = w.targets.iter().flat_map(|t| &t.binds);
        rbw.chain(targets).map(move |b| (w.pattern.clone(), b))
    });
    reads.chain(writes).collect()
}

#[test]
fn every_bind_states_its_cql_type_and_every_read_its_result_columns() {
    let mut plans: Vec<(String, remodel_model::Plan)> = fixture_cases()
        .into_iter()
        .map(|n| {
            let p = plan_fixture(&n);
            (n, p)
        })
        .collect();
    plans.push(("rideshare".into(), plan_rideshare(None).0));
    let (mut typed, mut columns) = (0, 0);
    for (name, plan) in &plans {
        let col_type = |table: &str, col: &str| {
            plan.design
                .tables
                .iter()
                .find(|t| t.name == table)
                .and_then(|t| t.columns.iter().find(|c| c.name == col))
                .map(|c| c.cql_type.clone())
        };
        for (pattern, b) in binds(plan) {
            // A bind of a table's column is typed; blob is what no column of these plans is.
            assert!(
                b.cql_type.native() != Some(remodel_model::NativeType::Blob),
                "{name} {pattern}: {b} has no column type"
            );
            typed += 1;
        }
        for q in plan.design.queries.iter().filter(|q| q.cql.is_some()) {
            let pattern = plan.workload.patterns.iter().find(|p| p.id == q.pattern);
            let outputs = pattern.map_or(0, |p| p.analysis.outputs.len());
            assert_eq!(q.columns.len(), outputs, "{name} {}", q.pattern);
            for c in &q.columns {
                // A column of a table read is found in that table with its type.
                if let (Some(t), Some(col)) = (&c.table, &c.cql_column) {
                    assert_eq!(col_type(t, col), c.cql_type, "{name} {}: {c:?}", q.pattern);
                    columns += 1;
                } else {
                    assert!(
                        c.source.is_none() || c.cql_column.is_some(),
                        "{name} {}: {c:?} is a source column no CQL column holds",
                        q.pattern
                    );
                }
            }
            // The LIMIT marker is an int.
            for b in q.binds.iter().filter(|b| b.column == "limit") {
                assert_eq!(b.cql_type.to_string(), "int", "{name} {}", q.pattern);
            }
        }
    }
    assert!(
        typed > 100 && columns > 50,
        "{typed} binds, {columns} columns"
    );
}

#[test]
fn the_validator_names_a_bind_typed_unlike_its_marker_and_a_misplaced_result_column() {
    let mut plan = plan_rideshare(None).0;
    assert!(
        remodel_design::validate::validate_plan(&plan).is_empty(),
        "{:?}",
        plan.design.violations
    );
    let q = &mut plan.design.queries[0];
    q.binds[0].cql_type = remodel_model::CqlType::Native(remodel_model::NativeType::Int);
    q.columns[0].cql_column = Some("no_such_column".into());
    let found: Vec<String> = remodel_design::validate::validate_plan(&plan)
        .into_iter()
        .filter(|v| v.check == "o")
        .map(|v| v.message)
        .collect();
    assert!(
        found
            .iter()
            .any(|m| m.contains("is typed int where the marker takes")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("no_such_column, which does not exist")),
        "{found:#?}"
    );
}

#[test]
fn the_validator_names_a_source_query_that_cannot_fill_its_table() {
    use remodel_model::{SourceRef, SourceValue};
    let plan = plan_rideshare(None).0;
    let p = |plan: &remodel_model::Plan| -> Vec<String> {
        remodel_design::validate::validate_plan(plan)
            .into_iter()
            .filter(|v| v.check == "p")
            .map(|v| v.message)
            .collect()
    };
    assert_eq!(p(&plan), Vec::<String>::new());
    // A column the driving table lacks, an alias the query does not define, a result column
    // the table does not hold.
    let mut broken = plan.clone();
    let t = &mut broken.design.tables[0];
    t.source.columns[0].value = SourceValue::Column(SourceRef::new("t0", "no_such_column"));
    t.source.columns[1].value = SourceValue::Column(SourceRef::new("t7", "city"));
    t.source.columns[2].name = "elsewhere".into();
    let found = p(&broken);
    for want in [
        "it reads `no_such_column`, which `trips` lacks",
        "it names alias `t7`, which it does not define",
        "it returns `elsewhere`, which the table does not hold",
    ] {
        assert!(found.iter().any(|m| m.contains(want)), "{want}: {found:#?}");
    }
    // The text a reviewer reads differs from the query that runs.
    let mut edited = plan.clone();
    edited.design.tables[0].source_sql.push_str(" WHERE false");
    let found = p(&edited);
    assert!(
        found
            .iter()
            .any(|m| m.contains("its source_sql is not the rendering of its source")),
        "{found:#?}"
    );
}
