//! `--source URL` of `plan`, `schema` and `workload`: what a live Postgres gives (schema from the
//! catalog, workload from pg_stat_statements, statistics from pg_stats, foreign keys from the
//! data), read through `remodel-catalog` in one read-only transaction.

use anyhow::Context;
use remodel_catalog::{pgss, probes, schema, stats, Options, Source};
use remodel_conn::redact_url;
use remodel_model::{Diagnostic, Schema, Severity, Statistics};
use remodel_sql::workload::{ServerStatement, WorkloadLoad};
use std::time::{Duration, Instant};

/// The flags of a live source.
#[derive(Debug, Clone, clap::Args)]
pub struct LiveArgs {
    /// Read from a live Postgres, postgres://user:password@host:port/db: the schema from its
    /// catalog, the workload from pg_stat_statements, statistics from pg_stats (files given with
    /// --schema, --queries or --stats are used instead of the matching part). One read-only
    /// transaction; TLS as libpq takes it (?sslmode=verify-full&sslrootcert=FILE); the password
    /// is never printed nor written.
    #[arg(long, value_name = "URL")]
    pub source: Option<String>,
    /// The Postgres schemas to read, comma-separated [default: the connection's current schema].
    #[arg(long, value_name = "NAMES", value_delimiter = ',', requires = "source")]
    pub schemas: Vec<String>,
    /// Do not look for undeclared foreign keys in the data (inclusion tests on samples).
    #[arg(long, requires = "source")]
    pub no_data_probes: bool,
    /// Longest any one statement on the source may run, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "source")]
    pub statement_timeout: u64,
}

/// What to read from the source.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted {
    /// The schema (and, unless turned off, foreign keys from the data).
    pub schema: bool,
    /// The workload from pg_stat_statements.
    pub workload: bool,
    /// The statistics.
    pub stats: bool,
}

/// What was read.
#[derive(Debug, Default)]
pub struct LiveRead {
    /// The URL without its password.
    pub display: String,
    /// The schemas read.
    pub schemas: Vec<String>,
    /// The database's name.
    pub database: String,
    /// The source's `TimeZone` setting.
    pub time_zone: String,
    /// The schema, with the keys the probes confirmed.
    pub schema: Option<Schema>,
    /// The workload.
    pub workload: Option<WorkloadLoad>,
    /// The statistics.
    pub stats: Option<Statistics>,
    /// Everything worth saying, in reading order.
    pub diagnostics: Vec<Diagnostic>,
    /// One line per part read, with its time (`catalog: 3 tables in 41 ms`).
    pub timings: Vec<String>,
}

fn note(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Note,
        location: None,
        message,
    }
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// Reads what `wanted` asks for from `url`.
pub fn read(url: &str, args: &LiveArgs, wanted: Wanted) -> anyhow::Result<LiveRead> {
    let runtime = super::backfill::runtime()?;
    runtime.block_on(read_async(url, args, wanted))
}

async fn read_async(url: &str, args: &LiveArgs, wanted: Wanted) -> anyhow::Result<LiveRead> {
    let display = redact_url(url);
    let options = Options {
        schemas: args.schemas.clone(),
        statement_timeout: Duration::from_secs(args.statement_timeout.max(1)),
    };
    let password = std::env::var("PGPASSWORD").ok();
    let src = Source::open_with_password(url, password.as_deref(), &display, &options).await?;
    let mut out = LiveRead {
        display: display.clone(),
        schemas: src.schemas().to_vec(),
        database: src.database().to_string(),
        time_zone: src.time_zone().to_string(),
        ..Default::default()
    };
    if wanted.schema || wanted.stats {
        let t = Instant::now();
        let read = schema::read(&src).await?;
        let columns: usize = read.schema.tables.iter().map(|t| t.columns.len()).sum();
        out.timings.push(format!(
            "catalog: {} tables, {} columns in {}",
            read.schema.tables.len(),
            columns,
            ms(t.elapsed())
        ));
        out.diagnostics.extend(read.diagnostics);
        let mut schema = read.schema;
        let t = Instant::now();
        let st = stats::read(&src, &schema).await?;
        out.timings.push(format!(
            "statistics: {} tables in {}",
            st.stats.tables.len(),
            ms(t.elapsed())
        ));
        out.diagnostics.extend(st.diagnostics);
        if wanted.schema && !args.no_data_probes {
            probe_keys(&src, &mut schema, &st.stats, &mut out).await?;
        }
        if wanted.stats {
            out.stats = Some(st.stats);
        }
        if wanted.schema {
            // The catalog reads DEFAULT and GENERATED expressions as text; the front end types
            // them as it does a DDL file's.
            remodel_sql::typed_expr::schema::fill_schema(&mut schema);
            out.schema = Some(schema);
        }
    }
    if wanted.workload {
        out.workload = Some(read_workload(&src, &display, &mut out).await?);
    }
    src.close().await.context("closing the source")?;
    Ok(out)
}

/// Looks for undeclared foreign keys in the data: the ones found go into `schema` (and a note
/// each), the naming guesses refuted are said.
async fn probe_keys(
    src: &Source,
    schema: &mut Schema,
    stats: &Statistics,
    out: &mut LiveRead,
) -> anyhow::Result<()> {
    let p = probes::probe(src, schema, Some(stats), &probes::ProbeConfig::default()).await?;
    out.timings.push(format!(
        "data probes: {} pairs probed, {} foreign keys found, {} naming guesses refuted in {}",
        p.probed,
        p.confirmed.len(),
        p.rejected.len(),
        ms(p.elapsed)
    ));
    for (table, fk) in &p.confirmed {
        if let remodel_model::FkOrigin::Inferred { evidence } = &fk.origin {
            out.diagnostics.push(note(format!(
                "foreign key {table}({}) -> {}({}) found in the data: {evidence}",
                fk.columns.join(", "),
                fk.ref_table,
                fk.ref_columns.join(", ")
            )));
        }
    }
    for r in &p.rejected {
        out.diagnostics.push(note(format!(
            "{}({}) is no foreign key to {}: {}",
            r.table,
            r.columns.join(", "),
            r.ref_table,
            r.evidence
        )));
    }
    out.diagnostics.extend(p.diagnostics.iter().cloned());
    p.apply(schema);
    Ok(())
}

/// The workload of pg_stat_statements (and a warning when statements are hidden from the user).
async fn read_workload(
    src: &Source,
    display: &str,
    out: &mut LiveRead,
) -> anyhow::Result<WorkloadLoad> {
    let t = Instant::now();
    let read = pgss::read(src).await?;
    let name = format!("pg_stat_statements ({display})");
    let load = remodel_sql::workload::read_server_statements(
        &name,
        read.statements.iter().map(|s| ServerStatement {
            query: &s.query,
            calls: s.calls,
            total_ms: Some(s.total_ms),
            rows: Some(s.rows),
        }),
    );
    out.timings.push(format!(
        "pg_stat_statements {}: {} statements in {}",
        read.version,
        read.statements.len(),
        ms(t.elapsed())
    ));
    if read.hidden > 0 {
        out.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: None,
            message: format!(
                "{} statement(s) of other users are hidden from this user (<insufficient privilege>): GRANT pg_read_all_stats TO it to read them",
                read.hidden
            ),
        });
    }
    Ok(load)
}

/// Keeps the statements of a workload read from pg_stat_statements that name a table of
/// `schema`: the view holds the whole database's statements (other schemas, monitoring,
/// maintenance), which no table of the plan could serve. A statement is matched by table name,
/// as the analyzer resolves it: pg_stat_statements does not say which schema a name resolved to.
/// Returns the line that says what was left out, if anything was.
pub fn scope_workload(
    load: &mut WorkloadLoad,
    schema: &Schema,
    schemas: &[String],
) -> Option<String> {
    let before = load.workload.patterns.len();
    let left = remodel_sql::workload::retain_patterns(load, |p| {
        let (analysis, _) = remodel_analyze::analyze_pattern(schema, p);
        analysis.tables.iter().any(|t| schema.table(t).is_some())
    });
    (left.patterns > 0).then(|| {
        format!(
            "workload: {} of {} statements name a table of schema {} ({} statements, {} calls, on other tables left out)",
            before - left.patterns,
            before,
            schemas.join(", "),
            left.patterns,
            left.calls
        )
    })
}

/// Writes the statistics as JSON (`--stats-out`), the shape `--stats` reads, creating its folder
/// as `--out` is (`--stats-out out/live/stats.json` before `out/live` exists).
pub fn write_stats(path: &std::path::Path, stats: &Statistics) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut json = serde_json::to_string_pretty(stats).context("serializing the statistics")?;
    json.push('\n');
    crate::files::write_atomic(path, json.as_bytes())
}
