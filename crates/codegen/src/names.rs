//! The names of the generated functions and of their parameters, the same for every language
//! (each backend spells them its way: `trips_by_driver_id`, `tripsByDriverId`).
//!
//! A function is named by the pattern's `name` (a sqlc-style `-- name: TripsOfDriver :many`
//! annotation of the workload file) when it has one, else from its table and predicate:
//! `trips_by_driver_id`, `count_likes_by_post_id`, `insert_trips`, `update_trips_status_by_trip_id`.
//! Names that would collide all take their pattern id (`trips_by_driver_id_q1`), so a name
//! depends on the plan only, never on the order patterns are met in: stable across runs.
//! A parameter is named after what it binds: the column it is compared with or assigned to
//! (`driver_id`), a range's bound (`started_at_from`, `started_at_to`), `limit`, `offset`.

use crate::Error;
use remodel_model::{AccessPattern, BinaryOp, Expr, Plan, StatementKind};
use std::collections::BTreeMap;

/// A snake_case identifier of `text`: ASCII letters, digits and `_`, lower case, words of a
/// camel-cased name apart (`TripsOfDriver` → `trips_of_driver`), never starting with a digit.
pub fn snake(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let trimmed = out.trim_matches('_').to_string();
    match trimmed.chars().next() {
        None => "x".into(),
        Some(c) if c.is_ascii_digit() => format!("n{trimmed}"),
        Some(_) => trimmed,
    }
}

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
/// one-off), by pattern id.
pub fn functions(plan: &Plan) -> BTreeMap<String, String> {
    let mut base: Vec<(String, String)> = Vec::new();
    for q in plan.design.queries.iter().filter(|q| !q.one_off) {
        if let Some(p) = plan.workload.pattern(&q.pattern) {
            base.push((p.id.clone(), base_name(p)));
        }
    }
    for w in plan.design.writes.iter().filter(|w| !w.one_off) {
        if let Some(p) = plan.workload.pattern(&w.pattern) {
            base.push((p.id.clone(), base_name(p)));
        }
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, n) in &base {
        *count.entry(n.as_str()).or_default() += 1;
    }
    base.iter()
        .map(|(id, n)| {
            let name = if count[n.as_str()] > 1 {
                format!("{n}_{}", snake(id))
            } else {
                n.clone()
            };
            (id.clone(), name)
        })
        .collect()
}

/// The name a pattern's function takes before collisions are settled.
fn base_name(p: &AccessPattern) -> String {
    if let Some(n) = &p.name {
        return snake(n);
    }
    let a = &p.analysis;
    let table = a
        .write
        .as_ref()
        .map(|w| w.table.as_str())
        .or(a.tables.first().map(String::as_str))
        .unwrap_or("rows");
    let table = snake(table);
    let by = |cols: Vec<String>| -> String {
        if cols.is_empty() {
            String::new()
        } else {
            format!("_by_{}", cols.join("_and_"))
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for c in a
        .equality
        .iter()
        .map(|e| &e.column)
        .chain(a.ranges.iter().map(|r| &r.column))
    {
        let c = snake(&c.column);
        if !keys.contains(&c) {
            keys.push(c);
        }
    }
    match p.kind {
        StatementKind::Select => {
            let verb = a
                .aggregates
                .first()
                .map(|g| format!("{}_", snake(&g.function)))
                .unwrap_or_default();
            let all = if keys.is_empty() { "all_" } else { "" };
            format!("{verb}{all}{table}{}", by(keys))
        }
        StatementKind::Insert => {
            let upsert = a.write.as_ref().is_some_and(|w| w.on_conflict);
            format!("{}_{table}", if upsert { "upsert" } else { "insert" })
        }
        StatementKind::Update => {
            let set: Vec<String> = a
                .write
                .as_ref()
                .map(|w| w.columns_written.iter().map(|c| snake(c)).collect())
                .unwrap_or_default();
            let set = match set.len() {
                0 => String::new(),
                1..=3 => format!("_{}", set.join("_and_")),
                _ => format!("_{}_etc", set[..3].join("_and_")),
            };
            format!("update_{table}{set}{}", by(keys))
        }
        StatementKind::Delete => format!("delete_{table}{}", by(keys)),
    }
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
    fn identifiers_are_snake_case_whatever_they_were() {
        assert_eq!(snake("TripsOfDriver"), "trips_of_driver");
        assert_eq!(snake("auth.users"), "auth_users");
        assert_eq!(snake("user-accounts"), "user_accounts");
        assert_eq!(snake("2fa codes"), "n2fa_codes");
        assert_eq!(snake("?column?"), "column");
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
