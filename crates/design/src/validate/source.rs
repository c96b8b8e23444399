//! (p) Every table's source query can run: the tables it names are in the schema, every column it
//! reads is a column of the table its alias names, it returns exactly the table's columns, and
//! `source_sql` is its rendering (a hand edit of one without the other would make the backfill
//! read something the reviewer did not see).

use super::v;
use remodel_model::{
    DesignTable, Schema, SourceEdit, SourceFilter, SourceQuery, SourceRef, SourceSql, SourceValue,
    Violation,
};

/// Checks the source query of table `t`.
pub(super) fn source_query(schema: &Schema, t: &DesignTable, out: &mut Vec<Violation>) {
    let q = &t.source;
    let mut problems: Vec<String> = Vec::new();
    for table in q.tables() {
        if schema.table(table).is_none() {
            problems.push(format!(
                "it reads table `{table}`, which the schema does not hold"
            ));
        }
    }
    for r in refs(q) {
        match q.table_of(&r.alias) {
            None => problems.push(format!(
                "it names alias `{}`, which it does not define",
                r.alias
            )),
            Some(table) => {
                if schema
                    .table(table)
                    .is_some_and(|st| st.column(&r.column).is_none())
                {
                    problems.push(format!("it reads `{}`, which `{table}` lacks", r.column));
                }
            }
        }
    }
    for (table, column) in own_columns(q) {
        if schema
            .table(table)
            .is_some_and(|st| st.column(column).is_none())
        {
            problems.push(format!("it reads `{column}`, which `{table}` lacks"));
        }
    }
    let returned: Vec<&str> = q.columns.iter().map(|c| c.name.as_str()).collect();
    for c in &t.columns {
        if !returned.contains(&c.name.as_str()) {
            problems.push(format!("it returns no column `{}`", c.name));
        }
    }
    for name in &returned {
        if !t.columns.iter().any(|c| c.name == *name) {
            problems.push(format!(
                "it returns `{name}`, which the table does not hold"
            ));
        }
    }
    let rendered = SourceSql::new(schema, q).sql(&SourceEdit::default());
    if problems.is_empty() && rendered != t.source_sql {
        problems.push(format!(
            "its source_sql is not the rendering of its source (which is: {rendered})"
        ));
    }
    for p in problems {
        v(
            out,
            "p",
            format!("table {}: its source query cannot fill it: {p}", t.name),
        );
    }
}

/// Every column the query reads by an alias (collections' foreign keys included: their own
/// columns are read under the child's name, checked as the collection's table).
fn refs(q: &SourceQuery) -> Vec<&SourceRef> {
    let mut out: Vec<&SourceRef> = Vec::new();
    for j in &q.joins {
        out.extend(j.on.iter().map(|k| &k.equals));
    }
    for c in &q.columns {
        match &c.value {
            SourceValue::Column(r)
            | SourceValue::EpochMicros(r)
            | SourceValue::EpochMicrosNullLast(r)
            | SourceValue::Sum(r) => out.push(r),
            SourceValue::Bucket { column, .. }
            | SourceValue::Lookup { column, .. }
            | SourceValue::Encoded { column, .. } => out.push(column),
            SourceValue::Collection(coll) => out.extend(coll.on.iter().map(|k| &k.equals)),
            SourceValue::Constant { .. }
            | SourceValue::RowId
            | SourceValue::Null
            | SourceValue::Count => {}
        }
    }
    for f in &q.filters {
        match f {
            SourceFilter::IsNull(r) | SourceFilter::IsNotNull(r) => out.push(r),
        }
    }
    out
}

/// The columns the query reads of a joined or collected table by its name: (table, column).
fn own_columns(q: &SourceQuery) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for j in &q.joins {
        out.extend(j.on.iter().map(|k| (j.table.as_str(), k.column.as_str())));
    }
    for c in &q.columns {
        if let SourceValue::Collection(coll) = &c.value {
            let t = coll.table.as_str();
            out.extend(coll.on.iter().map(|k| (t, k.column.as_str())));
            out.extend(coll.map_key.iter().map(|k| (t, k.as_str())));
            out.extend(
                coll.fields
                    .iter()
                    .chain(&coll.order)
                    .map(|f| (t, f.as_str())),
            );
        }
    }
    out
}
