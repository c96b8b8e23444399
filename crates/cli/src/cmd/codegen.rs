//! `remodel codegen`: the application's new data-access layer, generated from plan.json.

use anyhow::Context;
use remodel_codegen::{generate, Lang, Options};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The long help of `remodel codegen`.
pub const LONG_ABOUT: &str = "Generates the application's data-access layer from plan.json \
    alone: one function per pattern of the workload. A read takes the SQL's parameters (typed, \
    named after what they bind) and returns rows with the SQL result's columns in its order; a \
    write takes the statement's parameters and runs its whole write path. Each function runs \
    what the plan states, as `remodel replay` runs it: prepared statements made once, buckets, \
    partitions, lookups, the client's filters, sort, offset and limit, reads before write, \
    guards, batches, TTLs and consistency levels; its docstring quotes the SQL it replaces and \
    the CQL it runs. What the plan leaves to the application (the clock, a sequence's next \
    value, an application-computed value) is a hook.\n\n\
    A function is named by a sqlc-style `-- name: TripsOfDriver :many` annotation of the \
    workload file when the statement has one, else from its table and predicate \
    (trips_by_driver_id); the names are printed.\n\n\
    --lang python writes a package for the DataStax cassandra-driver (Python 3.10+, frozen \
    dataclasses, clean under ruff and mypy --strict) with `python -m PACKAGE.executor`, the \
    protocol of `remodel replay --executor`, which proves the generated code against Postgres. \
    --lang java writes a Maven module (Java 17, a record per row, compiled with -Xlint:all \
    -Werror) for the DataStax/Apache Java driver 4.x with `PACKAGE.Executor`, the same \
    protocol's entry point.\n\n\
    Exit codes: 0 written (a pattern the plan states no executable way for gets a function that \
    raises, and is listed), 2 unusable input, 3 the plan fails its checks.";

/// The language of the package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// Python 3.10+ for the DataStax cassandra-driver.
    Python,
    /// Java 17, a Maven module for the DataStax/Apache Java driver 4.x.
    Java,
}

/// Arguments of `remodel codegen`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  remodel codegen --plan out/rideshare/plan.json --lang python \
    --out out/rideshare/python --package rideshare_dal\n  \
    remodel replay --plan out/rideshare/plan.json --source postgres://app@127.0.0.1/scratch \
    --target 127.0.0.1:9042 --writes \\\n    \
    --executor 'cd out/rideshare/python && python -m rideshare_dal.executor'\n  \
    remodel codegen --plan out/rideshare/plan.json --lang java --out out/rideshare/java"
)]
pub struct Args {
    /// The plan, as `remodel plan` wrote it.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// The language of the package.
    #[arg(long, value_enum)]
    pub lang: Language,
    /// The folder to write the package to (created; files of the same names are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The package's name [default: the plan's keyspace followed by `_dal`].
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
}

/// Runs `remodel codegen`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let plan = remodel_report::read_plan(&args.plan)?;
    if !plan.design.violations.is_empty() {
        return Err(crate::PlanFailsChecks(format!(
            "{}: the plan fails {} of its checks (`remodel plan --check` lists them): no code is \
             generated from a plan that would lose or corrupt data",
            args.plan.display(),
            plan.design.violations.len()
        ))
        .into());
    }
    let package = args.package.clone().unwrap_or_else(|| {
        format!(
            "{}_dal",
            remodel_codegen::names::snake(&plan.design.keyspace.name)
        )
    });
    let lang = match args.lang {
        Language::Python => Lang::Python,
        Language::Java => Lang::Java,
    };
    let out = generate(&plan, &Options { lang, package })?;
    for f in &out.files {
        let path = args.out.join(&f.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        crate::files::write_atomic(&path, f.contents.as_bytes())?;
    }
    let mut stdout = std::io::stdout().lock();
    for (pattern, name) in &out.functions {
        writeln!(stdout, "{pattern:<6} {name}")?;
    }
    for n in &out.not_generated {
        writeln!(stdout, "{:<6} raises: {}", n.pattern, n.reason)?;
    }
    writeln!(
        stdout,
        "wrote {} files to {}: {} functions, {} of them raise (the plan states no executable way)",
        out.files.len(),
        args.out.display(),
        out.functions.len(),
        out.not_generated.len()
    )?;
    Ok(ExitCode::SUCCESS)
}
