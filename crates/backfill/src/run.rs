//! The run folder: `checkpoint.json` (finished ranges per target table, rewritten with an atomic
//! rename after every range), `rejects/<table>.jsonl`, `backfill.log`, `summary.json` and
//! `verify.json` (the last two in the model's run-folder format, [`remodel_model::RunSummary`] and
//! [`remodel_model::VerifyReport`], which the report reads). Nothing in it holds a password: the
//! source is stored as its redacted URL.

use crate::pg::PageRange;
use crate::time;
use crate::Error;
use remodel_model::{RunSummary, VerifyReport};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Version of the checkpoint format.
pub const CHECKPOINT_VERSION: u32 = 1;

/// What a finished range read and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeDone {
    /// Source rows read.
    pub read: u64,
    /// Rows written.
    pub written: u64,
    /// Rows rejected (read = written + rejected + expired).
    pub rejected: u64,
    /// Rows not written because their TTL instant had passed (a table whose rows expire).
    #[serde(default)]
    pub expired: u64,
    /// The attempt (1 = first run, 2 = first resume …) that finished it.
    pub attempt: u32,
    /// Milliseconds it took.
    pub millis: u64,
}

/// One target table in the checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableCheckpoint {
    /// Target table.
    pub name: String,
    /// Digest of its source_sql and columns; a resume refuses a different one.
    pub fingerprint: String,
    /// The driving table's rows when the run started (progress and ETA).
    pub estimated_rows: f64,
    /// Its ranges, fixed by the first attempt and reused by every resume.
    pub ranges: Vec<PageRange>,
    /// Finished ranges by index.
    pub finished: BTreeMap<usize, RangeDone>,
}

impl TableCheckpoint {
    /// Totals over the finished ranges.
    pub fn totals(&self) -> RangeDone {
        self.finished
            .values()
            .fold(RangeDone::default(), |a, d| RangeDone {
                read: a.read + d.read,
                written: a.written + d.written,
                rejected: a.rejected + d.rejected,
                expired: a.expired + d.expired,
                attempt: a.attempt.max(d.attempt),
                millis: a.millis + d.millis,
            })
    }
}

/// `checkpoint.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// [`CHECKPOINT_VERSION`].
    pub format_version: u32,
    /// The plan file as given on the command line.
    pub plan: String,
    /// Target keyspace.
    pub keyspace: String,
    /// Source URL without password.
    pub source: String,
    /// Target `host:port`.
    pub target: String,
    /// Attempts so far (the first run is 1; 0 while the first has not cut its ranges).
    pub attempts: u32,
    /// The CQL the run was asked to create the schema with (`--create-schema`): a resume applies
    /// it again, so that a run killed before its schema was created creates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_cql: Option<String>,
    /// Per target table.
    pub tables: Vec<TableCheckpoint>,
}

impl Checkpoint {
    /// True before the first attempt cut its ranges: nothing of the run is recorded yet.
    pub fn is_fresh(&self) -> bool {
        self.attempts == 0 && self.tables.is_empty()
    }
}

/// One line of a rejects file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectRecord {
    /// Target table.
    pub table: String,
    /// Range index (a resume drops the records of ranges it reads again).
    pub range: usize,
    /// The source row's key: column name → value as text.
    pub source_key: BTreeMap<String, String>,
    /// The column at fault, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// What kind of problem: `null_key`, `value`, `too_large`, `duplicate_key` (its target key is
    /// another row's: the two would merge into one CQL row) or `refused` (by Cassandra).
    pub kind: String,
    /// Why the row was not stored.
    pub reason: String,
}

/// The lock file of a run folder: locked (`flock`) while a process has the folder open, and
/// holding that process's pid.
pub const LOCK_FILE: &str = "lock";

/// An open run folder.
pub struct RunDir {
    /// Its path.
    pub path: PathBuf,
    /// The locked [`LOCK_FILE`]; the lock goes with the process (or this value).
    _lock: RunLock,
    started: Instant,
    log: Mutex<BufWriter<File>>,
    rejects: Mutex<HashMap<String, BufWriter<File>>>,
}

/// `runs/<UTC time>` under `base`: a fresh folder name for a new run.
pub fn new_run_path(base: &Path) -> PathBuf {
    let now = time::now_secs();
    let (y, m, d) = time::civil_from_days(now.div_euclid(86_400));
    let s = now.rem_euclid(86_400);
    base.join(format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    ))
}

impl RunDir {
    /// Creates (or, to resume, reopens) the folder and its log, and locks it: a second process
    /// on the same folder is refused ([`Error::Locked`]).
    pub fn open(path: &Path) -> Result<RunDir, Error> {
        fs::create_dir_all(path.join("rejects")).map_err(Error::io(path))?;
        let lock = RunLock::acquire(path)?;
        let log_path = path.join("backfill.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(Error::io(&log_path))?;
        Ok(RunDir {
            path: path.to_path_buf(),
            _lock: lock,
            started: Instant::now(),
            log: Mutex::new(BufWriter::new(log)),
            rejects: Mutex::new(HashMap::new()),
        })
    }

    /// `checkpoint.json`'s path.
    pub fn checkpoint_path(&self) -> PathBuf {
        self.path.join("checkpoint.json")
    }

    /// Reads the checkpoint of an earlier attempt.
    pub fn load_checkpoint(&self) -> Result<Checkpoint, Error> {
        let path = self.checkpoint_path();
        let text = fs::read_to_string(&path).map_err(|e| Error::Resume {
            path: path.clone(),
            reason: format!("{e} (is this a run folder of `remodel backfill`?)"),
        })?;
        let cp: Checkpoint = serde_json::from_str(&text).map_err(|e| Error::Resume {
            path: path.clone(),
            reason: format!("not a checkpoint: {e}"),
        })?;
        if cp.format_version != CHECKPOINT_VERSION {
            return Err(Error::Resume {
                path,
                reason: format!(
                    "checkpoint format {} (this remodel writes {CHECKPOINT_VERSION})",
                    cp.format_version
                ),
            });
        }
        Ok(cp)
    }

    /// Writes the checkpoint to a temporary sibling, syncs it and renames it over the old one,
    /// so a crash leaves either the old or the new checkpoint, never half of one.
    pub fn save_checkpoint(&self, cp: &Checkpoint) -> Result<(), Error> {
        let path = self.checkpoint_path();
        let tmp = self.path.join("checkpoint.json.tmp");
        let text = serde_json::to_vec_pretty(cp).map_err(|e| Error::Internal(e.to_string()))?;
        let mut f = File::create(&tmp).map_err(Error::io(&tmp))?;
        f.write_all(&text).map_err(Error::io(&tmp))?;
        f.sync_all().map_err(Error::io(&tmp))?;
        fs::rename(&tmp, &path).map_err(Error::io(&path))?;
        // The rename itself is durable once the folder is synced.
        if let Ok(dir) = File::open(&self.path) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Appends a line to `backfill.log`, prefixed with the seconds since this attempt started.
    pub fn log(&self, line: &str) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        // The log is a diagnostic: a full disk shows up in the checkpoint's write, not here.
        let _ = writeln!(
            log,
            "[{:>9.3}s] {line}",
            self.started.elapsed().as_secs_f64()
        );
        let _ = log.flush();
    }

    fn rejects_path(&self, table: &str) -> PathBuf {
        self.path.join(Self::rejects_file(table))
    }

    /// The rejects folder.
    pub fn rejects_dir(&self) -> PathBuf {
        self.path.join("rejects")
    }

    /// Appends one record to `rejects/<table>.jsonl`.
    pub fn reject(&self, record: &RejectRecord) -> Result<(), Error> {
        let path = self.rejects_path(&record.table);
        let mut files = self.rejects.lock().unwrap_or_else(|p| p.into_inner());
        let file = match files.entry(record.table.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let f = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(Error::io(&path))?;
                v.insert(BufWriter::new(f))
            }
        };
        let line = serde_json::to_string(record).map_err(|e| Error::Internal(e.to_string()))?;
        writeln!(file, "{line}").map_err(Error::io(&path))
    }

    /// Flushes the rejects files (before a range is marked finished, its rejects are on disk).
    pub fn flush_rejects(&self) -> Result<(), Error> {
        let mut files = self.rejects.lock().unwrap_or_else(|p| p.into_inner());
        for (table, f) in files.iter_mut() {
            f.flush().map_err(Error::io(self.rejects_path(table)))?;
        }
        Ok(())
    }

    /// On resume: keeps only the rejects of finished ranges (the others are read again and
    /// would otherwise be listed twice).
    pub fn prune_rejects(&self, table: &str, finished: &BTreeSet<usize>) -> Result<(), Error> {
        let path = self.rejects_path(table);
        let Ok(f) = File::open(&path) else {
            return Ok(());
        };
        let mut kept = Vec::new();
        for line in BufReader::new(f).lines() {
            let line = line.map_err(Error::io(&path))?;
            let keep = serde_json::from_str::<RejectRecord>(&line)
                .map(|r| finished.contains(&r.range))
                .unwrap_or(false);
            if keep {
                kept.push(line);
            }
        }
        let tmp = path.with_extension("jsonl.tmp");
        let mut body = kept.join("\n");
        if !body.is_empty() {
            body.push('\n');
        }
        fs::write(&tmp, body).map_err(Error::io(&tmp))?;
        fs::rename(&tmp, &path).map_err(Error::io(&path))
    }

    /// Writes `summary.json`.
    pub fn save_summary(&self, summary: &RunSummary) -> Result<(), Error> {
        save_json(&self.path.join(RunSummary::FILE), summary)
    }

    /// `rejects/<table>.jsonl` relative to the run folder, as the summary names it.
    pub fn rejects_file(table: &str) -> String {
        format!("rejects/{table}.jsonl")
    }
}

/// A run folder's [`LOCK_FILE`], locked (an advisory `flock`, released by the system when the
/// process ends however it ends, so a crash leaves no stale lock) and holding this process's pid.
/// Released, the file is removed: a run that ended leaves no lock file behind (one killed leaves
/// it with a dead pid, unlocked, which the next run takes over).
pub struct RunLock {
    file: File,
    path: PathBuf,
}

impl RunLock {
    /// Locks `dir`'s [`LOCK_FILE`] (the folder must exist); a folder another process has locked
    /// is refused ([`Error::Locked`], with the pid it wrote).
    pub fn acquire(dir: &Path) -> Result<RunLock, Error> {
        let path = dir.join(LOCK_FILE);
        // A holder that ends removes the file it locked: the file this process opened may be
        // that one, locked but no longer in the folder, while a third process creates and locks
        // a new one. So the lock counts only on the file the folder still holds.
        for _ in 0..16 {
            let file = Self::try_lock(dir, &path)?;
            if same_file(&file, &path) {
                let mut lock = RunLock { file, path };
                lock.write_pid()?;
                return Ok(lock);
            }
        }
        Err(Error::Locked {
            dir: dir.to_path_buf(),
            pid: None,
        })
    }

    fn try_lock(dir: &Path, path: &Path) -> Result<File, Error> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(Error::io(path))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                Err(Error::Locked {
                    dir: dir.to_path_buf(),
                    pid: pid.trim().parse().ok(),
                })
            }
            Err(fs::TryLockError::Error(e)) => Err(Error::io(path)(e)),
        }
    }

    fn write_pid(&mut self) -> Result<(), Error> {
        let path = &self.path;
        self.file.set_len(0).map_err(Error::io(path))?;
        writeln!(self.file, "{}", std::process::id()).map_err(Error::io(path))?;
        self.file.flush().map_err(Error::io(path))
    }
}

impl Drop for RunLock {
    /// Removes the file while it is still locked (the lock goes when the file is closed, right
    /// after), so no other process can have locked it in between.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Whether `path` names the file `file` has open (not one that replaced it).
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Writes `verify.json` into a run folder.
pub fn save_verify(run_dir: &Path, report: &VerifyReport) -> Result<(), Error> {
    save_json(&run_dir.join(VerifyReport::FILE), report)
}

/// Writes a JSON file through a temporary sibling and a rename, so a reader never sees half of it.
fn save_json<T: Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| Error::Internal(e.to_string()))?;
    text.push(b'\n');
    let tmp = path.with_extension("json.tmp");
    fs::write(&tmp, text).map_err(Error::io(&tmp))?;
    fs::rename(&tmp, path).map_err(Error::io(path))
}

/// Reads `rejects/*.jsonl` of a run folder: rejected rows per table (verify subtracts them).
pub fn read_rejects(run_dir: &Path) -> Result<BTreeMap<String, Vec<RejectRecord>>, Error> {
    let dir = run_dir.join("rejects");
    let mut out: BTreeMap<String, Vec<RejectRecord>> = BTreeMap::new();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(&dir)(e)),
    };
    for entry in entries {
        let path = entry.map_err(Error::io(&dir))?.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let f = File::open(&path).map_err(Error::io(&path))?;
        for line in BufReader::new(f).lines() {
            let line = line.map_err(Error::io(&path))?;
            if line.trim().is_empty() {
                continue;
            }
            let r: RejectRecord = serde_json::from_str(&line).map_err(|e| Error::Resume {
                path: path.clone(),
                reason: format!("not a rejects line: {e}"),
            })?;
            out.entry(r.table.clone()).or_default().push(r);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("remodel-run-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        p
    }

    #[test]
    fn checkpoint_round_trips_and_leaves_no_temporary() {
        let path = scratch("cp");
        let run = RunDir::open(&path).unwrap();
        let mut cp = Checkpoint {
            format_version: CHECKPOINT_VERSION,
            plan: "plan.json".into(),
            keyspace: "ks".into(),
            source: "postgres://u@h/db".into(),
            target: "h:9042".into(),
            attempts: 1,
            schema_cql: None,
            tables: vec![TableCheckpoint {
                name: "t".into(),
                fingerprint: "f".into(),
                estimated_rows: 10.0,
                ranges: vec![PageRange { lo: 0, hi: None }],
                finished: BTreeMap::new(),
            }],
        };
        run.save_checkpoint(&cp).unwrap();
        cp.tables[0].finished.insert(
            0,
            RangeDone {
                read: 3,
                written: 2,
                rejected: 1,
                expired: 0,
                attempt: 1,
                millis: 5,
            },
        );
        run.save_checkpoint(&cp).unwrap();
        assert_eq!(run.load_checkpoint().unwrap(), cp);
        assert!(!path.join("checkpoint.json.tmp").exists());
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn resume_prunes_rejects_of_unfinished_ranges() {
        let path = scratch("rejects");
        let run = RunDir::open(&path).unwrap();
        for range in [0, 1, 1] {
            run.reject(&RejectRecord {
                table: "t".into(),
                range,
                source_key: BTreeMap::from([("id".into(), range.to_string())]),
                column: None,
                kind: "value".into(),
                reason: "r".into(),
            })
            .unwrap();
        }
        run.flush_rejects().unwrap();
        drop(run);
        let run = RunDir::open(&path).unwrap();
        run.prune_rejects("t", &BTreeSet::from([0])).unwrap();
        let all = read_rejects(&path).unwrap();
        assert_eq!(all["t"].len(), 1);
        assert_eq!(all["t"][0].range, 0);
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_second_opening_of_a_run_folder_is_refused_until_the_first_is_closed() {
        let path = scratch("lock");
        let first = RunDir::open(&path).unwrap();
        let refused = RunDir::open(&path).err().expect("a second opening");
        let pid = std::process::id();
        assert!(matches!(refused, Error::Locked { pid: Some(p), .. } if p == pid));
        assert!(
            refused.to_string().contains(&format!("(pid {pid})")),
            "{refused}"
        );
        drop(first);
        assert!(
            !path.join(LOCK_FILE).exists(),
            "a closed run folder keeps no lock file"
        );
        RunDir::open(&path).expect("free again once the first is closed");
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_lock_file_left_by_a_killed_process_is_taken_over() {
        let path = scratch("stale-lock");
        fs::create_dir_all(&path).unwrap();
        fs::write(path.join(LOCK_FILE), "999999999\n").unwrap();
        let run = RunDir::open(&path).expect("an unlocked lock file is free");
        let pid = fs::read_to_string(path.join(LOCK_FILE)).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
        drop(run);
        assert!(!path.join(LOCK_FILE).exists());
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn run_paths_are_timestamps() {
        let p = new_run_path(Path::new("runs"));
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(name.len(), "20250101-101500".len(), "{name}");
        assert!(p.starts_with("runs"));
    }
}
