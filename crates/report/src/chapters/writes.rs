//! Write paths: per source write, the tables it fans out to, what it must read first, and the
//! batch it makes.

use super::{binds, kind, mapping_link, pattern_heading, table_link, write_tables, Ctx, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::{AccessPattern, WriteAction, WritePath};
use std::fmt::Write;

/// Cassandra's default `batch_size_warn_threshold` (5 KiB), which `fits_batch` is judged against.
const BATCH_WARN: f64 = 5.0 * 1024.0;

/// Renders `write-paths.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let mut s = String::from("# Write paths\n\n");
    let writes: Vec<(&AccessPattern, &WritePath)> = ctx
        .ranked
        .iter()
        .filter(|p| p.kind.is_write())
        .filter_map(|p| ctx.write(&p.id).map(|w| (*p, w)))
        .collect();
    if writes.is_empty() {
        s.push_str(
            "The workload has no write statement: the tables are filled by the backfill only.\n",
        );
        book.page(WRITES, "Write paths", 0, s);
        return;
    }
    let _ = writeln!(
        s,
        "Denormalized tables hold copies: every write the application makes today must reach \
         each copy. Once dual writes start (see the runbook), the application runs these \
         statements next to its Postgres write. Statements for several tables go in one logged \
         batch (atomic, not isolated) while it stays under Cassandra's {} batch warning.\n",
        md::bytes(BATCH_WARN)
    );
    let rows: Vec<Vec<String>> = writes
        .iter()
        .map(|(p, w)| {
            let tables = write_tables(w);
            vec![
                format!("[{}](#{})", md::text(&p.id), md::anchor(&p.id)),
                kind(p).into(),
                md::thousands(p.calls),
                tables.len().to_string(),
                if w.read_before_write.is_empty() {
                    "no".into()
                } else {
                    "yes".into()
                },
                md::bytes(w.batch_bytes as f64),
                if w.targets.len() < 2 {
                    "-".into()
                } else if w.fits_batch {
                    "logged batch".into()
                } else {
                    "**over the warning**".into()
                },
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "write",
            "kind",
            "calls",
            "tables",
            "reads first",
            "bytes",
            "sent as",
        ],
        &rows,
    ));
    s.push('\n');
    for (p, w) in writes {
        s.push_str(&section(p, w));
    }
    book.page(WRITES, "Write paths", 0, s);
}

fn section(p: &AccessPattern, w: &WritePath) -> String {
    let mut s = pattern_heading(p);
    let _ = writeln!(
        s,
        "{} calls. Today: {}. SQL beside CQL: {}.\n",
        md::thousands(p.calls),
        md::code(&p.sql),
        mapping_link(&p.id, 0, "query mapping")
    );
    if let Some(why) = &w.unsupported {
        let _ = writeln!(s, "**No keyed CQL can apply it**: {}\n", md::text(why));
    }
    if w.targets.is_empty() {
        let _ = writeln!(
            s,
            "Writes nothing in Cassandra{}: {}\n",
            if w.one_off {
                " (a one-off statement)"
            } else {
                ""
            },
            md::text(
                w.note
                    .as_deref()
                    .unwrap_or("no designed table holds its data")
            )
        );
        return s;
    }
    s.push_str(&reads_first(w));
    let _ = writeln!(
        s,
        "{} ({} statement(s), {}{}):\n",
        if w.read_before_write.is_empty() {
            "Write"
        } else {
            "Then write"
        },
        w.targets.len(),
        md::bytes(w.batch_bytes as f64),
        if w.targets.len() < 2 {
            ""
        } else if w.fits_batch {
            ", one logged batch"
        } else {
            ", over the batch warning: send them separately and retry each"
        }
    );
    for t in &w.targets {
        let mut when = Vec::new();
        if let Some(i) = t.for_each {
            when.push(format!("once per row of read {}", i + 1));
        }
        if let Some(g) = &t.guard {
            when.push(md::text(&g.to_string()));
        }
        let _ = writeln!(
            s,
            "- {} {}{}:",
            action(t.action),
            table_link(&t.table, 0),
            if when.is_empty() {
                String::new()
            } else {
                format!(", {}", when.join(", "))
            }
        );
        let _ = writeln!(s, "  {}", md::code(&t.cql));
        if !t.binds.is_empty() {
            let _ = writeln!(s, "  <br>binds {}", binds(&t.binds));
        }
    }
    s.push('\n');
    if let Some(n) = &w.note {
        let _ = writeln!(s, "Note: {}\n", md::text(n));
    }
    s
}

fn action(a: WriteAction) -> &'static str {
    match a {
        WriteAction::Insert => "insert into",
        WriteAction::Update => "update",
        WriteAction::Delete => "delete from",
    }
}

/// The reads a write makes first, numbered (statements name them by number).
fn reads_first(w: &WritePath) -> String {
    if w.read_before_write.is_empty() {
        return String::new();
    }
    let mut s = String::from("First read:\n\n");
    for (i, r) in w.read_before_write.iter().enumerate() {
        let from = match r.table.strip_prefix("postgres:") {
            Some(pg) => format!(
                "Postgres table {} (no Cassandra table has them)",
                md::code(pg)
            ),
            None => table_link(&r.table, 0),
        };
        let for_tables: Vec<String> = r.for_tables.iter().map(|t| table_link(t, 0)).collect();
        let _ = writeln!(
            s,
            "{}. {} from {from}{}{}, for {}{}",
            i + 1,
            md::code(&r.columns.join(", ")),
            if r.many { ", every matching row" } else { "" },
            if r.reads_new {
                " (keyed by the new values)"
            } else {
                ""
            },
            for_tables.join(", "),
            r.note
                .as_deref()
                .map(|n| format!(": {}", md::text(n)))
                .unwrap_or_default()
        );
        if !r.cql.is_empty() {
            let _ = writeln!(s, "   {}", md::code(&r.cql));
            if !r.binds.is_empty() {
                let _ = writeln!(s, "   <br>binds {}", binds(&r.binds));
            }
        }
    }
    s.push('\n');
    s
}
