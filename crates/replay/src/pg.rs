//! Postgres values in binary form, bound as statement parameters exactly as they were read (no
//! text round trip), and the parameters of one sample.

use crate::Error;
use bytes::BytesMut;
use remodel_backfill::convert::{decode, PgKind, RawValue};
use remodel_backfill::resolved_type::ResolvedType;
use scylla::value::CqlValue;
use std::error::Error as StdError;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use tokio_postgres::{Client, Row};

/// One Postgres value in binary form with its type.
#[derive(Debug, Clone, PartialEq)]
pub struct PgValue {
    /// Its Postgres type.
    pub ty: Type,
    /// The binary value; `None` is NULL.
    pub raw: Option<Vec<u8>>,
}

impl ToSql for PgValue {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        if *ty != self.ty {
            return Err(format!("a {} value bound where {ty} is expected", self.ty).into());
        }
        match &self.raw {
            None => Ok(IsNull::Yes),
            Some(b) => {
                out.extend_from_slice(b);
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl PgValue {
    /// Column `i` of `row`, whatever its type.
    pub fn of(row: &Row, i: usize) -> Result<PgValue, Error> {
        let raw: RawValue<'_> = row
            .try_get(i)
            .map_err(|e| Error::Value(format!("column {i}: {e}")))?;
        Ok(PgValue {
            ty: row.columns()[i].type_().clone(),
            raw: raw.0.map(<[u8]>::to_vec),
        })
    }

    /// The value as a CQL value of type `to`, converted as the backfill converts it.
    pub fn to_cql(&self, to: &ResolvedType) -> Result<Option<CqlValue>, Error> {
        let Some(raw) = &self.raw else {
            return Ok(None);
        };
        let kind = PgKind::of(&self.ty)
            .filter(|k| k.decodes_to(to))
            .ok_or_else(|| {
                Error::Value(format!(
                    "Postgres {} has no conversion to CQL {to:?}",
                    self.ty
                ))
            })?;
        decode(&kind, raw, to)
            .map(Some)
            .map_err(|e| Error::Value(e.0))
    }
}

/// The values of `$1 … $n` of one sample, typed as the statement's parameters, with their text
/// (as Postgres prints them) for reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// The values, `$1` first.
    pub values: Vec<PgValue>,
    /// Their text; `NULL` for NULL.
    pub text: Vec<String>,
}

impl Params {
    /// References for a driver call.
    pub fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|v| v as &(dyn ToSql + Sync))
            .collect()
    }

    /// The types, for `prepare_typed`.
    pub fn types(&self) -> Vec<Type> {
        self.values.iter().map(|v| v.ty.clone()).collect()
    }

    /// `$1='shelf-3', $2=20`.
    pub fn show(&self) -> String {
        self.text
            .iter()
            .enumerate()
            .map(|(i, t)| format!("${}={t}", i + 1))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Parameters of types `types` from their text (`None`: NULL), each cast by Postgres.
    pub async fn from_text(
        client: &Client,
        types: &[Type],
        texts: &[Option<&str>],
    ) -> Result<Params, Error> {
        if types.len() != texts.len() {
            return Err(Error::Plan(format!(
                "{} values given for {} parameters",
                texts.len(),
                types.len()
            )));
        }
        if types.is_empty() {
            return Ok(Params::default());
        }
        let items: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(i, t)| format!("(($1::text[])[{}])::{}", i + 1, type_name(t)))
            .collect();
        let items_text: Vec<String> = items.iter().map(|i| format!("({i})::text")).collect();
        let sql = format!("SELECT {}, {}", items.join(", "), items_text.join(", "));
        let owned: Vec<Option<String>> = texts.iter().map(|t| t.map(str::to_string)).collect();
        let row = client
            .query_one(&sql, &[&owned])
            .await
            .map_err(Error::pg("cast the parameters"))?;
        read_params(&row, 0, types.len())
    }
}

/// `n` parameters from columns `first…` of `row` (values) and `first + n…` (their text).
pub fn read_params(row: &Row, first: usize, n: usize) -> Result<Params, Error> {
    let mut out = Params::default();
    for i in 0..n {
        out.values.push(PgValue::of(row, first + i)?);
        let text: Option<String> = row
            .try_get(first + n + i)
            .map_err(|e| Error::Value(format!("parameter text: {e}")))?;
        out.text.push(text.unwrap_or_else(|| "NULL".into()));
    }
    Ok(out)
}

/// A type as SQL names it, schema-qualified and quoted (`"pg_catalog"."int4"`, `"public"."mood"`).
pub fn type_name(t: &Type) -> String {
    format!(
        "{}.{}",
        remodel_model::ident::quote(t.schema()),
        remodel_model::ident::quote(t.name())
    )
}
