//! Comparing a read's rows as SQL defines its result.
//!
//! Postgres runs the query without its LIMIT and OFFSET, with `dense_rank() OVER (ORDER BY …)`
//! (see [`remodel_sql::replay_forms`]): every row the query could return, in order, each with its tie group.
//! The rows SQL may return for `OFFSET o LIMIT l` are positions `[o, o + l)` of *some* order that
//! the ORDER BY allows: rows of one tie group may come in any order and the group may be cut
//! anywhere. So the Cassandra rows are right when there are as many as that window holds and, run
//! by run of one tie group, they are rows of that group (all of them where the window holds the
//! whole group). Without ORDER BY the order is free: the same rows, or with a LIMIT as many rows
//! that the query returns.

use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::{Params, PgValue};
use crate::record::Field;
use crate::values::{canon, Canon};
use crate::Error;
use remodel_backfill::convert::PgKind;
use remodel_backfill::resolved_type::{Native, ResolvedType};
use remodel_backfill::rows::show;
use remodel_backfill::time::{format_date, format_time_nanos};
use scylla::value::CqlValue;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio_postgres::types::Type;

/// A read's result on Postgres: every row, in order.
#[derive(Debug, Clone, Default)]
pub struct SqlRows {
    /// Output columns: name, the field each holds (`None`: replay cannot name it) and its type.
    pub columns: Vec<(String, Option<Field>, tokio_postgres::types::Type)>,
    /// Columns the pattern's joins make equal (either stands for the other).
    pub same: Vec<(Field, Field)>,
    /// The rows (the `__tie` column removed).
    pub rows: Vec<Vec<PgValue>>,
    /// The tie group of each row, when the query has an ORDER BY replay could rank.
    pub ties: Option<Vec<i64>>,
    /// True when the query has an ORDER BY.
    pub ordered: bool,
    /// Rows the query returns as written (with its LIMIT and OFFSET).
    pub returned: usize,
    /// Time the query took as written.
    pub elapsed: Duration,
    /// The window `[offset, offset + limit)` the query returns of `rows`.
    pub offset: usize,
    /// The LIMIT, when it has one.
    pub limit: Option<usize>,
}

/// How a read's two results differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What differs, in a sentence.
    pub reason: String,
    /// The rows SQL returns (the window; a tie group cut by the LIMIT shown whole).
    pub sql: Vec<String>,
    /// The rows the plan's CQL (and client work) returns.
    pub cql: Vec<String>,
}

/// One read run on both sides.
#[derive(Debug, Clone)]
pub struct ReadCheck {
    /// What Postgres returned.
    pub sql: SqlRows,
    /// What the plan's CQL (and client work) returned.
    pub cql: CqlRows,
    /// How they differ, when they do.
    pub difference: Option<Difference>,
    /// Rows of a folded loop's lookup checked against the collection of the rows read.
    pub folded_rows: u64,
}

impl Replayer<'_> {
    /// Runs read pattern `p` with `params` on both sides and compares the results.
    pub async fn check_read(
        &mut self,
        p: &Prepared<'_>,
        params: &Params,
    ) -> Result<ReadCheck, Error> {
        let plan = self.plan;
        let q = plan
            .design
            .queries
            .iter()
            .find(|q| q.pattern == p.pattern.id)
            .ok_or_else(|| Error::Plan(format!("{}: no query mapping", p.pattern.id)))?;
        // Postgres first: a statement the source itself refuses with these values (a division
        // by zero in the SELECT list) is no sample.
        let sql = self.read_pg(p, params).await.map_err(|e| match e {
            Error::Postgres { what, message } => Error::SourceRefused(format!("{what}: {message}")),
            other => other,
        })?;
        let cql = if self.is_external() {
            self.read_external(p, q, params, &sql).await?
        } else {
            let mut cql = self.read(p, q, params).await?;
            self.client_outputs(p, params, &sql, &mut cql).await?;
            cql
        };
        let mut difference = compare(&sql, &cql);
        let mut folded_rows = 0;
        // A folded collection is checked on the rows replay's own executor read.
        if difference.is_none() && !self.is_external() {
            (difference, folded_rows) = self.check_folded(p, &sql, &cql).await?;
        }
        Ok(ReadCheck {
            sql,
            cql,
            difference,
            folded_rows,
        })
    }

    /// Computes the SQL's output expressions (`a + b * $1 AS price`) on the rows the plan's CQL
    /// read, as the application would.
    async fn client_outputs(
        &self,
        p: &Prepared<'_>,
        params: &Params,
        sql: &SqlRows,
        cql: &mut CqlRows,
    ) -> Result<(), Error> {
        for (_, field, ty) in &sql.columns {
            let Some(Field::Expr(expr)) = field else {
                continue;
            };
            let cql_ty = cql_for_pg(ty).ok_or_else(|| {
                Error::Unsupported(format!("output `{expr}` of Postgres type {ty}"))
            })?;
            let values = self
                .eval_rows(
                    expr,
                    &crate::pg::type_name(ty),
                    params,
                    &cql.rows,
                    &p.forms.aliases,
                )
                .await
                .map_err(|e| {
                    Error::Unsupported(format!("output `{expr}` on the rows read: {e}"))
                })?;
            for (row, v) in cql.rows.iter_mut().zip(values) {
                row.insert(Field::Expr(expr.clone()), v.to_cql(&cql_ty)?);
            }
            cql.types.insert(Field::Expr(expr.clone()), cql_ty);
        }
        Ok(())
    }

    /// Casts the values of a type replay has no decoder for (`money`, `xml`, …) on Postgres to
    /// the type the backfill reads them as (`money` → `numeric`, any other → `text`), so both
    /// sides compare as the backfill stored them.
    async fn cast_undecodable(&mut self, out: &mut SqlRows) -> Result<(), Error> {
        for i in 0..out.columns.len() {
            let ty = out.columns[i].2.clone();
            if PgKind::of(&ty).is_some() {
                continue;
            }
            let to = if ty == Type::MONEY {
                Type::NUMERIC
            } else {
                Type::TEXT
            };
            let sql = format!("SELECT $1::{}", to.name());
            let what = format!("cast a {ty} result to {to}");
            let cast = |e| Error::pg(what.clone())(e);
            let stmt = self
                .pg()
                .prepare_typed(&sql, std::slice::from_ref(&ty))
                .await
                .map_err(cast)?;
            for row in &mut out.rows {
                if row[i].raw.is_none() {
                    row[i].ty = to.clone();
                    continue;
                }
                let r = self.pg().query_one(&stmt, &[&row[i]]).await.map_err(cast)?;
                row[i] = PgValue::of(&r, 0)?;
            }
            out.columns[i].2 = to;
        }
        Ok(())
    }

    /// Runs read pattern `p` on Postgres: once as written (timed) and once for every row with
    /// its tie group.
    pub async fn read_pg(&mut self, p: &Prepared<'_>, params: &Params) -> Result<SqlRows, Error> {
        let what = |form: &str| format!("{}: `{form}` with {}", p.pattern.id, params.show());
        let start = Instant::now();
        let as_written = self
            .pg()
            .query_typed(&p.forms.run, &crate::exec::typed(params))
            .await
            .map_err(Error::pg(what(&p.forms.run)))?;
        let elapsed = start.elapsed();
        let full_sql = p.forms.full.as_deref().unwrap_or(&p.forms.run);
        // The full form may leave out the LIMIT's parameter: declare every type.
        let full = self
            .pg()
            .query_typed(full_sql, &crate::exec::typed(params))
            .await
            .map_err(Error::pg(what(full_sql)))?;
        let a = &p.pattern.analysis;
        let mut out = SqlRows {
            ordered: !a.order_by.is_empty() || p.forms.ranked,
            returned: as_written.len(),
            elapsed,
            ..SqlRows::default()
        };
        let skip = usize::from(p.forms.ranked);
        let stmt = self
            .pg()
            .prepare_typed(full_sql, &params.types())
            .await
            .map_err(Error::pg(what(full_sql)))?;
        let mut aggs = a.aggregates.iter();
        for (i, col) in stmt.columns().iter().skip(skip).enumerate() {
            let written = p.forms.outputs.get(i);
            let field = match self.source_of(col).await {
                Some(c) => Some(Field::Col(c)),
                None if written.is_some_and(|w| !is_aggregate_call(w)) => {
                    written.map(|w| Field::Expr(w.clone()))
                }
                None => aggs.next().map(|g| Field::Agg {
                    function: g.function.to_ascii_lowercase(),
                    column: g.column.clone(),
                    distinct: g.distinct,
                }),
            };
            out.columns
                .push((col.name().to_string(), field, col.type_().clone()));
        }
        out.same = crate::record::join_equalities(p.pattern);
        let mut ties = Vec::with_capacity(full.len());
        for r in &full {
            if p.forms.ranked {
                ties.push(
                    r.try_get::<_, i64>(0)
                        .map_err(|e| Error::Value(e.to_string()))?,
                );
            }
            let vals = (skip..r.len())
                .map(|i| PgValue::of(r, i))
                .collect::<Result<_, _>>()?;
            out.rows.push(vals);
        }
        if p.forms.ranked {
            out.ties = Some(ties);
        }
        self.cast_undecodable(&mut out).await?;
        let count = ResolvedType::Native(Native::BigInt);
        let number = |v: Option<scylla::value::CqlValue>| match v {
            Some(scylla::value::CqlValue::BigInt(n)) => usize::try_from(n).unwrap_or(0),
            _ => 0,
        };
        if let Some(o) = a.offset_sql.clone().or(a.offset.map(|o| o.to_string())) {
            out.offset = number(self.eval(&o, params, &count).await?);
        }
        if let Some(l) = a.limit_sql.clone().or(a.limit.map(|l| l.to_string())) {
            out.limit = Some(number(self.eval(&l, params, &count).await?));
        }
        Ok(out)
    }
}

/// True for one aggregate call (`count(DISTINCT x)`, `sum(a)`), not an expression around one.
fn is_aggregate_call(sql: &str) -> bool {
    let lower = sql.trim().to_ascii_lowercase();
    let Some(open) = lower.find('(') else {
        return false;
    };
    let name = lower[..open].trim();
    let mut depth = 0i32;
    let closes_at_end = lower[open..].char_indices().all(|(i, ch)| {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        depth > 0 || i == lower.len() - open - 1
    });
    matches!(name, "count" | "sum" | "min" | "max" | "avg") && closes_at_end
}

/// The CQL type a value of Postgres type `ty` is compared as, when both sides are computed in
/// Postgres (output expressions).
pub fn cql_for_pg(ty: &tokio_postgres::types::Type) -> Option<ResolvedType> {
    use remodel_backfill::convert::PgKind as K;
    Some(ResolvedType::Native(match PgKind::of(ty)? {
        K::Bool => Native::Boolean,
        K::Int2 => Native::SmallInt,
        K::Int4 => Native::Int,
        K::Int8 | K::Oid => Native::BigInt,
        K::Float4 => Native::Float,
        K::Float8 => Native::Double,
        K::Numeric => Native::Decimal,
        K::Text | K::Json | K::Jsonb => Native::Text,
        K::Bytea => Native::Blob,
        K::Uuid => Native::Uuid,
        K::Timestamp => Native::Timestamp,
        K::Date => Native::Date,
        K::Time | K::TimeTz => Native::Time,
        K::Interval => Native::Duration,
        K::Inet => Native::Inet,
        K::Array(_) => return None,
    }))
}

/// The Postgres rows in the canonical form, each value converted to the CQL type of the field
/// that holds it on the Cassandra side (as the backfill converts it).
fn sql_canon(
    sql: &SqlRows,
    types: &HashMap<Field, ResolvedType>,
) -> Result<Vec<Vec<(Canon, String)>>, String> {
    let mut out = Vec::with_capacity(sql.rows.len());
    for row in &sql.rows {
        let mut vals = Vec::with_capacity(row.len());
        for (v, (name, field, pg_type)) in row.iter().zip(&sql.columns) {
            let field = field
                .as_ref()
                .ok_or_else(|| format!("output `{name}` is an expression replay cannot map"))?;
            let held = crate::record::resolve(field, &sql.same, |f| types.contains_key(f))
                .ok_or_else(|| format!("the plan's CQL returns no {field}"))?;
            let ty = &types[&held];
            vals.push(match v.to_cql(ty) {
                Ok(c) => (canon(c.as_ref()), shown(c.as_ref(), pg_type)),
                Err(e) => (
                    Canon::Other(format!("unconvertible: {e}")),
                    format!("<{e}>"),
                ),
            });
        }
        out.push(vals);
    }
    Ok(out)
}

/// A value as a difference shows it: a Postgres timestamp that the target keeps as epoch
/// microseconds (`epoch_micros`: a `bigint` there) as the instant it stands for, not as a number.
fn shown(v: Option<&CqlValue>, pg_type: &Type) -> String {
    match v {
        None => "NULL".into(),
        Some(CqlValue::BigInt(us)) if matches!(*pg_type, Type::TIMESTAMP | Type::TIMESTAMPTZ) => {
            match *us {
                i64::MAX => "infinity".into(),
                i64::MIN => "-infinity".into(),
                us => format!(
                    "{} {}Z",
                    format_date(us.div_euclid(86_400_000_000)),
                    format_time_nanos(us.rem_euclid(86_400_000_000) * 1000)
                ),
            }
        }
        Some(v) => show(v),
    }
}

pub(crate) fn render(row: &[(Canon, String)], names: &[String]) -> String {
    let parts: Vec<String> = row
        .iter()
        .zip(names)
        .map(|((_, text), n)| format!("{n}={text}"))
        .collect();
    format!("({})", parts.join(", "))
}

/// Compares the Cassandra side's rows with the SQL result; `None` when they agree.
pub fn compare(sql: &SqlRows, cql: &CqlRows) -> Option<Difference> {
    let names: Vec<String> = sql.columns.iter().map(|(n, _, _)| n.clone()).collect();
    let types: HashMap<Field, ResolvedType> = cql.types.clone().into_iter().collect();
    let fail = |reason: String, sql_rows: Vec<String>, cql_rows: Vec<String>| {
        Some(Difference {
            reason,
            sql: sql_rows,
            cql: cql_rows,
        })
    };
    let expected = match sql_canon(sql, &types) {
        Ok(e) => e,
        // No row on either side: nothing to convert, nothing differs.
        Err(_) if sql.rows.is_empty() && cql.rows.is_empty() => return None,
        Err(why) => return fail(why, Vec::new(), Vec::new()),
    };
    let mut actual = Vec::with_capacity(cql.rows.len());
    for r in &cql.rows {
        let mut vals = Vec::with_capacity(names.len());
        for (name, field, pg_type) in &sql.columns {
            let Some(field) = field else {
                return fail(
                    format!("output `{name}` is an expression replay cannot map"),
                    vec![],
                    vec![],
                );
            };
            let held = crate::record::resolve(field, &sql.same, |f| types.contains_key(f));
            let v = held.and_then(|f| r.get(&f)).and_then(Option::as_ref);
            vals.push((canon(v), shown(v, pg_type)));
        }
        actual.push(vals);
    }
    let lo = sql.offset.min(expected.len());
    let hi = match sql.limit {
        Some(l) => lo.saturating_add(l).min(expected.len()),
        None => expected.len(),
    };
    let window = &expected[lo..hi];
    let shown = |rows: &[Vec<(Canon, String)>]| -> Vec<String> {
        rows.iter()
            .take(SHOW_ROWS)
            .map(|r| render(r, &names))
            .collect()
    };
    let keys = |rows: &[Vec<(Canon, String)>]| -> Vec<Vec<Canon>> {
        rows.iter()
            .map(|r| r.iter().map(|(c, _)| c.clone()).collect())
            .collect()
    };
    let (want, got) = (keys(window), keys(&actual));
    let sql_shown = match (&sql.ties, hi < expected.len()) {
        // The tie group cut by the LIMIT, whole: any of its rows may be the last returned.
        (Some(t), true) if hi > lo => {
            let last = t[hi - 1];
            let end = (hi..expected.len())
                .find(|&i| t[i] != last)
                .unwrap_or(expected.len());
            shown(&expected[lo..end])
        }
        _ => shown(window),
    };
    if got.len() != want.len() {
        return fail(
            format!("Cassandra returns {} rows, SQL {}", got.len(), want.len()),
            sql_shown,
            shown(&actual),
        );
    }
    let all = keys(&expected);
    let ok = match (&sql.ties, sql.ordered) {
        (Some(t), _) => by_tie_groups(&all, t, lo, &got),
        (None, true) => got == want,
        (None, false) if hi - lo < expected.len() => sub_multiset(&got, &all),
        (None, false) => same_multiset(&got, &want),
    };
    if ok {
        return None;
    }
    let reason = if same_multiset(&got, &want) {
        "same rows in another order than the ORDER BY allows".to_string()
    } else {
        let missing = want.iter().filter(|w| !got.contains(w)).count();
        let extra = got.iter().filter(|g| !want.contains(g)).count();
        format!("different rows: {missing} of SQL's rows missing, {extra} Cassandra rows not among SQL's")
    };
    fail(reason, sql_shown, shown(&actual))
}

/// Rows shown per side in a difference.
pub const SHOW_ROWS: usize = 25;

fn same_multiset(a: &[Vec<Canon>], b: &[Vec<Canon>]) -> bool {
    let mut x = a.to_vec();
    let mut y = b.to_vec();
    x.sort();
    y.sort();
    x == y
}

/// Every row of `part` (counted with repeats) is among `whole`.
fn sub_multiset(part: &[Vec<Canon>], whole: &[Vec<Canon>]) -> bool {
    let mut left: HashMap<&Vec<Canon>, usize> = HashMap::new();
    for w in whole {
        *left.entry(w).or_default() += 1;
    }
    part.iter().all(|p| match left.get_mut(p) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    })
}

/// `got` is positions `[lo, lo + got.len())` of an order of `all` that keeps its tie groups
/// (`ties`, one group id per row of `all`, in order).
fn by_tie_groups(all: &[Vec<Canon>], ties: &[i64], lo: usize, got: &[Vec<Canon>]) -> bool {
    let mut i = 0;
    while i < got.len() {
        let group = ties[lo + i];
        let mut j = i;
        while j < got.len() && ties[lo + j] == group {
            j += 1;
        }
        let members: Vec<Vec<Canon>> = all
            .iter()
            .zip(ties)
            .filter(|(_, t)| **t == group)
            .map(|(r, _)| r.clone())
            .collect();
        if !sub_multiset(&got[i..j], &members) {
            return false;
        }
        i = j;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_micros_of_a_timestamp_are_shown_as_the_instant() {
        let us = CqlValue::BigInt(1_793_577_600_000_200);
        assert_eq!(
            shown(Some(&us), &Type::TIMESTAMPTZ),
            "2026-11-02 00:00:00.000200000Z"
        );
        assert_eq!(shown(Some(&us), &Type::INT8), "1793577600000200");
        assert_eq!(shown(None, &Type::TIMESTAMP), "NULL");
    }

    fn rows(v: &[i64]) -> Vec<Vec<Canon>> {
        v.iter().map(|n| vec![Canon::Num(n.to_string())]).collect()
    }

    #[test]
    fn ties_may_come_in_any_order_and_be_cut_anywhere() {
        // Rows 1..5 with ranks 1,2,2,2,3: LIMIT 2 may end with 2, 3 or 4.
        let all = rows(&[1, 2, 3, 4, 5]);
        let ties = [1, 2, 2, 2, 3];
        assert!(by_tie_groups(&all, &ties, 0, &rows(&[1, 3])));
        assert!(by_tie_groups(&all, &ties, 0, &rows(&[1, 4])));
        assert!(!by_tie_groups(&all, &ties, 0, &rows(&[1, 5])));
        // The whole group inside the window: all of it, in any order.
        assert!(by_tie_groups(&all, &ties, 0, &rows(&[1, 4, 2, 3, 5])));
        assert!(!by_tie_groups(&all, &ties, 0, &rows(&[1, 4, 4, 3, 5])));
        // An order across groups is not free.
        assert!(!by_tie_groups(&all, &ties, 0, &rows(&[2, 1, 3, 4, 5])));
        // OFFSET 2 LIMIT 2: positions 2 and 3, both in the group cut at both ends.
        assert!(by_tie_groups(&all, &ties, 2, &rows(&[2, 4])));
        assert!(!by_tie_groups(&all, &ties, 2, &rows(&[2, 5])));
    }

    #[test]
    fn aggregate_calls_are_told_from_expressions() {
        assert!(is_aggregate_call("COUNT(DISTINCT (S_I_ID))"));
        assert!(is_aggregate_call("sum(ol_amount)"));
        assert!(!is_aggregate_call("count(*) + 1"));
        assert!(!is_aggregate_call(
            "(f_base_price + (f_base_price * ($1 - (f_seats_left / f_seats_total))))"
        ));
        assert!(!is_aggregate_call("sum(a) / count(b)"));
    }

    #[test]
    fn multisets_count_repeats() {
        assert!(sub_multiset(&rows(&[1, 1]), &rows(&[1, 2, 1])));
        assert!(!sub_multiset(&rows(&[1, 1]), &rows(&[1, 2])));
        assert!(same_multiset(&rows(&[2, 1]), &rows(&[1, 2])));
    }
}
