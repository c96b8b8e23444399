//! The Postgres DDL front end: `pg_dump --schema-only` output, Rails/Django `structure.sql` or
//! hand-written DDL into a [`Schema`].
//!
//! A file is split into statements by [`crate::split`], each statement is classified by its
//! leading keywords, and only the statements that shape the schema are parsed with `sqlparser`
//! (after a few token-level fallbacks for `pg_dump` shapes it rejects). Everything else is
//! counted by kind in [`Schema::skipped`]. Loading never fails on content: problems become
//! [`Diagnostic`]s with `file:line:column`, and the rest of the input still loads.

mod apply;
mod classify;
mod tokens;

use crate::error::SqlError;
use crate::split::{split_statements, RawKind, RawStatement};
use classify::{classify, Class};
use remodel_model::{count_skip, Diagnostic, FunctionDef, Location, Schema, Severity};
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::TokenWithSpan;
use std::collections::HashMap;
use std::path::Path;

/// The result of loading DDL: the schema plus diagnostics; never fails on content.
#[derive(Debug, Clone, Default)]
pub struct DdlLoad {
    /// The schema that was read.
    pub schema: Schema,
    /// Problems found, in input order (parse errors, unresolved references, …).
    pub diagnostics: Vec<Diagnostic>,
    /// How many chunks were read (SQL statements, psql meta-commands, COPY data blocks).
    pub statements: usize,
}

impl DdlLoad {
    /// Diagnostics of severity error.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }
}

/// Loads DDL from a string; `file` is the name used in locations.
pub fn load_str(file: &str, text: &str) -> DdlLoad {
    let mut loader = Loader::default();
    loader.add_source(file, text);
    loader.finish()
}

/// Loads DDL files in order (later files may alter tables of earlier ones; foreign keys are
/// resolved once all are read). Errs only for a file that cannot be read; bytes that are not
/// UTF-8 are replaced and reported.
pub fn load_files<P: AsRef<Path>>(paths: &[P]) -> Result<DdlLoad, SqlError> {
    let mut loader = Loader::default();
    for path in paths {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| SqlError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file = path.display().to_string();
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                let valid_up_to = err.utf8_error().valid_up_to();
                let bytes = err.into_bytes();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                // Mostly-binary input gets one "not SQL text" error from the loader instead.
                if binary_reason(&text).is_none() {
                    let (line, column) = crate::split::line_col(&text, valid_up_to);
                    let replaced = text.matches('\u{fffd}').count();
                    loader.diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        location: Some(Location::new(&file, line, column)),
                        message: format!(
                            "file is not valid UTF-8: {replaced} invalid byte sequence(s) replaced with U+FFFD (first here)"
                        ),
                    });
                }
                text
            }
        };
        loader.add_source(&file, &text);
    }
    Ok(loader.finish())
}

/// How many parse errors are listed per file; the rest are counted in one note.
const MAX_ERRORS_PER_FILE: usize = 50;

/// A partition declared by `PARTITION OF` or `ATTACH PARTITION`, folded into its parent at the end.
#[derive(Debug, Clone)]
struct PartitionLink {
    child: (Option<String>, String),
    parent: (Option<String>, String),
    location: Location,
}

/// Loading state across files.
#[derive(Debug, Default)]
struct Loader {
    schema: Schema,
    /// Where the tables of each name are in `schema.tables`: a dump of 20,000 tables must not
    /// scan them all for each statement. Pushes add to it; a removal or rename rebuilds it.
    positions: HashMap<String, Vec<usize>>,
    diagnostics: Vec<Diagnostic>,
    statements: usize,
    partitions: Vec<PartitionLink>,
    /// Materialized views seen (skipped), so an index on one is not reported as an unknown table.
    materialized_views: Vec<(Option<String>, String)>,
    /// Errors reported in the current file (for the per-file cap) and those left unlisted.
    file_errors: usize,
    file_errors_hidden: usize,
}

impl Loader {
    fn add_source(&mut self, file: &str, text: &str) {
        self.file_errors = 0;
        self.file_errors_hidden = 0;
        if let Some(reason) = binary_reason(text) {
            self.diagnostics.push(Diagnostic {
                severity: Severity::Error,
                location: Some(Location::new(file, 1, 1)),
                message: format!("not SQL text ({reason}); expected Postgres DDL such as `pg_dump --schema-only` output"),
            });
            count_skip(
                &mut self.schema.skipped,
                "binary data (file)",
                Some(Location::new(file, 1, 1)),
            );
            return;
        }
        let chunks = split_statements(text);
        if chunks.is_empty() {
            self.diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                location: Some(Location::new(file, 1, 1)),
                message: "no SQL statements found (the file is empty or holds only comments)"
                    .into(),
            });
            return;
        }
        for chunk in &chunks {
            self.chunk(file, chunk);
        }
        if self.file_errors_hidden > 0 {
            self.diagnostics.push(Diagnostic {
                severity: Severity::Note,
                location: Some(Location::new(file, 1, 1)),
                message: format!(
                    "{} more error(s) in this file not listed (first {MAX_ERRORS_PER_FILE} shown)",
                    self.file_errors_hidden
                ),
            });
        }
    }

    fn chunk(&mut self, file: &str, st: &RawStatement<'_>) {
        self.statements += 1;
        let loc = Location::new(file, st.line, st.column);
        match st.kind {
            RawKind::MetaCommand => {
                count_skip(&mut self.schema.skipped, "psql meta-command", Some(loc))
            }
            RawKind::CopyData => {
                if !st.terminated {
                    self.warn(
                        loc.clone(),
                        "COPY data block not ended by a `\\.` line before the end of the file"
                            .into(),
                    );
                }
                count_skip(&mut self.schema.skipped, "COPY data", Some(loc));
            }
            RawKind::Sql => {
                if !st.terminated {
                    self.warn(
                        loc.clone(),
                        "statement not terminated by `;` before the end of the file".into(),
                    );
                }
                self.sql(file, st, loc);
            }
        }
    }

    fn sql(&mut self, file: &str, st: &RawStatement<'_>, loc: Location) {
        let class = classify(st.text);
        let what = match &class {
            Class::Skip(kind) => {
                if kind == "CREATE MATERIALIZED VIEW" {
                    if let Some(name) = tokens::tokenize(st.text)
                        .ok()
                        .and_then(tokens::materialized_view_name)
                    {
                        self.materialized_views.push(apply::table_key(&name));
                    }
                }
                // Its body is not modelled, but a statement that calls it must not be
                // mistaken for one that only filters by a built-in.
                if kind == "CREATE FUNCTION" {
                    if let Some((name, language)) = tokens::tokenize(st.text)
                        .ok()
                        .and_then(tokens::function_name)
                    {
                        self.schema.functions.push(FunctionDef {
                            name: apply::qualified(&name),
                            language,
                            location: Some(loc.clone()),
                        });
                    }
                }
                count_skip(&mut self.schema.skipped, kind, Some(loc));
                return;
            }
            Class::Unknown => {
                self.unknown(file, st, loc);
                return;
            }
            Class::CreateTable => "CREATE TABLE",
            Class::CreateIndex => "CREATE INDEX",
            Class::CreateType => "CREATE TYPE",
            Class::CreateSequence => "CREATE SEQUENCE",
            Class::CreateDomain => "CREATE DOMAIN",
            Class::AlterTable => "ALTER TABLE",
            Class::AlterSequence => "ALTER SEQUENCE",
            Class::Comment => "COMMENT ON",
            Class::DropTable => "DROP TABLE",
            Class::AlterOther(kind) => kind.as_str(),
        };
        let mut toks = match tokens::tokenize(st.text) {
            Ok(t) => t,
            Err(e) => {
                let at = relative_location(file, st, e.location.line, e.location.column);
                self.parse_error(at, what, &e.message);
                return;
            }
        };
        match &class {
            Class::AlterOther(kind) => {
                let kind = if tokens::is_owner_change(&toks) {
                    "ALTER … OWNER TO"
                } else {
                    kind.as_str()
                };
                count_skip(&mut self.schema.skipped, kind, Some(loc));
                return;
            }
            Class::AlterSequence => {
                self.alter_sequence(file, st, loc, toks);
                return;
            }
            Class::CreateIndex => {
                tokens::drop_on_only(&mut toks);
            }
            Class::CreateTable => {
                tokens::virtual_to_stored(&mut toks);
            }
            Class::AlterTable => {
                if tokens::is_owner_change(&toks) {
                    count_skip(&mut self.schema.skipped, "ALTER … OWNER TO", Some(loc));
                    return;
                }
                tokens::drop_identity_options(&mut toks);
            }
            _ => {}
        }
        let unmodelled = if class == Class::AlterTable {
            tokens::unmodelled_alter_table_action(&toks)
        } else {
            None
        };
        match parse_one(toks) {
            Ok(stmt) => self.apply(file, st, loc, stmt),
            Err(err) => {
                if let Some(kind) = unmodelled {
                    // A storage or maintenance action the grammar does not know: nothing to model.
                    count_skip(&mut self.schema.skipped, &kind, Some(loc));
                } else {
                    let (at, message) = parser_error_location(file, st, &err);
                    self.parse_error(at, what, &message);
                }
            }
        }
    }

    /// A statement whose first word is no SQL keyword: the parser says what it expected.
    fn unknown(&mut self, file: &str, st: &RawStatement<'_>, loc: Location) {
        let parsed = tokens::tokenize(st.text)
            .map_err(|e| {
                (
                    relative_location(file, st, e.location.line, e.location.column),
                    e.message,
                )
            })
            .and_then(|toks| parse_one(toks).map_err(|err| parser_error_location(file, st, &err)));
        match parsed {
            Ok(stmt) => count_skip(&mut self.schema.skipped, &statement_kind(&stmt), Some(loc)),
            Err((at, message)) => self.parse_error(at, "statement", &message),
        }
    }

    fn alter_sequence(
        &mut self,
        file: &str,
        st: &RawStatement<'_>,
        loc: Location,
        toks: Vec<TokenWithSpan>,
    ) {
        match tokens::sequence_owned_by(toks) {
            Ok(Some((seq, owner))) => self.sequence_owned_by(&seq, owner.as_ref(), loc),
            Ok(None) => count_skip(&mut self.schema.skipped, "ALTER SEQUENCE", Some(loc)),
            Err(err) => {
                let (at, message) = parser_error_location(file, st, &err);
                self.parse_error(at, "ALTER SEQUENCE", &message);
            }
        }
    }

    fn warn(&mut self, loc: Location, message: String) {
        self.diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            location: Some(loc),
            message,
        });
    }

    fn note(&mut self, loc: Location, message: String) {
        self.diagnostics.push(Diagnostic {
            severity: Severity::Note,
            location: Some(loc),
            message,
        });
    }

    fn parse_error(&mut self, at: Location, what: &str, message: &str) {
        count_skip(
            &mut self.schema.skipped,
            "unparsed (error)",
            Some(at.clone()),
        );
        self.file_errors += 1;
        if self.file_errors > MAX_ERRORS_PER_FILE {
            self.file_errors_hidden += 1;
            return;
        }
        self.diagnostics.push(Diagnostic {
            severity: Severity::Error,
            location: Some(at),
            message: format!("cannot parse {what}: {message}; statement skipped"),
        });
    }
}

/// Parses exactly one statement from its tokens.
fn parse_one(toks: Vec<TokenWithSpan>) -> Result<Statement, ParserError> {
    let dialect = PostgreSqlDialect {};
    // sqlparser is not expected to panic, but a panic on one odd statement must not take the
    // whole load down: it becomes an error for that statement.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Parser::new(&dialect)
            .with_tokens_with_locations(toks)
            .parse_statements()
    }));
    match result {
        Ok(Ok(mut stmts)) if stmts.len() == 1 => Ok(stmts.remove(0)),
        Ok(Ok(stmts)) => Err(ParserError::ParserError(format!(
            "expected one statement, found {}",
            stmts.len()
        ))),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(ParserError::ParserError("internal parser failure".into())),
    }
}

/// The file location of a statement-relative (1-based) line/column from the tokenizer or parser.
fn relative_location(file: &str, st: &RawStatement<'_>, line: u64, column: u64) -> Location {
    if line == 0 {
        return Location::new(file, st.line, st.column);
    }
    let rel_line = u32::try_from(line).unwrap_or(u32::MAX);
    let rel_col = u32::try_from(column.max(1)).unwrap_or(u32::MAX);
    let abs_line = st.line.saturating_add(rel_line - 1);
    let abs_col = if rel_line == 1 {
        st.column.saturating_add(rel_col - 1)
    } else {
        rel_col
    };
    Location::new(file, abs_line, abs_col)
}

/// Splits a `ParserError` ("… at Line: x, Column: y") into the file location it points at and
/// the message without the statement-relative position.
fn parser_error_location(
    file: &str,
    st: &RawStatement<'_>,
    err: &ParserError,
) -> (Location, String) {
    let raw = match err {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => s.clone(),
        ParserError::RecursionLimitExceeded => "statement nested too deeply".to_string(),
    };
    if let Some(pos) = raw.rfind(" at Line: ") {
        let tail = &raw[pos + " at Line: ".len()..];
        let mut parts = tail.split(", Column: ");
        let line = parts.next().and_then(|l| l.trim().parse::<u64>().ok());
        let column = parts.next().and_then(|c| c.trim().parse::<u64>().ok());
        if let (Some(line), Some(column)) = (line, column) {
            return (
                relative_location(file, st, line, column),
                raw[..pos].to_string(),
            );
        }
    }
    (Location::new(file, st.line, st.column), raw)
}

/// A kind name for a parsed statement the loader does not model: its variant name in words
/// (`CreateView` → `CREATE VIEW`).
fn statement_kind(stmt: &Statement) -> String {
    apply::op_name(&format!("{stmt:?}"))
}

/// Why a text is not SQL at all (binary data), if it is not.
fn binary_reason(text: &str) -> Option<String> {
    let mut nul = 0usize;
    let mut control = 0usize;
    let mut replaced = 0usize;
    let mut total = 0usize;
    for c in text.chars() {
        total += 1;
        match c {
            '\0' => nul += 1,
            '\u{fffd}' => replaced += 1,
            '\t' | '\n' | '\r' | '\u{c}' => {}
            c if c.is_control() => control += 1,
            _ => {}
        }
    }
    if nul > 0 {
        return Some(format!("binary data: {nul} NUL byte(s)"));
    }
    let bad = control + replaced;
    // A few stray bytes in a real dump are reported as warnings; mostly-garbage is not SQL.
    if bad >= 8 && bad * 20 > total {
        return Some(format!("binary data: {control} control character(s), {replaced} invalid UTF-8 sequence(s) in {total} characters"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_kind_words() {
        let stmt =
            Parser::parse_sql(&PostgreSqlDialect {}, "CREATE VIEW v AS SELECT 1").expect("parses");
        assert_eq!(statement_kind(&stmt[0]), "CREATE VIEW");
    }

    #[test]
    fn relative_positions_add_the_statement_offset() {
        let src = "SELECT 1;\n\n   CREATE TABLE t (\n a int,\n b nonsense nonsense\n);";
        let st = split_statements(src);
        let err = parse_one(tokens::tokenize(st[1].text).expect("tokenizes")).expect_err("bad");
        let (at, msg) = parser_error_location("f.sql", &st[1], &err);
        assert_eq!((at.line, at.column), (5, 13), "{msg}");
        assert!(!msg.contains("Line:"), "{msg}");
        // First line of the statement: the statement's own column is added.
        let st = split_statements("  CREATE TABLE (a int);");
        let err = parse_one(tokens::tokenize(st[0].text).expect("tokenizes")).expect_err("bad");
        let (at, _) = parser_error_location("f.sql", &st[0], &err);
        assert_eq!((at.line, at.column), (1, 16));
    }

    #[test]
    fn binary_is_recognised() {
        assert!(binary_reason("CREATE TABLE t (a int);\n").is_none());
        assert!(binary_reason("a\0b").is_some());
        assert!(binary_reason(&"\u{1}\u{2}\u{3}x".repeat(10)).is_some());
    }
}
