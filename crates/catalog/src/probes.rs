//! Foreign keys from the data: for column pairs the schema does not declare, a bounded
//! inclusion test (`NOT EXISTS` anti-join over a sample) tells whether every value of the
//! column is a key of the other table.
//!
//! Candidates are single columns against single-column primary or unique keys of the same type
//! family (integers, text, uuid). A name that points to the table (`driver_id`, `approver_id`
//! behind a role prefix, the key's own name) ranks a candidate first, but is not required: an
//! unnamed pair is confirmed when containment is unlikely by chance. For text and uuid keys that
//! is any sample with a few distinct values; for integers the share of the sample's range that
//! holds keys (`density`) is the chance a random value is found, so `density ^ distinct` must be
//! tiny — a quantity column of 1..100 is "contained" in any 1..100000 key by accident. Against
//! dense keys (ids from a sequence) that chance is near 1 whatever the column, so an unnamed
//! integer pair is taken there only when its sample has many (100) distinct values spread over
//! most of the key range (an owner spread over all user ids) and, unless the keys are many,
//! repeated (a counter of the table's own rows, every value different, fits any id range as
//! well); the first parent that passes is kept. An unnamed reference to a small lookup table of
//! dense ids is therefore not found, nor an unnamed one-to-one reference to dense ids.
//!
//! The sample is spread over the table (`TABLESAMPLE … REPEATABLE`), never its first rows: those
//! hold the first ids, and reference only the first parents.
//!
//! A named candidate whose sampled values are not all found is *rejected*: naming inference
//! must not guess it later ([`remodel_model::RejectedKey`]).
//!
//! Every probe runs in its own savepoint with its own statement timeout, and the probes stop at
//! a total time budget; what was not probed is said.

use crate::{Error, Source};
use remodel_model::ident::quote;
use remodel_model::pgtype;
use remodel_model::{
    Diagnostic, FkOrigin, ForeignKey, RejectedKey, Schema, Severity, Statistics, Table,
};
use std::time::{Duration, Instant};

/// Limits of the probes.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// Non-null values sampled from the referencing column.
    pub sample_rows: u32,
    /// Longest one probe may run.
    pub probe_timeout: Duration,
    /// Longest all probes together may run.
    pub budget: Duration,
    /// Most candidates probed.
    pub max_candidates: usize,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            sample_rows: 1000,
            probe_timeout: Duration::from_secs(2),
            budget: Duration::from_secs(30),
            max_candidates: 400,
        }
    }
}

/// Chance of containment by accident under which an unnamed pair is taken for a key.
const MAX_CHANCE: f64 = 1e-6;

/// Distinct sampled values an unnamed pair needs (fewer tell nothing).
const MIN_DISTINCT: i64 = 3;

/// Against dense integer keys (where any small number is "contained"), an unnamed pair is
/// taken when its sample has this many distinct values spread over [`MIN_COVERAGE`] of the
/// key range: a quantity of 1..100 is not an id of 1..100000, an owner spread over all user ids
/// is.
const MIN_SPREAD_DISTINCT: i64 = 100;

/// See [`MIN_SPREAD_DISTINCT`].
const MIN_COVERAGE: f64 = 0.5;

/// What the probes found.
#[derive(Debug, Clone, Default)]
pub struct ProbeResult {
    /// Foreign keys confirmed by the data, with the table holding each (origin `Inferred` with
    /// the evidence).
    pub confirmed: Vec<(String, ForeignKey)>,
    /// Named candidates the data refutes.
    pub rejected: Vec<RejectedKey>,
    /// Candidates probed.
    pub probed: usize,
    /// Candidates left unprobed (budget, count limit).
    pub unprobed: usize,
    /// Time taken.
    pub elapsed: Duration,
    /// Probes that failed (timeouts), budget notes.
    pub diagnostics: Vec<Diagnostic>,
}

impl ProbeResult {
    /// Adds the confirmed keys to their tables and the rejections to the schema.
    pub fn apply(&self, schema: &mut Schema) {
        for (table, fk) in &self.confirmed {
            if let Some(t) = schema.table_mut(table) {
                t.foreign_keys.push(fk.clone());
            }
        }
        schema.rejected_keys.extend(self.rejected.iter().cloned());
    }
}

/// The type families a probe compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Integer,
    Text,
    Uuid,
}

fn family(sql_type: &str) -> Option<Family> {
    let base = pgtype::base_name(sql_type);
    match base.as_str() {
        b if pgtype::integer_width(b).is_some() => Some(Family::Integer),
        b if pgtype::is_text(b) => Some(Family::Text),
        "uuid" => Some(Family::Uuid),
        _ => None,
    }
}

/// One pair to probe.
#[derive(Debug, Clone)]
struct Candidate {
    child: String,
    column: String,
    parent: String,
    key: String,
    family: Family,
    /// Why the name points to the parent, if it does.
    hint: Option<String>,
}

/// Finds and probes the candidate pairs of `schema` (declared keys are not probed again).
pub async fn probe(
    src: &Source,
    schema: &Schema,
    stats: Option<&Statistics>,
    config: &ProbeConfig,
) -> Result<ProbeResult, Error> {
    let start = Instant::now();
    let (mut candidates, refuted) = candidates(schema, stats);
    let mut out = ProbeResult {
        rejected: refuted,
        ..ProbeResult::default()
    };
    if candidates.len() > config.max_candidates {
        out.unprobed = candidates.len() - config.max_candidates;
        candidates.truncate(config.max_candidates);
    }
    let mut settled: Vec<(String, String)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        if settled.contains(&(c.child.clone(), c.column.clone())) {
            continue;
        }
        let left = config.budget.saturating_sub(start.elapsed());
        if left.is_zero() {
            out.unprobed += candidates.len() - i;
            out.diagnostics.push(note(format!(
                "data probes stopped at their {} s budget: {} candidate pair(s) not probed",
                config.budget.as_secs(),
                candidates.len() - i
            )));
            break;
        }
        let timeout = config.probe_timeout.min(left).as_millis();
        out.probed += 1;
        // Rows holding a value of the column: what the sample is drawn from.
        let rows = stats
            .and_then(|s| s.table(&c.child))
            .map(|t| {
                let nulls = t.column(&c.column).and_then(|cs| cs.null_frac);
                t.rows * (1.0 - nulls.unwrap_or(0.0).clamp(0.0, 1.0))
            })
            .unwrap_or(0.0);
        match run_probe(src, c, config.sample_rows, rows, timeout).await? {
            Err(message) => out.diagnostics.push(note(format!(
                "data probe {}.{} -> {}.{} gave no answer ({message})",
                c.child, c.column, c.parent, c.key
            ))),
            Ok(None) => {}
            Ok(Some(Verdict::Contained(evidence))) => {
                settled.push((c.child.clone(), c.column.clone()));
                out.confirmed.push((
                    c.child.clone(),
                    ForeignKey {
                        name: None,
                        columns: vec![c.column.clone()],
                        ref_table: c.parent.clone(),
                        ref_columns: vec![c.key.clone()],
                        origin: FkOrigin::Inferred { evidence },
                        location: None,
                    },
                ));
            }
            Ok(Some(Verdict::Refuted(evidence))) => out.rejected.push(RejectedKey {
                table: c.child.clone(),
                columns: vec![c.column.clone()],
                ref_table: c.parent.clone(),
                ref_columns: vec![c.key.clone()],
                evidence,
            }),
        }
    }
    out.elapsed = start.elapsed();
    Ok(out)
}

fn note(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Note,
        location: None,
        message,
    }
}

/// The single-column keys a column may reference: `(table, column, family)`.
fn keys(schema: &Schema) -> Vec<(&Table, String, Family)> {
    let mut out = Vec::new();
    for t in &schema.tables {
        let singles = std::iter::once(&t.primary_key)
            .chain(t.unique_keys.iter().map(|u| &u.columns))
            .filter(|k| k.len() == 1);
        for k in singles {
            let Some(f) = t.column(&k[0]).and_then(|c| family(&c.sql_type)) else {
                continue;
            };
            if !out
                .iter()
                .any(|(x, y, _): &(&Table, String, Family)| x.name == t.name && *y == k[0])
            {
                out.push((t, k[0].clone(), f));
            }
        }
    }
    out
}

/// Every candidate pair, named ones first, in schema order; and the named pairs the statistics
/// already refute (more distinct values than the parent has rows): naming inference must not
/// guess those later either.
fn candidates(schema: &Schema, stats: Option<&Statistics>) -> (Vec<Candidate>, Vec<RejectedKey>) {
    let keys = keys(schema);
    let mut out = Vec::new();
    let mut refuted = Vec::new();
    for t in &schema.tables {
        for col in &t.columns {
            let Some(f) = family(&col.sql_type) else {
                continue;
            };
            let declared = t
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.iter().any(|c| c == &col.name));
            if declared || never_contained(stats, t, &col.name) {
                continue;
            }
            let own_key = t.primary_key.len() == 1 && t.primary_key[0] == col.name;
            for (p, key, pf) in &keys {
                if *pf != f || (p.name == t.name && *key == col.name) {
                    continue;
                }
                let hint = name_hint(&col.name, p, key);
                // A table's own key references another only when its name says so (1-1).
                if own_key && hint.is_none() {
                    continue;
                }
                if let Some(why) = too_many_values(stats, t, &col.name, p) {
                    if let Some(hint) = &hint {
                        refuted.push(RejectedKey {
                            table: t.qualified_name(),
                            columns: vec![col.name.clone()],
                            ref_table: p.qualified_name(),
                            ref_columns: vec![key.clone()],
                            evidence: format!(
                                "statistics: {why}; the name ({hint}) is no reference"
                            ),
                        });
                    }
                    continue;
                }
                out.push(Candidate {
                    child: t.qualified_name(),
                    column: col.name.clone(),
                    parent: p.qualified_name(),
                    key: key.clone(),
                    family: f,
                    hint,
                });
            }
        }
    }
    // Stable: named first, then schema order.
    out.sort_by_key(|c| c.hint.is_none());
    (out, refuted)
}

/// True when statistics show the column cannot be contained in any key: all NULL, or its
/// table empty.
fn never_contained(stats: Option<&Statistics>, t: &Table, column: &str) -> bool {
    let Some(ts) = stats.and_then(|s| s.table(&t.qualified_name())) else {
        return false;
    };
    ts.rows == 0.0
        || ts
            .column(column)
            .is_some_and(|cs| cs.null_frac.is_some_and(|f| f >= 1.0))
}

/// Why statistics show the column cannot be contained in `parent`'s key, if they do: more
/// distinct values than the parent has rows.
fn too_many_values(
    stats: Option<&Statistics>,
    t: &Table,
    column: &str,
    parent: &Table,
) -> Option<String> {
    let s = stats?;
    let ts = s.table(&t.qualified_name())?;
    let d = ts.column(column)?.distinct(ts.rows)?;
    let ps = s.table(&parent.qualified_name())?;
    (d > ps.rows * 1.1 + 10.0).then(|| {
        format!(
            "{}.{column} has about {d:.0} distinct values, {} about {:.0} rows",
            t.qualified_name(),
            parent.qualified_name(),
            ps.rows
        )
    })
}

/// Why `column`'s name points to `parent(key)`, if it does: the key's own name (`city`,
/// `member_id`), or the table's name with `_id` (`driver_id` → `drivers`), also behind a role
/// prefix (`home_city`, `reviewer_member_id`).
fn name_hint(column: &str, parent: &Table, key: &str) -> Option<String> {
    let col = column.to_ascii_lowercase();
    let key = key.to_ascii_lowercase();
    let table = parent.name.to_ascii_lowercase();
    let singular = singular(&table);
    let suffixes: Vec<&str> = std::iter::once(col.as_str())
        .chain(col.match_indices('_').map(|(i, _)| &col[i + 1..]))
        .filter(|s| !s.is_empty())
        .collect();
    for s in suffixes {
        if key != "id" && s == key {
            return Some(format!("named like the key {}.{key}", parent.name));
        }
        let entity = s.strip_suffix("_id").unwrap_or(s);
        if (s != entity || s == col) && (entity == table || entity == singular) {
            return Some(format!("named after the table {}", parent.name));
        }
    }
    None
}

/// `drivers` → `driver`, `categories` → `category`, `addresses` → `address`.
fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        return format!("{stem}y");
    }
    if let Some(stem) = name.strip_suffix("sses") {
        return format!("{stem}ss");
    }
    name.strip_suffix('s').unwrap_or(name).to_string()
}

/// What one probe concluded.
enum Verdict {
    Contained(String),
    Refuted(String),
}

/// One inclusion test. `Ok(Ok(None))`: inconclusive (no values, or an unnamed pair contained
/// by chance); `Ok(Err(_))`: the probe failed (a timeout).
async fn run_probe(
    src: &Source,
    c: &Candidate,
    sample: u32,
    rows: f64,
    timeout_ms: u128,
) -> Result<Result<Option<Verdict>, String>, Error> {
    let child = qualified(&c.child);
    let parent = qualified(&c.parent);
    let (col, key) = (quote(&c.column), quote(&c.key));
    let tablesample = sample_clause(rows, sample);
    let range = if c.family == Family::Integer {
        format!(
            ", (SELECT count(*) FROM {parent} p WHERE p.{key} BETWEEN (SELECT min(v) FROM s) AND (SELECT max(v) FROM s))::float8, \
             (max(v)::numeric - min(v)::numeric + 1)::float8, \
             ((max(v)::numeric - min(v)::numeric + 1) / \
              (SELECT max(p.{key})::numeric - min(p.{key})::numeric + 1 FROM {parent} p))::float8"
        )
    } else {
        ", NULL::float8, NULL::float8, NULL::float8".to_string()
    };
    let sql = format!(
        "WITH s AS (SELECT {col} AS v FROM {child}{tablesample} WHERE {col} IS NOT NULL LIMIT {sample}) \
         SELECT count(*), count(DISTINCT v), \
                count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.{key} = s.v)){range} \
         FROM s"
    );
    let rows = match src.bounded(&sql, timeout_ms, "probe a foreign key").await? {
        Ok(rows) => rows,
        Err(message) => return Ok(Err(message)),
    };
    let Some(r) = rows.first() else {
        return Ok(Ok(None));
    };
    let (n, distinct, missing): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
    let (in_range, span, coverage): (Option<f64>, Option<f64>, Option<f64>) =
        (r.get(3), r.get(4), r.get(5));
    if n == 0 {
        return Ok(Ok(None));
    }
    let pair = format!("{}.{} -> {}.{}", c.child, c.column, c.parent, c.key);
    let found = n - missing;
    let sampled = format!(
        "{n} sampled value{} ({distinct} distinct)",
        if n == 1 { "" } else { "s" }
    );
    if missing > 0 {
        return Ok(Ok(c.hint.as_ref().map(|hint| {
            Verdict::Refuted(format!(
                "data: {missing} of {sampled} of {pair} are not in {}.{} ({:.1}% found); the name ({hint}) is no reference",
                c.parent,
                c.key,
                100.0 * found as f64 / n as f64
            ))
        })));
    }
    // All found: how likely was that by accident?
    let chance = match (in_range, span) {
        (Some(k), Some(s)) if s > 0.0 => (k / s).clamp(0.0, 1.0).powf(distinct as f64),
        _ => 0.0,
    };
    let coverage = coverage.unwrap_or(0.0);
    let why = match &c.hint {
        Some(hint) => hint.clone(),
        None if distinct >= MIN_DISTINCT && chance < MAX_CHANCE => {
            "no name points to it".to_string()
        }
        // Dense integer keys: spread over most of the key range, with many values, some of
        // them repeated as references to a smaller table repeat (a counter of the table's own
        // rows, all different, is not a reference however well it fits the range).
        None if distinct >= MIN_SPREAD_DISTINCT
            && coverage >= MIN_COVERAGE
            && !(distinct == n && all_different_chance(n, in_range) < MAX_CHANCE) =>
        {
            format!(
                "no name points to it; the values spread over {:.0}% of the key range",
                coverage.min(1.0) * 100.0
            )
        }
        None => return Ok(Ok(None)),
    };
    let odds = if c.family == Family::Integer {
        format!(", chance of that by accident {chance:.1e}")
    } else {
        String::new()
    };
    Ok(Ok(Some(Verdict::Contained(format!(
        "data: all {sampled} of {pair} are in {}.{} (100% found{odds}; {why})",
        c.parent, c.key
    )))))
}

/// The chance that `n` values drawn from `keys` keys are all different (the birthday bound,
/// `exp(-n(n-1)/2k)`): a column referencing a table repeats its keys long before it has as
/// many values as the table has rows.
fn all_different_chance(n: i64, keys: Option<f64>) -> f64 {
    match keys {
        Some(k) if k >= 1.0 => {
            let n = n as f64;
            (-n * (n - 1.0) / (2.0 * k)).exp()
        }
        _ => 1.0,
    }
}

/// The `TABLESAMPLE` clause that spreads the sample over the whole table, whose column holds a
/// value in `rows` rows (the
/// first rows alone are a biased sample: ids in insertion order, parents before children).
/// Past a few samples' worth of rows a share of the pages is read; below that each row is
/// taken with the chance that yields about `sample` rows. `REPEATABLE`: the same data gives the
/// same sample, so the same evidence and the same plan.
fn sample_clause(rows: f64, sample: u32) -> String {
    let sample = f64::from(sample);
    if rows > sample * 20.0 {
        format!(
            " TABLESAMPLE SYSTEM ({:.4}) REPEATABLE (0)",
            (400.0 * sample / rows).min(100.0)
        )
    } else if rows > sample {
        format!(
            " TABLESAMPLE BERNOULLI ({:.4}) REPEATABLE (0)",
            (100.0 * sample / rows).min(100.0)
        )
    } else {
        String::new()
    }
}

/// A model table name (`t` or `schema.t`) as SQL.
fn qualified(name: &str) -> String {
    name.split('.').map(quote).collect::<Vec<_>>().join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str, key: &str) -> Table {
        Table {
            name: name.into(),
            primary_key: vec![key.into()],
            ..Default::default()
        }
    }

    #[test]
    fn names_point_to_tables() {
        let users = table("users", "id");
        assert!(name_hint("user_id", &users, "id").is_some());
        assert!(name_hint("users", &users, "id").is_some());
        assert!(name_hint("approver_id", &users, "id").is_none());
        assert!(name_hint("reviewer_user_id", &users, "id").is_some());
        let cities = table("cities", "city");
        assert!(name_hint("home_city", &cities, "city").is_some());
        assert!(name_hint("city", &cities, "city").is_some());
        assert!(name_hint("velocity", &cities, "city").is_none());
        assert_eq!(singular("categories"), "category");
        assert_eq!(singular("addresses"), "address");
    }

    #[test]
    fn a_counter_is_no_draw_from_the_keys() {
        // 970 different values among 2,000 keys: drawn at random they would repeat.
        assert!(all_different_chance(970, Some(2000.0)) < MAX_CHANCE);
        // 1,000 different values among 10 million keys: no repeat is expected.
        assert!(all_different_chance(1000, Some(1e7)) > 0.9);
        assert_eq!(all_different_chance(10, None), 1.0);
    }

    #[test]
    fn samples_spread_over_the_table() {
        assert_eq!(sample_clause(500.0, 1000), "");
        assert_eq!(
            sample_clause(4000.0, 1000),
            " TABLESAMPLE BERNOULLI (25.0000) REPEATABLE (0)"
        );
        assert_eq!(
            sample_clause(1_000_000.0, 1000),
            " TABLESAMPLE SYSTEM (0.4000) REPEATABLE (0)"
        );
    }

    #[test]
    fn families() {
        assert_eq!(family("character varying(20)"), Some(Family::Text));
        assert_eq!(family("bigint"), Some(Family::Integer));
        assert_eq!(family("numeric(6,2)"), None);
    }
}
