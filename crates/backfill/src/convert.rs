//! Postgres binary values to CQL values, exactly, against the target column's CQL type.
//!
//! The reader asks Postgres for every column in binary form. A column whose Postgres type the
//! decoders here cannot read directly for its CQL type is cast in SQL to a canonical type first
//! ([`canonical_cast`]), so the mapping of every type the designer emits ends in one of the
//! decoders below. A value CQL cannot hold (NaN numeric, infinite timestamp, NULL list element,
//! inet with a netmask, mixed-sign interval) is a [`ValueError`]: the row goes to the rejects.

pub use crate::error::ValueError;
use crate::json;
use crate::numeric::decode_numeric;
use crate::resolved_type::{Native, ResolvedType};
use crate::time::{DAY_NANOS, PG_EPOCH_DAYS, PG_EPOCH_MICROS};
use scylla::value::{
    CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue, CqlVarint,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tokio_postgres::types::{FromSql, Kind, Type};

fn err<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}

/// A column's raw binary value, any Postgres type (`None` is SQL NULL).
#[derive(Debug, Clone, Copy)]
pub struct RawValue<'a>(pub Option<&'a [u8]>);

impl<'a> FromSql<'a> for RawValue<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawValue(Some(raw)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawValue(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The Postgres binary formats this module decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgKind {
    /// `bool`
    Bool,
    /// `int2`
    Int2,
    /// `int4`
    Int4,
    /// `int8`
    Int8,
    /// `oid` (unsigned 32 bits)
    Oid,
    /// `float4`
    Float4,
    /// `float8`
    Float8,
    /// `numeric`
    Numeric,
    /// `text`, `varchar`, `bpchar`, `name`, `citext`, enums: UTF-8 bytes.
    Text,
    /// `json`: UTF-8 text.
    Json,
    /// `jsonb`: a version byte (1) then UTF-8 text.
    Jsonb,
    /// `bytea`
    Bytea,
    /// `uuid`
    Uuid,
    /// `timestamp` and `timestamptz`: microseconds since 2000-01-01 (UTC for `timestamptz`).
    Timestamp,
    /// `date`: days since 2000-01-01.
    Date,
    /// `time`: microseconds since midnight.
    Time,
    /// `timetz`: microseconds since midnight and the zone in seconds west of UTC.
    TimeTz,
    /// `interval`: microseconds, days, months.
    Interval,
    /// `inet` / `cidr`
    Inet,
    /// A one- or more-dimensional array.
    Array(Box<PgKind>),
}

impl PgKind {
    /// The decoder for a Postgres type, `None` when there is none (the column is then cast).
    pub fn of(ty: &Type) -> Option<PgKind> {
        match ty.kind() {
            Kind::Enum(_) => return Some(PgKind::Text),
            Kind::Domain(base) => return PgKind::of(base),
            Kind::Array(elem) => return PgKind::of(elem).map(|k| PgKind::Array(Box::new(k))),
            _ => {}
        }
        Some(match *ty {
            Type::BOOL => PgKind::Bool,
            Type::INT2 => PgKind::Int2,
            Type::INT4 => PgKind::Int4,
            Type::INT8 => PgKind::Int8,
            Type::OID => PgKind::Oid,
            Type::FLOAT4 => PgKind::Float4,
            Type::FLOAT8 => PgKind::Float8,
            Type::NUMERIC => PgKind::Numeric,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => PgKind::Text,
            Type::JSON => PgKind::Json,
            Type::JSONB => PgKind::Jsonb,
            Type::BYTEA => PgKind::Bytea,
            Type::UUID => PgKind::Uuid,
            Type::TIMESTAMP | Type::TIMESTAMPTZ => PgKind::Timestamp,
            Type::DATE => PgKind::Date,
            Type::TIME => PgKind::Time,
            Type::TIMETZ => PgKind::TimeTz,
            Type::INTERVAL => PgKind::Interval,
            Type::INET | Type::CIDR => PgKind::Inet,
            _ if ty.name() == "citext" => PgKind::Text,
            _ => return None,
        })
    }

    /// True when [`decode`] converts this kind to `target` without a cast in SQL.
    pub fn decodes_to(&self, target: &ResolvedType) -> bool {
        use Native as N;
        use PgKind as P;
        match (self, target) {
            (P::Json | P::Jsonb, ResolvedType::Native(N::Text | N::Ascii)) => true,
            (P::Json | P::Jsonb, ResolvedType::Native(_)) => false,
            (P::Json | P::Jsonb, _) => true,
            (P::Array(elem), ResolvedType::List(t) | ResolvedType::Set(t)) => match (&**elem, &**t)
            {
                // A nested target list reads a multi-dimensional array with the element kind.
                (e, ResolvedType::List(inner)) if !matches!(e, P::Array(_)) => e.decodes_to(inner),
                (e, t) => e.decodes_to(t),
            },
            (_, ResolvedType::Native(n)) => match n {
                N::Text | N::Ascii => matches!(self, P::Text),
                N::Boolean => matches!(self, P::Bool),
                N::TinyInt | N::SmallInt | N::Int | N::Varint => {
                    matches!(self, P::Int2 | P::Int4 | P::Int8 | P::Oid)
                }
                N::BigInt => matches!(self, P::Int2 | P::Int4 | P::Int8 | P::Oid | P::Timestamp),
                N::Counter => matches!(self, P::Int2 | P::Int4 | P::Int8),
                N::Decimal => matches!(self, P::Numeric | P::Int2 | P::Int4 | P::Int8 | P::Oid),
                N::Float => matches!(self, P::Float4),
                N::Double => matches!(self, P::Float4 | P::Float8),
                N::Blob => matches!(self, P::Bytea),
                N::Uuid | N::Timeuuid => matches!(self, P::Uuid),
                N::Timestamp => matches!(self, P::Timestamp),
                N::Date => matches!(self, P::Date),
                N::Time => matches!(self, P::Time | P::TimeTz),
                N::Duration => matches!(self, P::Interval),
                N::Inet => matches!(self, P::Inet),
            },
            _ => false,
        }
    }
}

/// The Postgres type a column is cast to when its own type has no direct decoder for `target`
/// (`money` → `numeric`, `xml` → `text`, `real[]` → `float8[]` …); `None` when there is none.
pub fn canonical_cast(target: &ResolvedType) -> Option<String> {
    use Native as N;
    Some(match target {
        ResolvedType::Native(n) => match n {
            N::Text | N::Ascii => "text",
            N::Boolean => "bool",
            N::TinyInt | N::SmallInt => "int2",
            N::Int => "int4",
            N::BigInt | N::Varint | N::Counter => "int8",
            N::Decimal => "numeric",
            N::Float => "float4",
            N::Double => "float8",
            N::Blob => "bytea",
            N::Uuid | N::Timeuuid => "uuid",
            N::Timestamp => "timestamptz",
            N::Date => "date",
            N::Time => "time",
            N::Duration => "interval",
            N::Inet => "inet",
        }
        .to_string(),
        ResolvedType::List(t) | ResolvedType::Set(t) => match &**t {
            ResolvedType::Native(_) => format!("{}[]", canonical_cast(t)?),
            _ => "jsonb".into(),
        },
        ResolvedType::Map(..) | ResolvedType::Udt(_) | ResolvedType::Tuple(_) => "jsonb".into(),
    })
}

fn fixed<const N: usize>(raw: &[u8], what: &str) -> Result<[u8; N], ValueError> {
    raw.try_into()
        .map_err(|_| ValueError(format!("malformed binary {what}: {} bytes", raw.len())))
}

fn int_of(kind: &PgKind, raw: &[u8]) -> Result<i64, ValueError> {
    Ok(match kind {
        PgKind::Int2 => i16::from_be_bytes(fixed(raw, "int2")?) as i64,
        PgKind::Int4 => i32::from_be_bytes(fixed(raw, "int4")?) as i64,
        PgKind::Int8 => i64::from_be_bytes(fixed(raw, "int8")?),
        PgKind::Oid => u32::from_be_bytes(fixed(raw, "oid")?) as i64,
        other => return err(format!("{other:?} is not an integer")),
    })
}

fn narrow<T: TryFrom<i64>>(v: i64, cql: &str) -> Result<T, ValueError> {
    T::try_from(v).map_err(|_| ValueError(format!("{v} does not fit CQL {cql}")))
}

fn utf8(raw: &[u8]) -> Result<String, ValueError> {
    String::from_utf8(raw.to_vec()).map_err(|_| ValueError("text is not valid UTF-8".into()))
}

/// Converts one non-NULL binary value of kind `kind` to `target`.
pub fn decode(kind: &PgKind, raw: &[u8], target: &ResolvedType) -> Result<CqlValue, ValueError> {
    use Native as N;
    let native = match target {
        ResolvedType::Native(n) => *n,
        _ => return decode_composite(kind, raw, target),
    };
    Ok(match (kind, native) {
        (PgKind::Json, N::Text | N::Ascii) => text_value(utf8(raw)?, native)?,
        (PgKind::Jsonb, N::Text | N::Ascii) => text_value(jsonb_text(raw)?, native)?,
        (PgKind::Text, N::Text | N::Ascii) => text_value(utf8(raw)?, native)?,
        (PgKind::Bool, N::Boolean) => CqlValue::Boolean(fixed::<1>(raw, "bool")?[0] != 0),
        (k, N::TinyInt) => CqlValue::TinyInt(narrow(int_of(k, raw)?, "tinyint")?),
        (k, N::SmallInt) => CqlValue::SmallInt(narrow(int_of(k, raw)?, "smallint")?),
        (k, N::Int) => CqlValue::Int(narrow(int_of(k, raw)?, "int")?),
        // The `epoch_micros` encoding of a key timestamp (the plan's `source_sql` computes the
        // same in SQL): exact, infinities as the bigint bounds Postgres stores them as.
        (PgKind::Timestamp, N::BigInt) => {
            CqlValue::BigInt(epoch_micros(i64::from_be_bytes(fixed(raw, "timestamp")?)))
        }
        (k, N::BigInt) => CqlValue::BigInt(int_of(k, raw)?),
        // A counter is sent as the amount to add (`SET n = n + ?`).
        (k, N::Counter) => CqlValue::Counter(scylla::value::Counter(int_of(k, raw)?)),
        (k, N::Varint) => CqlValue::Varint(CqlVarint::from_signed_bytes_be(
            int_of(k, raw)?.to_be_bytes().to_vec(),
        )),
        (PgKind::Numeric, N::Decimal) => CqlValue::Decimal(decode_numeric(raw)?),
        (k, N::Decimal) => CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
            int_of(k, raw)?.to_be_bytes().to_vec(),
            0,
        )),
        (PgKind::Float4, N::Float) => CqlValue::Float(f32::from_be_bytes(fixed(raw, "float4")?)),
        (PgKind::Float4, N::Double) => {
            CqlValue::Double(f32::from_be_bytes(fixed(raw, "float4")?) as f64)
        }
        (PgKind::Float8, N::Double) => CqlValue::Double(f64::from_be_bytes(fixed(raw, "float8")?)),
        (PgKind::Bytea, N::Blob) => CqlValue::Blob(raw.to_vec()),
        (PgKind::Uuid, N::Uuid) => CqlValue::Uuid(uuid_of(raw)?),
        (PgKind::Uuid, N::Timeuuid) => {
            let u = uuid_of(raw)?;
            if u.get_version_num() != 1 {
                return err(format!("{u} is not a version-1 UUID (CQL timeuuid)"));
            }
            CqlValue::Timeuuid(CqlTimeuuid::from(u))
        }
        (PgKind::Timestamp, N::Timestamp) => CqlValue::Timestamp(CqlTimestamp(timestamp_ms(
            i64::from_be_bytes(fixed(raw, "timestamp")?),
        )?)),
        (PgKind::Date, N::Date) => {
            CqlValue::Date(date_of(i32::from_be_bytes(fixed(raw, "date")?))?)
        }
        (PgKind::Time, N::Time) => {
            CqlValue::Time(CqlTime(i64::from_be_bytes(fixed(raw, "time")?) * 1000))
        }
        (PgKind::TimeTz, N::Time) => CqlValue::Time(timetz_of(raw)?),
        (PgKind::Interval, N::Duration) => CqlValue::Duration(interval_of(raw)?),
        (PgKind::Inet, N::Inet) => CqlValue::Inet(inet_of(raw)?),
        (k, n) => return err(format!("no conversion from Postgres {k:?} to CQL {n:?}")),
    })
}

fn text_value(s: String, native: Native) -> Result<CqlValue, ValueError> {
    if native == Native::Ascii {
        if !s.is_ascii() {
            return err("text is not ASCII (CQL ascii)");
        }
        return Ok(CqlValue::Ascii(s));
    }
    Ok(CqlValue::Text(s))
}

fn jsonb_text(raw: &[u8]) -> Result<String, ValueError> {
    match raw.split_first() {
        Some((1, rest)) => utf8(rest),
        _ => err("unknown jsonb binary version"),
    }
}

fn decode_composite(
    kind: &PgKind,
    raw: &[u8],
    target: &ResolvedType,
) -> Result<CqlValue, ValueError> {
    match kind {
        PgKind::Json => json::from_json(&utf8(raw)?, target),
        PgKind::Jsonb => json::from_json(&jsonb_text(raw)?, target),
        PgKind::Array(elem) => decode_array(elem, raw, target),
        other => err(format!(
            "no conversion from Postgres {other:?} to a CQL collection"
        )),
    }
}

/// One parsed array: dimension sizes and the element values in row-major order.
struct PgArray<'a> {
    dims: Vec<usize>,
    elems: Vec<Option<&'a [u8]>>,
}

fn parse_array(raw: &[u8]) -> Result<PgArray<'_>, ValueError> {
    let bad = || ValueError("malformed binary array".into());
    let mut pos = 0usize;
    let int = |pos: &mut usize| -> Result<i32, ValueError> {
        let b = raw.get(*pos..*pos + 4).ok_or_else(bad)?;
        *pos += 4;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let ndim = int(&mut pos)?;
    let _has_nulls = int(&mut pos)?;
    let _elem_oid = int(&mut pos)?;
    let mut dims = Vec::new();
    for _ in 0..ndim.max(0) {
        dims.push(usize::try_from(int(&mut pos)?).map_err(|_| bad())?);
        let _lower_bound = int(&mut pos)?;
    }
    let total: usize = if dims.is_empty() {
        0
    } else {
        dims.iter().product()
    };
    let mut elems = Vec::with_capacity(total.min(1 << 16));
    for _ in 0..total {
        let len = int(&mut pos)?;
        if len < 0 {
            elems.push(None);
        } else {
            let b = raw.get(pos..pos + len as usize).ok_or_else(bad)?;
            pos += len as usize;
            elems.push(Some(b));
        }
    }
    Ok(PgArray { dims, elems })
}

fn decode_array(elem: &PgKind, raw: &[u8], target: &ResolvedType) -> Result<CqlValue, ValueError> {
    let arr = parse_array(raw)?;
    let mut iter = arr.elems.into_iter();
    let v = build_dims(elem, &arr.dims, &mut iter, target)?;
    Ok(v)
}

/// Builds nested lists/sets from row-major elements, one dimension at a time.
fn build_dims<'a>(
    elem: &PgKind,
    dims: &[usize],
    elems: &mut impl Iterator<Item = Option<&'a [u8]>>,
    target: &ResolvedType,
) -> Result<CqlValue, ValueError> {
    let (inner, is_set) = match target {
        ResolvedType::List(t) => (&**t, false),
        ResolvedType::Set(t) => (&**t, true),
        _ if dims.is_empty() => return err("array has fewer dimensions than the CQL type"),
        other => {
            return err(format!(
                "a {}-dimensional array cannot be stored in {other:?}",
                dims.len()
            ))
        }
    };
    let Some((&n, rest)) = dims.split_first() else {
        return Ok(collection(Vec::new(), is_set));
    };
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if rest.is_empty() {
            match elems.next().flatten() {
                Some(b) => out.push(decode(elem, b, inner)?),
                None => return err("array element is NULL (CQL collections cannot hold null)"),
            }
        } else {
            out.push(build_dims(elem, rest, elems, inner)?);
        }
    }
    Ok(collection(out, is_set))
}

fn collection(items: Vec<CqlValue>, is_set: bool) -> CqlValue {
    if is_set {
        CqlValue::Set(items)
    } else {
        CqlValue::List(items)
    }
}

fn uuid_of(raw: &[u8]) -> Result<uuid::Uuid, ValueError> {
    Ok(uuid::Uuid::from_bytes(fixed(raw, "uuid")?))
}

/// Postgres microseconds since 2000-01-01 → Unix microseconds, the `epoch_micros` encoding of a
/// key timestamp (`infinity`/`-infinity` stay the largest/smallest bigint).
pub fn epoch_micros(pg_micros: i64) -> i64 {
    match pg_micros {
        i64::MAX | i64::MIN => pg_micros,
        us => us.saturating_add(PG_EPOCH_MICROS),
    }
}

/// Postgres microseconds since 2000-01-01 → Unix milliseconds (rounded down: CQL keeps ms).
pub fn timestamp_ms(pg_micros: i64) -> Result<i64, ValueError> {
    match pg_micros {
        i64::MAX => err("timestamp 'infinity' has no CQL equivalent"),
        i64::MIN => err("timestamp '-infinity' has no CQL equivalent"),
        us => Ok(((us as i128 + PG_EPOCH_MICROS as i128).div_euclid(1000)) as i64),
    }
}

fn date_of(pg_days: i32) -> Result<CqlDate, ValueError> {
    match pg_days {
        i32::MAX => err("date 'infinity' has no CQL equivalent"),
        i32::MIN => err("date '-infinity' has no CQL equivalent"),
        d => Ok(CqlDate(((1i64 << 31) + d as i64 + PG_EPOCH_DAYS) as u32)),
    }
}

fn timetz_of(raw: &[u8]) -> Result<CqlTime, ValueError> {
    let b: [u8; 12] = fixed(raw, "timetz")?;
    let micros = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let zone_west = i32::from_be_bytes([b[8], b[9], b[10], b[11]]) as i64;
    // CQL time has no zone: store the UTC time of day.
    Ok(CqlTime(
        (micros * 1000 + zone_west * 1_000_000_000).rem_euclid(DAY_NANOS),
    ))
}

fn interval_of(raw: &[u8]) -> Result<CqlDuration, ValueError> {
    let b: [u8; 16] = fixed(raw, "interval")?;
    let micros = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let days = i32::from_be_bytes([b[8], b[9], b[10], b[11]]);
    let months = i32::from_be_bytes([b[12], b[13], b[14], b[15]]);
    let nanoseconds = micros
        .checked_mul(1000)
        .ok_or_else(|| ValueError("interval too long for CQL duration".into()))?;
    let signs = [
        months.signum() as i64,
        days.signum() as i64,
        nanoseconds.signum(),
    ];
    if signs.contains(&1) && signs.contains(&-1) {
        return err(format!(
            "interval of {months} months, {days} days, {micros} µs mixes signs (CQL duration cannot)"
        ));
    }
    Ok(CqlDuration {
        months,
        days,
        nanoseconds,
    })
}

fn inet_of(raw: &[u8]) -> Result<IpAddr, ValueError> {
    let bad = || ValueError("malformed binary inet".into());
    let [family, bits, _is_cidr, len] = *raw.first_chunk::<4>().ok_or_else(bad)?;
    let addr = &raw[4..];
    let ip = match (family, len) {
        (2, 4) => IpAddr::V4(Ipv4Addr::from(
            <[u8; 4]>::try_from(addr).map_err(|_| bad())?,
        )),
        (3, 16) => IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(addr).map_err(|_| bad())?,
        )),
        _ => return Err(bad()),
    };
    let full = if family == 2 { 32 } else { 128 };
    if bits != full {
        return err(format!(
            "{ip}/{bits} has a netmask, which CQL inet cannot hold (map the column to text)"
        ));
    }
    Ok(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: Native) -> ResolvedType {
        ResolvedType::Native(n)
    }

    #[test]
    fn integers_are_range_checked() {
        let raw = 70_000i32.to_be_bytes();
        assert_eq!(
            decode(&PgKind::Int4, &raw, &t(Native::BigInt)),
            Ok(CqlValue::BigInt(70_000))
        );
        assert!(decode(&PgKind::Int4, &raw, &t(Native::SmallInt))
            .unwrap_err()
            .0
            .contains("does not fit"));
        assert_eq!(
            decode(&PgKind::Oid, &u32::MAX.to_be_bytes(), &t(Native::BigInt)),
            Ok(CqlValue::BigInt(u32::MAX as i64))
        );
    }

    #[test]
    fn key_timestamps_encode_as_exact_epoch_micros() {
        // 2025-01-15 10:00:00.000200 UTC and 0.2 ms later: distinct as epoch micros.
        let a = 1_736_935_200_000_200i64 - PG_EPOCH_MICROS;
        let enc = |us: i64| decode(&PgKind::Timestamp, &us.to_be_bytes(), &t(Native::BigInt));
        assert_eq!(enc(a), Ok(CqlValue::BigInt(1_736_935_200_000_200)));
        assert_eq!(enc(a + 200), Ok(CqlValue::BigInt(1_736_935_200_000_400)));
        assert_eq!(enc(i64::MAX), Ok(CqlValue::BigInt(i64::MAX)));
        assert_eq!(enc(i64::MIN), Ok(CqlValue::BigInt(i64::MIN)));
        assert!(PgKind::Timestamp.decodes_to(&t(Native::BigInt)));
    }

    #[test]
    fn timestamps_dates_and_times_keep_their_instant() {
        // 1969-12-31 23:59:59.999500 UTC = -500 µs after 1970.
        let us = -PG_EPOCH_MICROS - 500;
        assert_eq!(
            decode(&PgKind::Timestamp, &us.to_be_bytes(), &t(Native::Timestamp)),
            Ok(CqlValue::Timestamp(CqlTimestamp(-1)))
        );
        assert!(decode(
            &PgKind::Timestamp,
            &i64::MAX.to_be_bytes(),
            &t(Native::Timestamp)
        )
        .is_err());
        // 1900-03-01 is day -25508 after 1970, -36465 after 2000.
        assert_eq!(
            decode(&PgKind::Date, &(-36_465i32).to_be_bytes(), &t(Native::Date)),
            Ok(CqlValue::Date(CqlDate((1u32 << 31) - 25_508)))
        );
        // 10:00 at +02:00 (zone = -7200 s west) is 08:00 UTC.
        let mut raw = (10 * 3_600_000_000i64).to_be_bytes().to_vec();
        raw.extend_from_slice(&(-7200i32).to_be_bytes());
        assert_eq!(
            decode(&PgKind::TimeTz, &raw, &t(Native::Time)),
            Ok(CqlValue::Time(CqlTime(8 * 3_600_000_000_000)))
        );
    }

    #[test]
    fn intervals_with_mixed_signs_are_rejected() {
        let raw = |us: i64, d: i32, m: i32| {
            let mut v = us.to_be_bytes().to_vec();
            v.extend_from_slice(&d.to_be_bytes());
            v.extend_from_slice(&m.to_be_bytes());
            v
        };
        assert_eq!(
            decode(&PgKind::Interval, &raw(1_000, 2, 3), &t(Native::Duration)),
            Ok(CqlValue::Duration(CqlDuration {
                months: 3,
                days: 2,
                nanoseconds: 1_000_000
            }))
        );
        assert!(decode(&PgKind::Interval, &raw(0, -1, 1), &t(Native::Duration)).is_err());
    }

    fn array(dims: &[i32], elems: &[Option<&[u8]>]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&(dims.len() as i32).to_be_bytes());
        v.extend_from_slice(&0i32.to_be_bytes());
        v.extend_from_slice(&23i32.to_be_bytes());
        for d in dims {
            v.extend_from_slice(&d.to_be_bytes());
            v.extend_from_slice(&1i32.to_be_bytes());
        }
        for e in elems {
            match e {
                Some(b) => {
                    v.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    v.extend_from_slice(b);
                }
                None => v.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        v
    }

    #[test]
    fn arrays_become_lists_and_nulls_inside_are_rejected() {
        let kind = PgKind::Array(Box::new(PgKind::Int4));
        let list = ResolvedType::List(Box::new(t(Native::Int)));
        let one = 1i32.to_be_bytes();
        let two = 2i32.to_be_bytes();
        assert_eq!(
            decode(&kind, &array(&[2], &[Some(&one), Some(&two)]), &list),
            Ok(CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(2)]))
        );
        assert_eq!(
            decode(&kind, &array(&[], &[]), &list),
            Ok(CqlValue::List(vec![]))
        );
        assert!(decode(&kind, &array(&[1], &[None]), &list).is_err());
        let nested = ResolvedType::List(Box::new(list.clone()));
        assert_eq!(
            decode(&kind, &array(&[2, 1], &[Some(&one), Some(&two)]), &nested),
            Ok(CqlValue::List(vec![
                CqlValue::List(vec![CqlValue::Int(1)]),
                CqlValue::List(vec![CqlValue::Int(2)])
            ]))
        );
        assert!(decode(&kind, &array(&[1, 1], &[Some(&one)]), &list).is_err());
    }

    #[test]
    fn inet_with_mask_is_rejected() {
        let host = [2u8, 32, 0, 4, 10, 0, 0, 1];
        assert_eq!(
            decode(&PgKind::Inet, &host, &t(Native::Inet)),
            Ok(CqlValue::Inet(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))))
        );
        let net = [2u8, 24, 0, 4, 10, 0, 0, 0];
        assert!(decode(&PgKind::Inet, &net, &t(Native::Inet))
            .unwrap_err()
            .0
            .contains("netmask"));
    }

    #[test]
    fn casts_cover_every_native_target() {
        for n in [
            Native::Text,
            Native::Decimal,
            Native::Timestamp,
            Native::Duration,
            Native::Inet,
        ] {
            let cast = canonical_cast(&t(n)).unwrap();
            assert!(!cast.is_empty());
        }
        assert_eq!(
            canonical_cast(&ResolvedType::List(Box::new(t(Native::Double)))).as_deref(),
            Some("float8[]")
        );
    }
}
