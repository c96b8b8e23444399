//! Pass 2, costing: what each way of serving a read costs per call (partitions read, a lookup
//! chain counting each hop), and what each table costs the writes that keep it in step (table
//! writes, and the rows they must read first) — from the workload's calls, the statistics or the
//! stated defaults. The selection pass weighs them; the evidence in `plan.json` quotes them.
//!
//! In: the [`Candidates`](crate::candidates::Candidates), the workload and the sizes
//! ([`sizing`]: partition sizes by the Cassandra formulas); out: a [`ReadCost`] per option and the
//! [`WriteTerm`]s of each layout, which [`crate::select::costs`] gathers.

pub mod sizing;

use self::sizing::Sizer;
use crate::candidates::keys::KeySrc;
use crate::candidates::tables::{self, TableBuild};
use crate::candidates::ReadOption;
use remodel_model::{AccessPattern, ColumnRef, EqualityOp, Relationship, StatementKind, Workload};

/// Partitions an `IN` on the partition key is assumed to read when the workload does not say.
pub const IN_VALUES: f64 = 10.0;

/// What a way of serving a read costs, per call.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadCost {
    /// Partitions read, lookups included.
    pub partitions: f64,
    /// Rows the first read returns (what the lookups multiply).
    pub rows: f64,
    /// Rows scanned in the partitions read (lookups included): every row of them when the
    /// client filters, aggregates, groups or sorts before a LIMIT, else the rows returned.
    pub rows_scanned: f64,
    /// Bytes the CQL returns to the client (every row scanned, at the option's columns).
    pub bytes_returned: f64,
    /// Bytes the option's columns take in its table (for the storage term).
    pub stored_bytes: f64,
}

/// What one write pattern pays, per call, on one table.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteTerm {
    /// Index of the write in the workload.
    pub write: usize,
    /// CQL statements on the table.
    pub statements: f64,
    /// Bytes those statements send (their rows' columns).
    pub bytes: f64,
    /// Partitions read to find the rows that copy the written one.
    pub many_reads: f64,
    /// The entity whose row the write reads first (by key), shared by every table that needs it.
    pub reads_row_of: Option<String>,
    /// The table that lists the rows copying the written one (child rows by their link
    /// columns): it must exist, and keeping it costs writes of its own.
    pub finder: Option<(String, Vec<ColumnRef>)>,
}

/// A write as costing sees it.
struct Write<'a> {
    index: usize,
    kind: StatementKind,
    table: &'a str,
    set: Vec<String>,
    key_eq: Vec<String>,
}

fn writes(workload: &Workload) -> Vec<Write<'_>> {
    workload
        .patterns
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind.is_write() && p.analysis.one_off.is_none())
        .filter_map(|(index, p)| {
            let w = p.analysis.write.as_ref()?;
            Some(Write {
                index,
                kind: p.kind,
                table: &w.table,
                set: w.columns_written.clone(),
                key_eq: key_eq(p, &w.table),
            })
        })
        .collect()
}

/// Columns a write's WHERE binds by `=` (their values are known without reading).
fn key_eq(p: &AccessPattern, table: &str) -> Vec<String> {
    p.analysis
        .equality
        .iter()
        .filter(|e| e.op == EqualityOp::Eq && e.column.table == table)
        .map(|e| e.column.column.clone())
        .collect()
}

/// Identifiers compare exactly: the front ends fold them as Postgres does.
fn same(a: &str, b: &str) -> bool {
    a == b
}

fn has(cols: &[String], c: &str) -> bool {
    cols.iter().any(|x| same(x, c))
}

/// A layout finished with `needs` as its columns (for estimates and key columns).
fn finished(sizer: &Sizer<'_>, layout: &TableBuild, needs: &[ColumnRef]) -> TableBuild {
    let mut t = layout.clone();
    t.needed = needs.to_vec();
    tables::finish(sizer.schema, &mut t, false);
    t
}

/// The cost per call of one way of serving a read.
pub fn read_cost(
    sizer: &Sizer<'_>,
    p: &AccessPattern,
    o: &ReadOption,
    layout: &TableBuild,
) -> ReadCost {
    let t = finished(sizer, layout, &o.needs);
    let (est, _) = sizer.estimate(&t);
    let partitions = match o.key.partitions_read {
        Some(u32::MAX) => IN_VALUES,
        Some(n) => f64::from(n),
        None => est.partitions,
    };
    let per_partition = est.rows_per_partition_avg.max(1.0);
    let all = per_partition * partitions;
    let mut rows = all;
    if let Some(limit) = p.analysis.limit.filter(|_| !o.key.client_sort) {
        rows = rows.min(limit as f64);
    }
    if let Some(r) = p.analysis.rows_expected {
        rows = rows.min(r.max(1.0));
    }
    let lookups = o.shape.lookups.len() as f64 * rows;
    let scanned = if scans_partitions(p, o) { all } else { rows };
    let names: Vec<String> = o
        .needs
        .iter()
        .filter_map(|c| t.col_name(c).map(str::to_string))
        .collect();
    // An aggregate CQL computes (count/min/max of one partition) returns one row; otherwise
    // the client gets every row scanned.
    let returned = if server_aggregates(p, o) {
        1.0
    } else {
        scanned
    };
    ReadCost {
        partitions: partitions + lookups,
        rows,
        rows_scanned: scanned + lookups,
        bytes_returned: returned * sizer.row_bytes(&t, Some(&names)),
        stored_bytes: est.rows * sizer.row_bytes(&t, None),
    }
}

/// True when Cassandra computes the read's aggregates itself (as the query mapping does:
/// `count`, `min`, `max` over one partition with nothing for the client to filter or join).
fn server_aggregates(p: &AccessPattern, o: &ReadOption) -> bool {
    let a = &p.analysis;
    !a.aggregates.is_empty()
        && a.group_by.is_empty()
        && a.aggregates.iter().all(|g| {
            !g.distinct
                && matches!(
                    g.function.to_ascii_lowercase().as_str(),
                    "count" | "min" | "max"
                )
        })
        && o.key.partitions_read == Some(1)
        && o.shape.client.is_empty()
        && o.shape.extra_ranges.is_empty()
        && o.shape.lookups.is_empty()
}

/// True when the read goes through every row of the partitions it reads: the client filters,
/// aggregates, groups, removes duplicates or sorts them before any LIMIT can stop the scan
/// (`count(*)` over a partition reads all its rows).
fn scans_partitions(p: &AccessPattern, o: &ReadOption) -> bool {
    let a = &p.analysis;
    o.key.client_sort
        || !o.shape.client.is_empty()
        || !o.shape.extra_ranges.is_empty()
        || !a.aggregates.is_empty()
        || !a.group_by.is_empty()
        || a.distinct
}

/// The source columns of a finished table's key (bucket columns by the column they derive from).
fn key_sources(t: &TableBuild) -> Vec<ColumnRef> {
    t.key_elements()
        .iter()
        .filter_map(|k| k.source().cloned())
        .collect()
}

/// The writes that touch a layout whatever columns it holds: inserts and deletes of its rows,
/// updates of its key columns (the rows move).
pub fn always_terms(sizer: &Sizer<'_>, workload: &Workload, layout: &TableBuild) -> Vec<WriteTerm> {
    let t = finished(sizer, layout, &[]);
    let keys = key_sources(&t);
    let row_bytes = sizer.row_bytes(&t, None);
    let mut out = Vec::new();
    for w in writes(workload) {
        if !same(w.table, &t.root) {
            continue;
        }
        let key_known = keys
            .iter()
            .filter(|k| same(&k.table, w.table))
            .all(|k| has(&w.key_eq, &k.column));
        let reads = |needed: bool| needed.then(|| t.root.clone());
        let term = match w.kind {
            StatementKind::Insert => Some((1.0, None)),
            StatementKind::Delete => Some((1.0, reads(!key_known))),
            StatementKind::Update
                if keys
                    .iter()
                    .any(|k| same(&k.table, w.table) && has(&w.set, &k.column)) =>
            {
                Some((2.0, reads(true)))
            }
            _ => None,
        };
        if let Some((statements, reads_row_of)) = term {
            out.push(WriteTerm {
                write: w.index,
                statements,
                bytes: statements * row_bytes,
                many_reads: 0.0,
                reads_row_of,
                finder: None,
            });
        }
    }
    out
}

/// The writes that touch a layout because it holds `needs`: updates of those columns of its own
/// rows, updates of a parent's columns copied into it (once per copying row, or once when the
/// partition is the parent's key), inserts that copy a parent's columns (a read of the parent).
pub fn need_terms(
    sizer: &Sizer<'_>,
    workload: &Workload,
    relationships: &[Relationship],
    layout: &TableBuild,
    needs: &[ColumnRef],
) -> Vec<WriteTerm> {
    let t = finished(sizer, layout, needs);
    let keys = key_sources(&t);
    let row_bytes = sizer.row_bytes(&t, None);
    let stored: Vec<&ColumnRef> = needs.iter().filter(|c| !keys.contains(c)).collect();
    let mut out = Vec::new();
    for w in writes(workload) {
        let root_row = same(w.table, &t.root);
        let sets_stored = stored
            .iter()
            .any(|c| same(&c.table, w.table) && has(&w.set, &c.column));
        if root_row && w.kind == StatementKind::Update && sets_stored {
            let key_known = keys
                .iter()
                .filter(|k| same(&k.table, w.table))
                .all(|k| has(&w.key_eq, &k.column));
            out.push(WriteTerm {
                write: w.index,
                statements: 1.0,
                bytes: row_bytes,
                many_reads: 0.0,
                reads_row_of: (!key_known).then(|| t.root.clone()),
                finder: None,
            });
        }
        if root_row && w.kind == StatementKind::Insert {
            // Each parent whose columns are copied is read by key first.
            let mut parents: Vec<&str> = needs
                .iter()
                .filter(|c| !same(&c.table, &t.root))
                .map(|c| c.table.as_str())
                .collect();
            parents.dedup();
            for parent in parents {
                out.push(WriteTerm {
                    write: w.index,
                    statements: 0.0,
                    bytes: 0.0,
                    many_reads: 0.0,
                    reads_row_of: Some(parent.to_string()),
                    finder: None,
                });
            }
        }
        let Some(edge) = t
            .edges
            .iter()
            .find(|e| e.directed && e.child == t.root && same(&e.parent, w.table))
        else {
            continue;
        };
        let copies: Vec<&ColumnRef> = needs
            .iter()
            .filter(|c| same(&c.table, w.table) && has(&w.set, &c.column))
            .collect();
        if w.kind != StatementKind::Update || copies.is_empty() {
            continue;
        }
        let in_key = copies.iter().any(|c| keys.contains(c));
        let static_case = !in_key
            && t.partition.len() == edge.child_cols.len()
            && t.partition.iter().all(|k| {
                matches!(k, KeySrc::Col(c) if c.table == t.root && has(&edge.child_cols, &c.column))
            });
        let fanout = if static_case {
            1.0
        } else {
            fanout(sizer, relationships, w.table, &t.root)
        };
        let statements = fanout * if in_key { 2.0 } else { 1.0 };
        out.push(WriteTerm {
            write: w.index,
            statements,
            bytes: statements * row_bytes,
            many_reads: if static_case { 0.0 } else { 1.0 },
            reads_row_of: None,
            finder: (!static_case).then(|| (t.root.clone(), link_columns(sizer, &t.root, edge))),
        });
    }
    out
}

/// Children per parent: from the statistics when they size both tables, else the fan-out the
/// analyzer measured, else the ratio of the default row counts.
pub fn fanout(sizer: &Sizer<'_>, relationships: &[Relationship], parent: &str, child: &str) -> f64 {
    let by_rows = (sizer.rows(child) / sizer.rows(parent)).max(1.0);
    let sized = |t: &str| sizer.stats.and_then(|s| s.table(t)).is_some();
    if sized(parent) && sized(child) {
        return by_rows;
    }
    relationships
        .iter()
        .find(|r| same(&r.from, parent) && same(&r.to, child))
        .and_then(|r| r.rationale.fanout)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(by_rows)
}

/// The child's columns of a join edge (its link to the parent), as canonical references.
pub fn link_columns(
    sizer: &Sizer<'_>,
    child: &str,
    edge: &crate::candidates::shape::Edge,
) -> Vec<ColumnRef> {
    edge.child_cols
        .iter()
        .filter_map(|c| {
            crate::candidates::shape::canonical(sizer.schema, &ColumnRef::new(child, c))
        })
        .collect()
}
