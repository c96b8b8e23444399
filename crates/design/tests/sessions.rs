//! Sessions (issue 23): the blog of `fixtures/sessions/` has two N+1 loops and a transaction
//! in its real logs; the plan serves each loop as one joined read (B's columns copied into A's
//! table, or B read by key after A's rows when its columns change too often, with the reason)
//! and sends the transaction's writes as one group.

mod support;

use remodel_model::{LoopChoice, Plan};
use std::fmt::Write;
use support::pipeline::{mapping_text, plan_files, root, strict_violations};

fn plan(log: &str) -> Plan {
    let dir = root().join("fixtures/sessions");
    plan_files(&[dir.join("schema.sql")], &[dir.join(log)], None, "blog").0
}

/// The workload as designed, the loop decisions and the write groups, one line each.
fn render(plan: &Plan) -> String {
    let mut out = String::new();
    for p in &plan.workload.patterns {
        let _ = writeln!(out, "{} calls {}: {}", p.id, p.calls, p.sql);
    }
    for d in &plan.design.loops {
        let _ = writeln!(
            out,
            "loop {} -> {} as {:?}: {:?}, fan-out mean {} p95 {}, lookups after {}, writes per call {}\n  {}",
            d.parent,
            d.child,
            d.pattern,
            d.choice,
            d.fan_out_mean,
            d.fan_out_p95,
            d.lookups_after,
            d.write_ratio,
            d.reason
        );
    }
    for g in &plan.design.write_groups {
        let _ = writeln!(
            out,
            "group {:?} ({} transactions): {:?} on {:?}\n  {}",
            g.writes, g.transactions, g.send, g.tables, g.reason
        );
    }
    out
}

#[test]
fn both_loops_are_one_read_and_the_transaction_one_group() {
    let plan = plan("app.log");
    let v = strict_violations(&plan);
    assert!(v.is_empty(), "{v:#?}");
    let text = format!("{}\n{}", render(&plan), mapping_text(&plan));
    expect_test::expect_file![root().join("fixtures/sessions/plan.txt")].assert_eq(&text);
    // The whole plan too: the report's tests and the replay test read it.
    // Paths relative to the repository, so the fixture holds on any checkout.
    let json = serde_json::to_string_pretty(&plan).expect("plan serializes") + "\n";
    let json = json.replace(&format!("{}/", root().display()), "");
    expect_test::expect_file![root().join("fixtures/sessions/plan.json")].assert_eq(&json);
    assert_eq!(plan.design.loops.len(), 2, "{text}");
    assert!(
        plan.design
            .loops
            .iter()
            .all(|d| d.choice != LoopChoice::NotFolded),
        "{text}"
    );
}

#[test]
fn the_csvlog_of_the_same_run_plans_the_same() {
    let (a, b) = (plan("app.log"), plan("app.csv"));
    assert_eq!(render(&a), render(&b));
    assert_eq!(mapping_text(&a), mapping_text(&b));
}
