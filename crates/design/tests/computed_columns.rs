//! A read's computed result column is linked to the aggregate it is (`columns[].aggregate`, an
//! index into the pattern's `aggregates`), and only when the SELECT item is that aggregate call
//! alone: `count(*) + 1` is computed from an aggregate, not it, and has no link.

mod support;

use support::pipeline::{pattern_id, plan_rideshare_with};

#[test]
fn computed_columns_name_the_aggregate_they_are() {
    let plan = plan_rideshare_with(
        "SELECT driver_id, max(fare_usd) AS top, count(*) FROM trips WHERE driver_id = 'd' GROUP BY driver_id;\n\
         SELECT count(*) + 1 AS n, min(started_at) FROM trips WHERE city = 'c';\n",
        "computed",
    );
    let links = |sql: &str| -> Vec<(String, Option<usize>)> {
        let id = pattern_id(&plan, sql);
        let q = plan.design.queries.iter().find(|q| q.pattern == id);
        let q = q.unwrap_or_else(|| panic!("no read {sql}"));
        q.columns
            .iter()
            .map(|c| (c.name.clone(), c.aggregate))
            .collect()
    };
    assert_eq!(
        links("SELECT driver_id, max"),
        [
            ("driver_id".to_string(), None),
            ("top".to_string(), Some(0)),
            ("count".to_string(), Some(1))
        ]
    );
    assert_eq!(
        links("SELECT count(*) + $1"),
        [("n".to_string(), None), ("min".to_string(), Some(1))]
    );
}
