//! The target's schema against the plan's, before anything is written: a table whose key
//! (partition and clustering columns, their order and clustering direction), columns or column
//! types differ from the plan, or a user-defined type whose fields differ, is refused — the rows
//! would be written into a table that does not serve the plan's reads (or not written at all).
//! The target's schema is read from Cassandra's `system_schema` tables.

use crate::cql::CqlTarget;
use crate::Error;
use remodel_model::{CqlType, DesignTable, SortOrder, UserType};
use scylla::client::session::Session;
use std::collections::{BTreeMap, BTreeSet};

/// One column of a table as `system_schema.columns` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerColumn {
    /// `partition_key`, `clustering`, `regular` or `static`.
    pub kind: String,
    /// Position within the partition key or the clustering columns.
    pub position: i32,
    /// `asc`, `desc` (clustering columns) or `none`.
    pub clustering_order: String,
    /// The CQL type as the server writes it.
    pub cql_type: String,
}

/// What the target holds of one keyspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerKeyspace {
    /// Whether the keyspace exists.
    pub exists: bool,
    /// Tables: name → column name → column.
    pub tables: BTreeMap<String, BTreeMap<String, ServerColumn>>,
    /// User-defined types: name → fields (name, type) in order.
    pub types: BTreeMap<String, Vec<(String, String)>>,
}

/// Reads what the target holds of `keyspace` from `system_schema` (keyspaces, columns, types).
pub async fn read(
    session: &Session,
    target: &CqlTarget,
    keyspace: &str,
) -> Result<ServerKeyspace, Error> {
    let query = |cql: &'static str| async move {
        let what = || format!("read `{cql}`");
        session
            .query_unpaged(cql, (keyspace,))
            .await
            .map_err(|e| target.failed(what(), e))?
            .into_rows_result()
            .map_err(|e| target.failed(what(), e))
    };
    let mut out = ServerKeyspace::default();
    let rows =
        query("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?").await?;
    out.exists = rows.rows_num() > 0;
    let what = "the target's tables (system_schema.columns)";
    let rows = query(
        "SELECT table_name, column_name, kind, position, clustering_order, type \
         FROM system_schema.columns WHERE keyspace_name = ?",
    )
    .await?;
    type ColumnRow = (String, String, String, i32, String, String);
    for row in rows
        .rows::<ColumnRow>()
        .map_err(|e| target.failed(what, e))?
    {
        let (table, column, kind, position, clustering_order, cql_type) =
            row.map_err(|e| target.failed(what, e))?;
        out.tables.entry(table).or_default().insert(
            column,
            ServerColumn {
                kind,
                position,
                clustering_order,
                cql_type,
            },
        );
    }
    let what = "the target's types (system_schema.types)";
    let rows = query(
        "SELECT type_name, field_names, field_types FROM system_schema.types \
         WHERE keyspace_name = ?",
    )
    .await?;
    for row in rows
        .rows::<(String, Vec<String>, Vec<String>)>()
        .map_err(|e| target.failed(what, e))?
    {
        let (name, names, types) = row.map_err(|e| target.failed(what, e))?;
        out.types
            .insert(name, names.into_iter().zip(types).collect());
    }
    Ok(out)
}

/// How the target stands against the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// What differs, one entry per table or type: `trips_by_driver: column fare_usd is double on
    /// the target, the plan says decimal`.
    pub differences: Vec<String>,
    /// Tables and types the plan needs that the target lacks (`table trips_by_id`).
    pub missing: Vec<String>,
}

impl Comparison {
    /// True when the target holds every table and type as the plan has it.
    pub fn matches(&self) -> bool {
        self.differences.is_empty() && self.missing.is_empty()
    }
}

/// Compares the target's `keyspace` with the plan's `tables` and the user-defined types they use.
pub fn compare(server: &ServerKeyspace, tables: &[&DesignTable], types: &[UserType]) -> Comparison {
    let mut out = Comparison::default();
    if !server.exists {
        out.missing.push("the keyspace".into());
    }
    for name in used_types(tables, types) {
        let Some(plan) = types.iter().find(|t| t.name == name) else {
            continue;
        };
        match server.types.get(&name) {
            None => out.missing.push(format!("type {name}")),
            Some(fields) => {
                if let Some(d) = type_difference(&plan.fields, fields) {
                    out.differences.push(format!("type {name}: {d}"));
                }
            }
        }
    }
    for t in tables {
        match server.tables.get(&t.name) {
            None => out.missing.push(format!("table {}", t.name)),
            Some(columns) => {
                let diffs = table_differences(t, columns);
                if !diffs.is_empty() {
                    out.differences
                        .push(format!("{}: {}", t.name, diffs.join(", ")));
                }
            }
        }
    }
    out
}

/// The user-defined types the tables' columns name (directly or inside another type), in name order.
fn used_types(tables: &[&DesignTable], types: &[UserType]) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut pending: Vec<&CqlType> = tables
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| &c.cql_type))
        .collect();
    while let Some(ty) = pending.pop() {
        for word in ty.user_types() {
            if let Some(t) = types.iter().find(|t| t.name == word) {
                if used.insert(t.name.clone()) {
                    pending.extend(t.fields.iter().map(|(_, ty)| ty));
                }
            }
        }
    }
    used
}

fn type_difference(plan: &[(String, CqlType)], server: &[(String, String)]) -> Option<String> {
    let plan_names: Vec<&str> = plan.iter().map(|(n, _)| n.as_str()).collect();
    let server_names: Vec<&str> = server.iter().map(|(n, _)| n.as_str()).collect();
    if plan_names != server_names {
        return Some(format!(
            "fields ({}) on the target, the plan says ({})",
            server_names.join(", "),
            plan_names.join(", ")
        ));
    }
    plan.iter()
        .zip(server)
        .find(|((_, p), (_, s))| !same_type(p, s))
        .map(|((name, p), (_, s))| format!("field {name} is {s} on the target, the plan says {p}"))
}

/// What differs between the plan's table and the target's: the key first, then the columns.
fn table_differences(t: &DesignTable, server: &BTreeMap<String, ServerColumn>) -> Vec<String> {
    let mut out = Vec::new();
    let key = |kind: &str| {
        let mut cols: Vec<(&String, &ServerColumn)> =
            server.iter().filter(|(_, c)| c.kind == kind).collect();
        cols.sort_by_key(|(_, c)| c.position);
        cols
    };
    let plan_pk: Vec<String> = t.partition_key.iter().map(|k| k.column.clone()).collect();
    let server_pk: Vec<String> = key("partition_key")
        .iter()
        .map(|(n, _)| (*n).clone())
        .collect();
    if plan_pk != server_pk {
        out.push(format!(
            "partition key ({}) on the target, the plan says ({})",
            server_pk.join(", "),
            plan_pk.join(", ")
        ));
    }
    let plan_ck: Vec<String> = t
        .clustering
        .iter()
        .map(|k| match k.order {
            Some(SortOrder::Desc) => format!("{} DESC", k.column),
            _ => format!("{} ASC", k.column),
        })
        .collect();
    let server_ck: Vec<String> = key("clustering")
        .iter()
        .map(|(n, c)| format!("{n} {}", c.clustering_order.to_ascii_uppercase()))
        .collect();
    if plan_ck != server_ck {
        out.push(format!(
            "clustering ({}) on the target, the plan says ({})",
            server_ck.join(", "),
            plan_ck.join(", ")
        ));
    }
    for c in &t.columns {
        match server.get(&c.name) {
            None => out.push(format!("column {} is missing on the target", c.name)),
            Some(s) if !same_type(&c.cql_type, &s.cql_type) => out.push(format!(
                "column {} is {} on the target, the plan says {}",
                c.name, s.cql_type, c.cql_type
            )),
            Some(s) if (s.kind == "static") != c.is_static => out.push(format!(
                "column {} is {}static on the target, {}static in the plan",
                c.name,
                if c.is_static { "not " } else { "" },
                if c.is_static { "" } else { "not " }
            )),
            Some(_) => {}
        }
    }
    for name in server.keys() {
        if !t.columns.iter().any(|c| &c.name == name) {
            out.push(format!("column {name} is on the target, not in the plan"));
        }
    }
    out
}

/// Whether the server's type text names the plan's type (case, spacing, quoting, `varchar`, the
/// implicit `frozen` of a tuple aside). A text the model does not read (`counter`, `vector<…>`)
/// names no type of a plan.
pub fn same_type(plan: &CqlType, server: &str) -> bool {
    server
        .parse::<CqlType>()
        .is_ok_and(|s| canonical(plan) == canonical(&s))
}

/// One spelling per type: a tuple is frozen whether said or not.
fn canonical(t: &CqlType) -> CqlType {
    let boxed = |t: &CqlType| Box::new(canonical(t));
    match t {
        CqlType::Frozen(inner) if matches!(**inner, CqlType::Tuple(_)) => canonical(inner),
        CqlType::Native(_) | CqlType::Udt(_) => t.clone(),
        CqlType::List(e) => CqlType::List(boxed(e)),
        CqlType::Set(e) => CqlType::Set(boxed(e)),
        CqlType::Frozen(e) => CqlType::Frozen(boxed(e)),
        CqlType::Map(k, v) => CqlType::Map(boxed(k), boxed(v)),
        CqlType::Tuple(items) => CqlType::Tuple(items.iter().map(canonical).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use remodel_model::{DesignColumn, Estimates, KeyColumn};

    fn ty(text: &str) -> CqlType {
        text.parse().unwrap()
    }

    fn key(column: &str, ty: &str, order: Option<SortOrder>) -> KeyColumn {
        KeyColumn {
            column: column.into(),
            cql_type: self::ty(ty),
            derived_from: None,
            bucket: None,
            order,
            constant: None,
            encoding: None,
            time_zone: None,
        }
    }

    fn plan_table() -> DesignTable {
        let col = |n: &str, t: &str| DesignColumn {
            name: n.into(),
            cql_type: ty(t),
            source: None,
            is_static: false,
            embeds: None,
            encoding: None,
            row_id: None,
            equals: vec![],
        };
        DesignTable {
            name: "trips_by_driver".into(),
            entity: "trips".into(),
            partition_key: vec![key("driver_id", "text", None)],
            clustering: vec![
                key("started_at", "timestamp", Some(SortOrder::Desc)),
                key("trip_id", "uuid", Some(SortOrder::Asc)),
            ],
            columns: vec![
                col("driver_id", "text"),
                col("started_at", "timestamp"),
                col("trip_id", "uuid"),
                col("fare_usd", "decimal"),
                col("stops", "list<frozen<stop>>"),
            ],
            serves: vec![],
            source: Default::default(),
            source_sql: "SELECT 1".into(),
            estimates: Estimates::default(),
            warnings: vec![],
            counter: None,
            ttl: None,
            tombstones: None,
        }
    }

    fn server_table() -> BTreeMap<String, ServerColumn> {
        let col = |kind: &str, position: i32, order: &str, ty: &str| ServerColumn {
            kind: kind.into(),
            position,
            clustering_order: order.into(),
            cql_type: ty.into(),
        };
        BTreeMap::from([
            ("driver_id".into(), col("partition_key", 0, "none", "text")),
            (
                "started_at".into(),
                col("clustering", 0, "desc", "timestamp"),
            ),
            ("trip_id".into(), col("clustering", 1, "asc", "uuid")),
            ("fare_usd".into(), col("regular", -1, "none", "decimal")),
            (
                "stops".into(),
                col("regular", -1, "none", "list<frozen<stop>>"),
            ),
        ])
    }

    fn stop() -> UserType {
        UserType {
            name: "stop".into(),
            fields: vec![
                ("at".into(), CqlType::TIMESTAMP),
                ("place".into(), CqlType::TEXT),
            ],
        }
    }

    fn server(table: BTreeMap<String, ServerColumn>) -> ServerKeyspace {
        ServerKeyspace {
            exists: true,
            tables: BTreeMap::from([("trips_by_driver".into(), table)]),
            types: BTreeMap::from([(
                "stop".into(),
                vec![
                    ("at".into(), "timestamp".into()),
                    ("place".into(), "text".into()),
                ],
            )]),
        }
    }

    fn differences(s: &ServerKeyspace) -> Comparison {
        compare(s, &[&plan_table()], &[stop()])
    }

    #[test]
    fn the_plans_own_schema_matches() {
        assert!(differences(&server(server_table())).matches());
    }

    #[test]
    fn each_difference_is_named() {
        let mut t = server_table();
        t.get_mut("fare_usd").unwrap().cql_type = "double".into();
        assert_eq!(
            differences(&server(t)).differences,
            ["trips_by_driver: column fare_usd is double on the target, the plan says decimal"]
        );
        let mut t = server_table();
        t.get_mut("started_at").unwrap().clustering_order = "asc".into();
        assert_eq!(
            differences(&server(t)).differences,
            ["trips_by_driver: clustering (started_at ASC, trip_id ASC) on the target, the plan says (started_at DESC, trip_id ASC)"]
        );
        let mut t = server_table();
        t.get_mut("started_at").unwrap().kind = "partition_key".into();
        t.get_mut("started_at").unwrap().position = 1;
        t.get_mut("trip_id").unwrap().position = 0;
        assert_eq!(
            differences(&server(t)).differences,
            ["trips_by_driver: partition key (driver_id, started_at) on the target, the plan says (driver_id), clustering (trip_id ASC) on the target, the plan says (started_at DESC, trip_id ASC)"]
        );
        let mut t = server_table();
        t.remove("fare_usd");
        t.insert(
            "extra".into(),
            ServerColumn {
                kind: "static".into(),
                position: -1,
                clustering_order: "none".into(),
                cql_type: "int".into(),
            },
        );
        assert_eq!(
            differences(&server(t)).differences,
            ["trips_by_driver: column fare_usd is missing on the target, column extra is on the target, not in the plan"]
        );
        let mut s = server(server_table());
        s.types.insert(
            "stop".into(),
            vec![
                ("at".into(), "date".into()),
                ("place".into(), "text".into()),
            ],
        );
        assert_eq!(
            differences(&s).differences,
            ["type stop: field at is date on the target, the plan says timestamp"]
        );
    }

    #[test]
    fn what_is_missing_is_listed() {
        let s = ServerKeyspace::default();
        let c = differences(&s);
        assert!(c.differences.is_empty());
        assert_eq!(
            c.missing,
            ["the keyspace", "type stop", "table trips_by_driver"]
        );
    }

    #[test]
    fn spellings_of_one_type_are_the_same_type() {
        let same = |a: &str, b: &str| same_type(&ty(a), b);
        assert!(same(
            "map<text, frozen<\"Entry\">>",
            "map<text,frozen<\"Entry\">>"
        ));
        assert!(same("varchar", "text"));
        assert!(same("tuple<int, text>", "frozen<tuple<int, text>>"));
        assert!(same("LIST<INT>", "list<int>"));
        assert!(!same("list<int>", "frozen<list<int>>"));
        assert!(!same("\"Entry\"", "entry"));
        assert!(!same("decimal", "double"));
        assert!(!same("bigint", "counter"));
    }
}
