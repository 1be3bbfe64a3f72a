//! Retry budgets and circuit breakers, the `budget` and `breaker` tables of a retry policy
//! (`[retry]`, a `[[strategy]]`, or a population's or service's `retry`): each kind's keys,
//! their ranges and defaults, and the `client` or `global` scope of the instance.

use toml::Spanned;

use super::{Check, spelled};
use crate::model::policy::{
    BreakerSpec, BreakerWindow, BucketStart, BudgetKind, BudgetSpec, Fill, HalfOpenRule,
    LimiterSpec, Scope,
};
use crate::scenario::raw::{BUDGET_KINDS, RawBreaker, RawBudget, RawLimiter};
use crate::time::SimDuration;

impl Check<'_> {
    fn scope(&mut self, v: &Option<Spanned<String>>, key: &str, default: Scope) -> Scope {
        self.either(
            spelled(v),
            key,
            ("client", Scope::Client),
            ("global", Scope::Global),
            default,
        )
    }

    /// A `budget` table; `None` (reported) when its `kind` is missing or unknown.
    pub(super) fn budget(&mut self, v: &Spanned<RawBudget>, key: &str) -> Option<BudgetSpec> {
        let b = v.get_ref();
        let kind = self.kind_of(Some(v.span()), key, "kind", &b.tag, BUDGET_KINDS)?;
        let k = |f: &str| format!("{key}.{f}");
        // An optional number: `default` when absent, and (reported) when out of range.
        let num = |c: &mut Self,
                   x: &Option<Spanned<f64>>,
                   field: &str,
                   default: f64,
                   ok: fn(f64) -> bool,
                   expected: &str| {
            x.as_ref()
                .and_then(|x| c.float(x, &k(field), ok, expected))
                .unwrap_or(default)
        };
        let count =
            |c: &mut Self, x: &Option<Spanned<i64>>, field: &str, default: u64, min: i64| {
                x.as_ref()
                    .and_then(|x| c.int(x, &k(field), min, i64::MAX))
                    .map_or(default, |x| x as u64)
            };
        let milli = |x: f64| (x * 1000.0).round() as u64;
        let scope = |c: &mut Self, default: Scope| c.scope(&b.scope, &k("scope"), default);
        let spec = match kind {
            "ratio" => {
                let deposit = self.either(
                    spelled(&b.deposit),
                    &k("deposit"),
                    ("request", Fill::Call),
                    ("success", Fill::Success),
                    Fill::Call,
                );
                // Finagle's and tower's range (`ScaleFactor`): 2.0 allows two retries per
                // deposit, 1000 a withdrawal of one unit.
                let ratio_ok = |x: f64| (0.0..=1000.0).contains(&x);
                BudgetSpec {
                    kind: BudgetKind::Ratio {
                        ratio: num(
                            self,
                            &b.ratio,
                            "ratio",
                            0.1,
                            ratio_ok,
                            "a ratio in [0, 1000]",
                        ),
                        window: b
                            .window
                            .as_ref()
                            .and_then(|w| self.duration(w, &k("window"), true))
                            .unwrap_or(SimDuration::from_secs(10)),
                        min_per_s: num(
                            self,
                            &b.min_per_s,
                            "min_per_s",
                            0.0,
                            |x| x >= 0.0,
                            "a rate >= 0",
                        ),
                        per_request: b.per_request.as_ref().map(|x| {
                            self.float(
                                x,
                                &k("per_request"),
                                |x| x >= 0.0,
                                "a share of the balance >= 0",
                            )
                            .unwrap_or(0.0)
                        }),
                        deposit,
                    },
                    scope: scope(self, Scope::Global),
                }
            }
            "token_bucket" => {
                let max = num(
                    self,
                    &b.max_tokens,
                    "max_tokens",
                    10.0,
                    |x| x > 0.0 && x <= 1000.0,
                    "max_tokens in (0, 1000]",
                );
                let ratio = num(
                    self,
                    &b.token_ratio,
                    "token_ratio",
                    0.1,
                    |x| x > 0.0,
                    "token_ratio > 0",
                );
                BudgetSpec {
                    kind: BudgetKind::TokenBucket {
                        max_milli: milli(max),
                        ratio_milli: milli(ratio).max(1),
                    },
                    scope: scope(self, Scope::Client),
                }
            }
            "quota" => {
                let retry = count(self, &b.retry_cost, "retry_cost", 5, 0);
                BudgetSpec {
                    kind: BudgetKind::Quota {
                        capacity: count(self, &b.capacity, "capacity", 500, 1),
                        retry_cost: retry,
                        timeout_cost: count(self, &b.timeout_cost, "timeout_cost", 10, 0),
                        throttle_cost: count(self, &b.throttle_cost, "throttle_cost", retry, 0),
                        success_refund: count(self, &b.success_refund, "success_refund", 1, 0),
                    },
                    scope: scope(self, Scope::Client),
                }
            }
            "adaptive" => {
                let (fill_key, fill_value, fill_on) = match (&b.fill_per_call, &b.fill_per_success)
                {
                    (Some(_), Some(second)) => {
                        self.err(
                            Some(self.key_span("fill_per_success", second.span())),
                            &k("fill_per_success"),
                            "expected one of `fill_per_call` (each first attempt fills the \
                             bucket) or `fill_per_success` (each success does), found both",
                        );
                        ("fill_per_call", &b.fill_per_call, Fill::Call)
                    }
                    (None, Some(_)) => ("fill_per_success", &b.fill_per_success, Fill::Success),
                    (_, None) => ("fill_per_call", &b.fill_per_call, Fill::Call),
                };
                let fill = num(
                    self,
                    fill_value,
                    fill_key,
                    0.1,
                    |x| x > 0.0,
                    &format!("{fill_key} > 0"),
                );
                let size = num(
                    self,
                    &b.size,
                    "size",
                    5.0,
                    |x| x >= 1.0,
                    "a size of at least 1 (a retry takes a whole token)",
                );
                BudgetSpec {
                    kind: BudgetKind::Adaptive {
                        fill_milli: milli(fill).max(1),
                        size_milli: milli(size),
                        fill_on,
                    },
                    scope: scope(self, Scope::Client),
                }
            }
            _ => BudgetSpec {
                kind: BudgetKind::Concurrent {
                    percent: num(
                        self,
                        &b.percent,
                        "percent",
                        20.0,
                        |x| (0.0..=100.0).contains(&x),
                        "a percentage in [0, 100]",
                    ),
                    min_retries: count(self, &b.min_retries, "min_retries", 3, 0),
                },
                scope: scope(self, Scope::Client),
            },
        };
        Some(spec)
    }

    pub(super) fn breaker(&mut self, v: &Spanned<RawBreaker>, key: &str) -> BreakerSpec {
        let b = v.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        let window = match (&b.window, &b.window_calls) {
            (Some(_), Some(calls)) => {
                self.err(
                    Some(calls.span()),
                    &k("window_calls"),
                    "expected either `window` (a time window) or `window_calls` (the last N \
                     calls), found both"
                        .to_string(),
                );
                None
            }
            (None, Some(calls)) => self
                .int(calls, &k("window_calls"), 1, u32::MAX as i64)
                .map(|n| BreakerWindow::Calls(n as u32)),
            (Some(d), None) => self
                .duration(d, &k("window"), true)
                .map(BreakerWindow::Time),
            (None, None) => None,
        }
        .unwrap_or(BreakerWindow::Time(SimDuration::from_secs(10)));
        let window = self.window_buckets(b, window, key);
        let half_open = self.either(
            spelled(&b.half_open),
            &k("half_open"),
            ("all", HalfOpenRule::All),
            ("rate", HalfOpenRule::Rate),
            HalfOpenRule::All,
        );
        BreakerSpec {
            failure_rate: b
                .failure_rate
                .as_ref()
                .and_then(|x| {
                    self.float(
                        x,
                        &k("failure_rate"),
                        |x| x > 0.0 && x <= 1.0,
                        "a rate in (0, 1]",
                    )
                })
                .unwrap_or(0.5),
            window,
            min_calls: {
                let min_calls = b
                    .min_calls
                    .as_ref()
                    .and_then(|x| self.int(x, &k("min_calls"), 1, u32::MAX as i64))
                    .unwrap_or(20) as u32;
                // A window of N calls never holds more than N: Resilience4j reads a larger
                // minimum as N (its CircuitBreakerMetrics takes the smaller of the two).
                match window {
                    BreakerWindow::Calls(n) => min_calls.min(n),
                    BreakerWindow::Time(_) | BreakerWindow::Buckets { .. } => min_calls,
                }
            },
            open_for: b
                .open_for
                .as_ref()
                .and_then(|d| self.duration(d, &k("open_for"), true))
                .unwrap_or(SimDuration::from_secs(5)),
            half_open_probes: b
                .half_open_probes
                .as_ref()
                .and_then(|x| self.int(x, &k("half_open_probes"), 1, u32::MAX as i64))
                .unwrap_or(3) as u32,
            half_open,
            scope: self.scope(&b.scope, &k("scope"), Scope::Client),
            retries_only: b.retries_only.unwrap_or(false),
            trip_on_failure: self.either(
                spelled(&b.trip_on),
                &k("trip_on"),
                ("outcome", false),
                ("failure", true),
                false,
            ),
            slow_call: b
                .slow_call
                .as_ref()
                .and_then(|d| self.duration(d, &k("slow_call"), true)),
            slow_call_rate: match (&b.slow_call_rate, &b.slow_call) {
                (None, _) => 1.0,
                (Some(x), None) => {
                    self.err(
                        Some(x.span()),
                        &k("slow_call_rate"),
                        "expected `slow_call` (the time after which a call is slow) beside \
                         slow_call_rate, found none"
                            .to_string(),
                    );
                    1.0
                }
                (Some(x), Some(_)) => self
                    .float(
                        x,
                        &k("slow_call_rate"),
                        |x| x > 0.0 && x <= 1.0,
                        "a rate in (0, 1]",
                    )
                    .unwrap_or(1.0),
            },
        }
    }

    /// A time window cut into `window_buckets` buckets starting at `buckets_from`, when set.
    fn window_buckets(
        &mut self,
        b: &RawBreaker,
        window: BreakerWindow,
        key: &str,
    ) -> BreakerWindow {
        let k = |f: &str| format!("{key}.{f}");
        let start = match &b.buckets_from {
            None => BucketStart::Clock,
            Some(s) if b.window_buckets.is_none() => {
                self.err(
                    Some(s.span()),
                    &k("buckets_from"),
                    "expected `window_buckets` (the buckets whose start it sets) beside \
                     buckets_from, found none"
                        .to_string(),
                );
                BucketStart::Clock
            }
            from => self.either(
                spelled(from),
                &k("buckets_from"),
                ("clock", BucketStart::Clock),
                ("outcome", BucketStart::Outcome),
                BucketStart::Clock,
            ),
        };
        let Some(n) = &b.window_buckets else {
            return window;
        };
        let BreakerWindow::Time(width) = window else {
            self.err(
                Some(n.span()),
                &k("window_buckets"),
                "expected a time `window` to cut into buckets, found `window_calls`".to_string(),
            );
            return window;
        };
        match self.int(n, &k("window_buckets"), 1, u32::MAX as i64) {
            Some(count) if width.as_nanos() < count as u64 => {
                self.err(
                    Some(n.span()),
                    &k("window_buckets"),
                    format!(
                        "expected at most one bucket per nanosecond of the window ({width}), found {count}"
                    ),
                );
                window
            }
            Some(count) => BreakerWindow::Buckets {
                window: width,
                count: count as u32,
                start,
            },
            None => window,
        }
    }

    pub(super) fn limiter(&mut self, v: &Spanned<RawLimiter>, key: &str) -> LimiterSpec {
        let l = v.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        let num = |c: &mut Self,
                   x: &Option<Spanned<f64>>,
                   field: &str,
                   default: f64,
                   ok: fn(f64) -> bool,
                   expected: &str| {
            x.as_ref()
                .and_then(|x| c.float(x, &k(field), ok, expected))
                .unwrap_or(default)
        };
        LimiterSpec {
            beta: num(
                self,
                &l.beta,
                "beta",
                0.7,
                |x| x > 0.0 && x < 1.0,
                "a number in (0, 1)",
            ),
            scale: num(self, &l.scale, "scale", 0.4, |x| x > 0.0, "a number > 0"),
            min_fill_rate: num(
                self,
                &l.min_fill_rate,
                "min_fill_rate",
                0.5,
                |x| x > 0.0,
                "a rate > 0 (tokens per second)",
            ),
            scope: self.scope(&l.scope, &k("scope"), Scope::Client),
        }
    }
}
