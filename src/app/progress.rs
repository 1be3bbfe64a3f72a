//! The progress bar of `run`: runs done and events simulated, over an estimate of the
//! events of the whole file that settles as runs finish.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::limits;
use crate::scenario::sweep::ScenarioFile;

/// Events a run is assumed to simulate per client request before any run of the file has
/// finished: the quickstart herd's 26 (the outage herd retries several times). A steadier
/// workload needs fewer, so the bar jumps ahead when the first run ends rather than
/// stalling near its end.
const EVENTS_PER_REQUEST: u64 = 26;

/// The progress bar of one scenario file on stderr: runs done, events simulated, and a bar
/// over the estimated events of the whole file, so it moves inside long runs. Hidden with
/// `--quiet` or when stderr is not a terminal.
pub(super) struct Progress {
    bar: ProgressBar,
    runs: u64,
    threads: u64,
    prior: u64,
    events: AtomicU64,
    done: AtomicU64,
}

impl Progress {
    pub(super) fn new(file: &ScenarioFile, runs: u64, threads: usize, quiet: bool) -> Progress {
        let prior = file
            .points
            .iter()
            .map(|p| {
                let s = &p.scenario;
                limits::requests_per_run(s)
                    .saturating_mul(EVENTS_PER_REQUEST)
                    .saturating_mul(s.strategies.len() as u64 * s.replications as u64)
            })
            .fold(0, u64::saturating_add)
            .max(1);
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(Some(prior), ProgressDrawTarget::stderr());
            bar.set_message(progress_message(0, runs, 0));
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {msg}, {elapsed} elapsed, ETA {eta}",
            )
            .expect("static template is valid")
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(file.first().name.clone());
            bar
        };
        let progress = Progress {
            bar,
            runs,
            threads: threads.max(1) as u64,
            prior,
            events: AtomicU64::new(0),
            done: AtomicU64::new(0),
        };
        progress.update();
        progress
    }

    /// Called from worker threads with the events simulated since the last call.
    pub(super) fn events(&self, n: u64) {
        self.events.fetch_add(n, Ordering::Relaxed);
        self.update();
    }

    /// Called from worker threads when a run has ended.
    pub(super) fn run_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.update();
    }

    fn update(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let events = self.events.load(Ordering::Relaxed);
        let done = self.done.load(Ordering::Relaxed);
        let total = estimate_events(self.runs, done, self.threads, events, self.prior);
        self.bar.set_length(total);
        self.bar.set_position(events.min(total));
        self.bar
            .set_message(progress_message(done, self.runs, events));
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The estimated events of all `runs` of a file, `done` of them finished, `events`
/// simulated so far on `threads` workers: before a run has finished, `prior` (grown as the
/// events pass 90% of it); after, the mean per run so far (in-progress runs counted as half
/// done) times the runs. Never below the events simulated so far.
pub fn estimate_events(runs: u64, done: u64, threads: u64, events: u64, prior: u64) -> u64 {
    let grown = events.saturating_add(events / 9);
    if done == 0 {
        return prior.max(grown);
    }
    let running = threads.min(runs.saturating_sub(done));
    let per_run = events as f64 / (done as f64 + 0.5 * running as f64);
    let total = (per_run * runs as f64) as u64;
    if done >= runs {
        events
    } else {
        total.max(grown)
    }
}

/// The text beside the bar: `2/4 runs, 53.1 M events`.
pub fn progress_message(done: u64, runs: u64, events: u64) -> String {
    let events = if events >= 1_000_000 {
        format!("{:.1} M", events as f64 / 1e6)
    } else if events >= 1_000 {
        format!("{:.0} k", events as f64 / 1e3)
    } else {
        events.to_string()
    };
    format!("{done}/{runs} runs, {events} events")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_estimate_moves_inside_runs_and_settles_on_the_count() {
        // Nothing finished: the prior, until the events near it.
        assert_eq!(estimate_events(4, 0, 2, 1_000, 100_000), 100_000);
        assert_eq!(estimate_events(4, 0, 2, 99_000, 100_000), 110_000);
        // One of 4 runs done, 2 in progress on 2 threads: 3 M events are 2 runs' worth.
        assert_eq!(estimate_events(4, 1, 2, 3_000_000, 1), 6_000_000);
        // All done: exactly the events.
        assert_eq!(estimate_events(4, 4, 2, 6_100_000, 1), 6_100_000);
    }

    #[test]
    fn the_progress_message_counts_runs_and_events() {
        assert_eq!(
            progress_message(2, 4, 53_140_000),
            "2/4 runs, 53.1 M events"
        );
        assert_eq!(progress_message(0, 4, 262_144), "0/4 runs, 262 k events");
        assert_eq!(progress_message(0, 4, 12), "0/4 runs, 12 events");
    }
}
