//! The name of each pattern's generated function is decided by the plan (`design.queries[]
//! .function`, `design.writes[].function`): a sqlc-style annotation when the statement has one,
//! else the table and predicate; names that collide take their statement's fingerprint; the
//! same whatever the order of the workload; and the validator refuses a plan whose names are missing, taken
//! twice or not identifiers.

mod support;

use remodel_model::Plan;
use support::pipeline::{pattern_id, plan_rideshare_with};

fn plan_of(queries: &str) -> Plan {
    plan_rideshare_with(queries, "names")
}

const ANNOTATED: &str = "-- name: TripsOfDriver :many\n\
    SELECT started_at, fare_usd FROM trips WHERE driver_id = 'd1' ORDER BY started_at DESC LIMIT 10;\n";
const TWINS: [&str; 2] = [
    "SELECT started_at FROM trips WHERE driver_id = 'd1';\n",
    "SELECT fare_usd FROM trips WHERE driver_id = 'd1';\n",
];
const WRITE: &str = "UPDATE trips SET status = 'disputed' WHERE trip_id = '2c1f0a9e-9a51-4c1e-b1a2-6f0d6a2f4e10';\n";

/// `(sql start, function)` of every read and write of `plan`.
fn functions(plan: &Plan) -> Vec<(String, Option<String>)> {
    let sql = |id: &str| {
        plan.workload
            .pattern(id)
            .map(|p| p.sql.clone())
            .unwrap_or_default()
    };
    let reads = plan
        .design
        .queries
        .iter()
        .map(|q| (sql(&q.pattern), q.function.clone()));
    let writes = plan
        .design
        .writes
        .iter()
        .map(|w| (sql(&w.pattern), w.function.clone()));
    let mut all: Vec<_> = reads.chain(writes).collect();
    all.sort();
    all
}

#[test]
fn the_plan_names_each_function_once_and_stably() {
    let plan = plan_of(&format!("{ANNOTATED}{}{}{WRITE}", TWINS[0], TWINS[1]));
    let function = |sql: &str| -> String {
        let id = pattern_id(&plan, sql);
        let q = plan.design.queries.iter().find(|q| q.pattern == id);
        let w = plan.design.writes.iter().find(|w| w.pattern == id);
        let f = q.and_then(|q| q.function.clone());
        f.or_else(|| w.and_then(|w| w.function.clone()))
            .unwrap_or_else(|| panic!("no function for {sql}"))
    };
    assert_eq!(function("SELECT started_at, fare_usd"), "trips_of_driver");
    let fingerprint = |sql: &str| {
        let id = pattern_id(&plan, sql);
        plan.workload.pattern(&id).expect("pattern").fingerprint[..8].to_string()
    };
    let first = fingerprint("SELECT started_at FROM");
    let second = fingerprint("SELECT fare_usd FROM");
    assert_eq!(
        function("SELECT started_at FROM"),
        format!("trips_by_driver_id_q{first}")
    );
    assert_eq!(
        function("SELECT fare_usd FROM"),
        format!("trips_by_driver_id_q{second}")
    );
    assert_eq!(function("UPDATE trips"), "update_trips_status_by_trip_id");
    // The same workload in another order (its patterns' ids are their places in the file) names
    // every function the same.
    let reordered = plan_of(&format!("{WRITE}{}{}{ANNOTATED}", TWINS[1], TWINS[0]));
    assert_eq!(functions(&reordered), functions(&plan));
    assert!(
        plan.design.violations.is_empty(),
        "{:#?}",
        plan.design.violations
    );
}

#[test]
fn the_validator_refuses_missing_repeated_or_malformed_names() {
    let plan = plan_of(&format!("{ANNOTATED}{}{WRITE}", TWINS[0]));
    let checked = |plan: &Plan| -> Vec<String> {
        remodel_design::validate::validate_plan(plan)
            .into_iter()
            .filter(|v| v.message.contains("function name"))
            .map(|v| v.message)
            .collect()
    };
    assert!(checked(&plan).is_empty(), "{:?}", checked(&plan));
    let mut missing = plan.clone();
    missing.design.writes[0].function = None;
    assert_eq!(checked(&missing).len(), 1, "{:?}", checked(&missing));
    let mut twice = plan.clone();
    twice.design.queries[1].function = twice.design.queries[0].function.clone();
    assert_eq!(checked(&twice).len(), 1, "{:?}", checked(&twice));
    let mut malformed = plan.clone();
    malformed.design.queries[0].function = Some("Trips Of Driver".into());
    assert_eq!(checked(&malformed).len(), 1, "{:?}", checked(&malformed));
}
