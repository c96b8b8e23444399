//! Access patterns: every distinct statement ranked by calls, with its share of the traffic, what
//! it filters, sorts and limits on, its SQL and one real example, and where it came from.

use super::{describe, kind, mapping_link, table_link, write_tables, Ctx, PATTERNS};
use crate::book::Book;
use crate::md;
use crate::svg::{self, Bar, BarKind};
use remodel_model::{
    AccessPattern, EqualityOp, PatternAnalysis, RangeBound, RangePredicate, TimeWindow,
};
use std::fmt::Write;

/// Bars drawn in the traffic chart; the rest are summed into one.
const CHART_BARS: usize = 30;
/// The chart's file under `src/`.
const CHART: &str = "img/traffic.svg";

/// Renders `access-patterns.md` and the traffic chart.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let mut s = String::from("# Access patterns\n\n");
    let _ = writeln!(
        s,
        "{} distinct statements, {} calls in all, heaviest first. A pattern is one normalized \
         statement (literals replaced by `$n`); its calls are how often the workload ran it.\n",
        ctx.ranked.len(),
        md::thousands(ctx.total_calls)
    );
    let _ = writeln!(
        s,
        "![Share of calls per access pattern, reads in blue and writes in orange]({CHART})\n"
    );
    book.asset(CHART, traffic_chart(ctx));
    let rows: Vec<Vec<String>> = ctx
        .ranked
        .iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                (i + 1).to_string(),
                format!("[{}](#{})", md::text(&p.id), md::anchor(&p.id)),
                kind(p).into(),
                md::thousands(p.calls),
                md::percent(ctx.share(p)),
                md::cell(&p.analysis.tables.join(", ")),
                md::cell(&describe(p)),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &["#", "pattern", "kind", "calls", "share", "tables", "what"],
        &rows,
    ));
    s.push('\n');
    for p in &ctx.ranked {
        s.push_str(&section(ctx, p));
    }
    book.page(PATTERNS, "Access patterns", 0, s);
}

fn traffic_chart(ctx: &Ctx) -> String {
    let mut bars: Vec<Bar> = ctx
        .ranked
        .iter()
        .take(CHART_BARS)
        .map(|p| Bar {
            label: format!("{} {} {}", p.id, kind(p), p.analysis.tables.join(",")),
            share: ctx.share(p),
            caption: format!(
                "{} ({} calls)",
                md::percent(ctx.share(p)),
                md::thousands(p.calls)
            ),
            kind: if p.kind.is_write() {
                BarKind::Write
            } else {
                BarKind::Read
            },
        })
        .collect();
    if ctx.ranked.len() > CHART_BARS {
        let rest: u64 = ctx.ranked[CHART_BARS..].iter().map(|p| p.calls).sum();
        let share = md::share(rest, ctx.total_calls);
        bars.push(Bar {
            label: format!("{} others", ctx.ranked.len() - CHART_BARS),
            share,
            caption: format!("{} ({} calls)", md::percent(share), md::thousands(rest)),
            kind: BarKind::Read,
        });
    }
    svg::share_chart("Share of calls per access pattern", &bars)
}

/// One pattern: its numbers, predicates, SQL, example and sources.
fn section(ctx: &Ctx, p: &AccessPattern) -> String {
    let mut s = md::target(&p.id);
    let _ = writeln!(s, "## {}: {}\n", md::text(&p.id), md::text(&describe(p)));
    let mut facts: Vec<Vec<String>> = vec![
        vec!["kind".into(), kind(p).into()],
        vec![
            "calls".into(),
            format!(
                "{} ({} of all calls)",
                md::thousands(p.calls),
                md::percent(ctx.share(p))
            ),
        ],
    ];
    if let Some(ms) = p.mean_ms {
        facts.push(vec!["mean time in Postgres".into(), format!("{ms:.3} ms")]);
    }
    if let Some(rows) = p.rows {
        facts.push(vec![
            "rows (pg_stat_statements)".into(),
            md::thousands(rows),
        ]);
    }
    facts.extend(analysis_rows(&p.analysis));
    let served = if p.kind.is_write() {
        ctx.write(&p.id).map(|w| {
            let tables: Vec<String> = write_tables(w)
                .into_iter()
                .map(|t| table_link(t, 0))
                .collect();
            format!(
                "writes {} ({})",
                md::list_or_dash(&tables),
                mapping_link(&p.id, 0, "mapping")
            )
        })
    } else {
        ctx.query(&p.id).map(|q| {
            let table = q
                .table
                .as_deref()
                .map(|t| table_link(t, 0))
                .unwrap_or_else(|| "no table".into());
            format!("{table} ({})", mapping_link(&p.id, 0, "mapping"))
        })
    };
    facts.push(vec![
        "served by".into(),
        served.unwrap_or_else(|| "not mapped".into()),
    ]);
    s.push_str(&md::table(&["fact", "value"], &facts));
    s.push('\n');
    s.push_str("Normalized SQL:\n\n");
    s.push_str(&md::block("sql", &p.sql));
    if let Some(ex) = &p.example {
        s.push_str("\nOne real example:\n\n");
        s.push_str(&md::block("sql", ex));
    }
    s.push('\n');
    if !p.locations.is_empty() {
        let locs: Vec<String> = p
            .locations
            .iter()
            .map(|l| md::code(&format!("{}:{}", l.file, l.line)))
            .collect();
        let _ = writeln!(s, "Found at {}.\n", locs.join(", "));
    }
    if let (Some(a), Some(b)) = (&p.first_seen, &p.last_seen) {
        let _ = writeln!(s, "Seen from {} to {}.\n", md::code(a), md::code(b));
    }
    s
}

/// What the analyzer found, one row per non-empty part.
fn analysis_rows(a: &PatternAnalysis) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut push = |name: &str, items: Vec<String>| {
        if !items.is_empty() {
            rows.push(vec![name.to_string(), md::cell(&items.join(", "))]);
        }
    };
    push(
        "filter (equality)",
        a.equality
            .iter()
            .map(|e| {
                let col = e.column.to_string();
                match e.op {
                    EqualityOp::Eq => format!("{col} ="),
                    EqualityOp::In => format!("{col} IN"),
                    EqualityOp::IsNull => format!("{col} IS NULL"),
                }
            })
            .collect(),
    );
    push("filter (range)", a.ranges.iter().map(range).collect());
    push(
        "sort",
        a.order_by
            .iter()
            .map(|o| format!("{}{}", o.column, if o.desc { " DESC" } else { "" }))
            .collect(),
    );
    push("limit", a.limit.iter().map(|l| l.to_string()).collect());
    push("offset", a.offset.iter().map(|l| l.to_string()).collect());
    push(
        "joins",
        a.join_path
            .iter()
            .map(|j| {
                format!(
                    "{}({}) = {}({})",
                    j.left_table,
                    j.left_columns.join(", "),
                    j.right_table,
                    j.right_columns.join(", ")
                )
            })
            .collect(),
    );
    push(
        "columns read",
        a.projection.iter().map(|c| c.to_string()).collect(),
    );
    push(
        "aggregates",
        a.aggregates
            .iter()
            .map(|g| {
                format!(
                    "{}({}{})",
                    g.function,
                    if g.distinct { "DISTINCT " } else { "" },
                    g.column
                        .as_ref()
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "*".into())
                )
            })
            .collect(),
    );
    push(
        "group by",
        a.group_by.iter().map(|c| c.to_string()).collect(),
    );
    push(
        "filtered on the client",
        a.residual
            .iter()
            .map(|r| format!("{} ({})", r.sql, r.reason))
            .collect(),
    );
    if let Some(w) = &a.write {
        push(
            "writes",
            vec![format!("{} ({})", w.table, w.columns_written.join(", "))],
        );
        push(
            "rows identified by",
            w.key_columns
                .iter()
                .map(|c| c.to_string())
                .chain(w.by_primary_key.then(|| "(the primary key)".to_string()))
                .collect(),
        );
    }
    if let Some(why) = &a.unmodeled {
        push("not analysed", vec![why.clone()]);
    }
    if let Some(why) = &a.one_off {
        push("one-off (shapes no table)", vec![why.clone()]);
    }
    rows
}

/// `t.c >= $1 (e.g. …) and < $2 (one day)`.
fn range(r: &RangePredicate) -> String {
    let mut t = r.column.to_string();
    if r.prefix {
        t.push_str(" LIKE 'prefix%'");
    }
    if let Some(lo) = &r.lower {
        let op = if lo.inclusive { ">=" } else { ">" };
        t = format!("{t} {op} {}", bound(lo));
    }
    if let Some(hi) = &r.upper {
        let sep = if r.lower.is_some() { " and" } else { "" };
        let op = if hi.inclusive { "<=" } else { "<" };
        t = format!("{t}{sep} {op} {}", bound(hi));
    }
    if let Some(w) = r.window {
        t.push_str(&format!(" (one {})", window(w)));
    }
    t
}

fn bound(b: &RangeBound) -> String {
    match &b.example {
        Some(ex) => format!("{} (e.g. {ex})", b.value),
        None => b.value.clone(),
    }
}

fn window(w: TimeWindow) -> &'static str {
    match w {
        TimeWindow::Hour => "hour",
        TimeWindow::Day => "day",
        TimeWindow::Week => "week",
        TimeWindow::Month => "month",
        TimeWindow::Year => "year",
    }
}
