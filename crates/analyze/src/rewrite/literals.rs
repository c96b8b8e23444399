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
    /// The `$n` whose example value the application sent as a parameter.
    sent: Vec<u32>,
    /// The literal text behind `$n` at index `n - 1`.
    texts: OnceCell<Vec<Option<String>>>,
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
            sent: p.sent_params.clone(),
            texts: OnceCell::new(),
            by_param: OnceCell::new(),
        }
    }

    /// The literal the example has for `e` when `e` is a placeholder (not for a value the
    /// application sent as a parameter: that one changes from call to call).
    pub(crate) fn get(&self, e: &Expr) -> Option<&Expr> {
        let Expr::Value(v) = e else { return None };
        let Value::Placeholder(p) = &v.value else {
            return None;
        };
        self.by_param
            .get_or_init(|| {
                (1u32..)
                    .zip(self.texts())
                    .filter(|(n, _)| !self.sent.contains(n))
                    .filter_map(|(n, v)| Some((format!("${n}"), parse_expr(v.as_ref()?)?)))
                    .collect()
            })
            .get(p)
    }

    /// The SQL text of the literal the example has for `$n` (`'2025-01-15'`, `interval '14
    /// days'`), where it has one and it is a constant of the statement (not a bound value the
    /// application sent: see `AccessPattern::sent_params`).
    pub(crate) fn text(&self, n: u32) -> Option<String> {
        if self.sent.contains(&n) {
            return None;
        }
        let i = usize::try_from(n).ok()?.checked_sub(1)?;
        self.texts().get(i).cloned().flatten()
    }

    fn texts(&self) -> &[Option<String>] {
        self.texts.get_or_init(|| {
            let Some((sql, example)) = &self.source else {
                return Vec::new();
            };
            let same_shape = normalize::shape(example).is_ok_and(|s| s.sql == *sql);
            match normalize::example_values(example) {
                Ok(v) if same_shape => v,
                _ => Vec::new(),
            }
        })
    }
}
