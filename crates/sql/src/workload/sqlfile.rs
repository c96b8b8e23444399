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
//! - sqlc's `-- name: TripsOfDriver :many` names the statement (`remodel codegen` names its
//!   function so).
//!
//! The label of a statement is its `-- statement: Name` annotation, or else the last comment line
//! above it that is not an annotation.

use super::aggregate::{Aggregator, Occurrence};
use crate::split::{split_reader, RawKind, RawStatement, StreamItem, MAX_STATEMENT_BYTES};
use std::io::{self, Read};

/// Why a `-- calls:` value is malformed, with its line and column.
type Malformed = (String, u32, u32);

/// Annotations read from the comments before one statement.
#[derive(Debug, Default, PartialEq)]
struct Annotations<'a> {
    /// `-- calls: N`: the count and, when the value is malformed, why (with its line and column).
    calls: Option<(u64, Option<Malformed>)>,
    weight: Option<Option<f64>>,
    per_txn: Option<f64>,
    label: Option<&'a str>,
    name: Option<&'a str>,
}

/// The comment lines among the trivia before a statement (`-- …`, or `/* … */` on one line), with
/// the line and column of each; `stmt_line` is the line the statement starts on.
fn comment_lines(leading: &str, stmt_line: u32) -> impl Iterator<Item = (u32, u32, &str)> {
    let newlines =
        u32::try_from(memchr::memchr_iter(b'\n', leading.as_bytes()).count()).unwrap_or(u32::MAX);
    leading.split('\n').enumerate().filter_map(move |(k, raw)| {
        // A byte-order mark is no text (some editors write one at the top of the file).
        let line = raw.trim_start_matches('\u{feff}');
        let l = line.trim();
        let body = l
            .strip_prefix("--")
            .or_else(|| l.strip_prefix("/*").and_then(|b| b.strip_suffix("*/")))?;
        let k = u32::try_from(k).unwrap_or(u32::MAX);
        let at = stmt_line.saturating_sub(newlines.saturating_sub(k));
        let column = line.chars().take_while(|c| c.is_whitespace()).count() + 1;
        Some((at, u32::try_from(column).unwrap_or(1), body.trim()))
    })
}

/// `s` without the prefix `p`, compared case-insensitively (`CALLS:` is `calls:`).
fn strip_prefix_ci<'a>(s: &'a str, p: &str) -> Option<&'a str> {
    s.get(..p.len())
        .filter(|head| head.eq_ignore_ascii_case(p))
        .map(|_| &s[p.len()..])
}

/// The count of a `-- calls: N` annotation (`1200000`, `1,200,000`, `1_200_000`) and, for a
/// malformed value, what is wrong with it and how it was counted.
fn parse_calls(value: &str) -> (u64, Option<String>) {
    let v = value.trim();
    let digits: String = v.chars().filter(|c| !matches!(c, ',' | '_')).collect();
    let grouped = !v.starts_with([',', '_']) && !v.ends_with([',', '_']);
    let once = "; the statement below is counted once";
    if digits.is_empty() {
        return (1, Some(format!("no number after `calls:`{once}")));
    }
    if grouped && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match digits.parse::<u64>() {
            Ok(n) => (n, None),
            Err(_) => (
                u64::MAX,
                Some(format!(
                    "`{v}` is larger than the largest count ({}); counted as that",
                    u64::MAX
                )),
            ),
        };
    }
    let why = if digits.starts_with('-') {
        format!("`{v}` is negative; expected a count of 0 or more")
    } else {
        format!("`{v}` is not a whole number; expected digits such as 1200000 or 1,200,000")
    };
    (1, Some(format!("{why}{once}")))
}

fn annotations(leading: &str, stmt_line: u32) -> Annotations<'_> {
    let mut a = Annotations::default();
    let mut statement_label = None;
    for (line, column, c) in comment_lines(leading, stmt_line) {
        if let Some(n) = strip_prefix_ci(c, "calls:") {
            let (n, why) = parse_calls(n);
            a.calls = Some((n, why.map(|w| (w, line, column))));
        } else if let Some(t) = c.strip_prefix("transaction:") {
            // `Name   weight: 45  (45.0% of txns)` or `weight: -`
            let w = t.split("weight:").nth(1).map(str::trim).unwrap_or("-");
            let first = w.split_whitespace().next().unwrap_or("-");
            a.weight = Some(first.parse::<f64>().ok());
            statement_label = None;
            a.label = None;
        } else if let Some(e) = c.strip_prefix("executions per txn:") {
            a.per_txn = Some(executions_per_txn(e));
        } else if let Some(n) = strip_prefix_ci(c, "name:") {
            // sqlc: `-- name: GetAuthor :one`; the kind after the name is sqlc's, not ours.
            a.name = n.split_whitespace().next();
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

/// Reads a SQL file as a stream (memory bounded by its longest statement), adding each
/// statement to `agg`.
pub(crate) fn read<R: Read>(r: R, agg: &mut Aggregator) -> io::Result<()> {
    let mut weight: Option<Option<f64>> = None;
    split_reader(r, MAX_STATEMENT_BYTES, |item| match item {
        StreamItem::Chunk(raw) => statement(&raw, &mut weight, agg),
        StreamItem::InvalidUtf8 { line, column } => agg.skip("invalid UTF-8", line, column),
        StreamItem::Oversized { line, column, .. } => agg.oversized(line, column),
    })
}

/// Adds one chunk of a SQL file with the annotations before it.
fn statement(raw: &RawStatement<'_>, weight: &mut Option<Option<f64>>, agg: &mut Aggregator) {
    let a = annotations(raw.leading, raw.line);
    if a.weight.is_some() {
        *weight = a.weight;
    }
    match raw.kind {
        RawKind::Sql => {}
        RawKind::MetaCommand => return agg.skip("psql meta-command", raw.line, raw.column),
        RawKind::CopyData => return agg.skip("COPY … FROM stdin data block", raw.line, raw.column),
    }
    let calls = match (a.calls, *weight) {
        (Some((n, why)), _) => {
            if let Some((why, line, column)) = why {
                agg.warn(
                    line,
                    column,
                    format!("malformed `-- calls:` annotation: {why}"),
                );
            }
            n
        }
        (None, Some(w)) => {
            let w = w.unwrap_or(0.0);
            (w * 100.0 * a.per_txn.unwrap_or(1.0)).round().max(0.0) as u64
        }
        (None, None) => 1,
    };
    if !raw.terminated && crate::normalize::shape(raw.text).is_err() {
        return agg.skip("truncated statement", raw.line, raw.column);
    }
    agg.add(&Occurrence {
        text: raw.text,
        line: raw.line,
        column: raw.column,
        calls,
        label: a.label,
        name: a.name,
        ..Default::default()
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_forms() {
        let a = annotations("-- (1) a driver's trip history\n-- calls: 1200000\n", 3);
        assert_eq!(a.calls, Some((1_200_000, None)));
        assert_eq!(a.label, Some("(1) a driver's trip history"));
        let named = annotations("-- trips of a driver\n-- name: TripsOfDriver :many\n", 3);
        assert_eq!(named.name, Some("TripsOfDriver"));
        assert_eq!(named.label, Some("trips of a driver"));
        let b = annotations("-- ===\n-- transaction: NewOrder   weight: 45  (45.0% of txns)\n-- ===\n-- statement: NewOrder.x   source: a.java:1\n-- executions per txn: o_ol_cnt times (uniform 5..15, mean 10)\n", 6);
        assert_eq!(b.weight, Some(Some(45.0)));
        assert_eq!(b.per_txn, Some(10.0));
        assert_eq!(b.label, Some("NewOrder.x"));
        assert_eq!(
            annotations("-- transaction: LoadConfig   weight: -\n", 2).weight,
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
