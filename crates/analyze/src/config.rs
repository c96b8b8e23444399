//! Thresholds of the embed-or-reference rules, with their defaults.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Tunable thresholds of the analyzer. Every field has a default, so a config file may name only
/// the ones it changes (`max_embed_attributes = 6` in TOML, or `{"max_embed_attributes": 6}` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalyzeConfig {
    /// Most attributes the embedded (or copied) side may have for an embed or duplicate decision
    /// ("FEW attributes on the N side", seed 004). Default 5.
    pub max_embed_attributes: usize,
    /// Least share (0..1) of the reading side's reads, weighted by calls, that must also read the
    /// other side for the two to count as "FREQUENTLY accessed together". Default 0.5.
    pub min_co_access_share: f64,
    /// Largest number of children per parent that still counts as bounded ("one-to-few"). Default 100.
    pub bounded_n_limit: u64,
    /// Known children per parent, keyed by `child_table.fk_column` (first FK column) or `child_table`;
    /// overrides what the analyzer infers from the workload. Example: `{"order_line.ol_o_id" = 15}`.
    pub fanout: BTreeMap<String, u64>,
    /// Infer foreign keys from join predicates of the workload (`items.seller = users.id`). Default true.
    pub infer_fk_from_joins: bool,
    /// Least number of distinct patterns that must join two columns before a foreign key is inferred. Default 1.
    pub min_join_evidence: usize,
    /// Infer foreign keys from `<entity>_id` / `<pk name>` column naming against primary keys. Default true.
    pub infer_fk_from_naming: bool,
}

impl Default for AnalyzeConfig {
    fn default() -> Self {
        AnalyzeConfig {
            max_embed_attributes: 5,
            min_co_access_share: 0.5,
            bounded_n_limit: 100,
            fanout: BTreeMap::new(),
            infer_fk_from_joins: true,
            min_join_evidence: 1,
            infer_fk_from_naming: true,
        }
    }
}
