//! Service graphs: retries multiplied at every tier, slots held through downstream calls,
//! deadline propagation, wasted work below an abandoned call, conservation at every
//! service, and determinism across thread counts.

use herdsim::metrics::{Outcome, RunMetrics};
use herdsim::model::outcome::{GiveUpReason, Status};
use herdsim::time::SimDuration;
use proptest::prelude::*;

use crate::common::{Workspace, herdsim, run, scenario};

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// `clients` clients, no network delay, `[retry]` body `retry`, one strategy with a
/// constant `backoff`, then the `[[service]]` tables `services`.
fn graph(clients: u32, retry: &str, backoff: &str, services: &str) -> String {
    format!(
        r#"
name = "graph"
[clients]
count = {clients}
[network]
latency = {{ dist = "constant", value = "0s" }}
[retry]
{retry}
[[strategy]]
name = "s"
base = "{backoff}"
cap = "{backoff}"
multiplier = 1.0
{services}
"#
    )
}

const FAILING_DB: &str = r#"
[[service]]
name = "db"
concurrency = 100
service = { dist = "constant", value = "1ms" }
[[service.outages]]
start = "0s"
end = "1h"
"#;

/// Three tiers, each retrying with `max_attempts = 4`, over a bottom that always fails:
/// 4 calls at the api, 16 at mid, 64 at the db per client request.
#[test]
fn retries_multiply_at_every_tier() {
    let text = graph(
        1,
        "max_attempts = 4",
        "10ms",
        &format!(
            r#"
[[service]]
name = "api"
concurrency = 100
service = {{ dist = "constant", value = "1ms" }}
calls = ["mid"]
retry = "strategy"
[[service]]
name = "mid"
concurrency = 100
service = {{ dist = "constant", value = "1ms" }}
calls = ["db"]
retry = "strategy"
{FAILING_DB}"#
        ),
    );
    let m = run(&scenario(&text), 0);
    let calls: Vec<u64> = m.services.iter().map(|s| s.calls).collect();
    assert_eq!(calls, [4, 16, 64]);
    // The verdict's work counts the entry service's calls, and names the sum over every
    // service beside it: (4 + 16 + 64) / 1 request.
    let ws = Workspace::new();
    let file = ws.file("graph.toml", &text);
    let out = herdsim()
        .args(["run", file.to_str().unwrap(), "--out"])
        .arg(ws.out())
        .arg("--no-charts")
        .output()
        .expect("run herdsim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("work 4.00x (84.0x over all services)"),
        "{stdout}"
    );
    // The charts' capacity line of a service that calls others says what the verdict's
    // capacity says: its own work only (its slots are also held through its calls).
    let charts = ws.path().join("charts");
    let out = herdsim()
        .args([
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--format",
            "svg",
            "--out",
        ])
        .arg(&charts)
        .output()
        .expect("run herdsim");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The attempts chart in full; the load chart, a column per service, in short (the
    // rate is written with a thin space between thousands).
    for (chart, says) in [
        (
            "attempts.svg",
            "req/s: 100 slots / 1ms mean service, its own work only (slots are also held through its calls)",
        ),
        ("load.svg", "req/s, own work only"),
    ] {
        let svg = std::fs::read_to_string(charts.join("graph").join(chart)).unwrap();
        assert!(svg.contains(says), "{chart}: {says}");
    }
    // Logical requests made to each tier, and how they ended.
    let requests: Vec<u64> = m.services.iter().map(|s| s.requests).collect();
    assert_eq!(requests, [1, 4, 16]);
    assert!(
        m.services
            .iter()
            .all(|s| s.gave_up[GiveUpReason::Attempts as usize] == s.requests)
    );
    // Every api attempt was answered 500 (its call to mid gave up).
    assert_eq!(m.requests[0].last_status, Some(Status::ServerError));
    assert_eq!(m.entry().retries[1], 3, "three retries after a 500");

    // Retries at the edge only: services without `retry` make one attempt per call.
    let edge_only = text.replace("retry = \"strategy\"\n", "");
    let m = run(&scenario(&edge_only), 0);
    let calls: Vec<u64> = m.services.iter().map(|s| s.calls).collect();
    assert_eq!(calls, [4, 4, 4]);
}

/// A caller with one slot holds it through its slow downstream call: three requests at
/// t = 0 are served one after another, 100 ms each, although the db has ten slots.
#[test]
fn a_slot_is_held_through_the_downstream_calls() {
    let text = graph(
        3,
        "max_attempts = 1",
        "10ms",
        r#"
[[service]]
name = "api"
concurrency = 1
queue = 10
service = { dist = "constant", value = "0s" }
calls = ["db"]
[[service]]
name = "db"
concurrency = 10
service = { dist = "constant", value = "100ms" }
"#,
    );
    let m = run(&scenario(&text), 0);
    let mut latencies: Vec<SimDuration> = m.requests.iter().map(|r| r.latency.unwrap()).collect();
    latencies.sort();
    assert_eq!(latencies, [ms(100), ms(200), ms(300)]);
    let db_peak = m.services[1].timeline.iter().map(|b| b.in_service).max();
    assert_eq!(db_peak, Some(1), "the db never sees two at once");
    let api_peak = m.services[0].timeline.iter().map(|b| b.queued).max();
    assert_eq!(api_peak, Some(2));
}

/// Calls are made one after another, in the order written; the first give-up ends the job
/// with a 500 and the later calls are not made.
#[test]
fn calls_run_in_order_and_a_give_up_stops_them() {
    let text = graph(
        1,
        "max_attempts = 1",
        "10ms",
        r#"
[[service]]
name = "api"
concurrency = 1
service = { dist = "constant", value = "10ms" }
calls = ["auth", "db", "cache"]
[[service]]
name = "auth"
concurrency = 1
service = { dist = "constant", value = "20ms" }
[[service]]
name = "db"
concurrency = 1
service = { dist = "constant", value = "30ms" }
[[service]]
name = "cache"
concurrency = 1
service = { dist = "constant", value = "40ms" }
"#,
    );
    let m = run(&scenario(&text), 0);
    assert_eq!(m.requests[0].latency.unwrap(), ms(100), "10 + 20 + 30 + 40");
    let failing = text.replace(
        "service = { dist = \"constant\", value = \"30ms\" }",
        "service = { dist = \"constant\", value = \"30ms\" }\n[[service.outages]]\nstart = \"0s\"\nend = \"1h\"",
    );
    let m = run(&scenario(&failing), 0);
    assert_eq!(
        m.requests[0].latency.unwrap(),
        ms(30),
        "api 10 + auth 20, db refuses at once"
    );
    assert_eq!(m.requests[0].last_status, Some(Status::ServerError));
    let calls: Vec<u64> = m.services.iter().map(|s| s.calls).collect();
    assert_eq!(calls, [1, 1, 1, 0], "the cache is never called");
}

/// With `propagate_deadline`, the api's retry ladder to a failing db stops at the client
/// request's deadline: retries at 300, 600 and 900 ms, and the next (1 200 ms) would start
/// after the 1 s deadline, so the call gives up at 900 ms and the api answers 500 then.
/// Without it, the api's own policy (no deadline, 20 attempts) runs its full ladder.
#[test]
fn a_propagated_deadline_cuts_the_downstream_ladder_at_the_exact_instant() {
    let text = graph(
        1,
        "max_attempts = 1\ndeadline = \"1s\"",
        "10ms",
        &format!(
            r#"
[[service]]
name = "api"
concurrency = 10
service = {{ dist = "constant", value = "0s" }}
calls = ["db"]
retry = {{ max_attempts = 20, base = "300ms", cap = "300ms", multiplier = 1.0, deadline = "none" }}
propagate_deadline = true
{FAILING_DB}"#
        ),
    );
    let m = run(&scenario(&text), 0);
    assert_eq!(m.services[1].calls, 4);
    assert_eq!(m.services[1].gave_up[GiveUpReason::Deadline as usize], 1);
    assert_eq!(m.requests[0].latency.unwrap(), ms(900));
    assert_eq!(m.requests[0].last_status, Some(Status::ServerError));

    let m = run(&scenario(&text.replace("propagate_deadline = true", "")), 0);
    assert_eq!(m.services[1].calls, 20);
    assert_eq!(m.services[1].gave_up[GiveUpReason::Attempts as usize], 1);
    assert_eq!(m.requests[0].latency.unwrap(), ms(19 * 300));
}

/// A propagated deadline is that of the request the served attempt belongs to, even when
/// its closed client has moved on to its next request in the same key (helper-93's case).
/// The blocker holds the api's one slot from 1 to 56 ms (its own db call makes 4 attempts
/// against the down db). Client x's request 0 (deadline 50 ms) queues at the api at 1 ms,
/// times out at 30 ms and gives up; its request 1 (deadline 80 ms) begins at 30 ms and is
/// refused at 31 ms (the queue is full). At 56 ms the abandoned attempt of request 0 is
/// served: its db call is refused at 59 ms, back at 60 ms, and the retry due at 75 ms
/// would pass request 0's 50 ms deadline: 1 attempt, given up as `deadline`. Request 1's
/// deadline (80 ms) allowed that retry: 6 db calls instead of 5.
#[test]
fn a_propagated_deadline_is_that_of_the_served_attempts_request_not_the_clients_next() {
    let text = r#"
name = "next"
[[clients]]
name = "blocker"
count = 1
[[clients]]
name = "x"
count = 1
requests = 2
retry = { max_attempts = 1, timeout = "30ms", deadline = "50ms" }
[network]
latency = { dist = "constant", value = "1ms" }
[[service]]
name = "api"
concurrency = 1
queue = 1
service = { dist = "constant", value = "2ms" }
calls = ["db"]
retry = { max_attempts = 4, base = "15ms", cap = "15ms", multiplier = 1 }
propagate_deadline = true
[[service]]
name = "db"
concurrency = 1
service = { dist = "constant", value = "1ms" }
[[service.outages]]
start = "0s"
end = "1s"
[retry]
max_attempts = 1
base = "1ms"
cap = "1ms"
[[strategy]]
name = "s"
"#;
    let m = run(&scenario(text), 0);
    assert_eq!(m.services[1].calls, 5);
    assert_eq!(m.services[1].gave_up[GiveUpReason::Deadline as usize], 1);
    assert_eq!(m.services[1].gave_up[GiveUpReason::Attempts as usize], 1);
    // The same client with one request: nothing else in its key, the same 5 calls.
    let m = run(&scenario(&text.replace("requests = 2", "requests = 1")), 0);
    assert_eq!(m.services[1].calls, 5);
}

/// The client abandons its attempt after 50 ms, but the work below goes on: the db serves
/// the api's call (for a live caller: not wasted there) and the api finishes at 100 ms for
/// a client that has left: wasted at the api.
#[test]
fn work_below_an_abandoned_call_continues_and_is_wasted_where_it_finishes() {
    let text = graph(
        1,
        "max_attempts = 1\ntimeout = \"50ms\"",
        "10ms",
        r#"
[[service]]
name = "api"
concurrency = 10
service = { dist = "constant", value = "0s" }
calls = ["db"]
[[service]]
name = "db"
concurrency = 10
service = { dist = "constant", value = "100ms" }
"#,
    );
    let m = run(&scenario(&text), 0);
    assert_eq!(
        m.requests[0].outcome,
        Outcome::GaveUp(GiveUpReason::Attempts)
    );
    assert_eq!(m.requests[0].latency.unwrap(), ms(50));
    assert_eq!((m.services[0].wasted, m.services[1].wasted), (1, 0));
    assert_eq!(
        m.services[1].succeeded, 1,
        "the api's call to the db succeeded"
    );
    let completed: u32 = m.services[0].timeline.iter().map(|b| b.completed).sum();
    assert_eq!(completed, 1);
}

/// The client gives up at 50 ms (its timeout), but the api's call to the db (100 s of
/// service) is still open at the 10 s limit: it ends there as `time_limit` at the db, and
/// no client request was cut, so the run is not "cut short" (no warning).
#[test]
fn a_downstream_call_open_at_the_time_limit_does_not_cut_the_run_short() {
    let text = graph(
        1,
        "max_attempts = 1\ntimeout = \"50ms\"",
        "10ms",
        r#"
[[service]]
name = "api"
concurrency = 10
service = { dist = "constant", value = "0s" }
calls = ["db"]
[[service]]
name = "db"
concurrency = 10
service = { dist = "constant", value = "100s" }
"#,
    )
    .replace("name = \"graph\"", "name = \"graph\"\ntime_limit = \"10s\"");
    let m = run(&scenario(&text), 0);
    assert_eq!(
        m.requests[0].outcome,
        Outcome::GaveUp(GiveUpReason::Attempts)
    );
    assert_eq!(m.services[1].gave_up[GiveUpReason::TimeLimit as usize], 1);
    assert_eq!(m.services[0].gave_up[GiveUpReason::TimeLimit as usize], 0);
    assert!(!m.cut_short);
}

/// A crash of the middle tier loses the job waiting on its downstream call; the call itself
/// runs to its end below.
#[test]
fn a_crash_loses_a_job_but_not_the_call_below_it() {
    let text = graph(
        1,
        "max_attempts = 1\ntimeout = \"1s\"",
        "10ms",
        r#"
[[service]]
name = "api"
concurrency = 10
service = { dist = "constant", value = "0s" }
calls = ["db"]
[[service.outages]]
start = "50ms"
end = "60ms"
kind = "crash"
[[service]]
name = "db"
concurrency = 10
service = { dist = "constant", value = "100ms" }
"#,
    );
    let m = run(&scenario(&text), 0);
    assert_eq!(
        m.requests[0].latency.unwrap(),
        ms(1000),
        "never answered: the client's timeout"
    );
    assert_eq!(m.services[0].lost, 1);
    assert_eq!(m.services[1].succeeded, 1);
    assert_eq!(m.services[0].wasted, 0);
}

/// The middle tier crashes at 20 ms while its job retries a call to a db that is down
/// (db attempt 1 at 0 ms, its 503 back at once; the retry is due 20 ms later, at 20 ms,
/// after the crash event set at the start). The crashed process sends no retry: the call
/// ends, the job is lost, and the db sees 1 call, not the 5 of the call's ladder. The
/// client's attempt times out at 100 ms, retries at 110 ms into a fresh job whose call
/// makes all 5 attempts (110, 130, ..., 190 ms): 6 db calls in all.
#[test]
fn a_crashed_service_makes_no_further_attempt_of_its_lost_jobs_calls() {
    let text = graph(
        1,
        "max_attempts = 2\ntimeout = \"100ms\"",
        "10ms",
        r#"
[[service]]
name = "mid"
concurrency = 10
service = { dist = "constant", value = "0s" }
calls = ["db"]
retry = { max_attempts = 5, base = "20ms", cap = "20ms" }
[[service.outages]]
start = "20ms"
end = "50ms"
kind = "crash"
[[service]]
name = "db"
concurrency = 10
service = { dist = "constant", value = "1ms" }
[[service.outages]]
start = "0s"
end = "1h"
"#,
    );
    let m = run(&scenario(&text), 0);
    assert_eq!(m.services[1].calls, 6);
    assert_eq!(m.services[1].requests, 2);
    assert_eq!(m.services[1].gave_up_total(), 2);
    assert_eq!(m.services[0].lost, 1);
    // The second job's call gives up after its 5th attempt, at 190 ms (before the client's
    // timeout at 210 ms): mid answers 500 then, and the client, at its last attempt, gives up.
    assert_eq!(m.requests[0].latency.unwrap(), ms(190));
    assert_eq!(
        m.requests[0].outcome,
        Outcome::GaveUp(GiveUpReason::Attempts)
    );
}

fn conservation(m: &RunMetrics) -> Result<(), TestCaseError> {
    for (i, s) in m.services.iter().enumerate() {
        prop_assert_eq!(s.requests, s.succeeded + s.gave_up_total(), "service {}", i);
        prop_assert_eq!(s.calls, s.accepted + s.rejected, "service {}", i);
        let arrivals: u64 = s.timeline.iter().map(|b| b.arrivals as u64).sum();
        prop_assert_eq!(arrivals, s.calls);
        let firsts: u64 = s.timeline.iter().map(|b| b.first_attempts as u64).sum();
        prop_assert!(firsts <= s.requests);
    }
    let records = m.requests.len() as u64;
    prop_assert_eq!(records, m.entry().requests);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every logical request at every service ends exactly once, and calls are accepted or
    /// rejected, whatever the graph's shape, timeouts, outages and policies.
    #[test]
    fn every_service_conserves_its_requests(
        depth in 1usize..4,
        fan in 1usize..3,
        attempts in 1u32..4,
        timeout_ms in 5u64..200,
        down_ms in 0u64..300,
        slots in 1u32..4,
        crash in proptest::bool::ANY,
        propagate in proptest::bool::ANY,
        seed in 0u64..1000,
    ) {
        let mut services = String::new();
        for level in 0..depth {
            let calls: Vec<String> = if level + 1 < depth {
                (0..fan).map(|k| format!("\"s{}x{k}\"", level + 1)).collect()
            } else {
                Vec::new()
            };
            let width = if level == 0 { 1 } else { fan };
            for k in 0..width {
                let kind = if crash { "crash" } else { "down" };
                services.push_str(&format!(
                    "[[service]]\nname = \"s{level}x{k}\"\nconcurrency = {slots}\nqueue = 3\n\
                     service = {{ dist = \"exponential\", mean = \"10ms\" }}\n\
                     calls = [{}]\nretry = \"strategy\"\npropagate_deadline = {propagate}\n\
                     [[service.outages]]\nstart = \"20ms\"\nend = \"{}ms\"\nkind = \"{kind}\"\n",
                    calls.join(", "),
                    20 + down_ms + 1,
                ));
            }
        }
        let text = format!(
            "seed = {seed}\n{}",
            graph(
                12,
                &format!("max_attempts = {attempts}\ntimeout = \"{timeout_ms}ms\"\ndeadline = \"2s\""),
                "5ms",
                &services,
            )
            .replace("value = \"0s\"", "value = \"2ms\"")
        );
        let m = run(&scenario(&text), 0);
        conservation(&m)?;
    }
}

/// A graph scenario gives byte-identical files with one thread and with two.
#[test]
fn graph_results_do_not_depend_on_thread_count_mt() {
    let text = graph(
        200,
        "max_attempts = 4\ntimeout = \"200ms\"",
        "20ms",
        r#"
[[service]]
name = "api"
concurrency = 20
queue = 20
service = { dist = "exponential", mean = "5ms" }
calls = ["db"]
retry = "strategy"
[[service]]
name = "db"
concurrency = 10
service = { dist = "exponential", mean = "10ms" }
[[service.outages]]
start = "0s"
end = "500ms"
"#,
    )
    .replace("[clients]", "replications = 3\n[clients]")
    .replace("count = 200", "count = 200\nstart_spread = \"200ms\"");
    let file = herdsim::scenario::sweep::load_str("g.toml", &text).unwrap();
    let bytes = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let result = pool
            .install(|| herdsim::runner::run_scenario(&file, Default::default(), &|| {}))
            .unwrap();
        let mut out = herdsim::report::csv::services_csv(&file.axes, &result).unwrap();
        out.extend(herdsim::report::csv::timeseries_csv(&file, &result).unwrap());
        out.extend(herdsim::report::csv::summary_csv(&file.axes, &result, 1).unwrap());
        out
    };
    assert_eq!(bytes(1), bytes(2));
}

/// Api -> db, `time_limit = 1s`; the client gives up at 100 ms, while api's call to db
/// (2 s of service, a 5 s timeout) is still being served at the limit: the call ends
/// there as `time_limit` in db's `gave_up`, and the series run to the bucket holding the
/// limit's last instant. The same when the first event past the limit is a capacity step
/// of db (at 1.5 s: it used to hide the call, which then never ended), and when the call
/// hangs with nothing scheduled (db unreachable, no timeout on api's call: the run used to
/// stop at the client's give-up, the call still open).
#[test]
fn a_downstream_call_still_open_at_the_limit_ends_there() {
    let text = |db: &str, api_retry: &str| {
        format!(
            r#"
name = "cut"
time_limit = "1s"
[clients]
count = 1
retry = {{ max_attempts = 1, timeout = "100ms" }}
[network]
latency = {{ dist = "constant", value = "10ms" }}
[[service]]
name = "api"
concurrency = 1
service = {{ dist = "constant", value = "10ms" }}
calls = ["db"]
retry = {{ max_attempts = 1{api_retry} }}
[[service]]
name = "db"
concurrency = 1
{db}
[retry]
max_attempts = 1
base = "100ms"
cap = "1s"
[metrics]
bucket = "100ms"
[[strategy]]
name = "a"
"#
        )
    };
    let two_seconds = "service = { dist = \"constant\", value = \"2s\" }";
    let step = "[[service.capacity]]\nat = \"1500ms\"\nconcurrency = 2";
    let unreachable = "service = { dist = \"constant\", value = \"10ms\" }\n\
                       [[service.outages]]\nstart = \"0s\"\nend = \"10s\"\nkind = \"unreachable\"";
    for (db, api_retry) in [
        (two_seconds.to_string(), ", timeout = \"5s\""),
        (format!("{two_seconds}\n{step}"), ", timeout = \"5s\""),
        (unreachable.to_string(), ""),
    ] {
        let m = run(&scenario(&text(&db, api_retry)), 0);
        let db_metrics = &m.services[1];
        assert_eq!(db_metrics.requests, 1, "{db}");
        assert_eq!(
            db_metrics.gave_up[GiveUpReason::TimeLimit as usize],
            1,
            "{db}"
        );
        assert_eq!(db_metrics.timeline.len(), 10, "{db}");
        assert_eq!(db_metrics.timeline[9].gave_up, 1, "{db}");
        assert_eq!(m.entry().gave_up[GiveUpReason::Attempts as usize], 1);
    }
}

/// Breakers on every tier: the clients' breaker (open 2 s) guards calls to api, api's own
/// (the strategy's, open 1 s) guards its calls to db, which is down. The client's first two
/// requests fail and open its breaker at 7 ms, as api's two failed calls opened api's:
/// services.csv gives each service the open time of the breakers guarding calls to it, and
/// summary.csv's `breaker_open_s` is the clients' alone.
#[test]
fn each_service_reports_the_open_time_of_the_breakers_guarding_it() {
    let text = r#"
name = "tiers"
time_limit = "10s"
[clients]
count = 1
requests = 3
retry = { max_attempts = 1, breaker = { failure_rate = 1.0, window_calls = 2, min_calls = 2, open_for = "2s", half_open_probes = 1, scope = "global" } }
[network]
latency = { dist = "constant", value = "1ms" }
[[service]]
name = "api"
concurrency = 2
service = { dist = "constant", value = "1ms" }
calls = ["db"]
retry = "strategy"
[[service]]
name = "db"
concurrency = 1
service = { dist = "constant", value = "1ms" }
[[service.outages]]
start = "0s"
end = "1h"
[retry]
max_attempts = 3
base = "1ms"
cap = "1ms"
multiplier = 1.0
[metrics]
bucket = "5ms"
[[strategy]]
name = "a"
breaker = { failure_rate = 1.0, window_calls = 2, min_calls = 2, open_for = "1s", half_open_probes = 1, scope = "global" }
"#;
    let file = herdsim::scenario::sweep::load_str("tiers.toml", text).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    let services = herdsim::report::csv::services_csv(&file.axes, &result).unwrap();
    let services = String::from_utf8(services).unwrap();
    let column = |line: &str| line.rsplit(',').next().unwrap().to_string();
    let rows: Vec<&str> = services.lines().collect();
    assert!(rows[0].ends_with(",lost,breaker_open_s"), "{services}");
    assert_eq!(
        rows[1..].iter().map(|l| column(l)).collect::<Vec<_>>(),
        ["2", "1"],
        "{services}"
    );
    assert_eq!(result.points[0].strategies[0].summary.breaker_open_s, 2.0);
}
