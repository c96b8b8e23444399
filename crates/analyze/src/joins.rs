//! Join edges → join steps, and the foreign key each step follows.

use remodel_model::{ColumnRef, ForeignKey, JoinStep, TableIndex};

/// One column equality between two relations of a statement (`a.x = b.y`, `USING (x)`,
/// a correlated `inner.x = outer.y`, a semi-join `x IN (SELECT y …)`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edge {
    /// Relation id of the left column (ids increase in FROM order).
    pub a_rel: usize,
    /// Left column.
    pub a: ColumnRef,
    /// Relation id of the right column.
    pub b_rel: usize,
    /// Right column.
    pub b: ColumnRef,
}

/// Groups edges by pair of relations into join steps, the earlier relation on the left.
pub(crate) fn steps(edges: &[Edge]) -> Vec<JoinStep> {
    let mut groups: Vec<((usize, usize), JoinStep)> = Vec::new();
    for e in edges {
        let (l_rel, l, r_rel, r) = if e.a_rel <= e.b_rel {
            (e.a_rel, &e.a, e.b_rel, &e.b)
        } else {
            (e.b_rel, &e.b, e.a_rel, &e.a)
        };
        match groups.iter_mut().find(|(k, _)| *k == (l_rel, r_rel)) {
            Some((_, step)) => {
                if !step.left_columns.contains(&l.column) || !step.right_columns.contains(&r.column)
                {
                    step.left_columns.push(l.column.clone());
                    step.right_columns.push(r.column.clone());
                }
            }
            None => groups.push((
                (l_rel, r_rel),
                JoinStep {
                    left_table: l.table.clone(),
                    left_columns: vec![l.column.clone()],
                    right_table: r.table.clone(),
                    right_columns: vec![r.column.clone()],
                    foreign_key: None,
                },
            )),
        }
    }
    // Two instances of the same tables joined the same way (e.g. again in a correlated
    // subquery) read as one step.
    let mut out: Vec<JoinStep> = Vec::new();
    for (_, s) in groups {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// `table(cols) -> ref(cols)`, the way a join step names its foreign key.
pub fn fk_label(table: &str, fk: &ForeignKey, tables: &TableIndex<'_>) -> String {
    let ref_name = tables
        .table(&fk.ref_table)
        .map(|t| t.key())
        .unwrap_or_else(|| fk.ref_table.clone());
    format!(
        "{table}({}) -> {ref_name}({})",
        fk.columns.join(", "),
        fk.ref_columns.join(", ")
    )
}

/// How well a foreign key matches a join step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FkMatch {
    /// Some of the FK's column pairs are joined (e.g. the other pair is bound to a parameter).
    Partial,
    /// Exactly the FK's column pairs are joined.
    Exact,
}

/// The foreign key a step follows (in either direction), best match first.
pub(crate) fn match_fk(tables: &TableIndex<'_>, step: &JoinStep) -> Option<(String, FkMatch)> {
    let pairs = |lt: &str, lc: &[String], rt: &str, rc: &[String]| -> Option<(String, FkMatch)> {
        let child = tables.table(lt)?;
        let mut best: Option<(String, FkMatch)> = None;
        for fk in &child.foreign_keys {
            let parent = tables
                .table(&fk.ref_table)
                .map(|t| t.key())
                .unwrap_or_else(|| fk.ref_table.clone());
            if parent != rt {
                continue;
            }
            let fk_pairs: Vec<(&String, &String)> =
                fk.columns.iter().zip(fk.ref_columns.iter()).collect();
            let joined: Vec<(&String, &String)> = lc.iter().zip(rc.iter()).collect();
            let all_in = joined
                .iter()
                .all(|(a, b)| fk_pairs.iter().any(|(x, y)| x == a && y == b));
            if !all_in {
                continue;
            }
            let m = if joined.len() == fk_pairs.len() {
                FkMatch::Exact
            } else {
                FkMatch::Partial
            };
            if best.as_ref().is_none_or(|(_, bm)| m > *bm) {
                best = Some((fk_label(&child.key(), fk, tables), m));
            }
        }
        best
    };
    let fwd = pairs(
        &step.left_table,
        &step.left_columns,
        &step.right_table,
        &step.right_columns,
    );
    let back = pairs(
        &step.right_table,
        &step.right_columns,
        &step.left_table,
        &step.left_columns,
    );
    match (fwd, back) {
        (Some(a), Some(b)) => Some(if b.1 > a.1 { b } else { a }),
        (a, b) => a.or(b),
    }
}
