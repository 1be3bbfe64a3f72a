//! The `Raw*` types of a retry policy: the keys `[retry]` and every `[[strategy]]` share
//! (backoff, jitter, attempts, timeouts, deadline, the retryable errors), and the tables
//! they hold: Retry-After handling, the rate-limit ladder, retry budgets and circuit
//! breakers. As in the parent module, nothing here is validated beyond what serde checks.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::{RawBudget, RawDuration};

/// The jitter key: a word (`"full"`) or a one-key table (`{ proportional = 0.1 }`).
#[derive(Debug, Clone, PartialEq)]
pub enum RawJitter {
    /// `"none"`, `"full"`, `"equal"`, `"decorrelated"`, `"decorrelated-v2"` (checked during
    /// validation).
    Word(String),
    /// `{ proportional = f }`.
    Proportional(Spanned<f64>),
    /// `{ fraction = j }`.
    Fraction(Spanned<f64>),
    /// `{ additive = "250ms" }` (checked during validation).
    Additive(Spanned<RawDuration>),
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
                    "\"none\", \"full\", \"equal\", \"decorrelated\", \"decorrelated-v2\", { proportional = f }, { fraction = j } or { additive = \"d\" }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawJitter, E> {
                Ok(RawJitter::Word(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawJitter, A::Error> {
                let mut result = None;
                // Every key, when there is more than one or an unknown one.
                let mut keys = Vec::new();
                let mut extra = false;
                while let Some(key) = map.next_key::<String>()? {
                    if key == super::TOML_DATETIME_KEY {
                        // A date-time: reported as what was written, like any wrong type.
                        return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
                    }
                    // Each value through its own type, so a wrong one is reported as any
                    // number or duration key's would be.
                    keys.push(key.clone());
                    match key.as_str() {
                        "proportional" if result.is_none() => {
                            result = Some(RawJitter::Proportional(map.next_value()?))
                        }
                        "fraction" if result.is_none() => {
                            result = Some(RawJitter::Fraction(map.next_value()?))
                        }
                        "additive" if result.is_none() => {
                            result = Some(RawJitter::Additive(map.next_value()?))
                        }
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                            extra = true;
                        }
                    }
                }
                Ok(match (result, extra) {
                    (Some(j), false) => j,
                    (_, true) => {
                        // One key, misspelt: the likely one.
                        let guess = match keys.as_slice() {
                            [only] => crate::scenario::guess::guess_name(
                                only,
                                ["proportional", "fraction", "additive"],
                            ),
                            _ => String::new(),
                        };
                        RawJitter::Bad(format!(
                            "a jitter table takes exactly one of `proportional`, `fraction` or `additive`, found `{}`{guess}",
                            keys.join("` and `")
                        ))
                    }
                    (None, false) => RawJitter::Bad("found an empty table".to_string()),
                })
            }
        }
        deserializer.deserialize_any(V)
    }
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
    pub increment: Option<Spanned<RawDuration>>,
    pub throttle_base: Option<Spanned<RawDuration>>,
    pub immediate_retries: Option<Spanned<i64>>,
    pub jitter: Option<Spanned<RawJitter>>,
    pub jitter_past_cap: Option<Spanned<bool>>,
    pub max_attempts: Option<Spanned<i64>>,
    pub timeout: Option<Spanned<RawDuration>>,
    pub timeout_multiplier: Option<Spanned<f64>>,
    pub connect_timeout: Option<Spanned<RawDuration>>,
    pub deadline: Option<Spanned<RawDuration>>,
    pub clamp_to_deadline: Option<Spanned<bool>>,
    pub retry_on: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub retry_after: Option<Spanned<RawRetryAfter>>,
    pub rate_limit: Option<Spanned<RawRateLimitLadder>>,
    pub budget: Option<Spanned<RawBudget>>,
    pub breaker: Option<Spanned<RawBreaker>>,
    pub client_rate_limiter: Option<Spanned<RawLimiter>>,
    pub fallback_on: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `retry_after = { honor = true, max = "60s", beyond = "ignore" }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetryAfter {
    pub honor: Option<bool>,
    pub restart: Option<bool>,
    pub max: Option<Spanned<RawDuration>>,
    pub beyond: Option<Spanned<String>>,
    pub combine: Option<Spanned<String>>,
    pub max_raise: Option<Spanned<RawDuration>>,
}

/// `rate_limit = { max_retries = 5, escalate_after = 3, default_wait = "5s", max_wait = "60s" }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimitLadder {
    pub on: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub max_retries: Option<Spanned<i64>>,
    pub escalate_after: Option<Spanned<i64>>,
    pub default_wait: Option<Spanned<RawDuration>>,
    pub max_wait: Option<Spanned<RawDuration>>,
}

/// `client_rate_limiter = { scope = "client", beta = 0.7, scale = 0.4, min_fill_rate = 0.5 }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimiter {
    pub beta: Option<Spanned<f64>>,
    pub scale: Option<Spanned<f64>>,
    pub min_fill_rate: Option<Spanned<f64>>,
    pub scope: Option<Spanned<String>>,
}

/// `breaker = { failure_rate = 0.5, window = "10s", min_calls = 20, open_for = "5s", ... }`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreaker {
    pub failure_rate: Option<Spanned<f64>>,
    pub window: Option<Spanned<RawDuration>>,
    pub window_calls: Option<Spanned<i64>>,
    pub min_calls: Option<Spanned<i64>>,
    pub open_for: Option<Spanned<RawDuration>>,
    pub half_open_probes: Option<Spanned<i64>>,
    pub half_open: Option<Spanned<String>>,
    pub scope: Option<Spanned<String>>,
    pub retries_only: Option<bool>,
    pub slow_call: Option<Spanned<RawDuration>>,
    pub slow_call_rate: Option<Spanned<f64>>,
    pub window_buckets: Option<Spanned<i64>>,
    pub buckets_from: Option<Spanned<String>>,
    pub trip_on: Option<Spanned<String>>,
}
