//! The query-first designer: Cassandra tables, keys, buckets, sizing, write paths and CQL.
//!
//! Architecture invariant: no I/O; reads and returns plan-model values only.
//!
//! The pipeline inside [`design`]: each read pattern gets a [`shape`] (root entity, equalities,
//! range, order, columns), a key layout by the Chebotko rules ([`keys`]), and a table; tables that
//! serve the same partitions with a compatible clustering are merged ([`tables`]); then sizing
//! ([`sizing`]), the query mapping ([`queries`]) and the write paths ([`writes`]).

pub mod cql;
pub mod embed;
pub mod keys;
pub mod naming;
pub mod queries;
pub mod shape;
pub mod sizing;
pub mod tables;
pub mod types;
pub mod writes;

pub use cql::emit_cql;

use remodel_model::{
    AccessPattern, Design, DesignTable, Diagnostic, Keyspace, Plan, QueryMapping, Relationship,
    Schema, Severity, StatementKind, Statistics, Workload, PLAN_FORMAT_VERSION,
};
use serde::{Deserialize, Serialize};
use tables::TableBuild;

/// Limits the design is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Thresholds {
    /// Largest partition (one replica) before a `large_partition` warning: 100 MiB.
    pub max_partition_bytes: u64,
    /// Most rows in a partition before a `large_partition` warning: 100,000.
    pub max_partition_rows: u64,
    /// Share of all rows one key value may hold before a `hot_key` warning: 0.1.
    pub hot_key_share: f64,
    /// Fewer distinct partition-key values than this gives a `low_cardinality_key` warning: 100.
    pub low_cardinality_limit: f64,
    /// Cassandra's `batch_size_warn_threshold`: 5 KiB.
    pub batch_warn_bytes: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            max_partition_bytes: 100 * 1024 * 1024,
            max_partition_rows: 100_000,
            hot_key_share: 0.1,
            low_cardinality_limit: 100.0,
            batch_warn_bytes: 5 * 1024,
        }
    }
}

/// Statistics assumed where `--stats` gives none (stated in each table's `estimates.basis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DefaultStatistics {
    /// Rows per table: 1,000,000.
    pub rows: f64,
    /// Rows sharing one value of a non-unique column: 100.
    pub rows_per_key: f64,
    /// Days of history a time column spans (sizes time buckets): 365.
    pub history_days: f64,
    /// Largest partition / average partition: 1 (uniform) without statistics.
    pub skew: f64,
}

impl Default for DefaultStatistics {
    fn default() -> Self {
        DefaultStatistics {
            rows: 1_000_000.0,
            rows_per_key: 100.0,
            history_days: 365.0,
            skew: 1.0,
        }
    }
}

/// Settings of the designer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignConfig {
    /// Keyspace name.
    pub keyspace: String,
    /// Replication map as CQL text.
    pub replication: String,
    /// Limits for warnings.
    pub thresholds: Thresholds,
    /// Statistics assumed without `--stats`.
    pub defaults: DefaultStatistics,
    /// Every table keeps the whole source row of its entity (not only the columns its reads
    /// project), so any write to the entity can update every copy and new reads can use them.
    pub copy_entity_columns: bool,
}

impl Default for DesignConfig {
    fn default() -> Self {
        let ks = Keyspace::default();
        DesignConfig {
            keyspace: ks.name,
            replication: ks.replication,
            thresholds: Thresholds::default(),
            defaults: DefaultStatistics::default(),
            copy_entity_columns: true,
        }
    }
}

/// The design and what the designer has to say about the input.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignOutput {
    /// The proposed tables, query mapping and write paths.
    pub design: Design,
    /// Patterns that could not be designed, and other notes.
    pub diagnostics: Vec<Diagnostic>,
}

enum Served {
    /// Served by table `usize` with this shape and key layout.
    Table(usize, Box<shape::Shape>, keys::KeyPlan),
    /// Cannot be designed: the reason.
    Unservable(String),
    /// Served from the parent's row in table `usize`, whose collection embeds the children
    /// (embedding `usize`).
    Embedded(usize, usize),
}

fn diag(p: &AccessPattern, severity: Severity, message: String) -> Diagnostic {
    Diagnostic {
        severity,
        location: p.locations.first().cloned(),
        message: format!("{}: {message}", p.id),
    }
}

/// Designs an analysed workload and assembles the plan (schema, workload, relationships, design);
/// returns it with the analyzer's diagnostics followed by the designer's.
pub fn plan(
    analysis: remodel_analyze::Analysis,
    stats: Option<&Statistics>,
    config: &DesignConfig,
) -> (Plan, Vec<Diagnostic>) {
    let out = design(
        &analysis.schema,
        &analysis.workload,
        &analysis.relationships,
        stats,
        config,
    );
    let mut diagnostics = analysis.diagnostics;
    diagnostics.extend(out.diagnostics);
    let plan = Plan {
        format_version: PLAN_FORMAT_VERSION,
        schema: analysis.schema,
        workload: analysis.workload,
        relationships: analysis.relationships,
        design: out.design,
    };
    (plan, diagnostics)
}

/// Designs the query-first Cassandra model for a schema and its analysed workload.
pub fn design(
    schema: &Schema,
    workload: &Workload,
    relationships: &[Relationship],
    stats: Option<&Statistics>,
    config: &DesignConfig,
) -> DesignOutput {
    let mut diagnostics = Vec::new();
    let mut builds: Vec<TableBuild> = Vec::new();
    let mut served: Vec<(usize, Served)> = Vec::new();
    let embeds = embed::collect(schema, relationships);
    // (table, embedding) pairs: the parent tables that hold an embedded collection.
    let mut hosts: Vec<(usize, usize)> = Vec::new();

    // 1. One table per read pattern, merged into an existing one where it serves it.
    for (pi, p) in workload.patterns.iter().enumerate() {
        if p.kind != StatementKind::Select {
            continue;
        }
        // A read of a parent with its embedded children is a read of the parent's row.
        if let Some(ei) = embed::read_of(p, &embeds) {
            if let Some(idx) = ensure_primary_lookup(schema, &mut builds, &embeds[ei].parent) {
                let parent_cols: Vec<remodel_model::ColumnRef> = p
                    .analysis
                    .projection
                    .iter()
                    .filter(|c| c.table.eq_ignore_ascii_case(&embeds[ei].parent))
                    .filter_map(|c| shape::canonical(schema, c))
                    .collect();
                builds[idx].add_needed(&parent_cols, &[]);
                if !builds[idx].serves.contains(&p.id) {
                    builds[idx].serves.push(p.id.clone());
                }
                if !hosts.contains(&(idx, ei)) {
                    hosts.push((idx, ei));
                }
                served.push((pi, Served::Embedded(idx, ei)));
                continue;
            }
        }
        let shape = match shape::derive(schema, p, relationships) {
            Ok(s) => s,
            Err(why) => {
                diagnostics.push(diag(
                    p,
                    Severity::Warning,
                    format!("no table designed: {why}"),
                ));
                served.push((pi, Served::Unservable(why)));
                continue;
            }
        };
        let key = keys::plan(schema, &shape);
        let idx = if key.partition.is_empty() {
            // No equality and no bucketable range: served by a scan of the entity's lookup table.
            ensure_primary_lookup(schema, &mut builds, &shape.root)
        } else {
            match builds.iter_mut().position(|b| b.try_merge(&shape, &key)) {
                Some(i) => Some(i),
                None => {
                    builds.push(TableBuild::new(&shape, &key));
                    Some(builds.len() - 1)
                }
            }
        };
        let Some(idx) = idx else {
            let why = format!("`{}` has no columns to build a table from", shape.root);
            served.push((pi, Served::Unservable(why)));
            continue;
        };
        if key.partition.is_empty() {
            builds[idx].add_needed(&shape.needed, &shape.edges);
            if !builds[idx].serves.contains(&p.id) {
                builds[idx].serves.push(p.id.clone());
            }
        }
        for l in &shape.lookups {
            if let Some(li) = ensure_primary_lookup(schema, &mut builds, &l.table) {
                builds[li].add_needed(&l.columns, &[]);
                if !builds[li].serves.contains(&p.id) {
                    builds[li].serves.push(p.id.clone());
                }
            }
        }
        served.push((pi, Served::Table(idx, Box::new(shape), key)));
    }

    // 2. Finish the tables, then add the lookups that write paths need and no read provides.
    for b in builds.iter_mut() {
        tables::finish(schema, b, config.copy_entity_columns);
    }
    let sizer = sizing::Sizer {
        schema,
        stats,
        config,
    };
    for _round in 0..2 {
        tables::name_tables(schema, &mut builds);
        let mut added = false;
        for p in workload.patterns.iter().filter(|p| p.kind.is_write()) {
            let (_, missing) = writes::plan(schema, &config.keyspace, p, &builds, &sizer);
            for (table, by) in missing {
                let Some(t) = schema.table(&table) else {
                    continue;
                };
                let covers_pk = !t.primary_key.is_empty()
                    && t.primary_key
                        .iter()
                        .all(|k| by.iter().any(|b| b.eq_ignore_ascii_case(k)));
                if covers_pk && writes::finder(&builds, &t.name, &by).is_none() {
                    if let Some(mut b) = TableBuild::by_primary_key(schema, &t.name) {
                        b.serves.push(p.id.clone());
                        tables::finish(schema, &mut b, config.copy_entity_columns);
                        builds.push(b);
                        added = true;
                    }
                }
            }
        }
        if !added {
            break;
        }
    }
    tables::name_tables(schema, &mut builds);

    // 3. The query mapping.
    let mut queries = Vec::new();
    let mut suggestions = Vec::new();
    for (pi, s) in &served {
        let p = &workload.patterns[*pi];
        match s {
            Served::Unservable(why) => queries.push(QueryMapping {
                pattern: p.id.clone(),
                table: None,
                cql: None,
                single_partition: false,
                reason: Some(why.clone()),
                buckets: None,
                notes: Vec::new(),
            }),
            Served::Embedded(idx, ei) => {
                queries.push(embed::query_mapping(
                    &config.keyspace,
                    p,
                    &builds[*idx],
                    &embeds[*ei],
                ));
            }
            Served::Table(idx, shape, key) => {
                let t = &builds[*idx];
                let lookups: Vec<queries::LookupRead<'_>> = shape
                    .lookups
                    .iter()
                    .filter_map(|l| {
                        builds
                            .iter()
                            .find(|b| b.root == l.table && b.is_primary_lookup(schema))
                            .map(|b| queries::LookupRead {
                                table: b,
                                rationale: l.rationale.clone(),
                            })
                    })
                    .collect();
                let est = key.partitions_read.is_none().then(|| sizer.estimate(t).0);
                let scan_rows = est.as_ref().map(|e| (e.rows, e.basis.as_str()));
                let m = queries::map(&config.keyspace, p, shape, key, t, &lookups, scan_rows);
                if !m.single_partition {
                    if let Some(sg) = queries::suggest(&config.keyspace, p, shape, t) {
                        suggestions.push(sg);
                    }
                }
                queries.push(m);
            }
        }
    }

    // 4. Write paths.
    let mut write_paths = Vec::new();
    for p in workload.patterns.iter().filter(|p| p.kind.is_write()) {
        let (mut w, _) = writes::plan(schema, &config.keyspace, p, &builds, &sizer);
        embed_write(&mut w, schema, config, p, &embeds, &hosts, &builds);
        if w.targets.is_empty() {
            diagnostics.push(diag(
                p,
                Severity::Note,
                w.note
                    .clone()
                    .unwrap_or_else(|| "writes no designed table".into()),
            ));
        }
        write_paths.push(w);
    }

    // 5. The tables of the model, with estimates and warnings.
    let mut out_tables = Vec::new();
    let mut user_types: Vec<remodel_model::UserType> = Vec::new();
    for (bi, b) in builds.iter().enumerate() {
        let (mut estimates, warnings) = sizer.estimate(b);
        let mut columns = b.design_columns();
        let mut extra = Vec::new();
        for (_, ei) in hosts.iter().filter(|(h, _)| *h == bi) {
            let e = &embeds[*ei];
            columns.push(embed::column(e));
            // Each row carries its children: fan-out × entry bytes more per row.
            let per_row = e.fanout * e.entry_bytes;
            estimates.bytes_per_partition_avg = (estimates.bytes_per_partition_avg
                + estimates.rows_per_partition_avg * per_row)
                .round();
            estimates.bytes_per_partition_max = (estimates.bytes_per_partition_max
                + estimates.rows_per_partition_max * per_row)
                .round();
            extra.push(embed::source_parts(schema, e, "t0"));
            if !user_types.iter().any(|u| u.name == e.udt.name) {
                user_types.push(e.udt.clone());
            }
        }
        out_tables.push(DesignTable {
            name: b.name.clone(),
            partition_key: b.partition_key(),
            clustering: b.clustering_key(),
            columns,
            serves: b.serves.clone(),
            source_sql: tables::source_sql_with(schema, b, &extra),
            estimates,
            warnings,
        });
    }

    let design = Design {
        keyspace: Keyspace {
            name: config.keyspace.clone(),
            replication: config.replication.clone(),
        },
        tables: out_tables,
        types: user_types,
        queries,
        writes: write_paths,
        suggestions,
    };
    DesignOutput {
        design,
        diagnostics,
    }
}

/// Adds to a write path the collection writes of an embedded child: the parent tables holding
/// its collection are updated (append for an INSERT, rewrite after a read for UPDATE/DELETE).
fn embed_write(
    w: &mut remodel_model::WritePath,
    schema: &Schema,
    config: &DesignConfig,
    p: &AccessPattern,
    embeds: &[embed::Embedding],
    hosts: &[(usize, usize)],
    builds: &[TableBuild],
) {
    let Some(info) = &p.analysis.write else {
        return;
    };
    let Some(child) = schema.table(&info.table) else {
        return;
    };
    for (ei, e) in embeds.iter().enumerate() {
        if e.child != child.name {
            continue;
        }
        let tables: Vec<&TableBuild> = hosts
            .iter()
            .filter(|(_, x)| *x == ei)
            .map(|(h, _)| &builds[*h])
            .collect();
        if tables.is_empty() {
            continue;
        }
        let had_targets = !w.targets.is_empty();
        let (targets, reads, note) = embed::write(&config.keyspace, p, e, &tables);
        let entry_bytes = e.entry_bytes;
        // One entry per statement, plus 16 bytes for the map key and cell overhead.
        w.batch_bytes += (entry_bytes.ceil() as u64 + 16) * targets.len() as u64;
        w.fits_batch = w.batch_bytes <= config.thresholds.batch_warn_bytes;
        w.targets.extend(targets);
        w.read_before_write.extend(reads);
        w.note = match (had_targets, w.note.take()) {
            (true, Some(n)) => Some(format!("{n}; {note}")),
            _ => Some(note),
        };
    }
}

/// The index of `root`'s lookup-by-primary-key table, created when missing.
fn ensure_primary_lookup(
    schema: &Schema,
    builds: &mut Vec<TableBuild>,
    root: &str,
) -> Option<usize> {
    if let Some(i) = builds
        .iter()
        .position(|b| b.root == root && b.is_primary_lookup(schema))
    {
        return Some(i);
    }
    // A keyless table's stand-in (first column + the rest) is found by its warning.
    if let Some(i) = builds
        .iter()
        .position(|b| b.root == root && b.warnings.iter().any(|(c, _)| c == "no_source_key"))
    {
        return Some(i);
    }
    builds.push(TableBuild::by_primary_key(schema, root)?);
    Some(builds.len() - 1)
}
