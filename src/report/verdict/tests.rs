//! Unit tests of the parent module, kept apart so that the module reads as its code.

use super::*;
use crate::metrics::summary::StrategyResult;

fn stat(mean: f64, ci95: f64) -> Stat {
    Stat { mean, ci95 }
}

/// A strategy of 10 000 requests: (name, calls, completion, gave up ± ci).
fn summary(name: &str, calls: f64, completion: f64, gave_up: (f64, f64)) -> StrategySummary {
    StrategySummary {
        strategy: name.into(),
        replications: 5,
        requests: 10_000.0,
        calls: stat(calls, calls * 0.001),
        completion_s: stat(completion, 0.05),
        peak_rps: stat(calls, 0.0),
        recovery_peak_rps: stat(calls / 10.0, 0.0),
        succeeded: 10_000.0 - gave_up.0,
        gave_up: gave_up.0,
        gave_up_ci95: gave_up.1,
        latency_s: Some([completion / 2.0, completion * 0.9, completion * 0.95]),
        ..Default::default()
    }
}

/// The one scenario of `text` (no sweep).
fn scenario_of(text: &str) -> crate::model::Scenario {
    crate::scenario::sweep::load_str("v.toml", text)
        .unwrap()
        .points
        .remove(0)
        .scenario
}

/// A strategy's result holding only its summary (what the verdict reads).
fn result_of(summary: StrategySummary) -> StrategyResult {
    StrategyResult {
        summary,
        services: Vec::new(),
        populations: Vec::new(),
        timelines: Vec::new(),
        replicates: Vec::new(),
        requests: Vec::new(),
        attempts: Vec::new(),
    }
}

/// Who loses more than whom, stated by the summaries' give-up intervals: `a` loses more than
/// `b` when their intervals do not overlap (the paired judgement of independent strategies).
fn by_intervals(summaries: &[&StrategySummary]) -> Vec<Vec<bool>> {
    let gave_up = |s: &StrategySummary| Stat {
        mean: s.gave_up,
        ci95: s.gave_up_ci95,
    };
    summaries
        .iter()
        .map(|a| {
            summaries
                .iter()
                .map(|b| above(gave_up(a), gave_up(b)))
                .collect()
        })
        .collect()
}

fn names(summaries: &[StrategySummary]) -> Vec<String> {
    let refs: Vec<&StrategySummary> = summaries.iter().collect();
    rank(&refs, &by_intervals(&refs))
        .0
        .into_iter()
        .map(|i| summaries[i].strategy.clone())
        .collect()
}

#[test]
fn more_give_ups_never_rank_ahead_however_light_and_fast() {
    // The budgets case: the breaker gives up on everything, in one second and 208 calls.
    let s = vec![
        summary("no-budget", 80_671.0, 14.9, (17.6, 6.0)),
        summary("ratio", 11_000.0, 1.36, (10_000.0, 0.0)),
        summary("breaker", 208.0, 1.0, (10_000.0, 0.0)),
    ];
    assert_eq!(names(&s)[0], "no-budget");
    let refs: Vec<&StrategySummary> = s.iter().collect();
    let (_, loses) = rank(&refs, &by_intervals(&refs));
    assert_eq!(loses, [false, true, true]);
}

#[test]
fn give_ups_equal_within_the_interval_rank_by_work_then_completion() {
    let s = vec![
        // 30 ± 20 and 10 ± 15 overlap: equal losses, so work decides.
        summary("heavy", 90_000.0, 10.0, (30.0, 20.0)),
        summary("light", 70_000.0, 20.0, (10.0, 15.0)),
        // Same calls as light within the interval (70 000 ± 70), sooner done.
        summary("light-fast", 70_050.0, 12.0, (12.0, 15.0)),
        // Clearly more losses: last, however light.
        summary("lossy", 1_000.0, 1.0, (500.0, 20.0)),
    ];
    assert_eq!(names(&s), ["light-fast", "light", "heavy", "lossy"]);
}

#[test]
fn with_one_run_any_difference_in_give_ups_counts() {
    let s = vec![
        summary("a", 50_000.0, 5.0, (1.0, 0.0)),
        summary("b", 90_000.0, 9.0, (0.0, 0.0)),
    ];
    assert_eq!(names(&s), ["b", "a"]);
}

#[test]
fn ranking_is_total_even_when_overlaps_do_not_chain() {
    // a overlaps b, b overlaps c, but c loses more than a: a must come before c.
    let s = vec![
        summary("c", 10.0, 1.0, (100.0, 30.0)),
        summary("b", 20.0, 1.0, (60.0, 30.0)),
        summary("a", 30.0, 1.0, (20.0, 30.0)),
    ];
    let order = names(&s);
    let pos = |n: &str| order.iter().position(|o| o == n).unwrap();
    assert!(pos("a") < pos("c"), "{order:?}");
    assert_eq!(order.len(), 3);
}

#[test]
fn the_trade_sentence_says_what_lost_requests_bought() {
    let s = [
        summary("no-budget", 80_671.0, 14.9, (17.6, 6.0)),
        summary("breaker", 208.0, 1.0, (10_000.0, 0.0)),
        summary("ratio", 11_000.0, 1.36, (10_000.0, 0.0)),
    ];
    let refs: Vec<&StrategySummary> = s.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, true, &[]),
        "breaker: fastest, lightest, lowest recovery peak, lowest peak and lowest p99 \
             latency because it gave up on 100%"
    );
    assert_eq!(
        trade(&refs, 2, 0, true, &[]),
        "ratio: faster, lighter, lower recovery peak, lower peak and lower p99 latency than \
             no-budget because it gave up on 100%"
    );
    // Better on peaks only: no claim that giving up bought it.
    let q = [
        summary("equal", 75_000.0, 11.4, (0.0, 0.0)),
        StrategySummary {
            recovery_peak_rps: stat(10.0, 0.0),
            ..summary("full", 82_000.0, 15.0, (26.0, 5.0))
        },
    ];
    let refs: Vec<&StrategySummary> = q.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, true, &[]),
        "full: lowest recovery peak, but it gave up on 0.26%"
    );
    // Worse on everything: said so.
    let t = [
        summary("equal", 75_000.0, 11.4, (0.0, 0.0)),
        summary("no-jitter", 94_000.0, 33.0, (6_200.0, 50.0)),
    ];
    let refs: Vec<&StrategySummary> = t.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, true, &[]),
        "no-jitter: gave up on 62.0% and did no better than equal on any measure"
    );
}

#[test]
fn shares_and_multiples_read_without_false_rounding() {
    assert_eq!(percent(1.0), "100%");
    assert_eq!(percent(0.0), "0%");
    assert_eq!(percent(0.9974), "99.74%");
    assert_eq!(percent(0.0026), "0.26%");
    assert_eq!(percent(0.622), "62.2%");
    assert_eq!(percent(0.999_999), ">99.99%");
    assert_eq!(percent(0.000_001), "<0.01%");
    assert_eq!(times(7.5914), "7.59x");
    assert_eq!(times(12.34), "12.3x");
    assert_eq!(times(9.9998), "10.0x", "never 10.00x");
    assert_eq!(times(0.3401), "0.34x");
    assert_eq!(times(0.0042), "0.0042x");
    assert_eq!(times(12_345.0), "12\u{2009}345x");
    assert_eq!(bucket_label(SimDuration::from_millis(100)), "100 ms");
    assert_eq!(bucket_label(SimDuration::from_secs(1)), "1 s");
    assert_eq!(bucket_label(SimDuration(250_000)), "250 µs");
}

#[test]
fn paired_sentences_name_significant_differences_only() {
    let row = |metric, mean_diff, ci95, ratio| PairedRow {
        strategy: "equal".into(),
        baseline: "no-jitter".into(),
        metric,
        mean_diff,
        ci95,
        ratio: Some(ratio),
        baseline_mean: 1.0,
    };
    let rows = vec![
        row("calls", -18_000.0, 300.0, 0.81),
        row("completion_s", -21.6, 0.2, 0.346),
        row("recovery_peak_rps", -100.0, 500.0, 0.99),
        row("succeeded", 6_200.0, 40.0, 2.64),
        row("latency_p99_s", 0.1, 0.5, 1.01),
    ];
    assert_eq!(
        paired_sentences(&rows, true),
        [
            "equal vs no-jitter: fewer calls (−19%), finished sooner (−65%) and more \
              successes (+164%); same recovery peak and p99 latency within noise"
        ]
    );
    // Without an outage there is nothing to recover from: the same metric is the peak.
    assert_eq!(
        paired_sentences(&rows, false),
        [
            "equal vs no-jitter: fewer calls (−19%), finished sooner (−65%) and more \
              successes (+164%); same peak and p99 latency within noise"
        ]
    );
}

#[test]
fn a_significant_difference_below_one_percent_never_reads_zero() {
    // metastable's backoff vs immediate: ratio 1.000913534, significant.
    let rows = [PairedRow {
        strategy: "backoff".into(),
        baseline: "immediate".into(),
        metric: "completion_s",
        mean_diff: 0.055,
        ci95: 0.01,
        ratio: Some(1.000_913_534),
        baseline_mean: 60.2,
    }];
    assert_eq!(
        paired_sentences(&rows, true),
        ["backoff vs immediate: finished later (+0.09%)"]
    );
    assert_eq!(signed_percent(0.0913), "+0.09%");
    assert_eq!(signed_percent(-0.5), "−0.5%");
    assert_eq!(signed_percent(0.0042), "+0.004%");
    assert_eq!(signed_percent(12.4), "+12%");
    assert_eq!(signed_percent(-65.4), "−65%");
    assert_eq!(signed_percent(0.96), "+1.0%");
    // A drop short of all never reads -100% (helper-94: p99 469.4 s -> 0.447 s).
    assert_eq!(signed_percent((0.447 / 469.4 - 1.0) * 100.0), "−99.9%");
    assert_eq!(signed_percent(-99.996), "−99.996%");
    assert_eq!(signed_percent(-99.4), "−99%");
    // Exactly half way (200 -> 1): `{:.0}` rounds it to even, 100.
    assert_eq!(signed_percent(-99.5), "−99.5%");
    assert_eq!(signed_percent(-100.0), "−100%");
    assert_eq!(signed_percent(150.0), "+150%");
}

/// sweep-clients' case: decorrelated wins, no-jitter loses more, and their means of the
/// (recovery) peak are within each other's intervals (7 872 and 7 924 ± 80), but the paired
/// differences, printed under the sentence, find decorrelated's 1% higher. The sentence goes
/// by the paired difference, so it cannot say no-jitter "did no better on any measure".
#[test]
fn the_trade_sentence_agrees_with_the_paired_differences() {
    let peak = |mean: f64| stat(mean, 80.0);
    let s = [
        StrategySummary {
            peak_rps: peak(7_872.0),
            recovery_peak_rps: peak(7_872.0),
            ..summary("no-jitter", 190.0, 0.05, (4.6, 1.0))
        },
        StrategySummary {
            peak_rps: peak(7_924.0),
            recovery_peak_rps: peak(7_924.0),
            ..summary("decorrelated", 185.0, 0.04, (0.2, 0.3))
        },
    ];
    let refs: Vec<&StrategySummary> = s.iter().collect();
    let paired = |metric, mean_diff: f64, ci95| PairedRow {
        strategy: "decorrelated".into(),
        baseline: "no-jitter".into(),
        metric,
        mean_diff,
        ci95,
        ratio: Some(1.0 + mean_diff / 7_872.0),
        baseline_mean: 7_872.0,
    };
    let rows = [
        paired("recovery_peak_rps", 52.0, 20.0),
        // Not significant: no claim either way.
        paired("calls", -5.0, 9.0),
    ];
    // Unpaired, the intervals overlap: nothing to name.
    assert_eq!(
        trade(&refs, 0, 1, false, &[]),
        "no-jitter: gave up on 0.05% and did no better than decorrelated on any measure"
    );
    // Paired, no-jitter's peak is significantly lower; without an outage it is the peak,
    // named once.
    assert_eq!(
        trade(&refs, 0, 1, false, &rows),
        "no-jitter: lowest peak, but it gave up on 0.05%"
    );
    // With an outage the paired metric is the recovery peak; the whole-run peak has no
    // paired row and goes by the intervals.
    assert_eq!(
        trade(&refs, 0, 1, true, &rows),
        "no-jitter: lowest recovery peak, but it gave up on 0.05%"
    );
    // The other way round (the winner is the baseline), the sign turns: a significantly
    // *higher* value is no gain.
    let swapped: Vec<&StrategySummary> = vec![&s[1], &s[0]];
    let up = [PairedRow {
        strategy: "no-jitter".into(),
        baseline: "decorrelated".into(),
        ..paired("recovery_peak_rps", 52.0, 20.0)
    }];
    assert_eq!(
        trade(&swapped, 1, 0, false, &up),
        "no-jitter: gave up on 0.05% and did no better than decorrelated on any measure"
    );
}

/// The capacity line says what its figure leaves out: the slowdown under load, and for an
/// entry service that calls others, the slots held through those calls.
#[test]
fn the_capacity_note_says_what_the_figure_leaves_out() {
    let base = r#"
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
    let text = r#"
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
[[strategy]]
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
    let scenario = scenario_of(text);
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

#[test]
fn a_multiple_far_below_one_keeps_two_significant_digits() {
    assert_eq!(times(0.000_010_86), "0.000011x");
    assert_eq!(times(0.000_99), "0.00099x");
    assert_eq!(times(0.034), "0.034x");
    // Below a millionth, an exponent rather than a row of zeros.
    assert_eq!(times(3e-12), "3.0e-12x");
}

#[test]
fn a_value_two_strategies_share_is_no_superlative() {
    // Two strategies gave up on everything, alike: neither is "the fastest".
    let s = [
        summary("a", 90_000.0, 10.0, (0.0, 0.0)),
        summary("b", 1_000.0, 1.0, (10_000.0, 0.0)),
        summary("c", 1_000.0, 1.0, (10_000.0, 0.0)),
    ];
    let refs: Vec<&StrategySummary> = s.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, false, &[]),
        "b: faster, lighter, lower peak and lower p99 latency than a because it gave up on 100%"
    );
    // Alone, it is.
    assert_eq!(
        trade(&refs[..2], 1, 0, false, &[]),
        "b: fastest, lightest, lowest peak and lowest p99 latency because it gave up on 100%"
    );
    // Nor is a difference within the intervals: 1000 ± 1 calls against 1001 ± 1, 1 s ±
    // 0.05 against 1.01 s (the peaks and p99s have no interval here: those still count).
    let s = [
        summary("a", 90_000.0, 10.0, (0.0, 0.0)),
        summary("b", 1_000.0, 1.0, (10_000.0, 0.0)),
        summary("c", 1_001.0, 1.01, (10_000.0, 0.0)),
    ];
    let refs: Vec<&StrategySummary> = s.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, false, &[]),
        "b: lowest peak and lowest p99 latency, and faster and lighter than a because it gave up on 100%"
    );
}
