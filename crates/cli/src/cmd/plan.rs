//! `remodel plan`: schema + workload → analyze → design; writes `plan.json` and `schema.cql`.

use crate::diagnostics::{count, diagnostics_line, print_diagnostics};
use crate::files::{file_name, write_atomic, write_atomic_with};
use anyhow::{bail, Context};
use remodel_design::{emit_cql, DesignConfig};
use remodel_model::{Diagnostic, InputFile, Plan, Replication, Schema, Statistics};
use remodel_sql::workload::Format;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `remodel plan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder holding `schema.sql` and `queries.*` (and optionally `stats.json`).
    #[arg(value_name = "DIR", required_unless_present_any = ["schema", "source", "check", "schema_out"])]
    pub dir: Option<PathBuf>,
    /// Postgres DDL files (instead of DIR/schema.sql), in order.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub schema: Vec<PathBuf>,
    /// Workload files: SQL with `-- calls: N`, Postgres logs, pg_stat_statements CSV (format auto-detected).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub queries: Vec<PathBuf>,
    /// Source statistics as JSON (per table `rows`, per column `n_distinct`, `avg_width`, `most_common_freqs`).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Write the statistics used (read from --source, or given with --stats) to FILE as JSON,
    /// so the plan can be made again offline with --stats FILE.
    #[arg(long, value_name = "FILE")]
    pub stats_out: Option<PathBuf>,
    /// A live Postgres to read the schema, workload and statistics from.
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Keyspace name: letters, digits and `_`, at most 48, not a system keyspace [default: the DIR's name, made such a name, else `remodel`].
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
    /// Replication: `N` (SimpleStrategy, N replicas), `dc1=3,dc2=2` (NetworkTopologyStrategy) or a CQL map.
    #[arg(long, value_name = "SPEC", default_value = "1")]
    pub replication: String,
    /// Output folder for plan.json, schema.cql and report/ [default: out/<DIR's name>; required with --schema].
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
    /// The application's session time zone, an IANA name (`Europe/Berlin`): the plan's
    /// expressions read a `timestamptz` constant written without an offset, `current_date`,
    /// `date_trunc` and `EXTRACT` of instants in it (recorded as `semantics.time_zone` in
    /// plan.json). [default: with --source its TimeZone setting, else the `time_zone` of
    /// `--config`, else UTC]
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// What the logs' sessions are: `session` (each backend serves one client) or
    /// `transaction` (a pooler in transaction mode, pgbouncer's `pool_mode = transaction`,
    /// shares a backend between clients: only statements inside one transaction form loops).
    #[arg(long, value_name = "MODE", default_value = "session", value_parser = ["session", "transaction"])]
    pub pooled: String,
    /// Print every diagnostic (notes included), not only warnings and errors.
    #[arg(long, short)]
    pub verbose: bool,
    /// Check a plan.json (written or edited by hand) instead of planning: its format, the
    /// plan.json JSON Schema (each error with its JSON path), then every plan check of the
    /// designer's validator. Exit 0 when clean, 3 with the findings, 2 when unreadable or of
    /// another format.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dir", "schema", "queries", "source"])]
    pub check: Option<PathBuf>,
    /// Write the JSON Schema of plan.json to FILE (alone, or beside a plan).
    #[arg(long, value_name = "FILE")]
    pub schema_out: Option<PathBuf>,
}

/// The plan's time zone: `--timezone`, else the source's setting, else the configuration's,
/// spelled as the tz database spells it.
fn time_zone(flag: Option<&str>, source: Option<&str>, config: &str) -> anyhow::Result<String> {
    let (name, whence) = match (flag, source) {
        (Some(z), _) => (z, "--timezone"),
        (None, Some(z)) => (z, "the source's TimeZone setting"),
        (None, None) => (config, "the configuration's time_zone"),
    };
    match remodel_sql::typed_expr::time_zone(name) {
        Ok(z) => Ok(z.to_string()),
        Err(e) if flag.is_none() && source.is_some() => {
            bail!("{whence}: {e}; give the application's zone with --timezone ZONE")
        }
        Err(e) => bail!("{whence}: {e}"),
    }
}

/// The configuration's session zone: the `time_zone` of `[analyze]` or of `[design]` (both
/// checked already); the one that is not the default `UTC` when only one names another zone.
fn config_time_zone<'a>(analyze: &'a str, design: &'a str) -> anyhow::Result<&'a str> {
    match (analyze, design) {
        (a, d) if a == d => Ok(a),
        ("UTC", d) => Ok(d),
        (a, "UTC") => Ok(a),
        (a, d) => bail!(
            "--config: the [analyze] table's time_zone {a} and the [design] table's {d} differ (one zone is the application's)"
        ),
    }
}

/// A `[design]` zone setting as the tz database spells it, or why it is none.
fn design_zone(key: &str, name: &str) -> anyhow::Result<String> {
    match remodel_sql::typed_expr::time_zone(name) {
        Ok(z) => Ok(z.to_string()),
        Err(e) => bail!("in the [design] table of --config: {key}: {e}"),
    }
}

/// The designer's settings: a `[design]` table of the `--config` file, then the flags.
fn design_config(
    args: &Args,
    keyspace: String,
    replication: remodel_model::Replication,
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
    config.time_zone = design_zone("time_zone", &config.time_zone)?;
    config.bucket_time_zone = design_zone("bucket_time_zone", &config.bucket_time_zone)?;
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

/// Longest keyspace name Cassandra accepts.
const MAX_KEYSPACE: usize = 48;

/// Why `name` cannot be a keyspace, if it cannot: Cassandra takes letters, digits and `_` (at
/// most 48), and the `system…` keyspaces belong to the database itself.
fn keyspace_problem(name: &str) -> Option<String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Some("a keyspace name is letters, digits and `_` only".into());
    }
    if name.len() > MAX_KEYSPACE {
        return Some(format!(
            "a keyspace name has at most {MAX_KEYSPACE} characters"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if lower == "system" || lower.starts_with("system_") {
        return Some("`system` and `system_*` are the database's own keyspaces".into());
    }
    None
}

/// Refuses a `--keyspace` value Cassandra would not take, with a name it would.
pub(crate) fn check_keyspace(k: &str) -> anyhow::Result<()> {
    if let Some(why) = keyspace_problem(k) {
        let hint = remodel_design::candidates::naming::sanitize(k);
        let hint = match keyspace_problem(&hint) {
            None => format!(" (for example --keyspace {hint})"),
            Some(_) => String::new(),
        };
        bail!("--keyspace {k:?}: {why}{hint}");
    }
    Ok(())
}

/// The keyspace: `--keyspace` as given (refused when invalid), else the folder's name made a valid
/// name, else `remodel`.
fn keyspace(explicit: Option<&str>, dir: Option<&Path>) -> anyhow::Result<String> {
    if let Some(k) = explicit {
        check_keyspace(k)?;
        return Ok(k.to_string());
    }
    let Some(dir) = dir else {
        return Ok("remodel".into());
    };
    let abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let derived = remodel_design::candidates::naming::fit_length(
        &remodel_design::candidates::naming::sanitize(&name),
    );
    if !name.bytes().any(|b| b.is_ascii_alphanumeric()) {
        bail!("the folder name {name:?} gives no keyspace name (no letter or digit): give --keyspace NAME");
    }
    if let Some(why) = keyspace_problem(&derived) {
        bail!(
            "the folder name {name:?} gives the keyspace {derived:?}: {why}; give --keyspace NAME"
        );
    }
    Ok(derived)
}

/// The files of an input folder, sorted.
fn folder_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.exists() {
        bail!(
            "{} does not exist (expected a folder holding schema.sql and queries.*)",
            dir.display()
        );
    }
    if !dir.is_dir() {
        bail!(
            "{} is not a folder (expected one holding schema.sql and queries.*; for single files use --schema FILE --queries FILE --out DIR)",
            dir.display()
        );
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    Ok(names)
}

/// `schema.sql`, or the folder's only `ddl*.sql`.
fn folder_schema(dir: &Path, names: &[PathBuf]) -> anyhow::Result<PathBuf> {
    if let Some(p) = names.iter().find(|p| file_name(p) == "schema.sql") {
        return Ok(p.clone());
    }
    let ddl: Vec<&PathBuf> = names
        .iter()
        .filter(|p| file_name(p).starts_with("ddl") && file_name(p).ends_with(".sql"))
        .collect();
    match ddl.as_slice() {
        [one] => Ok((*one).clone()),
        _ => bail!("no schema.sql in {} (give --schema FILE)", dir.display()),
    }
}

fn resolve(args: &Args) -> anyhow::Result<Inputs> {
    let mut schema = args.schema.clone();
    let mut queries = args.queries.clone();
    let mut stats = args.stats.clone();
    if let Some(dir) = &args.dir {
        let names = folder_files(dir)?;
        if schema.is_empty() {
            schema.push(folder_schema(dir, &names)?);
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
    }
    let live = args.live.source.is_some();
    if queries.is_empty() && !live {
        bail!("no workload given (--queries FILE…, or --source URL to read pg_stat_statements)");
    }
    for f in schema.iter().chain(&queries).chain(stats.iter()) {
        if !f.exists() {
            bail!("{} does not exist", f.display());
        }
        if !f.is_file() {
            bail!("{} is not a file", f.display());
        }
    }
    let keyspace = keyspace(args.keyspace.as_deref(), args.dir.as_deref())?;
    // The default output is `out/<name>` where the command runs: never inside the input folder.
    let out = match (&args.dir, &args.out) {
        (_, Some(o)) => o.clone(),
        (Some(_), None) => PathBuf::from("out").join(&keyspace),
        (None, None) if live => {
            bail!("--out DIR is required with --source (where to write plan.json and schema.cql)")
        }
        (None, None) => {
            bail!("--out DIR is required with --schema (where to write plan.json and schema.cql)")
        }
    };
    Ok(Inputs {
        schema,
        queries,
        stats,
        keyspace,
        out,
    })
}

/// `N`, `dc1=3,dc2=2` or a CQL map (`{'class': 'NetworkTopologyStrategy', 'dc1': 3}`) → the
/// replication, checked: at least one datacenter, each named once, plain names, counts ≥ 1.
fn replication(spec: &str) -> anyhow::Result<Replication> {
    let s = spec.trim();
    let expected = "expected N, dc1=3,dc2=2 or {'class': 'NetworkTopologyStrategy', 'dc1': 3}";
    if let Ok(n) = s.parse::<u32>() {
        if n == 0 {
            bail!("--replication 0: at least one replica is needed");
        }
        return Ok(Replication::SimpleStrategy {
            replication_factor: n,
        });
    }
    let pairs: Vec<(String, String)> = match s.strip_prefix('{').and_then(|m| m.strip_suffix('}')) {
        Some(map) => {
            cql_map_entries(map).with_context(|| format!("--replication {s}: {expected}"))?
        }
        None => s
            .split(',')
            .map(|item| {
                let (k, v) = item.split_once('=').unwrap_or((item, ""));
                (k.trim().to_string(), v.trim().to_string())
            })
            .collect(),
    };
    let mut class = None;
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for (key, value) in pairs {
        if key == "class" {
            class = Some(value);
            continue;
        }
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
        {
            bail!("--replication {s}: `{key}` is not a datacenter name (letters, digits, `_-.:`); {expected}");
        }
        let n: u32 = value.parse().ok().filter(|n| *n >= 1).with_context(|| {
            format!("--replication {s}: `{value}` is not a replica count of 1 or more for `{key}`")
        })?;
        if counts.insert(key.clone(), n).is_some() {
            bail!("--replication {s}: datacenter `{key}` is named twice");
        }
    }
    match class.as_deref() {
        Some("SimpleStrategy") => match counts.remove("replication_factor") {
            Some(n) if counts.is_empty() => Ok(Replication::SimpleStrategy { replication_factor: n }),
            _ => bail!("--replication {s}: SimpleStrategy takes 'replication_factor' only"),
        },
        None | Some("NetworkTopologyStrategy") if counts.contains_key("replication_factor") => {
            bail!("--replication {s}: give replicas per datacenter, or N for SimpleStrategy")
        }
        None | Some("NetworkTopologyStrategy") if counts.is_empty() => {
            bail!("--replication {s}: no datacenter given; {expected}")
        }
        None | Some("NetworkTopologyStrategy") => Ok(Replication::NetworkTopologyStrategy { datacenters: counts }),
        Some(other) => bail!("--replication {s}: unknown class `{other}` (SimpleStrategy or NetworkTopologyStrategy)"),
    }
}

/// The entries of a CQL map literal's inside: `'key': 'value'` or `'key': 3`, comma-separated.
fn cql_map_entries(map: &str) -> anyhow::Result<Vec<(String, String)>> {
    let unquote = |t: &str| -> anyhow::Result<String> {
        let t = t.trim();
        match t.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            Some(inner) if !inner.contains('\'') => Ok(inner.to_string()),
            Some(_) => bail!("a quote inside `{t}`"),
            None if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => Ok(t.to_string()),
            None => bail!("`{t}` is neither a quoted string nor a number"),
        }
    };
    map.split(',')
        .filter(|e| !e.trim().is_empty())
        .map(|entry| {
            let (k, v) = entry
                .split_once(':')
                .with_context(|| format!("`{}` is not `'key': value`", entry.trim()))?;
            Ok((unquote(k)?, unquote(v)?))
        })
        .collect()
}

/// Reads `--stats`: unknown keys, values out of range and tables or columns the schema does not
/// have are errors naming the file and what was expected, as for `--config`.
fn read_stats(path: &Path, schema: &Schema) -> anyhow::Result<Statistics> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let stats: Statistics = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: not a statistics file: {e} (expected {{\"tables\": {{TABLE: {{\"rows\": N, \"columns\": {{COLUMN: {{\"n_distinct\", \"avg_width\", \"most_common_freqs\", \"null_frac\", \"span_days\"}}}}}}}}}})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let mut problems = stats.problems();
    for (name, t) in &stats.tables {
        let Some(table) = schema.table(name) else {
            let known: Vec<String> = schema.tables.iter().map(|t| t.qualified_name()).collect();
            problems.push(format!(
                "tables.{name}: no such table in the schema (it has {})",
                known.join(", ")
            ));
            continue;
        };
        for col in t.columns.keys().filter(|c| table.column(c).is_none()) {
            problems.push(format!(
                "tables.{name}.columns.{col}: `{}` has no such column",
                table.qualified_name()
            ));
        }
    }
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("\n  {p}")).collect();
        bail!(
            "{}: {} in the statistics:{}",
            path.display(),
            count(problems.len() as u64, "problem", None),
            list.concat()
        );
    }
    Ok(stats)
}

/// Refuses an output folder where writing would overwrite one of the inputs.
fn check_outputs(inputs: &Inputs, outputs: &[&Path]) -> anyhow::Result<()> {
    let canon = |p: &Path| p.canonicalize().ok();
    for input in inputs
        .schema
        .iter()
        .chain(&inputs.queries)
        .chain(inputs.stats.iter())
    {
        if let Some(i) = canon(input) {
            if outputs.iter().any(|o| canon(o).as_ref() == Some(&i)) {
                bail!(
                    "--out {} would overwrite the input {}: choose another folder",
                    inputs.out.display(),
                    input.display()
                );
            }
        }
    }
    Ok(())
}

/// Runs `remodel plan`: reads the inputs (files, or a live source), analyzes and designs, writes
/// `plan.json`, `schema.cql` and the report, and says what it did.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(done) = schema_flags(&args)? {
        return Ok(done);
    }
    let mut inputs = resolve(&args)?;
    let replication = replication(&args.replication)?;
    let live = read_live(&args, &mut inputs)?;
    let ddl = load_schema(&args, &inputs, live.as_ref())?;
    let (wl, scoped) = load_workload(&args, &inputs, live.as_ref(), &ddl.schema)?;
    let stats = load_stats(&args, &inputs, live.as_ref(), &ddl.schema)?;

    // The analysis owns the workload from here; the statement list is not needed.
    let remodel_sql::workload::WorkloadLoad {
        workload,
        diagnostics: workload_diagnostics,
        statements,
    } = wl;
    drop(statements);
    let mut analyze_config = args.thresholds.analyze_config()?;
    let mut config = design_config(&args, inputs.keyspace.clone(), replication)?;
    // One session zone for the analyzer's expressions, the designer's buckets and the
    // validator (the designer records it as `plan.semantics.time_zone`).
    let analyze_zone = time_zone(None, None, &analyze_config.time_zone)?;
    let zone = time_zone(
        args.timezone.as_deref(),
        live.as_ref().map(|l| l.time_zone.as_str()),
        config_time_zone(&analyze_zone, &config.time_zone)?,
    )?;
    analyze_config.time_zone.clone_from(&zone);
    config.time_zone = zone;
    let analysis = remodel_analyze::analyze_owned(&ddl.schema, workload, &analyze_config);
    let (mut plan, design_diagnostics) = remodel_design::plan(analysis, stats.as_ref(), &config);
    plan.inputs = input_files(&inputs)?;
    if let Some(l) = &live {
        plan.inputs.insert(0, live_input(l, &inputs));
    }
    let (plan_path, cql_path) = write_plan(&inputs, &plan)?;

    let mut diagnostics = live
        .as_ref()
        .map(|l| l.diagnostics.clone())
        .unwrap_or_default();
    diagnostics.extend(ddl.diagnostics);
    diagnostics.extend(workload_diagnostics);
    diagnostics.extend(design_diagnostics);
    print_diagnostics(&diagnostics, args.verbose);
    let mut out = std::io::stdout().lock();
    if let Some(l) = &live {
        print_live(&mut out, l, &scoped, args.stats_out.as_deref())?;
    }
    print_summary(&mut out, &plan, &diagnostics, args.verbose)?;
    writeln!(
        out,
        "wrote {} and {}",
        plan_path.display(),
        cql_path.display()
    )?;
    if !args.no_report {
        // Written for a failing plan too: the report is where a reviewer reads why it fails.
        let dir = inputs.out.join("report");
        super::report::write(&plan, &plan_path, &cql_path, None, None, &dir)?;
        writeln!(
            out,
            "wrote the report source to {} (build it: mdbook build {0})",
            dir.display()
        )?;
    }
    out.flush()?;
    Ok(exit_code(&plan))
}

/// `--schema-out FILE` (written first) and `--check FILE`: the exit code when either is the
/// whole command, `None` when a plan is to be made too.
fn schema_flags(args: &Args) -> anyhow::Result<Option<ExitCode>> {
    if let Some(path) = &args.schema_out {
        super::check::write_schema(path)?;
        let _ = writeln!(
            std::io::stdout(),
            "wrote the plan.json schema to {}",
            path.display()
        );
    }
    if let Some(file) = &args.check {
        return super::check::run(file).map(Some);
    }
    let only_schema = args.schema_out.is_some()
        && args.dir.is_none()
        && args.schema.is_empty()
        && args.live.source.is_none();
    Ok(only_schema.then_some(ExitCode::SUCCESS))
}

/// With `--source URL`: what the live source gives that no file does (and the keyspace named
/// after its database when nothing else names it).
fn read_live(args: &Args, inputs: &mut Inputs) -> anyhow::Result<Option<super::live::LiveRead>> {
    let Some(url) = &args.live.source else {
        return Ok(None);
    };
    let wanted = super::live::Wanted {
        schema: inputs.schema.is_empty(),
        workload: inputs.queries.is_empty(),
        stats: inputs.stats.is_none(),
    };
    let read = super::live::read(url, &args.live, wanted)?;
    if args.keyspace.is_none() && args.dir.is_none() {
        inputs.keyspace =
            keyspace(None, Some(Path::new(&read.database))).unwrap_or_else(|_| "remodel".into());
    }
    Ok(Some(read))
}

/// The schema, from the live source or the files; an error when it has no table.
fn load_schema(
    args: &Args,
    inputs: &Inputs,
    live: Option<&super::live::LiveRead>,
) -> anyhow::Result<remodel_sql::ddl::DdlLoad> {
    let ddl = match live.and_then(|l| l.schema.clone()) {
        Some(schema) => remodel_sql::ddl::DdlLoad {
            schema,
            ..Default::default()
        },
        None => remodel_sql::ddl::load_files(&inputs.schema).context("reading the schema")?,
    };
    if ddl.schema.tables.is_empty() && live.is_some() && inputs.schema.is_empty() {
        let (url, schemas) = live
            .map(|l| (l.display.as_str(), l.schemas.join(", ")))
            .unwrap_or_default();
        bail!("no table in schema {schemas} of {url} (give --schemas NAME,…)");
    }
    if ddl.schema.tables.is_empty() {
        // Why, as `remodel schema` would say it, before the one-line reason.
        print_diagnostics(&ddl.diagnostics, args.verbose);
        bail!(
            "no CREATE TABLE found in {}{}",
            super::file_list(&inputs.schema),
            super::schema::no_table_detail(&ddl)
        );
    }
    Ok(ddl)
}

/// The workload, from pg_stat_statements (kept to the tables of `schema`, with the line that
/// says so) or the files; an error when it has no statement to design for.
fn load_workload(
    args: &Args,
    inputs: &Inputs,
    live: Option<&super::live::LiveRead>,
    schema: &Schema,
) -> anyhow::Result<(remodel_sql::workload::WorkloadLoad, Option<String>)> {
    let mut scoped = None;
    let wl = match live.and_then(|l| l.workload.clone()) {
        Some(mut wl) => {
            let schemas = live.map(|l| l.schemas.as_slice()).unwrap_or(&[]);
            let read = wl.workload.patterns.len();
            scoped = super::live::scope_workload(&mut wl, schema, schemas);
            if read > 0 && wl.workload.patterns.is_empty() {
                bail!(
                    "none of the {read} SELECT/INSERT/UPDATE/DELETE statements in pg_stat_statements names a table of schema {} (give --queries FILE, or --schemas NAME,… where the application's tables are)",
                    schemas.join(", ")
                );
            }
            wl
        }
        None => remodel_sql::workload::read_files_pooled(
            &inputs.queries,
            Format::Auto,
            super::analyze::pooling(&args.pooled),
        )
        .context("reading the workload")?,
    };
    if wl.workload.patterns.is_empty() && inputs.queries.is_empty() {
        print_diagnostics(&wl.diagnostics, args.verbose);
        bail!(
            "no SELECT/INSERT/UPDATE/DELETE statement in pg_stat_statements{}",
            super::workload::skipped_detail(&wl.workload)
        );
    }
    if wl.workload.patterns.is_empty() {
        print_diagnostics(&wl.diagnostics, args.verbose);
        bail!(
            "no SELECT/INSERT/UPDATE/DELETE statement found in {}{}",
            super::file_list(&inputs.queries),
            super::workload::skipped_detail(&wl.workload)
        );
    }
    Ok((wl, scoped))
}

/// The statistics, from `--stats FILE` or the live source, written to `--stats-out FILE`.
fn load_stats(
    args: &Args,
    inputs: &Inputs,
    live: Option<&super::live::LiveRead>,
    schema: &Schema,
) -> anyhow::Result<Option<Statistics>> {
    let stats = match &inputs.stats {
        Some(p) => Some(read_stats(p, schema)?),
        None => live.and_then(|l| l.stats.clone()),
    };
    if let Some(path) = &args.stats_out {
        let Some(stats) = &stats else {
            bail!(
                "--stats-out {}: no statistics to write (give --source URL or --stats FILE)",
                path.display()
            );
        };
        super::live::write_stats(path, stats)?;
    }
    Ok(stats)
}

/// The live source as the first of the plan's inputs: what was read from it.
fn live_input(l: &super::live::LiveRead, inputs: &Inputs) -> InputFile {
    let parts: Vec<&str> = [
        (inputs.schema.is_empty(), "catalog"),
        (inputs.queries.is_empty(), "pg_stat_statements"),
        (inputs.stats.is_none(), "pg_stats"),
    ]
    .into_iter()
    .filter_map(|(read, what)| read.then_some(what))
    .collect();
    InputFile {
        path: l.display.clone(),
        role: format!(
            "source ({}; schemas {})",
            parts.join(", "),
            l.schemas.join(", ")
        ),
        bytes: 0,
    }
}

/// Writes `plan.json` and `schema.cql` into the output folder (never over an input).
fn write_plan(inputs: &Inputs, plan: &Plan) -> anyhow::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(&inputs.out)
        .with_context(|| format!("cannot create {}", inputs.out.display()))?;
    let plan_path = inputs.out.join("plan.json");
    let cql_path = inputs.out.join("schema.cql");
    check_outputs(inputs, &[&plan_path, &cql_path])?;
    write_atomic_with(&plan_path, |w| {
        serde_json::to_writer_pretty(&mut *w, plan)?;
        w.write_all(b"\n")
    })?;
    write_atomic(&cql_path, emit_cql(&plan.design).as_bytes())?;
    Ok((plan_path, cql_path))
}

/// What was read from the live source, and how long each read took.
fn print_live(
    out: &mut impl Write,
    l: &super::live::LiveRead,
    scoped: &Option<String>,
    stats_out: Option<&Path>,
) -> std::io::Result<()> {
    writeln!(out, "read {} (schema {}):", l.display, l.schemas.join(", "))?;
    for t in l.timings.iter().chain(scoped) {
        writeln!(out, "  {t}")?;
    }
    if let Some(p) = stats_out {
        writeln!(out, "  wrote the statistics to {}", p.display())?;
    }
    writeln!(out)
}

/// Success, or (said on stderr) the exit code of a plan that fails its checks.
fn exit_code(plan: &Plan) -> ExitCode {
    if plan.design.violations.is_empty() {
        return ExitCode::SUCCESS;
    }
    let n = plan.design.violations.len();
    let _ = writeln!(
        std::io::stderr(),
        "remodel plan: the plan fails {} (listed above as `plan check` errors): it is written for review, but it would lose or corrupt data, and `remodel backfill` refuses it",
        count(n as u64, "check", None)
    );
    ExitCode::from(crate::EXIT_PLAN_FAILS_CHECKS)
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

fn print_summary(
    out: &mut impl Write,
    plan: &Plan,
    diagnostics: &[Diagnostic],
    verbose: bool,
) -> std::io::Result<()> {
    let d = &plan.design;
    let reads = d.queries.len();
    let single = d.queries.iter().filter(|q| q.single_partition).count();
    writeln!(
        out,
        "remodel plan: {} ({} reads, {} writes) -> {} in keyspace {}",
        count(plan.workload.patterns.len() as u64, "pattern", None),
        reads,
        d.writes.len(),
        count(d.tables.len() as u64, "table", None),
        d.keyspace.name
    )?;
    writeln!(out)?;
    let width = d.tables.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in &d.tables {
        let key = key_text(t);
        writeln!(
            out,
            "  {:width$}  {key}  serves {}",
            t.name,
            if t.serves.is_empty() {
                "-".into()
            } else {
                t.serves.join(" ")
            }
        )?;
    }
    writeln!(out)?;
    if let Some(c) = &d.coverage {
        writeln!(out, "coverage: {c}")?;
        for g in &c.gaps {
            writeln!(out, "  not served: {g}")?;
        }
    }
    writeln!(out, "reads served single-partition: {single}/{reads}")?;
    for q in d.queries.iter().filter(|q| !q.single_partition) {
        writeln!(
            out,
            "  {}: {}",
            q.pattern,
            q.reason.as_deref().unwrap_or("not single-partition")
        )?;
    }
    for w in &d.writes {
        writeln!(out, "{}", write_line(w))?;
    }
    if let Some(c) = &d.cost {
        let line = |f: &remodel_model::CostFigures| {
            format!(
                "{:.2} partition reads, {:.2} table writes, {:.2} reads before write; {} stored",
                f.partition_reads,
                f.table_writes,
                f.reads_before_write,
                remodel_design::costs::sizing::human_bytes(f.stored_bytes)
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
    writeln!(out, "table warnings: {}", warnings.len())?;
    for (t, w) in &warnings {
        writeln!(out, "  {t}: {}: {}", w.code, w.message)?;
    }
    if let Some(why) = no_literals_note(plan) {
        writeln!(out, "{why}")?;
    }
    writeln!(out, "{}", diagnostics_line(diagnostics, verbose))?;
    Ok(())
}

/// For a workload read only from `pg_stat_statements` exports with no time bucket in the
/// design: why none could be (no literal values, so no time window is seen) and what to give.
fn no_literals_note(plan: &Plan) -> Option<String> {
    let sources = &plan.workload.sources;
    let pgss_only = !sources.is_empty() && sources.iter().all(|s| s.format == "pgss");
    let bucketed = plan
        .design
        .tables
        .iter()
        .any(|t| t.partition_key.iter().any(|k| k.bucket.is_some()));
    (pgss_only && !bucketed).then(|| {
        "no time bucket: a pg_stat_statements export has no literal values, so no time window \
         (a day, a month) of a range read can be seen; give a server log of the same workload \
         (log_min_duration_statement = 0) as --queries to find them"
            .to_string()
    })
}

/// `((partition key), clustering…)` of a designed table, buckets shown with their source.
fn key_text(t: &remodel_model::DesignTable) -> String {
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
    if ck.is_empty() {
        format!("(({}))", pk.join(", "))
    } else {
        format!("(({}), {})", pk.join(", "), ck.join(", "))
    }
}

/// One write's line: how many statements, which tables, and what it must read first.
fn write_line(w: &remodel_model::WritePath) -> String {
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
    let chunk = w.batch.as_ref().and_then(|b| b.max_statements);
    let batch = match w.targets.len() {
        0 | 1 if chunk.is_none() => String::new(),
        _ if chunk.is_some() => format!(
            " (logged batches of at most {} statements: the rows with the most of them would pass Cassandra's batch size limit)",
            chunk.unwrap_or_default()
        ),
        _ if w.fits_batch => format!(" (one logged batch, {} B)", w.batch_bytes),
        _ => format!(
            " ({} B: over the batch warning, send separately)",
            w.batch_bytes
        ),
    };
    format!(
        "write {}: {} -> {}{batch}{}",
        w.pattern,
        count(w.targets.len() as u64, "statement", None),
        if let Some(by) = &w.served_by_ttl {
            format!(
                "nothing: served by the TTL of {} on {}",
                by.column,
                by.tables.join(", ")
            )
        } else if tables.is_empty() {
            "nothing".to_string()
        } else {
            tables.join(", ")
        },
        if rbw.is_empty() {
            String::new()
        } else {
            format!("; first {}", rbw.join("; "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_specs() {
        let cql = |s: &str| replication(s).map(|r| remodel_design::emit::cql::replication_map(&r));
        assert_eq!(
            cql("3").ok().as_deref(),
            Some("{'class': 'SimpleStrategy', 'replication_factor': 3}")
        );
        assert_eq!(
            cql("dc1=3, dc2=2").ok().as_deref(),
            Some("{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}")
        );
        assert_eq!(
            cql("{'class': 'NetworkTopologyStrategy', 'us-east': '3'}")
                .ok()
                .as_deref(),
            Some("{'class': 'NetworkTopologyStrategy', 'us-east': 3}")
        );
        let refused = [
            "0",
            "dc1",
            "{}",
            "dc1=3,dc1=2",
            "dc1=0",
            "{'class': 'SimpleStrategy', 'replication_factor': 1}; DROP KEYSPACE prod; --",
            "{'class': 'NetworkTopologyStrategy', 'dc1': 3}; DROP KEYSPACE prod",
            "{'class': 'X', 'dc1': 3}",
            "d'c=3",
        ];
        for spec in refused {
            let err = replication(spec).expect_err(spec);
            assert!(format!("{err:#}").starts_with("--replication"), "{err:#}");
        }
    }

    #[test]
    fn keyspace_names() {
        let from_dir = |d: &str| keyspace(None, Some(Path::new(d)));
        assert_eq!(from_dir("/x/rideshare").unwrap(), "rideshare");
        assert_eq!(from_dir("/x/My-App").unwrap(), "my_app");
        assert_eq!(from_dir("/x/2024").unwrap(), "t_2024");
        assert!(from_dir("/x/---").is_err());
        assert_eq!(keyspace(Some("shop"), None).unwrap(), "shop");
        for bad in [
            "system",
            "system_auth",
            "System_Schema",
            "my-app",
            "",
            &"k".repeat(49),
        ] {
            assert!(keyspace(Some(bad), None).is_err(), "{bad}");
        }
        let err = keyspace(Some("my-app"), None).unwrap_err().to_string();
        assert!(err.contains("--keyspace my_app"), "{err}");
    }
}
