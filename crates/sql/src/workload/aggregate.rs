//! Aggregation of statement occurrences into weighted patterns, keyed by fingerprint.
//!
//! Memory is proportional to the number of distinct statements: an occurrence is folded into its
//! entry (counts, durations, first/last timestamp, first few locations) and then forgotten.

use super::sessions::{value_hash, Role, Sessions};
use crate::normalize::{self, fingerprint_hex, NormalizeError, Normalizer, StatementClass};
use crate::split::{split_statements, RawKind};
use remodel_model::{
    count_skip, AccessPattern, Diagnostic, Location, Severity, SkipCount, Workload, WorkloadSource,
};
use std::collections::{HashMap, HashSet};

/// Skip reason of a statement or log line over [`crate::split::MAX_STATEMENT_BYTES`].
pub(crate) const OVERSIZED: &str = "statement over the size limit";

/// At most this many diagnostics are kept (the skip counts keep counting beyond it).
const MAX_DIAGNOSTICS: usize = 100;

/// Longest statement text or example kept in a pattern (`plan.json` stays readable); a longer
/// one is cut at a character boundary and ends with [`TRUNCATED`] and its full length.
pub const MAX_PATTERN_TEXT: usize = 64 << 10;

/// The marker that ends a cut text.
pub const TRUNCATED: &str = " /* remodel: truncated, ";

/// `text` cut to [`MAX_PATTERN_TEXT`] bytes with a marker saying so, or as it is.
fn bounded(mut text: String) -> String {
    if text.len() <= MAX_PATTERN_TEXT {
        return text;
    }
    let full = text.len();
    let mut cut = MAX_PATTERN_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!("{TRUNCATED}{full} bytes in all */"));
    text
}

/// At most this many literal masks are remembered (bounds memory on logs with endless shapes).
const MAX_MASKS: usize = 200_000;

/// One statement seen in an input, with what the input says about it.
#[derive(Debug, Default)]
pub(crate) struct Occurrence<'a> {
    /// The statement text as written (literals or placeholders).
    pub text: &'a str,
    /// 1-based line of the statement start.
    pub line: u32,
    /// 1-based column of the statement start.
    pub column: u32,
    /// How many executions this occurrence stands for.
    pub calls: u64,
    /// Duration of this execution (logs).
    pub duration_ms: Option<f64>,
    /// Total execution time of all `calls` (pg_stat_statements).
    pub total_ms: Option<f64>,
    /// Rows returned or affected (pg_stat_statements).
    pub rows: Option<u64>,
    /// Timestamp as written in the log.
    pub timestamp: Option<&'a str>,
    /// A label (the comment above the statement in a SQL file).
    pub label: Option<&'a str>,
    /// The name of a sqlc-style `-- name: X :kind` annotation above the statement.
    pub name: Option<&'a str>,
    /// Bound parameter values, `$1` first (`None` for SQL NULL), from `DETAIL:  parameters:`.
    pub bound: Option<&'a [Option<String>]>,
    /// The text is already normalized (pg_stat_statements): no literal example in it.
    pub normalized_input: bool,
    /// The session that ran it (a log's `%c`, `%p` or `session_id`), with what identifies it.
    pub session: Option<(&'a str, &'static str)>,
}

/// One distinct statement with everything aggregated about it.
#[derive(Debug)]
struct Entry {
    fingerprint: u64,
    sql: String,
    class: StatementClass,
    calls: u64,
    total_ms: f64,
    timed_calls: u64,
    has_duration: bool,
    rows: Option<u64>,
    first_seen: Option<String>,
    last_seen: Option<String>,
    label: Option<String>,
    name: Option<String>,
    example: Option<String>,
    example_complete: bool,
    /// The `$n` whose value in `example` was a bound parameter.
    sent_params: Vec<u32>,
    locations: Vec<Location>,
    /// The calls reached `u64::MAX` (reported once).
    saturated: bool,
}

/// A distinct normalized statement (pattern or utility) with its total count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementCount {
    /// Canonical text.
    pub sql: String,
    /// 16 hex digits.
    pub fingerprint: String,
    /// What it is.
    pub class: StatementClass,
    /// Sum of calls.
    pub calls: u64,
}

/// Folds occurrences from any number of inputs into a workload.
#[derive(Debug, Default)]
pub(crate) struct Aggregator {
    normalizer: Normalizer,
    index: HashMap<u64, usize>,
    entries: Vec<Entry>,
    utility: Vec<SkipCount>,
    skipped: Vec<SkipCount>,
    diagnostics: Vec<Diagnostic>,
    /// Skip reasons already reported per fingerprint, so one bad shape gives one diagnostic.
    reported: HashSet<u64>,
    sources: Vec<WorkloadSource>,
    file: String,
    suppressed: u64,
    /// Literal mask → (mask, fingerprint): statements seen before up to literal values.
    mask_cache: HashMap<u64, (String, u64)>,
    /// Reused buffer for the mask of the current statement.
    mask: String,
    /// The order of statements in each session, folded as it streams.
    sessions: Sessions,
}

impl Aggregator {
    /// An empty aggregator.
    pub fn new() -> Self {
        Self::default()
    }

    /// What the logs' session ids stand for.
    pub fn pooling(&mut self, pooling: super::sessions::Pooling) {
        self.sessions.pooling = pooling;
    }

    /// Starts a new input file; following occurrences are located in it.
    pub fn begin_file(&mut self, file: &str, format: &str) {
        self.file = file.to_string();
        self.sources.push(WorkloadSource {
            file: file.to_string(),
            format: format.to_string(),
            statements: 0,
            session_key: None,
        });
    }

    fn loc(&self, line: u32, column: u32) -> Location {
        Location::new(self.file.clone(), line, column)
    }

    /// Counts something skipped, with its location.
    pub fn skip(&mut self, reason: &str, line: u32, column: u32) {
        let loc = self.loc(line, column);
        count_skip(&mut self.skipped, reason, Some(loc));
    }

    /// Counts a statement or line over the size limit, with one warning for the first.
    pub fn oversized(&mut self, line: u32, column: u32) {
        let first = !self.skipped.iter().any(|s| s.kind == OVERSIZED);
        self.skip(OVERSIZED, line, column);
        if first {
            self.warn(
                line,
                column,
                format!(
                    "statement or line over the {} MiB limit; skipped (the skipped counts list the others)",
                    crate::split::MAX_STATEMENT_BYTES >> 20
                ),
            );
        }
    }

    /// Adds a warning at `line:column` of the current file.
    pub fn warn(&mut self, line: u32, column: u32, message: String) {
        let loc = self.loc(line, column);
        self.diagnostic(Severity::Warning, Some(loc), message);
    }

    /// Adds a diagnostic (kept up to a cap, then counted).
    pub fn diagnostic(&mut self, severity: Severity, location: Option<Location>, message: String) {
        if self.diagnostics.len() < MAX_DIAGNOSTICS {
            self.diagnostics.push(Diagnostic {
                severity,
                location,
                message,
            });
        } else {
            self.suppressed += 1;
        }
    }

    /// Adds one occurrence. Several statements in one text (`BEGIN; SELECT …`) are split.
    pub fn add(&mut self, occ: &Occurrence<'_>) {
        let trimmed = occ.text.trim();
        if trimmed.is_empty()
            || trimmed
                .bytes()
                .all(|b| b == b';' || b.is_ascii_whitespace())
        {
            self.skip("empty statement", occ.line, occ.column);
            return;
        }
        // A `;` before the end means more than one statement (simple protocol allows it).
        let inner = trimmed.trim_end_matches(|c: char| c == ';' || c.is_whitespace());
        if memchr::memchr(b';', inner.as_bytes()).is_some() {
            let parts = split_statements(inner);
            if parts.len() > 1 {
                for part in parts {
                    if part.kind != RawKind::Sql {
                        self.skip("psql meta-command", occ.line, occ.column);
                        continue;
                    }
                    let (dl, dc) = (
                        part.line - 1,
                        if part.line == 1 { part.column - 1 } else { 0 },
                    );
                    let sub = Occurrence {
                        text: part.text,
                        line: occ.line + dl,
                        column: if dl == 0 {
                            occ.column + dc
                        } else {
                            part.column
                        },
                        bound: occ.bound,
                        label: occ.label,
                        name: occ.name,
                        timestamp: occ.timestamp,
                        ..*occ
                    };
                    self.add_one(&sub);
                }
                return;
            }
        }
        self.add_one(occ);
    }

    fn add_one(&mut self, occ: &Occurrence<'_>) {
        // Fast path: a statement that differs from one seen before only inside its literals.
        let mut mask = std::mem::take(&mut self.mask);
        let masked = normalize::literal_mask(occ.text, &mut mask);
        let mask_hash = if masked {
            mask_hash(mask.as_bytes())
        } else {
            0
        };
        let cached = if masked {
            match self.mask_cache.get(&mask_hash) {
                Some((m, fp)) if *m == mask => self.index.get(fp).copied(),
                _ => None,
            }
        } else {
            None
        };
        let idx = match cached {
            Some(i) => i,
            None => match self.slow_path(occ, masked.then_some((mask_hash, mask.as_str()))) {
                Some(i) => i,
                None => {
                    self.mask = mask;
                    return;
                }
            },
        };
        self.mask = mask;
        self.record(idx, occ);
    }

    /// Tokenizes (and for a new shape, parses) a statement; returns its entry, or `None` when
    /// it was rejected. Remembers the literal mask of shapes it determines.
    fn slow_path(&mut self, occ: &Occurrence<'_>, mask: Option<(u64, &str)>) -> Option<usize> {
        let (shape, mask_determined) = match normalize::shape_checked(occ.text) {
            Ok(s) => s,
            Err(e) => {
                self.reject(occ, &e, None);
                return None;
            }
        };
        let fingerprint = shape.fingerprint;
        let idx = match self.index.get(&shape.fingerprint) {
            Some(&i) => i,
            None => {
                let class = match self.normalizer.classify_shape(&shape, occ.text) {
                    Ok(c) => c,
                    Err(e) => {
                        self.reject(occ, &e, Some(shape.fingerprint));
                        return None;
                    }
                };
                self.entries.push(Entry {
                    fingerprint: shape.fingerprint,
                    sql: bounded(shape.sql),
                    class,
                    calls: 0,
                    total_ms: 0.0,
                    timed_calls: 0,
                    has_duration: false,
                    rows: None,
                    first_seen: None,
                    last_seen: None,
                    label: None,
                    name: None,
                    example: None,
                    example_complete: false,
                    sent_params: Vec::new(),
                    locations: Vec::new(),
                    saturated: false,
                });
                let i = self.entries.len() - 1;
                self.index.insert(fingerprint, i);
                i
            }
        };
        if let Some((hash, m)) = mask {
            if mask_determined && self.mask_cache.len() < MAX_MASKS {
                self.mask_cache.insert(hash, (m.to_string(), fingerprint));
            }
        }
        Some(idx)
    }

    /// Folds one occurrence into its entry.
    fn record(&mut self, idx: usize, occ: &Occurrence<'_>) {
        if let Some(src) = self.sources.last_mut() {
            src.statements += 1;
        }
        let need_loc = self.entries[idx].locations.len() < SkipCount::MAX_LOCATIONS;
        let loc = if need_loc {
            Some(self.loc(occ.line, occ.column))
        } else {
            None
        };
        let e = &mut self.entries[idx];
        let saturated = !e.saturated && e.calls.checked_add(occ.calls).is_none();
        e.saturated |= saturated;
        e.calls = e.calls.saturating_add(occ.calls);
        if let Some(d) = occ.duration_ms {
            e.total_ms += d;
            e.timed_calls += 1;
            e.has_duration = true;
        }
        if let Some(t) = occ.total_ms {
            e.total_ms += t;
            e.timed_calls += occ.calls;
            e.has_duration = true;
        }
        if let Some(r) = occ.rows {
            e.rows = Some(e.rows.unwrap_or(0).saturating_add(r));
        }
        if let Some(ts) = occ.timestamp {
            if e.first_seen.is_none() {
                e.first_seen = Some(ts.to_string());
            }
            match &mut e.last_seen {
                Some(l) => {
                    l.clear();
                    l.push_str(ts);
                }
                None => e.last_seen = Some(ts.to_string()),
            }
        }
        if e.label.is_none() {
            e.label = occ.label.map(str::to_string);
        }
        if e.name.is_none() {
            e.name = occ.name.map(str::to_string);
        }
        if let Some(loc) = loc {
            e.locations.push(loc);
        }
        if !occ.normalized_input && !e.example_complete {
            let bound = occ.bound.unwrap_or(&[]);
            if let Ok(ex) = normalize::example(occ.text, bound) {
                // Complete when no `$n` was left unbound.
                let complete = shape_params_bound(occ.text, bound);
                if e.example.is_none() || complete {
                    e.sent_params = if bound.is_empty() {
                        Vec::new()
                    } else {
                        sent_params(occ.text, &ex)
                    };
                    e.example = Some(bounded(ex));
                    e.example_complete = complete;
                }
            }
        }
        self.follow_session(idx, occ);
        if saturated {
            self.warn(
                occ.line,
                occ.column,
                format!(
                    "the calls of this statement add up past {}; counted as that",
                    u64::MAX
                ),
            );
        }
        let e = &mut self.entries[idx];
        if let StatementClass::Utility(kind) = &e.class {
            // Counted by kind; an occurrence may stand for many calls (or none).
            let pos = match self.utility.iter().position(|u| &u.kind == kind) {
                Some(p) => p,
                None => {
                    let kind = kind.clone();
                    self.utility.push(SkipCount {
                        kind,
                        count: 0,
                        first: Vec::new(),
                    });
                    self.utility.len() - 1
                }
            };
            if self.utility[pos].first.len() < SkipCount::MAX_LOCATIONS {
                let loc = Location::new(self.file.clone(), occ.line, occ.column);
                self.utility[pos].first.push(loc);
            }
            self.utility[pos].count = self.utility[pos].count.saturating_add(occ.calls);
        }
    }

    /// Hands the statement to its session (a log with session ids), in the order read.
    fn follow_session(&mut self, idx: usize, occ: &Occurrence<'_>) {
        let Some((key, what)) = occ.session else {
            // Counted for logs only: a SQL file or pg_stat_statements has no order to lose.
            let log = self
                .sources
                .last()
                .is_some_and(|s| matches!(s.format.as_str(), "pg-log" | "csvlog" | "jsonlog"));
            if log {
                self.sessions.unkeyed();
            }
            return;
        };
        if let Some(src) = self.sources.last_mut() {
            if src.session_key.is_none() {
                src.session_key = Some(what.to_string());
            }
        }
        let role = match &self.entries[idx].class {
            StatementClass::Dml(k) if k.is_write() => Role::Write,
            StatementClass::Dml(_) => Role::Read,
            StatementClass::Utility(u) => match u.as_str() {
                "BEGIN" => Role::Begin,
                "COMMIT" => Role::Commit,
                "ROLLBACK" => Role::Rollback,
                _ => Role::Other,
            },
        };
        self.sessions
            .add(key, idx, role, || value_hash(occ.bound, occ.text));
    }

    fn reject(&mut self, occ: &Occurrence<'_>, e: &NormalizeError, fp: Option<u64>) {
        let line = occ.line + e.line.saturating_sub(1);
        let column = if e.line <= 1 {
            occ.column + e.column.saturating_sub(1)
        } else {
            e.column
        };
        self.skip(&e.reason, line, column);
        let first = match fp {
            Some(fp) => self.reported.insert(fp),
            None => true,
        };
        if first {
            let loc = self.loc(line, column);
            let mut text: String = occ.text.trim().chars().take(80).collect();
            if occ.text.trim().chars().count() > 80 {
                text.push('…');
            }
            self.diagnostic(
                Severity::Warning,
                Some(loc),
                if e.reason.contains(&e.message) {
                    format!(
                        "{}; statement skipped: {}",
                        e.reason,
                        text.replace('\n', " ")
                    )
                } else {
                    format!(
                        "{}: {}; statement skipped: {}",
                        e.reason,
                        e.message,
                        text.replace('\n', " ")
                    )
                },
            );
        }
    }

    /// Every distinct statement seen (patterns and utility), in first-seen order.
    pub fn statements(&self) -> Vec<StatementCount> {
        self.entries
            .iter()
            .map(|e| StatementCount {
                sql: e.sql.clone(),
                fingerprint: fingerprint_hex(e.fingerprint),
                class: e.class.clone(),
                calls: e.calls,
            })
            .collect()
    }

    /// Builds the workload: DML patterns `q1, q2, …` in first-seen order, sorted by calls.
    pub fn finish(mut self) -> (Workload, Vec<Diagnostic>, Vec<StatementCount>) {
        let statements = self.statements();
        let fingerprints: Vec<u64> = self.entries.iter().map(|e| e.fingerprint).collect();
        let sessions = std::mem::take(&mut self.sessions).finish(|i| {
            fingerprints
                .get(i)
                .map_or_else(String::new, |f| fingerprint_hex(*f))
        });
        let mut patterns: Vec<(usize, AccessPattern)> = Vec::new();
        for e in self.entries {
            let StatementClass::Dml(kind) = e.class else {
                continue;
            };
            let n = patterns.len() + 1;
            let mean = if e.timed_calls > 0 {
                Some(e.total_ms / e.timed_calls as f64)
            } else {
                None
            };
            patterns.push((
                n,
                AccessPattern {
                    id: format!("q{n}"),
                    fingerprint: fingerprint_hex(e.fingerprint),
                    kind,
                    sql: e.sql,
                    example: e.example,
                    sent_params: e.sent_params,
                    calls: e.calls,
                    total_ms: e.has_duration.then_some(e.total_ms),
                    mean_ms: if e.has_duration { mean } else { None },
                    rows: e.rows,
                    first_seen: e.first_seen,
                    last_seen: e.last_seen,
                    label: e.label,
                    name: e.name,
                    locations: e.locations,
                    analysis: Default::default(),
                },
            ));
        }
        patterns.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then(a.0.cmp(&b.0)));
        self.utility.sort_by_key(|u| std::cmp::Reverse(u.count));
        if self.suppressed > 0 {
            self.diagnostics.push(Diagnostic {
                severity: Severity::Note,
                location: None,
                message: format!(
                    "{} more diagnostics not shown (see the skipped counts)",
                    self.suppressed
                ),
            });
        }
        let workload = Workload {
            patterns: patterns.into_iter().map(|(_, p)| p).collect(),
            utility: self.utility,
            skipped: self.skipped,
            sources: self.sources,
            sessions,
        };
        (workload, self.diagnostics, statements)
    }
}

/// A fast (not stable, not for fingerprints) hash of a literal mask: 8 bytes per step.
fn mask_hash(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    for &c in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(c)).wrapping_mul(K);
    }
    h
}

/// The `$n` of the shape whose value in `example` (the statement with its bound values
/// substituted) stands where `text` has a placeholder: a value the application sent, not a
/// constant of its statement.
fn sent_params(text: &str, example: &str) -> Vec<u32> {
    let (Ok(unbound), Ok(bound)) = (
        normalize::example_values(text),
        normalize::example_values(example),
    ) else {
        return Vec::new();
    };
    (1u32..)
        .zip(unbound.iter().zip(&bound))
        .filter(|(_, (u, b))| u.is_none() && b.is_some())
        .map(|(n, _)| n)
        .collect()
}

/// True when every `$n` in `text` has a bound value (or there are no placeholders).
fn shape_params_bound(text: &str, bound: &[Option<String>]) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'$', &b[i..]) {
        let start = i + p + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end > start {
            let n: usize = text[start..end].parse().unwrap_or(0);
            if n == 0 || bound.get(n - 1).is_none() {
                return false;
            }
        }
        i = end.max(start);
    }
    !text.contains('?')
}
