//! One layer at a time: how `g(f) cmp X` becomes conditions on `f`, and when that is exact.

use super::layers::{string_of, Layer, Unit};
use super::types::{arith_ty, ty_of_data_type, Tri, Ty};
use super::{bin, operand, sql, typed, Cmp, Solver};
use sqlparser::ast::{
    BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator,
    Value,
};

/// Conditions on one expression: each `expr cmp value`.
type Conds = Vec<(Cmp, Expr)>;

const UTC_DAYS: &str = "the session TimeZone is UTC: adding days to a timestamptz follows the \
    calendar of the session zone (a day is 23 or 25 hours across a DST change elsewhere); \
    CQL timestamps are UTC";
const SESSION_ZONE: &str = "date_trunc and ::date on timestamptz (or date) work in the session \
    TimeZone: the bounds are exact when computed in that zone (UTC for CQL timestamps)";
const EPOCH_PRECISION: &str = "the epoch value has at most microsecond precision and is within \
    about 140 years of 1970: to_timestamp converts through double precision";

impl Solver<'_> {
    /// The type of `layer` applied to a value of type `inner`.
    pub(super) fn result_ty(&self, layer: &Layer<'_>, inner: Ty) -> Ty {
        let hint = |add: bool| match inner {
            // `ts + $1` makes `$1` an interval; `ts - $1` a timestamp (Postgres prefers the
            // other operand's type); `date + $1` is ambiguous.
            Ty::Ts | Ty::TsTz if add => Ty::Interval,
            Ty::Date if add => Ty::Unknown,
            t => t,
        };
        match layer {
            Layer::Add(v) => arith_ty(inner, &BinaryOperator::Plus, self.value_ty(v, hint(true))),
            Layer::Sub(v) => arith_ty(inner, &BinaryOperator::Minus, self.value_ty(v, hint(false))),
            Layer::SubFrom(v) => {
                arith_ty(self.value_ty(v, hint(false)), &BinaryOperator::Minus, inner)
            }
            Layer::Neg => inner,
            Layer::Mul(k) => arith_ty(inner, &BinaryOperator::Multiply, self.value_ty(k, inner)),
            Layer::Div(k) => arith_ty(inner, &BinaryOperator::Divide, self.value_ty(k, inner)),
            Layer::Trunc(_) => match inner {
                Ty::Date => Ty::TsTz,
                t if t.is_time() => t,
                _ => Ty::Unknown,
            },
            Layer::Cast(dt) => ty_of_data_type(dt),
            Layer::Epoch => Ty::Numeric,
        }
    }

    /// Maps the conditions on `layer(f)` onto `f` (of type `inner`), or says why that is not exact.
    pub(super) fn through(
        &mut self,
        layer: &Layer<'_>,
        inner: Ty,
        cs: Conds,
    ) -> Result<Conds, String> {
        let keeps_window = matches!(
            layer,
            Layer::Add(_) | Layer::Sub(_) | Layer::SubFrom(_) | Layer::Cast(_)
        );
        let out = match layer {
            Layer::Add(v) => self.shift(inner, v, cs, BinaryOperator::Minus)?,
            Layer::Sub(v) => self.shift(inner, v, cs, BinaryOperator::Plus)?,
            Layer::SubFrom(v) => self.subtracted_from(inner, v, cs)?,
            Layer::Neg => self.negate(inner, cs)?,
            Layer::Mul(k) => self.scale(inner, k, cs)?,
            Layer::Div(k) => self.int_div(inner, k, cs)?,
            Layer::Trunc(u) => self.floor(inner, *u, cs)?,
            Layer::Cast(dt) => self.cast(inner, dt, cs)?,
            Layer::Epoch => self.epoch(inner, cs)?,
        };
        if !keeps_window && !matches!(layer, Layer::Trunc(_)) {
            self.window = None;
        }
        Ok(out)
    }

    /// `f + v cmp X` ⇔ `f cmp X - v` (`undo` is `-`), `f - v cmp X` ⇔ `f cmp X + v`.
    fn shift(
        &mut self,
        inner: Ty,
        v: &Expr,
        cs: Conds,
        undo: BinaryOperator,
    ) -> Result<Conds, String> {
        let vt = self.value_ty(
            v,
            if undo == BinaryOperator::Plus {
                inner
            } else {
                add_hint(inner)
            },
        );
        if undo == BinaryOperator::Plus && inner.is_time() && vt.is_time() {
            // `f - v` of two times is a span, compared with X.
            self.difference(inner, vt, &cs)?;
            self.because(format!(
                "c - {v} grows with c: the comparison keeps its direction"
            ));
        } else {
            self.translation(inner, v, vt)?;
        }
        let v = typed(v, vt, false)?;
        Ok(cs
            .into_iter()
            .map(|(c, x)| (c, bin(x, undo.clone(), v.clone())))
            .collect())
    }

    /// `v - f cmp X` ⇔ `f flip(cmp) v - X`.
    fn subtracted_from(&mut self, inner: Ty, v: &Expr, cs: Conds) -> Result<Conds, String> {
        let vt = self.value_ty(v, inner);
        if inner.is_time() && vt.is_time() {
            self.difference(inner, vt, &cs)?;
        } else {
            self.translation(inner, v, vt)?;
        }
        self.because(format!(
            "{v} - c decreases as c grows: the comparison flips"
        ));
        let v = typed(v, vt, false)?;
        Ok(cs
            .into_iter()
            .map(|(c, x)| (c.flip(), bin(v.clone(), BinaryOperator::Minus, x)))
            .collect())
    }

    /// Adding `v` (of type `vt`) to a value of type `inner` is a one-to-one, order-preserving
    /// translation: exact numbers, days to a date, an interval without months to a time.
    fn translation(&mut self, inner: Ty, v: &Expr, vt: Ty) -> Result<(), String> {
        match (inner, vt) {
            (Ty::Float, _) | (_, Ty::Float) => Err(
                "floating-point arithmetic rounds: undoing the addition may not give the same rows"
                    .into(),
            ),
            (a, b) if a.is_exact_number() && b.is_exact_number() => {
                self.because(format!("{v} shifts c by a constant (exact arithmetic)"));
                Ok(())
            }
            (Ty::Date, Ty::Int(_)) => {
                self.because(format!("adding {v} days to a date is a translation"));
                Ok(())
            }
            (t, Ty::Interval) if t.is_time() => {
                let facts = self.interval_facts(v);
                match facts.months {
                    Tri::Yes => return Err(format!("{v} has a month part: months differ in length, so adding it is not one-to-one")),
                    Tri::Maybe => return Err(format!("{v} may have a month part (its value is not in the SQL): adding it may not be one-to-one")),
                    Tri::No => {}
                }
                if t == Ty::TsTz && facts.days != Tri::No {
                    self.assume(UTC_DAYS.into());
                }
                self.because(format!("shifting by {v} (no month part) is a translation"));
                Ok(())
            }
            (Ty::Date, Ty::Unknown) => Err(format!(
                "the type of {v} added to a date is not known (days or an interval)"
            )),
            _ => Err(format!(
                "adding {v} to a value of this type is not a known translation"
            )),
        }
    }

    /// `a - b` of two times compared with each X: exact when X has no month part (an interval
    /// comparison counts a month as 30 days, subtracting one follows the calendar).
    fn difference(&mut self, inner: Ty, vt: Ty, cs: &Conds) -> Result<(), String> {
        if inner == Ty::Date && vt == Ty::Date {
            return Ok(()); // date - date is an integer number of days.
        }
        for (_, x) in cs {
            let facts = self.interval_facts(x);
            match facts.months {
                Tri::Yes => return Err(format!("{x} has a month part: a difference of times compares as if a month were 30 days, subtracting it follows the calendar")),
                Tri::Maybe => return Err(format!("{x} may have a month part (its value is not in the SQL): the difference cannot be undone exactly")),
                Tri::No => {}
            }
            if (inner == Ty::TsTz || vt == Ty::TsTz) && facts.days != Tri::No {
                self.assume(UTC_DAYS.into());
            }
        }
        self.because(
            "the difference of two times compares as an exact span (no month part)".into(),
        );
        Ok(())
    }

    /// `-f cmp X` ⇔ `f flip(cmp) -X`, in exact arithmetic.
    fn negate(&mut self, inner: Ty, cs: Conds) -> Result<Conds, String> {
        if !inner.is_exact_number() {
            return Err("negation is handled for integer and numeric columns only".into());
        }
        self.because("negation flips the comparison".into());
        Ok(cs.into_iter().map(|(c, x)| (c.flip(), neg(x))).collect())
    }

    /// `f * k cmp X` ⇔ `f cmp X * (1/k)` (flipped for k < 0) when `1/k` is an exact decimal:
    /// numeric multiplication never rounds, and integers compare with numerics exactly.
    fn scale(&mut self, inner: Ty, k: &Expr, cs: Conds) -> Result<Conds, String> {
        if !inner.is_exact_number() {
            return Err("multiplication is handled for integer and numeric columns only (floating point rounds)".into());
        }
        let lit = self.literal_of(k);
        let Some(d) = lit.as_ref().and_then(Decimal::of) else {
            return Err(format!(
                "the factor {k} is not a constant of the SQL: its sign is unknown"
            ));
        };
        if d.digits.bytes().all(|b| b == b'0') {
            return Err(
                "multiplying by zero: every value of the column gives the same result".into(),
            );
        }
        let Some(r) = d.reciprocal() else {
            return Err(format!(
                "1/{} has no exact decimal form: X / {} would round",
                d.text(),
                d.text()
            ));
        };
        // 1/k has the sign of k; dividing by a negative k also flips the comparison.
        let flips = d.negative;
        let r = if flips { format!("-{r}") } else { r };
        self.because(format!(
            "multiplying by {} is undone exactly by multiplying by {r}{}",
            d.text(),
            if flips {
                ", and a negative factor flips the comparison"
            } else {
                ""
            }
        ));
        let r = sql(&r)?;
        Ok(cs
            .into_iter()
            .map(|(c, x)| {
                let c = if flips { c.flip() } else { c };
                (c, bin(x, BinaryOperator::Multiply, r.clone()))
            })
            .collect())
    }
}

/// Hint for an untyped operand added to a value of type `inner`.
fn add_hint(inner: Ty) -> Ty {
    match inner {
        Ty::Ts | Ty::TsTz => Ty::Interval,
        Ty::Date => Ty::Unknown,
        t => t,
    }
}

/// `-x`.
pub(super) fn neg(x: Expr) -> Expr {
    Expr::UnaryOp {
        op: UnaryOperator::Minus,
        expr: Box::new(operand(x)),
    }
}

/// A decimal literal, exactly: sign, digits, digits after the point.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Decimal {
    pub negative: bool,
    pub digits: String,
    pub scale: u32,
}

impl Decimal {
    /// `2`, `-0.25`, `(-4)`: a literal number without exponent.
    pub(super) fn of(e: &Expr) -> Option<Decimal> {
        match e {
            Expr::Nested(x) => Decimal::of(x),
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr,
            } => Decimal::of(expr).map(|d| Decimal {
                negative: !d.negative,
                ..d
            }),
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => Decimal::parse(n),
                _ => None,
            },
            _ => None,
        }
    }

    fn parse(n: &str) -> Option<Decimal> {
        let (negative, n) = match n.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, n),
        };
        let (int, frac) = n.split_once('.').unwrap_or((n, ""));
        let ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !ok(int) || !ok(frac) || int.len() + frac.len() == 0 || int.len() + frac.len() > 30 {
            return None;
        }
        Some(Decimal {
            negative,
            digits: format!("{int}{frac}"),
            scale: u32::try_from(frac.len()).ok()?,
        })
    }

    /// The literal as written (sign included).
    pub(super) fn text(&self) -> String {
        let (int, frac) = self
            .digits
            .split_at(self.digits.len() - self.scale as usize);
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let sign = if self.negative { "-" } else { "" };
        match frac {
            "" => format!("{sign}{int}"),
            f => format!("{sign}{int}.{f}"),
        }
    }

    /// `1/|k|` as an exact decimal literal, when `|k| = m / 10^s` with `m = 2^a 5^b`.
    pub(super) fn reciprocal(&self) -> Option<String> {
        let mut m: u128 = self.digits.parse().ok()?;
        if m == 0 {
            return None;
        }
        let (mut a, mut b) = (0u32, 0u32);
        while m.is_multiple_of(2) {
            m /= 2;
            a += 1;
        }
        while m.is_multiple_of(5) {
            m /= 5;
            b += 1;
        }
        if m != 1 {
            return None;
        }
        // 1/(2^a 5^b) = 2^(t-a) 5^(t-b) / 10^t; times 10^scale.
        let t = a.max(b);
        let n = 2u128
            .checked_pow(t - a)?
            .checked_mul(5u128.checked_pow(t - b)?)?;
        Some(shift_point(
            &n.to_string(),
            i64::from(self.scale) - i64::from(t),
        ))
    }
}

/// `digits × 10^exp` as a decimal literal.
fn shift_point(digits: &str, exp: i64) -> String {
    if exp >= 0 {
        return format!("{digits}{}", "0".repeat(exp as usize));
    }
    let places = exp.unsigned_abs() as usize;
    let padded = format!(
        "{}{digits}",
        "0".repeat(places.saturating_sub(digits.len()))
    );
    let (int, frac) = padded.split_at(padded.len() - places);
    let int = if int.is_empty() { "0" } else { int };
    format!("{int}.{frac}")
}

/// The rules of the floors (`date_trunc`, `::date`, integer division), casts and `extract`.
impl Solver<'_> {
    /// `F(f) cmp X` for a floor `F` to a grid (`date_trunc(unit)`): `>= X` ⇔ `f >= ceil(X)`,
    /// `< X` ⇔ `f < ceil(X)`, `> X` ⇔ `f >= F(X) + 1 unit`, `<= X` ⇔ `f < F(X) + 1 unit`,
    /// `= X` ⇔ `X <= f < X + 1 unit` when X is on the grid (no row otherwise).
    fn floor(&mut self, inner: Ty, u: Unit, cs: Conds) -> Result<Conds, String> {
        if !inner.is_time() {
            return Err("date_trunc of a value that is not a date or timestamp".into());
        }
        if inner != Ty::Ts
            || cs
                .iter()
                .any(|(_, x)| self.value_ty(x, Ty::Unknown) == Ty::TsTz)
        {
            self.assume(SESSION_ZONE.into());
        }
        self.because(format!(
            "date_trunc('{}', c) is a floor: each bound rounds to a whole {}",
            u.name(),
            u.name()
        ));
        let mut out = Conds::new();
        for (c, x) in cs {
            let aligned = self.aligned(&x, u);
            let t = |x: &Expr| format!("date_trunc('{}', {x})", u.name());
            let step = format!("interval '{}'", u.one());
            let ceil = if aligned {
                x.clone()
            } else {
                sql(&format!(
                    "CASE WHEN {d} = {x} THEN {x} ELSE {d} + {step} END",
                    d = t(&x)
                ))?
            };
            let next = sql(&format!("{} + {step}", t(&x)))?;
            match c {
                Cmp::Ge => out.push((Cmp::Ge, ceil)),
                Cmp::Lt => out.push((Cmp::Lt, ceil)),
                Cmp::Gt => out.push((Cmp::Ge, next)),
                Cmp::Le => out.push((Cmp::Lt, next)),
                Cmp::Eq => {
                    let upper = if aligned {
                        sql(&format!("{} + {step}", operand(x.clone())))?
                    } else {
                        sql(&format!(
                            "CASE WHEN {d} = {x} THEN {x} + {step} ELSE {x} END",
                            d = t(&x)
                        ))?
                    };
                    out.push((Cmp::Ge, x));
                    out.push((Cmp::Lt, upper));
                    self.window = u.window();
                }
            }
        }
        Ok(out)
    }

    /// True when `x` is on the grid of `u` whatever its value: a date for units up to a day,
    /// or a `date_trunc` to a unit that covers `u`.
    fn aligned(&mut self, x: &Expr, u: Unit) -> bool {
        if self.value_ty(x, Ty::Unknown) == Ty::Date && Unit::Day.covers(u) {
            return true;
        }
        match x {
            Expr::Nested(inner) => self.aligned(inner, u),
            Expr::Function(f) if crate::exprs::bare_name(&f.name) == "date_trunc" => {
                let first = match &f.args {
                    FunctionArguments::List(l) => l.args.first(),
                    _ => None,
                };
                let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(unit))) = first else {
                    return false;
                };
                self.literal_of(unit)
                    .as_ref()
                    .and_then(string_of)
                    .as_deref()
                    .and_then(Unit::parse)
                    .is_some_and(|w| w.covers(u))
            }
            _ => false,
        }
    }

    /// `f::date cmp X`: with a date X, `>= X` ⇔ `f >= X`, `> X` ⇔ `f >= X + 1`, `< X` ⇔ `f < X`,
    /// `<= X` ⇔ `f < X + 1`, `= X` ⇔ `X <= f < X + 1`; otherwise the floor to a day.
    fn date_cast(&mut self, inner: Ty, cs: Conds) -> Result<Conds, String> {
        if inner == Ty::Date {
            self.because("a date cast to date is itself".into());
            return Ok(cs);
        }
        if !matches!(inner, Ty::Ts | Ty::TsTz) {
            return Err("::date of a value that is not a timestamp".into());
        }
        if cs
            .iter()
            .any(|(_, x)| self.value_ty(x, Ty::Date) != Ty::Date)
        {
            return self.floor(inner, Unit::Day, cs);
        }
        if inner == Ty::TsTz {
            self.assume(SESSION_ZONE.into());
        }
        self.because("::date is the floor to a day: a date bound is midnight of that day".into());
        let mut out = Conds::new();
        for (c, x) in cs {
            let next = bin(x.clone(), BinaryOperator::Plus, sql("1")?);
            match c {
                Cmp::Ge | Cmp::Lt => out.push((c, x)),
                Cmp::Gt => out.push((Cmp::Ge, next)),
                Cmp::Le => out.push((Cmp::Lt, next)),
                Cmp::Eq => {
                    out.push((Cmp::Ge, x));
                    out.push((Cmp::Lt, next));
                    self.window = Some(remodel_model::TimeWindow::Day);
                }
            }
        }
        Ok(out)
    }

    /// Casts that keep every value and its order (widening integers, integer to numeric, date to
    /// timestamp) are the identity; `::date` is a floor; anything else changes the order or
    /// merges values.
    fn cast(&mut self, inner: Ty, dt: &DataType, cs: Conds) -> Result<Conds, String> {
        let to = ty_of_data_type(dt);
        if to == Ty::Date {
            return self.date_cast(inner, cs);
        }
        let widening = match (inner, to) {
            (a, b) if a == b => true,
            (Ty::Int(a), Ty::Int(b)) => b >= a,
            (Ty::Int(_), Ty::Numeric) | (Ty::Date, Ty::Ts) => true,
            _ => false,
        };
        if !widening {
            return Err(match to {
                Ty::Other => format!("the cast to {dt} compares in another order or rounds"),
                _ => format!(
                    "the cast to {dt} is not one-to-one and order-preserving for this column"
                ),
            });
        }
        self.because(format!("the cast to {dt} keeps every value and its order"));
        Ok(cs)
    }

    /// `extract(epoch FROM f) cmp X` ⇔ `f cmp to_timestamp(X)` (at UTC for a timestamp without
    /// time zone, whose epoch is read as UTC).
    fn epoch(&mut self, inner: Ty, cs: Conds) -> Result<Conds, String> {
        if !inner.is_time() {
            return Err("extract(epoch …) of a value that is not a date or timestamp".into());
        }
        if cs
            .iter()
            .any(|(_, x)| !matches!(self.value_ty(x, Ty::Numeric), Ty::Int(_) | Ty::Numeric))
        {
            return Err("extract(epoch …) compared with a value that is not a number".into());
        }
        self.assume(EPOCH_PRECISION.into());
        self.because("extract(epoch FROM c) grows with c; to_timestamp undoes it".into());
        let mut out = Conds::new();
        for (c, x) in cs {
            let t = match inner {
                Ty::TsTz => format!("to_timestamp({x})"),
                _ => format!("to_timestamp({x}) AT TIME ZONE 'UTC'"),
            };
            out.push((c, sql(&t)?));
        }
        Ok(out)
    }

    /// `f / k` on integers truncates toward zero; with `L(m)` the least `f` whose quotient is
    /// at least `m` (`m * k` for m > 0, `(m - 1) * k + 1` otherwise): `>= m` ⇔ `f >= L(m)`,
    /// `> m` ⇔ `f >= L(m + 1)`, `< m` ⇔ `f < L(m)`, `<= m` ⇔ `f < L(m + 1)`.
    fn int_div(&mut self, inner: Ty, k: &Expr, cs: Conds) -> Result<Conds, String> {
        match inner {
            Ty::Int(_) => {}
            Ty::Numeric => {
                return Err("numeric division rounds (to a scale Postgres chooses)".into())
            }
            _ => return Err("division is handled for integer columns only".into()),
        }
        let lit = self.literal_of(k);
        let d = match lit.as_ref().and_then(Decimal::of) {
            Some(d) if d.scale == 0 && !d.digits.bytes().all(|b| b == b'0') => d,
            Some(_) => {
                return Err(format!(
                    "dividing by {k}: not a non-zero integer (numeric division rounds)"
                ))
            }
            None => {
                return Err(format!(
                    "the divisor {k} is not a constant of the SQL: its sign is unknown"
                ))
            }
        };
        if cs
            .iter()
            .any(|(_, x)| !matches!(self.value_ty(x, Ty::Int(8)), Ty::Int(_)))
        {
            return Err("integer division compared with a value that may not be an integer".into());
        }
        let cs = if d.negative {
            self.negate(inner, cs)?
        } else {
            cs
        };
        let k = d.digits.trim_start_matches('0').to_string();
        self.because(format!(
            "integer division by {k} truncates toward zero: each quotient is a known range of c"
        ));
        let least = |m: &Expr| -> Result<Expr, String> {
            let m = operand(m.clone());
            sql(&format!(
                "CASE WHEN {m} > 0 THEN {m}::numeric * {k} ELSE ({m}::numeric - 1) * {k} + 1 END"
            ))
        };
        let one = sql("1")?;
        let plus1 = |m: Expr| bin(m, BinaryOperator::Plus, one.clone());
        let mut out = Conds::new();
        for (c, m) in cs {
            match c {
                Cmp::Ge => out.push((Cmp::Ge, least(&m)?)),
                Cmp::Lt => out.push((Cmp::Lt, least(&m)?)),
                Cmp::Gt => out.push((Cmp::Ge, least(&plus1(m))?)),
                Cmp::Le => out.push((Cmp::Lt, least(&plus1(m))?)),
                Cmp::Eq => {
                    out.push((Cmp::Ge, least(&m)?));
                    out.push((Cmp::Lt, least(&plus1(m))?));
                }
            }
        }
        Ok(out)
    }

    /// True when `v` is never NULL: a literal (or the example's literal for a `$n`), `now()`
    /// and the like, or arithmetic of those.
    pub(super) fn never_null(&mut self, v: &Expr) -> bool {
        const NOT_NULL: [&str; 8] = [
            "now",
            "current_timestamp",
            "current_date",
            "localtimestamp",
            "transaction_timestamp",
            "statement_timestamp",
            "clock_timestamp",
            "current_time",
        ];
        match v {
            Expr::Nested(x) | Expr::UnaryOp { expr: x, .. } | Expr::Cast { expr: x, .. } => {
                self.never_null(x)
            }
            Expr::BinaryOp { left, right, .. } => self.never_null(left) && self.never_null(right),
            Expr::Function(f) => {
                let no_args = match &f.args {
                    sqlparser::ast::FunctionArguments::None => true,
                    sqlparser::ast::FunctionArguments::List(l) => l.args.is_empty(),
                    _ => false,
                };
                no_args && NOT_NULL.contains(&crate::exprs::bare_name(&f.name).as_str())
            }
            other => self.literal_of(other).is_some(),
        }
    }
}
