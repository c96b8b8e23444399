//! How a run reports progress. The library knows no terminal: it calls a [`Progress`] the
//! caller provides (the command line draws bars on a terminal and prints lines otherwise).

use remodel_model::RunSummary;

/// A target table as the run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStart {
    /// Target table.
    pub name: String,
    /// Rows expected (the driving table's size; an estimate).
    pub expected_rows: u64,
    /// Rows already read by earlier attempts.
    pub rows_done: u64,
    /// Ranges of the table.
    pub ranges: usize,
    /// Ranges already finished by earlier attempts.
    pub ranges_done: usize,
}

/// Counts of one table so far (earlier attempts included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounts {
    /// Source rows read.
    pub read: u64,
    /// Rows written.
    pub written: u64,
    /// Rows rejected.
    pub rejected: u64,
    /// Ranges finished.
    pub ranges_done: usize,
    /// True once every range is finished.
    pub finished: bool,
}

/// How the writes go, overall.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStatus {
    /// Write requests allowed in flight now (the adaptive level, or the fixed one).
    pub level: usize,
    /// Requests sent again so far (timeouts, nodes down).
    pub retries: u64,
}

/// Receives a run's progress; called from the run's tasks, so it must be cheap and thread-safe.
pub trait Progress: Send + Sync {
    /// The run starts: the tables in the order they are read.
    fn start(&self, tables: &[TableStart]);
    /// Counts per table, in [`Progress::start`]'s order, and the writes' status, a few times a
    /// second.
    fn update(&self, counts: &[TableCounts], writes: &WriteStatus);
    /// Something a person should know now (a retry after a timeout, a resumed range).
    fn note(&self, message: &str);
    /// The run ended (also when it stopped on an error).
    fn finish(&self, summary: &RunSummary);
}

/// A [`Progress`] that ignores everything (tests, library use).
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &[TableStart]) {}
    fn update(&self, _: &[TableCounts], _: &WriteStatus) {}
    fn note(&self, _: &str) {}
    fn finish(&self, _: &RunSummary) {}
}
