//! The expression cases of `fixtures/analyze/neutral/` (`neutral.rs` prints what the converter
//! makes of them, `neutral_pg_live.rs` checks them against Postgres).

use super::root;
use remodel_model::{ColumnRef, Expr, RowRef, ScalarType, Schema};
use remodel_sql::typed_expr::schema::column_ty;
use remodel_sql::typed_expr::{ColumnInfo, Columns, Converter};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::BTreeMap;

/// Where the cases, the schema and the rows live.
pub const DIR: &str = "fixtures/analyze/neutral";

/// One expression of `cases.txt`.
#[derive(Debug, Clone)]
pub struct Case {
    /// Line in `cases.txt`.
    pub line: usize,
    /// The expression as written.
    pub sql: String,
}

/// The cases of `cases.txt`, in order.
pub fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join(DIR).join("cases.txt")).expect("cases.txt");
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(line, l)| Case {
            line,
            sql: l.to_string(),
        })
        .collect()
}

/// The schema of `schema.sql` (table `v`).
pub fn schema() -> Schema {
    remodel_sql::ddl::load_files(&[root().join(DIR).join("schema.sql")])
        .expect("schema.sql readable")
        .schema
}

/// A file of the fixture, as text.
pub fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(DIR).join(name)).expect("fixture file readable")
}

/// Resolves `c` and `v.c` to the row at hand, `excluded.c` to an upsert's proposed row and
/// `s.c` to the row of a read step named `s`.
pub struct TableV<'s> {
    pub schema: &'s Schema,
}

impl Columns for TableV<'_> {
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String> {
        let (row, name) = match path {
            [c] => (RowRef::This, c),
            [q, c] if q == "v" => (RowRef::This, c),
            [q, c] if q == "excluded" => (RowRef::Excluded, c),
            [q, c] if q == "s" => (RowRef::Step { name: q.clone() }, c),
            _ => return Err(format!("{} is not a column of v", path.join("."))),
        };
        let t = self.schema.table("v").expect("table v");
        let c = t
            .column(name)
            .ok_or_else(|| format!("column {name} is not in v"))?;
        Ok(ColumnInfo {
            column: ColumnRef::new("v", c.name.clone()),
            row,
            ty: column_ty(self.schema, &c.sql_type),
        })
    }
}

/// What the converter makes of one case in a plan whose zone is `zone`: the expression (or
/// why not) and the types its parameters took.
pub fn convert(
    schema: &Schema,
    c: &Case,
    zone: &str,
) -> (Result<Expr, String>, BTreeMap<u32, ScalarType>) {
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&c.sql)
        .and_then(|mut p| p.parse_expr());
    let mut conv = Converter::new(Some(zone));
    let e = match parsed {
        Ok(e) => conv.typed_value(&e, &TableV { schema }).map(|(x, _)| x),
        Err(e) => Err(format!("does not parse: {e}")),
    };
    (e, conv.params().clone())
}
