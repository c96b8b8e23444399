//! Reader for plain SQL files: statements separated by `;`, with frequency annotations in the
//! comments before a statement.
//!
//! Annotations understood:
//! - `-- calls: N`: the next statement runs N times (per day, per hour: any unit, used as weights).
//! - BenchBase exports: `-- transaction: Name   weight: W` sets the transaction weight (percent of
//!   transactions; `-` for helpers outside the mix, weight 0) for the statements after it, and
//!   `-- executions per txn: … mean 10 …`, `… 10 per txn …`, `… 60% of txns …` multiplies it.
//!   Such statements get `calls` = executions per 10,000 transactions.
//!
//! The label of a statement is its `-- statement: Name` annotation, or else the last comment line
//! above it that is not an annotation.

use super::aggregate::{Aggregator, Occurrence};
use crate::split::{split_statements, RawKind};

/// Annotations read from the comments before one statement.
#[derive(Debug, Default, PartialEq)]
struct Annotations<'a> {
    calls: Option<u64>,
    weight: Option<Option<f64>>,
    per_txn: Option<f64>,
    label: Option<&'a str>,
}

fn comment_lines(leading: &str) -> impl Iterator<Item = &str> {
    leading
        .lines()
        .filter_map(|l| l.trim().strip_prefix("--").map(str::trim))
}

fn annotations(leading: &str) -> Annotations<'_> {
    let mut a = Annotations::default();
    let mut statement_label = None;
    for c in comment_lines(leading) {
        if let Some(n) = c.strip_prefix("calls:") {
            a.calls = n.trim().replace(['_', ','], "").parse().ok();
        } else if let Some(t) = c.strip_prefix("transaction:") {
            // `Name   weight: 45  (45.0% of txns)` or `weight: -`
            let w = t.split("weight:").nth(1).map(str::trim).unwrap_or("-");
            let first = w.split_whitespace().next().unwrap_or("-");
            a.weight = Some(first.parse::<f64>().ok());
            statement_label = None;
            a.label = None;
        } else if let Some(e) = c.strip_prefix("executions per txn:") {
            a.per_txn = Some(executions_per_txn(e));
        } else if let Some(s) = c.strip_prefix("statement:") {
            statement_label = s.split_whitespace().next();
        } else if !c.is_empty() && !c.chars().all(|ch| ch == '=' || ch == '-') {
            a.label = Some(c);
        }
    }
    if statement_label.is_some() {
        a.label = statement_label;
    }
    a
}

/// How many times a statement runs per transaction, from BenchBase's note:
/// `mean N` → N, `N per txn` → N, `N% of` → N/100, otherwise once.
fn executions_per_txn(note: &str) -> f64 {
    let words: Vec<&str> = note
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        if *w == "mean" {
            if let Some(n) = words.get(i + 1).and_then(|n| n.parse::<f64>().ok()) {
                return n;
            }
        }
        let per_txn = words.get(i + 1) == Some(&"per")
            && words
                .get(i + 2)
                .is_some_and(|t| t.trim_end_matches(';') == "txn");
        if per_txn {
            if let Ok(n) = w.parse::<f64>() {
                return n;
            }
        }
        if let Some(p) = w.trim_start_matches('~').strip_suffix('%') {
            if let Ok(n) = p.parse::<f64>() {
                return n / 100.0;
            }
        }
    }
    1.0
}

/// Reads a SQL file's text, adding each statement to `agg`.
pub(crate) fn read(text: &str, agg: &mut Aggregator) {
    let mut weight: Option<Option<f64>> = None;
    for raw in split_statements(text) {
        let a = annotations(raw.leading);
        if a.weight.is_some() {
            weight = a.weight;
        }
        match raw.kind {
            RawKind::Sql => {}
            RawKind::MetaCommand => {
                agg.skip("psql meta-command", raw.line, raw.column);
                continue;
            }
            RawKind::CopyData => {
                agg.skip("COPY … FROM stdin data block", raw.line, raw.column);
                continue;
            }
        }
        let calls = match (a.calls, weight) {
            (Some(n), _) => n,
            (None, Some(w)) => {
                let w = w.unwrap_or(0.0);
                (w * 100.0 * a.per_txn.unwrap_or(1.0)).round().max(0.0) as u64
            }
            (None, None) => 1,
        };
        if !raw.terminated && crate::normalize::shape(raw.text).is_err() {
            agg.skip("truncated statement", raw.line, raw.column);
            continue;
        }
        agg.add(&Occurrence {
            text: raw.text,
            line: raw.line,
            column: raw.column,
            calls,
            label: a.label,
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_forms() {
        let a = annotations("-- (1) a driver's trip history\n-- calls: 1200000\n");
        assert_eq!(a.calls, Some(1_200_000));
        assert_eq!(a.label, Some("(1) a driver's trip history"));
        let b = annotations("-- ===\n-- transaction: NewOrder   weight: 45  (45.0% of txns)\n-- ===\n-- statement: NewOrder.x   source: a.java:1\n-- executions per txn: o_ol_cnt times (uniform 5..15, mean 10)\n");
        assert_eq!(b.weight, Some(Some(45.0)));
        assert_eq!(b.per_txn, Some(10.0));
        assert_eq!(b.label, Some("NewOrder.x"));
        assert_eq!(
            annotations("-- transaction: LoadConfig   weight: -\n").weight,
            Some(None)
        );
        assert_eq!(executions_per_txn("60% of txns (lookup by C_LAST)"), 0.6);
        assert_eq!(
            executions_per_txn("once per district (10 per txn; skipped …)"),
            10.0
        );
        assert_eq!(
            executions_per_txn("only when C_CREDIT = BC (~10% of customers)"),
            0.1
        );
    }
}
