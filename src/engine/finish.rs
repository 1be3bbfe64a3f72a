//! The end of a run: requests still open at the time limit end as `time_limit` there,
//! requests the limit kept from starting are counted, and the series and breaker times are
//! closed.

use super::source::SourceState;
use super::{EventKind, Simulation};
use crate::metrics::{AttemptOutcome, Outcome, PopulationBucket, RequestRecord, RunMetrics};
use crate::model::Source;
use crate::model::outcome::GiveUpReason;
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// A closed client's request the time limit prevented from starting: counted, never sent.
    pub(super) fn never_started(&mut self, key: u32, number: u32) {
        let p = self
            .population(self.requests[key].policy)
            .expect("closed clients follow their population's policy");
        let client = self.requests.info(key).client - self.client_offsets[p];
        self.never_started_in(p, client, number);
    }

    /// `n` requests of population `p` the time limit prevented from starting, counted.
    fn never_started_count(&mut self, p: usize, n: u64) {
        let reason = GiveUpReason::TimeLimit;
        self.metrics.cut_short = true;
        self.metrics.services[0].requests += n;
        self.metrics.services[0].gave_up[reason as usize] += n;
        let pm = &mut self.metrics.populations[p];
        pm.requests += n;
        pm.gave_up += n;
        self.metrics.completion = self.metrics.completion.max(self.time_limit);
    }

    /// Request `number` of `client` (within population `p`) the time limit prevented from
    /// starting (a closed client's later request, a trace row at or after the limit).
    fn never_started_in(&mut self, p: usize, client: u32, number: u32) {
        self.never_started_count(p, 1);
        let reason = GiveUpReason::TimeLimit;
        if self.record_requests {
            self.metrics.requests.push(RequestRecord {
                population: p as u16,
                client,
                request: number,
                outcome: Outcome::GaveUp(reason),
                last_status: None,
                attempts: 0,
                total_wait: SimDuration::ZERO,
                retry_after: None,
                latency: None,
                start: SimTime::ZERO,
            });
        }
        self.metrics.completion = self.metrics.completion.max(self.time_limit);
    }

    /// Ends the run: requests still open at the time limit end as `time_limit` there, and
    /// the series and breaker times are closed.
    pub(super) fn finish(mut self) -> RunMetrics {
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
        // A downstream call can hang with nothing scheduled (an unreachable service and no
        // timeout) after its client request has ended: open as a hanging client request
        // would be, it ends at the limit too, as `time_limit`. (Only keys above the closed
        // clients' can hold one; their records end `ended` when free.)
        let calls_open = (self.requests.reserved()..self.requests.len() as u32)
            .any(|key| !self.requests.info(key).ended);
        let cut = self.open_client_requests > 0 || closed_left || calls_open || self.limit_reached;
        // The series record the slots at each bucket's end, to the end of the last bucket
        // (or `time_limit`). The background events due from the last event on never ran:
        // the run stops when only they are left, and one with requests hanging is then
        // taken on to `time_limit`. The servers' schedules are the scenario's, not the
        // run's, so they run now, each step and decision in its own bucket (and before the
        // cut requests' ends below reach the last bucket).
        let series_end = if cut {
            self.last_instant()
        } else {
            self.now
                .max(self.metrics.completion)
                .min(self.last_instant())
        };
        let width = self.scenario.bucket.as_nanos().max(1);
        let horizon = SimTime((series_end.0 / width + 1).saturating_mul(width));
        self.run_background_until(horizon.min(self.time_limit));
        if cut {
            self.now = self.time_limit.max(self.now);
            // A request waiting out a backoff has counted the whole wait since it chose it;
            // it waited only until now. A population whose next arrival is pending has
            // generated one arrival more than arrived.
            let mut arrival_pending = vec![false; self.sources.len()];
            // An attempt waiting for a rate limiter's token has waited until now.
            for set in 0..self.limiters.len() {
                for (key, since) in self.limiters[set].waiting().collect::<Vec<_>>() {
                    self.requests.info_mut(key).waited += self.now.saturating_since(since);
                }
            }
            while let Some(e) = self.queue.pop() {
                match e.kind {
                    EventKind::Send => {
                        let info = self.requests.info_mut(e.id);
                        if !info.ended {
                            let unwaited = e.time.saturating_since(self.now);
                            info.waited = SimDuration(info.waited.0.saturating_sub(unwaited.0));
                        }
                    }
                    EventKind::Arrival => arrival_pending[e.service as usize] = true,
                    _ => {}
                }
            }
            // Every open request ends here, client requests and downstream calls alike
            // (each is a logical request of its caller), without resuming any job.
            let reserved = self.requests.reserved();
            for key in 0..self.requests.len() as u32 {
                if !self.requests.info(key).ended {
                    let r = self.requests[key];
                    if r.sampled() && r.awaiting() {
                        // The attempt in flight has a row too, so that a request with
                        // `attempts = n` has rows 1 to n.
                        self.record_attempt_outcome(key, AttemptOutcome::CutShort);
                    }
                    self.record_end(key, Outcome::GaveUp(GiveUpReason::TimeLimit));
                    if key < reserved {
                        self.requests.info_mut(key).number += 1;
                    }
                }
            }
            for (p, pending) in arrival_pending.into_iter().enumerate() {
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
                        let from = self.requests.info(key).number;
                        if from >= requests {
                            continue;
                        }
                        if self.record_requests {
                            for number in from..requests {
                                self.never_started(key, number);
                            }
                        } else {
                            // Only counts: at once, not one by one (a client may have a
                            // billion requests left).
                            self.never_started_count(p, u64::from(requests - from));
                        }
                    }
                }
                // A trace is a list of logical requests: its rows at or after the limit
                // never started, like a closed client's later requests. (An open process has
                // no such list: its arrivals end with the run.)
                if let (SourceState::Arrivals(a), Source::Trace(t)) =
                    (&self.sources[p], &self.scenario.populations[p].source)
                {
                    let arrived = a.next_number - u64::from(pending);
                    for number in arrived..t.times.len() as u64 {
                        let SourceState::Arrivals(a) = &mut self.sources[p] else {
                            unreachable!("matched above")
                        };
                        let client = a.next_client();
                        self.never_started_in(p, client, number as u32);
                    }
                }
            }
        }
        // When the run ended: `time_limit` if it was cut there.
        let run_end = self.now.max(self.metrics.completion);
        // The series end in the bucket of the run's last instant: not in one starting at
        // `time_limit`, where nothing happens (see `series_time`).
        let end = run_end.min(self.last_instant());
        // A breaker still open when the run ends (its open period outlasts `time_limit`) was
        // open until then, as the series show, not only until the last request ended.
        for group in &self.breakers {
            let open = group.breakers.open_time(run_end);
            self.metrics.services[group.target as usize].breaker_open += open;
            if group.client {
                self.metrics.breaker_open += open;
            }
        }
        let width = self.scenario.bucket.as_nanos().max(1);
        let timelines = std::mem::take(&mut self.timelines);
        for (m, t) in self.metrics.services.iter_mut().zip(timelines) {
            m.timeline = t.finish(end);
        }
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
        // The queue leaves last, when nothing of the run needs `self` any more: its wheels
        // are arrays of their full size, so an empty queue to stand in for it would cost
        // 17 408 buckets per run.
        let Simulation { queue, metrics, .. } = self;
        queue.recycle();
        metrics
    }

    /// Runs the background events due before `until` that the run stopped short of (it
    /// stops when nothing else is left, see [`Simulation::step`]): capacity steps,
    /// autoscaling decisions and the increases they bring, crashes. Nothing is queued by
    /// then (it would have kept the run going), and a slot is busy only while its job
    /// waits on a downstream call that hangs (an unreachable service, no timeout), so these
    /// create no work: they set the slots the series record at each bucket's end, as the
    /// scenario schedules them, and a crash loses such a job as it would have mid-run.
    /// (Before, the run simply ended: an autoscaled server kept its last size, and a crash
    /// due then never came: helper-96.) Dead timers met on the way are dropped; `now` is
    /// put back, so the run still ends where its last event was.
    fn run_background_until(&mut self, until: SimTime) {
        // Most runs have none: popping an empty queue would scan its wheels for nothing.
        if self.background == 0 {
            return;
        }
        let now = self.now;
        while let Some(e) = self.queue.pop() {
            if e.time >= until {
                self.queue.push_as_of(e, e.seq);
                break;
            }
            // Its handlers, not `dispatch`: a second caller kept `dispatch` out of the
            // event loop (the quickstart herd took 7.6% more instructions).
            self.now = e.time;
            match e.kind {
                EventKind::Capacity => self.capacity_event(e.service, e.aux, e.serial),
                EventKind::Autoscale => self.autoscale(e.service),
                EventKind::Crash => self.crash(e.service),
                _ => {}
            }
        }
        self.now = now;
    }
}
