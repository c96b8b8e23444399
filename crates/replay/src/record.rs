//! A row as replay sees it on the Cassandra side: values named by the source column they hold (a
//! read's steps read different tables whose columns come from one joined SQL row), or by the
//! aggregate CQL computed.

use remodel_model::ColumnRef;
use scylla::value::CqlValue;
use std::collections::BTreeMap;
use std::fmt;

/// What a value of a row stands for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// A source column's value.
    Col(ColumnRef),
    /// An aggregate (`count(*)` has no column).
    Agg {
        /// `count`, `sum`, `min`, `max`, `avg`.
        function: String,
        /// Its argument.
        column: Option<ColumnRef>,
        /// `count(DISTINCT …)`.
        distinct: bool,
    },
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Col(c) => write!(f, "{c}"),
            Field::Agg {
                function,
                column,
                distinct,
            } => {
                let arg = column.as_ref().map_or("*".to_string(), |c| c.to_string());
                let d = if *distinct { "DISTINCT " } else { "" };
                write!(f, "{function}({d}{arg})")
            }
        }
    }
}

/// One row: each field's value (`None` is NULL).
pub type Record = BTreeMap<Field, Option<CqlValue>>;
