//! The report of the designer's expected rideshare plan (`fixtures/plan/rideshare/plan.json`):
//! every chapter's text against `fixtures/report/rideshare/`, the run chapter against
//! `fixtures/report/run/` and the replay chapter against `fixtures/report/replay/`
//! (`UPDATE_EXPECT=1` rewrites them, so a report change is a reviewable diff); the same bytes on
//! every run; a page per table; every pattern in the mapping.

use remodel_model::{Plan, ReplayMismatch, ReplayOutcome, StatementKind};
use remodel_report::{
    read_plan, read_replay, read_run, render, Cql, Function, Loaded, Paths, ReplayFolder,
    ReportInput, RunFolder,
};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rideshare() -> Plan {
    read_plan(&root().join("fixtures/plan/rideshare/plan.json")).expect("the fixture plan")
}

/// The input as `remodel report` builds it: the CQL from the designer's emitter, the functions'
/// declarations from the generator.
fn input<'a>(plan: &'a Plan, run: Option<&'a RunFolder>) -> ReportInput<'a> {
    let tables = plan
        .design
        .tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                remodel_design::emit::cql::create_table(&plan.design.keyspace.name, t),
            )
        })
        .collect();
    let functions = remodel_codegen::signatures(plan)
        .expect("the plan names its functions")
        .into_iter()
        .map(|(id, s)| {
            let f = Function {
                python: s.python,
                java: s.java,
            };
            (id, f)
        })
        .collect();
    ReportInput {
        plan,
        functions,
        cql: Cql {
            tables,
            types: Default::default(),
        },
        paths: Paths {
            plan: "out/rideshare/plan.json".into(),
            schema_cql: "out/rideshare/schema.cql".into(),
        },
        run,
        replay: None,
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
    // Traffic, two partition-size charts, the cost chart, one key diagram per table.
    assert_eq!(svgs.len(), 4 + plan.design.tables.len());
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
fn relationships_show_how_an_undeclared_key_was_found() {
    let mut plan = rideshare();
    // As `remodel plan --source` records a key found by the data probes.
    let evidence = "data: all 1000 sampled values (400 distinct) of trips.driver_id -> \
                    drivers.driver_id are in drivers.driver_id (100% found; named after the table drivers)";
    let rel = plan
        .relationships
        .iter_mut()
        .find(|r| r.to == "trips" && r.columns == ["driver_id"])
        .expect("drivers → trips");
    rel.rationale.key_evidence = Some(evidence.into());
    let book = render(&input(&plan, None));
    let page = &book.page_at("relationships.md").expect("chapter").body;
    let section = &page[page.find("## drivers → trips").expect("section")..];
    let row = section
        .lines()
        .find(|l| l.starts_with("| foreign key |"))
        .expect("foreign key row");
    assert_eq!(
        row,
        "| foreign key | not declared; found by data: all 1000 sampled values (400 distinct) of \
         trips.driver_id -&gt; drivers.driver_id are in drivers.driver_id (100% found; named after \
         the table drivers) |"
    );
    // The others are declared.
    assert_eq!(
        page.matches("| foreign key | declared in the schema |")
            .count(),
        2
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
    // The overview puts what the run leaves to decide first, and links the chapter.
    let overview = &book.page_at("overview.md").expect("overview").body;
    let see = "See [Backfill and verification](backfill.md).";
    assert!(
        overview.contains(&format!(
            "1. **Verification failed** for `trips_by_driver`, `trips_by_id`: the target differs \
             from the source. {see}\n2. The backfill rejected 3 rows (in `runs/cutover/rejects/`): \
             fix the source or the plan, then resume. {see}\n"
        )),
        "{overview}"
    );
    assert!(overview.contains("- [Backfill and verification](backfill.md): "));
    let titles: Vec<&str> = book.pages().iter().map(|p| p.path.as_str()).collect();
    let pos = |p: &str| titles.iter().position(|t| *t == p).expect(p);
    assert!(pos("write-paths.md") < pos("backfill.md") && pos("backfill.md") < pos("runbook.md"));
}

/// The run folder of a sync (`fixtures/report/sync`: `sync.json`, its backfill in `backfill/`),
/// as `remodel report --run runs/sync` reads it: the chapter says what the sync applied, that
/// the slot is still there, and why the backfill's rows and verify's differ; given the backfill's
/// folder inside it, the same.
#[test]
fn run_chapter_of_a_sync_explains_its_counts() {
    let plan = rideshare();
    let dir = root().join("fixtures/report/sync");
    let run = read_run(&dir).expect("sync folder");
    assert!(matches!(run.summary, Loaded::Found(_)), "{:?}", run.summary);
    assert!(matches!(run.verify, Loaded::Found(_)), "{:?}", run.verify);
    let inner = read_run(&dir.join("backfill")).expect("its backfill folder");
    assert_eq!(inner, run);
    let mut sync = run.sync.clone().expect("a sync's run folder");
    assert!(!sync.finished);
    sync.dir = "runs/sync".into();
    let run = RunFolder {
        dir: "runs/sync/backfill".into(),
        sync: Some(sync.clone()),
        ..run
    };
    let book = render(&input(&plan, Some(&run)));
    let page = &book.page_at("backfill.md").expect("run chapter").body;
    expect_test::expect_file![dir.join("backfill.md")].assert_eq(page);

    // Finished: the slot is said dropped.
    sync.finished = true;
    let run = RunFolder {
        sync: Some(sync),
        ..run
    };
    let book = render(&input(&plan, Some(&run)));
    let page = &book.page_at("backfill.md").expect("run chapter").body;
    assert!(
        page.contains(
            "`remodel sync --finish` dropped the slot and the publication (`sync.finished.json`)"
        ),
        "{page}"
    );
    assert!(!page.contains("still there"), "{page}");
}

/// The replay fixture as `remodel report --replay out/rideshare/replay` reads it.
fn replay_fixture() -> ReplayFolder {
    let replay = read_replay(&root().join("fixtures/report/replay")).expect("replay folder");
    assert!(
        matches!(replay.report, Loaded::Found(_)),
        "{:?}",
        replay.report
    );
    // The chapter names the file as given; keep it stable for the expected text.
    ReplayFolder {
        file: "out/rideshare/replay/replay.json".into(),
        ..replay
    }
}

#[test]
fn replay_chapter_reports_replay_json() {
    let plan = rideshare();
    let replay = replay_fixture();
    let report = replay.report.found().expect("read");
    let book = render(&ReportInput {
        replay: Some(&replay),
        ..input(&plan, None)
    });
    let page = &book.page_at("replay.md").expect("replay chapter").body;
    expect_test::expect_file![root().join("fixtures/report/replay/replay.md")].assert_eq(page);
    // A row per pattern of the replay, linked to its mapping, with its figures.
    for p in &report.patterns {
        let row = page
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "| [{}](query-mapping.md#{}) {} | replayed | ",
                    p.pattern,
                    p.pattern,
                    p.kind.map_or("?", StatementKind::action)
                ))
            })
            .unwrap_or_else(|| panic!("no row for {}:\n{page}", p.pattern));
        assert_eq!(p.outcome, ReplayOutcome::Replayed, "{row}");
        assert!(
            row.contains(&format!(
                " | {:.2} / {:.2} | {:.2} / {:.2} |",
                p.postgres.p50_ms, p.postgres.p99_ms, p.cassandra.p50_ms, p.cassandra.p99_ms
            )),
            "{row}"
        );
    }
    assert!(page.contains("**No difference**"), "{page}");
    // Nothing to decide from a clean replay; the overview links the chapter, which comes after
    // the cost chapter and before the runbook, and the runbook points at it.
    let overview = &book.page_at("overview.md").expect("overview").body;
    assert!(!overview.contains("Replay found"), "{overview}");
    assert!(overview.contains("- [Replay on the workload](replay.md): "));
    let titles: Vec<&str> = book.pages().iter().map(|p| p.path.as_str()).collect();
    let pos = |p: &str| titles.iter().position(|t| *t == p).expect(p);
    assert!(pos("cost.md") < pos("replay.md") && pos("replay.md") < pos("runbook.md"));
    assert!(book
        .page_at("runbook.md")
        .expect("runbook")
        .body
        .contains("the [Replay on the workload](replay.md) chapter shows it"));
}

/// A replay moved to a scratch keyspace (`replay --keyspace`) is this plan's: the chapter says
/// where it ran, and nothing asks to replay again.
#[test]
fn a_replay_in_a_scratch_keyspace_is_this_plans() {
    let plan = rideshare();
    let mut replay = replay_fixture();
    let Loaded::Found(report) = &mut replay.report else {
        panic!("the fixture reads");
    };
    report.keyspace = "rideshare_scratch".into();
    report.plan_keyspace = Some("rideshare".into());
    let book = render(&ReportInput {
        replay: Some(&replay),
        ..input(&plan, None)
    });
    let page = &book.page_at("replay.md").expect("chapter").body;
    assert!(
        page.contains(
            "The plan's tables were created in keyspace `rideshare_scratch` (`--keyspace`) in \
             place of `rideshare`, so that no generated row reached the plan's own keyspace."
        ),
        "{page}"
    );
    let overview = &book.page_at("overview.md").expect("overview").body;
    assert!(!overview.contains("may be of another plan"), "{overview}");
    assert!(!page.contains("may be of another plan"), "{page}");
}

/// Differences, a pattern replay could not run and a replay of another keyspace each reach the
/// overview's decisions first, and the chapter shows each difference with both results.
#[test]
fn replay_differences_and_gaps_need_a_decision() {
    let plan = rideshare();
    let mut replay = replay_fixture();
    let Loaded::Found(report) = &mut replay.report else {
        panic!("the fixture reads");
    };
    // As `tests/replay_live.rs` makes it: trips_by_driver without its started_at clustering.
    let q1 = report
        .patterns
        .iter_mut()
        .find(|p| p.pattern == "q1")
        .expect("q1");
    q1.mismatches = (0..7)
        .map(|i| ReplayMismatch {
            pattern: "q1".into(),
            params: format!("$1=driver_i-{i}, $2=10"),
            after: None,
            reason: "same rows in another order than the ORDER BY allows".into(),
            sql: vec![
                "(started_at=2026-12-21 01:00:00Z, city=\"city-104\")".into(),
                "(started_at=2026-12-07 14:00:00Z, city=\"city-84\")".into(),
            ],
            cql: vec![
                "(started_at=2026-12-07 14:00:00Z, city=\"city-84\")".into(),
                "(started_at=2026-12-21 01:00:00Z, city=\"city-104\")".into(),
            ],
        })
        .collect();
    let q6 = report
        .patterns
        .iter_mut()
        .find(|p| p.pattern == "q6")
        .expect("q6");
    q6.outcome = ReplayOutcome::NotReplayed;
    q6.reason = Some("Postgres refused every write".into());
    report.keyspace = "elsewhere".into();
    let book = render(&ReportInput {
        replay: Some(&replay),
        ..input(&plan, None)
    });
    let see = "See [Replay on the workload](replay.md).";
    let overview = &book.page_at("overview.md").expect("overview").body;
    assert!(
        overview.contains(&format!(
            "1. **Replay found 7 difference(s)** in [q1](query-mapping.md#q1): there the plan's \
             CQL does not give what the SQL gives. {see}\n\
             2. **This replay ran keyspace `elsewhere`, not this plan's `rideshare`**: it may be \
             of another plan; replay this one. {see}\n\
             3. Replay could not run 1 pattern(s) ([q6](query-mapping.md#q6)): their results are \
             not proven. {see}\n"
        )),
        "{overview}"
    );
    let page = &book.page_at("replay.md").expect("chapter").body;
    assert!(
        page.contains("**7 difference(s)** in 1 of the 6 replayed pattern(s)"),
        "{page}"
    );
    assert!(
        page.contains(
            "| [q6](query-mapping.md#q6) update | **not replayed** | - | - | - | - | - |"
        ),
        "{page}"
    );
    assert!(
        page.contains("- [q6](query-mapping.md#q6) (update), replay cannot run it: Postgres refused every write\n"),
        "{page}"
    );
    assert!(
        page.contains(
            "### q1 (read)\n\n[How the plan serves it](query-mapping.md#q1).\n\n\
             - With `$1=driver_i-0, $2=10`: same rows in another order than the ORDER BY allows.\n\n  \
             ```text\n  SQL (2 rows shown):\n    (started_at=2026-12-21 01:00:00Z, city=\"city-104\")\n"
        ),
        "{page}"
    );
    // Five differences shown, the rest counted.
    assert_eq!(page.matches("- With `$1=driver_i-").count(), 5, "{page}");
    assert!(
        page.contains("… and 2 more (all in `replay.json`)."),
        "{page}"
    );
}

#[test]
fn replay_folder_without_or_with_a_broken_file() {
    let dir = std::env::temp_dir().join(format!("remodel-report-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let plan = rideshare();
    let chapter = |replay: &ReplayFolder| {
        let book = render(&ReportInput {
            replay: Some(replay),
            ..input(&plan, None)
        });
        let overview = book.page_at("overview.md").expect("overview").body.clone();
        (
            book.page_at("replay.md").expect("chapter").body.clone(),
            overview,
        )
    };

    let empty = read_replay(&dir).expect("a folder without replay.json");
    assert_eq!(empty.report, Loaded::Missing);
    let (body, overview) = chapter(&empty);
    assert!(body.contains("No replay at `"), "{body}");
    assert!(overview.contains("1. No replay at `"), "{overview}");

    std::fs::write(dir.join("replay.json"), "{\"patterns\": 3}").expect("write");
    let broken = read_replay(&dir).expect("read");
    assert!(matches!(broken.report, Loaded::Invalid(_)));
    let (body, _) = chapter(&broken);
    assert!(
        body.contains("replay.json` could not be read: invalid type"),
        "{body}"
    );
    // The file itself may be named too.
    let file = read_replay(&dir.join("replay.json")).expect("the file");
    assert_eq!(file.report, broken.report);

    assert!(
        read_replay(&dir.join("nope")).is_err(),
        "a missing path is an error"
    );
    let _ = std::fs::remove_dir_all(&dir);
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
    let overview = &book.page_at("overview.md").expect("overview").body;
    assert!(
        overview
            .contains("1. The run folder has no `summary.json`: the backfill has not finished."),
        "{overview}"
    );

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
    // The replay chapter's excerpts are of the replay fixture's report.
    let replay = replay_fixture();
    let with_replay = render(&ReportInput {
        replay: Some(&replay),
        ..input(&plan, None)
    });
    let mut excerpts = 0;
    let mut rest = guide.as_str();
    while let Some(start) = rest.find("```markdown\n") {
        let body = &rest[start + "```markdown\n".len()..];
        let end = body.find("\n```").expect("the excerpt closes");
        let excerpt = &body[..end];
        assert!(
            book.pages()
                .iter()
                .chain(with_replay.page_at("replay.md"))
                .any(|p| p.body.contains(excerpt)),
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

/// The cost chapter when the tables were chosen greedily and a read could trade reads for writes:
/// the overview lists the selection as a decision, the chapter says why greedy ran, the objective
/// that would lean the traded read names it, and the mapping says at what weights it would win.
#[test]
fn cost_chapter_greedy_selection_and_a_traded_read() {
    let mut plan = rideshare();
    let cost = plan
        .design
        .cost
        .as_mut()
        .expect("the rideshare plan has costs");
    cost.selection.method = "greedy".into();
    cost.selection.note = Some("the program has 20001 variables (more than 20000)".into());
    let q2 = plan
        .design
        .queries
        .iter_mut()
        .find(|q| q.pattern == "q2")
        .expect("q2");
    // The index table spares some writes for one more partition per call: not enough at the
    // plan's balanced weights, enough when a write weighs twice a read.
    q2.candidates[1].write_cost = 16.0;
    let book = render(&input(&plan, None));
    let page = |p: &str| &book.page_at(p).expect(p).body;

    assert!(
        page("overview.md").contains(
            "**The tables were chosen greedily, not proven optimal**: the program has 20001 \
             variables (more than 20000). See [how the tables were chosen](cost.md#how-the-tables-were-chosen)."
        ),
        "{}",
        page("overview.md")
    );
    let chapter = page("cost.md");
    assert!(
        chapter.contains(
            "A greedy pass chose them (the program has 20001 variables (more than 20000))"
        ),
        "{chapter}"
    );
    assert!(
        chapter.contains(
            "| `writes` | 1, 2 | [q2](query-mapping.md#q2) → *index table + row lookup* \
             (+4.04 partition reads, -2.71 table writes per 100 calls) |"
        ),
        "{chapter}"
    );
    assert!(
        chapter.contains("| `reads` | 1, 0.125 | none |"),
        "{chapter}"
    );
    assert!(
        page("query-mapping.md").contains(
            "Chosen: *own table*. *index table + row lookup* would save 2.71 table writes per \
             100 calls for 4.04 more partition reads: it wins only where a table write weighs \
             more than 1.49 partition reads (here 0.5).\n"
        ),
        "{}",
        page("query-mapping.md")
    );
}

/// A plan made before the designer recorded costs: no cost chapter and no link to one.
#[test]
fn plan_without_costs_has_no_cost_chapter() {
    let mut plan = rideshare();
    plan.design.cost = None;
    for q in &mut plan.design.queries {
        q.candidates.clear();
    }
    let book = render(&input(&plan, None));
    assert!(book.page_at("cost.md").is_none());
    assert!(!book.summary().contains("cost.md"));
    for p in book.pages() {
        assert!(
            !p.body.contains("cost.md"),
            "{} links the cost chapter",
            p.path
        );
        assert!(!p.body.contains("Ways considered"), "{}", p.path);
    }
    assert!(!book.files().contains_key("src/img/cost.svg"));
}

/// The writes ranked by cost add up to the design's figures in `design.cost`.
#[test]
fn writes_by_cost_add_up_to_the_design_figures() {
    let plan = rideshare();
    let cost = plan.design.cost.as_ref().expect("costs");
    let (read, write, _) = cost.selection.weights;
    let d = &cost.design;
    let weighted = write * d.table_writes + read * d.reads_before_write;
    let book = render(&input(&plan, None));
    let chapter = &book.page_at("cost.md").expect("cost chapter").body;
    let amount = remodel_report::md::amount;
    assert!(
        chapter.contains(&format!(
            "| all writes |  |  |  |  | {} | {} | **{}** | 100.0% |",
            amount(d.table_writes),
            amount(d.reads_before_write),
            amount(weighted)
        )),
        "{chapter}"
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

/// The sessions chapter of the blog fixture's plan (`fixtures/sessions/`, issue 23): its two
/// loops with their fan-out and decision, and the transaction's write group.
#[test]
fn the_sessions_chapter_shows_loops_and_write_groups() {
    let plan = read_plan(&root().join("fixtures/sessions/plan.json")).expect("the fixture plan");
    let book = render(&input(&plan, None));
    let page = book.page_at("sessions.md").expect("a sessions chapter");
    expect_test::expect_file![root().join("fixtures/sessions/report-sessions.md")]
        .assert_eq(&page.body);
    // The rideshare plan's workload is a SQL file: no sessions, no chapter.
    assert!(render(&input(&rideshare(), None))
        .page_at("sessions.md")
        .is_none());
}

/// Each pattern of the mapping names the function plan.json gives it, with its Python and Java
/// declarations when the caller hands them in, and the name alone when it does not.
#[test]
fn the_mapping_shows_each_generated_function() {
    let mut plan = rideshare();
    let page = |book: &remodel_report::Book| {
        let page = book.pages().iter().find(|p| p.path == "query-mapping.md");
        page.expect("the mapping page").body.clone()
    };
    let with = page(&render(&input(&plan, None)));
    assert!(
        with.contains("Generated function `trips_by_driver_id` (`remodel codegen`):\n\n```python\ndef trips_by_driver_id(self, driver_id: str | None"),
        "{with}"
    );
    assert!(with.contains("public List<TripsByDriverIdRow> tripsByDriverId(String driverId"));
    plan.design.queries[0].function = Some("history_of_driver".into());
    let renamed = page(&render(&ReportInput {
        functions: Default::default(),
        ..input(&plan, None)
    }));
    assert!(
        renamed.contains("Generated function `history_of_driver` (`remodel codegen`).\n"),
        "{renamed}"
    );
    assert!(!renamed.contains("```python"), "{renamed}");
}
