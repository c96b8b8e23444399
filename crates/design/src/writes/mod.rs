//! Write paths: each INSERT/UPDATE/DELETE → the CQL statements it fans out to, what every bind
//! marker takes (the statement's values, values read first, current and new key values), the
//! reads it needs before writing, and whether the fan-out fits one batch.
//!
//! In: one write pattern and the finished tables; out: its [`WritePath`] (or what it misses:
//! [`Missing`], which the assembly turns into lookup tables). Inside: the new value of every
//! column ([`values`]), the conditions on the written rows ([`filter`]), the counter statements
//! (`counting`) and the reads besides the keyed statements (`semantics`).
//!
//! Values are named by source column and version ([`BindValue::Current`] before the write,
//! [`BindValue::New`] after it), so a reader of the plan — the validator, the replay, the
//! application's developer — can tell where each value comes from. A read before write is planned
//! only from a table that has the columns, by a key whose values are known at that point.

pub mod filter;
pub mod ttl;
pub mod values;

use self::filter::WritePredicate;
use crate::candidates::keys::KeySrc;
use crate::candidates::shape::Edge;
use crate::candidates::tables::TableBuild;
use crate::costs::sizing::Sizer;
use remodel_model::ident::cql_quote;
use remodel_model::{
    AccessPattern, Bind, BindValue, ColumnRef, ConflictClause, FromRow, Guard, NewValue,
    ReadBeforeWrite, Schema, StatementKind, Table, Upsert, Warning, WriteAction, WriteInfo,
    WritePath, WriteTarget,
};

mod counting;
mod semantics;

/// A lookup a write path needs and no table provides: rows of `entity` found by `by` (its
/// columns), holding `columns`.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// The source table whose rows are looked up.
    pub entity: String,
    /// The columns of `entity` they are found by.
    pub by: Vec<String>,
    /// The source columns the lookup must return.
    pub columns: Vec<ColumnRef>,
}

/// Which value of a column: before the write or after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Current,
    New,
}

/// A child → parent column pair (`books.owner_branch` → `branches.branch_id`): the parent row of
/// a row is found by the child's value.
#[derive(Debug, Clone, PartialEq)]
struct Link {
    child: ColumnRef,
    parent: ColumnRef,
}

/// The written statement: its table, the columns its WHERE binds by `=`, the columns it gives a
/// value and the conditions its rows must meet.
struct Stmt<'a> {
    kind: StatementKind,
    table: &'a Table,
    /// Columns the WHERE binds by `=`: their current values are known.
    key_eq: Vec<String>,
    /// Columns given a value (the statement's, defaults, generated), with true when the new value
    /// is computed from the current row.
    set: Vec<(String, bool)>,
    /// True when `key_eq` covers the primary key or a unique key (one row).
    by_primary_key: bool,
    /// The value every column takes ([`remodel_model::WritePath::values`]).
    values: Vec<NewValue>,
    /// The conditions of an UPDATE/DELETE on its rows.
    predicates: Vec<WritePredicate>,
    /// The rows an `UPDATE … FROM` reads besides the written one.
    from_rows: &'a [FromRow],
    /// `INSERT … ON CONFLICT`.
    conflict: Option<&'a ConflictClause>,
}

impl Stmt<'_> {
    fn sets(&self, c: &ColumnRef) -> bool {
        c.table == self.table.key() && self.set.iter().any(|(s, _)| *s == c.column)
    }
}

/// The statements of one write path while they are planned.
struct Planner<'a> {
    schema: &'a Schema,
    ks: String,
    tables: &'a [TableBuild],
    stmt: Stmt<'a>,
    links: Vec<Link>,
    reads: Vec<ReadBeforeWrite>,
    /// What each read provides: (read index, source column, version).
    provided: Vec<(usize, ColumnRef, Version)>,
    targets: Vec<WriteTarget>,
    missing: Vec<Missing>,
    notes: Vec<String>,
    bytes: f64,
    /// The read of the written rows when the statement picks several (not by primary key):
    /// every target on the written entity's tables runs once per row it returns.
    rows: Option<usize>,
    /// Why the statement cannot be applied by keyed statements.
    unsupported: Option<String>,
    /// The WHERE clause of each read (its CQL is written once its columns are final).
    read_where: Vec<String>,
    /// The target table whose statements are being planned: the reads made now serve it.
    for_table: Option<String>,
    /// That table's join edges (the paths along which it copies parents' columns).
    path_edges: Vec<Edge>,
    /// The zone bucket columns are cut in.
    bucket_zone: String,
    /// The read-modify-write an `INSERT … ON CONFLICT` becomes.
    upsert: Option<Upsert>,
    /// Warnings for the path.
    warnings: Vec<Warning>,
    /// True when the read of the written rows keeps only some (a filter the key does not apply).
    filtered: bool,
    /// The counter tables counting the written table's rows.
    counters: Vec<&'a crate::checklist::counters::Spec>,
}

/// The written table's columns the WHERE binds with `=` to a value (its own key's, not a FROM
/// row's), in the table's spelling.
fn key_equalities(schema: &Schema, p: &AccessPattern, w: &WriteInfo, st: &Table) -> Vec<String> {
    let canon = |c: &String| st.column(c).map(|cc| cc.name.clone());
    p.analysis
        .equality
        .iter()
        .filter(|e| {
            e.op == remodel_model::EqualityOp::Eq
                && e.value.is_some()
                && schema
                    .table(&e.column.table)
                    .is_some_and(|t| t.key() == st.key())
                && !filter::on_from_row(e, &w.from_rows)
        })
        .filter_map(|e| canon(&e.column.column))
        .collect()
}

/// The columns the write sets, each with whether its new value reads the old row; an upsert's
/// `DO UPDATE SET` columns included.
fn written_columns(values: &[NewValue], w: &WriteInfo, st: &Table) -> Vec<(String, bool)> {
    let canon = |c: &String| st.column(c).map(|cc| cc.name.clone());
    let mut set: Vec<(String, bool)> = values
        .iter()
        .map(|v| {
            let reads = values::reads_this(&v.value);
            (v.column.column.clone(), reads)
        })
        .collect();
    // An upsert's `DO UPDATE SET` columns are written too (on a conflict).
    for c in w
        .conflict
        .iter()
        .flat_map(|c| &c.set)
        .filter_map(|v| canon(&v.column))
    {
        if !set.iter().any(|(x, _)| *x == c) {
            set.push((c, true));
        }
    }
    set
}

/// Plans one write pattern over the finished, named tables; also returns the lookups it needs
/// and no table provides (the designer adds them and plans again).
pub fn plan(
    schema: &Schema,
    keyspace: &str,
    p: &AccessPattern,
    (tables, counters): (&[TableBuild], &[crate::checklist::counters::Spec]),
    sizer: &Sizer<'_>,
) -> (WritePath, Vec<Missing>) {
    let mut path = WritePath {
        pattern: p.id.clone(),
        targets: Vec::new(),
        read_before_write: Vec::new(),
        batch_bytes: 0,
        fits_batch: true,
        note: None,
        ..Default::default()
    };
    if let Some(why) = &p.analysis.one_off {
        path.one_off = true;
        path.note = Some(format!("one-off statement, not part of the design: {why}"));
        return (path, Vec::new());
    }
    let Some(w) = &p.analysis.write else {
        path.note = Some(p.analysis.unmodeled.clone().map_or_else(
            || "the analyzer found no write target for this statement".to_string(),
            |u| format!("not modelled by the analyzer: {u}"),
        ));
        return (path, Vec::new());
    };
    let Some(st) = schema.table(&w.table) else {
        path.note = Some(format!("writes `{}`, which is not in the schema", w.table));
        return (path, Vec::new());
    };
    let values = match values::statement_values(p, st) {
        Ok(v) => v,
        Err(why) => {
            path.unsupported = Some(why);
            return (path, Vec::new());
        }
    };
    path.warnings = values.warnings;
    let key_eq = key_equalities(schema, p, w, st);
    let set = written_columns(&values.values, w, st);
    let mut planner = Planner {
        schema,
        ks: cql_quote(keyspace),
        tables,
        stmt: Stmt {
            kind: p.kind,
            table: st,
            // One row: the WHERE binds the primary key or a unique key.
            by_primary_key: w.by_primary_key
                || std::iter::once(&st.primary_key)
                    .chain(st.unique_keys.iter().map(|u| &u.columns))
                    .any(|k| !k.is_empty() && k.iter().all(|c| key_eq.contains(c))),
            key_eq,
            set,
            values: values.values,
            predicates: filter::predicates(p, st),
            from_rows: &w.from_rows,
            conflict: w
                .conflict
                .as_ref()
                .filter(|_| p.kind == StatementKind::Insert),
        },
        links: links(schema, tables),
        reads: Vec::new(),
        provided: Vec::new(),
        targets: Vec::new(),
        missing: Vec::new(),
        notes: Vec::new(),
        bytes: 0.0,
        rows: None,
        unsupported: None,
        read_where: Vec::new(),
        for_table: None,
        path_edges: Vec::new(),
        bucket_zone: sizer.config.bucket_time_zone.clone(),
        upsert: None,
        warnings: Vec::new(),
        filtered: false,
        counters: counters.iter().filter(|c| c.root == st.key()).collect(),
    };
    planner.plan_all(sizer);
    let missing = planner.finish(&mut path, sizer);
    (path, missing)
}

/// The sources of `t`'s rows that `keep` picks: all its columns' when a copied column is in the
/// key (the rows move), else its key's.
fn copy_sources(
    t: &TableBuild,
    keys: &[KeySrc],
    in_key: bool,
    keep: impl Fn(&ColumnRef) -> bool,
) -> Vec<ColumnRef> {
    if in_key {
        Planner::sources(t)
            .into_iter()
            .filter(|c| keep(c))
            .collect()
    } else {
        keys.iter()
            .filter_map(|k| k.source().cloned())
            .filter(|c| keep(c))
            .collect()
    }
}

/// Child → parent links from the tables' join edges and the schema's foreign keys.
fn links(schema: &Schema, tables: &[TableBuild]) -> Vec<Link> {
    let edges: Vec<Edge> = tables.iter().flat_map(|t| t.edges.clone()).collect();
    let mut out: Vec<Link> = Vec::new();
    let mut add = |child: ColumnRef, parent: ColumnRef| {
        let l = Link { child, parent };
        if !out.contains(&l) {
            out.push(l);
        }
    };
    for l in edge_links(schema, &edges) {
        add(l.child, l.parent);
    }
    for (t, fk) in schema.foreign_keys() {
        let Some(rt) = schema.table(&fk.ref_table) else {
            continue;
        };
        for (c, p) in fk.columns.iter().zip(&fk.ref_columns) {
            if let (Some(c), Some(p)) = (column(schema, &t.key(), c), column(schema, &rt.key(), p))
            {
                add(c, p);
            }
        }
    }
    out
}

/// The column links of the directed `edges` (child column → parent column).
fn edge_links(schema: &Schema, edges: &[Edge]) -> Vec<Link> {
    edges
        .iter()
        .filter(|e| e.directed)
        .flat_map(|e| {
            e.child_cols
                .iter()
                .zip(&e.parent_cols)
                .filter_map(|(c, p)| {
                    Some(Link {
                        child: column(schema, &e.child, c)?,
                        parent: column(schema, &e.parent, p)?,
                    })
                })
        })
        .collect()
}

/// The directed edges leading from table `from` to table `to`, in order; `None` when they do not.
fn chain<'e>(edges: &'e [Edge], from: &str, to: &str) -> Option<Vec<&'e Edge>> {
    chain_depth(edges, from, to, 0)
}

fn chain_depth<'e>(edges: &'e [Edge], from: &str, to: &str, depth: usize) -> Option<Vec<&'e Edge>> {
    if from == to {
        return Some(Vec::new());
    }
    if depth > 8 {
        return None;
    }
    edges
        .iter()
        .filter(|e| e.directed && e.child == from && e.parent != from)
        .find_map(|e| {
            let mut rest = chain_depth(edges, &e.parent, to, depth + 1)?;
            rest.insert(0, e);
            Some(rest)
        })
}

/// The canonical reference to a column of the schema.
fn column(schema: &Schema, table: &str, col: &str) -> Option<ColumnRef> {
    let t = schema.table(table)?;
    Some(ColumnRef::new(t.key(), &t.column(col)?.name))
}

impl Planner<'_> {
    fn plan_all(&mut self, sizer: &Sizer<'_>) {
        let s = self.stmt.table.key();
        // The rows an `UPDATE … FROM` joins, then the row an upsert may conflict with, then the
        // rows the statement picks (with its conditions the key does not apply).
        if !self.joined_row_reads() || !self.existing_row() {
            return;
        }
        let counted = self.counted();
        if self.stmt.kind != StatementKind::Insert
            && (self.needs_rows() || counted)
            && !self.written_rows()
        {
            return;
        }
        if self.stmt.kind == StatementKind::Update {
            self.read_modify_write();
        }
        if self.unsupported.is_some() {
            return;
        }
        for t in self.tables {
            if t.root == s {
                self.own(t, sizer);
            } else if let Some(edge) = t
                .edges
                .iter()
                .find(|e| e.directed && e.child == t.root && e.parent == s)
            {
                self.copies(t, edge, sizer);
            } else if t.columns.iter().any(|(k, ..)| {
                matches!(k, KeySrc::Col(c) if self.stmt.sets(c) || (self.stmt.kind == StatementKind::Delete && c.table == s))
            }) {
                self.notes.push(format!(
                    "{} holds {s} columns through a join this write path does not maintain: review it",
                    t.name
                ));
            }
        }
        if counted || self.stmt.kind == StatementKind::Insert {
            let specs = self.counters.clone();
            for spec in specs {
                self.counter_targets(spec);
            }
        }
    }

    /// True when the value of `c` in `version` is known: given by the statement, implied by a
    /// known value through a parent link, or provided by a planned read.
    fn known(&self, c: &ColumnRef, v: Version) -> bool {
        self.known_depth(c, v, 0)
    }

    fn known_depth(&self, c: &ColumnRef, v: Version, depth: usize) -> bool {
        depth <= 8
            && (self.direct(c, v, depth)
                || self
                    .children_of(c)
                    .iter()
                    .any(|child| self.known_depth(child, v, depth + 1)))
    }

    /// The columns of the written row (or its ancestors) whose value is `c`'s.
    fn children_of(&self, c: &ColumnRef) -> Vec<ColumnRef> {
        self.links_where(|l| l.parent == *c)
    }

    /// The columns through which the written row reaches rows of `table`.
    fn link_children(&self, table: &str) -> Vec<ColumnRef> {
        self.links_where(|l| l.parent.table == table)
    }

    /// The child columns of the links `pick` takes that start from the written row or its
    /// ancestors: along the edges of the table being planned when any leads there (a
    /// comment's author is its `from_user_id`, not whichever other column refers to users),
    /// else along every parent link.
    fn links_where(&self, pick: impl Fn(&Link) -> bool) -> Vec<ColumnRef> {
        let usable = |l: &Link| pick(l) && self.reaches_written(&l.child.table);
        let on_path: Vec<ColumnRef> = edge_links(self.schema, &self.path_edges)
            .into_iter()
            .filter(|l| usable(l))
            .map(|l| l.child)
            .collect();
        if !on_path.is_empty() {
            return on_path;
        }
        self.links
            .iter()
            .filter(|l| usable(l))
            .map(|l| l.child.clone())
            .collect()
    }

    /// True when `t` holds `c` from the row the table being planned copies it from: another
    /// table's copy of a parent is that row only when it reaches the parent along the same
    /// edges (an item's seller is a user, as a comment's author is, but not the same one).
    fn same_row(&self, t: &TableBuild, c: &ColumnRef) -> bool {
        let s = self.stmt.table.key();
        if c.table == t.root || c.table == s || self.path_edges.is_empty() {
            return true;
        }
        let (Some(ours), Some(theirs)) = (
            chain(&self.path_edges, &s, &c.table),
            chain(&t.edges, &t.root, &c.table),
        ) else {
            return true;
        };
        match ours.iter().position(|e| e.child == t.root) {
            Some(i) => ours[i..] == theirs[..],
            None => t.root == s && ours == theirs,
        }
    }

    /// True when the value of `c` is known without following a parent link: from the
    /// statement, a planned read, or (for a value the write leaves alone) its current value.
    fn direct(&self, c: &ColumnRef, v: Version, depth: usize) -> bool {
        let s = &self.stmt;
        let own = c.table == s.table.key();
        let from_stmt = match (v, s.kind) {
            // A new row: every value is new (columns the INSERT omits are NULL or defaulted).
            (_, StatementKind::Insert) if own => v == Version::New,
            (Version::Current, _) if own => s.key_eq.contains(&c.column),
            (Version::New, _) if own => match s.set.iter().find(|(x, _)| *x == c.column) {
                Some((_, reads)) => !reads || self.inputs_known(c, depth + 1),
                None => self.known_depth(c, Version::Current, depth + 1),
            },
            // A parent's value is new only when the link to it changes.
            (Version::New, _) if !self.link_changes(c) => {
                self.known_depth(c, Version::Current, depth + 1)
            }
            _ => false,
        };
        from_stmt || self.provided.iter().any(|(_, x, pv)| x == c && *pv == v)
    }

    /// True when the current values a new value of `c` is computed from are known (`SET a = b -
    /// $1` needs the current `b`; a value with no expression, its own current value).
    fn inputs_known(&self, c: &ColumnRef, depth: usize) -> bool {
        let Some(v) = self.stmt.values.iter().find(|v| v.column == *c) else {
            return self.known_depth(c, Version::Current, depth);
        };
        let mut inputs: Vec<ColumnRef> = Vec::new();
        v.value.walk(&mut |e| {
            if let remodel_model::Expr::Column {
                column,
                row: remodel_model::RowRef::This,
            } = e
            {
                inputs.push(column.clone());
            }
        });
        inputs
            .iter()
            .all(|i| self.known_depth(i, Version::Current, depth))
    }

    /// The bind for the value of `c` in version `v`, naming a value the statement or a read
    /// gives: a new value the write leaves unchanged is bound as the current one, and a value
    /// known only through a parent link as the child column that holds it.
    fn bind_of(&self, c: &ColumnRef, v: Version) -> BindValue {
        let own = c.table == self.stmt.table.key();
        let unchanged = v == Version::New
            && self.stmt.kind != StatementKind::Insert
            && !self.changes(c)
            && !(own && self.stmt.sets(c));
        if unchanged {
            return self.bind_of(c, Version::Current);
        }
        let from_stmt = own
            && match v {
                Version::Current => self.stmt.key_eq.contains(&c.column),
                Version::New => self.stmt.kind == StatementKind::Insert || self.stmt.sets(c),
            };
        let provided = self.provided.iter().any(|(_, x, pv)| x == c && *pv == v);
        let column = if from_stmt || provided {
            c.clone()
        } else {
            match self
                .children_of(c)
                .into_iter()
                .find(|child| self.known(child, v))
            {
                Some(child) => return self.bind_of(&child, v),
                None => c.clone(),
            }
        };
        match v {
            Version::Current => BindValue::Current { column },
            Version::New => BindValue::New { column },
        }
    }

    /// True when `table` is the written table or one of its ancestors (by parent links).
    fn reaches_written(&self, table: &str) -> bool {
        let mut frontier = vec![self.stmt.table.key()];
        let mut seen = frontier.clone();
        while let Some(t) = frontier.pop() {
            if t == table {
                return true;
            }
            for l in self.links.iter().filter(|l| l.child.table == t) {
                if !seen.contains(&l.parent.table) {
                    seen.push(l.parent.table.clone());
                    frontier.push(l.parent.table.clone());
                }
            }
        }
        false
    }

    /// True when the write changes which row of `c`'s table belongs to the written row (an
    /// INSERT, or an UPDATE of the link column).
    fn link_changes(&self, c: &ColumnRef) -> bool {
        if c.table == self.stmt.table.key() {
            return false;
        }
        // The table being planned joins its parents along its own edges: the parent row of a
        // copied column changes only when the edge out of the written row on that path does.
        if let Some(first) = self.first_edge_to(&c.table) {
            return self.stmt.kind == StatementKind::Insert
                || first
                    .child_cols
                    .iter()
                    .any(|col| self.stmt.set.iter().any(|(x, _)| x == col));
        }
        self.link_changes_depth(&c.table, 0)
    }

    /// The edge leaving the written table on the current table's join path to `parent`.
    fn first_edge_to(&self, parent: &str) -> Option<&Edge> {
        let s = &self.stmt.table.key();
        let edges: Vec<&Edge> = self.path_edges.iter().filter(|e| e.directed).collect();
        edges
            .iter()
            .copied()
            .filter(|e| &e.child == s)
            .find(|first| {
                // Reachable from this edge's parent (or it is the parent).
                let mut frontier = vec![first.parent.clone()];
                let mut seen = frontier.clone();
                while let Some(t) = frontier.pop() {
                    if t == parent {
                        return true;
                    }
                    for e in edges.iter().filter(|e| e.child == t) {
                        if !seen.contains(&e.parent) {
                            seen.push(e.parent.clone());
                            frontier.push(e.parent.clone());
                        }
                    }
                }
                false
            })
    }

    fn link_changes_depth(&self, table: &str, depth: usize) -> bool {
        if table == self.stmt.table.key() || depth > 8 {
            return false;
        }
        self.stmt.kind == StatementKind::Insert
            || self
                .links
                .iter()
                .filter(|l| l.parent.table == table && l.child.table != table)
                .filter(|l| self.reaches_written(&l.child.table))
                .any(|l| {
                    self.stmt.sets(&l.child) || self.link_changes_depth(&l.child.table, depth + 1)
                })
    }

    /// The bind value of a key element or column in a version.
    fn value(&self, k: &KeySrc, v: Version) -> BindValue {
        let of = |c: &ColumnRef| self.bind_of(c, v);
        match k {
            KeySrc::Col(c) => of(c),
            KeySrc::Bucket(c, b) => BindValue::Bucket {
                bucket: *b,
                of: Box::new(of(c)),
                time_zone: self.bucket_zone.clone(),
            },
            KeySrc::Const(v) => BindValue::Literal {
                value: remodel_model::Literal::Text { value: v.clone() },
            },
            KeySrc::RowId(table) => BindValue::RowId {
                table: table.clone(),
            },
        }
    }

    /// Plans reads so that every column of `need` is known in `version`; what no table can
    /// provide is recorded as missing.
    fn ensure(&mut self, need: &[ColumnRef], version: Version, why: &str) {
        if version == Version::New {
            // A value the write does not change is its current one: read it as such.
            let (new, same): (Vec<ColumnRef>, Vec<ColumnRef>) =
                need.iter().cloned().partition(|c| self.changes(c));
            self.ensure(&same, Version::Current, why);
            if new.is_empty() {
                return;
            }
            return self.ensure_version(&new, Version::New, why);
        }
        self.ensure_version(need, version, why)
    }

    fn ensure_version(&mut self, need: &[ColumnRef], version: Version, why: &str) {
        // A parent's columns are found through the written row's link columns: need those too.
        let mut need: Vec<ColumnRef> = need.to_vec();
        let mut i = 0;
        while i < need.len() {
            let c = need[i].clone();
            if c.table != self.stmt.table.key() {
                for child in self.link_children(&c.table) {
                    if !need.contains(&child) {
                        need.push(child);
                    }
                }
            }
            i += 1;
        }
        loop {
            let open: Vec<ColumnRef> = need
                .iter()
                .filter(|c| !self.known(c, version))
                .cloned()
                .collect();
            if open.is_empty() {
                return;
            }
            if self.extend_read(&open, version) {
                continue;
            }
            match self.best_source(&open, version) {
                Some(i) => self.add_read(i, &open, version, why),
                None => {
                    let entity = open[0].table.clone();
                    let by = self
                        .schema
                        .table(&entity)
                        .map(|t| t.primary_key.clone())
                        .unwrap_or_default();
                    let columns: Vec<ColumnRef> =
                        open.iter().filter(|c| c.table == entity).cloned().collect();
                    let cols: Vec<String> = open.iter().map(|c| c.to_string()).collect();
                    self.notes.push(format!(
                        "no table gives {} by a key this write knows: a lookup table is needed",
                        cols.join(", ")
                    ));
                    self.missing.push(Missing {
                        entity,
                        by,
                        columns,
                    });
                    return;
                }
            }
        }
    }

    /// Adds columns of `open` to a one-row read already planned whose table has them (one read
    /// of a row rather than two); true when it did.
    fn extend_read(&mut self, open: &[ColumnRef], version: Version) -> bool {
        let found = self.reads.iter().enumerate().find_map(|(ri, r)| {
            if r.many || r.reads_new != (version == Version::New) {
                return None;
            }
            let t = self.tables.iter().find(|t| t.name == r.table)?;
            let gives: Vec<(String, ColumnRef)> = open
                .iter()
                .filter(|c| self.same_row(t, c))
                .filter_map(|c| Some((t.col_name(c)?.to_string(), c.clone())))
                .collect();
            (!gives.is_empty()).then_some((ri, gives))
        });
        let Some((ri, gives)) = found else {
            return false;
        };
        let r = &mut self.reads[ri];
        for (n, c) in gives {
            if !r.columns.contains(&n) {
                r.columns.push(n);
            }
            self.provided.push((ri, c, version));
        }
        if let Some(ft) = &self.for_table {
            if !r.for_tables.contains(ft) {
                r.for_tables.push(ft.clone());
            }
        }
        true
    }

    /// The table to read (one row) that provides the most of `open`, keyed by known values.
    fn best_source(&self, open: &[ColumnRef], version: Version) -> Option<usize> {
        let mut best: Option<(usize, usize, usize)> = None;
        for (i, t) in self.tables.iter().enumerate() {
            if !t.null_filter.is_empty() || !t.extra_keys.is_empty() || t.partition.is_empty() {
                continue;
            }
            let keyed = |ks: &[KeySrc]| {
                ks.iter().all(|k| match k.source() {
                    Some(c) => self.known(c, version),
                    // A row id is never implied by known values: read with the rows.
                    None => k.is_const(),
                })
            };
            if !keyed(&t.partition) {
                continue;
            }
            // Tables of the written entity hold the copies made through its current links:
            // they give no new values of a parent it moves to.
            if version == Version::New && t.root == self.stmt.table.key() {
                continue;
            }
            let one_row = self
                .schema
                .table(&t.root)
                .is_some_and(|rt| crate::candidates::keys::pins_unique_key(&t.partition, rt))
                || keyed(&t.key_elements());
            if !one_row || !self.reaches_written(&t.root) {
                continue;
            }
            let gives = open
                .iter()
                .filter(|c| t.col_name(c).is_some() && self.same_row(t, c))
                .count();
            if gives == 0 {
                continue;
            }
            // Most columns first, then the shortest key (a lookup by id), then the narrowest table.
            let score = (
                gives,
                usize::MAX - t.key_elements().len() * 1000 - t.columns.len(),
            );
            if best.is_none_or(|(_, g, w)| score > (g, w)) {
                best = Some((i, score.0, score.1));
            }
        }
        best.map(|(i, ..)| i)
    }

    /// Adds a one-row read of `tables[i]` for the columns of `open` it has.
    fn add_read(&mut self, i: usize, open: &[ColumnRef], version: Version, why: &str) {
        let t = &self.tables[i];
        let key = if self
            .schema
            .table(&t.root)
            .is_some_and(|rt| crate::candidates::keys::pins_unique_key(&t.partition, rt))
        {
            t.partition.clone()
        } else {
            t.key_elements()
        };
        let (wk, binds) = self.where_key(t, &key, version);
        self.add_select(t, open, wk, binds, false, version, why.to_string());
    }

    /// Adds a read of the columns of `want` that `t` has, by `wk`; returns its index.
    #[allow(clippy::too_many_arguments)]
    fn add_select(
        &mut self,
        t: &TableBuild,
        want: &[ColumnRef],
        wk: String,
        binds: Vec<Bind>,
        many: bool,
        version: Version,
        why: String,
    ) -> usize {
        let cols: Vec<ColumnRef> = want
            .iter()
            .filter(|c| t.col_name(c).is_some())
            .cloned()
            .collect();
        let mut names: Vec<String> = cols
            .iter()
            .filter_map(|c| t.col_name(c).map(str::to_string))
            .collect();
        if many {
            // Rows of a table without a key are told apart by their ids: each statement run
            // per row read addresses its row by it.
            names.extend(
                t.columns
                    .iter()
                    .filter(|(k, ..)| matches!(k, KeySrc::RowId(_)))
                    .map(|(_, n, ..)| n.clone()),
            );
        }
        let idx = self.reads.len();
        self.read_where.push(wk);
        self.reads.push(ReadBeforeWrite {
            table: t.name.clone(),
            // Written when the path is finished: later needs may add columns to this read.
            cql: String::new(),
            columns: names,
            for_tables: self.for_table.iter().cloned().collect(),
            note: Some(why),
            binds,
            many,
            reads_new: version == Version::New,
            filter: Vec::new(),
            name: None,
        });
        for c in cols {
            self.provided.push((idx, c, version));
        }
        idx
    }

    /// `k1 = ? AND k2 = ?` over key elements, with their binds.
    fn where_key(&self, t: &TableBuild, key: &[KeySrc], v: Version) -> (String, Vec<Bind>) {
        let mut conds = Vec::new();
        let mut binds = Vec::new();
        for k in key {
            let Some(name) = t.name_of(k) else { continue };
            conds.push(format!("{} = ?", cql_quote(name)));
            binds.push(t.bind(name, self.value(k, v)));
        }
        (conds.join(" AND "), binds)
    }

    fn push(
        &mut self,
        t: &TableBuild,
        mut target: WriteTarget,
        cols: Option<&[String]>,
        sizer: &Sizer<'_>,
    ) {
        self.bytes += sizer.row_bytes(t, cols) + 16.0;
        if t.root == self.stmt.table.key() && target.for_each.is_none() {
            target.for_each = self.rows;
        }
        if let Some(c) = t
            .expires
            .clone()
            .filter(|_| target.action != WriteAction::Delete)
        {
            // Every cell written lives as long as the row: an UPDATE that leaves the column
            // alone still needs its value, read first.
            self.ensure(
                std::slice::from_ref(&c),
                Version::New,
                &format!("{c}, the instant the {} row expires, for its TTL", t.name),
            );
            target = ttl::with_ttl(target, self.bind_of(&c, Version::New));
        }
        self.targets.push(target);
    }

    /// The source columns of a table's plain and bucketed columns (embedded collections aside).
    fn sources(t: &TableBuild) -> Vec<ColumnRef> {
        let mut out: Vec<ColumnRef> = Vec::new();
        for c in t.columns.iter().filter_map(|(k, ..)| k.source()) {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    /// An INSERT of the whole row of `t` with new values.
    fn insert_row(&self, t: &TableBuild, only: Option<&dyn Fn(&KeySrc) -> bool>) -> WriteTarget {
        let mut names = Vec::new();
        let mut binds = Vec::new();
        for (k, n, ..) in &t.columns {
            if only.is_some_and(|f| !f(k)) {
                continue;
            }
            names.push(cql_quote(n));
            binds.push(t.bind(n, self.value(k, Version::New)));
        }
        WriteTarget {
            counter: None,
            table: t.name.clone(),
            cql: format!(
                "INSERT INTO {}.{} ({}) VALUES ({})",
                self.ks,
                cql_quote(&t.name),
                names.join(", "),
                vec!["?"; names.len()].join(", ")
            ),
            action: WriteAction::Insert,
            binds,
            for_each: None,
            guard: None,
        }
    }

    /// A DELETE of the row of `t` that the current key values address.
    fn delete_row(&self, t: &TableBuild, guard: Option<Guard>) -> WriteTarget {
        let (wk, binds) = self.where_key(t, &t.key_elements(), Version::Current);
        WriteTarget {
            counter: None,
            table: t.name.clone(),
            cql: format!("DELETE FROM {}.{} WHERE {wk}", self.ks, cql_quote(&t.name)),
            action: WriteAction::Delete,
            binds,
            for_each: None,
            guard,
        }
    }

    /// An UPDATE of `t` setting `sets` (new values) in the row the current key addresses.
    fn update_row(
        &self,
        t: &TableBuild,
        sets: &[(String, BindValue)],
        key: &[KeySrc],
    ) -> WriteTarget {
        let (wk, key_binds) = self.where_key(t, key, Version::Current);
        let mut binds: Vec<Bind> = sets.iter().map(|(n, v)| t.bind(n, v.clone())).collect();
        binds.extend(key_binds);
        WriteTarget {
            counter: None,
            table: t.name.clone(),
            cql: update_cql(
                &self.ks,
                t,
                &sets.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
                &wk,
            ),
            action: WriteAction::Update,
            binds,
            for_each: None,
            guard: None,
        }
    }

    /// The targets of a table of the written entity.
    fn own(&mut self, t: &TableBuild, sizer: &Sizer<'_>) {
        self.for_table = Some(t.name.clone());
        self.path_edges = t.edges.clone();
        let keys = t.key_elements();
        let s = self.stmt.table.key();
        let sources = Self::sources(t);
        match self.stmt.kind {
            StatementKind::Insert => {
                self.note_unset_keys(t, &keys);
                let set = |k: &KeySrc| {
                    keys.contains(k)
                        || k.source()
                            .is_some_and(|c| c.table != s || self.stmt.sets(c))
                };
                let target = self.insert_row(t, Some(&set));
                let needed: Vec<ColumnRef> =
                    sources.iter().filter(|c| c.table != s).cloned().collect();
                self.ensure(&needed, Version::New, "copied from the parent row");
                let guard = t
                    .null_filter
                    .iter()
                    .find(|c| self.stmt.sets(c))
                    .map(|c| Guard::NewIsNull { column: c.clone() });
                let cols: Vec<String> = target.binds.iter().map(|b| b.column.clone()).collect();
                self.push(t, WriteTarget { guard, ..target }, Some(&cols), sizer);
            }
            StatementKind::Delete => {
                let key_src: Vec<ColumnRef> =
                    keys.iter().filter_map(|k| k.source().cloned()).collect();
                self.ensure(
                    &key_src,
                    Version::Current,
                    &format!("the key of the {} row", t.name),
                );
                let target = self.delete_row(t, None);
                self.push(t, target, Some(&[]), sizer);
            }
            StatementKind::Update => self.own_update(t, &keys, &sources, sizer),
            StatementKind::Select => {}
        }
    }

    /// True when the write changes the value of `c` for the written row.
    fn changes(&self, c: &ColumnRef) -> bool {
        self.stmt.sets(c) || (c.table != self.stmt.table.key() && self.link_changes(c))
    }

    fn own_update(
        &mut self,
        t: &TableBuild,
        keys: &[KeySrc],
        sources: &[ColumnRef],
        sizer: &Sizer<'_>,
    ) {
        let key_changed: Vec<ColumnRef> = keys
            .iter()
            .filter_map(|k| k.source().cloned())
            .filter(|c| self.changes(c))
            .collect();
        let leaves: Vec<ColumnRef> = t
            .null_filter
            .iter()
            .filter(|c| self.stmt.sets(c))
            .cloned()
            .collect();
        let set_cols: Vec<(String, BindValue)> = t
            .columns
            .iter()
            .skip(keys.len())
            .filter(|(k, ..)| k.source().is_some_and(|c| self.changes(c)))
            .map(|(k, n, ..)| (n.clone(), self.value(k, Version::New)))
            .collect();
        if key_changed.is_empty() && leaves.is_empty() && set_cols.is_empty() {
            return;
        }
        let key_src: Vec<ColumnRef> = keys.iter().filter_map(|k| k.source().cloned()).collect();
        self.ensure(
            &key_src,
            Version::Current,
            &format!("the key of the {} row", t.name),
        );
        if !key_changed.is_empty() || !leaves.is_empty() {
            // The row moves (a key changes) or leaves/joins the table (its IS NULL filter):
            // DELETE it by its current key, INSERT it whole with the new values.
            self.ensure(
                sources,
                Version::New,
                &format!("every column of the {} row, to write it again", t.name),
            );
            let (del_guard, ins_guard) = match leaves.first() {
                Some(c) if key_changed.is_empty() => (
                    Some(Guard::NewIsNotNull { column: c.clone() }),
                    Some(Guard::NewIsNull { column: c.clone() }),
                ),
                _ => (
                    Some(Guard::KeyChanged {
                        columns: key_changed.clone(),
                    }),
                    None,
                ),
            };
            let del = self.delete_row(t, del_guard);
            self.push(t, del, Some(&[]), sizer);
            let ins = self.insert_row(t, None);
            self.push(
                t,
                WriteTarget {
                    guard: ins_guard,
                    ..ins
                },
                None,
                sizer,
            );
            if !key_changed.is_empty() {
                let names: Vec<String> = key_changed.iter().map(|c| c.to_string()).collect();
                self.notes.push(format!(
                    "the UPDATE changes {} in the key of {}: the row moves (DELETE by the current key when it changed, INSERT with the new values)",
                    names.join(", "),
                    t.name
                ));
            }
            return;
        }
        let needed: Vec<ColumnRef> = t
            .columns
            .iter()
            .skip(keys.len())
            .filter(|(k, ..)| k.source().is_some_and(|c| self.changes(c)))
            .filter_map(|(k, ..)| k.source().cloned())
            .collect();
        self.ensure(&needed, Version::New, "the new values of copied columns");
        let cols: Vec<String> = set_cols.iter().map(|(n, _)| n.clone()).collect();
        let target = self.update_row(t, &set_cols, keys);
        self.push(t, target, Some(&cols), sizer);
    }

    /// Notes INSERTs that leave a key column of `t` to Postgres.
    fn note_unset_keys(&mut self, t: &TableBuild, keys: &[KeySrc]) {
        let s = self.stmt.table;
        for c in keys.iter().filter_map(|k| k.source()) {
            if c.table != s.name || self.stmt.sets(c) {
                continue;
            }
            let generated = s
                .column(&c.column)
                .is_some_and(|col| col.identity.is_some() || col.default.is_some());
            let msg = if generated {
                format!("{c} is a key of {} but generated by Postgres (default/serial): the application must supply it (for example a uuid)", t.name)
            } else {
                format!("{c} is a key of {} but the INSERT does not set it", t.name)
            };
            if !self.notes.contains(&msg) {
                self.notes.push(msg);
            }
        }
    }

    /// The note that a deletion leaves the deleted row's columns copied in `t` until its own rows go.
    fn note_deleted_copies(&mut self, t: &TableBuild) {
        let s = self.stmt.table.key();
        if t.columns
            .iter()
            .any(|(k, ..)| k.source().is_some_and(|c| c.table == s))
        {
            self.notes.push(format!(
                "{} keeps copies of the deleted {s} row's columns until its own rows are removed",
                t.name
            ));
        }
    }

    /// The copied columns of a table partitioned by the parent's key, static: one UPDATE (per
    /// written row, when the rows are read first).
    fn update_static_copies(
        &mut self,
        t: &TableBuild,
        sets: &[(String, BindValue)],
        parent_key: &[ColumnRef],
        sizer: &Sizer<'_>,
    ) {
        let mut target = self.update_row(t, sets, &t.partition);
        target.for_each = self.rows;
        for (b, p) in target.binds.iter_mut().skip(sets.len()).zip(parent_key) {
            b.value = BindValue::Current { column: p.clone() };
        }
        let cols: Vec<String> = sets.iter().map(|(n, _)| n.clone()).collect();
        self.push(t, target, Some(&cols), sizer);
    }

    /// No table lists the child rows of the written row by their link columns: the lookup needed,
    /// and a note.
    fn children_unlisted(
        &mut self,
        t: &TableBuild,
        edge: &Edge,
        child_fk: &[ColumnRef],
        need: &[ColumnRef],
    ) {
        let s = self.stmt.table.key();
        self.missing.push(Missing {
            entity: t.root.clone(),
            by: child_fk.iter().map(|c| c.column.clone()).collect(),
            columns: need.iter().filter(|c| c.table == t.root).cloned().collect(),
        });
        self.notes.push(format!(
            "no table lists the {} rows of a {s} row by ({}): a lookup table is needed to update their copies in {}",
            t.root,
            edge.child_cols.join(", "),
            t.name
        ));
    }

    /// A copied column is in `t`'s key: each copying row (read as `ri`) moves, a DELETE where the
    /// key changed and an INSERT.
    fn move_copying_rows(
        &mut self,
        t: &TableBuild,
        ri: usize,
        partial: Option<Guard>,
        copied: &[(KeySrc, String)],
        sizer: &Sizer<'_>,
    ) {
        let s = self.stmt.table.key();
        let copied_src: Vec<ColumnRef> = copied
            .iter()
            .filter_map(|(k, _)| k.source().cloned())
            .collect();
        let del = WriteTarget {
            for_each: Some(ri),
            ..self.delete_row(
                t,
                Some(Guard::KeyChanged {
                    columns: copied_src,
                }),
            )
        };
        self.push(t, del, Some(&[]), sizer);
        let ins = WriteTarget {
            for_each: Some(ri),
            guard: partial,
            ..self.insert_row(t, None)
        };
        self.push(t, ins, None, sizer);
        self.notes.push(format!(
            "a copied {s} column is part of {}'s key: each row that copies the {s} row moves (DELETE + INSERT per row)",
            t.name
        ));
    }

    /// The targets of a table whose rows (of a child entity) copy the written row's columns.
    fn copies(&mut self, t: &TableBuild, edge: &Edge, sizer: &Sizer<'_>) {
        self.for_table = Some(t.name.clone());
        self.path_edges = t.edges.clone();
        let s = self.stmt.table.key();
        match self.stmt.kind {
            StatementKind::Insert => return,
            StatementKind::Delete => {
                self.note_deleted_copies(t);
                return;
            }
            _ => {}
        }
        let copied: Vec<(KeySrc, String)> = t
            .columns
            .iter()
            .filter(|(k, ..)| {
                k.source()
                    .is_some_and(|c| c.table == s && self.stmt.sets(c))
            })
            .map(|(k, n, ..)| (k.clone(), n.clone()))
            .collect();
        if copied.is_empty() {
            return;
        }
        let parent_key: Vec<ColumnRef> = edge
            .parent_cols
            .iter()
            .filter_map(|c| column(self.schema, &s, c))
            .collect();
        self.ensure(
            &parent_key,
            Version::Current,
            &format!("the key of the {s} row"),
        );
        let keys = t.key_elements();
        let in_key = copied.iter().any(|(k, _)| keys.contains(k));
        let sets: Vec<(String, BindValue)> = copied
            .iter()
            .map(|(k, n)| (n.clone(), self.value(k, Version::New)))
            .collect();
        let child_fk: Vec<ColumnRef> = edge
            .child_cols
            .iter()
            .filter_map(|c| column(self.schema, &t.root, c))
            .collect();
        // A partial table (rows with a column IS NULL) holds only some children: every
        // statement per child row runs only for the rows it holds, never creating the others.
        let partial = t
            .null_filter
            .first()
            .map(|c| Guard::NewIsNull { column: c.clone() });
        let static_case = !in_key
            && partial.is_none()
            && t.partition.len() == child_fk.len()
            && t.partition
                .iter()
                .all(|k| matches!(k, KeySrc::Col(c) if child_fk.contains(c)));
        if static_case {
            // The partition is the parent's key: its copied columns are static, one UPDATE (per
            // written row, when the rows are read first).
            self.update_static_copies(t, &sets, &parent_key, sizer);
            return;
        }
        if self.refuse_child_copies(t) {
            return;
        }
        // One write per child row that copies the parent: read those rows first.
        let mut need = copy_sources(t, &keys, in_key, |c| c.table != s);
        for c in t.null_filter.iter().filter(|c| c.table != s) {
            if !need.contains(c) {
                need.push(c.clone());
            }
        }
        let Some(ri) = self.children_read(t, &child_fk, &parent_key, &need) else {
            self.children_unlisted(t, edge, &child_fk, &need);
            return;
        };
        // The written row's values the statements need: its key columns in the table (all its
        // columns when the rows move), read from the written row.
        let own_needed = copy_sources(t, &keys, in_key, |c| c.table == s);
        self.ensure(
            &own_needed,
            Version::Current,
            &format!("the current {s} values that {} copies", t.name),
        );
        if in_key {
            self.move_copying_rows(t, ri, partial, &copied, sizer);
        } else {
            let target = WriteTarget {
                for_each: Some(ri),
                guard: partial,
                ..self.update_row(t, &sets, &keys)
            };
            let cols: Vec<String> = sets.iter().map(|(n, _)| n.clone()).collect();
            self.push(t, target, Some(&cols), sizer);
            self.notes.push(format!(
                "one UPDATE of {} per {} row that copies the {s} row",
                t.name, t.root
            ));
        }
    }

    /// A read of every child row of the written parent (by the child's link columns) with the
    /// columns `need`; its index, or `None` when no table lists them.
    fn children_read(
        &mut self,
        t: &TableBuild,
        child_fk: &[ColumnRef],
        parent_key: &[ColumnRef],
        need: &[ColumnRef],
    ) -> Option<usize> {
        let table = self
            .tables
            .iter()
            .filter(|x| {
                x.root == t.root
                    && x.null_filter.is_empty()
                    && x.extra_keys.is_empty()
                    && !x.partition.is_empty()
                    && x.partition
                        .iter()
                        .all(|k| matches!(k, KeySrc::Col(c) if child_fk.contains(c)))
                    && need.iter().all(|c| x.col_name(c).is_some())
            })
            .min_by_key(|x| x.columns.len())?;
        let mut conds = Vec::new();
        let mut binds = Vec::new();
        for k in &table.partition {
            let (KeySrc::Col(c), Some(name)) = (k, table.name_of(k)) else {
                continue;
            };
            let Some(pos) = child_fk.iter().position(|x| x == c) else {
                continue;
            };
            conds.push(format!("{} = ?", cql_quote(name)));
            binds.push(table.bind(
                name,
                BindValue::Current {
                    column: parent_key[pos].clone(),
                },
            ));
        }
        let why = format!(
            "every {} row that copies the {} row",
            t.root,
            self.stmt.table.key()
        );
        let idx = self.add_select(
            table,
            need,
            conds.join(" AND "),
            binds,
            true,
            Version::Current,
            why,
        );
        // Its columns are the child rows' own: per row, not values of the written row.
        self.provided.retain(|(i, ..)| *i != idx);
        self.reads[idx].for_tables = vec![t.name.clone()];
        Some(idx)
    }

    /// Fills the write path: targets, reads (with the tables each serves), batch size, notes;
    /// returns the lookups no table provides.
    fn finish(mut self, path: &mut WritePath, sizer: &Sizer<'_>) -> Vec<Missing> {
        let mut all_targets: Vec<String> = Vec::new();
        for t in &self.targets {
            if !all_targets.contains(&t.table) {
                all_targets.push(t.table.clone());
            }
        }
        for (r, wk) in self.reads.iter_mut().zip(&self.read_where) {
            if r.for_tables.is_empty() {
                r.for_tables = all_targets.clone();
            }
            let cols: Vec<String> = r.columns.iter().map(|n| cql_quote(n)).collect();
            r.cql = format!(
                "SELECT {} FROM {}.{} WHERE {wk}",
                cols.join(", "),
                self.ks,
                cql_quote(&r.table)
            );
        }
        let tname = &self.stmt.table.key();
        path.unsupported = self.unsupported.take();
        path.values = std::mem::take(&mut self.stmt.values);
        path.upsert = self.upsert.take();
        path.warnings.append(&mut self.warnings);
        if path.unsupported.is_some() {
            // Not modelled: no statement that would do something else than the SQL.
            self.targets.clear();
            self.reads.clear();
            self.read_where.clear();
            path.upsert = None;
        }
        if self.targets.is_empty() && path.unsupported.is_none() {
            self.notes.push(format!(
                "no designed table holds {tname} data this statement changes: nothing to write in Cassandra"
            ));
        } else {
            // Counter statements go apart (Cassandra batches them with nothing else).
            let plain: Vec<&WriteTarget> = self
                .targets
                .iter()
                .filter(|t| t.counter.is_none())
                .collect();
            let tables: std::collections::BTreeSet<&String> =
                plain.iter().map(|t| &t.table).collect();
            if plain.len() > 1 {
                self.notes.push(format!(
                    "{} statements over {} tables: send them as one logged batch so the copies stay in step",
                    plain.len(),
                    tables.len()
                ));
            }
            if plain.len() < self.targets.len() {
                self.notes.push(
                    "the counter updates follow as their own (counter) batch: Cassandra refuses them beside other statements".into(),
                );
            }
        }
        path.batch_bytes = self.bytes.round() as u64;
        path.fits_batch = path.batch_bytes <= sizer.config.thresholds.batch_warn_bytes;
        if !path.fits_batch {
            self.notes.push(format!(
                "the batch is about {} B, over the {} B warning: send the statements separately",
                path.batch_bytes, sizer.config.thresholds.batch_warn_bytes
            ));
        }
        path.targets = self.targets;
        path.read_before_write = self.reads;
        path.note = (!self.notes.is_empty()).then(|| self.notes.join("; "));
        self.missing
    }
}

/// The key elements of `t` that select the rows whose columns `by` equal given values: its
/// partition (every element among `by`), then the clustering columns of `by` that follow it (a
/// prefix); `None` when the partition is not among `by`. It may apply fewer columns than `by`.
pub(crate) fn rows_key(t: &TableBuild, by: &[ColumnRef]) -> Option<Vec<KeySrc>> {
    let is_by = |k: &KeySrc| matches!(k, KeySrc::Col(c) if by.contains(c));
    if !t.partition.iter().all(is_by) {
        return None;
    }
    let mut key = t.partition.clone();
    key.extend(
        t.clustering
            .iter()
            .map(|(k, _)| k)
            .take_while(|k| is_by(k))
            .cloned(),
    );
    Some(key)
}

/// An UPDATE of `cols` of `t` in the rows `where_key` selects.
pub(crate) fn update_cql(ks: &str, t: &TableBuild, cols: &[String], where_key: &str) -> String {
    let sets: Vec<String> = cols
        .iter()
        .map(|c| format!("{} = ?", cql_quote(c)))
        .collect();
    format!(
        "UPDATE {ks}.{} SET {} WHERE {where_key}",
        cql_quote(&t.name),
        sets.join(", ")
    )
}
