//! Backfill and verification: what a run folder says happened, per table. The only chapter with
//! timestamps: they are the run's own.

use super::{table_link, Ctx, RUN};
use crate::book::Book;
use crate::md;
use crate::run::{Loaded, RunFolder, SyncFolder};
use remodel_model::{RunStatus, RunSummary, SyncState, TableRun, TableVerify, VerifyReport};
use std::fmt::Write;

/// Renders `backfill.md`.
pub(super) fn render(ctx: &Ctx, run: &RunFolder, book: &mut Book) {
    let mut s = String::from("# Backfill and verification\n\n");
    match &run.sync {
        Some(sync) => {
            let _ = writeln!(
                s,
                "Run folder {} of `remodel sync`, its backfill in {}.\n",
                md::code(&sync.dir),
                md::code(&run.dir)
            );
            s.push_str(&sync_section(sync));
        }
        None => {
            let _ = writeln!(s, "Run folder {}.\n", md::code(&run.dir));
        }
    }
    s.push_str("## Backfill\n\n");
    match &run.summary {
        Loaded::Found(sum) => s.push_str(&summary(ctx, run, sum)),
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

/// What the run leaves for a person to decide, most serious first, for the overview: a failed
/// verification, an unfinished run, rows unaccounted for, rejected rows, files not readable.
pub(super) fn decisions(run: &RunFolder) -> Vec<String> {
    let see = format!("See [Backfill and verification]({RUN}).");
    let mut items = Vec::new();
    match &run.verify {
        Loaded::Found(v) if !v.passed() => {
            let bad: Vec<String> = v
                .tables
                .iter()
                .filter(|t| !t.passed())
                .map(|t| md::code(&t.name))
                .collect();
            items.push(format!(
                "**Verification failed** for {}: the target differs from the source. {see}",
                bad.join(", ")
            ));
        }
        Loaded::Invalid(e) => items.push(format!(
            "`{}` of the run could not be read ({}). {see}",
            VerifyReport::FILE,
            md::cell(e)
        )),
        _ => {}
    }
    match &run.summary {
        Loaded::Found(sum) => {
            if !sum.complete() {
                items.push(format!(
                    "**The backfill has not finished** (attempt {}, {}): resume it before \
                     switching reads. {see}",
                    sum.attempt,
                    sum.status.as_str()
                ));
            }
            let unbalanced = sum
                .tables
                .iter()
                .filter(|t| t.rows_read != t.rows_written + t.rows_rejected)
                .count();
            if unbalanced > 0 {
                items.push(format!(
                    "**Rows unaccounted for** in {unbalanced} table(s) of the backfill (read ≠ \
                     written + rejected). {see}"
                ));
            }
            let rejected: u64 = sum.tables.iter().map(|t| t.rows_rejected).sum();
            if rejected > 0 {
                items.push(format!(
                    "The backfill rejected {} rows (in {}): fix the source or the plan, then \
                     resume. {see}",
                    md::thousands(rejected),
                    md::code(&in_run(&run.dir, "rejects/"))
                ));
            }
        }
        Loaded::Missing => items.push(format!(
            "The run folder has no `{}`: the backfill has not finished. {see}",
            RunSummary::FILE
        )),
        Loaded::Invalid(e) => items.push(format!(
            "`{}` of the run could not be read ({}). {see}",
            RunSummary::FILE,
            md::cell(e)
        )),
    }
    items
}

fn link(ctx: &Ctx, table: &str) -> String {
    if ctx.table(table).is_some() {
        table_link(table, 0)
    } else {
        format!("{} (not in this plan)", md::code(table))
    }
}

/// What the sync applied after its backfill, whether its slot is still there, and why the
/// backfill's row counts and verify's differ.
fn sync_section(sync: &SyncFolder) -> String {
    let file = if sync.finished {
        SyncState::FINISHED_FILE
    } else {
        SyncState::FILE
    };
    let mut s = String::from("## Sync\n\n");
    let state = match &sync.state {
        Loaded::Found(state) => state,
        Loaded::Invalid(e) => {
            let _ = writeln!(s, "`{file}` could not be read: {}\n", md::text(e));
            return s;
        }
        Loaded::Missing => return s,
    };
    let _ = writeln!(
        s,
        "The backfill read the source inside the snapshot of replication slot {}, taken at LSN \
         {}; `remodel sync` then applied every transaction committed after it to the target \
         tables: {} transactions, {} row changes, up to LSN {}{}.\n",
        md::code(&state.slot),
        md::code(&state.consistent_lsn),
        md::thousands(state.transactions),
        md::thousands(state.changes),
        md::code(state.resume_lsn()),
        if sync.finished { "" } else { " so far" }
    );
    if sync.finished {
        let _ = writeln!(
            s,
            "`remodel sync --finish` dropped the slot and the publication (`{file}`): the source \
             keeps no WAL for them.\n"
        );
    } else {
        let _ = writeln!(
            s,
            "**The slot is still there** (`{file}`): it keeps WAL on the source until `remodel \
             sync --finish --source URL --run-dir {}` drops it (the [runbook](runbook.md)'s last step).\n",
            sync.dir
        );
    }
    s.push_str(
        "The backfill's rows and verify's rows differ, as they should: the backfill copied each \
         table as it was at the slot's snapshot, and the sync then applied the inserts, updates \
         and deletes committed since (a row deleted, or moved to another key, deletes its old \
         target rows). Verify compares the tables with the source as it is when verify runs: its \
         source and stored rows are the backfill's written rows plus the rows inserted since the \
         snapshot, less those deleted. What must hold is verify's result.\n\n",
    );
    s
}

fn summary(ctx: &Ctx, run: &RunFolder, sum: &RunSummary) -> String {
    let dir = run.dir.as_str();
    let mut s = String::new();
    s.push_str(&outcome(sum, run.sync.is_some()));
    s.push_str(&table_runs(ctx, dir, sum));
    let skipped: u64 = sum.tables.iter().map(|t| t.ranges_skipped).sum();
    if skipped > 0 {
        let _ = writeln!(
            s,
            "Rows and ranges count every attempt; time and rows/s are attempt {}'s alone ({} \
             ranges had been finished by an earlier attempt and were not read again).\n",
            sum.attempt, skipped
        );
    }
    let unbalanced: Vec<String> = sum
        .tables
        .iter()
        .filter(|t| t.rows_read != t.rows_written + t.rows_rejected)
        .map(|t| md::code(&t.name))
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
        .filter(|t| !sum.tables.iter().any(|r| r.name == t.name))
        .map(|t| table_link(&t.name, 0))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "Tables of the plan this run did not fill: {}.\n",
            missing.join(", ")
        );
    }
    s.push_str(&rejects(dir, sum));
    s
}

/// When and how the attempt ended, its retries and write time (`synced`: the backfill of a
/// `remodel sync`).
fn outcome(sum: &RunSummary, synced: bool) -> String {
    let when = match (&sum.started_at, &sum.finished_at) {
        (Some(a), Some(b)) => format!("from {a} to {b}"),
        (Some(a), None) => format!("started {a}"),
        _ => "times not recorded".into(),
    };
    let attempt = if sum.attempt > 1 {
        format!("Attempt {} (resumed), {when}", sum.attempt)
    } else {
        format!("Ran {when}")
    };
    let mut s = format!(
        "{attempt}, {} s: {}.",
        md::amount(sum.elapsed_seconds),
        match sum.status {
            RunStatus::Completed => "every range of every table finished".to_string(),
            RunStatus::Stopped => format!(
                "**stopped**{}",
                sum.error
                    .as_deref()
                    .map(|e| format!(" ({})", md::cell(e)))
                    .unwrap_or_default()
            ),
            RunStatus::Unknown => "**status not recorded**".to_string(),
        }
    );
    if sum.retries > 0 {
        let _ = write!(
            s,
            " {} requests were sent again after a timeout or an unavailable node.",
            md::thousands(sum.retries)
        );
    }
    match sum.write_timestamp {
        Some(t) if synced => {
            let _ = write!(
                s,
                " Rows were written `USING TIMESTAMP {t}`, an instant before the replication slot \
                 was created: every change the sync applies carries its commit time, later, and \
                 overwrites them."
            );
        }
        Some(t) => {
            let _ = write!(
                s,
                " Rows were written `USING TIMESTAMP {t}` (`--write-timestamp`): a write the \
                 application makes to the target with a later time wins over them."
            );
        }
        None => {}
    }
    s.push_str("\n\n");
    if let Some(hint) = sum.resume_hint.as_deref().filter(|_| !sum.complete()) {
        let _ = writeln!(
            s,
            "To carry on from its checkpoint:\n\n{}",
            md::block("sh", hint)
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
                link(ctx, &t.name),
                md::thousands(t.rows_read),
                md::thousands(t.rows_written),
                md::thousands(t.rows_rejected),
                format!("{:.1} s", t.seconds),
                t.rows_per_second()
                    .map(md::count)
                    .unwrap_or_else(|| "-".into()),
                if t.ranges_total > 0 {
                    format!("{}/{}", t.ranges_done, t.ranges_total)
                } else {
                    "-".into()
                },
                t.rejects_file
                    .as_deref()
                    .map(|f| md::code(&in_run(dir, f)))
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let total = |f: fn(&TableRun) -> u64| md::thousands(sum.tables.iter().map(f).sum::<u64>());
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

/// A file of the run folder, as a reader would open it.
fn in_run(dir: &str, file: &str) -> String {
    format!("{}/{file}", dir.trim_end_matches('/'))
}

/// Where the rejected rows are and what to do with them.
fn rejects(dir: &str, sum: &RunSummary) -> String {
    let rejected: u64 = sum.tables.iter().map(|t| t.rows_rejected).sum();
    if rejected == 0 {
        return "No row was rejected.\n\n".into();
    }
    format!(
        "{} rows were rejected; they are in {}, one JSON line per row with its source key, the \
         column at fault and the reason (a NULL in a key column, a value CQL cannot hold, a row \
         over the size limit): fix the source or the plan, then resume.\n\n",
        md::thousands(rejected),
        md::code(&in_run(dir, "rejects/"))
    )
}

/// Differences listed per table at most (the count of the rest is said).
const SHOW_MISMATCHES: usize = 20;

fn verify(v: &VerifyReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}{}\n",
        if v.passed() {
            "**Passed**: every table holds the rows its source query gives, and every sampled row \
             matched column by column"
        } else {
            "**Failed**: see the tables below"
        },
        v.verified_at
            .as_deref()
            .map(|t| format!(" (verified {t})."))
            .unwrap_or_else(|| ".".into())
    );
    let _ = writeln!(
        s,
        "Expected rows are the source query's rows less those with a NULL key column (never \
         stored) and those the run rejected; stored rows are counted over the token ring. Up to \
         {} source rows per table were sampled and each looked up by the new table's own key.\n",
        md::thousands(v.sample)
    );
    let rows: Vec<Vec<String>> = v
        .tables
        .iter()
        .map(|t| {
            vec![
                md::code(&t.name),
                md::thousands(t.source_rows),
                md::thousands(t.null_key_rows),
                md::thousands(t.rejected_rows),
                md::thousands(t.expected),
                md::thousands(t.stored),
                md::thousands(t.sampled),
                md::thousands(t.missing() as u64),
                md::thousands(t.differing() as u64),
                if t.passed() { "ok" } else { "**differs**" }.into(),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &[
            "table",
            "source rows",
            "NULL key",
            "rejected",
            "expected",
            "stored",
            "sampled",
            "missing",
            "differing",
            "result",
        ],
        &rows,
    ));
    s.push('\n');
    for t in v.tables.iter().filter(|t| !t.mismatches.is_empty()) {
        s.push_str(&differences(t));
    }
    s
}

/// The sampled rows of one table that differ, both sides shown.
fn differences(t: &TableVerify) -> String {
    let mut s = format!("Differences in {}:\n\n", md::code(&t.name));
    let rows: Vec<Vec<String>> = t
        .mismatches
        .iter()
        .take(SHOW_MISMATCHES)
        .map(|m| {
            let key: Vec<String> = m.key.iter().map(|(c, v)| format!("{c}={v}")).collect();
            // A missing row has no values to quote, only what each side holds.
            let value = |v: &str| match m.column {
                Some(_) => md::code(v),
                None => md::cell(v),
            };
            vec![
                md::code(&key.join(", ")),
                m.column
                    .as_deref()
                    .map(md::cell)
                    .unwrap_or_else(|| "(row missing)".into()),
                value(&m.source),
                value(&m.target),
            ]
        })
        .collect();
    s.push_str(&md::table(
        &["key", "column", "Postgres", "Cassandra"],
        &rows,
    ));
    s.push('\n');
    if t.mismatches.len() > SHOW_MISMATCHES {
        let _ = writeln!(
            s,
            "… and {} more (all in `verify.json`).\n",
            t.mismatches.len() - SHOW_MISMATCHES
        );
    }
    s
}
