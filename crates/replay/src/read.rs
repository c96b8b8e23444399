//! A read pattern as the plan serves it: the first CQL statement with every `?` bound as the plan
//! says — once per bucket of a [`BindValue::Buckets`] bind, the rows of all requests together —
//! the lookups that follow (once per row read before, inner-join semantics), then the client's
//! work as `QueryMapping.client` states it, in SQL's order: filters (typed expressions), group and
//! aggregate (or distinct), sort (with its NULL order), offset, limit.
//!
//! A value bound to a restriction that is NULL matches no row, as in SQL (`c = NULL`, `c >= NULL`,
//! `c IN (NULL)`): the request is not sent (CQL refuses a NULL there) and a NULL in a list is
//! dropped. `LIMIT 0` returns no row without a request (CQL refuses it), `LIMIT NULL` is no limit.
//!
//! Nothing here reads a note: the client's work is `QueryMapping.client` (a plan of an older
//! format, whose notes were its only statement of it, is refused before replay starts).

use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::Params;
use crate::record::{Field, Record};
use crate::values::canon;
use crate::Error;
use remodel_backfill::resolved_type::{Native, ResolvedType};
use remodel_model::{
    Aggregate, BindValue, ColumnRef, Expr, GroupRow, QueryMapping, SortBy, SortKey,
};
use scylla::value::CqlValue;
use std::cmp::Ordering;

/// What the client does with the rows read, in SQL's order (see [`remodel_model::ClientWork`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSteps {
    /// Conditions every row kept satisfies.
    pub filters: Vec<Expr>,
    /// Group by these columns.
    pub group_by: Vec<ColumnRef>,
    /// Aggregates per group.
    pub aggregates: Vec<Aggregate>,
    /// Which row stands for a group without aggregates.
    pub group_row: Option<GroupRow>,
    /// Keep one of each set of equal rows.
    pub distinct: bool,
    /// Sort keys.
    pub sort: Vec<SortKey>,
    /// Rows skipped.
    pub offset: Option<Expr>,
    /// Rows kept at most.
    pub limit: Option<Expr>,
}

impl ClientSteps {
    /// The client's work of read `q`, as its `client` states it.
    pub fn of(q: &QueryMapping) -> Self {
        let c = &q.client;
        ClientSteps {
            filters: c.filters.clone(),
            group_by: c.group_by.clone(),
            aggregates: c.aggregates.clone(),
            group_row: c.group_row,
            distinct: c.distinct,
            sort: c.sort.clone(),
            offset: c.offset.clone(),
            limit: c.limit.clone(),
        }
    }
}

/// The values of the CQL's markers for each request a read sends (several for a list of buckets).
type Requests = Vec<Vec<Option<CqlValue>>>;

impl Replayer<'_> {
    /// The requests of a statement whose markers are `binds` (of types `types`): the product of
    /// every bind's values, none when a restriction is bound to NULL or the LIMIT is 0.
    async fn requests(
        &self,
        binds: &[remodel_model::Bind],
        types: &[ResolvedType],
        params: &Params,
    ) -> Result<Requests, Error> {
        let stamp = ResolvedType::Native(Native::Timestamp);
        let mut requests: Requests = vec![Vec::new()];
        for (b, ty) in binds.iter().zip(types) {
            let choices: Vec<Option<CqlValue>> = match &b.value {
                BindValue::Buckets {
                    bucket,
                    time_zone,
                    lower,
                    upper,
                    upper_exclusive,
                } => {
                    let lo = self.bind_value(lower, params, None, &stamp).await?;
                    let hi = self.bind_value(upper, params, None, &stamp).await?;
                    let list = self
                        .buckets(
                            *bucket,
                            time_zone,
                            lo.as_ref(),
                            hi.as_ref(),
                            *upper_exclusive,
                            ty,
                        )
                        .await?;
                    list.into_iter().map(Some).collect()
                }
                v => {
                    let x = self.bind_value(v, params, None, ty).await?;
                    match (b.column == "limit", x) {
                        // LIMIT NULL is no limit.
                        (true, None) => vec![Some(CqlValue::Int(i32::MAX))],
                        (true, Some(n)) if limit_is_zero(&n) => Vec::new(),
                        (false, None) => Vec::new(),
                        (_, Some(x)) => vec![Some(x)],
                    }
                }
            };
            requests = requests
                .into_iter()
                .flat_map(|r| {
                    choices.iter().map(move |c| {
                        let mut r = r.clone();
                        r.push(c.clone());
                        r
                    })
                })
                .collect();
        }
        Ok(requests)
    }

    /// Runs the read mapping `q` of pattern `p` with `params`, client work included.
    pub async fn read(
        &mut self,
        p: &Prepared<'_>,
        q: &QueryMapping,
        params: &Params,
    ) -> Result<CqlRows, Error> {
        let cql = q
            .cql
            .as_deref()
            .ok_or_else(|| Error::Plan(format!("{}: the plan maps it to no CQL", q.pattern)))?;
        let table = self.table(q.table.as_deref().unwrap_or_default())?;
        // A folded loop's collection is checked against its lookups ([`crate::folded`]).
        let folded = self.folded_lookup(&q.pattern).map(|l| l.column.as_str());
        if let Some(c) = table.columns.iter().find(|c| {
            c.embeds.is_some() && Some(c.name.as_str()) != folded && cql.contains(c.name.as_str())
        }) {
            return Err(Error::Unsupported(format!(
                "reads of the embedded collection {} (its entries are not unnested)",
                c.name
            )));
        }
        let stmt = self.statement_at(cql, q.consistency.as_ref()).await?;
        let types = Self::marker_types(&stmt)?;
        if types.len() != q.binds.len() {
            return Err(Error::Plan(format!(
                "{}: `{cql}` has {} markers and {} binds",
                q.pattern,
                types.len(),
                q.binds.len()
            )));
        }
        let mut out = CqlRows::default();
        Self::result_types(&stmt, table, &mut out);
        let mut rows = Vec::new();
        for values in self.requests(&q.binds, &types, params).await? {
            rows.extend(self.run_cql(&stmt, &values, table, &mut out).await?);
        }
        for step in &q.then {
            rows = self.step(q, step, params, rows, &mut out).await?;
        }
        if let Some(c) = &q.counter {
            out.rows = counter_rows(c, &p.pattern.analysis.aggregates, rows);
            return Ok(out);
        }
        let steps = ClientSteps::of(q);
        out.rows = self.client_work(p, &steps, params, rows, &mut out).await?;
        Ok(out)
    }

    /// A lookup step: run once per row read before, each row joined with the rows it finds.
    async fn step(
        &mut self,
        q: &QueryMapping,
        step: &remodel_model::ReadStep,
        params: &Params,
        rows: Vec<Record>,
        out: &mut CqlRows,
    ) -> Result<Vec<Record>, Error> {
        let stmt = self.statement_at(&step.cql, q.consistency.as_ref()).await?;
        let types = Self::marker_types(&stmt)?;
        let t = self.table(&step.table)?;
        Self::result_types(&stmt, t, out);
        let mut joined = Vec::new();
        'rows: for row in &rows {
            let mut values = Vec::with_capacity(types.len());
            for (b, ty) in step.binds.iter().zip(&types) {
                let v = self.bind_value(&b.value, params, Some(row), ty).await?;
                // A NULL key finds no row (the SQL join drops it); CQL refuses to look it up.
                if v.is_none() {
                    continue 'rows;
                }
                values.push(v);
            }
            for found in self.run_cql(&stmt, &values, t, out).await? {
                let mut merged = row.clone();
                merged.extend(found);
                joined.push(merged);
            }
        }
        Ok(joined)
    }

    /// The rows `filter` keeps (those for which it is TRUE).
    async fn keep(
        &self,
        filter: &Expr,
        params: &Params,
        rows: Vec<Record>,
    ) -> Result<Vec<Record>, Error> {
        let keep = self
            .eval_expr_rows(filter, "boolean", params, &rows)
            .await?;
        Ok(rows
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| k.raw.as_deref() == Some(&[1u8][..]))
            .map(|(r, _)| r)
            .collect())
    }

    /// A count of the client's work (OFFSET, LIMIT) with these parameters; `None` for NULL (no
    /// limit).
    async fn count(&self, t: &Expr, params: &Params) -> Result<Option<usize>, Error> {
        let big = ResolvedType::Native(Native::BigInt);
        let v = self.eval_expr(t, params, &big).await?;
        Ok(v.map(|v| as_count(Some(&v))))
    }

    /// What the client does with the rows read, in SQL's order: filters, group and aggregate
    /// (or distinct), sort, OFFSET, LIMIT.
    async fn client_work(
        &self,
        p: &Prepared<'_>,
        w: &ClientSteps,
        params: &Params,
        mut rows: Vec<Record>,
        out: &mut CqlRows,
    ) -> Result<Vec<Record>, Error> {
        for filter in &w.filters {
            rows = self.keep(filter, params, rows).await?;
        }
        let same = crate::record::join_equalities(p.pattern);
        if !w.aggregates.is_empty() || !w.group_by.is_empty() {
            let whole = w.group_row == Some(GroupRow::Any);
            rows = aggregate(
                &rows,
                &w.group_by,
                &w.aggregates,
                &same,
                whole,
                &mut out.types,
            )?;
        }
        if w.distinct {
            let mut seen = std::collections::HashSet::new();
            rows.retain(|r| seen.insert(r.values().map(|v| canon(v.as_ref())).collect::<Vec<_>>()));
        }
        if !w.sort.is_empty() {
            sort(&q_name(p), &mut rows, &w.sort, &same, &out.types)?;
        }
        if let Some(o) = &w.offset {
            let skip = self.count(o, params).await?.unwrap_or(0);
            rows.drain(..skip.min(rows.len()));
        }
        if let Some(l) = &w.limit {
            if let Some(keep) = self.count(l, params).await? {
                rows.truncate(keep);
            }
        }
        Ok(rows)
    }
}

/// The result of a read served by a counter table ([`remodel_model::CounterRead`]): a group
/// whose count is 0 has no rows (dropped); with no GROUP BY and no group left, one row of
/// count 0 and NULL sums. Every count aggregate of the SQL reads the row count (the counted
/// columns are NOT NULL).
fn counter_rows(
    c: &remodel_model::CounterRead,
    aggregates: &[Aggregate],
    rows: Vec<Record>,
) -> Vec<Record> {
    let count_field = Field::Agg {
        function: "count".into(),
        column: None,
        distinct: false,
    };
    let count_of = |r: &Record| -> i128 {
        r.get(&count_field)
            .and_then(|v| v.as_ref())
            .and_then(crate::values::int_value)
            .unwrap_or(0)
    };
    let mut out: Vec<Record> = rows.into_iter().filter(|r| count_of(r) != 0).collect();
    if out.is_empty() && !c.grouped {
        let mut r = Record::new();
        r.insert(
            count_field.clone(),
            Some(CqlValue::Counter(scylla::value::Counter(0))),
        );
        out.push(r);
    }
    for r in &mut out {
        let n = r.get(&count_field).cloned().flatten();
        for a in aggregates {
            let f = Field::Agg {
                function: a.function.to_ascii_lowercase(),
                column: a.column.clone(),
                distinct: a.distinct,
            };
            if r.contains_key(&f) {
                continue;
            }
            let v = if a.function.eq_ignore_ascii_case("count") {
                n.clone()
            } else {
                None
            };
            r.insert(f, v);
        }
    }
    out
}

fn q_name(p: &Prepared<'_>) -> String {
    p.pattern.id.clone()
}

/// True for a LIMIT of 0 (or less, which Postgres refuses before replay gets here).
fn limit_is_zero(v: &CqlValue) -> bool {
    matches!(canon(Some(v)), crate::values::Canon::Num(n) if n == "0" || n.starts_with('-'))
}

/// Sorts `rows` by `keys` (stable: rows equal on every key keep their order, which SQL leaves
/// free anyway).
fn sort(
    pattern: &str,
    rows: &mut [Record],
    keys: &[SortKey],
    same: &[(Field, Field)],
    types: &std::collections::BTreeMap<Field, ResolvedType>,
) -> Result<(), Error> {
    let mut fields = Vec::with_capacity(keys.len());
    for k in keys {
        let f = match &k.by {
            SortBy::Column { column } => Field::Col(column.clone()),
            SortBy::Aggregate { aggregate } => Field::Agg {
                function: aggregate.function.to_ascii_lowercase(),
                column: aggregate.column.clone(),
                distinct: aggregate.distinct,
            },
        };
        let held = crate::record::resolve(&f, same, |x| types.contains_key(x));
        let Some(held) = held else {
            return Err(Error::Plan(format!(
                "{pattern}: the client must sort by {f}, which the CQL does not read"
            )));
        };
        fields.push((held, k.desc, k.nulls_first));
    }
    rows.sort_by(|x, y| {
        fields
            .iter()
            .map(|(f, desc, nulls_first)| sql_order(value(x, f), value(y, f), *desc, *nulls_first))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Ok(())
}

fn as_count(v: Option<&CqlValue>) -> usize {
    match v {
        Some(CqlValue::BigInt(n)) => usize::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

fn value<'r>(r: &'r Record, f: &Field) -> Option<&'r CqlValue> {
    r.get(f).and_then(Option::as_ref)
}

/// SQL's order of two values: by value (reversed when `desc`), NULLs before every value when
/// `nulls_first`, after them otherwise (Postgres' default is NULLs last ascending, first
/// descending).
pub fn sql_order(
    a: Option<&CqlValue>,
    b: Option<&CqlValue>,
    desc: bool,
    nulls_first: bool,
) -> Ordering {
    let nulls = |o: Ordering| if nulls_first { o.reverse() } else { o };
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => nulls(Ordering::Greater),
        (Some(_), None) => nulls(Ordering::Less),
        (Some(x), Some(y)) if desc => value_order(x, y).reverse(),
        (Some(x), Some(y)) => value_order(x, y),
    }
}

fn value_order(x: &CqlValue, y: &CqlValue) -> Ordering {
    use crate::values::Canon;
    match (canon(Some(x)), canon(Some(y))) {
        (Canon::Num(a), Canon::Num(b)) => num_order(&a, &b),
        (Canon::Float(a), Canon::Float(b)) => f64::from_bits(a).total_cmp(&f64::from_bits(b)),
        _ => match (x, y) {
            (CqlValue::Timestamp(a), CqlValue::Timestamp(b)) => a.0.cmp(&b.0),
            (CqlValue::Date(a), CqlValue::Date(b)) => a.0.cmp(&b.0),
            (CqlValue::Time(a), CqlValue::Time(b)) => a.0.cmp(&b.0),
            (CqlValue::Uuid(a), CqlValue::Uuid(b)) => a.as_bytes().cmp(b.as_bytes()),
            _ => canon(Some(x)).cmp(&canon(Some(y))),
        },
    }
}

/// Order of two exact decimal texts (`-12.5`, `3`).
fn num_order(a: &str, b: &str) -> Ordering {
    let split = |s: &str| {
        let (neg, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d.to_string()),
            None => (false, s.to_string()),
        };
        let (int, frac) = match digits.split_once('.') {
            Some((i, f)) => (i.to_string(), f.to_string()),
            None => (digits, String::new()),
        };
        (neg, int.trim_start_matches('0').to_string(), frac)
    };
    let (na, ia, fa) = split(a);
    let (nb, ib, fb) = split(b);
    let magnitude = ia
        .len()
        .cmp(&ib.len())
        .then_with(|| ia.cmp(&ib))
        .then_with(|| {
            let width = fa.len().max(fb.len());
            format!("{fa:0<width$}").cmp(&format!("{fb:0<width$}"))
        });
    match (na, nb) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
    }
}

/// Groups `rows` by `group_by` and computes each aggregate per group (one group when there is
/// no GROUP BY, also over no rows, as SQL does); `whole` keeps a group's first row whole (a
/// GROUP BY without aggregates whose other columns the grouped ones determine).
fn aggregate(
    rows: &[Record],
    group_by: &[ColumnRef],
    aggs: &[remodel_model::Aggregate],
    same: &[(Field, Field)],
    whole: bool,
    types: &mut std::collections::BTreeMap<Field, ResolvedType>,
) -> Result<Vec<Record>, Error> {
    // A column the rows lack stands for one the joins make equal to it.
    let known: Vec<Field> = types.keys().cloned().collect();
    let read = |f: Field| -> Field {
        crate::record::resolve(&f, same, |x| known.contains(x)).unwrap_or(f)
    };
    let keys: Vec<Field> = group_by.iter().cloned().map(Field::Col).map(read).collect();
    let mut groups: Vec<(Vec<crate::values::Canon>, Vec<&Record>)> = Vec::new();
    for r in rows {
        let k: Vec<_> = keys.iter().map(|f| canon(value(r, f))).collect();
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    if groups.is_empty() && keys.is_empty() {
        groups.push((Vec::new(), Vec::new()));
    }
    let mut out = Vec::with_capacity(groups.len());
    for (_, members) in groups {
        let mut rec = match members.first() {
            Some(first) if whole => (*first).clone(),
            _ => Record::new(),
        };
        for f in &keys {
            rec.insert(
                f.clone(),
                members.first().and_then(|m| value(m, f)).cloned(),
            );
        }
        for a in aggs {
            let field = Field::Agg {
                function: a.function.to_ascii_lowercase(),
                column: a.column.clone(),
                distinct: a.distinct,
            };
            let col = a.column.clone().map(Field::Col).map(read);
            let (v, ty) = compute(a, col, &members)?;
            types.insert(field.clone(), ty);
            rec.insert(field, v);
        }
        out.push(rec);
    }
    Ok(out)
}

fn compute(
    a: &remodel_model::Aggregate,
    col: Option<Field>,
    rows: &[&Record],
) -> Result<(Option<CqlValue>, ResolvedType), Error> {
    let big = ResolvedType::Native(Native::BigInt);
    let mut vals: Vec<&CqlValue> = match &col {
        Some(f) => rows.iter().filter_map(|r| value(r, f)).collect(),
        None => Vec::new(),
    };
    if a.distinct {
        let mut seen = Vec::new();
        vals.retain(|v| {
            let c = canon(Some(v));
            let new = !seen.contains(&c);
            seen.push(c);
            new
        });
    }
    let f = a.function.to_ascii_lowercase();
    Ok(match f.as_str() {
        "count" if col.is_none() => (Some(CqlValue::BigInt(rows.len() as i64)), big),
        "count" => (Some(CqlValue::BigInt(vals.len() as i64)), big),
        "min" | "max" => {
            let pick = vals.into_iter().reduce(|x, y| {
                let o = value_order(x, y);
                if (f == "min") == (o == Ordering::Greater) {
                    y
                } else {
                    x
                }
            });
            let ty = pick.map_or(big.clone(), type_of);
            (pick.cloned(), ty)
        }
        "sum" => {
            let mut total: i128 = 0;
            for v in &vals {
                match canon(Some(v)) {
                    crate::values::Canon::Num(n) if !n.contains('.') => {
                        total += n.parse::<i128>().map_err(|e| Error::Value(e.to_string()))?
                    }
                    _ => {
                        return Err(Error::Unsupported(format!(
                            "sum() of {v:?} on the client (only integers are summed)"
                        )))
                    }
                }
            }
            let v = (!vals.is_empty()).then(|| {
                CqlValue::Varint(scylla::value::CqlVarint::from_signed_bytes_be(
                    total.to_be_bytes().to_vec(),
                ))
            });
            (v, ResolvedType::Native(Native::Varint))
        }
        other => {
            return Err(Error::Unsupported(format!(
                "{other}() computed on the client"
            )))
        }
    })
}

fn type_of(v: &CqlValue) -> ResolvedType {
    use Native as N;
    ResolvedType::Native(match v {
        CqlValue::Text(_) => N::Text,
        CqlValue::Ascii(_) => N::Ascii,
        CqlValue::Int(_) => N::Int,
        CqlValue::SmallInt(_) => N::SmallInt,
        CqlValue::TinyInt(_) => N::TinyInt,
        CqlValue::Decimal(_) => N::Decimal,
        CqlValue::Double(_) => N::Double,
        CqlValue::Float(_) => N::Float,
        CqlValue::Timestamp(_) => N::Timestamp,
        CqlValue::Date(_) => N::Date,
        CqlValue::Time(_) => N::Time,
        CqlValue::Uuid(_) => N::Uuid,
        CqlValue::Timeuuid(_) => N::Timeuuid,
        CqlValue::Boolean(_) => N::Boolean,
        _ => N::BigInt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_work_is_read_as_data_never_from_the_notes() {
        let t = ColumnRef::new("trips", "started_at");
        let q = QueryMapping {
            notes: vec![
                "rows are merged in the requested order on the client".into(),
                "the LIMIT is applied on the client".into(),
            ],
            ..Default::default()
        };
        // `client` is the contract; notes that say otherwise change nothing.
        assert_eq!(ClientSteps::of(&q), ClientSteps::default());
        let mut q2 = q.clone();
        q2.client.sort = vec![SortKey {
            by: SortBy::Column { column: t },
            desc: false,
            nulls_first: true,
        }];
        q2.client.limit = Some(Expr::param(4));
        let v2 = ClientSteps::of(&q2);
        assert!(!v2.sort[0].desc && v2.sort[0].nulls_first);
        assert_eq!(v2.limit, Some(Expr::param(4)));
    }

    #[test]
    fn limit_zero_is_told_from_other_limits() {
        assert!(limit_is_zero(&CqlValue::Int(0)));
        assert!(limit_is_zero(&CqlValue::BigInt(-1)));
        assert!(!limit_is_zero(&CqlValue::Int(1)));
    }

    #[test]
    fn numbers_sort_by_value() {
        assert_eq!(num_order("10", "9"), Ordering::Greater);
        assert_eq!(num_order("-10", "-9"), Ordering::Less);
        assert_eq!(num_order("1.5", "1.25"), Ordering::Greater);
        assert_eq!(num_order("-0.5", "0"), Ordering::Less);
        assert_eq!(num_order("2", "2"), Ordering::Equal);
    }

    #[test]
    fn nulls_sort_last_ascending_first_descending() {
        let one = CqlValue::Int(1);
        assert_eq!(sql_order(None, Some(&one), false, false), Ordering::Greater);
        assert_eq!(sql_order(None, Some(&one), true, true), Ordering::Less);
        // NULLS LAST descending, NULLS FIRST ascending.
        assert_eq!(sql_order(None, Some(&one), true, false), Ordering::Greater);
        assert_eq!(sql_order(None, Some(&one), false, true), Ordering::Less);
        assert_eq!(
            sql_order(
                Some(&CqlValue::Int(2)),
                Some(&CqlValue::BigInt(10)),
                false,
                false
            ),
            Ordering::Less
        );
        assert_eq!(
            sql_order(
                Some(&CqlValue::Int(2)),
                Some(&CqlValue::BigInt(10)),
                true,
                true
            ),
            Ordering::Greater
        );
    }

    #[test]
    fn client_aggregates_follow_sql() {
        let col = ColumnRef::new("t", "x");
        let rec = |v: Option<i32>| {
            let mut r = Record::new();
            r.insert(Field::Col(col.clone()), v.map(CqlValue::Int));
            r
        };
        let rows = vec![rec(Some(3)), rec(Some(3)), rec(None), rec(Some(5))];
        let aggs = vec![
            remodel_model::Aggregate {
                function: "count".into(),
                column: Some(col.clone()),
                distinct: true,
            },
            remodel_model::Aggregate {
                function: "sum".into(),
                column: Some(col.clone()),
                distinct: false,
            },
        ];
        let mut types = std::collections::BTreeMap::new();
        types.insert(Field::Col(col.clone()), ResolvedType::Native(Native::Int));
        let out = aggregate(&rows, &[], &aggs, &[], false, &mut types).unwrap();
        assert_eq!(out.len(), 1);
        let got: Vec<_> = out[0].values().map(|v| canon(v.as_ref())).collect();
        assert_eq!(
            got,
            vec![
                crate::values::Canon::Num("2".into()),
                crate::values::Canon::Num("11".into())
            ]
        );
        // SQL: no rows, no GROUP BY → one row, count 0, sum NULL.
        let out = aggregate(&[], &[], &aggs, &[], false, &mut types).unwrap();
        assert_eq!(out[0].values().filter(|v| v.is_none()).count(), 1);
    }
}
