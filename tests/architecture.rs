//! ARCHITECTURE.md's claims that a reading of the source can check, checked: one home for the
//! stable hash, for calendar arithmetic and for reading timestamp text; every live test gated by
//! `live!`; every benchmark exiting non-zero when it misses its target; `crates/design/src/` laid
//! out by pass (at most 10 entries at its top level).

use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir` (relative to the root) whose name ends with one of `endings`.
fn files(dir: &str, endings: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if p.is_dir() && name != "target" && !name.starts_with('.') {
                stack.push(p);
            } else if endings.iter().any(|end| name.ends_with(end)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The source files of the workspace: Rust and Python, tests and benchmarks included.
fn sources() -> Vec<PathBuf> {
    ["crates", "src", "tests", "bench", "fuzz"]
        .iter()
        .flat_map(|d| files(d, &[".rs", ".py"]))
        .collect()
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The files (other than `allowed` and this one) whose text, without `_` and in lower case,
/// contains one of `needles`.
fn holders(needles: &[&str], allowed: &[&str]) -> Vec<String> {
    sources()
        .iter()
        .map(|p| (relative(p), p))
        .filter(|(rel, _)| !allowed.contains(&rel.as_str()) && rel != "tests/architecture.rs")
        .filter(|(_, p)| {
            let text = std::fs::read_to_string(p)
                .unwrap_or_default()
                .replace('_', "")
                .to_ascii_lowercase();
            needles.iter().any(|n| text.contains(n))
        })
        .map(|(rel, _)| rel)
        .collect()
}

#[test]
fn text_fnv1a64_is_the_one_stable_hash() {
    // FNV-1a's offset basis and prime, as any spelling of the hash writes them.
    let others = holders(
        &["cbf29ce484222325", "100000001b3"],
        &["crates/model/src/text.rs"],
    );
    assert!(
        others.is_empty(),
        "FNV constants outside model::text (use remodel_model::text::fnv1a64): {others:?}"
    );
}

#[test]
fn model_time_is_the_one_home_of_calendar_arithmetic_and_timestamp_text() {
    let others = holders(
        &[
            "fn daysfromcivil",
            "fn civilfromdays",
            "fn daysinmonth",
            "fn parsedate(",
            "fn parsetime(",
            "fn parsetimestamp(",
        ],
        &["crates/model/src/time.rs"],
    );
    assert!(
        others.is_empty(),
        "calendar arithmetic or timestamp parsing outside model::time: {others:?}"
    );
}

/// The test functions of a test file: (name, the first statement of the body).
fn test_functions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[") {
        rest = &rest[at..];
        let attr_end = rest.find(']').unwrap_or(rest.len());
        let attr = &rest[..attr_end];
        rest = &rest[attr_end..];
        if !(attr == "#[test" || attr.starts_with("#[tokio::test")) {
            continue;
        }
        let Some(fn_at) = rest.find("fn ") else { break };
        let name: String = rest[fn_at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest[fn_at..].find('{') else {
            break;
        };
        let body = rest[fn_at + open + 1..].trim_start();
        out.push((name, body.lines().next().unwrap_or("").trim().to_string()));
        rest = &rest[fn_at..];
    }
    out
}

#[test]
fn every_live_test_is_gated_first_thing() {
    let mut ungated = Vec::new();
    let mut seen = 0;
    let test_files =
        files("tests", &[".rs"])
            .into_iter()
            .chain(files("crates", &[".rs"]).into_iter().filter(|p| {
                p.components()
                    .any(|c| c.as_os_str().to_string_lossy() == "tests")
            }));
    for p in test_files {
        let live_file = p.to_string_lossy().ends_with("_live.rs");
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (name, first) in test_functions(&text) {
            if !(live_file || name.ends_with("_live")) {
                continue;
            }
            seen += 1;
            if !(first.starts_with("remodel_testdb::live!(") || first.starts_with("live!(")) {
                ungated.push(format!("{}: {name}", relative(&p)));
            }
        }
    }
    assert!(
        seen > 50,
        "only {seen} live tests found: the search is broken"
    );
    assert!(
        ungated.is_empty(),
        "live tests whose first statement is not `remodel_testdb::live!(…)`: {ungated:?}"
    );
}

#[test]
fn every_benchmark_exits_non_zero_when_it_misses_its_target() {
    let mut silent = Vec::new();
    for p in files("bench", &[".sh", ".rs"]) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let says = text.to_ascii_lowercase().contains("exits 1 when");
        let exits =
            text.contains("exit 1") || text.contains("exit(1)") || text.contains("sys.exit(0 if");
        if !(says && exits) {
            silent.push(relative(&p));
        }
    }
    assert!(
        silent.is_empty(),
        "benchmarks that do not state and make a non-zero exit on a missed target: {silent:?}"
    );
}

/// SQL is parsed in the front end and the analysis only: every later stage reads plan.json, and
/// a stage that needs a statement rewritten (replay's forms) asks the `sql` crate.
#[test]
fn only_the_front_end_and_the_analysis_depend_on_a_sql_parser() {
    let mut parsers = Vec::new();
    for p in files("crates", &["Cargo.toml"]) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let normal = text.split("[dev-dependencies]").next().unwrap_or_default();
        if normal
            .lines()
            .any(|l| l.trim_start().starts_with("sqlparser"))
        {
            parsers.push(relative(&p));
        }
    }
    parsers.sort();
    assert_eq!(
        parsers,
        ["crates/analyze/Cargo.toml", "crates/sql/Cargo.toml"],
        "crates that parse SQL themselves"
    );
}

#[test]
fn design_src_stays_laid_out_by_pass() {
    // `crates/design/src/` holds the passes (a folder or file each: candidates, costs, select,
    // assemble, emit, writes, checklist, validate, loops) and lib.rs; a new module goes into the
    // pass it belongs to (ARCHITECTURE.md's tour of `crates/design`), not beside them.
    let dir = root().join("crates/design/src");
    let mut entries: Vec<String> = std::fs::read_dir(&dir)
        .expect("crates/design/src")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    entries.sort();
    assert!(
        entries.len() <= 10,
        "crates/design/src holds {} entries at its top level (at most 10): {entries:?}; put the \
         new module in the folder of its pass",
        entries.len()
    );
}
