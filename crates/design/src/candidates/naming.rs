//! Names of target tables and columns: `<entity>_by_<key>`, bucket columns.

use remodel_model::{Bucket, Table};

/// Cassandra's limit on table names (longer names are rejected by `CREATE TABLE`).
pub const MAX_TABLE_NAME: usize = 48;

/// The singular of a table name, for column names such as `trip_date` (`trips` → `trip`).
pub fn singular(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    if let Some(stem) = n.strip_suffix("ies") {
        if !stem.is_empty() {
            return format!("{stem}y");
        }
    }
    for suffix in ["sses", "shes", "ches", "xes"] {
        if n.ends_with(suffix) {
            return n[..n.len() - 2].to_string();
        }
    }
    if n.ends_with('s') && !n.ends_with("ss") && !n.ends_with("us") && n.len() > 1 {
        return n[..n.len() - 1].to_string();
    }
    n
}

/// The prefix shared by all of a table's columns (`c_` in TPC-C's `customer`), if any.
pub fn column_prefix(table: &Table) -> Option<String> {
    let first = table.columns.first()?.name.to_ascii_lowercase();
    let idx = first.find('_')?;
    let prefix = &first[..=idx];
    let all = table.columns.len() > 1
        && table
            .columns
            .iter()
            .all(|c| c.name.to_ascii_lowercase().starts_with(prefix));
    all.then(|| prefix.to_string())
}

/// The part of a table name that stands for one key column (`driver_id` → `driver`, `c_w_id` → `w_id`).
pub fn key_word(column: &str, prefix: Option<&str>) -> String {
    let mut c = column.to_ascii_lowercase();
    if let Some(p) = prefix {
        if let Some(rest) = c.strip_prefix(p) {
            if !rest.is_empty() {
                c = rest.to_string();
            }
        }
    }
    if let Some(stem) = c.strip_suffix("_id") {
        if stem.len() > 2 {
            return stem.to_string();
        }
    }
    c
}

/// The word a bucket adds to names (`day` → `date`, as in `trips_by_city_date`).
pub fn bucket_word(bucket: Bucket) -> &'static str {
    match bucket {
        Bucket::Hour => "hour",
        Bucket::Day => "date",
        Bucket::Month => "month",
    }
}

/// Lower-case, `[a-z0-9_]` only, so a generated name never needs quoting.
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("t_{out}")
    } else {
        out
    }
}

/// Shortens a name to Cassandra's limit, keeping it unique with a short hash of the full name.
pub fn fit_length(name: &str) -> String {
    if name.len() <= MAX_TABLE_NAME {
        return name.to_string();
    }
    let hash = remodel_model::text::fnv1a64(name.as_bytes());
    // Names are sanitized to ASCII, but cut on a character boundary all the same.
    let mut keep = MAX_TABLE_NAME - 7;
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    let mut cut = name[..keep].to_string();
    while cut.ends_with('_') {
        cut.pop();
    }
    format!("{cut}_{:06x}", hash & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singulars() {
        assert_eq!(singular("trips"), "trip");
        assert_eq!(singular("cities"), "city");
        assert_eq!(singular("address"), "address");
        assert_eq!(singular("item"), "item");
        assert_eq!(singular("boxes"), "box");
    }

    #[test]
    fn key_words() {
        assert_eq!(key_word("driver_id", None), "driver");
        assert_eq!(key_word("c_w_id", Some("c_")), "w_id");
        assert_eq!(key_word("city", None), "city");
    }

    #[test]
    fn long_names_fit() {
        let long = "a".repeat(80);
        let short = fit_length(&long);
        assert!(short.len() <= MAX_TABLE_NAME);
        assert_ne!(fit_length(&"b".repeat(80)), short);
        let wide = fit_length(&"é".repeat(40));
        assert!(wide.len() <= MAX_TABLE_NAME, "{wide}");
    }
}
