//! The plan's expressions as Java: every operator and function a call of the runtime
//! (`Rt.compare("eq", a, b)`, `Rt.add(a, b)`), which gives it SQL's meaning (NULL propagates, a
//! filter keeps TRUE only); the clock is the execution's `now`; a value the plan leaves to the
//! application (an application-computed expression, a sequence, a random UUID) is a hook call.
//! Every value is an `Object`: a literal is boxed, a `CASE` goes through `Rt.obj` (a conditional
//! expression of two boxed numbers would unbox them).

use super::{java_name, Gen, Skip};
use crate::shape::Param;
use remodel_model::{BinaryOp, ColumnRef, Expr, Function, Literal, RowRef, ScalarType, UnaryOp};

/// The Java of a column of a named read step's row.
pub(super) type StepColumn<'s> = dyn Fn(&str, &ColumnRef) -> String + 's;

/// How an expression's columns and parameters read where it is evaluated.
pub(super) struct Scope<'s> {
    /// The method's parameters (`$n` is `params[n - 1].name`).
    pub params: &'s [Param],
    /// The Java of a column of the row at hand ([`RowRef::This`]).
    pub this: &'s dyn Fn(&ColumnRef) -> String,
    /// The Java of a column of a named read step's row (`UPDATE … FROM t s`).
    pub step: Option<&'s StepColumn<'s>>,
    /// The Java of a column of the row an upsert proposed (`EXCLUDED.c`).
    pub excluded: Option<&'s dyn Fn(&ColumnRef) -> String>,
    /// The source column whose new value is being computed (names a sequence's hook call).
    pub column: Option<&'s ColumnRef>,
    /// The pattern (names an application-computed value's hook).
    pub pattern: &'s str,
}

impl<'s> Scope<'s> {
    /// The scope of pattern `pattern`'s `params`, its row's columns read as `this`.
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

/// `s` as a Java string literal.
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
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal as Java (boxed).
pub(super) fn literal(l: &Literal) -> String {
    match l {
        Literal::Null => "null".into(),
        Literal::Boolean { value } => if *value {
            "Boolean.TRUE"
        } else {
            "Boolean.FALSE"
        }
        .into(),
        Literal::Integer { value } => format!("Long.valueOf({value}L)"),
        Literal::Numeric { value } => format!("new BigDecimal({})", string(value)),
        Literal::Text { value } => string(value),
        Literal::Date { value } => format!("LocalDate.parse({})", string(value)),
        Literal::Timestamp { value } => format!("Rt.timestampFromText({})", string(value)),
        Literal::Timestamptz { value } => {
            format!("Rt.timestamptzFromText({}, ZONE)", string(value))
        }
        Literal::Interval {
            months,
            days,
            micros,
        } => format!("new Rt.Interval({months}L, {days}L, {micros}L)"),
        Literal::Uuid { value } => format!("UUID.fromString({})", string(value)),
        Literal::Bytes { hex } => format!("Rt.hex({})", string(hex)),
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
    /// `e` as a Java expression in `scope`.
    pub(super) fn expr(&mut self, e: &Expr, scope: &Scope<'_>) -> Result<String, Skip> {
        Ok(match e {
            Expr::Param { n } => param(scope, *n)?,
            Expr::Literal { value } => literal(value),
            Expr::Column { column, row } => self.column(column, row, scope)?,
            Expr::Now => "now".into(),
            Expr::CurrentDate => "Rt.cast(now, \"date\", ZONE)".into(),
            Expr::Unary { op, arg } => {
                let a = self.expr(arg, scope)?;
                match op {
                    UnaryOp::Not => format!("Rt.not({a})"),
                    UnaryOp::Neg => format!("Rt.neg({a})"),
                }
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.expr(left, scope)?, self.expr(right, scope)?);
                let f = match (op, comparison(*op)) {
                    (_, Some(c)) => return Ok(format!("Rt.compare({}, {l}, {r})", string(c))),
                    (BinaryOp::And, _) => "and",
                    (BinaryOp::Or, _) => "or",
                    (BinaryOp::Add, _) => "add",
                    (BinaryOp::Sub, _) => "sub",
                    (BinaryOp::Mul, _) => "mul",
                    (BinaryOp::Div, _) => "div",
                    (BinaryOp::Mod, _) => "mod",
                    (BinaryOp::Concat, _) => "concat",
                    (other, None) => return Err(Skip(format!("operator {}", other.sql()))),
                };
                format!("Rt.{f}({l}, {r})")
            }
            Expr::IsNull { arg, negated } => {
                format!("Rt.isNull({}, {negated})", self.expr(arg, scope)?)
            }
            Expr::InList { arg, list, negated } => {
                let a = self.expr(arg, scope)?;
                let items = self.array(list, scope)?;
                format!("Rt.inList({a}, Rt.flatten({items}), {negated})")
            }
            Expr::Like {
                arg,
                pattern,
                case_insensitive,
                negated,
            } => {
                let (a, p) = (self.expr(arg, scope)?, self.expr(pattern, scope)?);
                let like = format!("Rt.like({a}, {p}, {case_insensitive})");
                if *negated {
                    format!("Rt.not({like})")
                } else {
                    like
                }
            }
            Expr::Cast { arg, to } => {
                format!(
                    "Rt.cast({}, {}, ZONE)",
                    self.expr(arg, scope)?,
                    string(to.sql())
                )
            }
            Expr::Call { function, args } => self.call(*function, args, scope)?,
            Expr::Row { items } => format!("Rt.tuple({})", self.array(items, scope)?),
            Expr::Computed { sql, params, ty } => self.computed(sql, params, *ty, scope)?,
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => self.case(operand.as_deref(), branches, otherwise.as_deref(), scope)?,
        })
    }

    /// `CASE [operand] WHEN … THEN … [ELSE …] END`: the first branch whose condition is TRUE.
    fn case(
        &mut self,
        operand: Option<&Expr>,
        branches: &[remodel_model::CaseBranch],
        otherwise: Option<&Expr>,
        scope: &Scope<'_>,
    ) -> Result<String, Skip> {
        let mut out = match otherwise {
            Some(o) => self.expr(o, scope)?,
            None => "null".into(),
        };
        let op = match operand {
            Some(o) => Some(self.expr(o, scope)?),
            None => None,
        };
        for b in branches.iter().rev() {
            let w = self.expr(&b.when, scope)?;
            let t = self.expr(&b.then, scope)?;
            let cond = match &op {
                Some(o) => format!("Rt.compare(\"eq\", {o}, {w})"),
                None => w,
            };
            out = format!("(Rt.isTrue({cond}) ? Rt.obj({t}) : Rt.obj({out}))");
        }
        Ok(out)
    }

    /// A column of the row at hand, of the row an upsert proposed or of a named step's row.
    fn column(&self, column: &ColumnRef, row: &RowRef, scope: &Scope<'_>) -> Result<String, Skip> {
        Ok(match row {
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
                None => return Err(Skip(format!("{name}.{} outside its write", column.column))),
            },
        })
    }

    /// `new Object[] {a, b}` of `items`.
    fn array(&mut self, items: &[Expr], scope: &Scope<'_>) -> Result<String, Skip> {
        let parts: Result<Vec<String>, Skip> = items.iter().map(|x| self.expr(x, scope)).collect();
        Ok(format!("new Object[] {{{}}}", parts?.join(", ")))
    }

    /// A call of one of the plan's functions.
    fn call(&mut self, f: Function, args: &[Expr], scope: &Scope<'_>) -> Result<String, Skip> {
        let column = scope.column.map(crate::shape::row_key).unwrap_or_default();
        match f {
            Function::GenRandomUuid => return Ok(format!("hooks.randomUuid({})", string(&column))),
            Function::Nextval => {
                let seq = match args.first() {
                    Some(Expr::Literal {
                        value: Literal::Text { value },
                    }) => value.clone(),
                    _ => String::new(),
                };
                return Ok(format!(
                    "Long.valueOf(hooks.nextval({}, {}))",
                    string(&seq),
                    string(&column)
                ));
            }
            Function::Coalesce | Function::Greatest | Function::Least => {
                let name = match f {
                    Function::Coalesce => "coalesce",
                    Function::Greatest => "greatest",
                    _ => "least",
                };
                return Ok(format!("Rt.{name}({})", self.array(args, scope)?));
            }
            _ => {}
        }
        let parts: Result<Vec<String>, Skip> = args.iter().map(|x| self.expr(x, scope)).collect();
        let a = parts?.join(", ");
        Ok(match f {
            Function::Lower => format!("Rt.lower({a})"),
            Function::Upper => format!("Rt.upper({a})"),
            Function::Length => format!("Rt.length({a})"),
            Function::Trim => format!("Rt.btrim({a})"),
            Function::Substr => format!("Rt.substr({a})"),
            Function::Abs => format!("Rt.abs({a})"),
            Function::Round => format!("Rt.round({a})"),
            Function::Floor => format!("Rt.floor({a})"),
            Function::Ceil => format!("Rt.ceil({a})"),
            Function::Nullif => format!("Rt.nullif({a})"),
            Function::DateTrunc => format!("Rt.dateTrunc({a}, ZONE)"),
            Function::DatePart => format!("Rt.datePart({a}, ZONE)"),
            Function::GenRandomUuid
            | Function::Nextval
            | Function::Coalesce
            | Function::Greatest
            | Function::Least => unreachable!("handled above"),
        })
    }

    /// An application-computed value: a hook of its own, named after the pattern.
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
                    .get((*n as usize).wrapping_sub(1))
                    .ok_or_else(|| Skip(format!("${n} of `{sql}` is no parameter")))
            })
            .collect();
        let args = args?;
        let name = self.hook(scope.pattern, sql, &args, ty);
        let call: Vec<String> = args.iter().map(|p| java_name(&p.name)).collect();
        Ok(format!("hooks.{name}({})", call.join(", ")))
    }
}

/// `$n` as the method's parameter.
fn param(scope: &Scope<'_>, n: u32) -> Result<String, Skip> {
    scope
        .params
        .get((n as usize).wrapping_sub(1))
        .map(|p| java_name(&p.name))
        .ok_or_else(|| Skip(format!("${n} is no parameter of the statement")))
}
