//! Every formula, constant and worked example of the seed documents (../shared/seeds/),
//! reproduced through the functions the engine itself uses, plus the scenario-level behaviour
//! of issue 3 (Retry-After, 429 ladder, unreachable outages, timeout ladder, error classes).
//!
//! Seeds number attempts from 0 ("attempt 0 waits base"); herdsim numbers retries from 1
//! (retry n = 1 waits base). Seed attempt k is herdsim retry n = k + 1 throughout.

use herdsim::metrics::Outcome;
use herdsim::model::backoff::{Backoff, Jitter};
use herdsim::model::outcome::{GiveUpReason, Status};
use herdsim::model::policy::{
    Beyond, RateLimitLadder, RetryAfterPolicy, next_delay, parse_retry_after_header,
};
use herdsim::time::SimDuration;

use crate::common::{Workspace, exact_scenario, herdsim, run, scenario};

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

fn secs(d: SimDuration) -> f64 {
    d.as_secs_f64()
}

fn ladder(base: SimDuration, cap: SimDuration, jitter: Jitter) -> Backoff {
    Backoff {
        base,
        cap,
        multiplier: 2.0,
        increment: SimDuration::ZERO,
        jitter,
        jitter_past_cap: true,
    }
}

// ---------------------------------------------------------------------------------------
// Seed 000: loopctl's ladders.

/// "base 100 ms, cap 10 s: attempt 1 -> 100 ms, 2 -> 200, 3 -> 400, 4 -> 800 ... capped at 10 s".
#[test]
fn seed_000_transport_ladder_doubles_from_100ms_to_the_10s_cap() {
    let b = ladder(ms(100), SimDuration::from_secs(10), Jitter::None);
    let got: Vec<u64> = (1..=9).map(|n| b.expo(n).as_nanos() / 1_000_000).collect();
    assert_eq!(got, [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
}

/// "delay x (1 + f), f = ((rand() - 0.5) x 2) x jitter_factor": the first retry lands in
/// 90-110 ms, the second in 180-220 ms; the worked figure's 93, 214, 381 are all possible.
#[test]
fn seed_000_multiplicative_jitter_stays_within_ten_percent() {
    let b = ladder(
        ms(100),
        SimDuration::from_secs(10),
        Jitter::Proportional(0.1),
    );
    assert_eq!(b.delay(1, b.base, 0.0), ms(90));
    assert_eq!(b.delay(1, b.base, 0.5), ms(100));
    assert_eq!(b.delay(1, b.base, 0.75), ms(105));
    assert_eq!(b.bounds(1, b.base), (ms(90), ms(110)));
    assert_eq!(b.bounds(2, b.base), (ms(180), ms(220)));
    // The figure's jittered ladder: 93, 214, 381 ms, each within ±10% of 100, 200, 400.
    for (n, seen) in [(1, 93), (2, 214), (3, 381)] {
        let (lo, hi) = b.bounds(n, b.base);
        assert!(lo <= ms(seen) && ms(seen) <= hi, "retry {n}: {seen} ms");
    }
    // Applied after the cap, so the smear grows with the delay and may pass the cap by 10%.
    assert_eq!(b.bounds(20, b.base), (ms(9000), ms(11_000)));
}

/// "rate limit: delay = min(Retry-After hint if present else 5 000 ms, 60 000 ms)";
/// "count <= 3: sleep and retry; count > 3: ESCALATE".
#[test]
fn seed_000_rate_limit_ladder_waits_and_escalates_at_the_fourth_429() {
    let l = RateLimitLadder {
        on: herdsim::model::outcome::StatusSet::default(),
        max_retries: 5,
        escalate_after: 3,
        default_wait: SimDuration::from_secs(5),
        max_wait: SimDuration::from_secs(60),
    };
    assert_eq!(l.wait(None), SimDuration::from_secs(5));
    assert_eq!(
        l.wait(Some(SimDuration::from_secs(2))),
        SimDuration::from_secs(2)
    );
    assert_eq!(
        l.wait(Some(SimDuration::from_secs(90))),
        SimDuration::from_secs(60)
    );
    let escalations: Vec<bool> = (1..=6).map(|count| l.escalates(count)).collect();
    assert_eq!(escalations, [false, false, false, true, true, true]);
    // Retry-After "capped at 60 s" is the clamp policy; seed 003's range check is the other.
    let clamp = RetryAfterPolicy {
        beyond: Beyond::Clamp,
        ..Default::default()
    };
    assert_eq!(
        clamp.choose(Some(SimDuration::from_secs(61))),
        Some(SimDuration::from_secs(60))
    );
}

/// "tool recovery: delay(attempt) = min(100 ms x 2^attempt, 30 000 ms); budget =
/// min(strategy.max_retries, 5)": 100 ms doubling to the 30 s cap, at most 5 retries.
#[test]
fn seed_000_tool_recovery_ladder_caps_at_30s() {
    let b = ladder(ms(100), SimDuration::from_secs(30), Jitter::None);
    let got: Vec<u64> = (1..=11).map(|n| b.expo(n).as_nanos() / 1_000_000).collect();
    assert_eq!(
        got,
        [
            100, 200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000
        ]
    );
}

/// One client, zero network latency (so seed timelines are exact), one strategy `s`.
fn one_client(server: &str, retry: &str, strategy: &str) -> String {
    let strategy = format!("[[strategy]]\nname = \"s\"\n{strategy}");
    exact_scenario("0s", "count = 1", server, retry, &strategy)
        .replace("name = \"exact\"", "name = \"seed\"")
}

/// Seed 000's worked turn: a blip (every call in the first 50 ms answered 500), then a model
/// API whose rate limiter refills `rate` tokens per second from one and answers 429 with
/// Retry-After: 2; loopctl's transport ladder (100 ms doubling, 4 attempts) plus its 429
/// ladder (escalate after 3).
fn loopctl_turn(rate: &str) -> String {
    one_client(
        &format!(
            r#"concurrency = 1
service = {{ dist = "constant", value = "0s" }}
[server.rate_limit]
rate = {rate}
burst = 1
retry_after = "2s"
[[server.outages]]
start = "0s"
end = "50ms"
kind = "errors"
error_rate = 1.0"#
        ),
        "max_attempts = 4\ndeadline = \"5m\"\nrate_limit = { max_retries = 5, escalate_after = 3 }",
        "base = \"100ms\"\ncap = \"10s\"",
    )
}

/// Seed 000's worked timeline, with zero network latency so every instant is exact:
/// t=0 attempt 1 fails (a retryable transport error: 500), t=0.1 s attempt 2 gets 429 with
/// Retry-After: 2, t=2.1 s rate-limit retry 1 succeeds. Cost: one transport retry, one
/// honoured hint, zero escalations.
#[test]
fn seed_000_worked_timeline_blip_then_rate_limit_then_success() {
    let s = scenario(&loopctl_turn("0.5"));
    let m = run(&s, 0);
    let r = &m.requests[0];
    assert_eq!(r.outcome, Outcome::Succeeded);
    assert_eq!(r.latency, Some(ms(2100)));
    assert_eq!(r.attempts, 3);
    assert_eq!(r.total_wait, ms(2100));
    assert_eq!(r.retry_after, Some(SimDuration::from_secs(2)));
    assert_eq!(
        m.entry().retries,
        [0, 1, 1, 0, 0, 0],
        "one retry after the 500, one after the 429"
    );
}

/// "Had the 429 persisted": the ladder's rule (count > 3 escalates) ends the request at the
/// 4th 429, at 6.1 s here. (The seed's prose says "~8.2 s", which would need a 5th 429; herdsim
/// follows the rule the seed states and the issue's "exactly 4 rate-limit responses".)
#[test]
fn seed_000_persistent_429_escalates_after_exactly_four_rate_limit_responses() {
    let s = scenario(&loopctl_turn("0.0001"));
    let m = run(&s, 0);
    let r = &m.requests[0];
    assert_eq!(
        r.outcome,
        Outcome::GaveUp(GiveUpReason::RateLimitEscalation)
    );
    assert_eq!(r.latency.unwrap(), ms(6100));
    assert_eq!(m.entry().calls, 5, "one 500, then exactly four 429s");
    assert_eq!(m.entry().rejected, 4);
    assert_eq!(m.entry().retries, [0, 1, 3, 0, 0, 0]);
    assert_eq!(
        m.entry().gave_up[GiveUpReason::RateLimitEscalation as usize],
        1
    );
}

/// The 429 ladder has its own budget: a persistently throttled request never touches its
/// transport attempts (max_attempts = 1 here), and ends after exactly 4 rate-limit responses.
#[test]
fn escalate_after_three_ends_a_throttled_request_after_exactly_four_429s() {
    let text = one_client(
        r#"concurrency = 1
service = { dist = "constant", value = "10ms" }
[server.rate_limit]
rate = 0.000001
burst = 1"#,
        r#"max_attempts = 1
rate_limit = { max_retries = 5, escalate_after = 3, default_wait = "1s" }"#,
        r#"base = "100ms"
cap = "10s""#,
    )
    .replace("count = 1", "count = 2");
    let m = run(&scenario(&text), 0);
    let throttled = m.requests.iter().find(|r| r.client == 1).unwrap();
    assert_eq!(
        throttled.outcome,
        Outcome::GaveUp(GiveUpReason::RateLimitEscalation)
    );
    assert_eq!(throttled.attempts, 4);
    assert_eq!(throttled.last_status, Some(Status::TooManyRequests));
    assert_eq!(
        throttled.latency.unwrap(),
        SimDuration::from_secs(3),
        "429s at 0, 1, 2, 3 s"
    );
    assert_eq!(m.entry().calls, 5);
}

/// "timeout retry: current_timeout = current_timeout x 2": against a server slowed to 3 s per
/// request, attempts time out after 1 s and 2 s, and the third (4 s budget) succeeds.
#[test]
fn seed_000_timeout_ladder_doubles_the_attempt_timeout_until_a_slow_server_answers() {
    let text = one_client(
        r#"concurrency = 10
service = { dist = "constant", value = "100ms" }
[[server.outages]]
start = "0s"
end = "10s"
kind = "slow"
slowdown = 30.0"#,
        r#"max_attempts = 4
timeout = "1s"
timeout_multiplier = 2.0"#,
        r#"base = "10ms"
cap = "1s""#,
    )
    .replace("value = \"0s\" }\n[server]", "value = \"5ms\" }\n[server]");
    let m = run(&scenario(&text), 0);
    let r = &m.requests[0];
    // Sends at 0, 1.01 s (timeout 1 s + 10 ms), 3.03 s (timeout 2 s + 20 ms); the third
    // arrives at 3.035 s, is served until 6.035 s and answered at 6.04 s, within its 4 s.
    assert_eq!(r.outcome, Outcome::Succeeded);
    assert_eq!(r.attempts, 3);
    assert_eq!(r.latency.unwrap(), ms(6040));
    assert_eq!(m.entry().retries[3], 2, "two retries after timeouts");
    assert_eq!(
        m.entry().wasted,
        2,
        "both abandoned attempts were still served"
    );
}

// ---------------------------------------------------------------------------------------
// Seed 001: "Exponential Backoff" pattern.

/// The MINSTD generator of the worked example (48271 keeps the math exact in doubles).
fn minstd(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state * 48271 % 2_147_483_647;
        state as f64 / 2_147_483_647.0
    }
}

/// The three-worker table: full jitter over min(2000, 100 x 2^attempt) ms, floored to ms.
#[test]
fn seed_001_three_workers_table_is_reproduced_exactly() {
    let b = ladder(ms(100), ms(2000), Jitter::Full);
    let raw: Vec<u64> = (1..=5).map(|n| b.expo(n).as_nanos() / 1_000_000).collect();
    assert_eq!(raw, [100, 200, 400, 800, 1600], "no jitter, every worker");
    let expected = [
        [17, 74, 44, 535, 385],
        [35, 148, 89, 271, 771],
        [53, 23, 133, 7, 1157],
    ];
    for (i, want) in expected.iter().enumerate() {
        let mut rand = minstd((i as u64 + 1) * 7919);
        let got: Vec<u64> = (1..=5)
            .map(|n| b.delay(n, b.base, rand()).as_nanos() / 1_000_000)
            .collect();
        assert_eq!(&got, want, "worker-{}", i + 1);
    }
}

// ---------------------------------------------------------------------------------------
// Seed 002: retry budgets for agent calls.

/// The three formulas, at the ends and the middle of the draw.
#[test]
fn seed_002_full_equal_and_decorrelated_formulas() {
    let (base, cap) = (ms(500), SimDuration::from_secs(8));
    let full = ladder(base, cap, Jitter::Full);
    let equal = ladder(base, cap, Jitter::Equal);
    let decorrelated = ladder(base, cap, Jitter::Decorrelated);
    // full: random(0, min(cap, base * 2 ** attempt))
    assert_eq!(full.delay(3, base, 0.0), ms(0));
    assert_eq!(full.delay(3, base, 0.5), ms(1000));
    // equal: expo / 2 + random(0, expo / 2)
    assert_eq!(equal.delay(3, base, 0.0), ms(1000));
    assert_eq!(equal.delay(3, base, 0.5), ms(1500));
    // decorrelated: min(cap, base + random(0, previous_sleep * 3 - base))
    assert_eq!(decorrelated.delay(1, ms(2000), 0.0), ms(500));
    assert_eq!(decorrelated.delay(1, ms(2000), 0.5), ms(500 + 2750));
    assert_eq!(decorrelated.delay(1, ms(4000), 0.99), cap);
    // "after 10 attempts with a 1-second base you would be sleeping over 17 minutes"
    let uncapped = ladder(
        SimDuration::from_secs(1),
        SimDuration::from_secs(1 << 30),
        Jitter::None,
    );
    assert_eq!(uncapped.expo(11), SimDuration::from_secs(1024));
    assert!(uncapped.expo(11) > SimDuration::from_secs(17 * 60));
    assert!(
        uncapped.expo(21) > SimDuration::from_secs(12 * 24 * 3600),
        "over 12 days"
    );
}

/// The `retries_exhausted` record: a call against a permanent 503 with the seed's loop
/// (BASE 0.5, CAP 8, MAX_ATTEMPTS 4, no jitter here so the waits are exact) ends after 4
/// attempts, last status 503, having waited 0.5 + 1 + 2 = 3.5 s.
#[test]
fn seed_002_retries_exhausted_record_in_requests_csv() {
    let w = Workspace::new();
    let file = w.file(
        "s.toml",
        &one_client(
            r#"concurrency = 1
service = { dist = "constant", value = "0s" }
[[server.outages]]
start = "0s"
end = "1h""#,
            "max_attempts = 4",
            "base = \"500ms\"\ncap = \"8s\"",
        ),
    );
    herdsim()
        .args(["run", "--requests", "--no-charts", "--quiet", "--out"])
        .arg(w.out())
        .arg(&file)
        .assert()
        .success();
    let csv = std::fs::read_to_string(w.out().join("seed/requests.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            "strategy,replication,client,request,outcome,last_status,attempts,total_wait_s,retry_after_s,latency_s,population,start_s",
            "s,0,0,0,attempts,503,4,3.5,,3.5,clients,0",
        ]
    );
}

/// "With 1,000 concurrent calls all failing at once, a policy that retries once adds 1,000
/// requests": amplification is exactly 1 + retries when everything fails.
#[test]
fn seed_002_storm_cost_is_one_plus_the_retries() {
    for max_attempts in [2u64, 5] {
        let text = one_client(
            r#"concurrency = 10
service = { dist = "constant", value = "1ms" }
[[server.outages]]
start = "0s"
end = "1h""#,
            &format!("max_attempts = {max_attempts}"),
            "base = \"10ms\"\ncap = \"1s\"\njitter = \"full\"",
        )
        .replace("count = 1", "count = 1000");
        let m = run(&scenario(&text), 0);
        assert_eq!(m.entry().calls, 1000 * max_attempts);
        assert_eq!(m.entry().gave_up[GiveUpReason::Attempts as usize], 1000);
    }
}

// ---------------------------------------------------------------------------------------
// Seed 003: "Use exponential backoff" lesson (base 0.5 s, cap 8 s, jitter in [0, 1]).

fn lesson(jitter: f64) -> Backoff {
    ladder(ms(500), SimDuration::from_secs(8), Jitter::Fraction(jitter))
}

/// The growth table without a cap (0.5, 1, 2, 4, 8, 16, 32 s), with the cap
/// (0.5, 1, 2, 4, 8, 8, 8 s), and equal jitter at fraction 1.0 (half of each).
#[test]
fn seed_003_growth_cap_and_equal_jitter_tables() {
    let uncapped = ladder(ms(500), SimDuration::from_secs(3600), Jitter::None);
    let growth: Vec<f64> = (1..=7).map(|n| secs(uncapped.expo(n))).collect();
    assert_eq!(growth, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
    let none: Vec<f64> = (1..=7)
        .map(|n| secs(lesson(0.0).delay(n, ms(500), 0.0)))
        .collect();
    assert_eq!(none, [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]);
    let equal: Vec<f64> = (1..=7)
        .map(|n| secs(lesson(0.5).delay(n, ms(500), 1.0)))
        .collect();
    assert_eq!(equal, [0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0]);
    // jitter 1 is full jitter: fraction 1.0 takes the delay to 0; jitter only shortens waits.
    assert_eq!(lesson(1.0).delay(3, ms(500), 1.0), SimDuration::ZERO);
    assert!((1..=7).all(|n| lesson(0.5).delay(n, ms(500), 0.3) <= SimDuration::from_secs(8)));
}

/// The LCG of `jitter_spread.py`.
fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = (1_103_515_245 * state + 12_345) % (1 << 31);
        state as f64 / (1u64 << 31) as f64
    }
}

/// "distinct retry times without jitter: 1; with jitter: 100; all within the expected range".
#[test]
fn seed_003_a_hundred_clients_get_a_hundred_distinct_retry_times() {
    let mut rand = lcg(42);
    let none: std::collections::BTreeSet<_> = (0..100)
        .map(|_| lesson(0.0).delay(1, ms(500), 0.0))
        .collect();
    let with: Vec<SimDuration> = (0..100)
        .map(|_| lesson(0.5).delay(1, ms(500), rand()))
        .collect();
    let distinct: std::collections::BTreeSet<_> = with.iter().collect();
    assert_eq!(none.len(), 1);
    assert_eq!(distinct.len(), 100);
    assert!(with.iter().all(|d| ms(250) < *d && *d <= ms(500)));
}

/// `herdsim schedule` shows the same demonstration from the command line.
#[test]
fn seed_003_schedule_command_counts_distinct_retry_times() {
    let table = |jitter: &str| {
        let out = herdsim()
            .args([
                "schedule",
                "--base",
                "500ms",
                "--cap",
                "8s",
                "--attempts",
                "2",
                "--clients",
                "100",
            ])
            .args(["--jitter", jitter])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        // The last column of the retry-1 row is the distinct count.
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap()
            .to_string();
        row.split_whitespace().map(String::from).collect::<Vec<_>>()
    };
    let none = table("none");
    assert_eq!(none.last().unwrap(), "1");
    let equal = table("fraction=0.5");
    assert_eq!(equal.last().unwrap(), "100");
    let (min, max) = (&equal[equal.len() - 3], &equal[equal.len() - 2]);
    assert!(min.parse::<f64>().unwrap() > 250.0 && max.parse::<f64>().unwrap() <= 500.0);
}

/// `next_delay`: prints 3.0, 2.0, 2.0 and 1.0 for Retry-After "3", none, "3600" and "soon".
#[test]
fn seed_003_next_delay_retry_after_precedence() {
    let b = lesson(0.5);
    let policy = RetryAfterPolicy::default();
    let delay = |header: Option<&str>, fraction: f64| {
        let hint = header.map(|h| parse_retry_after_header(h).unwrap_or(SimDuration::ZERO));
        secs(next_delay(&b, &policy, 3, b.base, hint, fraction))
    };
    assert_eq!(delay(Some("3"), 0.0), 3.0);
    assert_eq!(delay(None, 0.0), 2.0);
    assert_eq!(delay(Some("3600"), 0.0), 2.0);
    assert_eq!(delay(Some("soon"), 1.0), 1.0);
    // The validity range is (0, 60 s]: zero and negative headers are unusable too.
    assert_eq!(delay(Some("0"), 0.0), 2.0);
    assert_eq!(delay(Some("-5"), 0.0), 2.0);
    assert_eq!(delay(Some("60"), 0.0), 60.0);
}

// ---------------------------------------------------------------------------------------
// Issue 3's scenario-level rules.

/// A 429 with `retry_after = "auto"` carries the time until the next token, in whole seconds
/// (2 s at 0.5 token/s from an empty bucket); the client honours it exactly.
#[test]
fn an_honoured_auto_retry_after_sends_the_retry_exactly_at_the_hinted_time() {
    let text = one_client(
        r#"concurrency = 1
service = { dist = "constant", value = "10ms" }
[server.rate_limit]
rate = 0.5
burst = 1
retry_after = "auto""#,
        "max_attempts = 3",
        "base = \"100ms\"\ncap = \"1s\"",
    )
    .replace("count = 1", "count = 2")
    .replace("value = \"0s\" }\n[server]", "value = \"10ms\" }\n[server]");
    let m = run(&scenario(&text), 0);
    let r = m.requests.iter().find(|r| r.client == 1).unwrap();
    // 429 answered at 20 ms; retry sent at 2.02 s; served 2.03-2.04 s; answered at 2.05 s.
    assert_eq!(r.retry_after, Some(SimDuration::from_secs(2)));
    assert_eq!(r.total_wait, SimDuration::from_secs(2));
    assert_eq!(r.latency.unwrap(), ms(2050));
    assert_eq!(r.outcome, Outcome::Succeeded);
    // Ignoring hints falls back to the 100 ms backoff, which meets an empty bucket again.
    let ignored = text.replace(
        "max_attempts = 3",
        "max_attempts = 3\nretry_after = { honor = false }",
    );
    let m = run(&scenario(&ignored), 0);
    let r = m.requests.iter().find(|r| r.client == 1).unwrap();
    assert_eq!(r.total_wait, ms(100 + 200));
    assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::Attempts));
}

/// An `unreachable` outage answers nothing: each attempt costs exactly one timeout (the
/// connect timeout when it is shorter), never reaches the server, and fails as `unreachable`.
#[test]
fn an_unreachable_outage_costs_exactly_one_timeout_per_attempt() {
    let text = |connect: &str| {
        one_client(
            r#"concurrency = 1
service = { dist = "constant", value = "0s" }
[[server.outages]]
start = "0s"
end = "1h"
kind = "unreachable""#,
            &format!("max_attempts = 5\ntimeout = \"1s\"\n{connect}"),
            "base = \"100ms\"\ncap = \"100ms\"",
        )
    };
    let m = run(&scenario(&text("")), 0);
    let r = &m.requests[0];
    assert_eq!(r.latency.unwrap(), ms(5 * 1000 + 4 * 100));
    assert_eq!(r.last_status, Some(Status::Unreachable));
    assert_eq!(m.entry().calls, 0);
    assert_eq!(m.entry().retries, [0, 0, 0, 0, 4, 0]);
    let m = run(&scenario(&text("connect_timeout = \"300ms\"")), 0);
    assert_eq!(m.requests[0].latency.unwrap(), ms(5 * 300 + 4 * 100));
}

/// 400s are never retried; a class missing from `retry_on` is not retried either.
#[test]
fn non_retryable_failures_give_up_at_once() {
    let bad = one_client(
        "concurrency = 1\nservice = { dist = \"constant\", value = \"0s\" }\nclient_error_rate = 1.0",
        "max_attempts = 5",
        "base = \"100ms\"\ncap = \"1s\"",
    );
    let m = run(&scenario(&bad), 0);
    assert_eq!(m.entry().gave_up[GiveUpReason::NonRetryable as usize], 1);
    assert_eq!(m.requests[0].last_status, Some(Status::BadRequest));
    assert_eq!(m.entry().calls, 1);
    let not_503 = one_client(
        "concurrency = 1\nservice = { dist = \"constant\", value = \"0s\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 5\nretry_on = [\"500\", \"timeout\"]",
        "base = \"100ms\"\ncap = \"1s\"",
    );
    let m = run(&scenario(&not_503), 0);
    assert_eq!(m.entry().gave_up[GiveUpReason::NonRetryable as usize], 1);
    assert_eq!(m.entry().calls, 1);
}

/// An `errors` outage serves the request (it holds a slot for its service time), then
/// answers 500; after the window the retry succeeds.
#[test]
fn an_errors_outage_serves_then_answers_500() {
    let text = one_client(
        r#"concurrency = 1
service = { dist = "constant", value = "40ms" }
[[server.outages]]
start = "0s"
end = "100ms"
kind = "errors"
error_rate = 1.0"#,
        "max_attempts = 5",
        "base = \"100ms\"\ncap = \"100ms\"",
    );
    let m = run(&scenario(&text), 0);
    // 500 at 40 ms, retry at 140 ms served until 180 ms.
    assert_eq!(m.requests[0].latency.unwrap(), ms(180));
    assert_eq!(m.entry().retries, [0, 1, 0, 0, 0, 0]);
    let completed: u32 = m.entry().timeline.iter().map(|b| b.completed).sum();
    assert_eq!(completed, 2, "the failed attempt was served too");
}
