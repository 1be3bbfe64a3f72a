//! Issue 4 through the real engine: retry budgets, circuit breakers and fallback, on small
//! scenarios worked out by hand.
//!
//! Every scenario here uses a constant 10 ms one-way latency and a constant service time, so
//! every instant is exact: an attempt sent at `t` to a server that is down is rejected at
//! `t + 10 ms` and the client learns it at `t + 20 ms`; with a constant 100 ms backoff the
//! next attempt leaves at `t + 120 ms`. The comments give the hand-worked sequence behind
//! each expected number.

use herdsim::metrics::summary::summarize;
use herdsim::metrics::{Outcome, RunMetrics};
use herdsim::model::Scenario;
use herdsim::model::outcome::{GiveUpReason, Status};
use herdsim::time::SimDuration;

use crate::common::{Workspace, exact_scenario, herdsim, run, scenario};

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// A scenario with constant 10 ms latency. `clients` is the body of [clients], `server` of
/// [server] (its outages included), `retry` of [retry]; `rest` follows verbatim (strategies,
/// [fallback], ...).
fn exact(clients: &str, server: &str, retry: &str, rest: &str) -> String {
    exact_scenario("10ms", clients, server, retry, rest)
        .replace("name = \"exact\"", "name = \"policies\"")
}

/// A server with `concurrency` slots, 10 ms service, down from 0 to `outage_end`.
fn down_until(concurrency: u32, outage_end: &str) -> String {
    format!(
        "concurrency = {concurrency}\nservice = {{ dist = \"constant\", value = \"10ms\" }}\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"{outage_end}\""
    )
}

/// One strategy retrying after a constant 100 ms.
const CONSTANT_100MS: &str =
    "[[strategy]]\nname = \"constant\"\nbase = \"100ms\"\ncap = \"100ms\"\nmultiplier = 1.0";

fn gave_up(m: &RunMetrics, reason: GiveUpReason) -> u64 {
    m.entry().gave_up[reason as usize]
}

/// The per-request records of client `c`, in request order.
fn records(m: &RunMetrics, c: u32) -> Vec<herdsim::metrics::RequestRecord> {
    let mut r: Vec<_> = m
        .requests
        .iter()
        .filter(|r| r.client == c)
        .copied()
        .collect();
    r.sort_by_key(|r| r.request);
    r
}

/// Sums of the per-bucket counters: (arrivals, retries, budget_refused, fallback_arrivals).
fn timeline_sums(m: &RunMetrics) -> (u64, u64, u64, u64) {
    m.entry()
        .timeline
        .iter()
        .fold((0, 0, 0, 0), |(a, r, b, f), x| {
            (
                a + x.arrivals as u64,
                r + x.retries as u64,
                b + x.budget_refused as u64,
                f + x.fallback_arrivals as u64,
            )
        })
}

/// (bucket index, count) of the entry service's buckets where `count` is not 0.
fn nonzero_buckets(
    m: &RunMetrics,
    count: fn(&herdsim::metrics::Bucket) -> u32,
) -> Vec<(usize, u32)> {
    let series = &m.entry().timeline;
    (0..series.len())
        .filter(|&i| count(&series[i]) > 0)
        .map(|i| (i, count(&series[i])))
        .collect()
}

/// Every logical request ended exactly once: the counters and the records agree.
fn assert_each_request_ends_once(s: &Scenario, m: &RunMetrics) {
    let total = s.closed_requests();
    assert_eq!(m.entry().succeeded + m.gave_up_total(), total);
    let mut seen: Vec<(u32, u32)> = m.requests.iter().map(|r| (r.client, r.request)).collect();
    assert_eq!(seen.len() as u64, total);
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len() as u64, total, "a request ended twice");
}

// ---- token bucket (gRPC retry throttling) ------------------------------------------------

/// max_tokens 10, one client, a server down for an hour. Failures 1..4 leave 9, 8, 7, 6
/// tokens, each above 5: retried. The 5th leaves 5, not above 5: refused, `budget`.
/// Attempts leave at 0, 120, 240, 360, 480 ms; the 5th failure is known at 500 ms.
#[test]
fn token_bucket_retries_after_exactly_the_first_four_consecutive_failures() {
    let s = scenario(&exact(
        "count = 1",
        &down_until(1, "1h"),
        "max_attempts = 100\nbudget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 5);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (4, 1));
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 1);
    assert_eq!(m.entry().retries, [4, 0, 0, 0, 0, 0]);
    assert_eq!(m.completion.0, ms(500).0);
    let r = m.requests[0];
    assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::Budget));
    assert_eq!((r.attempts, r.last_status), (5, Some(Status::Unavailable)));
    // The refusal is counted in the bucket of 500 ms, the four retries where they were sent.
    assert_eq!(m.entry().timeline[5].budget_refused, 1);
    assert_eq!(timeline_sums(&m), (5, 4, 1, 0));
}

/// token_ratio 0.5: a successful request adds half a token. One client, three requests;
/// outages [0, 330 ms) and [385 ms, 1 h).
/// - Request 1: fails at 20, 140, 260 ms (tokens 9, 8, 7; all retried); attempt 4 leaves at
///   360, arrives at 370 (up), is answered at 390: success, tokens 7.5.
/// - Request 2 starts at 390: fails at 410 (6.5, retried), 530 (5.5, retried), 650 (4.5:
///   refused). Without the refill it would have stopped one retry earlier (6, then 5).
/// - Request 3 starts at 650: fails at 670 (3.5): refused.
#[test]
fn token_bucket_success_adds_token_ratio() {
    let server = down_until(1, "330ms") + "\n[[server.outages]]\nstart = \"385ms\"\nend = \"1h\"";
    let s = scenario(&exact(
        "count = 1\nrequests = 3",
        &server,
        "max_attempts = 100\nbudget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.5 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 8);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (5, 2));
    assert_eq!(
        (m.entry().succeeded, gave_up(&m, GiveUpReason::Budget)),
        (1, 2)
    );
    let attempts: Vec<u32> = records(&m, 0).iter().map(|r| r.attempts).collect();
    assert_eq!(attempts, [4, 3, 1]);
    assert_eq!(m.completion.0, ms(670).0);
}

/// Three clients, down for an hour, max_tokens 10, run with a bucket per client and with
/// one shared bucket.
/// - client: each client's bucket allows its own 4 retries: 3 x 5 = 15 calls, the last
///   failures known at 500 ms.
/// - global: failures at 20 ms take the shared bucket to 9, 8, 7 (all retried); at 140 ms
///   to 6 (client 0 retried), 5 and 4 (clients 1, 2 refused); at 260 ms client 0 takes it
///   to 3: refused. The fleet shares the 4 retries one client had: 7 calls.
#[test]
fn token_bucket_client_scope_gives_each_client_what_global_scope_gives_the_fleet() {
    let bucket = |scope: &str| {
        format!(
            "[[strategy]]\nname = \"{scope}\"\nbase = \"100ms\"\ncap = \"100ms\"\nmultiplier = 1.0\n\
             budget = {{ kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1, scope = \"{scope}\" }}\n"
        )
    };
    let s = scenario(&exact(
        "count = 3",
        &down_until(1, "1h"),
        "max_attempts = 100",
        &(bucket("client") + &bucket("global")),
    ));
    let client = run(&s, 0);
    assert_eq!(client.entry().calls, 15);
    assert_eq!(
        (client.entry().budget_allowed, client.entry().budget_refused),
        (12, 3)
    );
    assert_eq!(client.completion.0, ms(500).0);
    assert!(client.requests.iter().all(|r| r.attempts == 5));

    let global = run(&s, 1);
    assert_eq!(global.entry().calls, 7);
    assert_eq!(
        (global.entry().budget_allowed, global.entry().budget_refused),
        (4, 3)
    );
    assert_eq!(gave_up(&global, GiveUpReason::Budget), 3);
    assert_eq!(global.completion.0, ms(260).0);
    let attempts: Vec<u32> = (0..3).map(|c| records(&global, c)[0].attempts).collect();
    assert_eq!(attempts, [3, 2, 2]);
}

// ---- quota (AWS SDK standard mode) -------------------------------------------------------

/// A global quota of 500, 5 per retry after a 503: exactly 100 retries drain it.
/// 30 clients fail together every 120 ms: rounds at 20, 140, 260 ms take 30 retries each
/// (150, 300, 450 units); at 380 ms the first 10 clients take the last 50 units and 20 are
/// refused; at 500 ms those 10 fail again and are refused. Calls = 30 + 100.
#[test]
fn quota_drains_after_exactly_100_retries_with_global_scope() {
    let s = scenario(&exact(
        "count = 30",
        &down_until(1, "1h"),
        "max_attempts = 1000\nbudget = { kind = \"quota\", capacity = 500, retry_cost = 5, timeout_cost = 10, success_refund = 1, scope = \"global\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 130);
    assert_eq!(
        (m.entry().budget_allowed, m.entry().budget_refused),
        (100, 30)
    );
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 30);
    assert_eq!(m.completion.0, ms(500).0);
    let five = m.requests.iter().filter(|r| r.attempts == 5).count();
    let four = m.requests.iter().filter(|r| r.attempts == 4).count();
    assert_eq!((five, four), (10, 20));
    assert_eq!(m.entry().timeline[3].budget_refused, 20);
    assert_eq!(m.entry().timeline[5].budget_refused, 10);
    let summary = summarize(&s, 0, std::slice::from_ref(&m));
    assert_eq!(summary.budget_refused, 30.0);
    assert_eq!(summary.budget_refusal_rate, 30.0 / 130.0);
    assert_eq!(summary.gave_up_for(GiveUpReason::Budget), 30.0);
}

/// After timeouts a retry costs 10: 50 retries drain the same quota. The server takes every
/// attempt but serves it for 1 s; each attempt times out 50 ms after it left and is retried
/// 100 ms later. Rounds leave at 0, 150, 300 ms: 30 retries (300 units) at 50 ms, 20 at
/// 200 ms (500) with 10 refused, and the 20 refused at 350 ms. Calls = 30 + 50; all of them
/// are served after their client left (wasted).
#[test]
fn quota_drains_after_exactly_50_retries_after_timeouts() {
    let s = scenario(&exact(
        "count = 30",
        "concurrency = 100\nservice = { dist = \"constant\", value = \"1s\" }",
        "max_attempts = 1000\ntimeout = \"50ms\"\nbudget = { kind = \"quota\", scope = \"global\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 80);
    assert_eq!(
        (m.entry().budget_allowed, m.entry().budget_refused),
        (50, 30)
    );
    assert_eq!(m.entry().retries, [0, 0, 0, 50, 0, 0]);
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 30);
    assert_eq!(m.completion.0, ms(350).0);
    assert_eq!(m.entry().wasted, 80);
}

/// A success refunds the cost of its last retry. Client quota of 12, one client, two
/// requests; outages [0, 250 ms) and [275 ms, 1 h).
/// - Request 1: fails at 20 (12 -> 7) and 140 ms (7 -> 2); attempt 3 arrives at 250 ms, up:
///   success at 270 ms refunds 5 -> 7.
/// - Request 2: fails at 290 (7 -> 2, retried) and 410 ms (2 < 5: refused).
///
/// Without the refund request 2 would have been refused at its first failure.
#[test]
fn quota_success_refunds_the_last_retry_cost() {
    let server = down_until(1, "250ms") + "\n[[server.outages]]\nstart = \"275ms\"\nend = \"1h\"";
    let s = scenario(&exact(
        "count = 1\nrequests = 2",
        &server,
        "max_attempts = 100\nbudget = { kind = \"quota\", capacity = 12, retry_cost = 5 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 5);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (3, 1));
    assert_eq!(
        (m.entry().succeeded, gave_up(&m, GiveUpReason::Budget)),
        (1, 1)
    );
    assert_eq!(m.completion.0, ms(410).0);
}

/// A retried success refunds its last retry's cost even when that cost is 0, and never
/// `success_refund` (here 10, to make the difference visible). Quota 10; a retry after a
/// 503 costs 0, after an unreachable server 10; attempt timeout 50 ms. One client, two
/// requests; the server is unreachable until 100 ms, down until 200 ms, unreachable again
/// from 300 ms.
/// - Request 1: attempt 1 is lost, fails at 50 ms (10 -> 0, retried); attempt 2 arrives at
///   160 ms: 503 at 170 ms (cost 0, retried); attempt 3 succeeds at 300 ms: refund 0.
/// - Request 2: lost, fails at 350 ms; a retry needs 10, 0 are left: refused, `budget`.
#[test]
fn quota_refunds_a_zero_cost_retry_with_nothing() {
    let s = scenario(&exact(
        "count = 1\nrequests = 2",
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"100ms\"\nkind = \"unreachable\"\n\
         [[server.outages]]\nstart = \"100ms\"\nend = \"200ms\"\n\
         [[server.outages]]\nstart = \"300ms\"\nend = \"1h\"\nkind = \"unreachable\"",
        "max_attempts = 3\ntimeout = \"50ms\"\n\
         budget = { kind = \"quota\", capacity = 10, retry_cost = 0, timeout_cost = 10, success_refund = 10 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(
        (m.entry().succeeded, gave_up(&m, GiveUpReason::Budget)),
        (1, 1)
    );
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (2, 1));
    assert_eq!(
        m.entry().calls,
        2,
        "unreachable attempts never reach the server"
    );
    assert_eq!(m.entry().retries, [1, 0, 0, 0, 1, 0]);
    assert_eq!(m.completion.0, ms(350).0);
}

// ---- ratio (seed 002, Finagle) ----------------------------------------------------------

/// ratio 0.1, window 10 s, global: n clients fail together at 20 ms. A retry is allowed
/// while the retries in the window, this one included, are at most 0.1 x n (Finagle: "for
/// every 10 calls to deposit(), 1 retry will be allowed"): 10 clients -> 1 retry; 20 -> 2;
/// 15 -> 1 (a second retry would make 2 > 1.5). The retried clients fail again at 140 ms
/// and are refused.
#[test]
fn ratio_budget_allows_one_retry_per_ten_first_attempts_in_the_window() {
    for (clients, allowed) in [(10, 1), (20, 2), (15, 1)] {
        let s = scenario(&exact(
            &format!("count = {clients}"),
            &down_until(1, "1h"),
            "max_attempts = 100\nbudget = { kind = \"ratio\", ratio = 0.1, window = \"10s\" }",
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().calls, clients + allowed, "{clients} clients");
        assert_eq!(m.entry().budget_allowed, allowed, "{clients} clients");
        assert_eq!(m.entry().budget_refused, clients, "{clients} clients");
        assert_eq!(gave_up(&m, GiveUpReason::Budget), clients);
        assert_eq!(m.completion.0, ms(140).0);
    }
}

/// ratio 0, min_per_s 1, window 1 s: one retry per rolling second. One client, 50 requests
/// one after another, the server down for an hour.
/// - Request 0 fails at 20 ms: retried (1 retry <= 1); fails again at 140 ms: refused (2 > 1).
/// - Request n >= 1 starts at 140 + 20(n-1) ms and fails 20 ms later: refused while the
///   20 ms retry is in the window (now - 1 s, now]. Request 44 fails at exactly 1020 ms,
///   when it has just left: retried; its retry fails at 1140 ms: refused.
/// - Requests 45..49 fail at 1160..1240 ms: refused.
///
/// Calls = 2 + 43 + 2 + 5 = 52.
#[test]
fn ratio_budget_window_slides_and_min_per_s_is_a_floor() {
    let s = scenario(&exact(
        "count = 1\nrequests = 50",
        &down_until(1, "1h"),
        "max_attempts = 100\nbudget = { kind = \"ratio\", ratio = 0.0, min_per_s = 1, window = \"1s\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 52);
    assert_eq!(
        (m.entry().budget_allowed, m.entry().budget_refused),
        (2, 50)
    );
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 50);
    assert_eq!(m.completion.0, ms(1240).0);
    let r = records(&m, 0);
    let retried: Vec<u32> = r
        .iter()
        .filter(|r| r.attempts == 2)
        .map(|r| r.request)
        .collect();
    assert_eq!(retried, [0, 44]);
    assert_eq!(r[44].latency, Some(ms(140)));
    // The two retries leave at 120 ms and 1120 ms.
    let retry_buckets: Vec<usize> = (0..m.entry().timeline.len())
        .filter(|&i| m.entry().timeline[i].retries > 0)
        .collect();
    assert_eq!(retry_buckets, [1, 11]);
}

/// Finagle's per-request cap: ratio 1, min_per_s 1, window 10 s, one client, one request,
/// the server down for an hour, retries 120 ms apart. The first attempt deposits 1 retry on
/// a reserve of 10: a balance of 11 whole retries. `per_request = 0.5` caps the request at
/// ceil(5.5) = 6 retries (7 calls), 0.2 at ceil(2.2) = 3 (4 calls), 0 at none (1 call); each
/// ends as `budget`. Without it, `max_attempts = 10` ends it first (10 calls, `attempts`).
/// 0.07 of a balance of 100 allows 7 retries, as decimals give.
#[test]
fn a_per_request_cap_ends_a_request_before_the_budget_does() {
    for (per_request, calls, reason) in [
        (", per_request = 0.5", 7, GiveUpReason::Budget),
        (", per_request = 0.2", 4, GiveUpReason::Budget),
        (", per_request = 0", 1, GiveUpReason::Budget),
        ("", 10, GiveUpReason::Attempts),
    ] {
        let s = scenario(&exact(
            "count = 1",
            &down_until(1, "1h"),
            &format!(
                "max_attempts = 10\nbudget = {{ kind = \"ratio\", ratio = 1.0, min_per_s = 1, \
                 window = \"10s\"{per_request} }}"
            ),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().calls, calls, "{per_request}");
        assert_eq!(gave_up(&m, reason), 1, "{per_request}");
        assert_eq!(m.entry().budget_allowed, calls - 1, "{per_request}");
    }
    // The cap is rounded up as a decimal: a reserve of 9.9/s x 10 s and the deposit make a
    // balance of 100, and 0.07 x 100 allows 7 retries (8 calls), not the 8 of binary
    // floating point's 7.000000000000001.
    let s = scenario(&exact(
        "count = 1",
        &down_until(1, "1h"),
        "max_attempts = 10
budget = { kind = \"ratio\", ratio = 1.0, min_per_s = 9.9, \
         window = \"10s\", per_request = 0.07 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 8);
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 1);
}

/// `deposit = "success"` (Finagle since 20.8.0) against `"request"` (before): ratio 1, no
/// reserve, one client, five requests back to back, the server down in [0, 50 ms) and from
/// 100 ms on, retries 100 ms apart.
/// - success: requests 1 and 2 fail at 20 and 40 ms with nothing deposited: refused. Request
///   3 arrives at 50 ms and succeeds at 70 (deposit), request 4 at 100 (deposit). Request 5
///   fails at 120 ms and may retry twice (2 deposits), at 220 and 360 ms; refused at 380.
///   Calls 1 + 1 + 1 + 1 + 3 = 7; 3 give up.
/// - request: every first attempt deposits, so each request retries once (1 deposit more
///   than the retries so far), and its retry, sent 120 ms after it starts, meets the second
///   outage: refused. Calls 10; 5 give up.
#[test]
fn a_ratio_budget_deposits_per_request_or_per_success() {
    let server = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"50ms\"\n\
         [[server.outages]]\nstart = \"100ms\"\nend = \"1h\"";
    for (deposit, calls, gave_up_budget) in [("success", 7, 3), ("request", 10, 5)] {
        let s = scenario(&exact(
            "count = 1\nrequests = 5",
            server,
            &format!(
                "max_attempts = 10\nbudget = {{ kind = \"ratio\", ratio = 1.0, min_per_s = 0, \
                 window = \"10s\", deposit = \"{deposit}\" }}"
            ),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().calls, calls, "{deposit}");
        assert_eq!(
            gave_up(&m, GiveUpReason::Budget),
            gave_up_budget,
            "{deposit}"
        );
        assert_eq!(m.entry().succeeded, 5 - gave_up_budget, "{deposit}");
    }
}

// ---- concurrent (Envoy) -----------------------------------------------------------------

/// Envoy's retry budget, global, percent 50, no minimum: ten clients, the server down for an
/// hour, every attempt answered 503 20 ms after it leaves, retries 100 ms later.
/// - 20 ms: ten outcomes, one after another. The first leaves 9 attempts in flight: limit
///   floor(4.5) = 4, retry 1 allowed; then 8 (limit 4, retry 2), 7 (limit 3, retry 3);
///   6 leave a limit of 3, all taken: the other seven are refused (`budget`).
/// - 140 ms: the three retries fail. Each outcome first gives back its retry, then asks
///   again with 2, 1, 0 attempts in flight (limits 1, 0, 0) and 2, 1, 0 retries held:
///   refused.
///
/// Calls 13, 3 retries allowed, 10 refused.
#[test]
fn a_concurrent_budget_limits_retries_in_progress() {
    let s = scenario(&exact(
        "count = 10",
        &down_until(10, "1h"),
        "max_attempts = 5\nbudget = { kind = \"concurrent\", percent = 50, min_retries = 0, scope = \"global\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 13);
    assert_eq!(
        (m.entry().budget_allowed, m.entry().budget_refused),
        (3, 10)
    );
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 10);
    assert_eq!(m.completion.0, ms(140).0);
}

/// When the failed attempt stops counting as in flight, as Envoy has it: two clients, a
/// global budget of 50%, no minimum. Answered with 503, the first outcome is judged while
/// its attempt is still active (Envoy decides on the response headers, then resets the
/// upstream request): 2 in flight, limit 1, one retry; the second sees 1, limit 0. Timed
/// out (an unreachable server, 1 s timeout), the attempt is reset first: 1 in flight, limit
/// 0, then 0: no retry at all.
#[test]
fn an_answered_failure_counts_in_flight_at_its_decision_a_timeout_does_not() {
    for (kind, allowed) in [("down", 1), ("unreachable", 0)] {
        let server = format!(
            "concurrency = 2\nservice = {{ dist = \"constant\", value = \"10ms\" }}\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"1h\"\nkind = \"{kind}\""
        );
        let s = scenario(&exact(
            "count = 2",
            &server,
            "max_attempts = 2\ntimeout = \"1s\"\n\
             budget = { kind = \"concurrent\", percent = 50, min_retries = 0, scope = \"global\" }",
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().budget_allowed, allowed, "{kind}");
        assert_eq!(m.entry().budget_refused, 2 - allowed, "{kind}");
    }
}

/// A retry held by a request that ends without sending it is given back: a retry-only
/// breaker (global, opens at the second failure and stays open) refuses retries at send;
/// the budget (global, 1 retry in progress at most) must see those refused retries go.
/// - 20 ms: client 0 fails, takes the retry (held); client 1 fails, opens the breaker, is
///   refused by the budget, and starts its second request (a first attempt goes out).
/// - 40 ms: client 1 fails again: the retry is still held by client 0: refused.
/// - 120 ms: client 0's retry is refused by the breaker (`breaker_open`): the held retry is
///   given back; its second request fails at 140 ms and takes the retry again, refused by
///   the breaker at 240 ms. Had it not been given back, the 140 ms failure would be refused
///   by the budget.
#[test]
fn a_held_retry_is_given_back_when_its_request_ends_without_it() {
    let s = scenario(&exact(
        "count = 2\nrequests = 2",
        &down_until(2, "1h"),
        "max_attempts = 5\n\
         budget = { kind = \"concurrent\", percent = 0, min_retries = 1, scope = \"global\" }\n\
         breaker = { failure_rate = 1.0, window = \"1h\", min_calls = 2, open_for = \"1h\", \
         retries_only = true, scope = \"global\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.entry().calls, 4);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (2, 2));
    assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 2);
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 2);
}

/// Envoy's `max_retries` breaker (percent 0, min_retries 2): five clients failing at 20 ms;
/// clients 0 and 1 take the two retries, the other three are refused. At 140 ms each
/// retry's outcome gives its retry back before asking again, so both retry once more, and
/// give up on attempts (3) at 260 ms. Calls 5 + 2 + 2 = 9.
#[test]
fn a_concurrent_budget_with_no_share_allows_min_retries_at_once() {
    let s = scenario(&exact(
        "count = 5",
        &down_until(5, "1h"),
        "max_attempts = 3\nbudget = { kind = \"concurrent\", percent = 0, min_retries = 2, scope = \"global\" }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 9);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (4, 3));
    assert_eq!(gave_up(&m, GiveUpReason::Budget), 3);
    assert_eq!(gave_up(&m, GiveUpReason::Attempts), 2);
    let retried: Vec<u32> = (0..5).map(|c| records(&m, c)[0].attempts).collect();
    assert_eq!(retried, [3, 3, 1, 1, 1]);
}

/// The same herd with a client-scoped concurrent budget (min_retries = 1, no share) and with
/// none: a closed client sends one call at a time and has given its retry back before each
/// decision, so the budget allows every retry (`check` warns so) and the runs make the same
/// calls. The global budget of the same size does refuse: 5 clients, 1 retry at a time.
#[test]
fn a_client_concurrent_budget_never_refuses_a_closed_client() {
    let with = |budget: &str| {
        scenario(&exact(
            "count = 5\nrequests = 2",
            &down_until(5, "300ms"),
            &format!("max_attempts = 4\n{budget}"),
            CONSTANT_100MS,
        ))
    };
    let client = run(
        &with(
            "budget = { kind = \"concurrent\", percent = 0, min_retries = 1, scope = \"client\" }",
        ),
        0,
    );
    let none = run(&with(""), 0);
    assert_eq!(client.entry().budget_refused, 0);
    assert!(client.entry().budget_allowed > 0);
    assert_eq!(
        client.entry().budget_allowed,
        none.entry().retries.iter().sum::<u64>()
    );
    assert_eq!(client.entry().calls, none.entry().calls);
    assert_eq!(client.completion, none.completion);
    let global = run(
        &with(
            "budget = { kind = \"concurrent\", percent = 0, min_retries = 1, scope = \"global\" }",
        ),
        0,
    );
    assert!(global.entry().budget_refused > 0);
}

// ---- adaptive (Brooker 2022) ------------------------------------------------------------

/// fill_per_call 0.5, size 3, one client, three requests, the server down for an hour.
/// - Request 1: its first attempt adds 0.5 to a full bucket (stays 3); failures take it to
///   2, 1 and 0 (three retries, at 120, 240 and 360 ms); at 0: refused. 4 calls, ends at
///   380 ms.
/// - Request 2: first attempt -> 0.5, not a whole token: refused at once. 1 call, ends at
///   400 ms.
/// - Request 3: first attempt -> 1.0: retried (-> 0) at 520 ms, then refused. 2 calls, ends
///   at 540 ms.
#[test]
fn adaptive_bucket_fills_per_first_attempt_and_needs_a_whole_token() {
    let s = scenario(&exact(
        "count = 1\nrequests = 3",
        &down_until(1, "1h"),
        "max_attempts = 100\nbudget = { kind = \"adaptive\", fill_per_call = 0.5, size = 3 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 7);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (4, 3));
    let attempts: Vec<u32> = records(&m, 0).iter().map(|r| r.attempts).collect();
    assert_eq!(attempts, [4, 1, 2]);
    assert_eq!(m.completion.0, ms(540).0);
}

/// The same bucket filled per success (`fill_per_success`, as Brooker's post words it):
/// nothing succeeds, so nothing refills it. Request 1 takes it from 3 to 2, 1 and 0 (three
/// retries, then refused); requests 2 and 3 find it empty: refused at once.
#[test]
fn an_adaptive_bucket_filled_per_success_stays_empty_while_everything_fails() {
    let s = scenario(&exact(
        "count = 1\nrequests = 3",
        &down_until(1, "1h"),
        "max_attempts = 100\nbudget = { kind = \"adaptive\", fill_per_success = 0.5, size = 3 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 6);
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (3, 3));
    let attempts: Vec<u32> = records(&m, 0).iter().map(|r| r.attempts).collect();
    assert_eq!(attempts, [4, 1, 1]);
}

/// A retry refused by a budget never reaches the server: on a jittered herd, for each kind,
/// calls = first attempts + retries the budget allowed, and the retries sent (per bucket
/// and per class) are exactly the allowed ones.
#[test]
fn a_retry_refused_by_a_budget_never_reaches_the_server() {
    let budgets = [
        r#"{ kind = "ratio", ratio = 0.1, window = "1s", min_per_s = 5 }"#,
        r#"{ kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }"#,
        r#"{ kind = "quota", capacity = 100, scope = "global" }"#,
        r#"{ kind = "adaptive", fill_per_call = 0.1, size = 5, scope = "global" }"#,
    ];
    let strategies: String = budgets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            format!(
                "[[strategy]]\nname = \"b{i}\"\nbase = \"50ms\"\ncap = \"1s\"\njitter = \"full\"\nbudget = {b}\n"
            )
        })
        .collect();
    let text = exact(
        "count = 300\nstart_spread = \"200ms\"",
        "concurrency = 10\nqueue = 10\nservice = { dist = \"exponential\", mean = \"5ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"500ms\"",
        "max_attempts = 6\ntimeout = \"1s\"",
        &strategies,
    );
    let s = scenario(&text);
    for (i, budget) in budgets.iter().enumerate() {
        let m = run(&s, i);
        assert_each_request_ends_once(&s, &m);
        assert!(
            m.entry().budget_refused > 0 && m.entry().budget_allowed > 0,
            "{budget}"
        );
        assert_eq!(m.entry().calls, 300 + m.entry().budget_allowed, "{budget}");
        assert_eq!(
            m.entry().retries.iter().sum::<u64>(),
            m.entry().budget_allowed
        );
        let (arrivals, retries, refused, _) = timeline_sums(&m);
        assert_eq!(
            (arrivals, retries, refused),
            (
                m.entry().calls,
                m.entry().budget_allowed,
                m.entry().budget_refused
            )
        );
    }
}

// ---- gRPC pushback ------------------------------------------------------------------------

/// gRPC: after a pushback (a Retry-After hint), "if that retry also fails, backoff restarts
/// at initialBackoff" (`retry_after = { restart = true }`). One client, 10 ms each way and
/// 10 ms of service; 503 with a 1 s hint until 500 ms, then 500s.
/// - Attempt 1 at 0 s: 503 + hint at 20 ms; retried after exactly 1 s, at 1.02 s.
/// - Attempt 2 fails at 1.05 s: the ladder starts again: 100 ms, so attempt 3 at 1.15 s;
///   then 200 ms (1.38 s), 400 ms (1.81 s); attempt 5 fails at 1.84 s: attempts spent.
///
/// Without `restart` the ladder goes on at retry 2: 200, 400, 800 ms, ending at 2.54 s.
#[test]
fn a_pushback_restarts_the_backoff_ladder_when_asked() {
    let text = |restart: &str| {
        format!(
            r#"
name = "pushback"
[clients]
count = 1
[network]
latency = {{ dist = "constant", value = "10ms" }}
[server]
concurrency = 100
service = {{ dist = "constant", value = "10ms" }}
[[server.outages]]
start = "0s"
end = "500ms"
retry_after = "1s"
[[server.outages]]
start = "500ms"
end = "1h"
kind = "errors"
error_rate = 1.0
[retry]
max_attempts = 5
base = "100ms"
cap = "10s"
jitter = "none"
retry_after = {{ restart = {restart} }}
[[strategy]]
name = "grpc"
"#
        )
    };
    for (restart, end, waited) in [
        ("true", 1_840, 1_000 + 700),
        ("false", 2_540, 1_000 + 1_400),
    ] {
        let m = run(&scenario(&text(restart)), 0);
        let r = records(&m, 0);
        assert_eq!(r[0].attempts, 5, "restart = {restart}");
        assert_eq!(r[0].outcome, Outcome::GaveUp(GiveUpReason::Attempts));
        assert_eq!(m.completion.0, ms(end).0, "restart = {restart}");
        assert_eq!(r[0].total_wait, ms(waited), "restart = {restart}");
    }
}

// ---- the rate-limit ladder's statuses ---------------------------------------------------

/// loopctl's rate-limit ladder counts 429, 503 and 529 ("429/503/529 arrives -> count"):
/// `rate_limit.on = ["429", "503"]` puts 503s on it. One client, the server down (503, no
/// hint) for an hour: every 503 waits the ladder's 5 s, the 4th escalates (count > 3):
/// attempts at 0, 5.02, 10.04 and 15.06 s, escalated at 15.08 s. By default only 429s climb
/// it, and the 503s use the transport attempts: 4 attempts 100 ms apart, ended at 0.38 s.
#[test]
fn the_rate_limit_ladder_takes_the_statuses_it_is_given() {
    let ladder = "max_retries = 5, escalate_after = 3, default_wait = \"5s\", max_wait = \"60s\"";
    for (on, reason, end) in [
        (
            "on = [\"429\", \"503\"], ",
            GiveUpReason::RateLimitEscalation,
            15_080,
        ),
        ("", GiveUpReason::Attempts, 380),
    ] {
        let s = scenario(&exact(
            "count = 1",
            &down_until(1, "1h"),
            &format!("max_attempts = 4\nrate_limit = {{ {on}{ladder} }}"),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        let r = records(&m, 0);
        assert_eq!(r[0].attempts, 4, "{on}");
        assert_eq!(r[0].outcome, Outcome::GaveUp(reason), "{on}");
        assert_eq!(m.completion.0, ms(end).0, "{on}");
    }
}

// ---- circuit breaker ----------------------------------------------------------------------

/// failure_rate 1, min_calls k, one client, down for an hour: failures at 20, 140, ... ms;
/// the k-th opens the breaker; the retry decided then leaves at k x 120 ms and fails fast
/// (`breaker_open`), never reaching the server: k calls, k - 1 retries sent.
#[test]
fn a_breaker_opens_after_exactly_min_calls_failures_and_fails_fast() {
    for k in [3u64, 4] {
        let s = scenario(&exact(
            "count = 1",
            &down_until(1, "1h"),
            &format!(
                "max_attempts = 10\nbreaker = {{ failure_rate = 1.0, window = \"10s\", min_calls = {k}, open_for = \"1s\", half_open_probes = 1 }}"
            ),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().calls, k, "min_calls {k}");
        assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 1);
        assert_eq!(
            m.entry().retries,
            [k - 1, 0, 0, 0, 0, 0],
            "only sent retries count"
        );
        assert_eq!(m.completion.0, ms(k * 120).0);
        let r = m.requests[0];
        assert_eq!(
            (r.attempts as u64, r.last_status),
            (k, Some(Status::BreakerOpen))
        );
        // It opened at (k-1) x 120 + 20 ms and half-opened a full second later.
        assert_eq!(m.breaker_open, SimDuration::from_secs(1));
    }
}

/// `window_buckets` through a scenario: one client, five requests back to back, no retry,
/// 10 ms each way and 10 ms of service; the server is down at the arrivals of requests 1, 4
/// and 5, so their 503s come back 20 ms after they leave and the successes 30 ms after:
/// outcomes F at 20, S at 50, S at 80, F at 100 (request 5 leaves then), F at 120 ms. A
/// global breaker opens at half failures once 3 outcomes count, in a 100 ms window.
/// - Exact window, at 100 ms: (0, 100] holds all four: 2 of 4: opens; request 5 is refused.
/// - Ten clock buckets of 10 ms: at 100 ms, buckets 1 to 10 (10-109 ms): the same four.
/// - Two clock buckets of 50 ms: at 100 ms, buckets 1 and 2 (50-149 ms): 1 of 3: closed, and
///   request 5 goes out (the breaker opens at its failure, too late to refuse anything).
/// - Two buckets opened by outcomes: the first opened at 20 ms holds 20 and 50 ms, the
///   second opened at 80 ms; at 100 ms the first is 80 ms old, under the 100 ms window:
///   all four count: opens.
#[test]
fn window_buckets_decide_which_outcomes_a_scenario_breaker_counts() {
    for (buckets, refused) in [
        ("", 1),
        (", window_buckets = 10", 1),
        (", window_buckets = 2", 0),
        (", window_buckets = 2, buckets_from = \"outcome\"", 1),
    ] {
        let server = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"15ms\"\n\
             [[server.outages]]\nstart = \"85ms\"\nend = \"115ms\"";
        let s = scenario(&exact(
            "count = 1\nrequests = 5",
            server,
            &format!(
                "max_attempts = 1\nbreaker = {{ failure_rate = 0.5, min_calls = 3, \
                 window = \"100ms\", open_for = \"1h\", scope = \"global\"{buckets} }}"
            ),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), refused, "{buckets}");
    }
}

/// Resilience4j's slow-call rate: one client, five requests back to back, every call
/// answered 200 after 30 ms (10 ms each way, 10 ms of service). With `slow_call = "25ms"`
/// every call is slow though none fails: the third outcome (at 90 ms) fills the window of 3
/// and opens the breaker, so requests 4 and 5 fail fast as `breaker_open` at 90 ms. A call
/// of exactly `slow_call` is not slow (Resilience4j compares with `>`): at "30ms" all five
/// succeed.
#[test]
fn slow_calls_open_a_breaker_that_no_failure_opens() {
    for (over, succeeded, refused) in [("25ms", 3, 2), ("30ms", 5, 0)] {
        let s = scenario(&exact(
            "count = 1\nrequests = 5",
            "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }",
            &format!(
                "max_attempts = 3\nbreaker = {{ window_calls = 3, min_calls = 3, \
                 slow_call = \"{over}\", slow_call_rate = 1.0, open_for = \"1s\" }}"
            ),
            CONSTANT_100MS,
        ));
        let m = run(&s, 0);
        assert_eq!(m.entry().succeeded, succeeded, "slow_call {over}");
        assert_eq!(
            gave_up(&m, GiveUpReason::BreakerOpen),
            refused,
            "slow_call {over}"
        );
        assert_eq!(m.entry().calls, succeeded, "slow_call {over}");
        // Opened at 90 ms, when the last two requests end; its open second is counted
        // whole (its half-open event is still run).
        let (open, completion) = if refused > 0 {
            (SimDuration::from_secs(1), ms(90))
        } else {
            (SimDuration::ZERO, ms(150))
        };
        assert_eq!((m.breaker_open, m.completion.0), (open, completion.0));
    }
}

/// A global breaker: failure_rate 1, min_calls 3, open_for 1 s, 2 probes. Five clients, two
/// requests each, 100 ms think time, the server down until 100 ms, a constant 2 s backoff.
/// - 20 ms: five 503s; the third opens the breaker (the other two arrive while it is open
///   and are not recorded). Everyone schedules a retry at 2.02 s. Half-open at 1.02 s.
/// - 2.02 s: clients 0 and 1 go through as the two probes; clients 2, 3, 4 fail fast and
///   give up `breaker_open` (their next request starts at 2.12 s).
/// - 2.05 s: both probes succeed: closed. 2.12 s: clients 2-4 go through normally, succeed at
///   2.15 s; clients 0 and 1 start again at 2.15 s and succeed at 2.18 s.
///
/// Calls = 5 + 2 + 3 + 2 = 12; open exactly from 20 ms to 1.02 s.
fn half_open_scenario() -> String {
    exact(
        "count = 5\nrequests = 2\nthink = { dist = \"constant\", value = \"100ms\" }",
        &down_until(5, "100ms"),
        "max_attempts = 5\nbreaker = { failure_rate = 1.0, window = \"10s\", min_calls = 3, open_for = \"1s\", half_open_probes = 2, scope = \"global\" }",
        "[[strategy]]\nname = \"breaker\"\nbase = \"2s\"\ncap = \"2s\"\nmultiplier = 1.0",
    )
}

#[test]
fn a_half_open_breaker_lets_exactly_the_probes_through_and_closes_when_they_succeed() {
    let s = scenario(&half_open_scenario());
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.entry().calls, 12);
    assert_eq!(m.entry().succeeded, 7);
    assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 3);
    assert_eq!(m.completion.0, ms(2180).0);
    assert_eq!(m.breaker_open, SimDuration::from_secs(1));
    for c in 0..5 {
        let r = records(&m, c);
        if c < 2 {
            assert_eq!(r[0].outcome, Outcome::Succeeded, "client {c} is a probe");
            assert_eq!((r[0].attempts, r[0].latency), (2, Some(ms(2050))));
            assert_eq!(r[1].latency, Some(ms(30)));
        } else {
            assert_eq!(r[0].outcome, Outcome::GaveUp(GiveUpReason::BreakerOpen));
            assert_eq!((r[0].attempts, r[0].latency), (1, Some(ms(2020))));
            assert_eq!(r[0].last_status, Some(Status::BreakerOpen));
            assert_eq!(r[1].outcome, Outcome::Succeeded, "closed again at 2.05 s");
        }
    }
    // Open at the end of buckets 0..=9 (0 - 1 s), closed from the bucket of 1.02 s on.
    let open: Vec<u32> = m.entry().timeline.iter().map(|b| b.breakers_open).collect();
    assert_eq!(open[..12], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    assert!(open[10..].iter().all(|&n| n == 0));
    // Arrivals: 5 in the first bucket, the 2 probes at 2.03 s, 3 at 2.13 s and 2 at 2.16 s.
    assert_eq!(
        nonzero_buckets(&m, |b| b.arrivals),
        [(0, 5), (20, 2), (21, 5)]
    );
}

/// A failed probe re-opens the breaker, and breaker_open_s sums every open period. One
/// client, three requests 1 s apart, down for an hour; min_calls 3, open_for 500 ms, 1 probe.
/// - Request 1 fails at 20, 140, 260 ms (opens; half-open at 760 ms); its retry at 360 ms
///   fails fast. Next request at 1.36 s.
/// - Request 2 is the probe: fails at 1.38 s, re-opens (half-open at 1.88 s); its retry at
///   1.48 s fails fast. Request 3 at 2.48 s: the same, re-opened at 2.5 s, retry fails fast
///   at 2.6 s. The last open period ends at 3 s, after the last request: it counts in full.
///
/// Open 3 x 0.5 s = 1.5 s; calls 3 + 1 + 1.
#[test]
fn a_failed_probe_reopens_and_breaker_open_s_sums_every_open_period() {
    let s = scenario(&exact(
        "count = 1\nrequests = 3\nthink = { dist = \"constant\", value = \"1s\" }",
        &down_until(1, "1h"),
        "max_attempts = 10\nbreaker = { failure_rate = 1.0, min_calls = 3, open_for = \"500ms\", half_open_probes = 1 }",
        CONSTANT_100MS,
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 5);
    assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 3);
    assert_eq!(m.completion.0, ms(2600).0);
    assert_eq!(m.breaker_open, ms(1500));
    assert_eq!(
        summarize(&s, 0, std::slice::from_ref(&m)).breaker_open_s,
        1.5
    );
    let attempts: Vec<u32> = records(&m, 0).iter().map(|r| r.attempts).collect();
    assert_eq!(attempts, [3, 1, 1]);
}

/// A breaker still open when the run stops at `time_limit` counts as open until then, as
/// the series show. One client, one request, down for an hour, min_calls 3, open_for 1 h,
/// time_limit 5 s: failures at 20, 140, 260 ms open it; the retry at 360 ms fails fast (the
/// last request ends there). The half-open instant is past the limit: open 5 - 0.26 s.
#[test]
fn a_breaker_open_past_the_time_limit_counts_until_the_limit() {
    let s = scenario(
        &exact(
            "count = 1",
            &down_until(1, "1h"),
            "max_attempts = 10\nbreaker = { failure_rate = 1.0, min_calls = 3, open_for = \"1h\", half_open_probes = 1 }",
            CONSTANT_100MS,
        )
        .replace("name = \"policies\"", "name = \"policies\"\ntime_limit = \"5s\""),
    );
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 3);
    assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 1);
    assert_eq!(m.completion.0, ms(360).0);
    assert_eq!(m.breaker_open, ms(4740));
    assert_eq!(m.services[0].breaker_open, ms(4740));
    // The series agree: open at the end of every bucket from 0.26 s to the last one.
    let open: Vec<u32> = m.entry().timeline.iter().map(|b| b.breakers_open).collect();
    assert_eq!(open.len(), 50);
    assert!(open[2..].iter().all(|&n| n == 1));
}

// ---- fallback -----------------------------------------------------------------------------

/// The primary rate-limits: 1 token per second, burst 2, Retry-After "auto". Five clients;
/// the 429 ladder escalates at the second 429 (escalate_after = 1) to a fallback server with
/// one slot and one queue place.
/// - 10 ms: clients 0, 1 take the two tokens (succeed at 30 ms); clients 2, 3, 4 get 429 with
///   Retry-After 1 s (one token in 1 s), learn it at 20 ms and retry at 1.02 s.
/// - 1.03 s: 1.02 tokens: client 2 takes one (succeeds at 1.05 s); clients 3, 4 get a second
///   429 (learned at 1.04 s) and escalate: one fallback call each, arriving at 1.05 s; one is
///   served at once, one queued: successes at 1.07 and 1.08 s.
fn fallback_scenario(fallback_extra: &str) -> String {
    exact(
        "count = 5",
        "concurrency = 10\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [server.rate_limit]\nrate = 1\nburst = 2\nretry_after = \"auto\"",
        "max_attempts = 3\nrate_limit = { max_retries = 5, escalate_after = 1 }\n\
         fallback_on = [\"rate_limit_escalation\"]",
        &format!(
            "{CONSTANT_100MS}\n[fallback]\nconcurrency = 1\nqueue = 1\n\
             service = {{ dist = \"constant\", value = \"10ms\" }}\n{fallback_extra}"
        ),
    )
}

#[test]
fn fallback_serves_requests_the_429_ladder_escalates() {
    let s = scenario(&fallback_scenario(""));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.entry().succeeded, 5);
    assert_eq!((m.fallback_calls, m.fallback_succeeded), (2, 2));
    assert_eq!(
        m.entry().calls,
        8,
        "primary calls only: 5 first tries + 3 rate-limit retries"
    );
    assert_eq!(m.entry().retries, [0, 0, 3, 0, 0, 0]);
    assert_eq!(m.completion.0, ms(1080).0);
    let r3 = records(&m, 3)[0];
    assert_eq!(r3.outcome, Outcome::Succeeded);
    assert_eq!(r3.attempts, 3, "two primary attempts and the fallback call");
    assert_eq!(r3.retry_after, Some(SimDuration::from_secs(1)));
    assert_eq!(
        (r3.total_wait, r3.latency),
        (SimDuration::from_secs(1), Some(ms(1070)))
    );
    assert_eq!(records(&m, 4)[0].latency, Some(ms(1080)));
    assert_eq!(m.entry().timeline[10].fallback_arrivals, 2);
    assert_eq!(timeline_sums(&m).3, 2);
}

/// The same with the fallback server down: the fallback call is made (and counted), fails,
/// and the request ends with its original reason.
#[test]
fn a_failure_on_the_fallback_ends_the_request_with_its_original_reason() {
    let s = scenario(&fallback_scenario(
        "[[fallback.outages]]\nstart = \"0s\"\nend = \"1h\"",
    ));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.entry().succeeded, 3);
    assert_eq!((m.fallback_calls, m.fallback_succeeded), (2, 0));
    assert_eq!(gave_up(&m, GiveUpReason::RateLimitEscalation), 2);
    assert_eq!(m.completion.0, ms(1060).0);
    let r4 = records(&m, 4)[0];
    assert_eq!(
        r4.last_status,
        Some(Status::Unavailable),
        "the fallback's 503"
    );
}

/// A request whose first attempt the breaker refuses goes straight to the fallback; that
/// call is not a first attempt to the primary, so it does not feed the primary's budget.
/// One client, three requests 1 s apart, the primary down for an hour; ratio budget 0.5 of
/// first attempts; a breaker opening at the first failure for 2 s; fallback on breaker_open.
/// - Request 1: fails at 20 ms (opens until 2.02 s); 1 retry <= 0.5 x 1 + 0.05 x 10: retried;
///   the retry at 120 ms fails fast and goes to the fallback: success at 150 ms.
/// - Request 2 at 1.15 s: fails fast, fallback, success at 1.18 s (no primary first attempt).
/// - Request 3 at 2.18 s: the half-open probe, the second first attempt; fails at 2.2 s
///   (re-opens); 2 retries <= 0.5 x 2 + 0.5 is false: refused, `budget`. Counting request
///   2's fallback call as a first attempt would have allowed it (2 <= 0.5 x 3 + 0.5).
#[test]
fn a_fallback_call_is_not_a_first_attempt_for_the_primarys_budget() {
    let s = scenario(&exact(
        "count = 1\nrequests = 3\nthink = { dist = \"constant\", value = \"1s\" }",
        &down_until(1, "1h"),
        "max_attempts = 10\nbudget = { kind = \"ratio\", ratio = 0.5, window = \"10s\", min_per_s = 0.05 }\n\
         breaker = { failure_rate = 1.0, min_calls = 1, open_for = \"2s\", half_open_probes = 1 }\n\
         fallback_on = [\"breaker_open\"]",
        &format!(
            "{CONSTANT_100MS}\n[fallback]\nconcurrency = 1\nservice = {{ dist = \"constant\", value = \"10ms\" }}"
        ),
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 2);
    assert_eq!((m.fallback_calls, m.fallback_succeeded), (2, 2));
    assert_eq!((m.entry().budget_allowed, m.entry().budget_refused), (1, 1));
    let outcomes: Vec<Outcome> = records(&m, 0).iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Succeeded,
            Outcome::Succeeded,
            Outcome::GaveUp(GiveUpReason::Budget)
        ]
    );
    assert_eq!(m.completion.0, ms(2200).0);
    assert_eq!(
        m.breaker_open,
        SimDuration::from_secs(4),
        "[0.02, 2.02) + [2.2, 4.2)"
    );
    assert_eq!(
        m.entry().retries,
        [0; 6],
        "the only retry decided was never sent"
    );
}

/// Conservation with every policy at once on a jittered herd: each request ends exactly
/// once, and every request routed to the fallback makes exactly one fallback call. With an
/// ample fallback nothing ends for a `fallback_on` reason; with a tiny one (no queue), the
/// requests ending for those reasons are exactly the fallback calls that failed.
#[test]
fn each_request_ends_once_with_fallback_and_routed_requests_call_it_once() {
    let text = |fallback_server: &str| {
        exact(
            "count = 400\nstart_spread = \"100ms\"",
            "concurrency = 20\nqueue = 20\nservice = { dist = \"exponential\", mean = \"10ms\" }\n\
             [server.rate_limit]\nrate = 2000\nburst = 50\nretry_after = \"auto\"\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"1s\"",
            "max_attempts = 4\ntimeout = \"500ms\"\n\
             rate_limit = { max_retries = 3, escalate_after = 2, default_wait = \"50ms\" }\n\
             budget = { kind = \"token_bucket\", max_tokens = 20, token_ratio = 0.5, scope = \"global\" }\n\
             breaker = { failure_rate = 0.5, window = \"1s\", min_calls = 10, open_for = \"300ms\", half_open_probes = 3, scope = \"global\" }\n\
             fallback_on = [\"rate_limit_escalation\", \"breaker_open\", \"budget\", \"attempts\"]",
            &format!(
                "[[strategy]]\nname = \"all\"\nbase = \"20ms\"\ncap = \"1s\"\njitter = \"full\"\n\
                 [fallback]\n{fallback_server}\nservice = {{ dist = \"constant\", value = \"5ms\" }}"
            ),
        )
    };
    let routed = [
        GiveUpReason::RateLimitEscalation,
        GiveUpReason::BreakerOpen,
        GiveUpReason::Budget,
        GiveUpReason::Attempts,
    ];

    let s = scenario(&text("concurrency = 1000\nqueue = 1000"));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert!(m.fallback_calls > 0);
    assert_eq!(m.fallback_succeeded, m.fallback_calls);
    assert_eq!(
        m.entry().succeeded,
        400,
        "the ample fallback catches everything routed to it"
    );
    assert!(routed.iter().all(|r| gave_up(&m, *r) == 0));
    assert_eq!(timeline_sums(&m).3, m.fallback_calls);

    let s = scenario(&text("concurrency = 1"));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    let failed_there: u64 = routed.iter().map(|r| gave_up(&m, *r)).sum();
    assert!(failed_there > 0 && m.fallback_succeeded > 0);
    assert_eq!(failed_there, m.fallback_calls - m.fallback_succeeded);
    assert_eq!(m.entry().succeeded + failed_there, 400);
}

// ---- outputs ------------------------------------------------------------------------------

/// The CSV files through the binary: the issue's summary columns are there with exact
/// values, and the timeseries columns add up to the summary figures.
#[test]
fn timeseries_policy_columns_add_up_to_the_summary() {
    // The half-open breaker case, plus the global quota case, as two strategies.
    let text = half_open_scenario().replace(
        "name = \"breaker\"\nbase = \"2s\"\ncap = \"2s\"\nmultiplier = 1.0",
        "name = \"breaker\"\nbase = \"2s\"\ncap = \"2s\"\nmultiplier = 1.0\n\
         [[strategy]]\nname = \"quota\"\nbase = \"2s\"\ncap = \"2s\"\nmultiplier = 1.0\n\
         breaker = { failure_rate = 1.0, min_calls = 1000 }\n\
         budget = { kind = \"quota\", capacity = 12, retry_cost = 5, scope = \"global\" }\n\
         fallback_on = [\"budget\"]\n\
         [fallback]\nconcurrency = 1\nqueue = 5\nservice = { dist = \"constant\", value = \"10ms\" }",
    );
    let ws = Workspace::new();
    let file = ws.file("p.toml", &text);
    herdsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(ws.out())
        .args(["--quiet", "--no-charts"])
        .assert()
        .success();
    let dir = ws.out().join("policies");
    let read = |name: &str| {
        let mut r = csv::Reader::from_path(dir.join(name)).unwrap();
        let header = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
        (header, rows)
    };
    let col = |h: &csv::StringRecord, name: &str| {
        h.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let (sh, summary) = read("summary.csv");
    let (th, series) = read("timeseries.csv");
    let get = |row: &csv::StringRecord, h: &csv::StringRecord, name: &str| -> f64 {
        row[col(h, name)].parse().unwrap()
    };

    // Strategy "quota": 5 clients fail at 20 ms; the global quota of 12 allows two retries
    // (12 -> 7 -> 2) and refuses three, which go to the fallback (1 slot, 5 places): they
    // all succeed there. The two retries succeed at 2.05 s.
    let expected = [
        // strategy, calls, succeeded, gave_up_budget, gave_up_breaker, budget_refused,
        // budget_refusal_rate, breaker_open_s, fallback_calls, fallback_succeeded
        (
            "breaker",
            12.0,
            10.0 - 3.0,
            0.0,
            3.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
        ),
        ("quota", 7.0 + 5.0, 10.0, 0.0, 0.0, 3.0, 0.6, 0.0, 3.0, 3.0),
    ];
    assert_eq!(summary.len(), 2);
    for (row, e) in summary.iter().zip(expected) {
        assert_eq!(&row[col(&sh, "strategy")], e.0);
        let got = [
            "calls",
            "succeeded",
            "gave_up_budget",
            "gave_up_breaker",
            "budget_refused",
            "budget_refusal_rate",
            "breaker_open_s",
            "fallback_calls",
            "fallback_succeeded",
        ]
        .map(|c| get(row, &sh, c));
        assert_eq!(
            got,
            [e.1, e.2, e.3, e.4, e.5, e.6, e.7, e.8, e.9],
            "{}",
            e.0
        );

        let mine: Vec<&csv::StringRecord> = series
            .iter()
            .filter(|r| &r[col(&th, "strategy")] == e.0)
            .collect();
        let sum = |c: &str| mine.iter().map(|r| get(r, &th, c)).sum::<f64>();
        assert_eq!(sum("budget_refused"), get(row, &sh, "budget_refused"));
        assert_eq!(sum("fallback_arrivals"), get(row, &sh, "fallback_calls"));
        assert_eq!(sum("arrivals"), get(row, &sh, "calls"));
        let retries: f64 = ["503", "500", "429", "timeout", "unreachable"]
            .iter()
            .map(|c| get(row, &sh, &format!("retries_{c}")))
            .sum();
        assert_eq!(sum("retries"), retries);
        // breakers_open is a gauge at each bucket's end: open-bucket count x width = the
        // open time here, because the breaker opened at 20 ms and closed at 1.02 s.
        let open_buckets = mine
            .iter()
            .filter(|r| get(r, &th, "breakers_open") > 0.0)
            .count();
        assert_eq!(open_buckets as f64 * 0.1, get(row, &sh, "breaker_open_s"));
    }
}

// ---- the shipped scenarios ----------------------------------------------------------------

/// scenarios/budgets.toml reproduces POLICIES.md's derived figures exactly, whatever the
/// draws: every first attempt lands in the outage and every budget is exhausted long before
/// it ends, so each policy's retry count is fixed by its arithmetic alone.
/// - ratio 0.1, global: 10% of the 10 000 first attempts (all inside the 10 s window).
/// - token bucket 10, per client: 4 retries each (the 5th failure leaves 5 tokens).
/// - quota 500 / 5, global: 100 retries drain it (AWS: "500/5 = 100 retries").
/// - adaptive, size 5, per client: 5 -> 4 -> 3 -> 2 -> 1 -> 0: 5 whole tokens, 5 retries each.
#[test]
fn shipped_budgets_scenario_matches_the_derived_figures() {
    let s = scenario(include_str!("../../scenarios/budgets.toml"));
    let names: Vec<&str> = s.strategies.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "no-budget",
            "ratio",
            "token-bucket",
            "quota",
            "adaptive",
            "breaker"
        ]
    );
    for (i, retries) in [(1, 1_000), (2, 40_000), (3, 100), (4, 50_000)] {
        let m = run(&s, i);
        assert_each_request_ends_once(&s, &m);
        assert_eq!(m.entry().budget_allowed, retries, "{}", names[i]);
        assert_eq!(m.entry().calls, 10_000 + retries, "{}", names[i]);
        assert_eq!(gave_up(&m, GiveUpReason::Budget), 10_000, "{}", names[i]);
    }
    // The global breaker opens within the first second and stays open for exactly 5 s.
    let m = run(&s, 5);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.breaker_open, SimDuration::from_secs(5));
    assert!(m.entry().calls < 1_000 && gave_up(&m, GiveUpReason::BreakerOpen) > 9_000);
}

/// scenarios/budgets-steady.toml's Resilience4j breaker: its window of the last 100 calls
/// trips it in the outage's first instants (its 5 000 req/s fill the window in 20 ms), it
/// stays open exactly its 60 s, and its ten probes, sent to a server long back, close it
/// (it never re-opens: open time is exactly 60 s). Meanwhile every request fails fast.
#[test]
fn shipped_resilience4j_breaker_opens_once_for_a_minute() {
    let s = scenario(include_str!("../../scenarios/budgets-steady.toml"));
    let i = s
        .strategies
        .iter()
        .position(|x| x.name == "resilience4j")
        .expect("the strategy is shipped");
    let m = run(&s, i);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.breaker_open, SimDuration::from_secs(60));
    let refused = gave_up(&m, GiveUpReason::BreakerOpen);
    assert!(refused > 90_000, "{refused}");
    // No request waits out its deadline against the open breaker: each succeeds, is
    // refused at once, or used up its attempts.
    let succeeded = m.entry().succeeded;
    assert_eq!(
        succeeded + refused + gave_up(&m, GiveUpReason::Attempts),
        150_000
    );
}

/// scenarios/budgets-steady.toml's Envoy retry budget (global, 20%, at least 3): the outage's
/// 503s come back within a round trip, so about a hundred attempts are in flight and some
/// twenty retries may be in progress, each held through its backoff: of the outage's
/// failures, about a thousand are retried and the rest given up (`budget`), where no budget
/// retries them all. Every request ends once.
#[test]
fn shipped_envoy_budget_holds_retries_to_a_share_of_the_traffic() {
    let s = scenario(include_str!("../../scenarios/budgets-steady.toml"));
    let i = s
        .strategies
        .iter()
        .position(|x| x.name == "envoy")
        .expect("the strategy is shipped");
    let m = run(&s, i);
    assert_each_request_ends_once(&s, &m);
    let e = m.entry();
    // 10 000 clients x 15 requests: every call beyond 150 000 is a retry.
    let retries = e.calls - 150_000;
    assert_eq!(retries, e.budget_allowed);
    assert!((100..3_000).contains(&retries), "{retries} retries");
    assert!(gave_up(&m, GiveUpReason::Budget) > 15_000);
    assert_eq!(e.budget_refused, gave_up(&m, GiveUpReason::Budget));
    let plain = run(&s, 0);
    assert!(plain.entry().calls > e.calls + 30_000);
}

/// scenarios/libraries.toml: every request ends once under every library's policy (one
/// replication each); Finagle's immediate requeues storm the service in the outage (at
/// least twice the calls of the AWS SDKs' standard mode), and Google's api_core, with its
/// 120 s deadline, gives up no call.
#[test]
fn shipped_libraries_scenario_ends_every_request_once() {
    let s = scenario(include_str!("../../scenarios/libraries.toml"));
    let mut calls = std::collections::BTreeMap::new();
    for (i, strategy) in s.strategies.iter().enumerate() {
        let m = run(&s, i);
        assert_each_request_ends_once(&s, &m);
        calls.insert(strategy.name.as_str(), (m.entry().calls, m.gave_up_total()));
    }
    assert!(calls["finagle"].0 > 2 * calls["aws-standard-2025"].0);
    assert_eq!(calls["google-api-core"].1, 0);
    assert_eq!(calls["polly-breaker"].0, 20_000);
}

/// scenarios/aws-sdk-2026.toml's adaptive mode against the standard mode it adds its limiter
/// to (one replication of each): every request ends once, calls wait for tokens, and the
/// limiter holds the fleet's throttled retries and its calls down.
#[test]
fn shipped_adaptive_mode_sends_fewer_calls_than_standard_mode() {
    let s = scenario(include_str!("../../scenarios/aws-sdk-2026.toml"));
    let names: Vec<&str> = s.strategies.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["standard-2025", "standard-2026", "adaptive-2025"]);
    let standard = run(&s, 0);
    let adaptive = run(&s, 2);
    assert_each_request_ends_once(&s, &adaptive);
    let retries_429 = |m: &RunMetrics| m.entry().retries[2];
    assert!(
        (retries_429(&adaptive) as f64) < 0.8 * retries_429(&standard) as f64,
        "{} {}",
        retries_429(&adaptive),
        retries_429(&standard)
    );
    assert!(adaptive.entry().calls < standard.entry().calls);
    // Only the limiter makes a first attempt wait: standard mode's first attempts never do.
    let held_first = |m: &RunMetrics| {
        m.requests
            .iter()
            .filter(|r| r.attempts == 1 && !r.total_wait.is_zero())
            .count()
    };
    assert_eq!(held_first(&standard), 0);
    assert!(held_first(&adaptive) > 1_000, "{}", held_first(&adaptive));
}

/// scenarios/fallback.toml: each request ends once, the fallback is used only where
/// configured, and every escalated request makes exactly one fallback call (those that
/// fail there are exactly the `rate_limit_escalation` give-ups).
#[test]
fn shipped_fallback_scenario_sends_each_escalation_once_to_the_fallback() {
    let s = scenario(include_str!("../../scenarios/fallback.toml"));
    for i in 0..s.strategies.len() {
        let m = run(&s, i);
        assert_each_request_ends_once(&s, &m);
        let escalated = gave_up(&m, GiveUpReason::RateLimitEscalation);
        if i == 0 {
            assert_eq!(m.fallback_calls, 0);
            assert!(escalated > 0);
        } else {
            assert!(m.fallback_succeeded > 0);
            assert_eq!(escalated, m.fallback_calls - m.fallback_succeeded);
        }
    }
}

/// Polly's `DecorrelatedJitterBackoffV2` through the engine: its delays telescope, so a
/// request's waits over its first k retries add up to g(t_k) x base / 1.4 with t_k in
/// [k - 1, k) and g(t) = 2^t tanh(sqrt(4t)), whatever its draws; and the clients' waits
/// differ (jittered), with a median first delay near `base`, as Polly documents.
#[test]
fn polly_v2_waits_add_up_to_its_formula_between_integer_points() {
    let s = scenario(&exact(
        "count = 400",
        "concurrency = 1000\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 5",
        "[[strategy]]\nname = \"polly\"\nbase = \"100ms\"\ncap = \"1h\"\njitter = \"decorrelated-v2\"",
    ));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    let g = |t: f64| 2f64.powf(t) * (4.0 * t).sqrt().tanh() * 100e6 / 1.4;
    let waits: Vec<u64> = m.requests.iter().map(|r| r.total_wait.as_nanos()).collect();
    assert!(m.requests.iter().all(|r| r.attempts == 5));
    for &w in &waits {
        assert!(g(3.0) - 4.0 <= w as f64 && (w as f64) < g(4.0), "{w}");
    }
    let mut distinct = waits.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 390, "{}", distinct.len());
    // One retry each: the first delays, whose median is g(0.5) x 100 ms / 1.4 = 89.7 ms.
    let s = scenario(&exact(
        "count = 400",
        "concurrency = 1000\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 2",
        "[[strategy]]\nname = \"polly\"\nbase = \"100ms\"\ncap = \"1h\"\njitter = \"decorrelated-v2\"",
    ));
    let mut first: Vec<u64> = run(&s, 0)
        .requests
        .iter()
        .map(|r| r.total_wait.as_nanos())
        .collect();
    first.sort_unstable();
    let median = first[first.len() / 2] as f64 / 1e6;
    assert!((75.0..105.0).contains(&median), "{median} ms");
    assert!(first.iter().all(|&d| (d as f64) < g(1.0)));
}

/// Brooker's 2022 retry-only breaker (`retries_only = true`) lets every first attempt out
/// and refuses only retries. One client, two requests 1 s apart, down for an hour; min_calls
/// 2, open_for 1 s, 1 probe, 3 attempts at most, 100 ms apart.
/// - Request 1 fails at 20 and 140 ms (opens at 140 ms; half-open at 1.14 s); its third
///   attempt at 240 ms is refused: `breaker_open` at 240 ms, 2 attempts.
/// - Request 2 starts at 1.24 s, half-open. Retry-only: its first attempt goes out as a plain
///   call (fails at 1.26 s, not counted half-open); the retry at 1.36 s is the probe, fails
///   at 1.38 s and re-opens it; the third at 1.48 s is refused. Calls 2 + 2; open 140 ms -
///   1.14 s and 1.38 - 2.38 s.
/// - The usual breaker makes request 2's first attempt the probe: it fails at 1.26 s and
///   re-opens; the retry at 1.36 s is refused. Calls 2 + 1.
#[test]
fn a_retry_only_breaker_lets_first_attempts_through_and_probes_with_retries() {
    let text = |retries_only: bool| {
        exact(
            "count = 1\nrequests = 2\nthink = { dist = \"constant\", value = \"1s\" }",
            &down_until(1, "1h"),
            &format!(
                "max_attempts = 3\nbreaker = {{ failure_rate = 1.0, window = \"10s\", min_calls = 2, open_for = \"1s\", half_open_probes = 1, retries_only = {retries_only} }}"
            ),
            CONSTANT_100MS,
        )
    };
    let s = scenario(&text(true));
    let m = run(&s, 0);
    assert_each_request_ends_once(&s, &m);
    assert_eq!(m.entry().calls, 4);
    assert_eq!(gave_up(&m, GiveUpReason::BreakerOpen), 2);
    let r = records(&m, 0);
    assert_eq!((r[0].attempts, r[0].latency), (2, Some(ms(240))));
    assert_eq!((r[1].attempts, r[1].latency), (2, Some(ms(240))));
    assert_eq!(r[1].last_status, Some(Status::BreakerOpen));
    assert_eq!(m.breaker_open, SimDuration::from_secs(2));
    let s = scenario(&text(false));
    let m = run(&s, 0);
    assert_eq!(m.entry().calls, 3);
    let r = records(&m, 0);
    assert_eq!((r[1].attempts, r[1].latency), (1, Some(ms(120))));
}

/// The AWS SDKs' 2026 standard mode, key by key. `throttle_base`: a retry after a 429 starts
/// its ladder there instead of at `base` (1 s for throttling, where other failures start at
/// 50 ms). One token, no refill to speak of: client 0 is served, client 1's 429 comes back
/// at 20 ms and it retries 1 s later (100 ms without `throttle_base`), to another 429.
#[test]
fn a_throttled_retry_backs_off_from_throttle_base() {
    let text = |throttle: &str| {
        exact(
            "count = 2",
            "concurrency = 2\nservice = { dist = \"constant\", value = \"10ms\" }\n\
             [server.rate_limit]\nrate = 0.0001\nburst = 1",
            &format!("max_attempts = 2\n{throttle}"),
            "[[strategy]]\nname = \"aws\"\nbase = \"100ms\"\ncap = \"20s\"",
        )
    };
    for (throttle, wait) in [("throttle_base = \"1s\"", 1_000), ("", 100)] {
        let s = scenario(&text(throttle));
        let m = run(&s, 0);
        let r = records(&m, 1);
        assert_eq!(r[0].last_status, Some(Status::TooManyRequests));
        assert_eq!(
            (r[0].attempts, r[0].total_wait),
            (2, ms(wait)),
            "{throttle}"
        );
    }
    // It may not exceed the cap, as `base` may not.
    let bad = text("throttle_base = \"30s\"");
    let err = herdsim::scenario::sweep::load_str("test.toml", &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("retry.throttle_base: expected throttle_base <= cap (20s), found 30s"),
        "{err}"
    );
}

/// `retry_after.combine`: how a usable hint meets the computed backoff (1 s, then 2 s: no
/// jitter). A server down for an hour answers with a 1.5 s Retry-After.
/// - `replace` (default): 1.5 + 1.5 = 3 s of waiting.
/// - `max`: max(1, 1.5) + max(2, 1.5) = 3.5 s (smithy-typescript).
/// - `max` with `max_raise = "200ms"`: max(t, min(hint, t + 0.2 s)) gives 1.2 + 2 = 3.2 s
///   (the 2026 SDKs, with a 5 s raise).
#[test]
fn a_hint_combines_with_the_computed_backoff_as_asked() {
    for (combine, waited) in [
        ("", 3_000),
        ("combine = \"max\"", 3_500),
        ("combine = \"max\", max_raise = \"200ms\"", 3_200),
    ] {
        let s = scenario(&exact(
            "count = 1",
            "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"1h\"\nretry_after = \"1500ms\"",
            &format!("max_attempts = 3\nretry_after = {{ {combine} }}"),
            "[[strategy]]\nname = \"s\"\nbase = \"1s\"\ncap = \"20s\"",
        ));
        let r = records(&run(&s, 0), 0);
        assert_eq!(
            (r[0].attempts, r[0].total_wait),
            (3, ms(waited)),
            "{combine}"
        );
    }
    let bad = exact(
        "count = 1",
        &down_until(1, "1h"),
        "max_attempts = 3\nretry_after = { max_raise = \"5s\" }",
        CONSTANT_100MS,
    );
    let err = herdsim::scenario::sweep::load_str("test.toml", &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("retry.retry_after.max_raise: expected max_raise only with combine = \"max\""),
        "{err}"
    );
    let bad = bad.replace("max_raise = \"5s\"", "combine = \"min\"");
    let err = herdsim::scenario::sweep::load_str("test.toml", &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("retry.retry_after.combine: expected \"replace\" or \"max\", found \"min\""),
        "{err}"
    );
}

/// `throttle_cost` defaults to `retry_cost`, and is what a retry after a 429 costs: with the
/// 2026 costs (14, and 5 after throttling) a client's quota of 500 allows 100 retries of
/// 429s, against 35 of 503s.
#[test]
fn a_quota_charges_throttle_cost_after_a_429() {
    use herdsim::model::policy::BudgetKind;
    let quota = |costs: &str| {
        let s = scenario(&exact(
            "count = 1",
            &down_until(1, "1h"),
            &format!("max_attempts = 1000\nbudget = {{ kind = \"quota\", {costs} }}"),
            CONSTANT_100MS,
        ));
        match s.strategies[0].retry.budget.unwrap().kind {
            BudgetKind::Quota { throttle_cost, .. } => throttle_cost,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(quota("retry_cost = 14"), 14);
    assert_eq!(quota("retry_cost = 14, throttle_cost = 5"), 5);
    let retries = |clients: &str, server: &str| {
        let s = scenario(&exact(
            clients,
            server,
            "max_attempts = 1000\nbudget = { kind = \"quota\", retry_cost = 14, timeout_cost = 14, throttle_cost = 5 }",
            CONSTANT_100MS,
        ));
        run(&s, 0).entry().budget_allowed
    };
    assert_eq!(retries("count = 1", &down_until(1, "1h")), 35);
    let throttling = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
                      [server.rate_limit]\nrate = 0.0001\nburst = 1";
    // Client 0 takes the one token; client 1 meets only 429s.
    assert_eq!(retries("count = 2", throttling), 100);
}

/// `immediate_retries`: urllib3 retries its first failure at once ("0 if c <= 1"), then
/// backs off `backoff_factor x 2^(c - 1)`: with `base` = 2 x factor = 100 ms, the waits are
/// 0, 100, 200 ms. Attempts leave at 0, 20, 140 and 360 ms; the last failure is known at
/// 380 ms. No jitter is drawn for the immediate retry.
#[test]
fn immediate_retries_are_sent_at_once_then_the_ladder_starts_at_base() {
    let s = scenario(&exact(
        "count = 1",
        &down_until(1, "1h"),
        "max_attempts = 4\nimmediate_retries = 1",
        "[[strategy]]\nname = \"urllib3\"\nbase = \"100ms\"\ncap = \"120s\"",
    ));
    let m = run(&s, 0);
    let r = records(&m, 0);
    assert_eq!((r[0].attempts, r[0].total_wait), (4, ms(300)));
    assert_eq!(r[0].latency, Some(ms(380)));
    // The retries are counted where they are sent: 20, 140 and 360 ms.
    assert_eq!(nonzero_buckets(&m, |b| b.retries), [(0, 1), (1, 1), (3, 1)]);
}

/// A server with one slot, 10 ms of service, and a rate limiter holding one token that
/// never comes back within a run (0.0001 per second): its first request is served, every
/// later one meets a 429.
const ONE_TOKEN_SERVER: &str = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n\
     [server.rate_limit]\nrate = 0.0001\nburst = 1";

/// A strategy retrying after 100 ms, with a per-client `client_rate_limiter`.
const ADAPTIVE_100MS: &str = "[[strategy]]\nname = \"adaptive\"\nbase = \"100ms\"\ncap = \"1s\"\n\
     client_rate_limiter = { scope = \"client\" }";

/// `client_rate_limiter`, worked by hand (one client, three one-attempt requests, 10 ms each
/// way and 10 ms of service, a rate limiter with one token). The limiter's bucket is made
/// empty at t = 0, filling at 1 token/s.
/// - request 1 succeeds at 30 ms: the bucket holds 0.03 token. The limiter is not enabled;
///   the CUBIC rate, 0.4 x 0.03^3 + 0 (the curve starts at 0), is capped at twice the
///   measured rate (none yet: 0), so the bucket fills at its floor, 0.5 token/s, from now.
/// - request 2 leaves at 30 ms and meets a 429 (back at 50 ms): the throttle enables the
///   limiter; the bucket holds 0.03 + (0.05 - 0.03) x 0.5 = 0.04 token.
/// - request 3 begins at 50 ms and waits for the other 0.96 token: 0.96 / 0.5 = 1.92 s. It
///   leaves at 1.97 s and its 429 is back at 1.99 s: a latency of 1.94 s, 1.92 s waited.
#[test]
fn a_client_rate_limiter_holds_attempts_after_a_throttle() {
    let s = scenario(&exact(
        "count = 1\nrequests = 3",
        ONE_TOKEN_SERVER,
        "max_attempts = 1",
        ADAPTIVE_100MS,
    ));
    let m = run(&s, 0);
    let r = records(&m, 0);
    let waits: Vec<_> = r.iter().map(|r| (r.total_wait, r.latency)).collect();
    assert_eq!(
        waits,
        [
            (ms(0), Some(ms(30))),
            (ms(0), Some(ms(20))),
            (ms(1_920), Some(ms(1_940)))
        ]
    );
    // Without the limiter, request 3 leaves at once.
    let s = scenario(&exact(
        "count = 1\nrequests = 3",
        ONE_TOKEN_SERVER,
        "max_attempts = 1",
        "[[strategy]]\nname = \"standard\"\nbase = \"100ms\"\ncap = \"1s\"",
    ));
    let r = records(&run(&s, 0), 0);
    assert_eq!(r[2].latency, Some(ms(20)));
}

/// An attempt the limiter holds past its request's deadline is not sent: it gives up as
/// `deadline` when its turn comes. Request 0 succeeds at 30 ms; request 1 leaves at 30 ms
/// (deadline 1.03 s) and meets a 429 at 50 ms, enabling the limiter with the bucket at
/// 0.04 token and filling at 0.5 token/s; its retry, due at 150 ms after 100 ms of
/// backoff, finds 0.09 token and waits 0.91 / 0.5 = 1.82 s, past the deadline: it ends at
/// 1.97 s (a latency of 1.94 s, 1.92 s waited) with its one attempt.
#[test]
fn an_attempt_held_past_its_deadline_gives_up_when_its_turn_comes() {
    let s = scenario(&exact(
        "count = 1\nrequests = 2",
        ONE_TOKEN_SERVER,
        "max_attempts = 3\ndeadline = \"1s\"",
        ADAPTIVE_100MS,
    ));
    let m = run(&s, 0);
    let r = records(&m, 0);
    assert_eq!(r[1].outcome, Outcome::GaveUp(GiveUpReason::Deadline));
    assert_eq!(
        (r[1].attempts, r[1].total_wait, r[1].latency),
        (1, ms(1_920), Some(ms(1_940)))
    );
    assert_eq!(m.entry().calls, 2);
}

/// Calls orphaned by their service's crash leave its limiter's queue without a token, so
/// the calls of the restarted service are not held behind them: `db` sees as many calls in
/// the 10 s around `api`'s crash at 20 s as in the 10 s after (about 100; 67 when the
/// orphans took tokens), and the orphans end as non-retryable.
#[test]
fn orphaned_calls_leave_a_limiter_queue_without_a_token() {
    let s = scenario(
        r#"
name = "crash-limiter"
seed = 3
time_limit = "60s"
[clients]
count = 50
requests = 1000
think = { dist = "constant", value = "1s" }
[network]
latency = { dist = "constant", value = "5ms" }
[[service]]
name = "api"
concurrency = 200
queue = 400
service = { dist = "constant", value = "1ms" }
calls = ["db"]
retry = { max_attempts = 1, timeout = "100s", base = "50ms", cap = "1s", client_rate_limiter = { scope = "client" } }
[[service.outages]]
start = "20s"
end = "20.001s"
kind = "crash"
[[service]]
name = "db"
concurrency = 20
queue = 40
service = { dist = "constant", value = "5ms" }
[service.rate_limit]
rate = 10
burst = 5
[retry]
max_attempts = 1
timeout = "200s"
base = "100ms"
cap = "2s"
[metrics]
bucket = "10s"
[[strategy]]
name = "s"
"#,
    );
    let m = run(&s, 0);
    let db = &m.services[1].timeline;
    let (crash, after) = (db[2].arrivals, db[3].arrivals);
    assert!(crash + 5 >= after && after >= 95, "{crash} {after}");
    assert!(m.services[1].gave_up[GiveUpReason::NonRetryable as usize] > 0);
}

/// A fleet-wide `client_rate_limiter` (one SDK client shared by an open workload's 400
/// requests a second, against a 300 /s rate limiter): attempts queue for its tokens, every
/// request ends exactly once, and the run ends with its work, well before its time limit
/// (wake-ups a rate change replaced do not keep it going); run twice, it gives the same
/// records.
#[test]
fn a_shared_client_rate_limiter_queues_attempts_and_ends_with_its_work() {
    let text = exact(
        "rate = 400\nend = \"5s\"",
        "concurrency = 20\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [server.rate_limit]\nrate = 300\nburst = 20",
        "max_attempts = 3\ntime_limit = \"1h\"",
        "[[strategy]]\nname = \"adaptive\"\nbase = \"100ms\"\ncap = \"1s\"\njitter = \"full\"\n\
         client_rate_limiter = { scope = \"global\" }",
    )
    .replace("max_attempts = 3\ntime_limit = \"1h\"", "max_attempts = 3")
    .replace(
        "name = \"policies\"",
        "name = \"policies\"\ntime_limit = \"1h\"",
    );
    let s = scenario(&text);
    let m = run(&s, 0);
    // 400 /s for 5 s, evenly spaced by default or Poisson: about 2 000 requests, each
    // ending once.
    let requests = m.entry().requests;
    assert!((1_800..2_200).contains(&requests), "{requests}");
    assert_eq!(m.entry().succeeded + m.gave_up_total(), requests);
    assert_eq!(m.requests.len() as u64, requests);
    assert!(!m.cut_short);
    assert_eq!(gave_up(&m, GiveUpReason::TimeLimit), 0);
    let held = m
        .requests
        .iter()
        .filter(|r| !r.total_wait.is_zero())
        .count();
    assert!(held > 100, "{held}");
    assert!(
        m.completion.0 < SimDuration::from_secs(600).0,
        "{:?}",
        m.completion
    );
    assert_eq!(run(&s, 0).requests, m.requests);
}

/// `increment` with `multiplier = 1`: Polly's linear backoff, base x n, capped (MaxDelay
/// 700 ms): waits of 200, 400, 600, 700 ms. With 10 ms each way, attempts leave at 0, 220,
/// 640, 1 260 and 1 980 ms.
#[test]
fn an_increment_gives_a_linear_ladder() {
    let s = scenario(&exact(
        "count = 1",
        &down_until(1, "1h"),
        "max_attempts = 5",
        "[[strategy]]\nname = \"polly-linear\"\nbase = \"200ms\"\nincrement = \"200ms\"\n\
         multiplier = 1\ncap = \"700ms\"",
    ));
    let m = run(&s, 0);
    let r = records(&m, 0);
    assert_eq!((r[0].attempts, r[0].total_wait), (5, ms(1_900)));
    assert_eq!(r[0].latency, Some(ms(2_000)));
    // Retries sent at 220, 640, 1 260 and 1 980 ms, in 100 ms buckets.
    assert_eq!(
        nonzero_buckets(&m, |b| b.retries),
        [(2, 1), (6, 1), (12, 1), (19, 1)]
    );
}

/// `jitter_past_cap = false` (aws-sdk-go-v2 before 2026): base = cap = 150 ms, so retry 1
/// (expo 150 ms, the cap reached, not passed) draws U(0, 150 ms), and retries 2 and 3 (300
/// and 600 ms before the cap) wait exactly 150 ms. Every request's waits add up to 300 ms
/// plus its first draw; with the default, retries 2 and 3 draw too, and most totals fall
/// below 300 ms.
#[test]
fn past_the_cap_without_jitter_waits_exactly_the_cap() {
    let strategy = |extra: &str| {
        scenario(&exact(
            "count = 50",
            &down_until(1, "1h"),
            "max_attempts = 4",
            &format!(
                "[[strategy]]\nname = \"go\"\nbase = \"150ms\"\ncap = \"150ms\"\n\
                 jitter = \"full\"\n{extra}"
            ),
        ))
    };
    let waits = |s: &Scenario| -> Vec<SimDuration> {
        let m = run(s, 0);
        (0..50).map(|c| records(&m, c)[0].total_wait).collect()
    };
    let exact_cap = waits(&strategy("jitter_past_cap = false"));
    for w in &exact_cap {
        assert!(*w >= ms(300) && *w < ms(450), "{w:?}");
    }
    let mut firsts: Vec<u64> = exact_cap.iter().map(|w| w.0 - ms(300).0).collect();
    firsts.sort();
    firsts.dedup();
    assert!(firsts.len() > 40, "{} distinct first draws", firsts.len());
    let jittered = waits(&strategy(""));
    assert!(jittered.iter().filter(|w| **w < ms(300)).count() > 25);
}

/// Polly V2's state moves on at a retry whose delay a hint replaced, as in Polly (its delay
/// generator overrides a delay already computed): the first attempt meets a 3 s hint, the
/// retry a 503 without one, so the second retry waits (g(1 + u2) - g(u1)) x base / 1.4,
/// median 1.14 s for base 1 s, 66% of them under 1.377 s. Had the state stayed at 0, every
/// one would wait g(1 + u2) x base / 1.4 >= 1.377 s.
#[test]
fn polly_v2_moves_on_under_a_replacing_hint() {
    let s = scenario(&exact(
        "count = 400",
        "concurrency = 1000\nservice = { dist = \"constant\", value = \"10ms\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"15ms\"\nretry_after = \"3s\"\n\
         [[server.outages]]\nstart = \"15ms\"\nend = \"1h\"",
        "max_attempts = 3",
        "[[strategy]]\nname = \"polly\"\nbase = \"1s\"\ncap = \"1h\"\njitter = \"decorrelated-v2\"",
    ));
    let m = run(&s, 0);
    let second: Vec<f64> = m
        .requests
        .iter()
        .map(|r| (r.total_wait.as_nanos() as f64 - 3e9) / 1e9)
        .collect();
    let under = second.iter().filter(|&&d| d < 1.377).count() as f64 / second.len() as f64;
    assert!((0.55..0.77).contains(&under), "{under}");
    assert!(second.iter().all(|&d| (0.0..2.8).contains(&d)));
}

/// `combine = "max"` with `restart`: the ladder starts again only after a retry the hint
/// lengthened. A 1 ms hint never does (the backoff is longer): 100, 200, 400, 800 ms, as
/// without a hint; a 5 s one always does: 5 s each time, the ladder back at `base`.
#[test]
fn a_restart_follows_only_a_hint_that_set_the_delay() {
    for (hint, waited) in [("1ms", 1_500), ("5s", 20_000)] {
        let s = scenario(&exact(
            "count = 1",
            &format!(
                "concurrency = 1\nservice = {{ dist = \"constant\", value = \"10ms\" }}\n\
                 [[server.outages]]\nstart = \"0s\"\nend = \"1h\"\nretry_after = \"{hint}\""
            ),
            "max_attempts = 5\nretry_after = { combine = \"max\", restart = true }",
            "[[strategy]]\nname = \"s\"\nbase = \"100ms\"\ncap = \"20s\"",
        ));
        let r = records(&run(&s, 0), 0);
        assert_eq!(r[0].total_wait, ms(waited), "{hint}");
    }
}

/// `throttle_base` is refused with the jitters that carry each delay into the next, and is
/// checked against the cap of each strategy, not of `[retry]` alone; with `max_raise`, a
/// hint beyond `retry_after.max` is clamped, not ignored (the 2026 SDKs bound any hint).
#[test]
fn throttle_base_and_max_raise_validate_against_the_whole_policy() {
    let load = |retry: &str, strategy: &str| {
        herdsim::scenario::sweep::load_str(
            "test.toml",
            &exact("count = 1", &down_until(1, "1h"), retry, strategy),
        )
        .map(|f| f.points[0].scenario.clone())
        .map_err(|e| e.to_string())
    };
    let err = load(
        "max_attempts = 3\nthrottle_base = \"1s\"",
        "[[strategy]]\nname = \"d\"\nbase = \"50ms\"\ncap = \"20s\"\njitter = \"decorrelated\"",
    )
    .unwrap_err();
    assert!(
        err.contains("retry.throttle_base: expected no throttle_base with jitter \"decorrelated\""),
        "{err}"
    );
    let ok = load(
        "max_attempts = 3\ncap = \"1s\"\nthrottle_base = \"2s\"",
        "[[strategy]]\nname = \"a\"\nbase = \"50ms\"\ncap = \"5s\"",
    );
    assert!(ok.is_ok(), "{ok:?}");
    let s = load(
        "max_attempts = 3\nretry_after = { combine = \"max\", max_raise = \"5s\" }",
        CONSTANT_100MS,
    )
    .unwrap();
    let policy = &s.strategies[0].retry.retry_after;
    assert_eq!(
        policy.choose(Some(SimDuration::from_secs(90))),
        Some(SimDuration::from_secs(60))
    );
}
