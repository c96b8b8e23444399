//! N+1 loops and transactions, from the order of statements in each session
//! (`Workload::sessions`, which the log readers fill).
//!
//! A log holds no result rows, so a loop is judged on what it does hold: read B ran k times
//! after one call of read A in the same session, with distinct parameter values, in most of A's
//! calls that sessions could follow (behind a transaction pooler, those in a transaction); k never above A's LIMIT; and B looks up by `=` one column that a column A returns
//! refers to (a foreign key of the schema, or the same column). Such a pair is a [`Loop`], and
//! the joined read "A with B's columns" is built and analysed here, so the designer (which
//! never parses SQL) can serve it in place of A and the lookups.

use crate::pattern;
use remodel_model::{
    AccessPattern, ColumnRef, Diagnostic, EqualityOp, Follow, Loop, Severity, StatementKind,
    TableIndex, TransactionGroup, Workload,
};
use sqlparser::ast::{
    Expr, Ident, ObjectName, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement,
    TableFactor, VisitMut, VisitorMut,
};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Fewest calls of B per call of A that make a loop (one lookup after a read is a join).
const MIN_FAN_OUT: f64 = 1.5;
/// Share of A's calls followed by B: a loop runs on (nearly) every call of A with rows.
const MIN_SHARE: f64 = 0.5;

/// The loops and the transactions with writes in `wl`'s sessions, with notes on what the
/// sessions could not show. `analyse` analyses a joined read built for a loop.
pub(crate) fn find(
    tables: &TableIndex<'_>,
    wl: &Workload,
    analyse: &dyn Fn(&AccessPattern) -> AccessPattern,
) -> (Vec<Loop>, Vec<TransactionGroup>, Vec<Diagnostic>) {
    let mut notes = Vec::new();
    let without: Vec<&str> = wl
        .sources
        .iter()
        .filter(|s| s.session_key.is_none() && s.format != "sql")
        .map(|s| s.file.as_str())
        .collect();
    if !without.is_empty() {
        notes.push(Diagnostic {
            severity: Severity::Note,
            location: None,
            message: format!(
                "no session in {}: N+1 loops and transactions cannot be seen there ({}); a Postgres log with %c or %p in log_line_prefix, or a csvlog/jsonlog, shows them",
                without.join(", "),
                if wl.sources.iter().any(|s| s.format == "pgss") {
                    "pg_stat_statements counts statements, not sessions"
                } else {
                    "no session id in its lines"
                }
            ),
        });
    }
    let by_fp: HashMap<&str, &AccessPattern> = wl
        .patterns
        .iter()
        .map(|p| (p.fingerprint.as_str(), p))
        .collect();
    let mut loops: Vec<Loop> = wl
        .sessions
        .follows
        .iter()
        .filter_map(|f| {
            let a = by_fp.get(f.parent.as_str())?;
            let b = by_fp.get(f.child.as_str())?;
            judge(tables, a, b, f, analyse)
        })
        .collect();
    loops.sort_by(|x, y| y.lookups.cmp(&x.lookups).then(x.parent.cmp(&y.parent)));
    let txs = transactions(wl, &by_fp);
    (loops, txs, notes)
}

/// The loop `b` after `a` is, if the evidence and the schema make it one.
fn judge(
    tables: &TableIndex<'_>,
    a: &AccessPattern,
    b: &AccessPattern,
    f: &Follow,
    analyse: &dyn Fn(&AccessPattern) -> AccessPattern,
) -> Option<Loop> {
    if a.kind != StatementKind::Select || b.kind != StatementKind::Select || a.id == b.id {
        return None;
    }
    let (mean, p95) = (f.mean(), f.p95());
    let distinct = f.distinct as f64 / f.windows.max(1) as f64;
    // The share of A's calls a loop could be seen after (behind a transaction pooler, those in
    // a transaction); all of A's calls when the sessions did not count them.
    let seen = if f.parent_windows > 0 {
        f.parent_windows
    } else {
        a.calls
    };
    let share = f.windows as f64 / seen.max(1) as f64;
    let limit = a.analysis.limit;
    if mean < MIN_FAN_OUT || distinct < MIN_FAN_OUT || share < MIN_SHARE {
        return None;
    }
    // B runs once per row of A: never more often than A can return rows (one for a key lookup).
    let most = if a.analysis.key_lookup {
        Some(1)
    } else {
        limit
    };
    if most.is_some_and(|l| p95 > l) {
        return None;
    }
    let (param, child_column) = lookup_column(b)?;
    let candidates = parent_columns(tables, a, &child_column);
    let (parent_column, direction) = candidates.first()?.clone();
    let key = key_words(tables, &parent_column, &child_column, direction);
    let mut lp = Loop {
        parent: a.id.clone(),
        child: b.id.clone(),
        parent_column,
        child_column,
        param,
        calls: f.windows,
        lookups: f.child_calls,
        fan_out_mean: round2(mean),
        fan_out_p95: p95,
        distinct_mean: round2(distinct),
        parent_limit: limit,
        evidence: format!(
            "{} ran {} times per call of {} in the same session (p95 {}, {} distinct values), after {} of its {} calls; {}{}",
            b.id,
            round2(mean),
            a.id,
            p95,
            round2(distinct),
            f.windows,
            a.calls,
            direction.words(),
            key
        ),
        folded: None,
        not_folded: None,
    };
    if candidates.len() > 1 {
        // Two columns of A's rows name B's row (a comment's author and its recipient): the log
        // cannot tell which one B looks up, and folding the other copies the wrong row.
        lp.not_folded = Some(ambiguity(a, b, &candidates));
        return Some(lp);
    }
    match direction {
        Direction::ToMany => {
            // No joined read: one row per child would lose A's LIMIT (it counts A's rows) and
            // A's rows without children; the designer weighs a collection in A's rows instead.
            lp.not_folded = Some(format!(
                "{} reads the rows of {} that refer to each row of {}: a loop over children, which the designer may fold into {}'s rows as a collection, not a joined read",
                b.id, lp.child_column.table, a.id, a.id
            ));
        }
        Direction::ToOne | Direction::Same => match joined(a, b, &lp, tables) {
            Ok(p) => lp.folded = Some(Box::new(analyse(&p))),
            Err(why) => lp.not_folded = Some(why),
        },
    }
    if let Some(p) = &lp.folded {
        if let Some(why) = &p.analysis.unmodeled {
            lp.not_folded = Some(format!("the joined read is not modelled: {why}"));
            lp.folded = None;
        }
    }
    Some(lp)
}

/// The columns of A's rows that lead to B's lookup column. A column A pins by `=` to one
/// value is the same in every row A returns: a loop, whose lookups take distinct values, does
/// not look it up.
fn parent_columns(
    tables: &TableIndex<'_>,
    a: &AccessPattern,
    child_column: &ColumnRef,
) -> Vec<(ColumnRef, Direction)> {
    let pinned = |c: &ColumnRef| {
        a.analysis
            .equality
            .iter()
            .any(|e| &e.column == c && e.op == EqualityOp::Eq)
    };
    let mut out: Vec<(ColumnRef, Direction)> = a
        .analysis
        .projection
        .iter()
        .filter(|c| !pinned(c))
        .filter_map(|c| refers(tables, c, child_column).map(|d| (c.clone(), d)))
        .collect();
    out.dedup_by(|x, y| x.0 == y.0);
    out
}

/// Why a loop is not folded when more than one column of A's rows leads to B's row.
fn ambiguity(a: &AccessPattern, b: &AccessPattern, several: &[(ColumnRef, Direction)]) -> String {
    let names: Vec<String> = several.iter().map(|(c, _)| c.to_string()).collect();
    format!(
        "{} columns of {}'s rows refer to the column {} looks up ({}): the log does not say which one it looks up, and copying the other's row would show the wrong values",
        several.len(),
        a.id,
        b.id,
        names.join(", ")
    )
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// B's one lookup: `column = $n` and nothing else restricting its rows.
fn lookup_column(b: &AccessPattern) -> Option<(u32, ColumnRef)> {
    let an = &b.analysis;
    if an.tables.len() != 1
        || an.equality.len() != 1
        || !an.ranges.is_empty()
        || !an.residual.is_empty()
        || !an.aggregates.is_empty()
        || an.unmodeled.is_some()
    {
        return None;
    }
    let e = &an.equality[0];
    if e.op != EqualityOp::Eq {
        return None;
    }
    let n = e.value.as_deref()?.strip_prefix('$')?.parse().ok()?;
    Some((n, e.column.clone()))
}

/// How a column of A's rows leads to B's lookup column.
#[derive(Debug, Clone, Copy)]
enum Direction {
    /// A's column is a foreign key to B's (each row's parent).
    ToOne,
    /// The same column (each row read again).
    Same,
    /// B's column is a foreign key to A's (each row's children).
    ToMany,
}

impl Direction {
    fn words(self) -> &'static str {
        match self {
            Direction::ToOne => {
                "the column it looks up is the key a column of the first read's rows refers to"
            }
            Direction::Same => {
                "it reads each row of the first read again by a column the rows return"
            }
            Direction::ToMany => {
                "the column it looks up refers to a column of the first read's rows"
            }
        }
    }
}

fn refers(tables: &TableIndex<'_>, a: &ColumnRef, b: &ColumnRef) -> Option<Direction> {
    if a == b {
        Some(Direction::Same)
    } else if key(tables, a, b).is_some() {
        Some(Direction::ToOne)
    } else if key(tables, b, a).is_some() {
        Some(Direction::ToMany)
    } else {
        None
    }
}

/// The single-column foreign key from column `from` to column `to`, if the schema has one
/// (declared, confirmed on the data by `--source`'s probes, or inferred by the analyzer).
fn key<'t>(
    tables: &'t TableIndex<'_>,
    from: &ColumnRef,
    to: &ColumnRef,
) -> Option<&'t remodel_model::ForeignKey> {
    tables.table(&from.table)?.foreign_keys.iter().find(|k| {
        k.ref_table == to.table
            && k.columns == [from.column.clone()]
            && k.ref_columns == [to.column.clone()]
    })
}

/// The key a loop's evidence rests on, and where the key comes from: a loop is folded only on
/// a key (a statement that merely follows another is not a loop), and a reviewer weighs a key
/// the data confirmed above one guessed from names.
fn key_words(
    tables: &TableIndex<'_>,
    parent: &ColumnRef,
    child: &ColumnRef,
    direction: Direction,
) -> String {
    let found = match direction {
        Direction::Same => return String::new(),
        Direction::ToOne => key(tables, parent, child).map(|k| (parent, child, k)),
        Direction::ToMany => key(tables, child, parent).map(|k| (child, parent, k)),
    };
    let Some((from, to, k)) = found else {
        return String::new();
    };
    let origin = match &k.origin {
        remodel_model::FkOrigin::Declared => "declared in the schema".to_string(),
        remodel_model::FkOrigin::Inferred { evidence } => format!("inferred: {evidence}"),
    };
    format!(" ({from} -> {to}, {origin})")
}

/// A's statement with B's table joined on the loop's column and B's columns added to its rows:
/// an inner join when A's column is NOT NULL (every row found its B), a left join otherwise.
fn joined(
    a: &AccessPattern,
    b: &AccessPattern,
    lp: &Loop,
    tables: &TableIndex<'_>,
) -> Result<AccessPattern, String> {
    let nullable = tables
        .table(&lp.parent_column.table)
        .and_then(|t| t.columns.iter().find(|c| c.name == lp.parent_column.column))
        .is_none_or(|c| c.nullable);
    let sql = join_sql(&a.sql, lp, &b.analysis.projection, nullable)?;
    let example = a
        .example
        .as_deref()
        .and_then(|e| join_sql(e, lp, &b.analysis.projection, nullable).ok());
    Ok(AccessPattern {
        id: format!("{}+{}", a.id, b.id),
        fingerprint: format!("{:016x}", remodel_model::text::fnv1a64(sql.as_bytes())),
        kind: StatementKind::Select,
        sql,
        example,
        sent_params: a.sent_params.clone(),
        calls: a.calls,
        total_ms: None,
        mean_ms: None,
        rows: None,
        first_seen: a.first_seen.clone(),
        last_seen: a.last_seen.clone(),
        label: Some(format!(
            "{} with {}'s columns: the {} lookups per call of {} in one read",
            a.id, b.id, lp.fan_out_mean, a.id
        )),
        name: None,
        locations: a.locations.clone(),
        analysis: Default::default(),
    })
}

/// The alias the joined table takes (unlikely to clash with the application's).
const ALIAS: &str = "remodel_loop";

fn join_sql(sql: &str, lp: &Loop, columns: &[ColumnRef], nullable: bool) -> Result<String, String> {
    let mut stmt = pattern::parse(sql)?;
    let Statement::Query(q) = &mut stmt else {
        return Err("the first read is not a query".into());
    };
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return Err("the first read is not a plain SELECT".into());
    };
    if sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return Err("the first read joins tables already".into());
    }
    let TableFactor::Table { name, alias, .. } = &sel.from[0].relation else {
        return Err("the first read reads no table by name".into());
    };
    let qual = alias
        .as_ref()
        .map(|a| a.name.clone())
        .or_else(|| name.0.last().and_then(|p| p.as_ident().cloned()))
        .ok_or("the first read's table has no name")?;
    // Every bare column of A names A's table: qualify it before B's columns come in scope; so
    // does `*`, which would otherwise bring in every column of B.
    for item in sel.projection.iter_mut() {
        if let SelectItem::Wildcard(options) = item {
            *item = SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(ObjectName::from(vec![qual.clone()])),
                options.clone(),
            );
        }
    }
    let _ = q.visit(&mut Qualify(qual.clone()));
    let Statement::Query(q) = &mut stmt else {
        unreachable!("matched above")
    };
    let SetExpr::Select(sel) = q.body.as_mut() else {
        unreachable!("matched above")
    };
    let col = |t: &Ident, c: &str| Expr::CompoundIdentifier(vec![t.clone(), Ident::new(c)]);
    let b_alias = Ident::new(ALIAS);
    let q = remodel_model::ident::pg_quote;
    let kind = if nullable { "LEFT JOIN" } else { "JOIN" };
    let table: Vec<String> = lp.child_column.table.split('.').map(q).collect();
    let template = format!(
        "SELECT 1 FROM t {kind} {} AS {ALIAS} ON {ALIAS}.{} = {}.{}",
        table.join("."),
        q(&lp.child_column.column),
        q(&qual.value),
        q(&lp.parent_column.column)
    );
    let join = match pattern::parse(&template)? {
        Statement::Query(t) => match *t.body {
            SetExpr::Select(mut s) => s.from.pop().and_then(|mut f| f.joins.pop()),
            _ => None,
        },
        _ => None,
    }
    .ok_or("the join does not parse")?;
    sel.from[0].joins.push(join);
    for c in columns {
        sel.projection.push(SelectItem::ExprWithAlias {
            expr: col(&b_alias, &c.column),
            alias: Ident::new(format!(
                "{}_{}",
                lp.child_column.table.replace('.', "_"),
                c.column
            )),
        });
    }
    Ok(stmt.to_string())
}

/// Qualifies bare column names with the table's name or alias.
struct Qualify(Ident);

impl VisitorMut for Qualify {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::Identifier(id) = e {
            *e = Expr::CompoundIdentifier(vec![self.0.clone(), id.clone()]);
        }
        ControlFlow::Continue(())
    }
}

/// Every transaction shape with two writes or more, by pattern id.
fn transactions(wl: &Workload, by_fp: &HashMap<&str, &AccessPattern>) -> Vec<TransactionGroup> {
    let mut out: Vec<TransactionGroup> = Vec::new();
    for t in &wl.sessions.transactions {
        let pats: Vec<&AccessPattern> = t
            .statements
            .iter()
            .filter_map(|f| by_fp.get(f.as_str()).copied())
            .collect();
        let writes: Vec<String> = pats
            .iter()
            .filter(|p| p.kind.is_write())
            .map(|p| p.id.clone())
            .collect();
        // A transaction with one write statement needs no group (a partial transaction of a
        // log that keeps only slow statements looks like one).
        let mut distinct = writes.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        out.push(TransactionGroup {
            statements: pats.iter().map(|p| p.id.clone()).collect(),
            writes,
            committed: t.committed,
            rolled_back: t.rolled_back,
        });
    }
    out.sort_by(|x, y| y.committed.cmp(&x.committed).then(x.writes.cmp(&y.writes)));
    out
}
