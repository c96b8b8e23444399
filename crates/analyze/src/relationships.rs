//! Relationships (1-1, 1-N, M-N through a junction) and the embed / reference / duplicate-columns
//! decision for each, following the seed article (004): embed when the other side has FEW
//! attributes that are FREQUENTLY read together and N is bounded; reference when it has MANY
//! attributes, is RARELY read together, or N is unbounded.

use crate::config::AnalyzeConfig;
use crate::joins::fk_label;
use remodel_model::text::thousands;
use remodel_model::{
    AccessPattern, Cardinality, Decision, EqualityOp, ForeignKey, Rationale, Relationship,
    StatementKind, Table, TableIndex, Workload,
};
use std::collections::{BTreeSet, HashSet};

/// Classifies every foreign key of the schema (declared and inferred) and decides each.
pub fn classify(
    tables: &TableIndex<'_>,
    workload: &Workload,
    config: &AnalyzeConfig,
) -> Vec<Relationship> {
    let schema = tables.schema();
    let reads: Vec<&AccessPattern> = workload
        .patterns
        .iter()
        .filter(|p| p.kind == StatementKind::Select)
        .collect();
    let mut out = Vec::new();
    // The junction's two keys, by the table's place in the schema.
    let mut in_junction: HashSet<(usize, usize)> = HashSet::new();
    for (n, t) in schema.tables.iter().enumerate() {
        if let Some((i, j)) = junction(t) {
            in_junction.insert((n, i));
            in_junction.insert((n, j));
            out.push(many_to_many(
                tables,
                &reads,
                workload,
                t,
                &t.foreign_keys[i],
                &t.foreign_keys[j],
                config,
            ));
        }
    }
    for (n, t) in schema.tables.iter().enumerate() {
        for (i, fk) in t.foreign_keys.iter().enumerate() {
            if in_junction.contains(&(n, i)) {
                continue;
            }
            out.push(one_to(tables, &reads, workload, t, fk, config));
        }
    }
    out
}

/// The evidence of an inferred foreign key (`None` for a declared one).
fn key_evidence(fk: &ForeignKey) -> Option<String> {
    match &fk.origin {
        remodel_model::FkOrigin::Declared => None,
        remodel_model::FkOrigin::Inferred { evidence } => Some(evidence.clone()),
    }
}

/// Two FKs of `t` whose columns, disjoint, together are its primary key.
fn junction(t: &Table) -> Option<(usize, usize)> {
    let pk: BTreeSet<String> = t.primary_key.iter().cloned().collect();
    if pk.len() < 2 {
        return None;
    }
    let cols = |fk: &ForeignKey| -> BTreeSet<String> { fk.columns.iter().cloned().collect() };
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
            if c.table == table && !except.contains(&c.column) && !cols.contains(&c.column) {
                cols.push(c.column.clone());
            }
        }
    }
    cols
}

/// Rows inserted into `table` per day (or per whatever unit `calls` counts): calls × rows per
/// call. An `INSERT … SELECT` without a row count (a bulk load) is left out: its size is unknown.
fn inserts(workload: &Workload, table: &str) -> u64 {
    workload
        .patterns
        .iter()
        .filter(|p| {
            p.kind == StatementKind::Insert
                && p.analysis.write.as_ref().is_some_and(|w| w.table == table)
        })
        .filter_map(|p| {
            p.analysis
                .rows_expected
                .map(|r| (p.calls as f64 * r).round() as u64)
        })
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
    let key = format!("{}.{}", child.key(), first);
    if let Some(n) = config
        .fanout
        .get(&key)
        .or_else(|| config.fanout.get(&child.key()))
    {
        return Bound {
            bounded: Some(*n <= config.bounded_n_limit),
            fanout: Some(*n as f64),
            why: format!(
                "configured fan-out: {n} {} rows per {parent} row",
                child.key()
            ),
        };
    }
    // Measured: a read of the children by exactly the FK, without LIMIT, with rows per call.
    for p in &workload.patterns {
        let a = &p.analysis;
        let by_fk = p.kind == StatementKind::Select
            && a.tables == [child.key()]
            && a.limit.is_none()
            && a.aggregates.is_empty()
            && a.equality.len() == fk.columns.len()
            && fk.columns.iter().all(|c| {
                a.equality
                    .iter()
                    .any(|e| e.op == EqualityOp::Eq && e.column.column == *c)
            });
        if let (true, Some(rows), true) = (by_fk, p.rows, p.calls > 0) {
            let n = rows as f64 / p.calls as f64;
            return Bound {
                bounded: Some(n <= config.bounded_n_limit as f64),
                fanout: Some(n),
                why: format!(
                    "{} returns {n:.1} {} rows per {parent} row on average",
                    p.id,
                    child.key()
                ),
            };
        }
    }
    let (ci, pi) = (inserts(workload, &child.key()), inserts(workload, parent));
    match (ci, pi) {
        (0, _) => Bound {
            bounded: None,
            fanout: None,
            why: format!(
                "the workload does not insert into {}, so N is unknown",
                child.key()
            ),
        },
        (c, 0) => Bound {
            bounded: Some(false),
            fanout: None,
            why: format!(
                "the {} rows of one {parent} row grow without bound: {} rows inserted into {} and none into {parent}",
                child.key(), thousands(c), child.key()
            ),
        },
        (c, p) => {
            let n = c as f64 / p as f64;
            Bound {
                bounded: Some(n <= config.bounded_n_limit as f64),
                fanout: Some(n),
                why: format!(
                    "about {n:.1} {} rows per {parent} row ({} rows inserted into {} for {} into {parent})",
                    child.key(), thousands(c), child.key(), thousands(p)
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

/// True when a read enters by the child (binds child columns and not the parent's), or, when
/// that does not decide, lists the child first: the seed's "primary entity" of the read.
fn enters_by_child(p: &AccessPattern, child: &str, parent: &str) -> bool {
    let bound = |t: &str| {
        p.analysis
            .equality
            .iter()
            .any(|e| e.column.table == t && e.op != EqualityOp::IsNull)
    };
    match (bound(child), bound(parent)) {
        (true, false) => true,
        (false, true) => false,
        _ => {
            let pos = |t: &str| p.analysis.tables.iter().position(|x| x == t);
            pos(child) <= pos(parent)
        }
    }
}

/// What the workload does across one foreign key (child `c` → parent `p`): the facts every
/// rule of [`one_to`] reads.
struct Sides<'a> {
    /// The child table's key.
    c: String,
    /// The parent table's key.
    p: String,
    /// The join's label (`child.col → parent.col`).
    label: String,
    /// Reads that follow the foreign key.
    together: Vec<&'a AccessPattern>,
    /// Of those, the reads entering by the child (looking up its parent).
    from_child: Vec<&'a AccessPattern>,
    /// Of those, the reads entering by the parent (reading its children).
    from_parent: Vec<&'a AccessPattern>,
    /// Every read of the child table.
    child_reads: Vec<&'a AccessPattern>,
    /// Every read of the parent table.
    parent_reads: Vec<&'a AccessPattern>,
    /// The child's reads (by calls) that look up the parent.
    child_share: f64,
    /// The parent's reads (by calls) that read the children.
    parent_share: f64,
    /// The parent's columns the child-entering reads use.
    parent_cols: Vec<String>,
    /// The child's columns besides the foreign key.
    child_attrs: usize,
    /// Whether the children per parent are bounded, and why.
    bound: Bound,
}

/// The weighted share of `of` that `part` is (0 when `of` is empty).
fn share(part: &[&AccessPattern], of: &[&AccessPattern]) -> f64 {
    if of.is_empty() {
        0.0
    } else {
        weight(part) as f64 / weight(of) as f64
    }
}

fn one_to(
    tables: &TableIndex<'_>,
    reads: &[&AccessPattern],
    workload: &Workload,
    child: &Table,
    fk: &ForeignKey,
    config: &AnalyzeConfig,
) -> Relationship {
    let one_to_one = child.is_unique_on(&fk.columns);
    let sides = sides(tables, reads, workload, child, fk, one_to_one, config);
    let few = |n: usize| n <= config.max_embed_attributes;
    let min = config.min_co_access_share;
    let dup_ok =
        sides.child_share >= min && !sides.parent_cols.is_empty() && few(sides.parent_cols.len());
    let embed_ok =
        sides.parent_share >= min && few(sides.child_attrs) && sides.bound.bounded == Some(true);
    let prefer_dup =
        dup_ok && (!embed_ok || weight(&sides.from_child) >= weight(&sides.from_parent));
    let mut r = Rationale {
        bounded: sides.bound.bounded,
        fanout: sides.bound.fanout,
        key_evidence: key_evidence(fk),
        ..Default::default()
    };
    let decision = if one_to_one {
        one_to_one_rule(&sides, fk, min, &mut r)
    } else if prefer_dup {
        duplicate_rule(&sides, &mut r)
    } else if embed_ok {
        embed_rule(&sides, fk, &mut r)
    } else {
        reference_rule(&sides, fk, config, &mut r)
    };
    Relationship {
        from: sides.p,
        to: child.key(),
        columns: fk.columns.clone(),
        cardinality: if one_to_one {
            Cardinality::OneToOne
        } else {
            Cardinality::OneToMany
        },
        decision,
        rationale: r,
    }
}

/// The facts of the foreign key `fk` of `child` in the workload's reads.
fn sides<'a>(
    tables: &TableIndex<'_>,
    reads: &[&'a AccessPattern],
    workload: &Workload,
    child: &Table,
    fk: &ForeignKey,
    one_to_one: bool,
    config: &AnalyzeConfig,
) -> Sides<'a> {
    let p = tables
        .table(&fk.ref_table)
        .map(|t| t.key())
        .unwrap_or_else(|| fk.ref_table.clone());
    let c = child.key();
    let label = fk_label(&c, fk, tables);
    let together = following(reads, &label);
    // Reads entering by the child look up its parent (N-1: copy parent columns into the child);
    // reads entering by the parent read its children (1-N: embed the children in the parent).
    let (from_child, from_parent): (Vec<&AccessPattern>, Vec<&AccessPattern>) = together
        .iter()
        .copied()
        .partition(|q| enters_by_child(q, &c, &p));
    let child_reads = reads_of(reads, &c);
    let parent_reads = reads_of(reads, &p);
    Sides {
        child_share: share(&from_child, &child_reads),
        parent_share: share(&from_parent, &parent_reads),
        parent_cols: columns_used(&from_child, &p, &fk.ref_columns),
        child_attrs: child.columns.len().saturating_sub(fk.columns.len()),
        bound: boundedness(workload, child, &p, fk, one_to_one, config),
        c,
        p,
        label,
        together,
        from_child,
        from_parent,
        child_reads,
        parent_reads,
    }
}

/// One-to-one: one row when the two sides are read together often enough, else a reference.
fn one_to_one_rule(s: &Sides<'_>, fk: &ForeignKey, min: f64, r: &mut Rationale) -> Decision {
    let (c, p) = (&s.c, &s.p);
    let read_together = share(&s.together, &s.child_reads).max(share(&s.together, &s.parent_reads));
    r.co_access_share = read_together;
    r.attribute_count = s.child_attrs;
    r.co_access_patterns = ids(&s.together);
    if read_together >= min {
        r.rule = "one-to-one, read together → embed (same row)".into();
        r.columns = columns_used(&s.together, c, &fk.columns);
        r.text = format!(
            "{c} has at most one row per {p} row and {} of the reads of one side also read the other: store them in one row.",
            pct(read_together)
        );
        Decision::Embed
    } else {
        r.rule = "one-to-one, rarely read together → reference".into();
        r.text = format!(
            "{c} has at most one row per {p} row, but only {} of the reads of one side also read the other: keep them apart, linked by key.",
            pct(read_together)
        );
        Decision::Reference
    }
}

/// Many-to-one lookups of a few parent columns: the columns copied into the child.
fn duplicate_rule(s: &Sides<'_>, r: &mut Rationale) -> Decision {
    let (c, p) = (&s.c, &s.p);
    r.rule = "many-to-one lookup read together, few attributes → duplicate the parent's columns into the child".into();
    r.co_access_share = s.child_share;
    r.attribute_count = s.parent_cols.len();
    r.columns = s.parent_cols.clone();
    r.co_access_patterns = ids(&s.from_child);
    r.text = format!(
        "{} of the reads of {c} (weighted by calls) also look up the one {p} row of each (along {}) and use {} of its columns ({}): copy them into the {c} rows.",
        pct(s.child_share),
        s.label,
        s.parent_cols.len(),
        s.parent_cols.join(", ")
    );
    Decision::DuplicateColumns
}

/// One-to-few children read with their parent: embedded in the parent's row.
fn embed_rule(s: &Sides<'_>, fk: &ForeignKey, r: &mut Rationale) -> Decision {
    let (c, p) = (&s.c, &s.p);
    r.rule = "one-to-few, read together → embed the children in the parent".into();
    r.co_access_share = s.parent_share;
    r.attribute_count = s.child_attrs;
    r.columns = columns_used(&s.from_parent, c, &fk.columns);
    r.co_access_patterns = ids(&s.from_parent);
    r.text = format!(
        "{} of the reads of {p} (weighted by calls) also read its {c} rows, which have {} attributes and are bounded ({}): embed them in the {p} row (a collection or UDT).",
        pct(s.parent_share),
        s.child_attrs,
        s.bound.why
    );
    Decision::Embed
}

/// Everything else: a reference, with every reason that ruled out copying and embedding.
fn reference_rule(
    s: &Sides<'_>,
    fk: &ForeignKey,
    config: &AnalyzeConfig,
    r: &mut Rationale,
) -> Decision {
    let (c, p) = (&s.c, &s.p);
    let few = |n: usize| n <= config.max_embed_attributes;
    let min = config.min_co_access_share;
    r.co_access_share = s.parent_share.max(s.child_share);
    r.attribute_count = s.child_attrs;
    r.co_access_patterns = ids(&s.together);
    let mut why = Vec::new();
    let rule = |r: &mut Rationale, text: &str| {
        if r.rule.is_empty() {
            r.rule = text.to_string();
        }
    };
    if s.bound.bounded == Some(false) {
        rule(r, "one-to-many, unbounded N → reference");
        why.push(s.bound.why.clone());
    }
    if s.parent_share < min && s.child_share < min {
        rule(r, "one-to-many, rarely read together → reference");
        why.push(format!(
            "{} of the reads of {p} read its {c} rows and {} of the reads of {c} look up their {p} row (threshold {})",
            pct(s.parent_share),
            pct(s.child_share),
            pct(min)
        ));
    }
    if s.child_share >= min && !few(s.parent_cols.len()) {
        rule(r, "many-to-one lookup of many attributes → reference");
        why.push(format!(
            "the reads of {c} use {} column(s) of {p} (more than {})",
            s.parent_cols.len(),
            config.max_embed_attributes
        ));
    }
    if !few(s.child_attrs) {
        rule(r, "one-to-many, many attributes on the N side → reference");
        why.push(format!(
            "{c} has {} attributes besides the key (more than {})",
            s.child_attrs, config.max_embed_attributes
        ));
    }
    why.extend(read_alone_by_parent_key(s, fk));
    if s.bound.bounded.is_none() {
        rule(r, "one-to-many, N not known to be bounded → reference");
        why.push(s.bound.why.clone());
    }
    if r.rule.is_empty() {
        r.rule = "one-to-many, no parent column used → reference".into();
        why.push(format!(
            "the reads that join {c} to {p} use no column of {p} besides the key"
        ));
    }
    r.text = format!(
        "Reference: {c} keeps {} as the key of its {p} row; {}.",
        fk.columns.join(", "),
        why.join("; ")
    );
    Decision::Reference
}

/// The reads of the child by its whole foreign key that are not key lookups, as a reason
/// against embedding (the children are read on their own); `None` when there are none.
fn read_alone_by_parent_key(s: &Sides<'_>, fk: &ForeignKey) -> Option<String> {
    let (c, p) = (&s.c, &s.p);
    let by_parent_key: Vec<&AccessPattern> = s
        .child_reads
        .iter()
        .copied()
        .filter(|q| {
            !q.analysis.key_lookup
                && fk.columns.iter().all(|col| {
                    q.analysis
                        .equality
                        .iter()
                        .any(|e| e.column.table == *c && e.column.column == *col)
                })
        })
        .collect();
    if by_parent_key.is_empty() {
        return None;
    }
    let limits: Vec<String> = by_parent_key
        .iter()
        .filter_map(|q| q.analysis.limit.map(|l| format!("{} takes {l}", q.id)))
        .collect();
    Some(format!(
        "{c} rows are read on their own by their {p} key ({}, {} calls{})",
        ids(&by_parent_key).join(", "),
        thousands(weight(&by_parent_key)),
        if limits.is_empty() {
            String::new()
        } else {
            format!("; {}", limits.join(", "))
        }
    ))
}

/// True when read `p` enters an M-N relationship by `side`: it binds `side`'s primary key, or
/// the junction `j`'s columns of `fk` (the foreign key to `side`).
fn enters_by(
    tables: &TableIndex<'_>,
    j: &Table,
    p: &AccessPattern,
    side: &str,
    fk: &ForeignKey,
) -> bool {
    let eq = &p.analysis.equality;
    let binds = |table: &str, cols: &[String]| {
        !cols.is_empty()
            && cols.iter().all(|c| {
                eq.iter()
                    .any(|e| e.column.table == table && e.column.column == *c)
            })
    };
    binds(&j.key(), &fk.columns)
        || tables
            .table(side)
            .is_some_and(|t| binds(&t.key(), &t.primary_key))
}

/// The reads that go from one `from` row (entering by its key, `from.1` being the junction's
/// foreign key to it) through the junction `j` to its `to` rows, and their weighted share of
/// the reads entering by `from`.
fn direction<'a>(
    tables: &TableIndex<'_>,
    reads: &[&'a AccessPattern],
    j: &Table,
    from: (&str, &ForeignKey),
    to: &str,
) -> (Vec<&'a AccessPattern>, f64) {
    let about: Vec<&AccessPattern> = reads
        .iter()
        .copied()
        .filter(|p| enters_by(tables, j, p, from.0, from.1))
        .collect();
    let through: Vec<&AccessPattern> = about
        .iter()
        .copied()
        .filter(|p| {
            let t = &p.analysis.tables;
            t.contains(&j.key()) && t.iter().any(|x| x == to)
        })
        .collect();
    let share = share(&through, &about);
    (through, share)
}

/// One direction of an M-N relationship as the rationale says it.
fn describe_direction(
    via: &str,
    from: &str,
    to: &str,
    ps: &[&AccessPattern],
    share: f64,
) -> String {
    if ps.is_empty() {
        format!("no read goes from one {from} row to its {to} rows")
    } else {
        format!(
            "{} read the {to} rows of one {from} row through {via} ({} calls, {} of the reads by {from} key)",
            ids(ps).join(", "),
            thousands(weight(ps)),
            pct(share)
        )
    }
}

fn many_to_many(
    tables: &TableIndex<'_>,
    reads: &[&AccessPattern],
    workload: &Workload,
    j: &Table,
    fa: &ForeignKey,
    fb: &ForeignKey,
    config: &AnalyzeConfig,
) -> Relationship {
    let name = |fk: &ForeignKey| {
        tables
            .table(&fk.ref_table)
            .map(|t| t.key())
            .unwrap_or_else(|| fk.ref_table.clone())
    };
    let (a, b) = (name(fa), name(fb));
    let attrs = |t: &str| {
        tables
            .table(t)
            .map(|t| t.columns.len().saturating_sub(t.primary_key.len()))
            .unwrap_or(0)
    };
    let (ab, ab_share) = direction(tables, reads, j, (&a, fa), &b);
    let (ba, ba_share) = direction(tables, reads, j, (&b, fb), &a);
    let (a_bound, b_bound) = (
        boundedness(workload, j, &a, fa, false, config),
        boundedness(workload, j, &b, fb, false, config),
    );
    let min = config.min_co_access_share;
    let embeddable = |share: f64, attrs: usize, bound: &Bound| {
        share >= min && attrs <= config.max_embed_attributes && bound.bounded == Some(true)
    };
    let mut together = ab.clone();
    together.extend(
        ba.iter()
            .copied()
            .filter(|p| !ab.iter().any(|x| x.id == p.id)),
    );
    let mut r = Rationale {
        co_access_share: ab_share.max(ba_share),
        co_access_patterns: ids(&together),
        key_evidence: [fa, fb]
            .into_iter()
            .filter_map(key_evidence)
            .reduce(|a, b| format!("{a}; {b}")),
        ..Default::default()
    };
    let describe = |from: &str, to: &str, ps: &[&AccessPattern], share: f64| {
        describe_direction(&j.key(), from, to, ps, share)
    };
    let decision =
        if embeddable(ab_share, attrs(&b), &a_bound) || embeddable(ba_share, attrs(&a), &b_bound) {
            let (from, to, share, n, bound) = if embeddable(ab_share, attrs(&b), &a_bound) {
                (&a, &b, ab_share, attrs(&b), &a_bound)
            } else {
                (&b, &a, ba_share, attrs(&a), &b_bound)
            };
            r.rule = "many-to-many, few attributes read together, bounded → embed".into();
            r.attribute_count = n;
            r.bounded = bound.bounded;
            r.fanout = bound.fanout;
            r.text = format!(
                "{}; {to} has {n} attributes and {}: embed them in {from}.",
                describe(from, to, if from == &a { &ab } else { &ba }, share),
                bound.why
            );
            Decision::Embed
        } else {
            r.rule = "many-to-many → reference (one table per direction read)".into();
            r.attribute_count = attrs(&b);
            r.bounded = a_bound.bounded;
            r.fanout = a_bound.fanout;
            let mut why = vec![
                describe(&a, &b, &ab, ab_share),
                describe(&b, &a, &ba, ba_share),
            ];
            for (side, n) in [(&b, attrs(&b)), (&a, attrs(&a))] {
                if n > config.max_embed_attributes {
                    why.push(format!("{side} has {n} attributes besides its key"));
                }
            }
            if a_bound.bounded != Some(true) {
                why.push(a_bound.why.clone());
            }
            r.text = format!(
                "Reference through {} (a table per direction read, {b}_by_{a} and {a}_by_{b}); {}.",
                j.key(),
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
        cardinality: Cardinality::ManyToMany { via: j.key() },
        decision,
        rationale: r,
    }
}
