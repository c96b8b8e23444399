//! The checks on what a write path does, beyond where its values come from:
//! - (h) an INSERT gives every column with a DEFAULT, a sequence or a generation expression its
//!   value, and every table of the row binds it;
//! - (i) an UPDATE recomputes every stored generated column that reads a column it writes;
//! - (j) an `INSERT … ON CONFLICT` reads the existing row by the conflict key before writing;
//! - (k) every condition of an UPDATE/DELETE on its rows is applied: by the key that finds them,
//!   or by a read's filter;
//! - (l) every row an expression names ([`RowRef::Step`]) is a read before write of the path.

use super::{same, v};
use crate::writes::filter::{conjuncts, predicates};
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, ConflictAction, Design, DesignTable, Expr, RowRef,
    StatementKind, Table, ValueOrigin, Violation, WriteAction, WritePath,
};

/// The design table `name`.
fn table<'d>(design: &'d Design, name: &str) -> Option<&'d DesignTable> {
    design.tables.iter().find(|t| t.name == name)
}

/// The design column of `t` holding source column `c`.
fn holding<'d>(t: &'d DesignTable, c: &ColumnRef) -> Option<&'d str> {
    t.columns
        .iter()
        .find(|dc| {
            dc.source
                .as_ref()
                .is_some_and(|s| same(&s.table, &c.table) && same(&s.column, &c.column))
        })
        .map(|dc| dc.name.as_str())
}

/// Runs (h)–(l) on the write path `w` of pattern `p` on table `st`.
pub fn check(
    design: &Design,
    p: &AccessPattern,
    st: &Table,
    w: &WritePath,
    out: &mut Vec<Violation>,
) {
    if w.unsupported.is_some() {
        return;
    }
    match p.kind {
        StatementKind::Insert => {
            defaults_given(design, st, w, out);
            upsert_reads_existing(design, p, st, w, out);
        }
        StatementKind::Update => {
            generated_fresh(st, w, out);
            conditions_applied(design, p, st, w, out);
        }
        StatementKind::Delete => conditions_applied(design, p, st, w, out),
        StatementKind::Select => {}
    }
    steps_exist(w, out);
}

/// (h) Every column of the INSERT's table with a DEFAULT, a sequence or a generation
/// expression has a value, and each INSERT of a table of the row binds the columns it holds.
fn defaults_given(design: &Design, st: &Table, w: &WritePath, out: &mut Vec<Violation>) {
    let computed = st.columns.iter().filter(|c| {
        c.identity.is_some()
            || c.generated.is_some()
            || c.default
                .as_deref()
                .is_some_and(|d| !d.trim().eq_ignore_ascii_case("null"))
    });
    for c in computed {
        let r = ColumnRef::new(st.key(), &c.name);
        if !w.values.iter().any(|nv| nv.column == r) {
            v(out, "h", format!(
                "write {}: {r} is computed by Postgres ({}) but the path gives it no value: every copy would hold NULL",
                w.pattern,
                c.generated.as_deref().or(c.default.as_deref()).unwrap_or("a sequence")
            ));
        }
    }
    for target in w.targets.iter().filter(|x| x.action == WriteAction::Insert) {
        let Some(t) = table(design, &target.table).filter(|t| same(&t.entity, &st.key())) else {
            continue;
        };
        for nv in &w.values {
            let Some(name) = holding(t, &nv.column) else {
                continue;
            };
            let bound = target.binds.iter().any(|b| {
                b.column == name
                    && matches!(BindValue::unencoded(&b.value), BindValue::New { column } if *column == nv.column)
            });
            if !bound {
                v(out, "h", format!(
                    "write {}: {} holds {} but its INSERT does not bind new({}): the copy would miss the value",
                    w.pattern, t.name, nv.column, nv.column
                ));
            }
        }
    }
}

/// (i) An UPDATE recomputes every stored generated column that reads a column it writes (one
/// whose expression is untyped counts as reading every column).
fn generated_fresh(st: &Table, w: &WritePath, out: &mut Vec<Violation>) {
    let written: Vec<&ColumnRef> = w
        .values
        .iter()
        .filter(|nv| nv.origin != ValueOrigin::Generated)
        .map(|nv| &nv.column)
        .collect();
    if written.is_empty() {
        return;
    }
    for c in st.columns.iter().filter(|c| c.generated.is_some()) {
        let reads_written = c.generated_expr.as_ref().is_none_or(|g| {
            g.columns()
                .iter()
                .any(|r| written.iter().any(|x| **x == **r))
        });
        let r = ColumnRef::new(st.key(), &c.name);
        let given = w
            .values
            .iter()
            .any(|nv| nv.column == r && nv.origin == ValueOrigin::Generated);
        if reads_written && !given {
            v(out, "i", format!(
                "write {}: {r} is generated from a column the UPDATE writes, but the path does not recompute it: every copy would keep the stale value",
                w.pattern
            ));
        }
    }
}

/// (j) An `INSERT … ON CONFLICT` has an upsert whose existing-row read is a one-row read of the
/// written table keyed by the proposed conflict-key values.
fn upsert_reads_existing(
    design: &Design,
    p: &AccessPattern,
    st: &Table,
    w: &WritePath,
    out: &mut Vec<Violation>,
) {
    let Some(info) = &p.analysis.write else {
        return;
    };
    if !info.on_conflict && info.conflict.is_none() {
        return;
    }
    let Some(u) = &w.upsert else {
        v(out, "j", format!(
            "write {}: INSERT … ON CONFLICT is written as a plain INSERT: a conflicting row would be overwritten instead of {}",
            w.pattern,
            if info.conflict.as_ref().is_some_and(|c| c.do_nothing) { "kept" } else { "updated" }
        ));
        return;
    };
    let read = w.read_before_write.get(u.existing);
    let ok = read.is_some_and(|r| {
        !r.many
            && table(design, &r.table).is_some_and(|t| {
                same(&t.entity, &st.key())
                    && u.conflict.iter().all(|c| {
                        holding(t, c).is_some_and(|name| {
                            r.binds.iter().any(|b| {
                                b.column == name
                                    && matches!(BindValue::unencoded(&b.value), BindValue::New { column } if column == c)
                            })
                        })
                    })
            })
    });
    if !ok {
        v(out, "j", format!(
            "write {}: the upsert's read {} is not a read of one {} row by the proposed conflict key",
            w.pattern,
            u.existing,
            st.key()
        ));
    }
    if let ConflictAction::Update { set, .. } = &u.action {
        if set.is_empty() {
            v(
                out,
                "j",
                format!("write {}: ON CONFLICT DO UPDATE sets nothing", w.pattern),
            );
        }
    }
}

/// (k) Every condition of an UPDATE/DELETE on its rows is applied: an `=` by the key that finds
/// the rows (the read the statements run for binds it, or, with no such read, every statement on
/// the row's tables binds it), anything else by the filter of a read the statements run for.
fn conditions_applied(
    design: &Design,
    p: &AccessPattern,
    st: &Table,
    w: &WritePath,
    out: &mut Vec<Violation>,
) {
    let own: Vec<_> = w
        .targets
        .iter()
        .filter(|x| table(design, &x.table).is_some_and(|t| same(&t.entity, &st.key())))
        .collect();
    if own.is_empty() {
        // No table holds the written rows: the statement changes nothing in Cassandra.
        return;
    }
    let rows: Vec<usize> = own.iter().filter_map(|x| x.for_each).collect();
    let filters: Vec<&Expr> = rows
        .iter()
        .filter_map(|i| w.read_before_write.get(*i))
        .flat_map(|r| r.filter.iter().flat_map(conjuncts))
        .collect();
    for pred in predicates(p, st) {
        let in_filter = pred
            .expr
            .as_ref()
            .is_ok_and(|e| filters.iter().any(|f| **f == *e));
        let by_key = pred.eq_column.as_ref().is_some_and(|c| {
            let c = ColumnRef::new(st.key(), c);
            let binds_current = |t: &str, binds: &[remodel_model::Bind]| {
                table(design, t)
                    .and_then(|t| holding(t, &c))
                    .is_some_and(|name| {
                        binds.iter().any(|b| {
                            b.column == name
                                && matches!(BindValue::unencoded(&b.value), BindValue::Current { column } if *column == c)
                        })
                    })
            };
            if rows.is_empty() {
                own.iter().all(|x| binds_current(&x.table, &x.binds))
            } else {
                rows.iter()
                    .filter_map(|i| w.read_before_write.get(*i))
                    .all(|r| binds_current(&r.table, &r.binds))
            }
        });
        if !in_filter && !by_key {
            v(out, "k", format!(
                "write {}: the condition `{}` is applied neither by the key that finds the rows nor by a read's filter: the write would change rows the statement leaves alone",
                w.pattern, pred.sql
            ));
        }
    }
}

/// (l) Every [`RowRef::Step`] of the path's expressions names a read before write (one that comes
/// earlier, for a read's filter).
fn steps_exist(w: &WritePath, out: &mut Vec<Violation>) {
    let names = |upto: usize| -> Vec<&str> {
        w.read_before_write[..upto]
            .iter()
            .filter_map(|r| r.name.as_deref())
            .collect()
    };
    let mut check = |e: &Expr, known: &[&str], whence: &str| {
        e.walk(&mut |x| {
            if let Expr::Column {
                row: RowRef::Step { name },
                column,
            } = x
            {
                if !known.contains(&name.as_str()) {
                    v(out, "l", format!(
                        "write {}: {whence} reads {name}.{}, but no read before write named {name} comes first",
                        w.pattern, column.column
                    ));
                }
            }
        });
    };
    let all = names(w.read_before_write.len());
    for nv in &w.values {
        check(&nv.value, &all, &format!("the new value of {}", nv.column));
    }
    if let Some(ConflictAction::Update { set, filter }) = w.upsert.as_ref().map(|u| &u.action) {
        for e in set.iter().map(|nv| &nv.value).chain(filter) {
            check(e, &all, "the upsert's DO UPDATE");
        }
    }
    for (i, r) in w.read_before_write.iter().enumerate() {
        let before = names(i);
        for e in &r.filter {
            check(e, &before, &format!("the filter of read {i}"));
        }
    }
}
