//! Foreign keys the DDL does not declare: from join predicates of the workload, then from column
//! naming (`<entity>_id`, `<entity>`, or the referenced primary key's own name).

use crate::config::AnalyzeConfig;
use crate::joins::match_fk;
use remodel_model::{AccessPattern, FkOrigin, ForeignKey, Schema, Table};

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
    if config.infer_fk_from_joins {
        from_joins(schema, patterns, config, &mut out);
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
    schema: &Schema,
    patterns: &[AccessPattern],
    config: &AnalyzeConfig,
    out: &mut Vec<InferredFk>,
) {
    let mut ev: Vec<JoinEvidence> = Vec::new();
    for p in patterns {
        for step in &p.analysis.join_path {
            if step.left_table == step.right_table || match_fk(schema, step).is_some() {
                continue;
            }
            let (Some(lt), Some(rt)) = (
                schema.table(&step.left_table),
                schema.table(&step.right_table),
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
                e.child == child.name
                    && e.child_cols == *cc
                    && e.parent == parent.name
                    && e.parent_cols == *pc
            }) {
                Some(e) => {
                    if !e.patterns.contains(&p.id) {
                        e.patterns.push(p.id.clone());
                        e.calls += p.calls;
                    }
                }
                None => ev.push(JoinEvidence {
                    child: child.name.clone(),
                    child_cols: cc.clone(),
                    parent: parent.name.clone(),
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
            crate::render::thousands(e.calls),
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

fn from_naming(schema: &Schema, out: &mut Vec<InferredFk>) {
    for t in &schema.tables {
        for c in &t.columns {
            let covered = t
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.iter().any(|x| x.eq_ignore_ascii_case(&c.name)))
                || out.iter().any(|i| {
                    i.table == t.name
                        && i.fk.columns.iter().any(|x| x.eq_ignore_ascii_case(&c.name))
                });
            if covered {
                continue;
            }
            let name = c.name.to_lowercase();
            let mut candidates: Vec<(&Table, String, String)> = Vec::new();
            for target in &schema.tables {
                if target.name == t.name || target.primary_key.len() != 1 {
                    continue;
                }
                let pk = &target.primary_key[0];
                let pkl = pk.to_lowercase();
                let entity = name.strip_suffix("_id").unwrap_or(&name);
                let names_table = names_entity(&target.name.to_lowercase(), entity);
                let why = if pkl != "id" && name == pkl && t.primary_key != [c.name.clone()] {
                    format!(
                        "{}.{} has the name of the primary key {}({pk})",
                        t.name, c.name, target.name
                    )
                } else if names_table && (pkl == "id" || pkl == name) {
                    format!(
                        "{}.{} names the table {} (primary key {pk})",
                        t.name, c.name, target.name
                    )
                } else {
                    continue;
                };
                if types_compatible(t, &c.name, target, pk) {
                    candidates.push((target, pk.clone(), why));
                }
            }
            if let [(target, pk, why)] = candidates.as_slice() {
                out.push(InferredFk {
                    table: t.name.clone(),
                    fk: ForeignKey {
                        name: None,
                        columns: vec![c.name.clone()],
                        ref_table: target.name.clone(),
                        ref_columns: vec![pk.clone()],
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

/// True when `cols` are exactly the table's primary key.
fn is_pk(t: &Table, cols: &[String]) -> bool {
    t.primary_key.len() == cols.len()
        && t.primary_key
            .iter()
            .all(|k| cols.iter().any(|c| c.eq_ignore_ascii_case(k)))
}

/// True when `table` (a table name) is `entity` or a plural of it (`user` → `users`,
/// `category` → `categories`, `address` → `addresses`).
fn names_entity(table: &str, entity: &str) -> bool {
    if entity.is_empty() {
        return false;
    }
    let table = table.rsplit('.').next().unwrap_or(table);
    table == entity
        || table == format!("{entity}s")
        || table == format!("{entity}es")
        || entity
            .strip_suffix('y')
            .is_some_and(|stem| table == format!("{stem}ies"))
}

/// A coarse type family, so `integer` matches `bigint` and `varchar(20)` matches `text`.
fn family(sql_type: &str) -> String {
    let t = sql_type.to_lowercase();
    let base = t.split('(').next().unwrap_or(&t).trim().to_string();
    match base.as_str() {
        "smallint" | "integer" | "int" | "int2" | "int4" | "int8" | "bigint" | "serial"
        | "bigserial" | "smallserial" | "serial4" | "serial8" | "numeric" | "decimal" => {
            "number".into()
        }
        "text" | "varchar" | "character varying" | "char" | "character" | "bpchar" | "citext"
        | "name" => "text".into(),
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
        assert!(names_entity("users", "user"));
        assert!(names_entity("categories", "category"));
        assert!(names_entity("addresses", "address"));
        assert!(names_entity("public.item", "item"));
        assert!(!names_entity("items", "seller"));
        assert!(!names_entity("items", ""));
    }

    #[test]
    fn families() {
        assert_eq!(family("integer"), family("bigint"));
        assert_eq!(family("varchar(20)"), family("text"));
        assert_ne!(family("uuid"), family("text"));
    }
}
