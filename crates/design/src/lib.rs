//! The query-first designer: Cassandra tables, keys, buckets, sizing, write paths and CQL.
//!
//! Architecture invariant: no I/O; reads and returns plan-model values only.
//!
//! The passes inside [`design`], one module each, in the order they run:
//! 1. [`candidates`]: per read, the ways to serve it — its own table (by
//!    [`candidates::shape`] and the Chebotko key rules of [`candidates::keys`]) with parents
//!    copied or read by key, a narrow index table plus a row lookup, a table another read
//!    needs — over shared table layouts ([`candidates::tables`]);
//! 2. [`costs`]: partitions read per call, and per table the writes that keep it in step
//!    (sizes by [`costs::sizing`]);
//! 3. [`select`]: the options minimising the workload's weighted cost (an integer program);
//! 4. [`assemble`]: the chosen tables with their columns, embedded collections
//!    ([`assemble::embed`]), and the lookups write paths need;
//! 5. [`emit`]: query mapping ([`emit::queries`]), write paths ([`writes`]), tables with
//!    their sizes, the evidence and the cost beside a normalized baseline, `schema.cql`;
//! 6. [`validate`]: every check the plan must pass before anything executes it, and the
//!    designer's own re-design of what fails ([`validate::self_check`]).
//!
//! Beside them: [`checklist`] (counters, expiry, tombstones, NULL keys, buckets, precision,
//! collations: the rules applied to the tables the passes made) and `loops` (N+1 loops folded
//! into joined reads before designing, transactions made write groups after).

pub mod assemble;
pub mod candidates;
pub mod checklist;
pub mod costs;
pub mod emit;
mod loops;
pub mod select;
pub mod validate;
pub mod writes;

pub use emit::cql::emit_cql;

use assemble::embed::{self, Embedding};
use remodel_model::{
    Design, Diagnostic, Keyspace, Plan, Relationship, Replication, Schema, Severity, Statistics,
    Workload, PLAN_FORMAT_VERSION,
};
use serde::{Deserialize, Serialize};

pub use select::Weights;

/// Limits the design is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
    /// Days the workload's calls span (rates per day: the tombstone estimate): 1.
    pub workload_days: f64,
    /// Cassandra's `gc_grace_seconds` (a tombstone's life before compaction may drop it):
    /// 864,000 (10 days).
    pub gc_grace_seconds: u64,
    /// Cassandra's `tombstone_warn_threshold`: 1,000 tombstones scanned by one read.
    pub tombstone_warn: f64,
    /// Cassandra's `tombstone_failure_threshold`: 100,000 (the read is aborted).
    pub tombstone_fail: f64,
    /// A table whose deleted rows are at least this share of its inserted rows, read
    /// oldest-first, is a queue (`tombstones` warning): 0.5.
    pub queue_delete_share: f64,
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
            workload_days: 1.0,
            gc_grace_seconds: 864_000,
            tombstone_warn: 1_000.0,
            tombstone_fail: 100_000.0,
            queue_delete_share: 0.5,
        }
    }
}

/// Statistics assumed where `--stats` gives none (stated in each table's `estimates.basis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
#[serde(default, deny_unknown_fields)]
pub struct DesignConfig {
    /// Keyspace name.
    pub keyspace: String,
    /// Replication (rendered by the CQL emitter).
    pub replication: Replication,
    /// Limits for warnings.
    pub thresholds: Thresholds,
    /// Statistics assumed without `--stats`.
    pub defaults: DefaultStatistics,
    /// Every table keeps the whole source row of its entity, not only the columns its reads
    /// need (more writes keep more copies in step; new reads can use them). Default false: the
    /// cost-based selection decides the columns.
    pub copy_entity_columns: bool,
    /// The weights of the objective the selection minimises (`--objective`).
    pub weights: Weights,
    /// The application's session time zone (IANA name): instants it writes without an offset
    /// (a date, `'2025-01-15 08:00'`) are read in it. Recorded in `plan.json` (`semantics`).
    pub time_zone: String,
    /// The time zone bucket columns are cut in (IANA name): a day bucket holds one calendar day
    /// there. Default `UTC`.
    pub bucket_time_zone: String,
    /// The consistency level of the plan's reads and of its writes.
    pub consistency: emit::consistency_and_batches::ConsistencyConfig,
    /// Counter tables are considered for counts and sums (default true); false for a plan
    /// `remodel sync` must keep (it cannot apply counter updates idempotently).
    pub counter_tables: bool,
}

impl DesignConfig {
    /// The zones buckets depend on.
    pub fn zones(&self) -> checklist::buckets::Zones {
        checklist::buckets::Zones {
            session: self.time_zone.clone(),
            buckets: self.bucket_time_zone.clone(),
        }
    }
}

impl Default for DesignConfig {
    fn default() -> Self {
        let ks = Keyspace::default();
        DesignConfig {
            keyspace: ks.name,
            replication: ks.replication,
            thresholds: Thresholds::default(),
            defaults: DefaultStatistics::default(),
            copy_entity_columns: false,
            weights: Weights::default(),
            time_zone: "UTC".into(),
            bucket_time_zone: "UTC".into(),
            consistency: emit::consistency_and_batches::ConsistencyConfig::default(),
            counter_tables: true,
        }
    }
}

/// The design and what the designer has to say about the input.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignOutput {
    /// The proposed tables, query mapping and write paths.
    pub design: Design,
    /// The relationships, with the decisions the costs made (copy a parent's columns, or read
    /// it by key) in place of the analyzer's rule.
    pub relationships: Vec<Relationship>,
    /// Patterns that could not be designed, and other notes.
    pub diagnostics: Vec<Diagnostic>,
}

/// Designs an analysed workload and assembles the plan (schema, workload, relationships, design);
/// returns it with the analyzer's diagnostics followed by the designer's.
pub fn plan(
    analysis: remodel_model::Analysis,
    stats: Option<&Statistics>,
    config: &DesignConfig,
) -> (Plan, Vec<Diagnostic>) {
    // Each loop's joined read stands for its first read and lookups; one the design cannot
    // serve is designed again unfolded.
    let children = loops::children(
        &analysis.schema,
        &analysis.workload,
        &analysis.loops,
        &analysis.relationships,
        &config.weights,
    );
    let mut skip: Vec<String> = Vec::new();
    let (workload, folded, hosted, mut out) = loop {
        let (wl, folded) = loops::fold(&analysis.workload, &analysis.loops, &children, &skip);
        let folds: Vec<(String, String, Embedding)> = children
            .iter()
            .filter(|c| folded.contains(&c.key(&analysis.loops)))
            .filter_map(|c| {
                let e = c.embedding.clone()?;
                Some((c.key(&analysis.loops), c.parent.clone(), e))
            })
            .collect();
        let (out, hosted) = design_folding(
            &analysis.schema,
            &wl,
            &analysis.relationships,
            stats,
            config,
            &folds,
        );
        let bad = loops::unserved(&out.design, &folded, &hosted);
        if bad.is_empty() {
            break (wl, folded, hosted, out);
        }
        skip.extend(bad);
    };
    out.design.loops = loops::decisions(&analysis.loops, &folded, &analysis.workload, &out.design);
    for c in &children {
        let served =
            hosted.contains(&c.key(&analysis.loops)) && folded.contains(&c.key(&analysis.loops));
        let lp = &analysis.loops[c.loop_index];
        if let Some(d) = out.design.loops.get_mut(c.loop_index) {
            *d = loops::child_decision(lp, c, served, &analysis.workload);
        }
    }
    out.design.write_groups = loops::write_groups(&analysis.transactions, &out.design);
    let mut diagnostics = analysis.diagnostics;
    for d in &out.design.loops {
        diagnostics.push(Diagnostic {
            severity: Severity::Note,
            location: None,
            message: format!("loop {} then {} per row: {}", d.parent, d.child, d.reason),
        });
    }
    diagnostics.extend(out.diagnostics);
    let plan = Plan {
        format_version: PLAN_FORMAT_VERSION,
        schema: analysis.schema,
        workload,
        relationships: out.relationships,
        design: out.design,
        semantics: remodel_model::Semantics {
            time_zone: config.time_zone.clone(),
            ..Default::default()
        },
        inputs: Vec::new(),
    };
    (plan, diagnostics)
}

/// The inputs every pass reads.
pub struct Inputs<'a> {
    /// The source schema.
    pub schema: &'a Schema,
    /// The analysed workload.
    pub workload: &'a Workload,
    /// The relationships as the analyzer decided them.
    pub relationships: &'a [Relationship],
    /// The designer's settings.
    pub config: &'a DesignConfig,
    /// Sizes from the statistics or the defaults.
    pub sizer: costs::sizing::Sizer<'a>,
    /// The embedded one-to-few collections the relationships decide.
    pub embeds: Vec<embed::Embedding>,
    /// The source columns whose rows expire (written with a TTL where every table allows it).
    pub expiries: Vec<checklist::expiry::Expiry>,
    /// Patterns the designer's own checks refused, with why: stated unserved.
    pub forbidden: &'a validate::self_check::Forbidden,
}

/// Designs the query-first Cassandra model for a schema and its analysed workload: the passes
/// listed in the crate documentation, in order. The validator's findings are errors, recorded in
/// the design (`violations`) and the diagnostics.
pub fn design(
    schema: &Schema,
    workload: &Workload,
    relationships: &[Relationship],
    stats: Option<&Statistics>,
    config: &DesignConfig,
) -> DesignOutput {
    design_folding(schema, workload, relationships, stats, config, &[]).0
}

/// [`design`], with loops over children folded: each `(key, read, collection)` puts the
/// collection in the table that serves the read (the read's own table). Returns the keys of
/// the folds carried out.
fn design_folding(
    schema: &Schema,
    workload: &Workload,
    relationships: &[Relationship],
    stats: Option<&Statistics>,
    config: &DesignConfig,
    folds: &[(String, String, Embedding)],
) -> (DesignOutput, Vec<String>) {
    // The designer checks itself: a pattern whose table or path fails a check is designed again
    // without it (stated unserved with the reason), until the plan passes.
    let mut forbidden = validate::self_check::Forbidden::new();
    let mut round = 0;
    loop {
        let args = (schema, workload, relationships, stats, config);
        let (mut out, hosted) = design_once(args, folds, &forbidden);
        round += 1;
        if out.design.violations.is_empty()
            || round > validate::self_check::MAX_ROUNDS
            || !validate::self_check::forbid(&out.design, &mut forbidden)
        {
            out.diagnostics
                .extend(validate::self_check::diagnostics(&forbidden));
            return (out, hosted);
        }
    }
}

/// One design of the workload with the `forbidden` patterns stated unserved.
fn design_once(
    (schema, workload, relationships, stats, config): (
        &Schema,
        &Workload,
        &[Relationship],
        Option<&Statistics>,
        &DesignConfig,
    ),
    folds: &[(String, String, Embedding)],
    forbidden: &validate::self_check::Forbidden,
) -> (DesignOutput, Vec<String>) {
    let mut inputs = Inputs {
        schema,
        workload,
        relationships,
        forbidden,
        config,
        sizer: costs::sizing::Sizer {
            schema,
            stats,
            config,
        },
        embeds: embed::collect(schema, relationships),
        expiries: checklist::expiry::find(schema, workload, &config.time_zone),
    };
    let small = |t: &str| assemble::small_entity(&inputs, t).is_some();
    let cands = candidates::enumerate(
        schema,
        workload,
        relationships,
        &inputs.embeds,
        &small,
        (&config.zones(), forbidden),
    );
    let mut cands = cands;
    let mut costs = select::costs(&inputs.sizer, workload, relationships, &cands);
    let mut chosen = select::select(&cands, &costs, &config.weights);
    // Counters cheaper than scanning serve their reads; the tables are chosen again without them.
    let decisions = if config.counter_tables {
        checklist::counters::decide(&inputs, &cands, &costs, &chosen)
    } else {
        Vec::new()
    };
    let kept: Vec<checklist::counters::Decision> =
        decisions.iter().filter(|d| d.chosen).cloned().collect();
    if !kept.is_empty() {
        let counted: Vec<(usize, usize)> = kept
            .iter()
            .enumerate()
            .map(|(ci, d)| (d.spec.pattern, ci))
            .collect();
        cands.serve_by_counters(&counted);
        costs = select::costs(&inputs.sizer, workload, relationships, &cands);
        chosen = select::select(&cands, &costs, &config.weights);
    }
    let mut build = assemble::from_selection(&inputs, &cands, &chosen);
    build.counters = kept;
    let rejected: Vec<checklist::counters::Decision> =
        decisions.into_iter().filter(|d| !d.chosen).collect();
    let hosted = assemble::host_folds(&mut inputs, &mut build, folds);
    checklist::expiry::mark(&inputs.expiries, &mut build, &inputs.embeds);
    assemble::write_lookups(&inputs, &mut build);
    for (e, why) in checklist::expiry::mark(&inputs.expiries, &mut build, &inputs.embeds) {
        build.diagnostics.push(Diagnostic {
            severity: Severity::Note,
            location: None,
            message: format!(
                "no TTL for the rows of {} ({}): {why}",
                e.column.table, e.column
            ),
        });
    }
    let relationships = emit::relationships(&inputs, &cands, &costs, &chosen);
    let mut design = emit::design(&inputs, &mut build, &cands, &costs, &chosen, &relationships);
    emit::counter_evidence(&inputs, &rejected, &mut design);
    emit::folded_reads(&inputs, &mut design, folds, &hosted);
    design.coverage = Some(remodel_model::Coverage::measure(schema, workload, &design));
    let mut diagnostics = build.diagnostics;
    diagnostics.extend(emit::type_warnings(schema, &design));
    diagnostics.extend(checklist::collations::apply(&mut design, schema, workload));
    for r in &design.renames {
        diagnostics.push(Diagnostic {
            severity: Severity::Note,
            location: None,
            message: format!("{} renamed to {}: {}", r.source, r.target, r.reason),
        });
    }
    emit::functions::name(&mut design, workload);
    emit::ids::allocate(schema, &mut design);
    design.violations = validate::validate_in(schema, workload, &design, &config.time_zone);
    for v in &design.violations {
        diagnostics.push(Diagnostic {
            severity: Severity::Error,
            location: None,
            message: format!("plan check ({}): {}", v.check, v.message),
        });
    }
    (
        DesignOutput {
            design,
            relationships,
            diagnostics,
        },
        hosted,
    )
}
