//! A read's method: its statement with every `?` bound as the plan says (once per bucket of a
//! `buckets` bind; no request when a restriction is NULL or the LIMIT is 0), its `then` lookups
//! (once per row, inner-join semantics), a counter table's rows, then the client's work in SQL's
//! order (filters, group, distinct, sort with its NULL order, offset, limit), and the rows as
//! instances of a class with the SQL result's columns in its order.

use super::{Gen, Local, Returns, Scope, Skip, Spell, Stmt};
use crate::names;
use crate::shape::{self, Param};
use remodel_model::{
    AccessPattern, BindValue, ClientWork, ColumnRef, ConsistencyLevel, Expr, QueryMapping,
    ReadStep, SortBy, Unnest,
};

/// A method and, for a read, its rows' accessors (for the executor).
pub(crate) type Method = (String, Option<Vec<String>>);

impl<'p, L: Spell> Gen<'p, L> {
    /// The method of read `q` (pattern `p`), and its rows' accessors (for the executor).
    pub(crate) fn read_method(
        &mut self,
        p: &'p AccessPattern,
        q: &'p QueryMapping,
        name: &str,
        params: &[Param],
    ) -> Result<Method, Skip> {
        let cql = match (&q.cql, &q.unsupported) {
            (Some(c), _) => c,
            (None, Some(why)) => return Err(Skip(format!("the plan serves it by no CQL: {why}"))),
            (None, None) => return Err(Skip("the plan serves it by no CQL".into())),
        };
        let fields = shape::fields(self.plan, q);
        if let Some(f) = fields.iter().find(|f| f.key.is_none()) {
            return Err(Skip(format!(
                "result column `{}` is computed by an expression of the SELECT list, which \
                 plan.json does not state",
                f.sql_name
            )));
        }
        let class = L::row_class_name(name);
        let level = q
            .consistency
            .as_ref()
            .map_or(ConsistencyLevel::LocalQuorum, |c| c.level);
        let sig = self.lang.signature(params);
        let mut body = Vec::new();
        if self.reads_clock(p) {
            body.push(self.clock());
        }
        body.push(Stmt::Let {
            ty: Local::Rows,
            name: "rows".into(),
            value: None,
        });
        self.requests(q, cql, level, params, &p.id, &mut body)?;
        for (k, step) in q.then.iter().enumerate() {
            self.step(k, step, level, params, &p.id, &mut body)?;
        }
        if let Some(c) = &q.counter {
            let table = q.table.as_deref().unwrap_or_default();
            let keys: Vec<String> = fields
                .iter()
                .filter_map(|f| f.key.as_deref().map(L::string))
                .collect();
            let key = L::string(&shape::target_key(table, &c.count_column));
            let grouped = L::bool(c.grouped).to_string();
            let call = L::rt(
                "counter_rows",
                &["rows".into(), key, grouped, L::list(&keys)],
            );
            body.push(Stmt::Set("rows".into(), call));
        } else {
            self.client(p, q, params, &mut body)?;
        }
        body.extend(L::rows_out(&class, &fields));
        let row_class = self.lang.row_class(&class, name, &p.id, &fields);
        self.row_classes.push(row_class);
        let doc = self.read_doc(p, q, level);
        let method = self.method(name, &sig, Returns::Rows(&class), &doc, &body);
        Ok((method, Some(fields.iter().map(L::row_accessor).collect())))
    }

    /// `now`, the execution's clock, from the hooks.
    pub(crate) fn clock(&self) -> Stmt {
        Stmt::Let {
            ty: Local::Clock,
            name: "now".into(),
            value: Some(format!("{}.now()", L::HOOKS)),
        }
    }

    /// True when anything the pattern evaluates reads the clock.
    pub(crate) fn reads_clock(&self, p: &AccessPattern) -> bool {
        let mut found = false;
        for e in names::exprs_of(self.plan, p) {
            e.walk(&mut |x| found |= matches!(x, Expr::Now | Expr::CurrentDate));
        }
        found
    }

    /// The documentation of a read: the SQL it replaces and the CQL it runs.
    fn read_doc(&self, p: &AccessPattern, q: &QueryMapping, level: ConsistencyLevel) -> String {
        let mut summary = format!(
            "{} ({} calls): the rows of the SQL below, from {}.",
            p.id,
            remodel_model::text::thousands(p.calls),
            q.table.as_deref().unwrap_or("?")
        );
        if let Some(l) = &p.label {
            summary = format!("{l}\n\n{summary}");
        }
        let mut cql = q.cql.clone().unwrap_or_default();
        let each = q
            .binds
            .iter()
            .any(|b| matches!(b.value, BindValue::Buckets { .. }));
        cql.push_str(&format!(
            "\n-- at {}{}",
            level.cql_name(),
            if each { ", once per bucket" } else { "" }
        ));
        for s in &q.then {
            cql.push_str(&format!("\n{}\n-- once per row read before", s.cql));
        }
        L::doc(&summary, &[("SQL", &p.sql), ("CQL", &cql)])
    }

    /// The first statement's requests: every bind's value, then one request per bucket.
    fn requests(
        &mut self,
        q: &QueryMapping,
        cql: &str,
        level: ConsistencyLevel,
        params: &[Param],
        pattern: &str,
        body: &mut Vec<Stmt>,
    ) -> Result<(), Skip> {
        let table = q.table.as_deref().unwrap_or_default();
        let statement = self.statement(cql, level);
        let spec = self.spec(table);
        let this = |c: &ColumnRef| {
            L::rt(
                "need",
                &[L::EMPTY_ROW.into(), L::string(&shape::row_key(c))],
            )
        };
        let scope = Scope::new(params, &this, pattern);
        let none = |_: &BindValue| None;
        let mut conds = Vec::new();
        let mut values = Vec::new();
        let mut loops = Vec::new();
        for (i, b) in q.binds.iter().enumerate() {
            let name = format!("b{i}");
            let (ty, value) = if let BindValue::Buckets {
                bucket,
                time_zone,
                lower,
                upper,
                upper_exclusive,
            } = &b.value
            {
                let lo = self.bind_value(lower, &scope, &none)?;
                let hi = self.bind_value(upper, &scope, &none)?;
                let z = self.zone(time_zone);
                let exclusive = L::bool(*upper_exclusive).into();
                loops.push(i);
                values.push(L::bind_marker(&b.cql_type, &format!("v{i}")));
                let args = [lo, hi, L::string(bucket.name()), z, exclusive];
                (Local::Buckets, L::rt("buckets", &args))
            } else if b.column == "limit" {
                let v = self.bind_value(&b.value, &scope, &none)?;
                conds.push(L::nonzero(&name));
                values.push(L::rt("limit_bind", std::slice::from_ref(&name)));
                (Local::Count, L::rt("count", &[v]))
            } else {
                let v = self.bind_value(&b.value, &scope, &none)?;
                conds.push(L::is_not_null(&name));
                values.push(name.clone());
                (Local::Object, L::bind_marker(&b.cql_type, &v))
            };
            body.push(Stmt::Let {
                ty,
                name,
                value: Some(value),
            });
        }
        let run = L::run(&statement, &spec, &values);
        let mut inner = vec![Stmt::Expr(L::extend("rows", &run))];
        for i in loops.iter().rev() {
            inner = vec![Stmt::For {
                ty: Local::Object,
                var: format!("v{i}"),
                iter: format!("b{i}"),
                body: inner,
            }];
        }
        // A restriction bound to NULL matches no row (SQL); LIMIT 0 returns none.
        if conds.is_empty() {
            body.extend(inner);
        } else {
            body.push(Stmt::If(conds.join(L::AND), inner));
        }
        Ok(())
    }

    /// A `then` lookup: once per row read before, each row joined with the rows it finds.
    fn step(
        &mut self,
        k: usize,
        step: &ReadStep,
        level: ConsistencyLevel,
        params: &[Param],
        pattern: &str,
        body: &mut Vec<Stmt>,
    ) -> Result<(), Skip> {
        let statement = self.statement(&step.cql, level);
        let spec = self.spec(&step.table);
        let need = |c: &ColumnRef| L::rt("need", &["r".into(), L::string(&shape::row_key(c))]);
        let scope = Scope::new(params, &need, pattern);
        let current = |v: &BindValue| match v {
            BindValue::Current { column } => Some(Ok(need(column))),
            _ => None,
        };
        let joined = L::joined(k);
        let mut each = Vec::new();
        let mut values = Vec::new();
        for (i, b) in step.binds.iter().enumerate() {
            let v = self.bind_value(&b.value, &scope, &current)?;
            let name = format!("s{i}");
            each.push(Stmt::Let {
                ty: Local::Object,
                name: name.clone(),
                value: Some(L::bind_marker(&b.cql_type, &v)),
            });
            each.push(Stmt::If(L::is_null(&name), vec![Stmt::Continue]));
            values.push(name);
        }
        each.push(Stmt::For {
            ty: Local::Row,
            var: "found".into(),
            iter: L::run(&statement, &spec, &values),
            body: vec![Stmt::Expr(L::push(&joined, &L::merge("r", "found")))],
        });
        body.push(Stmt::Let {
            ty: Local::Rows,
            name: joined.clone(),
            value: None,
        });
        body.push(Stmt::For {
            ty: Local::Row,
            var: "r".into(),
            iter: "rows".into(),
            body: each,
        });
        body.push(Stmt::Set("rows".into(), joined));
        Ok(())
    }

    /// The client's work on the rows, in SQL's order.
    fn client(
        &mut self,
        p: &AccessPattern,
        q: &QueryMapping,
        params: &[Param],
        body: &mut Vec<Stmt>,
    ) -> Result<(), Skip> {
        let held = self.held_keys(q);
        let same = join_equalities(p);
        let key = |c: &ColumnRef| resolve(c, &held, &same);
        let this = |c: &ColumnRef| L::client_column(&L::string(&key(c)));
        let scope = Scope::new(params, &this, &p.id);
        let w = &q.client;
        let set = |value: String| Stmt::Set("rows".into(), value);
        if let Some(u) = &w.unnest {
            body.push(set(unnest::<L>(q, u)));
        }
        for f in &w.filters {
            let cond = L::rt("is_true", &[self.expr(f, &scope)?]);
            body.push(set(L::filter_rows("rows", &cond)));
        }
        if let Some(g) = group::<L>(w, &key) {
            body.push(set(g));
        }
        if w.distinct {
            body.push(set(L::rt("distinct", &["rows".into()])));
        }
        if !w.sort.is_empty() {
            let keys: Vec<String> = w
                .sort
                .iter()
                .map(|k| {
                    let f = match &k.by {
                        SortBy::Column { column } => key(column),
                        SortBy::Aggregate { aggregate } => shape::aggregate_key(aggregate),
                    };
                    let (desc, nulls_first) = (L::bool(k.desc), L::bool(k.nulls_first));
                    L::record("SortKey", &[L::string(&f), desc.into(), nulls_first.into()])
                })
                .collect();
            body.push(set(L::rt("sort_rows", &["rows".into(), L::list(&keys)])));
        }
        if let Some(o) = &w.offset {
            body.extend(L::offset(&L::rt("count", &[self.expr(o, &scope)?])));
        }
        if let Some(l) = &w.limit {
            body.extend(L::limit(&L::rt("count", &[self.expr(l, &scope)?])));
        }
        Ok(())
    }

    /// The source keys the rows of read `q` hold: its table's columns and its lookups'.
    fn held_keys(&self, q: &QueryMapping) -> Vec<String> {
        let tables = q.table.iter().chain(q.then.iter().map(|s| &s.table));
        let mut out = Vec::new();
        for t in tables {
            if let Some(t) = self.plan.design.tables.iter().find(|x| x.name == *t) {
                out.extend(
                    t.columns
                        .iter()
                        .filter_map(|c| c.source.as_ref())
                        .map(shape::row_key),
                );
            }
        }
        out
    }
}

/// The client's GROUP BY and aggregates, if any.
fn group<L: Spell>(w: &ClientWork, key: &dyn Fn(&ColumnRef) -> String) -> Option<String> {
    if w.group_by.is_empty() && w.aggregates.is_empty() {
        return None;
    }
    let by: Vec<String> = w.group_by.iter().map(|c| L::string(&key(c))).collect();
    let aggs: Vec<String> = w
        .aggregates
        .iter()
        .map(|a| {
            let col = a
                .column
                .as_ref()
                .map_or(L::NULL.into(), |c| L::string(&key(c)));
            let items = [
                L::string(&shape::aggregate_key(a)),
                L::string(&a.function.to_ascii_lowercase()),
                col,
                L::bool(a.distinct).into(),
            ];
            L::record("Agg", &items)
        })
        .collect();
    let args = [
        "rows".into(),
        L::list(&by),
        L::list(&aggs),
        L::bool(w.group_row.is_some()).into(),
    ];
    Some(L::rt("group", &args))
}

/// Pairs of source columns the pattern's joins make equal (either stands for the other).
fn join_equalities(p: &AccessPattern) -> Vec<(ColumnRef, ColumnRef)> {
    p.analysis
        .join_path
        .iter()
        .flat_map(|j| {
            j.left_columns.iter().zip(&j.right_columns).map(|(l, r)| {
                (
                    ColumnRef::new(&j.left_table, l),
                    ColumnRef::new(&j.right_table, r),
                )
            })
        })
        .collect()
}

/// The key of `c` in the rows: its own, or that of a column the joins make equal to it which the
/// rows hold.
fn resolve(c: &ColumnRef, held: &[String], same: &[(ColumnRef, ColumnRef)]) -> String {
    let own = shape::row_key(c);
    if held.contains(&own) {
        return own;
    }
    same.iter()
        .filter_map(|(a, b)| {
            if a == c {
                Some(b)
            } else if b == c {
                Some(a)
            } else {
                None
            }
        })
        .map(shape::row_key)
        .find(|k| held.contains(k))
        .unwrap_or(own)
}

/// The client's first step of a read of an embedded collection: each entry of the collection
/// column a row (the entry type's i-th field the child's i-th column, the linked columns from
/// the row read), an empty collection no row.
fn unnest<L: Spell>(q: &QueryMapping, u: &Unnest) -> String {
    let table = q.table.as_deref().unwrap_or_default();
    let child = |c: &str| L::string(&shape::row_key(&ColumnRef::new(u.table.clone(), c)));
    let fields: Vec<String> = u.columns.iter().map(|c| child(c)).collect();
    let linked: Vec<(String, String)> = u
        .linked
        .iter()
        .map(|(c, parent)| (child(c), L::string(&shape::row_key(parent))))
        .collect();
    let collection = L::string(&shape::target_key(table, &u.collection));
    L::rt(
        "unnest",
        &[
            "rows".into(),
            collection,
            L::list(&fields),
            L::pair_list(&linked),
        ],
    )
}
