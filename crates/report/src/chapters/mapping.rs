//! Query mapping: every pattern's SQL beside the CQL that replaces it, or the reason it is not one
//! partition, or why it has no mapping.

use super::{pattern_heading, table_link, Ctx, MAPPING, PATTERNS, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::AccessPattern;
use std::fmt::Write;

/// Renders `query-mapping.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let mut s = String::from("# Query mapping\n\n");
    let _ = writeln!(
        s,
        "Every statement of the workload, heaviest first: the SQL the application runs today \
         (left) and the CQL that replaces it (right). `?` are bind markers; the application binds \
         the same values it binds today. Reads that need more than one partition say why.\n"
    );
    for p in &ctx.ranked {
        s.push_str(&entry(ctx, p));
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

fn entry(ctx: &Ctx, p: &AccessPattern) -> String {
    let mut s = pattern_heading(p);
    let _ = writeln!(
        s,
        "{} calls ({}); [analysis]({PATTERNS}#{}).\n",
        md::thousands(p.calls),
        md::percent(ctx.share(p)),
        md::anchor(&p.id)
    );
    if p.kind.is_write() {
        match ctx.write(&p.id) {
            Some(w) if !w.targets.is_empty() => {
                let cql: Vec<&str> = w.targets.iter().map(|t| t.cql.as_str()).collect();
                s.push_str(&side_by_side(&p.sql, &cql.join(";\n")));
                let _ = writeln!(
                    s,
                    "{} statement(s); read-before-write, batching: [write paths]({WRITES}#{}).\n",
                    w.targets.len(),
                    md::anchor(&p.id)
                );
            }
            Some(w) => {
                s.push_str(&md::block("sql", &p.sql));
                let _ = writeln!(
                    s,
                    "\nNo CQL: {}\n",
                    md::text(
                        w.note
                            .as_deref()
                            .unwrap_or("no designed table holds its data")
                    )
                );
            }
            None => s.push_str(&unmapped(p)),
        }
        return s;
    }
    let Some(q) = ctx.query(&p.id) else {
        s.push_str(&unmapped(p));
        return s;
    };
    match &q.cql {
        Some(cql) => s.push_str(&side_by_side(&p.sql, cql)),
        None => s.push_str(&md::block("sql", &p.sql)),
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
    if let Some(b) = &q.buckets {
        let _ = writeln!(s, "Buckets: {}\n", md::text(b));
    }
    for n in &q.notes {
        let _ = writeln!(s, "- Left to the client: {}", md::text(n));
    }
    if !q.notes.is_empty() {
        s.push('\n');
    }
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
                .unwrap_or("the designer produced no mapping for it")
        )
    )
}
