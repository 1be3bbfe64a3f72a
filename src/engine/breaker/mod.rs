//! Circuit breakers during a run: closed, open, half-open; per client or fleet-wide.
//!
//! Closed: every attempt outcome is recorded in a rolling window (of time, or of the last N
//! calls); once the window holds at least `min_calls` outcomes and the failure share reaches
//! `failure_rate`, the breaker opens. Open: attempts fail fast (`breaker_open`) without
//! reaching the server. After `open_for` (a timed event, so open time is exact) it is
//! half-open: the next `half_open_probes` attempts go through. Under the `all` rule it closes
//! (window cleared) when all succeed and re-opens on the first failure; under Resilience4j's
//! `rate` rule it waits for every probe and re-opens if their failure share reaches
//! `failure_rate`, else closes.
//! Only outcomes of this half-open round's probes count while half-open (a slow probe from an
//! earlier round does not); outcomes arriving while open are ignored. A `retries_only`
//! breaker (Brooker's 2022 "retry-only" breaker) refuses only retries: first attempts go out
//! in every mode as plain calls, so their outcomes count while it is closed and not while it
//! is open or half-open, where only the retries it admits probe.
//!
//! With `slow_call` (Resilience4j's slow-call rate), an outcome that came more than
//! `slow_call` after its attempt was sent is also *slow*, failed or not: the breaker opens
//! when either share reaches its threshold (`failure_rate`, `slow_call_rate`), and a
//! half-open round judges its probes the same way (under `all`, a slow probe counts as a
//! failed one).

use std::collections::VecDeque;

use crate::model::policy::{BreakerSpec, BreakerWindow, BucketStart, HalfOpenRule};
use crate::time::{SimDuration, SimTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Closed,
    Open,
    HalfOpen,
}

#[derive(Debug, Clone)]
struct State {
    mode: Mode,
    /// (stamp, failed, slow) of recorded outcomes in the window, oldest first. The stamp is
    /// the outcome's time, or under `buckets_from = "outcome"` its bucket's start.
    window: VecDeque<(SimTime, bool, bool)>,
    /// Under `buckets_from = "outcome"`, when the current bucket started (`SimTime::MAX`:
    /// none open).
    bucket_start: SimTime,
    failures: u32,
    slow: u32,
    probes_sent: u32,
    probes_ok: u32,
    probes_failed: u32,
    probes_slow: u32,
    opened_at: SimTime,
    /// Which half-open round this is (1..=255, cycling), so probes know their round.
    round: u8,
}

impl State {
    /// Forgets every outcome (the breaker opened or closed): a new window, new buckets.
    fn clear_window(&mut self) {
        self.window.clear();
        self.bucket_start = SimTime::MAX;
        self.failures = 0;
        self.slow = 0;
    }
}

/// How an attempt was admitted: 0 = normally (closed), otherwise a probe of that half-open
/// round. One byte, so it fits in the client state.
pub type Probe = u8;

/// What recording an outcome did to the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// No change of mode.
    None,
    /// It opened: schedule its half-open event at `now + open_for`.
    Opened,
    /// It closed after successful probes.
    Closed,
}

/// All breakers of a run: one (global) or one per client.
#[derive(Debug, Clone)]
pub struct Breakers {
    spec: BreakerSpec,
    states: Vec<State>,
    open_now: u32,
    open_total: SimDuration,
}

impl Breakers {
    /// Closed breakers for `clients` clients.
    pub fn new(spec: &BreakerSpec, clients: u32) -> Self {
        let n = spec.scope.instances(clients);
        let closed = State {
            mode: Mode::Closed,
            window: VecDeque::new(),
            bucket_start: SimTime::MAX,
            failures: 0,
            slow: 0,
            probes_sent: 0,
            probes_ok: 0,
            probes_failed: 0,
            probes_slow: 0,
            opened_at: SimTime::ZERO,
            round: 0,
        };
        Breakers {
            spec: *spec,
            states: vec![closed; n],
            open_now: 0,
            open_total: SimDuration::ZERO,
        }
    }

    /// The breaker index serving `client`.
    #[inline]
    pub fn index(&self, client: u32) -> u32 {
        self.spec.scope.index(client)
    }

    /// Whether only retries are refused while open (first attempts always go out).
    pub fn retries_only(&self) -> bool {
        self.spec.retries_only
    }

    /// How long a breaker stays open.
    pub fn open_for(&self) -> SimDuration {
        self.spec.open_for
    }

    /// May an attempt be sent now? `Some(probe)` if yes (non-zero: a probe of the current
    /// half-open round), `None` if it must fail fast.
    pub fn admit(&mut self, index: u32) -> Option<Probe> {
        let probes = self.spec.half_open_probes;
        let s = &mut self.states[index as usize];
        match s.mode {
            Mode::Closed => Some(0),
            Mode::Open => None,
            Mode::HalfOpen if s.probes_sent < probes => {
                s.probes_sent += 1;
                Some(s.round)
            }
            Mode::HalfOpen => None,
        }
    }

    /// An attempt whose outcome is not recorded (a 400) finished: if it was a probe of the
    /// current half-open round, its slot goes to the next attempt.
    pub fn release(&mut self, index: u32, probe: Probe) {
        let s = &mut self.states[index as usize];
        if s.mode == Mode::HalfOpen && probe != 0 && probe == s.round {
            s.probes_sent -= 1;
        }
    }

    /// The time after which a call is slow, if slow calls count.
    pub fn slow_call(&self) -> Option<SimDuration> {
        self.spec.slow_call
    }

    /// Records an attempt's outcome; `slow` says it came more than `slow_call` after the
    /// attempt was sent; `probe` is what [`Breakers::admit`] said when it was sent.
    pub fn record(
        &mut self,
        index: u32,
        now: SimTime,
        failed: bool,
        slow: bool,
        probe: Probe,
    ) -> Transition {
        let spec = self.spec;
        let s = &mut self.states[index as usize];
        match s.mode {
            Mode::Open => Transition::None,
            Mode::HalfOpen if probe != s.round => Transition::None,
            Mode::HalfOpen if (failed || slow) && spec.half_open == HalfOpenRule::All => {
                self.open(index, now);
                Transition::Opened
            }
            Mode::HalfOpen => {
                if failed {
                    s.probes_failed += 1;
                } else {
                    s.probes_ok += 1;
                }
                s.probes_slow += slow as u32;
                // `all` waits for every probe; `rate` decides after min(min_calls, probes)
                // outcomes, as Resilience4j's half-open window (of `probes` calls, its
                // minimum clamped to them) does.
                let needed = match spec.half_open {
                    HalfOpenRule::All => spec.half_open_probes,
                    HalfOpenRule::Rate => spec.half_open_probes.min(spec.min_calls),
                };
                let outcomes = s.probes_ok + s.probes_failed;
                if outcomes < needed {
                    Transition::None
                } else if above_thresholds(&spec, s.probes_failed, s.probes_slow, outcomes) {
                    // Only under the `rate` rule can a failed or slow probe get here.
                    self.open(index, now);
                    Transition::Opened
                } else {
                    s.mode = Mode::Closed;
                    s.clear_window();
                    Transition::Closed
                }
            }
            Mode::Closed => {
                let width = spec.window.bucket_width();
                let stamp = match spec.window {
                    BreakerWindow::Buckets {
                        start: BucketStart::Outcome,
                        ..
                    } => {
                        // Polly's UpdateCurrentWindow: a new bucket at the first outcome
                        // once the current one is a bucket's width old.
                        if s.bucket_start == SimTime::MAX || now.0 - s.bucket_start.0 >= width {
                            s.bucket_start = now;
                        }
                        s.bucket_start
                    }
                    _ => now,
                };
                s.window.push_back((stamp, failed, slow));
                s.failures += failed as u32;
                s.slow += slow as u32;
                // Whether an outcome stamped `t` has left the window.
                let gone = |t: SimTime| match spec.window {
                    BreakerWindow::Time(w) => now.0.saturating_sub(t.0) >= w.0,
                    // The last N outcomes, however old: trimmed by count below.
                    BreakerWindow::Calls(_) => false,
                    // Resilience4j: the bucket is no longer one of the last `count`.
                    BreakerWindow::Buckets {
                        count,
                        start: BucketStart::Clock,
                        ..
                    } => now.0 / width - t.0 / width >= u64::from(count),
                    // Polly: `now - StartedAt >= samplingDuration`.
                    BreakerWindow::Buckets {
                        window,
                        start: BucketStart::Outcome,
                        ..
                    } => now.0 - t.0 >= window.as_nanos(),
                };
                let over_count = |len: usize| match spec.window {
                    BreakerWindow::Calls(n) => len > n as usize,
                    _ => false,
                };
                while let Some(&(t, f, w)) = s.window.front() {
                    if !gone(t) && !over_count(s.window.len()) {
                        break;
                    }
                    s.window.pop_front();
                    s.failures -= f as u32;
                    s.slow -= w as u32;
                }
                let calls = s.window.len() as u32;
                // Polly judges its window only when a call fails.
                let judged = failed || !spec.trip_on_failure;
                if judged
                    && calls >= spec.min_calls
                    && above_thresholds(&spec, s.failures, s.slow, calls)
                {
                    self.open(index, now);
                    Transition::Opened
                } else {
                    Transition::None
                }
            }
        }
    }

    fn open(&mut self, index: u32, now: SimTime) {
        debug_assert!(self.states[index as usize].mode != Mode::Open);
        let s = &mut self.states[index as usize];
        s.mode = Mode::Open;
        s.clear_window();
        s.opened_at = now;
        self.open_now += 1;
    }

    /// The open period of breaker `index` ended: it becomes half-open.
    pub fn half_open(&mut self, index: u32, now: SimTime) {
        let s = &mut self.states[index as usize];
        if s.mode == Mode::Open {
            s.mode = Mode::HalfOpen;
            s.probes_sent = 0;
            s.probes_ok = 0;
            s.probes_failed = 0;
            s.probes_slow = 0;
            s.round = s.round.checked_add(1).unwrap_or(1);
            self.open_total += now - s.opened_at;
            self.open_now -= 1;
        }
    }

    /// Number of breakers open right now.
    pub fn open_count(&self) -> u32 {
        self.open_now
    }

    /// Total time breakers spent open, counting those still open up to `end`.
    pub fn open_time(&self, end: SimTime) -> SimDuration {
        let still_open = self
            .states
            .iter()
            .filter(|s| s.mode == Mode::Open)
            .fold(SimDuration::ZERO, |acc, s| acc + (end - s.opened_at));
        self.open_total + still_open
    }
}

/// Whether `failures` or `slow` of `calls` reach their thresholds (Resilience4j's
/// `checkIfThresholdsExceeded`: either rate opens the breaker).
fn above_thresholds(spec: &BreakerSpec, failures: u32, slow: u32, calls: u32) -> bool {
    reaches(failures, calls, spec.failure_rate)
        || (spec.slow_call.is_some() && reaches(slow, calls, spec.slow_call_rate))
}

/// Whether `failures` of `calls` reach `rate`. The share as a quotient: it and the threshold
/// are both the nearest double to their exact values, so a share equal to the threshold (7 of
/// 25 at 0.28) compares equal, where `rate * calls` (7.000000000000001) did not.
fn reaches(failures: u32, calls: u32, rate: f64) -> bool {
    f64::from(failures) / f64::from(calls) >= rate
}

#[cfg(test)]
mod tests;
