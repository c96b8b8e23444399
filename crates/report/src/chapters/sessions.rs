//! Sessions: the N+1 loops the workload's sessions showed and what the design did with each,
//! and the writes observed together in transactions (issue 23). A workload that names no
//! sessions (pg_stat_statements, SQL files, a log without a session id) is said so.

use super::{Ctx, SESSIONS};
use crate::book::Book;
use crate::md;
use remodel_model::{GroupSend, LoopChoice};
use std::fmt::Write;

/// Renders `sessions.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let plan = ctx.plan;
    let wl = &plan.workload;
    // Only where there is something to say: sessions read, or a pg_stat_statements workload
    // (which cannot show them). A SQL file's workload gets no chapter.
    let pgss = wl.sources.iter().any(|src| src.format == "pgss");
    if wl.sessions.statements == 0 && plan.design.loops.is_empty() && !pgss {
        return;
    }
    let mut s = String::from("# Sessions: loops and transactions\n\n");
    let blind: Vec<String> = wl
        .sources
        .iter()
        .filter(|src| src.session_key.is_none() && src.format != "sql")
        .map(|src| {
            let why = if src.format == "pgss" {
                "pg_stat_statements counts statements, not sessions"
            } else {
                "no session id in its lines"
            };
            format!("{} ({}: {why})", md::code(&src.file), md::text(&src.format))
        })
        .collect();
    if !blind.is_empty() {
        let _ = writeln!(
            s,
            "**No session in** {}: a loop (a read run once per row of the read before it) and \
             a transaction cannot be seen there. A Postgres log shows them: `%c` or `%p` in \
             `log_line_prefix` (stderr), or csvlog/jsonlog, with `log_min_duration_statement = 0` \
             or `log_statement = 'all'`.\n",
            blind.join(", ")
        );
    }
    let ss = &wl.sessions;
    if ss.statements > 0 {
        let _ = writeln!(
            s,
            "{} statements read in {} sessions{}.\n",
            md::thousands(ss.statements),
            md::thousands(ss.sessions),
            if ss.without_session > 0 {
                format!(", {} without a session", md::thousands(ss.without_session))
            } else {
                String::new()
            }
        );
    }
    if ss.transaction_pooled {
        s.push_str(
            "The log was read as a transaction pooler's (`--pooled transaction`): a backend \
             serves another client at each transaction, so only statements inside one \
             transaction were linked into loops.\n\n",
        );
    }
    loops(ctx, &mut s);
    groups(ctx, &mut s);
    book.page(SESSIONS, "Sessions: loops and transactions", 0, s);
}

fn loops(ctx: &Ctx, s: &mut String) {
    let d = &ctx.plan.design;
    if d.loops.is_empty() {
        s.push_str("No N+1 loop was found.\n\n");
        return;
    }
    s.push_str("## N+1 loops\n\n");
    let rows: Vec<Vec<String>> = d
        .loops
        .iter()
        .map(|l| {
            vec![
                md::text(&l.parent),
                md::text(&l.child),
                md::thousands(l.calls),
                format!("{} (p95 {})", md::amount(l.fan_out_mean), l.fan_out_p95),
                match l.choice {
                    LoopChoice::Folded => "folded".into(),
                    LoopChoice::KeptLookups => "lookups kept".into(),
                    LoopChoice::NotFolded => "not folded".into(),
                },
                format!(
                    "{} → {}",
                    md::amount(l.fan_out_mean),
                    md::amount(l.lookups_after)
                ),
                md::amount(l.write_ratio),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "read",
            "then per row",
            "calls",
            "lookups per call",
            "decision",
            "lookups before → after",
            "writes of copied columns per call",
        ],
        &rows,
    ));
    s.push('\n');
    for l in &d.loops {
        let _ = writeln!(
            s,
            "- **{} then {}**{}{}: {}",
            md::text(&l.parent),
            md::text(&l.child),
            l.pattern
                .as_deref()
                .map(|p| format!(" (served as {})", md::text(p)))
                .unwrap_or_default(),
            children_figures(l),
            md::text(&l.reason)
        );
        if !l.evidence.is_empty() {
            let _ = writeln!(s, "  - evidence: {}", md::text(&l.evidence));
        }
    }
    s.push('\n');
}

fn groups(ctx: &Ctx, s: &mut String) {
    let d = &ctx.plan.design;
    if d.write_groups.is_empty() {
        return;
    }
    s.push_str("## Writes made together\n\n");
    let rows: Vec<Vec<String>> = d
        .write_groups
        .iter()
        .map(|g| {
            vec![
                md::text(&g.writes.join(", ")),
                md::thousands(g.transactions),
                match g.send {
                    GroupSend::LoggedBatch => "one logged batch".into(),
                    GroupSend::Ordered => "in order".into(),
                },
                md::text(&g.tables.join(", ")),
                md::text(&g.reason),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &["writes", "transactions", "sent as", "tables", "why"],
        &rows,
    ));
    s.push('\n');
}

/// A loop over children's figures: rows per row of the list and both costs.
fn children_figures(l: &remodel_model::LoopDecision) -> String {
    let mut parts = Vec::new();
    if let Some(n) = l.children_per_row {
        parts.push(format!("{} children per row", md::amount(n)));
    }
    if let Some(c) = l.costs {
        parts.push(format!(
            "per 100 calls: lookups {}, folded {}",
            md::amount(c.lookups),
            md::amount(c.folded)
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}
