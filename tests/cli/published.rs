//! Published results reproduced (POLICIES.md section 9).
//!
//! Brooker 2015 ("Exponential Backoff And Jitter", AWS Architecture Blog): the
//! optimistic-concurrency experiment of `scenarios/brooker-occ.toml` against the reference
//! table of section 9a (an independent re-implementation of the post's simulator, 100 trials
//! per point). Random streams differ, so numbers agree within a tolerance and the orderings
//! the post draws its conclusions from must hold exactly.
//!
//! Brooker 2022 ("Fixing retries with token buckets and circuit breakers", section 9b): with
//! calls failing independently with probability x and N retries, a request fails with
//! probability x^(N+1) and costs sum_{i=0..N} x^i attempts.

use herdsim::metrics::summary::StrategySummary;
use herdsim::model::outcome::GiveUpReason;
use herdsim::scenario::sweep::load_str;

/// POLICIES.md 9a: mean completion ms / mean write calls, for N = 10, 20, 50, 100 and the
/// strategies None, Exponential, Equal, Full, Decorrelated.
const REFERENCE: [(u32, [(f64, f64); 5]); 4] = [
    (
        10,
        [
            (377.0, 50.0),
            (3515.0, 51.0),
            (723.0, 43.0),
            (469.0, 39.0),
            (448.0, 38.0),
        ],
    ),
    (
        20,
        [
            (606.0, 154.0),
            (14552.0, 150.0),
            (1668.0, 108.0),
            (993.0, 100.0),
            (832.0, 101.0),
        ],
    ),
    (
        50,
        [
            (1144.0, 689.0),
            (36729.0, 625.0),
            (4283.0, 348.0),
            (2931.0, 333.0),
            (2343.0, 376.0),
        ],
    ),
    (
        100,
        [
            (2029.0, 2425.0),
            (63984.0, 1858.0),
            (6555.0, 814.0),
            (4964.0, 795.0),
            (4561.0, 1000.0),
        ],
    ),
];

/// The experiment's summaries per sweep point, computed once for both tests.
fn results() -> &'static [Vec<StrategySummary>] {
    static RESULTS: std::sync::OnceLock<Vec<Vec<StrategySummary>>> = std::sync::OnceLock::new();
    RESULTS.get_or_init(run_experiment)
}

fn run_experiment() -> Vec<Vec<StrategySummary>> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/brooker-occ.toml"
    ))
    .unwrap();
    let file = load_str("brooker-occ.toml", &text).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    result
        .points
        .into_iter()
        .map(|p| p.strategies.into_iter().map(|s| s.summary).collect())
        .collect()
}

#[test]
fn brooker_2015_occ_experiment_matches_the_reference_table() {
    let results = results();
    for ((n, reference), point) in REFERENCE.iter().zip(results) {
        for ((want_ms, want_calls), got) in reference.iter().zip(point) {
            assert_eq!(got.clients, *n);
            assert_eq!(
                got.succeeded, *n as f64,
                "every client wins its write eventually"
            );
            let ms = got.completion_s.mean * 1000.0;
            let calls = got.calls.mean;
            // 100 trials: the reference's own second seed agreed within ~3%; allow 10%.
            assert!(
                (ms / want_ms - 1.0).abs() < 0.10,
                "N={n} {}: {ms:.0} ms vs {want_ms}",
                got.strategy
            );
            assert!(
                (calls / want_calls - 1.0).abs() < 0.10,
                "N={n} {}: {calls:.1} calls vs {want_calls}",
                got.strategy
            );
        }
    }
}

#[test]
fn brooker_2015_orderings_hold() {
    let results = results();
    let by_name = |point: &[StrategySummary], name: &str| {
        let s = point.iter().find(|s| s.strategy == name).unwrap();
        (s.completion_s.mean, s.calls.mean)
    };
    for point in &results[2..] {
        // N = 50 and 100, where the post's differences are large.
        let (none, expo, equal, full, decorr) = (
            by_name(point, "none"),
            by_name(point, "exponential"),
            by_name(point, "equal"),
            by_name(point, "full"),
            by_name(point, "decorrelated"),
        );
        // Un-jittered exponential is by far the slowest; equal is the slowest jittered one.
        assert!(expo.0 > 5.0 * equal.0);
        assert!(equal.0 > full.0 && equal.0 > decorr.0);
        // Jitter does far less work than no jitter; full and equal about the same, and
        // decorrelated more than both.
        assert!(none.1 > expo.1 && expo.1 > 1.5 * decorr.1);
        assert!((full.1 / equal.1 - 1.0).abs() < 0.06);
        assert!(decorr.1 > full.1 && decorr.1 > equal.1);
    }
}

/// Two clients read version 0 at 10 ms and write at 30 ms: the first write wins, the second
/// gets 409, backs off 100 ms, reads version 1 and wins at 170 ms (answered at 180 ms).
#[test]
fn an_occ_write_race_is_exact() {
    let text = crate::common::exact_scenario(
        "10ms",
        "count = 2",
        "occ = true",
        "max_attempts = 5",
        "[[strategy]]\nname = \"s\"\nbase = \"100ms\"\ncap = \"100ms\"",
    );
    let m = crate::common::run(&crate::common::scenario(&text), 0);
    let latency = |c: u32| {
        m.requests
            .iter()
            .find(|r| r.client == c)
            .unwrap()
            .latency
            .unwrap()
    };
    assert_eq!(latency(0).as_nanos(), 40_000_000);
    assert_eq!(latency(1).as_nanos(), 180_000_000);
    assert_eq!(m.entry().calls, 3, "calls count writes, not reads");
    assert_eq!(
        m.entry().retries,
        [0, 0, 0, 0, 0, 1],
        "one retry after a 409"
    );
}

/// Section 9b's closed forms, through an `errors` outage that fails each attempt
/// independently with probability x (20 000 requests; tolerances are about 6 sigma).
#[test]
fn brooker_2022_closed_forms_for_independent_failures() {
    for (x, retries) in [(0.5f64, 3u32), (0.2, 1), (0.9, 3)] {
        let text = crate::common::exact_scenario(
            "1ms",
            "count = 20000\nstart_spread = \"1s\"",
            &format!(
                "concurrency = 100000\nservice = {{ dist = \"constant\", value = \"1ms\" }}\n\
                 [[server.outages]]\nstart = \"0s\"\nend = \"1h\"\nkind = \"errors\"\nerror_rate = {x}"
            ),
            &format!("max_attempts = {}", retries + 1),
            "[[strategy]]\nname = \"s\"\nbase = \"1ms\"\ncap = \"1ms\"",
        );
        let m = crate::common::run(&crate::common::scenario(&text), 0);
        let n = 20_000.0;
        let fail = m.gave_up_total() as f64 / n;
        let attempts = m.entry().calls as f64 / n;
        let want_fail = x.powi(retries as i32 + 1);
        let want_attempts: f64 = (0..=retries).map(|i| x.powi(i as i32)).sum();
        let sd = (want_fail * (1.0 - want_fail) / n).sqrt();
        assert!(
            (fail - want_fail).abs() < 6.0 * sd + 1e-9,
            "x={x} N={retries}: P(fail) {fail} vs {want_fail}"
        );
        assert!(
            (attempts / want_attempts - 1.0).abs() < 0.02,
            "x={x} N={retries}: {attempts} vs {want_attempts}"
        );
    }
}

/// `scenarios/brooker-2022.toml`, which the tests below shorten, and its sweep line.
const BROOKER_2022: &str = include_str!("../../scenarios/brooker-2022.toml");
const BROOKER_2022_SWEEP: &str =
    "\"server.outages.0.error_rate\" = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75]";

/// `scenarios/brooker-2022.toml`, shortened to 10 s of arrivals (10 000 requests per run)
/// and three failure rates: the post's open-loop model against its closed forms and
/// findings. Tolerances are about 6 sigma of the sampling error.
#[test]
fn brooker_2022_open_loop_scenario_reproduces_the_post() {
    let text = BROOKER_2022.to_string();
    let sweep = BROOKER_2022_SWEEP;
    let end = "end = \"30s\"";
    assert!(text.contains(sweep) && text.contains(end));
    let text = text
        .replace(sweep, "\"server.outages.0.error_rate\" = [0.05, 0.3, 0.5]")
        .replace(end, "end = \"10s\"")
        .replace("replications = 2", "replications = 1");
    let file = load_str("brooker-2022.toml", &text).unwrap();
    let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
    for (x, point) in [0.05f64, 0.3, 0.5].into_iter().zip(&result.points) {
        let get = |name: &str| {
            &point
                .strategies
                .iter()
                .find(|s| s.summary.strategy == name)
                .unwrap()
                .summary
        };
        let success = |s: &StrategySummary| s.succeeded / s.requests;
        let amp = |s: &StrategySummary| s.amplification.expect("requests were made");
        let (none, three, adaptive, breaker, fleet, retry_only) = (
            get("none"),
            get("three-retries"),
            get("adaptive"),
            get("breaker"),
            get("breaker-fleet"),
            get("retry-breaker"),
        );
        let n = none.requests;
        assert!(n > 9_500.0 && n < 10_500.0, "{n} requests");
        let within = |got: f64, want: f64| {
            let sd = (want * (1.0 - want) / n).sqrt();
            (got - want).abs() < 6.0 * sd + 1e-9
        };

        // No retries: one call per request, success 1 - x.
        assert_eq!(amp(none), 1.0);
        assert!(within(success(none), 1.0 - x), "x={x}: {}", success(none));
        // Three retries: fails with probability x^4, costs 1 + x + x^2 + x^3 calls.
        let want_calls: f64 = (0..4).map(|i| x.powi(i)).sum();
        assert!(
            within(success(three), 1.0 - x.powi(4)),
            "x={x}: {}",
            success(three)
        );
        assert!(
            (amp(three) / want_calls - 1.0).abs() < 0.02,
            "x={x}: {} vs {want_calls}",
            amp(three)
        );

        // The adaptive bucket: three retries while they cost less than its 0.1 token per
        // request; about 0.1 retries per request once they would cost more (plus the 5
        // whole tokens each of the 100 clients starts with: 0.05 per request here).
        if x < 0.1 {
            assert!((amp(adaptive) / amp(three) - 1.0).abs() < 0.005);
        } else {
            assert!(
                amp(adaptive) > 1.09 && amp(adaptive) < 1.16,
                "x={x}: {}",
                amp(adaptive)
            );
            assert!(success(none) < success(adaptive) && success(adaptive) < success(three));
        }

        // Breakers (50% threshold): per client they trip below the threshold, because each
        // client judges from its own few calls; fleet-wide they do not.
        if x < 0.1 {
            assert_eq!(breaker.breaker_open_s, 0.0);
            assert_eq!(fleet.breaker_open_s, 0.0);
        } else if x < 0.5 {
            assert!(
                breaker.breaker_open_s > 0.0,
                "x={x}: per-client never opened"
            );
            assert!(breaker.gave_up_for(GiveUpReason::BreakerOpen) > 0.0);
            assert_eq!(fleet.breaker_open_s, 0.0, "x={x}: fleet-wide opened");
            assert!(success(breaker) < success(three));
        } else {
            // At the threshold both are open most of the time; herdsim's breaker fails first
            // attempts too, so success falls below no retries.
            assert!(breaker.breaker_open_s > 0.3 * 100.0 * 10.0);
            assert!(success(breaker) < success(none));
        }
        // The post's retry-only breaker trips as early, but first tries always go out: it
        // never does worse than no retries, and above the threshold it costs far less than
        // three retries (it drifts toward no retries).
        if x < 0.1 {
            assert_eq!(retry_only.breaker_open_s, 0.0);
            assert_eq!(amp(retry_only), amp(three));
        } else {
            assert!(retry_only.breaker_open_s > 0.0, "x={x}");
            assert!(success(retry_only) > success(none), "x={x}");
        }
        if x >= 0.5 {
            assert!(success(retry_only) < success(three));
            assert!(
                amp(retry_only) < 0.8 * amp(three),
                "x={x}: {}",
                amp(retry_only)
            );
        }
    }
}

/// Brooker 2022: "the same load split over 10, 100 or 1 000 clients": per-client adaptive
/// buckets drift toward N retries (more clients, more tokens to start with and to earn), and
/// per-client breakers toward no retries (each judges from fewer calls). The post states no
/// breaker parameters; the drift shows with a breaker that judges from as few as 2 calls
/// (with the shipped `min_calls = 10`, a client at 1 req/s rarely has 10 calls in its 2 s
/// window). x = 0.3, 10 s of arrivals, one replication.
#[test]
fn brooker_2022_split_over_more_clients_drifts_buckets_up_and_breakers_down() {
    let text = BROOKER_2022.to_string();
    let sweep = BROOKER_2022_SWEEP;
    let breaker = "min_calls = 10, open_for = \"1s\", half_open_probes = 1, scope = \"client\", retries_only = true";
    assert!(text.contains(sweep) && text.contains(breaker));
    let amplification = |clients: u32| {
        let text = text
            .replace(sweep, "\"server.outages.0.error_rate\" = [0.3]")
            .replace("end = \"30s\"", "end = \"10s\"")
            .replace("replications = 2", "replications = 1")
            .replace("clients = 100 ", &format!("clients = {clients} "))
            .replace(breaker, &breaker.replace("min_calls = 10", "min_calls = 2"));
        let file = load_str("brooker-2022.toml", &text).unwrap();
        let result = herdsim::runner::run_scenario(&file, Default::default(), &|| {}).unwrap();
        let get = |name: &str| {
            result.points[0]
                .strategies
                .iter()
                .find(|s| s.summary.strategy == name)
                .unwrap()
                .summary
                .amplification
                .unwrap()
        };
        (get("adaptive"), get("retry-breaker"))
    };
    let (adaptive_10, breaker_10) = amplification(10);
    let (adaptive_1000, breaker_1000) = amplification(1000);
    assert!(
        adaptive_1000 > adaptive_10 + 0.05,
        "{adaptive_10} -> {adaptive_1000}"
    );
    assert!(
        breaker_1000 < breaker_10 - 0.05,
        "{breaker_10} -> {breaker_1000}"
    );
}
