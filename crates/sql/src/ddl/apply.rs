//! Applying parsed DDL statements to the schema being built, and the final resolution pass
//! (serial columns, partitions folded into their parents, foreign keys without a column list).

use super::{relative_location, statement_kind, Loader, PartitionLink};
use crate::split::RawStatement;
use remodel_model::pgtype;
use remodel_model::{
    count_skip, Column, DomainType, EnumType, FkOrigin, ForeignKey, Identity, Index, IndexKey,
    Location, PartitionSpec, Schema, Sequence, Table, UniqueKey,
};
use sqlparser::ast::{
    AlterColumnOperation, AlterTableOperation, ArrayElemTypeDef, ColumnDef, ColumnOption,
    CommentObject, CreateIndex, CreateTable, DataType, Expr, FunctionArguments, GeneratedAs, Ident,
    IndexColumn, ObjectName, ObjectNamePart, ObjectType, OrderBySort, RenameTableNameKind,
    SequenceOptions, Statement, TableConstraint, UserDefinedTypeRepresentation,
};
use sqlparser::tokenizer::Span;

/// An identifier as Postgres stores it: unquoted names fold to lower case, quoted keep their case.
pub(super) fn fold(id: &Ident) -> String {
    remodel_model::ident::fold(&id.value, id.quote_style.is_some())
}

/// The folded parts of a (possibly qualified) name.
fn parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => fold(id),
            other => other.to_string(),
        })
        .collect()
}

/// A qualified name as written, folded (`public.film`).
pub(super) fn qualified(name: &ObjectName) -> String {
    parts(name).join(".")
}

/// `(schema, table)` of a table name (`db.schema.table` keeps the schema).
pub(super) fn table_key(name: &ObjectName) -> (Option<String>, String) {
    let mut p = parts(name);
    let table = p.pop().unwrap_or_default();
    (p.pop(), table)
}

/// True when `schema.name` names `t`; an unqualified name matches `public` (pg_dump qualifies
/// everything, hand-written DDL rarely does).
fn names_table(t: &Table, schema: Option<&str>, name: &str) -> bool {
    t.name == name
        && match (t.schema.as_deref(), schema) {
            (a, b) if a == b => true,
            (None, Some("public")) | (Some("public"), None) => true,
            _ => false,
        }
}

/// The SQL type as written, lower case, with user-defined type names folded like identifiers.
/// Each column declared with a domain holds the domain's base type (what Postgres sends and
/// compares: a domain over `integer` sorts as integers, one over `citext` compares as `citext`);
/// the domain's name stays in `domain`. Domains over domains are followed, bounded for bad input.
fn resolve_domains(schema: &mut Schema) {
    if schema.domains.is_empty() {
        return;
    }
    let base_of = |ty: &str| -> Option<String> {
        let bare = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
        schema
            .domains
            .iter()
            .find(|d| d.name == ty || (!ty.contains('.') && bare(&d.name) == ty))
            .map(|d| d.base.clone())
    };
    let mut resolved: Vec<(usize, usize, String)> = Vec::new();
    for (ti, t) in schema.tables.iter().enumerate() {
        for (ci, c) in t.columns.iter().enumerate() {
            let (element, array) = match c.sql_type.strip_suffix("[]") {
                Some(e) => (e.to_string(), "[]"),
                None => (c.sql_type.clone(), ""),
            };
            let mut ty = element;
            for _ in 0..16 {
                match base_of(&ty) {
                    Some(base) => ty = base,
                    None => break,
                }
            }
            let ty = format!("{ty}{array}");
            if ty != c.sql_type {
                resolved.push((ti, ci, ty));
            }
        }
    }
    for (ti, ci, ty) in resolved {
        let c = &mut schema.tables[ti].columns[ci];
        c.domain = Some(std::mem::replace(&mut c.sql_type, ty));
    }
}

fn type_string(dt: &DataType) -> String {
    match dt {
        DataType::Custom(name, mods) if mods.is_empty() => qualified(name),
        DataType::Custom(name, mods) => {
            let mods: Vec<String> = mods.iter().map(|m| m.to_string()).collect();
            format!("{}({})", qualified(name), mods.join(","))
        }
        DataType::Array(ArrayElemTypeDef::SquareBracket(inner, size)) => {
            format!(
                "{}[{}]",
                type_string(inner),
                size.map(|s| s.to_string()).unwrap_or_default()
            )
        }
        other => other.to_string().to_lowercase(),
    }
}

/// `serial`-family types: the integer type they stand for.
fn serial_base(sql_type: &str) -> Option<&'static str> {
    pgtype::serial_width(sql_type).map(pgtype::integer_type)
}

/// The column named by an index or key part, if it is a plain column.
fn column_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(id) => Some(fold(id)),
        Expr::CompoundIdentifier(ids) => ids.last().map(fold),
        Expr::Nested(inner) => column_of(inner),
        _ => None,
    }
}

fn key_columns(cols: &[IndexColumn]) -> Vec<String> {
    cols.iter()
        .map(|c| column_of(&c.column.expr).unwrap_or_else(|| c.column.expr.to_string()))
        .collect()
}

impl Loader {
    /// The location of a span inside statement `st`, or `fallback` when the span is empty.
    fn span_location(
        file: &str,
        st: &RawStatement<'_>,
        span: Span,
        fallback: &Location,
    ) -> Location {
        if span.start.line == 0 {
            fallback.clone()
        } else {
            relative_location(file, st, span.start.line, span.start.column)
        }
    }

    fn find_table(&self, key: &(Option<String>, String)) -> Option<usize> {
        let at = self.positions.get(&key.1)?;
        at.iter()
            .copied()
            .filter(|&i| {
                self.schema
                    .tables
                    .get(i)
                    .is_some_and(|t| names_table(t, key.0.as_deref(), &key.1))
            })
            .min()
    }

    /// Adds a table at the end.
    fn push_table(&mut self, table: Table) {
        let at = self.positions.entry(table.name.clone()).or_default();
        at.push(self.schema.tables.len());
        self.schema.tables.push(table);
    }

    /// Removes the table at `i` (the tables after it move up).
    fn remove_table(&mut self, i: usize) -> Table {
        let table = self.schema.tables.remove(i);
        self.reindex();
        table
    }

    /// Rebuilds [`Loader::positions`] after tables moved or were renamed.
    fn reindex(&mut self) {
        self.positions.clear();
        for (i, t) in self.schema.tables.iter().enumerate() {
            self.positions.entry(t.name.clone()).or_default().push(i);
        }
    }

    /// Finds the table a statement targets, or reports and counts it.
    fn target_table(&mut self, name: &ObjectName, what: &str, loc: &Location) -> Option<usize> {
        let key = table_key(name);
        let found = self.find_table(&key);
        if found.is_none() && self.materialized_views.contains(&key) {
            count_skip(
                &mut self.schema.skipped,
                &format!("{what} (on a materialized view)"),
                Some(loc.clone()),
            );
        } else if found.is_none() {
            self.warn(
                loc.clone(),
                format!(
                    "{what} on unknown table `{}`; statement skipped",
                    qualified(name)
                ),
            );
            count_skip(
                &mut self.schema.skipped,
                &format!("{what} (unknown table)"),
                Some(loc.clone()),
            );
        }
        found
    }

    pub(super) fn apply(
        &mut self,
        file: &str,
        st: &RawStatement<'_>,
        loc: Location,
        stmt: Statement,
    ) {
        match stmt {
            Statement::CreateTable(ct) => self.create_table(file, st, loc, ct),
            Statement::CreateIndex(ci) => self.create_index(loc, ci),
            Statement::CreateType {
                name,
                representation,
            } => match representation {
                Some(UserDefinedTypeRepresentation::Enum { labels }) => {
                    self.schema.enums.push(EnumType {
                        name: qualified(&name),
                        values: labels.iter().map(|l| l.value.clone()).collect(),
                        location: Some(loc),
                    });
                }
                other => {
                    let kind = match other {
                        Some(UserDefinedTypeRepresentation::Composite { .. }) => {
                            "CREATE TYPE (composite)"
                        }
                        Some(UserDefinedTypeRepresentation::Range { .. }) => "CREATE TYPE (range)",
                        _ => "CREATE TYPE (other)",
                    };
                    count_skip(&mut self.schema.skipped, kind, Some(loc));
                }
            },
            Statement::CreateDomain(d) => self.schema.domains.push(DomainType {
                name: qualified(&d.name),
                base: type_string(&d.data_type),
                location: Some(loc),
            }),
            Statement::CreateSequence {
                name,
                sequence_options,
                ..
            } => {
                let owned_by = sequence_options.iter().find_map(|o| match o {
                    SequenceOptions::OwnedBy(Some(owner)) => Some(qualified(owner)),
                    _ => None,
                });
                self.schema.sequences.push(Sequence {
                    name: qualified(&name),
                    owned_by,
                    location: Some(loc),
                });
            }
            Statement::AlterTable(at) => {
                let Some(ti) = self.target_table(&at.name, "ALTER TABLE", &loc) else {
                    return;
                };
                for op in at.operations {
                    self.alter_table_op(file, st, &loc, ti, op);
                }
            }
            Statement::Comment {
                object_type,
                object_name,
                comment,
                ..
            } => self.comment(loc, object_type, &object_name, comment),
            Statement::Drop {
                object_type: ObjectType::Table,
                names,
                ..
            } => {
                for name in &names {
                    if let Some(ti) = self.find_table(&table_key(name)) {
                        self.remove_table(ti);
                        self.note(
                            loc.clone(),
                            format!("DROP TABLE removes `{}` defined earlier", qualified(name)),
                        );
                    }
                }
            }
            other => count_skip(&mut self.schema.skipped, &statement_kind(&other), Some(loc)),
        }
    }

    fn create_table(&mut self, file: &str, st: &RawStatement<'_>, loc: Location, ct: CreateTable) {
        if ct.query.is_some() {
            count_skip(&mut self.schema.skipped, "CREATE TABLE AS", Some(loc));
            return;
        }
        let key = table_key(&ct.name);
        if let Some(existing) = self.find_table(&key) {
            if ct.if_not_exists {
                count_skip(
                    &mut self.schema.skipped,
                    "CREATE TABLE IF NOT EXISTS (exists)",
                    Some(loc),
                );
                return;
            }
            self.warn(
                loc.clone(),
                format!(
                    "table `{}` is created again; the later definition replaces the earlier",
                    qualified(&ct.name)
                ),
            );
            self.remove_table(existing);
        }
        let mut table = Table {
            schema: key.0.clone(),
            name: key.1.clone(),
            location: Some(loc.clone()),
            ..Default::default()
        };
        for col in &ct.columns {
            self.add_column(file, st, &loc, &mut table, col);
        }
        for c in &ct.constraints {
            self.add_constraint(file, st, &loc, &mut table, c);
        }
        if let Some(by) = &ct.partition_by {
            table.partition_by = Some(partition_spec(by));
        }
        if let Some(parents) = &ct.inherits {
            table.inherits = parents.iter().map(qualified).collect();
            self.note(
                loc.clone(),
                format!(
                    "`{}` inherits from {}: kept as a table of its own (inheritance children are not folded like partitions)",
                    table.qualified_name(),
                    table.inherits.join(", ")
                ),
            );
        }
        if let Some(parent) = &ct.partition_of {
            self.partitions.push(PartitionLink {
                child: key,
                parent: table_key(parent),
                location: loc.clone(),
            });
        }
        self.push_table(table);
    }

    fn add_column(
        &mut self,
        file: &str,
        st: &RawStatement<'_>,
        loc: &Location,
        table: &mut Table,
        def: &ColumnDef,
    ) {
        let name = fold(&def.name);
        let mut col = Column {
            name: name.clone(),
            sql_type: type_string(&def.data_type),
            nullable: true,
            location: Some(Self::span_location(file, st, def.name.span, loc)),
            ..Default::default()
        };
        if let Some(base) = serial_base(&col.sql_type) {
            col.sql_type = base.to_string();
            col.identity = Some(Identity::Serial);
            col.nullable = false;
        }
        for opt in &def.options {
            let constraint_name = opt.name.as_ref().map(fold);
            match &opt.option {
                ColumnOption::NotNull => col.nullable = false,
                ColumnOption::Null => col.nullable = true,
                ColumnOption::Default(expr) => col.default = Some(expr.to_string()),
                ColumnOption::PrimaryKey(_) => {
                    table.primary_key = vec![name.clone()];
                    col.nullable = false;
                }
                ColumnOption::Unique(_) => table.unique_keys.push(UniqueKey {
                    name: constraint_name,
                    columns: vec![name.clone()],
                }),
                ColumnOption::ForeignKey(fk) => {
                    let at = Self::span_location(file, st, def.name.span, loc);
                    table.foreign_keys.push(ForeignKey {
                        name: constraint_name.or_else(|| fk.name.as_ref().map(fold)),
                        columns: vec![name.clone()],
                        ref_table: qualified(&fk.foreign_table),
                        ref_columns: fk.referred_columns.iter().map(fold).collect(),
                        origin: FkOrigin::Declared,
                        location: Some(at),
                    });
                }
                ColumnOption::Generated {
                    generated_as,
                    generation_expr,
                    ..
                } => match generation_expr {
                    Some(expr) => col.generated = Some(expr.to_string()),
                    None => {
                        col.identity = Some(match generated_as {
                            GeneratedAs::ByDefault => Identity::ByDefault,
                            _ => Identity::Always,
                        });
                        col.nullable = false;
                    }
                },
                ColumnOption::Collation(name) => {
                    col.collation = Some(
                        name.0
                            .iter()
                            .filter_map(|p| p.as_ident())
                            .map(|i| i.value.clone())
                            .collect::<Vec<_>>()
                            .join("."),
                    )
                }
                ColumnOption::Check(_) => {
                    let at = Self::span_location(file, st, def.name.span, loc);
                    count_skip(&mut self.schema.skipped, "CHECK constraint", Some(at))
                }
                _ => {}
            }
        }
        table.columns.push(col);
    }

    fn add_constraint(
        &mut self,
        file: &str,
        st: &RawStatement<'_>,
        loc: &Location,
        table: &mut Table,
        c: &TableConstraint,
    ) {
        match c {
            TableConstraint::PrimaryKey(pk) => {
                table.primary_key = key_columns(&pk.columns);
                for name in &table.primary_key {
                    if let Some(col) = table.columns.iter_mut().find(|c| &c.name == name) {
                        col.nullable = false;
                    }
                }
            }
            TableConstraint::Unique(u) => {
                table.unique_keys.push(UniqueKey {
                    name: u.name.as_ref().map(fold),
                    columns: key_columns(&u.columns),
                });
            }
            TableConstraint::ForeignKey(fk) => {
                let span = fk
                    .name
                    .as_ref()
                    .map(|n| n.span)
                    .or_else(|| fk.columns.first().map(|c| c.span));
                let at =
                    span.map_or_else(|| loc.clone(), |s| Self::span_location(file, st, s, loc));
                table.foreign_keys.push(ForeignKey {
                    name: fk.name.as_ref().map(fold),
                    columns: fk.columns.iter().map(fold).collect(),
                    ref_table: qualified(&fk.foreign_table),
                    ref_columns: fk.referred_columns.iter().map(fold).collect(),
                    origin: FkOrigin::Declared,
                    location: Some(at),
                });
            }
            TableConstraint::Check(c) => {
                let at = c.name.as_ref().map_or_else(
                    || loc.clone(),
                    |n| Self::span_location(file, st, n.span, loc),
                );
                count_skip(&mut self.schema.skipped, "CHECK constraint", Some(at))
            }
            TableConstraint::Exclude(_) => count_skip(
                &mut self.schema.skipped,
                "EXCLUDE constraint",
                Some(loc.clone()),
            ),
            TableConstraint::PrimaryKeyUsingIndex(_) | TableConstraint::UniqueUsingIndex(_) => {
                count_skip(
                    &mut self.schema.skipped,
                    "constraint USING INDEX",
                    Some(loc.clone()),
                )
            }
            _ => count_skip(
                &mut self.schema.skipped,
                "other table constraint",
                Some(loc.clone()),
            ),
        }
    }

    /// `ALTER COLUMN name …` on the detached `table`: defaults, NOT NULL, the type, identity;
    /// other forms are counted as skipped.
    fn alter_column(
        &mut self,
        loc: &Location,
        table: &mut Table,
        name: &str,
        op: AlterColumnOperation,
    ) {
        match table.columns.iter_mut().find(|c| c.name == name) {
            None => self.warn(
                loc.clone(),
                format!(
                    "ALTER COLUMN on unknown column `{name}` of `{}`; ignored",
                    table.qualified_name()
                ),
            ),
            Some(col) => match op {
                AlterColumnOperation::SetDefault { value } => col.default = Some(value.to_string()),
                AlterColumnOperation::DropDefault => col.default = None,
                AlterColumnOperation::SetNotNull => col.nullable = false,
                AlterColumnOperation::DropNotNull => col.nullable = true,
                AlterColumnOperation::SetDataType { data_type, .. } => {
                    col.sql_type = type_string(&data_type)
                }
                AlterColumnOperation::AddGenerated { generated_as, .. } => {
                    col.identity = Some(match generated_as {
                        Some(GeneratedAs::ByDefault) => Identity::ByDefault,
                        _ => Identity::Always,
                    });
                    col.nullable = false;
                }
                other => {
                    let kind = format!(
                        "ALTER TABLE ALTER COLUMN {}",
                        op_name(&format!("{other:?}"))
                    );
                    count_skip(&mut self.schema.skipped, &kind, Some(loc.clone()));
                }
            },
        }
    }

    fn alter_table_op(
        &mut self,
        file: &str,
        st: &RawStatement<'_>,
        loc: &Location,
        ti: usize,
        op: AlterTableOperation,
    ) {
        // Work on a detached copy so helper methods can borrow `self` mutably.
        let mut table = std::mem::take(&mut self.schema.tables[ti]);
        let old_name = table.name.clone();
        match op {
            AlterTableOperation::AddConstraint { constraint, .. } => {
                self.add_constraint(file, st, loc, &mut table, &constraint)
            }
            AlterTableOperation::AddColumn { column_def, .. } => {
                self.add_column(file, st, loc, &mut table, &column_def)
            }
            AlterTableOperation::AlterColumn { column_name, op } => {
                self.alter_column(loc, &mut table, &fold(&column_name), op)
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for id in &column_names {
                    self.drop_column(loc, &mut table, &fold(id), if_exists);
                }
            }
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (fold(&old_column_name), fold(&new_column_name));
                if self.rename_column(loc, &mut table, &old, &new) {
                    let named = table.clone();
                    self.retarget_foreign_keys(&named, &mut table, ti, |fk| {
                        for c in &mut fk.ref_columns {
                            if *c == old {
                                c.clone_from(&new);
                            }
                        }
                    });
                }
            }
            AlterTableOperation::RenameTable { table_name } => {
                let (RenameTableNameKind::As(name) | RenameTableNameKind::To(name)) = table_name;
                // `RENAME TO` takes a bare name: the table stays in its schema.
                let new = table_key(&name).1;
                let old_qualified = table.qualified_name();
                let before = table.clone();
                table.name = new;
                let new_qualified = table.qualified_name();
                self.retarget_foreign_keys(&before, &mut table, ti, |fk| {
                    fk.ref_table.clone_from(&new_qualified)
                });
                self.note(
                    loc.clone(),
                    format!("ALTER TABLE renames `{old_qualified}` to `{new_qualified}`"),
                );
            }
            AlterTableOperation::AttachPartitionOf { partition, .. } => {
                self.partitions.push(PartitionLink {
                    child: table_key(&partition),
                    parent: (table.schema.clone(), table.name.clone()),
                    location: loc.clone(),
                });
            }
            other => {
                let kind = format!("ALTER TABLE {}", op_name(&format!("{other:?}")));
                count_skip(&mut self.schema.skipped, &kind, Some(loc.clone()));
            }
        }
        let renamed = old_name != table.name;
        self.schema.tables[ti] = table;
        if renamed {
            self.reindex();
        }
    }

    /// `DROP COLUMN`: the column goes, and with it every key and index that uses it (as
    /// Postgres drops them).
    fn drop_column(&mut self, loc: &Location, table: &mut Table, name: &str, if_exists: bool) {
        let Some(at) = table.columns.iter().position(|c| c.name == name) else {
            if !if_exists {
                self.warn(
                    loc.clone(),
                    format!(
                        "DROP COLUMN of unknown column `{name}` of `{}`; ignored",
                        table.qualified_name()
                    ),
                );
            }
            return;
        };
        table.columns.remove(at);
        let uses = |cols: &[String]| cols.iter().any(|c| c == name);
        if uses(&table.primary_key) {
            table.primary_key.clear();
        }
        table.unique_keys.retain(|u| !uses(&u.columns));
        table.foreign_keys.retain(|fk| !uses(&fk.columns));
        table.indexes.retain(|i| {
            !i.keys
                .iter()
                .any(|k| matches!(k, IndexKey::Column { name: n, .. } if n == name))
        });
    }

    /// `RENAME COLUMN`: the column and every key and index naming it. False when there is no
    /// such column (reported).
    fn rename_column(&mut self, loc: &Location, table: &mut Table, old: &str, new: &str) -> bool {
        let Some(col) = table.columns.iter_mut().find(|c| c.name == old) else {
            self.warn(
                loc.clone(),
                format!(
                    "RENAME COLUMN of unknown column `{old}` of `{}`; ignored",
                    table.qualified_name()
                ),
            );
            return false;
        };
        col.name = new.to_string();
        let rename = |cols: &mut Vec<String>| {
            for c in cols.iter_mut().filter(|c| *c == old) {
                *c = new.to_string();
            }
        };
        rename(&mut table.primary_key);
        table
            .unique_keys
            .iter_mut()
            .for_each(|u| rename(&mut u.columns));
        table
            .foreign_keys
            .iter_mut()
            .for_each(|fk| rename(&mut fk.columns));
        for key in table.indexes.iter_mut().flat_map(|i| i.keys.iter_mut()) {
            if let IndexKey::Column { name, .. } = key {
                if name == old {
                    *name = new.to_string();
                }
            }
        }
        true
    }

    /// Applies `change` to every foreign key that references the table named as in `before`: those
    /// of the other tables and those of `own`, the table itself (detached from its slot `ti`).
    fn retarget_foreign_keys(
        &mut self,
        before: &Table,
        own: &mut Table,
        ti: usize,
        change: impl Fn(&mut ForeignKey),
    ) {
        let refers = |ref_table: &str| {
            let mut p: Vec<&str> = ref_table.split('.').collect();
            let name = p.pop().unwrap_or_default();
            names_table(before, p.pop(), name)
        };
        let others = self
            .schema
            .tables
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| *i != ti)
            .map(|(_, t)| t);
        for t in others.chain(std::iter::once(own)) {
            for fk in t.foreign_keys.iter_mut().filter(|fk| refers(&fk.ref_table)) {
                change(fk);
            }
        }
    }

    fn create_index(&mut self, loc: Location, ci: CreateIndex) {
        let Some(ti) = self.target_table(&ci.table_name, "CREATE INDEX", &loc) else {
            return;
        };
        let keys: Vec<IndexKey> = ci
            .columns
            .iter()
            .map(|c| match column_of(&c.column.expr) {
                Some(name) => IndexKey::Column {
                    name,
                    desc: matches!(c.column.options.sort, Some(OrderBySort::Desc)),
                },
                None => IndexKey::Expression {
                    sql: c.column.expr.to_string(),
                },
            })
            .collect();
        let plain: Option<Vec<String>> = keys
            .iter()
            .map(|k| match k {
                IndexKey::Column { name, .. } => Some(name.clone()),
                IndexKey::Expression { .. } => None,
            })
            .collect();
        let name = ci
            .name
            .as_ref()
            .map(|n| parts(n).pop().unwrap_or_default())
            .unwrap_or_default();
        let table = &mut self.schema.tables[ti];
        // A unique index on plain columns without a predicate is a unique key like a constraint.
        if ci.unique && ci.predicate.is_none() {
            if let Some(columns) = plain {
                if !table.is_unique_on(&columns) {
                    table.unique_keys.push(UniqueKey {
                        name: Some(name.clone()),
                        columns,
                    });
                }
            }
        }
        table.indexes.push(Index {
            name,
            unique: ci.unique,
            method: ci.using.as_ref().map(|u| u.to_string().to_lowercase()),
            keys,
            predicate: ci.predicate.as_ref().map(|p| p.to_string()),
            location: Some(loc),
        });
    }

    fn comment(
        &mut self,
        loc: Location,
        object: CommentObject,
        name: &ObjectName,
        comment: Option<String>,
    ) {
        match object {
            CommentObject::Table => {
                if let Some(ti) = self.target_table(name, "COMMENT ON TABLE", &loc) {
                    self.schema.tables[ti].comment = comment;
                }
            }
            CommentObject::Column => {
                let mut p = parts(name);
                let Some(column) = p.pop() else { return };
                let table_name = ObjectName(
                    p.into_iter()
                        .map(|s| ObjectNamePart::Identifier(Ident::with_quote('"', s)))
                        .collect(),
                );
                if let Some(ti) = self.target_table(&table_name, "COMMENT ON COLUMN", &loc) {
                    match self.schema.tables[ti]
                        .columns
                        .iter_mut()
                        .find(|c| c.name == column)
                    {
                        Some(col) => col.comment = comment,
                        None => self.warn(
                            loc,
                            format!("COMMENT ON COLUMN for unknown column `{column}`; ignored"),
                        ),
                    }
                }
            }
            other => count_skip(
                &mut self.schema.skipped,
                &format!("COMMENT ON {other:?}").to_uppercase(),
                Some(loc),
            ),
        }
    }

    pub(super) fn sequence_owned_by(
        &mut self,
        seq: &ObjectName,
        owner: Option<&ObjectName>,
        loc: Location,
    ) {
        let name = qualified(seq);
        let owned_by = owner.map(qualified);
        match self.schema.sequences.iter_mut().find(|s| s.name == name) {
            Some(s) => s.owned_by = owned_by,
            None => self.schema.sequences.push(Sequence {
                name,
                owned_by,
                location: Some(loc),
            }),
        }
    }

    /// Resolves what needs the whole input: serial columns, partitions, foreign keys without a
    /// column list.
    pub(super) fn finish(mut self) -> super::DdlLoad {
        resolve_domains(&mut self.schema);
        self.mark_serials();
        self.inherit_columns();
        self.fold_partitions();
        self.resolve_foreign_keys();
        // A default or generated expression that cannot be stated keeps its text only.
        let _untyped = crate::typed_expr::schema::fill_schema(&mut self.schema);
        super::DdlLoad {
            schema: self.schema,
            diagnostics: self.diagnostics,
            statements: self.statements,
        }
    }

    /// An inheritance child has its parents' columns first, then its own (as in Postgres; keys
    /// and indexes are not inherited). Parents are resolved depth-first, bounded for bad input.
    fn inherit_columns(&mut self) {
        fn columns_of(tables: &[Table], name: &str, depth: usize) -> Vec<Column> {
            let mut p: Vec<&str> = name.split('.').collect();
            let table = p.pop().unwrap_or_default();
            let schema = p.pop();
            let Some(t) = tables.iter().find(|t| names_table(t, schema, table)) else {
                return Vec::new();
            };
            let mut cols = Vec::new();
            if depth < 16 {
                for parent in &t.inherits {
                    for c in columns_of(tables, parent, depth + 1) {
                        if !cols.iter().any(|k: &Column| k.name == c.name) {
                            cols.push(c);
                        }
                    }
                }
            }
            for c in &t.columns {
                if !cols.iter().any(|k: &Column| k.name == c.name) {
                    cols.push(c.clone());
                }
            }
            cols
        }
        let children: Vec<usize> = (0..self.schema.tables.len())
            .filter(|&i| !self.schema.tables[i].inherits.is_empty())
            .collect();
        for i in children {
            let name = self.schema.tables[i].qualified_name();
            let cols = columns_of(&self.schema.tables, &name, 0);
            self.schema.tables[i].columns = cols;
        }
    }

    /// A column whose default draws from a sequence (`nextval(…)`) is a serial column, whether or
    /// not the sequence is `OWNED BY` it (pg_dump writes `OWNED BY` for `serial` columns; schemas
    /// such as Pagila create the sequence by hand): either way the database generates the key.
    fn mark_serials(&mut self) {
        for col in self
            .schema
            .tables
            .iter_mut()
            .flat_map(|t| t.columns.iter_mut())
        {
            let from_sequence = col.default.as_deref().is_some_and(|d| {
                d.get(..8)
                    .is_some_and(|p| p.eq_ignore_ascii_case("nextval("))
            });
            if from_sequence && col.identity.is_none() {
                col.identity = Some(Identity::Serial);
            }
        }
    }

    /// Partitions are not entities: each is removed and named in its root table's `partitions`.
    /// Foreign keys declared on partitions duplicate the parent's; when the parent itself lacks
    /// one (pg_dump of a table partitioned after the fact), it is kept once on the parent as
    /// `Inferred`, with the partitions as evidence, so the relationship is not lost and declared
    /// counts stay those of the DDL.
    fn fold_partitions(&mut self) {
        let links = std::mem::take(&mut self.partitions);
        let root_of = |mut key: (Option<String>, String)| {
            // Follow sub-partitions up to the root (bounded in case of a cycle in bad input).
            for _ in 0..links.len() {
                match links.iter().find(|l| l.child == key) {
                    Some(l) => key = l.parent.clone(),
                    None => break,
                }
            }
            key
        };
        // Per root: (partitions folded, FK declarations seen, indexes dropped, FKs lifted with the
        // partitions declaring each).
        struct Folded {
            root: (Option<String>, String),
            location: Location,
            partitions: usize,
            fk_declarations: usize,
            indexes: usize,
            lifted: Vec<(ForeignKey, Vec<String>)>,
        }
        let mut folded: Vec<Folded> = Vec::new();
        for link in &links {
            let root = root_of(link.child.clone());
            let Some(ci) = self.find_table(&link.child) else {
                let msg = format!(
                    "partition `{}` of `{}` is not defined; ignored",
                    link.child.1, link.parent.1
                );
                self.warn(link.location.clone(), msg);
                continue;
            };
            if root == link.child || self.find_table(&root).is_none() {
                let msg = format!(
                    "`{}` is a partition of `{}`, which is not defined; kept as a table",
                    link.child.1, root.1
                );
                self.warn(link.location.clone(), msg);
                continue;
            }
            let child = self.remove_table(ci);
            let Some(pi) = self.find_table(&root) else {
                continue;
            };
            let child_name = child.qualified_name();
            self.schema.tables[pi].partitions.push(child_name.clone());
            let entry = match folded.iter().position(|f| f.root == root) {
                Some(i) => &mut folded[i],
                None => {
                    folded.push(Folded {
                        root: root.clone(),
                        location: link.location.clone(),
                        partitions: 0,
                        fk_declarations: 0,
                        indexes: 0,
                        lifted: Vec::new(),
                    });
                    let last = folded.len() - 1;
                    &mut folded[last]
                }
            };
            entry.partitions += 1;
            entry.indexes += child.indexes.len();
            for fk in child.foreign_keys {
                entry.fk_declarations += 1;
                let same = |other: &ForeignKey| {
                    other.columns == fk.columns
                        && other.ref_table == fk.ref_table
                        && other.ref_columns == fk.ref_columns
                };
                if self.schema.tables[pi].foreign_keys.iter().any(same) {
                    continue;
                }
                match entry.lifted.iter_mut().find(|(l, _)| same(l)) {
                    Some((_, on)) => on.push(child_name.clone()),
                    None => entry.lifted.push((fk, vec![child_name.clone()])),
                }
            }
        }
        for f in folded {
            let Some(pi) = self.find_table(&f.root) else {
                continue;
            };
            let lifted = f.lifted.len();
            for (mut fk, on) in f.lifted {
                fk.origin = FkOrigin::from_partitions(&on, f.partitions);
                self.schema.tables[pi].foreign_keys.push(fk);
            }
            let parent = self.schema.tables[pi].qualified_name();
            self.note(
                f.location,
                format!(
                    "`{parent}`: {} partition(s) folded in ({} foreign-key declaration(s) on partitions, {lifted} kept on the parent as inferred; {} partition index(es) dropped)",
                    f.partitions, f.fk_declarations, f.indexes
                ),
            );
        }
    }

    /// Fills `ref_columns` of foreign keys written `REFERENCES t` with `t`'s primary key.
    fn resolve_foreign_keys(&mut self) {
        let mut warnings = Vec::new();
        let pk_of = |name: &str, tables: &[Table]| {
            let mut p: Vec<&str> = name.split('.').collect();
            let table = p.pop().unwrap_or_default();
            let schema = p.pop();
            tables
                .iter()
                .find(|t| names_table(t, schema, table))
                .map(|t| t.primary_key.clone())
        };
        let pks: Vec<Vec<Option<Vec<String>>>> = self
            .schema
            .tables
            .iter()
            .map(|t| {
                t.foreign_keys
                    .iter()
                    .map(|fk| pk_of(&fk.ref_table, &self.schema.tables))
                    .collect()
            })
            .collect();
        for (t, fk_pks) in self.schema.tables.iter_mut().zip(pks) {
            for (fk, pk) in t.foreign_keys.iter_mut().zip(fk_pks) {
                match pk {
                    None => warnings.push((
                        fk.location.clone(),
                        format!(
                            "foreign key of `{}` references `{}`, which is not defined",
                            t.name, fk.ref_table
                        ),
                    )),
                    Some(pk) if fk.ref_columns.is_empty() => {
                        if pk.is_empty() {
                            warnings.push((
                                fk.location.clone(),
                                format!(
                                    "foreign key of `{}` references `{}` without a column list, but it has no primary key",
                                    t.name, fk.ref_table
                                ),
                            ));
                        } else {
                            fk.ref_columns = pk;
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        for (loc, message) in warnings {
            self.diagnostics.push(remodel_model::Diagnostic {
                severity: remodel_model::Severity::Warning,
                location: loc,
                message,
            });
        }
    }
}

/// `PARTITION BY RANGE (a, lower(b))`, which `sqlparser` parses as a call `RANGE(a, lower(b))`.
fn partition_spec(by: &Expr) -> PartitionSpec {
    match by {
        Expr::Function(f) => {
            let keys = match &f.args {
                FunctionArguments::List(list) => list.args.iter().map(|a| a.to_string()).collect(),
                _ => Vec::new(),
            };
            PartitionSpec {
                strategy: f.name.to_string().to_lowercase(),
                keys,
            }
        }
        other => PartitionSpec {
            strategy: "unknown".into(),
            keys: vec![other.to_string()],
        },
    }
}

/// An AST variant's name in upper-case words, from its `Debug` text
/// (`SetStatistics { .. }` → `SET STATISTICS`).
pub(super) fn op_name(debug: &str) -> String {
    let variant: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut out = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
