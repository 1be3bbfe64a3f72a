//! The retry decision after a failed attempt (DESIGN.md's "Retry decision"): retryable
//! class, deadline, attempts or the rate-limit ladder, Retry-After (replacing or combined
//! with the backoff), the backoff itself (immediate retries, the ladder, `throttle_base`
//! after a 429, the jitter and the request's backoff state), then the budget, and the `Send`
//! of the retry, or giving up.

use rand::RngExt;

use super::budget::Decision;
use super::{Event, EventKind, Simulation};
use crate::model::backoff::{Backoff, ladder_step};
use crate::model::outcome::{GiveUpReason, Status};
use crate::model::policy::Combine;
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// The retry decision after a failed attempt (DESIGN.md, "Retry decision") of `key`,
    /// which follows policy `policy_index` and has made `attempt` transport attempts.
    ///
    /// The request's fields that nothing here changes (its policy, attempt number, client,
    /// deadline) are read once (the first two by `result`) and handed to the backoff: looked up where each
    /// is used, every lookup reloaded the slab and checked its bounds again. Measured with
    /// callgrind, with the single lookups after the push in `send_now` and `respond`: the
    /// quickstart herd 518.3 M -> 514.1 M instructions, Brooker at 5 replications
    /// 164.5 M -> 163.6 M.
    pub(super) fn failure(
        &mut self,
        key: u32,
        policy_index: u16,
        attempt: u16,
        status: Status,
        hint: Option<SimDuration>,
    ) {
        if self.orphaned(key) {
            // A call whose service crashed meanwhile is not retried: it ends here.
            return self.give_up(key, GiveUpReason::NonRetryable);
        }
        let now = self.now;
        let policy = self.policies[policy_index as usize];
        let strategy = policy.strategy;
        let retry = &strategy.retry;
        if !retry.retries(status) {
            return self.give_up(key, GiveUpReason::NonRetryable);
        }
        let info = self.requests.info(key);
        let (client, deadline_at) = (info.client, info.deadline_at);
        if let Some(b) = policy.budget {
            self.budgets[b as usize].on_failure(client);
        }
        if retry.clamp_to_deadline && now >= deadline_at {
            // Loops that clamp their sleep to the deadline check it first, before the
            // attempt budget: the last attempt, sent at the deadline, ends as `deadline`.
            // (No deadline is `SimTime::MAX`, which `now` never reaches.)
            return self.give_up(key, GiveUpReason::Deadline);
        }
        let (delay, transport) = match retry.rate_limit {
            Some(ladder) if ladder.on.contains(status) => {
                let info = self.requests.info_mut(key);
                info.rate_limited = info.rate_limited.saturating_add(1);
                if ladder.escalates(info.rate_limited) {
                    return self.give_up(key, GiveUpReason::RateLimitEscalation);
                }
                (ladder.wait(hint.filter(|_| retry.retry_after.honor)), false)
            }
            _ => {
                if attempt as u32 >= retry.max_attempts {
                    return self.give_up(key, GiveUpReason::Attempts);
                }
                let hinted = retry.retry_after.choose(hint);
                let combine = retry.retry_after.combine;
                let computed = match hinted {
                    // The hint replaces the delay: no backoff is drawn (but Polly's V2 moves
                    // its state on).
                    Some(_)
                        if retry
                            .retry_after
                            .hint_skips_backoff(strategy.backoff.jitter) =>
                    {
                        SimDuration::ZERO
                    }
                    _ => self.backoff(key, policy_index, attempt, status),
                };
                let delay = match hinted {
                    Some(h) => {
                        let d = combine.delay(h, computed);
                        // The ladder restarts after a retry the hint decided, not after one
                        // where the computed backoff was longer anyway.
                        if retry.retry_after.restart
                            && (combine == Combine::Replace || d > computed)
                        {
                            let info = self.requests.info_mut(key);
                            info.ladder_from = attempt;
                            info.prev_delay = strategy.backoff.initial_state();
                        }
                        d
                    }
                    None => computed,
                };
                (delay, true)
            }
        };
        // `now + delay` saturates at `SimTime::MAX`, which is also "no deadline": a retry
        // too far ahead for the clock waits for the time limit instead.
        let mut delay = delay;
        if deadline_at != SimTime::MAX && now + delay >= deadline_at {
            if !retry.clamp_to_deadline {
                return self.give_up(key, GiveUpReason::Deadline);
            }
            // The agent loops' "sleep, clamped to the deadline": one last attempt, at it.
            delay = deadline_at - now;
        }
        if let Some(b) = policy.budget {
            let target = policy.target as usize;
            // Finagle checks its per-request cap first, and withdraws nothing past it: the
            // request's retries so far (`sent - 1`) have reached its cap.
            let capped =
                self.caps_requests && self.requests[key].sent > self.request_caps[key as usize];
            let decision = if capped {
                Decision::Refused
            } else {
                self.budgets[b as usize].try_retry(client, now, status)
            };
            match decision {
                Decision::Refused => {
                    self.metrics.services[target].budget_refused += 1;
                    self.timelines[target].at(now).budget_refused += 1;
                    return self.give_up(key, GiveUpReason::Budget);
                }
                Decision::Allowed { cost } => {
                    self.metrics.services[target].budget_allowed += 1;
                    if self.counts_in_flight {
                        // Held until this retry's outcome is back (a concurrent budget).
                        let held = self.budgets[b as usize].counts_in_flight();
                        self.requests[key].set_holds_retry(held);
                    }
                    // Remembered even when 0: a retried success refunds its last retry's
                    // cost, which may be 0 (`retry_cost = 0`), never `success_refund`.
                    self.requests.info_mut(key).quota_cost = cost as u32;
                }
            }
        }
        if transport {
            self.requests[key].attempt += 1;
        }
        // A wait past the end of the clock (584 years) ends there, as the send does: the
        // end of a run cut at `time_limit` takes back the part after the limit.
        let at = now + delay;
        self.requests.info_mut(key).waited += at.saturating_since(now);
        self.push(Event::new(EventKind::Send, at, key, 0));
    }

    /// The backoff before `key`'s next transport attempt (it has made `attempt`, the last
    /// failing with `status`), drawing its jitter and moving the request's backoff state on.
    /// The first `immediate_retries` retries of the ladder wait 0; after a 429,
    /// `throttle_base` stands for `base` when set.
    #[inline(always)]
    fn backoff(&mut self, key: u32, policy: u16, attempt: u16, status: Status) -> SimDuration {
        let policy = policy as usize;
        let strategy = self.policies[policy].strategy;
        let retry_n = u32::from(attempt - self.requests.info(key).ladder_from);
        let Some(step) = ladder_step(retry_n, strategy.retry.immediate_retries) else {
            // Sent at once: nothing is drawn, and the backoff state waits for the ladder.
            return SimDuration::ZERO;
        };
        if let Some(base) = strategy.retry.throttle_base
            && status == Status::TooManyRequests
        {
            return self.throttled_backoff(key, step, base);
        }
        let ladder = &self.ladders[policy];
        let last = *ladder.last().expect("a ladder has a first step");
        let expo = ladder.get(step as usize - 1).copied().unwrap_or(last);
        self.draw_backoff(key, &strategy.backoff, step, expo)
    }

    /// Ladder step `step` (`expo` its un-jittered delay) of `backoff` for `key`: draws the
    /// jitter when it needs one and moves the request's backoff state on.
    #[inline(always)]
    fn draw_backoff(
        &mut self,
        key: u32,
        backoff: &Backoff,
        step: u32,
        expo: SimDuration,
    ) -> SimDuration {
        let u = if backoff.uses_draw() {
            self.backoff_rng.random::<f64>()
        } else {
            0.0
        };
        let info = self.requests.info_mut(key);
        let (d, state) = backoff.next_from(step, expo, info.prev_delay, u);
        info.prev_delay = state;
        d
    }

    /// [`Simulation::backoff`] after a 429 under `throttle_base`: the same ladder step from
    /// `base` (out of line: the ladder table is `base`'s).
    #[inline(never)]
    fn throttled_backoff(&mut self, key: u32, step: u32, base: SimDuration) -> SimDuration {
        let strategy = self.policies[self.requests[key].policy as usize].strategy;
        let backoff = Backoff {
            base,
            ..strategy.backoff
        };
        self.draw_backoff(key, &backoff, step, backoff.expo(step))
    }
}
