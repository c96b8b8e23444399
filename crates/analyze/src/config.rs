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
    /// A statement run fewer times than this is a one-off (a data load, a migration step) when it
    /// also carries less than `one_off_share` of the workload's calls: it shapes no table and no
    /// write path. Default 2.
    pub min_calls: u64,
    /// The share (0..1) of all calls under which a statement below `min_calls` is a one-off.
    /// Default 0.001 (0.1%), so a query file without call counts keeps every statement.
    pub one_off_share: f64,
    /// The Postgres schemas an unqualified table name of a statement is looked for in, in
    /// order, as the application's `search_path`. Default `["public"]`.
    pub search_path: Vec<String>,
    /// The application's session time zone (IANA name): a `timestamptz` constant written without
    /// an offset is an instant in it. Default `UTC` (`remodel plan --timezone` sets it).
    pub time_zone: String,
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
            min_calls: 2,
            one_off_share: 0.001,
            search_path: vec!["public".into()],
            time_zone: "UTC".into(),
        }
    }
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML text is invalid or names an unknown threshold.
    #[error("invalid TOML configuration: {0}")]
    Toml(#[from] toml::de::Error),
    /// The JSON text is invalid or names an unknown threshold.
    #[error("invalid JSON configuration: {0}")]
    Json(#[from] serde_json::Error),
    /// A threshold is out of its range.
    #[error("{0}")]
    Range(String),
}

impl AnalyzeConfig {
    /// Reads a configuration from TOML or JSON text (JSON when it starts with `{`). The text may
    /// also be a `[analyze]` table of a larger TOML file.
    pub fn parse(text: &str) -> Result<AnalyzeConfig, ConfigError> {
        let cfg: AnalyzeConfig = if text.trim_start().starts_with('{') {
            serde_json::from_str(text)?
        } else {
            // A file of tables (`[analyze]`, `[design]`: `remodel plan` reads both) keeps the
            // analyzer's settings in `[analyze]`, all optional; a flat file is all analyzer's.
            #[derive(Deserialize)]
            struct Wrapped {
                #[serde(default)]
                analyze: AnalyzeConfig,
            }
            let top: toml::Table = toml::from_str(text)?;
            if top.contains_key("analyze") || top.contains_key("design") {
                toml::from_str::<Wrapped>(text)?.analyze
            } else {
                toml::from_str(text)?
            }
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks that every threshold is in range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(0.0..=1.0).contains(&self.one_off_share) {
            return Err(ConfigError::Range(format!(
                "one_off_share must be between 0 and 1, not {}",
                self.one_off_share
            )));
        }
        if !(0.0..=1.0).contains(&self.min_co_access_share) {
            return Err(ConfigError::Range(format!(
                "min_co_access_share must be between 0 and 1, got {}",
                self.min_co_access_share
            )));
        }
        remodel_sql::typed_expr::time_zone(&self.time_zone)
            .map_err(|e| ConfigError::Range(format!("time_zone: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_toml_json_and_partial_files() {
        let c = AnalyzeConfig::parse(
            "max_embed_attributes = 8\n[fanout]\n\"order_line.ol_o_id\" = 15\n",
        )
        .expect("toml");
        assert_eq!(c.max_embed_attributes, 8);
        assert_eq!(c.fanout.get("order_line.ol_o_id"), Some(&15));
        assert_eq!(c.bounded_n_limit, AnalyzeConfig::default().bounded_n_limit);
        let c = AnalyzeConfig::parse("[analyze]\nmin_co_access_share = 0.25\n").expect("wrapped");
        assert_eq!(c.min_co_access_share, 0.25);
        let c = AnalyzeConfig::parse("{\"bounded_n_limit\": 10}").expect("json");
        assert_eq!(c.bounded_n_limit, 10);
        assert!(
            AnalyzeConfig::parse("max_embedded = 3").is_err(),
            "unknown keys are refused"
        );
        assert!(AnalyzeConfig::parse("min_co_access_share = 2.0").is_err());
        // A file with only the designer's table: the analyzer's defaults.
        let c = AnalyzeConfig::parse("[design]\ntime_zone = \"Europe/Paris\"\n").expect("design");
        assert_eq!(c, AnalyzeConfig::default());
        assert!(
            AnalyzeConfig::parse("[analyze]\nmax_embedded = 3\n").is_err(),
            "unknown keys of [analyze] are refused"
        );
    }
}
