//! Postgres → CQL type mapping, the byte widths used for sizing when no statistics are given,
//! and the `bigint` form of a key column type that can store NULL beside its values.

use remodel_model::{CqlType, EncodedForm, NativeType as N, Schema};

/// The CQL type for a Postgres column type (as the DDL front end normalises it, lower case).
pub fn cql_type(sql_type: &str) -> CqlType {
    let t = sql_type.trim().to_ascii_lowercase();
    if let Some(elem) = t.strip_suffix("[]").or_else(|| t.strip_suffix(" array")) {
        let inner = cql_type(elem);
        return CqlType::List(Box::new(frozen_if_collection(inner)));
    }
    let base = strip_modifier(&t);
    let base = base.trim();
    let bare = base.rsplit('.').next().unwrap_or(base).trim_matches('"');
    // MySQL's unsigned integers need the next wider CQL type to hold every value.
    if let Some(signed) = bare.strip_suffix(" unsigned") {
        return CqlType::Native(match cql_type(signed).native() {
            Some(N::TinyInt | N::SmallInt) => N::Int,
            Some(N::Int) => N::BigInt,
            _ => N::Varint,
        });
    }
    let mapped = match bare {
        "smallint" | "int2" | "smallserial" | "serial2" => N::SmallInt,
        "integer" | "int" | "int4" | "serial" | "serial4" => N::Int,
        "bigint" | "int8" | "bigserial" | "serial8" | "oid" => N::BigInt,
        "numeric" | "decimal" | "money" => N::Decimal,
        "real" | "float4" => N::Float,
        "double precision" | "float8" | "float" => N::Double,
        "timestamp"
        | "timestamptz"
        | "timestamp with time zone"
        | "timestamp without time zone" => N::Timestamp,
        "date" => N::Date,
        // MySQL's datetime: a timestamp without time zone (warned by `mapping_note`).
        "datetime" => N::Timestamp,
        "time" | "timetz" | "time with time zone" | "time without time zone" => N::Time,
        "interval" => N::Duration,
        "uuid" => N::Uuid,
        "boolean" | "bool" => N::Boolean,
        "bytea" => N::Blob,
        "inet" => N::Inet,
        "tinyint" => N::TinyInt,
        // Text types, JSON, enums and unknown types (geometry, ranges, domains) are carried as
        // their text form.
        _ => N::Text,
    };
    CqlType::Native(mapped)
}

/// Why a column's type maps to `text` by default rather than by a rule: a type Postgres does
/// not have (MySQL's `datetime`, `integer unsigned`, Oracle's `varchar2`) or one this mapping
/// does not know (a domain, an extension type). `None` for a mapped type.
pub fn mapping_note(sql_type: &str, schema: &Schema) -> Option<String> {
    let t = sql_type.trim().to_ascii_lowercase();
    let elem = t.trim_end_matches("[]").trim_end_matches(" array");
    let base = strip_modifier(elem);
    let base = base.trim();
    let bare = base.rsplit('.').next().unwrap_or(base).trim_matches('"');
    let foreign = match bare {
        "datetime" => Some("MySQL's `datetime` (Postgres: timestamp)"),
        "mediumint" | "tinytext" | "mediumtext" | "longtext" | "longblob" | "mediumblob"
        | "tinyblob" | "year" => Some("a MySQL type"),
        "varchar2" | "nvarchar2" | "number" | "clob" | "nclob" => Some("an Oracle type"),
        "nvarchar" | "ntext" | "datetime2" | "uniqueidentifier" => Some("a SQL Server type"),
        "double" => Some("MySQL's `double` (Postgres: double precision)"),
        _ if bare.ends_with(" unsigned") || bare.contains(" unsigned") => {
            Some("MySQL's `unsigned` (Postgres has no unsigned integers)")
        }
        _ => None,
    };
    if let Some(what) = foreign {
        return Some(format!(
            "`{sql_type}` is {what}, not a Postgres type: mapped to {}; check the DDL is the Postgres one",
            cql_type(sql_type)
        ));
    }
    let mapped_by_rule = cql_type(elem) != CqlType::TEXT
        || is_known_text(bare)
        || is_enum(bare, schema)
        || matches!(
            bare,
            "json"
                | "jsonb"
                | "xml"
                | "tsvector"
                | "tsquery"
                | "cidr"
                | "macaddr"
                | "macaddr8"
                | "ltree"
                | "name"
        );
    (!mapped_by_rule).then(|| {
        format!("`{sql_type}` has no CQL mapping (a domain or an extension type?): carried as its text form")
    })
}

/// The type without a modifier such as `(3,2)` or `(255)`: `int(10) unsigned` → `int unsigned`.
fn strip_modifier(t: &str) -> String {
    match t.find('(') {
        Some(i) => {
            let tail = t[i..].find(')').map(|j| &t[i + j + 1..]).unwrap_or("");
            format!("{}{}", t[..i].trim_end(), tail)
        }
        None => t.to_string(),
    }
}

/// True for a Postgres text type (bare name, lower case, no modifier).
pub(crate) fn is_known_text(t: &str) -> bool {
    matches!(
        t,
        "text"
            | "varchar"
            | "character varying"
            | "char"
            | "character"
            | "bpchar"
            | "name"
            | "citext"
    )
}

fn is_enum(t: &str, schema: &Schema) -> bool {
    schema.enums.iter().any(|e| {
        e.name
            .rsplit('.')
            .next()
            .unwrap_or(&e.name)
            .eq_ignore_ascii_case(t)
    })
}

/// Number of labels when the type is an enum of the schema (a low-cardinality column).
pub fn enum_labels(sql_type: &str, schema: &Schema) -> Option<usize> {
    let t = sql_type.trim().to_ascii_lowercase();
    let bare = t
        .rsplit('.')
        .next()
        .unwrap_or(&t)
        .trim_matches('"')
        .to_string();
    schema
        .enums
        .iter()
        .find(|e| {
            e.name
                .rsplit('.')
                .next()
                .unwrap_or(&e.name)
                .eq_ignore_ascii_case(&bare)
        })
        .map(|e| e.values.len())
}

/// Collections nested in collections (and collections in keys) must be frozen in CQL.
pub fn frozen_if_collection(t: CqlType) -> CqlType {
    if matches!(t, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)) {
        CqlType::Frozen(Box::new(t))
    } else {
        t
    }
}

/// Declared average width in bytes of a value of a Postgres type, for sizing without statistics.
pub fn default_width(sql_type: &str) -> f64 {
    let t = sql_type.trim().to_ascii_lowercase();
    if t.ends_with("[]") {
        return 64.0;
    }
    let declared_len = t.find('(').and_then(|i| {
        t[i + 1..]
            .split([')', ','])
            .next()
            .and_then(|n| n.trim().parse::<f64>().ok())
    });
    let base = t.split('(').next().unwrap_or(&t).trim().to_string();
    match base.as_str() {
        "smallint" | "int2" | "smallserial" => 2.0,
        "integer" | "int" | "int4" | "serial" | "date" | "real" | "float4" => 4.0,
        "bigint" | "int8" | "bigserial" | "oid" | "double precision" | "float8" | "money" => 8.0,
        "timestamp"
        | "timestamptz"
        | "timestamp with time zone"
        | "timestamp without time zone"
        | "time"
        | "timetz" => 8.0,
        "numeric" | "decimal" => 8.0,
        "uuid" => 16.0,
        "boolean" | "bool" => 1.0,
        "inet" => 8.0,
        "char" | "character" | "bpchar" => declared_len.unwrap_or(1.0),
        "varchar" | "character varying" => declared_len
            .map(|n| (n / 2.0).clamp(1.0, 64.0))
            .unwrap_or(24.0),
        "json" | "jsonb" | "bytea" => 128.0,
        _ => 24.0,
    }
}

/// The bigint form a key column of CQL type `ty` can store NULL beside: microseconds of a
/// timestamp, the integer itself (of a type narrower than bigint), days of a date.
pub(crate) fn null_storing_form(ty: &CqlType) -> Option<EncodedForm> {
    match ty.native()? {
        N::Timestamp => Some(EncodedForm::Micros),
        N::Int | N::SmallInt | N::TinyInt => Some(EncodedForm::Integer),
        N::Date => Some(EncodedForm::Days),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_issue_list() {
        for (pg, cql) in [
            ("int4", "int"),
            ("integer", "int"),
            ("int8", "bigint"),
            ("numeric(3,2)", "decimal"),
            ("text", "text"),
            ("varchar(255)", "text"),
            ("character varying(40)", "text"),
            ("timestamptz", "timestamp"),
            ("timestamp without time zone", "timestamp"),
            ("timestamp(6) with time zone", "timestamp"),
            ("date", "date"),
            ("uuid", "uuid"),
            ("bool", "boolean"),
            ("bytea", "blob"),
            ("jsonb", "text"),
            ("text[]", "list<text>"),
            ("int[][]", "list<frozen<list<int>>>"),
            ("inet", "inet"),
            ("serial", "int"),
            ("double precision", "double"),
            ("public.geometry", "text"),
            ("integer unsigned", "bigint"),
            ("bigint unsigned", "varint"),
            ("datetime", "timestamp"),
        ] {
            assert_eq!(cql_type(pg).to_string(), cql, "{pg}");
        }
    }

    #[test]
    fn foreign_and_unknown_types_are_named() {
        let s = Schema::default();
        for t in [
            "datetime",
            "integer unsigned",
            "int(10) unsigned",
            "varchar2(20)",
            "public.geometry",
        ] {
            assert!(mapping_note(t, &s).is_some(), "{t}");
        }
        for t in [
            "int4",
            "text",
            "jsonb",
            "varchar(20)",
            "timestamptz",
            "text[]",
            "inet",
        ] {
            assert_eq!(mapping_note(t, &s), None, "{t}");
        }
    }
}
