//! A loop over children folded into the rows of its list (`design.loops[].lookup`): each row the
//! plan's read returns carries the children as a collection, and they must be what the lookup
//! the application ran for that row returns on Postgres (B's SQL bound to the row's value).
//!
//! The entries are compared with B's rows as a multiset: the map holds them by B's key, so B's
//! ORDER BY (if any) is not what the map's order follows.

use crate::compare::{render, Difference, SqlRows, SHOW_ROWS};
use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::PgValue;
use crate::record::{Field, Record};
use crate::values::{canon, Canon};
use crate::Error;
use remodel_backfill::resolved_type::ResolvedType;
use remodel_backfill::rows::show_opt;
use remodel_model::{FoldedLookup, LoopChoice};
use scylla::value::CqlValue;

/// One side's rows of B: canonical values with their text, and the column names.
type Rows = Vec<Vec<(Canon, String)>>;

impl<'a> Replayer<'a> {
    /// The folded loop whose children the rows of read pattern `id` carry, if any.
    pub fn folded_lookup(&self, id: &str) -> Option<&'a FoldedLookup> {
        let plan: &'a remodel_model::Plan = self.plan;
        plan.design
            .loops
            .iter()
            .find(|d| d.choice == LoopChoice::Folded && d.pattern.as_deref() == Some(id))
            .and_then(|d| d.lookup.as_ref())
    }

    /// Checks every row of `cql` (already found equal to `sql` on the list's own columns) whose
    /// read folds a loop: its collection against B run on Postgres for it. Returns the first
    /// difference and the rows of B compared.
    pub async fn check_folded(
        &mut self,
        p: &Prepared<'_>,
        sql: &SqlRows,
        cql: &CqlRows,
    ) -> Result<(Option<Difference>, u64), Error> {
        let Some(l) = self.folded_lookup(&p.pattern.id) else {
            return Ok((None, 0));
        };
        let key = Field::Col(l.parent_column.clone());
        let coll = Field::Embedded(l.column.clone());
        let unsupported =
            |why: String| Error::Unsupported(format!("the folded {}: {why}", l.column));
        let ki = sql
            .columns
            .iter()
            .position(|(_, f, _)| f.as_ref() == Some(&key))
            .ok_or_else(|| unsupported(format!("the read returns no {} to look up by", key)))?;
        let key_ty = cql
            .types
            .get(&key)
            .ok_or_else(|| unsupported(format!("the plan's CQL returns no {key}")))?
            .clone();
        let entry = match cql.types.get(&coll) {
            Some(ResolvedType::Map(_, v)) => match v.as_ref() {
                ResolvedType::Udt(def) => def.fields.clone(),
                other => return Err(unsupported(format!("entries of type {other:?}"))),
            },
            _ => {
                return Err(unsupported(
                    "the plan's CQL does not return it as a map".into(),
                ))
            }
        };
        let mut compared = 0;
        let mut stmt = None;
        for row in &cql.rows {
            let k = row.get(&key).and_then(Option::as_ref);
            // The row's value as Postgres typed it binds B, as the application bound it.
            let Some(value) = sql.rows.iter().map(|r| &r[ki]).find(|v| {
                v.to_cql(&key_ty)
                    .is_ok_and(|c| canon(c.as_ref()) == canon(k))
            }) else {
                return Err(unsupported(format!(
                    "no SQL row has {key} = {}",
                    show_opt(k)
                )));
            };
            if stmt.is_none() {
                let s = self
                    .pg()
                    .prepare_typed(&l.sql, std::slice::from_ref(&value.ty))
                    .await
                    .map_err(Error::pg(format!("prepare `{}`", l.sql)))?;
                if s.params().len() != 1 || l.param != 1 {
                    return Err(unsupported(format!(
                        "`{}` has parameters besides the row's value",
                        l.sql
                    )));
                }
                stmt = Some(s);
            }
            let Some(s) = &stmt else { continue };
            let (names, fields, want) = self.lookup_rows(l, s, value, &entry, &key_ty).await?;
            let got = entries(row, &coll, &fields, l, k)?;
            compared += want.len() as u64;
            let keys = |r: &Rows| -> Vec<Vec<Canon>> {
                let mut v: Vec<Vec<Canon>> = r
                    .iter()
                    .map(|x| x.iter().map(|(c, _)| c.clone()).collect())
                    .collect();
                v.sort();
                v
            };
            if keys(&want) != keys(&got) {
                let shown = |r: &Rows| -> Vec<String> {
                    r.iter()
                        .take(SHOW_ROWS)
                        .map(|x| render(x, &names))
                        .collect()
                };
                let reason = format!(
                    "the `{}` collection of the row with {key} = {} holds {} entries; the lookup it replaces returns {} rows, not the same",
                    l.column,
                    show_opt(k),
                    got.len(),
                    want.len()
                );
                let d = Difference {
                    reason,
                    sql: shown(&want),
                    cql: shown(&got),
                };
                return Ok((Some(d), compared));
            }
        }
        Ok((None, compared))
    }

    /// B's rows on Postgres for one row's `value`, each converted to the type of the entry field
    /// that holds it (B's foreign key: `key_ty`, the row's value's); with B's column names and
    /// the entry field of each (`None`: the foreign key).
    async fn lookup_rows(
        &mut self,
        l: &FoldedLookup,
        stmt: &tokio_postgres::Statement,
        value: &PgValue,
        entry: &[(String, ResolvedType)],
        key_ty: &ResolvedType,
    ) -> Result<(Vec<String>, Vec<Option<String>>, Rows), Error> {
        let rows = self
            .pg()
            .query(stmt, &[value])
            .await
            .map_err(Error::pg(format!("run `{}`", l.sql)))?;
        let mut names = Vec::new();
        let mut fields = Vec::new();
        let mut types = Vec::new();
        for c in stmt.columns() {
            let src = self.source_of(c).await;
            let (field, ty) = match src {
                Some(s) if s == l.child_column => (None, key_ty.clone()),
                Some(s) if s.table == l.child_column.table => entry
                    .iter()
                    .find(|(n, _)| *n == s.column)
                    .map(|(n, t)| (Some(n.clone()), t.clone()))
                    .ok_or_else(|| {
                        Error::Unsupported(format!(
                            "the folded {}: its entries do not hold {s}, which the lookup returns",
                            l.column
                        ))
                    })?,
                _ => {
                    return Err(Error::Unsupported(format!(
                        "the folded {}: the lookup's output `{}` is no column of {}",
                        l.column,
                        c.name(),
                        l.child_column.table
                    )))
                }
            };
            names.push(c.name().to_string());
            fields.push(field);
            types.push(ty);
        }
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let mut vals = Vec::with_capacity(types.len());
            for (i, ty) in types.iter().enumerate() {
                let v = PgValue::of(r, i)?.to_cql(ty)?;
                vals.push((canon(v.as_ref()), show_opt(v.as_ref())));
            }
            out.push(vals);
        }
        Ok((names, fields, out))
    }
}

/// The entries of `row`'s collection as rows of B's columns, each held by entry field `fields[i]`
/// (`None`: the foreign key, which the entries leave out, is the row's `key`).
fn entries(
    row: &Record,
    coll: &Field,
    fields: &[Option<String>],
    l: &FoldedLookup,
    key: Option<&CqlValue>,
) -> Result<Rows, Error> {
    let map = match row.get(coll).and_then(Option::as_ref) {
        None | Some(CqlValue::Empty) => return Ok(Vec::new()),
        Some(CqlValue::Map(m)) => m,
        Some(other) => {
            return Err(Error::Value(format!(
                "{}: a map expected, {} read",
                l.column,
                show_opt(Some(other))
            )))
        }
    };
    let mut out = Vec::with_capacity(map.len());
    for (_, v) in map {
        let CqlValue::UserDefinedType { fields: held, .. } = v else {
            return Err(Error::Value(format!("{}: an entry is not a UDT", l.column)));
        };
        let mut vals = Vec::with_capacity(fields.len());
        for f in fields {
            let v = match f {
                Some(n) => held
                    .iter()
                    .find(|(h, _)| h == n)
                    .and_then(|(_, v)| v.as_ref()),
                None => key,
            };
            vals.push((canon(v), show_opt(v)));
        }
        out.push(vals);
    }
    Ok(out)
}
