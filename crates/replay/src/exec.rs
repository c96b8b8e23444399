//! The executor: runs the plan's own statements against Cassandra as an application would — every
//! `?` bound as the plan says — and the pattern's SQL against Postgres.
//!
//! Values the plan gives as typed expressions of the statement's parameters ([`BindValue::Expr`],
//! and format 1's SQL text) are rendered as Postgres SQL ([`crate::exprsql`]) and computed by
//! Postgres itself — on the *evaluator* connection, whose session runs in the plan's time zone
//! (`plan.semantics.time_zone`), so `date_trunc`, `current_date` and date/instant casts mean what
//! the plan says — and converted to the marker's CQL type by the backfill's converters: a bound
//! value is exactly what the application would compute. Time buckets are cut by Postgres too, in
//! the bucket's own zone ([`Replayer::buckets`]). The CQL type of every marker and result column
//! is the one the server reports when preparing; each statement runs at the consistency level the
//! plan states for it.

use crate::clock::{self, Clock};
use crate::exprsql;
use crate::pg::{Params, PgValue};
use crate::record::{Field, Record};
use crate::values::{self, pg_literal};
use crate::Error;
use remodel_backfill::convert::canonical_cast;
use remodel_backfill::resolved_type::ResolvedType;
use remodel_model::ident::quote;
use remodel_model::{
    AccessPattern, BindValue, ColumnRef, Consistency, DesignTable, EncodedForm, Encoding, Expr,
    Plan,
};
use remodel_sql::replay_forms::SqlForms;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Client;

/// Every parameter's type as the statement gives it, or as the literal it replaced reads (a
/// quoted string `text`, a number `numeric` or `bigint`), the others left to Postgres to infer
/// (OID 0); `None` when no parameter replaced a literal (nothing to add).
fn literal_types(p: &AccessPattern) -> Option<Vec<Type>> {
    let params = &p.analysis.params;
    if params.iter().all(|x| x.replaced_literal.is_none()) {
        return None;
    }
    let unspecified = || {
        Type::new(
            "unspecified".into(),
            0,
            tokio_postgres::types::Kind::Pseudo,
            "pg_catalog".into(),
        )
    };
    Some(
        params
            .iter()
            .map(|x| param_type(x).unwrap_or_else(unspecified))
            .collect(),
    )
}

/// A parameter's type as the statement gives it or as the literal it replaced reads.
fn param_type(param: &remodel_model::Parameter) -> Option<Type> {
    use remodel_model::ScalarType as S;
    match (param.sql_type, param.replaced_literal.as_deref()) {
        (Some(t), _) => Some(match t {
            S::Boolean => Type::BOOL,
            S::Smallint => Type::INT2,
            S::Integer => Type::INT4,
            S::Bigint => Type::INT8,
            S::Numeric => Type::NUMERIC,
            S::Real => Type::FLOAT4,
            S::Double => Type::FLOAT8,
            S::Text => Type::TEXT,
            S::Date => Type::DATE,
            S::Time => Type::TIME,
            S::Timestamp => Type::TIMESTAMP,
            S::Timestamptz => Type::TIMESTAMPTZ,
            S::Interval => Type::INTERVAL,
            S::Uuid => Type::UUID,
            S::Bytea => Type::BYTEA,
            S::Json => Type::JSONB,
        }),
        (None, Some(l)) if l.starts_with('\'') => Some(Type::TEXT),
        (None, Some(l)) if l.parse::<i64>().is_ok() => Some(Type::INT8),
        (None, Some(l)) if l.parse::<f64>().is_ok() => Some(Type::NUMERIC),
        _ => None,
    }
}

/// How long replay sends a failed Cassandra request again (a node restarting takes seconds).
pub const RETRY_FOR: Duration = Duration::from_secs(60);

/// Runs statements of one plan on one Postgres connection and one Cassandra session.
pub struct Replayer<'a> {
    /// The plan.
    pub plan: &'a Plan,
    pg: &'a Client,
    evaluator: &'a Client,
    session: &'a Session,
    cql: HashMap<String, PreparedStatement>,
    attrs: HashMap<(u32, i16), Option<ColumnRef>>,
    clock: Clock,
    /// Seconds the clock has moved since its start (one per write).
    ticks: AtomicU64,
    /// The program of `--executor`, when another executor runs the plan's side.
    external: Option<crate::external::process::External>,
    /// Cassandra requests sent again (a timeout, a node down).
    retries: AtomicU64,
}

/// A pattern ready to run: its SQL forms and the types Postgres infers for its parameters.
#[derive(Debug, Clone)]
pub struct Prepared<'p> {
    /// The pattern.
    pub pattern: &'p AccessPattern,
    /// Its SQL as replay runs it.
    pub forms: SqlForms,
    /// `$1 … $n` as Postgres types them.
    pub param_types: Vec<Type>,
}

/// Rows read from Cassandra with the time the requests took.
#[derive(Debug, Clone, Default)]
pub struct CqlRows {
    /// The rows.
    pub rows: Vec<Record>,
    /// The CQL type of each field returned.
    pub types: BTreeMap<Field, ResolvedType>,
    /// Requests sent.
    pub requests: u32,
    /// Partitions read (an `IN` of k values reads k).
    pub partitions: u32,
    /// Time spent in Cassandra requests (sequential).
    pub elapsed: Duration,
}

impl<'a> Replayer<'a> {
    /// An executor for `plan` on these connections; `pg` also evaluates the plan's expressions
    /// (see [`Replayer::with_evaluator`]).
    pub fn new(plan: &'a Plan, pg: &'a Client, session: &'a Session) -> Self {
        Replayer {
            plan,
            pg,
            evaluator: pg,
            session,
            cql: HashMap::new(),
            attrs: HashMap::new(),
            clock: Clock::wall(),
            ticks: AtomicU64::new(0),
            external: None,
            retries: AtomicU64::new(0),
        }
    }

    /// Cassandra requests sent again so far.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Runs a Cassandra request, sending it again (after 0.1 s, doubling to 2 s, for up to
    /// [`RETRY_FOR`]) while it fails for a reason retrying can fix: a node down or restarting,
    /// too few replicas for the consistency level, an overloaded node, a timeout. A write that
    /// timed out may have been applied, so one that is not `idempotent` (a counter update) is
    /// sent again only when the coordinator refused it before applying it.
    pub async fn retrying<T, F, Fut>(
        &self,
        idempotent: bool,
        mut attempt: F,
    ) -> Result<T, scylla::errors::ExecutionError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, scylla::errors::ExecutionError>>,
    {
        use remodel_backfill::cql::{cause, classify, Cause, Class};
        let started = std::time::Instant::now();
        let mut wait = Duration::from_millis(100);
        loop {
            let e = match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            let safe = idempotent || matches!(cause(&e), Cause::Unavailable | Cause::Overloaded);
            if classify(&e) != Class::Retry || !safe || started.elapsed() + wait > RETRY_FOR {
                return Err(e);
            }
            self.retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(2));
        }
    }

    /// Has `external` (the program of `--executor`) run the plan's side of every read and
    /// write instead of replay's own executor.
    pub fn with_external(mut self, external: crate::external::process::External) -> Self {
        self.external = Some(external);
        self
    }

    /// True when the program of `--executor` runs the plan's side.
    pub fn is_external(&self) -> bool {
        self.external.is_some()
    }

    /// The program of `--executor`.
    pub(crate) fn external_mut(
        &mut self,
    ) -> Result<&mut crate::external::process::External, Error> {
        self.external
            .as_mut()
            .ok_or_else(|| Error::Plan("no --executor program".into()))
    }

    /// Takes the program of `--executor` back (to end it).
    pub fn take_external(&mut self) -> Option<crate::external::process::External> {
        self.external.take()
    }

    /// Runs on `clock` (by default the wall clock at [`Replayer::new`]), already set on the
    /// sessions with [`crate::clock::set`].
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Moves replay's clock one second forward on both Postgres sessions; returns the new
    /// instant (RFC 3339). Each write runs at its own instant, later than the one before.
    pub async fn tick(&self) -> Result<String, Error> {
        let tick = self.ticks.fetch_add(1, Ordering::Relaxed) + 1;
        let instant = self.clock.at(tick);
        crate::clock::set(self.pg, &instant).await?;
        if !std::ptr::eq(self.pg, self.evaluator) {
            crate::clock::set(self.evaluator, &instant).await?;
        }
        Ok(instant)
    }

    /// Replay's clock now (RFC 3339): what `now()` reads at this point of the run.
    pub fn now_text(&self) -> String {
        self.clock.at(self.ticks.load(Ordering::Relaxed))
    }

    /// Replay's clock now, in microseconds since the Unix epoch (the instant TTLs count from).
    pub fn now_micros(&self) -> i64 {
        self.clock.micros_at(self.ticks.load(Ordering::Relaxed))
    }

    /// Evaluates the plan's expressions on `evaluator` (a session in the plan's time zone) while
    /// the pattern's SQL runs on the application's session.
    pub fn with_evaluator(mut self, evaluator: &'a Client) -> Self {
        self.evaluator = evaluator;
        self
    }

    /// The Postgres connection (the application's session).
    pub fn pg(&self) -> &Client {
        self.pg
    }

    /// The connection that evaluates the plan's expressions (a session in the plan's zone).
    pub fn evaluator(&self) -> &Client {
        self.evaluator
    }

    /// The Cassandra session.
    pub fn session(&self) -> &Session {
        self.session
    }

    /// The pattern `id` with its SQL forms and parameter types (Postgres prepares its statement).
    pub async fn prepare(&self, id: &str) -> Result<Prepared<'a>, Error> {
        let pattern = self
            .plan
            .workload
            .pattern(id)
            .ok_or_else(|| Error::Plan(format!("no pattern `{id}` in the workload")))?;
        let forms = clock::forms(&pattern.sql)
            .map_err(|e| Error::Plan(format!("{id}: the pattern's SQL: {e}")))?;
        let stmt = match self.pg.prepare(&forms.run).await {
            Ok(s) => s,
            // A literal normalization replaced by `$n` where nothing types it (`concat('@', x)`):
            // typed as the literal was, as Postgres typed the application's statement.
            Err(first) => match literal_types(pattern) {
                Some(types) => self.pg.prepare_typed(&forms.run, &types).await,
                None => Err(first),
            }
            .map_err(Error::pg(format!("{id}: prepare `{}`", forms.run)))?,
        };
        Ok(Prepared {
            pattern,
            forms,
            param_types: stmt.params().to_vec(),
        })
    }

    /// The design table `name`.
    pub fn table(&self, name: &str) -> Result<&'a DesignTable, Error> {
        self.plan
            .design
            .tables
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::Plan(format!("no table `{name}` in the design")))
    }

    /// `cql` prepared on the session (once).
    pub async fn statement(&mut self, cql: &str) -> Result<PreparedStatement, Error> {
        if let Some(s) = self.cql.get(cql) {
            return Ok(s.clone());
        }
        let s = self
            .session
            .prepare(cql)
            .await
            .map_err(Error::cql(format!("prepare `{cql}`")))?;
        self.cql.insert(cql.to_string(), s.clone());
        Ok(s)
    }

    /// `cql` prepared, set to run at the plan's consistency level (the session's default when
    /// the plan states none).
    pub async fn statement_at(
        &mut self,
        cql: &str,
        consistency: Option<&Consistency>,
    ) -> Result<PreparedStatement, Error> {
        let mut s = self.statement(cql).await?;
        if let Some(c) = consistency {
            s.set_consistency(consistency_of(c.level));
        }
        Ok(s)
    }

    /// The CQL type of each bind marker of `stmt`.
    pub fn marker_types(stmt: &PreparedStatement) -> Result<Vec<ResolvedType>, Error> {
        stmt.get_variable_col_specs()
            .iter()
            .map(|s| values::cql_type(s.typ()))
            .collect()
    }

    /// Records the CQL type of each field `stmt` returns (known from preparing, so a read that
    /// sends no request still knows them).
    pub fn result_types(stmt: &PreparedStatement, table: &DesignTable, out: &mut CqlRows) {
        let specs = stmt.get_current_result_set_col_specs();
        for s in specs.get().iter() {
            if let (Ok(ty), Some(f)) = (values::cql_type(s.typ()), field_of(table, s.name())) {
                out.types.insert(f, ty);
            }
        }
    }

    /// Runs `stmt` with `values`; the rows come back named by the source columns of `table`.
    pub async fn run_cql(
        &self,
        stmt: &PreparedStatement,
        values: &[Option<CqlValue>],
        table: &DesignTable,
        out: &mut CqlRows,
    ) -> Result<Vec<Record>, Error> {
        let what = || format!("run `{}`", stmt.get_statement());
        let start = Instant::now();
        let result = self
            .retrying(true, || self.session.execute_unpaged(stmt, values))
            .await
            .map_err(Error::cql(what()))?;
        out.elapsed += start.elapsed();
        out.requests += 1;
        // An IN on the partition key reads one partition per value; on a clustering column, one.
        let partition: Vec<bool> = stmt
            .get_variable_col_specs()
            .iter()
            .map(|spec| {
                let name = spec.name();
                let name = name
                    .strip_prefix("in(")
                    .and_then(|n| n.strip_suffix(')'))
                    .unwrap_or(name);
                table.partition_key.iter().any(|k| k.column == name)
            })
            .collect();
        out.partitions += values
            .iter()
            .zip(partition.iter().chain(std::iter::repeat(&false)))
            .map(|(v, &pk)| match v {
                Some(CqlValue::List(items)) if pk => items.len().max(1) as u32,
                _ => 1,
            })
            .product::<u32>();
        let rows = result.into_rows_result().map_err(Error::cql(what()))?;
        let encodings: Vec<Option<Encoding>> = rows
            .column_specs()
            .iter()
            .map(|s| {
                let c = table.columns.iter().find(|c| c.name == s.name())?;
                c.encoding.filter(|e| e.stores_null())
            })
            .collect();
        let fields: Vec<Option<(Field, ResolvedType)>> = rows
            .column_specs()
            .iter()
            .zip(&encodings)
            .map(|(s, e)| {
                let ty = values::read_type(*e, values::cql_type(s.typ()).ok()?);
                Some((field_of(table, s.name())?, ty))
            })
            .collect();
        for (f, t) in fields.iter().flatten() {
            out.types.insert(f.clone(), t.clone());
        }
        let mut records = Vec::new();
        for row in rows
            .rows::<scylla::value::Row>()
            .map_err(Error::cql(what()))?
        {
            let row = row.map_err(Error::cql(what()))?;
            let mut rec = Record::new();
            for ((value, field), e) in row.columns.into_iter().zip(&fields).zip(&encodings) {
                if let Some((f, _)) = field {
                    // A NULL stored as a bigint reads back as NULL.
                    let value = match e {
                        Some(e) => values::decode(*e, value),
                        None => value,
                    };
                    rec.insert(f.clone(), value);
                }
            }
            records.push(rec);
        }
        Ok(records)
    }

    /// The value of a column-free SQL expression of the parameters, as CQL type `to`.
    pub async fn eval(
        &self,
        sql: &str,
        params: &Params,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let cast = canonical_cast(to)
            .ok_or_else(|| Error::Value(format!("no Postgres type for CQL {to:?}")))?;
        self.eval_cast(sql, params, &cast, to).await
    }

    /// The value of timestamp SQL `sql` (or a list of them) as epoch microseconds (`bigint`, or
    /// a list of them, as `to` says): computed by Postgres at its full precision and encoded by
    /// the backfill's converter, as the plan's `source_sql` encodes the stored values.
    pub async fn eval_micros(
        &self,
        sql: &str,
        params: &Params,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let cast = match to {
            ResolvedType::List(_) | ResolvedType::Set(_) => "timestamptz[]",
            _ => "timestamptz",
        };
        self.eval_cast(sql, params, cast, to).await
    }

    async fn eval_cast(
        &self,
        sql: &str,
        params: &Params,
        cast: &str,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        // A NULL in an `IN` list matches no row (SQL's `= ANY`), and CQL lists hold no NULL.
        let text = match to {
            ResolvedType::List(_) | ResolvedType::Set(_) => {
                format!("SELECT array_remove(({sql})::{cast}, NULL)")
            }
            _ => format!("SELECT ({sql})::{cast}"),
        };
        let typed = typed(params);
        let row = self
            .evaluator
            .query_typed_one(&text, &typed)
            .await
            .map_err(Error::pg(format!("evaluate `{sql}` ({})", params.show())))?;
        PgValue::of(&row, 0)?.to_cql(to)
    }

    /// The rows as a `VALUES` list `__r(__n, v0, v1, …)` of typed literals, with the columns each
    /// `v<i>` holds.
    fn rows_as_values<'r>(
        &self,
        rows: &'r [Record],
    ) -> Result<(String, Vec<&'r ColumnRef>), Error> {
        let mut cols: Vec<&ColumnRef> = rows
            .iter()
            .flat_map(|r| r.keys())
            .filter_map(|f| match f {
                Field::Col(c) => Some(c),
                Field::Agg { .. } | Field::Expr(_) | Field::RowId(_) | Field::Embedded(_) => None,
            })
            .collect();
        cols.sort();
        cols.dedup();
        let types: Vec<String> = cols.iter().map(|c| self.sql_type(c)).collect();
        let mut tuples = Vec::with_capacity(rows.len());
        for (n, r) in rows.iter().enumerate() {
            let mut items = vec![n.to_string()];
            for (c, ty) in cols.iter().zip(&types) {
                let v = r.get(&Field::Col((*c).clone())).and_then(Option::as_ref);
                items.push(pg_literal(v, ty).ok_or_else(|| {
                    Error::Value(format!("{c}: a collection value has no SQL literal here"))
                })?);
            }
            tuples.push(format!("({})", items.join(", ")));
        }
        let names: Vec<String> = (0..cols.len()).map(|i| format!("v{i}")).collect();
        let from = format!(
            "(VALUES {}) AS __r(__n{}{})",
            tuples.join(", "),
            if names.is_empty() { "" } else { ", " },
            names.join(", ")
        );
        Ok((from, cols))
    }

    /// Runs `SELECT (<expr>)::<cast> FROM <from> ORDER BY __r.__n` on the evaluator.
    async fn eval_per_row(
        &self,
        expr: &str,
        cast: &str,
        from: &str,
        params: &Params,
    ) -> Result<Vec<PgValue>, Error> {
        let text = format!("SELECT ({expr})::{cast} FROM {from} ORDER BY __r.__n");
        let rows = self
            .evaluator
            .query_typed(&text, &typed(params))
            .await
            .map_err(Error::pg(format!("evaluate `{expr}` on the rows read")))?;
        rows.iter().map(|r| PgValue::of(r, 0)).collect()
    }

    /// The value of `expr` (SQL of the parameters and of the columns of each row) once per row,
    /// cast to `cast`. Each row's values stand in for its tables' columns (and for the aliases the
    /// pattern gives those tables).
    pub async fn eval_rows(
        &self,
        expr: &str,
        cast: &str,
        params: &Params,
        rows: &[Record],
        aliases: &[(String, String)],
    ) -> Result<Vec<PgValue>, Error> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let (mut from, cols) = self.rows_as_values(rows)?;
        let mut tables: Vec<&str> = cols.iter().map(|c| c.table.as_str()).collect();
        tables.dedup();
        let mut seen: Vec<String> = Vec::new();
        let lateral = |table: &str, alias: &str| -> String {
            let items: Vec<String> = cols
                .iter()
                .enumerate()
                .filter(|(_, c)| c.table == table)
                .map(|(i, c)| format!("__r.v{i} AS {}", quote(&c.column)))
                .collect();
            format!(
                " CROSS JOIN LATERAL (SELECT {}) AS {}",
                items.join(", "),
                quote(alias)
            )
        };
        for t in &tables {
            from.push_str(&lateral(t, t));
            seen.push(t.to_string());
        }
        for (alias, table) in aliases {
            if tables.contains(&table.as_str()) && !seen.contains(alias) {
                from.push_str(&lateral(table, alias));
                seen.push(alias.clone());
            }
        }
        self.eval_per_row(expr, cast, &from, params).await
    }

    /// The value of the typed expression `e` once per row, cast to `cast`: its columns are the
    /// row's values of those source columns (a column the rows do not hold is an error).
    pub async fn eval_expr_rows(
        &self,
        e: &Expr,
        cast: &str,
        params: &Params,
        rows: &[Record],
    ) -> Result<Vec<PgValue>, Error> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let (from, cols) = self.rows_as_values(rows)?;
        let sql = exprsql::to_sql(e, &|c, row| {
            if !row.is_this() {
                return Err(format!("{c} of another row than the one read"));
            }
            cols.iter()
                .position(|x| *x == c)
                .map(|i| format!("__r.v{i}"))
                .ok_or_else(|| format!("{c}, which the rows read do not hold"))
        })
        .map_err(|why| Error::Plan(format!("the client's expression `{e}` reads {why}")))?;
        self.eval_per_row(&sql, cast, &from, params).await
    }

    /// The value of a column-free typed expression of the parameters, as CQL type `to`.
    pub async fn eval_expr(
        &self,
        e: &Expr,
        params: &Params,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        let sql = exprsql::column_free(e)
            .map_err(|why| Error::Plan(format!("the expression `{e}`: {why}")))?;
        self.eval(&sql, params, to).await
    }

    /// The SQL type of a source column, as a cast can name it.
    pub fn sql_type(&self, c: &ColumnRef) -> String {
        let declared = self
            .plan
            .schema
            .table(&c.table)
            .and_then(|t| t.column(&c.column))
            .map(|col| col.sql_type.clone())
            .unwrap_or_else(|| "text".into());
        crate::generate::pg_storage_type(&declared)
    }

    /// The value of a bind of a read (or of a read step, `row` being the row read before it), as
    /// CQL type `to`: an expression of the parameters, a constant, a value of the row, or the
    /// time bucket of one of those.
    pub async fn bind_value(
        &self,
        v: &BindValue,
        params: &Params,
        row: Option<&Record>,
        to: &ResolvedType,
    ) -> Result<Option<CqlValue>, Error> {
        match v {
            BindValue::Expr { expr } => self.eval_expr(expr, params, to).await,
            BindValue::Literal { value } => self.eval(&value.to_string(), params, to).await,
            BindValue::Current { column } => {
                let found = row
                    .and_then(|r| r.get(&Field::Col(column.clone())))
                    .ok_or_else(|| {
                        Error::Plan(format!(
                            "cur({column}) is bound but the rows read before do not hold it"
                        ))
                    })?;
                found.clone().map(|x| values::coerce(x, to)).transpose()
            }
            BindValue::Bucket {
                bucket,
                of,
                time_zone,
            } => {
                let stamp =
                    ResolvedType::Native(remodel_backfill::resolved_type::Native::Timestamp);
                let inner = Box::pin(self.bind_value(of, params, row, &stamp)).await?;
                self.bucket(*bucket, time_zone, inner.as_ref(), to).await
            }
            BindValue::Buckets { .. } => Err(Error::Plan(format!(
                "{v} is a list of buckets, bound where one value is expected (the statement runs \
                 once per bucket only as a read's bind)"
            ))),
            BindValue::EpochMicros { of, null_last } => {
                let v = match &**of {
                    BindValue::Expr { expr } => {
                        let sql = exprsql::column_free(expr).map_err(|why| {
                            Error::Plan(format!("the expression `{expr}`: {why}"))
                        })?;
                        self.eval_micros(&sql, params, to).await?
                    }
                    BindValue::Literal { value } => {
                        self.eval_micros(&value.to_string(), params, to).await?
                    }
                    // A value of the rows read: kept as microseconds, or as milliseconds (× 1000).
                    other => Box::pin(self.bind_value(other, params, row, to)).await?,
                };
                Ok(if *null_last {
                    values::encode(Encoding::EpochMicrosNullLast, v)
                } else {
                    v
                })
            }
            BindValue::Encoded { of, encoding } => {
                let v = match encoding.form() {
                    EncodedForm::Micros => {
                        let micros = BindValue::EpochMicros {
                            of: of.clone(),
                            null_last: false,
                        };
                        Box::pin(self.bind_value(&micros, params, row, to)).await?
                    }
                    form => {
                        let plain = values::encoded_plain_type(form);
                        Box::pin(self.bind_value(of, params, row, &plain)).await?
                    }
                };
                Ok(values::encode(*encoding, v))
            }
            other => Err(Error::Plan(format!(
                "a read binds {other}, which only a write path can"
            ))),
        }
    }

    /// The source column behind a Postgres result column (`None` for an expression).
    pub async fn source_of(&mut self, col: &tokio_postgres::Column) -> Option<ColumnRef> {
        let key = (col.table_oid()?, col.column_id()?);
        if let Some(found) = self.attrs.get(&key) {
            return found.clone();
        }
        let row = self
            .pg
            .query_opt(
                "SELECT c.relname::text, a.attname::text FROM pg_attribute a \
                 JOIN pg_class c ON c.oid = a.attrelid WHERE a.attrelid = $1 AND a.attnum = $2",
                &[&key.0, &key.1],
            )
            .await
            .ok()
            .flatten();
        let found = row.map(|r| {
            let table: String = r.get(0);
            let column: String = r.get(1);
            let table = self
                .plan
                .schema
                .table(&table)
                .map_or(table, |t| t.name.clone());
            ColumnRef::new(table, column)
        });
        self.attrs.insert(key, found.clone());
        found
    }
}

/// The driver's consistency level for the plan's (the backfill's one mapping).
pub use remodel_backfill::cql::consistency_of;

/// Parameters with their types, for `query_typed`.
pub fn typed(params: &Params) -> Vec<(&(dyn ToSql + Sync), Type)> {
    params
        .values
        .iter()
        .map(|v| (v as &(dyn ToSql + Sync), v.ty.clone()))
        .collect()
}

/// What a result column of a CQL statement on `table` holds: a source column, or an aggregate
/// (`system.sum(ol_amount)`, `count`).
pub fn field_of(table: &DesignTable, name: &str) -> Option<Field> {
    let by_name = |n: &str| {
        table
            .columns
            .iter()
            .find(|c| c.name == n || c.name.eq_ignore_ascii_case(n))
    };
    if let (Some(k), Some(c)) = (&table.counter, by_name(name)) {
        // A counter table's counters are the aggregates its reads return.
        if c.name == k.count_column {
            return Some(Field::Agg {
                function: "count".into(),
                column: None,
                distinct: false,
            });
        }
        // A group column holds the counted table's column (its lineage may name the key it
        // references instead).
        if let Some(g) = k.group_by.iter().find(|g| g.column == c.name) {
            return Some(Field::Col(g.clone()));
        }
        if let Some((_, src)) = k.sums.iter().find(|(n, _)| *n == c.name) {
            return Some(Field::Agg {
                function: "sum".into(),
                column: Some(src.clone()),
                distinct: false,
            });
        }
    }
    if let Some(c) = by_name(name) {
        return c
            .source
            .clone()
            .map(Field::Col)
            .or_else(|| c.row_id.as_ref().map(|r| Field::RowId(r.table.clone())))
            .or_else(|| c.embeds.as_ref().map(|_| Field::Embedded(c.name.clone())));
    }
    let bare = name.strip_prefix("system.").unwrap_or(name);
    if bare == "count" {
        return Some(Field::Agg {
            function: "count".into(),
            column: None,
            distinct: false,
        });
    }
    let (function, rest) = bare.split_once('(')?;
    let arg = rest.strip_suffix(')')?.trim().trim_matches('"');
    let column = match arg {
        "*" | "" | "1" => None,
        a => Some(by_name(a)?.source.clone()?),
    };
    Some(Field::Agg {
        function: function.to_ascii_lowercase(),
        column,
        distinct: false,
    })
}
