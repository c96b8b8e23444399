//! Dialect-neutral value expressions: what a plan binds, filters, sorts by and writes, as data
//! any program can evaluate without a SQL parser or a Postgres server.
//!
//! The front end turns the SQL of a statement into these (`remodel_sql::typed_expr`); an
//! expression it cannot express exactly is not turned into an approximation: the pattern that
//! needs it is stated not modelled, with the reason. [`Expr`]'s `Display` renders Postgres SQL
//! for humans (the report, summaries); nothing reads that text back.
//!
//! Semantics are SQL's, as Postgres defines them, with the time zone and the clock the plan's
//! [`Semantics`] state: NULL propagates through operators and functions (`NULL + 1` is NULL,
//! `NULL = NULL` is NULL); a filter keeps a row only when it evaluates to TRUE; `AND`/`OR` are
//! three-valued.

use crate::column_ref::ColumnRef;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A value expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expr {
    /// The statement's `n`-th parameter (`$n`, 1-based), as the application sends it; its type
    /// is the pattern's `params[n-1].type`.
    Param {
        /// The parameter's number.
        n: u32,
    },
    /// A constant.
    Literal {
        /// The value.
        value: Literal,
    },
    /// A source column's value in a row (see [`RowRef`] for which row).
    Column {
        /// The column.
        column: ColumnRef,
        /// Which row: the one being filtered or written (default), the row an `INSERT … ON
        /// CONFLICT` proposed, or a row a named read step returned.
        #[serde(default, skip_serializing_if = "RowRef::is_this")]
        row: RowRef,
    },
    /// The current instant (`now()`, `current_timestamp`): see [`Semantics::now`].
    Now,
    /// Today's date in the plan's time zone (`current_date`).
    CurrentDate,
    /// `NOT a`, `-a`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        arg: Box<Expr>,
    },
    /// `a op b`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `a IS NULL`, `a IS NOT NULL`.
    IsNull {
        /// The operand.
        arg: Box<Expr>,
        /// `IS NOT NULL`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        negated: bool,
    },
    /// `a IN (b, c, …)`; with one element that is a parameter, `a = ANY($n)`: that parameter
    /// is a list (a normalized statement's `IN ($n)` is a list collapsed into one parameter).
    InList {
        /// The operand.
        arg: Box<Expr>,
        /// The values (a list of one parameter stands for all of that parameter's elements).
        list: Vec<Expr>,
        /// `NOT IN`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        negated: bool,
    },
    /// `a LIKE p`, `a ILIKE p` (`%` any run, `_` one character, `\` escapes).
    Like {
        /// The operand.
        arg: Box<Expr>,
        /// The pattern.
        pattern: Box<Expr>,
        /// `ILIKE` (case-insensitive).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        case_insensitive: bool,
        /// `NOT LIKE`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        negated: bool,
    },
    /// `CAST(a AS type)`, `a::type`.
    Cast {
        /// The operand.
        arg: Box<Expr>,
        /// The type.
        to: ScalarType,
    },
    /// A function of a fixed, documented set.
    Call {
        /// The function.
        function: Function,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// A row value `(a, b, …)` of two or more items: an operand of a comparison (`=` `<>` `<`
    /// `<=` `>` `>=`) with another row of as many items, compared as SQL compares rows — item by
    /// item, the first pair that is not equal deciding, NULL when a pair before the decision is
    /// NULL (a keyset page: `(created_at, id) < ($2, $3)`).
    Row {
        /// The items, in order.
        items: Vec<Expr>,
    },
    /// A value the application computes from the statement's parameters by an expression the
    /// other kinds do not state (`md5($2 || $1)::uuid`, `encode(sha256($1::bytea), 'hex')`):
    /// Postgres SQL over the statement's `$n` and constants only (no column, no subquery), with
    /// Postgres' meaning. An executor evaluates it as Postgres does: replay and the contract's
    /// executor run `SELECT (<sql>)` on the source with the parameters bound; an application
    /// computes it in its own code (the report names each one).
    Computed {
        /// The SQL, with the statement's `$n` placeholders.
        sql: String,
        /// The parameters it reads, in order of first use.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        params: Vec<u32>,
        /// The type of its value, when the statement gives it (the column it is compared with
        /// or written to).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ty: Option<ScalarType>,
    },
    /// `CASE [operand] WHEN … THEN … [ELSE …] END`.
    Case {
        /// The operand compared with each `when` (absent: each `when` is a condition).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operand: Option<Box<Expr>>,
        /// The branches, in order.
        branches: Vec<CaseBranch>,
        /// The value when no branch matches (NULL when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        otherwise: Option<Box<Expr>>,
    },
}

/// One `WHEN … THEN …` of a [`Expr::Case`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CaseBranch {
    /// The condition (or the value compared with the operand).
    pub when: Expr,
    /// The result.
    pub then: Expr,
}

/// Which row a [`Expr::Column`] reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "of", rename_all = "snake_case")]
pub enum RowRef {
    /// The row being filtered (a read's rows) or written (its current values).
    #[default]
    This,
    /// The row an `INSERT … ON CONFLICT DO UPDATE` proposed (`EXCLUDED.c`).
    Excluded,
    /// A row returned by the read step of this name (an `UPDATE … FROM t AS s`: `s`).
    Step {
        /// The step's name.
        name: String,
    },
}

impl RowRef {
    /// True for [`RowRef::This`] (the default, left out of `plan.json`).
    pub fn is_this(&self) -> bool {
        matches!(self, RowRef::This)
    }
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// Logical `NOT` (NOT NULL is NULL).
    Not,
    /// Arithmetic negation.
    Neg,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `+` (numbers; timestamp/date + interval; date + integer days).
    Add,
    /// `-` (numbers; timestamp - interval; timestamp - timestamp = interval; date - date = days).
    Sub,
    /// `*`.
    Mul,
    /// `/` (integer division truncates toward zero for integer operands, as Postgres).
    Div,
    /// `%`.
    Mod,
    /// `||` (text concatenation; NULL if either side is NULL).
    Concat,
    /// `=`.
    Eq,
    /// `<>`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// Three-valued `AND`.
    And,
    /// Three-valued `OR`.
    Or,
}

impl BinaryOp {
    /// The operator as SQL writes it.
    pub fn sql(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Concat => "||",
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        }
    }
}

/// The functions an expression may call. Each behaves as the Postgres function of that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Function {
    /// `lower(text)`.
    Lower,
    /// `upper(text)`.
    Upper,
    /// `length(text)` in characters.
    Length,
    /// `btrim(text)` (`trim(both from …)`).
    Trim,
    /// `substr(text, from [, count])`, 1-based.
    Substr,
    /// `abs(n)`.
    Abs,
    /// `round(n [, digits])` (half away from zero for numeric).
    Round,
    /// `floor(n)`.
    Floor,
    /// `ceil(n)`.
    Ceil,
    /// `coalesce(a, b, …)`: the first non-NULL argument.
    Coalesce,
    /// `nullif(a, b)`.
    Nullif,
    /// `greatest(a, b, …)` (NULLs ignored).
    Greatest,
    /// `least(a, b, …)` (NULLs ignored).
    Least,
    /// `date_trunc('unit', ts)`: the unit a text literal (`hour`, `day`, `week`, `month`,
    /// `year`, …), truncated in the plan's time zone for a `timestamptz`.
    DateTrunc,
    /// `EXTRACT(field FROM x)` (arguments: the field as a text literal, then `x`), in the plan's
    /// time zone, with `EXTRACT`'s `numeric` result (Postgres 14 and later); Postgres'
    /// `date_part('field', x)` is this cast to `double precision`.
    DatePart,
    /// `gen_random_uuid()`: a random (version 4) UUID, new for every row.
    GenRandomUuid,
    /// `nextval('sequence')`: the next value of a Postgres sequence (a `serial` or identity
    /// column). Cassandra has no sequence: the application allocates the value (keeps the
    /// Postgres sequence through the cut-over, or an allocator of its own); the argument is the
    /// sequence's name as a text literal, when known.
    Nextval,
}

impl Function {
    /// The Postgres name.
    pub fn name(self) -> &'static str {
        match self {
            Function::Lower => "lower",
            Function::Upper => "upper",
            Function::Length => "length",
            Function::Trim => "btrim",
            Function::Substr => "substr",
            Function::Abs => "abs",
            Function::Round => "round",
            Function::Floor => "floor",
            Function::Ceil => "ceil",
            Function::Coalesce => "coalesce",
            Function::Nullif => "nullif",
            Function::Greatest => "greatest",
            Function::Least => "least",
            Function::DateTrunc => "date_trunc",
            Function::DatePart => "date_part",
            Function::GenRandomUuid => "gen_random_uuid",
            Function::Nextval => "nextval",
        }
    }

    /// Every function, for the front end's lookup by name and for tests.
    pub const ALL: [Function; 17] = [
        Function::Lower,
        Function::Upper,
        Function::Length,
        Function::Trim,
        Function::Substr,
        Function::Abs,
        Function::Round,
        Function::Floor,
        Function::Ceil,
        Function::Coalesce,
        Function::Nullif,
        Function::Greatest,
        Function::Least,
        Function::DateTrunc,
        Function::DatePart,
        Function::GenRandomUuid,
        Function::Nextval,
    ];
}

/// A SQL scalar type, as casts and parameters name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScalarType {
    /// `boolean`.
    Boolean,
    /// `smallint`.
    Smallint,
    /// `integer`.
    Integer,
    /// `bigint`.
    Bigint,
    /// `numeric` (exact decimal).
    Numeric,
    /// `real`.
    Real,
    /// `double precision`.
    Double,
    /// `text` (also `varchar`, `char`: their lengths are not checked by a plan).
    Text,
    /// `date`.
    Date,
    /// `time` (without time zone).
    Time,
    /// `timestamp` (without time zone).
    Timestamp,
    /// `timestamptz`: an instant.
    Timestamptz,
    /// `interval`: months, days and microseconds kept apart, as Postgres keeps them.
    Interval,
    /// `uuid`.
    Uuid,
    /// `bytea`.
    Bytea,
    /// `json`/`jsonb` (as text).
    Json,
}

impl ScalarType {
    /// The Postgres name.
    pub fn sql(self) -> &'static str {
        match self {
            ScalarType::Boolean => "boolean",
            ScalarType::Smallint => "smallint",
            ScalarType::Integer => "integer",
            ScalarType::Bigint => "bigint",
            ScalarType::Numeric => "numeric",
            ScalarType::Real => "real",
            ScalarType::Double => "double precision",
            ScalarType::Text => "text",
            ScalarType::Date => "date",
            ScalarType::Time => "time",
            ScalarType::Timestamp => "timestamp",
            ScalarType::Timestamptz => "timestamptz",
            ScalarType::Interval => "interval",
            ScalarType::Uuid => "uuid",
            ScalarType::Bytea => "bytea",
            ScalarType::Json => "jsonb",
        }
    }
}

/// A constant value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Literal {
    /// `NULL`.
    Null,
    /// `true`/`false`.
    Boolean {
        /// The value.
        value: bool,
    },
    /// An integer that fits 64 bits.
    Integer {
        /// The value.
        value: i64,
    },
    /// An exact decimal number, as written (`12.50`, `-3`, `1e3` normalised to `1000`).
    Numeric {
        /// The digits.
        value: String,
    },
    /// A string.
    Text {
        /// The value.
        value: String,
    },
    /// A date, `YYYY-MM-DD`.
    Date {
        /// The value.
        value: String,
    },
    /// A timestamp without time zone, ISO 8601 without offset (`2025-01-15T00:00:00`).
    Timestamp {
        /// The value.
        value: String,
    },
    /// An instant, ISO 8601 with offset (`2025-01-15T00:00:00+01:00`); a literal written
    /// without an offset is read in the plan's time zone by the front end.
    Timestamptz {
        /// The value.
        value: String,
    },
    /// An interval: months, days and microseconds, each signed, as Postgres keeps them apart
    /// (`interval '1 month'` is not 30 days).
    Interval {
        /// Months.
        #[serde(default)]
        months: i32,
        /// Days.
        #[serde(default)]
        days: i32,
        /// Microseconds.
        #[serde(default)]
        micros: i64,
    },
    /// A UUID, lower-case hyphenated.
    Uuid {
        /// The value.
        value: String,
    },
    /// Bytes, as lower-case hexadecimal.
    Bytes {
        /// The value.
        hex: String,
    },
}

/// What the plan's expressions assume of the world: the application's time zone and clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Semantics {
    /// The session time zone of the application (IANA name, `UTC` by default): a parameter or
    /// literal of type `timestamptz` sent without an offset, `current_date`, `date_trunc` and
    /// `date_part` of a `timestamptz`, and casts between dates and instants are read in it.
    /// Time buckets state their own zone.
    pub time_zone: String,
    /// What [`Expr::Now`] is.
    pub now: NowSemantics,
}

impl Default for Semantics {
    fn default() -> Self {
        Semantics {
            time_zone: "UTC".into(),
            now: NowSemantics::ClientStatementStart,
        }
    }
}

/// Which clock `now()` reads, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NowSemantics {
    /// The executing application's clock (UTC), read once when it starts executing a pattern;
    /// every `now()` of that execution (its reads, steps and writes) is that one instant, as in
    /// Postgres, where `now()` is the start of the transaction. Clocks of application hosts
    /// must be synchronised (NTP) for windows relative to `now()` to mean the same everywhere.
    ClientStatementStart,
}

impl fmt::Display for Literal {
    /// The literal as Postgres SQL (`'it''s'`, `DATE '2025-01-15'`, `INTERVAL '1 mons 2 days'`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |s: &str| format!("'{}'", s.replace('\'', "''"));
        match self {
            Literal::Null => write!(f, "NULL"),
            Literal::Boolean { value } => write!(f, "{value}"),
            Literal::Integer { value } => write!(f, "{value}"),
            // Digits alone would read back as an integer.
            Literal::Numeric { value } if !value.contains('.') => write!(f, "{value}::numeric"),
            Literal::Numeric { value } => write!(f, "{value}"),
            Literal::Text { value } => write!(f, "{}", quoted(value)),
            Literal::Date { value } => write!(f, "DATE {}", quoted(value)),
            Literal::Timestamp { value } => write!(f, "TIMESTAMP {}", quoted(value)),
            Literal::Timestamptz { value } => write!(f, "TIMESTAMPTZ {}", quoted(value)),
            Literal::Interval {
                months,
                days,
                micros,
            } => write!(
                f,
                "INTERVAL '{months} mons {days} days {} microseconds'",
                micros
            ),
            Literal::Uuid { value } => write!(f, "UUID {}", quoted(value)),
            Literal::Bytes { hex } => write!(f, "'\\x{hex}'::bytea"),
        }
    }
}

impl fmt::Display for Expr {
    /// The expression as Postgres SQL, fully parenthesised where operators nest (for humans:
    /// the report and summaries show it; nothing parses it back).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nested = |e: &Expr| {
            if e.is_atomic() {
                e.to_string()
            } else {
                format!("({e})")
            }
        };
        match self {
            Expr::Param { n } => write!(f, "${n}"),
            Expr::Literal { value } => write!(f, "{value}"),
            Expr::Column { column, row } => match row {
                RowRef::This => write!(f, "{column}"),
                RowRef::Excluded => write!(f, "EXCLUDED.{}", column.column),
                RowRef::Step { name } => write!(f, "{name}.{}", column.column),
            },
            Expr::Now => write!(f, "now()"),
            Expr::CurrentDate => write!(f, "current_date"),
            Expr::Unary { op, arg } => match op {
                UnaryOp::Not => write!(f, "NOT {}", nested(arg)),
                UnaryOp::Neg => write!(f, "-{}", nested(arg)),
            },
            Expr::Binary { op, left, right } => {
                write!(f, "{} {} {}", nested(left), op.sql(), nested(right))
            }
            Expr::IsNull { arg, negated } => write!(
                f,
                "{} IS {}NULL",
                nested(arg),
                if *negated { "NOT " } else { "" }
            ),
            Expr::InList { arg, list, negated } => write_in_list(f, &nested(arg), list, *negated),
            Expr::Like {
                arg,
                pattern,
                case_insensitive,
                negated,
            } => write!(
                f,
                "{} {}{} {}",
                nested(arg),
                if *negated { "NOT " } else { "" },
                if *case_insensitive { "ILIKE" } else { "LIKE" },
                nested(pattern)
            ),
            Expr::Cast { arg, to } => write!(f, "CAST({arg} AS {})", to.sql()),
            Expr::Call {
                function: Function::DatePart,
                args,
            } if matches!(args.as_slice(), [Expr::Literal { value: Literal::Text { value } }, _]
                if value.bytes().all(|b| b.is_ascii_lowercase())) =>
            {
                let Expr::Literal {
                    value: Literal::Text { value: field },
                } = &args[0]
                else {
                    unreachable!("matched above")
                };
                write!(f, "EXTRACT({field} FROM {})", args[1])
            }
            Expr::Call { function, args } => {
                let items: Vec<String> = args.iter().map(ToString::to_string).collect();
                write!(f, "{}({})", function.name(), items.join(", "))
            }
            Expr::Computed { sql, .. } => write!(f, "({sql})"),
            Expr::Row { items } => {
                let items: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "({})", items.join(", "))
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => write_case(f, operand.as_deref(), branches, otherwise.as_deref()),
        }
    }
}

/// `arg IN (…)`, or `arg = ANY($n)` for one array parameter (`<> ALL` negated).
fn write_in_list(
    f: &mut fmt::Formatter<'_>,
    arg: &str,
    list: &[Expr],
    negated: bool,
) -> fmt::Result {
    if let [p @ Expr::Param { .. }] = list {
        let (op, quantifier) = if negated { ("<>", "ALL") } else { ("=", "ANY") };
        return write!(f, "{arg} {op} {quantifier}({p})");
    }
    let items: Vec<String> = list.iter().map(ToString::to_string).collect();
    let not = if negated { "NOT " } else { "" };
    write!(f, "{arg} {not}IN ({})", items.join(", "))
}

/// `CASE [operand] WHEN … THEN … [ELSE …] END`.
fn write_case(
    f: &mut fmt::Formatter<'_>,
    operand: Option<&Expr>,
    branches: &[CaseBranch],
    otherwise: Option<&Expr>,
) -> fmt::Result {
    write!(f, "CASE")?;
    if let Some(o) = operand {
        write!(f, " {o}")?;
    }
    for b in branches {
        write!(f, " WHEN {} THEN {}", b.when, b.then)?;
    }
    if let Some(e) = otherwise {
        write!(f, " ELSE {e}")?;
    }
    write!(f, " END")
}

impl Expr {
    /// True when its SQL needs no parentheses as an operand (a negative number does: `- -5`
    /// would start a comment).
    fn is_atomic(&self) -> bool {
        match self {
            Expr::Param { .. }
            | Expr::Column { .. }
            | Expr::Now
            | Expr::CurrentDate
            | Expr::Call { .. }
            | Expr::Cast { .. }
            | Expr::Computed { .. }
            | Expr::Row { .. }
            | Expr::Case { .. } => true,
            Expr::Literal { value } => match value {
                Literal::Integer { value } => *value >= 0,
                Literal::Numeric { value } => !value.starts_with('-') && value.contains('.'),
                _ => true,
            },
            _ => false,
        }
    }

    /// `$n`.
    pub fn param(n: u32) -> Expr {
        Expr::Param { n }
    }

    /// A column of the row at hand.
    pub fn column(column: ColumnRef) -> Expr {
        Expr::Column {
            column,
            row: RowRef::This,
        }
    }

    /// `left op right`.
    pub fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// The parameters it reads, in order of first use.
    pub fn params(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            let read: &[u32] = match e {
                Expr::Param { n } => std::slice::from_ref(n),
                Expr::Computed { params, .. } => params,
                _ => &[],
            };
            for n in read {
                if !out.contains(n) {
                    out.push(*n);
                }
            }
        });
        out
    }

    /// The columns it reads (of any row), in order of first use.
    pub fn columns(&self) -> Vec<&ColumnRef> {
        let mut out: Vec<&ColumnRef> = Vec::new();
        self.walk_ref(&mut |e| {
            if let Expr::Column { column, .. } = e {
                if !out.contains(&column) {
                    out.push(column);
                }
            }
        });
        out
    }

    /// True when it reads no column (a value of the parameters, constants and the clock only).
    pub fn is_column_free(&self) -> bool {
        self.columns().is_empty()
    }

    /// The same expression with every column of the row at hand ([`RowRef::This`]) renamed by
    /// `f` (columns of other rows are kept): a filter written on a joined table's column, read
    /// as the column the rows hold.
    pub fn map_columns(&self, f: &mut impl FnMut(&ColumnRef) -> ColumnRef) -> Expr {
        self.map(&mut |e| match e {
            Expr::Column {
                column,
                row: RowRef::This,
            } => Some(Expr::Column {
                column: f(column),
                row: RowRef::This,
            }),
            _ => None,
        })
    }

    /// A copy where every node for which `f` returns a replacement is replaced (that node's
    /// children are not visited), the rest copied: `now()` bound to an instant, a column to the
    /// value of another row.
    pub fn map(&self, f: &mut impl FnMut(&Expr) -> Option<Expr>) -> Expr {
        if let Some(e) = f(self) {
            return e;
        }
        let mut b = |x: &Expr| Box::new(x.map(f));
        match self {
            Expr::Param { .. }
            | Expr::Literal { .. }
            | Expr::Column { .. }
            | Expr::Now
            | Expr::CurrentDate
            | Expr::Computed { .. } => self.clone(),
            Expr::Unary { op, arg } => Expr::Unary {
                op: *op,
                arg: b(arg),
            },
            Expr::Binary { op, left, right } => {
                let left = b(left);
                Expr::Binary {
                    op: *op,
                    left,
                    right: b(right),
                }
            }
            Expr::IsNull { arg, negated } => Expr::IsNull {
                arg: b(arg),
                negated: *negated,
            },
            Expr::InList { arg, list, negated } => {
                let arg = b(arg);
                Expr::InList {
                    arg,
                    list: list.iter().map(|x| x.map(f)).collect(),
                    negated: *negated,
                }
            }
            Expr::Like {
                arg,
                pattern,
                case_insensitive,
                negated,
            } => {
                let arg = b(arg);
                Expr::Like {
                    arg,
                    pattern: b(pattern),
                    case_insensitive: *case_insensitive,
                    negated: *negated,
                }
            }
            Expr::Cast { arg, to } => Expr::Cast {
                arg: b(arg),
                to: *to,
            },
            Expr::Call { function, args } => Expr::Call {
                function: *function,
                args: args.iter().map(|x| x.map(f)).collect(),
            },
            Expr::Row { items } => Expr::Row {
                items: items.iter().map(|x| x.map(f)).collect(),
            },
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let operand = operand.as_deref().map(|o| Box::new(o.map(f)));
                let branches = branches
                    .iter()
                    .map(|br| CaseBranch {
                        when: br.when.map(f),
                        then: br.then.map(f),
                    })
                    .collect();
                Expr::Case {
                    operand,
                    branches,
                    otherwise: otherwise.as_deref().map(|o| Box::new(o.map(f))),
                }
            }
        }
    }

    /// Calls `f` on this node and every node below it, parents first.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        self.walk_ref(&mut |e| f(e));
    }

    fn walk_ref<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Param { .. }
            | Expr::Literal { .. }
            | Expr::Column { .. }
            | Expr::Now
            | Expr::CurrentDate
            | Expr::Computed { .. } => {}
            Expr::Unary { arg, .. } | Expr::IsNull { arg, .. } | Expr::Cast { arg, .. } => {
                arg.walk_ref(f)
            }
            Expr::Binary { left, right, .. } => {
                left.walk_ref(f);
                right.walk_ref(f);
            }
            Expr::InList { arg, list, .. } => {
                arg.walk_ref(f);
                for e in list {
                    e.walk_ref(f);
                }
            }
            Expr::Like { arg, pattern, .. } => {
                arg.walk_ref(f);
                pattern.walk_ref(f);
            }
            Expr::Call { args, .. } | Expr::Row { items: args } => {
                for e in args {
                    e.walk_ref(f);
                }
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.walk_ref(f);
                }
                for b in branches {
                    b.when.walk_ref(f);
                    b.then.walk_ref(f);
                }
                if let Some(o) = otherwise {
                    o.walk_ref(f);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_postgres_sql() {
        let e = Expr::binary(
            BinaryOp::And,
            Expr::binary(
                BinaryOp::Gt,
                Expr::column(ColumnRef::new("books", "due_at")),
                Expr::binary(
                    BinaryOp::Sub,
                    Expr::Now,
                    Expr::Cast {
                        arg: Box::new(Expr::param(2)),
                        to: ScalarType::Interval,
                    },
                ),
            ),
            Expr::IsNull {
                arg: Box::new(Expr::column(ColumnRef::new("books", "it's"))),
                negated: true,
            },
        );
        assert_eq!(
            e.to_string(),
            "(books.due_at > (now() - CAST($2 AS interval))) AND (books.it's IS NOT NULL)"
        );
        assert_eq!(e.params(), vec![2]);
        assert_eq!(e.columns().len(), 2);
    }

    #[test]
    fn serializes_with_tags() {
        let e = Expr::binary(
            BinaryOp::Eq,
            Expr::Column {
                column: ColumnRef::new("cart_items", "qty"),
                row: RowRef::Excluded,
            },
            Expr::Literal {
                value: Literal::Interval {
                    months: 1,
                    days: 0,
                    micros: 0,
                },
            },
        );
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"binary","op":"eq","left":{"kind":"column","column":{"table":"cart_items","column":"qty"},"row":{"of":"excluded"}},"right":{"kind":"literal","value":{"type":"interval","months":1,"days":0,"micros":0}}}"#
        );
        let back: Expr = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
    }
}
