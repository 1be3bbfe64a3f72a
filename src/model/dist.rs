//! Distributions of durations (network latency, service time, think time).
//!
//! [`Dist`] is the validated description from the scenario; [`Sampler`] is the ready-to-draw
//! form built once per run from `rand_distr`, so the hot loop never re-validates parameters.
//! Samples are drawn in nanoseconds as `f64` and rounded to whole nanoseconds.

use rand::Rng;
use rand_distr::{Distribution, Exp, Exp1, LogNormal, Normal, StandardNormal, Uniform};

use crate::time::SimDuration;

/// A validated distribution of durations.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    /// Always the same value; draws no random number.
    Constant(SimDuration),
    /// Uniform over `[min, max)`; `min == max` behaves as a constant.
    Uniform {
        /// Lower bound (inclusive).
        min: SimDuration,
        /// Upper bound (exclusive).
        max: SimDuration,
    },
    /// Normal; a negative sample is folded to `|x|` (DESIGN.md).
    Normal {
        /// Mean.
        mean: SimDuration,
        /// Standard deviation.
        sd: SimDuration,
    },
    /// Exponential with this mean.
    Exponential {
        /// Mean.
        mean: SimDuration,
    },
    /// Log-normal with this median (`e^mu`) and shape `sigma`.
    LogNormal {
        /// Median.
        median: SimDuration,
        /// Standard deviation of the underlying normal.
        sigma: f64,
    },
}

impl Dist {
    /// The distribution's mean (the folded normal's mean is approximated by `mean`).
    pub fn mean(&self) -> SimDuration {
        match *self {
            Dist::Constant(v) => v,
            Dist::Uniform { min, max } => SimDuration((min.0 + max.0) / 2),
            Dist::Normal { mean, .. } | Dist::Exponential { mean } => mean,
            Dist::LogNormal { median, sigma } => {
                SimDuration::from_nanos_f64(median.0 as f64 * (sigma * sigma / 2.0).exp())
            }
        }
    }

    /// A short human description, e.g. `normal(mean 10ms, sd 2ms)`.
    pub fn describe(&self) -> String {
        match self {
            Dist::Constant(v) => format!("constant {v}"),
            Dist::Uniform { min, max } => format!("uniform [{min}, {max})"),
            Dist::Normal { mean, sd } => format!("normal(mean {mean}, sd {sd})"),
            Dist::Exponential { mean } => format!("exponential(mean {mean})"),
            Dist::LogNormal { median, sigma } => {
                format!("lognormal(median {median}, sigma {sigma})")
            }
        }
    }

    /// Builds the sampler. Parameters were validated by [`crate::model`], so this cannot fail.
    pub fn sampler(&self) -> Sampler {
        match *self {
            Dist::Constant(v) => Sampler::Constant(v),
            Dist::Uniform { min, max } if min == max => Sampler::Constant(min),
            Dist::Uniform { min, max } => Sampler::Uniform(
                Uniform::new(min.0 as f64, max.0 as f64).expect("validated: min < max"),
            ),
            Dist::Normal { mean, sd } if sd.is_zero() => Sampler::Constant(mean),
            Dist::Normal { mean, sd } => {
                // `Normal::new` only validates; sampling is `mean + sd * z` (rand_distr's
                // `from_zscore`), written here so the draw inlines (same values, bit for bit).
                Normal::new(mean.0 as f64, sd.0 as f64).expect("validated: finite sd");
                Sampler::Normal {
                    mean: mean.0 as f64,
                    sd: sd.0 as f64,
                }
            }
            Dist::Exponential { mean } if mean.is_zero() => Sampler::Constant(SimDuration::ZERO),
            Dist::Exponential { mean } => {
                // rand_distr's `Exp::new(lambda)` scales by `1 / lambda`; the same double
                // division keeps every draw bit for bit what it was through `Exp`.
                let lambda = 1.0 / mean.0 as f64;
                Exp::new(lambda).expect("validated: mean > 0");
                Sampler::Exp {
                    scale: 1.0 / lambda,
                }
            }
            Dist::LogNormal { median, sigma } => Sampler::LogNormal(
                LogNormal::new((median.0 as f64).ln(), sigma).expect("validated: median > 0"),
            ),
        }
    }
}

/// A distribution ready to draw from.
#[derive(Debug, Clone)]
pub enum Sampler {
    /// No randomness.
    Constant(SimDuration),
    /// Uniform in nanoseconds.
    Uniform(Uniform<f64>),
    /// Normal in nanoseconds, folded at zero.
    Normal {
        /// Mean, in nanoseconds.
        mean: f64,
        /// Standard deviation, in nanoseconds.
        sd: f64,
    },
    /// Exponential in nanoseconds: `scale` (the mean) times a standard exponential draw.
    Exp {
        /// The mean, in nanoseconds.
        scale: f64,
    },
    /// Log-normal in nanoseconds.
    LogNormal(LogNormal<f64>),
}

impl Sampler {
    /// Draws one duration. A constant draws nothing from `rng`.
    ///
    /// Always inlined (a handful of call sites in the engine): as a call, the ziggurat's
    /// registers were saved and restored on every draw, about 10 instructions of the 84 a
    /// normal draw costs.
    #[inline(always)]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> SimDuration {
        match self {
            Sampler::Constant(v) => *v,
            Sampler::Uniform(d) => SimDuration::from_nanos_f64(d.sample(rng)),
            Sampler::Normal { mean, sd } => {
                let z: f64 = StandardNormal.sample(rng);
                SimDuration::from_nanos_f64((mean + sd * z).abs())
            }
            Sampler::Exp { scale } => {
                let e: f64 = Exp1.sample(rng);
                SimDuration::from_nanos_f64(e * scale)
            }
            Sampler::LogNormal(d) => SimDuration::from_nanos_f64(d.sample(rng)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    #[test]
    fn constant_is_exact() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let s = Dist::Constant(SimDuration::from_millis(10)).sampler();
        assert_eq!(s.sample(&mut rng), SimDuration::from_millis(10));
    }

    #[test]
    fn folded_normal_is_never_negative_and_uniform_stays_in_bounds() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = Dist::Normal {
            mean: SimDuration::from_millis(1),
            sd: SimDuration::from_millis(5),
        }
        .sampler();
        let u = Dist::Uniform {
            min: SimDuration::from_millis(5),
            max: SimDuration::from_millis(15),
        }
        .sampler();
        let mut folded = 0;
        for _ in 0..10_000 {
            let x = n.sample(&mut rng);
            if x < SimDuration::from_millis(1) {
                folded += 1;
            }
            let y = u.sample(&mut rng);
            assert!(y >= SimDuration::from_millis(5) && y < SimDuration::from_millis(15));
        }
        // P(|N(1,5)| < 1) ≈ 0.155: folding happened, and only a plausible share of draws.
        assert!((1000..2200).contains(&folded), "{folded}");
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let s = Dist::Exponential {
            mean: SimDuration::from_millis(20),
        }
        .sampler();
        let n = 100_000;
        let total: f64 = (0..n).map(|_| s.sample(&mut rng).as_secs_f64()).sum();
        let mean = total / n as f64;
        assert!((mean - 0.020).abs() < 0.0005, "{mean}");
    }
}
