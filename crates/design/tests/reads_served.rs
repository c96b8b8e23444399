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
