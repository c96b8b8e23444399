//! Write paths: each INSERT/UPDATE/DELETE → the statements it fans out to, the values it must read
//! first (read-before-write) and whether the fan-out fits one batch under the 5 KiB warning.

use crate::keys::KeySrc;
use crate::naming::quote;
use crate::sizing::Sizer;
use crate::tables::TableBuild;
use remodel_model::{
    AccessPattern, ColumnRef, ReadBeforeWrite, Schema, StatementKind, WritePath, WriteTarget,
};

/// A lookup the write needs that no table provides: (source table, columns it is found by).
pub type Missing = (String, Vec<String>);

/// Finds a table holding whole `root` rows, partitioned only by columns the statement knows.
pub fn finder(tables: &[TableBuild], root: &str, known: &[String]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, t) in tables.iter().enumerate() {
        if t.root != root
            || !t.null_filter.is_empty()
            || !t.extra_keys.is_empty()
            || t.partition.is_empty()
        {
            continue;
        }
        let ok = t.partition.iter().all(|k| matches!(k, KeySrc::Col(c) if c.table == root && known.iter().any(|x| x.eq_ignore_ascii_case(&c.column))));
        if ok {
            // Prefer the table whose rows are identified by the most known columns (fewest rows to read).
            let score = t.partition.len() * 100 + t.key_elements().iter().filter(|k| matches!(k, KeySrc::Col(c) if known.iter().any(|x| x.eq_ignore_ascii_case(&c.column)))).count();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((i, score));
            }
        }
    }
    best.map(|(i, _)| i)
}

fn where_key(t: &TableBuild, elems: &[KeySrc]) -> String {
    elems
        .iter()
        .filter_map(|k| t.name_of(k))
        .map(|n| format!("{} = ?", quote(n)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

struct Rbw {
    table: String,
    columns: Vec<String>,
    for_tables: Vec<String>,
    note: Option<String>,
}

fn add_rbw(
    list: &mut Vec<Rbw>,
    table: &str,
    cols: &[String],
    for_table: &str,
    note: Option<String>,
) {
    let entry = match list.iter_mut().position(|r| r.table == table) {
        Some(i) => &mut list[i],
        None => {
            list.push(Rbw {
                table: table.to_string(),
                columns: Vec::new(),
                for_tables: Vec::new(),
                note,
            });
            let last = list.len() - 1;
            &mut list[last]
        }
    };
    for c in cols {
        if !entry.columns.contains(c) {
            entry.columns.push(c.clone());
        }
    }
    if !entry.for_tables.iter().any(|t| t == for_table) {
        entry.for_tables.push(for_table.to_string());
    }
}

/// Records reading `cols` of every `t.root` row that copies the written `tname` row: from the
/// table that lists those rows by `by`, else from the source with `fallback` as the note.
fn read_copiers(
    rbw: &mut Vec<Rbw>,
    tables: &[TableBuild],
    t: &TableBuild,
    tname: &str,
    by: &[String],
    cols: &[String],
    fallback: String,
) {
    match finder(tables, &t.root, by) {
        Some(i) if !by.is_empty() => add_rbw(
            rbw,
            &tables[i].name,
            cols,
            &t.name,
            Some(format!("every {} row that copies the {tname} row", t.root)),
        ),
        _ => add_rbw(
            rbw,
            &format!("postgres:{}", t.root),
            cols,
            &t.name,
            Some(fallback),
        ),
    }
}

/// The INSERT of a whole row of `t` (every column bound), the second half of moving a row.
fn insert_whole_row(ks: &str, t: &TableBuild) -> String {
    let all: Vec<String> = t.columns.iter().map(|(_, n, ..)| n.clone()).collect();
    insert_cql(ks, t, &all)
}

/// A DELETE of the rows of `t` that `where_key` selects.
fn delete_cql(ks: &str, t: &TableBuild, where_key: &str) -> String {
    format!("DELETE FROM {ks}.{} WHERE {where_key}", quote(&t.name))
}

/// An UPDATE of `cols` of `t` in the rows `where_key` selects.
pub(crate) fn update_cql(ks: &str, t: &TableBuild, cols: &[String], where_key: &str) -> String {
    let sets: Vec<String> = cols.iter().map(|c| format!("{} = ?", quote(c))).collect();
    format!(
        "UPDATE {ks}.{} SET {} WHERE {where_key}",
        quote(&t.name),
        sets.join(", ")
    )
}

/// An INSERT into `t` binding `cols`.
fn insert_cql(ks: &str, t: &TableBuild, cols: &[String]) -> String {
    let names: Vec<String> = cols.iter().map(|c| quote(c)).collect();
    let marks = vec!["?"; names.len()].join(", ");
    format!(
        "INSERT INTO {ks}.{} ({}) VALUES ({marks})",
        quote(&t.name),
        names.join(", ")
    )
}

/// Plans one write pattern over the finished, named tables; also returns lookups no table provides.
pub fn plan(
    schema: &Schema,
    keyspace: &str,
    p: &AccessPattern,
    tables: &[TableBuild],
    sizer: &Sizer<'_>,
) -> (WritePath, Vec<Missing>) {
    let mut path = WritePath {
        pattern: p.id.clone(),
        targets: Vec::new(),
        read_before_write: Vec::new(),
        batch_bytes: 0,
        fits_batch: true,
        note: None,
    };
    let mut missing_lookups: Vec<Missing> = Vec::new();
    let Some(w) = &p.analysis.write else {
        path.note = Some(p.analysis.unmodeled.clone().map_or_else(
            || "the analyzer found no write target for this statement".to_string(),
            |u| format!("not modelled by the analyzer: {u}"),
        ));
        return (path, missing_lookups);
    };
    let Some(st) = schema.table(&w.table) else {
        path.note = Some(format!("writes `{}`, which is not in the schema", w.table));
        return (path, missing_lookups);
    };
    let tname = st.name.clone();
    let norm = |cols: &[String]| -> Vec<String> {
        cols.iter()
            .filter_map(|c| st.column(c).map(|cc| cc.name.clone()))
            .collect()
    };
    let written = norm(&w.columns_written);
    let keycols = norm(&w.key_columns);
    let mut known: Vec<String> = keycols.clone();
    for c in &written {
        if !known.contains(c) {
            known.push(c.clone());
        }
    }
    let is_known = |k: &KeySrc, set: &[String]| {
        k.source().table == tname && set.iter().any(|x| x == &k.source().column)
    };
    let mut notes: Vec<String> = Vec::new();
    let mut rbw: Vec<Rbw> = Vec::new();
    let mut bytes = 0.0;
    let ks = quote(keyspace);
    let mut push =
        |path: &mut WritePath, t: &TableBuild, cql: String, cols: Option<Vec<String>>| {
            bytes += sizer.row_bytes(t, cols.as_deref()) + 16.0;
            path.targets.push(WriteTarget {
                table: t.name.clone(),
                cql,
            });
        };
    // Reads the missing values of `t` from a table that finds rows by the statement's key columns.
    let need = |rbw: &mut Vec<Rbw>,
                missing_lookups: &mut Vec<Missing>,
                t: &TableBuild,
                cols: Vec<String>,
                by: &[String]| {
        if cols.is_empty() {
            return;
        }
        match finder(tables, &tname, by) {
            Some(i) if tables[i].name != t.name => {
                add_rbw(rbw, &tables[i].name, &cols, &t.name, None)
            }
            Some(_) => {}
            None => {
                missing_lookups.push((tname.clone(), by.to_vec()));
                add_rbw(
                    rbw,
                    &format!("postgres:{tname}"),
                    &cols,
                    &t.name,
                    Some(format!("no table finds {tname} rows by ({}): read the values from the source or add a lookup table", by.join(", "))),
                );
            }
        }
    };

    // `SET n = n + 1` needs the old value: read it first (or keep it in a counter table).
    let rmw: Vec<String> = if p.kind == StatementKind::Update {
        remodel_analyze::assignments::self_referencing_sets(&p.sql)
            .into_iter()
            .filter_map(|c| st.column(&c).map(|cc| cc.name.clone()))
            .collect()
    } else {
        Vec::new()
    };
    if !rmw.is_empty() {
        let holder = finder(tables, &tname, &keycols);
        if let Some(i) = holder {
            let names: Vec<String> = rmw
                .iter()
                .filter_map(|c| {
                    tables[i]
                        .col_name(&ColumnRef::new(&tname, c))
                        .map(str::to_string)
                })
                .collect();
            let first_target = tables
                .iter()
                .find(|t| t.root == tname)
                .map(|t| t.name.clone())
                .unwrap_or_default();
            add_rbw(
                &mut rbw,
                &tables[i].name,
                &names,
                &first_target,
                Some("the current value, for SET col = col ± …".into()),
            );
        }
        notes.push(format!(
            "SET {} from the old value is a read-modify-write in Cassandra: read it first and write with IF {} = <old> (a lightweight transaction) when updates race, or keep a counter table when it only counts",
            rmw.join(", "),
            rmw.first().map(String::as_str).unwrap_or_default()
        ));
    }
    for t in tables {
        let keys = t.key_elements();
        if t.root == tname {
            match p.kind {
                StatementKind::Insert => {
                    if !t.null_filter.is_empty() {
                        let names: Vec<String> =
                            t.null_filter.iter().map(|c| c.to_string()).collect();
                        notes.push(format!(
                            "insert into {} only rows where {} IS NULL",
                            t.name,
                            names.join(", ")
                        ));
                    }
                    // Key columns always: a value Postgres would generate must come from the application.
                    let mut cols = Vec::new();
                    for (i, (k, n, ..)) in t.columns.iter().enumerate() {
                        if i < keys.len()
                            || k.source().table != tname
                            || written.contains(&k.source().column)
                        {
                            cols.push(n.clone());
                        }
                    }
                    for k in &keys {
                        if k.source().table == tname && !written.contains(&k.source().column) {
                            let generated = st
                                .column(&k.source().column)
                                .is_some_and(|c| c.identity.is_some() || c.default.is_some());
                            let msg = if generated {
                                format!("{}.{} is a key of {} but generated by Postgres (default/serial): the application must supply it (for example a uuid)", tname, k.source().column, t.name)
                            } else {
                                format!(
                                    "{}.{} is a key of {} but the INSERT does not set it",
                                    tname,
                                    k.source().column,
                                    t.name
                                )
                            };
                            if !notes.contains(&msg) {
                                notes.push(msg);
                            }
                        }
                    }
                    // Embedded parent columns are read from the parent's table first.
                    let mut parents: Vec<String> = Vec::new();
                    for (k, ..) in &t.columns {
                        let pt = &k.source().table;
                        if *pt != tname && !parents.contains(pt) {
                            parents.push(pt.clone());
                        }
                    }
                    for pt in parents {
                        let cols_p: Vec<String> = t
                            .columns
                            .iter()
                            .filter(|(k, ..)| k.source().table == pt)
                            .map(|(_, n, ..)| n.clone())
                            .collect();
                        let pkey = schema
                            .table(&pt)
                            .map(|x| x.primary_key.clone())
                            .unwrap_or_default();
                        match finder(tables, &pt, &pkey) {
                            Some(i) => add_rbw(
                                &mut rbw,
                                &tables[i].name,
                                &cols_p,
                                &t.name,
                                Some(format!("copied from {pt}")),
                            ),
                            None => {
                                missing_lookups.push((pt.clone(), pkey.clone()));
                                add_rbw(
                                    &mut rbw,
                                    &format!("postgres:{pt}"),
                                    &cols_p,
                                    &t.name,
                                    Some(format!("copied from {pt}; no table finds it by key")),
                                );
                            }
                        }
                    }
                    let cql = insert_cql(&ks, t, &cols);
                    push(&mut path, t, cql, Some(cols));
                }
                StatementKind::Update | StatementKind::Delete => {
                    let key_change = p.kind == StatementKind::Update
                        && keys.iter().any(|k| is_known(k, &written));
                    let set_cols: Vec<String> = t
                        .columns
                        .iter()
                        .skip(keys.len())
                        .filter(|(k, ..)| matches!(k, KeySrc::Col(c) if c.table == tname && written.contains(&c.column)))
                        .map(|(_, n, ..)| n.clone())
                        .collect();
                    if p.kind == StatementKind::Update && set_cols.is_empty() && !key_change {
                        continue;
                    }
                    let missing: Vec<String> = keys
                        .iter()
                        .filter(|k| !is_known(k, &keycols))
                        .filter_map(|k| match k {
                            KeySrc::Col(c) => t.col_name(c).map(str::to_string),
                            KeySrc::Bucket(c, _) => Some(
                                t.col_name(c)
                                    .map(str::to_string)
                                    .unwrap_or_else(|| c.column.clone()),
                            ),
                        })
                        .collect();
                    let mut missing_dedup: Vec<String> = Vec::new();
                    for m in missing {
                        if !missing_dedup.contains(&m) {
                            missing_dedup.push(m);
                        }
                    }
                    let wk = where_key(t, &keys);
                    // Setting a column the table is filtered on (`IS NULL`) moves the row out of it.
                    let leaves: Vec<&ColumnRef> = t
                        .null_filter
                        .iter()
                        .filter(|c| {
                            p.kind == StatementKind::Update
                                && c.table == tname
                                && written.contains(&c.column)
                        })
                        .collect();
                    if !leaves.is_empty() && !key_change {
                        need(&mut rbw, &mut missing_lookups, t, missing_dedup, &keycols);
                        push(&mut path, t, delete_cql(&ks, t, &wk), Some(Vec::new()));
                        let names: Vec<String> = leaves.iter().map(|c| c.column.clone()).collect();
                        notes.push(format!(
                            "{} keeps only rows where {} IS NULL: a non-NULL value removes the row (DELETE, shown); a NULL value puts it back (INSERT of the whole row)",
                            t.name,
                            names.join(", ")
                        ));
                        continue;
                    }
                    if key_change {
                        let all: Vec<String> = t
                            .columns
                            .iter()
                            .map(|(_, n, ..)| n.clone())
                            .filter(|n| !known.contains(n))
                            .collect();
                        need(&mut rbw, &mut missing_lookups, t, all, &keycols);
                        push(&mut path, t, delete_cql(&ks, t, &wk), Some(Vec::new()));
                        push(&mut path, t, insert_whole_row(&ks, t), None);
                        notes.push(format!("the UPDATE changes a key column of {}: the row moves (DELETE + INSERT)", t.name));
                    } else {
                        need(&mut rbw, &mut missing_lookups, t, missing_dedup, &keycols);
                        let cql = if p.kind == StatementKind::Update {
                            update_cql(&ks, t, &set_cols, &wk)
                        } else {
                            delete_cql(&ks, t, &wk)
                        };
                        push(&mut path, t, cql, Some(set_cols));
                    }
                }
                StatementKind::Select => {}
            }
        } else if matches!(p.kind, StatementKind::Update | StatementKind::Delete) {
            // The written table is a parent whose columns are copied into this table.
            let copies: Vec<String> = t
                .columns
                .iter()
                .filter(|(k, ..)| {
                    matches!(k, KeySrc::Col(c) if c.table == tname && (p.kind == StatementKind::Delete || written.contains(&c.column)))
                })
                .map(|(_, n, ..)| n.clone())
                .collect();
            if copies.is_empty() {
                continue;
            }
            if p.kind == StatementKind::Delete {
                notes.push(format!("{} keeps copies of the deleted {tname} row's columns until its own rows are removed", t.name));
                continue;
            }
            let edge = t
                .edges
                .iter()
                .find(|e| e.directed && e.child == t.root && e.parent == tname);
            let by: Vec<String> = edge.map(|e| e.child_cols.clone()).unwrap_or_default();
            let key_names: Vec<String> = keys
                .iter()
                .filter_map(|k| t.name_of(k).map(str::to_string))
                .collect();
            if copies.iter().any(|c| key_names.contains(c)) {
                // A copied column is part of the key: each copying row moves (DELETE + INSERT).
                notes.push(format!(
                    "a copied {tname} column is part of {}'s key: each row that copies the {tname} row moves (DELETE + INSERT)",
                    t.name
                ));
                let all: Vec<String> = t.columns.iter().map(|(_, n, ..)| n.clone()).collect();
                read_copiers(
                    &mut rbw,
                    tables,
                    t,
                    &tname,
                    &by,
                    &all,
                    format!(
                        "no table lists the {} rows of a {tname}: read them from the source",
                        t.root
                    ),
                );
                let wk = where_key(t, &keys);
                push(&mut path, t, delete_cql(&ks, t, &wk), Some(Vec::new()));
                push(&mut path, t, insert_whole_row(&ks, t), None);
                continue;
            }
            let static_case = edge.is_some_and(|e| {
                t.partition.len() == e.child_cols.len()
                    && t.partition.iter().all(|k| matches!(k, KeySrc::Col(c) if c.table == t.root && e.child_cols.iter().any(|x| x.eq_ignore_ascii_case(&c.column))))
                    && e.parent_cols.iter().all(|pc| keycols.iter().any(|k| k.eq_ignore_ascii_case(pc)))
            });
            let wk = if static_case {
                where_key(t, &t.partition)
            } else {
                read_copiers(
                    &mut rbw,
                    tables,
                    t,
                    &tname,
                    &by,
                    &key_names,
                    format!("no table lists the {} rows of a {tname}: read their keys from the source, or accept stale copies", t.root),
                );
                notes.push(format!(
                    "one UPDATE of {} per {} row that copies the {tname} row",
                    t.name, t.root
                ));
                where_key(t, &keys)
            };
            push(&mut path, t, update_cql(&ks, t, &copies, &wk), Some(copies));
        }
    }
    if matches!(p.kind, StatementKind::Update | StatementKind::Delete)
        && !w.by_primary_key
        && !path.targets.is_empty()
    {
        notes.push(format!(
            "rows are chosen by ({}), not by the primary key of {tname}: find their keys first (from the source or a table keyed by those columns); each is then one keyed CQL write",
            if keycols.is_empty() { "a non-equality predicate".to_string() } else { keycols.join(", ") }
        ));
    }
    if path.targets.is_empty() {
        notes.push(format!("no designed table holds {tname} data this statement changes: nothing to write in Cassandra"));
    } else if path.targets.len() > 1 {
        notes.push(format!(
            "{} statements over {} tables: send them as one logged batch so the copies stay in step",
            path.targets.len(),
            path.targets.iter().map(|t| &t.table).collect::<std::collections::BTreeSet<_>>().len()
        ));
    }
    path.batch_bytes = bytes.round() as u64;
    path.fits_batch = path.batch_bytes <= sizer.config.thresholds.batch_warn_bytes;
    if !path.fits_batch {
        notes.push(format!(
            "the batch is about {} B, over the {} B warning: send the statements separately",
            path.batch_bytes, sizer.config.thresholds.batch_warn_bytes
        ));
    }
    path.read_before_write = rbw
        .into_iter()
        .map(|r| ReadBeforeWrite {
            table: r.table,
            columns: r.columns,
            for_tables: r.for_tables,
            note: r.note,
        })
        .collect();
    path.note = (!notes.is_empty()).then(|| notes.join("; "));
    (path, missing_lookups)
}
