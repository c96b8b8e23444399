//! Every subcommand is listed, a line each, by `remodel --help` (its summary and its prose) and in
//! the README's commands table (issue 37: `sync` was missing from both).

mod support;

use support::{remodel_ok, root};

/// The subcommands `remodel --help` lists, each with its one line; panics on a summary that
/// wraps onto a second line.
fn listed() -> Vec<String> {
    let help = remodel_ok(&["--help"]);
    let section = help
        .split("\nCommands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no Commands section in\n{help}"));
    section
        .lines()
        .map(|line| {
            let entry = line
                .strip_prefix("  ")
                .filter(|e| !e.starts_with(' '))
                .unwrap_or_else(|| panic!("a summary longer than a line: {line:?}\n{help}"));
            entry
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .filter(|name| name != "help")
        .collect()
}

#[test]
fn help_and_readme_list_every_subcommand() {
    let names = listed();
    for expected in ["plan", "backfill", "verify", "replay", "sync", "export"] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    let help = remodel_ok(&["--help"]);
    let prose = help.split("\nUsage:").next().unwrap_or_default();
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    for name in &names {
        assert!(
            prose.contains(&format!("`{name}")),
            "the --help text says nothing of {name}:\n{prose}"
        );
        assert!(
            readme.contains(&format!("\n| `remodel {name} ")),
            "no row for `remodel {name}` in the README's commands table"
        );
    }
    assert!(
        !prose.contains("No database is needed for any of them"),
        "{prose}"
    );
}
