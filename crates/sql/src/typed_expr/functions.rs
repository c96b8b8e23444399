//! Function calls: the fixed set of [`Function`]s, the clock, and the SQL-standard forms
//! sqlparser parses apart (`EXTRACT`, `SUBSTRING … FROM … FOR`, `TRIM(BOTH …)`, `CEIL`).

use super::interval::Unit;
use super::types::is_number;
use super::{common_type, fold, string_value, strip_nested, Columns, Converter, Ty, Typed};
use remodel_model::{Expr, Function, Literal, ScalarType};
use sqlparser::ast::{self as sql, DateTimeField, FunctionArg, FunctionArgExpr, FunctionArguments};

/// Functions of other databases (or of Postgres) that are not in the model, named so the
/// refusal says what they are.
const FOREIGN: &[(&str, &str)] = &[
    (
        "to_days",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "datediff",
        "a MySQL/SQL Server function (Postgres has none of that name)",
    ),
    (
        "date_add",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "date_sub",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "curdate",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "unix_timestamp",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "ifnull",
        "a MySQL function (Postgres has none of that name)",
    ),
    (
        "isnull",
        "a SQL Server function (Postgres has none of that name)",
    ),
    (
        "getdate",
        "a SQL Server function (Postgres has none of that name)",
    ),
    (
        "statement_timestamp",
        "the statement's start, not the transaction's (not modelled)",
    ),
    (
        "clock_timestamp",
        "the wall clock at each call (not modelled)",
    ),
    ("timeofday", "the wall clock as text (not modelled)"),
    ("current_time", "a time with time zone (not modelled)"),
    ("random", "a random number (not modelled)"),
];

/// Aggregate functions: values of groups of rows, never of one row.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "array_agg",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "json_agg",
    "jsonb_agg",
];

impl Converter {
    /// A function call (`lower(x)`, `now()`, `current_date`, `nextval('s'::regclass)`).
    pub(super) fn function(
        &mut self,
        f: &sql::Function,
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let name = function_name(&f.name)?;
        if AGGREGATES.contains(&name.as_str()) {
            return Err(format!(
                "{name}(…) is an aggregate (computed over groups, not of one row)"
            ));
        }
        if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
            return Err(format!("{name}(…) with OVER/FILTER/WITHIN GROUP"));
        }
        let args: Option<Vec<&sql::Expr>> = match &f.args {
            FunctionArguments::None => None,
            FunctionArguments::List(l) => {
                if l.duplicate_treatment.is_some() || !l.clauses.is_empty() {
                    return Err(format!("{name}(…) with DISTINCT or ORDER BY"));
                }
                let mut out = Vec::with_capacity(l.args.len());
                for a in &l.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => out.push(x),
                        _ => return Err(format!("{name}(…) with a named or * argument")),
                    }
                }
                Some(out)
            }
            FunctionArguments::Subquery(_) => return Err(format!("{name}(SELECT …)")),
        };
        let clock = |e: Expr, t: ScalarType| Ok((e, Ty::Scalar(t)));
        let cast_now = |to| Expr::Cast {
            arg: Box::new(Expr::Now),
            to,
        };
        match (name.as_str(), args.as_deref()) {
            ("current_timestamp", None)
            | ("now", Some([]))
            | ("transaction_timestamp", Some([])) => clock(Expr::Now, ScalarType::Timestamptz),
            ("localtimestamp", None) => {
                clock(cast_now(ScalarType::Timestamp), ScalarType::Timestamp)
            }
            ("localtime", None) => clock(cast_now(ScalarType::Time), ScalarType::Time),
            ("current_date", None) => clock(Expr::CurrentDate, ScalarType::Date),
            ("current_timestamp" | "localtimestamp" | "localtime", Some(_)) => Err(format!(
                "{name}(precision) rounds the clock, which the model does not state"
            )),
            (_, args) => {
                let args = args.unwrap_or_default();
                self.named_call(&name, args, want, cols)
            }
        }
    }

    fn named_call(
        &mut self,
        name: &str,
        args: &[&sql::Expr],
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        use Function as F;
        let f = match name {
            "lower" => F::Lower,
            "upper" => F::Upper,
            "length" | "char_length" | "character_length" => F::Length,
            "btrim" => F::Trim,
            "substr" => F::Substr,
            "abs" => F::Abs,
            "round" => F::Round,
            "floor" => F::Floor,
            "ceil" | "ceiling" => F::Ceil,
            "coalesce" => F::Coalesce,
            "nullif" => F::Nullif,
            "greatest" => F::Greatest,
            "least" => F::Least,
            "date_trunc" => F::DateTrunc,
            "date_part" => return self.date_part(args, cols),
            "gen_random_uuid" | "uuid_generate_v4" => F::GenRandomUuid,
            "nextval" => return nextval(args),
            other => {
                let why = FOREIGN
                    .iter()
                    .find(|(n, _)| *n == other)
                    .map_or("not one the plan's expressions define", |(_, w)| w);
                return Err(format!("function {other}: {why}"));
            }
        };
        if matches!(f, F::Coalesce | F::Greatest | F::Least | F::Nullif) {
            return self.generic(f, args, want, cols);
        }
        self.call(f, args, cols)
    }

    /// A call of a function with fixed argument types.
    pub(super) fn call(
        &mut self,
        f: Function,
        args: &[&sql::Expr],
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        use Function as F;
        use ScalarType as S;
        let arity = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(format!("{}() with {} arguments", f.name(), args.len()))
            }
        };
        let mut out = Vec::with_capacity(args.len());
        let result = match f {
            F::Lower | F::Upper | F::Length | F::Trim => {
                arity(args.len() == 1 || (f == F::Trim && args.len() == 2))?;
                for a in args {
                    out.push(self.arg(a, S::Text, |t| t == S::Text, cols)?);
                }
                if f == F::Length {
                    S::Integer
                } else {
                    S::Text
                }
            }
            F::Substr => {
                arity(args.len() == 2 || args.len() == 3)?;
                out.push(self.arg(args[0], S::Text, |t| t == S::Text, cols)?);
                for a in &args[1..] {
                    let int = |t| matches!(t, S::Smallint | S::Integer);
                    out.push(self.arg(a, S::Integer, int, cols)?);
                }
                S::Text
            }
            F::Abs | F::Round | F::Floor | F::Ceil => {
                arity(args.len() == 1 || (f == F::Round && args.len() == 2))?;
                let (x, t) = self.conv(args[0], None, cols)?;
                let t = match t {
                    Ty::Scalar(t) if is_number(t) => t,
                    _ => {
                        return Err(format!(
                            "{}({}) of a value that is not a number",
                            f.name(),
                            args[0]
                        ))
                    }
                };
                out.push(x);
                if let Some(d) = args.get(1) {
                    if t != S::Numeric {
                        return Err("round(x, digits) of a value that is not numeric".into());
                    }
                    out.push(self.arg(
                        d,
                        S::Integer,
                        |t| matches!(t, S::Smallint | S::Integer),
                        cols,
                    )?);
                }
                match (f, t) {
                    (F::Abs, t) => t,
                    // Integers go through double precision (Postgres' preferred numeric type).
                    (_, S::Numeric) => S::Numeric,
                    _ => S::Double,
                }
            }
            F::DateTrunc => {
                arity(args.len() == 2)?;
                out.push(unit_literal(args[0], trunc_unit)?);
                let (x, t) = self.conv(args[1], None, cols)?;
                out.push(x);
                match t {
                    Ty::Scalar(t @ (S::Timestamp | S::Timestamptz | S::Interval)) => t,
                    // A date is truncated as the instant it starts, in the plan's zone.
                    Ty::Scalar(S::Date) => S::Timestamptz,
                    _ => {
                        return Err(format!(
                            "date_trunc of {}, whose type is not a time",
                            args[1]
                        ))
                    }
                }
            }
            F::GenRandomUuid => {
                arity(args.is_empty())?;
                S::Uuid
            }
            F::Coalesce | F::Nullif | F::Greatest | F::Least | F::DatePart | F::Nextval => {
                unreachable!("handled by their own readers")
            }
        };
        Ok((
            Expr::Call {
                function: f,
                args: out,
            },
            Ty::Scalar(result),
        ))
    }

    /// One argument of a fixed type: an untyped one takes it; a typed one must satisfy `ok`.
    fn arg(
        &mut self,
        a: &sql::Expr,
        want: ScalarType,
        ok: impl Fn(ScalarType) -> bool,
        cols: &dyn Columns,
    ) -> Result<Expr, String> {
        let (x, t) = self.conv(a, Some(want), cols)?;
        match t {
            Ty::Scalar(t) if ok(t) => Ok(x),
            Ty::Unknown => Ok(x),
            Ty::Enum if want == ScalarType::Text => Err(format!(
                "{a}: an enum where text is needed (Postgres has no such function)"
            )),
            Ty::Scalar(t) => Err(format!("{a} is {} where {} is needed", t.sql(), want.sql())),
            Ty::Enum => Err(format!("{a} is an enum where {} is needed", want.sql())),
        }
    }

    /// `coalesce`, `nullif`, `greatest`, `least`: one type for all arguments (untyped ones
    /// take it; all untyped: `want`, else text).
    fn generic(
        &mut self,
        f: Function,
        args: &[&sql::Expr],
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let ok = match f {
            Function::Nullif => args.len() == 2,
            _ => !args.is_empty(),
        };
        if !ok {
            return Err(format!("{}() with {} arguments", f.name(), args.len()));
        }
        let mut common: Option<ScalarType> = None;
        for a in args {
            if let (_, Ty::Scalar(t)) = self.conv(a, None, cols)? {
                common = Some(match common {
                    None => t,
                    Some(c) => common_type(c, t)?,
                });
            }
        }
        let t = common.or(want).unwrap_or(ScalarType::Text);
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            out.push(self.conv(a, Some(t), cols)?.0);
        }
        Ok((
            Expr::Call {
                function: f,
                args: out,
            },
            Ty::Scalar(t),
        ))
    }

    /// `EXTRACT(field FROM x)`: `date_part` with extract's `numeric` result.
    pub(super) fn extract(
        &mut self,
        field: &DateTimeField,
        x: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let name = extract_field(field)?;
        self.part(name, x, cols)
    }

    /// `date_part('field', x)`: as `EXTRACT`, cast to `double precision` (its result type).
    fn date_part(&mut self, args: &[&sql::Expr], cols: &dyn Columns) -> Result<Typed, String> {
        let [field, x] = args else {
            return Err(format!("date_part() with {} arguments", args.len()));
        };
        let Expr::Literal {
            value: Literal::Text { value },
        } = unit_literal(field, part_field)?
        else {
            unreachable!("unit_literal returns text")
        };
        let (e, _) = self.part(leak_field(&value)?, x, cols)?;
        let cast = Expr::Cast {
            arg: Box::new(e),
            to: ScalarType::Double,
        };
        Ok((cast, Ty::Scalar(ScalarType::Double)))
    }

    fn part(&mut self, field: &str, x: &sql::Expr, cols: &dyn Columns) -> Result<Typed, String> {
        use ScalarType as S;
        let (a, t) = self.conv(x, None, cols)?;
        match t {
            Ty::Scalar(S::Date | S::Time | S::Timestamp | S::Timestamptz | S::Interval) => {}
            _ => {
                return Err(format!(
                    "EXTRACT({field} FROM {x}): not a date, time or interval"
                ))
            }
        }
        let e = Expr::Call {
            function: Function::DatePart,
            args: vec![
                Expr::Literal {
                    value: Literal::Text {
                        value: field.to_string(),
                    },
                },
                a,
            ],
        };
        Ok((e, Ty::Scalar(S::Numeric)))
    }

    /// `SUBSTRING(x FROM i FOR n)` (integer positions only: with a text pattern it is a regular
    /// expression).
    pub(super) fn substring(
        &mut self,
        x: &sql::Expr,
        from: Option<&sql::Expr>,
        count: Option<&sql::Expr>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let one = sql::Expr::value(sql::Value::Number("1".into(), false));
        let from = from.unwrap_or(&one);
        if super::is_untyped_string(from) {
            return Err("SUBSTRING … FROM a text pattern (a regular expression)".into());
        }
        let mut args = vec![x, from];
        args.extend(count);
        self.call(Function::Substr, &args, cols)
    }

    /// `TRIM([BOTH] [chars FROM] x)`, `TRIM(x, chars)`: `btrim`.
    pub(super) fn trim(
        &mut self,
        e: &sql::Expr,
        side: &Option<sql::TrimWhereField>,
        what: Option<&sql::Expr>,
        x: &sql::Expr,
        chars: &Option<Vec<sql::Expr>>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        if matches!(
            side,
            Some(sql::TrimWhereField::Leading | sql::TrimWhereField::Trailing)
        ) {
            return Err(format!("{e}: only TRIM(BOTH …) is modelled (btrim)"));
        }
        let mut args = vec![x];
        match (what, chars.as_deref()) {
            (Some(w), None) => args.push(w),
            (None, Some([c])) => args.push(c),
            (None, None) => {}
            _ => return Err(format!("{e}: a TRIM form not modelled")),
        }
        self.call(Function::Trim, &args, cols)
    }
}

/// `nextval('seq'::regclass)`, `nextval('seq')`: the sequence's name as written.
fn nextval(args: &[&sql::Expr]) -> Result<Typed, String> {
    let name = match args {
        [a] => match strip_nested(a) {
            sql::Expr::Cast {
                expr,
                data_type: sql::DataType::Regclass,
                ..
            } => match strip_nested(expr) {
                sql::Expr::Value(v) => string_value(&v.value),
                _ => None,
            },
            sql::Expr::Value(v) => string_value(&v.value),
            _ => None,
        },
        _ => None,
    }
    .ok_or("nextval(…) of something other than a sequence's name")?;
    let e = Expr::Call {
        function: Function::Nextval,
        args: vec![Expr::Literal {
            value: Literal::Text {
                value: name.to_string(),
            },
        }],
    };
    Ok((e, Ty::Scalar(ScalarType::Bigint)))
}

/// A function's folded name, bare or in `pg_catalog`.
fn function_name(name: &sql::ObjectName) -> Result<String, String> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(fold).unwrap_or_else(|| p.to_string()))
        .collect();
    match parts.as_slice() {
        [n] => Ok(n.clone()),
        [s, n] if s == "pg_catalog" => Ok(n.clone()),
        _ => Err(format!(
            "function {name}: not one the plan's expressions define"
        )),
    }
}

/// A unit given as a string constant, canonical (`'Days'` → `'day'`).
fn unit_literal(e: &sql::Expr, canon: fn(&str) -> Option<&'static str>) -> Result<Expr, String> {
    let s = match strip_nested(e) {
        sql::Expr::Value(v) => string_value(&v.value),
        sql::Expr::Cast { expr, .. } => match strip_nested(expr) {
            sql::Expr::Value(v) => string_value(&v.value),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| format!("{e}: the unit is not a constant"))?;
    let unit = canon(s.trim()).ok_or_else(|| format!("'{s}' is not a unit Postgres knows"))?;
    Ok(Expr::Literal {
        value: Literal::Text {
            value: unit.to_string(),
        },
    })
}

/// A `date_trunc` unit (Postgres reads it with the interval units' table).
fn trunc_unit(s: &str) -> Option<&'static str> {
    if ["quarter", "qtr"].contains(&s.to_ascii_lowercase().as_str()) {
        return Some("quarter");
    }
    Some(match Unit::of_word(s)? {
        Unit::Microsecond => "microseconds",
        Unit::Millisecond => "milliseconds",
        Unit::Second => "second",
        Unit::Minute => "minute",
        Unit::Hour => "hour",
        Unit::Day => "day",
        Unit::Week => "week",
        Unit::Month => "month",
        Unit::Year => "year",
        Unit::Decade => "decade",
        Unit::Century => "century",
        Unit::Millennium => "millennium",
    })
}

/// A `date_part` field: a unit, or one of the special fields.
fn part_field(s: &str) -> Option<&'static str> {
    let w = s.to_ascii_lowercase();
    const SPECIAL: [&str; 6] = ["epoch", "dow", "doy", "isodow", "isoyear", "julian"];
    SPECIAL
        .iter()
        .find(|f| **f == w)
        .copied()
        .or_else(|| trunc_unit(s))
}

/// The static name of a field already made canonical.
fn leak_field(s: &str) -> Result<&'static str, String> {
    part_field(s).ok_or_else(|| format!("'{s}' is not a field"))
}

/// The field of `EXTRACT`, canonical; MySQL's `DAYOFWEEK` and the like are refused (other
/// numbering), as are the time-zone fields.
fn extract_field(f: &DateTimeField) -> Result<&'static str, String> {
    use DateTimeField as D;
    Ok(match f {
        D::Year | D::Years => "year",
        D::Month | D::Months => "month",
        D::Week(None) | D::Weeks => "week",
        D::Day | D::Days => "day",
        D::Hour | D::Hours => "hour",
        D::Minute | D::Minutes => "minute",
        D::Second | D::Seconds => "second",
        D::Millisecond | D::Milliseconds => "milliseconds",
        D::Microsecond | D::Microseconds => "microseconds",
        D::Century => "century",
        D::Decade => "decade",
        D::Millenium | D::Millennium => "millennium",
        D::Quarter => "quarter",
        D::Dow => "dow",
        D::Doy => "doy",
        D::Isodow => "isodow",
        D::Isoyear => "isoyear",
        D::Julian => "julian",
        D::Epoch => "epoch",
        D::Custom(id) => {
            return part_field(&id.value)
                .ok_or_else(|| format!("EXTRACT({id} FROM …): not a field the model reads"))
        }
        other => {
            return Err(format!(
                "EXTRACT({other} FROM …): not a field the model reads"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_canonical() {
        assert_eq!(trunc_unit("Days"), Some("day"));
        assert_eq!(trunc_unit("mon"), Some("month"));
        assert_eq!(trunc_unit("qtr"), Some("quarter"));
        assert_eq!(trunc_unit("fortnight"), None);
        assert_eq!(part_field("EPOCH"), Some("epoch"));
    }
}
