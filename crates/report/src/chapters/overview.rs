//! Overview: what needs a human decision first, then the inputs and the totals.

use super::{
    describe, mapping_link, pattern_link, table_link, Ctx, COST, MAPPING, OVERVIEW, PATTERNS,
    REPLAY, RUN, RUNBOOK, SCHEMA, TABLES, WRITES,
};
use crate::book::Book;
use crate::md;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Renders `overview.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let plan = ctx.plan;
    let d = &plan.design;
    let mut s = String::new();
    let _ = writeln!(s, "# Migration report: {}\n", md::text(&d.keyspace.name));
    let _ = writeln!(
        s,
        "This book explains the query-first Cassandra design `remodel plan` proposes for this \
         application: the relational schema and the queries it really runs, how each query is \
         served, which tables that takes, how writes keep the copies in step, and how to move \
         over. Every number comes from `plan.json`; every decision links to its evidence.\n"
    );
    s.push_str(&decisions(ctx));
    s.push_str(&totals(ctx));
    s.push_str(&inputs(ctx));
    let _ = writeln!(
        s,
        "## How to read this report\n\n\
         - [Source schema]({SCHEMA}): the tables as they are, with declared and inferred foreign keys.\n\
         - [Access patterns]({PATTERNS}): every distinct statement, heaviest first, and where it came from.\n\
         - [Proposed tables]({TABLES}): one page per Cassandra table with its key diagram, CQL and sizes.\n\
         - [Query mapping]({MAPPING}): each SQL statement beside the CQL that replaces it.\n\
         - [Write paths]({WRITES}): what each write must touch and read first.\n\
         {}{}{}\
         - [Cut-over runbook]({RUNBOOK}): the commands to move this application over.",
        if d.cost.is_some() {
            format!(
                "- [Cost]({COST}): the design's reads, writes and bytes beside a normalized \
                 baseline, and how the tables were chosen.\n"
            )
        } else {
            String::new()
        },
        if ctx.input.replay.is_some() {
            format!(
                "- [Replay on the workload]({REPLAY}): the plan's statements run against \
                 generated rows on both sides, per pattern the differences found and the \
                 latency of each side.\n"
            )
        } else {
            String::new()
        },
        if ctx.input.run.is_some() {
            format!(
                "- [Backfill and verification]({RUN}): what the backfill run did per table and \
                 what verification found.\n"
            )
        } else {
            String::new()
        }
    );
    book.page(OVERVIEW, "Overview", 0, s);
}

/// The items a reviewer must decide on, most serious first, each linked to its page.
fn decisions(ctx: &Ctx) -> String {
    // What the backfill run left to do comes first: it is about data already moved.
    let mut items = ctx.input.run.map(super::run::decisions).unwrap_or_default();
    // Then what replay found: reads and writes the plan gets wrong.
    if let Some(replay) = ctx.input.replay {
        items.extend(super::replay::decisions(ctx, replay));
    }
    items.extend(read_items(ctx));
    items.extend(write_items(ctx));
    items.extend(ctx.plan.design.suggestions.iter().map(|sug| {
        format!(
            "Suggested for {}: {}",
            pattern_link(&sug.pattern, 0),
            md::text(&sug.text)
        )
    }));
    let one_off: Vec<String> = ctx
        .ranked
        .iter()
        .filter(|p| p.analysis.one_off.is_some())
        .map(|p| mapping_link(&p.id, 0, &md::text(&p.id)))
        .collect();
    if !one_off.is_empty() {
        items.push(format!(
            "{} statement(s) left out of the design as one-off (a data load, a migration step: \
             too rare to shape a table); check that they are: {}.",
            one_off.len(),
            one_off.join(", ")
        ));
    }
    let mut s = String::from("## Needs a decision\n\n");
    if items.is_empty() {
        s.push_str(
            "Nothing: every read is served from one partition, no table has a size warning and \
             no write needs a read first.\n\n",
        );
    } else {
        let _ = writeln!(
            s,
            "{} item(s), the most serious first. Each needs someone who knows the application to \
             accept it or change the input (statistics, workload, schema) and plan again.\n",
            items.len()
        );
        for (i, item) in items.iter().enumerate() {
            let _ = writeln!(s, "{}. {item}", i + 1);
        }
        s.push('\n');
    }
    s
}

/// Failed checks, statements not analysed, reads not served from one partition, table warnings.
fn read_items(ctx: &Ctx) -> Vec<String> {
    let d = &ctx.plan.design;
    let mut items: Vec<String> = d
        .violations
        .iter()
        .map(|v| {
            format!(
                "**The plan fails check {}**: {} Do not execute it: `remodel backfill` refuses it; \
                 change the input or the design and plan again.",
                md::text(&v.check),
                md::text(&v.message)
            )
        })
        .collect();
    items.extend(selection_item(ctx));
    for p in &ctx.ranked {
        if let Some(why) = &p.analysis.unmodeled {
            items.push(format!(
                "**{} could not be analysed** ({} calls): {}",
                pattern_link(&p.id, 0),
                md::thousands(p.calls),
                md::text(why)
            ));
        }
    }
    for p in ctx.ranked.iter().filter(|p| !p.kind.is_write()) {
        match ctx.query(&p.id) {
            None => items.push(format!(
                "**{} is not served by any table** ({} calls, {}).",
                pattern_link(&p.id, 0),
                md::thousands(p.calls),
                md::percent(ctx.share(p))
            )),
            Some(q) if !q.single_partition && !q.one_off => items.push(format!(
                "**{} reads more than one partition** ({} calls, {}): {}",
                mapping_link(&p.id, 0, &md::text(&p.id)),
                md::thousands(p.calls),
                md::percent(ctx.share(p)),
                md::text(q.reason.as_deref().unwrap_or("no reason recorded"))
            )),
            Some(_) => {}
        }
    }
    for t in &d.tables {
        for w in &t.warnings {
            items.push(format!(
                "**{}** `{}`: {}",
                table_link(&t.name, 0),
                w.code,
                md::text(&w.message)
            ));
        }
    }
    items
}

/// A selection not proven optimal: the greedy fallback, or a solver stopped short.
fn selection_item(ctx: &Ctx) -> Option<String> {
    let sel = &ctx.plan.design.cost.as_ref()?.selection;
    let gap = sel
        .gap
        .map(|g| format!(" (within {} of the best bound)", md::percent(g)));
    if sel.method != "ilp" {
        Some(format!(
            "**The tables were chosen greedily, not proven optimal**{}: {}. See [how the tables \
             were chosen]({COST}#how-the-tables-were-chosen).",
            gap.unwrap_or_default(),
            md::text(sel.note.as_deref().unwrap_or("the program was not solved"))
        ))
    } else {
        gap.map(|g| {
            format!(
                "**The solver stopped at its time limit**{g}: a cheaper choice of tables may \
                 exist. See [how the tables were chosen]({COST}#how-the-tables-were-chosen)."
            )
        })
    }
}

/// Writes that cannot be applied, change nothing, overflow a batch, or must read first.
fn write_items(ctx: &Ctx) -> Vec<String> {
    let mut items = Vec::new();
    for p in ctx.ranked.iter().filter(|p| p.kind.is_write()) {
        let Some(w) = ctx.write(&p.id) else {
            continue;
        };
        let link = mapping_link(&p.id, 0, &md::text(&p.id));
        let calls = md::thousands(p.calls);
        if let Some(why) = &w.unsupported {
            items.push(format!(
                "**{link} cannot be applied by keyed CQL** ({calls} calls): {}",
                md::text(why)
            ));
        } else if w.targets.is_empty() && !w.one_off {
            let why = w
                .note
                .as_deref()
                .unwrap_or("no designed table holds its data");
            items.push(format!(
                "**{link} changes nothing in Cassandra** ({calls} calls): {}",
                md::text(why)
            ));
        } else if !w.fits_batch {
            items.push(format!(
                "**{link} writes {} in one go**, over the 5 KiB batch warning ({} statements).",
                md::bytes(w.batch_bytes as f64),
                w.targets.len()
            ));
        }
        if !w.read_before_write.is_empty() {
            let from: BTreeSet<String> = w
                .read_before_write
                .iter()
                .map(|r| md::code(&r.table))
                .collect();
            items.push(format!(
                "{} must read before it writes ({calls} calls): from {}. See [write paths]({WRITES}#{}).",
                pattern_link(&p.id, 0),
                from.into_iter().collect::<Vec<_>>().join(", "),
                md::anchor(&p.id)
            ));
        }
    }
    items
}

/// Counts and the share of traffic served from one partition.
fn totals(ctx: &Ctx) -> String {
    let plan = ctx.plan;
    let d = &plan.design;
    let reads = plan
        .workload
        .patterns
        .iter()
        .filter(|p| !p.kind.is_write())
        .count();
    let writes = plan.workload.patterns.len() - reads;
    let single = d.queries.iter().filter(|q| q.single_partition).count();
    let (read_calls, single_calls) = ctx.read_calls();
    let write_calls = ctx.total_calls - read_calls;
    let fan_out: u64 = d
        .writes
        .iter()
        .filter_map(|w| {
            ctx.pattern(&w.pattern)
                .map(|p| p.calls * w.targets.len() as u64)
        })
        .sum();
    let mut rows = vec![
        vec!["source tables".into(), plan.schema.tables.len().to_string()],
        vec![
            "access patterns".into(),
            format!(
                "{} ({reads} reads, {writes} writes)",
                plan.workload.patterns.len()
            ),
        ],
        vec![
            "calls in the workload".into(),
            format!(
                "{} ({} reads, {} writes)",
                md::thousands(ctx.total_calls),
                md::thousands(read_calls),
                md::thousands(write_calls)
            ),
        ],
        vec![
            "proposed Cassandra tables".into(),
            format!("{} in keyspace `{}`", d.tables.len(), d.keyspace.name),
        ],
    ];
    if let Some(c) = &d.coverage {
        rows.push(vec![
            "coverage: reads served by a key".into(),
            format!(
                "{} of {} patterns, **{} of the read calls**{}",
                c.reads.served,
                c.reads.patterns,
                md::percent(c.reads.calls_percent() / 100.0),
                gaps_text(c, |g| g.kind == remodel_model::StatementKind::Select)
            ),
        ]);
        rows.push(vec![
            "coverage: writes with a path".into(),
            format!(
                "{} of {} patterns, **{} of the write calls**{}",
                c.writes.served,
                c.writes.patterns,
                md::percent(c.writes.calls_percent() / 100.0),
                gaps_text(c, |g| g.kind != remodel_model::StatementKind::Select)
            ),
        ]);
    }
    rows.extend([
        vec![
            "reads served from one partition".into(),
            format!(
                "{single} of {} patterns, **{} of the read traffic**",
                d.queries.len(),
                md::percent(md::share(single_calls, read_calls))
            ),
        ],
        vec![
            "Cassandra writes per source write".into(),
            if write_calls == 0 {
                "-".into()
            } else {
                format!("{:.2} on average", fan_out as f64 / write_calls as f64)
            },
        ],
    ]);
    rows.extend(cost_rows(ctx));
    rows.push(vec![
        "replication".into(),
        md::code(&d.keyspace.replication.cql_map()),
    ]);
    format!(
        "## Totals\n\n{}\n",
        md::table(&["measure", "this plan"], &rows)
    )
}

/// `; not served: q1 (no_table), q4 (scan)` for the gaps `keep` picks (empty when none).
fn gaps_text(c: &remodel_model::Coverage, keep: impl Fn(&remodel_model::Gap) -> bool) -> String {
    let gaps: Vec<String> = c
        .gaps
        .iter()
        .filter(|g| keep(g))
        .map(|g| format!("{} ({})", g.pattern, g.class.name()))
        .collect();
    if gaps.is_empty() {
        String::new()
    } else {
        format!("; not served: {}", gaps.join(", "))
    }
}

/// The workload's reads and writes per 100 calls on this design, beside the normalized baseline.
fn cost_rows(ctx: &Ctx) -> Vec<Vec<String>> {
    let Some(c) = &ctx.plan.design.cost else {
        return Vec::new();
    };
    let row = |measure: &str, design: f64, baseline: f64| {
        vec![
            format!("{measure} per 100 calls"),
            format!(
                "**{}**; normalized baseline {} ({}, see [Cost]({COST}))",
                md::amount(design),
                md::amount(baseline),
                md::change(design, baseline)
            ),
        ]
    };
    vec![
        row(
            "partition reads",
            c.design.partition_reads,
            c.baseline.partition_reads,
        ),
        row(
            "table writes",
            c.design.table_writes,
            c.baseline.table_writes,
        ),
        row(
            "reads before write",
            c.design.reads_before_write,
            c.baseline.reads_before_write,
        ),
    ]
}

/// The files read, their sizes, and the time span the log covers.
fn inputs(ctx: &Ctx) -> String {
    let plan = ctx.plan;
    let mut s = String::from("## Inputs\n\n");
    let rows = input_rows(plan);
    s.push_str(&md::table(
        &["file", "read as", "size", "statements"],
        &rows,
    ));
    s.push('\n');
    s.push_str(&time_span(plan));
    let skipped: u64 = plan
        .workload
        .skipped
        .iter()
        .chain(&plan.schema.skipped)
        .map(|k| k.count)
        .sum();
    if skipped > 0 {
        let kinds: Vec<String> = plan
            .schema
            .skipped
            .iter()
            .chain(&plan.workload.skipped)
            .map(|k| format!("{} × {}", md::thousands(k.count), md::text(&k.kind)))
            .collect();
        let _ = writeln!(
            s,
            "Read but not used: {} (they do not change the design).\n",
            kinds.join(", ")
        );
    }
    let heaviest: Vec<String> = ctx
        .ranked
        .iter()
        .take(3)
        .map(|p| {
            format!(
                "{} {} ({})",
                pattern_link(&p.id, 0),
                md::text(&describe(p)),
                md::percent(ctx.share(p))
            )
        })
        .collect();
    if !heaviest.is_empty() {
        let _ = writeln!(s, "Heaviest patterns: {}.\n", heaviest.join("; "));
    }
    s
}

/// A row per input: the plan's files (or, for an older plan, the files its locations name) and
/// every workload source not among them.
fn input_rows(plan: &remodel_model::Plan) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    if plan.inputs.is_empty() {
        // Older plans (or plans made by a library call) do not list their files: name those the
        // model's locations and sources point to.
        let schema_files: BTreeSet<&str> = plan
            .schema
            .tables
            .iter()
            .filter_map(|t| t.location.as_ref().map(|l| l.file.as_str()))
            .collect();
        for f in schema_files {
            rows.push(vec![md::code(f), "schema".into(), "-".into(), "-".into()]);
        }
    } else {
        for f in &plan.inputs {
            let statements = plan
                .workload
                .sources
                .iter()
                .find(|w| w.file == f.path)
                .map(|w| format!("{} ({})", md::thousands(w.statements), w.format))
                .unwrap_or_else(|| "-".into());
            rows.push(vec![
                md::code(&f.path),
                md::cell(&f.role),
                md::bytes(f.bytes as f64),
                statements,
            ]);
        }
    }
    for w in &plan.workload.sources {
        if !plan.inputs.iter().any(|f| f.path == w.file) {
            rows.push(vec![
                md::code(&w.file),
                "queries".into(),
                "-".into(),
                format!("{} ({})", md::thousands(w.statements), w.format),
            ]);
        }
    }
    rows
}

/// The span of time the workload covers (or why it has none), as a sentence.
fn time_span(plan: &remodel_model::Plan) -> String {
    let mut s = String::new();
    let first = plan
        .workload
        .patterns
        .iter()
        .filter_map(|p| p.first_seen.as_deref())
        .min();
    let last = plan
        .workload
        .patterns
        .iter()
        .filter_map(|p| p.last_seen.as_deref())
        .max();
    match (first, last) {
        (Some(a), Some(b)) => {
            let _ = writeln!(s, "The log covers {} to {}.\n", md::code(a), md::code(b));
        }
        _ => s.push_str(
            "The workload carries no timestamps (query files and `pg_stat_statements` have none): \
             `calls` are the frequencies written in it.\n\n",
        ),
    }
    s
}
