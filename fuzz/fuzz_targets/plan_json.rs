//! Fuzz target `plan_json`: runs `remodel_fuzz::plan_json` (fuzz/src/lib.rs, where its property is stated;
//! the stable test suite runs the same function over fixtures/fuzz/plan_json/).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| remodel_fuzz::plan_json(data));
