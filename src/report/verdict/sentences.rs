//! The verdict's sentences: what a strategy that lost more requests traded them for (the
//! measures it beat the winner on, by the paired difference where there is one, else beyond
//! the intervals) and the paired comparisons with the first strategy, in words.

use super::{above, percent, times};
use crate::metrics::paired::PairedRow;
use crate::metrics::summary::{Stat, StrategySummary};
use crate::report::chart::fmt_value;

/// What a strategy can be better at, with the words for it.
struct Measure {
    value: fn(&StrategySummary) -> Stat,
    best: &'static str,
    better: &'static str,
    /// Whether giving up buys it directly: fewer attempts and an earlier end are what a
    /// give-up is, where a lower peak may have other causes.
    bought: bool,
    /// The `paired.csv` metric that measures the same, when there is one.
    paired: Option<&'static str>,
}

/// The measures of [`trade`]. Without an outage the recovery peak is the whole run's peak:
/// it is left out (it would name one gain twice), and the peak is judged by the paired
/// `recovery_peak_rps`, which then equals it.
fn measures(outage: bool) -> Vec<Measure> {
    let mut m = vec![
        Measure {
            value: |s| s.completion_s,
            best: "fastest",
            better: "faster",
            bought: true,
            paired: Some("completion_s"),
        },
        Measure {
            value: |s| s.calls,
            best: "lightest",
            better: "lighter",
            bought: true,
            paired: Some("calls"),
        },
    ];
    if outage {
        m.push(Measure {
            value: |s| s.recovery_peak_rps,
            best: "lowest recovery peak",
            better: "lower recovery peak",
            bought: false,
            paired: Some("recovery_peak_rps"),
        });
    }
    m.push(Measure {
        value: |s| s.peak_rps,
        best: "lowest peak",
        better: "lower peak",
        bought: false,
        paired: (!outage).then_some("recovery_peak_rps"),
    });
    m.push(Measure {
        value: |s| Stat {
            mean: s.latency_s.map_or(f64::NAN, |l| l[2]),
            ci95: 0.0,
        },
        best: "lowest p99 latency",
        better: "lower p99 latency",
        bought: false,
        paired: Some("latency_p99_s"),
    });
    m
}

/// Whether `mine` beats `winner` on `m`: by their paired difference when `paired` has one
/// for the two (one of them is the first strategy), so that this sentence and the paired
/// sentences printed under it never disagree; else beyond the two intervals.
fn beats(
    m: &Measure,
    mine: &StrategySummary,
    winner: &StrategySummary,
    paired: &[PairedRow],
) -> bool {
    let row = m.paired.and_then(|metric| {
        paired.iter().find(|r| {
            r.metric == metric
                && ((r.strategy == mine.strategy && r.baseline == winner.strategy)
                    || (r.strategy == winner.strategy && r.baseline == mine.strategy))
        })
    });
    match row {
        Some(r) => {
            // mean_diff is strategy - baseline; turn it into mine - winner.
            let mine_less_winner = if r.strategy == mine.strategy {
                r.mean_diff
            } else {
                -r.mean_diff
            };
            r.significant() && mine_less_winner < 0.0
        }
        None => above((m.value)(winner), (m.value)(mine)),
    }
}

/// What strategy `i` traded its lost requests for, against the winner `w`: the measures on
/// which it does better than the winner (by the paired difference in `paired` when the two
/// have one, else beyond the intervals), as superlatives when no other strategy does as well
/// still; `outage` says whether the scenario has one (see `measures`). `breaker: fastest and lightest because it gave up on 100%`
/// when it gained time or work (what giving up saves), `full: lowest recovery peak, but it
/// gave up on 0.26%` when it gained only on peaks or latency (which may have other causes).
pub fn trade(
    summaries: &[&StrategySummary],
    i: usize,
    w: usize,
    outage: bool,
    paired: &[PairedRow],
) -> String {
    let s = summaries[i];
    let winner = summaries[w];
    let (mut best, mut better) = (Vec::new(), Vec::new());
    let mut bought = false;
    for m in &measures(outage) {
        if !beats(m, s, winner, paired) {
            continue;
        }
        bought |= m.bought;
        // A superlative only when it beats every other strategy by the same test as the
        // winner (paired where there is a row, else beyond the intervals): not on a tie
        // (five strategies that all gave up on everything are not each "the lowest"), nor
        // on a difference within the noise.
        if summaries
            .iter()
            .enumerate()
            .all(|(j, o)| j == i || beats(m, s, o, paired))
        {
            best.push(m.best.to_string());
        } else {
            better.push(m.better.to_string());
        }
    }
    let share = |x: &StrategySummary| {
        if x.requests > 0.0 {
            percent(x.gave_up / x.requests)
        } else {
            fmt_value(x.gave_up)
        }
    };
    // Against a winner that lost requests too, the share alone reads as the whole price
    // (helper-98: "because it gave up on 15.3%" beside a winner at 14.6%): give both, when
    // the winner lost at least a tenth as many (beside 100%, its 0.18% says nothing).
    let lost = if winner.gave_up > 0.0 && winner.gave_up * 10.0 >= s.gave_up {
        format!("{} ({}: {})", share(s), winner.strategy, share(winner))
    } else {
        share(s)
    };
    let mut gains = Vec::new();
    if !best.is_empty() {
        gains.push(join_and(&best));
    }
    if !better.is_empty() {
        gains.push(format!("{} than {}", join_and(&better), winner.strategy));
    }
    if gains.is_empty() {
        format!(
            "{}: gave up on {lost} and did no better than {} on any measure",
            s.strategy, winner.strategy
        )
    } else {
        format!(
            "{}: {}{} gave up on {lost}",
            s.strategy,
            gains.join(", and "),
            if bought { " because it" } else { ", but it" }
        )
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Words for a paired metric: (name, lower, higher). Without an outage `recovery_peak_rps`
/// is the whole run's peak, and is called so.
fn paired_words(metric: &str, outage: bool) -> (&'static str, &'static str, &'static str) {
    match metric {
        "calls" => ("calls", "fewer calls", "more calls"),
        "completion_s" => ("completion", "finished sooner", "finished later"),
        "recovery_peak_rps" if !outage => ("peak", "lower peak", "higher peak"),
        "recovery_peak_rps" => (
            "recovery peak",
            "lower recovery peak",
            "higher recovery peak",
        ),
        "succeeded" => ("successes", "fewer successes", "more successes"),
        "latency_p99_s" => ("p99 latency", "lower p99 latency", "higher p99 latency"),
        _ => ("", "lower", "higher"),
    }
}

/// A relative change for a paired sentence: `+12%`, `−55%`, and below 1% as many decimals as
/// its first significant digit needs (`+0.09%`), so that a significant difference never
/// reads `+0%`; likewise a drop short of 100% never reads `−100%` (as if to zero): p99
/// 469.4 s -> 0.447 s is `−99.9%`.
pub fn signed_percent(pct: f64) -> String {
    // As many decimals as the first significant digit of `x` (in (0, 1)) needs.
    let decimals_for = |x: f64| ((-x.log10()).floor() as usize + 1).min(12);
    let a = pct.abs();
    let short_of_all = 100.0 - a;
    let decimals = if a == 0.0 {
        0
    } else if a < 1.0 {
        decimals_for(a)
    } else if pct < 0.0 && short_of_all > 0.0 && format!("{a:.0}") == "100" {
        // The fewest decimals that keep it below 100.
        (1..12)
            .find(|&d| {
                format!("{a:.d$}")
                    .parse::<f64>()
                    .is_ok_and(|shown| shown < 100.0)
            })
            .unwrap_or(12)
    } else {
        0
    };
    format!("{}{:.*}%", if pct >= 0.0 { "+" } else { "−" }, decimals, a)
}

/// The paired sentences: per strategy after the first, its significant differences from the
/// first (with the relative change), and the metrics that do not differ significantly.
/// `outage`: whether the scenario has one (the recovery peak is called peak without).
pub fn paired_sentences(rows: &[PairedRow], outage: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut strategies: Vec<&str> = Vec::new();
    for r in rows {
        if !strategies.contains(&r.strategy.as_str()) {
            strategies.push(&r.strategy);
        }
    }
    for s in strategies {
        let mine: Vec<&PairedRow> = rows.iter().filter(|r| r.strategy == s).collect();
        let baseline = &mine[0].baseline;
        let mut significant = Vec::new();
        let mut same = Vec::new();
        for r in &mine {
            let (name, lower, higher) = paired_words(r.metric, outage);
            if r.significant() {
                let change = match r.ratio {
                    Some(ratio) if ratio.is_finite() => {
                        let pct = (ratio - 1.0) * 100.0;
                        if pct.abs() >= 1000.0 {
                            times(ratio)
                        } else {
                            signed_percent(pct)
                        }
                    }
                    _ => format!("{:+}", fmt_value(r.mean_diff)),
                };
                significant.push(format!(
                    "{} ({change})",
                    if r.mean_diff < 0.0 { lower } else { higher }
                ));
            } else {
                same.push(name.to_string());
            }
        }
        let mut sentence = format!("{s} vs {baseline}: ");
        if significant.is_empty() {
            sentence.push_str("no significant difference");
        } else {
            sentence.push_str(&join_and(&significant));
            if !same.is_empty() {
                sentence.push_str(&format!("; same {} within noise", join_and(&same)));
            }
        }
        out.push(sentence);
    }
    out
}
