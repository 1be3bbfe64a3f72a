//! `herdsim check`: validate every scenario given, print one line per good file (what it
//! runs: clients, strategies, replications, sweep points) and every problem with its file
//! and line; and the warnings `check` and `run` share about settings that cannot act: what
//! a scenario schedules past its `time_limit`, a clamp with no deadline to clamp to.

use super::load::load_each;
use super::{print_stderr, print_stdout};
use crate::cli::CheckArgs;
use crate::error::{Error, Result, ScenarioErrors};
use crate::model::Source;
use crate::report::console;
use crate::scenario::sweep::ScenarioFile;
use crate::text::counted;
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn check_command(args: &CheckArgs) -> Result<()> {
    let (files, errors) = load_each(&args.scenarios, &args.set)?;
    let mut out = String::new();
    // One line per good file even when another fails: the errors alone would leave the
    // reader unsure whether the other files were checked at all. A file that loaded is good
    // unless an earlier one has its name (the one error `load_each` gives a loaded file);
    // by position, not path, so that `check a.toml a.toml` still says the first is ok.
    let good = files
        .iter()
        .enumerate()
        .filter(|(i, f)| !files[..*i].iter().any(|g| g.first().name == f.first().name))
        .map(|(_, f)| f);
    // The limits `run` applies before it starts, with its defaults (this machine's threads,
    // charts drawn) and `--max-memory`: a file `run` would refuse is not "ok" here (a rate of
    // 1e300 arrivals per second passed `check` and was refused by `run`).
    let threads = rayon::current_num_threads();
    let memory = crate::limits::MemoryLimit::new(args.max_memory);
    let mut refused = Vec::new();
    let good: Vec<&ScenarioFile> = good
        .filter(|f| {
            match super::run::check_limits(f, threads, false, Some(false), memory, false, true) {
                Ok(()) => true,
                Err(e) => {
                    refused.push(e);
                    false
                }
            }
        })
        .collect();
    for f in good {
        let s = f.first();
        out.push_str(&format!(
            "{}: ok ({}: {}, {}, {}{})\n",
            crate::text::escape(&f.file),
            s.name,
            check_counts(f),
            counted(s.strategies.len(), "strategy", "strategies"),
            counted(console::replications(f), "replication", "replications"),
            if f.points.len() > 1 {
                format!(", {} sweep points", f.points.len())
            } else {
                String::new()
            }
        ));
    }
    print_stdout(&out)?;
    for f in &files {
        print_stderr(&warnings(f));
    }
    if errors.is_empty() && refused.len() == 1 {
        return Err(refused.remove(0));
    }
    // Several problems: each limit refusal said here, the scenario errors (or the last
    // refusal) as the command's error.
    let last = if errors.is_empty() {
        refused.pop()
    } else {
        None
    };
    print_stderr(
        &refused
            .iter()
            .map(|e| format!("herdsim: error: {e}"))
            .collect::<Vec<_>>(),
    );
    match last {
        Some(e) => Err(e),
        None if errors.is_empty() => Ok(()),
        None => Err(Error::Scenario(ScenarioErrors(errors))),
    }
}

/// The warnings `check` and `run` print before anything runs: settings that are valid (so
/// not errors) but cannot act. One line per distinct warning over the sweep points.
pub(super) fn warnings(file: &ScenarioFile) -> Vec<String> {
    let mut lines = past_end_warnings(file);
    let mut said: BTreeSet<String> = lines.iter().cloned().collect();
    for line in inert_setting_warnings(file)
        .into_iter()
        .chain(costly_setting_warnings(file))
    {
        if said.insert(line.clone()) {
            lines.push(line);
        }
    }
    lines
}

/// Warnings for settings that depend on another one the scenario lacks: `clamp_to_deadline
/// = true` in a policy whose requests can have no deadline (no `deadline` of its own, and
/// none propagated to it by a calling service: a common slip), a `throttle_base` that no
/// 429 ever reaches (not retried, or taken by the `rate_limit` ladder), and a queue timeout
/// or LIFO discipline on a server with no queue (or the settings an OCC server has no slots
/// or queue for, see `occ_inert`), a client's `client_rate_limiter` when
/// the service its clients call has no rate limiter (the only source of 429s), and a
/// client-scoped concurrent budget in front of closed clients (one call at a time).
fn inert_setting_warnings(file: &ScenarioFile) -> Vec<String> {
    use crate::model::ServiceRetry;
    // Each warning, with the sweep point it holds at when it depends on swept values.
    let mut lines: Vec<(String, Option<usize>)> = Vec::new();
    let unclamped = "sets clamp_to_deadline but has no deadline: the clamp never acts";
    for (k, p) in file.points.iter().enumerate() {
        let s = &p.scenario;
        let inert =
            |r: &crate::model::policy::RetryPolicy| r.clamp_to_deadline && r.deadline.is_none();
        for (i, strategy) in s.strategies.iter().enumerate() {
            // The clients' policies: the strategy merged with each population's overrides.
            let policies = s.population_policies.get(i).into_iter().flatten();
            for (pp, population) in policies.zip(&s.populations) {
                let whose = if s.populations.len() > 1 {
                    format!(" for population `{}`", population.name)
                } else {
                    String::new()
                };
                if inert(&pp.strategy.retry) {
                    lines.push((
                        format!("strategy `{}`{whose} {unclamped}", strategy.name),
                        None,
                    ));
                }
                if let Some(why) = throttle_base_unused(&pp.strategy.retry) {
                    lines.push((
                        format!(
                            "strategy `{}`{whose} sets throttle_base but {why}: it never acts",
                            strategy.name
                        ),
                        None,
                    ));
                }
                if let Some(why) = slow_call_unused(&pp.strategy.retry) {
                    lines.push((
                        format!(
                            "strategy `{}`{whose} sets breaker.slow_call but {why}: no call is ever slow",
                            strategy.name
                        ),
                        Some(k),
                    ));
                }
                if population.is_closed()
                    && let Some(why) = concurrent_budget_unused(&pp.strategy.retry)
                {
                    lines.push((
                        format!(
                            "strategy `{}`{whose} {why}: it never refuses a retry",
                            strategy.name
                        ),
                        Some(k),
                    ));
                }
                // Clients call the first service; only its rate limiter answers 429.
                let target = &s.services[0];
                if pp.strategy.retry.client_rate_limiter.is_some()
                    && target.server.rate_limit.is_none()
                {
                    lines.push((
                        format!(
                            "strategy `{}`{whose} sets client_rate_limiter but service `{}` has no rate_limit, so no 429 ever enables it: it never acts",
                            strategy.name, target.name
                        ),
                        Some(k),
                    ));
                }
            }
            // The downstream calls of `retry = "strategy"` services, unless the service
            // gives them its request's deadline.
            for v in &s.services {
                if matches!(v.retry, ServiceRetry::Strategy)
                    && !v.calls.is_empty()
                    && !v.propagate_deadline
                    && inert(&strategy.retry)
                {
                    lines.push((
                        format!(
                            "strategy `{}` (the retry policy of service `{}`) {unclamped}",
                            strategy.name, v.name
                        ),
                        None,
                    ));
                }
            }
        }
        for v in &s.services {
            if let ServiceRetry::Fixed(policy) = &v.retry
                && inert(&policy.retry)
                && !v.propagate_deadline
            {
                lines.push((
                    format!("the retry policy of service `{}` {unclamped}", v.name),
                    None,
                ));
            }
            // Queue settings of a server without a queue.
            let server = &v.server;
            if let Some(why) = occ_inert(server) {
                lines.push((format!("service `{}` {why}", v.name), Some(k)));
            }
            if server.queue == 0 && !server.is_occ() {
                if server.queue_timeout.is_some() {
                    lines.push((
                        format!(
                            "service `{}` sets queue_timeout but has no queue (queue = 0): it never acts",
                            v.name
                        ),
                        Some(k),
                    ));
                }
                if server.discipline == crate::model::Discipline::Lifo {
                    lines.push((
                        format!(
                            "service `{}` sets discipline = \"lifo\" but has no queue (queue = 0): it never acts",
                            v.name
                        ),
                        Some(k),
                    ));
                }
            }
        }
        if let Some(why) = s.fallback.as_ref().and_then(|f| occ_inert(&f.server)) {
            lines.push((format!("the [fallback] server {why}"), Some(k)));
        }
    }
    with_points(file, &lines)
}

/// The warning lines of `file` from each text and the sweep point it holds at (`None`: it
/// does not depend on swept values). Under a sweep, a text is followed by its point
/// (`(at sweep point time_limit = 1m)`), once per point it holds at, unless it holds at
/// every point; each line is said once.
fn with_points(file: &ScenarioFile, lines: &[(String, Option<usize>)]) -> Vec<String> {
    let name = crate::text::escape(&file.file);
    let at_point = |p: &crate::scenario::sweep::SweepPoint| {
        if file.axes.is_empty() {
            String::new()
        } else {
            let values: Vec<String> = (file.axes.iter().zip(&p.labels))
                .map(|(a, l)| format!("{} = {l}", a.path))
                .collect();
            format!(" (at sweep point {})", values.join(", "))
        }
    };
    // A warning that holds at every sweep point is said once, without naming them: an OCC
    // server's settings under a sweep of client counts are the same at each point.
    // The points each text holds at, gathered once (a sweep has up to 100 000 points, each
    // with its warnings: asking every line about every point took 95 s at 4 000 points).
    let mut held_at: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (text, at) in lines {
        if let Some(k) = at {
            held_at.entry(text.as_str()).or_default().insert(*k);
        }
    }
    let points = file.points.len();
    let everywhere =
        |text: &str| points > 1 && held_at.get(text).map_or(0, BTreeSet::len) == points;
    let mut out: Vec<String> = Vec::new();
    let mut said: BTreeSet<String> = BTreeSet::new();
    for (text, at) in lines {
        let line = match at {
            Some(k) if !everywhere(text) => {
                format!("warning: {name}: {text}{}", at_point(&file.points[*k]))
            }
            _ => format!("warning: {name}: {text}"),
        };
        if said.insert(line.clone()) {
            out.push(line);
        }
    }
    out
}

/// The settings of an OCC server that act only on slots, a queue or service time, which it
/// does not have (it decides each write on arrival, or after its write time): how the
/// queue is served and timed out, the hint of its overload 503s (it sends none), how
/// service slows, how slots change, a `slow` outage. Capacity steps and a `slow` outage
/// still end the recovery trigger and steps still set the `concurrency` column, so the
/// warning says the writes ignore them, not that they do nothing. The warning's words
/// after the server's name; None when it is not an OCC server or sets none of them.
fn occ_inert(server: &crate::model::ServerSpec) -> Option<String> {
    if !server.is_occ() {
        return None;
    }
    let mut keys: Vec<&str> = Vec::new();
    if server.retry_after != crate::model::Hint::None {
        keys.push("retry_after");
    }
    if server.discipline == crate::model::Discipline::Lifo {
        keys.push("discipline = \"lifo\"");
    }
    if server.queue_timeout.is_some() {
        keys.push("queue_timeout");
    }
    if server.slowdown.is_some() {
        keys.push("slowdown");
    }
    if !server.capacity.is_empty() {
        keys.push("capacity steps");
    }
    if server.autoscale.is_some() {
        keys.push("autoscale");
    }
    if server
        .outages
        .iter()
        .any(|o| matches!(o.kind, crate::model::OutageKind::Slow(_)))
    {
        keys.push("a `slow` outage");
    }
    (!keys.is_empty()).then(|| {
        format!(
            "is an OCC server (occ is set: no slots, queue or service time): its writes ignore {}",
            keys.join(", ")
        )
    })
}

/// Why a policy's breaker never sees a slow call, if it does not: every attempt times out
/// (its longest timeout, that of the last attempt) no more than `slow_call` after it was
/// sent, and a slow call takes strictly longer.
fn slow_call_unused(r: &crate::model::policy::RetryPolicy) -> Option<String> {
    let over = r.breaker?.slow_call?;
    let longest = r.attempt_timeout(r.max_attempts)?.max(r.timeout?);
    (longest <= over).then(|| {
        format!("its attempts time out within {longest}, never more than slow_call ({over}) after they are sent")
    })
}

/// Why a policy's concurrent budget never refuses a closed client's retry, if it does not: a
/// client-scoped instance counts one client's retries in progress, and a closed client sends
/// one call at a time, so when it decides, the retry it held (if any) has just been given
/// back and none is in progress: fewer than any `min_retries` of 1 or more. (Envoy's
/// sidecar, one per client, is the same: its 3 concurrent retries bind only on a client
/// with many calls at once.)
fn concurrent_budget_unused(r: &crate::model::policy::RetryPolicy) -> Option<String> {
    use crate::model::policy::{BudgetKind, Scope};
    let budget = r.budget?;
    match budget.kind {
        BudgetKind::Concurrent { min_retries, .. }
            if min_retries >= 1 && budget.scope == Scope::Client =>
        {
            Some(format!(
                "sets a concurrent budget per client (scope = \"client\", min_retries = {min_retries}) but its clients are closed, one call at a time, so none has a retry in progress when it decides"
            ))
        }
        _ => None,
    }
}

/// Why a policy's `throttle_base` never sets a delay, if it does not: the backoff after a
/// 429 is computed only when 429s are retried on the transport ladder.
fn throttle_base_unused(r: &crate::model::policy::RetryPolicy) -> Option<&'static str> {
    use crate::model::outcome::Status;
    r.throttle_base?;
    if !r.retries(Status::TooManyRequests) {
        Some("its retry_on does not list \"429\"")
    } else if r
        .rate_limit
        .is_some_and(|l| l.on.contains(Status::TooManyRequests))
    {
        Some("its rate_limit ladder takes the 429s")
    } else {
        None
    }
}

/// A round trip to `to` (whose one-way latency is `latency`) that takes the whole run on
/// average (say `"10m"` meant as `"10ms"`): the run ends before almost any answer crosses
/// back.
fn round_trip_past_end(
    latency: &crate::model::dist::Dist,
    to: &str,
    s: &crate::model::Scenario,
) -> Option<String> {
    let one_way = latency.mean();
    (one_way.as_nanos().saturating_mul(2) >= s.time_limit.as_nanos()).then(|| {
        format!(
            "the round trip to `{to}` ({} each way, on average) lasts as long as the run (time_limit {}) or longer: almost no answer comes back within it",
            one_way.short(),
            s.time_limit
        )
    })
}

/// Warnings for what a scenario schedules at or after its `time_limit`, where the run has
/// already stopped: an outage that does not end within the run (say `end = "5M"`, five
/// months, meant as `"5m"`), a capacity step that never takes effect, a `trigger_end`
/// beyond the run, a network round trip as long as the run. Each makes `recovered_s` empty,
/// the step moot or the answers late; valid, so not an error.
fn past_end_warnings(file: &ScenarioFile) -> Vec<String> {
    use crate::time::{SimDuration, SimTime};
    let show = |t: crate::time::SimTime| SimDuration::from_nanos(t.0).to_string();
    let mut lines: Vec<(String, Option<usize>)> = Vec::new();
    for (k, p) in file.points.iter().enumerate() {
        let s = &p.scenario;
        let limit = s.time_limit.as_nanos();
        let past = |t: crate::time::SimTime| t.0 >= limit;
        let end_of_run = format!(
            "at or after time_limit ({}), the end of the run",
            s.time_limit
        );
        let mut found = Vec::new();
        for service in &s.services {
            for o in &service.server.outages {
                if past(o.end) {
                    found.push(format!(
                        "outage [{}, {}) of `{}` ends {end_of_run}: the run never sees it end, so recovered_s stays empty and recovery_peak_rps is 0",
                        show(o.start),
                        show(o.end),
                        service.name
                    ));
                }
            }
            if let Some(line) = round_trip_past_end(&service.latency, &service.name, s) {
                found.push(line);
            }
            for c in &service.server.capacity {
                if past(c.at) {
                    found.push(format!(
                        "capacity step at {} of `{}` lies {end_of_run}: it never takes effect",
                        show(c.at),
                        service.name
                    ));
                }
            }
        }
        if let Some(line) = s
            .fallback
            .as_ref()
            .and_then(|f| round_trip_past_end(&f.latency, "[fallback]", s))
        {
            found.push(line);
        }
        for population in &s.populations {
            let start = match &population.source {
                Source::Closed(c) => crate::time::SimTime(c.start.as_nanos()),
                Source::Open(o) => o.start,
                Source::Trace(_) => continue,
            };
            if past(start) {
                found.push(format!(
                    "population `{}` starts at {}, {end_of_run}: none of its requests starts",
                    population.name,
                    show(start)
                ));
            }
        }
        // Ends before time_limit but inside the last bucket: no bucket starts after it.
        if let Some(end) = s.recovery_from().filter(|&t| !past(t) && s.unseen_after(t)) {
            let recovered = if s.trigger_outlasts_run() {
                "recovered_s stays empty and "
            } else {
                ""
            };
            found.push(format!(
                "the last outage ends at {}, inside the last {} bucket before time_limit ({}): no bucket starts after it, so {recovered}recovery_peak_rps is 0",
                show(end),
                s.bucket,
                s.time_limit
            ));
        }
        // Open work is judged on windows of load after the trigger; too few, none is.
        if !s.trigger_outlasts_run() && crate::metrics::recovery::too_little_load_after(s) {
            let trigger = s.trigger().expect("a trigger to have load after");
            // What ends the load: an open population's `end`, or a trace's last arrival
            // (its load ends just after it), whichever is later; or the run's end.
            let open_end = (s.populations.iter())
                .filter_map(|p| match &p.source {
                    Source::Open(o) => Some(o.end),
                    _ => None,
                })
                .max();
            let last_arrival = (s.populations.iter())
                .filter_map(|p| match &p.source {
                    Source::Trace(t) => t.times.last().map(|&t| SimTime(t.0)),
                    _ => None,
                })
                .max();
            let load = crate::metrics::recovery::load_end(s).unwrap_or(SimTime::ZERO);
            let before = match (open_end, last_arrival) {
                _ if load.0 >= limit => format!("time_limit ({})", s.time_limit),
                (o, Some(t)) if o.is_none_or(|o| o <= t) => {
                    format!("the trace's last arrival ({})", show(t))
                }
                _ => format!("the open load ends ({})", show(load)),
            };
            let when = if crate::metrics::recovery::outlasts_load(s) {
                format!("at or after {before}")
            } else {
                format!(
                    "less than {} buckets of {} before {before}",
                    crate::metrics::recovery::WINDOW,
                    s.bucket
                )
            };
            found.push(format!(
                "the trigger ends at {}, {when}: recovery of open work is judged on {} buckets of load after the trigger, so recovered_s stays empty",
                show(trigger),
                crate::metrics::recovery::WINDOW,
            ));
        }
        if let Some(t) = s.trigger_end.filter(|&t| past(t)) {
            found.push(format!(
                "metrics.trigger_end ({}) lies {end_of_run}: recovered_s stays empty",
                show(t)
            ));
        }
        lines.extend(found.into_iter().map(|f| (f, Some(k))));
    }
    with_points(file, &lines)
}

/// The most autoscaling decisions a run may make before `check` and `run` warn. Each is an
/// event, and the engine handles about 20 million a second, so 10^7 add about half a second
/// to every run of the scenario.
pub(super) const MANY_DECISIONS: u64 = 10_000_000;

/// Warnings for valid settings that make every run slow: an autoscaling `interval` so short
/// (`"1ns"` meant as `"1s"`, say) that a run up to its `time_limit` makes more than
/// [`MANY_DECISIONS`] decisions (a run goes on deciding while it has work, so a herd done
/// early makes fewer: the warning says "up to").
fn costly_setting_warnings(file: &ScenarioFile) -> Vec<String> {
    let mut lines: Vec<(String, Option<usize>)> = Vec::new();
    for (k, p) in file.points.iter().enumerate() {
        let s = &p.scenario;
        let servers = s
            .services
            .iter()
            .map(|v| (format!("service `{}`", v.name), &v.server));
        let fallback = s
            .fallback
            .iter()
            .map(|f| ("the [fallback] server".to_string(), &f.server));
        for (who, server) in servers.chain(fallback) {
            let Some(autoscale) = &server.autoscale else {
                continue;
            };
            let decisions = s.time_limit.as_nanos() / autoscale.interval.as_nanos().max(1);
            if decisions > MANY_DECISIONS {
                let line = format!(
                    "{who} makes an autoscaling decision every {}: up to {decisions} per run before time_limit ({}), each an event of its own, so every run may take long",
                    autoscale.interval, s.time_limit
                );
                lines.push((line, Some(k)));
            }
        }
    }
    with_points(file, &lines)
}

/// Who calls what, for `check`: `50 clients` for one closed population and one server (v1);
/// else the populations by kind, and the services when there are several.
fn check_counts(f: &ScenarioFile) -> String {
    let s = f.first();
    let closed = s.populations.iter().filter(|p| p.is_closed()).count();
    let mut text = if s.populations.len() == 1 && closed == 1 {
        counted(console::client_range(f), "client", "clients")
    } else {
        let count =
            |kind: fn(&Source) -> bool| s.populations.iter().filter(|p| kind(&p.source)).count();
        let mut kinds = Vec::new();
        if closed > 0 {
            kinds.push(counted(
                console::client_range(f),
                "closed client",
                "closed clients",
            ));
        }
        let open = count(|k| matches!(k, Source::Open(_)));
        if open > 0 {
            kinds.push(format!("{open} open"));
        }
        let trace = count(|k| matches!(k, Source::Trace(_)));
        if trace > 0 {
            kinds.push(format!("{trace} trace"));
        }
        let n = s.populations.len();
        format!(
            "{n} population{} ({})",
            if n == 1 { "" } else { "s" },
            kinds.join(", ")
        )
    };
    if s.services.len() > 1 {
        text.push_str(&format!(", {} services", s.services.len()));
    }
    text
}
