//! The discrete-event engine: one run of one strategy against one scenario.
//!
//! A [`Simulation`] owns everything a run touches: the clock, the [`EventQueue`], client
//! state in a `Vec` indexed by client id, the servers, budgets and breakers, one seeded
//! ChaCha8 stream, and the [`RunMetrics`] it fills. It does no I/O and never prints; the
//! API follows nexosim's: [`Simulation::step`] processes one event, [`Simulation::run`]
//! runs to the end and returns the metrics. A run is a pure function of
//! (scenario, strategy, seed).
//!
//! The life of a logical request: `Start` → `Send` (attempt 1) → `Arrive` at the server →
//! `Done` (served) or an immediate rejection → `Response` back over the network (or the
//! attempt's `Timeout` fires first) → success, a retry (`Send` again after the backoff
//! delay), a fallback call, or giving up. Events that belong to an abandoned attempt carry
//! an old serial and are ignored when they fire.
//!
//! Attempt timers are armed lazily: a `Timeout` event is scheduled only once the attempt's
//! next step is known to come after its timeout (or cannot be known, as in a queue). Most
//! attempts are answered in time, so most timers never enter the queue; the outcome is the
//! same as scheduling every timer at send time, with one rule made explicit: a response that
//! arrives at exactly the timeout instant counts as arrived.

pub mod breaker;
pub mod budget;
pub mod queue;
pub mod server;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::metrics::{Outcome, RequestRecord, RunMetrics, SUCCESS_BIT, Timeline, class_index};
use crate::model::dist::Sampler;
use crate::model::outcome::{GiveUpReason, Status};
use crate::model::policy::Strategy;
use crate::model::{OutageKind, Scenario};
use crate::time::{SimDuration, SimTime};
use breaker::{Breakers, Transition};
use budget::{Budgets, Decision};
pub use queue::{Event, EventKind, EventQueue};
use server::{Admission, Job, Server, hint_from_us, hint_to_us, outage_at};

/// The random-number generator behind every run (rand_chacha's ChaCha8).
pub type SimRng = ChaCha8Rng;

/// Per-client state. Plain data in a `Vec`, indexed by client id: one cache line (64
/// bytes), because at a million clients nearly every event misses the cache on it.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Client {
    /// Serial of the current attempt; events of older attempts are stale.
    serial: u32,
    /// Logical requests this client has finished.
    finished: u32,
    /// Attempts sent for the current request, every ladder included; 0 when no request is
    /// open (so `sent > 0` means "a request has started and not ended").
    sent: u32,
    /// Quota units taken by the last retry (refunded on success).
    quota_cost: u32,
    /// Last Retry-After hint received, in microseconds as events carry it (0: none).
    last_hint_us: u32,
    /// Transport attempt number of the current request (1-based; <= max_attempts <= 65535).
    attempt: u16,
    /// 429s seen by the rate-limit ladder that did not escalate (at most 65 535).
    rate_limited: u16,
    /// An attempt is outstanding (sent, no response or timeout yet).
    awaiting: bool,
    /// The current attempt goes to the fallback server.
    on_fallback: bool,
    /// How the breaker admitted the current attempt (0, or a half-open round's probe).
    probe: breaker::Probe,
    /// The current logical request is one the server answers 400.
    bad_request: bool,
    /// Whether a timer event for the current attempt is in the queue.
    timer_armed: bool,
    /// The current attempt's response is scheduled at exactly its timeout instant.
    response_at_timeout: bool,
    /// Last status received.
    last_status: Option<Status>,
    /// Why the request went to the fallback server.
    fallback_reason: GiveUpReason,
    /// First send of the current request (its deadline and latency count from here).
    first_send: SimTime,
    /// Previous delay (decorrelated jitter's state); `base` at the start of a request.
    prev_delay: SimDuration,
    /// Total waiting between attempts of the current request.
    waited: SimDuration,
    /// When the current attempt times out (`SimTime::MAX`: never).
    timeout_at: SimTime,
}

impl Client {
    fn new() -> Self {
        Client {
            serial: 0,
            finished: 0,
            sent: 0,
            quota_cost: 0,
            last_hint_us: 0,
            attempt: 0,
            rate_limited: 0,
            awaiting: false,
            on_fallback: false,
            probe: 0,
            bad_request: false,
            timer_armed: false,
            response_at_timeout: false,
            last_status: None,
            fallback_reason: GiveUpReason::Attempts,
            first_send: SimTime::ZERO,
            prev_delay: SimDuration::ZERO,
            waited: SimDuration::ZERO,
            timeout_at: SimTime::MAX,
        }
    }
}

/// One run: a scenario, one of its strategies, one seed.
pub struct Simulation<'a> {
    scenario: &'a Scenario,
    strategy: &'a Strategy,
    rng: SimRng,
    queue: EventQueue,
    now: SimTime,
    time_limit: SimTime,
    clients: Vec<Client>,
    primary: Server,
    fallback: Option<Server>,
    latency: Sampler,
    service: Sampler,
    fallback_latency: Sampler,
    fallback_service: Sampler,
    think: Option<Sampler>,
    budgets: Option<Budgets>,
    breakers: Option<Breakers>,
    timeline: Timeline,
    metrics: RunMetrics,
    open_requests: u64,
    record_requests: bool,
    stopped: bool,
    /// Events processed at `now` so far, and how many one instant may take before the run is
    /// stopped as stalled (see [`SAME_INSTANT_PER_CLIENT`]).
    at_instant: u64,
    instant_limit: u64,
}

/// A run may process at most `SAME_INSTANT_FLOOR + SAME_INSTANT_PER_CLIENT x clients` events
/// at one simulated instant. Retries that take no simulated time (zero latency, zero service,
/// a zero backoff delay) never reach `time_limit`, so without this bound a run could loop at
/// one instant for clients x requests x 65 535 attempts. A real herd at one instant needs a
/// handful of events per client (start, arrive, response); the bound leaves a wide margin.
pub const SAME_INSTANT_PER_CLIENT: u64 = 256;
/// See [`SAME_INSTANT_PER_CLIENT`].
pub const SAME_INSTANT_FLOOR: u64 = 1_000_000;

impl<'a> Simulation<'a> {
    /// Prepares a run of `scenario.strategies[strategy]` with a 32-byte ChaCha8 seed and
    /// schedules every client's first request. `record_requests` keeps one
    /// [`RequestRecord`] per logical request (memory grows with requests).
    ///
    /// Panics if `strategy` is out of range (a caller bug, not user input).
    pub fn new(
        scenario: &'a Scenario,
        strategy: usize,
        seed: [u8; 32],
        record_requests: bool,
    ) -> Self {
        let strategy = &scenario.strategies[strategy];
        let count = scenario.clients.count;
        let mut rng = SimRng::from_seed(seed);
        let mut queue = EventQueue::with_capacity(count as usize);
        // Start offsets are the first draws of the stream, in client order.
        let spread = scenario.clients.start_spread.as_nanos();
        for client in 0..count {
            let offset = if spread > 0 {
                (rng.random::<f64>() * spread as f64) as u64
            } else {
                0
            };
            let at = SimTime(scenario.clients.start.as_nanos()) + SimDuration(offset);
            queue.push(Event::new(EventKind::Start, at, client, 0));
        }
        let fallback = scenario.fallback.as_ref();
        Simulation {
            scenario,
            strategy,
            rng,
            queue,
            now: SimTime::ZERO,
            time_limit: SimTime(scenario.time_limit.as_nanos()),
            clients: vec![Client::new(); count as usize],
            primary: Server::new(&scenario.server),
            fallback: fallback.map(|f| Server::new(&f.server)),
            latency: scenario.latency.sampler(),
            service: scenario.server.service.sampler(),
            fallback_latency: fallback
                .map(|f| f.latency.sampler())
                .unwrap_or_else(|| scenario.latency.sampler()),
            fallback_service: fallback
                .map(|f| f.server.service.sampler())
                .unwrap_or_else(|| scenario.server.service.sampler()),
            think: scenario.clients.think.as_ref().map(|d| d.sampler()),
            budgets: strategy
                .retry
                .budget
                .as_ref()
                .map(|b| Budgets::new(b, count)),
            breakers: strategy
                .retry
                .breaker
                .as_ref()
                .map(|b| Breakers::new(b, count)),
            timeline: Timeline::new(scenario.bucket),
            metrics: RunMetrics::default(),
            open_requests: scenario.logical_requests(),
            record_requests,
            stopped: false,
            at_instant: 0,
            instant_limit: SAME_INSTANT_FLOOR + SAME_INSTANT_PER_CLIENT * count as u64,
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Logical requests not yet ended.
    pub fn open_requests(&self) -> u64 {
        self.open_requests
    }

    /// Processes the next event and returns its time, or `None` when the run is over (no
    /// events left, the next one is at or after `time_limit`, or the run stalled: more events
    /// at one instant than [`SAME_INSTANT_PER_CLIENT`] allows, recorded in
    /// [`RunMetrics::stalled_at`]).
    pub fn step(&mut self) -> Option<SimTime> {
        if self.stopped {
            return None;
        }
        let Some(event) = self.queue.pop() else {
            self.stopped = true;
            return None;
        };
        if event.time >= self.time_limit {
            self.stopped = true;
            return None;
        }
        if event.time == self.now {
            self.at_instant += 1;
            if self.at_instant > self.instant_limit {
                self.stopped = true;
                self.metrics.stalled_at = Some(event.time);
                return None;
            }
        } else {
            self.at_instant = 1;
        }
        self.now = event.time;
        self.metrics.events += 1;
        // At a million clients, client state is far bigger than the cache and nearly every
        // event misses on it: start loading the next event's client while this one runs.
        if let Some(next) = self.queue.upcoming_client() {
            prefetch(&self.clients, next as usize);
        }
        self.dispatch(event);
        Some(event.time)
    }

    /// Runs to the end and returns what was measured. Requests still open when the run stops
    /// end as `time_limit` at `time_limit`.
    pub fn run(mut self) -> RunMetrics {
        while self.step().is_some() {}
        self.finish()
    }

    fn finish(mut self) -> RunMetrics {
        if self.open_requests > 0 {
            self.now = self.time_limit;
            self.metrics.cut_short = true;
            for c in 0..self.clients.len() {
                let cl = self.clients[c];
                let remaining = self.scenario.clients.requests - cl.finished;
                for i in 0..remaining {
                    if i == 0 && cl.sent > 0 {
                        self.end(c as u32, Outcome::GaveUp(GiveUpReason::TimeLimit));
                    } else {
                        self.never_started(c as u32, cl.finished + i);
                    }
                }
            }
        }
        let end = self.now.max(self.metrics.completion);
        if let Some(b) = &self.breakers {
            self.metrics.breaker_open = b.open_time(self.metrics.completion);
        }
        self.metrics.timeline = self.timeline.finish(end);
        self.metrics
    }

    #[inline]
    fn dispatch(&mut self, e: Event) {
        match e.kind {
            EventKind::Start => self.start_request(e.client),
            EventKind::Send => self.send(e.client),
            EventKind::Arrive => self.arrive(e.client, e.serial, e.fallback, e.hint_us),
            EventKind::Read => self.read(e.client, e.serial, e.fallback),
            EventKind::ReadReply => self.read_reply(e.client, e.serial, e.fallback, e.hint_us),
            EventKind::Done => self.done(e.client, e.serial, e.status, e.fallback),
            EventKind::Response => {
                self.result(e.client, e.serial, e.status, hint_from_us(e.hint_us))
            }
            EventKind::Timeout => {
                // A response arriving at this very instant counts as arrived.
                if !self.clients[e.client as usize].response_at_timeout {
                    self.result(e.client, e.serial, e.status, None)
                }
            }
            EventKind::HalfOpen => {
                if let Some(b) = &mut self.breakers {
                    b.half_open(e.client, self.now);
                    let open = b.open_count();
                    self.timeline.breakers(self.now, open);
                }
            }
        }
    }

    fn start_request(&mut self, c: u32) {
        let rate = self.scenario.server.client_error_rate;
        let bad_request = rate > 0.0 && self.rng.random::<f64>() < rate;
        let base = self.strategy.backoff.base;
        let now = self.now;
        let cl = &mut self.clients[c as usize];
        *cl = Client {
            serial: cl.serial,
            finished: cl.finished,
            bad_request,
            attempt: 1,
            first_send: now,
            prev_delay: base,
            ..Client::new()
        };
        self.send(c);
    }

    /// Sends the client's next attempt now (first, retry or fallback call).
    fn send(&mut self, c: u32) {
        let now = self.now;
        let on_fallback = self.clients[c as usize].on_fallback;
        if !on_fallback && let Some(b) = &mut self.breakers {
            match b.admit(b.index(c)) {
                Some(probe) => self.clients[c as usize].probe = probe,
                None => {
                    // The attempt fails fast with class `breaker_open` (issue 4): it is what
                    // the request's record shows as its last status, not the earlier 503.
                    self.clients[c as usize].last_status = Some(Status::BreakerOpen);
                    return self.give_up(c, GiveUpReason::BreakerOpen);
                }
            }
        }
        // Copies of the `'a` references, so borrows of them do not hold `self`.
        let (scenario, strategy): (&'a Scenario, &'a Strategy) = (self.scenario, self.strategy);
        let retry = &strategy.retry;
        let cl = &mut self.clients[c as usize];
        cl.serial = cl.serial.wrapping_add(1);
        cl.awaiting = true;
        cl.sent += 1;
        let (serial, first) = (cl.serial, cl.sent == 1);
        let timeout = if on_fallback {
            retry.timeout
        } else {
            retry.attempt_timeout(cl.attempt as u32)
        };
        cl.timeout_at = timeout.map_or(SimTime::MAX, |t| now + t);
        cl.response_at_timeout = false;
        // The two early-failure timers below are the attempt's only timer when they fire.
        cl.timer_armed = false;
        if on_fallback {
            // Neither a first attempt nor a retry to the primary: a request whose first
            // attempt the breaker refused reaches here with `sent == 1`, and must not feed
            // the primary's budget (ratio window, adaptive fill).
        } else if first {
            if let Some(b) = &mut self.budgets {
                b.on_first_attempt(c, now);
            }
        } else {
            // Retries are counted when sent, not when decided: a retry the breaker refuses
            // at send time, or one the time limit cuts off, was never sent. The class is
            // the failure that caused it (set by `result`, always retryable here).
            let class = cl.last_status.expect("a retry follows a failed attempt");
            self.metrics.retries[class_index(class)] += 1;
            self.timeline.at(now).retries += 1;
        }

        let (latency, outages) = if on_fallback {
            let f = scenario
                .fallback
                .as_ref()
                .expect("fallback attempts need [fallback]");
            (
                self.fallback_latency.sample(&mut self.rng),
                &f.server.outages,
            )
        } else {
            (self.latency.sample(&mut self.rng), &scenario.server.outages)
        };
        let arrival = now + latency;
        let give_up_at = |limit: Option<SimDuration>| limit.map(|l| now + l);
        let connect_limit = match (retry.connect_timeout, timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let unreachable = matches!(
            outage_at(outages, arrival).map(|o| o.kind),
            Some(OutageKind::Unreachable)
        );
        if unreachable {
            // Nothing answers: the attempt fails when the first of its timers expires (or
            // hangs until the time limit when it has none).
            if let Some(at) = give_up_at(connect_limit) {
                self.clients[c as usize].timer_armed = true;
                self.push(
                    Event::new(EventKind::Timeout, at, c, serial).with_status(Status::Unreachable),
                );
            }
            return;
        }
        if let Some(ct) = retry.connect_timeout
            && latency > ct
        {
            let at = give_up_at(connect_limit).expect("connect timeout is set");
            self.clients[c as usize].timer_armed = true;
            self.push(Event::new(EventKind::Timeout, at, c, serial).with_status(Status::Timeout));
            return;
        }
        // An OCC attempt reads the row's version first; the write follows the read's answer.
        let occ = if on_fallback {
            self.fallback.as_ref().is_some_and(Server::is_occ)
        } else {
            self.primary.is_occ()
        };
        let kind = if occ {
            EventKind::Read
        } else {
            EventKind::Arrive
        };
        self.push(Event::new(kind, arrival, c, serial).on_fallback(on_fallback));
        self.arm_if_later(c, arrival);
    }

    /// An OCC read reaches the server: the version it sees travels back in the reply.
    fn read(&mut self, c: u32, serial: u32, on_fallback: bool) {
        let version = if on_fallback {
            self.fallback
                .as_ref()
                .expect("fallback attempts need [fallback]")
                .version()
        } else {
            self.primary.version()
        };
        let at = self.now + self.network(on_fallback);
        self.push(
            Event::new(EventKind::ReadReply, at, c, serial)
                .with_hint_us(version)
                .on_fallback(on_fallback),
        );
        if self.live(c, serial, on_fallback) {
            self.arm_if_later(c, at);
        }
    }

    /// The read's answer reaches the client, which writes at once with the version it read.
    fn read_reply(&mut self, c: u32, serial: u32, on_fallback: bool, version: u32) {
        if !self.live(c, serial, on_fallback) {
            return; // the attempt was abandoned (timed out) meanwhile
        }
        let at = self.now + self.network(on_fallback);
        self.push(
            Event::new(EventKind::Arrive, at, c, serial)
                .with_hint_us(version)
                .on_fallback(on_fallback),
        );
        self.arm_if_later(c, at);
    }

    /// Whether `serial` is the client's outstanding attempt (to `fallback` or the primary).
    #[inline]
    fn live(&self, c: u32, serial: u32, on_fallback: bool) -> bool {
        let cl = &self.clients[c as usize];
        cl.awaiting && cl.serial == serial && cl.on_fallback == on_fallback
    }

    /// The current attempt's next step happens at `next`: if that is after its timeout, the
    /// timer must fire first, so it enters the queue now (`SimTime::MAX`: unknown, e.g. queued).
    #[inline]
    fn arm_if_later(&mut self, c: u32, next: SimTime) {
        let cl = &mut self.clients[c as usize];
        if next > cl.timeout_at && !cl.timer_armed {
            cl.timer_armed = true;
            let (at, serial) = (cl.timeout_at, cl.serial);
            self.push(Event::new(EventKind::Timeout, at, c, serial).with_status(Status::Timeout));
        }
    }

    /// An attempt (for an OCC server: its write, carrying `read_version`) reaches a server.
    fn arrive(&mut self, c: u32, serial: u32, on_fallback: bool, read_version: u32) {
        let now = self.now;
        let cl = &self.clients[c as usize];
        let bad_request = cl.bad_request && cl.serial == serial && !on_fallback;
        let job = Job {
            client: c,
            serial,
            answer: Status::Ok,
        };
        let rng = &mut self.rng;
        let server = if on_fallback {
            self.fallback
                .as_mut()
                .expect("fallback attempts need [fallback]")
        } else {
            &mut self.primary
        };
        let admission = server.admit(now, job, bad_request, read_version, || rng.random::<f64>());
        if on_fallback {
            self.metrics.fallback_calls += 1;
            self.timeline.at(now).fallback_arrivals += 1;
        } else {
            self.metrics.calls += 1;
            let rejected = matches!(admission, Admission::Rejected { .. });
            let bucket = self.timeline.at(now);
            bucket.arrivals += 1;
            if rejected {
                bucket.rejected += 1;
                self.metrics.rejected += 1;
            } else {
                bucket.accepted += 1;
                self.metrics.accepted += 1;
            }
        }
        let live = self.live(c, serial, on_fallback);
        match admission {
            Admission::Rejected { status, hint } => {
                self.answer_now(c, serial, on_fallback, status, hint, live)
            }
            Admission::Written => self.answer_now(c, serial, on_fallback, Status::Ok, None, live),
            Admission::Serve(job) => self.start_service(job, on_fallback),
            Admission::Queued if live => self.arm_if_later(c, SimTime::MAX),
            Admission::Queued => {}
        }
        if !on_fallback {
            self.timeline
                .occupancy(now, self.primary.in_service(), self.primary.queued());
        }
    }

    /// The server answers an arrival at once, without service: the response crosses back.
    fn answer_now(
        &mut self,
        c: u32,
        serial: u32,
        on_fallback: bool,
        status: Status,
        hint: Option<SimDuration>,
        live: bool,
    ) {
        let at = self.now + self.network(on_fallback);
        self.push(
            Event::new(EventKind::Response, at, c, serial)
                .with_status(status)
                .with_hint_us(hint_to_us(hint))
                .on_fallback(on_fallback),
        );
        if live {
            let cl = &mut self.clients[c as usize];
            cl.response_at_timeout = at == cl.timeout_at;
            self.arm_if_later(c, at);
        }
    }

    fn start_service(&mut self, job: Job, on_fallback: bool) {
        let (server, sampler) = if on_fallback {
            (
                self.fallback
                    .as_ref()
                    .expect("fallback attempts need [fallback]"),
                &self.fallback_service,
            )
        } else {
            (&self.primary, &self.service)
        };
        let mut service = sampler.sample(&mut self.rng);
        let factor = server.slowdown_at(self.now);
        if factor != 1.0 {
            service = SimDuration::from_nanos_f64(service.as_nanos() as f64 * factor);
        }
        let at = self.now + service;
        self.push(
            Event::new(EventKind::Done, at, job.client, job.serial)
                .with_status(job.answer)
                .on_fallback(on_fallback),
        );
        if self.live(job.client, job.serial, on_fallback) {
            self.arm_if_later(job.client, at);
        }
    }

    fn done(&mut self, c: u32, serial: u32, status: Status, on_fallback: bool) {
        let now = self.now;
        let next = if on_fallback {
            self.fallback
                .as_mut()
                .expect("fallback attempts need [fallback]")
                .finish()
        } else {
            self.primary.finish()
        };
        if let Some(job) = next {
            self.start_service(job, on_fallback);
        }
        if !on_fallback {
            self.timeline.at(now).completed += 1;
            self.timeline
                .occupancy(now, self.primary.in_service(), self.primary.queued());
        }
        if self.live(c, serial, on_fallback) {
            let at = now + self.network(on_fallback);
            self.push(
                Event::new(EventKind::Response, at, c, serial)
                    .with_status(status)
                    .on_fallback(on_fallback),
            );
            let cl = &mut self.clients[c as usize];
            cl.response_at_timeout = at == cl.timeout_at;
            self.arm_if_later(c, at);
        } else if !on_fallback {
            // Served for a client that had already abandoned the attempt.
            self.metrics.wasted += 1;
        }
    }

    /// An attempt's result reached the client: a response, or its timer expired.
    fn result(&mut self, c: u32, serial: u32, status: Status, hint: Option<SimDuration>) {
        let now = self.now;
        let cl = &mut self.clients[c as usize];
        if !cl.awaiting || cl.serial != serial {
            return; // a late response or timer of an abandoned attempt
        }
        cl.awaiting = false;
        cl.last_status = Some(status);
        if hint.is_some() {
            cl.last_hint_us = hint_to_us(hint);
        }
        if cl.on_fallback {
            return if status == Status::Ok {
                self.metrics.fallback_succeeded += 1;
                self.end(c, Outcome::Succeeded)
            } else {
                let reason = cl.fallback_reason;
                self.end(c, Outcome::GaveUp(reason))
            };
        }
        let probe = cl.probe;
        if status != Status::BadRequest
            && let Some(b) = &mut self.breakers
        {
            let index = b.index(c);
            if b.record(index, now, status != Status::Ok, probe) == Transition::Opened {
                let at = now + b.open_for();
                let open = b.open_count();
                self.timeline.breakers(now, open);
                self.push(Event::new(EventKind::HalfOpen, at, index, 0));
            }
        }
        if status == Status::Ok {
            self.end(c, Outcome::Succeeded)
        } else {
            self.failure(c, status, hint)
        }
    }

    /// The retry decision after a failed attempt (DESIGN.md, "Retry decision").
    fn failure(&mut self, c: u32, status: Status, hint: Option<SimDuration>) {
        let now = self.now;
        let strategy = self.strategy;
        let retry = &strategy.retry;
        if !retry.retries(status) {
            return self.give_up(c, GiveUpReason::NonRetryable);
        }
        if let Some(b) = &mut self.budgets {
            b.on_failure(c);
        }
        let cl = &mut self.clients[c as usize];
        let (delay, transport) = match retry.rate_limit {
            Some(ladder) if status == Status::TooManyRequests => {
                // Counted in u32 before storing: the 429 that escalates may be the 65 536th,
                // which a u16 cannot hold; every count that does not escalate fits.
                let count = cl.rate_limited as u32 + 1;
                if ladder.escalates(count) {
                    return self.give_up(c, GiveUpReason::RateLimitEscalation);
                }
                cl.rate_limited = count as u16;
                (ladder.wait(hint.filter(|_| retry.retry_after.honor)), false)
            }
            _ => {
                if cl.attempt as u32 >= retry.max_attempts {
                    return self.give_up(c, GiveUpReason::Attempts);
                }
                let delay = match retry.retry_after.choose(hint) {
                    Some(d) => d,
                    None => {
                        let backoff = &strategy.backoff;
                        let u = if backoff.uses_draw() {
                            self.rng.random::<f64>()
                        } else {
                            0.0
                        };
                        let d = backoff.delay(cl.attempt as u32, cl.prev_delay, u);
                        cl.prev_delay = d;
                        d
                    }
                };
                (delay, true)
            }
        };
        if let Some(deadline) = retry.deadline
            && now + delay >= cl.first_send + deadline
        {
            return self.give_up(c, GiveUpReason::Deadline);
        }
        if let Some(b) = &mut self.budgets {
            match b.try_retry(c, now, status) {
                Decision::Refused => {
                    self.metrics.budget_refused += 1;
                    self.timeline.at(now).budget_refused += 1;
                    return self.give_up(c, GiveUpReason::Budget);
                }
                Decision::Allowed { cost } => {
                    self.metrics.budget_allowed += 1;
                    // Remembered even when 0: a retried success refunds its last retry's
                    // cost, which may be 0 (`retry_cost = 0`), never `success_refund`.
                    self.clients[c as usize].quota_cost = cost as u32;
                }
            }
        }
        let cl = &mut self.clients[c as usize];
        if transport {
            cl.attempt += 1;
        }
        cl.waited += delay;
        self.push(Event::new(EventKind::Send, now + delay, c, 0));
    }

    /// The request would end for `reason`: try the fallback server once, else end it.
    fn give_up(&mut self, c: u32, reason: GiveUpReason) {
        let cl = &mut self.clients[c as usize];
        if !cl.on_fallback
            && self.scenario.fallback.is_some()
            && self.strategy.retry.fallback_on.contains(reason)
        {
            cl.on_fallback = true;
            cl.fallback_reason = reason;
            return self.send(c);
        }
        self.end(c, Outcome::GaveUp(reason));
    }

    fn end(&mut self, c: u32, outcome: Outcome) {
        let now = self.now;
        let cl = &mut self.clients[c as usize];
        let latency = now - cl.first_send;
        let primary_success = outcome == Outcome::Succeeded && !cl.on_fallback;
        match outcome {
            Outcome::Succeeded => {
                self.metrics.succeeded += 1;
                self.metrics.success_attempts += cl.sent as u64;
                self.metrics
                    .latencies
                    .push(latency.as_nanos() | SUCCESS_BIT);
            }
            Outcome::GaveUp(reason) => {
                self.metrics.gave_up[reason as usize] += 1;
                self.metrics.latencies.push(latency.as_nanos());
            }
        }
        if self.record_requests {
            self.metrics.requests.push(RequestRecord {
                client: c,
                request: cl.finished,
                outcome,
                last_status: cl.last_status,
                attempts: cl.sent,
                total_wait: cl.waited,
                retry_after: hint_from_us(cl.last_hint_us),
                latency,
            });
        }
        // Every primary attempt after the first passed `try_retry`, so `sent > 1` on a
        // primary success means "this call was retried" (AWS: refund the retry's cost).
        let retry_cost = (cl.sent > 1).then_some(cl.quota_cost as u64);
        cl.awaiting = false;
        cl.sent = 0;
        cl.on_fallback = false;
        cl.finished += 1;
        let more = cl.finished < self.scenario.clients.requests;
        self.metrics.completion = self.metrics.completion.max(now);
        self.open_requests -= 1;
        if primary_success && let Some(b) = &mut self.budgets {
            b.on_success(c, retry_cost);
        }
        if more && now < self.time_limit {
            let think = match &self.think {
                Some(t) => t.sample(&mut self.rng),
                None => SimDuration::ZERO,
            };
            // An event, not a direct call: a request that ends at once (breaker open) must
            // not recurse into the next one.
            self.push(Event::new(EventKind::Start, now + think, c, 0));
        }
    }

    /// A request the time limit prevented from starting: counted, never sent.
    fn never_started(&mut self, c: u32, request: u32) {
        self.metrics.gave_up[GiveUpReason::TimeLimit as usize] += 1;
        self.open_requests -= 1;
        if self.record_requests {
            self.metrics.requests.push(RequestRecord {
                client: c,
                request,
                outcome: Outcome::GaveUp(GiveUpReason::TimeLimit),
                last_status: None,
                attempts: 0,
                total_wait: SimDuration::ZERO,
                retry_after: None,
                latency: SimDuration::ZERO,
            });
        }
        self.metrics.completion = self.metrics.completion.max(self.time_limit);
    }

    #[inline]
    fn network(&mut self, on_fallback: bool) -> SimDuration {
        if on_fallback {
            self.fallback_latency.sample(&mut self.rng)
        } else {
            self.latency.sample(&mut self.rng)
        }
    }

    #[inline]
    fn push(&mut self, event: Event) {
        self.queue.push(event);
    }
}

/// Hints the CPU to load `items[i]` into the cache; a no-op off x86-64 or out of bounds.
#[inline(always)]
fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of the x86-64 baseline, so the instruction exists; a prefetch
        // of a valid reference never faults and changes no program state.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_state_fits_one_cache_line() {
        assert_eq!(std::mem::size_of::<Client>(), 64);
    }
}
