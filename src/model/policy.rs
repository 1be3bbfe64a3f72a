//! A strategy's client-side rules: when to retry, how long to wait, and what bounds the storm.
//!
//! These are validated values plus the small pure rules that act on them (how a Retry-After
//! hint is chosen, how the rate-limit ladder waits, how the attempt timeout grows). The state
//! machines that carry budgets and breakers through a run live in [`crate::engine`].

use super::backoff::{Backoff, Jitter};
use super::outcome::{ReasonSet, Status, StatusSet};
use crate::time::SimDuration;

/// One `[[strategy]]`, with its `[retry]` defaults resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    /// Unique within the scenario; `[a-z0-9_-]{1,64}`.
    pub name: String,
    /// The delay ladder.
    pub backoff: Backoff,
    /// Everything else about retrying.
    pub retry: RetryPolicy,
}

/// When and how often a client retries.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Transport attempts per logical request, counting the first (>= 1).
    pub max_attempts: u32,
    /// Per-attempt timeout of the first attempt; `None` waits for the response however long.
    pub timeout: Option<SimDuration>,
    /// The attempt timeout grows by this factor per retry (>= 1; seed 000's timeout ladder).
    pub timeout_multiplier: f64,
    /// How long to wait for the server to be reached at all (`None`: no separate limit).
    pub connect_timeout: Option<SimDuration>,
    /// Per-request deadline, measured from when the request began (before any
    /// `client_rate_limiter` wait).
    pub deadline: Option<SimDuration>,
    /// A wait that would end at or after the deadline is shortened to end at it, and one
    /// last attempt is sent there (instead of giving up at once).
    pub clamp_to_deadline: bool,
    /// Failure classes that may be retried.
    pub retry_on: StatusSet,
    /// How a server's Retry-After hint is used.
    pub retry_after: RetryAfterPolicy,
    /// Retries sent at once, before the backoff ladder starts (urllib3 retries its first
    /// failure immediately): retry `n <= immediate_retries` waits 0, retry `n` after them
    /// waits the ladder's step `n - immediate_retries`.
    pub immediate_retries: u32,
    /// The backoff's `base` for a retry after a 429 (the AWS SDKs' throttling base: 1 s
    /// where other failures start at 50 ms); `None`: `base`.
    pub throttle_base: Option<SimDuration>,
    /// The separate 429 ladder, when configured.
    pub rate_limit: Option<RateLimitLadder>,
    /// A retry budget, when configured.
    pub budget: Option<BudgetSpec>,
    /// A circuit breaker, when configured.
    pub breaker: Option<BreakerSpec>,
    /// A client-side rate limiter in front of every attempt (the AWS SDKs' adaptive mode).
    pub client_rate_limiter: Option<LimiterSpec>,
    /// Give-up reasons that send the request to the fallback server instead.
    pub fallback_on: ReasonSet,
}

impl RetryPolicy {
    /// The timeout of transport attempt `attempt` (1-based): `timeout · multiplier^(attempt-1)`.
    pub fn attempt_timeout(&self, attempt: u32) -> Option<SimDuration> {
        self.timeout.map(|t| {
            if self.timeout_multiplier == 1.0 {
                t
            } else {
                let exp = attempt.saturating_sub(1).min(i32::MAX as u32) as i32;
                SimDuration::from_nanos_f64(t.as_nanos() as f64 * self.timeout_multiplier.powi(exp))
            }
        })
    }

    /// Whether a failure of class `s` may be retried at all.
    #[inline]
    pub fn retries(&self, s: Status) -> bool {
        s != Status::BadRequest && self.retry_on.contains(s)
    }
}

/// What to do with a hint outside `(0, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// Fall back to the computed delay (seed 003's validity range).
    Ignore,
    /// Use `min(hint, max)` (seed 000's "capped at 60 s").
    Clamp,
}

/// `retry_after = { honor, max, beyond }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryAfterPolicy {
    /// Whether hints are used at all.
    pub honor: bool,
    /// The largest usable hint (> 0).
    pub max: SimDuration,
    /// What to do with a hint above `max`.
    pub beyond: Beyond,
    /// After a retry that waited a hint, the backoff ladder starts again at retry 1 (gRPC:
    /// "if that retry also fails, backoff restarts at initialBackoff").
    pub restart: bool,
    /// How a usable hint meets the computed backoff.
    pub combine: Combine,
}

/// How a usable Retry-After hint meets the backoff computed for the same retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// The hint replaces the computed delay (seed 003, urllib3, gRPC pushback).
    Replace,
    /// The longer of the two, the hint raising the computed delay `t` by at most `raise`
    /// when set: `max(t, min(hint, t + raise))` (smithy-typescript: `max(hint, t)`; the AWS
    /// SDKs' 2026 update: `raise` = 5 s).
    Max {
        /// The most a hint adds to the computed delay (`None`: no limit).
        raise: Option<SimDuration>,
    },
}

impl Combine {
    /// The delay of a retry whose computed backoff is `computed` and whose usable hint is
    /// `hint`.
    pub fn delay(self, hint: SimDuration, computed: SimDuration) -> SimDuration {
        match self {
            Combine::Replace => hint,
            Combine::Max { raise } => computed.max(raise.map_or(hint, |r| hint.min(computed + r))),
        }
    }
}

impl Default for RetryAfterPolicy {
    /// Honor hints in `(0, 60 s]`, ignore others (seed 003's `next_delay`).
    fn default() -> Self {
        RetryAfterPolicy {
            honor: true,
            max: SimDuration::from_secs(60),
            beyond: Beyond::Ignore,
            restart: false,
            combine: Combine::Replace,
        }
    }
}

impl RetryAfterPolicy {
    /// Whether a hint this policy chose leaves no backoff to compute: it replaces the delay,
    /// and the jitter keeps no state that moves on whatever overrides the delay (Polly's V2
    /// does: Polly computes its delay before the delay generator overrides it).
    #[inline]
    pub fn hint_skips_backoff(&self, jitter: Jitter) -> bool {
        self.combine == Combine::Replace && jitter != Jitter::DecorrelatedV2
    }

    /// The delay a hint imposes, or `None` to use the computed backoff. A usable hint
    /// replaces the computed delay exactly, with no jitter.
    pub fn choose(&self, hint: Option<SimDuration>) -> Option<SimDuration> {
        let hint = hint.filter(|_| self.honor)?;
        if hint.is_zero() {
            None
        } else if hint <= self.max {
            Some(hint)
        } else {
            match self.beyond {
                Beyond::Ignore => None,
                Beyond::Clamp => Some(self.max),
            }
        }
    }
}

/// Parses an HTTP `Retry-After` header in its delay-seconds form (`"3"`, `"1.5"`).
/// Anything unparseable or negative gives `None` (unusable, as in seed 003).
pub fn parse_retry_after_header(value: &str) -> Option<SimDuration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| SimDuration::from_secs_f64(secs))
}

/// Seed 003's `next_delay`: a usable hint wins, else the computed backoff for retry `n`
/// with draw `u` (`prev` as in [`Backoff::delay`]). The engine does this for non-429
/// failures under the default `combine = "replace"`, with the request's backoff state, its
/// `immediate_retries` and its `throttle_base` on top.
pub fn next_delay(
    backoff: &Backoff,
    policy: &RetryAfterPolicy,
    n: u32,
    prev: SimDuration,
    hint: Option<SimDuration>,
    u: f64,
) -> SimDuration {
    policy
        .choose(hint)
        .unwrap_or_else(|| backoff.delay(n, prev, u))
}

/// `rate_limit = { on, max_retries, escalate_after, default_wait, max_wait }`: the separate
/// rate-limit ladder of seed 000. The failures it takes (429 by default; loopctl also counts
/// 503 and 529) count on their own counter and never use the transport attempts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitLadder {
    /// The failures that climb this ladder instead of the transport one.
    pub on: StatusSet,
    /// Largest number of 429 retries.
    pub max_retries: u32,
    /// The request escalates (ends as `rate_limit_escalation`) once the 429 count exceeds this.
    /// Invariant: `escalate_after <= max_retries`.
    pub escalate_after: u32,
    /// Wait when the 429 carries no usable hint.
    pub default_wait: SimDuration,
    /// Largest wait, hint or not.
    pub max_wait: SimDuration,
}

impl RateLimitLadder {
    /// `min(hint if present and > 0 else default_wait, max_wait)`.
    pub fn wait(&self, hint: Option<SimDuration>) -> SimDuration {
        hint.filter(|h| !h.is_zero())
            .unwrap_or(self.default_wait)
            .min(self.max_wait)
    }

    /// Whether the `count`-th 429 of a request (1-based) ends it.
    pub fn escalates(&self, count: u32) -> bool {
        count > self.escalate_after.min(self.max_retries)
    }
}

/// Whether a budget or breaker is per client or shared by the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Each simulated client has its own state.
    Client,
    /// One state shared by all clients of the run.
    Global,
}

impl Scope {
    /// How many instances a run of `clients` clients holds: one per client, or one.
    #[inline]
    pub fn instances(self, clients: u32) -> usize {
        match self {
            Scope::Client => clients as usize,
            Scope::Global => 1,
        }
    }

    /// The instance serving `client`.
    #[inline]
    pub fn index(self, client: u32) -> u32 {
        match self {
            Scope::Client => client,
            Scope::Global => 0,
        }
    }

    /// `client` or `global`.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Client => "client",
            Scope::Global => "global",
        }
    }
}

/// A retry budget and its scope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetSpec {
    /// Which budget.
    pub kind: BudgetKind,
    /// Per client or global.
    pub scope: Scope,
}

/// The five budget models. Token counts are kept in thousandths (integer arithmetic, so
/// "tokens > max/2" is exact, as in gRPC's own implementation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetKind {
    /// Finagle's RetryBudget (seed 002's "10% of calls in a rolling window"): the retries in
    /// the last `window`, a new one included, may be at most `ratio · first attempts in the
    /// window + min_per_s · window seconds`, in Finagle's integer units.
    Ratio {
        /// Retries per deposit, in [0, 1000] (Finagle's `percentCanRetry`: 2.0 allows two
        /// retries per deposit).
        ratio: f64,
        /// The rolling window (> 0).
        window: SimDuration,
        /// Retries per second always allowed (>= 0).
        min_per_s: f64,
        /// Finagle's per-request cap (`RequeueFilter`'s `maxRetriesPerReq`, 0.2 there): a
        /// request may make at most `ceil(per_request x balance)` retries, the balance being
        /// the whole retries the budget holds when its first attempt is sent (after that
        /// attempt's deposit, if it makes one). `None`: no cap but the budget.
        per_request: Option<f64>,
        /// What deposits: every request's first attempt (`Fill::Call`, Finagle before
        /// 20.8.0 and seed 002), or every request that succeeds (`Fill::Success`, Finagle
        /// since 20.8.0).
        deposit: Fill,
    },
    /// gRPC retry throttling: a retryable failure takes 1 token, a successful request adds
    /// `token_ratio`; retries only while tokens > max_tokens / 2.
    TokenBucket {
        /// Capacity, in thousandths of a token.
        max_milli: u64,
        /// Refill per success, in thousandths of a token.
        ratio_milli: u64,
    },
    /// AWS SDK standard retry quota: a retry costs `retry_cost` (`timeout_cost` after a
    /// timeout); a success refunds the cost of its last retry, or `success_refund`.
    Quota {
        /// Capacity (starts full).
        capacity: u64,
        /// Cost of a retry after a non-timeout failure.
        retry_cost: u64,
        /// Cost of a retry after a timeout or unreachable failure.
        timeout_cost: u64,
        /// Cost of a retry after a 429 (throttling): the 2026 SDKs charge 5 where other
        /// failures cost 14.
        throttle_cost: u64,
        /// Refill after a success that needed no retry.
        success_refund: u64,
    },
    /// Envoy's retry budget (and its `max_retries` circuit breaker): a limit on retries *in
    /// progress*, from the retry decision until the retried attempt's outcome. A retry is
    /// allowed while fewer than max(min_retries, floor(percent / 100 x attempts in flight))
    /// are.
    Concurrent {
        /// `budget_percent` (20): the share of the attempts in flight that may be retries, in
        /// percent, in [0, 100] (kept in percent so the limit is Envoy's own double
        /// arithmetic, `percent / 100 x active`, truncated).
        percent: f64,
        /// `min_retry_concurrency` (3): retries always allowed at once.
        min_retries: u64,
    },
    /// Brooker's adaptive bucket: each first attempt adds `fill_per_call` (or each success
    /// `fill_per_success`) up to `size`; a retry needs a whole token and takes it.
    Adaptive {
        /// Fill per first attempt or per success, in thousandths.
        fill_milli: u64,
        /// Capacity, in thousandths.
        size_milli: u64,
        /// What adds `fill_milli`.
        fill_on: Fill,
    },
}

/// What fills an adaptive bucket, or deposits into a ratio budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Every logical request's first attempt (`fill_per_call`).
    Call,
    /// Every logical request that succeeds (`fill_per_success`), as Brooker's post words it:
    /// a bucket that never refills while everything fails.
    Success,
}

impl BudgetKind {
    /// The `kind` spelling.
    pub fn label(&self) -> &'static str {
        match self {
            BudgetKind::Ratio { .. } => "ratio",
            BudgetKind::TokenBucket { .. } => "token_bucket",
            BudgetKind::Quota { .. } => "quota",
            BudgetKind::Adaptive { .. } => "adaptive",
            BudgetKind::Concurrent { .. } => "concurrent",
        }
    }
}

/// `breaker = { failure_rate, window | window_calls, min_calls, open_for, half_open_probes,
/// half_open, scope, retries_only, slow_call, slow_call_rate, window_buckets, buckets_from,
/// trip_on }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerSpec {
    /// Opens when failures / calls in the window reach this, in (0, 1].
    pub failure_rate: f64,
    /// The window of recorded attempt outcomes.
    pub window: BreakerWindow,
    /// No decision before this many outcomes are in the window (>= 1; with a window of N
    /// calls, at most N, as Resilience4j reads a larger minimum).
    pub min_calls: u32,
    /// How long it stays open before admitting probes.
    pub open_for: SimDuration,
    /// Attempts admitted while half-open.
    pub half_open_probes: u32,
    /// How the half-open probes decide.
    pub half_open: HalfOpenRule,
    /// Per client or global.
    pub scope: Scope,
    /// Brooker's 2022 "retry-only" breaker: first attempts always go out (their outcomes
    /// count while it is closed) and only retries are refused while it is open; a retry
    /// admitted half-open is a probe. `false`: every attempt is refused while open.
    pub retries_only: bool,
    /// Resilience4j's slow calls: an attempt whose outcome comes more than this after it
    /// was sent is slow, failed or not. `None`: no call is slow.
    pub slow_call: Option<SimDuration>,
    /// Opens (as `failure_rate` does) when slow calls / calls in the window reach this, in
    /// (0, 1]; 1 unless set.
    pub slow_call_rate: f64,
    /// `trip_on = "failure"`: a closed breaker judges its window only after a failure
    /// (Polly's AdvancedCircuitBehavior); `"outcome"` (false), after every outcome
    /// (Resilience4j).
    pub trip_on_failure: bool,
}

/// `client_rate_limiter = { scope, beta, scale, min_fill_rate }`: the AWS SDKs' adaptive
/// retry mode, a token bucket in front of every attempt whose rate follows TCP CUBIC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterSpec {
    /// The cut after a throttle: the new rate is `beta` times the rate in use (0.7).
    pub beta: f64,
    /// CUBIC's scale constant `C` (0.4).
    pub scale: f64,
    /// The least fill rate, tokens per second (0.5).
    pub min_fill_rate: f64,
    /// Per client or global.
    pub scope: Scope,
}

/// A breaker's window of outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerWindow {
    /// The outcomes of the last stretch of time, `(now - d, now]` (`window = "10s"`).
    Time(SimDuration),
    /// The last N outcomes, however old (`window_calls = N`: Resilience4j's COUNT_BASED
    /// sliding window).
    Calls(u32),
    /// The outcomes of the last `count` buckets of `window / count` each (`window_buckets =
    /// count`): outcomes leave a bucket at a time, as in Resilience4j's TIME_BASED window
    /// (buckets of 1 s on the clock) and Polly's rolling health metrics (buckets opened by
    /// the first outcome after the last one closed).
    Buckets {
        /// The whole window (`window`).
        window: SimDuration,
        /// Buckets in it (>= 1).
        count: u32,
        /// Where buckets start.
        start: BucketStart,
    },
}

impl BreakerWindow {
    /// The width of one bucket in nanoseconds (`window / count`, whole); 1 for the other
    /// windows, which have none.
    pub fn bucket_width(&self) -> u64 {
        match self {
            BreakerWindow::Buckets { window, count, .. } => window.as_nanos() / u64::from(*count),
            _ => 1,
        }
    }
}

/// Where a bucketed breaker window's buckets start (`buckets_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketStart {
    /// At whole multiples of the bucket width from t = 0 (Resilience4j's epoch seconds):
    /// an outcome counts while its bucket is one of the last `count`, the current included.
    Clock,
    /// At the first outcome after the current bucket's width has passed (Polly): a bucket
    /// counts until `window` after it started.
    Outcome,
}

/// How a half-open breaker decides (`half_open = "all" | "rate"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalfOpenRule {
    /// Closes when all probes succeed, re-opens on the first failed probe (Polly, and most
    /// hand-written breakers).
    All,
    /// Once every probe has finished, re-opens if their failure share reaches
    /// `failure_rate`, else closes (Resilience4j's `permittedNumberOfCallsInHalfOpenState`).
    Rate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_uses_the_max_and_dishonored_hints_are_ignored() {
        let clamp = RetryAfterPolicy {
            beyond: Beyond::Clamp,
            ..Default::default()
        };
        assert_eq!(
            clamp.choose(Some(SimDuration::from_secs(90))),
            Some(SimDuration::from_secs(60))
        );
        assert_eq!(clamp.choose(Some(SimDuration::ZERO)), None);
        let off = RetryAfterPolicy {
            honor: false,
            ..Default::default()
        };
        assert_eq!(off.choose(Some(SimDuration::from_secs(3))), None);
    }

    #[test]
    fn timeout_ladder_doubles_per_retry() {
        let p = RetryPolicy {
            max_attempts: 4,
            timeout: Some(SimDuration::from_secs(1)),
            timeout_multiplier: 2.0,
            connect_timeout: None,
            deadline: None,
            clamp_to_deadline: false,
            retry_on: StatusSet::all_retryable(),
            retry_after: RetryAfterPolicy::default(),
            immediate_retries: 0,
            throttle_base: None,
            rate_limit: None,
            budget: None,
            breaker: None,
            client_rate_limiter: None,
            fallback_on: ReasonSet::default(),
        };
        let got: Vec<f64> = (1..=4)
            .map(|a| p.attempt_timeout(a).unwrap().as_secs_f64())
            .collect();
        assert_eq!(got, vec![1.0, 2.0, 4.0, 8.0]);
        assert!(!p.retries(Status::BadRequest));
        assert!(p.retries(Status::Timeout));
    }
}
