//! Export of a reviewed plan as an Apache Spark job, for backfills at cluster scale.
//!
//! [`export`] turns `plan.json` into the files of a job folder: `job.json` (every target table's
//! `source_sql`, columns with their CQL types, keys, bucket derivations and how its driving table
//! is cut into ranges), `backfill.py` (the PySpark job, the same for every plan: it reads
//! `job.json`), `log4j2.properties` and a `README.md` with the exact `spark-submit` lines.
//!
//! The job reads and converts as `remodel backfill` does (one exported snapshot imported by every
//! partition's connection, ctid page ranges of the driving table, exact conversions, rejects in the
//! same format), so `remodel verify` checks a Spark-filled keyspace unchanged.
//!
//! Architecture invariant: this crate depends on `model` only. What it needs of the Rust engine's
//! reading of a table (its driving table and source key) is handed in as [`TableRead`] values by
//! the caller, which takes them from `remodel-backfill`, so both engines read a plan alike.

mod readme;

pub use readme::shell as shell_word;

use remodel_model::{CqlType, DesignTable, Plan, UserType};
use serde::Serialize;

/// PySpark from PyPI the job is written for (Spark 3.5, Scala 2.12 jars inside).
pub const PYSPARK_VERSION: &str = "3.5.9";
/// The Spark Cassandra Connector (Maven coordinates) matching Spark 3.5 and Scala 2.12.
pub const CONNECTOR: &str = "com.datastax.spark:spark-cassandra-connector_2.12:3.5.1";
/// The Postgres JDBC driver (Maven coordinates).
pub const PGJDBC: &str = "org.postgresql:postgresql:42.7.14";
/// The version of `job.json`'s format (`backfill.py` refuses another).
pub const JOB_FORMAT_VERSION: u32 = 1;
/// The column the job adds to a split table's `source_sql`: the driving row's ctid, which the
/// JDBC partitions' predicates restrict (Postgres pushes them into a TID Range Scan).
pub const CTID_COLUMN: &str = "__remodel_ctid";

/// The PySpark job: generic, it reads `job.json`.
pub const BACKFILL_PY: &str = include_str!("../job/backfill.py");
/// The job's logging configuration (warnings only).
pub const LOG4J2_PROPERTIES: &str = include_str!("../job/log4j2.properties");

/// The driving table of a `source_sql` (its `FROM <table> <alias>`), as the Rust engine finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driving {
    /// The table as written in the SQL (usable as `'…'::regclass` text).
    pub table: String,
    /// Its alias in the SQL (`t0`).
    pub alias: String,
}

/// How the Rust engine reads one target table: what the job must do the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRead {
    /// Target table name.
    pub table: String,
    /// The driving table when the statement can be cut into ctid ranges; `None`: read whole.
    pub driving: Option<Driving>,
    /// The target columns naming the source row (its driving table's primary key), for rejects.
    pub source_key: Vec<String>,
}

/// What to write into the job beside the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// The plan file as named on the command line (recorded in `job.json`).
    pub plan_label: String,
    /// The source URL **without its password** (the job's default source).
    pub source_url: Option<String>,
    /// The Cassandra contact point `host:port` (the job's default target).
    pub target: Option<String>,
    /// The job folder as named on the command line (the README's commands name its files).
    pub job_dir: String,
}

/// One file of the job folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    /// File name inside the folder.
    pub name: &'static str,
    /// Its contents.
    pub text: String,
    /// True for a file to mark executable.
    pub executable: bool,
}

/// Why a plan cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller gave no [`TableRead`] for a table of the plan.
    #[error("no read description for table {0} (the export needs one per table)")]
    MissingRead(String),
    /// `job.json` could not be serialized.
    #[error("job.json: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(Serialize)]
struct Job<'a> {
    format_version: u32,
    generated_by: String,
    plan: &'a str,
    keyspace: &'a str,
    source: Endpoint<'a>,
    target: Target<'a>,
    versions: Versions,
    types: &'a [UserType],
    tables: Vec<JobTable<'a>>,
}

#[derive(Serialize)]
struct Endpoint<'a> {
    /// The source URL without password, or null.
    url: Option<&'a str>,
}

#[derive(Serialize)]
struct Target<'a> {
    node: Option<&'a str>,
}

#[derive(Serialize)]
struct Versions {
    pyspark: &'static str,
    connector: &'static str,
    pgjdbc: &'static str,
}

#[derive(Serialize)]
struct JobTable<'a> {
    name: &'a str,
    entity: &'a str,
    source_sql: &'a str,
    columns: Vec<JobColumn<'a>>,
    partition_key: Vec<&'a str>,
    clustering: Vec<&'a str>,
    source_key: &'a [String],
    split: Option<Split<'a>>,
    estimated_rows: f64,
}

#[derive(Serialize)]
struct JobColumn<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    cql_type: &'a CqlType,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bucket: Option<JobBucket<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    embeds: Option<&'a str>,
}

#[derive(Serialize)]
struct JobBucket<'a> {
    derived_from: &'a str,
    bucket: remodel_model::Bucket,
}

#[derive(Serialize)]
struct Split<'a> {
    driving_table: &'a str,
    alias: &'a str,
    /// `source_sql` with the driving row's ctid as its first column ([`CTID_COLUMN`]).
    sql_with_ctid: String,
}

/// The files of the job folder for `plan`: `reads` names the tables to export, in the order the
/// job fills them, each with how the Rust engine reads it.
pub fn export(
    plan: &Plan,
    reads: &[TableRead],
    opts: &ExportOptions,
) -> Result<Vec<JobFile>, Error> {
    let mut tables = Vec::with_capacity(reads.len());
    for read in reads {
        let t = plan
            .design
            .tables
            .iter()
            .find(|t| t.name == read.table)
            .ok_or_else(|| Error::MissingRead(read.table.clone()))?;
        tables.push(job_table(t, read));
    }
    let job = Job {
        format_version: JOB_FORMAT_VERSION,
        generated_by: format!("remodel {}", env!("CARGO_PKG_VERSION")),
        plan: &opts.plan_label,
        keyspace: &plan.design.keyspace.name,
        source: Endpoint {
            url: opts.source_url.as_deref(),
        },
        target: Target {
            node: opts.target.as_deref(),
        },
        versions: Versions {
            pyspark: PYSPARK_VERSION,
            connector: CONNECTOR,
            pgjdbc: PGJDBC,
        },
        types: &plan.design.types,
        tables,
    };
    let mut json = serde_json::to_string_pretty(&job)?;
    json.push('\n');
    let readme = readme::render(plan, &job.tables, opts);
    Ok(vec![
        JobFile {
            name: "backfill.py",
            text: BACKFILL_PY.to_string(),
            executable: true,
        },
        JobFile {
            name: "job.json",
            text: json,
            executable: false,
        },
        JobFile {
            name: "log4j2.properties",
            text: LOG4J2_PROPERTIES.to_string(),
            executable: false,
        },
        JobFile {
            name: "README.md",
            text: readme,
            executable: false,
        },
    ])
}

fn job_table<'a>(t: &'a DesignTable, read: &'a TableRead) -> JobTable<'a> {
    let keys = t.partition_key.iter().chain(&t.clustering);
    let columns = t
        .columns
        .iter()
        .map(|c| {
            let key = keys.clone().find(|k| k.column == c.name);
            let bucket = key.and_then(|k| {
                Some(JobBucket {
                    derived_from: k.derived_from.as_deref()?,
                    bucket: k.bucket?,
                })
            });
            JobColumn {
                name: &c.name,
                cql_type: &c.cql_type,
                source: c.source.as_ref().map(|s| s.to_string()),
                bucket,
                embeds: c.embeds.as_deref(),
            }
        })
        .collect();
    let split = read.driving.as_ref().and_then(|d| {
        Some(Split {
            driving_table: &d.table,
            alias: &d.alias,
            sql_with_ctid: with_ctid(&t.source_sql, &d.alias)?,
        })
    });
    JobTable {
        name: &t.name,
        entity: &t.entity,
        source_sql: &t.source_sql,
        columns,
        partition_key: t.partition_key.iter().map(|k| k.column.as_str()).collect(),
        clustering: t.clustering.iter().map(|k| k.column.as_str()).collect(),
        source_key: &read.source_key,
        split,
        estimated_rows: t.estimates.rows,
    }
}

/// `SELECT <alias>.ctid AS __remodel_ctid, …rest` of a `SELECT …` statement; `None` for a
/// statement that does not start with a plain `SELECT` (a `DISTINCT` would no longer remove
/// duplicates with the extra column, so such a statement is read whole).
pub fn with_ctid(sql: &str, alias: &str) -> Option<String> {
    let body = sql.trim_start();
    let keyword = body.get(..6)?;
    if !keyword.eq_ignore_ascii_case("select") {
        return None;
    }
    let rest = &body[6..];
    if !rest.starts_with(|c: char| c.is_whitespace()) {
        return None;
    }
    let first = rest.split_whitespace().next()?;
    if first.eq_ignore_ascii_case("distinct") || first.eq_ignore_ascii_case("all") {
        return None;
    }
    let rest = rest.trim_end().trim_end_matches(';');
    Some(format!("SELECT {alias}.ctid AS {CTID_COLUMN},{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ctid_goes_first_in_a_plain_select_only() {
        assert_eq!(
            with_ctid("SELECT t0.a, t0.b FROM x t0;", "t0").as_deref(),
            Some("SELECT t0.ctid AS __remodel_ctid, t0.a, t0.b FROM x t0")
        );
        assert_eq!(
            with_ctid("  select\n t0.a FROM x t0", "t0").as_deref(),
            Some("SELECT t0.ctid AS __remodel_ctid,\n t0.a FROM x t0")
        );
        assert_eq!(with_ctid("SELECT DISTINCT t0.a FROM x t0", "t0"), None);
        assert_eq!(with_ctid("SELECT ALL t0.a FROM x t0", "t0"), None);
        assert_eq!(with_ctid("WITH c AS (SELECT 1) SELECT * FROM c", "c"), None);
        assert_eq!(with_ctid("SELECTx FROM y", "t0"), None);
        assert_eq!(with_ctid("SEL", "t0"), None);
        // A multi-byte first character never splits a char boundary.
        assert_eq!(with_ctid("ÉÉÉÉ x", "t0"), None);
    }

    #[test]
    fn pinned_versions_match_the_install_script() {
        let script = include_str!("../../../scripts/spark");
        let (_, connector) = CONNECTOR.rsplit_once(':').unwrap();
        let (_, pgjdbc) = PGJDBC.rsplit_once(':').unwrap();
        for (var, version) in [
            ("REMODEL_PYSPARK_VERSION", PYSPARK_VERSION),
            ("REMODEL_SCC_VERSION", connector),
            ("REMODEL_PGJDBC_VERSION", pgjdbc),
        ] {
            let default = format!("${{{var}:-{version}}}");
            assert!(
                script.contains(&default),
                "scripts/spark must default {var} to {version}"
            );
        }
        let pom = include_str!("../../../scripts/spark-deps/pom.xml");
        assert!(pom.contains("<artifactId>spark-cassandra-connector_2.12</artifactId>"));
    }
}
