//! Workloads (populations, open arrivals, traces, per-population policies, common random
//! numbers), checked on small hand-worked cases to the nanosecond, and statistically
//! against queueing theory with fixed seeds and tolerances derived from theory.

use herdsim::metrics::{Outcome, RunMetrics};
use herdsim::model::outcome::GiveUpReason;
use herdsim::time::SimDuration;

use crate::common::{run, scenario};

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// The entry service's first attempts per bucket.
fn first_attempts(m: &RunMetrics) -> Vec<u32> {
    m.entry()
        .timeline
        .iter()
        .map(|b| b.first_attempts)
        .collect()
}

/// One open population `body`, constant 5 ms latency, one server of `server`, `retry`.
fn open(body: &str, server: &str, retry: &str) -> String {
    format!(
        r#"
name = "open"
[[clients]]
name = "web"
{body}
[network]
latency = {{ dist = "constant", value = "5ms" }}
[server]
{server}
[retry]
{retry}
[[strategy]]
name = "s"
base = "100ms"
cap = "1s"
[metrics]
bucket = "1s"
"#
    )
}

/// 100 req/s uniform for 10 s against one 10 ms slot: exactly at capacity. Arrival k is at
/// k x 10 ms, reaches the server 5 ms later, is served for 10 ms and answered 5 ms after:
/// every request takes exactly 20 ms and none waits.
#[test]
fn uniform_arrivals_at_capacity_never_queue() {
    let s = scenario(&open(
        "rate = 100\nprocess = \"uniform\"\nend = \"10s\"",
        "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }",
        "max_attempts = 1",
    ));
    let m = run(&s, 0);
    assert_eq!(m.entry().requests, 1000);
    assert_eq!(m.entry().calls, 1000);
    assert_eq!(m.succeeded(), 1000);
    assert_eq!(m.entry().rejected, 0);
    assert!(m.entry().timeline.iter().all(|b| b.queued == 0));
    assert!(m.requests.iter().all(|r| r.latency == Some(ms(20))));
    let numbers: Vec<u32> = m.requests.iter().map(|r| r.request).collect();
    assert_eq!(numbers, (0..1000).collect::<Vec<_>>(), "arrival order");
    // The last arrival is at 9.99 s.
    assert_eq!(m.completion.0, ms(9_990 + 20).0);
    // 100 first attempts in every one-second bucket.
    let firsts = first_attempts(&m);
    assert_eq!(&firsts[..10], &[100; 10]);
}

/// Arrivals at `start + k/r` for every such time before `end`, and none before `start`.
#[test]
fn uniform_arrivals_start_at_start_and_stop_before_end() {
    let s = scenario(&open(
        "rate = 4\nprocess = \"uniform\"\nstart = \"1s\"\nend = \"3s\"",
        "concurrency = 10\nservice = { dist = \"constant\", value = \"1ms\" }",
        "max_attempts = 1",
    ));
    let m = run(&s, 0);
    // 1.00, 1.25, ..., 2.75 s: 8 arrivals; 3 s itself is excluded.
    assert_eq!(m.entry().requests, 8);
    let firsts = first_attempts(&m);
    assert_eq!(&firsts[..3], &[0, 4, 4]);
}

/// A step profile: 10/s for 2 s, 50/s for 1 s, then 10/s until 5 s, uniform: 20 + 50 + 20.
#[test]
fn a_step_profile_changes_the_rate_exactly() {
    let s = scenario(&open(
        "profile = [[\"0s\", 10], [\"2s\", 10], [\"2s\", 50], [\"3s\", 50], [\"3s\", 10]]\n\
         process = \"uniform\"\nend = \"5s\"",
        "concurrency = 100\nservice = { dist = \"constant\", value = \"1ms\" }",
        "max_attempts = 1",
    ));
    let m = run(&s, 0);
    let firsts = first_attempts(&m);
    assert_eq!(&firsts[..5], &[10, 10, 50, 10, 10]);
}

/// A profile's uniform arrivals land on the very nanosecond the cumulative rate reaches k,
/// as a plain `rate` does: arrival 41 of a flat 10/s profile is at 4.1 s (float division
/// made it 4.099999999 s once), and at 100/s every 10 ms bucket holds exactly one arrival.
#[test]
fn uniform_arrivals_on_a_profile_are_exact_to_the_nanosecond() {
    let server = "concurrency = 100\nservice = { dist = \"constant\", value = \"1ms\" }";
    let flat = scenario(&open(
        "profile = [[\"0s\", 10], [\"100s\", 10]]\nprocess = \"uniform\"\nend = \"4150ms\"",
        server,
        "max_attempts = 1",
    ));
    let m = run(&flat, 0);
    assert_eq!(m.entry().requests, 42);
    // The last arrival at 4.1 s, then 5 + 1 + 5 ms.
    assert_eq!(m.completion.0, ms(4_100 + 11).0);
    let spike = scenario(
        &open(
            "profile = [[\"0s\", 100], [\"60s\", 100], [\"60s\", 400], [\"70s\", 400], \
             [\"70s\", 100]]\nprocess = \"uniform\"\nend = \"3s\"",
            server,
            "max_attempts = 1",
        )
        .replace("bucket = \"1s\"", "bucket = \"10ms\""),
    );
    let m = run(&spike, 0);
    let firsts = first_attempts(&m);
    assert_eq!(&firsts[..300], &[1; 300][..]);
    // After a step at 4.4 s: the first piece's 12.5/s x 4.4 s sums to 55.00000000000001 in
    // floats; arrival 56 is still at 4.41 s exactly, one per 10 ms bucket.
    let step = scenario(
        &open(
            "profile = [[\"0s\", 12.5], [\"4.4s\", 12.5], [\"4.4s\", 100]]\n\
             process = \"uniform\"\nend = \"4.5s\"",
            server,
            "max_attempts = 1",
        )
        .replace("bucket = \"1s\"", "bucket = \"10ms\""),
    );
    let firsts = first_attempts(&run(&step, 0));
    assert_eq!(&firsts[440..450], &[1; 10][..]);
}

/// A flat piece entered after a fractional number of arrivals: 0.5/s for 1 s (half an
/// arrival), then 1.1/s. Arrival k is where 0.5 + 1.1 (t - 1 s) = k: arrival 17 at exactly
/// 16 s, so `end = 16s` excludes it (17 requests: arrivals 0..=16), and arrival 28 at 26 s.
/// Float division (16.5 / 1.1 = 14.999999999999998) put arrival 17 at 15.999999999 s once.
#[test]
fn uniform_arrivals_after_a_fractional_step_or_on_a_ramp_land_on_their_nanosecond() {
    let server = "concurrency = 100\nservice = { dist = \"constant\", value = \"1ms\" }";
    let profile = "profile = [[\"0s\", 0.5], [\"1s\", 0.5], [\"1s\", 1.1]]\nprocess = \"uniform\"";
    let short = scenario(&open(
        &format!("{profile}\nend = \"16s\""),
        server,
        "max_attempts = 1",
    ));
    assert_eq!(run(&short, 0).entry().requests, 17);
    let long = scenario(&open(
        &format!("{profile}\nend = \"26000000001ns\""),
        server,
        "max_attempts = 1",
    ));
    let m = run(&long, 0);
    assert_eq!(m.entry().requests, 29);
    // The last arrival (28) at 26 s, then 5 + 1 + 5 ms.
    assert_eq!(m.completion.0, ms(26_000 + 11).0);
    // On a ramp the instant is irrational, and rounded down even just below a whole
    // nanosecond: 0 -> 137/s over 10 s puts arrival 548 at sqrt(548 x 20 / 137) =
    // 8.9442719099992 s, before an `end` of 8 944 271 910 ns (549 requests); 10/s down to 0
    // over [0, 1 s], nothing to 2 s, then up to 10/s at 3 s puts arrival 9 at
    // 2 + sqrt(0.8) = 2.89442719099992 s, before an `end` of 2 894 427 191 ns (10 requests).
    // Each came out 1 ns late once (549 -> 548, 10 -> 9).
    let ramp = |profile: &str, end: &str| {
        let s = scenario(&open(
            &format!("profile = {profile}\nprocess = \"uniform\"\nend = \"{end}\""),
            server,
            "max_attempts = 1",
        ));
        run(&s, 0).entry().requests
    };
    assert_eq!(ramp("[[\"0s\", 0], [\"10s\", 137]]", "8944271910ns"), 549);
    assert_eq!(
        ramp(
            "[[\"0s\", 10], [\"1s\", 0], [\"2s\", 0], [\"3s\", 10]]",
            "2894427191ns"
        ),
        10
    );
}

/// Two populations on one server that is down throughout: the compliant clients make 3
/// attempts each, the legacy ones (overriding `max_attempts`) 1, and their counts are kept
/// apart.
#[test]
fn population_overrides_apply_to_their_own_requests_only() {
    let text = r#"
name = "mixed"
[[clients]]
name = "compliant"
count = 10
[[clients]]
name = "legacy"
count = 5
retry = { max_attempts = 1 }
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 10
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "1h"
[retry]
max_attempts = 3
[[strategy]]
name = "s"
base = "100ms"
cap = "100ms"
"#;
    let s = scenario(text);
    let m = run(&s, 0);
    let (c, l) = (&m.populations[0], &m.populations[1]);
    assert_eq!((c.requests, c.calls, c.gave_up), (10, 30, 10));
    assert_eq!((l.requests, l.calls, l.gave_up), (5, 5, 5));
    assert_eq!(m.entry().calls, 35);
    // A compliant request: 503 at 10 ms back at 20, +100, second at 130... third answered
    // at 2 x 120 + 20 = 260 ms. A legacy one gives up at its first 503, 20 ms.
    for r in &m.requests {
        let expected = if r.population == 0 { ms(260) } else { ms(20) };
        assert_eq!(r.latency, Some(expected), "{r:?}");
        assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::Attempts));
    }
}

/// Clients that ignore Retry-After retry on their own ladder; the others wait the hint.
#[test]
fn ignoring_retry_after_is_a_population_override() {
    let text = r#"
name = "hints"
[[clients]]
name = "honors"
count = 1
[[clients]]
name = "ignores"
count = 1
retry = { retry_after = { honor = false } }
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 10
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "3s"
retry_after = "3s"
[retry]
max_attempts = 10
[[strategy]]
name = "s"
base = "100ms"
cap = "100ms"
multiplier = 1.0
"#;
    let s = scenario(text);
    let m = run(&s, 0);
    let honors = m.requests.iter().find(|r| r.population == 0).unwrap();
    let ignores = m.requests.iter().find(|r| r.population == 1).unwrap();
    // Honoring: 503 back at 20 ms, waits 3 s, arrives at 3.03 s, served: 3.05 s, 2 calls.
    assert_eq!((honors.attempts, honors.latency), (2, Some(ms(3_050))));
    // Ignoring: a retry every 120 ms until one arrives at or after 3 s; 10 attempts end
    // before that (the 10th arrives at 10 + 9 x 120 = 1090 ms): it gives up.
    assert_eq!(ignores.attempts, 10);
    assert_eq!(ignores.outcome, Outcome::GaveUp(GiveUpReason::Attempts));
    assert_eq!(m.populations[1].calls, 10);
}

/// A population with its own budget gets its own instance: the legacy population's
/// exhausted quota does not refuse the other population's retries.
#[test]
fn a_population_budget_is_its_own_instance() {
    let text = r#"
name = "budgets"
[[clients]]
name = "a"
count = 1
[[clients]]
name = "b"
count = 1
retry = { budget = { kind = "quota", capacity = 5, retry_cost = 5, scope = "global" } }
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 10
service = { dist = "constant", value = "1ms" }
[[server.outages]]
start = "0s"
end = "1h"
[retry]
max_attempts = 4
budget = { kind = "quota", capacity = 10, retry_cost = 5, scope = "global" }
[[strategy]]
name = "s"
base = "10ms"
cap = "10ms"
"#;
    let s = scenario(text);
    let m = run(&s, 0);
    // a: 10 units = 2 retries, then refused: 3 calls. b: 5 units = 1 retry: 2 calls.
    assert_eq!(m.populations[0].calls, 3);
    assert_eq!(m.populations[1].calls, 2);
    assert!(
        m.requests
            .iter()
            .all(|r| r.outcome == Outcome::GaveUp(GiveUpReason::Budget))
    );
}

/// Trace arrivals replay the file's times; every request belongs to the trace population.
#[test]
fn a_trace_replays_its_arrival_times() {
    let ws = crate::common::Workspace::new();
    std::fs::create_dir(ws.path().join("data")).unwrap();
    ws.file("data/a.csv", "t_s\n0\n0.5\n0.5\n1.25\n");
    let text = r#"
name = "trace"
[[clients]]
name = "replay"
trace = "data/a.csv"
[network]
latency = { dist = "constant", value = "0s" }
[server]
concurrency = 10
service = { dist = "constant", value = "100ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
[metrics]
bucket = "250ms"
"#;
    let path = ws.file("trace.toml", text);
    let file = herdsim::scenario::sweep::load_str(path.to_str().unwrap(), text).expect("valid");
    let m = run(&file.points[0].scenario, 0);
    assert_eq!(m.entry().requests, 4);
    let firsts = first_attempts(&m);
    assert_eq!(&firsts[..6], &[1, 0, 2, 0, 0, 1]);
    assert_eq!(m.completion.0, ms(1_350).0);
}

/// A trace is a list of logical requests: rows at or after `time_limit` never start but
/// still end, as `time_limit`, like a closed client's later requests; an open process's
/// arrivals simply end with the run.
#[test]
fn trace_rows_past_the_time_limit_end_as_time_limit() {
    let ws = crate::common::Workspace::new();
    ws.file(
        "t.csv",
        "t_s
0.5
1.0
1.5
",
    );
    let text = r#"
name = "cut"
time_limit = "1s"
[[clients]]
name = "replay"
trace = "t.csv"
[[clients]]
name = "open"
rate = 10
process = "uniform"
end = "2s"
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 10
service = { dist = "constant", value = "20ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
[metrics]
bucket = "100ms"
"#;
    let path = ws.file("cut.toml", text);
    let file = herdsim::scenario::sweep::load_str(path.to_str().unwrap(), text).expect("valid");
    let m = run(&file.points[0].scenario, 0);
    assert!(m.cut_short);
    let trace: Vec<_> = m.requests.iter().filter(|r| r.population == 0).collect();
    assert_eq!(trace.len(), 3, "{trace:?}");
    assert_eq!(m.populations[0].requests, 3);
    assert_eq!(m.populations[0].succeeded, 1);
    assert_eq!(m.populations[0].gave_up, 2);
    for r in &trace[1..] {
        assert_eq!(r.outcome, Outcome::GaveUp(GiveUpReason::TimeLimit));
        assert_eq!((r.attempts, r.latency), (0, None), "never started: {r:?}");
    }
    assert_eq!(
        trace.iter().map(|r| r.request).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    // Uniform 10/s from 0: arrivals at 0, 0.1, ..., 0.9 s, each done in 40 ms.
    assert_eq!(m.populations[1].requests, 10);
    assert_eq!(m.populations[1].succeeded, 10);
}

/// Uniform 1/s from 0 with a 5.5 s limit: arrivals at 0, 1, ..., 5 s, each done in 20 ms.
/// The arrival due at 6 s is pending when the run stops, but it is no request of the run:
/// nothing was cut, so the run is not "cut short" (no warning).
#[test]
fn an_arrival_due_after_the_time_limit_does_not_cut_the_run_short() {
    let s = scenario(
        &open(
            "rate = 1\nprocess = \"uniform\"\nend = \"100s\"",
            "concurrency = 1\nservice = { dist = \"constant\", value = \"10ms\" }",
            "max_attempts = 1",
        )
        .replace(
            "name = \"open\"",
            "name = \"open\"\ntime_limit = \"5500ms\"",
        ),
    );
    let m = run(&s, 0);
    assert_eq!(m.entry().requests, 6);
    assert_eq!(m.entry().succeeded, 6);
    assert_eq!(m.completion.0, ms(5_020).0);
    assert!(!m.cut_short);
}

/// Under common random numbers two identical strategies face the same arrivals, latencies,
/// service times and jitter: every output row is the same but for the name.
#[test]
fn identical_strategies_give_identical_rows() {
    let text = r#"
name = "twins"
replications = 3
[[clients]]
name = "open"
rate = 400
end = "5s"
[[clients]]
name = "herd"
count = 300
start_spread = "1s"
[network]
latency = { dist = "normal", mean = "10ms", sd = "3ms" }
[server]
concurrency = 4
queue = 20
service = { dist = "exponential", mean = "10ms" }
client_error_rate = 0.05
[[server.outages]]
start = "1s"
end = "2s"
[retry]
max_attempts = 5
timeout = "300ms"
[[strategy]]
name = "one"
base = "50ms"
cap = "1s"
jitter = "full"
[[strategy]]
name = "two"
base = "50ms"
cap = "1s"
jitter = "full"
"#;
    let file = herdsim::scenario::sweep::load_str("twins.toml", text).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    let csv = |bytes: Vec<u8>| -> Vec<Vec<String>> {
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').skip(1).map(String::from).collect())
            .collect()
    };
    let summary = csv(herdsim::report::csv::summary_csv(&file.axes, &result, 1).unwrap());
    assert_eq!(summary[0], summary[1]);
    let populations = csv(herdsim::report::csv::populations_csv(&file.axes, &result).unwrap());
    assert_eq!(populations[0], populations[2]);
    assert_eq!(populations[1], populations[3]);
    // The paired differences are exactly zero.
    assert!(
        result.points[0]
            .paired
            .iter()
            .all(|r| r.mean_diff == 0.0 && r.ci95 == 0.0)
    );
}

/// Different strategies of one replication draw the same arrivals: the same requests per
/// replication and the same first attempts per bucket.
#[test]
fn every_strategy_faces_the_same_arrivals() {
    let text = r#"
name = "crn"
[[clients]]
name = "open"
rate = 200
end = "10s"
[network]
latency = { dist = "normal", mean = "10ms", sd = "3ms" }
[server]
concurrency = 1
service = { dist = "exponential", mean = "10ms" }
[retry]
max_attempts = 3
[[strategy]]
name = "none"
base = "10ms"
cap = "10ms"
[[strategy]]
name = "full"
base = "50ms"
cap = "1s"
jitter = "full"
"#;
    let s = scenario(text);
    let (a, b) = (run(&s, 0), run(&s, 1));
    assert_ne!(a.entry().calls, b.entry().calls, "the strategies differ");
    assert_eq!(a.entry().requests, b.entry().requests);
    // Per bucket, up to the last arrival (the series run on while requests finish).
    let firsts = |m: &herdsim::metrics::RunMetrics| -> Vec<u32> {
        let mut f: Vec<u32> = m.populations[0]
            .timeline
            .iter()
            .map(|b| b.first_attempts)
            .collect();
        while f.last() == Some(&0) {
            f.pop();
        }
        f
    };
    assert_eq!(firsts(&a), firsts(&b));
}

/// When no request ever started (the time limit comes first), latency has no value: the
/// summary's and the populations' latency cells are empty, not 0.
#[test]
fn latency_cells_are_empty_when_no_request_started() {
    let text = r#"
name = "late"
time_limit = "1s"
[clients]
count = 2
start = "2s"
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "20ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
"#;
    let file = herdsim::scenario::sweep::load_str("late.toml", text).expect("valid");
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    let s = &result.points[0].strategies[0].summary;
    assert_eq!(
        (s.gave_up, s.latency_s, s.latency_mean_s),
        (2.0, None, None)
    );
    let columns = herdsim::report::csv::SUMMARY_COLUMNS;
    let values = herdsim::report::csv::summary_values(s, 1);
    for name in [
        "latency_p50_s",
        "latency_p95_s",
        "latency_p99_s",
        "latency_mean_s",
    ] {
        let i = columns.iter().position(|c| *c == name).expect(name);
        assert_eq!(values[i], "", "{name}");
    }
    let populations = herdsim::report::csv::populations_csv(&[], &result).unwrap();
    assert_eq!(
        String::from_utf8(populations).unwrap().lines().nth(1),
        Some("s,clients,2,0,0,2,0,,")
    );
}

/// An open population whose arrivals start after the time limit makes no request: calls per
/// request has no value there, an empty cell (as latency without samples), not 0. With a
/// closed client beside it (1 request, 1 call) only its own row is empty; alone, the
/// summary's and services.csv's amplification are empty too (`null` in summary.json).
#[test]
fn amplification_is_empty_for_a_population_without_requests() {
    let text = |closed: bool| {
        format!(
            r#"
name = "late"
time_limit = "1s"
{}
[[clients]]
name = "web"
rate = 10
start = "2s"
end = "3s"
[network]
latency = {{ dist = "constant", value = "10ms" }}
[server]
concurrency = 1
service = {{ dist = "constant", value = "20ms" }}
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
"#,
            if closed {
                "[[clients]]\nname = \"herd\"\ncount = 1"
            } else {
                ""
            }
        )
    };
    let run_text = |t: &str| {
        let file = herdsim::scenario::sweep::load_str("late.toml", t).expect("valid");
        let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
        (file, result)
    };
    let lines = |bytes: Vec<u8>| -> Vec<String> {
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .skip(1)
            .map(String::from)
            .collect()
    };

    let (_, result) = run_text(&text(true));
    let populations = herdsim::report::csv::populations_csv(&[], &result).unwrap();
    assert_eq!(
        lines(populations),
        ["s,herd,1,1,1,0,1,0.04,0.04", "s,web,0,0,0,0,,,"]
    );
    assert_eq!(
        result.points[0].strategies[0].summary.amplification,
        Some(1.0)
    );

    let (file, result) = run_text(&text(false));
    let s = &result.points[0].strategies[0].summary;
    assert_eq!((s.requests, s.amplification), (0.0, None));
    let columns = herdsim::report::csv::SUMMARY_COLUMNS;
    let i = columns.iter().position(|c| *c == "amplification").unwrap();
    assert_eq!(herdsim::report::csv::summary_values(s, 1)[i], "");
    let services = herdsim::report::csv::services_csv(&[], &result).unwrap();
    assert_eq!(lines(services), ["s,server,0,0,0,0,0,0,0,,0,0,0,0,0"]);
    let json = herdsim::report::json::summary_json(&file, &result, 1, &[]).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["rows"][0]["amplification"], serde_json::Value::Null);
}

/// Poisson arrivals: the count over the run is Poisson(rate x duration); with 20 000
/// expected, four standard deviations are 566.
#[test]
fn poisson_arrival_counts_match_theory() {
    let s = scenario(&open(
        "rate = 1000\nend = \"20s\"",
        "concurrency = 100\nservice = { dist = \"constant\", value = \"1ms\" }",
        "max_attempts = 1",
    ));
    let n = run(&s, 0).entry().requests as f64;
    assert!((n - 20_000.0).abs() < 566.0, "{n}");
    // A profile ramping 0 -> 2000/s over 10 s: 10 000 expected, 4 sd = 400.
    let s = scenario(&open(
        "profile = [[\"0s\", 0], [\"10s\", 2000]]\nend = \"10s\"",
        "concurrency = 100\nservice = { dist = \"constant\", value = \"1ms\" }",
        "max_attempts = 1",
    ));
    let m = run(&s, 0);
    let n = m.entry().requests as f64;
    assert!((n - 10_000.0).abs() < 400.0, "{n}");
    // The ramp: the second half holds three times the first half (7 500 vs 2 500).
    let t = &m.entry().timeline;
    let first: u32 = t[..5].iter().map(|b| b.first_attempts).sum();
    let second: u32 = t[5..10].iter().map(|b| b.first_attempts).sum();
    assert!((first as f64 - 2_500.0).abs() < 200.0, "{first}");
    assert!((second as f64 - 7_500.0).abs() < 350.0, "{second}");
}

/// An open Poisson stream (λ = 50/s) into one exponential server (μ = 100/s) with an
/// unbounded queue and no network delay is M/M/1: the sojourn time is Exp(μ - λ), mean
/// 20 ms, median 20 ms x ln 2, p99 20 ms x ln 100. Over ~100 000 requests the mean's
/// standard error is about 0.2% (autocorrelation included); allow 3%.
#[test]
fn mm1_sojourn_time_is_exponential_with_rate_mu_minus_lambda() {
    let text = r#"
name = "mm1"
seed = 3
[[clients]]
name = "web"
rate = 50
end = "2000s"
[network]
latency = { dist = "constant", value = "0s" }
[server]
concurrency = 1
queue = 1000000
service = { dist = "exponential", mean = "10ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
[metrics]
bucket = "10s"
"#;
    let file = herdsim::scenario::sweep::load_str("mm1.toml", text).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    let s = &result.points[0].strategies[0].summary;
    let (mean, latency) = (s.latency_mean_s.unwrap(), s.latency_s.unwrap());
    let close = |got: f64, want: f64, tol: f64| (got / want - 1.0).abs() < tol;
    assert!(close(mean, 0.020, 0.03), "mean {}", mean);
    assert!(
        close(latency[0], 0.020 * 2f64.ln(), 0.04),
        "p50 {}",
        latency[0]
    );
    assert!(
        close(latency[2], 0.020 * 100f64.ln(), 0.06),
        "p99 {}",
        latency[2]
    );
}

/// Requests in flight, not arrivals, decide memory: 60 000 arrivals over a minute never
/// hold more than a few dozen request slots.
#[test]
fn open_work_holds_only_the_requests_in_flight() {
    let s = scenario(&open(
        "rate = 1000\nend = \"60s\"",
        "concurrency = 50\nservice = { dist = \"exponential\", mean = \"10ms\" }",
        "max_attempts = 3\ntimeout = \"1s\"",
    ));
    let m = run(&s, 0);
    assert!(m.entry().requests > 55_000);
    assert!(m.peak_requests < 200, "{}", m.peak_requests);
}

/// The attempt sample: every attempt of at most 2 000 client requests, the same clients for
/// every strategy, each with its send time and outcome.
#[test]
fn the_attempt_sample_records_every_attempt_of_a_fixed_set_of_clients() {
    let text = crate::common::tiny_with("count = 50", "count = 5000");
    let s = scenario(&text);
    let seed = herdsim::engine::RunSeed {
        seed: s.seed,
        replication: 0,
        point: 0,
    };
    let sample = |strategy| {
        herdsim::engine::Simulation::new(&s, strategy, seed, true)
            .sample_attempts()
            .run()
    };
    let (a, b) = (sample(0), sample(1));
    let clients = |m: &herdsim::metrics::RunMetrics| {
        let mut c: Vec<u32> = m.attempts.iter().map(|r| r.client).collect();
        c.sort();
        c.dedup();
        c
    };
    // 5 000 clients, a budget of 2 000: every third client.
    assert_eq!(clients(&a), (0..5000).step_by(3).collect::<Vec<_>>());
    assert_eq!(clients(&a), clients(&b));
    // Each sampled request's attempts are numbered 1..=n, and n is its record's attempts.
    for r in a.requests.iter().filter(|r| r.client % 3 == 0) {
        let mut n: Vec<u32> = a
            .attempts
            .iter()
            .filter(|x| x.client == r.client)
            .map(|x| x.attempt)
            .collect();
        n.sort();
        assert_eq!(
            n,
            (1..=r.attempts).collect::<Vec<_>>(),
            "client {}",
            r.client
        );
    }
    // The outage [0, 1 s) refuses every attempt sent before it ends (10 ms latency).
    use herdsim::metrics::AttemptOutcome;
    assert!(
        a.attempts
            .iter()
            .filter(|x| x.sent.0 < 990_000_000)
            .all(|x| x.outcome == AttemptOutcome::Rejected)
    );
    assert!(
        a.attempts
            .iter()
            .any(|x| x.outcome == AttemptOutcome::Served)
    );
}

/// Think pauses are common random numbers: each client's pause before each request is the
/// same under every strategy, though the strategies end requests in different orders (with
/// one slot and no queue, client 1's first attempt is refused: "one-shot" gives up at once,
/// "retry" succeeds 20 ms later, after client 0).
#[test]
fn think_pauses_are_the_same_for_every_strategy() {
    let s = scenario(
        r#"
name = "think"
[clients]
count = 2
requests = 3
think = { dist = "exponential", mean = "100ms" }
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "10ms" }
[retry]
base = "20ms"
cap = "20ms"
multiplier = 1.0
[[strategy]]
name = "one-shot"
max_attempts = 1
[[strategy]]
name = "retry"
max_attempts = 2
"#,
    );
    let seed = herdsim::engine::RunSeed {
        seed: s.seed,
        replication: 0,
        point: 0,
    };
    // (client, request) -> the pause between the request's end and the next one's start.
    let pauses = |strategy| {
        let m = herdsim::engine::Simulation::new(&s, strategy, seed, true).run();
        let start = |client: u32, request: u32| {
            m.requests
                .iter()
                .find(|r| r.client == client && r.request == request)
                .map(|r| r.start)
                .expect("every request is recorded")
        };
        let mut out = Vec::new();
        for r in m.requests.iter().filter(|r| r.request < 2) {
            let end = r.start + r.latency.expect("started");
            let next = start(r.client, r.request + 1);
            out.push(((r.client, r.request), next - end));
        }
        out.sort();
        (out, m.requests)
    };
    let (one_shot, one_shot_requests) = pauses(0);
    let (retry, retry_requests) = pauses(1);
    assert_eq!(one_shot.len(), 4);
    assert_eq!(one_shot, retry);
    // The strategies do end requests differently (else the test would prove nothing).
    let outcomes =
        |r: &[herdsim::metrics::RequestRecord]| r.iter().map(|x| x.outcome).collect::<Vec<_>>();
    assert_ne!(outcomes(&one_shot_requests), outcomes(&retry_requests));
}
