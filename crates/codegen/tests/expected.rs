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

/// A serial column's next value is asked of the hooks with the column's width: a time-ordered
/// 64-bit id fits a `bigserial`, not a `serial` (whose default hook raises).
#[test]
fn sequences_are_asked_with_the_columns_width() {
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
            "nextval(\"\", \"ticket_notes.note_id\", 64)",
            "nextval(\"\", \"ticket_notes.note_id\", 64)"
        ]
    );
    let note_id = plan
        .schema
        .tables
        .iter_mut()
        .find(|t| t.name == "ticket_notes")
        .and_then(|t| t.columns.iter_mut().find(|c| c.name == "note_id"))
        .expect("ticket_notes.note_id");
    note_id.sql_type = "serial".into();
    assert_eq!(
        calls(&plan),
        [
            "nextval(\"\", \"ticket_notes.note_id\", 32)",
            "nextval(\"\", \"ticket_notes.note_id\", 32)"
        ]
    );
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
