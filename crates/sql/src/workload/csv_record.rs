//! Reading CSV records (csvlog, pg_stat_statements exports) with malformed records counted and
//! skipped, so one bad record does not end the file.

use super::aggregate::Aggregator;
use std::io::{self, Read};

/// Reads the next well-formed record into `rec` and returns its first line, or `None` at the end.
/// A malformed record is counted as skipped in `agg`; only an I/O error ends the reading.
pub(crate) fn next_record<R: Read>(
    rdr: &mut csv::Reader<R>,
    rec: &mut csv::ByteRecord,
    agg: &mut Aggregator,
) -> io::Result<Option<u32>> {
    loop {
        let line = u32::try_from(rdr.position().line()).unwrap_or(u32::MAX);
        match rdr.read_byte_record(rec) {
            Ok(false) => return Ok(None),
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
