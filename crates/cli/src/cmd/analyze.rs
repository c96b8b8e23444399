//! `remodel analyze`: access patterns by weight and relationship decisions, from a schema and
//! the queries the application runs.

use crate::diagnostics::print_diagnostics;
use anyhow::Context;
use remodel_analyze::{analyze, render, AnalyzeConfig};
use remodel_model::{FkOrigin, Severity};
use remodel_sql::workload::Format;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `remodel analyze`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DDL files of the relational schema (pg_dump --schema-only, structure.sql, hand-written).
    #[arg(long = "schema", required = true, num_args = 1.., value_name = "FILE")]
    pub schema: Vec<PathBuf>,
    /// Workload files: SQL with `-- calls: N`, Postgres logs, pg_stat_statements CSV (.gz/.bz2 too).
    #[arg(long = "queries", required = true, num_args = 1.., value_name = "FILE")]
    pub queries: Vec<PathBuf>,
    /// Format of the workload files: auto, sql, pg-log, csvlog, jsonlog, pgss.
    #[arg(long, default_value = "auto", value_name = "F")]
    pub format: String,
    /// Print `{ "workload", "relationships", "inferred_foreign_keys" }` of the plan model as JSON.
    #[arg(long)]
    pub json: bool,
    /// The analyzer's thresholds.
    #[command(flatten)]
    pub thresholds: Thresholds,
    /// What the logs' sessions are: `session` (each backend serves one client) or
    /// `transaction` (a pooler in transaction mode, pgbouncer's `pool_mode = transaction`,
    /// shares a backend between clients: only statements inside one transaction form loops).
    #[arg(long, value_name = "MODE", default_value = "session", value_parser = ["session", "transaction"])]
    pub pooled: String,
    /// Also print notes (detected formats, unresolved names, inferred keys).
    #[arg(long, short)]
    pub verbose: bool,
}

/// The `--pooled` mode of `analyze` and `plan`.
pub(crate) fn pooling(mode: &str) -> remodel_sql::workload::Pooling {
    match mode {
        "transaction" => remodel_sql::workload::Pooling::Transaction,
        _ => remodel_sql::workload::Pooling::Session,
    }
}

fn parse_format(s: &str) -> anyhow::Result<Format> {
    Ok(match s {
        "auto" => Format::Auto,
        "sql" => Format::Sql,
        "pg-log" => Format::PgLog,
        "csvlog" => Format::Csvlog,
        "jsonlog" => Format::Jsonlog,
        "pgss" => Format::Pgss,
        other => anyhow::bail!(
            "unknown --format {other:?}: expected auto, sql, pg-log, csvlog, jsonlog or pgss"
        ),
    })
}

/// The analyzer's thresholds: a configuration file and flag overrides (shared by `analyze` and
/// `plan`).
#[derive(Debug, clap::Args)]
pub struct Thresholds {
    /// Thresholds from a TOML or JSON file (all optional; see the analyze chapter of the book).
    /// With `plan`, a `[design]` table of the same TOML file sets the designer's limits.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override: most attributes an embedded or copied side may have.
    #[arg(long, value_name = "N")]
    pub max_embed_attributes: Option<usize>,
    /// Override: least co-access share (0..1) for "read together".
    #[arg(long, value_name = "X")]
    pub min_co_access_share: Option<f64>,
    /// Override: largest children-per-parent count that is still bounded.
    #[arg(long, value_name = "N")]
    pub bounded_n_limit: Option<u64>,
    /// Override: statements run fewer times than this (and under 0.1% of all calls) are
    /// one-offs — a data load, a migration step — that shape no table [default: 2].
    #[arg(long, value_name = "N")]
    pub min_calls: Option<u64>,
}

impl Thresholds {
    /// The configuration file's text, when one is given.
    pub fn file_text(&self) -> anyhow::Result<Option<String>> {
        self.config
            .as_ref()
            .map(|path| {
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read --config {}", path.display()))
            })
            .transpose()
    }

    /// Reads the configuration file (if any) and applies the flag overrides.
    pub fn analyze_config(&self) -> anyhow::Result<AnalyzeConfig> {
        let mut cfg = match (&self.config, self.file_text()?) {
            (Some(path), Some(text)) => AnalyzeConfig::parse(&text)
                .with_context(|| format!("in --config {}", path.display()))?,
            _ => AnalyzeConfig::default(),
        };
        if let Some(n) = self.max_embed_attributes {
            cfg.max_embed_attributes = n;
        }
        if let Some(x) = self.min_co_access_share {
            cfg.min_co_access_share = x;
        }
        if let Some(n) = self.bounded_n_limit {
            cfg.bounded_n_limit = n;
        }
        if let Some(n) = self.min_calls {
            cfg.min_calls = n;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

/// Runs `remodel analyze`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = parse_format(&args.format)?;
    let cfg = args.thresholds.analyze_config()?;
    let ddl = remodel_sql::ddl::load_files(&args.schema)?;
    if ddl.schema.tables.is_empty() {
        print_diagnostics(&ddl.diagnostics, args.verbose);
        anyhow::bail!(
            "no table found in {}{}; give the DDL with --schema (pg_dump --schema-only output works)",
            super::file_list(&args.schema),
            super::schema::no_table_detail(&ddl)
        );
    }
    let load =
        remodel_sql::workload::read_files_pooled(&args.queries, format, pooling(&args.pooled))?;
    if load.workload.patterns.is_empty() {
        print_diagnostics(&load.diagnostics, args.verbose);
        anyhow::bail!(
            "no SELECT/INSERT/UPDATE/DELETE statement found in {}{}",
            super::file_list(&args.queries),
            super::workload::skipped_detail(&load.workload)
        );
    }
    let mut analysis = analyze(&ddl.schema, &load.workload, &cfg);
    // One list, counted once: the front ends' diagnostics first, then the analysis's own.
    let mut diagnostics = ddl.diagnostics;
    diagnostics.extend(load.diagnostics);
    diagnostics.append(&mut analysis.diagnostics);
    analysis.diagnostics = diagnostics;

    let mut out = std::io::stdout().lock();
    if args.json {
        print_diagnostics(&analysis.diagnostics, args.verbose);
        let inferred: Vec<serde_json::Value> = analysis
            .schema
            .foreign_keys()
            .filter(|(_, fk)| matches!(fk.origin, FkOrigin::Inferred { .. }))
            .map(|(t, fk)| serde_json::json!({ "table": t.name, "foreign_key": fk }))
            .collect();
        let json = serde_json::json!({
            "workload": analysis.workload,
            "relationships": analysis.relationships,
            "inferred_foreign_keys": inferred,
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
    } else {
        // The report lists the warnings and counts every diagnostic; notes follow with -v.
        out.write_all(render::text(&analysis).as_bytes())?;
        if args.verbose {
            for d in analysis
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Note)
            {
                writeln!(out, "  {d}")?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
