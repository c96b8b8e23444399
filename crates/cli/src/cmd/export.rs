//! `remodel export spark`: the plan as an Apache Spark job folder.

use super::backfill::load_plan;
use crate::files::write_atomic;
use anyhow::Context;
use remodel_backfill::target::TargetTable;
use remodel_conn::redact_url;
use remodel_spark::{ExportOptions, TableRead};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `remodel export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub target: Target,
}

/// What to export to.
#[derive(Debug, clap::Subcommand)]
pub enum Target {
    /// A PySpark job (backfill.py, job.json, README.md with the spark-submit lines).
    #[command(
        long_about = "Writes the plan as an Apache Spark job folder, for backfills at cluster scale.\n\n\
        JOBDIR gets backfill.py (a PySpark job), job.json (every target table's source_sql, columns \
        with CQL types, keys, bucket derivations and driving table), log4j2.properties and a \
        README.md with the exact spark-submit lines for a local run and for a cluster \
        (--packages or --jars: the Spark Cassandra Connector and the Postgres JDBC driver).\n\n\
        The job reads like `remodel backfill`: every partition of every read imports one exported \
        snapshot, the driving table is cut into ctid page ranges, values are converted exactly and \
        rows CQL cannot hold go to rejects files that `remodel verify --run-dir` reads. No password \
        is written: a password in --source-url is dropped, and the job takes it from \
        REMODEL_SOURCE or REMODEL_SOURCE_PASSWORD when it runs.\n\n\
        Exit codes: 0 written, 2 unusable input, 3 the plan fails its checks.",
        after_help = "Example:\n  remodel export spark --plan out/rideshare/plan.json --out out/rideshare/spark \\\n    --source-url postgres://app@127.0.0.1:5432/rideshare --target 127.0.0.1:9042"
    )]
    Spark(SparkArgs),
}

/// Arguments of `remodel export spark`.
#[derive(Debug, clap::Args)]
pub struct SparkArgs {
    /// The plan: a plan.json, or the folder `remodel plan --out` wrote it to.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// The job folder to write (created when missing).
    #[arg(long, value_name = "JOBDIR")]
    pub out: PathBuf,
    /// The job's default source, postgres://user@host:port/db (a password in it is dropped).
    #[arg(long, value_name = "URL")]
    pub source_url: Option<String>,
    /// The job's default Cassandra contact point, host:port.
    #[arg(long, value_name = "HOST:PORT")]
    pub target: Option<String>,
    /// Only these target tables (comma-separated) [default: all tables of the plan].
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    pub tables: Vec<String>,
}

/// Runs `remodel export`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.target {
        Target::Spark(a) => spark(a),
    }
}

fn spark(args: SparkArgs) -> anyhow::Result<ExitCode> {
    let (plan, plan_file) = load_plan(&args.plan)?;
    let tables = TargetTable::from_plan(&plan, &args.tables)
        .with_context(|| format!("{}", plan_file.display()))?;
    if let Some(t) = &args.target {
        // The same rules as backfill's --target (host:port, no credentials in it).
        remodel_backfill::CqlTarget::new(t, None)?;
    }
    if let Some(url) = &args.source_url {
        // A URL the job could not use is refused here, not when the cluster runs it.
        remodel_backfill::PgSource::new(url).check()?;
    }
    // The connector upserts rows; a counter can only be added to: such tables stay with the
    // Rust backfill, said here and in the job's README.
    for t in tables.iter().filter(|t| t.counter) {
        eprintln!(
            "warning: counter table {} is not in the Spark job (the connector cannot add to counters exactly once): fill it with `remodel backfill --tables {}`",
            t.name, t.name
        );
    }
    let reads: Vec<TableRead> = tables
        .iter()
        .filter(|t| !t.counter)
        .map(|t| TableRead {
            table: t.name.clone(),
            source_key: t
                .source_key
                .iter()
                .map(|&i| t.columns[i].name.clone())
                .collect(),
        })
        .collect();
    let opts = ExportOptions {
        plan_label: plan_file.display().to_string(),
        source_url: args.source_url.as_deref().map(redact_url),
        target: args.target.clone(),
        job_dir: args.out.display().to_string(),
    };
    let files = remodel_spark::export(&plan, &reads, &opts)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    for f in &files {
        let path = args.out.join(f.name);
        write_atomic(&path, f.text.as_bytes())?;
        if f.executable {
            make_executable(&path)?;
        }
    }
    println!(
        "spark job for {} tables of keyspace {} written to {}: backfill.py, job.json, log4j2.properties, README.md",
        reads.len(),
        plan.design.keyspace.name,
        args.out.display()
    );
    println!(
        "run it: see {} (spark-submit with {} and {})",
        args.out.join("README.md").display(),
        remodel_spark::CONNECTOR,
        remodel_spark::PGJDBC
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> anyhow::Result<()> {
    Ok(())
}
