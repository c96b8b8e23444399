//! The book matches the binary: every `$ remodel …` example in `book/src/*.md` is run (from a
//! scratch folder that links `examples/` and `fixtures/`, so outputs such as `out/rideshare` land
//! there) and its output compared with the lines under it. In the book, a line `…` stands for any
//! number of lines and a last line `exit=N` is the exit status. `$ printf|echo|cat …` lines of a
//! block (`printf … > strict.toml`) run too, unchecked; other commands (benchmarks) do not.
//!
//! `UPDATE_EXPECT=1 cargo test --test book_examples` rewrites the outputs in the book: whole
//! outputs are replaced; around a `…` each shown run of lines is re-taken from the new output,
//! starting where its first line now is (a first line that changed needs a hand edit).

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

/// One `$` command of a block with the output lines shown under it.
#[derive(Debug)]
struct Example {
    /// Line index (in the file) of the `$` line.
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The `$` commands of every ```` ```text ```` block of a chapter that holds a `$ remodel`.
fn examples(md: &str) -> Vec<Example> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```text" {
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or(lines.len());
        if lines.get(i + 1).is_some_and(|l| l.starts_with("$ ")) {
            for j in i + 1..end {
                if let Some(cmd) = lines[j].strip_prefix("$ ") {
                    let stop = (j + 1..end)
                        .find(|&k| lines[k].starts_with("$ "))
                        .unwrap_or(end);
                    out.push(Example {
                        line: j,
                        command: cmd.to_string(),
                        expected: lines[j + 1..stop].iter().map(|l| l.to_string()).collect(),
                    });
                }
            }
        }
        i = end + 1;
    }
    out
}

/// A scratch folder where the book's relative paths resolve.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("remodel-book-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    for name in ["examples", "fixtures"] {
        std::os::unix::fs::symlink(support::root().join(name), dir.join(name)).expect("link");
    }
    dir
}

/// A line with the digits of a duration (`in 27 ms`) replaced by `N`: timings differ per run.
fn steady(line: &str) -> String {
    match line.find(" ms") {
        Some(end) => {
            let start = line[..end]
                .rfind(|c: char| !c.is_ascii_digit())
                .map_or(0, |p| p + 1);
            if start < end {
                format!("{}N{}", &line[..start], &line[end..])
            } else {
                line.to_string()
            }
        }
        None => line.to_string(),
    }
}

/// Runs one command line with `remodel` on the PATH; output as the terminal shows it
/// (stdout and stderr in the order written) and the exit status.
fn run(dir: &Path, command: &str) -> (Vec<String>, i32) {
    let bin = Path::new(env!("CARGO_BIN_EXE_remodel"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("sh runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        text.lines().map(str::to_string).collect(),
        out.status.code().unwrap_or(-1),
    )
}

/// The shown lines split at `…` lines: runs of lines, and whether output is elided before the
/// first run and after the last.
fn segments(expected: &[String]) -> (Vec<Vec<String>>, bool, bool) {
    let mut segs: Vec<Vec<String>> = vec![Vec::new()];
    for l in expected {
        if l.trim() == "…" {
            segs.push(Vec::new());
        } else {
            segs.last_mut().expect("one").push(l.clone());
        }
    }
    let open_start = segs.first().is_some_and(Vec::is_empty) && segs.len() > 1;
    let open_end = segs.last().is_some_and(Vec::is_empty) && segs.len() > 1;
    segs.retain(|s| !s.is_empty());
    (segs, open_start, open_end)
}

/// Where each run of shown lines starts in `actual`, if all are there in order (and anchored
/// at the start or the end where nothing is elided).
fn matches(actual: &[String], expected: &[String]) -> Option<Vec<usize>> {
    let (segs, open_start, open_end) = segments(expected);
    if segs.is_empty() {
        return actual.is_empty().then(Vec::new);
    }
    let mut at = Vec::new();
    let mut from = 0;
    for (n, seg) in segs.iter().enumerate() {
        let fits = |p: usize| {
            actual
                .get(p..p + seg.len())
                .is_some_and(|a| a.iter().zip(seg).all(|(x, y)| steady(x) == steady(y)))
        };
        let p = if n == 0 && !open_start {
            fits(0).then_some(0)?
        } else if n == segs.len() - 1 && !open_end {
            let p = actual.len().checked_sub(seg.len())?;
            (p >= from && fits(p)).then_some(p)?
        } else {
            (from..actual.len()).find(|&p| fits(p))?
        };
        at.push(p);
        from = p + seg.len();
    }
    if !open_end && from != actual.len() {
        return None;
    }
    Some(at)
}

/// The shown lines re-taken from `actual` (see the module comment), or `None`.
fn updated(actual: &[String], expected: &[String]) -> Option<Vec<String>> {
    let (segs, open_start, open_end) = segments(expected);
    if segs.is_empty() || (segs.len() == 1 && !open_start && !open_end) {
        return Some(actual.to_vec());
    }
    let mut out = Vec::new();
    let mut from = 0;
    if open_start {
        out.push("…".to_string());
    }
    for (n, seg) in segs.iter().enumerate() {
        let last = n == segs.len() - 1;
        let start = if n == 0 && !open_start {
            0
        } else {
            (from..actual.len()).find(|&p| actual[p] == seg[0])?
        };
        let end = if last && !open_end {
            actual.len()
        } else {
            (start + seg.len()).min(actual.len())
        };
        out.extend(actual[start..end].iter().cloned());
        if !last || open_end {
            out.push("…".to_string());
        }
        from = end;
    }
    Some(out)
}

#[test]
fn every_remodel_example_in_the_book_matches_the_binary() {
    check_the_book(false);
}

/// The examples that build the report's HTML need `mdbook`: checked, with all the others, where
/// it is on PATH.
#[test]
fn every_example_with_html_matches_the_binary_live() {
    remodel_testdb::live!(Mdbook);
    check_the_book(true);
}

/// Runs the book's examples (those with `--html` only when `html`) and compares their output.
fn check_the_book(html: bool) {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let dir = scratch(if html { "html" } else { "plain" });
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(support::root().join("book/src"))
        .expect("book/src")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    for chapter in chapters {
        let md = std::fs::read_to_string(&chapter).expect("chapter");
        let mut lines: Vec<String> = md.lines().map(str::to_string).collect();
        // Applied bottom-up so earlier line numbers stay valid.
        let mut edits: Vec<(usize, usize, Vec<String>)> = Vec::new();
        for ex in examples(&md) {
            // Other commands run only when they prepare a file (`printf … > strict.toml`); a
            // benchmark (`bash bench/…`) is not for every test run.
            let setup = ["printf ", "echo ", "cat "]
                .iter()
                .any(|c| ex.command.starts_with(c));
            if !ex.command.starts_with("remodel ") {
                if setup {
                    run(&dir, &ex.command);
                }
                continue;
            }
            if !html && ex.command.contains("--html") {
                continue;
            }
            let (mut actual, code) = run(&dir, &ex.command);
            checked += 1;
            let expected = &ex.expected;
            if expected.last().is_some_and(|l| l.starts_with("exit=")) {
                actual.push(format!("exit={code}"));
            }
            if matches(&actual, expected).is_some() {
                continue;
            }
            let name = chapter
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            match updated(&actual, expected).filter(|_| update) {
                Some(new) => edits.push((ex.line + 1, ex.expected.len(), new)),
                None => failures.push(format!(
                    "book/src/{name}:{}: $ {}\n--- the book shows\n{}\n--- the binary prints\n{}",
                    ex.line + 1,
                    ex.command,
                    expected.join("\n"),
                    actual.join("\n")
                )),
            }
        }
        if !edits.is_empty() {
            edits.sort_by_key(|e| std::cmp::Reverse(e.0));
            for (start, len, new) in edits {
                lines.splice(start..start + len, new);
            }
            std::fs::write(&chapter, lines.join("\n") + "\n").expect("rewrite the chapter");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        checked >= 20,
        "only {checked} `$ remodel` examples found in book/src"
    );
    assert!(
        failures.is_empty(),
        "{} book example(s) differ from the binary (UPDATE_EXPECT=1 rewrites them):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn ellipses_match_any_lines() {
    let v = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(matches(&v("a\nb\nc\nd"), &v("a\n…\nd")).is_some());
    assert!(matches(&v("a\nb\nc\nd"), &v("…\nc\n…")).is_some());
    assert!(matches(&v("a\nb"), &v("a")).is_none());
    assert!(matches(&v("a\nb"), &v("a\nb")).is_some());
    assert!(matches(&v("done in 33 ms"), &v("done in 27 ms")).is_some());
    assert_eq!(
        updated(&v("a\nX\nc\nd"), &v("a\nb\n…\nd")),
        Some(v("a\nX\n…\nd"))
    );
}
