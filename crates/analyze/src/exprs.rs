//! Small helpers over sqlparser expressions: identifier folding, column references, subqueries.

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArguments, Ident, ObjectName, Query, Visit, Visitor,
};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// The name Postgres stores for an identifier: unquoted names fold to lower case.
pub fn ident(id: &Ident) -> String {
    remodel_model::ident::fold(&id.value, id.quote_style.is_some())
}

/// The first two words of a node as SQL (`CREATE TABLE`, `TABLE t`): names what was not modelled.
pub fn leading_words(node: &impl std::fmt::Display) -> String {
    node.to_string()
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts of a (possibly qualified) object name, folded.
pub fn object_parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| p.as_ident().map(ident).unwrap_or_else(|| p.to_string()))
        .collect()
}

/// The last part of an object name (the bare table or column name), folded.
pub fn bare_name(name: &ObjectName) -> String {
    object_parts(name).pop().unwrap_or_default()
}

/// Collects identifier paths (`a`, `t.a`) outside nested queries, ignoring the names of named
/// function arguments (`make_interval(days => $2)` names no column).
#[derive(Default)]
struct ColumnCollector {
    depth: usize,
    skip: HashSet<*const Expr>,
    paths: Vec<Vec<String>>,
}

impl Visitor for ColumnCollector {
    type Break = ();

    fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth > 0 || self.skip.contains(&(e as *const Expr)) {
            return ControlFlow::Continue(());
        }
        match e {
            Expr::Identifier(id) => self.paths.push(vec![ident(id)]),
            Expr::CompoundIdentifier(ids) => self.paths.push(ids.iter().map(ident).collect()),
            Expr::Function(f) => {
                if let FunctionArguments::List(list) = &f.args {
                    for a in &list.args {
                        if let FunctionArg::ExprNamed { name, .. } = a {
                            self.skip.insert(name as *const Expr);
                        }
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The first call, on a column, of a function `defined` says the schema defines (its name as
/// written): `inventory_in_stock(inventory_id)`. A call on parameters only is a value the
/// application computes, not this.
pub fn defined_function_on_columns<V: Visit>(
    v: &V,
    defined: impl Fn(&str) -> bool,
) -> Option<String> {
    struct F<D: Fn(&str) -> bool>(D);
    impl<D: Fn(&str) -> bool> Visitor for F<D> {
        type Break = String;
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<String> {
            match e {
                Expr::Function(f)
                    if (self.0)(&f.name.to_string()) && !column_paths(e).is_empty() =>
                {
                    ControlFlow::Break(f.name.to_string())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    match v.visit(&mut F(defined)) {
        ControlFlow::Break(name) => Some(name),
        ControlFlow::Continue(()) => None,
    }
}

/// Identifier paths referenced by `e` itself (not inside its subqueries).
pub fn column_paths(e: &Expr) -> Vec<Vec<String>> {
    let mut c = ColumnCollector::default();
    let _ = e.visit(&mut c);
    c.paths
}

/// Collects (copies of) the outermost queries nested in an expression. Copies, because the
/// visitor API lends nodes for the duration of one call only; statements are small.
#[derive(Default)]
struct SubqueryCollector {
    depth: usize,
    found: Vec<Query>,
}

impl Visitor for SubqueryCollector {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.found.push(q.clone());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

/// The outermost subqueries of an expression (scalar, `IN (SELECT …)`, `EXISTS`).
pub fn subqueries(e: &Expr) -> Vec<Query> {
    let mut c = SubqueryCollector::default();
    let _ = e.visit(&mut c);
    c.found
}

/// True when the expression (anywhere, subqueries included) calls a window function.
pub fn has_window_function<V: Visit>(v: &V) -> bool {
    struct W;
    impl Visitor for W {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    v.visit(&mut W).is_break()
}
