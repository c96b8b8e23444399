//! Verify's own reading of both sides, independent of the backfill's converters (`convert`,
//! `numeric`, `json`, `time`'s parsers): Postgres renders each sampled source value as canonical
//! text in SQL ([`sql`]), this module renders the value Cassandra holds in the same canonical text
//! ([`render`]), and the two are compared. A bug in a conversion makes the stored value differ
//! from Postgres' own rendering of the source, so it cannot pass both.
//!
//! The canonical forms, per CQL type of the target column:
//!
//! | CQL type | canonical text | Postgres side |
//! |---|---|---|
//! | `text`, `ascii` | the string itself (a `char(n)` keeps its padding) | `::text` (`concat` for `char(n)`); JSON: `#>> '{}'` |
//! | `boolean` | `true` / `false` | `::text` |
//! | integers, `varint` | decimal digits | `::text` |
//! | `decimal` | plain decimal with the value's own scale (`12.50`) | `::numeric::text` |
//! | `float`, `double` | the IEEE 754 bits, hex (`3ff8000000000000` is 1.5) | `float4send` / `float8send` |
//! | `blob` | hex | `encode(…, 'hex')` |
//! | `uuid`, `timeuuid` | lower-case hyphenated | `::uuid::text` |
//! | `timestamp` | UTC, milliseconds, rounded down: `2025-01-02T03:04:05.678Z` (` BC` after years before 1) | `to_char(… AT TIME ZONE 'UTC', …)` (a `timestamp` without zone is taken as UTC, as the plan maps it) |
//! | `date` | `2025-01-02` (` BC` after years before 1) | its fields (`extract`: `to_char` goes through a timestamp, which ends in 294276) |
//! | `time` | `HH:MM:SS.ffffff`, a `timetz` as its UTC time of day | `to_char` |
//! | `duration` | `M months D days U us` | `extract` of each field |
//! | `inet` | the address as Rust's `IpAddr` prints it (RFC 5952) | `host()`, parsed and printed again |
//! | `list`, `set` | a JSON array of the elements' forms (a set sorted) | `jsonb_agg` over the array or JSON array |
//! | `map` | a JSON object of the keys' and values' forms | `jsonb_object_agg` over the JSON object |
//! | UDT, `tuple` | a JSON object of the fields / a JSON array | `jsonb_build_object` / `jsonb_build_array` |
//!
//! An empty collection and NULL are the same (CQL stores an empty collection as no value).

use crate::resolved_type::{Native, ResolvedType};
use scylla::value::CqlValue;
use serde_json::{Map, Value};
use tokio_postgres::types::{Kind, Type};

/// What kind of Postgres value a canonical expression starts from, where it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pg {
    /// `timestamp` (no zone: taken as UTC).
    Timestamp,
    /// `timestamptz`.
    TimestampTz,
    /// `timetz`.
    TimeTz,
    /// `char(n)`: its padding is part of the value.
    Bpchar,
    /// Any other type.
    Other,
}

impl Pg {
    fn of(ty: &Type) -> Pg {
        if let Kind::Domain(base) = ty.kind() {
            return Pg::of(base);
        }
        match *ty {
            Type::TIMESTAMP => Pg::Timestamp,
            Type::TIMESTAMPTZ => Pg::TimestampTz,
            Type::TIMETZ => Pg::TimeTz,
            Type::BPCHAR => Pg::Bpchar,
            _ => Pg::Other,
        }
    }
}

/// The Postgres type a JSON leaf's text is read as for a native CQL type. Deliberately verify's
/// own table, not the converters' `canonical_cast`: a wrong entry there must not be mirrored here.
fn json_leaf_type(n: Native) -> Option<&'static str> {
    use Native as N;
    Some(match n {
        N::Text | N::Ascii => return None,
        N::Boolean => "bool",
        N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Counter | N::Varint | N::Decimal => {
            "numeric"
        }
        N::Float => "float4",
        N::Double => "float8",
        N::Blob => "bytea",
        N::Uuid | N::Timeuuid => "uuid",
        N::Timestamp => "timestamptz",
        N::Date => "date",
        N::Time => "time",
        N::Duration => "interval",
        N::Inet => "inet",
    })
}

/// ` BC` after a date or timestamp before year 1 (`to_char`'s `YYYY` drops the era).
fn era(e: &str) -> String {
    format!("CASE WHEN {e} < '0001-01-01' THEN ' BC' ELSE '' END")
}

/// SQL text of the canonical form of date `d`, from its fields: `to_char` goes through a
/// timestamp, whose range ends in 294276 where a date's ends in 5874897.
fn date_sql(d: &str) -> String {
    let field = |f: &str, width: usize| {
        let v = format!("abs(extract({f} FROM {d}))::int8::text");
        format!("right('000' || {v}, greatest({width}, length({v})))")
    };
    format!(
        "CASE WHEN NOT isfinite({d}) THEN ({d})::text ELSE {} || '-' || {} || '-' || {} || {} END",
        field("year", 4),
        field("month", 2),
        field("day", 2),
        era(d)
    )
}

/// SQL text of the canonical form of `e`, a value of kind `pg`, for the native CQL type `n`.
fn native_sql(e: &str, pg: Pg, n: Native) -> String {
    use Native as N;
    match n {
        N::Text | N::Ascii if pg == Pg::Bpchar => {
            format!("CASE WHEN {e} IS NULL THEN NULL ELSE concat({e}) END")
        }
        N::Text | N::Ascii | N::Boolean => format!("({e})::text"),
        N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Counter | N::Varint | N::Decimal => {
            format!("({e})::numeric::text")
        }
        N::Float => format!("encode(float4send(({e})::float4), 'hex')"),
        N::Double => format!("encode(float8send(({e})::float8), 'hex')"),
        N::Blob => format!("encode(({e})::bytea, 'hex')"),
        N::Uuid | N::Timeuuid => format!("({e})::uuid::text"),
        N::Timestamp => {
            let ts = match pg {
                Pg::Timestamp => format!("({e})"),
                _ => format!("(({e})::timestamptz AT TIME ZONE 'UTC')"),
            };
            format!(
                "to_char({ts}, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || {}",
                era(&ts)
            )
        }
        N::Date => date_sql(&format!("({e})::date")),
        N::Time if pg == Pg::TimeTz => {
            format!("to_char((({e}) AT TIME ZONE 'UTC')::time, 'HH24:MI:SS.US')")
        }
        N::Time => format!("to_char(({e})::time, 'HH24:MI:SS.US')"),
        N::Duration => {
            // format() renders a NULL argument as '': NULL stays NULL here.
            let i = format!("(({e})::interval)");
            format!(
                "CASE WHEN {i} IS NULL THEN NULL ELSE format('%s months %s days %s us', \
                 (extract(year FROM {i}) * 12 + extract(month FROM {i}))::int8, \
                 extract(day FROM {i})::int8, \
                 (extract(hour FROM {i}) * 3600000000 + extract(minute FROM {i}) * 60000000 \
                  + extract(microseconds FROM {i}))::int8) END"
            )
        }
        N::Inet => format!("host(({e})::inet)"),
    }
}

/// A SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// SQL (a `jsonb`) of the canonical form of the JSON value `x` read as `cql`; `depth` keeps the
/// aliases of nested subqueries apart. `None` for a map whose keys are not a native type.
fn json_sql(x: &str, cql: &ResolvedType, depth: usize) -> Option<String> {
    let (a, v, n) = (
        format!("a{depth}"),
        format!("v{depth}"),
        format!("n{depth}"),
    );
    Some(match cql {
        ResolvedType::Native(nat) => {
            let leaf = match json_leaf_type(*nat) {
                Some(ty) => format!("(({x}) #>> '{{}}')::{ty}"),
                None => format!("(({x}) #>> '{{}}')"),
            };
            let pg = if *nat == Native::Timestamp {
                Pg::TimestampTz
            } else {
                Pg::Other
            };
            format!("to_jsonb({})", native_sql(&leaf, pg, *nat))
        }
        ResolvedType::List(t) | ResolvedType::Set(t) => format!(
            "CASE WHEN jsonb_typeof({x}) = 'array' THEN (SELECT jsonb_agg({} ORDER BY {a}.{n}) \
             FROM jsonb_array_elements({x}) WITH ORDINALITY AS {a}({v}, {n})) END",
            json_sql(&format!("{a}.{v}"), t, depth + 1)?
        ),
        ResolvedType::Map(k, val) => {
            let ResolvedType::Native(kn) = **k else {
                return None;
            };
            let key = match json_leaf_type(kn) {
                Some(ty) => format!("({a}.key)::{ty}"),
                None => format!("{a}.key"),
            };
            format!(
                "CASE WHEN jsonb_typeof({x}) = 'object' THEN (SELECT jsonb_object_agg({}, {}) \
                 FROM jsonb_each({x}) AS {a}) END",
                native_sql(&key, Pg::Other, kn),
                json_sql(&format!("{a}.value"), val, depth + 1)?
            )
        }
        ResolvedType::Udt(def) => {
            // jsonb_build_object takes at most 100 arguments: 50 fields a call, joined with ||.
            let mut parts = Vec::new();
            for chunk in def.fields.chunks(50) {
                let mut args = Vec::new();
                for (name, t) in chunk {
                    args.push(literal(name));
                    args.push(json_sql(
                        &format!("({x}) -> {}", literal(name)),
                        t,
                        depth + 1,
                    )?);
                }
                parts.push(format!("jsonb_build_object({})", args.join(", ")));
            }
            format!(
                "CASE WHEN jsonb_typeof({x}) = 'object' THEN {} END",
                parts.join(" || ")
            )
        }
        ResolvedType::Tuple(types) => {
            let items = types
                .iter()
                .enumerate()
                .map(|(i, t)| json_sql(&format!("({x}) -> {i}"), t, depth + 1))
                .collect::<Option<Vec<_>>>()?;
            format!(
                "CASE WHEN jsonb_typeof({x}) = 'array' THEN jsonb_build_array({}) END",
                items.join(", ")
            )
        }
    })
}

/// SQL (a `jsonb`) of the canonical form of the array `e` (element kind `elem`) read as `cql`, a
/// list or set nested `dims.len()` deep: one `generate_subscripts` per dimension.
fn array_sql(e: &str, elem: Pg, cql: &ResolvedType, dims: &mut Vec<String>) -> Option<String> {
    match cql {
        ResolvedType::List(t) | ResolvedType::Set(t) => {
            let d = dims.len() + 1;
            let i = format!("i{d}");
            dims.push(i.clone());
            let inner = array_sql(e, elem, t, dims)?;
            dims.pop();
            Some(format!(
                "(SELECT jsonb_agg({inner} ORDER BY {i}) FROM generate_subscripts({e}, {d}) AS s{d}({i}))"
            ))
        }
        ResolvedType::Native(n) if !dims.is_empty() => {
            let subscripts: String = dims.iter().map(|i| format!("[{i}]")).collect();
            Some(format!(
                "to_jsonb({})",
                native_sql(&format!("({e}){subscripts}"), elem, *n)
            ))
        }
        _ => None,
    }
}

/// SQL computing, as `text` holding JSON, the canonical form of the source value `e` (of Postgres
/// type `ty`) for a target column of type `cql`; `None` when verify has no independent reading
/// of that mapping (a map keyed by a collection), and compares the converted value instead.
pub fn sql(e: &str, ty: &Type, cql: &ResolvedType) -> Option<String> {
    let jsonb = match (ty.kind(), cql) {
        (_, ResolvedType::Native(n)) if !matches!(*ty, Type::JSON | Type::JSONB) => {
            format!("to_jsonb({})", native_sql(e, Pg::of(ty), *n))
        }
        (_, ResolvedType::Native(Native::Text | Native::Ascii)) => format!("to_jsonb(({e})::text)"),
        (Kind::Array(elem), ResolvedType::List(_) | ResolvedType::Set(_)) => {
            array_sql(e, Pg::of(elem), cql, &mut Vec::new())?
        }
        _ => json_sql(&format!("({e})::jsonb"), cql, 0)?,
    };
    Some(format!("({jsonb})::text"))
}

/// The canonical form Postgres computed (the text [`sql`] returned, `None` for SQL NULL), made
/// comparable with [`render`]'s: sets sorted, addresses printed again, empty collections NULL.
pub fn from_postgres(text: Option<&str>, cql: &ResolvedType) -> Result<Value, String> {
    let Some(text) = text else {
        return Ok(Value::Null);
    };
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("canonical JSON from Postgres: {e}"))?;
    Ok(normalize(v, cql))
}

fn normalize(v: Value, cql: &ResolvedType) -> Value {
    let v = match (v, cql) {
        (Value::String(s), ResolvedType::Native(Native::Inet)) => {
            match s.parse::<std::net::IpAddr>() {
                Ok(ip) => Value::String(ip.to_string()),
                Err(_) => Value::String(s),
            }
        }
        (Value::Array(items), ResolvedType::List(t)) => {
            Value::Array(items.into_iter().map(|x| normalize(x, t)).collect())
        }
        (Value::Array(items), ResolvedType::Set(t)) => {
            let mut items: Vec<Value> = items.into_iter().map(|x| normalize(x, t)).collect();
            items.sort_by_cached_key(|x| x.to_string());
            Value::Array(items)
        }
        (Value::Object(m), ResolvedType::Map(_, t)) => {
            Value::Object(m.into_iter().map(|(k, x)| (k, normalize(x, t))).collect())
        }
        (Value::Object(m), ResolvedType::Udt(def)) => Value::Object(
            m.into_iter()
                .map(|(k, x)| {
                    let t = def.fields.iter().find(|(n, _)| *n == k).map(|(_, t)| t);
                    let x = match t {
                        Some(t) => normalize(x, t),
                        None => x,
                    };
                    (k, x)
                })
                .collect(),
        ),
        (Value::Array(items), ResolvedType::Tuple(types)) => Value::Array(
            items
                .into_iter()
                .zip(types)
                .map(|(x, t)| normalize(x, t))
                .collect(),
        ),
        (v, _) => v,
    };
    match &v {
        Value::Array(a) if a.is_empty() => Value::Null,
        Value::Object(o) if o.is_empty() => Value::Null,
        _ => v,
    }
}

/// The canonical form of the value Cassandra holds (`None` for no value).
pub fn render(v: Option<&CqlValue>, cql: &ResolvedType) -> Value {
    let Some(v) = v else {
        return Value::Null;
    };
    let rendered = match (v, cql) {
        (
            CqlValue::List(items) | CqlValue::Set(items),
            ResolvedType::List(t) | ResolvedType::Set(t),
        ) => Value::Array(items.iter().map(|x| render(Some(x), t)).collect()),
        (CqlValue::Map(entries), ResolvedType::Map(k, t)) => {
            let mut m = Map::new();
            for (key, val) in entries {
                let key = match render(Some(key), k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, render(Some(val), t));
            }
            Value::Object(m)
        }
        (CqlValue::UserDefinedType { fields, .. }, ResolvedType::Udt(def)) => {
            let mut m = Map::new();
            for (name, t) in &def.fields {
                let field = fields
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, x)| x.as_ref());
                m.insert(name.clone(), render(field, t));
            }
            Value::Object(m)
        }
        (CqlValue::Tuple(items), ResolvedType::Tuple(types)) => Value::Array(
            items
                .iter()
                .zip(types)
                .map(|(x, t)| render(x.as_ref(), t))
                .collect(),
        ),
        (v, _) => Value::String(native_text(v)),
    };
    normalize(rendered, cql)
}

/// The canonical text of a native CQL value.
fn native_text(v: &CqlValue) -> String {
    match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => s.clone(),
        CqlValue::Boolean(b) => b.to_string(),
        CqlValue::TinyInt(n) => n.to_string(),
        CqlValue::SmallInt(n) => n.to_string(),
        CqlValue::Int(n) => n.to_string(),
        CqlValue::BigInt(n) => n.to_string(),
        CqlValue::Varint(n) => signed_decimal(n.as_signed_bytes_be_slice()),
        CqlValue::Decimal(d) => {
            let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
            with_scale(&signed_decimal(bytes), scale)
        }
        CqlValue::Float(f) => format!("{:08x}", f.to_bits()),
        CqlValue::Double(f) => format!("{:016x}", f.to_bits()),
        CqlValue::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
        CqlValue::Uuid(u) => u.to_string(),
        CqlValue::Timeuuid(u) => uuid::Uuid::from_bytes(*u.as_bytes()).to_string(),
        CqlValue::Timestamp(ts) => timestamp(ts.0),
        CqlValue::Date(d) => date(i64::from(d.0) - (1i64 << 31)),
        CqlValue::Time(t) => time_of_day(t.0),
        CqlValue::Duration(d) => {
            let (us, rest) = (
                d.nanoseconds.div_euclid(1000),
                d.nanoseconds.rem_euclid(1000),
            );
            let extra = if rest == 0 {
                String::new()
            } else {
                format!(" +{rest} ns")
            };
            format!("{} months {} days {us} us{extra}", d.months, d.days)
        }
        CqlValue::Inet(ip) => ip.to_string(),
        other => format!("{other:?}"),
    }
}

/// A two's complement big-endian integer in decimal, any length.
fn signed_decimal(bytes: &[u8]) -> String {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    // The magnitude: the bytes themselves, or their two's complement.
    let mut mag: Vec<u8> = bytes.to_vec();
    if negative {
        for b in &mut mag {
            *b = !*b;
        }
        for b in mag.iter_mut().rev() {
            let (sum, carry) = b.overflowing_add(1);
            *b = sum;
            if !carry {
                break;
            }
        }
    }
    // Repeated division by 10 over the big-endian bytes.
    let mut digits = Vec::new();
    while mag.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in &mut mag {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// `digits` (an integer in decimal) divided by 10^`scale`, with `scale` digits after the point.
fn with_scale(digits: &str, scale: i32) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits),
    };
    if scale <= 0 {
        let zeros = if digits == "0" { 0 } else { (-scale) as usize };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Civil date of a day count from 1970-01-01 (proleptic Gregorian, astronomical years).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD`, with ` BC` (and the year counted as Postgres does) before year 1.
fn date_parts(days: i64) -> (String, &'static str) {
    let (y, m, d) = civil(days);
    let (year, era) = if y <= 0 { (1 - y, " BC") } else { (y, "") };
    (format!("{year:04}-{m:02}-{d:02}"), era)
}

fn date(days: i64) -> String {
    let (ymd, era) = date_parts(days);
    format!("{ymd}{era}")
}

fn timestamp(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (ymd, era) = date_parts(days);
    let (h, rest) = (ms_of_day / 3_600_000, ms_of_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!("{ymd}T{h:02}:{min:02}:{s:02}.{milli:03}Z{era}")
}

fn time_of_day(ns: i64) -> String {
    let (us, rest) = (ns.div_euclid(1000), ns.rem_euclid(1000));
    let (h, r) = (us / 3_600_000_000, us % 3_600_000_000);
    let (m, r) = (r / 60_000_000, r % 60_000_000);
    let (s, frac) = (r / 1_000_000, r % 1_000_000);
    let extra = if rest == 0 {
        String::new()
    } else {
        format!(" +{rest} ns")
    };
    format!("{h:02}:{m:02}:{s:02}.{frac:06}{extra}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::value::{CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlVarint};

    fn n(x: Native) -> ResolvedType {
        ResolvedType::Native(x)
    }

    fn text(v: CqlValue, t: Native) -> Value {
        render(Some(&v), &n(t))
    }

    #[test]
    fn natives_render_in_their_canonical_text() {
        let s = |x: &str| Value::String(x.into());
        assert_eq!(
            text(CqlValue::Timestamp(CqlTimestamp(-1)), Native::Timestamp),
            s("1969-12-31T23:59:59.999Z")
        );
        assert_eq!(
            text(
                CqlValue::Timestamp(CqlTimestamp(1_735_787_045_678)),
                Native::Timestamp
            ),
            s("2025-01-02T03:04:05.678Z")
        );
        // 1970-01-01 is 2^31; 44 BC-03-15 is astronomical year -43.
        assert_eq!(
            text(CqlValue::Date(CqlDate(1 << 31)), Native::Date),
            s("1970-01-01")
        );
        assert_eq!(
            text(
                CqlValue::Date(CqlDate((1u32 << 31) - 735_160)),
                Native::Date
            ),
            s("0044-03-15 BC")
        );
        assert_eq!(
            text(
                CqlValue::Time(CqlTime(8 * 3_600_000_000_000 + 500)),
                Native::Time
            ),
            s("08:00:00.000000 +500 ns")
        );
        let dec = |bytes: Vec<u8>, scale| {
            text(
                CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(bytes, scale)),
                Native::Decimal,
            )
        };
        assert_eq!(dec(1250i64.to_be_bytes().to_vec(), 2), s("12.50"));
        assert_eq!(dec((-5i64).to_be_bytes().to_vec(), 3), s("-0.005"));
        assert_eq!(
            dec(vec![0x01, 0, 0, 0, 0, 0, 0, 0, 0], 0),
            s("18446744073709551616")
        );
        assert_eq!(dec(vec![0x0c], -2), s("1200"));
        assert_eq!(
            text(
                CqlValue::Varint(CqlVarint::from_signed_bytes_be(vec![0xff, 0x00])),
                Native::Varint
            ),
            s("-256")
        );
        assert_eq!(
            text(CqlValue::Double(1.5), Native::Double),
            s("3ff8000000000000")
        );
        assert_eq!(
            text(
                CqlValue::Duration(CqlDuration {
                    months: -14,
                    days: 3,
                    nanoseconds: -361_801_500_000_000
                }),
                Native::Duration
            ),
            s("-14 months 3 days -361801500000 us")
        );
    }

    #[test]
    fn postgres_forms_are_normalized_like_rendered_ones() {
        let set = ResolvedType::Set(Box::new(n(Native::Int)));
        assert_eq!(
            from_postgres(Some(r#"["3", "1", "2"]"#), &set).unwrap(),
            render(
                Some(&CqlValue::Set(vec![
                    CqlValue::Int(1),
                    CqlValue::Int(3),
                    CqlValue::Int(2)
                ])),
                &set
            )
        );
        let list = ResolvedType::List(Box::new(n(Native::Int)));
        assert_ne!(
            from_postgres(Some(r#"["3", "1"]"#), &list).unwrap(),
            render(
                Some(&CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(3)])),
                &list
            )
        );
        // An empty array is no value, as CQL stores it.
        assert_eq!(from_postgres(Some("[]"), &list).unwrap(), Value::Null);
        assert_eq!(
            from_postgres(Some(r#""2001:db8:0:0:1:0:0:1""#), &n(Native::Inet)).unwrap(),
            Value::String("2001:db8::1:0:0:1".into())
        );
    }

    #[test]
    fn every_mapping_has_sql() {
        let list = ResolvedType::List(Box::new(ResolvedType::List(Box::new(n(Native::Int)))));
        let q = sql("v.c0", &Type::INT4_ARRAY, &list).unwrap();
        assert!(q.contains("generate_subscripts(v.c0, 2)"), "{q}");
        assert!(q.contains("(v.c0)[i1][i2]"), "{q}");
        let q = sql("v.c1", &Type::BPCHAR, &n(Native::Text)).unwrap();
        assert!(q.contains("concat(v.c1)"), "{q}");
        let map = ResolvedType::Map(Box::new(n(Native::Int)), Box::new(n(Native::Timestamp)));
        let q = sql("v.c2", &Type::JSONB, &map).unwrap();
        assert!(q.contains("jsonb_object_agg"), "{q}");
    }
}
