//! The signals that end a long command cleanly: Ctrl-C (SIGINT) at a terminal, and SIGTERM
//! (`kill PID`: a job run in the background with `&` gets no Ctrl-C; a service manager stops a
//! process with it), handled alike.

use tokio::signal::unix::{signal, Signal, SignalKind};

/// The stop signals of this process, watched once created (inside the runtime).
pub(crate) struct Stops {
    term: Option<Signal>,
}

impl Stops {
    /// Starts watching SIGTERM (Ctrl-C is watched on each wait).
    pub(crate) fn new() -> Stops {
        Stops {
            term: signal(SignalKind::terminate()).ok(),
        }
    }

    /// Waits for the next Ctrl-C or SIGTERM and names it; `None` when neither can be watched.
    pub(crate) async fn next(&mut self) -> Option<&'static str> {
        let ctrl_c = async { tokio::signal::ctrl_c().await.ok().map(|_| "Ctrl-C") };
        match &mut self.term {
            Some(term) => tokio::select! {
                stop = ctrl_c => stop,
                got = term.recv() => got.map(|_| "SIGTERM"),
            },
            None => ctrl_c.await,
        }
    }
}
