//! The event queue: hierarchical timing wheels on integer time, FIFO among equal times.
//!
//! Events at equal times pop in insertion order, so the order of a run is total and
//! reproducible (the contract's "ties broken by insertion order"): the queue numbers every
//! push, and orders by (time, number). A timer the engine arms late, once it knows it will
//! fire (see the engine's lazy timers), is pushed with the number it reserved when it was
//! conceptually set, so it pops where it would have had it been pushed then. Events are
//! small `Copy` values stored by value: no allocation per event.
//!
//! Why wheels: a simulation never schedules into the past, and a herd's events crowd into
//! the next few hundred milliseconds (network and service times) with a tail of backoff
//! delays and timeouts seconds ahead. A push is then an index and an append, and a pop takes
//! the next event of a small bucket sorted once; a heap or radix heap pays a logarithmic or
//! per-digit cost on every event instead. Measured with callgrind on the quickstart herd,
//! the wheels cost about a third of the instructions per event of the radix heap they
//! replaced (see the README's performance section).

use crate::model::outcome::Status;
use crate::time::SimTime;
use sort::sort_by_time;
use wheel::{KEEP_BUCKET, SPARE_LIMIT, Wheel};

mod sort;
mod wheel;

/// What happens when an event fires. `id` names a request key unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// A closed client begins its next logical request.
    Start,
    /// The next arrival of an open or trace population (`service` = population index).
    Arrival,
    /// A request sends its next attempt (a retry or a fallback call).
    Send,
    /// An attempt reaches `service` (for an OCC write, `aux` = the version it read).
    Arrive,
    /// `service` finishes serving an attempt (`aux` = the service's crash generation when
    /// it started); `status` is what it will answer.
    Done,
    /// `service` finishes its own work on job `id`, which now makes its downstream calls.
    DoneJob,
    /// A response (`status`, `aux` = hint in µs) from `service` reaches the caller.
    Response,
    /// The attempt's timer expired; `status` is `Timeout` or `Unreachable`.
    Timeout,
    /// A breaker's open period ends (`id` = breaker index, `service` = breaker group).
    HalfOpen,
    /// An OCC attempt's read reaches `service`.
    Read,
    /// The read's answer reaches the caller; `aux` carries the version read.
    ReadReply,
    /// An OCC write held for its write time commits if the row is still at version `aux`.
    Commit,
    /// Queued attempts of `service` that have waited `queue_timeout` are dropped.
    QueueTimeout,
    /// `service` changes to `aux` slots: a capacity step (`serial` 0) or an autoscaling
    /// increase decided in epoch `serial` (called off if a decrease came since).
    Capacity,
    /// `service` makes an autoscaling decision.
    Autoscale,
    /// `service` crashes: everything it holds is lost.
    Crash,
    /// The first attempt waiting on a client-side rate limiter may take its token (`service`
    /// = the limiter set, `id` = the limiter, `serial` = the wake-up's generation).
    LimiterWake,
}

impl EventKind {
    /// Whether handling this event usually reads the request's cold record
    /// ([`RequestInfo`](super::request::RequestInfo)): a request begins, or an attempt's
    /// result arrives (the retry decision reads the backoff state and the deadline). The
    /// other events of a request touch only its hot record.
    #[inline]
    pub fn reads_request_info(self) -> bool {
        matches!(
            self,
            EventKind::Start | EventKind::Response | EventKind::Timeout
        )
    }

    /// Background events change a server but create no work: a run whose queue holds only
    /// these is over.
    pub fn is_background(self) -> bool {
        matches!(
            self,
            EventKind::Capacity | EventKind::Autoscale | EventKind::Crash
        )
    }
}

/// One scheduled event: 32 bytes, `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it fires.
    pub time: SimTime,
    /// Its insertion number, set by the queue (ties of `time` pop in this order).
    pub seq: u64,
    /// The request key (or job, breaker index: see [`EventKind`]).
    pub id: u32,
    /// The attempt serial it belongs to; stale events (an older serial) are ignored.
    pub serial: u32,
    /// A payload: a Retry-After hint in µs, an OCC version, a crash generation, a size.
    pub aux: u32,
    /// What fires.
    pub kind: EventKind,
    /// Status carried by `Done`, `Response` and `Timeout`.
    pub status: Status,
    /// The service concerned (or population, breaker group: see [`EventKind`]).
    pub service: u16,
}

impl Event {
    /// An event with no payload.
    #[inline]
    pub fn new(kind: EventKind, time: SimTime, id: u32, serial: u32) -> Self {
        Event {
            time,
            seq: 0,
            id,
            serial,
            aux: 0,
            kind,
            status: Status::Ok,
            service: 0,
        }
    }

    /// Sets the status payload.
    #[inline]
    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }

    /// Sets the numeric payload.
    #[inline]
    pub fn with_aux(mut self, aux: u32) -> Self {
        self.aux = aux;
        self
    }

    /// Sets the service (or population, breaker group).
    #[inline]
    pub fn at_service(mut self, service: u16) -> Self {
        self.service = service;
        self
    }

    /// The queue's order: time, then insertion number.
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time.0, self.seq)
    }
}

/// Consumed events at one instant beyond which `current` drops its consumed prefix.
const KEEP_CAPACITY: usize = 4096;

/// log2 of a fine bucket's width in nanoseconds (65.5 µs).
const FINE_SHIFT: u32 = 16;
/// Fine buckets per coarse slot: a coarse slot is `2^26` ns (67 ms).
const FINE_BITS: u32 = 10;
/// Coarse slots per epoch: an epoch is `2^40` ns (18 minutes).
const COARSE_BITS: u32 = 14;
const COARSE_SHIFT: u32 = FINE_SHIFT + FINE_BITS;
const EPOCH_SHIFT: u32 = COARSE_SHIFT + COARSE_BITS;
const FINE_MASK: u64 = (1 << FINE_BITS) - 1;
const COARSE_MASK: u64 = (1 << COARSE_BITS) - 1;

/// Min-priority queue of events by time; FIFO among equal times.
///
/// Hierarchical timing wheels (R. Brown's calendar queue, with Varghese and Lauck's
/// hierarchy): the 67 ms *coarse slot* being simulated is split into 1 024 *fine buckets* of
/// 65.5 µs; the 18-minute *epoch* around it into 16 384 coarse slots; events beyond the
/// epoch wait in a binary heap. A push is an index and an append. A fine bucket is sorted by
/// (time, insertion number) when the simulation reaches it (a few events each in a herd); a
/// coarse slot is spread over the fine buckets when the simulation reaches it, an epoch's
/// events are pulled from the heap when it begins. Bitmaps find the next non-empty bucket
/// or slot, so empty stretches of time cost nothing.
///
/// Invariant: every pushed event is no earlier than the last popped one (the engine only
/// schedules at `now + d`). Pushing into the past is a caller bug; it panics in debug builds.
#[derive(Debug)]
pub struct EventQueue {
    /// The sorted events of the fine bucket being consumed; `head` is the next to pop.
    current: Vec<Event>,
    head: usize,
    /// The counting sorts' buffer (see `sort_by_time`), kept between buckets.
    scratch: Vec<Event>,
    /// Absolute number (`time >> FINE_SHIFT`) of the fine bucket being consumed.
    fine_at: u64,
    /// The ends (in ns, saturating at `u64::MAX`) of the coarse slot and of the epoch of
    /// `fine_at`: as no event is pushed into the past, a push compares its time with these
    /// instead of shifting it and `fine_at` to compare slot and epoch numbers.
    slot_end: u64,
    epoch_end: u64,
    /// Fine buckets of the coarse slot being consumed.
    fine: Wheel<{ 1 << FINE_BITS }, { 1 << (FINE_BITS - 6) }>,
    /// Coarse slots of the epoch being consumed.
    coarse: Wheel<{ 1 << COARSE_BITS }, { 1 << (COARSE_BITS - 6) }>,
    /// Events beyond the epoch, by (time, insertion number).
    far: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, FarEvent)>>,
    /// The insertion number of the next push (or reservation).
    next_seq: u64,
    len: usize,
    /// The time of the last event popped, kept in debug builds only (see `pop`).
    last: u64,
}

thread_local! {
    /// The queue the last run on this thread gave back, emptied (see
    /// [`EventQueue::reuse_or_new`]).
    static SPARE_QUEUE: std::cell::RefCell<Option<EventQueue>> = const { std::cell::RefCell::new(None) };
}

/// An event in the far heap (ordered by the key beside it, never by itself).
#[derive(Debug, Clone, Copy)]
struct FarEvent(Event);

impl PartialEq for FarEvent {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for FarEvent {}
impl PartialOrd for FarEvent {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for FarEvent {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::with_capacity(0)
    }
}

impl EventQueue {
    /// An empty queue; `capacity` is a hint for the initial burst of events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            current: Vec::with_capacity(capacity),
            head: 0,
            scratch: Vec::new(),
            fine_at: 0,
            slot_end: 1 << COARSE_SHIFT,
            epoch_end: 1 << EPOCH_SHIFT,
            fine: Wheel::new(KEEP_BUCKET),
            coarse: Wheel::new(0),
            far: std::collections::BinaryHeap::new(),
            next_seq: 0,
            len: 0,
            last: 0,
        }
    }

    /// An empty queue, reusing the one the last run on this thread gave back with
    /// [`EventQueue::recycle`] when there is one. A queue's wheels are 17 408 buckets: for
    /// the small runs of a sweep (Brooker's 2015 experiment has about 3 000 events per
    /// run), making and freeing them cost more instructions than a sixth of the run's
    /// events.
    pub fn reuse_or_new(capacity: usize) -> Self {
        match SPARE_QUEUE.with(|spare| spare.borrow_mut().take()) {
            Some(mut queue) => {
                queue.current.reserve(capacity);
                queue
            }
            None => EventQueue::with_capacity(capacity),
        }
    }

    /// Empties the queue and keeps it for the next run on this thread (one queue per
    /// thread). It keeps its buckets and their small buffers, not the spare wave buffers:
    /// keeping those too raised `million.toml`'s peak memory from 240 MB to 282 MB.
    pub fn recycle(mut self) {
        self.fine.clear();
        self.coarse.clear();
        // Far events are rare; a run that had many (starts spread over hours) must not
        // leave their heap's size to the thread.
        self.far = std::collections::BinaryHeap::new();
        if self.current.capacity() > SPARE_LIMIT {
            self.current = Vec::new();
        } else {
            self.current.clear();
        }
        self.head = 0;
        self.fine_at = 0;
        self.slot_end = 1 << COARSE_SHIFT;
        self.epoch_end = 1 << EPOCH_SHIFT;
        self.next_seq = 0;
        self.len = 0;
        self.last = 0;
        SPARE_QUEUE.with(|spare| *spare.borrow_mut() = Some(self));
    }

    /// Schedules `event`; it pops after every event with a smaller time, and after every
    /// event with the same time pushed before it. O(1), except into the bucket being
    /// consumed (a sorted insert) and beyond the epoch (a heap push).
    #[inline]
    pub fn push(&mut self, event: Event) {
        let seq = self.reserve();
        self.push_as_of(event, seq);
    }

    /// Takes the next insertion number without pushing: an event pushed later with it (by
    /// [`EventQueue::push_as_of`]) pops as if it had been pushed now.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// The insertion number the next push (or reservation) takes: every event pushed so
    /// far has a smaller one.
    #[inline]
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The full insertion number whose low 32 bits are `low`, reserved since the last
    /// 2^32 numbers were taken (request state keeps 32 bits of a reservation).
    #[inline]
    pub fn reserved_from_low_bits(&self, low: u32) -> u64 {
        let behind = (self.next_seq as u32).wrapping_sub(low);
        self.next_seq - u64::from(behind)
    }

    /// Schedules `event` as if pushed when `seq` was taken (by [`EventQueue::reserve`]).
    #[inline]
    pub fn push_as_of(&mut self, mut event: Event, seq: u64) {
        debug_assert!(seq < self.next_seq, "a number never reserved");
        event.seq = seq;
        debug_assert!(
            event.time.0 >= self.last,
            "an event was scheduled in the past"
        );
        self.len += 1;
        let t = event.time.0;
        let fine = t >> FINE_SHIFT;
        // Only the two wheel pushes are written out here: the bucket being consumed (a
        // sorted insert), the far heap and a bucket's growth are calls of their own, all in
        // tail position, so the common path saves no register (six when they were written
        // here: 15 M of the quickstart herd's 605 M instructions).
        debug_assert_eq!(
            self.slot_end,
            end_of(self.fine_at >> FINE_BITS, COARSE_SHIFT)
        );
        if fine == self.fine_at {
            self.push_current(event);
        } else if t < self.slot_end {
            self.fine.push((fine & FINE_MASK) as usize, event);
        } else if t < self.epoch_end {
            self.coarse
                .push(((t >> COARSE_SHIFT) & COARSE_MASK) as usize, event);
        } else {
            self.push_far(event);
        }
    }

    /// Beyond the epoch: into the heap, by (time, insertion number).
    #[inline(never)]
    fn push_far(&mut self, event: Event) {
        self.far.push(std::cmp::Reverse((
            event.time.0,
            event.seq,
            FarEvent(event),
        )));
    }

    /// Into the bucket being consumed: after every pending event of no later time.
    #[inline(never)]
    fn push_current(&mut self, event: Event) {
        if self.head > KEEP_CAPACITY && self.head * 2 >= self.current.len() {
            // A cascade at one instant (zero-delay work) keeps appending here while the
            // consumed prefix is dead: drop it (amortised O(1)).
            self.current.drain(..self.head);
            self.head = 0;
        }
        let key = event.key();
        match self.current.last() {
            Some(e) if e.key() > key => {
                let pending = &self.current[self.head..];
                let at = self.head + pending.partition_point(|e| e.key() < key);
                self.current.insert(at, event);
            }
            _ => self.current.push(event),
        }
    }

    /// Removes and returns the earliest event. Amortised O(1) plus the sort of small
    /// buckets.
    ///
    /// `get` makes the bucket's end test and the bounds check one comparison (`head == len`
    /// then `current[head]` compared twice, as `advance` is out of line). The bucket switch
    /// stays a call of `advance` here: a wrapper returning `Option<Event>` cost Brooker, whose
    /// buckets mostly hold one event, 1% more. Measured: quickstart 547.0 M -> 545.3 M
    /// instructions (0.32%), Brooker 971.3 M -> 971.0 M.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = match self.current.get(self.head) {
            Some(&e) => e,
            None => {
                if !self.advance() {
                    return None;
                }
                self.current[0]
            }
        };
        self.head += 1;
        self.len -= 1;
        // Read only by the debug check of `push_as_of`: a store per event otherwise.
        if cfg!(debug_assertions) {
            self.last = e.time.0;
        }
        Some(e)
    }

    /// Makes the next non-empty fine bucket `current`. Returns false when no event is left.
    #[cold]
    #[inline(never)]
    fn advance(&mut self) -> bool {
        if self.current.capacity() > SPARE_LIMIT {
            // A herd's instant (a million starts at t = 0) is over: do not keep its buffer.
            self.current = Vec::new();
        } else {
            self.current.clear();
        }
        self.head = 0;
        // The next bucket of this coarse slot is the common case (Brooker's runs switch
        // buckets for 80% of their events): it is found here, and moving to the next slot
        // or epoch is a call of its own, so this path saves few registers.
        let from = (self.fine_at & FINE_MASK) as usize + 1;
        let next = match self.fine.next(from) {
            Some(i) => {
                self.fine_at = (self.fine_at & !FINE_MASK) | i as u64;
                i
            }
            None => match self.next_slot() {
                Some(i) => i,
                None => return false,
            },
        };
        self.fine.take(next, &mut self.current);
        sort_by_time(&mut self.current, &mut self.scratch);
        true
    }

    /// The coarse slot being consumed is done: spreads the next non-empty one over the fine
    /// buckets (pulling the next epoch's events from the heap first when this epoch is done
    /// too), and returns its first non-empty fine bucket, now `fine_at`. None when no event
    /// is left.
    #[inline(never)]
    fn next_slot(&mut self) -> Option<usize> {
        let slot = self.fine_at >> FINE_BITS;
        let epoch = slot >> COARSE_BITS;
        let from = ((slot & COARSE_MASK) + 1) as usize;
        let slot = match self.coarse.next(from) {
            Some(j) => (epoch << COARSE_BITS) | j as u64,
            None => {
                let std::cmp::Reverse((t, _, _)) = self.far.peek()?;
                let epoch = t >> EPOCH_SHIFT;
                while let Some(std::cmp::Reverse((t, _, _))) = self.far.peek() {
                    if t >> EPOCH_SHIFT != epoch {
                        break;
                    }
                    let std::cmp::Reverse((t, _, FarEvent(e))) = self.far.pop().expect("peeked");
                    self.coarse
                        .push(((t >> COARSE_SHIFT) & COARSE_MASK) as usize, e);
                }
                let first = self.coarse.next(0).expect("an event was moved in");
                (epoch << COARSE_BITS) | first as u64
            }
        };
        self.spread((slot & COARSE_MASK) as usize);
        let first = self.fine.next(0).expect("a non-empty slot was spread");
        self.fine_at = (slot << FINE_BITS) | first as u64;
        self.slot_end = end_of(slot, COARSE_SHIFT);
        self.epoch_end = end_of(slot >> COARSE_BITS, EPOCH_SHIFT);
        Some(first)
    }

    /// Spreads coarse slot `j`'s events over the fine buckets, in insertion order.
    fn spread(&mut self, j: usize) {
        let events = self.coarse.take_all(j);
        self.fine
            .push_all(&events, |e| ((e.time.0 >> FINE_SHIFT) & FINE_MASK) as usize);
        self.coarse.give_back(j, events);
    }

    /// The event `ahead` places after the next one, when it is already in the bucket being
    /// consumed (cheap and only a guess, for prefetching request state before it is needed).
    #[inline]
    pub fn upcoming(&self, ahead: usize) -> Option<&Event> {
        self.current.get(self.head + ahead)
    }

    /// Number of scheduled events.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The end in ns of the span number `n` of `2^shift` ns, `u64::MAX` for the last one.
fn end_of(n: u64, shift: u32) -> u64 {
    (n + 1).saturating_mul(1 << shift)
}

#[cfg(test)]
mod tests;
