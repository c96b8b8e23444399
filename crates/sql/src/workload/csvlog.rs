//! Reader for Postgres `csvlog` files: one CSV record per message (fields may span lines); the
//! message is field 14 and its detail (bound parameters) field 15.

use super::aggregate::Aggregator;
use super::csv_record::{csv_reader, next_record};
use super::message::{add_record, LogRecord};
use std::io::{self, BufRead};

const TIME: usize = 0;
const SESSION: usize = 5;
const SEVERITY: usize = 11;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;

/// Reads a csvlog, adding each statement to `agg`.
pub(crate) fn read<R: BufRead>(r: R, agg: &mut Aggregator) -> io::Result<()> {
    let (mut rdr, cuts) = csv_reader(r, false);
    let mut rec = csv::ByteRecord::new();
    while let Some(line) = next_record(&mut rdr, &mut rec, agg, &cuts)? {
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
        let timestamp = match field(TIME) {
            Some(Ok(t)) if !t.is_empty() => Some(t),
            _ => None,
        };
        add_record(
            agg,
            &LogRecord {
                line,
                severity,
                message,
                detail: field(DETAIL).and_then(Result::ok),
                timestamp,
                session: field(SESSION).and_then(Result::ok),
            },
        );
    }
    Ok(())
}
