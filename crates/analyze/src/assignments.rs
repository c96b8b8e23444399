//! UPDATE assignments that read the column they set (`SET n = n + 1`): in CQL these are
//! read-modify-write (or a counter), so the designer has to plan a read first.

use crate::exprs::{bare_name, ident};
use sqlparser::ast::{visit_expressions, AssignmentTarget, Expr, Statement};
use std::ops::ControlFlow;

/// Columns an UPDATE sets from their own old value (`SET n = n + 1`), folded as Postgres folds
/// them. A statement that does not parse yields none.
pub fn self_referencing_sets(sql: &str) -> Vec<String> {
    let Ok(stmts) =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for stmt in &stmts {
        let Statement::Update(update) = stmt else {
            continue;
        };
        for a in &update.assignments {
            let AssignmentTarget::ColumnName(name) = &a.target else {
                continue;
            };
            let target = bare_name(name);
            let mut reads_itself = false;
            let _ = visit_expressions(&a.value, |e| {
                let column = match e {
                    Expr::Identifier(i) => Some(ident(i)),
                    Expr::CompoundIdentifier(parts) => parts.last().map(ident),
                    _ => None,
                };
                if column.as_deref() == Some(target.as_str()) {
                    reads_itself = true;
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            if reads_itself && !out.contains(&target) {
                out.push(target);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::self_referencing_sets;

    #[test]
    fn finds_sets_that_read_their_old_value() {
        assert_eq!(
            self_referencing_sets(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1, d_tax = $1 WHERE d_w_id = $2"
            ),
            ["d_next_o_id"]
        );
        assert_eq!(
            self_referencing_sets("UPDATE a SET x = $1 WHERE id = $2"),
            Vec::<String>::new()
        );
        assert_eq!(
            self_referencing_sets("UPDATE a SET x = coalesce(a.x, 0) - $1"),
            ["x"]
        );
        assert_eq!(
            self_referencing_sets("UPDATE a SET \"X\" = \"X\" + 1, y = \"Y\" + 1"),
            ["X"]
        );
        assert_eq!(
            self_referencing_sets("not sql at all"),
            Vec::<String>::new()
        );
    }
}
