//! The plan validator: checks a finished design against the schema and the workload before it
//! is written. Every finding is an error — a plan that fails here would lose rows, leave stale
//! copies, read columns a table lacks or change what a query returns.
//!
//! In: the plan's schema, workload and design (plan-model values only); out: the
//! [`Violation`]s. The read checks are in [`reads`]; [`self_check`] turns violations into the
//! patterns the designer refuses on its next round.
//!
//! It reads the plan model only (tables, query mappings, write paths with their binds) and
//! applies the meaning the plan format gives each bind ([`BindValue`]): a `current` value is
//! bound by the statement's WHERE `=` or read by an earlier read-before-write; a `new` value is
//! set by the statement, read by a read keyed by new values, or unchanged.
//!
//! The checks, named as in the plan-correctness issue:
//! - (a) every table's primary key holds a unique key of each source row it stores (a declared
//!   one, or the generated row id of a table without: its NOT NULL columns prove nothing);
//! - (b) every read before write reads columns its table has, by a key whose values are known;
//! - (c) every bind of every write statement has a value, and the statement addresses whole rows;
//! - (d) every key column an UPDATE changes moves the row (DELETE by the current key, INSERT);
//! - (e) every SQL predicate of a read is served by the key or applied on the client;
//! - (f) every table that holds data a write changes is written by its path;
//! - (g) every key column whose source keeps microseconds keeps them (or the table says why not);
//! - (n) a bucketed read reads every bucket of its window (the one bucket of a bound only where
//!   the SQL confines the window to one);
//! - (o) the plan states what an executor needs: typed binds (each with the CQL type its marker
//!   takes), which partitions each read reads and where its result columns are, consistency
//!   levels, batches;
//! - (p) every table's source query reads tables and columns the schema holds, returns the
//!   table's columns, and is what its `source_sql` shows ([`source`]);
//! - (q) every counter table holds its key and counters only, is written by counter updates
//!   only, and is kept by every write of the rows it counts ([`counters`]);
//! - (r) a statement binding a key column whose NULL rows the table leaves out (its source query
//!   filters `IS NOT NULL`) runs only when the value is not NULL;
//! - (s) a copy of a parent's column is read from the parent row the table's own join names,
//!   not another row of that table ([`parents`]).
//!
//! The read checks (e), (n), (o) are in [`self::reads`].

pub mod reads;
pub mod self_check;

use remodel_model::source::SourceFilter;
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, CqlType, Design, DesignColumn, DesignTable, EqualityOp,
    Guard, Plan, ReadBeforeWrite, Schema, StatementKind, Table, Violation, Workload, WriteAction,
    WritePath,
};
use std::collections::HashMap;

mod counters;
mod parents;
mod semantics;
mod source;

/// Checks a plan; an empty list means it is safe to execute.
pub fn validate_plan(plan: &Plan) -> Vec<Violation> {
    validate_in(
        &plan.schema,
        &plan.workload,
        &plan.design,
        &plan.semantics.time_zone,
    )
}

/// Checks a design made for an application whose session time zone is UTC; an empty list
/// means the plan is safe to execute.
pub fn validate(schema: &Schema, workload: &Workload, design: &Design) -> Vec<Violation> {
    validate_in(schema, workload, design, "UTC")
}

/// Checks a design made for an application whose session time zone is `session_zone` (a date
/// it sends is midnight there).
pub fn validate_in(
    schema: &Schema,
    workload: &Workload,
    design: &Design,
    session_zone: &str,
) -> Vec<Violation> {
    let mut out = Vec::new();
    // By hash: a workload of 100,000 patterns has as many mappings.
    let mut patterns: HashMap<&str, &AccessPattern> = HashMap::new();
    for p in &workload.patterns {
        patterns.entry(p.id.as_str()).or_insert(p);
    }
    let pattern = |id: &str| patterns.get(id).copied();
    let writes: Vec<(&AccessPattern, &WritePath)> = design
        .writes
        .iter()
        .filter_map(|w| Some((pattern(&w.pattern)?, w)))
        .collect();
    for t in &design.tables {
        null_key_guards(design, t, &mut out);
        if t.counter.is_some() {
            // One row per group by design: the rows it counts are not its rows.
            counters::counter_table(design, &writes, t, &mut out);
            continue;
        }
        keys_unique(schema, t, &mut out);
        key_precision(schema, t, &mut out);
        source::source_query(schema, t, &mut out);
    }
    for w in &design.writes {
        let Some(p) = pattern(&w.pattern) else {
            continue;
        };
        if w.one_off {
            continue;
        }
        write_path(schema, design, p, w, &mut out);
    }
    for q in &design.queries {
        let Some(p) = pattern(&q.pattern) else {
            continue;
        };
        reads::predicates_kept(schema, design, p, q, &mut out);
        reads::buckets_read(design, p, q, session_zone, &mut out);
    }
    reads::contract(design, &mut out);
    ids_stated(schema, design, &mut out);
    ttl_written(design, &mut out);
    out
}

/// (o) Every column a write path gives a sequence's next value states how a writer makes one
/// (`design.ids`), and a time-ordered id only where the column holds 64 bits.
fn ids_stated(schema: &Schema, design: &Design, out: &mut Vec<Violation>) {
    for w in design.writes.iter().filter(|w| !w.one_off) {
        for nv in &w.values {
            let mut nextval = false;
            nv.value.walk(&mut |e| {
                nextval |= matches!(
                    e,
                    remodel_model::Expr::Call {
                        function: remodel_model::Function::Nextval,
                        ..
                    }
                );
            });
            if nextval && !design.ids.iter().any(|i| i.column == nv.column) {
                v(
                    out,
                    "o",
                    format!(
                        "write {}: {} takes a sequence's next value, and design.ids does not say how a writer makes one",
                        w.pattern, nv.column
                    ),
                );
            }
        }
    }
    for id in &design.ids {
        let sql_type = schema
            .table(&id.column.table)
            .and_then(|t| t.column(&id.column.column))
            .map(|c| c.sql_type.as_str())
            .unwrap_or_default();
        let (fits, _) = crate::emit::ids::strategy(&id.column, sql_type);
        let time_ordered = matches!(id.strategy, remodel_model::IdStrategy::TimeOrdered { .. });
        if time_ordered && fits != remodel_model::IdStrategy::TIME_ORDERED {
            v(
                out,
                "o",
                format!(
                    "design.ids: {} is `{sql_type}`, which cannot hold a time-ordered 64-bit id",
                    id.column
                ),
            );
        }
    }
}

/// (ttl) Every INSERT and UPDATE of a table whose rows expire gives them their TTL: a statement
/// without it writes cells that outlive the row (a TTL of 0 or none is "never"), and every
/// purge served by the TTL names tables that have one.
fn ttl_written(design: &Design, out: &mut Vec<Violation>) {
    for t in &design.tables {
        let Some(ttl) = &t.ttl else { continue };
        if t.counter.is_some() {
            v(
                out,
                "ttl",
                format!(
                    "counter table {} has a TTL: Cassandra refuses USING TTL on a counter",
                    t.name
                ),
            );
        }
        if let Some(c) = design.tables.iter().find(|c| {
            c.counter
                .as_ref()
                .is_some_and(|x| x.counts == ttl.column.table)
        }) {
            v(
                out,
                "ttl",
                format!(
                    "{}'s rows expire by TTL but counter table {} counts them: an expired row is never subtracted",
                    ttl.column.table, c.name
                ),
            );
        }
        for w in &design.writes {
            for s in w
                .targets
                .iter()
                .filter(|s| s.table == t.name && s.action != remodel_model::WriteAction::Delete)
            {
                let given = s.binds.iter().any(|b| {
                    matches!(&b.value, BindValue::SecondsUntil { of, .. }
                        if matches!(&**of, BindValue::New { column } | BindValue::Current { column }
                            if *column == ttl.column))
                });
                if !given || !s.cql.contains("USING TTL ?") {
                    v(
                        out,
                        "ttl",
                        format!(
                            "write {}: `{}` writes rows of {} without the TTL of {}",
                            w.pattern, s.cql, t.name, ttl.column
                        ),
                    );
                }
            }
        }
    }
    for w in &design.writes {
        let Some(by) = &w.served_by_ttl else { continue };
        for name in &by.tables {
            let held = design
                .tables
                .iter()
                .any(|t| t.name == *name && t.ttl.as_ref().is_some_and(|x| x.column == by.column));
            if !held {
                v(
                    out,
                    "ttl",
                    format!(
                        "write {}: served by the TTL of {}, but {name} has no TTL on it",
                        w.pattern, by.column
                    ),
                );
            }
        }
    }
}

pub(crate) fn v(out: &mut Vec<Violation>, check: &str, message: String) {
    out.push(Violation {
        check: check.to_string(),
        pattern: subject(&message, "read ").or_else(|| subject(&message, "write ")),
        table: subject(&message, "table "),
        message,
    });
}

/// [`v`] for a violation about table `table` (and the pattern its message starts with).
fn v_table(out: &mut Vec<Violation>, check: &str, table: &str, message: String) {
    v(out, check, message);
    if let Some(last) = out.last_mut() {
        last.table = Some(table.to_string());
    }
}

/// `q9` of a message `write q9: …` (`kind` `write `).
fn subject(message: &str, kind: &str) -> Option<String> {
    let rest = message.strip_prefix(kind)?;
    let (name, _) = rest.split_once([':', ' '])?;
    Some(name.to_string())
}

/// Identifiers compare exactly: the front ends fold them as Postgres does.
fn same(a: &str, b: &str) -> bool {
    a == b
}

/// The unique keys of a source table: primary key, unique constraints, unique plain indexes.
/// A table with none has no unique column combination at all: Postgres lets it hold equal rows
/// (NOT NULL columns prove nothing), so only a generated row id tells its rows apart.
fn unique_keys(t: &Table) -> Vec<Vec<String>> {
    let mut keys: Vec<Vec<String>> = Vec::new();
    if !t.primary_key.is_empty() {
        keys.push(t.primary_key.clone());
    }
    keys.extend(t.unique_keys.iter().map(|u| u.columns.clone()));
    keys
}

/// True when `parent` is reachable from `child` along foreign keys (declared or inferred).
fn is_ancestor(schema: &Schema, child: &str, parent: &str) -> bool {
    let mut frontier = vec![child.to_string()];
    let mut seen = frontier.clone();
    while let Some(t) = frontier.pop() {
        let Some(table) = schema.table(&t) else {
            continue;
        };
        for fk in &table.foreign_keys {
            let Some(rt) = schema.table(&fk.ref_table) else {
                continue;
            };
            if same(&rt.key(), parent) {
                return true;
            }
            if !seen.contains(&rt.key()) {
                seen.push(rt.key());
                frontier.push(rt.key());
            }
        }
    }
    false
}

/// (a) The key holds a unique key of the entity, and of every other source table that is not
/// one of the entity's parents (those are one row per entity row).
fn keys_unique(schema: &Schema, t: &DesignTable, out: &mut Vec<Violation>) {
    let key_names: Vec<&str> = t
        .partition_key
        .iter()
        .chain(&t.clustering)
        .map(|k| k.column.as_str())
        .collect();
    let key_cols: Vec<&DesignColumn> = t
        .columns
        .iter()
        .filter(|c| key_names.contains(&c.name.as_str()))
        .collect();
    // A key column holds its source and every column the table's joins make equal to it.
    let key_src: Vec<&ColumnRef> = key_cols
        .iter()
        .flat_map(|c| c.source.iter().chain(&c.equals))
        .collect();
    let covered = |table: &Table| {
        let keys = unique_keys(table);
        if keys.is_empty() {
            return key_cols.iter().any(|c| {
                c.row_id
                    .as_ref()
                    .is_some_and(|r| same(&r.table, &table.key()))
            });
        }
        keys.iter().any(|k| {
            k.iter().all(|col| {
                key_src
                    .iter()
                    .any(|s| same(&s.table, &table.key()) && same(&s.column, col))
            })
        })
    };
    let Some(entity) = schema.table(&t.entity) else {
        v(
            out,
            "a",
            format!(
                "table {} stores `{}`, which is not in the schema",
                t.name, t.entity
            ),
        );
        return;
    };
    if !covered(entity) {
        let what = if unique_keys(entity).is_empty() {
            "no generated row id of"
        } else {
            "no primary or unique key of"
        };
        v(out, "a", format!(
            "table {}: its key ({}) holds {what} {}: two {} rows with the same key values would collapse into one CQL row",
            t.name,
            key_names.join(", "),
            entity.key(),
            entity.key()
        ));
    }
    let mut others: Vec<&str> = t
        .columns
        .iter()
        .filter_map(|c| c.source.as_ref())
        .map(|s| s.table.as_str())
        .filter(|s| !same(s, &entity.key()))
        .collect();
    others.sort();
    others.dedup();
    for o in others {
        let Some(ot) = schema.table(o) else { continue };
        if !is_ancestor(schema, &entity.key(), &ot.key()) && !covered(ot) {
            v_table(out, "a", &t.name, format!(
                "table {}: it holds rows of {} joined to {} without a parent link, and its key holds no unique key of {}",
                t.name, ot.key(), entity.key(), ot.key()
            ));
        }
    }
}

/// (g) Every key column whose source keeps more than milliseconds (a `timestamp` without a
/// precision of 3 or less) keeps it exactly (an encoding), or the table states the decision
/// (a `timestamp_precision` warning with the collision risk): CQL's `timestamp` keeps
/// milliseconds, and rows apart by less would collapse into one key.
fn key_precision(schema: &Schema, t: &DesignTable, out: &mut Vec<Violation>) {
    let warned = t.warnings.iter().any(|w| w.code == "timestamp_precision");
    for k in t.partition_key.iter().chain(&t.clustering) {
        let Some(col) = t.columns.iter().find(|c| c.name == k.column) else {
            continue;
        };
        let Some(src) = &col.source else { continue };
        let Some(sql_type) = schema
            .table(&src.table)
            .and_then(|st| st.column(&src.column))
            .map(|c| c.sql_type.as_str())
        else {
            continue;
        };
        let as_millis = k.cql_type == CqlType::TIMESTAMP || k.encoding != col.encoding;
        if crate::candidates::keys::sub_ms_timestamp(sql_type) && as_millis && !warned {
            v(out, "g", format!(
                "table {}: key column {} holds {src} ({sql_type}, microseconds) as CQL {}, which keeps milliseconds: rows apart by less would collapse into one CQL row (keep it as epoch microseconds, or state the decision with a timestamp_precision warning)",
                t.name, k.column, k.cql_type
            ));
        }
    }
}

/// What the written statement binds and sets.
struct Facts<'a> {
    kind: StatementKind,
    table: &'a Table,
    /// Columns bound by the WHERE's `=`: their current values are known.
    key_eq: Vec<String>,
    /// Columns set by the statement (for an INSERT, every column is new).
    set: Vec<String>,
    /// Every column the statement writes, `SET n = n + 1` and the generated columns it
    /// recomputes included: the copies to keep in step.
    written: Vec<String>,
    /// For each new value computed from the current row (`SET a = b - $1`), the columns of that
    /// row it reads: their current values must be known.
    reads: Vec<(String, Vec<ColumnRef>)>,
}

impl Facts<'_> {
    fn of<'s>(schema: &'s Schema, p: &'s AccessPattern, path: &WritePath) -> Option<Facts<'s>> {
        let w = p.analysis.write.as_ref()?;
        let table = schema.table(&w.table)?;
        let key_eq = p
            .analysis
            .equality
            .iter()
            .filter(|e| {
                e.op == EqualityOp::Eq && e.value.is_some() && same(&e.column.table, &table.key())
            })
            .map(|e| e.column.column.clone())
            .collect();
        let mut set: Vec<String> = w
            .columns_written
            .iter()
            .filter(|c| {
                !w.values
                    .iter()
                    .any(|v| same(&v.column, c) && v.reads_current)
            })
            .cloned()
            .collect();
        let mut written = w.columns_written.clone();
        let mut reads = Vec::new();
        // The path's new values (defaults, generated columns) are written too; one computed from
        // the current row needs that row's value, as a `SET n = n + 1` does.
        if !path.values.is_empty() {
            set = path
                .values
                .iter()
                .filter(|v| !crate::writes::values::reads_this(&v.value))
                .map(|v| v.column.column.clone())
                .collect();
            for v in &path.values {
                if !written.contains(&v.column.column) {
                    written.push(v.column.column.clone());
                }
                let mut read: Vec<ColumnRef> = Vec::new();
                v.value.walk(&mut |e| {
                    if let remodel_model::Expr::Column {
                        column,
                        row: remodel_model::RowRef::This,
                    } = e
                    {
                        if !read.contains(column) {
                            read.push(column.clone());
                        }
                    }
                });
                if !read.is_empty() {
                    reads.push((v.column.column.clone(), read));
                }
            }
        }
        Some(Facts {
            kind: p.kind,
            table,
            key_eq,
            set,
            written,
            reads,
        })
    }

    fn own(&self, c: &ColumnRef) -> bool {
        same(&c.table, &self.table.key())
    }

    /// True when the write changes which row of `table` its row links to (so a `new` value of
    /// that table cannot be its current one).
    fn relinks(&self, table: &str) -> bool {
        !same(table, &self.table.key())
            && (self.kind == StatementKind::Insert
                || self.table.foreign_keys.iter().any(|fk| {
                    same(&fk.ref_table, table)
                        && fk
                            .columns
                            .iter()
                            .any(|c| self.set.iter().any(|s| same(s, c)))
                }))
    }
}

/// True when the read step gives the value of source column `c`.
fn provides(design: &Design, r: &ReadBeforeWrite, c: &ColumnRef) -> bool {
    let Some(t) = design.tables.iter().find(|t| t.name == r.table) else {
        return false;
    };
    r.columns.iter().any(|name| {
        t.columns.iter().any(|dc| {
            dc.name == *name
                && (dc
                    .source
                    .as_ref()
                    .is_some_and(|s| same(&s.table, &c.table) && same(&s.column, &c.column))
                    || dc.embeds.as_deref().is_some_and(|e| same(e, &c.table)))
        })
    })
}

/// True when the read step returns the generated row id of `table`'s rows.
fn gives_row_id(design: &Design, r: &ReadBeforeWrite, table: &str) -> bool {
    design
        .tables
        .iter()
        .find(|t| t.name == r.table)
        .is_some_and(|t| {
            t.columns.iter().any(|c| {
                r.columns.contains(&c.name)
                    && c.row_id.as_ref().is_some_and(|id| same(&id.table, table))
            })
        })
}

/// Why a bound value has no source at this point of the path (`None`: it has one).
fn unresolved(
    design: &Design,
    f: &Facts<'_>,
    before: &[&ReadBeforeWrite],
    row: Option<&ReadBeforeWrite>,
    value: &BindValue,
) -> Option<String> {
    let current = |c: &ColumnRef| {
        (f.own(c) && f.key_eq.iter().any(|k| same(k, &c.column)))
            || row.is_some_and(|r| provides(design, r, c))
            || before
                .iter()
                .any(|r| !r.many && !r.reads_new && provides(design, r, c))
    };
    match value {
        BindValue::Expr { .. } | BindValue::List { .. } | BindValue::Literal { .. } => None,
        BindValue::Bucket { of, .. } => unresolved(design, f, before, row, of),
        BindValue::Buckets { lower, upper, .. } => unresolved(design, f, before, row, lower)
            .or_else(|| unresolved(design, f, before, row, upper)),
        BindValue::Entry { key, fields } => key
            .iter()
            .map(|k| k.as_ref())
            .chain(fields.iter().map(|(_, v)| v))
            .find_map(|v| unresolved(design, f, before, row, v)),
        BindValue::EpochMicros { of, .. }
        | BindValue::Encoded { of, .. }
        | BindValue::SecondsUntil { of, .. } => unresolved(design, f, before, row, of),
        BindValue::RowId { table } => {
            let inserted = f.kind == StatementKind::Insert && same(table, &f.table.key());
            let read = |r: &ReadBeforeWrite| gives_row_id(design, r, table);
            (!(inserted || row.is_some_and(read) || before.iter().any(|r| !r.many && read(r))))
                .then(|| format!("the row id of {table} is neither generated by an INSERT of {table} nor read first"))
        }
        BindValue::Rewritten { column } => {
            (!before.iter().any(|r| r.columns.iter().any(|c| c == column)))
                .then(|| format!("the collection `{column}` is rewritten but never read first"))
        }
        BindValue::Current { column } => (!current(column)).then(|| {
            format!(
                "the current value of {column} is neither bound by the statement nor read first"
            )
        }),
        BindValue::New { column } => {
            let set = f.own(column)
                && (f.kind == StatementKind::Insert
                    || f.set.iter().any(|s| same(s, &column.column)));
            let read_new = before
                .iter()
                .any(|r| r.reads_new && provides(design, r, column));
            // Computed from the current row: the columns it reads must be known.
            if let Some((_, read)) = f
                .reads
                .iter()
                .find(|(c, _)| f.own(column) && same(c, &column.column))
            {
                return read.iter().find(|c| !current(c)).map(|c| {
                    format!("the new value of {column} is computed from the current {c}, which is neither bound by the statement nor read first")
                });
            }
            let unchanged = !f.own(column) && !f.relinks(&column.table) || f.own(column) && !set;
            (!(set || read_new || (unchanged && current(column))))
                .then(|| format!("the new value of {column} is neither set by the statement, read first, nor unchanged and known"))
        }
    }
}

/// (b), (c), (d), (f) for one write path.
fn write_path(
    schema: &Schema,
    design: &Design,
    p: &AccessPattern,
    w: &WritePath,
    out: &mut Vec<Violation>,
) {
    let Some(f) = Facts::of(schema, p, w) else {
        return;
    };
    let table = |name: &str| design.tables.iter().find(|t| t.name == name);
    let mut before: Vec<&ReadBeforeWrite> = Vec::new();
    for r in &w.read_before_write {
        match table(&r.table) {
            None => v(out, "b", format!(
                "write {}: reads {} first, which is not a table of the design (a read of the source database is not a write path)",
                w.pattern, r.table
            )),
            Some(t) => {
                let missing: Vec<&String> = r
                    .columns
                    .iter()
                    .filter(|c| !t.columns.iter().any(|dc| dc.name == **c))
                    .collect();
                if !missing.is_empty() {
                    v(out, "b", format!(
                        "write {}: the read before write asks {} for {}, which it does not have",
                        w.pattern,
                        t.name,
                        missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
                let whole = !r.many && !partition_pins_row(schema, t);
                addresses(&w.pattern, t, &r.cql, &r.binds, whole, "b", out);
                for b in &r.binds {
                    if let Some(why) = unresolved(design, &f, &before, None, &b.value) {
                        v(out, "b", format!("write {}: the read of {} by {}: {why}", w.pattern, t.name, b.column));
                    }
                }
            }
        }
        before.push(r);
    }
    for target in &w.targets {
        let Some(t) = table(&target.table) else {
            v(
                out,
                "c",
                format!(
                    "write {}: writes {}, which is not a table of the design",
                    w.pattern, target.table
                ),
            );
            continue;
        };
        let row = target.for_each.and_then(|i| w.read_before_write.get(i));
        if target.for_each.is_some() && row.is_none_or(|r| !r.many) {
            v(out, "c", format!("write {}: a statement on {} runs per row of a read that is not a many-row read", w.pattern, t.name));
        }
        // An UPDATE of static columns only addresses the partition.
        let statics_only = target.action == WriteAction::Update
            && target.binds.iter().all(|b| {
                t.partition_key.iter().any(|k| k.column == b.column)
                    || t.columns.iter().any(|c| c.name == b.column && c.is_static)
            });
        addresses(
            &w.pattern,
            t,
            &target.cql,
            &target.binds,
            !statics_only,
            "c",
            out,
        );
        for b in &target.binds {
            if let Some(why) = unresolved(design, &f, &before, row, &b.value) {
                v(
                    out,
                    "c",
                    format!("write {}: {} of {}: {why}", w.pattern, b.column, t.name),
                );
            }
        }
    }
    parents::check(design, &f.table.key(), w, out);
    if w.unsupported.is_none() {
        key_changes(design, &f, w, out);
        copies_maintained(design, &f, w, out);
    }
    semantics::check(design, p, f.table, w, out);
}

/// True when the partition key alone finds at most one row of the table's entity (it holds a
/// unique key of it).
fn partition_pins_row(schema: &Schema, t: &DesignTable) -> bool {
    let Some(entity) = schema.table(&t.entity) else {
        return false;
    };
    let part: Vec<&ColumnRef> = t
        .partition_key
        .iter()
        .filter_map(|k| t.columns.iter().find(|c| c.name == k.column))
        .filter_map(|c| c.source.as_ref())
        .collect();
    unique_keys(entity).iter().any(|k| {
        k.iter().all(|col| {
            part.iter()
                .any(|s| same(&s.table, &entity.key()) && same(&s.column, col))
        })
    })
}

/// The statement's bind markers match its binds, and they bind the partition key, and the
/// clustering columns too when `whole_key`.
fn addresses(
    pattern: &str,
    t: &DesignTable,
    cql: &str,
    binds: &[remodel_model::Bind],
    whole_key: bool,
    check: &str,
    out: &mut Vec<Violation>,
) {
    let markers = cql.matches('?').count();
    if markers != binds.len() {
        v(
            out,
            check,
            format!(
                "write {pattern}: `{cql}` has {markers} bind markers but {} binds",
                binds.len()
            ),
        );
    }
    let bound = |name: &str| binds.iter().any(|b| b.column == name);
    let part_ok = t
        .partition_key
        .iter()
        .all(|k| bound(&k.column) || k.constant.is_some());
    let rows_ok = !whole_key || t.clustering.iter().all(|k| bound(&k.column));
    if !part_ok || !rows_ok {
        v(
            out,
            check,
            format!(
                "write {pattern}: `{cql}` does not bind the {} key of {}",
                if part_ok {
                    "whole primary"
                } else {
                    "partition"
                },
                t.name
            ),
        );
    }
}

/// The source columns behind a table's key (bucket columns by the column they derive from).
fn key_sources(t: &DesignTable) -> Vec<ColumnRef> {
    let mut out = Vec::new();
    for k in t.partition_key.iter().chain(&t.clustering) {
        let name = k.derived_from.as_deref().unwrap_or(&k.column);
        if let Some(src) = t
            .columns
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.source.clone())
        {
            out.push(src);
        }
    }
    out
}

/// (r) A table whose source query leaves out the rows where a key column is NULL: every
/// statement binding that column runs only when the value it binds is not NULL (a NULL key
/// fails the statement, and the row is one the table does not hold).
fn null_key_guards(design: &Design, t: &DesignTable, out: &mut Vec<Violation>) {
    let q = &t.source;
    let left_out: Vec<&str> = t
        .partition_key
        .iter()
        .chain(&t.clustering)
        .map(|k| k.column.as_str())
        .filter(|name| {
            q.read_column(name)
                .is_some_and(|r| q.filters.contains(&SourceFilter::IsNotNull(r.clone())))
        })
        .collect();
    for w in &design.writes {
        for x in w.targets.iter().filter(|x| x.table == t.name) {
            for b in x
                .binds
                .iter()
                .filter(|b| left_out.contains(&b.column.as_str()))
            {
                if !x.guard.as_ref().is_some_and(|g| g.needs_not_null(&b.value)) {
                    v(
                        out,
                        "r",
                        format!(
                            "write {}: `{}` binds key column {} of {}, whose NULL rows the table leaves out, and runs whatever its value (a NULL key fails the statement): guard it `all_not_null`",
                            w.pattern, x.cql, b.column, t.name
                        ),
                    );
                }
            }
        }
    }
}

/// (d) An UPDATE that changes a key column of a table moves its rows: a DELETE by the current
/// key, guarded to run only when the key changed, and an INSERT of the new row.
fn key_changes(design: &Design, f: &Facts<'_>, w: &WritePath, out: &mut Vec<Violation>) {
    if f.kind != StatementKind::Update {
        return;
    }
    // A counter table's rows are groups, moved by −1 and +1, never deleted ([`counters`]).
    for t in design.tables.iter().filter(|t| t.counter.is_none()) {
        // A parent's value in the key changes when the stored row is linked to another parent.
        let stores_written = same(&t.entity, &f.table.key());
        let changed: Vec<ColumnRef> = key_sources(t)
            .into_iter()
            .filter(|c| {
                (f.own(c) && f.set.iter().any(|s| same(s, &c.column)))
                    || (stores_written && f.relinks(&c.table))
            })
            .collect();
        if changed.is_empty() {
            continue;
        }
        let on_t: Vec<_> = w.targets.iter().filter(|x| x.table == t.name).collect();
        let delete = on_t.iter().any(|x| {
            x.action == WriteAction::Delete
                && x.guard.as_ref().is_some_and(|g| {
                    g.conditions()
                        .iter()
                        .any(|c| matches!(c, Guard::KeyChanged { .. }))
                })
                && x.binds
                    .iter()
                    .all(|b| !matches!(b.value, BindValue::New { .. }))
        });
        let insert = on_t.iter().any(|x| x.action == WriteAction::Insert);
        if !delete || !insert {
            let names: Vec<String> = changed.iter().map(|c| c.to_string()).collect();
            v(
                out,
                "d",
                format!(
                    "write {}: it changes {} in the key of {}, but the path does not {}",
                    w.pattern,
                    names.join(", "),
                    t.name,
                    if delete {
                        "insert the moved row"
                    } else {
                        "delete the row at its current key (guarded: only when the key changed)"
                    }
                ),
            );
        }
    }
}

/// (f) Every table holding the written entity's rows (INSERT/DELETE) or a copy of a column the
/// UPDATE sets is written by the path.
fn copies_maintained(design: &Design, f: &Facts<'_>, w: &WritePath, out: &mut Vec<Violation>) {
    // A purge served by the TTL: the `ttl` check holds its tables to having one.
    let expire = |t: &str| {
        w.served_by_ttl
            .as_ref()
            .is_some_and(|by| by.tables.iter().any(|x| x == t))
    };
    for t in design.tables.iter().filter(|t| !expire(&t.name)) {
        let holds = |c: &remodel_model::DesignColumn| {
            c.source
                .as_ref()
                .is_some_and(|s| f.own(s) && f.written.iter().any(|x| same(x, &s.column)))
                || c.embeds.as_deref().is_some_and(|e| same(e, &f.table.key()))
        };
        let needs = match f.kind {
            StatementKind::Insert | StatementKind::Delete => {
                same(&t.entity, &f.table.key())
                    || t.columns
                        .iter()
                        .any(|c| c.embeds.as_deref().is_some_and(|e| same(e, &f.table.key())))
            }
            StatementKind::Update => t.columns.iter().any(holds),
            StatementKind::Select => false,
        };
        if needs && !w.targets.iter().any(|x| x.table == t.name) {
            v_table(out, "f", &t.name, format!(
                "write {}: {} holds {} data this statement changes, but the path does not write it (its copy would go stale)",
                w.pattern, t.name, f.table.key()
            ));
        }
    }
}
