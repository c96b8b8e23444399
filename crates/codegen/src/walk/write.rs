//! A write's method: its whole write path as the plan states it. The statement's `WHERE c = …`
//! values and new values (`values`, each a function of the row a statement runs for), the reads
//! before write in order (filtered; an UPDATE or DELETE of a row that does not exist changes
//! nothing; a named read's row; an upsert's existing row deciding what is written), then every
//! target statement (once per row of a `for_each`, when its guard holds), sent as the path's
//! batch says, the counter statements apart, at the path's consistency level. Which value
//! `cur(c)` and `new(c)` are is the runtime's `WriteState`, the one reading of plan.json's rules.

use super::read::Method;
use super::{Gen, Local, Returns, Scope, Skip, Spell, Stmt};
use crate::shape::{self, Param};
use remodel_model::{
    AccessPattern, BatchKind, BindValue, ColumnRef, ConflictAction, ConsistencyLevel, CqlType,
    EncodedForm, Guard, NativeType, ReadBeforeWrite, StatementKind, Upsert, WritePath, WriteTarget,
};

/// Where the binds of one place of a write path are evaluated.
struct At<'a> {
    /// The pattern.
    p: &'a AccessPattern,
    /// Its parameters.
    params: &'a [Param],
    /// The row a statement runs for (null, or a loop's `each`).
    row: &'a str,
    /// The written table.
    table: &'a str,
}

/// What one write path's method is about: its pattern and path, its parameters, the written
/// table and the consistency level.
struct Path<'a> {
    p: &'a AccessPattern,
    w: &'a WritePath,
    params: &'a [Param],
    table: &'a str,
    level: ConsistencyLevel,
}

impl<'a> Path<'a> {
    /// The place of a statement run for `row`.
    fn at(&self, row: &'a str) -> At<'a> {
        At {
            p: self.p,
            params: self.params,
            row,
            table: self.table,
        }
    }
}

impl<'p, L: Spell> Gen<'p, L> {
    /// The method of write path `w` (pattern `p`).
    pub(crate) fn write_method(
        &mut self,
        p: &'p AccessPattern,
        w: &'p WritePath,
        name: &str,
        params: &[Param],
    ) -> Result<Method, Skip> {
        if let Some(why) = &w.unsupported {
            return Err(Skip(format!("the plan has no write path for it: {why}")));
        }
        let sig = self.lang.signature(params);
        let level = w
            .consistency
            .as_ref()
            .map_or(ConsistencyLevel::LocalQuorum, |c| c.level);
        let doc = self.write_doc(p, w, level);
        let body = if let Some(t) = &w.served_by_ttl {
            let why = format!(
                "Served by the TTL of {}: nothing is sent.",
                t.tables.join(", ")
            );
            vec![Stmt::Comment(why), Stmt::Done]
        } else {
            let info = p
                .analysis
                .write
                .as_ref()
                .ok_or_else(|| Skip("the pattern has no write analysis".into()))?;
            let path = Path {
                p,
                w,
                params,
                table: info.table.as_str(),
                level,
            };
            self.write_body(&path)?
        };
        let method = self.method(name, &sig, Returns::Nothing, &doc, &body);
        Ok((method, None))
    }

    /// The statements of a write path: its state, its reads, its targets, then what it sends.
    fn write_body(&mut self, path: &Path<'_>) -> Result<Vec<Stmt>, Skip> {
        let (p, w) = (path.p, path.w);
        let mut body = Vec::new();
        if self.reads_clock(p) {
            body.push(self.clock());
        }
        if binds_row_id(w) {
            body.push(Stmt::Let {
                ty: Local::Object,
                name: L::member("row_id"),
                value: Some(format!("{}.timeuuid()", L::HOOKS)),
            });
        }
        self.state(path, &mut body)?;
        for (i, r) in w.read_before_write.iter().enumerate() {
            self.read_before(path, i, r, &mut body)?;
        }
        if let Some(u) = &w.upsert {
            self.upsert(path, u, &mut body)?;
        }
        let list = |name: &str| Stmt::Let {
            ty: Local::Bounds,
            name: name.into(),
            value: None,
        };
        body.push(list("main"));
        let counters = w.targets.iter().any(|t| t.counter.is_some());
        if counters {
            body.push(list("counters"));
        }
        for t in &w.targets {
            self.target(path, t, &mut body)?;
        }
        let kind = match w.batch.as_ref().map(|b| b.kind) {
            Some(BatchKind::Unlogged) => "unlogged",
            _ => "logged",
        };
        let level = L::string(path.level.cql_name());
        // A batch that could pass Cassandra's size limit goes in chunks, as the plan says.
        let chunk = w.batch.as_ref().and_then(|b| b.max_statements);
        body.push(Stmt::Expr(L::send("main", &L::string(kind), &level, chunk)));
        if counters {
            let why =
                "Counter updates go apart, after the rest (Cassandra takes them with nothing \
                       else).";
            body.push(Stmt::Comment(why.into()));
            let counter = L::string("counter");
            body.push(Stmt::Expr(L::send("counters", &counter, &level, None)));
        }
        Ok(body)
    }

    /// The documentation of a write: the SQL it replaces and every statement of its path.
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
            let how: String = how.iter().map(|h| format!(", {h}")).collect();
            cql.push_str(&format!("-- {}{how}\n{}\n", t.table, t.cql));
        }
        let batch = w.batch.as_ref().map_or("logged", |b| match b.kind {
            BatchKind::Single => "single",
            BatchKind::Logged => "logged",
            BatchKind::Unlogged => "unlogged",
            BatchKind::Counter => "counter",
        });
        cql.push_str(&format!("-- sent: {batch}, at {}", level.cql_name()));
        L::doc(&summary, &[("SQL", &p.sql), ("CQL", &cql)])
    }

    /// The write's state: the statement's `=` values of the written table, its new values.
    fn state(&mut self, path: &Path<'_>, body: &mut Vec<Stmt>) -> Result<(), Skip> {
        let (p, params, table) = (path.p, path.params, path.table);
        let this = |c: &ColumnRef| current::<L>(c, "row");
        let excluded = |c: &ColumnRef| format!("st.excluded({})", L::string(&shape::row_key(c)));
        let step = |name: &str, c: &ColumnRef| {
            let row = L::map_get("st.steps", &L::string(name));
            L::rt("need", &[row, L::string(&shape::row_key(c))])
        };
        let mut key = Vec::new();
        let equal = p
            .analysis
            .equality
            .iter()
            .filter(|e| e.column.table == table && e.op == remodel_model::EqualityOp::Eq);
        for e in equal {
            let Some(x) = &e.expr else { continue };
            let scope = Scope::new(params, &this, &p.id);
            let v = self.expr(x, &scope)?;
            key.push((L::string(&shape::row_key(&e.column)), v));
        }
        let insert = L::bool(p.kind == StatementKind::Insert).into();
        body.push(Stmt::Let {
            ty: Local::State,
            name: "st".into(),
            value: Some(L::new_runtime("WriteState", &[insert, L::map(&key)])),
        });
        let mut values = Vec::new();
        for v in path.w.values.iter().filter(|v| v.column.table == table) {
            let scope = Scope {
                params,
                this: &this,
                step: Some(&step),
                excluded: Some(&excluded),
                column: Some(&v.column),
                pattern: &p.id,
            };
            let e = self.expr(&v.value, &scope)?;
            values.push((L::string(&shape::row_key(&v.column)), e));
        }
        body.extend(L::function_map("st.values", false, &values));
        Ok(())
    }

    /// Read before write `i`: its binds, its rows kept by its filter, what they decide.
    fn read_before(
        &mut self,
        path: &Path<'_>,
        i: usize,
        r: &ReadBeforeWrite,
        body: &mut Vec<Stmt>,
    ) -> Result<(), Skip> {
        if r.cql.is_empty() {
            return Err(Skip(format!(
                "read before write {i} of {} has no CQL: {}",
                r.table,
                r.note.as_deref().unwrap_or("no table serves it")
            )));
        }
        let statement = self.statement(&r.cql, path.level);
        let spec = self.spec(&r.table);
        let at = path.at(L::NULL);
        let mut names = Vec::new();
        for (j, b) in r.binds.iter().enumerate() {
            let v = self.write_bind(&b.value, &at)?;
            let name = format!("k{i}_{j}");
            body.push(Stmt::Let {
                ty: Local::Object,
                name: name.clone(),
                value: Some(L::bind_marker(&b.cql_type, &v)),
            });
            names.push(name);
        }
        let conds: Vec<String> = names.iter().map(|n| L::is_not_null(n)).collect();
        let run = L::run(&statement, &spec, &names);
        let rows = format!("r{i}");
        // A key bound to NULL finds no row, as `WHERE k = NULL` finds none.
        let value = if conds.is_empty() {
            run
        } else {
            L::cond_expr(&conds.join(L::AND), &run, L::EMPTY_ROWS)
        };
        body.push(Stmt::Let {
            ty: Local::Rows,
            name: rows.clone(),
            value: Some(value),
        });
        let need = |c: &ColumnRef| L::rt("need", &["r".into(), L::string(&shape::row_key(c))]);
        for f in &r.filter {
            let scope = Scope::new(path.params, &need, &path.p.id);
            let cond = L::rt("is_true", &[self.expr(f, &scope)?]);
            body.push(Stmt::Set(rows.clone(), L::filter_rows(&rows, &cond)));
        }
        let (reads_new, many) = (L::bool(r.reads_new).into(), L::bool(r.many).into());
        let read = format!("st.read({})", [rows.clone(), reads_new, many].join(", "));
        body.push(Stmt::Expr(read));
        self.after_read(path, i, r, body);
        Ok(())
    }

    /// What read before write `i` decides: nothing to change, a named step's row, an upsert's
    /// existing row.
    fn after_read(&self, path: &Path<'_>, i: usize, r: &ReadBeforeWrite, body: &mut Vec<Stmt>) {
        let rows = format!("r{i}");
        let entity = self
            .plan
            .design
            .tables
            .iter()
            .find(|t| t.name == r.table)
            .map(|t| t.entity.as_str());
        let written_row = matches!(path.p.kind, StatementKind::Update | StatementKind::Delete)
            && !r.reads_new
            && !r.many
            && r.name.is_none()
            && entity == Some(path.table);
        let none =
            |why: String| Stmt::If(L::is_empty(&rows), vec![Stmt::Comment(why), Stmt::Return]);
        if written_row {
            body.push(none(
                "No such row: the statement changes nothing (a CQL UPDATE would create it).".into(),
            ));
        }
        if let Some(n) = &r.name {
            body.push(none(format!("`FROM … {n}` joins no row: nothing changes.")));
            let first = L::first(&rows);
            body.push(Stmt::Expr(L::map_put("st.steps", &L::string(n), &first)));
        }
        if path.w.upsert.as_ref().is_some_and(|u| u.existing == i) {
            body.push(Stmt::Set("st.existing".into(), L::first_or_null(&rows)));
        }
    }

    /// An upsert that met its row: `DO NOTHING` writes nothing; `DO UPDATE` writes the row with
    /// its `SET`, where its `WHERE` holds.
    fn upsert(&mut self, path: &Path<'_>, u: &Upsert, body: &mut Vec<Stmt>) -> Result<(), Skip> {
        let (p, params) = (path.p, path.params);
        let this = |c: &ColumnRef| current::<L>(c, "row");
        let excluded = |c: &ColumnRef| format!("st.excluded({})", L::string(&shape::row_key(c)));
        let existing = L::is_not_null("st.existing");
        let (set, filter) = match &u.action {
            ConflictAction::Nothing => {
                let stop = vec![Stmt::Comment("ON CONFLICT DO NOTHING".into()), Stmt::Return];
                body.push(Stmt::If(existing, stop));
                return Ok(());
            }
            ConflictAction::Update { set, filter } => (set, filter),
        };
        let mut sets = Vec::new();
        for v in set.iter().filter(|v| v.column.table == path.table) {
            let scope = Scope {
                params,
                this: &this,
                step: None,
                excluded: Some(&excluded),
                column: Some(&v.column),
                pattern: &p.id,
            };
            let e = self.expr(&v.value, &scope)?;
            sets.push((L::string(&shape::row_key(&v.column)), e));
        }
        let map = format!("st.{}", L::member("update_set"));
        body.extend(L::function_map(&map, true, &sets));
        let mut conds = Vec::new();
        let old = |c: &ColumnRef| current::<L>(c, "st.existing");
        for f in filter {
            let scope = Scope {
                params,
                this: &old,
                step: None,
                excluded: Some(&excluded),
                column: None,
                pattern: &p.id,
            };
            conds.push(L::rt("is_true", &[self.expr(f, &scope)?]));
        }
        if !conds.is_empty() {
            let holds = format!("({})", conds.join(L::AND));
            let cond = format!("{existing}{}{}", L::AND, L::not(&holds));
            let why = "ON CONFLICT DO UPDATE … WHERE: it does not hold, nothing is written.";
            body.push(Stmt::If(
                cond,
                vec![Stmt::Comment(why.into()), Stmt::Return],
            ));
        }
        Ok(())
    }

    /// One target statement: for its row (or each row of its `for_each` read), when its guard
    /// holds, its values appended to the batch it goes in.
    fn target(
        &mut self,
        path: &Path<'_>,
        t: &WriteTarget,
        body: &mut Vec<Stmt>,
    ) -> Result<(), Skip> {
        let statement = self.statement(&t.cql, path.level);
        let list = if t.counter.is_some() {
            "counters"
        } else {
            "main"
        };
        let (row, each) = match t.for_each {
            Some(i) if i < path.w.read_before_write.len() => {
                let what = format!("{}, once per row of read {i}", t.table);
                body.push(Stmt::Comment(what));
                ("each", Some(i))
            }
            Some(i) => {
                return Err(Skip(format!(
                    "a statement runs for read {i}, which the path does not have"
                )))
            }
            None => {
                body.push(Stmt::Comment(t.table.clone()));
                (L::NULL, None)
            }
        };
        let at = path.at(row);
        let guard = match &t.guard {
            Some(g) => Some(self.guard(t, g, &at)?),
            None => None,
        };
        let mut values = Vec::new();
        for b in &t.binds {
            let v = self.write_bind(&b.value, &at)?;
            values.push(L::bind_marker(&b.cql_type, &v));
        }
        let mut inner = vec![Stmt::Expr(L::bound(list, &statement, &values))];
        if let Some(cond) = guard {
            inner = vec![Stmt::If(cond, inner)];
        }
        match each {
            Some(i) => body.push(Stmt::For {
                ty: Local::Row,
                var: "each".into(),
                iter: format!("r{i}"),
                body: inner,
            }),
            None => body.extend(inner),
        }
        Ok(())
    }

    /// A guard's condition.
    fn guard(&mut self, t: &WriteTarget, g: &Guard, at: &At<'_>) -> Result<String, Skip> {
        let mut conds = Vec::new();
        for c in g.conditions() {
            conds.push(match c {
                Guard::All { .. } => continue,
                Guard::KeyChanged { columns } => {
                    let any: Vec<String> = columns.iter().map(|c| changed::<L>(t, c, at)).collect();
                    format!("({})", any.join(L::OR))
                }
                Guard::NewIsNull { column } => L::is_null(&new_of::<L>(column, at)),
                Guard::NewIsNotNull { column } => L::is_not_null(&new_of::<L>(column, at)),
                Guard::AllNotNull { values } => {
                    let mut all = Vec::new();
                    for v in values {
                        all.push(L::is_not_null(&self.write_bind(v, at)?));
                    }
                    format!("({})", all.join(L::AND))
                }
            });
        }
        Ok(if conds.is_empty() {
            L::bool(true).into()
        } else {
            conds.join(L::AND)
        })
    }

    /// A bind of a write path in the source's meaning: `cur`, `new` and row ids read from the
    /// write's state for the row at hand.
    fn write_bind(&mut self, v: &BindValue, at: &At<'_>) -> Result<String, Skip> {
        if let BindValue::Entry { key, fields } = v {
            let mut parts = Vec::with_capacity(fields.len());
            for (name, f) in fields {
                parts.push((L::string(name), self.write_bind(f, at)?));
            }
            let entry = L::rt("entry", &[L::pairs(&parts)]);
            return Ok(match key {
                Some(k) => L::keyed_entry(&self.write_bind(k, at)?, &entry),
                None => entry,
            });
        }
        let this = |c: &ColumnRef| current::<L>(c, at.row);
        let scope = Scope::new(at.params, &this, &at.p.id);
        let place = |v: &BindValue| -> Option<Result<String, Skip>> {
            match v {
                BindValue::Current { column } => Some(Ok(current::<L>(column, at.row))),
                BindValue::New { column } => Some(Ok(new_of::<L>(column, at))),
                BindValue::RowId { table } => {
                    let args = [
                        L::string(table),
                        L::member("row_id"),
                        L::bool(table == at.table).into(),
                        at.row.into(),
                    ];
                    Some(Ok(format!(
                        "st.{}({})",
                        L::member("row_id"),
                        args.join(", ")
                    )))
                }
                BindValue::Rewritten { column } => Some(Err(Skip(format!(
                    "the collection {column} rewritten on the client is not generated yet"
                )))),
                _ => None,
            }
        };
        self.bind_value(v, &scope, &place)
    }
}

/// True when a statement of `w` binds a generated row id.
fn binds_row_id(w: &WritePath) -> bool {
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
    let guards = w.targets.iter().filter_map(|t| t.guard.as_ref());
    binds.into_iter().any(|b| has(&b.value))
        || guards
            .flat_map(|g| g.conditions())
            .any(|c| matches!(c, Guard::AllNotNull { values } if values.iter().any(has)))
}

/// `cur(c)` of `row` (null: the written row).
fn current<L: Spell>(c: &ColumnRef, row: &str) -> String {
    format!("st.current({}, {row})", L::string(&shape::row_key(c)))
}

/// True when key column `c` moves, compared as target `t` holds it.
fn changed<L: Spell>(t: &WriteTarget, c: &ColumnRef, at: &At<'_>) -> String {
    let cur = current::<L>(c, at.row);
    let new = new_of::<L>(c, at);
    let of_c = |v: &BindValue| matches!(v, BindValue::Current { column } | BindValue::New { column } if column == c);
    let micros = t.binds.iter().any(|b| match &b.value {
        BindValue::EpochMicros { of, .. } => of_c(of),
        BindValue::Encoded { of, encoding } if encoding.form() == EncodedForm::Micros => of_c(of),
        _ => false,
    });
    if micros {
        let (cur, new) = (L::epoch_micros_utc(&cur), L::epoch_micros_utc(&new));
        return L::rt("changed", &[cur, new, L::string("plain")]);
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
    L::rt("changed", &[cur, new, L::string(kind)])
}

/// `new(c)` for the row at hand.
fn new_of<L: Spell>(c: &ColumnRef, at: &At<'_>) -> String {
    format!(
        "st.{}({}, {}, {})",
        L::NEW_VALUE,
        L::string(&shape::row_key(c)),
        L::bool(c.table == at.table),
        at.row
    )
}
