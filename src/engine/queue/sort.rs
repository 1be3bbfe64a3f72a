//! The sort of a fine bucket when the simulation reaches it: by (time, insertion number),
//! with the cheapest method for its size (insertion, one counting pass, or two radix passes).

use super::{Event, FINE_SHIFT, SPARE_LIMIT};

/// Sorts the events of one fine bucket by (time, insertion number). All its times share the
/// bits above the low 16 (`FINE_SHIFT` is 16), so counting sorts on those 16 bits order it:
///
/// - up to [`SMALL_BUCKET`] events (most buckets of a herd), insertion sort;
/// - up to [`MEDIUM_BUCKET`] events, one stable counting pass on the top `b` bits of the
///   bucket's 65.5 µs, `2^b` the first power of two at or above the count, then an insertion
///   pass: each event is by then among the few of its sub-range, so the insertion pass moves
///   little. Insertion sort alone moved events about n/4 places each (1.7 M moves of the
///   quickstart herd's 1 M events), and the two radix passes cost over 2 000 instructions
///   per bucket in their 256 counters. Measured with callgrind: the quickstart herd
///   545.3 M -> 531.9 M instructions, Brooker at 5 replications 169.1 M -> 168.7 M. A pass that would leave more than
///   [`CROWDED_RANGE`] events in one sub-range (times bunched together) goes to the radix
///   passes instead, so no bucket sorts in quadratic time;
/// - above, a stable two-pass counting sort on the 16 low bits, a few operations per event
///   whatever their order,
///
/// each followed by an insertion pass for the rare equal times whose events were not pushed
/// in number order (a late timer). `scratch` is the queue's buffer for the counting passes,
/// kept between buckets instead of allocated and freed by each (a malloc and a free, 460
/// instructions, per radix-sorted bucket).
pub(super) fn sort_by_time(events: &mut [Event], scratch: &mut Vec<Event>) {
    const _: () = assert!(
        FINE_SHIFT == 16,
        "the counting passes cover exactly the bucket's bits"
    );
    let n = events.len();
    if n <= SMALL_BUCKET {
        return insertion_sort(events);
    }
    if n <= MEDIUM_BUCKET && spread_by_top_bits(events, scratch) {
        return insertion_sort(events);
    }
    if events.windows(2).all(|w| w[0].key() <= w[1].key()) {
        return;
    }
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
        scratch.clear();
        scratch.extend_from_slice(events);
        for e in scratch.iter() {
            let d = digit(e);
            events[counts[d]] = *e;
            counts[d] += 1;
        }
    }
    if scratch.capacity() > SPARE_LIMIT {
        *scratch = Vec::new();
    }
    // Sorted by time, stably: only equal times can still be out of number order.
    insertion_sort(events);
}

/// Buckets of at most this many events are sorted by insertion alone.
const SMALL_BUCKET: usize = 12;
/// Buckets of at most this many events are spread over sub-ranges by one counting pass.
const MEDIUM_BUCKET: usize = 256;
/// The most events one sub-range of the single counting pass may receive.
const CROWDED_RANGE: u16 = 16;

/// Stably orders `events` (a bucket of at most [`MEDIUM_BUCKET`]) by the top `b` bits of
/// their time's 16 low bits, `2^b >= events.len()`, and returns true; or leaves them as they
/// are and returns false when some sub-range holds more than [`CROWDED_RANGE`] events.
fn spread_by_top_bits(events: &mut [Event], scratch: &mut Vec<Event>) -> bool {
    let n = events.len();
    debug_assert!((2..=MEDIUM_BUCKET).contains(&n));
    let bits = usize::BITS - (n - 1).leading_zeros();
    let shift = 16 - bits;
    let digit = |e: &Event| ((e.time.0 & 0xFFFF) >> shift) as usize;
    let mut counts = [0u16; MEDIUM_BUCKET];
    let counts = &mut counts[..1 << bits];
    for e in events.iter() {
        counts[digit(e)] += 1;
    }
    let mut start = 0;
    let mut most = 0;
    for c in counts.iter_mut() {
        let k = *c;
        most = most.max(k);
        *c = start;
        start += k;
    }
    if most > CROWDED_RANGE {
        return false;
    }
    scratch.clear();
    scratch.extend_from_slice(events);
    for e in scratch.iter() {
        let d = digit(e);
        events[counts[d] as usize] = *e;
        counts[d] += 1;
    }
    true
}

/// Insertion sort by (time, insertion number): linear on a sorted or nearly sorted slice.
///
/// An event already after its predecessor stays where it is without being copied out and
/// back (32 bytes each way, through the stack): most are, after a counting pass, and about
/// half of those of a small bucket.
fn insertion_sort(events: &mut [Event]) {
    for i in 1..events.len() {
        if events[i - 1].key() <= events[i].key() {
            continue;
        }
        let e = events[i];
        let mut j = i;
        while j > 0 && events[j - 1].key() > e.key() {
            events[j] = events[j - 1];
            j -= 1;
        }
        events[j] = e;
    }
}
