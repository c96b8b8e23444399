//! A scratch folder that removes itself: tests write certificates and private keys into the temp
//! dir, and a folder left behind by a test (passed, failed or panicked) would keep them there.

use std::path::{Path, PathBuf};

/// A fresh folder `remodel-LABEL-PID` of the temp dir, removed with everything in it when this
/// value is dropped — at the end of the test, and also while a failing test's panic unwinds.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates the folder (a leftover of a crashed run of the same process id is removed first).
    pub fn new(label: &str) -> std::io::Result<ScratchDir> {
        let path = std::env::temp_dir().join(format!("remodel-{label}-{}", std::process::id()));
        match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir { path })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Nothing to report to: a folder already gone is what was wanted.
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!("could not remove {}: {e}", self.path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_goes_when_dropped_also_on_panic() {
        let dir = ScratchDir::new("scratch-drop").unwrap();
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("key.pem"), "secret").unwrap();
        drop(dir);
        assert!(!path.exists());

        let path = std::panic::catch_unwind(|| {
            let dir = ScratchDir::new("scratch-panic").unwrap();
            std::fs::write(dir.join("key.pem"), "secret").unwrap();
            let path = dir.path().to_path_buf();
            std::panic::panic_any(path);
        })
        .unwrap_err()
        .downcast::<PathBuf>()
        .unwrap();
        assert!(!path.exists(), "{} is left behind", path.display());
    }
}
