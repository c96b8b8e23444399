//! The value every source column takes after a write ([`NewValue`]): the statement's own values,
//! the `DEFAULT` of each column an INSERT leaves out, identity and serial columns (a sequence the
//! application must take over), and stored generated columns recomputed whenever a column they
//! read is written. An `INSERT … ON CONFLICT DO UPDATE` gets the same for its `SET`.
//!
//! A value with no typed form (a default such as `current_user`, a generated column whose
//! expression is not typed) is never left NULL: the write is "not modelled", with the reason.

use remodel_model::{
    AccessPattern, ColumnRef, Expr, Function, Literal, NewValue, RowRef, StatementKind, Table,
    ValueOrigin, Warning, WrittenValue,
};

/// The new values of one statement, with what the reviewer must know about them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values {
    /// One per column the statement gives a value.
    pub values: Vec<NewValue>,
    /// Warnings (a sequence the application must allocate).
    pub warnings: Vec<Warning>,
}

/// Why a write cannot be stated in typed values (the path is "not modelled").
pub type Unsupported = String;

/// True for the `DEFAULT` keyword as a written value (`VALUES ($1, DEFAULT)`, `SET c = DEFAULT`):
/// the column's default, a sequence's next value, or NULL.
fn is_default_keyword(v: &WrittenValue) -> bool {
    v.sql.trim().eq_ignore_ascii_case("default")
}

/// `e` with every column reference replaced by what `f` returns for it (when `Some`).
pub fn map_columns(e: &Expr, f: &dyn Fn(&ColumnRef, &RowRef) -> Option<Expr>) -> Expr {
    e.map(&mut |x| match x {
        Expr::Column { column, row } => f(column, row),
        _ => None,
    })
}

/// True when `e` reads a column of the row being written as it is before the write.
pub fn reads_this(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::Column {
            row: RowRef::This, ..
        } = x
        {
            found = true;
        }
    });
    found
}

/// The new values of write pattern `p` on its table `t`: for an INSERT every column it gives a
/// value (listed, defaulted, identity, generated), for an UPDATE the columns it sets and the
/// generated columns that read them; nothing for a DELETE.
pub fn statement_values(p: &AccessPattern, t: &Table) -> Result<Values, Unsupported> {
    let Some(w) = &p.analysis.write else {
        return Ok(Values::default());
    };
    let mut out = Values::default();
    match p.kind {
        StatementKind::Insert => {
            if w.values.is_empty() && !w.columns_written.is_empty() {
                return Err(format!(
                    "the INSERT takes its rows from a query (INSERT … SELECT): no write path can compute the values of {}",
                    w.columns_written.join(", ")
                ));
            }
            for c in t.columns.iter().filter(|c| c.generated.is_none()) {
                let written = w.values.iter().find(|v| v.column == c.name);
                if let Some(v) = written.filter(|v| !is_default_keyword(v)) {
                    out.values.push(stated(t, v)?);
                } else if let Some(nv) = default_value(t, c, &mut out.warnings)? {
                    out.values.push(nv);
                }
            }
            if let Some(missing) = w
                .columns_written
                .iter()
                .find(|c| !out.values.iter().any(|v| v.column.column == **c))
                .filter(|c| t.column(c).is_some_and(|col| col.generated.is_none()))
            {
                return Err(format!(
                    "the INSERT gives {}.{missing} a value the analysis did not record",
                    t.key()
                ));
            }
        }
        StatementKind::Update => {
            for c in &w.columns_written {
                let Some(col) = t.column(c) else { continue };
                match w.values.iter().find(|v| v.column == *c) {
                    Some(v) if is_default_keyword(v) => {
                        if let Some(nv) = default_value(t, col, &mut out.warnings)? {
                            out.values.push(nv);
                        } else {
                            out.values.push(null_value(t, c, ValueOrigin::Default));
                        }
                    }
                    Some(v) => out.values.push(stated(t, v)?),
                    None => {
                        return Err(format!(
                            "the UPDATE sets {}.{c} by a form the analysis did not record (SET (a, b) = (SELECT …)?)",
                            t.key()
                        ))
                    }
                }
            }
        }
        StatementKind::Delete | StatementKind::Select => return Ok(out),
    }
    let whole_row = p.kind == StatementKind::Insert;
    let generated = generated_values(t, &out.values, whole_row)?;
    out.values.extend(generated);
    Ok(out)
}

/// The `DO UPDATE SET` of an upsert as new values over the existing row ([`RowRef::This`]) and
/// the proposed one ([`RowRef::Excluded`]), generated columns recomputed.
pub fn upsert_set(t: &Table, set: &[WrittenValue]) -> Result<Vec<NewValue>, Unsupported> {
    let mut values = Vec::new();
    for v in set {
        let Some(col) = t.column(&v.column) else {
            continue;
        };
        if is_default_keyword(v) {
            let mut ignored = Vec::new();
            values.push(
                default_value(t, col, &mut ignored)?
                    .unwrap_or_else(|| null_value(t, &v.column, ValueOrigin::Default)),
            );
        } else {
            values.push(stated(t, v)?);
        }
    }
    let generated = generated_values(t, &values, false)?;
    values.extend(generated);
    Ok(values)
}

/// A value the statement writes, typed.
fn stated(t: &Table, v: &WrittenValue) -> Result<NewValue, Unsupported> {
    let value = v.expr.clone().ok_or_else(|| {
        format!(
            "the value of {}.{} (`{}`) has no typed form a write path can compute",
            t.key(),
            v.column,
            v.sql
        )
    })?;
    Ok(NewValue {
        column: ColumnRef::new(t.key(), &v.column),
        value,
        origin: ValueOrigin::Statement,
    })
}

fn null_value(t: &Table, column: &str, origin: ValueOrigin) -> NewValue {
    NewValue {
        column: ColumnRef::new(t.key(), column),
        value: Expr::Literal {
            value: Literal::Null,
        },
        origin,
    }
}

/// The value a column takes when a statement leaves it out: its sequence, its typed default,
/// or none (NULL); an error for a default with no typed form.
fn default_value(
    t: &Table,
    c: &remodel_model::Column,
    warnings: &mut Vec<Warning>,
) -> Result<Option<NewValue>, Unsupported> {
    let column = ColumnRef::new(t.key(), &c.name);
    let nextval = matches!(
        &c.default_expr,
        Some(Expr::Call {
            function: Function::Nextval,
            ..
        })
    );
    if c.identity.is_some() || nextval {
        let value = match &c.default_expr {
            Some(
                e @ Expr::Call {
                    function: Function::Nextval,
                    ..
                },
            ) => e.clone(),
            _ => Expr::Call {
                function: Function::Nextval,
                args: Vec::new(),
            },
        };
        let (strategy, _) = crate::emit::ids::strategy(&column, &c.sql_type);
        let how = match strategy {
            remodel_model::IdStrategy::TimeOrdered { .. } => {
                "a writer makes a time-ordered 64-bit id itself (design.ids)"
            }
            remodel_model::IdStrategy::Application => {
                "the application must allocate it (keep the sequence through the cut-over, or ranges of its own; design.ids)"
            }
        };
        warnings.push(Warning {
            code: "identity_allocation".into(),
            message: format!(
                "{column} comes from a Postgres sequence, which Cassandra does not have: {how}"
            ),
        });
        return Ok(Some(NewValue {
            column,
            value,
            origin: ValueOrigin::Identity,
        }));
    }
    let Some(text) = c.default.as_deref() else {
        return Ok(None);
    };
    match &c.default_expr {
        // `DEFAULT NULL` gives no value: the column is left out, as one with no default.
        Some(Expr::Literal {
            value: Literal::Null,
        }) => Ok(None),
        Some(value) => Ok(Some(NewValue {
            column,
            value: value.clone(),
            origin: ValueOrigin::Default,
        })),
        None if text.trim().eq_ignore_ascii_case("null") => Ok(None),
        None => Err(format!(
            "{column} takes its DEFAULT `{text}`, which has no typed form a write path can compute (Cassandra would store NULL)"
        )),
    }
}

/// The stored generated columns the new values change: each recomputed over the row after the
/// write (a column the statement writes by its new value, one it leaves by its current value;
/// for a whole new row, NULL where nothing gives one).
fn generated_values(
    t: &Table,
    written: &[NewValue],
    whole_row: bool,
) -> Result<Vec<NewValue>, Unsupported> {
    let mut out = Vec::new();
    for c in t.columns.iter().filter(|c| c.generated.is_some()) {
        let column = ColumnRef::new(t.key(), &c.name);
        let Some(g) = &c.generated_expr else {
            if whole_row || !written.is_empty() {
                return Err(format!(
                    "{column} is generated by `{}`, which has no typed form: its value after the write cannot be computed",
                    c.generated.as_deref().unwrap_or_default()
                ));
            }
            continue;
        };
        let reads_written = g
            .columns()
            .iter()
            .any(|r| r.table == t.key() && written.iter().any(|v| v.column == **r));
        if !whole_row && !reads_written {
            continue;
        }
        let new_of = |r: &ColumnRef, row: &RowRef| -> Option<Expr> {
            if *row != RowRef::This || r.table != t.key() {
                return None;
            }
            match written.iter().find(|v| v.column == *r) {
                Some(v) => Some(v.value.clone()),
                None if whole_row => Some(Expr::Literal {
                    value: Literal::Null,
                }),
                None => None,
            }
        };
        out.push(NewValue {
            column,
            value: map_columns(g, &new_of),
            origin: ValueOrigin::Generated,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::{BinaryOp, Column, PatternAnalysis, WriteInfo};

    fn col(name: &str) -> Column {
        Column {
            name: name.into(),
            sql_type: "text".into(),
            nullable: true,
            ..Column::default()
        }
    }

    fn tickets() -> Table {
        let title = ColumnRef::new("tickets", "title");
        Table {
            name: "tickets".into(),
            primary_key: vec!["id".into()],
            columns: vec![
                col("id"),
                col("title"),
                Column {
                    default: Some("now()".into()),
                    default_expr: Some(Expr::Now),
                    ..col("opened_at")
                },
                Column {
                    generated: Some("upper(title)".into()),
                    generated_expr: Some(Expr::Call {
                        function: Function::Upper,
                        args: vec![Expr::column(title)],
                    }),
                    ..col("title_upper")
                },
                Column {
                    default: Some("current_user".into()),
                    ..col("actor")
                },
            ],
            ..Table::default()
        }
    }

    fn pattern(kind: StatementKind, values: &[(&str, Option<Expr>)]) -> AccessPattern {
        AccessPattern {
            analysis: PatternAnalysis {
                write: Some(WriteInfo {
                    table: "tickets".into(),
                    columns_written: values.iter().map(|(c, _)| c.to_string()).collect(),
                    key_columns: Vec::new(),
                    by_primary_key: false,
                    on_conflict: false,
                    returning: Vec::new(),
                    reads: Vec::new(),
                    values: values
                        .iter()
                        .map(|(c, e)| WrittenValue {
                            column: c.to_string(),
                            sql: e.as_ref().map_or("f()".into(), ToString::to_string),
                            reads_current: false,
                            expr: e.clone(),
                        })
                        .collect(),
                    conflict: None,
                    from_rows: Vec::new(),
                }),
                ..PatternAnalysis::default()
            },
            ..AccessPattern::new("q1", kind, "", 1)
        }
    }

    #[test]
    fn an_insert_gives_defaults_and_generated_columns_their_values() {
        let mut t = tickets();
        t.columns.retain(|c| c.name != "actor");
        let p = pattern(
            StatementKind::Insert,
            &[
                ("id", Some(Expr::param(1))),
                ("title", Some(Expr::param(2))),
            ],
        );
        let v = statement_values(&p, &t).expect("typed");
        let shown: Vec<String> = v
            .values
            .iter()
            .map(|n| format!("{} = {} ({:?})", n.column, n.value, n.origin))
            .collect();
        assert_eq!(
            shown,
            [
                "tickets.id = $1 (Statement)",
                "tickets.title = $2 (Statement)",
                "tickets.opened_at = now() (Default)",
                "tickets.title_upper = upper($2) (Generated)",
            ]
        );
    }

    #[test]
    fn an_untyped_default_makes_the_insert_unsupported() {
        let p = pattern(StatementKind::Insert, &[("id", Some(Expr::param(1)))]);
        let why = statement_values(&p, &tickets()).expect_err("current_user has no typed form");
        assert!(
            why.contains("tickets.actor") && why.contains("current_user"),
            "{why}"
        );
    }

    #[test]
    fn an_update_recomputes_the_generated_columns_it_changes() {
        let p = pattern(StatementKind::Update, &[("title", Some(Expr::param(1)))]);
        let v = statement_values(&p, &tickets()).expect("typed");
        let g = v.values.iter().find(|n| n.column.column == "title_upper");
        assert_eq!(g.map(|n| n.value.to_string()).as_deref(), Some("upper($1)"));
        let p = pattern(
            StatementKind::Update,
            &[(
                "opened_at",
                Some(Expr::binary(BinaryOp::Add, Expr::Now, Expr::param(1))),
            )],
        );
        let v = statement_values(&p, &tickets()).expect("typed");
        assert_eq!(v.values.len(), 1, "title_upper does not read opened_at");
    }
}
