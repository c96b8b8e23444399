//! `remodel plan`'s output against a real Cassandra 5.0: for rideshare and each BenchBase corpus,
//! `schema.cql` loads, and every mapped read and every write statement of `plan.json` prepares and
//! runs as that prepared statement, with a typed sample value bound to each marker. Needs
//! `REMODEL_CQL_URL` (`eval "$(scripts/db env)"`).

mod support;

use remodel_model::{DesignTable, Plan};
use remodel_testdb::scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use remodel_testdb::scylla::statement::prepared::PreparedStatement;
use remodel_testdb::scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};
use remodel_testdb::CqlKeyspace;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

/// Runs `remodel plan` into a scratch folder with the test keyspace's name; returns the plan and CQL.
fn plan(args: &[&str], keyspace: &str, label: &str) -> (Plan, String) {
    let out = std::env::temp_dir().join(format!("remodel-live-{}-{label}", std::process::id()));
    let run = support::command()
        .arg("plan")
        .args(args)
        .args(["--keyspace", keyspace, "--out"])
        .arg(&out)
        .output()
        .expect("run remodel plan");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json = std::fs::read_to_string(out.join("plan.json")).expect("plan.json");
    let cql = std::fs::read_to_string(out.join("schema.cql")).expect("schema.cql");
    let _ = std::fs::remove_dir_all(PathBuf::from(&out));
    (
        serde_json::from_str(&json).expect("plan.json is a Plan"),
        cql,
    )
}

/// A sample value for a bind marker of the given type, as the server reported it when preparing;
/// `None` for a type this test does not know (never bound as null: a null in a regular column
/// would pass unnoticed).
fn sample(typ: &ColumnType<'_>) -> Option<CqlValue> {
    Some(match typ {
        ColumnType::Native(native) => match native {
            NativeType::Ascii => CqlValue::Ascii("x".into()),
            NativeType::Text => CqlValue::Text("x".into()),
            NativeType::Boolean => CqlValue::Boolean(true),
            NativeType::Blob => CqlValue::Blob(vec![0]),
            NativeType::Counter => CqlValue::Counter(Counter(1)),
            NativeType::TinyInt => CqlValue::TinyInt(1),
            NativeType::SmallInt => CqlValue::SmallInt(1),
            NativeType::Int => CqlValue::Int(1),
            NativeType::BigInt => CqlValue::BigInt(1),
            NativeType::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(vec![1])),
            // 1.5 = 15 × 10^-1.
            NativeType::Decimal => {
                CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(vec![15], 1))
            }
            NativeType::Float => CqlValue::Float(1.5),
            NativeType::Double => CqlValue::Double(1.5),
            NativeType::Uuid => CqlValue::Uuid(CqlTimeuuid::from_u128(SAMPLE_UUID).into()),
            NativeType::Timeuuid => CqlValue::Timeuuid(CqlTimeuuid::from_u128(SAMPLE_UUID)),
            // 2025-01-15 16:04:22 UTC, in milliseconds since the epoch.
            NativeType::Timestamp => CqlValue::Timestamp(CqlTimestamp(1_736_957_062_000)),
            // 2025-01-15: day 20103 after the epoch, which CQL stores at 2^31.
            NativeType::Date => CqlValue::Date(CqlDate((1 << 31) + 20_103)),
            // 08:00:00, in nanoseconds since midnight.
            NativeType::Time => CqlValue::Time(CqlTime(8 * 3_600 * 1_000_000_000)),
            NativeType::Duration => CqlValue::Duration(CqlDuration {
                months: 0,
                days: 0,
                nanoseconds: 3_600 * 1_000_000_000,
            }),
            NativeType::Inet => CqlValue::Inet(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            _ => return None,
        },
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(inner) => CqlValue::List(vec![sample(inner)?]),
            CollectionType::Set(inner) => CqlValue::Set(vec![sample(inner)?]),
            CollectionType::Map(k, v) => CqlValue::Map(vec![(sample(k)?, sample(v)?)]),
            _ => return None,
        },
        ColumnType::Tuple(fields) => CqlValue::Tuple(
            fields
                .iter()
                .map(|f| sample(f).map(Some))
                .collect::<Option<_>>()?,
        ),
        ColumnType::Vector { typ, dimensions } => CqlValue::Vector(
            (0..*dimensions)
                .map(|_| sample(typ))
                .collect::<Option<Vec<_>>>()?,
        ),
        ColumnType::UserDefinedType { definition, .. } => CqlValue::UserDefinedType {
            keyspace: definition.keyspace.to_string(),
            name: definition.name.to_string(),
            fields: definition
                .field_types
                .iter()
                .map(|(name, typ)| Some((name.to_string(), Some(sample(typ)?))))
                .collect::<Option<_>>()?,
        },
        _ => return None,
    })
}

/// The uuid every `uuid`/`timeuuid` marker gets (a version-1 uuid, so it is a valid timeuuid).
const SAMPLE_UUID: u128 = 0x1b4e28ba_2fa1_11d2_883f_0016d3cca427;

/// One typed sample value per bind marker of a prepared statement, in marker order; names the
/// first marker whose type has no sample.
fn bind_samples(prepared: &PreparedStatement) -> Result<Vec<Option<CqlValue>>, String> {
    prepared
        .get_variable_col_specs()
        .iter()
        .map(|spec| {
            sample(spec.typ())
                .map(Some)
                .ok_or_else(|| format!("no sample for marker {}: {:?}", spec.name(), spec.typ()))
        })
        .collect()
}

/// The bind markers' names and types, for a failure message.
fn marker_types(prepared: &PreparedStatement) -> String {
    prepared
        .get_variable_col_specs()
        .iter()
        .map(|spec| format!("{}: {:?}", spec.name(), spec.typ()))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn check(label: &str, args: &[&str]) {
    let ks = CqlKeyspace::create(label)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (plan, schema_cql) = plan(args, ks.name(), label);
    let session = ks.session();
    // schema.cql without its comment lines, one statement per `;` (no literal in it holds one).
    let code: String = schema_cql
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    for stmt in code.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        session
            .query_unpaged(stmt, &[])
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}\n{stmt}"));
    }
    let table = |name: &str| {
        plan.design
            .tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{label}: no table {name}"))
    };
    let mut statements: Vec<(String, &DesignTable)> = Vec::new();
    for q in &plan.design.queries {
        if let (Some(cql), Some(t)) = (&q.cql, &q.table) {
            statements.push((cql.clone(), table(t)));
        }
    }
    for w in &plan.design.writes {
        for t in &w.targets {
            statements.push((t.cql.clone(), table(&t.table)));
        }
    }
    assert!(!statements.is_empty());
    // Every statement runs as the prepared statement itself (what an application would send),
    // with values typed from the server's metadata for each marker: no text substitution, so
    // every marker shape (`IN ?`, `LIMIT ?`, counter deltas) is bound the way the driver binds it.
    let mut markers = 0;
    for (cql, t) in &statements {
        let prepared = session
            .prepare(cql.as_str())
            .await
            .unwrap_or_else(|e| panic!("{label}: prepare: {e}\n{cql}"));
        let values =
            bind_samples(&prepared).unwrap_or_else(|e| panic!("{label}: bind: {e}\n{cql}"));
        markers += values.len();
        session
            .execute_unpaged(&prepared, &values)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "{label}: run on {}: {e}\n{cql}\nmarkers: {}\nvalues: {values:?}",
                    t.name,
                    marker_types(&prepared)
                )
            });
    }
    // The plan's statements take their keys as markers, so some values were really bound.
    assert!(markers > 0, "{label}: no statement has a bind marker");
    ks.cleanup().await.unwrap_or_else(|e| panic!("{e}"));
}

fn corpus(name: &str) -> [String; 4] {
    [
        "--schema".into(),
        format!("fixtures/corpora/{name}/ddl-postgres.sql"),
        "--queries".into(),
        format!("fixtures/corpora/{name}/queries.sql"),
    ]
}

async fn check_corpus(name: &str) {
    let args = corpus(name);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    check(&format!("plan_{name}"), &refs).await;
}

#[tokio::test]
async fn rideshare_plan_runs_on_cassandra() {
    check("plan_rideshare", &["examples/rideshare"]).await;
}

#[tokio::test]
async fn tpcc_plan_runs_on_cassandra() {
    check_corpus("tpcc").await;
}

#[tokio::test]
async fn seats_plan_runs_on_cassandra() {
    check_corpus("seats").await;
}

#[tokio::test]
async fn twitter_plan_runs_on_cassandra() {
    check_corpus("twitter").await;
}

#[tokio::test]
async fn wikipedia_plan_runs_on_cassandra() {
    check_corpus("wikipedia").await;
}

#[tokio::test]
async fn smallbank_plan_runs_on_cassandra() {
    check_corpus("smallbank").await;
}

#[tokio::test]
async fn auctionmark_plan_runs_on_cassandra() {
    check_corpus("auctionmark").await;
}

#[tokio::test]
async fn embedded_children_plan_runs_on_cassandra() {
    // The UDT, the frozen map column and the collection append of a one-to-few embed.
    check("plan_embed", &["fixtures/plan/embed_one_to_few"]).await;
}
