//! The seed checklist in the designer (issue 24): TTL for rows that expire
//! (`fixtures/plan/expiring`) and the tombstones of a queue (`fixtures/plan/queue`). Each
//! fixture's expected output is beside it (UPDATE_EXPECT=1 rewrites it); each guard is shown to
//! fail on a plan broken by hand.

mod support;

use remodel_model::{BindValue, ColumnRef, Plan, Statistics, TtlClock, WriteAction};
use support::pipeline::{mapping_text, pattern_id, plan_files, plan_fixture, root};

fn expect(case: &str, plan: &Plan, writes: bool) {
    let v = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    assert!(v.is_empty(), "{case}: {v:#?}");
    let dir = root().join("fixtures/plan").join(case);
    if writes {
        let w = serde_json::to_string_pretty(&plan.design.writes).expect("json") + "\n";
        expect_test::expect_file![dir.join("writes.json")].assert_eq(&w);
    }
    expect_test::expect_file![dir.join("mapping.txt")].assert_eq(&mapping_text(plan));
    expect_test::expect_file![dir.join("schema.cql")]
        .assert_eq(&remodel_design::emit_cql(&plan.design));
}

fn col(table: &str, column: &str) -> ColumnRef {
    ColumnRef::new(table, column)
}

/// The TTL bind of a statement: the seconds until the new (or current) value of `c`.
fn ttl_of(b: &BindValue, c: &ColumnRef) -> bool {
    matches!(b, BindValue::SecondsUntil { of, clock: TtlClock::Sent, min: 1, .. }
        if matches!(&**of, BindValue::New { column } | BindValue::Current { column } if column == c))
}

#[test]
fn rows_read_until_a_timestamp_and_purged_after_it_are_written_with_a_ttl() {
    let plan = plan_fixture("expiring");
    expect("expiring", &plan, true);
    for (table, column, purge) in [
        (
            "password_resets",
            "expires_at",
            "DELETE FROM password_resets",
        ),
        (
            "login_sessions",
            "valid_until",
            "DELETE FROM login_sessions",
        ),
    ] {
        let c = col(table, column);
        let tables: Vec<_> = plan
            .design
            .tables
            .iter()
            .filter(|t| t.entity == table)
            .collect();
        assert!(!tables.is_empty());
        for t in &tables {
            let ttl = t
                .ttl
                .as_ref()
                .unwrap_or_else(|| panic!("{} has no TTL", t.name));
            assert_eq!(ttl.column, c);
        }
        // Every INSERT and UPDATE of those tables gives the TTL, every DELETE none.
        let mut written = 0;
        for w in &plan.design.writes {
            for s in w
                .targets
                .iter()
                .filter(|s| tables.iter().any(|t| t.name == s.table))
            {
                let has = s.binds.iter().any(|b| ttl_of(&b.value, &c));
                if s.action == WriteAction::Delete {
                    assert!(!has && !s.cql.contains("TTL"), "{}", s.cql);
                } else {
                    written += 1;
                    assert!(
                        has && s.cql.contains("USING TTL ?"),
                        "{}: {}",
                        w.pattern,
                        s.cql
                    );
                }
            }
        }
        assert!(written >= 2, "{table}: an INSERT and an UPDATE at least");
        let id = pattern_id(&plan, purge);
        let p = plan
            .design
            .writes
            .iter()
            .find(|w| w.pattern == id)
            .expect("purge");
        assert!(p.unsupported.is_none(), "{p:#?}");
        assert!(p.targets.is_empty());
        assert_eq!(p.served_by_ttl.as_ref().map(|x| &x.column), Some(&c));
    }
    // A purge that keeps rows past the instant is no TTL: it stays unsupported.
    let id = pattern_id(&plan, "DELETE FROM invites");
    let p = plan
        .design
        .writes
        .iter()
        .find(|w| w.pattern == id)
        .expect("purge");
    assert!(
        p.unsupported.is_some() && p.served_by_ttl.is_none(),
        "{p:#?}"
    );
    assert!(plan
        .design
        .tables
        .iter()
        .filter(|t| t.entity == "invites")
        .all(|t| t.ttl.is_none()));
}

#[test]
fn an_update_that_leaves_the_instant_alone_reads_it_for_the_ttl() {
    let plan = plan_fixture("expiring");
    let id = pattern_id(&plan, "UPDATE login_sessions SET user_id");
    let w = plan
        .design
        .writes
        .iter()
        .find(|w| w.pattern == id)
        .expect("path");
    let c = col("login_sessions", "valid_until");
    let s = w
        .targets
        .iter()
        .find(|s| s.action == WriteAction::Update)
        .expect("UPDATE");
    assert!(s.cql.contains(" USING TTL ? SET "), "{}", s.cql);
    assert!(ttl_of(&s.binds[0].value, &c), "{:?}", s.binds[0]);
    assert!(
        w.read_before_write
            .iter()
            .any(|r| r.columns.iter().any(|x| x == "valid_until")),
        "{:#?}",
        w.read_before_write
    );
}

#[test]
fn a_write_without_the_ttl_fails_the_ttl_check() {
    let mut plan = plan_fixture("expiring");
    let id = pattern_id(&plan, "INSERT INTO password_resets");
    let w = plan
        .design
        .writes
        .iter_mut()
        .find(|w| w.pattern == id)
        .expect("path");
    let s = &mut w.targets[0];
    s.cql = s.cql.replace(" USING TTL ?", "");
    s.binds
        .retain(|b| !matches!(b.value, BindValue::SecondsUntil { .. }));
    let v = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    assert!(
        v.iter()
            .any(|x| x.check == "ttl" && x.message.contains(&format!("write {id}:"))),
        "{v:#?}"
    );
}

fn queue_plan() -> Plan {
    let dir = root().join("fixtures/plan/queue");
    let text = std::fs::read_to_string(dir.join("stats.json")).expect("stats.json");
    let stats: Statistics = serde_json::from_str(&text).expect("stats parse");
    plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        Some(&stats),
        "queue",
    )
    .0
}

#[test]
fn a_queue_read_oldest_first_gets_a_tombstones_warning_with_its_figure() {
    let plan = queue_plan();
    expect("queue", &plan, false);
    let read = pattern_id(&plan, "SELECT id, payload FROM outbox");
    let q = plan
        .design
        .queries
        .iter()
        .find(|q| q.pattern == read)
        .expect("read");
    let t = plan
        .design
        .tables
        .iter()
        .find(|t| Some(&t.name) == q.table.as_ref())
        .expect("table");
    let ts = t.tombstones.as_ref().expect("tombstones");
    // 200,000 deletes a day over the 8 topics' partitions, each kept gc_grace (10 days).
    assert_eq!(ts.partitions, 8.0);
    assert_eq!(ts.deleted_per_day, 200_000.0);
    assert_eq!(ts.per_read, 200_000.0 / 8.0 * 10.0);
    let w = t
        .warnings
        .iter()
        .find(|w| w.code == "tombstones")
        .expect("warning");
    for alt in ["newest-first", "TTL", "outside Cassandra", "250,000"] {
        assert!(w.message.contains(alt), "{alt}: {}", w.message);
    }
    // Read newest-first, or rarely deleted: no queue.
    for other in ["notifications", "audit_log"] {
        assert!(
            plan.design.tables.iter().filter(|t| t.entity == other).all(
                |t| t.tombstones.is_none() && t.warnings.iter().all(|w| w.code != "tombstones")
            ),
            "{other}"
        );
    }
}

/// Rows that expire by TTL are never kept in a counter table: Cassandra drops an expired row
/// without a write that could subtract it. A read-heavy `count(*)` of `password_resets` (the
/// `expiring` fixture's schema) that would otherwise get its counter scans instead and says why.
#[test]
fn rows_that_expire_by_ttl_are_counted_by_scanning_not_by_a_counter() {
    let dir = std::env::temp_dir().join(format!("remodel-ttl-counted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let queries = dir.join("queries.sql");
    std::fs::write(
        &queries,
        "-- calls: 1000\nINSERT INTO password_resets (token, user_id, expires_at) VALUES ($1, $2, $3);\n\
         -- calls: 1500\nSELECT user_id FROM password_resets WHERE token = $1 AND expires_at > now();\n\
         -- calls: 24\nDELETE FROM password_resets WHERE expires_at < now();\n\
         -- calls: 900000\nSELECT count(*) FROM password_resets WHERE user_id = $1;\n",
    )
    .expect("write queries");
    let schema = root().join("fixtures/plan/expiring/schema.sql");
    let (plan, _) = plan_files(&[schema], &[queries], None, "counted");
    let _ = std::fs::remove_dir_all(&dir);
    let v = remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design);
    assert!(v.is_empty(), "{v:#?}");
    assert!(
        plan.design.tables.iter().all(|t| t.counter.is_none()),
        "no counter table for rows that expire"
    );
    let id = pattern_id(&plan, "SELECT count(*)");
    let q = plan
        .design
        .queries
        .iter()
        .find(|q| q.pattern == id)
        .expect("the count read");
    assert!(
        q.notes
            .iter()
            .any(|n| n.starts_with(remodel_model::NO_COUNTER_NOTE)
                && n.contains("purged once past password_resets.expires_at")),
        "{:?}",
        q.notes
    );
}
