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
//! Architecture invariant: this crate depends on `model` only. Each table's SQL is rendered from
//! the plan's typed source query by the model's one renderer ([`SourceSql`]), as the Rust engine
//! renders it; what else it needs of the Rust engine's reading of a table (its source key) is
//! handed in as [`TableRead`] values by the caller, which takes them from `remodel-backfill`, so
//! both engines read a plan alike.

// Functions stay short enough to read as one pass (ARCHITECTURE.md; `cargo clippy` in CI).
#![warn(clippy::too_many_lines)]

mod readme;

use remodel_model::{CqlType, DesignTable, Plan, SourceEdit, SourceSql, UserType};
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

/// How the Rust engine reads one target table: what the job must do the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRead {
    /// Target table name.
    pub table: String,
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
    source_sql: String,
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
    driving_table: String,
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
        tables.push(job_table(plan, t, read));
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

fn job_table<'a>(plan: &Plan, t: &'a DesignTable, read: &'a TableRead) -> JobTable<'a> {
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
    // The plan's typed source query, rendered as every engine renders it (never its text edited).
    let source = SourceSql::new(&plan.schema, &t.source);
    let split = t.source.splittable().then(|| Split {
        driving_table: source.driving_table(),
        alias: &t.source.alias,
        sql_with_ctid: source.sql(&SourceEdit {
            first_column: Some(&format!("{}.ctid AS {CTID_COLUMN}", t.source.alias)),
            ..SourceEdit::default()
        }),
    });
    JobTable {
        name: &t.name,
        entity: &t.entity,
        source_sql: source.sql(&SourceEdit::default()),
        columns,
        partition_key: t.partition_key.iter().map(|k| k.column.as_str()).collect(),
        clustering: t.clustering.iter().map(|k| k.column.as_str()).collect(),
        source_key: &read.source_key,
        split,
        estimated_rows: t.estimates.rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
