//! Coverage — the share of the application's reads (by patterns and by calls) a table serves by
//! its key, and of its writes that have a path — over every corpus of `fixtures/corpora/` and
//! every fixture plan, with each gap and its class, in `fixtures/coverage.txt` (expect-test:
//! `UPDATE_EXPECT=1` rewrites it, so a design change shows as a reviewed diff).
//!
//! Every plan passes the designer's own validator: no input gets a plan it refuses.
//!
//! Coverage may only go up: before comparing, every read or write the committed file shows as
//! served must still be served (a gap that is new, or a gap that got worse — a keyed read become
//! a scan — fails even with `UPDATE_EXPECT=1`: accepting one takes a hand edit of the file).

mod support;

use remodel_model::{Coverage, GapClass, Statistics};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::pipeline::{plan_files, root};

/// One input to plan: a name, its schema, queries and statistics files.
struct Input {
    name: String,
    schema: PathBuf,
    queries: PathBuf,
    stats: Option<PathBuf>,
}

/// Every fixture plan with a schema and a workload, the rideshare example, and the corpora.
fn inputs() -> Vec<Input> {
    let root = root();
    let mut out = Vec::new();
    let corpora = root.join("fixtures/corpora");
    for (name, schema, queries) in [
        (
            "auctionmark",
            "auctionmark/ddl-postgres.sql",
            "auctionmark/queries.sql",
        ),
        ("seats", "seats/ddl-postgres.sql", "seats/queries.sql"),
        (
            "smallbank",
            "smallbank/ddl-postgres.sql",
            "smallbank/queries.sql",
        ),
        ("tpcc", "tpcc/ddl-postgres.sql", "tpcc/queries.sql"),
        ("twitter", "twitter/ddl-postgres.sql", "twitter/queries.sql"),
        ("voter", "voter/ddl-postgres.sql", "voter/queries.sql"),
        (
            "wikipedia",
            "wikipedia/ddl-postgres.sql",
            "wikipedia/queries.sql",
        ),
        ("pagila", "pagila/pagila-schema.sql", "pagila/queries.sql"),
        (
            "pagila_readme",
            "pagila/pagila-schema.sql",
            "pagila/readme-examples.sql",
        ),
        (
            "pgbench",
            "pgbadger-logs/pgbench-schema.sql",
            "pgbadger-logs/light.postgres.log.bz2",
        ),
    ] {
        out.push(Input {
            name: format!("corpus {name}"),
            schema: corpora.join(schema),
            queries: corpora.join(queries),
            stats: None,
        });
    }
    let rideshare = root.join("examples/rideshare");
    out.push(Input {
        name: "example rideshare".into(),
        schema: rideshare.join("schema.sql"),
        queries: rideshare.join("queries.sql"),
        stats: None,
    });
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/plan"))
        .expect("fixtures/plan")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.join("schema.sql").is_file())
        .collect();
    fixtures.sort();
    for dir in fixtures {
        // A fixture's workload: its queries, or the session log its loops come from.
        let Some(queries) = ["queries.sql", "app.log"]
            .iter()
            .map(|f| dir.join(f))
            .find(|f| f.is_file())
        else {
            continue;
        };
        let stats = dir.join("stats.json");
        out.push(Input {
            name: format!(
                "fixture {}",
                dir.file_name().unwrap_or_default().to_string_lossy()
            ),
            schema: dir.join("schema.sql"),
            queries,
            stats: stats.is_file().then_some(stats),
        });
    }
    out
}

fn stats(path: &Path) -> Statistics {
    serde_json::from_str(&std::fs::read_to_string(path).expect("stats.json")).expect("stats")
}

/// `name: reads …, writes …` and one indented line per gap.
fn text(name: &str, c: &Coverage) -> String {
    let mut s = format!("{name}: {c}\n");
    for g in &c.gaps {
        s.push_str(&format!("  {g}\n"));
    }
    s
}

/// The gaps the committed file lists: input name → pattern → class.
fn committed(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(gap) = line.strip_prefix("  ") {
            // `q1 (read, no_table, 10 calls)`
            let (pattern, rest) = gap.split_once(' ').unwrap_or((gap, ""));
            let class = rest.split(", ").nth(1).unwrap_or_default().to_string();
            out.entry(current.clone())
                .or_default()
                .insert(pattern.to_string(), class);
        } else if let Some((name, _)) = line.split_once(": ") {
            current = name.to_string();
            out.entry(current.clone()).or_default();
        }
    }
    out
}

/// How bad a class is: a read may move from a gap to a scan to served, never back.
fn rank(class: &str) -> u8 {
    match class {
        "scan" => 1,
        "" => 0,
        _ => 2,
    }
}

#[test]
fn coverage_only_goes_up_and_every_plan_passes_its_checks() {
    let file = root().join("fixtures/coverage.txt");
    let before = committed(&std::fs::read_to_string(&file).unwrap_or_default());
    let mut all = String::new();
    let mut regressions = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    let mut unserved: Vec<String> = Vec::new();
    for input in inputs() {
        let st = input.stats.as_deref().map(stats);
        let (plan, _) = plan_files(&[input.schema], &[input.queries], st.as_ref(), "coverage");
        // The validator's verdict is the designer's own test: no input gets a plan it refuses.
        for v in &plan.design.violations {
            refused.push(format!(
                "{}: plan check ({}): {}",
                input.name, v.check, v.message
            ));
        }
        let c = plan
            .design
            .coverage
            .clone()
            .expect("the design states its coverage");
        let was = before.get(&input.name);
        for p in plan
            .design
            .queries
            .iter()
            .map(|q| &q.pattern)
            .chain(plan.design.writes.iter().map(|w| &w.pattern))
        {
            let now = c
                .gaps
                .iter()
                .find(|g| &g.pattern == p)
                .map(|g| g.class.name())
                .unwrap_or("");
            let then = was.and_then(|w| w.get(p)).map(String::as_str).unwrap_or("");
            if was.is_some() && rank(now) > rank(then) {
                regressions.push(format!(
                    "{} {p}: {} before, {now} now",
                    input.name,
                    if then.is_empty() { "served" } else { then }
                ));
            }
        }
        // A real application's workload (a corpus, the example): every read and write served
        // but what the analyzer does not model or the schema does not have.
        if !input.name.starts_with("fixture ") {
            for g in &c.gaps {
                if !matches!(g.class, GapClass::Unmodeled | GapClass::NotInSchema) {
                    unserved.push(format!("{} {g}", input.name));
                }
            }
        }
        all.push_str(&text(&input.name, &c));
    }
    assert!(
        regressions.is_empty(),
        "coverage went down (fixtures/coverage.txt):\n{}",
        regressions.join("\n")
    );
    assert!(
        unserved.is_empty(),
        "reads or writes of a real workload unserved outside the not-modelled classes:\n{}",
        unserved.join("\n")
    );
    expect_test::expect_file![file].assert_eq(&all);
    assert!(
        refused.is_empty(),
        "the designer made plans its own validator refuses:\n{}",
        refused.join("\n")
    );
}

#[test]
fn a_gap_is_classed_by_who_could_not_serve_it() {
    let dir = root().join("fixtures/coverage");
    let (plan, _) = plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        "coverage",
    );
    let c = plan.design.coverage.expect("coverage");
    let class = |sql: &str| {
        let id = &plan
            .workload
            .patterns
            .iter()
            .find(|p| p.sql.starts_with(sql))
            .expect(sql)
            .id;
        c.gaps.iter().find(|g| &g.pattern == id).map(|g| g.class)
    };
    assert_eq!(class("SELECT id, name FROM users WHERE id ="), None);
    assert_eq!(
        class("SELECT id, name FROM users WHERE name LIKE"),
        Some(GapClass::Scan)
    );
    assert_eq!(
        class("SELECT id, rank() OVER"),
        Some(GapClass::Unmodeled),
        "{c:#?}"
    );
    assert_eq!(c.reads.patterns, 3);
    assert_eq!(c.reads.served, 1);
    assert_eq!(c.reads.calls, 1000 + 10 + 5);
    assert_eq!(c.reads.served_calls, 1000);
}
