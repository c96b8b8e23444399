//! Reading lines with a size limit, so one enormous line (a 1 GB statement in a log) costs at
//! most the limit in memory: the rest of it is read and dropped, and the line is reported.

use crate::split::MAX_STATEMENT_BYTES;
use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// Longest log line (or CSV line) kept; a longer one is skipped as a whole.
pub(crate) const MAX_LINE_BYTES: usize = MAX_STATEMENT_BYTES;

/// Reads one line (through its `\n`) into `buf`, keeping at most `limit` bytes. Returns `None`
/// at the end of the input, else whether the line was longer than `limit` (its rest dropped).
pub(crate) fn read_line<R: BufRead>(
    r: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<bool>> {
    let (mut any, mut cut) = (false, false);
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(p) => (p + 1, true),
            None => (chunk.len(), false),
        };
        let room = limit.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        cut |= take > room;
        r.consume(take);
        if done {
            return Ok(Some(cut));
        }
    }
}

/// A reader for the CSV formats: lines longer than the limit lose their rest (the CSV parser
/// then holds at most the limit), and every cut is counted so the record can be skipped.
pub(crate) struct LineCap<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line passed so far.
    line: usize,
    cuts: Rc<Cell<u64>>,
}

impl<R: BufRead> LineCap<R> {
    /// Wraps `inner`; the counter returned counts the lines cut.
    pub(crate) fn new(inner: R, limit: usize) -> (Self, Rc<Cell<u64>>) {
        let cuts = Rc::new(Cell::new(0));
        let cap = LineCap {
            inner,
            limit,
            line: 0,
            cuts: Rc::clone(&cuts),
        };
        (cap, cuts)
    }
}

impl<R: BufRead> Read for LineCap<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let chunk = self.inner.fill_buf()?;
            if chunk.is_empty() || out.is_empty() {
                return Ok(0);
            }
            let eol = memchr::memchr(b'\n', chunk);
            let upto = eol.map_or(chunk.len(), |p| p + 1);
            if self.line >= self.limit {
                // Past the limit: drop up to the end of the line, and count the line once.
                if self.line == self.limit {
                    self.cuts.set(self.cuts.get() + 1);
                    self.line += 1;
                }
                let done = eol.is_some();
                self.inner.consume(upto);
                if done {
                    self.line = 0;
                    out[0] = b'\n';
                    return Ok(1);
                }
                continue;
            }
            let n = upto.min(out.len()).min(self.limit - self.line);
            out[..n].copy_from_slice(&chunk[..n]);
            self.inner.consume(n);
            self.line = if eol.is_some_and(|p| p < n) {
                0
            } else {
                self.line + n
            };
            return Ok(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_and_reported() {
        let text = format!("short\n{}\nlast", "x".repeat(100));
        let mut r = io::BufReader::with_capacity(7, text.as_bytes());
        let mut got = Vec::new();
        let mut buf = Vec::new();
        while let Some(cut) = read_line(&mut r, &mut buf, 10).unwrap() {
            got.push((String::from_utf8(buf.clone()).unwrap(), cut));
            buf.clear();
        }
        assert_eq!(
            got,
            vec![
                ("short\n".into(), false),
                ("xxxxxxxxxx".into(), true),
                ("last".into(), false)
            ]
        );
    }

    #[test]
    fn the_csv_reader_sees_cut_lines_and_counts_them() {
        let text = format!("a,b\n\"{}\",1\nc,d\n", "y".repeat(50));
        let (mut cap, cuts) = LineCap::new(io::BufReader::with_capacity(4, text.as_bytes()), 8);
        let mut out = String::new();
        cap.read_to_string(&mut out).unwrap();
        assert_eq!(out, "a,b\n\"yyyyyyy\nc,d\n");
        assert_eq!(cuts.get(), 1);
    }
}
