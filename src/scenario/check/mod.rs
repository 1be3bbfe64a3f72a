//! Raw -> model: turning a parsed [`RawScenario`] into a validated [`Scenario`].
//!
//! This module owns the meaning of the file format: defaults, ranges, cross-key rules, and
//! the wording and position of every semantic error. `Check` collects problems while
//! building the typed scenario, so one pass reports them all. The work is split by table:
//! this file holds the primitives (numbers, durations, names) and the
//! top-level assembly; `clients.rs` the populations, `server.rs` the servers and the service
//! graph (`graph.rs` its pure rules), and `retry.rs` the retry policies, merged in layers,
//! with their budgets and breakers in `budget.rs`; tagged tables (distributions, the kind
//! of a budget) in `tagged.rs`. Nothing here is imported by
//! [`crate::model`]: raw -> model is one direction.

mod budget;
mod clients;
mod graph;
mod retry;
mod server;
mod services;
mod tagged;
#[cfg(test)]
mod tests;

use std::ops::Range;

use toml::Spanned;

use crate::error::{Fault, ScenarioError, ScenarioErrors};
use crate::model::dist::Dist;
use crate::model::policy::Strategy;
use crate::model::{FallbackSpec, Hint, MAX_BUCKETS, Scenario, valid_name};
use crate::scenario::error_at;
use crate::scenario::guess::guess_value;
use crate::scenario::raw::{RawDuration, RawPolicy, RawScenario};
use crate::scenario::trace::Traces;
use crate::time::{SimDuration, SimTime};

/// Validates a parsed file. `file` names it in messages; `src` is its text (for positions);
/// `traces` reads the trace files it names (relative to its folder).
pub fn scenario(
    raw: &RawScenario,
    file: &str,
    src: &str,
    traces: &mut Traces,
) -> Result<Scenario, ScenarioErrors> {
    let mut c = Check {
        file,
        src,
        traces,
        errors: Vec::new(),
        attempts_reported: false,
    };
    let scenario = c.scenario(raw);
    if c.errors.is_empty() {
        Ok(scenario)
    } else {
        Err(ScenarioErrors(c.errors))
    }
}

/// Collects problems while building the typed scenario. Each helper records an error and
/// returns `None` (callers substitute a placeholder and carry on), so one pass finds them all.
struct Check<'a> {
    file: &'a str,
    src: &'a str,
    traces: &'a mut Traces,
    errors: Vec<ScenarioError>,
    /// A missing `max_attempts` was reported once for [retry]; strategies need not repeat it.
    attempts_reported: bool,
}

/// Where a table starts, for "missing key" messages; `None` when the table itself is absent.
type At = Option<Range<usize>>;

/// A TOML integer or float as a number.
fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// A spelled key's text and where it was written, for [`Check::either`].
fn spelled(v: &Option<toml::Spanned<String>>) -> Option<(&str, At)> {
    v.as_ref().map(|s| (s.get_ref().as_str(), Some(s.span())))
}

impl Check<'_> {
    fn err(&mut self, span: At, key: &str, msg: impl Into<String>) {
        self.push(error_at(self.file, self.src, span, key, msg.into()));
    }

    /// Reports the required key at `key` (a dotted path) missing, saying so in `msg`.
    /// `or_in_retry`: a strategy's key that `[retry]` could have set instead.
    fn missing_with(&mut self, span: At, key: &str, msg: String, or_in_retry: bool) {
        let leaf = key.rsplit_once('.').map_or(key, |(_, leaf)| leaf);
        let fault = Fault::MissingKey {
            key: leaf.into(),
            or_in_retry,
        };
        self.push(error_at(self.file, self.src, span, key, msg).with_fault(fault));
    }

    /// Reports the unknown key at `key`, guessed in `msg` to be one of `guesses`.
    fn unknown_key(&mut self, span: At, key: &str, msg: String, guesses: &[&str]) {
        let guesses = guesses.iter().map(|g| g.to_string()).collect();
        let e = error_at(self.file, self.src, span, key, msg);
        self.push(e.with_fault(Fault::UnknownKey { guesses }));
    }

    fn push(&mut self, e: ScenarioError) {
        // A [retry] default is checked once per strategy that inherits it: report it once.
        if !self.errors.contains(&e) {
            self.errors.push(e);
        }
    }

    /// A key spelled one of two ways: `value` (as written, and where) `first.0` gives
    /// `first.1`, `second.0` gives `second.1`. Anything else is reported as "expected
    /// "first" or "second", found ..." and, like an absent key, gives `absent`.
    fn either<T>(
        &mut self,
        value: Option<(&str, At)>,
        key: &str,
        first: (&str, T),
        second: (&str, T),
        absent: T,
    ) -> T {
        self.either_knowing(value, key, first, second, absent, &[])
    }

    /// [`Check::either`], knowing `synonyms`: other names of the two values, `(name, value,
    /// what the name means)`. A synonym is answered with the value it means, which
    /// may be far from it in spelling (`filo` is `lifo`, and one letter from `fifo`).
    fn either_knowing<T>(
        &mut self,
        value: Option<(&str, At)>,
        key: &str,
        first: (&str, T),
        second: (&str, T),
        absent: T,
        synonyms: &[(&str, &str, &str)],
    ) -> T {
        match value {
            None => absent,
            Some((v, _)) if v == first.0 => first.1,
            Some((v, _)) if v == second.0 => second.1,
            Some((other, span)) => {
                let guess = synonyms
                    .iter()
                    .find(|(name, _, _)| name.eq_ignore_ascii_case(other))
                    .map(|(_, means, what)| format!(" ({what}: did you mean \"{means}\"?)"))
                    .unwrap_or_else(|| guess_value(other, [first.0, second.0]));
                self.err(
                    span,
                    key,
                    format!(
                        "expected \"{}\" or \"{}\", found \"{other}\"{guess}",
                        first.0, second.0,
                    ),
                );
                absent
            }
        }
    }

    /// How a value was written, for "found ...": the source text when `span` is exactly that
    /// value (a quoted string), else `fallback`.
    fn written(&self, span: &At, fallback: impl std::fmt::Display) -> String {
        span.as_ref()
            .and_then(|s| self.src.get(s.clone()))
            .filter(|t| t.len() <= 40 && (t.starts_with('"') || t.starts_with('\'')))
            .map(str::to_string)
            .unwrap_or_else(|| format!("\"{fallback}\""))
    }

    fn missing(&mut self, span: At, key: &str) {
        let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
        let msg = if table.is_empty() {
            format!("missing required key `{leaf}`")
        } else {
            format!("missing required key `{leaf}` in {table}")
        };
        self.missing_with(span, key, msg, false);
    }

    fn int(&mut self, v: &Spanned<i64>, key: &str, min: i64, max: i64) -> Option<i64> {
        let x = *v.get_ref();
        if x < min || x > max {
            let expected = if max == i64::MAX || (x < min && max as u64 == u32::MAX as u64) {
                format!("an integer >= {min}")
            } else {
                format!("an integer from {min} to {max}")
            };
            self.err(
                Some(v.span()),
                key,
                format!("expected {expected}, found {x}"),
            );
            None
        } else {
            Some(x)
        }
    }

    fn float(
        &mut self,
        v: &Spanned<f64>,
        key: &str,
        ok: fn(f64) -> bool,
        expected: &str,
    ) -> Option<f64> {
        let x = *v.get_ref();
        if x.is_finite() && ok(x) {
            Some(x)
        } else {
            self.err(
                Some(v.span()),
                key,
                format!("expected {expected}, found {x}"),
            );
            None
        }
    }

    /// A duration; `positive` refuses zero. The words `none` and `auto` are refused.
    fn duration_at(
        &mut self,
        v: &RawDuration,
        span: At,
        key: &str,
        positive: bool,
    ) -> Option<SimDuration> {
        let expected = if positive {
            "a duration > 0 with a unit, such as \"100ms\""
        } else {
            "a duration with a unit, such as \"100ms\""
        };
        match v {
            RawDuration::Given(d) if positive && d.is_zero() => {
                let found = self.written(&span, d);
                self.err(span, key, format!("expected {expected}, found {found}"));
                None
            }
            RawDuration::Given(d) => Some(*d),
            RawDuration::None => {
                self.err(span, key, format!("expected {expected}, found \"none\""));
                None
            }
            RawDuration::Auto => {
                self.err(span, key, format!("expected {expected}, found \"auto\""));
                None
            }
            RawDuration::Bad(found) | RawDuration::Word { found, .. } => {
                self.err(span, key, format!("expected {expected}, {found}"));
                None
            }
        }
    }

    fn duration(
        &mut self,
        v: &Spanned<RawDuration>,
        key: &str,
        positive: bool,
    ) -> Option<SimDuration> {
        self.duration_at(v.get_ref(), Some(v.span()), key, positive)
    }

    /// An optional limit: absent or `"none"` is no limit, else a duration > 0.
    fn limit(&mut self, v: Option<&Spanned<RawDuration>>, key: &str) -> Option<SimDuration> {
        let s = v?;
        let span = Some(s.span());
        let found = match s.get_ref() {
            RawDuration::None => return None,
            RawDuration::Given(d) if !d.is_zero() => return Some(*d),
            RawDuration::Given(d) => format!("found {}", self.written(&span, d)),
            RawDuration::Auto => "found \"auto\"".to_string(),
            RawDuration::Bad(found) => found.clone(),
            RawDuration::Word { word, found } => word_guess(word, found, &["none"]),
        };
        self.err(
            span,
            key,
            format!("expected \"none\" or a duration > 0 with a unit, such as \"100ms\", {found}"),
        );
        None
    }

    /// A server hint: `"none"`, `"auto"`, or a duration > 0.
    fn hint(&mut self, v: Option<&Spanned<RawDuration>>, key: &str) -> Hint {
        match v.map(|s| (s.get_ref(), s.span())) {
            None | Some((RawDuration::None, _)) => Hint::None,
            Some((RawDuration::Auto, _)) => Hint::Auto,
            Some((RawDuration::Given(d), span)) if *d > crate::engine::service::HINT_MAX => {
                self.err(
                    Some(span),
                    key,
                    format!(
                        "expected \"none\", \"auto\" or a duration > 0 of at most \"{}ms\" (24.8 days, the longest hint an event carries), found {d}",
                        crate::engine::service::HINT_MAX.as_nanos() / 1_000_000
                    ),
                );
                Hint::None
            }
            Some((RawDuration::Given(d), _)) if !d.is_zero() => Hint::Fixed(*d),
            Some((other, span)) => {
                let found = match other {
                    RawDuration::Bad(m) => m.clone(),
                    RawDuration::Word { word, found } => word_guess(word, found, &["none", "auto"]),
                    _ => format!("found {}", self.written(&Some(span.clone()), "0s")),
                };
                self.err(
                    Some(span),
                    key,
                    format!("expected \"none\", \"auto\" or a duration > 0, {found}"),
                );
                Hint::None
            }
        }
    }

    /// A two-item list `[a, b]` (a profile point, a slowdown pair); else an error.
    fn pair<'v>(
        &mut self,
        item: &'v Spanned<toml::Value>,
        key: &str,
        expected: &str,
    ) -> Option<(&'v toml::Value, &'v toml::Value)> {
        match item.get_ref() {
            toml::Value::Array(a) if a.len() == 2 => Some((&a[0], &a[1])),
            other => {
                self.err(
                    Some(item.span()),
                    key,
                    format!("expected {expected}, found {other}"),
                );
                None
            }
        }
    }

    fn name(&mut self, v: &Spanned<String>, key: &str) -> String {
        let name = v.get_ref();
        if !valid_name(name) {
            self.err(
                Some(v.span()),
                key,
                format!(
                    "expected 1 to 64 characters from a-z, 0-9, '_' and '-' (it names files), found \"{name}\""
                ),
            );
        }
        name.clone()
    }

    fn scenario(&mut self, raw: &RawScenario) -> Scenario {
        let name = match &raw.name {
            Some(n) => self.name(n, "name"),
            None => {
                self.missing(Some(0..0), "name");
                String::new()
            }
        };
        let seed = raw
            .seed
            .as_ref()
            .and_then(|s| self.int(s, "seed", 0, i64::MAX))
            .unwrap_or(1) as u64;
        let replications = raw
            .replications
            .as_ref()
            .and_then(|s| self.int(s, "replications", 1, 1_000_000))
            .unwrap_or(1) as u32;
        let time_limit = raw
            .time_limit
            .as_ref()
            .and_then(|d| self.duration(d, "time_limit", true))
            .unwrap_or(SimDuration::from_secs(3600));

        let populations = self.populations(raw);
        let network = self.network(raw);

        let defaults = RawPolicy::default();
        let retry = raw.retry.as_ref().map(|r| r.get_ref()).unwrap_or(&defaults);
        if let Some(n) = &retry.name {
            self.err(
                Some(n.span()),
                "retry.name",
                "unknown key `name` in [retry]: strategy names belong in [[strategy]]",
            );
        }
        // max_attempts usually lives in [retry]: when no strategy sets it either, say so once
        // there rather than once per strategy.
        if retry.max_attempts.is_none()
            && !raw.strategy.is_empty()
            && raw
                .strategy
                .iter()
                .all(|s| s.get_ref().max_attempts.is_none())
        {
            self.missing_with(
                raw.retry.as_ref().map(|r| r.span()),
                "retry.max_attempts",
                "missing required key `max_attempts` in [retry] (or in every [[strategy]])".into(),
                false,
            );
            self.attempts_reported = true;
        }

        let services = self.services(raw, network.as_ref(), retry);
        // After the server's problems: file-level problems (no position) come out in the
        // order a scenario is written, clients, network, server, strategies.
        if raw.strategy.is_empty() {
            self.err(
                None,
                "strategy",
                "expected at least one [[strategy]] table, found none",
            );
        }
        let fallback = raw.fallback.as_ref().map(|f| {
            self.not_a_service(
                f,
                "fallback",
                "the fallback server is outside the service graph",
            );
            FallbackSpec {
                server: self.server(f, "fallback"),
                latency: match &f.get_ref().latency {
                    Some(l) => self.dist(l, "fallback.latency"),
                    // Without [network], its absence has been reported.
                    None => network.clone().unwrap_or(Dist::Constant(SimDuration::ZERO)),
                },
            }
        });
        let metrics = raw.metrics.as_ref().map(|m| m.get_ref());
        let bucket_key = metrics.and_then(|m| m.bucket.as_ref());
        let bucket = bucket_key
            .and_then(|b| self.duration(b, "metrics.bucket", true))
            .unwrap_or(SimDuration::from_millis(100));
        // A run that reaches time_limit holds time_limit / bucket buckets in memory (and in
        // timeseries.csv): a typo such as bucket = "1ns" must be refused, not exhaust memory.
        let buckets = time_limit.as_nanos().div_ceil(bucket.as_nanos().max(1));
        if buckets > MAX_BUCKETS {
            let (span, key) = match (bucket_key, &raw.time_limit) {
                (Some(b), _) => (Some(b.span()), "metrics.bucket"),
                (None, Some(t)) => (Some(t.span()), "time_limit"),
                (None, None) => (None, "metrics.bucket"),
            };
            self.err(
                span,
                key,
                format!(
                    "expected at most {MAX_BUCKETS} time-series buckets (time_limit / metrics.bucket), found {buckets} ({time_limit} / {bucket}): raise metrics.bucket or lower time_limit"
                ),
            );
        }
        let trigger_end = metrics
            .and_then(|m| m.trigger_end.as_ref())
            .and_then(|t| self.duration(t, "metrics.trigger_end", false))
            .map(|d| SimTime(d.0));

        let has_fallback = fallback.is_some();
        if let Some(r) = &raw.retry {
            self.strategy(None, r, &defaults, has_fallback);
        }
        let mut strategies: Vec<Strategy> = Vec::new();
        for (i, s) in raw.strategy.iter().enumerate() {
            let strategy = self.strategy(Some(i), s, retry, has_fallback);
            if let Some(first) = strategies.iter().position(|t| t.name == strategy.name)
                && let Some(n) = &s.get_ref().name
            {
                self.err(
                    Some(n.span()),
                    &format!("strategy[{i}].name"),
                    format!(
                        "expected a unique name, found \"{}\" again (also strategy[{first}])",
                        strategy.name
                    ),
                );
            }
            strategies.push(strategy);
        }
        let population_policies = self.population_policies(raw, &strategies, retry, has_fallback);

        Scenario {
            name,
            description: raw.description.clone().unwrap_or_default(),
            seed,
            replications,
            time_limit,
            populations,
            // Without [network] every service sets its own latency: the entry's is the default.
            latency: network.unwrap_or_else(|| services[0].latency.clone()),
            services,
            fallback,
            bucket,
            trigger_end,
            strategies,
            population_policies,
        }
    }

    /// `[network].latency`; `None` when absent. [network] is required unless every
    /// `[[service]]` (and `[fallback]`, when present) sets its own `latency`.
    fn network(&mut self, raw: &RawScenario) -> Option<Dist> {
        match raw.network.as_ref() {
            None => {
                let needed = raw.service.is_empty()
                    || raw.service.iter().any(|s| s.get_ref().latency.is_none())
                    || raw
                        .fallback
                        .as_ref()
                        .is_some_and(|f| f.get_ref().latency.is_none());
                if needed {
                    let msg = if raw.service.is_empty() {
                        "missing required table [network] (with `latency`)"
                    } else {
                        "missing required table [network] (with `latency`), needed unless every [[service]] and [fallback] sets its own `latency`"
                    };
                    self.err(None, "network", msg);
                }
                None
            }
            Some(n) => match &n.get_ref().latency {
                Some(l) => Some(self.dist(l, "network.latency")),
                None => {
                    self.missing(Some(n.span()), "network.latency");
                    Some(Dist::Constant(SimDuration::ZERO))
                }
            },
        }
    }
}

/// What a key that takes words besides durations found, given the `word` written: `found
/// "nnoe"` and the likely word meant when one of `words` is, else `found` as it is.
fn word_guess(word: &str, found: &str, words: &[&str]) -> String {
    match guess_value(word, words.iter().copied()) {
        guess if guess.is_empty() => found.to_string(),
        guess => format!("found \"{word}\"{guess}"),
    }
}
