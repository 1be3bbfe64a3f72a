//! Unit tests of the budgets (`super`), on hand-worked sequences of outcomes.

use super::*;

/// A ratio budget depositing per first attempt, with no per-request cap.
fn ratio_kind(ratio: f64, window_s: u64, min_per_s: f64) -> BudgetKind {
    BudgetKind::Ratio {
        ratio,
        window: SimDuration::from_secs(window_s),
        min_per_s,
        per_request: None,
        deposit: Fill::Call,
    }
}

/// How many retries `b` allows `client` at `at` one after another (at most `max`).
fn retries_allowed(b: &mut Budgets, client: u32, at: SimTime, status: Status, max: usize) -> usize {
    (0..max)
        .take_while(|_| b.try_retry(client, at, status) != Decision::Refused)
        .count()
}

fn spec(kind: BudgetKind, scope: Scope) -> BudgetSpec {
    BudgetSpec { kind, scope }
}

/// gRPC A6 throttling, max_tokens 10: a run of consecutive failures from a full bucket
/// allows retries after exactly the first 4; the 5th leaves 5 tokens, not above 5.
#[test]
fn grpc_throttling_allows_exactly_four_retries_from_full() {
    let mut b = Budgets::new(
        &spec(
            BudgetKind::TokenBucket {
                max_milli: 10_000,
                ratio_milli: 100,
            },
            Scope::Client,
        ),
        1,
    );
    let mut allowed = Vec::new();
    for _ in 0..6 {
        b.on_failure(0);
        allowed.push(b.try_retry(0, SimTime(0), Status::Unavailable) != Decision::Refused);
    }
    assert_eq!(allowed, [true, true, true, true, false, false]);
    assert_eq!(b.level(0), 4_000);
    // Each success adds 0.1: ten successes bring 4.0 back to 5.0, still not above 5.
    for _ in 0..10 {
        b.on_success(0, SimTime(0), None);
    }
    assert_eq!(b.level(0), 5_000);
    assert_eq!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Refused
    );
    b.on_success(0, SimTime(0), None);
    assert!(matches!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Allowed { .. }
    ));
}

/// AWS standard mode: 500 units, 5 per retry, 10 after a timeout: 100 retries (50 after
/// timeouts) drain a fresh bucket; a success refunds its retry's cost, else 1.
#[test]
fn aws_quota_drains_after_100_retries_and_refunds() {
    let quota = BudgetKind::Quota {
        capacity: 500,
        retry_cost: 5,
        timeout_cost: 10,
        throttle_cost: 5,
        success_refund: 1,
    };
    let mut b = Budgets::new(&spec(quota, Scope::Global), 3);
    let n = retries_allowed(&mut b, 1, SimTime(0), Status::Unavailable, 200);
    assert_eq!(n, 100);
    b.on_success(2, SimTime(0), Some(5));
    assert_eq!(b.level(0), 5);
    b.on_success(0, SimTime(0), None);
    assert_eq!(b.level(0), 6);
    let mut t = Budgets::new(&spec(quota, Scope::Client), 1);
    let n = retries_allowed(&mut t, 0, SimTime(0), Status::Timeout, 200);
    assert_eq!(n, 50);
}

/// The SDKs' 2026 standard mode: 14 per retry whatever the failure, 5 after throttling
/// (a 429): 500 units give 35 retries after 503s or timeouts, 100 after 429s.
#[test]
fn aws_2026_quota_charges_throttling_less() {
    let quota = BudgetKind::Quota {
        capacity: 500,
        retry_cost: 14,
        timeout_cost: 14,
        throttle_cost: 5,
        success_refund: 1,
    };
    for (status, retries) in [
        (Status::Unavailable, 35),
        (Status::Timeout, 35),
        (Status::TooManyRequests, 100),
    ] {
        let mut b = Budgets::new(&spec(quota, Scope::Global), 1);
        let n = retries_allowed(&mut b, 0, SimTime(0), status, 200);
        assert_eq!(n, retries, "{status:?}");
    }
}

/// A retried success refunds exactly its last retry's cost, even a cost of 0; only a
/// success that needed no retry earns `success_refund`.
#[test]
fn quota_refunds_a_zero_cost_retry_with_zero() {
    let quota = BudgetKind::Quota {
        capacity: 10,
        retry_cost: 0,
        timeout_cost: 4,
        throttle_cost: 0,
        success_refund: 1,
    };
    let mut b = Budgets::new(&spec(quota, Scope::Client), 1);
    assert_eq!(
        b.try_retry(0, SimTime(0), Status::Timeout),
        Decision::Allowed { cost: 4 }
    );
    assert_eq!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Allowed { cost: 0 }
    );
    b.on_success(0, SimTime(0), Some(0));
    assert_eq!(b.level(0), 6);
    b.on_success(0, SimTime(0), None);
    assert_eq!(b.level(0), 7);
}

/// Finagle's per-request cap, `ceil(0.2 x balance)` with balance = count / 5000 (a
/// withdrawal at 0.2) after the request's own deposit: 10 deposits make 2 whole retries
/// (cap 1), 30 make 6 (cap 2), and each retry taken lowers the next request's cap.
#[test]
fn the_per_request_cap_is_a_share_of_the_whole_retries_held() {
    let kind = BudgetKind::Ratio {
        ratio: 0.2,
        window: SimDuration::from_secs(10),
        min_per_s: 0.0,
        per_request: Some(0.2),
        deposit: Fill::Call,
    };
    let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
    assert!(b.caps_requests());
    let mut caps = Vec::new();
    for i in 0..30u64 {
        b.on_first_attempt(0, SimTime(i));
        caps.push(b.request_cap(0, SimTime(i)).unwrap());
    }
    // Deposits 1-4: balance 0 (cap 0); 5-9: 1; 10-14: 2; 25-29: 5; 30: 6.
    assert_eq!(&caps[..6], [0, 0, 0, 0, 1, 1]);
    assert_eq!((caps[9], caps[24], caps[29]), (1, 1, 2));
    // Two retries taken: 6 - 2 = 4 whole retries left, cap ceil(0.8) = 1.
    for _ in 0..2 {
        assert_ne!(
            b.try_retry(0, SimTime(30), Status::Unavailable),
            Decision::Refused
        );
    }
    assert_eq!(b.request_cap(0, SimTime(30)), Some(1));
    // Finagle's defaults with their reserve of 10/s x 10 s: 100 whole retries, cap 20.
    let finagle = BudgetKind::Ratio {
        ratio: 0.2,
        window: SimDuration::from_secs(10),
        min_per_s: 10.0,
        per_request: Some(0.2),
        deposit: Fill::Call,
    };
    let mut b = Budgets::new(&spec(finagle, Scope::Global), 1);
    b.on_first_attempt(0, SimTime(0));
    assert_eq!(b.request_cap(0, SimTime(0)), Some(20));
    // The cap is computed as decimals: 0.07 x 100 is 7 (binary floating point makes it
    // 7.000000000000001, which Finagle's doubles round up to 8), 0.14 x 100 is 14; a share
    // just above a whole number still rounds up (0.071 x 100 = 7.1: 8).
    for (share, cap) in [(0.07, 7), (0.14, 14), (0.28, 28), (0.071, 8), (0.2, 20)] {
        let kind = BudgetKind::Ratio {
            ratio: 0.2,
            window: SimDuration::from_secs(10),
            min_per_s: 10.0,
            per_request: Some(share),
            deposit: Fill::Call,
        };
        let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
        b.on_first_attempt(0, SimTime(0));
        assert_eq!(b.request_cap(0, SimTime(0)), Some(cap), "share {share}");
    }
    // Without per_request, no cap.
    let plain = ratio_kind(0.2, 10, 0.0);
    let mut b = Budgets::new(&spec(plain, Scope::Global), 1);
    assert!(!b.caps_requests());
    assert_eq!(b.request_cap(0, SimTime(0)), None);
}

/// Envoy's retry budget: retries in progress below max(min_retries, floor(percent / 100
/// x attempts in flight)), in Envoy's double arithmetic (57% of 100 is 56 there).
#[test]
fn a_concurrent_budget_limits_retries_in_progress() {
    let envoy = |percent: f64, min_retries: u64| BudgetKind::Concurrent {
        percent,
        min_retries,
    };
    let mut b = Budgets::new(&spec(envoy(20.0, 3), Scope::Global), 1);
    assert!(b.counts_in_flight());
    let retry = |b: &mut Budgets| b.try_retry(0, SimTime(0), Status::Unavailable);
    // Nothing in flight: the minimum, 3.
    let allowed = retries_allowed(&mut b, 0, SimTime(0), Status::Unavailable, 5);
    assert_eq!(allowed, 3);
    b.release_retry(0);
    assert_ne!(retry(&mut b), Decision::Refused);
    assert_eq!(retry(&mut b), Decision::Refused);
    // 25 attempts in flight: 20% is 5; 24 give 4.8, so 4.
    for _ in 0..25 {
        b.on_attempt_sent(0);
    }
    assert_ne!(retry(&mut b), Decision::Refused);
    assert_ne!(retry(&mut b), Decision::Refused);
    assert_eq!(retry(&mut b), Decision::Refused);
    assert_eq!(b.level(0), 5);
    b.on_attempt_done(0);
    b.release_retry(0);
    assert_eq!(b.level(0), 4);
    assert_eq!(retry(&mut b), Decision::Refused);
    // 57% of 100 in doubles is 56.99999999999999: 56, as Envoy truncates it.
    let mut b = Budgets::new(&spec(envoy(57.0, 0), Scope::Global), 1);
    for _ in 0..100 {
        b.on_attempt_sent(0);
    }
    let allowed = retries_allowed(&mut b, 0, SimTime(0), Status::Unavailable, 100);
    assert_eq!(allowed, 56);
    // Per client: one client's attempts do not raise another's limit.
    let mut b = Budgets::new(&spec(envoy(50.0, 0), Scope::Client), 2);
    for _ in 0..4 {
        b.on_attempt_sent(0);
    }
    assert_eq!(
        b.try_retry(1, SimTime(0), Status::Unavailable),
        Decision::Refused
    );
    assert_ne!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Refused
    );
}

/// Seed 002: retries limited to 10% of calls in a rolling window.
#[test]
fn ratio_budget_allows_one_retry_per_ten_first_attempts_in_the_window() {
    let kind = ratio_kind(0.1, 10, 0.0);
    let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
    for i in 0..20 {
        b.on_first_attempt(0, SimTime(i));
    }
    let at = SimTime(100);
    let first_two = [
        b.try_retry(0, at, Status::Unavailable),
        b.try_retry(0, at, Status::Unavailable),
    ];
    assert!(first_two.iter().all(|d| *d != Decision::Refused));
    assert_eq!(b.try_retry(0, at, Status::Unavailable), Decision::Refused);
    // Ten seconds later every first attempt has left the window: nothing is allowed.
    let later = SimTime(SimDuration::from_secs(10).0 + 19);
    assert_eq!(
        b.try_retry(0, later, Status::Unavailable),
        Decision::Refused
    );
}

/// A ratio above 1 (Finagle and tower allow up to 1000): 2.0 withdraws 500 per retry,
/// so 3 deposits allow 6 retries.
#[test]
fn a_ratio_above_one_allows_several_retries_per_deposit() {
    let kind = ratio_kind(2.0, 10, 0.0);
    let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
    for i in 0..3 {
        b.on_first_attempt(0, SimTime(i));
    }
    let n = retries_allowed(&mut b, 0, SimTime(5), Status::Unavailable, 20);
    assert_eq!(n, 6);
}

/// Finagle: "for every 10 calls to deposit(), 1 retry will be allowed": 15 first
/// attempts at 0.1 allow one retry (1.5 is not two whole retries), 29 allow two.
#[test]
fn ratio_budget_allows_only_whole_retries() {
    for (firsts, allowed) in [(9, 0), (10, 1), (15, 1), (19, 1), (20, 2), (29, 2)] {
        let kind = ratio_kind(0.1, 10, 0.0);
        let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
        for i in 0..firsts {
            b.on_first_attempt(0, SimTime(i));
        }
        let n = retries_allowed(&mut b, 0, SimTime(100), Status::Unavailable, 10);
        assert_eq!(n, allowed, "{firsts} first attempts");
    }
}

/// The reserve counts whole retries despite float rounding (0.29/s over 100 s is 29),
/// and a vanishing ratio leaves just the reserve instead of overflowing.
#[test]
fn ratio_budget_reserve_is_whole_retries_at_any_ratio() {
    let retries = |ratio: f64, min_per_s: f64, window_s: u64| {
        let kind = ratio_kind(ratio, window_s, min_per_s);
        let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
        b.on_first_attempt(0, SimTime(0));
        retries_allowed(&mut b, 0, SimTime(1), Status::Unavailable, 100)
    };
    assert_eq!(retries(0.0, 0.29, 100), 29);
    assert_eq!(retries(1e-300, 1.0, 10), 10);
    assert_eq!(retries(1e-12, 1.0, 10), 10);
}

#[test]
fn ratio_budget_min_per_s_is_a_floor() {
    let kind = ratio_kind(0.0, 2, 1.5);
    let mut b = Budgets::new(&spec(kind, Scope::Global), 1);
    let n = retries_allowed(&mut b, 0, SimTime(0), Status::Unavailable, 10);
    assert_eq!(n, 3);
}

/// Brooker's adaptive bucket: first attempts add 0.1 up to the size; a retry needs a
/// whole token.
#[test]
fn adaptive_bucket_starts_full_and_refills_per_first_attempt() {
    let kind = BudgetKind::Adaptive {
        fill_milli: 100,
        size_milli: 5_000,
        fill_on: Fill::Call,
    };
    let mut b = Budgets::new(&spec(kind, Scope::Client), 2);
    let n = retries_allowed(&mut b, 0, SimTime(0), Status::Unavailable, 10);
    assert_eq!(n, 5, "5.0 -> 4 -> 3 -> 2 -> 1 -> 0: five whole tokens");
    assert_eq!(b.level(0), 0);
    for _ in 0..9 {
        b.on_first_attempt(0, SimTime(0));
    }
    assert_eq!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Refused,
        "0.9 is not a whole token"
    );
    b.on_first_attempt(0, SimTime(0));
    assert!(b.try_retry(0, SimTime(0), Status::Unavailable) != Decision::Refused);
    assert_eq!(
        b.level(1),
        5_000,
        "client scope: the other client is untouched"
    );
    // A success adds nothing to a bucket filled per call.
    b.on_success(1, SimTime(0), None);
    assert_eq!(b.level(1), 5_000);
}

/// Filled per success (Brooker's wording): first attempts add nothing, successes 0.1.
#[test]
fn an_adaptive_bucket_filled_per_success_ignores_first_attempts() {
    let kind = BudgetKind::Adaptive {
        fill_milli: 100,
        size_milli: 5_000,
        fill_on: Fill::Success,
    };
    let mut b = Budgets::new(&spec(kind, Scope::Client), 1);
    for _ in 0..4 {
        assert!(b.try_retry(0, SimTime(0), Status::Unavailable) != Decision::Refused);
    }
    assert_eq!(b.level(0), 1_000);
    b.on_success(0, SimTime(0), None);
    assert_eq!(b.level(0), 1_100);
    assert!(b.try_retry(0, SimTime(0), Status::Unavailable) != Decision::Refused);
    assert_eq!(b.level(0), 100);
    for _ in 0..30 {
        b.on_first_attempt(0, SimTime(0));
    }
    assert_eq!(b.level(0), 100, "first attempts do not fill it");
    assert_eq!(
        b.try_retry(0, SimTime(0), Status::Unavailable),
        Decision::Refused
    );
    for _ in 0..9 {
        b.on_success(0, SimTime(0), None);
    }
    assert!(b.try_retry(0, SimTime(0), Status::Unavailable) != Decision::Refused);
    assert_eq!(b.level(0), 0);
}
