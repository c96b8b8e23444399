//! Every statement of a plan run once on Cassandra, whatever the data: each read and its lookups,
//! each write and its reads before write, prepared and executed with a typed sample value bound to
//! every marker. `remodel replay` runs the statements its samples reach; this reaches the rest (a
//! write Postgres refused every sample of, a guarded statement no sample met, a lookup after a
//! read that found no row, the embedded collections replay does not replay).

use remodel_model::Plan;
use remodel_testdb::scylla::client::session::Session;
use remodel_testdb::scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use remodel_testdb::scylla::statement::prepared::PreparedStatement;
use remodel_testdb::scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

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

/// Asserts that every table and user type of `plan` exists in its keyspace (each CREATE of
/// schema.cql was applied).
pub async fn assert_schema_loaded(session: &Session, plan: &Plan, label: &str) {
    let ks = &plan.design.keyspace.name;
    let names = |cql: &'static str| async move {
        let rows = session
            .query_unpaged(cql, (ks.as_str(),))
            .await
            .unwrap_or_else(|e| panic!("{label}: {cql}: {e}"))
            .into_rows_result()
            .unwrap_or_else(|e| panic!("{label}: {cql}: {e}"));
        rows.rows::<(String,)>()
            .unwrap_or_else(|e| panic!("{label}: {e}"))
            .map(|r| r.unwrap_or_else(|e| panic!("{label}: {e}")).0)
            .collect::<BTreeSet<String>>()
    };
    let tables = names("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?").await;
    for t in &plan.design.tables {
        assert!(
            tables.contains(&t.name),
            "{label}: no table {ks}.{} on Cassandra",
            t.name
        );
    }
    let types = names("SELECT type_name FROM system_schema.types WHERE keyspace_name = ?").await;
    for t in &plan.design.types {
        assert!(
            types.contains(&t.name),
            "{label}: no type {ks}.{} on Cassandra",
            t.name
        );
    }
}

/// Prepares and runs every statement of `plan` once on `session` (whose keyspace holds the
/// plan's tables), as the prepared statement itself with values typed from the server's
/// metadata for each marker: no text substitution, so every marker shape (`IN ?`, `LIMIT ?`,
/// counter deltas, map entries) is bound the way the driver binds it. Returns the markers bound.
pub async fn run_every_statement(session: &Session, plan: &Plan, label: &str) -> usize {
    let statements = plan.design.statements();
    assert!(!statements.is_empty(), "{label}: the plan has no statement");
    let mut markers = 0;
    for (what, cql) in &statements {
        let prepared = session
            .prepare(*cql)
            .await
            .unwrap_or_else(|e| panic!("{label} {what}: prepare: {e}\n{cql}"));
        let values =
            bind_samples(&prepared).unwrap_or_else(|e| panic!("{label} {what}: bind: {e}\n{cql}"));
        markers += values.len();
        session
            .execute_unpaged(&prepared, &values)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "{label} {what}: run: {e}\n{cql}\nmarkers: {}\nvalues: {values:?}",
                    marker_types(&prepared)
                )
            });
    }
    // The plan's statements take their keys as markers, so some values were really bound.
    assert!(markers > 0, "{label}: no statement has a bind marker");
    markers
}
