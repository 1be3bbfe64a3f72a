//! The verdict: what the console and `report.html` open with.
//!
//! One line per strategy, ranked: its success share, its work as a multiple of one call per
//! logical request (below 1 when requests end without a call: breaker fast-fails, budget
//! refusals, fallbacks, attempts lost to an unreachable or crashed server), its completion time and its recovery peak as a multiple of
//! the entry service's capacity; then, for each strategy that lost more requests than
//! another, what it traded them for, and, with replications, which differences from the
//! first strategy are significant.
//!
//! **The ranking rule.** A strategy that loses more requests never ranks ahead of one that
//! loses fewer. "More" means beyond the noise, judged replication by replication as
//! `paired.csv` judges: strategy A loses more than B when A's give-ups less B's, taken in
//! each replication (the two faced the same arrivals and draws), have a mean above their
//! 95% confidence half-width (with one replication, any difference counts). Ranks are
//! given one at a time: the next rank goes to a strategy that loses more than no strategy
//! still unranked; among those, to the one with the least work (fewest calls), and among
//! those whose calls are equal within their intervals, to the one that finished first.
//! The strategies that lose more than no other strategy at all form the *leading group*:
//! the summary table highlights best values among them only.
//!
//! Pure: the same results give the same verdict.

use crate::metrics::paired::PairedRow;
use crate::metrics::summary::{Stat, StrategySummary};
use crate::model::Scenario;
use crate::report::chart::fmt_value;
use crate::runner::PointResult;
use crate::text::counted;
use crate::time::SimDuration;

mod sentences;
pub use sentences::{paired_sentences, signed_percent, trade};

/// One strategy's line of the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based rank.
    pub rank: usize,
    /// Index of the strategy in the scenario (its colour in every chart).
    pub index: usize,
    /// Strategy name.
    pub strategy: String,
    /// Logical client requests (mean per run).
    pub requests: f64,
    /// Succeeded / requests (`None` without requests).
    pub success_share: Option<f64>,
    /// Give-ups, mean and 95% half-width.
    pub gave_up: Stat,
    /// Calls per logical request: 1 is one call each, not a minimum (attempts that never
    /// reached the entry service are no calls).
    pub work: f64,
    /// Calls to the fallback server per logical request (0 without one): load the work
    /// above leaves out.
    pub fallback_work: f64,
    /// In a service graph, calls to every service per logical request: the load retries
    /// at each tier multiply below the entry service, which `work` does not see (`None`
    /// with one service).
    pub all_services_work: Option<f64>,
    /// Completion time, seconds.
    pub completion_s: f64,
    /// Recovery peak, requests per second (per bucket); the whole run's peak when
    /// `outage` is false.
    pub recovery_peak_rps: f64,
    /// The recovery peak as a multiple of capacity (`None` when capacity is not defined).
    pub recovery_peak_x: Option<f64>,
    /// In a graph whose downstream service saturates before the entry (see the capacity
    /// note): that service and the recovery peak as a multiple of the client requests per
    /// second it can take. The entry's multiple alone read as headroom (0.028x) where the
    /// tier below took 3.2 times its capacity.
    pub tightest_x: Option<(String, f64)>,
    /// Whether the scenario has an outage the run sees end (where `recovery_peak_rps`
    /// starts): without one the recovery peak is the whole run's peak, and is called so.
    pub outage: bool,
    /// Whether its runs were over before the outage ended (none came back to a server:
    /// the recovery peak is 0 for want of work, not of load), so the line says so rather
    /// than "0x capacity" (helper-101).
    pub over_before_recovery: bool,
    /// Whether the peak is given in req/s beside its multiple: when some line's multiple
    /// is below 0.01 (a server sized never to be the bottleneck), every line's, so that
    /// the column reads one way.
    pub peak_as_rate: bool,
    /// Whether it loses more requests than some other strategy (outside the leading group).
    pub loses_more: bool,
    /// For a strategy outside the leading group: what it traded its lost requests for.
    pub trade: Option<String>,
}

/// The verdict of one sweep point (the only point without a sweep).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The time-series bucket, e.g. `100 ms`: what every peak is measured over.
    pub bucket: String,
    /// The entry service's capacity, requests per second, when defined.
    pub capacity_rps: Option<f64>,
    /// How the capacity was derived, or why there is none.
    pub capacity_note: String,
    /// Replications per strategy.
    pub replications: u32,
    /// One line per strategy, in rank order.
    pub lines: Vec<Line>,
    /// With two replications or more: per strategy after the first, which differences from
    /// the first strategy are significant (paired, 95%).
    pub paired: Vec<String>,
    /// Whether the scenario has an outage the run sees end; see [`Line::outage`].
    pub outage: bool,
    /// Whether its last outage lasts to `time_limit` or beyond: then `outage` is false, the
    /// lines give the whole run's peak, and the paired recovery peaks (all 0) are left out.
    pub outage_outlasts_run: bool,
}

impl Verdict {
    /// Indices (scenario order) of the leading group: the strategies that lose more
    /// requests than no other.
    pub fn leading(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .lines
            .iter()
            .filter(|l| !l.loses_more)
            .map(|l| l.index)
            .collect();
        v.sort_unstable();
        v
    }

    /// The rank of the strategy at `index` (scenario order).
    pub fn rank_of(&self, index: usize) -> Option<usize> {
        self.lines.iter().find(|l| l.index == index).map(|l| l.rank)
    }

    /// The rule, in one line, for the head of the verdict.
    pub fn rule(&self) -> String {
        format!(
            "ranked by give-ups (a strategy that loses more requests, {}, never ranks \
             ahead), then by work (calls per request: 1x = one call each, less when requests \
             ended without one), then by completion",
            if self.replications < 2 {
                "by any number with one run"
            } else {
                "beyond the 95% CI"
            }
        )
    }

    /// The capacity, for the head of the verdict: `capacity 10k req/s (200 slots / 20ms
    /// mean service); peaks per 100 ms bucket`.
    pub fn capacity_line(&self) -> String {
        match self.capacity_rps {
            Some(c) => format!(
                "capacity {} req/s ({}); peaks per {} bucket",
                fmt_value(c),
                self.capacity_note,
                self.bucket
            ),
            None => format!(
                "capacity n/a ({}); peaks per {} bucket",
                self.capacity_note, self.bucket
            ),
        }
    }
}

/// How a line reads: `succeeded 99.74%  work 8.25x  completion 15.0 s  recovery peak 0.32x
/// capacity`, as cells (aligned by the console, a table row in the report). Without an
/// outage the last cell says `peak`: there is nothing to recover from, and the number is
/// the whole run's peak.
pub fn cells(line: &Line) -> [String; 4] {
    [
        format!(
            "succeeded {}",
            line.success_share.map_or("n/a".into(), percent)
        ),
        {
            let mut work = format!("work {}", times(line.work));
            if line.fallback_work > 0.0 {
                work.push_str(&format!(" + {} fallback", times(line.fallback_work)));
            }
            if let Some(all) = line.all_services_work {
                work.push_str(&format!(" ({} over all services)", times(all)));
            }
            work
        },
        format!("completion {} s", fmt_value(line.completion_s)),
        if line.over_before_recovery {
            "recovery peak none (its runs were over before the outage ended)".to_string()
        } else {
            format!(
                "{} {}",
                if line.outage { "recovery peak" } else { "peak" },
                match line.recovery_peak_x {
                    // A server sized never to be the bottleneck: the rate says more than
                    // "0.000030x".
                    Some(x) if line.peak_as_rate => format!(
                        "{} req/s ({} capacity{})",
                        fmt_value(line.recovery_peak_rps),
                        times(x),
                        tightest_clause(line, ", ")
                    ),
                    Some(x) => format!("{} capacity{}", times(x), tightest_clause(line, " (")),
                    None => format!(
                        "{} req/s{}",
                        fmt_value(line.recovery_peak_rps),
                        tightest_clause(line, " (")
                    ),
                }
            )
        },
    ]
}

/// The peak's multiple of the tightest downstream service's capacity for the clients'
/// requests, `3.2x db's`, after `open` (`" ("` closes it, `", "` leaves it to the caller).
fn tightest_clause(line: &Line, open: &str) -> String {
    match &line.tightest_x {
        Some((name, x)) => {
            let close = if open == " (" { ")" } else { "" };
            format!("{open}{} {name}'s{close}", times(*x))
        }
        None => String::new(),
    }
}

/// A bucket width as people write it: `100 ms`, `1 s`, `250 µs`.
pub fn bucket_label(bucket: SimDuration) -> String {
    let ns = bucket.as_nanos();
    if ns > 0 && ns.is_multiple_of(1_000_000_000) {
        format!("{} s", ns / 1_000_000_000)
    } else if ns >= 1_000_000 && ns.is_multiple_of(1_000_000) {
        format!("{} ms", ns / 1_000_000)
    } else if ns >= 1_000 && ns.is_multiple_of(1_000) {
        format!("{} µs", ns / 1_000)
    } else if ns >= 1_000_000 {
        format!("{} ms", fmt_value(ns as f64 / 1e6))
    } else {
        format!("{ns} ns")
    }
}

/// The entry service's capacity in requests per second (slots / mean service time), and
/// how it was derived; `None` for an OCC server or a zero service time.
pub fn capacity(scenario: &Scenario) -> (Option<f64>, String) {
    let server = &scenario.entry().server;
    if server.is_occ() {
        return (None, "an OCC server has no slots".into());
    }
    let service = server.service.mean();
    if service.is_zero() {
        let mut note = String::from("zero service time");
        note.push_str(&tightest(scenario, None).unwrap_or_default());
        return (None, note);
    }
    let rps = own_capacity(server, service);
    // In a graph, the multiples are of the entry service's capacity, not of the
    // bottleneck's: name it (each service's own peaks are in services.csv and its chart).
    let entry = if scenario.services.len() > 1 {
        format!("{}, the entry service: ", scenario.entry().name)
    } else {
        String::new()
    };
    let mut note = format!(
        "{entry}{} / {} mean service",
        counted(server.concurrency, "slot", "slots"),
        service.short()
    );
    if changes_size(server) {
        note.push_str(", at the start");
    }
    // What the figure leaves out, so that a multiple of it is not read as the load on
    // what the service can really serve.
    if server.slowdown.is_some() {
        note.push_str(", unloaded: it slows under load");
    }
    if !scenario.entry().calls.is_empty() {
        note.push_str(", its own work only: a slot is also held through its downstream calls");
    }
    if let Some(tightest) = tightest(scenario, Some(rps)) {
        note.push_str(&tightest);
    }
    (Some(rps), note)
}

/// A server's own capacity in requests per second: its slots at the start over its mean
/// `service` time (not zero).
fn own_capacity(server: &crate::model::ServerSpec, service: SimDuration) -> f64 {
    server.concurrency as f64 / service.as_secs_f64()
}

/// Whether a server's slots change over the run (capacity steps, autoscaling), so that a
/// capacity figure from its starting slots holds only at the start.
fn changes_size(server: &crate::model::ServerSpec) -> bool {
    !server.capacity.is_empty() || server.autoscale.is_some()
}

/// The downstream service of a graph that saturates first for the clients' requests.
struct Tightest<'a> {
    service: &'a crate::model::ServiceSpec,
    /// Its own capacity, req/s (slots at the start over its mean service time).
    rps: f64,
    /// The calls it gets per client request.
    calls: f64,
    mean_service: SimDuration,
}

impl Tightest<'_> {
    /// The client requests per second it can take.
    fn per_request(&self) -> f64 {
        self.rps / self.calls
    }
}

/// For sizing a graph, the tier that saturates first matters more than the entry: the
/// downstream service (not OCC, with a service time) that can take the fewest client
/// requests per second by its own capacity (slots / mean service time at the start)
/// divided by the calls it gets per client request (first attempts: `calls` lists and
/// fan-out multiply down the graph), when it takes fewer than the entry (`entry`, None when
/// the entry's capacity is not defined).
fn tightest_service(scenario: &Scenario, entry: Option<f64>) -> Option<Tightest<'_>> {
    let services = &scenario.services;
    // Calls per client request: the entry gets one; a service gets each caller's calls
    // once per listing. The graph has no cycle, so this settles within as many rounds as
    // it has services.
    let mut per_request = vec![0.0f64; services.len()];
    for _ in 0..services.len() {
        let mut next = vec![0.0f64; services.len()];
        next[0] = 1.0;
        for (caller, svc) in services.iter().enumerate() {
            for &callee in &svc.calls {
                next[callee] += per_request[caller];
            }
        }
        per_request = next;
    }
    let tightest = services
        .iter()
        .zip(&per_request)
        .skip(1)
        .filter(|(svc, calls)| {
            **calls > 0.0 && !svc.server.is_occ() && !svc.server.service.mean().is_zero()
        })
        .map(|(svc, &calls)| {
            let mean_service = svc.server.service.mean();
            Tightest {
                service: svc,
                rps: own_capacity(&svc.server, mean_service),
                calls,
                mean_service,
            }
        })
        .min_by(|a, b| a.per_request().total_cmp(&b.per_request()))?;
    (!entry.is_some_and(|entry| tightest.per_request() >= entry)).then_some(tightest)
}

/// [`tightest_service`] as a clause of the capacity note.
fn tightest(scenario: &Scenario, entry: Option<f64>) -> Option<String> {
    let t = tightest_service(scenario, entry)?;
    let at_start = if changes_size(&t.service.server) {
        " at the start"
    } else {
        ""
    };
    let own = format!(
        "{}, {} req/s ({} / {} mean service{at_start})",
        t.service.name,
        fmt_value(t.rps),
        counted(t.service.server.concurrency, "slot", "slots"),
        t.mean_service.short()
    );
    Some(if t.calls == 1.0 {
        format!("; the least of any service: {own}")
    } else {
        format!(
            "; the least of any service for the clients' requests: {own}, {} calls per request: {} requests/s",
            fmt_value(t.calls),
            fmt_value(t.per_request())
        )
    })
}

/// A share as a percentage: `100%`, `99.74%`, `62.2%`, `0.26%`, `0%`; never rounded to
/// 0% or 100% when it is not.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if !p.is_finite() {
        return "n/a".into();
    }
    if p <= 0.0 {
        return "0%".into();
    }
    if p >= 100.0 {
        return "100%".into();
    }
    let text = if !(1.0..=99.0).contains(&p) {
        format!("{p:.2}")
    } else {
        format!("{p:.1}")
    };
    match text.as_str() {
        "100.00" => ">99.99%".into(),
        "0.00" => "<0.01%".into(),
        t => format!("{t}%"),
    }
}

/// A multiple: `7.59x`, `12.3x`, `150x`.
pub fn times(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x == 0.0 {
        "0x".into()
    } else if x < 1e-6 {
        format!("{x:.1e}x")
    } else if x < 0.01 {
        // Two significant digits: a peak far below a huge capacity is not "0.000x".
        let decimals = (1.0 - x.log10().floor()) as usize;
        format!("{x:.decimals$}x")
    } else if x < 0.1 {
        format!("{}x", fmt_value(x))
    } else if x < 9.995 {
        format!("{x:.2}x")
    } else if x < 99.95 {
        format!("{x:.1}x")
    } else {
        format!("{}x", fmt_value(x.round()))
    }
}

/// Whether interval `a` lies entirely above interval `b` (`mean ± ci95`).
fn above(a: Stat, b: Stat) -> bool {
    a.mean - a.ci95 > b.mean + b.ci95 + 1e-9 * b.mean.abs().max(1.0)
}

/// The ranking of `summaries` (indices, best first) and which of them lose more than some
/// other strategy, given `loses_more[a][b]`: whether `a` loses more requests than `b` (the
/// point's [`PointResult::loses_more`]). See the module documentation for the rule.
pub fn rank(summaries: &[&StrategySummary], loses_more: &[Vec<bool>]) -> (Vec<usize>, Vec<bool>) {
    let n = summaries.len();
    let loses = |a: usize, b: usize| loses_more[a][b];
    let loses_more: Vec<bool> = (0..n).map(|a| (0..n).any(|b| loses(a, b))).collect();
    let mut left: Vec<usize> = (0..n).collect();
    let mut order = Vec::with_capacity(n);
    while !left.is_empty() {
        let candidates: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&a| !left.iter().any(|&b| loses(a, b)))
            .collect();
        // The lightest candidate, then every candidate whose calls are equal to its within
        // their intervals: the one of those that finished first.
        let calls = |i: usize| summaries[i].calls;
        let lightest = candidates
            .iter()
            .copied()
            .min_by(|&a, &b| calls(a).mean.total_cmp(&calls(b).mean).then(a.cmp(&b)))
            .expect("some strategy loses more than no other");
        let pick = candidates
            .iter()
            .copied()
            .filter(|&c| !above(calls(c), calls(lightest)))
            .min_by(|&a, &b| {
                summaries[a]
                    .completion_s
                    .mean
                    .total_cmp(&summaries[b].completion_s.mean)
                    .then(calls(a).mean.total_cmp(&calls(b).mean))
                    .then(a.cmp(&b))
            })
            .unwrap_or(lightest);
        order.push(pick);
        left.retain(|&i| i != pick);
    }
    (order, loses_more)
}

/// The verdict of `point`, a point of `scenario`.
pub fn verdict(point: &PointResult, scenario: &Scenario) -> Verdict {
    let summaries: Vec<&StrategySummary> = point.strategies.iter().map(|s| &s.summary).collect();
    let (order, loses_more) = rank(&summaries, &point.loses_more);
    let (capacity_rps, capacity_note) = capacity(scenario);
    let tightest =
        tightest_service(scenario, capacity_rps).map(|t| (t.service.name.clone(), t.per_request()));
    let outage = scenario.recovery_seen().is_some();
    let outlasts = scenario.outage_outlasts_run();
    // An outage the run never sees end leaves every recovery peak at 0 (no bucket after
    // it): its paired rows compare nothing, and the peak is the whole run's.
    let compared: Vec<PairedRow> = point
        .paired
        .iter()
        .filter(|r| !(outlasts && r.metric == "recovery_peak_rps"))
        .cloned()
        .collect();
    let peak = |s: &StrategySummary| {
        if outlasts {
            s.peak_rps.mean
        } else {
            s.recovery_peak_rps.mean
        }
    };
    // The paired rows exist with one replication too (all zero-width): only with two or
    // more do they count, as only then are they printed.
    let paired: &[PairedRow] = if scenario.replications >= 2 {
        &compared
    } else {
        &[]
    };
    let winner = order.first().copied();
    let mut lines: Vec<Line> = order
        .iter()
        .enumerate()
        .map(|(r, &i)| {
            let s = summaries[i];
            Line {
                rank: r + 1,
                index: i,
                strategy: s.strategy.clone(),
                requests: s.requests,
                success_share: (s.requests > 0.0).then(|| s.succeeded / s.requests),
                gave_up: Stat {
                    mean: s.gave_up,
                    ci95: s.gave_up_ci95,
                },
                work: if s.requests > 0.0 {
                    s.calls.mean / s.requests
                } else {
                    f64::NAN
                },
                fallback_work: if s.requests > 0.0 {
                    s.fallback_calls / s.requests
                } else {
                    0.0
                },
                all_services_work: {
                    let services = &point.strategies[i].services;
                    (services.len() > 1 && s.requests > 0.0)
                        .then(|| services.iter().map(|v| v.calls).sum::<f64>() / s.requests)
                },
                completion_s: s.completion_s.mean,
                recovery_peak_rps: peak(s),
                recovery_peak_x: capacity_rps.map(|c| peak(s) / c),
                tightest_x: tightest
                    .as_ref()
                    .map(|(name, c)| (name.clone(), peak(s) / c)),
                outage,
                over_before_recovery: outage
                    && s.recovery_peak_rps.mean == 0.0
                    && scenario
                        .recovery_seen()
                        .is_some_and(|end| s.completion_s.mean <= end.as_secs_f64()),
                peak_as_rate: false,
                loses_more: loses_more[i],
                trade: match winner {
                    Some(w) if loses_more[i] && w != i => {
                        Some(trade(&summaries, i, w, outage, paired))
                    }
                    _ => None,
                },
            }
        })
        .collect();
    let tiny = lines
        .iter()
        .any(|l| matches!(l.recovery_peak_x, Some(x) if x > 0.0 && x < 0.01));
    for line in &mut lines {
        line.peak_as_rate = tiny;
    }
    Verdict {
        bucket: bucket_label(scenario.bucket),
        capacity_rps,
        capacity_note,
        replications: scenario.replications,
        lines,
        paired: if scenario.replications >= 2 && summaries.len() >= 2 {
            paired_sentences(&compared, outage)
        } else {
            Vec::new()
        },
        outage,
        outage_outlasts_run: outlasts,
    }
}

#[cfg(test)]
mod tests;
