//! sqlparser expressions → the plan's dialect-neutral [`Expr`], exactly or not at all.
//!
//! A statement's SQL means what Postgres makes of it; the plan states it so that any program
//! can evaluate it without a SQL parser or a Postgres server. [`Converter`] walks sqlparser's
//! typed AST (never the SQL text) and returns the model's expression, or `Err(reason)` for
//! anything it cannot state exactly: a function outside [`remodel_model::Function`], a
//! subquery, an operator the model does not define, a function of another database (`TO_DAYS`),
//! a constant whose reading depends on a session setting (`'01/02/2025'::date`).
//!
//! Typing follows Postgres: an untyped string literal or a parameter takes the type of the
//! value it meets (`created_at > '2025-01-15'` compares with a `timestamptz` read from that
//! text, and `$n` gets the column's type: [`Converter::params`]); a literal whose type the
//! context does not give is text. The accepted clock functions: `now()`,
//! `transaction_timestamp()` and `current_timestamp` are [`Expr::Now`] (the transaction's
//! start); `localtimestamp` is `CAST(now() AS timestamp)` and `localtime` `CAST(now() AS time)`
//! (both read in the plan's time zone); `current_date` is [`Expr::CurrentDate`];
//! `statement_timestamp()`, `clock_timestamp()`, `current_time` (a `timetz`) and a precision
//! (`current_timestamp(0)`) are refused.
//!
//! A `timestamptz` constant written without an offset is an instant only in a known zone: with
//! the plan's zone UTC it becomes a `Timestamptz` literal at `+00:00`; otherwise it stays
//! `CAST(TIMESTAMP '…' AS timestamptz)`, which whoever evaluates the plan reads in the plan's
//! zone ([`remodel_model::Semantics::time_zone`]), as Postgres would in the application's
//! session.

mod functions;
mod interval;
mod literal;
pub mod schema;
mod types;

pub use remodel_model::time::is_utc;
pub use types::{column_type, Ty};

use remodel_model::{BinaryOp, CaseBranch, ColumnRef, Expr, Literal, RowRef, ScalarType, UnaryOp};
use sqlparser::ast::{self as sql, BinaryOperator, UnaryOperator, Value};
use std::collections::BTreeMap;
use types::{arithmetic, comparable, scalar_type, Strictness};

/// The deepest expression converted (sqlparser builds `a + b + c …` as a left-deep tree; a
/// deeper one is refused rather than risk the stack).
const MAX_DEPTH: usize = 200;

/// A column an identifier names, as the caller resolves it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnInfo {
    /// The source column.
    pub column: ColumnRef,
    /// Which row it is read from.
    pub row: RowRef,
    /// Its type: a scalar type, an enum, or `Err` with the type outside the model
    /// (`citext`, an array) — such a column may only be tested for NULL.
    pub ty: Result<Ty, String>,
}

/// Resolves the identifiers of an expression (`c`, `t.c`, `s.c`, `excluded.c`) to columns.
pub trait Columns {
    /// The column a folded identifier path names, or why none.
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String>;
}

/// Resolves no identifier (a `DEFAULT`, a `LIMIT`): every column reference is refused.
pub struct NoColumns;

impl Columns for NoColumns {
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String> {
        Err(format!(
            "{} is a column reference where none is allowed",
            path.join(".")
        ))
    }
}

/// The IANA zone names Postgres accepts as a `TimeZone` (the tz database's zones and links).
const ZONES: &str = include_str!("zones.txt");

/// A time zone name as the tz database spells it (`europe/berlin` → `Europe/Berlin`), or why
/// it is not one: a plan's expressions are read in a zone every executor can look up, so POSIX
/// forms (`UTC+3`, which Postgres reads west of Greenwich) and `localtime` are refused.
pub fn time_zone(name: &str) -> Result<&'static str, String> {
    let n = name.trim();
    ZONES
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find(|z| z.eq_ignore_ascii_case(n))
        .ok_or_else(|| {
            format!("{name} is not a time zone of the IANA tz database (e.g. UTC, Europe/Berlin, America/New_York)")
        })
}

/// The type a cast names, as a parameter's type (`$1::varchar(20)` takes text): `None` for a
/// type outside the model.
pub fn param_type(dt: &sql::DataType) -> Option<ScalarType> {
    scalar_type(dt, Strictness::Column).ok()
}

/// Converts the expressions of one statement, collecting the types its parameters take.
#[derive(Debug, Clone, Default)]
pub struct Converter {
    /// The plan's zone is UTC: a zone-less `timestamptz` constant is an instant.
    utc: bool,
    params: BTreeMap<u32, ScalarType>,
    depth: usize,
}

/// A converted expression and its type.
type Typed = (Expr, Ty);

impl Converter {
    /// A converter for a plan whose time zone is `time_zone` (`None`: not known here, as for
    /// a schema's defaults read before the plan's zone is chosen).
    pub fn new(time_zone: Option<&str>) -> Converter {
        Converter {
            utc: time_zone.is_some_and(is_utc),
            ..Converter::default()
        }
    }

    /// The type each `$n` took from where it appears (the first typing wins, as a statement
    /// Postgres accepts types every use alike). For `= ANY($n)`, the type of the array's
    /// elements.
    pub fn params(&self) -> &BTreeMap<u32, ScalarType> {
        &self.params
    }

    /// Records that `$n` takes type `t` (unless typed already).
    pub fn type_param(&mut self, n: u32, t: ScalarType) {
        self.params.entry(n).or_insert(t);
    }

    /// A condition (WHERE, ON, CASE WHEN): boolean.
    pub fn condition(&mut self, e: &sql::Expr, cols: &dyn Columns) -> Result<Expr, String> {
        let (x, t) = self.conv(e, Some(ScalarType::Boolean), cols)?;
        expect(&x, t, ScalarType::Boolean)?;
        Ok(x)
    }

    /// A value; an untyped literal with nothing to type it is text.
    pub fn value(&mut self, e: &sql::Expr, cols: &dyn Columns) -> Result<Expr, String> {
        Ok(self.typed_value(e, cols)?.0)
    }

    /// A value and its type.
    pub fn typed_value(&mut self, e: &sql::Expr, cols: &dyn Columns) -> Result<Typed, String> {
        let (x, t) = self.conv(e, None, cols)?;
        if t == Ty::Unknown && is_untyped_string(e) {
            return self.conv(e, Some(ScalarType::Text), cols);
        }
        Ok((x, t))
    }

    /// A value of type `want` (a `LIMIT` is `bigint`): untyped parts take that type.
    pub fn value_of(
        &mut self,
        e: &sql::Expr,
        want: ScalarType,
        cols: &dyn Columns,
    ) -> Result<Expr, String> {
        Ok(self.conv(e, Some(want), cols)?.0)
    }

    /// The value `e` gives a column of type `target` (an INSERT's value, an UPDATE's SET, a
    /// DEFAULT), with the cast Postgres applies on assignment where it changes the value
    /// (`numeric` into `integer` rounds, `timestamptz` into `timestamp` reads the zone).
    pub fn assigned(
        &mut self,
        e: &sql::Expr,
        target: &Result<Ty, String>,
        cols: &dyn Columns,
    ) -> Result<Expr, String> {
        match target {
            Ok(Ty::Scalar(t)) => {
                let (x, got) = self.conv(e, Some(*t), cols)?;
                Ok(match got {
                    Ty::Scalar(g) if needs_cast(g, *t) => Expr::Cast {
                        arg: Box::new(x),
                        to: *t,
                    },
                    _ => x,
                })
            }
            Ok(Ty::Enum) => {
                let (x, got) = self.conv(e, Some(ScalarType::Text), cols)?;
                match got {
                    Ty::Enum | Ty::Unknown | Ty::Scalar(ScalarType::Text) => Ok(x),
                    Ty::Scalar(g) => Err(format!(
                        "a value of type {} assigned to an enum column",
                        g.sql()
                    )),
                }
            }
            Ok(Ty::Unknown) | Err(_) => {
                let why = target.as_ref().err().cloned().unwrap_or_default();
                let (x, got) = self.conv(e, None, cols)?;
                match (&x, got) {
                    (
                        Expr::Param { .. }
                        | Expr::Literal {
                            value: Literal::Null,
                        },
                        _,
                    ) => Ok(x),
                    _ => Err(format!("the value of a column of {why}")),
                }
            }
        }
    }

    fn conv(
        &mut self,
        e: &sql::Expr,
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("an expression nested deeper than {MAX_DEPTH}"));
        }
        self.depth += 1;
        let r = self.conv_inner(e, want, cols);
        self.depth -= 1;
        r
    }

    fn conv_inner(
        &mut self,
        e: &sql::Expr,
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        use sql::Expr as E;
        match e {
            E::Nested(x) => self.conv(x, want, cols),
            E::Value(v) => self.value_token(&v.value, want),
            E::Identifier(_) | E::CompoundIdentifier(_) => column(cols, &identifier_path(e)),
            E::TypedString(ts) => {
                let s = string_value(&ts.value.value)
                    .ok_or_else(|| format!("{e}: the constant is not a string"))?;
                let t = scalar_type(&ts.data_type, Strictness::Cast)?;
                let x = literal::typed_string(s, t, self.utc)?;
                Ok((x, Ty::Scalar(t)))
            }
            E::Interval(iv) => Ok((interval_literal(iv)?, Ty::Scalar(ScalarType::Interval))),
            E::BinaryOp { left, op, right } => self.binary(left, op, right, cols),
            E::UnaryOp { op, expr } => self.unary(*op, expr, cols),
            E::Cast {
                kind: sql::CastKind::Cast | sql::CastKind::DoubleColon,
                expr,
                data_type,
                format: None,
            } => self.cast(expr, data_type, cols),
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(
                operand.as_deref(),
                conditions,
                else_result.as_deref(),
                want,
                cols,
            ),
            E::Function(f) => self.function(f, want, cols),
            E::Extract { field, expr, .. } => self.extract(field, expr, cols),
            E::Ceil { expr, field } | E::Floor { expr, field } => {
                self.ceil_floor(e, expr, field, cols)
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => self.substring(
                expr,
                substring_from.as_deref(),
                substring_for.as_deref(),
                cols,
            ),
            E::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => self.trim(
                e,
                trim_where,
                trim_what.as_deref(),
                expr,
                trim_characters,
                cols,
            ),
            _ => self.conv_predicate(e, cols),
        }
    }

    /// The predicates (IS, IN, ANY/ALL, BETWEEN, LIKE) and the forms refused with their reason.
    fn conv_predicate(&mut self, e: &sql::Expr, cols: &dyn Columns) -> Result<Typed, String> {
        use sql::Expr as E;
        match e {
            E::IsNull(x) | E::IsNotNull(x) | E::IsUnknown(x) | E::IsNotUnknown(x) => {
                self.is_null(e, x, cols)
            }
            E::IsTrue(x) | E::IsNotTrue(x) | E::IsFalse(x) | E::IsNotFalse(x) => {
                self.is_truth(e, x, cols)
            }
            E::IsDistinctFrom(a, b) => self.distinct_from(a, b, true, cols),
            E::IsNotDistinctFrom(a, b) => self.distinct_from(a, b, false, cols),
            E::In {
                expr,
                target: sql::InTarget::List(list),
                negated,
                ..
            } => self.in_list(expr, list, *negated, cols),
            E::AnyOp {
                left,
                compare_op: BinaryOperator::Eq,
                right,
                ..
            } => self.any_array(left, right, false, cols),
            E::AllOp {
                left,
                compare_op: BinaryOperator::NotEq,
                right,
            } => self.any_array(left, right, true, cols),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => self.between(expr, *negated, low, high, cols),
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.like(expr, pattern, escape_char.as_deref(), false, *negated, cols),
            E::ILike {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => self.like(expr, pattern, escape_char.as_deref(), true, *negated, cols),
            E::Subquery(_) | E::Exists { .. } => {
                Err("a subquery, which the plan's expressions do not state".into())
            }
            E::In { .. } => Err(
                "IN over a subquery or UNNEST, which the plan's expressions do not state".into(),
            ),
            E::AtTimeZone { .. } => Err("AT TIME ZONE, which the model does not define".into()),
            E::SimilarTo { .. } | E::RLike { .. } => {
                Err("a regular expression match, which the model does not define".into())
            }
            other => Err(format!(
                "{} is not an expression the plan's expressions state",
                head(other)
            )),
        }
    }

    /// `x IS [NOT] NULL` (or `UNKNOWN`); a column of a type outside the model may still be
    /// tested for NULL.
    fn is_null(
        &mut self,
        e: &sql::Expr,
        x: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let a = match strip_nested(x) {
            sql::Expr::Identifier(_) | sql::Expr::CompoundIdentifier(_) => {
                let c = cols.column(&identifier_path(x))?;
                Expr::Column {
                    column: c.column,
                    row: c.row,
                }
            }
            _ => self.typed_value(x, cols)?.0,
        };
        let negated = matches!(e, sql::Expr::IsNotNull(_) | sql::Expr::IsNotUnknown(_));
        let is = Expr::IsNull {
            arg: Box::new(a),
            negated,
        };
        Ok((is, Ty::Scalar(ScalarType::Boolean)))
    }

    /// `CEIL(x)`/`FLOOR(x)`; a field or a scale is refused.
    fn ceil_floor(
        &mut self,
        e: &sql::Expr,
        expr: &sql::Expr,
        field: &sql::CeilFloorKind,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let f = if matches!(e, sql::Expr::Ceil { .. }) {
            remodel_model::Function::Ceil
        } else {
            remodel_model::Function::Floor
        };
        match field {
            sql::CeilFloorKind::DateTimeField(sql::DateTimeField::NoDateTime) => {
                self.call(f, &[expr], cols)
            }
            _ => Err(format!("{e}: a CEIL/FLOOR with a field or scale")),
        }
    }

    fn value_token(&mut self, v: &Value, want: Option<ScalarType>) -> Result<Typed, String> {
        match v {
            Value::Number(n, _) => {
                let lit = literal::number(n, false)?;
                let t = literal_type(&lit);
                Ok((Expr::Literal { value: lit }, Ty::Scalar(t)))
            }
            Value::Boolean(b) => Ok((
                Expr::Literal {
                    value: Literal::Boolean { value: *b },
                },
                Ty::Scalar(ScalarType::Boolean),
            )),
            Value::Null => Ok((
                Expr::Literal {
                    value: Literal::Null,
                },
                want.map_or(Ty::Unknown, Ty::Scalar),
            )),
            Value::Placeholder(p) => {
                let n = param_number(p)?;
                if let Some(t) = want {
                    self.type_param(n, t);
                }
                let t = self.params.get(&n).copied();
                Ok((Expr::Param { n }, t.map_or(Ty::Unknown, Ty::Scalar)))
            }
            other => match string_value(other) {
                Some(s) => match want {
                    Some(t) => Ok((literal::typed_string(s, t, self.utc)?, Ty::Scalar(t))),
                    None => Ok((
                        Expr::Literal {
                            value: Literal::Text {
                                value: s.to_string(),
                            },
                        },
                        Ty::Unknown,
                    )),
                },
                None => Err(format!("the constant {other} is not one the model states")),
            },
        }
    }

    /// Converts two operands that meet in one operator: an untyped one (`'…'`, `$n`) takes
    /// the other's type, or for arithmetic `arith` the type Postgres resolves it to
    /// (`now() + $1`: an interval). Both untyped: both `unknown_as` (text for comparisons), or
    /// `Err`.
    fn pair(
        &mut self,
        l: &sql::Expr,
        r: &sql::Expr,
        unknown_as: Option<ScalarType>,
        arith: Option<BinaryOp>,
        cols: &dyn Columns,
    ) -> Result<(Typed, Typed), String> {
        let (lx, lt) = self.conv(l, None, cols)?;
        let (rx, rt) = self.conv(r, None, cols)?;
        let hint = |t: Ty, known_left: bool| -> Result<Option<ScalarType>, String> {
            Ok(match (t, arith) {
                (Ty::Scalar(s), Some(op)) => {
                    Some(types::untyped_operand(op, s, known_left).ok_or_else(|| {
                        format!(
                            "{l} {} {r}: Postgres could not choose the type of the untyped operand",
                            op.sql()
                        )
                    })?)
                }
                (Ty::Scalar(s), None) => Some(s),
                (Ty::Enum, _) => Some(ScalarType::Text),
                (Ty::Unknown, _) => None,
            })
        };
        let keep_enum = |x: Typed, other: Ty| {
            if other == Ty::Enum {
                (x.0, Ty::Enum)
            } else {
                x
            }
        };
        Ok(match (lt, rt) {
            (Ty::Unknown, Ty::Unknown) => match unknown_as {
                Some(t) => (self.conv(l, Some(t), cols)?, self.conv(r, Some(t), cols)?),
                None => {
                    return Err(format!(
                        "{l} and {r}: neither side's type is known (Postgres could not choose)"
                    ))
                }
            },
            (Ty::Unknown, other) => {
                let l2 = self.conv(l, hint(other, false)?, cols)?;
                (keep_enum(l2, other), (rx, rt))
            }
            (other, Ty::Unknown) => {
                let r2 = self.conv(r, hint(other, true)?, cols)?;
                ((lx, lt), keep_enum(r2, other))
            }
            _ => ((lx, lt), (rx, rt)),
        })
    }

    fn binary(
        &mut self,
        l: &sql::Expr,
        op: &BinaryOperator,
        r: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        use BinaryOp as O;
        let op = binary_op(op)?;
        if matches!(op, O::And | O::Or) {
            let a = self.condition(l, cols)?;
            let b = self.condition(r, cols)?;
            return Ok((Expr::binary(op, a, b), Ty::Scalar(ScalarType::Boolean)));
        }
        let cmp = matches!(op, O::Eq | O::Ne | O::Lt | O::Le | O::Gt | O::Ge);
        if let (true, sql::Expr::Tuple(li), sql::Expr::Tuple(ri)) =
            (cmp, strip_nested(l), strip_nested(r))
        {
            return self.rows(op, li, ri, cols);
        }
        let unknown_as = (cmp || op == O::Concat).then_some(ScalarType::Text);
        let arith = (!cmp && op != O::Concat).then_some(op);
        let ((a, at), (b, bt)) = self.pair(l, r, unknown_as, arith, cols)?;
        let t = if cmp {
            compare_types(op, at, bt, l, r)?;
            Ty::Scalar(ScalarType::Boolean)
        } else {
            match (at, bt) {
                (Ty::Scalar(x), Ty::Scalar(y)) => {
                    Ty::Scalar(arithmetic(op, x, y).ok_or_else(|| {
                        format!(
                            "{} {} {}: an operator the model does not define",
                            x.sql(),
                            op.sql(),
                            y.sql()
                        )
                    })?)
                }
                _ => {
                    return Err(format!(
                        "{l} {} {r}: an operator on values whose type is not known",
                        op.sql()
                    ))
                }
            }
        };
        Ok((Expr::binary(op, a, b), t))
    }

    /// `(a, b) op ($1, $2)`: rows of as many items, compared item by item as SQL compares rows.
    fn rows(
        &mut self,
        op: BinaryOp,
        l: &[sql::Expr],
        r: &[sql::Expr],
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        if l.len() != r.len() || l.len() < 2 {
            return Err(format!(
                "a comparison of rows of {} and {} items",
                l.len(),
                r.len()
            ));
        }
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for (a, b) in l.iter().zip(r) {
            let ((x, xt), (y, yt)) = self.pair(a, b, Some(ScalarType::Text), None, cols)?;
            compare_types(op, xt, yt, a, b)?;
            left.push(x);
            right.push(y);
        }
        let e = Expr::binary(op, Expr::Row { items: left }, Expr::Row { items: right });
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    fn unary(
        &mut self,
        op: UnaryOperator,
        x: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        match op {
            UnaryOperator::Not => {
                let a = self.condition(x, cols)?;
                let e = Expr::Unary {
                    op: UnaryOp::Not,
                    arg: Box::new(a),
                };
                Ok((e, Ty::Scalar(ScalarType::Boolean)))
            }
            UnaryOperator::Minus | UnaryOperator::Plus => {
                let minus = op == UnaryOperator::Minus;
                if let Some(n) = number_token(x) {
                    // `-5` is one constant, as Postgres' grammar folds it.
                    let lit = literal::number(n, minus)?;
                    let t = literal_type(&lit);
                    return Ok((Expr::Literal { value: lit }, Ty::Scalar(t)));
                }
                let (a, t) = self.conv(x, None, cols)?;
                match t {
                    Ty::Scalar(s) if types::is_number(s) || s == ScalarType::Interval => {
                        if !minus {
                            return Ok((a, t));
                        }
                        let e = Expr::Unary {
                            op: UnaryOp::Neg,
                            arg: Box::new(a),
                        };
                        Ok((e, t))
                    }
                    _ => Err(format!("{op}{x}: a sign on a value that is not a number")),
                }
            }
            other => Err(format!("the operator {other} is not one the model defines")),
        }
    }

    /// `x IS [NOT] TRUE|FALSE` never yields NULL: `coalesce(x, false)`, `NOT coalesce(x, false)`,
    /// `coalesce(NOT x, false)`, `coalesce(x, true)`.
    fn is_truth(
        &mut self,
        e: &sql::Expr,
        x: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        use sql::Expr as E;
        let a = self.condition(x, cols)?;
        let lit = |b| Expr::Literal {
            value: Literal::Boolean { value: b },
        };
        let coalesce = |a, b| Expr::Call {
            function: remodel_model::Function::Coalesce,
            args: vec![a, b],
        };
        let not = |a| Expr::Unary {
            op: UnaryOp::Not,
            arg: Box::new(a),
        };
        let out = match e {
            E::IsTrue(_) => coalesce(a, lit(false)),
            E::IsNotTrue(_) => not(coalesce(a, lit(false))),
            E::IsFalse(_) => coalesce(not(a), lit(false)),
            _ => coalesce(a, lit(true)),
        };
        Ok((out, Ty::Scalar(ScalarType::Boolean)))
    }

    /// `a IS [NOT] DISTINCT FROM b` as a CASE over NULL tests (operands evaluated more than
    /// once: refused when volatile).
    fn distinct_from(
        &mut self,
        l: &sql::Expr,
        r: &sql::Expr,
        distinct: bool,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let ((a, at), (b, bt)) = self.pair(l, r, Some(ScalarType::Text), None, cols)?;
        compare_types(BinaryOp::Eq, at, bt, l, r)?;
        no_volatile(&a)?;
        no_volatile(&b)?;
        let is_null = |x: &Expr, negated| Expr::IsNull {
            arg: Box::new(x.clone()),
            negated,
        };
        let lit = |v| Expr::Literal {
            value: Literal::Boolean { value: v },
        };
        let (op, when_b_null) = if distinct {
            (BinaryOp::Ne, true)
        } else {
            (BinaryOp::Eq, false)
        };
        let e = Expr::Case {
            operand: None,
            branches: vec![
                CaseBranch {
                    when: is_null(&a, false),
                    then: is_null(&b, distinct),
                },
                CaseBranch {
                    when: is_null(&b, false),
                    then: lit(when_b_null),
                },
            ],
            otherwise: Some(Box::new(Expr::binary(op, a, b))),
        };
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    fn in_list(
        &mut self,
        x: &sql::Expr,
        list: &[sql::Expr],
        negated: bool,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let (mut a, mut at) = self.conv(x, None, cols)?;
        if at == Ty::Unknown {
            // Postgres types an untyped operand from the list, else as text.
            let from_list = list
                .iter()
                .map(|v| self.conv(v, None, cols).map(|(_, t)| t))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .find_map(|t| match t {
                    Ty::Scalar(s) => Some(s),
                    _ => None,
                });
            (a, at) = self.conv(x, Some(from_list.unwrap_or(ScalarType::Text)), cols)?;
        }
        let hint = match at {
            Ty::Scalar(s) => Some(s),
            _ => Some(ScalarType::Text),
        };
        let mut items = Vec::with_capacity(list.len());
        for v in list {
            let (y, yt) = self.conv(v, hint, cols)?;
            let yt = if at == Ty::Enum && yt == Ty::Scalar(ScalarType::Text) {
                Ty::Enum
            } else {
                yt
            };
            compare_types(BinaryOp::Eq, at, yt, x, v)?;
            items.push(y);
        }
        let e = Expr::InList {
            arg: Box::new(a),
            list: items,
            negated,
        };
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    /// `x = ANY($n)`, `x = ANY(ARRAY[…])`, `x <> ALL(…)`.
    fn any_array(
        &mut self,
        x: &sql::Expr,
        arr: &sql::Expr,
        negated: bool,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let (a, at) = self.conv(x, None, cols)?;
        let elem = match at {
            Ty::Scalar(s) => s,
            Ty::Enum => ScalarType::Text,
            Ty::Unknown => return Err(format!("{x} = ANY(…): the operand's type is not known")),
        };
        if let Some((p, cast)) = array_param(arr) {
            if let Some(dt) = cast {
                let ct = scalar_type(dt, Strictness::Cast)?;
                compare_types(BinaryOp::Eq, at, Ty::Scalar(ct), x, arr)?;
            }
            let n = param_number(p)?;
            self.type_param(n, elem);
            let e = Expr::InList {
                arg: Box::new(a),
                list: vec![Expr::Param { n }],
                negated,
            };
            return Ok((e, Ty::Scalar(ScalarType::Boolean)));
        }
        let list = match strip_nested(arr) {
            sql::Expr::Array(array) => {
                let mut items = Vec::new();
                for v in &array.elem {
                    let (y, yt) = self.conv(v, Some(elem), cols)?;
                    compare_types(BinaryOp::Eq, at, yt, x, v)?;
                    items.push(y);
                }
                items
            }
            _ => return Err(format!("= ANY({arr}): not a parameter or an ARRAY[…] list")),
        };
        let e = Expr::InList {
            arg: Box::new(a),
            list,
            negated,
        };
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    /// `x [NOT] BETWEEN lo AND hi` is `x >= lo AND x <= hi` (`x < lo OR x > hi`).
    fn between(
        &mut self,
        x: &sql::Expr,
        negated: bool,
        lo: &sql::Expr,
        hi: &sql::Expr,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let (lop, hop, join) = if negated {
            (BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Or)
        } else {
            (BinaryOp::Ge, BinaryOp::Le, BinaryOp::And)
        };
        let ((a, at), (l, lt)) = self.pair(x, lo, Some(ScalarType::Text), None, cols)?;
        compare_types(lop, at, lt, x, lo)?;
        let ((_, at2), (h, ht)) = self.pair(x, hi, Some(ScalarType::Text), None, cols)?;
        compare_types(hop, at2, ht, x, hi)?;
        no_volatile(&a)?;
        let e = Expr::binary(
            join,
            Expr::binary(lop, a.clone(), l),
            Expr::binary(hop, a, h),
        );
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    fn like(
        &mut self,
        x: &sql::Expr,
        pattern: &sql::Expr,
        escape: Option<&sql::Expr>,
        case_insensitive: bool,
        negated: bool,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        if let Some(esc) = escape {
            let default = matches!(strip_nested(esc), sql::Expr::Value(v)
                if string_value(&v.value) == Some("\\"));
            if !default {
                return Err(format!(
                    "LIKE … ESCAPE {esc}: only the default escape (\\) is modelled"
                ));
            }
        }
        let text = Some(ScalarType::Text);
        let (a, at) = self.conv(x, text, cols)?;
        let (p, pt) = self.conv(pattern, text, cols)?;
        for (t, side) in [(at, x), (pt, pattern)] {
            if !matches!(t, Ty::Scalar(ScalarType::Text) | Ty::Unknown) {
                return Err(format!("LIKE on {side}, which is not text"));
            }
        }
        let e = Expr::Like {
            arg: Box::new(a),
            pattern: Box::new(p),
            case_insensitive,
            negated,
        };
        Ok((e, Ty::Scalar(ScalarType::Boolean)))
    }

    fn cast(
        &mut self,
        x: &sql::Expr,
        dt: &sql::DataType,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        if is_untyped_string(x) && is_bpchar(dt) {
            // `'q'::bpchar` (how Postgres prints a `char` default) is that text: a blank-padded
            // string compares without its trailing blanks, and a literal without them is the
            // same text either way.
            if let sql::Expr::Value(v) = strip_nested(x) {
                if string_value(&v.value).is_some_and(|s| !s.ends_with(' ')) {
                    return self.conv(x, Some(ScalarType::Text), cols);
                }
            }
        }
        let to = scalar_type(dt, Strictness::Cast)?;
        if is_untyped_string(x) {
            // `'…'::type` is a constant of that type.
            return self.conv(x, Some(to), cols);
        }
        if let sql::Expr::Interval(_) = strip_nested(x) {
            if to == ScalarType::Interval {
                return self.conv(x, None, cols);
            }
        }
        let (a, at) = self.conv(x, Some(to), cols)?;
        if let Ty::Scalar(from) = at {
            if from == ScalarType::Text && parsed_by_setting(to) && !is_param(&a) {
                return Err(format!(
                    "a cast of text to {} reads it with the session's DateStyle/IntervalStyle",
                    to.sql()
                ));
            }
        }
        if at == Ty::Scalar(to) && matches!(a, Expr::Literal { .. }) {
            return Ok((a, at));
        }
        Ok((
            Expr::Cast {
                arg: Box::new(a),
                to,
            },
            Ty::Scalar(to),
        ))
    }

    fn case(
        &mut self,
        operand: Option<&sql::Expr>,
        conditions: &[sql::CaseWhen],
        otherwise: Option<&sql::Expr>,
        want: Option<ScalarType>,
        cols: &dyn Columns,
    ) -> Result<Typed, String> {
        let op = match operand {
            Some(o) => Some(self.conv(o, None, cols)?),
            None => None,
        };
        // The result type: the first typed result (Postgres' common type), else `want`, else text.
        let mut result_ty = None;
        for x in conditions.iter().map(|c| &c.result).chain(otherwise) {
            if !is_untyped(x) {
                if let (_, Ty::Scalar(t)) = self.conv(x, None, cols)? {
                    result_ty = Some(match result_ty {
                        None => t,
                        Some(prev) => common_type(prev, t)?,
                    });
                }
            }
        }
        let rt = result_ty.or(want).unwrap_or(ScalarType::Text);
        let mut branches = Vec::with_capacity(conditions.len());
        for c in conditions {
            let when = match &op {
                Some((_, ot)) => {
                    let hint = match ot {
                        Ty::Scalar(s) => Some(*s),
                        _ => Some(ScalarType::Text),
                    };
                    let (w, wt) = self.conv(&c.condition, hint, cols)?;
                    compare_types(BinaryOp::Eq, *ot, wt, &c.condition, &c.condition)?;
                    w
                }
                None => self.condition(&c.condition, cols)?,
            };
            let (then, _) = self.conv(&c.result, Some(rt), cols)?;
            branches.push(CaseBranch { when, then });
        }
        let otherwise = match otherwise {
            Some(x) => Some(Box::new(self.conv(x, Some(rt), cols)?.0)),
            None => None,
        };
        let e = Expr::Case {
            operand: op.map(|(x, _)| Box::new(x)),
            branches,
            otherwise,
        };
        Ok((e, Ty::Scalar(rt)))
    }
}

/// Postgres' common type of two results (`CASE`, `coalesce`): equal types, or numbers.
pub(crate) fn common_type(a: ScalarType, b: ScalarType) -> Result<ScalarType, String> {
    if a == b {
        Ok(a)
    } else if types::is_number(a) && types::is_number(b) {
        Ok(types::numeric_union(a, b))
    } else {
        Err(format!(
            "values of {} and {} where one type is needed",
            a.sql(),
            b.sql()
        ))
    }
}

/// `bpchar` without a length (`character` without one is `char(1)`, which cuts).
fn is_bpchar(dt: &sql::DataType) -> bool {
    matches!(dt, sql::DataType::Custom(name, mods)
        if mods.is_empty() && name.to_string().eq_ignore_ascii_case("bpchar"))
}

/// Types whose text Postgres reads with a session setting (`DateStyle`, `IntervalStyle`).
fn parsed_by_setting(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::Date
            | ScalarType::Time
            | ScalarType::Timestamp
            | ScalarType::Timestamptz
            | ScalarType::Interval
    )
}

/// True when storing a value of `from` in a column of `to` changes it (an assignment cast the
/// written value states).
fn needs_cast(from: ScalarType, to: ScalarType) -> bool {
    let int = |t| {
        matches!(
            t,
            ScalarType::Smallint | ScalarType::Integer | ScalarType::Bigint
        )
    };
    !(from == to || (int(from) && (int(to) || to == ScalarType::Numeric)))
}

/// Checks that a comparison's operands compare in Postgres as the model states it.
fn compare_types(op: BinaryOp, a: Ty, b: Ty, l: &sql::Expr, r: &sql::Expr) -> Result<(), String> {
    let eq = matches!(op, BinaryOp::Eq | BinaryOp::Ne);
    match (a, b) {
        (Ty::Scalar(x), Ty::Scalar(y)) if comparable(x, y) => Ok(()),
        (Ty::Scalar(x), Ty::Scalar(y)) => Err(format!(
            "{l} {} {r}: compares {} with {}, which the model does not define",
            op.sql(),
            x.sql(),
            y.sql()
        )),
        (Ty::Enum, Ty::Enum | Ty::Unknown) | (Ty::Unknown, Ty::Enum) if eq => Ok(()),
        (Ty::Enum, _) | (_, Ty::Enum) => Err(format!(
            "{l} {} {r}: an enum compared by order or with another type (enums order by declaration)",
            op.sql()
        )),
        _ => Ok(()),
    }
}

fn expect(x: &Expr, t: Ty, want: ScalarType) -> Result<(), String> {
    match t {
        Ty::Scalar(s) if s == want => Ok(()),
        Ty::Unknown => Ok(()),
        Ty::Scalar(s) => Err(format!("{x} is {} where {} is needed", s.sql(), want.sql())),
        Ty::Enum => Err(format!("{x} is an enum where {} is needed", want.sql())),
    }
}

/// Refuses an operand the conversion would evaluate twice when it is not the same value both
/// times (`gen_random_uuid()`, `nextval(…)`).
fn no_volatile(x: &Expr) -> Result<(), String> {
    let mut volatile = false;
    x.walk(&mut |e| {
        if let Expr::Call { function, .. } = e {
            volatile |= matches!(
                function,
                remodel_model::Function::GenRandomUuid | remodel_model::Function::Nextval
            );
        }
    });
    if volatile {
        Err(format!("{x} is volatile and would be evaluated twice"))
    } else {
        Ok(())
    }
}

fn column(cols: &dyn Columns, path: &[String]) -> Result<Typed, String> {
    let c = cols.column(path)?;
    let t = match &c.ty {
        Ok(t) => *t,
        Err(why) => {
            // Only `IS NULL` reads it; anything else is refused by its operator.
            return Err(format!("column {}: {why}", c.column));
        }
    };
    Ok((
        Expr::Column {
            column: c.column,
            row: c.row,
        },
        t,
    ))
}

/// The type of a literal of the model.
pub(crate) fn literal_type(l: &Literal) -> ScalarType {
    match l {
        Literal::Integer { value } => literal::integer_type(*value),
        Literal::Numeric { .. } => ScalarType::Numeric,
        Literal::Boolean { .. } => ScalarType::Boolean,
        Literal::Date { .. } => ScalarType::Date,
        Literal::Timestamp { .. } => ScalarType::Timestamp,
        Literal::Timestamptz { .. } => ScalarType::Timestamptz,
        Literal::Interval { .. } => ScalarType::Interval,
        Literal::Uuid { .. } => ScalarType::Uuid,
        Literal::Bytes { .. } => ScalarType::Bytea,
        Literal::Text { .. } | Literal::Null => ScalarType::Text,
    }
}

fn binary_op(op: &BinaryOperator) -> Result<BinaryOp, String> {
    use BinaryOperator as B;
    Ok(match op {
        B::Plus => BinaryOp::Add,
        B::Minus => BinaryOp::Sub,
        B::Multiply => BinaryOp::Mul,
        B::Divide => BinaryOp::Div,
        B::Modulo => BinaryOp::Mod,
        B::StringConcat => BinaryOp::Concat,
        B::Eq => BinaryOp::Eq,
        B::NotEq => BinaryOp::Ne,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::Le,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::Ge,
        B::And => BinaryOp::And,
        B::Or => BinaryOp::Or,
        other => return Err(format!("the operator {other} is not one the model defines")),
    })
}

fn interval_literal(iv: &sql::Interval) -> Result<Expr, String> {
    let s = match strip_nested(&iv.value) {
        sql::Expr::Value(v) => string_value(&v.value),
        _ => None,
    }
    .ok_or_else(|| format!("INTERVAL {}: the value is not a string constant", iv.value))?;
    let parsed = match (&iv.leading_field, &iv.last_field) {
        (None, None) => interval::parse(s)?,
        (Some(f), None)
            if iv.leading_precision.is_none() && iv.fractional_seconds_precision.is_none() =>
        {
            interval::with_field(s, f)?
        }
        _ => {
            return Err(format!(
                "INTERVAL '{s}' with a field range, which the model does not read"
            ))
        }
    };
    Ok(Expr::Literal {
        value: parsed.literal()?,
    })
}

/// The folded name of an identifier, as Postgres stores it.
fn fold(id: &sql::Ident) -> String {
    remodel_model::ident::fold(&id.value, id.quote_style.is_some())
}

/// The folded parts of an identifier expression (`t.c` → `["t", "c"]`).
fn identifier_path(e: &sql::Expr) -> Vec<String> {
    match strip_nested(e) {
        sql::Expr::Identifier(id) => vec![fold(id)],
        sql::Expr::CompoundIdentifier(ids) => ids.iter().map(fold).collect(),
        _ => Vec::new(),
    }
}

/// `$n` → n.
fn param_number(p: &str) -> Result<u32, String> {
    p.strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("the placeholder {p} is not $n"))
}

/// The text of a string constant (standard, `E'…'` already unescaped by the tokenizer,
/// dollar-quoted, `U&'…'`).
fn string_value(v: &Value) -> Option<&str> {
    match v {
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::UnicodeStringLiteral(s) => Some(s),
        Value::DollarQuotedString(d) => Some(&d.value),
        _ => None,
    }
}

/// `e` as an application-computed value ([`Expr::Computed`]): an expression of the statement's
/// parameters and constants only — no column, no subquery, no aggregate or window — that the
/// other kinds do not state (`md5($2 || $1)::uuid`); its value has type `ty` where the statement
/// gives one. `None` when `e` reads anything but parameters and constants, or reads nothing at
/// all but a constant the converter refused (a reading that depends on a session setting).
pub fn computed(e: &sql::Expr, ty: Option<ScalarType>) -> Option<Expr> {
    struct Reads {
        params: Vec<u32>,
        refused: bool,
    }
    impl sql::Visitor for Reads {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &sql::Expr) -> std::ops::ControlFlow<()> {
            let refused = match e {
                sql::Expr::Identifier(_)
                | sql::Expr::CompoundIdentifier(_)
                | sql::Expr::Subquery(_)
                | sql::Expr::Exists { .. }
                | sql::Expr::In {
                    target: sql::InTarget::Subquery(_),
                    ..
                }
                | sql::Expr::Wildcard(_)
                | sql::Expr::QualifiedWildcard(..) => true,
                sql::Expr::Function(f) => f.over.is_some() || f.filter.is_some(),
                sql::Expr::Value(v) => {
                    if let Value::Placeholder(p) = &v.value {
                        match param_number(p) {
                            Ok(n) if !self.params.contains(&n) => self.params.push(n),
                            Ok(_) => {}
                            Err(_) => return std::ops::ControlFlow::Break(()),
                        }
                    }
                    false
                }
                _ => false,
            };
            if refused {
                self.refused = true;
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut reads = Reads {
        params: Vec::new(),
        refused: false,
    };
    let _ = sql::Visit::visit(e, &mut reads);
    if reads.refused || reads.params.is_empty() {
        return None;
    }
    Some(Expr::Computed {
        sql: strip_nested(e).to_string(),
        params: reads.params,
        ty,
    })
}

/// An array bound as one parameter: `$n`, or `$n` cast to an array type (`$1::bigint[]`, how
/// asyncpg, node-postgres and many ORMs send an `IN` list), with the element type the cast
/// names. Returns the placeholder's text and that element type.
pub fn array_param(e: &sql::Expr) -> Option<(&str, Option<&sql::DataType>)> {
    fn placeholder(e: &sql::Expr) -> Option<&str> {
        match strip_nested(e) {
            sql::Expr::Value(v) => match &v.value {
                Value::Placeholder(p) => Some(p.as_str()),
                _ => None,
            },
            _ => None,
        }
    }
    match strip_nested(e) {
        sql::Expr::Cast {
            kind: sql::CastKind::Cast | sql::CastKind::DoubleColon,
            expr,
            data_type: sql::DataType::Array(elem),
            format: None,
        } => {
            let elem = match elem {
                sql::ArrayElemTypeDef::SquareBracket(t, _)
                | sql::ArrayElemTypeDef::AngleBracket(t)
                | sql::ArrayElemTypeDef::Qualified(t, _) => t.as_ref(),
                _ => return None,
            };
            Some((placeholder(expr)?, Some(elem)))
        }
        other => Some((placeholder(other)?, None)),
    }
}

fn strip_nested(e: &sql::Expr) -> &sql::Expr {
    match e {
        sql::Expr::Nested(x) => strip_nested(x),
        other => other,
    }
}

fn number_token(e: &sql::Expr) -> Option<&str> {
    match strip_nested(e) {
        sql::Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(n),
            _ => None,
        },
        _ => None,
    }
}

/// An untyped string constant (`'…'`), which Postgres types from where it is used.
fn is_untyped_string(e: &sql::Expr) -> bool {
    matches!(strip_nested(e), sql::Expr::Value(v) if string_value(&v.value).is_some())
}

/// An untyped string, a parameter or NULL.
fn is_untyped(e: &sql::Expr) -> bool {
    is_untyped_string(e)
        || matches!(strip_nested(e), sql::Expr::Value(v)
            if matches!(v.value, Value::Placeholder(_) | Value::Null))
}

fn is_param(e: &Expr) -> bool {
    matches!(e, Expr::Param { .. })
}

/// The first words of an expression, to name what was refused.
fn head(e: &sql::Expr) -> String {
    let s = e.to_string();
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
