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
    /// The event-queue insertion number reserved for its queue timeout when it arrived (0
    /// without `queue_timeout`): the drop pops among the events of its instant as if it had
    /// been scheduled then.
    pub timer_seq: u64,
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
    /// `version` (answered `answer`: a 500 of an `errors` outage commits nothing).
    Hold {
        /// The version the commit checks against.
        version: u32,
        /// `Ok`, or `ServerError` drawn by an `errors` outage.
        answer: Status,
    },
}

/// What an autoscaling decision asks the engine to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    /// Nothing changes.
    Keep,
    /// Set the size to this now (a decrease; increases still warming up are called off).
    Now(u32),
    /// Set the size to this after the warmup (an increase), unless a later decision lowers
    /// it or calls it off first: the second number identifies the decision (from 1;
    /// capacity steps carry 0), for [`Service::scale_up_lands`].
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
    /// The queue's insertion number when the last crash came: an OCC write held since
    /// before it (its commit pushed with a smaller number) is lost (0: no crash yet).
    lost_before_seq: u64,
    /// OCC writes holding for their write time now (a crash loses them).
    held_writes: u32,
    /// The rate limiter's bucket (see [`TokenBucket`]).
    bucket: TokenBucket,
    /// The OCC row's version: the number of successful writes so far.
    version: u32,
    /// When the armed queue-timeout check fires (`None`: none armed).
    pub queue_timer: Option<SimTime>,
    /// Slot-nanoseconds held since the last autoscaling decision.
    busy_area: u128,
    busy_since: SimTime,
    /// The increases still warming up, as (slots, decision id), in decision order: each
    /// asks for more than the one before, so there are at most `max - min` of them. A
    /// later decision may have lowered their slots.
    pending_up: Vec<(u32, u32)>,
    /// The id of the next decision that asks for an increase (from 1: capacity steps carry
    /// 0).
    next_scale_id: u32,
    mean_service_ns: f64,
    /// Some outage window makes the server unreachable (`unreachable`, `crash`).
    can_be_unreachable: bool,
}

impl Service {
    /// An idle server with a full rate-limit bucket and its starting slots.
    pub fn new(spec: &ServerSpec) -> Self {
        Service {
            bucket: TokenBucket::new(),
            spec: spec.clone(),
            concurrency: spec.concurrency,
            busy: 0,
            queue: VecDeque::new(),
            generation: 0,
            lost_before_seq: 0,
            held_writes: 0,
            version: 0,
            queue_timer: None,
            busy_area: 0,
            busy_since: SimTime::ZERO,
            pending_up: Vec::new(),
            next_scale_id: 1,
            mean_service_ns: spec.service.mean().as_nanos() as f64,
            can_be_unreachable: spec.outages.iter().any(|o| o.kind.is_unreachable()),
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

    /// OCC writes holding for their write time now.
    pub fn held_writes(&self) -> u32 {
        self.held_writes
    }

    /// A held OCC write's commit instant has come (one that the last crash did not lose).
    pub fn write_released(&mut self) {
        self.held_writes -= 1;
    }

    /// Whether an OCC write whose commit was pushed with insertion number `seq` was held
    /// when the server crashed (it is lost: no commit, no answer). Commit events carry no
    /// crash generation (an event has no room left for it), but insertion numbers only
    /// grow, so a commit pushed before the last crash has a smaller one.
    #[inline]
    pub fn held_since_crash(&self, seq: u64) -> bool {
        seq < self.lost_before_seq
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

    /// Whether nothing answers an attempt arriving at `t` (an `unreachable` or `crash`
    /// window). Asked of every attempt sent, so a server with no such window answers
    /// without searching its outages.
    #[inline]
    pub fn unreachable_at(&self, t: SimTime) -> bool {
        self.can_be_unreachable && self.outage_at(t).is_some_and(|o| o.kind.is_unreachable())
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
            // An `errors` outage answers a write 500, which commits nothing: on arrival (like
            // a losing instant write) or after its write time.
            _ if instant_write && answer == Status::ServerError => {
                return Admission::Rejected {
                    status: Status::ServerError,
                    hint: None,
                };
            }
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
                self.held_writes += 1;
                return Admission::Hold {
                    version: read_version,
                    answer,
                };
            }
            Occ::WriteOnly if instant_write => {
                self.version = self.version.wrapping_add(1);
                return Admission::Written;
            }
            Occ::WriteOnly => {
                self.held_writes += 1;
                return Admission::Hold {
                    version: self.version,
                    answer,
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
        let tokens = self.bucket.take(now, limiter);
        if tokens >= 1.0 {
            return None;
        }
        Some(match limiter.retry_after {
            Hint::None => None,
            Hint::Fixed(d) => Some(d),
            Hint::Auto => {
                let wait = (1.0 - tokens) / limiter.rate;
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

    /// Drops the oldest queued attempt if its queue timeout comes no later than (`now`,
    /// insertion number `seq`): a timeout due at this instant but set after the check being
    /// handled waits for its own turn. The queue is ordered by arrival whatever the
    /// discipline, so expiries come from the front.
    pub fn expire(&mut self, now: SimTime, seq: u64) -> Option<Queued> {
        let limit = self.spec.queue_timeout?;
        let front = self.queue.front()?;
        ((front.joined + limit, front.timer_seq) <= (now, seq))
            .then(|| self.queue.pop_front().expect("front exists"))
    }

    /// When the oldest queued attempt will time out, if any, and the insertion number its
    /// timeout reserved.
    pub fn next_expiry(&self) -> Option<(SimTime, u64)> {
        let limit = self.spec.queue_timeout?;
        self.queue.front().map(|q| (q.joined + limit, q.timer_seq))
    }

    /// Sets the slots at `now` (capacity step or autoscaling). The caller then starts queued
    /// attempts with [`Service::take_next`]; nothing running is cut.
    pub fn set_concurrency(&mut self, concurrency: u32) {
        self.concurrency = concurrency;
    }

    /// A crash at `now`, when the event queue's next insertion number is `next_seq`: every
    /// queued attempt is returned (lost), every slot freed, and the generation moves on so
    /// work in service is known to be lost when it would end; so is an OCC write held now
    /// (see [`Service::held_since_crash`]; [`Service::held_writes`] counts them before).
    pub fn crash(&mut self, now: SimTime, next_seq: u64) -> Vec<Queued> {
        self.hold(now, -(self.busy as i32));
        self.generation = self.generation.wrapping_add(1);
        self.lost_before_seq = next_seq;
        self.held_writes = 0;
        self.queue_timer = None;
        self.queue.drain(..).collect()
    }

    /// An autoscaling decision at `now` (every `interval` from t = 0).
    pub fn autoscale(&mut self, now: SimTime) -> Scaling {
        let Some(a) = self.spec.autoscale else {
            return Scaling::Keep;
        };
        self.hold(now, 0);
        let desired = a.desired(self.busy_area);
        self.busy_area = 0;
        if desired < self.concurrency {
            // A decrease, at once: no increase on its way is wanted any more.
            self.pending_up.clear();
            return Scaling::Now(desired);
        }
        // Each decision sets the slots the server heads to, superseding the ones before it:
        // an increase still warming up never lands above `desired`. It is lowered to it
        // (the slots it brings were asked for a warmup before they land, and are still
        // wanted), or called off when that adds nothing: when `desired` keeps the slots
        // there are, every increase on its way is called off. Lowered increases all end at
        // `desired`: the first of them is enough.
        let mut first_at_desired = true;
        let concurrency = self.concurrency;
        self.pending_up.retain_mut(|(slots, _)| {
            if *slots < desired {
                // Unless a capacity step has since given the server as many.
                return *slots > concurrency;
            }
            *slots = desired;
            std::mem::replace(&mut first_at_desired, false) && desired > concurrency
        });
        // Compared with the slots there are now (a capacity step may have changed them), or
        // with the increase already on its way.
        let heading = self
            .pending_up
            .last()
            .map_or(concurrency, |&(slots, _)| slots.max(concurrency));
        if desired > heading {
            let id = self.next_scale_id;
            self.next_scale_id = id.wrapping_add(1).max(1);
            self.pending_up.push((desired, id));
            Scaling::Later(desired, id)
        } else {
            Scaling::Keep
        }
    }

    /// The slots the autoscaling increase of decision `id` brings when its warmup ends, as
    /// later decisions left it; `None` if one called it off, or if a capacity step has since
    /// given the server at least as many (an increase never lowers the slots: 1 slot
    /// asking for 2, then a step to 4 before the warmup ends, keeps 4). It is no longer
    /// pending.
    pub fn scale_up_lands(&mut self, id: u32) -> Option<u32> {
        let i = self.pending_up.iter().position(|&(_, i)| i == id)?;
        let slots = self.pending_up.remove(i).0;
        (slots > self.concurrency).then_some(slots)
    }
}

/// The outage covering `t` among sorted, disjoint windows `[start, end)`.
#[inline]
pub fn outage_at(outages: &[Outage], t: SimTime) -> Option<&Outage> {
    outages.iter().find(|o| o.start <= t && t < o.end)
}

/// Hints below this many microseconds (about 35.8 minutes) travel in microseconds; longer
/// ones in milliseconds, flagged by the top bit.
const HINT_IN_MS: u32 = 1 << 31;

/// The longest hint that travels without saturating: 2^31 - 1 ms, about 24.8 days (a longer
/// fixed hint is refused when the scenario is read).
pub const HINT_MAX: SimDuration = SimDuration((HINT_IN_MS as u64 - 1) * 1_000_000);

/// Encodes a hint into the 32 bits an event (and a request's record) carries; 0 = none.
///
/// Under 35.8 minutes, in microseconds (rounded up); beyond, in milliseconds (rounded up),
/// up to 2^31 - 1 ms (about 24.8 days), where it saturates. A Retry-After header counts
/// whole seconds, so a fixed hint of up to 24.8 days travels exactly (urllib3 accepts up
/// to 6 hours). Before, one scale of microseconds cut every hint at 71.6 minutes.
pub fn encode_hint(hint: Option<SimDuration>) -> u32 {
    let Some(d) = hint else { return 0 };
    let us = d.as_nanos().div_ceil(1_000).max(1);
    if us < u64::from(HINT_IN_MS) {
        us as u32
    } else {
        HINT_IN_MS | us.div_ceil(1_000).min(u64::from(HINT_IN_MS - 1)) as u32
    }
}

/// The inverse of [`encode_hint`].
pub fn decode_hint(code: u32) -> Option<SimDuration> {
    match code {
        0 => None,
        c if c & HINT_IN_MS != 0 => Some(SimDuration(u64::from(c & !HINT_IN_MS) * 1_000_000)),
        us => Some(SimDuration(u64::from(us) * 1_000)),
    }
}

/// A rate limiter's token bucket, with arithmetic exact where a hand-worked case expects it
/// to be.
///
/// The bucket was last full (at `burst` tokens) at `full_at`, t = 0 at first, and `taken`
/// tokens have been taken since. Its level at `t` is `burst + (t - full_at) x rate - taken`,
/// capped at `burst` (reaching the cap moves `full_at` to `t`). Computed so, the tokens a
/// stretch of time earns are one product of whole nanoseconds and the rate, never a sum of
/// per-arrival increments: at 10 tokens/s, adding 0.1 s ten times makes 0.9999999999999999
/// and refused the request that arrived exactly when its token was due; here 100 ms earns
/// exactly one token.
#[derive(Debug, Clone, Copy)]
struct TokenBucket {
    full_at: SimTime,
    taken: u64,
}

/// Token-nanoseconds in a token (the bucket's unit: a rate in tokens per second times
/// nanoseconds).
const TOKEN: f64 = 1e9;

impl TokenBucket {
    /// A bucket full at t = 0.
    fn new() -> Self {
        TokenBucket {
            full_at: SimTime::ZERO,
            taken: 0,
        }
    }

    /// Takes a token at `now` if there is one, and returns the tokens there were before
    /// (the request is admitted when that is at least 1).
    fn take(&mut self, now: SimTime, limiter: &RateLimiter) -> f64 {
        // Every term is a whole number of token-nanoseconds for whole rates and bursts with
        // up to nine decimals, so the sum is exact below 2^53 token-nanoseconds (104 days
        // at 1 token/s, 2.5 hours at 1 000); beyond, off by a few token-nanoseconds.
        let earned = (now - self.full_at).as_nanos() as f64 * limiter.rate;
        let burst = limiter.burst * TOKEN;
        let held = burst - self.taken as f64 * TOKEN + earned;
        if held >= burst {
            self.full_at = now;
            self.taken = 1;
            return limiter.burst;
        }
        if held >= TOKEN {
            self.taken += 1;
        }
        held / TOKEN
    }
}

#[cfg(test)]
mod tests;
