//! No panic on any input: real logs full of statements the schema does not know, PG 19 syntax,
//! and hand-made oddities. Each pattern ends analyzed or marked unmodelled with a reason.

mod common;

use common::*;
use expect_test::expect;
use remodel_analyze::{analyze, analyze_pattern, AnalyzeConfig};
use remodel_sql::workload::Format;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Checks what every analysed workload must satisfy — each pattern is analysed (it reads or
/// writes a table) or marked unmodelled with a reason — and returns one line for the expected
/// summary: the patterns, how many are unmodelled, and why (each reason with its count).
fn check(name: &str, a: &remodel_model::Analysis) -> String {
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &a.workload.patterns {
        match p.analysis.unmodeled.as_deref() {
            Some(why) => {
                assert!(!why.trim().is_empty(), "{name} {}: no reason", p.id);
                *reasons.entry(why).or_default() += 1;
            }
            None => assert!(
                !p.analysis.tables.is_empty() || p.analysis.write.is_some(),
                "{name} {}: neither analysed nor unmodelled: {}",
                p.id,
                p.sql
            ),
        }
    }
    let unmodelled: usize = reasons.values().sum();
    let mut line = format!(
        "{name}: {} patterns, {unmodelled} unmodelled",
        a.workload.patterns.len()
    );
    for (why, n) in reasons {
        let _ = write!(line, "\n  {n} × {why}");
    }
    line + "\n"
}

/// The patterns naming a pgbench table: each is analysed, on the tables it names.
fn check_pgbench(log: &str, a: &remodel_model::Analysis) -> usize {
    let mut seen = 0;
    for p in &a.workload.patterns {
        let named: Vec<&str> = [
            "pgbench_accounts",
            "pgbench_branches",
            "pgbench_tellers",
            "pgbench_history",
        ]
        .into_iter()
        .filter(|t| p.sql.contains(t))
        .collect();
        if named.is_empty() {
            continue;
        }
        seen += 1;
        assert!(
            p.analysis.unmodeled.is_none(),
            "{log} {}: {:?}\n{}",
            p.id,
            p.analysis.unmodeled,
            p.sql
        );
        for t in named {
            assert!(
                p.analysis.tables.iter().any(|x| x == t)
                    || p.analysis.write.as_ref().is_some_and(|w| w.table == t),
                "{log} {}: {t} not among {:?}\n{}",
                p.id,
                p.analysis.tables,
                p.sql
            );
        }
    }
    seen
}

#[test]
fn pgbadger_logs_against_the_pgbench_schema() {
    let dir = "fixtures/corpora/pgbadger-logs";
    let mut summary = String::new();
    let mut pgbench = 0;
    for log in [
        "light.postgres.log.bz2",
        "rds.log.bz2",
        "pg-syslog.1.bz2",
        "cnpg.log.gz",
        "multiline_param.log",
        "stmt_type.log",
        "queryid.log.gz",
    ] {
        let a = load_and_analyze(
            &[&format!("{dir}/pgbench-schema.sql")],
            &[&format!("{dir}/{log}")],
            Format::Auto,
        );
        summary.push_str(&check(log, &a));
        pgbench += check_pgbench(log, &a);
    }
    assert!(pgbench > 0, "no pgbench statement found in the logs");
    expect![[r#"
        light.postgres.log.bz2: 5 patterns, 0 unmodelled
        rds.log.bz2: 6 patterns, 0 unmodelled
        pg-syslog.1.bz2: 6 patterns, 0 unmodelled
        cnpg.log.gz: 5 patterns, 0 unmodelled
        multiline_param.log: 0 patterns, 0 unmodelled
        stmt_type.log: 5 patterns, 1 unmodelled
          1 × query body not modelled (DELETE FROM)
        queryid.log.gz: 1 patterns, 0 unmodelled
    "#]]
    .assert_eq(&summary);
}

#[test]
fn pagila_readme_examples_some_of_which_need_pg19() {
    let a = load_and_analyze(
        &["fixtures/corpora/pagila/pagila-schema.sql"],
        &["fixtures/corpora/pagila/readme-examples.sql"],
        Format::Sql,
    );
    assert!(!a.workload.patterns.is_empty());
    expect![[r#"
        readme-examples: 19 patterns, 4 unmodelled
          1 × FROM item not modelled (JSON_TABLE(film_info, $1 COLUMNS(ord FOR)
          1 × does not parse: sql parser error: Expected: end of statement, found: $3 at Line: 1, Column: 104
          1 × table function in FROM (jsonb_each); FROM item not modelled (JSON_TABLE(payload, $7 COLUMNS(actor TEX)
          1 × table function in FROM (partman.show_partitions); reads no table
    "#]]
    .assert_eq(&check("readme-examples", &a));
}

#[test]
fn odd_statements_are_explained_not_fatal() {
    let schema = rideshare_schema(true);
    let odd = [
        "SELECT * FROM trips t, LATERAL (SELECT count(*) FROM trips u WHERE u.driver_id = t.driver_id) c",
        "SELECT * FROM (VALUES (1), (2)) AS v(x)",
        "SELECT x FROM unnest($1::int[]) AS x",
        "SELECT t.* FROM trips t WHERE t.trip_id = ANY($1)",
        "SELECT count(*) FILTER (WHERE status = $1) FROM trips",
        "SELECT a.b.c.d FROM trips",
        "SELECT * FROM nosuchtable WHERE x = $1",
        "SELECT 1 FROM trips WHERE (((((((((((driver_id = $1)))))))))))",
        "SELECT * FROM trips WHERE started_at >= $1 AND started_at >= $2 AND started_at < $3",
        "SELECT * FROM trips WHERE $1 = driver_id AND $2 < started_at",
        "SELECT * FROM trips ORDER BY 9 LIMIT ALL OFFSET $1",
        "SELECT * FROM trips ORDER BY 0",
        "SELECT city, count(*) FROM trips GROUP BY 0",
        "SELECT * FROM trips FETCH FIRST 5 ROWS ONLY",
        "SELECT * FROM trips NATURAL JOIN drivers",
        "SELECT * FROM trips JOIN drivers USING (nosuchcolumn)",
        "UPDATE nosuch SET a = 1 WHERE b = 2",
        "DELETE FROM trips USING drivers WHERE drivers.driver_id = trips.driver_id AND drivers.rating < $1",
        "INSERT INTO trips SELECT * FROM trips WHERE city = $1",
        "INSERT INTO trips DEFAULT VALUES",
        "WITH d AS (DELETE FROM trips WHERE status = $1 RETURNING *) SELECT count(*) FROM d",
        "MERGE INTO trips t USING drivers d ON t.driver_id = d.driver_id WHEN MATCHED THEN DELETE",
        "VALUES (1, 2)",
        "SELECT (SELECT max(started_at) FROM trips t2 WHERE t2.driver_id = d.driver_id) FROM drivers d",
        "SELECT * FROM trips WHERE driver_id IN (SELECT driver_id FROM drivers WHERE home_city IN (SELECT city FROM cities WHERE country = $1))",
        "SELECT * FROM trips WHERE NOT (status = $1) OR city IS NOT NULL",
        "TABLE trips",
        "",
        ";;;",
        "SELECT * FROM trips WHERE started_at BETWEEN SYMMETRIC $1 AND $2",
        "SELECT * FROM trips WHERE started_at >= interval",
    ];
    for sql in odd {
        let (a, _d) = analyze_pattern(&schema, &pattern("q1", sql, Some(sql), 1));
        assert!(
            a.unmodeled.is_some() || !a.tables.is_empty() || a.write.is_some(),
            "{sql}: {a:?}"
        );
    }
    // The same statements as one workload: relationships and inference still run.
    let wl = workload(
        odd.iter()
            .enumerate()
            .map(|(i, s)| pattern(&format!("q{i}"), s, None, 1))
            .collect(),
    );
    let an = analyze(&schema, &wl, &AnalyzeConfig::default());
    assert_eq!(an.workload.patterns.len(), odd.len());
    assert_eq!(an.relationships.len(), 3);
}

#[test]
fn deep_nesting_does_not_overflow() {
    let schema = rideshare_schema(true);
    let cond = (0..200)
        .map(|i| format!("fare_usd <> ${i}"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let (a, _) = analyze_pattern(
        &schema,
        &pattern("q1", &format!("SELECT * FROM trips WHERE {cond}"), None, 1),
    );
    assert_eq!(a.residual.len(), 200);
    let nested = format!(
        "SELECT * FROM trips WHERE driver_id = {}$1{}",
        "(".repeat(40),
        ")".repeat(40)
    );
    let (a, _) = analyze_pattern(&schema, &pattern("q1", &nested, None, 1));
    assert!(a.unmodeled.is_some() || a.equality.len() == 1);
}

/// 80,000 `AND` terms (a tree as deep as it is long, straight from the parser) are analyzed on
/// a test thread's small stack; an 80,000-operator `+` chain is refused as too deep, not
/// overflowed. (Time is measured by `bench/and_terms.rs`, not here.)
#[test]
fn huge_where_clauses_do_not_overflow_the_stack() {
    let schema = rideshare_schema(true);
    let n = 80_000;
    let cond = (0..n)
        .map(|i| format!("fare_usd <> {i}"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let sql = format!("SELECT * FROM trips WHERE driver_id = $1 AND {cond}");
    let (a, _) = analyze_pattern(&schema, &pattern("q1", &sql, None, 1));
    assert_eq!(a.residual.len(), n);
    assert_eq!(a.equality.len(), 1);
    let sum = (0..n)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let sql = format!("SELECT * FROM trips WHERE fare_usd = {sum}");
    let (a, d) = analyze_pattern(&schema, &pattern("q1", &sql, None, 1));
    let why = a.unmodeled.unwrap_or_default();
    assert!(why.contains("too deep"), "{why}");
    assert!(d.iter().any(|d| d.message.contains("too deep")));
}

/// Every corpus statement, mutated (words dropped, duplicated, swapped) with a fixed seed: what
/// still parses is analyzed without a panic; what does not is marked unmodelled.
#[test]
fn mutated_corpus_statements_never_panic() {
    let a = load_and_analyze(
        &["fixtures/corpora/auctionmark/ddl-postgres.sql"],
        &[
            "fixtures/corpora/auctionmark/queries.sql",
            "fixtures/corpora/tpcc/queries.sql",
            "fixtures/corpora/pagila/queries.sql",
            "fixtures/corpora/seats/queries.sql",
        ],
        Format::Sql,
    );
    let schema = a.schema.clone();
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let (mut parsed, mut total) = (0, 0);
    for p in &a.workload.patterns {
        let words: Vec<&str> = p.sql.split_whitespace().collect();
        for _ in 0..20 {
            let mut w = words.clone();
            match next(3) {
                0 if w.len() > 1 => {
                    let i = next(w.len());
                    w.remove(i);
                }
                1 => {
                    let i = next(w.len());
                    let x = w[i];
                    w.insert(i, x);
                }
                _ if w.len() > 1 => {
                    let (i, j) = (next(w.len()), next(w.len()));
                    w.swap(i, j);
                }
                _ => {}
            }
            let sql = w.join(" ");
            let (an, _) = analyze_pattern(&schema, &pattern("m", &sql, Some(&sql), 1));
            total += 1;
            if an
                .unmodeled
                .as_deref()
                .is_none_or(|r| !r.starts_with("does not parse"))
            {
                parsed += 1;
            }
        }
    }
    // The mutations keep many statements parseable (a swapped or repeated word often still
    // parses: 791 of 2,780 with this seed): the analyzer really ran on them, not only on parse
    // errors.
    assert!(total > 1000, "{total} mutated statements");
    assert!(
        parsed * 5 > total,
        "only {parsed} of {total} mutated statements parsed and were analyzed"
    );
}
