//! Every read a real application runs gets a correct table (issue "every read served"): one
//! fixture per class of read the plan used to leave without a table, planned, then replayed
//! against real Postgres and Cassandra — reads and writes on generated rows (`--writes`, with
//! NULLs and the adversarial samplers), then every read again on the rows both sides hold after
//! it (`--existing`, read-only). Each must be fully covered and replay without a difference.
//! Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use serde_json::Value;
use support::live::{json, Case};

/// Plans `fixtures/plan/<fixture>`, checks every read and write is served, and replays it both
/// ways; returns the generated replay's report for further checks.
async fn served_and_replayed(fixture: &str) -> Value {
    let case = Case::new(&format!("served_{fixture}")).await;
    let plan = case.plan(&format!("fixtures/plan/{fixture}"));
    let designed = json(std::path::Path::new(&plan));
    let gaps = &designed["design"]["coverage"]["gaps"];
    assert!(
        gaps.as_array().is_none_or(Vec::is_empty),
        "{fixture}: not every pattern is served: {gaps:#}"
    );
    let (report, shown) = case.replay_writes(&plan, 10, 300, 1);
    check_replayed(fixture, &report, &shown, true);
    let (status, shown, existing) =
        case.replay_existing(&designed, "existing", &["--samples", "10"]);
    assert_eq!(status, Some(0), "{fixture} --existing:\n{shown}");
    check_replayed(fixture, &existing, &shown, false);
    case.cleanup().await;
    report
}

/// Every pattern of `report` replayed with samples and no difference (writes too with `writes`).
fn check_replayed(fixture: &str, report: &Value, shown: &str, writes: bool) {
    let patterns = report["patterns"].as_array().expect("patterns");
    assert!(
        !patterns.is_empty(),
        "{fixture}: nothing replayed:\n{shown}"
    );
    assert_eq!(report["writes"], writes, "{fixture}");
    for p in patterns {
        assert_eq!(
            p["outcome"], "replayed",
            "{fixture} {}:\n{shown}",
            p["pattern"]
        );
        assert!(
            p["samples"].as_u64() > Some(0),
            "{fixture} {}:\n{shown}",
            p["pattern"]
        );
        let differences = p["mismatches"].as_array().map_or(0, Vec::len);
        assert_eq!(differences, 0, "{fixture} {}:\n{shown}", p["pattern"]);
    }
}

/// Class 2, expressions over parameters: a conversation keyed by `md5($2 || $1)::uuid` (read
/// and written), an `IN` list sent as `= ANY($1::bigint[])`, a handle compared with
/// `concat('@', lower(btrim($1)))`. The reads after the INSERT must find the message it wrote
/// (the computed key on both sides agrees).
#[tokio::test(flavor = "multi_thread")]
async fn expressions_over_parameters() {
    remodel_testdb::live!(Postgres, Cassandra);
    let report = served_and_replayed("param_exprs").await;
    let insert = report["patterns"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["kind"] == "insert" && p["reads_after"].as_u64() > Some(0))
        })
        .expect("an INSERT with reads after it");
    assert!(
        insert["rows"].as_u64() > Some(0),
        "the reads after the INSERT found the rows it wrote: {insert:#}"
    );
}

/// Class 4, keyset pagination: a feed paged newest first by `(created_at, id) < ($2, $3)`, the
/// same oldest first with `>=`, a leaderboard paged with `<=` over `score DESC, player_id ASC`
/// and with the row on the right; the posts and scores written and updated between pages.
#[tokio::test(flavor = "multi_thread")]
async fn keyset_pages() {
    remodel_testdb::live!(Postgres, Cassandra);
    let report = served_and_replayed("keyset").await;
    let rows: u64 = report["patterns"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["kind"] == "select")
                .filter_map(|p| p["rows"].as_u64())
                .sum()
        })
        .unwrap_or(0);
    assert!(rows > 0, "the pages returned rows: {report:#}");
}

/// Classes 1 and 3: a `citext` e-mail looked up by `=` and an e-mail looked up by
/// `lower(email) = lower($1)`, a handle by `upper(handle)`: each keyed by its lookup column; the
/// samples change the case of the value looked up, the writes change the e-mail (the row moves).
#[tokio::test(flavor = "multi_thread")]
async fn lookups_by_a_function_of_a_column() {
    remodel_testdb::live!(Postgres, Cassandra);
    served_and_replayed("lookups").await;
}

/// Class 1: categories and items looked up by an `ltree` path, an extension's type: replay
/// creates the extension, the plan compares the text the type makes of the value sent.
#[tokio::test(flavor = "multi_thread")]
async fn types_the_plan_does_not_know() {
    remodel_testdb::live!(Postgres, Cassandra);
    served_and_replayed("text_forms").await;
}

/// Class 1, domains: e-mails of a domain over `citext` looked up in another case, posts ranked
/// by domains over `integer` (sorted as numbers, a range on them): replay creates the domains
/// with the schema, and nothing differs.
#[tokio::test(flavor = "multi_thread")]
async fn columns_of_a_domain() {
    remodel_testdb::live!(Postgres, Cassandra);
    served_and_replayed("domains").await;
}

/// Class 5: the plan warns (`collation_order`) the reads whose ORDER BY takes text under a
/// linguistic collation or an enum not declared in its labels' bytes' order; replayed (with
/// upper- and lower-case names under the ICU collation), exactly those reads return their rows
/// in another order, and nothing else differs: a column under "C" keeps its order.
#[tokio::test(flavor = "multi_thread")]
async fn text_orders_cassandra_does_not_keep_are_the_ones_warned() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("served_collations").await;
    let plan = case.plan("fixtures/plan/collations");
    let designed = json(std::path::Path::new(&plan));
    let mut warned: Vec<String> = designed["design"]["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .flat_map(|t| t["warnings"].as_array().cloned().unwrap_or_default())
        .filter(|w| w["code"] == "collation_order")
        .filter_map(|w| {
            w["message"]
                .as_str()
                .and_then(|m| m.split_whitespace().next())
                .map(str::to_string)
        })
        .collect();
    warned.sort();
    let (report, shown) = case.replay_writes(&plan, 10, 300, 1);
    let mut differing: Vec<String> = Vec::new();
    for p in report["patterns"].as_array().expect("patterns") {
        assert_eq!(p["outcome"], "replayed", "{shown}");
        for m in p["mismatches"].as_array().cloned().unwrap_or_default() {
            assert_eq!(
                m["reason"], "same rows in another order than the ORDER BY allows",
                "{shown}"
            );
            differing.push(m["pattern"].as_str().unwrap_or_default().to_string());
        }
    }
    differing.sort();
    differing.dedup();
    assert_eq!(
        differing, warned,
        "the reads out of order are the ones warned:\n{shown}"
    );
    case.cleanup().await;
}
