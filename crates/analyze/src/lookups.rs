//! Lookup columns: the functions of a column an application looks rows up by, added to the
//! schema as columns of their own so that a table can be keyed by them.
//!
//! `SELECT … FROM accounts WHERE lower(email) = lower($1)` (with or without an index on
//! `lower(email)`) and `… WHERE email = $1` on a `citext` column (which compares
//! case-insensitively) both look a row up by `lower(email)`. Read as a filter on `email`, the
//! design could only scan every partition; as an equality on a column `lower_email` holding
//! `lower(email)`, one partition serves it. The first pass over the workload finds them
//! ([`wanted`]); the schema gets each lookup column once ([`add`], a [`Lookup`] that is also a
//! generated column, so every executor computes it from the row); the second pass reads each such
//! comparison as an equality on the lookup column ([`equality`]).

use crate::pattern::Ctx;
use remodel_model::{
    AccessPattern, BinaryOp, ColumnRef, EqualityOp, Expr, Function, Lookup, Predicate, ScalarType,
    Schema,
};
use sqlparser::ast as sql;

/// The functions a lookup column may apply (deterministic, of text, keeping NULL as NULL).
const FUNCTIONS: [Function; 3] = [Function::Lower, Function::Upper, Function::Trim];

/// True for a `citext` column: it compares as `lower()` of its text.
pub(crate) fn case_insensitive(schema: &Schema, c: &ColumnRef) -> bool {
    schema
        .table(&c.table)
        .and_then(|t| t.column(&c.column))
        .is_some_and(|col| {
            let t = col.sql_type.trim().to_ascii_lowercase();
            t == "citext" || t.ends_with(".citext")
        })
}

/// `f(c)` or `f(c::text)` of a column of the row at hand, for a lookup function `f`.
fn lookup_of(e: &Expr) -> Option<(ColumnRef, Function)> {
    let Expr::Call { function, args } = e else {
        return None;
    };
    if !FUNCTIONS.contains(function) {
        return None;
    }
    let column = match args.as_slice() {
        [Expr::Column { column, row }] if row.is_this() => column,
        [Expr::Cast {
            arg,
            to: ScalarType::Text,
        }] => match arg.as_ref() {
            Expr::Column { column, row } if row.is_this() => column,
            _ => return None,
        },
        _ => return None,
    };
    Some((column.clone(), *function))
}

/// The lookups the first pass of `patterns` asks for: a residual `f(c) = value` (a value of
/// no column), and an `=` on a `citext` column (`lower`).
pub fn wanted(schema: &Schema, patterns: &[AccessPattern]) -> Vec<(ColumnRef, Function)> {
    let mut out: Vec<(ColumnRef, Function)> = Vec::new();
    for p in patterns {
        let a = &p.analysis;
        for r in &a.residual {
            let Some(Expr::Binary {
                op: BinaryOp::Eq,
                left,
                right,
            }) = &r.expr
            else {
                continue;
            };
            let found = [(left, right), (right, left)]
                .into_iter()
                .find_map(|(f, v)| lookup_of(f).filter(|_| v.is_column_free()));
            out.extend(found);
        }
        for e in &a.equality {
            if e.op == EqualityOp::Eq && e.expr.is_none() && case_insensitive(schema, &e.column) {
                out.push((e.column.clone(), Function::Lower));
            }
        }
    }
    let mut unique: Vec<(ColumnRef, Function)> = Vec::new();
    for w in out {
        if !unique.contains(&w) {
            unique.push(w);
        }
    }
    unique
}

/// Adds a lookup column for each of `wanted` its table does not have yet; returns how many it
/// added.
pub fn add(schema: &mut Schema, wanted: &[(ColumnRef, Function)]) -> usize {
    let mut added = 0;
    for (c, function) in wanted {
        let Some(t) = schema.tables.iter_mut().find(|t| t.key() == c.table) else {
            continue;
        };
        let Some(nullable) = t.column(&c.column).map(|col| col.nullable) else {
            continue;
        };
        let lookup = Lookup {
            function: *function,
            column: c.column.clone(),
        };
        if t.columns
            .iter()
            .any(|col| col.lookup.as_ref() == Some(&lookup))
        {
            continue;
        }
        let mut name = lookup.name();
        while t.column(&name).is_some() {
            name.push_str("_lookup");
        }
        let column = lookup.column(&t.key(), &name, nullable);
        t.columns.push(column);
        added += 1;
    }
    added
}

/// The lookup column of `table` for `function` of `column`.
fn column_for(schema: &Schema, c: &ColumnRef, function: Function) -> Option<ColumnRef> {
    let t = schema.table(&c.table)?;
    t.columns
        .iter()
        .find(|col| {
            col.lookup
                .as_ref()
                .is_some_and(|l| l.function == function && l.column == c.column)
        })
        .map(|col| ColumnRef::new(t.key(), &col.name))
}

/// `f(c) = v` (`x` is `f(c)` as written) or, on a `citext` column `c` (`x` is `None`), `c = v`:
/// the equality on the lookup column, when the schema has it (the second pass). `None` when it
/// is not a lookup.
pub(crate) fn equality(
    ctx: &mut Ctx<'_>,
    c: &ColumnRef,
    x: Option<&sql::Expr>,
    v: &sql::Expr,
) -> Option<Predicate> {
    let (function, value_sql) = match x {
        None if case_insensitive(ctx.schema, c) => (Function::Lower, format!("lower({v})")),
        None => return None,
        Some(x) => {
            let typed = ctx.typed(None, |conv, scope| conv.value(x, scope)).ok();
            let (col, function) = typed.as_ref().and_then(lookup_of)?;
            if col != *c {
                return None;
            }
            (function, v.to_string())
        }
    };
    let column = column_for(ctx.schema, c, function)?;
    let typed = ctx
        .typed(None, |conv, scope| {
            conv.value_of(v, ScalarType::Text, scope)
        })
        .ok();
    let expr = match x {
        // `citext = $1`: the value is compared case-folded, as the lookup column holds it.
        None => typed.map(|t| Expr::Call {
            function,
            args: vec![t],
        }),
        Some(_) => typed,
    };
    Some(Predicate {
        column,
        op: EqualityOp::Eq,
        value: Some(value_sql),
        rewritten_from: None,
        expr,
    })
}
