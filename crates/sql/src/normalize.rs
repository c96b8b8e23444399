//! Statement normalization: literals become `$n` placeholders, `IN (…)` lists collapse to one
//! element, keywords/identifiers/whitespace/comments take one canonical form, and the result is
//! fingerprinted with a stable 64-bit hash.
//!
//! Normalization works on sqlparser's token stream, not on its AST: a log has millions of
//! statements but only a few hundred shapes, and tokenizing is an order of magnitude cheaper than
//! parsing. Each distinct shape is then parsed once ([`Normalizer`] caches by fingerprint) to
//! classify it (select/insert/update/delete versus utility or DDL) and to reject what is not SQL.

use remodel_model::StatementKind;
use sqlparser::ast::{
    visit_relations, ObjectName, Query, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Word};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::ops::ControlFlow;

mod rows;

/// A statement in canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// Canonical text: literals as `$1, $2, …` in order, `IN ($n)`, canonical case and spacing.
    pub sql: String,
    /// Stable 64-bit FNV-1a hash of `sql`.
    pub fingerprint: u64,
    /// What the statement is.
    pub class: StatementClass,
    /// Number of `$n` placeholders in `sql`.
    pub params: usize,
}

/// What a statement is: an access pattern (DML) or something that is counted but not modelled.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatementClass {
    /// SELECT/INSERT/UPDATE/DELETE on application tables.
    Dml(StatementKind),
    /// Transaction control, session settings, DDL, maintenance, catalog queries (e.g. `BEGIN`,
    /// `SET`, `VACUUM`, `DDL CREATE TABLE`, `SELECT pg_stat_statements_reset()`).
    Utility(String),
}

/// Why a statement could not be normalized or classified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {message} (at line {line}, column {column} of the statement)")]
pub struct NormalizeError {
    /// Short, low-cardinality reason used for counting (`not SQL`, `truncated statement`,
    /// `parse error: …`).
    pub reason: String,
    /// The tokenizer or parser message, without its position.
    pub message: String,
    /// 1-based line inside the statement text.
    pub line: u32,
    /// 1-based column inside the statement text.
    pub column: u32,
}

/// The token-level canonical form of a statement (no parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Canonical text with `$n` placeholders.
    pub sql: String,
    /// FNV-1a 64 of `sql`.
    pub fingerprint: u64,
    /// Number of placeholders.
    pub params: usize,
}

/// Normalizes and classifies one statement (no cache; see [`Normalizer`] for bulk use).
pub fn normalize(sql: &str) -> Result<Normalized, NormalizeError> {
    let shape = shape(sql)?;
    let class = classify(&shape.sql, sql)?;
    Ok(Normalized {
        sql: shape.sql,
        fingerprint: shape.fingerprint,
        class,
        params: shape.params,
    })
}

/// Normalizes many statements, parsing each distinct shape only once.
#[derive(Debug, Default)]
pub struct Normalizer {
    classes: HashMap<u64, Result<StatementClass, NormalizeError>>,
}

impl Normalizer {
    /// A normalizer with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Normalizes `sql`; the parse that classifies it runs only for a fingerprint not seen yet.
    pub fn normalize(&mut self, sql: &str) -> Result<Normalized, NormalizeError> {
        let shape = shape(sql)?;
        let class = self.classify_shape(&shape, sql)?;
        Ok(Normalized {
            sql: shape.sql,
            fingerprint: shape.fingerprint,
            class,
            params: shape.params,
        })
    }

    /// Classifies an already computed shape (cached by fingerprint). `original` is the statement
    /// with its literals, parsed when the placeholder form is not valid SQL (e.g. `varchar($1)`).
    pub fn classify_shape(
        &mut self,
        shape: &Shape,
        original: &str,
    ) -> Result<StatementClass, NormalizeError> {
        self.classes
            .entry(shape.fingerprint)
            .or_insert_with(|| classify(&shape.sql, original))
            .clone()
    }

    /// Number of distinct shapes classified so far.
    pub fn distinct(&self) -> usize {
        self.classes.len()
    }
}

/// Formats a fingerprint as 16 lowercase hex digits.
pub fn fingerprint_hex(fp: u64) -> String {
    format!("{fp:016x}")
}

/// Words printed upper-case besides PostgreSQL's reserved key words ([`remodel_model::keywords`]):
/// the statement and clause words people expect in capitals. Every other unquoted word is folded
/// to lower case, as PostgreSQL itself folds unquoted identifiers and non-reserved key words.
const UPPER_WORDS: &[&str] = &[
    "begin",
    "between",
    "by",
    "commit",
    "conflict",
    "copy",
    "deallocate",
    "declare",
    "delete",
    "drop",
    "execute",
    "exists",
    "explain",
    "filter",
    "insert",
    "lock",
    "nothing",
    "nulls",
    "over",
    "partition",
    "prepare",
    "revoke",
    "rollback",
    "set",
    "show",
    "truncate",
    "update",
    "vacuum",
    "values",
];

/// Type names that form typed literals (`date '2025-01-15'`): the type word and the string become
/// one placeholder, as `pg_stat_statements` shows them (`timestamptz $9` normalizes the same way).
const TYPED_LITERAL_TYPES: &[&str] = &[
    "bigint",
    "bool",
    "boolean",
    "bytea",
    "cidr",
    "date",
    "decimal",
    "float4",
    "float8",
    "inet",
    "int",
    "int2",
    "int4",
    "int8",
    "integer",
    "interval",
    "json",
    "jsonb",
    "macaddr",
    "money",
    "numeric",
    "real",
    "smallint",
    "text",
    "time",
    "timestamp",
    "timestamptz",
    "timetz",
    "uuid",
    "varchar",
];

/// Types whose parenthesised modifiers (`varchar(20)`, `numeric(10,2)`) are part of the type, not
/// literals to abstract.
const TYPMOD_TYPES: &[&str] = &[
    "bit",
    "char",
    "character",
    "decimal",
    "float",
    "interval",
    "numeric",
    "time",
    "timestamp",
    "timestamptz",
    "varbit",
    "varchar",
    "varying",
];

fn is_upper_word(lower: &str) -> bool {
    remodel_model::keywords::is_pg_reserved(lower) || UPPER_WORDS.binary_search(&lower).is_ok()
}

/// One token of the canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    /// A literal or placeholder; `Some(text)` keeps the literal (for examples), `None` is `$n`.
    Param(Option<String>),
    /// An upper-cased key word.
    Key(String),
    /// An identifier (lower-cased, or quoted as written).
    Ident(String),
    /// Punctuation or an operator, printed as is.
    Op(String),
}

impl Out {
    fn is_op(&self, s: &str) -> bool {
        matches!(self, Out::Op(o) if o == s)
    }
    fn is_key(&self, s: &str) -> bool {
        matches!(self, Out::Key(k) if k == s)
    }
}

/// What to do with a literal while building the canonical token list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Replace literals and placeholders by `$n` (the pattern).
    Abstract,
    /// Keep literals; replace `$n` by the bound value when one is given (the example).
    Concrete,
}

/// Computes the canonical form of a statement with sqlparser's tokenizer.
pub fn shape(sql: &str) -> Result<Shape, NormalizeError> {
    shape_checked(sql).map(|(s, _)| s)
}

/// Like [`shape`], and also tells whether every number of the statement was abstracted (no
/// `ORDER BY 1` position or `varchar(20)` modifier kept): only then does its [`literal_mask`]
/// determine the shape.
pub fn shape_checked(sql: &str) -> Result<(Shape, bool), NormalizeError> {
    let mut kept_numbers = false;
    let toks = canonical_tokens_flag(sql, Mode::Abstract, &[], &mut kept_numbers)?;
    let (text, params) = render(&toks);
    let shape = Shape {
        fingerprint: remodel_model::text::fnv1a64(text.as_bytes()),
        sql: text,
        params,
    };
    Ok((shape, !kept_numbers))
}

/// Writes into `out` the statement with every string literal emptied (`'…'` → `''`) and every
/// number's digits replaced by `0`, and returns true; returns false (and `out` is meaningless)
/// when the text has anything that makes such a mask ambiguous (comments, backslashes,
/// dollar quotes, a number glued to letters).
///
/// Two statements with the same mask differ only inside literals, so they have the same
/// [`shape`] whenever [`shape_checked`] says the shape is mask-determined. This lets a log
/// reader skip the tokenizer for the millions of repetitions of a few hundred statements.
pub fn literal_mask(sql: &str, out: &mut String) -> bool {
    out.clear();
    let b = sql.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => return false,
            b'-' if b.get(i + 1) == Some(&b'-') => return false,
            b'/' if b.get(i + 1) == Some(&b'*') => return false,
            b'$' if !b.get(i + 1).is_some_and(u8::is_ascii_digit) => return false,
            b'\'' => {
                // A string: keep the quotes, drop the content ('' is an escaped quote).
                out.push_str(&sql[start..=i]);
                let mut k = i + 1;
                loop {
                    match b.get(k) {
                        None | Some(b'\\') => return false,
                        Some(b'\'') if b.get(k + 1) == Some(&b'\'') => k += 2,
                        Some(b'\'') => break,
                        Some(_) => k += 1,
                    }
                }
                out.push('\'');
                i = k + 1;
                start = i;
            }
            b'"' => match memchr::memchr(b'"', &b[i + 1..]) {
                // A quoted identifier is copied as is.
                Some(p) => i += p + 2,
                None => return false,
            },
            c if c.is_ascii_digit() && (i == 0 || !ident(b[i - 1])) => {
                out.push_str(&sql[start..i]);
                let mut k = i;
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                if let Some(&c) = b.get(k) {
                    if c.is_ascii_alphabetic() || c == b'_' {
                        let exp = (c == b'e' || c == b'E')
                            && b.get(k + 1)
                                .is_some_and(|d| d.is_ascii_digit() || *d == b'+' || *d == b'-');
                        if !exp {
                            return false;
                        }
                    }
                }
                out.push('0');
                i = k;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[start..]);
    true
}

/// Renders one concrete instance of a statement in canonical spacing, literals kept and `$n`
/// placeholders replaced by `bound[n-1]` where given (values as logged, e.g. `'42'`).
pub fn example(sql: &str, bound: &[Option<String>]) -> Result<String, NormalizeError> {
    let toks = canonical_tokens(sql, Mode::Concrete, bound)?;
    Ok(render(&toks).0)
}

/// The literal behind each `$n` of an example's [`shape`], in order: `Some(text)` for a literal
/// written in the statement (`interval '14 days'`, `-5`, `'day'`), `None` for a placeholder the
/// example leaves unbound and for an `IN (…)` list collapsed into one `$n`. Index `n - 1` is `$n`
/// of the shape's SQL, so an analyzer can see which constants a normalized pattern hides.
pub fn example_values(example: &str) -> Result<Vec<Option<String>>, NormalizeError> {
    let toks = collapse_in_lists(canonical_tokens(example, Mode::Concrete, &[])?);
    Ok(toks
        .into_iter()
        .filter_map(|t| match t {
            // `$3` or `timestamptz $3`: a placeholder, no literal behind it.
            Out::Param(Some(v)) if v.rsplit(' ').next().is_some_and(|w| w.starts_with('$')) => {
                Some(None)
            }
            Out::Param(v) => Some(v),
            _ => None,
        })
        .collect())
}

/// Parses SQL with the Postgres dialect, as [`Parser::parse_sql`] does, also where
/// pg_stat_statements normalized a field name away: Postgres parses `extract(epoch FROM x)` with
/// the field as a string constant, so the server's text reads `extract($1 FROM x)`, which is no
/// field for sqlparser. That placeholder is read as a field named `$1` (`DateTimeField::Custom`,
/// printed back as the server wrote it): which field it was is not known, and nothing reads more
/// into it.
pub fn parse_sql(sql: &str) -> Result<Vec<Statement>, sqlparser::parser::ParserError> {
    let dialect = PostgreSqlDialect {};
    let mut tokens = Tokenizer::new(&dialect, sql).tokenize_with_location()?;
    let mut code = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i);
    let (mut a, mut b) = (code.next(), code.next());
    let mut fields = Vec::new();
    for c in code {
        if let (Some(a), Some(b)) = (a, b) {
            let extract =
                matches!(&tokens[a].token, Token::Word(w) if w.keyword == Keyword::EXTRACT);
            if extract
                && tokens[b].token == Token::LParen
                && matches!(tokens[c].token, Token::Placeholder(_))
            {
                fields.push(c);
            }
        }
        (a, b) = (b, Some(c));
    }
    for i in fields {
        if let Token::Placeholder(p) = &tokens[i].token {
            // A word that is no key word: sqlparser takes it for a field of its own, printed
            // back as the server wrote it.
            tokens[i].token = Token::Word(Word {
                value: p.clone(),
                quote_style: None,
                keyword: Keyword::NoKeyword,
            });
        }
    }
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
}

fn tokenize(sql: &str) -> Result<Vec<Token>, NormalizeError> {
    let dialect = PostgreSqlDialect {};
    Tokenizer::new(&dialect, sql)
        .with_unescape(false)
        .tokenize()
        .map_err(|e| {
            let unterminated = e.message.to_ascii_lowercase().contains("unterminated");
            NormalizeError {
                reason: if unterminated {
                    "truncated statement".into()
                } else {
                    "not SQL".into()
                },
                message: e.message,
                line: u32::try_from(e.location.line).unwrap_or(u32::MAX),
                column: u32::try_from(e.location.column).unwrap_or(u32::MAX),
            }
        })
}

/// The one way a literal token is written back as SQL text (examples, typed literals). The
/// tokenizer hands `E'…'` and `U&'…'` strings over already unescaped, so printing them as they
/// come (`E'O'Brien'`) would end the string early and let its content be read as SQL
/// (`E'\' LIMIT 99999 --'`); they become standard strings with `''`, which re-parse to the same
/// value. Other literals print as written.
pub fn literal_sql(t: &Token) -> String {
    match t {
        Token::EscapedStringLiteral(v) | Token::UnicodeStringLiteral(v) => {
            remodel_model::ident::literal(v)
        }
        other => other.to_string(),
    }
}

fn literal_text(t: &Token) -> Option<String> {
    match t {
        Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::EscapedStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::DollarQuotedString(_) => Some(t.to_string()),
        _ => None,
    }
}

fn is_placeholder(t: &Token) -> bool {
    matches!(t, Token::Placeholder(_) | Token::Question)
}

fn unquoted_lower(w: &Word) -> Option<String> {
    if w.quote_style.is_none() {
        Some(w.value.to_ascii_lowercase())
    } else {
        None
    }
}

fn canonical_tokens(
    sql: &str,
    mode: Mode,
    bound: &[Option<String>],
) -> Result<Vec<Out>, NormalizeError> {
    let mut kept = false;
    canonical_tokens_flag(sql, mode, bound, &mut kept)
}

/// The canonical tokens; sets `kept_numbers` when a number was kept verbatim (ORDER BY position,
/// type modifier).
fn canonical_tokens_flag(
    sql: &str,
    mode: Mode,
    bound: &[Option<String>],
    kept_numbers: &mut bool,
) -> Result<Vec<Out>, NormalizeError> {
    // A bulk INSERT's repeated rows go before tokenizing: tokens cost ~100 bytes each.
    let short = rows::drop_repeated_rows(sql);
    let toks = match tokenize(&short.text) {
        Ok(t) => t,
        Err(e) => return Err(short.original_position(sql, e)),
    };
    let mut out = canonical_out(code_tokens(toks), mode, bound, kept_numbers);
    // Trailing semicolons are not part of the statement.
    while out.last().is_some_and(|o| o.is_op(";")) {
        out.pop();
    }
    if mode == Mode::Abstract {
        out = collapse_in_lists(out);
    }
    // Both forms: the example stays an instance of the pattern, and neither grows with the rows.
    out = collapse_values_rows(out);
    Ok(out)
}

/// The tokens that are code: no whitespace, no comments.
fn code_tokens(toks: Vec<Token>) -> Vec<Token> {
    toks.into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect()
}

/// One canonical token per code token (typed literals and signed numbers become one).
fn canonical_out(
    toks: Vec<Token>,
    mode: Mode,
    bound: &[Option<String>],
    kept_numbers: &mut bool,
) -> Vec<Out> {
    let mut out: Vec<Out> = Vec::with_capacity(toks.len());
    // Inside an ORDER BY / GROUP BY list, a bare integer is a column position, not a literal.
    let mut in_by_list = false;
    let mut jdbc = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let next = toks.get(i + 1);
        match t {
            Token::Word(w) => {
                if let Some(lower) = unquoted_lower(w) {
                    // Typed literal: `date '…'`, `timestamptz $9`.
                    if typed_literal(&lower, next, out.last()) {
                        let n = next.cloned().unwrap_or(Token::EOF);
                        let typed = format!("{lower} {}", literal_sql(&n));
                        out.push(param_out(mode, &n, Some(&typed), bound));
                        i += 2;
                        continue;
                    }
                    if matches!(w.keyword, Keyword::BY)
                        && out
                            .last()
                            .is_some_and(|o| o.is_key("ORDER") || o.is_key("GROUP"))
                    {
                        in_by_list = true;
                    } else if is_upper_word(&lower)
                        && !matches!(
                            lower.as_str(),
                            "asc" | "desc" | "nulls" | "by" | "collate" | "using"
                        )
                    {
                        in_by_list = false;
                    }
                    let tok = if is_upper_word(&lower) {
                        Out::Key(lower.to_ascii_uppercase())
                    } else {
                        Out::Ident(lower.clone())
                    };
                    out.push(tok);
                    // Type modifiers are part of the type: copy `( … )` verbatim.
                    if TYPMOD_TYPES.binary_search(&lower.as_str()).is_ok()
                        && matches!(next, Some(Token::LParen))
                    {
                        if let Some((copied, j)) = type_modifiers(&toks, i + 1) {
                            *kept_numbers = true;
                            out.extend(copied);
                            i = j;
                            continue;
                        }
                    }
                } else {
                    out.push(Out::Ident(w.to_string()));
                }
            }
            Token::Minus
                if matches!(next, Some(Token::Number(..))) && unary_position(out.last()) =>
            {
                // A negative number is one literal (as pg_stat_statements treats it).
                let n = next.cloned().unwrap_or(Token::EOF);
                out.push(param_out(
                    mode,
                    &n,
                    Some(&format!("-{}", literal_sql(&n))),
                    bound,
                ));
                i += 2;
                continue;
            }
            Token::Number(n, _) if in_by_list && column_position(n, out.last(), next) => {
                *kept_numbers = true;
                out.push(Out::Ident(n.clone()));
            }
            t if is_placeholder(t) => {
                if mode == Mode::Concrete && t.to_string().starts_with('?') {
                    // JDBC `?`: number it so the example stays valid PostgreSQL.
                    jdbc += 1;
                    let dollar = Token::Placeholder(format!("${jdbc}"));
                    out.push(param_out(mode, &dollar, None, bound));
                } else {
                    out.push(param_out(mode, t, None, bound));
                }
            }
            t if literal_text(t).is_some() => out.push(param_out(mode, t, None, bound)),
            Token::SemiColon => {
                in_by_list = false;
                out.push(Out::Op(";".into()));
            }
            Token::LParen | Token::RParen => {
                if matches!(t, Token::RParen) {
                    in_by_list = false;
                }
                out.push(Out::Op(t.to_string()));
            }
            other => {
                // Some tokens render as nothing (the data after `COPY … FROM stdin;`): an
                // empty token would still be spaced, so the canonical form would not be a
                // fixed point.
                let text = other.to_string();
                if !text.is_empty() {
                    out.push(Out::Op(text));
                }
            }
        }
        i += 1;
    }
    out
}

/// True when the word `lower` before `next` starts a typed literal (`date '…'`, `timestamptz
/// $9`), not a cast's type (`x::date`).
fn typed_literal(lower: &str, next: Option<&Token>, prev: Option<&Out>) -> bool {
    TYPED_LITERAL_TYPES.binary_search(&lower).is_ok()
        && next.is_some_and(|n| {
            is_placeholder(n)
                || matches!(
                    n,
                    Token::SingleQuotedString(_) | Token::EscapedStringLiteral(_)
                )
        })
        && !prev.is_some_and(|o| o.is_op("::"))
}

/// A type's modifiers `( n, … )` from `toks[from]` (its `(`) on, copied verbatim (the numbers as
/// identifiers, not literals), and the index after them; `None` when they do not close.
fn type_modifiers(toks: &[Token], from: usize) -> Option<(Vec<Out>, usize)> {
    let mut j = from;
    let mut copied = Vec::new();
    while let Some(tk) = toks.get(j) {
        copied.push(Out::Op(tk.to_string()));
        j += 1;
        if matches!(tk, Token::RParen) {
            let copied = copied.into_iter().map(|o| match o {
                Out::Op(s) if s.chars().all(|c| c.is_ascii_digit()) => Out::Ident(s),
                o => o,
            });
            return Some((copied.collect(), j));
        }
        if !matches!(tk, Token::LParen | Token::Number(..) | Token::Comma) {
            return None;
        }
    }
    None
}

/// True when the number `n` (after `prev`, before `next`) in an ORDER BY / GROUP BY list is a
/// column position, not a literal.
fn column_position(n: &str, prev: Option<&Out>, next: Option<&Token>) -> bool {
    prev.is_some_and(|o| o.is_key("BY") || o.is_op(","))
        && n.bytes().all(|b| b.is_ascii_digit())
        && next.is_none_or(|nx| {
            matches!(nx, Token::Comma | Token::RParen | Token::SemiColon)
                || matches!(nx, Token::Word(w) if matches!(w.keyword,
                    Keyword::ASC | Keyword::DESC | Keyword::NULLS | Keyword::LIMIT
                    | Keyword::OFFSET | Keyword::FOR | Keyword::HAVING | Keyword::UNION
                    | Keyword::EXCEPT | Keyword::INTERSECT | Keyword::FETCH | Keyword::WINDOW))
        })
}

/// True when a `-` at this point is a sign, not a subtraction.
fn unary_position(prev: Option<&Out>) -> bool {
    match prev {
        None => true,
        Some(Out::Key(k)) => !matches!(k.as_str(), "NULL" | "TRUE" | "FALSE" | "END"),
        Some(Out::Op(o)) => !matches!(o.as_str(), ")" | "]"),
        Some(Out::Ident(_)) | Some(Out::Param(_)) => false,
    }
}

fn param_out(mode: Mode, t: &Token, literal: Option<&str>, bound: &[Option<String>]) -> Out {
    match mode {
        Mode::Abstract => Out::Param(None),
        Mode::Concrete => {
            let text = literal
                .map(str::to_string)
                .unwrap_or_else(|| literal_sql(t));
            // `$n` (possibly the value of a typed literal `timestamptz $9`): substitute.
            let dollar = text.rsplit(' ').next().unwrap_or("");
            if let Some(n) = dollar
                .strip_prefix('$')
                .and_then(|d| d.parse::<usize>().ok())
            {
                if let Some(Some(v)) = n.checked_sub(1).and_then(|k| bound.get(k)) {
                    let prefix = &text[..text.len() - dollar.len()];
                    return Out::Param(Some(format!("{prefix}{v}")));
                }
            }
            Out::Param(Some(text))
        }
    }
}

/// `IN ($1, $2, …)` of any length becomes `IN ($1)`.
fn collapse_in_lists(toks: Vec<Out>) -> Vec<Out> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if toks[i].is_key("IN") && toks.get(i + 1).is_some_and(|t| t.is_op("(")) {
            // Scan `( P (, P)* )`.
            let mut j = i + 2;
            let mut n = 0;
            while let Some(Out::Param(_)) = toks.get(j) {
                n += 1;
                j += 1;
                match toks.get(j) {
                    Some(t) if t.is_op(",") => j += 1,
                    _ => break,
                }
            }
            let closes = toks.get(j).is_some_and(|t| t.is_op(")"));
            if n >= 1 && closes {
                out.push(toks[i].clone());
                out.push(Out::Op("(".into()));
                out.push(Out::Param(None));
                i = j; // continue at `)`
                continue;
            }
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}

/// `VALUES (a, b), (c, d), …` with two or more rows of literals only, all of one width, keeps
/// its first row: a multi-row INSERT is one access pattern whatever its row count, and a 20 MB
/// bulk INSERT must not become a 20 MB pattern.
fn collapse_values_rows(toks: Vec<Out>) -> Vec<Out> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        out.push(toks[i].clone());
        if !toks[i].is_key("VALUES") {
            i += 1;
            continue;
        }
        let row = |j: usize| values_row(&toks, j);
        let Some((first_end, width)) = row(i + 1) else {
            i += 1;
            continue;
        };
        let mut end = first_end;
        while toks.get(end).is_some_and(|t| t.is_op(",")) {
            match row(end + 1) {
                Some((e, w)) if w == width => end = e,
                _ => break,
            }
        }
        out.extend(toks[i + 1..first_end].iter().cloned());
        i = end;
    }
    out
}

/// The row of literals `( P (, P)* )` starting at `toks[j]`: where it ends, and its width.
fn values_row(toks: &[Out], mut j: usize) -> Option<(usize, usize)> {
    if !toks.get(j)?.is_op("(") {
        return None;
    }
    let mut width = 0;
    j += 1;
    while let Some(Out::Param(_)) = toks.get(j) {
        width += 1;
        j += 1;
        if toks.get(j).is_some_and(|t| t.is_op(",")) {
            j += 1;
        }
    }
    (width > 0 && toks.get(j)?.is_op(")")).then_some((j + 1, width))
}

/// Joins canonical tokens with canonical spacing and numbers the placeholders.
fn render(toks: &[Out]) -> (String, usize) {
    let mut s = String::with_capacity(toks.len() * 6);
    let mut params = 0usize;
    for (i, t) in toks.iter().enumerate() {
        let prev = if i > 0 { toks.get(i - 1) } else { None };
        if let Some(p) = prev {
            if space_between(if i >= 2 { toks.get(i - 2) } else { None }, p, t) {
                s.push(' ');
            }
        }
        match t {
            Out::Param(None) => {
                params += 1;
                let _ = write!(s, "${params}");
            }
            Out::Param(Some(v)) => s.push_str(v),
            Out::Key(k) => s.push_str(k),
            Out::Ident(w) => s.push_str(w),
            Out::Op(o) => s.push_str(o),
        }
    }
    (s, params)
}

fn space_between(before_prev: Option<&Out>, prev: &Out, t: &Out) -> bool {
    if prev.is_op("(") || prev.is_op("[") || prev.is_op(".") || prev.is_op("::") {
        return false;
    }
    if let Out::Op(o) = t {
        match o.as_str() {
            ")" | "]" | "," | ";" | "." | "::" | "[" => return false,
            "(" => {
                // A function call hugs its name; `INSERT INTO t (…)` keeps the space.
                let name = matches!(prev, Out::Ident(_))
                    || matches!(prev, Out::Key(k) if matches!(k.as_str(), "CAST" | "ANY" | "SOME" | "ALL" | "LEFT" | "RIGHT"));
                let after_table = before_prev.is_some_and(|b| {
                    b.is_key("INTO") || b.is_key("TABLE") || b.is_key("REFERENCES")
                });
                return !name || after_table;
            }
            _ => {}
        }
    }
    true
}

/// Classifies a canonical statement by parsing it (falling back to the literal original when the
/// placeholder form is not valid SQL, e.g. `varchar($1)` or `SET x TO $1`).
fn classify(canonical: &str, original: &str) -> Result<StatementClass, NormalizeError> {
    let dialect = PostgreSqlDialect {};
    // When neither parses, the error is the original's: it quotes the user's text as written
    // (not the canonical case) and its positions are those of the input.
    let parsed = parse_sql(canonical).or_else(|_| Parser::parse_sql(&dialect, original));
    // A long operator chain would overflow the stack in the relation visitor (and in Drop).
    let parsed = parsed.map(|mut stmts| {
        let deep = stmts
            .iter_mut()
            .map(crate::long_chains::make_shallow)
            .find_map(Result::err);
        (stmts, deep)
    });
    let parsed = match parsed {
        Ok((_, Some(deep))) => {
            return Err(NormalizeError {
                reason: "too deep".into(),
                message: deep.to_string(),
                line: 1,
                column: 1,
            })
        }
        Ok((stmts, None)) => Ok(stmts),
        Err(e) => Err(e),
    };
    match parsed {
        Ok(stmts) => match stmts.as_slice() {
            [] => Err(NormalizeError {
                reason: "empty statement".into(),
                message: "no statement".into(),
                line: 1,
                column: 1,
            }),
            [one] => Ok(class_of(one, canonical)),
            [first, ..] => Ok(class_of(first, canonical)),
        },
        Err(e) => {
            let mut err = parse_error(&e.to_string());
            if err.reason != "truncated statement"
                && err.message.ends_with("found: EOF")
                && looks_cut(canonical)
            {
                err.reason = "truncated statement".into();
            }
            Err(err)
        }
    }
}

/// True when a statement that failed at its end looks cut off (open parentheses, or ending on a
/// comma, an operator or a word that needs something after it) rather than merely unsupported.
fn looks_cut(canonical: &str) -> bool {
    let mut depth = 0i32;
    for c in canonical.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
    }
    if depth > 0 {
        return true;
    }
    let last = canonical.rsplit(' ').next().unwrap_or("");
    matches!(
        last,
        "," | "="
            | "<"
            | ">"
            | "<="
            | ">="
            | "<>"
            | "+"
            | "-"
            | "*"
            | "/"
            | "||"
            | "AND"
            | "OR"
            | "NOT"
            | "WHERE"
            | "FROM"
            | "SELECT"
            | "SET"
            | "BY"
            | "ON"
            | "JOIN"
            | "IN"
            | "VALUES"
            | "INTO"
            | "AS"
            | "LIKE"
            | "THEN"
            | "WHEN"
            | "ELSE"
            | "CASE"
            | "IS"
            | "BETWEEN"
            | "HAVING"
            | "LIMIT"
            | "OFFSET"
            | "UPDATE"
            | "DELETE"
            | "INSERT"
    ) || last.ends_with(',')
}

/// Splits sqlparser's "… at Line: x, Column: y" into a message and a position.
fn parse_error(msg: &str) -> NormalizeError {
    let msg = msg.strip_prefix("sql parser error: ").unwrap_or(msg);
    let (body, line, column) = match msg.rfind(" at Line: ") {
        Some(at) => {
            let pos = &msg[at + " at Line: ".len()..];
            let mut parts = pos.split(", Column: ");
            let line = parts
                .next()
                .and_then(|l| l.trim().parse().ok())
                .unwrap_or(1);
            let column = parts
                .next()
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(1);
            (&msg[..at], line, column)
        }
        None => (msg, 1, 1),
    };
    let truncated = body.contains("Unterminated");
    NormalizeError {
        reason: if truncated {
            "truncated statement".into()
        } else {
            format!("parse error: {body}")
        },
        message: body.to_string(),
        line,
        column,
    }
}

/// Leading key words of a statement (`CREATE UNIQUE INDEX`, `ALTER TABLE`), upper-cased.
fn leading_words(canonical: &str, max: usize) -> String {
    let mut words = Vec::new();
    for w in canonical.split(|c: char| !c.is_ascii_alphabetic() && c != '_') {
        if w.is_empty() {
            break;
        }
        let up = w.to_ascii_uppercase();
        let modifier = matches!(
            up.as_str(),
            "OR" | "REPLACE"
                | "UNIQUE"
                | "TEMP"
                | "TEMPORARY"
                | "UNLOGGED"
                | "MATERIALIZED"
                | "GLOBAL"
                | "LOCAL"
                | "IF"
                | "NOT"
                | "EXISTS"
                | "CONCURRENTLY"
                | "RECURSIVE"
        );
        words.push(up);
        if words.len() >= max && !modifier {
            break;
        }
        if words.len() >= max + 4 {
            break;
        }
    }
    words.join(" ")
}

fn class_of(stmt: &Statement, canonical: &str) -> StatementClass {
    use StatementClass::{Dml, Utility};
    match stmt {
        Statement::Query(q) => query_class(q, canonical),
        Statement::Insert(_) => Dml(StatementKind::Insert),
        Statement::Update(_) => Dml(StatementKind::Update),
        Statement::Delete(_) => Dml(StatementKind::Delete),
        Statement::StartTransaction { .. } => Utility("BEGIN".into()),
        Statement::Commit { .. } => Utility("COMMIT".into()),
        Statement::Rollback { .. } => Utility("ROLLBACK".into()),
        Statement::Set(_) => Utility("SET".into()),
        Statement::ShowVariable { .. } | Statement::ShowVariables { .. } => Utility("SHOW".into()),
        Statement::Explain { .. } | Statement::ExplainTable { .. } => Utility("EXPLAIN".into()),
        Statement::Copy { .. } => Utility("COPY".into()),
        Statement::Truncate { .. } => Utility("TRUNCATE".into()),
        Statement::Vacuum(_) | Statement::Analyze { .. } => Utility(leading_words(canonical, 1)),
        Statement::Lock(_) | Statement::LockTables { .. } => Utility("LOCK".into()),
        Statement::Prepare { .. } => Utility("PREPARE".into()),
        Statement::Execute { .. } => Utility("EXECUTE".into()),
        Statement::Deallocate { .. } => Utility("DEALLOCATE".into()),
        Statement::Declare { .. } => Utility("DECLARE".into()),
        Statement::Fetch { .. } => Utility("FETCH".into()),
        Statement::Savepoint { .. } | Statement::ReleaseSavepoint { .. } => {
            Utility(leading_words(canonical, 1))
        }
        _ => {
            let first = leading_words(canonical, 1);
            if matches!(
                first.as_str(),
                "CREATE" | "ALTER" | "DROP" | "COMMENT" | "GRANT" | "REVOKE" | "REFRESH"
            ) {
                Utility(format!("DDL {}", leading_words(canonical, 2)))
            } else if first.is_empty() {
                Utility("other".into())
            } else {
                Utility(first)
            }
        }
    }
}

/// The kind of a query statement: a SELECT (or WITH … INSERT/UPDATE/DELETE) on application
/// tables is DML; a SELECT that reads no table (`SELECT version()`) or only system catalogs is
/// utility, since it is not an access pattern of the application.
fn query_class(q: &Query, canonical: &str) -> StatementClass {
    let kind = match q.body.as_ref() {
        SetExpr::Insert(_) => StatementKind::Insert,
        SetExpr::Update(_) => StatementKind::Update,
        SetExpr::Delete(_) => StatementKind::Delete,
        _ => StatementKind::Select,
    };
    if kind != StatementKind::Select {
        return StatementClass::Dml(kind);
    }
    let ctes: HashSet<String> = collect_cte_names(q);
    let mut tables = Vec::new();
    let _ = visit_relations(q, |name: &ObjectName| {
        let full = name.to_string().to_ascii_lowercase();
        if !ctes.contains(&full) {
            tables.push(full);
        }
        ControlFlow::<()>::Continue(())
    });
    let has_table_function = has_table_function(q);
    if tables.is_empty() {
        if has_table_function {
            return StatementClass::Dml(StatementKind::Select);
        }
        // Name the functions called: `SELECT pg_stat_statements_reset()`.
        let calls: Vec<&str> = canonical
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| w.ends_with("()"))
            .collect();
        return StatementClass::Utility(match calls.as_slice() {
            [one] => format!("SELECT {one}"),
            _ => "SELECT without table".into(),
        });
    }
    if tables.iter().all(|t| is_system_relation(t)) {
        return StatementClass::Utility("SELECT on system catalogs".into());
    }
    StatementClass::Dml(StatementKind::Select)
}

fn is_system_relation(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).trim_matches('"');
    name.starts_with("pg_catalog.")
        || name.starts_with("information_schema.")
        || last.starts_with("pg_")
}

fn collect_cte_names(q: &Query) -> HashSet<String> {
    struct Ctes(HashSet<String>);
    impl Visitor for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if let Some(with) = &q.with {
                for cte in &with.cte_tables {
                    self.0.insert(cte.alias.name.value.to_ascii_lowercase());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = Ctes(HashSet::new());
    let _ = q.visit(&mut v);
    v.0
}

/// True when the query reads from a set-returning function (`FROM generate_series(…)`).
fn has_table_function(q: &Query) -> bool {
    struct Funcs(bool);
    impl Visitor for Funcs {
        type Break = ();
        fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
            if matches!(
                t,
                TableFactor::Function { .. } | TableFactor::TableFunction { .. }
            ) || matches!(t, TableFactor::Table { args: Some(_), .. })
            {
                self.0 = true;
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = Funcs(false);
    let _ = q.visit(&mut v);
    v.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_are_sorted() {
        for list in [UPPER_WORDS, TYPED_LITERAL_TYPES, TYPMOD_TYPES] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, list);
        }
    }

    #[test]
    fn literals_in_lists_and_case() {
        let a = shape("select * from T where a in (1, 2, 3) and b = 'x' -- c\n limit 10;").unwrap();
        assert_eq!(a.sql, "SELECT * FROM t WHERE a IN ($1) AND b = $2 LIMIT $3");
        let b = shape("SELECT *   FROM t WHERE a IN (?) AND b = $7 LIMIT 5").unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
    }

    #[test]
    fn typed_literals_signs_positions_typmods() {
        let s = shape("SELECT x::numeric(10,2), date '2025-01-01' FROM t WHERE a = b + -4 AND c - 1 > 0 ORDER BY 1, 2 DESC").unwrap();
        assert_eq!(
            s.sql,
            "SELECT x::numeric(10, 2), $1 FROM t WHERE a = b + $2 AND c - $3 > $4 ORDER BY 1, 2 DESC"
        );
    }

    #[test]
    fn extract_of_a_placeholder_field_parses() {
        // pg_stat_statements' text of `extract(epoch FROM started_at)`.
        let sql = "SELECT extract($1 FROM started_at) FROM trips WHERE driver_id = $2";
        let n = normalize(sql).expect("normalizes");
        assert_eq!(n.class, StatementClass::Dml(StatementKind::Select));
        assert_eq!(n.sql, sql);
        let stmts = parse_sql(sql).expect("parses");
        assert_eq!(
            stmts[0].to_string(),
            "SELECT EXTRACT($1 FROM started_at) FROM trips WHERE driver_id = $2"
        );
        // Elsewhere a placeholder stays one, and a field written out is that field.
        let other = parse_sql("SELECT $1 FROM t WHERE extract(epoch FROM c) > $2").expect("parses");
        assert_eq!(
            other[0].to_string(),
            "SELECT $1 FROM t WHERE EXTRACT(EPOCH FROM c) > $2"
        );
    }

    #[test]
    fn escaped_strings_are_written_back_as_standard_strings() {
        // The example must re-parse to the same statement: a quote inside never ends the string.
        let e = example(
            r"SELECT id FROM t WHERE owner = E'\' LIMIT 99999 --' ORDER BY c LIMIT 5",
            &[],
        )
        .unwrap();
        assert_eq!(
            e,
            "SELECT id FROM t WHERE owner = ''' LIMIT 99999 --' ORDER BY c LIMIT 5"
        );
        assert_eq!(
            example(r"SELECT 1 FROM t WHERE a = E'O\'Brien' AND b = E'a\\'", &[]).unwrap(),
            r"SELECT 1 FROM t WHERE a = 'O''Brien' AND b = 'a\'"
        );
    }

    #[test]
    fn parse_errors_quote_the_statement_as_written() {
        let err = normalize("SELECT a FROM t WHERE b = 1 GROUPE BY a").unwrap_err();
        assert!(err.message.contains("GROUPE"), "{err}");
    }

    #[test]
    fn multi_row_values_keep_one_row() {
        let rows = (1..=500)
            .map(|i| format!("({i}, 'n{i}')"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("INSERT INTO t (a, b) VALUES {rows} ON CONFLICT DO NOTHING");
        let s = shape(&sql).unwrap();
        assert_eq!(
            s.sql,
            "INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        );
        assert_eq!(
            s.fingerprint,
            shape("insert into t (a, b) values (7, 'x')on conflict do nothing")
                .unwrap()
                .fingerprint
        );
        assert_eq!(
            example(&sql, &[]).unwrap(),
            "INSERT INTO t (a, b) VALUES (1, 'n1') ON CONFLICT DO NOTHING"
        );
        // Rows of other widths or with expressions are kept as written.
        let kept = shape("INSERT INTO t VALUES (1, 2), (3), (now(), 4)").unwrap();
        assert_eq!(kept.sql, "INSERT INTO t VALUES ($1, $2), ($3), (now(), $4)");
    }

    #[test]
    fn example_substitutes_bound_values() {
        let e = example(
            "SELECT * FROM t WHERE id = $1 AND k = 'drv_' || $2",
            &[Some("'7'".into()), None],
        )
        .unwrap();
        assert_eq!(e, "SELECT * FROM t WHERE id = '7' AND k = 'drv_' || $2");
    }

    #[test]
    fn example_values_follow_the_shape_numbering() {
        let sql = "SELECT * FROM t WHERE a IN (1, 2) AND now() - d < interval '14 days' \
                   AND date_trunc('day', e) = $1 AND f * -2 > timestamptz $9";
        let s = shape(sql).unwrap();
        assert_eq!(
            s.sql,
            "SELECT * FROM t WHERE a IN ($1) AND now() - d < $2 AND date_trunc($3, e) = $4 AND f * $5 > $6"
        );
        let v = example_values(sql).unwrap();
        let want: Vec<Option<String>> = vec![
            None,
            Some("interval '14 days'".into()),
            Some("'day'".into()),
            None,
            Some("-2".into()),
            None,
        ];
        assert_eq!(v, want);
    }
}

#[cfg(test)]
mod mask_tests {
    use super::*;

    fn mask(s: &str) -> Option<String> {
        let mut out = String::new();
        literal_mask(s, &mut out).then_some(out)
    }

    #[test]
    fn masks_literals_only() {
        assert_eq!(
            mask("SELECT a1 FROM t WHERE x = 42 AND y = 'it''s' AND z = $3").as_deref(),
            Some("SELECT a1 FROM t WHERE x = 0 AND y = '' AND z = $3")
        );
        assert_eq!(
            mask("SELECT \"t 1\" FROM t"),
            Some("SELECT \"t 1\" FROM t".into())
        );
        for ambiguous in [
            "SELECT 1 -- x",
            "SELECT /* 1 */ 2",
            "SELECT E'\\n'",
            "SELECT $$x$$",
            "SELECT 0xff",
            "SELECT 'open",
        ] {
            assert_eq!(mask(ambiguous), None, "{ambiguous}");
        }
    }

    #[test]
    fn kept_numbers_make_the_mask_insufficient() {
        // Same mask, different shapes: shape_checked must say the mask does not determine them.
        for (a, b) in [
            ("SELECT a FROM t ORDER BY 1", "SELECT a FROM t ORDER BY 2"),
            ("SELECT x::varchar(10)", "SELECT x::varchar(20)"),
        ] {
            assert_eq!(mask(a).map(|m| m.len()), mask(b).map(|m| m.len()));
            let (sa, da) = shape_checked(a).unwrap();
            let (sb, _) = shape_checked(b).unwrap();
            assert_ne!(sa.fingerprint, sb.fingerprint);
            assert!(!da);
        }
        let (_, determined) = shape_checked("SELECT a FROM t WHERE b = 1 LIMIT 5").unwrap();
        assert!(determined);
    }
}
