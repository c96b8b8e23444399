//! The predicate rewrite table: every shape of `fixtures/analyze/rewrites/cases.txt` with what
//! the analyzer makes of it — the bounds on the bare column (as the normalized pattern carries
//! them, and for the statement as written), why they are exact and what they assume, or the
//! reason it stays a residual filter — compared with `expected.txt` (`UPDATE_EXPECT=1`
//! rewrites it; review the diff). `rewrites_pg_live.rs` proves the rewrites against Postgres.

mod common;

use common::rewrite_cases::*;
use common::root;
use remodel_model::PatternAnalysis;
use std::fmt::Write;

/// The rewritten restrictions of an analysis, or its residual reasons.
fn outcome(a: &PatternAnalysis) -> String {
    if !a.residual.is_empty() {
        let why: Vec<&str> = a.residual.iter().map(|r| r.reason.as_str()).collect();
        return format!("residual: {}", why.join("; "));
    }
    let mut parts = Vec::new();
    for e in &a.equality {
        let v = e.value.as_deref().unwrap_or("");
        parts.push(format!("{} {:?} {v}", e.column.column, e.op));
    }
    for r in &a.ranges {
        let mut b = Vec::new();
        if let Some(l) = &r.lower {
            b.push(format!(
                "{} {}",
                if l.inclusive { ">=" } else { ">" },
                l.value
            ));
        }
        if let Some(u) = &r.upper {
            b.push(format!(
                "{} {}",
                if u.inclusive { "<=" } else { "<" },
                u.value
            ));
        }
        let w = r
            .window
            .map(|w| format!(" (window {w:?})"))
            .unwrap_or_default();
        parts.push(format!("{} {}{w}", r.column.column, b.join(" AND ")));
    }
    parts.join("; ")
}

/// Why and what it assumes, from the first rewrite of the analysis.
fn rewrite_notes(a: &PatternAnalysis, out: &mut String) {
    let rw = a
        .equality
        .iter()
        .filter_map(|e| e.rewritten_from.as_ref())
        .chain(a.ranges.iter().flat_map(|r| &r.rewritten_from))
        .next();
    if let Some(rw) = rw {
        let _ = writeln!(out, "    why:      {}", rw.reason);
        for a in &rw.assumes {
            let _ = writeln!(out, "    assumes:  {a}");
        }
    }
}

#[test]
fn predicate_rewrite_table() {
    let schema = schema();
    let mut out = String::new();
    let (mut solved, mut residual) = (0, 0);
    let (mut disagree, mut not_one) = (Vec::new(), Vec::new());
    for c in cases() {
        let w = analyze_workload(&schema, &c);
        let inst = analyze_instance(&schema, &c);
        // The normalized pattern and the statement as written are solved the same way, into
        // one restriction of the bare column or one residual filter.
        if w.residual.is_empty() != inst.residual.is_empty() {
            disagree.push(c.line);
        }
        if w.equality.len() + w.ranges.len() + w.residual.len() != 1 {
            not_one.push(c.line);
        }
        if w.residual.is_empty() {
            solved += 1;
        } else {
            residual += 1;
        }
        let sql = workload_pattern(&c).sql;
        let where_ = sql.split_once(" WHERE ").map_or(sql.as_str(), |(_, w)| w);
        let _ = writeln!(out, "{} | {}", c.column, c.predicate);
        let _ = writeln!(out, "    pattern:  {where_}");
        let _ = writeln!(out, "    becomes:  {}", outcome(&w));
        if w.residual.is_empty() {
            let _ = writeln!(out, "    as run:   {}", outcome(&inst));
        }
        rewrite_notes(&w, &mut out);
    }
    let _ = writeln!(out, "\n{solved} solved, {residual} residual");
    expect_test::expect_file![root().join(DIR).join("expected.txt")].assert_eq(&out);
    assert!(
        disagree.is_empty(),
        "pattern and statement differ: cases.txt lines {disagree:?}"
    );
    assert!(
        not_one.is_empty(),
        "not one restriction: cases.txt lines {not_one:?}"
    );
    assert!(
        solved >= 20 && residual >= 10,
        "{solved} solved, {residual} residual"
    );
}
