//! Foreign keys the DDL does not declare: from join predicates of the workload, then from column
//! naming (`<entity>_id`, `<entity>`, or the referenced primary key's own name).

use crate::config::AnalyzeConfig;
use crate::joins::match_fk;
use remodel_model::pgtype;
use remodel_model::{AccessPattern, FkOrigin, ForeignKey, Schema, Table, TableIndex};
use std::collections::HashMap;

/// One inferred foreign key, for the table that holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct InferredFk {
    /// The referencing table.
    pub table: String,
    /// The key itself (origin `Inferred` with its evidence).
    pub fk: ForeignKey,
}

/// Infers foreign keys. `patterns` must already carry their join paths.
pub fn infer(
    schema: &Schema,
    patterns: &[AccessPattern],
    config: &AnalyzeConfig,
) -> Vec<InferredFk> {
    let mut out: Vec<InferredFk> = Vec::new();
    let tables = TableIndex::new(schema);
    if config.infer_fk_from_joins {
        from_joins(&tables, patterns, config, &mut out);
    }
    if config.infer_fk_from_naming {
        from_naming(schema, &mut out);
    }
    out
}

struct JoinEvidence {
    child: String,
    child_cols: Vec<String>,
    parent: String,
    parent_cols: Vec<String>,
    patterns: Vec<String>,
    calls: u64,
}

fn from_joins(
    tables: &TableIndex<'_>,
    patterns: &[AccessPattern],
    config: &AnalyzeConfig,
    out: &mut Vec<InferredFk>,
) {
    let mut ev: Vec<JoinEvidence> = Vec::new();
    for p in patterns {
        for step in &p.analysis.join_path {
            if step.left_table == step.right_table || match_fk(tables, step).is_some() {
                continue;
            }
            let (Some(lt), Some(rt)) = (
                tables.table(&step.left_table),
                tables.table(&step.right_table),
            ) else {
                continue;
            };
            let l_unique = lt.is_unique_on(&step.left_columns);
            let r_unique = rt.is_unique_on(&step.right_columns);
            // The referenced side must be a key; when both are, the direction is ambiguous (1-1).
            let (child, cc, parent, pc) = match (l_unique, r_unique) {
                (false, true) => (lt, &step.left_columns, rt, &step.right_columns),
                (true, false) => (rt, &step.right_columns, lt, &step.left_columns),
                // Both unique (1-1): the side joined on its primary key is referenced, the
                // other only has a unique key (`store.manager_staff_id = staff.staff_id`).
                (true, true) => match (
                    is_pk(lt, &step.left_columns),
                    is_pk(rt, &step.right_columns),
                ) {
                    (false, true) => (lt, &step.left_columns, rt, &step.right_columns),
                    (true, false) => (rt, &step.right_columns, lt, &step.left_columns),
                    _ => continue,
                },
                (false, false) => continue,
            };
            if !cc
                .iter()
                .zip(pc.iter())
                .all(|(a, b)| types_compatible(child, a, parent, b))
            {
                continue;
            }
            match ev.iter_mut().find(|e| {
                e.child == child.key()
                    && e.child_cols == *cc
                    && e.parent == parent.key()
                    && e.parent_cols == *pc
            }) {
                Some(e) => {
                    if !e.patterns.contains(&p.id) {
                        e.patterns.push(p.id.clone());
                        e.calls += p.calls;
                    }
                }
                None => ev.push(JoinEvidence {
                    child: child.key(),
                    child_cols: cc.clone(),
                    parent: parent.key(),
                    parent_cols: pc.clone(),
                    patterns: vec![p.id.clone()],
                    calls: p.calls,
                }),
            }
        }
    }
    for e in ev {
        if e.patterns.len() < config.min_join_evidence.max(1) {
            continue;
        }
        let pairs: Vec<String> = e
            .child_cols
            .iter()
            .zip(e.parent_cols.iter())
            .map(|(c, p)| format!("{}.{c} = {}.{p}", e.child, e.parent))
            .collect();
        let evidence = format!(
            "joined in {} pattern{} of the workload ({}; {} calls): {}",
            e.patterns.len(),
            if e.patterns.len() == 1 { "" } else { "s" },
            e.patterns.join(", "),
            remodel_model::text::thousands(e.calls),
            pairs.join(" AND ")
        );
        out.push(InferredFk {
            table: e.child,
            fk: ForeignKey {
                name: None,
                columns: e.child_cols,
                ref_table: e.parent,
                ref_columns: e.parent_cols,
                origin: FkOrigin::Inferred { evidence },
                location: None,
            },
        });
    }
}

/// Naming inference, indexed by table name and by primary-key name so it stays linear in the
/// number of columns: a column named like a single-column primary key elsewhere
/// (`member_id` → `members(member_id)`, also behind a role prefix: `reviewer_member_id`), or like
/// a table (`user_id`, `user` → `users(id)`; `lender_member_id` → `members`). A table's own
/// primary key is never taken for a reference, and an ambiguous name infers nothing.
fn from_naming(schema: &Schema, out: &mut Vec<InferredFk>) {
    let mut by_table: HashMap<String, Vec<&Table>> = HashMap::new();
    let mut by_pk: HashMap<String, Vec<&Table>> = HashMap::new();
    for t in schema.tables.iter().filter(|t| t.primary_key.len() == 1) {
        let bare = t.name.rsplit('.').next().unwrap_or(&t.name).to_lowercase();
        by_table.entry(bare).or_default().push(t);
        let pk = t.primary_key[0].to_lowercase();
        if pk != "id" {
            by_pk.entry(pk).or_default().push(t);
        }
    }
    // Where each table's inferred keys are in `out` (their columns are covered).
    let mut inferred: HashMap<String, Vec<usize>> = HashMap::new();
    for (n, i) in out.iter().enumerate() {
        inferred.entry(i.table.clone()).or_default().push(n);
    }
    for t in &schema.tables {
        let key = t.key();
        for c in &t.columns {
            let own_key = t.primary_key.len() == 1 && t.primary_key[0] == c.name;
            let covered = t
                .foreign_keys
                .iter()
                .chain(
                    inferred
                        .get(&key)
                        .into_iter()
                        .flatten()
                        .map(|&n| &out[n].fk),
                )
                .any(|fk| fk.columns.contains(&c.name));
            if own_key || covered {
                continue;
            }
            if let Some((target, why)) = naming_target(t, &c.name, &by_table, &by_pk) {
                // The data refuted it (a probe found values the key lacks).
                if schema
                    .rejected_key(&t.name, std::slice::from_ref(&c.name), &target.name)
                    .is_some()
                {
                    continue;
                }
                inferred.entry(key.clone()).or_default().push(out.len());
                out.push(InferredFk {
                    table: key.clone(),
                    fk: ForeignKey {
                        name: None,
                        columns: vec![c.name.clone()],
                        ref_table: target.key(),
                        ref_columns: vec![target.primary_key[0].clone()],
                        origin: FkOrigin::Inferred {
                            evidence: format!("naming: {why}"),
                        },
                        location: None,
                    },
                });
            }
        }
    }
}

/// The one table a column's name points to, with the reason; rules in order of strength, the
/// first rule with any candidate decides (two candidates there: none).
fn naming_target<'s>(
    t: &Table,
    column: &str,
    by_table: &HashMap<String, Vec<&'s Table>>,
    by_pk: &HashMap<String, Vec<&'s Table>>,
) -> Option<(&'s Table, String)> {
    let name = column.to_lowercase();
    let fits = |target: &&Table| {
        target.key() != t.key() && types_compatible(t, column, target, &target.primary_key[0])
    };
    // Suffixes at word boundaries, longest first: `lender_member_id`, `member_id`, `id`.
    let suffixes: Vec<&str> = std::iter::once(name.as_str())
        .chain(name.match_indices('_').map(|(i, _)| &name[i + 1..]))
        .filter(|s| !s.is_empty())
        .collect();
    for (i, suffix) in suffixes.iter().enumerate() {
        let role = if i == 0 {
            String::new()
        } else {
            format!(
                " behind the role prefix `{}`",
                &name[..name.len() - suffix.len() - 1]
            )
        };
        // The name of another table's primary key (`member_id`).
        let by_key: Vec<&Table> = by_pk
            .get(*suffix)
            .into_iter()
            .flatten()
            .copied()
            .filter(fits)
            .collect();
        if let Some(found) = unique(by_key, |target| {
            format!(
                "{}.{column} has the name of the primary key {target}({suffix}){role}",
                t.key()
            )
        }) {
            return found;
        }
        // The name of a table, `_id` or not (`member_id`, `member` → `members(id)`); behind a
        // role prefix only with `_id` (`max_bid`, `nb_of_bids` are values, not references).
        let entity = match suffix.strip_suffix("_id") {
            Some(e) => e,
            None if i == 0 => suffix,
            None => continue,
        };
        let by_name: Vec<&Table> = plural_forms(entity)
            .iter()
            .filter_map(|n| by_table.get(n))
            .flatten()
            .copied()
            .filter(|x| {
                let pk = x.primary_key[0].to_lowercase();
                pk == "id" || pk == *suffix
            })
            .filter(fits)
            .collect();
        if let Some(found) = unique(by_name, |target| {
            format!("{}.{column} names the table {target}{role}", t.key())
        }) {
            return found;
        }
    }
    None
}

/// `Some(Some(..))` for exactly one candidate, `Some(None)` for several (ambiguous: stop),
/// `None` for none (try the next rule).
fn unique(
    mut found: Vec<&Table>,
    why: impl Fn(&str) -> String,
) -> Option<Option<(&Table, String)>> {
    found.dedup_by(|a, b| a.key() == b.key());
    match found.as_slice() {
        [] => None,
        [one] => Some(Some((
            *one,
            format!("{} (primary key {})", why(&one.key()), one.primary_key[0]),
        ))),
        _ => Some(None),
    }
}

/// The table names that name `entity`: itself and its plurals (`user` → `users`,
/// `category` → `categories`, `address` → `addresses`).
fn plural_forms(entity: &str) -> Vec<String> {
    if entity.is_empty() {
        return Vec::new();
    }
    let mut forms = vec![
        entity.to_string(),
        format!("{entity}s"),
        format!("{entity}es"),
    ];
    if let Some(stem) = entity.strip_suffix('y') {
        forms.push(format!("{stem}ies"));
    }
    forms
}

/// True when `cols` are exactly the table's primary key.
fn is_pk(t: &Table, cols: &[String]) -> bool {
    t.primary_key.len() == cols.len() && t.primary_key.iter().all(|k| cols.contains(k))
}

/// A coarse type family, so `integer` matches `bigint` and `varchar(20)` matches `text`.
fn family(sql_type: &str) -> String {
    let base = pgtype::base_name(sql_type);
    match base.as_str() {
        b if pgtype::integer_width(b).is_some() || matches!(b, "numeric" | "decimal") => {
            "number".into()
        }
        b if pgtype::is_text(b) || b == "name" => "text".into(),
        _ => base,
    }
}

fn types_compatible(a: &Table, ac: &str, b: &Table, bc: &str) -> bool {
    match (a.column(ac), b.column(bc)) {
        (Some(x), Some(y)) => {
            x.sql_type.is_empty()
                || y.sql_type.is_empty()
                || family(&x.sql_type) == family(&y.sql_type)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert!(plural_forms("user").contains(&"users".to_string()));
        assert!(plural_forms("category").contains(&"categories".to_string()));
        assert!(plural_forms("address").contains(&"addresses".to_string()));
        assert!(!plural_forms("seller").contains(&"items".to_string()));
        assert!(plural_forms("").is_empty());
    }

    #[test]
    fn families() {
        assert_eq!(family("integer"), family("bigint"));
        assert_eq!(family("varchar(20)"), family("text"));
        assert_ne!(family("uuid"), family("text"));
    }
}
