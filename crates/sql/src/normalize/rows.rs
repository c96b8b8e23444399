//! Bulk `VALUES` lists shortened in the text, before the tokenizer sees them.
//!
//! A 10 MB `INSERT … VALUES (…), (…), …` is 600,000 rows and five million tokens, 1.5 GB as
//! sqlparser tokens, yet its canonical form keeps one row ([`super::collapse_values_rows`]). The
//! rows that collapse would drop are cut from the text first: a linear scan proposes where rows
//! end (quotes, dollar quotes, comments and nested parentheses skipped), and sqlparser's own
//! tokenizer confirms each piece, tokenized alone a few hundred rows at a time; a piece is cut
//! only when its tokens are rows that collapse drops. Every piece starts and ends on a token
//! boundary (after `VALUES`, after a row's `)`), where the tokenizer carries no state that the
//! cut rows could change, so the rest of the statement tokenizes as before: the canonical form,
//! the example and the fingerprint are those of the uncut text.

use super::{canonical_out, code_tokens, tokenize, values_row, Mode, NormalizeError, Out};
use sqlparser::tokenizer::Token;
use std::borrow::Cow;

/// Rows tokenized together while confirming a run of rows…
const CHUNK_ROWS: usize = 256;
/// …as long as they stay this short (a row may be long).
const CHUNK_BYTES: usize = 64 << 10;

/// A statement with the repeated rows of its `VALUES` lists cut out.
#[derive(Debug)]
pub(super) struct Shortened<'a> {
    /// The statement to tokenize.
    pub text: Cow<'a, str>,
    /// Where something was cut (byte offset in `text`) and how many bytes, in order.
    cuts: Vec<(usize, usize)>,
}

impl Shortened<'_> {
    /// `e`, positioned in the shortened text, moved to the same place in `original`.
    pub fn original_position(&self, original: &str, mut e: NormalizeError) -> NormalizeError {
        if self.cuts.is_empty() {
            return e;
        }
        let at = byte_offset(&self.text, e.line, e.column);
        let shift: usize = self
            .cuts
            .iter()
            .take_while(|(o, _)| *o <= at)
            .map(|(_, n)| n)
            .sum();
        (e.line, e.column) = line_column(original, at + shift);
        e
    }
}

/// `sql` without the rows that the token-level collapse of `VALUES` lists would drop.
pub(super) fn drop_repeated_rows(sql: &str) -> Shortened<'_> {
    let b = sql.as_bytes();
    let mut text = String::new();
    let mut cuts = Vec::new();
    // `sql[..copied]` is in `text`; `sound` is a token boundary of the whole statement.
    let (mut copied, mut sound, mut at) = (0, 0, 0);
    while let Some(v) = find_values(b, at) {
        at = v;
        // Scanned first, tokenized only when there is a second row to cut (one-row INSERTs are
        // the common case).
        let Some(first_end) = row_end(b, v) else {
            continue;
        };
        if next_row_end(b, first_end).is_none() {
            continue;
        }
        if !ends_in_values(&sql[sound..v]) {
            // The scan and the tokenizer disagree about the text before: no cut is safe.
            break;
        }
        sound = v;
        let Some(width) = first_row_width(&sql[v..first_end]) else {
            continue;
        };
        (sound, at) = (first_end, first_end);
        let end = literal_rows_end(sql, first_end, width);
        if end > first_end {
            text.push_str(&sql[copied..first_end]);
            cuts.push((text.len(), end - first_end));
            (copied, sound, at) = (end, end, end);
        }
    }
    if cuts.is_empty() {
        return Shortened {
            text: Cow::Borrowed(sql),
            cuts,
        };
    }
    text.push_str(&sql[copied..]);
    Shortened {
        text: Cow::Owned(text),
        cuts,
    }
}

/// True when `piece` tokenizes alone and its last code token is the key word `VALUES`.
fn ends_in_values(piece: &str) -> bool {
    let Ok(toks) = tokenize(piece) else {
        return false;
    };
    let last = toks
        .iter()
        .rev()
        .find(|t| !matches!(t, Token::Whitespace(_) | Token::EOF));
    matches!(last, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("values"))
}

/// The width of the one row of literals `piece` holds, if that is what it holds.
fn first_row_width(piece: &str) -> Option<usize> {
    let out = piece_out(piece)?;
    match values_row(&out, 0) {
        Some((end, width)) if end == out.len() => Some(width),
        _ => None,
    }
}

/// Where the run of rows of literals of `width` columns after `start` (a row's end) ends.
fn literal_rows_end(sql: &str, start: usize, width: usize) -> usize {
    let b = sql.as_bytes();
    let mut end = start;
    loop {
        let mut ends = Vec::new();
        let mut k = end;
        while ends.len() < CHUNK_ROWS && k - end < CHUNK_BYTES {
            match next_row_end(b, k) {
                Some(e) => {
                    ends.push(e);
                    k = e;
                }
                None => break,
            }
        }
        let Some(&last) = ends.last() else {
            return end;
        };
        if all_rows(&sql[end..last], width) {
            end = last;
            continue;
        }
        // Somewhere in this chunk the run stops: find the row, one at a time.
        for e in ends {
            if !all_rows(&sql[end..e], width) {
                return end;
            }
            end = e;
        }
    }
}

/// True when `piece` tokenizes alone into `, (…)` rows of `width` literals only.
fn all_rows(piece: &str, width: usize) -> bool {
    let Some(out) = piece_out(piece) else {
        return false;
    };
    let mut j = 0;
    while j < out.len() {
        if !out[j].is_op(",") {
            return false;
        }
        match values_row(&out, j + 1) {
            Some((e, w)) if w == width => j = e,
            _ => return false,
        }
    }
    j > 0
}

/// The canonical tokens of `piece` tokenized alone, or `None` when it does not tokenize, keeps
/// a number, or holds a JDBC `?` (examples number those by position: none may go).
fn piece_out(piece: &str) -> Option<Vec<Out>> {
    let toks = code_tokens(tokenize(piece).ok()?);
    let jdbc = |t: &Token| match t {
        Token::Question => true,
        Token::Placeholder(p) => p.starts_with('?'),
        _ => false,
    };
    if toks.iter().any(jdbc) {
        return None;
    }
    let mut kept = false;
    let out = canonical_out(toks, Mode::Abstract, &[], &mut kept);
    (!kept).then_some(out)
}

/// A lexical unit of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Word,
    Open,
    Close,
    Comma,
    /// Whitespace or a comment.
    Blank,
    Other,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The unit starting at `b[i]` (`i < b.len()`) and the index past it. Strings, quoted names and
/// dollar quotes are one unit; an unterminated one runs to the end.
fn lex(b: &[u8], i: usize) -> (Lex, usize) {
    let c = b[i];
    let next = b.get(i + 1).copied();
    match c {
        b'(' => (Lex::Open, i + 1),
        b')' => (Lex::Close, i + 1),
        b',' => (Lex::Comma, i + 1),
        b'-' if next == Some(b'-') => {
            let end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |p| i + p + 1);
            (Lex::Blank, end)
        }
        b'/' if next == Some(b'*') => (Lex::Blank, block_comment_end(b, i)),
        b'\'' => {
            // `E'…'` (the E a word of its own) takes backslash escapes.
            let escapes =
                i >= 1 && b[i - 1].eq_ignore_ascii_case(&b'e') && (i < 2 || !is_ident(b[i - 2]));
            (Lex::Other, quoted_end(b, i + 1, b'\'', escapes))
        }
        b'"' => (Lex::Other, quoted_end(b, i + 1, b'"', false)),
        b'$' => (Lex::Other, dollar_end(b, i)),
        c if c.is_ascii_whitespace() => (Lex::Blank, i + 1),
        c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
            let len = b[i..].iter().take_while(|&&c| is_ident(c)).count();
            (Lex::Word, i + len)
        }
        c if c.is_ascii_digit() => {
            let len = b[i..]
                .iter()
                .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                .count();
            (Lex::Other, i + len)
        }
        _ => (Lex::Other, i + 1),
    }
}

/// Index past the closing `quote` of a string whose content starts at `i`.
fn quoted_end(b: &[u8], mut i: usize, quote: u8, escapes: bool) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' if escapes => i += 2,
            q if q == quote && b.get(i + 1) == Some(&quote) => i += 2,
            q if q == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Index past a (nested) block comment starting at `i`.
fn block_comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// Index past `$n`, or past a dollar-quoted string `$tag$…$tag$`, or past a lone `$`.
fn dollar_end(b: &[u8], i: usize) -> usize {
    let tag_len = b[i + 1..]
        .iter()
        .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        .count();
    let after = i + 1 + tag_len;
    let numbered = tag_len > 0 && b[i + 1].is_ascii_digit();
    if numbered || b.get(after) != Some(&b'$') {
        return after.max(i + 1);
    }
    let delimiter = &b[i..=after];
    match memchr::memmem::find(&b[after + 1..], delimiter) {
        Some(p) => after + 1 + p + delimiter.len(),
        None => b.len(),
    }
}

/// Index just past the word `VALUES` (any case) next found from `i`, outside quotes and comments.
fn find_values(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        let (kind, end) = lex(b, i);
        if kind == Lex::Word && b[i..end].eq_ignore_ascii_case(b"values") {
            return Some(end);
        }
        i = end;
    }
    None
}

/// Index past the next unit from `i` that is not blank, with its kind.
fn next_unit(b: &[u8], mut i: usize) -> Option<(Lex, usize)> {
    while i < b.len() {
        match lex(b, i) {
            (Lex::Blank, end) => i = end,
            unit => return Some(unit),
        }
    }
    None
}

/// Index past the parenthesised row that starts (after blanks) at `i`.
fn row_end(b: &[u8], i: usize) -> Option<usize> {
    let (Lex::Open, mut i) = next_unit(b, i)? else {
        return None;
    };
    let mut depth = 1usize;
    while i < b.len() {
        let (kind, end) = lex(b, i);
        match kind {
            Lex::Open => depth += 1,
            Lex::Close => {
                depth -= 1;
                if depth == 0 {
                    return Some(end);
                }
            }
            _ => {}
        }
        i = end;
    }
    None
}

/// Index past `, (…)` starting (after blanks) at `i`.
fn next_row_end(b: &[u8], i: usize) -> Option<usize> {
    let (Lex::Comma, i) = next_unit(b, i)? else {
        return None;
    };
    row_end(b, i)
}

/// The byte offset of 1-based `line`:`column` (characters, as sqlparser counts) in `text`.
fn byte_offset(text: &str, line: u32, column: u32) -> usize {
    let (mut l, mut c) = (1u32, 1u32);
    for (at, ch) in text.char_indices() {
        if (l, c) >= (line, column) {
            return at;
        }
        if ch == '\n' {
            (l, c) = (l + 1, 1);
        } else {
            c += 1;
        }
    }
    text.len()
}

/// The 1-based line and column of byte offset `at` in `text`.
fn line_column(text: &str, at: usize) -> (u32, u32) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.bytes().filter(|&c| c == b'\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before[start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::super::{canonical_tokens_flag, render, shape, Mode};
    use super::*;

    /// The canonical text without the cut, as the normalizer made it before.
    fn uncut(sql: &str, mode: Mode) -> Result<String, NormalizeError> {
        let toks = tokenize(sql)?;
        let mut kept = false;
        let mut out = canonical_out(code_tokens(toks), mode, &[], &mut kept);
        while out.last().is_some_and(|o| o.is_op(";")) {
            out.pop();
        }
        if mode == Mode::Abstract {
            out = super::super::collapse_in_lists(out);
        }
        Ok(render(&super::super::collapse_values_rows(out)).0)
    }

    fn cut(sql: &str, mode: Mode) -> Result<String, NormalizeError> {
        let mut kept = false;
        canonical_tokens_flag(sql, mode, &[], &mut kept).map(|t| render(&t).0)
    }

    #[test]
    fn cut_text_normalizes_as_the_whole() {
        // Each statement and its text with the cut rows gone.
        let cases = [
            (
                "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z') ON CONFLICT DO NOTHING",
                "INSERT INTO t (a, b) VALUES (1, 'x') ON CONFLICT DO NOTHING",
            ),
            (
                "insert into t values (1,'a'),(2,'b') , ( 3 , 'c' )",
                "insert into t values (1,'a')",
            ),
            (
                "INSERT INTO t VALUES (1, 2), (3), (now(), 4)",
                "INSERT INTO t VALUES (1, 2), (3), (now(), 4)",
            ),
            (
                "INSERT INTO t VALUES (1, 2), (3, 4), (5, NULL), (6, 7)",
                "INSERT INTO t VALUES (1, 2), (5, NULL), (6, 7)",
            ),
            (
                "INSERT INTO t VALUES (-1, date '2025-01-01'), (2, date '2025-01-02'), (3, $1)",
                "INSERT INTO t VALUES (-1, date '2025-01-01')",
            ),
            (
                "INSERT INTO t VALUES (1, E'it\\'s'), (2, E'a\\\\'), (3, 'b''c'), (4, $$x)$$)",
                "INSERT INTO t VALUES (1, E'it\\'s')",
            ),
            (
                "INSERT INTO t VALUES (1, $q$ ), ( $q$), /* ) , ( /* nested */ */ (2, 'x')",
                "INSERT INTO t VALUES (1, $q$ ), ( $q$)",
            ),
            (
                "INSERT INTO t VALUES (1, $q$ ), ( $q$) /* ) , ( /* nested */ */, (2, 'x') -- (\n, (3, 'y') ;",
                "INSERT INTO t VALUES (1, $q$ ), ( $q$) ;",
            ),
            (
                // JDBC placeholders are numbered by position in an example: none is cut.
                "INSERT INTO t VALUES (?, ?), (?, ?), (1, 2) ON CONFLICT (a) DO UPDATE SET b = ?",
                "INSERT INTO t VALUES (?, ?), (?, ?), (1, 2) ON CONFLICT (a) DO UPDATE SET b = ?",
            ),
            (
                "INSERT INTO t VALUES ($1, $2), ($3, $4) ON CONFLICT (a) DO UPDATE SET b = $5",
                "INSERT INTO t VALUES ($1, $2) ON CONFLICT (a) DO UPDATE SET b = $5",
            ),
            (
                "WITH v AS (VALUES (1), (2), (3)) INSERT INTO t SELECT * FROM v UNION VALUES (4), (5)",
                "WITH v AS (VALUES (1)) INSERT INTO t SELECT * FROM v UNION VALUES (4)",
            ),
            (
                "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v (n, s) WHERE n IN (1, 2, 3)",
                "SELECT * FROM (VALUES (1, 'a')) AS v (n, s) WHERE n IN (1, 2, 3)",
            ),
            (
                "INSERT INTO \"values\" VALUES (1), (2); INSERT INTO t VALUES (3), (4)",
                "INSERT INTO \"values\" VALUES (1); INSERT INTO t VALUES (3)",
            ),
            (
                "INSERT INTO t VALUES (1, 2.5e3, 0x1f, B'101', X'ff', U&'d\\0061t', N'n'), (2, 1, 2, B'1', X'0', 'a', 'b')",
                "INSERT INTO t VALUES (1, 2.5e3, 0x1f, B'101', X'ff', U&'d\\0061t', N'n')",
            ),
            (
                "INSERT INTO t VALUES (1), (2), (3",
                "INSERT INTO t VALUES (1), (3",
            ),
            (
                "INSERT INTO t VALUES (1), (2), ('open",
                "INSERT INTO t VALUES (1), ('open",
            ),
            (
                "SELECT 'VALUES (1), (2)', \"values\", values_x FROM t",
                "SELECT 'VALUES (1), (2)', \"values\", values_x FROM t",
            ),
        ];
        for (sql, short) in cases {
            assert_eq!(drop_repeated_rows(sql).text, short, "{sql}");
            for mode in [Mode::Abstract, Mode::Concrete] {
                assert_eq!(cut(sql, mode), uncut(sql, mode), "{sql}");
            }
        }
    }

    #[test]
    fn a_bulk_insert_is_cut_to_its_first_row() {
        let rows = ", (2, 'abcdefgh')".repeat(2_000);
        let sql = format!("INSERT INTO t (id, c0) VALUES (1, 'x'){rows};");
        let short = drop_repeated_rows(&sql);
        assert_eq!(short.text, "INSERT INTO t (id, c0) VALUES (1, 'x');");
        assert_eq!(cut(&sql, Mode::Abstract), uncut(&sql, Mode::Abstract));
        assert_eq!(
            shape(&sql).unwrap().sql,
            "INSERT INTO t (id, c0) VALUES ($1, $2)"
        );
        // A row that is not literals ends the cut, wherever it is in a chunk.
        let sql = format!("INSERT INTO t VALUES (1, 'x'){rows}, (3, now()){rows}");
        let short = drop_repeated_rows(&sql);
        assert!(short
            .text
            .starts_with("INSERT INTO t VALUES (1, 'x'), (3, now()), (2, "));
        assert_eq!(cut(&sql, Mode::Concrete), uncut(&sql, Mode::Concrete));
    }

    #[test]
    fn errors_keep_their_place_in_the_original() {
        let rows = ",\n(2, 'y')".repeat(50);
        let sql = format!("INSERT INTO t VALUES (1, 'x'){rows},\n (3, 'open");
        let err = cut(&sql, Mode::Abstract).unwrap_err();
        assert_eq!(Err(err), uncut(&sql, Mode::Abstract));
    }

    /// A value of a row: mostly literals, sometimes what ends a run of rows.
    fn value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            4 => any::<i32>().prop_map(|n| n.to_string()),
            4 => "[a-z(),' ]{0,6}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            1 => "[a-z(),' ]{0,4}".prop_map(|s| format!("E'{}'", s.replace('\'', "\\'"))),
            1 => "[a-z(),' ]{0,4}".prop_map(|s| format!("$${s}$$")),
            1 => (1u32..9).prop_map(|n| format!("${n}")),
            1 => Just("date '2025-01-02'".to_string()),
            1 => Just("NULL".to_string()),
            1 => Just("now()".to_string()),
            1 => Just("?".to_string()),
        ]
    }

    /// What may stand between two values or rows.
    fn gap() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::prop_oneof![
            6 => Just(" ".to_string()),
            2 => Just(String::new()),
            1 => Just("\n".to_string()),
            1 => Just(" /* ), ( */ ".to_string()),
            1 => Just(" -- ), (\n".to_string()),
        ]
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Cutting rows never changes the canonical text, the example or an error.
        #[test]
        fn cutting_rows_changes_nothing(
            rows in proptest::collection::vec(
                proptest::collection::vec((value(), gap()), 1..4), 1..12),
            gaps in proptest::collection::vec(gap(), 12),
            tail in prop_oneof![Just(""), Just(" ON CONFLICT DO NOTHING"), Just(", (1"), Just(" RETURNING ?")],
        ) {
            let rows: Vec<String> = rows
                .iter()
                .map(|r| {
                    let vals: Vec<String> = r.iter().map(|(v, g)| format!("{v}{g}")).collect();
                    format!("({})", vals.join(","))
                })
                .collect();
            let mut list = String::new();
            for (i, r) in rows.iter().enumerate() {
                if i > 0 {
                    list.push(',');
                }
                list.push_str(&gaps[i]);
                list.push_str(r);
            }
            let sql = format!("INSERT INTO t VALUES{list}{tail}");
            for mode in [Mode::Abstract, Mode::Concrete] {
                prop_assert_eq!(cut(&sql, mode), uncut(&sql, mode), "{}", sql);
            }
        }
    }
}
