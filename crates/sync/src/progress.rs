//! What a sync tells while it runs: the status of its stream, through a trait the cli draws.

/// Where streaming is.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Transactions this command applied.
    pub transactions: u64,
    /// Row changes this command applied.
    pub changes: u64,
    /// Transactions applied in the run folder, every command on it (`sync.json`).
    pub total_transactions: u64,
    /// Row changes applied in the run folder, every command on it.
    pub total_changes: u64,
    /// The last acknowledged transaction's end LSN.
    pub applied_lsn: u64,
    /// The furthest LSN the server sent.
    pub received_lsn: u64,
    /// With `--until-caught-up`: the LSN to reach.
    pub target_lsn: Option<u64>,
    /// Seconds between the last applied commit and its application.
    pub lag_seconds: f64,
    /// Target writes allowed in flight now.
    pub level: usize,
    /// Target writes this command sent again (timeouts, nodes down).
    pub retries: u64,
}

/// What a sync tells while it runs (the cli draws it; this crate knows no terminal).
pub trait Progress: Send + Sync {
    /// A line to show (checks, phases, warnings).
    fn line(&self, text: &str);
    /// Streaming progress, after each applied transaction.
    fn status(&self, status: &Status);
}
