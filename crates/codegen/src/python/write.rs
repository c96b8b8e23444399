//! A write's method: its whole write path as the plan states it. The statement's `WHERE c = …`
//! values and new values (`values`, each a closure of the row a statement runs for), the reads
//! before write in order (filtered; an UPDATE or DELETE of a row that does not exist changes
//! nothing; a named read's row; an upsert's existing row deciding what is written), then every
//! target statement (once per row of a `for_each`, when its guard holds), sent as the path's
//! batch says, the counter statements apart, at the path's consistency level. Which value
//! `cur(c)` and `new(c)` are is the runtime's `WriteState`, the one reading of plan.json's rules.

use super::expr::{py_bool, string, Scope};
use super::{docstring, Gen, Skip};
use crate::shape::{self, Param};
use remodel_model::{
    AccessPattern, BatchKind, BindValue, ColumnRef, ConflictAction, ConsistencyLevel, CqlType,
    EncodedForm, Guard, NativeType, StatementKind, WritePath, WriteTarget,
};

/// What the binds of one place of a write path read: the row a statement runs for (`None` or a
/// loop's `each`) and the written table.
struct At<'a> {
    row: &'a str,
    table: &'a str,
}

impl<'p> Gen<'p> {
    /// The method of write path `w` (pattern `p`).
    pub(super) fn write_method(
        &mut self,
        p: &'p AccessPattern,
        w: &'p WritePath,
        name: &str,
        params: &[Param],
    ) -> Result<(String, Option<Vec<String>>), Skip> {
        if let Some(why) = &w.unsupported {
            return Err(Skip(format!("the plan has no write path for it: {why}")));
        }
        let sig = self.signature(params);
        let level = w
            .consistency
            .as_ref()
            .map_or(ConsistencyLevel::LocalQuorum, |c| c.level);
        let mut out = format!("    def {name}({sig}) -> None:\n");
        out.push_str(&self.write_doc(p, w, level));
        if let Some(t) = &w.served_by_ttl {
            out.push_str(&format!(
                "        # Served by the TTL of {}: nothing is sent.\n        return None\n",
                t.tables.join(", ")
            ));
            return Ok((out, None));
        }
        let info = p
            .analysis
            .write
            .as_ref()
            .ok_or_else(|| Skip("the pattern has no write analysis".into()))?;
        let table = info.table.as_str();
        if self.reads_clock(p) {
            out.push_str("        now = self._hooks.now()\n");
        }
        if self.binds_row_id(w) {
            out.push_str("        row_id = self._hooks.timeuuid()\n");
        }
        self.state(p, w, table, params, &mut out)?;
        for (i, r) in w.read_before_write.iter().enumerate() {
            self.read_before(p, w, i, r, table, params, level, &mut out)?;
        }
        if let Some(u) = &w.upsert {
            self.upsert(p, u, table, params, &mut out)?;
        }
        out.push_str("        main: list[tuple[Any, list[Any]]] = []\n");
        let counters = w.targets.iter().any(|t| t.counter.is_some());
        if counters {
            out.push_str("        counters: list[tuple[Any, list[Any]]] = []\n");
        }
        self.import("Any");
        for t in &w.targets {
            self.target(p, w, t, table, params, level, &mut out)?;
        }
        let kind = match w.batch.as_ref().map(|b| b.kind) {
            Some(BatchKind::Unlogged) => "unlogged",
            _ => "logged",
        };
        let level = string(level.cql_name());
        // A batch that could pass Cassandra's size limit goes in chunks, as the plan says.
        let chunk = match w.batch.as_ref().and_then(|b| b.max_statements) {
            Some(n) => format!(", max_statements={n}"),
            None => String::new(),
        };
        out.push_str(&format!(
            "        self._db.send(main, {}, {level}{chunk})\n",
            string(kind)
        ));
        if counters {
            out.push_str(&format!(
                "        # Counter updates go apart, after the rest (Cassandra takes them with nothing else).\n        self._db.send(counters, \"counter\", {level})\n"
            ));
        }
        Ok((out, None))
    }

    /// True when a statement of `w` binds a generated row id.
    fn binds_row_id(&self, w: &WritePath) -> bool {
        fn has(v: &BindValue) -> bool {
            match v {
                BindValue::RowId { .. } => true,
                BindValue::Bucket { of, .. }
                | BindValue::EpochMicros { of, .. }
                | BindValue::Encoded { of, .. }
                | BindValue::SecondsUntil { of, .. } => has(of),
                _ => false,
            }
        }
        let binds = w
            .targets
            .iter()
            .flat_map(|t| &t.binds)
            .chain(w.read_before_write.iter().flat_map(|r| &r.binds));
        binds.into_iter().any(|b| has(&b.value))
            || w.targets.iter().any(|t| {
                t.guard.as_ref().is_some_and(|g| {
                    g.conditions().iter().any(
                        |c| matches!(c, Guard::AllNotNull { values } if values.iter().any(has)),
                    )
                })
            })
    }

    /// The docstring of a write: the SQL it replaces and every statement of its path.
    fn write_doc(&self, p: &AccessPattern, w: &WritePath, level: ConsistencyLevel) -> String {
        let mut summary = format!(
            "{} ({} calls): the write path of the SQL below.",
            p.id,
            remodel_model::text::thousands(p.calls)
        );
        if let Some(l) = &p.label {
            summary = format!("{l}\n\n{summary}");
        }
        let mut cql = String::new();
        for (i, r) in w.read_before_write.iter().enumerate() {
            cql.push_str(&format!(
                "-- read before write {i} ({})\n{}\n",
                r.table, r.cql
            ));
        }
        for t in &w.targets {
            let mut how = Vec::new();
            if let Some(i) = t.for_each {
                how.push(format!("once per row of read {i}"));
            }
            if let Some(g) = &t.guard {
                how.push(g.to_string());
            }
            let how = if how.is_empty() {
                String::new()
            } else {
                format!(", {}", how.join(", "))
            };
            cql.push_str(&format!("-- {}{how}\n{}\n", t.table, t.cql));
        }
        let batch = w.batch.as_ref().map_or("logged", |b| match b.kind {
            BatchKind::Single => "single",
            BatchKind::Logged => "logged",
            BatchKind::Unlogged => "unlogged",
            BatchKind::Counter => "counter",
        });
        cql.push_str(&format!("-- sent: {batch}, at {}", level.cql_name()));
        docstring(&summary, &[("SQL", &p.sql), ("CQL", &cql)], 8)
    }

    /// The write's state: the statement's `=` values of the written table, its new values.
    fn state(
        &mut self,
        p: &AccessPattern,
        w: &WritePath,
        table: &str,
        params: &[Param],
        out: &mut String,
    ) -> Result<(), Skip> {
        let this = |c: &ColumnRef| format!("st.current({}, row)", string(&shape::row_key(c)));
        let excluded = |c: &ColumnRef| format!("st.excluded({})", string(&shape::row_key(c)));
        let step = |name: &str, c: &ColumnRef| {
            format!(
                "rt.need(st.steps[{}], {})",
                string(name),
                string(&shape::row_key(c))
            )
        };
        let mut key = Vec::new();
        for e in p
            .analysis
            .equality
            .iter()
            .filter(|e| e.column.table == table && e.op == remodel_model::EqualityOp::Eq)
        {
            let Some(x) = &e.expr else { continue };
            let scope = Scope::new(params, &this, &p.id);
            let v = self.expr(x, &scope)?;
            key.push(format!("{}: {v}", string(&shape::row_key(&e.column))));
        }
        out.push_str(&format!(
            "        st = rt.WriteState({}, {{{}}})\n",
            py_bool(p.kind == StatementKind::Insert),
            key.join(", ")
        ));
        let mut values = Vec::new();
        for v in w.values.iter().filter(|v| v.column.table == table) {
            let scope = Scope {
                params,
                this: &this,
                step: Some(&step),
                excluded: Some(&excluded),
                column: Some(&v.column),
                pattern: &p.id,
            };
            let e = self.expr(&v.value, &scope)?;
            values.push(format!(
                "            {}: lambda row: {e},\n",
                string(&shape::row_key(&v.column))
            ));
        }
        if !values.is_empty() {
            out.push_str(&format!(
                "        st.values = {{\n{}        }}\n",
                values.concat()
            ));
        }
        Ok(())
    }

    /// Read before write `i`: its binds, its rows kept by its filter, what they decide.
    #[allow(clippy::too_many_arguments)]
    fn read_before(
        &mut self,
        p: &AccessPattern,
        w: &WritePath,
        i: usize,
        r: &remodel_model::ReadBeforeWrite,
        table: &str,
        params: &[Param],
        level: ConsistencyLevel,
        out: &mut String,
    ) -> Result<(), Skip> {
        if r.cql.is_empty() {
            return Err(Skip(format!(
                "read before write {i} of {} has no CQL: {}",
                r.table,
                r.note.as_deref().unwrap_or("no table serves it")
            )));
        }
        let attr = self.statement(&r.cql, level);
        let spec = self.spec(&r.table);
        let at = At { row: "None", table };
        let mut names = Vec::new();
        for (j, b) in r.binds.iter().enumerate() {
            let v = self.write_bind(p, &b.value, &at, params)?;
            out.push_str(&format!(
                "        k{i}_{j} = {}\n",
                self.marker(&b.cql_type, &v)
            ));
            names.push(format!("k{i}_{j}"));
        }
        let conds: Vec<String> = names.iter().map(|n| format!("{n} is not None")).collect();
        let run = format!("self._db.run(self.{attr}, [{}], {spec})", names.join(", "));
        // A key bound to NULL finds no row, as `WHERE k = NULL` finds none.
        if conds.is_empty() {
            out.push_str(&format!("        r{i} = {run}\n"));
        } else {
            out.push_str(&format!(
                "        r{i} = {run} if {} else []\n",
                conds.join(" and ")
            ));
        }
        let this = |c: &ColumnRef| format!("rt.need(r, {})", string(&shape::row_key(c)));
        for f in &r.filter {
            let scope = Scope::new(params, &this, &p.id);
            let e = self.expr(f, &scope)?;
            out.push_str(&format!(
                "        r{i} = [r for r in r{i} if rt.is_true({e})]\n"
            ));
        }
        out.push_str(&format!(
            "        st.read(r{i}, {}, {})\n",
            py_bool(r.reads_new),
            py_bool(r.many)
        ));
        let entity = self
            .plan
            .design
            .tables
            .iter()
            .find(|t| t.name == r.table)
            .map(|t| t.entity.as_str());
        let written_row = matches!(p.kind, StatementKind::Update | StatementKind::Delete)
            && !r.reads_new
            && !r.many
            && r.name.is_none()
            && entity == Some(table);
        if written_row {
            out.push_str(&format!(
                "        if not r{i}:\n            # No such row: the statement changes nothing (a CQL UPDATE would create it).\n            return None\n"
            ));
        }
        if let Some(n) = &r.name {
            out.push_str(&format!(
                "        if not r{i}:\n            # `FROM … {n}` joins no row: nothing changes.\n            return None\n        st.steps[{}] = r{i}[0]\n",
                string(n)
            ));
        }
        if w.upsert.as_ref().is_some_and(|u| u.existing == i) {
            out.push_str(&format!(
                "        st.existing = r{i}[0] if r{i} else None\n"
            ));
        }
        Ok(())
    }

    /// An upsert that met its row: `DO NOTHING` writes nothing; `DO UPDATE` writes the row with
    /// its `SET`, where its `WHERE` holds.
    fn upsert(
        &mut self,
        p: &AccessPattern,
        u: &remodel_model::Upsert,
        table: &str,
        params: &[Param],
        out: &mut String,
    ) -> Result<(), Skip> {
        let this = |c: &ColumnRef| format!("st.current({}, row)", string(&shape::row_key(c)));
        let excluded = |c: &ColumnRef| format!("st.excluded({})", string(&shape::row_key(c)));
        match &u.action {
            ConflictAction::Nothing => {
                out.push_str("        if st.existing is not None:\n            # ON CONFLICT DO NOTHING\n            return None\n");
            }
            ConflictAction::Update { set, filter } => {
                let mut sets = Vec::new();
                for v in set.iter().filter(|v| v.column.table == table) {
                    let scope = Scope {
                        params,
                        this: &this,
                        step: None,
                        excluded: Some(&excluded),
                        column: Some(&v.column),
                        pattern: &p.id,
                    };
                    let e = self.expr(&v.value, &scope)?;
                    sets.push(format!(
                        "            {}: lambda row: {e},\n",
                        string(&shape::row_key(&v.column))
                    ));
                }
                out.push_str(&format!(
                    "        st.update_set = {{\n{}        }}\n",
                    sets.concat()
                ));
                let mut conds = Vec::new();
                for f in filter {
                    let this = |c: &ColumnRef| {
                        format!("st.current({}, st.existing)", string(&shape::row_key(c)))
                    };
                    let scope = Scope {
                        params,
                        this: &this,
                        step: None,
                        excluded: Some(&excluded),
                        column: None,
                        pattern: &p.id,
                    };
                    conds.push(format!("rt.is_true({})", self.expr(f, &scope)?));
                }
                if !conds.is_empty() {
                    out.push_str(&format!(
                        "        if st.existing is not None and not ({}):\n            # ON CONFLICT DO UPDATE … WHERE: it does not hold, nothing is written.\n            return None\n",
                        conds.join(" and ")
                    ));
                }
            }
        }
        Ok(())
    }

    /// One target statement: for its row (or each row of its `for_each` read), when its guard
    /// holds, its values appended to the batch it goes in.
    #[allow(clippy::too_many_arguments)]
    fn target(
        &mut self,
        p: &AccessPattern,
        w: &WritePath,
        t: &WriteTarget,
        table: &str,
        params: &[Param],
        level: ConsistencyLevel,
        out: &mut String,
    ) -> Result<(), Skip> {
        let attr = self.statement(&t.cql, level);
        let list = if t.counter.is_some() {
            "counters"
        } else {
            "main"
        };
        let (row, mut pad) = match t.for_each {
            Some(i) if i < w.read_before_write.len() => {
                out.push_str(&format!(
                    "        # {}, once per row of read {i}\n        for each in r{i}:\n",
                    t.table
                ));
                ("each", 12)
            }
            Some(i) => {
                return Err(Skip(format!(
                    "a statement runs for read {i}, which the path does not have"
                )))
            }
            None => {
                out.push_str(&format!("        # {}\n", t.table));
                ("None", 8)
            }
        };
        let at = At { row, table };
        if let Some(g) = &t.guard {
            let cond = self.guard(p, t, g, &at, params)?;
            out.push_str(&format!("{}if {cond}:\n", " ".repeat(pad)));
            pad += 4;
        }
        let indent = " ".repeat(pad);
        out.push_str(&format!("{indent}{list}.append((self.{attr}, [\n"));
        for b in &t.binds {
            let v = self.write_bind(p, &b.value, &at, params)?;
            out.push_str(&format!("{indent}    {},\n", self.marker(&b.cql_type, &v)));
        }
        out.push_str(&format!("{indent}]))\n"));
        Ok(())
    }

    /// A guard's condition as Python.
    fn guard(
        &mut self,
        p: &AccessPattern,
        t: &WriteTarget,
        g: &Guard,
        at: &At<'_>,
        params: &[Param],
    ) -> Result<String, Skip> {
        let mut conds = Vec::new();
        for c in g.conditions() {
            conds.push(match c {
                Guard::All { .. } => continue,
                Guard::KeyChanged { columns } => {
                    let mut any = Vec::new();
                    for col in columns {
                        any.push(self.changed(t, col, at));
                    }
                    format!("({})", any.join(" or "))
                }
                Guard::NewIsNull { column } => {
                    format!("{} is None", new_of(column, at))
                }
                Guard::NewIsNotNull { column } => {
                    format!("{} is not None", new_of(column, at))
                }
                Guard::AllNotNull { values } => {
                    let mut all = Vec::new();
                    for v in values {
                        all.push(format!(
                            "{} is not None",
                            self.write_bind(p, v, at, params)?
                        ));
                    }
                    format!("({})", all.join(" and "))
                }
            });
        }
        Ok(if conds.is_empty() {
            "True".into()
        } else {
            conds.join(" and ")
        })
    }

    /// True when key column `c` moves, compared as target `t` holds it.
    fn changed(&self, t: &WriteTarget, c: &ColumnRef, at: &At<'_>) -> String {
        let cur = format!("st.current({}, {})", string(&shape::row_key(c)), at.row);
        let new = new_of(c, at);
        let of_c = |v: &BindValue| matches!(v, BindValue::Current { column } | BindValue::New { column } if column == c);
        let micros = t.binds.iter().any(|b| match &b.value {
            BindValue::EpochMicros { of, .. } => of_c(of),
            BindValue::Encoded { of, encoding } if encoding.form() == EncodedForm::Micros => {
                of_c(of)
            }
            _ => false,
        });
        if micros {
            return format!(
                "rt.changed(rt.epoch_micros({cur}), rt.epoch_micros({new}), \"plain\")"
            );
        }
        let stored = t
            .binds
            .iter()
            .find(|b| of_c(&b.value))
            .map(|b| &b.cql_type)
            .and_then(|ty: &CqlType| ty.unfrozen().native());
        let kind = if stored == Some(NativeType::Timestamp) {
            "timestamp"
        } else {
            "plain"
        };
        format!("rt.changed({cur}, {new}, \"{kind}\")")
    }

    /// A bind of a write path in the source's meaning: `cur`, `new` and row ids read from the
    /// write's state for the row at hand.
    fn write_bind(
        &mut self,
        p: &AccessPattern,
        v: &BindValue,
        at: &At<'_>,
        params: &[Param],
    ) -> Result<String, Skip> {
        if let BindValue::Entry { key, fields } = v {
            let mut parts = Vec::with_capacity(fields.len());
            for (name, f) in fields {
                parts.push(format!(
                    "{}: {}",
                    string(name),
                    self.write_bind(p, f, at, params)?
                ));
            }
            let entry = format!("rt.entry({{{}}})", parts.join(", "));
            return Ok(match key {
                Some(k) => format!("{{{}: {entry}}}", self.write_bind(p, k, at, params)?),
                None => entry,
            });
        }
        let this =
            |c: &ColumnRef| format!("st.current({}, {})", string(&shape::row_key(c)), at.row);
        let scope = Scope::new(params, &this, &p.id);
        let place = |v: &BindValue| -> Option<Result<String, Skip>> {
            match v {
                BindValue::Current { column } => Some(Ok(format!(
                    "st.current({}, {})",
                    string(&shape::row_key(column)),
                    at.row
                ))),
                BindValue::New { column } => Some(Ok(new_of(column, at))),
                BindValue::RowId { table } => Some(Ok(format!(
                    "st.row_id({}, row_id, {}, {})",
                    string(table),
                    py_bool(table == at.table),
                    at.row
                ))),
                BindValue::Rewritten { column } => Some(Err(Skip(format!(
                    "the collection {column} rewritten on the client is not generated yet"
                )))),
                _ => None,
            }
        };
        self.bind_value(v, &scope, &place)
    }
}

/// `new(c)` for the row at hand.
fn new_of(c: &ColumnRef, at: &At<'_>) -> String {
    format!(
        "st.new({}, {}, {})",
        string(&shape::row_key(c)),
        py_bool(c.table == at.table),
        at.row
    )
}
