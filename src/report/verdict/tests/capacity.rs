//! The capacity line and the peak column: what the capacity figure leaves out, the multiple
//! of it each line gives (or the rate, when a multiple would read as nothing), the whole
//! run's peak when no outage is seen to end, and in a graph the tightest tier's multiple.

use super::*;

/// Ten clients 1 ms away and strategy `a`, for a server section to follow.
const ONE_STRATEGY: &str = r#"
name = "v"
[clients]
count = 10
[network]
latency = { dist = "constant", value = "1ms" }
[retry]
max_attempts = 3
[[strategy]]
name = "a"
base = "1ms"
cap = "1ms"
"#;

/// The capacity line says what its figure leaves out: the slowdown under load, and for an
/// entry service that calls others, the slots held through those calls.
#[test]
fn the_capacity_note_says_what_the_figure_leaves_out() {
    let base = ONE_STRATEGY;
    let slow = format!(
        "{base}[server]\nconcurrency = 4\nservice = {{ dist = \"constant\", value = \"20ms\" }}\nslowdown = [[0, 1.0], [8, 2.0]]\n"
    );
    let (rps, note) = capacity(&scenario_of(&slow));
    assert_eq!(rps, Some(200.0));
    assert_eq!(
        note,
        "4 slots / 20ms mean service, unloaded: it slows under load"
    );
    let graph = format!(
        "{base}[[service]]\nname = \"api\"\nconcurrency = 4\nservice = {{ dist = \"constant\", value = \"20ms\" }}\ncalls = [\"db\"]\n\
         [[service]]\nname = \"db\"\nconcurrency = 2\nservice = {{ dist = \"constant\", value = \"5ms\" }}\n"
    );
    let (_, note) = capacity(&scenario_of(&graph));
    assert_eq!(
        note,
        "api, the entry service: 4 slots / 20ms mean service, its own work only: a slot is also held through its downstream calls"
    );
}

#[test]
fn the_verdict_of_a_point_lines_up_ranks_shares_and_capacity() {
    let text = r#"
name = "v"
replications = 2
[clients]
count = 10
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 4
service = { dist = "constant", value = "20ms" }
[retry]
max_attempts = 3
[[strategy]]
name = "a"
base = "1ms"
cap = "1ms"
[[strategy]]
name = "b"
base = "1ms"
cap = "1ms"
"#;
    let scenario = scenario_of(text);

    let point = PointResult {
        labels: Vec::new(),
        strategies: vec![
            result_of(summary("a", 208.0, 1.0, (10_000.0, 0.0))),
            result_of(summary("b", 30_000.0, 9.0, (0.0, 0.0))),
        ],
        paired: Vec::new(),
        // a gave up on everything, b on nothing.
        loses_more: vec![vec![false, true], vec![false, false]],
    };
    let v = verdict(&point, &scenario);
    assert_eq!(v.capacity_rps, Some(200.0), "4 slots / 20 ms");
    assert_eq!(v.bucket, "100 ms");
    assert_eq!(v.leading(), [1]);
    assert_eq!(v.rank_of(1), Some(1));
    let first = &v.lines[0];
    assert_eq!(first.strategy, "b");
    assert_eq!(first.success_share, Some(1.0));
    assert_eq!(first.work, 3.0);
    assert_eq!(first.recovery_peak_x, Some(15.0), "3 000 req/s / 200");
    // No outage: the peak is the whole run's, called so.
    assert!(!v.outage && !first.outage);
    assert_eq!(
        cells(first),
        [
            "succeeded 100%",
            "work 3.00x",
            "completion 9 s",
            "peak 15.0x capacity"
        ]
    );
    let after = Line {
        outage: true,
        ..first.clone()
    };
    assert_eq!(cells(&after)[3], "recovery peak 15.0x capacity");
    // Runs all over before the outage ended met no server coming back: not "0x".
    let over = Line {
        outage: true,
        over_before_recovery: true,
        recovery_peak_rps: 0.0,
        recovery_peak_x: Some(0.0),
        ..first.clone()
    };
    assert_eq!(
        cells(&over)[3],
        "recovery peak none (its runs were over before the outage ended)"
    );
    let tiny = Line {
        recovery_peak_rps: 2954.0,
        recovery_peak_x: Some(2954.0 / 1e8),
        peak_as_rate: true,
        ..first.clone()
    };
    assert_eq!(cells(&tiny)[3], "peak 2954 req/s (0.000030x capacity)");
    // Calls to a fallback server are load the primary's work leaves out: shown beside it.
    let fallback = Line {
        fallback_work: 0.68,
        ..first.clone()
    };
    assert_eq!(cells(&fallback)[1], "work 3.00x + 0.68x fallback");
    assert_eq!(first.fallback_work, 0.0);
    // In a service graph, the calls of every tier beside the entry service's.
    let graph = Line {
        all_services_work: Some(31.0),
        ..first.clone()
    };
    assert_eq!(cells(&graph)[1], "work 3.00x (31.0x over all services)");
    assert_eq!(first.all_services_work, None);
    // 1x is one call per request, not a minimum: the rule must not say otherwise.
    assert!(
        v.rule().contains(
            "work (calls per request: 1x = one call each, less when requests ended without one)"
        ),
        "{}",
        v.rule()
    );
    assert!(
        v.lines[1]
            .trade
            .as_deref()
            .unwrap()
            .starts_with("a: fastest")
    );
    assert!(v.lines[0].trade.is_none());
}

#[test]
fn an_outage_that_outlasts_the_run_leaves_the_whole_runs_peak_and_no_paired_recovery_peak() {
    // The outage ends at 1h, after time_limit: no bucket starts after it, every recovery
    // peak is 0, and the verdict speaks of the whole run's peak (as without an outage).
    let text = r#"
name = "v"
replications = 2
time_limit = "10m"
[clients]
count = 10
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 4
service = { dist = "constant", value = "20ms" }
[[server.outages]]
start = "0s"
end = "1h"
kind = "errors"
error_rate = 0.5
[retry]
max_attempts = 3
base = "1ms"
cap = "1ms"
[[strategy]]
name = "a"
[[strategy]]
name = "b"
"#;
    let scenario = scenario_of(text);
    assert!(scenario.outage_outlasts_run());
    assert_eq!(scenario.recovery_seen(), None);
    let result = |mut s: StrategySummary| {
        s.recovery_peak_rps = stat(0.0, 0.0);
        result_of(s)
    };
    let row = |metric, mean_diff| PairedRow {
        strategy: "b".into(),
        baseline: "a".into(),
        metric,
        mean_diff,
        ci95: 0.0,
        ratio: Some(1.0),
        baseline_mean: 1.0,
    };
    let point = PointResult {
        labels: Vec::new(),
        strategies: vec![
            result(summary("a", 20_000.0, 9.0, (0.0, 0.0))),
            result(summary("b", 30_000.0, 9.0, (0.0, 0.0))),
        ],
        paired: vec![row("calls", 10_000.0), row("recovery_peak_rps", 0.0)],
        loses_more: vec![vec![false; 2]; 2],
    };
    let v = verdict(&point, &scenario);
    assert!(!v.outage && v.outage_outlasts_run);
    assert!(!v.lines[0].peak_as_rate, "100x: a multiple reads well");
    assert_eq!(v.lines[0].strategy, "a");
    assert_eq!(
        v.lines[0].recovery_peak_x,
        Some(100.0),
        "20 000 req/s / 200"
    );
    assert_eq!(cells(&v.lines[0])[3], "peak 100x capacity");
    assert_eq!(v.paired, ["b vs a: more calls (+0%)"]);
    // One peak far below the capacity: every line gives its rate, so the column reads one
    // way.
    let mut point = point;
    point.strategies[0].summary.peak_rps = stat(1.0, 0.0);
    let v = verdict(&point, &scenario);
    assert!(v.lines.iter().all(|l| l.peak_as_rate));
    let peaks: Vec<String> = v.lines.iter().map(|l| cells(l)[3].clone()).collect();
    assert_eq!(
        peaks,
        [
            "peak 1 req/s (0.0050x capacity)",
            "peak 30\u{2009}000 req/s (150x capacity)"
        ]
    );
}

/// In a graph whose downstream service saturates first, each peak is also given as a
/// multiple of what that service can take (helper-94: "0.028x capacity" read as headroom
/// while the db took 3.2 times its own). The api takes 200 000 req/s (400 slots / 2 ms);
/// the db, called twice per request, 1 000 (40 slots / 20 ms = 2 000 req/s, over 2).
#[test]
fn a_graph_peak_is_also_a_multiple_of_the_tightest_tier() {
    let text = ONE_STRATEGY.to_string()
        + r#"[[strategy]]
name = "b"
base = "1ms"
cap = "1ms"
[[service]]
name = "api"
concurrency = 400
service = { dist = "constant", value = "2ms" }
calls = ["db", "db"]
[[service]]
name = "db"
concurrency = 40
service = { dist = "constant", value = "20ms" }
"#;
    let scenario = scenario_of(&text);
    let point = |peaks: [f64; 2]| PointResult {
        labels: Vec::new(),
        strategies: vec![
            // The fixture's recovery peak is a tenth of its calls.
            result_of(summary("a", peaks[0] * 10.0, 9.0, (0.0, 0.0))),
            result_of(summary("b", peaks[1] * 10.0, 9.0, (0.0, 0.0))),
        ],
        paired: Vec::new(),
        loses_more: vec![vec![false; 2]; 2],
    };
    let v = verdict(&point([3_000.0, 4_000.0]), &scenario);
    assert_eq!(v.lines[0].tightest_x, Some(("db".to_string(), 3.0)));
    let peaks: Vec<String> = v.lines.iter().map(|l| cells(l)[3].clone()).collect();
    assert_eq!(
        peaks,
        [
            "peak 0.015x capacity (3.00x db's)",
            "peak 0.020x capacity (4.00x db's)"
        ]
    );
    // A line far below the entry's capacity gives every peak as a rate.
    let v = verdict(&point([3_000.0, 1_000.0]), &scenario);
    let peaks: Vec<String> = v.lines.iter().map(|l| cells(l)[3].clone()).collect();
    assert_eq!(
        peaks,
        [
            // b, lighter, ranks first.
            "peak 1000 req/s (0.0050x capacity, 1.00x db's)",
            "peak 3000 req/s (0.015x capacity, 3.00x db's)"
        ]
    );
    // One service: no second multiple.
    let single = scenario_of(&text.replace("calls = [\"db\", \"db\"]\n", "").replace(
        "[[service]]\nname = \"db\"\nconcurrency = 40\nservice = { dist = \"constant\", value = \"20ms\" }\n",
        "",
    ));
    let v = verdict(&point([3_000.0, 4_000.0]), &single);
    assert_eq!(v.lines[0].tightest_x, None);
    assert_eq!(cells(&v.lines[0])[3], "peak 0.015x capacity");
}
