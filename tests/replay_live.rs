//! Replay against real Postgres and Cassandra: the plan's own statements executed on rows loaded
//! on both sides, compared with the SQL. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_replay::{CqlTarget, Params, PgSource, Replayer};
use remodel_testdb::scylla::client::session::Session;
use remodel_testdb::scylla::value::CqlValue;
use support::live::{read_matches as matches, Case};

/// The library rows: 4 branches in 3 cities (two in Paris, so one shelf-and-city partition holds
/// books of two branches), 400 books on 8 shelves with due dates 20 days either side of today at
/// whole hours (so many books of a shelf share a due date: ties in the ORDER BY), every fifth
/// without holds.
const LIBRARY_ROWS: &str = "
INSERT INTO branches VALUES (1, 'Paris'), (2, 'Lyon'), (3, 'Paris'), (4, 'Nantes');
INSERT INTO members SELECT i, 'm' || i || '@example.org', lpad((i * 7919 % 10000)::text, 4, '0'),
    1 + i % 4, 'Member ' || i FROM generate_series(1, 40) i;
INSERT INTO books SELECT i, 'shelf-' || (i % 8), 'Title ' || i, 1 + (i * 7) % 4,
    date_trunc('day', now()) + ((i * 37) % 41 - 20) * interval '1 day' + (i % 3) * interval '1 hour',
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 9 END, 'About book ' || i
  FROM generate_series(1, 400) i;";

/// Book ids stored at `(key…, due_at, book_id = 7)` in `table` (the key columns before due_at named
/// in `key`).
async fn stored(
    session: &Session,
    ks: &str,
    table: &str,
    key: &str,
    values: Vec<CqlValue>,
) -> usize {
    let cql =
        format!("SELECT book_id FROM {ks}.{table} WHERE {key} AND due_at = ? AND book_id = 7");
    let rows = session
        .query_unpaged(cql.as_str(), values)
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e}"))
        .into_rows_result()
        .unwrap();
    rows.rows_num()
}

#[tokio::test(flavor = "multi_thread")]
async fn library_key_change_moves_rows_and_reads_match_postgres() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_library").await;
    let schema = std::fs::read_to_string(support::root().join("fixtures/plan/library/schema.sql"))
        .expect("library schema");
    case.load(&format!("{schema}\n{LIBRARY_ROWS}"), "the library rows")
        .await;
    let plan = case.backfill_created(&case.plan("fixtures/plan/library"));
    let target = CqlTarget::new(case.ks.node(), None).unwrap();
    let (pg, session) = remodel_replay::connect(&PgSource::new(&case.url), &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut r = Replayer::new(&plan, &pg, &session);

    let book = pg
        .query_one(
            "SELECT b.shelf, br.city, b.owner_branch::text, b.due_at, \
                    to_char(b.due_at - interval '9 days' + interval '30 minutes', 'YYYY-MM-DD HH24:MI:SSOF') \
             FROM books b JOIN branches br ON br.branch_id = b.owner_branch WHERE b.book_id = 7",
            &[],
        )
        .await
        .unwrap();
    let (shelf, city, branch): (String, String, String) = (book.get(0), book.get(1), book.get(2));
    let old_due: std::time::SystemTime = book.get(3);
    let new_due: String = book.get(4);
    let reads = |shelf: &str, city: &str, branch: &str| {
        [
            (
                "q1",
                vec![
                    Some(shelf.to_string()),
                    Some(city.to_string()),
                    Some("20".into()),
                ],
            ),
            (
                "q7",
                vec![Some(shelf.to_string()), Some("10".into()), Some("3".into())],
            ),
            (
                "q7",
                vec![
                    Some(shelf.to_string()),
                    Some("100".into()),
                    Some("0".into()),
                ],
            ),
            ("q5", vec![Some(branch.to_string()), Some("14 days".into())]),
            ("q2", vec![Some("7".into())]),
        ]
    };
    for (id, values) in reads(&shelf, &city, &branch) {
        let values: Vec<Option<&str>> = values.iter().map(|v| v.as_deref()).collect();
        assert!(
            matches(&mut r, id, &values).await > 0,
            "{id} {values:?} returns rows"
        );
    }

    // The key-changing update, through the plan's write path on both sides.
    let p = r.prepare("q4").await.unwrap();
    let params = Params::from_text(&pg, &p.param_types, &[Some(&new_due), Some("7")])
        .await
        .unwrap();
    let path = plan
        .design
        .writes
        .iter()
        .find(|w| w.pattern == "q4")
        .unwrap();
    let on_pg = r.write_pg(&p, &params).await.unwrap();
    assert_eq!(on_pg.rows.len(), 1);
    let on_cql = r
        .write_cql(&p, path, &params, &on_pg)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((on_cql.statements, on_cql.guarded), (7, 0));

    // due_at is in every key, so the plan keeps it as epoch microseconds (the source keeps them).
    let new_us = pg
        .query_one(
            "SELECT (extract(epoch FROM due_at) * 1000000)::int8 FROM books WHERE book_id = 7",
            &[],
        )
        .await
        .unwrap()
        .get::<_, i64>(0);
    let old_us = old_due
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    let ks = case.ks.name();
    let at = CqlValue::BigInt;
    let text = |s: &str| CqlValue::Text(s.to_string());
    let branch_id = CqlValue::Int(branch.parse().unwrap());
    let copies = [
        ("books_by_shelf", "shelf = ?", vec![text(&shelf)]),
        ("books_by_owner_branch", "owner_branch = ?", vec![branch_id]),
        (
            "books_by_shelf_city",
            "shelf = ? AND city = ?",
            vec![text(&shelf), text(&city)],
        ),
    ];
    for (due, want) in [(old_us, 0), (new_us, 1)] {
        for (table, key, values) in &copies {
            let mut values = values.clone();
            values.push(at(due));
            let n = stored(&session, ks, table, key, values).await;
            assert_eq!(n, want, "{table}: rows of book 7 at due_at {due} µs");
        }
    }
    for (id, values) in reads(&shelf, &city, &branch) {
        let values: Vec<Option<&str>> = values.iter().map(|v| v.as_deref()).collect();
        matches(&mut r, id, &values).await;
    }

    // The same due date again: the key does not change, so the guarded DELETEs do not run (in one
    // batch they would share the INSERT's timestamp, and the tombstone would win).
    let on_pg = r.write_pg(&p, &params).await.unwrap();
    let again = r.write_cql(&p, path, &params, &on_pg).await.unwrap();
    assert_eq!((again.statements, again.guarded), (4, 3));
    assert_eq!(
        stored(
            &session,
            ks,
            "books_by_shelf",
            "shelf = ?",
            vec![text(&shelf), at(new_us)]
        )
        .await,
        1
    );
    matches(&mut r, "q7", &[Some(&shelf), Some("100"), Some("0")]).await;
    drop(r);
    case.cleanup().await;
}

/// Plans `input` for the case's keyspace, breaks the plan with `edit` (plan.json as JSON, and
/// schema.cql as text), replays the `patterns` and returns the exit status and the report.
fn replay_broken(
    case: &Case,
    input: &str,
    edit: impl FnOnce(&mut serde_json::Value, &mut String),
    patterns: &str,
    writes: bool,
) -> (Option<i32>, String) {
    let plan_path = std::path::PathBuf::from(case.plan(input));
    let folder = plan_path.parent().expect("plan folder");
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    let mut cql = std::fs::read_to_string(folder.join("schema.cql")).unwrap();
    edit(&mut plan, &mut cql);
    std::fs::write(&plan_path, serde_json::to_string(&plan).unwrap()).unwrap();
    std::fs::write(folder.join("schema.cql"), cql).unwrap();
    let plan_s = plan_path.to_string_lossy().to_string();
    let mut args = vec![
        "replay",
        "--plan",
        &plan_s,
        "--source",
        &case.url,
        "--target",
        case.ks.node(),
        "--samples",
        "20",
        "--now",
        support::REPLAY_NOW,
        "--patterns",
        patterns,
    ];
    if writes {
        args.push("--writes");
    }
    let out = support::remodel(&args);
    let shown = format!(
        "{}\n{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    (out.status.code(), shown)
}

/// The element of a JSON array whose `key` is `value`.
fn find<'v>(array: &'v mut serde_json::Value, key: &str, value: &str) -> &'v mut serde_json::Value {
    array
        .as_array_mut()
        .expect("array")
        .iter_mut()
        .find(|e| e[key] == value)
        .unwrap_or_else(|| panic!("no {key} = {value}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_clustering_column_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_no_clustering").await;
    // trips_by_driver keeps a driver's trips by trip id instead of newest first: q1 (the last 10
    // trips of a driver) gets them in the wrong order.
    let (status, report) = replay_broken(
        &case,
        "examples/rideshare",
        |plan, cql| {
            let t = find(&mut plan["design"]["tables"], "name", "trips_by_driver");
            t["clustering"]
                .as_array_mut()
                .unwrap()
                .retain(|k| k["column"] != "started_at");
            let q = find(&mut plan["design"]["queries"], "pattern", "q1");
            let text = q["cql"]
                .as_str()
                .unwrap()
                .replace(" ORDER BY started_at DESC", "");
            q["cql"] = text.into();
            *cql = cql.replace(
                "PRIMARY KEY ((driver_id), started_at, trip_id)\n) WITH CLUSTERING ORDER BY (started_at DESC, trip_id ASC)",
                "PRIMARY KEY ((driver_id), trip_id)\n) WITH CLUSTERING ORDER BY (trip_id ASC)",
            );
        },
        "q1",
        false,
    );
    assert_eq!(status, Some(1), "{report}");
    assert!(
        report.contains("MISMATCH q1 ($1=drv_") || report.contains("MISMATCH q1 ($1=driver_i"),
        "{report}"
    );
    assert!(
        report.contains("in another order than the ORDER BY allows"),
        "{report}"
    );
    assert!(
        report.contains("  SQL (") && report.contains("  Cassandra ("),
        "{report}"
    );
    assert!(
        report.contains("started_at="),
        "both results are shown: {report}"
    );
    // The migration report shows the replay (replay.json beside the plan): the difference needs
    // a decision, and the chapter shows it with both results.
    let folder = case.dir.join("plan");
    let plan = folder.join("plan.json");
    let book = case.dir.join("report");
    support::remodel_ok(&[
        "report",
        "--plan",
        &plan.to_string_lossy(),
        "--replay",
        &folder.to_string_lossy(),
        "--out",
        &book.to_string_lossy(),
    ]);
    let read = |p: &str| std::fs::read_to_string(book.join("src").join(p)).expect(p);
    let overview = read("overview.md");
    assert!(
        overview.contains("1. **Replay found ")
            && overview.contains(" difference(s)** in [q1](query-mapping.md#q1): "),
        "{overview}"
    );
    let chapter = read("replay.md");
    assert!(
        chapter.contains("| [q1](query-mapping.md#q1) read | replayed | 20 | **"),
        "{chapter}"
    );
    assert!(
        chapter.contains("### q1 (read)")
            && chapter.contains(": same rows in another order than the ORDER BY allows.")
            && chapter.contains("  Cassandra ("),
        "{chapter}"
    );
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_the_write_path_does_not_update_is_caught() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("replay_stale_copy").await;
    // The holds update forgets books_by_shelf_city, which copies holds for q1.
    let (status, report) = replay_broken(
        &case,
        "fixtures/plan/library",
        |plan, _| {
            let w = find(&mut plan["design"]["writes"], "pattern", "q3");
            w["targets"]
                .as_array_mut()
                .unwrap()
                .retain(|t| t["table"] != "books_by_shelf_city");
        },
        "q1,q3",
        true,
    );
    assert_eq!(status, Some(1), "{report}");
    assert!(report.contains("MISMATCH q1 ("), "{report}");
    assert!(report.contains(") after q3 with $1="), "{report}");
    assert!(report.contains("different rows"), "{report}");
    assert!(
        report.contains("holds="),
        "both results are shown: {report}"
    );
    case.cleanup().await;
}
