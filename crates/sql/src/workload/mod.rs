//! Query workload ingestion: SQL files with `-- calls: N`, Postgres server logs (stderr with any
//! prefix, syslog, RDS, csvlog, jsonlog) and `pg_stat_statements` CSV exports, plain or `.gz` /
//! `.bz2`, into one [`Workload`] of weighted normalized statements.
//!
//! Logs are streamed line by line; memory grows with the number of distinct statements, not with
//! the size of the input. Content problems never stop a run: they are counted by reason with
//! their first locations (`Workload::skipped`) and described in diagnostics.

mod aggregate;
mod bounded;
mod csv_record;
mod csvlog;
mod jsonlog;
mod message;
mod pglog;
mod pgss;
mod sessions;
mod sqlfile;

pub use crate::error::SqlError;
pub use aggregate::{StatementCount, MAX_PATTERN_TEXT};
pub use sessions::Pooling;

use aggregate::Aggregator;
use remodel_model::{Diagnostic, Location, Severity, Workload};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Input format of a workload file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decide from the content (and the file name).
    Auto,
    /// SQL statements separated by `;`, with optional `-- calls: N`.
    Sql,
    /// Postgres stderr log (any `log_line_prefix`), syslog or RDS variant.
    PgLog,
    /// Postgres csvlog.
    Csvlog,
    /// Postgres jsonlog (also CloudNativePG's wrapped records).
    Jsonlog,
    /// `pg_stat_statements` export as CSV with a header.
    Pgss,
}

impl Format {
    /// The name used on the command line and in [`remodel_model::WorkloadSource::format`].
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Sql => "sql",
            Format::PgLog => "pg-log",
            Format::Csvlog => "csvlog",
            Format::Jsonlog => "jsonlog",
            Format::Pgss => "pgss",
        }
    }
}

/// The result of reading workload files: the model plus what went wrong where.
#[derive(Debug, Clone, Default)]
pub struct WorkloadLoad {
    /// Patterns (DML), utility counts, skipped counts and sources.
    pub workload: Workload,
    /// Warnings about skipped statements (first of each kind) and notes on detected formats.
    pub diagnostics: Vec<Diagnostic>,
    /// Every distinct normalized statement, DML and utility, in first-seen order, with its count.
    pub statements: Vec<StatementCount>,
}

/// Reads workload files in order. Errors only when a file cannot be opened or read; content
/// problems are counted in the result.
pub fn read_files<P: AsRef<Path>>(paths: &[P], format: Format) -> Result<WorkloadLoad, SqlError> {
    read_files_pooled(paths, format, Pooling::Session)
}

/// [`read_files`], with the logs' session ids standing for what `pooling` says (a transaction
/// pooler's backends link statements only inside a transaction).
pub fn read_files_pooled<P: AsRef<Path>>(
    paths: &[P],
    format: Format,
    pooling: Pooling,
) -> Result<WorkloadLoad, SqlError> {
    let mut agg = Aggregator::new();
    agg.pooling(pooling);
    let mut notes = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let name = path.display().to_string();
        let io_err = |source: io::Error| SqlError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        let mut reader = open_reader(file, &name).map_err(io_err)?;
        let fmt = match format {
            Format::Auto => {
                let head = reader.fill_buf().map_err(io_err)?;
                let f = detect(&name, head);
                notes.push(Diagnostic {
                    severity: Severity::Note,
                    location: Some(Location::new(name.clone(), 1, 1)),
                    message: format!("read as {} (auto-detected)", f.name()),
                });
                f
            }
            f => f,
        };
        read_one(reader, &name, fmt, &mut agg).map_err(io_err)?;
    }
    Ok(finish(agg, notes))
}

/// Reads one workload from text in memory (`file` names it in locations).
pub fn read_str(file: &str, text: &str, format: Format) -> WorkloadLoad {
    let mut agg = Aggregator::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let fmt = match format {
        Format::Auto => detect(file, text.as_bytes()),
        f => f,
    };
    // Reading from memory cannot fail.
    let _ = read_one(Box::new(text.as_bytes()), file, fmt, &mut agg);
    finish(agg, Vec::new())
}

/// One statement as the server counted it (`pg_stat_statements` read from a live database).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerStatement<'a> {
    /// The normalized text, with `$n` for each constant.
    pub query: &'a str,
    /// How often it ran.
    pub calls: u64,
    /// Total execution time in milliseconds.
    pub total_ms: Option<f64>,
    /// Rows returned or affected, in total.
    pub rows: Option<u64>,
}

/// Reads statements counted by the server, as a `pg_stat_statements` export is read: `source`
/// names them in the workload's sources (format `pgss`), and each is located at its rank
/// (line N is the N-th statement given).
pub fn read_server_statements<'a>(
    source: &str,
    statements: impl IntoIterator<Item = ServerStatement<'a>>,
) -> WorkloadLoad {
    let mut agg = Aggregator::new();
    agg.begin_file(source, Format::Pgss.name());
    for (i, s) in statements.into_iter().enumerate() {
        agg.add(&aggregate::Occurrence {
            text: s.query,
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            column: 1,
            calls: s.calls,
            total_ms: s.total_ms,
            rows: s.rows,
            normalized_input: true,
            ..Default::default()
        });
    }
    finish(agg, Vec::new())
}

/// What [`retain_patterns`] left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Patterns left out.
    pub patterns: usize,
    /// Their calls, summed.
    pub calls: u64,
}

/// Keeps the patterns `keep` accepts and numbers them again `q1, q2, …` in first-seen order
/// (as reading does), heaviest first; the statements left out leave `statements` too.
pub fn retain_patterns(
    load: &mut WorkloadLoad,
    mut keep: impl FnMut(&remodel_model::AccessPattern) -> bool,
) -> LeftOut {
    let mut left = LeftOut::default();
    let mut dropped: std::collections::HashSet<String> = Default::default();
    load.workload.patterns.retain(|p| {
        let k = keep(p);
        if !k {
            left.patterns += 1;
            left.calls = left.calls.saturating_add(p.calls);
            dropped.insert(p.fingerprint.clone());
        }
        k
    });
    load.statements
        .retain(|s| !dropped.contains(&s.fingerprint));
    let seen: std::collections::HashMap<&str, usize> = load
        .statements
        .iter()
        .enumerate()
        .map(|(i, s)| (s.fingerprint.as_str(), i))
        .collect();
    let rank = |p: &remodel_model::AccessPattern| {
        seen.get(p.fingerprint.as_str())
            .copied()
            .unwrap_or(usize::MAX)
    };
    let mut order: Vec<(usize, usize)> = load
        .workload
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| (rank(p), i))
        .collect();
    order.sort_unstable();
    for (n, (_, i)) in order.iter().enumerate() {
        load.workload.patterns[*i].id = format!("q{}", n + 1);
    }
    load.workload
        .patterns
        .sort_by(|a, b| b.calls.cmp(&a.calls).then(rank(a).cmp(&rank(b))));
    left
}

fn finish(agg: Aggregator, mut notes: Vec<Diagnostic>) -> WorkloadLoad {
    let (workload, diagnostics, statements) = agg.finish();
    notes.extend(diagnostics);
    WorkloadLoad {
        workload,
        diagnostics: notes,
        statements,
    }
}

fn read_one(
    reader: Box<dyn BufRead + '_>,
    name: &str,
    fmt: Format,
    agg: &mut Aggregator,
) -> io::Result<()> {
    agg.begin_file(name, fmt.name());
    match fmt {
        Format::Sql | Format::Auto => sqlfile::read(reader, agg)?,
        Format::PgLog => pglog::read(reader, agg)?,
        Format::Csvlog => csvlog::read(reader, agg)?,
        Format::Jsonlog => jsonlog::read(reader, agg)?,
        Format::Pgss => pgss::read(reader, agg)?,
    }
    Ok(())
}

/// The UTF-8 byte-order mark some Windows tools write at the start of a text file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Wraps a file in a buffered reader, decompressing gzip or bzip2 (by magic bytes) and dropping a
/// UTF-8 byte-order mark, so every format sees its first line as written.
fn open_reader(file: File, name: &str) -> io::Result<Box<dyn BufRead>> {
    let mut r = decompress(file, name)?;
    if r.fill_buf()?.starts_with(BOM) {
        r.consume(BOM.len());
    }
    Ok(r)
}

/// Wraps a file in a buffered reader, decompressing gzip or bzip2 (by magic bytes).
fn decompress(file: File, name: &str) -> io::Result<Box<dyn BufRead>> {
    let mut buf = BufReader::with_capacity(1 << 18, file);
    let head = buf.fill_buf()?;
    let gz = head.starts_with(&[0x1f, 0x8b]) || (head.is_empty() && name.ends_with(".gz"));
    let bz = head.starts_with(b"BZh") || (head.is_empty() && name.ends_with(".bz2"));
    Ok(if gz {
        Box::new(BufReader::with_capacity(
            1 << 18,
            flate2::bufread::MultiGzDecoder::new(buf),
        ))
    } else if bz {
        Box::new(BufReader::with_capacity(
            1 << 18,
            bzip2::bufread::MultiBzDecoder::new(buf),
        ))
    } else {
        Box::new(buf)
    })
}

/// Guesses the format from the first bytes of the (decompressed) content and the file name.
pub fn detect(name: &str, head: &[u8]) -> Format {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]);
    let mut lines = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else {
        return Format::Sql;
    };
    let lower = first.to_ascii_lowercase();
    if first.starts_with('{') {
        return Format::Jsonlog;
    }
    let header: Vec<&str> = lower
        .split(',')
        .map(|h| h.trim().trim_matches('"'))
        .collect();
    if header.contains(&"query") && header.contains(&"calls") {
        return Format::Pgss;
    }
    let quoted_time = first.starts_with('"')
        && first
            .get(1..5)
            .is_some_and(|y| y.bytes().all(|b| b.is_ascii_digit()));
    if quoted_time
        && [
            ",LOG,",
            ",ERROR,",
            ",FATAL,",
            ",WARNING,",
            ",NOTICE,",
            ",PANIC,",
        ]
        .iter()
        .any(|s| first.contains(s))
    {
        return Format::Csvlog;
    }
    let sample: Vec<&str> = std::iter::once(first).chain(lines.take(49)).collect();
    if sample
        .iter()
        .any(|l| pglog::find_severity(l).is_some_and(|(_, start, _)| start > 0))
    {
        return Format::PgLog;
    }
    if quoted_time || name.ends_with(".csv") && !lower.starts_with("select") {
        return Format::Csvlog;
    }
    Format::Sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection() {
        assert_eq!(detect("x", b"query,calls,total_exec_time\n"), Format::Pgss);
        assert_eq!(detect("x", b"{\"timestamp\":\"2024\"}\n"), Format::Jsonlog);
        assert_eq!(detect("x", b"\"2026-05-16 05:11:50.269 UTC\",\"u\",\"d\",1,\"h\",a,1,\"SELECT\",\"x\",1/1,0,LOG,00000,\"m\"\n"), Format::Csvlog);
        assert_eq!(
            detect(
                "x",
                b"2017-09-06 08:40:10 UTC [20]: [1-1] user=,db= LOG:  database system\n"
            ),
            Format::PgLog
        );
        assert_eq!(detect("x", b"-- calls: 3\nSELECT 1;\n"), Format::Sql);
    }

    #[test]
    fn bound_parameters_are_marked_sent() {
        let log = "2025-01-01 00:00:00 UTC [1] LOG:  execute <unnamed>: SELECT a FROM t WHERE b = $1 AND c = 'x' LIMIT 10\n\
                   2025-01-01 00:00:00 UTC [1] DETAIL:  parameters: $1 = '42'\n";
        let load = read_str("app.log", log, Format::PgLog);
        let p = &load.workload.patterns[0];
        assert_eq!(p.sql, "SELECT a FROM t WHERE b = $1 AND c = $2 LIMIT $3");
        assert_eq!(
            p.example.as_deref(),
            Some("SELECT a FROM t WHERE b = '42' AND c = 'x' LIMIT 10")
        );
        // `$1` was the application's parameter; `'x'` and `10` were written in its statement.
        assert_eq!(p.sent_params, vec![1]);
        let sql = read_str("q.sql", "SELECT a FROM t WHERE b = 42;\n", Format::Sql);
        assert!(sql.workload.patterns[0].sent_params.is_empty());
    }

    #[test]
    fn server_statements_with_a_hidden_extract_field_are_patterns() {
        let load = read_server_statements(
            "pg_stat_statements",
            [ServerStatement {
                query: "SELECT trip_id FROM trips WHERE extract($1 FROM started_at) >= $2",
                calls: 7,
                total_ms: Some(1.0),
                rows: Some(7),
            }],
        );
        assert!(
            load.workload.skipped.is_empty(),
            "{:?}",
            load.workload.skipped
        );
        assert_eq!(load.workload.patterns.len(), 1);
        assert_eq!(load.workload.patterns[0].calls, 7);
    }

    #[test]
    fn retained_patterns_are_numbered_again() {
        let mut load = read_str(
            "w.sql",
            "-- calls: 5\nSELECT * FROM a WHERE id = 1;\n\
             -- calls: 50\nSELECT * FROM other WHERE id = 1;\n\
             BEGIN;\n\
             -- calls: 9\nUPDATE b SET x = 1 WHERE id = 2;\n",
            Format::Sql,
        );
        let ids = |l: &WorkloadLoad| -> Vec<(String, u64)> {
            l.workload
                .patterns
                .iter()
                .map(|p| (p.id.clone(), p.calls))
                .collect()
        };
        assert_eq!(
            ids(&load),
            [("q2".into(), 50), ("q3".into(), 9), ("q1".into(), 5)]
        );
        let left = retain_patterns(&mut load, |p| !p.sql.contains("other"));
        assert_eq!(
            left,
            LeftOut {
                patterns: 1,
                calls: 50
            }
        );
        assert_eq!(ids(&load), [("q2".into(), 9), ("q1".into(), 5)]);
        // The utility statement stays among the statements seen; the one left out does not.
        assert_eq!(load.statements.len(), 3);
        assert!(load.statements.iter().all(|s| !s.sql.contains("other")));
    }
}
