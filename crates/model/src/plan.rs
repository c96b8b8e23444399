//! The plan: everything `remodel plan` decided, written as `plan.json`.

use crate::design::Design;
use crate::relationship::Relationship;
use crate::schema::Schema;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// The version of the `plan.json` format: 4 names each read's and write's function (`function`,
/// which a generated access layer and the report use as given); 3 added each bind's CQL `type`, each read's result
/// `columns` and each table's typed source query (`source`); 2 stated every step typed (binds as
/// expressions, partitions read, the client's work, consistency levels, batches); 1 left them to
/// SQL text and notes. A reader takes only the current one ([`check_format`]).
pub const PLAN_FORMAT_VERSION: u32 = 4;

/// The part of a `plan.json` every reader reads first: its format. A plan of another format
/// may not parse as this one, and must be refused with one clear line ([`check_format`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct PlanHeader {
    /// `format_version`, when the file has one.
    #[serde(default)]
    pub format_version: Option<u32>,
}

/// Why a `plan.json` cannot be read by this remodel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatError {
    /// Written by an older remodel.
    Older(u32),
    /// Written by a newer remodel.
    Newer(u32),
    /// No `format_version`: not a plan written by remodel.
    Missing,
}

impl FormatError {
    /// The line a reader prints, naming the file: `out/plan.json is format 2 (written by an
    /// older remodel): run remodel plan again`.
    pub fn message(&self, file: &str) -> String {
        match self {
            FormatError::Older(v) => format!(
                "{file} is format {v} (written by an older remodel): run remodel plan again"
            ),
            FormatError::Newer(v) => format!(
                "{file} is format {v} (written by a newer remodel; this one reads format {PLAN_FORMAT_VERSION}): use that remodel, or run remodel plan again with this one"
            ),
            FormatError::Missing => format!(
                "{file} has no format_version (remodel plan writes one): run remodel plan again"
            ),
        }
    }
}

impl std::fmt::Display for FormatError {
    /// `plan.json is format 2 (written by an older remodel): run remodel plan again`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message("plan.json"))
    }
}

impl std::error::Error for FormatError {}

/// The one check every reader of `plan.json` makes before reading the rest: its format is
/// [`PLAN_FORMAT_VERSION`].
pub fn check_format(header: PlanHeader) -> Result<(), FormatError> {
    match header.format_version {
        Some(PLAN_FORMAT_VERSION) => Ok(()),
        Some(v) if v < PLAN_FORMAT_VERSION => Err(FormatError::Older(v)),
        Some(v) => Err(FormatError::Newer(v)),
        None => Err(FormatError::Missing),
    }
}

/// The JSON Schema of `plan.json`, derived from these types (the feature `schema`).
#[cfg(feature = "schema")]
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(Plan)
}

/// The contract between planning and execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plan {
    /// Format version ([`PLAN_FORMAT_VERSION`]).
    #[cfg_attr(feature = "schema", schemars(range(min = 4, max = 4)))]
    pub format_version: u32,
    /// The source schema (with inferred foreign keys).
    pub schema: Schema,
    /// The analysed workload.
    pub workload: Workload,
    /// Relationships with their embed/reference decisions.
    pub relationships: Vec<Relationship>,
    /// The proposed target design.
    pub design: Design,
    /// The time zone and clock every expression of the plan assumes.
    #[serde(default)]
    pub semantics: crate::expr::Semantics,
    /// The files the plan was made from, with their sizes (for the report's overview).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputFile>,
}

/// One input file of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InputFile {
    /// The path as given.
    pub path: String,
    /// What it was read as: `schema`, `queries` or `stats`.
    pub role: String,
    /// Size in bytes.
    pub bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_format_is_read() {
        let header = |v| PlanHeader { format_version: v };
        assert_eq!(check_format(header(Some(PLAN_FORMAT_VERSION))), Ok(()));
        for v in 1..PLAN_FORMAT_VERSION {
            let old = check_format(header(Some(v))).unwrap_err();
            assert_eq!(
                old.to_string(),
                format!(
                    "plan.json is format {v} (written by an older remodel): run remodel plan again"
                )
            );
        }
        assert_eq!(
            check_format(header(Some(PLAN_FORMAT_VERSION + 1))),
            Err(FormatError::Newer(PLAN_FORMAT_VERSION + 1))
        );
        assert_eq!(check_format(header(None)), Err(FormatError::Missing));
    }
}
