//! A round of committed transactions applied to the target: each row change turned into the
//! target rows it feeds ([`crate::derive`]), collapsed per target row (the last write of a row in
//! the round is its value at the round's end; within a transaction all writes carry one
//! timestamp, and Cassandra would otherwise pick among equal timestamps by value), then sent
//! `USING TIMESTAMP` of its transaction's commit, at the plan's writes' consistency level, with
//! as many in flight as the adaptive level allows, each retried (a timeout, a node down) until
//! acknowledged or `retry_for` has passed.

use crate::derive::{self, Feed, Source};
use crate::progress::Progress;
use crate::Error;
use futures_util::StreamExt;
use remodel_backfill::adaptive::Limiter;
use remodel_backfill::convert::RawValue;
use remodel_backfill::cql::{cause, classify, consistency_not_reached, Cause, Class, RetryCounter};
use remodel_backfill::pg::ReadShape;
use remodel_backfill::rows::convert_row;
use remodel_backfill::target::{TargetTable, Ttl};
use remodel_backfill::PgSource;
use remodel_model::ident::quote;
use remodel_model::RetryCauses;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, MaybeUnset};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, Statement};

/// A row change of a source table, its images as JSON objects of text values.
#[derive(Debug, Clone)]
pub struct Change {
    /// Index of the source table in [`Applier::sources`].
    pub source: usize,
    /// The row before (UPDATE, DELETE), as much of it as the replica identity gives.
    pub old: Option<String>,
    /// The row after (INSERT, UPDATE).
    pub new: Option<String>,
}

/// The queries one row change needs for one target table.
struct Planned {
    target: usize,
    feed: Feed,
    /// (sql, image) pairs: the old image's first when it has one.
    queries: Vec<(String, String)>,
    /// How many of `queries` are of the old image (0 or 1).
    olds: usize,
    /// The write timestamp of the change's transaction.
    ts: i64,
}

/// How target writes are sent.
#[derive(Clone)]
pub struct WriteSettings {
    /// How long one write is retried before the run stops.
    pub retry_for: Duration,
    /// The writes in flight.
    pub limiter: Arc<Limiter>,
    /// The consistency level of every write.
    pub consistency: Consistency,
}

/// A write of one target row.
#[derive(Debug, Clone)]
enum Op {
    /// Every column (a NULL binds a NULL: the row is what the source makes it).
    Upsert(Vec<Option<CqlValue>>),
    /// The primary key's values.
    Delete(Vec<CqlValue>),
}

/// What applying one transaction did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Applied {
    /// Target rows written.
    pub upserts: u64,
    /// Target rows deleted.
    pub deletes: u64,
}

/// Applies transactions to the target tables.
pub struct Applier {
    /// The plan's source tables with the target tables they feed.
    pub sources: Vec<Source>,
    targets: Vec<TargetTable>,
    shapes: Vec<ReadShape>,
    source: PgSource,
    client: Client,
    session: Arc<Session>,
    inserts: Vec<PreparedStatement>,
    deletes: Vec<PreparedStatement>,
    statements: HashMap<String, Statement>,
    writes: WriteSettings,
    retries: RetryCounter,
    /// Told when writes start failing and when Cassandra answers again.
    progress: Arc<dyn Progress>,
    /// True while writes fail (one line per outage, not one per write).
    failing: AtomicBool,
}

impl Applier {
    /// Prepares every target table's INSERT and DELETE (`USING TIMESTAMP ?`) and its read shape.
    pub async fn new(
        source: &PgSource,
        session: Arc<Session>,
        targets: Vec<TargetTable>,
        sources: Vec<Source>,
        writes: WriteSettings,
        progress: Arc<dyn Progress>,
    ) -> Result<Applier, Error> {
        let client = source.connect().await?;
        let mut shapes = Vec::with_capacity(targets.len());
        let mut inserts = Vec::with_capacity(targets.len());
        let mut deletes = Vec::with_capacity(targets.len());
        for t in &targets {
            shapes.push(source.describe(&client, t).await?);
            inserts.push(prepare(&session, &insert_cql(t), writes.consistency).await?);
            deletes.push(prepare(&session, &delete_cql(t), writes.consistency).await?);
        }
        Ok(Applier {
            sources,
            targets,
            shapes,
            source: source.clone(),
            client,
            session,
            inserts,
            deletes,
            statements: HashMap::new(),
            writes,
            retries: RetryCounter::default(),
            progress,
            failing: AtomicBool::new(false),
        })
    }

    /// Target writes sent again so far, by cause.
    pub fn retry_causes(&self) -> RetryCauses {
        self.retries.causes()
    }

    /// The writes in flight.
    pub fn limiter(&self) -> &Arc<Limiter> {
        &self.writes.limiter
    }

    /// Applies a round of transactions, each with its write timestamp (increasing); returns once
    /// Cassandra acknowledged every write. A target row written by several of them is sent once,
    /// as the last one left it, with that one's timestamp: every write is a whole row or a
    /// deletion, so the row ends as if each had been sent.
    pub async fn apply(&mut self, round: &[(&[Change], i64)]) -> Result<Applied, Error> {
        let changes: Vec<(&Change, i64)> = round
            .iter()
            .flat_map(|(changes, ts)| changes.iter().map(|c| (c, *ts)))
            .collect();
        // Per target table and key: the round's last write of that row.
        let mut ops: Vec<(usize, Op, i64)> = Vec::new();
        let mut at: HashMap<(usize, String), usize> = HashMap::new();
        for (ti, op, ts) in self.all_ops(&changes).await? {
            match at.entry((ti, key_text(&self.targets[ti], &op))) {
                std::collections::hash_map::Entry::Occupied(e) => ops[*e.get()] = (ti, op, ts),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(ops.len());
                    ops.push((ti, op, ts));
                }
            }
        }
        let mut applied = Applied::default();
        let mut pending = Vec::with_capacity(ops.len());
        let this: &Applier = self;
        for (ti, op, ts) in ops {
            let (stmt, values) = match op {
                Op::Upsert(mut row) => {
                    applied.upserts += 1;
                    let t = &this.targets[ti];
                    let instant = t.ttl.and_then(|i| row.get(i)).and_then(Option::as_ref);
                    // A row already past its instant is written with the least TTL: it replaces
                    // any older version and is gone a second later (the plan's SecondsUntil).
                    match t.ttl_of(instant, remodel_backfill::time::now_micros()) {
                        Some(Ttl::Expired) => row.push(Some(CqlValue::Int(1))),
                        Some(Ttl::Seconds(n)) => row.push(Some(CqlValue::Int(n))),
                        None => {}
                    }
                    row.push(Some(CqlValue::BigInt(ts)));
                    (&this.inserts[ti], row)
                }
                Op::Delete(key) => {
                    applied.deletes += 1;
                    let mut v = vec![Some(CqlValue::BigInt(ts))];
                    v.extend(key.into_iter().map(Some));
                    (&this.deletes[ti], v)
                }
            };
            pending.push(async move {
                let _slot = this.writes.limiter.acquire().await;
                this.send(stmt, values, &this.targets[ti].name).await
            });
        }
        // The limiter bounds what is in flight; the stream only has to offer enough.
        let mut sent = futures_util::stream::iter(pending)
            .buffer_unordered(remodel_backfill::adaptive::MAX_LEVEL);
        while let Some(r) = sent.next().await {
            r?;
        }
        Ok(applied)
    }

    /// One write, retried (a node down, a timeout) until acknowledged or `retry_for` passed; a
    /// write the server refuses (an invalid value), or any write past the retries, stops the
    /// run: the slot keeps the change, and the same command resumes at its round.
    async fn send(
        &self,
        stmt: &PreparedStatement,
        values: Vec<Option<CqlValue>>,
        table: &str,
    ) -> Result<(), Error> {
        let started = Instant::now();
        let mut wait = Duration::from_millis(100);
        loop {
            let sent = Instant::now();
            let e = match self.session.execute_unpaged(stmt, &values).await {
                Ok(_) => {
                    self.writes.limiter.answered(1, sent.elapsed());
                    if self.failing.swap(false, Ordering::Relaxed) {
                        self.progress.line("Cassandra answers again");
                    }
                    return Ok(());
                }
                Err(e) => e,
            };
            let retry = classify(&e) == Class::Retry;
            if retry && matches!(cause(&e), Cause::Timeout | Cause::Overloaded) {
                self.writes.limiter.overloaded();
            }
            let line = remodel_conn::one_line(&e.to_string());
            if !retry || started.elapsed() + wait > self.writes.retry_for {
                return Err(Error::Cassandra(gave_up(
                    &e,
                    table,
                    &line,
                    started.elapsed(),
                    self.writes.consistency,
                )));
            }
            self.retries.count(cause(&e));
            if !self.failing.swap(true, Ordering::Relaxed) {
                self.progress.line(&format!(
                    "Cassandra: write to {table} failed ({line}); retrying with back-off for up to {} s",
                    self.writes.retry_for.as_secs()
                ));
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(2));
        }
    }

    /// Per change and target table: the queries it needs, (sql, image) pairs.
    fn planned(&self, changes: &[(&Change, i64)]) -> Result<Vec<Planned>, Error> {
        let mut plans: Vec<Planned> = Vec::new();
        for &(change, ts) in changes {
            let source = &self.sources[change.source];
            for (ti, feed) in &source.feeds {
                let t = &self.targets[*ti];
                let mut queries = Vec::new();
                let mut olds = 0;
                match feed {
                    Feed::Driving => {
                        let sql = derive::with_row(t, &source.sql)?;
                        // No old image: an UPDATE that kept the replica identity's key, whose
                        // target rows (keyed by that key, or the check asked for FULL) stay put.
                        if let Some(o) = &change.old {
                            queries.push((sql.clone(), o.clone()));
                            olds = 1;
                        }
                        if let Some(n) = &change.new {
                            queries.push((sql, n.clone()));
                        }
                    }
                    Feed::Linked { driving, row } => {
                        let sql = derive::linked_to(t, &source.sql, driving, row)?;
                        for image in [&change.old, &change.new].into_iter().flatten() {
                            queries.push((sql.clone(), image.clone()));
                        }
                    }
                }
                plans.push(Planned {
                    target: *ti,
                    feed: feed.clone(),
                    queries,
                    olds,
                    ts,
                });
            }
        }
        Ok(plans)
    }

    /// The writes of a transaction's row changes, in order. Every query is sent before any
    /// answer is awaited (tokio-postgres pipelines them on the one connection): a transaction
    /// costs one round trip to Postgres, not one per change and target table.
    async fn all_ops(
        &mut self,
        changes: &[(&Change, i64)],
    ) -> Result<Vec<(usize, Op, i64)>, Error> {
        let plans = self.planned(changes)?;
        let mut statements = Vec::new();
        for p in &plans {
            for (sql, _) in &p.queries {
                statements.push(self.statement(p.target, sql).await?);
            }
        }
        let images: Vec<&String> = plans
            .iter()
            .flat_map(|p| p.queries.iter().map(|(_, image)| image))
            .collect();
        let params: Vec<[&(dyn tokio_postgres::types::ToSql + Sync); 1]> =
            images.iter().map(|i| [*i as _]).collect();
        let answers = futures_util::future::join_all(
            statements
                .iter()
                .zip(&params)
                .map(|(stmt, p)| self.client.query(stmt, p)),
        )
        .await;
        let mut answers = answers.into_iter();
        let mut out = Vec::new();
        for Planned {
            target: ti,
            feed,
            queries,
            olds,
            ts,
        } in plans
        {
            let mut results = Vec::with_capacity(queries.len());
            for _ in &queries {
                let rows = answers
                    .next()
                    .ok_or_else(|| Error::Input("internal: an answer is missing".into()))?
                    .map_err(|e| {
                        let name = &self.targets[ti].name;
                        self.source.failed(format!("compute the rows of {name}"), e)
                    })?;
                results.push(self.convert(ti, rows)?);
            }
            let t = &self.targets[ti];
            match feed {
                Feed::Driving => {
                    let new: Vec<_> = results.split_off(olds).into_iter().flatten().collect();
                    let new_keys: Vec<Vec<CqlValue>> = new.iter().map(|r| key_of(t, r)).collect();
                    for r in results.into_iter().flatten() {
                        let k = key_of(t, &r);
                        if !new_keys.contains(&k) {
                            out.push((ti, Op::Delete(k), ts));
                        }
                    }
                    out.extend(new.into_iter().map(|r| (ti, Op::Upsert(r), ts)));
                }
                Feed::Linked { .. } => {
                    out.extend(
                        results
                            .into_iter()
                            .flatten()
                            .map(|r| (ti, Op::Upsert(r), ts)),
                    );
                }
            }
        }
        Ok(out)
    }

    /// The prepared statement of `source_sql` (rewritten to `sql`) of table `ti`, as the
    /// backfill's read shape selects it.
    async fn statement(&mut self, ti: usize, sql: &str) -> Result<Statement, Error> {
        let t = &self.targets[ti];
        let mut shaped = t.clone();
        shaped.source_sql = sql.to_string();
        let text = self.shapes[ti].sql(&shaped, None);
        if let Some(s) = self.statements.get(&text) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&text).await.map_err(|e| {
            self.source
                .failed(format!("prepare the rows of {}", t.name), e)
        })?;
        self.statements.insert(text, s.clone());
        Ok(s)
    }

    /// Source rows of table `ti` converted as the backfill converts them (a NULL binds a NULL).
    fn convert(
        &self,
        ti: usize,
        rows: Vec<tokio_postgres::Row>,
    ) -> Result<Vec<Vec<Option<CqlValue>>>, Error> {
        let t = &self.targets[ti];
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let raw = (0..t.columns.len())
                .map(|i| row.try_get::<_, RawValue<'_>>(i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.source.failed(format!("decode a row of {}", t.name), e))?;
            let converted = convert_row(t, &self.shapes[ti].kinds, &raw).map_err(|p| {
                Error::Input(format!(
                    "a row of {} cannot be stored{}: {}",
                    t.name,
                    p.column
                        .map(|c| format!(" (column {c})"))
                        .unwrap_or_default(),
                    p.reason
                ))
            })?;
            out.push(
                converted
                    .into_iter()
                    .map(|v| match v {
                        MaybeUnset::Set(v) => Some(v),
                        MaybeUnset::Unset => None,
                    })
                    .collect(),
            );
        }
        Ok(out)
    }
}

/// Why a write stopped the run, in one line.
fn gave_up(
    e: &scylla::errors::ExecutionError,
    table: &str,
    line: &str,
    spent: Duration,
    level: Consistency,
) -> String {
    if classify(e) != Class::Retry {
        return format!("write to {table}: {line}");
    }
    let what = if consistency_not_reached(e) {
        format!(
            "not stored at consistency {}",
            remodel_backfill::cql::level_name(level)
        )
    } else {
        "no answer".to_string()
    };
    format!(
        "write to {table}: {what} after {} s of retries (--retry-for): {line}",
        spent.as_secs()
    )
}

async fn prepare(
    session: &Session,
    cql: &str,
    consistency: Consistency,
) -> Result<PreparedStatement, Error> {
    let mut p = session
        .prepare(cql)
        .await
        .map_err(|e| Error::Cassandra(format!("prepare `{cql}`: {e}")))?;
    p.set_consistency(consistency);
    p.set_is_idempotent(true);
    Ok(p)
}

/// `INSERT … USING [TTL ? AND] TIMESTAMP ?`: every column, the TTL when its rows expire, then
/// the timestamp.
fn insert_cql(t: &TargetTable) -> String {
    t.insert_cql_at(Some("?"))
}

/// `DELETE FROM … USING TIMESTAMP ? WHERE` every primary-key column `= ?`.
fn delete_cql(t: &TargetTable) -> String {
    let wheres: Vec<String> = t
        .primary_key()
        .map(|i| format!("{} = ?", quote(&t.columns[i].name)))
        .collect();
    format!(
        "DELETE FROM {} USING TIMESTAMP ? WHERE {}",
        t.qualified(),
        wheres.join(" AND ")
    )
}

/// The primary-key values of a target row (never NULL: the conversion rejects NULL keys).
fn key_of(t: &TargetTable, row: &[Option<CqlValue>]) -> Vec<CqlValue> {
    t.primary_key().filter_map(|i| row[i].clone()).collect()
}

fn key_text(t: &TargetTable, op: &Op) -> String {
    let key = match op {
        Op::Upsert(r) => key_of(t, r),
        Op::Delete(k) => k.clone(),
    };
    format!("{key:?}")
}
