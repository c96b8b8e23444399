//! `remodel schema`: load DDL files and summarise them.

use crate::diagnostics::{count, diagnostics_line, print_diagnostics};
use remodel_model::{FkOrigin, Index, IndexKey, Schema, Table};
use remodel_sql::ddl::{load_files, DdlLoad};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `remodel schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DDL files to load, in order (later files may ALTER tables of earlier ones).
    #[arg(required_unless_present = "source", conflicts_with = "source")]
    pub files: Vec<PathBuf>,
    /// A live Postgres to read the schema from its catalog instead.
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Print the Schema model as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Also print notes (partitions folded, renames, …), not only warnings and errors.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs `remodel schema`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.live.source {
        return run_live(url, &args);
    }
    let load = load_files(&args.files)?;
    // Diagnostics go to stderr, compiler style, so `--json` output stays clean.
    print_diagnostics(&load.diagnostics, args.verbose);
    if load.schema.tables.is_empty() {
        // Nothing usable: the diagnostics and a one-line reason, no summary.
        anyhow::bail!(
            "no table found in {}{}",
            super::file_list(&args.files),
            no_table_detail(&load)
        );
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &load.schema)?;
        writeln!(out)?;
    } else {
        print_summary(&mut out, &load, &args.files, args.verbose)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `remodel schema --source URL`: the catalog's schema, with the keys found in the data.
fn run_live(url: &str, args: &Args) -> anyhow::Result<ExitCode> {
    let wanted = super::live::Wanted {
        schema: true,
        ..Default::default()
    };
    let read = super::live::read(url, &args.live, wanted)?;
    print_diagnostics(&read.diagnostics, args.verbose);
    let schema = read.schema.unwrap_or_default();
    if schema.tables.is_empty() {
        anyhow::bail!(
            "no table in schema {} of {} (give --schemas NAME,…)",
            read.schemas.join(", "),
            read.display
        );
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &schema)?;
        writeln!(out)?;
    } else {
        for t in &schema.tables {
            print_table(&mut out, t)?;
        }
        writeln!(out)?;
        writeln!(out, "{}", totals(&schema))?;
        writeln!(
            out,
            "read {} (schema {}):",
            read.display,
            read.schemas.join(", ")
        )?;
        for t in &read.timings {
            writeln!(out, "  {t}")?;
        }
        for r in &schema.rejected_keys {
            writeln!(
                out,
                "no foreign key: {}({}) -> {}: {}",
                r.table,
                r.columns.join(", "),
                r.ref_table,
                r.evidence
            )?;
        }
        if !read.diagnostics.is_empty() {
            writeln!(out)?;
            writeln!(out, "{}", diagnostics_line(&read.diagnostics, args.verbose))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What was read instead of tables, for the one-line reason (`: read 12 statements: 9 SELECT, …`).
pub(crate) fn no_table_detail(load: &DdlLoad) -> String {
    let errors = load.errors().count();
    if errors > 0 {
        return format!(" ({} above)", count(errors as u64, "error", None));
    }
    if load.statements == 0 {
        return String::new();
    }
    let mut kinds: Vec<_> = load.schema.skipped.iter().collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.count));
    let top: Vec<String> = kinds
        .iter()
        .take(3)
        .map(|k| format!("{} {}", k.count, k.kind))
        .collect();
    format!(
        " (read {}, none a CREATE TABLE: {})",
        count(load.statements as u64, "statement", None),
        top.join(", ")
    )
}

fn cols(c: &[String]) -> String {
    format!("({})", c.join(", "))
}

fn index_keys(i: &Index) -> String {
    let keys: Vec<String> = i
        .keys
        .iter()
        .map(|k| match k {
            IndexKey::Column { name, desc: true } => format!("{name} DESC"),
            IndexKey::Column { name, desc: false } => name.clone(),
            IndexKey::Expression { sql } => format!("({sql})"),
        })
        .collect();
    format!("({})", keys.join(", "))
}

fn print_table(out: &mut impl Write, t: &Table) -> std::io::Result<()> {
    let mut head = format!(
        "{}  {}",
        t.qualified_name(),
        count(t.columns.len() as u64, "column", None)
    );
    if let Some(p) = &t.partition_by {
        head.push_str(&format!(
            ", partitioned by {} ({})",
            p.strategy,
            p.keys.join(", ")
        ));
    }
    if !t.partitions.is_empty() {
        head.push_str(&format!(
            ", {} folded in",
            count(t.partitions.len() as u64, "partition", None)
        ));
    }
    if !t.inherits.is_empty() {
        head.push_str(&format!(", inherits {}", t.inherits.join(", ")));
    }
    if let Some(loc) = &t.location {
        head.push_str(&format!("  [{loc}]"));
    }
    writeln!(out, "{head}")?;
    if t.primary_key.is_empty() {
        writeln!(out, "  primary key  none")?;
    } else {
        writeln!(out, "  primary key  {}", cols(&t.primary_key))?;
    }
    for u in &t.unique_keys {
        let name = u
            .name
            .as_deref()
            .map(|n| format!("{n} "))
            .unwrap_or_default();
        writeln!(out, "  unique       {name}{}", cols(&u.columns))?;
    }
    for fk in &t.foreign_keys {
        let origin = match &fk.origin {
            FkOrigin::Declared => String::new(),
            FkOrigin::Inferred { evidence } => format!("  (inferred: {evidence})"),
        };
        writeln!(
            out,
            "  foreign key  {} -> {} {}{origin}",
            cols(&fk.columns),
            fk.ref_table,
            cols(&fk.ref_columns)
        )?;
    }
    for i in &t.indexes {
        let mut line = format!("  index        {}", i.name);
        if i.unique {
            line.push_str(" unique");
        }
        if let Some(m) = &i.method {
            line.push_str(&format!(" {m}"));
        }
        line.push_str(&format!(" {}", index_keys(i)));
        if let Some(p) = &i.predicate {
            line.push_str(&format!(" WHERE {p}"));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn print_summary(
    out: &mut impl Write,
    load: &DdlLoad,
    files: &[PathBuf],
    verbose: bool,
) -> std::io::Result<()> {
    let s: &Schema = &load.schema;
    for t in &s.tables {
        print_table(out, t)?;
    }
    writeln!(out)?;
    writeln!(out, "{}", totals(s))?;
    writeln!(
        out,
        "read {} from {}",
        count(load.statements as u64, "statement", None),
        super::file_list(files)
    )?;
    print_skipped(out, s, files)?;
    if !load.diagnostics.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", diagnostics_line(&load.diagnostics, verbose))?;
    }
    Ok(())
}

/// `3 tables, 15 columns, 2 foreign keys, …`.
fn totals(s: &Schema) -> String {
    let columns: usize = s.tables.iter().map(|t| t.columns.len()).sum();
    let declared = s
        .foreign_keys()
        .filter(|(_, fk)| fk.origin == FkOrigin::Declared)
        .count();
    let inferred = s.foreign_keys().count() - declared;
    let indexes: usize = s.tables.iter().map(|t| t.indexes.len()).sum();
    let unique: usize = s.tables.iter().map(|t| t.unique_keys.len()).sum();
    let inferred = if inferred > 0 {
        format!(" (+{inferred} inferred)")
    } else {
        String::new()
    };
    let n = |x: usize| x as u64;
    format!(
        "{}, {}, {}{inferred}, {}, {}, {}, {}",
        count(n(s.tables.len()), "table", None),
        count(n(columns), "column", None),
        count(n(declared), "foreign key", None),
        count(n(unique), "unique key", None),
        count(n(indexes), "index", Some("indexes")),
        count(n(s.enums.len()), "enum", None),
        count(n(s.sequences.len()), "sequence", None)
    )
}

/// The statements read but not modelled, by kind with their first locations.
fn print_skipped(out: &mut impl Write, s: &Schema, files: &[PathBuf]) -> std::io::Result<()> {
    if !s.skipped.is_empty() {
        let total: u64 = s.skipped.iter().map(|k| k.count).sum();
        writeln!(out)?;
        let at = if files.len() == 1 {
            "first lines:columns"
        } else {
            "first locations"
        };
        writeln!(
            out,
            "read but not modelled ({total} {}; count, kind, {at}):",
            if total == 1 {
                "statement or clause"
            } else {
                "statements or clauses"
            }
        )?;
        let width = s
            .skipped
            .iter()
            .map(|k| k.kind.chars().count())
            .max()
            .unwrap_or(0);
        for k in &s.skipped {
            // With one input file, `line:column` is enough (the file is named above).
            let first: Vec<String> = k
                .first
                .iter()
                .map(|l| {
                    if files.len() == 1 {
                        format!("{}:{}", l.line, l.column)
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            let more = if k.count as usize > first.len() {
                ", …"
            } else {
                ""
            };
            let pad = width - k.kind.chars().count();
            writeln!(
                out,
                "  {:>6}  {}{}  {}{more}",
                k.count,
                k.kind,
                " ".repeat(pad),
                first.join(", ")
            )?;
        }
    }
    Ok(())
}
