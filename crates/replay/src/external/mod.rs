//! `--executor COMMAND`: another program executes the plan — the access layer `remodel codegen`
//! generates, or any executor of `plan.json` — and replay compares what it answers with Postgres
//! exactly as it compares its own executor's rows.
//!
//! The protocol: replay starts `sh -c COMMAND` once (with `REMODEL_CQL` and `REMODEL_KEYSPACE`
//! in its environment: the target and the keyspace replayed in) and writes one JSON request a
//! line to its stdin; the program answers each with one JSON line on its stdout:
//!
//! ```text
//! {"pattern": "q1", "params": [...], "now": "2026-03-29T01:30:00Z", "drawn": {...}, "computed": [...]}
//! {"rows": [[...], ...]}      a read: its rows, each the SQL result's columns in order
//! {"done": true}              a write: its whole path was sent
//! {"error": "..."}            it failed: the sample's difference
//! ```
//!
//! `params` are the sample's `$1…` as Postgres' `to_json` writes them. What only the application
//! knows is sent too: `now` (the execution's clock: replay's), `drawn` (for an INSERT, the value
//! Postgres drew for each column whose new value is a sequence's or a random UUID, by
//! `table.column`) and `computed` (each application-computed value of the pattern, `sql`, `type`
//! and `value`, as Postgres computes it with these parameters). A row value is JSON as Postgres
//! writes it (a decimal as a number or its text, an instant in ISO 8601, bytes as `\x` hex), read
//! as the type of the read's result column (`columns[].type`, an `epoch_micros` column as the
//! instant it stands for).

pub mod process;

pub use process::External;

use crate::compare::{cql_for_pg, SqlRows};
use crate::exec::{CqlRows, Prepared, Replayer};
use crate::pg::Params;
use crate::record::Record;
use crate::write::{CqlWrite, PgWrite};
use crate::Error;
use remodel_backfill::resolved_type::{Native, ResolvedType, TypeParser};
use remodel_model::{EncodedForm, Expr, Function, QueryMapping, ScalarType, WritePath};
use scylla::value::CqlValue;
use serde_json::{json, Value};

impl Replayer<'_> {
    /// The sample's parameters as JSON (Postgres' `to_json` of each, in the plan's zone).
    async fn params_json(&self, params: &Params) -> Result<Value, Error> {
        if params.values.is_empty() {
            return Ok(json!([]));
        }
        let items: Vec<String> = (1..=params.values.len()).map(|i| format!("${i}")).collect();
        let sql = format!("SELECT json_build_array({})::text", items.join(", "));
        let row = self
            .evaluator()
            .query_typed_one(&sql, &crate::exec::typed(params))
            .await
            .map_err(Error::pg("the parameters as JSON"))?;
        let text: String = row.get(0);
        serde_json::from_str(&text).map_err(|e| Error::Value(e.to_string()))
    }

    /// Every application-computed value of the pattern, as Postgres computes it.
    async fn computed_json(&self, exprs: &[&Expr], params: &Params) -> Result<Value, Error> {
        let mut out: Vec<Value> = Vec::new();
        for e in exprs {
            let mut found: Vec<(String, Option<ScalarType>)> = Vec::new();
            e.walk(&mut |x| {
                if let Expr::Computed { sql, ty, .. } = x {
                    found.push((sql.clone(), *ty));
                }
            });
            for (sql, ty) in found {
                if out.iter().any(|c| c["sql"] == sql.as_str()) {
                    continue;
                }
                let text = format!("SELECT to_json(({sql}))::text");
                let row = self
                    .evaluator()
                    .query_typed_one(&text, &crate::exec::typed(params))
                    .await
                    .map_err(Error::pg(format!("evaluate `{sql}`")))?;
                let value: Option<String> = row.get(0);
                let value: Value = match value {
                    Some(v) => serde_json::from_str(&v).map_err(|e| Error::Value(e.to_string()))?,
                    None => Value::Null,
                };
                out.push(json!({"sql": sql, "type": json_type(ty), "value": value}));
            }
        }
        Ok(Value::Array(out))
    }

    /// Runs read `q` of `p` through the executor; its rows as replay's executor reads them.
    pub(crate) async fn read_external(
        &mut self,
        p: &Prepared<'_>,
        q: &QueryMapping,
        params: &Params,
        sql: &SqlRows,
    ) -> Result<CqlRows, Error> {
        let exprs = q.exprs();
        let request = json!({
            "pattern": p.pattern.id,
            "params": self.params_json(params).await?,
            "now": self.now_text(),
            "computed": self.computed_json(&exprs, params).await?,
        });
        let ex = self.external_mut()?;
        let (answer, elapsed) = ex.call(&request).await?;
        let rows = answer
            .get("rows")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Executor(format!("a read answered without rows: {answer}")))?;
        let types = self.answer_types(q, sql)?;
        let mut out = CqlRows {
            elapsed,
            ..CqlRows::default()
        };
        for row in rows {
            let values = row
                .as_array()
                .ok_or_else(|| Error::Executor(format!("a row that is not a list: {row}")))?;
            if values.len() != sql.columns.len() {
                return Err(Error::Executor(format!(
                    "a row of {} values where the SQL returns {} columns: {row}",
                    values.len(),
                    sql.columns.len()
                )));
            }
            let mut rec = Record::new();
            for (v, ((_, field, _), (ty, micros))) in
                values.iter().zip(sql.columns.iter().zip(&types))
            {
                let Some(f) = field else { continue };
                rec.insert(f.clone(), value_of(v, ty, *micros)?);
                out.types.insert(f.clone(), ty.clone());
            }
            out.rows.push(rec);
        }
        for ((_, field, _), (ty, _)) in sql.columns.iter().zip(&types) {
            if let Some(f) = field {
                out.types.insert(f.clone(), ty.clone());
            }
        }
        Ok(out)
    }

    /// The CQL type each result column is read as (and whether it is an `epoch_micros` one):
    /// the read's `columns[].type`, else the CQL type of the SQL column's Postgres type.
    fn answer_types(
        &self,
        q: &QueryMapping,
        sql: &SqlRows,
    ) -> Result<Vec<(ResolvedType, bool)>, Error> {
        let parser = TypeParser::new(&self.plan.design.keyspace.name, &self.plan.design.types);
        let mut out = Vec::with_capacity(sql.columns.len());
        for (i, (name, _, pg)) in sql.columns.iter().enumerate() {
            let stated = q
                .columns
                .get(i)
                .and_then(|c| Some((c.cql_type.as_ref()?, c.encoding)));
            out.push(match stated {
                Some((_, Some(e))) if e.form() == EncodedForm::Micros => {
                    (ResolvedType::Native(Native::BigInt), true)
                }
                // An integer or a date kept as a bigint: the executor answers the value itself.
                Some((_, Some(e))) => (crate::values::encoded_plain_type(e.form()), false),
                Some((t, None)) => (
                    parser.resolve(t).map_err(|e| Error::Plan(e.to_string()))?,
                    false,
                ),
                None => (
                    cql_for_pg(pg).ok_or_else(|| {
                        Error::Unsupported(format!("result column `{name}` of Postgres type {pg}"))
                    })?,
                    false,
                ),
            });
        }
        Ok(out)
    }

    /// Runs write path `w` of `p` through the executor (after Postgres ran it: `pg`).
    pub(crate) async fn write_external(
        &mut self,
        p: &Prepared<'_>,
        w: &WritePath,
        params: &Params,
        pg: &PgWrite,
    ) -> Result<CqlWrite, Error> {
        let exprs = w.exprs();
        let request = json!({
            "pattern": p.pattern.id,
            "params": self.params_json(params).await?,
            "now": pg.now.clone().unwrap_or_else(|| self.now_text()),
            "drawn": drawn(p, w, pg)?,
            "computed": self.computed_json(&exprs, params).await?,
        });
        let ex = self.external_mut()?;
        let (answer, elapsed) = ex.call(&request).await?;
        if answer.get("done") != Some(&Value::Bool(true)) {
            return Err(Error::Executor(format!(
                "a write answered neither done nor an error: {answer}"
            )));
        }
        Ok(CqlWrite {
            elapsed,
            ..CqlWrite::default()
        })
    }
}

/// For an INSERT: the value Postgres drew for each written column whose new value is a
/// sequence's or a random UUID (by `table.column`), from the row it returned.
fn drawn(p: &Prepared<'_>, w: &WritePath, pg: &PgWrite) -> Result<Value, Error> {
    let mut out = serde_json::Map::new();
    let Some(row) = pg.json.first() else {
        return Ok(Value::Object(out));
    };
    let row: Value = serde_json::from_str(row).map_err(|e| Error::Value(e.to_string()))?;
    let Some(table) = p.pattern.analysis.write.as_ref().map(|i| i.table.as_str()) else {
        return Ok(Value::Object(out));
    };
    for v in w.values.iter().filter(|v| v.column.table == table) {
        let mut by_database = false;
        v.value.walk(&mut |x| {
            by_database |= matches!(
                x,
                Expr::Call {
                    function: Function::Nextval | Function::GenRandomUuid,
                    ..
                }
            );
        });
        if let (true, Some(x)) = (by_database, row.get(&v.column.column)) {
            out.insert(format!("{}.{}", v.column.table, v.column.column), x.clone());
        }
    }
    Ok(Value::Object(out))
}

/// A JSON row value as a value of `ty` (`micros`: an instant kept as epoch microseconds).
fn value_of(v: &Value, ty: &ResolvedType, micros: bool) -> Result<Option<CqlValue>, Error> {
    if v.is_null() {
        return Ok(None);
    }
    if micros {
        let text = v
            .as_str()
            .ok_or_else(|| Error::Executor(format!("an instant expected, {v} answered")))?;
        let us = epoch_micros(text)
            .ok_or_else(|| Error::Executor(format!("`{text}` is not an ISO-8601 instant")))?;
        return Ok(Some(CqlValue::BigInt(us)));
    }
    remodel_backfill::json::from_json(&v.to_string(), ty)
        .map(Some)
        .map_err(|e| Error::Executor(format!("{v} as {ty:?}: {}", e.0)))
}

/// An ISO-8601 instant (`2026-03-29T01:30:00.000123+02:00`, `…Z`, no offset: UTC) as
/// microseconds since the Unix epoch.
pub fn epoch_micros(text: &str) -> Option<i64> {
    remodel_model::time::parse_timestamp(text)?.utc_micros()
}

/// The executor's name of an application-computed value's type.
fn json_type(ty: Option<ScalarType>) -> &'static str {
    use ScalarType as S;
    match ty {
        Some(S::Boolean) => "bool",
        Some(S::Smallint | S::Integer | S::Bigint) => "int",
        Some(S::Numeric) => "decimal",
        Some(S::Real | S::Double) => "float",
        Some(S::Text | S::Json) => "text",
        Some(S::Date) => "date",
        Some(S::Time) => "time",
        Some(S::Timestamp) => "timestamp",
        Some(S::Timestamptz) => "timestamptz",
        Some(S::Interval) => "interval",
        Some(S::Uuid) => "uuid",
        Some(S::Bytea) => "bytes",
        None => "any",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_read_to_the_microsecond() {
        assert_eq!(epoch_micros("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(epoch_micros("1970-01-01T00:00:00.000001+00:00"), Some(1));
        assert_eq!(epoch_micros("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(epoch_micros("1969-12-31T23:59:59.999999"), Some(-1));
        assert_eq!(
            epoch_micros("2026-03-29 01:30:00-02:30"),
            epoch_micros("2026-03-29T04:00:00Z")
        );
        assert_eq!(epoch_micros("not a time"), None);
    }
}
