//! The job folder's `README.md`: what the job does and the exact `spark-submit` lines.

use crate::{ExportOptions, JobTable, CONNECTOR, PGJDBC, PYSPARK_VERSION};
use remodel_model::text::shell_word;
use remodel_model::Plan;
use std::fmt::Write;

/// The `--packages` value: the connector and pgjdbc from Maven Central.
fn packages() -> String {
    format!("{CONNECTOR},{PGJDBC}")
}

/// The folder of a file as the command line named it (`.` for none).
fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => ".",
    }
}

pub(crate) fn render(plan: &Plan, tables: &[JobTable<'_>], opts: &ExportOptions) -> String {
    let words = Words::of(opts);
    let mut md = String::new();
    intro(&mut md, plan, tables, opts);
    files_and_requirements(&mut md);
    local_run(&mut md, &words);
    cluster_run(&mut md, &words);
    tables_section(&mut md, tables);
    options_section(&mut md);
    md
}

/// The command lines' words, quoted for the shell: the job's files, the plan, the endpoints.
struct Words {
    log4j: String,
    py: String,
    schema: String,
    source: String,
    target: String,
    plan: String,
}

impl Words {
    fn of(opts: &ExportOptions) -> Words {
        let dir = if opts.job_dir.is_empty() {
            "."
        } else {
            opts.job_dir.as_str()
        };
        let job = |file: &str| shell_word(&format!("{}/{file}", dir.trim_end_matches('/')));
        let source = opts
            .source_url
            .as_deref()
            .unwrap_or("postgres://USER@HOST:5432/DB");
        Words {
            log4j: job("log4j2.properties"),
            py: job("backfill.py"),
            schema: shell_word(&format!("{}/schema.cql", parent(&opts.plan_label))),
            source: shell_word(source),
            target: shell_word(opts.target.as_deref().unwrap_or("HOST:9042")),
            plan: shell_word(&opts.plan_label),
        }
    }
}

/// What the job does, and the counter tables it leaves to `remodel backfill`.
fn intro(md: &mut String, plan: &Plan, tables: &[JobTable<'_>], opts: &ExportOptions) {
    let keyspace = &plan.design.keyspace.name;
    let _ = writeln!(
        md,
        "# Spark backfill of keyspace `{keyspace}`\n\n\
         Written by `remodel export spark` from `{plan}`. `backfill.py` is a PySpark job that fills \
         the plan's {n} target tables from Postgres, as `remodel backfill` does: every table's \
         `source_sql` is read through Spark's JDBC source, one partition per ctid page range of its \
         driving table, every partition's connection inside one snapshot that the driver exports \
         (`pg_export_snapshot()`) and holds open until the last table is written; values are \
         converted exactly (NUMERIC digit for digit, timestamps to UTC milliseconds, arrays and \
         json-aggregated children to CQL collections and UDTs); rows are written with the Spark \
         Cassandra Connector. A row CQL cannot hold (a NULL key, a NaN numeric, …) goes to \
         `OUT/rejects/<table>.jsonl` with its source key and reason; `OUT/summary.json` has the \
         counts. Then `remodel verify --run-dir OUT` checks the result.\n",
        plan = opts.plan_label,
        n = tables.len(),
    );
    let counters = plan.design.counter_tables();
    if !counters.is_empty() {
        let _ = writeln!(
            md,
            "**Not filled by this job: the counter tables {}.** The Spark Cassandra Connector \
             writes rows as upserts, and a counter is only ever added to (a retried task would \
             count twice). Fill them with `remodel backfill --tables {}` (which empties each and \
             adds every group's count once); `remodel verify` checks them like any table.\n",
            counters.join(", "),
            counters.join(",")
        );
    }
}

/// The job folder's files and what the job needs to run.
fn files_and_requirements(md: &mut String) {
    let _ = writeln!(
        md,
        "| file | what |\n|---|---|\n\
         | `backfill.py` | the job (the same for every plan; `--help` lists its options) |\n\
         | `job.json` | every target table: `source_sql`, columns and CQL types, keys, bucket derivations, driving table |\n\
         | `log4j2.properties` | warnings only, so the per-table lines stand out |\n"
    );
    let _ = writeln!(
        md,
        "## What it runs on\n\n\
         PySpark {PYSPARK_VERSION} (`pip install pyspark=={PYSPARK_VERSION}`: Spark 3.5 with Scala \
         2.12), a JDK 17, and two Maven Central artifacts: `{CONNECTOR}` and `{PGJDBC}`. \
         `--packages` fetches them with their dependencies at submit time; where the machines \
         cannot reach Maven Central, fetch the jars once (remodel's `scripts/spark install` does, \
         into `~/.cache/remodel/spark/`) and pass them with `--jars`.\n\n\
         No password goes into these files or onto a command line: the job reads the Postgres one \
         from `REMODEL_SOURCE` (a full URL) or `REMODEL_SOURCE_PASSWORD` / `PGPASSWORD`, and the \
         Cassandra one (with `--target-user`) from `REMODEL_TARGET_PASSWORD`.\n"
    );
}

/// `spark-submit` on this machine.
fn local_run(md: &mut String, w: &Words) {
    let _ = writeln!(
        md,
        "## Local run\n\n\
         ```sh\n\
         export REMODEL_SOURCE_PASSWORD=…   # or REMODEL_SOURCE='postgres://user:…@host:5432/db'\n\
         spark-submit --master 'local[2]' \\\n  \
           --packages {packages} \\\n  \
           --driver-java-options '-Dlog4j2.configurationFile={log4j}' \\\n  \
           {py} --source {source} --target {target} \\\n  \
           --create-schema {schema} --out run-spark\n\
         ```\n\n\
         The same with jars fetched beforehand (`scripts/spark install`, then \
         `eval \"$(scripts/spark env)\"`):\n\n\
         ```sh\n\
         \"$REMODEL_SPARK_SUBMIT\" --master 'local[2]' --jars \"$REMODEL_SPARK_JARS\" \\\n  \
           --driver-java-options '-Dlog4j2.configurationFile={log4j}' \\\n  \
           {py} --source {source} --target {target} --out run-spark\n\
         ```\n",
        packages = packages(),
        log4j = w.log4j,
        py = w.py,
        source = w.source,
        target = w.target,
        schema = w.schema,
    );
}

/// `spark-submit` to a cluster, then `remodel verify`.
fn cluster_run(md: &mut String, w: &Words) {
    let _ = writeln!(
        md,
        "## On a cluster\n\n\
         Run the driver where the job folder is (`--deploy-mode client`): it reads `job.json`, \
         holds the snapshot's transaction and writes `OUT/`. Executors need network access to \
         Postgres and to every Cassandra node; each of them opens one Postgres connection per \
         running partition.\n\n\
         ```sh\n\
         spark-submit --master spark://MASTER:7077 --deploy-mode client \\\n  \
           --packages {packages} \\\n  \
           --files {log4j} \\\n  \
           --conf spark.executor.extraJavaOptions=-Dlog4j2.configurationFile=log4j2.properties \\\n  \
           --driver-java-options '-Dlog4j2.configurationFile={log4j}' \\\n  \
           {py} --source {source} --target {target} --out run-spark \\\n  \
           --range-rows 200000 --consistency LOCAL_QUORUM --throughput-mb-per-sec 20\n\
         ```\n\n\
         (`--master yarn` or `k8s://…` alike.) Then, from a machine with `remodel`:\n\n\
         ```sh\n\
         remodel verify --plan {plan} --source \"$REMODEL_SOURCE\" --target {target} --run-dir run-spark\n\
         ```\n",
        packages = packages(),
        log4j = w.log4j,
        py = w.py,
        source = w.source,
        target = w.target,
        plan = w.plan,
    );
}

/// Each table: where it is read from, how it is cut, its source key.
fn tables_section(md: &mut String, tables: &[JobTable<'_>]) {
    let _ = writeln!(
        md,
        "## Tables\n\n| table | read from | split into ranges of | source key (rejects) |\n|---|---|---|---|"
    );
    for t in tables {
        let split = match &t.split {
            Some(s) => format!("`{}` (ctid pages)", s.driving_table),
            None => "one range (read whole)".to_string(),
        };
        let _ = writeln!(
            md,
            "| `{}` | `{}` | {split} | {} |",
            t.name,
            if t.entity.is_empty() { "?" } else { t.entity },
            t.source_key
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The options of `backfill.py`.
fn options_section(md: &mut String) {
    let _ = writeln!(
        md,
        "\n## Options of `backfill.py`\n\n\
         | option | default | meaning |\n|---|---|---|\n\
         | `--source URL` | `$REMODEL_SOURCE`, else job.json's | Postgres URL; `?options=-c search_path=…` and `sslmode` pass through to pgjdbc |\n\
         | `--target HOST:PORT` | `$REMODEL_TARGET`, else job.json's | a Cassandra contact point |\n\
         | `--target-user USER` | none | password from `REMODEL_TARGET_PASSWORD` |\n\
         | `--tables T,…` | all | only these tables |\n\
         | `--out DIR` | `runs/spark-<UTC time>` | `summary.json` and `rejects/` |\n\
         | `--create-schema FILE` | none | apply a CQL file (`schema.cql`, every statement `IF NOT EXISTS`) first |\n\
         | `--range-rows N` | 50000 | source rows per partition (ctid page range) |\n\
         | `--partitions N` | | partitions per table instead |\n\
         | `--fetchsize N` | 10000 | JDBC fetch size; must be > 0 so each partition reads in its snapshot transaction |\n\
         | `--consistency LEVEL` | `LOCAL_QUORUM` | write consistency |\n\
         | `--batch-grouping KEY` | `partition` | rows grouped into UNLOGGED batches by partition (`replica_set`, `none`) |\n\
         | `--batch-bytes N` | 5120 | bytes per batch at most |\n\
         | `--concurrent-writes N` | 32 | batches in flight per task (two tasks: about the 64 requests of `remodel backfill`) |\n\
         | `--throughput-mb-per-sec X` | none | write throughput limit per core |\n\
         | `--max-row-bytes N` | 16777216 | a row larger than this in a request (counted as `remodel backfill` counts it) is a `too_large` reject |\n\
         | `--max-errors N\\|P%` | 100 | stop (before writing the table) once more than N rows, or P% of the rows read, are rejected |\n\n\
         Exit codes: 0 completed, 1 stopped (too many rejects, a database error), 2 unusable input."
    );
}
