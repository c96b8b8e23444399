//! A write pattern on both sides: the statement on Postgres, and on Cassandra the plan's write
//! path — its reads before write in order, then every statement with each `?` bound as the plan
//! says (`current` values before the write, `new` ones after it), guards applied, sent as the
//! path's `batch` states (a logged batch when it states none), every statement and read before
//! write at the path's consistency level.
//!
//! Where each value comes from, as `plan.json` defines it: `cur(t.c)` is the row's value before
//! the write — bound by the statement's `WHERE c = …`, else read first (from the row a `for_each`
//! statement runs for, else from the first read that holds it); `new(t.c)` is the statement's new
//! value where it sets the column (computed from the current row when the SET reads it), else the
//! value a read of the new parent returned, else the current value. For an INSERT, a column the
//! statement leaves to Postgres (a serial key, a DEFAULT) takes the value Postgres gave it, as the
//! application would have to supply it.

use crate::clock::clocked;
use crate::exec::{CqlRows, Prepared, Replayer};
use crate::exprsql;
use crate::pg::{Params, PgValue};
use crate::record::{Field, Record};
use crate::values::{self, canon};
use crate::Error;
use remodel_backfill::convert::canonical_cast;
use remodel_backfill::resolved_type::{Native, ResolvedType};
use remodel_model::{
    BindValue, ColumnRef, ConflictAction, EncodedForm, Encoding, Expr, Function, Guard, Literal,
    NewValue, ReadBeforeWrite, RowRef, ScalarType, StatementKind, Upsert, WriteInfo, WritePath,
    WriteTarget,
};
use scylla::statement::batch::{Batch, BatchType};
use scylla::value::CqlValue;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What a write did on Postgres.
#[derive(Debug, Clone, Default)]
pub struct PgWrite {
    /// The rows it changed, as they are after the write (`RETURNING *`; for a DELETE, the rows it
    /// removed), each column by name.
    pub rows: Vec<HashMap<String, PgValue>>,
    /// The same rows as JSON objects (`to_json` of the row), for reading them back.
    pub json: Vec<String>,
    /// Time the statement took.
    pub elapsed: Duration,
    /// `now()` as the statement saw it (replay's clock at this write, RFC 3339 in UTC): the one
    /// instant of the execution, which the Cassandra side binds too.
    pub now: Option<String>,
}

/// What a write path did on Cassandra.
#[derive(Debug, Clone, Default)]
pub struct CqlWrite {
    /// The reads before write (requests, partitions, time).
    pub reads: CqlRows,
    /// Statements sent (in one batch when more than one).
    pub statements: usize,
    /// Statements skipped by their guard (a row that does not move).
    pub guarded: usize,
    /// Time of all Cassandra requests, reads included.
    pub elapsed: Duration,
}

/// The values a write path resolves its binds from.
struct Ctx<'x> {
    kind: StatementKind,
    table: &'x str,
    params: &'x Params,
    aliases: &'x [(String, String)],
    /// Columns the WHERE binds by `=`: the SQL of each value.
    key_eq: HashMap<String, String>,
    /// Columns set: the SQL of each value and whether it reads the current row.
    set: HashMap<String, (String, bool)>,
    /// Rows each read before write returned, with its `reads_new` and `many`.
    reads: Vec<(Vec<Record>, bool, bool, String)>,
    /// For an INSERT: the values Postgres gave the row.
    generated: HashMap<String, PgValue>,
    /// The path's new values, by column of the written table (a plan of format 2).
    values: HashMap<String, &'x NewValue>,
    /// The upsert the path stands for.
    upsert: Option<&'x Upsert>,
    /// The row its existing-row read found (`None` until read, or when there is none).
    existing: Option<Record>,
    /// The row each named read returned.
    steps: HashMap<String, Record>,
    /// The execution's `now()`: the instant the Postgres statement saw.
    now: Option<Literal>,
    /// For an INSERT into a table without a key: the new row's id (a timeuuid, made once per
    /// call, as the plan's `row_id.inserted` says).
    row_id: uuid::Uuid,
}

impl<'x> Ctx<'x> {
    /// The context of write path `w` of pattern `p` with the sample's `params`, before any read:
    /// what the statement binds and sets, the values Postgres gave an INSERT, its clock.
    fn of(
        p: &'x Prepared<'_>,
        w: &'x WritePath,
        params: &'x Params,
        pg: &PgWrite,
        info: &'x WriteInfo,
    ) -> Ctx<'x> {
        Ctx {
            kind: p.pattern.kind,
            table: &info.table,
            params,
            aliases: &p.forms.aliases,
            key_eq: p
                .pattern
                .analysis
                .equality
                .iter()
                .filter(|e| e.column.table == info.table && e.op == remodel_model::EqualityOp::Eq)
                .filter_map(|e| Some((e.column.column.clone(), clocked(e.value.as_deref()?))))
                .collect(),
            set: info
                .values
                .iter()
                .map(|v| (v.column.clone(), (clocked(&v.sql), v.reads_current)))
                .collect(),
            reads: Vec::new(),
            generated: match p.pattern.kind {
                StatementKind::Insert => pg.rows.first().cloned().unwrap_or_default(),
                _ => HashMap::new(),
            },
            values: w
                .values
                .iter()
                .filter(|v| v.column.table == info.table)
                .map(|v| (v.column.column.clone(), v))
                .collect(),
            upsert: w.upsert.as_ref(),
            existing: None,
            steps: HashMap::new(),
            now: pg.now.clone().map(|value| Literal::Timestamptz { value }),
            row_id: values::timeuuid(),
        }
    }
}

/// Which row a column of the written table stands for when an expression is evaluated.
#[derive(Clone, Copy)]
enum This<'r> {
    /// The written row as it is before the write (the row a statement runs for, else the
    /// statement's `=` values and the reads before write).
    Written(Option<&'r Record>),
    /// A row a read before write returned (its filter).
    Read(&'r Record),
}

/// The values of a batch's statements, in order.
type Values = Vec<Vec<Option<CqlValue>>>;

impl Replayer<'_> {
    /// Runs write pattern `p` on Postgres (`RETURNING *`) at its own instant of replay's clock,
    /// which it records, and leaves the transaction open: [`Replayer::write_cql`] ends it (a
    /// write whose path fails on Cassandra, or that replay cannot carry out, is rolled back).
    pub async fn write_pg(&self, p: &Prepared<'_>, params: &Params) -> Result<PgWrite, Error> {
        let sql = p.forms.returning.as_deref().unwrap_or(&p.forms.run);
        let what = || format!("{}: `{}` with {}", p.pattern.id, p.forms.run, params.show());
        // The write's own instant, set before the transaction (a rollback would undo it).
        let now = self.tick().await?;
        // Constraints checked at the statement: a COMMIT after Cassandra's write cannot fail.
        self.pg()
            .batch_execute("BEGIN; SET CONSTRAINTS ALL IMMEDIATE")
            .await
            .map_err(Error::pg(what()))?;
        let start = Instant::now();
        let result = self
            .pg()
            .query_typed(sql, &crate::exec::typed(params))
            .await
            .map(|rows| (rows, now));
        let elapsed = start.elapsed();
        // The evaluations of the Cassandra side run after the savepoint: one that fails leaves
        // the write to commit.
        let end = if result.is_ok() {
            "SAVEPOINT remodel_write"
        } else {
            "ROLLBACK"
        };
        let ended = self.pg().batch_execute(end).await;
        let (rows, now) = result.map_err(Error::pg(what()))?;
        ended.map_err(Error::pg(what()))?;
        let mut out = PgWrite {
            rows: Vec::with_capacity(rows.len()),
            json: Vec::new(),
            elapsed,
            now: Some(now),
        };
        for r in &rows {
            let mut m = HashMap::new();
            for (i, c) in r.columns().iter().enumerate() {
                if c.name() == "__row" {
                    let text: Option<String> =
                        r.try_get(i).map_err(|e| Error::Value(e.to_string()))?;
                    out.json.extend(text);
                    continue;
                }
                m.insert(c.name().to_string(), PgValue::of(r, i)?);
            }
            out.rows.push(m);
        }
        Ok(out)
    }

    /// Runs the plan's write path `w` of pattern `p` on Cassandra; `pg` is what the same write did
    /// on Postgres (an INSERT's generated values come from it), whose transaction
    /// ([`Replayer::write_pg`]) this ends: committed when the path succeeds, rolled back when it
    /// fails or replay cannot carry it out ([`Error::Unsupported`], nothing sent). A path that
    /// fails is a difference of the write itself; the application's write failed, so Postgres
    /// does not keep it either, and no later read differs because of rows it left behind.
    pub async fn write_cql(
        &mut self,
        p: &Prepared<'_>,
        w: &WritePath,
        params: &Params,
        pg: &PgWrite,
    ) -> Result<CqlWrite, Error> {
        let out = if self.is_external() {
            self.write_external(p, w, params, pg).await
        } else {
            self.cql_path(p, w, params, pg).await
        };
        let end = match out {
            Err(_) => "ROLLBACK",
            Ok(_) => "ROLLBACK TO SAVEPOINT remodel_write; COMMIT",
        };
        let ended = self.pg().batch_execute(end).await;
        let out = out?;
        ended.map_err(Error::pg(format!("{}: end the Postgres write", w.pattern)))?;
        Ok(out)
    }

    async fn cql_path(
        &mut self,
        p: &Prepared<'_>,
        w: &WritePath,
        params: &Params,
        pg: &PgWrite,
    ) -> Result<CqlWrite, Error> {
        if let Some(why) = &w.unsupported {
            return Err(Error::Plan(format!(
                "{}: the plan declares the write unsupported: {why}",
                w.pattern
            )));
        }
        let info = p.pattern.analysis.write.as_ref().ok_or_else(|| {
            Error::Plan(format!("{}: the pattern has no write analysis", w.pattern))
        })?;
        let mut ctx = Ctx::of(p, w, params, pg, info);
        let mut out = CqlWrite::default();
        for (i, r) in w.read_before_write.iter().enumerate() {
            let stmt = self.statement_at(&r.cql, w.consistency.as_ref()).await?;
            let types = Self::marker_types(&stmt)?;
            let mut vals = Vec::with_capacity(types.len());
            for (b, ty) in r.binds.iter().zip(&types) {
                vals.push(self.value(&ctx, &b.value, None, ty).await?);
            }
            let table = self.table(&r.table)?;
            let rows = self.run_cql(&stmt, &vals, table, &mut out.reads).await?;
            let rows = self.kept(&ctx, r, rows).await?;
            if rows.is_empty() && self.reads_written_row(&ctx, r)? {
                // An UPDATE/DELETE of a row that does not exist: Postgres changes nothing (a CQL
                // UPDATE would create the row).
                out.elapsed = out.reads.elapsed;
                return Ok(out);
            }
            if let Some(name) = &r.name {
                // `UPDATE … FROM` joins that row: without it Postgres changes nothing.
                let Some(row) = rows.first() else {
                    out.elapsed = out.reads.elapsed;
                    return Ok(out);
                };
                ctx.steps.insert(name.clone(), row.clone());
            }
            if ctx.upsert.is_some_and(|u| u.existing == i) {
                ctx.existing = rows.first().cloned();
            }
            ctx.reads.push((rows, r.reads_new, r.many, r.table.clone()));
        }
        if !self.upsert_writes(&ctx).await? {
            out.elapsed = out.reads.elapsed;
            return Ok(out);
        }
        let (batch, values, counters) = self.statements(&ctx, w, &mut out).await?;
        out.statements = values.len() + counters.1.len();
        let start = Instant::now();
        let chunk = w
            .batch
            .as_ref()
            .and_then(|b| b.max_statements)
            .map_or(usize::MAX, |n| n.max(1) as usize);
        for (i, part) in values.chunks(chunk).enumerate() {
            let start = i * chunk;
            let mut b = batch.clone();
            b.statements = batch.statements[start..start + part.len()].to_vec();
            self.send(&w.pattern, &b, part).await?;
        }
        // Counter updates go after the rest, in a counter batch (Cassandra takes them with
        // nothing else).
        self.send(&w.pattern, &counters.0, &counters.1).await?;
        out.elapsed = out.reads.elapsed + start.elapsed();
        Ok(out)
    }

    /// Every statement of the path with its values (once per row of a `for_each`), guards
    /// applied: the counter statements apart, as the plan's batch says.
    async fn statements(
        &mut self,
        ctx: &Ctx<'_>,
        w: &WritePath,
        out: &mut CqlWrite,
    ) -> Result<(Batch, Values, (Batch, Values)), Error> {
        let kind = match w.batch.as_ref().map(|b| b.kind) {
            Some(remodel_model::BatchKind::Unlogged) => BatchType::Unlogged,
            _ => BatchType::Logged,
        };
        let mut main = Batch::new(kind);
        let mut counters = Batch::new(BatchType::Counter);
        if let Some(c) = &w.consistency {
            main.set_consistency(crate::exec::consistency_of(c.level));
            counters.set_consistency(crate::exec::consistency_of(c.level));
        }
        let mut main_values: Values = Vec::new();
        let mut counter_values: Values = Vec::new();
        for t in &w.targets {
            let (batch, values) = if t.counter.is_some() {
                (&mut counters, &mut counter_values)
            } else {
                (&mut main, &mut main_values)
            };
            let stmt = self.statement_at(&t.cql, w.consistency.as_ref()).await?;
            let types = Self::marker_types(&stmt)?;
            let rows: Vec<Option<Record>> = match t.for_each {
                Some(i) => ctx
                    .reads
                    .get(i)
                    .ok_or_else(|| {
                        Error::Plan(format!("{}: for_each names no read {i}", w.pattern))
                    })?
                    .0
                    .iter()
                    .cloned()
                    .map(Some)
                    .collect(),
                None => vec![None],
            };
            for row in &rows {
                if !self.guard_holds(ctx, t, &types, row.as_ref()).await? {
                    out.guarded += 1;
                    continue;
                }
                let mut vals = Vec::with_capacity(types.len());
                for (b, ty) in t.binds.iter().zip(&types) {
                    vals.push(self.value(ctx, &b.value, row.as_ref(), ty).await?);
                }
                batch.append_statement(stmt.clone());
                values.push(vals);
            }
        }
        Ok((main, main_values, (counters, counter_values)))
    }

    /// Sends the statements: one alone, several as the logged batch the plan asks for.
    async fn send(
        &self,
        pattern: &str,
        batch: &Batch,
        values: &[Vec<Option<CqlValue>>],
    ) -> Result<(), Error> {
        let what = || format!("{pattern}: the write path's statements");
        match values {
            [] => {}
            [one] => {
                let stmt = match batch.statements.first() {
                    Some(scylla::statement::batch::BatchStatement::PreparedStatement(s)) => s,
                    _ => return Err(Error::Plan(what())),
                };
                self.retrying(stmt.get_is_idempotent(), || {
                    self.session().execute_unpaged(stmt, one)
                })
                .await
                .map_err(Error::cql(what()))?;
            }
            _ => {
                self.retrying(batch.get_is_idempotent(), || {
                    self.session().batch(batch, values)
                })
                .await
                .map_err(Error::cql(what()))?;
            }
        }
        Ok(())
    }

    /// True when target `t` runs for `row`: no guard, or every condition of it holds.
    async fn guard_holds(
        &self,
        ctx: &Ctx<'_>,
        t: &WriteTarget,
        types: &[ResolvedType],
        row: Option<&Record>,
    ) -> Result<bool, Error> {
        let Some(g) = &t.guard else {
            return Ok(true);
        };
        // Each value typed as the marker it (or its column) fills, else text.
        let typed = |v: &BindValue| -> ResolvedType {
            t.binds
                .iter()
                .zip(types)
                .find(|(b, _)| b.value == *v)
                .map_or(ResolvedType::Native(Native::Text), |(_, ty)| ty.clone())
        };
        for g in g.conditions() {
            let holds = match g {
                // Flattened by `conditions`.
                Guard::All { .. } => true,
                Guard::KeyChanged { columns } => {
                    self.key_changed(ctx, t, types, row, columns).await?
                }
                Guard::NewIsNull { column } | Guard::NewIsNotNull { column } => {
                    let ty = column_type(t, types, column);
                    let null = self.new_value(ctx, column, row, &ty).await?.is_none();
                    null == matches!(g, Guard::NewIsNull { .. })
                }
                Guard::AllNotNull { values } => {
                    let mut all = true;
                    for v in values {
                        all &= self.value(ctx, v, row, &typed(v)).await?.is_some();
                    }
                    all
                }
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// True when a new value differs from the current one for one of `columns`, compared as
    /// target `t` holds them (a column it binds as epoch microseconds: exact microseconds).
    async fn key_changed(
        &self,
        ctx: &Ctx<'_>,
        t: &WriteTarget,
        types: &[ResolvedType],
        row: Option<&Record>,
        columns: &[ColumnRef],
    ) -> Result<bool, Error> {
        // The form a column is bound in when the target keeps it encoded.
        let form = |c: &ColumnRef| {
            let of_c = |of: &BindValue| matches!(of, BindValue::Current { column } | BindValue::New { column } if column == c);
            t.binds.iter().find_map(|b| match &b.value {
                BindValue::EpochMicros { of, .. } if of_c(of) => Some(EncodedForm::Micros),
                BindValue::Encoded { of, encoding } if of_c(of) => Some(encoding.form()),
                _ => None,
            })
        };
        let mut changed = false;
        for c in columns {
            let (now, next) = if form(c) == Some(EncodedForm::Micros) {
                let cur = BindValue::Current { column: c.clone() };
                let new = BindValue::New { column: c.clone() };
                let us = ResolvedType::Native(Native::BigInt);
                (
                    self.micros(ctx, &cur, row, &us).await?,
                    self.micros(ctx, &new, row, &us).await?,
                )
            } else {
                let ty =
                    form(c).map_or_else(|| column_type(t, types, c), values::encoded_plain_type);
                (
                    self.current(ctx, c, row, &ty).await?,
                    self.new_value(ctx, c, row, &ty).await?,
                )
            };
            changed |= canon(now.as_ref()) != canon(next.as_ref());
        }
        Ok(changed)
    }

    async fn value(
        &self,
        ctx: &Ctx<'_>,
        v: &BindValue,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        match v {
            BindValue::Current { column } => self.current(ctx, column, row, to).await,
            BindValue::New { column } => self.new_value(ctx, column, row, to).await,
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                let stamp = ResolvedType::Native(Native::Timestamp);
                let inner = Box::pin(self.value(ctx, of, row, &stamp)).await?;
                self.bucket(*bucket, time_zone, inner.as_ref(), to).await
            }
            BindValue::Entry { key, fields } => {
                Box::pin(self.entry(ctx, key.as_deref(), fields, row, to)).await
            }
            BindValue::Rewritten { .. } => Err(Error::Unsupported(
                "writes to embedded collections rewritten on the client".into(),
            )),
            BindValue::Expr { expr } => {
                let sql = self.render(ctx, expr, This::Written(row))?;
                self.eval(&sql, ctx.params, to).await
            }
            BindValue::EpochMicros { of, null_last } => {
                let v = self.micros(ctx, of, row, to).await?;
                Ok(if *null_last {
                    values::encode(Encoding::EpochMicrosNullLast, v)
                } else {
                    v
                })
            }
            BindValue::Encoded { of, encoding } => {
                let v = match encoding.form() {
                    EncodedForm::Micros => self.micros(ctx, of, row, to).await?,
                    form => {
                        let plain = values::encoded_plain_type(form);
                        Box::pin(self.value(ctx, of, row, &plain)).await?
                    }
                };
                Ok(values::encode(*encoding, v))
            }
            BindValue::SecondsUntil { of, min, max, .. } => {
                // The instant in microseconds (as Postgres computes it, or as the row read
                // holds it), then the seconds from now (replay's clock, which the SQL reads).
                let us = ResolvedType::Native(Native::BigInt);
                let instant = Box::pin(self.micros(ctx, of, row, &us)).await?;
                Ok(Some(CqlValue::Int(seconds_until(
                    instant.as_ref(),
                    self.now_micros(),
                    *min,
                    *max,
                ))))
            }
            BindValue::RowId { table } => self.row_id(ctx, table, row, to),
            other => self.bind_value(other, ctx.params, row, to).await,
        }
    }

    /// `micros(v)`: the timestamp `v` as epoch microseconds. Where the statement gives the value
    /// (its WHERE `=`, a SET that does not read the row, an INSERT's value or Postgres's
    /// default), Postgres computes it at full precision; a value read from Cassandra is as exact
    /// as the column it was read from.
    async fn micros(
        &self,
        ctx: &Ctx<'_>,
        of: &BindValue,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let own = |c: &ColumnRef| c.table == ctx.table;
        let in_row = |c: &ColumnRef| row.is_some_and(|r| r.contains_key(&Field::Col(c.clone())));
        let sql = match of {
            BindValue::Current { column } if own(column) && !in_row(column) => {
                ctx.key_eq.get(&column.column).cloned()
            }
            BindValue::New { column } if own(column) => ctx
                .set
                .get(&column.column)
                .filter(|(_, reads)| !reads)
                .map(|(sql, _)| sql.clone()),
            _ => None,
        };
        if let Some(sql) = sql {
            return self.eval_micros(&sql, ctx.params, to).await;
        }
        if let BindValue::New { column } = of {
            if own(column)
                && ctx.kind == StatementKind::Insert
                && !ctx.set.contains_key(&column.column)
            {
                return match ctx.generated.get(&column.column) {
                    Some(v) => v.to_cql(to),
                    None => Ok(None),
                };
            }
        }
        Box::pin(self.value(ctx, of, row, to)).await
    }

    /// `row_id(t)`: the id of the row a `for_each` statement runs for (or of the one row read
    /// first); for an INSERT into `t`, the id made for this call.
    fn row_id(
        &self,
        ctx: &Ctx<'_>,
        table: &str,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let field = Field::RowId(table.to_string());
        if let Some(v) = row.and_then(|r| r.get(&field)) {
            return v.clone().map(|x| values::coerce(x, to)).transpose();
        }
        if ctx.kind == StatementKind::Insert && table == ctx.table {
            return values::coerce(CqlValue::Uuid(ctx.row_id), to).map(Some);
        }
        for (rows, _, many, _) in &ctx.reads {
            if let (false, Some(v)) = (*many, rows.first().and_then(|r| r.get(&field))) {
                return v.clone().map(|x| values::coerce(x, to)).transpose();
            }
        }
        Err(Error::Plan(format!(
            "row_id({table}) is bound but no row read before holds it"
        )))
    }

    /// `cur(c)`: the row's value before the write.
    async fn current(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let field = Field::Col(c.clone());
        if let Some(v) = row.and_then(|r| r.get(&field)) {
            return v.clone().map(|x| values::coerce(x, to)).transpose();
        }
        if c.table == ctx.table {
            if let Some(sql) = ctx.key_eq.get(&c.column) {
                return self.eval(sql, ctx.params, to).await;
            }
        }
        let mut empty = None;
        for (i, (rows, reads_new, many, table)) in ctx.reads.iter().enumerate() {
            if *reads_new || *many {
                continue;
            }
            match rows.first() {
                Some(r) => {
                    if let Some(v) = r.get(&field) {
                        return v.clone().map(|x| values::coerce(x, to)).transpose();
                    }
                }
                None if self.holds(table, c) => empty = Some((i, table)),
                None => {}
            }
        }
        if let Some(v) = self.entry_field(ctx, c).await? {
            return v.map(|x| values::coerce(x, to)).transpose();
        }
        Err(match empty {
            Some((i, table)) => Error::Plan(format!(
                "cur({c}) has no value: read before write {i} found no row in {table}"
            )),
            None => Error::Plan(format!(
                "cur({c}) is bound but the statement does not bind it and no read before write returns it"
            )),
        })
    }

    /// `cur(c)` of an embedded child row: field `c` of the entry, in a collection read first,
    /// that the statement's `=` picks (`None`: no collection read holds it).
    async fn entry_field(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
    ) -> Result<Option<Option<CqlValue>>, Error> {
        for (rows, _, _, table) in &ctx.reads {
            let (Some(r), Ok(t)) = (rows.first(), self.table(table)) else {
                continue;
            };
            let held = t
                .columns
                .iter()
                .filter(|x| x.embeds.as_deref() == Some(c.table.as_str()))
                .filter_map(|x| r.get(&Field::Embedded(x.name.clone())).cloned().flatten());
            for collection in held {
                let entries: Vec<&CqlValue> = match &collection {
                    CqlValue::Map(m) => m.iter().map(|(_, v)| v).collect(),
                    CqlValue::List(l) | CqlValue::Set(l) => l.iter().collect(),
                    _ => continue,
                };
                for e in entries {
                    let CqlValue::UserDefinedType { fields, .. } = e else {
                        continue;
                    };
                    if self.entry_picked(ctx, fields).await? {
                        let v = fields.iter().find(|(n, _)| *n == c.column);
                        return Ok(Some(v.and_then(|(_, v)| v.clone())));
                    }
                }
            }
        }
        Ok(None)
    }

    /// True when the statement's `=` values of the written table's columns equal the entry's
    /// fields of those names (at least one).
    async fn entry_picked(
        &self,
        ctx: &Ctx<'_>,
        fields: &[(String, Option<CqlValue>)],
    ) -> Result<bool, Error> {
        let mut compared = 0;
        for (name, sql) in &ctx.key_eq {
            let Some((_, held)) = fields.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let Some(held) = held else {
                return Ok(false);
            };
            let same = match values::int_value(held) {
                Some(i) => {
                    let want = self.eval(sql, ctx.params, &ResolvedType::Native(Native::BigInt));
                    want.await?.as_ref().and_then(values::int_value) == Some(i)
                }
                None => {
                    let Some(n) = values::native_of(held) else {
                        return Ok(false);
                    };
                    let want = self.eval(sql, ctx.params, &ResolvedType::Native(n)).await?;
                    canon(want.as_ref()) == canon(Some(held))
                }
            };
            if !same {
                return Ok(false);
            }
            compared += 1;
        }
        Ok(compared > 0)
    }

    /// `new(c)`: the row's value after the write.
    async fn new_value(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        if c.table == ctx.table && !ctx.values.is_empty() {
            if let Some(v) = self.upsert_value(ctx, c, to).await? {
                return Ok(v);
            }
            if let Some(nv) = ctx.values.get(&c.column) {
                return self.computed(ctx, nv, row, to).await;
            }
            if ctx.kind == StatementKind::Insert {
                // A column the INSERT gives no value (nor a default) is NULL.
                return Ok(None);
            }
        } else if c.table == ctx.table {
            if let Some((sql, reads_current)) = ctx.set.get(&c.column) {
                if !reads_current {
                    return self.eval(sql, ctx.params, to).await;
                }
                let cast = canonical_cast(to)
                    .ok_or_else(|| Error::Value(format!("no Postgres type for CQL {to:?}")))?;
                let current = self.current_row(ctx, row);
                let v = self
                    .eval_rows(sql, &cast, ctx.params, &[current], ctx.aliases)
                    .await?;
                return match v.first() {
                    Some(v) => v.to_cql(to),
                    None => Ok(None),
                };
            }
            if ctx.kind == StatementKind::Insert {
                return match ctx.generated.get(&c.column) {
                    Some(v) => v.to_cql(to),
                    None => Ok(None),
                };
            }
        }
        let field = Field::Col(c.clone());
        for (rows, reads_new, _, _) in &ctx.reads {
            if !*reads_new {
                continue;
            }
            if let Some(v) = rows.first().and_then(|r| r.get(&field)) {
                return v.clone().map(|x| values::coerce(x, to)).transpose();
            }
        }
        self.current(ctx, c, row, to).await
    }

    /// The written table's columns as read before the write (the row a statement runs for first).
    fn current_row(&self, ctx: &Ctx<'_>, row: Option<&Record>) -> Record {
        let mut rec = Record::new();
        for (rows, reads_new, many, _) in ctx.reads.iter().rev() {
            if *reads_new || *many {
                continue;
            }
            if let Some(r) = rows.first() {
                rec.extend(
                    r.iter()
                        .filter(|(f, _)| matches!(f, Field::Col(c) if c.table == ctx.table))
                        .map(|(f, v)| (f.clone(), v.clone())),
                );
            }
        }
        if let Some(r) = row {
            rec.extend(r.iter().map(|(f, v)| (f.clone(), v.clone())));
        }
        rec
    }

    /// True when design table `table` has a column holding source column `c`.
    fn holds(&self, table: &str, c: &ColumnRef) -> bool {
        self.table(table)
            .map(|t| t.columns.iter().any(|col| col.source.as_ref() == Some(c)))
            .unwrap_or(false)
    }
}

/// The typed values of a plan of format 2: new values, conditions of reads, upserts.
impl Replayer<'_> {
    /// The rows of read `r` that meet its filter (all of them when it has none).
    async fn kept(
        &self,
        ctx: &Ctx<'_>,
        r: &ReadBeforeWrite,
        rows: Vec<Record>,
    ) -> Result<Vec<Record>, Error> {
        if r.filter.is_empty() {
            return Ok(rows);
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if self.all_true(ctx, &r.filter, This::Read(&row)).await? {
                out.push(row);
            }
        }
        Ok(out)
    }

    /// True when every condition of `filter` is TRUE (SQL's three-valued logic: NULL is not).
    async fn all_true(
        &self,
        ctx: &Ctx<'_>,
        filter: &[Expr],
        this: This<'_>,
    ) -> Result<bool, Error> {
        let boolean = ResolvedType::Native(Native::Boolean);
        for f in filter {
            let sql = self.render(ctx, f, this)?;
            let v = self.eval(&sql, ctx.params, &boolean).await?;
            if v != Some(CqlValue::Boolean(true)) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// True when `r` is the one-row read of the row an UPDATE or DELETE writes (by its key, as
    /// it is before the write).
    fn reads_written_row(&self, ctx: &Ctx<'_>, r: &ReadBeforeWrite) -> Result<bool, Error> {
        Ok(
            matches!(ctx.kind, StatementKind::Update | StatementKind::Delete)
                && !r.reads_new
                && !r.many
                && r.name.is_none()
                && self.table(&r.table)?.entity == ctx.table,
        )
    }

    /// False when the upsert writes nothing: the row exists and the action is `DO NOTHING`, or
    /// the `WHERE` of its `DO UPDATE` does not hold for it.
    async fn upsert_writes(&self, ctx: &Ctx<'_>) -> Result<bool, Error> {
        let (Some(u), Some(existing)) = (ctx.upsert, &ctx.existing) else {
            return Ok(true);
        };
        match &u.action {
            ConflictAction::Nothing => Ok(false),
            ConflictAction::Update { filter, .. } => {
                self.all_true(ctx, filter, This::Written(Some(existing)))
                    .await
            }
        }
    }

    /// `new(c)` when the upsert met an existing row: the `DO UPDATE SET` value, or the row's own
    /// (`None` when the upsert inserts the proposed row).
    async fn upsert_value(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
        to: &ResolvedType,
    ) -> Result<Option<Option<CqlValue>>, Error> {
        let (Some(u), Some(existing)) = (ctx.upsert, &ctx.existing) else {
            return Ok(None);
        };
        let ConflictAction::Update { set, .. } = &u.action else {
            return Ok(None);
        };
        let Some(nv) = set.iter().find(|v| v.column == *c) else {
            let kept = existing.get(&Field::Col(c.clone())).cloned().flatten();
            return kept.map(|x| values::coerce(x, to)).transpose().map(Some);
        };
        let sql = self.render(ctx, &nv.value, This::Written(Some(existing)))?;
        self.eval(&sql, ctx.params, to).await.map(Some)
    }

    /// An embedded child row as marker type `to` takes it: a one-entry map (`{key: row}`) or list
    /// (`[row]`), or the row itself (`c[?] = ?`), the row a value of the collection's user type.
    async fn entry(
        &self,
        ctx: &Ctx<'_>,
        key: Option<&BindValue>,
        fields: &[(String, BindValue)],
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let element = match to {
            ResolvedType::Map(_, v) | ResolvedType::List(v) => &**v,
            other => other,
        };
        let ResolvedType::Udt(def) = element else {
            return Err(Error::Plan(format!(
                "an embedded row bound to a marker of type {to:?}, not of a user type"
            )));
        };
        if let Some((name, _)) = fields
            .iter()
            .find(|(n, _)| !def.fields.iter().any(|(f, _)| f == n))
        {
            return Err(Error::Plan(format!(
                "field `{name}` is not a field of type {}",
                def.name
            )));
        }
        let mut values = Vec::with_capacity(def.fields.len());
        for (name, t) in &def.fields {
            let v = match fields.iter().find(|(n, _)| n == name) {
                Some((_, b)) => Box::pin(self.value(ctx, b, row, t)).await?,
                None => None,
            };
            values.push((name.clone(), v));
        }
        let value = CqlValue::UserDefinedType {
            keyspace: def.keyspace.clone(),
            name: def.name.clone(),
            fields: values,
        };
        Ok(Some(match (to, key) {
            (ResolvedType::Map(kt, _), Some(k)) => {
                match Box::pin(self.value(ctx, k, row, kt)).await? {
                    Some(k) => CqlValue::Map(vec![(k, value)]),
                    None => return Ok(None),
                }
            }
            (ResolvedType::List(_), None) => CqlValue::List(vec![value]),
            (ResolvedType::Udt(_), None) => value,
            _ => {
                return Err(Error::Plan(format!(
                    "an embedded row {} a key bound to a marker of type {to:?}",
                    if key.is_some() { "with" } else { "without" }
                )))
            }
        }))
    }

    /// A new value of the path (`values`): computed from its expression, or, for a value only
    /// the database can draw (a random uuid, a sequence), the one Postgres drew for the row.
    async fn computed(
        &self,
        ctx: &Ctx<'_>,
        nv: &NewValue,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        if drawn_by_database(&nv.value) {
            if ctx.kind != StatementKind::Insert {
                return Err(Error::Unsupported(format!(
                    "{} = {} in an UPDATE: which row Postgres drew each value for is not matched",
                    nv.column, nv.value
                )));
            }
            return match ctx.generated.get(&nv.column.column) {
                Some(v) => v.to_cql(to),
                None => Ok(None),
            };
        }
        let sql = self.render(ctx, &nv.value, This::Written(row))?;
        self.eval(&sql, ctx.params, to).await
    }

    /// `e` as SQL Postgres evaluates, each column by the value its row holds and `now()` by the
    /// execution's instant.
    fn render(&self, ctx: &Ctx<'_>, e: &Expr, this: This<'_>) -> Result<String, Error> {
        let e = match &ctx.now {
            Some(now) => at_instant(e, now),
            None => e.clone(),
        };
        let column =
            |c: &ColumnRef, r: &RowRef| self.column_sql(ctx, c, r, this).map_err(|e| e.to_string());
        exprsql::to_sql(&e, &column).map_err(Error::Plan)
    }

    /// The SQL of the value column `c` holds in row `r`.
    fn column_sql(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
        r: &RowRef,
        this: This<'_>,
    ) -> Result<String, Error> {
        let ty = self.sql_type(c);
        let literal = |rec: &Record| -> Option<Result<String, Error>> {
            let v = rec.get(&Field::Col(c.clone()))?;
            Some(values::pg_literal(v.as_ref(), &ty).ok_or_else(|| {
                Error::Unsupported(format!("{c}: a collection value in an expression"))
            }))
        };
        let missing = |what: &str| Error::Plan(format!("{what}.{} is not known", c.column));
        match (r, this) {
            (RowRef::Step { name }, _) => ctx
                .steps
                .get(name)
                .and_then(literal)
                .unwrap_or_else(|| Err(missing(name))),
            (RowRef::Excluded, _) => match ctx.values.get(&c.column) {
                Some(nv) if drawn_by_database(&nv.value) => Err(Error::Unsupported(format!(
                    "EXCLUDED.{} is drawn by the database",
                    c.column
                ))),
                Some(nv) => Ok(format!(
                    "({})",
                    self.render(ctx, &nv.value, This::Written(None))?
                )),
                None => Ok(format!("NULL::{ty}")),
            },
            (RowRef::This, This::Read(rec)) => {
                literal(rec).unwrap_or_else(|| Err(missing("the row read")))
            }
            (RowRef::This, This::Written(row)) => {
                if let Some(v) = row.and_then(literal) {
                    return v;
                }
                if c.table == ctx.table {
                    if let Some(sql) = ctx.key_eq.get(&c.column) {
                        return Ok(format!("(({sql}))::{ty}"));
                    }
                }
                ctx.reads
                    .iter()
                    .filter(|(_, reads_new, many, _)| !reads_new && !many)
                    .find_map(|(rows, ..)| rows.first().and_then(literal))
                    .unwrap_or_else(|| Err(missing("the current row")))
            }
        }
    }
}

/// `e` with `now()` the instant `now` (and `current_date` its date in the evaluating session's
/// zone, the plan's).
fn at_instant(e: &Expr, now: &Literal) -> Expr {
    let instant = Expr::Literal { value: now.clone() };
    e.map(&mut |x| match x {
        Expr::Now => Some(instant.clone()),
        Expr::CurrentDate => Some(Expr::Cast {
            arg: Box::new(instant.clone()),
            to: ScalarType::Date,
        }),
        _ => None,
    })
}

/// True when `e` calls a function whose value only the database that ran it knows (a random
/// uuid, a sequence): replay binds the one Postgres drew.
fn drawn_by_database(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::Call { function, .. } = x {
            found |= matches!(function, Function::GenRandomUuid | Function::Nextval);
        }
    });
    found
}

/// `USING TTL` of a row expiring at `instant` (epoch microseconds, or a CQL timestamp), `now_micros`
/// being the clock, as [`BindValue::SecondsUntil`] states it: 0 (no TTL) for NULL.
fn seconds_until(instant: Option<&CqlValue>, now_micros: i64, min: u32, max: u32) -> i32 {
    let micros = match instant {
        Some(CqlValue::BigInt(us)) => *us,
        Some(CqlValue::Timestamp(t)) => t.0.saturating_mul(1000),
        _ => return 0,
    };
    remodel_model::ttl_seconds(micros.saturating_sub(now_micros), min, max)
}

/// The CQL type of source column `c` in target `t`: the marker its `current` or `new` value
/// fills, else text.
fn column_type(t: &WriteTarget, types: &[ResolvedType], c: &ColumnRef) -> ResolvedType {
    t.binds
        .iter()
        .zip(types)
        .find(|(b, _)| match &b.value {
            BindValue::Current { column } | BindValue::New { column } => column == c,
            _ => false,
        })
        .map_or(ResolvedType::Native(Native::Text), |(_, ty)| ty.clone())
}
