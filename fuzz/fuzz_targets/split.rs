//! The statement splitter, on text and on a stream with a tiny size limit (oversized statements
//! and comments are skipped across reads): no panic, and a stream within the limit gives the same
//! statements as the whole text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use remodel_sql::split::{split_reader, split_statements, StreamItem};

fuzz_target!(|data: &[u8]| {
    let mut streamed = Vec::new();
    let _ = split_reader(data, 1 << 20, |item| {
        if let StreamItem::Chunk(c) = item {
            streamed.push((c.text.to_string(), c.line, c.column, c.offset));
        }
    });
    let _ = split_reader(data, 48, |_| {});
    if let Ok(text) = std::str::from_utf8(data) {
        let whole: Vec<_> = split_statements(text)
            .into_iter()
            .map(|c| (c.text.to_string(), c.line, c.column, c.offset))
            .collect();
        assert_eq!(streamed, whole);
    }
});
