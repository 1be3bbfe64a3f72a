//! The queue's order (time, then insertion) checked against a sorted list, on delays
//! across every level, and its memory bounds.

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

/// An event pushed late with a number reserved earlier pops among the events of its time as
/// if it had been pushed when the number was reserved, in every level of the queue (the
/// bucket being consumed, a fine bucket, a coarse slot, the far heap).
#[test]
fn a_reserved_number_orders_a_late_push_among_equal_times() {
    for t in [3u64, 1 << 20, 1 << 30, 1 << 45] {
        let mut q = EventQueue::default();
        q.push(Event::new(EventKind::Send, SimTime(t), 0, 0));
        let reserved = q.reserve();
        q.push(Event::new(EventKind::Send, SimTime(t), 2, 0));
        q.push(Event::new(EventKind::Send, SimTime(t + 1), 3, 0));
        let late = Event::new(EventKind::Timeout, SimTime(t), 1, 0);
        let seq = q.reserved_from_low_bits(reserved as u32);
        assert_eq!(seq, reserved);
        q.push_as_of(late, seq);
        q.push(Event::new(EventKind::Send, SimTime(t), 4, 0));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.id).collect();
        assert_eq!(order, [0, 1, 2, 4, 3], "time {t}");
    }
}

/// A crowded bucket (sorted by counting sort) still puts a late push with an early number
/// before the events of its time pushed after the number was reserved.
#[test]
fn a_reserved_number_orders_a_late_push_in_a_crowded_bucket() {
    let mut q = EventQueue::default();
    let t = 1u64 << 20;
    let reserved = q.reserve();
    for id in 1..200 {
        q.push(Event::new(
            EventKind::Send,
            SimTime(t + (id as u64 % 3)),
            id,
            0,
        ));
    }
    let late = Event::new(EventKind::Timeout, SimTime(t), 0, 0);
    q.push_as_of(late, reserved);
    let first: Vec<u32> = std::iter::from_fn(|| q.pop())
        .take(3)
        .map(|e| e.id)
        .collect();
    assert_eq!(first, [0, 3, 6]);
}

#[test]
fn reserved_numbers_are_recovered_from_their_low_bits() {
    let mut q = EventQueue {
        next_seq: (7 << 32) + 5,
        ..EventQueue::default()
    };
    let a = q.reserve();
    q.next_seq += 1 << 31;
    assert_eq!(q.reserved_from_low_bits(a as u32), a);
}

proptest::proptest! {
    /// Every path of `sort_by_time` (insertion, one counting pass, its fallback on a crowded
    /// sub-range, the two radix passes) sorts a bucket by (time, insertion number): times
    /// spread over the bucket or bunched in a few nanoseconds, numbers in any order.
    #[test]
    fn buckets_sort_by_time_then_number(
        keys in proptest::collection::vec((0u64..1 << FINE_SHIFT, 0u64..1_000), 0..600),
        bunched in proptest::bool::ANY,
    ) {
        let base = 7u64 << FINE_SHIFT;
        let mut events: Vec<Event> = keys
            .iter()
            .map(|&(t, seq)| {
                let t = if bunched { t % 8 } else { t };
                Event { seq, ..Event::new(EventKind::Send, SimTime(base + t), 0, 0) }
            })
            .collect();
        let mut expected: Vec<(u64, u64)> = events.iter().map(|e| e.key()).collect();
        expected.sort();
        let mut scratch = Vec::new();
        sort_by_time(&mut events, &mut scratch);
        let got: Vec<(u64, u64)> = events.iter().map(|e| e.key()).collect();
        proptest::prop_assert_eq!(got, expected);
    }
}
