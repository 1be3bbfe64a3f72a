//! v2 scenario files accepted, through the library: what each new key means in the typed
//! [`Scenario`] (populations and their merged retry policies, the service graph, servers that
//! degrade, trace files, sweeps into arrays of tables), and v1 files mapped onto v2. These
//! scenarios are validated only, not run: the v2 engine is not in this crate yet.

use std::sync::Arc;

use herdsim::model::backoff::Jitter;
use herdsim::model::dist::Dist;
use herdsim::model::policy::{BudgetKind, Scope};
use herdsim::model::population::{Process, RateCurve};
use herdsim::model::service::{Autoscale, CapacityStep, Slowdown};
use herdsim::model::{Discipline, Occ, OutageKind, Scenario, ServiceRetry, Source, no_retry};
use herdsim::scenario::sweep::load_str;
use herdsim::time::{SimDuration, SimTime};

use crate::common::{TINY, V2, Workspace, herdsim, scenario, tiny_with};

const MS: fn(u64) -> SimDuration = SimDuration::from_millis;

fn at_secs(s: u64) -> SimTime {
    SimTime(SimDuration::from_secs(s).0)
}

/// Three populations (closed, open with a profile, trace) with retry overrides, against two
/// strategies over a [retry] table.
const POPULATIONS: &str = r#"
name = "mix"

[[clients]]
name = "herd"
count = 100
start_spread = "1s"
retry = { retry_after = { honor = false } }

[[clients]]
name = "web"
profile = [["0s", 100], ["60s", 100], ["60s", 400], ["70s", 400], ["70s", 100]]
process = "uniform"
start = "5s"
end = "120s"
clients = 50
retry = { jitter = "none", base = "1s", cap = "1s", budget = { kind = "token_bucket" }, breaker = { failure_rate = 0.25 } }

[[clients]]
name = "replay"
trace = "data/arrivals.csv"

[network]
latency = { dist = "constant", value = "1ms" }

[server]
concurrency = 10
service = { dist = "constant", value = "5ms" }

[retry]
max_attempts = 5
base = "100ms"
cap = "10s"
timeout = "2s"

[[strategy]]
name = "full"
jitter = "full"
budget = { kind = "ratio" }

[[strategy]]
name = "decorrelated"
jitter = "decorrelated"
max_attempts = 3
cap = "30s"
"#;

/// Loads `text` as `<tmp>/mix.toml` beside `data/arrivals.csv` holding `trace`.
fn load_beside_trace(text: &str, trace: &str) -> Scenario {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path().join("data")).expect("data folder");
    ws.file("data/arrivals.csv", trace);
    let file = ws.path().join("mix.toml").display().to_string();
    let f = load_str(&file, text).unwrap_or_else(|e| panic!("invalid:\n{e}"));
    f.points[0].scenario.clone()
}

#[test]
fn three_populations_closed_open_and_trace() {
    let s = load_beside_trace(POPULATIONS, "t_s\n0.5\n1\n1\n2.0000000004\n");
    let names: Vec<&str> = s.populations.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["herd", "web", "replay"]);

    let Source::Closed(herd) = &s.populations[0].source else {
        panic!("herd is closed")
    };
    assert_eq!((herd.count, herd.requests), (100, 1));
    assert_eq!(herd.start_spread, SimDuration::from_secs(1));
    assert_eq!(s.populations[0].clients, 100);

    let Source::Open(web) = &s.populations[1].source else {
        panic!("web is open")
    };
    assert_eq!(
        web.rate,
        RateCurve::profile(vec![
            (at_secs(0), 100.0),
            (at_secs(60), 100.0),
            (at_secs(60), 400.0),
            (at_secs(70), 400.0),
            (at_secs(70), 100.0),
        ])
    );
    assert_eq!(web.process, Process::Uniform);
    assert_eq!((web.start, web.end), (at_secs(5), at_secs(120)));
    assert_eq!(s.populations[1].clients, 50);

    let Source::Trace(replay) = &s.populations[2].source else {
        panic!("replay is a trace")
    };
    assert_eq!(replay.file, "data/arrivals.csv", "as written");
    let times: Vec<u64> = replay.times.iter().map(|t| t.0).collect();
    assert_eq!(
        times,
        [500_000_000, 1_000_000_000, 1_000_000_000, 2_000_000_000]
    );
    assert_eq!(s.populations[2].clients, 1, "default");
    assert_eq!(s.closed_clients(), 100);
    assert!(s.has_open_work());
}

#[test]
fn population_overrides_merge_key_by_key_over_the_strategy_over_retry() {
    let s = load_beside_trace(POPULATIONS, "t_s\n1\n");
    assert_eq!(s.population_policies.len(), 2, "one row per strategy");
    for (i, row) in s.population_policies.iter().enumerate() {
        assert_eq!(row.len(), 3, "one policy per population");
        for p in row {
            assert_eq!(p.strategy.name, s.strategies[i].name);
        }
    }
    let [full, decorrelated] = [&s.population_policies[0], &s.population_policies[1]];

    // herd: only retry_after overridden (a whole table: max and beyond keep their defaults).
    for (row, strategy) in [(full, &s.strategies[0]), (decorrelated, &s.strategies[1])] {
        let herd = &row[0];
        assert!(!herd.strategy.retry.retry_after.honor, "override wins");
        assert_eq!(
            herd.strategy.retry.retry_after.max,
            SimDuration::from_secs(60)
        );
        assert!(
            strategy.retry.retry_after.honor,
            "the strategy itself honours hints"
        );
        assert_eq!(
            herd.strategy.backoff, strategy.backoff,
            "everything else inherited"
        );
        assert_eq!(herd.strategy.retry.budget, strategy.retry.budget);
        assert!(!herd.own_budget && !herd.own_breaker);
    }
    assert_eq!(full[0].strategy.backoff.jitter, Jitter::Full);
    assert_eq!(
        decorrelated[0].strategy.backoff.jitter,
        Jitter::Decorrelated
    );

    // web: backoff, budget and breaker overridden; the rest from the strategy, then [retry].
    for row in [full, decorrelated] {
        let web = &row[1].strategy;
        assert_eq!(web.backoff.jitter, Jitter::None);
        assert_eq!((web.backoff.base, web.backoff.cap), (MS(1000), MS(1000)));
        assert_eq!(web.retry.timeout, Some(MS(2000)), "from [retry]");
        assert!(matches!(
            web.retry.budget.map(|b| (b.kind, b.scope)),
            Some((BudgetKind::TokenBucket { .. }, Scope::Client))
        ));
        assert_eq!(web.retry.breaker.map(|b| b.failure_rate), Some(0.25));
        assert!(row[1].own_budget && row[1].own_breaker);
    }
    assert_eq!(full[1].strategy.retry.max_attempts, 5, "[retry]");
    assert_eq!(
        decorrelated[1].strategy.retry.max_attempts, 3,
        "the strategy wins over [retry]"
    );

    // replay: no override, exactly the strategy.
    assert_eq!(full[2].strategy, s.strategies[0]);
    assert_eq!(decorrelated[2].strategy, s.strategies[1]);
    assert!(matches!(
        full[2].strategy.retry.budget.map(|b| b.kind),
        Some(BudgetKind::Ratio { .. })
    ));
    assert_eq!(decorrelated[2].strategy.retry.budget, None);
    assert_eq!(decorrelated[2].strategy.backoff.cap, MS(30_000));
}

/// A graph of three services written api, db, auth; api calls auth then db.
const GRAPH: &str = r#"
name = "graph"

[clients]
count = 10

[network]
latency = { dist = "constant", value = "1ms" }

[[service]]
name = "api"
concurrency = 8
queue = 16
service = { dist = "constant", value = "5ms" }
calls = ["auth", "db"]
retry = "strategy"
propagate_deadline = true
discipline = "lifo"
queue_timeout = "2s"
slowdown = [[0, 1.0], [200, 1.0], [600, 4.0]]
autoscale = { min = 4, max = 32, target = 0.5, interval = "5s", warmup = "0s" }

[[service.capacity]]
at = "30s"
concurrency = 2

[[service.capacity]]
at = "40s"
concurrency = 8

[[service.outages]]
start = "10s"
end = "12s"
kind = "crash"

[[service]]
name = "db"
latency = { dist = "constant", value = "3ms" }
occ = "write-only"
occ_write = { dist = "constant", value = "2ms" }
retry = { max_attempts = 2, base = "5ms", cap = "50ms" }

[[service]]
name = "auth"
concurrency = 2
service = { dist = "constant", value = "1ms" }
autoscale = { min = 1, max = 4 }

[fallback]
concurrency = 1
service = { dist = "constant", value = "1ms" }
occ = true

[metrics]
trigger_end = "30s"

[retry]
max_attempts = 4
base = "100ms"
cap = "2s"
timeout = "1s"
fallback_on = ["attempts"]

[[strategy]]
name = "full"
jitter = "full"

[[strategy]]
name = "equal"
jitter = "equal"
"#;

#[test]
fn a_three_service_graph_with_each_kind_of_retry() {
    let s = scenario(GRAPH);
    let names: Vec<&str> = s.services.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["api", "db", "auth"]);
    assert_eq!(s.services[0].calls, [2, 1], "auth then db, by index");
    assert!(s.services[1].calls.is_empty() && s.services[2].calls.is_empty());
    assert_eq!(s.entry().name, "api");

    assert_eq!(s.services[0].retry, ServiceRetry::Strategy);
    for i in 0..2 {
        assert_eq!(s.service_policy(i, 0), &s.strategies[i]);
    }
    let ServiceRetry::Fixed(db) = &s.services[1].retry else {
        panic!("db has an inline policy")
    };
    assert_eq!(db.retry.max_attempts, 2);
    assert_eq!((db.backoff.base, db.backoff.cap), (MS(5), MS(50)));
    assert_eq!(db.retry.timeout, Some(MS(1000)), "[retry] defaults apply");
    assert!(
        db.retry.fallback_on.is_empty(),
        "fallback_on is for client requests: not inherited"
    );
    assert_eq!(
        s.service_policy(0, 1),
        s.service_policy(1, 1),
        "the same for every strategy"
    );
    assert_eq!(
        s.services[2].retry,
        ServiceRetry::Fixed(Box::new(no_retry()))
    );

    assert!(s.services[0].propagate_deadline);
    assert!(!s.services[1].propagate_deadline);
    assert_eq!(
        s.services[0].latency, s.latency,
        "[network].latency by default"
    );
    assert_eq!(s.services[1].latency, Dist::Constant(MS(3)));
}

#[test]
fn servers_that_degrade() {
    let s = scenario(GRAPH);
    let api = &s.services[0].server;
    assert_eq!((api.concurrency, api.queue), (8, 16));
    assert_eq!(api.discipline, Discipline::Lifo);
    assert_eq!(api.queue_timeout, Some(MS(2000)));
    assert_eq!(
        api.slowdown,
        Some(Slowdown::new(vec![(0.0, 1.0), (200.0, 1.0), (600.0, 4.0)]))
    );
    assert_eq!(
        api.capacity,
        [
            CapacityStep {
                at: at_secs(30),
                concurrency: 2
            },
            CapacityStep {
                at: at_secs(40),
                concurrency: 8
            }
        ]
    );
    assert_eq!(
        api.autoscale,
        Some(Autoscale {
            min: 4,
            max: 32,
            target: 0.5,
            interval: MS(5000),
            warmup: SimDuration::ZERO,
        })
    );
    assert_eq!(api.outages.len(), 1);
    assert_eq!(api.outages[0].kind, OutageKind::Crash);
    assert_eq!(api.occ, Occ::Off);

    let db = &s.services[1].server;
    assert_eq!(db.occ, Occ::WriteOnly);
    assert_eq!(db.occ_write, Dist::Constant(MS(2)));
    assert_eq!(db.discipline, Discipline::Fifo, "default");
    assert_eq!((db.queue_timeout, db.slowdown.as_ref()), (None, None));

    let auth = s.services[2].server.autoscale.expect("autoscale");
    assert_eq!(
        (auth.target, auth.interval, auth.warmup),
        (0.7, MS(10_000), MS(60_000)),
        "defaults"
    );

    let fallback = s.fallback.as_ref().expect("fallback");
    assert_eq!(fallback.server.occ, Occ::ReadWrite, "occ = true");
    assert_eq!(fallback.server.occ_write, Dist::Constant(SimDuration::ZERO));

    assert_eq!(s.trigger_end, Some(at_secs(30)));
    assert_eq!(s.trigger(), Some(at_secs(30)), "trigger_end wins");
}

#[test]
fn network_is_optional_when_every_service_sets_its_latency() {
    let text = GRAPH
        .replace(
            "[network]\nlatency = { dist = \"constant\", value = \"1ms\" }\n",
            "",
        )
        .replace(
            "name = \"api\"\n",
            "name = \"api\"\nlatency = { dist = \"constant\", value = \"7ms\" }\n",
        )
        .replace(
            "name = \"auth\"\n",
            "name = \"auth\"\nlatency = { dist = \"constant\", value = \"2ms\" }\n",
        )
        .replace(
            "[fallback]\n",
            "[fallback]\nlatency = { dist = \"constant\", value = \"9ms\" }\n",
        );
    let s = scenario(&text);
    assert_eq!(s.services[0].latency, Dist::Constant(MS(7)));
    assert_eq!(
        s.latency,
        Dist::Constant(MS(7)),
        "the entry service's latency"
    );
    assert_eq!(s.fallback.map(|f| f.latency), Some(Dist::Constant(MS(9))));
}

#[test]
fn a_single_clients_table_may_be_open_and_named() {
    let s = scenario(&tiny_with(
        "count = 50\n",
        "name = \"shoppers\"\nrate = 2.5\nend = \"1m\"\nclients = 7\n",
    ));
    assert_eq!(s.populations.len(), 1);
    assert_eq!(s.populations[0].name, "shoppers");
    assert_eq!(s.populations[0].clients, 7);
    let Source::Open(open) = &s.populations[0].source else {
        panic!("open")
    };
    assert_eq!(open.rate, RateCurve::constant(2.5));
    assert_eq!(open.process, Process::Poisson, "default");
    assert_eq!((open.start, open.end), (SimTime::ZERO, at_secs(60)));
}

#[test]
fn v1_files_are_one_population_named_clients_and_one_service_named_server() {
    let s = scenario(TINY);
    assert_eq!(s.populations.len(), 1);
    assert_eq!(s.populations[0].name, "clients");
    assert_eq!(s.populations[0].clients, 50);
    let Source::Closed(c) = &s.populations[0].source else {
        panic!("closed")
    };
    assert_eq!(c.count, 50);
    assert_eq!(s.services.len(), 1);
    let server = s.entry();
    assert_eq!(server.name, "server");
    assert!(server.calls.is_empty());
    assert_eq!(server.retry, ServiceRetry::Fixed(Box::new(no_retry())));
    assert!(!server.propagate_deadline);
    assert_eq!(server.latency, s.latency);
    assert_eq!(server.server.discipline, Discipline::Fifo);
    assert_eq!(server.server.occ, Occ::Off);
    assert!(server.server.capacity.is_empty() && server.server.autoscale.is_none());
    assert_eq!(s.trigger_end, None);
    assert_eq!(s.trigger(), Some(at_secs(1)), "the outage's end");
    for (i, row) in s.population_policies.iter().enumerate() {
        assert_eq!(row.len(), 1);
        assert_eq!(row[0].strategy, s.strategies[i]);
        assert!(!row[0].own_budget && !row[0].own_breaker);
    }
}

// ---- sweeps -----------------------------------------------------------------------------

#[test]
fn sweeps_reach_into_arrays_of_populations_and_services() {
    let text = format!(
        "{V2}\n[sweep]\n\"clients.1.rate\" = [5, 10]\n\"service.1.concurrency\" = [1, 3]\n"
    );
    let f = load_str("v2.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let labels: Vec<String> = f.points.iter().map(|p| p.labels.join("/")).collect();
    assert_eq!(labels, ["5/1", "5/3", "10/1", "10/3"]);
    let rate = |p: usize| match &f.points[p].scenario.populations[1].source {
        Source::Open(o) => o.rate.as_constant(),
        _ => None,
    };
    assert_eq!((rate(0), rate(3)), (Some(5.0), Some(10.0)));
    assert_eq!(f.points[1].scenario.services[1].server.concurrency, 3);
    assert_eq!(f.points[2].scenario.services[1].server.concurrency, 1);
}

#[test]
fn sweeps_reach_into_capacity_steps() {
    let text = format!(
        "{}\n[sweep]\n\"server.capacity.0.concurrency\" = [1, 4]\n",
        tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }\n",
            "service = { dist = \"constant\", value = \"10ms\" }\n\
             [[server.capacity]]\nat = \"2s\"\nconcurrency = 2\n"
        )
    );
    let f = load_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let steps: Vec<u32> = f
        .points
        .iter()
        .map(|p| p.scenario.entry().server.capacity[0].concurrency)
        .collect();
    assert_eq!(steps, [1, 4]);
}

#[test]
fn a_swept_file_reads_its_trace_once() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path().join("data")).expect("data folder");
    ws.file("data/arrivals.csv", "t_s\n1\n2\n");
    let text = format!("{}\n[sweep]\n\"clients.0.count\" = [10, 20]\n", POPULATIONS);
    let file = ws.path().join("mix.toml").display().to_string();
    let f = load_str(&file, &text).unwrap_or_else(|e| panic!("{e}"));
    let traces: Vec<_> = f
        .points
        .iter()
        .map(|p| match &p.scenario.populations[2].source {
            Source::Trace(t) => t.times.clone(),
            _ => panic!("trace"),
        })
        .collect();
    assert!(Arc::ptr_eq(&traces[0], &traces[1]), "shared, not re-read");
}

// ---- check ------------------------------------------------------------------------------

#[test]
fn check_names_populations_and_services_of_a_v2_file() {
    let ws = Workspace::new();
    ws.file("v2.toml", V2);
    std::fs::create_dir_all(ws.path().join("data")).expect("data folder");
    ws.file("data/arrivals.csv", "t_s\n1\n");
    ws.file("mix.toml", POPULATIONS);
    let out = herdsim()
        .current_dir(ws.path())
        .args(["check", "v2.toml", "mix.toml"])
        .output()
        .expect("run herdsim");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "v2.toml: ok (v2: 2 populations (20 closed clients, 1 open), 2 services, 2 strategies, 1 replication)\n\
         mix.toml: ok (mix: 3 populations (100 closed clients, 1 open, 1 trace), 2 strategies, 1 replication)\n"
    );
    assert!(!ws.path().join("output").exists(), "check writes nothing");
}
