//! Postgres type names as schemas write them (`Column::sql_type`), classified in one place: the
//! integer types by any of their names (`int4`, `integer`, `serial` …), the character types,
//! and a name without its modifiers. Every stage that asks "is this an integer column?" asks here.

/// The name without its modifiers, trimmed and in lower case: `numeric(10,2)` → `numeric`,
/// `Character Varying(20)` → `character varying` (an array keeps its `[]`).
pub fn base_name(sql_type: &str) -> String {
    let t = sql_type.to_ascii_lowercase();
    t.split('(').next().unwrap_or(&t).trim().to_string()
}

/// The width in bytes (2, 4 or 8) of an integer type named by `base` (a [`base_name`]): the SQL
/// names, Postgres' internal ones and the `serial` types, which are integers with a sequence.
pub fn integer_width(base: &str) -> Option<u8> {
    match base {
        "smallint" | "int2" | "smallserial" | "serial2" => Some(2),
        "integer" | "int" | "int4" | "serial" | "serial4" => Some(4),
        "bigint" | "int8" | "bigserial" | "serial8" => Some(8),
        _ => None,
    }
}

/// The width of the integer a `serial` type (`serial`, `serial4`, `bigserial` …, also
/// `pg_catalog.`-qualified) stands for; `None` for any other type.
pub fn serial_width(sql_type: &str) -> Option<u8> {
    match sql_type.strip_prefix("pg_catalog.").unwrap_or(sql_type) {
        "smallserial" | "serial2" => Some(2),
        "serial" | "serial4" => Some(4),
        "bigserial" | "serial8" => Some(8),
        _ => None,
    }
}

/// The SQL name of the integer type of `width` bytes (`smallint`, `integer`, `bigint`), as a
/// schema states the type of a `serial` column.
pub fn integer_type(width: u8) -> &'static str {
    match width {
        2 => "smallint",
        8 => "bigint",
        _ => "integer",
    }
}

/// True for a character type named by `base` (a [`base_name`]): `text`, `varchar`/`character
/// varying`, `char`/`character`/`bpchar`, `citext`.
pub fn is_text(base: &str) -> bool {
    matches!(
        base,
        "text" | "varchar" | "character varying" | "char" | "character" | "bpchar" | "citext"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_classify() {
        assert_eq!(base_name(" Numeric(10, 2) "), "numeric");
        assert_eq!(base_name("text[]"), "text[]");
        for (name, w) in [("int2", 2), ("serial", 4), ("integer", 4), ("bigserial", 8)] {
            assert_eq!(integer_width(name), Some(w), "{name}");
        }
        assert_eq!(integer_width("numeric"), None);
        assert_eq!(serial_width("pg_catalog.serial8"), Some(8));
        assert_eq!(serial_width("int4"), None);
        assert!(is_text("character varying") && is_text("citext") && !is_text("name"));
    }
}
