//! Counter tables obey Cassandra's rules and are kept by every write of the rows they count:
//! only the partition key and `counter` columns; written only by `UPDATE … SET c = c ± ?`
//! (no INSERT, no `USING TIMESTAMP`/`TTL`); every INSERT of a counted row adds to its group,
//! every DELETE subtracts once per row it read first, every UPDATE of a group or summed column
//! subtracts from the old and adds to the new.

use super::v;
use remodel_model::{
    AccessPattern, Design, DesignTable, NativeType, StatementKind, Violation, WritePath,
};

/// The checks of one counter table (`t.counter` set).
pub fn counter_table(
    design: &Design,
    writes: &[(&AccessPattern, &WritePath)],
    t: &DesignTable,
    out: &mut Vec<Violation>,
) {
    let Some(c) = &t.counter else { return };
    for col in &t.columns {
        let in_key = t
            .partition_key
            .iter()
            .chain(&t.clustering)
            .any(|k| k.column == col.name);
        let counter = col.cql_type.native() == Some(NativeType::Counter);
        if in_key == counter {
            v(
                out,
                "q",
                format!(
                    "counter table {}: column {} must be {}",
                    t.name,
                    col.name,
                    if in_key {
                        "a key column, not a counter"
                    } else {
                        "a counter (a counter table holds its key and counters only)"
                    }
                ),
            );
        }
    }
    for s in design
        .writes
        .iter()
        .flat_map(|w| &w.targets)
        .filter(|x| x.table == t.name)
    {
        if s.counter.is_none() || s.cql.contains(" USING ") {
            v(out, "q", format!(
                "counter table {} is written by `{}`: only UPDATE … SET c = c ± ? without USING may write a counter",
                t.name, s.cql
            ));
        }
    }
    for (p, w) in writes {
        let Some(info) = p.analysis.write.as_ref().filter(|i| i.table == c.counts) else {
            continue;
        };
        if w.one_off || w.unsupported.is_some() {
            continue;
        }
        let changes: Vec<(bool, bool)> = w
            .targets
            .iter()
            .filter(|x| x.table == t.name)
            .filter_map(|x| {
                let sub = x
                    .counter
                    .as_ref()?
                    .columns
                    .iter()
                    .find(|(n, _)| *n == c.count_column)?
                    .1;
                Some((sub, x.for_each.is_some()))
            })
            .collect();
        let moves = info.columns_written.iter().any(|col| {
            c.group_by.iter().any(|g| g.column == *col)
                || c.sums.iter().any(|(_, s)| s.column == *col)
        });
        let ok = match p.kind {
            StatementKind::Insert => changes == [(false, false)],
            StatementKind::Delete => changes == [(true, true)],
            StatementKind::Update if moves => {
                changes.len() == 2
                    && changes.contains(&(true, true))
                    && changes.contains(&(false, true))
            }
            _ => changes.is_empty(),
        };
        if !ok {
            v(out, "q", format!(
                "counter table {}: {} ({:?} of {}) does not keep the count: an INSERT adds 1 to the new row's group, a DELETE subtracts 1 per row read first, an UPDATE of the group or a summed column subtracts from the old and adds to the new",
                t.name, p.id, p.kind, c.counts
            ));
        }
    }
}
