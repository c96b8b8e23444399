//! Fuzz target `workload_csvlog`: runs `remodel_fuzz::workload_csvlog` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/workload_csvlog/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::workload_csvlog(data));
