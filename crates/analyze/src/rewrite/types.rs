//! The few Postgres types the rewrites reason about, and how an expression gets one.

use super::Solver;
use crate::timeval::interval_parts;
use sqlparser::ast::{BinaryOperator, DataType, Expr, FunctionArg, FunctionArguments, Value};

/// A Postgres type, as far as exactness of a rewrite depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `smallint`, `integer`, `bigint` (width in bytes).
    Int(u8),
    /// `numeric`/`decimal` without a type modifier: exact arithmetic.
    Numeric,
    /// `real`, `double precision`: arithmetic rounds.
    Float,
    /// `date`.
    Date,
    /// `timestamp` (without time zone).
    Ts,
    /// `timestamptz`.
    TsTz,
    /// `interval`.
    Interval,
    /// Anything else the schema names (text, numeric(p,s), uuid, arrays …).
    Other,
    /// Not known (an untyped literal or parameter out of context, an unknown column).
    Unknown,
}

impl Ty {
    /// True for `date`, `timestamp`, `timestamptz`.
    pub(crate) fn is_time(self) -> bool {
        matches!(self, Ty::Date | Ty::Ts | Ty::TsTz)
    }

    /// True for integer and numeric types (exact arithmetic).
    pub(crate) fn is_exact_number(self) -> bool {
        matches!(self, Ty::Int(_) | Ty::Numeric)
    }

    /// The SQL name, for a cast that pins a parameter's type.
    pub(crate) fn sql_name(self) -> Option<&'static str> {
        Some(match self {
            Ty::Int(2) => "smallint",
            Ty::Int(8) => "bigint",
            Ty::Int(_) => "integer",
            Ty::Numeric => "numeric",
            Ty::Float => "double precision",
            Ty::Date => "date",
            Ty::Ts => "timestamp",
            Ty::TsTz => "timestamptz",
            Ty::Interval => "interval",
            Ty::Other | Ty::Unknown => return None,
        })
    }
}

/// The type a column's SQL type (as the schema writes it, lower case) or a cast names.
pub(crate) fn ty_of_sql(sql_type: &str) -> Ty {
    let t = sql_type.trim().to_ascii_lowercase();
    if t.ends_with(']') {
        return Ty::Other;
    }
    let base = t.split('(').next().unwrap_or("").trim();
    let with_tz = t.contains("with time zone") && !t.contains("without");
    if let Some(width) = remodel_model::pgtype::integer_width(base) {
        return Ty::Int(width);
    }
    match base {
        // A type modifier rounds: `numeric(10,2)` is not exact arithmetic on every value.
        "numeric" | "decimal" if !t.contains('(') => Ty::Numeric,
        "real" | "float4" | "double precision" | "float8" | "float" => Ty::Float,
        "date" => Ty::Date,
        "timestamptz" => Ty::TsTz,
        b if b.starts_with("timestamp") && (with_tz || b.ends_with("tz")) => Ty::TsTz,
        b if b.starts_with("timestamp") => Ty::Ts,
        b if b.starts_with("interval") => Ty::Interval,
        _ => Ty::Other,
    }
}

/// The type of a data type node (`::date`, `CAST(… AS bigint)`).
pub(crate) fn ty_of_data_type(dt: &DataType) -> Ty {
    ty_of_sql(&dt.to_string())
}

/// Whether an interval has a month (or year) part, and a day part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tri {
    /// Certainly not.
    No,
    /// Certainly.
    Yes,
    /// Not known (a parameter).
    Maybe,
}

/// What an interval value is made of, as far as it can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IvFacts {
    pub months: Tri,
    pub days: Tri,
}

const UNKNOWN_IV: IvFacts = IvFacts {
    months: Tri::Maybe,
    days: Tri::Maybe,
};

/// The value of `n` untyped: a number's own type, or `hint` (Postgres types an untyped
/// literal or a parameter from the other operand).
fn literal_ty(v: &Value, hint: Ty) -> Ty {
    match v {
        Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => match n.parse::<i64>() {
            Ok(x) if i32::try_from(x).is_ok() => Ty::Int(4),
            Ok(_) => Ty::Int(8),
            Err(_) => Ty::Numeric,
        },
        Value::Number(..) => Ty::Numeric,
        Value::Boolean(_) => Ty::Other,
        _ => hint,
    }
}

/// The result type of `l op r` for the arithmetic the rewrites know.
pub(crate) fn arith_ty(l: Ty, op: &BinaryOperator, r: Ty) -> Ty {
    use Ty::*;
    match (l, op, r) {
        (Int(a), _, Int(b)) => Int(a.max(b)),
        (Float, _, _) | (_, _, Float) => Float,
        (Int(_) | Numeric, _, Int(_) | Numeric) => Numeric,
        (Date, BinaryOperator::Plus | BinaryOperator::Minus, Int(_)) => Date,
        (Int(_), BinaryOperator::Plus, Date) => Date,
        (Date, BinaryOperator::Minus, Date) => Int(4),
        (Ts | TsTz, BinaryOperator::Minus, Ts | TsTz | Date) => Interval,
        (Date, BinaryOperator::Minus, Ts | TsTz) => Interval,
        (Date | Ts, BinaryOperator::Plus | BinaryOperator::Minus, Interval) => Ts,
        (Interval, BinaryOperator::Plus, Date | Ts) => Ts,
        (TsTz, BinaryOperator::Plus | BinaryOperator::Minus, Interval) => TsTz,
        (Interval, BinaryOperator::Plus, TsTz) => TsTz,
        (Interval, BinaryOperator::Plus | BinaryOperator::Minus, Interval) => Interval,
        (Interval, BinaryOperator::Multiply | BinaryOperator::Divide, Int(_) | Numeric) => Interval,
        (Int(_) | Numeric, BinaryOperator::Multiply, Interval) => Interval,
        _ => Unknown,
    }
}

impl Solver<'_> {
    /// The type of a column-free expression; `hint` is the type Postgres would give an untyped
    /// literal or a parameter in this position.
    pub(crate) fn value_ty(&self, v: &Expr, hint: Ty) -> Ty {
        match v {
            Expr::Nested(x) => self.value_ty(x, hint),
            // A placeholder for a constant of the SQL has the constant's type (`$2` for
            // `interval '1 day'`); a parameter takes the type of its neighbour.
            Expr::Value(x) => match self.lits.get(v) {
                Some(lit) => self.value_ty(lit, hint),
                None => literal_ty(&x.value, hint),
            },
            Expr::TypedString(t) => ty_of_data_type(&t.data_type),
            Expr::Cast { data_type, .. } => ty_of_data_type(data_type),
            Expr::Interval(_) => Ty::Interval,
            Expr::UnaryOp { expr, .. } => self.value_ty(expr, hint),
            Expr::Function(f) => function_ty(&crate::exprs::bare_name(&f.name), f, hint, self),
            Expr::BinaryOp { left, op, right } => {
                let (l, r) = (self.value_ty(left, hint), self.value_ty(right, hint));
                // An untyped side takes the other side's type, as Postgres resolves it.
                let l = if l == Ty::Unknown { r } else { l };
                let r = if r == Ty::Unknown { l } else { r };
                arith_ty(l, op, r)
            }
            Expr::AtTimeZone { timestamp, .. } => match self.value_ty(timestamp, hint) {
                Ty::TsTz => Ty::Ts,
                Ty::Ts => Ty::TsTz,
                _ => Ty::Unknown,
            },
            Expr::Case { .. } => hint,
            _ => Ty::Unknown,
        }
    }

    /// What an interval value is made of; reading a parameter's literal from the example is an
    /// assumption the rewrite records.
    pub(crate) fn interval_facts(&mut self, v: &Expr) -> IvFacts {
        if let Some(lit) = self.param_literal(v) {
            return self.interval_facts(&lit);
        }
        match v {
            Expr::Nested(x) => self.interval_facts(x),
            // `$2::interval` (a pinned parameter): the example's literal, cast the same way.
            Expr::Cast {
                kind,
                expr,
                data_type,
                format,
            } if self.lits.get(expr).is_some() => match self.param_literal(expr) {
                Some(lit) => self.interval_facts(&Expr::Cast {
                    kind: kind.clone(),
                    expr: Box::new(lit),
                    data_type: data_type.clone(),
                    format: format.clone(),
                }),
                None => UNKNOWN_IV,
            },
            Expr::Interval(_) | Expr::TypedString(_) | Expr::Cast { .. } => {
                match interval_parts(v) {
                    Some((months, days, _)) => IvFacts {
                        months: if months == 0 { Tri::No } else { Tri::Yes },
                        days: if days == 0 { Tri::No } else { Tri::Yes },
                    },
                    None => UNKNOWN_IV,
                }
            }
            Expr::Function(f) if crate::exprs::bare_name(&f.name) == "make_interval" => {
                make_interval_facts(f)
            }
            Expr::BinaryOp { left, op, right } => match op {
                BinaryOperator::Multiply => {
                    // `n * interval '1 day'`: the interval side decides.
                    match (
                        self.value_ty(left, Ty::Unknown),
                        self.value_ty(right, Ty::Unknown),
                    ) {
                        (Ty::Interval, _) => self.interval_facts(left),
                        (_, Ty::Interval) => self.interval_facts(right),
                        _ => UNKNOWN_IV,
                    }
                }
                BinaryOperator::Plus | BinaryOperator::Minus => {
                    let (a, b) = (self.interval_facts(left), self.interval_facts(right));
                    IvFacts {
                        months: either(a.months, b.months),
                        days: either(a.days, b.days),
                    }
                }
                _ => UNKNOWN_IV,
            },
            _ => UNKNOWN_IV,
        }
    }
}

/// `No` when both are `No`; `Maybe` when either might be (a sum can cancel).
fn either(a: Tri, b: Tri) -> Tri {
    match (a, b) {
        (Tri::No, Tri::No) => Tri::No,
        _ => Tri::Maybe,
    }
}

/// `make_interval(days => $1)`: which parts its named (or positional) arguments set.
fn make_interval_facts(f: &sqlparser::ast::Function) -> IvFacts {
    const ORDER: [&str; 7] = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
    let FunctionArguments::List(list) = &f.args else {
        return UNKNOWN_IV;
    };
    let mut facts = IvFacts {
        months: Tri::No,
        days: Tri::No,
    };
    for (i, a) in list.args.iter().enumerate() {
        let name = match a {
            FunctionArg::Named { name, .. } => name.value.to_lowercase(),
            FunctionArg::ExprNamed {
                name: Expr::Identifier(n),
                ..
            } => n.value.to_lowercase(),
            FunctionArg::Unnamed(_) => ORDER.get(i).map(|s| s.to_string()).unwrap_or_default(),
            _ => return UNKNOWN_IV,
        };
        match name.as_str() {
            "years" | "months" => facts.months = Tri::Maybe,
            "weeks" | "days" => facts.days = Tri::Maybe,
            "hours" | "mins" | "secs" => {}
            _ => return UNKNOWN_IV,
        }
    }
    facts
}

/// The result type of the functions whose type the rewrites need.
fn function_ty(name: &str, f: &sqlparser::ast::Function, hint: Ty, s: &Solver<'_>) -> Ty {
    match name {
        "now"
        | "current_timestamp"
        | "transaction_timestamp"
        | "statement_timestamp"
        | "clock_timestamp"
        | "to_timestamp"
        | "make_timestamptz" => Ty::TsTz,
        "localtimestamp" | "make_timestamp" => Ty::Ts,
        "current_date" | "make_date" => Ty::Date,
        "make_interval" | "justify_days" | "justify_hours" | "justify_interval" => Ty::Interval,
        "date_trunc" => {
            let arg = match &f.args {
                FunctionArguments::List(l) => l.args.get(1),
                _ => None,
            };
            match arg {
                Some(FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(x))) => {
                    match s.value_ty(x, hint) {
                        // date_trunc(text, date) runs on the date as timestamptz.
                        Ty::Date => Ty::TsTz,
                        t => t,
                    }
                }
                _ => Ty::Unknown,
            }
        }
        _ => Ty::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_types() {
        assert_eq!(ty_of_sql("integer"), Ty::Int(4));
        assert_eq!(ty_of_sql("bigserial"), Ty::Int(8));
        assert_eq!(ty_of_sql("numeric"), Ty::Numeric);
        assert_eq!(ty_of_sql("numeric(10,2)"), Ty::Other);
        assert_eq!(ty_of_sql("double precision"), Ty::Float);
        assert_eq!(ty_of_sql("timestamp with time zone"), Ty::TsTz);
        assert_eq!(ty_of_sql("timestamp(3) with time zone"), Ty::TsTz);
        assert_eq!(ty_of_sql("timestamptz"), Ty::TsTz);
        assert_eq!(ty_of_sql("timestamp without time zone"), Ty::Ts);
        assert_eq!(ty_of_sql("timestamp"), Ty::Ts);
        assert_eq!(ty_of_sql("date"), Ty::Date);
        assert_eq!(ty_of_sql("text"), Ty::Other);
        assert_eq!(ty_of_sql("int[]"), Ty::Other);
    }
}
