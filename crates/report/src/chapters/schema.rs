//! Source schema: a Mermaid entity-relationship diagram and one table per entity, with declared
//! and inferred foreign keys told apart.

use super::{Ctx, SCHEMA};
use crate::book::Book;
use crate::md;
use remodel_model::{Column, FkOrigin, ForeignKey, IndexKey, Schema, Table};
use std::fmt::Write;

/// Renders `source-schema.md`.
pub(super) fn render(ctx: &Ctx, book: &mut Book) {
    let schema = &ctx.plan.schema;
    let mut s = String::from("# Source schema\n\n");
    let declared = schema
        .foreign_keys()
        .filter(|(_, fk)| fk.origin == FkOrigin::Declared)
        .count();
    let inferred = schema.foreign_keys().count() - declared;
    let _ = writeln!(
        s,
        "{} tables, {declared} declared foreign keys and {inferred} inferred from the workload or \
         from column names. In the diagram a solid line is a declared foreign key, a dashed line \
         an inferred one.\n",
        schema.tables.len()
    );
    s.push_str(&md::block("mermaid", &er_diagram(schema)));
    s.push('\n');
    for t in &schema.tables {
        s.push_str(&entity(t));
    }
    if !schema.enums.is_empty() {
        s.push_str("## Enum types\n\n");
        let rows: Vec<Vec<String>> = schema
            .enums
            .iter()
            .map(|e| vec![md::code(&e.name), md::cell(&e.values.join(", "))])
            .collect();
        s.push_str(&md::table(&["type", "labels"], &rows));
    }
    book.page(SCHEMA, "Source schema", 0, s);
}

/// A Mermaid identifier: letters, digits and `_` only (Mermaid's ER grammar is strict).
fn ident(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() {
        "x".into()
    } else if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("t_{out}")
    } else {
        out
    }
}

/// A type for the diagram: without its modifiers (`numeric(3,2)` → `numeric`; the entity's table
/// below the diagram has the full type), `[]` kept as Mermaid allows it.
fn type_ident(sql_type: &str) -> String {
    let mut base = String::new();
    let mut depth = 0;
    for c in sql_type.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => base.push(c),
            _ => {}
        }
    }
    let array = base.contains("[]");
    let mut t = ident(&base.replace("[]", ""));
    if array {
        t.push_str("[]");
    }
    t
}

/// The `erDiagram`: every table with its columns (PK/FK/UK marked), every foreign key as a line.
fn er_diagram(schema: &Schema) -> String {
    let mut s = String::from("erDiagram\n");
    for t in &schema.tables {
        let _ = writeln!(s, "    {} {{", ident(&t.qualified_name()));
        for c in &t.columns {
            let mut keys = Vec::new();
            if t.primary_key.contains(&c.name) {
                keys.push("PK");
            }
            if t.foreign_keys.iter().any(|fk| fk.columns.contains(&c.name)) {
                keys.push("FK");
            }
            if t.unique_keys.iter().any(|u| u.columns.contains(&c.name)) {
                keys.push("UK");
            }
            let _ = write!(s, "        {} {}", type_ident(&c.sql_type), ident(&c.name));
            if !keys.is_empty() {
                let _ = write!(s, " {}", keys.join(", "));
            }
            s.push('\n');
        }
        s.push_str("    }\n");
    }
    for (t, fk) in schema.foreign_keys() {
        let parent = schema
            .table(&fk.ref_table)
            .map(Table::qualified_name)
            .unwrap_or_else(|| fk.ref_table.clone());
        let optional = fk
            .columns
            .iter()
            .any(|c| t.column(c).is_some_and(|c| c.nullable));
        let one_to_one = t.is_unique_on(&fk.columns);
        let line = if fk.origin == FkOrigin::Declared {
            "--"
        } else {
            ".."
        };
        let _ = writeln!(
            s,
            "    {} {}{line}{} {} : \"{}\"",
            ident(&parent),
            if optional { "|o" } else { "||" },
            if one_to_one { "o|" } else { "o{" },
            ident(&t.qualified_name()),
            fk.columns.join(", ").replace('"', "'")
        );
    }
    s
}

/// One entity: its columns with keys, then its foreign keys and indexes.
fn entity(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}",
        md::target(&format!("table-{}", t.qualified_name()))
    );
    let _ = writeln!(s, "## {}\n", md::text(&t.qualified_name()));
    if let Some(c) = &t.comment {
        let _ = writeln!(s, "{}\n", md::text(c));
    }
    if let Some(l) = &t.location {
        let _ = writeln!(
            s,
            "Defined at {}.\n",
            md::code(&format!("{}:{}", l.file, l.line))
        );
    }
    let rows: Vec<Vec<String>> = t.columns.iter().map(|c| column_row(t, c)).collect();
    s.push_str(&md::table(
        &["column", "type", "null", "default", "key"],
        &rows,
    ));
    s.push('\n');
    s.push_str(&foreign_keys(t));
    s.push_str(&indexes(t));
    s
}

/// A column's row: name, type, nullability, default and its part in the keys.
fn column_row(t: &Table, c: &Column) -> Vec<String> {
    let named = |k: &String| *k == c.name;
    let mut key = Vec::new();
    if let Some(i) = t.primary_key.iter().position(named) {
        key.push(if t.primary_key.len() > 1 {
            format!("PK ({})", i + 1)
        } else {
            "PK".into()
        });
    }
    for fk in t
        .foreign_keys
        .iter()
        .filter(|fk| fk.columns.iter().any(named))
    {
        key.push(format!("FK → {}", fk_target(fk)));
    }
    if t.unique_keys.iter().any(|u| u.columns.iter().any(named)) {
        key.push("unique".into());
    }
    let mut ty = md::code(&c.sql_type);
    if c.identity.is_some() {
        ty.push_str(" (generated id)");
    }
    if c.generated.is_some() {
        ty.push_str(" (computed)");
    }
    vec![
        md::cell(&c.name),
        ty,
        if c.nullable { "yes" } else { "no" }.into(),
        c.default.as_deref().map(md::code).unwrap_or_default(),
        md::cell(&key.join("; ")),
    ]
}

/// The foreign keys, declared (where) or inferred (from what).
fn foreign_keys(t: &Table) -> String {
    if t.foreign_keys.is_empty() {
        return String::new();
    }
    let mut s = String::from("Foreign keys:\n\n");
    for fk in &t.foreign_keys {
        let (what, evidence) = match &fk.origin {
            FkOrigin::Declared => (
                "declared",
                fk.location
                    .as_ref()
                    .map(|l| format!(" at {}", md::code(&format!("{}:{}", l.file, l.line))))
                    .unwrap_or_default(),
            ),
            FkOrigin::Inferred { evidence } => {
                ("**inferred**", format!(": {}", md::text(evidence)))
            }
        };
        let _ = writeln!(
            s,
            "- ({}) → {}: {what}{evidence}",
            md::text(&fk.columns.join(", ")),
            md::text(&fk_target(fk))
        );
    }
    s.push('\n');
    s
}

fn indexes(t: &Table) -> String {
    if t.indexes.is_empty() {
        return String::new();
    }
    let idx: Vec<String> = t
        .indexes
        .iter()
        .map(|i| {
            let keys: Vec<String> = i
                .keys
                .iter()
                .map(|k| match k {
                    IndexKey::Column { name, desc } => {
                        format!("{name}{}", if *desc { " DESC" } else { "" })
                    }
                    IndexKey::Expression { sql } => sql.clone(),
                })
                .collect();
            format!(
                "{}{} ({})",
                md::code(&i.name),
                if i.unique { " unique" } else { "" },
                md::text(&keys.join(", "))
            )
        })
        .collect();
    format!("Indexes: {}.\n\n", idx.join("; "))
}

fn fk_target(fk: &ForeignKey) -> String {
    format!("{}({})", fk.ref_table, fk.ref_columns.join(", "))
}

#[cfg(test)]
mod tests {
    use super::{ident, type_ident};

    #[test]
    fn mermaid_identifiers() {
        assert_eq!(type_ident("numeric(3,2)"), "numeric");
        assert_eq!(type_ident("text[]"), "text[]");
        assert_eq!(type_ident("numeric(10,2)[]"), "numeric[]");
        assert_eq!(type_ident("character varying(255)"), "character_varying");
        assert_eq!(ident("public.users"), "public_users");
        assert_eq!(ident("2fa"), "t_2fa");
    }
}
