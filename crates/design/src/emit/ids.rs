//! New ids after the cut-over (`design.ids`): every column a write path gives a sequence's next
//! value (`nextval(…)`, a `serial` or identity column) gets the way a writer that reaches only
//! Cassandra, which has no sequence, makes one. A 64-bit integer column takes a time-ordered id
//! the client makes ([`IdStrategy::TIME_ORDERED`]), far above any value a sequence reached; a
//! narrower or non-integer column cannot hold one and is left to the application.

use remodel_model::{
    pgtype, ColumnRef, Design, Expr, Function, IdAllocation, IdStrategy, Literal, Schema,
};
use std::collections::BTreeMap;

/// The way each sequence-fed column of `design`'s write paths gets new values, by column.
pub fn allocate(schema: &Schema, design: &mut Design) {
    let mut found: BTreeMap<ColumnRef, Option<String>> = BTreeMap::new();
    for v in design.writes.iter().flat_map(|w| &w.values) {
        v.value.walk(&mut |e| {
            if let Expr::Call {
                function: Function::Nextval,
                args,
            } = e
            {
                let named = match args.first() {
                    Some(Expr::Literal {
                        value: Literal::Text { value },
                    }) => Some(value.clone()),
                    _ => None,
                };
                let slot = found.entry(v.column.clone()).or_default();
                if slot.is_none() {
                    *slot = named;
                }
            }
        });
    }
    design.ids = found
        .into_iter()
        .map(|(column, named)| {
            let sequence = named.or_else(|| owning_sequence(schema, &column));
            let sql_type = schema
                .table(&column.table)
                .and_then(|t| t.column(&column.column))
                .map(|c| c.sql_type.as_str())
                .unwrap_or_default();
            let (strategy, reason) = strategy(&column, sql_type);
            IdAllocation {
                column,
                sequence,
                strategy,
                reason,
            }
        })
        .collect();
}

/// The sequence `OWNED BY` the column, when the schema declares one.
fn owning_sequence(schema: &Schema, column: &ColumnRef) -> Option<String> {
    let owner = format!("{}.{}", column.table, column.column);
    let s = schema
        .sequences
        .iter()
        .find(|s| s.owned_by.as_deref() == Some(owner.as_str()));
    s.map(|s| s.name.clone())
}

/// The strategy of `column` (of type `sql_type`) and why: time-ordered where its type holds 64
/// bits.
pub fn strategy(column: &ColumnRef, sql_type: &str) -> (IdStrategy, String) {
    match pgtype::integer_width(&pgtype::base_name(sql_type)) {
        Some(8) => (
            IdStrategy::TIME_ORDERED,
            format!(
                "{column} is a 64-bit integer: a writer makes a time-ordered id itself, above every value the sequence reached before the cut-over"
            ),
        ),
        Some(w) => (
            IdStrategy::Application,
            format!(
                "{column} is a {}-bit integer, too narrow for a time-ordered id: the application allocates new values (keeps the Postgres sequence through the cut-over, or ranges of its own)",
                u32::from(w) * 8
            ),
        ),
        None => (
            IdStrategy::Application,
            format!(
                "{column} is `{sql_type}`, not an integer a time-ordered id fits: the application allocates new values"
            ),
        ),
    }
}
