//! What one read pattern needs from a table: the row entity (root), equalities, range, order,
//! the columns it reads and the parents it embeds or looks up.

use remodel_model::{
    AccessPattern, BinaryOp, BindValue, ColumnRef, Decision, EqualityOp, Expr, NullsAt,
    RangePredicate, Relationship, Schema, Table,
};
use std::collections::BTreeMap;

/// Union-find over columns equated by joins (`trips.driver_id = drivers.driver_id`).
#[derive(Debug, Default, Clone)]
pub struct Equiv {
    parent: BTreeMap<ColumnRef, ColumnRef>,
}

impl Equiv {
    fn find(&self, c: &ColumnRef) -> ColumnRef {
        let mut cur = c.clone();
        let mut guard = 0;
        while let Some(p) = self.parent.get(&cur) {
            if *p == cur || guard > 10_000 {
                break;
            }
            cur = p.clone();
            guard += 1;
        }
        cur
    }

    fn union(&mut self, a: &ColumnRef, b: &ColumnRef) {
        let ra = self.find(a);
        let rb = self.find(b);
        if ra != rb {
            self.parent.insert(rb, ra);
        }
    }

    /// Every column equated with `c` (itself included).
    pub fn class(&self, c: &ColumnRef) -> Vec<ColumnRef> {
        let root = self.find(c);
        let mut out: Vec<ColumnRef> = self
            .parent
            .iter()
            .flat_map(|(k, v)| [k, v])
            .filter(|k| self.find(k) == root)
            .cloned()
            .collect();
        out.push(c.clone());
        out.sort();
        out.dedup();
        out
    }
}

/// An edge of the join graph, oriented child → parent where the direction is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// Child (many) side, or the left table when unknown.
    pub child: String,
    /// Child columns.
    pub child_cols: Vec<String>,
    /// Parent (one) side, or the right table when unknown.
    pub parent: String,
    /// Parent columns.
    pub parent_cols: Vec<String>,
    /// True when `parent` is known to be the one side (FK or unique columns).
    pub directed: bool,
}

/// A parent kept by reference: the reader looks it up by key after reading the main table.
#[derive(Debug, Clone)]
pub struct Lookup {
    /// The parent table.
    pub table: String,
    /// Parent columns the pattern projects.
    pub columns: Vec<ColumnRef>,
    /// For each primary-key column of the looked-up table, its value: a column of the rows read
    /// first (`current`) or a parameter of the statement (`sql`).
    pub via: Vec<BindValue>,
    /// The decision text that made it a reference.
    pub rationale: String,
}

/// An equality the key serves: the column (its representative), the operator and the value
/// side, typed (what the CQL bind marker takes) and as normalized SQL (for the notes).
#[derive(Debug, Clone, PartialEq)]
pub struct EqPred {
    /// The column.
    pub column: ColumnRef,
    /// `=` or `IN`.
    pub op: EqualityOp,
    /// The value side as SQL (`$1`; for `IN`, the list), for humans.
    pub value: String,
    /// The value side, typed (for `IN`, a list-valued expression).
    pub expr: Expr,
}

impl EqPred {
    /// The predicate as a filter the client applies.
    pub fn filter(&self) -> ClientFilter {
        let op = if self.op == EqualityOp::In { "IN" } else { "=" };
        ClientFilter {
            sql: format!("{} {op} {}", self.column, self.value),
            expr: eq_expr(&self.column, self.op, Some(&self.expr)),
        }
    }
}

/// A condition the client applies to the rows read: typed (what `plan.json` states) and as SQL
/// (what the notes show).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientFilter {
    /// The condition as SQL, for humans.
    pub sql: String,
    /// The condition, over the source columns of the rows read.
    pub expr: Expr,
}

/// The needs of one read pattern.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Pattern id.
    pub pattern: String,
    /// The table whose rows are the result rows.
    pub root: String,
    /// Equalities (on representatives), `IS NULL` excluded.
    pub eq: Vec<EqPred>,
    /// Predicates the key does not serve: the client applies them to the rows read.
    pub client: Vec<ClientFilter>,
    /// The columns those predicates need (read with the rows).
    pub client_columns: Vec<ColumnRef>,
    /// `IS NULL` columns: the table holds only those rows.
    pub null_filter: Vec<ColumnRef>,
    /// The range served by the clustering key.
    pub range: Option<(ColumnRef, RangePredicate)>,
    /// Further ranges (filtered on the client).
    pub extra_ranges: Vec<(ColumnRef, RangePredicate)>,
    /// ORDER BY (column, desc) as the key must serve it (empty when the client sorts anyway).
    pub order: Vec<(ColumnRef, bool)>,
    /// The whole ORDER BY (column, desc, NULLs first), representatives: what a client sort
    /// sorts by.
    pub sort: Vec<(ColumnRef, bool, bool)>,
    /// Projected columns (representatives), in order.
    pub projection: Vec<ColumnRef>,
    /// Every column the table must hold for this pattern (projection, filters, order).
    pub needed: Vec<ColumnRef>,
    /// Keys of path tables that the root does not determine (appended for uniqueness, MR5).
    pub extra_keys: Vec<ColumnRef>,
    /// Join edges used to reach embedded columns.
    pub edges: Vec<Edge>,
    /// Parents kept by reference.
    pub lookups: Vec<Lookup>,
    /// Notes for the reviewer (client-side work, assumptions).
    pub notes: Vec<String>,
    /// Aggregates: function, argument (representative), DISTINCT.
    pub aggregates: Vec<(String, Option<ColumnRef>, bool)>,
    /// GROUP BY columns (representatives).
    pub group_by: Vec<ColumnRef>,
    /// Join-equated columns.
    pub equiv: Equiv,
    /// The statement's parameters (their types and the literals they replaced).
    pub params: Vec<remodel_model::Parameter>,
    /// Columns whose NULL rows this read returns and which no key can hold (see
    /// [`unkeyable_nulls`]; representatives too): a table serving it never clusters by them.
    pub nulls_returned: Vec<ColumnRef>,
    /// For each nullable ORDER BY column, the side of its values SQL puts its NULLs on here.
    pub null_sides: Vec<(ColumnRef, NullsAt)>,
}

impl Shape {
    /// True when this read and a table serving reads whose NULL sides are `sides` put the NULLs
    /// of a column on different sides: one table cannot store them for both.
    pub fn null_sides_conflict(&self, sides: &[(ColumnRef, NullsAt)]) -> bool {
        self.null_sides
            .iter()
            .any(|(c, side)| sides.iter().any(|(o, other)| o == c && other != side))
    }
}

/// Canonical (schema) spelling of a column reference, when the table and column exist.
pub fn canonical(schema: &Schema, c: &ColumnRef) -> Option<ColumnRef> {
    let t = schema.table(&c.table)?;
    let col = t.column(&c.column)?;
    Some(ColumnRef::new(t.key(), col.name.clone()))
}

/// Identifiers compare exactly: the front ends fold them as Postgres does.
fn same(a: &str, b: &str) -> bool {
    a == b
}

/// True when `child.cols` reference `parent` (declared or inferred FK), or, unless `fk_only`,
/// when `parent_cols` are unique in `parent`.
fn is_parent(
    schema: &Schema,
    child: &str,
    child_cols: &[String],
    parent: &str,
    parent_cols: &[String],
    fk_only: bool,
) -> bool {
    let Some(ct) = schema.table(child) else {
        return false;
    };
    let fk = ct.foreign_keys.iter().any(|fk| {
        schema
            .table(&fk.ref_table)
            .is_some_and(|rt| same(&rt.key(), parent))
            && fk.columns.len() == child_cols.len()
            && fk
                .columns
                .iter()
                .all(|c| child_cols.iter().any(|x| same(x, c)))
    });
    fk || (!fk_only
        && schema
            .table(parent)
            .is_some_and(|pt| pt.is_unique_on(parent_cols)))
}

/// How a read serves the columns of the root's parents it projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// As the relationship's decision says: read by key after the rows when it is a reference.
    AsDecided,
    /// Copied into the read's table.
    Copied,
    /// Read by key after the rows wherever the read only projects them.
    LookedUp,
}

/// What deciding the parent lookups of a read looks at.
struct ParentReads<'a> {
    schema: &'a Schema,
    relationships: &'a [Relationship],
    root: &'a str,
    eq: &'a [EqPred],
    range: Option<&'a (ColumnRef, RangePredicate)>,
    order: &'a [(ColumnRef, bool)],
    projection: &'a [ColumnRef],
    edges: &'a [Edge],
    /// Columns the workload's UPDATEs set.
    updated: &'a [ColumnRef],
}

impl ParentReads<'_> {
    /// The direct parents of the root read by key after the rows (their columns leave
    /// `needed`, the root's link columns join it), as `parents` asks and the read allows:
    /// only parents whose columns are merely projected can be read afterwards.
    fn lookups(
        &self,
        parents: Parents,
        needed: &mut Vec<ColumnRef>,
        notes: &mut Vec<String>,
    ) -> Vec<Lookup> {
        let mut out = Vec::new();
        let root = self.root;
        for e in self.edges.iter().filter(|e| e.directed && e.child == root) {
            let rel = self
                .relationships
                .iter()
                .find(|r| same(&r.from, &e.parent) && same(&r.to, &e.child));
            let wanted = match parents {
                Parents::AsDecided => rel.is_some_and(|r| r.decision == Decision::Reference),
                Parents::Copied => false,
                Parents::LookedUp => true,
            };
            if !wanted {
                continue;
            }
            // The partition key pins the parent (1-N read from the parent): its columns are
            // static, one copy per partition, so keeping them here duplicates nothing.
            let pinned = e.child_cols.iter().all(|cc| {
                self.eq.iter().any(|x| {
                    x.op == EqualityOp::Eq && x.column.table == root && same(&x.column.column, cc)
                })
            }) && self.eq.iter().all(|x| {
                x.column.table == root && e.child_cols.iter().any(|cc| same(&x.column.column, cc))
            }) && self.range.is_none_or(|(_, r)| r.window.is_none());
            if pinned {
                notes.push(format!(
                    "{} is kept by reference, but the partition key is its key: its columns are static, one copy per partition",
                    e.parent
                ));
                continue;
            }
            let parent_cols: Vec<ColumnRef> = needed
                .iter()
                .filter(|c| c.table == e.parent)
                .cloned()
                .collect();
            if parent_cols.is_empty() {
                continue;
            }
            if !self.only_projected(&e.parent, &parent_cols) {
                notes.push(format!(
                    "{} is kept by reference, but this read filters or sorts on it: its columns are copied here",
                    e.parent
                ));
                continue;
            }
            let via: Vec<ColumnRef> = self
                .schema
                .table(&e.parent)
                .map(|pt| {
                    pt.primary_key
                        .iter()
                        .filter_map(|k| e.parent_cols.iter().position(|c| same(c, k)))
                        .filter_map(|i| {
                            canonical(self.schema, &ColumnRef::new(root, &e.child_cols[i]))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let rationale = rel.map_or_else(
                || "read by key after the rows".to_string(),
                |r| r.rationale.text.clone(),
            );
            out.push(looked_up(&e.parent, parent_cols, via, rationale, needed));
        }
        out.extend(self.ancestor_lookups(needed, notes));
        out
    }

    /// True when the read only projects `parent`'s columns (no filter, order or range on them)
    /// and `parent` has no parent of its own in the read: then they can be read after the rows.
    fn only_projected(&self, parent: &str, parent_cols: &[ColumnRef]) -> bool {
        parent_cols.iter().all(|c| self.projection.contains(c))
            && !self.eq.iter().any(|x| x.column.table == parent)
            && !self.order.iter().any(|(c, _)| c.table == parent)
            && self.range.is_none_or(|(c, _)| c.table != parent)
            && !self.edges.iter().any(|x| x.child == parent)
    }

    /// The ancestors past the root's parents whose projected columns an UPDATE sets: a copy of
    /// them could not be kept in step (no write path finds the rows that copy them through two
    /// joins), so they are read by key after the rows, by the link columns copied from the
    /// parent in between.
    fn ancestor_lookups(
        &self,
        needed: &mut Vec<ColumnRef>,
        notes: &mut Vec<String>,
    ) -> Vec<Lookup> {
        let mut out = Vec::new();
        let root = self.root;
        for e in self.edges.iter().filter(|e| e.directed && e.child != root) {
            let parent_cols: Vec<ColumnRef> = needed
                .iter()
                .filter(|c| c.table == e.parent)
                .cloned()
                .collect();
            let updated: Vec<&ColumnRef> = parent_cols
                .iter()
                .filter(|c| self.updated.contains(c))
                .collect();
            if updated.is_empty() {
                continue;
            }
            let names: Vec<String> = updated.iter().map(|c| c.to_string()).collect();
            let only_projected = self.only_projected(&e.parent, &parent_cols);
            let via: Option<Vec<ColumnRef>> = self.schema.table(&e.parent).and_then(|pt| {
                pt.primary_key
                    .iter()
                    .map(|k| {
                        let i = e.parent_cols.iter().position(|c| same(c, k))?;
                        canonical(self.schema, &ColumnRef::new(&e.child, &e.child_cols[i]))
                    })
                    .collect()
            });
            let Some(via) = via.filter(|v| !v.is_empty() && only_projected) else {
                notes.push(format!(
                    "{} of {} is copied through {} and updated by the workload; this read filters or sorts on it, so the copy is not kept in step by any write path: review it",
                    names.join(", "),
                    e.parent,
                    e.child
                ));
                continue;
            };
            let rationale = format!(
                "{} is updated by the workload and reached through {}: a copy here could not be kept in step",
                names.join(", "),
                e.child
            );
            out.push(looked_up(&e.parent, parent_cols, via, rationale, needed));
        }
        out
    }
}

/// The columns of the tables read `a` reads that no clustering column can hold while `a`
/// returns their NULL rows: each may be NULL, its type has no key form that stores NULL
/// ([`crate::candidates::type_mapping::null_storing_form`]), and no condition of `a` excludes NULL (`=`, `IN`, a
/// range). A table clustered by one would refuse those rows (the application's INSERT fails)
/// or leave them out of `a`'s answer; `a` sorts by them on the client instead, and no table
/// serving `a` clusters by them.
fn unkeyable_nulls(
    schema: &Schema,
    a: &remodel_model::PatternAnalysis,
    tables: &[String],
    canon: &impl Fn(&ColumnRef) -> Option<ColumnRef>,
) -> Vec<ColumnRef> {
    let conditioned = |c: &ColumnRef| a.excludes_null(|x| canon(x).as_ref() == Some(c));
    tables
        .iter()
        .filter_map(|t| schema.table(t))
        .flat_map(|t| {
            t.columns
                .iter()
                .filter(|col| {
                    col.nullable
                        && crate::candidates::type_mapping::null_storing_form(
                            &crate::candidates::type_mapping::cql_type(&col.sql_type),
                        )
                        .is_none()
                })
                .map(|col| ColumnRef::new(t.key(), &col.name))
        })
        .filter(|c| !conditioned(c))
        .collect()
}

/// The lookup of `table` by the link columns `via`: its columns leave `needed`, the link
/// columns join it.
fn looked_up(
    table: &str,
    columns: Vec<ColumnRef>,
    via: Vec<ColumnRef>,
    rationale: String,
    needed: &mut Vec<ColumnRef>,
) -> Lookup {
    needed.retain(|c| c.table != table);
    for c in &via {
        if !needed.contains(c) {
            needed.push(c.clone());
        }
    }
    Lookup {
        table: table.to_string(),
        columns,
        via: via
            .into_iter()
            .map(|column| BindValue::Current { column })
            .collect(),
        rationale,
    }
}

/// The schema tables read `a` reads (each once, by key); `Err` when one is not in the schema
/// or it reads none.
fn read_tables(schema: &Schema, a: &remodel_model::PatternAnalysis) -> Result<Vec<String>, String> {
    let mut tables: Vec<String> = Vec::new();
    for t in &a.tables {
        match schema.table(t) {
            Some(st) => {
                if !tables.contains(&st.key()) {
                    tables.push(st.key());
                }
            }
            None => return Err(format!("reads `{t}`, which is not in the schema")),
        }
    }
    if tables.is_empty() {
        return Err("reads no table of the schema".into());
    }
    Ok(tables)
}

/// The join graph of read `a`: the columns its joins equate, and an edge per join step,
/// oriented child → parent where a foreign key (or, failing one, unique columns) says which.
fn join_graph(schema: &Schema, a: &remodel_model::PatternAnalysis) -> (Equiv, Vec<Edge>) {
    let canon = |c: &ColumnRef| canonical(schema, c);
    let mut equiv = Equiv::default();
    let mut edges = Vec::new();
    for step in &a.join_path {
        let (Some(lt), Some(rt)) = (
            schema.table(&step.left_table),
            schema.table(&step.right_table),
        ) else {
            continue;
        };
        for (l, r) in step.left_columns.iter().zip(&step.right_columns) {
            if let (Some(lc), Some(rc)) = (
                canon(&ColumnRef::new(lt.key(), l)),
                canon(&ColumnRef::new(rt.key(), r)),
            ) {
                equiv.union(&lc, &rc);
            }
        }
        let lcols: Vec<String> = step.left_columns.to_vec();
        let rcols: Vec<String> = step.right_columns.to_vec();
        // A foreign key decides the direction first; unique columns only when no key does
        // (a 1-1 pair is unique both ways).
        let left_child = is_parent(schema, &lt.key(), &lcols, &rt.key(), &rcols, true)
            || (!is_parent(schema, &rt.key(), &rcols, &lt.key(), &lcols, true)
                && is_parent(schema, &lt.key(), &lcols, &rt.key(), &rcols, false));
        let right_child =
            !left_child && is_parent(schema, &rt.key(), &rcols, &lt.key(), &lcols, false);
        let edge = if right_child {
            Edge {
                child: rt.key(),
                child_cols: rcols,
                parent: lt.key(),
                parent_cols: lcols,
                directed: true,
            }
        } else {
            Edge {
                child: lt.key(),
                child_cols: lcols,
                parent: rt.key(),
                parent_cols: rcols,
                directed: left_child,
            }
        };
        edges.push(edge);
    }
    (equiv, edges)
}

/// The root of read `a` and the tables it determines.
fn root_and_determined(
    schema: &Schema,
    a: &remodel_model::PatternAnalysis,
    tables: &[String],
    equiv: &Equiv,
    edges: &[Edge],
) -> (String, Vec<String>) {
    let canon = |c: &ColumnRef| canonical(schema, c);
    // Root: a table that is never the one side of a directed edge; prefer one with equalities.
    let parents: Vec<&String> = edges
        .iter()
        .filter(|e| e.directed)
        .map(|e| &e.parent)
        .collect();
    let candidates: Vec<&String> = tables.iter().filter(|t| !parents.contains(t)).collect();
    let has_eq = |t: &String| {
        a.equality.iter().any(|p| {
            canon(&p.column).is_some_and(|c| equiv.class(&c).iter().any(|x| &x.table == t))
        })
    };
    let root = candidates
        .iter()
        .find(|t| has_eq(t))
        .or_else(|| candidates.first())
        .map(|t| (*t).clone())
        .unwrap_or_else(|| tables[0].clone());

    // Tables the root determines: reachable child → parent from the root.
    let mut determined = vec![root.clone()];
    let mut changed = true;
    while changed {
        changed = false;
        for e in edges.iter().filter(|e| e.directed) {
            if determined.contains(&e.child) && !determined.contains(&e.parent) {
                determined.push(e.parent.clone());
                changed = true;
            }
        }
    }
    (root, determined)
}

/// The row lookups of a read ([`row_lookups`]) as [`Lookup`]s: each takes its table's columns
/// out of `needed` and says in `notes` how it is read.
fn row_lookup_reads(
    row_lookups: &[(String, Vec<(String, BindValue)>)],
    needed: &mut Vec<ColumnRef>,
    notes: &mut Vec<String>,
) -> Vec<Lookup> {
    let mut lookups = Vec::new();
    for (t, via) in row_lookups {
        let columns: Vec<ColumnRef> = needed.iter().filter(|c| c.table == *t).cloned().collect();
        needed.retain(|c| c.table != *t);
        let keys = via
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        // Bound by the statement's parameters only: a lookup of its own (a cross join).
        let apart = via.iter().all(|(_, v)| matches!(v, BindValue::Expr { .. }));
        let (note, rationale) = if apart {
            (
                format!("{t} is read once by its key ({keys}) from the statement's values, apart from the rows read first: the statement pairs that row with each of them (a cross join; no rows when either read finds none)"),
                format!("an independent lookup: one {t} row by its key, paired with every row read"),
            )
        } else {
            (
                format!("{t} is read by key for each row ({keys}): a join to a table the rows do not determine is not copied"),
                format!("one {t} row per row read, found by its key"),
            )
        };
        notes.push(note);
        lookups.push(Lookup {
            table: t.clone(),
            columns,
            via: via.iter().map(|(_, v)| v.clone()).collect(),
            rationale,
        });
    }
    lookups
}

/// The uniqueness keys of the tables the root does not determine (children or unrelated
/// tables), added to `needed`.
fn other_keys(
    schema: &Schema,
    tables: &[String],
    determined: &[String],
    row_lookups: &[(String, Vec<(String, BindValue)>)],
    canon: &dyn Fn(&ColumnRef) -> Option<ColumnRef>,
    rep: &dyn Fn(&ColumnRef) -> ColumnRef,
    needed: &mut Vec<ColumnRef>,
) -> Vec<ColumnRef> {
    let mut extra_keys = Vec::new();
    for t in tables {
        if determined.contains(t) || row_lookups.iter().any(|(x, _)| x == t) {
            continue;
        }
        if let Some(st) = schema.table(t) {
            for k in &st.primary_key {
                if let Some(c) = canon(&ColumnRef::new(st.key(), k)) {
                    let r = rep(&c);
                    if !extra_keys.contains(&r) {
                        extra_keys.push(r.clone());
                    }
                    if !needed.contains(&r) {
                        needed.push(r);
                    }
                }
            }
        }
    }
    extra_keys
}

/// How a read names a column: `canon` finds it in the schema, `rep` gives the one of its
/// equated columns the table holds.
type ColumnNames<'f> = (
    &'f dyn Fn(&ColumnRef) -> Option<ColumnRef>,
    &'f dyn Fn(&ColumnRef) -> ColumnRef,
);

/// A read's range its key serves, and its other ranges (column, predicate).
type Ranges = (
    Option<(ColumnRef, RangePredicate)>,
    Vec<(ColumnRef, RangePredicate)>,
);

/// The equalities of read `a` its key can serve, and the columns it wants NULL (`IS NULL`);
/// an equality on a looked-up table or a second one on a column is left to the client
/// (`client`, reading `client_columns`).
fn equalities(
    a: &remodel_model::PatternAnalysis,
    (canon, rep): ColumnNames<'_>,
    row_lookups: &[(String, Vec<(String, BindValue)>)],
    (client, client_columns): (&mut Vec<ClientFilter>, &mut Vec<ColumnRef>),
    notes: &mut Vec<String>,
) -> Result<(Vec<EqPred>, Vec<ColumnRef>), String> {
    let looked_up = |c: &ColumnRef| row_lookups.iter().any(|(t, _)| *t == c.table);
    let mut eq: Vec<EqPred> = Vec::new();
    let mut null_filter = Vec::new();
    for p in &a.equality {
        let Some(c) = canon(&p.column) else {
            // Postgres would reject the statement: nothing to serve, and a scan would be wrong.
            return Err(format!(
                "filters on {}, which the schema does not have (the statement would fail on the source)",
                p.column
            ));
        };
        let r = rep(&c);
        let value = typed_value(p)?;
        if looked_up(&r) {
            // Bound in the lookup of that table's row (a key column), or compared after it.
            let keyed = row_lookups.iter().any(|(t, via)| {
                *t == r.table && via.iter().any(|(k, v)| {
                    same(k, &r.column)
                        && matches!((v, &value), (BindValue::Expr { expr }, Some(x)) if expr == x)
                })
            });
            if !keyed {
                client.push(ClientFilter {
                    sql: predicate_sql(p),
                    expr: eq_expr(&r, p.op, value.as_ref()),
                });
                client_columns.push(r);
            }
            continue;
        }
        if let Some(rw) = &p.rewritten_from {
            notes.push(rewrite_note(rw, &predicate_sql(p)));
        }
        match p.op {
            EqualityOp::IsNull => {
                if !null_filter.contains(&r) {
                    null_filter.push(r)
                }
            }
            op => {
                let pred = EqPred {
                    column: r.clone(),
                    op,
                    value: p.value.clone().unwrap_or_default(),
                    expr: value.unwrap_or(Expr::Literal {
                        value: remodel_model::Literal::Null,
                    }),
                };
                match eq.iter_mut().find(|x| x.column == r) {
                    // `a = $1 AND a IN (…)`: the `=` is served, the other is a filter.
                    Some(existing) => {
                        if op == EqualityOp::Eq && existing.op == EqualityOp::In {
                            client.push(existing.filter());
                            *existing = pred;
                        } else {
                            client.push(pred.filter());
                        }
                        client_columns.push(r);
                    }
                    None => eq.push(pred),
                }
            }
        }
    }
    Ok((eq, null_filter))
}

/// The range of read `a` its key can serve (the first on a column no equality pins nor a
/// lookup reads), and the others.
fn ranges(
    a: &remodel_model::PatternAnalysis,
    (canon, rep): ColumnNames<'_>,
    eq: &[EqPred],
    row_lookups: &[(String, Vec<(String, BindValue)>)],
    notes: &mut Vec<String>,
) -> Result<Ranges, String> {
    let looked_up = |c: &ColumnRef| row_lookups.iter().any(|(t, _)| *t == c.table);
    let mut range = None;
    let mut extra_ranges = Vec::new();
    for r in &a.ranges {
        let Some(c) = canon(&r.column) else {
            return Err(format!(
                "filters on {}, which the schema does not have (the statement would fail on the source)",
                r.column
            ));
        };
        let c = rep(&c);
        for rw in &r.rewritten_from {
            notes.push(rewrite_note(rw, &range_sql(r)));
        }
        if range.is_none() && !eq.iter().any(|x| x.column == c) && !looked_up(&c) {
            let mut rp = r.clone();
            rp.column = c.clone();
            range = Some((c, rp));
        } else {
            let mut rp = r.clone();
            rp.column = c.clone();
            extra_ranges.push((c, rp));
        }
    }
    Ok((range, extra_ranges))
}

/// The residual filters of read `a`, left to the client as typed expressions over the columns
/// the rows hold, with the columns they read; `Err` when one has no typed form.
fn client_filters(
    a: &remodel_model::PatternAnalysis,
    (canon, rep): ColumnNames<'_>,
    notes: &mut Vec<String>,
) -> Result<(Vec<ClientFilter>, Vec<ColumnRef>), String> {
    let mut client: Vec<ClientFilter> = Vec::new();
    // Columns the client needs to apply the filters it is left (they must be read).
    let mut client_columns: Vec<ColumnRef> = Vec::new();
    // A filter is stated in the plan's expressions over the columns the rows hold.
    let held = |c: &ColumnRef| canon(c).map_or_else(|| c.clone(), |c| rep(&c));
    for f in &a.residual {
        // A filter no client can evaluate would return other rows: the read is not served.
        let Some(expr) = &f.expr else {
            return Err(untyped_filter(f));
        };
        notes.push(format!("{} is not served by the key: {}", f.sql, f.reason));
        client.push(ClientFilter {
            sql: f.sql.clone(),
            expr: expr.map_columns(&mut |c| held(c)),
        });
        client_columns.extend(f.columns.iter().filter_map(canon).map(|c| rep(&c)));
        client_columns.extend(expr.columns().into_iter().map(&held));
    }
    Ok((client, client_columns))
}

/// Derives the shape of a read pattern, its parents served as `policy` says; `Err` is the
/// reason it cannot be designed.
pub fn derive(
    schema: &Schema,
    pattern: &AccessPattern,
    relationships: &[Relationship],
    policy: Parents,
    updated: &[ColumnRef],
) -> Result<Shape, String> {
    let a = &pattern.analysis;
    if !a.unknown_columns.is_empty() {
        return Err(format!(
            "filters on {}, which no table it reads has (the statement would fail on the source)",
            a.unknown_columns.join(", ")
        ));
    }
    // A read the analyzer could not model would be served as something else (one LIMIT for
    // what is a LIMIT per row, a join for a set operation): it is stated, never designed.
    if let Some(why) = &a.unmodeled {
        return Err(format!("not modelled by the analyzer: {why}"));
    }
    let tables = read_tables(schema, a)?;
    let canon = |c: &ColumnRef| canonical(schema, c);
    let (equiv, edges) = join_graph(schema, a);
    let (root, determined) = root_and_determined(schema, a, &tables, &equiv, &edges);
    let rep = |c: &ColumnRef| -> ColumnRef {
        let class = equiv.class(c);
        class
            .iter()
            .find(|x| x.table == root)
            .or_else(|| {
                class
                    .iter()
                    .find(|x| determined.contains(&x.table) && x.table == c.table)
            })
            .cloned()
            .unwrap_or_else(|| c.clone())
    };

    let row_lookups = row_lookups(schema, a, &tables, &determined, &equiv, &rep);
    let looked_up = |c: &ColumnRef| row_lookups.iter().any(|(t, _)| *t == c.table);
    let mut notes = Vec::new();
    let (mut client, mut client_columns) = client_filters(a, (&canon, &rep), &mut notes)?;
    for r in &a.ranges {
        typed_range(r)?;
    }
    let (mut eq, null_filter) = equalities(
        a,
        (&canon, &rep),
        &row_lookups,
        (&mut client, &mut client_columns),
        &mut notes,
    )?;
    // Key order: the root's primary key order first (composite keys read naturally), then as written.
    if let Some(rt) = schema.table(&root) {
        let pos = |c: &ColumnRef| {
            if c.table == rt.key() {
                rt.primary_key
                    .iter()
                    .position(|k| same(k, &c.column))
                    .unwrap_or(usize::MAX)
            } else {
                usize::MAX
            }
        };
        eq.sort_by_key(|e| pos(&e.column));
        for moved in unique_key_only(rt, &mut eq, &mut client, &mut notes) {
            client_columns.push(moved);
        }
    }

    let (range, extra_ranges) = ranges(a, (&canon, &rep), &eq, &row_lookups, &mut notes)?;
    let mut order: Vec<(ColumnRef, bool)> = a
        .order_by
        .iter()
        .filter_map(|o| canon(&o.column).map(|c| (rep(&c), o.desc)))
        .collect();
    // SQL puts NULLs last ascending and first descending unless the statement says.
    let sort: Vec<(ColumnRef, bool, bool)> = a
        .order_by
        .iter()
        .filter_map(|o| {
            canon(&o.column).map(|c| (rep(&c), o.desc, o.nulls_first.unwrap_or(o.desc)))
        })
        .collect();
    if order.iter().any(|(c, _)| looked_up(c)) {
        notes.push("ORDER BY a column read by a lookup: rows are sorted on the client".into());
        order.clear();
    }
    // Where each nullable ORDER BY column's NULLs go among its values: reads that put them on
    // different sides cannot share a table clustered by it (it stores them on one side).
    let null_sides: Vec<(ColumnRef, NullsAt)> = a
        .order_by
        .iter()
        .filter_map(|o| {
            let c = canon(&o.column)?;
            let col = schema.table(&c.table)?.column(&c.column)?;
            col.nullable.then(|| (rep(&c), o.nulls_at()))
        })
        .collect();
    let nulls_returned: Vec<ColumnRef> = unkeyable_nulls(schema, a, &tables, &canon)
        .into_iter()
        .flat_map(|c| [rep(&c), c])
        .collect();
    if let Some((c, _)) = order.iter().find(|(c, _)| nulls_returned.contains(c)) {
        notes.push(format!(
            "ORDER BY {c}, which may be NULL and has no key form that holds NULL (a CQL key cannot): the rows, NULLs included, are sorted on the client"
        ));
        order.clear();
    }

    let mut projection: Vec<ColumnRef> = Vec::new();
    for c in &a.projection {
        if let Some(cc) = canon(c) {
            let r = rep(&cc);
            if !projection.contains(&r) {
                projection.push(r);
            }
        }
    }
    let mut needed: Vec<ColumnRef> = projection.clone();
    let extra = eq
        .iter()
        .map(|e| e.column.clone())
        .chain(null_filter.iter().cloned())
        .chain(range.iter().map(|(c, _)| c.clone()))
        .chain(extra_ranges.iter().map(|(c, _)| c.clone()))
        .chain(order.iter().map(|(c, _)| c.clone()))
        .chain(
            a.aggregates
                .iter()
                .filter_map(|g| g.column.as_ref().and_then(canon).map(|c| rep(&c))),
        )
        .chain(a.group_by.iter().filter_map(|g| canon(g).map(|c| rep(&c))));
    for c in extra.chain(client_columns.iter().cloned()) {
        if !needed.contains(&c) {
            needed.push(c);
        }
    }
    let mut lookups = row_lookup_reads(&row_lookups, &mut needed, &mut notes);
    let extra_keys = other_keys(
        schema,
        &tables,
        &determined,
        &row_lookups,
        &canon,
        &rep,
        &mut needed,
    );

    let found = ParentReads {
        schema,
        relationships,
        root: &root,
        eq: &eq,
        range: range.as_ref(),
        order: &order,
        projection: &projection,
        edges: &edges,
        updated,
    }
    .lookups(policy, &mut needed, &mut notes);
    lookups.extend(found);
    if a.distinct {
        notes.push("DISTINCT: duplicates are removed on the client".into());
    }
    if let Some(t) = unjoined(&root, &edges, needed.iter().chain(&extra_keys)) {
        return Err(format!(
            "{t} is not joined to {root} (a cross join, or tables joined by no column equality): one table of both would pair every row with every row; read each by itself"
        ));
    }

    let aggregates = a
        .aggregates
        .iter()
        .map(|g| {
            (
                g.function.to_ascii_lowercase(),
                g.column.as_ref().and_then(canon).map(|c| rep(&c)),
                g.distinct,
            )
        })
        .collect();
    let group_by = a
        .group_by
        .iter()
        .filter_map(|g| canon(g).map(|c| rep(&c)))
        .collect();
    Ok(Shape {
        aggregates,
        group_by,
        pattern: pattern.id.clone(),
        root,
        eq,
        client,
        client_columns,
        null_filter,
        range,
        extra_ranges,
        order,
        sort,
        projection,
        needed,
        extra_keys,
        edges,
        lookups,
        notes,
        equiv,
        params: a.params.clone(),
        nulls_returned,
        null_sides,
    })
}

/// The first table of `columns` that no join edge connects to `root` (in either direction):
/// the source SELECT could not join it, and its columns would be NULL.
fn unjoined<'c>(
    root: &str,
    edges: &[Edge],
    columns: impl Iterator<Item = &'c ColumnRef>,
) -> Option<String> {
    let mut reached = vec![root.to_string()];
    let mut grew = true;
    while grew {
        grew = false;
        for e in edges {
            for (from, to) in [(&e.child, &e.parent), (&e.parent, &e.child)] {
                if reached.contains(from) && !reached.contains(to) {
                    reached.push(to.clone());
                    grew = true;
                }
            }
        }
    }
    columns
        .map(|c| &c.table)
        .find(|t| !reached.contains(t))
        .cloned()
}

/// Tables the root does not determine whose primary key is nevertheless fixed for each row
/// read — by columns the join equates with a determined table, or by `=` parameters
/// (`stock` in `order_line JOIN stock ON s_i_id = ol_i_id WHERE s_w_id = $5`): read by key per
/// row rather than copied (a copy of them could not be kept in step). Each with, per key column,
/// the value it is read by.
fn row_lookups(
    schema: &Schema,
    a: &remodel_model::PatternAnalysis,
    tables: &[String],
    determined: &[String],
    equiv: &Equiv,
    rep: &dyn Fn(&ColumnRef) -> ColumnRef,
) -> Vec<(String, Vec<(String, BindValue)>)> {
    let mut out = Vec::new();
    for t in tables.iter().filter(|t| !determined.contains(t)) {
        let Some(st) = schema.table(t) else { continue };
        if st.primary_key.is_empty() {
            continue;
        }
        let mut via = Vec::new();
        for k in &st.primary_key {
            let Some(kc) = canonical(schema, &ColumnRef::new(st.key(), k)) else {
                break;
            };
            let from_row = equiv
                .class(&kc)
                .into_iter()
                .find(|x| determined.contains(&x.table))
                .map(|x| BindValue::Current { column: rep(&x) });
            let from_param = a
                .equality
                .iter()
                .filter(|p| p.op == EqualityOp::Eq)
                .find(|p| canonical(schema, &p.column).as_ref() == Some(&kc))
                .and_then(|p| p.expr.clone())
                .map(|expr| BindValue::Expr { expr });
            match from_row.or(from_param) {
                Some(v) => via.push((kc.column.clone(), v)),
                None => break,
            }
        }
        if via.len() == st.primary_key.len() {
            out.push((st.key(), via));
        }
    }
    out
}

/// The note for a predicate the analyzer solved for a bare column: what it became, why that
/// is exact, and what the rewrite assumes.
fn rewrite_note(rw: &remodel_model::Rewrite, became: &str) -> String {
    let mut note = format!("{} is served as {became} ({})", rw.sql, rw.reason);
    for a in &rw.assumes {
        note.push_str(&format!("; assumes {a}"));
    }
    note
}

/// The typed value side of an equality (`None` for `IS NULL`); `Err` when the analyzer could
/// not state it in the plan's expressions (no client could bind or compare it).
fn typed_value(p: &remodel_model::Predicate) -> Result<Option<Expr>, String> {
    match (p.op, &p.expr) {
        (EqualityOp::IsNull, _) => Ok(None),
        (_, Some(e)) => Ok(Some(e.clone())),
        (_, None) => Err(format!(
            "{} has no typed form in the plan (its value cannot be stated for a client to compute)",
            predicate_sql(p)
        )),
    }
}

/// `Err` when a bound of the range has no typed form.
fn typed_range(r: &RangePredicate) -> Result<(), String> {
    if r.lower
        .iter()
        .chain(r.upper.iter())
        .all(|b| b.expr.is_some())
    {
        Ok(())
    } else {
        Err(format!(
            "{} has no typed form in the plan (a bound cannot be stated for a client to compute)",
            range_sql(r)
        ))
    }
}

/// Why a read whose residual filter has no typed form is not served.
fn untyped_filter(f: &remodel_model::Residual) -> String {
    format!(
        "filters with {}, which no client can evaluate from the plan ({}): a mapping without it would return other rows",
        f.sql,
        f.reason_untyped
            .as_deref()
            .unwrap_or("it has no typed form")
    )
}

/// The values of an `IN`: the list of the predicate's typed condition (`c IN (…)`), or the one
/// value given.
pub fn in_items(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::InList { list, .. } => list.clone(),
        other => vec![other.clone()],
    }
}

/// An equality as a typed filter: `c = v`, `c IN (…)` (the analyzer types an `IN` as the whole
/// condition; a list of one parameter stands for the list the application sends), `c IS NULL`.
pub fn eq_expr(column: &ColumnRef, op: EqualityOp, value: Option<&Expr>) -> Expr {
    let col = Expr::column(column.clone());
    let null = Expr::Literal {
        value: remodel_model::Literal::Null,
    };
    match op {
        EqualityOp::IsNull => Expr::IsNull {
            arg: Box::new(col),
            negated: false,
        },
        EqualityOp::Eq => Expr::binary(BinaryOp::Eq, col, value.cloned().unwrap_or(null)),
        EqualityOp::In => Expr::InList {
            arg: Box::new(col),
            list: value.map_or_else(|| vec![null], in_items),
            negated: false,
        },
    }
}

/// A range as a typed filter over `column` (`c >= l AND c < u`; `c LIKE p` for a prefix);
/// `None` when a bound has no typed form.
pub fn range_expr(column: &ColumnRef, r: &RangePredicate) -> Option<Expr> {
    let col = || Expr::column(column.clone());
    if r.prefix {
        let pattern = r.lower.as_ref()?.expr.clone()?;
        return Some(Expr::Like {
            arg: Box::new(col()),
            pattern: Box::new(pattern),
            case_insensitive: false,
            negated: false,
        });
    }
    let mut parts = Vec::new();
    if let Some(l) = &r.lower {
        let op = if l.inclusive {
            BinaryOp::Ge
        } else {
            BinaryOp::Gt
        };
        parts.push(Expr::binary(op, col(), l.expr.clone()?));
    }
    if let Some(u) = &r.upper {
        let op = if u.inclusive {
            BinaryOp::Le
        } else {
            BinaryOp::Lt
        };
        parts.push(Expr::binary(op, col(), u.expr.clone()?));
    }
    parts
        .into_iter()
        .reduce(|a, b| Expr::binary(BinaryOp::And, a, b))
}

/// A range as a filter the client applies.
pub fn range_filter(column: &ColumnRef, r: &RangePredicate) -> Option<ClientFilter> {
    Some(ClientFilter {
        sql: range_sql(r),
        expr: range_expr(column, r)?,
    })
}

/// An equality predicate as SQL (`members.pin = $2`), as the client applies it.
pub fn predicate_sql(p: &remodel_model::Predicate) -> String {
    let lhs = p.column.to_string();
    let v = p.value.as_deref().unwrap_or_default();
    match p.op {
        EqualityOp::Eq => format!("{lhs} = {v}"),
        EqualityOp::In => format!("{lhs} IN {v}"),
        EqualityOp::IsNull => format!("{lhs} IS NULL"),
    }
}

/// A range predicate as SQL (`trips.started_at >= $2 AND trips.started_at < $3`).
pub fn range_sql(r: &RangePredicate) -> String {
    let lhs = r.column.to_string();
    if r.prefix {
        let v = r
            .lower
            .as_ref()
            .map(|b| b.value.as_str())
            .unwrap_or_default();
        return format!("{lhs} LIKE {v}");
    }
    let mut parts = Vec::new();
    if let Some(l) = &r.lower {
        parts.push(format!(
            "{lhs} {} {}",
            if l.inclusive { ">=" } else { ">" },
            l.value
        ));
    }
    if let Some(u) = &r.upper {
        parts.push(format!(
            "{lhs} {} {}",
            if u.inclusive { "<=" } else { "<" },
            u.value
        ));
    }
    parts.join(" AND ")
}

/// When the `=` columns cover a unique key of the root (its primary key first), the read
/// returns at most one row: only that key partitions; the other equalities are compared on
/// the client (a table per combination, `(email, pin)`, would copy the row for nothing and
/// put the other values — a PIN, say — into a key).
fn unique_key_only(
    root: &Table,
    eq: &mut Vec<EqPred>,
    client: &mut Vec<ClientFilter>,
    notes: &mut Vec<String>,
) -> Vec<ColumnRef> {
    let bound = |k: &String| {
        eq.iter().any(|e| {
            e.op == EqualityOp::Eq && e.column.table == root.key() && e.column.column == *k
        })
    };
    let key = std::iter::once(&root.primary_key)
        .chain(root.unique_keys.iter().map(|u| &u.columns))
        .filter(|k| !k.is_empty())
        .find(|k| k.iter().all(bound));
    let Some(key) = key else {
        return Vec::new();
    };
    let (keep, rest): (Vec<EqPred>, Vec<EqPred>) = eq
        .drain(..)
        .partition(|e| e.column.table == root.key() && key.contains(&e.column.column));
    *eq = keep;
    if rest.is_empty() {
        return Vec::new();
    }
    let cols: Vec<String> = rest.iter().map(|e| e.column.to_string()).collect();
    notes.push(format!(
        "({}) is unique in {}: the read returns at most one row, found by that key; {} compared on the client",
        key.join(", "),
        root.key(),
        cols.join(", ")
    ));
    let moved = rest.iter().map(|e| e.column.clone()).collect();
    client.extend(rest.iter().map(EqPred::filter));
    moved
}

/// The root table of the schema (exists by construction of the shape).
pub fn root_table<'s>(schema: &'s Schema, shape: &Shape) -> Option<&'s Table> {
    schema.table(&shape.root)
}
