//! The report of the designer's expected rideshare plan (`fixtures/plan/rideshare/plan.json`):
//! every chapter's text against `fixtures/report/rideshare/` and the run chapter against
//! `fixtures/report/run/` (`UPDATE_EXPECT=1` rewrites them, so a report change is a reviewable
//! diff); the same bytes on every run; a page per table; every pattern in the mapping.

use remodel_model::Plan;
use remodel_report::{read_plan, read_run, render, Cql, Loaded, Paths, ReportInput, RunFolder};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rideshare() -> Plan {
    read_plan(&root().join("fixtures/plan/rideshare/plan.json")).expect("the fixture plan")
}

/// The input as `remodel report` builds it: the CQL from the designer's emitter.
fn input<'a>(plan: &'a Plan, run: Option<&'a RunFolder>) -> ReportInput<'a> {
    let tables = plan
        .design
        .tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                remodel_design::cql::create_table(&plan.design.keyspace.name, t),
            )
        })
        .collect();
    ReportInput {
        plan,
        cql: Cql {
            tables,
            types: Default::default(),
        },
        paths: Paths {
            plan: "out/rideshare/plan.json".into(),
            schema_cql: "out/rideshare/schema.cql".into(),
        },
        run,
    }
}

#[test]
fn chapters_match_the_expected_text() {
    let plan = rideshare();
    let book = render(&input(&plan, None));
    let dir = root().join("fixtures/report/rideshare");
    expect_test::expect_file![dir.join("SUMMARY.md")].assert_eq(&book.summary());
    for page in book.pages() {
        expect_test::expect_file![dir.join(&page.path)].assert_eq(&page.body);
    }
    // No page of an earlier report lingers among the expected files.
    let mut expected: Vec<String> = Vec::new();
    collect_md(&dir, &dir, &mut expected);
    let mut pages: Vec<String> = book.pages().iter().map(|p| p.path.clone()).collect();
    pages.push("SUMMARY.md".into());
    pages.sort();
    expected.sort();
    assert_eq!(
        expected, pages,
        "fixtures/report/rideshare holds exactly the pages"
    );
}

fn collect_md(base: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("list").flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_md(base, &path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            let rel = path.strip_prefix(base).expect("below base");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn same_plan_same_bytes_and_well_formed_pictures() {
    let plan = rideshare();
    let a = render(&input(&plan, None)).files();
    let b = render(&input(&plan, None)).files();
    assert_eq!(a, b, "two renders of one plan differ");
    let svgs: Vec<(&String, &Vec<u8>)> = a.iter().filter(|(p, _)| p.ends_with(".svg")).collect();
    // Traffic, two partition-size charts, one key diagram per table.
    assert_eq!(svgs.len(), 3 + plan.design.tables.len());
    for (path, bytes) in svgs {
        let text = std::str::from_utf8(bytes).expect("utf-8");
        assert!(
            text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")
                && text.trim_end().ends_with("</svg>")
                && text.matches("<svg").count() == 1,
            "{path}"
        );
    }
    let toml = String::from_utf8(a["book.toml"].clone()).expect("utf-8");
    assert!(toml.starts_with(remodel_report::BOOK_MARKER), "{toml}");
    assert!(
        a["mermaid.min.js"].len() > 1_000_000,
        "the Mermaid bundle is written"
    );
}

#[test]
fn every_table_has_a_page_and_every_pattern_is_mapped() {
    let plan = rideshare();
    let book = render(&input(&plan, None));
    for t in &plan.design.tables {
        let page = book
            .page_at(&format!("tables/{}.md", t.name))
            .unwrap_or_else(|| panic!("no page for {}", t.name));
        assert!(page.body.starts_with(&format!("# {}\n", t.name)));
        assert!(page.body.contains(&format!(
            "CREATE TABLE IF NOT EXISTS rideshare.{} (",
            t.name
        )));
        assert!(book.summary().contains(&format!("(tables/{}.md)", t.name)));
    }
    let mapping = &book
        .page_at("query-mapping.md")
        .expect("mapping chapter")
        .body;
    for p in &plan.workload.patterns {
        assert!(
            mapping.contains(&format!("<a id=\"{}\"></a>", p.id)),
            "{} missing from the mapping",
            p.id
        );
    }
    for q in &plan.design.queries {
        let cql = q.cql.as_deref().expect("rideshare reads all have CQL");
        assert!(mapping.contains(cql), "{}", q.pattern);
    }
    assert!(
        book.page_at("backfill.md").is_none(),
        "no run chapter without --run"
    );
}

#[test]
fn run_chapter_reports_the_run_folder() {
    let plan = rideshare();
    let run = read_run(&root().join("fixtures/report/run")).expect("run folder");
    assert!(matches!(run.summary, Loaded::Found(_)));
    // The chapter names the folder as given; keep it stable for the expected text.
    let run = RunFolder {
        dir: "runs/cutover".into(),
        ..run
    };
    let book = render(&input(&plan, Some(&run)));
    let page = book.page_at("backfill.md").expect("run chapter");
    expect_test::expect_file![root().join("fixtures/report/run/backfill.md")].assert_eq(&page.body);
    let titles: Vec<&str> = book.pages().iter().map(|p| p.path.as_str()).collect();
    let pos = |p: &str| titles.iter().position(|t| *t == p).expect(p);
    assert!(pos("write-paths.md") < pos("backfill.md") && pos("backfill.md") < pos("runbook.md"));
}

#[test]
fn run_folder_without_or_with_broken_files() {
    let dir = std::env::temp_dir().join(format!("remodel-report-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let plan = rideshare();

    let empty = read_run(&dir).expect("an empty folder is a run not finished");
    assert_eq!(empty.summary, Loaded::Missing);
    let book = render(&input(&plan, Some(&empty)));
    let body = &book.page_at("backfill.md").expect("chapter").body;
    assert!(
        body.contains("No `summary.json` in the run folder"),
        "{body}"
    );
    assert!(body.contains("Not verified yet"), "{body}");

    std::fs::write(dir.join("summary.json"), "{\"tables\": 3}").expect("write");
    let broken = read_run(&dir).expect("read");
    assert!(matches!(broken.summary, Loaded::Invalid(_)));
    let book = render(&input(&plan, Some(&broken)));
    let body = &book.page_at("backfill.md").expect("chapter").body;
    assert!(
        body.contains("`summary.json` could not be read: invalid type"),
        "{body}"
    );

    assert!(
        read_run(&dir.join("nope")).is_err(),
        "a missing folder is an error"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The user guide's chapter on the report quotes the real rideshare report: each ```markdown
/// excerpt of `book/src/report.md` stands in one of the expected pages.
#[test]
fn user_guide_excerpts_are_the_real_report() {
    let guide = std::fs::read_to_string(root().join("book/src/report.md")).expect("guide page");
    let plan = rideshare();
    let book = render(&input(&plan, None));
    let mut excerpts = 0;
    let mut rest = guide.as_str();
    while let Some(start) = rest.find("```markdown\n") {
        let body = &rest[start + "```markdown\n".len()..];
        let end = body.find("\n```").expect("the excerpt closes");
        let excerpt = &body[..end];
        assert!(
            book.pages().iter().any(|p| p.body.contains(excerpt)),
            "book/src/report.md quotes text the rideshare report does not have:\n{excerpt}"
        );
        excerpts += 1;
        rest = &body[end..];
    }
    assert!(excerpts >= 3, "only {excerpts} excerpts found");
    assert!(
        guide.contains(&format!("({} pages)", book.pages().len())),
        "the example run's page count"
    );
}

#[test]
fn renamed_names_are_listed_with_their_reason() {
    // The rideshare plan renames nothing: no section.
    let plan = rideshare();
    let book = render(&input(&plan, None));
    let tables = &book.page_at("tables.md").expect("tables chapter").body;
    assert!(!tables.contains("## Renamed names"));
    // A plan with a rename lists it: Postgres name, target name, why.
    let mut plan = rideshare();
    plan.design.renames.push(remodel_model::Rename {
        kind: remodel_model::RenameKind::Table,
        source: "user-accounts".into(),
        target: "user_accounts_by_id_2".into(),
        reason: "CQL table names are letters, digits and _".into(),
    });
    let book = render(&input(&plan, None));
    let tables = &book.page_at("tables.md").expect("tables chapter").body;
    assert!(tables.contains("## Renamed names"), "{tables}");
    assert!(
        tables.contains("| table | `user-accounts` | `user_accounts_by_id_2` | CQL table names are letters, digits and \\_ |"),
        "{tables}"
    );
}
