//! A simulated server: concurrency slots, a FIFO queue, outage windows and a rate limiter.
//!
//! The server decides what happens to each arrival ([`Server::admit`]) and which queued
//! attempt starts when a slot frees ([`Server::finish`]). It knows nothing of clients'
//! timeouts: an abandoned attempt keeps its place and is served anyway (wasted work).

use std::collections::VecDeque;

use crate::model::outcome::Status;
use crate::model::{Hint, Outage, OutageKind, RateLimiter, ServerSpec};
use crate::time::{SimDuration, SimTime};

/// An attempt waiting for, or holding, a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The client that sent it.
    pub client: u32,
    /// The attempt's serial.
    pub serial: u32,
    /// What the server will answer once served (200, or 500 in an `errors` outage).
    pub answer: Status,
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
    Serve(Job),
    /// Waits in the queue.
    Queued,
    /// An OCC write succeeded: answered 200 at once, no slot taken.
    Written,
}

/// Runtime state of one server.
#[derive(Debug, Clone)]
pub struct Server {
    spec: ServerSpec,
    busy: u32,
    queue: VecDeque<Job>,
    tokens: f64,
    tokens_at: SimTime,
    /// The OCC row's version: the number of successful writes so far.
    version: u32,
}

impl Server {
    /// An idle server with a full rate-limit bucket.
    pub fn new(spec: &ServerSpec) -> Self {
        Server {
            tokens: spec.rate_limit.map(|r| r.burst).unwrap_or(0.0),
            spec: spec.clone(),
            busy: 0,
            queue: VecDeque::new(),
            tokens_at: SimTime::ZERO,
            version: 0,
        }
    }

    /// Attempts in service now.
    pub fn in_service(&self) -> u32 {
        self.busy
    }

    /// Attempts waiting now.
    pub fn queued(&self) -> u32 {
        self.queue.len() as u32
    }

    /// Whether this is an OCC server (attempts read, then write).
    pub fn is_occ(&self) -> bool {
        self.spec.is_occ()
    }

    /// The OCC row's current version, as a read sees it.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The outage covering `t`, if any (windows are `[start, end)`).
    pub fn outage_at(&self, t: SimTime) -> Option<&Outage> {
        outage_at(&self.spec.outages, t)
    }

    /// Decides an arrival at `now`. `bad_request`: the logical request is one answered 400;
    /// `read_version`: for an OCC server, the version the attempt read; `draw` is a uniform
    /// [0, 1) number, used only inside an `errors` outage.
    pub fn admit(
        &mut self,
        now: SimTime,
        job: Job,
        bad_request: bool,
        read_version: u32,
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
        if self.spec.is_occ() {
            // A conditional write: it wins only if no other write won since its read.
            return if read_version == self.version {
                self.version = self.version.wrapping_add(1);
                Admission::Written
            } else {
                Admission::Rejected {
                    status: Status::Conflict,
                    hint: None,
                }
            };
        }
        let job = Job { answer, ..job };
        if self.busy < self.spec.concurrency {
            self.busy += 1;
            Admission::Serve(job)
        } else if self.queue.len() < self.spec.queue as usize {
            self.queue.push_back(job);
            Admission::Queued
        } else {
            let hint = match self.spec.retry_after {
                Hint::None => None,
                Hint::Fixed(d) => Some(d),
                // Estimated wait for a place: the queue ahead drained by every slot.
                Hint::Auto => Some(
                    SimDuration::from_nanos_f64(
                        (self.queue.len() as f64 + 1.0)
                            * self.spec.service.mean().as_nanos() as f64
                            / self.spec.concurrency as f64,
                    )
                    .max(SimDuration(1))
                    .ceil_to_secs(),
                ),
            };
            Admission::Rejected {
                status: Status::Unavailable,
                hint,
            }
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

    /// The service-time factor for a service starting at `now` (a `slow` outage).
    pub fn slowdown_at(&self, now: SimTime) -> f64 {
        match self.outage_at(now).map(|o| o.kind) {
            Some(OutageKind::Slow(f)) => f,
            _ => 1.0,
        }
    }

    /// A service finished: frees its slot, or hands it to the next queued job (returned).
    pub fn finish(&mut self) -> Option<Job> {
        match self.queue.pop_front() {
            Some(next) => Some(next),
            None => {
                self.busy -= 1;
                None
            }
        }
    }
}

/// The outage covering `t` among sorted, disjoint windows `[start, end)`.
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

    fn job(client: u32) -> Job {
        Job {
            client,
            serial: 1,
            answer: Status::Ok,
        }
    }

    #[test]
    fn slots_then_queue_then_503() {
        let mut s = Server::new(&spec());
        let t = SimTime::ZERO;
        assert!(matches!(
            s.admit(t, job(0), false, 0, || 0.0),
            Admission::Serve(_)
        ));
        assert!(matches!(
            s.admit(t, job(1), false, 0, || 0.0),
            Admission::Serve(_)
        ));
        assert_eq!(s.admit(t, job(2), false, 0, || 0.0), Admission::Queued);
        // (1 queued + 1) * 100 ms / 2 slots = 100 ms, sent as a whole second.
        assert_eq!(
            s.admit(t, job(3), false, 0, || 0.0),
            Admission::Rejected {
                status: Status::Unavailable,
                hint: Some(SimDuration::from_secs(1))
            }
        );
        assert_eq!(s.finish(), Some(job(2)));
        assert_eq!(s.finish(), None);
        assert_eq!(s.in_service(), 1);
    }

    #[test]
    fn outage_covers_start_but_not_end() {
        let mut s = Server::new(&spec());
        let start = SimTime(SimDuration::from_secs(1).0);
        let end = SimTime(SimDuration::from_secs(3).0);
        assert_eq!(
            s.admit(start, job(0), false, 0, || 0.0),
            Admission::Rejected {
                status: Status::Unavailable,
                hint: Some(SimDuration::from_secs(2))
            }
        );
        assert!(matches!(
            s.admit(SimTime(end.0 - 1), job(0), false, 0, || 0.0),
            Admission::Rejected { .. }
        ));
        assert!(matches!(
            s.admit(end, job(0), false, 0, || 0.0),
            Admission::Serve(_)
        ));
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
        let mut s = Server::new(&spec);
        let t = SimTime::ZERO;
        assert!(!matches!(
            s.admit(t, job(0), false, 0, || 0.0),
            Admission::Rejected { .. }
        ));
        assert!(!matches!(
            s.admit(t, job(1), false, 0, || 0.0),
            Admission::Rejected { .. }
        ));
        // Empty bucket refilling at 0.5/s: the next token is 2 s away.
        assert_eq!(
            s.admit(t, job(2), false, 0, || 0.0),
            Admission::Rejected {
                status: Status::TooManyRequests,
                hint: Some(SimDuration::from_secs(2))
            }
        );
        // 1.5 s later, 0.75 token: 0.5 s to go, sent as 1 s.
        let later = SimTime(SimDuration::from_millis(1500).0);
        assert_eq!(
            s.admit(later, job(3), false, 0, || 0.0),
            Admission::Rejected {
                status: Status::TooManyRequests,
                hint: Some(SimDuration::from_secs(1))
            }
        );
    }

    #[test]
    fn an_occ_write_wins_only_with_the_current_version() {
        let mut spec = spec();
        spec.outages.clear();
        spec.occ = crate::model::Occ::ReadWrite;
        let mut s = Server::new(&spec);
        let t = SimTime::ZERO;
        assert_eq!(s.version(), 0);
        assert_eq!(s.admit(t, job(0), false, 0, || 0.0), Admission::Written);
        assert_eq!(s.version(), 1);
        // A second writer that also read version 0 lost the race.
        assert_eq!(
            s.admit(t, job(1), false, 0, || 0.0),
            Admission::Rejected {
                status: Status::Conflict,
                hint: None
            }
        );
        assert_eq!(s.admit(t, job(1), false, 1, || 0.0), Admission::Written);
        assert_eq!(s.in_service(), 0, "writes take no slot");
    }

    #[test]
    fn hints_round_trip_through_events() {
        assert_eq!(hint_from_us(hint_to_us(None)), None);
        let h = Some(SimDuration::from_secs(3));
        assert_eq!(hint_from_us(hint_to_us(h)), h);
    }
}
