//! Text orders. Postgres orders text by the column's collation — a libc locale
//! (`en_US.UTF-8`) or an ICU one orders `adam, Banana, Émile, zoe` — and an enum by the order its
//! labels were declared in; Cassandra orders text by its UTF-8 bytes (`Banana, adam, zoe,
//! Émile`), as does a client sorting strings. Only the `C`/`POSIX` family agrees
//! ([`remodel_model::bytewise_collation`]). A read whose `ORDER BY` takes a text or enum column
//! whose order differs gets its rows in another order, silently: each table serving one gets a
//! `collation_order` warning naming the reads, the columns, their collation and the fix; where
//! the database's default collation is not known (a schema file), a note says so once.

use remodel_model::{bytewise_collation, Design, Diagnostic, Schema, Severity, Warning, Workload};
use std::collections::BTreeMap;

/// How a column's values are ordered by Postgres, when not by their bytes.
enum Order {
    /// By this collation.
    Collation(String),
    /// By the enum's declaration order (its labels, in that order).
    Enum(Vec<String>),
    /// By the database's default collation, which is not known.
    Unknown,
}

/// The order Postgres gives text column `c` of `table`, when it may not be the bytes' (`None`
/// for a column that is not text, or text under a bytewise collation).
fn order_of(schema: &Schema, table: &str, column: &str) -> Option<Order> {
    let col = schema.table(table)?.column(column)?;
    let ty = col.sql_type.to_ascii_lowercase();
    let base = ty.split('(').next().unwrap_or_default().trim();
    let bare = base.rsplit('.').next().unwrap_or(base);
    if let Some(e) = schema.enums.iter().find(|e| {
        e.name
            .rsplit('.')
            .next()
            .unwrap_or(&e.name)
            .eq_ignore_ascii_case(bare)
    }) {
        // Labels declared in their bytes' order sort the same either way.
        let sorted = e
            .values
            .windows(2)
            .all(|w| w[0].as_bytes() <= w[1].as_bytes());
        return (!sorted).then(|| Order::Enum(e.values.clone()));
    }
    if !crate::candidates::type_mapping::is_known_text(bare) {
        return None;
    }
    match col.collation.as_ref().or(schema.collation.as_ref()) {
        Some(c) if bytewise_collation(c) => None,
        Some(c) => Some(Order::Collation(c.clone())),
        None => Some(Order::Unknown),
    }
}

/// What differs for a text column under collation `name`, and the fix.
fn collation_text(name: &str) -> String {
    format!(
        "which Postgres orders by collation {name} (adam, Banana, Émile, zoe) and Cassandra, like \
         a client's string sort, by UTF-8 bytes (Banana, adam, zoe, Émile): the rows come in \
         another order. Declare the column COLLATE \"C\" in Postgres if the bytes' order is \
         acceptable, or sort the rows in the application with the same collation (ICU)"
    )
}

/// What differs for an enum column declared with `labels`, and the fix.
fn enum_text(labels: &[String]) -> String {
    let mut bytes = labels.to_vec();
    bytes.sort();
    format!(
        "which Postgres orders as its enum's labels were declared ({}) and Cassandra by the \
         labels' bytes ({}): the rows come in another order. Keep the label's position (a \
         smallint) beside it and order by that, or sort the rows in the application by it",
        labels.join(", "),
        bytes.join(", ")
    )
}

/// Adds the `collation_order` warnings; returns the note on an unknown default collation.
pub fn apply(design: &mut Design, schema: &Schema, workload: &Workload) -> Vec<Diagnostic> {
    // table → (column, what differs and the fix) → reads
    let mut found: BTreeMap<String, BTreeMap<(String, String), Vec<String>>> = BTreeMap::new();
    let mut unknown: Vec<String> = Vec::new();
    for q in &design.queries {
        let (Some(table), Some(p)) = (&q.table, workload.pattern(&q.pattern)) else {
            continue;
        };
        for o in &p.analysis.order_by {
            let c = &o.column;
            match order_of(schema, &c.table, &c.column) {
                Some(Order::Collation(name)) => found
                    .entry(table.clone())
                    .or_default()
                    .entry((c.to_string(), collation_text(&name)))
                    .or_default()
                    .push(q.pattern.clone()),
                Some(Order::Enum(labels)) => found
                    .entry(table.clone())
                    .or_default()
                    .entry((c.to_string(), enum_text(&labels)))
                    .or_default()
                    .push(q.pattern.clone()),
                Some(Order::Unknown) => unknown.push(format!("{} ({c})", q.pattern)),
                None => {}
            }
        }
    }
    for t in &mut design.tables {
        let Some(cols) = found.get(&t.name) else {
            continue;
        };
        for ((column, why), reads) in cols {
            t.warnings.push(Warning {
                code: "collation_order".into(),
                message: format!("{} order by {column}, {why}", reads.join(", ")),
            });
        }
    }
    if unknown.is_empty() {
        return Vec::new();
    }
    unknown.sort();
    unknown.dedup();
    vec![Diagnostic {
        severity: Severity::Note,
        location: None,
        message: format!(
            "ORDER BY on text ({}) keeps Postgres' order in Cassandra only when the collation \
             orders by bytes (C, POSIX, C.UTF-8): the database's default collation is not known \
             from schema files (plan with --source to check it)",
            unknown.join(", ")
        ),
    }]
}
