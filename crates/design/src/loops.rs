//! N+1 loops and transactions (issue 23): what the sessions of the workload make of the design.
//!
//! A loop (read A, then read B once per row of A) becomes one read, "A with B's columns" (the
//! joined read the analyzer built), weighted by A's calls, and B loses the calls the loops made.
//! The designer then serves it like any read with a parent: B's columns copied into A's table
//! when the copies cost less than the lookups they save (the writes of B's columns fan out to
//! every copying row), or B read by key after A's rows when they change too often. Which of the
//! two the cost model chose is read back from the query mapping and stated with its figures.
//!
//! Writes seen together in one transaction become one write group: a logged batch (all or none
//! land, as the transaction did) when its statements are few, else an ordered list.

use crate::assemble::embed::{self, Embedding};
use crate::select::Weights;
use remodel_model::text::thousands;
use remodel_model::{
    AccessPattern, ColumnRef, Design, EqualityOp, FoldedLookup, GroupSend, Loop, LoopChoice,
    LoopCosts, LoopDecision, PatternAnalysis, QueryMapping, Relationship, Schema, StatementKind,
    TransactionGroup, Workload, WriteGroup,
};

/// Most statements a transaction's logged batch holds (more: an ordered list).
const MAX_GROUP_STATEMENTS: usize = 16;

/// The workload with each foldable loop folded: A replaced by its joined read, B's calls in
/// the loops removed (B gone when it ran only in loops); a loop over children folded into A's
/// rows (`children` with an embedding, unless its key is in `skip`) loses B's calls the same
/// way. Returns the loops folded (joined reads' ids and folded children's keys).
pub(crate) fn fold(
    wl: &Workload,
    loops: &[Loop],
    children: &[ChildFold],
    skip: &[String],
) -> (Workload, Vec<String>) {
    let mut out = wl.clone();
    let mut folded: Vec<String> = Vec::new();
    for cf in children.iter().filter(|c| c.embedding.is_some()) {
        let key = cf.key(loops);
        if skip.contains(&key) {
            continue;
        }
        let lp = &loops[cf.loop_index];
        if let Some(b) = out.patterns.iter_mut().find(|p| p.id == lp.child) {
            b.calls = b.calls.saturating_sub(lp.lookups);
        }
        folded.push(key);
    }
    for lp in loops {
        let Some(joined) = &lp.folded else { continue };
        if skip.contains(&joined.id)
            || folded
                .iter()
                .any(|f| f.starts_with(&format!("{}+", lp.parent)))
        {
            continue;
        }
        let Some(ai) = out.patterns.iter().position(|p| p.id == lp.parent) else {
            continue;
        };
        if out.patterns.iter().all(|p| p.id != lp.child) {
            continue;
        }
        let mut j = (**joined).clone();
        j.calls = out.patterns[ai].calls;
        out.patterns[ai] = j;
        if let Some(b) = out.patterns.iter_mut().find(|p| p.id == lp.child) {
            b.calls = b.calls.saturating_sub(lp.lookups);
        }
        folded.push(joined.id.clone());
    }
    out.patterns
        .retain(|p| p.calls > 0 || !loops.iter().any(|l| l.child == p.id));
    (out, folded)
}

/// The joined reads the design could not serve: each is designed again unfolded.
/// A folded loop over children is served when its collection found a host (`hosted`).
pub(crate) fn unserved(design: &Design, folded: &[String], hosted: &[String]) -> Vec<String> {
    folded
        .iter()
        .filter(|id| {
            if id.contains('<') {
                return !hosted.contains(id);
            }
            design
                .queries
                .iter()
                .find(|q| &q.pattern == *id)
                .is_none_or(|q| q.unsupported.is_some() || q.cql.is_none())
        })
        .cloned()
        .collect()
}

/// What the design did with each loop, with the evidence.
pub(crate) fn decisions(
    loops: &[Loop],
    folded: &[String],
    observed: &Workload,
    design: &Design,
) -> Vec<LoopDecision> {
    loops
        .iter()
        .map(|lp| {
            let id = lp.folded.as_ref().map(|p| p.id.clone());
            let mapping = id
                .as_ref()
                .filter(|i| folded.contains(i))
                .and_then(|i| design.queries.iter().find(|q| &q.pattern == i));
            decide(lp, mapping, observed, design)
        })
        .collect()
}

fn decide(
    lp: &Loop,
    mapping: Option<&QueryMapping>,
    observed: &Workload,
    design: &Design,
) -> LoopDecision {
    let copied: Vec<String> = lp
        .folded
        .as_ref()
        .and_then(|_| observed.pattern(&lp.child))
        .map(|b| {
            b.analysis
                .projection
                .iter()
                .map(|c| c.column.clone())
                .collect()
        })
        .unwrap_or_default();
    let writes: u64 = observed
        .patterns
        .iter()
        .filter(|p| {
            p.analysis.write.as_ref().is_some_and(|w| {
                w.table == lp.child_column.table
                    && (p.kind != remodel_model::StatementKind::Update
                        || w.columns_written.iter().any(|c| copied.contains(c)))
            })
        })
        .map(|p| p.calls)
        .sum();
    let parent_calls = observed
        .pattern(&lp.parent)
        .map_or(lp.calls, |p| p.calls)
        .max(1);
    let write_ratio = (writes as f64 / parent_calls as f64 * 1000.0).round() / 1000.0;
    let mut d = LoopDecision {
        parent: lp.parent.clone(),
        child: lp.child.clone(),
        pattern: None,
        choice: LoopChoice::NotFolded,
        calls: lp.calls,
        fan_out_mean: lp.fan_out_mean,
        fan_out_p95: lp.fan_out_p95,
        lookups_after: lp.fan_out_mean,
        write_ratio,
        children_per_row: None,
        costs: None,
        lookup: None,
        evidence: lp.evidence.clone(),
        reason: String::new(),
    };
    let Some(q) = mapping else {
        d.reason = lp.not_folded.clone().unwrap_or_else(|| {
            format!(
                "the joined read of {} and {} could not be served by the design: both kept as they are",
                lp.parent, lp.child
            )
        });
        return d;
    };
    d.pattern = Some(q.pattern.clone());
    let entity = |table: &str| -> String {
        design
            .tables
            .iter()
            .find(|t| t.name == table)
            .map_or(table, |t| t.entity.as_str())
            .to_string()
    };
    let looked_up = q
        .then
        .iter()
        .any(|s| entity(&s.table) == lp.child_column.table);
    let costs = candidate_costs(q);
    if looked_up {
        d.choice = LoopChoice::KeptLookups;
        d.reason = format!(
            "the {} columns {} change {} times ({} per call of {}): copying them into {}'s rows would rewrite every copy on each change, so {} reads them by key after its rows ({} per call, p95 {}){costs}",
            lp.child_column.table,
            copied.join(", "),
            writes,
            write_ratio,
            lp.parent,
            lp.parent,
            q.pattern,
            lp.fan_out_mean,
            lp.fan_out_p95
        );
    } else {
        d.choice = LoopChoice::Folded;
        d.lookups_after = 0.0;
        d.reason = format!(
            "N+1 folded: {} lookups per call of {} (p95 {}) → 0; its table carries the {} columns {} (changed {} times, {} per call of {}){costs}",
            lp.fan_out_mean,
            lp.parent,
            lp.fan_out_p95,
            lp.child_column.table,
            copied.join(", "),
            writes,
            write_ratio,
            lp.parent
        );
    }
    d
}

/// The ways the joined read weighed, as `; costs: chosen …, other …`.
fn candidate_costs(q: &QueryMapping) -> String {
    if q.candidates.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = q
        .candidates
        .iter()
        .map(|c| {
            format!(
                "{}{} {} partition reads per call + {} writes per 100 calls",
                if c.chosen { "chosen: " } else { "" },
                c.kind,
                c.partition_reads,
                c.write_cost
            )
        })
        .collect();
    format!("; costs: {}", parts.join("; "))
}

/// Each transaction's writes as a write group, with how it is sent.
pub(crate) fn write_groups(txs: &[TransactionGroup], design: &Design) -> Vec<WriteGroup> {
    txs.iter()
        .map(|t| {
            let paths: Vec<_> = t
                .writes
                .iter()
                .filter_map(|w| design.writes.iter().find(|p| &p.pattern == w))
                .collect();
            let mut tables: Vec<String> = paths
                .iter()
                .flat_map(|p| p.targets.iter().map(|t| t.table.clone()))
                .collect();
            tables.sort();
            tables.dedup();
            let statements: usize = paths.iter().map(|p| p.targets.len()).sum();
            let reads: usize = paths.iter().map(|p| p.read_before_write.len()).sum();
            let (send, reason) = if statements <= MAX_GROUP_STATEMENTS {
                (
                    GroupSend::LoggedBatch,
                    format!(
                        "written together in {} committed transactions: their {} statements on {} go in one logged batch, so all land or none, as in Postgres{}",
                        t.committed,
                        statements,
                        tables.join(", "),
                        if reads > 0 {
                            format!(" (the {reads} reads before write run first, outside the batch)")
                        } else {
                            String::new()
                        }
                    ),
                )
            } else {
                (
                    GroupSend::Ordered,
                    format!(
                        "written together in {} committed transactions, but {} statements are too many for one logged batch: sent in the transaction's order ({}), each retried until applied",
                        t.committed,
                        statements,
                        t.writes.join(", ")
                    ),
                )
            };
            WriteGroup {
                writes: t.writes.clone(),
                transactions: t.committed,
                send,
                tables,
                reason,
            }
        })
        .collect()
}

impl ChildFold {
    /// How the fold is named in `skip` and among the folded loops.
    pub(crate) fn key(&self, loops: &[Loop]) -> String {
        format!("{}<{}", self.parent, loops[self.loop_index].child)
    }
}

/// A loop over children (B reads the rows of its table that refer to each row of A) and what
/// folding them into A's rows would take and cost.
#[derive(Debug, Clone)]
pub(crate) struct ChildFold {
    /// The loop's index in the analysis' loops.
    pub loop_index: usize,
    /// A's pattern id.
    pub parent: String,
    /// The collection that carries B's rows in A's table (when folding is chosen).
    pub embedding: Option<Embedding>,
    /// B's rows per row of A, where known.
    pub per_row: Option<f64>,
    /// Both ways costed, when both are possible.
    pub costs: Option<LoopCosts>,
    /// Why, in words.
    pub reason: String,
}

/// Why a loop's children stay looked up when their number per parent row is not known bounded.
fn unbounded_reason(lp: &Loop, bounded: Option<bool>, rel: Option<&Relationship>) -> String {
    let (parent, child) = (&lp.parent_column.table, &lp.child_column.table);
    let fk = &lp.child_column.column;
    format!(
        "{} reads the {child} rows of each {parent} row ({} per call of {}, p95 {}), but their number per {parent} row is {}: folding them would grow each row of {}'s table without bound, so the lookups stay (state it with [fanout] \"{child}.{fk}\" = N in --config, or pass --stats)",
        lp.child,
        lp.fan_out_mean,
        lp.parent,
        lp.fan_out_p95,
        match (bounded, rel) {
            (Some(false), Some(r)) => format!("unbounded ({})", r.rationale.rule),
            _ => "not known".to_string(),
        },
        lp.parent
    )
}

/// The child table's columns the loop's lookup reads or orders by, in order, once each.
fn child_columns_read(analysis: &PatternAnalysis, child: &str) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for c in analysis
        .projection
        .iter()
        .chain(analysis.order_by.iter().map(|o| &o.column))
    {
        if c.table == child && !columns.contains(&c.column) {
            columns.push(c.column.clone());
        }
    }
    columns
}

/// The weighted cost of the child table's writes applied to the folded rows (`share`: a pattern's
/// calls per 100 of the workload), and those writes named; `Err` says why one cannot be.
fn folded_writes(
    observed: &Workload,
    lp: &Loop,
    e: &Embedding,
    weights: &Weights,
    share: &dyn Fn(u64) -> f64,
) -> Result<(f64, Vec<String>), String> {
    let child = &lp.child_column.table;
    let mut folded = 0.0;
    let mut writes = Vec::new();
    for w in observed.patterns.iter().filter(|p| {
        p.analysis.write.as_ref().is_some_and(|w| &w.table == child) && p.analysis.one_off.is_none()
    }) {
        let reads = child_write_reads(w, e).map_err(|why| {
            format!(
                "the lookups stay: {} cannot be applied to the {child} rows folded into {}'s rows: {why}",
                w.id, lp.parent
            )
        })?;
        folded += share(w.calls) * (weights.write + weights.read * reads);
        writes.push(format!("{} ({} calls)", w.id, w.calls));
    }
    Ok((folded, writes))
}

/// The loops over children, each decided: folded (B's rows as a map in each row of A's table,
/// the lookups gone, B's writes applied to A's rows) when the children per row are bounded,
/// every write of B names the row of A it belongs to, and the writes cost less than the lookups
/// (by `weights`, per 100 calls of the observed workload); else the lookups stay, with why.
pub(crate) fn children(
    schema: &Schema,
    observed: &Workload,
    loops: &[Loop],
    relationships: &[Relationship],
    weights: &Weights,
) -> Vec<ChildFold> {
    let total = observed
        .patterns
        .iter()
        .map(|p| p.calls as f64)
        .sum::<f64>()
        .max(1.0);
    let share = |calls: u64| calls as f64 * 100.0 / total;
    let mut out = Vec::new();
    for (loop_index, lp) in loops.iter().enumerate() {
        if !refers_to(schema, &lp.child_column, &lp.parent_column) {
            continue;
        }
        let (Some(_), Some(b)) = (observed.pattern(&lp.parent), observed.pattern(&lp.child)) else {
            continue;
        };
        let mut cf = ChildFold {
            loop_index,
            parent: lp.parent.clone(),
            embedding: None,
            per_row: None,
            costs: None,
            reason: String::new(),
        };
        let (parent, child) = (&lp.parent_column.table, &lp.child_column.table);
        let fk = &lp.child_column.column;
        let rel = relationships
            .iter()
            .find(|r| &r.from == parent && &r.to == child && r.columns == [fk.clone()]);
        cf.per_row = rel.and_then(|r| r.rationale.fanout).map(round2);
        let bounded = rel.and_then(|r| r.rationale.bounded);
        if bounded != Some(true) {
            cf.reason = unbounded_reason(lp, bounded, rel);
            out.push(cf);
            continue;
        }
        let columns = child_columns_read(&b.analysis, child);
        let per_row = cf.per_row.unwrap_or(1.0);
        let e = match embed::of_loop(schema, parent, child, fk, &columns, per_row, &[]) {
            Ok(e) => e,
            Err(why) => {
                cf.reason = format!(
                    "{}'s rows cannot be folded into {}'s: {why}",
                    lp.child, lp.parent
                );
                out.push(cf);
                continue;
            }
        };
        let (folded, writes) = match folded_writes(observed, lp, &e, weights, &share) {
            Ok(f) => f,
            Err(why) => {
                cf.reason = why;
                out.push(cf);
                continue;
            }
        };
        let costs = LoopCosts {
            lookups: round2(share(lp.lookups) * weights.read),
            folded: round2(folded),
        };
        cf.costs = Some(costs);
        let figures = format!(
            "keeping the lookups costs {} ({} partition reads of {child} in {} loops), folding costs {} ({}: each a write of {}'s row and a read of the {parent} row first, an UPDATE of part of an entry a read of the entry too), per 100 calls weighted by --objective",
            costs.lookups,
            thousands(lp.lookups),
            thousands(lp.calls),
            costs.folded,
            if writes.is_empty() { "no writes of the rows".to_string() } else { writes.join(", ") },
            lp.parent
        );
        if costs.folded < costs.lookups {
            cf.reason = format!(
                "children folded: {} lookups of {} per call of {} (p95 {}) → 0; each row of {}'s table carries its {child} rows ({per_row} per row, bounded) in `{}`, a map keyed by {} of {}; {figures}",
                lp.fan_out_mean,
                lp.child,
                lp.parent,
                lp.fan_out_p95,
                lp.parent,
                e.column,
                e.map_key.as_ref().map_or("", |(k, _)| k.as_str()),
                e.udt.name
            );
            cf.embedding = Some(e);
        } else {
            cf.reason = format!(
                "the lookups stay: the {child} rows change too often to keep a copy in every row of {}'s table; {figures}",
                lp.parent
            );
        }
        out.push(cf);
    }
    out
}

/// Reads before write a write of the child needs on a host of the folded rows: the parent's
/// row (the rest of the host's key), and for an UPDATE of part of an entry the entry itself.
/// `Err` when the write does not name its parent row by the foreign key.
fn child_write_reads(w: &AccessPattern, e: &Embedding) -> Result<f64, String> {
    let Some(info) = &w.analysis.write else {
        return Ok(0.0);
    };
    let fk = &e.fk[0];
    if w.kind == StatementKind::Insert {
        return if info.columns_written.contains(fk) {
            Ok(1.0)
        } else {
            Err(format!("the INSERT does not give {fk}"))
        };
    }
    let binds_fk = w
        .analysis
        .equality
        .iter()
        .any(|q| q.op == EqualityOp::Eq && q.column.table == e.child && &q.column.column == fk);
    if !binds_fk || info.columns_written.contains(fk) {
        return Err(format!(
            "it does not bind {fk} by `=` (or it changes it), so the row holding the entry is not known by key"
        ));
    }
    let whole = e.fields.iter().all(|f| {
        e.map_key.as_ref().is_some_and(|(k, _)| k == f) || info.columns_written.contains(f)
    });
    Ok(if w.kind == StatementKind::Update && !whole {
        2.0
    } else {
        1.0
    })
}

/// True when `from` is a foreign key to `to` (each row of `to`'s table has rows of `from`'s).
fn refers_to(schema: &Schema, from: &ColumnRef, to: &ColumnRef) -> bool {
    schema.table(&from.table).is_some_and(|t| {
        t.foreign_keys.iter().any(|k| {
            k.ref_table == to.table
                && k.columns == [from.column.clone()]
                && k.ref_columns == [to.column.clone()]
        })
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The decision on a loop over children, from its [`ChildFold`]; `served` tells whether the
/// design carried the fold out.
pub(crate) fn child_decision(
    lp: &Loop,
    cf: &ChildFold,
    served: bool,
    observed: &Workload,
) -> LoopDecision {
    let folded = cf.embedding.is_some() && served;
    // What replay checks the collection against: B's SQL run per row, as the log showed it.
    let lookup = cf
        .embedding
        .as_ref()
        .filter(|_| folded)
        .zip(observed.pattern(&lp.child))
        .map(|(e, b)| FoldedLookup {
            sql: b.sql.clone(),
            param: lp.param,
            parent_column: lp.parent_column.clone(),
            child_column: lp.child_column.clone(),
            column: e.column.clone(),
        });
    LoopDecision {
        parent: lp.parent.clone(),
        child: lp.child.clone(),
        pattern: folded.then(|| lp.parent.clone()),
        choice: if folded {
            LoopChoice::Folded
        } else {
            LoopChoice::KeptLookups
        },
        calls: lp.calls,
        fan_out_mean: lp.fan_out_mean,
        fan_out_p95: lp.fan_out_p95,
        lookups_after: if folded { 0.0 } else { lp.fan_out_mean },
        write_ratio: 0.0,
        children_per_row: cf.per_row,
        costs: cf.costs,
        lookup,
        evidence: lp.evidence.clone(),
        reason: if cf.embedding.is_some() && !served {
            format!(
                "the lookups stay: {} has no table of its own to carry the {} rows ({})",
                lp.parent, lp.child_column.table, cf.reason
            )
        } else {
            cf.reason.clone()
        },
    }
}
