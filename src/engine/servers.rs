//! The server side: an attempt arriving (admission: served, queued, refused, an OCC write),
//! service and release of slots, answers crossing the network back, jobs that make
//! downstream calls before answering, and the events that degrade a server (queue timeouts,
//! capacity steps, autoscaling, crashes).

use rand::RngExt;

use super::request::Job;
use super::service::{Admission, Queued, Scaling, encode_hint};
use super::{Event, EventKind, Simulation};
use crate::model::outcome::Status;
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// An attempt (for an OCC server: its write, carrying `read_version`) reaches `svc`.
    ///
    /// Always inlined into the run loop, its only caller: as a call, its register saves and
    /// stack frame cost about 16 instructions per arrival.
    #[inline(always)]
    pub(super) fn arrive(&mut self, key: u32, serial: u32, svc: u16, read_version: u32) {
        let now = self.now;
        let on_fallback = svc == self.fallback;
        // The request the attempt belongs to, which may have ended: a closed client's key
        // then holds its next request.
        let bad_request = self.requests.attempt_is_bad(key, serial) && !on_fallback;
        let r = &self.requests[key];
        // Whether the attempt is still awaited, read here once: admission changes the
        // server, never the request, and the answer and the timer check below need it
        // (looked up again after admission, the slab was reloaded and its bounds checked).
        // With the server looked up once too, and the retry decision handed the attempt
        // number: callgrind on the quickstart herd 514.1 M -> 510.1 M instructions, Brooker
        // at 5 replications 163.6 M -> 162.8 M.
        let live = r.is_live(serial, on_fallback);
        let population = self.population(r.policy);
        let service = &mut self.services[svc as usize];
        // The queue timeout is set when the attempt joins (see `Queued::timer_seq`).
        let timer_seq = match service.spec().queue_timeout {
            Some(_) => self.queue.reserve(),
            None => 0,
        };
        let entry = Queued {
            request: key,
            serial,
            answer: Status::Ok,
            joined: now,
            timer_seq,
        };
        let d = &mut self.draws[svc as usize];
        let (instant, errors) = (d.instant_write, &mut d.errors_rng);
        let admission = service.admit(now, entry, bad_request, read_version, instant, || {
            errors.random::<f64>()
        });
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
            Admission::Rejected { status, hint } => {
                self.respond_if(live, key, serial, svc, status, hint)
            }
            Admission::Written => self.respond_if(live, key, serial, svc, Status::Ok, None),
            Admission::Hold { version, answer } => {
                let d = &mut self.draws[svc as usize];
                let at = now + d.occ_write.sample(&mut d.occ_rng);
                self.push(
                    Event::new(EventKind::Commit, at, key, serial)
                        .with_aux(version)
                        .with_status(answer)
                        .at_service(svc),
                );
                if live {
                    self.arm_unless_earlier(key, at);
                }
            }
            Admission::Serve(entry) => self.start_service(svc, entry),
            Admission::Queued => {
                if live {
                    self.arm_unless_earlier(key, SimTime::MAX);
                }
                self.arm_queue_timer(svc);
            }
        }
        self.record_occupancy(svc);
    }

    /// An OCC write's commit instant (its event pushed with insertion number `seq`): it
    /// wins only if the row is at the version it expects. A write an `errors` outage
    /// answers 500 (`answer`) commits nothing; one held when the server crashed is lost.
    pub(super) fn commit(
        &mut self,
        key: u32,
        serial: u32,
        svc: u16,
        version: u32,
        answer: Status,
        seq: u64,
    ) {
        let service = &mut self.services[svc as usize];
        if service.held_since_crash(seq) {
            // Counted lost at the crash, which may come after the run's end.
            return self.lost(key, serial, svc);
        }
        service.write_released();
        let status = if answer == Status::ServerError {
            Status::ServerError
        } else if service.commit(version) {
            Status::Ok
        } else {
            Status::Conflict
        };
        self.respond(key, serial, svc, status, None);
    }

    /// `svc` answers an attempt now (a refusal, an OCC write, a dropped queued attempt): the
    /// response crosses the network back, and the attempt leaves the server side.
    ///
    /// Always inlined (four call sites): in a herd most arrivals are refused, and as a call
    /// its register saves and stack frame were about 19 instructions per refusal.
    #[inline(always)]
    pub(super) fn respond(
        &mut self,
        key: u32,
        serial: u32,
        svc: u16,
        status: Status,
        hint: Option<SimDuration>,
    ) {
        let live = self.is_live(key, serial, svc);
        self.respond_if(live, key, serial, svc, status, hint);
    }

    /// [`Simulation::respond`] when whether the attempt is still awaited (`live`, see
    /// [`Simulation::is_live`]) is already known.
    #[inline(always)]
    pub(super) fn respond_if(
        &mut self,
        live: bool,
        key: u32,
        serial: u32,
        svc: u16,
        status: Status,
        hint: Option<SimDuration>,
    ) {
        if live {
            let at = self.now + self.latency(svc);
            self.push(
                Event::new(EventKind::Response, at, key, serial)
                    .with_status(status)
                    .with_aux(encode_hint(hint))
                    .at_service(svc),
            );
            // One lookup of the request after the push (a call, after which the slab is
            // reloaded and its bounds checked again) for the flag, the timer and the
            // attempt leaving the server, instead of three.
            let r = &mut self.requests[key];
            let at_timeout = at == r.timeout_at;
            r.set_response_at_timeout(at_timeout);
            r.in_flight -= 1;
            // A response due at the timeout instant counts as arrived: no timer needed
            // (one armed earlier, for a queued attempt, stands down when it sees the flag).
            if !at_timeout && r.timer_due_by(at) {
                self.arm_timer(key);
            }
            self.requests.release_if_done(key);
        } else {
            self.left_server(key);
        }
    }

    /// An attempt `svc` lost in a crash will never be answered: its caller's timer (left
    /// unarmed while the answer was expected in time) must now fire, and the attempt leaves
    /// the server side.
    pub(super) fn lost(&mut self, key: u32, serial: u32, svc: u16) {
        if self.is_live(key, serial, svc) {
            self.arm_unless_earlier(key, SimTime::MAX);
        }
        self.left_server(key);
    }

    /// One attempt of `key` is no longer held by any server.
    #[inline]
    pub(super) fn left_server(&mut self, key: u32) {
        self.requests[key].in_flight -= 1;
        self.requests.release_if_done(key);
    }

    /// `entry` took a slot of `svc`: its service time starts now.
    pub(super) fn start_service(&mut self, svc: u16, entry: Queued) {
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
                // That of the request the attempt belongs to, which may have ended (a
                // closed client's key then holds its next request).
                deadline_at: self.requests.attempt_deadline(entry.request, entry.serial),
            });
            self.push(
                Event::new(EventKind::DoneJob, at, job, 0)
                    .with_aux(generation)
                    .at_service(svc),
            );
            if self.is_live(entry.request, entry.serial, svc) {
                // The answer waits for the downstream calls: not known yet.
                self.arm_unless_earlier(entry.request, SimTime::MAX);
            }
        } else {
            self.push(
                Event::new(EventKind::Done, at, entry.request, entry.serial)
                    .with_status(entry.answer)
                    .with_aux(generation)
                    .at_service(svc),
            );
            if self.is_live(entry.request, entry.serial, svc) {
                self.arm_unless_earlier(entry.request, at);
            }
        }
    }

    /// A slot of `svc` is released: the next queued attempts start.
    pub(super) fn release_slot(&mut self, svc: u16) {
        let now = self.now;
        self.services[svc as usize].release(now);
        if (svc as usize) < self.timelines.len() {
            self.timelines[svc as usize].at(now).completed += 1;
        }
        self.start_queued(svc);
    }

    /// Starts queued attempts of `svc` while it has free slots.
    pub(super) fn start_queued(&mut self, svc: u16) {
        while let Some(next) = self.services[svc as usize].take_next(self.now) {
            self.start_service(svc, next);
        }
    }

    /// `svc` finished serving an attempt (a service without downstream calls).
    pub(super) fn done(
        &mut self,
        key: u32,
        serial: u32,
        status: Status,
        svc: u16,
        generation: u32,
    ) {
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
    pub(super) fn answer(&mut self, key: u32, serial: u32, svc: u16, status: Status) {
        if self.is_live(key, serial, svc) {
            let at = self.now + self.latency(svc);
            self.push(
                Event::new(EventKind::Response, at, key, serial)
                    .with_status(status)
                    .at_service(svc),
            );
            let r = &mut self.requests[key];
            let at_timeout = at == r.timeout_at;
            r.set_response_at_timeout(at_timeout);
            // A response due at the timeout instant counts as arrived: no timer needed
            // (one armed earlier, for a queued attempt, stands down when it sees the flag).
            if !at_timeout {
                self.arm_unless_earlier(key, at);
            }
        } else if svc != self.fallback {
            // Served for a caller that had already abandoned the attempt.
            self.metrics.services[svc as usize].wasted += 1;
        }
        self.left_server(key);
    }

    /// A service with downstream calls finished its own work on `job`: the calls begin.
    pub(super) fn done_job(&mut self, job: u32, generation: u32) {
        let j = self.jobs[job];
        if generation != self.services[j.service as usize].generation() {
            self.jobs.remove(job);
            return self.lost(j.caller, j.caller_serial, j.service);
        }
        self.start_child(job);
    }

    /// A downstream call of `job` ended: the next call, or the answer.
    pub(super) fn child_ended(&mut self, job: u32, succeeded: bool) {
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
    pub(super) fn finish_job(&mut self, job: u32, status: Status) {
        let j = self.jobs[job];
        self.jobs.remove(job);
        self.release_slot(j.service);
        self.record_occupancy(j.service);
        self.answer(j.caller, j.caller_serial, j.service, status);
    }

    /// Arms the queue-timeout check of `svc` for its oldest queued attempt, if none is armed.
    pub(super) fn arm_queue_timer(&mut self, svc: u16) {
        let s = &mut self.services[svc as usize];
        if s.queue_timer.is_none()
            && let Some((at, seq)) = s.next_expiry()
        {
            s.queue_timer = Some(at);
            let check = Event::new(EventKind::QueueTimeout, at, 0, 0).at_service(svc);
            self.queue.push_as_of(check, seq);
        }
    }

    /// Drops every queued attempt of `svc` whose queue timeout is due by this check (`seq`:
    /// its insertion number): each is answered 503 now and counted as shed.
    pub(super) fn queue_timeout(&mut self, svc: u16, seq: u64) {
        let now = self.now;
        self.services[svc as usize].queue_timer = None;
        while let Some(q) = self.services[svc as usize].expire(now, seq) {
            if svc != self.fallback {
                self.metrics.services[svc as usize].shed += 1;
                self.timelines[svc as usize].at(now).shed += 1;
            }
            let hint = self.services[svc as usize].overload_hint();
            if self.is_live(q.request, q.serial, svc) && self.requests[q.request].sampled() {
                self.requests.info_mut(q.request).shed = true;
            }
            self.respond(q.request, q.serial, svc, Status::Unavailable, hint);
        }
        self.arm_queue_timer(svc);
        self.record_occupancy(svc);
    }

    /// A capacity event: a scheduled step (`decision` 0) to `slots`, or an autoscaling
    /// increase whose warmup is over, to the slots later decisions left it (they may have
    /// lowered it or called it off: see `Service::autoscale`).
    pub(super) fn capacity_event(&mut self, svc: u16, slots: u32, decision: u32) {
        let slots = match decision {
            0 => Some(slots),
            id => self.services[svc as usize].scale_up_lands(id),
        };
        if let Some(slots) = slots {
            self.set_capacity(svc, slots);
        }
    }

    /// `svc` now has `slots` slots (a capacity step, or an autoscaling change).
    pub(super) fn set_capacity(&mut self, svc: u16, slots: u32) {
        self.services[svc as usize].set_concurrency(slots);
        if (svc as usize) < self.timelines.len() {
            self.timelines[svc as usize].concurrency(self.now, slots);
        }
        self.start_queued(svc);
        self.record_occupancy(svc);
    }

    /// An autoscaling decision of `svc`, and the next one an interval later (while there is
    /// work left to do).
    pub(super) fn autoscale(&mut self, svc: u16) {
        let now = self.now;
        match self.services[svc as usize].autoscale(now) {
            Scaling::Keep => {}
            Scaling::Now(n) => self.set_capacity(svc, n),
            Scaling::Later(n, decision) => {
                let warmup = self.services[svc as usize]
                    .spec()
                    .autoscale
                    .expect("autoscaling is configured")
                    .warmup;
                let e = Event::new(EventKind::Capacity, now + warmup, 0, decision)
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
    pub(super) fn crash(&mut self, svc: u16) {
        let now = self.now;
        let service = &self.services[svc as usize];
        let lost_in_service = service.in_service() as u64 + u64::from(service.held_writes());
        let next_seq = self.queue.next_seq();
        let lost = self.services[svc as usize].crash(now, next_seq);
        if let Some(m) = self.metrics.services.get_mut(svc as usize) {
            m.lost += lost.len() as u64 + lost_in_service;
        }
        for q in lost {
            self.lost(q.request, q.serial, svc);
        }
        self.record_occupancy(svc);
    }

    /// Records `svc`'s occupancy gauges after a change now. Always inlined (LLVM declines
    /// a plain hint): every arrival and end of service records them, and as a call its
    /// register saves were a third of the work.
    #[inline(always)]
    pub(super) fn record_occupancy(&mut self, svc: u16) {
        if let Some(t) = self.timelines.get_mut(svc as usize) {
            let s = &self.services[svc as usize];
            t.occupancy(self.now, s.in_service(), s.queued());
        }
    }
}
