//! The generated code of each case of `fixtures/codegen/` against its expected files
//! (`UPDATE_EXPECT=1` rewrites them, so a change of the generator is a reviewable diff). The
//! runtime and driver modules every package carries are the templates themselves, not repeated
//! (Python's `_…` modules, Java's `Rt`, `Driver`, `BaseHooks` and `Serve`).

use remodel_codegen::{generate, Lang, Options};
use remodel_model::Plan;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The designer's expected rideshare plan (kept current by the design tests).
fn rideshare() -> Plan {
    let text = std::fs::read_to_string(root().join("fixtures/plan/rideshare/plan.json"))
        .expect("fixtures/plan/rideshare/plan.json");
    serde_json::from_str(&text).expect("the fixture plan")
}

/// Plans `fixtures/plan/<name>/` (its `schema.sql` and `queries.sql`) into keyspace `name`.
fn plan_fixture(name: &str) -> Plan {
    let dir = root().join("fixtures/plan").join(name);
    let ddl = remodel_sql::ddl::load_files(&[dir.join("schema.sql")]).expect("schema");
    let wl = remodel_sql::workload::read_files(
        &[dir.join("queries.sql")],
        remodel_sql::workload::Format::Auto,
    )
    .expect("workload");
    let analysis = remodel_analyze::analyze(
        &ddl.schema,
        &wl.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    );
    let config = remodel_design::DesignConfig {
        keyspace: name.replace('-', "_"),
        ..remodel_design::DesignConfig::default()
    };
    remodel_design::plan(analysis, None, &config).0
}

/// Compares every generated file but the fixed templates with `fixtures/codegen/<case>/<lang>/`.
fn check(case: &str, plan: &Plan, lang: Lang, dir: &str, package: &str) {
    let opts = Options {
        lang,
        package: package.into(),
    };
    let out = generate(plan, &opts).expect("generate");
    let base = root().join("fixtures/codegen").join(case).join(dir);
    for f in &out.files {
        let name = f.path.rsplit('/').next().unwrap_or_default();
        let template = matches!(
            name,
            "Rt.java" | "Driver.java" | "BaseHooks.java" | "Serve.java"
        );
        if (name.starts_with('_') && name != "__init__.py") || name == "py.typed" || template {
            continue;
        }
        let path = base.join(&f.path);
        // expect-test writes a new expected file but makes no folder for it.
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("fixtures/codegen folder");
        }
        expect_test::expect_file![path].assert_eq(&f.contents);
    }
    let mut summary = String::new();
    for (pattern, name) in &out.functions {
        summary.push_str(&format!("{pattern} {name}\n"));
    }
    for n in &out.not_generated {
        summary.push_str(&format!("not generated: {} {}\n", n.pattern, n.reason));
    }
    std::fs::create_dir_all(&base).expect("fixtures/codegen folder");
    expect_test::expect_file![base.join("functions.txt")].assert_eq(&summary);
}

#[test]
fn rideshare_python() {
    check(
        "rideshare",
        &rideshare(),
        Lang::Python,
        "python",
        "rideshare_dal",
    );
}

#[test]
fn fixtures_python() {
    for case in [
        "buckets",
        "upserts",
        "counters-read-heavy",
        "counters-write-heavy",
        "embed_one_to_few",
        "expiring",
        "library",
    ] {
        check(
            case,
            &plan_fixture(case),
            Lang::Python,
            "python",
            &format!("{}_dal", case.replace('-', "_")),
        );
    }
}

#[test]
fn rideshare_java() {
    check(
        "rideshare",
        &rideshare(),
        Lang::Java,
        "java",
        "rideshare_dal",
    );
}

#[test]
fn fixtures_java() {
    for case in [
        "buckets",
        "upserts",
        "counters-read-heavy",
        "counters-write-heavy",
        "embed_one_to_few",
        "expiring",
        "library",
    ] {
        check(
            case,
            &plan_fixture(case),
            Lang::Java,
            "java",
            &format!("{}_dal", case.replace('-', "_")),
        );
    }
}

/// A serial column's next value is asked of the hooks with the strategy the plan states for it
/// (`design.ids`): a time-ordered 64-bit id for a `bigserial`, the application's for a column
/// the plan leaves to it; a column the plan states nothing for gives a function that raises.
#[test]
fn sequences_are_made_as_the_plan_states() {
    let mut plan = plan_fixture("defaults");
    let calls = |plan: &Plan| {
        let mut out = Vec::new();
        for lang in [Lang::Python, Lang::Java] {
            let opts = Options {
                lang,
                package: "defaults_dal".into(),
            };
            let files = generate(plan, &opts).expect("generate").files;
            let queries = files
                .iter()
                .find(|f| f.path.ends_with("queries.py") || f.path.ends_with("Queries.java"))
                .expect("the queries");
            let at = queries.contents.find("nextval(").expect("a nextval call");
            let end = at + queries.contents[at..].find(')').expect("its end");
            out.push(queries.contents[at..=end].to_string());
        }
        out
    };
    assert_eq!(
        calls(&plan),
        [
            "nextval(\"\", \"ticket_notes.note_id\", \"time_ordered\")",
            "nextval(\"\", \"ticket_notes.note_id\", \"time_ordered\")"
        ]
    );
    let id = plan
        .design
        .ids
        .iter_mut()
        .find(|i| i.column.table == "ticket_notes" && i.column.column == "note_id")
        .expect("ticket_notes.note_id's id strategy");
    id.strategy = remodel_model::IdStrategy::Application;
    assert_eq!(
        calls(&plan),
        [
            "nextval(\"\", \"ticket_notes.note_id\", \"application\")",
            "nextval(\"\", \"ticket_notes.note_id\", \"application\")"
        ]
    );
    plan.design.ids.clear();
    for lang in [Lang::Python, Lang::Java] {
        let opts = Options {
            lang,
            package: "defaults_dal".into(),
        };
        let out = generate(&plan, &opts).expect("generate");
        assert!(
            out.not_generated
                .iter()
                .any(|n| n.reason.contains("ticket_notes.note_id")
                    && n.reason.contains("design.ids")),
            "{:?}",
            out.not_generated
        );
    }
}

/// A logged batch the plan cuts (`batch.max_statements`) is sent in chunks by both languages.
#[test]
fn a_batch_the_plan_cuts_is_sent_in_chunks() {
    let mut plan = rideshare();
    let w = plan
        .design
        .writes
        .iter_mut()
        .find(|w| w.targets.len() > 1)
        .expect("a write of several copies");
    w.batch.as_mut().expect("its batch").max_statements = Some(2);
    for (lang, send) in [
        (
            Lang::Python,
            "self._db.send(main, \"logged\", \"LOCAL_QUORUM\", max_statements=2)",
        ),
        (
            Lang::Java,
            "db.send(main, \"logged\", \"LOCAL_QUORUM\", 2);",
        ),
    ] {
        let opts = Options {
            lang,
            package: "rideshare_dal".into(),
        };
        let files = generate(&plan, &opts).expect("generate").files;
        let queries = files
            .iter()
            .find(|f| f.path.ends_with("queries.py") || f.path.ends_with("Queries.java"))
            .expect("the queries");
        assert_eq!(
            queries.contents.matches(send).count(),
            1,
            "{lang:?}: {send}"
        );
    }
}
