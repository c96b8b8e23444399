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
pub mod validate;
pub mod writes;

pub use cql::emit_cql;

use remodel_model::{
    AccessPattern, Design, DesignTable, Diagnostic, Keyspace, Plan, QueryMapping, Relationship,
    Schema, Severity, StatementKind, Statistics, Workload, WritePath, PLAN_FORMAT_VERSION,
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
    /// Most rows of a table read whole from one constant partition (reference data such as
    /// categories or statuses); also the size assumed for such a table without statistics: 10,000.
    pub one_partition_rows: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            max_partition_bytes: 100 * 1024 * 1024,
            max_partition_rows: 100_000,
            hot_key_share: 0.1,
            low_cardinality_limit: 100.0,
            batch_warn_bytes: 5 * 1024,
            one_partition_rows: 10_000,
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
    /// A one-off statement (a data load): shapes nothing; the reason.
    OneOff(String),
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
        inputs: Vec::new(),
    };
    (plan, diagnostics)
}

/// The inputs every pass reads.
struct Inputs<'a> {
    schema: &'a Schema,
    workload: &'a Workload,
    relationships: &'a [Relationship],
    config: &'a DesignConfig,
    sizer: sizing::Sizer<'a>,
    embeds: Vec<embed::Embedding>,
}

/// What the passes build up: the tables, how each read is served, the embedded collections.
#[derive(Default)]
struct Build {
    tables: Vec<TableBuild>,
    served: Vec<(usize, Served)>,
    /// (table, embedding) pairs: the parent tables that hold an embedded collection.
    hosts: Vec<(usize, usize)>,
    diagnostics: Vec<Diagnostic>,
}

/// Designs the query-first Cassandra model for a schema and its analysed workload, in passes:
/// a table per read ([`read_tables`]), the lookups write paths need ([`write_lookups`]), then the
/// query mapping, the write paths and the tables with their estimates (emission), and last the
/// [`validate`] pass, whose findings are errors.
pub fn design(
    schema: &Schema,
    workload: &Workload,
    relationships: &[Relationship],
    stats: Option<&Statistics>,
    config: &DesignConfig,
) -> DesignOutput {
    let inputs = Inputs {
        schema,
        workload,
        relationships,
        config,
        sizer: sizing::Sizer {
            schema,
            stats,
            config,
        },
        embeds: embed::collect(schema, relationships),
    };
    let mut build = Build::default();
    read_tables(&inputs, &mut build);
    for b in build.tables.iter_mut() {
        tables::finish(schema, b, config.copy_entity_columns);
    }
    write_lookups(&inputs, &mut build);
    let (queries, suggestions) = map_queries(&inputs, &build);
    let writes = write_paths(&inputs, &mut build);
    let mut design = Design {
        keyspace: Keyspace {
            name: config.keyspace.clone(),
            replication: config.replication.clone(),
        },
        tables: emit_tables(&inputs, &build),
        types: build
            .hosts
            .iter()
            .map(|(_, ei)| inputs.embeds[*ei].udt.clone())
            .fold(Vec::new(), |mut acc, u| {
                if !acc.contains(&u) {
                    acc.push(u);
                }
                acc
            }),
        queries,
        writes,
        suggestions,
        violations: Vec::new(),
    };
    let mut diagnostics = build.diagnostics;
    diagnostics.extend(type_warnings(schema, &design));
    design.violations = validate::validate(schema, workload, &design);
    for v in &design.violations {
        diagnostics.push(Diagnostic {
            severity: Severity::Error,
            location: None,
            message: format!("plan check ({}): {}", v.check, v.message),
        });
    }
    DesignOutput {
        design,
        diagnostics,
    }
}

/// A warning at the declaration of every stored column whose type has no CQL mapping rule (a
/// type Postgres does not have, or an unknown one): carried as text, never silently.
fn type_warnings(schema: &Schema, design: &Design) -> Vec<Diagnostic> {
    let mut seen: Vec<remodel_model::ColumnRef> = Vec::new();
    let mut out = Vec::new();
    for src in design
        .tables
        .iter()
        .flat_map(|t| &t.columns)
        .filter_map(|c| c.source.as_ref())
    {
        if seen.contains(src) {
            continue;
        }
        seen.push(src.clone());
        let Some(col) = schema.table(&src.table).and_then(|t| t.column(&src.column)) else {
            continue;
        };
        if let Some(note) = types::mapping_note(&col.sql_type, schema) {
            out.push(Diagnostic {
                severity: Severity::Warning,
                location: col.location.clone(),
                message: format!("{src}: {note}"),
            });
        }
    }
    out
}

/// Pass 1: one table per read pattern, merged into an existing one where it serves it; reads of
/// a parent with its embedded children are served by the parent's row.
fn read_tables(inp: &Inputs<'_>, build: &mut Build) {
    let schema = inp.schema;
    for (pi, p) in inp.workload.patterns.iter().enumerate() {
        if p.kind != StatementKind::Select {
            continue;
        }
        if let Some(why) = &p.analysis.one_off {
            build.served.push((pi, Served::OneOff(why.clone())));
            continue;
        }
        if let Some(ei) = embed::read_of(p, &inp.embeds) {
            if let Some(idx) =
                ensure_primary_lookup(schema, &mut build.tables, &inp.embeds[ei].parent)
            {
                let parent_cols: Vec<remodel_model::ColumnRef> = p
                    .analysis
                    .projection
                    .iter()
                    .filter(|c| c.table.eq_ignore_ascii_case(&inp.embeds[ei].parent))
                    .filter_map(|c| shape::canonical(schema, c))
                    .collect();
                let b = &mut build.tables[idx];
                b.add_needed(&parent_cols, &[]);
                b.add_serves(&p.id);
                if !build.hosts.contains(&(idx, ei)) {
                    build.hosts.push((idx, ei));
                }
                build.served.push((pi, Served::Embedded(idx, ei)));
                continue;
            }
        }
        let shape = match shape::derive(schema, p, inp.relationships, shape::Parents::AsDecided) {
            Ok(s) => s,
            Err(why) => {
                build.diagnostics.push(diag(
                    p,
                    Severity::Warning,
                    format!("no table designed: {why}"),
                ));
                build.served.push((pi, Served::Unservable(why)));
                continue;
            }
        };
        let small = small_entity(inp, &shape.root);
        let key = keys::plan(schema, &shape, small.is_some());
        let idx = if key.partition.is_empty() {
            // No equality and no bucketable range: served by a scan of the entity's lookup table.
            ensure_primary_lookup(schema, &mut build.tables, &shape.root)
        } else {
            match build
                .tables
                .iter_mut()
                .position(|b| b.try_merge(&shape, &key))
            {
                Some(i) => Some(i),
                None => {
                    build.tables.push(TableBuild::new(&shape, &key));
                    Some(build.tables.len() - 1)
                }
            }
        };
        let Some(idx) = idx else {
            let why = format!("`{}` has no columns to build a table from", shape.root);
            build.served.push((pi, Served::Unservable(why)));
            continue;
        };
        if key.partition.is_empty() {
            build.tables[idx].add_needed(&shape.needed, &shape.edges);
            build.tables[idx].add_serves(&p.id);
        }
        if let (Some(why), true) = (
            small,
            key.partition == [keys::KeySrc::Const(keys::ALL.into())],
        ) {
            let t = &mut build.tables[idx];
            if !t.warnings.iter().any(|(c, _)| c == "one_partition") {
                t.warnings.push((
                    "one_partition".into(),
                    format!("{} is read whole from one partition ({why}): fine up to about 10k rows / 100 MB; past that, partition it by a column the reads bind", shape.root),
                ));
            }
        }
        for l in &shape.lookups {
            if let Some(li) = ensure_primary_lookup(schema, &mut build.tables, &l.table) {
                build.tables[li].add_needed(&l.columns, &[]);
                build.tables[li].add_serves(&p.id);
            }
        }
        build
            .served
            .push((pi, Served::Table(idx, Box::new(shape), key)));
    }
}

/// Why `table` counts as small enough to live in one partition, or `None`: its row count from
/// the statistics, or — without statistics — reference data the workload never inserts into.
fn small_entity(inp: &Inputs<'_>, table: &str) -> Option<String> {
    if let Some(ts) = inp.sizer.stats.and_then(|s| s.table(table)) {
        let limit = inp.config.thresholds.one_partition_rows as f64;
        return (ts.rows >= 0.0 && ts.rows <= limit).then(|| {
            format!(
                "about {} rows by the statistics",
                sizing::human_count(ts.rows)
            )
        });
    }
    let inserted = inp.workload.patterns.iter().any(|p| {
        p.kind == StatementKind::Insert
            && p.analysis.one_off.is_none()
            && p.analysis
                .write
                .as_ref()
                .is_some_and(|w| w.table.eq_ignore_ascii_case(table))
    });
    (!inserted).then(|| {
        "reference data: the workload never inserts into it; no statistics give its size (pass --stats to check)".to_string()
    })
}

/// Pass 2: the lookups write paths need and no read provides (a table that finds the rows a
/// write changes, with the columns it must read first), until every write path can be planned.
fn write_lookups(inp: &Inputs<'_>, build: &mut Build) {
    for _round in 0..4 {
        tables::name_tables(inp.schema, &mut build.tables);
        let mut added = false;
        for p in inp.workload.patterns.iter().filter(|p| p.kind.is_write()) {
            let (_, missing) = writes::plan(
                inp.schema,
                &inp.config.keyspace,
                p,
                &build.tables,
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
    let by_key = t.is_unique_on(&m.by)
        || (!t.primary_key.is_empty()
            && t.primary_key
                .iter()
                .all(|k| m.by.iter().any(|b| b.eq_ignore_ascii_case(k))));
    let idx = if by_key {
        ensure_primary_lookup(inp.schema, tables, &t.name)
    } else {
        let by: Vec<remodel_model::ColumnRef> =
            m.by.iter()
                .filter_map(|c| {
                    t.column(c)
                        .map(|col| remodel_model::ColumnRef::new(&t.name, &col.name))
                })
                .collect();
        let existing = tables.iter().position(|b| {
            b.root == t.name
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
                tables.push(TableBuild::lookup(&t.name, &by));
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

/// Emission: the query mapping of every read, with the counter/summary suggestions.
fn map_queries(
    inp: &Inputs<'_>,
    build: &Build,
) -> (Vec<QueryMapping>, Vec<remodel_model::Suggestion>) {
    let ks = &inp.config.keyspace;
    let mut queries = Vec::new();
    let mut suggestions = Vec::new();
    for (pi, s) in &build.served {
        let p = &inp.workload.patterns[*pi];
        match s {
            Served::OneOff(why) => queries.push(QueryMapping {
                pattern: p.id.clone(),
                reason: Some(format!("one-off statement, not part of the design: {why}")),
                one_off: true,
                ..Default::default()
            }),
            Served::Unservable(why) => queries.push(QueryMapping {
                pattern: p.id.clone(),
                reason: Some(why.clone()),
                ..Default::default()
            }),
            Served::Embedded(idx, ei) => {
                queries.push(embed::query_mapping(
                    ks,
                    p,
                    &build.tables[*idx],
                    &inp.embeds[*ei],
                ));
            }
            Served::Table(idx, shape, key) => {
                let t = &build.tables[*idx];
                let lookups: Vec<queries::LookupRead<'_>> = shape
                    .lookups
                    .iter()
                    .filter_map(|l| {
                        build
                            .tables
                            .iter()
                            .find(|b| b.root == l.table && b.is_primary_lookup(inp.schema))
                            .map(|b| queries::LookupRead {
                                table: b,
                                columns: &l.columns,
                                via: l.via.clone(),
                                rationale: l.rationale.clone(),
                            })
                    })
                    .collect();
                let est = key
                    .partitions_read
                    .is_none()
                    .then(|| inp.sizer.estimate(t).0);
                let scan_rows = est.as_ref().map(|e| (e.rows, e.basis.as_str()));
                let m = queries::map(ks, p, shape, key, t, &lookups, scan_rows);
                if !m.single_partition {
                    if let Some(sg) = queries::suggest(ks, p, shape, t) {
                        suggestions.push(sg);
                    }
                }
                queries.push(m);
            }
        }
    }
    (queries, suggestions)
}

/// Emission: the write path of every write pattern.
fn write_paths(inp: &Inputs<'_>, build: &mut Build) -> Vec<WritePath> {
    let mut out = Vec::new();
    for p in inp.workload.patterns.iter().filter(|p| p.kind.is_write()) {
        let (mut w, _) = writes::plan(
            inp.schema,
            &inp.config.keyspace,
            p,
            &build.tables,
            &inp.sizer,
        );
        if !w.one_off {
            embed_write(
                &mut w,
                inp.schema,
                inp.config,
                p,
                &inp.embeds,
                &build.hosts,
                &build.tables,
            );
        }
        if w.targets.is_empty() && !w.one_off {
            build.diagnostics.push(diag(
                p,
                Severity::Note,
                w.note
                    .clone()
                    .unwrap_or_else(|| "writes no designed table".into()),
            ));
        }
        if let Some(why) = &w.unsupported {
            build
                .diagnostics
                .push(diag(p, Severity::Warning, why.clone()));
        }
        out.push(w);
    }
    out
}

/// Emission: the tables of the model, with estimates, warnings and their embedded collections.
fn emit_tables(inp: &Inputs<'_>, build: &Build) -> Vec<DesignTable> {
    let mut out = Vec::new();
    for (bi, b) in build.tables.iter().enumerate() {
        let (mut estimates, warnings) = inp.sizer.estimate(b);
        let mut columns = b.design_columns();
        let mut extra = Vec::new();
        for (_, ei) in build.hosts.iter().filter(|(h, _)| *h == bi) {
            let e = &inp.embeds[*ei];
            columns.push(embed::column(e));
            // Each row carries its children: fan-out × entry bytes more per row.
            let per_row = e.fanout * e.entry_bytes;
            estimates.bytes_per_partition_avg = (estimates.bytes_per_partition_avg
                + estimates.rows_per_partition_avg * per_row)
                .round();
            estimates.bytes_per_partition_max = (estimates.bytes_per_partition_max
                + estimates.rows_per_partition_max * per_row)
                .round();
            extra.push(embed::source_parts(inp.schema, e, "t0"));
        }
        out.push(DesignTable {
            name: b.name.clone(),
            entity: b.root.clone(),
            partition_key: b.partition_key(),
            clustering: b.clustering_key(),
            columns,
            serves: b.serves.clone(),
            source_sql: tables::source_sql_with(inp.schema, b, &extra),
            estimates,
            warnings,
        });
    }
    out
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
        let (targets, reads, note) = match embed::write(&config.keyspace, p, e, &tables) {
            Ok(parts) => parts,
            Err(why) => {
                w.unsupported = Some(why);
                continue;
            }
        };
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
