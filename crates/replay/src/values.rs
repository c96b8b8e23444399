//! Values between the two sides: the CQL type of a bind marker or result column as the server
//! reports it, exact conversions between CQL types of the same value (`int` → `bigint`), time
//! buckets, a CQL value written back as a Postgres literal (to evaluate the plan's SQL
//! expressions on rows read from Cassandra), and the canonical form two results are compared in.

use crate::Error;
use remodel_backfill::numeric::decimal_to_string;
use remodel_backfill::resolved_type::{Native, ResolvedType, UdtDef};
use remodel_backfill::time::{format_date, format_time_nanos};
use remodel_model::ident::literal;
use remodel_model::{EncodedForm, Encoding};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use scylla::value::CqlValue;
use std::sync::Arc;

/// The CQL type the server reports for a marker or a column, as the backfill's converters name it.
pub fn cql_type(ct: &ColumnType<'_>) -> Result<ResolvedType, Error> {
    Ok(match ct {
        ColumnType::Native(n) => ResolvedType::Native(match n {
            NativeType::Ascii => Native::Ascii,
            NativeType::Boolean => Native::Boolean,
            NativeType::Blob => Native::Blob,
            NativeType::BigInt => Native::BigInt,
            NativeType::Counter => Native::Counter,
            NativeType::Date => Native::Date,
            NativeType::Decimal => Native::Decimal,
            NativeType::Double => Native::Double,
            NativeType::Duration => Native::Duration,
            NativeType::Float => Native::Float,
            NativeType::Int => Native::Int,
            NativeType::Text => Native::Text,
            NativeType::Timestamp => Native::Timestamp,
            NativeType::Inet => Native::Inet,
            NativeType::SmallInt => Native::SmallInt,
            NativeType::TinyInt => Native::TinyInt,
            NativeType::Time => Native::Time,
            NativeType::Timeuuid => Native::Timeuuid,
            NativeType::Uuid => Native::Uuid,
            NativeType::Varint => Native::Varint,
            other => return Err(Error::Value(format!("CQL type {other:?} is not supported"))),
        }),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(t) => ResolvedType::List(Box::new(cql_type(t)?)),
            CollectionType::Set(t) => ResolvedType::Set(Box::new(cql_type(t)?)),
            CollectionType::Map(k, v) => {
                ResolvedType::Map(Box::new(cql_type(k)?), Box::new(cql_type(v)?))
            }
            other => return Err(Error::Value(format!("CQL type {other:?} is not supported"))),
        },
        ColumnType::Tuple(items) => {
            ResolvedType::Tuple(items.iter().map(cql_type).collect::<Result<_, _>>()?)
        }
        ColumnType::UserDefinedType { definition, .. } => ResolvedType::Udt(Arc::new(UdtDef {
            keyspace: definition.keyspace.to_string(),
            name: definition.name.to_string(),
            fields: definition
                .field_types
                .iter()
                .map(|(n, t)| Ok((n.to_string(), cql_type(t)?)))
                .collect::<Result<_, Error>>()?,
        })),
        other => return Err(Error::Value(format!("CQL type {other:?} is not supported"))),
    })
}

/// An integer value of any CQL integer type (a counter included).
pub(crate) fn int_value(v: &CqlValue) -> Option<i128> {
    Some(match v {
        CqlValue::TinyInt(i) => *i as i128,
        CqlValue::SmallInt(i) => *i as i128,
        CqlValue::Int(i) => *i as i128,
        CqlValue::BigInt(i) => *i as i128,
        CqlValue::Counter(c) => c.0 as i128,
        CqlValue::Varint(v) => {
            let b = v.as_signed_bytes_be_slice();
            if b.is_empty() || b.len() > 16 {
                return None;
            }
            let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
            let mut buf = [fill; 16];
            buf[16 - b.len()..].copy_from_slice(b);
            i128::from_be_bytes(buf)
        }
        _ => return None,
    })
}

/// `v` as a value of CQL type `to`, exactly: integers of another width (range-checked), text as
/// ascii, a value already of the type unchanged; anything else is an error naming both types.
pub fn coerce(v: CqlValue, to: &ResolvedType) -> Result<CqlValue, Error> {
    use Native as N;
    let fail = |v: &CqlValue| Error::Value(format!("{v:?} cannot be bound as CQL {to:?}"));
    let ResolvedType::Native(n) = to else {
        return Ok(match (v, to) {
            (CqlValue::List(items), ResolvedType::List(t)) => CqlValue::List(
                items
                    .into_iter()
                    .map(|i| coerce(i, t))
                    .collect::<Result<_, _>>()?,
            ),
            (CqlValue::List(items) | CqlValue::Set(items), ResolvedType::Set(t)) => CqlValue::Set(
                items
                    .into_iter()
                    .map(|i| coerce(i, t))
                    .collect::<Result<_, _>>()?,
            ),
            (v, _) => v,
        });
    };
    if let Some(i) = int_value(&v) {
        let out = match n {
            N::TinyInt => i8::try_from(i).ok().map(CqlValue::TinyInt),
            N::SmallInt => i16::try_from(i).ok().map(CqlValue::SmallInt),
            N::Int => i32::try_from(i).ok().map(CqlValue::Int),
            N::BigInt => i64::try_from(i).ok().map(CqlValue::BigInt),
            N::Varint => Some(CqlValue::Varint(
                scylla::value::CqlVarint::from_signed_bytes_be(i.to_be_bytes().to_vec()),
            )),
            N::Decimal => Some(CqlValue::Decimal(
                scylla::value::CqlDecimal::from_signed_be_bytes_and_exponent(
                    i.to_be_bytes().to_vec(),
                    0,
                ),
            )),
            _ => None,
        };
        return out.ok_or_else(|| fail(&v));
    }
    match (v, n) {
        (CqlValue::Text(s) | CqlValue::Ascii(s), N::Text) => Ok(CqlValue::Text(s)),
        (CqlValue::Text(s) | CqlValue::Ascii(s), N::Ascii) if s.is_ascii() => {
            Ok(CqlValue::Ascii(s))
        }
        (CqlValue::Float(f), N::Double) => Ok(CqlValue::Double(f as f64)),
        (CqlValue::Uuid(u), N::Timeuuid) if u.get_version_num() == 1 => {
            Ok(CqlValue::Timeuuid(u.into()))
        }
        (CqlValue::Timeuuid(u), N::Uuid) => Ok(CqlValue::Uuid(u.into())),
        // A millisecond timestamp bound where the plan keeps the column as epoch microseconds.
        (CqlValue::Timestamp(t), N::BigInt) => {
            t.0.checked_mul(1000)
                .map(CqlValue::BigInt)
                .ok_or_else(|| fail(&CqlValue::Timestamp(t)))
        }
        (v, _) if native_of(&v) == Some(*n) => Ok(v),
        (v, _) => Err(fail(&v)),
    }
}

/// A value bound to a column kept in `e`, which stores NULL ([`Encoding::stores_null`]): the
/// value in the encoding's form (an instant already in microseconds, an integer, a date), NULL
/// and the extremes where [`Encoding::store`] puts them.
pub fn encode(e: Encoding, v: Option<CqlValue>) -> Option<CqlValue> {
    let plain = match v {
        None => None,
        Some(CqlValue::Date(d)) if e.form() == EncodedForm::Days => Some(days_of(d)),
        Some(v) => match int_value(&v) {
            Some(i) => Some(i64::try_from(i).ok()?),
            None => return Some(v),
        },
    };
    e.store(plain).map(CqlValue::BigInt)
}

/// A value read from a column kept in `e`, as the value it stands for: NULL for the NULL
/// value, a date for a day count (the field is read as a `date`: [`read_type`]).
pub fn decode(e: Encoding, v: Option<CqlValue>) -> Option<CqlValue> {
    let Some(CqlValue::BigInt(stored)) = v else {
        return v;
    };
    let plain = e.unstore(stored)?;
    match e.form() {
        EncodedForm::Days => Some(date_of(plain).unwrap_or(CqlValue::BigInt(plain))),
        _ => Some(CqlValue::BigInt(plain)),
    }
}

/// The type a column kept in `e` is read as once decoded: a `date` for days, else `stored`.
pub fn read_type(e: Option<Encoding>, stored: ResolvedType) -> ResolvedType {
    match e {
        Some(e) if e.form() == EncodedForm::Days => ResolvedType::Native(Native::Date),
        _ => stored,
    }
}

/// The type a value bound to a column of `form` is evaluated as before it is encoded (an
/// instant's microseconds are evaluated by the caller).
pub fn encoded_plain_type(form: EncodedForm) -> ResolvedType {
    ResolvedType::Native(match form {
        EncodedForm::Days => Native::Date,
        EncodedForm::Micros | EncodedForm::Integer => Native::BigInt,
    })
}

/// CQL's `date` (days with 1970-01-01 at 2^31) as days since 1970-01-01.
fn days_of(d: scylla::value::CqlDate) -> i64 {
    i64::from(d.0) - (1_i64 << 31)
}

/// Days since 1970-01-01 as CQL's `date`, where it has one.
fn date_of(days: i64) -> Option<CqlValue> {
    u32::try_from(days + (1_i64 << 31))
        .ok()
        .map(|d| CqlValue::Date(scylla::value::CqlDate(d)))
}

/// A new time-based (version 1) UUID: what an application binds as the id of a row it inserts
/// into a table without a key (`row_id.inserted` = `timeuuid`). Unique within the process (a
/// counter in the clock sequence and the low time bits).
pub fn timeuuid() -> uuid::Uuid {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // 100 ns intervals since 1582-10-15 (the UUID epoch).
    const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() / 100)
        .unwrap_or(0) as u64;
    let ts = (now + GREGORIAN_OFFSET + n) & 0x0FFF_FFFF_FFFF_FFFF;
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&((ts & 0xFFFF_FFFF) as u32).to_be_bytes());
    b[4..6].copy_from_slice(&(((ts >> 32) & 0xFFFF) as u16).to_be_bytes());
    b[6..8].copy_from_slice(&((((ts >> 48) & 0x0FFF) as u16) | 0x1000).to_be_bytes());
    let seq = (n & 0x3FFF) as u16 | 0x8000;
    b[8..10].copy_from_slice(&seq.to_be_bytes());
    // A node id with the multicast bit set: not a MAC address (RFC 4122 §4.5).
    b[10..16].copy_from_slice(&[0x03, 0x72, 0x65, 0x6d, 0x6f, 0x64]);
    uuid::Uuid::from_bytes(b)
}

/// The native type of a value that is not an integer (see [`int_value`]).
pub(crate) fn native_of(v: &CqlValue) -> Option<Native> {
    use Native as N;
    Some(match v {
        CqlValue::Ascii(_) => N::Ascii,
        CqlValue::Boolean(_) => N::Boolean,
        CqlValue::Blob(_) => N::Blob,
        CqlValue::Decimal(_) => N::Decimal,
        CqlValue::Date(_) => N::Date,
        CqlValue::Double(_) => N::Double,
        CqlValue::Duration(_) => N::Duration,
        CqlValue::Float(_) => N::Float,
        CqlValue::Text(_) => N::Text,
        CqlValue::Timestamp(_) => N::Timestamp,
        CqlValue::Inet(_) => N::Inet,
        CqlValue::Time(_) => N::Time,
        CqlValue::Timeuuid(_) => N::Timeuuid,
        CqlValue::Uuid(_) => N::Uuid,
        _ => return None,
    })
}

/// A CQL value as a Postgres literal of SQL type `sql_type` (`'2024-01-01 00:00:00Z'::timestamptz`),
/// `NULL::type` for no value; `None` for a value with no literal form here (collections, UDTs).
pub fn pg_literal(v: Option<&CqlValue>, sql_type: &str) -> Option<String> {
    let Some(v) = v else {
        return Some(format!("NULL::{sql_type}"));
    };
    if let (CqlValue::BigInt(us), true) = (v, sql_type.starts_with("timestamp")) {
        // A column kept as epoch microseconds (`epoch_micros`), back to its timestamp.
        return Some(match *us {
            i64::MAX => format!("'infinity'::{sql_type}"),
            i64::MIN => format!("'-infinity'::{sql_type}"),
            us => format!(
                "('1970-01-01 00:00:00+00'::timestamptz + {us} * interval '1 microsecond')::{sql_type}"
            ),
        });
    }
    let text = match v {
        CqlValue::Ascii(s) | CqlValue::Text(s) => literal(s),
        CqlValue::Boolean(b) => b.to_string(),
        CqlValue::Blob(b) => literal(&format!("\\x{}", remodel_backfill::rows::hex(b))),
        CqlValue::Decimal(d) => literal(&decimal_to_string(d)),
        CqlValue::Date(d) => literal(&format_date(d.0 as i64 - (1i64 << 31))),
        CqlValue::Double(f) => literal(&f.to_string()),
        CqlValue::Float(f) => literal(&f.to_string()),
        CqlValue::Duration(d) => literal(&format!(
            "{} mons {} days {} microseconds",
            d.months,
            d.days,
            d.nanoseconds / 1000
        )),
        CqlValue::Timestamp(t) => literal(&remodel_backfill::time::format_timestamp_ms(t.0)),
        CqlValue::Time(t) => literal(&format_time_nanos(t.0)),
        CqlValue::Inet(ip) => literal(&ip.to_string()),
        CqlValue::Uuid(u) => literal(&u.to_string()),
        CqlValue::Timeuuid(u) => literal(&u.to_string()),
        other => literal(&int_value(other)?.to_string()),
    };
    Some(format!("{text}::{sql_type}"))
}

/// A value in the form results are compared in: numbers by exact value whatever their CQL width
/// (`1.50` = `1.5`, `int` 7 = `bigint` 7), floats by bits, empty collections as no value, sets and
/// maps in sorted order, user types by their fields.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Canon {
    /// No value (NULL, or an empty collection).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer or decimal, as its shortest exact text.
    Num(String),
    /// A float or double, as the bits of the double it equals.
    Float(u64),
    /// Text or ascii.
    Text(String),
    /// Anything else, as a readable exact form (timestamps, dates, uuids, blobs, …).
    Other(String),
    /// A list or tuple (in order).
    List(Vec<Canon>),
    /// A set or a map's entries, sorted.
    Sorted(Vec<Canon>),
}

fn trim_decimal(s: String) -> String {
    if !s.contains('.') {
        return if s == "-0" { "0".into() } else { s };
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" || t.is_empty() {
        "0".into()
    } else {
        t.to_string()
    }
}

/// The canonical form of a value that may be absent.
pub fn canon(v: Option<&CqlValue>) -> Canon {
    let Some(v) = v else { return Canon::Null };
    if let Some(i) = int_value(v) {
        return Canon::Num(i.to_string());
    }
    match v {
        CqlValue::Decimal(d) => Canon::Num(trim_decimal(decimal_to_string(d))),
        CqlValue::Double(f) => Canon::Float(f.to_bits()),
        CqlValue::Float(f) => Canon::Float((*f as f64).to_bits()),
        CqlValue::Ascii(s) | CqlValue::Text(s) => Canon::Text(s.clone()),
        CqlValue::Boolean(b) => Canon::Bool(*b),
        CqlValue::Empty => Canon::Null,
        CqlValue::List(items) if items.is_empty() => Canon::Null,
        CqlValue::Set(items) if items.is_empty() => Canon::Null,
        CqlValue::Map(items) if items.is_empty() => Canon::Null,
        CqlValue::List(items) => Canon::List(items.iter().map(|i| canon(Some(i))).collect()),
        CqlValue::Set(items) => {
            let mut c: Vec<Canon> = items.iter().map(|i| canon(Some(i))).collect();
            c.sort();
            Canon::Sorted(c)
        }
        CqlValue::Map(entries) => {
            let mut c: Vec<Canon> = entries
                .iter()
                .map(|(k, v)| Canon::List(vec![canon(Some(k)), canon(Some(v))]))
                .collect();
            c.sort();
            Canon::Sorted(c)
        }
        CqlValue::Tuple(items) => Canon::List(items.iter().map(|i| canon(i.as_ref())).collect()),
        CqlValue::UserDefinedType { fields, .. } => {
            Canon::List(fields.iter().map(|(_, f)| canon(f.as_ref())).collect())
        }
        other => Canon::Other(remodel_backfill::rows::show(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::value::CqlDecimal;

    #[test]
    fn numbers_compare_by_value() {
        let d = |digits: i64, scale: i32| {
            CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
                digits.to_be_bytes().to_vec(),
                scale,
            ))
        };
        assert_eq!(canon(Some(&d(150, 2))), canon(Some(&d(15, 1))));
        assert_eq!(canon(Some(&d(700, 2))), canon(Some(&CqlValue::Int(7))));
        assert_eq!(
            canon(Some(&CqlValue::BigInt(7))),
            canon(Some(&CqlValue::Int(7)))
        );
        assert_ne!(canon(Some(&d(151, 2))), canon(Some(&d(15, 1))));
        assert_eq!(canon(Some(&CqlValue::List(vec![]))), Canon::Null);
    }

    #[test]
    fn coercion_is_exact() {
        let big = ResolvedType::Native(Native::BigInt);
        assert_eq!(coerce(CqlValue::Int(3), &big).unwrap(), CqlValue::BigInt(3));
        let small = ResolvedType::Native(Native::SmallInt);
        assert!(coerce(CqlValue::Int(70_000), &small).is_err());
        let text = ResolvedType::Native(Native::Text);
        assert!(coerce(CqlValue::Int(3), &text).is_err());
    }

    #[test]
    fn literals_round_trip_as_sql() {
        assert_eq!(
            pg_literal(Some(&CqlValue::Text("O'Hara".into())), "text").unwrap(),
            "'O''Hara'::text"
        );
        assert_eq!(pg_literal(None, "int").unwrap(), "NULL::int");
        assert_eq!(
            pg_literal(
                Some(&CqlValue::Timestamp(scylla::value::CqlTimestamp(0))),
                "timestamptz"
            )
            .unwrap(),
            "'1970-01-01 00:00:00Z'::timestamptz"
        );
        assert_eq!(
            pg_literal(Some(&CqlValue::Int(-4)), "int").unwrap(),
            "'-4'::int"
        );
    }
}
