//! The constants a normalized pattern hides: `now() - due_at < $2` was written
//! `… < interval '14 days'`, and only the example shows it.

use crate::timeval::parse_expr;
use remodel_model::AccessPattern;
use remodel_sql::normalize;
use sqlparser::ast::{Expr, Value};
use std::collections::HashMap;

/// The example's literal behind each `$n` of the pattern's SQL, where the example has one.
#[derive(Debug, Default)]
pub(crate) struct Literals {
    by_param: HashMap<String, Expr>,
}

impl Literals {
    /// The literals of `p.example` for the placeholders of `p.sql`; empty when there is no
    /// example or when its shape is not exactly `p.sql` (the numbering would not line up).
    pub(crate) fn of_pattern(p: &AccessPattern) -> Self {
        let Some(example) = p.example.as_deref().filter(|e| *e != p.sql) else {
            return Self::default();
        };
        let same_shape = normalize::shape(example).is_ok_and(|s| s.sql == p.sql);
        let Ok(values) = normalize::example_values(example) else {
            return Self::default();
        };
        if !same_shape {
            return Self::default();
        }
        let by_param = values
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| Some((format!("${}", i + 1), parse_expr(&v?)?)))
            .collect();
        Literals { by_param }
    }

    /// The literal the example has for `e` when `e` is a placeholder.
    pub(crate) fn get(&self, e: &Expr) -> Option<&Expr> {
        match e {
            Expr::Value(v) => match &v.value {
                Value::Placeholder(p) => self.by_param.get(p),
                _ => None,
            },
            _ => None,
        }
    }
}
