//! Tables: one per access pattern, merged where one table serves several patterns, then finished
//! (uniqueness keys appended, columns unioned and typed, names chosen, source SQL written).

use crate::candidates::keys::{self, KeyPlan, KeySrc};
use crate::candidates::naming;
use crate::candidates::shape::{Edge, Shape};
use crate::candidates::type_mapping;
use remodel_model::{
    row_id_sql, Bind, BindValue, Bucket, ColumnRef, CqlType, DesignColumn, Encoding, Generator,
    JoinKey, KeyColumn, NullsAt, RowId, Schema, SortOrder, SourceCollection, SourceColumn,
    SourceFilter, SourceJoin, SourceQuery, SourceRef, SourceValue, Workload,
};
use std::collections::BTreeMap;

/// A target table while it is being built.
#[derive(Debug, Clone)]
pub struct TableBuild {
    /// The source table whose rows (one per row) the table holds.
    pub root: String,
    /// Partition key elements.
    pub partition: Vec<KeySrc>,
    /// Clustering the served patterns need (direction `None` = either).
    pub required: Vec<(ColumnRef, Option<SortOrder>)>,
    /// `IS NULL` restrictions: the table holds only those rows.
    pub null_filter: Vec<ColumnRef>,
    /// Keys of non-root path tables (rows are per root row × those).
    pub extra_keys: Vec<ColumnRef>,
    /// Columns the served patterns read.
    pub needed: Vec<ColumnRef>,
    /// Join edges that reach the embedded columns.
    pub edges: Vec<Edge>,
    /// Pattern ids served.
    pub serves: Vec<String>,
    /// Final clustering (after [`finish`]).
    pub clustering: Vec<(KeySrc, SortOrder)>,
    /// Final column list: (source, name, cql type, static).
    pub columns: Vec<(KeySrc, String, CqlType, bool)>,
    /// Final name.
    pub name: String,
    /// Warnings found while building (sizing adds more).
    pub warnings: Vec<(String, String)>,
    /// Why the name does not spell the entity as written, when it does not (set by
    /// [`name_tables`]; a rename in `design.renames`).
    pub name_note: Option<String>,
    /// Key columns kept as microseconds since the epoch (set by [`finish`]): their source keeps
    /// microseconds, CQL's `timestamp` milliseconds.
    pub encoded: Vec<ColumnRef>,
    /// The clustering columns whose source may be NULL, kept as a bigint that stores it, with
    /// their encoding (set by [`encode_everywhere`]).
    pub null_keys: Vec<(ColumnRef, Encoding)>,
    /// Columns whose NULL rows a read served here returns and no key can hold
    /// ([`Shape::nulls_returned`]): the table never clusters by them.
    pub nulls_returned: Vec<ColumnRef>,
    /// The side of its values each nullable ORDER BY column's NULLs go on in the reads served
    /// here ([`Shape::null_sides`]): all agree.
    pub null_sides: Vec<(ColumnRef, NullsAt)>,
    /// The source column whose instant ends each row's life (set by [`crate::checklist::expiry::mark`]):
    /// its INSERTs and UPDATEs carry `USING TTL ?`.
    pub expires: Option<ColumnRef>,
}

impl TableBuild {
    /// A new table for one pattern.
    pub fn new(shape: &Shape, key: &KeyPlan) -> Self {
        TableBuild {
            root: shape.root.clone(),
            partition: key.partition.clone(),
            required: key.clustering.clone(),
            null_filter: shape.null_filter.clone(),
            extra_keys: shape.extra_keys.clone(),
            needed: shape.needed.clone(),
            edges: shape.edges.clone(),
            serves: vec![shape.pattern.clone()],
            clustering: Vec::new(),
            columns: Vec::new(),
            name: String::new(),
            warnings: Vec::new(),
            name_note: None,
            encoded: Vec::new(),
            null_keys: Vec::new(),
            nulls_returned: shape.nulls_returned.clone(),
            null_sides: shape.null_sides.clone(),
            expires: None,
        }
    }

    /// A key-lookup table of `root` by its primary key (for references and scans).
    pub fn by_primary_key(schema: &Schema, root: &str) -> Option<Self> {
        let t = schema.table(root)?;
        let mut key: Vec<String> = t.primary_key.clone();
        if key.is_empty() {
            key = t
                .unique_keys
                .first()
                .map(|u| u.columns.clone())
                .unwrap_or_default();
        }
        if key.is_empty() {
            // No key at all: the first column partitions; the generated row id that
            // [`finish`] appends keeps equal rows apart.
            key.push(t.columns.first()?.name.clone());
        }
        let by: Vec<ColumnRef> = key
            .iter()
            .filter_map(|k| t.column(k))
            .map(|c| ColumnRef::new(t.key(), &c.name))
            .collect();
        Some(TableBuild::lookup(&t.key(), &by))
    }

    /// A table of `root` rows partitioned by `by` (a lookup a write path needs: the rows it
    /// changes, found by the columns the statement binds); clustered by the primary key.
    pub fn lookup(root: &str, by: &[ColumnRef]) -> Self {
        TableBuild {
            root: root.to_string(),
            partition: by.iter().map(|c| KeySrc::Col(c.clone())).collect(),
            required: Vec::new(),
            null_filter: Vec::new(),
            extra_keys: Vec::new(),
            needed: Vec::new(),
            edges: Vec::new(),
            serves: Vec::new(),
            clustering: Vec::new(),
            columns: Vec::new(),
            name: String::new(),
            warnings: Vec::new(),
            name_note: None,
            encoded: Vec::new(),
            null_keys: Vec::new(),
            nulls_returned: Vec::new(),
            null_sides: Vec::new(),
            expires: None,
        }
    }

    /// Records that the table serves pattern `id` (once).
    pub fn add_serves(&mut self, id: &str) {
        if !self.serves.iter().any(|s| s == id) {
            self.serves.push(id.to_string());
        }
    }

    /// True when this is `root`'s plain lookup-by-primary-key table.
    pub fn is_primary_lookup(&self, schema: &Schema) -> bool {
        let Some(t) = schema.table(&self.root) else {
            return false;
        };
        self.null_filter.is_empty()
            && self.extra_keys.is_empty()
            && !t.primary_key.is_empty()
            && self.partition.len() == t.primary_key.len()
            && self.partition.iter().all(|k| {
                matches!(k, KeySrc::Col(c) if c.table == t.key() && t.primary_key.contains(&c.column))
            })
    }

    /// The layout one pattern asks for (key, filters, joins), without columns: the candidate
    /// pass shares layouts between reads; the columns come from the reads chosen.
    pub fn layout(shape: &Shape, key: &KeyPlan) -> Self {
        TableBuild {
            needed: Vec::new(),
            serves: Vec::new(),
            ..TableBuild::new(shape, key)
        }
    }

    /// Merges a pattern's layout into this one when the same partitions and a compatible
    /// clustering serve it (columns and served patterns are not touched).
    pub fn merge_layout(&mut self, shape: &Shape, key: &KeyPlan) -> bool {
        if self.root != shape.root
            || self.partition != key.partition
            || !same_set(&self.null_filter, &shape.null_filter)
            || !same_set(&self.extra_keys, &shape.extra_keys)
        {
            return false;
        }
        let Some(merged) = merge_clustering(&self.required, &key.clustering) else {
            return false;
        };
        // Clustered by a column whose NULL rows one of the reads returns, the table would
        // leave those rows out: such reads are not merged.
        if merged
            .iter()
            .any(|(c, _)| self.nulls_returned.contains(c) || shape.nulls_returned.contains(c))
            || shape.null_sides_conflict(&self.null_sides)
        {
            return false;
        }
        self.required = merged;
        for c in &shape.nulls_returned {
            if !self.nulls_returned.contains(c) {
                self.nulls_returned.push(c.clone());
            }
        }
        for side in &shape.null_sides {
            if !self.null_sides.contains(side) {
                self.null_sides.push(side.clone());
            }
        }
        for e in &shape.edges {
            if !self.edges.contains(e) {
                self.edges.push(e.clone());
            }
        }
        true
    }

    /// Adds columns (for a table that also answers lookups or scans).
    pub fn add_needed(&mut self, cols: &[ColumnRef], edges: &[Edge]) {
        for c in cols {
            if !self.needed.contains(c) {
                self.needed.push(c.clone());
            }
        }
        for e in edges {
            if !self.edges.contains(e) {
                self.edges.push(e.clone());
            }
        }
    }

    /// Target name of a source column or bucket, when the table holds it.
    pub fn name_of(&self, k: &KeySrc) -> Option<&str> {
        self.columns
            .iter()
            .find(|(s, ..)| s == k)
            .map(|(_, n, ..)| n.as_str())
    }

    /// Target name of a source column.
    pub fn col_name(&self, c: &ColumnRef) -> Option<&str> {
        self.name_of(&KeySrc::Col(c.clone()))
    }

    /// The CQL type of the column named `name`.
    pub fn type_of(&self, name: &str) -> Option<CqlType> {
        self.columns
            .iter()
            .find(|(_, n, ..)| n == name)
            .map(|(_, _, t, _)| t.clone())
    }

    /// The bind of a `name = ?` marker of this table: typed as the column (every caller names
    /// a column of the table; were it not, `blob` is a type the validator's check (o) names).
    pub fn bind(&self, name: &str, value: BindValue) -> Bind {
        Bind {
            column: name.to_string(),
            cql_type: self
                .type_of(name)
                .unwrap_or(CqlType::Native(remodel_model::NativeType::Blob)),
            value,
        }
    }

    /// Primary key elements in order (partition then clustering).
    pub fn key_elements(&self) -> Vec<KeySrc> {
        self.partition
            .iter()
            .cloned()
            .chain(self.clustering.iter().map(|(k, _)| k.clone()))
            .collect()
    }

    /// The model's partition key.
    pub fn partition_key(&self) -> Vec<KeyColumn> {
        self.partition
            .iter()
            .map(|k| self.key_column(k, None))
            .collect()
    }

    /// The model's clustering.
    pub fn clustering_key(&self) -> Vec<KeyColumn> {
        self.clustering
            .iter()
            .map(|(k, o)| self.key_column(k, Some(*o)))
            .collect()
    }

    fn key_column(&self, k: &KeySrc, order: Option<SortOrder>) -> KeyColumn {
        let (name, ty) = self
            .columns
            .iter()
            .find(|(s, ..)| s == k)
            .map(|(_, n, t, _)| (n.clone(), t.clone()))
            .unwrap_or_else(|| (String::new(), CqlType::TEXT));
        let (derived_from, bucket) = match k {
            KeySrc::Bucket(c, b) => (
                self.col_name(c)
                    .map(str::to_string)
                    .or(Some(c.column.clone())),
                Some(*b),
            ),
            KeySrc::Col(_) | KeySrc::Const(_) | KeySrc::RowId(_) => (None, None),
        };
        KeyColumn {
            column: name,
            cql_type: ty,
            derived_from,
            bucket,
            order,
            time_zone: None,
            constant: match k {
                KeySrc::Const(v) => Some(v.clone()),
                _ => None,
            },
            encoding: self.encoding(k),
        }
    }

    /// How the table holds key element `k`, when not as the plain mapping of its type.
    pub fn encoding(&self, k: &KeySrc) -> Option<Encoding> {
        let c = k.plain_column()?;
        self.null_encoding(c)
            .or_else(|| self.encoded.contains(c).then_some(Encoding::EpochMicros))
    }

    /// The encoding of clustering column `c` when it stores NULL.
    pub fn null_encoding(&self, c: &ColumnRef) -> Option<Encoding> {
        self.null_keys.iter().find(|(n, _)| n == c).map(|(_, e)| *e)
    }

    /// The model's column list.
    pub fn design_columns(&self) -> Vec<DesignColumn> {
        self.columns
            .iter()
            .map(|(s, n, t, st)| DesignColumn {
                name: n.clone(),
                cql_type: t.clone(),
                source: s.plain_column().cloned(),
                is_static: *st,
                embeds: None,
                encoding: self.encoding(s),
                row_id: match s {
                    KeySrc::RowId(table) => Some(row_id(table)),
                    _ => None,
                },
                equals: Vec::new(),
            })
            .collect()
    }
}

/// What the plan states about the row id of `table`'s rows.
pub fn row_id(table: &str) -> RowId {
    RowId {
        table: table.to_string(),
        existing: row_id_sql("r"),
        inserted: Generator::Timeuuid,
        reason: format!(
            "`{table}` has no primary or unique key, so Postgres lets it hold equal rows, which a key of its columns would merge into one CQL row: each row gets an id. The rows already there get a hash of the row `r` and its number among equal rows (computed by source_sql, so every executor and every table holding the row agree); a row an INSERT adds gets a new timeuuid made by the application; an UPDATE or DELETE reads the ids of the rows it picks first and writes each"
        ),
    }
}

fn same_set(a: &[ColumnRef], b: &[ColumnRef]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

/// Merges two clustering requirements when one is a prefix of the other with consistent directions
/// (all the same, or all reversed: a read may scan a partition backwards).
fn merge_clustering(
    a: &[(ColumnRef, Option<SortOrder>)],
    b: &[(ColumnRef, Option<SortOrder>)],
) -> Option<Vec<(ColumnRef, Option<SortOrder>)>> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut relation: Option<bool> = None; // Some(true) = same direction, Some(false) = reversed
    for (i, (c, d)) in short.iter().enumerate() {
        let (lc, ld) = &long[i];
        if lc != c {
            return None;
        }
        if let (Some(x), Some(y)) = (d, ld) {
            let same = x == y;
            match relation {
                None => relation = Some(same),
                Some(r) if r != same => return None,
                _ => {}
            }
        }
    }
    let rel_same = relation.unwrap_or(true);
    let mut out: Vec<(ColumnRef, Option<SortOrder>)> = long.to_vec();
    for (i, (_, d)) in short.iter().enumerate() {
        if out[i].1.is_none() {
            out[i].1 = d.map(|d| if rel_same { d } else { flip(d) });
        }
    }
    Some(out)
}

fn flip(d: SortOrder) -> SortOrder {
    match d {
        SortOrder::Asc => SortOrder::Desc,
        SortOrder::Desc => SortOrder::Asc,
    }
}

/// The clustering of a table (MR5): its required columns, then the root's unique key (its primary
/// key, else its first unique key, else its NOT NULL columns and a generated row id, warned),
/// then the extra keys, each once and not in the partition.
fn cluster_by_unique_key(root: &remodel_model::Table, t: &mut TableBuild) {
    let mut clustering: Vec<(KeySrc, SortOrder)> = t
        .required
        .iter()
        .map(|(c, d)| (KeySrc::Col(c.clone()), d.unwrap_or(SortOrder::Asc)))
        .collect();
    let in_key = |k: &KeySrc, p: &[KeySrc], c: &[(KeySrc, SortOrder)]| {
        p.contains(k) || c.iter().any(|(x, _)| x == k)
    };
    let mut uniq: Vec<KeySrc> = root
        .primary_key
        .iter()
        .map(|k| KeySrc::Col(ColumnRef::new(root.key(), k)))
        .collect();
    if uniq.is_empty() {
        if let Some(u) = root.unique_keys.first() {
            uniq = u
                .columns
                .iter()
                .map(|k| KeySrc::Col(ColumnRef::new(root.key(), k)))
                .collect();
        }
    }
    let keyless = uniq.is_empty();
    if keyless {
        // No declared key: Postgres lets the table hold equal rows, which any key of its
        // columns would merge. A generated id keeps every copy; the NOT NULL columns before it
        // let a write find the rows it picks by them (a clustering prefix).
        uniq.extend(
            root.columns
                .iter()
                .filter(|c| !c.nullable)
                .map(|c| KeySrc::Col(ColumnRef::new(root.key(), &c.name))),
        );
        if !t.warnings.iter().any(|(c, _)| c == "no_source_key") {
            t.warnings.push((
                "no_source_key".into(),
                format!(
                    "`{}` has no primary or unique key, so it can hold equal rows: each row is keyed by a generated id (`row_id` in plan.json says how it is made); declare a key if the rows are unique",
                    root.key()
                ),
            ));
        }
    }
    uniq.extend(t.extra_keys.iter().cloned().map(KeySrc::Col));
    if keyless {
        uniq.push(KeySrc::RowId(root.key()));
    }
    for k in uniq {
        let k = match k {
            KeySrc::Col(c) => KeySrc::Col(
                root.column(&c.column)
                    .filter(|_| c.table == root.key())
                    .map(|col| ColumnRef::new(root.key(), &col.name))
                    .unwrap_or(c),
            ),
            other => other,
        };
        if !in_key(&k, &t.partition, &clustering) {
            clustering.push((k, SortOrder::Asc));
        }
    }
    t.clustering = clustering;
}

/// Finishes a table: clustering with uniqueness keys (MR5), columns (the whole root row plus
/// embedded columns), types and static flags. Names are chosen by [`name_tables`].
pub fn finish(schema: &Schema, t: &mut TableBuild, copy_entity_columns: bool) {
    let Some(root) = schema.table(&t.root) else {
        return;
    };
    cluster_by_unique_key(root, t);

    // Columns: key columns first, then the root's columns, then embedded ones.
    let mut srcs: Vec<KeySrc> = t.key_elements();
    if copy_entity_columns {
        for c in &root.columns {
            let k = KeySrc::Col(ColumnRef::new(root.key(), &c.name));
            if !srcs.contains(&k) {
                srcs.push(k);
            }
        }
    }
    for c in &t.needed {
        let k = KeySrc::Col(c.clone());
        if !srcs.contains(&k) {
            srcs.push(k);
        }
    }
    let mut columns = Vec::new();
    let key_len = t.partition.len() + t.clustering.len();
    // The root's own column names are the root's, whether or not this table holds them: a
    // copied parent column or a derived one never takes one (`users.org_name` stays the user's
    // own when `orgs.name` is copied in as well).
    let reserved: Vec<&str> = root.columns.iter().map(|c| c.name.as_str()).collect();
    let mut used: Vec<String> = Vec::new();
    let mut encoded: Vec<ColumnRef> = Vec::new();
    let partition_cols = keys::plain_columns(&t.partition);
    for (i, k) in srcs.iter().enumerate() {
        let taken = |n: &str| used.iter().any(|u| u == n) || reserved.contains(&n);
        let (name, ty, is_static) = match k {
            KeySrc::Const(_) => (free_name(&["part".into()], taken), CqlType::TEXT, false),
            KeySrc::RowId(_) => (
                free_name(&["row_id".into(), "remodel_row_id".into()], taken),
                CqlType::UUID,
                false,
            ),
            KeySrc::Bucket(c, b) => {
                let ty = if *b == Bucket::Day {
                    CqlType::DATE
                } else {
                    CqlType::TIMESTAMP
                };
                let word = naming::bucket_word(*b);
                let wanted = [
                    format!("{}_{word}", naming::singular(&root.name)),
                    format!("{}_{word}", c.column.to_ascii_lowercase()),
                ];
                (free_name(&wanted, taken), ty, false)
            }
            KeySrc::Col(c) => {
                let sql_type = schema
                    .table(&c.table)
                    .and_then(|tt| tt.column(&c.column))
                    .map(|cc| cc.sql_type.clone())
                    .unwrap_or_default();
                let mut ty = type_mapping::cql_type(&sql_type);
                if i < key_len {
                    ty = type_mapping::frozen_if_collection(ty);
                    // CQL's timestamp keeps milliseconds: rows apart by less would collapse
                    // into one key. The key keeps the source's microseconds.
                    if ty == CqlType::TIMESTAMP && keys::sub_ms_timestamp(&sql_type) {
                        ty = CqlType::BIGINT;
                        encoded.push(c.clone());
                    }
                }
                let name = if c.table == t.root {
                    c.column.clone()
                } else {
                    let bare = schema.table(&c.table).map_or(c.table.as_str(), |p| &p.name);
                    let parent = naming::sanitize(&naming::singular(bare));
                    let wanted = [c.column.clone(), format!("{parent}_{}", c.column)];
                    free_name(&wanted, taken)
                };
                // A parent's columns are static when the partition key pins the parent (1-N read from the parent).
                let is_static = i >= key_len
                    && c.table != t.root
                    && !t.clustering.is_empty()
                    && t.edges.iter().any(|e| {
                        e.directed
                            && e.parent == c.table
                            && e.child == t.root
                            && t.partition.len() == e.child_cols.len()
                            && e.child_cols.iter().all(|cc| {
                                partition_cols
                                    .iter()
                                    .any(|p| p.table == t.root && p.column == *cc)
                            })
                    });
                (name, ty, is_static)
            }
        };
        used.push(name.clone());
        columns.push((k.clone(), name, ty, is_static));
    }
    t.columns = columns;
    t.encoded = encoded;
}

/// A source column some table keeps as epoch microseconds in its key is kept so in every table
/// that holds it: a write path addresses that key with the value it reads from another table
/// (the row's table by id), and a millisecond copy there would address no row. Then each
/// table's nullable clustering columns store NULL ([`null_keys`]).
pub fn encode_everywhere(tables: &mut [TableBuild], schema: &Schema, workload: &Workload) {
    let mut encoded: Vec<ColumnRef> = Vec::new();
    for t in tables.iter() {
        for c in &t.encoded {
            if !encoded.contains(c) {
                encoded.push(c.clone());
            }
        }
    }
    for t in tables.iter_mut() {
        for (k, _, ty, _) in t.columns.iter_mut() {
            let KeySrc::Col(c) = k else { continue };
            if encoded.contains(c) && *ty == CqlType::TIMESTAMP {
                *ty = CqlType::BIGINT;
                if !t.encoded.contains(c) {
                    t.encoded.push(c.clone());
                }
            }
        }
    }
    null_keys(tables, schema, workload);
}

/// Every clustering column whose source may be NULL and is a timestamp, an integer that fits
/// (`smallint`, `integer`) or a date is kept as a bigint that stores NULL (`Encoding::stores_null`):
/// a CQL key cannot hold NULL, and the row must not be refused (a listing ordered by a timestamp
/// that new rows leave NULL, a shipped date not set yet, a due date of tasks without one). NULL
/// goes where the reads the table serves put it (above every value by SQL's default, below with
/// `NULLS FIRST` ascending); where two of them disagree, or the type has no room for it, the
/// column keeps its `nullable_key` handling.
fn null_keys(tables: &mut [TableBuild], schema: &Schema, workload: &Workload) {
    for t in tables.iter_mut() {
        let keys: Vec<(ColumnRef, Encoding)> = t
            .clustering
            .iter()
            .filter_map(|(k, _)| k.plain_column())
            .filter_map(|c| {
                let col = schema.table(&c.table)?.column(&c.column)?;
                if !col.nullable {
                    return None;
                }
                let form = type_mapping::null_storing_form(&type_mapping::cql_type(&col.sql_type))?;
                let nulls = nulls_at(t, workload, c)?;
                Some((c.clone(), Encoding::storing_null(form, nulls)))
            })
            .collect();
        for (k, _, ty, _) in t.columns.iter_mut() {
            if k.plain_column()
                .is_some_and(|c| keys.iter().any(|(n, _)| n == c))
            {
                *ty = CqlType::BIGINT;
            }
        }
        t.null_keys = keys;
    }
}

/// Where table `t`'s reads put the NULLs of column `c`: above every value (SQL's default, also
/// where no read orders by it) or below; `None` when two reads disagree.
fn nulls_at(t: &TableBuild, workload: &Workload, c: &ColumnRef) -> Option<NullsAt> {
    let mut wanted = t
        .serves
        .iter()
        .filter_map(|p| workload.pattern(p))
        .flat_map(|p| &p.analysis.order_by)
        .filter(|o| &o.column == c)
        .map(remodel_model::OrderBy::nulls_at);
    let first = wanted.next().unwrap_or(NullsAt::Last);
    wanted.all(|w| w == first).then_some(first)
}

/// The first of `wanted` that is not `taken`; when all are, the last with `_2`, `_3`, … appended.
pub fn free_name(wanted: &[String], taken: impl Fn(&str) -> bool) -> String {
    if let Some(w) = wanted.iter().find(|w| !taken(w)) {
        return w.clone();
    }
    let stem = wanted.last().cloned().unwrap_or_else(|| "c".into());
    (2..)
        .map(|n| format!("{stem}_{n}"))
        .find(|w| !taken(w))
        .unwrap_or(stem)
}

/// Chooses `<entity>_by_<key>` names, unique across the design. Tables whose entity is a plain
/// CQL name are named first, so `users` keeps `users_by_id` whatever the order and `"Users"`
/// gets the suffix; each name that does not spell its entity as written says why.
pub fn name_tables(schema: &Schema, tables: &mut [TableBuild]) {
    let mut taken: BTreeMap<String, String> = BTreeMap::new();
    let mut order: Vec<usize> = (0..tables.len()).collect();
    order.sort_by_key(|&i| naming::sanitize(&tables[i].root) != tables[i].root);
    for i in order {
        let t = &mut tables[i];
        let root_name = naming::sanitize(&t.root);
        let mut why: Vec<String> = Vec::new();
        if root_name != t.root {
            why.push(format!(
                "CQL table names are letters, digits and `_`: `{}` is written `{root_name}`",
                t.root
            ));
        }
        let base = base_name(schema, t, &root_name);
        let mut name = naming::fit_length(&base);
        if name != base {
            why.push(format!(
                "`{base}` is longer than Cassandra's {} characters: shortened, with a hash of the whole",
                naming::MAX_TABLE_NAME
            ));
        }
        if taken.contains_key(&name) {
            if let Some((KeySrc::Col(c), _)) = t.clustering.first() {
                let prefix = schema.table(&c.table).and_then(naming::column_prefix);
                name = naming::fit_length(&format!(
                    "{base}_{}",
                    naming::sanitize(&naming::key_word(&c.column, prefix.as_deref()))
                ));
            }
        }
        let mut n = 2;
        let stem = name.clone();
        while taken.contains_key(&name) {
            name = naming::fit_length(&format!("{stem}_{n}"));
            n += 1;
        }
        if let Some(other) = taken.get(&stem).filter(|_| name != stem) {
            why.push(format!(
                "`{stem}` is the table of `{other}`: suffixed to keep the two apart"
            ));
        }
        taken.insert(name.clone(), t.root.clone());
        t.name = name;
        t.name_note = (!why.is_empty()).then(|| why.join("; "));
    }
}

/// `<entity>_by_<key words>` (or `<entity>_all`), with `_without_<col>` for a NULL filter.
fn base_name(schema: &Schema, t: &TableBuild, root_name: &str) -> String {
    let words: Vec<String> = if t.is_primary_lookup(schema) {
        vec!["id".into()]
    } else {
        t.partition
            .iter()
            .map(|k| match k {
                KeySrc::Col(c) => {
                    let prefix = schema.table(&c.table).and_then(naming::column_prefix);
                    naming::sanitize(&naming::key_word(&c.column, prefix.as_deref()))
                }
                KeySrc::Bucket(_, b) => naming::bucket_word(*b).to_string(),
                KeySrc::Const(_) => "all".to_string(),
                KeySrc::RowId(_) => "id".to_string(),
            })
            .collect()
    };
    // Two key columns that shorten to the same word keep their full names.
    let words: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| match &t.partition.get(i) {
            Some(KeySrc::Col(c)) if words.iter().filter(|x| *x == w).count() > 1 && w != "id" => {
                naming::sanitize(&c.column)
            }
            _ => w.clone(),
        })
        .collect();
    let mut base = if words.is_empty() || t.partition == [KeySrc::Const(keys::ALL.into())] {
        format!("{root_name}_all")
    } else {
        format!("{root_name}_by_{}", words.join("_"))
    };
    if !t.null_filter.is_empty() {
        let w: Vec<String> = t
            .null_filter
            .iter()
            .map(|c| naming::sanitize(&c.column))
            .collect();
        base = format!("{base}_without_{}", w.join("_"));
    }
    base
}

/// One join of a table's source SQL: the table joined (`to`, aliased `alias`) and the column
/// pairs it is joined on (the column of a table joined before, the column of `to`).
#[derive(Debug, Clone)]
pub struct JoinStep {
    /// The table joined.
    pub to: String,
    /// Its alias (`t1`, `t2`, …; the root is `t0`).
    pub alias: String,
    /// The alias it is joined to.
    pub from_alias: String,
    /// The column pairs of the ON clause: (joined before, `to`'s).
    pub on: Vec<(ColumnRef, ColumnRef)>,
    /// A LEFT JOIN (a parent the row may not have).
    pub outer: bool,
}

/// The joins of a table's source SQL, from its root along its join edges (breadth-first) until
/// every table whose columns it holds is joined.
pub fn join_steps(schema: &Schema, t: &TableBuild) -> Vec<JoinStep> {
    let Some(root) = schema.table(&t.root) else {
        return Vec::new();
    };
    let mut aliases: Vec<(String, String)> = vec![(root.key(), "t0".into())];
    let mut steps: Vec<JoinStep> = Vec::new();
    let mut wanted: Vec<String> = Vec::new();
    for src in t.columns.iter().filter_map(|(k, ..)| k.source()) {
        if src.table != root.key() && !wanted.contains(&src.table) {
            wanted.push(src.table.clone());
        }
    }
    let mut progress = true;
    while progress && wanted.iter().any(|w| !aliases.iter().any(|(n, _)| n == w)) {
        progress = false;
        for e in &t.edges {
            let find = |name: &str| {
                aliases
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, a)| a.clone())
            };
            let (from_alias, from, from_cols, to, to_cols, outer) =
                match (find(&e.child), find(&e.parent)) {
                    (Some(ca), None) => (
                        ca,
                        &e.child,
                        &e.child_cols,
                        &e.parent,
                        &e.parent_cols,
                        e.directed,
                    ),
                    (None, Some(pa)) => (
                        pa,
                        &e.parent,
                        &e.parent_cols,
                        &e.child,
                        &e.child_cols,
                        false,
                    ),
                    _ => continue,
                };
            let alias = format!("t{}", aliases.len());
            let on = from_cols
                .iter()
                .zip(to_cols.iter())
                .map(|(f, x)| (ColumnRef::new(from, f), ColumnRef::new(to, x)))
                .collect();
            steps.push(JoinStep {
                to: to.clone(),
                alias: alias.clone(),
                from_alias,
                on,
                outer,
            });
            aliases.push((to.clone(), alias));
            progress = true;
        }
    }
    steps
}

/// Fills `equals` of each column of table `t`: the source columns its joins make equal to the
/// column's source in every row (a LEFT JOIN's side is NULL or equal: a row without the parent
/// holds none of its columns, so the parent's key is no less determined).
pub fn join_equalities(schema: &Schema, t: &TableBuild, columns: &mut [DesignColumn]) {
    let mut classes: Vec<Vec<ColumnRef>> = Vec::new();
    for step in join_steps(schema, t) {
        for (a, b) in step.on {
            let ia = classes.iter().position(|c| c.contains(&a));
            let ib = classes.iter().position(|c| c.contains(&b));
            match (ia, ib) {
                (Some(i), Some(j)) if i != j => {
                    let moved = classes.remove(i.max(j));
                    classes[i.min(j)].extend(moved);
                }
                (Some(_), Some(_)) => {}
                (Some(i), None) => classes[i].push(b),
                (None, Some(j)) => classes[j].push(a),
                (None, None) => classes.push(vec![a, b]),
            }
        }
    }
    for c in columns.iter_mut() {
        let Some(src) = &c.source else { continue };
        if let Some(class) = classes.iter().find(|k| k.contains(src)) {
            let mut others: Vec<ColumnRef> = class.iter().filter(|x| *x != src).cloned().collect();
            others.sort();
            others.dedup();
            c.equals = others;
        }
    }
}

/// The query whose rows fill table `t`, as data: its root driving, joined along its join
/// edges, each column's value, the NULL filters, then `collections` (embedded children, each
/// aliased `e<n>`, joined to the root).
pub fn source_query(
    schema: &Schema,
    t: &TableBuild,
    collections: Vec<(String, SourceCollection)>,
    bucket_zone: &str,
) -> SourceQuery {
    let Some(root) = schema.table(&t.root) else {
        return SourceQuery::default();
    };
    let root_alias = "t0".to_string();
    let steps = join_steps(schema, t);
    let mut aliases: Vec<(String, String)> = vec![(root.key(), root_alias.clone())];
    let mut joins: Vec<SourceJoin> = Vec::new();
    for s in steps {
        joins.push(SourceJoin {
            table: s.to.clone(),
            alias: s.alias.clone(),
            outer: s.outer,
            on: s
                .on
                .iter()
                .map(|(f, x)| JoinKey {
                    column: x.column.clone(),
                    equals: SourceRef::new(&s.from_alias, &f.column),
                })
                .collect(),
        });
        aliases.push((s.to, s.alias));
    }
    let at = |c: &ColumnRef| {
        aliases
            .iter()
            .find(|(n, _)| *n == c.table)
            .map(|(_, a)| SourceRef::new(a, &c.column))
    };
    let mut numbered = false;
    let mut columns: Vec<SourceColumn> = Vec::new();
    for (k, name, ..) in &t.columns {
        let value = match (k, k.source().and_then(at)) {
            (KeySrc::Const(v), _) => SourceValue::Constant { value: v.clone() },
            (KeySrc::RowId(r), _) if *r == root.key() => {
                numbered = true;
                SourceValue::RowId
            }
            (KeySrc::Col(c), Some(r)) if t.null_encoding(c).is_some() => {
                match t.null_encoding(c).expect("matched above") {
                    Encoding::EpochMicrosNullLast => SourceValue::EpochMicrosNullLast(r),
                    encoding => SourceValue::Encoded {
                        column: r,
                        encoding,
                    },
                }
            }
            (KeySrc::Col(c), Some(r)) if t.encoded.contains(c) => SourceValue::EpochMicros(r),
            // A lookup column the source database does not have: its function of the column.
            (KeySrc::Col(c), Some(r)) if lookup_of(schema, c).is_some() => {
                let l = lookup_of(schema, c).expect("matched above");
                SourceValue::Lookup {
                    function: l.function,
                    column: SourceRef::new(&r.alias, &l.column),
                }
            }
            (KeySrc::Col(_), Some(r)) => SourceValue::Column(r),
            (KeySrc::Bucket(c, b), Some(r)) => SourceValue::Bucket {
                column: r,
                bucket: *b,
                at_utc: is_timestamptz(schema, c),
                time_zone: (bucket_zone != "UTC").then(|| bucket_zone.to_string()),
            },
            _ => SourceValue::Null,
        };
        columns.push(SourceColumn {
            name: name.clone(),
            value,
        });
    }
    for (name, c) in collections {
        columns.push(SourceColumn {
            name,
            value: SourceValue::Collection(c),
        });
    }
    let filters = t
        .null_filter
        .iter()
        .filter_map(|c| at(c).map(SourceFilter::IsNull))
        .collect();
    SourceQuery {
        table: root.key(),
        alias: root_alias,
        numbered,
        joins,
        columns,
        filters,
        group_by: Vec::new(),
    }
}

/// True when column `c` is a `timestamptz` (its buckets are cut on the UTC calendar).
fn is_timestamptz(schema: &Schema, c: &ColumnRef) -> bool {
    let ty = schema
        .table(&c.table)
        .and_then(|tt| tt.column(&c.column))
        .map(|cc| cc.sql_type.to_ascii_lowercase())
        .unwrap_or_default();
    ty.contains("with time zone") || ty.starts_with("timestamptz")
}

/// The lookup a column added by the analyzer stands for (`lower_email`: `lower(email)`).
fn lookup_of<'s>(schema: &'s Schema, c: &ColumnRef) -> Option<&'s remodel_model::Lookup> {
    schema.table(&c.table)?.column(&c.column)?.lookup.as_ref()
}

/// The index of `root`'s lookup-by-primary-key table, created when missing.
pub fn ensure_primary_lookup(
    schema: &Schema,
    builds: &mut Vec<TableBuild>,
    root: &str,
) -> Option<usize> {
    if let Some(i) = builds
        .iter()
        .position(|b| b.root == root && b.is_primary_lookup(schema))
    {
        return Some(i);
    }
    // A keyless table's stand-in (first column + the rest) is found by its warning.
    if let Some(i) = builds
        .iter()
        .position(|b| b.root == root && b.warnings.iter().any(|(c, _)| c == "no_source_key"))
    {
        return Some(i);
    }
    builds.push(TableBuild::by_primary_key(schema, root)?);
    Some(builds.len() - 1)
}
