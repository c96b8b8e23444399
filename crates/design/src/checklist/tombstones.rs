//! Queues (seed 003: "avoid high-velocity delete patterns (like queues) in standard tables"): a
//! table whose rows are deleted about as often as they are inserted, read from the oldest row
//! first. Each DELETE leaves a tombstone that stays `gc_grace_seconds` (10 days by default) before
//! compaction may drop it, and the oldest rows are the deleted ones: every read scans the
//! partition's tombstones before its first live row. The table gets a `tombstones` warning with
//! that figure, from the workload's insert and delete rates and the table's partitions. "Oldest
//! first" is read from the SQL: the read's ascending order is on a column every INSERT gives the
//! clock or a sequence, or the DELETEs find their rows by what the read returns (a consumer
//! deleting the head it just read).

use crate::Thresholds;
use remodel_model::{
    AccessPattern, Design, Expr, Function, StatementKind, Tombstones, ValueOrigin, Warning,
    Workload, WriteAction,
};

/// Rows a pattern touches per call times its calls (one row per call when the analyzer did
/// not estimate it).
fn rows(p: &AccessPattern) -> f64 {
    p.calls as f64 * p.analysis.rows_expected.unwrap_or(1.0)
}

/// True when every INSERT of `table` gives `column` a value that grows with insertion: the
/// clock (`DEFAULT now()`, `now()`) or a sequence. Then the smallest values are the oldest rows.
fn grows_with_inserts(design: &Design, workload: &Workload, table: &str, column: &str) -> bool {
    let inserts: Vec<&AccessPattern> = workload
        .patterns
        .iter()
        .filter(|p| p.kind == StatementKind::Insert && written(p) == Some(table))
        .collect();
    !inserts.is_empty()
        && inserts.iter().all(|p| {
            design
                .writes
                .iter()
                .find(|w| w.pattern == p.id)
                .and_then(|w| w.values.iter().find(|v| v.column.column == column))
                .is_some_and(|v| {
                    v.origin == ValueOrigin::Identity
                        || v.value == Expr::Now
                        || matches!(
                            &v.value,
                            Expr::Call {
                                function: Function::Nextval,
                                ..
                            }
                        )
                })
        })
}

/// True when DELETE `d` finds its rows by `=` on columns read `r` returns or is given (its
/// result names the rows to delete), one of them a returned one.
fn consumes(r: &AccessPattern, d: &AccessPattern) -> bool {
    let by: Vec<_> = d.analysis.equality.iter().map(|e| &e.column).collect();
    let returned = |c: &&remodel_model::ColumnRef| r.analysis.projection.contains(c);
    let given = |c: &&remodel_model::ColumnRef| r.analysis.equality.iter().any(|e| e.column == **c);
    written(d) == r.analysis.tables.first().map(String::as_str)
        && !by.is_empty()
        && by.iter().any(returned)
        && by.iter().all(|c| returned(c) || given(c))
}

fn written(p: &AccessPattern) -> Option<&str> {
    p.analysis.write.as_ref().map(|w| w.table.as_str())
}

/// States the tombstones of every table an oldest-first read scans while its rows are deleted
/// at a rate comparable to their inserts (at least `queue_delete_share` of them).
pub fn apply(design: &mut Design, workload: &Workload, th: &Thresholds) {
    let mut found: Vec<(String, Tombstones)> = Vec::new();
    for q in &design.queries {
        let (Some(table), Some(p)) = (
            q.table.as_ref(),
            workload.patterns.iter().find(|p| p.id == q.pattern),
        ) else {
            continue;
        };
        let Some(first) = p.analysis.order_by.first().filter(|o| !o.desc) else {
            continue;
        };
        let Some(t) = design.tables.iter().find(|t| t.name == *table) else {
            continue;
        };
        if t.entity != first.column.table || found.iter().any(|(n, _)| n == table) {
            continue;
        }
        // The head of the order is what gets deleted: the oldest rows (the order grows with
        // inserts), or the rows this read returns (each DELETE finds its row by what the read
        // gives: the consumer deletes what it read).
        let grows = grows_with_inserts(design, workload, &t.entity, &first.column.column);
        if !grows
            && !workload
                .patterns
                .iter()
                .any(|d| d.kind == StatementKind::Delete && consumes(p, d))
        {
            continue;
        }
        let deletes: Vec<&AccessPattern> = workload
            .patterns
            .iter()
            .filter(|d| d.kind == StatementKind::Delete && written(d) == Some(&t.entity))
            .filter(|d| {
                design.writes.iter().any(|w| {
                    w.pattern == d.id
                        && w.targets
                            .iter()
                            .any(|x| x.table == *table && x.action == WriteAction::Delete)
                })
            })
            .collect();
        let inserted: f64 = workload
            .patterns
            .iter()
            .filter(|i| i.kind == StatementKind::Insert && written(i) == Some(&t.entity))
            .map(rows)
            .sum();
        let deleted: f64 = deletes.iter().map(|d| rows(d)).sum();
        if inserted <= 0.0 || deleted < th.queue_delete_share * inserted {
            continue;
        }
        let days = th.workload_days.max(f64::MIN_POSITIVE);
        let partitions = t.estimates.partitions.max(1.0);
        let per_read = (deleted / days / partitions * th.gc_grace_seconds as f64 / 86_400.0 * 10.0)
            .round()
            / 10.0;
        found.push((
            table.clone(),
            Tombstones {
                read: p.id.clone(),
                deletes: deletes.iter().map(|d| d.id.clone()).collect(),
                inserted_per_day: (inserted / days).round(),
                deleted_per_day: (deleted / days).round(),
                partitions,
                gc_grace_seconds: th.gc_grace_seconds,
                per_read,
            },
        ));
    }
    for (name, ts) in found {
        let Some(t) = design.tables.iter_mut().find(|t| t.name == name) else {
            continue;
        };
        t.warnings.push(Warning {
            code: "tombstones".into(),
            message: message(&name, &ts, th),
        });
        t.tombstones = Some(ts);
    }
}

/// The warning: the figure, what Cassandra does at that figure, and the alternatives.
fn message(table: &str, ts: &Tombstones, th: &Thresholds) -> String {
    use remodel_model::text::thousands;
    let n = |x: f64| thousands(x.round() as u64);
    let verdict = if ts.per_read >= th.tombstone_fail {
        format!(
            "over tombstone_failure_threshold ({}): Cassandra aborts the read",
            n(th.tombstone_fail)
        )
    } else if ts.per_read >= th.tombstone_warn {
        format!(
            "over tombstone_warn_threshold ({}): Cassandra logs every such read and it slows as they pile up",
            n(th.tombstone_warn)
        )
    } else {
        format!(
            "under tombstone_warn_threshold ({}) at these rates, but it grows with the delete rate per partition",
            n(th.tombstone_warn)
        )
    };
    format!(
        "{table} is a queue: {} rows deleted a day for {} inserted ({}), and read {} from the oldest row, where the deleted rows' tombstones lie for gc_grace_seconds ({} days): about {} tombstones scanned per read over {} partitions, {verdict}. Alternatives: time-bucketed partitions read newest-first, a TTL instead of the DELETE, or keeping the queue outside Cassandra",
        n(ts.deleted_per_day),
        n(ts.inserted_per_day),
        ts.deletes.join(", "),
        ts.read,
        ts.gc_grace_seconds / 86_400,
        if ts.per_read < 10.0 {
            format!("{:.1}", ts.per_read)
        } else {
            n(ts.per_read)
        },
        n(ts.partitions),
    )
}
