//! One source row to one target row: every column decoded against its CQL type, NULLs left
//! unset (binding a NULL would write a tombstone), key columns required. Also the readable form of
//! values for the rejects file and verify's mismatches, and the size of a row on the wire.

use crate::convert::{decode, PgKind, RawValue};
use crate::numeric::decimal_to_string;
use crate::target::TargetTable;
use crate::time::{format_date, format_time_nanos, format_timestamp_ms};
use remodel_model::text::fnv1a64;
use scylla::value::{CqlValue, MaybeUnset};

/// A target row: one value per column of the table, `Unset` for NULL and empty collections.
pub type Row = Vec<MaybeUnset<CqlValue>>;

/// Why a source row cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowProblem {
    /// The column at fault, when one is.
    pub column: Option<String>,
    /// `null_key` (a NULL in a key column) or `value` (a value CQL cannot hold).
    pub kind: &'static str,
    /// The reason, for the rejects file.
    pub reason: String,
}

/// Converts one source row (binary values in target column order) to a target row.
pub fn convert_row(
    table: &TargetTable,
    kinds: &[PgKind],
    raw: &[RawValue<'_>],
) -> Result<Row, RowProblem> {
    let mut row = Vec::with_capacity(table.columns.len());
    for (i, col) in table.columns.iter().enumerate() {
        let problem = |kind: &'static str, reason: String| RowProblem {
            column: Some(col.name.clone()),
            kind,
            reason,
        };
        let value = match raw[i].0 {
            None => None,
            Some(bytes) => {
                Some(decode(&kinds[i], bytes, &col.cql).map_err(|e| problem("value", e.0))?)
            }
        };
        let is_partition = table.partition_key.contains(&i);
        let is_clustering = table.clustering.contains(&i);
        row.push(match value {
            None if is_partition => {
                return Err(problem(
                    "null_key",
                    format!("NULL in partition key column {}", col.name),
                ))
            }
            None if is_clustering => {
                return Err(problem(
                    "null_key",
                    format!("NULL in clustering column {}", col.name),
                ))
            }
            None => MaybeUnset::Unset,
            // CQL stores an empty collection as no value: leave it unset (no tombstone).
            Some(v) if is_empty_collection(&v) && !is_partition && !is_clustering => {
                MaybeUnset::Unset
            }
            Some(v) => MaybeUnset::Set(v),
        });
    }
    Ok(row)
}

fn is_empty_collection(v: &CqlValue) -> bool {
    match v {
        CqlValue::List(l) | CqlValue::Set(l) => l.is_empty(),
        CqlValue::Map(m) => m.is_empty(),
        _ => false,
    }
}

/// The source row's key columns as `(name, readable value)`, for the rejects file; a value that
/// does not decode shows as its bytes.
pub fn source_key(
    table: &TargetTable,
    kinds: &[PgKind],
    raw: &[RawValue<'_>],
) -> Vec<(String, String)> {
    table
        .source_key
        .iter()
        .map(|&i| {
            let col = &table.columns[i];
            let text = match raw[i].0 {
                None => "NULL".to_string(),
                Some(b) => match decode(&kinds[i], b, &col.cql) {
                    Ok(v) => show(&v),
                    Err(_) => format!("0x{}", hex(b)),
                },
            };
            (col.name.clone(), text)
        })
        .collect()
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Values longer than this show abbreviated, with their length and a hash.
const SHOW_MAX: usize = 120;

fn abbreviated(text: String) -> String {
    if text.len() <= SHOW_MAX {
        return text;
    }
    let mut end = SHOW_MAX - 20;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} bytes, fnv64 {:016x})",
        &text[..end],
        text.len(),
        fnv1a64(text.as_bytes())
    )
}

/// A value as a person reads it (decimals exact, timestamps in UTC, long values abbreviated).
pub fn show(v: &CqlValue) -> String {
    abbreviated(show_full(v))
}

/// [`show`] for a value that may be absent.
pub fn show_opt(v: Option<&CqlValue>) -> String {
    v.map_or_else(|| "NULL".to_string(), show)
}

fn show_full(v: &CqlValue) -> String {
    let list = |items: &[CqlValue]| items.iter().map(show_full).collect::<Vec<_>>().join(", ");
    match v {
        CqlValue::Ascii(s) | CqlValue::Text(s) => format!("{s:?}"),
        CqlValue::Boolean(b) => b.to_string(),
        CqlValue::Blob(b) => format!("0x{}", hex(b)),
        CqlValue::Decimal(d) => decimal_to_string(d),
        CqlValue::Date(d) => format_date(d.0 as i64 - (1i64 << 31)),
        CqlValue::Double(f) => f.to_string(),
        CqlValue::Float(f) => f.to_string(),
        CqlValue::Duration(d) => format!("{}mo{}d{}ns", d.months, d.days, d.nanoseconds),
        CqlValue::Int(i) => i.to_string(),
        CqlValue::BigInt(i) => i.to_string(),
        CqlValue::SmallInt(i) => i.to_string(),
        CqlValue::TinyInt(i) => i.to_string(),
        CqlValue::Counter(c) => c.0.to_string(),
        CqlValue::Timestamp(t) => format_timestamp_ms(t.0),
        CqlValue::Time(t) => format_time_nanos(t.0),
        CqlValue::Inet(ip) => ip.to_string(),
        CqlValue::Uuid(u) => u.to_string(),
        CqlValue::Timeuuid(u) => u.to_string(),
        CqlValue::Varint(v) => format!("0x{}", hex(v.as_signed_bytes_be_slice())),
        CqlValue::List(items) => format!("[{}]", list(items)),
        CqlValue::Set(items) => format!("{{{}}}", list(items)),
        CqlValue::Map(entries) => {
            let e: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", show_full(k), show_full(v)))
                .collect();
            format!("{{{}}}", e.join(", "))
        }
        CqlValue::UserDefinedType { fields, .. } => {
            let f: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!("{n}: {}", v.as_ref().map_or("NULL".into(), show_full)))
                .collect();
            format!("{{{}}}", f.join(", "))
        }
        CqlValue::Tuple(items) => {
            let t: Vec<String> = items
                .iter()
                .map(|v| v.as_ref().map_or("NULL".into(), show_full))
                .collect();
            format!("({})", t.join(", "))
        }
        CqlValue::Empty => "<empty>".into(),
        other => format!("{other:?}"),
    }
}

/// Bytes a value takes in a request (its serialized size plus the 4-byte length).
pub fn value_size(v: &CqlValue) -> usize {
    4 + match v {
        CqlValue::Ascii(s) | CqlValue::Text(s) => s.len(),
        CqlValue::Blob(b) => b.len(),
        CqlValue::Boolean(_) | CqlValue::TinyInt(_) => 1,
        CqlValue::SmallInt(_) => 2,
        CqlValue::Int(_) | CqlValue::Float(_) | CqlValue::Date(_) => 4,
        CqlValue::BigInt(_)
        | CqlValue::Double(_)
        | CqlValue::Timestamp(_)
        | CqlValue::Time(_)
        | CqlValue::Counter(_) => 8,
        CqlValue::Inet(ip) if ip.is_ipv4() => 4,
        CqlValue::Uuid(_) | CqlValue::Timeuuid(_) | CqlValue::Inet(_) => 16,
        CqlValue::Decimal(d) => 4 + d.as_signed_be_bytes_slice_and_exponent().0.len(),
        CqlValue::Varint(v) => v.as_signed_bytes_be_slice().len(),
        CqlValue::Duration(_) => 16,
        CqlValue::List(items) | CqlValue::Set(items) => {
            4 + items.iter().map(value_size).sum::<usize>()
        }
        CqlValue::Map(entries) => {
            4 + entries
                .iter()
                .map(|(k, v)| value_size(k) + value_size(v))
                .sum::<usize>()
        }
        CqlValue::UserDefinedType { fields, .. } => fields
            .iter()
            .map(|(_, v)| v.as_ref().map_or(4, value_size))
            .sum(),
        CqlValue::Tuple(items) => items.iter().map(|v| v.as_ref().map_or(4, value_size)).sum(),
        _ => 16,
    }
}

/// The default largest row in a request (`--max-row-bytes`): a larger one is a reject.
pub const MAX_ROW_BYTES: usize = 16 * 1024 * 1024;

/// The source key of a converted row, for the rejects file.
pub fn row_key(t: &TargetTable, row: &Row) -> Vec<(String, String)> {
    t.source_key
        .iter()
        .map(|&i| {
            let v = match &row[i] {
                MaybeUnset::Set(v) => show(v),
                MaybeUnset::Unset => "NULL".to_string(),
            };
            (t.columns[i].name.clone(), v)
        })
        .collect()
}

/// Bytes a row takes in a request.
pub fn row_size(row: &Row) -> usize {
    row.iter()
        .map(|v| match v {
            MaybeUnset::Set(v) => value_size(v),
            MaybeUnset::Unset => 4,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::value::{CqlDate, CqlTimestamp};

    #[test]
    fn values_read_like_their_sql() {
        assert_eq!(
            show(&CqlValue::Timestamp(CqlTimestamp(-1))),
            "1969-12-31 23:59:59.999Z"
        );
        assert_eq!(show(&CqlValue::Date(CqlDate(1 << 31))), "1970-01-01");
        assert_eq!(show(&CqlValue::Text("é\"".into())), "\"é\\\"\"");
        let long = show(&CqlValue::Text("x".repeat(1000)));
        assert!(long.contains("(1002 bytes, fnv64 "), "{long}");
        assert_eq!(show_opt(None), "NULL");
        assert_eq!(value_size(&CqlValue::Text("abc".into())), 7);
    }
}
