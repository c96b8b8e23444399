//! Relationships between tables and the embed-or-reference decision for each.

use serde::{Deserialize, Serialize};

/// A relationship between two tables, along a (declared or inferred) foreign key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Relationship {
    /// The parent ("one") side: the referenced table.
    pub from: String,
    /// The child side: the referencing table (for M-N, the other entity).
    pub to: String,
    /// The foreign-key columns on the child (or junction) side.
    #[serde(default)]
    pub columns: Vec<String>,
    /// One-to-one, one-to-many, many-to-many.
    pub cardinality: Cardinality,
    /// Embed, reference or duplicate columns.
    pub decision: Decision,
    /// Why.
    pub rationale: Rationale,
}

/// Cardinality of a relationship.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Cardinality {
    /// The child's FK is unique or is its primary key.
    OneToOne,
    /// A plain FK.
    OneToMany,
    /// Through a junction table whose key is two FKs.
    ManyToMany {
        /// The junction table.
        via: String,
    },
}

/// How the related data is placed in the target model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Store the related attributes inside the reading entity's rows (columns, collection or UDT).
    Embed,
    /// Keep the related entity in its own table; readers look it up by key.
    Reference,
    /// Copy a few parent columns into the child rows (N-1 denormalization).
    DuplicateColumns,
}

/// The evidence behind a decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rationale {
    /// The rule applied (named, e.g. `one-to-few, read together → embed`).
    pub rule: String,
    /// Attributes on the embedded side.
    pub attribute_count: usize,
    /// Share of the reads of the parent (weighted by calls) that also read the child, 0..1.
    pub co_access_share: f64,
    /// Whether N is bounded, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounded: Option<bool>,
    /// Columns that are copied, for `DuplicateColumns`/`Embed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Ids of the read patterns that read both sides together (the co-access evidence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub co_access_patterns: Vec<String>,
    /// Estimated children per parent (N), where the workload or the configuration tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<f64>,
    /// How the foreign key is known when the schema does not declare it (join predicates of the
    /// workload, naming, or the data: sample size and share of values found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_evidence: Option<String>,
    /// A sentence a reviewer can read.
    pub text: String,
}
