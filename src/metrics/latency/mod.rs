//! Latency samples that merge in any order: exact while small, a log-linear histogram when
//! large.
//!
//! A [`Latencies`] keeps every sample (nanoseconds) until it holds more than
//! [`EXACT_LIMIT`]; past that, it becomes a histogram of the same samples whose buckets are
//! 1/1024 of an octave wide (values below 2 048 ns are exact), so a percentile read from it is
//! within 0.05% of the true sample value (the bucket's midpoint is reported, kept within the
//! smallest and largest samples, which are kept exactly: the extremes are exact, and so is
//! every percentile when all samples are equal). Which form a
//! merged result takes depends only on the multiset of samples merged, never on the order of
//! the merges, so results are the same whatever thread or shard finished first. Memory is
//! bounded: at most 8 MB of exact samples, or one 450 KB histogram.
//!
//! Percentiles are nearest-rank (`sorted[ceil(p n) - 1]`), so small hand-worked cases give
//! exact sample values.

mod sort;

/// Samples kept exactly before switching to the histogram.
pub const EXACT_LIMIT: usize = 1 << 20;

/// Bits of mantissa kept per octave: buckets are 2^-10 of their value wide.
const SUB_BITS: u32 = 10;
/// Values below this are their own bucket (exact).
const LINEAR: u64 = 1 << (SUB_BITS + 1);
/// Number of histogram buckets covering every `u64`.
const BUCKETS: usize = LINEAR as usize + (64 - SUB_BITS as usize - 1) * (1 << SUB_BITS);

/// A mergeable multiset of latency samples in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Latencies {
    /// Every sample while the count is at most [`EXACT_LIMIT`] (unsorted).
    exact: Vec<u64>,
    /// Counts per bucket once the samples outgrew `exact` (then `exact` is empty).
    histogram: Option<Box<[u64]>>,
    /// Number of samples.
    count: u64,
    /// Sum of every sample, exact (for the mean).
    sum: u128,
    /// The smallest and largest samples (`None` without samples, or in a shard's partial
    /// results written by an earlier herdsim, which did not keep them: then percentiles
    /// from the histogram are not clamped).
    #[serde(default)]
    range: Option<[u64; 2]>,
}

impl Latencies {
    /// No samples.
    pub fn new() -> Self {
        Latencies::default()
    }

    /// No samples, with room for `expected` of them (at most [`EXACT_LIMIT`]) so that a
    /// run's samples do not regrow the set as they come: for a sweep's small runs the
    /// reallocations cost more than the recording itself.
    pub fn with_capacity(expected: u64) -> Self {
        Latencies {
            exact: Vec::with_capacity(expected.min(EXACT_LIMIT as u64) as usize),
            ..Latencies::default()
        }
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether percentiles are exact sample values (not histogram midpoints).
    pub fn is_exact(&self) -> bool {
        self.histogram.is_none()
    }

    /// The exact mean of the samples in nanoseconds; `None` without samples.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, nanos: u64) {
        self.range = match self.range {
            Some([lo, hi]) => Some([lo.min(nanos), hi.max(nanos)]),
            None if self.count == 0 => Some([nanos, nanos]),
            None => None,
        };
        self.count += 1;
        self.sum += nanos as u128;
        match &mut self.histogram {
            Some(h) => h[bucket_of(nanos)] += 1,
            None => {
                self.exact.push(nanos);
                if self.exact.len() > EXACT_LIMIT {
                    self.switch_to_histogram();
                }
            }
        }
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latencies) {
        // An unknown range (an earlier version's partial results) stays unknown, whatever
        // the order of the merges.
        self.range = match (self.count, other.count, self.range, other.range) {
            (_, 0, range, _) => range,
            (0, _, _, range) => range,
            (_, _, Some([a, b]), Some([c, d])) => Some([a.min(c), b.max(d)]),
            _ => None,
        };
        self.count += other.count;
        self.sum += other.sum;
        match (&mut self.histogram, &other.histogram) {
            (Some(h), Some(o)) => h.iter_mut().zip(o.iter()).for_each(|(a, b)| *a += b),
            (Some(h), None) => other.exact.iter().for_each(|&v| h[bucket_of(v)] += 1),
            (None, Some(o)) => {
                let mut h = o.clone();
                self.exact.iter().for_each(|&v| h[bucket_of(v)] += 1);
                self.exact = Vec::new();
                self.histogram = Some(h);
            }
            (None, None) => {
                self.exact.extend_from_slice(&other.exact);
                if self.exact.len() > EXACT_LIMIT {
                    self.switch_to_histogram();
                }
            }
        }
    }

    fn switch_to_histogram(&mut self) {
        let mut h = vec![0u64; BUCKETS].into_boxed_slice();
        for &v in &self.exact {
            h[bucket_of(v)] += 1;
        }
        self.exact = Vec::new();
        self.histogram = Some(h);
    }

    /// Checks a set read back from a file (a shard's `partial.json`) for what merging and
    /// percentiles rely on: the exact samples are `count` in number (at most
    /// [`EXACT_LIMIT`]) and add up to `sum`; a histogram has every bucket, counts adding up
    /// to `count` (more than [`EXACT_LIMIT`]) and no exact sample beside it.
    pub fn check(&self) -> Result<(), super::Inconsistency> {
        use super::Inconsistency as At;
        match &self.histogram {
            None => {
                if self.exact.len() as u64 != self.count {
                    return Err(At::new(
                        "exact",
                        format!("{} (its count)", super::counted(self.count, "sample")),
                        self.exact.len(),
                    ));
                }
                if self.exact.len() > EXACT_LIMIT {
                    return Err(At::new(
                        "count",
                        format!("at most {EXACT_LIMIT} samples without a histogram"),
                        self.count,
                    ));
                }
                let shown = |r: Option<[u64; 2]>| match r {
                    Some([lo, hi]) => format!("[{lo}, {hi}]"),
                    None => "none".to_string(),
                };
                let lo = self.exact.iter().min();
                let range = lo.map(|&lo| [lo, self.exact.iter().copied().max().unwrap_or(lo)]);
                if self.range.is_some() && self.range != range {
                    return Err(At::new(
                        "range",
                        format!("{} (its smallest and largest samples)", shown(range)),
                        shown(self.range),
                    ));
                }
                let sum: u128 = self.exact.iter().map(|&v| v as u128).sum();
                if sum != self.sum {
                    return Err(At::new(
                        "sum",
                        format!("{sum} (the sum of its samples)"),
                        self.sum,
                    ));
                }
            }
            Some(h) => {
                if !self.exact.is_empty() {
                    return Err(At::new(
                        "exact",
                        "no samples beside a histogram",
                        super::counted(self.exact.len() as u64, "sample"),
                    ));
                }
                if h.len() != BUCKETS {
                    return Err(At::new(
                        "histogram",
                        format!("{BUCKETS} bucket counts"),
                        h.len(),
                    ));
                }
                let total = h.iter().try_fold(0u64, |total, &c| total.checked_add(c));
                if total != Some(self.count) {
                    return Err(At::new(
                        "histogram",
                        format!("bucket counts adding up to {} (its count)", self.count),
                        total.map_or_else(
                            || "counts adding up to more than 2^64 - 1".to_string(),
                            |n| format!("counts adding up to {n}"),
                        ),
                    ));
                }
                if let Some([lo, hi]) = self.range
                    && (lo > hi || h[bucket_of(lo)] == 0 || h[bucket_of(hi)] == 0)
                {
                    return Err(At::new(
                        "range",
                        "a smallest and a largest sample in buckets that hold samples",
                        format!("[{lo}, {hi}]"),
                    ));
                }
                if self.count <= EXACT_LIMIT as u64 {
                    return Err(At::new(
                        "count",
                        format!("more than {EXACT_LIMIT} samples with a histogram"),
                        self.count,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Sorts the exact samples once, so that many percentiles can be read cheaply.
    pub fn sorted(mut self) -> SortedLatencies {
        sort::radix_sort(&mut self.exact);
        SortedLatencies(self)
    }
}

/// [`Latencies`] ready for percentile queries.
#[derive(Debug, Clone)]
pub struct SortedLatencies(Latencies);

impl SortedLatencies {
    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.0.count
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.0.count == 0
    }

    /// The exact mean in nanoseconds; `None` without samples.
    pub fn mean(&self) -> Option<f64> {
        self.0.mean()
    }

    /// The nearest-rank percentile `p` in [0, 1] (`p = 0` gives the minimum), in
    /// nanoseconds; `None` without samples.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        let n = self.0.count;
        if n == 0 {
            return None;
        }
        let rank = ((p * n as f64).ceil() as u64).clamp(1, n);
        match &self.0.histogram {
            None => Some(self.0.exact[rank as usize - 1]),
            Some(h) => {
                // The smallest and the largest sample are known exactly.
                match (self.0.range, rank) {
                    (Some([lo, _]), 1) => return Some(lo),
                    (Some([_, hi]), r) if r == n => return Some(hi),
                    _ => {}
                }
                let mut seen = 0;
                for (i, c) in h.iter().enumerate() {
                    seen += c;
                    if seen >= rank {
                        return Some(match self.0.range {
                            Some([lo, hi]) => midpoint(i).clamp(lo, hi),
                            None => midpoint(i),
                        });
                    }
                }
                unreachable!("bucket counts sum to the sample count")
            }
        }
    }
}

/// The histogram bucket of `v`: exact below [`LINEAR`], then 2^SUB_BITS buckets per octave.
#[inline]
fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let exponent = 63 - v.leading_zeros(); // >= SUB_BITS + 1
    let shift = exponent - SUB_BITS;
    let mantissa = (v >> shift) as usize; // in [2^SUB_BITS, 2^(SUB_BITS+1))
    LINEAR as usize + (shift as usize - 1) * (1 << SUB_BITS) + (mantissa - (1 << SUB_BITS))
}

/// The value a bucket reports: itself below [`LINEAR`], else the middle of its range.
fn midpoint(bucket: usize) -> u64 {
    if bucket < LINEAR as usize {
        return bucket as u64;
    }
    let k = bucket - LINEAR as usize;
    let shift = (k >> SUB_BITS) as u32 + 1;
    let mantissa = ((k & ((1 << SUB_BITS) - 1)) + (1 << SUB_BITS)) as u64;
    let low = mantissa << shift;
    low + (1u64 << shift) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_give_exact_nearest_rank_values() {
        let mut l = Latencies::new();
        for v in (1..=10).rev() {
            l.record(v * 1_000_000);
        }
        let s = l.sorted();
        assert_eq!(s.percentile(0.5), Some(5_000_000));
        assert_eq!(s.percentile(0.95), Some(10_000_000));
        assert_eq!(s.percentile(0.0), Some(1_000_000));
        assert_eq!(Latencies::new().sorted().percentile(0.5), None);
    }

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for v in [0, 1, 2047, 2048, 2049, 4095, 4096, 1 << 40, u64::MAX] {
            let b = bucket_of(v);
            assert!(b >= last && b < BUCKETS, "{v} -> {b}");
            last = b;
            let m = midpoint(b);
            let err = (m as f64 - v as f64).abs() / (v as f64).max(1.0);
            assert!(err <= 1.0 / 1024.0, "{v}: midpoint {m}");
        }
    }

    #[test]
    fn histogram_percentiles_are_within_half_a_bucket() {
        let mut l = Latencies::new();
        let values: Vec<u64> = (0..(EXACT_LIMIT as u64 + 10))
            .map(|i| 1_000 + i * 37)
            .collect();
        for &v in &values {
            l.record(v);
        }
        assert!(!l.is_exact());
        let s = l.sorted();
        for p in [0.01, 0.5, 0.99, 1.0] {
            let rank = ((p * values.len() as f64).ceil() as usize).max(1);
            let truth = values[rank - 1] as f64;
            let got = s.percentile(p).unwrap() as f64;
            assert!(
                (got - truth).abs() / truth < 0.0005 + 1e-9,
                "p{p}: {got} vs {truth}"
            );
        }
    }

    #[test]
    fn histogram_percentiles_stay_within_the_exact_extremes() {
        // 1.1 M requests of exactly 40 ms: every percentile is 40 ms, not the bucket's
        // midpoint (39.993344 ms), a value no request had.
        let mut equal = Latencies::new();
        for _ in 0..(EXACT_LIMIT + 50_000) {
            equal.record(40_000_000);
        }
        assert!(!equal.is_exact());
        let s = equal.clone().sorted();
        for p in [0.0, 0.5, 0.99, 1.0] {
            assert_eq!(s.percentile(p), Some(40_000_000), "p{p}");
        }
        // The extremes are exact whatever the spread; the middle stays within half a bucket.
        let mut spread = equal;
        spread.record(40_000_001);
        spread.record(39_999_999);
        let s = spread.sorted();
        assert_eq!(s.percentile(0.0), Some(39_999_999));
        assert_eq!(s.percentile(1.0), Some(40_000_001));
        // Partial results of an earlier version kept no extremes: the midpoint, unclamped,
        // and a merge with them keeps not knowing, in either order.
        let mut old = Latencies::new();
        for _ in 0..(EXACT_LIMIT + 1) {
            old.record(40_000_000);
        }
        old.range = None;
        let mut new = Latencies::new();
        new.record(1);
        let (mut a, mut b) = (old.clone(), new.clone());
        a.merge(&new);
        b.merge(&old);
        assert_eq!((a.range, b.range), (None, None));
        assert_eq!(old.sorted().percentile(0.5), Some(39_993_344));
    }

    #[test]
    fn merge_order_does_not_matter() {
        let parts: Vec<Latencies> = (0..4u64)
            .map(|k| {
                let mut l = Latencies::new();
                for i in 0..(EXACT_LIMIT as u64 / 3) {
                    l.record(i * 7 + k);
                }
                l
            })
            .collect();
        let mut a = Latencies::new();
        for p in &parts {
            a.merge(p);
        }
        let mut b = Latencies::new();
        for p in parts.iter().rev() {
            b.merge(p);
        }
        assert_eq!(a.len(), b.len());
        let (a, b) = (a.sorted(), b.sorted());
        for p in [0.0, 0.3, 0.5, 0.99, 1.0] {
            assert_eq!(a.percentile(p), b.percentile(p));
        }
        // Small merges stay exact and equal as multisets.
        let mut x = Latencies::new();
        x.record(5);
        let mut y = Latencies::new();
        y.record(3);
        let mut xy = x.clone();
        xy.merge(&y);
        let mut yx = y.clone();
        yx.merge(&x);
        assert_eq!(xy.sorted().percentile(0.5), yx.sorted().percentile(0.5));
    }

    /// A set read back from a file is refused where it would break merging or percentiles,
    /// in either form, and accepted as recorded.
    #[test]
    fn check_refuses_sets_no_recording_gives() {
        let mut exact = Latencies::new();
        for v in [5, 3, 9] {
            exact.record(v);
        }
        assert_eq!(exact.check(), Ok(()));
        assert_eq!(Latencies::new().check(), Ok(()));
        let message = |l: &Latencies| l.check().unwrap_err().to_string();
        let mut short = exact.clone();
        short.exact.pop();
        assert_eq!(
            message(&short),
            "exact: expected 3 samples (its count), found 2"
        );
        let mut one = Latencies::new();
        one.record(1);
        one.count = 2;
        assert_eq!(
            message(&one),
            "exact: expected 2 samples (its count), found 1"
        );
        let mut sum = exact.clone();
        sum.sum += 1;
        assert_eq!(
            message(&sum),
            "sum: expected 17 (the sum of its samples), found 18"
        );
        let mut range = exact.clone();
        range.range = Some([3, 8]);
        assert_eq!(
            message(&range),
            "range: expected [3, 9] (its smallest and largest samples), found [3, 8]"
        );
        let over = Latencies {
            exact: vec![0; EXACT_LIMIT + 1],
            histogram: None,
            count: EXACT_LIMIT as u64 + 1,
            sum: 0,
            range: None,
        };
        assert_eq!(
            message(&over),
            format!(
                "count: expected at most {EXACT_LIMIT} samples without a histogram, found {}",
                EXACT_LIMIT + 1
            )
        );

        let mut large = Latencies::new();
        for i in 0..(EXACT_LIMIT as u64 + 3) {
            large.record(i);
        }
        assert!(!large.is_exact());
        assert_eq!(large.check(), Ok(()));
        let mut both = large.clone();
        both.exact.push(1);
        assert_eq!(
            message(&both),
            "exact: expected no samples beside a histogram, found 1 sample"
        );
        let mut flipped = large.clone();
        flipped.range = Some([9, 3]);
        assert_eq!(
            message(&flipped),
            "range: expected a smallest and a largest sample in buckets that hold samples, found [9, 3]"
        );
        let mut cut = large.clone();
        cut.histogram = Some(vec![0; 7].into_boxed_slice());
        assert_eq!(
            message(&cut),
            format!("histogram: expected {BUCKETS} bucket counts, found 7")
        );
        let mut counts = large.clone();
        counts.histogram.as_mut().unwrap()[0] += 1;
        assert_eq!(
            message(&counts),
            format!(
                "histogram: expected bucket counts adding up to {} (its count), found counts adding up to {}",
                EXACT_LIMIT + 3,
                EXACT_LIMIT + 4
            )
        );
        counts.histogram.as_mut().unwrap()[1] = u64::MAX;
        assert!(message(&counts).ends_with("found counts adding up to more than 2^64 - 1"));
        let mut small = Latencies::new();
        small.record(4);
        small.switch_to_histogram();
        assert_eq!(
            message(&small),
            format!("count: expected more than {EXACT_LIMIT} samples with a histogram, found 1")
        );
    }
}
