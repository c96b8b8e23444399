//! Fuzz target `workload_jsonlog`: runs `remodel_fuzz::workload_jsonlog` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/workload_jsonlog/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::workload_jsonlog(data));
