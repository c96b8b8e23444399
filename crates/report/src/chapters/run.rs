//! Backfill and verification: what a run folder says happened, per table. The only chapter with
//! timestamps: they are the run's own.

use super::{table_link, Ctx, RUN};
use crate::book::Book;
use crate::md;
use crate::run::{Loaded, RunFolder};
use remodel_model::{RunSummary, VerifyReport};
use std::fmt::Write;

/// Renders `backfill.md`.
pub(super) fn render(ctx: &Ctx, run: &RunFolder, book: &mut Book) {
    let mut s = String::from("# Backfill and verification\n\n");
    let _ = writeln!(s, "Run folder {}.\n", md::code(&run.dir));
    s.push_str("## Backfill\n\n");
    match &run.summary {
        Loaded::Found(sum) => s.push_str(&summary(ctx, &run.dir, sum)),
        Loaded::Missing => {
            let _ = writeln!(
                s,
                "No `{}` in the run folder: the backfill has not finished (or was stopped before \
                 writing it). `remodel backfill --resume {}` carries on from its checkpoint.\n",
                RunSummary::FILE,
                run.dir
            );
        }
        Loaded::Invalid(e) => {
            let _ = writeln!(
                s,
                "`{}` could not be read: {}\n",
                RunSummary::FILE,
                md::text(e)
            );
        }
    }
    s.push_str("## Verification\n\n");
    match &run.verify {
        Loaded::Found(v) => s.push_str(&verify(v)),
        Loaded::Missing => {
            let _ = writeln!(
                s,
                "Not verified yet (no `{}`): run `remodel verify` as the [runbook](runbook.md) says.\n",
                VerifyReport::FILE
            );
        }
        Loaded::Invalid(e) => {
            let _ = writeln!(
                s,
                "`{}` could not be read: {}\n",
                VerifyReport::FILE,
                md::text(e)
            );
        }
    }
    book.page(RUN, "Backfill and verification", 0, s);
}

fn link(ctx: &Ctx, table: &str) -> String {
    if ctx.table(table).is_some() {
        table_link(table, 0)
    } else {
        format!("{} (not in this plan)", md::code(table))
    }
}

fn summary(ctx: &Ctx, dir: &str, sum: &RunSummary) -> String {
    let mut s = String::new();
    let when = match (&sum.started_at, &sum.finished_at) {
        (Some(a), Some(b)) => format!("From {a} to {b}"),
        (Some(a), None) => format!("Started {a}"),
        _ => "Times not recorded".into(),
    };
    let _ = writeln!(
        s,
        "{when}; {}.{}\n",
        if sum.complete {
            "every range of every table finished"
        } else {
            "**not complete**: resume it with `remodel backfill --resume` on this folder"
        },
        sum.write_timestamp
            .map(|t| format!(" Rows were written `USING TIMESTAMP {t}` so live writes win."))
            .unwrap_or_default()
    );
    s.push_str(&table_runs(ctx, dir, sum));
    let unbalanced: Vec<String> = sum
        .tables
        .iter()
        .filter(|t| t.rows_read != t.rows_written + t.rows_rejected)
        .map(|t| md::code(&t.table))
        .collect();
    if unbalanced.is_empty() {
        s.push_str("For every table, rows read = rows written + rows rejected.\n\n");
    } else {
        let _ = writeln!(
            s,
            "**Rows unaccounted for** (read ≠ written + rejected) in {}: the run stopped inside a \
             range, or rows were lost; resume it and verify.\n",
            unbalanced.join(", ")
        );
    }
    let missing: Vec<String> = ctx
        .plan
        .design
        .tables
        .iter()
        .filter(|t| !sum.tables.iter().any(|r| r.table == t.name))
        .map(|t| table_link(&t.name, 0))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "Tables of the plan this run did not fill: {}.\n",
            missing.join(", ")
        );
    }
    if sum.tables.iter().any(|t| t.rows_rejected > 0) {
        s.push_str(
            "Each rejects file lists the rows that could not be stored, with the source key and \
             the reason (a NULL in a key column, a value CQL cannot hold, a row over the size \
             limit): fix the source or the plan, then resume.\n\n",
        );
    }
    s
}

/// Per table: rows read, written, rejected, time, rate, ranges, rejects file; then the sums.
fn table_runs(ctx: &Ctx, dir: &str, sum: &RunSummary) -> String {
    let mut rows: Vec<Vec<String>> = sum
        .tables
        .iter()
        .map(|t| {
            vec![
                link(ctx, &t.table),
                md::thousands(t.rows_read),
                md::thousands(t.rows_written),
                md::thousands(t.rows_rejected),
                format!("{:.1} s", t.seconds),
                rate(t.rows_written, t.seconds),
                if t.ranges_total > 0 {
                    format!("{}/{}", t.ranges_done, t.ranges_total)
                } else {
                    "-".into()
                },
                t.rejects_file
                    .as_deref()
                    .map(|f| md::code(&format!("{dir}/{f}")))
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let total =
        |f: fn(&remodel_model::TableRun) -> u64| md::thousands(sum.tables.iter().map(f).sum());
    rows.push(vec![
        "**all**".into(),
        total(|t| t.rows_read),
        total(|t| t.rows_written),
        total(|t| t.rows_rejected),
        // Tables are filled side by side: their times do not add up to the run's.
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    let mut s = md::table(
        &[
            "table", "read", "written", "rejected", "time", "rows/s", "ranges", "rejects",
        ],
        &rows,
    );
    s.push('\n');
    s
}

fn rate(rows: u64, secs: f64) -> String {
    if secs > 0.0 {
        md::count(rows as f64 / secs)
    } else {
        "-".into()
    }
}

fn verify(v: &VerifyReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}{}\n",
        if v.passed {
            "**Passed**: counts agree and every sampled row matched"
        } else {
            "**Failed**: see the tables below"
        },
        v.verified_at
            .as_deref()
            .map(|t| format!(" (verified {t})."))
            .unwrap_or_else(|| ".".into())
    );
    let rows: Vec<Vec<String>> = v
        .tables
        .iter()
        .map(|t| {
            vec![
                md::code(&t.table),
                md::thousands(t.expected_rows),
                md::thousands(t.stored_rows),
                md::thousands(t.sampled),
                md::thousands(t.missing),
                md::thousands(t.mismatched),
                if t.passed { "ok" } else { "**differs**" }.into(),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "table",
            "expected rows",
            "stored rows",
            "sampled",
            "missing",
            "mismatched",
            "result",
        ],
        &rows,
    ));
    s.push('\n');
    for t in v.tables.iter().filter(|t| !t.mismatches.is_empty()) {
        let _ = writeln!(s, "Differences in {}:\n", md::code(&t.table));
        let rows: Vec<Vec<String>> = t
            .mismatches
            .iter()
            .map(|m| {
                vec![
                    md::code(&m.key),
                    m.column
                        .as_deref()
                        .map(md::cell)
                        .unwrap_or_else(|| "(row missing)".into()),
                    m.source.as_deref().map(md::code).unwrap_or_default(),
                    m.target.as_deref().map(md::code).unwrap_or_default(),
                ]
            })
            .collect();
        s.push_str(&md::table(
            &["key", "column", "Postgres", "Cassandra"],
            &rows,
        ));
        s.push('\n');
    }
    s
}
