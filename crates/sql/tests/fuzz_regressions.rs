//! Replays `fixtures/fuzz/<target>/*` (inputs the cargo-fuzz targets of `fuzz/` once broke) and
//! a few hand-made hostile inputs through the same calls and checks as each target: no panic,
//! the splitter's stream equal to its whole-text form, normalization a fixed point.

use remodel_sql::normalize::{example, literal_mask, shape, shape_checked};
use remodel_sql::split::{split_reader, split_statements, StreamItem};
use remodel_sql::workload::{read_str, Format};
use std::path::PathBuf;

fn split(data: &[u8]) {
    let mut streamed = Vec::new();
    split_reader(data, 1 << 20, |item| {
        if let StreamItem::Chunk(c) = item {
            streamed.push((c.text.to_string(), c.line, c.column, c.offset));
        }
    })
    .expect("memory reads");
    split_reader(data, 48, |_| {}).expect("memory reads");
    if let Ok(text) = std::str::from_utf8(data) {
        let whole: Vec<_> = split_statements(text)
            .into_iter()
            .map(|c| (c.text.to_string(), c.line, c.column, c.offset))
            .collect();
        assert_eq!(streamed, whole);
    }
}

fn normalize(data: &[u8]) {
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
        assert_eq!(
            again.sql, s.sql,
            "normalizing the canonical form changed it"
        );
    }
    if let Ok(ex) = example(sql, &[]) {
        if let Ok(of_example) = shape(&ex) {
            assert_eq!(
                of_example.sql, s.sql,
                "the example is not an instance of its shape"
            );
        }
    }
}

/// Runs one input through the calls of the fuzz target named `target`.
fn replay(target: &str, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let format = |f| {
        let _ = read_str("fuzz", &text, f);
    };
    match target {
        "split" => split(data),
        "ddl" => {
            let _ = remodel_sql::ddl::load_str("fuzz.sql", &text);
        }
        "workload_sql" => format(Format::Sql),
        "workload_pglog" => format(Format::PgLog),
        "workload_csvlog" => format(Format::Csvlog),
        "workload_jsonlog" => format(Format::Jsonlog),
        "workload_pgss" => format(Format::Pgss),
        "normalize" => normalize(data),
        "plan_json" => {
            if let Ok(plan) = serde_json::from_slice::<remodel_model::Plan>(data) {
                let json = serde_json::to_string(&plan).expect("serializes");
                let again: remodel_model::Plan = serde_json::from_str(&json).expect("loads");
                assert_eq!(again, plan);
            }
        }
        other => panic!("fixtures/fuzz/{other}: no such fuzz target"),
    }
}

/// Every cargo-fuzz target of `fuzz/fuzz_targets/` has its calls in [`replay`] (so an input it
/// breaks can be kept), and every input kept in `fixtures/fuzz/<target>/` still goes through them.
#[test]
fn inputs_that_broke_a_fuzz_target_stay_fixed() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut targets: Vec<String> = std::fs::read_dir(manifest.join("../../fuzz/fuzz_targets"))
        .expect("fuzz/fuzz_targets")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_string)
        })
        .collect();
    targets.sort();
    assert!(targets.len() >= 9, "fuzz targets: {targets:?}");
    for target in &targets {
        // Panics for a target this file does not know.
        replay(target, b"");
    }
    let root = manifest.join("../../fixtures/fuzz");
    for dir in std::fs::read_dir(&root).expect("fixtures/fuzz").flatten() {
        if !dir.path().is_dir() {
            continue;
        }
        let target = dir.file_name().to_string_lossy().into_owned();
        assert!(
            targets.contains(&target),
            "fixtures/fuzz/{target}: no such target in fuzz/fuzz_targets"
        );
        for file in std::fs::read_dir(dir.path())
            .expect("a target folder")
            .flatten()
        {
            let data = std::fs::read(file.path()).expect("readable");
            replay(&target, &data);
        }
    }
}

#[test]
fn hostile_inputs_through_every_target() {
    let inputs: &[&[u8]] = &[
        b"",
        b";;;",
        b"\xef\xbb\xbf-- calls: 5\nSELECT 1;",
        b"SELECT E'\\' LIMIT 99999 --' LIMIT 5;",
        b"SELECT $a$ ; $a$; COPY t FROM stdin;\n\\.\n",
        b"/* /* */ SELECT 1; */ SELECT \"a;\" FROM t WHERE x = U&'d\\0061t\\+000061';",
        b"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3);",
        b"\x00\xff\xfe SELECT",
        b"2025-01-01 00:00:00 UTC [1] LOG:  statement: SELECT 1\n\tFROM t\nDETAIL:  parameters: $1 = 5 --",
        b"{\"error_severity\":\"LOG\",\"message\":\"statement: SELECT 1\"}\n{",
        b"query,calls\n\"SELECT 1\",99999999999999999999999\n",
        b"{\"schema\":{\"tables\":[]}}",
    ];
    for target in [
        "split",
        "ddl",
        "workload_sql",
        "workload_pglog",
        "workload_csvlog",
        "workload_jsonlog",
        "workload_pgss",
        "normalize",
        "plan_json",
    ] {
        for input in inputs {
            replay(target, input);
        }
    }
    // The escaped string stays a string in the example: the same shape, one LIMIT.
    let s = shape("SELECT E'\\' LIMIT 99999 --' LIMIT 5").expect("normalizes");
    assert_eq!(s.sql, "SELECT $1 LIMIT $2");
}
