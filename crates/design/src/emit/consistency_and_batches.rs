//! How the plan's statements are sent: the consistency level of every read and write, and
//! whether a write path's statements go as one statement, an unlogged batch or a logged one.

use remodel_model::{
    BatchKind, BatchPlan, Bind, Consistency, ConsistencyLevel, Design, DesignTable, Workload,
    WritePath,
};
use serde::{Deserialize, Serialize};

/// The consistency levels of the plan (`[design.consistency]` of `--config`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsistencyConfig {
    /// Every read (its first statement and the lookups after it): `LOCAL_QUORUM`.
    pub reads: ConsistencyLevel,
    /// Every write (its statements and its reads before write): `LOCAL_QUORUM`.
    pub writes: ConsistencyLevel,
}

impl Default for ConsistencyConfig {
    fn default() -> Self {
        ConsistencyConfig {
            reads: ConsistencyLevel::LocalQuorum,
            writes: ConsistencyLevel::LocalQuorum,
        }
    }
}

/// A majority of the replicas it names (so a read and a write of this kind share a replica).
fn majority(l: ConsistencyLevel) -> bool {
    matches!(
        l,
        ConsistencyLevel::Quorum | ConsistencyLevel::LocalQuorum | ConsistencyLevel::EachQuorum
    )
}

/// True when a read at `read` is sure to see a write acknowledged at `write` (in the same
/// datacenter for the `LOCAL_` levels): every replica, or majorities on both sides.
fn overlaps(read: ConsistencyLevel, write: ConsistencyLevel) -> bool {
    read == ConsistencyLevel::All
        || write == ConsistencyLevel::All
        || (majority(read) && majority(write))
}

/// Why the pair `(reads, writes)` gives what it gives.
fn pair_reason(c: &ConsistencyConfig) -> String {
    let (r, w) = (c.reads.cql_name(), c.writes.cql_name());
    if overlaps(c.reads, c.writes) {
        format!("reads at {r} after writes at {w} share a replica: a user reads their own writes")
    } else {
        format!("reads at {r} after writes at {w} need not share a replica: a read may miss a write acknowledged just before it (stale reads are accepted)")
    }
}

/// Where the level comes from.
fn origin(level: ConsistencyLevel, default: ConsistencyLevel) -> &'static str {
    if level == default {
        "the default"
    } else {
        "set by [design.consistency] of --config"
    }
}

/// The consistency of every read.
pub fn read_consistency(c: &ConsistencyConfig) -> Consistency {
    let default = ConsistencyConfig::default();
    Consistency {
        level: c.reads,
        reason: format!(
            "{} ({}): {}",
            c.reads.cql_name(),
            origin(c.reads, default.reads),
            pair_reason(c)
        ),
        read_your_writes: Vec::new(),
    }
}

/// The consistency of every write (its statements and its reads before write).
pub fn write_consistency(c: &ConsistencyConfig) -> Consistency {
    let default = ConsistencyConfig::default();
    let tolerance = if majority(c.writes) || c.writes == ConsistencyLevel::All {
        "acknowledged by a majority of the replicas, so it survives one replica's loss"
    } else {
        "acknowledged by one replica: it can be lost if that replica fails before the others get it"
    };
    Consistency {
        level: c.writes,
        reason: format!(
            "{} ({}): {tolerance}; {}",
            c.writes.cql_name(),
            origin(c.writes, default.writes),
            pair_reason(c)
        ),
        read_your_writes: Vec::new(),
    }
}

/// States the consistency of every read and write and the batch of every write path. A read
/// that the log shows running after a write feeding its table in the same transaction (a user
/// reading their own write) is at LOCAL_QUORUM, and so is that write, whatever the configured
/// levels; every other access takes the configured level.
pub fn apply(
    design: &mut Design,
    workload: &Workload,
    c: &ConsistencyConfig,
    batch_warn_bytes: u64,
) {
    let pairs = own_writes(design, workload);
    let reads = read_consistency(c);
    for q in design.queries.iter_mut().filter(|q| q.cql.is_some()) {
        let after: Vec<&(String, String, u64)> =
            pairs.iter().filter(|(_, r, _)| *r == q.pattern).collect();
        q.consistency = Some(if after.is_empty() {
            reads.clone()
        } else {
            own_write_level(c, c.reads, after.iter().map(|(w, _, n)| (w, *n)), "after")
        });
    }
    let writes = write_consistency(c);
    let tables = &design.tables;
    for w in design.writes.iter_mut() {
        if w.targets.is_empty() {
            continue;
        }
        let before: Vec<&(String, String, u64)> =
            pairs.iter().filter(|(x, _, _)| *x == w.pattern).collect();
        w.consistency = Some(if before.is_empty() {
            writes.clone()
        } else {
            own_write_level(
                c,
                c.writes,
                before.iter().map(|(_, r, n)| (r, *n)),
                "before",
            )
        });
        w.batch = Some(batch_with_counters(w, tables, batch_warn_bytes));
    }
}

/// How a write path's statements are sent, its counter statements apart: Cassandra refuses a
/// batch that mixes counter updates with other statements, so they follow the others as one
/// statement or a counter batch (not atomic with the rest: said in the reason).
pub fn batch_with_counters(
    w: &WritePath,
    tables: &[DesignTable],
    batch_warn_bytes: u64,
) -> BatchPlan {
    let (counters, others): (Vec<_>, Vec<_>) =
        w.targets.iter().cloned().partition(|t| t.counter.is_some());
    if counters.is_empty() {
        return batch(w, tables, batch_warn_bytes);
    }
    let kind = if counters.len() == 1 && counters[0].for_each.is_none() {
        BatchKind::Single
    } else {
        BatchKind::Counter
    };
    let names: std::collections::BTreeSet<&str> =
        counters.iter().map(|t| t.table.as_str()).collect();
    let counted = format!(
        "{} counter statement(s) on {} sent {}",
        counters.len(),
        names.into_iter().collect::<Vec<_>>().join(", "),
        if kind == BatchKind::Single {
            "alone"
        } else {
            "as a counter batch"
        }
    );
    if others.is_empty() {
        return BatchPlan {
            kind,
            reason: counted,
            counters: Some(kind),
            max_statements: None,
        };
    }
    let rest = WritePath {
        targets: others,
        ..w.clone()
    };
    let mut plan = batch(&rest, tables, batch_warn_bytes);
    plan.reason = format!(
        "{}; then {counted}: Cassandra refuses counter and other statements in one batch, so the counters are not atomic with the rest (a failure between the two sends leaves them apart until the write is retried)",
        plan.reason
    );
    plan.counters = Some(kind);
    plan
}

/// (write, read, transactions): the read ran after the write in that many transactions of the
/// log, and the write writes a table the read reads (its first table or a lookup step's).
fn own_writes(design: &Design, workload: &Workload) -> Vec<(String, String, u64)> {
    let id_of: std::collections::HashMap<&str, &str> = workload
        .patterns
        .iter()
        .map(|p| (p.fingerprint.as_str(), p.id.as_str()))
        .collect();
    let mut out: Vec<(String, String, u64)> = Vec::new();
    for tx in &workload.sessions.transactions {
        let ids: Vec<&str> = tx
            .statements
            .iter()
            .filter_map(|f| id_of.get(f.as_str()).copied())
            .collect();
        let n = tx.committed + tx.rolled_back;
        for (i, w) in ids.iter().enumerate() {
            let Some(path) = design.writes.iter().find(|x| x.pattern == *w) else {
                continue;
            };
            for r in &ids[i + 1..] {
                let Some(q) = design.queries.iter().find(|q| q.pattern == *r) else {
                    continue;
                };
                let feeds = q
                    .table
                    .iter()
                    .chain(q.then.iter().map(|s| &s.table))
                    .any(|t| path.targets.iter().any(|x| x.table == *t));
                if !feeds {
                    continue;
                }
                match out.iter_mut().find(|(a, b, _)| a == w && b == r) {
                    Some(x) => x.2 += n,
                    None => out.push((w.to_string(), r.to_string(), n)),
                }
            }
        }
    }
    out
}

/// LOCAL_QUORUM for one side of a read of one's own write (or the configured level when it
/// already shares a replica with the other side), naming the other side's patterns.
fn own_write_level<'a>(
    c: &ConsistencyConfig,
    configured: ConsistencyLevel,
    others: impl Iterator<Item = (&'a String, u64)>,
    side: &str,
) -> Consistency {
    let others: Vec<(&String, u64)> = others.collect();
    let level = if overlaps(c.reads, c.writes) {
        configured
    } else {
        ConsistencyLevel::LocalQuorum
    };
    let list: Vec<String> = others
        .iter()
        .map(|(p, n)| format!("{p} ({} transactions)", remodel_model::text::thousands(*n)))
        .collect();
    Consistency {
        level,
        reason: format!(
            "{}: a user reads their own write: the log shows it {side} {} in the same transaction, so both sides are at a majority of the replicas and share one",
            level.cql_name(),
            list.join(", ")
        ),
        read_your_writes: others.iter().map(|(p, _)| p.to_string()).collect(),
    }
}

/// How a write path's statements are sent: one statement alone; statements of one partition
/// of one table as an unlogged batch (atomic and isolated there); anything else as a logged
/// batch, so that copies in several partitions stay in step.
pub fn batch(w: &WritePath, tables: &[DesignTable], batch_warn_bytes: u64) -> BatchPlan {
    let repeated = w.targets.iter().any(|t| t.for_each.is_some());
    if w.targets.len() == 1 && !repeated {
        return BatchPlan {
            kind: BatchKind::Single,
            reason: "one statement: no batch".into(),
            counters: None,
            max_statements: None,
        };
    }
    let first = &w.targets[0];
    let key = partition_binds(&first.table, &first.binds, tables);
    let one_partition = !repeated
        && key.is_some()
        && w.targets
            .iter()
            .all(|t| t.table == first.table && partition_binds(&t.table, &t.binds, tables) == key);
    if one_partition {
        return BatchPlan {
            kind: BatchKind::Unlogged,
            reason: format!(
                "{} statements in one partition of {}: an unlogged batch applies them atomically and in isolation there",
                w.targets.len(),
                first.table
            ),
            counters: None,
            max_statements: None,
        };
    }
    let tables_written: std::collections::BTreeSet<&str> =
        w.targets.iter().map(|t| t.table.as_str()).collect();
    let mut reason = format!(
        "{} statements{} over {} table(s) and several partitions: a logged batch applies all of them or, after a coordinator's failure, replays them from the batch log, so the copies stay in step",
        w.targets.len(),
        if repeated { " (some once per row read)" } else { "" },
        tables_written.len()
    );
    if !w.fits_batch {
        reason.push_str(&format!(
            "; about {} B, over the {} B batch_size_warn_threshold: Cassandra logs a warning (and refuses a batch over batch_size_fail_threshold, 50 KiB by default)",
            w.batch_bytes, batch_warn_bytes
        ));
    }
    let max_statements = split(w, tables, batch_warn_bytes, &mut reason);
    BatchPlan {
        kind: BatchKind::Logged,
        reason,
        counters: None,
        max_statements,
    }
}

/// Cassandra's default `batch_size_fail_threshold` (50 KiB): a batch over it is refused.
const BATCH_FAIL_BYTES: f64 = 50.0 * 1024.0;

/// The statements a path sends for the rows with the most of them: a statement run once per
/// row of a many-row read counts the rows of that read's largest partition.
fn statements_at_most(w: &WritePath, tables: &[DesignTable]) -> f64 {
    let rows = |i: usize| {
        w.read_before_write
            .get(i)
            .and_then(|r| tables.iter().find(|t| t.name == r.table))
            .map_or(1.0, |t| t.estimates.rows_per_partition_max.max(1.0))
    };
    w.targets
        .iter()
        .filter(|t| t.counter.is_none())
        .map(|t| t.for_each.map_or(1.0, rows))
        .sum()
}

/// The most statements a logged batch of `w` takes when, sized by its rows (a statement per
/// row of a many-row read, at the largest partition), it can pass `batch_size_fail_threshold`:
/// Cassandra would refuse it for the rows with the most of them. Chunks stay under the warning
/// threshold; the reason says so.
fn split(
    w: &WritePath,
    tables: &[DesignTable],
    batch_warn_bytes: u64,
    reason: &mut String,
) -> Option<u32> {
    let plain = w.targets.iter().filter(|t| t.counter.is_none()).count();
    let per_statement = w.batch_bytes as f64 / plain.max(1) as f64;
    let most = statements_at_most(w, tables);
    let bytes = per_statement * most;
    if bytes <= BATCH_FAIL_BYTES || per_statement <= 0.0 {
        return None;
    }
    let chunk = ((batch_warn_bytes as f64 / per_statement).floor() as u32).max(1);
    reason.push_str(&format!(
        "; for the rows with the most of them about {} statements, {} B, over batch_size_fail_threshold (50 KiB by default), which Cassandra refuses: sent as consecutive logged batches of at most {chunk} statements, each applied whole but not all together (a failure midway leaves the later copies stale until the write is retried)",
        most.round(),
        bytes.round()
    ));
    Some(chunk)
}

/// The binds of a statement's partition-key columns (in the table's key order), or `None` when
/// one is not bound (the statement is then not known to stay in one partition).
fn partition_binds<'b>(
    table: &str,
    binds: &'b [Bind],
    tables: &[DesignTable],
) -> Option<Vec<&'b remodel_model::BindValue>> {
    let t = tables.iter().find(|t| t.name == table)?;
    t.partition_key
        .iter()
        .map(|k| {
            binds
                .iter()
                .find(|b| b.column == k.column)
                .map(|b| &b.value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reads_its_own_writes_and_says_so() {
        let c = ConsistencyConfig::default();
        let r = read_consistency(&c);
        assert_eq!(r.level, ConsistencyLevel::LocalQuorum);
        assert!(r.reason.contains("reads their own writes"), "{}", r.reason);
        let weak = ConsistencyConfig {
            reads: ConsistencyLevel::LocalOne,
            writes: ConsistencyLevel::LocalQuorum,
        };
        let r = read_consistency(&weak);
        assert!(r.reason.contains("may miss"), "{}", r.reason);
        assert!(r.reason.contains("--config"), "{}", r.reason);
    }
}
