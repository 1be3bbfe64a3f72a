//! The discrete-event engine: one run of one strategy against one scenario.
//!
//! A [`Simulation`] owns everything a run touches: the clock, the [`EventQueue`], the
//! requests in flight ([`request::Requests`]) and the jobs of services that call further
//! services ([`request::Jobs`]), the population sources, the services, budgets and breakers,
//! the seeded random streams, and the [`RunMetrics`] it fills. It does no I/O and never
//! prints; the API follows nexosim's: [`Simulation::step`] processes one event,
//! [`Simulation::run`] runs to the end and returns the metrics. A run is a pure function of
//! (scenario, strategy, seeds).
//!
//! The life of a logical request: it *begins* (a closed client's `Start`, an open
//! `Arrival`, or a service's downstream call) → `Send` (attempt 1) → `Arrive` at its
//! service → served (`Done`; for a service with downstream calls, `DoneJob` then one child
//! request per call, holding the slot) or answered at once → `Response` back over the network
//! (or the attempt's `Timeout` fires first) → success, a retry (`Send` again after the backoff
//! delay), a fallback call, or giving up. A child's end resumes its parent job; a job's end
//! answers its caller. Events of an abandoned attempt carry an old serial and are ignored.
//!
//! Attempt timers are armed lazily: a `Timeout` event is scheduled only once the attempt's
//! next step is known to come at or after its timeout (or cannot be known, as in a queue). Most
//! attempts are answered in time, so most timers never enter the queue. A timer armed late
//! carries the queue insertion number it reserved at send time, so among events of its
//! instant it pops where a timer scheduled at send time would (queue timeouts likewise keep
//! the number reserved when the attempt joined the queue): a next step due at the timeout
//! instant, scheduled after the send, arms it too. The outcome is that of scheduling every
//! timer when it is set, with one rule made explicit: a response already on its way that
//! arrives at exactly the timeout instant counts as arrived.
//!
//! This file holds the run's state and the event loop ([`Simulation::step`] and its
//! dispatch); `build` prepares a run (its state, the first requests, the servers'
//! scheduled changes, the attempt sample); the handlers follow a request's life, one file each: `starts` (where requests
//! begin), `attempts` (sending and timers), `servers` (admission, service, answers, jobs,
//! degrading servers), `outcomes` (results, giving up, ends, the end of a run) and `retry`
//! (the retry decision after a failure: Retry-After, backoff, budget).

mod attempts;
pub mod breaker;
pub mod budget;
mod build;
mod finish;
mod huge_pages;
pub mod limiter;
mod outcomes;
pub mod queue;
pub mod request;
mod retry;
mod servers;
pub mod service;
pub mod source;
mod starts;
pub mod streams;

use crate::metrics::{PopulationBucket, PopulationMetrics, RunMetrics, ServiceMetrics, Timeline};
use crate::model::dist::Sampler;
use crate::model::policy::{BreakerSpec, BudgetSpec, LimiterSpec, Strategy};
use crate::model::{OutageKind, Scenario, Source};
use crate::time::{SimDuration, SimTime};
use breaker::Breakers;
use budget::Budgets;
use limiter::Limiters;
pub use queue::{Event, EventKind, EventQueue};
use request::{Jobs, Requests};
use service::{Service, decode_hint};
use source::{SourceState, start_offsets};
pub use streams::{Purpose, RunSeed, SimRng};

/// How a request retries, and where its budget and breaker state live.
#[derive(Debug, Clone, Copy)]
struct RunPolicy<'a> {
    strategy: &'a Strategy,
    /// The service its requests call.
    target: u16,
    /// Index into `Simulation::budgets`.
    budget: Option<u16>,
    /// Index into `Simulation::breakers`.
    breaker: Option<u16>,
    /// Index into `Simulation::limiters`.
    limiter: Option<u16>,
    /// Client requests (may use the fallback server); downstream calls are not.
    client: bool,
}

/// A breaker group and the service whose calls it guards.
#[derive(Debug)]
struct BreakerGroup {
    breakers: Breakers,
    target: u16,
    client: bool,
}

/// Per-service random streams and samplers.
#[derive(Debug)]
struct ServiceDraws {
    latency: Sampler,
    latency_rng: SimRng,
    service: Sampler,
    service_rng: SimRng,
    errors_rng: SimRng,
    occ_write: Sampler,
    occ_rng: SimRng,
    /// OCC writes commit on arrival (the write time is constant zero).
    instant_write: bool,
}

/// A run stops as *stalled* when one simulated instant takes more than
/// `SAME_INSTANT_FLOOR + SAME_INSTANT_PER_CLIENT x clients` events: far more than any herd
/// needs at one instant (a few events per client), and reached in a fraction of a second by
/// a retry loop that takes no simulated time, which `time_limit` cannot stop.
pub const SAME_INSTANT_PER_CLIENT: u64 = 256;
/// See [`SAME_INSTANT_PER_CLIENT`].
pub const SAME_INSTANT_FLOOR: u64 = 1_000_000;

/// One run: a scenario, one of its strategies, one seed.
pub struct Simulation<'a> {
    scenario: &'a Scenario,
    seed: RunSeed,
    policies: Vec<RunPolicy<'a>>,
    /// Per policy, `expo(1), expo(2), ...` up to the cap (later retries wait the cap).
    ladders: Vec<Vec<SimDuration>>,
    /// `edge_policy[service]`: (callee, policy index) of each downstream callee.
    edge_policies: Vec<Vec<(u16, u16)>>,
    queue: EventQueue,
    /// Background events in the queue: capacity steps, autoscaling decisions and crashes.
    /// They create no work of their own (a run with only these left is over), but a
    /// capacity step or an autoscaling increase may still start requests that wait in a
    /// queue (`waits_for_background`).
    background: usize,
    /// Events in the queue that keep no run going: the background ones, and those that
    /// will do nothing at all: limiter wake-ups a rate change replaced (`limiter_result`)
    /// and timers of attempts answered or abandoned first (`Simulation::timer_dies`), which
    /// unlike background events never start queued work. One sum, kept as they come and
    /// go, so that the stop test of every event reads one field instead of adding two.
    idle: usize,
    now: SimTime,
    time_limit: SimTime,
    requests: Requests,
    jobs: Jobs,
    sources: Vec<SourceState<'a>>,
    /// Global client index of each population's first client.
    client_offsets: Vec<u32>,
    /// The scenario's services, then the fallback server when there is one.
    services: Vec<Service>,
    draws: Vec<ServiceDraws>,
    /// Index of the fallback server in `services` (`u16::MAX`: none).
    fallback: u16,
    backoff_rng: SimRng,
    budgets: Vec<Budgets>,
    breakers: Vec<BreakerGroup>,
    /// Client-side rate limiters (`client_rate_limiter`), one set per policy that has one.
    limiters: Vec<Limiters>,
    timelines: Vec<Timeline>,
    population_timelines: Vec<Vec<PopulationBucket>>,
    metrics: RunMetrics,
    /// Some service with downstream calls can crash (see `Simulation::orphaned`).
    crashes_lose_jobs: bool,
    /// Client requests begun and not ended.
    open_client_requests: u64,
    trigger: Option<SimTime>,
    /// [`Scenario::trigger_start`]: a backlog request's success counts as the system
    /// answering (for `recovered_s`) only from here on.
    trigger_start: Option<SimTime>,
    /// `trigger_start`, `SimTime::MAX` when there is none: one comparison per attempt
    /// sent (see [`Request::sent_in_trouble`](request::Request::sent_in_trouble)).
    trouble_from: SimTime,
    record_requests: bool,
    stopped: bool,
    /// The run stopped at `time_limit` with work still scheduled (a request's event, a
    /// pending arrival, a downstream call): what is open must be ended there. Whether a
    /// client request was cut, what the warning reports, is `RunMetrics::cut_short`.
    limit_reached: bool,
    /// Events processed at `now` so far (the instant of the last event), and how many one
    /// instant may take.
    instant_events: u64,
    instant_limit: u64,
    /// Per population, every how many clients (closed) or arrivals (open, trace) is in the
    /// attempt sample; empty when attempts are not recorded.
    sample_every: Vec<u64>,
    /// Per population, the arrivals the sample may still take: an open population's
    /// stride comes from its expected arrivals, and a run may see more.
    sample_left: Vec<u64>,
    /// Some budget caps each request's retries (Finagle's `per_request`): `request_caps`
    /// holds, by request key, the cap of the request's budget (`u32::MAX`: none), set when
    /// its first attempt is sent.
    caps_requests: bool,
    request_caps: Vec<u32>,
    /// Some budget counts attempts in flight and retries in progress (Envoy's concurrent
    /// budget): attempts tell it when they leave and when their outcome is back, and a
    /// request gives back the retry it holds (`Request::holds_retry`).
    counts_in_flight: bool,
    /// `times_attempts || counts_in_flight`: one test on every send for both.
    follows_attempts: bool,
    /// Some breaker counts slow calls, so every attempt's send time is kept in `sent_at`.
    times_attempts: bool,
    /// When the current attempt of each sampled request (of every request, under
    /// `times_attempts`) was sent, by request key.
    sent_at: Vec<SimTime>,
}

/// Events between two progress reports of [`Simulation::run_with_progress`].
pub const PROGRESS_EVERY: u64 = 1 << 18;

/// Most client requests (closed: clients) whose attempts are recorded per run.
pub const ATTEMPT_SAMPLE: u64 = 2_000;

/// Most attempts the sample records per run: the first ones whose outcome is known. A
/// raster of 2 000 requests shows at most this many marks usefully, and without a bound the
/// memory estimate must assume every sampled request makes `max_attempts` (up to 65 535)
/// attempts: 2 000 x 65 535 records per run.
pub const ATTEMPT_SAMPLE_MAX: usize = 100_000;

impl<'a> Simulation<'a> {
    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Processes the next event and returns its time, or `None` when the run is over (no
    /// events left but background ones, the next one at or after `time_limit`, or the run
    /// stalled: more events at one instant than [`SAME_INSTANT_PER_CLIENT`] allows, recorded
    /// in [`RunMetrics::stalled_at`]).
    ///
    /// Inlined into the run loop of [`Simulation::run_with_progress`], its only caller: as
    /// a call, it saved and restored six registers and its stack frame for every event
    /// (about 19 instructions of the quickstart herd's 600 per event).
    #[inline(always)]
    pub fn step(&mut self) -> Option<SimTime> {
        if self.stopped {
            return None;
        }
        self.step_unstopped()
    }

    /// [`Simulation::step`] of a run not stopped yet: the run loop stops at the first
    /// `None`, so it need not test `stopped` for every event.
    #[inline(always)]
    fn step_unstopped(&mut self) -> Option<SimTime> {
        if self.queue.len() == self.idle && !self.waits_for_background() {
            self.stopped = true;
            return None;
        }
        let event = self.queue.pop().expect("the queue holds an event");
        if event.time >= self.time_limit {
            self.stopped = true;
            // Back where it was: the end of the run reads the pending retries' send times.
            self.queue.push(event);
            // Work was left if any event pending (all at or after the limit) is neither
            // background nor inert: not only the first of them, which may be a capacity
            // step while a downstream call is still being served.
            self.limit_reached = self.queue.len() > self.idle;
            return None;
        }
        if event.kind.is_background() {
            self.background -= 1;
            self.idle -= 1;
        }
        // `now` is the instant of the last event (an event of the same instant only follows
        // one that set it).
        if event.time == self.now {
            self.instant_events += 1;
            if self.instant_events > self.instant_limit {
                self.stopped = true;
                self.metrics.stalled_at = Some(event.time);
                self.queue.push(event);
                return None;
            }
        } else {
            self.instant_events = 1;
        }
        self.now = event.time;
        self.metrics.events += 1;
        // At a million clients, request state is far bigger than the cache and nearly every
        // event misses on it: start loading the next event's request while this one runs
        // (its cold record only for the events that read it, a third of them in a herd:
        // memory can only serve so many loads at once).
        if let Some(next) = self.queue.upcoming(PREFETCH_AHEAD) {
            prefetch(self.requests.as_slice(), next.id as usize);
            if next.kind.reads_request_info() {
                prefetch(self.requests.infos(), next.id as usize);
            }
        }
        self.dispatch(event);
        Some(event.time)
    }

    /// Runs to the end and returns what was measured. Requests still open when the run stops
    /// end as `time_limit` at `time_limit`.
    pub fn run(self) -> RunMetrics {
        self.run_with_progress(&|_| {})
    }

    /// [`Simulation::run`], calling `progress(n)` after every [`PROGRESS_EVERY`] events
    /// (n = the events since the last call) and once at the end with the rest.
    pub fn run_with_progress(mut self, progress: &dyn Fn(u64)) -> RunMetrics {
        // Not stopped yet: `step` tests that, and only a `None` of `step_unstopped` stops it.
        while self.step_unstopped().is_some() {
            if self.metrics.events.is_multiple_of(PROGRESS_EVERY) {
                progress(PROGRESS_EVERY);
            }
        }
        progress(self.metrics.events % PROGRESS_EVERY);
        self.finish()
    }

    #[inline]
    fn dispatch(&mut self, e: Event) {
        match e.kind {
            EventKind::Start => self.start_closed(e.id),
            EventKind::Arrival => self.arrival(e.service as usize),
            EventKind::Send => self.send(e.id),
            EventKind::LimiterWake => self.limiter_wake(e.service, e.id, e.serial),
            EventKind::Arrive => self.arrive(e.id, e.serial, e.service, e.aux),
            EventKind::Read => self.read(e.id, e.serial, e.service),
            EventKind::ReadReply => self.read_reply(e.id, e.serial, e.service, e.aux),
            // The fields, not `&e`: taking the event's address kept every popped event in
            // memory (Brooker's experiment ran 40% slower, all of its 1.9% more
            // instructions in this loop).
            EventKind::Commit => self.commit(e.id, e.serial, e.service, e.aux, e.status, e.seq),
            EventKind::Done => self.done(e.id, e.serial, e.status, e.service, e.aux),
            EventKind::DoneJob => self.done_job(e.id, e.aux),
            EventKind::Response => self.result(e.id, e.serial, e.status, decode_hint(e.aux)),
            EventKind::Timeout => {
                let r = &mut self.requests[e.id];
                if !r.awaiting() || r.serial != e.serial {
                    // Its attempt was answered or abandoned first: a dead timer, counted
                    // as inert since then (see `Simulation::timer_dies`).
                    self.idle -= 1;
                    return;
                }
                // The attempt's timer is out of the queue, whatever it does now.
                r.set_timer_armed(false);
                // A response arriving at this very instant counts as arrived.
                if !r.response_at_timeout() {
                    self.result(e.id, e.serial, e.status, None)
                }
            }
            EventKind::HalfOpen => {
                let group = &mut self.breakers[e.service as usize];
                group.breakers.half_open(e.id, self.now);
                let target = group.target;
                self.record_breakers(target);
            }
            EventKind::QueueTimeout => self.queue_timeout(e.service, e.seq),
            EventKind::Capacity => self.capacity_event(e.service, e.aux, e.serial),
            EventKind::Autoscale => self.autoscale(e.service),
            EventKind::Crash => self.crash(e.service),
        }
    }

    // ------------------------------------------------------------------------ helpers

    /// The current attempt of `key`, still awaited, gets its outcome from something other
    /// than its timer (a response, the request's end): if the timer is in the queue, it is
    /// dead from now on, and counts as inert until it pops. Otherwise a timer long after
    /// the last answer kept the run going to its instant: the series ran on in idle rows,
    /// autoscaling kept deciding, and one past `time_limit` made the run look cut there.
    #[inline]
    pub(super) fn timer_dies(&mut self, key: u32) {
        let r = &mut self.requests[key];
        if r.timer_armed() {
            r.set_timer_armed(false);
            self.idle += 1;
        }
    }

    /// Whether requests wait in a server's queue while only background events are left: a
    /// capacity step or an autoscaling increase may still start them (a run with nothing
    /// queued is over even if its autoscaler would keep deciding forever).
    #[cold]
    fn waits_for_background(&self) -> bool {
        self.background > 0 && self.services.iter().any(|s| s.queued() > 0)
    }

    /// Records the open breakers guarding calls to `target` now.
    fn record_breakers(&mut self, target: u16) {
        let open = self
            .breakers
            .iter()
            .filter(|g| g.target == target)
            .map(|g| g.breakers.open_count())
            .sum();
        self.timelines[target as usize].breakers(self.now, open);
    }

    /// The bucket of population `p`'s series containing `t`.
    #[inline]
    fn population_bucket(&mut self, p: usize, t: SimTime) -> &mut PopulationBucket {
        let index = (t.0 / self.scenario.bucket.as_nanos().max(1)) as usize;
        let series = &mut self.population_timelines[p];
        if series.len() <= index {
            series.resize(index + 1, PopulationBucket::default());
        }
        &mut series[index]
    }

    /// One draw of the one-way latency to `svc` (both directions).
    #[inline]
    fn latency(&mut self, svc: u16) -> SimDuration {
        let d = &mut self.draws[svc as usize];
        d.latency.sample(&mut d.latency_rng)
    }

    #[inline]
    fn push(&mut self, event: Event) {
        if event.kind.is_background() {
            self.background += 1;
            self.idle += 1;
        }
        self.queue.push(event);
    }
}

/// How many events ahead request state is prefetched: far enough for a load from memory
/// (about 100 ns) to complete while the events in between run.
const PREFETCH_AHEAD: usize = 8;

/// Hints the CPU to load `items[i]` into the cache; a no-op off x86-64.
///
/// Not bounds-checked: `i` past the end only prefetches a useless line (a prefetch never
/// faults), and the check cost a comparison and a branch per prefetch, two or three per
/// event.
#[inline(always)]
pub(crate) fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // `wrapping_add`: computing the address is defined wherever it points.
        let address = items.as_ptr().wrapping_add(i);
        // SAFETY: SSE is part of the x86-64 baseline, so the instruction exists; a prefetch
        // of any address never faults and changes no program state.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_state_stays_small() {
        assert_eq!(
            std::mem::size_of::<request::Request>(),
            32,
            "half a cache line"
        );
        assert_eq!(
            std::mem::size_of::<request::RequestInfo>(),
            64,
            "a cache line"
        );
        // Each record within one cache line, wherever the allocator puts the vector.
        assert_eq!(std::mem::align_of::<request::Request>(), 32);
        assert_eq!(std::mem::align_of::<request::RequestInfo>(), 64);
        assert!(std::mem::size_of::<Event>() <= 32);
    }
}
