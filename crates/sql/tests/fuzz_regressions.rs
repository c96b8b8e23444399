//! The fuzz targets of `fuzz/` on stable, in every test run: the very functions the targets call
//! (`fuzz/src/lib.rs`, included below) over every file of `fixtures/fuzz/<target>/` — at least one
//! seed per target, and each input that once crashed a target or broke its property — and over a
//! few hand-made hostile inputs. Cargo-fuzz needs nightly and minutes per target (`scripts/fuzz`);
//! this keeps the targets compiling against today's front end and their properties holding on the
//! inputs kept.

#[path = "../../../fuzz/src/lib.rs"]
mod targets;

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target(name: &str) -> fn(&[u8]) {
    targets::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("fuzz target {name}: not in fuzz/src/lib.rs TARGETS"))
}

/// The names of `dir`'s entries, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    out.sort();
    out
}

/// Every file of `fuzz/fuzz_targets/` is a target of [`targets::TARGETS`] and runs exactly its
/// function, and every target is a file there: what this file tests is what fuzzing runs.
#[test]
fn every_fuzz_target_runs_its_function_of_the_shared_file() {
    let dir = repo().join("fuzz/fuzz_targets");
    let files = names(&dir);
    let mut listed: Vec<String> = targets::TARGETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    listed.sort();
    let stems: Vec<String> = files
        .iter()
        .map(|f| f.strip_suffix(".rs").unwrap_or(f).to_string())
        .collect();
    assert_eq!(stems, listed, "fuzz/fuzz_targets/ against TARGETS");
    for name in &listed {
        let text = std::fs::read_to_string(dir.join(format!("{name}.rs"))).expect("readable");
        let call = format!("fuzz_target!(|data: &[u8]| remodel_fuzz::{name}(data));");
        assert!(
            text.contains(&call),
            "fuzz/fuzz_targets/{name}.rs does not run `{call}`"
        );
    }
}

/// Every target has seeds in `fixtures/fuzz/<target>/`, and every kept input (seed or former
/// crash) passes through its target's function. A folder naming no target fails.
#[test]
fn kept_inputs_pass_through_their_targets() {
    let root = repo().join("fixtures/fuzz");
    let mut seen = Vec::new();
    for name in names(&root) {
        let dir = root.join(&name);
        if !dir.is_dir() {
            continue;
        }
        let run = target(&name);
        let files = names(&dir);
        assert!(
            files.iter().any(|f| f.starts_with("seed-")),
            "fixtures/fuzz/{name}/ has no seed-* input"
        );
        for file in files {
            let data = std::fs::read(dir.join(&file)).expect("readable");
            eprintln!("fixtures/fuzz/{name}/{file}: {} bytes", data.len());
            run(&data);
        }
        seen.push(name);
    }
    for (name, _) in targets::TARGETS {
        assert!(
            seen.iter().any(|s| s == name),
            "fuzz target {name} has no folder fixtures/fuzz/{name}/"
        );
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
    for (_, run) in targets::TARGETS {
        for input in inputs {
            run(input);
        }
    }
    // The escaped string stays a string in the example: the same shape, one LIMIT.
    let s =
        remodel_sql::normalize::shape("SELECT E'\\' LIMIT 99999 --' LIMIT 5").expect("normalizes");
    assert_eq!(s.sql, "SELECT $1 LIMIT $2");
}
