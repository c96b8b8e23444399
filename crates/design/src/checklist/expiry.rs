//! Rows that expire (seed 003's TTL): a table whose reads keep only rows whose timestamp column
//! is later than now (`expires_at > now()`, `>=`, `now() < expires_at`) and whose purge deletes
//! exactly the rows it has passed (`DELETE … WHERE expires_at < now()`) has its rows written
//! `USING TTL ?`, the TTL being the seconds until that column's value. Cassandra then drops them
//! itself; the purge sends nothing. Judged by what the SQL means (a bound of `now()` on a bare
//! timestamp column, typed by the analyzer), never by a column's name.

use crate::assemble::Build;
use crate::candidates::tables::TableBuild;
use remodel_model::{
    AccessPattern, ColumnRef, Design, Expr, RangePredicate, RowTtl, Schema, ServedByTtl,
    StatementKind, Workload, WritePath,
};

/// A source column whose passing ends its rows' life, with the patterns that say so.
#[derive(Debug, Clone, PartialEq)]
pub struct Expiry {
    /// The timestamp column (`password_resets.expires_at`).
    pub column: ColumnRef,
    /// Reads keeping only rows whose column is later than now.
    pub reads: Vec<String>,
    /// Deletes of exactly the rows whose column has passed.
    pub purges: Vec<String>,
}

/// The bound is the clock itself (`now()`, `current_timestamp`).
fn is_now(b: Option<&remodel_model::RangeBound>) -> bool {
    b.is_some_and(|b| b.expr == Some(Expr::Now))
}

/// A column that holds an instant: `timestamptz`, or a `timestamp` read in UTC (a zone-less
/// timestamp compared with `now()` is read in the session's zone; only in UTC is it the instant
/// Cassandra's clock counts to).
fn holds_instant(schema: &Schema, c: &ColumnRef, time_zone: &str) -> bool {
    let Some(col) = schema.table(&c.table).and_then(|t| t.column(&c.column)) else {
        return false;
    };
    match col.sql_type.to_ascii_lowercase().as_str() {
        "timestamptz" | "timestamp with time zone" => true,
        "timestamp" | "timestamp without time zone" => remodel_model::time::is_utc(time_zone),
        _ => false,
    }
}

/// The read keeps only rows whose `c` is later than now: a range on `c` whose lower bound is
/// the clock (an upper bound may remain).
fn filters_live(r: &RangePredicate) -> bool {
    is_now(r.lower.as_ref()) && !r.prefix
}

/// The DELETE removes exactly the rows whose column has passed: its whole WHERE is one range
/// `c < now()` (or `<=`), nothing else.
fn purge_column(p: &AccessPattern) -> Option<&ColumnRef> {
    let a = &p.analysis;
    let w = a.write.as_ref()?;
    let only = p.kind == StatementKind::Delete
        && a.unmodeled.is_none()
        && a.one_off.is_none()
        && a.equality.is_empty()
        && a.residual.is_empty()
        && a.join_path.is_empty()
        && w.from_rows.is_empty()
        && a.ranges.len() == 1;
    let r = a.ranges.first().filter(|_| only)?;
    (r.lower.is_none() && is_now(r.upper.as_ref()) && !r.prefix && r.column.table == w.table)
        .then_some(&r.column)
}

/// Every column whose rows expire: a purge deletes the rows it has passed and a read keeps
/// only those it has not.
pub fn find(schema: &Schema, workload: &Workload, time_zone: &str) -> Vec<Expiry> {
    let mut out: Vec<Expiry> = Vec::new();
    for p in &workload.patterns {
        let Some(c) = purge_column(p) else { continue };
        if !holds_instant(schema, c, time_zone) {
            continue;
        }
        match out.iter_mut().find(|e| e.column == *c) {
            Some(e) => e.purges.push(p.id.clone()),
            None => out.push(Expiry {
                column: c.clone(),
                reads: Vec::new(),
                purges: vec![p.id.clone()],
            }),
        }
    }
    for e in &mut out {
        e.reads = workload
            .patterns
            .iter()
            .filter(|p| p.kind == StatementKind::Select && p.analysis.unmodeled.is_none())
            .filter(|p| {
                p.analysis
                    .ranges
                    .iter()
                    .any(|r| r.column == e.column && filters_live(r))
            })
            .map(|p| p.id.clone())
            .collect();
    }
    out.retain(|e| !e.reads.is_empty());
    out
}

/// Why the rows of a table cannot expire by TTL (`None`: they can): every table holding the
/// source table's rows must hold the column (the backfill computes each row's TTL from it), and
/// no row may live inside another's collection.
fn blocked(
    e: &Expiry,
    build: &Build,
    embeds: &[crate::assemble::embed::Embedding],
) -> Option<String> {
    if let Some(d) = build
        .counters
        .iter()
        .find(|d| d.spec.root == e.column.table)
    {
        return Some(format!(
            "counter table {} counts {}'s rows and a row that expires by TTL is never subtracted from it (its purge must run, so the counters see the rows it deletes)",
            d.spec.name, e.column.table
        ));
    }
    if embeds.iter().any(|x| x.child == e.column.table) {
        return Some(format!(
            "{}'s rows are embedded in a parent's collection, where a row has no TTL of its own",
            e.column.table
        ));
    }
    build
        .tables
        .iter()
        .filter(|t| t.root == e.column.table)
        .find(|t| !holds(t, &e.column))
        .map(|t| {
            format!(
                "{} holds {} rows without {}, from which each row's TTL is computed",
                t.name, e.column.table, e.column
            )
        })
}

/// The table holds the column itself (not only a bucket of it).
fn holds(t: &TableBuild, c: &ColumnRef) -> bool {
    t.columns.iter().any(|(k, ..)| k.plain_column() == Some(c))
}

/// Marks every table of an expiring source table with its column (the write planner adds the
/// TTL to their INSERTs and UPDATEs); returns the expiries not applied, with the reason.
pub fn mark(
    expiries: &[Expiry],
    build: &mut Build,
    embeds: &[crate::assemble::embed::Embedding],
) -> Vec<(Expiry, String)> {
    let mut refused = Vec::new();
    for t in &mut build.tables {
        t.expires = None;
    }
    for e in expiries {
        if let Some(why) = blocked(e, build, embeds) {
            refused.push((e.clone(), why));
            continue;
        }
        for t in build.tables.iter_mut().filter(|t| t.root == e.column.table) {
            t.expires = Some(e.column.clone());
        }
    }
    refused
}

/// The expiries [`mark`] applied: some table holds its rows with a TTL.
pub fn applied(expiries: &[Expiry], tables: &[TableBuild]) -> Vec<Expiry> {
    expiries
        .iter()
        .filter(|e| tables.iter().any(|t| t.expires.as_ref() == Some(&e.column)))
        .cloned()
        .collect()
}

/// States the expiry on its tables and marks its purges served by the TTL (no statement, not
/// unsupported).
pub fn apply(expiries: &[Expiry], design: &mut Design) {
    for e in expiries {
        let tables: Vec<String> = design
            .tables
            .iter()
            .filter(|t| t.entity == e.column.table && t.counter.is_none())
            .map(|t| t.name.clone())
            .collect();
        if tables.is_empty() {
            continue;
        }
        let reason = format!(
            "reads {} keep only rows whose {} is later than now and {} deletes the rows it has passed: each row is written USING TTL of the seconds until its {} (rounded up; the reads' filter hides it for the rest of that second), so Cassandra drops it and the purge sends nothing",
            e.reads.join(", "),
            e.column,
            e.purges.join(", "),
            e.column.column
        );
        for t in design
            .tables
            .iter_mut()
            .filter(|t| tables.contains(&t.name))
        {
            let Some(target_column) = t
                .columns
                .iter()
                .find(|c| c.source.as_ref() == Some(&e.column))
                .map(|c| c.name.clone())
            else {
                continue;
            };
            t.ttl = Some(RowTtl {
                column: e.column.clone(),
                target_column,
                reads: e.reads.clone(),
                purges: e.purges.clone(),
                reason: reason.clone(),
            });
        }
        for w in design
            .writes
            .iter_mut()
            .filter(|w| e.purges.contains(&w.pattern))
        {
            serve_purge(w, e, &tables, &reason);
        }
    }
}

fn serve_purge(w: &mut WritePath, e: &Expiry, tables: &[String], reason: &str) {
    w.unsupported = None;
    w.targets.clear();
    w.read_before_write.clear();
    w.note = Some(format!(
        "served by TTL: the rows whose {} has passed expire in {} by themselves",
        e.column,
        tables.join(", ")
    ));
    w.served_by_ttl = Some(ServedByTtl {
        column: e.column.clone(),
        tables: tables.to_vec(),
        reason: reason.to_string(),
    });
}
