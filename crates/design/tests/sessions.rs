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

/// The loop-over-children case (`fixtures/sessions-children/`: a blog's front page lists 10
/// posts, then reads each post's comments), planned with `[fanout]` stating the comments per
/// post (bounded) or without it (the workload inserts comments and no posts: unbounded).
fn plan_children(log: &str, comments_per_post: Option<u64>) -> Plan {
    let dir = root().join("fixtures/sessions-children");
    let ddl = remodel_sql::ddl::load_files(&[root().join("fixtures/sessions/schema.sql")])
        .expect("schema");
    let wl =
        remodel_sql::workload::read_files(&[dir.join(log)], remodel_sql::workload::Format::Auto)
            .expect("log");
    let mut config = remodel_analyze::AnalyzeConfig::default();
    if let Some(n) = comments_per_post {
        config.fanout.insert("comments.post_id".into(), n);
    }
    let analysis = remodel_analyze::analyze(&ddl.schema, &wl.workload, &config);
    let design = remodel_design::DesignConfig {
        keyspace: "blog".into(),
        ..Default::default()
    };
    remodel_design::plan(analysis, None, &design).0
}

#[test]
fn a_loop_over_children_is_folded_when_bounded_and_cheaper() {
    let plan = plan_children("app.log", Some(12));
    let v = strict_violations(&plan);
    assert!(v.is_empty(), "{v:#?}");
    let text = format!("{}\n{}", render(&plan), mapping_text(&plan));
    expect_test::expect_file![root().join("fixtures/sessions-children/plan.txt")].assert_eq(&text);
    let d = &plan.design.loops;
    assert_eq!(d.len(), 1, "{text}");
    assert_eq!(d[0].choice, LoopChoice::Folded, "{text}");
    let costs = d[0].costs.expect("both ways costed");
    assert!(costs.folded < costs.lookups, "{text}");
    // The folded comments keep `created_at` (timestamptz) in a CQL timestamp field: the host
    // table says they are cut to milliseconds.
    let host = plan
        .design
        .tables
        .iter()
        .find(|t| {
            t.columns
                .iter()
                .any(|c| c.embeds.as_deref() == Some("comments"))
        })
        .expect("a table holding the comments");
    let cut: Vec<&str> = host
        .warnings
        .iter()
        .filter(|w| w.code == "timestamp_millis")
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        cut.iter()
            .any(|m| m.contains("comments.created_at (comments.created_at)")),
        "{}: {cut:?}",
        host.name
    );
    // The front page's table carries the comments, keyed by comment id in a map; the lookups'
    // pattern is gone from the workload (it ran only in the loop).
    let host = plan
        .design
        .tables
        .iter()
        .find(|t| t.serves.contains(&d[0].parent))
        .expect("the list's table");
    assert!(host.columns.iter().any(|c| c.name == "comments"), "{text}");
    assert!(plan.workload.pattern(&d[0].child).is_none(), "{text}");
    // Every write of comments keeps the folded rows: each has a target on the list's table.
    for w in plan.workload.patterns.iter().filter(|p| {
        p.analysis
            .write
            .as_ref()
            .is_some_and(|w| w.table == "comments")
    }) {
        let path = plan.design.writes.iter().find(|x| x.pattern == w.id);
        assert!(
            path.is_some_and(
                |x| x.unsupported.is_none() && x.targets.iter().any(|t| t.table == host.name)
            ),
            "{} does not keep {}: {text}",
            w.id,
            host.name
        );
    }
}

#[test]
fn a_loop_over_children_of_unknown_number_keeps_its_lookups() {
    let plan = plan_children("app.log", None);
    let text = format!("{}\n{}", render(&plan), mapping_text(&plan));
    expect_test::expect_file![root().join("fixtures/sessions-children/plan-unbounded.txt")]
        .assert_eq(&text);
    let d = &plan.design.loops;
    assert_eq!(d.len(), 1, "{text}");
    assert_eq!(d[0].choice, LoopChoice::KeptLookups, "{text}");
    assert!(plan.workload.pattern(&d[0].child).is_some(), "{text}");
    assert!(
        plan.design
            .tables
            .iter()
            .all(|t| t.columns.iter().all(|c| c.name != "comments")),
        "{text}"
    );
}

#[test]
fn the_csvlog_of_the_children_run_plans_the_same() {
    let (a, b) = (
        plan_children("app.log", Some(12)),
        plan_children("app.csv", Some(12)),
    );
    assert_eq!(render(&a), render(&b));
    assert_eq!(mapping_text(&a), mapping_text(&b));
}
