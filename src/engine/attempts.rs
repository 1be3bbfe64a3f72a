//! Attempts on the caller's side: sending one (a client-side rate limiter's token and its
//! queue, breaker admission, budget and time-series counts, the network leg and the
//! attempt's timers), the OCC read round trip, and the lazy arming of an attempt's timer
//! once its next step is known to come at or after its timeout.

use super::limiter::{Gate, Wake, Woken};
use super::request::NONE;
use super::{Event, EventKind, Simulation};
use crate::metrics::class_index;
use crate::model::outcome::{GiveUpReason, Status};
use crate::time::SimTime;

impl Simulation<'_> {
    /// Sends the request's next attempt now (first, retry or fallback call), unless its
    /// client-side rate limiter holds it back.
    ///
    /// Always inlined, and [`Simulation::send_now`] with it (three call sites: a `Send`
    /// event, a request's first attempt, a fallback call): LLVM declined a plain hint, and as
    /// a call its register saves and stack frame cost about 20 instructions per attempt.
    #[inline(always)]
    pub(super) fn send(&mut self, key: u32) {
        let r = &self.requests[key];
        match self.policies[r.policy as usize].limiter {
            Some(set) if !r.on_fallback() => self.send_limited(key, set),
            _ => self.send_now(key),
        }
    }

    /// [`Simulation::send`] through limiter set `set`: the attempt leaves now with a token,
    /// or waits in the limiter's queue (the SDK sleeps in `acquire` until its bucket holds a
    /// token) and leaves when its turn and token come.
    #[inline(never)]
    fn send_limited(&mut self, key: u32, set: u16) {
        if self.orphaned(key) {
            return self.give_up(key, GiveUpReason::NonRetryable);
        }
        let limiters = &mut self.limiters[set as usize];
        let index = limiters.index(self.requests.info(key).client);
        match limiters.acquire(index, key, self.now) {
            Gate::Go => self.send_now(key),
            Gate::Queued(wake) => {
                if let Some(w) = wake {
                    self.push_wake(set, w);
                }
            }
        }
    }

    /// Schedules the wake-up of the first attempt waiting on limiter set `set`.
    pub(super) fn push_wake(&mut self, set: u16, w: Wake) {
        let wake = Event::new(EventKind::LimiterWake, w.at, w.index, w.generation).at_service(set);
        self.push(wake);
    }

    /// A limiter's wake-up fired: its first waiter leaves with its token, if still live.
    /// Waiters that may no longer go leave the queue first, without a token: a call its
    /// service's crash orphaned, and an attempt past its request's deadline (at it, under
    /// `clamp_to_deadline`, it may still go). They give up once the token has gone out.
    pub(super) fn limiter_wake(&mut self, set: u16, index: u32, generation: u32) {
        let now = self.now;
        if self.limiters[set as usize].is_stale(index, generation) {
            // A replaced wake-up, counted as inert since (`limiter_result`).
            self.idle -= 1;
            return;
        }
        let mut gone = Vec::new();
        while let Some(key) = self.limiters[set as usize].first_waiting(index) {
            let reason = if self.orphaned(key) {
                GiveUpReason::NonRetryable
            } else if self.past_deadline(key) {
                GiveUpReason::Deadline
            } else {
                break;
            };
            let since = self.limiters[set as usize].leave_first(index);
            self.requests.info_mut(key).waited += now - since;
            gone.push((key, reason));
        }
        if let Woken::Send { key, since, next } =
            self.limiters[set as usize].wake(index, generation, now)
        {
            if let Some(w) = next {
                self.push_wake(set, w);
            }
            self.requests.info_mut(key).waited += now - since;
            self.send_now(key);
        }
        for (key, reason) in gone {
            self.give_up(key, reason);
        }
    }

    /// Whether `key`'s next attempt would leave after its request's deadline (or at it,
    /// without `clamp_to_deadline`).
    fn past_deadline(&self, key: u32) -> bool {
        let deadline_at = self.requests.info(key).deadline_at;
        let clamp = self.policies[self.requests[key].policy as usize]
            .strategy
            .retry
            .clamp_to_deadline;
        self.now > deadline_at || (self.now == deadline_at && !clamp)
    }

    /// Keeps when `key`'s current attempt was sent (now), in `sent_at`.
    #[inline]
    fn keep_send_time(&mut self, key: u32) {
        let i = key as usize;
        if self.sent_at.len() <= i {
            self.sent_at.resize(i + 1, SimTime::ZERO);
        }
        self.sent_at[i] = self.now;
    }

    /// What a slow-call breaker or a concurrent budget follows of an attempt just sent: its
    /// send time, and one more attempt in flight (out of line: most runs have neither).
    #[cold]
    #[inline(never)]
    fn attempt_sent(&mut self, key: u32, on_fallback: bool) {
        if self.times_attempts {
            self.keep_send_time(key);
        }
        let policy = self.policies[self.requests[key].policy as usize];
        if self.counts_in_flight
            && !on_fallback
            && let Some(b) = policy.budget
        {
            let client = self.requests.info(key).client;
            self.budgets[b as usize].on_attempt_sent(client);
        }
    }

    /// Keeps the retry cap `key`'s budget `b` gives the request whose first attempt was
    /// just sent (Finagle's per-request cap).
    #[cold]
    fn set_request_cap(&mut self, key: u32, b: u16, client: u32) {
        let cap = self.budgets[b as usize]
            .request_cap(client, self.now)
            .unwrap_or(u32::MAX);
        let i = key as usize;
        if self.request_caps.len() <= i {
            self.request_caps.resize(i + 1, u32::MAX);
        }
        self.request_caps[i] = cap;
    }

    /// Sends the request's next attempt now, past its client-side rate limiter.
    ///
    /// Always inlined (three call sites: [`Simulation::send`] and the two ways past a
    /// limiter): as a call, its register saves and stack frame cost about 11 instructions
    /// per attempt.
    #[inline(always)]
    pub(super) fn send_now(&mut self, key: u32) {
        if self.orphaned(key) {
            // A retry of a call whose service crashed meanwhile: nobody is left to send it.
            return self.give_up(key, GiveUpReason::NonRetryable);
        }
        let now = self.now;
        let r = &self.requests[key];
        let policy = self.policies[r.policy as usize];
        if !r.on_fallback()
            && let Some(g) = policy.breaker
        {
            let client = self.requests.info(key).client;
            let group = &mut self.breakers[g as usize].breakers;
            // A retry-only breaker lets every first attempt through, as a plain call.
            let admitted = if r.sent == 0 && group.retries_only() {
                Some(0)
            } else {
                group.admit(group.index(client))
            };
            match admitted {
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
        // The previous attempt has its outcome: a timer of it still queued was counted dead
        // then (`Simulation::timer_dies`), which the stop test relies on.
        debug_assert!(!r.awaiting(), "a new attempt while the last is awaited");
        r.serial = r.serial.wrapping_add(1);
        r.set_awaiting(true);
        r.sent += 1;
        r.mark_sent_in_trouble(now >= self.trouble_from);
        let (serial, first, on_fallback) = (r.serial, r.sent == 1, r.on_fallback());
        let (last_status, sampled, policy_index) = (r.last_status, r.sampled(), r.policy);
        let timeout = if on_fallback {
            retry.timeout
        } else {
            retry.attempt_timeout(r.attempt as u32)
        };
        r.timeout_at = timeout.map_or(SimTime::MAX, |t| now + t);
        r.set_response_at_timeout(false);
        // The two early-failure timers below are the attempt's only timer when they fire.
        r.set_timer_armed(false);
        if sampled {
            self.requests.info_mut(key).shed = false;
            self.keep_send_time(key);
        }
        if self.follows_attempts {
            self.attempt_sent(key, on_fallback);
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
                if self.caps_requests {
                    self.set_request_cap(key, b, client);
                }
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
        // When the attempt gives up if nothing answers: the first of its timers. Computed
        // only on the two early-failure paths below, not for every attempt, and the first
        // path's outage search only for a server that can be unreachable (callgrind on the
        // quickstart herd: 510.1 M -> 503.3 M instructions; Brooker at 5 replications
        // 162.8 M -> 162.5 M).
        let give_up_at = || {
            let limit = match (retry.connect_timeout, timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            limit.map(|l| now + l)
        };
        let server = &self.services[svc as usize];
        if server.unreachable_at(arrival) {
            // Nothing answers: the attempt fails when the first of its timers expires (or
            // hangs until the time limit when it has none).
            if let Some(at) = give_up_at() {
                self.requests[key].set_timer_armed(true);
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
            let at = give_up_at().expect("connect timeout is set");
            self.requests[key].set_timer_armed(true);
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
        self.push(Event::new(kind, arrival, key, serial).at_service(svc));
        // The timer is set now, after the attempt left: if it is armed later, it must pop
        // among the events of its instant as if pushed here. So an arrival at the timeout
        // instant itself comes before the timer (it was pushed first); the server's answer
        // then decides whether the timer is armed.
        let timer_seq = self.queue.reserve() as u32;
        // One lookup of the request after the push (a call, after which the slab is
        // reloaded and its bounds checked again) instead of three.
        let r = &mut self.requests[key];
        r.in_flight += 1;
        r.timer_seq = timer_seq;
        if arrival != r.timeout_at && r.timer_due_by(arrival) {
            self.arm_timer(key);
        }
    }

    /// An OCC read reaches the server: the version it sees travels back in the reply.
    pub(super) fn read(&mut self, key: u32, serial: u32, svc: u16) {
        let version = self.services[svc as usize].version();
        let at = self.now + self.latency(svc);
        self.schedule_step(EventKind::ReadReply, at, key, serial, svc, version);
    }

    /// Schedules the attempt's next step at `at` (an OCC read's reply, a held write's
    /// commit), carrying `aux`, and arms the attempt's timer first if it is still awaited
    /// and the step comes at or after its timeout (an OCC read's reply is a step, not the
    /// attempt's response: one due at the timeout instant comes after the timer).
    pub(super) fn schedule_step(
        &mut self,
        kind: EventKind,
        at: SimTime,
        key: u32,
        serial: u32,
        svc: u16,
        aux: u32,
    ) {
        self.push(
            Event::new(kind, at, key, serial)
                .with_aux(aux)
                .at_service(svc),
        );
        if self.is_live(key, serial, svc) {
            self.arm_unless_earlier(key, at);
        }
    }

    /// The read's answer reaches the caller, which writes at once with the version it read.
    pub(super) fn read_reply(&mut self, key: u32, serial: u32, svc: u16, version: u32) {
        if !self.is_live(key, serial, svc) {
            // The attempt was abandoned (timed out) meanwhile: it leaves the server side.
            return self.left_server(key);
        }
        let at = self.now + self.latency(svc);
        if self.services[svc as usize].unreachable_at(at) {
            // The write arrives in an `unreachable` or `crash` window: nothing answers it,
            // and the attempt ends by its timer (judged at the write's own arrival, as the
            // read was at its own when sent).
            return self.lost(key, serial, svc);
        }
        self.push(
            Event::new(EventKind::Arrive, at, key, serial)
                .with_aux(version)
                .at_service(svc),
        );
        self.arm_unless_earlier(key, at);
    }

    /// Whether `key` is a downstream call of a job its service lost in a crash: the crashed
    /// service makes no further attempt of it (an attempt already sent still reaches the
    /// callee, and its answer is ignored).
    #[inline]
    pub(super) fn orphaned(&self, key: u32) -> bool {
        if !self.crashes_lose_jobs {
            return false;
        }
        let parent = self.requests.info(key).parent;
        parent != NONE && {
            let job = self.jobs[parent];
            job.generation != self.services[job.service as usize].generation()
        }
    }

    /// Whether `serial` is the outstanding attempt of `key` to service `svc`.
    #[inline]
    pub(super) fn is_live(&self, key: u32, serial: u32, svc: u16) -> bool {
        self.requests[key].is_live(serial, svc == self.fallback)
    }

    /// The current attempt's next step happens at `next`, in an event pushed after the
    /// attempt was sent: if that is at or after its timeout, the timer fires first (at the
    /// same instant, by insertion order, as the timer was set at send time), so it enters the
    /// queue now (`SimTime::MAX`: unknown, e.g. queued), with the insertion number it
    /// reserved when the attempt was sent: among events of its instant it pops as a timer
    /// set at send time would (a timer armed at its own instant, after events of that
    /// instant were handled, pops next). A response due at the timeout instant still counts
    /// as arrived: the timer sees `response_at_timeout` and stands down.
    ///
    /// The check is always inlined and the arming is a call: most attempts are answered
    /// before their timeout, and as one call the check cost a stack frame each time.
    #[inline(always)]
    pub(super) fn arm_unless_earlier(&mut self, key: u32, next: SimTime) {
        // `SimTime::MAX`: the attempt has no timeout (nothing can be due at or after it).
        if self.requests[key].timer_due_by(next) {
            self.arm_timer(key);
        }
    }

    /// Pushes the attempt's timer (see [`Simulation::arm_unless_earlier`]).
    #[inline(never)]
    pub(super) fn arm_timer(&mut self, key: u32) {
        let r = &mut self.requests[key];
        r.set_timer_armed(true);
        let (at, serial, reserved) = (r.timeout_at, r.serial, r.timer_seq);
        let timer = Event::new(EventKind::Timeout, at, key, serial).with_status(Status::Timeout);
        let seq = self.queue.reserved_from_low_bits(reserved);
        self.queue.push_as_of(timer, seq);
    }
}
