//! The parts of a Postgres log message that carry statements, shared by the stderr, csvlog and
//! jsonlog readers: `duration: … ms  statement: …`, `execute <name>: …`, `DETAIL:  parameters: …`.

use super::aggregate::{Aggregator, Occurrence};

/// What one `LOG:` message says.
#[derive(Debug, PartialEq)]
pub(crate) enum Message<'a> {
    /// A statement (`statement:` or `execute <name>:`), with its duration if logged with one.
    Statement {
        duration_ms: Option<f64>,
        text: &'a str,
        execute: bool,
    },
    /// The parse or bind step of the extended protocol (its `execute` is what is counted).
    ParseBind,
    /// `duration: … ms` with no statement text (`log_duration`).
    DurationOnly,
    /// Any other message (connections, checkpoints, autovacuum, errors …).
    Other,
}

/// Skip reason for a message that carries no statement (other severities included).
pub(crate) const OTHER_MESSAGE: &str = "other log message (connection, checkpoint …)";

impl Message<'_> {
    /// Why this message is skipped, or `None` for a statement.
    pub(crate) fn skip_reason(&self) -> Option<&'static str> {
        match self {
            Message::Statement { .. } => None,
            Message::ParseBind => Some("parse/bind step (its execute is counted)"),
            Message::DurationOnly => Some("duration without statement text"),
            Message::Other => Some(OTHER_MESSAGE),
        }
    }
}

/// One record of a structured log (csvlog, jsonlog): the fields that carry a statement.
pub(crate) struct LogRecord<'a> {
    /// Line of the record in its file.
    pub line: u32,
    /// `error_severity`: only `LOG` messages carry statements.
    pub severity: &'a str,
    /// The message text (`duration: … statement: …`).
    pub message: &'a str,
    /// `parameters: $1 = …` when the statement had bound parameters.
    pub detail: Option<&'a str>,
    /// The record's timestamp as written, if it has one.
    pub timestamp: Option<&'a str>,
}

/// Adds a structured log record to `agg`: its statement, or a counted skip.
pub(crate) fn add_record(agg: &mut Aggregator, rec: &LogRecord<'_>) {
    if rec.severity != "LOG" {
        agg.skip(OTHER_MESSAGE, rec.line, 1);
        return;
    }
    let msg = parse_message(rec.message);
    let Message::Statement {
        duration_ms, text, ..
    } = msg
    else {
        if let Some(reason) = msg.skip_reason() {
            agg.skip(reason, rec.line, 1);
        }
        return;
    };
    let bound = rec.detail.and_then(parse_parameters);
    agg.add(&Occurrence {
        text,
        line: rec.line,
        column: 1,
        calls: 1,
        duration_ms,
        timestamp: rec.timestamp,
        bound: bound.as_deref(),
        ..Default::default()
    });
}

/// Classifies the text after `LOG:  ` (or the `message` field of csvlog/jsonlog).
pub(crate) fn parse_message(msg: &str) -> Message<'_> {
    let mut rest = msg;
    let mut duration_ms = None;
    if let Some(after) = rest.strip_prefix("duration: ") {
        let end = after
            .bytes()
            .position(|c| !(c.is_ascii_digit() || c == b'.'))
            .unwrap_or(after.len());
        duration_ms = after[..end].parse::<f64>().ok();
        let unit = after[end..].strip_prefix(" ms").unwrap_or(&after[end..]);
        rest = unit.trim_start_matches(' ');
        if rest.is_empty() {
            return Message::DurationOnly;
        }
    }
    if let Some(text) = rest.strip_prefix("statement: ") {
        return Message::Statement {
            duration_ms,
            text,
            execute: false,
        };
    }
    if rest == "statement:" {
        return Message::Statement {
            duration_ms,
            text: "",
            execute: false,
        };
    }
    for (step, is_exec) in [("execute ", true), ("parse ", false), ("bind ", false)] {
        if let Some(after) = rest.strip_prefix(step) {
            // `execute <name>: SQL`; the name may be `<unnamed>` or `S_1/C_2`.
            let colon = memchr::memchr_iter(b':', after.as_bytes())
                .find(|&i| after.as_bytes().get(i + 1) == Some(&b' '));
            if let Some(colon) = colon {
                if !is_exec {
                    return Message::ParseBind;
                }
                let text = &after[colon + 2..];
                return Message::Statement {
                    duration_ms,
                    text,
                    execute: true,
                };
            }
        }
    }
    if duration_ms.is_some() {
        return Message::DurationOnly;
    }
    Message::Other
}

/// Parses `parameters: $1 = '…', $2 = NULL, …` (the text after `DETAIL:  `) into the values as
/// SQL literals, `$1` first. Returns `None` when the detail is not a parameter list.
pub(crate) fn parse_parameters(detail: &str) -> Option<Vec<Option<String>>> {
    let rest = detail.trim_start().strip_prefix("parameters: ")?;
    let b = rest.as_bytes();
    let mut out: Vec<Option<String>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // `$n = `
        if b[i] != b'$' {
            return if out.is_empty() { None } else { Some(out) };
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let n: usize = rest[start..j].parse().ok()?;
        let eq = rest[j..].strip_prefix(" = ")?;
        i = j + 3;
        let value = if eq.starts_with("NULL") {
            i += 4;
            None
        } else if eq.starts_with('\'') {
            // A quoted literal with '' escapes; it may span lines.
            let mut k = i + 1;
            loop {
                match b.get(k) {
                    None => break,
                    Some(b'\'') if b.get(k + 1) == Some(&b'\'') => k += 2,
                    Some(b'\'') => {
                        k += 1;
                        break;
                    }
                    Some(_) => k += 1,
                }
            }
            let v = rest.get(i..k).unwrap_or("").to_string();
            i = k;
            Some(v)
        } else {
            // Unquoted (not produced by Postgres, but be lenient): up to the next `, $`. Only a
            // plain number stays bare; anything else becomes a string, so a value can never
            // add SQL to the example it is put into.
            let end = rest[i..].find(", $").map_or(rest.len(), |p| i + p);
            let v = rest[i..end].trim();
            i = end;
            Some(if is_plain_number(v) {
                v.to_string()
            } else {
                remodel_model::ident::literal(v)
            })
        };
        // Postgres numbers parameters from $1 to $65535; a larger number is not a parameter list
        // (and must not size the vector).
        if n == 0 || n > usize::from(u16::MAX) {
            return None;
        }
        if out.len() < n {
            out.resize(n, None);
        }
        out[n - 1] = value;
        if rest[i..].starts_with(", ") {
            i += 2;
        } else {
            break;
        }
    }
    Some(out)
}

/// `12`, `-3.5`, `1e9`: a value that can stand bare in SQL as a number.
fn is_plain_number(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    // `parse` also takes `inf` and `NaN`: the first character must be a digit.
    digits.bytes().next().is_some_and(|b| b.is_ascii_digit()) && v.parse::<f64>().is_ok()
}

/// The timestamp at the start of a log line, as written (`2025-01-15 10:00:00.123 UTC`,
/// `Feb 11 13:15:39`), if there is one.
pub(crate) fn leading_timestamp(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let mut end;
    if b.len() >= 19 && digit(0) && digit(3) && b[4] == b'-' && b[10] == b' ' && b[13] == b':' {
        end = 19;
        if b.get(end) == Some(&b'.') {
            end += 1;
            while digit(end) {
                end += 1;
            }
        }
    } else if b.len() >= 15 && b[0].is_ascii_uppercase() && b[3] == b' ' && b[9] == b':' {
        return line.get(..15);
    } else {
        return None;
    }
    // An optional time zone abbreviation or offset.
    if b.get(end) == Some(&b' ') {
        let mut k = end + 1;
        while b.get(k).is_some_and(|c| {
            c.is_ascii_alphabetic() || *c == b'+' || *c == b'-' || c.is_ascii_digit()
        }) {
            k += 1;
        }
        if k > end + 1
            && k - end <= 7
            && b.get(k)
                .is_none_or(|c| *c == b' ' || *c == b':' || *c == b'[')
        {
            end = k;
        }
    }
    line.get(..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        assert_eq!(
            parse_message("duration: 0.168 ms  statement: END;"),
            Message::Statement {
                duration_ms: Some(0.168),
                text: "END;",
                execute: false
            }
        );
        assert_eq!(
            parse_message("duration: 1.0 ms  execute P_0: SELECT 1"),
            Message::Statement {
                duration_ms: Some(1.0),
                text: "SELECT 1",
                execute: true
            }
        );
        assert_eq!(
            parse_message("execute stmt_slow/stmt_slow: SELECT 1"),
            Message::Statement {
                duration_ms: None,
                text: "SELECT 1",
                execute: true
            }
        );
        assert_eq!(
            parse_message("duration: 1.163 ms  parse x: SELECT 1"),
            Message::ParseBind
        );
        assert_eq!(parse_message("duration: 2 ms"), Message::DurationOnly);
        assert_eq!(
            parse_message("connection received: host=[local]"),
            Message::Other
        );
    }

    #[test]
    fn parameters() {
        let p =
            parse_parameters("parameters: $1 = '1234', $2 = 'nj''char\nhello', $3 = NULL").unwrap();
        assert_eq!(
            p,
            vec![
                Some("'1234'".into()),
                Some("'nj''char\nhello'".into()),
                None
            ]
        );
        assert_eq!(parse_parameters("prepare: prepare foo"), None);
        // Unquoted values: numbers stay, anything else is quoted (it cannot add SQL).
        assert_eq!(
            parse_parameters("parameters: $1 = 5, $2 = 1 LIMIT 9 --, $3 = 1--2").unwrap(),
            vec![
                Some("5".into()),
                Some("'1 LIMIT 9 --'".into()),
                Some("'1--2'".into())
            ]
        );
        // A parameter number from a damaged log must not size the vector.
        assert_eq!(parse_parameters("parameters: $99999999999999 = '1'"), None);
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            leading_timestamp("2026-11-29 20:38:46.780 UTC [16149] LOG:  x"),
            Some("2026-11-29 20:38:46.780 UTC")
        );
        assert_eq!(
            leading_timestamp("2020-03-11 20:40:43 CET::@:[12760]:LOG:"),
            Some("2020-03-11 20:40:43 CET")
        );
        assert_eq!(
            leading_timestamp("Feb 11 13:15:39 test-pc postgres[1]:"),
            Some("Feb 11 13:15:39")
        );
        assert_eq!(leading_timestamp("garbage"), None);
    }
}
