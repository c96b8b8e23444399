//! Timestamps cut to milliseconds. CQL's `timestamp` keeps milliseconds; a Postgres
//! `timestamp`/`timestamptz` keeps microseconds. A key column keeps them (it is encoded as epoch
//! microseconds, or collapsed rows would follow); any other column stored as a CQL `timestamp`
//! reads back cut to the millisecond. That is the usual choice, and verify compares such
//! columns at milliseconds, so it must be stated, never silent: each table that cuts a column
//! gets a `timestamp_millis` warning naming the columns.

use remodel_model::{CqlType, Design, Schema, Warning};

/// Adds the `timestamp_millis` warning to every table holding a sub-millisecond source
/// timestamp as a CQL `timestamp`, as a column or as a field of the embedded rows it holds.
pub fn apply(design: &mut Design, schema: &Schema) {
    let sub_ms = |table: &str, column: &str| {
        schema
            .table(table)
            .and_then(|t| t.column(column))
            .is_some_and(|c| remodel_model::sub_ms_timestamp(&c.sql_type))
    };
    let Design { tables, types, .. } = design;
    for t in tables {
        let mut cut = Vec::new();
        for c in &t.columns {
            if let Some(src) = &c.source {
                if c.cql_type == CqlType::TIMESTAMP
                    && c.encoding.is_none()
                    && sub_ms(&src.table, &src.column)
                {
                    cut.push(format!("{} ({src})", c.name));
                }
            }
            if let Some(child) = &c.embeds {
                let named = c.cql_type.user_types();
                for u in types.iter().filter(|u| named.contains(&u.name.as_str())) {
                    for (field, _) in u.fields.iter().filter(|(_, ft)| *ft == CqlType::TIMESTAMP) {
                        if sub_ms(child, field) {
                            cut.push(format!("{}.{field} ({child}.{field})", c.name));
                        }
                    }
                }
            }
        }
        if cut.is_empty() {
            continue;
        }
        t.warnings.push(Warning {
            code: "timestamp_millis".into(),
            message: format!(
                "{} keep{} microseconds in Postgres, milliseconds here (CQL timestamp): read back cut to the millisecond, and compared so by verify and replay; a bigint of epoch microseconds would keep them, as key columns are kept",
                cut.join(", "),
                if cut.len() == 1 { "s" } else { "" }
            ),
        });
    }
}
