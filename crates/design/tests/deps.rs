//! The designer reads the model and writes the model: it parses no SQL and depends on no other
//! stage. `cargo tree` over its normal (non-dev) dependencies holds no sqlparser and no remodel
//! crate besides `remodel-model`.

use std::process::Command;

/// The crates of the normal dependency tree of `remodel-design` (itself included).
fn normal_dependencies() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "remodel-design",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn design_depends_on_the_model_only() {
    let deps = normal_dependencies();
    assert!(
        deps.iter().any(|d| d == "remodel-model"),
        "no remodel-model in {deps:?}"
    );
    let wrong: Vec<&String> = deps
        .iter()
        .filter(|d| {
            d.starts_with("sqlparser")
                || (d.starts_with("remodel-") && *d != "remodel-model" && *d != "remodel-design")
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "remodel-design must depend on remodel-model only, its normal dependencies hold {wrong:?}"
    );
}
