//! `recovered_s`: how long after its trigger a run is back to normal, and stays there.
//!
//! The **trigger** ends at `[metrics] trigger_end` when given, else at the end of the last
//! outage or capacity cut of any service (see [`crate::model::Scenario::trigger`]); without
//! one there is nothing to recover from. "Back to normal" has one rule per kind of work, and
//! a run with both kinds must satisfy both (the later time counts):
//!
//! - **Open work** (open and trace populations): goodput back to at least 90% of the offered
//!   load. Per bucket *i*, the offered load `o_i` is the open and trace requests that
//!   arrived in it (whether their first attempt was sent then, held by a client-side rate
//!   limiter or refused by an open breaker) and the goodput `g_i` the open and trace
//!   requests that succeeded in it. A window of [`WINDOW`] buckets starting at *i* is *normal* when
//!   `Σ g ≥ 0.9 · Σ o` over the window. Only windows lying entirely within the offered load
//!   count, one ending exactly at its end included (a system that recovers only because the
//!   load stopped has not recovered). The run is back to normal at the start of the first window, starting at or
//!   after the trigger's end, from which every later window is normal; `recovered_s` is that
//!   start minus the trigger's end. If fewer than [`WINDOW`] buckets of load follow the
//!   trigger, or the last window is not normal, the run never recovered.
//! - **Closed work** (closed populations): the backlog from before the trigger is cleared:
//!   every request of a closed population that began before the trigger's end (a
//!   `client_rate_limiter` wait for its first attempt does not move that; an open arrival
//!   of a mixed fleet is the open rule's) has ended (succeeded or given up).
//!   `recovered_s` is the last such end minus the trigger's end (0 if they all ended
//!   before it); never if one was still open at the time limit. A backlog cleared only by
//!   giving up is not a recovery: when the backlog's requests that met the trouble
//!   (ended at or after the trigger's start: where the last stretch of outages and
//!   capacity cuts began, [`crate::model::Scenario::trigger_start`]; a success only if its
//!   last attempt was sent at or after it, so not one in service when an outage began) all
//!   gave up and no client request succeeded at or after the trigger's end, the system
//!   answered nobody once the trouble began, and the run never recovered. A backlog that
//!   all ended before the trouble began met none of it.
//!
//! A trigger that ends at or after `time_limit` is never recovered from within the run.
//!
//! Windows are sums, not per-bucket ratios, so a few requests more or less in one small
//! bucket do not flip the verdict; pick `metrics.bucket` so that a window holds at least a
//! few dozen requests.

use super::RunMetrics;
use crate::model::Scenario;
use crate::time::{SimDuration, SimTime};

/// Buckets in a window of the open-work rule.
pub const WINDOW: usize = 10;

/// Share of the offered load the goodput must reach.
pub const GOODPUT_SHARE: f64 = 0.9;

/// Whether and when a run got back to normal after its trigger.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Recovery {
    /// The scenario has no trigger.
    NoTrigger,
    /// Back to normal this many seconds after the trigger's end.
    At(f64),
    /// Not back to normal within the run (a metastable failure, or a backlog never cleared).
    Never,
}

/// The recovery of `run`, a run of `scenario`.
pub fn recovery(scenario: &Scenario, run: &RunMetrics) -> Recovery {
    let Some(trigger) = scenario.trigger() else {
        return Recovery::NoTrigger;
    };
    // The run ends before the trigger does: there is no "after" to be back to normal in
    // (the closed rule alone would say 0 s when every request gave up during the outage).
    if trigger.0 >= scenario.time_limit.as_nanos() {
        return Recovery::Never;
    }
    let mut at = SimDuration::ZERO;
    if scenario.has_open_work() {
        match open_recovery(scenario, run, trigger) {
            Some(d) => at = at.max(d),
            None => return Recovery::Never,
        }
    }
    if scenario.populations.iter().any(|p| p.is_closed()) {
        if run.backlog_open {
            return Recovery::Never;
        }
        // Every request of the backlog that met the trouble gave up and nothing was served
        // after the trigger: the backlog is gone, but the system answered nobody.
        if run.backlog_met_trouble && !run.backlog_succeeded && !run.served_after_trigger {
            return Recovery::Never;
        }
        if let Some(cleared) = run.backlog_cleared {
            at = at.max(cleared - trigger);
        }
    }
    Recovery::At(at.as_secs_f64())
}

/// The open-work rule: the time from `trigger` to the start of the first window from which
/// every window is normal, or `None`.
fn open_recovery(scenario: &Scenario, run: &RunMetrics, trigger: SimTime) -> Option<SimDuration> {
    let width = scenario.bucket.as_nanos().max(1);
    let open: Vec<usize> = (0..scenario.populations.len())
        .filter(|&p| !scenario.populations[p].is_closed())
        .collect();
    // Buckets lying entirely within the offered load: the scenario's, not the run's series,
    // which end with the run's last event (a last arrival before the final bucket left it
    // short, and the trailing windows, empty and so normal, were not judged: helper-99).
    let load_end = load_end(scenario)?.min(SimTime(scenario.time_limit.as_nanos()));
    let full = (load_end.0 / width) as usize;
    let first = trigger.0.div_ceil(width) as usize;
    if full < first + WINDOW {
        return None;
    }
    // Offered and good per bucket, open populations summed; none past the series' end.
    let mut offered = vec![0u64; full];
    let mut good = vec![0u64; full];
    for &p in &open {
        for (i, b) in run.populations[p].timeline.iter().take(full).enumerate() {
            offered[i] += b.arrived as u64;
            good[i] += b.succeeded as u64;
        }
    }
    let last_start = full - WINDOW;
    let normal = |i: usize| {
        let o: u64 = offered[i..i + WINDOW].iter().sum();
        let g: u64 = good[i..i + WINDOW].iter().sum();
        g as f64 >= GOODPUT_SHARE * o as f64
    };
    // Walk back from the last window while windows are normal.
    let mut start = None;
    for i in (first..=last_start).rev() {
        if normal(i) {
            start = Some(i);
        } else {
            break;
        }
    }
    start.map(|i| SimTime(i as u64 * width) - trigger)
}

/// Why no run of `scenario` can see a recovery from its trigger, in the console's words
/// (`n/a (...)`); `None` when runs can, or there is no trigger. `recovered_s` is then
/// empty, as for a run that never recovered, but the reason is the scenario's, not the
/// strategy's.
pub fn unseen(scenario: &Scenario) -> Option<&'static str> {
    if scenario.trigger_outlasts_run() {
        Some("trouble outlasts the run")
    } else if too_little_load_after(scenario) {
        Some(if outlasts_load(scenario) {
            "trouble outlasts the load"
        } else {
            "too little load after the trigger"
        })
    } else {
        None
    }
}

/// Whether the open work of `scenario` leaves fewer than [`WINDOW`] whole buckets of offered
/// load after the trigger's end (before the load ends or `time_limit`): the open rule has no
/// window to judge, and every run "never recovered" (helper-98: a 59 s outage in a 60 s
/// run read as a failure of every strategy).
pub fn too_little_load_after(scenario: &Scenario) -> bool {
    let Some(trigger) = scenario.trigger() else {
        return false;
    };
    if !scenario.has_open_work() {
        return false;
    }
    let width = scenario.bucket.as_nanos().max(1);
    let Some(end) = load_end(scenario) else {
        return true;
    };
    let full = end.min(SimTime(scenario.time_limit.as_nanos())).0 / width;
    full < trigger.0.div_ceil(width) + WINDOW as u64
}

/// Whether the trigger ends at or after the end of the open load (or `time_limit`): the
/// trouble lasts as long as there is load to offer.
pub fn outlasts_load(scenario: &Scenario) -> bool {
    let end = load_end(scenario).map_or(SimTime::ZERO, |e| {
        e.min(SimTime(scenario.time_limit.as_nanos()))
    });
    scenario.trigger().is_some_and(|t| t >= end)
}

/// When the offered open load ends: the latest `end` of an open population, just after the
/// last arrival of a trace.
pub(crate) fn load_end(scenario: &Scenario) -> Option<SimTime> {
    use crate::model::Source;
    scenario
        .populations
        .iter()
        .filter_map(|p| match &p.source {
            Source::Open(o) => Some(o.end),
            Source::Trace(t) => t.times.last().map(|t| SimTime(t.0 + 1)),
            Source::Closed(_) => None,
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::PopulationBucket;

    fn series(pairs: &[(u32, u32)]) -> Vec<PopulationBucket> {
        pairs
            .iter()
            .map(|&(o, g)| PopulationBucket {
                arrived: o,
                first_attempts: o,
                succeeded: g,
                gave_up: 0,
            })
            .collect()
    }

    fn open_scenario(end_s: u64, trigger_s: u64) -> Scenario {
        let mut s = closed_scenario();
        s.populations[0].source = crate::model::Source::Open(crate::model::population::Open {
            rate: crate::model::population::RateCurve::constant(10.0),
            process: crate::model::population::Process::Uniform,
            start: SimTime::ZERO,
            end: SimTime(SimDuration::from_secs(end_s).0),
        });
        s.trigger_end = Some(SimTime(SimDuration::from_secs(trigger_s).0));
        s
    }

    /// One closed client, 1 s buckets, the trigger at 5 s.
    fn closed_scenario() -> Scenario {
        let text = r#"
name = "r"
[clients]
count = 1
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "1ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "1ms"
cap = "1ms"
[metrics]
bucket = "1s"
"#;
        let mut s = crate::scenario::sweep::load_str("r.toml", text)
            .expect("valid")
            .points
            .remove(0)
            .scenario;
        s.trigger_end = Some(SimTime(SimDuration::from_secs(5).0));
        s
    }

    fn run_with(timeline: Vec<PopulationBucket>) -> RunMetrics {
        let mut m = RunMetrics::default();
        m.populations.push(crate::metrics::PopulationMetrics {
            timeline,
            ..Default::default()
        });
        m
    }

    #[test]
    fn open_work_recovers_at_the_first_window_from_which_all_are_normal() {
        // Trigger ends at 5 s; goodput is 0 until bucket 8, full from bucket 8 on; load
        // until 30 s. The window starting at 7 holds 90 good of 100 offered: normal; the
        // one at 6 holds 80: not. Back to normal at 7 s, 2 s after the trigger.
        let mut pairs = vec![(10, 0); 8];
        pairs.extend(vec![(10, 10); 22]);
        let s = open_scenario(30, 5);
        let r = recovery(&s, &run_with(series(&pairs)));
        assert_eq!(r, Recovery::At(2.0));
    }

    #[test]
    fn a_dip_in_the_last_windows_means_never() {
        let mut pairs = vec![(10, 10); 25];
        pairs.extend(vec![(10, 0); 5]);
        let s = open_scenario(30, 5);
        assert_eq!(recovery(&s, &run_with(series(&pairs))), Recovery::Never);
    }

    #[test]
    fn ninety_percent_of_a_window_is_enough_and_less_is_not() {
        // Every window holds 100 offered: 90 good is normal, 89 is not.
        let s = open_scenario(20, 0);
        let ok: Vec<(u32, u32)> = (0..20)
            .map(|i| (10, if i % 10 == 0 { 0 } else { 10 }))
            .collect();
        assert_eq!(recovery(&s, &run_with(series(&ok))), Recovery::At(0.0));
        let mut bad = ok.clone();
        bad[19].1 = 9; // the window 10..20 holds 89
        assert_eq!(recovery(&s, &run_with(series(&bad))), Recovery::Never);
    }

    fn closed_run(cleared_s: u64, backlog_succeeded: bool, served_after: bool) -> RunMetrics {
        RunMetrics {
            backlog_cleared: Some(SimTime(SimDuration::from_secs(cleared_s).0)),
            backlog_met_trouble: true,
            backlog_succeeded,
            served_after_trigger: served_after,
            ..RunMetrics::default()
        }
    }

    /// budgets.toml: strategies that lost every request during the outage showed
    /// `recovered_s 0`. A backlog cleared only by giving up, with nobody served after, is
    /// never a recovery; one success in the backlog or after the trigger makes it one.
    #[test]
    fn a_closed_backlog_that_only_gave_up_never_recovered() {
        let s = closed_scenario();
        assert_eq!(recovery(&s, &closed_run(3, false, false)), Recovery::Never);
        assert_eq!(recovery(&s, &closed_run(8, false, false)), Recovery::Never);
        assert_eq!(recovery(&s, &closed_run(3, true, false)), Recovery::At(0.0));
        assert_eq!(recovery(&s, &closed_run(3, false, true)), Recovery::At(0.0));
        assert_eq!(recovery(&s, &closed_run(8, true, false)), Recovery::At(3.0));
        // No backlog at all (nothing sent before the trigger's end): nothing to recover.
        let empty = RunMetrics::default();
        assert_eq!(recovery(&s, &empty), Recovery::At(0.0));
        // A backlog that all ended before the trouble began met none of it.
        let before = RunMetrics {
            backlog_met_trouble: false,
            ..closed_run(3, false, false)
        };
        assert_eq!(recovery(&s, &before), Recovery::At(0.0));
    }

    /// `--set server.outages.0.end=20m` with a 10 m time limit said "recovered in 0 s": a
    /// trigger ending at or after the time limit is never recovered from within the run.
    #[test]
    fn a_trigger_ending_at_or_after_the_time_limit_is_never_recovered_from() {
        let mut s = closed_scenario();
        let good = closed_run(3, true, true);
        s.time_limit = SimDuration::from_secs(6);
        assert_eq!(recovery(&s, &good), Recovery::At(0.0));
        s.time_limit = SimDuration::from_secs(5);
        assert_eq!(recovery(&s, &good), Recovery::Never);
        s.time_limit = SimDuration::from_secs(4);
        assert_eq!(recovery(&s, &good), Recovery::Never);
    }

    #[test]
    fn too_little_load_after_the_trigger_is_never() {
        let s = open_scenario(12, 5);
        let pairs = vec![(10, 10); 12];
        assert_eq!(recovery(&s, &run_with(series(&pairs))), Recovery::Never);
    }
}
