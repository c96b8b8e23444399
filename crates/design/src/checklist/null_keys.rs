//! Key columns whose source may be NULL. A CQL key cannot hold NULL. When every read a table
//! serves puts a condition on the column (`=`, `IN`, a range: none is true of NULL), a row whose
//! value is NULL is a row none of them returns: the table leaves it out, exactly — its source
//! query keeps `IS NOT NULL` rows, and each statement binding the column runs only when the value
//! it binds is not NULL (`all_not_null`), where the application's write would otherwise fail.
//! When a read needs such rows (a listing ordered by the column), or another step reads the
//! table (a read before write, a lookup: it would miss the row), the rows cannot be stored and a
//! `nullable_key` warning says so.

use remodel_model::source::{SourceFilter, SourceSql};
use remodel_model::{
    BindValue, ColumnRef, Design, DesignTable, Guard, Schema, SourceEdit, Statistics, Warning,
    Workload,
};
use std::collections::BTreeSet;

/// Leaves out the rows with a NULL key where no read needs them, and warns where one would.
pub fn apply(d: &mut Design, schema: &Schema, workload: &Workload, stats: Option<&Statistics>) {
    let read_by_steps = read_by_steps(d);
    for ti in 0..d.tables.len() {
        let t = &d.tables[ti];
        let nullable = nullable_keys(schema, t);
        if nullable.is_empty() {
            continue;
        }
        let reads: Vec<&remodel_model::PatternAnalysis> = d
            .queries
            .iter()
            .filter(|q| q.table.as_deref() == Some(t.name.as_str()))
            .filter_map(|q| workload.pattern(&q.pattern).map(|p| &p.analysis))
            .collect();
        let stepped = read_by_steps.contains(&t.name);
        let (left_out, kept): (Vec<_>, Vec<_>) = nullable.into_iter().partition(|(name, c)| {
            let in_partition = t.partition_key.iter().any(|k| &k.column == name);
            let lineage = lineage(t, name, c);
            !stepped
                && (in_partition
                    || reads
                        .iter()
                        .all(|a| a.excludes_null(|c| lineage.contains(c))))
        });
        if !left_out.is_empty() {
            leave_out(d, ti, schema, &left_out);
        }
        if !kept.is_empty() {
            let w = warning(stats, &kept);
            d.tables[ti].warnings.push(w);
        }
    }
}

/// Tables read other than as a read's own table: by a read before write or a read's lookup.
fn read_by_steps(d: &Design) -> BTreeSet<String> {
    let rbw = d
        .writes
        .iter()
        .flat_map(|w| &w.read_before_write)
        .map(|r| r.table.as_str());
    let steps = d
        .queries
        .iter()
        .flat_map(|q| &q.then)
        .map(|s| s.table.as_str());
    rbw.chain(steps).map(str::to_string).collect()
}

/// Each key column (partition and clustering) that may be NULL, with the source column it is
/// read from: a nullable column, or any column of a table joined by a LEFT JOIN (a row without
/// that parent gets NULL).
fn nullable_keys(schema: &Schema, t: &DesignTable) -> Vec<(String, ColumnRef)> {
    let q = &t.source;
    let mut out = Vec::new();
    for k in t.partition_key.iter().chain(&t.clustering) {
        // A NULL stored as a bigint is a value the key can hold.
        if k.encoding.is_some_and(|e| e.stores_null()) {
            continue;
        }
        let Some(r) = q.read_column(&k.column) else {
            continue;
        };
        let Some(table) = q.table_of(&r.alias) else {
            continue;
        };
        let outer = q.joins.iter().any(|j| j.alias == r.alias && j.outer);
        let nullable = schema
            .table(table)
            .and_then(|st| st.column(&r.column))
            .is_none_or(|col| col.nullable);
        if outer || nullable {
            out.push((k.column.clone(), ColumnRef::new(table, &r.column)));
        }
    }
    out
}

/// The source columns equal to key column `name`: its source and the columns the plan states
/// equal to it (a parent's key and the child's foreign key).
fn lineage(t: &DesignTable, name: &str, source: &ColumnRef) -> Vec<ColumnRef> {
    let mut out = vec![source.clone()];
    if let Some(c) = t.columns.iter().find(|c| c.name == name) {
        out.extend(c.source.iter().chain(&c.equals).cloned());
    }
    out
}

/// Table `ti` keeps only rows where each of `columns` is not NULL: its source query filters
/// them, every statement binding them is guarded, and the reviewer is told.
fn leave_out(d: &mut Design, ti: usize, schema: &Schema, columns: &[(String, ColumnRef)]) {
    let t = &mut d.tables[ti];
    for (name, _) in columns {
        let Some(r) = t.source.read_column(name) else {
            continue;
        };
        let f = SourceFilter::IsNotNull(r.clone());
        if !t.source.filters.contains(&f) {
            t.source.filters.push(f);
        }
    }
    t.source_sql = SourceSql::new(schema, &t.source).sql(&SourceEdit::default());
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    let sources: Vec<String> = columns.iter().map(|(_, c)| c.to_string()).collect();
    if t.counter.is_none() {
        t.warnings.push(Warning {
            code: "null_key_rows_left_out".into(),
            message: format!(
                "rows whose {} is NULL are not stored here: every read served here asks for a value of it, which NULL never is (SQL returns them to none); the backfill leaves them out and each write skips them",
                sources.join(", ")
            ),
        });
    }
    let table = t.name.clone();
    for w in &mut d.writes {
        for x in w.targets.iter_mut().filter(|x| x.table == table) {
            let mut values: Vec<BindValue> = Vec::new();
            for b in x
                .binds
                .iter()
                .filter(|b| names.contains(&b.column.as_str()))
            {
                if !values.contains(&b.value) {
                    values.push(b.value.clone());
                }
            }
            if !values.is_empty() {
                x.guard = Some(Guard::and(x.guard.take(), Guard::AllNotNull { values }));
            }
        }
    }
}

/// The `nullable_key` warning for key columns whose NULL rows a read needs, with the share of
/// NULLs when statistics give it.
fn warning(stats: Option<&Statistics>, columns: &[(String, ColumnRef)]) -> Warning {
    let names: Vec<String> = columns
        .iter()
        .map(|(_, c)| {
            let frac = stats
                .and_then(|s| s.table(&c.table))
                .and_then(|ts| ts.column(&c.column))
                .and_then(|cs| cs.null_frac);
            match frac {
                Some(f) => format!("{c} (NULL in {:.1}% of rows)", f * 100.0),
                None => c.to_string(),
            }
        })
        .collect();
    Warning {
        code: "nullable_key".into(),
        message: format!(
            "key column source {} may be NULL: such rows cannot be stored here (the backfill writes them to its rejects file, an application write fails); declare it NOT NULL if it never is; otherwise a read served here that SQL would answer with such a row misses it",
            names.join(", ")
        ),
    }
}
