//! Every write right (issue "every write right"), against real Postgres and Cassandra: each
//! fixture planned and replayed with its writes on generated rows (NULLs drawn in every nullable
//! column), then read again as both sides hold the rows (`--existing`): no write path fails and
//! nothing differs. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::Value;
use support::live::{json, Case};

/// Plans `fixtures/plan/<fixture>` and replays it both ways; returns the generated replay.
async fn written_and_replayed(fixture: &str) -> Value {
    let case = Case::new(&format!("writes_{fixture}")).await;
    let plan = case.plan(&format!("fixtures/plan/{fixture}"));
    let designed = json(std::path::Path::new(&plan));
    let (report, shown) = case.replay_writes(&plan, 12, 300, 1);
    for p in report["patterns"].as_array().expect("patterns") {
        assert_eq!(
            p["outcome"], "replayed",
            "{fixture} {}:\n{shown}",
            p["pattern"]
        );
        let differences = p["mismatches"].as_array().map_or(0, Vec::len);
        assert_eq!(differences, 0, "{fixture} {}:\n{shown}", p["pattern"]);
    }
    let (status, shown, existing) =
        case.replay_existing(&designed, "existing", &["--samples", "12"]);
    assert_eq!(status, Some(0), "{fixture} --existing:\n{shown}");
    assert_eq!(existing["existing"], true);
    case.cleanup().await;
    report
}

/// The replay's writes were followed by reads (what checks them).
fn assert_reads_after(report: &Value) {
    let after: u64 = report["patterns"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["reads_after"].as_u64()).sum())
        .unwrap_or(0);
    assert!(after > 0, "the writes were followed by reads: {report:#}");
}

/// Class 1: orders listed by `shipped_at DESC` (NULL until shipped), read with a lower bound on
/// it too; inserted unshipped, shipped by `now()` (the row moves), deleted. The reads after each
/// write find the rows as SQL does, NULLs where SQL puts them.
#[tokio::test(flavor = "multi_thread")]
async fn null_in_a_listing_key() {
    remodel_testdb::live!(Postgres, Cassandra);
    let report = written_and_replayed("null_sort_keys").await;
    assert_reads_after(&report);
}

/// Class 1 beyond microsecond timestamps: tasks listed by a nullable due date `NULLS FIRST`
/// (with an upper bound too) and by a nullable integer priority `DESC`, runs by a nullable
/// smallint batch, events by a nullable millisecond timestamp `NULLS FIRST` (with a lower
/// bound); inserted with NULLs drawn, moved by updates, deleted. Every write succeeds and the
/// reads after it find SQL's rows in SQL's order, NULLs where SQL puts them.
#[tokio::test(flavor = "multi_thread")]
async fn null_in_a_listing_key_of_a_date_an_integer_or_a_millisecond_timestamp() {
    remodel_testdb::live!(Postgres, Cassandra);
    let report = written_and_replayed("null_sort_keys_typed").await;
    assert_reads_after(&report);
}

/// Class 1 for text, numeric and bigint sort keys, which no key form holds NULL in: the listings
/// are sorted on the client (NULLs where SQL puts them), so contacts inserted without a last name,
/// a balance or a company are stored and listed, and a later UPDATE setting them is read back.
#[tokio::test(flavor = "multi_thread")]
async fn null_in_a_listing_key_of_text_numeric_or_bigint() {
    remodel_testdb::live!(Postgres, Cassandra);
    let report = written_and_replayed("null_sort_keys_client").await;
    assert_reads_after(&report);
}

/// Edges: a `money` and an `xml` column come back from a read as the backfill stores them
/// (numeric, text): `--existing` used to report every row of such a table as different (replay
/// had no conversion of those types).
#[tokio::test(flavor = "multi_thread")]
async fn money_and_xml_results_compare_as_stored() {
    remodel_testdb::live!(Postgres, Cassandra);
    written_and_replayed("money").await;
}

/// Class 5, batches that fit: with statistics (2,000 comments for the most active author), a
/// nickname change would rewrite the author's copy in one logged batch past Cassandra's size
/// limit, so the plan sends it in chunks. Replayed with chunks of one statement (the plan edited:
/// the generated rows give an author a few comments), every copy is written and read back.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_sent_in_chunks_writes_every_copy() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("writes_chunks").await;
    let dir = support::root().join("fixtures/plan/fold_parents");
    let file = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let out = case.dir.join("plan");
    let out_s = out.to_string_lossy().into_owned();
    support::remodel_ok(&[
        "plan",
        "--schema",
        &file("schema.sql"),
        "--queries",
        &file("app.log"),
        "--stats",
        &file("stats.json"),
        "--keyspace",
        case.ks.name(),
        "--out",
        &out_s,
    ]);
    let path = out.join("plan.json");
    let mut plan = json(&path);
    let mut chunked = 0;
    for w in plan["design"]["writes"].as_array_mut().expect("writes") {
        if w["batch"]["max_statements"].is_u64() {
            w["batch"]["max_statements"] = 1.into();
            chunked += 1;
        }
    }
    assert_eq!(chunked, 1, "the nickname change is sent in chunks");
    std::fs::write(&path, serde_json::to_string_pretty(&plan).expect("json")).expect("write");
    let (report, shown) = case.replay_writes(&path.to_string_lossy(), 12, 300, 1);
    for p in report["patterns"].as_array().expect("patterns") {
        let differences = p["mismatches"].as_array().map_or(0, Vec::len);
        assert_eq!(differences, 0, "{}:\n{shown}", p["pattern"]);
    }
    // The copies in other partitions (the comments the renamed users wrote), as both sides
    // hold them after the writes.
    let (status, shown, _) = case.replay_existing(&plan, "existing", &["--samples", "40"]);
    assert_eq!(status, Some(0), "--existing:\n{shown}");
    case.cleanup().await;
}
