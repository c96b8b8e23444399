//! Property tests: the splitter and the DDL loader never panic, whatever the input, and the
//! splitter's positions always point at the text it returns.

use proptest::prelude::*;
use remodel_sql::ddl::load_str;
use remodel_sql::split::{line_col, split_statements};

/// Strings made of the characters that drive the lexer (quotes, dollars, comments, escapes,
/// semicolons, newlines) plus SQL keywords, so random inputs reach the interesting states.
fn sqlish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "CREATE TABLE ",
        "ALTER TABLE ONLY ",
        "CREATE INDEX i ON ONLY ",
        "PRIMARY KEY ",
        "REFERENCES ",
        "PARTITION OF ",
        "ATTACH PARTITION ",
        "COPY t FROM stdin",
        "\\.",
        "\\connect x",
        "t",
        "(",
        ")",
        ",",
        ";",
        "'",
        "''",
        "E'",
        "\\",
        "\"",
        "$$",
        "$a$",
        "$1",
        "--",
        "/*",
        "*/",
        "\n",
        " ",
        "é",
        "int",
        "GENERATED ALWAYS AS IDENTITY",
        "OWNED BY",
        "\r\n",
        "\u{0}",
        "\u{feff}",
    ]);
    prop::collection::vec(atoms, 0..60).prop_map(|v| v.concat())
}

fn check_split(src: &str) {
    let mut last = 0;
    for st in split_statements(src) {
        assert!(st.offset >= last, "chunks are in order");
        assert!(
            src[st.offset..].starts_with(st.text),
            "text sits at its offset"
        );
        assert_eq!((st.line, st.column), line_col(src, st.offset));
        last = st.offset + st.text.len();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn split_never_panics_on_any_string(s in any::<String>()) {
        check_split(&s);
    }

    #[test]
    fn split_positions_hold_on_sqlish_text(s in sqlish()) {
        check_split(&s);
    }

    #[test]
    fn load_never_panics_on_sqlish_text(s in sqlish()) {
        let _ = load_str("fuzz.sql", &s);
    }

    #[test]
    fn load_never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        check_split(&text);
        let _ = load_str("fuzz.bin", &text);
    }

    #[test]
    fn line_col_never_panics(s in any::<String>(), off in 0usize..1000) {
        let (line, col) = line_col(&s, off);
        prop_assert!(line >= 1 && col >= 1);
    }
}

/// A real dump, damaged: cut short and with a slice removed at random places.
fn damaged_pagila(cut: usize, at: usize, len: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/corpora/pagila/pagila-schema.sql");
    let text = std::fs::read_to_string(path).expect("pagila is readable");
    let floor = |mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let cut = floor(cut);
    let (a, b) = (floor(at.min(cut)), floor((at + len).min(cut)));
    format!("{}{}", &text[..a], &text[b..cut])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn load_never_panics_on_damaged_dumps(cut in 0usize..100_000, at in 0usize..100_000, len in 0usize..400) {
        let text = damaged_pagila(cut, at, len);
        check_split(&text);
        let load = load_str("damaged.sql", &text);
        // Whatever survived the damage, every diagnostic points inside the input.
        let lines = text.lines().count().max(1) as u32;
        for d in &load.diagnostics {
            if let Some(loc) = &d.location {
                prop_assert!(loc.line >= 1 && loc.line <= lines + 1, "{d}");
            }
        }
    }
}
