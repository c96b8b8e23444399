//! The constants a normalized pattern hides: `now() - due_at < $2` was written
//! `… < interval '14 days'`, and only the example shows it.

use crate::timeval::parse_expr;
use remodel_model::AccessPattern;
use remodel_sql::normalize;
use sqlparser::ast::{Expr, Value};
use std::cell::OnceCell;
use std::collections::HashMap;

/// The example's literal behind each `$n` of the pattern's SQL, where the example has one.
/// Read on first use: most statements have no predicate on an expression and never ask.
#[derive(Debug, Default)]
pub(crate) struct Literals {
    /// The pattern's SQL and its example, while not yet read.
    source: Option<(String, String)>,
    by_param: OnceCell<HashMap<String, Expr>>,
}

impl Literals {
    /// The literals of `p.example` for the placeholders of `p.sql`; none when there is no
    /// example or when its shape is not exactly `p.sql` (the numbering would not line up).
    pub(crate) fn of_pattern(p: &AccessPattern) -> Self {
        let source = p
            .example
            .as_ref()
            .filter(|e| **e != p.sql)
            .map(|e| (p.sql.clone(), e.clone()));
        Literals {
            source,
            by_param: OnceCell::new(),
        }
    }

    /// The literal the example has for `e` when `e` is a placeholder.
    pub(crate) fn get(&self, e: &Expr) -> Option<&Expr> {
        let Expr::Value(v) = e else { return None };
        let Value::Placeholder(p) = &v.value else {
            return None;
        };
        self.by_param.get_or_init(|| self.read()).get(p)
    }

    fn read(&self) -> HashMap<String, Expr> {
        let Some((sql, example)) = &self.source else {
            return HashMap::new();
        };
        let same_shape = normalize::shape(example).is_ok_and(|s| s.sql == *sql);
        let values = match normalize::example_values(example) {
            Ok(v) if same_shape => v,
            _ => return HashMap::new(),
        };
        values
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| Some((format!("${}", i + 1), parse_expr(&v?)?)))
            .collect()
    }
}
