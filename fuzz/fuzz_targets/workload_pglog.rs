//! Fuzz target `workload_pglog`: runs `remodel_fuzz::workload_pglog` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/workload_pglog/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::workload_pglog(data));
