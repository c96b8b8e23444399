//! What a backend spells: the [`Spell`] trait, and the statements ([`Stmt`]) it renders.

use crate::shape::{Field, Param};
use remodel_model::{CqlType, Literal, ScalarType};

/// The type of a local of a generated method (Java declares it; Python annotates an empty list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Local {
    /// The execution's clock (an instant).
    Clock,
    /// Any value.
    Object,
    /// A row count (`LIMIT`, `OFFSET`).
    Count,
    /// A read's buckets.
    Buckets,
    /// One row read.
    Row,
    /// Rows read.
    Rows,
    /// A write's state (`WriteState`).
    State,
    /// Statements with their values, to send.
    Bounds,
}

/// What a method returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returns<'a> {
    /// Nothing (a write).
    Nothing,
    /// Rows of the named class (a read).
    Rows(&'a str),
    /// Rows of no known class (a read that raises).
    AnyRows,
}

/// A statement of a generated method, its expressions spelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stmt {
    /// A new local `name` of type `ty`: `value`, or an empty list when `None`.
    Let {
        /// Its type.
        ty: Local,
        /// Its name.
        name: String,
        /// Its value (`None`: an empty list).
        value: Option<String>,
    },
    /// `name = value`.
    Set(String, String),
    /// An expression run for its effect (lines after the first keep their relative indent).
    Expr(String),
    /// A comment.
    Comment(String),
    /// `if cond`, then the body.
    If(String, Vec<Stmt>),
    /// The body once per item `var` (of type `ty`) of `iter`.
    For {
        /// The item's type.
        ty: Local,
        /// The item's name.
        var: String,
        /// What it iterates.
        iter: String,
        /// The body.
        body: Vec<Stmt>,
    },
    /// On to the loop's next item.
    Continue,
    /// Leaves the method (which returns nothing).
    Return,
    /// The end of a method that returns nothing, where the language wants it said.
    Done,
    /// Raises the runtime's `NotExecutable` with the message (a string literal).
    Raise(String),
}

/// How a language spells what the walk decides. Every method is spelling only: the walk calls
/// them in the order the generated code runs.
pub(crate) trait Spell {
    /// The clock's and the hooks' object (`self._hooks`, `hooks`).
    const HOOKS: &'static str;
    /// The constant of the plan's time zone.
    const ZONE: &'static str;
    /// `null`.
    const NULL: &'static str;
    /// The conjunction of two conditions, spaces included.
    const AND: &'static str;
    /// The disjunction of two conditions, spaces included.
    const OR: &'static str;
    /// An empty row (a read's first statement has no row at hand).
    const EMPTY_ROW: &'static str;
    /// An empty list of rows.
    const EMPTY_ROWS: &'static str;

    /// A function's name from the plan's snake_case one.
    fn function_name(snake: &str) -> String;
    /// The row class of function `function`.
    fn row_class_name(function: &str) -> String;
    /// A method or field of the runtime's objects, from its snake_case name.
    fn member(snake: &str) -> String;
    /// The runtime function `f` (snake_case) as called.
    fn runtime(f: &str) -> String;
    /// `f(args…)` of the runtime.
    fn rt(f: &str, args: &[String]) -> String {
        format!("{}({})", Self::runtime(f), args.join(", "))
    }
    /// The field of the `n`-th prepared statement.
    fn statement_name(n: usize) -> String;
    /// How a method refers to a prepared statement's field.
    fn statement_ref(name: &str) -> String;
    /// The constant of the `n`-th bucket time zone.
    fn zone_name(n: usize) -> String;
    /// The constant of design table `table`'s columns.
    fn spec_name(table: &str) -> String;
    /// The hook of the `k`-th application-computed value of pattern `pattern` (snake_case).
    fn hook_name(pattern: &str, k: usize) -> String;
    /// The local of the rows joined by the `k`-th lookup.
    fn joined(k: usize) -> String;

    /// A string literal.
    fn string(s: &str) -> String;
    /// A boolean literal.
    fn bool(b: bool) -> &'static str;
    /// An integer constant of the runtime's calls.
    fn long(n: u32) -> String;
    /// A literal of the plan.
    fn literal(&mut self, l: &Literal) -> String;
    /// A parameter where an expression reads it.
    fn param(p: &Param) -> String;
    /// An array of values, as the runtime takes one.
    fn array(items: &[String]) -> String;
    /// A list of constants.
    fn list(items: &[String]) -> String;
    /// The arguments of a runtime call of any number of values.
    fn varargs(items: &[String]) -> String;
    /// A row value (`ROW(a, b)`).
    fn tuple(items: &[String]) -> String;
    /// A record of the runtime's (`Agg`, `SortKey`) where the runtime takes one.
    fn record(class: &str, items: &[String]) -> String;
    /// A new object of the runtime's class `class`.
    fn new_runtime(class: &str, args: &[String]) -> String;
    /// Keys and values, as the runtime's `entry` takes them.
    fn pairs(pairs: &[(String, String)]) -> String;
    /// A map of keys to values.
    fn map(pairs: &[(String, String)]) -> String;
    /// A list of pairs of constants.
    fn pair_list(pairs: &[(String, String)]) -> String;
    /// A collection's entry under `key`.
    fn keyed_entry(key: &str, entry: &str) -> String;
    /// `CASE WHEN cond THEN then ELSE otherwise` (`cond` is already a boolean).
    fn case_branch(cond: &str, then: &str, otherwise: &str) -> String;
    /// A sequence's next value from its hook's call.
    fn sequence(call: String) -> String;
    /// `value` (the source's meaning) as bound to a marker of type `t`.
    fn bind_marker(t: &CqlType, value: &str) -> String;
    /// Epoch microseconds of an instant or a wall clock read as UTC.
    fn epoch_micros_utc(value: &str) -> String;

    /// Not `cond`.
    fn not(cond: &str) -> String;
    /// `value` is null.
    fn is_null(value: &str) -> String;
    /// `value` is not null.
    fn is_not_null(value: &str) -> String;
    /// A `LIMIT`'s count is not 0 (a null count is no limit).
    fn nonzero(count: &str) -> String;
    /// No row in `rows`.
    fn is_empty(rows: &str) -> String;
    /// `then` when `cond` holds, else `otherwise`.
    fn cond_expr(cond: &str, then: &str, otherwise: &str) -> String;

    /// A column of the client's rows by its key (a string literal).
    fn client_column(key: &str) -> String;
    /// `map[key]`.
    fn map_get(map: &str, key: &str) -> String;
    /// `map[key] = value`.
    fn map_put(map: &str, key: &str, value: &str) -> String;
    /// The first row of `rows` (there is one).
    fn first(rows: &str) -> String;
    /// The first row of `rows`, else null.
    fn first_or_null(rows: &str) -> String;
    /// The rows of `rows` for which `cond` (of row `r`) holds.
    fn filter_rows(rows: &str, cond: &str) -> String;
    /// Appends every item of `items` to `list`.
    fn extend(list: &str, items: &str) -> String;
    /// Appends `item` to `list`.
    fn push(list: &str, item: &str) -> String;
    /// Row `a` with row `b`'s columns.
    fn merge(a: &str, b: &str) -> String;
    /// The rows of one request of a prepared statement.
    fn run(statement: &str, spec: &str, values: &[String]) -> String;
    /// Appends a prepared statement with its values to `list`, to send.
    fn bound(list: &str, statement: &str, values: &[String]) -> String;
    /// Sends `list` as a batch of `kind` at `level` (in batches of `chunk` at the most).
    fn send(list: &str, kind: &str, level: &str, chunk: Option<u32>) -> String;
    /// Sets functions of the row in `map` (`fresh`: a map of its own, else the state's).
    fn function_map(map: &str, fresh: bool, entries: &[(String, String)]) -> Vec<Stmt>;
    /// Skips `count` rows (null: none).
    fn offset(count: &str) -> Vec<Stmt>;
    /// Keeps `count` rows (null: all).
    fn limit(count: &str) -> Vec<Stmt>;
    /// Returns `rows` as instances of the read's row class.
    fn rows_out(class: &str, fields: &[Field]) -> Vec<Stmt>;
    /// How the executor reads field `f` of a row.
    fn row_accessor(f: &Field) -> String;
    /// The write state's method of a column's new value.
    const NEW_VALUE: &'static str;

    /// A method's parameter list.
    fn signature(&mut self, params: &[Param]) -> String;
    /// A hook's parameter: its name and its type.
    fn hook_param(&mut self, p: &Param) -> (String, String);
    /// The type a hook returns.
    fn hook_returns(&mut self, ty: Option<ScalarType>) -> String;
    /// The documentation of a method: the summary, then each titled block verbatim.
    fn doc(summary: &str, blocks: &[(&str, &str)]) -> String;
    /// A method's declaration: its name, parameters `sig` and what it returns.
    fn header(&mut self, name: &str, sig: &str, returns: Returns<'_>) -> String;
    /// A method: its documentation `doc`, its declaration ([`Spell::header`]) and its body.
    fn method(
        &mut self,
        name: &str,
        sig: &str,
        returns: Returns<'_>,
        doc: &str,
        body: &[Stmt],
    ) -> String;
    /// The class of a read's rows.
    fn row_class(&mut self, class: &str, function: &str, pattern: &str, fields: &[Field])
        -> String;
}
