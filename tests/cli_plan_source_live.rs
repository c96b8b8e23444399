//! End to end through the binary: `remodel plan --source URL` on a small rideshare loaded into
//! a schema of its own, with its statements in pg_stat_statements; the URL's password appears
//! in nothing the run prints or writes, and a wrong password fails in one line without it.

use std::path::Path;

mod support;

use remodel_testdb::PgSchema;
use support::{command, scratch, text};

/// A few drivers, cities and trips, analysed; trips get an `approver_id` (a driver who checked
/// the fare) without a foreign key, for the data probes to find.
const ROWS: &str = "
INSERT INTO cities VALUES ('nyc', 'US', 'America/New_York'), ('sf', 'US', 'America/Los_Angeles');
INSERT INTO drivers SELECT 'drv_' || i, 'Driver ' || i, 'nyc', 4.5, now() FROM generate_series(1, 50) i;
INSERT INTO trips SELECT md5('t' || i)::uuid, 'drv_' || (1 + i % 50), (ARRAY['nyc', 'sf'])[1 + i % 2],
    timestamptz '2024-01-01' + i * interval '1 minute', 5, 10, 'completed'
  FROM generate_series(1, 2000) i;
ALTER TABLE trips ADD COLUMN approver_id text;
UPDATE trips SET approver_id = 'drv_' || (1 + (hashtext(trip_id::text) & 1023) % 50);
ANALYZE cities; ANALYZE drivers; ANALYZE trips;
";

/// `url` with its password written as `%XX` escapes of every byte: a text that appears nowhere
/// else, whatever the password (the test server's is its user's name). Postgres clients decode
/// it, so the URL still connects; a leak of the URL as given shows it.
fn with_escaped_password(url: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let at = rest.rfind('@').expect("a URL with user and password");
    let (user, password) = rest[..at]
        .split_once(':')
        .expect("REMODEL_PG_URL holds a password");
    let escaped: String = password.bytes().map(|b| format!("%{b:02X}")).collect();
    (
        format!("{scheme}://{user}:{escaped}@{}", &rest[at + 1..]),
        escaped,
    )
}

/// Every file below `dir`, with its bytes.
fn files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).expect("read a folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            files(&path, out);
        } else {
            let bytes = std::fs::read(&path).expect("read a file");
            out.push((path.display().to_string(), bytes));
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn plan_from_source_never_shows_the_password() {
    remodel_testdb::live!(Postgres);
    let pg = PgSchema::create("cat_e2e").await.expect("schema");
    let c = pg.client();
    let ddl = std::fs::read_to_string(support::root().join("examples/rideshare/schema.sql"))
        .expect("schema.sql");
    c.batch_execute(&ddl).await.expect("ddl");
    c.batch_execute(ROWS).await.expect("rows");
    // Traffic for pg_stat_statements, naming the schema so these statements are this test's.
    let s = pg.name();
    let by_driver = c
        .prepare(&format!(
            "SELECT started_at, city FROM {s}.trips WHERE driver_id = $1 ORDER BY started_at DESC LIMIT 10"
        ))
        .await
        .expect("prepare");
    let driver = c
        .prepare(&format!(
            "SELECT full_name, rating FROM {s}.drivers WHERE driver_id = $1"
        ))
        .await
        .expect("prepare");
    for k in 0..40 {
        let id = format!("drv_{}", 1 + k % 50);
        c.execute(&by_driver, &[&id]).await.expect("by driver");
        if k % 4 == 0 {
            c.execute(&driver, &[&id]).await.expect("driver");
        }
    }

    let url = remodel_testdb::pg_url().expect("REMODEL_PG_URL");
    let (source, escaped) = with_escaped_password(&url);
    let dir = scratch("plan-source");
    let out = dir.join("out");
    // In a folder that does not exist yet, as `--out` may be.
    let stats = dir.join("stats/stats.json");
    let run = command()
        .args(["plan", "--source", &source, "--schemas", s])
        .args(["--keyspace", "e2e", "--out"])
        .arg(&out)
        .arg("--stats-out")
        .arg(&stats)
        .output()
        .expect("run remodel");
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("remodel plan: ") && stdout.contains("trips_by_driver"),
        "{stdout}"
    );
    for written in ["plan.json", "schema.cql", "report/src/SUMMARY.md"] {
        assert!(out.join(written).is_file(), "{written} not written");
    }
    assert!(stats.is_file(), "--stats-out not written");

    // The report says how the undeclared key was found.
    let relationships =
        std::fs::read_to_string(out.join("report/src/relationships.md")).expect("relationships.md");
    assert!(
        relationships.contains(
            "| foreign key | not declared; found by data: all "
        ) && relationships.contains(" sampled values (50 distinct) of trips.approver_id -&gt; drivers.driver_id are in drivers.driver_id (100% found; no name points to it) |"),
        "{relationships}"
    );

    // The source is named, without its password.
    let plan = std::fs::read_to_string(out.join("plan.json")).expect("plan.json");
    let user_at = url
        .split_once("://")
        .and_then(|(_, r)| r.split_once(':'))
        .map(|(user, _)| format!("://{user}@"))
        .expect("user");
    assert!(plan.contains(&user_at), "plan.json names no source");
    // The plan's time zone is the source's TimeZone setting, and the DEFAULTs the catalog read
    // as text are typed as a DDL file's are.
    let parsed: remodel_model::Plan = serde_json::from_str(&plan).expect("plan.json is a Plan");
    let zone: String = c
        .query_one("SELECT current_setting('TimeZone')", &[])
        .await
        .expect("TimeZone")
        .get(0);
    assert!(
        parsed.semantics.time_zone.eq_ignore_ascii_case(&zone),
        "{} for the source's {zone}",
        parsed.semantics.time_zone
    );
    let joined_at = parsed
        .schema
        .tables
        .iter()
        .filter(|t| t.name == "drivers")
        .flat_map(|t| &t.columns)
        .find(|col| col.name == "joined_at")
        .expect("drivers.joined_at");
    assert_eq!(
        joined_at.default_expr,
        Some(remodel_model::Expr::Now),
        "{joined_at:?}"
    );
    assert!(stdout.contains(&user_at), "{stdout}");

    let mut everything = vec![
        ("stdout".to_string(), run.stdout.clone()),
        ("stderr".to_string(), run.stderr.clone()),
    ];
    files(&dir, &mut everything);
    assert!(everything.len() > 5, "{} files", everything.len());
    for (name, bytes) in &everything {
        assert!(!contains(bytes, &escaped), "the password is in {name}");
        assert!(!contains(bytes, &source), "the source URL is in {name}");
    }

    // A wrong password: one line that says so, without it.
    let wrong = format!("wrong-pw-{}", std::process::id());
    let (scheme, rest) = url.split_once("://").expect("url");
    let at = rest.rfind('@').expect("@");
    let user = rest[..at].split(':').next().unwrap_or_default();
    let bad = format!("{scheme}://{user}:{wrong}@{}", &rest[at + 1..]);
    let run = command()
        .args(["plan", "--source", &bad, "--schemas", s, "--out"])
        .arg(dir.join("bad"))
        .output()
        .expect("run remodel");
    let stderr = text(&run.stderr);
    assert!(!run.status.success(), "a wrong password was taken");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains(&wrong), "{stderr}");
    assert!(run.stdout.is_empty(), "{}", text(&run.stdout));
    assert!(!dir.join("bad").exists());

    let _ = std::fs::remove_dir_all(&dir);
    pg.cleanup().await.expect("cleanup");
}
