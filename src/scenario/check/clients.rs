//! `[clients]` / `[[clients]]`: the client populations, each with exactly one source of
//! requests (closed `count`, open `rate` / `profile`, or a `trace` file), and the merge of a
//! population's `retry = { ... }` overrides into each compared strategy.

use std::ops::Range;

use toml::Spanned;

use super::Check;
use super::retry::Layer;
use crate::model::policy::Strategy;
use crate::model::population::{Open, Process, RateCurve, Trace};
use crate::model::{Closed, MAX_CLIENTS, Population, PopulationPolicy, Source};
use crate::scenario::raw::{
    RawClients, RawDuration, RawList, RawPolicy, RawPopulation, RawScenario,
};
use crate::scenario::trace::TraceProblem;
use crate::time::{SimDuration, SimTime};

/// One population table as written, with the key path that names it in messages.
pub(super) struct RawPop<'r> {
    /// `clients` for the `[clients]` table, `clients[i]` for the i-th `[[clients]]`.
    pub prefix: String,
    pub pop: &'r RawPopulation,
    /// The table's position, for "missing key" messages.
    pub span: Range<usize>,
}

/// The population tables of the file, in order (none when `clients` is absent or malformed).
pub(super) fn raw_populations(raw: &RawScenario) -> Vec<RawPop<'_>> {
    match raw.clients.as_ref() {
        None => Vec::new(),
        Some(t) => match t.get_ref() {
            RawClients::Table(p) => vec![RawPop {
                prefix: "clients".to_string(),
                pop: p,
                span: t.span(),
            }],
            RawClients::Array(all) => all
                .iter()
                .enumerate()
                .map(|(i, p)| RawPop {
                    prefix: format!("clients[{i}]"),
                    pop: p.get_ref(),
                    span: p.span(),
                })
                .collect(),
            RawClients::Bad(_) => Vec::new(),
        },
    }
}

/// What kind of population a source key makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Closed,
    Open,
    Trace,
}

impl Kind {
    fn of(key: &str) -> Kind {
        match key {
            "count" => Kind::Closed,
            "trace" => Kind::Trace,
            _ => Kind::Open,
        }
    }

    /// "an open population", for "`rate` makes an open population".
    fn long(self) -> &'static str {
        match self {
            Kind::Closed => "a closed population",
            Kind::Open => "an open population",
            Kind::Trace => "a trace population",
        }
    }

    /// "a closed one", for "... ; `count` a closed one".
    fn short(self) -> &'static str {
        match self {
            Kind::Closed => "a closed one",
            Kind::Open => "an open one",
            Kind::Trace => "a trace one",
        }
    }
}

fn placeholder() -> Population {
    Population {
        name: "clients".to_string(),
        source: Source::Closed(Closed {
            count: 1,
            start: SimDuration::ZERO,
            start_spread: SimDuration::ZERO,
            requests: 1,
            think: None,
        }),
        clients: 1,
    }
}

impl Check<'_> {
    /// Every population, in file order; a placeholder when none can be built.
    pub(super) fn populations(&mut self, raw: &RawScenario) -> Vec<Population> {
        let Some(t) = raw.clients.as_ref() else {
            self.err(
                None,
                "clients",
                "missing required table [clients] (with `count`), or [[clients]] tables",
            );
            return vec![placeholder()];
        };
        match t.get_ref() {
            RawClients::Bad(found) => {
                self.err(
                    Some(t.span()),
                    "clients",
                    format!("expected a [clients] table or [[clients]] tables, found {found}"),
                );
                return vec![placeholder()];
            }
            RawClients::Array(all) if all.is_empty() => {
                self.err(
                    Some(t.span()),
                    "clients",
                    "expected at least one [[clients]] table, found none",
                );
                return vec![placeholder()];
            }
            _ => {}
        }
        let named = matches!(t.get_ref(), RawClients::Array(_));
        let mut populations: Vec<Population> = Vec::new();
        // The closed clients of the populations so far, for the total limit.
        let mut closed: i64 = 0;
        for (i, rp) in raw_populations(raw).iter().enumerate() {
            let p = self.population(rp, named, i);
            if let Some(n) = &rp.pop.name
                && let Some(first) = populations.iter().position(|q| q.name == p.name)
            {
                self.err(
                    Some(n.span()),
                    &format!("{}.name", rp.prefix),
                    format!(
                        "expected a unique name, found \"{}\" again (also clients[{first}])",
                        p.name
                    ),
                );
            }
            if let Source::Closed(c) = &p.source {
                let before = closed;
                closed += c.count as i64;
                if closed > MAX_CLIENTS
                    && before <= MAX_CLIENTS
                    && let Some(n) = &rp.pop.count
                {
                    self.err(
                        Some(n.span()),
                        &format!("{}.count", rp.prefix),
                        format!(
                            "expected at most {MAX_CLIENTS} closed clients in all populations together, found {closed} with this one"
                        ),
                    );
                }
            }
            populations.push(p);
        }
        populations
    }

    fn population(&mut self, rp: &RawPop, named: bool, index: usize) -> Population {
        let p = rp.pop;
        let at = Some(rp.span.clone());
        let k = |f: &str| format!("{}.{f}", rp.prefix);
        let name = match &p.name {
            Some(n) => self.name(n, &k("name")),
            None if named => {
                self.missing(at.clone(), &k("name"));
                format!("clients-{index}")
            }
            None => "clients".to_string(),
        };
        if let Some(r) = &p.retry
            && let Some(n) = &r.get_ref().name
        {
            self.err(
                Some(n.span()),
                &k("retry.name"),
                format!(
                    "unknown key `name` in {}: a population's retry overrides the compared strategy's values and has no name of its own",
                    k("retry")
                ),
            );
        }

        // Exactly one source; with several, the first in this order decides the kind.
        let sources: Vec<(&str, Range<usize>)> = [
            ("count", p.count.as_ref().map(|v| v.span())),
            ("rate", p.rate.as_ref().map(|v| v.span())),
            ("profile", p.profile.as_ref().map(|v| v.span())),
            ("trace", p.trace.as_ref().map(|v| v.span())),
        ]
        .into_iter()
        .filter_map(|(key, span)| span.map(|s| (key, s)))
        .collect();
        let Some((first, _)) = sources.first().cloned() else {
            self.err(
                at,
                &rp.prefix,
                "expected one of `count` (closed), `rate` or `profile` (open), `trace`, found none of them",
            );
            return Population {
                name,
                ..placeholder()
            };
        };
        for (other, span) in &sources[1..] {
            let msg = if Kind::of(first) == Kind::of(other) {
                format!(
                    "`{first}` and `{other}` both set an open population's arrival rate: expected one of them, found both"
                )
            } else {
                format!(
                    "`{other}` makes {}; `{first}` {}: a population has exactly one source (expected one, found both)",
                    Kind::of(other).long(),
                    Kind::of(first).short()
                )
            };
            self.err(Some(span.clone()), &k(other), msg);
        }
        let kind = Kind::of(first);
        let source_text = format!("{} (`{first}`)", kind.long());
        // With two sources the kind is in doubt: other keys are not judged by it.
        let judged = sources.len() == 1;
        let only = |c: &mut Self, span: Option<Range<usize>>, key: &str, kinds: &[Kind]| {
            if let Some(span) = span
                && judged
                && !kinds.contains(&kind)
            {
                let applies = match kinds {
                    [Kind::Closed] => "closed populations (`count`)",
                    [Kind::Open] => "open populations (`rate` or `profile`)",
                    [Kind::Open, Kind::Trace] => "open and trace populations",
                    _ => "closed and open populations",
                };
                c.err(
                    Some(span),
                    &k(key),
                    format!("`{key}` applies only to {applies}, found it in {source_text}"),
                );
            }
        };
        use Kind::{Closed as C, Open as O, Trace as T};
        only(
            self,
            p.requests.as_ref().map(|v| v.span()),
            "requests",
            &[C],
        );
        only(self, p.think.as_ref().map(|v| v.span()), "think", &[C]);
        only(
            self,
            p.start_spread.as_ref().map(|v| v.span()),
            "start_spread",
            &[C],
        );
        only(self, p.start.as_ref().map(|v| v.span()), "start", &[C, O]);
        only(self, p.process.as_ref().map(|v| v.span()), "process", &[O]);
        only(self, p.end.as_ref().map(|v| v.span()), "end", &[O]);
        only(
            self,
            p.clients.as_ref().map(|v| v.span()),
            "clients",
            &[O, T],
        );

        let clients = p
            .clients
            .as_ref()
            .filter(|_| kind != Kind::Closed)
            .and_then(|n| self.int(n, &k("clients"), 1, MAX_CLIENTS))
            .unwrap_or(1) as u32;
        let source = match kind {
            Kind::Closed => Source::Closed(self.closed(p, &k)),
            Kind::Open => Source::Open(self.open(p, at, &rp.prefix)),
            Kind::Trace => match self.trace(p, &k) {
                Some(t) => Source::Trace(t),
                None => placeholder().source,
            },
        };
        let clients = match &source {
            Source::Closed(c) => c.count,
            _ => clients,
        };
        Population {
            name,
            source,
            clients,
        }
    }

    fn closed(&mut self, p: &RawPopulation, k: &dyn Fn(&str) -> String) -> Closed {
        let mut clients = Closed {
            count: 1,
            start: SimDuration::ZERO,
            start_spread: SimDuration::ZERO,
            requests: 1,
            think: None,
        };
        if let Some(n) = &p.count {
            clients.count = self.int(n, &k("count"), 1, MAX_CLIENTS).unwrap_or(1) as u32;
        }
        if let Some(s) = &p.start {
            clients.start = self.duration(s, &k("start"), false).unwrap_or_default();
        }
        if let Some(s) = &p.start_spread {
            clients.start_spread = self
                .duration(s, &k("start_spread"), false)
                .unwrap_or_default();
        }
        if let Some(r) = &p.requests {
            clients.requests = self.int(r, &k("requests"), 1, u32::MAX as i64).unwrap_or(1) as u32;
        }
        clients.think = p.think.as_ref().map(|d| self.dist(d, &k("think")));
        clients
    }

    fn open(&mut self, p: &RawPopulation, at: Option<Range<usize>>, prefix: &str) -> Open {
        let k = |f: &str| format!("{prefix}.{f}");
        let rate = match (&p.rate, &p.profile) {
            (Some(r), _) => self
                .float(
                    r,
                    &k("rate"),
                    |x| x > 0.0,
                    "a rate > 0 (requests per second)",
                )
                .map(RateCurve::constant),
            (None, Some(profile)) => self.profile(profile, &k("profile")),
            (None, None) => None,
        };
        let process = self.either(
            super::spelled(&p.process),
            &k("process"),
            ("poisson", Process::Poisson),
            ("uniform", Process::Uniform),
            Process::Poisson,
        );
        let start = p
            .start
            .as_ref()
            .and_then(|s| self.duration(s, &k("start"), false))
            .unwrap_or_default();
        let end = match &p.end {
            Some(e) => self.duration(e, &k("end"), false).and_then(|end| {
                if end <= start {
                    self.err(
                        Some(e.span()),
                        &k("end"),
                        format!("expected end > start ({start}), found {end}"),
                    );
                    None
                } else {
                    Some(end)
                }
            }),
            None => {
                self.missing_with(
                    at,
                    &k("end"),
                    format!(
                        "missing required key `end` in {prefix}: an open population needs the time its arrivals stop"
                    ),
                    false,
                );
                None
            }
        };
        Open {
            rate: rate.unwrap_or_else(|| RateCurve::constant(1.0)),
            process,
            start: SimTime(start.0),
            end: SimTime(end.map_or(start.0.saturating_add(1), |e| e.0)),
        }
    }

    /// `profile = [["0s", 100], ["60s", 400], ...]`: times non-decreasing, rates >= 0 and not
    /// all zero. `None` when anything is wrong (reported).
    fn profile(&mut self, v: &Spanned<RawList>, key: &str) -> Option<RateCurve> {
        let example = "[[\"0s\", 100], [\"60s\", 400]]";
        let items = match v.get_ref() {
            RawList::Items(items) => items,
            RawList::Bad(found) => {
                self.err(
                    Some(v.span()),
                    key,
                    format!(
                        "expected a list of [time, rate] points such as {example}, found {found}"
                    ),
                );
                return None;
            }
        };
        if items.is_empty() {
            self.err(
                Some(v.span()),
                key,
                "expected at least one [time, rate] point, found none",
            );
            return None;
        }
        let mut points = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let at = Some(item.span());
            let k = format!("{key}[{i}]");
            let Some((t, r)) = self.pair(item, &k, "a [time, rate] point such as [\"60s\", 400]")
            else {
                ok = false;
                continue;
            };
            let time = match RawDuration::deserialize_value(t) {
                Some(d) => self.duration_at(&d, at.clone(), &k, false),
                None => {
                    self.err(
                        at.clone(),
                        &k,
                        format!("expected a time with a unit such as \"60s\", found {t}"),
                    );
                    None
                }
            };
            let rate = match super::number(r) {
                Some(x) if x.is_finite() && x >= 0.0 => Some(x),
                _ => {
                    self.err(
                        at.clone(),
                        &k,
                        format!("expected a rate >= 0 (requests per second), found {r}"),
                    );
                    None
                }
            };
            let (Some(time), Some(rate)) = (time, rate) else {
                ok = false;
                continue;
            };
            let time = SimTime(time.0);
            if let Some(&(before, _)) = points.last()
                && time < before
            {
                self.err(
                    at,
                    &k,
                    format!(
                        "expected times in non-decreasing order (>= {}), found {}",
                        SimDuration(before.0),
                        SimDuration(time.0)
                    ),
                );
                ok = false;
                continue;
            }
            points.push((time, rate));
        }
        if ok && points.iter().all(|&(_, r)| r == 0.0) {
            self.err(
                Some(v.span()),
                key,
                "expected at least one rate > 0, found only zero rates",
            );
            ok = false;
        }
        ok.then(|| RateCurve::profile(points))
    }

    fn trace(&mut self, p: &RawPopulation, k: &dyn Fn(&str) -> String) -> Option<Trace> {
        let written = p.trace.as_ref()?;
        let file = written.get_ref();
        match self.traces.get(file) {
            Ok(times) => Some(Trace::new(file.clone(), times)),
            Err(TraceProblem::Unreadable(why)) => {
                let shown = self.traces.path(file).display().to_string();
                self.err(
                    Some(written.span()),
                    &k("trace"),
                    format!(
                        "expected a readable CSV file (paths are relative to the scenario's folder), found \"{shown}\": {why}"
                    ),
                );
                None
            }
            Err(TraceProblem::Invalid(problems)) => {
                for e in problems {
                    if !self.errors.contains(&e) {
                        self.errors.push(e);
                    }
                }
                None
            }
        }
    }

    /// `population_policies[s][p]`: strategy `s` with population `p`'s `retry` overrides
    /// merged key by key (population > strategy > `[retry]`).
    pub(super) fn population_policies(
        &mut self,
        raw: &RawScenario,
        strategies: &[Strategy],
        retry: &RawPolicy,
        has_fallback: bool,
    ) -> Vec<Vec<PopulationPolicy>> {
        let pops = raw_populations(raw);
        let mut all = Vec::new();
        for (s, strategy) in strategies.iter().enumerate() {
            let mut row = Vec::new();
            for rp in &pops {
                let Some(over) = &rp.pop.retry else {
                    row.push(PopulationPolicy {
                        strategy: strategy.clone(),
                        own_budget: false,
                        own_breaker: false,
                        own_limiter: false,
                    });
                    continue;
                };
                let t = &raw.strategy[s];
                let layers = [
                    Layer {
                        policy: over.get_ref(),
                        prefix: format!("{}.retry", rp.prefix),
                    },
                    Layer {
                        policy: t.get_ref(),
                        prefix: format!("strategy[{s}]"),
                    },
                    Layer {
                        policy: retry,
                        prefix: "retry".to_string(),
                    },
                ];
                let merged = self.policy(
                    &layers,
                    Some(t.span()),
                    &format!("strategy[{s}]"),
                    true,
                    has_fallback,
                );
                row.push(PopulationPolicy {
                    strategy: Strategy {
                        name: strategy.name.clone(),
                        ..merged
                    },
                    own_budget: over.get_ref().budget.is_some(),
                    own_breaker: over.get_ref().breaker.is_some(),
                    own_limiter: over.get_ref().client_rate_limiter.is_some(),
                });
            }
            all.push(row);
        }
        all
    }
}
