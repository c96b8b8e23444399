//! Reader for Postgres `jsonlog` files (one JSON object per line, PostgreSQL 15+), also wrapped
//! in a `record` object as CloudNativePG writes them.

use super::aggregate::Aggregator;
use super::bounded::{read_line, MAX_LINE_BYTES};
use super::message::{add_record, LogRecord};
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{self, BufRead};

/// The fields of a jsonlog line that matter here (others are ignored).
#[derive(Debug, Deserialize)]
struct JsonLine<'a> {
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    log_time: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error_severity: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    detail: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    /// CloudNativePG: `{"level":…, "logger":"postgres", "record":{…}}`.
    #[serde(borrow, default)]
    record: Option<Box<JsonLine<'a>>>,
}

/// Reads a jsonlog, adding each statement to `agg`.
pub(crate) fn read<R: BufRead>(mut r: R, agg: &mut Aggregator) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut line_no: u32 = 0;
    loop {
        buf.clear();
        let Some(cut) = read_line(&mut r, &mut buf, MAX_LINE_BYTES)? else {
            break;
        };
        line_no = line_no.saturating_add(1);
        if cut {
            agg.oversized(line_no, 1);
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            agg.skip("invalid UTF-8", line_no, 1);
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let Ok(outer) = serde_json::from_str::<JsonLine<'_>>(text) else {
            agg.skip("not a JSON log line", line_no, 1);
            continue;
        };
        let rec = match outer.record {
            Some(inner) => *inner,
            None => outer,
        };
        let (Some(sev), Some(msg)) = (rec.error_severity.as_deref(), rec.message.as_deref()) else {
            agg.skip("JSON line without a Postgres message", line_no, 1);
            continue;
        };
        add_record(
            agg,
            &LogRecord {
                line: line_no,
                severity: sev,
                message: msg,
                detail: rec.detail.as_deref(),
                timestamp: rec.timestamp.as_deref().or(rec.log_time.as_deref()),
                session: rec.session_id.as_deref(),
            },
        );
    }
    Ok(())
}
