//! The conditions of an UPDATE or DELETE on the rows it writes, typed: each `=` a key can apply,
//! and the rest (`IS NULL`, ranges, other equalities, residual filters) that a read before write
//! must apply to the rows it returns ([`remodel_model::ReadBeforeWrite::filter`]). The designer
//! and the validator both take them from here, so a predicate the path drops is found.

use remodel_model::{
    AccessPattern, BinaryOp, ColumnRef, EqualityOp, Expr, FromRow, Predicate, RangeBound,
    RangePredicate, StatementKind, Table,
};

/// One condition of the statement on the written row.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePredicate {
    /// For `column = value`: the column (a key holding it applies the condition).
    pub eq_column: Option<String>,
    /// The condition over the written row ([`remodel_model::RowRef::This`]); `Err` with the
    /// condition's SQL when it has no typed form.
    pub expr: Result<Expr, String>,
    /// The condition as SQL, for messages.
    pub sql: String,
}

/// True when equality `e` is a condition on a row the statement reads besides the written one
/// (`s.id = $2` of `UPDATE accounts … FROM accounts s`), not on the written row.
pub(crate) fn on_from_row(e: &Predicate, from_rows: &[FromRow]) -> bool {
    from_rows.iter().any(|f| {
        f.table == e.column.table
            && f.equality
                .iter()
                .any(|(c, v)| *c == e.column.column && e.expr.as_ref() == Some(v))
    })
}

fn bound(column: &ColumnRef, b: &RangeBound, lower: bool) -> Result<Expr, String> {
    let op = match (lower, b.inclusive) {
        (true, true) => BinaryOp::Ge,
        (true, false) => BinaryOp::Gt,
        (false, true) => BinaryOp::Le,
        (false, false) => BinaryOp::Lt,
    };
    let v = b.expr.clone().ok_or_else(|| b.value.clone())?;
    Ok(Expr::binary(op, Expr::column(column.clone()), v))
}

fn range(r: &RangePredicate) -> Vec<WritePredicate> {
    let text = crate::candidates::shape::range_sql(r);
    if r.prefix {
        // `LIKE 'abc%'`: the lower bound holds the pattern.
        let expr = r
            .lower
            .as_ref()
            .and_then(|b| b.expr.clone())
            .map(|pattern| Expr::Like {
                arg: Box::new(Expr::column(r.column.clone())),
                pattern: Box::new(pattern),
                case_insensitive: false,
                negated: false,
            })
            .ok_or_else(|| text.clone());
        return vec![WritePredicate {
            eq_column: None,
            expr,
            sql: text,
        }];
    }
    let mut out = Vec::new();
    for (b, lower) in [(&r.lower, true), (&r.upper, false)] {
        if let Some(b) = b {
            out.push(WritePredicate {
                eq_column: None,
                expr: bound(&r.column, b, lower).map_err(|_| text.clone()),
                sql: text.clone(),
            });
        }
    }
    out
}

fn equality(e: &Predicate) -> WritePredicate {
    let sql = crate::candidates::shape::predicate_sql(e);
    let column = Expr::column(e.column.clone());
    let expr = match e.op {
        EqualityOp::IsNull => Ok(Expr::IsNull {
            arg: Box::new(column),
            negated: false,
        }),
        EqualityOp::Eq => e
            .expr
            .clone()
            .map(|v| Expr::binary(BinaryOp::Eq, column, v))
            .ok_or_else(|| sql.clone()),
        EqualityOp::In => e
            .expr
            .clone()
            .map(|v| Expr::InList {
                arg: Box::new(column),
                list: vec![v],
                negated: false,
            })
            .ok_or_else(|| sql.clone()),
    };
    WritePredicate {
        eq_column: (e.op == EqualityOp::Eq && e.value.is_some()).then(|| e.column.column.clone()),
        expr,
        sql,
    }
}

/// The conditions of UPDATE/DELETE pattern `p` on the rows of its table `t`, in the order the
/// analysis lists them (equalities, ranges, residual filters); empty for other statements.
pub fn predicates(p: &AccessPattern, t: &Table) -> Vec<WritePredicate> {
    if !matches!(p.kind, StatementKind::Update | StatementKind::Delete) {
        return Vec::new();
    }
    let a = &p.analysis;
    let from_rows = a
        .write
        .as_ref()
        .map(|w| w.from_rows.as_slice())
        .unwrap_or_default();
    let own = |c: &ColumnRef| c.table == t.key();
    let mut out: Vec<WritePredicate> = a
        .equality
        .iter()
        .filter(|e| own(&e.column) && !on_from_row(e, from_rows))
        .map(equality)
        .collect();
    for r in a.ranges.iter().filter(|r| own(&r.column)) {
        out.extend(range(r));
    }
    // A residual filter may read the rows of the statement's other tables too (named reads).
    for r in &a.residual {
        out.push(WritePredicate {
            eq_column: None,
            expr: r.expr.clone().ok_or_else(|| r.sql.clone()),
            sql: r.sql.clone(),
        });
    }
    out
}

/// The conjuncts of `e` (`a AND b AND c` → `[a, b, c]`).
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => {
            let mut out = conjuncts(left);
            out.extend(conjuncts(right));
            out
        }
        other => vec![other],
    }
}

/// A pattern of `kind` with `analysis`, for unit tests.
#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::{PatternAnalysis, WriteInfo};

    #[test]
    fn every_condition_on_the_written_row_is_listed() {
        let user = ColumnRef::new("sessions", "user_id");
        let revoked = ColumnRef::new("sessions", "revoked_at");
        let p = AccessPattern {
            analysis: PatternAnalysis {
                equality: vec![
                    Predicate {
                        column: user.clone(),
                        op: EqualityOp::Eq,
                        value: Some("$1".into()),
                        rewritten_from: None,
                        expr: Some(Expr::param(1)),
                    },
                    Predicate {
                        column: revoked,
                        op: EqualityOp::IsNull,
                        value: None,
                        rewritten_from: None,
                        expr: None,
                    },
                ],
                write: Some(WriteInfo {
                    table: "sessions".into(),
                    columns_written: Vec::new(),
                    key_columns: vec!["user_id".into()],
                    by_primary_key: false,
                    on_conflict: false,
                    returning: Vec::new(),
                    reads: Vec::new(),
                    values: Vec::new(),
                    conflict: None,
                    from_rows: Vec::new(),
                }),
                ..PatternAnalysis::default()
            },
            ..AccessPattern::new("q1", StatementKind::Delete, "", 1)
        };
        let t = Table {
            name: "sessions".into(),
            ..Table::default()
        };
        let preds = predicates(&p, &t);
        let shown: Vec<(Option<&str>, String)> = preds
            .iter()
            .map(|w| {
                (
                    w.eq_column.as_deref(),
                    w.expr
                        .as_ref()
                        .map_or("untyped".into(), ToString::to_string),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (Some("user_id"), "sessions.user_id = $1".to_string()),
                (None, "sessions.revoked_at IS NULL".to_string()),
            ]
        );
    }
}
