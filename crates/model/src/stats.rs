//! Source statistics for sizing (`--stats FILE`): rows per table, distinct values and widths per column.
//!
//! The shape mirrors what Postgres keeps (`pg_class.reltuples`, `pg_stats.n_distinct`,
//! `avg_width`, `most_common_freqs`) so the live-source reader can fill it directly.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Statistics of the source database, keyed by table name. Unknown keys are refused (a misspelled
/// `tabels` must not be ignored silently); [`Statistics::problems`] checks the values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Statistics {
    /// Per table (bare or schema-qualified name, as in the schema).
    #[serde(default)]
    pub tables: BTreeMap<String, TableStats>,
}

impl Statistics {
    /// Every value out of its range, one message each, naming the value by its path
    /// (`tables.trips.rows is -5; expected …`). Empty when all are plausible.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, t) in &self.tables {
            let at = format!("tables.{name}");
            if !(t.rows.is_finite() && t.rows >= 0.0) {
                out.push(format!(
                    "{at}.rows is {}; expected a row count of 0 or more",
                    t.rows
                ));
            }
            for (col, c) in &t.columns {
                c.problems(&format!("{at}.columns.{col}"), &mut out);
            }
        }
        out
    }

    /// Finds a table's statistics by the name the plan knows it by (`users`, `auth.users`);
    /// `public.users` in the file is `users`. Names are exact, as Postgres stores them
    /// (`pg_stats.tablename`): `"Users"` and `users` are two tables, `auth.users` and `users` too.
    pub fn table(&self, name: &str) -> Option<&TableStats> {
        let key = name.strip_prefix("public.").unwrap_or(name);
        self.tables
            .get(key)
            .or_else(|| self.tables.get(&format!("public.{key}")))
    }
}

/// Statistics of one table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TableStats {
    /// Row count (`pg_class.reltuples`).
    pub rows: f64,
    /// Per column.
    #[serde(default)]
    pub columns: BTreeMap<String, ColumnStats>,
}

impl TableStats {
    /// Finds a column's statistics by name, exactly (as `pg_stats.attname` has it).
    pub fn column(&self, name: &str) -> Option<&ColumnStats> {
        self.columns.get(name)
    }
}

/// Statistics of one column, as `pg_stats` gives them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ColumnStats {
    /// Distinct values: above 0 a count; below 0 a fraction of the rows (−1 = unique), as in `pg_stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_distinct: Option<f64>,
    /// Average stored width in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_width: Option<f64>,
    /// Frequencies of the most common values, highest first (0..1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub most_common_freqs: Vec<f64>,
    /// The most common values themselves, as text, in the order of `most_common_freqs` (the
    /// first few only: they name a hot key in its warning).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub most_common_vals: Vec<String>,
    /// Fraction of NULLs (0..1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_frac: Option<f64>,
    /// For time columns: days between the oldest and newest value (sizes time buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_days: Option<f64>,
}

impl ColumnStats {
    /// Adds a message for each value out of range (`at` names the column).
    fn problems(&self, at: &str, out: &mut Vec<String>) {
        let mut check = |name: &str, v: Option<f64>, ok: fn(f64) -> bool, expected: &str| {
            if let Some(v) = v.filter(|v| !(v.is_finite() && ok(*v))) {
                out.push(format!("{at}.{name} is {v}; expected {expected}"));
            }
        };
        check(
            "n_distinct",
            self.n_distinct,
            |v| v >= -1.0,
            "a count of distinct values (0 or more) or a fraction of the rows (-1 to 0)",
        );
        check(
            "avg_width",
            self.avg_width,
            |v| v >= 0.0,
            "a width in bytes (0 or more)",
        );
        check(
            "null_frac",
            self.null_frac,
            |v| (0.0..=1.0).contains(&v),
            "a fraction from 0 to 1",
        );
        check(
            "span_days",
            self.span_days,
            |v| v >= 0.0,
            "a number of days (0 or more)",
        );
        for (i, f) in self.most_common_freqs.iter().enumerate() {
            check(
                &format!("most_common_freqs[{i}]"),
                Some(*f),
                |v| (0.0..=1.0).contains(&v),
                "a fraction of the rows from 0 to 1",
            );
        }
        let sum: f64 = self.most_common_freqs.iter().sum();
        if sum > 1.0 + 1e-6
            && self
                .most_common_freqs
                .iter()
                .all(|f| (0.0..=1.0).contains(f))
        {
            out.push(format!(
                "{at}.most_common_freqs add up to {sum}; expected fractions of the rows that add up to at most 1"
            ));
        }
    }

    /// Distinct values given the table's row count (resolves the negative-fraction form).
    pub fn distinct(&self, rows: f64) -> Option<f64> {
        let n = self.n_distinct?;
        if n < 0.0 {
            Some((-n * rows).max(1.0))
        } else if n > 0.0 {
            Some(n)
        } else {
            None
        }
    }
}
