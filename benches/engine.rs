//! Engine throughput, one criterion group per workload. Each iteration is one whole run (one
//! strategy, one replication) on one core, through the library; `Throughput::Elements(events)`
//! makes criterion report events per second beside the time per run.
//!
//! `cargo bench --bench engine` runs them all; `cargo bench --bench engine -- occ` one group.
//!
//! | group | workload |
//! |---|---|
//! | `herd` | quickstart.toml: 10 000 clients at t = 0, a 5 s outage, each jitter strategy |
//! | `herd-million` | the same herd at 1 000 000 clients and 100x the server, as million.toml (no-jitter and full; 10 samples) |
//! | `occ` | brooker-occ.toml at N = 100: one optimistic write per client, five strategies |
//! | `open-loop` | steady-outage.toml: 500 req/s of Poisson arrivals for 120 s, a 30 s outage |
//! | `graph` | three-tier.toml: api -> mid -> db, the db down for 20 s, four retry policies |

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use herdsim::engine::{RunSeed, Simulation};
use herdsim::model::Scenario;
use herdsim::scenario::sweep::load_str;

/// The first sweep point of a scenario text (the whole scenario when it has no sweep).
fn scenario(name: &str, text: &str) -> Scenario {
    load_str(name, text)
        .unwrap_or_else(|e| panic!("{name} is valid: {e:?}"))
        .points
        .remove(0)
        .scenario
}

/// One run: replication 0 of `strategy`. Returns the events it simulated.
fn run(scenario: &Scenario, strategy: usize) -> u64 {
    Simulation::new(
        scenario,
        strategy,
        RunSeed {
            seed: scenario.seed,
            replication: 0,
            point: 0,
        },
        false,
    )
    .run()
    .events
}

/// Benchmarks each named strategy of `scenario` (all when `only` is empty) in `group`, as
/// `<group>/<strategy>/<parameter>`, throughput in events.
fn strategies(
    c: &mut Criterion,
    group: &str,
    scenario: &Scenario,
    parameter: &str,
    only: &[&str],
    sample_size: usize,
) {
    let mut g = c.benchmark_group(group);
    g.sample_size(sample_size);
    for (strategy, s) in scenario.strategies.iter().enumerate() {
        if !only.is_empty() && !only.contains(&s.name.as_str()) {
            continue;
        }
        // The events of a run depend only on the scenario, strategy and seed: count them once.
        g.throughput(Throughput::Elements(run(scenario, strategy)));
        g.bench_with_input(BenchmarkId::new(&s.name, parameter), &strategy, |b, &i| {
            b.iter(|| run(scenario, i))
        });
    }
    g.finish();
}

/// quickstart.toml scaled to `clients` clients: the server's slots and queue grow with them
/// (200 slots and 400 places per 10 000 clients), so every size runs the same herd shape
/// (about 26 events per client) and only the state's size changes.
fn herd_of(clients: u32) -> Scenario {
    let q = herdsim::scenario::QUICKSTART;
    let scaled = [
        ("count = 10000 ", clients),
        ("concurrency = 200 ", clients / 50),
        ("queue = 400 ", clients / 25),
    ];
    let mut text = q.to_string();
    for (from, value) in scaled {
        assert!(text.contains(from), "quickstart.toml has `{from}`");
        let key = from.split(" = ").next().expect("a key");
        text = text.replace(from, &format!("{key} = {value} "));
    }
    scenario("quickstart.toml", &text)
}

fn bench_herd(c: &mut Criterion) {
    strategies(c, "herd", &herd_of(10_000), "10000", &[], 20);
}

fn bench_herd_million(c: &mut Criterion) {
    // About 1.5 s and 26 M events per run: two strategies (the cheapest and the dearest
    // per event at 10^4), the minimum of 10 samples.
    let million = herd_of(1_000_000);
    strategies(
        c,
        "herd-million",
        &million,
        "1000000",
        &["no-jitter", "full"],
        10,
    );
}

fn bench_occ(c: &mut Criterion) {
    let text = include_str!("../scenarios/brooker-occ.toml");
    let one = text.replace(
        "\"clients.count\" = [10, 20, 50, 100]",
        "\"clients.count\" = [100]",
    );
    assert_ne!(one, text, "brooker-occ.toml's sweep");
    strategies(
        c,
        "occ",
        &scenario("brooker-occ.toml", &one),
        "100",
        &[],
        20,
    );
}

fn bench_open_loop(c: &mut Criterion) {
    let text = include_str!("../scenarios/steady-outage.toml");
    strategies(
        c,
        "open-loop",
        &scenario("steady-outage.toml", text),
        "500rps",
        &[],
        20,
    );
}

fn bench_graph(c: &mut Criterion) {
    let text = include_str!("../scenarios/three-tier.toml");
    strategies(
        c,
        "graph",
        &scenario("three-tier.toml", text),
        "3-tier",
        &[],
        20,
    );
}

/// herdsim enables plotters' ab_glyph text (charts with a bundled font); criterion's own HTML
/// plots then find no registered font and panic, so its plots are turned off.
fn config() -> Criterion {
    Criterion::default().without_plots()
}

criterion_group! {
    name = herd;
    config = config();
    targets = bench_herd
}
criterion_group! {
    name = herd_million;
    config = config().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    targets = bench_herd_million
}
criterion_group! {
    name = occ;
    config = config();
    targets = bench_occ
}
criterion_group! {
    name = open_loop;
    config = config();
    targets = bench_open_loop
}
criterion_group! {
    name = graph;
    config = config();
    targets = bench_graph
}
criterion_main!(herd, herd_million, occ, open_loop, graph);
