//! A read's method: its statement with every `?` bound as the plan says (once per bucket of a
//! `buckets` bind; no request when a restriction is NULL or the LIMIT is 0), its `then` lookups
//! (once per row, inner-join semantics), a counter table's rows, then the client's work in SQL's
//! order (filters, group, distinct, sort with its NULL order, offset, limit), and the rows as a
//! frozen dataclass with the SQL result's columns in its order.

use super::expr::{string, Scope};
use super::{docstring, ident, Gen, Skip};
use crate::names;
use crate::shape::{self, Field, Param};
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, ConsistencyLevel, Expr, QueryMapping, SortBy,
};

impl<'p> Gen<'p> {
    /// The method of read `q` (pattern `p`), and its rows' field names (for the executor).
    pub(super) fn read_method(
        &mut self,
        p: &'p AccessPattern,
        q: &'p QueryMapping,
        name: &str,
        params: &[Param],
    ) -> Result<(String, Option<Vec<String>>), Skip> {
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
        let class = format!("{}Row", names::pascal(name));
        let level = q
            .consistency
            .as_ref()
            .map_or(ConsistencyLevel::LocalQuorum, |c| c.level);
        let sig = self.signature(params);
        let mut body = String::new();
        if self.reads_clock(p) {
            body.push_str("        now = self._hooks.now()\n");
        }
        body.push_str("        rows: list[rt.Row] = []\n");
        self.requests(q, cql, level, params, &p.id, &mut body)?;
        for (k, step) in q.then.iter().enumerate() {
            self.step(k, step, level, params, &p.id, &mut body)?;
        }
        if let Some(c) = &q.counter {
            let table = q.table.as_deref().unwrap_or_default();
            let keys: Vec<String> = fields.iter().filter_map(|f| f.key.clone()).collect();
            body.push_str(&format!(
                "        rows = rt.counter_rows(rows, {}, {}, [{}])\n",
                string(&shape::target_key(table, &c.count_column)),
                super::expr::py_bool(c.grouped),
                keys.iter()
                    .map(|k| string(k))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else {
            self.client(p, q, params, &mut body)?;
        }
        body.push_str(&format!("        return [\n            {class}(\n"));
        for f in &fields {
            let key = f.key.as_deref().unwrap_or_default();
            body.push_str(&format!(
                "                {}=r[{}],\n",
                ident(&f.name),
                string(key)
            ));
        }
        body.push_str("            )\n            for r in rows\n        ]\n");
        self.row_class(&class, name, &p.id, &fields);
        let mut out = format!("    def {name}({sig}) -> list[{class}]:\n");
        out.push_str(&self.read_doc(p, q, level));
        out.push_str(&body);
        Ok((out, Some(fields.iter().map(|f| ident(&f.name)).collect())))
    }

    /// True when anything the pattern evaluates reads the clock.
    pub(super) fn reads_clock(&self, p: &AccessPattern) -> bool {
        let mut found = false;
        for e in names::exprs_of(self.plan, p) {
            e.walk(&mut |x| found |= matches!(x, Expr::Now | Expr::CurrentDate));
        }
        found
    }

    /// The docstring of a read: the SQL it replaces and the CQL it runs.
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
        docstring(&summary, &[("SQL", &p.sql), ("CQL", &cql)], 8)
    }

    /// The first statement's requests: every bind's value, then one request per bucket.
    fn requests(
        &mut self,
        q: &QueryMapping,
        cql: &str,
        level: ConsistencyLevel,
        params: &[Param],
        pattern: &str,
        body: &mut String,
    ) -> Result<(), Skip> {
        let table = q.table.as_deref().unwrap_or_default();
        let attr = self.statement(cql, level);
        let spec = self.spec(table);
        let this = |c: &ColumnRef| format!("rt.need({{}}, {})", string(&shape::row_key(c)));
        let scope = Scope::new(params, &this, pattern);
        let none = |_: &BindValue| None;
        let mut conds = Vec::new();
        let mut values = Vec::new();
        let mut loops = Vec::new();
        for (i, b) in q.binds.iter().enumerate() {
            if let BindValue::Buckets {
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
                body.push_str(&format!(
                    "        b{i} = rt.buckets({lo}, {hi}, {}, {z}, {})\n",
                    string(bucket.name()),
                    super::expr::py_bool(*upper_exclusive)
                ));
                loops.push(i);
                values.push(self.marker(&b.cql_type, &format!("v{i}")));
                continue;
            }
            let v = self.bind_value(&b.value, &scope, &none)?;
            if b.column == "limit" {
                body.push_str(&format!("        b{i} = rt.count({v})\n"));
                conds.push(format!("b{i} != 0"));
                values.push(format!("rt.limit_bind(b{i})"));
            } else {
                body.push_str(&format!(
                    "        b{i} = {}\n",
                    self.marker(&b.cql_type, &v)
                ));
                conds.push(format!("b{i} is not None"));
                values.push(format!("b{i}"));
            }
        }
        let mut indent = 8;
        if !conds.is_empty() {
            // A restriction bound to NULL matches no row (SQL); LIMIT 0 returns none.
            body.push_str(&format!("        if {}:\n", conds.join(" and ")));
            indent += 4;
        }
        for i in &loops {
            body.push_str(&format!("{}for v{i} in b{i}:\n", " ".repeat(indent)));
            indent += 4;
        }
        body.push_str(&format!(
            "{}rows += self._db.run(self.{attr}, [{}], {spec})\n",
            " ".repeat(indent),
            values.join(", ")
        ));
        Ok(())
    }

    /// A `then` lookup: once per row read before, each row joined with the rows it finds.
    fn step(
        &mut self,
        k: usize,
        step: &remodel_model::ReadStep,
        level: ConsistencyLevel,
        params: &[Param],
        pattern: &str,
        body: &mut String,
    ) -> Result<(), Skip> {
        let attr = self.statement(&step.cql, level);
        let spec = self.spec(&step.table);
        let this = |c: &ColumnRef| format!("rt.need(r, {})", string(&shape::row_key(c)));
        let scope = Scope::new(params, &this, pattern);
        let current = |v: &BindValue| match v {
            BindValue::Current { column } => Some(Ok(format!(
                "rt.need(r, {})",
                string(&shape::row_key(column))
            ))),
            _ => None,
        };
        body.push_str(&format!(
            "        joined_{k}: list[rt.Row] = []\n        for r in rows:\n"
        ));
        let mut values = Vec::new();
        for (i, b) in step.binds.iter().enumerate() {
            let v = self.bind_value(&b.value, &scope, &current)?;
            body.push_str(&format!(
                "            s{i} = {}\n            if s{i} is None:\n                continue\n",
                self.marker(&b.cql_type, &v)
            ));
            values.push(format!("s{i}"));
        }
        body.push_str(&format!(
            "            for found in self._db.run(self.{attr}, [{}], {spec}):\n                \
             joined_{k}.append({{**r, **found}})\n        rows = joined_{k}\n",
            values.join(", ")
        ));
        Ok(())
    }

    /// The client's work on the rows, in SQL's order.
    fn client(
        &mut self,
        p: &AccessPattern,
        q: &QueryMapping,
        params: &[Param],
        body: &mut String,
    ) -> Result<(), Skip> {
        let held = self.held_keys(q);
        let same = join_equalities(p);
        let key = |c: &ColumnRef| resolve(c, &held, &same);
        let this = |c: &ColumnRef| format!("r[{}]", string(&key(c)));
        let scope = Scope::new(params, &this, &p.id);
        let w = &q.client;
        if let Some(u) = &w.unnest {
            body.push_str(&unnest(q, u));
        }
        for f in &w.filters {
            let e = self.expr(f, &scope)?;
            body.push_str(&format!(
                "        rows = [r for r in rows if rt.is_true({e})]\n"
            ));
        }
        if !w.group_by.is_empty() || !w.aggregates.is_empty() {
            let by: Vec<String> = w.group_by.iter().map(|c| string(&key(c))).collect();
            let aggs: Vec<String> = w
                .aggregates
                .iter()
                .map(|a| {
                    let col = a.column.as_ref().map_or("None".into(), |c| string(&key(c)));
                    format!(
                        "({}, {}, {col}, {})",
                        string(&aggregate_key(a)),
                        string(&a.function.to_ascii_lowercase()),
                        super::expr::py_bool(a.distinct)
                    )
                })
                .collect();
            body.push_str(&format!(
                "        rows = rt.group(rows, [{}], [{}], {})\n",
                by.join(", "),
                aggs.join(", "),
                super::expr::py_bool(w.group_row.is_some())
            ));
        }
        if w.distinct {
            body.push_str("        rows = rt.distinct(rows)\n");
        }
        if !w.sort.is_empty() {
            let keys: Vec<String> = w
                .sort
                .iter()
                .map(|k| {
                    let f = match &k.by {
                        SortBy::Column { column } => key(column),
                        SortBy::Aggregate { aggregate } => aggregate_key(aggregate),
                    };
                    format!(
                        "({}, {}, {})",
                        string(&f),
                        super::expr::py_bool(k.desc),
                        super::expr::py_bool(k.nulls_first)
                    )
                })
                .collect();
            body.push_str(&format!(
                "        rows = rt.sort_rows(rows, [{}])\n",
                keys.join(", ")
            ));
        }
        if let Some(o) = &w.offset {
            let e = self.expr(o, &scope)?;
            body.push_str(&format!(
                "        skip = rt.count({e})\n        if skip:\n            rows = rows[skip:]\n"
            ));
        }
        if let Some(l) = &w.limit {
            let e = self.expr(l, &scope)?;
            body.push_str(&format!(
                "        keep = rt.count({e})\n        if keep is not None:\n            rows = rows[:keep]\n"
            ));
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

    /// The frozen dataclass of a read's rows.
    fn row_class(&mut self, class: &str, function: &str, pattern: &str, fields: &[Field]) {
        let mut out = format!(
            "@dataclasses.dataclass(frozen=True, slots=True)\nclass {class}:\n    \"\"\"A row of `{function}` ({pattern}), with the SQL result's columns in its order.\"\"\"\n\n"
        );
        for f in fields {
            let h = self.hint(f.ty);
            let hint = if f.nullable && h != "Any" {
                format!("{h} | None")
            } else {
                h.to_string()
            };
            out.push_str(&format!("    {}: {hint}\n", ident(&f.name)));
        }
        self.rows.push(class.to_string());
        self.row_classes.push(out);
    }
}

/// The key of a client aggregate's value in the rows (`count(*)`, `sum(DISTINCT t.c)`).
fn aggregate_key(a: &remodel_model::Aggregate) -> String {
    shape::aggregate_key(a)
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
fn unnest(q: &QueryMapping, u: &remodel_model::Unnest) -> String {
    let table = q.table.as_deref().unwrap_or_default();
    let child = |c: &str| {
        string(&shape::row_key(&ColumnRef::new(
            u.table.clone(),
            c.to_string(),
        )))
    };
    let fields: Vec<String> = u.columns.iter().map(|c| child(c)).collect();
    let linked: Vec<String> = u
        .linked
        .iter()
        .map(|(c, parent)| format!("({}, {})", child(c), string(&shape::row_key(parent))))
        .collect();
    format!(
        "        rows = rt.unnest(rows, {}, [{}], [{}])\n",
        string(&shape::target_key(table, &u.collection)),
        fields.join(", "),
        linked.join(", ")
    )
}
