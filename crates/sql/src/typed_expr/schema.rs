//! A schema's `DEFAULT` and generated-column expressions, typed: the same conversion for the
//! DDL front end and for what `catalog` reads from a live database (both hold them as text).

use super::{column_type, ColumnInfo, Columns, Converter, NoColumns, Ty};
use remodel_model::{ColumnRef, RowRef, Schema, Table};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// A column's type as the converter knows it: a scalar type, an enum of the schema, or why
/// neither.
pub fn column_ty(schema: &Schema, sql_type: &str) -> Result<Ty, String> {
    column_type(sql_type).map(Ty::Scalar).or_else(|why| {
        let bare = sql_type.trim().trim_matches('"');
        let is_enum = schema
            .enums
            .iter()
            .any(|e| e.name == bare || e.name.rsplit('.').next() == Some(bare));
        if is_enum {
            Ok(Ty::Enum)
        } else {
            Err(why)
        }
    })
}

/// The columns of one table, by bare name (a generated column reads its own row).
struct RowOf<'a> {
    schema: &'a Schema,
    table: &'a Table,
}

impl Columns for RowOf<'_> {
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String> {
        let [name] = path else {
            return Err(format!("{} is not a column of the row", path.join(".")));
        };
        let c = self
            .table
            .column(name)
            .ok_or_else(|| format!("{name} is not a column of {}", self.table.key()))?;
        Ok(ColumnInfo {
            column: ColumnRef::new(self.table.key(), c.name.clone()),
            row: RowRef::This,
            ty: column_ty(self.schema, &c.sql_type),
        })
    }
}

/// Fills every column's `default_expr` and `generated_expr` from its `default` and
/// `generated` text; returns why each one that has text could not be typed (`table.column:
/// reason`). A zone-less `timestamptz` constant stays a cast (the plan's zone is not known yet).
pub fn fill_schema(schema: &mut Schema) -> Vec<String> {
    let mut typed = Vec::new();
    let mut untyped = Vec::new();
    for (ti, t) in schema.tables.iter().enumerate() {
        for (ci, c) in t.columns.iter().enumerate() {
            let ty = column_ty(schema, &c.sql_type);
            let mut conv = Converter::new(None);
            let default = c
                .default
                .as_deref()
                .map(|d| parse(d).and_then(|e| conv.assigned(&e, &ty, &NoColumns)));
            let row = RowOf { schema, table: t };
            let generated = c
                .generated
                .as_deref()
                .map(|g| parse(g).and_then(|e| conv.assigned(&e, &ty, &row)));
            for (what, r) in [("DEFAULT", &default), ("GENERATED", &generated)] {
                if let Some(Err(why)) = r {
                    untyped.push(format!("{}.{} {what}: {why}", t.key(), c.name));
                }
            }
            typed.push((
                ti,
                ci,
                default.and_then(Result::ok),
                generated.and_then(Result::ok),
            ));
        }
    }
    for (ti, ci, d, g) in typed {
        let c = &mut schema.tables[ti].columns[ci];
        c.default_expr = d;
        c.generated_expr = g;
    }
    untyped
}

/// Parses one expression (a default's text) with the Postgres dialect.
fn parse(text: &str) -> Result<sqlparser::ast::Expr, String> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| {
            let e = p.parse_expr()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(e)
        })
        .map_err(|e| format!("{text} does not parse ({e})"))
}
