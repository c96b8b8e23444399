//! One target table as the backfill sees it: its columns with parsed CQL types, which of them form
//! the partition key, the clustering key and the source row's key, its `source_sql` and the CQL it
//! is written and read back with. Built from `plan.json` alone.

use crate::resolved_type::{ResolvedType, TypeParser};
use crate::Error;
use remodel_model::ident::quote;
use remodel_model::text::fnv1a64;
use remodel_model::{Bucket, DesignTable, KeyColumn, Plan, SourceEdit, SourceSql};

/// The driving table of a target table's source query, when its rows can be read in ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driving {
    /// The table as Postgres SQL (usable as `'…'::regclass` text).
    pub table: String,
    /// Its alias in the query (`t0`), which a range's predicate names.
    pub alias: String,
}
use scylla::value::CqlValue;

/// A column of a target table.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetColumn {
    /// Name (as the server stores it).
    pub name: String,
    /// Its CQL type.
    pub cql: ResolvedType,
    /// The type as `plan.json` writes it.
    pub cql_text: String,
    /// For a bucket key column: the source column it is computed from and the bucket width
    /// (used when the source_sql does not compute it).
    pub bucket: Option<(String, Bucket)>,
    /// For a bucket key column: the time zone whose calendar cuts it (UTC when `None`).
    pub bucket_zone: Option<String>,
}

/// The TTL a row is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// Its instant has passed: the source's reads no longer see it.
    Expired,
    /// `USING TTL` this many seconds (0: none).
    Seconds(i32),
}

/// Everything the backfill and verify need to know about one target table.
#[derive(Debug, Clone)]
pub struct TargetTable {
    /// Keyspace.
    pub keyspace: String,
    /// Table name.
    pub name: String,
    /// Columns, in `plan.json` order; rows are vectors in this order.
    pub columns: Vec<TargetColumn>,
    /// Indices of the partition-key columns.
    pub partition_key: Vec<usize>,
    /// Indices of the clustering columns.
    pub clustering: Vec<usize>,
    /// Indices of the columns that identify the source row (the driving table's primary key),
    /// written to the rejects file.
    pub source_key: Vec<usize>,
    /// The Postgres query that fills the table, as the plan states it (typed), with its tables'
    /// names: every SQL the backfill, verify and sync run on it is rendered from it.
    pub source: SourceSql,
    /// The query as SQL, unchanged.
    pub source_sql: String,
    /// Its driving table, when the query can be read in ranges of it.
    pub driving: Option<Driving>,
    /// Rows the designer expects in the table.
    pub estimated_rows: f64,
    /// A counter table: written by `UPDATE … SET c = c + ?` (its counters lead its columns, its
    /// key follows), never retried blindly, emptied before each attempt that fills it.
    pub counter: bool,
    /// The index of the column whose instant ends a row's life, when its rows expire
    /// (`design.tables[].ttl`): every row is written `USING TTL` of the seconds until it.
    pub ttl: Option<usize>,
}

impl TargetTable {
    /// Every table of the plan's design, or those named in `only` (an unknown name is an error).
    pub fn from_plan(plan: &Plan, only: &[String]) -> Result<Vec<TargetTable>, Error> {
        if !plan.design.violations.is_empty() {
            let list: Vec<String> = plan
                .design
                .violations
                .iter()
                .map(|v| format!("({}) {}", v.check, v.message))
                .collect();
            return Err(Error::Plan(format!(
                "the plan fails {} of the designer's checks and must not be executed: {}; \
                 change the schema, workload or settings until `remodel plan` passes",
                list.len(),
                list.join("; ")
            )));
        }
        for name in only {
            if !plan.design.tables.iter().any(|t| &t.name == name) {
                let known: Vec<&str> = plan.design.tables.iter().map(|t| t.name.as_str()).collect();
                return Err(Error::Plan(format!(
                    "no table `{name}` in the plan (it has: {})",
                    known.join(", ")
                )));
            }
        }
        plan.design
            .tables
            .iter()
            .filter(|t| only.is_empty() || only.contains(&t.name))
            .map(|t| TargetTable::new(plan, t))
            .collect()
    }

    fn new(plan: &Plan, t: &DesignTable) -> Result<TargetTable, Error> {
        let keyspace = plan.design.keyspace.name.clone();
        let columns = target_columns(plan, t)?;
        let indices = |keys: &[KeyColumn]| -> Result<Vec<usize>, Error> {
            keys.iter()
                .map(|k| {
                    columns
                        .iter()
                        .position(|c| c.name == k.column)
                        .ok_or_else(|| {
                            Error::Plan(format!(
                                "table {}: key column `{}` is not among its columns",
                                t.name, k.column
                            ))
                        })
                })
                .collect()
        };
        let partition_key = indices(&t.partition_key)?;
        if partition_key.is_empty() {
            return Err(Error::Plan(format!(
                "table {} has no partition key",
                t.name
            )));
        }
        let clustering = indices(&t.clustering)?;
        let ttl = match &t.ttl {
            Some(x) => Some(
                columns
                    .iter()
                    .position(|c| c.name == x.target_column)
                    .ok_or_else(|| {
                        Error::Plan(format!(
                            "table {}: TTL column `{}` is not among its columns",
                            t.name, x.target_column
                        ))
                    })?,
            ),
            None => None,
        };
        if t.source.table.is_empty() || t.source.columns.is_empty() {
            return Err(Error::Plan(format!(
                "table {} has no source query (its `source`)",
                t.name
            )));
        }
        if t.counter.is_some() && ttl.is_some() {
            return Err(Error::Plan(format!(
                "counter table {} has a TTL: Cassandra refuses USING TTL on a counter",
                t.name
            )));
        }
        if t.counter.is_some() {
            counter_columns_first(t, &partition_key, &clustering, columns.len())?;
        }
        let source = SourceSql::new(&plan.schema, &t.source);
        let driving = t.source.splittable().then(|| Driving {
            table: source.driving_table(),
            alias: t.source.alias.clone(),
        });
        let source_key = source_key(plan, t)
            .unwrap_or_else(|| partition_key.iter().chain(&clustering).copied().collect());
        Ok(TargetTable {
            keyspace,
            name: t.name.clone(),
            columns,
            partition_key,
            clustering,
            source_key,
            source_sql: source.sql(&SourceEdit::default()),
            source,
            driving,
            estimated_rows: t.estimates.rows,
            counter: t.counter.is_some(),
            ttl,
        })
    }

    /// True when the partition key holds the driving table's whole primary key: every partition
    /// then gets one row, and sorting a range by partition would group nothing. Otherwise each
    /// range is read sorted by partition key so that a partition's rows go out as one batch.
    pub fn one_row_per_partition(&self) -> bool {
        self.driving.is_some()
            && !self.source_key.is_empty()
            && self
                .source_key
                .iter()
                .all(|k| self.partition_key.contains(k))
    }

    /// `"keyspace"."table"`.
    pub fn qualified(&self) -> String {
        format!("{}.{}", quote(&self.keyspace), quote(&self.name))
    }

    /// Indices of the primary-key columns (partition key then clustering).
    pub fn primary_key(&self) -> impl Iterator<Item = usize> + '_ {
        self.partition_key.iter().chain(&self.clustering).copied()
    }

    /// The prepared INSERT of one row, every column bound (unset ones stay untouched), then
    /// the row's TTL when its rows expire; for a counter table the UPDATE adding a row's
    /// counters to its group (no `USING TIMESTAMP` or `TTL`: Cassandra refuses them on a counter).
    pub fn insert_cql(&self, write_timestamp: Option<i64>) -> String {
        if self.counter {
            return self.counter_update_cql();
        }
        self.insert_cql_at(write_timestamp.map(|ts| ts.to_string()).as_deref())
    }

    /// The UPDATE adding one source_sql row's counters to its group.
    fn counter_update_cql(&self) -> String {
        let key: Vec<usize> = self.primary_key().collect();
        let sets: Vec<String> = (0..self.columns.len())
            .filter(|i| !key.contains(i))
            .map(|i| {
                let q = quote(&self.columns[i].name);
                format!("{q} = {q} + ?")
            })
            .collect();
        let wheres: Vec<String> = key
            .iter()
            .map(|&i| format!("{} = ?", quote(&self.columns[i].name)))
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {}",
            self.qualified(),
            sets.join(", "),
            wheres.join(" AND ")
        )
    }

    /// The INSERT with `timestamp` as its `USING TIMESTAMP` (a number, or `?` bound after the
    /// columns and the TTL).
    pub fn insert_cql_at(&self, timestamp: Option<&str>) -> String {
        let names: Vec<String> = self.columns.iter().map(|c| quote(&c.name)).collect();
        let marks = vec!["?"; names.len()].join(", ");
        let mut using: Vec<String> = Vec::new();
        if self.ttl.is_some() {
            using.push("TTL ?".into());
        }
        if let Some(ts) = timestamp {
            using.push(format!("TIMESTAMP {ts}"));
        }
        let using = if using.is_empty() {
            String::new()
        } else {
            format!(" USING {}", using.join(" AND "))
        };
        format!(
            "INSERT INTO {} ({}) VALUES ({marks}){using}",
            self.qualified(),
            names.join(", ")
        )
    }

    /// The TTL of a converted row when its rows expire, `now_micros` being the clock:
    /// `Some(Expired)` when its instant has passed, else the seconds [`remodel_model::BindValue::SecondsUntil`]
    /// would bind (0, no TTL, for a NULL instant); `None` for a table whose rows do not expire.
    pub fn ttl_of(&self, value: Option<&CqlValue>, now_micros: i64) -> Option<Ttl> {
        self.ttl?;
        let micros = match value {
            None => return Some(Ttl::Seconds(0)),
            Some(CqlValue::Timestamp(t)) => t.0.saturating_mul(1000),
            Some(CqlValue::BigInt(us)) => *us,
            Some(_) => return Some(Ttl::Seconds(0)),
        };
        let until = micros.saturating_sub(now_micros);
        if until <= 0 {
            return Some(Ttl::Expired);
        }
        Some(Ttl::Seconds(remodel_model::ttl_seconds(
            until,
            1,
            remodel_model::MAX_TTL_SECONDS,
        )))
    }

    /// The prepared SELECT of one row by its full primary key (for verify).
    pub fn select_by_key_cql(&self) -> String {
        let names: Vec<String> = self.columns.iter().map(|c| quote(&c.name)).collect();
        let wheres: Vec<String> = self
            .primary_key()
            .map(|i| format!("{} = ?", quote(&self.columns[i].name)))
            .collect();
        format!(
            "SELECT {} FROM {} WHERE {}",
            names.join(", "),
            self.qualified(),
            wheres.join(" AND ")
        )
    }

    /// The prepared count of the rows in one token range `(lo, hi]` (for verify).
    pub fn count_range_cql(&self) -> String {
        let token = self.token_expr();
        format!(
            "SELECT count(*) FROM {} WHERE {token} > ? AND {token} <= ?",
            self.qualified()
        )
    }

    /// `token("k1", "k2")`.
    pub fn token_expr(&self) -> String {
        let keys: Vec<String> = self
            .partition_key
            .iter()
            .map(|&i| quote(&self.columns[i].name))
            .collect();
        format!("token({})", keys.join(", "))
    }

    /// A stable digest of what the table reads and writes, so that `--resume` refuses a changed
    /// plan instead of mixing two definitions in one run.
    pub fn fingerprint(&self) -> String {
        let mut text = self.source_sql.clone();
        for c in &self.columns {
            text.push('\n');
            text.push_str(&c.name);
            text.push(' ');
            text.push_str(&c.cql_text);
        }
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }
}

/// The columns of table `t` with their types resolved against the plan's user types, and the
/// bucket each bucket key column is computed as.
fn target_columns(plan: &Plan, t: &DesignTable) -> Result<Vec<TargetColumn>, Error> {
    let parser = TypeParser::new(&plan.design.keyspace.name, &plan.design.types);
    let mut columns = Vec::with_capacity(t.columns.len());
    for c in &t.columns {
        let cql = parser
            .resolve(&c.cql_type)
            .map_err(|e| Error::Plan(format!("table {}, column {}: {e}", t.name, c.name)))?;
        let key = t
            .partition_key
            .iter()
            .chain(&t.clustering)
            .find(|k| k.column == c.name);
        let bucket = key.and_then(|k| Some((k.derived_from.clone()?, k.bucket?)));
        let bucket_zone = key.and_then(|k| k.time_zone.clone());
        columns.push(TargetColumn {
            name: c.name.clone(),
            cql,
            cql_text: c.cql_type.to_string(),
            bucket,
            bucket_zone,
        });
    }
    Ok(columns)
}

/// A counter table's UPDATE binds a source row in column order: its counters come before its key.
fn counter_columns_first(
    t: &DesignTable,
    partition_key: &[usize],
    clustering: &[usize],
    n_columns: usize,
) -> Result<(), Error> {
    let key: Vec<usize> = partition_key.iter().chain(clustering).copied().collect();
    let first_key = key.iter().min().copied().unwrap_or(0);
    if (first_key..n_columns).any(|i| !key.contains(&i)) {
        return Err(Error::Plan(format!(
                "counter table {}: its counter columns must come before its key columns (the order the UPDATE binds a source_sql row in)",
                t.name
            )));
    }
    Ok(())
}

/// The target columns holding the driving table's primary key, when all of them are there.
fn source_key(plan: &Plan, t: &DesignTable) -> Option<Vec<usize>> {
    // The table whose rows it holds, as the designer says, else the query's driving table.
    let name = match t.entity.as_str() {
        "" => t.source.table.as_str(),
        entity => entity,
    };
    let table = plan.schema.table(name)?;
    if table.primary_key.is_empty() {
        return None;
    }
    table
        .primary_key
        .iter()
        .map(|pk| {
            t.columns.iter().position(|c| {
                c.source
                    .as_ref()
                    .is_some_and(|s| s.table == table.key() && s.column == *pk)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rideshare() -> Plan {
        let text = include_str!("../../../fixtures/plan/rideshare/plan.json");
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn rideshare_tables_have_keys_and_statements() {
        let plan = rideshare();
        let tables = TargetTable::from_plan(&plan, &[]).unwrap();
        let by_driver = tables.iter().find(|t| t.name == "trips_by_driver").unwrap();
        let names = |idx: &[usize]| -> Vec<&str> {
            idx.iter()
                .map(|&i| by_driver.columns[i].name.as_str())
                .collect()
        };
        assert_eq!(names(&by_driver.partition_key), ["driver_id"]);
        assert_eq!(names(&by_driver.clustering), ["started_at", "trip_id"]);
        assert_eq!(names(&by_driver.source_key), ["trip_id"]);
        assert_eq!(by_driver.driving.as_ref().unwrap().table, "trips");
        assert!(by_driver
            .insert_cql(Some(5))
            .ends_with("VALUES (?, ?, ?, ?, ?, ?) USING TIMESTAMP 5"));
        assert_eq!(by_driver.columns.len(), 6, "what q1 reads, and its key");
        assert!(by_driver
            .select_by_key_cql()
            .ends_with("WHERE \"driver_id\" = ? AND \"started_at\" = ? AND \"trip_id\" = ?"));
        assert_eq!(by_driver.token_expr(), "token(\"driver_id\")");
        assert!(!by_driver.one_row_per_partition());
        let by_id = tables.iter().find(|t| t.name == "trips_by_id").unwrap();
        assert!(by_id.one_row_per_partition());
    }

    #[test]
    fn a_plan_that_fails_its_checks_is_refused() {
        let mut plan = rideshare();
        plan.design.violations.push(remodel_model::Violation {
            check: "a".into(),
            message: "trips_by_city_date: key not unique".into(),
            ..Default::default()
        });
        let err = TargetTable::from_plan(&plan, &[]).unwrap_err().to_string();
        assert!(err.contains("must not be executed"), "{err}");
        assert!(err.contains("key not unique"), "{err}");
    }

    #[test]
    fn unknown_tables_are_named_with_the_known_ones() {
        let err = TargetTable::from_plan(&rideshare(), &["nope".into()]).unwrap_err();
        assert!(err.to_string().contains("trips_by_driver"), "{err}");
    }
}
