//! Hostile identifiers end to end against real Postgres and Cassandra (issue 14, part 4):
//! `fixtures/backfill/hostile` — reserved words, mixed case, embedded quotes, spaces, unicode and
//! 200-character names — goes schema → plan → CQL → `remodel backfill` → `remodel verify`, every
//! value comes back under its own name, and every target name that differs from its source name
//! is a rename in plan.json. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL`.

mod support;

use remodel_model::{Plan, RenameKind};
use remodel_testdb::scylla::value::{CqlValue, Row};
use remodel_testdb::CqlKeyspace;
use support::live::{json, refs, Case};

/// The 200-character names of the fixture, and the 63 bytes Postgres keeps of them.
fn long_names() -> (String, String) {
    (
        "c_".to_string() + &"x".repeat(61),
        "t_".to_string() + &"y".repeat(61),
    )
}

/// Rows with the values most likely to break quoting: quotes, backslashes, unicode, NULLs.
fn inserts() -> String {
    let (c63, t63) = long_names();
    format!(
        r#"
INSERT INTO "Customers" (id, "Name", name, "NAME", "select", "token", "say ""hi""", "first name",
    "prénom", "東京", "{c63}")
VALUES (1, 'Upper', 'lower', 'SHOUT', 'sel''ect', 7, 'he said "hi"', 'Ann Lee', 'Zoë',
        '東京都', 'long\value'),
       (2, NULL, 'only lower', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       (3, 'Čeněk', 'čeněk', 'ČENĚK', '', -1, '""', ' ', 'é', '🚕', 'x');
INSERT INTO "order items" ("order", "line#", "Customer Id", name, "qty ""x""")
VALUES (10, 1, 1, 'item one', 2), (10, 2, 3, 'item two', 5), (11, 1, 2, NULL, NULL);
INSERT INTO "Phone Numbers" ("Customer Id", "Kind", "Number ""+""", "ünïcode")
VALUES (1, 'home', '+1 "555"', 'ü'), (1, 'mum''s', '+44', NULL), (3, 'Work "desk"', '0', 'ï');
INSERT INTO "{t63}" (id, "ÄÖÜ") VALUES (1, 'äöü'), (2, NULL);
INSERT INTO "user" (id, "where") VALUES (1, 'here');
INSERT INTO "User" (id, "from") VALUES (1, 'there'), (2, 'elsewhere');
"#
    )
}

/// One row of a CQL read (the test's own statements, quoted by hand).
async fn row(ks: &CqlKeyspace, cql: &str) -> Vec<Option<CqlValue>> {
    let rows = ks
        .session()
        .query_unpaged(cql, &[])
        .await
        .unwrap_or_else(|e| panic!("{cql}: {e}"))
        .into_rows_result()
        .expect("rows");
    rows.maybe_first_row::<Row>()
        .expect("a row")
        .unwrap_or_else(|| panic!("no row: {cql}"))
        .columns
}

/// A user type's fields as the driver returns them.
type Fields = Vec<(String, Option<CqlValue>)>;

fn text(s: &str) -> Option<CqlValue> {
    Some(CqlValue::Text(s.into()))
}

/// Every target name that differs from its source name is in `design.renames`.
fn every_rename_is_stated(plan: &Plan) {
    let stated = |kind: RenameKind, target: &str| {
        plan.design
            .renames
            .iter()
            .any(|r| r.kind == kind && r.target == target)
    };
    for t in &plan.design.tables {
        let plain = t
            .entity
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        let spelled = plain && t.name.starts_with(&format!("{}_", t.entity));
        let suffixed = t
            .name
            .rsplit('_')
            .next()
            .is_some_and(|n| n.parse::<u32>().is_ok());
        if !spelled || suffixed {
            assert!(
                stated(RenameKind::Table, &t.name),
                "table {} ({})",
                t.name,
                t.entity
            );
        }
        for c in &t.columns {
            if let Some(src) = c.source.as_ref().filter(|s| s.column != c.name) {
                let target = format!("{}.{}", t.name, c.name);
                assert!(stated(RenameKind::Column, &target), "{src} as {target}");
            }
            if let Some(child) = c.embeds.as_deref().filter(|e| e.contains(' ')) {
                let target = format!("{}.{}", t.name, c.name);
                assert!(
                    stated(RenameKind::Collection, &target),
                    "{child} as {target}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_identifiers_survive_plan_backfill_and_verify() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("hostile").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/backfill/hostile/schema.sql"))
            .unwrap();
    case.pg.client().batch_execute(&schema).await.unwrap();
    case.pg.client().batch_execute(&inserts()).await.unwrap();
    let plan_path = case.plan("fixtures/backfill/hostile");
    let plan: Plan = serde_json::from_value(json(std::path::Path::new(&plan_path))).unwrap();
    assert!(
        plan.design.violations.is_empty(),
        "{:?}",
        plan.design.violations
    );
    every_rename_is_stated(&plan);
    let names: Vec<&str> = plan.design.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 5, "{names:?}");

    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan_path,
        &run,
        &["--create-schema"],
    )));
    let summary = json(&run.join("summary.json"));
    assert_eq!(summary["status"], "completed", "{summary}");
    for t in summary["tables"].as_array().unwrap() {
        assert_eq!(t["rows_read"], t["rows_written"], "{t}");
        assert_eq!(t["rows_rejected"], 0, "{t}");
    }
    let stdout = case.verify(&plan_path, &["--sample", "100"]);
    assert!(stdout.contains("verify: all 5 tables match"), "{stdout}");

    // Each value under its own name: "Name", name and "NAME" are three columns.
    let (c63, _) = long_names();
    let r = row(
        &case.ks,
        &format!(
            r#"SELECT "Name", name, "NAME", "select", "token", "say ""hi""", "first name", "prénom", "東京", {c63} FROM customers_by_id WHERE id = 1"#
        ),
    )
    .await;
    assert_eq!(
        r,
        vec![
            text("Upper"),
            text("lower"),
            text("SHOUT"),
            text("sel'ect"),
            Some(CqlValue::Int(7)),
            text("he said \"hi\""),
            text("Ann Lee"),
            text("Zoë"),
            text("東京都"),
            text("long\\value"),
        ]
    );
    // The phone numbers, embedded: a map keyed by "Kind" of entries whose fields keep their names.
    let r = row(
        &case.ks,
        "SELECT phone_numbers FROM customers_by_id WHERE id = 1",
    )
    .await;
    let Some(CqlValue::Map(entries)) = &r[0] else {
        panic!("phone_numbers: {:?}", r[0])
    };
    let mut got: Vec<(String, Fields)> = entries
        .iter()
        .map(|(k, v)| {
            let (CqlValue::Text(k), CqlValue::UserDefinedType { fields, .. }) = (k, v) else {
                panic!("entry {k:?} {v:?}")
            };
            (k.clone(), fields.clone())
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let field = |n: &str, v: Option<CqlValue>| (n.to_string(), v);
    assert_eq!(
        got,
        vec![
            (
                "home".to_string(),
                vec![
                    field("Kind", text("home")),
                    field("Number \"+\"", text("+1 \"555\"")),
                    field("ünïcode", text("ü")),
                ]
            ),
            (
                "mum's".to_string(),
                vec![
                    field("Kind", text("mum's")),
                    field("Number \"+\"", text("+44")),
                    field("ünïcode", None),
                ]
            ),
        ]
    );
    // The item's own name beside the copy of its customer's name (never one over the other).
    let r = row(
        &case.ks,
        r#"SELECT name, customer_name, "qty ""x""" FROM order_items_by_order WHERE "order" = 10 AND "line#" = 2"#,
    )
    .await;
    assert_eq!(
        r,
        vec![text("item two"), text("čeněk"), Some(CqlValue::Int(5))]
    );
    // "user" and "User" are two tables, each holding its own rows.
    let r = row(&case.ks, r#"SELECT "where" FROM user_by_id WHERE id = 1"#).await;
    assert_eq!(r, vec![text("here")]);
    let r = row(&case.ks, r#"SELECT "from" FROM user_by_id_2 WHERE id = 2"#).await;
    assert_eq!(r, vec![text("elsewhere")]);
    let long = plan
        .design
        .tables
        .iter()
        .find(|t| t.entity.starts_with("t_yyy"))
        .unwrap();
    assert!(long.name.len() <= 48, "{}", long.name);
    let r = row(
        &case.ks,
        &format!(r#"SELECT "ÄÖÜ" FROM {} WHERE id = 1"#, long.name),
    )
    .await;
    assert_eq!(r, vec![text("äöü")]);
    case.cleanup().await;
}
