//! Sessions: the N+1 loops and transactions of `fixtures/sessions/` (a blog application's real
//! logs, stderr with `%c` and csvlog of the same run), found the same way in both logs.

mod common;

use common::*;
use remodel_model::Analysis;
use remodel_sql::workload::Format;
use std::fmt::Write;

fn analysis(log: &str, format: Format) -> Analysis {
    load_and_analyze(
        &["fixtures/sessions/schema.sql"],
        &[&format!("fixtures/sessions/{log}")],
        format,
    )
}

/// The loops and transactions, one line each (what a reviewer checks).
fn render(a: &Analysis) -> String {
    let mut out = String::new();
    let s = &a.workload.sessions;
    let _ = writeln!(
        out,
        "sessions {} statements {} without session {}",
        s.sessions, s.statements, s.without_session
    );
    for l in &a.loops {
        let sql = |id: &str| a.workload.pattern(id).map_or("?", |p| p.sql.as_str());
        let _ = writeln!(
            out,
            "loop {} -> {} by {} = {} (${}) calls {} lookups {} fan-out mean {} p95 {} distinct {} limit {:?}\n  A: {}\n  B: {}",
            l.parent,
            l.child,
            l.parent_column,
            l.child_column,
            l.param,
            l.calls,
            l.lookups,
            l.fan_out_mean,
            l.fan_out_p95,
            l.distinct_mean,
            l.parent_limit,
            sql(&l.parent),
            sql(&l.child)
        );
        match (&l.folded, &l.not_folded) {
            (Some(p), _) => {
                let _ = writeln!(out, "  folded {}: {}", p.id, p.sql);
                let _ = writeln!(
                    out,
                    "  joins {:?}",
                    p.analysis
                        .join_path
                        .iter()
                        .map(|j| j.foreign_key.clone())
                        .collect::<Vec<_>>()
                );
            }
            (None, Some(why)) => {
                let _ = writeln!(out, "  not folded: {why}");
            }
            (None, None) => {}
        }
    }
    for t in &a.transactions {
        let _ = writeln!(
            out,
            "transaction {:?} writes {:?} committed {} rolled back {}",
            t.statements, t.writes, t.committed, t.rolled_back
        );
    }
    out
}

#[test]
fn the_stderr_log_shows_two_loops_and_a_transaction() {
    let a = analysis("app.log", Format::PgLog);
    expect_test::expect_file!["../../../fixtures/sessions/analysis.txt"].assert_eq(&render(&a));
}

#[test]
fn the_csvlog_of_the_same_run_shows_the_same() {
    let (log, csv) = (
        analysis("app.log", Format::PgLog),
        analysis("app.csv", Format::Csvlog),
    );
    // Same sessions, statements, loops and transactions: only the line numbers differ.
    assert_eq!(render(&log), render(&csv));
}

/// `fixtures/sessions-pooled/`: 4 clients through pgbouncer in transaction mode with one server
/// connection, so the log shows one backend (one `%c`); half the front pages run in a
/// transaction, half not.
fn pooled(log: &str, pooling: remodel_sql::workload::Pooling) -> Analysis {
    let r = root();
    let ddl =
        remodel_sql::ddl::load_files(&[r.join("fixtures/sessions/schema.sql")]).expect("schema");
    let load = remodel_sql::workload::read_files_pooled(
        &[r.join("fixtures/sessions-pooled").join(log)],
        Format::Auto,
        pooling,
    )
    .expect("log");
    remodel_analyze::analyze(
        &ddl.schema,
        &load.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    )
}

#[test]
fn behind_a_transaction_pooler_only_transactions_make_loops() {
    use remodel_sql::workload::Pooling;
    let a = pooled("app.log", Pooling::Transaction);
    let naive = pooled("app.log", Pooling::Session);
    let text = format!(
        "--pooled transaction\n{}\nread as one session\n{}",
        render(&a),
        render(&naive)
    );
    expect_test::expect_file!["../../../fixtures/sessions-pooled/analysis.txt"].assert_eq(&text);
    assert!(a.workload.sessions.transaction_pooled);
    assert_eq!(a.workload.sessions.sessions, 1, "{text}");
    // The page's loop is seen in its transactions only, with the page's own fan-out: 10
    // authors per list of 10 posts, in every window (the clients' statements interleave
    // between transactions, never inside one).
    let l = a
        .loops
        .iter()
        .find(|l| l.child_column.table == "authors")
        .expect("the front page's loop, inside its transactions");
    assert_eq!((l.fan_out_mean, l.fan_out_p95), (10.0, 10), "{text}");
    let in_tx: u64 = a
        .workload
        .sessions
        .transactions
        .iter()
        .map(|t| t.committed)
        .sum();
    assert!(l.calls <= in_tx, "{text}");
    // Read as one session, the other clients' lookups land in the page's windows.
    let n = naive
        .loops
        .iter()
        .find(|l| l.child_column.table == "authors");
    assert!(
        n.is_none_or(|n| n.lookups != l.lookups || n.fan_out_mean != 10.0),
        "{text}"
    );
    assert_eq!(
        render(&a),
        render(&pooled("app.csv", Pooling::Transaction)),
        "the csvlog of the run"
    );
}

/// Loops need evidence (`fixtures/sessions-unlinked/`): user lookups follow three reads of items
/// on the same connection, five per call of two lists and two per call of a read by key. Only the
/// list whose rows name the looked-up users (`seller_id`, a declared key) makes a loop; the list
/// whose columns name no user (`owner_ref`) does not — its lookups merely follow it — and the read
/// by key returns one row, so two lookups after it are not a loop over its rows.
#[test]
fn statements_that_merely_follow_each_other_are_no_loop() {
    let a = load_and_analyze(
        &["fixtures/sessions-unlinked/schema.sql"],
        &["fixtures/sessions-unlinked/app.log"],
        Format::PgLog,
    );
    let sql = |id: &str| a.workload.pattern(id).map_or("?", |p| p.sql.as_str());
    let loops: Vec<(&str, &str, String)> = a
        .loops
        .iter()
        .map(|l| (sql(&l.parent), sql(&l.child), l.parent_column.to_string()))
        .collect();
    assert_eq!(
        loops,
        [(
            "SELECT id, seller_id, title FROM items WHERE category = $1 ORDER BY id LIMIT $2",
            "SELECT id, nickname FROM users WHERE id = $1",
            "items.seller_id".to_string()
        )],
        "{:#?}",
        a.loops
    );
    assert!(a.loops[0].folded.is_some(), "{:?}", a.loops[0].not_folded);
    assert!(
        a.loops[0]
            .evidence
            .contains("(items.seller_id -> users.id, declared in the schema)"),
        "{}",
        a.loops[0].evidence
    );
}
