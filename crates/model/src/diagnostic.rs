//! Source locations and diagnostics shared by every front end and pass.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in an input file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Location {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
}

impl Location {
    /// A location from its parts.
    pub fn new(file: impl Into<String>, line: u32, column: u32) -> Self {
        Location {
            file: file.into(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Informational: something was deliberately not modelled.
    Note,
    /// Something was skipped or guessed; the run went on.
    Warning,
    /// Something could not be read; the run went on without it.
    Error,
}

/// A message about the input, tied to where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// Where in the input; absent for whole-run messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// What happened and, where possible, what was expected.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match &self.location {
            Some(loc) => write!(f, "{loc}: {sev}: {}", self.message),
            None => write!(f, "{sev}: {}", self.message),
        }
    }
}

/// A count of things skipped for one reason, with the first few places they occurred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SkipCount {
    /// The kind or reason (e.g. `CREATE FUNCTION`, `not SQL`).
    pub kind: String,
    /// How many.
    pub count: u64,
    /// The first few locations (at most [`SkipCount::MAX_LOCATIONS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first: Vec<Location>,
}

impl SkipCount {
    /// How many locations are kept per kind.
    pub const MAX_LOCATIONS: usize = 3;
}

/// Adds one occurrence of `kind` at `loc` to a list of skip counts (kept in first-seen order).
pub fn count_skip(list: &mut Vec<SkipCount>, kind: &str, loc: Option<Location>) {
    let entry = match list.iter_mut().position(|s| s.kind == kind) {
        Some(i) => &mut list[i],
        None => {
            list.push(SkipCount {
                kind: kind.to_string(),
                count: 0,
                first: Vec::new(),
            });
            list.last_mut().expect("just pushed")
        }
    };
    entry.count += 1;
    if let Some(loc) = loc {
        if entry.first.len() < SkipCount::MAX_LOCATIONS {
            entry.first.push(loc);
        }
    }
}
