//! Outcomes on the caller's side: an attempt's result (a response or its timer), which on a
//! failure goes to the retry decision (`retry`), giving up (or the fallback call), a
//! request's end and what it records (the end of the run is in `finish.rs`).

use super::breaker::Transition;
use super::request::NONE;
use super::service::{decode_hint, encode_hint};
use super::source::SourceState;
use super::{ATTEMPT_SAMPLE_MAX, Event, EventKind, Purpose, Simulation};
use crate::metrics::{AttemptOutcome, AttemptRecord, Outcome, RequestRecord};
use crate::model::outcome::{GiveUpReason, Status};
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// An attempt's result reached the caller: a response from `svc`, or its timer expired.
    pub(super) fn result(
        &mut self,
        key: u32,
        serial: u32,
        status: Status,
        hint: Option<SimDuration>,
    ) {
        let now = self.now;
        if !self.requests[key].awaiting() || self.requests[key].serial != serial {
            return; // a late response of an abandoned attempt
        }
        // Its timer, if one is armed, has nothing left to do (a timer that fires took
        // itself out of the queue first).
        self.timer_dies(key);
        let r = &mut self.requests[key];
        r.set_awaiting(false);
        r.last_status = Some(status);
        let (sampled, on_fallback, policy, probe, attempt) =
            (r.sampled(), r.on_fallback(), r.policy, r.probe, r.attempt);
        let answered_later = if self.counts_in_flight {
            self.in_flight_result(key, on_fallback, status)
        } else {
            None
        };
        if hint.is_some() {
            self.requests.info_mut(key).last_hint = encode_hint(hint);
        }
        let policy_index = policy;
        let policy = self.policies[policy_index as usize];
        let target = policy.target;
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
        if let Some(set) = policy.limiter {
            self.limiter_result(set, key, status);
        }
        if let Some(g) = policy.breaker {
            let client = self.requests.info(key).client;
            let group = &mut self.breakers[g as usize];
            let index = group.breakers.index(client);
            let failed = status != Status::Ok;
            // Resilience4j's `duration > slowCallDurationThreshold`, the duration from the
            // attempt's send to its outcome here.
            let slow = group
                .breakers
                .slow_call()
                .is_some_and(|over| now - self.sent_at[key as usize] > over);
            if status == Status::BadRequest {
                // Not recorded; a probe's 400 gives its half-open slot back (as Resilience4j
                // releases the permission of an ignored call), or the breaker would wait
                // for an outcome that never comes.
                group.breakers.release(index, probe);
            } else if group.breakers.record(index, now, failed, slow, probe) == Transition::Opened {
                let at = now + group.breakers.open_for();
                let target = group.target;
                self.record_breakers(target);
                self.push(Event::new(EventKind::HalfOpen, at, index, 0).at_service(g));
            }
        }
        if status == Status::Ok {
            self.end(key, Outcome::Succeeded)
        } else {
            self.failure(key, policy_index, attempt, status, hint);
            if let Some((b, client)) = answered_later {
                self.budgets[b as usize].on_attempt_done(client);
            }
        }
    }

    /// Every response and timeout moves its client-side rate limiter's measured rate and
    /// CUBIC curve; a 429 is the throttle that enables and cuts it. (Out of line: most
    /// policies have no limiter.)
    #[inline(never)]
    fn limiter_result(&mut self, set: u16, key: u32, status: Status) {
        let limiters = &mut self.limiters[set as usize];
        let index = limiters.index(self.requests.info(key).client);
        let throttled = status == Status::TooManyRequests;
        if let Some(w) = limiters.on_response(index, self.now, throttled) {
            // It replaces the first waiter's pending wake-up, which does nothing now: inert
            // until it is popped (`limiter_wake`).
            self.idle += 1;
            self.push_wake(set, w);
        }
    }

    /// The request would end for `reason`: try the fallback server once, else end it.
    pub(super) fn give_up(&mut self, key: u32, reason: GiveUpReason) {
        if self.requests[key].holds_retry() {
            // Given up without the retry's outcome (refused at send, given up while
            // waiting): released before any fallback call, as Envoy's next retry decision
            // would.
            self.release_retry(key);
        }
        let r = &mut self.requests[key];
        let policy = &self.policies[r.policy as usize];
        if !r.on_fallback()
            && policy.client
            && self.scenario.fallback.is_some()
            && policy.strategy.retry.fallback_on.contains(reason)
        {
            r.set_on_fallback(true);
            self.requests.info_mut(key).fallback_reason = reason;
            return self.send(key);
        }
        self.end(key, Outcome::GaveUp(reason));
    }

    /// The logical request in `key` ends with `outcome`.
    pub(super) fn end(&mut self, key: u32, outcome: Outcome) {
        let now = self.now;
        if self.requests[key].holds_retry() {
            // Ended holding a retry without going through `give_up`, which gives it back:
            // cut off at the time limit.
            self.release_retry(key);
        }
        self.record_end(key, outcome);
        let r = self.requests[key];
        let info = *self.requests.info(key);
        let policy = self.policies[r.policy as usize];
        let primary_success = outcome == Outcome::Succeeded && !r.on_fallback();
        // Every primary attempt after the first passed `try_retry`, so `sent > 1` on a
        // primary success means "this call was retried" (AWS: refund the retry's cost).
        let retry_cost = (r.sent > 1).then_some(info.quota_cost as u64);
        if primary_success && let Some(b) = policy.budget {
            self.budgets[b as usize].on_success(info.client, now, retry_cost);
        }
        match self.population(r.policy).map(|p| &self.sources[p]) {
            Some(SourceState::Closed {
                requests, think, ..
            }) => {
                let more = info.number + 1 < *requests;
                self.requests.info_mut(key).number += 1;
                if more && now < self.time_limit {
                    // Keyed by the client and the request it precedes, not drawn in the
                    // order requests end: every strategy sees the same pauses (common
                    // random numbers), as it sees the same start offsets.
                    let think = match think {
                        Some(t) => {
                            let p = r.policy as usize;
                            let next = u64::from(info.number + 1);
                            let mut rng = self.seed.workload_rng(
                                p,
                                Purpose::Think,
                                u64::from(info.client),
                                next,
                            );
                            t.sample(&mut rng)
                        }
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
    pub(super) fn record_end(&mut self, key: u32, outcome: Outcome) {
        let now = self.now;
        if self.requests[key].awaiting() {
            // Ended with an attempt still awaited (its deadline, the time limit...).
            self.timer_dies(key);
            self.requests[key].set_awaiting(false);
        }
        let r = self.requests[key];
        let info = self.requests.info_mut(key);
        info.ended = true;
        let info = *info;
        let latency = now - info.started_at;
        let target = self.policies[r.policy as usize].target as usize;
        let booked = self.series_time();
        let m = &mut self.metrics.services[target];
        let bucket = self.timelines[target].at(booked);
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
        // Only a client request cut by the limit makes the run "cut short" (the warning):
        // a downstream call or an arrival due after the limit is not one.
        self.metrics.cut_short |= outcome == Outcome::GaveUp(GiveUpReason::TimeLimit);
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
        let pb = self.population_bucket(p, booked);
        if succeeded {
            pb.succeeded += 1;
        } else {
            pb.gave_up += 1;
        }
        // The closed rule's backlog: an open arrival is the open rule's to judge, even in a
        // fleet with closed clients.
        if self.trigger.is_some_and(|t| info.started_at < t)
            && self.scenario.populations[p].is_closed()
        {
            self.metrics.backlog_cleared = self.metrics.backlog_cleared.max(Some(now));
            // Served before the trouble began says nothing about getting out of it; nor
            // does a success sent before it began (in service when an outage began: an
            // outage judges arrivals), even if it ends after.
            if self.trigger_start.is_some_and(|t| now >= t) && (!succeeded || r.sent_in_trouble()) {
                self.metrics.backlog_met_trouble = true;
                self.metrics.backlog_succeeded |= succeeded;
            }
            if outcome == Outcome::GaveUp(GiveUpReason::TimeLimit) {
                self.metrics.backlog_open = true;
            }
        }
        // A backlog cleared only by giving up is no recovery unless someone is served after.
        // (Nor is a success sent before the trouble began, answered after the trigger.)
        self.metrics.served_after_trigger |=
            succeeded && r.sent_in_trouble() && self.trigger.is_some_and(|t| now >= t);
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
                retry_after: decode_hint(info.last_hint),
                latency: Some(latency),
                start: info.started_at,
            });
        }
    }

    /// Where an end now is booked in the series: at `now`, except that the ends `finish`
    /// books at `time_limit` (requests cut there) go to the run's last instant, one
    /// nanosecond before: the series cover the run, `[0, time_limit)`, and a bucket starting
    /// at the limit would lie wholly after it.
    fn series_time(&self) -> SimTime {
        self.now.min(self.last_instant())
    }

    /// The last instant of a run cut by its time limit.
    pub(super) fn last_instant(&self) -> SimTime {
        SimTime(self.time_limit.0.saturating_sub(1))
    }

    /// Records the attempt of sampled client request `key` that just ended with `status`.
    #[cold]
    pub(super) fn record_attempt(&mut self, key: u32, status: Status) {
        let shed = self.requests.info(key).shed;
        self.record_attempt_outcome(
            key,
            match status {
                Status::Ok => AttemptOutcome::Served,
                Status::Timeout | Status::Unreachable => AttemptOutcome::TimedOut,
                Status::Unavailable if shed => AttemptOutcome::Shed,
                _ => AttemptOutcome::Rejected,
            },
        );
    }

    /// An attempt's outcome is back, for a concurrent budget: a retry the request held is
    /// no longer in progress (Envoy's `resetRetry`, first in `shouldRetry`), and the attempt
    /// is no longer in flight (unless it went to the fallback server). When: a timed-out
    /// attempt leaves now, as Envoy resets the upstream request before deciding; an
    /// answered failure leaves after the retry decision, as Envoy decides on the response
    /// headers while the upstream request still counts as active. The latter is returned,
    /// (budget, client), for `result` to apply once the decision is made: by then the
    /// request may have ended and its key been reused.
    #[cold]
    fn in_flight_result(
        &mut self,
        key: u32,
        on_fallback: bool,
        status: Status,
    ) -> Option<(u16, u32)> {
        if self.requests[key].holds_retry() {
            self.release_retry(key);
        }
        let policy = self.policies[self.requests[key].policy as usize];
        let b = policy.budget.filter(|_| !on_fallback)?;
        let client = self.requests.info(key).client;
        if matches!(status, Status::Ok | Status::Timeout | Status::Unreachable) {
            self.budgets[b as usize].on_attempt_done(client);
            None
        } else {
            Some((b, client))
        }
    }

    /// Gives back the retry `key` holds in its concurrent budget.
    fn release_retry(&mut self, key: u32) {
        self.requests[key].set_holds_retry(false);
        let policy = self.policies[self.requests[key].policy as usize];
        let b = policy
            .budget
            .expect("a request holds a retry of its budget");
        let client = self.requests.info(key).client;
        self.budgets[b as usize].release_retry(client);
    }

    /// Records the current attempt of sampled client request `key` with `outcome`.
    #[cold]
    pub(super) fn record_attempt_outcome(&mut self, key: u32, outcome: AttemptOutcome) {
        if self.metrics.attempts.len() >= ATTEMPT_SAMPLE_MAX {
            return;
        }
        let (r, info) = (self.requests[key], *self.requests.info(key));
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
}
