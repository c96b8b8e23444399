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

use remodel_model::{
    Design, GroupSend, Loop, LoopChoice, LoopDecision, QueryMapping, TransactionGroup, Workload,
    WriteGroup,
};

/// Most statements a transaction's logged batch holds (more: an ordered list).
const MAX_GROUP_STATEMENTS: usize = 16;

/// The workload with each foldable loop folded: A replaced by its joined read, B's calls in
/// the loops removed (B gone when it ran only in loops). Returns the loops folded.
pub(crate) fn fold(wl: &Workload, loops: &[Loop], skip: &[String]) -> (Workload, Vec<String>) {
    let mut out = wl.clone();
    let mut folded: Vec<String> = Vec::new();
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
pub(crate) fn unserved(design: &Design, folded: &[String]) -> Vec<String> {
    folded
        .iter()
        .filter(|id| {
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
