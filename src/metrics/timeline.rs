//! A service's time series during a run: one [`Bucket`] of counters and gauges per
//! `metrics.bucket` of simulated time, filled by the engine through a [`Timeline`], which
//! carries the gauges (slots held, queue, open breakers, slots) across buckets with no event
//! of their own and keeps time half-open at bucket edges. Series buffers are reused by the
//! thread's next runs ([`give_back`]).

use super::PopulationBucket;
use crate::time::{SimDuration, SimTime};
use std::cell::RefCell;
use std::thread::LocalKey;

/// Counts for one time bucket `[t, t + bucket)` of one service.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Attempts reaching the service (= accepted + rejected).
    pub arrivals: u32,
    /// Arrivals that took a slot or a queue place.
    pub accepted: u32,
    /// Arrivals refused at once (400, 409, 429, 503).
    pub rejected: u32,
    /// Requests that released their slot (service and downstream calls finished).
    pub completed: u32,
    /// Largest number of slots held during the bucket.
    pub in_service: u32,
    /// Largest queue length during the bucket.
    pub queued: u32,
    /// Retry attempts sent to the service (not first attempts).
    pub retries: u32,
    /// Retries to the service refused by a budget.
    pub budget_refused: u32,
    /// Open breakers guarding calls to the service, at the bucket's end.
    pub breakers_open: u32,
    /// Attempts reaching the fallback server (the entry service's block only).
    pub fallback_arrivals: u32,
    /// Queued requests dropped by `queue_timeout` (answered 503, never served).
    pub shed: u32,
    /// First attempts of logical requests to the service.
    pub first_attempts: u32,
    /// Logical requests to the service that succeeded.
    pub succeeded: u32,
    /// Logical requests to the service that gave up.
    pub gave_up: u32,
    /// Attempts to the service abandoned by their caller's timeout.
    pub timeouts: u32,
    /// Slots at the bucket's end.
    pub concurrency: u32,
}

/// The number of counters in a [`Bucket`], in [`Bucket::fields`] order.
pub const BUCKET_FIELDS: usize = 16;

impl Bucket {
    /// Every counter, in declaration order (the `timeseries.csv` column order).
    pub fn fields(&self) -> [u32; BUCKET_FIELDS] {
        [
            self.arrivals,
            self.accepted,
            self.rejected,
            self.completed,
            self.in_service,
            self.queued,
            self.retries,
            self.budget_refused,
            self.breakers_open,
            self.fallback_arrivals,
            self.shed,
            self.first_attempts,
            self.succeeded,
            self.gave_up,
            self.timeouts,
            self.concurrency,
        ]
    }
}

/// Per-bucket counters of one service, with gauges carried across empty buckets.
#[derive(Debug, Clone)]
pub struct Timeline {
    width: u64,
    buckets: Vec<Bucket>,
    /// The end of the last bucket; 0 while there is none, so that the first time met
    /// creates it (the one test `at` and `occupancy` make per event).
    current_end: u64,
    in_service: u32,
    queued: u32,
    breakers_open: u32,
    concurrency: u32,
    /// The start of the last bucket (`u64::MAX` before the first): changes at that very
    /// instant do not raise its gauges from the values carried in (see `occupancy`).
    carried_start: u64,
    /// The largest `in_service` and `queued` reached by an increase at `carried_start`.
    start_peaks: (u32, u32),
}

impl Timeline {
    /// An empty timeline of `width`-wide buckets (width > 0) for a service that starts with
    /// `concurrency` slots.
    pub fn new(width: SimDuration, concurrency: u32) -> Self {
        Timeline {
            width: width.as_nanos().max(1),
            buckets: spare_series(),
            current_end: 0,
            in_service: 0,
            queued: 0,
            breakers_open: 0,
            concurrency,
            carried_start: u64::MAX,
            start_peaks: (0, 0),
        }
    }

    /// The bucket containing `t`, creating it (and any empty ones before it) as needed.
    /// Amortised O(1): events arrive in time order, so this is almost always the last bucket.
    #[inline]
    pub fn at(&mut self, t: SimTime) -> &mut Bucket {
        if t.0 >= self.current_end {
            self.extend_to(t);
        }
        self.buckets.last_mut().expect("extend_to leaves a bucket")
    }

    #[cold]
    fn extend_to(&mut self, t: SimTime) {
        let index = (t.0 / self.width) as usize;
        // One `resize` rather than a push per bucket: a sweep's short runs spend more of
        // their time filling idle buckets (Brooker's experiment: ~970 buckets of 10 ms for
        // ~3 000 events per run) than a push loop's capacity checks should cost.
        let carried = Bucket {
            in_service: self.in_service,
            queued: self.queued,
            breakers_open: self.breakers_open,
            concurrency: self.concurrency,
            ..Bucket::default()
        };
        if self.buckets.len() <= index {
            self.buckets.resize(index + 1, carried);
        }
        self.current_end = (index as u64 + 1) * self.width;
        self.carried_start = index as u64 * self.width;
        self.start_peaks = (0, 0);
    }

    /// Records the service's occupancy after a change at `t`.
    ///
    /// A bucket's `in_service` and `queued` are the largest values reached during it, time
    /// being half-open like every interval here: a value carried in from before the bucket
    /// counts only if it is still held once the bucket's first instant is over (a service
    /// busy over [50 ms, 100 ms) is not busy in the bucket [100 ms, 200 ms)). At that first
    /// instant a value counts when an increase reaches it, even for no time (a request
    /// queued at 100 ms that a slot freed at 100 ms takes at once makes `queued` 1), as it
    /// would later in the bucket; a value passed on the way down does not (two slots freed
    /// at 100 ms, one event each, leave 0, not the 1 between, which no request held), so
    /// the gauges do not depend on the order of events at one instant.
    #[inline]
    pub fn occupancy(&mut self, t: SimTime, in_service: u32, queued: u32) {
        // Extend first: the empty buckets before `t` held the old values throughout.
        if t.0 >= self.current_end {
            self.extend_to(t);
        }
        // At the bucket's first instant: the value held now, or a larger one an increase
        // reached at this instant; later in the bucket, the maxima rise as usual.
        let b = self.buckets.last_mut().expect("extend_to leaves a bucket");
        if t.0 == self.carried_start {
            let peaks = &mut self.start_peaks;
            if in_service > self.in_service {
                peaks.0 = peaks.0.max(in_service);
            }
            if queued > self.queued {
                peaks.1 = peaks.1.max(queued);
            }
            b.in_service = peaks.0.max(in_service);
            b.queued = peaks.1.max(queued);
        } else {
            b.in_service = b.in_service.max(in_service);
            b.queued = b.queued.max(queued);
        }
        self.in_service = in_service;
        self.queued = queued;
    }

    /// Records the number of open breakers after a change at `t`.
    pub fn breakers(&mut self, t: SimTime, open: u32) {
        // Extend first: the empty buckets before `t` end with the old count.
        self.at(t).breakers_open = open;
        self.breakers_open = open;
    }

    /// Records the service's slots after a change at `t`.
    pub fn concurrency(&mut self, t: SimTime, slots: u32) {
        self.at(t).concurrency = slots;
        self.concurrency = slots;
    }

    /// The buckets up to and including the one containing `end`.
    pub fn finish(mut self, end: SimTime) -> Vec<Bucket> {
        self.at(end);
        self.buckets
    }
}

thread_local! {
    /// Series buffers of this thread's finished runs, emptied, for its next runs (see
    /// [`super::RunMetrics::recycle`]).
    static SPARE_SERIES: RefCell<Vec<Vec<Bucket>>> = const { RefCell::new(Vec::new()) };
    /// The same for populations' series.
    static SPARE_POPULATION_SERIES: RefCell<Vec<Vec<PopulationBucket>>> =
        const { RefCell::new(Vec::new()) };
}

/// A series' bucket type whose emptied buffers each thread keeps for its next runs: a
/// sweep's many short runs would otherwise regrow every series from empty, one
/// reallocation per doubling (Brooker's experiment: about 7 per run for the population
/// series alone).
pub(crate) trait Pooled: Sized + 'static {
    /// This thread's spare buffers of this type.
    fn spares() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>>;
}

impl Pooled for Bucket {
    fn spares() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &SPARE_SERIES
    }
}

impl Pooled for PopulationBucket {
    fn spares() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &SPARE_POPULATION_SERIES
    }
}

/// Spare series buffers a thread keeps per type: one per service (or population) of the
/// largest graphs people run.
const SPARE_SERIES_COUNT: usize = 16;
/// Largest series (in buckets) kept as a spare: 4 MiB of service buckets. Longer series
/// are rare (hours at a fine bucket) and regrow cheaply relative to their runs.
const SPARE_SERIES_LIMIT: usize = 1 << 16;

/// An empty series buffer, reusing one a finished run of this thread gave back.
pub(crate) fn spare_series<T: Pooled>() -> Vec<T> {
    T::spares()
        .with(|spares| spares.borrow_mut().pop())
        .unwrap_or_default()
}

/// Keeps finished runs' series buffers, emptied, for this thread's next runs (a few, and
/// none of a long series).
pub(crate) fn give_back<T: Pooled>(series: impl Iterator<Item = Vec<T>>) {
    T::spares().with(|spares| {
        let mut spares = spares.borrow_mut();
        for mut series in series {
            if spares.len() < SPARE_SERIES_COUNT && series.capacity() <= SPARE_SERIES_LIMIT {
                series.clear();
                spares.push(series);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets with no event of their own carry the gauges' values from before the next
    /// change, not after it.
    #[test]
    fn empty_buckets_carry_the_value_held_before_the_next_change() {
        let ms = |n| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 8);
        t.breakers(ms(20), 1);
        t.occupancy(ms(30), 4, 2);
        t.concurrency(ms(40), 5);
        t.breakers(ms(1020), 0);
        t.occupancy(ms(1030), 0, 0);
        let b = t.finish(ms(1100));
        let open: Vec<u32> = b.iter().map(|b| b.breakers_open).collect();
        assert_eq!(open, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert!(b[..=10].iter().all(|b| (b.in_service, b.queued) == (4, 2)));
        assert_eq!((b[11].in_service, b[11].queued), (0, 0));
        assert!(b.iter().all(|b| b.concurrency == 5));
    }

    /// Intervals are half-open: a value that ends at a bucket's first instant was not held
    /// during that bucket, one that ends later was.
    #[test]
    fn a_change_at_a_buckets_first_instant_replaces_the_carried_value() {
        let ms = |n: u64| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 1);
        t.occupancy(ms(50), 1, 1);
        // Bucket [100, 200) opens with a counter, then a change at its first instant: the
        // busy [50, 100) ms is the first bucket's.
        t.at(ms(100)).arrivals += 1;
        t.occupancy(ms(100), 1, 0);
        t.occupancy(ms(150), 2, 0);
        // Two slots free at 200 ms, one change each: the 1 between them is passed on the way
        // down, not reached.
        t.occupancy(ms(200), 1, 0);
        t.occupancy(ms(200), 0, 0);
        t.occupancy(ms(250), 0, 1);
        // Bucket [300, 400) opens at 301 ms: the queue of 1 was held over [300, 301).
        t.occupancy(ms(301), 0, 0);
        let b = t.finish(ms(350));
        let gauges: Vec<(u32, u32)> = b.iter().map(|b| (b.in_service, b.queued)).collect();
        assert_eq!(gauges, [(1, 1), (2, 0), (0, 1), (0, 1)]);
    }

    /// A value an increase reaches for no time counts at a bucket's first instant as it
    /// does later in the bucket: a request that joins the queue at 100 ms and takes a slot
    /// freed at 100 ms; the slot it takes is in service again once the instant is over.
    #[test]
    fn a_momentary_value_counts_at_a_buckets_first_instant_as_anywhere() {
        let ms = |n: u64| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 1);
        for start in [50, 100] {
            t.occupancy(ms(start), 1, 0);
            t.occupancy(ms(start), 1, 1);
            t.occupancy(ms(start), 0, 1);
            t.occupancy(ms(start), 1, 0);
        }
        let b = t.finish(ms(150));
        let gauges: Vec<(u32, u32)> = b.iter().map(|b| (b.in_service, b.queued)).collect();
        assert_eq!(gauges, [(1, 1), (1, 1)]);
    }
}
