//! Unit tests of the breakers (`super`), on hand-worked sequences of outcomes.

use super::*;
use crate::model::policy::Scope;

fn spec(scope: Scope) -> BreakerSpec {
    BreakerSpec {
        failure_rate: 1.0,
        window: BreakerWindow::Time(SimDuration::from_secs(10)),
        min_calls: 5,
        open_for: SimDuration::from_secs(5),
        half_open_probes: 3,
        half_open: HalfOpenRule::All,
        scope,
        retries_only: false,
        slow_call: None,
        slow_call_rate: 1.0,
        trip_on_failure: false,
    }
}

/// `trip_on = "failure"` (Polly): a success that drops two older successes from the
/// window leaves 2 failures of 3, above 0.6: Resilience4j's rule opens there, Polly's
/// at the next failure.
#[test]
fn a_breaker_tripping_on_failures_waits_for_one() {
    let sec = |x: f64| SimTime((x * 1e9) as u64);
    for (trip_on_failure, at_success) in [(false, Transition::Opened), (true, Transition::None)] {
        let mut b = Breakers::new(
            &BreakerSpec {
                failure_rate: 0.6,
                min_calls: 2,
                trip_on_failure,
                ..spec(Scope::Global)
            },
            1,
        );
        for (t, failed) in [(0.0, false), (0.5, false), (8.0, true), (9.0, true)] {
            assert_eq!(b.record(0, sec(t), failed, false, 0), Transition::None);
        }
        assert_eq!(b.record(0, sec(10.8), false, false, 0), at_success);
        if trip_on_failure {
            assert_eq!(b.record(0, sec(11.0), true, false, 0), Transition::Opened);
        }
    }
}

/// Bucketed time windows against the exact one: outcomes leave a bucket at a time.
#[test]
fn bucketed_windows_drop_whole_buckets() {
    let sec = |x: f64| SimTime((x * 1e9) as u64);
    let run = |window: BreakerWindow, failure_rate: f64, outcomes: &[(f64, bool)]| {
        let mut b = Breakers::new(
            &BreakerSpec {
                window,
                failure_rate,
                min_calls: 2,
                ..spec(Scope::Global)
            },
            1,
        );
        outcomes
            .iter()
            .map(|&(t, failed)| b.record(0, sec(t), failed, false, 0))
            .last()
            .unwrap()
    };
    let ten_s = SimDuration::from_secs(10);
    // Resilience4j (10 buckets of 1 s on the clock): at 10.4 s the failure of 0.5 s is
    // in bucket 0, ten buckets back: gone, though only 9.9 s old (the exact window
    // keeps it, and opens at 2 failures of 3).
    let outcomes = [(0.5, true), (9.9, false), (10.4, true)];
    assert_eq!(
        run(BreakerWindow::Time(ten_s), 0.6, &outcomes),
        Transition::Opened
    );
    let clock = BreakerWindow::Buckets {
        window: ten_s,
        count: 10,
        start: BucketStart::Clock,
    };
    assert_eq!(run(clock, 0.6, &outcomes), Transition::None);
    // Polly (10 buckets of 3 s, each opened by an outcome): the outcomes of 2 and 3.5 s
    // joined the bucket opened at 1 s and leave with it at 31 s, though 29 and 27.5 s
    // old: 2 failures of 3 remain (0.67). The exact window keeps them: 3 of 5 (0.6).
    let thirty_s = SimDuration::from_secs(30);
    let outcomes = [
        (1.0, false),
        (2.0, false),
        (3.5, true),
        (4.5, false),
        (5.0, true),
        (31.0, true),
    ];
    assert_eq!(
        run(BreakerWindow::Time(thirty_s), 0.65, &outcomes),
        Transition::None
    );
    let polly = BreakerWindow::Buckets {
        window: thirty_s,
        count: 10,
        start: BucketStart::Outcome,
    };
    assert_eq!(run(polly, 0.65, &outcomes), Transition::Opened);
    // The same on the clock's 3 s buckets: 31 s is in bucket 10, so bucket 0 (1 and 2 s)
    // has left and bucket 1 (3.5, 4.5 and 5 s) stays: 3 failures of 4.
    let clock = BreakerWindow::Buckets {
        window: thirty_s,
        count: 10,
        start: BucketStart::Clock,
    };
    assert_eq!(run(clock, 0.65, &outcomes), Transition::Opened);
    assert_eq!(run(clock, 0.8, &outcomes), Transition::None);
}

/// Resilience4j's slow-call rate: 5 calls in the window, the breaker opens when the slow
/// share reaches 0.6 however few fail, and not at 2 slow of 5; slow outcomes leave the
/// window as the others do.
#[test]
fn slow_calls_open_the_breaker_at_their_own_rate() {
    let slow_spec = BreakerSpec {
        failure_rate: 0.5,
        window: BreakerWindow::Calls(5),
        slow_call: Some(SimDuration::from_secs(1)),
        slow_call_rate: 0.6,
        ..spec(Scope::Global)
    };
    let mut b = Breakers::new(&slow_spec, 1);
    // ok, slow ok, ok, slow failed, ok: 1 failure, 2 slow of 5.
    for (i, (failed, slow)) in [
        (false, false),
        (false, true),
        (false, false),
        (true, true),
        (false, false),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            b.record(0, SimTime(i as u64), failed, slow, 0),
            Transition::None
        );
    }
    // A slow success pushes out the first ok: 3 slow of 5 = 0.6.
    assert_eq!(b.record(0, SimTime(5), false, true, 0), Transition::Opened);
    // Without slow_call, `slow` is ignored: the same outcomes never open it.
    let mut plain = Breakers::new(
        &BreakerSpec {
            slow_call: None,
            ..slow_spec
        },
        1,
    );
    for i in 0..20 {
        assert_eq!(
            plain.record(0, SimTime(i), false, true, 0),
            Transition::None
        );
    }
    // Half-open under `rate` (3 probes, min_calls 5 -> all 3 decide): 2 slow of 3 is
    // above 0.6; under `all`, one slow probe re-opens at once.
    for (rule, outcomes, last) in [
        (HalfOpenRule::Rate, [false, true, true], Transition::Opened),
        (HalfOpenRule::Rate, [false, false, true], Transition::Closed),
        (HalfOpenRule::All, [true, false, false], Transition::Opened),
    ] {
        let mut b = Breakers::new(
            &BreakerSpec {
                half_open: rule,
                ..slow_spec
            },
            1,
        );
        for i in 0..5 {
            b.record(0, SimTime(i), true, false, 0);
        }
        b.half_open(0, SimTime(100));
        let probes: Vec<_> = (0..3).map(|_| b.admit(0).unwrap()).collect();
        let got: Vec<_> = outcomes
            .iter()
            .zip(&probes)
            .map(|(&slow, &p)| b.record(0, SimTime(101), false, slow, p))
            .take_while(|t| *t == Transition::None)
            .collect();
        let decided = if got.len() < 3 {
            b.admit(0)
                .map_or(Transition::Opened, |_| Transition::Closed)
        } else {
            Transition::None
        };
        assert_eq!(decided, last, "{rule:?} {outcomes:?}");
    }
}

#[test]
fn opens_after_exactly_min_calls_failures_at_rate_one() {
    let mut b = Breakers::new(&spec(Scope::Client), 1);
    for i in 0..4 {
        assert_eq!(b.record(0, SimTime(i), true, false, 0), Transition::None);
    }
    assert_eq!(b.record(0, SimTime(4), true, false, 0), Transition::Opened);
    assert_eq!(b.admit(0), None);
    assert_eq!(b.open_count(), 1);
}

#[test]
fn opens_when_the_failure_share_equals_a_decimal_threshold() {
    // (rate, calls): rate x calls is a whole number of failures that the float product
    // overshoots (0.28 x 25 = 7.000000000000001) or undershoots (0.57 x 100 =
    // 56.99999999999999); exactly that many failures must open the breaker, one fewer
    // must not.
    for (rate, calls) in [
        (0.28, 25u32),
        (0.14, 50),
        (0.56, 25),
        (0.07, 100),
        (0.57, 100),
    ] {
        let failures = (rate * f64::from(calls)).round() as u32;
        for opened in [false, true] {
            let spec = BreakerSpec {
                failure_rate: rate,
                min_calls: calls,
                ..spec(Scope::Global)
            };
            let mut b = Breakers::new(&spec, 1);
            let failed = |i: u32| i < failures - u32::from(!opened);
            let last = (0..calls)
                .map(|i| b.record(0, SimTime(u64::from(i)), failed(i), false, 0))
                .last();
            let want = if opened {
                Transition::Opened
            } else {
                Transition::None
            };
            assert_eq!(last, Some(want), "{rate} x {calls}, opened {opened}");
        }
    }
}

#[test]
fn half_open_admits_exactly_the_probes_and_closes_when_all_succeed() {
    let mut b = Breakers::new(&spec(Scope::Global), 10);
    for i in 0..5 {
        b.record(0, SimTime(i), true, false, 0);
    }
    let five_s = SimTime(4 + SimDuration::from_secs(5).0);
    b.half_open(0, five_s);
    assert_eq!(b.open_time(five_s), SimDuration::from_secs(5));
    let admitted: Vec<_> = (0..5).map(|_| b.admit(0)).collect();
    assert_eq!(admitted, [Some(1), Some(1), Some(1), None, None]);
    assert_eq!(b.record(0, five_s, false, false, 1), Transition::None);
    assert_eq!(b.record(0, five_s, false, false, 1), Transition::None);
    assert_eq!(b.record(0, five_s, false, false, 1), Transition::Closed);
    assert_eq!(b.admit(0), Some(0));
}

#[test]
fn a_failed_probe_reopens() {
    let mut b = Breakers::new(&spec(Scope::Client), 1);
    for i in 0..5 {
        b.record(0, SimTime(i), true, false, 0);
    }
    b.half_open(0, SimTime(100));
    assert_eq!(b.admit(0), Some(1));
    assert_eq!(
        b.record(0, SimTime(101), true, false, 1),
        Transition::Opened
    );
    assert_eq!(b.admit(0), None);
}

#[test]
fn a_slow_probe_from_an_earlier_round_does_not_count() {
    let mut b = Breakers::new(&spec(Scope::Global), 10);
    for i in 0..5 {
        b.record(0, SimTime(i), true, false, 0);
    }
    b.half_open(0, SimTime(100));
    let slow = b.admit(0).unwrap(); // round 1's probe, still in flight
    let failing = b.admit(0).unwrap();
    assert_eq!(
        b.record(0, SimTime(101), true, false, failing),
        Transition::Opened
    );
    b.half_open(0, SimTime(200));
    // Round 2: round 1's late success is not one of this round's probes.
    assert_eq!(
        b.record(0, SimTime(201), false, false, slow),
        Transition::None
    );
    let probes: Vec<Probe> = (0..3).map(|_| b.admit(0).unwrap()).collect();
    assert!(probes.iter().all(|p| *p == 2));
    for (i, p) in probes.into_iter().enumerate() {
        let t = b.record(0, SimTime(202), false, false, p);
        assert_eq!(t == Transition::Closed, i == 2);
    }
}

#[test]
fn old_outcomes_leave_the_window() {
    let mut b = Breakers::new(&spec(Scope::Client), 1);
    for i in 0..4 {
        b.record(0, SimTime(i), true, false, 0);
    }
    // Ten seconds later the four failures have expired: one more does not open it.
    let later = SimTime(SimDuration::from_secs(10).0 + 3);
    assert_eq!(b.record(0, later, true, false, 0), Transition::None);
}

#[test]
fn a_window_of_calls_keeps_the_last_n_outcomes_however_old() {
    // Resilience4j's COUNT_BASED window: 10 calls, at most 50% failures.
    let spec = BreakerSpec {
        failure_rate: 0.5,
        window: BreakerWindow::Calls(10),
        min_calls: 10,
        ..spec(Scope::Client)
    };
    let mut b = Breakers::new(&spec, 1);
    let hour = SimDuration::from_secs(3600).0;
    // Four failures an hour apart stay in the window (a time window would have lost
    // them); five successes make nine calls: no decision yet.
    for i in 0..4 {
        assert_eq!(
            b.record(0, SimTime(i * hour), true, false, 0),
            Transition::None
        );
    }
    for i in 4..9 {
        assert_eq!(
            b.record(0, SimTime(i * hour), false, false, 0),
            Transition::None
        );
    }
    // The tenth call, a failure: 5 of 10 reach 0.5.
    assert_eq!(
        b.record(0, SimTime(9 * hour), true, false, 0),
        Transition::Opened
    );

    // Sliding: F F F F then six S (4 of 10). Each new outcome pushes out the oldest:
    // S pushes out an F (3 of 10), then three Fs push out the other three Fs (still 3),
    // the next F pushes out an S (4 of 10), and the one after (5 of 10) opens it.
    let mut b = Breakers::new(&spec, 1);
    let first = [
        true, true, true, true, false, false, false, false, false, false,
    ];
    for (i, failed) in first.into_iter().enumerate() {
        assert_eq!(
            b.record(0, SimTime(i as u64), failed, false, 0),
            Transition::None
        );
    }
    let then = [false, true, true, true, true];
    for (i, failed) in then.into_iter().enumerate() {
        let t = SimTime(10 + i as u64);
        assert_eq!(
            b.record(0, t, failed, false, 0),
            Transition::None,
            "outcome {i}"
        );
    }
    assert_eq!(b.record(0, SimTime(15), true, false, 0), Transition::Opened);
}

#[test]
fn the_rate_rule_waits_for_every_probe_and_compares_their_failure_share() {
    let spec = BreakerSpec {
        failure_rate: 0.5,
        half_open_probes: 4,
        half_open: HalfOpenRule::Rate,
        ..spec(Scope::Global)
    };
    let trip = |b: &mut Breakers| {
        for i in 0..5 {
            b.record(0, SimTime(i), true, false, 0);
        }
        b.half_open(0, SimTime(100));
        (0..4).map(|_| b.admit(0).unwrap()).collect::<Vec<_>>()
    };
    // One failed probe of four (25%): it stays half-open until the last, then closes.
    let mut b = Breakers::new(&spec, 1);
    let p = trip(&mut b);
    assert_eq!(b.admit(0), None);
    assert_eq!(
        b.record(0, SimTime(101), true, false, p[0]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(102), false, false, p[1]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(103), false, false, p[2]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(104), false, false, p[3]),
        Transition::Closed
    );
    assert_eq!(b.admit(0), Some(0));
    // Two of four (50%) reach the rate: it re-opens at the last probe.
    let mut b = Breakers::new(&spec, 1);
    let p = trip(&mut b);
    assert_eq!(
        b.record(0, SimTime(101), false, false, p[0]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(102), true, false, p[1]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(103), true, false, p[2]),
        Transition::None
    );
    assert_eq!(
        b.record(0, SimTime(104), false, false, p[3]),
        Transition::Opened
    );
    assert_eq!(b.admit(0), None);
    // The `all` rule re-opens at the first failed probe.
    let mut b = Breakers::new(
        &BreakerSpec {
            half_open: HalfOpenRule::All,
            ..spec
        },
        1,
    );
    let p = trip(&mut b);
    assert_eq!(
        b.record(0, SimTime(101), true, false, p[0]),
        Transition::Opened
    );
}

#[test]
fn the_rate_rule_decides_after_min_calls_probes_when_fewer() {
    // Resilience4j's half-open window holds `probes` calls but decides once it has
    // min(min_calls, probes) outcomes: 2 of 4 here.
    let spec = BreakerSpec {
        failure_rate: 0.5,
        min_calls: 2,
        half_open_probes: 4,
        half_open: HalfOpenRule::Rate,
        ..spec(Scope::Global)
    };
    let mut b = Breakers::new(&spec, 1);
    for i in 0..2 {
        b.record(0, SimTime(i), true, false, 0);
    }
    b.half_open(0, SimTime(100));
    let p: Vec<Probe> = (0..4).map(|_| b.admit(0).unwrap()).collect();
    assert_eq!(
        b.record(0, SimTime(101), false, false, p[0]),
        Transition::None
    );
    // 1 failure of 2 reaches 0.5: it re-opens without waiting for the other two.
    assert_eq!(
        b.record(0, SimTime(102), true, false, p[1]),
        Transition::Opened
    );
    // A late probe of that round is ignored while open.
    assert_eq!(
        b.record(0, SimTime(103), true, false, p[2]),
        Transition::None
    );
}

#[test]
fn a_probe_whose_outcome_is_not_recorded_gives_its_slot_back() {
    let mut b = Breakers::new(&spec(Scope::Global), 1);
    for i in 0..5 {
        b.record(0, SimTime(i), true, false, 0);
    }
    b.half_open(0, SimTime(100));
    let p: Vec<Probe> = (0..3).map(|_| b.admit(0).unwrap()).collect();
    assert_eq!(b.admit(0), None);
    // One probe got a 400: another attempt may probe in its place.
    b.release(0, p[0]);
    let q = b.admit(0).expect("a slot was given back");
    assert_eq!(b.admit(0), None);
    for probe in [p[1], p[2]] {
        assert_eq!(
            b.record(0, SimTime(101), false, false, probe),
            Transition::None
        );
    }
    assert_eq!(
        b.record(0, SimTime(102), false, false, q),
        Transition::Closed
    );
    // Released outside half-open, or by a plain call: nothing happens.
    b.release(0, 0);
    assert_eq!(b.admit(0), Some(0));
}
