//! Property tests: the splitter and the DDL loader never panic, whatever the input; the
//! splitter's positions always point at the text it returns; the loader reads every chunk the
//! splitter cuts (or says at 1:1 why it read none) and every diagnostic points inside the input.
//! Each property counts the cases that reached its assertions and fails when too few did.

mod reached;

use proptest::prelude::*;
use reached::Reached;
use remodel_sql::ddl::{load_str, DdlLoad};
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

/// Checks the chunks of `src`; returns how many there were (0: nothing was asserted).
fn check_split(src: &str) -> usize {
    let mut last = 0;
    let chunks = split_statements(src);
    for st in &chunks {
        assert!(st.offset >= last, "chunks are in order");
        assert!(
            src[st.offset..].starts_with(st.text),
            "text sits at its offset"
        );
        assert_eq!((st.line, st.column), line_col(src, st.offset));
        last = st.offset + st.text.len();
    }
    chunks.len()
}

/// Loads `text` as `file` and checks what every load must satisfy: each chunk the splitter
/// cuts is read, or none is and a diagnostic at 1:1 says why (binary data, no statement); every
/// diagnostic's location is in `file`, inside the text.
fn check_load(file: &str, text: &str) -> DdlLoad {
    let load = load_str(file, text);
    let chunks = split_statements(text).len();
    assert!(
        load.statements == chunks
            || (load.statements == 0
                && load
                    .diagnostics
                    .iter()
                    .any(|d| d
                        .location
                        .as_ref()
                        .is_some_and(|l| (l.line, l.column) == (1, 1)))),
        "{} of {chunks} chunks read, diagnostics {:?}",
        load.statements,
        load.diagnostics
    );
    let lines = text.lines().count().max(1) as u32;
    for d in &load.diagnostics {
        if let Some(loc) = &d.location {
            assert_eq!(loc.file, file, "{d}");
            assert!(
                loc.line >= 1 && loc.line <= lines + 1 && loc.column >= 1,
                "{d}"
            );
        }
    }
    load
}

/// Cases per property.
fn config() -> ProptestConfig {
    reached::cases(400)
}

#[test]
fn split_never_panics_on_any_string() {
    let reached = Reached::default();
    proptest!(config(), |(s in any::<String>())| {
        if check_split(&s) > 0 {
            reached.hit();
        }
    });
    reached.assert_share(
        "split_never_panics_on_any_string",
        &config(),
        SPLIT_ANY_SHARE,
    );
}

/// Share of arbitrary strings the splitter must cut at least one chunk from (the others are
/// blank): 95 to 99% did in five runs of 400 cases.
const SPLIT_ANY_SHARE: f64 = 0.85;

#[test]
fn split_positions_hold_on_sqlish_text() {
    let reached = Reached::default();
    proptest!(config(), |(s in sqlish())| {
        if check_split(&s) > 0 {
            reached.hit();
        }
    });
    reached.assert_share(
        "split_positions_hold_on_sqlish_text",
        &config(),
        SPLIT_SQLISH_SHARE,
    );
}

/// Share of SQL-ish texts the splitter must cut at least one chunk from (the others are blank
/// or comments only): 93 to 96% did in five runs of 400 cases.
const SPLIT_SQLISH_SHARE: f64 = 0.85;

#[test]
fn load_reads_every_chunk_of_sqlish_text() {
    let reached = Reached::default();
    proptest!(config(), |(s in sqlish())| {
        check_load("fuzz.sql", &s);
        reached.hit();
    });
    reached.assert_share("load_reads_every_chunk_of_sqlish_text", &config(), 1.0);
}

#[test]
fn load_never_panics_on_random_bytes() {
    let reached = Reached::default();
    proptest!(config(), |(bytes in prop::collection::vec(any::<u8>(), 0..512))| {
        let text = String::from_utf8_lossy(&bytes);
        check_split(&text);
        check_load("fuzz.bin", &text);
        reached.hit();
    });
    reached.assert_share("load_never_panics_on_random_bytes", &config(), 1.0);
}

#[test]
fn line_col_never_panics() {
    let reached = Reached::default();
    proptest!(config(), |(s in any::<String>(), off in 0usize..1000)| {
        let (line, col) = line_col(&s, off);
        reached.hit();
        prop_assert!(line >= 1 && col >= 1);
    });
    reached.assert_share("line_col_never_panics", &config(), 1.0);
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

#[test]
fn load_never_panics_on_damaged_dumps() {
    let config = reached::cases(24);
    let reached = Reached::default();
    proptest!(config.clone(), |(cut in 0usize..100_000, at in 0usize..100_000, len in 0usize..400)| {
        let text = damaged_pagila(cut, at, len);
        check_split(&text);
        // Whatever survived the damage is read chunk by chunk, and every diagnostic points
        // inside the input.
        check_load("damaged.sql", &text);
        reached.hit();
    });
    reached.assert_share("load_never_panics_on_damaged_dumps", &config, 1.0);
}
