//! The forms of a pattern's SQL that replay runs on Postgres: the one place outside the front
//! end that rewrites a statement, so it is here, with the parser. Every read of the clock is
//! replaced by the SQL the caller gives ([`ClockSql`]: replay's own clock).
//!
//! - `run`: the statement as the application runs it, except that an `IN` list collapsed to one
//!   placeholder by normalization (`uid IN ($1)`) becomes `uid = ANY($1)`, so that one sample binds
//!   a list of several values (the CQL side binds `IN ?` to the same list).
//! - `full` (reads): every row of the result (no LIMIT, no OFFSET, no row locks) and, when the
//!   query has an ORDER BY, `dense_rank() OVER (ORDER BY …)` as a first column `__tie`: rows with
//!   the same rank are ties, which SQL may return in any order and cut anywhere at the LIMIT. The
//!   comparison needs both (replay's `compare`).
//! - `returning` (writes): the statement with `RETURNING *`, so that values Postgres generates
//!   (defaults, serials) can be handed to the CQL side as the application would supply them.

use remodel_model::ident::fold;
use sqlparser::ast::{
    BinaryOperator, Expr, InTarget, OrderByKind, SelectItem, SetExpr, Statement, Value,
    WildcardAdditionalOptions,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// The SQL that stands for each read of the clock.
#[derive(Debug, Clone, Copy)]
pub struct ClockSql {
    /// `now()`, `current_timestamp` …: an instant (`timestamptz`).
    pub now: &'static str,
    /// `current_date`.
    pub current_date: &'static str,
    /// `localtimestamp`.
    pub localtimestamp: &'static str,
}

/// The forms of one statement (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlForms {
    /// The statement to run.
    pub run: String,
    /// A read's every row, with `__tie` first when `ranked`.
    pub full: Option<String>,
    /// True when `full` starts with the `__tie` rank column.
    pub ranked: bool,
    /// A read's output expressions in order, as far as they can be counted (until the first
    /// `*`): the SQL of each (a plain column too).
    pub outputs: Vec<String>,
    /// Why the rank could not be added to a read with an ORDER BY (ties are then not
    /// recognised: the order must match exactly).
    pub unranked_reason: Option<String>,
    /// A write with `RETURNING *` and each row as JSON (`__row`).
    pub returning: Option<String>,
    /// Parameters (1-based) that stand for an `IN` list and take an array.
    pub list_params: Vec<usize>,
    /// The aliases the statement gives its tables: `(alias, table)`.
    pub aliases: Vec<(String, String)>,
}

struct Aliases(Vec<(String, String)>);

impl sqlparser::ast::Visitor for Aliases {
    type Break = ();

    fn pre_visit_table_factor(&mut self, t: &sqlparser::ast::TableFactor) -> ControlFlow<()> {
        if let sqlparser::ast::TableFactor::Table {
            name,
            alias: Some(alias),
            ..
        } = t
        {
            let table = name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| fold(&i.value, i.quote_style.is_some()));
            if let Some(table) = table {
                let a = fold(&alias.name.value, alias.name.quote_style.is_some());
                self.0.push((a, table));
            }
        }
        ControlFlow::Continue(())
    }
}

fn parse(sql: &str) -> Result<Statement, String> {
    let mut stmts =
        Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| format!("not SQL: {e}"))?;
    if stmts.len() != 1 {
        return Err(format!("{} statements where one was expected", stmts.len()));
    }
    Ok(stmts.remove(0))
}

fn placeholder_index(e: &Expr) -> Option<usize> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Placeholder(p) => p.strip_prefix('$')?.parse().ok(),
            _ => None,
        },
        Expr::Nested(inner) => placeholder_index(inner),
        _ => None,
    }
}

/// `x IN ($n)` → `x = ANY($n)`, `x NOT IN ($n)` → `x <> ALL($n)`; returns the list parameters.
fn lists_to_arrays(stmt: &mut Statement) -> Vec<usize> {
    let mut lists = Vec::new();
    let _ = sqlparser::ast::visit_expressions_mut(stmt, |e| {
        if let Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            ..
        } = e
        {
            if let [only] = list.as_slice() {
                if let Some(n) = placeholder_index(only) {
                    lists.push(n);
                    let left = expr.clone();
                    let right = Box::new(only.clone());
                    *e = if *negated {
                        Expr::AllOp {
                            left,
                            compare_op: BinaryOperator::NotEq,
                            right,
                        }
                    } else {
                        Expr::AnyOp {
                            left,
                            compare_op: BinaryOperator::Eq,
                            right,
                            is_some: false,
                        }
                    };
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    lists.sort_unstable();
    lists.dedup();
    lists
}

/// The forms of `sql` (a normalized statement with `$n` placeholders), on clock `clock`.
pub fn forms(sql: &str, clock: &ClockSql) -> Result<SqlForms, String> {
    let mut stmt = parse(sql)?;
    let list_params = lists_to_arrays(&mut stmt);
    let mut aliases = Aliases(Vec::new());
    let _ = sqlparser::ast::Visit::visit(&stmt, &mut aliases);
    // The outputs as the application wrote them (the plan names an expression's field so).
    let outputs = outputs(&stmt);
    clock_to_replay(&mut stmt, clock)?;
    let mut out = SqlForms {
        run: stmt.to_string(),
        full: None,
        ranked: false,
        outputs,
        unranked_reason: None,
        returning: None,
        list_params,
        aliases: aliases.0,
    };
    match &mut stmt {
        Statement::Query(q) => {
            let mut q = q.clone();
            q.limit_clause = None;
            q.fetch = None;
            q.locks.clear();
            match rank_item(&q) {
                Ok(Some(item)) => match q.body.as_mut() {
                    SetExpr::Select(s) => {
                        s.projection.insert(0, item);
                        out.ranked = true;
                    }
                    _ => out.unranked_reason = Some("the query is not a plain SELECT".into()),
                },
                Ok(None) => {}
                Err(why) => out.unranked_reason = Some(why),
            }
            out.full = Some(q.to_string());
        }
        Statement::Insert(i) => {
            let name = match &i.table {
                sqlparser::ast::TableObject::TableName(n) => last_ident(n),
                _ => None,
            };
            let alias = i.table_alias.as_ref().map(|a| &a.alias);
            i.returning = Some(returning(alias, name)?);
            out.returning = Some(stmt.to_string());
        }
        Statement::Update(u) => {
            let (name, alias) = factor_name(&u.table.relation);
            u.returning = Some(returning(alias, name)?);
            out.returning = Some(stmt.to_string());
        }
        Statement::Delete(d) => {
            let first = match &d.from {
                sqlparser::ast::FromTable::WithFromKeyword(t)
                | sqlparser::ast::FromTable::WithoutKeyword(t) => t.first(),
            };
            let (name, alias) = first.map_or((None, None), |t| factor_name(&t.relation));
            d.returning = Some(returning(alias, name)?);
            out.returning = Some(stmt.to_string());
        }
        _ => {}
    }
    Ok(out)
}

/// A read's output expressions in order, until the first `*`.
fn outputs(stmt: &Statement) -> Vec<String> {
    let Statement::Query(q) = stmt else {
        return Vec::new();
    };
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return Vec::new();
    };
    sel.projection
        .iter()
        .map_while(|item| match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                Some(e.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Every read of the clock (`now()`, `current_timestamp`, `current_date`, `localtimestamp` …)
/// becomes a read of `clock`, so a replay does not depend on the day.
fn clock_to_replay(stmt: &mut Statement, clock: &ClockSql) -> Result<(), String> {
    let mut failed = None;
    let _ = sqlparser::ast::visit_expressions_mut(stmt, |e| replace_clock(e, clock, &mut failed));
    failed.map_or(Ok(()), Err)
}

/// The SQL expression `sql` with every read of the clock a read of `clock`.
pub fn on_clock(sql: &str, clock: &ClockSql) -> Result<String, String> {
    let mut e = parse_expr(sql)?;
    let mut failed = None;
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |x| replace_clock(x, clock, &mut failed));
    failed.map_or(Ok(e.to_string()), Err)
}

/// `e` replaced by `clock` when it reads the clock; a replacement that does not parse stops the
/// visit with the reason in `failed`.
fn replace_clock(e: &mut Expr, clock: &ClockSql, failed: &mut Option<String>) -> ControlFlow<()> {
    let Expr::Function(f) = e else {
        return ControlFlow::Continue(());
    };
    let Some(sql) = clock_sql(f, clock) else {
        return ControlFlow::Continue(());
    };
    match parse_expr(&sql) {
        Ok(x) => *e = Expr::Nested(Box::new(x)),
        Err(why) => {
            *failed = Some(why);
            return ControlFlow::Break(());
        }
    }
    ControlFlow::Continue(())
}

/// The SQL of `clock` standing for clock function `f`, `None` for another function.
fn clock_sql(f: &sqlparser::ast::Function, clock: &ClockSql) -> Option<String> {
    use sqlparser::ast::FunctionArguments as A;
    let (now, current_date, localtimestamp) = (clock.now, clock.current_date, clock.localtimestamp);
    let [part] = f.name.0.as_slice() else {
        return None;
    };
    let name = part.as_ident()?.value.to_ascii_lowercase();
    // `current_timestamp(3)`: the precision, kept as a cast.
    let precision = match &f.args {
        A::None => None,
        A::List(l) if l.args.is_empty() => None,
        A::List(l) if l.args.len() == 1 => Some(l.args[0].to_string()),
        _ => return None,
    };
    let typed = |ty: &str| match &precision {
        Some(p) => format!("({now})::{ty}({p})"),
        None => format!("({now})::{ty}"),
    };
    Some(match name.as_str() {
        "now" | "transaction_timestamp" | "statement_timestamp" | "clock_timestamp"
            if precision.is_none() =>
        {
            now.to_string()
        }
        "current_timestamp" if precision.is_none() => now.to_string(),
        "current_timestamp" => typed("timestamptz"),
        "current_date" if precision.is_none() => current_date.to_string(),
        "localtimestamp" if precision.is_none() => localtimestamp.to_string(),
        "localtimestamp" => typed("timestamp"),
        "current_time" => typed("timetz"),
        "localtime" => typed("time"),
        _ => return None,
    })
}

fn parse_expr(sql: &str) -> Result<Expr, String> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("`{sql}` did not parse: {e}"))
}

fn last_ident(n: &sqlparser::ast::ObjectName) -> Option<&sqlparser::ast::Ident> {
    n.0.last().and_then(|p| p.as_ident())
}

fn factor_name(
    t: &sqlparser::ast::TableFactor,
) -> (
    Option<&sqlparser::ast::Ident>,
    Option<&sqlparser::ast::Ident>,
) {
    match t {
        sqlparser::ast::TableFactor::Table { name, alias, .. } => {
            (last_ident(name), alias.as_ref().map(|a| &a.name))
        }
        _ => (None, None),
    }
}

/// `RETURNING *, to_json(<the written table's alias or name>)::text AS __row`: the rows as
/// they are after the write (those removed, for a DELETE), each also as one JSON value.
fn returning(
    alias: Option<&sqlparser::ast::Ident>,
    name: Option<&sqlparser::ast::Ident>,
) -> Result<Vec<SelectItem>, String> {
    let wildcard = SelectItem::Wildcard(WildcardAdditionalOptions::default());
    let Some(r) = alias.or(name) else {
        return Ok(vec![wildcard]);
    };
    match parse(&format!("SELECT to_json({r})::text AS __row"))? {
        Statement::Query(q) => match *q.body {
            SetExpr::Select(mut s) if s.projection.len() == 1 => {
                Ok(vec![wildcard, s.projection.remove(0)])
            }
            _ => Err("row column did not parse".into()),
        },
        _ => Err("row column did not parse".into()),
    }
}

/// `dense_rank() OVER (ORDER BY …) AS __tie` for a query with an ORDER BY (positions and output
/// names resolved to the expressions they name); `None` without ORDER BY.
fn rank_item(q: &sqlparser::ast::Query) -> Result<Option<SelectItem>, String> {
    let Some(order) = &q.order_by else {
        return Ok(None);
    };
    let OrderByKind::Expressions(items) = &order.kind else {
        return Err("ORDER BY ALL".into());
    };
    let SetExpr::Select(select) = q.body.as_ref() else {
        return Err("the query is not a plain SELECT".into());
    };
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        let expr = resolve_output_ref(&item.expr, &select.projection)?;
        parts.push(format!("{expr} {}", item.options).trim_end().to_string());
    }
    let text = format!(
        "SELECT dense_rank() OVER (ORDER BY {}) AS __tie",
        parts.join(", ")
    );
    match parse(&text)? {
        Statement::Query(q) => match *q.body {
            SetExpr::Select(mut s) if s.projection.len() == 1 => Ok(s.projection.pop()),
            _ => Err("rank column did not parse".into()),
        },
        _ => Err("rank column did not parse".into()),
    }
}

/// An ORDER BY item that names an output column (`ORDER BY 2`, `ORDER BY total`) stands for that
/// column's expression (a window's ORDER BY cannot name outputs).
fn resolve_output_ref(e: &Expr, projection: &[SelectItem]) -> Result<Expr, String> {
    if let Expr::Value(v) = e {
        if let Value::Number(n, _) = &v.value {
            let pos: usize = n
                .parse()
                .map_err(|_| format!("ORDER BY {n} is not a position"))?;
            return match pos.checked_sub(1).and_then(|i| projection.get(i)) {
                Some(SelectItem::UnnamedExpr(x))
                | Some(SelectItem::ExprWithAlias { expr: x, .. }) => Ok(x.clone()),
                _ => Err(format!("ORDER BY {pos} names no plain output expression")),
            };
        }
    }
    if let Expr::Identifier(id) = e {
        let aliased = projection.iter().find_map(|p| match p {
            SelectItem::ExprWithAlias { expr, alias } if alias.value == id.value => Some(expr),
            _ => None,
        });
        if let Some(x) = aliased {
            return Ok(x.clone());
        }
    }
    Ok(e.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock as replay's: a session setting.
    const CLOCK: ClockSql = ClockSql {
        now: "current_setting('remodel.now')::timestamptz",
        current_date: "(current_setting('remodel.now')::timestamptz)::date",
        localtimestamp: "(current_setting('remodel.now')::timestamptz)::timestamp",
    };

    #[test]
    fn every_clock_read_is_replays_clock() {
        let f = forms(
            "SELECT id, now() - created_at AS age FROM sessions WHERE expires_at > CURRENT_TIMESTAMP \
             AND day >= current_date AND seen < localtimestamp(0) AND t < transaction_timestamp()",
            &CLOCK,
        )
        .unwrap();
        let run = f.run.to_ascii_lowercase();
        for gone in [
            "now()",
            "current_timestamp",
            "current_date",
            "localtimestamp(",
            "transaction_timestamp",
        ] {
            assert!(
                !run.replace("remodel.now", "").contains(gone),
                "{gone} left in {run}"
            );
        }
        assert_eq!(
            run.matches("current_setting('remodel.now')").count(),
            5,
            "{run}"
        );
        assert!(run.contains("::timestamp(0)"), "{run}");
        // The output is named as the application wrote it.
        assert_eq!(f.outputs, vec!["id", "now() - created_at"]);
        let w = forms("INSERT INTO t (id, at) VALUES ($1, now())", &CLOCK).unwrap();
        assert!(w
            .returning
            .unwrap()
            .contains("current_setting('remodel.now')"));
        // A function of the same name in another schema is not the clock.
        let other = forms("SELECT app.now() FROM t", &CLOCK).unwrap();
        assert_eq!(other.run, "SELECT app.now() FROM t");
    }

    #[test]
    fn reads_get_every_row_and_a_rank() {
        let f = forms(
            "SELECT b.book_id, b.holds FROM books b JOIN branches br ON br.branch_id = b.owner_branch \
             WHERE b.shelf = $1 AND br.city = $2 ORDER BY b.due_at LIMIT $3",
            &CLOCK,
        )
        .unwrap();
        let full = f.full.unwrap();
        assert!(f.ranked);
        assert_eq!(f.outputs, vec!["b.book_id", "b.holds"]);
        assert!(
            full.starts_with("SELECT dense_rank() OVER (ORDER BY b.due_at) AS __tie, b.book_id"),
            "{full}"
        );
        assert!(!full.contains("LIMIT"), "{full}");
        assert!(full.ends_with("ORDER BY b.due_at"), "{full}");
        assert_eq!(
            f.aliases,
            vec![
                ("b".into(), "books".into()),
                ("br".into(), "branches".into())
            ]
        );
    }

    #[test]
    fn output_names_and_positions_resolve() {
        let f = forms("SELECT a AS x, count(*) AS n FROM t GROUP BY a ORDER BY n DESC, 1 LIMIT 5 OFFSET $1 FOR UPDATE", &CLOCK)
            .unwrap();
        let full = f.full.unwrap();
        assert!(
            full.starts_with("SELECT dense_rank() OVER (ORDER BY count(*) DESC, a) AS __tie"),
            "{full}"
        );
        assert!(
            !full.contains("OFFSET") && !full.contains("FOR UPDATE"),
            "{full}"
        );
    }

    #[test]
    fn one_placeholder_in_lists_become_arrays() {
        let f = forms(
            "SELECT uid, name FROM user_profiles WHERE uid IN ($1) AND x NOT IN ($2)",
            &CLOCK,
        )
        .unwrap();
        assert_eq!(f.list_params, vec![1, 2]);
        assert!(f.run.contains("uid = ANY($1)"), "{}", f.run);
        assert!(f.run.contains("x <> ALL($2)"), "{}", f.run);
        assert!(f.full.is_some() && !f.ranked);
    }

    #[test]
    fn aliases_fold_as_postgres_stores_them() {
        let long = "a".repeat(70);
        let f = forms(
            &format!("SELECT x FROM \"Books\" AS ÉB, Members {long}"),
            &CLOCK,
        )
        .unwrap();
        // Unquoted: ASCII letters only to lower case (É stays), cut at 63 bytes.
        assert_eq!(
            f.aliases,
            vec![
                ("Éb".into(), "Books".into()),
                ("a".repeat(63), "members".into())
            ]
        );
    }

    #[test]
    fn writes_return_their_rows() {
        let f = forms("UPDATE books SET due_at = $1 WHERE book_id = $2", &CLOCK).unwrap();
        assert_eq!(
            f.returning.as_deref(),
            Some(
                "UPDATE books SET due_at = $1 WHERE book_id = $2 RETURNING *, to_json(books)::TEXT AS __row"
            )
        );
        let f = forms("DELETE FROM \"Books\" b WHERE b.id = $1", &CLOCK).unwrap();
        assert!(f
            .returning
            .unwrap()
            .ends_with("RETURNING *, to_json(b)::TEXT AS __row"),);
        assert!(forms("not sql at all", &CLOCK).is_err());
    }
}
