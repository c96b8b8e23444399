//! Query mapping: each read pattern → the CQL SELECT against the table that serves it, whether it
//! reads one partition, and why not when it does not. Never `ALLOW FILTERING`.

use crate::keys::{KeyPlan, KeySrc};
use crate::naming::quote;
use crate::shape::Shape;
use crate::tables::TableBuild;
use remodel_model::{AccessPattern, Bucket, EqualityOp, QueryMapping, SortOrder, Suggestion};

/// A parent read by key after the main table (kept by reference).
pub struct LookupRead<'a> {
    /// The parent table's design table.
    pub table: &'a TableBuild,
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
            let q = quote(n);
            if !items.contains(&q) {
                items.push(q);
            }
        }
    }
    for (f, c, distinct) in &shape.aggregates {
        let col = c.as_ref().and_then(|c| t.col_name(c).map(quote));
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
    let mut conds: Vec<String> = Vec::new();
    // A scan (no partition key restricted) restricts nothing: any predicate is a client filter.
    let scan = key.partitions_read.is_none();
    let mut client_filter = !shape.extra_ranges.is_empty();
    if scan {
        for (c, _) in &shape.eq {
            notes.push(format!("{c} = ? is filtered on the client"));
            client_filter = true;
        }
        if let Some((rc, _)) = &shape.range {
            notes.push(format!("the range on {rc} is filtered on the client"));
            client_filter = true;
        }
    } else {
        for k in &t.partition {
            let Some(name) = t.name_of(k) else { continue };
            let op = match k {
                KeySrc::Col(c)
                    if shape
                        .eq
                        .iter()
                        .any(|(x, op)| x == c && *op == EqualityOp::In) =>
                {
                    "IN ?"
                }
                _ => "= ?",
            };
            conds.push(format!("{} {op}", quote(name)));
        }
        for (c, _) in &key.clustering {
            if let Some((_, op)) = shape.eq.iter().find(|(x, _)| x == c) {
                if let Some(name) = t.col_name(c) {
                    conds.push(format!(
                        "{} {}",
                        quote(name),
                        if *op == EqualityOp::In { "IN ?" } else { "= ?" }
                    ));
                }
            }
        }
        if let Some((rc, rp)) = &shape.range {
            if let Some(name) = t.col_name(rc) {
                let n = quote(name);
                if rp.prefix {
                    conds.push(format!("{n} >= ?"));
                    conds.push(format!("{n} < ?"));
                    notes.push(format!(
                        "LIKE prefix on {rc}: bind the prefix and the prefix with its last character incremented"
                    ));
                } else {
                    if let Some(l) = &rp.lower {
                        conds.push(format!("{n} {} ?", if l.inclusive { ">=" } else { ">" }));
                    }
                    if let Some(u) = &rp.upper {
                        conds.push(format!("{n} {} ?", if u.inclusive { "<=" } else { "<" }));
                    }
                }
            }
        }
    }
    for c in &shape.extra_ranges {
        if !notes.iter().any(|n| n.contains(&c.to_string())) {
            notes.push(format!("range on {c} is filtered on the client"));
        }
    }
    for c in &shape.null_filter {
        if t.null_filter.contains(c) {
            notes.push(format!(
                "{c} IS NULL holds for every row of {} (the table keeps only those rows)",
                t.name
            ));
        } else {
            notes.push(format!("{c} IS NULL is filtered on the client"));
            client_filter = true;
        }
    }

    // ORDER BY only when it names a prefix of the clustering, all declared or all reversed.
    let order: Vec<(String, bool)> = shape
        .order
        .iter()
        .filter(|(c, _)| !t.partition.contains(&KeySrc::Col(c.clone())))
        .filter_map(|(c, d)| t.col_name(c).map(|n| (n.to_string(), *d)))
        .collect();
    let mut order_sql = String::new();
    if !order.is_empty() && !key.partition_in && key.partitions_read.is_some() {
        let prefix_ok = order.len() <= t.clustering.len()
            && order
                .iter()
                .enumerate()
                .all(|(i, (n, _))| t.name_of(&t.clustering[i].0) == Some(n.as_str()));
        let rel: Vec<bool> = order
            .iter()
            .enumerate()
            .map(|(i, (_, d))| {
                t.clustering
                    .get(i)
                    .is_some_and(|(_, o)| (*o == SortOrder::Desc) == *d)
            })
            .collect();
        if prefix_ok && (rel.iter().all(|x| *x) || rel.iter().all(|x| !*x)) {
            let items: Vec<String> = order
                .iter()
                .map(|(n, d)| format!("{} {}", quote(n), if *d { "DESC" } else { "ASC" }))
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
    let group: Vec<&remodel_model::ColumnRef> = shape.group_by.iter().collect();
    let mut group_sql = String::new();
    if !group.is_empty() {
        let mut names = Vec::new();
        let mut all_keyed = true;
        for g in &group {
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
        let bound: Vec<&String> = names
            .iter()
            .filter(|n| {
                conds
                    .iter()
                    .any(|c| c.starts_with(&format!("{} ", quote(n))))
            })
            .collect();
        if all_keyed && bound.len() == names.len() {
            // Grouped by bound key columns only: the whole partition is one group.
        } else if all_keyed
            && key.partitions_read == Some(1)
            && names.len() <= key_names.len()
            && names.iter().zip(&key_names).all(|(a, b)| a == b)
        {
            let items: Vec<String> = names.iter().map(|n| quote(n)).collect();
            group_sql = format!(" GROUP BY {}", items.join(", "));
        } else {
            notes.push("GROUP BY is done on the client".into());
        }
    }
    let client_sort = key.client_sort
        || notes
            .iter()
            .any(|n| n.contains("sorted on the client") || n.contains("merged on the client"));
    let limit_sql = match p.analysis.limit {
        Some(l) if client_filter || client_sort || !group_sql.is_empty() && scan => {
            notes.push(format!(
                "LIMIT {l} is applied on the client, after filtering and sorting"
            ));
            String::new()
        }
        Some(l) => format!(" LIMIT {l}"),
        None => String::new(),
    };
    if p.analysis.offset.is_some() {
        notes.push("OFFSET: skip rows on the client or page with the paging state".into());
    }
    let where_sql = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    let cql = format!(
        "SELECT {select} FROM {}.{}{where_sql}{group_sql}{order_sql}{limit_sql}",
        quote(keyspace),
        quote(&t.name)
    );

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
    let buckets = key.bucket.and_then(|(b, n)| {
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
    });
    let single = reasons.is_empty();
    QueryMapping {
        pattern: p.id.clone(),
        table: Some(t.name.clone()),
        cql: Some(cql),
        single_partition: single,
        reason: (!single).then(|| reasons.join("; ")),
        buckets,
        notes,
    }
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
    cols.extend(groups.iter().map(|(n, ty)| format!("{} {ty}", quote(n))));
    cols.push(value.to_string());
    let ck: Vec<String> = groups.iter().map(|(n, _)| quote(n)).collect();
    let pk = if ck.is_empty() {
        "(summary)".to_string()
    } else {
        format!("(summary), {}", ck.join(", "))
    };
    let cql = format!(
        "CREATE TABLE IF NOT EXISTS {}.{} ({}, PRIMARY KEY ({pk}))",
        quote(keyspace),
        quote(&name),
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
