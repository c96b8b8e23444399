//! The analysis' typed twins: every value, bound, residual and written value as the plan's
//! dialect-neutral expression (`remodel_sql::typed_expr`), the statement's parameters with their
//! types and the literals they replaced, and the rows a write reads besides the written one.
//!
//! Column references resolve through the statement's scopes ([`Ctx::resolve`]); in an UPDATE or
//! DELETE a column of another relation of its FROM/USING is read from that relation's row
//! ([`RowRef::Step`] named by its alias), and `excluded.c` in `ON CONFLICT … DO UPDATE` is the
//! proposed row ([`RowRef::Excluded`]).

use crate::pattern::Ctx;
use crate::rewrite::Literals;
use remodel_model::{
    ColumnRef, ConflictClause, Expr, FromRow, Parameter, RowRef, ScalarType, Table, WrittenValue,
};
use remodel_sql::typed_expr::schema::column_ty;
use remodel_sql::typed_expr::{computed, ColumnInfo, Columns, Converter, Ty};
use sqlparser::ast::{self as sql, Value, Visit, Visitor};
use std::ops::ControlFlow;

/// The columns an expression of the statement may name, as the converter asks for them.
pub(crate) struct Scope<'c, 's> {
    ctx: &'c Ctx<'s>,
    /// The written table, when `excluded.c` names its proposed row (`ON CONFLICT DO UPDATE`).
    excluded: Option<&'s Table>,
}

impl Columns for Scope<'_, '_> {
    fn column(&self, path: &[String]) -> Result<ColumnInfo, String> {
        if let (Some(t), [q, c]) = (self.excluded, path) {
            if q == "excluded" {
                let col = t
                    .column(c)
                    .ok_or_else(|| format!("excluded.{c}: no such column in {}", t.key()))?;
                let column = ColumnRef::new(t.key(), col.name.clone());
                return Ok(ColumnInfo {
                    ty: self.ctx.col_ty(&column),
                    column,
                    row: RowRef::Excluded,
                });
            }
        }
        let r = self
            .ctx
            .resolve(path)
            .ok_or_else(|| format!("column {} is not resolved", path.join(".")))?;
        Ok(ColumnInfo {
            ty: self.ctx.col_ty(&r.col),
            row: self.ctx.row_of(r.rel),
            column: r.col,
        })
    }
}

impl<'s> Ctx<'s> {
    /// A column's type as the converter knows it (from the schema; cached).
    pub(crate) fn col_ty(&self, c: &ColumnRef) -> Result<Ty, String> {
        if let Some(t) = self.col_types.borrow().get(c) {
            return t.clone();
        }
        let t = match self
            .schema
            .table(&c.table)
            .and_then(|t| t.column(&c.column))
        {
            Some(col) => column_ty(self.schema, &col.sql_type),
            None => Err(format!("{c} is not in the schema: its type is not known")),
        };
        self.col_types.borrow_mut().insert(c.clone(), t.clone());
        t
    }

    /// Which row a relation's columns are read from: the written row (or a read's rows), or a
    /// row of another relation an UPDATE … FROM / DELETE … USING reads, named by its alias.
    pub(crate) fn row_of(&self, rel: usize) -> RowRef {
        match self.write_rel {
            Some(w) if w != rel => RowRef::Step {
                name: self.rel_alias(rel).unwrap_or_default(),
            },
            _ => RowRef::This,
        }
    }

    /// Runs `f` with the statement's converter and its scope (`excluded` for an upsert's SET).
    pub(crate) fn typed<T>(
        &mut self,
        excluded: Option<&'s Table>,
        f: impl FnOnce(&mut Converter, &Scope<'_, 's>) -> T,
    ) -> T {
        let mut conv = std::mem::take(&mut self.conv);
        let out = f(
            &mut conv,
            &Scope {
                ctx: self,
                excluded,
            },
        );
        self.conv = conv;
        out
    }
}

/// A condition as a typed expression, or why it cannot be one.
pub(crate) fn condition(ctx: &mut Ctx<'_>, e: &sql::Expr) -> Result<Expr, String> {
    ctx.typed(None, |conv, scope| conv.condition(e, scope))
}

/// The value a bare column is compared with, typed as Postgres types it next to that column
/// (an untyped `'2025-01-15'` next to a `timestamptz` is one); `None` when it cannot be stated.
pub(crate) fn value(ctx: &mut Ctx<'_>, v: &sql::Expr, column: &ColumnRef) -> Option<Expr> {
    let want = match ctx.col_ty(column) {
        Ok(Ty::Scalar(t)) => t,
        Ok(Ty::Enum) => ScalarType::Text,
        Ok(Ty::Unknown) | Err(_) => return text_form(ctx, v, column),
    };
    ctx.typed(None, |conv, scope| conv.value_of(v, want, scope))
        .ok()
        .or_else(|| computed(v, Some(want)))
}

/// The value a column of a type the plan does not know (`ltree`, `hstore`, a domain, an
/// extension's) is compared with, as the column is carried: its text form, made canonical by the
/// type itself — `(($1)::ltree)::text`, an application-computed value — so a value written
/// another way that the type holds equal compares equal. `None` for an array or a type whose
/// text form does not compare as the type does (`citext`: a lookup column serves it).
fn text_form(ctx: &mut Ctx<'_>, v: &sql::Expr, column: &ColumnRef) -> Option<Expr> {
    if crate::lookups::case_insensitive(ctx.schema, column) {
        return None;
    }
    let ty = ctx
        .schema
        .table(&column.table)?
        .column(&column.column)?
        .sql_type
        .clone();
    if ty.ends_with("[]") || ty.contains(" array") {
        return None;
    }
    let x = ctx
        .typed(None, |conv, scope| {
            conv.value_of(v, ScalarType::Text, scope)
        })
        .ok()?;
    Some(Expr::Computed {
        sql: format!("(({v})::{ty})::text"),
        params: x.params(),
        ty: Some(ScalarType::Text),
    })
}

/// `column IN (values)` as a typed condition (the predicate's expression for `IN`); `None`
/// when a value is not typed.
pub(crate) fn in_list(column: &ColumnRef, values: Vec<Option<Expr>>) -> Option<Expr> {
    Some(Expr::InList {
        arg: Box::new(Expr::column(column.clone())),
        list: values.into_iter().collect::<Option<Vec<Expr>>>()?,
        negated: false,
    })
}

/// `column = ANY(v)`: the list of one array parameter, or the elements of `ARRAY[…]`.
pub(crate) fn any_list(ctx: &mut Ctx<'_>, column: &ColumnRef, v: &sql::Expr) -> Option<Expr> {
    let want = match ctx.col_ty(column) {
        Ok(Ty::Scalar(t)) => t,
        Ok(Ty::Enum) => ScalarType::Text,
        _ => return None,
    };
    let elements: Vec<&sql::Expr> = match strip(v) {
        // `$n`, `$n::bigint[]`: one parameter standing for the whole list, of the column's
        // type (an element cast Postgres accepts compares as the column does).
        x if remodel_sql::typed_expr::array_param(x).is_some() => vec![placeholder_of(x)],
        sql::Expr::Array(a) => a.elem.iter().collect(),
        _ => return None,
    };
    let mut list = Vec::with_capacity(elements.len());
    for e in elements {
        let x = ctx
            .typed(None, |conv, scope| conv.value_of(e, want, scope))
            .ok()?;
        list.push(x);
    }
    in_list(column, list.into_iter().map(Some).collect())
}

/// The placeholder of an array parameter (`$1` of `$1::bigint[]`).
fn placeholder_of(e: &sql::Expr) -> &sql::Expr {
    match strip(e) {
        sql::Expr::Cast { expr, .. } => placeholder_of(expr),
        other => other,
    }
}

fn strip(e: &sql::Expr) -> &sql::Expr {
    match e {
        sql::Expr::Nested(x) => strip(x),
        other => other,
    }
}

/// The statement's parameters `$1 … $max`: the type each took where the statement uses it,
/// and the literal of the example that normalization replaced by it.
pub(crate) fn parameters(
    stmt: &sql::Statement,
    conv: &Converter,
    literals: &Literals,
) -> Vec<Parameter> {
    let max = max_placeholder(stmt);
    (1..=max)
        .map(|n| Parameter {
            n,
            sql_type: conv.params().get(&n).copied(),
            replaced_literal: literals.text(n),
        })
        .collect()
}

/// Types the parameters no condition or value typed from their casts anywhere in the statement
/// (`first_name || $1::text` in a projection).
pub(crate) fn cast_params(stmt: &sql::Statement, conv: &mut Converter) {
    struct Casts<'c>(&'c mut Converter);
    impl Visitor for Casts<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &sql::Expr) -> ControlFlow<()> {
            if let sql::Expr::Cast {
                expr, data_type, ..
            } = e
            {
                if let sql::Expr::Value(v) = strip(expr) {
                    if let Value::Placeholder(p) = &v.value {
                        let n = p.strip_prefix('$').and_then(|n| n.parse::<u32>().ok());
                        if let (Some(n), Some(t)) =
                            (n, remodel_sql::typed_expr::param_type(data_type))
                        {
                            self.0.type_param(n, t);
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = stmt.visit(&mut Casts(conv));
}

/// The highest `$n` of a statement.
fn max_placeholder(stmt: &sql::Statement) -> u32 {
    struct Max(u32);
    impl Visitor for Max {
        type Break = ();
        fn pre_visit_value(&mut self, v: &sql::ValueWithSpan) -> ControlFlow<()> {
            if let Value::Placeholder(p) = &v.value {
                if let Some(n) = p.strip_prefix('$').and_then(|n| n.parse::<u32>().ok()) {
                    self.0 = self.0.max(n);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut m = Max(0);
    let _ = stmt.visit(&mut m);
    m.0
}

/// Adds an equality on a column of another row of a write (`s.id = $2`) to that row's entry.
pub(crate) fn from_row_equality(ctx: &mut Ctx<'_>, rel: usize, column: &str, value: Expr) {
    match ctx.from_rows.iter_mut().find(|(r, _)| *r == rel) {
        Some((_, row)) => {
            if !row.equality.iter().any(|(c, v)| c == column && *v == value) {
                row.equality.push((column.to_string(), value));
            }
        }
        None => {
            let Some((alias, table)) = ctx.rel_table(rel) else {
                return;
            };
            ctx.from_rows.push((
                rel,
                FromRow {
                    alias,
                    table,
                    equality: vec![(column.to_string(), value)],
                },
            ));
        }
    }
}

impl<'s> Ctx<'s> {
    /// The alias a relation is known by in the statement.
    pub(crate) fn rel_alias(&self, rel: usize) -> Option<String> {
        self.find_rel(rel).map(|r| r.alias.clone())
    }

    /// A base table's alias and key (its name as written when the schema lacks it).
    pub(crate) fn rel_table(&self, rel: usize) -> Option<(String, String)> {
        let r = self.find_rel(rel)?;
        if r.derived.is_some() {
            return None;
        }
        let table = r.table.clone().unwrap_or_else(|| r.written.clone());
        Some((r.alias.clone(), table))
    }

    /// True when `rel` is another relation an UPDATE or DELETE reads, of the written table
    /// itself (`UPDATE accounts … FROM accounts s`): its columns name other rows of that table.
    pub(crate) fn other_row_of_target(&self, rel: usize) -> bool {
        let Some(w) = self.write_rel.filter(|w| *w != rel) else {
            return false;
        };
        let table = |id| self.find_rel(id).and_then(|r| r.table.clone());
        table(rel).is_some() && table(rel) == table(w)
    }

    /// True when the statement is a write reading `rel` besides the written row.
    pub(crate) fn is_from_row(&self, rel: usize) -> bool {
        self.write_rel.is_some_and(|w| w != rel) && self.rel_table(rel).is_some()
    }

    /// The typed value a write gives `column` of `table` from `e` (`DEFAULT` is the column's
    /// default, NULL without one); `excluded` resolves `excluded.c` (an upsert's SET).
    pub(crate) fn written_expr(
        &mut self,
        table: Option<&'s Table>,
        column: &str,
        e: &sql::Expr,
        excluded: Option<&'s Table>,
    ) -> Option<Expr> {
        let t = table?;
        let col = t.column(column)?;
        if is_default_keyword(e) {
            return match (
                &col.default_expr,
                &col.default,
                col.identity,
                &col.generated,
            ) {
                (Some(d), _, _, _) => Some(d.clone()),
                (None, None, None, None) => Some(Expr::Literal {
                    value: remodel_model::Literal::Null,
                }),
                _ => None,
            };
        }
        let ty = self.col_ty(&ColumnRef::new(t.key(), col.name.clone()));
        let scalar = match &ty {
            Ok(Ty::Scalar(s)) => Some(*s),
            _ => None,
        };
        self.typed(excluded, |conv, scope| conv.assigned(e, &ty, scope))
            .ok()
            .or_else(|| computed(e, scalar))
    }

    /// The typed `ON CONFLICT` clause of an INSERT into `table`.
    pub(crate) fn conflict(
        &mut self,
        oc: &sql::OnConflict,
        table: Option<&'s Table>,
    ) -> ConflictClause {
        let columns = match &oc.conflict_target {
            Some(sql::ConflictTarget::Columns { columns, .. }) => columns
                .iter()
                .map(|c| {
                    let name = crate::exprs::ident(c);
                    table
                        .and_then(|t| t.column(&name))
                        .map_or(name, |col| col.name.clone())
                })
                .collect(),
            Some(sql::ConflictTarget::OnConstraint(name)) => {
                let n = crate::exprs::bare_name(name);
                match table.and_then(|t| constraint_columns(t, &n)) {
                    Some(cols) => cols,
                    None => {
                        self.note(format!(
                            "ON CONFLICT ON CONSTRAINT {n}: no unique key or index of that name in the schema"
                        ));
                        Vec::new()
                    }
                }
            }
            None => Vec::new(),
        };
        let (do_nothing, set, filter) = match &oc.action {
            sql::OnConflictAction::DoNothing => (true, Vec::new(), None),
            sql::OnConflictAction::DoUpdate(du) => {
                let mut set = Vec::new();
                for a in &du.assignments {
                    set.extend(self.upsert_values(a, table));
                }
                let filter = du.selection.as_ref().and_then(|w| {
                    self.typed(table, |conv, scope| conv.condition(w, scope))
                        .ok()
                });
                (false, set, filter)
            }
        };
        ConflictClause {
            columns,
            do_nothing,
            set,
            filter,
        }
    }

    /// The values of one `DO UPDATE SET` assignment, over the existing row and `excluded`.
    fn upsert_values(
        &mut self,
        a: &sql::Assignment,
        table: Option<&'s Table>,
    ) -> Vec<WrittenValue> {
        let names: Vec<String> = match &a.target {
            sql::AssignmentTarget::ColumnName(n) => vec![crate::exprs::bare_name(n)],
            sql::AssignmentTarget::Tuple(ns) => ns.iter().map(crate::exprs::bare_name).collect(),
        };
        let parts: Vec<&sql::Expr> = match (names.len(), &a.value) {
            (1, e) => vec![e],
            (n, sql::Expr::Tuple(items)) if items.len() == n => items.iter().collect(),
            _ => return Vec::new(),
        };
        names
            .iter()
            .zip(parts)
            .map(|(name, e)| {
                let column = table
                    .and_then(|t| t.column(name))
                    .map_or(name.clone(), |c| c.name.clone());
                let reads_current = crate::exprs::column_paths(e)
                    .iter()
                    .any(|p| p.first().is_none_or(|q| p.len() == 1 || q != "excluded"));
                WrittenValue {
                    expr: self.written_expr(table, &column, e, table),
                    column,
                    sql: e.to_string(),
                    reads_current,
                }
            })
            .collect()
    }

    /// The rows the write reads besides the written one, in FROM order, each with the
    /// equalities that find it.
    pub(crate) fn rows_read_by_write(&mut self) -> Vec<FromRow> {
        let Some(w) = self.write_rel else {
            return Vec::new();
        };
        let rels: Vec<usize> = self
            .scopes
            .last()
            .map(|s| s.iter().map(|r| r.id).filter(|id| *id != w).collect())
            .unwrap_or_default();
        let mut found = std::mem::take(&mut self.from_rows);
        let mut out = Vec::new();
        for rel in rels {
            if let Some(i) = found.iter().position(|(r, _)| *r == rel) {
                out.push(found.swap_remove(i).1);
            } else if let Some((alias, table)) = self.rel_table(rel) {
                out.push(FromRow {
                    alias,
                    table,
                    equality: Vec::new(),
                });
            }
        }
        out
    }
}

/// The columns of a unique key, unique index or primary key of `t` named `name` (a primary
/// key declared without a name is `<table>_pkey`, as Postgres names it).
fn constraint_columns(t: &Table, name: &str) -> Option<Vec<String>> {
    if let Some(u) = t
        .unique_keys
        .iter()
        .find(|u| u.name.as_deref() == Some(name))
    {
        return Some(u.columns.clone());
    }
    if let Some(ix) = t.indexes.iter().find(|i| i.unique && i.name == name) {
        let cols: Option<Vec<String>> = ix
            .keys
            .iter()
            .map(|k| match k {
                remodel_model::IndexKey::Column { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        return cols;
    }
    (!t.primary_key.is_empty() && name == format!("{}_pkey", t.name)).then(|| t.primary_key.clone())
}

/// The `DEFAULT` keyword of a VALUES row or a SET (sqlparser reads it as an identifier).
fn is_default_keyword(e: &sql::Expr) -> bool {
    matches!(e, sql::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}
