//! Reading CSV records (csvlog, pg_stat_statements exports) with malformed records counted and
//! skipped, so one bad record does not end the file.

use super::aggregate::Aggregator;
use super::bounded::{LineCap, MAX_LINE_BYTES};
use std::cell::Cell;
use std::io::{self, BufRead, Read};

/// A CSV reader whose lines are cut at the limit, with the count of cut lines.
pub(crate) fn csv_reader<R: BufRead>(
    r: R,
    headers: bool,
) -> (csv::Reader<LineCap<R>>, std::rc::Rc<Cell<u64>>) {
    let (cap, cuts) = LineCap::new(r, MAX_LINE_BYTES);
    let rdr = csv::ReaderBuilder::new()
        .has_headers(headers)
        .flexible(true)
        .from_reader(cap);
    (rdr, cuts)
}

/// Reads the next well-formed record into `rec` and returns its first line, or `None` at the end.
/// A malformed record is counted as skipped in `agg`; only an I/O error ends the reading.
/// A record with a line cut at the limit (`cuts` grew) is skipped as oversized.
pub(crate) fn next_record<R: Read>(
    rdr: &mut csv::Reader<R>,
    rec: &mut csv::ByteRecord,
    agg: &mut Aggregator,
    cuts: &Cell<u64>,
) -> io::Result<Option<u32>> {
    loop {
        let line = u32::try_from(rdr.position().line()).unwrap_or(u32::MAX);
        let before = cuts.get();
        match rdr.read_byte_record(rec) {
            Ok(false) => return Ok(None),
            Ok(true) if cuts.get() > before => agg.oversized(line, 1),
            Ok(true) => return Ok(Some(line)),
            Err(e) => {
                if let csv::ErrorKind::Io(_) = e.kind() {
                    return Err(io::Error::other(e.to_string()));
                }
                agg.skip("malformed CSV record", line, 1);
            }
        }
    }
}
