//! Keys that are not unique for the rows they store, replayed on real Postgres and Cassandra
//! (classes 2 and 6 of the silently-wrong issue): rows 0.2 ms apart under one timestamp key, and
//! equal rows of tables without a key. Each case loads its adversarial rows itself, backfills the
//! plan of its fixture and compares the plan's reads and writes with Postgres. Needs
//! `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_model::{Plan, RunSummary};
use remodel_replay::{CqlTarget, Params, PgSource, Replayer};
use support::live::{read_matches, refs, Case};

/// Three accounts with ten ledger rows each, 0.2 ms apart (two milliseconds hold all ten).
const LEDGER_ROWS: &str = "
INSERT INTO accounts SELECT i, 'owner ' || i FROM generate_series(1, 3) i;
INSERT INTO ledger SELECT 1 + i % 3,
    timestamptz '2025-01-15 10:00:00+00' + (i / 3) * interval '200 microseconds',
    i, 'memo ' || i
  FROM generate_series(0, 29) i;";

/// Users and posts, and join tables holding equal rows: user 1 follows user 2 twice and user 3
/// three times; likes post 1 twice.
const FOLLOWS_ROWS: &str = "
INSERT INTO users SELECT i, 'user ' || i FROM generate_series(1, 5) i;
INSERT INTO posts SELECT i, 1 + i % 5, 'post ' || i FROM generate_series(1, 6) i;
INSERT INTO follows VALUES (1, 2, '2025-01-01 00:00:00+00'), (1, 2, '2025-01-01 00:00:00+00'),
    (1, 3, NULL), (1, 3, NULL), (1, 3, NULL), (2, 1, '2025-02-01 00:00:00+00');
INSERT INTO likes VALUES (1, 1, '2025-01-01 00:00:00+00'), (1, 1, '2025-01-01 00:00:00+00'),
    (1, 2, NULL), (2, 1, NULL);";

/// The id of the pattern whose SQL starts with `start`.
fn id(plan: &Plan, start: &str) -> String {
    plan.workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with(start))
        .unwrap_or_else(|| panic!("no pattern {start}"))
        .id
        .clone()
}

/// Runs write `id` with `values` on Postgres and through the plan's write path on Cassandra;
/// returns the rows Postgres changed.
async fn write(r: &mut Replayer<'_>, plan: &Plan, id: &str, values: &[Option<&str>]) -> usize {
    let p = r.prepare(id).await.unwrap_or_else(|e| panic!("{e}"));
    let params = Params::from_text(r.pg(), &p.param_types, values)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let path = plan
        .design
        .writes
        .iter()
        .find(|w| w.pattern == id)
        .unwrap_or_else(|| panic!("no write path {id}"));
    let on_pg = r
        .write_pg(&p, &params)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    r.write_cql(&p, path, &params, &on_pg)
        .await
        .unwrap_or_else(|e| panic!("{id} {values:?}: {e}"));
    on_pg.rows.len()
}

/// Loads `rows` into the fixture's schema, plans the fixture, backfills it; returns the plan
/// path and the run's summary.
async fn load_and_backfill(case: &Case, fixture: &str, rows: &str) -> (String, RunSummary) {
    let schema = std::fs::read_to_string(support::root().join(fixture).join("schema.sql"))
        .expect("fixture schema");
    case.load(&format!("{schema}\n{rows}"), fixture).await;
    let plan_path = case.plan(fixture);
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan_path,
        &run,
        &["--create-schema"],
    )));
    let summary: RunSummary = serde_json::from_str(
        &std::fs::read_to_string(run.join("summary.json")).expect("summary.json"),
    )
    .expect("summary");
    (plan_path, summary)
}

fn read_plan(path: &str) -> Plan {
    serde_json::from_str(&std::fs::read_to_string(path).expect("plan.json")).expect("plan")
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_a_fifth_of_a_millisecond_apart_all_come_back() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_ledger_us").await;
    let (plan_path, summary) =
        load_and_backfill(&case, "fixtures/plan/ledger_precision", LEDGER_ROWS).await;
    let ledger = summary
        .tables
        .iter()
        .find(|t| t.name.starts_with("ledger"))
        .expect("the ledger table's counts");
    assert_eq!((ledger.rows_read, ledger.rows_written), (30, 30));
    let stored: i64 = case
        .ks
        .session()
        .query_unpaged(
            format!("SELECT count(*) FROM {}.{}", case.ks.name(), ledger.name),
            (),
        )
        .await
        .expect("count")
        .into_rows_result()
        .expect("rows")
        .single_row::<(i64,)>()
        .expect("one row")
        .0;
    assert_eq!(stored, 30, "every row written is a row stored");

    let plan = read_plan(&plan_path);
    let target = CqlTarget::new(case.ks.node(), None).unwrap();
    let (pg, session) = remodel_replay::connect(&PgSource::new(&case.url), &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut r = Replayer::new(&plan, &pg, &session);
    let by_account = id(&plan, "SELECT posted_at, amount, memo FROM ledger");
    let window = id(&plan, "SELECT posted_at, amount FROM ledger");
    let one = id(&plan, "SELECT amount, memo FROM ledger");
    let at = |us: u32| format!("2025-01-15 10:00:00.{us:06}+00");
    assert_eq!(read_matches(&mut r, &by_account, &[Some("1")]).await, 10);
    let (lo, hi) = (at(400), at(1200));
    assert_eq!(
        read_matches(&mut r, &window, &[Some("1"), Some(&lo), Some(&hi)]).await,
        4
    );
    assert_eq!(
        read_matches(&mut r, &one, &[Some("1"), Some(&at(600))]).await,
        1
    );

    // Writes address the exact row: a new one 0.1 ms after another, an update and a delete of
    // one row of a millisecond that holds five.
    let insert = id(&plan, "INSERT INTO ledger");
    let update = id(&plan, "UPDATE ledger");
    let delete = id(&plan, "DELETE FROM ledger");
    let t = at(100);
    write(
        &mut r,
        &plan,
        &insert,
        &[Some("1"), Some(&t), Some("9.50"), Some("new")],
    )
    .await;
    assert_eq!(read_matches(&mut r, &by_account, &[Some("1")]).await, 11);
    let t = at(600);
    assert_eq!(
        write(
            &mut r,
            &plan,
            &update,
            &[Some("changed"), Some("1"), Some(&t)]
        )
        .await,
        1
    );
    assert_eq!(read_matches(&mut r, &one, &[Some("1"), Some(&t)]).await, 1);
    let t = at(200);
    assert_eq!(
        write(&mut r, &plan, &delete, &[Some("1"), Some(&t)]).await,
        1
    );
    assert_eq!(read_matches(&mut r, &by_account, &[Some("1")]).await, 10);
    drop(r);
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_that_merges_rows_is_rejected_as_duplicate_key_not_written() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("backfill_dup_key").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/plan/ledger_precision/schema.sql"))
            .expect("schema");
    case.load(&format!("{schema}\n{LEDGER_ROWS}"), "the ledger rows")
        .await;
    // The plan as it was before keys kept microseconds: posted_at a millisecond timestamp.
    let plan_path = std::path::PathBuf::from(case.plan("fixtures/plan/ledger_precision"));
    let folder = plan_path.parent().expect("plan folder");
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    for t in plan["design"]["tables"].as_array_mut().unwrap() {
        if t["entity"] != "ledger" {
            continue;
        }
        for k in t["clustering"].as_array_mut().unwrap() {
            if k["column"] == "posted_at" {
                k["type"] = "timestamp".into();
                k.as_object_mut().unwrap().remove("encoding");
            }
        }
        for c in t["columns"].as_array_mut().unwrap() {
            if c["name"] == "posted_at" {
                c["type"] = "timestamp".into();
                c.as_object_mut().unwrap().remove("encoding");
            }
        }
        // The query that runs is the typed one; its text is kept the same for the reviewer.
        for c in t["source"]["columns"].as_array_mut().unwrap() {
            if c["name"] == "posted_at" {
                c["value"]["kind"] = "column".into();
            }
        }
        let sql = t["source_sql"].as_str().unwrap().to_string();
        let start = sql.find("CASE WHEN").expect("the encoded column");
        let end = sql[start..].find(" END").expect("its end") + start + 4;
        t["source_sql"] = format!("{}t0.posted_at{}", &sql[..start], &sql[end..]).into();
    }
    std::fs::write(&plan_path, serde_json::to_string(&plan).unwrap()).unwrap();
    let cql_path = folder.join("schema.cql");
    let cql = std::fs::read_to_string(&cql_path).unwrap();
    let cql = cql.replace(
        "posted_at bigint, -- microseconds since 1970-01-01 UTC (epoch_micros): the source keeps microseconds",
        "posted_at timestamp,",
    );
    std::fs::write(&cql_path, cql).unwrap();

    let run = case.dir.join("run");
    let plan_s = plan_path.to_string_lossy().to_string();
    support::remodel_ok(&refs(&case.backfill_args(
        &plan_s,
        &run,
        &["--create-schema", "--max-errors", "100"],
    )));
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let ledger = summary
        .tables
        .iter()
        .find(|t| t.name.starts_with("ledger"))
        .expect("ledger counts");
    // 3 accounts × 2 milliseconds: 6 rows stored, 24 rows said so instead of "written".
    assert_eq!(
        (ledger.rows_read, ledger.rows_written, ledger.rows_rejected),
        (30, 6, 24)
    );
    let rejects = std::fs::read_to_string(run.join(format!("rejects/{}.jsonl", ledger.name)))
        .expect("rejects file");
    assert_eq!(rejects.lines().count(), 24);
    assert!(
        rejects
            .lines()
            .all(|l| l.contains("\"kind\":\"duplicate_key\"")),
        "{rejects}"
    );
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn equal_rows_of_a_keyless_table_all_come_back_and_a_delete_removes_them_all() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_keyless").await;
    let (plan_path, summary) =
        load_and_backfill(&case, "fixtures/plan/keyless_follows", FOLLOWS_ROWS).await;
    for t in &summary.tables {
        assert_eq!(t.rows_read, t.rows_written, "{}: every row stored", t.name);
    }
    let plan = read_plan(&plan_path);
    let target = CqlTarget::new(case.ks.node(), None).unwrap();
    let (pg, session) = remodel_replay::connect(&PgSource::new(&case.url), &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut r = Replayer::new(&plan, &pg, &session);
    let followed = id(&plan, "SELECT u.id, u.name, f.since");
    let liked = id(&plan, "SELECT p.id, p.body, l.at");
    assert_eq!(read_matches(&mut r, &followed, &[Some("1")]).await, 5);
    assert_eq!(read_matches(&mut r, &liked, &[Some("1")]).await, 3);

    // A DELETE of a value removes every equal row, as Postgres does.
    let unfollow = id(&plan, "DELETE FROM follows");
    assert_eq!(
        write(&mut r, &plan, &unfollow, &[Some("1"), Some("3")]).await,
        3
    );
    assert_eq!(read_matches(&mut r, &followed, &[Some("1")]).await, 2);
    // An UPDATE changes every equal row.
    let since = id(&plan, "UPDATE follows");
    let t = "2025-03-01 00:00:00+00";
    assert_eq!(
        write(&mut r, &plan, &since, &[Some(t), Some("1"), Some("2")]).await,
        2
    );
    assert_eq!(read_matches(&mut r, &followed, &[Some("1")]).await, 2);
    // An INSERT of a row equal to one stored adds a copy.
    let like = id(&plan, "INSERT INTO likes");
    let t = "2025-01-01 00:00:00+00";
    write(&mut r, &plan, &like, &[Some("1"), Some("1"), Some(t)]).await;
    assert_eq!(read_matches(&mut r, &liked, &[Some("1")]).await, 4);
    let unlike = id(&plan, "DELETE FROM likes");
    assert_eq!(
        write(&mut r, &plan, &unlike, &[Some("1"), Some("1")]).await,
        3
    );
    assert_eq!(read_matches(&mut r, &liked, &[Some("1")]).await, 1);
    drop(r);
    case.cleanup().await;
}
