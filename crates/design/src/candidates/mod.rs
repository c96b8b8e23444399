//! Pass 1, candidates: for every read, the ways it could be served — a table of its own by the
//! Chebotko rules with its parents' columns copied in, the same with the parents read by key
//! after the rows, a narrow index table whose rows are then read by key, or a table another read
//! already needs. Each way names the table layout it reads and the columns it needs there; the
//! layouts are shared, so two reads served by one layout need one table.
//!
//! In: the schema, the analysed workload, the relationships and the embedded collections
//! ([`crate::assemble::embed`]); out: [`Candidates`] — per read its options, over shared table
//! layouts ([`tables::TableBuild`]). Inside: what a read needs of a table ([`shape`]), its key by
//! the Chebotko rules ([`keys`]), the layouts and their finishing ([`tables`]), names
//! ([`naming`]) and the Postgres → CQL type mapping ([`type_mapping`]).
//!
//! Reads that are not a choice — one-offs, reads of a parent with its embedded children, reads
//! that cannot be designed — are recorded as they are served.

pub mod keys;
pub mod naming;
pub mod shape;
pub mod tables;
pub mod type_mapping;

use self::keys::{KeyPlan, KeySrc};
use self::shape::{Lookup, Parents, Shape};
use self::tables::TableBuild;
use crate::assemble::embed::{self, Embedding};
use crate::checklist::buckets::Zones;
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, EqualityOp, Relationship, Schema, SortOrder,
    StatementKind, Workload,
};

/// How an option serves its read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A table of its own, the parents' columns copied in.
    Own,
    /// A table of its own; the parents' columns read by key after the rows.
    OwnParentsByKey,
    /// A narrow table of keys; each row then read by its primary key.
    Index,
    /// A table laid out for another read.
    Reuse,
}

impl Kind {
    /// A label for the reviewer.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Own => "own table",
            Kind::OwnParentsByKey => "own table, parents read by key",
            Kind::Index => "index table + row lookup",
            Kind::Reuse => "reuse of another read's table",
        }
    }
}

/// One way to serve one read.
#[derive(Debug, Clone)]
pub struct ReadOption {
    /// Index of the read in the workload.
    pub pattern: usize,
    /// How it serves it.
    pub kind: Kind,
    /// The read's needs as this option sees them (lookups included).
    pub shape: Shape,
    /// The key layout the read uses (with the restrictions it binds).
    pub key: KeyPlan,
    /// The layout it reads first.
    pub layout: usize,
    /// The columns it needs in that layout's table.
    pub needs: Vec<ColumnRef>,
}

/// How a read that is not a choice is served.
#[derive(Debug, Clone)]
pub enum Fixed {
    /// A one-off statement: shapes nothing; the reason.
    OneOff(String),
    /// Cannot be designed: the reason.
    Unservable(String),
    /// Served from the parent's row, whose collection embeds the children: (embedding,
    /// parent columns read).
    Embedded(usize, Vec<ColumnRef>),
    /// Served by the counter table the costs chose (index into the chosen counters).
    Counter(usize),
}

/// Every way of serving every read.
#[derive(Debug, Default)]
pub struct Candidates {
    /// Table layouts (key, filters, joins); their columns come from the options chosen.
    pub layouts: Vec<TableBuild>,
    /// The options, grouped by read in workload order.
    pub options: Vec<ReadOption>,
    /// Reads served one way only, in workload order.
    pub fixed: Vec<(usize, Fixed)>,
    /// Problems found while shaping reads (pattern index, message).
    pub notes: Vec<(usize, String)>,
    /// The layout of each entity by its primary key (read by key after other reads).
    pub primary: std::collections::BTreeMap<String, usize>,
    /// Layouts that list child rows by their link to a parent (entity, link columns): a write of
    /// the parent reads them to update the children's copies of its columns.
    pub finders: std::collections::BTreeMap<(String, Vec<ColumnRef>), usize>,
}

impl Candidates {
    /// Serves each read of `counted` (workload index, counter index) by its counter table: its
    /// other options go.
    pub fn serve_by_counters(&mut self, counted: &[(usize, usize)]) {
        self.options
            .retain(|o| !counted.iter().any(|(pi, _)| *pi == o.pattern));
        for (pi, ci) in counted {
            self.fixed.push((*pi, Fixed::Counter(*ci)));
        }
    }
}

/// Enumerates the candidates of every read of the workload.
pub fn enumerate(
    schema: &Schema,
    workload: &Workload,
    relationships: &[Relationship],
    embeds: &[Embedding],
    small: &dyn Fn(&str) -> bool,
    (zones, forbidden): (&Zones, &crate::validate::self_check::Forbidden),
) -> Candidates {
    let mut c = Candidates::default();
    let updated = updated_columns(schema, workload);
    for (pi, p) in workload.patterns.iter().enumerate() {
        if p.kind != StatementKind::Select {
            continue;
        }
        if let Some(why) = forbidden.get(&p.id) {
            c.notes.push((pi, format!("no table designed: {why}")));
            c.fixed.push((pi, Fixed::Unservable(why.clone())));
            continue;
        }
        if let Some(why) = &p.analysis.one_off {
            c.fixed.push((pi, Fixed::OneOff(why.clone())));
            continue;
        }
        if let Some(ei) = embed::read_of(p, embeds) {
            let parent_cols: Vec<ColumnRef> = p
                .analysis
                .projection
                .iter()
                .filter(|col| col.table == embeds[ei].parent)
                .filter_map(|col| shape::canonical(schema, col))
                .collect();
            c.fixed.push((pi, Fixed::Embedded(ei, parent_cols)));
            continue;
        }
        let before = c.options.len();
        if let Err(why) = own_options(
            &mut c,
            schema,
            p,
            pi,
            relationships,
            &updated,
            (small, zones),
        ) {
            c.notes.push((pi, format!("no table designed: {why}")));
            c.fixed.push((pi, Fixed::Unservable(why)));
            continue;
        }
        index_option(&mut c, schema, pi, before);
    }
    reuse_options(&mut c, schema);
    finder_layouts(&mut c);
    c
}

/// For every option that copies a parent's columns into a table not partitioned by the link to
/// that parent, the layout listing the child rows by the link (an update of the parent reads it).
fn finder_layouts(c: &mut Candidates) {
    let mut wanted: Vec<(String, Vec<ColumnRef>)> = Vec::new();
    for o in &c.options {
        let layout = &c.layouts[o.layout];
        for e in o
            .shape
            .edges
            .iter()
            .filter(|e| e.directed && e.child == o.shape.root)
        {
            if !o.needs.iter().any(|n| n.table == e.parent) {
                continue;
            }
            let by: Vec<ColumnRef> = e
                .child_cols
                .iter()
                .map(|col| ColumnRef::new(&o.shape.root, col))
                .collect();
            let partitioned_by_link = layout.partition.len() == by.len()
                && layout.partition.iter().all(
                    |k| matches!(k, KeySrc::Col(col) if by.iter().any(|b| b.column == col.column)),
                );
            let key = (o.shape.root.clone(), by);
            if !partitioned_by_link && !wanted.contains(&key) {
                wanted.push(key);
            }
        }
    }
    for (root, by) in wanted {
        let existing = c.layouts.iter().position(|l| {
            l.root == root
                && l.null_filter.is_empty()
                && l.extra_keys.is_empty()
                && l.partition.len() == by.len()
                && l.partition.iter().all(
                    |k| matches!(k, KeySrc::Col(col) if by.iter().any(|b| b.column == col.column)),
                )
        });
        let i = existing.unwrap_or_else(|| {
            c.layouts.push(TableBuild::lookup(&root, &by));
            c.layouts.len() - 1
        });
        c.finders.insert((root, by), i);
    }
}

/// The layout of `shape` with `key`: an existing one it merges into, or a new one.
fn layout_for(c: &mut Candidates, schema: &Schema, shape: &Shape, key: &KeyPlan) -> Option<usize> {
    if key.partition.is_empty() {
        // Nothing to partition by: a scan of the entity's table by primary key.
        return primary_layout(c, schema, &shape.root);
    }
    if let Some(i) = c
        .layouts
        .iter_mut()
        .position(|b| b.merge_layout(shape, key))
    {
        return Some(i);
    }
    c.layouts.push(TableBuild::layout(shape, key));
    Some(c.layouts.len() - 1)
}

/// The layout of `root` by its primary key (created when missing).
pub fn primary_layout(c: &mut Candidates, schema: &Schema, root: &str) -> Option<usize> {
    let i = tables::ensure_primary_lookup(schema, &mut c.layouts, root)?;
    c.primary.insert(c.layouts[i].root.clone(), i);
    Some(i)
}

/// The read's own table, once with its parents copied in and, when the read only projects
/// them, once with the parents read by key after the rows.
fn own_options(
    c: &mut Candidates,
    schema: &Schema,
    p: &AccessPattern,
    pi: usize,
    relationships: &[Relationship],
    updated: &[ColumnRef],
    (small, zones): (&dyn Fn(&str) -> bool, &Zones),
) -> Result<(), String> {
    let copied = shape::derive(schema, p, relationships, Parents::Copied, updated)?;
    let by_key = shape::derive(schema, p, relationships, Parents::LookedUp, updated)?;
    let parent_lookups = |s: &Shape| s.lookups.iter().filter(|l| is_parent(s, l)).count();
    let variants = if parent_lookups(&by_key) > parent_lookups(&copied) {
        vec![(Kind::Own, copied), (Kind::OwnParentsByKey, by_key)]
    } else {
        vec![(Kind::Own, copied)]
    };
    for (kind, shape) in variants {
        let key = keys::plan(schema, &shape, small(&shape.root), zones);
        let Some(layout) = layout_for(c, schema, &shape, &key) else {
            return Err(format!(
                "`{}` has no columns to build a table from",
                shape.root
            ));
        };
        for l in &shape.lookups {
            primary_layout(c, schema, &l.table);
        }
        c.options.push(ReadOption {
            pattern: pi,
            kind,
            needs: shape.needed.clone(),
            shape,
            key,
            layout,
        });
    }
    Ok(())
}

/// The columns some UPDATE of the workload sets (canonical names).
fn updated_columns(schema: &Schema, workload: &Workload) -> Vec<ColumnRef> {
    let mut out = Vec::new();
    for p in workload
        .patterns
        .iter()
        .filter(|p| p.kind == StatementKind::Update && p.calls > 0)
    {
        let Some(w) = &p.analysis.write else { continue };
        for c in &w.columns_written {
            if let Some(c) = shape::canonical(schema, &ColumnRef::new(&w.table, c)) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// True when the lookup reads a parent of the root (not a table the join does not determine).
fn is_parent(s: &Shape, l: &Lookup) -> bool {
    s.edges
        .iter()
        .any(|e| e.directed && e.child == s.root && e.parent == l.table)
}

/// A narrow table of the read's key and the root's primary key, each row then read by that key
/// from the root's table: for a read of a few rows whose columns change often.
fn index_option(c: &mut Candidates, schema: &Schema, pi: usize, first: usize) {
    let Some(own) = c.options.get(first).cloned() else {
        return;
    };
    let s = &own.shape;
    let Some(root) = schema.table(&s.root) else {
        return;
    };
    let simple = !root.primary_key.is_empty()
        && !own.key.partition.is_empty()
        && !keys::pins_unique_key(&own.key.partition, root)
        && s.aggregates.is_empty()
        && s.group_by.is_empty()
        && s.client.is_empty()
        && s.extra_ranges.is_empty()
        && s.lookups.is_empty()
        && !own.key.client_sort
        && !own.key.partition_in
        && s.needed.iter().all(|col| col.table == root.key());
    if !simple {
        return;
    }
    let pk: Vec<ColumnRef> = root
        .primary_key
        .iter()
        .filter_map(|k| shape::canonical(schema, &ColumnRef::new(root.key(), k)))
        .collect();
    let mut shape = own.shape.clone();
    let key_cols: Vec<ColumnRef> = own
        .key
        .partition
        .iter()
        .filter_map(KeySrc::plain_column)
        .cloned()
        .chain(own.key.clustering.iter().map(|(col, _)| col.clone()))
        .collect();
    let row_cols: Vec<ColumnRef> = s
        .needed
        .iter()
        .filter(|col| !key_cols.contains(col) && !pk.contains(col))
        .cloned()
        .collect();
    if row_cols.is_empty() {
        // The key holds everything the read needs: the own table is already this narrow.
        return;
    }
    shape.lookups.push(Lookup {
        table: root.key(),
        columns: row_cols.clone(),
        via: pk
            .iter()
            .map(|col| BindValue::Current {
                column: col.clone(),
            })
            .collect(),
        rationale: "the rows are found in a narrow index table, then read by their key".into(),
    });
    shape.needed.retain(|col| !row_cols.contains(col));
    for col in &pk {
        if !shape.needed.contains(col) {
            shape.needed.push(col.clone());
        }
    }
    if primary_layout(c, schema, &root.key()).is_none() {
        return;
    }
    c.options.push(ReadOption {
        pattern: pi,
        kind: Kind::Index,
        needs: shape.needed.clone(),
        shape,
        key: own.key.clone(),
        layout: own.layout,
    });
}

/// For every read, the layouts of other reads that serve it from one partition: the layout's
/// partition bound by the read's `=`, its next clustering columns by the rest of them, then the
/// range, in an order the read accepts.
fn reuse_options(c: &mut Candidates, schema: &Schema) {
    let mut extra = Vec::new();
    for o in c.options.iter().filter(|o| o.kind == Kind::Own) {
        for (li, layout) in c.layouts.iter().enumerate() {
            if li == o.layout {
                continue;
            }
            if let Some(key) = reuse_key(schema, layout, &o.shape) {
                extra.push(ReadOption {
                    pattern: o.pattern,
                    kind: Kind::Reuse,
                    shape: o.shape.clone(),
                    key,
                    layout: li,
                    needs: o.shape.needed.clone(),
                });
            }
        }
    }
    c.options.extend(extra);
    c.options.sort_by_key(|o| o.pattern);
}

/// The key plan of `shape` read from `layout`, when the layout serves it from one partition.
fn reuse_key(schema: &Schema, layout: &TableBuild, shape: &Shape) -> Option<KeyPlan> {
    if layout.root != shape.root
        || layout.partition.is_empty()
        || !same_set(&layout.null_filter, &shape.null_filter)
        || !same_set(&layout.extra_keys, &shape.extra_keys)
        || shape.eq.iter().any(|e| e.op != EqualityOp::Eq)
        || !shape.group_by.is_empty()
    {
        return None;
    }
    let eq: Vec<&ColumnRef> = shape.eq.iter().map(|e| &e.column).collect();
    let partition_bound = layout
        .partition
        .iter()
        .all(|k| matches!(k, KeySrc::Col(col) if eq.contains(&col)));
    if !partition_bound {
        return None;
    }
    // The layout's clustering as the finished table will have it.
    let mut finished = layout.clone();
    tables::finish(schema, &mut finished, false);
    let clustering: Vec<(&ColumnRef, SortOrder)> = finished
        .clustering
        .iter()
        .filter_map(|(k, o)| k.plain_column().map(|col| (col, *o)))
        .collect();
    // A table clustered by a column whose NULL rows the read returns has left them out.
    if finished
        .clustering
        .iter()
        .filter_map(|(k, _)| k.plain_column())
        .any(|c| shape.nulls_returned.contains(c))
        || shape.null_sides_conflict(&layout.null_sides)
    {
        return None;
    }
    let rest: Vec<&ColumnRef> = eq
        .iter()
        .copied()
        .filter(|col| !layout.partition.contains(&KeySrc::Col((*col).clone())))
        .collect();
    if rest.len() > clustering.len()
        || !clustering[..rest.len()]
            .iter()
            .all(|(col, _)| rest.contains(col))
    {
        return None;
    }
    let next = rest.len();
    let mut key_clustering: Vec<(ColumnRef, Option<SortOrder>)> = clustering[..next]
        .iter()
        .map(|(col, _)| ((*col).clone(), None))
        .collect();
    if let Some((rc, _)) = &shape.range {
        if clustering.get(next).map(|(col, _)| *col) != Some(rc) {
            return None;
        }
        key_clustering.push((rc.clone(), None));
    }
    // ORDER BY: the following clustering columns, all in their order or all reversed.
    let start = rest.len();
    let mut relation: Option<bool> = None;
    for (i, (col, desc)) in shape.order.iter().enumerate() {
        let (cc, o) = clustering.get(start + i)?;
        if *cc != col {
            return None;
        }
        let same = (*o == SortOrder::Desc) == *desc;
        if relation.is_some_and(|r| r != same) {
            return None;
        }
        relation = Some(same);
    }
    Some(KeyPlan {
        partition: layout.partition.clone(),
        clustering: key_clustering,
        partitions_read: Some(1),
        partition_in: false,
        bucket: None,
        notes: Vec::new(),
        client_sort: false,
    })
}

fn same_set(a: &[ColumnRef], b: &[ColumnRef]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}
