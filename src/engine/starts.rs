//! Where logical requests begin: a closed client's next request, an open or trace
//! population's arrival (which schedules the arrival after it), and a service's downstream
//! call. Each takes a request key, sets who the request belongs to, and [`begin`]s it: fresh
//! retry state, its deadline, whether it is a bad request and whether it is in the attempt
//! sample, then its first attempt.
//!
//! [`begin`]: Simulation::begin

use rand::RngExt;

use super::request::{NONE, Request, RequestInfo};
use super::source::SourceState;
use super::{Event, EventKind, Purpose, Simulation};
use crate::time::SimTime;

impl Simulation<'_> {
    /// A closed client begins its next logical request.
    pub(super) fn start_closed(&mut self, key: u32) {
        self.begin(key, None);
    }

    /// The next arrival of open or trace population `p`: a new request, and the arrival
    /// after it scheduled.
    pub(super) fn arrival(&mut self, p: usize) {
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
    pub(super) fn start_child(&mut self, job: u32) {
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
    pub(super) fn begin(&mut self, key: u32, deadline_cap: Option<SimTime>) {
        let now = self.now;
        self.requests.retire_if_held(key);
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
            attempt: 1,
            ..Request::new()
        };
        self.requests[key].set_bad_request(bad_request);
        *self.requests.info_mut(key) = RequestInfo {
            client: info.client,
            parent: info.parent,
            number: info.number,
            ended: false,
            started_at: now,
            deadline_at: deadline_cap.map_or(deadline, |cap| deadline.min(cap)),
            prev_delay: policy.strategy.backoff.initial_state(),
            ..RequestInfo::new()
        };
        let population = self.population(r.policy);
        if let Some(p) = population
            && !self.sample_every.is_empty()
        {
            let closed = self.requests.reserved() > key;
            let unit = if closed {
                (info.client - self.client_offsets[p]) as u64
            } else {
                info.number as u64
            };
            let mut sampled = unit.is_multiple_of(self.sample_every[p]);
            // A closed population's clients are counted exactly; arrivals may outrun
            // their expected count.
            if sampled && !closed {
                sampled = self.sample_left[p] > 0;
                self.sample_left[p] = self.sample_left[p].saturating_sub(1);
            }
            self.requests[key].set_sampled(sampled);
        }
        self.metrics.services[policy.target as usize].requests += 1;
        if let Some(p) = population {
            self.open_client_requests += 1;
            self.metrics.populations[p].requests += 1;
            // Open work's offered load (recovery); a closed herd's is judged otherwise.
            if key >= self.requests.reserved() {
                self.population_bucket(p, now).arrived += 1;
            }
        }
        self.send(key);
    }

    /// Whether the request now beginning (policy `policy`, identity in `info`) is one its
    /// service answers 400. For client requests this is a workload draw (the same for every
    /// strategy); for downstream calls a draw of the callee's stream.
    pub(super) fn is_bad_request(&mut self, policy: u16, info: &RequestInfo) -> bool {
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
    pub(super) fn population(&self, policy: u16) -> Option<usize> {
        self.policies[policy as usize]
            .client
            .then_some(policy as usize)
    }
}
