//! The Postgres query whose rows fill a target table, as data (`design.tables[].source`).
//!
//! The designer states it typed — the driving table and its alias, the joins with their keys,
//! each output column's value, the filters — and every executor builds its SQL from it with
//! [`SourceSql::sql`], the one renderer: the designer's `source_sql` text, the backfill's
//! ranges (a predicate on the driving table) and samples (a `TABLESAMPLE`), sync's rows of one
//! changed row (the driving table replaced by that row), the Spark job's ctid column. Nobody reads
//! the SQL text back: what an executor needs to know (which table drives, whether it can be cut
//! into ranges) is a field here.

use crate::bucket::Bucket;
use crate::design::{EncodedForm, Encoding};
use crate::ident;
use crate::schema::Schema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The column the numbered driving table gives each row's id as (see [`SourceQuery::numbered`]).
pub const ROW_ID_SOURCE: &str = "__remodel_row_id";

/// The SQL expression of the id of each row of a table without a key, over the table aliased
/// `alias`: the hash of the row's binary form (no session setting changes it) and its number
/// among equal rows. Equal rows are interchangeable, so the set of ids a table's rows get is
/// the same in every read, whatever order the rows come in: every target table holding a
/// copy of a row, and a resumed backfill, find the same ids.
pub fn row_id_sql(alias: &str) -> String {
    format!(
        "md5(record_send({alias}) || int8send(row_number() OVER (PARTITION BY record_send({alias}))))::uuid"
    )
}

/// The exact microseconds since the epoch of timestamp SQL `col` (`infinity` as the largest
/// bigint, `-infinity` as the smallest, as Postgres stores them).
pub fn epoch_micros_sql(col: &str) -> String {
    encoded_sql(Encoding::EpochMicros, col)
}

/// What a column with `encoding` stores for timestamp, integer or date SQL `col`, NULL and
/// `±infinity` where [`Encoding::store`] puts them (the same text as every writer's bind).
pub fn encoded_sql(encoding: Encoding, col: &str) -> String {
    let plain = match encoding.form() {
        EncodedForm::Micros => format!("(extract(epoch FROM {col}) * 1000000)::bigint"),
        EncodedForm::Integer => format!("({col})::bigint"),
        EncodedForm::Days => format!("({col} - DATE '1970-01-01')::bigint"),
    };
    let stored = |v: Option<i64>| {
        encoding
            .store(v)
            .map_or("NULL".to_string(), |v| v.to_string())
    };
    let null = match encoding.nulls() {
        Some(_) => format!("WHEN {col} IS NULL THEN {} ", stored(None)),
        None => String::new(),
    };
    if encoding.form() == EncodedForm::Integer {
        return format!("CASE {null}ELSE {plain} END");
    }
    format!(
        "CASE {null}WHEN {col} = 'infinity' THEN {} WHEN {col} = '-infinity' THEN {} ELSE {plain} END",
        stored(Some(i64::MAX)),
        stored(Some(i64::MIN))
    )
}

/// The query that fills one target table: one result row per target row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceQuery {
    /// The driving table (its key in `schema.tables`): each target row comes from one of its rows.
    pub table: String,
    /// The driving table's alias, which joins, columns and filters name it by.
    pub alias: String,
    /// True when the driving table has no key and its rows are numbered into ids (a
    /// `row_id` value): the numbering needs every row, so the query is read whole, never cut
    /// into ranges, and a single changed row cannot be put in the table's place.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numbered: bool,
    /// Tables joined to the driving table, in order (each joins tables named before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joins: Vec<SourceJoin>,
    /// The result columns, named as the target table's columns.
    pub columns: Vec<SourceColumn>,
    /// Conditions every row read meets (all of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<SourceFilter>,
    /// A counter table's groups (`GROUP BY`): one result row per group of the rows read, its
    /// `count`/`sum` columns over them. Any range of the driving table gives each group's part,
    /// and the parts add up (a counter is only ever added to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<SourceRef>,
}

/// A column of a table of the query, by the table's alias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceRef {
    /// The alias of the table (the driving table's, a join's).
    pub alias: String,
    /// The column.
    pub column: String,
}

/// One table joined in: `[LEFT] JOIN table alias ON alias.column = other.column AND …`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceJoin {
    /// The joined table (its key in `schema.tables`).
    pub table: String,
    /// Its alias.
    pub alias: String,
    /// True for a LEFT JOIN: a row without a match is kept, the joined columns NULL.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outer: bool,
    /// The equalities it joins on, all of them.
    pub on: Vec<JoinKey>,
}

/// One equality of a join: a column of the joined table equals a column of a table before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JoinKey {
    /// The joined table's column.
    pub column: String,
    /// The column it equals, of a table named before.
    pub equals: SourceRef,
}

/// One result column of the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceColumn {
    /// The target column it fills.
    pub name: String,
    /// What it holds.
    pub value: SourceValue,
}

/// What a result column holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceValue {
    /// A column's value as it is.
    Column(SourceRef),
    /// A timestamp column as exact microseconds since the epoch ([`epoch_micros_sql`];
    /// `Encoding::EpochMicros`).
    EpochMicros(SourceRef),
    /// The same, NULL stored as the largest bigint and `infinity` one below
    /// (`Encoding::EpochMicrosNullLast`, [`encoded_sql`]).
    EpochMicrosNullLast(SourceRef),
    /// A key column's value as a bigint that stores NULL ([`Encoding::stores_null`], but
    /// `EpochMicrosNullLast` above), [`encoded_sql`].
    Encoded {
        /// The column.
        column: SourceRef,
        /// The target column's encoding.
        encoding: Encoding,
    },
    /// The time bucket a column's value falls in ([`Bucket::pg_sql`]).
    Bucket {
        /// The column.
        column: SourceRef,
        /// The bucket's width.
        bucket: Bucket,
        /// True when the column is a `timestamptz`; a `timestamp` or `date` is read as its wall
        /// clock in UTC (how the backfill stores it). [`Bucket::pg_sql_of`] cuts either.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        at_utc: bool,
        /// The time zone whose calendar cuts the buckets (the key column's `time_zone`); UTC
        /// when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time_zone: Option<String>,
    },
    /// A lookup column's value: a function of a column's text form (`lower(t0."email"::text)`,
    /// [`crate::schema::Lookup`]).
    Lookup {
        /// The function (`lower`, `upper`, `trim`).
        function: crate::expr::Function,
        /// The column.
        column: SourceRef,
    },
    /// A text constant (the one partition of a small table read whole).
    Constant {
        /// The value.
        value: String,
    },
    /// The numbered driving table's row id ([`row_id_sql`], [`SourceQuery::numbered`]).
    RowId,
    /// NULL (a column with no source in the query).
    Null,
    /// The number of rows of the group (`count(*)`, a `bigint`).
    Count,
    /// The sum of a column over the group's rows, as a `bigint`.
    Sum(SourceRef),
    /// The driving row's children of an embedded one-to-many, aggregated as JSON.
    Collection(SourceCollection),
}

/// An embedded one-to-many's children of the driving row, aggregated per row in a LATERAL
/// subquery: a JSON object keyed by `map_key` (a map) or a JSON array in `order` (a list), each
/// entry an object of `fields`; NULL when the row has none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceCollection {
    /// The child table (its key in `schema.tables`).
    pub table: String,
    /// The LATERAL subquery's alias.
    pub alias: String,
    /// The child's columns and the parent columns they equal (the foreign key).
    pub on: Vec<JoinKey>,
    /// For a map: the child column keying it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_key: Option<String>,
    /// The child columns of each entry (the entry type's field names).
    pub fields: Vec<String>,
    /// For a list: the child columns ordering its entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
}

/// A condition on the rows read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceFilter {
    /// The column is NULL.
    IsNull(SourceRef),
    /// The column is not NULL (a counter's group: a row without one belongs to no group a read
    /// can ask for, and a NULL cannot be a partition key).
    IsNotNull(SourceRef),
}

/// Changes an executor makes to the query it renders ([`SourceSql::sql`]); the default renders
/// the query as the plan states it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SourceEdit<'a> {
    /// A derived table standing in the driving table's place, aliased as it (sync: the one row a
    /// change gave, `(SELECT …)`).
    pub driving: Option<&'a str>,
    /// A clause right after the driving table's alias (`TABLESAMPLE SYSTEM (1)`).
    pub sample: Option<&'a str>,
    /// A condition AND-ed to the filters (a ctid range on the driving table's alias).
    pub predicate: Option<&'a str>,
    /// A result column put first (`t0.ctid AS __remodel_ctid`).
    pub first_column: Option<&'a str>,
}

/// A table of the schema as Postgres SQL: schema-qualified when its schema is known, each part
/// quoted as needed; a table the schema does not hold is its key, quoted.
pub fn pg_table(schema: &Schema, key: &str) -> String {
    match schema.table(key) {
        Some(t) => t.pg_name(),
        None => ident::pg_quote(key),
    }
}

impl SourceRef {
    /// A column of the table aliased `alias`.
    pub fn new(alias: impl Into<String>, column: impl Into<String>) -> Self {
        SourceRef {
            alias: alias.into(),
            column: column.into(),
        }
    }

    /// `alias.column`.
    pub fn sql(&self) -> String {
        format!("{}.{}", self.alias, ident::pg_quote(&self.column))
    }
}

impl SourceQuery {
    /// True when the query can be cut into ranges of its driving table's rows, each read with
    /// a predicate on them ([`SourceEdit::predicate`]), and when one row can stand in the driving
    /// table's place ([`SourceEdit::driving`]).
    pub fn splittable(&self) -> bool {
        !self.numbered
    }

    /// The table (its key) the query names `alias`: the driving table or a joined one.
    pub fn table_of(&self, alias: &str) -> Option<&str> {
        if alias == self.alias {
            return Some(&self.table);
        }
        self.joins
            .iter()
            .find(|j| j.alias == alias)
            .map(|j| j.table.as_str())
    }

    /// The column result column `name` is read from: as it is, as epoch microseconds, or
    /// bucketed (`None` for a computed or constant column).
    pub fn read_column(&self, name: &str) -> Option<&SourceRef> {
        match &self.columns.iter().find(|c| c.name == name)?.value {
            SourceValue::Column(r)
            | SourceValue::EpochMicros(r)
            | SourceValue::EpochMicrosNullLast(r) => Some(r),
            SourceValue::Bucket { column, .. }
            | SourceValue::Lookup { column, .. }
            | SourceValue::Encoded { column, .. } => Some(column),
            _ => None,
        }
    }

    /// True when every row read has column `column` of table `table` NULL (a filter says so).
    pub fn keeps_only_null(&self, table: &str, column: &str) -> bool {
        self.filters.iter().any(|f| match f {
            SourceFilter::IsNull(r) => r.column == column && self.table_of(&r.alias) == Some(table),
            SourceFilter::IsNotNull(_) => false,
        })
    }

    /// Every table the query names (its key in `schema.tables`): driving, joined, collections.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        let collections = self.columns.iter().filter_map(|c| match &c.value {
            SourceValue::Collection(c) => Some(c.table.as_str()),
            _ => None,
        });
        std::iter::once(self.table.as_str())
            .chain(self.joins.iter().map(|j| j.table.as_str()))
            .chain(collections)
    }
}

/// A source query with the Postgres names of its tables resolved against the schema: what an
/// executor keeps to render the query's SQL ([`SourceSql::sql`], the one renderer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceSql {
    /// The query.
    pub query: SourceQuery,
    /// Each table's key and its name as Postgres SQL ([`pg_table`]).
    names: BTreeMap<String, String>,
}

impl SourceSql {
    /// `query` with its tables named as `schema` holds them.
    pub fn new(schema: &Schema, query: &SourceQuery) -> Self {
        let names = query
            .tables()
            .map(|k| (k.to_string(), pg_table(schema, k)))
            .collect();
        SourceSql {
            query: query.clone(),
            names,
        }
    }

    /// The Postgres name of table `key`.
    fn name(&self, key: &str) -> String {
        self.names
            .get(key)
            .cloned()
            .unwrap_or_else(|| ident::pg_quote(key))
    }

    /// The driving table as Postgres SQL (usable as `'…'::regclass` text).
    pub fn driving_table(&self) -> String {
        self.name(&self.query.table)
    }

    /// The SELECT as Postgres SQL, with the executor's `edit`.
    pub fn sql(&self, edit: &SourceEdit<'_>) -> String {
        let q = &self.query;
        let mut select: Vec<String> = edit.first_column.iter().map(|c| c.to_string()).collect();
        let mut laterals: Vec<String> = Vec::new();
        for c in &q.columns {
            let (expr, lateral) = self.value_sql(&c.name, &c.value);
            let name = ident::pg_quote(&c.name);
            if expr.ends_with(&format!(".{name}")) {
                select.push(expr);
            } else {
                select.push(format!("{expr} AS {name}"));
            }
            laterals.extend(lateral);
        }
        let from = match edit.driving {
            Some(derived) => derived.to_string(),
            None if q.numbered => format!(
                "(SELECT r.*, {} AS {ROW_ID_SOURCE} FROM {} r)",
                row_id_sql("r"),
                self.driving_table()
            ),
            None => self.driving_table(),
        };
        let mut sql = format!("SELECT {} FROM {from} {}", select.join(", "), q.alias);
        if let Some(sample) = edit.sample {
            sql.push(' ');
            sql.push_str(sample);
        }
        for j in &q.joins {
            let on: Vec<String> =
                j.on.iter()
                    .map(|k| {
                        format!(
                            "{} = {}",
                            SourceRef::new(&j.alias, &k.column).sql(),
                            k.equals.sql()
                        )
                    })
                    .collect();
            sql.push_str(&format!(
                " {} {} {} ON {}",
                if j.outer { "LEFT JOIN" } else { "JOIN" },
                self.name(&j.table),
                j.alias,
                on.join(" AND ")
            ));
        }
        for l in laterals {
            sql.push(' ');
            sql.push_str(&l);
        }
        let mut conditions: Vec<String> = q
            .filters
            .iter()
            .map(|f| match f {
                SourceFilter::IsNull(r) => format!("{} IS NULL", r.sql()),
                SourceFilter::IsNotNull(r) => format!("{} IS NOT NULL", r.sql()),
            })
            .collect();
        conditions.extend(edit.predicate.map(str::to_string));
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        if !q.group_by.is_empty() {
            let g: Vec<String> = q.group_by.iter().map(SourceRef::sql).collect();
            sql.push_str(" GROUP BY ");
            sql.push_str(&g.join(", "));
        }
        sql
    }

    /// A result column's expression, and the LATERAL join a collection adds.
    fn value_sql(&self, name: &str, v: &SourceValue) -> (String, Option<String>) {
        let expr = match v {
            SourceValue::Column(r) => r.sql(),
            SourceValue::EpochMicros(r) => epoch_micros_sql(&r.sql()),
            SourceValue::EpochMicrosNullLast(r) => {
                encoded_sql(Encoding::EpochMicrosNullLast, &r.sql())
            }
            SourceValue::Encoded { column, encoding } => encoded_sql(*encoding, &column.sql()),
            SourceValue::Bucket {
                column,
                bucket,
                at_utc,
                time_zone,
            } => bucket.pg_sql_of(&column.sql(), *at_utc, time_zone.as_deref()),
            SourceValue::Lookup { function, column } => {
                format!("{}(({})::text)", function.name(), column.sql())
            }
            SourceValue::Constant { value } => ident::literal(value),
            SourceValue::RowId => format!("{}.{ROW_ID_SOURCE}", self.query.alias),
            SourceValue::Null => "NULL".to_string(),
            SourceValue::Count => "count(*)".to_string(),
            SourceValue::Sum(r) => format!("sum({})::bigint", r.sql()),
            SourceValue::Collection(c) => {
                let col = ident::pg_quote(name);
                return (
                    format!("{}.{col}", c.alias),
                    Some(self.lateral_sql(c, &col)),
                );
            }
        };
        (expr, None)
    }

    /// `LEFT JOIN LATERAL (SELECT <aggregate> AS col FROM child c WHERE …) alias ON true`.
    fn lateral_sql(&self, coll: &SourceCollection, col: &str) -> String {
        let c = "c";
        let fields: Vec<String> = coll
            .fields
            .iter()
            .map(|f| format!("{}, {c}.{}", ident::literal(f), ident::pg_quote(f)))
            .collect();
        let entry = format!("json_build_object({})", fields.join(", "));
        let agg = match &coll.map_key {
            Some(k) => format!("json_object_agg({c}.{}, {entry})", ident::pg_quote(k)),
            None if coll.order.is_empty() => format!("json_agg({entry})"),
            None => {
                let order: Vec<String> = coll
                    .order
                    .iter()
                    .map(|k| format!("{c}.{}", ident::pg_quote(k)))
                    .collect();
                format!("json_agg({entry} ORDER BY {})", order.join(", "))
            }
        };
        let on: Vec<String> = coll
            .on
            .iter()
            .map(|k| format!("{c}.{} = {}", ident::pg_quote(&k.column), k.equals.sql()))
            .collect();
        format!(
            "LEFT JOIN LATERAL (SELECT {agg} AS {col} FROM {} {c} WHERE {}) {} ON true",
            self.name(&coll.table),
            on.join(" AND "),
            coll.alias
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Table;

    fn schema() -> Schema {
        let table = |schema: Option<&str>, name: &str| Table {
            schema: schema.map(str::to_string),
            name: name.into(),
            ..Table::default()
        };
        Schema {
            tables: vec![
                table(Some("app"), "Customers"),
                table(Some("app"), "addresses"),
                table(None, "phones"),
                table(None, "cities"),
            ],
            ..Schema::default()
        }
    }

    fn collection(table: &str, alias: &str, map_key: Option<&str>) -> SourceValue {
        SourceValue::Collection(SourceCollection {
            table: table.into(),
            alias: alias.into(),
            on: vec![JoinKey {
                column: "customer_id".into(),
                equals: SourceRef::new("t0", "id"),
            }],
            map_key: map_key.map(str::to_string),
            fields: vec!["label".into()],
            order: if map_key.is_some() {
                Vec::new()
            } else {
                vec!["n".into()]
            },
        })
    }

    fn query() -> SourceQuery {
        let col = |name: &str, value: SourceValue| SourceColumn {
            name: name.into(),
            value,
        };
        SourceQuery {
            table: "app.Customers".into(),
            alias: "t0".into(),
            numbered: false,
            joins: vec![SourceJoin {
                table: "cities".into(),
                alias: "t1".into(),
                outer: true,
                on: vec![JoinKey {
                    column: "id".into(),
                    equals: SourceRef::new("t0", "city_id"),
                }],
            }],
            columns: vec![
                col("id", SourceValue::Column(SourceRef::new("t0", "id"))),
                col("city", SourceValue::Column(SourceRef::new("t1", "name"))),
                col(
                    "day",
                    SourceValue::Bucket {
                        column: SourceRef::new("t0", "seen"),
                        bucket: Bucket::Day,
                        at_utc: true,
                        time_zone: None,
                    },
                ),
                col(
                    "all",
                    SourceValue::Constant {
                        value: "it's".into(),
                    },
                ),
                col(
                    "addresses",
                    collection("app.addresses", "e0", Some("label")),
                ),
                col("phones", collection("phones", "e1", None)),
            ],
            filters: vec![SourceFilter::IsNull(SourceRef::new("t0", "gone"))],
            group_by: Vec::new(),
        }
    }

    #[test]
    fn renders_every_part_with_each_table_named_as_the_schema_holds_it() {
        let sql = SourceSql::new(&schema(), &query());
        assert_eq!(sql.driving_table(), "app.\"Customers\"");
        assert_eq!(
            sql.sql(&SourceEdit::default()),
            "SELECT t0.id, t1.name AS city, (t0.seen AT TIME ZONE 'UTC')::date AS day, 'it''s' AS \"all\", \
             e0.addresses, e1.phones \
             FROM app.\"Customers\" t0 LEFT JOIN cities t1 ON t1.id = t0.city_id \
             LEFT JOIN LATERAL (SELECT json_object_agg(c.label, json_build_object('label', c.label)) AS addresses \
             FROM app.addresses c WHERE c.customer_id = t0.id) e0 ON true \
             LEFT JOIN LATERAL (SELECT json_agg(json_build_object('label', c.label) ORDER BY c.n) AS phones \
             FROM phones c WHERE c.customer_id = t0.id) e1 ON true \
             WHERE t0.gone IS NULL"
        );
    }

    #[test]
    fn a_bucket_in_a_zone_is_cut_on_that_zones_calendar_as_replay_cuts_it() {
        let b = |bucket, at_utc, zone: Option<&str>| {
            let v = SourceValue::Bucket {
                column: SourceRef::new("t0", "seen"),
                bucket,
                at_utc,
                time_zone: zone.map(str::to_string),
            };
            let mut q = query();
            q.columns = vec![SourceColumn {
                name: "b".into(),
                value: v,
            }];
            q.joins.clear();
            q.filters.clear();
            SourceSql::new(&schema(), &q).sql(&SourceEdit::default())
        };
        let from = " AS b FROM app.\"Customers\" t0";
        assert_eq!(
            b(Bucket::Day, true, Some("Europe/Paris")),
            format!("SELECT (t0.seen AT TIME ZONE 'Europe/Paris')::date{from}")
        );
        assert_eq!(
            b(Bucket::Hour, true, Some("Asia/Kolkata")),
            format!("SELECT (date_trunc('hour', (t0.seen AT TIME ZONE 'Asia/Kolkata')) AT TIME ZONE 'Asia/Kolkata'){from}")
        );
        // A `timestamp` is stored as its wall clock read in UTC: that instant is what is cut.
        assert_eq!(
            b(Bucket::Day, false, Some("America/New_York")),
            format!("SELECT ((t0.seen::timestamp AT TIME ZONE 'UTC') AT TIME ZONE 'America/New_York')::date{from}")
        );
        // UTC named or not: the plans written before the zone was carried, unchanged.
        assert_eq!(
            b(Bucket::Day, true, Some("UTC")),
            b(Bucket::Day, true, None)
        );
        assert_eq!(
            b(Bucket::Month, true, None),
            format!("SELECT date_trunc('month', (t0.seen AT TIME ZONE 'UTC')){from}")
        );
    }

    #[test]
    fn an_edit_adds_to_the_query_without_reading_it_back() {
        let sql = SourceSql::new(&schema(), &query());
        let edited = sql.sql(&SourceEdit {
            driving: Some("(SELECT 1 AS id)"),
            sample: Some("TABLESAMPLE SYSTEM (5)"),
            predicate: Some("t0.ctid >= '(0,0)'::tid"),
            first_column: Some("t0.ctid AS c"),
        });
        assert!(
            edited.starts_with("SELECT t0.ctid AS c, t0.id, "),
            "{edited}"
        );
        assert!(
            edited.contains(" FROM (SELECT 1 AS id) t0 TABLESAMPLE SYSTEM (5) LEFT JOIN cities t1"),
            "{edited}"
        );
        assert!(
            edited.ends_with(" WHERE t0.gone IS NULL AND t0.ctid >= '(0,0)'::tid"),
            "{edited}"
        );
    }

    #[test]
    fn a_numbered_table_is_read_whole_with_its_row_ids() {
        let q = SourceQuery {
            table: "phones".into(),
            alias: "t0".into(),
            numbered: true,
            columns: vec![SourceColumn {
                name: "row_id".into(),
                value: SourceValue::RowId,
            }],
            ..SourceQuery::default()
        };
        assert!(!q.splittable());
        assert_eq!(
            SourceSql::new(&schema(), &q).sql(&SourceEdit::default()),
            format!(
                "SELECT t0.{ROW_ID_SOURCE} AS row_id FROM (SELECT r.*, {} AS {ROW_ID_SOURCE} FROM phones r) t0",
                row_id_sql("r")
            )
        );
    }

    #[test]
    fn the_query_says_which_table_an_alias_names_and_which_columns_it_keeps_null() {
        let q = query();
        assert_eq!(q.table_of("t1"), Some("cities"));
        assert_eq!(q.table_of("t9"), None);
        assert_eq!(q.read_column("city"), Some(&SourceRef::new("t1", "name")));
        assert_eq!(q.read_column("day"), Some(&SourceRef::new("t0", "seen")));
        assert_eq!(q.read_column("all"), None);
        assert_eq!(q.read_column("nothing"), None);
        assert!(q.keeps_only_null("app.Customers", "gone"));
        assert!(!q.keeps_only_null("cities", "gone"));
        let tables: Vec<&str> = q.tables().collect();
        assert_eq!(
            tables,
            ["app.Customers", "cities", "app.addresses", "phones"]
        );
    }
}
