//! Fuzz target `ddl`: runs `remodel_fuzz::ddl` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/ddl/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::ddl(data));
