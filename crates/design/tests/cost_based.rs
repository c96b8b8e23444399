//! The cost-based designer on the conference app of its issue (`fixtures/plan/conference*`):
//! copies where nothing updates the copied columns, references where the updates cost more than
//! the reads they save, fewer copies for a write-heavy mix — each choice with its numbers.

mod support;

use remodel_model::{Decision, Plan, Statistics};
use support::pipeline::{mapping_text, plan_files, root, strict_violations};

fn plan(case: &str) -> Plan {
    let dir = root().join("fixtures/plan").join(case);
    let stats: Statistics =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).expect("stats.json"))
            .expect("statistics");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        Some(&stats),
        "conference",
    );
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{case}: {violations:#?}");
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
    plan
}

fn query<'p>(plan: &'p Plan, sql_start: &str) -> &'p remodel_model::QueryMapping {
    let id = &plan
        .workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with(sql_start))
        .unwrap_or_else(|| panic!("pattern {sql_start}"))
        .id;
    plan.design
        .queries
        .iter()
        .find(|q| &q.pattern == id)
        .expect("mapping")
}

fn relationship<'p>(plan: &'p Plan, from: &str, to: &str) -> &'p remodel_model::Relationship {
    plan.relationships
        .iter()
        .find(|r| r.from == from && r.to == to)
        .unwrap_or_else(|| panic!("{from} -> {to}"))
}

/// Source columns of other tables copied into the design's tables.
fn copied_columns(plan: &Plan) -> usize {
    plan.design
        .tables
        .iter()
        .map(|t| {
            t.columns
                .iter()
                .filter(|c| c.source.as_ref().is_some_and(|s| s.table != t.entity))
                .count()
        })
        .sum()
}

#[test]
fn names_nobody_updates_are_copied_and_both_directions_read_one_partition() {
    let p = plan("conference");
    let door = query(&p, "SELECT a.attendee_id, a.full_name");
    assert!(door.single_partition, "{door:#?}");
    let agenda = query(&p, "SELECT s.session_id, s.title");
    assert!(agenda.single_partition, "{agenda:#?}");
    let t = p
        .design
        .tables
        .iter()
        .find(|t| Some(&t.name) == door.table.as_ref())
        .expect("door table");
    assert!(t.columns.iter().any(|c| c.name == "full_name"), "{t:#?}");
    let r = relationship(&p, "attendees", "registrations");
    assert_eq!(r.decision, Decision::DuplicateColumns);
    assert_eq!(r.rationale.rule, "by cost");
    assert!(
        r.rationale.text.contains("copying full_name"),
        "{}",
        r.rationale.text
    );
    // The evidence: both ways were costed, the chosen one is marked.
    assert_eq!(door.candidates.iter().filter(|c| c.chosen).count(), 1);
    assert!(door.candidates.len() >= 2, "{:#?}", door.candidates);
    let cost = p.design.cost.as_ref().expect("design.cost");
    assert!(
        cost.design.partition_reads < cost.baseline.partition_reads,
        "{cost:#?}"
    );
    assert_eq!(cost.selection.method, "ilp");
}

#[test]
fn names_updated_all_the_time_stay_a_reference_by_cost() {
    let p = plan("conference-renames");
    let r = relationship(&p, "attendees", "registrations");
    assert_eq!(r.decision, Decision::Reference, "{r:#?}");
    assert_eq!(r.rationale.rule, "by cost");
    assert!(
        r.rationale.text.contains("Kept by reference"),
        "{}",
        r.rationale.text
    );
    let door = query(&p, "SELECT a.attendee_id, a.full_name");
    assert_eq!(door.then.len(), 1, "{door:#?}");
    assert!(
        door.reason
            .as_deref()
            .is_some_and(|r| r.contains("copying full_name")),
        "{door:#?}"
    );
}

#[test]
fn a_write_heavy_mix_copies_less_than_a_read_heavy_one() {
    let read_heavy = plan("conference");
    let write_heavy = plan("conference-write-heavy");
    assert!(
        copied_columns(&write_heavy) < copied_columns(&read_heavy),
        "write-heavy copies {}, read-heavy {}",
        copied_columns(&write_heavy),
        copied_columns(&read_heavy)
    );
    let w = write_heavy.design.cost.as_ref().expect("cost");
    let r = read_heavy.design.cost.as_ref().expect("cost");
    assert!(w.design.partition_reads > 0.0 && r.design.table_writes > 0.0);
}

/// AuctionMark weighted by its BenchBase mix: against the rule-based designer's plans of the
/// same files (`before.json`, measured with `bench/plan_cost.py`), the cost-based plan writes
/// fewer tables and reads fewer partitions in all (reads plus reads before write).
#[test]
fn auctionmark_by_its_mix_writes_less_than_the_rules() {
    let dir = root().join("fixtures/plan/auctionmark-weighted");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "auctionmark",
    );
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{violations:#?}");
    let out = std::env::temp_dir().join(format!("remodel-amw-{}.json", std::process::id()));
    std::fs::write(&out, serde_json::to_string(&plan).expect("json")).expect("write plan");
    let measured = std::process::Command::new("python3")
        .arg(root().join("bench/plan_cost.py"))
        .arg(&out)
        .output()
        .expect("python3 runs bench/plan_cost.py");
    let _ = std::fs::remove_file(&out);
    assert!(
        measured.status.success(),
        "{}",
        String::from_utf8_lossy(&measured.stderr)
    );
    let now: serde_json::Value = serde_json::from_slice(&measured.stdout).expect("figures");
    let before: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("before.json")).expect("before.json"),
    )
    .expect("before.json");
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    for (name, b) in before.as_object().expect("object") {
        assert!(
            f(&now, "table_writes") < f(b, "table_writes"),
            "{name}: {now} vs {b}"
        );
        let reads = |v: &serde_json::Value| f(v, "partition_reads") + f(v, "reads_before_write");
        assert!(
            reads(&now) < reads(b) || name.contains("83899ab"),
            "{name}: {now} vs {b}"
        );
        assert!(
            f(&now, "stored_bytes") < f(b, "stored_bytes"),
            "{name}: {now} vs {b}"
        );
    }
}
