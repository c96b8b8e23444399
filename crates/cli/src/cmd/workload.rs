//! `remodel workload`: read query files, logs or pg_stat_statements exports and list the
//! normalized statements by weight.

use crate::diagnostics::{count, diagnostics_line, print_diagnostics};
use remodel_model::text::thousands;
use remodel_model::{SkipCount, StatementKind, Workload};
use remodel_sql::workload::{read_files, Format};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Input format (`auto` looks at the content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Detect from the content.
    Auto,
    /// SQL statements separated by `;`, with optional `-- calls: N` annotations.
    Sql,
    /// Postgres stderr log with any log_line_prefix (also syslog and RDS).
    PgLog,
    /// Postgres csvlog.
    Csvlog,
    /// Postgres jsonlog (also CloudNativePG).
    Jsonlog,
    /// pg_stat_statements export as CSV with a header (query, calls, …).
    Pgss,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Auto => Format::Auto,
            FormatArg::Sql => Format::Sql,
            FormatArg::PgLog => Format::PgLog,
            FormatArg::Csvlog => Format::Csvlog,
            FormatArg::Jsonlog => Format::Jsonlog,
            FormatArg::Pgss => Format::Pgss,
        }
    }
}

/// Arguments of `remodel workload`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Query files, server logs or pg_stat_statements CSV exports (plain, .gz or .bz2).
    #[arg(required_unless_present = "source", conflicts_with = "source")]
    pub files: Vec<PathBuf>,
    /// A live Postgres to read pg_stat_statements of instead.
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Input format of every file.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Print the Workload model as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Show only the N heaviest patterns.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Also print notes (detected formats, …), not only warnings and errors.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Widest SQL shown on one line of the summary.
const SQL_WIDTH: usize = 130;

/// Runs `remodel workload`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (load, from) = match &args.live.source {
        Some(url) => {
            let wanted = super::live::Wanted {
                workload: true,
                ..Default::default()
            };
            let read = super::live::read(url, &args.live, wanted)?;
            print_diagnostics(&read.diagnostics, args.verbose);
            (
                read.workload.unwrap_or_default(),
                format!("pg_stat_statements of {}", read.display),
            )
        }
        None => (
            read_files(&args.files, args.format.into())?,
            super::file_list(&args.files),
        ),
    };
    let w = &load.workload;
    // Diagnostics go to stderr so `--json` output stays clean.
    print_diagnostics(&load.diagnostics, args.verbose);
    if w.patterns.is_empty() {
        anyhow::bail!(
            "no access pattern (SELECT/INSERT/UPDATE/DELETE on application tables) found in {from}{}",
            skipped_detail(w)
        );
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, w)?;
        writeln!(out)?;
    } else {
        print_summary(&mut out, w, args.top)?;
        writeln!(out)?;
        writeln!(out, "{}", diagnostics_line(&load.diagnostics, args.verbose))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What was read instead of patterns, for the one-line reason: `(read 3 statements: 2 utility,
/// 1 skipped: parse error …)`.
pub(crate) fn skipped_detail(w: &Workload) -> String {
    let utility: u64 = w.utility.iter().map(|u| u.count).sum();
    let skipped: u64 = w.skipped.iter().map(|s| s.count).sum();
    if utility + skipped == 0 {
        return " (no statement in them; check --format)".into();
    }
    let mut kinds: Vec<&SkipCount> = w.skipped.iter().chain(&w.utility).collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.count));
    let top: Vec<String> = kinds
        .iter()
        .take(3)
        .map(|k| format!("{} {}", k.count, k.kind))
        .collect();
    format!(
        " ({}, {} skipped; most: {})",
        count(utility, "utility statement", None),
        skipped,
        top.join(", ")
    )
}

fn kind_name(k: StatementKind) -> &'static str {
    match k {
        StatementKind::Select => "select",
        StatementKind::Insert => "insert",
        StatementKind::Update => "update",
        StatementKind::Delete => "delete",
    }
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn locations(s: &SkipCount) -> String {
    let locs: Vec<String> = s.first.iter().map(ToString::to_string).collect();
    if locs.is_empty() {
        String::new()
    } else {
        format!(
            "  ({}{})",
            locs.join(", "),
            if s.count as usize > locs.len() {
                ", …"
            } else {
                ""
            }
        )
    }
}

fn print_summary(out: &mut impl Write, w: &Workload, top: Option<usize>) -> std::io::Result<()> {
    let total = w.total_calls_wide();
    let sources: Vec<String> = w
        .sources
        .iter()
        .map(|s| {
            format!(
                "{} ({}, {})",
                s.file,
                s.format,
                if s.statements == 1 {
                    "1 statement".to_string()
                } else {
                    format!("{} statements", thousands(s.statements))
                }
            )
        })
        .collect();
    writeln!(
        out,
        "{}, {} {} from {}",
        count(w.patterns.len() as u64, "pattern", None),
        thousands(total),
        if total == 1 { "call" } else { "calls" },
        sources.join(", ")
    )?;
    writeln!(out)?;
    let shown = top.unwrap_or(usize::MAX).min(w.patterns.len());
    let idw = w
        .patterns
        .iter()
        .map(|p| p.id.len())
        .max()
        .unwrap_or(2)
        .max(2);
    let cw = w
        .patterns
        .iter()
        .map(|p| thousands(p.calls).len())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "{:<idw$}  {:>cw$}  {:>6}  {:<6}  sql",
        "id", "calls", "share", "kind"
    )?;
    for p in &w.patterns[..shown] {
        let share = if total > 0 {
            p.calls as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        writeln!(
            out,
            "{:<idw$}  {:>cw$}  {:>5.1}%  {:<6}  {}",
            p.id,
            thousands(p.calls),
            share,
            kind_name(p.kind),
            truncate(&p.sql, SQL_WIDTH)
        )?;
    }
    if shown < w.patterns.len() {
        writeln!(out, "… {} more patterns (--top)", w.patterns.len() - shown)?;
    }
    if !w.utility.is_empty() {
        writeln!(out)?;
        let n: u64 = w.utility.iter().map(|u| u.count).sum();
        writeln!(out, "utility statements (not patterns): {}", thousands(n))?;
        for u in &w.utility {
            writeln!(out, "  {:>9}  {}", thousands(u.count), u.kind)?;
        }
    }
    if !w.skipped.is_empty() {
        writeln!(out)?;
        let n: u64 = w.skipped.iter().map(|u| u.count).sum();
        writeln!(out, "skipped: {}", thousands(n))?;
        for s in &w.skipped {
            writeln!(
                out,
                "  {:>9}  {}{}",
                thousands(s.count),
                s.kind,
                locations(s)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn summary_of_the_rideshare_queries() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/rideshare/queries.sql"
        );
        let load = read_files(&[file], Format::Auto).expect("readable");
        let mut out = Vec::new();
        print_summary(&mut out, &load.workload, Some(2)).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("7 patterns, 2,138,450 calls from "),
            "{text}"
        );
        assert!(
            lines[3].starts_with("q1  1,200,000   56.1%  select  SELECT started_at"),
            "{text}"
        );
        assert!(
            lines[4].starts_with("q5    400,000   18.7%  insert  INSERT INTO trips"),
            "{text}"
        );
        assert_eq!(lines[5], "… 5 more patterns (--top)");
    }

    #[test]
    fn unreadable_file_is_an_error() {
        let args = Args {
            files: vec!["/nonexistent/x.log".into()],
            live: crate::cmd::live::LiveArgs {
                source: None,
                schemas: Vec::new(),
                no_data_probes: false,
                statement_timeout: 30,
            },
            format: FormatArg::Auto,
            json: false,
            top: None,
            verbose: false,
        };
        let err = run(args).expect_err("missing file");
        // `main` prints the error with its causes (`{:#}`).
        assert_eq!(
            format!("{err:#}"),
            "cannot read /nonexistent/x.log: No such file or directory (os error 2)"
        );
    }
}
