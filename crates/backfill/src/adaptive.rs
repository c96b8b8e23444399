//! How many write requests are in flight: a fixed number, or one that adapts to the cluster.
//!
//! A fixed count cannot suit one laptop node and a twelve-node cluster alike: too few and the
//! cluster idles between answers, too many and requests queue on its nodes until they time out.
//! [`Limiter`] climbs the way TCP's congestion control and DSBulk's throughput tuning do: it
//! doubles the level while each step raises the rows written per second by at least
//! [`GAIN`] (slow start), then steps by a quarter; a step that does not pay is undone and the
//! level held for [`HOLD_WINDOWS`] windows before it is tried again; a timeout or an overloaded
//! node halves it at once (at most once per window), and a mean latency over the ceiling cuts
//! it by a third. Only a saturated window (a request waited for a slot) counts: when the source
//! is the bottleneck, more requests in flight would change nothing.

use remodel_model::{ConcurrencyChange, ConcurrencyReport};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests in flight: a fixed number, or adaptive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// Adapted to what the cluster absorbs, between [`MIN_LEVEL`] and [`MAX_LEVEL`].
    Auto,
    /// Exactly this many at most.
    Fixed(usize),
}

impl std::str::FromStr for Concurrency {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(Concurrency::Auto),
            n => match n.parse::<usize>() {
                Ok(v) if v > 0 => Ok(Concurrency::Fixed(v)),
                _ => Err(format!(
                    "`{s}`: expected `auto` or a number of requests, 1 or more"
                )),
            },
        }
    }
}

impl std::fmt::Display for Concurrency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Concurrency::Auto => write!(f, "auto"),
            Concurrency::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// The level an adaptive run starts at.
pub const START_LEVEL: usize = 32;
/// The least an adaptive run goes down to.
pub const MIN_LEVEL: usize = 4;
/// The most an adaptive run goes up to (memory stays bounded by it: a request is at most one
/// batch of a few KiB).
pub const MAX_LEVEL: usize = 1024;
/// A step up must raise the rows per second by this share to be kept.
pub const GAIN: f64 = 0.05;
/// Windows a level is held after a step up did not pay, before the next try.
pub const HOLD_WINDOWS: u32 = 8;
/// The shortest window throughput is measured over.
const WINDOW: Duration = Duration::from_millis(1000);
/// The fewest answers a window needs (a slower window lasts until it has them).
const WINDOW_ANSWERS: u64 = 40;
/// Level changes kept in the report (the first ones; later ones are only counted).
const KEPT_CHANGES: usize = 200;

/// Where the climb is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Doubling while it pays, from the level that gave `base_rate` rows/s.
    SlowStart { base_level: usize, base_rate: f64 },
    /// A step of a quarter, from the level that gave `base_rate`.
    Step { base_level: usize, base_rate: f64 },
    /// Holding the level for `windows` more saturated windows.
    Hold { windows: u32 },
}

/// What the current window saw.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Instant,
    rows: u64,
    answers: u64,
    latency: Duration,
    saturated: bool,
    overloaded: bool,
}

impl Window {
    fn new(start: Instant) -> Window {
        Window {
            start,
            rows: 0,
            answers: 0,
            latency: Duration::ZERO,
            saturated: false,
            overloaded: false,
        }
    }
}

struct State {
    level: usize,
    /// Permits to forget as they come back (the level went down by this many).
    debt: usize,
    phase: Phase,
    window: Window,
    last_cut: Option<Instant>,
    report: ConcurrencyReport,
}

/// Bounds the requests in flight, and adapts the bound when [`Concurrency::Auto`].
pub struct Limiter {
    permits: Arc<Semaphore>,
    state: Mutex<State>,
    adaptive: bool,
    latency_ceiling: Duration,
    started: Instant,
}

/// A slot for one request; the slot is given back when dropped.
pub struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    limiter: Arc<Limiter>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(permit) = self.permit.take() else {
            return;
        };
        let mut s = self.limiter.lock();
        if s.debt > 0 {
            // The level went down: this slot is not given back.
            s.debt -= 1;
            permit.forget();
        }
    }
}

impl Limiter {
    /// A limiter at `concurrency`; an adaptive one cuts its level when the mean latency of a
    /// window passes `latency_ceiling` (a fraction of the request timeout).
    pub fn new(concurrency: Concurrency, latency_ceiling: Duration) -> Arc<Limiter> {
        let (level, adaptive) = match concurrency {
            Concurrency::Auto => (START_LEVEL, true),
            Concurrency::Fixed(n) => (n.max(1), false),
        };
        let now = Instant::now();
        Arc::new(Limiter {
            permits: Arc::new(Semaphore::new(level)),
            state: Mutex::new(State {
                level,
                debt: 0,
                phase: Phase::SlowStart {
                    base_level: level,
                    base_rate: 0.0,
                },
                window: Window::new(now),
                last_cut: None,
                report: ConcurrencyReport {
                    mode: if adaptive { "auto" } else { "fixed" }.into(),
                    initial: level as u64,
                    current: level as u64,
                    min: level as u64,
                    max: level as u64,
                    ..ConcurrencyReport::default()
                },
            }),
            adaptive,
            latency_ceiling,
            started: now,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a free slot.
    pub async fn acquire(self: &Arc<Self>) -> Slot {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                self.lock().window.saturated = true;
                // The semaphore is never closed: acquiring can only wait.
                match self.permits.clone().acquire_owned().await {
                    Ok(p) => p,
                    Err(_) => return self.unbounded(),
                }
            }
        };
        Slot {
            permit: Some(permit),
            limiter: self.clone(),
        }
    }

    /// A slot outside the bound (never reached: the semaphore is never closed).
    fn unbounded(self: &Arc<Self>) -> Slot {
        Slot {
            permit: None,
            limiter: self.clone(),
        }
    }

    /// The level now.
    pub fn level(&self) -> usize {
        self.lock().level
    }

    /// The report so far, for `summary.json` and `sync.json`.
    pub fn report(&self) -> ConcurrencyReport {
        self.lock().report.clone()
    }

    /// A request of `rows` rows was answered after `latency`.
    pub fn answered(&self, rows: usize, latency: Duration) {
        if !self.adaptive {
            return;
        }
        let now = Instant::now();
        let mut s = self.lock();
        s.window.rows += rows as u64;
        s.window.answers += 1;
        s.window.latency += latency;
        if now - s.window.start >= WINDOW && s.window.answers >= WINDOW_ANSWERS {
            self.evaluate(&mut s, now);
        }
    }

    /// A request timed out or found a node overloaded: the level is halved (once per window).
    pub fn overloaded(&self) {
        if !self.adaptive {
            return;
        }
        let now = Instant::now();
        let mut s = self.lock();
        s.window.overloaded = true;
        if s.last_cut.is_some_and(|t| now - t < WINDOW) {
            return;
        }
        let to = (s.level / 2).max(MIN_LEVEL);
        self.cut(&mut s, now, to, "timeouts or an overloaded node");
    }

    /// Ends a window: keeps or undoes the last step, takes the next one.
    fn evaluate(&self, s: &mut State, now: Instant) {
        let w = s.window;
        s.window = Window::new(now);
        let rate = w.rows as f64 / (now - w.start).as_secs_f64().max(1e-3);
        let latency = w.latency / (w.answers.max(1) as u32);
        if w.overloaded {
            return;
        }
        if latency > self.latency_ceiling {
            let to = (s.level * 2 / 3).max(MIN_LEVEL);
            let why = format!(
                "mean latency {} ms over the ceiling of {} ms",
                latency.as_millis(),
                self.latency_ceiling.as_millis()
            );
            self.cut(s, now, to, &why);
            return;
        }
        if !w.saturated {
            // The writes were not the bottleneck: nothing to learn about the level.
            return;
        }
        let next = decide(s.phase, s.level, rate);
        s.phase = next.phase;
        if next.level != s.level {
            let why = next.why(rate, latency);
            self.set(s, now, next.level, &why);
        }
    }

    fn cut(&self, s: &mut State, now: Instant, to: usize, why: &str) {
        s.last_cut = Some(now);
        s.phase = Phase::Step {
            base_level: to,
            base_rate: 0.0,
        };
        s.window = Window::new(now);
        if to != s.level {
            self.set(s, now, to, why);
        }
    }

    /// Moves the level to `to`: permits added at once, or taken back as slots come back.
    fn set(&self, s: &mut State, now: Instant, to: usize, why: &str) {
        let from = s.level;
        if to > from {
            let mut add = to - from;
            let cancelled = add.min(s.debt);
            s.debt -= cancelled;
            add -= cancelled;
            self.permits.add_permits(add);
        } else {
            let mut take = from - to;
            while take > 0 {
                match self.permits.try_acquire() {
                    Ok(p) => {
                        p.forget();
                        take -= 1;
                    }
                    Err(_) => break,
                }
            }
            s.debt += take;
        }
        s.level = to;
        let r = &mut s.report;
        r.current = to as u64;
        r.min = r.min.min(to as u64);
        r.max = r.max.max(to as u64);
        r.changes_total += 1;
        if r.changes.len() < KEPT_CHANGES {
            r.changes.push(ConcurrencyChange {
                at_seconds: (now - self.started).as_secs_f64(),
                from: from as u64,
                to: to as u64,
                why: why.to_string(),
            });
        }
    }
}

/// The next phase and level after a saturated window at `level` that wrote `rate` rows/s.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Next {
    phase: Phase,
    level: usize,
    /// True when a step was undone.
    undone: bool,
}

impl Next {
    fn why(&self, rate: f64, latency: Duration) -> String {
        let rate = rate.round() as u64;
        if self.undone {
            format!(
                "{} rows/s: the step up did not pay ({} ms mean latency)",
                remodel_model::text::thousands(rate),
                latency.as_millis()
            )
        } else {
            format!(
                "{} rows/s, {} ms mean latency: trying more",
                remodel_model::text::thousands(rate),
                latency.as_millis()
            )
        }
    }
}

/// The climb's rule, apart from the clock and the permits so that it can be tested alone.
fn decide(phase: Phase, level: usize, rate: f64) -> Next {
    let up = |base: usize, slow: bool| {
        let to = if slow {
            base * 2
        } else {
            base + (base / 4).max(1)
        };
        to.min(MAX_LEVEL)
    };
    let hold = Phase::Hold {
        windows: HOLD_WINDOWS,
    };
    match phase {
        // The first measurement at a level (after a start, a cut or a hold): step from it.
        Phase::SlowStart { base_rate, .. } | Phase::Step { base_rate, .. } if base_rate <= 0.0 => {
            let slow = matches!(phase, Phase::SlowStart { .. });
            let to = up(level, slow);
            let base = (level, rate);
            let phase = if slow {
                Phase::SlowStart {
                    base_level: base.0,
                    base_rate: base.1,
                }
            } else {
                Phase::Step {
                    base_level: base.0,
                    base_rate: base.1,
                }
            };
            Next {
                phase: if to == level { hold } else { phase },
                level: to,
                undone: false,
            }
        }
        Phase::SlowStart {
            base_level,
            base_rate,
        }
        | Phase::Step {
            base_level,
            base_rate,
        } => {
            let slow = matches!(phase, Phase::SlowStart { .. });
            if rate >= base_rate * (1.0 + GAIN) && level < MAX_LEVEL {
                let to = up(level, slow);
                let phase = if slow {
                    Phase::SlowStart {
                        base_level: level,
                        base_rate: rate,
                    }
                } else {
                    Phase::Step {
                        base_level: level,
                        base_rate: rate,
                    }
                };
                Next {
                    phase,
                    level: to,
                    undone: false,
                }
            } else if rate >= base_rate * (1.0 + GAIN) {
                Next {
                    phase: hold,
                    level,
                    undone: false,
                }
            } else {
                Next {
                    phase: hold,
                    level: base_level,
                    undone: base_level != level,
                }
            }
        }
        Phase::Hold { windows } if windows > 1 => Next {
            phase: Phase::Hold {
                windows: windows - 1,
            },
            level,
            undone: false,
        },
        Phase::Hold { .. } => {
            let to = up(level, false);
            Next {
                phase: Phase::Step {
                    base_level: level,
                    base_rate: rate,
                },
                level: to,
                undone: false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_parses_auto_and_numbers() {
        assert_eq!("auto".parse::<Concurrency>(), Ok(Concurrency::Auto));
        assert_eq!("64".parse::<Concurrency>(), Ok(Concurrency::Fixed(64)));
        assert!("0".parse::<Concurrency>().is_err());
        assert!("many".parse::<Concurrency>().is_err());
        assert_eq!(Concurrency::Fixed(8).to_string(), "8");
    }

    /// A cluster whose throughput grows with the level up to `knee` requests, then stays flat.
    fn climb(knee: usize, windows: usize) -> Vec<usize> {
        let mut phase = Phase::SlowStart {
            base_level: START_LEVEL,
            base_rate: 0.0,
        };
        let mut level = START_LEVEL;
        let mut levels = vec![level];
        for _ in 0..windows {
            let rate = 100.0 * level.min(knee) as f64;
            let next = decide(phase, level, rate);
            phase = next.phase;
            level = next.level;
            levels.push(level);
        }
        levels
    }

    #[test]
    fn the_level_doubles_while_it_pays_and_settles_at_the_knee() {
        let levels = climb(260, 40);
        // 32, 64, 128, 256 while each doubling pays; 512 does not (26,000 rows/s against
        // 25,600: under 5% more), so back to 256, held, then a step of a quarter is tried after
        // each hold and undone (320 pays no more than 512 did).
        assert_eq!(&levels[..5], &[32, 64, 128, 256, 512]);
        let hold = HOLD_WINDOWS as usize;
        assert!(levels[5..5 + hold].iter().all(|&l| l == 256), "{levels:?}");
        assert_eq!(levels[5 + hold], 320, "{levels:?}");
        assert_eq!(levels[6 + hold], 256, "{levels:?}");
        assert!(
            levels.iter().all(|&l| (32..=512).contains(&l)),
            "{levels:?}"
        );
        assert!(levels.iter().all(|&l| l <= MAX_LEVEL));
    }

    #[test]
    fn a_flat_cluster_keeps_the_start_level() {
        let levels = climb(START_LEVEL, 30);
        assert_eq!(levels[1], 64, "one step is tried");
        assert_eq!(levels[2], START_LEVEL, "and undone");
        assert!(levels.iter().all(|&l| l <= 64), "{levels:?}");
    }

    #[test]
    fn the_level_never_passes_the_maximum() {
        let levels = climb(usize::MAX, 60);
        assert_eq!(*levels.iter().max().unwrap(), MAX_LEVEL);
    }

    #[tokio::test]
    async fn overload_halves_the_level_and_slots_in_use_are_taken_back() {
        let l = Limiter::new(Concurrency::Auto, Duration::from_secs(2));
        let held: Vec<Slot> =
            futures_util::future::join_all((0..START_LEVEL).map(|_| l.acquire())).await;
        l.overloaded();
        assert_eq!(l.level(), START_LEVEL / 2);
        // A second signal in the same window changes nothing.
        l.overloaded();
        assert_eq!(l.level(), START_LEVEL / 2);
        drop(held);
        assert_eq!(l.permits.available_permits(), START_LEVEL / 2);
        let r = l.report();
        assert_eq!((r.initial, r.current, r.min), (32, 16, 16));
        assert_eq!(r.changes.len(), 1);
        assert!(r.changes[0].why.contains("timeouts"), "{r:?}");
    }

    #[tokio::test]
    async fn a_fixed_level_never_moves() {
        let l = Limiter::new(Concurrency::Fixed(8), Duration::from_secs(2));
        l.overloaded();
        l.answered(10, Duration::from_secs(60));
        assert_eq!(l.level(), 8);
        assert_eq!(l.report().mode, "fixed");
    }
}
