//! The plan's expressions as Python: every operator and function a call of the runtime
//! (`rt.compare("eq", a, b)`, `rt.add(a, b)`), which gives it SQL's meaning (NULL propagates, a
//! filter keeps TRUE only); the clock is the execution's `now`; a value the plan leaves to the
//! application (an application-computed expression, a sequence, a random UUID) is a hook call.

use super::{Gen, Skip};
use crate::shape::Param;
use remodel_model::{BinaryOp, ColumnRef, Expr, Function, Literal, RowRef, ScalarType, UnaryOp};

/// The Python of a column of a named read step's row.
pub(super) type StepColumn<'s> = dyn Fn(&str, &ColumnRef) -> String + 's;

/// How an expression's columns and parameters read where it is evaluated.
pub(super) struct Scope<'s> {
    /// The function's parameters (`$n` is `params[n - 1].name`).
    pub params: &'s [Param],
    /// The Python of a column of the row at hand ([`RowRef::This`]).
    pub this: &'s dyn Fn(&ColumnRef) -> String,
    /// The Python of a column of a named read step's row (`UPDATE … FROM t s`).
    pub step: Option<&'s StepColumn<'s>>,
    /// The Python of a column of the row an upsert proposed (`EXCLUDED.c`).
    pub excluded: Option<&'s dyn Fn(&ColumnRef) -> String>,
    /// The source column whose new value is being computed (names a sequence's hook call).
    pub column: Option<&'s ColumnRef>,
    /// The pattern (names an application-computed value's hook).
    pub pattern: &'s str,
}

impl<'s> Scope<'s> {
    /// The scope of pattern `pattern`'s `params`, its row's columns read as `this` (no named
    /// step, no proposed row, no column computed).
    pub(super) fn new(
        params: &'s [Param],
        this: &'s dyn Fn(&ColumnRef) -> String,
        pattern: &'s str,
    ) -> Self {
        Scope {
            params,
            this,
            step: None,
            excluded: None,
            column: None,
            pattern,
        }
    }
}

/// `s` as a Python string literal.
pub(super) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal as Python.
pub(super) fn literal(g: &mut Gen<'_>, l: &Literal) -> String {
    match l {
        Literal::Null => "None".into(),
        Literal::Boolean { value } => if *value { "True" } else { "False" }.into(),
        Literal::Integer { value } => value.to_string(),
        Literal::Numeric { value } => {
            g.import("decimal");
            format!("decimal.Decimal({})", string(value))
        }
        Literal::Text { value } => string(value),
        Literal::Date { value } => {
            g.import("dt");
            format!("dt.date.fromisoformat({})", string(value))
        }
        Literal::Timestamp { value } => {
            g.import("dt");
            format!("dt.datetime.fromisoformat({})", string(value))
        }
        Literal::Timestamptz { value } => {
            format!("rt.timestamptz_from_text({}, _ZONE)", string(value))
        }
        Literal::Interval {
            months,
            days,
            micros,
        } => format!("rt.Interval({months}, {days}, {micros})"),
        Literal::Uuid { value } => {
            g.import("uuid");
            format!("uuid.UUID({})", string(value))
        }
        Literal::Bytes { hex } => format!("bytes.fromhex({})", string(hex)),
    }
}

/// The comparison name of a binary operator the runtime compares by.
fn comparison(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
        _ => return None,
    })
}

impl Gen<'_> {
    /// `e` as a Python expression in `scope`.
    pub(super) fn expr(&mut self, e: &Expr, scope: &Scope<'_>) -> Result<String, Skip> {
        Ok(match e {
            Expr::Param { n } => param(scope, *n)?,
            Expr::Literal { value } => literal(self, value),
            Expr::Column { column, row } => match row {
                RowRef::This => (scope.this)(column),
                RowRef::Excluded => match scope.excluded {
                    Some(f) => f(column),
                    None => {
                        return Err(Skip(format!(
                            "EXCLUDED.{} outside an upsert",
                            column.column
                        )))
                    }
                },
                RowRef::Step { name } => match scope.step {
                    Some(f) => f(name, column),
                    None => {
                        return Err(Skip(format!("{name}.{} outside its write", column.column)))
                    }
                },
            },
            Expr::Now => "now".into(),
            Expr::CurrentDate => "rt.cast(now, \"date\", _ZONE)".into(),
            Expr::Unary { op, arg } => {
                let a = self.expr(arg, scope)?;
                match op {
                    UnaryOp::Not => format!("rt.not_({a})"),
                    UnaryOp::Neg => format!("rt.neg({a})"),
                }
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.expr(left, scope)?, self.expr(right, scope)?);
                match (op, comparison(*op)) {
                    (_, Some(c)) => format!("rt.compare({}, {l}, {r})", string(c)),
                    (BinaryOp::And, _) => format!("rt.and_({l}, {r})"),
                    (BinaryOp::Or, _) => format!("rt.or_({l}, {r})"),
                    (BinaryOp::Add, _) => format!("rt.add({l}, {r})"),
                    (BinaryOp::Sub, _) => format!("rt.sub({l}, {r})"),
                    (BinaryOp::Mul, _) => format!("rt.mul({l}, {r})"),
                    (BinaryOp::Div, _) => format!("rt.div({l}, {r})"),
                    (BinaryOp::Mod, _) => format!("rt.mod({l}, {r})"),
                    (BinaryOp::Concat, _) => format!("rt.concat({l}, {r})"),
                    (other, None) => return Err(Skip(format!("operator {}", other.sql()))),
                }
            }
            Expr::IsNull { arg, negated } => {
                let a = self.expr(arg, scope)?;
                format!("rt.is_null({a}, {})", py_bool(*negated))
            }
            Expr::InList { arg, list, negated } => {
                let a = self.expr(arg, scope)?;
                let items = match list.as_slice() {
                    [one @ Expr::Param { .. }] => {
                        format!("rt.flatten([{}])", self.expr(one, scope)?)
                    }
                    items => {
                        let parts: Result<Vec<String>, Skip> =
                            items.iter().map(|x| self.expr(x, scope)).collect();
                        format!("rt.flatten([{}])", parts?.join(", "))
                    }
                };
                format!("rt.in_list({a}, {items}, {})", py_bool(*negated))
            }
            Expr::Like {
                arg,
                pattern,
                case_insensitive,
                negated,
            } => {
                let (a, p) = (self.expr(arg, scope)?, self.expr(pattern, scope)?);
                let like = format!("rt.like({a}, {p}, {})", py_bool(*case_insensitive));
                if *negated {
                    format!("rt.not_({like})")
                } else {
                    like
                }
            }
            Expr::Cast { arg, to } => {
                let a = self.expr(arg, scope)?;
                format!("rt.cast({a}, {}, _ZONE)", string(to.sql()))
            }
            Expr::Call { function, args } => self.call(*function, args, scope)?,
            Expr::Row { items } => {
                let parts: Result<Vec<String>, Skip> =
                    items.iter().map(|x| self.expr(x, scope)).collect();
                format!("({},)", parts?.join(", "))
            }
            Expr::Computed { sql, params, ty } => self.computed(sql, params, *ty, scope)?,
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let mut out = match otherwise {
                    Some(o) => self.expr(o, scope)?,
                    None => "None".into(),
                };
                let op = match operand {
                    Some(o) => Some(self.expr(o, scope)?),
                    None => None,
                };
                for b in branches.iter().rev() {
                    let w = self.expr(&b.when, scope)?;
                    let t = self.expr(&b.then, scope)?;
                    let cond = match &op {
                        Some(o) => format!("rt.compare(\"eq\", {o}, {w})"),
                        None => w,
                    };
                    out = format!("({t} if rt.is_true({cond}) else {out})");
                }
                out
            }
        })
    }

    /// A call of one of the plan's functions.
    fn call(&mut self, f: Function, args: &[Expr], scope: &Scope<'_>) -> Result<String, Skip> {
        let column = scope.column.map(crate::shape::row_key).unwrap_or_default();
        match f {
            Function::GenRandomUuid => {
                return Ok(format!("self._hooks.random_uuid({})", string(&column)))
            }
            Function::Nextval => {
                let seq = match args.first() {
                    Some(Expr::Literal {
                        value: Literal::Text { value },
                    }) => value.clone(),
                    _ => String::new(),
                };
                return Ok(format!(
                    "self._hooks.nextval({}, {})",
                    string(&seq),
                    string(&column)
                ));
            }
            _ => {}
        }
        let parts: Result<Vec<String>, Skip> = args.iter().map(|x| self.expr(x, scope)).collect();
        let a = parts?.join(", ");
        Ok(match f {
            Function::Lower => format!("rt.lower({a})"),
            Function::Upper => format!("rt.upper({a})"),
            Function::Length => format!("rt.length({a})"),
            Function::Trim => format!("rt.btrim({a})"),
            Function::Substr => format!("rt.substr({a})"),
            Function::Abs => format!("rt.abs_({a})"),
            Function::Round => format!("rt.round_({a})"),
            Function::Floor => format!("rt.floor({a})"),
            Function::Ceil => format!("rt.ceil({a})"),
            Function::Coalesce => format!("rt.coalesce({a})"),
            Function::Nullif => format!("rt.nullif({a})"),
            Function::Greatest => format!("rt.greatest({a})"),
            Function::Least => format!("rt.least({a})"),
            Function::DateTrunc => format!("rt.date_trunc({a}, _ZONE)"),
            Function::DatePart => format!("rt.date_part({a}, _ZONE)"),
            Function::GenRandomUuid | Function::Nextval => unreachable!("handled above"),
        })
    }

    /// An application-computed value: a hook of its own, named after the pattern, whose
    /// docstring quotes the SQL the application computes.
    fn computed(
        &mut self,
        sql: &str,
        params: &[u32],
        ty: Option<ScalarType>,
        scope: &Scope<'_>,
    ) -> Result<String, Skip> {
        let args: Result<Vec<&Param>, Skip> = params
            .iter()
            .map(|n| {
                scope
                    .params
                    .get(*n as usize - 1)
                    .ok_or_else(|| Skip(format!("${n} of `{sql}` is no parameter")))
            })
            .collect();
        let args = args?;
        let name = self.hook(scope.pattern, sql, &args, ty);
        let call: Vec<String> = args.iter().map(|p| p.name.clone()).collect();
        Ok(format!("self._hooks.{name}({})", call.join(", ")))
    }
}

/// `$n` as the function's parameter.
fn param(scope: &Scope<'_>, n: u32) -> Result<String, Skip> {
    scope
        .params
        .get((n as usize).wrapping_sub(1))
        .map(|p| p.name.clone())
        .ok_or_else(|| Skip(format!("${n} is no parameter of the statement")))
}

/// `True` / `False`.
pub(super) fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
