//! One statement → one [`PatternAnalysis`]: relations in scope (aliases, joins, derived tables,
//! CTEs, correlated subqueries), then predicates, order, limit, projection, aggregates and writes.

use crate::exprs::{
    bare_name, column_paths, has_window_function, ident, leading_words, object_parts, subqueries,
};
use crate::joins::{self, Edge};
use crate::predicates::{and_terms, push_residual, Conjuncts, Filters};
use crate::rewrite::Literals;
use remodel_model::{
    AccessPattern, Aggregate, ColumnRef, EqualityOp, Expr as TypedExpr, OrderBy, OutputColumn,
    PatternAnalysis, Predicate, Schema, StatementKind, Table, WriteInfo, WrittenValue,
};
use sqlparser::ast::{
    AssignmentTarget, Delete, Distinct, Expr, FromTable, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, GroupByExpr, Insert, JoinConstraint, JoinOperator, LimitClause, OnInsert,
    OrderByKind, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement,
    TableFactor, TableObject, TableWithJoins, Update, UpdateTableFromKind, Value, Visit, Visitor,
};
use std::ops::ControlFlow;

/// Aggregate functions recorded as [`Aggregate`]s.
const AGGREGATES: &[&str] = &["count", "sum", "avg", "min", "max"];

/// The output columns of a query or derived table: name → the source column, when it is one.
pub(crate) type Outputs = Vec<(String, Option<ColumnRef>)>;

/// A relation in scope.
#[derive(Debug, Clone)]
pub(crate) struct Rel {
    /// Unique within the statement; increases in FROM order.
    pub id: usize,
    /// The name that qualifies its columns (alias, else the bare table name).
    pub alias: String,
    /// The schema table, when it is a base table the schema knows.
    pub table: Option<String>,
    /// The name as written (for tables the schema does not know).
    pub written: String,
    /// Output columns of a derived table or CTE.
    pub derived: Option<Outputs>,
}

/// A column resolved to the relation that provides it.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub rel: usize,
    pub col: ColumnRef,
}

/// What the analysis of one statement produced.
#[derive(Debug, Default)]
pub(crate) struct StatementResult {
    pub analysis: PatternAnalysis,
    /// Column-to-column equalities between relations, for FK inference (one per edge).
    pub edges: Vec<Edge>,
    /// Things worth telling the user (not fatal).
    pub notes: Vec<String>,
    /// Things the user most likely got wrong (a table name that resolves to nothing although a
    /// table of that name exists in another schema).
    pub warnings: Vec<String>,
    /// LIKE predicates whose pattern is a parameter, decided once the example is read.
    pub pending_likes: Vec<PendingLike>,
    /// Whether LIMIT/OFFSET were parameters (to be read from the example).
    pub limit_param: bool,
    pub offset_param: bool,
    /// Rows of an `INSERT … VALUES` list (an `INSERT … SELECT` inserts an unknown number).
    pub insert_rows: Option<usize>,
}

/// A `c LIKE $n`: a prefix range when the example's pattern is a fixed prefix, else a residual.
#[derive(Debug)]
pub(crate) struct PendingLike {
    pub column: ColumnRef,
    /// The pattern as SQL (`$2`).
    pub value: String,
    /// The predicate's SQL.
    pub sql: String,
    /// The pattern, typed.
    pub value_expr: Option<TypedExpr>,
    /// The predicate, typed (or why not).
    pub condition: Result<TypedExpr, String>,
}

/// Walks one statement.
pub(crate) struct Ctx<'s> {
    pub schema: &'s Schema,
    /// Where unqualified table names are looked for, in order (Postgres' `search_path`).
    search_path: &'s [String],
    next_rel: usize,
    pub scopes: Vec<Vec<Rel>>,
    ctes: Vec<(String, Outputs)>,
    pub res: StatementResult,
    pub filters: Filters,
    /// The example's literals behind the statement's placeholders (empty for the example itself).
    pub literals: Literals,
    unmodeled: Vec<String>,
    kind: Option<StatementKind>,
    /// Inside the SELECT of an `INSERT … SELECT`: a generated source (`generate_series`) is
    /// a bulk load, fully described by its write, not an access to model.
    insert_source: bool,
    /// The main SELECT list's items that are an aggregate call and nothing else: (position in
    /// the result, index in `aggregates`).
    output_aggregates: Vec<(usize, usize)>,
    /// The subqueries of expressions that read a table (`EXISTS (…)`, `IN (SELECT …)`, scalar
    /// subqueries), as written (cut): a read with one is not modelled.
    expr_subqueries_read: Vec<String>,
    /// Turns the statement's expressions into the plan's typed ones, typing its parameters.
    pub conv: remodel_sql::typed_expr::Converter,
    /// The relation an UPDATE or DELETE writes (its columns are the written row's).
    pub write_rel: Option<usize>,
    /// The rows an UPDATE … FROM / DELETE … USING reads besides the written one, by relation.
    pub from_rows: Vec<(usize, remodel_model::FromRow)>,
    /// Column types as the converter knows them, by column.
    pub col_types: std::cell::RefCell<
        std::collections::HashMap<ColumnRef, Result<remodel_sql::typed_expr::Ty, String>>,
    >,
}

/// Parses normalized SQL (or an example) with the Postgres dialect.
pub(crate) fn parse(sql: &str) -> Result<Statement, String> {
    let mut stmts = remodel_sql::normalize::parse_sql(sql).map_err(|e| e.to_string())?;
    // Before any recursive walk (or drop): a long operator chain would overflow the stack.
    let deep = stmts
        .iter_mut()
        .map(remodel_sql::long_chains::make_shallow)
        .find_map(Result::err);
    if let Some(deep) = deep {
        return Err(deep.to_string());
    }
    match stmts.len() {
        0 => Err("no statement".into()),
        _ => Ok(stmts.swap_remove(0)),
    }
}

/// Analyzes one parsed statement against the schema; `literals` are the example's values of its
/// placeholders; `time_zone` is the plan's (a zone-less `timestamptz` constant is read in it).
pub(crate) fn analyze_statement(
    schema: &Schema,
    search_path: &[String],
    time_zone: &str,
    stmt: &Statement,
    p: &AccessPattern,
    literals: Literals,
) -> StatementResult {
    let mut ctx = Ctx {
        schema,
        search_path,
        next_rel: 0,
        scopes: Vec::new(),
        ctes: Vec::new(),
        res: StatementResult::default(),
        filters: Filters::default(),
        literals,
        unmodeled: Vec::new(),
        kind: None,
        insert_source: false,
        output_aggregates: Vec::new(),
        expr_subqueries_read: Vec::new(),
        conv: remodel_sql::typed_expr::Converter::new(Some(time_zone)),
        write_rel: None,
        from_rows: Vec::new(),
        col_types: Default::default(),
    };
    if has_window_function(stmt) {
        ctx.unmodeled
            .push("window function (OVER …): the row set depends on other rows".into());
    }
    if let Statement::Query(q) = stmt {
        let defined = |name: &str| schema.function(name).is_some();
        if let Some(name) = crate::exprs::defined_function_on_columns(&**q, defined) {
            let f = schema.function(&name);
            let how = f
                .and_then(|f| f.language.as_deref())
                .map_or(String::new(), |l| format!(", language {l}"));
            ctx.unmodeled.push(format!(
                "calls {name}() on a column, a function the schema defines{how}: what it reads and returns is not modelled"
            ));
        }
    }
    match stmt {
        Statement::Query(q) => {
            ctx.kind = Some(StatementKind::Select);
            let outputs = ctx.query(q, true);
            let aggregate_at = |k: usize| {
                let found = ctx.output_aggregates.iter().find(|(at, _)| *at == k);
                found.map(|(_, a)| *a)
            };
            let outputs: Vec<OutputColumn> = outputs
                .into_iter()
                .enumerate()
                .map(|(k, (name, column))| OutputColumn {
                    aggregate: aggregate_at(k),
                    name,
                    column,
                })
                .collect();
            ctx.res.analysis.outputs = outputs;
            if !q.locks.is_empty() {
                let locks: Vec<String> = q.locks.iter().map(ToString::to_string).collect();
                ctx.res.analysis.locking = Some(locks.join(" "));
            }
        }
        Statement::Insert(ins) => {
            ctx.kind = Some(StatementKind::Insert);
            ctx.insert(ins);
        }
        Statement::Update(up) => {
            ctx.kind = Some(StatementKind::Update);
            ctx.update(up);
        }
        Statement::Delete(del) => {
            ctx.kind = Some(StatementKind::Delete);
            ctx.delete(del);
        }
        other => {
            let head = leading_words(other);
            ctx.unmodeled.push(format!(
                "not a SELECT/INSERT/UPDATE/DELETE statement ({head})"
            ));
        }
    }
    ctx.finish(p, stmt)
}

impl<'s> Ctx<'s> {
    fn new_rel(
        &mut self,
        alias: String,
        table: Option<String>,
        written: String,
        derived: Option<Outputs>,
    ) -> usize {
        let id = self.next_rel;
        self.next_rel += 1;
        let rel = Rel {
            id,
            alias,
            table,
            written,
            derived,
        };
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(rel);
        }
        id
    }

    /// The id the next relation will get (relations of a subquery get ids from here on).
    pub(crate) fn next_rel_id(&self) -> usize {
        self.next_rel
    }

    fn note_table(&mut self, name: &str) {
        if !self.res.analysis.tables.iter().any(|t| t == name) {
            self.res.analysis.tables.push(name.to_string());
        }
    }

    pub(crate) fn unmodeled(&mut self, reason: impl Into<String>) {
        let r = reason.into();
        if !self.unmodeled.contains(&r) {
            self.unmodeled.push(r);
        }
    }

    pub(crate) fn note(&mut self, msg: impl Into<String>) {
        let m = msg.into();
        if !self.res.notes.contains(&m) {
            self.res.notes.push(m);
        }
    }

    fn table(&self, name: &str) -> Option<&'s Table> {
        self.schema.table(name)
    }

    /// The schema table a name in FROM (or a write's target) names, as Postgres finds it: a
    /// qualified name in its schema, an unqualified one along the search path. A name that
    /// finds nothing is said; a warning when a table of that name is in another schema
    /// (`users` with `auth.users` only: the statement would fail, or read another table).
    fn resolve_table(&mut self, parts: &[String]) -> Option<&'s Table> {
        let (schema, name) = match parts {
            [.., s, n] => (Some(s.as_str()), n),
            [n] => (None, n),
            [] => return None,
        };
        let found = match schema {
            Some(s) => self.schema.table_in(Some(s), name),
            None => self
                .search_path
                .iter()
                .find_map(|s| self.schema.table_in(Some(s), name)),
        };
        if found.is_some() {
            return found;
        }
        let written = parts.join(".");
        let elsewhere: Vec<String> = self
            .schema
            .tables
            .iter()
            .filter(|t| t.name == *name)
            .map(|t| format!("{}.{}", t.schema.as_deref().unwrap_or("public"), t.name))
            .collect();
        if elsewhere.is_empty() {
            self.note(format!("table {written} is not in the schema"));
        } else {
            let path = match schema {
                Some(_) => String::new(),
                None => format!(" on the search path ({})", self.search_path.join(", ")),
            };
            let msg = format!(
                "table {written} is not in the schema{path}; {} {} that name (qualify it, or set search_path in the [analyze] configuration)",
                elsewhere.join(" and "),
                if elsewhere.len() == 1 { "has" } else { "have" }
            );
            if !self.res.warnings.contains(&msg) {
                self.res.warnings.push(msg);
            }
        }
        None
    }

    /// Analyzes a query; `main` is true for the statement's own rows (top level, FROM-derived
    /// tables, CTEs), false for WHERE/projection subqueries whose filters are not the pattern's.
    pub(crate) fn query(&mut self, q: &Query, main: bool) -> Outputs {
        let pushed_ctes = self.ctes.len();
        if let Some(with) = &q.with {
            if with.recursive {
                self.unmodeled("recursive CTE (WITH RECURSIVE): the rows read depend on iteration");
            }
            for cte in &with.cte_tables {
                let mut outs = self.rows_subquery(&cte.query, main, "a WITH query");
                if !cte.alias.columns.is_empty() {
                    for (i, c) in cte.alias.columns.iter().enumerate() {
                        if let Some(o) = outs.get_mut(i) {
                            o.0 = ident(&c.name);
                        }
                    }
                }
                self.ctes.push((ident(&cte.alias.name), outs));
            }
        }
        let mut scope_pushed = false;
        let outputs = match q.body.as_ref() {
            SetExpr::Select(s) => {
                scope_pushed = true;
                self.select(s, main)
            }
            SetExpr::Query(inner) => self.query(inner, main),
            SetExpr::SetOperation {
                op, left, right, ..
            } => {
                let n = set_branches(left) + set_branches(right);
                self.unmodeled(format!(
                    "set operation ({op}) of {n} queries: several row sources, not one read; each query is a read of its own (give each as a statement of its own to have it designed) whose rows the client combines"
                ));
                self.set_branch(left);
                self.set_branch(right);
                Vec::new()
            }
            SetExpr::Values(_) => Vec::new(),
            other => {
                let head = leading_words(other);
                self.unmodeled(format!("query body not modelled ({head})"));
                Vec::new()
            }
        };
        if main {
            self.order_limit(q, &outputs);
        }
        if scope_pushed {
            self.scopes.pop();
        }
        self.ctes.truncate(pushed_ctes);
        outputs
    }

    /// One branch of a set operation: tables only.
    fn set_branch(&mut self, e: &SetExpr) {
        match e {
            SetExpr::Select(s) => {
                self.select(s, false);
                self.scopes.pop();
            }
            SetExpr::Query(q) => {
                self.query(q, false);
            }
            SetExpr::SetOperation { left, right, .. } => {
                self.set_branch(left);
                self.set_branch(right);
            }
            _ => {}
        }
    }

    fn order_limit(&mut self, q: &Query, outputs: &Outputs) {
        if let Some(ob) = &q.order_by {
            match &ob.kind {
                OrderByKind::Expressions(items) => {
                    for item in items {
                        let desc =
                            matches!(item.options.sort, Some(sqlparser::ast::OrderBySort::Desc));
                        let nulls_first = item.options.nulls_first;
                        match self.order_column(&item.expr, outputs) {
                            Some(column) => self.res.analysis.order_by.push(OrderBy {
                                column,
                                desc,
                                nulls_first,
                            }),
                            None => self.note(format!(
                                "ORDER BY {} is not a column; not recorded",
                                item.expr
                            )),
                        }
                    }
                }
                OrderByKind::All(_) => self.note("ORDER BY ALL not recorded"),
            }
        }
        if let Some(lc) = &q.limit_clause {
            let (limit, offset) = match lc {
                LimitClause::LimitOffset { limit, offset, .. } => {
                    (limit.as_ref(), offset.as_ref().map(|o| &o.value))
                }
                LimitClause::OffsetCommaLimit { offset, limit } => (Some(limit), Some(offset)),
            };
            if let Some(l) = limit {
                self.res.analysis.limit_sql = Some(l.to_string());
                self.res.analysis.limit_expr = self.count_expr(l);
                match const_u64(l) {
                    Some(n) => self.res.analysis.limit = Some(n),
                    None => self.res.limit_param = true,
                }
            }
            if let Some(o) = offset {
                self.res.analysis.offset_sql = Some(o.to_string());
                self.res.analysis.offset_expr = self.count_expr(o);
                match const_u64(o) {
                    Some(n) => self.res.analysis.offset = Some(n),
                    None => self.res.offset_param = true,
                }
            }
        }
        if let Some(f) = &q.fetch {
            if !f.percent {
                self.res.analysis.limit_sql = f.quantity.as_ref().map(|e| e.to_string());
                self.res.analysis.limit_expr = match (&f.quantity, f.with_ties) {
                    (Some(e), false) => self.count_expr(e),
                    _ => None,
                };
            }
            match f.quantity.as_ref().map(const_u64) {
                Some(Some(n)) if !f.percent => self.res.analysis.limit = Some(n),
                Some(None) => self.res.limit_param = true,
                _ => {}
            }
        }
    }

    /// A LIMIT or OFFSET count as a typed `bigint` expression (`$3`, `20`).
    fn count_expr(&mut self, e: &Expr) -> Option<TypedExpr> {
        self.typed(None, |conv, _| {
            conv.value_of(
                e,
                remodel_model::ScalarType::Bigint,
                &remodel_sql::typed_expr::NoColumns,
            )
        })
        .ok()
    }

    /// An ORDER BY item: a column, a select alias or a 1-based position.
    fn order_column(&mut self, e: &Expr, outputs: &Outputs) -> Option<ColumnRef> {
        if let Some(n) = const_u64(e) {
            return outputs
                .get((n as usize).checked_sub(1)?)
                .and_then(|o| o.1.clone());
        }
        if let Expr::Identifier(id) = e {
            let name = ident(id);
            if let Some((_, Some(c))) = outputs.iter().find(|(n, _)| *n == name) {
                // A select alias shadows nothing in Postgres ORDER BY: output names come first.
                return Some(c.clone());
            }
        }
        let paths = column_paths(e);
        if paths.len() == 1 {
            return self.resolve(&paths[0]).map(|r| r.col);
        }
        None
    }

    /// Adds the relations of a SELECT's FROM, reads WHERE, projection, GROUP BY. Leaves its scope
    /// pushed (ORDER BY of the enclosing query still sees it); the caller pops it.
    fn select(&mut self, s: &Select, main: bool) -> Outputs {
        self.scopes.push(Vec::new());
        for twj in &s.from {
            self.table_with_joins(twj, main);
        }
        if let Some(w) = &s.selection {
            self.conjuncts(w, main);
        }
        if let Some(h) = &s.having {
            if main {
                let reason = "HAVING filters groups after aggregation";
                push_residual(self, h, format!("HAVING {h}"), reason);
            }
            self.expr_subqueries(h);
        }
        if main {
            match &s.distinct {
                Some(Distinct::Distinct) | Some(Distinct::On(_)) => {
                    self.res.analysis.distinct = true
                }
                _ => {}
            }
        }
        let outputs = self.projection(&s.projection, main);
        if main {
            if let GroupByExpr::Expressions(exprs, _) = &s.group_by {
                for e in exprs {
                    let col = if let Some(n) = const_u64(e) {
                        outputs
                            .get((n as usize).saturating_sub(1))
                            .and_then(|o| o.1.clone())
                    } else {
                        let paths = column_paths(e);
                        match paths.as_slice() {
                            [p] => self.resolve(p).map(|r| r.col).or_else(|| {
                                outputs
                                    .iter()
                                    .find(|o| [o.0.clone()] == p.as_slice())
                                    .and_then(|o| o.1.clone())
                            }),
                            _ => None,
                        }
                    };
                    match col {
                        Some(c) if !self.res.analysis.group_by.contains(&c) => {
                            self.res.analysis.group_by.push(c)
                        }
                        Some(_) => {}
                        None => self.note(format!("GROUP BY {e} is not a column; not recorded")),
                    }
                }
            }
        }
        outputs
    }

    fn table_with_joins(&mut self, twj: &TableWithJoins, main: bool) {
        let first = self.relation(&twj.relation, main);
        let mut left_ids: Vec<usize> = first.into_iter().collect();
        for j in &twj.joins {
            let right = self.relation(&j.relation, main);
            // In an outer join, ON conditions other than the join columns restrict which rows
            // are joined, not which rows are returned: they are not the pattern's filters.
            let outer = matches!(
                j.join_operator,
                JoinOperator::Left(_)
                    | JoinOperator::LeftOuter(_)
                    | JoinOperator::Right(_)
                    | JoinOperator::RightOuter(_)
                    | JoinOperator::FullOuter(_)
            );
            let constraint = match &j.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c)
                | JoinOperator::Semi(c)
                | JoinOperator::LeftSemi(c)
                | JoinOperator::RightSemi(c)
                | JoinOperator::Anti(c)
                | JoinOperator::LeftAnti(c)
                | JoinOperator::RightAnti(c)
                | JoinOperator::StraightJoin(c) => Some(c),
                _ => {
                    self.unmodeled("join kind not modelled (APPLY, ASOF, ARRAY JOIN)");
                    None
                }
            };
            if let (Some(c), Some(r)) = (constraint, right) {
                match c {
                    JoinConstraint::On(e) if outer => self.outer_on(e, main),
                    JoinConstraint::On(e) => self.conjuncts(e, main),
                    JoinConstraint::Using(cols) | JoinConstraint::UsingAlias(cols, _) => {
                        let names: Vec<String> = cols.iter().map(bare_name).collect();
                        self.using(&left_ids, r, &names);
                    }
                    JoinConstraint::Natural => {
                        let names = self.rel_columns(r);
                        let common: Vec<String> = names
                            .into_iter()
                            .filter(|n| left_ids.iter().any(|l| self.rel_columns(*l).contains(n)))
                            .collect();
                        self.using(&left_ids, r, &common);
                    }
                    JoinConstraint::None => {}
                }
            }
            left_ids.extend(right);
        }
    }

    /// The ON clause of an outer join: column equalities are join edges, the rest is residual.
    fn outer_on(&mut self, e: &Expr, main: bool) {
        for term in and_terms(e) {
            let edges = self.res.edges.len();
            self.conjuncts(term, false);
            if self.res.edges.len() == edges && main {
                let reason =
                    "an outer join's ON condition decides which rows join, not which return";
                push_residual(self, term, format!("outer join ON {term}"), reason);
            }
        }
    }

    /// `JOIN … USING (cols)`: each column pairs the new relation with the earlier one that has it.
    fn using(&mut self, left_ids: &[usize], right: usize, names: &[String]) {
        for n in names {
            let left = left_ids
                .iter()
                .copied()
                .find(|l| self.rel_columns(*l).contains(n));
            let (Some(l), Some(rc)) = (left, self.rel_column(right, n)) else {
                self.note(format!("USING ({n}): column not found on both sides"));
                continue;
            };
            if let Some(lc) = self.rel_column(l, n) {
                self.res.edges.push(Edge {
                    a_rel: l,
                    a: lc,
                    b_rel: right,
                    b: rc,
                });
            }
        }
    }

    pub(crate) fn find_rel(&self, id: usize) -> Option<&Rel> {
        self.scopes
            .iter()
            .flat_map(|s| s.iter())
            .find(|r| r.id == id)
    }

    /// Column names a relation provides (empty when unknown).
    fn rel_columns(&self, id: usize) -> Vec<String> {
        let Some(rel) = self.find_rel(id) else {
            return Vec::new();
        };
        if let Some(d) = &rel.derived {
            return d.iter().map(|o| o.0.clone()).collect();
        }
        rel.table
            .as_deref()
            .and_then(|t| self.table(t))
            .map(|t| t.columns.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default()
    }

    fn rel_column(&self, id: usize, name: &str) -> Option<ColumnRef> {
        let rel = self.find_rel(id)?;
        column_of(self.schema, rel, name)
    }

    /// Adds one FROM relation to the current scope; returns its id.
    fn relation(&mut self, tf: &TableFactor, main: bool) -> Option<usize> {
        match tf {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if args.is_some() {
                    if self.insert_source {
                        self.note(format!("INSERT source reads the table function {name}"));
                    } else {
                        self.unmodeled(format!("table function in FROM ({name})"));
                    }
                    return None;
                }
                let parts = object_parts(name);
                let bare = parts.last().cloned().unwrap_or_default();
                let alias_name = alias
                    .as_ref()
                    .map(|a| ident(&a.name))
                    .unwrap_or_else(|| bare.clone());
                if parts.len() == 1 {
                    if let Some((_, outs)) = self.ctes.iter().rev().find(|(n, _)| *n == bare) {
                        let outs = outs.clone();
                        return Some(self.new_rel(alias_name, None, bare, Some(outs)));
                    }
                }
                let qualified = parts.join(".");
                match self.resolve_table(&parts) {
                    Some(t) => {
                        let tname = t.key();
                        self.note_table(&tname);
                        Some(self.new_rel(alias_name, Some(tname), qualified, None))
                    }
                    None => {
                        self.note_table(&qualified);
                        Some(self.new_rel(alias_name, None, qualified, None))
                    }
                }
            }
            TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                // Derived tables see the enclosing scopes only when LATERAL; resolving through
                // them otherwise is harmless (names would not clash in valid SQL).
                let what = if *lateral {
                    "a LATERAL subquery"
                } else {
                    "a subquery in FROM"
                };
                let outs = self.rows_subquery(subquery, main, what);
                let alias_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_default();
                let mut outs = outs;
                if let Some(a) = alias {
                    for (i, c) in a.columns.iter().enumerate() {
                        if let Some(o) = outs.get_mut(i) {
                            o.0 = ident(&c.name);
                        }
                    }
                }
                Some(self.new_rel(alias_name.clone(), None, alias_name, Some(outs)))
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.table_with_joins(table_with_joins, main);
                None
            }
            other => {
                let head: String = other.to_string().chars().take(40).collect();
                self.unmodeled(format!("FROM item not modelled ({head})"));
                None
            }
        }
    }

    /// Resolves an identifier path to a column of a relation in scope (innermost scope first).
    pub(crate) fn resolve(&self, path: &[String]) -> Option<Resolved> {
        let col = path.last()?;
        if path.len() >= 2 {
            let qual = &path[path.len() - 2];
            for scope in self.scopes.iter().rev() {
                if let Some(rel) = scope.iter().rev().find(|r| r.alias == *qual) {
                    return column_of(self.schema, rel, col).map(|c| Resolved {
                        rel: rel.id,
                        col: c,
                    });
                }
            }
            return None;
        }
        for scope in self.scopes.iter().rev() {
            let definite: Vec<&Rel> = scope
                .iter()
                .filter(|r| self.has_column(r, col) == Some(true))
                .collect();
            if let Some(rel) = definite.first() {
                return column_of(self.schema, rel, col).map(|c| Resolved {
                    rel: rel.id,
                    col: c,
                });
            }
            let maybe: Vec<&Rel> = scope
                .iter()
                .filter(|r| self.has_column(r, col).is_none())
                .collect();
            if maybe.len() == 1 {
                return column_of(self.schema, maybe[0], col).map(|c| Resolved {
                    rel: maybe[0].id,
                    col: c,
                });
            }
        }
        None
    }

    /// Whether a relation has a column: `None` when its columns are unknown.
    fn has_column(&self, rel: &Rel, col: &str) -> Option<bool> {
        if let Some(d) = &rel.derived {
            return Some(d.iter().any(|o| o.0 == col));
        }
        let t = self.table(rel.table.as_deref()?)?;
        Some(t.column(col).is_some())
    }

    /// Analyzes the subqueries inside an expression (their tables and correlated joins).
    pub(crate) fn expr_subqueries(&mut self, e: &Expr) {
        for q in subqueries(e) {
            self.expr_subquery(&q);
        }
    }

    /// Analyzes one subquery of an expression (`EXISTS (…)`, `IN (SELECT …)`, a scalar
    /// subquery): its tables and correlated joins, for foreign-key inference. A read with one is
    /// not one access: the reader evaluates the subquery per row (or once, apart), so its tables
    /// are remembered and the read is not modelled as one table (see [`Ctx::finish`]).
    pub(crate) fn expr_subquery(&mut self, q: &Query) -> Outputs {
        let rels = self.next_rel;
        self.scopes.push(Vec::new());
        let outs = self.query(q, false);
        self.scopes.pop();
        if self.next_rel > rels {
            let read: String = q.to_string().chars().take(60).collect();
            self.expr_subqueries_read.push(read);
        }
        outs
    }

    /// Analyzes a derived table or a WITH query for the statement's rows. Its own LIMIT, OFFSET,
    /// aggregates, GROUP BY or DISTINCT shape its rows, not the statement's: they are never
    /// recorded as the pattern's, and the statement is not modelled (in a LATERAL subquery they
    /// apply per row of the tables before it: `LATERAL (… ORDER BY created_at DESC LIMIT 1)` is
    /// each user's latest order, not one order). An ORDER BY alone orders nothing returned.
    fn rows_subquery(&mut self, q: &Query, main: bool, what: &str) -> Outputs {
        let a = &self.res.analysis;
        let saved_exprs = (a.limit_expr.clone(), a.offset_expr.clone());
        let saved = (
            (a.limit, a.limit_sql.clone(), a.offset, a.offset_sql.clone()),
            (
                a.order_by.len(),
                a.aggregates.len(),
                a.group_by.len(),
                a.distinct,
            ),
            (self.res.limit_param, self.res.offset_param),
        );
        self.scopes.push(Vec::new());
        let outs = self.query(q, main);
        self.scopes.pop();
        let a = &mut self.res.analysis;
        (a.limit, a.limit_sql, a.offset, a.offset_sql) = saved.0;
        (a.limit_expr, a.offset_expr) = saved_exprs;
        a.order_by.truncate(saved.1 .0);
        a.aggregates.truncate(saved.1 .1);
        a.group_by.truncate(saved.1 .2);
        a.distinct = saved.1 .3;
        (self.res.limit_param, self.res.offset_param) = saved.2;
        if let Some(shaping) = row_shaping(q) {
            self.unmodeled(format!(
                "{what} with its own {shaping}: it shapes that subquery's rows{}, which one table read cannot return",
                if what.contains("LATERAL") {
                    " for each row of the tables before it"
                } else {
                    ""
                }
            ));
        }
        outs
    }

    fn projection(&mut self, items: &[SelectItem], main: bool) -> Outputs {
        let mut outs: Outputs = Vec::new();
        for item in items {
            match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    self.expr_subqueries(e);
                    let (paths, aggs) = projection_parts(e);
                    let mut cols = Vec::new();
                    for p in &paths {
                        match self.resolve(p) {
                            Some(r) => cols.push(r.col),
                            None => {
                                self.note(format!("projected column {} not resolved", p.join(".")))
                            }
                        }
                    }
                    if main {
                        for c in &cols {
                            self.push_projection(c.clone());
                        }
                        // An item that is one aggregate call is that aggregate's column
                        // (`count(*) + 1` is computed from one, not it).
                        let whole = aggs.len() == 1
                            && matches!(e, Expr::Function(f)
                                if AGGREGATES.contains(&bare_name(&f.name).as_str()) && f.over.is_none());
                        if whole {
                            let k = self.res.analysis.aggregates.len();
                            self.output_aggregates.push((outs.len(), k));
                        }
                        for (f, arg, distinct) in aggs {
                            let column = match &arg {
                                Some(p) => self.resolve(p).map(|r| r.col),
                                None => None,
                            };
                            self.res.analysis.aggregates.push(Aggregate {
                                function: f,
                                column,
                                distinct,
                            });
                        }
                    }
                    let name = match item {
                        SelectItem::ExprWithAlias { alias, .. } => ident(alias),
                        _ => match e {
                            Expr::Identifier(i) => ident(i),
                            Expr::CompoundIdentifier(ids) => {
                                ids.last().map(ident).unwrap_or_default()
                            }
                            Expr::Function(f) => bare_name(&f.name),
                            _ => "?column?".into(),
                        },
                    };
                    let plain = matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_));
                    outs.push((name, if plain { cols.into_iter().next() } else { None }));
                }
                SelectItem::Wildcard(_) => {
                    let rels: Vec<usize> = self
                        .scopes
                        .last()
                        .map(|s| s.iter().map(|r| r.id).collect())
                        .unwrap_or_default();
                    for id in rels {
                        self.expand_star(id, main, &mut outs);
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    let qual = match kind {
                        SelectItemQualifiedWildcardKind::ObjectName(n) => Some(bare_name(n)),
                        SelectItemQualifiedWildcardKind::Expr(_) => None,
                    };
                    let id = qual.as_ref().and_then(|q| {
                        self.scopes
                            .last()
                            .and_then(|s| s.iter().find(|r| r.alias == *q))
                            .map(|r| r.id)
                    });
                    match id {
                        Some(id) => self.expand_star(id, main, &mut outs),
                        None => self.note(format!("{kind}.* does not name a relation in scope")),
                    }
                }
                other => self.note(format!("projection item not modelled: {other}")),
            }
        }
        outs
    }

    fn expand_star(&mut self, id: usize, main: bool, outs: &mut Outputs) {
        let Some(rel) = self.find_rel(id).cloned() else {
            return;
        };
        let names = self.rel_columns(id);
        if names.is_empty() {
            self.note(format!(
                "* over {} cannot be expanded: its columns are unknown",
                rel.written
            ));
        }
        for n in names {
            let c = column_of(self.schema, &rel, &n);
            if main {
                if let Some(c) = &c {
                    self.push_projection(c.clone());
                }
            }
            outs.push((n, c));
        }
    }

    fn push_projection(&mut self, c: ColumnRef) {
        if !self.res.analysis.projection.contains(&c) {
            self.res.analysis.projection.push(c);
        }
    }

    // ---- writes ----

    fn insert(&mut self, ins: &Insert) {
        self.scopes.push(Vec::new());
        let TableObject::TableName(name) = &ins.table else {
            self.unmodeled("INSERT into a table function");
            return;
        };
        let Some(target) = self.write_target(name) else {
            return;
        };
        let table = self.table(&target);
        let mut columns: Vec<String> = ins.columns.iter().map(bare_name).collect();
        if columns.is_empty() {
            columns = table
                .map(|t| t.columns.iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
        }
        let columns: Vec<String> = columns.iter().map(|c| canonical_column(table, c)).collect();
        let mut reads = Vec::new();
        let mut values = Vec::new();
        if let Some(src) = &ins.source {
            if !matches!(src.body.as_ref(), SetExpr::Values(_)) {
                let before = self.res.analysis.tables.len();
                self.scopes.push(Vec::new());
                self.insert_source = true;
                self.query(src, true);
                self.insert_source = false;
                self.scopes.pop();
                reads = self.res.analysis.tables[before..].to_vec();
            } else if let SetExpr::Values(v) = src.body.as_ref() {
                self.res.insert_rows = Some(v.rows.len());
                for row in &v.rows {
                    for e in &row.content {
                        self.expr_subqueries(e);
                    }
                }
                if let [row] = v.rows.as_slice() {
                    values = columns
                        .iter()
                        .zip(&row.content)
                        .map(|(c, e)| WrittenValue {
                            column: c.clone(),
                            sql: e.to_string(),
                            reads_current: false,
                            expr: self.written_expr(table, c, e, None),
                        })
                        .collect();
                }
            }
        }
        let pk: Vec<String> = table.map(|t| t.primary_key.clone()).unwrap_or_default();
        let key_columns: Vec<String> = pk.iter().filter(|k| columns.contains(k)).cloned().collect();
        let by_pk = !pk.is_empty() && key_columns.len() == pk.len();
        let returning = self.returning(ins.returning.as_deref(), table);
        let conflict = match &ins.on {
            Some(OnInsert::OnConflict(oc)) => Some(self.conflict(oc, table)),
            _ => None,
        };
        self.res.analysis.write = Some(WriteInfo {
            table: target,
            columns_written: columns,
            key_columns,
            by_primary_key: by_pk,
            on_conflict: matches!(ins.on, Some(OnInsert::OnConflict(_))),
            returning,
            reads,
            values,
            conflict,
            from_rows: Vec::new(),
        });
    }

    fn update(&mut self, up: &Update) {
        self.scopes.push(Vec::new());
        let Some((target, target_rel)) =
            self.aliased_write_target(&up.table.relation, "UPDATE of something other than a table")
        else {
            return;
        };
        let table = self.table(&target);
        let mut written = Vec::new();
        // Typed once every relation of FROM is in scope (`SET balance = s.balance`).
        let mut pending = Vec::new();
        for a in &up.assignments {
            let names: Vec<String> = match &a.target {
                AssignmentTarget::ColumnName(n) => vec![bare_name(n)],
                AssignmentTarget::Tuple(ns) => ns.iter().map(bare_name).collect(),
            };
            let names: Vec<String> = names.iter().map(|n| canonical_column(table, n)).collect();
            let parts = assigned_values(&names, &a.value, table);
            written.extend(names);
            self.expr_subqueries(&a.value);
            pending.push(parts);
        }
        for j in &up.table.joins {
            self.relation(&j.relation, true);
        }
        let before = self.res.analysis.tables.len();
        if let Some(UpdateTableFromKind::BeforeSet(f) | UpdateTableFromKind::AfterSet(f)) = &up.from
        {
            for twj in f {
                self.table_with_joins(twj, true);
            }
        }
        let reads = self.res.analysis.tables[before..].to_vec();
        let mut values = Vec::new();
        for (mut v, e) in pending.into_iter().flatten() {
            v.expr = self.written_expr(table, &v.column, e, None);
            values.push(v);
        }
        if let Some(w) = &up.selection {
            self.conjuncts(w, true);
        }
        let returning = self.returning(up.returning.as_deref(), table);
        self.finish_write(target, target_rel, written, reads, returning, false);
        if let Some(w) = self.res.analysis.write.as_mut() {
            w.values = values;
        }
    }

    fn delete(&mut self, del: &Delete) {
        self.scopes.push(Vec::new());
        let tables = match &del.from {
            FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
        };
        let Some(first) = tables.first() else {
            self.unmodeled("DELETE without a table");
            return;
        };
        let Some((target, target_rel)) =
            self.aliased_write_target(&first.relation, "DELETE from something other than a table")
        else {
            return;
        };
        let table = self.table(&target);
        let before = self.res.analysis.tables.len();
        for twj in tables.iter().skip(1).chain(del.using.iter().flatten()) {
            self.table_with_joins(twj, true);
        }
        let reads = self.res.analysis.tables[before..].to_vec();
        if let Some(w) = &del.selection {
            self.conjuncts(w, true);
        }
        let returning = self.returning(del.returning.as_deref(), table);
        self.finish_write(target, target_rel, Vec::new(), reads, returning, false);
    }

    /// Registers the target of an UPDATE or DELETE with its alias; returns the table and its
    /// relation id, or `None` (recorded as `not_table`) when the target is not a plain table.
    fn aliased_write_target(
        &mut self,
        relation: &TableFactor,
        not_table: &str,
    ) -> Option<(String, usize)> {
        let TableFactor::Table { name, alias, .. } = relation else {
            self.unmodeled(not_table);
            return None;
        };
        let target = self.write_target(name)?;
        if let Some(a) = alias {
            if let Some(r) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
                r.alias = ident(&a.name);
            }
        }
        self.write_rel = Some(self.next_rel - 1);
        Some((target, self.next_rel - 1))
    }

    /// Registers the written table as the first relation; `None` (and unmodeled) when unknown.
    fn write_target(&mut self, name: &sqlparser::ast::ObjectName) -> Option<String> {
        let parts = object_parts(name);
        let qualified = parts.join(".");
        let bare = bare_name(name);
        // An unknown table keeps its name as written, so it never stands for a known one.
        let (tname, known) = match self.resolve_table(&parts) {
            Some(t) => (t.key(), Some(t.key())),
            None => (qualified.clone(), None),
        };
        self.note_table(&tname);
        self.new_rel(bare, known, qualified, None);
        Some(tname)
    }

    fn finish_write(
        &mut self,
        target: String,
        rel: usize,
        written: Vec<String>,
        reads: Vec<String>,
        returning: Vec<String>,
        on_conflict: bool,
    ) {
        let table = self.table(&target);
        // Identifying columns: equality predicates on the target table itself.
        let mut keys: Vec<String> = Vec::new();
        for p in &self.res.analysis.equality {
            if p.column.table == target && !keys.contains(&p.column.column) {
                keys.push(p.column.column.clone());
            }
        }
        let _ = rel;
        let pk: Vec<String> = table.map(|t| t.primary_key.clone()).unwrap_or_default();
        let by_pk = !pk.is_empty()
            && pk.iter().all(|k| {
                self.res.analysis.equality.iter().any(|p| {
                    p.column.table == target && p.column.column == **k && p.op == EqualityOp::Eq
                })
            });
        self.res.analysis.write = Some(WriteInfo {
            table: target,
            columns_written: written,
            key_columns: keys,
            by_primary_key: by_pk,
            on_conflict,
            returning,
            reads,
            values: Vec::new(),
            conflict: None,
            from_rows: self.rows_read_by_write(),
        });
    }

    fn returning(&mut self, items: Option<&[SelectItem]>, table: Option<&Table>) -> Vec<String> {
        let mut out = Vec::new();
        for item in items.unwrap_or_default() {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => out.extend(
                    table
                        .map(|t| t.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
                        .unwrap_or_default(),
                ),
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    for p in column_paths(e) {
                        if let Some(last) = p.last() {
                            out.push(canonical_column(table, last));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn finish(mut self, p: &AccessPattern, stmt: &Statement) -> StatementResult {
        crate::predicates::flush_ranges(&mut self);
        crate::typed::cast_params(stmt, &mut self.conv);
        self.res.analysis.params = crate::typed::parameters(stmt, &self.conv, &self.literals);
        if self.kind == Some(StatementKind::Select) {
            if let Some(first) = self.expr_subqueries_read.first().cloned() {
                self.unmodeled(format!(
                    "a subquery in an expression reads a table ({first}…): the reader evaluates it per row or apart, which one table read cannot do"
                ));
            }
        }
        if self.kind == Some(StatementKind::Select) && self.res.analysis.tables.is_empty() {
            self.unmodeled("reads no table");
        }
        let mut res = self.res;
        res.analysis.join_path = joins::steps(&res.edges);
        if !self.unmodeled.is_empty() {
            res.analysis.unmodeled = Some(self.unmodeled.join("; "));
        }
        let a = &mut res.analysis;
        if self.kind == Some(StatementKind::Select) && a.unmodeled.is_none() {
            a.key_lookup = a.tables.len() == 1
                && a.join_path.is_empty()
                && self
                    .schema
                    .table(&a.tables[0])
                    .is_some_and(|t| pk_bound(t, &a.equality));
            a.rows_expected = match (p.rows, p.calls) {
                (Some(rows), calls) if calls > 0 => Some(rows as f64 / calls as f64),
                _ if single_row(self.schema, a) => Some(1.0),
                _ if !a.aggregates.is_empty() && a.group_by.is_empty() => Some(1.0),
                _ => None,
            };
        } else if let Some(w) = &a.write {
            if let (Some(rows), true) = (p.rows, p.calls > 0) {
                a.rows_expected = Some(rows as f64 / p.calls as f64);
            } else if self.kind == Some(StatementKind::Insert) {
                a.rows_expected = res.insert_rows.map(|n| n as f64);
            } else if w.by_primary_key {
                a.rows_expected = Some(1.0);
            }
        }
        res
    }
}

/// The column `name` of a relation as a [`ColumnRef`] (through derived tables to their source).
fn column_of(schema: &Schema, rel: &Rel, name: &str) -> Option<ColumnRef> {
    if let Some(d) = &rel.derived {
        return d.iter().find(|o| o.0 == name).and_then(|o| o.1.clone());
    }
    match rel.table.as_deref().and_then(|t| schema.table(t)) {
        Some(t) => Some(ColumnRef::new(t.key(), canonical_column(Some(t), name))),
        None => Some(ColumnRef::new(rel.written.as_str(), name)),
    }
}

/// The schema's spelling of a column name, or the name as given.
fn canonical_column(table: Option<&Table>, name: &str) -> String {
    table
        .and_then(|t| t.column(name))
        .map(|c| c.name.clone())
        .unwrap_or_else(|| name.to_string())
}

/// True when `=` predicates (on plain columns) bind the table's whole primary key.
pub(crate) fn pk_bound(t: &Table, eq: &[Predicate]) -> bool {
    !t.primary_key.is_empty()
        && t.primary_key.iter().all(|k| {
            eq.iter().any(|p| {
                p.column.table == t.key() && p.column.column == *k && p.op == EqualityOp::Eq
            })
        })
}

/// True when the keys bound by equality and the joins on unique keys determine one row of
/// every table read (a key lookup followed by N-1 joins).
fn single_row(schema: &Schema, a: &PatternAnalysis) -> bool {
    if a.tables.is_empty() {
        return false;
    }
    let unique =
        |table: &str, cols: &[String]| schema.table(table).is_some_and(|t| t.is_unique_on(cols));
    let mut determined: Vec<&str> = a
        .tables
        .iter()
        .filter(|t| {
            schema.table(t).is_some_and(|tb| {
                let bound: Vec<String> = a
                    .equality
                    .iter()
                    .filter(|p| p.column.table == tb.key() && p.op == EqualityOp::Eq)
                    .map(|p| p.column.column.clone())
                    .collect();
                pk_bound(tb, &a.equality)
                    || tb
                        .unique_keys
                        .iter()
                        .any(|u| u.columns.iter().all(|c| bound.contains(c)))
            })
        })
        .map(String::as_str)
        .collect();
    loop {
        let before = determined.len();
        for j in &a.join_path {
            let l = determined.contains(&j.left_table.as_str());
            let r = determined.contains(&j.right_table.as_str());
            if l && !r && unique(&j.right_table, &j.right_columns) {
                determined.push(&j.right_table);
            } else if r && !l && unique(&j.left_table, &j.left_columns) {
                determined.push(&j.left_table);
            }
        }
        if determined.len() == before {
            break;
        }
    }
    a.tables.iter().all(|t| determined.contains(&t.as_str()))
}

/// The queries a set operation combines (`a UNION b UNION c`: 3).
fn set_branches(e: &SetExpr) -> usize {
    match e {
        SetExpr::SetOperation { left, right, .. } => set_branches(left) + set_branches(right),
        _ => 1,
    }
}

/// What in a query's own clauses decides which rows it returns beyond its filters (`LIMIT`,
/// `OFFSET`, `FETCH`, aggregates, `GROUP BY`, `DISTINCT`), or `None`.
fn row_shaping(q: &Query) -> Option<&'static str> {
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Some("LIMIT/OFFSET");
    }
    let SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    if s.distinct.is_some() {
        return Some("DISTINCT");
    }
    if !matches!(&s.group_by, GroupByExpr::Expressions(e, _) if e.is_empty()) {
        return Some("GROUP BY");
    }
    let aggregates = s.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            !projection_parts(e).1.is_empty()
        }
        _ => false,
    });
    aggregates.then_some("aggregate")
}

/// A non-negative integer constant (`10`, `'10'`).
pub(crate) fn const_u64(e: &Expr) -> Option<u64> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            Value::SingleQuotedString(s) => s.trim().parse().ok(),
            _ => None,
        },
        Expr::Nested(inner) => const_u64(inner),
        Expr::Cast { expr, .. } => const_u64(expr),
        _ => None,
    }
}

/// Column paths of a projection item outside aggregate calls, and the aggregates inside it
/// (function, single argument column path, DISTINCT).
type AggFound = (String, Option<Vec<String>>, bool);

fn projection_parts(e: &Expr) -> (Vec<Vec<String>>, Vec<AggFound>) {
    struct P {
        query_depth: usize,
        agg_depth: usize,
        paths: Vec<Vec<String>>,
        aggs: Vec<AggFound>,
    }
    fn agg_name(f: &Function) -> Option<String> {
        let n = bare_name(&f.name);
        (AGGREGATES.contains(&n.as_str()) && f.over.is_none()).then_some(n)
    }
    impl Visitor for P {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
            self.query_depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
            self.query_depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if self.query_depth > 0 {
                return ControlFlow::Continue(());
            }
            if let Expr::Function(f) = e {
                if let Some(name) = agg_name(f) {
                    if self.agg_depth == 0 {
                        let (arg, distinct) = match &f.args {
                            FunctionArguments::List(l) => {
                                let distinct = matches!(
                                    l.duplicate_treatment,
                                    Some(sqlparser::ast::DuplicateTreatment::Distinct)
                                );
                                let arg = match l.args.as_slice() {
                                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => {
                                        let ps = column_paths(x);
                                        (ps.len() == 1).then(|| ps[0].clone())
                                    }
                                    _ => None,
                                };
                                (arg, distinct)
                            }
                            _ => (None, false),
                        };
                        self.aggs.push((name, arg, distinct));
                    }
                    self.agg_depth += 1;
                }
            }
            if self.agg_depth == 0 {
                match e {
                    Expr::Identifier(id) => self.paths.push(vec![ident(id)]),
                    Expr::CompoundIdentifier(ids) => {
                        self.paths.push(ids.iter().map(ident).collect())
                    }
                    _ => {}
                }
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if self.query_depth == 0 {
                if let Expr::Function(f) = e {
                    if agg_name(f).is_some() {
                        self.agg_depth -= 1;
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut p = P {
        query_depth: 0,
        agg_depth: 0,
        paths: Vec::new(),
        aggs: Vec::new(),
    };
    let _ = e.visit(&mut p);
    // Named function arguments (`make_interval(days => …)`) are not columns.
    let real: Vec<Vec<String>> = column_paths(e);
    p.paths.retain(|x| real.contains(x));
    (p.paths, p.aggs)
}

/// The values an assignment gives its columns: `a = expr`, or `(a, b) = (x, y)` split by position
/// (a tuple set from a subquery has no per-column value and yields none).
fn assigned_values<'e>(
    names: &[String],
    value: &'e Expr,
    table: Option<&Table>,
) -> Vec<(WrittenValue, &'e Expr)> {
    let parts: Vec<&Expr> = match (names.len(), value) {
        (1, e) => vec![e],
        (n, Expr::Tuple(items)) if items.len() == n => items.iter().collect(),
        _ => return Vec::new(),
    };
    names
        .iter()
        .zip(parts)
        .map(|(name, e)| {
            let v = WrittenValue {
                column: name.clone(),
                sql: e.to_string(),
                reads_current: column_paths(e).iter().any(|p| {
                    p.last()
                        .is_some_and(|last| table.is_none_or(|t| t.column(last).is_some()))
                }),
                expr: None,
            };
            (v, e)
        })
        .collect()
}
