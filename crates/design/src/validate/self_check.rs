//! The designer checks itself. A plan the validator refuses is never the answer: where a table
//! or a write path fails a check, the patterns behind it are designed again without it — a read
//! stated unserved, a write stated unsupported, each with the check it failed — until the plan
//! passes (or [`MAX_ROUNDS`] have not made it pass: the violations are then reported as before).
//!
//! Reads are refused before writes: a write path often fails only because of a table a refused
//! read needed. Which patterns a violation forbids:
//! - a table whose key does not identify its rows (check `a`): every pattern the table serves;
//! - a copy a write leaves stale (check `f`) in a table only writes use (a lookup a write path
//!   reads its rows from): those writes, so the table is not built; in a table reads use: the
//!   write that leaves it stale;
//! - any other violation about a pattern: that pattern.

use remodel_model::{Design, Diagnostic, Severity, Violation};
use std::collections::BTreeMap;

/// Patterns refused by the checks, each with why.
pub type Forbidden = BTreeMap<String, String>;

/// Rounds of design and check at most.
pub const MAX_ROUNDS: usize = 4;

/// Adds the patterns `design`'s violations forbid; false when none is new (nothing to retry).
pub fn forbid(design: &Design, forbidden: &mut Forbidden) -> bool {
    // Reads first: a write's failure may come from a table only a refused read needed (the
    // write's copy of it, a lookup joining what that table joined), which the next round drops.
    let is_read = |p: &String| design.queries.iter().any(|q| &q.pattern == p);
    let wanted: Vec<(&Violation, String)> = design
        .violations
        .iter()
        .flat_map(|v| patterns_of(design, v).into_iter().map(move |p| (v, p)))
        .filter(|(_, p)| !forbidden.contains_key(p))
        .collect();
    let reads_only = wanted.iter().any(|(_, p)| is_read(p));
    let mut added = false;
    for (v, p) in wanted {
        if reads_only && !is_read(&p) {
            continue;
        }
        {
            if forbidden.contains_key(&p) {
                continue;
            }
            let why = format!(
                "the design of it failed the plan's own check ({}): {}; the designer left it out rather than emit a plan that would lose or corrupt data",
                v.check, v.message
            );
            forbidden.insert(p, why);
            added = true;
        }
    }
    added
}

/// The patterns violation `v` forbids (see the module documentation).
fn patterns_of(design: &Design, v: &Violation) -> Vec<String> {
    let table = v
        .table
        .as_ref()
        .and_then(|name| design.tables.iter().find(|t| &t.name == name));
    let is_write = |p: &str| design.writes.iter().any(|w| w.pattern == p);
    match (v.check.as_str(), table) {
        ("a", Some(t)) => t.serves.clone(),
        ("f", Some(t)) if !t.serves.is_empty() && t.serves.iter().all(|p| is_write(p)) => {
            t.serves.clone()
        }
        _ => v.pattern.iter().cloned().collect(),
    }
}

/// One warning per pattern the checks left out.
pub fn diagnostics(forbidden: &Forbidden) -> Vec<Diagnostic> {
    forbidden
        .iter()
        .map(|(p, why)| Diagnostic {
            severity: Severity::Warning,
            location: None,
            message: format!("{p}: {why}"),
        })
        .collect()
}
