//! A plan's typed expression ([`Expr`]) as Postgres SQL that replay hands to Postgres to evaluate.
//!
//! The model's `Display` of an [`Expr`] is for people (identifiers unquoted, minimal
//! parentheses); replay needs text Postgres reads back exactly: every operand parenthesised
//! (`-(-5)`, never the comment `--5`), parameters as `$n` (bound with the sample's typed values),
//! and each column replaced by what the caller says stands for it (a value of the rows read, a
//! column of a `VALUES` list). Postgres then evaluates it with SQL's semantics — the ones the plan
//! states — in the session's time zone.

use remodel_model::{ColumnRef, Expr, RowRef, UnaryOp};

/// What a column of an expression becomes in SQL, or why it cannot be evaluated here.
pub type ColumnSql<'a> = dyn Fn(&ColumnRef, &RowRef) -> Result<String, String> + 'a;

/// `e` as Postgres SQL; `column` renders each column reference.
pub fn to_sql(e: &Expr, column: &ColumnSql<'_>) -> Result<String, String> {
    let sub = |x: &Expr| to_sql(x, column).map(|s| format!("({s})"));
    Ok(match e {
        Expr::Param { n } => format!("${n}"),
        Expr::Literal { value } => value.to_string(),
        Expr::Column { column: c, row } => column(c, row)?,
        // Replay's clock, which the pattern's SQL reads too (see [`crate::clock`]).
        Expr::Now => crate::clock::NOW_SQL.into(),
        Expr::CurrentDate => crate::clock::CURRENT_DATE_SQL.into(),
        Expr::Row { items } => {
            let items = items
                .iter()
                .map(|x| to_sql(x, column))
                .collect::<Result<Vec<_>, _>>()?;
            format!("ROW({})", items.join(", "))
        }
        // The application's own computation, as Postgres evaluates it (on replay's clock).
        Expr::Computed { sql, .. } => format!("({})", crate::clock::clocked(sql)),
        Expr::Unary { op, arg } => match op {
            UnaryOp::Not => format!("NOT {}", sub(arg)?),
            UnaryOp::Neg => format!("-{}", sub(arg)?),
        },
        Expr::Binary { op, left, right } => format!("{} {} {}", sub(left)?, op.sql(), sub(right)?),
        Expr::IsNull { arg, negated } => {
            let not = if *negated { "NOT " } else { "" };
            format!("{} IS {not}NULL", sub(arg)?)
        }
        Expr::InList { arg, list, negated } => in_list(arg, list, *negated, column)?,
        Expr::Like {
            arg,
            pattern,
            case_insensitive,
            negated,
        } => format!(
            "{} {}{} {}",
            sub(arg)?,
            if *negated { "NOT " } else { "" },
            if *case_insensitive { "ILIKE" } else { "LIKE" },
            sub(pattern)?
        ),
        Expr::Cast { arg, to } => format!("CAST({} AS {})", to_sql(arg, column)?, to.sql()),
        Expr::Call { function, args } => {
            let items = args
                .iter()
                .map(|a| to_sql(a, column))
                .collect::<Result<Vec<_>, _>>()?;
            format!("{}({})", function.name(), items.join(", "))
        }
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let mut s = "CASE".to_string();
            if let Some(o) = operand {
                s.push_str(&format!(" {}", sub(o)?));
            }
            for b in branches {
                s.push_str(&format!(" WHEN {} THEN {}", sub(&b.when)?, sub(&b.then)?));
            }
            if let Some(o) = otherwise {
                s.push_str(&format!(" ELSE {}", sub(o)?));
            }
            s.push_str(" END");
            s
        }
    })
}

/// `a IN (…)`; a lone parameter in the list stands for an array of values (`a = ANY($n)`), as
/// the model states.
fn in_list(
    arg: &Expr,
    list: &[Expr],
    negated: bool,
    column: &ColumnSql<'_>,
) -> Result<String, String> {
    let a = format!("({})", to_sql(arg, column)?);
    if let [Expr::Param { n }] = list {
        return Ok(if negated {
            format!("{a} <> ALL(${n})")
        } else {
            format!("{a} = ANY(${n})")
        });
    }
    let items = list
        .iter()
        .map(|x| to_sql(x, column))
        .collect::<Result<Vec<_>, _>>()?;
    let not = if negated { "NOT " } else { "" };
    Ok(format!("{a} {not}IN ({})", items.join(", ")))
}

/// Renders an expression that must read no column (a bind, a LIMIT).
pub fn column_free(e: &Expr) -> Result<String, String> {
    to_sql(e, &|c, _| {
        Err(format!(
            "it reads column {c}, where only parameters may appear"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::{BinaryOp, Function, Literal, ScalarType};

    #[test]
    fn renders_postgres_sql_with_every_operand_parenthesised() {
        let neg = Expr::Unary {
            op: UnaryOp::Neg,
            arg: Box::new(Expr::Literal {
                value: Literal::Integer { value: -5 },
            }),
        };
        assert_eq!(column_free(&neg).unwrap(), "-(-5)");
        let e = Expr::binary(
            BinaryOp::Sub,
            Expr::Now,
            Expr::Cast {
                arg: Box::new(Expr::param(2)),
                to: ScalarType::Interval,
            },
        );
        assert_eq!(
            column_free(&e).unwrap(),
            "(current_setting('remodel.now')::timestamptz) - (CAST($2 AS interval))"
        );
        let trunc = Expr::Call {
            function: Function::DateTrunc,
            args: vec![
                Expr::Literal {
                    value: Literal::Text {
                        value: "day".into(),
                    },
                },
                Expr::param(1),
            ],
        };
        assert_eq!(column_free(&trunc).unwrap(), "date_trunc('day', $1)");
    }

    #[test]
    fn columns_are_what_the_caller_says() {
        let c = ColumnRef::new("Orders", "placed at");
        let e = Expr::InList {
            arg: Box::new(Expr::column(c.clone())),
            list: vec![Expr::param(3)],
            negated: false,
        };
        let sql = to_sql(&e, &|c, _| Ok(format!("\"{}\"", c.column))).unwrap();
        assert_eq!(sql, "(\"placed at\") = ANY($3)");
        assert!(column_free(&e).unwrap_err().contains("Orders.placed at"));
    }
}
