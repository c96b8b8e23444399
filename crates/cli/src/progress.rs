//! Backfill progress on the terminal: indicatif bars per table and overall when stderr is a
//! terminal, plain lines every few seconds otherwise (CI logs, `| tee`).

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use remodel_backfill::{Progress, TableCounts, TableStart, WriteStatus};
use remodel_model::RunSummary;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to show progress, from `--progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Bars on a terminal, lines otherwise.
    Auto,
    /// Bars.
    Bars,
    /// A line per table every few seconds.
    Lines,
    /// Nothing but notes and the final summary.
    None,
}

/// The [`Progress`] for `mode`.
pub fn reporter(mode: Mode) -> Box<dyn Progress> {
    match mode {
        Mode::Auto if std::io::stderr().is_terminal() => Box::new(Bars::default()),
        Mode::Bars => Box::new(Bars::default()),
        Mode::Auto | Mode::Lines => Box::new(Lines::new(Duration::from_secs(10))),
        Mode::None => Box::new(Lines::new(Duration::MAX)),
    }
}

pub use remodel_model::text::thousands;

/// `128 in flight, 3 retries`: the writes' level and the retries so far.
fn writes_text(w: &WriteStatus) -> String {
    format!(
        "{} in flight, {} retries",
        thousands(w.level as u64),
        thousands(w.retries)
    )
}

/// Bars: one per table and one overall.
#[derive(Default)]
struct Bars {
    state: Mutex<Option<(MultiProgress, Vec<ProgressBar>, ProgressBar)>>,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

impl Progress for Bars {
    fn start(&self, tables: &[TableStart]) {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let width = tables
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(5)
            .max(7);
        let table_style = style(&format!(
            "{{prefix:<{width}}} [{{bar:30}}] {{human_pos:>11}}/{{human_len}} rows {{per_sec:>14}} ETA {{eta:>4}} {{msg}}"
        ));
        let bars: Vec<ProgressBar> = tables
            .iter()
            .map(|t| {
                let bar = multi.add(
                    ProgressBar::new(t.expected_rows.max(t.rows_done))
                        .with_position(t.rows_done)
                        .with_style(table_style.clone())
                        .with_prefix(t.name.clone()),
                );
                bar.enable_steady_tick(Duration::from_millis(500));
                bar
            })
            .collect();
        let total: u64 = tables
            .iter()
            .map(|t| t.expected_rows.max(t.rows_done))
            .sum();
        let done: u64 = tables.iter().map(|t| t.rows_done).sum();
        let overall = multi.add(
            ProgressBar::new(total)
                .with_position(done)
                .with_style(style(&format!(
                    "{{prefix:<{width}}} [{{bar:30}}] {{human_pos:>11}}/{{human_len}} rows {{per_sec:>14}} ETA {{eta:>4}} elapsed {{elapsed}} {{msg}}"
                )))
                .with_prefix("overall"),
        );
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some((multi, bars, overall));
    }

    fn update(&self, counts: &[TableCounts], writes: &WriteStatus) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some((_, bars, overall)) = state.as_ref() else {
            return;
        };
        let mut total_len = 0;
        for (bar, c) in bars.iter().zip(counts) {
            if c.read > bar.length().unwrap_or(0) || c.finished {
                bar.set_length(c.read);
            }
            bar.set_position(c.read);
            if c.rejected > 0 {
                bar.set_message(format!("{} rejected", thousands(c.rejected)));
            }
            if c.finished && !bar.is_finished() {
                bar.finish();
            }
            total_len += bar.length().unwrap_or(0);
        }
        overall.set_length(total_len);
        overall.set_position(counts.iter().map(|c| c.read).sum());
        overall.set_message(writes_text(writes));
    }

    fn note(&self, message: &str) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match state.as_ref() {
            Some((multi, ..)) => {
                let _ = multi.println(format!("note: {message}"));
            }
            None => eprintln!("note: {message}"),
        }
    }

    fn finish(&self, _: &RunSummary) {
        if let Some((_, bars, overall)) =
            self.state.lock().unwrap_or_else(|p| p.into_inner()).take()
        {
            for b in bars {
                b.abandon();
            }
            overall.abandon();
        }
    }
}

/// Lines: every `every`, one line per table that moved.
struct Lines {
    every: Duration,
    started: Instant,
    state: Mutex<LinesState>,
}

#[derive(Default)]
struct LinesState {
    tables: Vec<TableStart>,
    last_print: Option<Instant>,
    last_read: Vec<u64>,
}

impl Lines {
    fn new(every: Duration) -> Self {
        Lines {
            every,
            started: Instant::now(),
            state: Mutex::new(LinesState::default()),
        }
    }
}

impl Progress for Lines {
    fn start(&self, tables: &[TableStart]) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.tables = tables.to_vec();
        st.last_read = tables.iter().map(|t| t.rows_done).collect();
        st.last_print = Some(Instant::now());
        if self.every == Duration::MAX {
            return;
        }
        for t in tables {
            eprintln!(
                "backfill: {}: about {} rows in {} ranges{}",
                t.name,
                thousands(t.expected_rows),
                t.ranges,
                if t.ranges_done > 0 {
                    format!(" ({} already done)", t.ranges_done)
                } else {
                    String::new()
                }
            );
        }
    }

    fn update(&self, counts: &[TableCounts], writes: &WriteStatus) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(last) = st.last_print else {
            return;
        };
        let dt = last.elapsed();
        if dt < self.every {
            return;
        }
        st.last_print = Some(Instant::now());
        let elapsed = self.started.elapsed().as_secs();
        for (i, c) in counts.iter().enumerate() {
            let before = st.last_read.get(i).copied().unwrap_or(0);
            if c.read == before {
                continue;
            }
            let rate = (c.read - before) as f64 / dt.as_secs_f64();
            let expected = st.tables.get(i).map_or(0, |t| t.expected_rows).max(c.read);
            let eta = if rate > 0.0 {
                format!("{:.0} s", (expected - c.read) as f64 / rate)
            } else {
                "?".into()
            };
            eprintln!(
                "backfill [{elapsed:>5} s] {}: {}/{} rows ({:.1}%), {} rows/s, ETA {eta}, {} rejected, {}",
                st.tables.get(i).map_or("?", |t| t.name.as_str()),
                thousands(c.read),
                thousands(expected),
                100.0 * c.read as f64 / expected.max(1) as f64,
                thousands(rate as u64),
                thousands(c.rejected),
                writes_text(writes)
            );
            st.last_read[i] = c.read;
        }
    }

    fn note(&self, message: &str) {
        eprintln!("note: {message}");
    }

    fn finish(&self, _: &RunSummary) {}
}
