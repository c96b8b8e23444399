//! Reading a backfill run folder: `summary.json` and `verify.json` ([`remodel_model::RunSummary`],
//! [`remodel_model::VerifyReport`]), each of which may be missing (a run still going, verify not
//! run yet) or unreadable (a newer or broken file): the report says which instead of failing;
//! for the backfill of a `remodel sync`, the sync's `sync.json` ([`remodel_model::SyncState`])
//! too.
//! And the same for the folder `remodel replay` wrote its `replay.json` to
//! ([`remodel_model::ReplayReport`]).

use crate::ReportError;
use remodel_model::{ReplayReport, RunSummary, SyncState, VerifyReport};
use serde::de::DeserializeOwned;
use std::path::Path;

/// A file of the run folder as the report found it.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded<T> {
    /// Not there.
    Missing,
    /// There but not readable as expected: the reason.
    Invalid(String),
    /// Read.
    Found(T),
}

impl<T> Loaded<T> {
    /// The value, when read.
    pub fn found(&self) -> Option<&T> {
        match self {
            Loaded::Found(v) => Some(v),
            _ => None,
        }
    }
}

/// A backfill run folder.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFolder {
    /// The backfill's folder as given (inside the sync's folder, for a sync's backfill).
    pub dir: String,
    /// `summary.json`.
    pub summary: Loaded<RunSummary>,
    /// `verify.json`.
    pub verify: Loaded<VerifyReport>,
    /// The `remodel sync` whose backfill this is, when it is one.
    pub sync: Option<SyncFolder>,
}

/// The run folder of a `remodel sync`: its state, while the slot exists or once finished.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncFolder {
    /// The folder, as the report names it.
    pub dir: String,
    /// `sync.json`, or `sync.finished.json` once `remodel sync --finish` dropped the slot.
    pub state: Loaded<SyncState>,
    /// True when the state is `sync.finished.json`.
    pub finished: bool,
}

/// Reads a run folder: a backfill's, or a sync's (`sync.json` and the backfill's folder
/// `backfill/` in it; given the backfill's folder inside a sync's, the sync's state is read
/// too). Only a path that is not a folder is an error.
pub fn read_run(dir: &Path) -> Result<RunFolder, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NotARunFolder {
            path: dir.to_path_buf(),
        });
    }
    let inner = dir.join(SyncState::BACKFILL_DIR);
    let (backfill, sync) = match read_sync(dir) {
        Some(sync) => (inner, Some(sync)),
        None => {
            let parent = dir
                .parent()
                .filter(|_| dir.ends_with(SyncState::BACKFILL_DIR));
            (dir.to_path_buf(), parent.and_then(read_sync))
        }
    };
    Ok(RunFolder {
        dir: backfill.display().to_string(),
        summary: load(&backfill.join(RunSummary::FILE)),
        verify: load(&backfill.join(VerifyReport::FILE)),
        sync,
    })
}

/// The sync state of `dir`, when it is a sync's run folder.
fn read_sync(dir: &Path) -> Option<SyncFolder> {
    let folder = |file: &str, finished: bool| {
        let path = dir.join(file);
        path.is_file().then(|| SyncFolder {
            dir: dir.display().to_string(),
            state: load(&path),
            finished,
        })
    };
    folder(SyncState::FILE, false).or_else(|| folder(SyncState::FINISHED_FILE, true))
}

/// The output of `remodel replay`: `replay.json` and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayFolder {
    /// The file as the report names it (`DIR/replay.json`).
    pub file: String,
    /// `replay.json`.
    pub report: Loaded<ReplayReport>,
}

/// Reads the `replay.json` of the folder `remodel replay --out` wrote (or that file itself); only
/// a path that is neither a folder nor a file is an error.
pub fn read_replay(path: &Path) -> Result<ReplayFolder, ReportError> {
    let file = if path.is_dir() {
        path.join(ReplayReport::FILE)
    } else if path.is_file() {
        path.to_path_buf()
    } else {
        return Err(ReportError::NotAReplay {
            path: path.to_path_buf(),
        });
    };
    Ok(ReplayFolder {
        file: file.display().to_string(),
        report: load(&file),
    })
}

fn load<T: DeserializeOwned>(path: &Path) -> Loaded<T> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded::Missing,
        Err(e) => Loaded::Invalid(e.to_string()),
        Ok(text) => match serde_json::from_str(&text) {
            Ok(v) => Loaded::Found(v),
            Err(e) => Loaded::Invalid(e.to_string()),
        },
    }
}
