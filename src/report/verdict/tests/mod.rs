//! Unit tests of the parent module, kept apart so that the module reads as its code.

use super::*;
use crate::metrics::summary::StrategyResult;

mod capacity;

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

/// A winner that lost nearly as many: both shares are given, or "because it gave up on
/// 15.3%" reads as the whole price of the trade (helper-98).
#[test]
fn the_trade_sentence_gives_the_winners_losses_when_they_are_comparable() {
    let s = [
        summary("budget", 10_000.0, 10.0, (1_460.0, 10.0)),
        summary("breaker", 5_000.0, 10.0, (1_530.0, 10.0)),
    ];
    let refs: Vec<&StrategySummary> = s.iter().collect();
    assert_eq!(
        trade(&refs, 1, 0, false, &[]),
        "breaker: lightest and lowest peak because it gave up on 15.3% (budget: 14.6%)"
    );
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
