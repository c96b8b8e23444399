//! A write pattern on both sides: the statement on Postgres, and on Cassandra the plan's write
//! path — its reads before write in order, then every statement with each `?` bound as the plan
//! says (`current` values before the write, `new` ones after it), guards applied, sent as one
//! logged batch as the plan's notes ask.
//!
//! Where each value comes from, as `plan.json` defines it: `cur(t.c)` is the row's value before
//! the write — bound by the statement's `WHERE c = …`, else read first (from the row a `for_each`
//! statement runs for, else from the first read that holds it); `new(t.c)` is the statement's new
//! value where it sets the column (computed from the current row when the SET reads it), else the
//! value a read of the new parent returned, else the current value. For an INSERT, a column the
//! statement leaves to Postgres (a serial key, a DEFAULT) takes the value Postgres gave it, as the
//! application would have to supply it (the plan says so in its notes).

use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::{Params, PgValue};
use crate::record::{Field, Record};
use crate::values::{self, canon};
use crate::Error;
use remodel_backfill::convert::canonical_cast;
use remodel_backfill::cqltype::{CqlType, Native};
use remodel_model::{BindValue, ColumnRef, Guard, StatementKind, WritePath, WriteTarget};
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
    /// For an INSERT into a table without a key: the new row's id (a timeuuid, made once per
    /// call, as the plan's `row_id.inserted` says).
    row_id: uuid::Uuid,
}

impl Replayer<'_> {
    /// Runs write pattern `p` on Postgres (`RETURNING *`).
    pub async fn write_pg(&self, p: &Prepared<'_>, params: &Params) -> Result<PgWrite, Error> {
        let sql = p.forms.returning.as_deref().unwrap_or(&p.forms.run);
        let start = Instant::now();
        let rows = self
            .pg()
            .query(sql, &params.refs())
            .await
            .map_err(Error::pg(format!(
                "{}: `{}` with {}",
                p.pattern.id,
                p.forms.run,
                params.show()
            )))?;
        let elapsed = start.elapsed();
        let mut out = PgWrite {
            rows: Vec::with_capacity(rows.len()),
            json: Vec::new(),
            elapsed,
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
    /// on Postgres (an INSERT's generated values come from it).
    pub async fn write_cql(
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
        let mut ctx = Ctx {
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
                .filter_map(|e| Some((e.column.column.clone(), e.value.clone()?)))
                .collect(),
            set: info
                .values
                .iter()
                .map(|v| (v.column.clone(), (v.sql.clone(), v.reads_current)))
                .collect(),
            reads: Vec::new(),
            generated: match p.pattern.kind {
                StatementKind::Insert => pg.rows.first().cloned().unwrap_or_default(),
                _ => HashMap::new(),
            },
            row_id: values::timeuuid(),
        };
        let mut out = CqlWrite::default();
        for r in &w.read_before_write {
            let stmt = self.statement(&r.cql).await?;
            let types = Self::marker_types(&stmt)?;
            let mut vals = Vec::with_capacity(types.len());
            for (b, ty) in r.binds.iter().zip(&types) {
                vals.push(self.value(&ctx, &b.value, None, ty).await?);
            }
            let table = self.table(&r.table)?;
            let rows = self.run_cql(&stmt, &vals, table, &mut out.reads).await?;
            ctx.reads.push((rows, r.reads_new, r.many, r.table.clone()));
        }
        let (batch, values) = self.statements(&ctx, w, &mut out).await?;
        out.statements = values.len();
        let start = Instant::now();
        self.send(&w.pattern, &batch, &values).await?;
        out.elapsed = out.reads.elapsed + start.elapsed();
        Ok(out)
    }

    /// Every statement of the path with its values (once per row of a `for_each`), guards
    /// applied.
    async fn statements(
        &mut self,
        ctx: &Ctx<'_>,
        w: &WritePath,
        out: &mut CqlWrite,
    ) -> Result<(Batch, Vec<Vec<Option<CqlValue>>>), Error> {
        let mut batch = Batch::new(BatchType::Logged);
        let mut values: Vec<Vec<Option<CqlValue>>> = Vec::new();
        for t in &w.targets {
            let stmt = self.statement(&t.cql).await?;
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
        Ok((batch, values))
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
                self.session()
                    .execute_unpaged(stmt, one)
                    .await
                    .map_err(Error::cql(what()))?;
            }
            _ => {
                self.session()
                    .batch(batch, values)
                    .await
                    .map_err(Error::cql(what()))?;
            }
        }
        Ok(())
    }

    /// True when target `t` runs for `row`: no guard, or its condition holds.
    async fn guard_holds(
        &self,
        ctx: &Ctx<'_>,
        t: &WriteTarget,
        types: &[CqlType],
        row: Option<&Record>,
    ) -> Result<bool, Error> {
        let Some(g) = &t.guard else {
            return Ok(true);
        };
        // A column's type: the marker a bind of it fills, else text.
        let type_of = |c: &ColumnRef| -> CqlType {
            t.binds
                .iter()
                .zip(types)
                .find(|(b, _)| match &b.value {
                    BindValue::Current { column } | BindValue::New { column } => column == c,
                    _ => false,
                })
                .map(|(_, ty)| ty.clone())
                .unwrap_or(CqlType::Native(Native::Text))
        };
        // A column the statement binds as epoch microseconds.
        let encoded = |c: &ColumnRef| {
            t.binds.iter().any(|b| match &b.value {
                BindValue::EpochMicros { of } => matches!(&**of,
                    BindValue::Current { column } | BindValue::New { column } if column == c),
                _ => false,
            })
        };
        Ok(match g {
            Guard::KeyChanged { columns } => {
                let mut changed = false;
                for c in columns {
                    let ty = type_of(c);
                    let (now, next) = if encoded(c) {
                        // Compared as the key holds them: exact microseconds.
                        let cur = BindValue::Current { column: c.clone() };
                        let new = BindValue::New { column: c.clone() };
                        let us = CqlType::Native(Native::BigInt);
                        (
                            self.micros(ctx, &cur, row, &us).await?,
                            self.micros(ctx, &new, row, &us).await?,
                        )
                    } else {
                        (
                            self.current(ctx, c, row, &ty).await?,
                            self.new_value(ctx, c, row, &ty).await?,
                        )
                    };
                    changed |= canon(now.as_ref()) != canon(next.as_ref());
                }
                changed
            }
            Guard::NewIsNull { column } => {
                let ty = type_of(column);
                self.new_value(ctx, column, row, &ty).await?.is_none()
            }
            Guard::NewIsNotNull { column } => {
                let ty = type_of(column);
                self.new_value(ctx, column, row, &ty).await?.is_some()
            }
        })
    }

    async fn value(
        &self,
        ctx: &Ctx<'_>,
        v: &BindValue,
        row: Option<&Record>,
        to: &CqlType,
    ) -> Result<Option<CqlValue>, Error> {
        match v {
            BindValue::Current { column } => self.current(ctx, column, row, to).await,
            BindValue::New { column } => self.new_value(ctx, column, row, to).await,
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                values::utc_buckets_only(time_zone)?;
                let stamp = CqlType::Native(Native::Timestamp);
                let inner = Box::pin(self.value(ctx, of, row, &stamp)).await?;
                inner.map(|x| values::bucket(&x, *bucket, to)).transpose()
            }
            BindValue::Entry { .. } | BindValue::Rewritten { .. } => {
                Err(Error::Unsupported("writes to embedded collections".into()))
            }
            BindValue::EpochMicros { of } => self.micros(ctx, of, row, to).await,
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
        to: &CqlType,
    ) -> Result<Option<CqlValue>, Error> {
        let own = |c: &ColumnRef| c.table == ctx.table;
        let in_row = |c: &ColumnRef| row.is_some_and(|r| r.contains_key(&Field::Col(c.clone())));
        let sql = match of {
            BindValue::Sql { sql } => Some(sql.clone()),
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
        to: &CqlType,
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
        to: &CqlType,
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
        Err(match empty {
            Some((i, table)) => Error::Plan(format!(
                "cur({c}) has no value: read before write {i} found no row in {table}"
            )),
            None => Error::Plan(format!(
                "cur({c}) is bound but the statement does not bind it and no read before write returns it"
            )),
        })
    }

    /// `new(c)`: the row's value after the write.
    async fn new_value(
        &self,
        ctx: &Ctx<'_>,
        c: &ColumnRef,
        row: Option<&Record>,
        to: &CqlType,
    ) -> Result<Option<CqlValue>, Error> {
        if c.table == ctx.table {
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
