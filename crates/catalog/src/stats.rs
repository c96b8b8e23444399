//! Statistics from the planner's own: `pg_class.reltuples` and `pg_stats`, into the
//! [`Statistics`] the designer sizes partitions with.
//!
//! Row counts are `reltuples` (a partitioned table: the sum over its leaf partitions). A table
//! the server never analysed (`reltuples` −1) is counted with `count(*)` under the statement
//! timeout instead, and said so; a table without `pg_stats` rows gets a warning (its distinct
//! values and widths fall back to the designer's defaults) naming the `ANALYZE` to run.

use crate::{Error, Source};
use remodel_model::ident::quote;
use remodel_model::{ColumnStats, Diagnostic, Schema, Severity, Statistics, TableStats};
use std::collections::BTreeMap;

/// How many most common values (and their frequencies) are kept per column.
pub const MAX_COMMON_VALUES: usize = 10;

/// Longest most-common value kept, in characters (longer ones are cut with `…`).
const MAX_VALUE_CHARS: usize = 64;

/// What [`read`] returns.
#[derive(Debug, Clone, Default)]
pub struct StatsRead {
    /// The statistics, keyed by the schema's table names.
    pub stats: Statistics,
    /// Tables counted because they were never analysed, tables without column statistics.
    pub diagnostics: Vec<Diagnostic>,
}

/// One table's row count as the catalog has it.
struct Rows {
    nsp: String,
    name: String,
    /// `reltuples`, summed over the leaves of a partitioned table; `None`: never analysed.
    reltuples: Option<f64>,
}

/// Reads the statistics of the tables of `schema` (as [`crate::schema::read`] read it).
pub async fn read(src: &Source, schema: &Schema) -> Result<StatsRead, Error> {
    let mut out = StatsRead::default();
    for r in row_counts(src).await? {
        let name = src.name_of(&r.nsp, &r.name);
        if schema.table(&name).is_none() {
            continue;
        }
        let rows = match r.reltuples {
            Some(n) => n,
            None => match count(src, &r.nsp, &r.name).await? {
                Ok(n) => {
                    out.diagnostics.push(note(format!(
                        "`{name}` was never analysed (reltuples -1): counted {n} rows; run ANALYZE {name} for its column statistics"
                    )));
                    n
                }
                Err(message) => {
                    out.diagnostics.push(warning(format!(
                        "`{name}` was never analysed and counting its rows failed ({message}): it is sized from defaults; run ANALYZE {name}"
                    )));
                    continue;
                }
            },
        };
        out.stats.tables.insert(
            name,
            TableStats {
                rows,
                columns: BTreeMap::new(),
            },
        );
    }
    for (nsp, table, column, stats) in column_stats(src).await? {
        let name = src.name_of(&nsp, &table);
        if let Some(t) = out.stats.tables.get_mut(&name) {
            t.columns.insert(column, stats);
        }
    }
    for (name, t) in &out.stats.tables {
        if t.columns.is_empty() && t.rows > 0.0 {
            out.diagnostics.push(warning(format!(
                "no column statistics for `{name}` ({} rows; ANALYZE never ran on it{}): its distinct values and widths come from defaults; run ANALYZE {name}",
                t.rows,
                if schema.table(name).is_some_and(|t| t.partition_by.is_some()) {
                    ", and autovacuum never analyses a partitioned table itself"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(out)
}

fn note(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Note,
        location: None,
        message,
    }
}

fn warning(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Warning,
        location: None,
        message,
    }
}

async fn row_counts(src: &Source) -> Result<Vec<Rows>, Error> {
    // Since Postgres 14 `reltuples` is -1 until the first VACUUM or ANALYZE; before, 0.
    let rows = src
        .query(
            "SELECT n.nspname::text, c.relname::text, \
                    CASE WHEN c.relkind = 'p' THEN \
                      (SELECT CASE WHEN bool_and(l.reltuples >= 0) THEN sum(l.reltuples)::float8 END \
                       FROM pg_partition_tree(c.oid) t JOIN pg_class l ON l.oid = t.relid \
                       WHERE t.isleaf) \
                    WHEN c.reltuples >= 0 THEN c.reltuples::float8 END \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p') AND NOT c.relispartition \
             ORDER BY c.oid",
            &[&src.schemas()],
            "read the row counts",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Rows {
            nsp: r.get(0),
            name: r.get(1),
            reltuples: r.get(2),
        })
        .collect())
}

/// `count(*)` of a table under the statement timeout: the count, or why it failed.
async fn count(src: &Source, nsp: &str, name: &str) -> Result<Result<f64, String>, Error> {
    let sql = format!(
        "SELECT count(*)::float8 FROM {}.{}",
        quote(nsp),
        quote(name)
    );
    Ok(src
        .bounded(&sql, src.timeout_ms(), "count rows")
        .await?
        .map(|rows| rows.first().map_or(0.0, |r| r.get(0))))
}

async fn column_stats(src: &Source) -> Result<Vec<(String, String, String, ColumnStats)>, Error> {
    // A partitioned table's own statistics are the `inherited` ones (its rows are its
    // partitions'); a plain table's are not (an inheritance parent has both).
    let rows = src
        .query(
            "SELECT s.schemaname::text, s.tablename::text, s.attname::text, \
                    s.null_frac::float8, s.avg_width::float8, \
                    round(s.n_distinct::numeric, 6)::float8, \
                    (s.most_common_vals::text::text[])[1:$2], \
                    (SELECT array_agg(round(f::numeric, 6)::float8 ORDER BY i) \
                     FROM unnest(s.most_common_freqs) WITH ORDINALITY AS u(f, i) WHERE i <= $2), \
                    CASE WHEN a.atttypid IN ('date'::regtype, 'timestamp'::regtype, 'timestamptz'::regtype) \
                          AND s.histogram_bounds IS NOT NULL THEN ( \
                      SELECT CASE WHEN isfinite(b[1]::timestamptz) AND isfinite(b[array_upper(b, 1)]::timestamptz) \
                             THEN round((extract(epoch FROM b[array_upper(b, 1)]::timestamptz - b[1]::timestamptz) / 86400)::numeric, 2)::float8 END \
                      FROM (SELECT s.histogram_bounds::text::text[] AS b) h) END \
             FROM pg_stats s \
             JOIN pg_namespace n ON n.nspname = s.schemaname \
             JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename \
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = s.attname \
             WHERE s.schemaname = ANY($1) AND s.inherited = (c.relkind = 'p') \
             ORDER BY c.oid, a.attnum",
            &[&src.schemas(), &(MAX_COMMON_VALUES as i32)],
            "read pg_stats",
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let vals: Option<Vec<Option<String>>> = r.get(6);
            let freqs: Option<Vec<f64>> = r.get(7);
            let n_distinct: Option<f64> = r.get(5);
            let stats = ColumnStats {
                n_distinct: n_distinct.filter(|n| *n != 0.0),
                avg_width: r.get(4),
                most_common_freqs: freqs.unwrap_or_default(),
                most_common_vals: vals
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| cut(&v.unwrap_or_else(|| "NULL".into())))
                    .collect(),
                null_frac: r.get(3),
                span_days: r.get(8),
            };
            (r.get(0), r.get(1), r.get(2), stats)
        })
        .collect())
}

/// A value cut to [`MAX_VALUE_CHARS`] characters.
fn cut(v: &str) -> String {
    if v.chars().count() <= MAX_VALUE_CHARS {
        return v.to_string();
    }
    let mut s: String = v.chars().take(MAX_VALUE_CHARS - 1).collect();
    s.push('…');
    s
}
