//! The relational source schema: tables, columns, keys, indexes, types.

use crate::diagnostic::{Location, SkipCount};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The whole relational schema, as loaded from one or more DDL files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Schema {
    /// Tables (partitions of a partitioned table are folded into their parent).
    pub tables: Vec<Table>,
    /// Enum types (`CREATE TYPE … AS ENUM`).
    #[serde(default)]
    pub enums: Vec<EnumType>,
    /// Sequences (`CREATE SEQUENCE`), with the column that owns each where known.
    #[serde(default)]
    pub sequences: Vec<Sequence>,
    /// Domains (`CREATE DOMAIN`): a column declared with one has its base type as `sql_type`
    /// (what Postgres sends and compares) and the domain's name in `domain`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<DomainType>,
    /// Functions the schema defines (`CREATE FUNCTION`; their bodies are not modelled): a read
    /// that calls one depends on what it reads and returns, which the plan cannot state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionDef>,
    /// Statements that were read but not modelled, counted by kind.
    #[serde(default)]
    pub skipped: Vec<SkipCount>,
    /// The database's default collation (`en_US.UTF-8`, an ICU locale `en-US`, `C`), when known:
    /// a live source says it; a schema file does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// Column pairs the data shows are no foreign key (values the referenced key lacks):
    /// inference from naming leaves them alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected_keys: Vec<RejectedKey>,
}

/// A foreign key that naming suggests and the data refutes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RejectedKey {
    /// The table holding the columns.
    pub table: String,
    /// Its columns.
    pub columns: Vec<String>,
    /// The table the naming points to.
    pub ref_table: String,
    /// Its key columns.
    pub ref_columns: Vec<String>,
    /// What the data showed (sample size, values not found).
    pub evidence: String,
}

impl Schema {
    /// The rejection of `table(columns) -> ref_table`, if the data refuted it (names compared
    /// case-insensitively, bare or qualified).
    pub fn rejected_key(
        &self,
        table: &str,
        columns: &[String],
        ref_table: &str,
    ) -> Option<&RejectedKey> {
        let bare = |n: &str| n.rsplit('.').next().unwrap_or(n).to_ascii_lowercase();
        self.rejected_keys.iter().find(|r| {
            bare(&r.table) == bare(table)
                && bare(&r.ref_table) == bare(ref_table)
                && r.columns.len() == columns.len()
                && r.columns
                    .iter()
                    .zip(columns)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        })
    }
}

impl Schema {
    /// Finds a table by the name the plan knows it by ([`Table::key`]: `users`, `auth.users`);
    /// `public.users` is `users`. Names are exact: Postgres folds unquoted identifiers when it
    /// reads them (the front ends do the same), so `"Users"` and `users` are two tables, and an
    /// unqualified name is a table of `public` only (the analyzer resolves a statement's names
    /// by its search path first).
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.position(name).and_then(|i| self.tables.get(i))
    }

    /// Mutable variant of [`Schema::table`].
    pub fn table_mut(&mut self, name: &str) -> Option<&mut Table> {
        self.position(name).and_then(|i| self.tables.get_mut(i))
    }

    fn position(&self, name: &str) -> Option<usize> {
        let key = name.strip_prefix("public.").unwrap_or(name);
        self.tables.iter().position(|t| t.has_key(key))
    }

    /// The table `name` in Postgres schema `schema` (`None` or `public`: the default schema).
    pub fn table_in(&self, schema: Option<&str>, name: &str) -> Option<&Table> {
        let public = |s: Option<&str>| s.is_none_or(|s| s == "public");
        self.tables.iter().find(|t| {
            t.name == name
                && (t.schema.as_deref() == schema
                    || (public(t.schema.as_deref()) && public(schema)))
        })
    }

    /// All foreign keys of all tables, with the table that holds each.
    pub fn foreign_keys(&self) -> impl Iterator<Item = (&Table, &ForeignKey)> {
        self.tables
            .iter()
            .flat_map(|t| t.foreign_keys.iter().map(move |fk| (t, fk)))
    }
}

/// A schema's tables by [`Table::key`], for lookups inside loops: [`Schema::table`] scans the
/// tables, which a pass over the 20,000 foreign keys of 20,000 tables cannot afford.
#[derive(Debug, Clone)]
pub struct TableIndex<'a> {
    schema: &'a Schema,
    by_key: HashMap<String, usize>,
}

impl<'a> TableIndex<'a> {
    /// Indexes the tables of `schema` (the first of two tables with one key wins, as in
    /// [`Schema::table`]).
    pub fn new(schema: &'a Schema) -> Self {
        let mut by_key = HashMap::with_capacity(schema.tables.len());
        for (i, t) in schema.tables.iter().enumerate() {
            by_key.entry(t.key()).or_insert(i);
        }
        TableIndex { schema, by_key }
    }

    /// The indexed schema.
    pub fn schema(&self) -> &'a Schema {
        self.schema
    }

    /// [`Schema::table`], by hash.
    pub fn table(&self, name: &str) -> Option<&'a Table> {
        self.position(name).map(|i| &self.schema.tables[i])
    }

    /// Where [`TableIndex::table`] is in `schema.tables`.
    pub fn position(&self, name: &str) -> Option<usize> {
        let key = name.strip_prefix("public.").unwrap_or(name);
        self.by_key.get(key).copied()
    }
}

/// One relational table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Table {
    /// The Postgres schema (namespace), if the DDL named one (`public` is kept when written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The table name, unquoted, case as Postgres stores it (unquoted identifiers folded to lower case).
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<Column>,
    /// Primary key columns, in key order; empty when the table has none.
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// Unique constraints (and unique indexes on plain columns).
    #[serde(default)]
    pub unique_keys: Vec<UniqueKey>,
    /// Foreign keys, declared or inferred.
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKey>,
    /// Indexes.
    #[serde(default)]
    pub indexes: Vec<Index>,
    /// `PARTITION BY` of a partitioned table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_by: Option<PartitionSpec>,
    /// Names of the partitions folded into this table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
    /// Parents named in `INHERITS (…)`: an inheritance child stays a table of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherits: Vec<String>,
    /// `COMMENT ON TABLE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Where the `CREATE TABLE` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl Table {
    /// The name the plan knows the table by (in `ColumnRef::table`, `tables`, relationships,
    /// `entity`): its name, qualified when its Postgres schema is not `public` (`auth.users`
    /// beside `users`).
    pub fn key(&self) -> String {
        match self.schema.as_deref() {
            Some(s) if s != "public" => format!("{s}.{}", self.name),
            _ => self.name.clone(),
        }
    }

    /// The table as Postgres SQL names it: each part quoted where needed, qualified when its
    /// schema is known (the backfill, sync and replay read the same table; a name the dump gave
    /// unqualified is found along the connection's `search_path`).
    pub fn pg_name(&self) -> String {
        let quote = crate::ident::pg_quote;
        match self.schema.as_deref() {
            Some(s) => format!("{}.{}", quote(s), quote(&self.name)),
            None => quote(&self.name),
        }
    }

    /// True when [`Table::key`] is `key` (without building the key).
    pub fn has_key(&self, key: &str) -> bool {
        match self.schema.as_deref() {
            Some(s) if s != "public" => key
                .strip_prefix(s)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|name| name == self.name),
            _ => self.name == key,
        }
    }

    /// `schema.name` when a schema was named, else `name`.
    pub fn qualified_name(&self) -> String {
        match &self.schema {
            Some(s) => format!("{s}.{}", self.name),
            None => self.name.clone(),
        }
    }

    /// Finds a column by name, exactly (`"Name"` and `name` are two columns).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// True when `cols` (in any order) is exactly the primary key or a unique key.
    pub fn is_unique_on(&self, cols: &[String]) -> bool {
        let same = |key: &[String]| {
            !key.is_empty()
                && key.len() == cols.len()
                && key.iter().all(|k| cols.iter().any(|c| c == k))
        };
        same(&self.primary_key) || self.unique_keys.iter().any(|u| same(&u.columns))
    }
}

/// True for a Postgres timestamp type that keeps more than milliseconds (`timestamp`,
/// `timestamptz`, `timestamp(6) with time zone`; not `timestamp(3)`): CQL's `timestamp` keeps
/// milliseconds, so two such values apart by less are one CQL value.
pub fn sub_ms_timestamp(sql_type: &str) -> bool {
    let t = sql_type.trim().to_ascii_lowercase();
    let bare = t.rsplit('.').next().unwrap_or(&t).trim_matches('"');
    let Some(rest) = bare
        .strip_prefix("timestamptz")
        .or_else(|| bare.strip_prefix("timestamp"))
    else {
        return false;
    };
    let rest = rest.trim_start();
    let precision = rest
        .strip_prefix('(')
        .and_then(|r| r.split_once(')'))
        .and_then(|(p, _)| p.trim().parse::<u32>().ok());
    let tail = rest.split_once(')').map_or(rest, |(_, t)| t).trim();
    matches!(tail, "" | "with time zone" | "without time zone") && precision.is_none_or(|p| p > 3)
}

/// One column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Column {
    /// Column name.
    pub name: String,
    /// The SQL type as written, normalised to lower case (e.g. `numeric(3,2)`, `text[]`, `timestamptz`).
    pub sql_type: String,
    /// False when `NOT NULL` or part of the primary key.
    pub nullable: bool,
    /// The `DEFAULT` expression, as SQL text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Identity or serial generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// The expression of a generated column (`GENERATED ALWAYS AS (expr) STORED|VIRTUAL`): its
    /// values are computed by the database, not stored data to migrate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
    /// The `DEFAULT` as a typed expression (`now()` → `Now`, `gen_random_uuid()`, a constant);
    /// absent when it cannot be stated (a function of the source database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_expr: Option<crate::expr::Expr>,
    /// The generated column's expression, typed, over the row's other columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_expr: Option<crate::expr::Expr>,
    /// `COMMENT ON COLUMN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Where the column is declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// Set on a column the analyzer adds, which the source database does not have: the value
    /// of a function of one of the table's columns that the application looks rows up by
    /// (`lower(email) = lower($1)`; `email = $1` on a `citext` column, which compares
    /// case-insensitively). It is also stated as a generated column (`generated`,
    /// `generated_expr`), so every executor computes it from the row: the source query selects
    /// the function of the column, write paths compute it from the row's new values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Lookup>,
    /// The column's collation, when declared (`COLLATE "en-US-x-icu"`) or, from a live source,
    /// when it is not the database's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// The domain the column is declared with, when it is one (`sql_type` is then its base type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

/// True for a collation that orders text by its code points, as Cassandra orders UTF-8 text
/// (`C`, `POSIX`, `C.UTF-8`, `ucs_basic`, `pg_c_utf8`); every other (a libc locale such as
/// `en_US.UTF-8`, an ICU one) orders `adam, Banana, Émile, zoe` where the bytes give
/// `Banana, adam, zoe, Émile`.
pub fn bytewise_collation(name: &str) -> bool {
    let n = name.trim().trim_matches('"').to_ascii_lowercase();
    let n = n
        .rsplit('.')
        .next()
        .filter(|_| n.starts_with("pg_catalog."))
        .unwrap_or(&n);
    matches!(
        n,
        "c" | "posix" | "c.utf-8" | "c.utf8" | "ucs_basic" | "pg_c_utf8" | "default_c"
    )
}

/// A lookup column's value: a function of one column of its table, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lookup {
    /// The function (`lower`, `upper`, `trim`).
    pub function: crate::expr::Function,
    /// The column it is applied to (its text form: a `citext` value as text).
    pub column: String,
}

impl Lookup {
    /// The lookup column named for it (`lower_email`).
    pub fn name(&self) -> String {
        format!("{}_{}", self.function.name(), self.column)
    }

    /// The column added to `table` for it, named `name`: text, NULL where its column is.
    pub fn column(&self, table: &str, name: &str, nullable: bool) -> Column {
        let of = crate::expr::Expr::Cast {
            arg: Box::new(crate::expr::Expr::column(crate::ColumnRef::new(
                table,
                &self.column,
            ))),
            to: crate::expr::ScalarType::Text,
        };
        Column {
            name: name.to_string(),
            sql_type: "text".into(),
            nullable,
            generated: Some(format!(
                "{}(({})::text)",
                self.function.name(),
                crate::ident::pg_quote(&self.column)
            )),
            generated_expr: Some(crate::expr::Expr::Call {
                function: self.function,
                args: vec![of],
            }),
            comment: Some(format!(
                "added by remodel: {}({}) as the application looks rows up by it",
                self.function.name(),
                self.column
            )),
            lookup: Some(self.clone()),
            ..Column::default()
        }
    }
}

/// How a column's values are generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// `GENERATED ALWAYS AS IDENTITY`.
    Always,
    /// `GENERATED BY DEFAULT AS IDENTITY`.
    ByDefault,
    /// `serial`/`bigserial`, or a `nextval(…)` default (with or without a sequence `OWNED BY` the column).
    Serial,
}

/// A unique constraint or unique index on plain columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UniqueKey {
    /// Constraint or index name, when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Columns.
    pub columns: Vec<String>,
}

/// Whether a foreign key was written in the DDL or inferred by `remodel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FkOrigin {
    /// Declared in the DDL.
    Declared,
    /// Inferred; `evidence` says from what (join predicates, naming).
    Inferred {
        /// Human-readable evidence, e.g. `joined 3 times in the workload (items.seller = users.id)`.
        evidence: String,
    },
}

impl FkOrigin {
    /// A key declared on `on` (some) of a partitioned table's `partitions` partitions, kept on
    /// the table itself as inferred: the DDL reader and the catalog reader fold partitions alike.
    pub fn from_partitions(on: &[String], partitions: usize) -> FkOrigin {
        let shown: Vec<&str> = on.iter().take(3).map(String::as_str).collect();
        let more = if on.len() > 3 {
            format!(", … {} more", on.len() - 3)
        } else {
            String::new()
        };
        FkOrigin::Inferred {
            evidence: format!(
                "declared on {} of {partitions} partitions ({}{more}), not on the table itself",
                on.len(),
                shown.join(", ")
            ),
        }
    }
}

/// A foreign key from this table's `columns` to `ref_table`'s `ref_columns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ForeignKey {
    /// Constraint name, when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Referencing columns (in this table).
    pub columns: Vec<String>,
    /// Referenced table (as written, possibly schema-qualified).
    pub ref_table: String,
    /// Referenced columns; filled with the referenced primary key when the DDL omits the list.
    pub ref_columns: Vec<String>,
    /// Declared or inferred.
    pub origin: FkOrigin,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// One index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Index {
    /// Index name.
    pub name: String,
    /// `UNIQUE`.
    pub unique: bool,
    /// Access method (`btree`, `gin`, `gist`, …), when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Key parts, in order.
    pub keys: Vec<IndexKey>,
    /// The `WHERE` of a partial index, as SQL text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// One key part of an index: a plain column or an expression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum IndexKey {
    /// A plain column.
    Column {
        /// Column name.
        name: String,
        /// `DESC`.
        #[serde(default)]
        desc: bool,
    },
    /// An expression (e.g. `lower(email)`).
    Expression {
        /// The expression as SQL text.
        sql: String,
    },
}

/// `PARTITION BY strategy (columns)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PartitionSpec {
    /// `range`, `list` or `hash`.
    pub strategy: String,
    /// Partition key columns or expressions, as SQL text.
    pub keys: Vec<String>,
}

/// An enum type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnumType {
    /// Type name (possibly schema-qualified as written).
    pub name: String,
    /// Labels in order.
    pub values: Vec<String>,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// A function the schema defines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FunctionDef {
    /// Function name (possibly schema-qualified as written).
    pub name: String,
    /// The language of its body (`sql`, `plpgsql`), when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

impl Schema {
    /// The function the schema defines under `name` (qualified or bare), if any.
    pub fn function(&self, name: &str) -> Option<&FunctionDef> {
        let bare = |n: &str| n.rsplit('.').next().unwrap_or(n).to_ascii_lowercase();
        self.functions
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name) || bare(&f.name) == bare(name))
    }
}

/// A domain: a base type with constraints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DomainType {
    /// Domain name (possibly schema-qualified as written).
    pub name: String,
    /// Its base type as written (itself a domain's name, resolved in turn).
    pub base: String,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// A sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sequence {
    /// Sequence name.
    pub name: String,
    /// `OWNED BY table.column`, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
    /// Where it was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_keep_microseconds_unless_declared_with_milliseconds() {
        for t in [
            "timestamp",
            "timestamptz",
            "timestamp with time zone",
            "timestamp(6) without time zone",
            "timestamptz(4)",
        ] {
            assert!(sub_ms_timestamp(t), "{t}");
        }
        for t in [
            "timestamp(3) with time zone",
            "timestamptz(0)",
            "date",
            "time",
            "text",
        ] {
            assert!(!sub_ms_timestamp(t), "{t}");
        }
    }

    #[test]
    fn the_index_finds_what_the_scan_finds() {
        let table = |schema: Option<&str>, name: &str| Table {
            schema: schema.map(str::to_string),
            name: name.into(),
            ..Table::default()
        };
        let schema = Schema {
            tables: vec![
                table(None, "users"),
                table(Some("auth"), "users"),
                table(Some("public"), "orders"),
                table(Some("auth"), "users"),
                table(None, "Users"),
            ],
            ..Schema::default()
        };
        let index = TableIndex::new(&schema);
        for name in [
            "users",
            "public.users",
            "auth.users",
            "orders",
            "public.orders",
            "Users",
            "auth",
            "auth.",
            ".users",
            "authusers",
            "auth.users.x",
            "",
        ] {
            assert_eq!(index.position(name), schema.position(name), "{name}");
            assert_eq!(index.table(name), schema.table(name), "{name}");
        }
        assert_eq!(index.position("auth.users"), Some(1));
        assert!(schema.tables[1].has_key("auth.users") && !schema.tables[1].has_key("users"));
        assert!(schema.tables[2].has_key("orders") && !schema.tables[2].has_key("public.orders"));
    }
}
