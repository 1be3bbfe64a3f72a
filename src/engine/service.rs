//! One server during a run: slots, a queue with its discipline and timeout, capacity that
//! changes (steps, autoscaling, crashes), outage windows, a rate limiter, an OCC row.
//!
//! A [`Service`] decides what happens to each arrival ([`Service::admit`]), which queued
//! attempt takes a slot when one is free ([`Service::take_next`]), which queued attempts the
//! queue timeout drops ([`Service::expire`]) and what a crash loses ([`Service::crash`]). It
//! knows nothing of callers' timeouts: an abandoned attempt keeps its place and is served
//! anyway (wasted work). The engine schedules the events (service end, queue-timeout checks,
//! capacity changes, autoscaling ticks) and keeps the books.

use std::collections::VecDeque;

use crate::model::outcome::Status;
use crate::model::{Discipline, Hint, Occ, Outage, OutageKind, RateLimiter, ServerSpec};
use crate::time::{SimDuration, SimTime};

/// An attempt waiting for a slot (or just admitted to one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queued {
    /// The request that sent it.
    pub request: u32,
    /// The attempt's serial.
    pub serial: u32,
    /// What the server will answer once served (200, or 500 in an `errors` outage).
    pub answer: Status,
    /// When it arrived.
    pub joined: SimTime,
}

/// What happened to an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Refused at once with `status` (400, 409, 429 or 503) and an optional hint.
    Rejected {
        /// The status sent back.
        status: Status,
        /// Retry-After, if the server sends one.
        hint: Option<SimDuration>,
    },
    /// Took a free slot: serve now.
    Serve(Queued),
    /// Waits in the queue.
    Queued,
    /// An OCC write committed at once: answered 200, no slot taken.
    Written,
    /// An OCC write holds for its write time, then commits if the row's version is still
    /// `version`.
    Hold {
        /// The version the commit checks against.
        version: u32,
    },
}

/// What an autoscaling decision asks the engine to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    /// Nothing changes.
    Keep,
    /// Set the size to this now (a decrease; increases still warming up are called off).
    Now(u32),
    /// Set the size to this after the warmup (an increase), unless a decrease calls it off
    /// first: the second number is the decision epoch its event must still match.
    Later(u32, u32),
}

/// Runtime state of one server.
#[derive(Debug, Clone)]
pub struct Service {
    spec: ServerSpec,
    concurrency: u32,
    busy: u32,
    queue: VecDeque<Queued>,
    generation: u32,
    tokens: f64,
    tokens_at: SimTime,
    /// The OCC row's version: the number of successful writes so far.
    version: u32,
    /// When the armed queue-timeout check fires (`None`: none armed).
    pub queue_timer: Option<SimTime>,
    /// Slot-nanoseconds held since the last autoscaling decision.
    busy_area: u128,
    busy_since: SimTime,
    /// The largest increase still warming up, if any.
    pending_up: Option<u32>,
    /// Bumped by every decrease, which calls off the increases still warming up: their
    /// events carry the epoch they were decided in (from 1; capacity steps carry 0).
    scale_epoch: u32,
    mean_service_ns: f64,
}

impl Service {
    /// An idle server with a full rate-limit bucket and its starting slots.
    pub fn new(spec: &ServerSpec) -> Self {
        Service {
            tokens: spec.rate_limit.map(|r| r.burst).unwrap_or(0.0),
            spec: spec.clone(),
            concurrency: spec.concurrency,
            busy: 0,
            queue: VecDeque::new(),
            generation: 0,
            tokens_at: SimTime::ZERO,
            version: 0,
            queue_timer: None,
            busy_area: 0,
            busy_since: SimTime::ZERO,
            pending_up: None,
            scale_epoch: 1,
            mean_service_ns: spec.service.mean().as_nanos() as f64,
        }
    }

    /// The server's description.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// Slots held now (in service, or waiting on downstream calls).
    #[inline]
    pub fn in_service(&self) -> u32 {
        self.busy
    }

    /// Attempts waiting now.
    #[inline]
    pub fn queued(&self) -> u32 {
        self.queue.len() as u32
    }

    /// Slots now.
    pub fn concurrency(&self) -> u32 {
        self.concurrency
    }

    /// The crash generation: incremented by every crash; work started before it is lost.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The OCC row's current version, as a read sees it.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The outage covering `t`, if any (windows are `[start, end)`).
    #[inline]
    pub fn outage_at(&self, t: SimTime) -> Option<&Outage> {
        outage_at(&self.spec.outages, t)
    }

    /// Decides an arrival at `now`. `bad_request`: the logical request is one answered 400;
    /// `read_version`: for a read-write OCC server, the version the attempt read;
    /// `instant_write`: OCC writes take no time (commit on arrival); `draw` is a uniform
    /// [0, 1) number, used only inside an `errors` outage.
    pub fn admit(
        &mut self,
        now: SimTime,
        entry: Queued,
        bad_request: bool,
        read_version: u32,
        instant_write: bool,
        draw: impl FnOnce() -> f64,
    ) -> Admission {
        let mut answer = Status::Ok;
        if let Some(outage) = self.outage_at(now) {
            match outage.kind {
                OutageKind::Down => {
                    let hint = match outage.retry_after {
                        Hint::None => None,
                        Hint::Fixed(d) => Some(d),
                        Hint::Auto => Some((outage.end - now).ceil_to_secs()),
                    };
                    return Admission::Rejected {
                        status: Status::Unavailable,
                        hint,
                    };
                }
                OutageKind::Errors(rate) => {
                    if draw() < rate {
                        answer = Status::ServerError;
                    }
                }
                // Unreachable arrivals never get here (the engine drops them at send time);
                // slow outages act when service starts.
                OutageKind::Unreachable | OutageKind::Crash | OutageKind::Slow(_) => {}
            }
        }
        if let Some(limiter) = self.spec.rate_limit
            && let Some(hint) = self.take_token(now, &limiter)
        {
            return Admission::Rejected {
                status: Status::TooManyRequests,
                hint,
            };
        }
        if bad_request {
            return Admission::Rejected {
                status: Status::BadRequest,
                hint: None,
            };
        }
        match self.spec.occ {
            Occ::Off => {}
            Occ::ReadWrite if instant_write => {
                // A conditional write: it wins only if no other write won since its read.
                return if self.commit(read_version) {
                    Admission::Written
                } else {
                    Admission::Rejected {
                        status: Status::Conflict,
                        hint: None,
                    }
                };
            }
            Occ::ReadWrite => {
                return Admission::Hold {
                    version: read_version,
                };
            }
            Occ::WriteOnly if instant_write => {
                self.version = self.version.wrapping_add(1);
                return Admission::Written;
            }
            Occ::WriteOnly => {
                return Admission::Hold {
                    version: self.version,
                };
            }
        }
        let entry = Queued {
            answer,
            joined: now,
            ..entry
        };
        if self.busy < self.concurrency && self.queue.is_empty() {
            self.hold(now, 1);
            Admission::Serve(entry)
        } else if self.queue.len() < self.spec.queue as usize {
            self.queue.push_back(entry);
            Admission::Queued
        } else {
            Admission::Rejected {
                status: Status::Unavailable,
                hint: self.overload_hint(),
            }
        }
    }

    /// The hint sent with a 503 for a full queue (or a dropped queued request).
    pub fn overload_hint(&self) -> Option<SimDuration> {
        match self.spec.retry_after {
            Hint::None => None,
            Hint::Fixed(d) => Some(d),
            // Estimated wait for a place: the queue ahead drained by every slot.
            Hint::Auto => Some(
                SimDuration::from_nanos_f64(
                    (self.queue.len() as f64 + 1.0) * self.mean_service_ns
                        / self.concurrency.max(1) as f64,
                )
                .max(SimDuration(1))
                .ceil_to_secs(),
            ),
        }
    }

    /// An OCC commit: succeeds (and bumps the version) iff the row is still at `version`.
    pub fn commit(&mut self, version: u32) -> bool {
        if self.version == version {
            self.version = self.version.wrapping_add(1);
            true
        } else {
            false
        }
    }

    /// Refills the bucket to `now` and takes a token. Returns `Some(hint)` if there was none.
    fn take_token(&mut self, now: SimTime, limiter: &RateLimiter) -> Option<Option<SimDuration>> {
        let elapsed = (now - self.tokens_at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * limiter.rate).min(limiter.burst);
        self.tokens_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return None;
        }
        Some(match limiter.retry_after {
            Hint::None => None,
            Hint::Fixed(d) => Some(d),
            Hint::Auto => {
                let wait = (1.0 - self.tokens) / limiter.rate;
                Some(
                    SimDuration::from_secs_f64(wait)
                        .max(SimDuration(1))
                        .ceil_to_secs(),
                )
            }
        })
    }

    /// The service-time factor for a service starting at `now`: the `slowdown` curve at the
    /// requests held (in service + queued, the starting one counted in service), times a
    /// `slow` outage's factor.
    #[inline]
    pub fn slowdown_at(&self, now: SimTime) -> f64 {
        let held = match &self.spec.slowdown {
            Some(s) => s.factor(self.busy + self.queued()),
            None => 1.0,
        };
        match self.outage_at(now).map(|o| o.kind) {
            Some(OutageKind::Slow(f)) => held * f,
            _ => held,
        }
    }

    /// Changes the slots held by `delta` at `now`, keeping the busy-time integral.
    #[inline]
    fn hold(&mut self, now: SimTime, delta: i32) {
        if self.spec.autoscale.is_some() {
            self.busy_area += self.busy as u128 * (now - self.busy_since).as_nanos() as u128;
            self.busy_since = now;
        }
        self.busy = self
            .busy
            .checked_add_signed(delta)
            .expect("slots never go negative");
    }

    /// A slot was released at `now`.
    #[inline]
    pub fn release(&mut self, now: SimTime) {
        self.hold(now, -1);
    }

    /// The next queued attempt to start, if a slot is free: the oldest (FIFO) or the newest
    /// (LIFO). The slot is taken.
    #[inline]
    pub fn take_next(&mut self, now: SimTime) -> Option<Queued> {
        if self.busy >= self.concurrency {
            return None;
        }
        let next = match self.spec.discipline {
            Discipline::Fifo => self.queue.pop_front(),
            Discipline::Lifo => self.queue.pop_back(),
        }?;
        self.hold(now, 1);
        Some(next)
    }

    /// Drops the oldest queued attempt if it has waited `queue_timeout` by `now`. The queue
    /// is ordered by arrival whatever the discipline, so expiries come from the front.
    pub fn expire(&mut self, now: SimTime) -> Option<Queued> {
        let limit = self.spec.queue_timeout?;
        let front = self.queue.front()?;
        (front.joined + limit <= now).then(|| self.queue.pop_front().expect("front exists"))
    }

    /// When the oldest queued attempt will time out, if any.
    pub fn next_expiry(&self) -> Option<SimTime> {
        let limit = self.spec.queue_timeout?;
        self.queue.front().map(|q| q.joined + limit)
    }

    /// Sets the slots at `now` (capacity step or autoscaling). The caller then starts queued
    /// attempts with [`Service::take_next`]; nothing running is cut.
    pub fn set_concurrency(&mut self, concurrency: u32) {
        self.concurrency = concurrency;
    }

    /// A crash at `now`: every queued attempt is returned (lost), every slot freed, and the
    /// generation moves on so work in service is known to be lost when it would end.
    pub fn crash(&mut self, now: SimTime) -> Vec<Queued> {
        self.hold(now, -(self.busy as i32));
        self.generation = self.generation.wrapping_add(1);
        self.queue_timer = None;
        self.queue.drain(..).collect()
    }

    /// An autoscaling decision at `now` (every `interval` from t = 0).
    pub fn autoscale(&mut self, now: SimTime) -> Scaling {
        let Some(a) = self.spec.autoscale else {
            return Scaling::Keep;
        };
        self.hold(now, 0);
        let mean_busy = self.busy_area as f64 / a.interval.as_nanos() as f64;
        self.busy_area = 0;
        let desired = a.desired(mean_busy);
        // Compared with the slots there are now (a capacity step may have changed them), or
        // with the increase already on its way.
        let heading = self.pending_up.unwrap_or(self.concurrency);
        if desired > heading {
            self.pending_up = Some(desired);
            Scaling::Later(desired, self.scale_epoch)
        } else if desired < self.concurrency {
            self.pending_up = None;
            self.scale_epoch = self.scale_epoch.wrapping_add(1).max(1);
            Scaling::Now(desired)
        } else {
            Scaling::Keep
        }
    }

    /// Whether an autoscaling increase decided in `epoch` still stands when its warmup
    /// ends; if it does, it is no longer pending once it is the largest one.
    pub fn scale_up_lands(&mut self, slots: u32, epoch: u32) -> bool {
        if epoch != self.scale_epoch {
            return false;
        }
        if self.pending_up == Some(slots) {
            self.pending_up = None;
        }
        true
    }
}

/// The outage covering `t` among sorted, disjoint windows `[start, end)`.
#[inline]
pub fn outage_at(outages: &[Outage], t: SimTime) -> Option<&Outage> {
    outages.iter().find(|o| o.start <= t && t < o.end)
}

/// Converts a hint to the microseconds an event carries (0 = none), saturating at ~71 min.
pub fn hint_to_us(hint: Option<SimDuration>) -> u32 {
    match hint {
        None => 0,
        Some(d) => (d.as_nanos().div_ceil(1000)).clamp(1, u32::MAX as u64) as u32,
    }
}

/// The inverse of [`hint_to_us`].
pub fn hint_from_us(us: u32) -> Option<SimDuration> {
    (us > 0).then(|| SimDuration(us as u64 * 1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::Dist;
    use crate::model::service::{Autoscale, Slowdown};

    fn spec() -> ServerSpec {
        ServerSpec {
            outages: vec![Outage {
                start: SimTime(SimDuration::from_secs(1).0),
                end: SimTime(SimDuration::from_secs(3).0),
                kind: OutageKind::Down,
                retry_after: Hint::Auto,
            }],
            retry_after: Hint::Auto,
            ..ServerSpec::plain(2, 1, Dist::Constant(SimDuration::from_millis(100)))
        }
    }

    fn entry(request: u32) -> Queued {
        Queued {
            request,
            serial: 1,
            answer: Status::Ok,
            joined: SimTime::ZERO,
        }
    }

    fn admit(s: &mut Service, t: SimTime, request: u32) -> Admission {
        s.admit(t, entry(request), false, 0, true, || 0.0)
    }

    #[test]
    fn slots_then_queue_then_503() {
        let mut s = Service::new(&spec());
        let t = SimTime::ZERO;
        assert!(matches!(admit(&mut s, t, 0), Admission::Serve(_)));
        assert!(matches!(admit(&mut s, t, 1), Admission::Serve(_)));
        assert_eq!(admit(&mut s, t, 2), Admission::Queued);
        // (1 queued + 1) * 100 ms / 2 slots = 100 ms, sent as a whole second.
        assert_eq!(
            admit(&mut s, t, 3),
            Admission::Rejected {
                status: Status::Unavailable,
                hint: Some(SimDuration::from_secs(1))
            }
        );
        s.release(t);
        assert_eq!(s.take_next(t), Some(entry(2)));
        s.release(t);
        assert_eq!(s.take_next(t), None);
        assert_eq!(s.in_service(), 1);
    }

    #[test]
    fn lifo_serves_the_newest_and_expiry_takes_the_oldest() {
        let mut spec = spec();
        spec.outages.clear();
        spec.concurrency = 1;
        spec.queue = 10;
        spec.discipline = Discipline::Lifo;
        spec.queue_timeout = Some(SimDuration(100));
        let mut s = Service::new(&spec);
        let at = |n| SimTime(n);
        assert!(matches!(
            s.admit(at(0), entry(0), false, 0, true, || 0.0),
            Admission::Serve(_)
        ));
        for r in 1..=3 {
            s.admit(at(r as u64 * 10), entry(r), false, 0, true, || 0.0);
        }
        assert_eq!(s.next_expiry(), Some(at(110)));
        assert_eq!(s.expire(at(109)), None);
        assert_eq!(s.expire(at(110)).map(|q| q.request), Some(1));
        s.release(at(115));
        assert_eq!(s.take_next(at(115)).map(|q| q.request), Some(3));
        assert_eq!(s.queued(), 1);
    }

    #[test]
    fn a_capacity_drop_starts_nothing_until_the_count_falls_below_it() {
        let mut spec = spec();
        spec.outages.clear();
        spec.queue = 5;
        let mut s = Service::new(&spec);
        let t = SimTime::ZERO;
        admit(&mut s, t, 0);
        admit(&mut s, t, 1);
        admit(&mut s, t, 2);
        s.set_concurrency(1);
        s.release(t);
        assert_eq!(s.take_next(t), None, "1 busy, 1 slot");
        s.release(t);
        assert_eq!(s.take_next(t).map(|q| q.request), Some(2));
        s.set_concurrency(3);
        assert_eq!(s.take_next(t), None, "queue empty");
    }

    #[test]
    fn a_crash_loses_the_queue_and_frees_every_slot() {
        let mut spec = spec();
        spec.outages.clear();
        let mut s = Service::new(&spec);
        let t = SimTime::ZERO;
        admit(&mut s, t, 0);
        admit(&mut s, t, 1);
        admit(&mut s, t, 2);
        let g = s.generation();
        let lost = s.crash(SimTime(5));
        assert_eq!(lost.len(), 1);
        assert_eq!((s.in_service(), s.queued()), (0, 0));
        assert_ne!(s.generation(), g);
    }

    #[test]
    fn slowdown_counts_the_requests_held() {
        let mut spec = spec();
        spec.outages.clear();
        spec.queue = 10;
        spec.slowdown = Some(Slowdown::new(vec![(0.0, 1.0), (100.0, 2.0)]));
        let mut s = Service::new(&spec);
        let t = SimTime::ZERO;
        admit(&mut s, t, 0); // busy 1: the one starting
        assert_eq!(s.slowdown_at(t), 1.01);
        admit(&mut s, t, 1);
        admit(&mut s, t, 2); // queued
        assert_eq!(s.slowdown_at(t), 1.03);
    }

    #[test]
    fn autoscaling_increases_after_warmup_and_decreases_at_once() {
        let mut spec = spec();
        spec.outages.clear();
        spec.concurrency = 10;
        spec.queue = 100;
        spec.autoscale = Some(Autoscale {
            min: 2,
            max: 40,
            target: 0.5,
            interval: SimDuration(1000),
            warmup: SimDuration(5000),
        });
        let mut s = Service::new(&spec);
        for r in 0..10 {
            s.admit(SimTime::ZERO, entry(r), false, 0, true, || 0.0);
        }
        // 10 busy for the whole interval: 10 / 0.5 = 20 wanted, after the warmup.
        assert_eq!(s.autoscale(SimTime(1000)), Scaling::Later(20, 1));
        // Still 10 busy: already heading to 20.
        assert_eq!(s.autoscale(SimTime(2000)), Scaling::Keep);
        for _ in 0..10 {
            s.release(SimTime(2000));
        }
        // Idle: a decrease at once, even while an increase warms up, and it calls that
        // increase off.
        assert_eq!(s.autoscale(SimTime(3000)), Scaling::Now(2));
        s.set_concurrency(2);
        assert!(!s.scale_up_lands(20, 1));
        // A capacity step down to 1, then a saturated interval: compared with the 1 slot
        // there is, 1 / 0.5 wants 2 (not compared with the 20 once decided).
        s.set_concurrency(1);
        s.admit(SimTime(7000), entry(0), false, 0, true, || 0.0);
        assert_eq!(s.autoscale(SimTime(8000)), Scaling::Later(2, 2));
        assert!(s.scale_up_lands(2, 2));
    }

    #[test]
    fn occ_writes_commit_only_on_the_version_they_expect() {
        let mut spec = spec();
        spec.outages.clear();
        spec.occ = Occ::ReadWrite;
        let mut s = Service::new(&spec);
        let t = SimTime::ZERO;
        assert_eq!(
            s.admit(t, entry(0), false, 0, true, || 0.0),
            Admission::Written
        );
        assert_eq!(s.version(), 1);
        assert_eq!(
            s.admit(t, entry(1), false, 0, true, || 0.0),
            Admission::Rejected {
                status: Status::Conflict,
                hint: None
            }
        );
        assert_eq!(
            s.admit(t, entry(1), false, 1, false, || 0.0),
            Admission::Hold { version: 1 }
        );
        assert!(s.commit(1));
        assert!(!s.commit(1));
        spec.occ = Occ::WriteOnly;
        let mut w = Service::new(&spec);
        assert_eq!(
            w.admit(t, entry(0), false, 7, false, || 0.0),
            Admission::Hold { version: 0 }
        );
        assert_eq!(w.in_service(), 0, "writes take no slot");
    }

    #[test]
    fn outage_covers_start_but_not_end() {
        let mut s = Service::new(&spec());
        let start = SimTime(SimDuration::from_secs(1).0);
        let end = SimTime(SimDuration::from_secs(3).0);
        assert_eq!(
            admit(&mut s, start, 0),
            Admission::Rejected {
                status: Status::Unavailable,
                hint: Some(SimDuration::from_secs(2))
            }
        );
        assert!(matches!(
            admit(&mut s, SimTime(end.0 - 1), 0),
            Admission::Rejected { .. }
        ));
        assert!(matches!(admit(&mut s, end, 0), Admission::Serve(_)));
    }

    #[test]
    fn rate_limiter_refuses_with_time_to_next_token_in_whole_seconds() {
        let mut spec = spec();
        spec.outages.clear();
        spec.queue = 100;
        spec.rate_limit = Some(RateLimiter {
            rate: 0.5,
            burst: 2.0,
            retry_after: Hint::Auto,
        });
        let mut s = Service::new(&spec);
        let t = SimTime::ZERO;
        assert!(!matches!(admit(&mut s, t, 0), Admission::Rejected { .. }));
        assert!(!matches!(admit(&mut s, t, 1), Admission::Rejected { .. }));
        // Empty bucket refilling at 0.5/s: the next token is 2 s away.
        assert_eq!(
            admit(&mut s, t, 2),
            Admission::Rejected {
                status: Status::TooManyRequests,
                hint: Some(SimDuration::from_secs(2))
            }
        );
        // 1.5 s later, 0.75 token: 0.5 s to go, sent as 1 s.
        let later = SimTime(SimDuration::from_millis(1500).0);
        assert_eq!(
            admit(&mut s, later, 3),
            Admission::Rejected {
                status: Status::TooManyRequests,
                hint: Some(SimDuration::from_secs(1))
            }
        );
    }

    #[test]
    fn hints_round_trip_through_events() {
        assert_eq!(hint_from_us(hint_to_us(None)), None);
        let h = Some(SimDuration::from_secs(3));
        assert_eq!(hint_from_us(hint_to_us(h)), h);
    }
}
