//! The DDL front end on any text: never panics, always returns a schema and diagnostics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = remodel_sql::ddl::load_str("fuzz.sql", &text);
});
