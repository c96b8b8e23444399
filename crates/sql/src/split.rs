//! Statement splitter for Postgres SQL files (dumps, `structure.sql`, query files).
//!
//! `sqlparser` cannot parse a whole `pg_dump` file (psql meta-commands, `COPY … FROM stdin` data),
//! and its spans are incomplete, so files are split here first, keeping the byte offset and
//! line/column of each chunk. The splitter knows just enough lexical structure to find the
//! statement-ending `;`: comments (`--`, nested `/* */`), strings (`'…'` with `''`, `E'…'` with
//! backslash escapes), quoted identifiers and dollar-quoted bodies. It never fails and never panics:
//! whatever is left at the end of the input becomes an unterminated chunk.
//!
//! [`split_reader`] does the same on a stream, with bounded memory: a statement longer than
//! [`MAX_STATEMENT_BYTES`] is skipped and reported, never held whole.

use std::io::{self, Read};

/// What kind of chunk the splitter found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RawKind {
    /// An SQL statement.
    Sql,
    /// A psql meta-command line (`\connect db`, `\restrict KEY`, …).
    MetaCommand,
    /// A `COPY … FROM stdin;` statement together with its data block up to the `\.` line.
    CopyData,
}

/// One statement (or psql meta-command, or COPY data block) with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawStatement<'a> {
    /// The statement without the trailing `;` (trimmed). For [`RawKind::CopyData`] this is the
    /// `COPY` statement, its `;`, and the data lines through the `\.` line.
    pub text: &'a str,
    /// The comments/whitespace between the previous chunk and this one (so `-- calls: N`
    /// annotations can be read).
    pub leading: &'a str,
    /// Byte offset of `text` in the source.
    pub offset: usize,
    /// 1-based line of the first char of `text`.
    pub line: u32,
    /// 1-based column (in chars) of the first char of `text`.
    pub column: u32,
    /// What the chunk is.
    pub kind: RawKind,
    /// False when the input ended before a `;` (or, for COPY data, before the `\.` line).
    pub terminated: bool,
}

/// Splits `src` into statements, psql meta-commands and COPY data blocks, in source order.
/// Empty statements (a lone `;`) produce no chunk; their text joins the next chunk's `leading`.
pub fn split_statements(src: &str) -> Vec<RawStatement<'_>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut cursor = LineCursor::default();
    let mut pos = 0;
    while let Some(c) = next_chunk(b, pos, true) {
        let (line, column) = cursor.advance_to(b, c.start);
        out.push(RawStatement {
            // Chunk boundaries are ASCII bytes or the end, so these slices are char boundaries.
            text: src[c.start..c.end].trim_end(),
            leading: &src[c.lead..c.start],
            offset: c.start,
            line,
            column,
            kind: c.kind,
            terminated: c.terminated,
        });
        pos = c.next;
    }
    out
}

/// One chunk found by [`next_chunk`], as byte offsets into the scanned buffer.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    /// Start of the trivia before the chunk (its `leading`).
    lead: usize,
    start: usize,
    end: usize,
    /// Where scanning resumes.
    next: usize,
    terminated: bool,
    kind: RawKind,
    /// False when more input could still change the chunk (a stream not yet at its end).
    complete: bool,
}

/// Finds the next chunk at or after `pos`; `None` when only trivia is left. With `eof` false the
/// buffer may continue, and a chunk that runs into its end is returned with `complete` false.
fn next_chunk(b: &[u8], pos: usize, eof: bool) -> Option<Chunk> {
    let mut lead = pos;
    let mut pos = pos;
    loop {
        let start = skip_trivia(b, pos);
        if start >= b.len() {
            return None;
        }
        let (end, next, terminated, kind) = match b[start] {
            b';' => {
                // An empty statement: nothing to report, keep accumulating `leading`.
                pos = start + 1;
                continue;
            }
            b'\\' => {
                let eol = find_byte(b, start, b'\n').unwrap_or(b.len());
                (eol, eol, true, RawKind::MetaCommand)
            }
            _ => {
                let (end, next, terminated) = scan_statement(b, start);
                if terminated && is_copy_from_stdin(&b[start..end]) {
                    let (data_end, data_next, found) = copy_data_end(b, next);
                    (data_end, data_next, found, RawKind::CopyData)
                } else {
                    (end, next, terminated, RawKind::Sql)
                }
            }
        };
        // A `;` or a line end inside the buffer is final; running into the buffer's end is not.
        let complete = eof
            || next < b.len()
            || (kind == RawKind::Sql && terminated)
            || (kind == RawKind::MetaCommand && end < b.len());
        let end = start + trim_end_len(&b[start..end]);
        lead = lead.min(start);
        return Some(Chunk {
            lead,
            start,
            end,
            next,
            terminated,
            kind,
            complete,
        });
    }
}

/// Length of `b` without trailing white space.
fn trim_end_len(b: &[u8]) -> usize {
    b.iter()
        .rposition(|c| !c.is_ascii_whitespace() && *c != 0x0b)
        .map_or(0, |p| p + 1)
}

/// Line/column (1-based) of a byte offset inside `src`. Offsets past the end are clamped to the
/// end; offsets inside a multi-byte character count as that character.
pub fn line_col(src: &str, offset: usize) -> (u32, u32) {
    let mut off = offset.min(src.len());
    while !src.is_char_boundary(off) {
        off -= 1;
    }
    LineCursor::default().advance_to(src.as_bytes(), off)
}

/// Walks forward through a source, turning increasing byte offsets into line/column in linear
/// total time (a file with thousands of statements must not rescan from the start each time).
/// Works on bytes, so a stream's buffer can be cut in front of it ([`LineCursor::rebase`]).
#[derive(Debug, Clone, Copy)]
struct LineCursor {
    pos: usize,
    line: u32,
    column: u32,
}

impl Default for LineCursor {
    fn default() -> Self {
        LineCursor {
            pos: 0,
            line: 1,
            column: 1,
        }
    }
}

impl LineCursor {
    /// Moves to `offset` (not before the current position) and returns its line/column; columns
    /// count characters (UTF-8 continuation bytes do not start one).
    fn advance_to(&mut self, b: &[u8], offset: usize) -> (u32, u32) {
        let offset = offset.min(b.len());
        if offset > self.pos {
            for &c in &b[self.pos..offset] {
                if c == b'\n' {
                    self.line = self.line.saturating_add(1);
                    self.column = 1;
                } else if c & 0xc0 != 0x80 {
                    self.column = self.column.saturating_add(1);
                }
            }
            self.pos = offset;
        }
        (self.line, self.column)
    }

    /// The buffer lost its first `n` bytes (all already passed).
    fn rebase(&mut self, n: usize) {
        self.pos -= n.min(self.pos);
    }
}

/// Longest statement (or run of comments) read from a stream: a longer one is skipped whole,
/// without being kept in memory, and reported ([`StreamItem::Oversized`]).
pub const MAX_STATEMENT_BYTES: usize = 16 << 20;

/// What [`split_reader`] hands over, in input order.
#[derive(Debug)]
pub enum StreamItem<'a> {
    /// A chunk as [`split_statements`] gives it (`offset` counts from the start of the stream).
    Chunk(RawStatement<'a>),
    /// A statement (or comment) longer than the limit: skipped.
    Oversized {
        /// 1-based line where it starts.
        line: u32,
        /// 1-based column where it starts.
        column: u32,
        /// Its length in bytes.
        bytes: u64,
    },
    /// A chunk whose text is not UTF-8: skipped.
    InvalidUtf8 {
        /// 1-based line where it starts.
        line: u32,
        /// 1-based column where it starts.
        column: u32,
    },
}

/// Bytes read at a time; a statement longer than this makes the buffer grow (doubling) up to
/// `limit`.
const READ_SIZE: usize = 256 << 10;

/// Splits a stream like [`split_statements`] splits a string, holding at most about `limit`
/// bytes at a time: memory does not grow with the input, only with its longest statement.
/// `f` receives each chunk (borrowed from the buffer) in order. Only a read error is an error.
pub fn split_reader<R: Read>(r: R, limit: usize, f: impl FnMut(StreamItem<'_>)) -> io::Result<()> {
    split_reader_sized(r, limit, READ_SIZE, f)
}

/// [`split_reader`] reading `step` bytes at a time (tests use tiny steps to cut everywhere).
fn split_reader_sized<R: Read>(
    mut r: R,
    limit: usize,
    step: usize,
    mut f: impl FnMut(StreamItem<'_>),
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    let mut cursor = LineCursor::default();
    let (mut base, mut pos, mut want, mut eof) = (0usize, 0usize, step, false);
    loop {
        if pos >= step {
            // Drop what was handed over; the cursor already passed it.
            cursor.advance_to(&buf, pos);
            buf.drain(..pos);
            cursor.rebase(pos);
            base += pos;
            pos = 0;
        }
        if !eof && buf.len() - pos < want {
            eof = fill(&mut r, &mut buf, pos + want)?;
        }
        let chunk = next_chunk(&buf, pos, eof);
        let pending = buf.len() - pos;
        match chunk {
            // Read whole because the buffer doubled past the limit: skipped all the same.
            Some(c) if c.complete && c.end - c.start > limit => {
                let (line, column) = cursor.advance_to(&buf, c.start);
                f(StreamItem::Oversized {
                    line,
                    column,
                    bytes: (c.next - c.start) as u64,
                });
                pos = c.next;
                want = step;
            }
            Some(c) if c.complete => {
                let (line, column) = cursor.advance_to(&buf, c.start);
                let text = std::str::from_utf8(&buf[c.start..c.end]);
                let leading = std::str::from_utf8(&buf[c.lead..c.start]).unwrap_or("");
                f(match text {
                    Ok(text) => StreamItem::Chunk(RawStatement {
                        text,
                        leading,
                        offset: base + c.start,
                        line,
                        column,
                        kind: c.kind,
                        terminated: c.terminated,
                    }),
                    Err(_) => StreamItem::InvalidUtf8 { line, column },
                });
                pos = c.next;
                want = step;
            }
            None if eof => return Ok(()),
            // Only part of a statement (or of a comment) is in the buffer: read more, or skip it.
            c if pending > limit => {
                let start = c.map_or(pos, |c| c.start);
                let (line, column) = cursor.advance_to(&buf, start);
                let skipper = Skipper::new(c.is_none());
                let (bytes, rest) = skipper.run(&mut r, &mut buf, start, step, &mut cursor)?;
                if c.is_some() {
                    f(StreamItem::Oversized {
                        line,
                        column,
                        bytes,
                    });
                }
                base += rest.1;
                pos = rest.0;
                eof = rest.2;
                want = step;
            }
            // Doubling, but never past the limit: one byte more tells the statement is over it.
            _ => {
                want = pending
                    .saturating_mul(2)
                    .max(step)
                    .min(limit.saturating_add(1))
            }
        }
    }
}

/// Reads until `buf` holds `target` bytes or the input ends; returns true at the end.
fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>, target: usize) -> io::Result<bool> {
    while buf.len() < target {
        let old = buf.len();
        buf.resize(target, 0);
        let n = loop {
            match r.read(&mut buf[old..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match n {
            Ok(n) => {
                buf.truncate(old + n);
                if n == 0 {
                    return Ok(true);
                }
            }
            Err(e) => {
                buf.truncate(old);
                return Err(e);
            }
        }
    }
    Ok(false)
}

/// Bytes a skipped statement's scan may look ahead (the longest `$tag$` it recognises).
const LOOKAHEAD: usize = 256;

/// The lexical state of a statement being skipped, carried from one buffer to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lex {
    Code,
    LineComment,
    Block(usize),
    Quote { quote: u8, backslash: bool },
    Dollar { tag: Vec<u8>, matched: usize },
}

/// Skips an oversized statement (up to and including its `;`) or run of comments (up to the next
/// code), reading and dropping the input as it goes.
struct Skipper {
    lex: Lex,
    /// The last two bytes seen (`E'` needs to look back).
    prev: [u8; 2],
    /// Bytes still to pass over uninterpreted (the rest of `--`, `/*`, `*/`, `\x`, `$tag$`).
    hold: usize,
    trivia: bool,
}

impl Skipper {
    fn new(trivia: bool) -> Self {
        Skipper {
            lex: Lex::Code,
            prev: [b' ', b' '],
            hold: 0,
            trivia,
        }
    }

    /// Skips from `buf[start..]` on. Returns the bytes skipped and, for the rest, the position in
    /// `buf`, how many bytes were dropped from its front, and whether the input ended.
    fn run<R: Read>(
        mut self,
        r: &mut R,
        buf: &mut Vec<u8>,
        start: usize,
        step: usize,
        cursor: &mut LineCursor,
    ) -> io::Result<(u64, (usize, usize, bool))> {
        let (mut from, mut dropped, mut skipped, mut eof) = (start, 0usize, 0u64, false);
        loop {
            // The last bytes wait for the next read unless the input ended: `--`, `/*` and
            // `$tag$` are recognised by looking ahead.
            let upto = if eof {
                buf.len()
            } else {
                buf.len().saturating_sub(LOOKAHEAD).max(from)
            };
            if let Some(end) = self.feed(&buf[from..], upto - from) {
                skipped += end as u64;
                cursor.advance_to(buf, from + end);
                return Ok((skipped, (from + end, dropped, eof)));
            }
            skipped += (upto - from) as u64;
            cursor.advance_to(buf, upto);
            if eof {
                return Ok((skipped, (upto, dropped, true)));
            }
            buf.drain(..upto);
            cursor.rebase(upto);
            dropped += upto;
            from = 0;
            let target = buf.len() + step;
            eof = fill(r, buf, target)?;
        }
    }

    /// Feeds the first `upto` bytes of `b` (the rest is only looked at); returns the offset just
    /// past what is skipped once it ends among them.
    fn feed(&mut self, b: &[u8], upto: usize) -> Option<usize> {
        for (i, &c) in b[..upto].iter().enumerate() {
            if self.hold > 0 {
                self.hold -= 1;
                self.prev = [self.prev[1], c];
                continue;
            }
            let next = b.get(i + 1).copied();
            match &mut self.lex {
                Lex::Code => match c {
                    b'-' if next == Some(b'-') => self.enter(Lex::LineComment, 1),
                    b'/' if next == Some(b'*') => self.enter(Lex::Block(0), 1),
                    _ if self.trivia && !(c.is_ascii_whitespace() || c == b';') => return Some(i),
                    b';' if !self.trivia => return Some(i + 1),
                    b'\'' | b'"' => {
                        let backslash = c == b'\''
                            && matches!(self.prev[1], b'e' | b'E')
                            && !is_ident_byte(self.prev[0]);
                        self.lex = Lex::Quote {
                            quote: c,
                            backslash,
                        };
                    }
                    b'$' if !is_ident_byte(self.prev[1]) => {
                        if let Some(len) = dollar_tag_len(b, i) {
                            let tag = b[i..i + len].to_vec();
                            self.enter(Lex::Dollar { tag, matched: 0 }, len - 1);
                        }
                    }
                    _ => {}
                },
                Lex::LineComment => {
                    if c == b'\n' {
                        self.lex = Lex::Code;
                    }
                }
                Lex::Block(depth) => {
                    if c == b'*' && next == Some(b'/') {
                        if *depth == 0 {
                            self.enter(Lex::Code, 1);
                        } else {
                            *depth -= 1;
                            self.hold = 1;
                        }
                    } else if c == b'/' && next == Some(b'*') {
                        *depth += 1;
                        self.hold = 1;
                    }
                }
                Lex::Quote { quote, backslash } => {
                    if *backslash && c == b'\\' {
                        self.hold = 1;
                    } else if c == *quote {
                        self.lex = Lex::Code;
                    }
                }
                Lex::Dollar { tag, matched } => {
                    *matched = if c == tag[*matched] {
                        *matched + 1
                    } else {
                        usize::from(c == b'$')
                    };
                    if *matched == tag.len() {
                        self.lex = Lex::Code;
                    }
                }
            }
            self.prev = [self.prev[1], c];
        }
        None
    }

    /// Moves to `lex`, passing over the next `hold` bytes (the rest of its opener).
    fn enter(&mut self, lex: Lex, hold: usize) {
        self.lex = lex;
        self.hold = hold;
    }
}

fn find_byte(b: &[u8], from: usize, needle: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&c| c == needle)
        .map(|p| p + from)
}

/// Bytes that may continue an identifier (a `$` or `'` right after one does not start a quote).
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Skips whitespace, comments and a byte-order mark; returns the first offset of anything else.
fn skip_trivia(b: &[u8], mut i: usize) -> usize {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == 0x0b {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i = find_byte(b, i, b'\n').unwrap_or(b.len());
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
        } else if b[i..].starts_with(BOM) {
            i += BOM.len();
        } else {
            break;
        }
    }
    i
}

/// Skips a (nested) block comment starting at `i` (`/*`); returns the offset after it, or the end.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Skips a quoted string or identifier starting at `i` (the opening quote). With `backslash`,
/// a backslash escapes the next byte (`E'…'` strings). A doubled quote is handled by the caller
/// seeing a new quoted section right after this one, which gives the same boundaries.
fn skip_quoted(b: &[u8], i: usize, quote: u8, backslash: bool) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        let c = b[j];
        if backslash && c == b'\\' {
            j += 2;
        } else if c == quote {
            return j + 1;
        } else {
            j += 1;
        }
    }
    b.len()
}

/// If a dollar-quote opener (`$$` or `$tag$`) starts at `i`, returns its length.
/// `$1` placeholders are not openers: a tag cannot start with a digit.
fn dollar_tag_len(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if let Some(&c) = b.get(j) {
        if c.is_ascii_digit() {
            return None;
        }
    }
    while let Some(&c) = b.get(j) {
        if c == b'$' {
            return Some(j + 1 - i);
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            j += 1;
        } else {
            return None;
        }
    }
    None
}

/// Skips a dollar-quoted body whose opener of `len` bytes starts at `i`; returns the offset after
/// the closing tag, or the end of the input when it is never closed.
fn skip_dollar(b: &[u8], i: usize, len: usize) -> usize {
    let tag = &b[i..i + len];
    let body = i + len;
    b[body..]
        .windows(len)
        .position(|w| w == tag)
        .map_or(b.len(), |p| body + p + len)
}

/// True when `i` is the first non-blank byte of its line.
fn at_line_start(b: &[u8], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        match b[j - 1] {
            b' ' | b'\t' => j -= 1,
            b'\n' => return true,
            _ => return false,
        }
    }
    true
}

/// Scans one SQL statement starting at `start` (a non-trivia byte). Returns the end of its text
/// (the `;` or where it stopped), the offset where scanning resumes, and whether a `;` ended it.
fn scan_statement(b: &[u8], start: usize) -> (usize, usize, bool) {
    let mut i = start;
    let mut prev_ident = false;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        let mut ident = false;
        match c {
            b';' => return (i, i + 1, true),
            b'-' if next == Some(b'-') => i = find_byte(b, i, b'\n').unwrap_or(b.len()),
            b'/' if next == Some(b'*') => i = skip_block_comment(b, i),
            b'\'' => {
                // `E'…'` (not the end of an identifier such as `type'…'`) takes backslash escapes.
                let escape =
                    i > 0 && matches!(b[i - 1], b'e' | b'E') && (i < 2 || !is_ident_byte(b[i - 2]));
                i = skip_quoted(b, i, b'\'', escape);
            }
            b'"' => i = skip_quoted(b, i, b'"', false),
            b'$' if !prev_ident => match dollar_tag_len(b, i) {
                Some(len) => i = skip_dollar(b, i, len),
                None => {
                    ident = true; // `$1`: the digits that follow belong to the placeholder.
                    i += 1;
                }
            },
            // A psql meta-command line inside an unterminated statement ends that statement.
            b'\\' if i > start && at_line_start(b, i) => return (i, i, false),
            _ => {
                ident = is_ident_byte(c);
                i += 1;
            }
        }
        prev_ident = ident;
    }
    (b.len(), b.len(), false)
}

/// True for `COPY … FROM stdin` (whose data block follows the statement in the file).
fn is_copy_from_stdin(text: &[u8]) -> bool {
    if !text
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"copy"))
    {
        return false;
    }
    let mut words = text
        .split(|c| c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b','))
        .filter(|w| !w.is_empty());
    if !words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(b"copy"))
    {
        return false;
    }
    let mut prev_from = false;
    for w in words {
        if prev_from && w.eq_ignore_ascii_case(b"stdin") {
            return true;
        }
        prev_from = w.eq_ignore_ascii_case(b"from");
    }
    false
}

/// Finds the end of a COPY data block that starts after the `;` at `from`: the data begins on the
/// next line and ends with a line holding only `\.`. Returns (end of text, resume offset, found).
fn copy_data_end(b: &[u8], from: usize) -> (usize, usize, bool) {
    let mut line = match find_byte(b, from, b'\n') {
        Some(nl) => nl + 1,
        None => return (from, b.len(), false),
    };
    while line < b.len() {
        let eol = find_byte(b, line, b'\n').unwrap_or(b.len());
        let content = &b[line..eol];
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        if content == b"\\." {
            return (line + content.len(), eol, true);
        }
        line = eol + 1;
    }
    (b.len(), b.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        split_statements(src).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn splits_plain_statements_with_positions() {
        let src = "CREATE TABLE a (id int);\n  SELECT 1;\nSELECT 2";
        let st = split_statements(src);
        assert_eq!(st.len(), 3);
        assert_eq!(st[0].text, "CREATE TABLE a (id int)");
        assert_eq!((st[0].line, st[0].column, st[0].offset), (1, 1, 0));
        assert_eq!(st[1].text, "SELECT 1");
        assert_eq!((st[1].line, st[1].column), (2, 3));
        assert_eq!(st[1].leading, "\n  ");
        assert!(st[1].terminated);
        assert_eq!(st[2].text, "SELECT 2");
        assert!(!st[2].terminated);
        assert_eq!(&src[st[2].offset..st[2].offset + 8], "SELECT 2");
    }

    #[test]
    fn comments_are_leading_and_hide_semicolons() {
        let src = "-- calls: 12; not a split\n/* a; /* nested; */ still; */ SELECT 1 -- x;\n;";
        let st = split_statements(src);
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].text, "SELECT 1 -- x;");
        assert!(st[0].leading.contains("-- calls: 12;"));
        assert_eq!((st[0].line, st[0].column), (2, 31));
    }

    #[test]
    fn trailing_comment_inside_statement_keeps_semicolon_hidden() {
        assert_eq!(
            texts("SELECT 1 -- a;b\n, 2; SELECT 3;"),
            vec!["SELECT 1 -- a;b\n, 2", "SELECT 3"]
        );
    }

    #[test]
    fn strings_with_doubled_quotes_and_e_escapes() {
        let src = "SELECT 'a;''b;'; SELECT E'x\\';y'; SELECT e'\\\\'; SELECT 'c\\'; SELECT 4;";
        assert_eq!(
            texts(src),
            vec![
                "SELECT 'a;''b;'",
                "SELECT E'x\\';y'",
                "SELECT e'\\\\'",
                "SELECT 'c\\'",
                "SELECT 4"
            ]
        );
    }

    #[test]
    fn identifier_ending_in_e_is_not_an_escape_string() {
        // `type'…'` is a typed literal, not E'…': the backslash is literal.
        assert_eq!(
            texts("SELECT type'a\\'; SELECT 2;"),
            vec!["SELECT type'a\\'", "SELECT 2"]
        );
    }

    #[test]
    fn double_quoted_identifiers() {
        assert_eq!(
            texts(r#"CREATE TABLE "a;b" ("x""y;" int); SELECT 1;"#),
            vec![r#"CREATE TABLE "a;b" ("x""y;" int)"#, "SELECT 1"]
        );
    }

    #[test]
    fn dollar_quoted_bodies() {
        let src = "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\n\
                   CREATE FUNCTION g() RETURNS int AS $body$ BEGIN RETURN 1; $x$ ; $x$ END; $body$ LANGUAGE plpgsql;\n\
                   SELECT 3;";
        let t = texts(src);
        assert_eq!(t.len(), 3);
        assert!(t[0].ends_with("LANGUAGE sql"));
        assert!(t[1].ends_with("$body$ LANGUAGE plpgsql"));
        assert_eq!(t[2], "SELECT 3");
    }

    #[test]
    fn placeholders_are_not_dollar_quotes() {
        assert_eq!(
            texts("SELECT * FROM t WHERE a = $1 AND b = $2; SELECT $1$;"),
            vec!["SELECT * FROM t WHERE a = $1 AND b = $2", "SELECT $1$"]
        );
        // A `$` inside an identifier does not open a quote either.
        assert_eq!(
            texts("SELECT a$b$ FROM t; SELECT 2;"),
            vec!["SELECT a$b$ FROM t", "SELECT 2"]
        );
    }

    #[test]
    fn meta_commands_are_their_own_chunks() {
        let src = "\\restrict abc123\nSET x = 1;\n\\connect db\n  SELECT 1;\n\\unrestrict abc123\n";
        let st = split_statements(src);
        let kinds: Vec<_> = st.iter().map(|s| (s.kind, s.text)).collect();
        assert_eq!(
            kinds,
            vec![
                (RawKind::MetaCommand, "\\restrict abc123"),
                (RawKind::Sql, "SET x = 1"),
                (RawKind::MetaCommand, "\\connect db"),
                (RawKind::Sql, "SELECT 1"),
                (RawKind::MetaCommand, "\\unrestrict abc123"),
            ]
        );
        assert_eq!(st[2].line, 3);
    }

    #[test]
    fn meta_command_ends_an_unterminated_statement() {
        let st = split_statements("SELECT 1\n\\connect db\nSELECT 2;");
        assert_eq!(st.len(), 3);
        assert_eq!((st[0].text, st[0].terminated), ("SELECT 1", false));
        assert_eq!(st[1].kind, RawKind::MetaCommand);
        assert_eq!(st[2].text, "SELECT 2");
    }

    #[test]
    fn copy_data_block_is_one_chunk() {
        let src = "COPY public.actor (actor_id, name) FROM stdin;\n1\tPENELOPE; x\n2\t'it''s\n\\.\n\nSELECT 1;";
        let st = split_statements(src);
        assert_eq!(st.len(), 2);
        assert_eq!(st[0].kind, RawKind::CopyData);
        assert!(st[0].terminated);
        assert!(st[0].text.starts_with("COPY public.actor"));
        assert!(st[0].text.ends_with("\\."));
        assert_eq!(st[1].text, "SELECT 1");
        assert_eq!(st[1].line, 6);
    }

    #[test]
    fn copy_without_terminator_is_unterminated() {
        let st = split_statements("COPY t FROM stdin;\n1\n2\n");
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].kind, RawKind::CopyData);
        assert!(!st[0].terminated);
        // COPY to a file is an ordinary statement.
        let st = split_statements("COPY t TO '/tmp/x'; SELECT 1;");
        assert_eq!(st[0].kind, RawKind::Sql);
        assert_eq!(st.len(), 2);
    }

    #[test]
    fn unterminated_quotes_and_comments_run_to_the_end() {
        for src in [
            "SELECT 'abc; SELECT 2;",
            "SELECT $$ x; ",
            "SELECT \"a;",
            "SELECT 1 /* ;",
        ] {
            let st = split_statements(src);
            assert_eq!(st.len(), 1, "{src}");
            assert!(!st[0].terminated, "{src}");
        }
        assert!(split_statements("/* only a comment").is_empty());
    }

    #[test]
    fn empty_statements_and_blank_input() {
        assert!(split_statements("").is_empty());
        assert!(split_statements(" \n\t ;; -- x\n").is_empty());
        let st = split_statements(";\n-- note\n;SELECT 1;");
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].leading, ";\n-- note\n;");
    }

    #[test]
    fn columns_count_chars_and_bom_is_skipped() {
        let src = "\u{feff}SELECT 'é';  SELECT 2;";
        let st = split_statements(src);
        assert_eq!((st[0].line, st[0].column), (1, 2));
        assert_eq!((st[1].line, st[1].column), (1, 15));
        assert_eq!(line_col(src, st[1].offset), (1, 15));
        assert_eq!(line_col(src, 10_000), line_col(src, src.len()));
        assert_eq!(line_col("a\nbc", 3), (2, 2));
        // Inside a multi-byte char: counts as that char.
        assert_eq!(line_col("é", 1), (1, 1));
    }

    /// Everything `split_reader` hands over, as comparable values.
    fn streamed(src: &[u8], limit: usize, step: usize) -> Vec<String> {
        let mut out = Vec::new();
        split_reader_sized(src, limit, step, |item| {
            out.push(match item {
                StreamItem::Chunk(c) => format!(
                    "{:?} {}:{} @{} {:?} {:?} {}",
                    c.kind, c.line, c.column, c.offset, c.text, c.leading, c.terminated
                ),
                other => format!("{other:?}"),
            })
        })
        .expect("reading memory cannot fail");
        out
    }

    #[test]
    fn streaming_gives_the_same_chunks_wherever_the_reads_cut() {
        let inputs = [
            "CREATE TABLE a (id int);\n  SELECT 1;\nSELECT 2",
            "-- calls: 12; not a split\n/* a; /* nested; */ still; */ SELECT 1 -- x;\n;",
            "SELECT 'a;''b;'; SELECT E'x\\';y'; SELECT e'\\\\'; SELECT 'c\\'; SELECT 4;",
            "CREATE FUNCTION g() AS $body$ BEGIN; $x$ ; $x$ END; $body$ LANGUAGE plpgsql;\nSELECT 3;",
            "\\restrict abc\nSET x = 1;\n\\connect db\n  SELECT 1;\n",
            "COPY t (a) FROM stdin;\r\n1\tx;y\r\n\\.\r\nSELECT 2;\r\n",
            "\u{feff}SELECT 'é';  SELECT 2; SELECT \"a;",
            "SELECT 1 /* ;",
        ];
        for src in inputs {
            let whole: Vec<String> = split_statements(src)
                .into_iter()
                .map(|c| {
                    format!(
                        "{:?} {}:{} @{} {:?} {:?} {}",
                        c.kind, c.line, c.column, c.offset, c.text, c.leading, c.terminated
                    )
                })
                .collect();
            for step in [1, 2, 3, 5, 8, 64] {
                assert_eq!(
                    streamed(src.as_bytes(), 1 << 20, step),
                    whole,
                    "{src:?} step {step}"
                );
            }
        }
    }

    #[test]
    fn an_oversized_statement_is_skipped_and_the_next_one_read() {
        let src = "SELECT 1;\nINSERT INTO t VALUES ('x;y', $$a;b$$, E'\\';', /* ; */ 2); -- long\nSELECT 3;";
        // Steps 16 and 64 read the statement whole (the buffer doubles past the limit).
        for step in [1, 4, 16, 64] {
            let got = streamed(src.as_bytes(), 24, step);
            assert_eq!(got.len(), 3, "{got:?}");
            assert_eq!(
                got[1], "Oversized { line: 2, column: 1, bytes: 57 }",
                "step {step}"
            );
            assert!(got[2].starts_with("Sql 3:1 @"), "{got:?}");
            assert!(got[2].contains("\"SELECT 3\""), "{got:?}");
        }
        // A comment longer than the limit is dropped; the statement after it is read.
        let src = format!(
            "/* {} */\n-- {}\nSELECT 9;",
            "x".repeat(100),
            "y".repeat(100)
        );
        let got = streamed(src.as_bytes(), 24, 8);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].starts_with("Sql 3:1 "), "{got:?}");
    }

    #[test]
    fn invalid_utf8_skips_only_its_statement() {
        let got = streamed(b"SELECT 1;\nSELECT '\xff';\nSELECT 3;", 1 << 20, 4);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], "InvalidUtf8 { line: 2, column: 1 }");
        assert!(got[2].starts_with("Sql 3:1"), "{got:?}");
    }

    #[test]
    fn crlf_line_endings() {
        let st = split_statements("SELECT 1;\r\nCOPY t FROM stdin;\r\n1\r\n\\.\r\nSELECT 2;\r\n");
        assert_eq!(st.len(), 3);
        assert_eq!(st[1].kind, RawKind::CopyData);
        assert!(st[1].terminated);
        assert_eq!((st[2].text, st[2].line), ("SELECT 2", 5));
    }
}
