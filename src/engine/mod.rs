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
//! next step is known to come after its timeout (or cannot be known, as in a queue). Most
//! attempts are answered in time, so most timers never enter the queue; the outcome is the
//! same as scheduling every timer at send time, with one rule made explicit: a response that
//! arrives at exactly the timeout instant counts as arrived.

pub mod breaker;
pub mod budget;
pub mod queue;
pub mod request;
pub mod service;
pub mod source;
pub mod streams;

use rand::RngExt;

use crate::metrics::{
    AttemptOutcome, AttemptRecord, Outcome, PopulationBucket, PopulationMetrics, RequestRecord,
    RunMetrics, ServiceMetrics, Timeline, class_index,
};
use crate::model::dist::Sampler;
use crate::model::outcome::{GiveUpReason, Status};
use crate::model::policy::{BreakerSpec, BudgetSpec, Strategy};
use crate::model::{OutageKind, Scenario, Source};
use crate::time::{SimDuration, SimTime};
use breaker::{Breakers, Transition};
use budget::{Budgets, Decision};
pub use queue::{Event, EventKind, EventQueue};
use request::{Job, Jobs, NONE, Request, RequestInfo, Requests};
use service::{Admission, Queued, Scaling, Service, hint_from_us, hint_to_us};
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
    /// Background events in the queue (capacity, autoscaling, crashes).
    background: usize,
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
    think_rng: SimRng,
    budgets: Vec<Budgets>,
    breakers: Vec<BreakerGroup>,
    timelines: Vec<Timeline>,
    population_timelines: Vec<Vec<PopulationBucket>>,
    metrics: RunMetrics,
    /// Client requests begun and not ended.
    open_client_requests: u64,
    trigger: Option<SimTime>,
    record_requests: bool,
    stopped: bool,
    /// Events processed at `instant` so far, and how many one instant may take.
    instant: SimTime,
    instant_events: u64,
    instant_limit: u64,
    /// Per population, every how many clients (closed) or arrivals (open, trace) is in the
    /// attempt sample; empty when attempts are not recorded.
    sample_every: Vec<u64>,
    /// When the current attempt of each sampled request was sent, by request key.
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
    /// Prepares a run of `scenario.strategies[strategy]` with the streams of `seed`, and
    /// schedules every population's first requests. `record_requests` keeps one
    /// [`RequestRecord`] per client request (memory grows with requests).
    ///
    /// Panics if `strategy` is out of range (a caller bug, not user input).
    pub fn new(scenario: &'a Scenario, strategy: usize, seed: RunSeed, record: bool) -> Self {
        let populations = &scenario.populations;
        let total_clients: u32 = populations.iter().map(|p| p.clients).sum();
        let reserved: u32 = populations
            .iter()
            .filter(|p| p.is_closed())
            .map(|p| p.clients)
            .sum();
        let mut budgets: Vec<Budgets> = Vec::new();
        let mut breakers: Vec<BreakerGroup> = Vec::new();
        let mut add_budget = |spec: &BudgetSpec, clients: u32| {
            budgets.push(Budgets::new(spec, clients));
            (budgets.len() - 1) as u16
        };
        let mut add_breaker = |spec: &BreakerSpec, clients: u32, target: u16, client: bool| {
            breakers.push(BreakerGroup {
                breakers: Breakers::new(spec, clients),
                target,
                client,
            });
            (breakers.len() - 1) as u16
        };

        // Client policies: a population that sets its own budget or breaker gets its own
        // instances; the others share the compared strategy's.
        let compared = &scenario.strategies[strategy];
        let mut shared_budget = None;
        let mut shared_breaker = None;
        let mut policies: Vec<RunPolicy> = Vec::new();
        for pp in &scenario.population_policies[strategy] {
            let retry = &pp.strategy.retry;
            let budget = retry.budget.as_ref().map(|b| {
                if pp.own_budget {
                    add_budget(b, total_clients)
                } else {
                    *shared_budget.get_or_insert_with(|| {
                        add_budget(compared.retry.budget.as_ref().unwrap_or(b), total_clients)
                    })
                }
            });
            let breaker = retry.breaker.as_ref().map(|b| {
                if pp.own_breaker {
                    add_breaker(b, total_clients, 0, true)
                } else {
                    *shared_breaker.get_or_insert_with(|| {
                        let spec = compared.retry.breaker.as_ref().unwrap_or(b);
                        add_breaker(spec, total_clients, 0, true)
                    })
                }
            });
            policies.push(RunPolicy {
                strategy: &pp.strategy,
                target: 0,
                budget,
                breaker,
                client: true,
            });
        }
        // Downstream calls: one policy, budget and breaker per (caller, callee) edge.
        let mut edge_policies = vec![Vec::new(); scenario.services.len()];
        for (s, svc) in scenario.services.iter().enumerate() {
            let policy = scenario.service_policy(strategy, s);
            for &callee in &svc.calls {
                let callee = callee as u16;
                if edge_policies[s].iter().any(|(c, _)| *c == callee) {
                    continue;
                }
                let retry = &policy.retry;
                policies.push(RunPolicy {
                    strategy: policy,
                    target: callee,
                    budget: retry.budget.as_ref().map(|b| add_budget(b, 1)),
                    breaker: retry
                        .breaker
                        .as_ref()
                        .map(|b| add_breaker(b, 1, callee, false)),
                    client: false,
                });
                edge_policies[s].push((callee, (policies.len() - 1) as u16));
            }
        }

        let mut services: Vec<Service> = scenario
            .services
            .iter()
            .map(|s| Service::new(&s.server))
            .collect();
        let mut draws: Vec<ServiceDraws> = Vec::new();
        let fallback = match &scenario.fallback {
            Some(f) => {
                services.push(Service::new(&f.server));
                (services.len() - 1) as u16
            }
            None => u16::MAX,
        };
        for (i, s) in services.iter().enumerate() {
            let latency = match scenario.services.get(i) {
                Some(svc) => &svc.latency,
                None => {
                    &scenario
                        .fallback
                        .as_ref()
                        .expect("the last is the fallback")
                        .latency
                }
            };
            let occ_write = s.spec().occ_write.sampler();
            draws.push(ServiceDraws {
                latency: latency.sampler(),
                latency_rng: seed.run_stream(Purpose::Latency, i),
                service: s.spec().service.sampler(),
                service_rng: seed.run_stream(Purpose::Service, i),
                errors_rng: seed.run_stream(Purpose::Errors, i),
                instant_write: matches!(occ_write, Sampler::Constant(d) if d.is_zero()),
                occ_write,
                occ_rng: seed.run_stream(Purpose::OccWrite, i),
            });
        }

        let ladders = policies
            .iter()
            .map(|p| p.strategy.backoff.ladder(p.strategy.retry.max_attempts))
            .collect();
        let mut sim = Simulation {
            scenario,
            seed,
            policies,
            ladders,
            edge_policies,
            queue: EventQueue::with_capacity(reserved as usize),
            background: 0,
            now: SimTime::ZERO,
            time_limit: SimTime(scenario.time_limit.as_nanos()),
            requests: Requests::new(reserved),
            jobs: Jobs::default(),
            sources: Vec::new(),
            client_offsets: Vec::new(),
            timelines: services
                .iter()
                .take(scenario.services.len())
                .map(|s| Timeline::new(scenario.bucket, s.concurrency()))
                .collect(),
            services,
            draws,
            fallback,
            backoff_rng: seed.run_stream(Purpose::Backoff, 0),
            think_rng: seed.run_stream(Purpose::Think, 0),
            budgets,
            breakers,
            population_timelines: vec![Vec::new(); populations.len()],
            metrics: RunMetrics {
                services: vec![ServiceMetrics::default(); scenario.services.len()],
                populations: vec![PopulationMetrics::default(); populations.len()],
                ..RunMetrics::default()
            },
            open_client_requests: 0,
            trigger: scenario.trigger(),
            record_requests: record,
            stopped: false,
            instant: SimTime::ZERO,
            instant_events: 0,
            instant_limit: SAME_INSTANT_FLOOR + SAME_INSTANT_PER_CLIENT * total_clients as u64,
            sample_every: Vec::new(),
            sent_at: Vec::new(),
        };
        sim.schedule_sources();
        sim.schedule_servers();
        sim
    }

    /// Schedules every closed client's first request and every open population's first
    /// arrival.
    fn schedule_sources(&mut self) {
        let scenario = self.scenario;
        let mut next_key = 0u32;
        let mut next_client = 0u32;
        for (p, population) in scenario.populations.iter().enumerate() {
            self.client_offsets.push(next_client);
            let mut state = SourceState::new(population, p, &self.seed, next_key);
            match (&population.source, &mut state) {
                (Source::Closed(c), _) => {
                    let offsets = start_offsets(c.count, c.start_spread, &self.seed, p);
                    for (i, offset) in offsets.enumerate() {
                        let key = next_key + i as u32;
                        self.requests[key].policy = p as u16;
                        self.requests.info_mut(key).client = next_client + i as u32;
                        let at = SimTime(c.start.as_nanos()) + offset;
                        self.queue.push(Event::new(EventKind::Start, at, key, 0));
                    }
                    next_key += c.count;
                }
                (_, SourceState::Arrivals(a)) => {
                    if let Some(at) = a.next_time() {
                        let e = Event::new(EventKind::Arrival, at, 0, 0).at_service(p as u16);
                        self.queue.push(e);
                    }
                }
                _ => unreachable!("open and trace populations have arrival generators"),
            }
            next_client += population.clients;
            self.sources.push(state);
        }
    }

    /// Schedules capacity steps, the first autoscaling decision and crashes (of the
    /// services and the fallback server).
    fn schedule_servers(&mut self) {
        let specs: Vec<_> = self.services.iter().map(|s| s.spec().clone()).collect();
        for (s, server) in specs.iter().enumerate() {
            for step in &server.capacity {
                let e = Event::new(EventKind::Capacity, step.at, 0, 0)
                    .at_service(s as u16)
                    .with_aux(step.concurrency);
                self.push(e);
            }
            if let Some(a) = server.autoscale {
                let e = Event::new(EventKind::Autoscale, SimTime::ZERO + a.interval, 0, 0)
                    .at_service(s as u16);
                self.push(e);
            }
            for o in &server.outages {
                if o.kind == OutageKind::Crash {
                    self.push(Event::new(EventKind::Crash, o.start, 0, 0).at_service(s as u16));
                }
            }
        }
    }

    /// Records every attempt of a deterministic sample of at most [`ATTEMPT_SAMPLE`] client
    /// requests (split evenly among populations): every k-th client of a closed population
    /// (all its requests), every k-th arrival of an open or trace population.
    pub fn sample_attempts(mut self) -> Self {
        let scenario = self.scenario;
        let share = (ATTEMPT_SAMPLE / scenario.populations.len() as u64).max(1);
        self.sample_every = scenario
            .populations
            .iter()
            .map(|p| {
                let units = match &p.source {
                    Source::Closed(c) => c.count as u64,
                    Source::Open(o) => o
                        .rate
                        .cumulative(o.start, o.end.min(self.time_limit))
                        .ceil() as u64,
                    Source::Trace(t) => t.times.len() as u64,
                };
                units.div_ceil(share).max(1)
            })
            .collect();
        self
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Processes the next event and returns its time, or `None` when the run is over (no
    /// events left but background ones, the next one at or after `time_limit`, or the run
    /// stalled: more events at one instant than [`SAME_INSTANT_PER_CLIENT`] allows, recorded
    /// in [`RunMetrics::stalled_at`]).
    pub fn step(&mut self) -> Option<SimTime> {
        if self.stopped {
            return None;
        }
        if self.queue.len() == self.background {
            self.stopped = true;
            return None;
        }
        let event = self.queue.pop().expect("the queue holds a work event");
        if event.time >= self.time_limit {
            self.stopped = true;
            self.metrics.cut_short |= !event.kind.is_background();
            return None;
        }
        if event.kind.is_background() {
            self.background -= 1;
        }
        if event.time == self.instant {
            self.instant_events += 1;
            if self.instant_events > self.instant_limit {
                self.stopped = true;
                self.metrics.stalled_at = Some(event.time);
                return None;
            }
        } else {
            self.instant = event.time;
            self.instant_events = 1;
        }
        self.now = event.time;
        self.metrics.events += 1;
        // At a million clients, request state is far bigger than the cache and nearly every
        // event misses on it: start loading the next event's request while this one runs.
        if let Some(next) = self.queue.upcoming_id(PREFETCH_AHEAD) {
            prefetch(self.requests.as_slice(), next as usize);
            prefetch(self.requests.infos(), next as usize);
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
        while self.step().is_some() {
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
            EventKind::Arrive => self.arrive(e.id, e.serial, e.service, e.aux),
            EventKind::Read => self.read(e.id, e.serial, e.service),
            EventKind::ReadReply => self.read_reply(e.id, e.serial, e.service, e.aux),
            EventKind::Commit => self.commit(e.id, e.serial, e.service, e.aux),
            EventKind::Done => self.done(e.id, e.serial, e.status, e.service, e.aux),
            EventKind::DoneJob => self.done_job(e.id, e.aux),
            EventKind::Response => self.result(e.id, e.serial, e.status, hint_from_us(e.aux)),
            EventKind::Timeout => {
                // A response arriving at this very instant counts as arrived.
                if !self.requests[e.id].response_at_timeout {
                    self.result(e.id, e.serial, e.status, None)
                }
            }
            EventKind::HalfOpen => {
                let group = &mut self.breakers[e.service as usize];
                group.breakers.half_open(e.id, self.now);
                let target = group.target;
                self.record_breakers(target);
            }
            EventKind::QueueTimeout => self.queue_timeout(e.service),
            EventKind::Capacity => self.set_capacity(e.service, e.aux),
            EventKind::Autoscale => self.autoscale(e.service),
            EventKind::Crash => self.crash(e.service),
        }
    }

    // ---------------------------------------------------------------- where requests begin

    /// A closed client begins its next logical request.
    fn start_closed(&mut self, key: u32) {
        self.begin(key, None);
    }

    /// The next arrival of open or trace population `p`: a new request, and the arrival
    /// after it scheduled.
    fn arrival(&mut self, p: usize) {
        let SourceState::Arrivals(a) = &mut self.sources[p] else {
            unreachable!("only open and trace populations schedule arrivals")
        };
        let number = a.next_number - 1;
        let client = self.client_offsets[p] + a.next_client();
        if let Some(at) = a.next_time() {
            self.push(Event::new(EventKind::Arrival, at, 0, 0).at_service(p as u16));
        }
        let key = self.requests.allocate();
        self.requests[key].policy = p as u16;
        let info = self.requests.info_mut(key);
        info.client = client;
        info.parent = NONE;
        info.number = number as u32;
        self.begin(key, None);
    }

    /// Service `job`'s next downstream call: a new request of the service's policy.
    fn start_child(&mut self, job: u32) {
        let j = self.jobs[job];
        let svc = j.service as usize;
        let callee = self.scenario.services[svc].calls[j.next_call as usize] as u16;
        let policy = self.edge_policies[svc]
            .iter()
            .find(|(c, _)| *c == callee)
            .expect("every callee has an edge policy")
            .1;
        let cap = self.scenario.services[svc]
            .propagate_deadline
            .then_some(j.deadline_at);
        let key = self.requests.allocate();
        self.requests[key].policy = policy;
        let info = self.requests.info_mut(key);
        info.client = 0;
        info.parent = job;
        info.number = j.next_call as u32;
        self.begin(key, cap);
    }

    /// Starts the logical request in `key` (routing fields already set) and sends its first
    /// attempt. `deadline_cap`: the caller's deadline, when propagated.
    fn begin(&mut self, key: u32, deadline_cap: Option<SimTime>) {
        let now = self.now;
        let r = self.requests[key];
        let info = *self.requests.info(key);
        let policy = self.policies[r.policy as usize];
        let bad_request = self.is_bad_request(r.policy, &info);
        let deadline = policy
            .strategy
            .retry
            .deadline
            .map_or(SimTime::MAX, |d| now + d);
        self.requests[key] = Request {
            serial: r.serial,
            in_flight: r.in_flight,
            policy: r.policy,
            bad_request,
            attempt: 1,
            ..Request::new()
        };
        *self.requests.info_mut(key) = RequestInfo {
            client: info.client,
            parent: info.parent,
            number: info.number,
            ended: false,
            first_send: now,
            deadline_at: deadline_cap.map_or(deadline, |cap| deadline.min(cap)),
            prev_delay: policy.strategy.backoff.base,
            ..RequestInfo::new()
        };
        let population = self.population(r.policy);
        if let Some(p) = population
            && !self.sample_every.is_empty()
        {
            let unit = if self.requests.reserved() > key {
                (info.client - self.client_offsets[p]) as u64
            } else {
                info.number as u64
            };
            self.requests[key].sampled = unit.is_multiple_of(self.sample_every[p]);
        }
        self.metrics.services[policy.target as usize].requests += 1;
        if let Some(p) = population {
            self.open_client_requests += 1;
            self.metrics.populations[p].requests += 1;
        }
        self.send(key);
    }

    /// Whether the request now beginning (policy `policy`, identity in `info`) is one its
    /// service answers 400. For client requests this is a workload draw (the same for every
    /// strategy); for downstream calls a draw of the callee's stream.
    fn is_bad_request(&mut self, policy: u16, info: &RequestInfo) -> bool {
        let target = self.policies[policy as usize].target as usize;
        let rate = self.scenario.services[target].server.client_error_rate;
        if rate <= 0.0 {
            return false;
        }
        let u = match self.population(policy) {
            Some(p) => self.seed.workload_draw(
                p,
                Purpose::BadRequest,
                info.client as u64,
                info.number as u64,
            ),
            None => self.draws[target].errors_rng.random::<f64>(),
        };
        u < rate
    }

    /// The population of a request following `policy`, `None` for a downstream call: client
    /// policies come first, one per population, in population order.
    #[inline]
    fn population(&self, policy: u16) -> Option<usize> {
        self.policies[policy as usize]
            .client
            .then_some(policy as usize)
    }

    // ------------------------------------------------------------------------ attempts

    /// Sends the request's next attempt now (first, retry or fallback call).
    fn send(&mut self, key: u32) {
        let now = self.now;
        let r = &self.requests[key];
        let policy = self.policies[r.policy as usize];
        if !r.on_fallback
            && let Some(g) = policy.breaker
        {
            let client = self.requests.info(key).client;
            let group = &mut self.breakers[g as usize].breakers;
            match group.admit(group.index(client)) {
                Some(probe) => self.requests[key].probe = probe,
                None => {
                    // The attempt fails fast with class `breaker_open`: it is what the
                    // request's record shows as its last status, not the earlier 503.
                    self.requests[key].last_status = Some(Status::BreakerOpen);
                    return self.give_up(key, GiveUpReason::BreakerOpen);
                }
            }
        }
        let retry = &policy.strategy.retry;
        let target = policy.target;
        let r = &mut self.requests[key];
        r.serial = r.serial.wrapping_add(1);
        r.awaiting = true;
        r.sent += 1;
        let (serial, first, on_fallback) = (r.serial, r.sent == 1, r.on_fallback);
        let (last_status, sampled, policy_index) = (r.last_status, r.sampled, r.policy);
        let timeout = if on_fallback {
            retry.timeout
        } else {
            retry.attempt_timeout(r.attempt as u32)
        };
        r.timeout_at = timeout.map_or(SimTime::MAX, |t| now + t);
        r.response_at_timeout = false;
        // The two early-failure timers below are the attempt's only timer when they fire.
        r.timer_armed = false;
        if sampled {
            self.requests.info_mut(key).shed = false;
            let i = key as usize;
            if self.sent_at.len() <= i {
                self.sent_at.resize(i + 1, SimTime::ZERO);
            }
            self.sent_at[i] = now;
        }
        let svc = if on_fallback { self.fallback } else { target };
        if on_fallback {
            // Neither a first attempt nor a retry to the primary: a request whose first
            // attempt the breaker refused reaches here with `sent == 1`, and must not feed
            // the primary's budget (ratio window, adaptive fill).
        } else if first {
            if let Some(b) = policy.budget {
                let client = self.requests.info(key).client;
                self.budgets[b as usize].on_first_attempt(client, now);
            }
            self.timelines[target as usize].at(now).first_attempts += 1;
            if let Some(p) = self.population(policy_index) {
                self.population_bucket(p, now).first_attempts += 1;
            }
        } else {
            // Retries are counted when sent, not when decided: a retry the breaker refuses
            // at send time, or one the time limit cuts off, was never sent. The class is
            // the failure that caused it (set by `result`, always retryable here).
            let class = last_status.expect("a retry follows a failed attempt");
            self.metrics.services[target as usize].retries[class_index(class)] += 1;
            self.timelines[target as usize].at(now).retries += 1;
        }

        let d = &mut self.draws[svc as usize];
        let latency = d.latency.sample(&mut d.latency_rng);
        let arrival = now + latency;
        let give_up_at = |limit: Option<SimDuration>| limit.map(|l| now + l);
        let connect_limit = match (retry.connect_timeout, timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let server = &self.services[svc as usize];
        if server
            .outage_at(arrival)
            .is_some_and(|o| o.kind.is_unreachable())
        {
            // Nothing answers: the attempt fails when the first of its timers expires (or
            // hangs until the time limit when it has none).
            if let Some(at) = give_up_at(connect_limit) {
                self.requests[key].timer_armed = true;
                self.push(
                    Event::new(EventKind::Timeout, at, key, serial)
                        .with_status(Status::Unreachable),
                );
            }
            return;
        }
        if let Some(ct) = retry.connect_timeout
            && latency > ct
        {
            let at = give_up_at(connect_limit).expect("connect timeout is set");
            self.requests[key].timer_armed = true;
            self.push(Event::new(EventKind::Timeout, at, key, serial).with_status(Status::Timeout));
            return;
        }
        // A read-write OCC attempt reads the row's version first; the write follows the
        // read's answer. Every other attempt goes straight to the server.
        let kind = if server.spec().occ == crate::model::Occ::ReadWrite {
            EventKind::Read
        } else {
            EventKind::Arrive
        };
        self.requests[key].in_flight += 1;
        self.push(Event::new(kind, arrival, key, serial).at_service(svc));
        self.arm_if_later(key, arrival);
    }

    /// An OCC read reaches the server: the version it sees travels back in the reply.
    fn read(&mut self, key: u32, serial: u32, svc: u16) {
        let version = self.services[svc as usize].version();
        let at = self.now + self.latency(svc);
        self.push(
            Event::new(EventKind::ReadReply, at, key, serial)
                .with_aux(version)
                .at_service(svc),
        );
        if self.is_live(key, serial, svc) {
            self.arm_if_later(key, at);
        }
    }

    /// The read's answer reaches the caller, which writes at once with the version it read.
    fn read_reply(&mut self, key: u32, serial: u32, svc: u16, version: u32) {
        if !self.is_live(key, serial, svc) {
            // The attempt was abandoned (timed out) meanwhile: it leaves the server side.
            return self.left_server(key);
        }
        let at = self.now + self.latency(svc);
        self.push(
            Event::new(EventKind::Arrive, at, key, serial)
                .with_aux(version)
                .at_service(svc),
        );
        self.arm_if_later(key, at);
    }

    /// Whether `serial` is the outstanding attempt of `key` to service `svc`.
    #[inline]
    fn is_live(&self, key: u32, serial: u32, svc: u16) -> bool {
        self.requests[key].is_live(serial, svc == self.fallback)
    }

    /// The current attempt's next step happens at `next`: if that is after its timeout, the
    /// timer must fire first, so it enters the queue now (`SimTime::MAX`: unknown, e.g. queued).
    #[inline]
    fn arm_if_later(&mut self, key: u32, next: SimTime) {
        let r = &mut self.requests[key];
        if next > r.timeout_at && !r.timer_armed {
            r.timer_armed = true;
            let (at, serial) = (r.timeout_at, r.serial);
            self.push(Event::new(EventKind::Timeout, at, key, serial).with_status(Status::Timeout));
        }
    }

    // ------------------------------------------------------------------------ servers

    /// An attempt (for an OCC server: its write, carrying `read_version`) reaches `svc`.
    fn arrive(&mut self, key: u32, serial: u32, svc: u16, read_version: u32) {
        let now = self.now;
        let r = &self.requests[key];
        let on_fallback = svc == self.fallback;
        let bad_request = r.bad_request && !on_fallback;
        let population = self.population(r.policy);
        let entry = Queued {
            request: key,
            serial,
            answer: Status::Ok,
            joined: now,
        };
        let d = &mut self.draws[svc as usize];
        let (instant, errors) = (d.instant_write, &mut d.errors_rng);
        let admission = self.services[svc as usize].admit(
            now,
            entry,
            bad_request,
            read_version,
            instant,
            || errors.random::<f64>(),
        );
        if on_fallback {
            self.metrics.fallback_calls += 1;
            self.timelines[0].at(now).fallback_arrivals += 1;
        } else {
            let m = &mut self.metrics.services[svc as usize];
            m.calls += 1;
            let bucket = self.timelines[svc as usize].at(now);
            bucket.arrivals += 1;
            if matches!(admission, Admission::Rejected { .. }) {
                bucket.rejected += 1;
                m.rejected += 1;
            } else {
                bucket.accepted += 1;
                m.accepted += 1;
            }
            if svc == 0
                && let Some(p) = population
            {
                self.metrics.populations[p].calls += 1;
            }
        }
        match admission {
            Admission::Rejected { status, hint } => self.respond(key, serial, svc, status, hint),
            Admission::Written => self.respond(key, serial, svc, Status::Ok, None),
            Admission::Hold { version } => {
                let d = &mut self.draws[svc as usize];
                let at = now + d.occ_write.sample(&mut d.occ_rng);
                self.push(
                    Event::new(EventKind::Commit, at, key, serial)
                        .with_aux(version)
                        .at_service(svc),
                );
                if self.is_live(key, serial, svc) {
                    self.arm_if_later(key, at);
                }
            }
            Admission::Serve(entry) => self.start_service(svc, entry),
            Admission::Queued => {
                if self.is_live(key, serial, svc) {
                    self.arm_if_later(key, SimTime::MAX);
                }
                self.arm_queue_timer(svc);
            }
        }
        self.record_occupancy(svc);
    }

    /// An OCC write's commit instant: it wins only if the row is at the version it expects.
    fn commit(&mut self, key: u32, serial: u32, svc: u16, version: u32) {
        let status = if self.services[svc as usize].commit(version) {
            Status::Ok
        } else {
            Status::Conflict
        };
        self.respond(key, serial, svc, status, None);
    }

    /// `svc` answers an attempt now (a refusal, an OCC write, a dropped queued attempt): the
    /// response crosses the network back, and the attempt leaves the server side.
    fn respond(
        &mut self,
        key: u32,
        serial: u32,
        svc: u16,
        status: Status,
        hint: Option<SimDuration>,
    ) {
        if self.is_live(key, serial, svc) {
            let at = self.now + self.latency(svc);
            self.push(
                Event::new(EventKind::Response, at, key, serial)
                    .with_status(status)
                    .with_aux(hint_to_us(hint))
                    .at_service(svc),
            );
            let r = &mut self.requests[key];
            r.response_at_timeout = at == r.timeout_at;
            self.arm_if_later(key, at);
        }
        self.left_server(key);
    }

    /// An attempt `svc` lost in a crash will never be answered: its caller's timer (left
    /// unarmed while the answer was expected in time) must now fire, and the attempt leaves
    /// the server side.
    fn lost(&mut self, key: u32, serial: u32, svc: u16) {
        if self.is_live(key, serial, svc) {
            self.arm_if_later(key, SimTime::MAX);
        }
        self.left_server(key);
    }

    /// One attempt of `key` is no longer held by any server.
    #[inline]
    fn left_server(&mut self, key: u32) {
        self.requests[key].in_flight -= 1;
        self.requests.release_if_done(key);
    }

    /// `entry` took a slot of `svc`: its service time starts now.
    fn start_service(&mut self, svc: u16, entry: Queued) {
        let s = svc as usize;
        let factor = self.services[s].slowdown_at(self.now);
        let d = &mut self.draws[s];
        let mut service = d.service.sample(&mut d.service_rng);
        if factor != 1.0 {
            service = SimDuration::from_nanos_f64(service.as_nanos() as f64 * factor);
        }
        let at = self.now + service;
        let generation = self.services[s].generation();
        let calls = self
            .scenario
            .services
            .get(s)
            .is_some_and(|x| !x.calls.is_empty());
        if calls && entry.answer == Status::Ok {
            let job = self.jobs.insert(Job {
                service: svc,
                next_call: 0,
                answer: entry.answer,
                generation,
                caller: entry.request,
                caller_serial: entry.serial,
                deadline_at: self.requests.info(entry.request).deadline_at,
            });
            self.push(
                Event::new(EventKind::DoneJob, at, job, 0)
                    .with_aux(generation)
                    .at_service(svc),
            );
            if self.is_live(entry.request, entry.serial, svc) {
                // The answer waits for the downstream calls: not known yet.
                self.arm_if_later(entry.request, SimTime::MAX);
            }
        } else {
            self.push(
                Event::new(EventKind::Done, at, entry.request, entry.serial)
                    .with_status(entry.answer)
                    .with_aux(generation)
                    .at_service(svc),
            );
            if self.is_live(entry.request, entry.serial, svc) {
                self.arm_if_later(entry.request, at);
            }
        }
    }

    /// A slot of `svc` is released: the next queued attempts start.
    fn release_slot(&mut self, svc: u16) {
        let now = self.now;
        self.services[svc as usize].release(now);
        if (svc as usize) < self.timelines.len() {
            self.timelines[svc as usize].at(now).completed += 1;
        }
        self.start_queued(svc);
    }

    /// Starts queued attempts of `svc` while it has free slots.
    fn start_queued(&mut self, svc: u16) {
        while let Some(next) = self.services[svc as usize].take_next(self.now) {
            self.start_service(svc, next);
        }
    }

    /// `svc` finished serving an attempt (a service without downstream calls).
    fn done(&mut self, key: u32, serial: u32, status: Status, svc: u16, generation: u32) {
        if generation != self.services[svc as usize].generation() {
            // Lost in a crash: the slot was freed then, and nothing answers.
            return self.lost(key, serial, svc);
        }
        self.release_slot(svc);
        self.record_occupancy(svc);
        self.answer(key, serial, svc, status);
    }

    /// `svc` answers the attempt it served: a response if the caller still waits, else the
    /// work was wasted.
    fn answer(&mut self, key: u32, serial: u32, svc: u16, status: Status) {
        if self.is_live(key, serial, svc) {
            let at = self.now + self.latency(svc);
            self.push(
                Event::new(EventKind::Response, at, key, serial)
                    .with_status(status)
                    .at_service(svc),
            );
            let r = &mut self.requests[key];
            r.response_at_timeout = at == r.timeout_at;
            self.arm_if_later(key, at);
        } else if svc != self.fallback {
            // Served for a caller that had already abandoned the attempt.
            self.metrics.services[svc as usize].wasted += 1;
        }
        self.left_server(key);
    }

    /// A service with downstream calls finished its own work on `job`: the calls begin.
    fn done_job(&mut self, job: u32, generation: u32) {
        let j = self.jobs[job];
        if generation != self.services[j.service as usize].generation() {
            self.jobs.remove(job);
            return self.lost(j.caller, j.caller_serial, j.service);
        }
        self.start_child(job);
    }

    /// A downstream call of `job` ended: the next call, or the answer.
    fn child_ended(&mut self, job: u32, succeeded: bool) {
        let j = self.jobs[job];
        if j.generation != self.services[j.service as usize].generation() {
            // The service crashed while waiting on this call: the job is lost.
            self.jobs.remove(job);
            return self.lost(j.caller, j.caller_serial, j.service);
        }
        if !succeeded {
            // A downstream give-up makes the service answer 500.
            return self.finish_job(job, Status::ServerError);
        }
        let next = j.next_call + 1;
        if (next as usize) < self.scenario.services[j.service as usize].calls.len() {
            self.jobs[job].next_call = next;
            self.start_child(job);
        } else {
            self.finish_job(job, j.answer);
        }
    }

    /// `job` is over: its slot is released and its caller answered.
    fn finish_job(&mut self, job: u32, status: Status) {
        let j = self.jobs[job];
        self.jobs.remove(job);
        self.release_slot(j.service);
        self.record_occupancy(j.service);
        self.answer(j.caller, j.caller_serial, j.service, status);
    }

    /// Arms the queue-timeout check of `svc` for its oldest queued attempt, if none is armed.
    fn arm_queue_timer(&mut self, svc: u16) {
        let s = &mut self.services[svc as usize];
        if s.queue_timer.is_none()
            && let Some(at) = s.next_expiry()
        {
            s.queue_timer = Some(at);
            self.push(Event::new(EventKind::QueueTimeout, at, 0, 0).at_service(svc));
        }
    }

    /// Drops every queued attempt of `svc` that has waited `queue_timeout`: each is answered
    /// 503 now and counted as shed.
    fn queue_timeout(&mut self, svc: u16) {
        let now = self.now;
        self.services[svc as usize].queue_timer = None;
        while let Some(q) = self.services[svc as usize].expire(now) {
            if svc != self.fallback {
                self.metrics.services[svc as usize].shed += 1;
                self.timelines[svc as usize].at(now).shed += 1;
            }
            let hint = self.services[svc as usize].overload_hint();
            if self.is_live(q.request, q.serial, svc) && self.requests[q.request].sampled {
                self.requests.info_mut(q.request).shed = true;
            }
            self.respond(q.request, q.serial, svc, Status::Unavailable, hint);
        }
        self.arm_queue_timer(svc);
        self.record_occupancy(svc);
    }

    /// `svc` now has `slots` slots (a capacity step, or an autoscaling change).
    fn set_capacity(&mut self, svc: u16, slots: u32) {
        self.services[svc as usize].set_concurrency(slots);
        if (svc as usize) < self.timelines.len() {
            self.timelines[svc as usize].concurrency(self.now, slots);
        }
        self.start_queued(svc);
        self.record_occupancy(svc);
    }

    /// An autoscaling decision of `svc`, and the next one an interval later (while there is
    /// work left to do).
    fn autoscale(&mut self, svc: u16) {
        let now = self.now;
        match self.services[svc as usize].autoscale(now) {
            Scaling::Keep => {}
            Scaling::Now(n) => self.set_capacity(svc, n),
            Scaling::Later(n) => {
                let warmup = self.services[svc as usize]
                    .spec()
                    .autoscale
                    .expect("autoscaling is configured")
                    .warmup;
                let e = Event::new(EventKind::Capacity, now + warmup, 0, 0)
                    .at_service(svc)
                    .with_aux(n);
                self.push(e);
            }
        }
        let interval = self.services[svc as usize]
            .spec()
            .autoscale
            .expect("autoscaling is configured")
            .interval;
        self.push(Event::new(EventKind::Autoscale, now + interval, 0, 0).at_service(svc));
    }

    /// `svc` crashes: every queued and in-service attempt is lost without an answer.
    fn crash(&mut self, svc: u16) {
        let now = self.now;
        let lost_in_service = self.services[svc as usize].in_service() as u64;
        let lost = self.services[svc as usize].crash(now);
        if let Some(m) = self.metrics.services.get_mut(svc as usize) {
            m.lost += lost.len() as u64 + lost_in_service;
        }
        for q in lost {
            self.lost(q.request, q.serial, svc);
        }
        self.record_occupancy(svc);
    }

    fn record_occupancy(&mut self, svc: u16) {
        if let Some(t) = self.timelines.get_mut(svc as usize) {
            let s = &self.services[svc as usize];
            t.occupancy(self.now, s.in_service(), s.queued());
        }
    }

    // ------------------------------------------------------------------------ outcomes

    /// An attempt's result reached the caller: a response from `svc`, or its timer expired.
    fn result(&mut self, key: u32, serial: u32, status: Status, hint: Option<SimDuration>) {
        let now = self.now;
        let r = &mut self.requests[key];
        if !r.awaiting || r.serial != serial {
            return; // a late response or timer of an abandoned attempt
        }
        r.awaiting = false;
        r.last_status = Some(status);
        let (sampled, on_fallback, policy, probe) = (r.sampled, r.on_fallback, r.policy, r.probe);
        if hint.is_some() {
            self.requests.info_mut(key).last_hint_us = hint_to_us(hint);
        }
        let target = self.policies[policy as usize].target;
        if sampled {
            self.record_attempt(key, status);
        }
        if matches!(status, Status::Timeout | Status::Unreachable) && !on_fallback {
            self.metrics.services[target as usize].timeouts += 1;
            self.timelines[target as usize].at(now).timeouts += 1;
        }
        if on_fallback {
            return if status == Status::Ok {
                self.metrics.fallback_succeeded += 1;
                self.end(key, Outcome::Succeeded)
            } else {
                let reason = self.requests.info(key).fallback_reason;
                self.end(key, Outcome::GaveUp(reason))
            };
        }
        let policy = self.policies[policy as usize];
        if status != Status::BadRequest
            && let Some(g) = policy.breaker
        {
            let client = self.requests.info(key).client;
            let group = &mut self.breakers[g as usize];
            let index = group.breakers.index(client);
            let failed = status != Status::Ok;
            if group.breakers.record(index, now, failed, probe) == Transition::Opened {
                let at = now + group.breakers.open_for();
                let target = group.target;
                self.record_breakers(target);
                self.push(Event::new(EventKind::HalfOpen, at, index, 0).at_service(g));
            }
        }
        if status == Status::Ok {
            self.end(key, Outcome::Succeeded)
        } else {
            self.failure(key, status, hint)
        }
    }

    /// The retry decision after a failed attempt (DESIGN.md, "Retry decision").
    fn failure(&mut self, key: u32, status: Status, hint: Option<SimDuration>) {
        let now = self.now;
        let policy = self.policies[self.requests[key].policy as usize];
        let strategy = policy.strategy;
        let retry = &strategy.retry;
        if !retry.retries(status) {
            return self.give_up(key, GiveUpReason::NonRetryable);
        }
        let client = self.requests.info(key).client;
        if let Some(b) = policy.budget {
            self.budgets[b as usize].on_failure(client);
        }
        let attempt = self.requests[key].attempt;
        let (delay, transport) = match retry.rate_limit {
            Some(ladder) if status == Status::TooManyRequests => {
                let info = self.requests.info_mut(key);
                info.rate_limited = info.rate_limited.saturating_add(1);
                if ladder.escalates(info.rate_limited) {
                    return self.give_up(key, GiveUpReason::RateLimitEscalation);
                }
                (ladder.wait(hint.filter(|_| retry.retry_after.honor)), false)
            }
            _ => {
                if attempt as u32 >= retry.max_attempts {
                    return self.give_up(key, GiveUpReason::Attempts);
                }
                let delay = match retry.retry_after.choose(hint) {
                    Some(d) => d,
                    None => {
                        let backoff = &strategy.backoff;
                        let u = if backoff.uses_draw() {
                            self.backoff_rng.random::<f64>()
                        } else {
                            0.0
                        };
                        let ladder = &self.ladders[self.requests[key].policy as usize];
                        let last = *ladder.last().expect("a ladder has a first step");
                        let expo = ladder.get(attempt as usize - 1).copied().unwrap_or(last);
                        let info = self.requests.info_mut(key);
                        let d = backoff.delay_from(expo, info.prev_delay, u);
                        info.prev_delay = d;
                        d
                    }
                };
                (delay, true)
            }
        };
        if now + delay >= self.requests.info(key).deadline_at {
            return self.give_up(key, GiveUpReason::Deadline);
        }
        if let Some(b) = policy.budget {
            let target = policy.target as usize;
            match self.budgets[b as usize].try_retry(client, now, status) {
                Decision::Refused => {
                    self.metrics.services[target].budget_refused += 1;
                    self.timelines[target].at(now).budget_refused += 1;
                    return self.give_up(key, GiveUpReason::Budget);
                }
                Decision::Allowed { cost } => {
                    self.metrics.services[target].budget_allowed += 1;
                    // Remembered even when 0: a retried success refunds its last retry's
                    // cost, which may be 0 (`retry_cost = 0`), never `success_refund`.
                    self.requests.info_mut(key).quota_cost = cost as u32;
                }
            }
        }
        if transport {
            self.requests[key].attempt += 1;
        }
        self.requests.info_mut(key).waited += delay;
        self.push(Event::new(EventKind::Send, now + delay, key, 0));
    }

    /// The request would end for `reason`: try the fallback server once, else end it.
    fn give_up(&mut self, key: u32, reason: GiveUpReason) {
        let r = &mut self.requests[key];
        let policy = &self.policies[r.policy as usize];
        if !r.on_fallback
            && policy.client
            && self.scenario.fallback.is_some()
            && policy.strategy.retry.fallback_on.contains(reason)
        {
            r.on_fallback = true;
            self.requests.info_mut(key).fallback_reason = reason;
            return self.send(key);
        }
        self.end(key, Outcome::GaveUp(reason));
    }

    /// The logical request in `key` ends with `outcome`.
    fn end(&mut self, key: u32, outcome: Outcome) {
        let now = self.now;
        self.record_end(key, outcome);
        let r = self.requests[key];
        let info = *self.requests.info(key);
        let policy = self.policies[r.policy as usize];
        let primary_success = outcome == Outcome::Succeeded && !r.on_fallback;
        // Every primary attempt after the first passed `try_retry`, so `sent > 1` on a
        // primary success means "this call was retried" (AWS: refund the retry's cost).
        let retry_cost = (r.sent > 1).then_some(info.quota_cost as u64);
        if primary_success && let Some(b) = policy.budget {
            self.budgets[b as usize].on_success(info.client, retry_cost);
        }
        match self.population(r.policy).map(|p| &self.sources[p]) {
            Some(SourceState::Closed {
                requests, think, ..
            }) => {
                let more = info.number + 1 < *requests;
                self.requests.info_mut(key).number += 1;
                if more && now < self.time_limit {
                    let think = match think {
                        Some(t) => t.sample(&mut self.think_rng),
                        None => SimDuration::ZERO,
                    };
                    // An event, not a direct call: a request that ends at once (breaker
                    // open) must not recurse into the next one.
                    self.push(Event::new(EventKind::Start, now + think, key, 0));
                }
            }
            _ => {
                self.requests.release_if_done(key);
                if info.parent != NONE {
                    self.child_ended(info.parent, outcome == Outcome::Succeeded);
                }
            }
        }
    }

    /// Books the end of the request in `key`: counters, series, latency, record.
    fn record_end(&mut self, key: u32, outcome: Outcome) {
        let now = self.now;
        self.requests[key].awaiting = false;
        let r = self.requests[key];
        let info = self.requests.info_mut(key);
        info.ended = true;
        let info = *info;
        let latency = now - info.first_send;
        let target = self.policies[r.policy as usize].target as usize;
        let m = &mut self.metrics.services[target];
        let bucket = self.timelines[target].at(now);
        let succeeded = outcome == Outcome::Succeeded;
        match outcome {
            Outcome::Succeeded => {
                m.succeeded += 1;
                m.success_attempts += r.sent as u64;
                bucket.succeeded += 1;
            }
            Outcome::GaveUp(reason) => {
                m.gave_up[reason as usize] += 1;
                bucket.gave_up += 1;
            }
        }
        let Some(p) = self.population(r.policy) else {
            return;
        };
        self.open_client_requests -= 1;
        self.metrics.latencies.record(latency.as_nanos());
        if succeeded {
            self.metrics.success_latencies.record(latency.as_nanos());
        }
        let pm = &mut self.metrics.populations[p];
        pm.latencies.record(latency.as_nanos());
        if succeeded {
            pm.succeeded += 1;
        } else {
            pm.gave_up += 1;
        }
        let pb = self.population_bucket(p, now);
        if succeeded {
            pb.succeeded += 1;
        } else {
            pb.gave_up += 1;
        }
        if self.trigger.is_some_and(|t| info.first_send < t) {
            self.metrics.backlog_cleared = self.metrics.backlog_cleared.max(Some(now));
            if outcome == Outcome::GaveUp(GiveUpReason::TimeLimit) {
                self.metrics.backlog_open = true;
            }
        }
        self.metrics.completion = self.metrics.completion.max(now);
        if self.record_requests {
            self.metrics.requests.push(RequestRecord {
                population: p as u16,
                client: info.client - self.client_offsets[p],
                request: info.number,
                outcome,
                last_status: r.last_status,
                attempts: r.sent,
                total_wait: info.waited,
                retry_after: hint_from_us(info.last_hint_us),
                latency,
            });
        }
    }

    /// Records the attempt of sampled client request `key` that just ended with `status`.
    #[cold]
    fn record_attempt(&mut self, key: u32, status: Status) {
        if self.metrics.attempts.len() >= ATTEMPT_SAMPLE_MAX {
            return;
        }
        let (r, info) = (self.requests[key], *self.requests.info(key));
        let outcome = match status {
            Status::Ok => AttemptOutcome::Served,
            Status::Timeout | Status::Unreachable => AttemptOutcome::TimedOut,
            Status::Unavailable if info.shed => AttemptOutcome::Shed,
            _ => AttemptOutcome::Rejected,
        };
        let p = self
            .population(r.policy)
            .expect("only client requests are sampled");
        self.metrics.attempts.push(AttemptRecord {
            population: p as u16,
            client: info.client - self.client_offsets[p],
            request: info.number,
            attempt: r.sent,
            sent: self.sent_at[key as usize],
            outcome,
        });
    }

    /// A closed client's request the time limit prevented from starting: counted, never sent.
    fn never_started(&mut self, key: u32, number: u32) {
        let p = self
            .population(self.requests[key].policy)
            .expect("closed clients follow their population's policy");
        let client = self.requests.info(key).client;
        let reason = GiveUpReason::TimeLimit;
        self.metrics.services[0].requests += 1;
        self.metrics.services[0].gave_up[reason as usize] += 1;
        let pm = &mut self.metrics.populations[p];
        pm.requests += 1;
        pm.gave_up += 1;
        if self.record_requests {
            self.metrics.requests.push(RequestRecord {
                population: p as u16,
                client: client - self.client_offsets[p],
                request: number,
                outcome: Outcome::GaveUp(reason),
                last_status: None,
                attempts: 0,
                total_wait: SimDuration::ZERO,
                retry_after: None,
                latency: SimDuration::ZERO,
            });
        }
        self.metrics.completion = self.metrics.completion.max(self.time_limit);
    }

    /// Ends the run: requests still open at the time limit end as `time_limit` there, and
    /// the series and breaker times are closed.
    fn finish(mut self) -> RunMetrics {
        let mut closed_left = false;
        for (p, state) in self.sources.iter().enumerate() {
            if let (
                SourceState::Closed {
                    first_key,
                    requests,
                    ..
                },
                Source::Closed(c),
            ) = (state, &self.scenario.populations[p].source)
            {
                closed_left |= (*first_key..first_key + c.count)
                    .any(|k| self.requests.info(k).number < *requests);
            }
        }
        if self.open_client_requests > 0 || closed_left || self.metrics.cut_short {
            self.metrics.cut_short = true;
            self.now = self.time_limit.max(self.now);
            // Every open request ends here, client requests and downstream calls alike
            // (each is a logical request of its caller), without resuming any job.
            let reserved = self.requests.reserved();
            for key in 0..self.requests.len() as u32 {
                if !self.requests.info(key).ended {
                    self.record_end(key, Outcome::GaveUp(GiveUpReason::TimeLimit));
                    if key < reserved {
                        self.requests.info_mut(key).number += 1;
                    }
                }
            }
            for p in 0..self.sources.len() {
                if let SourceState::Closed {
                    first_key,
                    requests,
                    ..
                } = self.sources[p]
                {
                    let count = match &self.scenario.populations[p].source {
                        Source::Closed(c) => c.count,
                        _ => 0,
                    };
                    for key in first_key..first_key + count {
                        for number in self.requests.info(key).number..requests {
                            self.never_started(key, number);
                        }
                    }
                }
            }
        }
        let end = self.now.max(self.metrics.completion);
        for group in &self.breakers {
            let open = group.breakers.open_time(self.metrics.completion);
            self.metrics.services[group.target as usize].breaker_open += open;
            if group.client {
                self.metrics.breaker_open += open;
            }
        }
        let timelines = std::mem::take(&mut self.timelines);
        for (m, t) in self.metrics.services.iter_mut().zip(timelines) {
            m.timeline = t.finish(end);
        }
        let width = self.scenario.bucket.as_nanos().max(1);
        let buckets = (end.0 / width) as usize + 1;
        let population_timelines = std::mem::take(&mut self.population_timelines);
        for (m, mut t) in self
            .metrics
            .populations
            .iter_mut()
            .zip(population_timelines)
        {
            t.resize(buckets.max(t.len()), PopulationBucket::default());
            m.timeline = t;
        }
        self.metrics.peak_requests = self.requests.peak();
        self.metrics
    }

    // ------------------------------------------------------------------------ helpers

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
        }
        self.queue.push(event);
    }
}

/// How many events ahead request state is prefetched: far enough for a load from memory
/// (about 100 ns) to complete while the events in between run.
const PREFETCH_AHEAD: usize = 8;

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
    fn request_state_stays_small() {
        assert_eq!(std::mem::size_of::<Request>(), 32, "half a cache line");
        assert!(std::mem::size_of::<request::RequestInfo>() <= 64);
        assert!(std::mem::size_of::<Event>() <= 24);
    }
}
