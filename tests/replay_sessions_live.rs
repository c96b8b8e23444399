//! Replay of the folded reads of `fixtures/sessions/` (issue 23): the blog's two N+1 loops are
//! each served by one read of one table; the joined SQL (the first read with the looked-up
//! columns) and the plan's CQL must return the same rows on the same data. Needs
//! `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_replay::{CqlTarget, PgSource, Replayer};
use support::live::{read_matches, Case};

#[tokio::test(flavor = "multi_thread")]
async fn folded_loops_read_what_the_join_reads_live() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_sessions").await;
    let dir = support::root().join("fixtures/sessions");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("fixture file");
    case.pg
        .client()
        .batch_execute(&format!(
            "{}\n{}\nANALYZE;",
            read("schema.sql"),
            read("data.sql")
        ))
        .await
        .expect("load the blog rows");
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
