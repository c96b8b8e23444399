//! `verify`: per target table, the rows the source says it must hold against the rows it holds
//! (a parallel token-range count), and a sample of source rows each looked up by the *target's*
//! primary key computed from the source row and compared column by column. Source and target
//! keys differ in a query-first design; a validator that joins on the source key cannot check it.
//!
//! The comparison does not trust the backfill's converters: each column is compared in the
//! canonical text of [`canon`], Postgres rendering the source value in SQL and verify rendering
//! what Cassandra holds, so a conversion bug (a day off, a decimal's scale) shows as a mismatch
//! even though the lookup key was computed by the same converters (a key they got wrong finds no
//! row, or a row whose key columns differ from Postgres' rendering).

mod canon;

use crate::convert::RawValue;
use crate::cql::{classify, consistency_not_reached, Class, CqlTarget, RetryCounter};
use crate::pg::{PgSource, ReadShape};
use crate::rows::{convert_row, row_key, row_size, show, show_opt, Row, MAX_ROW_BYTES};
use crate::run::read_rejects;
use crate::target::TargetTable;
use crate::time;
use crate::Error;
use futures_util::{stream, StreamExt};
use remodel_model::{ConsistencyLevel, Mismatch, Plan, TableVerify, VerifyReport};
use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, MaybeUnset};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::Client;

/// How to verify.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Target tables to check (empty: all of the plan).
    pub tables: Vec<String>,
    /// Source rows sampled per table.
    pub sample: usize,
    /// Requests in flight (counts and lookups).
    pub parallelism: usize,
    /// Token ranges the stored count is split into.
    pub token_ranges: usize,
    /// A backfill run folder whose rejects (rows that cannot be stored) are subtracted.
    pub run_dir: Option<PathBuf>,
    /// Client-side timeout of one request.
    pub request_timeout: Duration,
    /// How long one read is retried (a timeout, a node down) before verify gives up.
    pub retry_for: Duration,
    /// The consistency level of every read; `None`: the plan's reads' level.
    pub consistency: Option<ConsistencyLevel>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            tables: Vec::new(),
            sample: 1000,
            parallelism: 16,
            token_ranges: 256,
            run_dir: None,
            request_timeout: Duration::from_secs(30),
            retry_for: Duration::from_secs(60),
            consistency: None,
        }
    }
}

/// Verifies the tables of `plan`; `notify` hears what is being done. The report is what
/// `verify.json` holds ([`crate::run::save_verify`]).
pub async fn verify(
    plan: &Plan,
    source: &PgSource,
    target: &CqlTarget,
    opts: &VerifyOptions,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<VerifyReport, Error> {
    let started = time::now_secs();
    let tables = TargetTable::from_plan(plan, &opts.tables)?;
    let rejects = match &opts.run_dir {
        Some(dir) => read_rejects(dir)?,
        None => Default::default(),
    };
    let client = source.connect().await?;
    // Counts and sample from one snapshot, so they agree with each other.
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(|e| source.failed("begin", e))?;
    let session = target.connect(2, opts.request_timeout).await?;
    let level = opts
        .consistency
        .unwrap_or_else(|| crate::cql::plan_read_level(plan));
    notify(&format!(
        "reading the target at consistency {}",
        level.cql_name()
    ));
    let reads = Reads {
        session: &session,
        target,
        level: crate::cql::consistency_of(level),
        retry_for: opts.retry_for,
        retries: RetryCounter::default(),
        failing: AtomicBool::new(false),
        notify,
    };
    let mut out = Vec::with_capacity(tables.len());
    for t in &tables {
        let shape = source.describe(&client, t).await?;
        notify(&format!("{}: counting source rows", t.name));
        let (source_rows, null_key_rows, expired_rows) =
            source_counts(source, &client, t, &shape).await?;
        notify(&format!(
            "{}: counting stored rows over {} token ranges",
            t.name, opts.token_ranges
        ));
        let stored = stored_count(&reads, t, opts).await?;
        let rejected_rows = rejects.get(&t.name).map_or(0, |v| {
            v.iter().filter(|r| r.kind != "null_key").count() as u64
        });
        let mut verdict = TableVerify {
            name: t.name.clone(),
            source_rows,
            null_key_rows,
            rejected_rows,
            expired_rows,
            expected: source_rows.saturating_sub(null_key_rows + rejected_rows + expired_rows),
            stored,
            ..TableVerify::default()
        };
        if opts.sample > 0 {
            notify(&format!(
                "{}: comparing {} sampled rows",
                t.name, opts.sample
            ));
            // The rows the run rejected (too large, refused) are not expected in the target.
            let rejected: HashSet<&BTreeMap<String, String>> = rejects
                .get(&t.name)
                .map(|v| v.iter().map(|r| &r.source_key).collect())
                .unwrap_or_default();
            let cells = SampleCells {
                source,
                client: &client,
                reads: &reads,
                rejected: &rejected,
            };
            sample(&cells, t, &shape, opts, &mut verdict).await?;
        }
        out.push(verdict);
    }
    Ok(VerifyReport {
        verified_at: Some(time::format_rfc3339(started)),
        sample: opts.sample as u64,
        consistency: Some(level.cql_name().to_string()),
        retries: reads.retries.total(),
        tables: out,
    })
}

async fn source_counts(
    source: &PgSource,
    client: &Client,
    t: &TargetTable,
    shape: &ReadShape,
) -> Result<(u64, u64, u64), Error> {
    let sql = shape.count_sql(t);
    let row = client
        .query_one(&sql, &[])
        .await
        .map_err(|e| source.failed(format!("count the source rows of {}", t.name), e))?;
    let (all, null, expired): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    Ok((all as u64, null as u64, expired as u64))
}

/// `(lo, hi]` token ranges covering the Murmur3 ring.
fn token_ranges(n: usize) -> Vec<(i64, i64)> {
    let n = n.max(1) as i128;
    let (min, max) = (i64::MIN as i128, i64::MAX as i128);
    let step = (max - min) / n;
    (0..n)
        .map(|i| {
            let lo = min + i * step;
            let hi = if i == n - 1 { max } else { lo + step };
            (lo as i64, hi as i64)
        })
        .collect()
}

async fn stored_count(
    reads: &Reads<'_>,
    t: &TargetTable,
    opts: &VerifyOptions,
) -> Result<u64, Error> {
    let stmt = reads.prepare(&t.count_range_cql()).await?;
    let counts = stream::iter(token_ranges(opts.token_ranges))
        .map(|(lo, hi)| count_range(reads, &stmt, lo, hi))
        .buffer_unordered(opts.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;
    counts.into_iter().sum()
}

async fn count_range(
    reads: &Reads<'_>,
    stmt: &PreparedStatement,
    lo: i64,
    hi: i64,
) -> Result<u64, Error> {
    let what = format!("count the rows of token range ({lo}, {hi}]");
    let result = reads
        .run(&what, || reads.session.execute_unpaged(stmt, (lo, hi)))
        .await?;
    let target = reads.target;
    let rows = result
        .into_rows_result()
        .map_err(|e| target.failed(&what, e))?;
    let (n,): (i64,) = rows.single_row().map_err(|e| target.failed(&what, e))?;
    Ok(n as u64)
}

/// The target's reads: at one consistency level, each retried with growing pauses on a timeout
/// or a node down (verify runs on a live cluster: neither may read as a mismatch), for at most
/// `retry_for`.
struct Reads<'a> {
    session: &'a Session,
    target: &'a CqlTarget,
    level: scylla::statement::Consistency,
    retry_for: Duration,
    retries: RetryCounter,
    /// True while reads fail (one line per outage, not one per read).
    failing: AtomicBool,
    notify: &'a (dyn Fn(&str) + Sync),
}

impl Reads<'_> {
    /// `cql` prepared at the verify's level.
    async fn prepare(&self, cql: &str) -> Result<PreparedStatement, Error> {
        let mut stmt = self.target.prepare(self.session, cql).await?;
        stmt.set_consistency(self.level);
        Ok(stmt)
    }

    /// Runs a read, retrying a retryable failure with pauses of 0.2 s doubling up to 5 s.
    async fn run<F, Fut>(&self, what: &str, mut attempt: F) -> Result<QueryResult, Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<QueryResult, ExecutionError>>,
    {
        let started = Instant::now();
        let mut pause = Duration::from_millis(200);
        loop {
            let e = match attempt().await {
                Ok(r) => {
                    if self.failing.swap(false, Ordering::Relaxed) {
                        (self.notify)("Cassandra answers again");
                    }
                    return Ok(r);
                }
                Err(e) => e,
            };
            if classify(&e) != Class::Retry || started.elapsed() + pause > self.retry_for {
                let why = if consistency_not_reached(&e) {
                    format!(
                        "not readable at consistency {} (after {} s of retries): {}",
                        crate::cql::level_name(self.level),
                        started.elapsed().as_secs(),
                        remodel_conn::one_line(&e.to_string())
                    )
                } else {
                    remodel_conn::one_line(&e.to_string())
                };
                return Err(self.target.failed(what, why));
            }
            self.retries.count(crate::cql::cause(&e));
            if !self.failing.swap(true, Ordering::Relaxed) {
                (self.notify)(&format!(
                    "Cassandra: {}; retrying with back-off for up to {} s",
                    remodel_conn::one_line(&e.to_string()),
                    self.retry_for.as_secs()
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(5));
        }
    }
}

/// What sampling a table reads from and compares against.
struct SampleCells<'a> {
    source: &'a PgSource,
    client: &'a Client,
    reads: &'a Reads<'a>,
    /// Source keys of the rows the run rejected.
    rejected: &'a HashSet<&'a BTreeMap<String, String>>,
}

/// Reads a sample of source rows and looks each up in the target; a row that cannot be stored
/// (a value CQL cannot hold, over the request limit, or rejected by the run) is counted, not
/// looked up.
async fn sample(
    cells: &SampleCells<'_>,
    t: &TargetTable,
    shape: &ReadShape,
    opts: &VerifyOptions,
    verdict: &mut TableVerify,
) -> Result<(), Error> {
    let SampleCells {
        source,
        client,
        reads,
        rejected,
    } = *cells;
    let (_, driving_rows) = source.page_ranges(client, t, u64::MAX).await?;
    let canon_sql: Vec<Option<String>> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, col)| canon::sql(&format!("v.c{i}"), &shape.types[i], &col.cql))
        .collect();
    let sql = sample_with_canon(t, shape, &canon_sql, opts.sample, driving_rows);
    let rows = client
        .query(&sql, &[])
        .await
        .map_err(|e| source.failed(format!("sample the source rows of {}", t.name), e))?;
    let n = t.columns.len();
    let mut converted = Vec::with_capacity(rows.len());
    for row in &rows {
        let raw = (0..n)
            .map(|i| row.try_get::<_, RawValue<'_>>(i))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| source.failed(format!("decode a sampled row of {}", t.name), e))?;
        let texts = (0..n)
            .map(|i| match canon_sql[i] {
                Some(_) => row.try_get::<_, Option<String>>(n + i).map(Canonical::Text),
                None => Ok(Canonical::None),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| source.failed(format!("decode a sampled row of {}", t.name), e))?;
        match convert_row(t, &shape.kinds, &raw) {
            Ok(r) if row_size(&r) <= MAX_ROW_BYTES && !was_rejected(rejected, t, &r) => {
                converted.push(Sampled { row: r, texts })
            }
            _ => verdict.sample_unstorable += 1,
        }
    }
    verdict.sampled = converted.len() as u64;
    let stmt = reads.prepare(&t.select_by_key_cql()).await?;
    let found = stream::iter(converted)
        .map(|sampled| lookup(reads, &stmt, t, sampled))
        .buffer_unordered(opts.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;
    for f in found {
        verdict.mismatches.extend(f?);
    }
    Ok(())
}

/// A source column's canonical form as Postgres rendered it.
enum Canonical {
    /// The text ([`canon::sql`]), `None` for SQL NULL.
    Text(Option<String>),
    /// The mapping has no canonical form: the converted value is compared.
    None,
}

/// One sampled source row: converted by the backfill's converters (for its target key) and its
/// canonical form per column.
struct Sampled {
    row: Row,
    texts: Vec<Canonical>,
}

/// The sample query of `t` with, after the target columns `c0…`, each column's canonical form
/// computed by Postgres (`canon_sql`, over the `v.cN` columns; NULL where there is none).
fn sample_with_canon(
    t: &TargetTable,
    shape: &ReadShape,
    canon_sql: &[Option<String>],
    n: usize,
    driving_rows: f64,
) -> String {
    let names: Vec<String> = (0..t.columns.len()).map(|i| format!("c{i}")).collect();
    let canon: Vec<&str> = canon_sql
        .iter()
        .map(|c| c.as_deref().unwrap_or("NULL::text"))
        .collect();
    format!(
        "SELECT v.*, {} FROM ({}) AS v({})",
        canon.join(", "),
        shape.sample_sql(t, n, driving_rows),
        names.join(", ")
    )
}

/// True when the run's rejects name this row's source key.
fn was_rejected(rejected: &HashSet<&BTreeMap<String, String>>, t: &TargetTable, r: &Row) -> bool {
    if rejected.is_empty() {
        return false;
    }
    let key: BTreeMap<String, String> = row_key(t, r).into_iter().collect();
    rejected.contains(&key)
}

/// Reads the row with `expected`'s primary key and lists how it differs.
async fn lookup(
    reads: &Reads<'_>,
    stmt: &PreparedStatement,
    t: &TargetTable,
    sampled: Sampled,
) -> Result<Vec<Mismatch>, Error> {
    let expected = &sampled.row;
    let key_values: Vec<&MaybeUnset<CqlValue>> = t.primary_key().map(|i| &expected[i]).collect();
    let key: Vec<(String, String)> = t
        .primary_key()
        .map(|i| (t.columns[i].name.clone(), show_opt(set(&expected[i]))))
        .collect();
    let what = format!("read back a row of {}", t.name);
    let result = reads
        .run(&what, || reads.session.execute_unpaged(stmt, &key_values))
        .await?;
    let target = reads.target;
    let rows = result
        .into_rows_result()
        .map_err(|e| target.failed(&what, e))?;
    let stored: Option<scylla::value::Row> = rows
        .maybe_first_row()
        .map_err(|e| target.failed(&what, e))?;
    Ok(compare(t, &key, &sampled, stored))
}

fn set(v: &MaybeUnset<CqlValue>) -> Option<&CqlValue> {
    match v {
        MaybeUnset::Set(v) => Some(v),
        MaybeUnset::Unset => None,
    }
}

fn compare(
    t: &TargetTable,
    key: &[(String, String)],
    sampled: &Sampled,
    stored: Option<scylla::value::Row>,
) -> Vec<Mismatch> {
    let Some(stored) = stored else {
        return vec![Mismatch {
            key: key.to_vec(),
            column: None,
            source: "a row".into(),
            target: "no row with this key".into(),
        }];
    };
    let mut out = Vec::new();
    for (i, col) in t.columns.iter().enumerate() {
        let have = stored.columns.get(i).and_then(Option::as_ref);
        let differs = match &sampled.texts[i] {
            // Postgres' own rendering of the source against what Cassandra holds.
            Canonical::Text(text) => {
                let want = canon::from_postgres(text.as_deref(), &col.cql);
                let got = canon::render(have, &col.cql);
                match want {
                    Ok(want) if want == got => None,
                    Ok(want) => Some((json_text(&want), json_text(&got))),
                    Err(e) => Some((e, json_text(&got))),
                }
            }
            // No independent reading of this mapping: the converted value.
            Canonical::None => {
                let want = set(&sampled.row[i]);
                (!same_value(want, have))
                    .then(|| (show_opt(want), have.map_or_else(|| "NULL".into(), show)))
            }
        };
        if let Some((source, target)) = differs {
            out.push(Mismatch {
                key: key.to_vec(),
                column: Some(col.name.clone()),
                source,
                target,
            });
        }
    }
    out
}

/// A canonical value as shown in a mismatch: a string bare, NULL, anything else as JSON.
fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "NULL".into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Equality as CQL stores values: an empty collection is no value, maps and sets compare
/// without regard to order, floats by bits (NaN equals NaN), UDTs by their fields.
pub fn same_value(a: Option<&CqlValue>, b: Option<&CqlValue>) -> bool {
    match (normalize(a), normalize(b)) {
        (None, None) => true,
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn normalize(v: Option<&CqlValue>) -> Option<CqlValue> {
    let v = v?;
    let n = norm(v);
    match &n {
        CqlValue::List(l) | CqlValue::Set(l) if l.is_empty() => None,
        CqlValue::Map(m) if m.is_empty() => None,
        _ => Some(n),
    }
}

fn norm(v: &CqlValue) -> CqlValue {
    let sorted = |mut items: Vec<CqlValue>| {
        items.sort_by_cached_key(|x| format!("{x:?}"));
        items
    };
    match v {
        CqlValue::Float(f) => CqlValue::Int(f.to_bits() as i32),
        CqlValue::Double(f) => CqlValue::BigInt(f.to_bits() as i64),
        CqlValue::List(l) => CqlValue::List(l.iter().map(norm).collect()),
        CqlValue::Set(l) => CqlValue::Set(sorted(l.iter().map(norm).collect())),
        CqlValue::Map(m) => {
            let mut entries: Vec<(CqlValue, CqlValue)> =
                m.iter().map(|(k, v)| (norm(k), norm(v))).collect();
            entries.sort_by_cached_key(|(k, _)| format!("{k:?}"));
            CqlValue::Map(entries)
        }
        CqlValue::UserDefinedType { fields, .. } => {
            CqlValue::Tuple(fields.iter().map(|(_, f)| f.as_ref().map(norm)).collect())
        }
        CqlValue::Tuple(items) => {
            CqlValue::Tuple(items.iter().map(|x| x.as_ref().map(norm)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ranges_cover_the_ring() {
        let r = token_ranges(4);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].0, i64::MIN);
        assert_eq!(r[3].1, i64::MAX);
        for w in r.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
    }

    #[test]
    fn equality_follows_cql_storage() {
        let empty = CqlValue::List(vec![]);
        assert!(same_value(Some(&empty), None));
        let nan = CqlValue::Double(f64::NAN);
        assert!(same_value(Some(&nan), Some(&nan)));
        let m1 = CqlValue::Map(vec![
            (CqlValue::Int(2), CqlValue::Text("b".into())),
            (CqlValue::Int(1), CqlValue::Text("a".into())),
        ]);
        let m2 = CqlValue::Map(vec![
            (CqlValue::Int(1), CqlValue::Text("a".into())),
            (CqlValue::Int(2), CqlValue::Text("b".into())),
        ]);
        assert!(same_value(Some(&m1), Some(&m2)));
        let l1 = CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(2)]);
        let l2 = CqlValue::List(vec![CqlValue::Int(2), CqlValue::Int(1)]);
        assert!(!same_value(Some(&l1), Some(&l2)));
        assert!(!same_value(Some(&CqlValue::Int(1)), None));
    }
}
