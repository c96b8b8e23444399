//! Sessions: the order of statements in each session of a log, folded as it streams into what
//! loop and transaction detection need ([`SessionStats`]), never the log itself.
//!
//! Per session at most [`MAX_WINDOWS`] reads are "open": each read call opens a window that
//! collects the reads run after it (up to [`MAX_CHILDREN`] distinct ones, each with up to
//! [`MAX_DISTINCT`] distinct parameter values remembered) until the same read runs again, the
//! window grows past [`MAX_WINDOW_LEN`] statements, more recent reads push it out, or the session
//! ends. A closed window is added to the per-pair counts and forgotten. At most
//! [`MAX_SESSIONS`] sessions are held; beyond it the least recently active half is closed.

use remodel_model::{FanOutBin, Follow, SessionStats, TransactionShape};
use std::collections::HashMap as StdMap;

/// The maps probed for every statement of a log (sessions, loop pairs, transactions): hashed
/// with foldhash, as SipHash took a tenth of the ingest time.
type HashMap<K, V> = StdMap<K, V, foldhash::fast::RandomState>;

/// Reads open per session (a loop's parent stays open while its lookups run).
const MAX_WINDOWS: usize = 8;
/// Distinct reads counted after one parent call.
const MAX_CHILDREN: usize = 16;
/// Distinct parameter values remembered per child of a window (beyond: counted as distinct).
const MAX_DISTINCT: usize = 64;
/// Statements after which a window is closed (a parent is a page, not a whole session).
const MAX_WINDOW_LEN: u32 = 4096;
/// Sessions held at once.
const MAX_SESSIONS: usize = 8192;
/// Statements remembered per transaction.
const MAX_TX_STATEMENTS: usize = 64;
/// Distinct (parent, child) pairs and transaction shapes counted.
const MAX_PAIRS: usize = 100_000;

/// What a statement is, for sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A read of application tables.
    Read,
    /// A write.
    Write,
    /// `BEGIN` / `START TRANSACTION`.
    Begin,
    /// `COMMIT` / `END`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// Anything else (SET, SHOW …): ignored.
    Other,
}

#[derive(Debug)]
struct Child {
    entry: usize,
    calls: u32,
    /// The first call's value: most children of a window run once (a read after the parent
    /// that is not a loop), and keep it without an allocation.
    first: u64,
    /// Distinct values after the first one.
    values: Vec<u64>,
    /// Distinct values beyond the remembered ones.
    more: u32,
}

#[derive(Debug)]
struct Window {
    parent: usize,
    len: u32,
    children: Vec<Child>,
    /// A child ran a second time: the loop's body is known, and a read outside it ends the
    /// window (the session went on to something else).
    repeating: bool,
}

#[derive(Debug, Default)]
struct Session {
    last: u64,
    windows: Vec<Window>,
    tx: Option<Vec<usize>>,
}

#[derive(Debug, Default)]
struct PairCount {
    windows: u64,
    child_calls: u64,
    distinct: u64,
    /// (calls in a window, windows): few distinct counts per pair, found by a scan (a hash per
    /// child of every closed window cost more than the scan).
    fan_out: Vec<(u64, u64)>,
}

/// How a log's session ids map to the application's sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pooling {
    /// Each backend (process id, session id) serves one client session: its statements follow
    /// each other in the application's order.
    #[default]
    Session,
    /// A pooler in transaction mode (pgbouncer's `pool_mode = transaction`) hands a backend to
    /// a client for one transaction: consecutive statements of a backend belong to one client
    /// only inside a `BEGIN … COMMIT`, so only those are linked into loops.
    Transaction,
}

/// The sessions of the inputs being read, and what their closed windows added up to.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    /// What a session id stands for.
    pub(crate) pooling: Pooling,
    live: HashMap<String, Session>,
    seq: u64,
    pairs: HashMap<(usize, usize), PairCount>,
    /// Windows each read opened: its calls a loop could have followed.
    /// Indexed by entry (entries are numbered densely).
    opened: Vec<u64>,
    txs: HashMap<Vec<usize>, (u64, u64)>,
    /// The windows a statement closed (a buffer kept between statements).
    closed: Vec<Window>,
    seen: u64,
    statements: u64,
    without: u64,
    evicted: u64,
}

impl Sessions {
    /// A statement read without a session id.
    pub(crate) fn unkeyed(&mut self) {
        self.without += 1;
    }

    /// Statement `entry` ran next in session `key`; `value` hashes its parameter values (asked
    /// for reads only: the rest never needs it).
    pub(crate) fn add(&mut self, key: &str, entry: usize, role: Role, value: impl FnOnce() -> u64) {
        if role == Role::Other {
            self.statements += 1;
            return;
        }
        self.statements += 1;
        self.seq += 1;
        let seq = self.seq;
        let mut closed = std::mem::take(&mut self.closed);
        // One lookup for a session already held (nearly every statement).
        let pooling = self.pooling;
        let opened = if let Some(s) = self.live.get_mut(key) {
            s.last = seq;
            step(s, entry, role, value, &mut self.txs, &mut closed, pooling)
        } else {
            if self.live.len() >= MAX_SESSIONS {
                self.evict();
            }
            self.seen += 1;
            let s = self.live.entry(key.to_string()).or_default();
            s.last = seq;
            step(s, entry, role, value, &mut self.txs, &mut closed, pooling)
        };
        if opened {
            if self.opened.len() <= entry {
                self.opened.resize(entry + 1, 0);
            }
            self.opened[entry] += 1;
        }
        for w in closed.drain(..) {
            self.close(w);
        }
        self.closed = closed;
    }

    /// Closes the least recently active half of the sessions.
    fn evict(&mut self) {
        let mut lasts: Vec<u64> = self.live.values().map(|s| s.last).collect();
        lasts.sort_unstable();
        let cut = lasts[lasts.len() / 2];
        let old: Vec<String> = self
            .live
            .iter()
            .filter(|(_, s)| s.last <= cut)
            .map(|(k, _)| k.clone())
            .collect();
        for k in old {
            if let Some(s) = self.live.remove(&k) {
                self.evicted += 1;
                for w in s.windows {
                    self.close(w);
                }
            }
        }
    }

    fn close(&mut self, w: Window) {
        for c in w.children {
            let key = (w.parent, c.entry);
            // One lookup until the bound is reached (the check after it needs a second).
            if self.pairs.len() >= MAX_PAIRS && !self.pairs.contains_key(&key) {
                continue;
            }
            let p = self.pairs.entry(key).or_default();
            p.windows += 1;
            p.child_calls += u64::from(c.calls);
            p.distinct += 1 + c.values.len() as u64 + u64::from(c.more);
            let calls = u64::from(c.calls);
            match p.fan_out.iter_mut().find(|(n, _)| *n == calls) {
                Some((_, windows)) => *windows += 1,
                None => p.fan_out.push((calls, 1)),
            }
        }
    }

    /// Closes every session and returns the counts, naming entries by `fingerprint`.
    pub(crate) fn finish(mut self, fingerprint: impl Fn(usize) -> String) -> SessionStats {
        let live = std::mem::take(&mut self.live);
        for (_, s) in live {
            for w in s.windows {
                self.close(w);
            }
        }
        let mut follows: Vec<Follow> = self
            .pairs
            .into_iter()
            .map(|((a, b), p)| {
                let mut fan_out: Vec<FanOutBin> = p
                    .fan_out
                    .into_iter()
                    .map(|(calls, windows)| FanOutBin { calls, windows })
                    .collect();
                fan_out.sort_by_key(|b| b.calls);
                Follow {
                    parent: fingerprint(a),
                    child: fingerprint(b),
                    parent_windows: self.opened.get(a).copied().unwrap_or(0),
                    windows: p.windows,
                    child_calls: p.child_calls,
                    distinct: p.distinct,
                    fan_out,
                }
            })
            .collect();
        follows.sort_by(|x, y| (&x.parent, &x.child).cmp(&(&y.parent, &y.child)));
        let mut transactions: Vec<TransactionShape> = self
            .txs
            .into_iter()
            .map(|(seq, (committed, rolled_back))| TransactionShape {
                statements: seq.into_iter().map(&fingerprint).collect(),
                committed,
                rolled_back,
            })
            .collect();
        transactions.sort_by(|x, y| x.statements.cmp(&y.statements));
        SessionStats {
            transaction_pooled: self.pooling == Pooling::Transaction,
            sessions: self.seen,
            statements: self.statements,
            without_session: self.without,
            evicted: self.evicted,
            follows,
            transactions,
        }
    }
}

/// One statement of a session: its transaction, then its windows. Behind a transaction pooler
/// a transaction's bounds end every window (the next transaction may be another client's), and
/// a statement outside one links to nothing. True when the statement opened a window.
fn step(
    s: &mut Session,
    entry: usize,
    role: Role,
    value: impl FnOnce() -> u64,
    txs: &mut HashMap<Vec<usize>, (u64, u64)>,
    closed: &mut Vec<Window>,
    pooling: Pooling,
) -> bool {
    transaction(s, entry, role, txs);
    if pooling == Pooling::Transaction
        && (matches!(role, Role::Begin | Role::Commit | Role::Rollback) || s.tx.is_none())
    {
        closed.append(&mut s.windows);
        return false;
    }
    if role == Role::Read {
        observe(s, entry, value(), closed);
        return true;
    }
    if role == Role::Write {
        for w in &mut s.windows {
            w.len += 1;
        }
    }
    false
}

/// Follows the session's transaction: a `BEGIN` starts recording, its end counts the shape.
fn transaction(
    s: &mut Session,
    entry: usize,
    role: Role,
    txs: &mut HashMap<Vec<usize>, (u64, u64)>,
) {
    match role {
        Role::Begin => s.tx = Some(Vec::new()),
        Role::Commit | Role::Rollback => {
            if let Some(seq) = s.tx.take() {
                if seq.is_empty() || (!txs.contains_key(&seq) && txs.len() >= MAX_PAIRS) {
                    return;
                }
                let c = txs.entry(seq).or_default();
                if role == Role::Commit {
                    c.0 += 1;
                } else {
                    c.1 += 1;
                }
            }
        }
        Role::Read | Role::Write => {
            if let Some(seq) = &mut s.tx {
                if seq.last() != Some(&entry) && seq.len() < MAX_TX_STATEMENTS {
                    seq.push(entry);
                }
            }
        }
        Role::Other => {}
    }
}

/// A read ran: it counts in every open window of another read, and opens its own (closing the
/// one it had, and the oldest beyond [`MAX_WINDOWS`]). A window whose children have started to
/// repeat closes on a read that is not one of them.
fn observe(s: &mut Session, entry: usize, value: u64, closed: &mut Vec<Window>) {
    let mut i = 0;
    while i < s.windows.len() {
        let w = &mut s.windows[i];
        let known = w.children.iter().position(|c| c.entry == entry);
        if w.parent == entry || w.len >= MAX_WINDOW_LEN || (w.repeating && known.is_none()) {
            closed.push(s.windows.remove(i));
            continue;
        }
        w.repeating |= known.is_some();
        w.len += 1;
        count_child(w, known, entry, value);
        i += 1;
    }
    s.windows.insert(
        0,
        Window {
            parent: entry,
            len: 0,
            children: Vec::new(),
            repeating: false,
        },
    );
    if s.windows.len() > MAX_WINDOWS {
        closed.extend(s.windows.pop());
    }
}

/// Counts a call of `entry` in the window, at its child `known` (found by the caller's scan).
fn count_child(w: &mut Window, known: Option<usize>, entry: usize, value: u64) {
    let c = match known {
        Some(i) => &mut w.children[i],
        None if w.children.len() < MAX_CHILDREN => {
            w.children.push(Child {
                entry,
                calls: 1,
                first: value,
                values: Vec::new(),
                more: 0,
            });
            return;
        }
        None => return,
    };
    c.calls = c.calls.saturating_add(1);
    if c.first != value && !c.values.contains(&value) {
        if c.values.len() + 1 < MAX_DISTINCT {
            c.values.push(value);
        } else {
            c.more = c.more.saturating_add(1);
        }
    }
}

/// The session a stderr log line's prefix names: a `%c` session id (`66f2a1b3.3039`: the
/// backend's start time and process id in hex) if the prefix has one, else the process id of
/// `[12345]` (`%p` as most prefixes bracket it) or of syslog's `postgres[12345]:`. Returns the
/// key and what it is.
pub(crate) fn session_of_prefix(prefix: &str) -> Option<(&str, &'static str)> {
    if let Some(c) = session_id(prefix) {
        return Some((c, "session id (%c)"));
    }
    bracketed_pid(prefix).map(|p| (p, "process id (%p)"))
}

fn session_id(prefix: &str) -> Option<&str> {
    let b = prefix.as_bytes();
    let hex = |c: u8| c.is_ascii_hexdigit();
    for dot in memchr::memchr_iter(b'.', b) {
        let mut s = dot;
        while s > 0 && hex(b[s - 1]) {
            s -= 1;
        }
        let mut e = dot + 1;
        while e < b.len() && hex(b[e]) {
            e += 1;
        }
        // The start time in hex has 8 digits (7 before 1978); the pid up to 8.
        let (head, tail) = (dot - s, e - dot - 1);
        let bounded = |i: Option<&u8>| i.is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'.');
        if (7..=8).contains(&head)
            && (1..=8).contains(&tail)
            && bounded(s.checked_sub(1).and_then(|i| b.get(i)))
            && bounded(b.get(e))
        {
            return prefix.get(s..e);
        }
    }
    None
}

fn bracketed_pid(prefix: &str) -> Option<&str> {
    let b = prefix.as_bytes();
    let mut from = 0;
    while let Some(open) = prefix[from..].find('[').map(|i| i + from) {
        let digits = b[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 && b.get(open + 1 + digits) == Some(&b']') {
            return prefix.get(open + 1..open + 1 + digits);
        }
        from = open + 1;
    }
    None
}

/// A stable hash of a statement's parameter values (or of its text, when they are written in it).
pub(crate) fn value_hash(bound: Option<&[Option<String>]>, text: &str) -> u64 {
    let mut h = remodel_model::text::Fnv1a64::new();
    let mut feed = |bytes: &[u8]| h.write(bytes);
    match bound {
        Some(values) if !values.is_empty() => {
            for v in values {
                feed(v.as_deref().unwrap_or("\0NULL").as_bytes());
                feed(b"\0");
            }
        }
        _ => feed(text.as_bytes()),
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(
            session_of_prefix("2026-12-02 07:01:02.123 UTC [4242] 674d5a2e.1092 "),
            Some(("674d5a2e.1092", "session id (%c)"))
        );
        assert_eq!(
            session_of_prefix("2026-12-02 07:01:02.123 UTC [4242] "),
            Some(("4242", "process id (%p)"))
        );
        assert_eq!(
            session_of_prefix("2017-09-06 08:40:10 UTC [20]: [1-1] user=,db= "),
            Some(("20", "process id (%p)"))
        );
        // A timestamp's fraction, an address and a line number are not sessions.
        assert_eq!(
            session_of_prefix("2026-12-02 07:01:02.123 UTC 10.0.0.1(5432) [1-1] "),
            None
        );
    }

    #[test]
    fn a_loop_in_one_session_is_counted_per_parent_call() {
        let mut s = Sessions::default();
        for page in 0..3u64 {
            s.add("a", 0, Role::Read, || page);
            for row in 0..5u64 {
                s.add("a", 1, Role::Read, || row + page * 10);
                // Another session's statements in between change nothing.
                s.add("b", 1, Role::Read, || 99);
            }
        }
        let st = s.finish(|i| format!("e{i}"));
        let f = st.follows.iter().find(|f| f.parent == "e0").unwrap();
        assert_eq!((f.windows, f.child_calls, f.distinct), (3, 15, 15));
        assert_eq!(f.p95(), 5);
        assert_eq!(st.sessions, 2);
    }

    #[test]
    fn a_window_ends_when_the_session_leaves_its_loop() {
        let mut s = Sessions::default();
        // A point read, its loop, then another page's loop before the point read runs again.
        s.add("a", 0, Role::Read, || 0);
        for row in 0..4u64 {
            s.add("a", 1, Role::Read, || row);
        }
        s.add("a", 2, Role::Read, || 0);
        for row in 0..4u64 {
            s.add("a", 3, Role::Read, || row);
        }
        s.add("a", 0, Role::Read, || 1);
        let st = s.finish(|i| format!("e{i}"));
        let pairs: Vec<(&str, &str, u64)> = st
            .follows
            .iter()
            .map(|f| (f.parent.as_str(), f.child.as_str(), f.child_calls))
            .collect();
        // The first page's loop ended at the second page: e0 owns none of its calls. (The last
        // lookup's own window holds the next page: one window of four calls of e1, a share the
        // analyzer does not take for a loop.)
        assert!(pairs.contains(&("e0", "e1", 4)) && pairs.contains(&("e2", "e3", 4)));
        assert!(
            pairs.iter().all(|p| p.0 != "e0" || p.1 == "e1"),
            "{pairs:?}"
        );
    }

    /// Two clients on one backend of a transaction pooler: client 1 runs its page in a
    /// transaction, client 2's autocommit lookups of the same read come in between.
    fn pooled_backend(s: &mut Sessions) {
        for page in 0..3u64 {
            s.add("p", 20, Role::Begin, || 0);
            s.add("p", 0, Role::Read, || page);
            for row in 0..3u64 {
                s.add("p", 1, Role::Read, || row + page * 10);
            }
            s.add("p", 21, Role::Commit, || 0);
            for other in 0..4u64 {
                s.add("p", 1, Role::Read, || 100 + other + page * 10);
            }
        }
        // Client 2's page without a transaction: a call of the list no loop can be seen after.
        s.add("p", 0, Role::Read, || 7);
    }

    #[test]
    fn behind_a_transaction_pooler_only_a_transaction_links_statements() {
        let fan_out = |pooling| {
            let mut s = Sessions {
                pooling,
                ..Sessions::default()
            };
            pooled_backend(&mut s);
            let st = s.finish(|i| format!("e{i}"));
            let f = st.follows.iter().find(|f| f.parent == "e0").cloned();
            f.map(|f| (f.parent_windows, f.windows, f.child_calls))
        };
        // Read as one session, client 2's lookups count in client 1's loops, and its list
        // counts as a call the loop skipped.
        assert_eq!(fan_out(Pooling::Session), Some((4, 3, 21)));
        assert_eq!(fan_out(Pooling::Transaction), Some((3, 3, 9)));
    }

    #[test]
    fn transactions_are_counted_by_shape() {
        let mut s = Sessions::default();
        for _ in 0..2 {
            s.add("a", 9, Role::Begin, || 0);
            s.add("a", 1, Role::Write, || 0);
            s.add("a", 2, Role::Write, || 0);
            s.add("a", 2, Role::Write, || 1);
            s.add("a", 10, Role::Commit, || 0);
        }
        let st = s.finish(|i| format!("e{i}"));
        assert_eq!(st.transactions.len(), 1);
        assert_eq!(st.transactions[0].statements, ["e1", "e2"]);
        assert_eq!(st.transactions[0].committed, 2);
    }
}
