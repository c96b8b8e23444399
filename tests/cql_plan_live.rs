//! `remodel plan`'s output against a real Cassandra 5.0: for rideshare and each BenchBase corpus,
//! `schema.cql` loads, and every mapped read and every write statement of `plan.json` prepares and
//! runs with sample values. Needs `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`).

use remodel_model::{DesignTable, Plan};
use remodel_testdb::CqlKeyspace;
use std::path::PathBuf;
use std::process::Command;

/// Runs `remodel plan` into a scratch folder with the test keyspace's name; returns the plan and CQL.
fn plan(args: &[&str], keyspace: &str, label: &str) -> (Plan, String) {
    let out = std::env::temp_dir().join(format!("remodel-live-{}-{label}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_remodel"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("plan")
        .args(args)
        .args(["--keyspace", keyspace, "--out"])
        .arg(&out)
        .output()
        .expect("run remodel plan");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json = std::fs::read_to_string(out.join("plan.json")).expect("plan.json");
    let cql = std::fs::read_to_string(out.join("schema.cql")).expect("schema.cql");
    let _ = std::fs::remove_dir_all(PathBuf::from(&out));
    (
        serde_json::from_str(&json).expect("plan.json is a Plan"),
        cql,
    )
}

/// A CQL literal of the given type (sample value for a bind marker).
fn sample(ty: &str) -> String {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix("frozen<").and_then(|t| t.strip_suffix('>')) {
        return sample(inner);
    }
    if let Some(inner) = ty.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
        return format!("[{}]", sample(inner));
    }
    if let Some(inner) = ty.strip_prefix("set<").and_then(|t| t.strip_suffix('>')) {
        return format!("{{{}}}", sample(inner));
    }
    match ty {
        "int" | "bigint" | "smallint" | "tinyint" | "varint" | "counter" => "1".into(),
        "decimal" | "double" | "float" => "1.5".into(),
        "boolean" => "true".into(),
        "uuid" | "timeuuid" => "1b4e28ba-2fa1-11d2-883f-0016d3cca427".into(),
        "timestamp" => "'2025-01-15 16:04:22+0000'".into(),
        "date" => "'2025-01-15'".into(),
        "time" => "'08:00:00'".into(),
        "duration" => "1h".into(),
        "blob" => "0x00".into(),
        "inet" => "'127.0.0.1'".into(),
        _ => "'x'".into(),
    }
}

/// Replaces each `?` of a generated statement with a sample literal of the bound column's type.
fn bind_samples(cql: &str, table: &DesignTable) -> String {
    let ty = |col: &str| {
        let col = col.trim_matches('"');
        table
            .columns
            .iter()
            .find(|c| c.name == col)
            .map(|c| c.cql_type.clone())
            .unwrap_or_else(|| "text".into())
    };
    // INSERT … (cols) VALUES (?, …): the markers follow the column list.
    if let (Some(open), Some(values)) = (cql.find('('), cql.find(" VALUES (")) {
        if cql.starts_with("INSERT") {
            let cols: Vec<&str> = cql[open + 1..values - 1].split(", ").collect();
            let lits: Vec<String> = cols.iter().map(|c| sample(&ty(c))).collect();
            return format!("{} VALUES ({})", &cql[..values], lits.join(", "));
        }
    }
    // Otherwise every marker follows `col op`: `col = ?`, `col IN ?`, `col >= ?`.
    let mut out = String::new();
    let tokens: Vec<&str> = cql.split(' ').collect();
    for (i, tok) in tokens.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if *tok == "?" || tok.starts_with('?') {
            let col = tokens.get(i.wrapping_sub(2)).copied().unwrap_or_default();
            let op = tokens.get(i.wrapping_sub(1)).copied().unwrap_or_default();
            let lit = sample(&ty(col));
            out.push_str(&if op == "IN" { format!("({lit})") } else { lit });
            out.push_str(&tok[1..]);
        } else {
            out.push_str(tok);
        }
    }
    out
}

async fn check(label: &str, args: &[&str]) {
    let ks = CqlKeyspace::create(label)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (plan, schema_cql) = plan(args, ks.name(), label);
    let session = ks.session();
    // schema.cql without its comment lines, one statement per `;` (no literal in it holds one).
    let code: String = schema_cql
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    for stmt in code.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        session
            .query_unpaged(stmt, &[])
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}\n{stmt}"));
    }
    let table = |name: &str| {
        plan.design
            .tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{label}: no table {name}"))
    };
    let mut statements: Vec<(String, &DesignTable)> = Vec::new();
    for q in &plan.design.queries {
        if let (Some(cql), Some(t)) = (&q.cql, &q.table) {
            statements.push((cql.clone(), table(t)));
        }
    }
    for w in &plan.design.writes {
        for t in &w.targets {
            statements.push((t.cql.clone(), table(&t.table)));
        }
    }
    assert!(!statements.is_empty());
    for (cql, t) in &statements {
        session
            .prepare(cql.as_str())
            .await
            .unwrap_or_else(|e| panic!("{label}: prepare: {e}\n{cql}"));
        let literal = bind_samples(cql, t);
        session
            .query_unpaged(literal.as_str(), &[])
            .await
            .unwrap_or_else(|e| panic!("{label}: run: {e}\n{literal}"));
    }
    ks.cleanup().await.unwrap_or_else(|e| panic!("{e}"));
}

fn corpus(name: &str) -> [String; 4] {
    [
        "--schema".into(),
        format!("fixtures/corpora/{name}/ddl-postgres.sql"),
        "--queries".into(),
        format!("fixtures/corpora/{name}/queries.sql"),
    ]
}

async fn check_corpus(name: &str) {
    let args = corpus(name);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    check(&format!("plan_{name}"), &refs).await;
}

#[tokio::test]
async fn rideshare_plan_runs_on_cassandra() {
    check("plan_rideshare", &["examples/rideshare"]).await;
}

#[tokio::test]
async fn tpcc_plan_runs_on_cassandra() {
    check_corpus("tpcc").await;
}

#[tokio::test]
async fn seats_plan_runs_on_cassandra() {
    check_corpus("seats").await;
}

#[tokio::test]
async fn twitter_plan_runs_on_cassandra() {
    check_corpus("twitter").await;
}

#[tokio::test]
async fn wikipedia_plan_runs_on_cassandra() {
    check_corpus("wikipedia").await;
}

#[tokio::test]
async fn smallbank_plan_runs_on_cassandra() {
    check_corpus("smallbank").await;
}

#[tokio::test]
async fn auctionmark_plan_runs_on_cassandra() {
    check_corpus("auctionmark").await;
}
