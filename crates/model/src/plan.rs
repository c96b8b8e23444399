//! The plan: everything `remodel plan` decided, written as `plan.json`.

use crate::design::Design;
use crate::relationship::Relationship;
use crate::schema::Schema;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// The version of the `plan.json` format.
pub const PLAN_FORMAT_VERSION: u32 = 1;

/// The contract between planning and execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Format version ([`PLAN_FORMAT_VERSION`]).
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
pub struct InputFile {
    /// The path as given.
    pub path: String,
    /// What it was read as: `schema`, `queries` or `stats`.
    pub role: String,
    /// Size in bytes.
    pub bytes: u64,
}
