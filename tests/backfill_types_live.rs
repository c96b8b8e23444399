//! `remodel backfill` against real Postgres and Cassandra: every type the designer maps comes back
//! from Cassandra exactly (values written here by hand, not by the converter under test); values
//! CQL cannot hold are rejected with their reason; embedded children (json_object_agg) become a
//! map of a frozen UDT. Needs `REMODEL_PG_URL` and `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`).

mod support;

use remodel_testdb::scylla::value::{
    CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlValue, Row,
};
use remodel_testdb::CqlKeyspace;
use std::net::{IpAddr, Ipv6Addr};
use support::live::{refs, Case};

/// A CQL decimal as (unscaled, scale), sign-extended from its bytes.
fn decimal_parts(d: &CqlDecimal) -> (i128, i32) {
    let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
    let mut v: i128 = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        -1
    } else {
        0
    };
    for b in bytes {
        v = (v << 8) | *b as i128;
    }
    (v, scale)
}

fn dec(v: &Option<CqlValue>) -> (i128, i32) {
    match v {
        Some(CqlValue::Decimal(d)) => decimal_parts(d),
        other => panic!("not a decimal: {other:?}"),
    }
}

async fn read_row(ks: &CqlKeyspace, cql: &str) -> Option<Vec<Option<CqlValue>>> {
    let rows = ks
        .session()
        .query_unpaged(cql, &[])
        .await
        .expect("select")
        .into_rows_result()
        .expect("rows");
    rows.maybe_first_row::<Row>()
        .expect("row")
        .map(|r| r.columns)
}

/// One row of every mapped type with edge values, and five rows CQL cannot hold.
const INSERTS: &str = include_str!("../fixtures/backfill/types/rows.sql");

#[tokio::test(flavor = "multi_thread")]
async fn every_mapped_type_round_trips_exactly() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_types").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/backfill/types/schema.sql"))
            .unwrap();
    case.pg.client().batch_execute(&schema).await.unwrap();
    case.pg.client().batch_execute(INSERTS).await.unwrap();
    // Postgres' last and first dates: stored, and compared by verify (`to_char` of a date past
    // 294276, a timestamp's last year, used to fail verify with "date out of range").
    case.pg
        .client()
        .batch_execute(
            "INSERT INTO all_types (id, c_date) VALUES (9, '5874897-12-31'), (10, '4713-01-01 BC')",
        )
        .await
        .unwrap();
    let plan = case.plan("fixtures/backfill/types");
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema"],
    )));

    // Five rows hold a value CQL cannot, one is too large: each is a reject naming its key, column
    // (when one is at fault) and reason.
    let rejects = std::fs::read_to_string(run.join("rejects/all_types_by_id.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = rejects
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|v| v["source_key"]["id"].as_str().unwrap().to_string());
    let got: Vec<(&str, &str)> = lines
        .iter()
        .map(|v| {
            (
                v["source_key"]["id"].as_str().unwrap(),
                v["column"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("3", "c_numeric"),
            ("4", "c_tstz"),
            ("5", "c_inet"),
            ("6", "c_ints"),
            ("7", "c_interval"),
            ("8", "-")
        ]
    );
    assert!(
        lines[0]["reason"].as_str().unwrap().contains("NaN"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1]["reason"].as_str().unwrap().contains("infinity"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2]["reason"].as_str().unwrap().contains("netmask"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3]["reason"].as_str().unwrap().contains("NULL"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4]["reason"].as_str().unwrap().contains("mixes signs"),
        "{}",
        lines[4]
    );
    assert_eq!(lines[5]["kind"], "too_large");
    assert_eq!(
        lines[5]["reason"],
        "row of 17000128 bytes is over the limit of 16777216 bytes (--max-row-bytes)"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let t = &summary["tables"][0];
    assert_eq!(
        (
            t["rows_read"].as_u64(),
            t["rows_written"].as_u64(),
            t["rows_rejected"].as_u64()
        ),
        (Some(10), Some(4), Some(6))
    );

    let cols = "c_smallint, c_int, c_bigint, c_numeric, c_scaled, c_money, c_real, c_double, c_text, \
                c_varchar, c_char, c_json, c_jsonb, c_ts, c_tstz, c_date, c_time, c_timetz, c_interval, \
                c_uuid, c_bool, c_bytea, c_inet, c_cidr, c_xml, c_mood, c_ints, c_texts, c_numerics";
    let row = read_row(
        &case.ks,
        &format!("SELECT {cols} FROM all_types_by_id WHERE id = 1"),
    )
    .await
    .expect("row 1 stored");
    let text = |s: &str| Some(CqlValue::Text(s.into()));
    assert_eq!(row[0], Some(CqlValue::SmallInt(-32768)));
    assert_eq!(row[1], Some(CqlValue::Int(2_147_483_647)));
    assert_eq!(row[2], Some(CqlValue::BigInt(i64::MIN)));
    assert_eq!(
        dec(&row[3]),
        (123_456_789_012_345_678_901_234_567_890_123_456_789, 9)
    );
    assert_eq!(dec(&row[4]), (-5000, 4), "numeric(12,4) keeps its scale");
    assert_eq!(dec(&row[5]), (123_456, 2), "money");
    assert_eq!(row[6], Some(CqlValue::Float(1.5)));
    assert_eq!(row[7], Some(CqlValue::Double(-2.25e-300)));
    assert_eq!(row[8], text("Grüße, 東京 🚕"));
    assert_eq!(row[9], text(""), "an empty string is a value, not NULL");
    assert_eq!(row[10], text("ab   "), "char(5) keeps its padding");
    assert_eq!(row[11], text(r#"{"a": [1, 2.50]}"#), "json keeps its text");
    assert_eq!(
        row[12],
        text(r#"{"a": "x", "b": 1}"#),
        "jsonb as Postgres prints it"
    );
    assert_eq!(
        row[13],
        Some(CqlValue::Timestamp(CqlTimestamp(-2_147_483_647_877)))
    );
    assert_eq!(
        row[14],
        Some(CqlValue::Timestamp(CqlTimestamp(-14_182_939_500)))
    );
    assert_eq!(
        row[15],
        Some(CqlValue::Date(CqlDate((1u32 << 31) - 354_226)))
    );
    assert_eq!(row[16], Some(CqlValue::Time(CqlTime(86_399_999_999_000))));
    assert_eq!(
        row[17],
        Some(CqlValue::Time(CqlTime(8 * 3_600_000_000_000))),
        "timetz in UTC"
    );
    assert_eq!(
        row[18],
        Some(CqlValue::Duration(CqlDuration {
            months: 14,
            days: 3,
            nanoseconds: 14_706_789_000_000
        }))
    );
    assert_eq!(
        row[19],
        Some(CqlValue::Uuid(
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11".parse().unwrap()
        ))
    );
    assert_eq!(row[20], Some(CqlValue::Boolean(true)));
    assert_eq!(row[21], Some(CqlValue::Blob(vec![0x00, 0xff, 0x10])));
    assert_eq!(
        row[22],
        Some(CqlValue::Inet(IpAddr::V6(Ipv6Addr::new(
            0x2001, 0xdb8, 0, 0, 0, 0, 0, 1
        ))))
    );
    assert_eq!(row[23], text("10.0.0.0/8"), "cidr as text");
    assert_eq!(row[24], text("<a>x</a>"), "xml as text");
    assert_eq!(row[25], text("happy"), "enum as its label");
    assert_eq!(row[26], None, "an empty array is an empty (absent) list");
    assert_eq!(
        row[27],
        Some(CqlValue::List(vec![
            CqlValue::Text("é".into()),
            CqlValue::Text("".into())
        ]))
    );
    let Some(CqlValue::List(nums)) = &row[28] else {
        panic!("c_numerics: {:?}", row[28])
    };
    let nums: Vec<(i128, i32)> = nums.iter().map(|v| dec(&Some(v.clone()))).collect();
    assert_eq!(nums, [(110, 2), (-1, 3)]);

    // Row 2: NULLs stay absent (unset, no tombstones).
    let row = read_row(
        &case.ks,
        &format!("SELECT {cols} FROM all_types_by_id WHERE id = 2"),
    )
    .await
    .expect("row 2 stored");
    assert!(row.iter().all(Option::is_none), "{row:?}");
    assert_eq!(
        read_row(&case.ks, "SELECT id FROM all_types_by_id WHERE id = 3").await,
        None
    );

    // Days since 1970-01-01, as Postgres counts them (`d - date '1970-01-01'`).
    for (id, days) in [(9, 2_145_042_905_i64), (10, -2_440_550)] {
        let row = read_row(
            &case.ks,
            &format!("SELECT c_date FROM all_types_by_id WHERE id = {id}"),
        )
        .await
        .expect("an extreme date stored");
        let Some(CqlValue::Date(CqlDate(d))) = row[0] else {
            panic!("{row:?}")
        };
        assert_eq!(i64::from(d) - (1_i64 << 31), days, "row {id}");
    }

    // verify subtracts the run's rejects and finds every stored row equal to its source.
    let stdout = case.verify(&plan, &["--run-dir", &run.to_string_lossy()]);
    assert!(
        stdout.contains("expected 4 (10 source rows less 6 rejected by the run), stored 4"),
        "{stdout}"
    );
    assert!(stdout.contains("all match"), "{stdout}");
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_children_become_a_map_of_udts() {
    remodel_testdb::live!(Postgres, Cassandra);
    let case = Case::new("bf_embed").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/plan/embed_one_to_few/schema.sql"))
            .unwrap();
    case.pg.client().batch_execute(&schema).await.unwrap();
    case.pg
        .client()
        .batch_execute(
            "INSERT INTO customers VALUES (1, 'Ann', 'ann@x'), (2, 'Bo', 'bo@x'), (3, 'Čeněk', 'c@x');
             INSERT INTO customer_addresses VALUES
               (2, 'home', '1 Main St', 'Springfield'),
               (3, 'home', 'Náměstí 1', 'Praha'), (3, 'work', '2 Office Rd', 'Brno'),
               (3, 'mum''s', '3 Lane', 'Plzeň');",
        )
        .await
        .unwrap();
    let plan = case.plan("fixtures/plan/embed_one_to_few");
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema"],
    )));
    let row = read_row(
        &case.ks,
        "SELECT addresses FROM customers_by_id WHERE id = 1",
    )
    .await
    .unwrap();
    assert_eq!(row[0], None, "no children: no collection");
    let row = read_row(
        &case.ks,
        "SELECT addresses FROM customers_by_id WHERE id = 3",
    )
    .await
    .unwrap();
    let Some(CqlValue::Map(entries)) = &row[0] else {
        panic!("addresses: {:?}", row[0])
    };
    let mut got: Vec<(String, Vec<Option<CqlValue>>)> = entries
        .iter()
        .map(|(k, v)| {
            let CqlValue::Text(k) = k else {
                panic!("key {k:?}")
            };
            let CqlValue::UserDefinedType { fields, .. } = v else {
                panic!("value {v:?}")
            };
            (k.clone(), fields.iter().map(|(_, f)| f.clone()).collect())
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let t = |s: &str| Some(CqlValue::Text(s.into()));
    assert_eq!(
        got,
        vec![
            (
                "home".to_string(),
                vec![t("home"), t("Náměstí 1"), t("Praha")]
            ),
            (
                "mum's".to_string(),
                vec![t("mum's"), t("3 Lane"), t("Plzeň")]
            ),
            (
                "work".to_string(),
                vec![t("work"), t("2 Office Rd"), t("Brno")]
            ),
        ]
    );
    let stdout = case.verify(&plan, &[]);
    assert!(
        stdout.contains("customers_by_id: sample of 3 rows: all match"),
        "{stdout}"
    );
    case.cleanup().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_constant_partition_table_holds_every_row() {
    remodel_testdb::live!(Postgres, Cassandra);
    // categories_all: a small table read whole, every row in the one partition 'all'.
    let case = Case::new("bf_constant").await;
    let schema =
        std::fs::read_to_string(support::root().join("fixtures/plan/reference_data/schema.sql"))
            .unwrap();
    case.pg.client().batch_execute(&schema).await.unwrap();
    case.pg
        .client()
        .batch_execute(
            "INSERT INTO categories SELECT i, 'category ' || i FROM generate_series(1, 250) i;
             INSERT INTO items SELECT i, 1 + i % 250, 'item ' || i FROM generate_series(1, 1000) i;",
        )
        .await
        .unwrap();
    let plan = case.plan("fixtures/plan/reference_data");
    let run = case.dir.join("run");
    support::remodel_ok(&refs(&case.backfill_args(
        &plan,
        &run,
        &["--create-schema"],
    )));
    let rows = case
        .ks
        .session()
        .query_unpaged(
            "SELECT count(*) FROM categories_all WHERE part = 'all'",
            &[],
        )
        .await
        .unwrap()
        .into_rows_result()
        .unwrap();
    let (n,): (i64,) = rows.single_row().unwrap();
    assert_eq!(n, 250);
    let stdout = case.verify(&plan, &[]);
    assert!(stdout.contains("verify: all 3 tables match"), "{stdout}");
    case.cleanup().await;
}
