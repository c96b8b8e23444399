//! (s) A copy of a parent's column is filled from the parent row the table's own source query
//! joins: a table may reach one parent table by several foreign keys (a comment's author and
//! its recipient are both users; an item's seller too), and a value read from another of those
//! rows is another user's value, stored without an error.

use super::{provides, same, v};
use remodel_model::source::SourceQuery;
use remodel_model::{
    BindValue, ColumnRef, Design, DesignTable, ReadBeforeWrite, Violation, WritePath,
};

/// One join of a chain: the joined table, its columns paired with the columns of the table
/// before it that they equal, and that table.
#[derive(Debug, PartialEq)]
struct Step {
    table: String,
    on: Vec<(String, String)>,
    from: String,
}

impl Step {
    fn words(&self) -> String {
        let pairs: Vec<String> = self
            .on
            .iter()
            .map(|(c, p)| format!("{}.{c} = {}.{p}", self.table, self.from))
            .collect();
        pairs.join(" AND ")
    }
}

/// The joins of `q` from its driving table to the table with alias `alias`, in order; `None`
/// when a join equals columns of two tables at once (not a chain).
fn chain(q: &SourceQuery, alias: &str) -> Option<Vec<Step>> {
    chain_depth(q, alias, 0)
}

fn chain_depth(q: &SourceQuery, alias: &str, depth: usize) -> Option<Vec<Step>> {
    if alias == q.alias {
        return Some(Vec::new());
    }
    let j = q.joins.iter().find(|j| j.alias == alias)?;
    let before = &j.on.first()?.equals.alias;
    if depth > 16 || j.on.iter().any(|k| &k.equals.alias != before) {
        return None;
    }
    let from = table_of(q, before)?;
    let mut out = chain_depth(q, before, depth + 1)?;
    out.push(Step {
        table: j.table.clone(),
        on: j
            .on
            .iter()
            .map(|k| (k.column.clone(), k.equals.column.clone()))
            .collect(),
        from,
    });
    Some(out)
}

fn table_of(q: &SourceQuery, alias: &str) -> Option<String> {
    if alias == q.alias {
        return Some(q.table.clone());
    }
    q.joins
        .iter()
        .find(|j| j.alias == alias)
        .map(|j| j.table.clone())
}

/// The chain of `q` to its one join of `table`; `None` when it joins it never or twice.
fn chain_to(q: &SourceQuery, table: &str) -> Option<Vec<Step>> {
    let mut joins = q.joins.iter().filter(|j| same(&j.table, table));
    let j = joins.next()?;
    if joins.next().is_some() {
        return None;
    }
    chain(q, &j.alias)
}

/// (s) for one write path.
pub(super) fn check(design: &Design, written: &str, w: &WritePath, out: &mut Vec<Violation>) {
    let table = |name: &str| design.tables.iter().find(|t| t.name == name);
    for target in &w.targets {
        let Some(t) = table(&target.table) else {
            continue;
        };
        for b in &target.binds {
            let (BindValue::New { column } | BindValue::Current { column }) = &b.value else {
                continue;
            };
            if same(&column.table, written) || same(&column.table, &t.entity) {
                continue;
            }
            let Some(ours) = chain_to(&t.source, &column.table) else {
                continue;
            };
            let reads_new = matches!(b.value, BindValue::New { .. });
            for r in w
                .read_before_write
                .iter()
                .filter(|r| r.reads_new == reads_new && !r.many && provides(design, r, column))
            {
                let Some(u) = table(&r.table) else { continue };
                if let Some(why) = other_row(u, r, column, &ours) {
                    v(out, "s", format!(
                        "write {}: {} of table {} copies {} of the row joined by {}, but the read of {} {why}",
                        w.pattern,
                        b.column,
                        t.name,
                        column,
                        ours.last().map(Step::words).unwrap_or_default(),
                        u.name
                    ));
                }
            }
        }
    }
}

/// Why the read `r` of `u` gives `column` of another row than the one `ours` joins; `None`
/// when it gives that row (or the plan does not say enough to tell).
fn other_row(
    u: &DesignTable,
    r: &ReadBeforeWrite,
    column: &ColumnRef,
    ours: &[Step],
) -> Option<String> {
    let root = &u.source.table;
    if same(root, &column.table) {
        return keyed_otherwise(u, r, ours.last()?);
    }
    let theirs = chain_to(&u.source, &column.table)?;
    let from_root = match ours.iter().position(|s| same(&s.from, root)) {
        Some(i) => &ours[i..],
        None => {
            return Some(format!(
                "reaches {} from {root}, which that row does not",
                column.table
            ))
        }
    };
    (from_root != theirs.as_slice()).then(|| {
        format!(
            "gives the row joined by {}",
            theirs.last().map(Step::words).unwrap_or_default()
        )
    })
}

/// Why the read of the parent's own table `u` is keyed by another column than the join `last`
/// names (`users.id = comments.to_user_id` where the copy joins on `comments.from_user_id`).
fn keyed_otherwise(u: &DesignTable, r: &ReadBeforeWrite, last: &Step) -> Option<String> {
    for (col, equals) in &last.on {
        let Some(bind) = r.binds.iter().find(|b| {
            u.columns.iter().any(|c| {
                c.name == b.column
                    && c.source
                        .as_ref()
                        .is_some_and(|s| same(&s.table, &last.table) && same(&s.column, col))
            })
        }) else {
            continue;
        };
        let (BindValue::New { column: by } | BindValue::Current { column: by }) = &bind.value
        else {
            continue;
        };
        if same(&by.table, &last.from) && !same(&by.column, equals) {
            return Some(format!("is keyed by {by}"));
        }
    }
    None
}
