//! Reader for a `pg_stat_statements` export as CSV with a header
//! (`\copy (SELECT query, calls, total_exec_time, rows FROM pg_stat_statements) TO 'x.csv' CSV HEADER`).
//! The queries are already normalized by the server; `calls` is the frequency.

use super::aggregate::{Aggregator, Occurrence};
use super::csv_record::{csv_reader, next_record};
use std::io::{self, BufRead};

/// Reads a pg_stat_statements CSV, adding each row to `agg`.
pub(crate) fn read<R: BufRead>(r: R, agg: &mut Aggregator) -> io::Result<()> {
    let (mut rdr, cuts) = csv_reader(r, true);
    let headers = match rdr.byte_headers() {
        Ok(h) => h.clone(),
        Err(e) => return Err(io::Error::other(e.to_string())),
    };
    let col = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n.as_bytes())))
    };
    let Some(query) = col(&["query"]) else {
        agg.skip("pg_stat_statements CSV without a `query` column", 1, 1);
        return Ok(());
    };
    let calls = col(&["calls"]);
    let total = col(&["total_exec_time", "total_time"]);
    let rows = col(&["rows"]);
    let mut rec = csv::ByteRecord::new();
    while let Some(line) = next_record(&mut rdr, &mut rec, agg, &cuts)? {
        let text = |i: Option<usize>| {
            i.and_then(|i| rec.get(i))
                .and_then(|f| std::str::from_utf8(f).ok())
        };
        let Some(sql) = text(Some(query)) else {
            agg.skip("invalid UTF-8", line, 1);
            continue;
        };
        let n = match calls {
            Some(_) => match text(calls).and_then(|c| c.trim().parse::<u64>().ok()) {
                Some(n) => n,
                None => {
                    agg.skip("pg_stat_statements row with a bad `calls` value", line, 1);
                    continue;
                }
            },
            None => 1,
        };
        agg.add(&Occurrence {
            text: sql,
            line,
            column: 1,
            calls: n,
            total_ms: text(total).and_then(|t| t.trim().parse::<f64>().ok()),
            rows: text(rows).and_then(|t| t.trim().parse::<u64>().ok()),
            normalized_input: true,
            ..Default::default()
        });
    }
    Ok(())
}
