//! Issue 13's regression tests: each documented limit works at both ends, every accepted
//! input runs in bounded memory or is refused up front (exit 2, nothing written), and the
//! output folder is never a mix of two runs.

use crate::common::{self, Workspace, herdsim};

/// Two clients against a limiter that grants one token, ever: the first client succeeds,
/// the second meets only 429s and climbs the 429 ladder until it escalates.
fn ladder(max_retries: &str) -> String {
    format!(
        r#"
name = "ladder"
[clients]
count = 2
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
concurrency = 1
service = {{ dist = "constant", value = "1ms" }}
[server.rate_limit]
rate = 1e-9
burst = 1
[retry]
max_attempts = 3
base = "1ms"
cap = "1ms"
[[strategy]]
name = "ladder"
rate_limit = {{ {max_retries}, default_wait = "1ms", max_wait = "1ms" }}
"#
    )
}

fn ladder_run(max_retries: &str) -> herdsim::metrics::RunMetrics {
    common::run(&common::scenario(&ladder(max_retries)), 0)
}

/// The request escalates at the 429 that exceeds the count: with the documented maximum
/// (65 535) that is the 65 536th. A `u16` counter that saturated at 65 535 never got there
/// and the client retried until the time limit (1 200 001 calls in an hour).
#[test]
fn the_429_ladder_escalates_at_both_ends_of_its_range() {
    let rate_limit = herdsim::model::outcome::GiveUpReason::RateLimitEscalation as usize;
    for (key, calls) in [
        ("max_retries = 65535", 1 + 65_536),
        ("max_retries = 65534", 1 + 65_535),
        ("max_retries = 0", 1 + 1),
        ("max_retries = 65535, escalate_after = 65535", 1 + 65_536),
        ("max_retries = 65535, escalate_after = 0", 1 + 1),
    ] {
        let m = ladder_run(key);
        assert_eq!(m.calls, calls, "{key}");
        assert_eq!(m.succeeded, 1, "{key}");
        assert_eq!(m.gave_up[rate_limit], 1, "{key}");
        assert!(!m.cut_short, "{key}");
    }
}

/// `max_attempts` at both ends: 1 attempt, and 65 535 (the transport counter is a `u16`).
#[test]
fn max_attempts_works_at_both_ends_of_its_range() {
    for attempts in [1u64, 65_535] {
        let text = common::exact_scenario(
            "1ns",
            "count = 1",
            "concurrency = 1\nservice = { dist = \"constant\", value = \"1ns\" }\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
            &format!("max_attempts = {attempts}\nbase = \"1ns\"\ncap = \"1ns\""),
            "[[strategy]]\nname = \"a\"",
        );
        let m = common::run(&common::scenario(&text), 0);
        assert_eq!(m.calls, attempts);
        let attempts_reason = herdsim::model::outcome::GiveUpReason::Attempts as usize;
        assert_eq!(m.gave_up[attempts_reason], 1);
    }
}

/// Retries that take no simulated time: zero latency and service, a `down` outage, a zero
/// backoff and many attempts. `time_limit` cannot stop a loop at one instant; before, this
/// grew the event queue by 24 bytes per event until it aborted (6 GB in 4 s at 1 000
/// clients). Now the run stops with a clear error, exit 2, and nothing is written.
pub const ZERO_LOOP: &str = r#"
name = "zeroloop"
[clients]
count = 100
[network]
latency = { dist = "constant", value = "0s" }
[server]
concurrency = 1
service = { dist = "constant", value = "0s" }
[[server.outages]]
start = "0s"
end = "1s"
[retry]
max_attempts = 65535
base = "0s"
cap = "0s"
[[strategy]]
name = "a"
"#;

#[test]
fn a_retry_loop_at_one_instant_is_stopped_with_a_clear_error() {
    let ws = Workspace::new();
    let path = ws.file("zeroloop.toml", ZERO_LOOP);
    let out = herdsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(ws.out())
        .arg("--no-charts")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("strategy[0]: simulated time stopped advancing: strategy \"a\" processed more than 1025600 events at t = 0 s"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot be stopped by time_limit"), "{stderr}");
    assert!(!ws.out().exists(), "nothing is written");
}

/// The same loop through the library: the run stops at the bound and says where.
#[test]
fn the_engine_marks_a_stalled_run() {
    let m = common::run(&common::scenario(ZERO_LOOP), 0);
    assert_eq!(m.stalled_at, Some(herdsim::time::SimTime::ZERO));
    assert_eq!(m.events, 1_000_000 + 256 * 100);
}
