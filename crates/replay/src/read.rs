//! A read pattern as the plan serves it: the first CQL statement with every `?` bound as the plan
//! says, the lookups that follow (once per row read before, inner-join semantics), then the work
//! the plan leaves to the client, in SQL's order: the client filters, the aggregates and GROUP BY
//! it computes, the sort it does, the OFFSET it skips and the LIMIT it applies.
//!
//! What the client does beyond `client_filters`, `then` and the pattern's OFFSET is stated by the
//! plan only in the query's notes; [`ClientWork::of`] reads them (the designer's wording is the
//! contract until the model has a field for each).

use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::Params;
use crate::record::{Field, Record};
use crate::values::canon;
use crate::Error;
use remodel_backfill::cqltype::{CqlType, Native};
use remodel_model::{ColumnRef, QueryMapping};
use scylla::value::CqlValue;
use std::cmp::Ordering;

/// What the plan leaves to the client beyond filters and lookups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientWork {
    /// The rows are sorted (or merged from several partitions) in the requested order.
    pub sort: bool,
    /// Aggregates (and GROUP BY) are computed from the rows read.
    pub aggregate: bool,
    /// The LIMIT is applied after filtering and sorting.
    pub limit: bool,
}

impl ClientWork {
    /// The client's work as the query's notes state it.
    pub fn of(q: &QueryMapping) -> ClientWork {
        let says = |phrase: &str| q.notes.iter().any(|n| n.contains(phrase));
        ClientWork {
            sort: says("sorted on the client")
                || says("merged in the requested order on the client"),
            aggregate: says("is computed on the client") || says("GROUP BY is done on the client"),
            limit: says("is applied on the client"),
        }
    }
}

impl Replayer<'_> {
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
        if let Some(c) = table
            .columns
            .iter()
            .find(|c| c.embeds.is_some() && cql.contains(c.name.as_str()))
        {
            return Err(Error::Unsupported(format!(
                "reads of the embedded collection {} (its entries are not unnested)",
                c.name
            )));
        }
        let stmt = self.statement(cql).await?;
        let types = Self::marker_types(&stmt)?;
        if types.len() != q.binds.len() {
            return Err(Error::Plan(format!(
                "{}: `{cql}` has {} markers and {} binds",
                q.pattern,
                types.len(),
                q.binds.len()
            )));
        }
        let mut values = Vec::with_capacity(types.len());
        for (b, ty) in q.binds.iter().zip(&types) {
            values.push(self.bind_value(&b.value, params, None, ty).await?);
        }
        let mut out = CqlRows::default();
        let mut rows = self.run_cql(&stmt, &values, table, &mut out).await?;
        for step in &q.then {
            let stmt = self.statement(&step.cql).await?;
            let types = Self::marker_types(&stmt)?;
            let t = self.table(&step.table)?;
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
                for found in self.run_cql(&stmt, &values, t, &mut out).await? {
                    let mut merged = row.clone();
                    merged.extend(found);
                    joined.push(merged);
                }
            }
            rows = joined;
        }
        out.rows = self.client_work(p, q, params, rows, &mut out).await?;
        Ok(out)
    }

    /// What the client does with the rows read, in SQL's order: the plan's client filters, the
    /// aggregates, the sort, the OFFSET and the LIMIT its notes leave to it.
    async fn client_work(
        &self,
        p: &Prepared<'_>,
        q: &QueryMapping,
        params: &Params,
        mut rows: Vec<Record>,
        out: &mut CqlRows,
    ) -> Result<Vec<Record>, Error> {
        let work = ClientWork::of(q);
        for filter in &q.client_filters {
            let keep = self
                .eval_rows(filter, "boolean", params, &rows, &p.forms.aliases)
                .await?;
            rows = rows
                .into_iter()
                .zip(keep)
                .filter(|(_, k)| k.raw.as_deref() == Some(&[1u8][..]))
                .map(|(r, _)| r)
                .collect();
        }
        let a = &p.pattern.analysis;
        let same = crate::record::join_equalities(p.pattern);
        if work.aggregate {
            rows = aggregate(&rows, &a.group_by, &a.aggregates, &same, &mut out.types)?;
        }
        if work.sort {
            let keys: Vec<(Field, bool)> = a
                .order_by
                .iter()
                .map(|o| {
                    let f = Field::Col(o.column.clone());
                    let held = crate::record::resolve(&f, &same, |x| out.types.contains_key(x));
                    (held.cloned().unwrap_or(f), o.desc)
                })
                .collect();
            if let Some((f, _)) = keys.iter().find(|(f, _)| !out.types.contains_key(f)) {
                return Err(Error::Plan(format!(
                    "{}: the client must sort by {f}, which the CQL does not read",
                    q.pattern
                )));
            }
            rows.sort_by(|x, y| {
                keys.iter()
                    .map(|(f, desc)| sql_order(value(x, f), value(y, f), *desc))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            });
        }
        let count = CqlType::Native(Native::BigInt);
        if let Some(o) = a.offset_sql.clone().or(a.offset.map(|o| o.to_string())) {
            let skip = self.eval(&o, params, &count).await?;
            let skip = as_count(skip.as_ref());
            rows.drain(..skip.min(rows.len()));
        }
        if work.limit {
            if let Some(l) = a.limit_sql.clone().or(a.limit.map(|l| l.to_string())) {
                let keep = as_count(self.eval(&l, params, &count).await?.as_ref());
                rows.truncate(keep);
            }
        }
        Ok(rows)
    }
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

/// SQL's order of two values (NULLs last ascending, first descending, as Postgres sorts them).
pub fn sql_order(a: Option<&CqlValue>, b: Option<&CqlValue>, desc: bool) -> Ordering {
    let o = match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => value_order(x, y),
    };
    if desc {
        o.reverse()
    } else {
        o
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
/// no GROUP BY, also over no rows, as SQL does).
fn aggregate(
    rows: &[Record],
    group_by: &[ColumnRef],
    aggs: &[remodel_model::Aggregate],
    same: &[(Field, Field)],
    types: &mut std::collections::BTreeMap<Field, CqlType>,
) -> Result<Vec<Record>, Error> {
    // A column the rows lack stands for one the joins make equal to it.
    let known: Vec<Field> = types.keys().cloned().collect();
    let read = |f: Field| -> Field {
        crate::record::resolve(&f, same, |x| known.contains(x))
            .cloned()
            .unwrap_or(f)
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
        let mut rec = Record::new();
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
) -> Result<(Option<CqlValue>, CqlType), Error> {
    let big = CqlType::Native(Native::BigInt);
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
            (v, CqlType::Native(Native::Varint))
        }
        other => {
            return Err(Error::Unsupported(format!(
                "{other}() computed on the client"
            )))
        }
    })
}

fn type_of(v: &CqlValue) -> CqlType {
    use Native as N;
    CqlType::Native(match v {
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
        assert_eq!(sql_order(None, Some(&one), false), Ordering::Greater);
        assert_eq!(sql_order(None, Some(&one), true), Ordering::Less);
        assert_eq!(
            sql_order(Some(&CqlValue::Int(2)), Some(&CqlValue::BigInt(10)), false),
            Ordering::Less
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
        types.insert(Field::Col(col.clone()), CqlType::Native(Native::Int));
        let out = aggregate(&rows, &[], &aggs, &[], &mut types).unwrap();
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
        let out = aggregate(&[], &[], &aggs, &[], &mut types).unwrap();
        assert_eq!(out[0].values().filter(|v| v.is_none()).count(), 1);
    }
}
