//! Assembly: the tables of the chosen ways of serving the reads (each with the columns those
//! reads need), then the lookups the write paths need and no read provides, until every write
//! path can be planned.
//!
//! In: the candidates and the [`Chosen`] options; out: a [`Build`] — the tables, each read's
//! [`Served`], the embedded collections hosted ([`embed`]) and the lookups the write paths need.

pub mod embed;

use crate::candidates::keys;
use crate::candidates::shape;
use crate::candidates::tables::{self, TableBuild};
use crate::candidates::{Candidates, Fixed};
use crate::select::Chosen;
use crate::writes;
use crate::Inputs;
use remodel_model::{AccessPattern, Diagnostic, Severity, StatementKind};

/// How one read is served.
pub enum Served {
    /// A one-off statement (a data load): shapes nothing; the reason.
    OneOff(String),
    /// Served by table `usize` with this shape and key layout.
    Table(usize, Box<shape::Shape>, keys::KeyPlan),
    /// Cannot be designed: the reason.
    Unservable(String),
    /// Served from the parent's row in table `usize`, whose collection embeds the children
    /// (embedding `usize`).
    Embedded(usize, usize),
    /// Served by the chosen counter `usize` ([`Build::counters`]).
    Counter(usize),
}

/// What the passes build up: the tables, how each read is served, the embedded collections.
#[derive(Default)]
pub struct Build {
    /// The tables.
    pub tables: Vec<TableBuild>,
    /// How each read (by workload index) is served.
    pub served: Vec<(usize, Served)>,
    /// (table, embedding) pairs: the parent tables that hold an embedded collection.
    pub hosts: Vec<(usize, usize)>,
    /// Problems and notes found on the way.
    pub diagnostics: Vec<Diagnostic>,
    /// For each candidate layout, the table it became (when a chosen read uses it).
    pub layout_table: Vec<Option<usize>>,
    /// The counter tables chosen, and every counter considered with its costs.
    pub counters: Vec<crate::checklist::counters::Decision>,
}

/// The tables of the chosen options: each layout chosen once, with the columns of every read it
/// serves; reads that were not a choice served as fixed.
pub fn from_selection(inp: &Inputs<'_>, c: &Candidates, chosen: &Chosen) -> Build {
    let mut build = Build::default();
    let mut table_of: Vec<Option<usize>> = vec![None; c.layouts.len()];
    let mut table = |build: &mut Build, li: usize| -> usize {
        *table_of[li].get_or_insert_with(|| {
            build.tables.push(c.layouts[li].clone());
            build.tables.len() - 1
        })
    };
    for (&pi, &oi) in &chosen.option {
        let o = &c.options[oi];
        let p = &inp.workload.patterns[pi];
        let ti = table(&mut build, o.layout);
        build.tables[ti].add_needed(&o.needs, &o.shape.edges);
        build.tables[ti].add_serves(&p.id);
        for l in &o.shape.lookups {
            if let Some(&li) = c.primary.get(&l.table) {
                let lt = table(&mut build, li);
                build.tables[lt].add_needed(&l.columns, &[]);
                build.tables[lt].add_serves(&p.id);
            }
        }
        build.served.push((
            pi,
            Served::Table(ti, Box::new(o.shape.clone()), o.key.clone()),
        ));
    }
    for (pi, f) in &c.fixed {
        let p = &inp.workload.patterns[*pi];
        let served = match f {
            Fixed::OneOff(why) => Served::OneOff(why.clone()),
            Fixed::Unservable(why) => Served::Unservable(why.clone()),
            Fixed::Embedded(ei, cols) => {
                let Some(host) = tables::ensure_primary_lookup(
                    inp.schema,
                    &mut build.tables,
                    &inp.embeds[*ei].parent,
                ) else {
                    continue;
                };
                build.tables[host].add_needed(cols, &[]);
                build.tables[host].add_serves(&p.id);
                if !build.hosts.contains(&(host, *ei)) {
                    build.hosts.push((host, *ei));
                }
                Served::Embedded(host, *ei)
            }
            Fixed::Counter(ci) => Served::Counter(*ci),
        };
        build.served.push((*pi, served));
    }
    for (pi, note) in &c.notes {
        build.diagnostics.push(diag(
            &inp.workload.patterns[*pi],
            Severity::Warning,
            note.clone(),
        ));
    }
    build.served.sort_by_key(|(pi, _)| *pi);
    build.layout_table = table_of;
    for b in build.tables.iter_mut() {
        tables::finish(inp.schema, b, inp.config.copy_entity_columns);
        let one_partition = b.partition == [keys::KeySrc::Const(keys::ALL.into())];
        if let Some(why) = small_entity(inp, &b.root).filter(|_| one_partition) {
            b.warnings.push((
                "one_partition".into(),
                format!("{} is read whole from one partition ({why}): fine up to about {} rows / 100 MB; past that, partition it by a column the reads bind", b.root, inp.config.thresholds.one_partition_rows),
            ));
        }
    }
    build
}

/// Puts each fold's collection (a loop's children) in the table that serves its read, which
/// must hold that read's rows (the children's parent), and makes sure a table finds the parent
/// row by key (its writes read the rest of the host's key there). Returns the folds' keys hosted.
pub fn host_folds(
    inp: &mut Inputs<'_>,
    build: &mut Build,
    folds: &[(String, String, embed::Embedding)],
) -> Vec<String> {
    let mut hosted = Vec::new();
    for (key, read, e) in folds {
        let Some(pi) = inp.workload.patterns.iter().position(|p| &p.id == read) else {
            continue;
        };
        let host = build.served.iter().find_map(|(i, s)| match s {
            Served::Table(ti, ..) if *i == pi => Some(*ti),
            _ => None,
        });
        let Some(host) = host.filter(|h| build.tables[*h].root == e.parent) else {
            continue;
        };
        let Some(row) = tables::ensure_primary_lookup(inp.schema, &mut build.tables, &e.parent)
        else {
            continue;
        };
        // The parent's row gives the child's writes the rest of the host's key.
        let keyed: Vec<remodel_model::ColumnRef> = build.tables[host]
            .key_elements()
            .into_iter()
            .filter_map(|k| match k {
                keys::KeySrc::Col(c)
                    if c.table == e.parent && !e.parent_key.contains(&c.column) =>
                {
                    Some(c)
                }
                _ => None,
            })
            .collect();
        let b = &mut build.tables[row];
        b.add_needed(&keyed, &[]);
        tables::finish(inp.schema, b, inp.config.copy_entity_columns);
        inp.embeds.push(e.clone());
        build.hosts.push((host, inp.embeds.len() - 1));
        hosted.push(key.clone());
    }
    hosted
}

/// Why `table` counts as small enough to live in one partition, or `None`: its row count from
/// the statistics, or — without statistics — reference data the workload never inserts into.
pub fn small_entity(inp: &Inputs<'_>, table: &str) -> Option<String> {
    if let Some(ts) = inp.sizer.stats.and_then(|s| s.table(table)) {
        let limit = inp.config.thresholds.one_partition_rows as f64;
        return (ts.rows >= 0.0 && ts.rows <= limit).then(|| {
            format!(
                "about {} rows by the statistics",
                crate::costs::sizing::human_count(ts.rows)
            )
        });
    }
    let inserted = inp.workload.patterns.iter().any(|p| {
        p.kind == StatementKind::Insert
            && p.analysis.one_off.is_none()
            && p.analysis.write.as_ref().is_some_and(|w| w.table == table)
    });
    (!inserted).then(|| {
        "reference data: the workload never inserts into it; no statistics give its size (pass --stats to check)".to_string()
    })
}

/// The lookups write paths need and no read provides (a table that finds the rows a
/// write changes, with the columns it must read first), until every write path can be planned.
pub fn write_lookups(inp: &Inputs<'_>, build: &mut Build) {
    for _round in 0..4 {
        tables::name_tables(inp.schema, &mut build.tables);
        let mut added = false;
        let planned = inp
            .workload
            .patterns
            .iter()
            .filter(|p| p.kind.is_write() && !inp.forbidden.contains_key(&p.id));
        for p in planned {
            let specs: Vec<crate::checklist::counters::Spec> =
                build.counters.iter().map(|d| d.spec.clone()).collect();
            let (_, missing) = writes::plan(
                inp.schema,
                &inp.config.keyspace,
                p,
                (&build.tables, &specs),
                &inp.sizer,
            );
            for m in missing {
                added |= provide_lookup(inp, &mut build.tables, &m, &p.id);
            }
        }
        if !added {
            break;
        }
    }
    tables::name_tables(inp.schema, &mut build.tables);
}

/// Adds (or widens) the table a write path is missing; true when something changed.
fn provide_lookup(
    inp: &Inputs<'_>,
    tables: &mut Vec<TableBuild>,
    m: &writes::Missing,
    pattern: &str,
) -> bool {
    let Some(t) = inp.schema.table(&m.entity) else {
        return false;
    };
    // The lookup by primary key serves a read by any columns holding the primary key; a read by
    // another unique key (an upsert's conflict key) needs a table partitioned by that key.
    let by_key = !t.primary_key.is_empty() && t.primary_key.iter().all(|k| m.by.contains(k));
    let idx = if by_key {
        tables::ensure_primary_lookup(inp.schema, tables, &t.key())
    } else {
        let by: Vec<remodel_model::ColumnRef> =
            m.by.iter()
                .filter_map(|c| {
                    t.column(c)
                        .map(|col| remodel_model::ColumnRef::new(t.key(), &col.name))
                })
                .collect();
        let existing = tables.iter().position(|b| {
            b.root == t.key()
                && b.null_filter.is_empty()
                && b.extra_keys.is_empty()
                && b.partition.len() == by.len()
                && b.partition
                    .iter()
                    .all(|k| matches!(k, keys::KeySrc::Col(c) if by.contains(c)))
        });
        match existing {
            Some(i) => Some(i),
            None => {
                tables.push(TableBuild::lookup(&t.key(), &by));
                Some(tables.len() - 1)
            }
        }
    };
    let Some(idx) = idx else { return false };
    let b = &mut tables[idx];
    let before = (b.needed.len(), b.columns.len());
    b.add_needed(&m.columns, &[]);
    b.add_serves(pattern);
    tables::finish(inp.schema, b, inp.config.copy_entity_columns);
    (b.needed.len(), b.columns.len()) != before || b.name.is_empty()
}

/// A diagnostic about a pattern, at its first location.
pub fn diag(p: &AccessPattern, severity: Severity, message: String) -> Diagnostic {
    Diagnostic {
        severity,
        location: p.locations.first().cloned(),
        message: format!("{}: {message}", p.id),
    }
}
