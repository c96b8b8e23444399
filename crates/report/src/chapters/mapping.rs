//! Query mapping: every pattern's SQL beside the CQL that replaces it and the generated function
//! that runs it, what each bind marker takes, or the reason it is not one partition, or why it
//! has no mapping.

use super::{binds, pattern_heading, table_link, Ctx, COST, MAPPING, PATTERNS, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::{AccessPattern, QueryMapping};
use std::fmt::Write;

/// Renders `query-mapping.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let mut s = String::from("# Query mapping\n\n");
    let _ = writeln!(
        s,
        "Every statement of the workload, heaviest first: the SQL the application runs today \
         (left) and the CQL that replaces it (right). `?` are bind markers; under each statement, \
         what each takes: `$n` is the SQL statement's parameter, `day(…)` the bucket a value \
         falls in, `cur(t.c)`/`new(t.c)` a column's value before/after a write. Reads that need \
         more than one partition say why.{}\n",
        if ctx.plan.design.cost.is_some() {
            format!(
                " Under each read, the ways the designer weighed to serve it, what each costs \
                 (see [Cost]({COST})) and the one chosen."
            )
        } else {
            String::new()
        }
    );
    for p in &ctx.ranked {
        s.push_str(&pattern_heading(p));
        let _ = writeln!(
            s,
            "{} calls ({}); [analysis]({PATTERNS}#{}).\n",
            md::thousands(p.calls),
            md::percent(ctx.share(p)),
            md::anchor(&p.id)
        );
        if p.kind.is_write() {
            s.push_str(&write_entry(ctx, p));
        } else {
            match ctx.query(&p.id) {
                Some(q) => s.push_str(&read_entry(ctx, p, q)),
                None => s.push_str(&unmapped(p)),
            }
        }
    }
    book.page(MAPPING, "Query mapping", 0, s);
}

/// SQL and CQL side by side (a two-column grid on wide screens, see `report.css`).
fn side_by_side(sql: &str, cql: &str) -> String {
    format!(
        "<div class=\"sbs\">\n\n{}\n{}\n</div>\n\n",
        md::block("sql", sql),
        md::block("sql", cql)
    )
}

fn write_entry(ctx: &Ctx, p: &AccessPattern) -> String {
    let Some(w) = ctx.write(&p.id) else {
        return unmapped(p);
    };
    if w.targets.is_empty() {
        let why = w
            .unsupported
            .as_deref()
            .or(w.note.as_deref())
            .unwrap_or("no designed table holds its data");
        return format!(
            "{}\n{}: {}\n\n{}",
            md::block("sql", &p.sql),
            if w.one_off {
                "One-off statement, no CQL"
            } else {
                "No CQL"
            },
            md::text(why),
            generated(ctx, &p.id, w.function.as_deref())
        );
    }
    let cql: Vec<&str> = w.targets.iter().map(|t| t.cql.as_str()).collect();
    format!(
        "{}{}{} statement(s); what each binds, read-before-write and batching: [write paths]({WRITES}#{}).\n\n",
        side_by_side(&p.sql, &cql.join(";\n")),
        generated(ctx, &p.id, w.function.as_deref()),
        w.targets.len(),
        md::anchor(&p.id)
    )
}

/// The function the generated access layer runs the pattern by: the plan's name for it, and
/// its Python and Java declarations when the caller handed them in.
fn generated(ctx: &Ctx, pattern: &str, name: Option<&str>) -> String {
    let Some(name) = name else {
        return String::new();
    };
    let mut s = format!("Generated function {} (`remodel codegen`)", md::code(name));
    match ctx.input.functions.get(pattern) {
        Some(f) => {
            s.push_str(":\n\n");
            s.push_str(&md::block("python", &f.python));
            s.push('\n');
            s.push_str(&md::block("java", &f.java));
            s.push('\n');
        }
        None => s.push_str(".\n\n"),
    }
    s
}

fn read_entry(ctx: &Ctx, p: &AccessPattern, q: &QueryMapping) -> String {
    let mut s = String::new();
    if q.one_off {
        let _ = writeln!(
            s,
            "{}\nOne-off statement: it shapes no table. {}\n",
            md::block("sql", &p.sql),
            md::text(q.reason.as_deref().unwrap_or(""))
        );
        return s;
    }
    match &q.cql {
        Some(cql) => s.push_str(&side_by_side(&p.sql, cql)),
        None => s.push_str(&md::block("sql", &p.sql)),
    }
    s.push_str(&generated(ctx, &p.id, q.function.as_deref()));
    if let Some(why) = &q.unsupported {
        let _ = writeln!(s, "**Not served**: {}\n", md::text(why));
        return s;
    }
    for w in &q.warnings {
        let _ = writeln!(s, "**Warning** `{}`: {}\n", w.code, md::text(&w.message));
    }
    if !q.binds.is_empty() {
        let _ = writeln!(s, "Binds: {}.\n", binds(&q.binds));
    }
    let served = q
        .table
        .as_deref()
        .map(|t| format!("served by {}", table_link(t, 0)))
        .unwrap_or_else(|| "no table serves it".into());
    if q.single_partition {
        let _ = writeln!(s, "One partition, {served}.\n");
    } else {
        let _ = writeln!(
            s,
            "**Not one partition** ({served}): {}\n",
            md::text(q.reason.as_deref().unwrap_or("no reason recorded"))
        );
    }
    for (i, step) in q.then.iter().enumerate() {
        let _ = writeln!(
            s,
            "Then ({}) read {} for each row{}:\n\n{}\nBinds: {}.\n",
            i + 1,
            table_link(&step.table, 0),
            step.note
                .as_deref()
                .map(|n| format!(" ({})", md::text(n)))
                .unwrap_or_default(),
            md::block("sql", &step.cql),
            binds(&step.binds)
        );
    }
    if let Some(b) = &q.buckets {
        let _ = writeln!(s, "Buckets: {}\n", md::text(b));
    }
    let client: Vec<String> = q
        .client_filters
        .iter()
        .map(|f| format!("filter {}", md::code(f)))
        .chain(q.notes.iter().map(|n| md::text(n)))
        .collect();
    for c in &client {
        let _ = writeln!(s, "- Left to the client: {c}");
    }
    if !client.is_empty() {
        s.push('\n');
    }
    s.push_str(&super::cost::ways_considered(ctx, p, q));
    for sug in ctx
        .plan
        .design
        .suggestions
        .iter()
        .filter(|x| x.pattern == p.id)
    {
        let _ = writeln!(s, "Suggestion: {}\n", md::text(&sug.text));
        if let Some(c) = &sug.cql {
            s.push_str(&md::block("sql", c));
            s.push('\n');
        }
    }
    s
}

fn unmapped(p: &AccessPattern) -> String {
    format!(
        "{}\nNot mapped: {}\n\n",
        md::block("sql", &p.sql),
        md::text(
            p.analysis
                .unmodeled
                .as_deref()
                .or(p.analysis.one_off.as_deref())
                .unwrap_or("the designer produced no mapping for it")
        )
    )
}
