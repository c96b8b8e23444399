//! Bounded one-to-many data embedded in the parent's rows: a collection of a frozen user type.
//!
//! The analyzer decides `Embed` for a one-to-many relationship when the parent's reads also read
//! its few, bounded children. The designer then stores the children in a collection column of the
//! parent's table and serves those reads from the parent's one partition.
//!
//! Collection rule: a `map<child key, frozen<entry>>` when the child's primary key is its FK to the
//! parent plus exactly one column of its own (a map put is idempotent, so an INSERT retried after
//! a timeout does not duplicate the entry); otherwise a `list<frozen<entry>>` (an append, which is
//! not idempotent on retry). The entry type holds the child's columns except the FK.

use crate::candidates::naming;
use crate::candidates::tables::TableBuild;
use crate::candidates::type_mapping;
use remodel_model::ident;
use remodel_model::{
    AccessPattern, Bind, BindValue, Cardinality, ColumnRef, CqlType, Decision, DesignColumn,
    EqualityOp, JoinKey, ReadBeforeWrite, ReadColumn, Relationship, Schema, SourceCollection,
    SourceRef, StatementKind, Table, UserType, WriteAction, WriteTarget,
};

/// One embedded one-to-many relationship.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Parent (one side) table.
    pub parent: String,
    /// Child (many side) table.
    pub child: String,
    /// Child FK columns, in the order of `parent_key`.
    pub fk: Vec<String>,
    /// The parent columns the FK references (the parent's primary key).
    pub parent_key: Vec<String>,
    /// Collection column name in the parent's table (`addresses`).
    pub column: String,
    /// The entry type (`address_entry`).
    pub udt: UserType,
    /// The map key (child column and CQL type) for the map form; `None` for a list.
    pub map_key: Option<(String, CqlType)>,
    /// Child columns stored in each entry, in the UDT's field order.
    pub fields: Vec<String>,
    /// Children per parent as the analyzer measured or was told (1 when it gave none).
    pub fanout: f64,
    /// Declared bytes of one entry (the child's non-FK column widths, without statistics).
    pub entry_bytes: f64,
    /// Why `column` does not spell the child's name, when it does not (a rename in the plan).
    pub name_note: Option<String>,
}

/// `<column>_entry`, unless another embedding took that name for other fields (the same fields
/// share the type).
fn udt_name(out: &[Embedding], column: &str, fields: &[(String, CqlType)]) -> String {
    let wanted = naming::fit_length(&format!("{}_entry", naming::singular(column)));
    let taken = |n: &str| {
        out.iter()
            .any(|e| e.udt.name == n && e.udt.fields != fields)
    };
    crate::candidates::tables::free_name(&[wanted], taken)
}

impl Embedding {
    /// The CQL type of the collection column.
    pub fn cql_type(&self) -> CqlType {
        let entry = Box::new(CqlType::Frozen(Box::new(CqlType::Udt(
            self.udt.name.clone(),
        ))));
        match &self.map_key {
            Some((_, kt)) => CqlType::Map(Box::new(kt.clone()), entry),
            None => CqlType::List(entry),
        }
    }
}

/// The embeddings the relationships decide: one per one-to-many `Embed` whose FK references the
/// parent's whole primary key.
pub fn collect(schema: &Schema, relationships: &[Relationship]) -> Vec<Embedding> {
    let mut out: Vec<Embedding> = Vec::new();
    for r in relationships {
        if r.decision != Decision::Embed || r.cardinality != Cardinality::OneToMany {
            continue;
        }
        let (Some(parent), Some(child)) = (schema.table(&r.from), schema.table(&r.to)) else {
            continue;
        };
        let Some(fk) = child.foreign_keys.iter().find(|fk| {
            schema
                .table(&fk.ref_table)
                .is_some_and(|t| t.key() == parent.key())
                && fk.columns.len() == r.columns.len()
                && fk.columns.iter().zip(&r.columns).all(|(a, b)| a == b)
        }) else {
            continue;
        };
        // The parent's rows are found by its primary key: the FK must reference exactly it.
        let refs_pk = !parent.primary_key.is_empty()
            && fk.ref_columns.len() == parent.primary_key.len()
            && parent
                .primary_key
                .iter()
                .all(|k| fk.ref_columns.contains(k));
        if !refs_pk || out.iter().any(|e| e.child == child.key()) {
            continue;
        }
        let is_fk = |c: &str| fk.columns.iter().any(|f| f == c);
        let fields: Vec<String> = child
            .columns
            .iter()
            .filter(|c| !is_fk(&c.name))
            .map(|c| c.name.clone())
            .collect();
        if fields.is_empty() {
            continue;
        }
        let own_key: Vec<&String> = child.primary_key.iter().filter(|k| !is_fk(k)).collect();
        let fk_in_key = fk.columns.iter().all(|f| child.primary_key.contains(f));
        let map_key = match (own_key.as_slice(), fk_in_key) {
            ([k], true) => child
                .column(k)
                .map(|c| (c.name.clone(), type_mapping::cql_type(&c.sql_type))),
            _ => None,
        };
        let (column, name_note) = collection_name(parent, child, &out);
        let udt_fields: Vec<(String, CqlType)> = child
            .columns
            .iter()
            .filter(|c| !is_fk(&c.name))
            .map(|c| {
                let t = type_mapping::cql_type(&c.sql_type);
                (c.name.clone(), type_mapping::frozen_if_collection(t))
            })
            .collect();
        let parent_key: Vec<String> = fk.ref_columns.clone();
        let entry_bytes = child
            .columns
            .iter()
            .filter(|c| !is_fk(&c.name))
            .map(|c| type_mapping::default_width(&c.sql_type))
            .sum();
        out.push(Embedding {
            parent: parent.key(),
            child: child.key(),
            fk: fk.columns.clone(),
            parent_key,
            udt: UserType {
                name: udt_name(&out, &column, &udt_fields),
                fields: udt_fields,
            },
            name_note,
            column,
            map_key,
            fields,
            fanout: r
                .rationale
                .fanout
                .filter(|f| f.is_finite() && *f > 0.0)
                .unwrap_or(1.0),
            entry_bytes,
        });
    }
    out
}

/// The collection column's name in the parent's table: the child's name less the parent's
/// singular prefix, sanitized, made free; with a note when it differs from the child's name.
fn collection_name(parent: &Table, child: &Table, out: &[Embedding]) -> (String, Option<String>) {
    let prefix = format!("{}_", naming::singular(&parent.name));
    let lower = child.name.to_ascii_lowercase();
    let stem = lower
        .strip_prefix(&prefix)
        .filter(|s| !s.is_empty())
        .unwrap_or(&lower);
    // A name of the parent's table, or another collection's, is taken (`"Items"` and
    // `items` both embedded in one parent sanitize alike).
    let plain = naming::sanitize(stem);
    let taken = |n: &str| {
        parent.column(n).is_some()
            || out
                .iter()
                .any(|e| e.parent == parent.key() && e.column == n)
    };
    let column =
        crate::candidates::tables::free_name(&[plain.clone(), format!("{plain}_entries")], taken);
    let mut why = Vec::new();
    if plain != stem {
        why.push(format!(
            "CQL names here are letters, digits and `_`: `{}` is written `{plain}`",
            child.name
        ));
    }
    if column != plain {
        why.push(format!("`{plain}` is taken in {}'s table", parent.key()));
    }
    (column, (!why.is_empty()).then(|| why.join("; ")))
}

/// The embedding that folds a loop's children into the rows of the read that lists their parents:
/// `child` rows whose `fk` refers to `parent`'s one-column key, with `columns` (what the loop's
/// lookup reads and orders by) as the entry's fields, in a map keyed by the child's one-column
/// key (unique, so a retried INSERT or an UPDATE finds its entry). `Err` says why it cannot be.
pub fn of_loop(
    schema: &Schema,
    parent: &str,
    child: &str,
    fk: &str,
    columns: &[String],
    fanout: f64,
    existing: &[Embedding],
) -> Result<Embedding, String> {
    let (Some(pt), Some(ct)) = (schema.table(parent), schema.table(child)) else {
        return Err(format!("{parent} or {child} is not in the schema"));
    };
    let [pk] = pt.primary_key.as_slice() else {
        return Err(format!(
            "{parent} has no one-column primary key for its rows to be found by"
        ));
    };
    let [ck] = ct.primary_key.as_slice() else {
        return Err(format!(
            "{child} has no one-column primary key to keep its entries apart in one {parent} row"
        ));
    };
    let ckt = ct
        .column(ck)
        .map(|c| type_mapping::cql_type(&c.sql_type))
        .ok_or_else(|| format!("{child}.{ck} is not a column"))?;
    let fields: Vec<String> = ct
        .columns
        .iter()
        .filter(|c| !same(&c.name, fk) && (same(&c.name, ck) || columns.contains(&c.name)))
        .map(|c| c.name.clone())
        .collect();
    let udt_fields: Vec<(String, CqlType)> = fields
        .iter()
        .filter_map(|f| ct.column(f))
        .map(|c| {
            let t = type_mapping::cql_type(&c.sql_type);
            (c.name.clone(), type_mapping::frozen_if_collection(t))
        })
        .collect();
    let plain = naming::sanitize(&ct.name.to_ascii_lowercase());
    let column =
        crate::candidates::tables::free_name(&[plain.clone(), format!("{plain}_entries")], |n| {
            pt.column(n).is_some()
        });
    let entry_bytes = fields
        .iter()
        .filter_map(|f| ct.column(f))
        .map(|c| type_mapping::default_width(&c.sql_type))
        .sum();
    Ok(Embedding {
        parent: pt.key(),
        child: ct.key(),
        fk: vec![fk.to_string()],
        parent_key: vec![pk.clone()],
        udt: UserType {
            name: udt_name(existing, &column, &udt_fields),
            fields: udt_fields,
        },
        name_note: None,
        column,
        map_key: Some((ck.clone(), ckt)),
        fields,
        fanout,
        entry_bytes,
    })
}

/// Identifiers compare exactly: the front ends fold them as Postgres does.
fn same(a: &str, b: &str) -> bool {
    a == b
}

/// The embedding a read is served by: a plain read of exactly the parent and its embedded child
/// (no aggregate) that binds the parent's whole key by equality, on the parent's or the FK columns.
pub fn read_of(p: &AccessPattern, embeds: &[Embedding]) -> Option<usize> {
    if p.kind != StatementKind::Select {
        return None;
    }
    let a = &p.analysis;
    if !a.aggregates.is_empty() || !a.group_by.is_empty() || a.tables.len() != 2 {
        return None;
    }
    embeds.iter().position(|e| {
        let has = |t: &str| a.tables.iter().any(|x| same(x, t));
        has(&e.parent)
            && has(&e.child)
            && e.parent_key.iter().zip(&e.fk).all(|(pk, fk)| {
                a.equality.iter().any(|q| {
                    q.op == EqualityOp::Eq
                        && ((same(&q.column.table, &e.parent) && same(&q.column.column, pk))
                            || (same(&q.column.table, &e.child) && same(&q.column.column, fk)))
                })
            })
    })
}

/// Where a read served from the host's rows finds source column `c`: a field of the entries
/// (no `table`: the unnested entries' field), else a column of the host (the parent's, or the
/// child's foreign key, equal to the parent's key it references).
fn entry_column(host: &TableBuild, e: &Embedding, c: &ColumnRef) -> Option<ReadColumn> {
    if same(&c.table, &e.child) {
        if let Some((f, ty)) = e.udt.fields.iter().find(|(f, _)| same(f, &c.column)) {
            return Some(ReadColumn {
                name: String::new(),
                source: None,
                table: None,
                cql_column: Some(f.clone()),
                cql_type: Some(ty.clone()),
                encoding: None,
                aggregate: None,
            });
        }
        let i = e.fk.iter().position(|f| same(f, &c.column))?;
        let parent = ColumnRef::new(e.parent.clone(), e.parent_key[i].clone());
        return crate::emit::queries::held_in(host, &parent);
    }
    crate::emit::queries::held_in(host, &ColumnRef::new(e.parent.clone(), c.column.clone()))
}

/// The WHERE clause of the host table's partition (`id = ?`), from its key columns' sources.
fn key_where(host: &TableBuild) -> String {
    host.partition_key()
        .iter()
        .chain(host.clustering_key().iter())
        .map(|k| format!("{} = ?", ident::cql_quote(&k.column)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The read's projection split: the host's quoted columns it selects of the parent, and the child
/// columns it reads from the entries.
fn projected(p: &AccessPattern, host: &TableBuild, e: &Embedding) -> (Vec<String>, Vec<String>) {
    let mut select: Vec<String> = Vec::new();
    let mut child_cols: Vec<String> = Vec::new();
    for c in &p.analysis.projection {
        if same(&c.table, &e.child) {
            if !child_cols.contains(&c.column) {
                child_cols.push(c.column.clone());
            }
            continue;
        }
        let src = ColumnRef::new(e.parent.clone(), c.column.clone());
        let name = host.col_name(&src).map(str::to_string).or_else(|| {
            host.design_columns()
                .iter()
                .find(|d| {
                    d.source
                        .as_ref()
                        .is_some_and(|s| same(&s.column, &c.column))
                })
                .map(|d| d.name.clone())
        });
        if let Some(n) = name {
            let q = ident::cql_quote(&n);
            if !select.contains(&q) {
                select.push(q);
            }
        }
    }
    (select, child_cols)
}

/// The notes of a read served from the parent's row: the entries unnested, what the client
/// orders, limits and filters.
fn mapping_notes(
    a: &remodel_model::PatternAnalysis,
    e: &Embedding,
    child_cols: &[String],
    client_filters: &[String],
) -> Vec<String> {
    let form = match &e.map_key {
        Some((k, _)) => format!("a map keyed by {k}"),
        None => "a list".to_string(),
    };
    let mut notes = vec![format!(
        "the {} rows are embedded in the {} row as `{}` ({form} of {}): the client reads {} from its entries, one row per entry; a {} row without {} rows gives none, as the SQL inner join",
        e.child,
        e.parent,
        e.column,
        e.udt.name,
        if child_cols.is_empty() { "nothing".to_string() } else { child_cols.join(", ") },
        e.parent,
        e.child
    )];
    if !a.order_by.is_empty() || a.limit.is_some() || !a.ranges.is_empty() {
        notes.push(format!(
            "ORDER BY, LIMIT and range filters on the {} entries are applied on the client (the collection is small by the analyzer's bound)",
            e.child
        ));
    }
    if !client_filters.is_empty() {
        notes.push(format!(
            "the client filters the {} entries with {}",
            e.child,
            client_filters.join(" AND ")
        ));
    }
    notes
}

/// The query mapping of a read served from the parent's row: its projected parent columns and the
/// collection, one partition.
pub fn query_mapping(
    keyspace: &str,
    p: &AccessPattern,
    host: &TableBuild,
    e: &Embedding,
) -> remodel_model::QueryMapping {
    let (mut select, child_cols) = projected(p, host, e);
    select.push(ident::cql_quote(&e.column));
    let a = &p.analysis;
    // The host's key columns are the parent's key: bound by `=` on it or on the child's FK.
    let mut binds = Vec::new();
    let mut bound: Vec<&remodel_model::Predicate> = Vec::new();
    for k in host
        .partition_key()
        .iter()
        .chain(host.clustering_key().iter())
    {
        let src = host
            .design_columns()
            .into_iter()
            .find(|d| d.name == k.column)
            .and_then(|d| d.source);
        let pred = src.and_then(|s| {
            let fk = e
                .parent_key
                .iter()
                .position(|pk| same(pk, &s.column))
                .map(|i| e.fk[i].clone());
            a.equality.iter().find(|q| {
                q.op == EqualityOp::Eq
                    && ((same(&q.column.table, &e.parent) && same(&q.column.column, &s.column))
                        || (same(&q.column.table, &e.child)
                            && fk.as_deref().is_some_and(|f| same(&q.column.column, f))))
            })
        });
        if let Some(q) = pred {
            let Some(value) = q.expr.clone() else {
                return crate::emit::queries::unsupported(
                    p,
                    host,
                    format!(
                        "{} has no typed form in the plan",
                        crate::candidates::shape::predicate_sql(q)
                    ),
                );
            };
            bound.push(q);
            binds.push(host.bind(&k.column, BindValue::Expr { expr: value }));
        }
    }
    let client = match entries_work(p, e, &bound) {
        Ok(c) => c,
        Err(why) => return crate::emit::queries::unsupported(p, host, why),
    };
    let client_filters: Vec<String> = client.filters.iter().map(ToString::to_string).collect();
    let cql = format!(
        "SELECT {} FROM {}.{} WHERE {}",
        select.join(", "),
        ident::cql_quote(keyspace),
        ident::cql_quote(&host.name),
        key_where(host)
    );
    let notes = mapping_notes(&p.analysis, e, &child_cols, &client_filters);
    let mut warnings = Vec::new();
    if let Some(lock) = &a.locking {
        warnings.push(crate::emit::queries::lock_dropped(lock));
    }
    remodel_model::QueryMapping {
        pattern: p.id.clone(),
        table: Some(host.name.clone()),
        cql: Some(cql),
        single_partition: true,
        notes,
        binds,
        columns: crate::emit::queries::read_columns(p, &|c| entry_column(host, e, c)),
        client_filters,
        partitions: Some(remodel_model::PartitionRead::One),
        client,
        warnings,
        ..Default::default()
    }
}

/// What the client does with the parent's row: unnest the entries, then every predicate the
/// key did not bind, the aggregates, DISTINCT, ORDER BY, OFFSET and LIMIT of the statement.
fn entries_work(
    p: &AccessPattern,
    e: &Embedding,
    bound: &[&remodel_model::Predicate],
) -> Result<remodel_model::ClientWork, String> {
    use crate::candidates::shape::{eq_expr, range_expr};
    let a = &p.analysis;
    let mut filters = Vec::new();
    for q in a.equality.iter().filter(|q| !bound.contains(q)) {
        if q.op != EqualityOp::IsNull && q.expr.is_none() {
            return Err(format!(
                "{} has no typed form in the plan",
                crate::candidates::shape::predicate_sql(q)
            ));
        }
        filters.push(eq_expr(&q.column, q.op, q.expr.as_ref()));
    }
    for r in &a.ranges {
        filters.push(range_expr(&r.column, r).ok_or_else(|| {
            format!(
                "{} has no typed form in the plan",
                crate::candidates::shape::range_sql(r)
            )
        })?);
    }
    for r in &a.residual {
        filters.push(r.expr.clone().ok_or_else(|| {
            format!(
                "filters with {}, which no client can evaluate from the plan ({})",
                r.sql,
                r.reason_untyped
                    .as_deref()
                    .unwrap_or("it has no typed form")
            )
        })?);
    }
    let sort = a
        .order_by
        .iter()
        .map(|o| remodel_model::SortKey {
            by: remodel_model::SortBy::Column {
                column: o.column.clone(),
            },
            desc: o.desc,
            nulls_first: o.nulls_first.unwrap_or(o.desc),
        })
        .collect();
    Ok(remodel_model::ClientWork {
        unnest: Some(remodel_model::Unnest {
            collection: e.column.clone(),
            table: e.child.clone(),
            columns: e.fields.clone(),
            linked: e
                .fk
                .iter()
                .zip(&e.parent_key)
                .map(|(f, k)| (f.clone(), ColumnRef::new(e.parent.clone(), k.clone())))
                .collect(),
        }),
        filters,
        group_by: a.group_by.clone(),
        aggregates: a.aggregates.clone(),
        distinct: a.distinct,
        sort,
        offset: crate::emit::queries::offset_expr(a)?,
        limit: crate::emit::queries::limit_expr(a)?,
        ..Default::default()
    })
}

/// The collection column added to a host table.
pub fn column(e: &Embedding) -> DesignColumn {
    DesignColumn {
        name: e.column.clone(),
        cql_type: e.cql_type(),
        source: None,
        is_static: false,
        embeds: Some(e.child.clone()),
        encoding: None,
        row_id: None,
        equals: Vec::new(),
    }
}

/// The collection as the source query builds it for the backfill, given the parent's alias
/// (`t0`) and the LATERAL subquery's (`e0`): the children aggregated per parent as JSON, a map
/// keyed by the child's own key column or a list in child-key order, each entry an object of the
/// UDT's fields, so the backfill decodes the JSON straight into the collection; a parent without
/// children gets NULL (an empty collection).
pub fn source(schema: &Schema, e: &Embedding, parent_alias: &str, alias: &str) -> SourceCollection {
    let order = match &e.map_key {
        Some(_) => Vec::new(),
        None => schema
            .table(&e.child)
            .map(|t| t.primary_key.clone())
            .unwrap_or_default(),
    };
    SourceCollection {
        table: e.child.clone(),
        alias: alias.to_string(),
        on: e
            .fk
            .iter()
            .zip(&e.parent_key)
            .map(|(f, k)| JoinKey {
                column: f.clone(),
                equals: SourceRef::new(parent_alias, k),
            })
            .collect(),
        map_key: e.map_key.as_ref().map(|(k, _)| k.clone()),
        fields: e.fields.clone(),
        order,
    }
}

/// The write targets, reads before write and note of a write to an embedded child, on each host
/// table; `Err` says why the write cannot be applied (the parent key is not known). A host keyed
/// by more than the parent's key (a list of parents folding a loop's children) finds the rest of
/// its key in the parent's row, read first from `parent_row` (the parent's table by key).
pub fn write(
    keyspace: &str,
    p: &AccessPattern,
    e: &Embedding,
    hosts: &[&TableBuild],
    parent_row: Option<&TableBuild>,
) -> Result<(Vec<WriteTarget>, Vec<ReadBeforeWrite>, String), String> {
    let mut targets = Vec::new();
    let mut reads = Vec::new();
    let Some(w) = &p.analysis.write else {
        return Ok((targets, reads, String::new()));
    };
    let ks = ident::cql_quote(keyspace);
    let col = ident::cql_quote(&e.column);
    let child = |c: &str| ColumnRef::new(e.child.clone(), c.to_string());
    let knows =
        |cols: &[String], need: &[String]| need.iter().all(|f| cols.iter().any(|c| same(c, f)));
    let key_eq: Vec<String> = p
        .analysis
        .equality
        .iter()
        .filter(|q| q.op == EqualityOp::Eq && same(&q.column.table, &e.child))
        .map(|q| q.column.column.clone())
        .collect();
    // The host's key is the parent's primary key, whose values are the child's FK values; any
    // other parent column of the key is read from the parent's row (`keyed_by_parent`).
    let host_key = |h: &TableBuild, v: &dyn Fn(ColumnRef) -> BindValue| -> (String, Vec<Bind>) {
        let mut conds = Vec::new();
        let mut binds = Vec::new();
        for k in h.partition_key().iter().chain(h.clustering_key().iter()) {
            let src = h
                .design_columns()
                .into_iter()
                .find(|d| d.name == k.column)
                .and_then(|d| d.source);
            let fk = src
                .as_ref()
                .and_then(|s| e.parent_key.iter().position(|pk| same(pk, &s.column)))
                .map(|i| e.fk[i].clone());
            let value = match (fk, src) {
                (Some(f), _) => v(child(&f)),
                (None, Some(s)) if same(&s.table, &e.parent) => v(s),
                (None, _) => v(child(&k.column)),
            };
            conds.push(format!("{} = ?", ident::cql_quote(&k.column)));
            binds.push(h.bind(&k.column, value));
        }
        (conds.join(" AND "), binds)
    };
    let new = |c: ColumnRef| BindValue::New { column: c };
    let current = |c: ColumnRef| BindValue::Current { column: c };
    let parent_cols = keyed_by_parent(e, hosts);
    if !parent_cols.is_empty() {
        let insert = p.kind == StatementKind::Insert;
        let v: &dyn Fn(ColumnRef) -> BindValue = if insert { &new } else { &current };
        reads.push(parent_read(
            keyspace,
            e,
            hosts,
            parent_row,
            &parent_cols,
            v,
            insert,
        )?);
    }
    let entry = |v: &dyn Fn(ColumnRef) -> BindValue| BindValue::Entry {
        key: e.map_key.as_ref().map(|(k, _)| Box::new(v(child(k)))),
        fields: e
            .fields
            .iter()
            .map(|f| (f.clone(), new(child(f))))
            .collect(),
    };
    if p.kind == StatementKind::Insert {
        if !knows(&w.columns_written, &e.fk) {
            return Err(format!(
                "the INSERT does not give {} ({}), so the {} row whose `{}` it extends is unknown",
                e.fk.join(", "),
                e.child,
                e.parent,
                e.column
            ));
        }
        for h in hosts {
            let (wk, kb) = host_key(h, &new);
            let mut binds = vec![Bind {
                column: e.column.clone(),
                cql_type: e.cql_type(),
                value: entry(&new),
            }];
            binds.extend(kb);
            targets.push(WriteTarget {
                counter: None,
                table: h.name.clone(),
                cql: format!(
                    "UPDATE {ks}.{} SET {col} = {col} + ? WHERE {wk}",
                    ident::cql_quote(&h.name)
                ),
                action: WriteAction::Update,
                binds,
                for_each: None,
                guard: None,
            });
        }
        let note = match &e.map_key {
            Some((k, _)) => format!(
                "the {} row is added to the `{}` map of its {} row (a one-entry map {{{k}: {}}}); a map put is idempotent, so a retried INSERT does not duplicate it",
                e.child, e.column, e.parent, e.udt.name
            ),
            None => format!(
                "the {} row is appended to the `{}` list of its {} row (a one-element list of {}); a list append is not idempotent: a retry after a timeout can add it twice",
                e.child, e.column, e.parent, e.udt.name
            ),
        };
        return Ok((targets, reads, note));
    }
    if !knows(&key_eq, &e.fk)
        || w.columns_written
            .iter()
            .any(|c| e.fk.iter().any(|f| same(f, c)))
    {
        return Err(format!(
                "the statement does not bind {} by `=` (or moves the {} row to another {}), so the {} row whose `{}` holds it is not known by key",
                e.fk.join(", "),
                e.child,
                e.parent,
                e.parent,
                e.column
            ));
    }
    let map_key_bound = e.map_key.as_ref().is_some_and(|(k, _)| {
        knows(&key_eq, std::slice::from_ref(k)) && !w.columns_written.iter().any(|c| same(c, k))
    });
    for h in hosts {
        let (wk, kb) = host_key(h, &current);
        let h_name = ident::cql_quote(&h.name);
        let (cql, mut binds, action) = match (&e.map_key, map_key_bound, p.kind) {
            (Some((k, kt)), true, StatementKind::Delete) => (
                format!("DELETE {col}[?] FROM {ks}.{h_name} WHERE {wk}"),
                vec![Bind {
                    column: e.column.clone(),
                    cql_type: kt.clone(),
                    value: current(child(k)),
                }],
                WriteAction::Delete,
            ),
            (Some((k, kt)), true, _) => (
                format!("UPDATE {ks}.{h_name} SET {col}[?] = ? WHERE {wk}"),
                vec![
                    Bind {
                        column: e.column.clone(),
                        cql_type: kt.clone(),
                        value: current(child(k)),
                    },
                    Bind {
                        column: e.column.clone(),
                        cql_type: CqlType::Frozen(Box::new(CqlType::Udt(e.udt.name.clone()))),
                        value: BindValue::Entry {
                            key: None,
                            fields: e
                                .fields
                                .iter()
                                .map(|f| (f.clone(), new(child(f))))
                                .collect(),
                        },
                    },
                ],
                WriteAction::Update,
            ),
            _ => (
                format!("UPDATE {ks}.{h_name} SET {col} = ? WHERE {wk}"),
                vec![Bind {
                    column: e.column.clone(),
                    cql_type: e.cql_type(),
                    value: BindValue::Rewritten {
                        column: e.column.clone(),
                    },
                }],
                WriteAction::Update,
            ),
        };
        // The entry's other fields (UPDATE of a map entry) or the whole list are read first.
        let sets_all = map_key_bound
            && e.fields.iter().all(|f| {
                e.map_key.as_ref().is_some_and(|(k, _)| same(k, f))
                    || w.columns_written.iter().any(|c| same(c, f))
            });
        if action != WriteAction::Delete && !sets_all {
            reads.push(ReadBeforeWrite {
                table: h.name.clone(),
                columns: vec![e.column.clone()],
                for_tables: vec![h.name.clone()],
                note: Some(format!(
                    "the `{}` collection: the current {} entries, changed on the client and written back",
                    e.column, e.child
                )),
                cql: format!("SELECT {col} FROM {ks}.{h_name} WHERE {wk}"),
                binds: kb.clone(),
                many: false,
                reads_new: false,
                filter: Vec::new(),
                name: None,
            });
        }
        binds.extend(kb);
        targets.push(WriteTarget {
            counter: None,
            table: h.name.clone(),
            cql,
            action,
            binds,
            for_each: None,
            guard: None,
        });
    }
    let note = format!(
        "{} of {} rows changes the `{}` collection of their {} row{}",
        if p.kind == StatementKind::Delete {
            "a DELETE"
        } else {
            "an UPDATE"
        },
        e.child,
        e.column,
        e.parent,
        if map_key_bound {
            " by its map key"
        } else {
            " after reading it (read-before-write; concurrent writers to one row can lose an update)"
        }
    );
    Ok((targets, reads, note))
}

/// The parent columns other than its key that key a host (a list's partition and order columns).
fn keyed_by_parent(e: &Embedding, hosts: &[&TableBuild]) -> Vec<ColumnRef> {
    let mut out: Vec<ColumnRef> = Vec::new();
    for h in hosts {
        for k in h.partition_key().iter().chain(h.clustering_key().iter()) {
            let src = h
                .design_columns()
                .into_iter()
                .find(|d| d.name == k.column)
                .and_then(|d| d.source);
            if let Some(s) = src.filter(|s| {
                same(&s.table, &e.parent) && !e.parent_key.iter().any(|pk| same(pk, &s.column))
            }) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// The read of the parent's row, by the child's FK, that gives a host the rest of its key.
fn parent_read(
    keyspace: &str,
    e: &Embedding,
    hosts: &[&TableBuild],
    parent_row: Option<&TableBuild>,
    cols: &[ColumnRef],
    v: &dyn Fn(ColumnRef) -> BindValue,
    reads_new: bool,
) -> Result<ReadBeforeWrite, String> {
    let names: Vec<String> = cols.iter().map(|c| c.column.clone()).collect();
    let Some(t) = parent_row else {
        return Err(format!(
            "no table reads the {} row by key, whose {} key the {} rows' collection",
            e.parent,
            names.join(", "),
            e.child
        ));
    };
    let mut columns = Vec::new();
    for c in cols {
        let n = t.col_name(c).ok_or_else(|| {
            format!(
                "{} does not hold {c}, which keys the {} rows' collection",
                t.name, e.child
            )
        })?;
        columns.push(n.to_string());
    }
    let mut conds = Vec::new();
    let mut binds = Vec::new();
    for k in t.partition_key().iter().chain(t.clustering_key().iter()) {
        let src = t
            .design_columns()
            .into_iter()
            .find(|d| d.name == k.column)
            .and_then(|d| d.source);
        let i = src
            .and_then(|s| e.parent_key.iter().position(|pk| same(pk, &s.column)))
            .ok_or_else(|| format!("{} is not keyed by the {} key alone", t.name, e.parent))?;
        conds.push(format!("{} = ?", ident::cql_quote(&k.column)));
        binds.push(t.bind(
            &k.column,
            v(ColumnRef::new(e.child.clone(), e.fk[i].clone())),
        ));
    }
    let quoted: Vec<String> = columns.iter().map(|c| ident::cql_quote(c)).collect();
    Ok(ReadBeforeWrite {
        table: t.name.clone(),
        cql: format!(
            "SELECT {} FROM {}.{} WHERE {}",
            quoted.join(", "),
            ident::cql_quote(keyspace),
            ident::cql_quote(&t.name),
            conds.join(" AND ")
        ),
        columns,
        for_tables: hosts.iter().map(|h| h.name.clone()).collect(),
        note: Some(format!(
            "the {} row the {} row belongs to: its {} key the row whose `{}` holds it",
            e.parent,
            e.child,
            names.join(", "),
            e.column
        )),
        binds,
        many: false,
        reads_new,
        filter: Vec::new(),
        name: None,
    })
}
