//! Replay of the folded reads of `fixtures/sessions/` (issue 23): the blog's two N+1 loops are
//! each served by one read of one table; the joined SQL (the first read with the looked-up
//! columns) and the plan's CQL must return the same rows on the same data. And the loop over
//! children of `fixtures/sessions-children/`, folded as a map in the list's rows: `remodel
//! replay` checks each row's map against the lookup the application ran for that row. Needs
//! `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_model::{LoopChoice, Plan, ReplayOutcome, ReplayReport};
use remodel_replay::{CqlTarget, PgSource, Replayer};
use support::live::{json, read_matches, Case};

#[tokio::test(flavor = "multi_thread")]
async fn folded_loops_read_what_the_join_reads_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_sessions").await;
    let dir = support::root().join("fixtures/sessions");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("fixture file");
    case.load(
        &format!("{}\n{}", read("schema.sql"), read("data.sql")),
        "the blog rows",
    )
    .await;
    let out = case.dir.join("plan");
    let out_s = out.to_string_lossy().into_owned();
    let (schema, log) = (dir.join("schema.sql"), dir.join("app.log"));
    support::remodel_ok(&[
        "plan",
        "--schema",
        &schema.to_string_lossy(),
        "--queries",
        &log.to_string_lossy(),
        "--keyspace",
        case.ks.name(),
        "--out",
        &out_s,
        "--no-report",
    ]);
    let plan = case.backfill_created(&out.join("plan.json").to_string_lossy());
    let folded: Vec<&str> = plan
        .design
        .loops
        .iter()
        .filter_map(|l| l.pattern.as_deref())
        .collect();
    assert_eq!(folded.len(), 2, "both loops served as joined reads");
    let target = CqlTarget::new(case.ks.node(), None).unwrap();
    let (pg, session) = remodel_replay::connect(&PgSource::new(&case.url), &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut r = Replayer::new(&plan, &pg, &session);
    // Every blog's front page and ten posts' comment pages, at the LIMIT the log used and at 1.
    let mut cases: Vec<(&str, Vec<String>)> = Vec::new();
    for b in 1..=3 {
        for limit in ["10", "1"] {
            cases.push((folded[0], vec![b.to_string(), limit.into()]));
        }
    }
    for p in 1..=10 {
        cases.push((folded[1], vec![p.to_string(), "20".into()]));
    }
    for (id, values) in cases {
        let values: Vec<Option<&str>> = values.iter().map(|v| Some(v.as_str())).collect();
        let rows = read_matches(&mut r, id, &values).await;
        assert!(rows > 0, "{id} {values:?} returns rows");
    }
    case.cleanup().await;
}

/// `remodel replay` of the children fold: generated rows on both sides, then the list read
/// (`SELECT id, title, author_id FROM posts WHERE blog_id = $1 … LIMIT $2`) on Cassandra with
/// each row's `comments` map, against the list on Postgres and, per row, the lookup
/// (`SELECT id, body, user_id, created_at FROM comments WHERE post_id = $1 …`).
#[tokio::test(flavor = "multi_thread")]
async fn folded_children_read_what_the_lookups_read_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("sessions2_children").await;
    let plan_file = children_plan(&case);
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let plan: Plan = serde_json::from_str(&std::fs::read_to_string(&plan_file).expect("plan"))
        .expect("plan.json parses");
    let fold = plan
        .design
        .loops
        .iter()
        .find(|d| d.choice == LoopChoice::Folded && d.lookup.is_some())
        .expect("the loop over comments folded, with the lookup it replaces");
    let list = fold.pattern.clone().expect("the read serving the list");
    let replay = case.dir.join("replay");
    let run = support::remodel(&[
        "replay",
        "--plan",
        &plan_file,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--samples",
        "8",
        "--seed",
        "23",
        "--now",
        support::REPLAY_NOW,
        "--out",
        &s(&replay),
    ]);
    let shown = format!(
        "{}\n{}",
        support::text(&run.stdout),
        support::text(&run.stderr)
    );
    let report: ReplayReport = serde_json::from_value(json(&replay.join("replay.json")))
        .unwrap_or_else(|e| panic!("replay.json: {e}\n{shown}"));
    let mismatches: Vec<String> = report
        .patterns
        .iter()
        .flat_map(|p| &p.mismatches)
        .map(|m| {
            format!(
                "{} {}: {}\n  SQL {:?}\n  CQL {:?}",
                m.pattern, m.params, m.reason, m.sql, m.cql
            )
        })
        .collect();
    assert!(mismatches.is_empty(), "{}\n{shown}", mismatches.join("\n"));
    let p = report
        .patterns
        .iter()
        .find(|p| p.pattern == list)
        .unwrap_or_else(|| panic!("{list} replayed\n{shown}"));
    // Checked, not skipped: samples compared on Postgres and Cassandra, and the comments of
    // the rows read compared entry by entry with the lookups' rows.
    assert_eq!(p.outcome, ReplayOutcome::Replayed, "{p:?}\n{shown}");
    assert!(p.samples > 0 && p.rows > 0, "{p:?}\n{shown}");
    assert!(p.folded_rows > 0, "no comment compared: {p:?}\n{shown}");
    assert_eq!(run.status.code(), Some(0), "{shown}");
    case.cleanup().await;
}

/// Plans the children loop of `fixtures/sessions-children` (12 comments a post at most) for the
/// case's keyspace; returns the plan.json path.
fn children_plan(case: &Case) -> String {
    std::fs::create_dir_all(&case.dir).expect("scratch folder");
    let config = case.dir.join("fanout.toml");
    std::fs::write(&config, "[fanout]\n\"comments.post_id\" = 12\n").expect("config");
    let root = support::root();
    let out = case.dir.join("plan");
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    support::remodel_ok(&[
        "plan",
        "--schema",
        &s(&root.join("fixtures/sessions/schema.sql")),
        "--queries",
        &s(&root.join("fixtures/sessions-children/app.log")),
        "--config",
        &s(&config),
        "--keyspace",
        case.ks.name(),
        "--out",
        &s(&out),
        "--no-report",
    ]);
    s(&out.join("plan.json"))
}

/// `remodel replay --writes` of the children fold. A comment inserted is put in its post's
/// `comments` map (a one-entry map of the user type), a comment's body changed rewrites its
/// entry (its other fields from the map read first), a comment deleted is removed from it; the
/// UPDATE and DELETE only for a comment of that post (half the samples name another post's).
/// Each write is followed by the folded read of the post's blog (anchored on the post). Then
/// every blog's front page is read on both sides, each post's map against the comments the
/// lookup it replaces returns from Postgres.
#[tokio::test(flavor = "multi_thread")]
async fn writes_into_a_folded_map_keep_it_equal_to_the_lookup_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("sessions2_writes").await;
    let plan_file = children_plan(&case);
    let plan_json = json(std::path::Path::new(&plan_file));
    let (report, shown) = case.replay_writes(&plan_file, 12, 300, 5);
    // Each followed by the front page of the post's blog, the map against the lookup.
    for sql in [
        "INSERT INTO comments",
        "UPDATE comments",
        "DELETE FROM comments",
    ] {
        support::live::assert_write_clean(
            support::live::replayed(&report, sql, &plan_json),
            sql,
            &shown,
        );
    }
    let whole: ReplayReport = serde_json::from_value(report.clone()).expect("replay.json");
    assert_eq!(whole.mismatches(), 0, "{shown}");

    let plan: Plan = serde_json::from_value(plan_json.clone()).expect("plan.json parses");
    let list = plan
        .design
        .loops
        .iter()
        .find(|d| d.choice == LoopChoice::Folded && d.lookup.is_some())
        .and_then(|d| d.pattern.clone())
        .expect("the folded list read");
    let target = CqlTarget::new(case.ks.node(), None).unwrap();
    let (pg, session) = remodel_replay::connect(&PgSource::new(&case.url), &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let blogs: Vec<i64> = pg
        .query("SELECT id FROM blogs ORDER BY id", &[])
        .await
        .expect("blogs")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(!blogs.is_empty());
    let mut r = Replayer::new(&plan, &pg, &session);
    let mut rows = 0;
    for b in blogs {
        let b = b.to_string();
        rows += read_matches(&mut r, &list, &[Some(b.as_str()), Some("100")]).await;
    }
    assert!(rows > 0, "the front pages list posts");
    case.cleanup().await;
}
