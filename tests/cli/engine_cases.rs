//! Small scenarios worked out by hand, checked to the nanosecond, plus the engine's
//! invariants over random scenarios and its determinism across thread counts.

use herdsim::metrics::{Outcome, RunMetrics};
use herdsim::model::outcome::{GiveUpReason, Status};
use herdsim::time::SimDuration;
use proptest::prelude::*;

use crate::common::{exact_scenario, run, scenario};

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// A scenario with constant 10 ms latency, `server` and `retry` tables given by the test, and
/// one strategy with the given backoff keys.
fn exact(clients: u32, server: &str, retry: &str, strategy: &str) -> String {
    let strategy = format!("[[strategy]]\nname = \"s\"\n{strategy}");
    exact_scenario(
        "10ms",
        &format!("count = {clients}"),
        server,
        retry,
        &strategy,
    )
}

/// 1 000 clients arrive together at a server with 10 slots and no queue. Each round, exactly
/// 10 are accepted and the rest are rejected; a rejection crosses the network back (10 ms),
/// the client waits 100 ms, the retry crosses again (10 ms): rounds are 120 ms apart.
#[test]
fn capacity_ten_without_queue_accepts_exactly_ten_per_round() {
    let s = scenario(&exact(
        1000,
        "concurrency = 10\nservice = { dist = \"constant\", value = \"50ms\" }",
        "max_attempts = 100",
        "base = \"100ms\"\ncap = \"100ms\"\nmultiplier = 1.0",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().succeeded, 1000);
    assert_eq!(m.gave_up_total(), 0);
    // Round k sends 1000 - 10k attempts: sum over k = 0..99.
    assert_eq!(m.entry().calls, 50_500);
    assert_eq!(m.entry().accepted, 1000);
    assert_eq!(m.entry().rejected, 49_500);
    // Last round arrives at 10 + 99 * 120 ms, is served 50 ms, answered 10 ms later.
    assert_eq!(m.completion.0, ms(10 + 99 * 120 + 50 + 10).0);
    // Every round's arrivals land in one 100 ms bucket with exactly 10 accepted.
    let rounds: Vec<_> = m
        .entry()
        .timeline
        .iter()
        .filter(|b| b.arrivals > 0)
        .collect();
    assert_eq!(rounds.len(), 100);
    assert!(rounds.iter().all(|b| b.accepted == 10), "{rounds:?}");
    assert_eq!(rounds[0].arrivals, 1000);
    assert_eq!(rounds[99].arrivals, 10);
    // FIFO tie-breaking: client i is served in round i / 10; its latency is 70 + 120 k ms.
    for r in &m.requests {
        let k = (r.client / 10) as u64;
        assert_eq!(r.latency.unwrap(), ms(70 + 120 * k), "client {}", r.client);
        assert_eq!(r.attempts as u64, k + 1);
    }
}

#[test]
fn the_last_round_gives_up_when_attempts_run_out_one_round_early() {
    let s = scenario(&exact(
        1000,
        "concurrency = 10\nservice = { dist = \"constant\", value = \"50ms\" }",
        "max_attempts = 99",
        "base = \"100ms\"\ncap = \"100ms\"\nmultiplier = 1.0",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().succeeded, 990);
    assert_eq!(m.entry().gave_up[GiveUpReason::Attempts as usize], 10);
    // Clients 990..999 are rejected in round 98 (their 99th attempt): they give up when that
    // rejection arrives, before round 98's winners finish.
    let quitters: Vec<_> = m
        .requests
        .iter()
        .filter(|r| r.outcome != Outcome::Succeeded)
        .collect();
    assert!(
        quitters
            .iter()
            .all(|r| r.client >= 990 && r.latency.unwrap() == ms(98 * 120 + 20))
    );
    assert!(
        quitters
            .iter()
            .all(|r| r.last_status == Some(Status::Unavailable))
    );
    assert_eq!(m.completion.0, ms(98 * 120 + 70).0);
}

fn one_client_through_outage(end: &str) -> RunMetrics {
    let s = scenario(&exact(
        1,
        &format!(
            "concurrency = 1\nservice = {{ dist = \"constant\", value = \"10ms\" }}\n[[server.outages]]\nstart = \"0s\"\nend = \"{end}\""
        ),
        "max_attempts = 50",
        "base = \"100ms\"\ncap = \"100ms\"\nmultiplier = 1.0",
    ));
    run(&s, 0)
}

/// Attempts arrive at 10 + 120 k ms. An outage covers [start, end): an arrival exactly at
/// `end` is served.
#[test]
fn an_outage_covers_its_start_but_not_its_end() {
    let at_end = one_client_through_outage("970ms"); // attempt 9 arrives at exactly 970 ms
    assert_eq!(at_end.entry().calls, 9);
    assert_eq!(at_end.completion.0, ms(970 + 10 + 10).0);
    let just_after = one_client_through_outage("971ms");
    assert_eq!(just_after.entry().calls, 10);
    assert_eq!(just_after.completion.0, ms(1090 + 10 + 10).0);
    assert_eq!(just_after.entry().retries, [9, 0, 0, 0, 0, 0]);
}

/// Retry n = 1 waits `base`, retry 2 waits 2·base: sends at 0, 120 ms, 340 ms.
#[test]
fn first_retry_waits_base_and_the_second_doubles() {
    let s = scenario(&exact(
        1,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"300ms\"",
        "max_attempts = 5",
        "base = \"100ms\"\ncap = \"10s\"",
    ));
    let m = run(&s, 0);
    // Attempt 3 is sent at 340 ms (20 + 100 + 20 + 200) and arrives after the outage.
    assert_eq!(m.entry().calls, 3);
    assert_eq!(m.completion.0, ms(340 + 10 + 10 + 10).0);
    assert_eq!(m.requests[0].total_wait, ms(300));
}

/// The server does not know about timeouts: abandoned attempts keep their place and are
/// served anyway, counted as wasted.
#[test]
fn abandoned_attempts_are_served_and_counted_as_wasted() {
    let s = scenario(&exact(
        1,
        "concurrency = 1\nqueue = 5\nservice = { dist = \"constant\", value = \"500ms\" }",
        "max_attempts = 3\ntimeout = \"100ms\"",
        "base = \"50ms\"\ncap = \"10s\"",
    ));
    let m = run(&s, 0);
    // Sends at 0, 150 (100 + 50), 350 (250 + 100); the third times out at 450 ms.
    assert_eq!(m.entry().gave_up[GiveUpReason::Attempts as usize], 1);
    assert_eq!(m.completion.0, ms(450).0);
    assert_eq!(m.entry().calls, 3);
    assert_eq!(m.entry().retries[3], 2, "two retries after timeouts");
    // All three are served one after another (done at 510, 1010, 1510 ms), all wasted.
    assert_eq!(m.entry().wasted, 3);
    assert_eq!(m.requests[0].last_status, Some(Status::Timeout));
    let completed: u32 = m.entry().timeline.iter().map(|b| b.completed).sum();
    assert_eq!(completed, 3);
}

/// Deadline 5 s, outage for an hour, 1 s doubling: sends at 0, 1.02 s, 3.04 s; after the
/// third rejection (3.06 s) the next retry would start at 7.06 s, not before the deadline.
#[test]
fn the_deadline_gives_up_before_a_retry_that_would_start_too_late() {
    let s = scenario(&exact(
        1,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 100\ndeadline = \"5s\"",
        "base = \"1s\"\ncap = \"1m\"",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().gave_up[GiveUpReason::Deadline as usize], 1);
    assert_eq!(m.entry().calls, 3);
    assert_eq!(m.completion.0, ms(3060).0);
}

/// The same with `clamp_to_deadline`: the 4 s wait after the third rejection (3.06 s) is cut
/// to end at the deadline (5 s), one last attempt is sent there, and its rejection (5.02 s,
/// after the deadline) gives up. A 429 ladder's Retry-After wait is clamped the same way.
#[test]
fn clamp_to_deadline_sends_one_last_attempt_at_the_deadline() {
    let outage = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"1h\"";
    let s = scenario(&exact(
        1,
        outage,
        "max_attempts = 100\ndeadline = \"5s\"\nclamp_to_deadline = true",
        "base = \"1s\"\ncap = \"1m\"",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().gave_up[GiveUpReason::Deadline as usize], 1);
    assert_eq!(m.entry().calls, 4);
    assert_eq!(m.completion.0, ms(5020).0);
    let r = &m.requests[0];
    assert_eq!((r.attempts, r.total_wait), (4, ms(1000 + 2000 + 1940)));
    // A 90 s Retry-After on a 429 (the 429 ladder, max_wait 60 s): waited until 5 s.
    let limited = "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[server.rate_limit]\nrate = 0.0001\nburst = 1\nretry_after = \"90s\"";
    let s = scenario(&exact(
        2,
        limited,
        "max_attempts = 4\ndeadline = \"5s\"\nclamp_to_deadline = true\nrate_limit = { max_retries = 5 }",
        "base = \"100ms\"\ncap = \"1s\"",
    ));
    let m = run(&s, 0);
    // Client 0 takes the token; client 1's 429 comes back at 20 ms, it waits 4.98 s and is
    // refused again at 5.01 s, after the deadline.
    let r = &m.requests[1];
    assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::Deadline));
    assert_eq!((r.attempts, r.total_wait), (2, ms(4980)));
    assert_eq!(r.latency, Some(ms(5020)));
    // The deadline is checked before the attempt budget: the third and last attempt, sent
    // at the deadline, ends as `deadline`, not `attempts`.
    let s = scenario(&exact(
        1,
        outage,
        "max_attempts = 3\ndeadline = \"5s\"\nclamp_to_deadline = true",
        "base = \"4s\"\ncap = \"20s\"",
    ));
    let m = run(&s, 0);
    assert_eq!(m.requests[0].attempts, 3);
    assert_eq!(m.entry().gave_up[GiveUpReason::Deadline as usize], 1);
    assert_eq!(m.completion.0, ms(5020).0);
}

#[test]
fn a_retry_after_of_hours_is_waited_exactly() {
    // urllib3 honours Retry-After up to 6 hours. A 2-hour hint, clamped at 6 hours, is
    // waited in full: the retry is sent at 7 200 s (it was cut at 4 294.967 s when hints
    // travelled in 32 bits of microseconds).
    let text = exact(
        1,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"0s\" }\n\
         [[server.outages]]\nstart = \"0s\"\nend = \"10h\"\nretry_after = \"2h\"",
        "max_attempts = 2\nretry_after = { honor = true, max = \"6h\", beyond = \"clamp\" }",
        "base = \"1s\"\ncap = \"1s\"",
    )
    .replace("name = \"exact\"", "name = \"exact\"\ntime_limit = \"1d\"");
    let m = run(&scenario(&text), 0);
    let r = &m.requests[0];
    assert_eq!(r.retry_after, Some(SimDuration::from_secs(7_200)));
    assert_eq!(
        (r.attempts, r.total_wait),
        (2, SimDuration::from_secs(7_200))
    );
    assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::Attempts));
}

#[test]
fn a_queue_held_for_no_time_at_a_buckets_start_counts_in_it() {
    // Client a's attempt holds the one slot over [80, 100) ms; client b's arrives at
    // 100 ms, before a's service ends at that instant (its event was pushed first), so it
    // waits in the queue for no time: `queued` is 1 in the bucket starting at 100 ms, as it
    // is when the same happens mid-bucket.
    let run_from = |a_start: u64| {
        let text = exact_scenario(
            "30ms",
            &format!("name = \"a\"\ncount = 1\nstart = \"{a_start}ms\""),
            "concurrency = 1\nqueue = 1\nservice = { dist = \"constant\", value = \"20ms\" }",
            "max_attempts = 1",
            &format!(
                "[[clients]]\nname = \"b\"\ncount = 1\nstart = \"{}ms\"\n\
                 [[strategy]]\nname = \"s\"\nbase = \"1s\"\ncap = \"1s\"",
                a_start + 20
            ),
        )
        .replacen("[clients]", "[[clients]]", 1);
        run(&scenario(&text), 0)
    };
    let at_start = run_from(50);
    let gauges: Vec<(u32, u32)> = at_start
        .entry()
        .timeline
        .iter()
        .map(|b| (b.in_service, b.queued))
        .collect();
    assert_eq!(gauges, [(1, 0), (1, 1)]);
    let mid_bucket = run_from(20);
    assert_eq!(mid_bucket.entry().timeline[0].queued, 1);
}

/// A request still open at `time_limit` ends there as `time_limit`; later requests of the
/// same client never start but are still counted, so every request ends exactly once.
#[test]
fn time_limit_ends_open_and_unstarted_requests() {
    let text = exact(
        2,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 1000",
        "base = \"1s\"\ncap = \"1s\"",
    )
    .replace("name = \"exact\"", "name = \"exact\"\ntime_limit = \"10s\"")
    .replace("count = 2", "count = 2\nrequests = 3");
    let s = scenario(&text);
    let m = run(&s, 0);
    assert!(m.cut_short);
    assert_eq!(m.entry().gave_up[GiveUpReason::TimeLimit as usize], 6);
    assert_eq!(
        m.latencies.len(),
        2,
        "only the two started requests have a latency"
    );
    assert_eq!(m.completion.0, SimDuration::from_secs(10).0);
    assert_eq!(m.requests.len(), 6);
}

/// The series cover the run, `[0, time_limit)`: with a 10 s limit and 1 s buckets the last
/// bucket starts at 9 s. The two requests open at the limit end there as `time_limit`,
/// booked in that last bucket (the run's last instant); the four that never started have no
/// time and are in no bucket: the series' give-ups are the summary's (6) minus those (4).
#[test]
fn requests_cut_at_the_time_limit_count_in_the_last_bucket_of_the_run() {
    let text = exact(
        2,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
        "max_attempts = 1000",
        "base = \"1s\"\ncap = \"1s\"",
    )
    .replace("name = \"exact\"", "name = \"exact\"\ntime_limit = \"10s\"")
    .replace("count = 2", "count = 2\nrequests = 3")
        + "[metrics]\nbucket = \"1s\"\n";
    let m = run(&scenario(&text), 0);
    let t = &m.entry().timeline;
    assert_eq!(t.len(), 10, "buckets 0 s to 9 s, none at the 10 s limit");
    let gave_up: Vec<u32> = t.iter().map(|b| b.gave_up).collect();
    assert_eq!(gave_up, [0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    assert_eq!(m.entry().gave_up[GiveUpReason::TimeLimit as usize], 6);
    let population = &m.populations[0].timeline;
    assert_eq!(population.len(), 10);
    assert_eq!(population[9].gave_up, 2);
    assert_eq!(m.completion.0, SimDuration::from_secs(10).0);
}

/// The time limit cuts a backoff wait and an attempt in flight: `total_wait` counts only
/// the time actually waited, the attempt in flight gets its `time_limit` row in the
/// attempt sample (a request with `attempts = n` has rows 1 to n), and requests that never
/// started have no latency.
#[test]
fn time_limit_cuts_waits_and_attempts_in_flight() {
    use herdsim::metrics::AttemptOutcome;
    // Client 0 is refused (503 at 20 ms) and waits 8 s, past the 1 s limit; client 1
    // starts at 985 ms and is in service when the limit comes.
    let text = r#"
name = "exact"
time_limit = "1s"
[[clients]]
name = "herd"
count = 1
requests = 2
[[clients]]
name = "late"
count = 1
start = "985ms"
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "20ms" }
[[server.outages]]
start = "0s"
end = "500ms"
[retry]
max_attempts = 5
[[strategy]]
name = "s"
base = "8s"
cap = "8s"
"#;
    let s = scenario(text);
    let seed = herdsim::engine::RunSeed {
        seed: s.seed,
        replication: 0,
        point: 0,
    };
    let m = herdsim::engine::Simulation::new(&s, 0, seed, true)
        .sample_attempts()
        .run();
    let waited = m
        .requests
        .iter()
        .find(|r| r.population == 0 && r.request == 0);
    let waited = waited.expect("client 0's first request");
    assert_eq!(waited.outcome, Outcome::GaveUp(GiveUpReason::TimeLimit));
    assert_eq!(waited.attempts, 1);
    assert_eq!(
        waited.total_wait,
        ms(980),
        "from the 503 at 20 ms to the limit"
    );
    assert_eq!(waited.latency, Some(ms(1000)));
    let unstarted = m
        .requests
        .iter()
        .find(|r| r.population == 0 && r.request == 1);
    assert_eq!(unstarted.expect("counted").latency, None);
    let late = m.requests.iter().find(|r| r.population == 1).expect("late");
    assert_eq!((late.attempts, late.latency), (1, Some(ms(15))));
    let rows: Vec<_> = m
        .attempts
        .iter()
        .map(|a| (a.population, a.attempt, a.sent.0, a.outcome))
        .collect();
    assert_eq!(
        rows,
        [
            (0, 1, 0, AttemptOutcome::Rejected),
            (1, 1, ms(985).0, AttemptOutcome::CutShort),
        ]
    );
}

/// Without a deadline, a retry too far ahead for the clock (saturating at `SimTime::MAX`)
/// waits for the time limit: it does not give up as `deadline`.
#[test]
fn a_retry_beyond_the_clock_without_a_deadline_ends_at_the_time_limit() {
    let text = r#"
name = "exact"
time_limit = "584y"
[clients]
count = 1
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "584y"
[retry]
max_attempts = 10
[metrics]
bucket = "100d"
[[strategy]]
name = "s"
base = "300y"
cap = "400y"
"#;
    let m = run(&scenario(text), 0);
    assert_eq!(m.requests[0].attempts, 2);
    assert_eq!(
        m.requests[0].outcome,
        Outcome::GaveUp(GiveUpReason::TimeLimit)
    );
}

/// Requests of one client run one after another: the second starts when the first ends.
#[test]
fn a_clients_requests_run_back_to_back() {
    let text = exact(
        1,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"30ms\" }",
        "max_attempts = 1",
        "base = \"1s\"\ncap = \"1s\"",
    )
    .replace("count = 1", "count = 1\nrequests = 4");
    let m = run(&scenario(&text), 0);
    assert_eq!(m.entry().succeeded, 4);
    assert_eq!(m.completion.0, ms(4 * 50).0);
    assert_eq!(m.entry().calls, 4);
}

/// A queue of 2 behind 1 slot: 4 simultaneous arrivals -> 1 served, 2 queued, 1 rejected.
#[test]
fn the_queue_is_fifo_and_bounded() {
    let s = scenario(&exact(
        4,
        "concurrency = 1\nqueue = 2\nservice = { dist = \"constant\", value = \"100ms\" }",
        "max_attempts = 1",
        "base = \"1s\"\ncap = \"1s\"",
    ));
    let m = run(&s, 0);
    assert_eq!((m.entry().accepted, m.entry().rejected), (3, 1));
    let latency = |c: u32| {
        m.requests
            .iter()
            .find(|r| r.client == c)
            .unwrap()
            .latency
            .unwrap()
    };
    assert_eq!(latency(0), ms(120));
    assert_eq!(latency(1), ms(220));
    assert_eq!(latency(2), ms(320));
    assert_eq!(latency(3), ms(20));
    assert_eq!(m.entry().gave_up[GiveUpReason::Attempts as usize], 1);
    assert_eq!(m.entry().timeline[0].in_service, 1);
    assert_eq!(m.entry().timeline[0].queued, 2);
}

// ---------------------------------------------------------------------------------------
// Invariants over random small scenarios.

#[derive(Debug, Clone)]
struct Knobs {
    clients: u32,
    requests: u32,
    concurrency: u32,
    queue: u32,
    outage_ms: u64,
    outage_kind: &'static str,
    jitter: &'static str,
    max_attempts: u32,
    timeout_ms: Option<u64>,
    deadline_ms: Option<u64>,
    budget: Option<&'static str>,
    breaker: bool,
    fallback: bool,
    rate_limit: bool,
    spread_ms: u64,
    seed: u64,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        (1u32..60, 1u32..4, 1u32..6, 0u32..6, 0u64..2000),
        (
            prop_oneof![Just("down"), Just("unreachable"), Just("errors"), Just("slow")],
            prop_oneof![
                Just("\"none\""),
                Just("\"full\""),
                Just("\"equal\""),
                Just("\"decorrelated\""),
                Just("{ proportional = 0.1 }"),
                Just("{ fraction = 0.5 }")
            ],
            1u32..8,
            proptest::option::of(20u64..800),
            proptest::option::of(100u64..5000),
        ),
        (
            proptest::option::of(prop_oneof![
                Just(r#"{ kind = "ratio", ratio = 0.1, window = "1s", min_per_s = 2 }"#),
                Just(r#"{ kind = "token_bucket", max_tokens = 10, token_ratio = 0.1, scope = "global" }"#),
                Just(r#"{ kind = "quota", capacity = 50 }"#),
                Just(r#"{ kind = "adaptive", fill_per_call = 0.5, size = 3 }"#),
                Just(r#"{ kind = "adaptive", fill_per_success = 0.5, size = 3 }"#)
            ]),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            0u64..500,
            any::<u64>(),
        ),
    )
        .prop_map(
            |(
                (clients, requests, concurrency, queue, outage_ms),
                (outage_kind, jitter, max_attempts, timeout_ms, deadline_ms),
                (budget, breaker, fallback, rate_limit, spread_ms, seed),
            )| Knobs {
                clients,
                requests,
                concurrency,
                queue,
                outage_ms,
                outage_kind,
                jitter,
                max_attempts,
                timeout_ms,
                deadline_ms,
                budget,
                breaker,
                fallback,
                rate_limit,
                spread_ms,
                seed: seed % 1000,
            },
        )
}

fn random_scenario(k: &Knobs) -> String {
    let mut s = format!(
        r#"
name = "prop"
seed = {seed}
time_limit = "2m"
[clients]
count = {clients}
requests = {requests}
start_spread = "{spread}ms"
[network]
latency = {{ dist = "exponential", mean = "5ms" }}
[server]
concurrency = {concurrency}
queue = {queue}
service = {{ dist = "uniform", min = "1ms", max = "30ms" }}
client_error_rate = 0.05
"#,
        seed = k.seed,
        clients = k.clients,
        requests = k.requests,
        spread = k.spread_ms,
        concurrency = k.concurrency,
        queue = k.queue,
    );
    if k.rate_limit {
        s.push_str("[server.rate_limit]\nrate = 50\nburst = 5\nretry_after = \"auto\"\n");
    }
    if k.outage_ms > 0 {
        let extra = match k.outage_kind {
            "errors" => "error_rate = 0.5\n",
            "slow" => "slowdown = 4.0\n",
            _ => "",
        };
        s.push_str(&format!(
            "[[server.outages]]\nstart = \"10ms\"\nend = \"{}ms\"\nkind = \"{}\"\n{extra}",
            10 + k.outage_ms,
            k.outage_kind
        ));
    }
    if k.fallback {
        s.push_str(
            "[fallback]\nconcurrency = 2\nservice = { dist = \"constant\", value = \"5ms\" }\n",
        );
    }
    s.push_str(&format!(
        "[retry]\nmax_attempts = {}\nconnect_timeout = \"300ms\"\n",
        k.max_attempts
    ));
    if let Some(t) = k.timeout_ms {
        s.push_str(&format!("timeout = \"{t}ms\"\ntimeout_multiplier = 1.5\n"));
    }
    if let Some(d) = k.deadline_ms {
        s.push_str(&format!("deadline = \"{d}ms\"\n"));
    }
    if let Some(b) = k.budget {
        s.push_str(&format!("budget = {b}\n"));
    }
    if k.breaker {
        s.push_str("breaker = { failure_rate = 0.5, window = \"1s\", min_calls = 3, open_for = \"200ms\", half_open_probes = 2, scope = \"global\" }\n");
    }
    if k.fallback {
        s.push_str("fallback_on = [\"attempts\", \"budget\", \"breaker_open\", \"deadline\"]\n");
    }
    s.push_str(&format!(
        "rate_limit = {{ max_retries = 3, escalate_after = 2, default_wait = \"50ms\" }}\n[[strategy]]\nname = \"p\"\nbase = \"10ms\"\ncap = \"500ms\"\njitter = {}\n",
        k.jitter
    ));
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Every logical request ends exactly once, whatever the policy; the server's books
    /// balance; gauges stay within capacity; no retry exceeds its ladder.
    #[test]
    fn every_request_ends_exactly_once(k in knobs()) {
        let s = scenario(&random_scenario(&k));
        let m = run(&s, 0);
        let total = (k.clients * k.requests) as u64;
        prop_assert_eq!(m.entry().succeeded + m.gave_up_total(), total);
        prop_assert_eq!(m.requests.len() as u64, total);
        let mut seen: Vec<(u32, u32)> = m.requests.iter().map(|r| (r.client, r.request)).collect();
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen.len() as u64, total, "a request ended twice or never");
        prop_assert_eq!(m.entry().calls, m.entry().accepted + m.entry().rejected);
        let arrivals: u64 = m.entry().timeline.iter().map(|b| b.arrivals as u64).sum();
        prop_assert_eq!(arrivals, m.entry().calls);
        let fallback: u64 = m.entry().timeline.iter().map(|b| b.fallback_arrivals as u64).sum();
        prop_assert_eq!(fallback, m.fallback_calls);
        prop_assert!(m.fallback_succeeded <= m.fallback_calls);
        prop_assert!(m.entry().timeline.iter().all(|b| b.in_service <= k.concurrency && b.queued <= k.queue));
        let completed: u64 = m.entry().timeline.iter().map(|b| b.completed as u64).sum();
        prop_assert!(completed <= m.entry().accepted);
        prop_assert!(m.entry().wasted <= completed);
        for r in &m.requests {
            // Transport attempts + rate-limit retries (at most 2 before escalating) + 1 fallback.
            prop_assert!(r.attempts <= k.max_attempts + 2 + 1, "{:?}", r);
            if let Some(d) = k.deadline_ms {
                // Waits never push a retry past the deadline.
                prop_assert!(r.total_wait < SimDuration::from_millis(d), "{:?}", r);
            }
        }
        if k.budget.is_none() {
            prop_assert_eq!(m.entry().budget_refused + m.entry().budget_allowed, 0);
        }
    }

    /// A run is a pure function of (scenario, seed).
    #[test]
    fn the_same_seed_gives_the_same_run(k in knobs()) {
        let s = scenario(&random_scenario(&k));
        let (a, b) = (run(&s, 0), run(&s, 0));
        prop_assert_eq!(a.events, b.events);
        prop_assert_eq!(&a.latencies, &b.latencies);
        prop_assert_eq!(&a.entry().timeline, &b.entry().timeline);
    }
}

/// Results are identical for a pool of one thread and a pool of two (nexosim's _st/_mt).
fn summaries_with_threads(threads: usize) -> Vec<u8> {
    let file = herdsim::scenario::sweep::load_str("t.toml", crate::common::TINY).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let result = pool
        .install(|| herdsim::runner::run_scenario(&file, Default::default(), &|| {}))
        .unwrap();
    let mut bytes = herdsim::report::csv::summary_csv(&file.axes, &result, 7).unwrap();
    bytes.extend(herdsim::report::csv::timeseries_csv(&file, &result).unwrap());
    bytes
}

#[test]
fn results_do_not_depend_on_thread_count_st() {
    assert_eq!(summaries_with_threads(1), summaries_with_threads(1));
}

#[test]
fn results_do_not_depend_on_thread_count_mt() {
    assert_eq!(summaries_with_threads(1), summaries_with_threads(2));
}

/// One small golden run is checked in: any change to the engine, the RNG streams or the seed
/// derivation shows up here. Regenerate with `UPDATE_GOLDEN=1 cargo test golden`.
#[test]
fn golden_tiny_summary_is_unchanged() {
    let file = herdsim::scenario::sweep::load_str("t.toml", crate::common::TINY).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    let got = String::from_utf8(herdsim::report::csv::summary_csv(&file.axes, &result, 7).unwrap())
        .unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/tiny_summary.csv");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let expected = std::fs::read_to_string(path).expect("tests/golden/tiny_summary.csv exists");
    assert_eq!(got, expected);
}

/// A response that arrives at exactly the timeout instant counts as arrived; one nanosecond
/// later, the timeout wins. The service itself finished in time, so it is not wasted work
/// (only attempts abandoned while queued or in service are).
#[test]
fn a_response_at_exactly_the_timeout_instant_counts_as_arrived() {
    let with_service = |service: &str| {
        scenario(&exact(
            1,
            &format!("concurrency = 1\nservice = {{ dist = \"constant\", value = \"{service}\" }}"),
            "max_attempts = 1\ntimeout = \"50ms\"",
            "base = \"1s\"\ncap = \"1s\"",
        ))
    };
    let on_time = run(&with_service("30ms"), 0);
    assert_eq!(on_time.entry().succeeded, 1);
    assert_eq!(on_time.completion.0, ms(50).0);
    assert_eq!(on_time.entry().wasted, 0);
    // Start, arrival, service end, response: no timer enters the queue to stand down.
    assert_eq!(on_time.events, 4);
    let late = run(&with_service("30000001ns"), 0);
    assert_eq!(late.entry().succeeded, 0);
    assert_eq!(late.requests[0].last_status, Some(Status::Timeout));
    assert_eq!(late.completion.0, ms(50).0);
    assert_eq!(late.entry().wasted, 0);
}

/// A service that ends at exactly the attempt's timeout ends after the timer by insertion
/// order (the timer was set when the attempt was sent, the service end when it started):
/// the client has abandoned the attempt, and the server's work is `wasted`. With zero
/// network latency the answer made at that instant is too late as well; one nanosecond
/// sooner, it is in time.
#[test]
fn a_service_ending_at_exactly_the_timeout_instant_served_an_abandoned_attempt() {
    let with = |latency: &str, service: &str| {
        scenario(&exact_scenario(
            latency,
            "count = 1",
            &format!("concurrency = 1\nservice = {{ dist = \"constant\", value = \"{service}\" }}"),
            "max_attempts = 1\ntimeout = \"30ms\"",
            "[[strategy]]\nname = \"s\"\nbase = \"1s\"\ncap = \"1s\"",
        ))
    };
    // 10 ms there, served 10-30 ms: the timer (30 ms) comes first.
    let m = run(&with("10ms", "20ms"), 0);
    assert_eq!(m.entry().succeeded, 0);
    assert_eq!(m.requests[0].last_status, Some(Status::Timeout));
    assert_eq!(m.completion.0, ms(30).0);
    assert_eq!(m.entry().wasted, 1);
    // Zero latency, served 0-30 ms: the same.
    let m = run(&with("0s", "30ms"), 0);
    assert_eq!(m.entry().succeeded, 0);
    assert_eq!(m.requests[0].last_status, Some(Status::Timeout));
    assert_eq!(m.entry().wasted, 1);
    let m = run(&with("0s", "29999999ns"), 0);
    assert_eq!(m.entry().succeeded, 1);
    assert_eq!(m.entry().wasted, 0);
    // Queued behind another client's 20 ms service with zero latency, then served 20-40 ms
    // with a 40 ms timeout: the second client times out at 40 ms, its work wasted, while
    // the first is answered at 20 ms.
    let s = scenario(&exact_scenario(
        "0s",
        "count = 2",
        "concurrency = 1\nqueue = 1\nservice = { dist = \"constant\", value = \"20ms\" }",
        "max_attempts = 1\ntimeout = \"40ms\"",
        "[[strategy]]\nname = \"s\"\nbase = \"1s\"\ncap = \"1s\"",
    ));
    let m = run(&s, 0);
    assert_eq!((m.entry().succeeded, m.entry().wasted), (1, 1));
    assert_eq!(m.completion.0, ms(40).0);
}

/// The same for a rejection: with a 20 ms timeout and 10 ms each way, the 503 arrives at
/// exactly 20 ms and is what the client sees (a retry after a 503, not after a timeout);
/// the retry, served in zero time, is answered at exactly its timeout too.
#[test]
fn a_rejection_at_exactly_the_timeout_instant_is_a_503_not_a_timeout() {
    let s = scenario(&exact(
        1,
        "concurrency = 1\nservice = { dist = \"constant\", value = \"0s\" }\n[[server.outages]]\nstart = \"0s\"\nend = \"100ms\"",
        "max_attempts = 5\ntimeout = \"20ms\"",
        "base = \"100ms\"\ncap = \"100ms\"",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().retries, [1, 0, 0, 0, 0, 0]);
    assert_eq!(m.entry().succeeded, 1);
}
