//! The predicate rewrites proven against Postgres: for every case of
//! `fixtures/analyze/rewrites/cases.txt` that the analyzer solves, the predicate as written and
//! the rewritten one (built from the analysis: `col >= lower AND col < upper`, `col = value`, …)
//! select the same rows of a generated table, for each call's parameter values, with
//! `TimeZone = 'UTC'`. The rows sit on and around every bound (±1 µs, ±1 s, ±1 h, ±1 day; ±1,
//! ±0.5 for numbers), at fixed edges (1900, before and after 1970-01-01, leap days, month ends,
//! negative numbers, 20-digit fractions) and include a NULL. Needs `REMODEL_PG_URL`
//! (`eval "$(scripts/db env)"`).

mod common;

use common::rewrite_cases::*;
use remodel_model::{EqualityOp, PatternAnalysis};
use remodel_testdb::tokio_postgres::{Client, SimpleQueryMessage};
use remodel_testdb::PgSchema;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Edges for number columns.
const NUMBERS: &str =
    "-1000, -100, -10, -7.5, -7, -3.5, -3, -2, -1, -0.5, -0.00000000000000000001, \
    0, 0.00000000000000000001, 0.25, 0.5, 1, 2, 3, 3.4999999999, 3.5, 3.5000000001, 4, 7, 8, \
    10, 100, 1000, 12345678901234567890.12345678901234567891";

/// Edges for time columns (read as timestamps, UTC).
const TIMES: &str = "'1900-01-01', '1969-12-31 23:59:59.999999', '1970-01-01', \
    '1970-01-01 00:00:00.000001', '2000-02-29 12:00', '2024-02-28', '2024-02-29', \
    '2024-02-29 23:59:59.999999', '2024-03-01', '2024-12-31 23:00', '2025-01-01', '2025-01-13', \
    '2025-01-15 10:00', '2025-01-31 23:59:59.999999', '2025-02-28', '2025-03-01'";

/// How the rows of a column are generated: the type bases are read as, the offsets around
/// each base, and the expression of a row's value from `v` (base) and `o` (offset).
struct Gen {
    base: &'static str,
    offsets: &'static str,
    value: &'static str,
    edges: &'static str,
}

fn generator(column: &str) -> Option<Gen> {
    let int = |value| Gen {
        base: "numeric",
        offsets: "ARRAY[-2, -1, 0, 1, 2]::numeric[]",
        value,
        edges: NUMBERS,
    };
    let time = |base, value| Gen {
        base,
        offsets: "ARRAY[interval '0', interval '1 microsecond', interval '-1 microsecond', \
            interval '1 second', interval '-1 second', interval '1 hour', interval '-1 hour', \
            interval '1 day', interval '-1 day']",
        value,
        edges: TIMES,
    };
    Some(match column {
        "i" => int("floor(v) + o"),
        "b" => int("floor(v) + o"),
        "n" => Gen {
            base: "numeric",
            offsets: "ARRAY[-1, -0.5, -0.000001, 0, 0.000001, 0.5, 1]::numeric[]",
            value: "v + o",
            edges: NUMBERS,
        },
        "d" => Gen {
            base: "timestamp",
            offsets: "ARRAY[-1, 0, 1]",
            value: "(v + o * interval '1 day')::date",
            edges: TIMES,
        },
        "ts" => time("timestamp", "v + o"),
        "tz" => time("timestamptz", "v + o"),
        _ => return None,
    })
}

/// The column's values in range for its type (an int column cannot hold 3e9).
fn in_range(column: &str) -> &'static str {
    match column {
        "i" => "x BETWEEN -2147483648 AND 2147483647",
        "b" => "x BETWEEN -9223372036854775808 AND 9223372036854775807",
        _ => "TRUE",
    }
}

/// Every value a restriction of the analysis compares with, as SQL (`IN (a, b)` gives both).
fn bound_values(a: &PatternAnalysis) -> Vec<String> {
    let mut out = Vec::new();
    for e in &a.equality {
        match (e.op, e.value.as_deref()) {
            (EqualityOp::In, Some(v)) => {
                out.push(v.trim_start_matches('(').trim_end_matches(')').to_string())
            }
            (_, Some(v)) => out.push(v.to_string()),
            _ => {}
        }
    }
    for r in &a.ranges {
        for b in [&r.lower, &r.upper].into_iter().flatten() {
            out.push(b.example.clone().unwrap_or_else(|| b.value.clone()));
        }
    }
    out
}

async fn exec(client: &Client, sql: &str) -> Res<()> {
    client
        .batch_execute(sql)
        .await
        .map_err(|e| format!("{sql}: {e}").into())
}

/// Adds `ARRAY[values]` to the bases when they read as the base type (a value of another
/// type, e.g. the interval of a call, is skipped).
async fn add_bases(client: &Client, base: &str, values: &str) -> Res<()> {
    exec(client, "SAVEPOINT b").await?;
    let sql = format!("INSERT INTO base SELECT unnest(ARRAY[{values}])::{base}");
    match client.batch_execute(&sql).await {
        Ok(()) => exec(client, "RELEASE SAVEPOINT b").await,
        Err(_) => exec(client, "ROLLBACK TO SAVEPOINT b").await,
    }
}

/// Fills `r` (created by the caller) with the rows of one case; returns how many.
async fn fill(client: &Client, c: &Case, a: &PatternAnalysis, calls: &[Vec<String>]) -> Res<usize> {
    let g = generator(&c.column).ok_or("no row generator for the column")?;
    exec(
        client,
        &format!("CREATE TEMP TABLE base (v {}) ON COMMIT DROP", g.base),
    )
    .await?;
    add_bases(client, g.base, g.edges).await?;
    add_bases(client, g.base, "now()").await?;
    for call in calls {
        for v in call.iter().cloned().chain(bound_values(a)) {
            add_bases(client, g.base, &substitute(&v, call)).await?;
        }
    }
    let col = &c.column;
    exec(
        client,
        &format!(
            "INSERT INTO r (id, {col}) SELECT row_number() OVER (ORDER BY x), x FROM \
             (SELECT DISTINCT {value} AS x FROM base, unnest({offsets}) AS o) s WHERE {range}; \
             INSERT INTO r (id) VALUES (0)",
            value = g.value,
            offsets = g.offsets,
            range = in_range(col),
        ),
    )
    .await?;
    let n = client.simple_query("SELECT count(*) FROM r").await?;
    Ok(first_cell(&n).and_then(|s| s.parse().ok()).unwrap_or(0))
}

fn first_cell(msgs: &[SimpleQueryMessage]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
        _ => None,
    })
}

/// The ids of the rows `predicate` selects, in order.
async fn ids(client: &Client, predicate: &str) -> Res<Vec<String>> {
    let sql = format!("SELECT id FROM r WHERE {predicate} ORDER BY id");
    let msgs = client
        .simple_query(&sql)
        .await
        .map_err(|e| format!("{sql}: {e}"))?;
    Ok(msgs
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect())
}

/// What one case compared: calls, rows per call, rows selected over all calls.
#[derive(Debug, Default)]
struct Compared {
    calls: usize,
    rows: usize,
    selected: usize,
}

/// Runs one case in a transaction of its own (so `now()` is the same for the rows and both
/// predicates): same rows selected by the original and the rewrite, for every call.
async fn check(client: &Client, c: &Case, a: &PatternAnalysis) -> Res<Compared> {
    exec(client, "BEGIN; SET LOCAL TimeZone = 'UTC'").await?;
    exec(client, &schema_sql()).await?;
    let calls = if c.calls.is_empty() {
        vec![Vec::new()]
    } else {
        c.calls.clone()
    };
    let rows = fill(client, c, a, &calls).await?;
    let rewritten = restrictions_sql(a);
    let mut out = Compared {
        rows,
        ..Compared::default()
    };
    let mut never_selected = true;
    let mut always_all = true;
    for call in &calls {
        let original = ids(client, &substitute(&c.predicate, call)).await?;
        let new = ids(client, &substitute(&rewritten, call)).await?;
        if original != new {
            let only = |x: &[String], y: &[String]| {
                x.iter()
                    .filter(|i| !y.contains(i))
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            return Err(format!(
                "call {call:?}: the original selects {} rows, the rewrite {} (ids only in the original {:?}, only in the rewrite {:?}); rewrite: {}",
                original.len(),
                new.len(),
                only(&original, &new),
                only(&new, &original),
                substitute(&rewritten, call)
            )
            .into());
        }
        never_selected &= original.is_empty();
        always_all &= original.len() + 1 >= rows;
        out.calls += 1;
        out.selected += original.len();
    }
    if never_selected || always_all {
        return Err("degenerate: the rows never tell the predicate's true from false".into());
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrites_select_the_same_rows_as_the_original() {
    remodel_testdb::live!(Postgres);
    if let Err(e) = every_rewrite_selects_the_same_rows().await {
        panic!("{e}");
    }
}

/// Each case's rewritten predicate against its original on rows chosen to tell them apart.
async fn every_rewrite_selects_the_same_rows() -> Res<()> {
    let pg = PgSchema::create("rewrites").await?;
    let schema = schema();
    let (mut shapes, mut calls, mut rows, mut selected, mut residual) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for c in cases() {
        let a = analyze_instance(&schema, &c);
        if !a.residual.is_empty() {
            residual += 1;
            continue;
        }
        let outcome = check(pg.client(), &c, &a).await;
        exec(pg.client(), "ROLLBACK").await?;
        match outcome {
            Ok(n) => {
                shapes += 1;
                calls += n.calls;
                rows += n.rows * n.calls;
                selected += n.selected;
                println!(
                    "cases.txt:{} {}: {} calls x {} rows, {} selected: same rows",
                    c.line, c.predicate, n.calls, n.rows, n.selected
                );
            }
            Err(e) => failures.push(format!("cases.txt:{} {}: {e}", c.line, c.predicate)),
        }
    }
    println!(
        "{shapes} rewritten shapes, {calls} calls, {rows} rows compared ({selected} selected), \
         {residual} residual shapes not rewritten"
    );
    pg.cleanup().await?;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(shapes >= 20, "only {shapes} shapes compared");
    Ok(())
}
