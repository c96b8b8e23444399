//! `remodel schema`: load DDL files and summarise them.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `remodel schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// DDL files to load, in order (later files may ALTER tables of earlier ones).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the Schema model as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `remodel schema`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("schema loading is not built yet ({} files given)", args.files.len())
}
