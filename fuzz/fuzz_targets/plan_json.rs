//! Loading `plan.json`: any bytes give a plan or an error, never a panic; a plan that loads
//! writes back to JSON that loads to the same plan.
#![no_main]
use libfuzzer_sys::fuzz_target;
use remodel_model::Plan;

fuzz_target!(|data: &[u8]| {
    if let Ok(plan) = serde_json::from_slice::<Plan>(data) {
        let json = serde_json::to_string(&plan).expect("a loaded plan serializes");
        let again: Plan = serde_json::from_str(&json).expect("a written plan loads");
        assert_eq!(again, plan);
    }
});
