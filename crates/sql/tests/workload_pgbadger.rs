//! Every log of `fixtures/corpora/pgbadger-logs/` ingests to the statement templates and counts
//! that `log-templates.tsv` lists for it.
//!
//! The TSV was made by a cruder method than ours, so the comparison is "modulo placeholder
//! spelling", done on a loose key computed here with sqlparser's tokenizer (independently of the
//! crate's normalizer): every literal or placeholder is `?`, an `IN (?, …)` list is one `?`, a
//! typed literal (`date '…'`) is `?`, words are lower-cased, spacing is one space.
//!
//! Differences of method, and how they are handled:
//! - The TSV keeps only the first physical line of a statement and cuts at 300 characters: a TSV
//!   template matches our statements whose key it is the longest prefix of (on a token boundary,
//!   or anywhere for a template cut at 300 characters). Counts are summed per template.
//! - The TSV keeps JSON escapes (`\"`) of the CloudNativePG log: they are unescaped.
//! - Templates that differ only in case or literals (`SET LOCAL … TO LOCAL` / `TO local`) are
//!   one statement for us: their TSV counts are summed.
//! - Empty statements (`statement: ` and `statement: ;`) are templates in the TSV (`""`, `;`);
//!   we count them as skipped `empty statement`, and compare that count.
//! - Two TSV templates are not valid SQL for sqlparser and are counted by us as skipped
//!   `parse error: …` (the count is compared): stmt_type.log's `DECLARE CURSOR test_curs1 AS …`
//!   (not PostgreSQL syntax either: it is `DECLARE name CURSOR FOR …`), and cnpg.log.gz's
//!   `CREATE USER "streaming_replica" REPLICATION` (sqlparser does not know role options).

use remodel_sql::workload::{read_files, Format};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpora/pgbadger-logs")
}

/// Templates that sqlparser cannot parse (see the module comment), by file.
const PARSE_FAILURES: &[(&str, &str)] = &[
    ("stmt_type.log", "declare cursor test_curs1"),
    (
        "cnpg.log.gz",
        "create user \"streaming_replica\" replication",
    ),
];

/// Statements whose first physical line is empty, so the TSV lists them as the template `""`
/// (cnpg.log.gz: `statement: \n\t\t\tSELECT has_function_privilege(…)`): (file, our key prefix,
/// TSV key).
const REMAP: &[(&str, &str, &str)] = &[("cnpg.log.gz", "select has_function_privilege", "")];

const TYPED: &[&str] = &[
    "date",
    "interval",
    "time",
    "timestamp",
    "timestamptz",
    "uuid",
    "text",
];

fn is_lit(t: &Token) -> bool {
    matches!(
        t,
        Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::EscapedStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::DollarQuotedString(_)
            | Token::Placeholder(_)
            | Token::Question
    )
}

/// The loose key of a statement or TSV template (see the module comment).
fn loose(text: &str) -> String {
    // A template cut in the middle of a string does not tokenize: drop the cut token.
    let mut end = text.len();
    let toks = loop {
        let Some(src) = text.get(..end) else {
            end -= 1;
            continue;
        };
        match Tokenizer::new(&PostgreSqlDialect {}, src).tokenize() {
            Ok(t) => break t,
            Err(_) if end > 0 => end -= 1,
            Err(_) => break Vec::new(),
        }
    };
    let toks: Vec<Token> = toks
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let next = toks.get(i + 1);
        let prev_is_value = out.last().is_some_and(|p| {
            p == "?"
                || p == ")"
                || p == "]"
                || p.chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '"' || c == '_')
        });
        match t {
            Token::Minus
                if next.is_some_and(|n| matches!(n, Token::Number(..))) && !prev_is_value =>
            {
                out.push("?".into());
                i += 2;
                continue;
            }
            Token::Word(w)
                if w.quote_style.is_none()
                    && TYPED.contains(&w.value.to_lowercase().as_str())
                    && next.is_some_and(is_lit)
                    && out.last().is_none_or(|p| p != "::") =>
            {
                out.push("?".into());
                i += 2;
                continue;
            }
            Token::Word(w) if w.quote_style.is_none() => out.push(w.value.to_lowercase()),
            t if is_lit(t) => out.push("?".into()),
            t => out.push(t.to_string()),
        }
        i += 1;
    }
    while out.last().is_some_and(|t| t == ";") {
        out.pop();
    }
    // IN (?, ?, …) → IN (?
    let mut res: Vec<String> = Vec::new();
    let mut i = 0;
    while i < out.len() {
        if out[i] == "in"
            && out.get(i + 1).is_some_and(|t| t == "(")
            && out.get(i + 2).is_some_and(|t| t == "?")
        {
            res.extend(["in".to_string(), "(".to_string(), "?".to_string()]);
            let mut j = i + 3;
            while out.get(j).is_some_and(|t| t == ",") && out.get(j + 1).is_some_and(|t| t == "?") {
                j += 2;
            }
            i = j;
            continue;
        }
        res.push(out[i].clone());
        i += 1;
    }
    collapse_literal_rows(res).join(" ")
}

/// `values ( ? , ? ) , ( ? , ? ) , …` → `values ( ? , ? )`: remodel keeps one row of a multi-row
/// VALUES of literals only, all of one width (a bulk load is one statement shape whatever its
/// row count); pgbadger keeps them all.
fn collapse_literal_rows(toks: Vec<String>) -> Vec<String> {
    let row_len = |from: usize| -> Option<usize> {
        // `( ? , ? … )` of placeholders only: its token count.
        (toks.get(from)? == "(").then_some(())?;
        let mut j = from + 1;
        loop {
            (toks.get(j)? == "?").then_some(())?;
            match toks.get(j + 1)?.as_str() {
                "," => j += 2,
                ")" => return Some(j + 2 - from),
                _ => return None,
            }
        }
    };
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        out.push(toks[i].clone());
        if toks[i] == "values" {
            if let Some(n) = row_len(i + 1) {
                out.extend_from_slice(&toks[i + 1..i + 1 + n]);
                let mut j = i + 1 + n;
                while toks.get(j).is_some_and(|t| t == ",") && row_len(j + 1) == Some(n) {
                    j += 1 + n;
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

#[derive(Debug)]
struct Row {
    count: u64,
    template: String,
}

fn tsv() -> BTreeMap<String, Vec<Row>> {
    let text =
        std::fs::read_to_string(corpus().join("log-templates.tsv")).expect("log-templates.tsv");
    let mut by_file: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let mut cols = line.splitn(4, '\t');
        let (Some(file), Some(_lines), Some(count), template) = (
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next().unwrap_or(""),
        ) else {
            continue;
        };
        let template = if file.starts_with("cnpg") {
            template.replace("\\\"", "\"")
        } else {
            template.to_string()
        };
        by_file.entry(file.to_string()).or_default().push(Row {
            count: count.parse().expect("count"),
            template,
        });
    }
    by_file
}

fn check_log(file: &str, rows: &[Row]) -> Result<(), String> {
    let load = read_files(&[corpus().join(file)], Format::Auto).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for p in &load.workload.patterns {
        if let Err(e) = sqlparser::parser::Parser::parse_sql(&PostgreSqlDialect {}, &p.sql) {
            problems.push(format!(
                "{file}: normalized pattern does not parse: {}: {e}",
                p.sql
            ));
        }
    }
    // TSV key → (expected, ours, was cut at 300 chars)
    let mut expected: BTreeMap<String, (u64, u64, bool)> = BTreeMap::new();
    for r in rows {
        // The TSV's `?` next to an operator would tokenize as a jsonb operator (`||?|`): space it.
        let e = expected
            .entry(loose(&r.template.replace('?', " $0 ")))
            .or_default();
        e.0 += r.count;
        e.2 |= r.template.len() >= 290;
    }
    for st in &load.statements {
        let key = loose(&st.sql);
        if let Some((_, _, tsv_key)) = REMAP
            .iter()
            .find(|(f, p, _)| *f == file && key.starts_with(p))
        {
            if let Some(e) = expected.get_mut(*tsv_key) {
                e.1 += st.calls;
                continue;
            }
        }
        let best = expected
            .iter()
            .filter(|(k, (_, _, cut))| {
                key == **k
                    || key.starts_with(k.as_str())
                        && (*cut || key[k.len()..].starts_with([' ', ',', '(']))
            })
            .map(|(k, _)| k.clone())
            .max_by_key(String::len);
        match best {
            Some(k) => expected
                .get_mut(&k)
                .map(|e| e.1 += st.calls)
                .unwrap_or_default(),
            None => problems.push(format!(
                "{file}: statement not in the TSV: {} ({} calls)",
                st.sql, st.calls
            )),
        }
    }
    let skipped = |reason: &str| -> u64 {
        load.workload
            .skipped
            .iter()
            .filter(|s| s.kind.starts_with(reason))
            .map(|s| s.count)
            .sum()
    };
    if let Some(e) = expected.get_mut("") {
        e.1 += skipped("empty statement");
    }
    let mut parse_failed_expected = 0;
    for (key, (exp, ours, _)) in &expected {
        let known = PARSE_FAILURES
            .iter()
            .any(|(f, t)| *f == file && key.starts_with(t));
        if known && *ours == 0 {
            parse_failed_expected += exp;
        } else if exp != ours {
            problems.push(format!("{file}: `{key}`: TSV {exp}, ingested {ours}"));
        }
    }
    let parse_failed = skipped("parse error");
    if parse_failed != parse_failed_expected {
        problems.push(format!(
            "{file}: {parse_failed} parse errors, expected {parse_failed_expected}"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn every_log_matches_its_templates() {
    let by_file = tsv();
    assert_eq!(by_file.len(), 9, "logs listed in the TSV");
    let mut failures = Vec::new();
    for (file, rows) in &by_file {
        if let Err(e) = check_log(file, rows) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pgbench_logs_give_the_five_tpcb_patterns() {
    for file in ["light.postgres.log.bz2", "pg-syslog.1.bz2", "rds.log.bz2"] {
        let load = read_files(&[corpus().join(file)], Format::Auto).expect("readable");
        let pgbench: Vec<_> = load
            .workload
            .patterns
            .iter()
            .filter(|p| p.sql.contains("pgbench_") && !p.sql.contains("count("))
            .collect();
        assert_eq!(pgbench.len(), 5, "{file}");
        assert!(
            load.workload.utility.iter().any(|u| u.kind == "BEGIN"),
            "{file}"
        );
        // The analyzer re-parses every pattern's normalized SQL.
        for p in &load.workload.patterns {
            let parsed = sqlparser::parser::Parser::parse_sql(&PostgreSqlDialect {}, &p.sql);
            assert!(parsed.is_ok(), "{file}: {}: {parsed:?}", p.sql);
        }
        // Durations from `duration: … ms` are aggregated.
        assert!(
            pgbench
                .iter()
                .all(|p| p.mean_ms.is_some() && p.first_seen.is_some()),
            "{file}"
        );
    }
}
