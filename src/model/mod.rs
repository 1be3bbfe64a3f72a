//! The validated scenario: typed, with defaults resolved and every invariant checked once.
//!
//! [`Scenario::from_raw`] turns a [`RawScenario`] into a [`Scenario`] or into *all* the
//! problems found, each with file, line:column, key, what was expected and what was found.
//! After that, nothing downstream re-checks input: the engine relies on the invariants
//! documented on each type (e.g. `cap >= base`, outages sorted and disjoint).

pub mod backoff;
pub mod dist;
pub mod outcome;
pub mod policy;
pub mod population;
pub mod service;

pub use population::{Closed, Population, PopulationPolicy, Source};
pub use service::{
    Discipline, Hint, Occ, Outage, OutageKind, RateLimiter, ServerSpec, ServiceRetry, ServiceSpec,
};

use std::ops::Range;

use toml::Spanned;

use crate::error::{ScenarioError, ScenarioErrors};
use crate::scenario::error_at;
use crate::scenario::raw::{
    RawBreaker, RawBudget, RawDist, RawDuration, RawJitter, RawOutage, RawPolicy, RawScenario,
    RawServer,
};
use crate::time::{SimDuration, SimTime};
use backoff::{Backoff, Jitter};
use dist::Dist;
use outcome::{GiveUpReason, ReasonSet, Status, StatusSet};
use policy::{
    Beyond, BreakerSpec, BudgetKind, BudgetSpec, RateLimitLadder, RetryAfterPolicy, RetryPolicy,
    Scope, Strategy,
};

/// A fully validated scenario (one sweep point, when the file has a `[sweep]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `[a-z0-9_-]{1,64}`; names the output folder.
    pub name: String,
    /// Free text for reports.
    pub description: String,
    /// The base seed every run's stream is derived from.
    pub seed: u64,
    /// Runs per strategy (>= 1).
    pub replications: u32,
    /// Simulated-time safety stop (> 0).
    pub time_limit: SimDuration,
    /// One or more client populations with unique names, in file order (v1's `[clients]`
    /// is one closed population named `clients`).
    pub populations: Vec<Population>,
    /// `[network].latency`: the default one-way latency to a service.
    pub latency: Dist,
    /// One or more services; clients call `services[0]`. v1's `[server]` is one service
    /// named `server`.
    pub services: Vec<ServiceSpec>,
    /// The fallback server, when `[fallback]` is present (client requests only).
    pub fallback: Option<FallbackSpec>,
    /// Time-series resolution (> 0).
    pub bucket: SimDuration,
    /// `[metrics] trigger_end`: where recovery is measured from (default: the end of the
    /// last outage or capacity cut of any service).
    pub trigger_end: Option<SimTime>,
    /// One or more strategies with unique names, in file order.
    pub strategies: Vec<Strategy>,
    /// `population_policies[strategy][population]`: the compared strategy with each
    /// population's overrides merged.
    pub population_policies: Vec<Vec<PopulationPolicy>>,
}

/// `[fallback]`: where requests that would give up for a `fallback_on` reason are sent once.
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackSpec {
    /// The fallback server.
    pub server: ServerSpec,
    /// One-way latency to it (default: `[network].latency`).
    pub latency: Dist,
}

impl Scenario {
    /// Validates a parsed file. `file` names it in messages; `src` is its text (for positions).
    pub fn from_raw(raw: &RawScenario, file: &str, src: &str) -> Result<Scenario, ScenarioErrors> {
        let mut c = Check {
            file,
            src,
            errors: Vec::new(),
            attempts_reported: false,
        };
        let scenario = c.scenario(raw);
        if c.errors.is_empty() {
            Ok(scenario)
        } else {
            Err(ScenarioErrors(c.errors))
        }
    }

    /// The service clients call (`services[0]`).
    pub fn entry(&self) -> &ServiceSpec {
        &self.services[0]
    }

    /// Clients of the closed populations.
    pub fn closed_clients(&self) -> u64 {
        self.populations
            .iter()
            .map(|p| match &p.source {
                Source::Closed(c) => c.count as u64,
                _ => 0,
            })
            .sum()
    }

    /// Logical requests of the closed populations (clients x requests each).
    pub fn closed_requests(&self) -> u64 {
        self.populations
            .iter()
            .map(|p| match &p.source {
                Source::Closed(c) => c.count as u64 * c.requests as u64,
                _ => 0,
            })
            .sum()
    }

    /// Whether some population is open or a trace (work keeps arriving).
    pub fn has_open_work(&self) -> bool {
        self.populations.iter().any(|p| !p.is_closed())
    }

    /// Where recovery is measured from: `[metrics] trigger_end`, else the end of the last
    /// outage or capacity cut of any service; `None` when there is no trigger.
    pub fn trigger(&self) -> Option<SimTime> {
        self.trigger_end.or_else(|| {
            self.services
                .iter()
                .filter_map(|s| s.server.trigger_end())
                .max()
        })
    }

    /// The policy of the downstream calls of service `service` under strategy `strategy`.
    pub fn service_policy(&self, strategy: usize, service: usize) -> &Strategy {
        match &self.services[service].retry {
            ServiceRetry::Strategy => &self.strategies[strategy],
            ServiceRetry::Fixed(s) => s,
        }
    }
}

/// Most time-series buckets a run may need (`time_limit / metrics.bucket`): 40 bytes each, so
/// at most ~400 MB per run in the worst case.
pub const MAX_BUCKETS: u64 = 10_000_000;

/// The largest client population: each client's state is 64 bytes and every client has an
/// event in flight, so this is about 5 GB per run in progress; more would fail to allocate.
pub const MAX_CLIENTS: i64 = 50_000_000;

/// Checks a name used for folders and CSV values: `[a-z0-9_-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Collects problems while building the typed scenario. Each helper records an error and
/// returns `None` (callers substitute a placeholder and carry on), so one pass finds them all.
struct Check<'a> {
    file: &'a str,
    src: &'a str,
    errors: Vec<ScenarioError>,
    /// A missing `max_attempts` was reported once for [retry]; strategies need not repeat it.
    attempts_reported: bool,
}

/// Where a table starts, for "missing key" messages; `None` when the table itself is absent.
type At = Option<Range<usize>>;

impl Check<'_> {
    fn err(&mut self, span: At, key: &str, msg: impl Into<String>) {
        let e = error_at(self.file, self.src, span, key, msg.into());
        // A [retry] default is checked once per strategy that inherits it: report it once.
        if !self.errors.contains(&e) {
            self.errors.push(e);
        }
    }

    /// How a value was written, for "found ...": the source text when `span` is exactly that
    /// value (a quoted string), else `fallback`.
    fn written(&self, span: &At, fallback: impl std::fmt::Display) -> String {
        span.as_ref()
            .and_then(|s| self.src.get(s.clone()))
            .filter(|t| t.len() <= 40 && (t.starts_with('"') || t.starts_with('\'')))
            .map(str::to_string)
            .unwrap_or_else(|| format!("\"{fallback}\""))
    }

    fn missing(&mut self, span: At, key: &str) {
        let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
        let msg = if table.is_empty() {
            format!("missing required key `{leaf}`")
        } else {
            format!("missing required key `{leaf}` in {table}")
        };
        self.err(span, key, msg);
    }

    fn int(&mut self, v: &Spanned<i64>, key: &str, min: i64, max: i64) -> Option<i64> {
        let x = *v.get_ref();
        if x < min || x > max {
            let expected = if max == i64::MAX || (x < min && max as u64 == u32::MAX as u64) {
                format!("an integer >= {min}")
            } else {
                format!("an integer from {min} to {max}")
            };
            self.err(
                Some(v.span()),
                key,
                format!("expected {expected}, found {x}"),
            );
            None
        } else {
            Some(x)
        }
    }

    fn float(
        &mut self,
        v: &Spanned<f64>,
        key: &str,
        ok: fn(f64) -> bool,
        expected: &str,
    ) -> Option<f64> {
        let x = *v.get_ref();
        if x.is_finite() && ok(x) {
            Some(x)
        } else {
            self.err(
                Some(v.span()),
                key,
                format!("expected {expected}, found {x}"),
            );
            None
        }
    }

    /// A duration; `positive` refuses zero. The words `none` and `auto` are refused.
    fn duration_at(
        &mut self,
        v: &RawDuration,
        span: At,
        key: &str,
        positive: bool,
    ) -> Option<SimDuration> {
        let expected = if positive {
            "a duration > 0 with a unit, such as \"100ms\""
        } else {
            "a duration with a unit, such as \"100ms\""
        };
        match v {
            RawDuration::Given(d) if positive && d.is_zero() => {
                let found = self.written(&span, d);
                self.err(span, key, format!("expected {expected}, found {found}"));
                None
            }
            RawDuration::Given(d) => Some(*d),
            RawDuration::None => {
                self.err(span, key, format!("expected {expected}, found \"none\""));
                None
            }
            RawDuration::Auto => {
                self.err(span, key, format!("expected {expected}, found \"auto\""));
                None
            }
            RawDuration::Bad(found) => {
                self.err(span, key, format!("expected {expected}, {found}"));
                None
            }
        }
    }

    fn duration(
        &mut self,
        v: &Spanned<RawDuration>,
        key: &str,
        positive: bool,
    ) -> Option<SimDuration> {
        self.duration_at(v.get_ref(), Some(v.span()), key, positive)
    }

    /// An optional limit: absent or `"none"` is no limit, else a duration > 0.
    fn limit(&mut self, v: Option<&Spanned<RawDuration>>, key: &str) -> Option<SimDuration> {
        match v {
            None => None,
            Some(s) if *s.get_ref() == RawDuration::None => None,
            Some(s) => self.duration(s, key, true),
        }
    }

    /// A server hint: `"none"`, `"auto"`, or a duration > 0.
    fn hint(&mut self, v: Option<&Spanned<RawDuration>>, key: &str) -> Hint {
        match v.map(|s| (s.get_ref(), s.span())) {
            None | Some((RawDuration::None, _)) => Hint::None,
            Some((RawDuration::Auto, _)) => Hint::Auto,
            Some((RawDuration::Given(d), _)) if !d.is_zero() => Hint::Fixed(*d),
            Some((other, span)) => {
                let found = match other {
                    RawDuration::Bad(m) => m.clone(),
                    _ => format!("found {}", self.written(&Some(span.clone()), "0s")),
                };
                self.err(
                    Some(span),
                    key,
                    format!("expected \"none\", \"auto\" or a duration > 0, {found}"),
                );
                Hint::None
            }
        }
    }

    fn dist(&mut self, v: &Spanned<RawDist>, key: &str) -> Dist {
        let span = Some(v.span());
        let d = |c: &mut Self, x: &RawDuration, field: &str, positive: bool| {
            c.duration_at(x, span.clone(), &format!("{key}.{field}"), positive)
                .unwrap_or(SimDuration::ZERO)
        };
        match v.get_ref() {
            RawDist::Constant { value } => Dist::Constant(d(self, value, "value", false)),
            RawDist::Uniform { min, max } => {
                let (lo, hi) = (d(self, min, "min", false), d(self, max, "max", false));
                if hi < lo {
                    self.err(
                        span,
                        &format!("{key}.max"),
                        format!("expected max >= min ({lo}), found {hi}"),
                    );
                }
                Dist::Uniform {
                    min: lo,
                    max: hi.max(lo),
                }
            }
            RawDist::Normal { mean, sd } => Dist::Normal {
                mean: d(self, mean, "mean", false),
                sd: d(self, sd, "sd", false),
            },
            RawDist::Exponential { mean } => Dist::Exponential {
                mean: d(self, mean, "mean", true),
            },
            RawDist::Lognormal { median, sigma } => {
                let median = d(self, median, "median", true).max(SimDuration(1));
                if !(sigma.is_finite() && *sigma >= 0.0) {
                    self.err(
                        span,
                        &format!("{key}.sigma"),
                        format!("expected a number >= 0, found {sigma}"),
                    );
                }
                Dist::LogNormal {
                    median,
                    sigma: sigma.abs().min(1e3),
                }
            }
        }
    }

    fn name(&mut self, v: &Spanned<String>, key: &str) -> String {
        let name = v.get_ref();
        if !valid_name(name) {
            self.err(
                Some(v.span()),
                key,
                format!(
                    "expected 1 to 64 characters from a-z, 0-9, '_' and '-' (it names files), found \"{name}\""
                ),
            );
        }
        name.clone()
    }

    fn scenario(&mut self, raw: &RawScenario) -> Scenario {
        let name = match &raw.name {
            Some(n) => self.name(n, "name"),
            None => {
                self.missing(Some(0..0), "name");
                String::new()
            }
        };
        let seed = raw
            .seed
            .as_ref()
            .and_then(|s| self.int(s, "seed", 0, i64::MAX))
            .unwrap_or(1) as u64;
        let replications = raw
            .replications
            .as_ref()
            .and_then(|s| self.int(s, "replications", 1, 1_000_000))
            .unwrap_or(1) as u32;
        let time_limit = raw
            .time_limit
            .as_ref()
            .and_then(|d| self.duration(d, "time_limit", true))
            .unwrap_or(SimDuration::from_secs(3600));

        let clients = self.clients(raw);
        let latency = match raw.network.as_ref() {
            None => {
                self.err(
                    None,
                    "network",
                    "missing required table [network] (with `latency`)",
                );
                Dist::Constant(SimDuration::ZERO)
            }
            Some(n) => match &n.get_ref().latency {
                Some(l) => self.dist(l, "network.latency"),
                None => {
                    self.missing(Some(n.span()), "network.latency");
                    Dist::Constant(SimDuration::ZERO)
                }
            },
        };
        let server = match raw.server.as_ref() {
            None => {
                self.err(None, "server", "missing required table [server]");
                placeholder_server()
            }
            Some(s) => {
                if let Some(l) = &s.get_ref().latency {
                    self.err(
                        Some(l.span()),
                        "server.latency",
                        "unknown key `latency` in [server]: the primary server's latency is [network].latency",
                    );
                }
                self.server(s, "server")
            }
        };
        let fallback = raw.fallback.as_ref().map(|f| FallbackSpec {
            server: self.server(f, "fallback"),
            latency: match &f.get_ref().latency {
                Some(l) => self.dist(l, "fallback.latency"),
                None => latency.clone(),
            },
        });
        let bucket_key = raw
            .metrics
            .as_ref()
            .and_then(|m| m.get_ref().bucket.as_ref());
        let bucket = bucket_key
            .and_then(|b| self.duration(b, "metrics.bucket", true))
            .unwrap_or(SimDuration::from_millis(100));
        // A run that reaches time_limit holds time_limit / bucket buckets in memory (and in
        // timeseries.csv): a typo such as bucket = "1ns" must be refused, not exhaust memory.
        let buckets = time_limit.as_nanos().div_ceil(bucket.as_nanos().max(1));
        if buckets > MAX_BUCKETS {
            let (span, key) = match (bucket_key, &raw.time_limit) {
                (Some(b), _) => (Some(b.span()), "metrics.bucket"),
                (None, Some(t)) => (Some(t.span()), "time_limit"),
                (None, None) => (None, "metrics.bucket"),
            };
            self.err(
                span,
                key,
                format!(
                    "expected at most {MAX_BUCKETS} time-series buckets (time_limit / metrics.bucket), found {buckets} ({time_limit} / {bucket}): raise metrics.bucket or lower time_limit"
                ),
            );
        }

        let defaults = RawPolicy::default();
        let retry = raw.retry.as_ref().map(|r| r.get_ref()).unwrap_or(&defaults);
        if let Some(n) = &retry.name {
            self.err(
                Some(n.span()),
                "retry.name",
                "unknown key `name` in [retry]: strategy names belong in [[strategy]]",
            );
        }
        if raw.strategy.is_empty() {
            self.err(
                None,
                "strategy",
                "expected at least one [[strategy]] table, found none",
            );
        }
        // max_attempts usually lives in [retry]: when no strategy sets it either, say so once
        // there rather than once per strategy.
        if retry.max_attempts.is_none()
            && !raw.strategy.is_empty()
            && raw
                .strategy
                .iter()
                .all(|s| s.get_ref().max_attempts.is_none())
        {
            self.err(
                raw.retry.as_ref().map(|r| r.span()),
                "retry.max_attempts",
                "missing required key `max_attempts` in [retry] (or in every [[strategy]])",
            );
            self.attempts_reported = true;
        }
        if let Some(r) = &raw.retry {
            self.strategy(None, r, &defaults, fallback.is_some());
        }
        let mut strategies: Vec<Strategy> = Vec::new();
        for (i, s) in raw.strategy.iter().enumerate() {
            let strategy = self.strategy(Some(i), s, retry, fallback.is_some());
            if let Some(first) = strategies.iter().position(|t| t.name == strategy.name)
                && let Some(n) = &s.get_ref().name
            {
                self.err(
                    Some(n.span()),
                    &format!("strategy[{i}].name"),
                    format!(
                        "expected a unique name, found \"{}\" again (also strategy[{first}])",
                        strategy.name
                    ),
                );
            }
            strategies.push(strategy);
        }

        let population_policies = strategies
            .iter()
            .map(|s| {
                vec![PopulationPolicy {
                    strategy: s.clone(),
                    own_budget: false,
                    own_breaker: false,
                }]
            })
            .collect();
        let services = vec![ServiceSpec {
            name: "server".to_string(),
            server,
            latency: latency.clone(),
            calls: Vec::new(),
            retry: ServiceRetry::Fixed(Box::new(no_retry())),
            propagate_deadline: false,
        }];
        Scenario {
            name,
            description: raw.description.clone().unwrap_or_default(),
            seed,
            replications,
            time_limit,
            populations: vec![clients],
            latency,
            services,
            fallback,
            bucket,
            trigger_end: None,
            strategies,
            population_policies,
        }
    }

    fn clients(&mut self, raw: &RawScenario) -> Population {
        let mut clients = Closed {
            count: 1,
            start: SimDuration::ZERO,
            start_spread: SimDuration::ZERO,
            requests: 1,
            think: None,
        };
        let population = |c: Closed| Population {
            name: "clients".to_string(),
            clients: c.count,
            source: Source::Closed(c),
        };
        let Some(t) = raw.clients.as_ref() else {
            self.err(
                None,
                "clients",
                "missing required table [clients] (with `count`)",
            );
            return population(clients);
        };
        let c = t.get_ref();
        match &c.count {
            Some(n) => {
                clients.count = self.int(n, "clients.count", 1, MAX_CLIENTS).unwrap_or(1) as u32
            }
            None => self.missing(Some(t.span()), "clients.count"),
        }
        if let Some(s) = &c.start {
            clients.start = self.duration(s, "clients.start", false).unwrap_or_default();
        }
        if let Some(s) = &c.start_spread {
            clients.start_spread = self
                .duration(s, "clients.start_spread", false)
                .unwrap_or_default();
        }
        if let Some(r) = &c.requests {
            clients.requests = self
                .int(r, "clients.requests", 1, u32::MAX as i64)
                .unwrap_or(1) as u32;
        }
        clients.think = c.think.as_ref().map(|d| self.dist(d, "clients.think"));
        population(clients)
    }

    fn server(&mut self, t: &Spanned<RawServer>, table: &str) -> ServerSpec {
        let s = t.get_ref();
        let key = |k: &str| format!("{table}.{k}");
        // An OCC server decides each write on arrival: slots and service time do not apply.
        let occ = s.occ.unwrap_or(false);
        let occ_mode = if occ { Occ::ReadWrite } else { Occ::Off };
        let concurrency = match &s.concurrency {
            Some(n) => self
                .int(n, &key("concurrency"), 1, u32::MAX as i64)
                .unwrap_or(1) as u32,
            None if occ => 1,
            None => {
                self.missing(Some(t.span()), &key("concurrency"));
                1
            }
        };
        let queue = s
            .queue
            .as_ref()
            .and_then(|q| self.int(q, &key("queue"), 0, u32::MAX as i64))
            .unwrap_or(0) as u32;
        let service = match &s.service {
            Some(d) => self.dist(d, &key("service")),
            None if occ => Dist::Constant(SimDuration::ZERO),
            None => {
                self.missing(Some(t.span()), &key("service"));
                Dist::Constant(SimDuration::ZERO)
            }
        };
        let mut outages: Vec<(Outage, Range<usize>, usize)> = s
            .outages
            .iter()
            .enumerate()
            .filter_map(|(i, o)| {
                self.outage(o, &format!("{table}.outages[{i}]"))
                    .map(|x| (x, o.span(), i))
            })
            .collect();
        outages.sort_by_key(|(o, _, _)| o.start);
        // Sorted by start, a window overlaps an earlier one iff it starts before the latest
        // end seen so far (comparing neighbours only would miss one long window).
        let mut latest: Option<(SimTime, SimTime, usize)> = None;
        for (b, span, j) in &outages {
            if let Some((start, end, i)) = latest
                && b.start < end
            {
                self.err(
                    Some(span.clone()),
                    &format!("{table}.outages[{j}]"),
                    format!(
                        "expected outages that do not overlap, found [{}, {}) overlapping {table}.outages[{i}] [{}, {})",
                        SimDuration(b.start.0),
                        SimDuration(b.end.0),
                        SimDuration(start.0),
                        SimDuration(end.0),
                    ),
                );
            }
            if latest.is_none_or(|(_, end, _)| b.end > end) {
                latest = Some((b.start, b.end, *j));
            }
        }
        let rate_limit = s.rate_limit.as_ref().map(|r| {
            let rl = r.get_ref();
            let rate = match &rl.rate {
                Some(v) => self
                    .float(
                        v,
                        &key("rate_limit.rate"),
                        |x| x > 0.0,
                        "a rate > 0 (tokens per second)",
                    )
                    .unwrap_or(1.0),
                None => {
                    self.missing(Some(r.span()), &key("rate_limit.rate"));
                    1.0
                }
            };
            let burst = rl
                .burst
                .as_ref()
                .and_then(|v| self.float(v, &key("rate_limit.burst"), |x| x >= 1.0, "a burst >= 1"))
                .unwrap_or(rate.max(1.0));
            RateLimiter {
                rate,
                burst,
                retry_after: self.hint(rl.retry_after.as_ref(), &key("rate_limit.retry_after")),
            }
        });
        ServerSpec {
            concurrency,
            queue,
            service,
            outages: outages.into_iter().map(|(o, _, _)| o).collect(),
            rate_limit,
            retry_after: self.hint(s.retry_after.as_ref(), &key("retry_after")),
            client_error_rate: s
                .client_error_rate
                .as_ref()
                .and_then(|v| {
                    self.float(
                        v,
                        &key("client_error_rate"),
                        |x| (0.0..=1.0).contains(&x),
                        "a share in [0, 1]",
                    )
                })
                .unwrap_or(0.0),
            occ: occ_mode,
            ..ServerSpec::plain(concurrency, queue, Dist::Constant(SimDuration::ZERO))
        }
    }

    fn outage(&mut self, t: &Spanned<RawOutage>, key: &str) -> Option<Outage> {
        let o = t.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        let start = match &o.start {
            Some(d) => self.duration(d, &k("start"), false),
            None => {
                self.missing(Some(t.span()), &k("start"));
                None
            }
        };
        let end = match &o.end {
            Some(d) => self.duration(d, &k("end"), false),
            None => {
                self.missing(Some(t.span()), &k("end"));
                None
            }
        };
        let kind_word = o
            .kind
            .as_ref()
            .map(|k| k.get_ref().as_str())
            .unwrap_or("down");
        let only_for = |c: &mut Self, present: bool, field: &str, kind: &str| {
            if present && kind_word != kind {
                c.err(
                    Some(t.span()),
                    &k(field),
                    format!(
                        "`{field}` applies only to kind = \"{kind}\", found kind = \"{kind_word}\""
                    ),
                );
            }
        };
        only_for(self, o.error_rate.is_some(), "error_rate", "errors");
        only_for(self, o.slowdown.is_some(), "slowdown", "slow");
        only_for(self, o.retry_after.is_some(), "retry_after", "down");
        let kind = match kind_word {
            "down" => OutageKind::Down,
            "unreachable" => OutageKind::Unreachable,
            "errors" => OutageKind::Errors(match &o.error_rate {
                Some(v) => self
                    .float(
                        v,
                        &k("error_rate"),
                        |x| (0.0..=1.0).contains(&x),
                        "a share in [0, 1]",
                    )
                    .unwrap_or(0.0),
                None => {
                    self.missing(Some(t.span()), &k("error_rate"));
                    0.0
                }
            }),
            "slow" => OutageKind::Slow(match &o.slowdown {
                Some(v) => self
                    .float(v, &k("slowdown"), |x| x >= 1.0, "a factor >= 1")
                    .unwrap_or(1.0),
                None => {
                    self.missing(Some(t.span()), &k("slowdown"));
                    1.0
                }
            }),
            other => {
                let span = o.kind.as_ref().map(|k| k.span());
                self.err(
                    span,
                    &k("kind"),
                    format!("expected \"down\", \"unreachable\", \"errors\" or \"slow\", found \"{other}\""),
                );
                OutageKind::Down
            }
        };
        let retry_after = self.hint(o.retry_after.as_ref(), &k("retry_after"));
        let (start, end) = (start?, end?);
        if end <= start {
            self.err(
                o.end.as_ref().map(|e| e.span()),
                &k("end"),
                format!("expected end > start ({start}), found {end}"),
            );
            return None;
        }
        Some(Outage {
            start: SimTime(start.0),
            end: SimTime(end.0),
            kind,
            retry_after,
        })
    }

    /// Builds strategy `i` from its table `t` and the `[retry]` defaults. With `i = None`,
    /// checks the `[retry]` table `t` on its own instead: its values are refused even when
    /// every strategy overrides them, and keys only a strategy must have are not required.
    fn strategy(
        &mut self,
        i: Option<usize>,
        t: &Spanned<RawPolicy>,
        retry: &RawPolicy,
        has_fallback: bool,
    ) -> Strategy {
        let s = t.get_ref();
        let at = Some(t.span());
        let prefix = match i {
            Some(i) => format!("strategy[{i}]"),
            None => "retry".to_string(),
        };
        let required = i.is_some();
        // A strategy value overrides the [retry] default; the key names where it came from.
        macro_rules! pick {
            ($field:ident) => {
                match (&s.$field, &retry.$field) {
                    (Some(v), _) => Some((v, format!("{prefix}.{}", stringify!($field)))),
                    (None, Some(v)) => Some((v, format!("retry.{}", stringify!($field)))),
                    (None, None) => None,
                }
            };
        }
        let name = match (&s.name, i) {
            (Some(n), Some(_)) => self.name(n, &format!("{prefix}.name")),
            (None, Some(i)) => {
                self.missing(at.clone(), &format!("{prefix}.name"));
                format!("strategy-{i}")
            }
            // `name` under [retry] is refused by the caller.
            (_, None) => String::new(),
        };
        // `None` when missing or invalid (already reported): then cap >= base is not checked.
        let required_duration = |c: &mut Self,
                                 v: Option<(&Spanned<RawDuration>, String)>,
                                 field: &str| match v {
            Some((v, key)) => c.duration(v, &key, false),
            None if !required => None,
            None => {
                c.err(
                        at.clone(),
                        &format!("{prefix}.{field}"),
                        format!(
                            "missing required key `{field}` in {prefix} (set it in this [[strategy]] or in [retry])"
                        ),
                    );
                None
            }
        };
        let base = required_duration(self, pick!(base), "base");
        let cap = required_duration(self, pick!(cap), "cap");
        if let (Some(base), Some(cap)) = (base, cap)
            && required
            && cap < base
            && let Some((v, key)) = pick!(cap)
        {
            self.err(
                Some(v.span()),
                &key,
                format!("expected cap >= base ({base}), found {cap}"),
            );
        }
        let (base, cap) = (base.unwrap_or_default(), cap.unwrap_or_default());
        let multiplier = pick!(multiplier)
            .and_then(|(v, key)| self.float(v, &key, |x| x >= 1.0, "a multiplier >= 1"))
            .unwrap_or(2.0);
        let jitter = match pick!(jitter) {
            None => Jitter::None,
            Some((v, key)) => self.jitter(v, &key),
        };
        let max_attempts = match pick!(max_attempts) {
            Some((v, key)) => self.int(v, &key, 1, u16::MAX as i64).unwrap_or(1) as u32,
            None if self.attempts_reported || !required => 1,
            None => {
                self.err(
                    at.clone(),
                    &format!("{prefix}.max_attempts"),
                    format!(
                        "missing required key `max_attempts` in {prefix} (set it in [retry] or in this [[strategy]])"
                    ),
                );
                1
            }
        };
        let timeout = pick!(timeout).and_then(|(v, key)| self.limit(Some(v), &key));
        let timeout_multiplier = pick!(timeout_multiplier)
            .and_then(|(v, key)| self.float(v, &key, |x| x >= 1.0, "a multiplier >= 1"))
            .unwrap_or(1.0);
        let connect_timeout = pick!(connect_timeout).and_then(|(v, key)| self.limit(Some(v), &key));
        let deadline = pick!(deadline).and_then(|(v, key)| self.limit(Some(v), &key));
        let retry_on = match pick!(retry_on) {
            None => StatusSet::all_retryable(),
            Some((v, key)) => self.retry_on(v, &key),
        };
        let retry_after = match pick!(retry_after) {
            None => RetryAfterPolicy::default(),
            Some((v, key)) => {
                let r = v.get_ref();
                let default = RetryAfterPolicy::default();
                let beyond = match r.beyond.as_ref().map(|b| (b.get_ref().as_str(), b.span())) {
                    None | Some(("ignore", _)) => Beyond::Ignore,
                    Some(("clamp", _)) => Beyond::Clamp,
                    Some((other, span)) => {
                        self.err(
                            Some(span),
                            &format!("{key}.beyond"),
                            format!("expected \"ignore\" or \"clamp\", found \"{other}\""),
                        );
                        Beyond::Ignore
                    }
                };
                RetryAfterPolicy {
                    honor: r.honor.unwrap_or(true),
                    max: r
                        .max
                        .as_ref()
                        .map(|m| {
                            self.duration(m, &format!("{key}.max"), true)
                                .unwrap_or(default.max)
                        })
                        .unwrap_or(default.max),
                    beyond,
                }
            }
        };
        let rate_limit = pick!(rate_limit).map(|(v, key)| {
            let r = v.get_ref();
            let max_retries = r
                .max_retries
                .as_ref()
                .and_then(|m| self.int(m, &format!("{key}.max_retries"), 0, u16::MAX as i64))
                .unwrap_or(5) as u32;
            let escalate_after = match &r.escalate_after {
                None => max_retries,
                Some(e) => {
                    let x = self
                        .int(e, &format!("{key}.escalate_after"), 0, u16::MAX as i64)
                        .unwrap_or(0) as u32;
                    if x > max_retries {
                        self.err(
                            Some(e.span()),
                            &format!("{key}.escalate_after"),
                            format!(
                                "expected escalate_after <= max_retries ({max_retries}), found {x}"
                            ),
                        );
                    }
                    x
                }
            };
            let wait =
                |c: &mut Self, d: &Option<Spanned<RawDuration>>, field: &str, default: u64| {
                    d.as_ref()
                        .and_then(|d| c.duration(d, &format!("{key}.{field}"), true))
                        .unwrap_or(SimDuration::from_secs(default))
                };
            RateLimitLadder {
                max_retries,
                escalate_after,
                default_wait: wait(self, &r.default_wait, "default_wait", 5),
                max_wait: wait(self, &r.max_wait, "max_wait", 60),
            }
        });
        let budget = pick!(budget).map(|(v, key)| self.budget(v, &key));
        let breaker = pick!(breaker).map(|(v, key)| self.breaker(v, &key));
        let fallback_on = match pick!(fallback_on) {
            None => ReasonSet::default(),
            Some((v, key)) => {
                let mut set = ReasonSet::default();
                for r in v.get_ref() {
                    match GiveUpReason::parse_fallback(r.get_ref()) {
                        Some(reason) => set.insert(reason),
                        None => self.err(
                            Some(r.span()),
                            &key,
                            format!(
                                "expected one of \"attempts\", \"deadline\", \"non_retryable\", \"rate_limit_escalation\", \"budget\", \"breaker_open\", found \"{}\"",
                                r.get_ref()
                            ),
                        ),
                    }
                }
                if !set.is_empty() && !has_fallback {
                    self.err(
                        Some(v.span()),
                        &key,
                        "`fallback_on` needs a [fallback] table describing the fallback server, found none",
                    );
                }
                set
            }
        };
        Strategy {
            name,
            backoff: Backoff {
                base,
                cap: cap.max(base),
                multiplier,
                jitter,
            },
            retry: RetryPolicy {
                max_attempts,
                timeout,
                timeout_multiplier,
                connect_timeout,
                deadline,
                retry_on,
                retry_after,
                rate_limit,
                budget,
                breaker,
                fallback_on,
            },
        }
    }

    fn jitter(&mut self, v: &Spanned<RawJitter>, key: &str) -> Jitter {
        let span = Some(v.span());
        match v.get_ref() {
            RawJitter::Word(w) => match w.as_str() {
                "none" => Jitter::None,
                "full" => Jitter::Full,
                "equal" => Jitter::Equal,
                "decorrelated" => Jitter::Decorrelated,
                other => {
                    self.err(
                        span,
                        key,
                        format!(
                            "expected \"none\", \"full\", \"equal\", \"decorrelated\", {{ proportional = f }} or {{ fraction = j }}, found \"{other}\""
                        ),
                    );
                    Jitter::None
                }
            },
            RawJitter::Proportional(f) if (0.0..1.0).contains(f) => Jitter::Proportional(*f),
            RawJitter::Proportional(f) => {
                self.err(
                    span,
                    key,
                    format!("expected proportional in [0, 1), found {f}"),
                );
                Jitter::None
            }
            RawJitter::Fraction(j) if (0.0..=1.0).contains(j) => Jitter::Fraction(*j),
            RawJitter::Fraction(j) => {
                self.err(span, key, format!("expected fraction in [0, 1], found {j}"));
                Jitter::None
            }
            RawJitter::Bad(found) => {
                self.err(
                    span,
                    key,
                    format!("expected {{ proportional = f }} or {{ fraction = j }}; {found}"),
                );
                Jitter::None
            }
        }
    }

    fn retry_on(&mut self, v: &Spanned<Vec<Spanned<toml::Value>>>, key: &str) -> StatusSet {
        let mut set = StatusSet::default();
        for item in v.get_ref() {
            let (text, shown) = match item.get_ref() {
                toml::Value::String(s) => (s.clone(), format!("\"{s}\"")),
                other => (other.to_string(), other.to_string()),
            };
            match Status::parse_retryable(&text) {
                Some(s) => set.insert(s),
                None => {
                    let why = if text.starts_with('4') {
                        " (4xx other than 409 and 429 are never retried)"
                    } else {
                        ""
                    };
                    self.err(
                        Some(item.span()),
                        key,
                        format!(
                            "expected one of \"503\", \"500\", \"429\", \"timeout\", \"unreachable\", \"409\", found {shown}{why}"
                        ),
                    );
                }
            }
        }
        set
    }

    fn scope(&mut self, v: Option<&str>, span: At, key: &str, default: Scope) -> Scope {
        match v {
            None => default,
            Some("client") => Scope::Client,
            Some("global") => Scope::Global,
            Some(other) => {
                self.err(
                    span,
                    key,
                    format!("expected \"client\" or \"global\", found \"{other}\""),
                );
                default
            }
        }
    }

    fn budget(&mut self, v: &Spanned<RawBudget>, key: &str) -> BudgetSpec {
        let span = Some(v.span());
        // Values inside a tagged table carry no position of their own: point at the table.
        let num = |c: &mut Self,
                   x: Option<f64>,
                   field: &str,
                   default: f64,
                   ok: fn(f64) -> bool,
                   expected: &str| {
            let x = x.unwrap_or(default);
            if x.is_finite() && ok(x) {
                x
            } else {
                c.err(
                    span.clone(),
                    &format!("{key}.{field}"),
                    format!("expected {expected}, found {x}"),
                );
                default
            }
        };
        let milli = |x: f64| (x * 1000.0).round() as u64;
        match v.get_ref() {
            RawBudget::Ratio {
                ratio,
                window,
                min_per_s,
                scope,
            } => {
                let ratio = num(
                    self,
                    *ratio,
                    "ratio",
                    0.1,
                    |x| (0.0..=1.0).contains(&x),
                    "a ratio in [0, 1]",
                );
                let min_per_s = num(
                    self,
                    *min_per_s,
                    "min_per_s",
                    0.0,
                    |x| x >= 0.0,
                    "a rate >= 0",
                );
                let window = match window {
                    Some(w) => self
                        .duration_at(w, span.clone(), &format!("{key}.window"), true)
                        .unwrap_or(SimDuration::from_secs(10)),
                    None => SimDuration::from_secs(10),
                };
                BudgetSpec {
                    kind: BudgetKind::Ratio {
                        ratio,
                        window,
                        min_per_s,
                    },
                    scope: self.scope(
                        scope.as_deref(),
                        span.clone(),
                        &format!("{key}.scope"),
                        Scope::Global,
                    ),
                }
            }
            RawBudget::TokenBucket {
                max_tokens,
                token_ratio,
                scope,
            } => {
                let max = num(
                    self,
                    *max_tokens,
                    "max_tokens",
                    10.0,
                    |x| x > 0.0 && x <= 1000.0,
                    "max_tokens in (0, 1000]",
                );
                let ratio = num(
                    self,
                    *token_ratio,
                    "token_ratio",
                    0.1,
                    |x| x > 0.0,
                    "token_ratio > 0",
                );
                BudgetSpec {
                    kind: BudgetKind::TokenBucket {
                        max_milli: milli(max),
                        ratio_milli: milli(ratio).max(1),
                    },
                    scope: self.scope(
                        scope.as_deref(),
                        span.clone(),
                        &format!("{key}.scope"),
                        Scope::Client,
                    ),
                }
            }
            RawBudget::Quota {
                capacity,
                retry_cost,
                timeout_cost,
                success_refund,
                scope,
            } => {
                let count = |c: &mut Self, x: Option<i64>, field: &str, default: i64, min: i64| {
                    let x = x.unwrap_or(default);
                    if x < min {
                        c.err(
                            span.clone(),
                            &format!("{key}.{field}"),
                            format!("expected an integer >= {min}, found {x}"),
                        );
                        default as u64
                    } else {
                        x as u64
                    }
                };
                let kind = BudgetKind::Quota {
                    capacity: count(self, *capacity, "capacity", 500, 1),
                    retry_cost: count(self, *retry_cost, "retry_cost", 5, 0),
                    timeout_cost: count(self, *timeout_cost, "timeout_cost", 10, 0),
                    success_refund: count(self, *success_refund, "success_refund", 1, 0),
                };
                BudgetSpec {
                    kind,
                    scope: self.scope(
                        scope.as_deref(),
                        span.clone(),
                        &format!("{key}.scope"),
                        Scope::Client,
                    ),
                }
            }
            RawBudget::Adaptive {
                fill_per_call,
                size,
                scope,
            } => {
                let fill = num(
                    self,
                    *fill_per_call,
                    "fill_per_call",
                    0.1,
                    |x| x > 0.0,
                    "fill_per_call > 0",
                );
                let size = num(
                    self,
                    *size,
                    "size",
                    5.0,
                    |x| x > 1.0,
                    "a size > 1 (a retry needs more than 1 token)",
                );
                BudgetSpec {
                    kind: BudgetKind::Adaptive {
                        fill_milli: milli(fill).max(1),
                        size_milli: milli(size),
                    },
                    scope: self.scope(
                        scope.as_deref(),
                        span.clone(),
                        &format!("{key}.scope"),
                        Scope::Client,
                    ),
                }
            }
        }
    }

    fn breaker(&mut self, v: &Spanned<RawBreaker>, key: &str) -> BreakerSpec {
        let b = v.get_ref();
        let k = |f: &str| format!("{key}.{f}");
        BreakerSpec {
            failure_rate: b
                .failure_rate
                .as_ref()
                .and_then(|x| {
                    self.float(
                        x,
                        &k("failure_rate"),
                        |x| x > 0.0 && x <= 1.0,
                        "a rate in (0, 1]",
                    )
                })
                .unwrap_or(0.5),
            window: b
                .window
                .as_ref()
                .and_then(|d| self.duration(d, &k("window"), true))
                .unwrap_or(SimDuration::from_secs(10)),
            min_calls: b
                .min_calls
                .as_ref()
                .and_then(|x| self.int(x, &k("min_calls"), 1, u32::MAX as i64))
                .unwrap_or(20) as u32,
            open_for: b
                .open_for
                .as_ref()
                .and_then(|d| self.duration(d, &k("open_for"), true))
                .unwrap_or(SimDuration::from_secs(5)),
            half_open_probes: b
                .half_open_probes
                .as_ref()
                .and_then(|x| self.int(x, &k("half_open_probes"), 1, u32::MAX as i64))
                .unwrap_or(3) as u32,
            scope: self.scope(
                b.scope.as_ref().map(|s| s.get_ref().as_str()),
                b.scope.as_ref().map(|s| s.span()),
                &k("scope"),
                Scope::Client,
            ),
        }
    }
}

fn placeholder_server() -> ServerSpec {
    ServerSpec::plain(1, 0, Dist::Constant(SimDuration::ZERO))
}

/// The policy of a service that declares no `retry`: one attempt, no retry, no timeout.
pub fn no_retry() -> Strategy {
    Strategy {
        name: String::new(),
        backoff: Backoff {
            base: SimDuration::ZERO,
            cap: SimDuration::ZERO,
            multiplier: 1.0,
            jitter: Jitter::None,
        },
        retry: RetryPolicy {
            max_attempts: 1,
            timeout: None,
            timeout_multiplier: 1.0,
            connect_timeout: None,
            deadline: None,
            retry_on: StatusSet::all_retryable(),
            retry_after: RetryAfterPolicy::default(),
            rate_limit: None,
            budget: None,
            breaker: None,
            fallback_on: ReasonSet::default(),
        },
    }
}

#[cfg(test)]
mod tests {
    //! The validation rules that involve more than one key: [retry] defaults and their
    //! per-strategy overrides, and which key an error names. Single-key refusals are
    //! covered through the binary in tests/cli/errors.rs.

    use super::*;
    use crate::scenario::validate;

    /// A valid scenario: `retry` is the body of [retry], `strategies` the [[strategy]] tables.
    fn text(retry: &str, strategies: &[&str]) -> String {
        let mut t = String::from(
            "name = \"t\"\n\
             [clients]\ncount = 10\n\
             [network]\nlatency = { dist = \"constant\", value = \"1ms\" }\n\
             [server]\nconcurrency = 2\nservice = { dist = \"constant\", value = \"1ms\" }\n",
        );
        t.push_str("[retry]\n");
        t.push_str(retry);
        for s in strategies {
            t.push_str("\n[[strategy]]\n");
            t.push_str(s);
            t.push('\n');
        }
        t
    }

    fn ok(src: &str) -> Scenario {
        validate("t.toml", src)
            .unwrap_or_else(|e| panic!("expected valid, found:\n{e}\n--- in:\n{src}"))
            .1
    }

    fn errors(src: &str) -> Vec<ScenarioError> {
        match validate("t.toml", src) {
            Ok(_) => panic!("expected errors for:\n{src}"),
            Err(ScenarioErrors(e)) => e,
        }
    }

    /// The 1-based line of the first line of `src` containing `needle`.
    fn line_of(src: &str, needle: &str) -> usize {
        src.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` not in the text"))
            + 1
    }

    const MS: fn(u64) -> SimDuration = SimDuration::from_millis;

    #[test]
    fn strategies_inherit_retry_defaults_and_override_them_key_by_key() {
        let src = text(
            "max_attempts = 5\ntimeout = \"1s\"\ndeadline = \"1m\"\nbase = \"100ms\"\n\
             cap = \"10s\"\njitter = \"full\"\nretry_on = [\"503\"]\n",
            &[
                "name = \"inherits\"",
                "name = \"overrides\"\nmax_attempts = 2\ntimeout = \"3s\"\nbase = \"1s\"\n\
                 jitter = \"equal\"\nretry_on = [\"timeout\", \"429\"]",
            ],
        );
        let s = ok(&src);
        let (a, b) = (&s.strategies[0], &s.strategies[1]);
        assert_eq!(a.name, "inherits");
        assert_eq!(a.retry.max_attempts, 5);
        assert_eq!(a.retry.timeout, Some(MS(1000)));
        assert_eq!(a.retry.deadline, Some(SimDuration::from_secs(60)));
        assert_eq!((a.backoff.base, a.backoff.cap), (MS(100), MS(10_000)));
        assert_eq!(a.backoff.jitter, Jitter::Full);
        assert!(a.retry.retry_on.contains(Status::Unavailable));
        assert!(!a.retry.retry_on.contains(Status::Timeout));

        assert_eq!(b.retry.max_attempts, 2);
        assert_eq!(b.retry.timeout, Some(MS(3000)));
        assert_eq!(
            b.retry.deadline,
            Some(SimDuration::from_secs(60)),
            "inherited"
        );
        assert_eq!((b.backoff.base, b.backoff.cap), (MS(1000), MS(10_000)));
        assert_eq!(b.backoff.jitter, Jitter::Equal);
        assert!(b.retry.retry_on.contains(Status::Timeout));
        assert!(b.retry.retry_on.contains(Status::TooManyRequests));
        assert!(
            !b.retry.retry_on.contains(Status::Unavailable),
            "replaced, not merged"
        );
    }

    #[test]
    fn defaults_apply_when_keys_are_absent() {
        let s = ok(&text(
            "max_attempts = 3\n",
            &["name = \"a\"\nbase = \"10ms\"\ncap = \"1s\""],
        ));
        assert_eq!((s.seed, s.replications), (1, 1));
        assert_eq!(s.time_limit, SimDuration::from_secs(3600));
        assert_eq!(s.bucket, MS(100));
        let Source::Closed(clients) = &s.populations[0].source else {
            panic!("[clients] is a closed population")
        };
        assert_eq!(s.populations[0].name, "clients");
        assert_eq!((clients.start, clients.start_spread), (MS(0), MS(0)));
        assert_eq!(clients.requests, 1);
        assert_eq!(s.entry().server.queue, 0);
        assert_eq!(s.entry().name, "server");
        let a = &s.strategies[0];
        assert_eq!(a.backoff.multiplier, 2.0);
        assert_eq!(a.retry.timeout, None, "no timeout: wait however long");
        assert_eq!(a.retry.deadline, None);
        assert_eq!(a.retry.retry_on, StatusSet::all_retryable());
        assert_eq!(a.retry.timeout_multiplier, 1.0);
    }

    #[test]
    fn none_means_no_limit_for_timeouts() {
        let s = ok(&text(
            "max_attempts = 3\ntimeout = \"2s\"\n",
            &["name = \"a\"\nbase = \"10ms\"\ncap = \"1s\"\ntimeout = \"none\""],
        ));
        assert_eq!(s.strategies[0].retry.timeout, None, "overridden by none");
    }

    #[test]
    fn a_bad_retry_default_is_one_error_named_after_retry() {
        let src = text(
            "max_attempts = 3\nmultiplier = 0.5\n",
            &[
                "name = \"a\"\nbase = \"10ms\"\ncap = \"1s\"",
                "name = \"b\"\nbase = \"10ms\"\ncap = \"1s\"",
            ],
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "retry.multiplier");
        assert_eq!(e[0].line, Some(line_of(&src, "multiplier = 0.5")));
        assert_eq!(e[0].msg, "expected a multiplier >= 1, found 0.5");
    }

    #[test]
    fn a_bad_override_is_named_after_its_strategy() {
        let src = text(
            "max_attempts = 3\nmultiplier = 3.0\n",
            &[
                "name = \"a\"\nbase = \"10ms\"\ncap = \"1s\"",
                "name = \"b\"\nbase = \"10ms\"\ncap = \"1s\"\nmultiplier = 0.9",
            ],
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "strategy[1].multiplier");
        assert_eq!(e[0].line, Some(line_of(&src, "multiplier = 0.9")));
        assert_eq!(e[0].col, Some(14));
    }

    #[test]
    fn a_bad_retry_default_is_refused_even_if_every_strategy_overrides_it() {
        let src = text(
            "max_attempts = 3\njitter = \"bogus\"\ntimeout = \"0s\"\n",
            &["name = \"a\"\nbase = \"10ms\"\ncap = \"1s\"\njitter = \"full\"\ntimeout = \"1s\""],
        );
        let e = errors(&src);
        let keys: Vec<&str> = e.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["retry.jitter", "retry.timeout"], "{e:?}");
    }

    #[test]
    fn cap_inherited_from_retry_below_a_strategy_base_names_retry_cap() {
        let src = text(
            "max_attempts = 3\ncap = \"1s\"\n",
            &[
                "name = \"a\"\nbase = \"100ms\"",
                "name = \"b\"\nbase = \"2s\"",
            ],
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "only strategy b is inconsistent: {e:?}");
        assert_eq!(e[0].key, "retry.cap");
        assert_eq!(e[0].msg, "expected cap >= base (2s), found 1s");
        assert_eq!(e[0].line, Some(line_of(&src, "cap = \"1s\"")));
    }

    #[test]
    fn backoff_keys_may_live_in_retry_alone() {
        let s = ok(&text(
            "max_attempts = 3\nbase = \"50ms\"\ncap = \"5s\"\n",
            &["name = \"a\"", "name = \"b\"\njitter = \"decorrelated\""],
        ));
        for st in &s.strategies {
            assert_eq!((st.backoff.base, st.backoff.cap), (MS(50), MS(5000)));
        }
    }

    #[test]
    fn missing_base_is_reported_per_strategy_and_cap_is_not_compared() {
        let src = text(
            "max_attempts = 3\n",
            &[
                "name = \"a\"\ncap = \"1s\"",
                "name = \"b\"\nbase = \"1ms\"\ncap = \"1s\"",
            ],
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "strategy[0].base");
        assert!(
            e[0].msg
                .starts_with("missing required key `base` in strategy[0]")
        );
    }

    #[test]
    fn name_under_retry_is_refused() {
        let e = errors(&text(
            "max_attempts = 3\nname = \"x\"\n",
            &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
        ));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "retry.name");
    }

    #[test]
    fn escalate_after_is_checked_against_the_same_ladder() {
        let src = text(
            "max_attempts = 3\nrate_limit = { max_retries = 5, escalate_after = 5 }\n",
            &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\"\n\
               rate_limit = { max_retries = 2, escalate_after = 3 }"],
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "strategy[0].rate_limit.escalate_after");
        let s = ok(&text(
            "max_attempts = 3\nrate_limit = { max_retries = 5, escalate_after = 5 }\n",
            &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
        ));
        let ladder = s.strategies[0].retry.rate_limit.expect("inherited ladder");
        assert_eq!((ladder.max_retries, ladder.escalate_after), (5, 5));
    }

    #[test]
    fn outages_are_sorted_and_may_touch() {
        let mut src = text(
            "max_attempts = 3\n",
            &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
        );
        src.push_str(
            "[[server.outages]]\nstart = \"2s\"\nend = \"3s\"\n\
             [[server.outages]]\nstart = \"1s\"\nend = \"2s\"\n",
        );
        let s = ok(&src);
        let starts: Vec<f64> = s
            .entry()
            .server
            .outages
            .iter()
            .map(|o| o.start.as_secs_f64())
            .collect();
        assert_eq!(starts, [1.0, 2.0], "[1s, 2s) and [2s, 3s) do not overlap");
        assert_eq!(
            s.entry().server.last_outage_end().map(|t| t.as_secs_f64()),
            Some(3.0)
        );
    }

    #[test]
    fn bucket_count_is_limited_at_exactly_max_buckets() {
        let with = |limit: &str, bucket: &str| {
            let mut src = text(
                "max_attempts = 3\n",
                &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
            );
            src = format!("time_limit = \"{limit}\"\n{src}[metrics]\nbucket = \"{bucket}\"\n");
            src
        };
        assert_eq!(ok(&with("1000s", "100us")).bucket, SimDuration(100_000));
        let e = errors(&with("1000s", "99us"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "metrics.bucket");
        assert!(e[0].msg.contains("found 10101011 "), "{}", e[0].msg);
    }

    #[test]
    fn zero_is_quoted_as_written() {
        let e = errors(&text(
            "max_attempts = 3\ntimeout = \"0ms\"\n",
            &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
        ));
        assert_eq!(
            e[0].msg,
            "expected a duration > 0 with a unit, such as \"100ms\", found \"0ms\""
        );
    }
}
