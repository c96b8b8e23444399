//! What a write does besides its own row's keyed statements: the rows an `UPDATE … FROM` joins
//! (named reads), the existing row an `INSERT … ON CONFLICT` may meet (the upsert's
//! read-modify-write), and the rows an UPDATE/DELETE picks with every condition the key does not
//! apply (a filtered read, each kept row written by its full key).

use super::{Missing, Planner, Version};
use crate::candidates::keys::KeySrc;
use crate::candidates::tables::TableBuild;
use crate::writes::values::{reads_this, upsert_set};
use remodel_model::{
    BinaryOp, BindValue, ColumnRef, ConflictAction, Expr, NewValue, RowRef, Table, Upsert,
    ValueOrigin, Warning,
};

/// The columns of `table` that `e` reads in rows of kind `row`.
fn columns_in(e: &Expr, table: &str, row: &RowRef, out: &mut Vec<ColumnRef>) {
    e.walk(&mut |x| {
        if let Expr::Column { column, row: r } = x {
            if r == row && column.table == table && !out.contains(column) {
                out.push(column.clone());
            }
        }
    });
}

/// True when `x`'s partition is plain columns among `by` and its key finds one row of `t` once
/// those are bound.
fn one_row_by(x: &TableBuild, t: &Table, by: &[String]) -> bool {
    let among =
        |k: &KeySrc| matches!(k, KeySrc::Col(c) if c.table == t.key() && by.contains(&c.column));
    x.root == t.key()
        && x.null_filter.is_empty()
        && x.extra_keys.is_empty()
        && !x.partition.is_empty()
        && x.partition.iter().all(among)
        && (crate::candidates::keys::pins_unique_key(&x.partition, t)
            || x.key_elements().iter().all(among))
}

/// The key a one-row read of `x` binds: its partition when that pins a unique key, else all of it.
fn row_key(x: &TableBuild, t: &Table) -> Vec<KeySrc> {
    if crate::candidates::keys::pins_unique_key(&x.partition, t) {
        x.partition.clone()
    } else {
        x.key_elements()
    }
}

impl<'a> Planner<'a> {
    fn refuse(&mut self, why: String) -> bool {
        self.unsupported.get_or_insert(why);
        false
    }

    /// Every expression of the statement: its new values, its upsert's, its conditions.
    fn statement_exprs(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.stmt.values.iter().map(|v| &v.value).collect();
        if let Some(c) = self.stmt.conflict {
            out.extend(c.set.iter().filter_map(|v| v.expr.as_ref()));
            out.extend(c.filter.iter());
        }
        out.extend(
            self.stmt
                .predicates
                .iter()
                .filter_map(|p| p.expr.as_ref().ok()),
        );
        out
    }

    /// The one-row table of `t`'s rows found by `by` holding `need`, the fewest columns first.
    fn one_row_table(
        &self,
        t: &Table,
        by: &[String],
        need: &[ColumnRef],
    ) -> Option<&'a TableBuild> {
        let tables: &'a [TableBuild] = self.tables;
        tables
            .iter()
            .filter(|x| one_row_by(x, t, by) && need.iter().all(|c| x.col_name(c).is_some()))
            .min_by_key(|x| x.columns.len())
    }

    /// Plans a named read of each row an `UPDATE … FROM t AS alias` joins (by the equalities that
    /// find it); false when one cannot be read (the path is not modelled).
    pub(super) fn joined_row_reads(&mut self) -> bool {
        for f in self.stmt.from_rows {
            let Some(ft) = self.schema.table(&f.table) else {
                return self.refuse(format!(
                    "the statement reads `{}` (as {}), which is not in the schema",
                    f.table, f.alias
                ));
            };
            let by: Vec<String> = f.equality.iter().map(|(c, _)| c.clone()).collect();
            let unique = std::iter::once(&ft.primary_key)
                .chain(ft.unique_keys.iter().map(|u| &u.columns))
                .any(|k| !k.is_empty() && k.iter().all(|c| by.contains(c)));
            if !unique {
                return self.refuse(format!(
                    "`FROM {} {}` is found by ({}), not by a unique key: Postgres joins each written row to one of several rows, which no keyed read can choose alike",
                    f.table,
                    f.alias,
                    by.join(", ")
                ));
            }
            let step = RowRef::Step {
                name: f.alias.clone(),
            };
            let mut need = Vec::new();
            for e in self.statement_exprs() {
                columns_in(e, &ft.key(), &step, &mut need);
            }
            if need.is_empty() {
                need = by.iter().map(|c| ColumnRef::new(ft.key(), c)).collect();
            }
            let Some(table) = self.one_row_table(ft, &by, &need) else {
                self.missing.push(Missing {
                    entity: ft.key(),
                    by: by.clone(),
                    columns: need,
                });
                return self.refuse(format!(
                    "no table finds the {} row ({}) by ({})",
                    ft.key(),
                    f.alias,
                    by.join(", ")
                ));
            };
            if !self.named_read(table, ft, f) {
                return false;
            }
        }
        true
    }

    /// The named read of `f` from `table`; false when a value that finds it is not known.
    fn named_read(&mut self, table: &TableBuild, ft: &Table, f: &remodel_model::FromRow) -> bool {
        let key = row_key(table, ft);
        let mut conds = Vec::new();
        let mut binds = Vec::new();
        let mut bound: Vec<&str> = Vec::new();
        for k in &key {
            let (Some(c), Some(name)) = (k.plain_column(), table.name_of(k)) else {
                continue;
            };
            let Some((col, e)) = f.equality.iter().find(|(col, _)| *col == c.column) else {
                continue;
            };
            let value = match e {
                e if e.is_column_free() => BindValue::Expr { expr: e.clone() },
                Expr::Column {
                    column,
                    row: RowRef::This,
                } if column.table == self.stmt.table.key() && self.stmt.by_primary_key => {
                    self.ensure(
                        std::slice::from_ref(column),
                        Version::Current,
                        &format!("the written row's {}, which finds the {} row", column.column, f.alias),
                    );
                    BindValue::Current {
                        column: column.clone(),
                    }
                }
                other => {
                    return self.refuse(format!(
                        "the {} row is found by {} = {other}: each written row joins its own, which one keyed read cannot find",
                        f.alias, col
                    ))
                }
            };
            bound.push(col);
            conds.push(format!("{} = ?", remodel_model::ident::cql_quote(name)));
            binds.push(table.bind(name, value));
        }
        let mut filter = Vec::new();
        for (col, e) in f
            .equality
            .iter()
            .filter(|(c, _)| !bound.contains(&c.as_str()))
        {
            if !e.is_column_free() {
                return self.refuse(format!(
                    "the {} row is joined by {col} = {e}, which no read of it can apply",
                    f.alias
                ));
            }
            let this = Expr::column(ColumnRef::new(ft.key(), col));
            filter.push(Expr::binary(BinaryOp::Eq, this, e.clone()));
        }
        let step = RowRef::Step {
            name: f.alias.clone(),
        };
        let mut need = Vec::new();
        for e in self.statement_exprs() {
            columns_in(e, &ft.key(), &step, &mut need);
        }
        for e in &filter {
            columns_in(e, &ft.key(), &RowRef::This, &mut need);
        }
        let why = format!(
            "the {} row the statement joins as {} (UPDATE … FROM): when none is found, nothing is written",
            ft.key(),
            f.alias
        );
        let idx = self.add_select(
            table,
            &need,
            conds.join(" AND "),
            binds,
            false,
            Version::Current,
            why,
        );
        // Its values are another row's, not the written row's.
        self.provided.retain(|(i, ..)| *i != idx);
        self.reads[idx].name = Some(f.alias.clone());
        self.reads[idx].filter = filter;
        true
    }

    /// For `INSERT … ON CONFLICT`: the read of the row with the proposed conflict-key values and
    /// what happens when it exists; false when it cannot be planned (not modelled).
    pub(super) fn existing_row(&mut self) -> bool {
        let Some(clause) = self.stmt.conflict else {
            return true;
        };
        let t = self.stmt.table;
        let conflict: Vec<String> = if clause.columns.is_empty() {
            if t.unique_keys.is_empty() && !t.primary_key.is_empty() {
                t.primary_key.clone()
            } else {
                return self.refuse(format!(
                    "ON CONFLICT without a conflict target on {}, which has {} unique keys: which one conflicts is not known",
                    t.key(),
                    1 + t.unique_keys.len()
                ));
            }
        } else {
            clause.columns.clone()
        };
        if !t.is_unique_on(&conflict) {
            return self.refuse(format!(
                "ON CONFLICT ({}) is not a unique key of {}",
                conflict.join(", "),
                t.key()
            ));
        }
        let action = if clause.do_nothing {
            ConflictAction::Nothing
        } else {
            match upsert_set(t, &clause.set) {
                Ok(set) => ConflictAction::Update {
                    set,
                    filter: clause.filter.iter().cloned().collect(),
                },
                Err(why) => return self.refuse(why),
            }
        };
        if let ConflictAction::Update { set, .. } = &action {
            if let Some(why) = self.moves_or_copies(set) {
                return self.refuse(why);
            }
        }
        let mut need: Vec<ColumnRef> = t
            .primary_key
            .iter()
            .map(|k| ColumnRef::new(t.key(), k))
            .collect();
        for x in self.tables.iter().filter(|x| x.root == t.key()) {
            for c in Self::sources(x).into_iter().filter(|c| c.table == t.key()) {
                if !need.contains(&c) {
                    need.push(c);
                }
            }
        }
        if let ConflictAction::Update { set, filter } = &action {
            for e in set.iter().map(|v| &v.value).chain(filter) {
                columns_in(e, &t.key(), &RowRef::This, &mut need);
            }
        }
        let Some(table) = self.one_row_table(t, &conflict, &need) else {
            self.missing.push(Missing {
                entity: t.key(),
                by: conflict.clone(),
                columns: need,
            });
            return self.refuse(format!(
                "no table finds the {} row by its conflict key ({}): the upsert cannot read the row it may meet",
                t.key(),
                conflict.join(", ")
            ));
        };
        let (wk, binds) = self.where_key(table, &row_key(table, t), Version::New);
        let why = format!(
            "the existing {} row with the proposed ({}), for ON CONFLICT: none → the row is inserted, one → {}",
            t.key(),
            conflict.join(", "),
            if clause.do_nothing { "nothing is written" } else { "it is written with DO UPDATE SET applied" }
        );
        let idx = self.add_select(table, &need, wk, binds, false, Version::Current, why);
        self.warnings.push(upsert_warning(t, &conflict, &action));
        self.upsert = Some(Upsert {
            conflict: conflict
                .iter()
                .map(|c| ColumnRef::new(t.key(), c))
                .collect(),
            existing: idx,
            action,
        });
        true
    }

    /// Why a `DO UPDATE SET` cannot be applied to the designed tables: it changes a key column of
    /// one of the row's tables (the row would move) or a column another entity's table copies.
    fn moves_or_copies(&self, set: &[NewValue]) -> Option<String> {
        let s = self.stmt.table.key();
        for x in self.tables {
            for v in set {
                let in_key = x
                    .key_elements()
                    .iter()
                    .any(|k| k.source() == Some(&v.column));
                if x.root == s && in_key {
                    return Some(format!(
                        "ON CONFLICT DO UPDATE changes {}, a key column of {}: the row would move, which an upsert path does not do",
                        v.column, x.name
                    ));
                }
                if x.root != s && x.col_name(&v.column).is_some() {
                    return Some(format!(
                        "ON CONFLICT DO UPDATE changes {}, which {} copies: an upsert path does not update the copies",
                        v.column, x.name
                    ));
                }
            }
        }
        None
    }

    /// The key the WHERE addresses one row by: the primary key when it binds it all, else the
    /// first unique key it binds.
    fn addressed_key(&self) -> Vec<String> {
        let t = self.stmt.table;
        std::iter::once(&t.primary_key)
            .chain(t.unique_keys.iter().map(|u| &u.columns))
            .find(|k| !k.is_empty() && k.iter().all(|c| self.stmt.key_eq.contains(c)))
            .cloned()
            .unwrap_or_default()
    }

    /// True when the rows must be read first: the WHERE picks several, or has a condition the
    /// key that addresses the row does not apply.
    pub(super) fn needs_rows(&self) -> bool {
        if !self.stmt.by_primary_key {
            return true;
        }
        let key = self.addressed_key();
        self.stmt
            .predicates
            .iter()
            .any(|p| !p.eq_column.as_ref().is_some_and(|c| key.contains(c)))
    }

    /// The columns the read of the written rows returns: the primary key, what every table of the
    /// written table's rows is made of, what the statement's expressions read, and the counted.
    fn written_rows_columns(&self) -> Vec<ColumnRef> {
        let s = self.stmt.table;
        let mut need: Vec<ColumnRef> = s
            .primary_key
            .iter()
            .map(|k| ColumnRef::new(&s.name, k))
            .collect();
        for t in self.tables.iter().filter(|t| t.root == s.name) {
            for c in Self::sources(t) {
                if !need.contains(&c) {
                    need.push(c);
                }
            }
        }
        for e in self.statement_exprs() {
            columns_in(e, &s.key(), &RowRef::This, &mut need);
        }
        for c in self.counter_columns() {
            if !need.contains(&c) {
                need.push(c);
            }
        }
        need
    }

    /// The note on the read of the written rows: filtered by the conditions `shown`, read for the
    /// counters only, or read by columns other than the primary key.
    fn written_rows_note(&self, shown: &[String]) -> String {
        let s = self.stmt.table;
        if self.filtered {
            format!(
                "the statement's conditions the key does not apply ({}) filter the rows read first; each kept row is written by its key",
                shown.join(" AND ")
            )
        } else if !self.needs_rows() {
            // One row by its key, read only because a counter counts it.
            format!(
                "the {} row is read first by its key ({}): the counters need the group it leaves, and only a row that exists is counted",
                s.name,
                self.stmt.key_eq.join(", ")
            )
        } else {
            format!(
                "rows are chosen by ({}), not by the primary key of {}: read them first, then write each",
                self.stmt.key_eq.join(", "),
                s.name
            )
        }
    }

    /// Plans the read of the rows the statement picks (by the `=` of its WHERE a table's partition
    /// can serve), keeping those that meet the rest of its conditions, so each target runs once
    /// per kept row. False (nothing planned) when no keyed read can find them, or a condition has
    /// no typed form.
    pub(super) fn written_rows(&mut self) -> bool {
        let s = self.stmt.table;
        if self.stmt.key_eq.is_empty() {
            return self.refuse(format!(
                "rows of {} are chosen by a range or an expression, not by `=` on columns: no keyed CQL statement finds them (use a TTL, or a job that reads their keys from a table ordered by that column)",
                s.name
            ));
        }
        let need = self.written_rows_columns();
        let by: Vec<ColumnRef> = self
            .stmt
            .key_eq
            .iter()
            .map(|c| ColumnRef::new(&s.name, c))
            .collect();
        // The key of the read: the partition (all of it among the `=` columns), then the
        // clustering columns among them that follow it. It applies every `=` of the statement
        // (a read by fewer returns rows the statement does not pick, and a table that lists them
        // is asked for instead), or pins a unique key (one row, which the other conditions
        // filter). A read of one row first, then the narrowest.
        let found = self
            .tables
            .iter()
            .filter(|x| {
                x.root == s.name
                    && x.null_filter.is_empty()
                    && x.extra_keys.is_empty()
                    && !x.partition.is_empty()
                    && need.iter().all(|c| x.col_name(c).is_some())
            })
            .filter_map(|x| {
                let one = crate::candidates::keys::pins_unique_key(&x.partition, s);
                crate::writes::rows_key(x, &by)
                    .filter(|k| one || k.len() == by.len())
                    .map(|k| (x, k, one))
            })
            .min_by_key(|(x, _, one)| (!one, x.columns.len()))
            .map(|(x, k, _)| (x, k));
        let Some((table, key)) = found else {
            self.missing.push(Missing {
                entity: s.name.clone(),
                by: self.stmt.key_eq.clone(),
                columns: need,
            });
            self.notes.push(format!(
                "rows are chosen by ({}), not by the primary key of {}: a table that lists them by those columns is needed",
                self.stmt.key_eq.join(", "),
                s.name
            ));
            return false;
        };
        let applied: Vec<&str> = key
            .iter()
            .filter_map(KeySrc::plain_column)
            .map(|c| c.column.as_str())
            .collect();
        let mut filter = Vec::new();
        for p in &self.stmt.predicates {
            if p.eq_column.as_deref().is_some_and(|c| applied.contains(&c)) {
                continue;
            }
            match &p.expr {
                Ok(e) => filter.push(e.clone()),
                Err(sql) => {
                    return self.refuse(format!(
                        "the condition `{sql}` has no typed form: the rows it keeps cannot be told apart from the rows a read by ({}) returns",
                        applied.join(", ")
                    ))
                }
            }
        }
        let (wk, binds) = self.where_key(table, &key, Version::Current);
        let shown: Vec<String> = filter.iter().map(ToString::to_string).collect();
        let why = if filter.is_empty() {
            format!(
                "every {} row the statement picks by ({})",
                s.name,
                applied.join(", ")
            )
        } else {
            format!(
                "every {} row the statement picks by ({}), kept where {}",
                s.name,
                applied.join(", "),
                shown.join(" AND ")
            )
        };
        let idx = self.add_select(table, &need, wk, binds, true, Version::Current, why);
        self.filtered = !filter.is_empty();
        self.reads[idx].filter = filter;
        self.rows = Some(idx);
        let note = self.written_rows_note(&shown);
        self.notes.push(note);
        true
    }

    /// An UPDATE whose new values read the current row: plans the reads of the columns they read,
    /// and warns that the read and the write are not one atomic step.
    pub(super) fn read_modify_write(&mut self) {
        let s = self.stmt.table.key();
        let mut read = Vec::new();
        for v in &self.stmt.values {
            columns_in(&v.value, &s, &RowRef::This, &mut read);
        }
        if read.is_empty() {
            return;
        }
        self.ensure(
            &read,
            Version::Current,
            "the current value, for SET col = f(col)",
        );
        let rmw: Vec<String> = self
            .stmt
            .values
            .iter()
            .filter(|v| v.origin == ValueOrigin::Statement && reads_this(&v.value))
            .map(|v| v.column.column.clone())
            .collect();
        if let Some(first) = rmw.first() {
            self.warnings.push(Warning {
                code: "not_atomic".into(),
                message: format!(
                    "SET {} from the current value is a read-modify-write in Cassandra: two writers of one row between the read and the write lose an update; write with IF {first} = <value read> (a lightweight transaction) when updates race, or keep a counter table when it only counts",
                    rmw.join(", ")
                ),
            });
        }
    }

    /// True (and the path not modelled) when `t`'s copies of the written row, one per child row,
    /// would have to follow a filtered read of the written rows: no read of the children can be
    /// made to depend on which rows it keeps.
    pub(super) fn refuse_child_copies(&mut self, t: &TableBuild) -> bool {
        if !self.filtered {
            return false;
        }
        !self.refuse(format!(
            "{} copies the written {} row's columns, one row per {} row; the statement's conditions decide which written rows change, and no read of the copies can follow that",
            t.name,
            self.stmt.table.key(),
            t.root
        ))
    }
}

/// The `not_atomic` warning of an upsert (and the counter it could be).
fn upsert_warning(t: &Table, conflict: &[String], action: &ConflictAction) -> Warning {
    let mut message = format!(
        "INSERT … ON CONFLICT ({}) is a read of the {} row, then a write: two writers of one key between them both see no row (or the same one) and one change is lost; where that matters use a lightweight transaction (INSERT … IF NOT EXISTS, then UPDATE … IF <column> = <value read>)",
        conflict.join(", "),
        t.key()
    );
    if let ConflictAction::Update { set, filter } = action {
        let increments: Vec<&str> = set
            .iter()
            .filter(|v| increment_of(&v.value, &v.column))
            .map(|v| v.column.column.as_str())
            .collect();
        if filter.is_empty() && !increments.is_empty() && increments.len() == set.len() {
            message.push_str(&format!(
                "; {} only adds to itself: a counter table (UPDATE … SET {c} = {c} + ?) needs no read and no race",
                increments.join(", "),
                c = increments[0]
            ));
        }
    }
    Warning {
        code: "not_atomic".into(),
        message,
    }
}

/// True for `c + x` or `x + c` (`c` the existing row's value, `x` not reading it).
fn increment_of(e: &Expr, c: &ColumnRef) -> bool {
    let is_c = |x: &Expr| matches!(x, Expr::Column { column, row: RowRef::This } if column == c);
    match e {
        Expr::Binary {
            op: BinaryOp::Add,
            left,
            right,
        } => (is_c(left) && !reads_this(right)) || (is_c(right) && !reads_this(left)),
        _ => false,
    }
}
