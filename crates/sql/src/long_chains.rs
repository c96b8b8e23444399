//! Keeps parsed statements shallow enough for recursive walks.
//!
//! sqlparser parses `a AND b AND c …` in a loop, so its recursion limit (which bounds parentheses
//! and prefix operators) does not bound a left-leaning chain of infix operators: a WHERE of
//! 80,000 `AND` terms is a tree 80,000 levels deep, and every recursive walk of it (visitors,
//! `Display`, even `Drop`) overflows the stack. [`make_shallow`] runs right after parsing:
//! long `AND`/`OR` chains are rebalanced (both are associative, so any tree shape means the
//! same, and the terms keep their order), and any other chain longer than [`MAX_CHAIN`] is
//! refused, taken apart one level at a time so that dropping it cannot overflow either.

use sqlparser::ast::{BinaryOperator, Expr, Statement, Value, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Chains of `AND`/`OR` longer than this are rebalanced.
const REBALANCE_AT: usize = 32;

/// Longest chain of other infix or postfix operators accepted.
pub const MAX_CHAIN: usize = 2_000;

/// Why a statement was refused: an operator chain too long to walk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an expression chains more than {MAX_CHAIN} `{op}` operators: too deep to analyze")]
pub struct TooDeep {
    /// The operator of the chain, as SQL.
    pub op: String,
}

/// Rebalances long `AND`/`OR` chains in place; refuses (and empties) other chains longer than
/// [`MAX_CHAIN`]. After it returns `Ok`, no chain in `stmt` is deeper than `MAX_CHAIN`.
/// Either way the statement can then be dropped safely: a refused chain is replaced by `NULL`.
pub fn make_shallow(stmt: &mut Statement) -> Result<(), TooDeep> {
    let mut v = Shallow { refused: None };
    let _ = stmt.visit(&mut v);
    match v.refused {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct Shallow {
    /// The first chain refused; the walk goes on so that every deep chain is taken apart.
    refused: Option<TooDeep>,
}

impl VisitorMut for Shallow {
    type Break = ();

    // Runs before the children are visited: a chain is fixed from its top, so the walk never
    // descends into a deep one.
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if chain_len(e, REBALANCE_AT) < REBALANCE_AT {
            return ControlFlow::Continue(());
        }
        if let Expr::BinaryOp {
            op: op @ (BinaryOperator::And | BinaryOperator::Or),
            ..
        } = e
        {
            let op = op.clone();
            rebalance(e, op);
        }
        if chain_len(e, MAX_CHAIN + 1) > MAX_CHAIN {
            // Never `Display` the chain itself: that would recurse once per level.
            let op = match &*e {
                Expr::BinaryOp { op, .. } => op.to_string(),
                Expr::Cast { .. } => "::".into(),
                Expr::AtTimeZone { .. } => "AT TIME ZONE".into(),
                _ => "postfix".into(),
            };
            dismantle(std::mem::replace(e, null()));
            self.refused.get_or_insert(TooDeep { op });
        }
        ControlFlow::Continue(())
    }
}

fn null() -> Expr {
    Expr::Value(Value::Null.into())
}

/// The operand an infix or postfix operator was parsed after (`a` of `a + b`, `a IS NULL`,
/// `a::int`): the edge a parse loop, not a recursion, builds.
fn first_child(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::BinaryOp { left, .. }
        | Expr::AnyOp { left, .. }
        | Expr::AllOp { left, .. }
        | Expr::IsDistinctFrom(left, _)
        | Expr::IsNotDistinctFrom(left, _) => Some(left),
        Expr::IsFalse(x)
        | Expr::IsNotFalse(x)
        | Expr::IsTrue(x)
        | Expr::IsNotTrue(x)
        | Expr::IsNull(x)
        | Expr::IsNotNull(x)
        | Expr::IsUnknown(x)
        | Expr::IsNotUnknown(x) => Some(x),
        Expr::Cast { expr, .. }
        | Expr::Collate { expr, .. }
        | Expr::In { expr, .. }
        | Expr::Between { expr, .. }
        | Expr::Like { expr, .. }
        | Expr::ILike { expr, .. }
        | Expr::SimilarTo { expr, .. }
        | Expr::RLike { expr, .. }
        | Expr::IsJson { expr, .. }
        | Expr::IsNormalized { expr, .. } => Some(expr),
        Expr::AtTimeZone { timestamp, .. } => Some(timestamp),
        _ => None,
    }
}

/// Length of the chain of first children from `e`, counted up to `cap`.
fn chain_len(e: &mut Expr, cap: usize) -> usize {
    let mut n = 0;
    let mut cur = e;
    while let Some(next) = first_child(cur) {
        n += 1;
        if n >= cap {
            break;
        }
        cur = next;
    }
    n
}

/// Replaces the left-leaning chain of `op` at `e` by a balanced tree of the same terms in the
/// same order (depth log2 of the term count).
fn rebalance(e: &mut Expr, op: BinaryOperator) {
    let mut terms = Vec::new();
    let mut cur = std::mem::replace(e, null());
    loop {
        match cur {
            Expr::BinaryOp { left, op: o, right } if o == op => {
                terms.push(*right);
                cur = *left;
            }
            other => {
                terms.push(other);
                break;
            }
        }
    }
    terms.reverse();
    while terms.len() > 1 {
        let mut pairs = Vec::with_capacity(terms.len().div_ceil(2));
        let mut it = terms.into_iter();
        while let Some(a) = it.next() {
            pairs.push(match it.next() {
                Some(b) => Expr::BinaryOp {
                    left: Box::new(a),
                    op: op.clone(),
                    right: Box::new(b),
                },
                None => a,
            });
        }
        terms = pairs;
    }
    *e = terms.pop().unwrap_or_else(null);
}

/// Drops a deep chain one level at a time (the derived `Drop` would recurse once per level).
fn dismantle(mut e: Expr) {
    while let Some(child) = first_child(&mut e) {
        e = std::mem::replace(child, null());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn parse(sql: &str) -> Statement {
        Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .unwrap()
            .swap_remove(0)
    }

    /// Depth of a balanced tree checked without recursion deeper than the tree itself.
    fn depth(e: &Expr) -> usize {
        match e {
            Expr::BinaryOp { left, right, .. } => 1 + depth(left).max(depth(right)),
            _ => 0,
        }
    }

    #[test]
    fn long_and_chains_become_balanced_and_keep_their_order() {
        let cond: Vec<String> = (0..100_000).map(|i| format!("a <> {i}")).collect();
        let mut s = parse(&format!("SELECT 1 FROM t WHERE {}", cond.join(" AND ")));
        make_shallow(&mut s).unwrap();
        let Statement::Query(q) = &s else { panic!() };
        let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() else {
            panic!()
        };
        let w = sel.selection.as_ref().unwrap();
        assert!(depth(w) <= 20, "depth {}", depth(w));
        let text = w.to_string();
        assert!(text.starts_with("a <> 0 AND a <> 1 AND a <> 2"));
        assert!(text.ends_with("a <> 99998 AND a <> 99999"));
    }

    #[test]
    fn other_long_chains_are_refused_without_overflow() {
        let sum: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
        let mut s = parse(&format!("SELECT 1 FROM t WHERE a = {}", sum.join(" + ")));
        let err = make_shallow(&mut s).unwrap_err();
        assert_eq!(err.op, "+");
        // The refused statement drops (its chain was taken apart).
        drop(s);
        let casts = "a".to_string() + &"::int".repeat(50_000);
        let sum2 = sum.join(" - ");
        let mut s = parse(&format!("SELECT {casts} FROM t WHERE b = {sum2}"));
        assert!(make_shallow(&mut s).is_err());
        drop(s);
    }

    #[test]
    fn short_chains_are_untouched() {
        let sql = "SELECT 1 FROM t WHERE a = 1 AND b = 2 OR c + 1 + 2 > 3";
        let mut s = parse(sql);
        let before = s.clone();
        make_shallow(&mut s).unwrap();
        assert_eq!(s, before);
    }
}
