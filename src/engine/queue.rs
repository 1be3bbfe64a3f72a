//! The event queue: hierarchical timing wheels on integer time, FIFO among equal times.
//!
//! Events at equal times pop in insertion order, so the order of a run is total and
//! reproducible (the contract's "ties broken by insertion order"). Events are small `Copy`
//! values stored by value: no allocation per event.
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

/// A ring of unsorted buckets with a bitmap of the non-empty ones, and a few spare
/// allocations: a bucket that empties gives its buffer back, one that starts filling takes
/// one, so the waves of a herd reuse the same large buffers instead of regrowing them.
#[derive(Debug)]
struct Wheel {
    buckets: Vec<Vec<Event>>,
    occupied: Vec<u64>,
    spares: Vec<Vec<Event>>,
    /// Largest buffer (in events) a bucket keeps for itself once emptied.
    keep: usize,
}

/// Spare large buffers a wheel keeps (bounded memory: a few herd waves' worth).
const SPARES: usize = 16;
/// Largest buffer (in events) kept as a spare: 1.5 MB.
const SPARE_LIMIT: usize = 1 << 16;
/// Largest buffer (in events) a fine bucket keeps for itself once emptied: fine buckets are
/// reused every 67 ms. A coarse slot comes back once per 18-minute epoch, so its buckets keep
/// none: 16 384 of them keeping a few kilobytes each grew a steady open workload by 60 MB
/// over its first 18 minutes.
const KEEP_BUCKET: usize = 256;

impl Wheel {
    fn new(bits: u32, keep: usize) -> Self {
        Wheel {
            buckets: (0..1usize << bits).map(|_| Vec::new()).collect(),
            occupied: vec![0; (1usize << bits) / 64],
            spares: Vec::new(),
            keep,
        }
    }

    #[inline]
    fn push(&mut self, i: usize, event: Event) {
        let bucket = &mut self.buckets[i];
        if bucket.capacity() == 0
            && let Some(spare) = self.spares.pop()
        {
            *bucket = spare;
        }
        bucket.push(event);
        self.occupied[i >> 6] |= 1 << (i & 63);
    }

    /// The first non-empty bucket at or after `from`, if any.
    fn next(&self, from: usize) -> Option<usize> {
        let mut w = from >> 6;
        if w >= self.occupied.len() {
            return None;
        }
        let mut bits = self.occupied[w] & (!0u64 << (from & 63));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w == self.occupied.len() {
                return None;
            }
            bits = self.occupied[w];
        }
    }

    /// Moves bucket `i`'s events (in insertion order) into `out`, which is empty, without
    /// copying them: the two trade buffers, and the bucket keeps `out`'s only when small
    /// (else it goes to the spares or the allocator), so a bucket never holds on to a large
    /// buffer it does not need.
    #[inline]
    fn take(&mut self, i: usize, out: &mut Vec<Event>) {
        debug_assert!(out.is_empty());
        self.occupied[i >> 6] &= !(1 << (i & 63));
        std::mem::swap(out, &mut self.buckets[i]);
        if self.buckets[i].capacity() > self.keep {
            let large = std::mem::take(&mut self.buckets[i]);
            self.give_back(i, large);
        }
    }

    /// Takes bucket `i`'s events out (in insertion order) without copying them.
    fn take_all(&mut self, i: usize) -> Vec<Event> {
        self.occupied[i >> 6] &= !(1 << (i & 63));
        std::mem::take(&mut self.buckets[i])
    }

    /// Empties every bucket (only the occupied ones are visited), keeping the buffers a
    /// bucket keeps once emptied and the spares.
    fn clear(&mut self) {
        for w in 0..self.occupied.len() {
            while self.occupied[w] != 0 {
                let i = w * 64 + self.occupied[w].trailing_zeros() as usize;
                let events = self.take_all(i);
                self.give_back(i, events);
            }
        }
    }

    /// A wheel of no buckets, holding no memory: only to be dropped.
    fn hollow() -> Self {
        Wheel {
            buckets: Vec::new(),
            occupied: Vec::new(),
            spares: Vec::new(),
            keep: 0,
        }
    }

    /// Gives an emptied buffer back: a small one to bucket `i`, a large one to the spares
    /// (bounded in count and in size: a million-event herd wave must not be kept sixteen
    /// times over) or to the allocator.
    fn give_back(&mut self, i: usize, mut buffer: Vec<Event>) {
        buffer.clear();
        if buffer.capacity() <= self.keep {
            self.buckets[i] = buffer;
        } else if self.spares.len() < SPARES && buffer.capacity() <= SPARE_LIMIT {
            self.spares.push(buffer);
        }
    }
}

/// Min-priority queue of events by time; FIFO among equal times.
///
/// Hierarchical timing wheels (R. Brown's calendar queue, with Varghese and Lauck's
/// hierarchy): the 67 ms *coarse slot* being simulated is split into 1 024 *fine buckets* of
/// 65.5 µs; the 18-minute *epoch* around it into 16 384 coarse slots; events beyond the
/// epoch wait in a binary heap. A push is an index and an append. A fine bucket is sorted by
/// time, stably, when the simulation reaches it (a few events each in a herd); a coarse slot
/// is spread over the fine buckets when the simulation reaches it, an epoch's events are
/// pulled from the heap when it begins. Every move keeps insertion order, and a bucket that
/// receives moved events is still empty then (before its range was reached, its events
/// went to the level above), so events of equal time pop in insertion order. Bitmaps find
/// the next non-empty bucket or slot, so empty stretches of time cost nothing.
///
/// Invariant: every pushed event is no earlier than the last popped one (the engine only
/// schedules at `now + d`). Pushing into the past is a caller bug; it panics in debug builds.
#[derive(Debug)]
pub struct EventQueue {
    /// The sorted events of the fine bucket being consumed; `head` is the next to pop.
    current: Vec<Event>,
    head: usize,
    /// Absolute number (`time >> FINE_SHIFT`) of the fine bucket being consumed.
    fine_at: u64,
    /// Fine buckets of the coarse slot being consumed.
    fine: Wheel,
    /// Coarse slots of the epoch being consumed.
    coarse: Wheel,
    /// Events beyond the epoch, by (time, insertion number).
    far: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, FarEvent)>>,
    far_seq: u64,
    len: usize,
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
            fine_at: 0,
            fine: Wheel::new(FINE_BITS, KEEP_BUCKET),
            coarse: Wheel::new(COARSE_BITS, 0),
            far: std::collections::BinaryHeap::new(),
            far_seq: 0,
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
        self.fine.spares = Vec::new();
        self.coarse.spares = Vec::new();
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
        self.far_seq = 0;
        self.len = 0;
        self.last = 0;
        SPARE_QUEUE.with(|spare| *spare.borrow_mut() = Some(self));
    }

    /// A queue with no buckets and no memory, to stand in for one moved out before its
    /// owner is dropped. Only to be dropped: a push panics.
    pub(crate) fn hollow() -> Self {
        EventQueue {
            current: Vec::new(),
            head: 0,
            fine_at: 0,
            fine: Wheel::hollow(),
            coarse: Wheel::hollow(),
            far: std::collections::BinaryHeap::new(),
            far_seq: 0,
            len: 0,
            last: 0,
        }
    }

    /// Schedules `event`; it pops after every event with a smaller time, and after every
    /// event with the same time pushed before it. O(1), except into the bucket being
    /// consumed (a sorted insert) and beyond the epoch (a heap push).
    #[inline]
    pub fn push(&mut self, event: Event) {
        debug_assert!(
            event.time.0 >= self.last,
            "an event was scheduled in the past"
        );
        self.len += 1;
        let t = event.time.0;
        let fine = t >> FINE_SHIFT;
        if fine == self.fine_at {
            self.push_current(event);
        } else if t >> COARSE_SHIFT == self.fine_at >> FINE_BITS {
            self.fine.push((fine & FINE_MASK) as usize, event);
        } else if t >> EPOCH_SHIFT == self.fine_at >> (FINE_BITS + COARSE_BITS) {
            self.coarse
                .push(((t >> COARSE_SHIFT) & COARSE_MASK) as usize, event);
        } else {
            self.far_seq += 1;
            self.far
                .push(std::cmp::Reverse((t, self.far_seq, FarEvent(event))));
        }
    }

    /// Into the bucket being consumed: after every pending event of no later time.
    #[inline]
    fn push_current(&mut self, event: Event) {
        if self.head > KEEP_CAPACITY && self.head * 2 >= self.current.len() {
            // A cascade at one instant (zero-delay work) keeps appending here while the
            // consumed prefix is dead: drop it (amortised O(1)).
            self.current.drain(..self.head);
            self.head = 0;
        }
        match self.current.last() {
            Some(e) if e.time > event.time => {
                let pending = &self.current[self.head..];
                let at = self.head + pending.partition_point(|e| e.time <= event.time);
                self.current.insert(at, event);
            }
            _ => self.current.push(event),
        }
    }

    /// Removes and returns the earliest event. Amortised O(1) plus the sort of small
    /// buckets.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let e = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        self.last = e.time.0;
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
        loop {
            let slot = self.fine_at >> FINE_BITS;
            let from = (self.fine_at & FINE_MASK) as usize + 1;
            if let Some(i) = self.fine.next(from) {
                self.fine_at = (slot << FINE_BITS) | i as u64;
                self.fine.take(i, &mut self.current);
                sort_by_time(&mut self.current);
                return true;
            }
            // The coarse slot is done: spread the next non-empty one over the fine buckets.
            let epoch = slot >> COARSE_BITS;
            let from = ((slot & COARSE_MASK) + 1) as usize;
            if let Some(j) = self.coarse.next(from) {
                let slot = (epoch << COARSE_BITS) | j as u64;
                self.spread(j);
                self.fine_at = slot << FINE_BITS;
                if let Some(i) = self.fine.next(0).filter(|&i| i == 0) {
                    self.fine.take(i, &mut self.current);
                    sort_by_time(&mut self.current);
                    return true;
                }
                continue;
            }
            // The epoch is done: pull the next one's events from the heap.
            let Some(std::cmp::Reverse((t, _, _))) = self.far.peek() else {
                return false;
            };
            let epoch = t >> EPOCH_SHIFT;
            while let Some(std::cmp::Reverse((t, _, _))) = self.far.peek() {
                if t >> EPOCH_SHIFT != epoch {
                    break;
                }
                let std::cmp::Reverse((t, _, FarEvent(e))) = self.far.pop().expect("peeked");
                self.coarse
                    .push(((t >> COARSE_SHIFT) & COARSE_MASK) as usize, e);
            }
            let first = self.coarse.next(0).expect("an event was moved in") as u64;
            let slot = (epoch << COARSE_BITS) | first;
            self.spread(first as usize);
            self.fine_at = slot << FINE_BITS;
            if let Some(0) = self.fine.next(0) {
                self.fine.take(0, &mut self.current);
                sort_by_time(&mut self.current);
                return true;
            }
        }
    }

    /// Spreads coarse slot `j`'s events over the fine buckets, in insertion order.
    fn spread(&mut self, j: usize) {
        let events = self.coarse.take_all(j);
        for e in &events {
            let i = ((e.time.0 >> FINE_SHIFT) & FINE_MASK) as usize;
            self.fine.push(i, *e);
        }
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

/// Sorts the events of one fine bucket by time, keeping insertion order among equal times:
/// insertion sort for the few events of a spread-out herd; for a crowded bucket, a stable
/// two-pass counting sort on the 16 low bits (all its times share the bits above, and
/// `FINE_SHIFT` is 16), which costs a few operations per event whatever their order.
fn sort_by_time(events: &mut Vec<Event>) {
    const _: () = assert!(
        FINE_SHIFT == 16,
        "the radix passes cover exactly the bucket's bits"
    );
    let n = events.len();
    if n <= 48 {
        for i in 1..n {
            let e = events[i];
            let mut j = i;
            while j > 0 && events[j - 1].time > e.time {
                events[j] = events[j - 1];
                j -= 1;
            }
            events[j] = e;
        }
        return;
    }
    if events.windows(2).all(|w| w[0].time <= w[1].time) {
        return;
    }
    let mut tmp = Vec::with_capacity(n);
    for shift in [0u32, 8] {
        let digit = |e: &Event| ((e.time.0 >> shift) & 0xFF) as usize;
        let mut counts = [0usize; 256];
        for e in events.iter() {
            counts[digit(e)] += 1;
        }
        let mut start = 0;
        for c in counts.iter_mut() {
            let k = *c;
            *c = start;
            start += k;
        }
        tmp.clear();
        tmp.resize(n, events[0]);
        for e in events.iter() {
            let d = digit(e);
            tmp[counts[d]] = *e;
            counts[d] += 1;
        }
        std::mem::swap(events, &mut tmp);
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

    /// A recycled queue comes back empty and orders like a new one, whatever the last run
    /// left in it (events in every level, a half-consumed bucket).
    #[test]
    fn a_recycled_queue_starts_empty_and_keeps_order() {
        let mut q = EventQueue::reuse_or_new(0);
        for (i, t) in [5u64, 5, 1 << 20, 1 << 30, 1 << 45, 3]
            .into_iter()
            .enumerate()
        {
            q.push(Event::new(EventKind::Send, SimTime(t), i as u32, 0));
        }
        assert_eq!(q.pop().map(|e| e.id), Some(5));
        q.recycle();
        let mut q = EventQueue::reuse_or_new(16);
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
        for (i, t) in [7u64, 2, 7, 1 << 41, 2].into_iter().enumerate() {
            q.push(Event::new(EventKind::Send, SimTime(t), i as u32, 0));
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.id).collect();
        assert_eq!(order, vec![1, 4, 0, 2, 3]);
    }

    /// Replays `ops` on a queue and on a sorted list: `Some(delay)` pushes an event `delay`
    /// after the last pop, `None` pops (both must give the same event); then drains both.
    fn check_against_reference(
        ops: impl IntoIterator<Item = Option<u64>>,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut q = EventQueue::default();
        let mut now = 0u64;
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut seq = 0u64;
        for op in ops {
            match op {
                None => {
                    let got = q.pop().map(|e| (e.time.0, e.id as u64));
                    reference.sort();
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
                Some(delay) => {
                    let t = now + delay;
                    q.push(Event::new(EventKind::Send, SimTime(t), seq as u32, 0));
                    reference.push((t, seq));
                    seq += 1;
                }
            }
            proptest::prop_assert_eq!(q.len(), reference.len());
        }
        reference.sort();
        let rest: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time.0, e.id as u64))
            .collect();
        proptest::prop_assert_eq!(rest, reference);
        Ok(())
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

        /// Delays from nanoseconds to minutes: events cross the far level, the window moves
        /// and jumps, and still come out in (time, insertion) order.
        #[test]
        fn far_events_keep_time_and_insertion_order(ops in proptest::collection::vec((0u64..4, 0u64..1_000, proptest::bool::ANY), 1..600)) {
            // 0 .. 1 µs, 1 ms, 1 s, 1000 s ahead (some land on equal times).
            let scales = [1, 1_000, 1_000_000, 1_000_000_000];
            check_against_reference(ops.into_iter().map(|(scale, delay, pop)| (!pop).then(|| delay * scales[scale as usize])))?;
        }

        /// Delays on and around the levels' boundaries (a fine bucket, a coarse slot, two
        /// slots, an epoch) keep time and insertion order.
        #[test]
        fn boundaries_keep_time_and_insertion_order(ops in proptest::collection::vec((0u64..5, 0u64..4, 0u64..3, proptest::bool::ANY), 1..600)) {
            let units = [1u64 << FINE_SHIFT, 1 << COARSE_SHIFT, 2 << COARSE_SHIFT, 1 << EPOCH_SHIFT, 1];
            // One before, on, or one after a multiple of the unit (never in the past).
            check_against_reference(ops.into_iter().map(|(level, times, nudge, pop)| (!pop).then(|| (units[level as usize] * times + nudge).saturating_sub(1))))?;
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
