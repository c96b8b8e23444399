//! Builders for schemas and patterns written in code (for cases the corpora do not cover).
#![allow(dead_code)]

pub mod neutral_cases;
pub mod rewrite_cases;

use remodel_model::{
    AccessPattern, Column, FkOrigin, ForeignKey, Schema, StatementKind, Table, Workload,
};

/// A table from `(name, type)` columns, a primary key and `(columns, ref_table, ref_columns)` FKs.
pub fn table(
    name: &str,
    cols: &[(&str, &str)],
    pk: &[&str],
    fks: &[(&[&str], &str, &[&str])],
) -> Table {
    Table {
        name: name.into(),
        columns: cols
            .iter()
            .map(|(n, t)| Column {
                name: (*n).into(),
                sql_type: (*t).into(),
                nullable: !pk.contains(n),
                ..Default::default()
            })
            .collect(),
        primary_key: pk.iter().map(|s| (*s).into()).collect(),
        foreign_keys: fks
            .iter()
            .map(|(c, r, rc)| ForeignKey {
                name: None,
                columns: c.iter().map(|s| (*s).into()).collect(),
                ref_table: (*r).into(),
                ref_columns: rc.iter().map(|s| (*s).into()).collect(),
                origin: FkOrigin::Declared,
                location: None,
            })
            .collect(),
        ..Default::default()
    }
}

/// A pattern from normalized SQL, an optional example and calls.
pub fn pattern(id: &str, sql: &str, example: Option<&str>, calls: u64) -> AccessPattern {
    let head = sql.split_whitespace().next().unwrap_or("").to_lowercase();
    let kind = match head.as_str() {
        "insert" => StatementKind::Insert,
        "update" => StatementKind::Update,
        "delete" => StatementKind::Delete,
        _ => StatementKind::Select,
    };
    AccessPattern {
        example: example.map(Into::into),
        ..AccessPattern::new(id, kind, sql, calls)
    }
}

/// A workload of patterns.
pub fn workload(patterns: Vec<AccessPattern>) -> Workload {
    Workload {
        patterns,
        ..Default::default()
    }
}

/// The rideshare schema of `examples/rideshare/schema.sql`, written in code.
pub fn rideshare_schema(with_fks: bool) -> Schema {
    let none: &[(&[&str], &str, &[&str])] = &[];
    Schema {
        tables: vec![
            table(
                "cities",
                &[("city", "text"), ("country", "text"), ("timezone", "text")],
                &["city"],
                none,
            ),
            table(
                "drivers",
                &[
                    ("driver_id", "text"),
                    ("full_name", "text"),
                    ("home_city", "text"),
                    ("rating", "numeric(3,2)"),
                    ("joined_at", "timestamptz"),
                ],
                &["driver_id"],
                if with_fks {
                    &[(&["home_city"], "cities", &["city"])]
                } else {
                    none
                },
            ),
            table(
                "trips",
                &[
                    ("trip_id", "uuid"),
                    ("driver_id", "text"),
                    ("city", "text"),
                    ("started_at", "timestamptz"),
                    ("distance_km", "numeric(6,2)"),
                    ("fare_usd", "numeric(8,2)"),
                    ("status", "text"),
                ],
                &["trip_id"],
                if with_fks {
                    &[
                        (&["driver_id"], "drivers", &["driver_id"]),
                        (&["city"], "cities", &["city"]),
                    ]
                } else {
                    none
                },
            ),
        ],
        ..Default::default()
    }
}

/// The repository root (tests run in the crate folder).
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Loads DDL and workload files of the repository with the real front end and analyzes them.
pub fn load_and_analyze(
    schema: &[&str],
    queries: &[&str],
    format: remodel_sql::workload::Format,
) -> remodel_model::Analysis {
    let r = root();
    let schema_paths: Vec<_> = schema.iter().map(|p| r.join(p)).collect();
    let query_paths: Vec<_> = queries.iter().map(|p| r.join(p)).collect();
    let ddl = remodel_sql::ddl::load_files(&schema_paths).expect("schema files readable");
    let load =
        remodel_sql::workload::read_files(&query_paths, format).expect("query files readable");
    remodel_analyze::analyze(
        &ddl.schema,
        &load.workload,
        &remodel_analyze::AnalyzeConfig::default(),
    )
}

/// The first pattern whose normalized SQL contains every needle (case-insensitive).
pub fn find<'a>(a: &'a remodel_model::Analysis, needles: &[&str]) -> &'a AccessPattern {
    a.workload
        .patterns
        .iter()
        .find(|p| {
            needles
                .iter()
                .all(|n| p.sql.to_lowercase().contains(&n.to_lowercase()))
        })
        .unwrap_or_else(|| panic!("no pattern contains {needles:?}"))
}
