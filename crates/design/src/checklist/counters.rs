//! Counter tables: a `count(*)` (or `sum` of an integer column) of the groups a read pins by
//! `=` on its table's columns (`SELECT count(*) FROM likes WHERE post_id = $1`) can be kept per
//! group in a counter table (`UPDATE … SET n = n + 1` on insert, `- 1` on delete, both on a
//! change of group) instead of scanning the group's rows on every call. Whether to keep one is
//! a cost decision: the read's cost served by scanning (as the selection chose it, with the
//! writes of its table when no other read shares it) against the counter's read plus its
//! upkeep — every write of the counted table one counter update, which the replica applies by
//! reading the counter first, and a DELETE (or a group-changing UPDATE) a read of the rows it
//! removes, since only rows that existed may be subtracted.

use crate::candidates::Candidates;
use crate::costs::ReadCost;
use crate::select::{Chosen, Costs};
use crate::{Inputs, Weights};
use remodel_model::ident::cql_quote;
use remodel_model::{
    AccessPattern, Bind, BindValue, Candidate, ColumnRef, CounterRead, CounterTable, CqlType,
    DesignColumn, DesignTable, EqualityOp, Estimates, KeyColumn, NativeType, PartitionRead,
    QueryMapping, ReadColumn, Schema, SourceColumn, SourceEdit, SourceFilter, SourceQuery,
    SourceRef, SourceSql, SourceValue, StatementKind, Workload,
};

/// A counter table a read could be served by.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The read (workload index).
    pub pattern: usize,
    /// The counted source table.
    pub root: String,
    /// The group: the columns the read binds by `=` (the counter table's partition key).
    pub group: Vec<ColumnRef>,
    /// The summed columns.
    pub sums: Vec<ColumnRef>,
    /// True when the SQL has a GROUP BY (an empty group returns no row).
    pub grouped: bool,
    /// The table's name.
    pub name: String,
    /// The counter column holding the row count.
    pub count_column: String,
}

impl Spec {
    /// The counter column holding the sum of `c`.
    pub fn sum_column(c: &ColumnRef) -> String {
        format!("sum_{}", crate::candidates::naming::sanitize(&c.column))
    }

    /// The group columns that may be NULL: a row holding NULL in one is counted in no group
    /// (SQL's `=` never matches it, and a NULL cannot be a key).
    pub fn nullable_group<'s>(&'s self, schema: &'s Schema) -> impl Iterator<Item = &'s ColumnRef> {
        self.group.iter().filter(|g| {
            schema
                .table(&g.table)
                .and_then(|t| t.column(&g.column))
                .is_none_or(|c| c.nullable)
        })
    }

    /// The CQL type of a group column, from its source column.
    pub fn group_type(&self, schema: &Schema, c: &ColumnRef) -> CqlType {
        schema
            .table(&c.table)
            .and_then(|t| t.column(&c.column))
            .map_or(CqlType::TEXT, |col| {
                crate::candidates::type_mapping::cql_type(&col.sql_type)
            })
    }
}

/// The `counter` type.
pub fn counter_type() -> CqlType {
    CqlType::Native(NativeType::Counter)
}

/// The counter table that could serve read `p`, `None` when it is no aggregate read, or why a
/// counter cannot serve it.
pub fn spec_of(schema: &Schema, p: &AccessPattern, pi: usize) -> Option<Result<Spec, String>> {
    let a = &p.analysis;
    if p.kind != StatementKind::Select || a.aggregates.is_empty() || a.one_off.is_some() {
        return None;
    }
    Some(shape_spec(schema, p, pi))
}

fn shape_spec(schema: &Schema, p: &AccessPattern, pi: usize) -> Result<Spec, String> {
    let a = &p.analysis;
    let [root] = a.tables.as_slice() else {
        return Err("it reads several tables: a counter keeps the rows of one".into());
    };
    let t = schema
        .table(root)
        .ok_or_else(|| format!("{root} is not in the schema"))?;
    if !a.join_path.is_empty() || !a.ranges.is_empty() || !a.residual.is_empty() {
        return Err("it filters by more than `=` on columns: a counter counts whole groups".into());
    }
    if a.distinct || a.limit.is_some() || a.offset.is_some() || a.unmodeled.is_some() {
        return Err("DISTINCT, LIMIT, OFFSET or an unmodelled part shape its result".into());
    }
    let mut group: Vec<ColumnRef> = Vec::new();
    for e in &a.equality {
        let col = t
            .column(&e.column.column)
            .filter(|_| e.op == EqualityOp::Eq && e.expr.is_some())
            .ok_or_else(|| {
                format!(
                    "{} is not bound by `=` to a value: the groups are not known",
                    e.column
                )
            })?;
        let c = ColumnRef::new(t.key(), &col.name);
        if !group.contains(&c) {
            group.push(c);
        }
    }
    if group.is_empty() {
        return Err("it counts the whole table: every write would update one partition".into());
    }
    if a.group_by
        .iter()
        .any(|g| !group.iter().any(|c| c.column == g.column))
    {
        return Err(
            "it groups by a column the WHERE does not bind: the groups read are not bounded".into(),
        );
    }
    let mut sums = Vec::new();
    for agg in &a.aggregates {
        let f = agg.function.to_ascii_lowercase();
        let col = agg.column.as_ref().and_then(|c| t.column(&c.column));
        match (f.as_str(), col, agg.distinct) {
            (_, _, true) => return Err(format!("{f}(DISTINCT …) is not a running count")),
            ("count", None, _) => {}
            ("count", Some(c), _) if !c.nullable => {}
            ("sum", Some(c), _) if !c.nullable && is_integer(&c.sql_type) => {
                let r = ColumnRef::new(t.key(), &c.name);
                if !sums.contains(&r) {
                    sums.push(r);
                }
            }
            _ => {
                return Err(format!(
                    "{f} of {} is no count or sum of a NOT NULL integer column: a counter cannot keep it",
                    agg.column.as_ref().map_or("*".to_string(), |c| c.to_string())
                ))
            }
        }
    }
    let computed = a.outputs.iter().filter(|o| o.column.is_none()).count();
    if computed != a.aggregates.len()
        || a.outputs.iter().any(|o| {
            o.column
                .as_ref()
                .is_some_and(|c| !group.iter().any(|g| g.column == c.column))
        })
    {
        return Err("its result holds more than the group's columns and its aggregates".into());
    }
    let count_column = if group.iter().any(|g| g.column == "n") {
        "row_count".to_string()
    } else {
        "n".to_string()
    };
    let by: Vec<String> = group
        .iter()
        .map(|g| crate::candidates::naming::sanitize(&g.column))
        .collect();
    let what = if sums.is_empty() { "count" } else { "totals" };
    let name = crate::candidates::naming::fit_length(&format!(
        "{}_{what}_by_{}",
        crate::candidates::naming::sanitize(&t.name),
        by.join("_")
    ));
    Ok(Spec {
        pattern: pi,
        root: t.key(),
        group,
        sums,
        grouped: !a.group_by.is_empty(),
        name,
        count_column,
    })
}

fn is_integer(sql_type: &str) -> bool {
    matches!(
        sql_type.to_ascii_lowercase().as_str(),
        "smallint" | "integer" | "int" | "int2" | "int4" | "bigint" | "int8"
    )
}

/// What one write of the counted table costs the counter, per call.
#[derive(Debug, Clone, PartialEq)]
pub struct Upkeep {
    /// The write (workload index).
    pub write: usize,
    /// Counter statements.
    pub statements: f64,
    /// True when the write must read the rows it removes or changes first.
    pub reads_rows: bool,
}

/// The counter updates every write of the counted table makes, or why one cannot be kept exact.
pub fn upkeep(schema: &Schema, workload: &Workload, s: &Spec) -> Result<Vec<Upkeep>, String> {
    let mut out = Vec::new();
    for (wi, p) in workload.patterns.iter().enumerate() {
        if !p.kind.is_write() || p.analysis.one_off.is_some() {
            continue;
        }
        let Some(w) = p
            .analysis
            .write
            .as_ref()
            .filter(|w| schema.table(&w.table).is_some_and(|t| t.key() == s.root))
        else {
            continue;
        };
        let touched = |cols: &[String]| {
            s.group
                .iter()
                .chain(&s.sums)
                .any(|c| cols.contains(&c.column))
        };
        let u = match p.kind {
            StatementKind::Insert if w.on_conflict => {
                return Err(format!(
                    "{} is an INSERT … ON CONFLICT: whether it adds a row is known only after a read, which a counter update cannot wait for",
                    p.id
                ))
            }
            StatementKind::Insert => Upkeep {
                write: wi,
                statements: 1.0,
                reads_rows: false,
            },
            StatementKind::Delete => Upkeep {
                write: wi,
                statements: 1.0,
                reads_rows: true,
            },
            StatementKind::Update if touched(&w.columns_written) => Upkeep {
                write: wi,
                statements: 2.0,
                reads_rows: true,
            },
            _ => continue,
        };
        out.push(u);
    }
    Ok(out)
}

/// A counter the design considered for a read, with the costs compared.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The counter table.
    pub spec: Spec,
    /// True when it serves the read.
    pub chosen: bool,
    /// The counter's read per call.
    pub read: ReadCost,
    /// Its weighted cost per 100 calls (read and upkeep).
    pub counter_cost: f64,
    /// Of it, the upkeep (table writes and reads before write, weighted).
    pub upkeep_cost: f64,
    /// The weighted cost per 100 calls of serving the read by scanning, as the selection chose.
    pub scan_cost: f64,
    /// The scanning way's evidence (its table and terms).
    pub scan: Candidate,
    /// Why, quoting the figures.
    pub reason: String,
}

/// The counters the reads could use, each chosen when it costs less than scanning.
pub fn decide(inp: &Inputs<'_>, c: &Candidates, costs: &Costs, chosen: &Chosen) -> Vec<Decision> {
    let w = &inp.config.weights;
    let mut out = Vec::new();
    for (&pi, &oi) in &chosen.option {
        let p = &inp.workload.patterns[pi];
        let Some(Ok(spec)) = spec_of(inp.schema, p, pi) else {
            continue;
        };
        let Ok(upkeep) = kept_exact(inp, &spec) else {
            continue;
        };
        out.push(weigh(inp, c, costs, chosen, (pi, oi), spec, &upkeep, w));
    }
    out
}

/// The reasons a read with a count or sum is not served by a counter (for the evidence; a
/// read of only `min`/`max`/`avg` is no counter's to keep and says nothing).
pub fn refusal(inp: &Inputs<'_>, p: &AccessPattern, pi: usize) -> Option<String> {
    let counts = p.analysis.aggregates.iter().any(|a| {
        a.function.eq_ignore_ascii_case("count") || a.function.eq_ignore_ascii_case("sum")
    });
    if !counts {
        return None;
    }
    match spec_of(inp.schema, p, pi)? {
        Err(why) => Some(why),
        Ok(spec) => kept_exact(inp, &spec).err(),
    }
}

/// The counter updates that keep `spec` exact, or why none can: also when the counted rows
/// expire by TTL ([`crate::checklist::expiry`]), since Cassandra drops an expired row without a write
/// that could subtract it (the TTL is kept: it serves the purge no keyed statement can).
fn kept_exact(inp: &Inputs<'_>, spec: &Spec) -> Result<Vec<Upkeep>, String> {
    if let Some(e) = inp.expiries.iter().find(|e| e.column.table == spec.root) {
        return Err(format!(
            "{}'s rows are purged once past {} ({}), which a TTL serves: Cassandra drops an expired row without a write that could subtract it",
            spec.root,
            e.column,
            e.purges.join(", ")
        ));
    }
    upkeep(inp.schema, inp.workload, spec)
}

#[allow(clippy::too_many_arguments)]
fn weigh(
    inp: &Inputs<'_>,
    c: &Candidates,
    costs: &Costs,
    chosen: &Chosen,
    (pi, oi): (usize, usize),
    spec: Spec,
    upkeep: &[Upkeep],
    w: &Weights,
) -> Decision {
    let share = costs.share[pi];
    let o = &c.options[oi];
    // The scanning way's table is dropped with it when no other chosen read uses it.
    let alone = !chosen
        .option
        .iter()
        .any(|(&qi, &x)| qi != pi && c.options[x].layout == o.layout);
    let scan_writes: f64 = if alone {
        costs.always[o.layout]
            .iter()
            .chain(&costs.needs[oi])
            .map(|t| costs.term(w, t))
            .sum()
    } else {
        0.0
    };
    let scan_cost = costs.option(w, c, oi) + scan_writes;
    let row_bytes = group_bytes(inp, &spec) + 8.0 * (1 + spec.sums.len()) as f64;
    let read = ReadCost {
        partitions: 1.0,
        rows: 1.0,
        rows_scanned: 1.0,
        bytes_returned: row_bytes,
        stored_bytes: distinct_groups(inp, &spec.group) * row_bytes,
    };
    // A counter update is a write that the replica applies after reading the counter.
    let mut upkeep_cost = 0.0;
    let mut statements = 0.0;
    let mut reads_first = 0.0;
    for u in upkeep {
        let s = costs.share[u.write];
        statements += s * u.statements;
        upkeep_cost += s * (w.write + w.read) * u.statements;
        if u.reads_rows {
            reads_first += s;
            upkeep_cost += s * w.read;
        }
    }
    // Without the scanning table, a table listing the counted rows must stay for the reads
    // before write: its inserts and deletes.
    if alone && upkeep.iter().any(|u| u.reads_rows) {
        for t in &costs.always[o.layout] {
            upkeep_cost += costs.term(w, t);
        }
    }
    let read_cost = share * w.read_terms(read.partitions, read.rows_scanned, read.bytes_returned)
        + w.storage_per_gib * read.stored_bytes / (1024.0 * 1024.0 * 1024.0);
    let counter_cost = read_cost + upkeep_cost;
    let chosen_counter = counter_cost < scan_cost;
    let r = &costs.reads[oi];
    let scan_table = inp.workload.patterns[pi].id.clone();
    let reason = format!(
        "{verdict}: the counter table {name} costs {cc} per 100 calls ({rc} for the read: 1 partition, 1 row; {uc} to keep it: {st} counter updates and {rf} reads before write per 100 calls) against {sc} for scanning ({p} partition(s), {rows} rows scanned and {kib} KiB returned per call{shared})",
        verdict = if chosen_counter { "counter chosen" } else { "counter rejected" },
        name = spec.name,
        cc = fmt(counter_cost),
        rc = fmt(read_cost),
        uc = fmt(upkeep_cost),
        st = fmt(statements),
        rf = fmt(reads_first),
        sc = fmt(scan_cost),
        p = fmt(r.partitions),
        rows = fmt(r.rows_scanned),
        kib = fmt(r.bytes_returned / 1024.0),
        shared = if alone {
            format!(", {} of it the writes that keep the scanned table", fmt(scan_writes))
        } else {
            ", its table shared with other reads".to_string()
        },
    );
    let _ = scan_table;
    Decision {
        scan: Candidate {
            kind: o.kind.label().to_string(),
            table: String::new(),
            partition_reads: round2(r.partitions),
            write_cost: round2(scan_writes),
            reads_before_write: 0.0,
            chosen: !chosen_counter,
            rows_scanned: round2(r.rows_scanned),
            bytes_returned: r.bytes_returned.round(),
            reason: None,
        },
        spec,
        chosen: chosen_counter,
        read,
        counter_cost,
        upkeep_cost,
        scan_cost,
        reason,
    }
}

/// Groups of the counted table: the product of the group columns' distinct values, at most its
/// rows.
fn distinct_groups(inp: &Inputs<'_>, group: &[ColumnRef]) -> f64 {
    let Some(first) = group.first() else {
        return 1.0;
    };
    let rows = inp.sizer.rows(&first.table);
    group
        .iter()
        .map(|g| inp.sizer.distinct(g))
        .product::<f64>()
        .min(rows)
        .max(1.0)
}

fn group_bytes(inp: &Inputs<'_>, s: &Spec) -> f64 {
    s.group
        .iter()
        .filter_map(|g| inp.schema.table(&g.table)?.column(&g.column))
        .map(|c| crate::candidates::type_mapping::default_width(&c.sql_type) + 8.0)
        .sum()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A figure for a sentence: two decimals at most.
fn fmt(x: f64) -> String {
    let r = round2(x);
    if r == r.trunc() && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// The counter table of a chosen counter.
pub fn table(inp: &Inputs<'_>, s: &Spec, serves: &str) -> DesignTable {
    let schema = inp.schema;
    let partition_key: Vec<KeyColumn> = s
        .group
        .iter()
        .map(|g| KeyColumn {
            column: g.column.clone(),
            cql_type: s.group_type(schema, g),
            derived_from: None,
            bucket: None,
            time_zone: None,
            order: None,
            constant: None,
            encoding: None,
        })
        .collect();
    // Counters first, then the key: the order of `UPDATE … SET n = n + ? … WHERE g = ?`'s
    // markers, so a backfill binds a `source_sql` row as it comes.
    let mut columns = vec![plain_column(&s.count_column, counter_type(), None)];
    for c in &s.sums {
        columns.push(plain_column(&Spec::sum_column(c), counter_type(), None));
    }
    let referenced = referenced_key(schema, s);
    columns.extend(s.group.iter().map(|g| {
        let mut c = plain_column(&g.column, s.group_type(schema, g), Some(g.clone()));
        if let Some(r) = referenced.iter().find(|(from, _)| from == g) {
            c.source = Some(r.1.clone());
            c.equals = vec![g.clone()];
        }
        c
    }));
    let groups = distinct_groups(inp, &s.group);
    let row_bytes = group_bytes(inp, s) + 8.0 * (1 + s.sums.len()) as f64;
    DesignTable {
        name: s.name.clone(),
        entity: s.root.clone(),
        partition_key,
        clustering: Vec::new(),
        columns,
        serves: vec![serves.to_string()],
        source_sql: SourceSql::new(schema, &source(schema, s)).sql(&SourceEdit::default()),
        source: source(schema, s),
        estimates: Estimates {
            rows_per_partition_avg: 1.0,
            rows_per_partition_max: 1.0,
            bytes_per_partition_avg: row_bytes.round(),
            bytes_per_partition_max: row_bytes.round(),
            partitions: groups.round(),
            rows: groups.round(),
            basis: if inp.sizer.stats.and_then(|st| st.table(&s.root)).is_some() {
                "statistics"
            } else {
                "defaults"
            }
            .to_string(),
        },
        warnings: Vec::new(),
        counter: Some(CounterTable {
            counts: s.root.clone(),
            group_by: s.group.clone(),
            count_column: s.count_column.clone(),
            sums: s
                .sums
                .iter()
                .map(|c| (Spec::sum_column(c), c.clone()))
                .collect(),
        }),
        ttl: None,
        tombstones: None,
    }
}

/// When the group is exactly a foreign key of the counted table to a unique key
/// (`likes.post_id` → `posts.id`), each counter row is one row of the referenced table (the
/// likes of one post): the group columns paired with the referenced key columns they hold,
/// which the table's lineage names as their source (the counted column as `equals`).
fn referenced_key(schema: &Schema, s: &Spec) -> Vec<(ColumnRef, ColumnRef)> {
    let Some(t) = schema.table(&s.root) else {
        return Vec::new();
    };
    let same_set = |cols: &[String]| {
        cols.len() == s.group.len() && s.group.iter().all(|g| cols.contains(&g.column))
    };
    t.foreign_keys
        .iter()
        .filter(|fk| same_set(&fk.columns) && fk.columns.len() == fk.ref_columns.len())
        .find_map(|fk| {
            let rt = schema.table(&fk.ref_table)?;
            rt.is_unique_on(&fk.ref_columns).then(|| {
                fk.columns
                    .iter()
                    .zip(&fk.ref_columns)
                    .map(|(c, r)| (ColumnRef::new(t.key(), c), ColumnRef::new(rt.key(), r)))
                    .collect()
            })
        })
        .unwrap_or_default()
}

fn plain_column(name: &str, cql_type: CqlType, source: Option<ColumnRef>) -> DesignColumn {
    DesignColumn {
        name: name.to_string(),
        cql_type,
        source,
        is_static: false,
        embeds: None,
        encoding: None,
        row_id: None,
        equals: Vec::new(),
    }
}

/// `SELECT count(*) AS n, t0.post_id FROM likes t0 GROUP BY t0.post_id`: each group's counters
/// (counters first, the order of the table's columns), which a backfill adds to the (empty)
/// counter table.
pub fn source(schema: &Schema, s: &Spec) -> SourceQuery {
    let r = |c: &str| SourceRef::new("t0", c);
    let mut columns = vec![SourceColumn {
        name: s.count_column.clone(),
        value: SourceValue::Count,
    }];
    for c in &s.sums {
        columns.push(SourceColumn {
            name: Spec::sum_column(c),
            value: SourceValue::Sum(r(&c.column)),
        });
    }
    for g in &s.group {
        columns.push(SourceColumn {
            name: g.column.clone(),
            value: SourceValue::Column(r(&g.column)),
        });
    }
    SourceQuery {
        table: s.root.clone(),
        alias: "t0".into(),
        columns,
        filters: s
            .nullable_group(schema)
            .map(|g| SourceFilter::IsNotNull(r(&g.column)))
            .collect(),
        group_by: s.group.iter().map(|g| r(&g.column)).collect(),
        ..Default::default()
    }
}

/// The read served by a chosen counter: the group's counters, by its partition key.
pub fn query(ks: &str, schema: &Schema, p: &AccessPattern, s: &Spec) -> QueryMapping {
    let a = &p.analysis;
    let mut binds: Vec<Bind> = Vec::new();
    let mut conds: Vec<String> = Vec::new();
    for g in &s.group {
        let Some(expr) = a
            .equality
            .iter()
            .find(|e| e.column.column == g.column)
            .and_then(|e| e.expr.clone())
        else {
            continue;
        };
        conds.push(format!("{} = ?", cql_quote(&g.column)));
        binds.push(Bind {
            column: g.column.clone(),
            cql_type: s.group_type(schema, g),
            value: BindValue::Expr { expr },
        });
    }
    let mut aggs = a.aggregates.iter();
    let columns: Vec<ReadColumn> = a
        .outputs
        .iter()
        .map(|o| {
            let (cql_column, cql_type) = match &o.column {
                Some(c) => (c.column.clone(), s.group_type(schema, c)),
                None => {
                    let agg = aggs.next();
                    let col = match agg.filter(|x| x.function.eq_ignore_ascii_case("sum")) {
                        Some(x) => x
                            .column
                            .as_ref()
                            .map_or(s.count_column.clone(), Spec::sum_column),
                        None => s.count_column.clone(),
                    };
                    (col, counter_type())
                }
            };
            ReadColumn {
                name: o.name.clone(),
                source: o.column.clone(),
                table: Some(s.name.clone()),
                cql_column: Some(cql_column),
                cql_type: Some(cql_type),
                encoding: None,
                aggregate: None,
            }
        })
        .collect();
    let mut selected: Vec<String> = s.group.iter().map(|g| cql_quote(&g.column)).collect();
    selected.push(cql_quote(&s.count_column));
    selected.extend(s.sums.iter().map(|c| cql_quote(&Spec::sum_column(c))));
    QueryMapping {
        pattern: p.id.clone(),
        table: Some(s.name.clone()),
        cql: Some(format!(
            "SELECT {} FROM {}.{} WHERE {}",
            selected.join(", "),
            cql_quote(ks),
            cql_quote(&s.name),
            conds.join(" AND ")
        )),
        single_partition: true,
        binds,
        columns,
        partitions: Some(PartitionRead::One),
        counter: Some(CounterRead {
            count_column: s.count_column.clone(),
            grouped: s.grouped,
        }),
        ..Default::default()
    }
}
