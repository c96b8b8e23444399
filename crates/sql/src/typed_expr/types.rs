//! SQL types as the plan's expressions know them ([`ScalarType`]), from sqlparser's typed
//! `DataType` (casts) or a schema's type text (columns), and the types Postgres gives the
//! results of the operators and functions the converter accepts.

use remodel_model::{BinaryOp, ScalarType};
use sqlparser::ast::{DataType, ExactNumberInfo, TimezoneInfo};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// The type of a value while converting: a scalar type, an enum label, or unknown (an untyped
/// string literal, a parameter, NULL, which Postgres types from their neighbours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A type of the model.
    Scalar(ScalarType),
    /// A value of a Postgres enum type: equal to its label, ordered by declaration (not
    /// modelled: only `=`, `<>`, `IN` and `IS NULL` are stated on it).
    Enum,
    /// Not typed yet (`'…'`, `$n`, `NULL`).
    Unknown,
}

/// How a cast's target type may be stated: strictly (a type modifier changes the value:
/// `numeric(10,2)` rounds, `varchar(3)` cuts, `timestamp(0)` rounds) or as a column's type (its
/// stored values already satisfy the modifier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strictness {
    Cast,
    Column,
}

/// The model's type for a data type; `Err` with the reason when there is none.
pub(crate) fn scalar_type(dt: &DataType, how: Strictness) -> Result<ScalarType, String> {
    use DataType as D;
    let modifier = |ok: bool, t: ScalarType| {
        if ok || how == Strictness::Column {
            Ok(t)
        } else {
            Err(format!(
                "a cast to {dt} changes the value (type modifier), which the model does not state"
            ))
        }
    };
    let no_info = |i: &ExactNumberInfo| matches!(i, ExactNumberInfo::None);
    match dt {
        D::Bool | D::Boolean => Ok(ScalarType::Boolean),
        D::SmallInt(None) | D::Int2(None) => Ok(ScalarType::Smallint),
        D::Int(None) | D::Integer(None) | D::Int4(None) => Ok(ScalarType::Integer),
        D::BigInt(None) | D::Int8(None) => Ok(ScalarType::Bigint),
        D::Numeric(i) | D::Decimal(i) | D::Dec(i) => modifier(no_info(i), ScalarType::Numeric),
        D::Real | D::Float4 => Ok(ScalarType::Real),
        D::DoublePrecision | D::Float8 => Ok(ScalarType::Double),
        D::Double(ExactNumberInfo::None) | D::Float(ExactNumberInfo::None) => {
            Ok(ScalarType::Double)
        }
        D::Float(ExactNumberInfo::Precision(p)) if (1..=24).contains(p) => Ok(ScalarType::Real),
        D::Float(ExactNumberInfo::Precision(p)) if (25..=53).contains(p) => Ok(ScalarType::Double),
        D::Text => Ok(ScalarType::Text),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) => {
            modifier(l.is_none(), ScalarType::Text)
        }
        // `char(n)` pads and compares without trailing blanks: a column holds padded text.
        D::Char(_) | D::Character(_) if how == Strictness::Column => Ok(ScalarType::Text),
        D::Date => Ok(ScalarType::Date),
        D::Time(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            modifier(p.is_none(), ScalarType::Time)
        }
        D::Timestamp(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            modifier(p.is_none(), ScalarType::Timestamp)
        }
        D::Timestamp(p, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => {
            modifier(p.is_none(), ScalarType::Timestamptz)
        }
        D::Interval { fields, precision } => modifier(
            fields.is_none() && precision.is_none(),
            ScalarType::Interval,
        ),
        D::Uuid => Ok(ScalarType::Uuid),
        D::Bytea => Ok(ScalarType::Bytea),
        D::JSONB => Ok(ScalarType::Json),
        // `json` keeps the text as written; the model's JSON is `jsonb`'s.
        D::JSON if how == Strictness::Column => Ok(ScalarType::Json),
        D::Custom(name, mods) => {
            let n = name.to_string().to_ascii_lowercase();
            let t = match n.as_str() {
                "int2" | "smallserial" | "serial2" => ScalarType::Smallint,
                "int4" | "serial" | "serial4" => ScalarType::Integer,
                "int8" | "bigserial" | "serial8" => ScalarType::Bigint,
                "float4" => ScalarType::Real,
                "float8" => ScalarType::Double,
                "bool" => ScalarType::Boolean,
                "timestamptz" => ScalarType::Timestamptz,
                "varchar" | "bpchar" if how == Strictness::Column => ScalarType::Text,
                "varchar" if mods.is_empty() => ScalarType::Text,
                _ => return Err(format!("type {dt} is not one the plan's expressions know")),
            };
            modifier(mods.is_empty(), t)
        }
        _ => Err(format!("type {dt} is not one the plan's expressions know")),
    }
}

/// A column's type from the schema's text (`timestamp with time zone`, `varchar(20)`,
/// `bigserial`): `Err` for types outside the model (arrays, `citext`, `inet`, enums, domains).
pub fn column_type(sql_type: &str) -> Result<ScalarType, String> {
    let dt = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql_type)
        .and_then(|mut p| {
            let dt = p.parse_data_type()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(dt)
        })
        .map_err(|_| format!("type {sql_type} is not one the plan's expressions know"))?;
    scalar_type(&dt, Strictness::Column)
}

/// The category of a scalar type for comparisons and arithmetic.
pub(crate) fn is_number(t: ScalarType) -> bool {
    use ScalarType as S;
    matches!(
        t,
        S::Smallint | S::Integer | S::Bigint | S::Numeric | S::Real | S::Double
    )
}

fn is_integer(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::Smallint | ScalarType::Integer | ScalarType::Bigint
    )
}

fn int_rank(t: ScalarType) -> u8 {
    match t {
        ScalarType::Smallint => 1,
        ScalarType::Integer => 2,
        _ => 3,
    }
}

/// The type of numbers `a` and `b` combined by arithmetic (and the common type of a
/// `coalesce`): integers widen, any `numeric` makes `numeric`, any float `double precision`
/// (`real` with `real` stays `real`).
pub(crate) fn numeric_union(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType as S;
    if is_integer(a) && is_integer(b) {
        return if int_rank(a) >= int_rank(b) { a } else { b };
    }
    match (a, b) {
        (S::Real, S::Real) => S::Real,
        (S::Real | S::Double, _) | (_, S::Real | S::Double) => S::Double,
        _ => S::Numeric,
    }
}

/// The result type of `a op b` for an arithmetic or text operator, as Postgres resolves it;
/// `None` when Postgres has no such operator or the model does not state it.
pub(crate) fn arithmetic(op: BinaryOp, a: ScalarType, b: ScalarType) -> Option<ScalarType> {
    use BinaryOp as O;
    use ScalarType as S;
    if op == O::Concat {
        return match (a, b) {
            (S::Bytea, S::Bytea) => Some(S::Bytea),
            (S::Json, _) | (_, S::Json) | (S::Bytea, _) | (_, S::Bytea) => None,
            (S::Text, _) | (_, S::Text) => Some(S::Text),
            _ => None,
        };
    }
    if is_number(a) && is_number(b) {
        let t = numeric_union(a, b);
        return match op {
            O::Mod if !(is_integer(t) || t == S::Numeric) => None,
            O::Add | O::Sub | O::Mul | O::Div | O::Mod => Some(t),
            _ => None,
        };
    }
    let int = is_integer;
    Some(match (op, a, b) {
        (O::Add, S::Date, x) | (O::Add, x, S::Date) if int(x) && x != S::Bigint => S::Date,
        (O::Sub, S::Date, x) if int(x) && x != S::Bigint => S::Date,
        (O::Sub, S::Date, S::Date) => S::Integer,
        (O::Add, S::Date, S::Interval) | (O::Add, S::Interval, S::Date) => S::Timestamp,
        (O::Sub, S::Date, S::Interval) => S::Timestamp,
        (O::Add, t, S::Interval) | (O::Add, S::Interval, t)
            if matches!(t, S::Timestamp | S::Timestamptz | S::Time | S::Interval) =>
        {
            t
        }
        (O::Sub, t, S::Interval)
            if matches!(t, S::Timestamp | S::Timestamptz | S::Time | S::Interval) =>
        {
            t
        }
        (O::Sub, S::Timestamp, S::Timestamp) | (O::Sub, S::Timestamptz, S::Timestamptz) => {
            S::Interval
        }
        (O::Mul, S::Interval, x) | (O::Mul, x, S::Interval) if is_number(x) => S::Interval,
        (O::Div, S::Interval, x) if is_number(x) => S::Interval,
        _ => return None,
    })
}

/// The type Postgres gives an untyped operand (`$n`, `'…'`) of `op` whose other operand is of
/// type `known` (on the left when `known_left`): the same type when that operator exists
/// (`tz - $1`: `timestamptz`), else the one operator taking `known` there (`tz + $1`: an
/// interval; `iv * $1`: a double); `None` when Postgres could not choose (`date + $1`).
pub(crate) fn untyped_operand(
    op: BinaryOp,
    known: ScalarType,
    known_left: bool,
) -> Option<ScalarType> {
    use BinaryOp as O;
    use ScalarType as S;
    if arithmetic(op, known, known).is_some() {
        return Some(known);
    }
    match (op, known, known_left) {
        (O::Add, S::Timestamp | S::Timestamptz | S::Time, _) => Some(S::Interval),
        (O::Sub, S::Interval, false) => Some(S::Interval),
        (O::Mul, S::Interval, _) | (O::Div, S::Interval, true) => Some(S::Double),
        _ => None,
    }
}

/// True when values of `a` and `b` compare (`=`, `<`, …) in Postgres without a cast the model
/// would have to state: the same type, numbers with numbers, and dates with timestamps of
/// either kind (a date or timestamp against a `timestamptz` is read in the plan's zone).
pub(crate) fn comparable(a: ScalarType, b: ScalarType) -> bool {
    use ScalarType as S;
    let time = |t| matches!(t, S::Date | S::Timestamp | S::Timestamptz);
    a == b || (is_number(a) && is_number(b)) || (time(a) && time(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_from_schema_text() {
        for (text, want) in [
            ("timestamp with time zone", Some(ScalarType::Timestamptz)),
            ("timestamptz", Some(ScalarType::Timestamptz)),
            (
                "timestamp(3) without time zone",
                Some(ScalarType::Timestamp),
            ),
            ("character varying(255)", Some(ScalarType::Text)),
            ("char(2)", Some(ScalarType::Text)),
            ("numeric(10,2)", Some(ScalarType::Numeric)),
            ("bigserial", Some(ScalarType::Bigint)),
            ("int", Some(ScalarType::Integer)),
            ("double precision", Some(ScalarType::Double)),
            ("float", Some(ScalarType::Double)),
            ("jsonb", Some(ScalarType::Json)),
            ("uuid", Some(ScalarType::Uuid)),
            ("text[]", None),
            ("citext", None),
            ("mpaa_rating", None),
        ] {
            assert_eq!(column_type(text).ok(), want, "{text}");
        }
    }
}
