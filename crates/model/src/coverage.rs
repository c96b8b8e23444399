//! Coverage: the share of the application's traffic a design serves, the first number a design
//! is judged by. A read is served when a table answers it by its key (one partition, or one per
//! value of a list or bucket); a read answered by scanning every partition, a read the analyzer
//! could not model and a read no table could serve are gaps, each with its class and reason. A
//! write is served when it has a path (keyed CQL statements keeping every copy).

use crate::design::{Design, PartitionRead};
use crate::schema::Schema;
use crate::text::thousands;
use crate::workload::{AccessPattern, StatementKind, Workload};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a design serves of its workload (one-off statements left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Coverage {
    /// The read patterns.
    pub reads: Share,
    /// The write patterns.
    pub writes: Share,
    /// Every pattern not served, heaviest first, with its class and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Gap>,
}

/// Served patterns of one kind, by count and by calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Share {
    /// Patterns.
    pub patterns: u64,
    /// Patterns served.
    pub served: u64,
    /// Calls of all the patterns.
    pub calls: u64,
    /// Calls of the patterns served.
    pub served_calls: u64,
}

impl Share {
    /// Served patterns in percent (100 when there is none).
    pub fn percent(&self) -> f64 {
        percent(self.served, self.patterns)
    }

    /// Served calls in percent (100 when there is none).
    pub fn calls_percent(&self) -> f64 {
        percent(self.served_calls, self.calls)
    }

    fn add(&mut self, calls: u64, served: bool) {
        self.patterns += 1;
        self.calls += calls;
        if served {
            self.served += 1;
            self.served_calls += calls;
        }
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A pattern the design does not serve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Gap {
    /// The pattern.
    pub pattern: String,
    /// Its kind.
    pub kind: StatementKind,
    /// Its calls.
    pub calls: u64,
    /// Why, as a class.
    pub class: GapClass,
    /// Why, in words.
    pub reason: String,
}

/// Why a pattern is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GapClass {
    /// The analyzer could not model the statement (a window function, a correlated subquery …).
    Unmodeled,
    /// The statement reads a table or a column the schema does not have (a temporary table, a
    /// view, another schema's table, a typo: it would fail on the source as given).
    NotInSchema,
    /// A read no table serves: the design states no CQL for it.
    NoTable,
    /// A read served by scanning every partition of a table.
    Scan,
    /// A write the design has no path for.
    NoWritePath,
}

impl GapClass {
    /// The class as plan.json names it.
    pub fn name(self) -> &'static str {
        match self {
            GapClass::Unmodeled => "unmodeled",
            GapClass::NotInSchema => "not_in_schema",
            GapClass::NoTable => "no_table",
            GapClass::Scan => "scan",
            GapClass::NoWritePath => "no_write_path",
        }
    }
}

impl Coverage {
    /// Measures `design` on `workload` over `schema`.
    pub fn measure(schema: &Schema, workload: &Workload, design: &Design) -> Coverage {
        let mut c = Coverage::default();
        let unmodeled = |p: Option<&AccessPattern>| -> Option<(GapClass, String)> {
            let a = &p?.analysis;
            if let Some(u) = &a.unmodeled {
                return Some((GapClass::Unmodeled, u.clone()));
            }
            let missing: Vec<&String> = a
                .tables
                .iter()
                .filter(|t| schema.table(t).is_none())
                .chain(&a.unknown_columns)
                .collect();
            (!missing.is_empty()).then(|| {
                let names: Vec<&str> = missing.iter().map(|m| m.as_str()).collect();
                (
                    GapClass::NotInSchema,
                    format!("reads {}, which the schema does not have", names.join(", ")),
                )
            })
        };
        for q in design.queries.iter().filter(|q| !q.one_off) {
            let p = workload.pattern(&q.pattern);
            let calls = p.map_or(0, |p| p.calls);
            let why = || q.reason.clone().unwrap_or_default();
            let gap = match (&q.cql, &q.unsupported, &q.partitions) {
                (Some(_), None, Some(PartitionRead::Scan)) => Some((GapClass::Scan, why())),
                (Some(_), None, _) => None,
                _ => Some(unmodeled(p).unwrap_or_else(|| (GapClass::NoTable, why()))),
            };
            c.reads.add(calls, gap.is_none());
            c.push(&q.pattern, StatementKind::Select, calls, gap);
        }
        for w in design.writes.iter().filter(|w| !w.one_off) {
            let p = workload.pattern(&w.pattern);
            let (calls, kind) = p.map_or((0, StatementKind::Insert), |p| (p.calls, p.kind));
            let gap = w
                .unsupported
                .as_ref()
                .map(|why| unmodeled(p).unwrap_or_else(|| (GapClass::NoWritePath, why.clone())));
            c.writes.add(calls, gap.is_none());
            c.push(&w.pattern, kind, calls, gap);
        }
        c.gaps
            .sort_by(|a, b| b.calls.cmp(&a.calls).then(a.pattern.cmp(&b.pattern)));
        c
    }

    fn push(
        &mut self,
        pattern: &str,
        kind: StatementKind,
        calls: u64,
        gap: Option<(GapClass, String)>,
    ) {
        if let Some((class, reason)) = gap {
            self.gaps.push(Gap {
                pattern: pattern.to_string(),
                kind,
                calls,
                class,
                reason,
            });
        }
    }
}

impl fmt::Display for Share {
    /// `3/5 (60.0%; 61.2% of calls)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} ({:.1}%; {:.1}% of calls)",
            self.served,
            self.patterns,
            self.percent(),
            self.calls_percent()
        )
    }
}

impl fmt::Display for Coverage {
    /// `reads served 3/5 (…), writes with a path 4/4 (…)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reads served {}, writes with a path {}",
            self.reads, self.writes
        )
    }
}

impl fmt::Display for Gap {
    /// `q1 (read, no_table, 10,000 calls)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {}, {} calls)",
            self.pattern,
            self.kind.action(),
            self.class.name(),
            thousands(self.calls)
        )
    }
}
