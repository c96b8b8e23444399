//! End-to-end: the `remodel analyze` binary on the rideshare example.

mod support;

use std::path::PathBuf;
use support::{remodel, root};

const SCHEMA: &str = "examples/rideshare/schema.sql";
const QUERIES: &str = "examples/rideshare/queries.sql";

#[test]
fn text_lists_patterns_by_weight_and_decisions() {
    let out = remodel(&["analyze", "--schema", SCHEMA, "--queries", QUERIES]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Access patterns: 7 (2,138,450 calls), heaviest first"),
        "{text}"
    );
    // Heaviest first: the driver history (1,200,000 calls) before the trip INSERT (400,000).
    let q1 = text.find("q1  select  1,200,000 calls").expect("q1");
    let q5 = text.find("q5  insert  400,000 calls").expect("q5");
    assert!(q1 < q5);
    assert!(text.contains("filter:    trips.city = $1; trips.started_at >= $2 ['2025-01-15'] AND < $3 ['2025-01-16']  (window: day)"), "{text}");
    assert!(text.contains("sort:      trips.started_at DESC"));
    assert!(text.contains(
        "join:      drivers.home_city = cities.city  (along drivers(home_city) -> cities(city))"
    ));
    assert!(
        text.contains("cities 1-N drivers (home_city): duplicate-columns [country]"),
        "{text}"
    );
    assert!(
        text.contains("drivers 1-N trips (driver_id): reference"),
        "{text}"
    );
    assert!(text.contains("rule: one-to-many, unbounded N → reference"));
}

#[test]
fn json_is_the_plan_model() {
    let out = remodel(&[
        "analyze",
        "--schema",
        SCHEMA,
        "--queries",
        QUERIES,
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let workload: remodel_model::Workload =
        serde_json::from_value(v["workload"].clone()).expect("a Workload");
    let rels: Vec<remodel_model::Relationship> =
        serde_json::from_value(v["relationships"].clone()).expect("Relationships");
    assert_eq!(workload.patterns.len(), 7);
    assert_eq!(rels.len(), 3);
    let city = workload
        .patterns
        .iter()
        .find(|p| p.sql.contains("city = $1"))
        .expect("pattern (2)");
    assert_eq!(
        city.analysis.ranges[0].window,
        Some(remodel_model::TimeWindow::Day)
    );
    assert_eq!(v["inferred_foreign_keys"].as_array().map(Vec::len), Some(0));
}

#[test]
fn config_file_and_flags_change_thresholds() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let cfg = dir.join("analyze-no-embed.toml");
    std::fs::write(
        &cfg,
        "# nothing may be copied or embedded\nmax_embed_attributes = 0\n",
    )
    .expect("write config");
    let cfg = cfg.to_string_lossy().to_string();
    let out = remodel(&[
        "analyze",
        "--schema",
        SCHEMA,
        "--queries",
        QUERIES,
        "--config",
        &cfg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cities 1-N drivers (home_city): reference"),
        "{text}"
    );
    // A flag overrides the file.
    let out = remodel(&[
        "analyze",
        "--schema",
        SCHEMA,
        "--queries",
        QUERIES,
        "--config",
        &cfg,
        "--max-embed-attributes",
        "3",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("duplicate-columns [country]"));
    // Out of range: exit 2 with a reason.
    let out = remodel(&[
        "analyze",
        "--schema",
        SCHEMA,
        "--queries",
        QUERIES,
        "--min-co-access-share",
        "1.5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("min_co_access_share must be between 0 and 1"));
    // Unknown key in the file: exit 2, names the key.
    let bad = dir.join("analyze-bad.toml");
    std::fs::write(&bad, "max_embedded = 3\n").expect("write config");
    let out = remodel(&[
        "analyze",
        "--schema",
        SCHEMA,
        "--queries",
        QUERIES,
        "--config",
        &bad.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("max_embedded"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn unusable_input_exits_2() {
    let out = remodel(&[
        "analyze",
        "--schema",
        "no/such/schema.sql",
        "--queries",
        QUERIES,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/schema.sql"));
    let out = remodel(&["analyze", "--schema", QUERIES, "--queries", QUERIES]);
    assert_eq!(out.status.code(), Some(2), "a file with no table");
}

/// The book shows the real output: the rideshare run in `book/src/analyze.md` is what the binary prints.
#[test]
fn book_shows_the_real_output() {
    let book = std::fs::read_to_string(root().join("book/src/analyze.md")).expect("book page");
    let cmd = "$ remodel analyze --schema examples/rideshare/schema.sql --queries examples/rideshare/queries.sql\n";
    let start = book.find(cmd).expect("the rideshare run is in the book") + cmd.len();
    let shown = &book[start..start + book[start..].find("\n```").expect("end of block")];
    let out = remodel(&["analyze", "--schema", SCHEMA, "--queries", QUERIES]);
    assert_eq!(
        shown.trim_end(),
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "regenerate the example in book/src/analyze.md"
    );
}
