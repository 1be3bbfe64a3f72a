//! `Raw*` types: the scenario file exactly as written, one serde struct per TOML table.
//!
//! Nothing here is validated beyond what serde checks (unknown keys, value types). Every key
//! is optional at this level so that a missing required key is reported together with the
//! other problems by [`crate::model`], not as the first serde error. Values that need a
//! semantic check keep their position (`Spanned`), so the check can point at the line.
//! Durations are parsed leniently into [`RawDuration`]: a bare number or a misspelt unit is
//! recorded, then reported with all other problems instead of aborting the parse.

#![allow(missing_docs)] // fields mirror the TOML keys, documented in DESIGN.md and scenarios/

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use crate::time::{SimDuration, parse_duration};

/// A duration-valued key as written: a duration, one of the words `none` / `auto`, or
/// something that is not a duration (kept with an explanation, reported during validation).
#[derive(Debug, Clone, PartialEq)]
pub enum RawDuration {
    /// A well-formed duration such as `"100ms"`.
    Given(SimDuration),
    /// The word `"none"` (an explicit "no limit" / "no hint").
    None,
    /// The word `"auto"` (let the simulated server compute a hint).
    Auto,
    /// Anything else, with what was found.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawDuration;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration string with a unit, such as \"100ms\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDuration, E> {
                Ok(match v.trim() {
                    "none" => RawDuration::None,
                    "auto" => RawDuration::Auto,
                    other => match parse_duration(other) {
                        Ok(d) => RawDuration::Given(d),
                        Err(_) if other.starts_with('-') => RawDuration::Bad(format!(
                            "found \"{other}\" (a duration cannot be negative)"
                        )),
                        Err(_) if other.parse::<f64>().is_ok() => RawDuration::Bad(format!(
                            "found \"{other}\", a number without a unit (write e.g. \"{other}ms\" or \"{other}s\")"
                        )),
                        Err(msg) => {
                            let prefix = format!("\"{other}\" is not a duration (");
                            let why = msg
                                .strip_prefix(&prefix)
                                .and_then(|m| m.strip_suffix(')'))
                                .unwrap_or(&msg);
                            RawDuration::Bad(format!("found \"{other}\" ({why})"))
                        }
                    },
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDuration, E> {
                Ok(RawDuration::Bad(format!(
                    "found the bare number {v} (a duration needs a unit and quotes, e.g. \"{v}ms\" or \"{v}s\")"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDuration, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDuration, E> {
                Ok(RawDuration::Bad(format!(
                    "found the bare number {v} (a duration needs a unit and quotes, e.g. \"{v}s\")"
                )))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawDuration, E> {
                Ok(RawDuration::Bad(format!("found the boolean {v}")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A distribution table: `{ dist = "normal", mean = "10ms", sd = "2ms" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawDist {
    /// Always `value`.
    Constant {
        /// The value.
        value: RawDuration,
    },
    /// Uniform over `[min, max)`.
    Uniform {
        /// Lower bound.
        min: RawDuration,
        /// Upper bound.
        max: RawDuration,
    },
    /// Normal, negative samples folded to `|x|`.
    Normal {
        /// Mean.
        mean: RawDuration,
        /// Standard deviation.
        sd: RawDuration,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: RawDuration,
    },
    /// Log-normal with the given median and shape sigma (heavy-tailed service times).
    Lognormal {
        /// Median (`exp(mu)`).
        median: RawDuration,
        /// Shape: standard deviation of the underlying normal.
        sigma: f64,
    },
}

/// The jitter key: a word (`"full"`) or a one-key table (`{ proportional = 0.1 }`).
#[derive(Debug, Clone, PartialEq)]
pub enum RawJitter {
    /// `"none"`, `"full"`, `"equal"`, `"decorrelated"` (checked during validation).
    Word(String),
    /// `{ proportional = f }`.
    Proportional(f64),
    /// `{ fraction = j }`.
    Fraction(f64),
    /// A table with another key or shape, with what was found.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawJitter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawJitter;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "\"none\", \"full\", \"equal\", \"decorrelated\", { proportional = f } or { fraction = j }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawJitter, E> {
                Ok(RawJitter::Word(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawJitter, A::Error> {
                let mut result = None;
                let mut extra = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: f64 = map.next_value()?;
                    match key.as_str() {
                        "proportional" if result.is_none() => {
                            result = Some(RawJitter::Proportional(value))
                        }
                        "fraction" if result.is_none() => result = Some(RawJitter::Fraction(value)),
                        _ => extra.push(key),
                    }
                }
                Ok(match (result, extra.is_empty()) {
                    (Some(j), true) => j,
                    (_, false) => RawJitter::Bad(format!(
                        "a jitter table takes exactly one of `proportional` or `fraction`, found `{}`",
                        extra.join("`, `")
                    )),
                    (None, true) => RawJitter::Bad("found an empty table".to_string()),
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The whole scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    pub seed: Option<Spanned<i64>>,
    pub replications: Option<Spanned<i64>>,
    pub time_limit: Option<Spanned<RawDuration>>,
    pub clients: Option<Spanned<RawClients>>,
    pub network: Option<Spanned<RawNetwork>>,
    pub server: Option<Spanned<RawServer>>,
    pub fallback: Option<Spanned<RawServer>>,
    pub retry: Option<Spanned<RawPolicy>>,
    pub metrics: Option<Spanned<RawMetrics>>,
    #[serde(default)]
    pub strategy: Vec<Spanned<RawPolicy>>,
    /// Checked and expanded by [`crate::scenario::sweep`] on the document itself.
    pub sweep: Option<toml::Value>,
}

/// `[clients]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClients {
    pub count: Option<Spanned<i64>>,
    pub start: Option<Spanned<RawDuration>>,
    pub start_spread: Option<Spanned<RawDuration>>,
    pub requests: Option<Spanned<i64>>,
    /// Pause between one logical request's end and the next one's start (closed loop).
    pub think: Option<Spanned<RawDist>>,
}

/// `[network]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub latency: Option<Spanned<RawDist>>,
}

/// `[server]`, and `[fallback]` which has the same keys plus `latency`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    pub concurrency: Option<Spanned<i64>>,
    pub queue: Option<Spanned<i64>>,
    pub service: Option<Spanned<RawDist>>,
    #[serde(default)]
    pub outages: Vec<Spanned<RawOutage>>,
    pub rate_limit: Option<Spanned<RawRateLimiter>>,
    pub retry_after: Option<Spanned<RawDuration>>,
    pub client_error_rate: Option<Spanned<f64>>,
    /// Only in `[fallback]`: the network latency to the fallback server.
    pub latency: Option<Spanned<RawDist>>,
    /// Optimistic concurrency control on one row (Brooker 2015's OCC model).
    pub occ: Option<bool>,
}

/// `[[server.outages]]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    pub start: Option<Spanned<RawDuration>>,
    pub end: Option<Spanned<RawDuration>>,
    pub kind: Option<Spanned<String>>,
    pub retry_after: Option<Spanned<RawDuration>>,
    pub error_rate: Option<Spanned<f64>>,
    pub slowdown: Option<Spanned<f64>>,
}

/// `[server.rate_limit]`: the server-side token bucket.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimiter {
    pub rate: Option<Spanned<f64>>,
    pub burst: Option<Spanned<f64>>,
    pub retry_after: Option<Spanned<RawDuration>>,
}

/// `[metrics]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    pub bucket: Option<Spanned<RawDuration>>,
}

/// `[retry]` and each `[[strategy]]`: the same keys, because a strategy may override any
/// retry default, and `[retry]` may set backoff defaults for every strategy. `name` is only
/// valid in a strategy; validation refuses it under `[retry]`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub name: Option<Spanned<String>>,
    pub base: Option<Spanned<RawDuration>>,
    pub cap: Option<Spanned<RawDuration>>,
    pub multiplier: Option<Spanned<f64>>,
    pub jitter: Option<Spanned<RawJitter>>,
    pub max_attempts: Option<Spanned<i64>>,
    pub timeout: Option<Spanned<RawDuration>>,
    pub timeout_multiplier: Option<Spanned<f64>>,
    pub connect_timeout: Option<Spanned<RawDuration>>,
    pub deadline: Option<Spanned<RawDuration>>,
    pub retry_on: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub retry_after: Option<Spanned<RawRetryAfter>>,
    pub rate_limit: Option<Spanned<RawRateLimitLadder>>,
    pub budget: Option<Spanned<RawBudget>>,
    pub breaker: Option<Spanned<RawBreaker>>,
    pub fallback_on: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `retry_after = { honor = true, max = "60s", beyond = "ignore" }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetryAfter {
    pub honor: Option<bool>,
    pub max: Option<Spanned<RawDuration>>,
    pub beyond: Option<Spanned<String>>,
}

/// `rate_limit = { max_retries = 5, escalate_after = 3, default_wait = "5s", max_wait = "60s" }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimitLadder {
    pub max_retries: Option<Spanned<i64>>,
    pub escalate_after: Option<Spanned<i64>>,
    pub default_wait: Option<Spanned<RawDuration>>,
    pub max_wait: Option<Spanned<RawDuration>>,
}

/// `budget = { kind = "...", ... }`
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawBudget {
    /// Retries limited to a share of first attempts in a rolling window (seed 002, Finagle).
    Ratio {
        ratio: Option<f64>,
        window: Option<RawDuration>,
        min_per_s: Option<f64>,
        scope: Option<String>,
    },
    /// gRPC retry throttling.
    TokenBucket {
        max_tokens: Option<f64>,
        token_ratio: Option<f64>,
        scope: Option<String>,
    },
    /// AWS SDK standard-mode retry quota.
    Quota {
        capacity: Option<i64>,
        retry_cost: Option<i64>,
        timeout_cost: Option<i64>,
        success_refund: Option<i64>,
        scope: Option<String>,
    },
    /// Brooker's adaptive bucket: first attempts fill it, retries drain it.
    Adaptive {
        fill_per_call: Option<f64>,
        size: Option<f64>,
        scope: Option<String>,
    },
}

/// `breaker = { failure_rate = 0.5, window = "10s", min_calls = 20, open_for = "5s", ... }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreaker {
    pub failure_rate: Option<Spanned<f64>>,
    pub window: Option<Spanned<RawDuration>>,
    pub min_calls: Option<Spanned<i64>>,
    pub open_for: Option<Spanned<RawDuration>>,
    pub half_open_probes: Option<Spanned<i64>>,
    pub scope: Option<Spanned<String>>,
}
