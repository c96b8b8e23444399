//! Hand-built analyses get the typed twins (format 2) the analyzer gives their SQL: a design
//! test states the analysis it means by hand, and every expression of it is typed the way
//! `remodel plan` types it, by running the analyzer on the pattern's SQL text.

#![allow(dead_code)]

use remodel_model::{PatternAnalysis, Schema, Workload};

/// `wl` with each pattern's missing typed twins filled from the analyzer's analysis of its SQL
/// (the hand-written predicates, bounds, limits and written values are kept as they are).
pub fn with_typed_twins(schema: &Schema, mut wl: Workload) -> Workload {
    for p in &mut wl.patterns {
        let (typed, _) = remodel_analyze::analyze_pattern(schema, p);
        fill(&mut p.analysis, &typed);
    }
    wl
}

/// Copies each typed twin of `typed` to the element of `hand` it belongs to (the same column
/// and operator, the same bound, the same SQL text), where `hand` has none.
fn fill(hand: &mut PatternAnalysis, typed: &PatternAnalysis) {
    for e in hand.equality.iter_mut().filter(|e| e.expr.is_none()) {
        e.expr = typed
            .equality
            .iter()
            .find(|x| x.column == e.column && x.op == e.op)
            .and_then(|x| x.expr.clone());
    }
    for r in &mut hand.ranges {
        let Some(t) = typed.ranges.iter().find(|x| x.column == r.column) else {
            continue;
        };
        for (b, tb) in [(&mut r.lower, &t.lower), (&mut r.upper, &t.upper)] {
            if let (Some(b), Some(tb)) = (b.as_mut(), tb) {
                if b.expr.is_none() {
                    b.expr = tb.expr.clone();
                }
            }
        }
    }
    for res in &mut hand.residual {
        if let Some(t) = typed.residual.iter().find(|x| x.sql == res.sql) {
            if res.expr.is_none() && res.reason_untyped.is_none() {
                res.expr = t.expr.clone();
                res.reason_untyped = t.reason_untyped.clone();
            }
        }
    }
    if hand.limit_expr.is_none() {
        hand.limit_expr = typed.limit_expr.clone();
    }
    if hand.offset_expr.is_none() {
        hand.offset_expr = typed.offset_expr.clone();
    }
    if hand.params.is_empty() {
        hand.params = typed.params.clone();
    }
    if hand.locking.is_none() {
        hand.locking = typed.locking.clone();
    }
    if let (Some(w), Some(t)) = (hand.write.as_mut(), typed.write.as_ref()) {
        if w.table == t.table {
            if w.values.is_empty() {
                w.values = t.values.clone();
            }
            if w.conflict.is_none() {
                w.conflict = t.conflict.clone();
            }
            if w.from_rows.is_empty() {
                w.from_rows = t.from_rows.clone();
            }
        }
    }
}
