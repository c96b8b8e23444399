//! Fuzz target `normalize`: runs `remodel_fuzz::normalize` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/normalize/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::normalize(data));
