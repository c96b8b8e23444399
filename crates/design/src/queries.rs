//! Query mapping: each read pattern → the CQL SELECT against the table that serves it, whether it
//! reads one partition, and why not when it does not. Never `ALLOW FILTERING`.

use crate::keys::{KeyPlan, KeySrc};
use crate::shape::{range_sql, Shape};
use crate::tables::TableBuild;
use remodel_model::ident::cql_quote;
use remodel_model::{
    AccessPattern, Bind, BindValue, Bucket, ColumnRef, EqualityOp, QueryMapping, ReadStep,
    SortOrder, Suggestion,
};

/// A parent read by key after the main table (kept by reference).
pub struct LookupRead<'a> {
    /// The parent table's design table.
    pub table: &'a TableBuild,
    /// The parent columns read.
    pub columns: &'a [ColumnRef],
    /// For each partition-key column of `table`, its value (a column of the rows read first,
    /// or a parameter).
    pub via: Vec<BindValue>,
    /// Why it is a reference.
    pub rationale: String,
}

fn bucket_name(b: Bucket) -> &'static str {
    match b {
        Bucket::Hour => "hour",
        Bucket::Day => "day",
        Bucket::Month => "month",
    }
}

/// The SELECT list: projected columns and CQL aggregates; notes for what runs on the client.
fn select_list(shape: &Shape, t: &TableBuild, notes: &mut Vec<String>) -> String {
    let mut items: Vec<String> = Vec::new();
    let agg_cols: Vec<_> = shape
        .aggregates
        .iter()
        .filter_map(|(_, c, _)| c.clone())
        .collect();
    for c in &shape.projection {
        if shape.lookups.iter().any(|l| l.columns.contains(c)) {
            continue;
        }
        if !shape.aggregates.is_empty() && agg_cols.contains(c) && !shape.group_by.contains(c) {
            continue;
        }
        if let Some(n) = t.col_name(c) {
            let q = cql_quote(n);
            if !items.contains(&q) {
                items.push(q);
            }
        }
    }
    // What the client needs besides: the columns of its filters and the keys of the reads
    // that follow (a parent kept by reference, a row looked up by key).
    let via = shape
        .lookups
        .iter()
        .flat_map(|l| &l.via)
        .filter_map(|v| match v {
            remodel_model::BindValue::Current { column } => Some(column),
            _ => None,
        });
    for c in shape.client_columns.iter().chain(via) {
        if let Some(n) = t.col_name(c) {
            let q = cql_quote(n);
            if !items.contains(&q) {
                items.push(q);
            }
        }
    }
    for (f, c, distinct) in &shape.aggregates {
        let col = c.as_ref().and_then(|c| t.col_name(c).map(cql_quote));
        let supported = matches!(f.as_str(), "count" | "min" | "max" | "sum" | "avg");
        match (supported && !distinct, col) {
            (true, Some(c)) => items.push(format!("{f}({c})")),
            (true, None) if f == "count" => items.push("count(*)".into()),
            (_, Some(c)) => {
                notes.push(format!(
                    "{f}({}{c}) is computed on the client",
                    if *distinct { "DISTINCT " } else { "" }
                ));
                if !items.contains(&c) {
                    items.push(c);
                }
            }
            _ => notes.push(format!("{f}(…) is computed on the client")),
        }
    }
    if items.is_empty() {
        "*".into()
    } else {
        items.join(", ")
    }
}

/// A CQL restriction with the value its bind marker takes.
struct Cond {
    sql: String,
    bind: Bind,
}

impl Cond {
    fn new(name: &str, op: &str, value: BindValue) -> Self {
        Cond {
            sql: format!("{} {op} ?", cql_quote(name)),
            bind: Bind {
                column: name.to_string(),
                value,
            },
        }
    }
}

fn sql(v: &str) -> BindValue {
    BindValue::Sql { sql: v.to_string() }
}

/// The WHERE restrictions the key serves, in CQL order (partition, clustering `=`/`IN`, range),
/// and the SQL predicates left to the client.
fn restrictions(
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    notes: &mut Vec<String>,
) -> (Vec<Cond>, Vec<String>) {
    let mut conds: Vec<Cond> = Vec::new();
    let mut client: Vec<String> = shape.client.clone();
    if key.partitions_read.is_none() {
        // A scan restricts nothing: every predicate is a client filter.
        for e in &shape.eq {
            let op = if e.op == EqualityOp::In { "IN" } else { "=" };
            client.push(format!("{} {op} {}", e.column, e.value));
        }
        if let Some((_, rp)) = &shape.range {
            client.push(range_sql(rp));
        }
    } else {
        let eq_of = |c: &ColumnRef| shape.eq.iter().find(|e| e.column == *c);
        let lower = shape
            .range
            .as_ref()
            .and_then(|(_, rp)| rp.lower.as_ref())
            .map(|b| b.value.clone());
        for k in &t.partition {
            let Some(name) = t.name_of(k) else { continue };
            match k {
                KeySrc::Col(c) => {
                    if let Some(e) = eq_of(c) {
                        let op = if e.op == EqualityOp::In { "IN" } else { "=" };
                        conds.push(Cond::new(name, op, sql(&e.value)));
                    }
                }
                KeySrc::Bucket(_, b) => conds.push(Cond::new(
                    name,
                    "=",
                    BindValue::Bucket {
                        bucket: *b,
                        of: Box::new(sql(lower.as_deref().unwrap_or("NULL"))),
                        time_zone: "UTC".into(),
                    },
                )),
                KeySrc::Const(v) => conds.push(Cond::new(
                    name,
                    "=",
                    BindValue::Const {
                        value: remodel_model::ident::literal(v),
                    },
                )),
                // A row id is a clustering column: never in a partition key.
                KeySrc::RowId(_) => {}
            }
        }
        for (c, _) in &key.clustering {
            if let (Some(e), Some(name)) = (eq_of(c), t.col_name(c)) {
                let op = if e.op == EqualityOp::In { "IN" } else { "=" };
                conds.push(Cond::new(name, op, sql(&e.value)));
            }
        }
        if let Some((rc, rp)) = &shape.range {
            match t.col_name(rc) {
                Some(name) if rp.prefix => {
                    let pattern = rp
                        .lower
                        .as_ref()
                        .map(|b| b.value.as_str())
                        .unwrap_or("NULL");
                    // `LIKE 'abc%'` = `>= 'abc' AND < 'abd'` (the prefix with its last character incremented).
                    let prefix = format!("left({pattern}, -1)");
                    conds.push(Cond::new(name, ">=", sql(&prefix)));
                    conds.push(Cond::new(
                        name,
                        "<",
                        sql(&format!(
                            "left({prefix}, -1) || chr(ascii(right({prefix}, 1)) + 1)"
                        )),
                    ));
                    notes.push(format!(
                        "LIKE prefix on {rc}: read as the range of strings with that prefix"
                    ));
                }
                Some(name) => {
                    if let Some(l) = &rp.lower {
                        conds.push(Cond::new(
                            name,
                            if l.inclusive { ">=" } else { ">" },
                            sql(&l.value),
                        ));
                    }
                    if let Some(u) = &rp.upper {
                        conds.push(Cond::new(
                            name,
                            if u.inclusive { "<=" } else { "<" },
                            sql(&u.value),
                        ));
                    }
                }
                None => client.push(range_sql(rp)),
            }
        }
    }
    for (_, rp) in &shape.extra_ranges {
        client.push(range_sql(rp));
    }
    for c in &shape.null_filter {
        if t.null_filter.contains(c) {
            notes.push(format!(
                "{c} IS NULL holds for every row of {} (the table keeps only those rows)",
                t.name
            ));
        } else {
            client.push(format!("{c} IS NULL"));
        }
    }
    (conds, client)
}

/// Maps a read pattern served by `t` (keys laid out by `key`).
pub fn map(
    keyspace: &str,
    p: &AccessPattern,
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    lookups: &[LookupRead<'_>],
    scan_rows: Option<(f64, &str)>,
) -> QueryMapping {
    let mut notes: Vec<String> = shape.notes.clone();
    notes.extend(key.notes.iter().cloned());
    let select = select_list(shape, t, &mut notes);
    let scan = key.partitions_read.is_none();
    let (conds, client_filters) = restrictions(shape, key, t, &mut notes);
    if !client_filters.is_empty() {
        notes.push(format!(
            "the client filters the rows read with {}",
            client_filters.join(" AND ")
        ));
    }
    let client_filter = !client_filters.is_empty();

    // ORDER BY only when it names a prefix of the clustering, all declared or all reversed.
    let order: Vec<(String, bool)> = shape
        .order
        .iter()
        .filter(|(c, _)| !t.partition.contains(&KeySrc::Col(c.clone())))
        .filter_map(|(c, d)| t.col_name(c).map(|n| (n.to_string(), *d)))
        .collect();
    let mut order_sql = String::new();
    if !order.is_empty() && !key.partition_in && !scan {
        // Clustering columns bound by `=` come first; the order names the ones after them.
        let skip = t
            .clustering
            .iter()
            .take_while(|(k, _)| {
                t.name_of(k).is_some_and(|n| {
                    conds
                        .iter()
                        .any(|c| c.bind.column == n && c.sql.ends_with(" = ?"))
                })
            })
            .count();
        let prefix_ok = skip + order.len() <= t.clustering.len()
            && order
                .iter()
                .enumerate()
                .all(|(i, (n, _))| t.name_of(&t.clustering[skip + i].0) == Some(n.as_str()));
        let rel: Vec<bool> = order
            .iter()
            .enumerate()
            .map(|(i, (_, d))| {
                t.clustering
                    .get(skip + i)
                    .is_some_and(|(_, o)| (*o == SortOrder::Desc) == *d)
            })
            .collect();
        if prefix_ok && (rel.iter().all(|x| *x) || rel.iter().all(|x| !*x)) {
            // The bound columns are named too, in the same relation to their declared order
            // (Cassandra before 4.0 requires them).
            let same = rel.first().copied().unwrap_or(true);
            let bound = t.clustering[..skip].iter().filter_map(|(k, o)| {
                let desc = (*o == SortOrder::Desc) == same;
                t.name_of(k).map(|n| (n.to_string(), desc))
            });
            let items: Vec<String> = bound
                .chain(order.iter().cloned())
                .map(|(n, d)| format!("{} {}", cql_quote(&n), if d { "DESC" } else { "ASC" }))
                .collect();
            order_sql = format!(" ORDER BY {}", items.join(", "));
        } else if !notes
            .iter()
            .any(|n| n.contains("sorted on the client") || n.contains("merged on the client"))
        {
            notes.push(
                "the requested order is not the clustering order: rows are sorted on the client"
                    .into(),
            );
        }
    } else if !order.is_empty() && key.partition_in {
        notes.push("several partitions are read: their rows are merged in the requested order on the client".into());
    }
    let group_sql = group_by(shape, key, t, &conds, &mut notes);
    let client_sort = key.client_sort
        || notes
            .iter()
            .any(|n| n.contains("sorted on the client") || n.contains("merged on the client"));
    let mut binds: Vec<Bind> = conds.iter().map(|c| c.bind.clone()).collect();
    // With an OFFSET the client skips the first rows itself: CQL reads LIMIT + OFFSET rows.
    let limit_value = p
        .analysis
        .limit_sql
        .clone()
        .or_else(|| p.analysis.limit.map(|l| l.to_string()))
        .map(|l| match &p.analysis.offset_sql {
            Some(o) => format!("{l} + {o}"),
            None => l,
        });
    let limit_sql = match limit_value {
        Some(l) if client_filter || client_sort || (!group_sql.is_empty() && scan) => {
            notes.push(format!(
                "LIMIT {l} is applied on the client, after filtering and sorting"
            ));
            String::new()
        }
        Some(l) => {
            binds.push(Bind {
                column: "limit".into(),
                value: sql(&l),
            });
            " LIMIT ?".to_string()
        }
        None => String::new(),
    };
    if let Some(o) = &p.analysis.offset_sql {
        notes.push(format!(
            "OFFSET {o} has no CQL equivalent: the client skips the first {o} rows read (or pages with the driver's paging state)"
        ));
    }
    let where_sql = if conds.is_empty() {
        String::new()
    } else {
        let parts: Vec<&str> = conds.iter().map(|c| c.sql.as_str()).collect();
        format!(" WHERE {}", parts.join(" AND "))
    };
    let cql = format!(
        "SELECT {select} FROM {}.{}{where_sql}{group_sql}{order_sql}{limit_sql}",
        cql_quote(keyspace),
        cql_quote(&t.name)
    );
    let reasons = not_single_reasons(key, t, lookups, scan_rows);
    let buckets = bucket_note(shape, key, t);
    let then = lookups.iter().map(|l| lookup_step(keyspace, l)).collect();
    let single = reasons.is_empty();
    QueryMapping {
        pattern: p.id.clone(),
        table: Some(t.name.clone()),
        cql: Some(cql),
        single_partition: single,
        reason: (!single).then(|| reasons.join("; ")),
        buckets,
        notes,
        binds,
        client_filters,
        then,
        ..Default::default()
    }
}

/// The read of a parent kept by reference, by the key each row read names.
fn lookup_step(keyspace: &str, l: &LookupRead<'_>) -> ReadStep {
    let t = l.table;
    let cols: Vec<String> = l
        .columns
        .iter()
        .filter_map(|c| t.col_name(c).map(cql_quote))
        .collect();
    let mut conds = Vec::new();
    let mut binds = Vec::new();
    for (k, via) in t.partition.iter().zip(&l.via) {
        let Some(name) = t.name_of(k) else { continue };
        conds.push(format!("{} = ?", cql_quote(name)));
        binds.push(Bind {
            column: name.to_string(),
            value: via.clone(),
        });
    }
    ReadStep {
        table: t.name.clone(),
        cql: format!(
            "SELECT {} FROM {}.{} WHERE {}",
            if cols.is_empty() {
                "*".to_string()
            } else {
                cols.join(", ")
            },
            cql_quote(keyspace),
            cql_quote(&t.name),
            conds.join(" AND ")
        ),
        binds,
        note: Some(format!("kept by reference: {}", l.rationale)),
    }
}

/// GROUP BY in CQL when it groups by a prefix of the key within one partition; else a note.
fn group_by(
    shape: &Shape,
    key: &KeyPlan,
    t: &TableBuild,
    conds: &[Cond],
    notes: &mut Vec<String>,
) -> String {
    if shape.group_by.is_empty() {
        return String::new();
    }
    let mut names = Vec::new();
    let mut all_keyed = true;
    for g in &shape.group_by {
        match t.col_name(g) {
            Some(n) => names.push(n.to_string()),
            None => all_keyed = false,
        }
    }
    let key_names: Vec<String> = t
        .key_elements()
        .iter()
        .filter_map(|k| t.name_of(k).map(str::to_string))
        .collect();
    let bound = names
        .iter()
        .filter(|n| conds.iter().any(|c| c.bind.column == **n))
        .count();
    if all_keyed && bound == names.len() {
        // Grouped by bound key columns only: the whole partition is one group.
        String::new()
    } else if all_keyed
        && key.partitions_read == Some(1)
        && names.len() <= key_names.len()
        && names.iter().zip(&key_names).all(|(a, b)| a == b)
    {
        let items: Vec<String> = names.iter().map(|n| cql_quote(n)).collect();
        format!(" GROUP BY {}", items.join(", "))
    } else {
        notes.push("GROUP BY is done on the client".into());
        String::new()
    }
}

/// Why a read is not one partition (empty when it is).
fn not_single_reasons(
    key: &KeyPlan,
    t: &TableBuild,
    lookups: &[LookupRead<'_>],
    scan_rows: Option<(f64, &str)>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    if key.partitions_read.is_none() {
        let size = match scan_rows {
            Some((rows, "statistics")) => {
                format!(", about {} rows", crate::sizing::human_count(rows))
            }
            Some((rows, _)) => format!(
                ", {} rows assumed without statistics",
                crate::sizing::human_count(rows)
            ),
            None => String::new(),
        };
        reasons.push(format!(
            "no equality predicate: reads every partition of {} (a full scan, paged{size}); fine for a small table, otherwise precompute the answer",
            t.name
        ));
    } else if key.partition_in {
        reasons.push("IN on the partition key: one partition per value, read as parallel single-partition queries".into());
    } else if let (Some((b, n)), Some(_)) = (key.bucket, key.partitions_read.filter(|n| *n > 1)) {
        reasons.push(format!(
            "the window spans {n} {} buckets: {n} single-partition reads",
            bucket_name(b)
        ));
    }
    for l in lookups {
        reasons.push(format!(
            "then reads {} by key from {} (kept by reference: {})",
            l.table.root, l.table.name, l.rationale
        ));
    }
    reasons
}

/// How the reader computes the bucket value(s) of a bucketed partition key.
fn bucket_note(shape: &Shape, key: &KeyPlan, t: &TableBuild) -> Option<String> {
    let (b, n) = key.bucket?;
    let (rc, _) = shape.range.as_ref()?;
    let bcol = t.partition.iter().find_map(|k| {
        if let KeySrc::Bucket(..) = k {
            t.name_of(k)
        } else {
            None
        }
    })?;
    Some(if n == 1 {
        format!(
            "{bcol} = the {} (UTC) of the lower bound of {}",
            bucket_name(b),
            rc.column
        )
    } else {
        format!(
            "{bcol} = each {} (UTC) from the lower bound of {} for {n} {}s",
            bucket_name(b),
            rc.column,
            bucket_name(b)
        )
    })
}

/// A counter or summary table for an aggregate that cannot be answered from one partition.
pub fn suggest(
    keyspace: &str,
    p: &AccessPattern,
    shape: &Shape,
    t: &TableBuild,
) -> Option<Suggestion> {
    if shape.aggregates.is_empty() {
        return None;
    }
    let groups: Vec<(String, String)> = shape
        .group_by
        .iter()
        .filter_map(|g| {
            let name = t.col_name(g)?;
            let ty = t
                .columns
                .iter()
                .find(|(_, n, ..)| n == name)
                .map(|(_, _, ty, _)| ty.clone())?;
            Some((name.to_string(), ty))
        })
        .collect();
    let counts_only = shape.aggregates.iter().all(|(f, _, d)| f == "count" && !d);
    let base = crate::naming::sanitize(&shape.root);
    let name = if groups.is_empty() {
        crate::naming::fit_length(&format!("{base}_totals"))
    } else {
        let w: Vec<String> = groups
            .iter()
            .map(|(n, _)| crate::naming::sanitize(n))
            .collect();
        crate::naming::fit_length(&format!("{base}_totals_by_{}", w.join("_")))
    };
    let value = if counts_only {
        "n counter"
    } else {
        "value decimal"
    };
    let mut cols = vec!["summary text".to_string()];
    cols.extend(
        groups
            .iter()
            .map(|(n, ty)| format!("{} {ty}", cql_quote(n))),
    );
    cols.push(value.to_string());
    let ck: Vec<String> = groups.iter().map(|(n, _)| cql_quote(n)).collect();
    let pk = if ck.is_empty() {
        "(summary)".to_string()
    } else {
        format!("(summary), {}", ck.join(", "))
    };
    let cql = format!(
        "CREATE TABLE IF NOT EXISTS {}.{} ({}, PRIMARY KEY ({pk}))",
        cql_quote(keyspace),
        cql_quote(&name),
        cols.join(", ")
    );
    let text = if counts_only {
        format!("keep the counts in {name}: increment on every insert into {} and decrement on delete; the read becomes one partition", shape.root)
    } else {
        format!("precompute the aggregate into {name} when {} changes (or on a schedule); the read becomes one partition", shape.root)
    };
    Some(Suggestion {
        pattern: p.id.clone(),
        text,
        cql: Some(cql),
    })
}
