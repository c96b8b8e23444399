//! The seed checklist per table (seed 003, issue 24): partition size, hot keys, growth,
//! tombstones, TTL, counters and consistency, each ✔ or ⚠ with its figure, from what the plan
//! recorded (estimates, warnings, `ttl`, `tombstones`, the consistency of the accesses).

use super::{Ctx, PARTITION_BYTES_LIMIT, PARTITION_ROWS_LIMIT};
use crate::md;
use remodel_model::{DesignTable, StatementKind};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One line of the checklist: passed or not, and the figure behind it.
struct Item {
    check: &'static str,
    ok: bool,
    figure: String,
}

/// The "Checklist" section of a table's page.
pub(super) fn section(ctx: &Ctx, t: &DesignTable) -> String {
    let items = [
        partition_size(t),
        hot_keys(t),
        growth(t),
        tombstones(t),
        ttl(ctx, t),
        counters(ctx, t),
        consistency(ctx, t),
    ];
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            vec![
                i.check.to_string(),
                if i.ok { "✔" } else { "⚠" }.to_string(),
                i.figure.clone(),
            ]
        })
        .collect();
    let mut s = String::from("\n## Checklist\n\n");
    let _ = writeln!(
        s,
        "What a Cassandra reviewer checks (the seed checklist): ✔ passed, ⚠ look at it.\n"
    );
    s.push_str(&md::table(&["check", "", "figure"], &rows));
    s
}

fn warned<'t>(t: &'t DesignTable, codes: &[&str]) -> Option<&'t remodel_model::Warning> {
    t.warnings.iter().find(|w| codes.contains(&w.code.as_str()))
}

fn partition_size(t: &DesignTable) -> Item {
    let e = &t.estimates;
    Item {
        check: "partition size",
        ok: e.rows_per_partition_max <= PARTITION_ROWS_LIMIT
            && e.bytes_per_partition_max <= PARTITION_BYTES_LIMIT,
        figure: format!(
            "largest {} rows, {} (limits {} rows, {}); average {} rows",
            md::count(e.rows_per_partition_max),
            md::bytes(e.bytes_per_partition_max),
            md::count(PARTITION_ROWS_LIMIT),
            md::bytes(PARTITION_BYTES_LIMIT),
            md::count(e.rows_per_partition_avg)
        ),
    }
}

fn hot_keys(t: &DesignTable) -> Item {
    let e = &t.estimates;
    match warned(t, &["hot_key", "low_cardinality_key"]) {
        Some(w) => Item {
            check: "hot keys",
            ok: false,
            figure: format!("`{}`: {}", w.code, md::text(&w.message)),
        },
        None => Item {
            check: "hot keys",
            ok: true,
            figure: format!(
                "{} partitions; largest / average = {:.1}",
                md::count(e.partitions),
                if e.rows_per_partition_avg > 0.0 {
                    e.rows_per_partition_max / e.rows_per_partition_avg
                } else {
                    1.0
                }
            ),
        },
    }
}

fn growth(t: &DesignTable) -> Item {
    match warned(t, &["unbounded_growth", "large_partition"]) {
        Some(w) => Item {
            check: "growth",
            ok: false,
            figure: format!("`{}`: {}", w.code, md::text(&w.message)),
        },
        None => Item {
            check: "growth",
            ok: true,
            figure: "no partition grows without bound (keyed per row, bucketed or bounded)".into(),
        },
    }
}

fn tombstones(t: &DesignTable) -> Item {
    match &t.tombstones {
        Some(x) => Item {
            check: "tombstones",
            ok: false,
            figure: format!(
                "about {} tombstones scanned per read of {} ({} rows deleted a day by {} over {} partitions, kept {} days)",
                // Below one a whole number would read as "0" beside a warning.
                md::amount(x.per_read),
                x.read,
                md::count(x.deleted_per_day),
                x.deletes.join(", "),
                md::count(x.partitions),
                x.gc_grace_seconds / 86_400
            ),
        },
        None => Item {
            check: "tombstones",
            ok: true,
            figure: "no read starts at rows deleted about as often as inserted".into(),
        },
    }
}

fn ttl(ctx: &Ctx, t: &DesignTable) -> Item {
    if t.counter.is_some() {
        return Item {
            check: "TTL",
            ok: true,
            figure: "none: Cassandra refuses USING TTL on a counter; the writes that delete counted rows subtract them".into(),
        };
    }
    if let Some(x) = &t.ttl {
        return Item {
            check: "TTL",
            ok: true,
            figure: format!(
                "rows expire: written USING TTL of the seconds until {}; purge {} served by it",
                x.column,
                x.purges.join(", ")
            ),
        };
    }
    // A DELETE of this table's rows by a range that no keyed statement serves: a TTL or a job.
    let stuck: Vec<&str> = ctx
        .plan
        .design
        .writes
        .iter()
        .filter(|w| w.unsupported.is_some())
        .filter(|w| {
            ctx.pattern(&w.pattern).is_some_and(|p| {
                p.kind == StatementKind::Delete
                    && p.analysis
                        .write
                        .as_ref()
                        .is_some_and(|x| x.table == t.entity)
                    && !p.analysis.ranges.is_empty()
            })
        })
        .map(|w| w.pattern.as_str())
        .collect();
    if stuck.is_empty() {
        Item {
            check: "TTL",
            ok: true,
            figure: "none needed: no purge deletes its rows by a time range".into(),
        }
    } else {
        Item {
            check: "TTL",
            ok: false,
            figure: format!(
                "{} deletes rows by a range no keyed statement serves and no TTL stands for",
                stuck.join(", ")
            ),
        }
    }
}

/// A counter table states what it counts and the writes that keep it; any other table, for
/// each read counting or summing its rows, the counter table that serves it or why the read
/// scans instead (the counter weighed and rejected, or refused), as the plan recorded it.
fn counters(ctx: &Ctx, t: &DesignTable) -> Item {
    if let Some(c) = &t.counter {
        return counter_table(ctx, t, c);
    }
    let mut figures: Vec<String> = Vec::new();
    let mut ok = true;
    for q in ctx
        .plan
        .design
        .queries
        .iter()
        .filter(|q| q.table.as_deref() == Some(t.name.as_str()) && q.counter.is_none())
        .filter(|q| ctx.pattern(&q.pattern).is_some_and(counts_rows))
    {
        let weighed = q
            .candidates
            .iter()
            .find(|c| c.counter_table() && !c.chosen)
            .and_then(|c| c.reason.as_deref());
        let refused = q
            .notes
            .iter()
            .find_map(|n| n.strip_prefix(remodel_model::NO_COUNTER_NOTE));
        let scanned = q
            .cost
            .as_ref()
            .map(|c| format!(" ({} rows scanned per call)", md::count(c.rows_scanned)))
            .unwrap_or_default();
        match (weighed, refused) {
            (Some(why), _) => figures.push(format!("{} scans{scanned}: {why}", q.pattern)),
            (None, Some(why)) => {
                ok = false;
                figures.push(format!("{} scans{scanned}, no counter: {why}", q.pattern));
            }
            (None, None) => {
                ok = false;
                figures.push(format!("{} scans{scanned}", q.pattern));
            }
        }
    }
    for c in ctx
        .plan
        .design
        .tables
        .iter()
        .filter(|c| c.counter.as_ref().is_some_and(|x| x.counts == t.entity))
    {
        figures.push(format!(
            "its rows are counted by counter table {} (serves {})",
            c.name,
            c.serves.join(", ")
        ));
    }
    Item {
        check: "counters",
        ok,
        figure: if figures.is_empty() {
            "none needed: no read counts or sums its rows".into()
        } else {
            md::text(&figures.join("; "))
        },
    }
}

/// A read whose result counts or sums rows (`count(*)`, `sum(col)`).
fn counts_rows(p: &remodel_model::AccessPattern) -> bool {
    p.kind == StatementKind::Select
        && p.analysis.aggregates.iter().any(|a| {
            a.function.eq_ignore_ascii_case("count") || a.function.eq_ignore_ascii_case("sum")
        })
}

/// The counters item of a counter table: what it keeps and which writes keep it.
fn counter_table(ctx: &Ctx, t: &DesignTable, c: &remodel_model::CounterTable) -> Item {
    let group: Vec<String> = c.group_by.iter().map(ToString::to_string).collect();
    let sums: String = c
        .sums
        .iter()
        .map(|(col, src)| format!(", {col} = sum({src})"))
        .collect();
    let kept: Vec<&str> = ctx
        .plan
        .design
        .writes
        .iter()
        .filter(|w| {
            w.targets
                .iter()
                .any(|x| x.table == t.name && x.counter.is_some())
        })
        .map(|w| w.pattern.as_str())
        .collect();
    Item {
        check: "counters",
        ok: true,
        figure: md::text(&format!(
            "counter table: {} = count(*) of {} per {}{sums}; serves {}; kept by {}",
            c.count_column,
            c.counts,
            group.join(", "),
            t.serves.join(", "),
            if kept.is_empty() {
                "no write (the workload never changes the counted rows)".to_string()
            } else {
                kept.join(", ")
            }
        )),
    }
}

fn consistency(ctx: &Ctx, t: &DesignTable) -> Item {
    let mut reads: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut own: Vec<String> = Vec::new();
    for q in ctx
        .plan
        .design
        .queries
        .iter()
        .filter(|q| q.table.as_deref() == Some(t.name.as_str()))
    {
        if let Some(c) = &q.consistency {
            reads
                .entry(c.level.cql_name().to_string())
                .or_default()
                .push(&q.pattern);
            if !c.read_your_writes.is_empty() {
                own.push(format!(
                    "{} after {}",
                    q.pattern,
                    c.read_your_writes.join(", ")
                ));
            }
        }
    }
    let mut writes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for w in ctx
        .plan
        .design
        .writes
        .iter()
        .filter(|w| w.targets.iter().any(|x| x.table == t.name))
    {
        if let Some(c) = &w.consistency {
            writes
                .entry(c.level.cql_name().to_string())
                .or_default()
                .push(&w.pattern);
        }
    }
    let list = |m: &BTreeMap<String, Vec<&str>>| {
        m.iter()
            .map(|(l, ps)| format!("{l} ({})", ps.join(", ")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let stated = !reads.is_empty() || !writes.is_empty();
    let mut figure = format!(
        "reads {}; writes {}",
        if reads.is_empty() {
            "none".into()
        } else {
            list(&reads)
        },
        if writes.is_empty() {
            "none".into()
        } else {
            list(&writes)
        }
    );
    if !own.is_empty() {
        let _ = write!(figure, "; read your own write: {}", own.join("; "));
    }
    Item {
        check: "consistency",
        ok: stated,
        figure,
    }
}
