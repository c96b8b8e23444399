//! The report's "Cut-over runbook" run as a user runs it (issue 37): rideshare with 30,000 trips,
//! the runbook chapter that `remodel plan` wrote read back, its `sh` blocks run one command at a
//! time in one POSIX shell (so `$FOLLOW`, `wait` and the variables carry from step to step), with
//! only step 0's variables set to this test's databases (`SOURCE` and `SCRATCH` without their
//! password, given in `PGPASSWORD` as the runbook says) and `remodel` this build. A writer
//! changes trips, drivers and cities from the moment the slot exists until the writes "switch"
//! (step 5), pausing for step 3's verification as the runbook advises. Every command must exit as
//! the runbook documents it (0; `wait` on the follow 130), verify must pass twice with 0
//! differences and replay find none, every change the writer committed must be applied once, the
//! resume command the follow printed when stopped must work as printed, and at the end no
//! replication slot, publication, lock file, scratch keyspace or generated table is left, and
//! `trips` has its replica identity back.

mod support;

use remodel_testdb::PgSchema;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::live::Case;
use support::sync::{assert_trip_tables_equal, Writer};

/// Trips loaded: the figure of the issue's trial.
const TRIPS: u64 = 30_000;
/// Drivers `example-data` makes for them (one per 200 trips).
const DRIVERS: u64 = TRIPS / 200;
/// The writer's pace: a round (5 or 6 row changes) every 100 ms at most.
const PACE: Duration = Duration::from_millis(100);
/// The longest a runbook command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// One POSIX shell the runbook's commands run in, one at a time, its stdout and stderr read
/// line by line.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Shell {
    /// `sh` in `dir`, with this build's `remodel` first on `PATH` and none of the connection
    /// variables of the test's environment.
    fn start(dir: &Path) -> Shell {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_remodel"));
        let path = format!(
            "{}:{}",
            bin.parent().expect("the binary's folder").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut child = Command::new("sh")
            .current_dir(dir)
            .env("PATH", path)
            .env_remove("REMODEL_SOURCE")
            .env_remove("REMODEL_TARGET")
            .env_remove("PGPASSWORD")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut shell = Shell {
            child,
            stdin,
            lines,
        };
        // Both streams of every command, in order, through the one pipe.
        shell.run("exec 2>&1");
        shell
    }

    /// Runs `command` (lines joined by `\`), returns its exit status and what it printed.
    fn run(&mut self, command: &str) -> (i32, String) {
        const MARK: &str = "@@runbook-exit=";
        writeln!(self.stdin, "{command}\necho \"{MARK}$?\"").expect("write to sh");
        self.stdin.flush().expect("flush");
        let started = Instant::now();
        let mut out = String::new();
        loop {
            let left = COMMAND_TIMEOUT.saturating_sub(started.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(line) => match line.strip_prefix(MARK) {
                    Some(code) => return (code.trim().parse().expect("a status"), out),
                    None => {
                        out.push_str(&line);
                        out.push('\n');
                    }
                },
                Err(RecvTimeoutError::Timeout) => panic!("{command}: still running\n{out}"),
                Err(RecvTimeoutError::Disconnected) => panic!("{command}: sh ended\n{out}"),
            }
        }
    }

    /// Runs `command`, asserts it exits with `code`, returns what it printed.
    fn expect(&mut self, command: &str, code: i32) -> String {
        eprintln!("runbook $ {command}");
        let (status, out) = self.run(command);
        assert_eq!(status, code, "{command}\n{out}");
        out
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        // A follow still running (a failed test) goes first, whatever it handles: its slot is
        // dropped after.
        let _ = writeln!(
            self.stdin,
            "[ -n \"$FOLLOW\" ] && kill -9 \"$FOLLOW\" && wait \"$FOLLOW\"\nexit"
        );
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

/// A runbook step: its number and the commands of its `sh` blocks (continued lines joined).
struct Step {
    number: u32,
    blocks: Vec<Vec<String>>,
}

/// The steps of the runbook chapter, each with its `sh` blocks.
fn steps(runbook: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = runbook.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("## ") {
            let number = rest.split('.').next().and_then(|n| n.parse().ok());
            out.push(Step {
                number: number.unwrap_or_else(|| panic!("a numbered step: {line}")),
                blocks: Vec::new(),
            });
        } else if line == "```sh" {
            let mut commands: Vec<String> = Vec::new();
            let mut open = false;
            for l in lines.by_ref().take_while(|l| *l != "```") {
                match commands.last_mut() {
                    Some(c) if open => c.push_str(&format!("\n{l}")),
                    _ => commands.push(l.to_string()),
                }
                open = l.ends_with('\\');
            }
            out.last_mut()
                .expect("a block inside a step")
                .blocks
                .push(commands);
        }
    }
    out
}

/// A URL without its password, and the password.
fn split_password(url: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (user_info, host) = rest.split_once('@').expect("a user");
    let (user, password) = user_info.split_once(':').expect("a password");
    (format!("{scheme}://{user}@{host}"), password.to_string())
}

/// Step 0's variables, set to this test's databases where the runbook has placeholders;
/// asserts the runbook sets exactly these.
fn variables(block: &[String], source: &str, scratch: &str, target: &str) -> Vec<String> {
    let (source, password) = split_password(source);
    let (scratch, _) = split_password(scratch);
    let mut names = Vec::new();
    let set: Vec<String> = block
        .iter()
        .map(|line| {
            let assignment = line.strip_prefix("export ").unwrap_or(line);
            let (name, _) = assignment.split_once('=').expect("NAME=value");
            names.push(name.to_string());
            let value = match name {
                "SOURCE" => format!("'{source}'"),
                "PGPASSWORD" => format!("'{password}'"),
                "TARGET" => format!("'{target}'"),
                "SCRATCH" => format!("'{scratch}'"),
                _ => return line.clone(),
            };
            let export = if line.starts_with("export ") {
                "export "
            } else {
                ""
            };
            format!("{export}{name}={value}")
        })
        .collect();
    assert_eq!(
        names,
        ["PLAN", "SOURCE", "PGPASSWORD", "TARGET", "SCRATCH", "RUN"],
        "step 0's variables"
    );
    set
}

/// The exit status the runbook documents for `command`.
fn documented_exit(command: &str) -> i32 {
    if command.starts_with("wait ") {
        130
    } else {
        0
    }
}

/// Waits until `sync.json` in `run` counts `changes` row changes applied.
fn wait_applied(run: &Path, changes: u64, what: &str) {
    let started = Instant::now();
    loop {
        let applied = support::live::json(&run.join("sync.json"))["changes"]
            .as_u64()
            .unwrap_or(0);
        if applied == changes {
            return;
        }
        assert!(
            applied < changes,
            "{what}: {applied} applied, {changes} committed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{what}: {applied} of {changes} row changes applied after 300 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Drops what a failed run leaves on the shared databases: the slot and publication of the
/// run folder's `sync.json` (a finished run has none), and the scratch keyspace.
struct Leftovers {
    url: String,
    node: String,
    run: PathBuf,
    scratch_keyspace: String,
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        if let Ok(text) = std::fs::read_to_string(self.run.join("sync.json")) {
            let state: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if let Some(slot) = state["slot"].as_str() {
                drop(support::sync::SlotGuard {
                    url: self.url.clone(),
                    slot: slot.to_string(),
                });
            }
        }
        let (node, ks) = (self.node.clone(), self.scratch_keyspace.clone());
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async {
                if let Ok(s) = remodel_testdb::connect_cql(&node, Duration::from_secs(30)).await {
                    let cql = format!("DROP KEYSPACE IF EXISTS {ks}");
                    let _ = s.query_unpaged(cql, &[]).await;
                }
            })
        })
        .join();
    }
}

/// A writer that starts once `run/sync.json` exists (the slot is created: every change it
/// commits is streamed, and counted) on its own thread; `None` when the file never came.
fn writer_once_the_slot_exists(
    url: String,
    run: PathBuf,
    next: Arc<AtomicU64>,
) -> std::thread::JoinHandle<Option<Writer>> {
    std::thread::spawn(move || {
        let started = Instant::now();
        while !run.join("sync.json").is_file() {
            if started.elapsed() > Duration::from_secs(600) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Writer::start(&url, TRIPS, DRIVERS, PACE, next))
    })
}

/// Runs every command of `step`'s blocks, each expected to exit as documented.
fn run_step(shell: &mut Shell, step: &Step) -> Vec<String> {
    step.blocks
        .iter()
        .flatten()
        .map(|c| shell.expect(c, documented_exit(c)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_runbook_runs_as_printed_live() {
    remodel_testdb::live!(Postgres, Cassandra, Mdbook, Psql);
    let started = Instant::now();
    let case = Case::new("runbook_live").await;
    let scratch = PgSchema::create("runbook_scratch")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let plan = case.rideshare(TRIPS);
    let plan_dir = Path::new(&plan).parent().expect("the plan's folder");
    let runbook = std::fs::read_to_string(plan_dir.join("report/src/runbook.md"))
        .expect("the runbook `remodel plan` wrote");
    let steps = steps(&runbook);
    let numbers: Vec<u32> = steps.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 6], "the runbook's steps");
    let run = case.dir.join("runs/sync");
    let _leftovers = Leftovers {
        url: case.url.clone(),
        node: case.ks.node().to_string(),
        run: run.clone(),
        scratch_keyspace: format!("{}_scratch", case.ks.name()),
    };
    eprintln!(
        "runbook live: {TRIPS} trips loaded and planned in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mut shell = Shell::start(&case.dir);

    step_0(&mut shell, &steps[0], &case, &scratch).await;
    assert!(steps[1].blocks.is_empty(), "step 1 needs no command");

    // 2. REPLICA IDENTITY FULL, the backfill and the catch-up while the writer writes, then
    // the follow in the background.
    let next = Arc::new(AtomicU64::new(1));
    let pending = writer_once_the_slot_exists(case.url.clone(), run.clone(), next.clone());
    let out = run_step(&mut shell, &steps[2]);
    let writer = pending
        .join()
        .expect("writer thread")
        .expect("the slot was created");
    assert_caught_up(&out);
    eprintln!(
        "runbook live: step 2 done, {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let first = step_3(&mut shell, &steps[3], &case, &run, writer);

    // 4. Reads move; the application still writes to Postgres meanwhile.
    assert!(steps[4].blocks.is_empty(), "step 4 runs no command");
    let writer = Writer::start(&case.url, TRIPS, DRIVERS, PACE, next.clone());
    std::thread::sleep(Duration::from_secs(5));
    // 5. Writes move: none reaches Postgres any more.
    let (_, second) = writer.stop();
    step_5(&mut shell, &steps[5], &run, &split_password(&case.url).1);
    wait_applied(&run, first + second, "after step 5");

    // 6. Verify once more, drop the slot, revert the replica identity.
    assert_trip_tables_equal(&case, "before step 6").await;
    let out = run_step(&mut shell, &steps[6]);
    assert!(out[0].contains("verify: all 4 tables match"), "{}", out[0]);
    assert!(out[1].contains("slot remodel_sync: dropped"), "{}", out[1]);
    let again = shell.expect(
        "remodel sync --finish --source \"$SOURCE\" --run-dir \"$RUN\"",
        0,
    );
    assert!(
        again.starts_with("already finished: slot remodel_sync"),
        "{again}"
    );
    drop(shell);
    assert_nothing_left(&case, &run).await;
    eprintln!(
        "runbook live test: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    scratch.cleanup().await.unwrap_or_else(|e| panic!("{e}"));
    case.cleanup().await;
}

/// Step 0: the variables (this test's databases in place of the placeholders), then the proof
/// on scratch ground: a keyspace of its own, dropped after with the generated tables.
async fn step_0(shell: &mut Shell, step: &Step, case: &Case, scratch: &PgSchema) {
    let [setup, prove] = &step.blocks[..] else {
        panic!("step 0: the variables and the replay: {:?}", step.blocks);
    };
    for line in variables(setup, &case.url, &scratch.url(), case.ks.node()) {
        shell.expect(&line, 0);
    }
    let replayed = shell.expect(&prove[0], 0);
    assert!(replayed.contains(", 0 mismatches"), "{replayed}");
    assert!(
        replayed.contains(&format!(
            "cleanup: dropped keyspace {}_scratch",
            case.ks.name()
        )),
        "{replayed}"
    );
    shell.expect(&prove[1], 0);
    let left = scratch
        .client()
        .query(
            "SELECT 1 FROM pg_tables WHERE schemaname = $1",
            &[&scratch.name()],
        )
        .await
        .expect("scratch tables");
    assert!(left.is_empty(), "--cleanup leaves no generated table");
}

/// Step 3 at a quiet moment: the writer pauses, the follow applies everything it committed,
/// then verify, replay and the report with the sync's chapter; returns the row changes written.
fn step_3(shell: &mut Shell, step: &Step, case: &Case, run: &Path, writer: Writer) -> u64 {
    let (rounds, first) = writer.stop();
    wait_applied(run, first, "before step 3");
    let out = run_step(shell, step);
    eprintln!("runbook live: step 3's verify printed\n{}", out[0]);
    assert!(out[0].contains("verify: all 4 tables match"), "{}", out[0]);
    assert!(out[1].contains(", 0 mismatches"), "{}", out[1]);
    let chapter = std::fs::read_to_string(case.dir.join("report/src/backfill.md"))
        .expect("the report's run chapter");
    assert!(chapter.contains("## Sync\n"), "{chapter}");
    assert!(chapter.contains("**The slot is still there**"), "{chapter}");
    eprintln!("runbook live: step 3 done after {rounds} writer rounds ({first} row changes)");
    first
}

/// Step 2 printed what the catch-up applied, both counts, and the command that follows on.
fn assert_caught_up(out: &[String]) {
    let caught = out
        .iter()
        .find(|o| o.contains("caught up at LSN"))
        .expect("caught up");
    eprintln!("runbook live: step 2 printed\n{caught}");
    assert!(caught.contains(": this command applied "), "{caught}");
    assert!(caught.contains("since its slot was created"), "{caught}");
    assert!(
        caught.contains("follow on with: remodel sync ") && caught.contains(" --follow\n"),
        "{caught}"
    );
}

/// Step 5: the follow stopped (`kill`, `wait`: 130), the resume command it printed run as
/// printed (it follows, and stops on SIGTERM again), then the last catch-up.
fn step_5(shell: &mut Shell, step: &Step, run: &Path, password: &str) {
    let commands: Vec<&String> = step.blocks.iter().flatten().collect();
    let [kill, wait, catch_up] = commands[..] else {
        panic!("step 5: kill, wait, catch up: {commands:?}");
    };
    shell.expect(kill, 0);
    shell.expect(wait, 130);
    let log = std::fs::read_to_string(run.join("follow.log")).expect("the follow's log");
    assert!(log.contains("sync: interrupted (SIGTERM)"), "{log}");
    let printed = log
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume command in\n{log}"));
    assert!(printed.ends_with(" --follow"), "{printed}");
    // No note: the URL given had no password to leave out.
    assert!(!log.contains("password"), "{log}");
    // The test databases' password is `remodel`, the program's own name, which every printed
    // line masks wherever it appears (PGPASSWORD's value): put it back to run the line.
    let resume = printed.replace("***", password);
    shell.expect(&format!("{resume} > \"$RUN/resumed.log\" 2>&1 &"), 0);
    shell.expect("RESUMED=$!", 0);
    let started = Instant::now();
    while !std::fs::read_to_string(run.join("resumed.log"))
        .unwrap_or_default()
        .contains("until stopped")
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the printed resume command did not reach streaming: {}",
            std::fs::read_to_string(run.join("resumed.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    shell.expect("kill \"$RESUMED\"", 0);
    shell.expect("wait \"$RESUMED\"", 130);
    let out = shell.expect(catch_up, 0);
    assert!(out.contains("caught up at LSN"), "{out}");
}

/// No slot or publication of the run, no lock file in its folders, `trips` back to its default
/// replica identity, the run folder's state renamed.
async fn assert_nothing_left(case: &Case, run: &Path) {
    let client = case.pg.client();
    let slots = client
        .query(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'remodel_sync'",
            &[],
        )
        .await
        .expect("slots");
    assert!(slots.is_empty(), "the slot is left");
    let publications = client
        .query(
            "SELECT 1 FROM pg_publication WHERE pubname = 'remodel_sync'",
            &[],
        )
        .await
        .expect("publications");
    assert!(publications.is_empty(), "the publication is left");
    for dir in [run.to_path_buf(), run.join("backfill")] {
        assert!(!dir.join("lock").exists(), "{}/lock is left", dir.display());
    }
    assert!(run.join("sync.finished.json").is_file());
    assert!(!run.join("sync.json").exists());
    let identity: i8 = client
        .query_one(
            "SELECT relreplident::\"char\" FROM pg_class WHERE oid = 'trips'::regclass",
            &[],
        )
        .await
        .expect("replica identity")
        .get(0);
    assert_eq!(
        identity as u8, b'd',
        "trips' replica identity is DEFAULT again"
    );
}
