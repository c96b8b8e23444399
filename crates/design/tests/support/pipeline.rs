//! The planning pipeline as `remodel plan` runs it (load → workload → analyze → design), for tests.

#![allow(dead_code)]

use remodel_design::DesignConfig;
use remodel_model::{Diagnostic, Plan, Statistics};
use remodel_sql::workload::Format;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Plans from files; panics with the reason when an input cannot be read (tests only).
pub fn plan_files(
    schema: &[PathBuf],
    queries: &[PathBuf],
    stats: Option<&Statistics>,
    keyspace: &str,
) -> (Plan, Vec<Diagnostic>) {
    let ddl = remodel_sql::ddl::load_files(schema).unwrap_or_else(|e| panic!("schema: {e}"));
    let (plan, diagnostics) = plan_schema(&ddl.schema, queries, stats, keyspace);
    let mut diags = ddl.diagnostics;
    diags.extend(diagnostics);
    (plan, diags)
}

/// Plans rideshare's schema (`examples/rideshare/schema.sql`) with `queries`, a SQL workload
/// given as text, into keyspace `ks`.
pub fn plan_rideshare_with(queries: &str, ks: &str) -> Plan {
    let ddl = remodel_sql::ddl::load_files(&[root().join("examples/rideshare/schema.sql")])
        .unwrap_or_else(|e| panic!("schema: {e}"));
    let wl = remodel_sql::workload::read_str("queries.sql", queries, Format::Auto);
    let analysis = remodel_analyze::analyze(
        &ddl.schema,
        &wl.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let config = DesignConfig {
        keyspace: ks.into(),
        ..DesignConfig::default()
    };
    remodel_design::plan(analysis, None, &config).0
}

/// Plans a loaded `schema` with the workload of `queries`.
pub fn plan_schema(
    schema: &remodel_model::Schema,
    queries: &[PathBuf],
    stats: Option<&Statistics>,
    keyspace: &str,
) -> (Plan, Vec<Diagnostic>) {
    let wl = remodel_sql::workload::read_files(queries, Format::Auto)
        .unwrap_or_else(|e| panic!("workload: {e}"));
    let analysis = remodel_analyze::analyze(
        schema,
        &wl.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let config = DesignConfig {
        keyspace: keyspace.into(),
        ..DesignConfig::default()
    };
    let (plan, analysis_diags) = remodel_design::plan(analysis, stats, &config);
    let mut diags = wl.diagnostics;
    diags.extend(analysis_diags);
    (plan, diags)
}

/// The validator's findings on `plan`, computed anew (never `design.violations`, which the
/// designer recorded itself). The validator assumes nothing of a keyless table: it may hold
/// duplicate rows, so only a generated row id tells them apart.
pub fn strict_violations(plan: &Plan) -> Vec<remodel_model::Violation> {
    remodel_design::validate::validate(&plan.schema, &plan.workload, &plan.design)
}

/// Plans `fixtures/plan/<name>/` (its `schema.sql` and `queries.sql`) into keyspace `name`.
pub fn plan_fixture(name: &str) -> Plan {
    let dir = root().join("fixtures/plan").join(name);
    plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        None,
        name,
    )
    .0
}

/// The id of the pattern whose SQL starts with `sql_start`.
pub fn pattern_id(plan: &Plan, sql_start: &str) -> String {
    plan.workload
        .patterns
        .iter()
        .find(|p| p.sql.starts_with(sql_start))
        .unwrap_or_else(|| panic!("pattern {sql_start}"))
        .id
        .clone()
}

/// The write path of the statement whose SQL starts with `sql_start`.
pub fn write_path<'p>(plan: &'p Plan, sql_start: &str) -> &'p remodel_model::WritePath {
    let id = pattern_id(plan, sql_start);
    plan.design
        .writes
        .iter()
        .find(|w| w.pattern == id)
        .unwrap_or_else(|| panic!("no write path for {sql_start}"))
}

/// [`write_path`], to edit (a hand-broken plan).
pub fn write_path_mut<'p>(plan: &'p mut Plan, sql_start: &str) -> &'p mut remodel_model::WritePath {
    let id = pattern_id(plan, sql_start);
    plan.design
        .writes
        .iter_mut()
        .find(|w| w.pattern == id)
        .unwrap_or_else(|| panic!("no write path for {sql_start}"))
}

/// The read mapping of the statement whose SQL starts with `sql_start`.
pub fn read_mapping<'p>(plan: &'p Plan, sql_start: &str) -> &'p remodel_model::QueryMapping {
    let id = pattern_id(plan, sql_start);
    plan.design
        .queries
        .iter()
        .find(|q| q.pattern == id)
        .unwrap_or_else(|| panic!("no read mapping for {sql_start}"))
}

/// The read mapping of the pattern whose SQL starts with `sql_start`, and the table serving it.
pub fn read_and_table<'p>(
    plan: &'p Plan,
    sql_start: &str,
) -> (
    &'p remodel_model::QueryMapping,
    &'p remodel_model::DesignTable,
) {
    let q = read_mapping(plan, sql_start);
    let t = plan
        .design
        .tables
        .iter()
        .find(|t| Some(&t.name) == q.table.as_ref())
        .unwrap_or_else(|| panic!("no table serves {sql_start}"));
    (q, t)
}

/// Plans a corpus under `fixtures/corpora/<name>`.
pub fn plan_corpus(name: &str) -> (Plan, Vec<Diagnostic>) {
    let dir = root().join("fixtures/corpora").join(name);
    plan_files(
        &[dir.join("ddl-postgres.sql")],
        &[dir.join("queries.sql")],
        None,
        name,
    )
}

/// Plans the rideshare example, with optional statistics.
pub fn plan_rideshare(stats: Option<&Statistics>) -> (Plan, Vec<Diagnostic>) {
    let dir = root().join("examples/rideshare");
    plan_files(
        &[dir.join("schema.sql")],
        &[dir.join("queries.sql")],
        stats,
        "rideshare",
    )
}

/// `[a=$1, b=cur(t.b)]`.
fn binds(b: &[remodel_model::Bind]) -> String {
    let parts: Vec<String> = b.iter().map(|b| b.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `scan`, `each value of bind 1`.
fn partitions(p: &remodel_model::PartitionRead) -> String {
    match p {
        remodel_model::PartitionRead::One => "one".into(),
        remodel_model::PartitionRead::Each { bind } => format!("each value of bind {bind}"),
        remodel_model::PartitionRead::Scan => "scan".into(),
    }
}

/// The client's work in one line: `unnest addresses; filter …; group by …; sort …; limit …`.
fn client_text(c: &remodel_model::ClientWork) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(u) = &c.unnest {
        parts.push(format!("unnest {} as {}", u.collection, u.table));
    }
    parts.extend(c.filters.iter().map(|f| format!("filter {f}")));
    if !c.group_by.is_empty() {
        let g: Vec<String> = c.group_by.iter().map(|x| x.to_string()).collect();
        parts.push(format!("group by {}", g.join(", ")));
    }
    for a in &c.aggregates {
        let col = a.column.as_ref().map_or("*".to_string(), |x| x.to_string());
        parts.push(format!(
            "{}({}{col})",
            a.function,
            if a.distinct { "DISTINCT " } else { "" }
        ));
    }
    if let Some(g) = &c.group_row {
        parts.push(format!("group row {g:?}"));
    }
    if c.distinct {
        parts.push("distinct".into());
    }
    if !c.sort.is_empty() {
        let keys: Vec<String> = c
            .sort
            .iter()
            .map(|k| {
                let by = match &k.by {
                    remodel_model::SortBy::Column { column } => column.to_string(),
                    remodel_model::SortBy::Aggregate { aggregate } => aggregate.function.clone(),
                };
                format!(
                    "{by}{}{}",
                    if k.desc { " DESC" } else { "" },
                    if k.nulls_first {
                        " NULLS FIRST"
                    } else {
                        " NULLS LAST"
                    }
                )
            })
            .collect();
        parts.push(format!("sort {}", keys.join(", ")));
    }
    if let Some(o) = &c.offset {
        parts.push(format!("offset {o}"));
    }
    if let Some(l) = &c.limit {
        parts.push(format!("limit {l}"));
    }
    parts.join("; ")
}

/// A one-line-per-decision rendering of a design, for reviewable fixture diffs.
pub fn mapping_text(plan: &Plan) -> String {
    let mut s = String::new();
    for q in &plan.design.queries {
        s.push_str(&format!(
            "{} [{}] {} -> {}\n",
            q.pattern,
            if q.single_partition {
                "single"
            } else {
                "multi"
            },
            q.table.as_deref().unwrap_or("-"),
            q.cql.as_deref().unwrap_or("-")
        ));
        if !q.binds.is_empty() {
            s.push_str(&format!("    binds {}\n", binds(&q.binds)));
        }
        for step in &q.then {
            s.push_str(&format!("    then {} {}\n", step.cql, binds(&step.binds)));
        }
        if let Some(p) = &q.partitions {
            if *p != remodel_model::PartitionRead::One {
                s.push_str(&format!("    partitions: {}\n", partitions(p)));
            }
        }
        let client = client_text(&q.client);
        if !client.is_empty() {
            s.push_str(&format!("    client: {client}\n"));
        }
        if let Some(u) = &q.unsupported {
            s.push_str(&format!("    unsupported: {u}\n"));
        } else if let Some(r) = &q.reason {
            s.push_str(&format!("    reason: {r}\n"));
        }
        for w in &q.warnings {
            s.push_str(&format!("    warning {}: {}\n", w.code, w.message));
        }
        for n in &q.notes {
            s.push_str(&format!("    note: {n}\n"));
        }
    }
    for w in &plan.design.writes {
        s.push_str(&format!(
            "{} write, {} B{}\n",
            w.pattern,
            w.batch_bytes,
            if w.fits_batch {
                ""
            } else {
                " (over batch warning)"
            }
        ));
        for (i, r) in w.read_before_write.iter().enumerate() {
            s.push_str(&format!(
                "    read {i}{}{}: {} {}\n",
                if r.many { " (rows)" } else { "" },
                if r.reads_new { " (new)" } else { "" },
                r.cql,
                binds(&r.binds)
            ));
        }
        for t in &w.targets {
            let each = t
                .for_each
                .map(|i| format!(" for each row of read {i}"))
                .unwrap_or_default();
            let guard = t
                .guard
                .as_ref()
                .map(|g| format!(" {g}"))
                .unwrap_or_default();
            s.push_str(&format!("    {}{each}{guard} {}\n", t.cql, binds(&t.binds)));
        }
        if let Some(b) = &w.batch {
            s.push_str(&format!("    batch: {:?}", b.kind));
            if let Some(c) = b.counters {
                s.push_str(&format!(", then counters: {c:?}"));
            }
            s.push('\n');
        }
        if let Some(u) = &w.unsupported {
            s.push_str(&format!("    unsupported: {u}\n"));
        }
        if let Some(by) = &w.served_by_ttl {
            s.push_str(&format!(
                "    served by TTL of {} on {}\n",
                by.column,
                by.tables.join(", ")
            ));
        }
        for x in &w.warnings {
            s.push_str(&format!("    warning ({}): {}\n", x.code, x.message));
        }
        if let Some(n) = &w.note {
            s.push_str(&format!("    note: {n}\n"));
        }
    }
    for sg in &plan.design.suggestions {
        s.push_str(&format!("{} suggestion: {}\n", sg.pattern, sg.text));
    }
    // The checklist's findings on tables (only where there are some: older fixtures keep
    // their text).
    for t in &plan.design.tables {
        if let Some(x) = &t.ttl {
            s.push_str(&format!(
                "table {}: TTL from {} (column {}), reads {}, purges {}\n",
                t.name,
                x.column,
                x.target_column,
                x.reads.join(", "),
                x.purges.join(", ")
            ));
        }
        if let Some(x) = &t.tombstones {
            s.push_str(&format!(
                "table {}: tombstones {} per read of {} ({} deleted / {} inserted a day over {} partitions, deletes {})\n",
                t.name,
                x.per_read,
                x.read,
                x.deleted_per_day,
                x.inserted_per_day,
                x.partitions,
                x.deletes.join(", ")
            ));
        }
        for w in t.warnings.iter().filter(|w| w.code == "tombstones") {
            s.push_str(&format!(
                "table {}: warning {}: {}\n",
                t.name, w.code, w.message
            ));
        }
    }
    s
}
