//! The Postgres side: connections, one exported snapshot shared by every reader, the driving
//! table cut into ctid page ranges, and each range streamed with `COPY (…) TO STDOUT (FORMAT
//! binary)`.
//!
//! Why ctid ranges rather than primary-key quantiles: a TID Range Scan (Postgres 14+) reads
//! exactly its pages in physical order, needs no index and no quantile query over the whole key
//! (which would scan it once more), and splits tables of any key type evenly. Page ranges are
//! cut from the table's size, the last one open-ended, so rows that land in new pages are read
//! too; on a partitioned table the same page range applies to each leaf, which still covers
//! every row exactly once.

use crate::convert::{canonical_cast, PgKind};
use crate::target::{TargetColumn, TargetTable};
use crate::Error;
use remodel_model::ident::{literal, quote};
use remodel_model::SourceEdit;
use serde::{Deserialize, Serialize};
use tokio_postgres::binary_copy::BinaryCopyOutStream;
use tokio_postgres::types::Type;
use tokio_postgres::Client;

/// A Postgres error as one line (shared with the catalog reader).
pub use remodel_conn::message as pg_message;
/// The connection string without its passwords, for messages (shared with the catalog reader).
use remodel_conn::redact_url;

/// A Postgres database to read from; the URL's password stays in here and is never printed.
#[derive(Clone)]
pub struct PgSource {
    url: String,
    /// The password when the URL has none (the caller's `PGPASSWORD`, as libpq takes it).
    password: Option<String>,
    /// The URL without its password, for messages and the run folder.
    pub display: String,
}

impl std::fmt::Debug for PgSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgSource")
            .field("display", &self.display)
            .finish()
    }
}

/// Settings every connection gets: UTC for the JSON that embeds timestamps, a name that shows in
/// `pg_stat_activity`, room to sort one range in memory.
const SESSION_SETUP: &str = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; \
     SET application_name = 'remodel'; SET statement_timeout = 0; SET work_mem = '64MB'";

impl PgSource {
    /// A source at `url` (`postgres://user:password@host:port/db`, key=value form also accepted).
    pub fn new(url: &str) -> PgSource {
        PgSource {
            url: url.to_string(),
            password: None,
            display: redact_url(url),
        }
    }

    /// Reads the URL without connecting: one that is no connection string is refused before
    /// anything runs (the error names the source by its redacted form only).
    pub fn check(&self) -> Result<(), Error> {
        remodel_conn::check(&self.url).map_err(|e| Error::Postgres {
            target: self.display.clone(),
            what: e.what,
            message: e.message,
        })
    }

    /// The password to use when the URL has none (as libpq uses `PGPASSWORD`).
    pub fn with_password(mut self, password: Option<String>) -> PgSource {
        self.password = password;
        self
    }

    /// The connection string for a libpq connection of another kind (`remodel sync`'s
    /// replication connection, with `replication=database` added): it holds the password, so it
    /// is handed to libpq and never printed; a password from `PGPASSWORD` libpq reads itself.
    pub fn replication_conninfo(&self) -> String {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{sep}replication=database", self.url)
    }

    fn error(&self, what: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> Error {
        let target = self.display.clone();
        let what = what.into();
        move |e| Error::Postgres {
            target,
            what,
            message: pg_message(&e),
        }
    }

    /// Connects (TLS as the URL's `sslmode` says, see [`remodel_conn::pg`]), drives the
    /// connection on the current runtime and applies the session settings.
    pub async fn connect(&self) -> Result<Client, Error> {
        let client = remodel_conn::connect(&self.url, self.password.as_deref())
            .await
            .map_err(|e| Error::Postgres {
                target: self.display.clone(),
                what: e.what,
                message: e.message,
            })?;
        client
            .batch_execute(SESSION_SETUP)
            .await
            .map_err(self.error("session settings"))?;
        Ok(client)
    }

    /// Opens the leader transaction and exports its snapshot for the readers to share.
    pub async fn export_snapshot(&self) -> Result<Snapshot, Error> {
        let client = self.connect().await?;
        client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await
            .map_err(self.error("begin the snapshot transaction"))?;
        let row = client
            .query_one(
                "SELECT pg_export_snapshot(), \
                 (extract(epoch FROM transaction_timestamp()) * 1000000)::int8",
                &[],
            )
            .await
            .map_err(self.error("pg_export_snapshot()"))?;
        Ok(Snapshot {
            id: row.get(0),
            micros: row.get(1),
            client,
        })
    }

    /// Opens the leader transaction inside a snapshot exported elsewhere (`remodel sync`: the one a
    /// logical replication slot exported when it was created, so the copy and the slot's changes
    /// meet at one point); the readers import the same id.
    pub async fn import_snapshot(&self, id: &str) -> Result<Snapshot, Error> {
        let client = self.reader(id).await?;
        let row = client
            .query_one(
                "SELECT (extract(epoch FROM transaction_timestamp()) * 1000000)::int8",
                &[],
            )
            .await
            .map_err(self.error(format!("import snapshot {id}")))?;
        Ok(Snapshot {
            id: id.to_string(),
            micros: row.get(0),
            client,
        })
    }

    /// A reader connection inside the exported snapshot `id`.
    pub async fn reader(&self, id: &str) -> Result<Client, Error> {
        let client = self.connect().await?;
        client
            .batch_execute(&format!(
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT {}",
                literal(id)
            ))
            .await
            .map_err(self.error(format!("import snapshot {id}")))?;
        Ok(client)
    }

    /// Describes how `table`'s rows are read (see [`ReadShape`]).
    pub async fn describe(&self, client: &Client, table: &TargetTable) -> Result<ReadShape, Error> {
        let stmt = client
            .prepare(&table.source_sql)
            .await
            .map_err(self.error(format!("prepare the source_sql of {}", table.name)))?;
        let source: Vec<(&str, &Type)> = stmt
            .columns()
            .iter()
            .map(|c| (c.name(), c.type_()))
            .collect();
        let mut exprs = Vec::with_capacity(table.columns.len());
        for col in &table.columns {
            let expr = match find_column(&source, &col.name) {
                Some((name, ty)) => {
                    let direct = PgKind::of(ty).is_some_and(|k| k.decodes_to(&col.cql));
                    let expr = format!("s.{}", quote(name));
                    match (direct, canonical_cast(&col.cql)) {
                        (true, _) | (false, None) => expr,
                        (false, Some(cast)) => format!("{expr}::{cast}"),
                    }
                }
                None => bucket_expr(&source, col).ok_or_else(|| {
                    let have: Vec<&str> = source.iter().map(|(n, _)| *n).collect();
                    Error::Source(format!(
                        "the source_sql of {} returns no column `{}` (it returns: {})",
                        table.name,
                        col.name,
                        have.join(", ")
                    ))
                })?,
            };
            exprs.push(expr);
        }
        let select_list = exprs.join(", ");
        let key_nulls: Vec<String> = table
            .primary_key()
            .map(|i| format!("({}) IS NULL", exprs[i]))
            .collect();
        let order_by = (!table.one_row_per_partition()).then(|| {
            let keys: Vec<String> = table
                .partition_key
                .iter()
                .map(|&i| format!("{}", i + 1))
                .collect();
            keys.join(", ")
        });
        let mut shape = ReadShape {
            select_list,
            key_nulls: key_nulls.join(" OR "),
            order_by,
            types: Vec::new(),
            kinds: Vec::new(),
        };
        let probe = shape.sql(table, None);
        let stmt = client
            .prepare(&probe)
            .await
            .map_err(self.error(format!("prepare the read of {}", table.name)))?;
        for (col, c) in table.columns.iter().zip(stmt.columns()) {
            let kind = PgKind::of(c.type_()).filter(|k| k.decodes_to(&col.cql));
            let Some(kind) = kind else {
                return Err(Error::Source(format!(
                    "table {}, column {}: Postgres type {} has no conversion to CQL {}",
                    table.name,
                    col.name,
                    c.type_(),
                    col.cql_text
                )));
            };
            shape.types.push(c.type_().clone());
            shape.kinds.push(kind);
        }
        Ok(shape)
    }

    /// Cuts the driving table of `table` into page ranges of about `rows_per_range` rows each;
    /// one open range when the statement cannot be split.
    pub async fn page_ranges(
        &self,
        client: &Client,
        table: &TargetTable,
        rows_per_range: u64,
    ) -> Result<(Vec<PageRange>, f64), Error> {
        let Some(d) = &table.driving else {
            return Ok((vec![PageRange { lo: 0, hi: None }], table.estimated_rows));
        };
        let row = client
            .query_one(
                // The table itself, or the leaves of a partitioned one (pg_partition_tree
                // lists nothing for a plain table).
                "WITH r AS (SELECT $1::text::regclass AS oid) \
                 SELECT coalesce(max(pg_relation_size(c.oid) / current_setting('block_size')::int8), 0)::int8, \
                        coalesce(sum(c.reltuples) FILTER (WHERE c.reltuples > 0), -1)::float8 \
                 FROM pg_class c \
                 WHERE c.oid IN (SELECT relid FROM pg_partition_tree((SELECT oid FROM r)) WHERE isleaf \
                                 UNION ALL SELECT oid FROM r)",
                &[&d.table],
            )
            .await
            .map_err(self.error(format!("size of {}", d.table)))?;
        let pages: i64 = row.get(0);
        let tuples: f64 = row.get(1);
        // Never analyzed: assume narrow rows (about 60 a page) for the split and the ETA.
        let rows = if tuples >= 0.0 {
            tuples
        } else {
            pages as f64 * 60.0
        };
        Ok((split_pages(pages.max(0) as u64, rows, rows_per_range), rows))
    }

    /// Streams the rows of `range` (all rows when `None`) of `table` in binary.
    pub async fn copy_range(
        &self,
        client: &Client,
        table: &TargetTable,
        shape: &ReadShape,
        range: Option<&PageRange>,
    ) -> Result<BinaryCopyOutStream, Error> {
        let sql = format!(
            "COPY ({}) TO STDOUT (FORMAT binary)",
            shape.sql(table, range)
        );
        let stream = client
            .copy_out(&sql)
            .await
            .map_err(self.error(format!("COPY of {}", table.name)))?;
        Ok(BinaryCopyOutStream::new(stream, &shape.types))
    }

    /// Wraps a driver error of a later step on this source.
    pub fn failed(&self, what: impl Into<String>, source: tokio_postgres::Error) -> Error {
        self.error(what)(source)
    }
}

/// The leader transaction whose snapshot every reader imports; kept open for the whole run.
pub struct Snapshot {
    /// The exported snapshot id.
    pub id: String,
    /// The transaction's start, microseconds since the Unix epoch (a `--write-timestamp` that no
    /// later live write can lose to).
    pub micros: i64,
    /// The leader connection (describe and range planning run here, inside the snapshot).
    pub client: Client,
}

/// Pages `[lo, hi)` of the driving table (`hi` = `None`: to the end, including pages added later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRange {
    /// First page.
    pub lo: u64,
    /// First page after the range; `None` for the last range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<u64>,
}

impl PageRange {
    /// The ctid predicate on the driving table's alias.
    pub fn predicate(&self, alias: &str) -> String {
        let lo = format!("{alias}.ctid >= '({},0)'::tid", self.lo);
        match self.hi {
            Some(hi) => format!("{lo} AND {alias}.ctid < '({hi},0)'::tid"),
            None => lo,
        }
    }
}

impl std::fmt::Display for PageRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.hi {
            Some(hi) => write!(f, "pages [{}, {hi})", self.lo),
            None => write!(f, "pages [{}, end)", self.lo),
        }
    }
}

/// Splits `pages` pages holding about `rows` rows into ranges of about `rows_per_range` rows.
pub fn split_pages(pages: u64, rows: f64, rows_per_range: u64) -> Vec<PageRange> {
    let wanted = (rows / rows_per_range.max(1) as f64).ceil() as u64;
    let count = wanted.clamp(1, pages.max(1));
    let per = pages.div_ceil(count).max(1);
    let mut out = Vec::new();
    let mut lo = 0;
    while lo + per < pages {
        out.push(PageRange {
            lo,
            hi: Some(lo + per),
        });
        lo += per;
    }
    out.push(PageRange { lo, hi: None });
    out
}

/// How one table's rows are selected: the wrapped select list (casts where a column's own type has
/// no direct decoder), the sort that brings a partition's rows together, and the result types.
#[derive(Debug, Clone)]
pub struct ReadShape {
    select_list: String,
    /// True for a row with a NULL key column (such rows are never stored).
    key_nulls: String,
    order_by: Option<String>,
    /// Postgres types of the result columns, in target column order.
    pub types: Vec<Type>,
    /// Their decoders.
    pub kinds: Vec<PgKind>,
}

impl ReadShape {
    /// The SELECT reading `range` (everything when `None`), in target column order.
    pub fn sql(&self, table: &TargetTable, range: Option<&PageRange>) -> String {
        let inner = match (range, &table.driving) {
            (Some(r), Some(d)) => table.source.sql(&SourceEdit {
                predicate: Some(&r.predicate(&d.alias)),
                ..SourceEdit::default()
            }),
            _ => table.source_sql.clone(),
        };
        let order = self
            .order_by
            .as_ref()
            .map(|o| format!(" ORDER BY {o}"))
            .unwrap_or_default();
        format!("SELECT {} FROM ({inner}) s{order}", self.select_list)
    }

    /// The count of all rows, of rows with a NULL key column and of rows already past their
    /// TTL instant (0 for a table whose rows do not expire) (verify).
    pub fn count_sql(&self, table: &TargetTable) -> String {
        let expired = expired_by(table, "now()")
            .map(|c| format!("count(*) FILTER (WHERE {c})"))
            .unwrap_or_else(|| "0::int8".into());
        format!(
            "SELECT count(*), count(*) FILTER (WHERE {}), {expired} FROM ({}) s",
            self.key_nulls, table.source_sql
        )
    }

    /// The SELECT of `n` sampled rows (verify): a TABLESAMPLE of the driving table when it is
    /// large, else a random order over all rows.
    pub fn sample_sql(&self, table: &TargetTable, n: usize, driving_rows: f64) -> String {
        let inner = match &table.driving {
            Some(_) if driving_rows > 20.0 * n as f64 => {
                let pct = (100.0 * 4.0 * n as f64 / driving_rows).clamp(0.001, 100.0);
                table.source.sql(&SourceEdit {
                    sample: Some(&format!("TABLESAMPLE SYSTEM ({pct:.4})")),
                    ..SourceEdit::default()
                })
            }
            _ => table.source_sql.clone(),
        };
        // A row expiring before it is looked up would be missed for no fault: not sampled.
        let live = expired_by(table, "now() + interval '60 seconds'")
            .map(|c| format!(" WHERE NOT ({c})"))
            .unwrap_or_default();
        format!(
            "SELECT {} FROM ({inner}) s{live} ORDER BY random() LIMIT {n}",
            self.select_list
        )
    }
}

/// The condition "this row's TTL instant is at or before `at`" over `s`, for a table whose rows
/// expire (the column kept as a timestamp, or as epoch microseconds).
fn expired_by(table: &TargetTable, at: &str) -> Option<String> {
    let c = &table.columns[table.ttl?];
    let col = format!("s.{}", remodel_model::ident::quote(&c.name));
    Some(match c.cql {
        crate::resolved_type::ResolvedType::Native(crate::resolved_type::Native::BigInt) => {
            format!("{col} <= (extract(epoch FROM {at}) * 1000000)::int8")
        }
        _ => format!("{col} <= {at}"),
    })
}

/// The result column named `name`, exactly (`"Name"` and `name` are two columns).
fn find_column<'a>(source: &[(&'a str, &'a Type)], name: &str) -> Option<(&'a str, &'a Type)> {
    source.iter().find(|(n, _)| *n == name).copied()
}

/// A bucket column the source_sql does not compute itself, computed from its source column as
/// the designer's own source query does (in the key column's zone, UTC by default): `day` a
/// date, `hour`/`month` the unit's first instant.
fn bucket_expr(source: &[(&str, &Type)], col: &TargetColumn) -> Option<String> {
    let (from, bucket) = col.bucket.as_ref()?;
    let (name, ty) = find_column(source, from)?;
    let zone = col.bucket_zone.as_deref();
    let value = format!("s.{}", quote(name));
    Some(match *ty {
        Type::TIMESTAMPTZ => bucket.pg_sql_of(&value, true, zone),
        // A key timestamp the source query already turned into epoch microseconds (exact):
        // back to an instant; the infinities it encodes as the i64 bounds have no bucket.
        Type::INT8 => format!(
            "(CASE WHEN {value} IN ({max}, {min}) THEN NULL ELSE {b} END)",
            b = bucket.pg_sql_of(
                &format!("(timestamptz 'epoch' + {value} * interval '1 microsecond')"),
                true,
                zone
            ),
            max = i64::MAX,
            min = i64::MIN,
        ),
        _ => bucket.pg_sql_of(&value, false, zone),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_split_evenly_and_the_last_range_is_open() {
        assert_eq!(
            split_pages(0, 0.0, 1000),
            vec![PageRange { lo: 0, hi: None }]
        );
        let r = split_pages(100, 10_000.0, 2_500);
        assert_eq!(r.len(), 4);
        assert_eq!(
            r[0],
            PageRange {
                lo: 0,
                hi: Some(25)
            }
        );
        assert_eq!(r[3], PageRange { lo: 75, hi: None });
        // More ranges wanted than pages: one page each.
        assert_eq!(split_pages(3, 1e6, 10).len(), 3);
        assert_eq!(
            PageRange { lo: 4, hi: Some(8) }.predicate("t0"),
            "t0.ctid >= '(4,0)'::tid AND t0.ctid < '(8,0)'::tid"
        );
    }
}
