//! `remodel schema`: load DDL files and summarise them.

use remodel_model::{FkOrigin, Index, IndexKey, Schema, Severity, Table};
use remodel_sql::ddl::{load_files, DdlLoad};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `remodel schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DDL files to load, in order (later files may ALTER tables of earlier ones).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the Schema model as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `remodel schema`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let load = load_files(&args.files)?;
    if load.schema.tables.is_empty() {
        // Nothing usable: the diagnostics and a one-line reason, no summary.
        for d in &load.diagnostics {
            eprintln!("{d}");
        }
        eprintln!(
            "remodel: error: no table found in {}{}",
            super::file_list(&args.files),
            no_table_detail(&load)
        );
        return Ok(ExitCode::from(crate::EXIT_UNUSABLE_INPUT));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &load.schema)?;
        writeln!(out)?;
    } else {
        print_summary(&mut out, &load, &args.files)?;
    }
    out.flush()?;
    // Diagnostics go to stderr, compiler style, so `--json` output stays clean.
    for d in &load.diagnostics {
        eprintln!("{d}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What was read instead of tables, for the one-line reason (`: read 12 statement(s): 9 SELECT, …`).
fn no_table_detail(load: &DdlLoad) -> String {
    let errors = load.errors().count();
    if errors > 0 {
        return format!(" ({errors} error(s) above)");
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
        " (read {} statement(s), none a CREATE TABLE: {})",
        load.statements,
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
    let mut head = format!("{}  {} column(s)", t.qualified_name(), t.columns.len());
    if let Some(p) = &t.partition_by {
        head.push_str(&format!(
            ", partitioned by {} ({})",
            p.strategy,
            p.keys.join(", ")
        ));
    }
    if !t.partitions.is_empty() {
        head.push_str(&format!(", {} partition(s) folded in", t.partitions.len()));
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

fn print_summary(out: &mut impl Write, load: &DdlLoad, files: &[PathBuf]) -> std::io::Result<()> {
    let s: &Schema = &load.schema;
    for t in &s.tables {
        print_table(out, t)?;
    }
    writeln!(out)?;
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
    writeln!(
        out,
        "{} table(s), {columns} column(s), {declared} foreign key(s){inferred}, {unique} unique key(s), {indexes} index(es), {} enum(s), {} sequence(s)",
        s.tables.len(),
        s.enums.len(),
        s.sequences.len()
    )?;
    writeln!(
        out,
        "read {} statement(s) from {}",
        load.statements,
        super::file_list(files)
    )?;
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
            "read but not modelled ({total} statement(s) or clause(s); count, kind, {at}):"
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
    let count = |sev: Severity| {
        load.diagnostics
            .iter()
            .filter(|d| d.severity == sev)
            .count()
    };
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    if errors + warnings + notes > 0 {
        writeln!(out)?;
        writeln!(
            out,
            "{errors} error(s), {warnings} warning(s), {notes} note(s) (on stderr)"
        )?;
    }
    Ok(())
}
