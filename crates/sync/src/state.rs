//! `sync.json`: what a sync run has done, in its run folder, replaced whole (write then rename)
//! after every transaction Cassandra acknowledged. The slot is confirmed up to `applied_lsn` only
//! after this file holds it, so a restart never skips a change: it applies again, with the same
//! timestamps, what came after the file's LSN. The type is the model's ([`SyncState`]): the
//! report reads the same file.

use crate::Error;
pub use remodel_model::{SlotColumn, SyncState};
use std::path::{Path, PathBuf};

/// The state in `dir`, if a run wrote one (`sync.json`).
pub fn load(dir: &Path) -> Result<Option<SyncState>, Error> {
    read(&dir.join(SyncState::FILE))
}

/// The state `remodel sync --finish` left in `dir` (`sync.finished.json`), if it did.
pub fn load_finished(dir: &Path) -> Result<Option<SyncState>, Error> {
    read(&dir.join(SyncState::FINISHED_FILE))
}

fn read(path: &Path) -> Result<Option<SyncState>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Io {
            path: path.to_path_buf(),
            message: format!("not a sync state: {e}"),
        })
}

/// Writes `state` to `dir` whole: a crash leaves the old file or the new one.
pub fn save(state: &SyncState, dir: &Path) -> Result<(), Error> {
    let path = dir.join(SyncState::FILE);
    let tmp = dir.join("sync.json.tmp");
    let text = serde_json::to_vec_pretty(state).map_err(|e| Error::Io {
        path: path.clone(),
        message: e.to_string(),
    })?;
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: PathBuf::from(path),
        message: e.to_string(),
    }
}

/// An LSN as Postgres prints it (`16/B374D848`).
pub fn format_lsn(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// An LSN printed by Postgres, as a number.
pub fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_round_trip_as_postgres_prints_them() {
        assert_eq!(parse_lsn("16/B374D848"), Some(0x16_B374_D848));
        assert_eq!(format_lsn(0x16_B374_D848), "16/B374D848");
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("x"), None);
    }
}
