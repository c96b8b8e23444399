//! Reader for Postgres server logs in the stderr format, with any `log_line_prefix`, and its
//! syslog and Amazon RDS variants.
//!
//! A record starts at a line carrying a severity marker (`LOG:  `, `ERROR:  `, `DETAIL:  `, …)
//! after whatever prefix the server was configured with; the lines after it that start with
//! white space (Postgres indents continuation lines with a tab) belong to it. Syslog splits a
//! message into `[N-1]`, `[N-2]`, … lines and writes tabs as `#011`. The reader streams line by
//! line and keeps only the record being assembled.

use super::aggregate::{Aggregator, Occurrence};
use super::bounded::{read_line, MAX_LINE_BYTES};
use super::message::{leading_timestamp, parse_message, parse_parameters, Message, OTHER_MESSAGE};
use memchr::memmem;
use std::io::{self, BufRead};
use std::sync::LazyLock;

/// Searchers built once: building one per line costs more than the search.
static SEVERITY_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b":  "));
static SYSLOG_TAG: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"]: ["));

const SEVERITIES: &[&str] = &[
    "LOG",
    "ERROR",
    "STATEMENT",
    "DETAIL",
    "HINT",
    "CONTEXT",
    "FATAL",
    "WARNING",
    "NOTICE",
    "INFO",
    "PANIC",
    "QUERY",
    "LOCATION",
    "DEBUG",
    "DEBUG1",
    "DEBUG2",
    "DEBUG3",
    "DEBUG4",
    "DEBUG5",
];

/// Where the continuation lines of the current record go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Text,
    Params,
    Ignore,
}

/// The statement record being assembled.
#[derive(Debug)]
struct Pending {
    active: bool,
    line: u32,
    column: u32,
    /// The statement's timestamp; empty when its line had none.
    ts: String,
    duration: Option<f64>,
    text: String,
    /// Its `parameters: …` detail; empty until one is seen.
    params: String,
    /// The session its prefix names (empty: none), and what names it.
    session: String,
    session_kind: &'static str,
    bad_utf8: Option<u32>,
    /// Longer than the limit: skipped when finished.
    oversized: bool,
}

/// Where a `LOG:` line's statement stands: the line, the part from the log prefix on (`body`,
/// the severity at `sev_start` in it) and its number.
struct LineParts<'a> {
    line: &'a str,
    body: &'a str,
    sev_start: usize,
    line_no: u32,
}

impl Pending {
    /// Starts the record of the statement `text` (a slice of `at.line`) of a `LOG:` line: its
    /// place, duration, session and timestamp.
    fn start(&mut self, at: &LineParts<'_>, duration_ms: Option<f64>, text: &str) {
        let (line, body) = (at.line, at.body);
        self.active = true;
        self.line = at.line_no;
        let offset = text.as_ptr() as usize - line.as_ptr() as usize;
        self.column = column_of(line, offset);
        self.duration = duration_ms;
        self.text.clear();
        self.text.push_str(text);
        self.params.clear();
        self.bad_utf8 = None;
        self.oversized = false;
        self.ts.clear();
        let head = body.as_ptr() as usize - line.as_ptr() as usize;
        self.session.clear();
        if let Some((key, kind)) = line
            .get(..head + at.sev_start)
            .and_then(super::sessions::session_of_prefix)
        {
            self.session.push_str(key);
            self.session_kind = kind;
        }
        if let Some(ts) =
            leading_timestamp(&body[..at.sev_start]).or_else(|| leading_timestamp(line))
        {
            self.ts.push_str(ts);
        }
    }

    /// Adds a continuation line to the part of the record it continues (`target`).
    fn continue_with(&mut self, target: Target, text: &str) {
        match target {
            Target::Text if self.active => {
                if self.text.len() + text.len() > MAX_LINE_BYTES {
                    self.oversized = true;
                } else if !self.oversized {
                    self.text.push('\n');
                    self.text.push_str(text);
                }
            }
            Target::Params if self.active => {
                self.params.push('\n');
                self.params.push_str(text);
            }
            _ => {}
        }
    }

    fn new() -> Self {
        Pending {
            active: false,
            line: 0,
            column: 0,
            ts: String::new(),
            duration: None,
            text: String::new(),
            params: String::new(),
            session: String::new(),
            session_kind: "",
            bad_utf8: None,
            oversized: false,
        }
    }
}

/// Finds the severity marker of a log line: returns (severity, start of the severity word, start
/// of the message after `:  `).
pub(crate) fn find_severity(line: &str) -> Option<(&str, usize, usize)> {
    let b = line.as_bytes();
    for colon in SEVERITY_END.find_iter(b) {
        let mut s = colon;
        while s > 0 && (b[s - 1].is_ascii_uppercase() || b[s - 1].is_ascii_digit()) {
            s -= 1;
        }
        if s == colon || (s > 0 && b[s - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let word = &line[s..colon];
        if SEVERITIES.contains(&word) {
            return Some((word, s, colon + 3));
        }
    }
    None
}

/// Syslog line: `… postgres[pid]: [N-M] rest`. Returns (M == 1, offset of `rest`).
fn syslog_part(line: &str) -> Option<(bool, usize)> {
    let b = line.as_bytes();
    let head = &b[..b.len().min(160)];
    let at = SYSLOG_TAG.find(head)?;
    let mut i = at + 4;
    let d0 = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == d0 || b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let m0 = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == m0 || b.get(i) != Some(&b']') {
        return None;
    }
    let first = &line[m0..i] == "1";
    let rest = if b.get(i + 1) == Some(&b' ') {
        i + 2
    } else {
        i + 1
    };
    Some((first, rest.min(b.len())))
}

/// Reads a stderr/syslog/RDS log, adding each statement to `agg`.
pub(crate) fn read<R: BufRead>(mut r: R, agg: &mut Aggregator) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut line_no: u32 = 0;
    let mut pending = Pending::new();
    let mut target = Target::Ignore;
    let mut cont = String::new();
    loop {
        buf.clear();
        let Some(cut) = read_line(&mut r, &mut buf, MAX_LINE_BYTES)? else {
            break;
        };
        line_no = line_no.saturating_add(1);
        if cut {
            // A statement (or continuation) line over the limit: its record is skipped whole.
            if pending.active && target != Target::Ignore {
                pending.oversized = true;
            } else {
                finish(&mut pending, agg);
                target = Target::Ignore;
                agg.oversized(line_no, 1);
            }
            continue;
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        let line = match std::str::from_utf8(&buf) {
            Ok(l) => l,
            Err(_) => {
                let continuation = matches!(buf.first(), Some(b'\t' | b' '));
                if continuation && pending.active && target != Target::Ignore {
                    pending.bad_utf8.get_or_insert(line_no);
                } else {
                    if !continuation {
                        finish(&mut pending, agg);
                        target = Target::Ignore;
                    }
                    agg.skip("invalid UTF-8", line_no, 1);
                }
                continue;
            }
        };
        // Continuation lines: indented (stderr) or `[N-M]` with M > 1 (syslog).
        let (is_cont, body) = match syslog_part(line) {
            Some((false, rest)) => {
                cont.clear();
                cont.push_str(&line[rest..].replace("#011", "\t"));
                (true, cont.as_str())
            }
            Some((true, rest)) => (false, &line[rest..]),
            None => (matches!(line.as_bytes().first(), Some(b'\t' | b' ')), line),
        };
        if is_cont {
            pending.continue_with(target, body.strip_prefix('\t').unwrap_or(body));
            continue;
        }
        let Some((severity, sev_start, msg_start)) = find_severity(body) else {
            if !line.trim().is_empty() {
                agg.skip("not a log line", line_no, 1);
            }
            continue;
        };
        let msg = &body[msg_start..];
        match severity {
            "DETAIL" => {
                if pending.active && pending.params.is_empty() && msg.starts_with("parameters: ") {
                    pending.params.push_str(msg);
                    target = Target::Params;
                } else {
                    target = Target::Ignore;
                }
            }
            "HINT" | "CONTEXT" | "QUERY" | "LOCATION" => target = Target::Ignore,
            "STATEMENT" => {
                finish(&mut pending, agg);
                agg.skip(
                    "STATEMENT: line of an error or notice (not a completed statement)",
                    line_no,
                    1,
                );
                target = Target::Ignore;
            }
            "LOG" => {
                finish(&mut pending, agg);
                let at = LineParts {
                    line,
                    body,
                    sev_start,
                    line_no,
                };
                target = on_log(&mut pending, &at, msg, agg);
            }
            _ => {
                finish(&mut pending, agg);
                agg.skip(OTHER_MESSAGE, line_no, 1);
                target = Target::Ignore;
            }
        }
    }
    finish(&mut pending, agg);
    Ok(())
}

/// A `LOG:` message: a statement starts a record (its text is what continuation lines extend);
/// anything else is skipped with its reason.
fn on_log(pending: &mut Pending, at: &LineParts<'_>, msg: &str, agg: &mut Aggregator) -> Target {
    match parse_message(msg) {
        Message::Statement {
            duration_ms,
            text,
            execute: _,
        } => {
            pending.start(at, duration_ms, text);
            Target::Text
        }
        other => {
            if let Some(reason) = other.skip_reason() {
                agg.skip(reason, at.line_no, 1);
            }
            Target::Ignore
        }
    }
}

/// 1-based column (in characters) of a byte offset in a line.
pub(crate) fn column_of(line: &str, offset: usize) -> u32 {
    let head = line.get(..offset).unwrap_or(line);
    let n = if head.is_ascii() {
        head.len()
    } else {
        head.chars().count()
    };
    u32::try_from(n + 1).unwrap_or(u32::MAX)
}

/// Hands the assembled statement (if any) to the aggregator.
fn finish(p: &mut Pending, agg: &mut Aggregator) {
    if !p.active {
        return;
    }
    p.active = false;
    if let Some(bad) = p.bad_utf8 {
        agg.skip("invalid UTF-8", bad, 1);
        return;
    }
    if p.oversized {
        agg.oversized(p.line, p.column);
        return;
    }
    let bound = if p.params.is_empty() {
        None
    } else {
        parse_parameters(&p.params)
    };
    let occ = Occurrence {
        text: &p.text,
        line: p.line,
        column: p.column,
        calls: 1,
        duration_ms: p.duration,
        timestamp: (!p.ts.is_empty()).then_some(p.ts.as_str()),
        bound: bound.as_deref(),
        session: (!p.session.is_empty()).then_some((p.session.as_str(), p.session_kind)),
        ..Default::default()
    };
    agg.add(&occ);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities() {
        let l = "2020-03-11 20:40:43 CET:[local]:postgres@template1:[12774]:LOG:  duration: 0.027 ms  statement: ";
        let (sev, _, m) = find_severity(l).unwrap();
        assert_eq!(sev, "LOG");
        assert_eq!(&l[m..], "duration: 0.027 ms  statement: ");
        assert!(find_severity("SELECT a FROM b").is_none());
    }

    #[test]
    fn syslog() {
        assert_eq!(
            syslog_part("Feb 11 13:15:40 h postgres[10819]: [7-2] #011 FROM x"),
            Some((false, 41))
        );
        assert!(matches!(
            syslog_part("Feb 11 13:15:40 h postgres[10819]: [7-1] db=p LOG:  x"),
            Some((true, _))
        ));
    }
}
