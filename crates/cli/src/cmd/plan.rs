//! `remodel plan`: schema + workload → analyze → design; writes `plan.json` and `schema.cql`.

use anyhow::{bail, Context};
use remodel_design::{emit_cql, DesignConfig};
use remodel_model::{InputFile, Plan, Severity, Statistics};
use remodel_sql::workload::Format;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `remodel plan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder holding `schema.sql` and `queries.*` (and optionally `stats.json`).
    #[arg(value_name = "DIR", required_unless_present = "schema")]
    pub dir: Option<PathBuf>,
    /// Postgres DDL files (instead of DIR/schema.sql), in order.
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "queries")]
    pub schema: Vec<PathBuf>,
    /// Workload files: SQL with `-- calls: N`, Postgres logs, pg_stat_statements CSV (format auto-detected).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub queries: Vec<PathBuf>,
    /// Source statistics as JSON (per table `rows`, per column `n_distinct`, `avg_width`, `most_common_freqs`).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Keyspace name [default: the DIR's name, else `remodel`].
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
    /// Replication: `N` (SimpleStrategy, N replicas), `dc1=3,dc2=2` (NetworkTopologyStrategy) or a CQL map.
    #[arg(long, value_name = "SPEC", default_value = "1")]
    pub replication: String,
    /// Output folder for plan.json, schema.cql and report/ [default: DIR/plan; required with --schema].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not write the report's source (OUT/report/; `remodel report` writes it later).
    #[arg(long)]
    pub no_report: bool,
    /// What the table selection leans to: `balanced` counts a table write as half a partition
    /// read (a Cassandra write is cheaper than a read); `reads` makes a write an eighth of a read
    /// (copy more, read less); `writes` makes it two reads (copy less, look up more).
    /// [default: balanced, or the `weights` of the `[design]` table of `--config`]
    #[arg(long, value_name = "WHICH", value_parser = ["reads", "balanced", "writes"])]
    pub objective: Option<String>,
    /// The analyzer's thresholds (and, in `--config`, a `[design]` table for the designer's).
    #[command(flatten)]
    pub thresholds: super::analyze::Thresholds,
    /// Print every diagnostic (notes included), not only warnings and errors.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The designer's settings: a `[design]` table of the `--config` file, then the flags.
fn design_config(
    args: &Args,
    keyspace: String,
    replication: String,
) -> anyhow::Result<DesignConfig> {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        design: Option<DesignConfig>,
    }
    let mut config = match args.thresholds.file_text()? {
        Some(text) if !text.trim_start().starts_with('{') => {
            let path = args.thresholds.config.as_deref().unwrap_or(Path::new("-"));
            toml::from_str::<File>(&text)
                .with_context(|| format!("in the [design] table of --config {}", path.display()))?
                .design
                .unwrap_or_default()
        }
        _ => DesignConfig::default(),
    };
    config.keyspace = keyspace;
    config.replication = replication;
    if let Some(name) = &args.objective {
        config.weights = remodel_design::Weights::named(name)
            .with_context(|| format!("--objective {name}: expected reads, balanced or writes"))?;
    }
    Ok(config)
}

/// The inputs found for a run.
struct Inputs {
    schema: Vec<PathBuf>,
    queries: Vec<PathBuf>,
    stats: Option<PathBuf>,
    keyspace: String,
    out: PathBuf,
}

/// A keyspace name from a folder or flag: the designer's name rules, cut to Cassandra's limit.
fn keyspace_from(name: &str) -> String {
    remodel_design::naming::fit_length(&remodel_design::naming::sanitize(name))
}

fn resolve(args: &Args) -> anyhow::Result<Inputs> {
    let mut schema = args.schema.clone();
    let mut queries = args.queries.clone();
    let mut stats = args.stats.clone();
    let mut keyspace = args.keyspace.clone();
    let out = match (&args.dir, &args.out) {
        (_, Some(o)) => o.clone(),
        (Some(d), None) => d.join("plan"),
        (None, None) => {
            bail!("--out DIR is required with --schema (where to write plan.json and schema.cql)")
        }
    };
    if let Some(dir) = &args.dir {
        if !dir.is_dir() {
            bail!(
                "{} is not a folder (expected one holding schema.sql and queries.*)",
                dir.display()
            );
        }
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot list {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        let file_name = |p: &Path| {
            p.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default()
        };
        if schema.is_empty() {
            let found = names
                .iter()
                .find(|p| file_name(p) == "schema.sql")
                .cloned()
                .or_else(|| {
                    let ddl: Vec<&PathBuf> = names
                        .iter()
                        .filter(|p| {
                            file_name(p).starts_with("ddl") && file_name(p).ends_with(".sql")
                        })
                        .collect();
                    (ddl.len() == 1).then(|| ddl[0].clone())
                });
            match found {
                Some(p) => schema.push(p),
                None => bail!("no schema.sql in {} (give --schema FILE)", dir.display()),
            }
        }
        if queries.is_empty() {
            queries = names
                .iter()
                .filter(|p| file_name(p).starts_with("queries."))
                .cloned()
                .collect();
            if queries.is_empty() {
                bail!(
                    "no queries.* file in {} (give --queries FILE)",
                    dir.display()
                );
            }
        }
        if stats.is_none() {
            stats = names.iter().find(|p| file_name(p) == "stats.json").cloned();
        }
        if keyspace.is_none() {
            let abs = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            keyspace = abs.file_name().map(|n| keyspace_from(&n.to_string_lossy()));
        }
    }
    if queries.is_empty() {
        bail!("no workload given (--queries FILE…)");
    }
    for f in schema.iter().chain(&queries).chain(stats.iter()) {
        if !f.is_file() {
            bail!("{}: no such file", f.display());
        }
    }
    let keyspace = keyspace
        .map(|k| keyspace_from(&k))
        .unwrap_or_else(|| "remodel".into());
    Ok(Inputs {
        schema,
        queries,
        stats,
        keyspace,
        out,
    })
}

/// `N`, `dc1=3,dc2=2` or a literal CQL map → the CQL replication map.
fn replication(spec: &str) -> anyhow::Result<String> {
    let s = spec.trim();
    if s.starts_with('{') && s.ends_with('}') {
        return Ok(s.to_string());
    }
    if let Ok(n) = s.parse::<u32>() {
        if n == 0 {
            bail!("--replication 0: at least one replica is needed");
        }
        return Ok(format!(
            "{{'class': 'SimpleStrategy', 'replication_factor': {n}}}"
        ));
    }
    let mut parts = vec!["'class': 'NetworkTopologyStrategy'".to_string()];
    for item in s.split(',') {
        let Some((dc, n)) = item.split_once('=') else {
            bail!("--replication {s}: expected N, dc1=3,dc2=2 or a CQL map");
        };
        let n: u32 = n
            .trim()
            .parse()
            .with_context(|| format!("--replication {s}: `{n}` is not a replica count"))?;
        let dc = dc.trim();
        if dc.is_empty() || dc.contains('\'') {
            bail!("--replication {s}: bad datacenter name `{dc}`");
        }
        parts.push(format!("'{dc}': {n}"));
    }
    Ok(format!("{{{}}}", parts.join(", ")))
}

/// Runs `remodel plan`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let inputs = resolve(&args)?;
    let replication = replication(&args.replication)?;

    let ddl = remodel_sql::ddl::load_files(&inputs.schema).context("reading the schema")?;
    if ddl.schema.tables.is_empty() {
        bail!(
            "no CREATE TABLE found in {}",
            super::file_list(&inputs.schema)
        );
    }
    let wl = remodel_sql::workload::read_files(&inputs.queries, Format::Auto)
        .context("reading the workload")?;
    if wl.workload.patterns.is_empty() {
        bail!(
            "no SELECT/INSERT/UPDATE/DELETE statement found in {}",
            super::file_list(&inputs.queries)
        );
    }
    let stats: Option<Statistics> = match &inputs.stats {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Some(serde_json::from_str(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{}:{}:{}: not a statistics file: {e}",
                    p.display(),
                    e.line(),
                    e.column()
                )
            })?)
        }
        None => None,
    };

    let analysis = remodel_analyze::analyze(
        &ddl.schema,
        &wl.workload,
        &args.thresholds.analyze_config()?,
    );
    let config = design_config(&args, inputs.keyspace.clone(), replication)?;
    let (mut plan, design_diagnostics) = remodel_design::plan(analysis, stats.as_ref(), &config);
    plan.inputs = input_files(&inputs)?;

    std::fs::create_dir_all(&inputs.out)
        .with_context(|| format!("cannot create {}", inputs.out.display()))?;
    let mut json = serde_json::to_string_pretty(&plan).context("serializing the plan")?;
    json.push('\n');
    let plan_path = inputs.out.join("plan.json");
    let cql_path = inputs.out.join("schema.cql");
    std::fs::write(&plan_path, json)
        .with_context(|| format!("cannot write {}", plan_path.display()))?;
    std::fs::write(&cql_path, emit_cql(&plan.design))
        .with_context(|| format!("cannot write {}", cql_path.display()))?;

    let mut diagnostics = ddl.diagnostics;
    diagnostics.extend(wl.diagnostics);
    diagnostics.extend(design_diagnostics);
    print_summary(&plan, &diagnostics, args.verbose);
    println!("wrote {} and {}", plan_path.display(), cql_path.display());
    if !args.no_report {
        // Written for a failing plan too: the report is where a reviewer reads why it fails.
        let dir = inputs.out.join("report");
        super::report::write(&plan, &plan_path, &cql_path, None, &dir)?;
        println!(
            "wrote the report source to {} (build it: mdbook build {0})",
            dir.display()
        );
    }
    if !plan.design.violations.is_empty() {
        eprintln!(
            "remodel plan: the plan fails {} check{} (listed above as `plan check` errors): it is written for review, but it would lose or corrupt data, and `remodel backfill` refuses it",
            plan.design.violations.len(),
            if plan.design.violations.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::from(crate::EXIT_PLAN_FAILS_CHECKS));
    }
    Ok(ExitCode::SUCCESS)
}

/// The files read, with their sizes, for the report's overview.
fn input_files(inputs: &Inputs) -> anyhow::Result<Vec<InputFile>> {
    let roles = [
        ("schema", &inputs.schema[..]),
        ("queries", &inputs.queries[..]),
        ("stats", inputs.stats.as_slice()),
    ];
    let mut files = Vec::new();
    for (role, paths) in roles {
        for p in paths {
            let meta =
                std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
            files.push(InputFile {
                path: p.display().to_string(),
                role: role.into(),
                bytes: meta.len(),
            });
        }
    }
    Ok(files)
}

fn print_summary(plan: &Plan, diagnostics: &[remodel_model::Diagnostic], verbose: bool) {
    let d = &plan.design;
    let reads = d.queries.len();
    let single = d.queries.iter().filter(|q| q.single_partition).count();
    println!(
        "remodel plan: {} patterns ({} reads, {} writes) -> {} tables in keyspace {}",
        plan.workload.patterns.len(),
        reads,
        d.writes.len(),
        d.tables.len(),
        d.keyspace.name
    );
    println!();
    let width = d.tables.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in &d.tables {
        let pk: Vec<String> = t
            .partition_key
            .iter()
            .map(|k| match (&k.derived_from, k.bucket) {
                (Some(src), Some(b)) => format!(
                    "{}={}({src})",
                    k.column,
                    serde_json::to_value(b)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ),
                _ => k.column.clone(),
            })
            .collect();
        let ck: Vec<String> = t
            .clustering
            .iter()
            .map(|k| {
                format!(
                    "{}{}",
                    k.column,
                    if k.order == Some(remodel_model::SortOrder::Desc) {
                        " DESC"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        let key = if ck.is_empty() {
            format!("(({}))", pk.join(", "))
        } else {
            format!("(({}), {})", pk.join(", "), ck.join(", "))
        };
        println!(
            "  {:width$}  {key}  serves {}",
            t.name,
            if t.serves.is_empty() {
                "-".into()
            } else {
                t.serves.join(" ")
            }
        );
    }
    println!();
    println!("reads served single-partition: {single}/{reads}");
    for q in d.queries.iter().filter(|q| !q.single_partition) {
        println!(
            "  {}: {}",
            q.pattern,
            q.reason.as_deref().unwrap_or("not single-partition")
        );
    }
    for w in &d.writes {
        let mut tables: Vec<&str> = Vec::new();
        for t in &w.targets {
            if !tables.contains(&t.table.as_str()) {
                tables.push(&t.table);
            }
        }
        let rbw: Vec<String> = w
            .read_before_write
            .iter()
            .map(|r| format!("reads {} from {}", r.columns.join(", "), r.table))
            .collect();
        let batch = match w.targets.len() {
            0 | 1 => String::new(),
            _ if w.fits_batch => format!(" (one logged batch, {} B)", w.batch_bytes),
            _ => format!(
                " ({} B: over the batch warning, send separately)",
                w.batch_bytes
            ),
        };
        println!(
            "write {}: {} statement(s) -> {}{batch}{}",
            w.pattern,
            w.targets.len(),
            if tables.is_empty() {
                "nothing".to_string()
            } else {
                tables.join(", ")
            },
            if rbw.is_empty() {
                String::new()
            } else {
                format!("; first {}", rbw.join("; "))
            }
        );
    }
    if let Some(c) = &d.cost {
        let line = |f: &remodel_model::CostFigures| {
            format!(
                "{:.2} partition reads, {:.2} table writes, {:.2} reads before write; {} stored",
                f.partition_reads,
                f.table_writes,
                f.reads_before_write,
                remodel_design::sizing::human_bytes(f.stored_bytes)
            )
        };
        println!("cost per 100 calls:   {}", line(&c.design));
        println!("normalized baseline:  {}", line(&c.baseline));
        let s = &c.selection;
        println!(
            "tables chosen by {} ({} variables, {} constraints{}){}",
            if s.method == "ilp" {
                "an integer program"
            } else {
                "a greedy pass"
            },
            s.variables,
            s.constraints,
            s.gap
                .map(|g| format!(", gap {:.1}%", g * 100.0))
                .unwrap_or_default(),
            s.note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        );
    }
    let warnings: Vec<(String, &remodel_model::Warning)> = d
        .tables
        .iter()
        .flat_map(|t| t.warnings.iter().map(move |w| (t.name.clone(), w)))
        .collect();
    println!("table warnings: {}", warnings.len());
    for (t, w) in &warnings {
        println!("  {t}: {}: {}", w.code, w.message);
    }
    let count = |s: Severity| diagnostics.iter().filter(|d| d.severity == s).count();
    println!(
        "diagnostics: {} errors, {} warnings, {} notes{}",
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
        if verbose {
            ""
        } else {
            " (--verbose lists the notes)"
        }
    );
    for diag in diagnostics
        .iter()
        .filter(|d| verbose || d.severity != Severity::Note)
    {
        eprintln!("  {diag}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_specs() {
        assert_eq!(
            replication("3").ok().as_deref(),
            Some("{'class': 'SimpleStrategy', 'replication_factor': 3}")
        );
        assert_eq!(
            replication("dc1=3, dc2=2").ok().as_deref(),
            Some("{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}")
        );
        assert!(replication("0").is_err());
        assert!(replication("dc1").is_err());
    }

    #[test]
    fn keyspace_names() {
        assert_eq!(keyspace_from("rideshare"), "rideshare");
        assert_eq!(keyspace_from("My-App"), "my_app");
        assert_eq!(keyspace_from("2024"), "t_2024");
    }
}
