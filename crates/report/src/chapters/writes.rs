//! Write paths: per source write, the tables it fans out to, what it must read first, and the
//! batch it makes.

use super::{kind, mapping_link, pattern_heading, table_link, write_tables, Ctx, WRITES};
use crate::book::Book;
use crate::md;
use remodel_model::{AccessPattern, WritePath};
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
    if w.targets.is_empty() {
        let _ = writeln!(
            s,
            "Writes nothing in Cassandra: {}\n",
            md::text(
                w.note
                    .as_deref()
                    .unwrap_or("no designed table holds its data")
            )
        );
        return s;
    }
    if !w.read_before_write.is_empty() {
        s.push_str("First read:\n\n");
        for r in &w.read_before_write {
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
                "- {} from {from}, for {}{}",
                md::code(&r.columns.join(", ")),
                for_tables.join(", "),
                r.note
                    .as_deref()
                    .map(|n| format!(": {}", md::text(n)))
                    .unwrap_or_default()
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "Then write ({} statement(s), {}{}):\n",
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
        let _ = writeln!(s, "- {}:", table_link(&t.table, 0));
        let _ = writeln!(s, "  {}", md::code(&t.cql));
    }
    s.push('\n');
    if let Some(n) = &w.note {
        let _ = writeln!(s, "Note: {}\n", md::text(n));
    }
    s
}
