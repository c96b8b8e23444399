//! The jsonlog workload reader on any text: never panics, counts what it skips.
#![no_main]
use libfuzzer_sys::fuzz_target;
use remodel_sql::workload::{read_str, Format};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = read_str("fuzz", &text, Format::Jsonlog);
});
