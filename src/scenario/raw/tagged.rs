//! Tagged tables, whose keys depend on one of them: a distribution
//! (`{ dist = "normal", mean = "10ms", sd = "2ms" }`) and a retry budget
//! (`{ kind = "ratio", ratio = 0.1 }`).
//!
//! serde's internally tagged enums buffer the whole table before they read the tag, and the
//! buffer drops every position inside it: a wrong value could only be reported at the `{` of
//! the table, without its key. These tables are read key by key instead, each value through
//! the toml deserializer with its own type and position, into one flat struct holding the
//! keys of every kind. Validation then takes the kind from the tag and reports any key that
//! kind does not take ([`Stray`]) with that kind's own list of keys.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use std::ops::Range;

use super::RawDuration;

/// Each distribution and the keys it takes, in the order messages list them.
pub const DIST_KINDS: &[(&str, &[&str])] = &[
    ("constant", &["value"]),
    ("uniform", &["min", "max"]),
    ("normal", &["mean", "sd"]),
    ("exponential", &["mean"]),
    ("lognormal", &["median", "sigma"]),
];

/// Each retry budget and the keys it takes besides `kind`, in the order messages list them.
pub const BUDGET_KINDS: &[(&str, &[&str])] = &[
    (
        "ratio",
        &[
            "ratio",
            "window",
            "min_per_s",
            "per_request",
            "deposit",
            "scope",
        ],
    ),
    ("token_bucket", &["max_tokens", "token_ratio", "scope"]),
    (
        "quota",
        &[
            "capacity",
            "retry_cost",
            "timeout_cost",
            "throttle_cost",
            "success_refund",
            "scope",
        ],
    ),
    (
        "adaptive",
        &["fill_per_call", "fill_per_success", "size", "scope"],
    ),
    ("concurrent", &["percent", "min_retries", "scope"]),
];

/// A key of a tagged table that its kind does not take (or that no kind takes), with where
/// its value is written, for validation to report.
#[derive(Debug, Clone)]
pub struct Stray {
    pub key: String,
    pub value: Range<usize>,
}

/// What every tagged table holds besides its kind's keys: the tag and the stray keys.
#[derive(Debug, Clone, Default)]
pub struct Tag {
    /// The tag's value as written (`"normal"`); checked during validation.
    pub value: Option<Spanned<toml::Value>>,
    /// Keys the kind does not take (in the order the deserializer gives them: a table's by
    /// name; sort by `value` for file order).
    pub stray: Vec<Stray>,
    /// The other keys written, for guesses: of names equally close to a stray key, one
    /// not written yet is the likely meaning.
    pub written: Vec<String>,
}

/// Reads a tagged table's pairs: the `tag` key into the returned [`Tag`], every other key
/// through `field` (which reads its value and returns `Ok(false)` for a key no kind takes).
/// Once the tag has been read, a key its kind does not take is kept as a [`Stray`] without
/// being typed, so `{ kind = "quota", ratio = "x" }` is an unknown key, not a wrong number.
fn read_tagged<'de, A: MapAccess<'de>>(
    mut map: A,
    expecting: &str,
    tag: &str,
    kinds: &[(&str, &'static [&'static str])],
    mut field: impl FnMut(&str, &mut A) -> Result<bool, A::Error>,
) -> Result<Tag, A::Error> {
    let mut out = Tag::default();
    let mut first = true;
    while let Some(key) = map.next_key::<String>()? {
        if first && key == super::TOML_DATETIME_KEY {
            // A date-time: reported as what was written, like any wrong type.
            return Err(de::Error::invalid_type(de::Unexpected::Map, &expecting));
        }
        first = false;
        if key == tag {
            out.value = Some(map.next_value()?);
            continue;
        }
        let taken = out
            .keys(kinds)
            .is_none_or(|keys| keys.contains(&key.as_str()));
        if taken && field(&key, &mut map)? {
            out.written.push(key);
        } else {
            let value: Spanned<de::IgnoredAny> = map.next_value()?;
            out.stray.push(Stray {
                key,
                value: value.span(),
            });
        }
    }
    Ok(out)
}

impl Tag {
    /// The keys the kind named by the tag takes; `None` while the tag is absent or unknown.
    pub fn keys(
        &self,
        kinds: &[(&str, &'static [&'static str])],
    ) -> Option<&'static [&'static str]> {
        let name = self.value.as_ref()?.get_ref().as_str()?;
        kinds
            .iter()
            .find(|(kind, _)| *kind == name)
            .map(|(_, keys)| *keys)
    }
}

/// What a distribution table is called in messages.
pub const DIST_TABLE: &str =
    "a distribution table such as { dist = \"constant\", value = \"10ms\" }";
/// What a budget table is called in messages.
pub const BUDGET_TABLE: &str = "a budget table such as { kind = \"ratio\", ratio = 0.1 }";

/// Implements `Deserialize` for a tagged table: a struct with a `tag: Tag` field and one
/// `Option<Spanned<_>>` field per key of any kind.
macro_rules! tagged_table {
    ($ty:ident, $tag:literal, $kinds:expr, $what:expr, { $($field:ident),* $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        let mut out = $ty::default();
                        let tag = read_tagged(map, $what, $tag, $kinds, |key, map| {
                            match key {
                                $(stringify!($field) => out.$field = Some(map.next_value()?),)*
                                _ => return Ok(false),
                            }
                            Ok(true)
                        })?;
                        out.tag = tag;
                        // A key read before the tag was typed as any kind's: move the
                        // ones the named kind does not take to the strays.
                        if let Some(keys) = out.tag.keys($kinds) {
                            $(
                                if !keys.contains(&stringify!($field))
                                    && let Some(v) = out.$field.take()
                                {
                                    out.tag.stray.push(Stray {
                                        key: stringify!($field).to_string(),
                                        value: v.span(),
                                    });
                                }
                            )*
                        }
                        Ok(out)
                    }
                }
                deserializer.deserialize_any(V)
            }
        }
    };
}

/// A distribution table: `{ dist = "normal", mean = "10ms", sd = "2ms" }`. Which keys are
/// required depends on `dist` ([`DIST_KINDS`]); validation checks them.
#[derive(Debug, Clone, Default)]
pub struct RawDist {
    /// `dist` and any key the distribution does not take.
    pub tag: Tag,
    /// Constant: the value.
    pub value: Option<Spanned<RawDuration>>,
    /// Uniform over `[min, max)`.
    pub min: Option<Spanned<RawDuration>>,
    pub max: Option<Spanned<RawDuration>>,
    /// Normal (negative samples folded to `|x|`) and exponential.
    pub mean: Option<Spanned<RawDuration>>,
    pub sd: Option<Spanned<RawDuration>>,
    /// Log-normal: the median (`exp(mu)`) and the shape sigma (standard deviation of the
    /// underlying normal).
    pub median: Option<Spanned<RawDuration>>,
    pub sigma: Option<Spanned<f64>>,
}

tagged_table!(RawDist, "dist", DIST_KINDS, DIST_TABLE, {
    value, min, max, mean, sd, median, sigma,
});

/// `budget = { kind = "...", ... }`: which keys apply depends on `kind` ([`BUDGET_KINDS`]).
#[derive(Debug, Clone, Default)]
pub struct RawBudget {
    /// `kind` and any key the budget kind does not take.
    pub tag: Tag,
    /// `ratio`: retries limited to a share of first attempts in a rolling window (seed 002,
    /// Finagle).
    pub ratio: Option<Spanned<f64>>,
    pub window: Option<Spanned<RawDuration>>,
    pub min_per_s: Option<Spanned<f64>>,
    pub per_request: Option<Spanned<f64>>,
    pub deposit: Option<Spanned<String>>,
    /// `token_bucket`: gRPC retry throttling.
    pub max_tokens: Option<Spanned<f64>>,
    pub token_ratio: Option<Spanned<f64>>,
    /// `quota`: the AWS SDK standard-mode retry quota.
    pub capacity: Option<Spanned<i64>>,
    pub retry_cost: Option<Spanned<i64>>,
    pub timeout_cost: Option<Spanned<i64>>,
    pub throttle_cost: Option<Spanned<i64>>,
    pub success_refund: Option<Spanned<i64>>,
    /// `adaptive`: Brooker's bucket, filled by first attempts (or successes), drained by
    /// retries.
    pub fill_per_call: Option<Spanned<f64>>,
    pub fill_per_success: Option<Spanned<f64>>,
    pub size: Option<Spanned<f64>>,
    /// `concurrent`: Envoy's limit on retries in progress.
    pub percent: Option<Spanned<f64>>,
    pub min_retries: Option<Spanned<i64>>,
    /// Every kind: `client` or `global`.
    pub scope: Option<Spanned<String>>,
}

tagged_table!(RawBudget, "kind", BUDGET_KINDS, BUDGET_TABLE, {
    ratio, window, min_per_s, per_request, deposit, max_tokens, token_ratio, capacity,
    retry_cost, timeout_cost, throttle_cost, success_refund, fill_per_call,
    fill_per_success, size, percent, min_retries, scope,
});
