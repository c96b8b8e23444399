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
    /// An output expression of the SQL (computed by the client from the columns read).
    Expr(String),
    /// The generated id of a row of a source table without a key (the plan's `row_id`).
    RowId(String),
    /// A collection column of embedded child rows, by its name in the table read.
    Embedded(String),
}

/// Pairs of columns a pattern's joins make equal in every row (`a.x = b.y`): either stands for
/// the other.
pub fn join_equalities(p: &remodel_model::AccessPattern) -> Vec<(Field, Field)> {
    p.analysis
        .join_path
        .iter()
        .flat_map(|j| {
            j.left_columns.iter().zip(&j.right_columns).map(|(l, r)| {
                (
                    Field::Col(ColumnRef::new(&j.left_table, l)),
                    Field::Col(ColumnRef::new(&j.right_table, r)),
                )
            })
        })
        .collect()
}

/// `f`, or a field its pattern's joins make equal to it, whichever `has` accepts first.
pub fn resolve(f: &Field, same: &[(Field, Field)], has: impl Fn(&Field) -> bool) -> Option<Field> {
    if has(f) {
        return Some(f.clone());
    }
    // The fields the joins make equal to `x`.
    let equal = |x: Field| {
        same.iter().filter_map(move |(a, b)| {
            if *a == x {
                Some(b.clone())
            } else if *b == x {
                Some(a.clone())
            } else {
                None
            }
        })
    };
    match f {
        // An aggregate over a column stands for the same aggregate over a column the joins
        // make equal to it (`count(DISTINCT s_i_id)` where `s_i_id = ol_i_id`).
        Field::Agg {
            function,
            column: Some(c),
            distinct,
        } => equal(Field::Col(c.clone()))
            .filter_map(|e| match e {
                Field::Col(c) => Some(Field::Agg {
                    function: function.clone(),
                    column: Some(c),
                    distinct: *distinct,
                }),
                _ => None,
            })
            .find(|agg| has(agg)),
        _ => equal(f.clone()).find(|x| has(x)),
    }
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
            Field::Expr(sql) => write!(f, "{sql}"),
            Field::RowId(table) => write!(f, "row_id({table})"),
            Field::Embedded(column) => write!(f, "{column}"),
        }
    }
}

/// One row: each field's value (`None` is NULL).
pub type Record = BTreeMap<Field, Option<CqlValue>>;
