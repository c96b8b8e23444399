//! Counter tables (issue 24) on a small likes app (`fixtures/plan/counters-*`): a `count(*)` of a
//! post's likes read far more often than likes come and go keeps a counter table maintained by
//! the write paths; the same read under a write-heavy mix scans, each with the costs compared.
//! And the cost model itself: a read's cost counts the rows it scans.

mod support;

use remodel_model::{BindValue, ColumnRef, Guard, Plan, QueryMapping, Statistics};
use std::path::Path;
use support::pipeline::{
    mapping_text, plan_files, read_mapping, root, strict_violations, write_path, write_path_mut,
};

/// The plan of fixture `case`'s queries and statistics over `schema`.
fn plan_over(case: &str, schema: &Path) -> Plan {
    let dir = root().join("fixtures/plan").join(case);
    let stats: Statistics =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).expect("stats.json"))
            .expect("statistics");
    plan_files(
        &[schema.to_path_buf()],
        &[dir.join("queries.sql")],
        Some(&stats),
        "likes",
    )
    .0
}

fn plan(case: &str) -> Plan {
    let dir = root().join("fixtures/plan").join(case);
    let plan = plan_over(case, &dir.join("schema.sql"));
    let violations = strict_violations(&plan);
    assert!(violations.is_empty(), "{case}: {violations:#?}");
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(&plan));
    plan
}

fn count_read(plan: &Plan) -> &QueryMapping {
    read_mapping(plan, "SELECT count(*) FROM likes")
}

#[test]
fn a_read_heavy_count_keeps_a_counter_maintained_by_every_write() {
    let p = plan("counters-read-heavy");
    let q = count_read(&p);
    let name = q.table.as_deref().expect("served");
    let t = p
        .design
        .tables
        .iter()
        .find(|t| t.name == name)
        .expect("table");
    let c = t
        .counter
        .as_ref()
        .expect("a counter table serves the count");
    assert_eq!(c.counts, "likes");
    assert_eq!(q.counter.as_ref().map(|r| r.grouped), Some(false));
    // likes.post_id references posts: a counter row is one post's likes, and its lineage says
    // so (the post's key, equal to the counted column).
    let group = t
        .columns
        .iter()
        .find(|c| c.name == "post_id")
        .expect("group");
    assert_eq!(
        group.source.as_ref().map(|s| s.to_string()).as_deref(),
        Some("posts.post_id")
    );
    assert_eq!(
        group
            .equals
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
        ["likes.post_id"]
    );
    // A NOT NULL group column needs no filter; the backfill counts every like.
    assert!(t.source.filters.is_empty(), "{:#?}", t.source.filters);
    // Only the key and counter columns (Cassandra's rule for counter tables).
    for col in &t.columns {
        let in_key = t.partition_key.iter().any(|k| k.column == col.name);
        assert!(in_key || col.cql_type.to_string() == "counter", "{col:#?}");
    }
    let chosen: Vec<_> = q.candidates.iter().filter(|c| c.chosen).collect();
    assert_eq!(chosen.len(), 1, "{:#?}", q.candidates);
    assert_eq!(chosen[0].kind, "counter table");
    let reason = chosen[0].reason.as_deref().unwrap_or_default();
    assert!(reason.starts_with("counter chosen"), "{reason}");
    assert!(reason.contains("1000 rows scanned"), "{reason}");
    // The scanning way is on the evidence with its terms.
    let scan = q.candidates.iter().find(|c| !c.chosen).expect("scan");
    assert!(scan.rows_scanned >= 1000.0, "{scan:#?}");
    // +1 on insert, -1 per row deleted (read first), never in a batch with other statements.
    let counted = |sql: &str| write_path(&p, sql);
    let ins = counted("INSERT INTO likes");
    let up = ins
        .targets
        .iter()
        .find(|t| t.table == name)
        .expect("insert updates the counter");
    assert!(
        up.cql.contains("= \"n\" + ?") || up.cql.contains("= n + ?"),
        "{}",
        up.cql
    );
    assert!(!up.cql.contains("USING"), "{}", up.cql);
    let del = counted("DELETE FROM likes");
    let down = del
        .targets
        .iter()
        .find(|t| t.table == name)
        .expect("delete updates the counter");
    assert!(down.cql.contains("n - ?"), "{}", down.cql);
    assert!(down.for_each.is_some(), "only rows read first: {del:#?}");
    let batch = del.batch.as_ref().expect("batch");
    assert!(batch.counters.is_some(), "{batch:#?}");
    // A NOT NULL group: every counter statement runs.
    assert_eq!((&up.guard, &down.guard), (&None, &None));
}

#[test]
fn a_write_heavy_count_scans_and_says_why() {
    let p = plan("counters-write-heavy");
    let q = count_read(&p);
    assert!(q.counter.is_none(), "{q:#?}");
    assert!(p.design.tables.iter().all(|t| t.counter.is_none()));
    let c = q
        .candidates
        .iter()
        .find(|c| c.kind == "counter table")
        .expect("the counter was costed");
    assert!(!c.chosen);
    let reason = c.reason.as_deref().unwrap_or_default();
    assert!(reason.starts_with("counter rejected"), "{reason}");
    assert!(q.notes.iter().any(|n| n.starts_with("counter rejected")));
}

/// The same count over 10 and over 100,000 likes per post: the scan's cost follows the rows.
#[test]
fn a_read_costs_the_rows_it_scans() {
    let dir = root().join("fixtures/plan/counters-write-heavy");
    let cost = |per_post: f64| {
        let stats: Statistics = serde_json::from_value(serde_json::json!({
            "tables": {"likes": {"rows": 1_000_000_000.0, "columns": {
                "post_id": {"n_distinct": 1_000_000_000.0 / per_post}
            }}}
        }))
        .expect("stats");
        let (plan, _) = plan_files(
            &[dir.join("schema.sql")],
            &[dir.join("queries.sql")],
            Some(&stats),
            "likes",
        );
        let list = read_mapping(&plan, "SELECT user_id, liked_at FROM likes")
            .cost
            .clone()
            .expect("list cost");
        (count_read(&plan).candidates.clone(), list)
    };
    let (few, few_list) = cost(10.0);
    let (many, many_list) = cost(100_000.0);
    let scan = |c: &[remodel_model::Candidate]| {
        c.iter()
            .find(|c| c.kind != "counter table")
            .cloned()
            .expect("scan")
    };
    let (a, b) = (scan(&few), scan(&many));
    assert_eq!(
        a.partition_reads, b.partition_reads,
        "one partition either way"
    );
    assert_eq!(a.rows_scanned, 10.0, "{a:#?}");
    assert_eq!(b.rows_scanned, 100_000.0, "{b:#?}");
    // Cassandra counts one partition itself: one row comes back either way.
    assert_eq!(a.bytes_returned, b.bytes_returned);
    // A LIMIT with nothing before it bounds the rows scanned: 10 rows, or the 20 of the LIMIT.
    assert_eq!(few_list.rows_scanned, 10.0);
    assert_eq!(many_list.rows_scanned, 20.0);
    assert!(many_list.weighted < b.partition_reads + 0.01 * b.rows_scanned);
}

#[test]
fn a_nullable_group_is_counted_without_its_null_rows() {
    // The same app with likes.post_id nullable and no foreign key: a NULL post_id is no group a
    // read can ask for (`post_id = $1` never matches it) and cannot be a partition key, so the
    // backfill's source query leaves those rows out. The link to posts is inferred from the
    // names, and the lineage still names the post's key.
    let src = root().join("fixtures/plan/counters-read-heavy");
    let dir = std::env::temp_dir().join(format!("remodel-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ddl = std::fs::read_to_string(src.join("schema.sql")).expect("schema");
    let ddl = ddl.replace(
        "post_id  bigint NOT NULL REFERENCES posts (post_id),",
        "post_id  bigint,",
    );
    let ddl = ddl.replace(
        "PRIMARY KEY (post_id, user_id)",
        "UNIQUE (post_id, user_id)",
    );
    assert!(ddl.contains("post_id  bigint,"), "{ddl}");
    std::fs::write(dir.join("schema.sql"), ddl).expect("write");
    let p = plan_over("counters-read-heavy", &dir.join("schema.sql"));
    let q = count_read(&p);
    let t = p
        .design
        .tables
        .iter()
        .find(|t| Some(t.name.as_str()) == q.table.as_deref())
        .expect("table");
    assert!(t.counter.is_some(), "still a counter: {:#?}", q.candidates);
    assert!(
        t.source_sql
            .ends_with("WHERE t0.post_id IS NOT NULL GROUP BY t0.post_id"),
        "{}",
        t.source_sql
    );
    let group = t
        .columns
        .iter()
        .find(|c| c.name == "post_id")
        .expect("group");
    assert_eq!(
        group.source.as_ref().map(|s| s.to_string()).as_deref(),
        Some("posts.post_id")
    );
    assert!(
        strict_violations(&p).is_empty(),
        "{:#?}",
        strict_violations(&p)
    );
    // An application's INSERT or DELETE of such a row updates no counter: the statement is
    // guarded on the group's value of the row written (new) or read first (current), as a
    // NULL partition key would fail the write.
    let post_id = ColumnRef::new("likes", "post_id");
    for (sql, value) in [
        (
            "INSERT INTO likes",
            BindValue::New {
                column: post_id.clone(),
            },
        ),
        (
            "DELETE FROM likes",
            BindValue::Current {
                column: post_id.clone(),
            },
        ),
    ] {
        let w = write_path(&p, sql);
        let c = w
            .targets
            .iter()
            .find(|x| x.table == t.name)
            .unwrap_or_else(|| panic!("{sql} updates the counter: {w:#?}"));
        assert_eq!(
            c.guard,
            Some(Guard::AllNotNull {
                values: vec![value]
            }),
            "{sql}"
        );
    }
}

#[test]
fn a_counter_statement_on_a_nullable_group_runs_only_for_a_group() {
    // Tickets counted per assignee, NULL while nobody has taken one: a ticket opened, handed
    // over, given back or closed while unassigned counts in no group, and a NULL cannot be a
    // partition key (Cassandra refuses the statement), so each counter statement is guarded on
    // the assignee it adds to (new) or subtracts from (current).
    let p = plan("counters-nullable-group");
    let name = count_of(&p, "SELECT count(*) FROM tickets").to_string();
    let assignee = ColumnRef::new("tickets", "assignee_id");
    let new = BindValue::New {
        column: assignee.clone(),
    };
    let current = BindValue::Current { column: assignee };
    for (sql, sides) in [
        ("INSERT INTO tickets", vec![("+", &new)]),
        ("UPDATE tickets", vec![("-", &current), ("+", &new)]),
        ("DELETE FROM tickets", vec![("-", &current)]),
    ] {
        let w = write_path(&p, sql);
        let counted: Vec<_> = w.targets.iter().filter(|t| t.table == name).collect();
        assert_eq!(counted.len(), sides.len(), "{sql}: {w:#?}");
        for (t, (op, value)) in counted.iter().zip(sides) {
            assert!(t.cql.contains(&format!("n {op} ?")), "{sql}: {}", t.cql);
            assert_eq!(
                t.guard,
                Some(Guard::AllNotNull {
                    values: vec![value.clone()]
                }),
                "{sql}: {}",
                t.cql
            );
        }
    }
}

/// The counter table serving the read that starts with `sql`.
fn count_of<'p>(plan: &'p Plan, sql: &str) -> &'p str {
    let q = read_mapping(plan, sql);
    let name = q.table.as_deref().expect("served");
    assert!(
        plan.design
            .tables
            .iter()
            .any(|t| t.name == name && t.counter.is_some()),
        "{sql} is served by a counter table: {:#?}",
        q.candidates
    );
    name
}

#[test]
fn a_key_whose_null_rows_a_table_leaves_out_is_bound_only_when_not_null() {
    // The agent's queue (tickets_by_assignee) is read by assignee only: its rows without one are
    // left out (the source query keeps `assignee_id IS NOT NULL`), and every statement of a
    // write path binding the assignee runs only when it is not NULL. The validator holds the
    // plan to it: with a guard dropped, check (r) fails.
    let mut p = plan("counters-nullable-group");
    let t = p
        .design
        .tables
        .iter()
        .find(|t| t.name == "tickets_by_assignee")
        .expect("the queue table");
    assert!(
        t.source_sql.ends_with("WHERE t0.assignee_id IS NOT NULL"),
        "{}",
        t.source_sql
    );
    assert!(t
        .warnings
        .iter()
        .any(|w| w.code == "null_key_rows_left_out"));
    assert!(t.warnings.iter().all(|w| w.code != "nullable_key"));
    let x = write_path_mut(&mut p, "INSERT INTO tickets")
        .targets
        .iter_mut()
        .find(|x| x.table == "tickets_by_assignee")
        .expect("the queue's insert");
    assert_eq!(
        x.guard,
        Some(Guard::AllNotNull {
            values: vec![BindValue::New {
                column: ColumnRef::new("tickets", "assignee_id")
            }]
        })
    );
    x.guard = None;
    let found = strict_violations(&p);
    assert!(
        found
            .iter()
            .any(|v| v.check == "r" && v.message.contains("tickets_by_assignee")),
        "{found:#?}"
    );
}
