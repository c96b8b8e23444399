//! Relationships (1-1, 1-N, M-N through a junction) and the embed / reference / duplicate-columns
//! decision for each, following the seed article (004): embed when the other side has FEW
//! attributes that are FREQUENTLY read together and N is bounded; reference when it has MANY
//! attributes, is RARELY read together, or N is unbounded.

use crate::config::AnalyzeConfig;
use crate::joins::fk_label;
use remodel_model::{
    AccessPattern, Cardinality, Decision, EqualityOp, ForeignKey, Rationale, Relationship, Schema,
    StatementKind, Table, Workload,
};
use std::collections::BTreeSet;

/// Classifies every foreign key of the schema (declared and inferred) and decides each.
pub fn classify(schema: &Schema, workload: &Workload, config: &AnalyzeConfig) -> Vec<Relationship> {
    let reads: Vec<&AccessPattern> = workload
        .patterns
        .iter()
        .filter(|p| p.kind == StatementKind::Select)
        .collect();
    let mut out = Vec::new();
    let mut in_junction: Vec<(String, usize)> = Vec::new();
    for t in &schema.tables {
        if let Some((i, j)) = junction(t) {
            in_junction.push((t.name.clone(), i));
            in_junction.push((t.name.clone(), j));
            out.push(many_to_many(
                schema,
                &reads,
                workload,
                t,
                &t.foreign_keys[i],
                &t.foreign_keys[j],
                config,
            ));
        }
    }
    for t in &schema.tables {
        for (i, fk) in t.foreign_keys.iter().enumerate() {
            if in_junction.contains(&(t.name.clone(), i)) {
                continue;
            }
            out.push(one_to(schema, &reads, workload, t, fk, config));
        }
    }
    out
}

/// Two FKs of `t` whose columns, disjoint, together are its primary key.
fn junction(t: &Table) -> Option<(usize, usize)> {
    let pk: BTreeSet<String> = t.primary_key.iter().map(|c| c.to_lowercase()).collect();
    if pk.len() < 2 {
        return None;
    }
    let cols = |fk: &ForeignKey| -> BTreeSet<String> {
        fk.columns.iter().map(|c| c.to_lowercase()).collect()
    };
    for i in 0..t.foreign_keys.len() {
        for j in i + 1..t.foreign_keys.len() {
            let (a, b) = (cols(&t.foreign_keys[i]), cols(&t.foreign_keys[j]));
            if a.is_disjoint(&b) && a.union(&b).cloned().collect::<BTreeSet<_>>() == pk {
                return Some((i, j));
            }
        }
    }
    None
}

/// Sum of calls of read patterns.
fn weight(ps: &[&AccessPattern]) -> u64 {
    ps.iter().map(|p| p.calls.max(1)).sum()
}

fn reads_of<'a>(reads: &[&'a AccessPattern], table: &str) -> Vec<&'a AccessPattern> {
    reads
        .iter()
        .copied()
        .filter(|p| p.analysis.tables.iter().any(|t| t == table))
        .collect()
}

/// Read patterns that follow the foreign key `label` in a join.
fn following<'a>(reads: &[&'a AccessPattern], label: &str) -> Vec<&'a AccessPattern> {
    reads
        .iter()
        .copied()
        .filter(|p| {
            p.analysis
                .join_path
                .iter()
                .any(|j| j.foreign_key.as_deref() == Some(label))
        })
        .collect()
}

/// Columns of `table` a set of patterns uses (projection, filters, order), minus `except`.
fn columns_used(ps: &[&AccessPattern], table: &str, except: &[String]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for p in ps {
        let a = &p.analysis;
        let used = a
            .projection
            .iter()
            .chain(a.equality.iter().map(|e| &e.column))
            .chain(a.ranges.iter().map(|r| &r.column))
            .chain(a.order_by.iter().map(|o| &o.column))
            .chain(a.aggregates.iter().filter_map(|g| g.column.as_ref()));
        for c in used {
            if c.table == table
                && !except.iter().any(|x| x.eq_ignore_ascii_case(&c.column))
                && !cols.contains(&c.column)
            {
                cols.push(c.column.clone());
            }
        }
    }
    cols
}

fn inserts(workload: &Workload, table: &str) -> u64 {
    workload
        .patterns
        .iter()
        .filter(|p| {
            p.kind == StatementKind::Insert
                && p.analysis.write.as_ref().is_some_and(|w| w.table == table)
        })
        .map(|p| p.calls)
        .sum()
}

/// What is known of N (children per parent) and why.
struct Bound {
    bounded: Option<bool>,
    fanout: Option<f64>,
    why: String,
}

fn boundedness(
    workload: &Workload,
    child: &Table,
    parent: &str,
    fk: &ForeignKey,
    one_to_one: bool,
    config: &AnalyzeConfig,
) -> Bound {
    if one_to_one {
        return Bound {
            bounded: Some(true),
            fanout: Some(1.0),
            why: "one row per parent (the key is unique)".into(),
        };
    }
    let first = fk.columns.first().cloned().unwrap_or_default();
    let key = format!("{}.{}", child.name, first);
    if let Some(n) = config
        .fanout
        .get(&key)
        .or_else(|| config.fanout.get(&child.name))
    {
        return Bound {
            bounded: Some(*n <= config.bounded_n_limit),
            fanout: Some(*n as f64),
            why: format!("configured fan-out {n} {} per {parent}", child.name),
        };
    }
    // Measured: a read of the children by exactly the FK, without LIMIT, with rows per call.
    for p in &workload.patterns {
        let a = &p.analysis;
        let by_fk = p.kind == StatementKind::Select
            && a.tables == [child.name.clone()]
            && a.limit.is_none()
            && a.aggregates.is_empty()
            && a.equality.len() == fk.columns.len()
            && fk.columns.iter().all(|c| {
                a.equality
                    .iter()
                    .any(|e| e.op == EqualityOp::Eq && e.column.column.eq_ignore_ascii_case(c))
            });
        if let (true, Some(rows), true) = (by_fk, p.rows, p.calls > 0) {
            let n = rows as f64 / p.calls as f64;
            return Bound {
                bounded: Some(n <= config.bounded_n_limit as f64),
                fanout: Some(n),
                why: format!(
                    "{} returns {n:.1} {} rows per {parent} on average",
                    p.id, child.name
                ),
            };
        }
    }
    let (ci, pi) = (inserts(workload, &child.name), inserts(workload, parent));
    match (ci, pi) {
        (0, _) => Bound {
            bounded: None,
            fanout: None,
            why: format!(
                "the workload does not insert into {}, so N is unknown",
                child.name
            ),
        },
        (c, 0) => Bound {
            bounded: Some(false),
            fanout: None,
            why: format!(
                "{} grows without bound per {parent}: {c} inserts into {} and none into {parent}",
                child.name, child.name
            ),
        },
        (c, p) => {
            let n = c as f64 / p as f64;
            Bound {
                bounded: Some(n <= config.bounded_n_limit as f64),
                fanout: Some(n),
                why: format!(
                    "about {n:.1} {} per {parent} ({c} inserts into {} for {p} into {parent})",
                    child.name, child.name
                ),
            }
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn ids(ps: &[&AccessPattern]) -> Vec<String> {
    ps.iter().map(|p| p.id.clone()).collect()
}

fn one_to(
    schema: &Schema,
    reads: &[&AccessPattern],
    workload: &Workload,
    child: &Table,
    fk: &ForeignKey,
    config: &AnalyzeConfig,
) -> Relationship {
    let parent_name = schema
        .table(&fk.ref_table)
        .map(|t| t.name.clone())
        .unwrap_or_else(|| fk.ref_table.clone());
    let one_to_one = child.is_unique_on(&fk.columns);
    let cardinality = if one_to_one {
        Cardinality::OneToOne
    } else {
        Cardinality::OneToMany
    };
    let label = fk_label(&child.name, fk, schema);
    let together = following(reads, &label);
    let child_reads = reads_of(reads, &child.name);
    let parent_reads = reads_of(reads, &parent_name);
    let share = |of: &[&AccessPattern]| {
        if of.is_empty() {
            0.0
        } else {
            weight(&together) as f64 / weight(of) as f64
        }
    };
    let (child_share, parent_share) = (share(&child_reads), share(&parent_reads));
    let parent_cols = columns_used(&together, &parent_name, &fk.ref_columns);
    let child_attrs = child.columns.len().saturating_sub(fk.columns.len());
    let bound = boundedness(workload, child, &parent_name, fk, one_to_one, config);
    let few = |n: usize| n <= config.max_embed_attributes;
    let min = config.min_co_access_share;
    let (c, p) = (&child.name, &parent_name);
    let mut r = Rationale {
        co_access_patterns: ids(&together),
        bounded: bound.bounded,
        fanout: bound.fanout,
        ..Default::default()
    };
    let decision;
    if one_to_one {
        let s = child_share.max(parent_share);
        r.co_access_share = s;
        r.attribute_count = child_attrs;
        if s >= min {
            decision = Decision::Embed;
            r.rule = "one-to-one, read together → embed (same row)".into();
            r.columns = columns_used(&together, c, &fk.columns);
            r.text = format!("{c} has at most one row per {p} and {} of the reads of the two read them together: store them in one row.", pct(s));
        } else {
            decision = Decision::Reference;
            r.rule = "one-to-one, rarely read together → reference".into();
            r.text = format!("{c} has at most one row per {p}, but only {} of their reads read both: keep them apart, linked by key.", pct(s));
        }
    } else if child_share >= min && !parent_cols.is_empty() && few(parent_cols.len()) {
        decision = Decision::DuplicateColumns;
        r.rule = "many-to-one lookup read together, few attributes → duplicate the parent's columns into the child".into();
        r.co_access_share = child_share;
        r.attribute_count = parent_cols.len();
        r.columns = parent_cols.clone();
        r.text = format!(
            "{} of the reads of {c} also look up its {p} (one row each, along {label}) and use {} of its columns ({}): copy them into the {c} rows.",
            pct(child_share),
            parent_cols.len(),
            parent_cols.join(", ")
        );
    } else if parent_share >= min && few(child_attrs) && bound.bounded == Some(true) {
        decision = Decision::Embed;
        r.rule = "one-to-few, read together → embed the children in the parent".into();
        r.co_access_share = parent_share;
        r.attribute_count = child_attrs;
        r.columns = columns_used(&together, c, &fk.columns);
        r.text = format!(
            "{} of the reads of {p} also read its {c}, which have {child_attrs} attributes and are bounded ({}): embed them in the {p} row (a collection or UDT).",
            pct(parent_share),
            bound.why
        );
    } else {
        decision = Decision::Reference;
        r.co_access_share = parent_share.max(child_share);
        r.attribute_count = child_attrs;
        let mut why = Vec::new();
        if bound.bounded == Some(false) {
            r.rule = "one-to-many, unbounded N → reference".into();
            why.push(bound.why.clone());
        }
        if r.co_access_share < min {
            if r.rule.is_empty() {
                r.rule = "one-to-many, rarely read together → reference".into();
            }
            why.push(format!(
                "{} of the reads of {p} and {} of the reads of {c} read both (threshold {})",
                pct(parent_share),
                pct(child_share),
                pct(min)
            ));
        }
        if !few(child_attrs) {
            if r.rule.is_empty() {
                r.rule = "one-to-many, many attributes on the N side → reference".into();
            }
            why.push(format!(
                "{c} has {child_attrs} attributes besides the key (more than {})",
                config.max_embed_attributes
            ));
        }
        if bound.bounded.is_none() {
            if r.rule.is_empty() {
                r.rule = "one-to-many, N not known to be bounded → reference".into();
            }
            why.push(bound.why.clone());
        }
        if r.rule.is_empty() {
            r.rule = "one-to-many, parent columns not used → reference".into();
            why.push(format!(
                "the reads that join {c} to {p} use no column of {p} besides the key"
            ));
        }
        r.text = format!(
            "Reference: {c} keeps {} as a key to {p}; {}.",
            fk.columns.join(", "),
            why.join("; ")
        );
    }
    Relationship {
        from: parent_name,
        to: child.name.clone(),
        columns: fk.columns.clone(),
        cardinality,
        decision,
        rationale: r,
    }
}

fn many_to_many(
    schema: &Schema,
    reads: &[&AccessPattern],
    workload: &Workload,
    j: &Table,
    fa: &ForeignKey,
    fb: &ForeignKey,
    config: &AnalyzeConfig,
) -> Relationship {
    let name = |fk: &ForeignKey| {
        schema
            .table(&fk.ref_table)
            .map(|t| t.name.clone())
            .unwrap_or_else(|| fk.ref_table.clone())
    };
    let (a, b) = (name(fa), name(fb));
    let b_table = schema.table(&b);
    let b_attrs = b_table
        .map(|t| t.columns.len().saturating_sub(t.primary_key.len()))
        .unwrap_or(0);
    let junction_reads = reads_of(reads, &j.name);
    let a_reads = reads_of(reads, &a);
    let together: Vec<&AccessPattern> = junction_reads
        .iter()
        .copied()
        .filter(|p| p.analysis.tables.iter().any(|t| *t == a || *t == b))
        .collect();
    let share = if a_reads.is_empty() {
        0.0
    } else {
        weight(
            &together
                .iter()
                .copied()
                .filter(|p| a_reads.iter().any(|x| x.id == p.id))
                .collect::<Vec<_>>(),
        ) as f64
            / weight(&a_reads) as f64
    };
    let bound = boundedness(workload, j, &a, fa, false, config);
    let mut r = Rationale {
        co_access_share: share,
        attribute_count: b_attrs,
        bounded: bound.bounded,
        fanout: bound.fanout,
        co_access_patterns: ids(&together),
        ..Default::default()
    };
    let decision = if share >= config.min_co_access_share
        && b_attrs <= config.max_embed_attributes
        && bound.bounded == Some(true)
    {
        r.rule = "many-to-many, few attributes read together, bounded → embed".into();
        r.text = format!("{} of the reads of {a} also read its {b} through {}; {b} has {b_attrs} attributes and {}: embed them in {a}.", pct(share), j.name, bound.why);
        Decision::Embed
    } else {
        r.rule = "many-to-many → reference (one table per direction read)".into();
        let mut why = vec![format!(
            "{} of the reads of {a} read {b} through {} (threshold {})",
            pct(share),
            j.name,
            pct(config.min_co_access_share)
        )];
        if b_attrs > config.max_embed_attributes {
            why.push(format!("{b} has {b_attrs} attributes besides its key"));
        }
        if bound.bounded != Some(true) {
            why.push(bound.why.clone());
        }
        r.text = format!(
            "Reference through {} ({a}_by_{b} and {b}_by_{a} tables for the directions read); {}.",
            j.name,
            why.join("; ")
        );
        Decision::Reference
    };
    let mut columns = fa.columns.clone();
    columns.extend(fb.columns.iter().cloned());
    Relationship {
        from: a,
        to: b,
        columns,
        cardinality: Cardinality::ManyToMany {
            via: j.name.clone(),
        },
        decision,
        rationale: r,
    }
}
