//! Preparing a run: the state of [`Simulation`] for one strategy of a scenario, the first
//! requests of every population, the servers' scheduled changes (outages, capacity steps,
//! autoscaling), and the sample of client requests whose attempts are recorded.

use super::*;

impl<'a> Simulation<'a> {
    /// Prepares a run of `scenario.strategies[strategy]` with the streams of `seed`, and
    /// schedules every population's first requests. `record_requests` keeps one
    /// [`RequestRecord`](crate::metrics::RequestRecord) per client request (memory grows with requests).
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
        let mut limiters: Vec<Limiters> = Vec::new();
        let mut add_limiter = |spec: &LimiterSpec, clients: u32| {
            limiters.push(Limiters::new(spec, clients));
            (limiters.len() - 1) as u16
        };
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
        let mut shared_limiter = None;
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
            let limiter = retry.client_rate_limiter.as_ref().map(|l| {
                if pp.own_limiter {
                    add_limiter(l, total_clients)
                } else {
                    *shared_limiter.get_or_insert_with(|| {
                        let spec = compared.retry.client_rate_limiter.as_ref().unwrap_or(l);
                        add_limiter(spec, total_clients)
                    })
                }
            });
            policies.push(RunPolicy {
                strategy: &pp.strategy,
                target: 0,
                budget,
                breaker,
                limiter,
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
                    limiter: retry
                        .client_rate_limiter
                        .as_ref()
                        .map(|l| add_limiter(l, 1)),
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
        let times_attempts = breakers.iter().any(|g| g.breakers.slow_call().is_some());
        let caps_requests = budgets.iter().any(Budgets::caps_requests);
        let counts_in_flight = budgets.iter().any(Budgets::counts_in_flight);
        let mut sim = Simulation {
            scenario,
            seed,
            policies,
            ladders,
            edge_policies,
            queue: EventQueue::reuse_or_new(reserved as usize),
            background: 0,
            idle: 0,
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
            budgets,
            breakers,
            limiters,
            population_timelines: populations
                .iter()
                .map(|_| crate::metrics::spare_series())
                .collect(),
            metrics: RunMetrics {
                services: vec![ServiceMetrics::default(); scenario.services.len()],
                // Room for the closed populations' requests (open work is not known ahead).
                populations: populations
                    .iter()
                    .map(|p| PopulationMetrics {
                        latencies: crate::metrics::Latencies::with_capacity(p.closed_requests()),
                        ..PopulationMetrics::default()
                    })
                    .collect(),
                latencies: crate::metrics::Latencies::with_capacity(scenario.closed_requests()),
                success_latencies: crate::metrics::Latencies::with_capacity(
                    scenario.closed_requests(),
                ),
                ..RunMetrics::default()
            },
            crashes_lose_jobs: scenario.services.iter().any(|s| {
                !s.calls.is_empty() && s.server.outages.iter().any(|o| o.kind == OutageKind::Crash)
            }),
            open_client_requests: 0,
            trigger: scenario.trigger(),
            trigger_start: scenario.trigger_start(),
            trouble_from: scenario.trigger_start().unwrap_or(SimTime::MAX),
            record_requests: record,
            stopped: false,
            limit_reached: false,
            instant_events: 0,
            instant_limit: SAME_INSTANT_FLOOR
                + SAME_INSTANT_PER_CLIENT.saturating_mul(scenario.requests_at_one_instant()),
            sample_every: Vec::new(),
            sample_left: Vec::new(),
            times_attempts,
            caps_requests,
            request_caps: Vec::new(),
            counts_in_flight,
            follows_attempts: times_attempts || counts_in_flight,
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
    /// (all its requests), every k-th arrival of an open or trace population, k chosen from
    /// the clients, the expected arrivals or the trace's rows; an open population's sample
    /// stops at its share when the run sees more arrivals than expected.
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
        self.sample_left = vec![share; scenario.populations.len()];
        self
    }
}
