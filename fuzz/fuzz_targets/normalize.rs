//! Normalization and fingerprints: never panic; the canonical form is a fixed point (normalizing
//! it again gives the same text and fingerprint); an example is an instance of its shape.
#![no_main]
use libfuzzer_sys::fuzz_target;
use remodel_sql::normalize::{example, literal_mask, shape, shape_checked};

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let mut mask = String::new();
    let _ = literal_mask(sql, &mut mask);
    let _ = remodel_sql::normalize::normalize(sql);
    let Ok((s, _)) = shape_checked(sql) else {
        return;
    };
    if let Ok(again) = shape(&s.sql) {
        assert_eq!(again.sql, s.sql, "normalizing the canonical form changed it");
        assert_eq!(again.fingerprint, s.fingerprint);
    }
    if let Ok(ex) = example(sql, &[]) {
        if let Ok(of_example) = shape(&ex) {
            assert_eq!(of_example.sql, s.sql, "the example is not an instance of its shape");
        }
    }
});
