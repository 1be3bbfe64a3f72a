//! Logical requests in flight: one entity for a closed client's request, an open arrival and
//! a service's downstream call, kept in a slab.
//!
//! A [`Request`] carries everything its retry loop needs (attempt number, serial, timers,
//! backoff state, deadline) and who it belongs to: a client of a population, or a *job* (a
//! request being served by a service that makes downstream calls), its parent. Events name a
//! request by its slab key and the serial of one of its attempts; an event whose serial is not
//! the request's current attempt is stale and ignored in O(1).
//!
//! The slab's first keys belong to the closed clients, one each, reused for each of the
//! client's requests in turn; keys above are handed out and taken back through a free list,
//! so memory grows with the requests in flight, never with the arrivals over a run. A key is
//! taken back only when its request has ended *and* none of its attempts is still held by a
//! server (`in_flight == 0`): until then, a server that serves an abandoned attempt can still
//! read the request it belongs to (its deadline, whether it is a bad request). A closed
//! client's key cannot wait: its next request begins in the same key. When it begins while a
//! server still holds an attempt of an earlier one, the earlier request's deadline and
//! bad-request flag are kept aside ([`Retired`]) until no server holds an attempt of the key,
//! and [`Requests::attempt_deadline`] and [`Requests::attempt_is_bad`] answer for the
//! request an attempt belongs to.

use super::huge_pages::filled_on_huge_pages;
use crate::engine::breaker::Probe;
use crate::model::outcome::{GiveUpReason, Status};
use crate::time::{SimDuration, SimTime};

/// No parent (a client request), no population (a downstream call).
pub const NONE: u32 = u32::MAX;

/// The state of one logical request that the event loop reads on most events: its current
/// attempt. 32 bytes, half a cache line, so a herd of a million requests touches half the
/// memory per event it would with everything in one record; the rest is in
/// [`RequestInfo`], read when a request begins, retries or ends.
///
/// Aligned to its size so that a record never straddles two cache lines: the allocator
/// places a large vector 16 bytes past a page boundary, which put every other record across
/// a line boundary, so an event touched two lines and the prefetch of its record (which
/// loads the line of the record's first byte) left the second to miss. With the alignment of
/// both records, 10^6 clients (quickstart's herd scaled, one strategy) ran in 2.1 s of user
/// time instead of 3.5 s, the same files.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub struct Request {
    /// Serial of the current attempt; monotonic per slab key, so events of an earlier
    /// request in the same key never match a later one.
    pub serial: u32,
    /// Attempts of this request still held by a server (queued, in service, OCC write).
    pub in_flight: u32,
    /// Attempts sent, every ladder included; 0 when no request is open.
    pub sent: u32,
    /// Index of the policy it follows (see `engine::RunPolicy`): for a client request, its
    /// population's index.
    pub policy: u16,
    /// Transport attempt number (1-based; <= max_attempts <= 65535).
    pub attempt: u16,
    /// When the current attempt times out (`SimTime::MAX`: never).
    pub timeout_at: SimTime,
    /// How the breaker admitted the current attempt (0, or a half-open round's probe).
    pub probe: Probe,
    /// Last status received.
    pub last_status: Option<Status>,
    /// The low 32 bits of the queue insertion number the current attempt's timer reserved
    /// when the attempt was sent: armed later, the timer still pops among the events of its
    /// instant as if pushed then (see [`EventQueue::reserve`](super::EventQueue::reserve)).
    pub timer_seq: u32,
    /// The flags below, one bit each (a byte instead of six keeps the record at 32 bytes).
    pub(super) flags: u8,
}

/// Defines a flag's getter and setter on [`Request`].
macro_rules! flags {
    ($($(#[$doc:meta])* $get:ident, $set:ident = $bit:expr;)*) => {
        impl Request {
            $(
                $(#[$doc])*
                #[inline]
                pub fn $get(&self) -> bool {
                    self.flags & (1 << $bit) != 0
                }

                #[doc = concat!("Sets [`Request::", stringify!($get), "`].")]
                #[inline]
                pub fn $set(&mut self, on: bool) {
                    self.flags = (self.flags & !(1 << $bit)) | (u8::from(on) << $bit);
                }
            )*
        }
    };
}

/// The bit of [`Request::sent_in_trouble`], set without a branch on every send.
const SENT_IN_TROUBLE: u8 = 7;

flags! {
    /// An attempt is outstanding (sent, no response or timeout yet).
    awaiting, set_awaiting = 0;
    /// The current attempt goes to the fallback server.
    on_fallback, set_on_fallback = 1;
    /// The request is one its server answers 400.
    bad_request, set_bad_request = 2;
    /// Whether a timer event for the current attempt is in the queue.
    timer_armed, set_timer_armed = 3;
    /// The current attempt's response is scheduled at exactly its timeout instant.
    response_at_timeout, set_response_at_timeout = 4;
    /// The request is in the attempt sample (its attempts are recorded).
    sampled, set_sampled = 5;
    /// The request holds a retry of its concurrent budget (Envoy's), from the retry
    /// decision until that attempt's outcome or the request's end.
    holds_retry, set_holds_retry = 6;
    /// The request sent an attempt at or after the start of the trouble `recovered_s`
    /// measures (see `Simulation::trigger_start`).
    sent_in_trouble, set_sent_in_trouble = SENT_IN_TROUBLE;
}

impl Request {
    /// A fresh entity (no request open).
    pub fn new() -> Self {
        Request {
            serial: 0,
            in_flight: 0,
            sent: 0,
            policy: 0,
            attempt: 0,
            timeout_at: SimTime::MAX,
            probe: 0,
            last_status: None,
            timer_seq: 0,
            flags: 0,
        }
    }

    /// Whether `serial` is the outstanding attempt (to the fallback server or not).
    #[inline]
    pub fn is_live(&self, serial: u32, on_fallback: bool) -> bool {
        self.awaiting() && self.serial == serial && self.on_fallback() == on_fallback
    }

    /// Sets [`Request::sent_in_trouble`] if `now_in_trouble`, without a branch (it is
    /// sticky: a request's later attempts are sent later still).
    #[inline]
    pub fn mark_sent_in_trouble(&mut self, now_in_trouble: bool) {
        self.flags |= u8::from(now_in_trouble) << SENT_IN_TROUBLE;
    }

    /// Whether attempt `serial` of this key was sent by the request now in it: serials count
    /// a key's attempts over all its requests, and the current request's are the last
    /// `sent`.
    #[inline]
    pub fn sent_attempt(&self, serial: u32) -> bool {
        self.serial.wrapping_sub(serial) < self.sent
    }

    /// Whether the current attempt's timer must enter the queue now that its next step is
    /// known to come at `next`: at or after its timeout (`SimTime::MAX`: none), and not
    /// armed yet (see `Simulation::arm_unless_earlier`).
    #[inline]
    pub fn timer_due_by(&self, next: SimTime) -> bool {
        next >= self.timeout_at && self.timeout_at != SimTime::MAX && !self.timer_armed()
    }
}

impl Default for Request {
    fn default() -> Self {
        Request::new()
    }
}

/// The rest of a logical request's state: who it belongs to, its deadline and backoff
/// state, what its record reports. One cache line, aligned to it (see [`Request`]).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub struct RequestInfo {
    /// Global client index (budget and breaker state); 0 for a downstream call.
    pub client: u32,
    /// The job that made this call, or [`NONE`] for a client request.
    pub parent: u32,
    /// The client's request number (closed), the arrival number (open, trace); the call's
    /// position for a downstream call.
    pub number: u32,
    /// 429s seen by the rate-limit ladder.
    pub rate_limited: u32,
    /// Quota units taken by the last retry (refunded on success).
    pub quota_cost: u32,
    /// Last Retry-After hint received, encoded as events carry it (`encode_hint`; 0: none).
    pub last_hint: u32,
    /// The request has ended (its key is free once `in_flight` is 0).
    pub ended: bool,
    /// The current attempt was dropped from a queue (its 503 is a shed, not a refusal).
    pub shed: bool,
    /// Why the request went to the fallback server.
    pub fallback_reason: GiveUpReason,
    /// The attempt after which the backoff ladder started again (`retry_after.restart`):
    /// retry n of the ladder is attempt `ladder_from + n + 1`. 0 at the start.
    pub ladder_from: u16,
    /// When the request began, before any `client_rate_limiter` wait for its first attempt
    /// (latency, `start_s` and the trigger's backlog count from here).
    pub started_at: SimTime,
    /// Absolute deadline (`SimTime::MAX`: none), possibly capped by the caller's.
    pub deadline_at: SimTime,
    /// Previous delay (decorrelated jitter's state); `base` at the start of a request.
    pub prev_delay: SimDuration,
    /// Total waiting between attempts.
    pub waited: SimDuration,
}

impl RequestInfo {
    /// A fresh entity (no request open).
    pub fn new() -> Self {
        RequestInfo {
            client: 0,
            parent: NONE,
            number: 0,
            rate_limited: 0,
            quota_cost: 0,
            last_hint: 0,
            ended: true,
            shed: false,
            fallback_reason: GiveUpReason::Attempts,
            ladder_from: 0,
            started_at: SimTime::ZERO,
            deadline_at: SimTime::MAX,
            prev_delay: SimDuration::ZERO,
            waited: SimDuration::ZERO,
        }
    }
}

impl Default for RequestInfo {
    fn default() -> Self {
        RequestInfo::new()
    }
}

/// What a server may still need of a closed client's request that ended while a server
/// held one of its attempts, once the client's next request has taken the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retired {
    /// The request's deadline (`SimTime::MAX`: none).
    pub deadline_at: SimTime,
    /// Whether its server answers it 400.
    pub bad_request: bool,
}

/// The requests of a run: `reserved` keys for closed clients, then a slab. Each key has a
/// hot [`Request`] and a cold [`RequestInfo`], in two vectors.
#[derive(Debug)]
pub struct Requests {
    items: Vec<Request>,
    infos: Vec<RequestInfo>,
    free: Vec<u32>,
    reserved: u32,
    live: u32,
    peak: u32,
    /// Earlier requests of closed clients' keys with attempts still held by a server, by
    /// (key, serial of the request's last attempt). Empty unless attempts outlive their
    /// request (a timeout shorter than the queue's wait, say). A key's entries go when no
    /// server holds an attempt of the key, not as each request's own attempts leave: a
    /// client whose key never drains (an overloaded queue, a short timeout, no think time)
    /// keeps one entry per request until it does, at most its requests of the run.
    retired: std::collections::BTreeMap<(u32, u32), Retired>,
}

impl Requests {
    /// `reserved` keys (0..reserved) for closed clients, never taken back.
    pub fn new(reserved: u32) -> Self {
        Requests {
            items: filled_on_huge_pages(reserved as usize, Request::new()),
            infos: filled_on_huge_pages(reserved as usize, RequestInfo::new()),
            free: Vec::new(),
            reserved,
            live: 0,
            peak: 0,
            retired: std::collections::BTreeMap::new(),
        }
    }

    /// Keeps aside what servers may still need of the request in closed client `key`, whose
    /// next request is about to begin there, if a server still holds one of its attempts
    /// (or of an earlier request's).
    #[inline(always)]
    pub fn retire_if_held(&mut self, key: u32) {
        let r = &self.items[key as usize];
        if key < self.reserved && r.in_flight > 0 && r.sent > 0 {
            self.retire(key);
        }
    }

    #[cold]
    #[inline(never)]
    fn retire(&mut self, key: u32) {
        let r = &self.items[key as usize];
        let facts = Retired {
            deadline_at: self.infos[key as usize].deadline_at,
            bad_request: r.bad_request(),
        };
        self.retired.insert((key, r.serial), facts);
    }

    /// Whether the request that sent attempt `serial` of `key` answers 400: the request in
    /// the key, unless the attempt is from an earlier request of a closed client.
    #[inline(always)]
    pub fn attempt_is_bad(&self, key: u32, serial: u32) -> bool {
        let r = &self.items[key as usize];
        if self.retired.is_empty() || r.sent_attempt(serial) {
            r.bad_request()
        } else {
            self.retired_facts(key, serial).bad_request
        }
    }

    /// The deadline of the request that sent attempt `serial` of `key` (`SimTime::MAX`:
    /// none), as [`Requests::attempt_is_bad`].
    #[inline]
    pub fn attempt_deadline(&self, key: u32, serial: u32) -> SimTime {
        if self.retired.is_empty() || self.items[key as usize].sent_attempt(serial) {
            self.infos[key as usize].deadline_at
        } else {
            self.retired_facts(key, serial).deadline_at
        }
    }

    /// What is kept of the earlier request that sent attempt `serial` of `key`: the first one
    /// kept aside whose last attempt is no older than `serial`.
    #[cold]
    #[inline(never)]
    fn retired_facts(&self, key: u32, serial: u32) -> Retired {
        *self
            .retired
            .range((key, serial)..=(key, u32::MAX))
            .next()
            .expect("an attempt held by a server belongs to a request kept aside")
            .1
    }

    /// A key for a new request (open arrival or downstream call). O(1).
    #[inline]
    pub fn allocate(&mut self) -> u32 {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(key) => key,
            None => {
                self.items.push(Request::new());
                self.infos.push(RequestInfo::new());
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Takes `key` back if its request has ended and no server holds one of its attempts.
    #[inline(always)]
    pub fn release_if_done(&mut self, key: u32) {
        if key >= self.reserved {
            if self.items[key as usize].in_flight == 0 && self.infos[key as usize].ended {
                self.free.push(key);
                self.live -= 1;
            }
        } else if !self.retired.is_empty() && self.items[key as usize].in_flight == 0 {
            self.forget_retired(key);
        }
    }

    /// No server holds an attempt of closed client `key` any more: nothing kept aside for it
    /// is needed.
    #[cold]
    #[inline(never)]
    fn forget_retired(&mut self, key: u32) {
        let gone: Vec<(u32, u32)> = (self.retired.range((key, 0)..=(key, u32::MAX)))
            .map(|(k, _)| *k)
            .collect();
        for k in gone {
            self.retired.remove(&k);
        }
    }

    /// The cold state of `key`.
    #[inline]
    pub fn info(&self, key: u32) -> &RequestInfo {
        &self.infos[key as usize]
    }

    /// The cold state of `key`, to change.
    #[inline]
    pub fn info_mut(&mut self, key: u32) -> &mut RequestInfo {
        &mut self.infos[key as usize]
    }

    /// Keys of the closed clients.
    pub fn reserved(&self) -> u32 {
        self.reserved
    }

    /// Every key ever handed out (for the end-of-run sweep).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no key at all.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The most slab keys (above the reserved ones) in use at once.
    pub fn peak(&self) -> u32 {
        self.peak
    }

    /// The hot states, for prefetching.
    pub fn as_slice(&self) -> &[Request] {
        &self.items
    }

    /// Every slot's cold state, for prefetching.
    #[inline]
    pub fn infos(&self) -> &[RequestInfo] {
        &self.infos
    }
}

impl std::ops::Index<u32> for Requests {
    type Output = Request;
    #[inline]
    fn index(&self, key: u32) -> &Request {
        &self.items[key as usize]
    }
}

impl std::ops::IndexMut<u32> for Requests {
    #[inline]
    fn index_mut(&mut self, key: u32) -> &mut Request {
        &mut self.items[key as usize]
    }
}

/// A request being served by a service that makes downstream calls: it holds its slot
/// through its own service time, then through each call in turn.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// The service serving it.
    pub service: u16,
    /// The position in the service's `calls` of the call in progress (or next).
    pub next_call: u16,
    /// What the service answers if every call succeeds (200, or 500 in an `errors` outage).
    pub answer: Status,
    /// The service's crash generation when it started: a crash since makes it lost.
    pub generation: u32,
    /// The calling request and the serial of the attempt being served.
    pub caller: u32,
    /// The caller's attempt serial.
    pub caller_serial: u32,
    /// The caller request's deadline when the job started (for propagation).
    pub deadline_at: SimTime,
}

/// Jobs in progress, in a slab with a free list.
#[derive(Debug, Default)]
pub struct Jobs {
    items: Vec<Job>,
    free: Vec<u32>,
}

impl Jobs {
    /// Stores `job` and returns its key. O(1).
    pub fn insert(&mut self, job: Job) -> u32 {
        match self.free.pop() {
            Some(key) => {
                self.items[key as usize] = job;
                key
            }
            None => {
                self.items.push(job);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Takes a key back.
    pub fn remove(&mut self, key: u32) {
        self.free.push(key);
    }
}

impl std::ops::Index<u32> for Jobs {
    type Output = Job;
    fn index(&self, key: u32) -> &Job {
        &self.items[key as usize]
    }
}

impl std::ops::IndexMut<u32> for Jobs {
    fn index_mut(&mut self, key: u32) -> &mut Job {
        &mut self.items[key as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_reused_only_when_ended_and_no_server_holds_an_attempt() {
        let mut r = Requests::new(2);
        let a = r.allocate();
        assert_eq!(a, 2, "keys 0 and 1 belong to closed clients");
        r.info_mut(a).ended = false;
        r[a].in_flight = 1;
        r.release_if_done(a);
        assert_eq!(r.allocate(), 3, "a is still open");
        r.info_mut(a).ended = true;
        r.release_if_done(a);
        assert_eq!(r.allocate(), 4, "a server still holds an attempt of a");
        r[a].in_flight = 0;
        r.release_if_done(a);
        assert_eq!(r.allocate(), a);
        // Closed clients' keys are never handed out.
        r.release_if_done(0);
        assert_eq!(r.allocate(), 5);
        assert_eq!(r.peak(), 4);
    }

    /// A closed client's key holds its next request while a server still holds an attempt
    /// of the one before: the server is answered for the attempt's own request, and what
    /// was kept aside goes once no server holds an attempt of the key.
    #[test]
    fn an_earlier_requests_facts_are_kept_while_a_server_holds_one_of_its_attempts() {
        let mut r = Requests::new(2);
        // The first request of key 1 (nothing sent yet) has nothing to keep.
        r.retire_if_held(1);
        assert!(r.retired.is_empty());
        // Request A sent attempts 1 and 2; a server holds one; deadline 50, answered 400.
        r[1].serial = 2;
        r[1].sent = 2;
        r[1].in_flight = 1;
        r[1].set_bad_request(true);
        r.info_mut(1).deadline_at = SimTime(50);
        r.retire_if_held(1);
        // Request B begins in the key and sends attempt 3.
        r[1].sent = 1;
        r[1].serial = 3;
        r[1].in_flight = 2;
        r[1].set_bad_request(false);
        r.info_mut(1).deadline_at = SimTime(80);
        assert_eq!(r.attempt_deadline(1, 3), SimTime(80));
        assert!(!r.attempt_is_bad(1, 3));
        for serial in [1, 2] {
            assert_eq!(r.attempt_deadline(1, serial), SimTime(50));
            assert!(r.attempt_is_bad(1, serial));
        }
        // One attempt left the server side: A's is still kept.
        r[1].in_flight = 1;
        r.release_if_done(1);
        assert_eq!(r.retired.len(), 1);
        r[1].in_flight = 0;
        r.release_if_done(1);
        assert!(r.retired.is_empty());
        // With no attempt held when the next request begins, nothing is kept.
        r.retire_if_held(1);
        assert!(r.retired.is_empty());
    }
}
