//! Live backfill cases: a fresh Postgres schema, Cassandra keyspace and scratch folder, and the
//! `remodel` commands of a backfill run against them.

use super::{remodel_ok, scratch};
use remodel_model::Plan;
use remodel_replay::compare::ReadCheck;
use remodel_replay::{Params, Replayer};
use remodel_testdb::{CqlKeyspace, PgSchema};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// One test's databases and scratch folder.
pub struct Case {
    /// Its Postgres schema.
    pub pg: PgSchema,
    /// Its Cassandra keyspace (the plans are made for it).
    pub ks: CqlKeyspace,
    /// Its scratch folder.
    pub dir: PathBuf,
    /// The Postgres URL with the schema as search path.
    pub url: String,
    /// `remodel plan`'s `--replication` for the keyspace (`None`: the default, 1).
    pub replication: Option<&'static str>,
}

/// The keyspace replication of the local cluster's tests: three replicas in its one datacenter,
/// as a CQL map and as `remodel plan --replication` takes it.
pub const CLUSTER_REPLICATION: (&str, &str) = (
    "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}",
    "datacenter1=3",
);

impl Case {
    /// Creates the schema, the keyspace and the folder, all named after `label`.
    pub async fn new(label: &str) -> Case {
        let ks = CqlKeyspace::create(label)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Case::with_keyspace(label, ks, None).await
    }

    /// The same, the keyspace on the local cluster of `scripts/db up cluster`, three replicas
    /// of every row ([`CLUSTER_REPLICATION`]), and its plans made so.
    pub async fn on_cluster(label: &str) -> Case {
        let node = remodel_testdb::cluster_node().unwrap_or_else(|e| panic!("{e}"));
        Case::replicated(label, &node, CLUSTER_REPLICATION).await
    }

    /// The schema and folder as [`Case::new`] makes them, the keyspace on the cluster of `node`
    /// with `replication` (its CQL map, and `remodel plan`'s `--replication`).
    pub async fn replicated(label: &str, node: &str, replication: (&str, &'static str)) -> Case {
        let ks = CqlKeyspace::create_replicated(node, label, replication.0)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Case::with_keyspace(label, ks, Some(replication.1)).await
    }

    /// The schema and the folder named after `label`, beside the keyspace `ks`.
    async fn with_keyspace(
        label: &str,
        ks: CqlKeyspace,
        replication: Option<&'static str>,
    ) -> Case {
        let pg = PgSchema::create(label)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let url = pg.url();
        Case {
            pg,
            ks,
            dir: scratch(label),
            url,
            replication,
        }
    }

    /// Runs `sql` (a fixture's schema and its rows) in this case's schema, then refreshes the
    /// statistics of its tables (the plan reads their row counts); panics naming `what`.
    pub async fn load(&self, sql: &str, what: &str) {
        self.pg
            .client()
            .batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("load {what}: {e}"));
        self.pg
            .analyze()
            .await
            .unwrap_or_else(|e| panic!("load {what}: {e}"));
    }

    /// Runs `remodel plan INPUT` for this keyspace (and its replication); returns the
    /// plan.json path as text.
    pub fn plan(&self, input: &str) -> String {
        let out = self.dir.join("plan");
        let plan = match self.replication {
            None => super::plan_into(input, self.ks.name(), &out),
            Some(r) => {
                let out_s = out.to_string_lossy().to_string();
                remodel_ok(&[
                    "plan",
                    input,
                    "--keyspace",
                    self.ks.name(),
                    "--replication",
                    r,
                    "--out",
                    &out_s,
                ]);
                out.join("plan.json")
            }
        };
        plan.to_string_lossy().into_owned()
    }

    /// Loads `trips` generated rideshare trips and plans the example; returns the plan path.
    pub fn rideshare(&self, trips: u64) -> String {
        let n = trips.to_string();
        remodel_ok(&[
            "example-data",
            "rideshare",
            "--source",
            &self.url,
            "--trips",
            &n,
        ]);
        self.plan("examples/rideshare")
    }

    /// Backfills PLAN into this case's keyspace, creating its tables (run folder `DIR/run`), and
    /// returns the plan as read back from the file.
    pub fn backfill_created(&self, plan: &str) -> Plan {
        let run = self.dir.join("run");
        remodel_ok(&refs(&self.backfill_args(plan, &run, &["--create-schema"])));
        serde_json::from_str(&std::fs::read_to_string(plan).expect("plan.json"))
            .expect("plan.json parses")
    }

    /// `backfill --plan PLAN --source … --target … --run-dir RUN --progress lines EXTRA…`.
    pub fn backfill_args(&self, plan: &str, run: &Path, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "backfill",
            "--plan",
            plan,
            "--source",
            &self.url,
            "--target",
            self.ks.node(),
            "--run-dir",
            &run.to_string_lossy(),
            "--progress",
            "lines",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// Runs `remodel verify` with `extra` flags, asserts it passes, returns its stdout.
    pub fn verify(&self, plan: &str, extra: &[&str]) -> String {
        let out = self.verify_output(plan, extra);
        assert!(
            out.status.success(),
            "remodel verify {} failed ({}):\n{}\n{}",
            extra.join(" "),
            out.status,
            super::text(&out.stdout),
            super::text(&out.stderr)
        );
        super::text(&out.stdout)
    }

    /// Runs `remodel verify` with `extra` flags; returns what it did.
    pub fn verify_output(&self, plan: &str, extra: &[&str]) -> std::process::Output {
        let mut args = vec![
            "verify",
            "--plan",
            plan,
            "--source",
            &self.url,
            "--target",
            self.ks.node(),
        ];
        args.extend(extra);
        super::remodel(&args)
    }

    /// The password of the Postgres URL.
    pub fn password(&self) -> String {
        self.url
            .split_once("://")
            .and_then(|(_, rest)| rest.split_once('@'))
            .and_then(|(user_info, _)| user_info.split_once(':'))
            .map(|(_, pw)| pw.to_string())
            .expect("a password in REMODEL_PG_URL")
    }

    /// Writes `plan` to `NAME/plan.json` in the scratch folder and runs `remodel replay --existing`
    /// of it with `extra` flags; returns the exit code, what it printed and `replay.json`.
    pub fn replay_existing(
        &self,
        plan: &serde_json::Value,
        name: &str,
        extra: &[&str],
    ) -> (Option<i32>, String, serde_json::Value) {
        let folder = self.dir.join(name);
        std::fs::create_dir_all(&folder).expect("create the plan's folder");
        let file = folder.join("plan.json");
        std::fs::write(
            &file,
            serde_json::to_string_pretty(plan).expect("plan as JSON"),
        )
        .expect("write plan.json");
        let file = file.to_string_lossy().to_string();
        let mut args = vec![
            "replay",
            "--plan",
            &file,
            "--source",
            &self.url,
            "--target",
            self.ks.node(),
            "--existing",
            "--now",
            super::REPLAY_NOW,
        ];
        args.extend(extra);
        let out = super::remodel(&args);
        let shown = format!("{}\n{}", super::text(&out.stdout), super::text(&out.stderr));
        let report = json(&folder.join("replay.json"));
        (out.status.code(), shown, report)
    }

    /// `remodel replay --writes` of the plan at `plan` on generated rows (`samples`, `rows`,
    /// `seed`), its report in `NAME/replay` of the scratch folder; fails unless it ran (exit 0
    /// or 1); returns replay.json and what the command printed.
    pub fn replay_writes(
        &self,
        plan: &str,
        samples: u32,
        rows: u32,
        seed: u64,
    ) -> (serde_json::Value, String) {
        let out = self.dir.join("replay");
        let out_s = out.to_string_lossy().to_string();
        let (samples, rows, seed) = (samples.to_string(), rows.to_string(), seed.to_string());
        let run = super::remodel(&[
            "replay",
            "--plan",
            plan,
            "--source",
            &self.url,
            "--target",
            self.ks.node(),
            "--writes",
            "--samples",
            &samples,
            "--rows",
            &rows,
            "--seed",
            &seed,
            "--now",
            super::REPLAY_NOW,
            "--out",
            &out_s,
        ]);
        let shown = format!("{}\n{}", super::text(&run.stdout), super::text(&run.stderr));
        assert!(
            matches!(run.status.code(), Some(0 | 1)),
            "remodel replay {plan} failed:\n{shown}"
        );
        (json(&out.join("replay.json")), shown)
    }

    /// Drops the schema, the keyspace and the folder.
    pub async fn cleanup(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        self.pg.cleanup().await.unwrap_or_else(|e| panic!("{e}"));
        self.ks.cleanup().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Refs of owned arguments, for [`super::remodel`].
pub fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Polls `ready` every 50 ms while `child` runs; panics after `secs` or when the child ends first.
pub fn wait_until(child: &mut Child, secs: u64, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not within {secs} s");
        assert!(
            child.try_wait().expect("poll the child").is_none(),
            "{what}: the backfill ended first"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A JSON file of the run folder.
/// The id of the plan's workload pattern whose SQL starts with `sql_start`.
pub fn pattern_id<'p>(plan: &'p serde_json::Value, sql_start: &str) -> &'p str {
    plan["workload"]["patterns"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["sql"].as_str().is_some_and(|s| s.starts_with(sql_start)))
        })
        .and_then(|p| p["id"].as_str())
        .unwrap_or_else(|| panic!("no pattern {sql_start}"))
}

/// The replay report's entry of the plan's pattern whose SQL starts with `sql_start`.
pub fn replayed<'r>(
    report: &'r serde_json::Value,
    sql_start: &str,
    plan: &serde_json::Value,
) -> &'r serde_json::Value {
    let id = pattern_id(plan, sql_start);
    report["patterns"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pattern"] == id))
        .unwrap_or_else(|| panic!("{id} is not in replay.json"))
}

/// Asserts that write pattern entry `w` of replay.json (named `what`) was replayed, compared
/// reads after its samples, and found no difference.
pub fn assert_write_clean(w: &serde_json::Value, what: &str, shown: &str) {
    assert_eq!(w["outcome"], "replayed", "{what}: {w:#}\n{shown}");
    assert!(w["samples"].as_u64().unwrap_or(0) > 0, "{what}: {w:#}");
    assert!(
        w["reads_after"].as_u64().unwrap_or(0) > 0,
        "{what}: no read compared after the write: {w:#}\n{shown}"
    );
    assert_eq!(
        w["mismatches"].as_array().map(Vec::len).unwrap_or(0),
        0,
        "{what}: {w:#}\n{shown}"
    );
}

pub fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that read `id` with `values` returns on Cassandra what it returns on Postgres (the
/// difference shown with both sides' statements); returns the number of rows.
pub async fn read_matches(r: &mut Replayer<'_>, id: &str, values: &[Option<&str>]) -> usize {
    let c = read_check(r, id, values).await;
    if let Some(d) = &c.difference {
        panic!(
            "{id} {values:?}: {}\nSQL:\n  {}\nCassandra:\n  {}",
            d.reason,
            d.sql.join("\n  "),
            d.cql.join("\n  ")
        );
    }
    c.cql.rows.len()
}

/// Read `id` with `values` run on both sides and compared.
pub async fn read_check(r: &mut Replayer<'_>, id: &str, values: &[Option<&str>]) -> ReadCheck {
    let p = r.prepare(id).await.unwrap_or_else(|e| panic!("{e}"));
    let params = Params::from_text(r.pg(), &p.param_types, values)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    r.check_read(&p, &params)
        .await
        .unwrap_or_else(|e| panic!("{id} with {}: {e}", params.show()))
}
