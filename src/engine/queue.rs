//! The event queue: a monotone radix heap on time (base 64), FIFO among equal times.
//!
//! Events at equal times pop in insertion order, so the order of a run is total and
//! reproducible (the contract's "ties broken by insertion order"). Events are small `Copy`
//! values stored by value: no allocation per event.
//!
//! Why a radix heap and not `BinaryHeap<(time, seq)>`: a simulation never schedules into the
//! past, so every pushed time is at least the last popped one. A radix heap exploits that.
//! Times are read as 11 base-64 digits; an event sits in the bucket named by the highest digit
//! in which its time differs from the last popped time, and by its value there. Push is O(1);
//! an event scheduled `d` ahead moves to a lower bucket at most `log64(d)` times (3 for 10 ms
//! in nanoseconds) before it pops. Buckets are append-only vectors redistributed in order, so
//! events of equal time keep their insertion order without a sequence number (the proof is in
//! `EventQueue::refill`). On the herd scenario its operations cost about half the instructions
//! per event of a binary heap keyed by `(time, seq)` (measured with callgrind).

use crate::model::outcome::Status;
use crate::time::SimTime;

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
    /// `service` changes to `aux` slots (a capacity step or an autoscaling increase).
    Capacity,
    /// `service` makes an autoscaling decision.
    Autoscale,
    /// `service` crashes: everything it holds is lost.
    Crash,
}

impl EventKind {
    /// Background events change a server but create no work: a run whose queue holds only
    /// these is over.
    pub fn is_background(self) -> bool {
        matches!(
            self,
            EventKind::Capacity | EventKind::Autoscale | EventKind::Crash
        )
    }
}

/// One scheduled event: 24 bytes, `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it fires.
    pub time: SimTime,
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
}

/// Bits per digit: 64 buckets per level.
const DIGIT: u32 = 6;
/// Levels needed to cover 64-bit times.
const LEVELS: usize = 11;
/// Largest bucket allocation (in events) kept after the bucket empties.
const KEEP_CAPACITY: usize = 4096;

/// Min-priority queue of events by time; FIFO among equal times.
///
/// Invariant: every pushed event is no earlier than the last popped one (the engine only
/// schedules at `now + d`). Pushing into the past is a caller bug; it panics in debug builds.
#[derive(Debug)]
pub struct EventQueue {
    /// Events whose time equals `last`, in insertion order; `head` is the next to pop.
    current: Vec<Event>,
    head: usize,
    /// `buckets[level * 64 + digit]`: events whose highest base-64 digit differing from
    /// `last` is at `level`, where their digit is `digit`.
    buckets: Vec<Vec<Event>>,
    /// Per level, bit `digit` set when that bucket is non-empty.
    occupied: [u64; LEVELS],
    /// Bit `level` set when `occupied[level] != 0`.
    levels: u16,
    last: u64,
    len: usize,
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
            buckets: (0..LEVELS * 64).map(|_| Vec::new()).collect(),
            occupied: [0; LEVELS],
            levels: 0,
            last: 0,
            len: 0,
        }
    }

    #[inline]
    fn place(&mut self, event: Event) {
        let time = event.time.0;
        let diff = time ^ self.last;
        if diff == 0 {
            // Events pushed at the instant being consumed (a zero-delay cascade) would grow
            // `current` without bound while its consumed prefix is dead: drop that prefix
            // once it is most of the vector (amortised O(1), and only at one instant).
            if self.head > KEEP_CAPACITY && self.head * 2 >= self.current.len() {
                self.current.drain(..self.head);
                self.head = 0;
            }
            self.current.push(event);
        } else {
            let level = ((63 - diff.leading_zeros()) / DIGIT) as usize;
            let digit = ((time >> (level as u32 * DIGIT)) & 63) as usize;
            self.occupied[level] |= 1 << digit;
            self.levels |= 1 << level;
            self.buckets[level * 64 + digit].push(event);
        }
    }

    /// Schedules `event`; it pops after every event with a smaller time, and after every
    /// event with the same time pushed before it. O(1).
    #[inline]
    pub fn push(&mut self, event: Event) {
        debug_assert!(
            event.time.0 >= self.last,
            "an event was scheduled in the past"
        );
        self.len += 1;
        self.place(event);
    }

    /// Removes and returns the earliest event. Amortised O(log64 of how far ahead it was
    /// scheduled).
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.head == self.current.len() {
            if self.levels == 0 {
                return None;
            }
            self.refill();
        }
        let e = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// Redistributes the lowest non-empty bucket around its earliest time, whose events
    /// become `current`.
    ///
    /// Why FIFO survives: two events of equal time always sit in the same bucket (a bucket is
    /// a function of the time and `last`, and `last` only moves to the minimum of the lowest
    /// bucket, which agrees with the old `last` on every digit above that bucket's level, so
    /// every other event keeps its bucket). Buckets are append-only, and this loop moves
    /// events in vector order into buckets that are empty (every lower level and `current`
    /// are empty when the lowest bucket is refilled), so insertion order among equal times is
    /// preserved all the way to `current`.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        if self.current.capacity() > KEEP_CAPACITY {
            self.current = Vec::new();
        }
        self.current.clear();
        self.head = 0;
        let level = self.levels.trailing_zeros() as usize;
        let digit = self.occupied[level].trailing_zeros() as usize;
        self.occupied[level] &= !(1 << digit);
        if self.occupied[level] == 0 {
            self.levels &= !(1 << level);
        }
        let index = level * 64 + digit;
        if level == 0 {
            // A level-0 bucket holds a single time (`last` with its lowest digit replaced):
            // it becomes `current` as it is, already in insertion order. Copied, not swapped,
            // so a large allocation never migrates into a bucket and lingers there.
            let bucket = &mut self.buckets[index];
            self.current.extend_from_slice(bucket);
            bucket.clear();
            self.last = self.current[0].time.0;
            return;
        }
        let mut events = std::mem::take(&mut self.buckets[index]);
        if events.len() == 1 {
            // The common case with nanosecond times: a lone event pops straight away.
            let e = events[0];
            events.clear();
            self.last = e.time.0;
            self.current.push(e);
        } else {
            self.last = events
                .iter()
                .map(|e| e.time.0)
                .min()
                .expect("occupied bucket is not empty");
            for &e in &events {
                self.place(e);
            }
            events.clear();
        }
        // Keep a small allocation (this bucket fills again soon), but give back a large one:
        // a herd of a million events passes through many buckets, and buckets that each kept
        // their largest size would hold many times the events actually in the queue.
        if events.capacity() <= KEEP_CAPACITY {
            self.buckets[index] = events;
        }
    }

    /// The id of one of the next events, likely a request key: the next event of the
    /// current time, else the oldest event of the lowest bucket. Cheap and only a guess, for
    /// prefetching request state before it is needed.
    #[inline]
    pub fn upcoming_id(&self) -> Option<u32> {
        if let Some(e) = self.current.get(self.head) {
            return Some(e.id);
        }
        let level = self.levels.trailing_zeros() as usize;
        if level >= LEVELS {
            return None;
        }
        let digit = self.occupied[level].trailing_zeros() as usize;
        self.buckets[level * 64 + digit].first().map(|e| e.id)
    }

    /// The time of the earliest event, without removing it. O(size of the lowest bucket).
    pub fn peek_time(&self) -> Option<SimTime> {
        if let Some(e) = self.current.get(self.head) {
            return Some(e.time);
        }
        if self.levels == 0 {
            return None;
        }
        let level = self.levels.trailing_zeros() as usize;
        let digit = self.occupied[level].trailing_zeros() as usize;
        self.buckets[level * 64 + digit]
            .iter()
            .map(|e| e.time)
            .min()
    }

    /// Number of scheduled events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        for client in 0..100 {
            q.push(Event::new(EventKind::Send, SimTime(5), client, 0));
        }
        q.push(Event::new(EventKind::Send, SimTime(1), 999, 0));
        assert_eq!(q.pop().unwrap().id, 999);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.id).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    /// A cascade at one instant (each popped event pushes another at the same time) keeps
    /// `current` small: before, it grew by one event per pop (6 GB in seconds).
    #[test]
    fn a_cascade_at_one_instant_runs_in_bounded_memory() {
        let mut q = EventQueue::default();
        q.push(Event::new(EventKind::Send, SimTime(5), 0, 0));
        for i in 0..1_000_000u32 {
            let e = q.pop().expect("one event is always queued");
            assert_eq!(e.id, i);
            q.push(Event::new(EventKind::Send, SimTime(5), i + 1, 0));
        }
        assert_eq!(q.len(), 1);
        assert!(
            q.current.capacity() <= 4 * KEEP_CAPACITY,
            "{}",
            q.current.capacity()
        );
    }

    #[test]
    fn events_are_small() {
        assert!(std::mem::size_of::<Event>() <= 24);
    }

    proptest::proptest! {
        #[test]
        fn pops_in_time_then_insertion_order(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::default();
            for (i, t) in times.iter().enumerate() {
                q.push(Event::new(EventKind::Send, SimTime(*t), i as u32, 0));
            }
            let mut expected: Vec<(u64, u32)> = times.iter().enumerate().map(|(i, t)| (*t, i as u32)).collect();
            expected.sort();
            let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.time.0, e.id)).collect();
            proptest::prop_assert_eq!(got, expected);
        }

        /// Interleaved pushes (never into the past) and pops still come out in order.
        #[test]
        fn interleaved_pushes_and_pops_stay_ordered(ops in proptest::collection::vec((0u64..1_000_000, proptest::bool::ANY), 1..400)) {
            let mut q = EventQueue::default();
            let mut now = 0u64;
            let mut reference: Vec<(u64, u64)> = Vec::new();
            let mut seq = 0u64;
            for (delay, pop) in ops {
                if pop {
                    let got = q.pop().map(|e| (e.time.0, e.id as u64));
                    reference.sort();
                    let want = if reference.is_empty() { None } else { Some(reference.remove(0)) };
                    proptest::prop_assert_eq!(got.map(|g| g.0), want.map(|w| w.0));
                    proptest::prop_assert_eq!(got.map(|g| g.1), want.map(|w| w.1));
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let t = now + delay % 1000 * (1 + delay / 1000);
                    q.push(Event::new(EventKind::Send, SimTime(t), seq as u32, 0));
                    reference.push((t, seq));
                    seq += 1;
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
        }
    }
}
