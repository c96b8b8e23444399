//! A whole replay, in one of two modes.
//!
//! - Generated (the default): generated rows into the source, the backfill into the target.
//! - Existing (`--existing`): the rows already there — the source as it is and the keyspace
//!   `remodel backfill` filled — read-only on both sides (the Postgres sessions are
//!   `default_transaction_read_only`, no CQL write is sent), so write patterns are refused.
//!
//! Then every read pattern with parameters drawn from real rows on both sides (the adversarial
//! samplers of [`crate::sample`]), and in the generated mode with `writes` every write pattern
//! on both sides followed by the reads it affects, anchored on the rows it changed as they are
//! after it and as they were before it. The pattern's SQL runs in the application's session time
//! zone (`time_zone`, by default the source's own `TimeZone`); the plan's expressions are
//! evaluated in the zone the plan states. The result is a [`ReplayReport`].

use crate::clock::clocked;
use crate::clock::Clock;
use crate::compare::ReadCheck;
use crate::exec::{Prepared, Replayer};
use crate::pg::Params;
use crate::sample::{self, Focus};
use crate::Error;
use remodel_backfill::{BackfillOptions, CqlTarget, PgSource, Silent};
use remodel_model::ident::{literal, quote};
use remodel_model::{
    ColumnRef, Latency, PatternReplay, Plan, ReplayMismatch, ReplayOutcome, ReplayReport,
    StatementKind, TableRows,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// Parameter sets per pattern.
    pub samples: usize,
    /// Replay the write patterns too.
    pub writes: bool,
    /// Seed of the generated rows and the parameters.
    pub seed: u64,
    /// Rows of the largest generated tables.
    pub rows: u64,
    /// Drop the plan's tables on both sides first when they exist.
    pub replace: bool,
    /// The CQL that creates the target tables (`schema.cql`).
    pub schema_cql: String,
    /// The backfill's run folder.
    pub run_dir: PathBuf,
    /// Only these patterns (empty: all).
    pub only: Vec<String>,
    /// Read the rows already on both sides instead of generating them (read-only).
    pub existing: bool,
    /// The application's session time zone (IANA name); `None`: the source's `TimeZone`.
    pub time_zone: Option<String>,
    /// Replay's clock; `None`: fixed by the seed (the wall clock with `existing`).
    pub now: Option<Clock>,
    /// The program that executes the plan's side instead of replay's own executor
    /// (`--executor`, run by `sh -c`; see [`crate::external`]).
    pub executor: Option<String>,
}

impl Options {
    /// The run's clock: the one given, else the seed's (the wall clock on the rows already
    /// there, whose dates are real).
    pub fn clock(&self) -> Clock {
        self.now.unwrap_or_else(|| {
            if self.existing {
                Clock::wall()
            } else {
                Clock::of_seed(self.seed)
            }
        })
    }
}

/// Replays `plan` (see the module documentation); `notify` hears each step.
pub async fn replay(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &Options,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<ReplayReport, Error> {
    if opts.existing && opts.writes {
        return Err(Error::Refused(WRITES_REFUSED.into()));
    }
    let (pg, session) = crate::connect(source, target).await?;
    let clock = opts.clock();
    crate::clock::set(&pg, &clock.at(0)).await?;
    notify(&format!(
        "clock: now() is {} ({}), one second later at each write",
        clock.at(0),
        clock.origin_text(opts.seed)
    ));
    let (rows, rejected) = if opts.existing {
        existing_rows(plan, &pg, &session).await?
    } else {
        generated_rows(plan, source, target, &pg, &session, opts, notify).await?
    };
    let zone = session_zone(&pg, opts.time_zone.as_deref()).await?;
    let plan_zone = plan.semantics.time_zone.clone();
    let evaluator = if plan_zone == zone {
        None
    } else {
        let e = source.connect().await?;
        crate::clock::set(&e, &clock.at(0)).await?;
        same_search_path(&pg, &e).await?;
        set_zone(&e, &plan_zone, "the plan's semantics.time_zone").await?;
        if opts.existing {
            read_only(&e).await?;
        }
        Some(e)
    };
    notify(&format!(
        "the application's session runs in {zone}; the plan's expressions are evaluated in {plan_zone}"
    ));
    let mut report = ReplayReport {
        keyspace: plan.design.keyspace.name.clone(),
        seed: opts.seed,
        samples: opts.samples,
        concurrency: 1,
        writes: opts.writes,
        existing: opts.existing,
        time_zone: zone,
        now: clock.at(0),
        rows,
        rejected,
        ..ReplayReport::default()
    };
    let mut r = Replayer::new(plan, &pg, &session).with_clock(clock);
    if let Some(e) = &evaluator {
        r = r.with_evaluator(e);
    }
    if let Some(command) = &opts.executor {
        let env = [
            ("REMODEL_CQL", target.node.clone()),
            ("REMODEL_KEYSPACE", plan.design.keyspace.name.clone()),
        ];
        r = r.with_external(crate::external::External::spawn(command, &env)?);
        notify(&format!("the plan's side runs through `{command}`"));
        report.executor = Some(command.clone());
    }
    let wanted = |id: &str| opts.only.is_empty() || opts.only.iter().any(|o| o == id);
    for (i, q) in plan.design.queries.iter().enumerate() {
        if q.one_off || !wanted(&q.pattern) {
            continue;
        }
        notify(&format!("read {}", q.pattern));
        let seed = opts.seed.wrapping_add(i as u64 * 7919);
        report
            .patterns
            .push(replay_read(&mut r, &q.pattern, opts.samples, seed).await);
    }
    if opts.writes {
        for (i, w) in plan.design.writes.iter().enumerate() {
            if w.one_off || !wanted(&w.pattern) {
                continue;
            }
            notify(&format!("write {}", w.pattern));
            let seed = opts.seed.wrapping_add(1_000_003 + i as u64 * 7919);
            report
                .patterns
                .push(replay_write(&mut r, &w.pattern, opts.samples, seed).await);
        }
    }
    report.retries = r.retries();
    if let Some(external) = r.take_external() {
        external.finish().await;
    }
    Ok(report)
}

/// Why `--writes` is refused with `--existing`.
pub const WRITES_REFUSED: &str = "--writes cannot be combined with --existing: replay on the \
     rows already there is read-only on both sides (replay the writes on generated rows, without \
     --existing)";

/// Generated mode: the target checked empty, the source filled, the backfill run. Returns the
/// rows per table and the rows the backfill rejected.
async fn generated_rows(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    pg: &tokio_postgres::Client,
    session: &scylla::client::session::Session,
    opts: &Options,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<(Vec<TableRows>, u64), Error> {
    // The target is checked first: a refused replay leaves both sides untouched.
    clear_target(plan, session, opts.replace).await?;
    notify(&format!(
        "generating about {} rows per table into {}",
        opts.rows, source.display
    ));
    let loaded =
        crate::generate::create_and_fill(pg, &plan.schema, opts.rows, opts.seed, opts.replace)
            .await?;
    for skipped in &loaded.skipped_constraints {
        notify(&format!("foreign key not enforced: {skipped}"));
    }
    notify(&format!(
        "backfilling keyspace {} at {}",
        plan.design.keyspace.name, target.node
    ));
    let backfill_opts = BackfillOptions {
        run_dir: opts.run_dir.clone(),
        create_schema: Some(opts.schema_cql.clone()),
        readers: 2,
        concurrency: remodel_backfill::Concurrency::Auto,
        clock_micros: Some(opts.clock().micros_at(0)),
        ..BackfillOptions::default()
    };
    let summary =
        remodel_backfill::backfill(plan, source, target, &backfill_opts, Arc::new(Silent)).await?;
    if let Some(e) = &summary.error {
        return Err(Error::Plan(format!("the backfill stopped: {e}")));
    }
    let rows = loaded
        .tables
        .iter()
        .map(|(table, rows)| TableRows {
            table: table.clone(),
            rows: *rows,
        })
        .collect();
    Ok((rows, summary.tables.iter().map(|t| t.rows_rejected).sum()))
}

/// Existing mode: the source session made read-only, both sides checked to hold the plan's
/// tables. Returns the planner's row estimate of each source table.
async fn existing_rows(
    plan: &Plan,
    pg: &tokio_postgres::Client,
    session: &scylla::client::session::Session,
) -> Result<(Vec<TableRows>, u64), Error> {
    read_only(pg).await?;
    // An extension's type found where it lives, with its operators, as the application finds them.
    crate::generate::extension_types(pg, &plan.schema, false).await?;
    crate::existing::check_target(plan, session).await?;
    let rows = crate::existing::source_rows(plan, pg).await?;
    Ok((rows, 0))
}

/// Gives session `to` the search path of `from` (which finds the types of extensions replay
/// located: [`crate::generate::extension_types`]).
async fn same_search_path(
    from: &tokio_postgres::Client,
    to: &tokio_postgres::Client,
) -> Result<(), Error> {
    let path: String = from
        .query_one("SELECT current_setting('search_path')", &[])
        .await
        .map_err(Error::pg("read the session's search path"))?
        .get(0);
    to.query_one("SELECT set_config('search_path', $1, false)", &[&path])
        .await
        .map_err(Error::pg("set the evaluator's search path"))?;
    Ok(())
}

/// Makes every transaction of the session read-only: a statement that would write fails.
async fn read_only(pg: &tokio_postgres::Client) -> Result<(), Error> {
    pg.batch_execute("SET default_transaction_read_only = on")
        .await
        .map_err(Error::pg("make the session read-only"))
}

/// Sets the session's time zone; an unknown zone is one line naming `what` gave it.
async fn set_zone(pg: &tokio_postgres::Client, zone: &str, what: &str) -> Result<(), Error> {
    let sql = format!("SET TimeZone = {}", literal(zone));
    pg.batch_execute(&sql).await.map_err(|e| {
        Error::Refused(format!(
            "{what} `{zone}`: Postgres does not know this time zone ({})",
            remodel_backfill::pg::pg_message(&e)
        ))
    })
}

/// Puts the application's session in `zone`, or in the source's own default `TimeZone` (the one
/// the database, the role or the URL's options give a new session); returns the zone.
async fn session_zone(pg: &tokio_postgres::Client, zone: Option<&str>) -> Result<String, Error> {
    let zone = match zone {
        Some(z) => z.to_string(),
        None => pg
            .query_one(
                "SELECT reset_val FROM pg_settings WHERE name = 'TimeZone'",
                &[],
            )
            .await
            .map_err(Error::pg("the source's TimeZone"))?
            .get(0),
    };
    set_zone(pg, &zone, "--timezone").await?;
    Ok(zone)
}

/// Refuses a target whose tables hold rows (drops them with `replace`): replay compares the
/// target with generated rows only.
async fn clear_target(
    plan: &Plan,
    session: &scylla::client::session::Session,
    replace: bool,
) -> Result<(), Error> {
    let ks = &plan.design.keyspace.name;
    for t in &plan.design.tables {
        let name = format!("{}.{}", quote(ks), quote(&t.name));
        if replace {
            let cql = format!("DROP TABLE IF EXISTS {name}");
            session
                .query_unpaged(cql.as_str(), &[])
                .await
                .map_err(Error::cql(cql.clone()))?;
            continue;
        }
        let cql = format!("SELECT * FROM {name} LIMIT 1");
        // A missing table (or keyspace) is what replay wants; only rows are refused.
        if let Ok(rows) = session.query_unpaged(cql.as_str(), &[]).await {
            if rows.into_rows_result().is_ok_and(|r| r.rows_num() > 0) {
                return Err(Error::Plan(format!(
                    "{name} already holds rows: replay compares the target with generated rows \
                     only; pass --replace to drop the plan's tables first"
                )));
            }
        }
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// p50 and p99 of `samples` (milliseconds), nearest rank.
pub fn latency(samples: &[f64]) -> Latency {
    if samples.is_empty() {
        return Latency::default();
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    Latency {
        p50_ms: rank(0.50),
        p99_ms: rank(0.99),
    }
}

/// A pattern that was not run, with why.
fn skipped(id: &str, kind: StatementKind, outcome: ReplayOutcome, why: String) -> PatternReplay {
    PatternReplay {
        pattern: id.to_string(),
        kind: Some(kind),
        outcome,
        reason: Some(why),
        ..PatternReplay::default()
    }
}

/// Sorts an error into the pattern's outcome: what replay lacks, or a difference to report.
fn failure(e: Error) -> Result<String, String> {
    match e {
        Error::Unsupported(why) => Err(why),
        other => Ok(other.to_string()),
    }
}

/// A step that failed, as a difference of `pattern`.
fn failed(pattern: &str, params: &Params, after: Option<&str>, reason: String) -> ReplayMismatch {
    ReplayMismatch {
        pattern: pattern.to_string(),
        params: params.show(),
        after: after.map(str::to_string),
        reason,
        ..ReplayMismatch::default()
    }
}

fn mismatch(
    pattern: &str,
    params: &Params,
    after: Option<&str>,
    check: &ReadCheck,
) -> Option<ReplayMismatch> {
    let d = check.difference.as_ref()?;
    Some(ReplayMismatch {
        sql: d.sql.clone(),
        cql: d.cql.clone(),
        ..failed(pattern, params, after, d.reason.clone())
    })
}

/// Per-sample figures of one pattern.
#[derive(Default)]
struct Timings {
    pg_ms: Vec<f64>,
    cql_ms: Vec<f64>,
    partitions: Vec<f64>,
}

impl Timings {
    fn finish(self, out: &mut PatternReplay) {
        out.postgres = latency(&self.pg_ms);
        out.cassandra = latency(&self.cql_ms);
        let n = self.partitions.len();
        out.partitions_read = (n > 0).then(|| self.partitions.iter().sum::<f64>() / n as f64);
    }
}

/// The pattern prepared and its parameter sets, or why it cannot be replayed.
async fn prepared_samples<'p>(
    r: &Replayer<'p>,
    id: &str,
    samples: usize,
    seed: u64,
) -> Result<(Prepared<'p>, Vec<Params>), String> {
    let p = r.prepare(id).await.map_err(|e| e.to_string())?;
    let mut params = sample::draw(r.pg(), &p, &r.plan.schema, samples, seed, None)
        .await
        .map_err(|e| e.to_string())?;
    if p.pattern.kind == StatementKind::Select {
        sample::exact_limits(r.pg(), &p, &r.plan.schema, &mut params)
            .await
            .map_err(|e| e.to_string())?;
    }
    if params.is_empty() {
        return Err("the source tables hold no row to draw parameters from".into());
    }
    Ok((p, params))
}

async fn replay_read(r: &mut Replayer<'_>, id: &str, samples: usize, seed: u64) -> PatternReplay {
    let plan = r.plan;
    let kind = StatementKind::Select;
    let Some(q) = plan.design.queries.iter().find(|q| q.pattern == id) else {
        return skipped(
            id,
            kind,
            ReplayOutcome::NotReplayed,
            "no query mapping".into(),
        );
    };
    if q.cql.is_none() {
        let why = q
            .reason
            .clone()
            .unwrap_or_else(|| "the plan maps it to no CQL".into());
        return skipped(id, kind, ReplayOutcome::Exception, why);
    }
    let (p, params) = match prepared_samples(r, id, samples, seed).await {
        Ok(v) => v,
        Err(why) => return skipped(id, kind, ReplayOutcome::NotReplayed, why),
    };
    let mut out = PatternReplay {
        pattern: id.to_string(),
        kind: Some(kind),
        plan_partitions: q.partition_reads,
        ..PatternReplay::default()
    };
    let mut t = Timings::default();
    for params in &params {
        match r.check_read(&p, params).await {
            Err(Error::SourceRefused(why)) => {
                out.refused += 1;
                out.refused_because.get_or_insert(why);
            }
            Ok(c) => {
                out.samples += 1;
                out.rows += c.sql.returned as u64;
                out.folded_rows += c.folded_rows;
                t.pg_ms.push(ms(c.sql.elapsed));
                t.cql_ms.push(ms(c.cql.elapsed));
                // Another executor's requests are its own: no partitions are counted for it.
                if !r.is_external() {
                    t.partitions.push(c.cql.partitions as f64);
                }
                out.mismatches.extend(mismatch(id, params, None, &c));
            }
            Err(e) => match failure(e) {
                Err(why) => return skipped(id, kind, ReplayOutcome::NotReplayed, why),
                Ok(reason) => {
                    let reason = format!("failed: {reason}");
                    out.mismatches.push(failed(id, params, None, reason));
                }
            },
        }
    }
    t.finish(&mut out);
    // A read no sample compared proves nothing: never "replayed".
    if out.samples == 0 && out.mismatches.is_empty() {
        out.outcome = ReplayOutcome::NotReplayed;
        out.reason = Some(match out.refused_because.take() {
            Some(why) => format!(
                "0 samples compared: Postgres refused all {}: {why}",
                out.refused
            ),
            None => "0 samples compared".into(),
        });
    }
    out
}

/// The rows a write will change, as JSON, read before it (by the statement's `=` conditions on
/// the written table).
async fn rows_before(
    r: &Replayer<'_>,
    p: &Prepared<'_>,
    params: &Params,
) -> Result<Option<String>, Error> {
    let a = &p.pattern.analysis;
    let Some(w) = &a.write else { return Ok(None) };
    let conds: Vec<String> = if p.pattern.kind == StatementKind::Insert {
        conflict_conditions(r, p)
    } else {
        a.equality
            .iter()
            .filter(|e| e.column.table == w.table && e.op == remodel_model::EqualityOp::Eq)
            .filter_map(|e| {
                Some(format!(
                    "t.{} = ({})",
                    quote(&e.column.column),
                    clocked(e.value.as_deref()?)
                ))
            })
            .collect()
    };
    if conds.is_empty() {
        return Ok(None);
    }
    let sql = format!(
        "SELECT coalesce(json_agg(t), '[]')::text FROM {} t WHERE {}",
        quote(&w.table),
        conds.join(" AND ")
    );
    let row = r
        .pg()
        .query_typed_one(&sql, &crate::exec::typed(params))
        .await
        .map_err(Error::pg(format!(
            "{}: the rows before the write",
            p.pattern.id
        )))?;
    Ok(row.get(0))
}

/// The columns an `INSERT … ON CONFLICT` conflicts on (its target, else the primary key), each
/// with the statement's value for it; empty for other statements.
fn conflict_columns(r: &Replayer<'_>, p: &Prepared<'_>) -> Vec<(String, String)> {
    let Some(w) = p.pattern.analysis.write.as_ref() else {
        return Vec::new();
    };
    if !w.on_conflict && w.conflict.is_none() {
        return Vec::new();
    }
    let named = w
        .conflict
        .as_ref()
        .map(|c| c.columns.clone())
        .unwrap_or_default();
    let columns = if named.is_empty() {
        r.plan
            .schema
            .table(&w.table)
            .map(|t| t.primary_key.clone())
            .unwrap_or_default()
    } else {
        named
    };
    columns
        .into_iter()
        .filter_map(|c| {
            let v = w.values.iter().find(|v| v.column == c)?;
            Some((c, clocked(&v.sql)))
        })
        .collect()
}

/// For an upsert: the row its conflict key finds, as conditions on `t`.
fn conflict_conditions(r: &Replayer<'_>, p: &Prepared<'_>) -> Vec<String> {
    conflict_columns(r, p)
        .iter()
        .map(|(c, v)| format!("t.{} = ({v})", quote(c)))
        .collect()
}

/// For an upsert: sample `params` again with the values of `other` except those of its conflict
/// key, so the second write meets the row the first wrote (or met) with other values.
fn conflicting(r: &Replayer<'_>, p: &Prepared<'_>, params: &Params, other: &Params) -> Params {
    let key: Vec<String> = conflict_columns(r, p).into_iter().map(|(_, v)| v).collect();
    let mut out = other.clone();
    for k in 0..params.values.len().min(other.values.len()) {
        let placeholder = format!("${}", k + 1);
        if key.iter().any(|v| v.trim() == placeholder) {
            out.values[k] = params.values[k].clone();
            out.text[k] = params.text[k].clone();
        }
    }
    out
}

/// The reads of `table` that can be replayed: they run again after each write of it.
async fn affected_reads<'p>(r: &Replayer<'p>, table: &str) -> Vec<Affected<'p>> {
    let plan = r.plan;
    let mut out = Vec::new();
    for q in &plan.design.queries {
        let Some(rp) = plan.workload.pattern(&q.pattern) else {
            continue;
        };
        // A read whose rows hold the written table's rows folded in reads them too.
        let link = plan
            .design
            .loops
            .iter()
            .filter(|d| d.choice == remodel_model::LoopChoice::Folded)
            .filter(|d| d.pattern.as_deref() == Some(q.pattern.as_str()))
            .filter_map(|d| d.lookup.as_ref())
            .find(|l| l.child_column.table == table)
            .map(|l| (l.child_column.clone(), l.parent_column.clone()));
        let reads = rp.analysis.tables.iter().any(|t| t == table);
        if q.one_off || q.cql.is_none() || !(reads || link.is_some()) {
            continue;
        }
        if let Ok(prep) = r.prepare(&q.pattern).await {
            if sample::roles(&prep, &plan.schema).is_ok() {
                out.push(Affected {
                    read: prep,
                    link: link.filter(|_| !reads),
                });
            }
        }
    }
    out
}

/// A read a write affects.
struct Affected<'p> {
    read: Prepared<'p>,
    /// Set when the read holds the written rows folded into its own ([`Focus::link`]).
    link: Option<(ColumnRef, ColumnRef)>,
}

/// Where the reads after a write look: the rows as the write left them, and as they were.
fn focuses(
    table: &str,
    kind: StatementKind,
    after: &[String],
    before: Option<String>,
) -> Vec<Focus> {
    let json = |rows: &[String]| format!("[{}]", rows.join(","));
    let mut out = Vec::new();
    if kind != StatementKind::Delete && !after.is_empty() {
        out.push(Focus {
            table: table.to_string(),
            rows: json(after),
            before: false,
            link: None,
        });
    }
    let old = match kind {
        StatementKind::Delete => Some(json(after)),
        _ => before,
    };
    if let Some(rows) = old.filter(|o| o != "[]") {
        out.push(Focus {
            table: table.to_string(),
            rows,
            before: true,
            link: None,
        });
    }
    out
}

/// Runs each affected read once per focus, anchored on the written rows; differences are
/// recorded on `out` with the write that preceded them.
async fn reads_after(
    r: &mut Replayer<'_>,
    reads: &[Affected<'_>],
    focuses: &[Focus],
    (write, write_params): (&Prepared<'_>, &Params),
    seed: u64,
    out: &mut PatternReplay,
) {
    let after = format!("{} with {}", write.pattern.id, write_params.show());
    let after = after.as_str();
    let schema = &r.plan.schema;
    // The rows before and after often draw the same parameters: each set runs once.
    let mut seen: Vec<(String, String)> = Vec::new();
    for a in reads {
        let (rp, id) = (&a.read, &a.read.pattern.id);
        for (k, focus) in focuses.iter().enumerate() {
            let focus = Focus {
                link: a.link.clone(),
                ..focus.clone()
            };
            let drawn = sample::draw(r.pg(), rp, schema, 1, seed + k as u64, Some(&focus)).await;
            let drawn = match drawn {
                Ok(d) => d,
                Err(e) => {
                    let why = format!("failed to draw parameters on the written rows: {e}");
                    out.mismatches
                        .push(failed(id, &Params::default(), Some(after), why));
                    continue;
                }
            };
            for mut params in drawn {
                sample::from_write(rp, &mut params, write, write_params);
                let params = &params;
                let key = (id.clone(), params.show());
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                out.reads_after += 1;
                match r.check_read(rp, params).await {
                    Err(Error::SourceRefused(_)) => {}
                    Ok(c) => {
                        out.rows += c.sql.returned as u64;
                        out.folded_rows += c.folded_rows;
                        out.mismatches.extend(mismatch(id, params, Some(after), &c));
                    }
                    Err(e) => {
                        if let Ok(reason) = failure(e) {
                            let reason = format!("failed: {reason}");
                            out.mismatches.push(failed(id, params, Some(after), reason));
                        }
                    }
                }
            }
        }
    }
}

/// One write of a sample: what it needs besides its parameters.
struct Sample<'s, 'p> {
    p: &'s Prepared<'p>,
    w: &'s remodel_model::WritePath,
    table: &'s str,
    reads: &'s [Affected<'p>],
    seed: u64,
}

/// Runs one write on both sides and the reads it affects; `Err` is the pattern's outcome when it
/// cannot be replayed.
async fn write_sample(
    r: &mut Replayer<'_>,
    s: &Sample<'_, '_>,
    params: &Params,
    out: &mut PatternReplay,
    t: &mut Timings,
) -> Result<(), PatternReplay> {
    let (id, kind) = (s.p.pattern.id.as_str(), s.p.pattern.kind);
    let before = rows_before(r, s.p, params)
        .await
        .map_err(|e| skipped(id, kind, ReplayOutcome::NotReplayed, e.to_string()))?;
    let on_pg = match r.write_pg(s.p, params).await {
        Ok(w) => w,
        Err(e) => {
            out.refused += 1;
            out.refused_because.get_or_insert_with(|| e.to_string());
            return Ok(());
        }
    };
    out.samples += 1;
    t.pg_ms.push(ms(on_pg.elapsed));
    match r.write_cql(s.p, s.w, params, &on_pg).await {
        Ok(c) => {
            t.cql_ms.push(ms(c.elapsed));
            if !r.is_external() {
                t.partitions.push(c.reads.partitions as f64);
            }
        }
        Err(e) => match failure(e) {
            Err(why) => return Err(skipped(id, kind, ReplayOutcome::NotReplayed, why)),
            Ok(reason) => {
                let reason = format!("the write path failed (rolled back on Postgres): {reason}");
                out.mismatches.push(failed(id, params, None, reason));
            }
        },
    }
    let focus = focuses(s.table, kind, &on_pg.json, before);
    reads_after(r, s.reads, &focus, (s.p, params), s.seed, out).await;
    Ok(())
}

async fn replay_write(r: &mut Replayer<'_>, id: &str, samples: usize, seed: u64) -> PatternReplay {
    let plan = r.plan;
    let Some(p) = plan.workload.pattern(id) else {
        return skipped(
            id,
            StatementKind::Update,
            ReplayOutcome::NotReplayed,
            "no pattern".into(),
        );
    };
    let kind = p.kind;
    let (Some(w), Some(table)) = (
        plan.design.writes.iter().find(|w| w.pattern == id),
        p.analysis.write.as_ref().map(|i| i.table.clone()),
    ) else {
        return skipped(id, kind, ReplayOutcome::NotReplayed, "no write path".into());
    };
    if let Some(why) = &w.unsupported {
        return skipped(id, kind, ReplayOutcome::Exception, why.clone());
    }
    let (p, params) = match prepared_samples(r, id, samples, seed).await {
        Ok(v) => v,
        Err(why) => return skipped(id, kind, ReplayOutcome::NotReplayed, why),
    };
    let reads = affected_reads(r, &table).await;
    let mut out = PatternReplay {
        pattern: id.to_string(),
        kind: Some(kind),
        plan_partitions: Some(w.reads_before_write),
        ..PatternReplay::default()
    };
    let mut t = Timings::default();
    let upsert = !conflict_columns(r, &p).is_empty();
    for (n, sample) in params.iter().enumerate() {
        let s = seed.wrapping_add(n as u64 * 31);
        let mut runs = vec![sample.clone()];
        if upsert {
            // The same conflict key again, with the next sample's other values: the second write
            // meets the row the first one wrote (or met).
            runs.push(conflicting(r, &p, sample, &params[(n + 1) % params.len()]));
        }
        for (k, run) in runs.iter().enumerate() {
            let sample = Sample {
                p: &p,
                w,
                table: &table,
                reads: &reads,
                seed: s.wrapping_add(k as u64 * 7),
            };
            if let Err(skip) = write_sample(r, &sample, run, &mut out, &mut t).await {
                return skip;
            }
        }
    }
    t.finish(&mut out);
    if out.samples == 0 {
        let why = out.refused_because.take().unwrap_or_default();
        return skipped(
            id,
            kind,
            ReplayOutcome::NotReplayed,
            format!("Postgres refused every write: {why}"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let l = latency(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((l.p50_ms, l.p99_ms), (3.0, 5.0));
        assert_eq!(latency(&[]).p50_ms, 0.0);
    }
}
