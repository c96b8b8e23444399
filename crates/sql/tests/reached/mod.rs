//! Counting the generated cases of a property test that reached its assertion: a generator, a
//! `prop_assume!` or a guard that skips (almost) every case would otherwise pass having proven
//! nothing. Shared by the property tests of `remodel-sql` and `remodel-model`.

use proptest::test_runner::{contextualize_config, Config};
use std::cell::Cell;

/// A configuration of `n` cases (`PROPTEST_CASES` still overrides it).
pub fn cases(n: u32) -> Config {
    Config {
        cases: n,
        ..Config::default()
    }
}

/// Cases that reached the assertion, counted from inside a property's body.
#[derive(Debug, Default)]
pub struct Reached(Cell<u32>);

impl Reached {
    /// Counts one case about to be asserted.
    pub fn hit(&self) {
        self.0.set(self.0.get() + 1);
    }

    /// Fails unless at least `min_share` of the cases `config` asks for (as `PROPTEST_CASES` may
    /// change it) reached the assertion; returns the count.
    pub fn assert_share(&self, name: &str, config: &Config, min_share: f64) -> u32 {
        let cases = contextualize_config(config.clone()).cases;
        let reached = self.0.get();
        assert!(
            cases > 0 && f64::from(reached) >= min_share * f64::from(cases),
            "{name}: only {reached} of {cases} generated cases reached the assertion \
             (at least {:.0}% must)",
            min_share * 100.0
        );
        reached
    }
}
