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

/// A session log where each list of items is followed by five user lookups, one per item's
/// `user_id`, and a schema that declares no foreign key: `items.user_id -> users.id` is only
/// inferred from the name, and the log cannot show that the lookups take the items' values.
fn loop_log() -> String {
    let mut log = String::new();
    let line = |log: &mut String, pid: u32, sql: &str, param: &str| {
        let at = "2026-12-02 07:00:49.369 UTC";
        log.push_str(&format!(
            "{at} [{pid}] 6b0fc221.{pid:x} LOG:  duration: 0.100 ms  execute <unnamed>: {sql}\n"
        ));
        log.push_str(&format!(
            "{at} [{pid}] 6b0fc221.{pid:x} DETAIL:  parameters: $1 = '{param}'\n"
        ));
    };
    for call in 0..40u32 {
        let pid = 20_000 + call % 4;
        line(
            &mut log,
            pid,
            "SELECT id, user_id, title FROM items WHERE category = $1 LIMIT 5",
            &format!("c{}", call % 3),
        );
        for k in 0..5 {
            let user = 1 + (call * 5 + k) % 60;
            line(
                &mut log,
                pid,
                "SELECT id, nickname FROM users WHERE id = $1",
                &user.to_string(),
            );
        }
    }
    log
}

/// The loops `plan` folded, as `(parent, child)`.
fn folded_loops(out: &Path) -> Vec<(String, String)> {
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).expect("plan.json"))
            .expect("json");
    plan["design"]["loops"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["choice"] == "folded")
        .map(|l| {
            (
                l["parent"].as_str().unwrap_or_default().to_string(),
                l["child"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Loops without evidence are not folded: from files, the loop rests on a key inferred from a
/// name (`user_id`) and is folded, its evidence naming that key; with `--source`, the data
/// probes find that the items' `user_id`s are not users' ids (they name accounts of another
/// system), the key is rejected, and the lookups after the list are not folded into it.
#[tokio::test]
async fn a_loop_on_a_key_the_data_refutes_is_not_folded() {
    remodel_testdb::live!(Postgres);
    let pg = PgSchema::create("loop_probe").await.expect("schema");
    let s = pg.name();
    // The test's client works in the test's schema: the tables are named as the log names them.
    let ddl = "CREATE TABLE users (id bigint PRIMARY KEY, nickname text NOT NULL);
CREATE TABLE items (id bigint PRIMARY KEY, category text NOT NULL, user_id bigint NOT NULL, title text NOT NULL);";
    let c = pg.client();
    c.batch_execute(ddl).await.expect("ddl");
    c.batch_execute(
        "INSERT INTO users SELECT i, 'user ' || i FROM generate_series(1, 60) i;
INSERT INTO items SELECT i, 'c' || i % 3, 900000 + i % 500, 'item ' || i FROM generate_series(1, 3000) i;
ANALYZE users; ANALYZE items;",
    )
    .await
    .expect("rows");
    let dir = scratch("loop-probe");
    std::fs::write(dir.join("schema.sql"), ddl).expect("schema.sql");
    std::fs::write(dir.join("app.log"), loop_log()).expect("app.log");
    // From files the schema is `schema.sql`; from the source, its catalog (and the probes).
    let plan = |source: &[&str], out: &Path| {
        let mut cmd = command();
        cmd.arg("plan").arg("--queries").arg(dir.join("app.log"));
        if source.is_empty() {
            cmd.arg("--schema").arg(dir.join("schema.sql"));
        }
        let run = cmd
            .args(source)
            .arg("--out")
            .arg(out)
            .output()
            .expect("run remodel");
        let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
        assert!(run.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
        format!("{stdout}{stderr}")
    };
    let from_files = dir.join("files");
    plan(&[], &from_files);
    assert_eq!(
        folded_loops(&from_files),
        [("q1".to_string(), "q2".to_string())]
    );
    let planned: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(from_files.join("plan.json")).expect("plan.json"),
    )
    .expect("json");
    let evidence = planned["design"]["loops"][0]["evidence"]
        .as_str()
        .unwrap_or_default();
    assert!(
        evidence.contains("(items.user_id -> users.id, inferred: naming: "),
        "the loop's evidence names the key it rests on: {evidence}"
    );

    let url = remodel_testdb::pg_url().expect("REMODEL_PG_URL");
    let from_source = dir.join("source");
    let said = plan(&["--source", &url, "--schemas", s], &from_source);
    assert!(said.contains("1 naming guesses refuted"), "{said}");
    assert_eq!(folded_loops(&from_source), [], "{said}");
}
