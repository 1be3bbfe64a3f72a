//! `[retry]`, `[[strategy]]`, and the `retry` tables of populations and services: retry
//! policies with their budgets and breakers (those two tables are checked in `budget.rs`).
//! A policy is built from layers of tables (a population's override > the strategy >
//! `[retry]`), key by key, and every error names the key of the layer it came from.

use toml::Spanned;

use super::{At, Check};
use crate::model::backoff::{Backoff, Jitter};
use crate::model::outcome::{GiveUpReason, ReasonSet, Status, StatusSet};
use crate::model::policy::{
    Beyond, Combine, RateLimitLadder, RetryAfterPolicy, RetryPolicy, Strategy,
};
use crate::scenario::guess::{guess_value, quoted_words};
use crate::scenario::raw::{RawDuration, RawJitter, RawPolicy};

/// The words `jitter` takes (besides its tables).
const JITTER_WORDS: [&str; 5] = ["none", "full", "equal", "decorrelated", "decorrelated-v2"];
/// The reasons `fallback_on` takes.
const FALLBACK_REASONS: [&str; 6] = [
    "attempts",
    "deadline",
    "non_retryable",
    "rate_limit_escalation",
    "budget",
    "breaker_open",
];
/// The outcomes `retry_on` takes.
const RETRYABLE: [&str; 6] = ["503", "500", "429", "timeout", "unreachable", "409"];
use crate::time::SimDuration;

/// One layer of a merged policy: a policy table and the key path that names its keys.
pub(super) struct Layer<'r> {
    pub policy: &'r RawPolicy,
    /// `strategy[1]`, `retry`, `clients[0].retry`, `service[2].retry`.
    pub prefix: String,
}

impl Check<'_> {
    /// Builds strategy `i` from its table `t` and the `[retry]` defaults. With `i = None`,
    /// checks the `[retry]` table `t` on its own instead: its values are refused even when
    /// every strategy overrides them, and keys only a strategy must have are not required.
    pub(super) fn strategy(
        &mut self,
        i: Option<usize>,
        t: &Spanned<RawPolicy>,
        retry: &RawPolicy,
        has_fallback: bool,
    ) -> Strategy {
        let s = t.get_ref();
        let at = Some(t.span());
        let prefix = match i {
            Some(i) => format!("strategy[{i}]"),
            None => "retry".to_string(),
        };
        let name = match (&s.name, i) {
            (Some(n), Some(_)) => self.name(n, &format!("{prefix}.name")),
            (None, Some(i)) => {
                self.missing(at.clone(), &format!("{prefix}.name"));
                format!("strategy-{i}")
            }
            // `name` under [retry] is refused by the caller.
            (_, None) => String::new(),
        };
        // A strategy value overrides the [retry] default; the key names where it came from.
        let layers = [
            Layer {
                policy: s,
                prefix: prefix.clone(),
            },
            Layer {
                policy: retry,
                prefix: "retry".to_string(),
            },
        ];
        let strategy = self.policy(&layers, at, &prefix, i.is_some(), has_fallback);
        Strategy { name, ..strategy }
    }

    /// Builds a policy (with an empty name) from `layers`, highest priority first: each key
    /// is taken from the first layer that sets it, and an error names that layer's key.
    /// `prefix` and `at` name the table missing keys are reported against; with `required`
    /// false, `base`, `cap` and `max_attempts` may be missing (the `[retry]` table alone).
    pub(super) fn policy(
        &mut self,
        layers: &[Layer],
        at: At,
        prefix: &str,
        required: bool,
        has_fallback: bool,
    ) -> Strategy {
        let here = if prefix.starts_with("strategy[") {
            "this [[strategy]]".to_string()
        } else {
            prefix.to_string()
        };
        macro_rules! pick {
            ($field:ident) => {
                layers.iter().find_map(|l| {
                    l.policy
                        .$field
                        .as_ref()
                        .map(|v| (v, format!("{}.{}", l.prefix, stringify!($field))))
                })
            };
        }
        // `None` when missing or invalid (already reported): then cap >= base is not checked.
        let required_duration = |c: &mut Self,
                                 v: Option<(&Spanned<RawDuration>, String)>,
                                 field: &str| match v {
            Some((v, key)) => c.duration(v, &key, false),
            None if !required => None,
            None => {
                c.missing_with(
                        at.clone(),
                        &format!("{prefix}.{field}"),
                        format!(
                            "missing required key `{field}` in {prefix} (set it in {here} or in [retry])"
                        ),
                        true,
                    );
                None
            }
        };
        let base = required_duration(self, pick!(base), "base");
        let cap = required_duration(self, pick!(cap), "cap");
        if let (Some(base), Some(cap)) = (base, cap)
            && required
            && cap < base
            && let Some((v, key)) = pick!(cap)
        {
            // A population's `retry` or a strategy may set one of the two and the other
            // come from a table below it: name where the base was set when it is elsewhere.
            let base_key = pick!(base).map(|(_, k)| k).unwrap_or_default();
            let from = match base_key.rsplit_once('.') {
                Some((table, _)) if key.rsplit_once('.').is_none_or(|(t, _)| t != table) => {
                    format!(", set by {base_key}")
                }
                _ => String::new(),
            };
            self.err(
                Some(v.span()),
                &key,
                format!("expected cap >= base ({base}{from}), found {cap}"),
            );
        }
        let (base, cap_set) = (base.unwrap_or_default(), cap);
        let cap = cap.unwrap_or_default();
        let multiplier = pick!(multiplier)
            .and_then(|(v, key)| self.float(v, &key, |x| x >= 1.0, "a multiplier >= 1"))
            .unwrap_or(2.0);
        let jitter = match pick!(jitter) {
            None => Jitter::None,
            Some((v, key)) => self.jitter(v, &key),
        };
        let increment = pick!(increment)
            .and_then(|(v, key)| {
                let d = self.duration(v, &key, false)?;
                if !d.is_zero() && !jitter.uses_ladder()
                {
                    self.err(
                        Some(v.span()),
                        &key,
                        format!(
                            "expected no increment with jitter \"{}\", which does not use the ladder; found {d}",
                            jitter.describe()
                        ),
                    );
                }
                Some(d)
            })
            .unwrap_or(SimDuration::ZERO);
        let jitter_past_cap = match pick!(jitter_past_cap) {
            None => true,
            Some((v, key)) => {
                let on = *v.get_ref();
                if !on && !jitter.uses_ladder() {
                    self.err(
                        Some(v.span()),
                        &key,
                        format!(
                            "expected jitter_past_cap = true with jitter \"{}\", which does not use the ladder; found false",
                            jitter.describe()
                        ),
                    );
                }
                on
            }
        };
        // Checked where a whole policy is built (as cap >= base): `[retry]` alone may set a
        // throttle_base above its cap when every strategy sets a larger cap.
        let throttle_base = pick!(throttle_base).and_then(|(v, key)| {
            let d = self.duration(v, &key, false)?;
            if !required {
                return Some(d);
            }
            if let Some(cap) = cap_set
                && d > cap
            {
                self.err(
                    Some(v.span()),
                    &key,
                    format!("expected throttle_base <= cap ({cap}), found {d}"),
                );
            }
            if !jitter.uses_ladder() {
                self.err(
                    Some(v.span()),
                    &key,
                    format!(
                        "expected no throttle_base with jitter \"{}\", which carries each delay into the next on one base; found {d}",
                        jitter.describe()
                    ),
                );
            }
            Some(d)
        });
        let max_attempts = match pick!(max_attempts) {
            Some((v, key)) => self.int(v, &key, 1, u16::MAX as i64).unwrap_or(1) as u32,
            None if self.attempts_reported || !required => 1,
            None => {
                self.missing_with(
                    at.clone(),
                    &format!("{prefix}.max_attempts"),
                    format!(
                        "missing required key `max_attempts` in {prefix} (set it in [retry] or in {here})"
                    ),
                    true,
                );
                1
            }
        };
        let immediate_retries = pick!(immediate_retries)
            .and_then(|(v, key)| self.int(v, &key, 0, u16::MAX as i64))
            .unwrap_or(0) as u32;
        let timeout = pick!(timeout).and_then(|(v, key)| self.limit(Some(v), &key));
        let timeout_multiplier = pick!(timeout_multiplier)
            .and_then(|(v, key)| self.float(v, &key, |x| x >= 1.0, "a multiplier >= 1"))
            .unwrap_or(1.0);
        let connect_timeout = pick!(connect_timeout).and_then(|(v, key)| self.limit(Some(v), &key));
        let deadline = pick!(deadline).and_then(|(v, key)| self.limit(Some(v), &key));
        let clamp_to_deadline = pick!(clamp_to_deadline).is_some_and(|(v, _)| *v.get_ref());
        let retry_on = match pick!(retry_on) {
            None => StatusSet::all_retryable(),
            Some((v, key)) => self.retry_on(v, &key),
        };
        let retry_after = match pick!(retry_after) {
            None => RetryAfterPolicy::default(),
            Some((v, key)) => {
                let r = v.get_ref();
                let default = RetryAfterPolicy::default();
                let beyond = match r.beyond.as_ref().map(|b| (b.get_ref().as_str(), b.span())) {
                    // `max_raise` bounds a long hint already: by default it is clamped, not
                    // ignored (the AWS SDKs take any x-amz-retry-after, then bound it).
                    None if r.max_raise.is_some() => Beyond::Clamp,
                    None | Some(("ignore", _)) => Beyond::Ignore,
                    Some(("clamp", _)) => Beyond::Clamp,
                    Some((other, span)) => {
                        self.err(
                            Some(span),
                            &format!("{key}.beyond"),
                            format!(
                                "expected \"ignore\" or \"clamp\", found \"{other}\"{}",
                                guess_value(other, ["ignore", "clamp"])
                            ),
                        );
                        Beyond::Ignore
                    }
                };
                let combine = match r.combine.as_ref().map(|c| (c.get_ref().as_str(), c.span())) {
                    None | Some(("replace", _)) => Combine::Replace,
                    Some(("max", _)) => Combine::Max { raise: None },
                    Some((other, span)) => {
                        self.err(
                            Some(span),
                            &format!("{key}.combine"),
                            format!(
                                "expected \"replace\" or \"max\", found \"{other}\"{}",
                                guess_value(other, ["replace", "max"])
                            ),
                        );
                        Combine::Replace
                    }
                };
                let combine = match (&r.max_raise, combine) {
                    (None, c) => c,
                    (Some(d), Combine::Max { .. }) => Combine::Max {
                        raise: self.duration(d, &format!("{key}.max_raise"), false),
                    },
                    (Some(d), Combine::Replace) => {
                        self.err(
                            Some(d.span()),
                            &format!("{key}.max_raise"),
                            "expected max_raise only with combine = \"max\", found it with the hint replacing the delay (combine = \"replace\", the default)",
                        );
                        Combine::Replace
                    }
                };
                RetryAfterPolicy {
                    combine,
                    honor: r.honor.unwrap_or(true),
                    max: r
                        .max
                        .as_ref()
                        .map(|m| {
                            self.duration(m, &format!("{key}.max"), true)
                                .unwrap_or(default.max)
                        })
                        .unwrap_or(default.max),
                    beyond,
                    restart: r.restart.unwrap_or(false),
                }
            }
        };
        let rate_limit = pick!(rate_limit).map(|(v, key)| {
            let r = v.get_ref();
            let max_retries = r
                .max_retries
                .as_ref()
                .and_then(|m| self.int(m, &format!("{key}.max_retries"), 0, u16::MAX as i64))
                .unwrap_or(5) as u32;
            let escalate_after = match &r.escalate_after {
                None => max_retries,
                Some(e) => {
                    let x = self
                        .int(e, &format!("{key}.escalate_after"), 0, u16::MAX as i64)
                        .unwrap_or(0) as u32;
                    if x > max_retries {
                        self.err(
                            Some(e.span()),
                            &format!("{key}.escalate_after"),
                            format!(
                                "expected escalate_after <= max_retries ({max_retries}), found {x}"
                            ),
                        );
                    }
                    x
                }
            };
            let wait =
                |c: &mut Self, d: &Option<Spanned<RawDuration>>, field: &str, default: u64| {
                    d.as_ref()
                        .and_then(|d| c.duration(d, &format!("{key}.{field}"), true))
                        .unwrap_or(SimDuration::from_secs(default))
                };
            let on = match &r.on {
                None => {
                    let mut set = StatusSet::default();
                    set.insert(Status::TooManyRequests);
                    set
                }
                Some(v) => self.retry_on(v, &format!("{key}.on")),
            };
            let default_wait = wait(self, &r.default_wait, "default_wait", 5);
            let max_wait = wait(self, &r.max_wait, "max_wait", 60);
            // The wait is min(hint or default_wait, max_wait): a default written above the
            // maximum would never be waited, as a `cap` below `base` would not. (A lower
            // `max_wait` alone lowers the default wait with it.)
            if max_wait < default_wait {
                match (&r.default_wait, &r.max_wait) {
                    (Some(_), Some(written)) => self.err(
                        Some(written.span()),
                        &format!("{key}.max_wait"),
                        format!(
                            "expected max_wait >= default_wait ({default_wait}), found {max_wait}"
                        ),
                    ),
                    (Some(written), None) => self.err(
                        Some(written.span()),
                        &format!("{key}.default_wait"),
                        format!(
                            "expected default_wait <= max_wait ({max_wait}, its default), found {default_wait}"
                        ),
                    ),
                    _ => {}
                }
            }
            RateLimitLadder {
                on,
                max_retries,
                escalate_after,
                default_wait,
                max_wait,
            }
        });
        let budget = pick!(budget).and_then(|(v, key)| self.budget(v, &key));
        let breaker = pick!(breaker).map(|(v, key)| self.breaker(v, &key));
        let client_rate_limiter = pick!(client_rate_limiter).map(|(v, key)| self.limiter(v, &key));
        let fallback_on = match pick!(fallback_on) {
            None => ReasonSet::default(),
            Some((v, key)) => {
                let mut set = ReasonSet::default();
                for r in v.get_ref() {
                    match GiveUpReason::parse_fallback(r.get_ref()) {
                        Some(reason) => set.insert(reason),
                        None => self.err(
                            Some(r.span()),
                            &key,
                            format!(
                                "expected one of {}, found \"{}\"{}",
                                quoted_words(&FALLBACK_REASONS, ", "),
                                r.get_ref(),
                                guess_value(r.get_ref(), FALLBACK_REASONS)
                            ),
                        ),
                    }
                }
                if !set.is_empty() && !has_fallback {
                    self.err(
                        Some(v.span()),
                        &key,
                        "`fallback_on` needs a [fallback] table describing the fallback server, found none",
                    );
                }
                set
            }
        };
        Strategy {
            name: String::new(),
            backoff: Backoff {
                base,
                cap: cap.max(base),
                multiplier,
                increment,
                jitter,
                jitter_past_cap,
            },
            retry: RetryPolicy {
                max_attempts,
                timeout,
                timeout_multiplier,
                connect_timeout,
                deadline,
                clamp_to_deadline,
                retry_on,
                retry_after,
                immediate_retries,
                throttle_base,
                rate_limit,
                budget,
                breaker,
                client_rate_limiter,
                fallback_on,
            },
        }
    }

    fn jitter(&mut self, v: &Spanned<RawJitter>, key: &str) -> Jitter {
        let span = Some(v.span());
        match v.get_ref() {
            RawJitter::Word(w) => match w.as_str() {
                "none" => Jitter::None,
                "full" => Jitter::Full,
                "equal" => Jitter::Equal,
                "decorrelated" => Jitter::Decorrelated,
                "decorrelated-v2" => Jitter::DecorrelatedV2,
                other => {
                    self.err(
                        span,
                        key,
                        format!(
                            "expected {}, {{ proportional = f }}, {{ fraction = j }} or {{ additive = d }}, found \"{other}\"{}",
                            quoted_words(&JITTER_WORDS, ", "),
                            guess_value(other, JITTER_WORDS)
                        ),
                    );
                    Jitter::None
                }
            },
            RawJitter::Proportional(f) => self
                .float(
                    f,
                    &format!("{key}.proportional"),
                    |f| (0.0..1.0).contains(&f),
                    "a number in [0, 1)",
                )
                .map_or(Jitter::None, Jitter::Proportional),
            RawJitter::Fraction(j) => self
                .float(
                    j,
                    &format!("{key}.fraction"),
                    |j| (0.0..=1.0).contains(&j),
                    "a number in [0, 1]",
                )
                .map_or(Jitter::None, Jitter::Fraction),
            RawJitter::Additive(d) => self
                .duration(d, &format!("{key}.additive"), false)
                .map_or(Jitter::None, Jitter::Additive),
            RawJitter::Bad(found) => {
                self.err(
                    span,
                    key,
                    format!("expected {{ proportional = f }}, {{ fraction = j }} or {{ additive = d }}; {found}"),
                );
                Jitter::None
            }
        }
    }

    fn retry_on(&mut self, v: &Spanned<Vec<Spanned<toml::Value>>>, key: &str) -> StatusSet {
        let mut set = StatusSet::default();
        for (i, item) in v.get_ref().iter().enumerate() {
            let (text, shown) = match item.get_ref() {
                toml::Value::String(s) => (s.clone(), format!("\"{s}\"")),
                other => (other.to_string(), other.to_string()),
            };
            match Status::parse_retryable(&text) {
                Some(s) => set.insert(s),
                None => {
                    let trimmed = text.trim();
                    let valid = Status::parse_retryable(trimmed).is_some();
                    let code = trimmed.len() == 3 && trimmed.bytes().all(|b| b.is_ascii_digit());
                    let mut notes = Vec::new();
                    if trimmed != text && (valid || code) {
                        notes.push("no spaces around it");
                    }
                    if code && !valid && trimmed.starts_with('4') {
                        notes.push("4xx other than 409 and 429 are never retried");
                    }
                    let why = if notes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", notes.join("; "))
                    };
                    self.err(
                        Some(item.span()),
                        &format!("{key}[{i}]"),
                        format!(
                            "expected one of {}, found {shown}{why}{}",
                            quoted_words(&RETRYABLE, ", "),
                            // 504 is no misspelt 503, nor are 50x and 50.3: nothing with a
                            // digit in it is guessed at; a spaced name needs no guess.
                            if valid || text.bytes().any(|b| b.is_ascii_digit()) {
                                String::new()
                            } else {
                                guess_value(&text, RETRYABLE)
                            }
                        ),
                    );
                }
            }
        }
        set
    }
}
