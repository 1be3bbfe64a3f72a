//! Engine throughput: one run of the herd scenario (all clients at t = 0, a 5 s outage,
//! 4 jitter strategies) at several population sizes, reported as events per second.
//!
//! `cargo bench --bench engine` — criterion reports time per run and, through
//! `Throughput::Elements(events)`, events/s. The scenario is quickstart.toml with the
//! client count swept; each iteration is a whole run on one core.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use herdsim::engine::{RunSeed, Simulation};
use herdsim::model::Scenario;
use herdsim::scenario::sweep::load_str;

fn herd(clients: u32) -> Scenario {
    let text =
        herdsim::scenario::QUICKSTART.replace("count = 10000", &format!("count = {clients}"));
    load_str("quickstart.toml", &text)
        .expect("the quickstart is valid")
        .points
        .remove(0)
        .scenario
}

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

fn bench_herd(c: &mut Criterion) {
    let mut group = c.benchmark_group("herd");
    group.sample_size(10);
    for clients in [1_000u32, 10_000, 100_000] {
        let scenario = herd(clients);
        for (strategy, s) in scenario.strategies.iter().enumerate() {
            let events = run(&scenario, strategy);
            group.throughput(Throughput::Elements(events));
            group.bench_with_input(
                BenchmarkId::new(s.name.clone(), clients),
                &clients,
                |b, _| b.iter(|| run(&scenario, strategy)),
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // herdsim enables plotters' ab_glyph text (charts with a bundled font); criterion's own
    // HTML plots then find no registered font and panic, so its plots are turned off.
    config = Criterion::default().without_plots();
    targets = bench_herd
}
criterion_main!(benches);
