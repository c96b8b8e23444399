//! Cost: what the workload costs on this design beside the normalized baseline, what the copies
//! buy and cost, how the tables were chosen and where `--objective` would lean, and the writes
//! ranked by cost. Also the ways each read could have been served, for the query mapping.

use super::{mapping_link, write_tables, Ctx, COST, OVERVIEW, WRITES};
use crate::book::Book;
use crate::md;
use crate::svg::{self, Pair};
use remodel_model::{AccessPattern, CostFigures, DesignCost, QueryMapping, WritePath};
use std::fmt::Write;

/// The chart's file under `src/`.
const CHART: &str = "img/cost.svg";

/// The weights `--objective` names, as `remodel_design::Weights::named` sets them (a unit test
/// keeps the two equal): name, weight of a partition read, weight of a table write.
const OBJECTIVES: [(&str, f64, f64); 3] = [
    ("reads", 1.0, 0.125),
    ("balanced", 1.0, 0.5),
    ("writes", 1.0, 2.0),
];

/// Differences smaller than this (per 100 calls) are rounding, not a difference.
const EPS: f64 = 0.005;

/// Renders `cost.md` and its chart, when the plan carries `design.cost`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let Some(cost) = &ctx.plan.design.cost else {
        return;
    };
    let mut s = String::from("# Cost\n\n");
    let _ = writeln!(
        s,
        "What the workload costs on this design, per 100 calls of the workload (each statement \
         counted as often as the workload runs it): the partitions its reads touch (a lookup \
         counts each hop), the table writes its writes make, the partitions its writes read \
         first, and the bytes the tables store (one replica). Beside it, the **normalized \
         baseline**: each source table stored once, every read finding its rows in one partition \
         by its own key with joins done as extra reads, every write one statement. The baseline \
         is a yardstick, not a plan Cassandra could run: a table read by two keys needs a second \
         table or an index, which it does not count, so its writes are a floor.\n"
    );
    if !ctx.plan.design.violations.is_empty() {
        let _ = writeln!(
            s,
            "**The plan fails {} check(s)** (see the [overview]({OVERVIEW})): these are the costs \
             of a plan that must not run as it is.\n",
            ctx.plan.design.violations.len()
        );
    }
    s.push_str(&figures(cost));
    book.asset(CHART, chart(cost));
    s.push_str(&trade(ctx, cost));
    s.push_str(&selection(ctx, cost));
    s.push_str(&write_costs(ctx));
    book.page(COST, "Cost", 0, s);
}

/// The four measures as label, design figure, baseline figure and how to write them.
fn measures(c: &DesignCost) -> [Pair; 4] {
    let pair = |label: &str, f: fn(&CostFigures) -> f64, unit: fn(f64) -> String| Pair {
        label: label.into(),
        design: f(&c.design),
        baseline: f(&c.baseline),
        unit,
    };
    [
        pair(
            "partition reads per 100 calls",
            |f| f.partition_reads,
            md::amount,
        ),
        pair("table writes per 100 calls", |f| f.table_writes, md::amount),
        pair(
            "reads before write per 100 calls",
            |f| f.reads_before_write,
            md::amount,
        ),
        pair("stored (one replica)", |f| f.stored_bytes, md::bytes),
    ]
}

/// The design beside the baseline, as a table and a picture.
fn figures(c: &DesignCost) -> String {
    let mut all = measures(c).to_vec();
    // What the reads touch beyond partitions, and what the writes send (the chart keeps the four
    // measures above; these are the terms the objective adds).
    let term = |label: &str, f: fn(&CostFigures) -> f64, unit: fn(f64) -> String| Pair {
        label: label.into(),
        design: f(&c.design),
        baseline: f(&c.baseline),
        unit,
    };
    all.push(term(
        "rows scanned per 100 calls",
        |f| f.rows_scanned,
        md::amount,
    ));
    all.push(term(
        "bytes returned per 100 calls",
        |f| f.bytes_returned,
        md::bytes,
    ));
    all.push(term(
        "bytes written per 100 calls",
        |f| f.bytes_written,
        md::bytes,
    ));
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|m| {
            vec![
                m.label.clone(),
                format!("**{}**", (m.unit)(m.design)),
                (m.unit)(m.baseline),
                md::change(m.design, m.baseline),
            ]
        })
        .collect();
    format!(
        "## This design and the baseline\n\n{}\n![This design beside the normalized baseline: \
         reads, writes, reads before write per 100 calls, bytes stored]({CHART})\n\n",
        md::table(
            &["measure", "this design", "normalized baseline", "change"],
            &rows
        )
    )
}

fn chart(c: &DesignCost) -> String {
    svg::compare_chart("This design beside the normalized baseline", &measures(c))
}

/// What the copies buy and cost, in sentences made from the figures.
fn trade(ctx: &Ctx, c: &DesignCost) -> String {
    let mut s = format!(
        "## What the copies buy and cost\n\n{}",
        against_baseline(&c.design, &c.baseline)
    );
    for more in [heaviest_write(ctx), lookups_chosen(ctx)]
        .into_iter()
        .flatten()
    {
        s.push(' ');
        s.push_str(&more);
    }
    s.push_str("\n\n");
    s
}

/// One sentence: the design's reads, table writes, reads before write and bytes against the
/// baseline's.
fn against_baseline(d: &CostFigures, b: &CostFigures) -> String {
    let read_part = match differs(d.partition_reads, b.partition_reads, md::amount, "fewer") {
        Some((by, change)) => {
            format!("This design reads {by} partitions per 100 calls than the baseline ({change})")
        }
        None => "This design reads as many partitions as the baseline".into(),
    };
    // Fewer reads bought with more writes is the trade denormalization makes: say it as one.
    let trade =
        d.partition_reads < b.partition_reads - EPS && d.table_writes > b.table_writes + EPS;
    let write_part = match differs(d.table_writes, b.table_writes, md::amount, "fewer") {
        Some((by, change)) => format!(
            "{} {by} table writes ({change})",
            if trade { "for" } else { "and makes" }
        ),
        None => "and makes as many table writes".into(),
    };
    let first = match differs(
        d.reads_before_write,
        b.reads_before_write,
        md::amount,
        "fewer",
    ) {
        Some((by, change)) => format!(", and its writes read {by} partitions first ({change})"),
        None if d.reads_before_write > EPS => {
            ", and its writes read as many partitions first".into()
        }
        None => String::new(),
    };
    let store = match differs(d.stored_bytes, b.stored_bytes, md::bytes, "less") {
        Some((by, change)) => format!("{by} ({change})"),
        None => "as much".into(),
    };
    format!("{read_part} {write_part}{first}; it stores {store}.")
}

/// `7.01 fewer` and `-7.9%` when `now` differs from `before` by more than rounding.
fn differs(now: f64, before: f64, unit: fn(f64) -> String, less: &str) -> Option<(String, String)> {
    let by = now - before;
    (by.abs() > EPS).then(|| {
        (
            format!(
                "{} {}",
                unit(by.abs()),
                if by > 0.0 { "more" } else { less }
            ),
            md::change(now, before),
        )
    })
}

/// Calls per 100 calls of the workload.
fn per_100(ctx: &Ctx, p: &AccessPattern) -> f64 {
    ctx.share(p) * 100.0
}

/// What a write costs per 100 calls of the workload.
#[derive(Clone, Copy)]
struct WriteCost {
    /// Table writes.
    writes: f64,
    /// Partitions read before writing.
    reads_first: f64,
    /// Both at the plan's weights (a read before write weighs as a partition read).
    weighted: f64,
}

fn write_cost(ctx: &Ctx, p: &AccessPattern, w: &WritePath) -> WriteCost {
    let (read, write) = weights(ctx);
    let n = per_100(ctx, p);
    let (writes, reads_first) = (n * w.table_writes, n * w.reads_before_write);
    WriteCost {
        writes,
        reads_first,
        weighted: write * writes + read * reads_first,
    }
}

/// The writes that cost anything, heaviest first at the plan's weights (ties in the order of
/// calls).
fn ranked_writes<'a>(ctx: &Ctx<'a>) -> Vec<(&'a AccessPattern, &'a WritePath)> {
    let mut writes: Vec<(&AccessPattern, &WritePath)> = ctx
        .ranked
        .iter()
        .filter(|p| p.kind.is_write())
        .filter_map(|p| ctx.write(&p.id).map(|w| (*p, w)))
        .filter(|(_, w)| !w.one_off)
        .collect();
    // A stable sort: equal costs keep the order of calls.
    writes.sort_by(|a, b| {
        let cost = |(p, w): &(&AccessPattern, &WritePath)| write_cost(ctx, p, w).weighted;
        cost(b).total_cmp(&cost(a))
    });
    writes
}

/// Sums of the writes' costs.
fn write_totals(ctx: &Ctx, writes: &[(&AccessPattern, &WritePath)]) -> WriteCost {
    writes.iter().map(|(p, w)| write_cost(ctx, p, w)).fold(
        WriteCost {
            writes: 0.0,
            reads_first: 0.0,
            weighted: 0.0,
        },
        |a, c| WriteCost {
            writes: a.writes + c.writes,
            reads_first: a.reads_first + c.reads_first,
            weighted: a.weighted + c.weighted,
        },
    )
}

/// The write that makes most of the writes' cost, in a sentence.
fn heaviest_write(ctx: &Ctx) -> Option<String> {
    let writes = ranked_writes(ctx);
    let total = write_totals(ctx, &writes);
    let (p, w) = writes.first()?;
    let cost = write_cost(ctx, p, w);
    if cost.weighted <= EPS {
        return None;
    }
    let tables: Vec<String> = write_tables(w).into_iter().map(md::code).collect();
    let first = if cost.reads_first > EPS {
        format!(
            " and {} of the {} partitions read first",
            md::amount(cost.reads_first),
            md::amount(total.reads_first)
        )
    } else {
        String::new()
    };
    Some(format!(
        "[{}]({WRITES}#{}) ({} of the calls) makes {} of the writes' cost: {} of the {} table \
         writes per 100 calls{first}, {} per call{}{}.",
        md::text(&p.id),
        md::anchor(&p.id),
        md::percent(ctx.share(p)),
        if cost.weighted * 2.0 > total.weighted {
            "most"
        } else {
            "the largest part"
        },
        md::amount(cost.writes),
        md::amount(total.writes),
        plural(w.table_writes, "table write"),
        if tables.is_empty() {
            String::new()
        } else {
            format!(" to {}", tables.join(", "))
        },
        if w.reads_before_write > 0.0 {
            format!(" after {} read first", partitions(w.reads_before_write))
        } else {
            String::new()
        }
    ))
}

/// `1 partition`, `11 partitions`.
fn partitions(n: f64) -> String {
    plural(n, "partition")
}

/// `1 table write`, `2.5 table writes`.
fn plural(n: f64, noun: &str) -> String {
    format!(
        "{} {noun}{}",
        md::amount(n),
        if n == 1.0 { "" } else { "s" }
    )
}

/// The reads whose chosen way reads more partitions than another would: lookups that spare
/// copies.
fn lookups_chosen(ctx: &Ctx) -> Option<String> {
    let items: Vec<String> = ctx
        .ranked
        .iter()
        .filter_map(|p| {
            let q = ctx.query(&p.id)?;
            let c = q.candidates.iter().find(|c| c.chosen)?;
            let fewest = q
                .candidates
                .iter()
                .map(|x| x.partition_reads)
                .fold(f64::INFINITY, f64::min);
            (c.partition_reads > fewest).then(|| {
                format!(
                    "{} (*{}*, {} per call instead of {})",
                    mapping_link(&p.id, 0, &md::text(&p.id)),
                    md::text(&c.kind),
                    partitions(c.partition_reads),
                    md::amount(fewest)
                )
            })
        })
        .collect();
    (!items.is_empty()).then(|| {
        format!(
            "Reads that take more partitions than they could, to spare writes: {}.",
            items.join(", ")
        )
    })
}

/// The plan's weights of a partition read and of a write (1 and 1 when the plan has none).
fn weights(ctx: &Ctx) -> (f64, f64) {
    ctx.plan
        .design
        .cost
        .as_ref()
        .map(|c| (c.selection.weights.0, c.selection.weights.1))
        .unwrap_or((1.0, 1.0))
}

/// How the selection ran, with what weights, and what the other objectives would change.
fn selection(ctx: &Ctx, c: &DesignCost) -> String {
    let sel = &c.selection;
    let mut s = String::from("## How the tables were chosen\n\n");
    let size = format!(
        "{} variables and {} constraints",
        sel.variables, sel.constraints
    );
    let gap = sel
        .gap
        .map(|g| format!(" within {} of the best bound", md::percent(g)));
    if sel.method == "ilp" {
        let _ = writeln!(
            s,
            "An integer program chose them, as NoSE does: a yes-or-no variable per way of serving \
             a read and per table, every read served by exactly one way, the weighted cost of the \
             whole workload as small as it can be ({size}). {}\n",
            match &gap {
                Some(g) => format!("The solver stopped at its time limit{g}."),
                None => "The solver proved the choice optimal.".into(),
            }
        );
    } else {
        let _ = writeln!(
            s,
            "A greedy pass chose them ({}): reads in order of calls, each taking the way that adds \
             the least to what is already chosen. It is not proven optimal{}. The integer program \
             would have had {size}.\n",
            md::text(sel.note.as_deref().unwrap_or("the program was not solved")),
            gap.unwrap_or_default()
        );
    }
    let (read, write, storage) = sel.weights;
    let name = OBJECTIVES
        .iter()
        .find(|(_, r, w)| *r == read && *w == write)
        .map(|(n, _, _)| format!("`--objective {n}`"))
        .unwrap_or_else(|| "weights set in the configuration".into());
    // Said from the presets themselves, so the text follows them.
    let presets: Vec<String> = OBJECTIVES
        .iter()
        .map(|(n, r, w)| format!("`{n}` {}", weight(w / r)))
        .collect();
    let _ = writeln!(
        s,
        "The cost weighs a partition read {} (a read before write is one), a table write {}, and \
         a GiB stored {} ({name}). Each `--objective` sets what a table write weighs against a \
         partition read: {} (the default is `balanced`); the dearer a write, the fewer copies and \
         the more lookups.\n",
        weight(read),
        weight(write),
        weight(storage),
        presets.join(", ")
    );
    s.push_str(&lean(ctx));
    s
}

/// Per objective, the reads that would lean another way: whose cheapest way, one read at a time,
/// is another at the objective's weights than at the plan's (a way can be cheapest alone and
/// still lose in the whole program, so the plan's own weights are the reference, not the choice).
fn lean(ctx: &Ctx) -> String {
    let current = weights(ctx);
    let rows: Vec<Vec<String>> = OBJECTIVES
        .iter()
        .map(|&(name, read, write)| {
            let changes = if (read, write) == current {
                "this plan's objective".to_string()
            } else {
                let items: Vec<String> = ctx
                    .ranked
                    .iter()
                    .filter_map(|p| leans(ctx, p, current, (read, write)))
                    .collect();
                if items.is_empty() {
                    "none".into()
                } else {
                    items.join("; ")
                }
            };
            vec![
                format!("`{name}`"),
                format!("{}, {}", weight(read), weight(write)),
                changes,
            ]
        })
        .collect();
    format!(
        "What each objective would change, one read at a time: a read leans another way when, at \
         the objective's weights, another of its ways costs least (the ways and their costs are \
         in the [query mapping]({}), the change is against the way chosen). The selection weighs \
         the whole workload at once, so plan again with the objective to see its full effect.\n\n{}\n",
        super::MAPPING,
        md::table(
            &[
                "objective",
                "weights (read, write)",
                "reads that would lean another way"
            ],
            &rows
        )
    )
}

/// `q11 → *own table* (-4.22 partition reads, +14.77 table writes per 100 calls)` when the read's
/// cheapest way at `to` weights is another than at `from` weights.
fn leans(ctx: &Ctx, p: &AccessPattern, from: (f64, f64), to: (f64, f64)) -> Option<String> {
    let q = ctx.query(&p.id)?;
    let ways = ways(ctx, p, q);
    let (before, after) = (cheapest(&ways, from)?, cheapest(&ways, to)?);
    if before == after {
        return None;
    }
    let chosen = ways.iter().find(|w| w.chosen)?;
    let signed = |x: f64| {
        if x > 0.0 {
            format!("+{}", md::amount(x))
        } else {
            md::amount(x)
        }
    };
    let w = &ways[after];
    Some(format!(
        "{} → *{}* ({} partition reads, {} table writes per 100 calls)",
        mapping_link(&p.id, 0, &md::text(&p.id)),
        md::text(&label(&ways, after)),
        signed(w.all_reads() - chosen.all_reads()),
        signed(w.writes - chosen.writes)
    ))
}

/// Each write's cost: its table writes and reads before write per 100 calls, and both weighted,
/// heaviest first.
fn write_costs(ctx: &Ctx) -> String {
    let writes = ranked_writes(ctx);
    let mut s = String::from("## Writes by cost\n\n");
    if writes.is_empty() {
        s.push_str("The workload has no write statement that shapes the design.\n\n");
        return s;
    }
    let total = write_totals(ctx, &writes);
    let (read, write) = weights(ctx);
    let _ = writeln!(
        s,
        "Each write of the application, by what it costs this design: per call, the table writes \
         it makes and the partitions it reads first; per 100 calls of the workload, the same \
         times its calls; weighted as the selection weighs them (a table write {}, a partition \
         read first {}). A statement run once per row of a read counts the rows that read \
         returns on average. The [write paths]({WRITES}) show the statements.\n",
        weight(write),
        weight(read)
    );
    let share = |x: f64| {
        md::percent(if total.weighted > 0.0 {
            x / total.weighted
        } else {
            0.0
        })
    };
    let mut rows: Vec<Vec<String>> = writes
        .iter()
        .map(|(p, w)| {
            let cost = write_cost(ctx, p, w);
            let unsupported = w.unsupported.is_some();
            vec![
                format!("[{}]({WRITES}#{})", md::text(&p.id), md::anchor(&p.id)),
                super::kind(p).into(),
                md::thousands(p.calls),
                md::amount(w.table_writes),
                md::amount(w.reads_before_write),
                md::amount(cost.writes),
                md::amount(cost.reads_first),
                if unsupported {
                    "**cannot be applied**: not counted".into()
                } else {
                    format!("**{}**", md::amount(cost.weighted))
                },
                share(cost.weighted),
            ]
        })
        .collect();
    rows.push(vec![
        "all writes".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        md::amount(total.writes),
        md::amount(total.reads_first),
        format!("**{}**", md::amount(total.weighted)),
        share(total.weighted),
    ]);
    s.push_str(&md::table(
        &[
            "write",
            "kind",
            "calls",
            "table writes per call",
            "reads first per call",
            "table writes per 100 calls",
            "reads first per 100 calls",
            "weighted",
            "share",
        ],
        &rows,
    ));
    s.push('\n');
    s
}

/// A weight as configured: exact up to three decimals (`0.125`), else rounded.
fn weight(x: f64) -> String {
    if ((x * 1000.0).round() / 1000.0 - x).abs() < 1e-12 && x.abs() < 1e6 {
        format!("{x}")
    } else {
        md::amount(x)
    }
}

/// One way of serving a read with its costs per 100 calls of the workload.
struct Way<'a> {
    kind: &'a str,
    table: &'a str,
    /// Partitions per call of the read.
    per_call: f64,
    /// Partitions the read touches, per 100 calls.
    reads: f64,
    /// Partitions the writes read first to keep its tables in step, per 100 calls.
    reads_first: f64,
    /// Table writes that keep its tables in step, per 100 calls.
    writes: f64,
    chosen: bool,
    /// Rows the read scans per call.
    rows_per_call: f64,
    /// The weighted rows scanned and KiB returned, per 100 calls (the objective's other terms).
    extra: f64,
    /// Why it was chosen or not, when the designer said (a counter table against scanning).
    reason: Option<&'a str>,
}

impl Way<'_> {
    /// Every partition read it costs: the read's own and those its writes make first (the
    /// objective weighs both as reads).
    fn all_reads(&self) -> f64 {
        self.reads + self.reads_first
    }

    fn weighted(&self, (read, write): (f64, f64)) -> f64 {
        read * self.all_reads() + write * self.writes + self.extra
    }
}

fn ways<'a>(ctx: &Ctx, p: &AccessPattern, q: &'a QueryMapping) -> Vec<Way<'a>> {
    let (row, kib, _) = ctx
        .plan
        .design
        .cost
        .as_ref()
        .and_then(|c| c.selection.term_weights)
        .unwrap_or((0.0, 0.0, 0.0));
    q.candidates
        .iter()
        .map(|c| Way {
            rows_per_call: c.rows_scanned,
            extra: per_100(ctx, p) * (row * c.rows_scanned + kib * c.bytes_returned / 1024.0),
            reason: c.reason.as_deref(),
            kind: &c.kind,
            table: &c.table,
            per_call: c.partition_reads,
            reads: per_100(ctx, p) * c.partition_reads,
            reads_first: c.reads_before_write,
            writes: (c.write_cost - c.reads_before_write).max(0.0),
            chosen: c.chosen,
        })
        .collect()
}

/// The way cheapest at these weights; the chosen one among equals.
fn cheapest(ways: &[Way], w: (f64, f64)) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, x) in ways.iter().enumerate() {
        let better = match best {
            None => true,
            Some(b) => {
                let (cx, cb) = (x.weighted(w), ways[b].weighted(w));
                cx < cb - EPS || (cx <= cb + EPS && x.chosen)
            }
        };
        if better {
            best = Some(i);
        }
    }
    best
}

/// A way's name: its kind, and its table when another way has the same kind.
fn label(ways: &[Way], i: usize) -> String {
    let w = &ways[i];
    if ways.iter().filter(|x| x.kind == w.kind).count() > 1 {
        format!("{} of {}", w.kind, w.table)
    } else {
        w.kind.to_string()
    }
}

/// The ways a read could have been served, with their costs and the chosen one marked, and why
/// it won (for the query mapping). Empty for a plan without them.
pub(super) fn ways_considered(ctx: &Ctx, p: &AccessPattern, q: &QueryMapping) -> String {
    let ways = ways(ctx, p, q);
    let weights = weights(ctx);
    match ways.as_slice() {
        [] => String::new(),
        [only] => format!(
            "One way considered: *{}* of {}, {} per call; keeping it in step takes {} table \
             writes{} per 100 calls.\n\n",
            md::text(only.kind),
            md::code(only.table),
            partitions(only.per_call),
            md::amount(only.writes),
            if only.reads_first > EPS {
                format!(
                    " and {} partitions read first",
                    md::amount(only.reads_first)
                )
            } else {
                String::new()
            }
        ),
        _ => {
            let rows: Vec<Vec<String>> = ways
                .iter()
                .map(|w| {
                    let weighted = md::amount(w.weighted(weights));
                    vec![
                        if w.chosen {
                            format!("**{} (chosen)**", md::cell(w.kind))
                        } else {
                            md::cell(w.kind)
                        },
                        md::code(w.table),
                        md::amount(w.per_call),
                        md::amount(w.rows_per_call),
                        md::amount(w.reads),
                        md::amount(w.reads_first),
                        md::amount(w.writes),
                        if w.chosen {
                            format!("**{weighted}**")
                        } else {
                            weighted
                        },
                    ]
                })
                .collect();
            format!(
                "Ways considered (per 100 calls of the workload; weighted: a partition read {}, \
                 reads before write included, a table write {}, plus the rows scanned and bytes \
                 returned at their weights):\n\n{}\n{}\n\n{}",
                weight(weights.0),
                weight(weights.1),
                md::table(
                    &[
                        "way",
                        "first table",
                        "partitions per call",
                        "rows scanned per call",
                        "partition reads",
                        "reads before write",
                        "table writes",
                        "weighted",
                    ],
                    &rows
                ),
                why(&ways, weights),
                reasons(&ways)
            )
        }
    }
}

/// The designer's own reasons (a counter table chosen or rejected, with the costs compared).
fn reasons(ways: &[Way]) -> String {
    ways.iter()
        .filter_map(|w| w.reason)
        .map(|r| format!("{}\n\n", md::text(r)))
        .collect()
}

/// Why the chosen way won, against each other way, from the numbers.
fn why(ways: &[Way], weights: (f64, f64)) -> String {
    let Some(ci) = ways.iter().position(|w| w.chosen) else {
        return "None was chosen: the read is not served.".into();
    };
    // Name the reads before write in the sums only where there are any.
    let reads = if ways.iter().any(|w| w.reads_first > EPS) {
        "partition reads (reads before write included)"
    } else {
        "partition reads"
    };
    let parts: Vec<String> = ways
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != ci)
        .map(|(i, a)| {
            let name = format!("*{}*", md::text(&label(ways, i)));
            let mut t = compare(&name, a, &ways[ci], weights, reads);
            if a.weighted(weights) < ways[ci].weighted(weights) - EPS {
                t.push_str(
                    "; alone it is cheaper, but the selection weighs the whole workload: writes \
                     to a table other reads need anyway cost this read nothing, and storage counts \
                     too",
                );
            }
            t
        })
        .collect();
    format!(
        "Chosen: *{}*. {}.",
        md::text(&label(ways, ci)),
        parts.join("; ")
    )
}

/// Way `a` against the chosen way `c`: what it would save and spend, and at what weights it
/// would win.
fn compare(name: &str, a: &Way, c: &Way, weights: (f64, f64), reads: &str) -> String {
    let (dr, dw) = (a.all_reads() - c.all_reads(), a.writes - c.writes);
    let writes_too = |dw: f64| {
        if dw > EPS {
            format!("{} more table writes per 100 calls", md::amount(dw))
        } else {
            "no fewer table writes".into()
        }
    };
    if dr.abs() <= EPS && dw.abs() <= EPS {
        format!("{name} costs the same")
    } else if dr.abs() <= EPS {
        format!("{name} reads as much and makes {}", writes_too(dw))
    } else if dr > 0.0 && dw >= -EPS {
        if a.per_call > c.per_call {
            format!(
                "{name} reads {} per call instead of {} and makes {}",
                partitions(a.per_call),
                md::amount(c.per_call),
                writes_too(dw)
            )
        } else if dw > EPS {
            format!(
                "{name} makes {} more {reads} and {} more table writes per 100 calls",
                md::amount(dr),
                md::amount(dw)
            )
        } else {
            format!(
                "{name} makes {} more {reads} per 100 calls and no fewer table writes",
                md::amount(dr)
            )
        }
    } else if dr > 0.0 {
        format!(
            "{name} would save {} table writes per 100 calls for {} more {reads}: it wins only \
             where a table write weighs more than {} partition reads (here {})",
            md::amount(-dw),
            md::amount(dr),
            md::amount(dr / -dw),
            weight(weights.1 / weights.0)
        )
    } else if dw > EPS {
        format!(
            "{name} would save {} {reads} per 100 calls for {} more table writes: it wins only \
             where a partition read weighs more than {} table writes (here {})",
            md::amount(-dr),
            md::amount(dw),
            md::amount(dw / -dr),
            weight(weights.0 / weights.1)
        )
    } else {
        format!("{name} reads and writes no more")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_are_the_designers() {
        for (name, read, write) in OBJECTIVES {
            let w = remodel_design::Weights::named(name).expect("a named objective");
            assert_eq!((w.read, w.write), (read, write), "{name}");
        }
    }

    fn way(
        kind: &'static str,
        per_call: f64,
        (reads, reads_first): (f64, f64),
        writes: f64,
        chosen: bool,
    ) -> Way<'static> {
        Way {
            kind,
            table: "t",
            per_call,
            reads,
            reads_first,
            writes,
            chosen,
            rows_per_call: 0.0,
            extra: 0.0,
            reason: None,
        }
    }

    #[test]
    fn why_names_the_trade_and_where_it_would_flip() {
        let ways = [
            way("own table", 1.0, (7.6, 0.0), 428.2, false),
            way(
                "own table, parents read by key",
                5.0,
                (38.2, 0.0),
                61.1,
                true,
            ),
        ];
        assert_eq!(
            why(&ways, (1.0, 1.0)),
            "Chosen: *own table, parents read by key*. *own table* would save 30.6 partition \
             reads per 100 calls for 367 more table writes: it wins only where a partition read \
             weighs more than 12 table writes (here 1)."
        );
        assert_eq!(cheapest(&ways, (1.0, 1.0)), Some(1));
        assert_eq!(cheapest(&ways, (20.0, 1.0)), Some(0));
        let dominated = [
            way("own table", 1.0, (56.1, 0.0), 18.7, true),
            way("index table + row lookup", 11.0, (617.3, 0.0), 18.7, false),
        ];
        assert_eq!(
            why(&dominated, (1.0, 1.0)),
            "Chosen: *own table*. *index table + row lookup* reads 11 partitions per call \
             instead of 1 and makes no fewer table writes."
        );
    }

    #[test]
    fn reads_before_write_weigh_as_reads_and_are_named() {
        // The copy saves 40 partition reads of the read itself but its writes read 30
        // partitions first: 10 net, against 20 more table writes.
        let ways = [
            way("copy", 1.0, (10.0, 30.0), 40.0, false),
            way("lookup", 3.0, (50.0, 0.0), 20.0, true),
        ];
        assert!((ways[0].weighted((1.0, 0.5)) - 60.0).abs() < 1e-9);
        assert_eq!(
            why(&ways, (1.0, 1.0)),
            "Chosen: *lookup*. *copy* would save 10 partition reads (reads before write \
             included) per 100 calls for 20 more table writes: it wins only where a partition \
             read weighs more than 2 table writes (here 1)."
        );
        assert_eq!(cheapest(&ways, (1.0, 0.25)), Some(0));
        // One partition per call either way, but the copy's writes read first and write more.
        let dearer = [
            way("index", 1.0, (5.0, 0.0), 3.0, true),
            way("own table", 1.0, (1.0, 6.0), 6.1, false),
        ];
        assert_eq!(
            why(&dearer, (1.0, 0.125)),
            "Chosen: *index*. *own table* makes 2 more partition reads (reads before write \
             included) and 3.1 more table writes per 100 calls."
        );
    }

    #[test]
    fn why_says_when_the_choice_is_not_the_cheapest_alone() {
        let ways = [
            way("reuse", 2.0, (4.0, 0.0), 10.0, true),
            way("own table", 1.0, (2.0, 0.0), 10.0, false),
        ];
        let text = why(&ways, (1.0, 1.0));
        assert!(
            text.contains("*own table* reads and writes no more; alone it is cheaper"),
            "{text}"
        );
    }
}
