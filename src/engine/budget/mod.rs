//! Retry budgets during a run: the state behind [`BudgetKind`], per client or fleet-wide.
//!
//! The engine calls [`Budgets::on_first_attempt`] when a logical request sends its first
//! attempt, [`Budgets::on_failure`] on every retryable failure, [`Budgets::try_retry`] once
//! a retry has passed every other check (attempts, deadline), and [`Budgets::on_success`]
//! when a request succeeds. Every bucket and quota starts full, as in the systems modelled.

use std::collections::VecDeque;

use crate::model::outcome::Status;
use crate::model::policy::{BudgetKind, BudgetSpec, Fill, Scope};
use crate::time::{SimDuration, SimTime};

/// One budget's state.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Send times of first attempts and of allowed retries within the window.
    Ratio {
        firsts: VecDeque<SimTime>,
        retries: VecDeque<SimTime>,
    },
    /// Tokens in thousandths.
    Tokens(u64),
    /// Quota units available.
    Quota(u64),
    /// Attempts in flight (sent, outcome not back) and retries in progress (decided, the
    /// retried attempt's outcome not back).
    Concurrent { attempts: u64, retries: u64 },
}

/// All budget states of a run: one (global scope) or one per client.
#[derive(Debug, Clone)]
pub struct Budgets {
    kind: BudgetKind,
    scope: Scope,
    states: Vec<State>,
}

/// What [`Budgets::try_retry`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The retry may go ahead; for a quota, `cost` was withdrawn (remember it for the refund).
    Allowed {
        /// Quota units taken (0 for other kinds).
        cost: u64,
    },
    /// The budget is exhausted: the request gives up (`budget`).
    Refused,
}

impl Budgets {
    /// Fresh (full) budgets for `clients` clients.
    pub fn new(spec: &BudgetSpec, clients: u32) -> Self {
        let n = spec.scope.instances(clients);
        let fresh = match spec.kind {
            BudgetKind::Ratio { .. } => State::Ratio {
                firsts: VecDeque::new(),
                retries: VecDeque::new(),
            },
            BudgetKind::TokenBucket { max_milli, .. } => State::Tokens(max_milli),
            BudgetKind::Adaptive { size_milli, .. } => State::Tokens(size_milli),
            BudgetKind::Quota { capacity, .. } => State::Quota(capacity),
            BudgetKind::Concurrent { .. } => State::Concurrent {
                attempts: 0,
                retries: 0,
            },
        };
        Budgets {
            kind: spec.kind,
            scope: spec.scope,
            states: vec![fresh; n],
        }
    }

    #[inline]
    fn state(&mut self, client: u32) -> &mut State {
        &mut self.states[self.scope.index(client) as usize]
    }

    /// Whether a request's retries are capped by [`Budgets::request_cap`].
    pub fn caps_requests(&self) -> bool {
        matches!(
            self.kind,
            BudgetKind::Ratio {
                per_request: Some(_),
                ..
            }
        )
    }

    /// Whether the budget follows attempts in flight and holds retries in progress
    /// ([`Budgets::on_attempt_sent`], [`Budgets::on_attempt_done`],
    /// [`Budgets::release_retry`]): Envoy's concurrent budget.
    pub fn counts_in_flight(&self) -> bool {
        matches!(self.kind, BudgetKind::Concurrent { .. })
    }

    /// An attempt went out (to the budget's service, not to the fallback server).
    pub fn on_attempt_sent(&mut self, client: u32) {
        if let State::Concurrent { attempts, .. } = self.state(client) {
            *attempts += 1;
        }
    }

    /// An attempt's outcome (a response or its timer) reached the caller.
    pub fn on_attempt_done(&mut self, client: u32) {
        if let State::Concurrent { attempts, .. } = self.state(client) {
            *attempts -= 1;
        }
    }

    /// A retry this budget allowed is no longer in progress: its attempt's outcome is back,
    /// or its request ended without it (Envoy's `resetRetry`).
    pub fn release_retry(&mut self, client: u32) {
        if let State::Concurrent { retries, .. } = self.state(client) {
            *retries -= 1;
        }
    }

    /// A logical request sent its first attempt.
    pub fn on_first_attempt(&mut self, client: u32, now: SimTime) {
        let kind = self.kind;
        match (kind, self.state(client)) {
            (
                BudgetKind::Ratio {
                    deposit: Fill::Call,
                    ..
                },
                State::Ratio { firsts, .. },
            ) => firsts.push_back(now),
            (
                BudgetKind::Adaptive {
                    fill_milli,
                    size_milli,
                    fill_on: Fill::Call,
                },
                State::Tokens(t),
            ) => *t = (*t + fill_milli).min(size_milli),
            _ => {}
        }
    }

    /// Finagle's per-request cap for a request whose first attempt was just sent (and
    /// deposited, by [`Budgets::on_first_attempt`], unless the budget deposits on success):
    /// `ceil(per_request x balance)` retries, the balance being the whole retries the budget
    /// holds now. `None` without `per_request`. Finagle since 20.8.0 computes it before any
    /// deposit, which it makes only once the request has succeeded; before, it deposited
    /// first: both orders are this one call after `on_first_attempt`.
    pub fn request_cap(&mut self, client: u32, now: SimTime) -> Option<u32> {
        let BudgetKind::Ratio {
            ratio,
            window,
            min_per_s,
            per_request: Some(share),
            ..
        } = self.kind
        else {
            return None;
        };
        let State::Ratio { firsts, retries } = self.state(client) else {
            unreachable!("budget state always matches its kind")
        };
        let units = FinagleUnits::new(ratio, window, min_per_s);
        expire(firsts, now, window);
        expire(retries, now, window);
        let balance = units.count(firsts.len(), retries.len()) / units.withdraw;
        Some(whole_up(share * balance as f64).min(u128::from(u32::MAX)) as u32)
    }

    /// A retryable failure happened (gRPC throttling takes a token for every one, whether or
    /// not a retry follows).
    pub fn on_failure(&mut self, client: u32) {
        if let (BudgetKind::TokenBucket { .. }, State::Tokens(t)) = (self.kind, self.state(client))
        {
            *t = t.saturating_sub(1000);
        }
    }

    /// Asks for one retry after a failure of class `status`; withdraws on success.
    pub fn try_retry(&mut self, client: u32, now: SimTime, status: Status) -> Decision {
        let kind = self.kind;
        let allowed = |cost| Decision::Allowed { cost };
        match (kind, self.state(client)) {
            (
                BudgetKind::Ratio {
                    ratio,
                    window,
                    min_per_s,
                    ..
                },
                State::Ratio { firsts, retries },
            ) => {
                let units = FinagleUnits::new(ratio, window, min_per_s);
                expire(firsts, now, window);
                expire(retries, now, window);
                // A retry needs a whole withdrawal: 15 first attempts at 0.1 allow 1 retry,
                // not 2.
                let needed = (retries.len() as u128 + 1).saturating_mul(units.withdraw);
                if needed <= units.count(firsts.len(), 0) {
                    retries.push_back(now);
                    allowed(0)
                } else {
                    Decision::Refused
                }
            }
            (BudgetKind::TokenBucket { max_milli, .. }, State::Tokens(t)) => {
                if *t * 2 > max_milli {
                    allowed(0)
                } else {
                    Decision::Refused
                }
            }
            (BudgetKind::Adaptive { .. }, State::Tokens(t)) => {
                // "Retry ... as long as there are (whole) tokens in the bucket" (Brooker).
                if *t >= 1000 {
                    *t -= 1000;
                    allowed(0)
                } else {
                    Decision::Refused
                }
            }
            (
                BudgetKind::Quota {
                    retry_cost,
                    timeout_cost,
                    throttle_cost,
                    ..
                },
                State::Quota(available),
            ) => {
                let cost = match status {
                    Status::Timeout | Status::Unreachable => timeout_cost,
                    Status::TooManyRequests => throttle_cost,
                    _ => retry_cost,
                };
                if *available < cost {
                    Decision::Refused
                } else {
                    *available -= cost;
                    allowed(cost)
                }
            }
            (
                BudgetKind::Concurrent {
                    percent,
                    min_retries,
                },
                State::Concurrent { attempts, retries },
            ) => {
                // Envoy's RetryBudgetImpl: `count() < max()`, max =
                // max(budget_percent / 100.0 x active, min_retry_concurrency), truncated.
                let limit = ((percent / 100.0 * *attempts as f64) as u64).max(min_retries);
                if *retries < limit {
                    *retries += 1;
                    allowed(0)
                } else {
                    Decision::Refused
                }
            }
            _ => unreachable!("budget state always matches its kind"),
        }
    }

    /// A logical request succeeded at `now`; `last_cost` is the quota cost of its last
    /// retry, `None` if it was not retried (AWS refunds `success_refund` then, else exactly
    /// that cost).
    pub fn on_success(&mut self, client: u32, now: SimTime, last_cost: Option<u64>) {
        match (self.kind, self.state(client)) {
            (
                BudgetKind::Ratio {
                    deposit: Fill::Success,
                    ..
                },
                State::Ratio { firsts, .. },
            ) => firsts.push_back(now),
            (
                BudgetKind::TokenBucket {
                    max_milli,
                    ratio_milli,
                },
                State::Tokens(t),
            ) => *t = (*t + ratio_milli).min(max_milli),
            (
                BudgetKind::Quota {
                    capacity,
                    success_refund,
                    ..
                },
                State::Quota(available),
            ) => {
                let refund = last_cost.unwrap_or(success_refund);
                *available = (*available + refund).min(capacity);
            }
            (
                BudgetKind::Adaptive {
                    fill_milli,
                    size_milli,
                    fill_on: Fill::Success,
                },
                State::Tokens(t),
            ) => *t = (*t + fill_milli).min(size_milli),
            _ => {}
        }
    }

    /// Tokens (thousandths) or quota units left, for tests and diagnostics.
    pub fn level(&self, client: u32) -> u64 {
        match &self.states[self.scope.index(client) as usize] {
            State::Ratio { retries, .. } => retries.len() as u64,
            State::Tokens(t) | State::Quota(t) => *t,
            State::Concurrent { retries, .. } => *retries,
        }
    }
}

/// A ratio budget in Finagle's integer units: each first attempt in the window deposited
/// `deposit` (1000), each retry withdrew `withdraw` (floor(1000 / ratio)), and a reserve of
/// min_per_s x window retries' worth is always there. So, up to Finagle's own rounding of
/// the withdrawal, retries <= ratio x firsts + min_per_s x window. (The withdrawal is capped
/// at 1e18, a ratio of 1e-15, so that no product leaves u128: a ratio of 1e-300 then leaves
/// just the reserve, as 0 does.)
struct FinagleUnits {
    deposit: u128,
    withdraw: u128,
    reserve: u128,
}

impl FinagleUnits {
    fn new(ratio: f64, window: SimDuration, min_per_s: f64) -> Self {
        let (deposit, withdraw): (u128, u128) = if ratio > 0.0 {
            (1000, (1000.0 / ratio).floor().min(1e18) as u128)
        } else {
            (0, 1000)
        };
        let reserve = whole(min_per_s * window.as_secs_f64() * withdraw as f64);
        FinagleUnits {
            deposit,
            withdraw,
            reserve,
        }
    }

    /// The bucket's count (Finagle's `count`, reserve included) after `firsts` deposits and
    /// `retries` withdrawals.
    fn count(&self, firsts: usize, retries: usize) -> u128 {
        (firsts as u128 * self.deposit)
            .saturating_add(self.reserve)
            .saturating_sub((retries as u128).saturating_mul(self.withdraw))
    }
}

/// `x` rounded down to a whole number, except that a value within float rounding of the
/// next one is that one (0.29 x 100 x 10000 is 289999.99999999994, meaning 290000).
fn whole(x: f64) -> u128 {
    near_whole(x).unwrap_or_else(|| x.floor()) as u128
}

/// `x` rounded up to a whole number, except that a value within float rounding of the one
/// below is that one: the per-request cap is computed as decimals are, ceil(0.07 x 100) = 7,
/// where binary floating point (and Finagle's doubles) make 0.07 x 100 7.000000000000001
/// and round it up to 8.
fn whole_up(x: f64) -> u128 {
    near_whole(x).unwrap_or_else(|| x.ceil()) as u128
}

/// The whole number `x` is within float rounding of (a relative 1e-9), if any.
fn near_whole(x: f64) -> Option<f64> {
    let nearest = x.round();
    ((x - nearest).abs() <= 1e-9 * nearest.abs().max(1.0)).then_some(nearest)
}

/// Drops entries at or before `now - window`: the window is `(now - window, now]`.
fn expire(times: &mut VecDeque<SimTime>, now: SimTime, window: SimDuration) {
    while let Some(&t) = times.front() {
        if now.0.saturating_sub(t.0) >= window.0 {
            times.pop_front();
        } else {
            break;
        }
    }
}

#[cfg(test)]
mod tests;
