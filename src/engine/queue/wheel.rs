//! The timing wheels' level: a ring of buckets of [`Event`]s with a bitmap of the occupied
//! ones, and the spare buffers that let a herd's waves reuse memory instead of regrowing it.

use super::Event;

/// A ring of `N` unsorted buckets with a bitmap (`W` words) of the non-empty ones, and a
/// few spare allocations: a bucket that empties gives its buffer back, one that starts
/// filling takes one, so the waves of a herd reuse the same large buffers instead of
/// regrowing them.
///
/// The ring and its bitmap are arrays of their constant size, not vectors: the queue's
/// indices are masked to the wheel's bits, so every bounds check of a push, a take and a
/// spread is decided when compiling. Measured with callgrind (with `EventQueue::advance`
/// sorting at one place): six instructions of each push into a wheel; the quickstart herd
/// 527.4 M -> 518.3 M instructions, Brooker at 5 replications 168.3 M -> 164.5 M.
#[derive(Debug)]
pub(super) struct Wheel<const N: usize, const W: usize> {
    buckets: Box<[Vec<Event>; N]>,
    occupied: Box<[u64; W]>,
    spares: Vec<Vec<Event>>,
    /// Largest buffer (in events) a bucket keeps for itself once emptied.
    keep: usize,
}

/// Spare large buffers a wheel keeps (bounded memory: a few herd waves' worth).
const SPARES: usize = 16;
/// Largest buffer (in events) kept as a spare: 1.5 MB.
pub(super) const SPARE_LIMIT: usize = 1 << 16;
/// Largest buffer (in events) a fine bucket keeps for itself once emptied: fine buckets are
/// reused every 67 ms. A coarse slot comes back once per 18-minute epoch, so its buckets keep
/// none: 16 384 of them keeping a few kilobytes each grew a steady open workload by 60 MB
/// over its first 18 minutes.
pub(super) const KEEP_BUCKET: usize = 256;

impl<const N: usize, const W: usize> Wheel<N, W> {
    /// `W` bitmap words cover exactly the `N` buckets.
    const SIZES_AGREE: () = assert!(N == 64 * W && N.is_power_of_two());

    pub(super) fn new(keep: usize) -> Self {
        let () = Self::SIZES_AGREE;
        let buckets: Vec<Vec<Event>> = (0..N).map(|_| Vec::new()).collect();
        Wheel {
            buckets: buckets
                .into_boxed_slice()
                .try_into()
                .expect("N buckets were made"),
            occupied: Box::new([0; W]),
            spares: Vec::new(),
            keep,
        }
    }

    #[inline]
    pub(super) fn push(&mut self, i: usize, event: Event) {
        append(
            &mut self.occupied,
            &mut self.buckets,
            &mut self.spares,
            i,
            event,
        );
    }

    /// [`Wheel::push`] of every event of `events`, each into bucket `index(e)`, which must be
    /// below `N` (panics otherwise).
    ///
    /// For spreading a coarse slot over the fine buckets: nothing is reloaded from the wheel
    /// per event (a growing bucket is a call that does not take the wheel). Measured with
    /// callgrind: 36 instructions per event through `push`, 24 here; the quickstart herd
    /// 531.9 M -> 527.4 M instructions, Brooker at 5 replications 168.7 M -> 168.3 M.
    #[inline]
    pub(super) fn push_all(&mut self, events: &[Event], index: impl Fn(&Event) -> usize) {
        let Wheel {
            buckets,
            occupied,
            spares,
            ..
        } = self;
        for e in events {
            append(occupied, buckets, spares, index(e), *e);
        }
    }

    /// The first non-empty bucket at or after `from`, if any.
    pub(super) fn next(&self, from: usize) -> Option<usize> {
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
    pub(super) fn take(&mut self, i: usize, out: &mut Vec<Event>) {
        debug_assert!(out.is_empty());
        self.occupied[i >> 6] &= !(1 << (i & 63));
        std::mem::swap(out, &mut self.buckets[i]);
        if self.buckets[i].capacity() > self.keep {
            let large = std::mem::take(&mut self.buckets[i]);
            self.give_back(i, large);
        }
    }

    /// Takes bucket `i`'s events out (in insertion order) without copying them.
    pub(super) fn take_all(&mut self, i: usize) -> Vec<Event> {
        self.occupied[i >> 6] &= !(1 << (i & 63));
        std::mem::take(&mut self.buckets[i])
    }

    /// Empties every bucket (only the occupied ones are visited), keeping the small buffers
    /// a bucket keeps once emptied but not the spares: a queue kept for the next run must
    /// not hold on to a herd's wave buffers (they raised `million.toml`'s peak from 240 MB
    /// to 282 MB).
    pub(super) fn clear(&mut self) {
        for w in 0..self.occupied.len() {
            while self.occupied[w] != 0 {
                let i = w * 64 + self.occupied[w].trailing_zeros() as usize;
                let events = self.take_all(i);
                self.give_back(i, events);
            }
        }
        self.spares = Vec::new();
    }

    /// Gives an emptied buffer back: a small one to bucket `i`, a large one to the spares
    /// (bounded in count and in size: a million-event herd wave must not be kept sixteen
    /// times over) or to the allocator.
    pub(super) fn give_back(&mut self, i: usize, mut buffer: Vec<Event>) {
        buffer.clear();
        if buffer.capacity() <= self.keep {
            self.buckets[i] = buffer;
        } else if self.spares.len() < SPARES && buffer.capacity() <= SPARE_LIMIT {
            self.spares.push(buffer);
        }
    }
}

/// Appends `event` to bucket `i` of a wheel's `buckets` and marks it `occupied`: the body
/// of [`Wheel::push`] and [`Wheel::push_all`].
#[inline(always)]
fn append<const N: usize, const W: usize>(
    occupied: &mut [u64; W],
    buckets: &mut [Vec<Event>; N],
    spares: &mut Vec<Vec<Event>>,
    i: usize,
    event: Event,
) {
    // The bit first, so that a push that may allocate is the last thing done: out of line
    // and in tail position, it leaves the queue's push, which calls nothing else on its
    // common path, no register to save around a call.
    occupied[i >> 6] |= 1 << (i & 63);
    let bucket = &mut buckets[i];
    if bucket.len() < bucket.capacity() {
        bucket.push(event);
        // A bucket fills one cache line every two events, and with a thousand buckets
        // filling at once the hardware cannot guess which line comes next: at a million
        // clients the next push then waited for its line from memory. Asking for the line
        // after this one now gives it the time until that bucket's next push: 10^6 clients
        // (quickstart's herd, one strategy) 2.17 -> 1.80 s, 10^4 1.41 -> 1.35 s (medians of
        // three and four alternated runs); spreading a coarse slot likewise, 1.84 -> 1.79 s.
        crate::engine::prefetch(bucket.spare_capacity_mut(), 2);
    } else {
        push_growing(bucket, spares, event);
    }
}

/// Pushes `event` into a full `bucket`: one with no buffer takes one of `spares`, else it
/// grows.
#[cold]
#[inline(never)]
fn push_growing(bucket: &mut Vec<Event>, spares: &mut Vec<Vec<Event>>, event: Event) {
    if bucket.capacity() == 0
        && let Some(spare) = spares.pop()
    {
        *bucket = spare;
    }
    bucket.push(event);
}
