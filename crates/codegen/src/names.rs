//! The names of the generated functions and of their parameters, the same for every language
//! (each backend spells them its way: `trips_by_driver_id`, `tripsByDriverId`).
//!
//! A function's name is the plan's (`design.queries[].function`, `design.writes[].function`,
//! decided by the designer), spelled by each backend its way.
//! A parameter is named after what it binds: the column it is compared with or assigned to
//! (`driver_id`), a range's bound (`started_at_from`, `started_at_to`), `limit`, `offset`.

use crate::Error;
use remodel_model::{AccessPattern, BinaryOp, Expr, Plan};
use std::collections::BTreeMap;

pub use remodel_model::text::snake;

/// `trips_by_driver_id` → `TripsByDriverId`.
pub fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// `trips_by_driver_id` → `tripsByDriverId`.
pub fn camel(snake: &str) -> String {
    let p = pascal(snake);
    let mut c = p.chars();
    match c.next() {
        Some(f) => f.to_ascii_lowercase().to_string() + c.as_str(),
        None => p,
    }
}

/// Refuses a package name that is not dotted snake_case identifiers (`rideshare_dal`,
/// `com.example.rides`).
pub fn check_package(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::Package(
            name.to_string(),
            "use lower-case letters, digits and `_`, parts apart by `.` (rideshare_dal)".into(),
        ))
    }
}

/// The function name of every pattern the plan executes (reads and writes that are not
/// one-off), in plan order, as the plan states it; a plan that leaves one out is refused.
pub fn functions(plan: &Plan) -> Result<Vec<(String, String)>, Error> {
    let reads = plan.design.queries.iter().filter(|q| !q.one_off);
    let reads = reads.map(|q| (&q.pattern, &q.function));
    let writes = plan.design.writes.iter().filter(|w| !w.one_off);
    let writes = writes.map(|w| (&w.pattern, &w.function));
    reads
        .chain(writes)
        .map(|(pattern, function)| match function {
            Some(f) => Ok((pattern.clone(), f.clone())),
            None => Err(Error::Unnamed(pattern.clone())),
        })
        .collect()
}

/// The name of each parameter of `p` (`$1` first), in snake_case, distinct.
pub fn params(plan: &Plan, p: &AccessPattern) -> Vec<String> {
    let n = p
        .analysis
        .params
        .iter()
        .map(|x| x.n)
        .max()
        .unwrap_or(0)
        .max(max_param(plan, p));
    let mut found: BTreeMap<u32, String> = BTreeMap::new();
    let mut name = |e: Option<&Expr>, what: String| {
        if let Some(Expr::Param { n }) = e.map(single_param) {
            found.entry(*n).or_insert(what);
        }
    };
    if let Some(w) = plan.design.writes.iter().find(|w| w.pattern == p.id) {
        for v in &w.values {
            name(Some(&v.value), snake(&v.column.column));
        }
    }
    let a = &p.analysis;
    for e in &a.equality {
        name(e.expr.as_ref(), snake(&e.column.column));
    }
    for r in &a.ranges {
        let c = snake(&r.column.column);
        name(
            r.lower.as_ref().and_then(|b| b.expr.as_ref()),
            format!("{c}_from"),
        );
        name(
            r.upper.as_ref().and_then(|b| b.expr.as_ref()),
            format!("{c}_to"),
        );
    }
    name(a.limit_expr.as_ref(), "limit".into());
    name(a.offset_expr.as_ref(), "offset".into());
    let mut compared: Vec<(u32, String)> = Vec::new();
    for e in exprs_of(plan, p) {
        e.walk(&mut |x| {
            if let Some((k, c)) = compared_with(x) {
                compared.push((k, c));
            }
        });
    }
    for (k, c) in compared {
        found.entry(k).or_insert(c);
    }
    let mut out: Vec<String> = Vec::with_capacity(n as usize);
    for k in 1..=n {
        let mut s = found.get(&k).cloned().unwrap_or_else(|| format!("p{k}"));
        if out.contains(&s) {
            s = format!("{s}_{k}");
        }
        out.push(s);
    }
    out
}

/// `e` itself, or the one parameter of an `IN ($n)` list.
fn single_param(e: &Expr) -> &Expr {
    match e {
        Expr::InList { list, .. } if matches!(list.as_slice(), [Expr::Param { .. }]) => &list[0],
        other => other,
    }
}

/// `(n, column)` for `column op $n` (or `$n op column`, `column IN ($n)`).
fn compared_with(e: &Expr) -> Option<(u32, String)> {
    let pair = |a: &Expr, b: &Expr| match (a, b) {
        (Expr::Column { column, .. }, Expr::Param { n }) => Some((*n, snake(&column.column))),
        _ => None,
    };
    match e {
        Expr::Binary { op, left, right }
            if !matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Concat) =>
        {
            pair(left, right).or_else(|| pair(right, left))
        }
        Expr::InList { arg, list, .. } if list.len() == 1 => pair(arg, &list[0]),
        Expr::Like { arg, pattern, .. } => pair(arg, pattern),
        _ => None,
    }
}

/// Every typed expression the plan states for pattern `p` (its read's binds and client work,
/// its write's values, filters and binds), for naming and typing parameters.
pub fn exprs_of<'p>(plan: &'p Plan, p: &AccessPattern) -> Vec<&'p Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    if let Some(q) = plan.design.queries.iter().find(|q| q.pattern == p.id) {
        out.extend(q.exprs());
    }
    if let Some(w) = plan.design.writes.iter().find(|w| w.pattern == p.id) {
        out.extend(w.exprs());
    }
    out
}

/// The highest `$n` any of the pattern's expressions reads.
fn max_param(plan: &Plan, p: &AccessPattern) -> u32 {
    exprs_of(plan, p)
        .iter()
        .flat_map(|e| e.params())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pascal_and_camel_case() {
        assert_eq!(pascal("trips_by_driver_id"), "TripsByDriverId");
        assert_eq!(camel("trips_by_driver_id"), "tripsByDriverId");
    }

    #[test]
    fn package_names_are_checked() {
        assert!(check_package("rideshare_dal").is_ok());
        assert!(check_package("com.example.rides").is_ok());
        assert!(check_package("Rides").is_err());
        assert!(check_package("").is_err());
        assert!(check_package("a..b").is_err());
    }
}
