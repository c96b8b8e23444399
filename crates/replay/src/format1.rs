//! Format-1 plans (`format_version` 1), read until every plan is format 2: such a plan states the
//! client's sort, aggregation and limit only in the prose of a query's notes, and its filters,
//! OFFSET and LIMIT as SQL text. This module is the only place replay reads those notes; it turns
//! them into the same [`ClientSteps`] a format-2 plan states as data, and goes away with format 1.

use crate::read::{ClientSteps, Term};
use remodel_model::{PatternAnalysis, QueryMapping, SortBy, SortKey};

/// The client's work of a format-1 read mapping.
pub fn client_steps(q: &QueryMapping, a: &PatternAnalysis) -> ClientSteps {
    let says = |phrase: &str| q.notes.iter().any(|n| n.contains(phrase));
    let sort = says("sorted on the client") || says("merged in the requested order on the client");
    let aggregate = says("is computed on the client") || says("GROUP BY is done on the client");
    let limit = says("is applied on the client");
    let count = |sql: &Option<String>, n: Option<u64>| {
        sql.clone().or(n.map(|n| n.to_string())).map(Term::Sql)
    };
    ClientSteps {
        filters: q.client_filters.iter().cloned().map(Term::Sql).collect(),
        group_by: if aggregate {
            a.group_by.clone()
        } else {
            Vec::new()
        },
        aggregates: if aggregate {
            a.aggregates.clone()
        } else {
            Vec::new()
        },
        group_row: None,
        distinct: false,
        sort: if sort {
            a.order_by
                .iter()
                .map(|o| SortKey {
                    by: SortBy::Column {
                        column: o.column.clone(),
                    },
                    desc: o.desc,
                    // Postgres' default: NULLs last ascending, first descending.
                    nulls_first: o.desc,
                })
                .collect()
        } else {
            Vec::new()
        },
        offset: count(&a.offset_sql, a.offset),
        limit: if limit {
            count(&a.limit_sql, a.limit)
        } else {
            None
        },
    }
}
