//! Emission: the query mapping of every read, the write path of every write, the tables with
//! their estimates and warnings, the evidence of each choice and what the design costs.
//!
//! In: the [`Build`] of the assembly, the candidates, costs and choice; out: the plan's
//! [`Design`] — query mappings ([`queries`]), write paths ([`crate::writes`]), tables with sizes
//! and warnings (the [`crate::checklist`] rules applied), consistency levels and batches
//! ([`consistency_and_batches`]) — and `schema.cql` ([`cql`]).

pub mod consistency_and_batches;
pub mod cql;
/// Each pattern's function name in a generated access layer (`design.queries[].function`).
pub mod functions;
/// How a writer that reaches only Cassandra makes new ids (`design.ids`).
pub mod ids;
pub mod queries;

use crate::assemble::embed;
use crate::assemble::{diag, Build, Served};
use crate::candidates::tables::{self, TableBuild};
use crate::candidates::type_mapping;
use crate::candidates::{Candidates, Kind};
use crate::select::{Chosen, Costs};
use crate::writes;
use crate::{DesignConfig, Inputs};
use remodel_model::{
    AccessPattern, Bind, BindValue, Candidate, CostFigures, Decision, Design, DesignCost,
    DesignTable, Diagnostic, Encoding, QueryMapping, ReadTerms, Relationship, Rename, RenameKind,
    Schema, Severity, SourceEdit, SourceSql, WritePath,
};
use std::collections::HashMap;

/// A warning at the declaration of every stored column whose type has no CQL mapping rule (a
/// type Postgres does not have, or an unknown one): carried as text, never silently.
pub fn type_warnings(schema: &Schema, design: &Design) -> Vec<Diagnostic> {
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
        if let Some(note) = type_mapping::mapping_note(&col.sql_type, schema) {
            out.push(Diagnostic {
                severity: Severity::Warning,
                location: col.location.clone(),
                message: format!("{src}: {note}"),
            });
        }
    }
    out
}

/// Emission: the query mapping of every read, with the counter/summary suggestions.
pub fn map_queries(
    inp: &Inputs<'_>,
    build: &Build,
) -> (Vec<QueryMapping>, Vec<remodel_model::Suggestion>) {
    let ks = &inp.config.keyspace;
    let ctx = queries::Context {
        keyspace: ks,
        zones: inp.config.zones(),
    };
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
                unsupported: Some(why.clone()),
                ..Default::default()
            }),
            Served::Counter(ci) => {
                let d = &build.counters[*ci];
                let mut q = crate::checklist::counters::query(ks, inp.schema, p, &d.spec);
                q.partition_reads = Some(1.0);
                q.cost = Some(read_terms(&d.read, &inp.config.weights));
                q.candidates = vec![
                    Candidate {
                        table: format!("{} scanned", d.spec.root),
                        ..d.scan.clone()
                    },
                    Candidate {
                        kind: Candidate::COUNTER_TABLE.into(),
                        table: d.spec.name.clone(),
                        partition_reads: 1.0,
                        write_cost: round2(d.upkeep_cost),
                        reads_before_write: 0.0,
                        chosen: true,
                        rows_scanned: 1.0,
                        bytes_returned: d.read.bytes_returned.round(),
                        reason: Some(d.reason.clone()),
                    },
                ];
                q.reason = Some(d.reason.clone());
                queries.push(q);
            }
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
                let m = queries::map(&ctx, p, shape, key, t, &lookups, scan_rows);
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
pub fn write_paths(inp: &Inputs<'_>, build: &mut Build) -> Vec<WritePath> {
    let mut out = Vec::new();
    for p in inp.workload.patterns.iter().filter(|p| p.kind.is_write()) {
        if let Some(why) = inp.forbidden.get(&p.id) {
            out.push(WritePath {
                pattern: p.id.clone(),
                unsupported: Some(why.clone()),
                note: Some(why.clone()),
                fits_batch: true,
                ..Default::default()
            });
            continue;
        }
        let specs: Vec<crate::checklist::counters::Spec> =
            build.counters.iter().map(|d| d.spec.clone()).collect();
        let (mut w, _) = writes::plan(
            inp.schema,
            &inp.config.keyspace,
            p,
            (&build.tables, &specs),
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
        write_cost(&mut w, &build.tables, &inp.sizer);
        let by_ttl = crate::checklist::expiry::applied(&inp.expiries, &build.tables)
            .iter()
            .any(|e| e.purges.contains(&p.id));
        if let Some(why) = w.unsupported.as_ref().filter(|_| !by_ttl) {
            build
                .diagnostics
                .push(diag(p, Severity::Warning, why.clone()));
        }
        out.push(w);
    }
    out
}

/// Emission: the tables of the model, with estimates, warnings and their embedded collections.
pub fn emit_tables(inp: &Inputs<'_>, build: &Build) -> Vec<DesignTable> {
    let mut out = Vec::new();
    for (bi, b) in build.tables.iter().enumerate() {
        let (mut estimates, warnings) = inp.sizer.estimate(b);
        let mut columns = b.design_columns();
        tables::join_equalities(inp.schema, b, &mut columns);
        let mut collections = Vec::new();
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
            let alias = format!("e{}", collections.len());
            collections.push((e.column.clone(), embed::source(inp.schema, e, "t0", &alias)));
        }
        let mut partition_key = b.partition_key();
        for k in partition_key.iter_mut().filter(|k| k.bucket.is_some()) {
            k.time_zone = Some(inp.config.bucket_time_zone.clone());
        }
        let source = tables::source_query(inp.schema, b, collections, &inp.config.bucket_time_zone);
        out.push(DesignTable {
            name: b.name.clone(),
            entity: b.root.clone(),
            partition_key,
            clustering: b.clustering_key(),
            columns,
            serves: b.serves.clone(),
            source_sql: SourceSql::new(inp.schema, &source).sql(&SourceEdit::default()),
            source,
            estimates,
            warnings,
            counter: None,
            ttl: None,
            tombstones: None,
        });
    }
    for (ci, d) in build.counters.iter().enumerate() {
        let p = &inp.workload.patterns[d.spec.pattern];
        let t = crate::checklist::counters::table(inp, &d.spec, &p.id);
        out.push(t);
        let _ = ci;
    }
    out
}

/// The counters considered and rejected (with the costs compared), and why an aggregate read
/// has no counter, on each read's evidence.
pub fn counter_evidence(
    inp: &Inputs<'_>,
    rejected: &[crate::checklist::counters::Decision],
    d: &mut Design,
) {
    let mut query_of: HashMap<&str, usize> = HashMap::with_capacity(d.queries.len());
    for (qi, q) in d.queries.iter().enumerate() {
        query_of.entry(q.pattern.as_str()).or_insert(qi);
    }
    let query_of: HashMap<String, usize> = query_of
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (pi, p) in inp.workload.patterns.iter().enumerate() {
        let Some(q) = query_of.get(&p.id).and_then(|&qi| d.queries.get_mut(qi)) else {
            continue;
        };
        if let Some(r) = rejected.iter().find(|r| r.spec.pattern == pi) {
            q.candidates.push(Candidate {
                kind: Candidate::COUNTER_TABLE.into(),
                table: format!("{} [not created]", r.spec.name),
                partition_reads: 1.0,
                write_cost: round2(r.upkeep_cost),
                reads_before_write: 0.0,
                chosen: false,
                rows_scanned: 1.0,
                bytes_returned: r.read.bytes_returned.round(),
                reason: Some(r.reason.clone()),
            });
            q.notes.push(r.reason.clone());
        } else if q.counter.is_none() && q.unsupported.is_none() && !q.one_off {
            if let Some(why) = crate::checklist::counters::refusal(inp, p, pi) {
                q.notes
                    .push(format!("{}{why}", remodel_model::NO_COUNTER_NOTE));
            }
        }
    }
}

/// Every target name that does not spell its source as written: tables named apart (from
/// [`tables::name_tables`]), copied columns named apart from a table's own, embedded collections.
pub fn renames(inp: &Inputs<'_>, build: &Build) -> Vec<Rename> {
    let mut out = Vec::new();
    for b in &build.tables {
        if let Some(why) = &b.name_note {
            out.push(Rename {
                kind: RenameKind::Table,
                source: b.root.clone(),
                target: b.name.clone(),
                reason: why.clone(),
            });
        }
        let own = inp.schema.table(&b.root);
        for (k, name, ..) in &b.columns {
            let Some(c) = k.plain_column().filter(|c| c.column != *name) else {
                continue;
            };
            let reason = match own.and_then(|t| t.column(&c.column)) {
                Some(_) if c.table != b.root => format!(
                    "`{}` is {}'s own column: the copy of {c} is named apart",
                    c.column, b.root
                ),
                _ => format!("`{}` is taken in {}", c.column, b.name),
            };
            out.push(Rename {
                kind: RenameKind::Column,
                source: c.to_string(),
                target: format!("{}.{name}", b.name),
                reason,
            });
        }
    }
    for (h, ei) in &build.hosts {
        let (e, host) = (&inp.embeds[*ei], &build.tables[*h]);
        if let Some(why) = &e.name_note {
            out.push(Rename {
                kind: RenameKind::Collection,
                source: e.child.clone(),
                target: format!("{}.{}", host.name, e.column),
                reason: why.clone(),
            });
        }
    }
    out
}

/// The reads whose loops over children were folded: each selects its rows' collection too, and
/// says so.
pub fn folded_reads(
    inp: &Inputs<'_>,
    design: &mut Design,
    folds: &[(String, String, embed::Embedding)],
    hosted: &[String],
) {
    for (key, read, e) in folds.iter().filter(|(k, ..)| hosted.contains(k)) {
        let Some(q) = design.queries.iter_mut().find(|q| &q.pattern == read) else {
            continue;
        };
        let child = key.split('<').nth(1).unwrap_or_default();
        if let Some(cql) = &q.cql {
            q.cql = Some(cql.replacen(
                " FROM ",
                &format!(", {} FROM ", remodel_model::ident::cql_quote(&e.column)),
                1,
            ));
        }
        let order = inp
            .workload
            .pattern(child)
            .map(|b| {
                b.analysis
                    .order_by
                    .iter()
                    .map(|o| format!("{}{}", o.column.column, if o.desc { " DESC" } else { "" }))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        q.notes.push(format!(
            "each {} row carries its {} rows in `{}` (a map keyed by {} of {}): {child}, run once per row before, is read with it{}",
            e.parent,
            e.child,
            e.column,
            e.map_key.as_ref().map_or("", |(k, _)| k.as_str()),
            e.udt.name,
            if order.is_empty() {
                String::new()
            } else {
                format!("; the client orders the entries by {}", order.join(", "))
            }
        ));
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
        if e.child != child.key() {
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
        let parent_row = builds
            .iter()
            .find(|b| b.root == e.parent && b.is_primary_lookup(schema));
        let (targets, reads, note) = match embed::write(&config.keyspace, p, e, &tables, parent_row)
        {
            Ok(parts) => parts,
            Err(why) => {
                w.unsupported = Some(why);
                continue;
            }
        };
        // An UPDATE or DELETE changes only the rows it picks: when the path reads them first,
        // each collection write runs once per row read (a child of another parent, or one the
        // statement's other conditions leave alone, is not written into a collection).
        let rows = w.read_before_write.iter().position(|r| {
            r.many
                && !r.reads_new
                && r.name.is_none()
                && builds
                    .iter()
                    .any(|b| b.name == r.table && b.root == child.key())
        });
        let mut targets = targets;
        if p.kind != remodel_model::StatementKind::Insert {
            for t in targets.iter_mut().filter(|t| t.for_each.is_none()) {
                t.for_each = rows;
            }
        }
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

/// The design: query mapping (with the evidence of each choice), write paths, tables, types and
/// what it all costs.
pub fn design(
    inp: &Inputs<'_>,
    build: &mut Build,
    cands: &Candidates,
    costs: &Costs,
    chosen: &Chosen,
    relationships: &[Relationship],
) -> Design {
    cost_rationales(build, relationships);
    tables::encode_everywhere(&mut build.tables, inp.schema, inp.workload);
    let (mut queries, suggestions) = map_queries(inp, build);
    evidence(inp, build, cands, costs, chosen, &mut queries);
    let writes = write_paths(inp, build);
    let tables = emit_tables(inp, build);
    let mut types: Vec<remodel_model::UserType> = Vec::new();
    for (_, ei) in &build.hosts {
        let u = &inp.embeds[*ei].udt;
        if !types.contains(u) {
            types.push(u.clone());
        }
    }
    let renames = renames(inp, build);
    let mut d = Design {
        renames,
        keyspace: remodel_model::Keyspace {
            name: inp.config.keyspace.clone(),
            replication: inp.config.replication.clone(),
        },
        tables,
        types,
        queries,
        writes,
        suggestions,
        ..Default::default()
    };
    encode_binds(&mut d);
    crate::checklist::null_keys::apply(&mut d, inp.schema, inp.workload, inp.sizer.stats);
    equal_read_columns(&mut d);
    crate::checklist::expiry::apply(
        &crate::checklist::expiry::applied(&inp.expiries, &build.tables),
        &mut d,
    );
    crate::checklist::tombstones::apply(&mut d, inp.workload, &inp.config.thresholds);
    crate::checklist::precision::apply(&mut d, inp.schema);
    consistency_and_batches::apply(
        &mut d,
        inp.workload,
        &inp.config.consistency,
        inp.config.thresholds.batch_warn_bytes,
    );
    let rows: std::collections::BTreeMap<usize, f64> = chosen
        .option
        .iter()
        .map(|(pi, oi)| (*pi, costs.reads[*oi].rows))
        .collect();
    let mut baseline = baseline_figures(inp, &rows);
    // The baseline's tables are keyed as each read needs: the same rows scanned and returned.
    let share = shares(inp);
    for (pi, oi) in &chosen.option {
        let s = share
            .get(inp.workload.patterns[*pi].id.as_str())
            .unwrap_or(&0.0);
        baseline.rows_scanned += round2(s * costs.reads[*oi].rows_scanned);
        baseline.bytes_returned += (s * costs.reads[*oi].bytes_returned).round();
    }
    d.cost = Some(DesignCost {
        design: design_figures(inp, &d),
        baseline,
        selection: chosen.info.clone(),
    });
    d
}

/// Every bind of a column the table keeps encoded ([`Encoding`]: microseconds, NULL stored or not) takes the
/// value in that encoding: reads, lookups, reads before write and write statements alike, so no
/// path can bind a timestamp where the key holds microseconds.
fn encode_binds(d: &mut Design) {
    let encoded: std::collections::BTreeMap<(String, String), Encoding> = d
        .tables
        .iter()
        .flat_map(|t| {
            t.columns
                .iter()
                .filter_map(|c| c.encoding.map(|e| ((t.name.clone(), c.name.clone()), e)))
        })
        .collect();
    if encoded.is_empty() {
        return;
    }
    let wrap = |table: &str, binds: &mut Vec<Bind>| {
        for b in binds.iter_mut() {
            let key = (table.to_string(), b.column.clone());
            if let Some(e) = encoded.get(&key) {
                if !matches!(
                    b.value,
                    BindValue::EpochMicros { .. } | BindValue::Encoded { .. }
                ) {
                    b.value = BindValue::encoded(*e, b.value.clone());
                }
            }
        }
    };
    for q in &mut d.queries {
        if let Some(t) = q.table.clone() {
            wrap(&t, &mut q.binds);
        }
        for step in &mut q.then {
            wrap(&step.table.clone(), &mut step.binds);
        }
    }
    for w in &mut d.writes {
        for r in &mut w.read_before_write {
            wrap(&r.table.clone(), &mut r.binds);
        }
        for t in &mut w.targets {
            wrap(&t.table.clone(), &mut t.binds);
        }
    }
}

/// A result column whose source column no table read holds is found through a column the
/// joins make equal to it (`u_id` of `useracct JOIN feedback ON uf_u_id = u_id`, held as
/// `uf_u_id`): the same value in every row.
fn equal_read_columns(d: &mut Design) {
    let tables = &d.tables;
    for q in &mut d.queries {
        let read: Vec<&DesignTable> = q
            .table
            .iter()
            .chain(q.then.iter().map(|s| &s.table))
            .filter_map(|n| tables.iter().find(|t| t.name == *n))
            .collect();
        for c in q.columns.iter_mut().filter(|c| c.cql_column.is_none()) {
            let Some(src) = &c.source else { continue };
            let held = read.iter().find_map(|t| {
                t.columns
                    .iter()
                    .find(|dc| dc.equals.contains(src))
                    .map(|dc| (t, dc))
            });
            if let Some((t, dc)) = held {
                c.table = Some(t.name.clone());
                c.cql_column = Some(dc.name.clone());
                c.cql_type = Some(dc.cql_type.clone());
                c.encoding = dc.encoding;
            }
        }
    }
}

/// A parent read by key because the costs said so says so, with the numbers, in place of the
/// analyzer's rule.
fn cost_rationales(build: &mut Build, relationships: &[Relationship]) {
    for (_, served) in build.served.iter_mut() {
        let Served::Table(_, shape, _) = served else {
            continue;
        };
        let root = shape.root.clone();
        for l in shape.lookups.iter_mut() {
            if let Some(r) = relationships
                .iter()
                .find(|r| r.rationale.rule == "by cost" && r.from == l.table && r.to == root)
            {
                l.rationale = r.rationale.text.clone();
            }
        }
    }
}

/// Per read: the ways considered, their costs, the one chosen, and its partitions per call.
fn evidence(
    inp: &Inputs<'_>,
    build: &Build,
    cands: &Candidates,
    costs: &Costs,
    chosen: &Chosen,
    queries: &mut [QueryMapping],
) {
    // Looked up by hash: a workload of 100,000 patterns has as many mappings and options.
    let mut query_of: HashMap<String, usize> = HashMap::with_capacity(queries.len());
    for (qi, q) in queries.iter().enumerate() {
        query_of.entry(q.pattern.clone()).or_insert(qi);
    }
    let mut options_of: Vec<Vec<usize>> = vec![Vec::new(); inp.workload.patterns.len()];
    for (oi, o) in cands.options.iter().enumerate() {
        if let Some(of) = options_of.get_mut(o.pattern) {
            of.push(oi);
        }
    }
    for (pi, p) in inp.workload.patterns.iter().enumerate() {
        let Some(q) = query_of.get(&p.id).and_then(|&qi| queries.get_mut(qi)) else {
            continue;
        };
        let pick = chosen.option.get(&pi).copied();
        for &oi in &options_of[pi] {
            let o = &cands.options[oi];
            let table = build
                .layout_table
                .get(o.layout)
                .copied()
                .flatten()
                .map(|ti| build.tables[ti].name.clone())
                .unwrap_or_else(|| layout_label(&cands.layouts[o.layout]));
            let (statements, reads_first) = costs.write_split(cands, oi);
            q.candidates.push(Candidate {
                kind: o.kind.label().to_string(),
                table,
                partition_reads: round2(costs.reads[oi].partitions),
                write_cost: round2(statements + reads_first),
                reads_before_write: round2(reads_first),
                chosen: pick == Some(oi),
                rows_scanned: round2(costs.reads[oi].rows_scanned),
                bytes_returned: costs.reads[oi].bytes_returned.round(),
                reason: None,
            });
        }
        q.partition_reads = pick.map(|oi| round2(costs.reads[oi].partitions));
        q.cost = pick.map(|oi| read_terms(&costs.reads[oi], &inp.config.weights));
    }
}

/// `books by (shelf, city)`: a layout no chosen read uses, named for the evidence.
fn layout_label(t: &TableBuild) -> String {
    let key: Vec<String> = t
        .partition
        .iter()
        .map(|k| match k.source() {
            Some(c) => c.column.clone(),
            None => "all".into(),
        })
        .collect();
    format!("{} by ({}) [not created]", t.root, key.join(", "))
}

/// The terms of a read's cost per call, and their weighted sum.
pub(crate) fn read_terms(r: &crate::costs::ReadCost, w: &crate::Weights) -> ReadTerms {
    ReadTerms {
        partitions: round2(r.partitions),
        rows_scanned: round2(r.rows_scanned),
        bytes_returned: r.bytes_returned.round(),
        weighted: round2(w.read_terms(r.partitions, r.rows_scanned, r.bytes_returned)),
    }
}

pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Calls of each pattern per 100 calls of the workload.
fn shares<'a>(inp: &Inputs<'a>) -> std::collections::BTreeMap<&'a str, f64> {
    let total = inp
        .workload
        .patterns
        .iter()
        .map(|p| p.calls as f64)
        .sum::<f64>()
        .max(1.0);
    inp.workload
        .patterns
        .iter()
        .map(|p| (p.id.as_str(), p.calls as f64 * 100.0 / total))
        .collect()
}

/// The design's cost per 100 calls: the reads' partitions, the writes' statements and reads
/// first, and the bytes its tables hold.
fn design_figures(inp: &Inputs<'_>, d: &Design) -> CostFigures {
    let share = shares(inp);
    let mut f = CostFigures::default();
    for q in d.queries.iter().filter(|q| !q.one_off && q.table.is_some()) {
        let s = share.get(q.pattern.as_str()).unwrap_or(&0.0);
        f.partition_reads += s * q.partition_reads.unwrap_or(1.0);
        if let Some(c) = &q.cost {
            f.rows_scanned += s * c.rows_scanned;
            f.bytes_returned += s * c.bytes_returned;
        }
    }
    for w in d.writes.iter().filter(|w| !w.one_off) {
        let s = share.get(w.pattern.as_str()).unwrap_or(&0.0);
        f.table_writes += s * w.table_writes;
        f.reads_before_write += s * w.reads_before_write;
        f.bytes_written += s * w.batch_bytes as f64;
    }
    f.stored_bytes = d
        .tables
        .iter()
        .map(|t| t.estimates.partitions * t.estimates.bytes_per_partition_avg)
        .sum();
    round_figures(f)
}

fn round_figures(f: CostFigures) -> CostFigures {
    CostFigures {
        partition_reads: round2(f.partition_reads),
        table_writes: round2(f.table_writes),
        reads_before_write: round2(f.reads_before_write),
        stored_bytes: f.stored_bytes.round(),
        rows_scanned: round2(f.rows_scanned),
        bytes_returned: f.bytes_returned.round(),
        bytes_written: f.bytes_written.round(),
    }
}

/// The normalized baseline: one table per source table, keyed as each read needs, nothing
/// copied — a read is one partition plus one read per joined row per other table; a write is
/// one statement (a read first when it sets a column from its current value); each source table
/// stored once.
fn baseline_figures(
    inp: &Inputs<'_>,
    rows_of: &std::collections::BTreeMap<usize, f64>,
) -> CostFigures {
    let share = shares(inp);
    let mut f = CostFigures::default();
    let mut stored: Vec<&str> = Vec::new();
    for (pi, p) in inp
        .workload
        .patterns
        .iter()
        .enumerate()
        .filter(|(_, p)| p.analysis.one_off.is_none())
    {
        let s = share.get(p.id.as_str()).unwrap_or(&0.0);
        let a = &p.analysis;
        if !a.unknown_columns.is_empty() {
            // Postgres rejects it too: no design serves it.
            continue;
        }
        if p.kind.is_write() {
            f.table_writes += s;
            if a.write
                .as_ref()
                .is_some_and(|w| w.values.iter().any(|v| v.reads_current))
            {
                f.reads_before_write += s;
            }
        } else if let Some(root) = a.tables.first() {
            // The rows the design's estimate gives the read (joins are one read per row here).
            let rows = rows_of
                .get(&pi)
                .copied()
                .or(a.limit.map(|l| l as f64))
                .or(a.rows_expected)
                .unwrap_or(1.0)
                .max(1.0);
            // As in the design: an IN reads a partition per value, no `=` reads them all.
            let first = if a.equality.is_empty() && a.ranges.is_empty() {
                inp.sizer.rows(root)
            } else if a
                .equality
                .iter()
                .any(|e| e.op == remodel_model::EqualityOp::In)
            {
                crate::costs::IN_VALUES
            } else {
                1.0
            };
            f.partition_reads += s * (first + rows * (a.tables.len() as f64 - 1.0).max(0.0));
        }
        for t in &a.tables {
            if !stored.contains(&t.as_str()) {
                stored.push(t);
            }
        }
    }
    for t in stored {
        let Some(st) = inp.schema.table(t) else {
            continue;
        };
        let width: f64 = st
            .columns
            .iter()
            .map(|c| type_mapping::default_width(&c.sql_type) + 8.0)
            .sum();
        f.stored_bytes += inp.sizer.rows(&st.key()) * width;
    }
    round_figures(f)
}

/// Relationship decisions that now follow from the costs: where a read could copy a parent's
/// columns or read the parent by key, the choice made and its numbers replace the rule's.
pub fn relationships(
    inp: &Inputs<'_>,
    cands: &Candidates,
    costs: &Costs,
    chosen: &Chosen,
) -> Vec<Relationship> {
    let mut out = inp.relationships.to_vec();
    for (&pi, &oi) in &chosen.option {
        let o = &cands.options[oi];
        if !matches!(o.kind, Kind::Own | Kind::OwnParentsByKey) {
            continue;
        }
        let Some(alt) = cands.options.iter().position(|x| {
            x.pattern == pi
                && matches!(x.kind, Kind::Own | Kind::OwnParentsByKey)
                && x.kind != o.kind
        }) else {
            continue;
        };
        let (copy, by_key) = if o.kind == Kind::Own {
            (oi, alt)
        } else {
            (alt, oi)
        };
        let p = &inp.workload.patterns[pi];
        for l in &cands.options[by_key].shape.lookups {
            let Some(r) = out.iter_mut().find(|r| {
                r.from == l.table && r.to == o.shape.root && r.decision != Decision::Embed
            }) else {
                continue;
            };
            let cols: Vec<String> = l.columns.iter().map(|c| c.column.clone()).collect();
            let copy_writes = costs.write_share(cands, copy) - costs.write_share(cands, by_key);
            let extra_reads =
                (costs.reads[by_key].partitions - costs.reads[copy].partitions) * costs.share[pi];
            let copied = o.kind == Kind::Own;
            r.decision = if copied {
                Decision::DuplicateColumns
            } else {
                Decision::Reference
            };
            r.rationale.rule = "by cost".into();
            r.rationale.columns = if copied { cols.clone() } else { Vec::new() };
            r.rationale.text = format!(
                "{} ({} calls): copying {} of {} into {}'s rows costs {:.2} table writes and reads first per 100 calls (updates of those columns, reads of the {} row on insert); reading {} by key instead costs {:.2} more partition reads per 100 calls. {}",
                p.id,
                remodel_model::text::thousands(p.calls),
                cols.join(", "),
                l.table,
                o.shape.root,
                copy_writes.max(0.0),
                l.table,
                l.table,
                extra_reads.max(0.0),
                if copied { "Copied: it is cheaper." } else { "Kept by reference: it is cheaper." }
            );
        }
    }
    out
}

/// A write path's statements and reads first per call: a statement run once per row of a
/// many-row read counts the rows of the partition that read returns; of two statements guarded
/// by opposite NULL tests, one runs.
fn write_cost(w: &mut WritePath, tables: &[TableBuild], sizer: &crate::costs::sizing::Sizer<'_>) {
    let rows_of = |ri: usize| {
        w.read_before_write
            .get(ri)
            .and_then(|r| tables.iter().find(|t| t.name == r.table))
            .map(|t| sizer.estimate(t).0.rows_per_partition_avg.max(1.0))
            .unwrap_or(1.0)
    };
    let writes: f64 = w
        .targets
        .iter()
        .map(|t| {
            let halved = t.guard.as_ref().is_some_and(|g| {
                g.conditions().iter().any(|c| {
                    matches!(
                        c,
                        remodel_model::Guard::NewIsNull { .. }
                            | remodel_model::Guard::NewIsNotNull { .. }
                    )
                })
            });
            let once = if halved { 0.5 } else { 1.0 };
            once * t.for_each.map(rows_of).unwrap_or(1.0)
        })
        .sum();
    w.table_writes = round2(writes);
    w.reads_before_write = w.read_before_write.len() as f64;
}
