//! The report's "Backfill and verification" chapter from a real run folder: `remodel example-data`
//! loads 2,000 rideshare trips (three of them without a city, so `trips_by_city_date` rejects
//! them), `remodel backfill` and `remodel verify --run-dir` fill the run folder, and
//! `remodel report --run … --html` shows per table the rows read, written and rejected, the time,
//! rows/s, the verification and where the rejects are. Needs `REMODEL_PG_URL` and
//! `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`).

mod support;

use remodel_model::{RunStatus, RunSummary, VerifyReport};
use std::path::Path;
use support::live::{refs, Case};
use support::{remodel_ok, text};

/// The trips generated, and those whose city is removed (a NULL partition key of
/// `trips_by_city_date`).
const TRIPS: u64 = 2_000;
const CITYLESS: u64 = 3;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The cells of the markdown table row that starts with `first`.
fn row<'a>(page: &'a str, first: &str) -> Vec<&'a str> {
    let line = page
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row for {first}:\n{page}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// `1997` → `1,997` (the counts here are under a million).
fn thousands(n: u64) -> String {
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

fn is_number(cell: &str) -> bool {
    !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit() || c == ',')
}

#[tokio::test(flavor = "multi_thread")]
async fn backfill_chapter_from_a_real_run_folder() {
    remodel_testdb::live!(Postgres, Cassandra, Mdbook);
    let case = Case::new("rep_run").await;
    let plan = case.rideshare(TRIPS);
    case.pg
        .client()
        .batch_execute(&format!(
            "ALTER TABLE trips ALTER COLUMN city DROP NOT NULL; \
             UPDATE trips SET city = NULL WHERE trip_id IN \
               (SELECT trip_id FROM trips ORDER BY trip_id LIMIT {CITYLESS})"
        ))
        .await
        .expect("remove three cities");
    let run = case.dir.join("run");
    let run_s = run.to_string_lossy().into_owned();
    remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema", "--write-timestamp", "snapshot"],
    )));
    let out = case.verify(&plan, &["--sample", "200", "--run-dir", &run_s]);
    assert!(out.contains("verify: all 4 tables match"), "{out}");
    assert!(out.contains("verify: verdict written to"), "{out}");

    // The run folder in the model's format, as the writers left it.
    let summary: RunSummary =
        serde_json::from_str(&read(&run.join(RunSummary::FILE))).expect("summary.json");
    assert_eq!(summary.status, RunStatus::Completed);
    assert!(summary.started_at.is_some() && summary.write_timestamp.is_some());
    let by_city = summary
        .tables
        .iter()
        .find(|t| t.name == "trips_by_city_date")
        .expect("trips_by_city_date in the summary");
    assert_eq!(
        (
            by_city.rows_read,
            by_city.rows_written,
            by_city.rows_rejected
        ),
        (TRIPS, TRIPS - CITYLESS, CITYLESS)
    );
    assert_eq!(
        by_city.rejects_file.as_deref(),
        Some("rejects/trips_by_city_date.jsonl")
    );
    let verdict: VerifyReport =
        serde_json::from_str(&read(&run.join(VerifyReport::FILE))).expect("verify.json");
    assert!(verdict.passed() && verdict.tables.len() == 4);

    let book = case.dir.join("report");
    let book_s = book.to_string_lossy().into_owned();
    let report = |out: &str| {
        support::command()
            .args([
                "report", "--plan", &plan, "--run", &run_s, "--out", out, "--html",
            ])
            .output()
            .expect("run remodel report")
    };
    let built = report(&book_s);
    assert!(built.status.success(), "{}", text(&built.stderr));
    assert!(
        !text(&built.stderr).contains("mdbook:"),
        "{}",
        text(&built.stderr)
    );
    let page = std::fs::read_to_string(book.join("src/backfill.md")).expect("the run chapter");

    // Per table: read, written, rejected, time, rows/s, ranges, rejects file.
    let rejects = format!("`{run_s}/rejects/trips_by_city_date.jsonl`");
    for (table, written, rejected, file) in [
        ("trips_by_driver", TRIPS, 0, "-"),
        ("trips_by_id", TRIPS, 0, "-"),
        ("trips_by_city_date", TRIPS - CITYLESS, CITYLESS, &*rejects),
    ] {
        let cells = row(&page, &format!("[{table}](tables/{table}.md)"));
        assert_eq!(cells[1], "2,000", "{table} read");
        assert_eq!(cells[2], thousands(written), "{table} written");
        assert_eq!(cells[3], rejected.to_string(), "{table} rejected");
        assert!(cells[4].ends_with(" s"), "{table} time: {}", cells[4]);
        assert!(is_number(cells[5]), "{table} rows/s: {}", cells[5]);
        assert!(cells[6].contains('/'), "{table} ranges: {}", cells[6]);
        assert_eq!(cells[7], file, "{table} rejects");
    }
    assert!(
        page.contains("every range of every table finished")
            && page.contains("For every table, rows read = rows written + rows rejected."),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "3 rows were rejected; they are in `{run_s}/rejects/`"
        )),
        "{page}"
    );
    // Verification: the rejected rows are not expected, and every table passed.
    assert!(page.contains("**Passed**"), "{page}");
    // (source rows, NULL key, rejected, expected, stored | sampled | missing, differing, result;
    // a sampled row without a city cannot be stored and is not looked up, so sampled ≤ 200.)
    let v = row(&page, "`trips_by_city_date`");
    assert_eq!(v[1..6], ["2,000", "3", "0", "1,997", "1,997"], "{page}");
    assert!(is_number(v[6]), "sampled: {}", v[6]);
    assert_eq!(v[7..], ["0", "0", "ok"], "{page}");

    // The overview asks a person to look at the rejected rows.
    let overview = read(&book.join("src/overview.md"));
    assert!(
        overview.contains(&format!(
            "The backfill rejected 3 rows (in `{run_s}/rejects/`): fix the source or the plan"
        )),
        "{overview}"
    );

    // The HTML page says the same, and the runbook links the chapter.
    let html = std::fs::read_to_string(book.join("book/backfill.html")).expect("built page");
    assert!(html.contains("Backfill and verification"), "{html}");
    assert!(html.contains(&format!("{run_s}/rejects/trips_by_city_date.jsonl")));
    let runbook = std::fs::read_to_string(book.join("src/runbook.md")).expect("runbook");
    assert!(runbook.contains("[Backfill and verification](backfill.md)"));

    // Same plan and run folder, same bytes.
    let again = case.dir.join("again");
    let run2 = report(&again.to_string_lossy());
    assert!(run2.status.success(), "{}", text(&run2.stderr));
    for f in ["src/backfill.md", "src/overview.md", "src/SUMMARY.md"] {
        assert_eq!(
            std::fs::read(book.join(f)).expect("first"),
            std::fs::read(again.join(f)).expect("second"),
            "{f} differs between two reports of the same run"
        );
    }
    case.cleanup().await;
}
