//! The plan's expressions: every operator and function a call of the runtime (`compare("eq",
//! a, b)`, `add(a, b)`), which gives it SQL's meaning (NULL propagates, a filter keeps TRUE
//! only); the clock is the execution's `now`; a value the plan leaves to the application (an
//! application-computed expression, a sequence, a random UUID) is a hook call.

use super::{Gen, Skip, Spell};
use crate::shape::Param;
use remodel_model::{
    BinaryOp, CaseBranch, ColumnRef, Expr, Function, IdStrategy, Literal, RowRef, ScalarType,
    UnaryOp,
};

/// The code of a column of a named read step's row.
pub(crate) type StepColumn<'s> = dyn Fn(&str, &ColumnRef) -> String + 's;

/// How an expression's columns and parameters read where it is evaluated.
pub(crate) struct Scope<'s> {
    /// The function's parameters (`$n` is `params[n - 1].name`).
    pub params: &'s [Param],
    /// The code of a column of the row at hand ([`RowRef::This`]).
    pub this: &'s dyn Fn(&ColumnRef) -> String,
    /// The code of a column of a named read step's row (`UPDATE … FROM t s`).
    pub step: Option<&'s StepColumn<'s>>,
    /// The code of a column of the row an upsert proposed (`EXCLUDED.c`).
    pub excluded: Option<&'s dyn Fn(&ColumnRef) -> String>,
    /// The source column whose new value is being computed (names a sequence's hook call).
    pub column: Option<&'s ColumnRef>,
    /// The pattern (names an application-computed value's hook).
    pub pattern: &'s str,
}

impl<'s> Scope<'s> {
    /// The scope of pattern `pattern`'s `params`, its row's columns read as `this` (no named
    /// step, no proposed row, no column computed).
    pub(crate) fn new(
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

/// The runtime's name of a binary operator (`None`: a comparison, or none the runtime has).
fn operator(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Mod => "mod",
        BinaryOp::Concat => "concat",
        _ => return None,
    })
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

impl<L: Spell> Gen<'_, L> {
    /// `e` as an expression of the language in `scope`.
    pub(crate) fn expr(&mut self, e: &Expr, scope: &Scope<'_>) -> Result<String, Skip> {
        Ok(match e {
            Expr::Param { n } => match param(scope, *n) {
                Some(p) => L::param(p),
                None => return Err(Skip(format!("${n} is no parameter of the statement"))),
            },
            Expr::Literal { value } => self.lang.literal(value),
            Expr::Column { column, row } => column_of(column, row, scope)?,
            Expr::Now => "now".into(),
            Expr::CurrentDate => L::rt("cast", &["now".into(), L::string("date"), L::ZONE.into()]),
            Expr::Unary { op, arg } => {
                let a = self.expr(arg, scope)?;
                match op {
                    UnaryOp::Not => L::rt("not", &[a]),
                    UnaryOp::Neg => L::rt("neg", &[a]),
                }
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.expr(left, scope)?, self.expr(right, scope)?);
                match (comparison(*op), operator(*op)) {
                    (Some(c), _) => L::rt("compare", &[L::string(c), l, r]),
                    (None, Some(f)) => L::rt(f, &[l, r]),
                    (None, None) => return Err(Skip(format!("operator {}", op.sql()))),
                }
            }
            Expr::IsNull { arg, negated } => L::rt(
                "is_null",
                &[self.expr(arg, scope)?, L::bool(*negated).into()],
            ),
            Expr::InList { arg, list, negated } => {
                let a = self.expr(arg, scope)?;
                let items = L::rt("flatten", &[L::array(&self.exprs(list, scope)?)]);
                L::rt("in_list", &[a, items, L::bool(*negated).into()])
            }
            Expr::Like {
                arg,
                pattern,
                case_insensitive,
                negated,
            } => {
                let (a, p) = (self.expr(arg, scope)?, self.expr(pattern, scope)?);
                let like = L::rt("like", &[a, p, L::bool(*case_insensitive).into()]);
                if *negated {
                    L::rt("not", &[like])
                } else {
                    like
                }
            }
            Expr::Cast { arg, to } => {
                let a = self.expr(arg, scope)?;
                L::rt("cast", &[a, L::string(to.sql()), L::ZONE.into()])
            }
            Expr::Call { function, args } => self.call(*function, args, scope)?,
            Expr::Row { items } => L::tuple(&self.exprs(items, scope)?),
            Expr::Computed { sql, params, ty } => self.computed(sql, params, *ty, scope)?,
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => self.case(operand.as_deref(), branches, otherwise.as_deref(), scope)?,
        })
    }

    /// Each of `items` as an expression.
    pub(crate) fn exprs(&mut self, items: &[Expr], scope: &Scope<'_>) -> Result<Vec<String>, Skip> {
        items.iter().map(|x| self.expr(x, scope)).collect()
    }

    /// `CASE [operand] WHEN … THEN … [ELSE …] END`: the first branch whose condition is TRUE.
    fn case(
        &mut self,
        operand: Option<&Expr>,
        branches: &[CaseBranch],
        otherwise: Option<&Expr>,
        scope: &Scope<'_>,
    ) -> Result<String, Skip> {
        let mut out = match otherwise {
            Some(o) => self.expr(o, scope)?,
            None => L::NULL.into(),
        };
        let op = match operand {
            Some(o) => Some(self.expr(o, scope)?),
            None => None,
        };
        for b in branches.iter().rev() {
            let w = self.expr(&b.when, scope)?;
            let t = self.expr(&b.then, scope)?;
            let cond = match &op {
                Some(o) => L::rt("compare", &[L::string("eq"), o.clone(), w]),
                None => w,
            };
            out = L::case_branch(&L::rt("is_true", &[cond]), &t, &out);
        }
        Ok(out)
    }

    /// A call of one of the plan's functions.
    fn call(&mut self, f: Function, args: &[Expr], scope: &Scope<'_>) -> Result<String, Skip> {
        let column = scope.column.map(crate::shape::row_key).unwrap_or_default();
        Ok(match f {
            Function::GenRandomUuid => hook_call::<L>("random_uuid", &[L::string(&column)]),
            Function::Nextval => self.nextval(args, scope)?,
            Function::Coalesce | Function::Greatest | Function::Least => {
                L::rt(f.name(), &[L::varargs(&self.exprs(args, scope)?)])
            }
            Function::DateTrunc | Function::DatePart => {
                let mut a = self.exprs(args, scope)?;
                a.push(L::ZONE.into());
                L::rt(f.name(), &a)
            }
            _ => L::rt(f.name(), &self.exprs(args, scope)?),
        })
    }

    /// A sequence's next value, made as the plan's `design.ids` states for the column: the
    /// hook is told the strategy (`time_ordered`, whose layout must be the one its default
    /// makes, or `application`).
    fn nextval(&mut self, args: &[Expr], scope: &Scope<'_>) -> Result<String, Skip> {
        let column = scope.column.map(crate::shape::row_key).unwrap_or_default();
        let id = scope
            .column
            .and_then(|c| self.plan.design.ids.iter().find(|i| i.column == *c))
            .ok_or_else(|| {
                Skip(format!(
                    "nextval() for {column}: the plan does not say how a writer makes a new id (design.ids)"
                ))
            })?;
        let kind = match id.strategy {
            IdStrategy::Application => "application",
            s if s == IdStrategy::TIME_ORDERED => "time_ordered",
            IdStrategy::TimeOrdered { .. } => {
                return Err(Skip(format!(
                    "nextval() for {column}: design.ids states a time-ordered layout other than the one the generated hooks make"
                )))
            }
        };
        let seq = match args.first() {
            Some(Expr::Literal {
                value: Literal::Text { value },
            }) => value.clone(),
            _ => id.sequence.clone().unwrap_or_default(),
        };
        let args = [L::string(&seq), L::string(&column), L::string(kind)];
        Ok(L::sequence(hook_call::<L>("nextval", &args)))
    }

    /// An application-computed value: a hook of its own, named after the pattern, whose
    /// documentation quotes the SQL the application computes.
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
                param(scope, *n).ok_or_else(|| Skip(format!("${n} of `{sql}` is no parameter")))
            })
            .collect();
        let args = args?;
        let name = self.hook(scope.pattern, sql, &args, ty);
        let call: Vec<String> = args.iter().map(|p| L::param(p)).collect();
        Ok(format!("{}.{name}({})", L::HOOKS, call.join(", ")))
    }
}

/// `hooks.name(args…)`, `name` snake_case.
fn hook_call<L: Spell>(name: &str, args: &[String]) -> String {
    format!("{}.{}({})", L::HOOKS, L::member(name), args.join(", "))
}

/// A column of the row at hand, of the row an upsert proposed or of a named step's row.
fn column_of(column: &ColumnRef, row: &RowRef, scope: &Scope<'_>) -> Result<String, Skip> {
    Ok(match row {
        RowRef::This => (scope.this)(column),
        RowRef::Excluded => match scope.excluded {
            Some(f) => f(column),
            None => {
                let c = &column.column;
                return Err(Skip(format!("EXCLUDED.{c} outside an upsert")));
            }
        },
        RowRef::Step { name } => match scope.step {
            Some(f) => f(name, column),
            None => return Err(Skip(format!("{name}.{} outside its write", column.column))),
        },
    })
}

/// `$n`, a parameter of the function.
fn param<'s>(scope: &Scope<'s>, n: u32) -> Option<&'s Param> {
    scope.params.get((n as usize).wrapping_sub(1))
}
