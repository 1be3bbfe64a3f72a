//! The event queue: a binary min-heap keyed by `(time, seq)`.
//!
//! `seq` is a counter incremented on every push, so events at equal times pop in insertion
//! (FIFO) order and the order of a run is total and reproducible. Events are small `Copy`
//! values stored by value: no allocation per event. Push and pop are O(log N).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::model::outcome::Status;
use crate::time::SimTime;

/// What happens when an event fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// A client begins its next logical request.
    Start,
    /// A client sends the next attempt of its current request (a retry or a fallback call).
    Send,
    /// An attempt reaches a server (`Event::fallback` says which).
    Arrive,
    /// A server finishes serving an attempt; `status` is what it will answer.
    Done,
    /// A response (`status`, `hint_us`) reaches the client.
    Response,
    /// The attempt's timer expired; `status` is `Timeout` or `Unreachable`.
    Timeout,
    /// A breaker's open period ends (`client` is the breaker index).
    HalfOpen,
}

/// One scheduled event: 32 bytes, `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it fires.
    pub time: SimTime,
    seq: u64,
    /// The client (or breaker index for `HalfOpen`).
    pub client: u32,
    /// The attempt serial it belongs to; stale events (an older serial) are ignored.
    pub serial: u32,
    /// A Retry-After hint in microseconds carried by a response (0 = none).
    pub hint_us: u32,
    /// What fires.
    pub kind: EventKind,
    /// Status carried by `Done`, `Response` and `Timeout`.
    pub status: Status,
    /// Whether the attempt concerns the fallback server.
    pub fallback: bool,
}

impl Event {
    /// An event with no status or hint payload.
    pub fn new(kind: EventKind, time: SimTime, client: u32, serial: u32) -> Self {
        Event {
            time,
            seq: 0,
            client,
            serial,
            hint_us: 0,
            kind,
            status: Status::Ok,
            fallback: false,
        }
    }

    /// Sets the status payload.
    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }

    /// Sets the hint payload.
    pub fn with_hint_us(mut self, hint_us: u32) -> Self {
        self.hint_us = hint_us;
        self
    }

    /// Marks the event as concerning the fallback server.
    pub fn on_fallback(mut self, fallback: bool) -> Self {
        self.fallback = fallback;
        self
    }
}

impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Min-heap of events; FIFO among equal times.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `capacity` events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
        }
    }

    /// Schedules `event`; it pops after every event with a smaller time, and after every
    /// event with the same time pushed before it. O(log N).
    #[inline]
    pub fn push(&mut self, mut event: Event) {
        event.seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(event);
    }

    /// Removes and returns the earliest event. O(log N).
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// The time of the earliest event, without removing it.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Number of scheduled events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        assert_eq!(q.pop().unwrap().client, 999);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.client).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn events_are_small() {
        assert!(std::mem::size_of::<Event>() <= 32);
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
            let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop()).map(|e| (e.time.0, e.client)).collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
