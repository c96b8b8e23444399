//! Output files as every subcommand writes them: whole or not at all.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename: a full
/// disk or a crash leaves the old file or none, never half a plan, and a symlink at `path` is
/// replaced, not followed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes (a plan streamed, not held as one string).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let tmp = path.with_file_name(format!(".{}.{}.tmp", file_name(path), std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            write(&mut w)?;
            w.flush()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// The file name of `p` as text (empty when `p` has none).
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}
