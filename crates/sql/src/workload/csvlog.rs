//! Reader for Postgres `csvlog` files: one CSV record per message (fields may span lines); the
//! message is field 14 and its detail (bound parameters) field 15.

use super::aggregate::{Aggregator, Occurrence};
use super::message::{parse_message, parse_parameters, Message};
use std::io::{self, BufRead};

const TIME: usize = 0;
const SEVERITY: usize = 11;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;

/// Reads a csvlog, adding each statement to `agg`.
pub(crate) fn read<R: BufRead>(r: R, agg: &mut Aggregator) -> io::Result<()> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(r);
    let mut rec = csv::ByteRecord::new();
    loop {
        let line = u32::try_from(rdr.position().line()).unwrap_or(u32::MAX);
        match rdr.read_byte_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                if let csv::ErrorKind::Io(_) = e.kind() {
                    return Err(io::Error::other(e.to_string()));
                }
                agg.skip("malformed CSV record", line, 1);
                continue;
            }
        }
        let field = |i: usize| rec.get(i).map(std::str::from_utf8);
        let (Some(Ok(severity)), Some(Ok(message))) = (field(SEVERITY), field(MESSAGE)) else {
            let reason = if rec.len() > MESSAGE {
                "invalid UTF-8"
            } else {
                "not a csvlog record"
            };
            agg.skip(reason, line, 1);
            continue;
        };
        if severity != "LOG" {
            agg.skip("other log message (connection, checkpoint …)", line, 1);
            continue;
        }
        match parse_message(message) {
            Message::Statement {
                duration_ms, text, ..
            } => {
                let bound = match field(DETAIL) {
                    Some(Ok(d)) => parse_parameters(d),
                    _ => None,
                };
                let ts = match field(TIME) {
                    Some(Ok(t)) if !t.is_empty() => Some(t),
                    _ => None,
                };
                agg.add(&Occurrence {
                    text,
                    line,
                    column: 1,
                    calls: 1,
                    duration_ms,
                    timestamp: ts,
                    bound: bound.as_deref(),
                    ..Default::default()
                });
            }
            Message::ParseBind => agg.skip("parse/bind step (its execute is counted)", line, 1),
            Message::DurationOnly => agg.skip("duration without statement text", line, 1),
            Message::Other => agg.skip("other log message (connection, checkpoint …)", line, 1),
        }
    }
    Ok(())
}
