//! JSON built by `source_sql` (`json_object_agg` / `json_agg` of embedded children) to CQL
//! maps, lists and user-defined type values. Numbers are read from their JSON text, never through
//! a float, so decimals keep every digit.

use crate::error::ValueError;
use crate::numeric::parse_decimal;
use crate::resolved_type::{Native, ResolvedType, UdtDef};
use crate::time;
use scylla::value::{CqlDate, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue, CqlVarint};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

fn err<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}

/// Converts JSON text to a value of `target` (a map, list, set, UDT, tuple or native type).
pub fn from_json(text: &str, target: &ResolvedType) -> Result<CqlValue, ValueError> {
    let raw: &RawValue = serde_json::from_str(text)
        .map_err(|e| ValueError(format!("invalid JSON from source_sql: {e}")))?;
    match value(raw, target)? {
        Some(v) => Ok(v),
        None => err("JSON null where a value is needed"),
    }
}

fn parse<'a, T: serde::Deserialize<'a>>(raw: &'a RawValue, what: &str) -> Result<T, ValueError> {
    serde_json::from_str(raw.get())
        .map_err(|e| ValueError(format!("JSON {} is not {what}: {e}", abbreviate(raw.get()))))
}

fn abbreviate(s: &str) -> String {
    if s.len() <= 60 {
        return s.to_string();
    }
    let mut end = 57;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `None` for JSON null.
fn value(raw: &RawValue, target: &ResolvedType) -> Result<Option<CqlValue>, ValueError> {
    let text = raw.get().trim();
    if text == "null" {
        return Ok(None);
    }
    Ok(Some(match target {
        ResolvedType::Native(n) => native(raw, *n)?,
        ResolvedType::List(t) | ResolvedType::Set(t) => {
            let items: Vec<&RawValue> = parse(raw, "an array")?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match value(item, t)? {
                    Some(v) => out.push(v),
                    None => {
                        return err(
                            "null element in a JSON array (CQL collections cannot hold null)",
                        )
                    }
                }
            }
            if matches!(target, ResolvedType::Set(_)) {
                CqlValue::Set(out)
            } else {
                CqlValue::List(out)
            }
        }
        ResolvedType::Map(k, v) => {
            let entries: BTreeMap<String, &RawValue> = parse(raw, "an object")?;
            let mut out = Vec::with_capacity(entries.len());
            for (key, val) in entries {
                let key = key_from_string(&key, k)?;
                match value(val, v)? {
                    Some(val) => out.push((key, val)),
                    None => return err("null map value in JSON (CQL maps cannot hold null)"),
                }
            }
            CqlValue::Map(out)
        }
        ResolvedType::Udt(def) => udt(raw, def)?,
        ResolvedType::Tuple(types) => {
            let items: Vec<&RawValue> = parse(raw, "an array")?;
            if items.len() != types.len() {
                return err(format!(
                    "tuple of {} from a JSON array of {}",
                    types.len(),
                    items.len()
                ));
            }
            let mut out = Vec::with_capacity(items.len());
            for (item, t) in items.into_iter().zip(types) {
                out.push(value(item, t)?);
            }
            CqlValue::Tuple(out)
        }
    }))
}

fn udt(raw: &RawValue, def: &UdtDef) -> Result<CqlValue, ValueError> {
    let mut entries: BTreeMap<String, &RawValue> = parse(raw, "an object")?;
    let mut fields = Vec::with_capacity(def.fields.len());
    for (name, t) in &def.fields {
        let v = match entries.remove(name) {
            Some(r) => value(r, t)?,
            None => None,
        };
        fields.push((name.clone(), v));
    }
    if let Some(extra) = entries.keys().next() {
        return err(format!(
            "JSON field `{extra}` is not a field of type {}",
            def.name
        ));
    }
    Ok(CqlValue::UserDefinedType {
        keyspace: def.keyspace.clone(),
        name: def.name.clone(),
        fields,
    })
}

/// A map key: JSON object keys are always strings, so the key type is parsed from one.
fn key_from_string(key: &str, t: &ResolvedType) -> Result<CqlValue, ValueError> {
    let quoted = serde_json::to_string(key).map_err(|e| ValueError(e.to_string()))?;
    let as_json = match t {
        ResolvedType::Native(Native::Text | Native::Ascii) => quoted,
        ResolvedType::Native(
            Native::TinyInt
            | Native::SmallInt
            | Native::Int
            | Native::BigInt
            | Native::Varint
            | Native::Decimal
            | Native::Float
            | Native::Double
            | Native::Boolean,
        ) => key.to_string(),
        _ => quoted,
    };
    let raw = RawValue::from_string(as_json).map_err(|_| ValueError(format!("map key `{key}`")))?;
    value(&raw, t)?.ok_or_else(|| ValueError("null map key".into()))
}

fn int(raw: &RawValue) -> Result<i64, ValueError> {
    parse::<i64>(raw, "an integer")
}

fn narrow<T: TryFrom<i64>>(v: i64, cql: &str) -> Result<T, ValueError> {
    T::try_from(v).map_err(|_| ValueError(format!("{v} does not fit CQL {cql}")))
}

fn native(raw: &RawValue, n: Native) -> Result<CqlValue, ValueError> {
    let string = || parse::<String>(raw, "a string");
    Ok(match n {
        Native::Text => CqlValue::Text(match raw.get().starts_with('"') {
            true => string()?,
            // A nested json/jsonb value stored as text keeps its JSON form.
            false => raw.get().to_string(),
        }),
        Native::Ascii => {
            let s = string()?;
            if !s.is_ascii() {
                return err("text is not ASCII (CQL ascii)");
            }
            CqlValue::Ascii(s)
        }
        Native::Boolean => CqlValue::Boolean(parse(raw, "a boolean")?),
        Native::TinyInt => CqlValue::TinyInt(narrow(int(raw)?, "tinyint")?),
        Native::SmallInt => CqlValue::SmallInt(narrow(int(raw)?, "smallint")?),
        Native::Int => CqlValue::Int(narrow(int(raw)?, "int")?),
        Native::BigInt => CqlValue::BigInt(int(raw)?),
        Native::Counter => CqlValue::Counter(scylla::value::Counter(int(raw)?)),
        Native::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(
            int(raw)?.to_be_bytes().to_vec(),
        )),
        Native::Decimal => {
            let text = raw.get().trim();
            // Postgres writes numbers bare; NaN and Infinity only appear as strings.
            let text = if text.starts_with('"') {
                string()?
            } else {
                text.to_string()
            };
            CqlValue::Decimal(parse_decimal(&text)?)
        }
        Native::Float => CqlValue::Float(parse::<f64>(raw, "a number")? as f32),
        Native::Double => CqlValue::Double(parse(raw, "a number")?),
        Native::Blob => {
            let s = string()?;
            CqlValue::Blob(hex_bytea(&s).ok_or_else(|| {
                ValueError(format!("`{}` is not bytea hex (\\x…)", abbreviate(&s)))
            })?)
        }
        Native::Uuid | Native::Timeuuid => {
            let s = string()?;
            let u = uuid::Uuid::parse_str(&s)
                .map_err(|_| ValueError(format!("`{}` is not a UUID", abbreviate(&s))))?;
            if n == Native::Uuid {
                CqlValue::Uuid(u)
            } else {
                CqlValue::Timeuuid(CqlTimeuuid::from(u))
            }
        }
        Native::Timestamp => {
            let s = string()?;
            CqlValue::Timestamp(CqlTimestamp(
                time::parse_timestamp_ms(&s)
                    .ok_or_else(|| ValueError(format!("`{s}` is not an ISO-8601 timestamp")))?,
            ))
        }
        Native::Date => {
            let s = string()?;
            let days =
                time::parse_date(&s).ok_or_else(|| ValueError(format!("`{s}` is not a date")))?;
            CqlValue::Date(CqlDate(((1i64 << 31) + days) as u32))
        }
        Native::Time => {
            let s = string()?;
            CqlValue::Time(CqlTime(
                time::parse_time(&s).ok_or_else(|| ValueError(format!("`{s}` is not a time")))?,
            ))
        }
        Native::Inet => {
            let s = string()?;
            CqlValue::Inet(
                s.parse().map_err(|_| {
                    ValueError(format!("`{s}` is not an IP address without netmask"))
                })?,
            )
        }
        Native::Duration => return err("durations inside JSON are not supported (cast to text)"),
    })
}

/// Postgres' bytea hex output (`\x0a1b`) to bytes.
fn hex_bytea(s: &str) -> Option<Vec<u8>> {
    let hex = s.strip_prefix("\\x")?;
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::decimal_to_string;
    use crate::resolved_type::TypeParser;
    use remodel_model::UserType;

    fn types() -> Vec<UserType> {
        vec![UserType {
            name: "address_entry".into(),
            fields: vec![
                ("label".into(), "text".parse().unwrap()),
                ("street".into(), "text".parse().unwrap()),
                ("since".into(), "timestamp".parse().unwrap()),
                ("fee".into(), "decimal".parse().unwrap()),
            ],
        }]
    }

    #[test]
    fn json_object_agg_becomes_a_map_of_udts() {
        let types = types();
        let t = TypeParser::new("shop", &types)
            .parse("map<text, frozen<address_entry>>")
            .unwrap();
        let json = r#"{"home" : {"label" : "home", "street" : "1 Rue", "since" : "1969-07-20T20:17:40+00:00", "fee" : 12345678901234567890.123456789}}"#;
        let CqlValue::Map(entries) = from_json(json, &t).unwrap() else {
            panic!("not a map")
        };
        assert_eq!(entries[0].0, CqlValue::Text("home".into()));
        let CqlValue::UserDefinedType {
            keyspace, fields, ..
        } = &entries[0].1
        else {
            panic!("not a udt")
        };
        assert_eq!(keyspace, "shop");
        assert_eq!(
            fields[2].1,
            Some(CqlValue::Timestamp(CqlTimestamp(-14_182_940_000)))
        );
        let Some(CqlValue::Decimal(d)) = &fields[3].1 else {
            panic!("not a decimal")
        };
        assert_eq!(decimal_to_string(d), "12345678901234567890.123456789");
    }

    #[test]
    fn missing_fields_are_null_and_unknown_fields_are_errors() {
        let types = types();
        let t = TypeParser::new("shop", &types)
            .parse("list<frozen<address_entry>>")
            .unwrap();
        let CqlValue::List(items) = from_json(r#"[{"label": "a"}]"#, &t).unwrap() else {
            panic!("not a list")
        };
        let CqlValue::UserDefinedType { fields, .. } = &items[0] else {
            panic!("not a udt")
        };
        assert_eq!(fields[1], ("street".to_string(), None));
        assert!(from_json(r#"[{"nope": 1}]"#, &t).is_err());
        assert!(from_json(r#"[null]"#, &t).is_err());
    }

    #[test]
    fn map_keys_parse_to_their_type() {
        let t = TypeParser::new("ks", &[]).parse("map<int, text>").unwrap();
        assert_eq!(
            from_json(r#"{"7": "x"}"#, &t),
            Ok(CqlValue::Map(vec![(
                CqlValue::Int(7),
                CqlValue::Text("x".into())
            )]))
        );
        assert_eq!(hex_bytea("\\x00ff"), Some(vec![0, 255]));
    }
}
