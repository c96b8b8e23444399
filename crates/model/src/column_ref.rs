//! A column of a table of the schema, as every stage names one.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A column of a table of the schema.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ColumnRef {
    /// Table name (as in the schema).
    pub table: String,
    /// Column name.
    pub column: String,
}

impl ColumnRef {
    /// A column reference from its parts.
    pub fn new(table: impl Into<String>, column: impl Into<String>) -> Self {
        ColumnRef {
            table: table.into(),
            column: column.into(),
        }
    }
}

impl fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}
