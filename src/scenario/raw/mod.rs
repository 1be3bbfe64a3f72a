//! `Raw*` types: the scenario file exactly as written, one serde struct per TOML table.
//!
//! Nothing here is validated beyond what serde checks (unknown keys, value types). Every key
//! is optional at this level so that a missing required key is reported together with the
//! other problems by [`crate::model`], not as the first serde error. Values that need a
//! semantic check keep their position (`Spanned`), so the check can point at the line.
//! Durations are parsed leniently into [`RawDuration`]: a bare number or a misspelt unit is
//! recorded, then reported with all other problems instead of aborting the parse. Keys that
//! take values of several shapes (`[clients]` or `[[clients]]`, `occ = true` or a word, a
//! service's `retry` word or table, lists of pairs) have hand-written `Deserialize` impls
//! that record a wrong shape as `Bad(found)`, so no serde wording ("untagged enum", "a
//! sequence") ever reaches the user. The retry policy's types are in `policy`.

#![allow(missing_docs)] // fields mirror the TOML keys, documented in DESIGN.md and scenarios/

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

use crate::time::{SimDuration, parse_duration};

mod policy;
mod tagged;

pub use policy::{RawBreaker, RawJitter, RawLimiter, RawPolicy, RawRateLimitLadder, RawRetryAfter};
pub use tagged::{BUDGET_KINDS, DIST_KINDS, RawBudget, RawDist, Stray, Tag};

/// The key under which the `toml` crate hands a date-time to a deserializer.
const TOML_DATETIME_KEY: &str = "$__toml_private_datetime";

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
    /// A word that is none of those (`"nnoe"`), kept apart so that a key taking words can
    /// guess the one meant; `found` says what was found as [`RawDuration::Bad`] does.
    Word { word: String, found: String },
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
                        Err(_) if let Some(n) = crate::time::unitless_number(other) => {
                            RawDuration::Bad(format!(
                                "found \"{other}\", a number without a unit (write e.g. \"{n}ms\" or \"{n}s\")"
                            ))
                        }
                        Err(msg) => {
                            let prefix = format!("\"{other}\" is not a duration (");
                            let why = msg
                                .strip_prefix(&prefix)
                                .and_then(|m| m.strip_suffix(')'))
                                .unwrap_or(&msg);
                            let found = format!("found \"{other}\" ({why})");
                            if other.chars().all(|c| c.is_ascii_alphabetic()) {
                                RawDuration::Word {
                                    word: other.to_string(),
                                    found,
                                }
                            } else {
                                RawDuration::Bad(found)
                            }
                        }
                    },
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDuration, E> {
                if v < 0 {
                    return Ok(RawDuration::Bad(format!(
                        "found the bare number {v} (a duration is never negative, and needs a unit and quotes, such as \"100ms\")"
                    )));
                }
                Ok(RawDuration::Bad(format!(
                    "found the bare number {v} (a duration needs a unit and quotes, e.g. \"{v}ms\" or \"{v}s\")"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDuration, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDuration, E> {
                if !v.is_finite() {
                    return Ok(RawDuration::Bad(format!(
                        "found {v} (a duration is a number and a unit in quotes, such as \"100ms\")"
                    )));
                }
                if v < 0.0 {
                    return Ok(RawDuration::Bad(format!(
                        "found the bare number {v} (a duration is never negative, and needs a unit and quotes, such as \"100ms\")"
                    )));
                }
                Ok(RawDuration::Bad(format!(
                    "found the bare number {v} (a duration needs a unit and quotes, e.g. \"{v}s\")"
                )))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawDuration, E> {
                Ok(RawDuration::Bad(format!("found the boolean {v}")))
            }
            /// A TOML date-time arrives as a one-key table (the `toml` crate's private
            /// key); any other table is kept as what was found, so that the message says
            /// what the key expects (`> 0` included) as it does for a number or a word.
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawDuration, A::Error> {
                match map.next_key::<String>()? {
                    Some(key) if key == TOML_DATETIME_KEY => {
                        let v: String = map.next_value()?;
                        Ok(RawDuration::Bad(format!(
                            "found the date-time {v} (a duration needs quotes and a unit, e.g. \"100ms\")"
                        )))
                    }
                    Some(_) => {
                        map.next_value::<de::IgnoredAny>()?;
                        while map
                            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                            .is_some()
                        {}
                        Ok(RawDuration::Bad("found a table".to_string()))
                    }
                    None => Ok(RawDuration::Bad("found a table".to_string())),
                }
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawDuration, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(RawDuration::Bad("found an array".to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl RawDuration {
    /// Reads a duration from a value inside a list (`profile` points); `None` for a list or
    /// a table.
    pub fn deserialize_value(v: &toml::Value) -> Option<RawDuration> {
        if v.is_table() || v.is_array() {
            return None;
        }
        RawDuration::deserialize(v.clone()).ok()
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
    /// `[[service]]`: a service graph instead of `[server]`.
    #[serde(default)]
    pub service: Vec<Spanned<RawServer>>,
    pub fallback: Option<Spanned<RawServer>>,
    pub retry: Option<Spanned<RawPolicy>>,
    pub metrics: Option<Spanned<RawMetrics>>,
    #[serde(default)]
    pub strategy: Vec<Spanned<RawPolicy>>,
    /// Checked and expanded by [`crate::scenario::sweep`] on the document itself.
    pub sweep: Option<toml::Value>,
}

/// `[clients]` (one population) or `[[clients]]` (several), or a value of another shape.
#[derive(Debug, Clone)]
pub enum RawClients {
    /// `[clients]`: one population, named `clients` unless it says otherwise.
    Table(Box<RawPopulation>),
    /// `[[clients]]`: populations in file order.
    Array(Vec<Spanned<RawPopulation>>),
    /// Neither a table nor an array of tables, with what was found.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawClients {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawClients;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a [clients] table or [[clients]] tables")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawClients, A::Error> {
                RawPopulation::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|p| RawClients::Table(Box::new(p)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawClients, A::Error> {
                let mut all = Vec::new();
                while let Some(p) = seq.next_element::<Spanned<RawPopulation>>()? {
                    all.push(p);
                }
                Ok(RawClients::Array(all))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawClients, E> {
                Ok(RawClients::Bad(format!("the string \"{v}\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawClients, E> {
                Ok(RawClients::Bad(format!("the number {v}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawClients, E> {
                Ok(RawClients::Bad(format!("the number {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawClients, E> {
                Ok(RawClients::Bad(format!("the number {v}")))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawClients, E> {
                Ok(RawClients::Bad(format!("the boolean {v}")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One population: `[clients]` or one `[[clients]]`. Exactly one source (closed `count`,
/// open `rate` / `profile`, or `trace`) is checked during validation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPopulation {
    /// Closed: the number of clients.
    pub count: Option<Spanned<i64>>,
    pub start: Option<Spanned<RawDuration>>,
    pub start_spread: Option<Spanned<RawDuration>>,
    pub requests: Option<Spanned<i64>>,
    /// Pause between one logical request's end and the next one's start (closed loop).
    pub think: Option<Spanned<RawDist>>,
    /// Required in `[[clients]]`; `clients` by default in `[clients]`.
    pub name: Option<Spanned<String>>,
    /// Open: a constant arrival rate (requests per second).
    pub rate: Option<Spanned<f64>>,
    /// Open: `[[time, rate], ...]`, a piecewise-linear rate.
    pub profile: Option<Spanned<RawList>>,
    /// Open: `poisson` or `uniform`.
    pub process: Option<Spanned<String>>,
    /// Open: arrivals stop before this.
    pub end: Option<Spanned<RawDuration>>,
    /// Trace: a CSV file of arrival times.
    pub trace: Option<Spanned<String>>,
    /// Open and trace: the clients the arrivals come from.
    pub clients: Option<Spanned<i64>>,
    /// Overrides of the compared strategy for this population's requests.
    pub retry: Option<Spanned<RawPolicy>>,
}

/// A list whose items are checked during validation (`profile`, `slowdown`): each item with
/// its position, or what was found instead of a list.
#[derive(Debug, Clone, PartialEq)]
pub enum RawList {
    /// The items as written.
    Items(Vec<Spanned<toml::Value>>),
    /// Not a list, with what was found.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawList, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Spanned<toml::Value>>()? {
                    items.push(v);
                }
                Ok(RawList::Items(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<RawList, A::Error> {
                Ok(RawList::Bad("a table".to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawList, E> {
                Ok(RawList::Bad(format!("\"{v}\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawList, E> {
                Ok(RawList::Bad(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawList, E> {
                Ok(RawList::Bad(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawList, E> {
                Ok(RawList::Bad(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawList, E> {
                Ok(RawList::Bad(v.to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `[network]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub latency: Option<Spanned<RawDist>>,
}

/// `[server]`, each `[[service]]`, and `[fallback]`: the same server keys. The service-only
/// keys (`name`, `calls`, `retry`, `propagate_deadline`) and `latency` (not in `[server]`)
/// are refused by validation where they do not apply.
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
    /// In `[fallback]` and `[[service]]`: the one-way latency to this server.
    pub latency: Option<Spanned<RawDist>>,
    /// Optimistic concurrency control on one row: a boolean or a mode word.
    pub occ: Option<Spanned<RawOcc>>,
    /// How long an OCC write holds.
    pub occ_write: Option<Spanned<RawDist>>,
    /// `fifo` or `lifo`.
    pub discipline: Option<Spanned<String>>,
    pub queue_timeout: Option<Spanned<RawDuration>>,
    /// `[[h, factor], ...]`.
    pub slowdown: Option<Spanned<RawList>>,
    /// `[[server.capacity]]` steps.
    #[serde(default)]
    pub capacity: Vec<Spanned<RawCapacityStep>>,
    pub autoscale: Option<Spanned<RawAutoscale>>,
    /// `[[service]]` only: unique name.
    pub name: Option<Spanned<String>>,
    /// `[[service]]` only: downstream services, by name.
    pub calls: Option<Spanned<Vec<Spanned<String>>>>,
    /// `[[service]]` only: the policy of its downstream calls.
    pub retry: Option<Spanned<RawServiceRetry>>,
    /// `[[service]]` only.
    pub propagate_deadline: Option<Spanned<bool>>,
}

/// `occ = true | false | "read-write" | "write-only"`, or a value of another shape.
#[derive(Debug, Clone, PartialEq)]
pub enum RawOcc {
    Bool(bool),
    Word(String),
    /// What was found instead.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawOcc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawOcc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false, \"read-write\" or \"write-only\"")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawOcc, E> {
                Ok(RawOcc::Bool(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawOcc, E> {
                Ok(RawOcc::Word(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawOcc, E> {
                Ok(RawOcc::Bad(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawOcc, E> {
                Ok(RawOcc::Bad(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawOcc, E> {
                Ok(RawOcc::Bad(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<RawOcc, A::Error> {
                Ok(RawOcc::Bad("a list".to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<RawOcc, A::Error> {
                Ok(RawOcc::Bad("a table".to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A service's `retry`: the word `"strategy"`, an inline policy table, or something else.
#[derive(Debug, Clone)]
pub enum RawServiceRetry {
    /// A word (only `strategy` is valid; checked during validation).
    Word(String),
    /// `{ max_attempts = 3, base = "10ms", ... }`.
    Table(Box<RawPolicy>),
    /// What was found instead.
    Bad(String),
}

impl<'de> Deserialize<'de> for RawServiceRetry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawServiceRetry;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"strategy\" or a retry table")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawServiceRetry, E> {
                Ok(RawServiceRetry::Word(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawServiceRetry, A::Error> {
                RawPolicy::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|p| RawServiceRetry::Table(Box::new(p)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawServiceRetry, E> {
                Ok(RawServiceRetry::Bad(format!("the boolean {v}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawServiceRetry, E> {
                Ok(RawServiceRetry::Bad(format!("the number {v}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawServiceRetry, E> {
                Ok(RawServiceRetry::Bad(format!("the number {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawServiceRetry, E> {
                Ok(RawServiceRetry::Bad(format!("the number {v}")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<RawServiceRetry, A::Error> {
                Ok(RawServiceRetry::Bad("a list".to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `[[server.capacity]]`: `{ at = "30s", concurrency = 50 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapacityStep {
    pub at: Option<Spanned<RawDuration>>,
    pub concurrency: Option<Spanned<i64>>,
}

/// `autoscale = { min, max, target, interval, warmup }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutoscale {
    pub min: Option<Spanned<i64>>,
    pub max: Option<Spanned<i64>>,
    pub target: Option<Spanned<f64>>,
    pub interval: Option<Spanned<RawDuration>>,
    pub warmup: Option<Spanned<RawDuration>>,
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
    /// Where recovery is measured from.
    pub trigger_end: Option<Spanned<RawDuration>>,
}
