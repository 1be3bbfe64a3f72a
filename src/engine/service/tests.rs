//! Unit tests of one server's state: admission, queue disciplines and timeouts, slowdown,
//! OCC versions, autoscaling decisions.

use super::*;
use crate::model::dist::Dist;
use crate::model::service::{Autoscale, Slowdown};

fn spec() -> ServerSpec {
    ServerSpec {
        outages: vec![Outage {
            start: SimTime(SimDuration::from_secs(1).0),
            end: SimTime(SimDuration::from_secs(3).0),
            kind: OutageKind::Down,
            retry_after: Hint::Auto,
        }],
        retry_after: Hint::Auto,
        ..ServerSpec::plain(2, 1, Dist::Constant(SimDuration::from_millis(100)))
    }
}

fn entry(request: u32) -> Queued {
    Queued {
        request,
        serial: 1,
        answer: Status::Ok,
        joined: SimTime::ZERO,
        timer_seq: u64::from(request),
    }
}

fn admit(s: &mut Service, t: SimTime, request: u32) -> Admission {
    s.admit(t, entry(request), false, 0, true, || 0.0)
}

#[test]
fn slots_then_queue_then_503() {
    let mut s = Service::new(&spec());
    let t = SimTime::ZERO;
    assert!(matches!(admit(&mut s, t, 0), Admission::Serve(_)));
    assert!(matches!(admit(&mut s, t, 1), Admission::Serve(_)));
    assert_eq!(admit(&mut s, t, 2), Admission::Queued);
    // (1 queued + 1) * 100 ms / 2 slots = 100 ms, sent as a whole second.
    assert_eq!(
        admit(&mut s, t, 3),
        Admission::Rejected {
            status: Status::Unavailable,
            hint: Some(SimDuration::from_secs(1))
        }
    );
    s.release(t);
    assert_eq!(s.take_next(t), Some(entry(2)));
    s.release(t);
    assert_eq!(s.take_next(t), None);
    assert_eq!(s.in_service(), 1);
}

#[test]
fn lifo_serves_the_newest_and_expiry_takes_the_oldest() {
    let mut spec = spec();
    spec.outages.clear();
    spec.concurrency = 1;
    spec.queue = 10;
    spec.discipline = Discipline::Lifo;
    spec.queue_timeout = Some(SimDuration(100));
    let mut s = Service::new(&spec);
    let at = |n| SimTime(n);
    assert!(matches!(
        s.admit(at(0), entry(0), false, 0, true, || 0.0),
        Admission::Serve(_)
    ));
    for r in 1..=3 {
        s.admit(at(r as u64 * 10), entry(r), false, 0, true, || 0.0);
    }
    assert_eq!(s.next_expiry(), Some((at(110), 1)));
    assert_eq!(s.expire(at(109), u64::MAX), None);
    // Due at 110, but its timeout (number 1) was set after a check numbered 0.
    assert_eq!(s.expire(at(110), 0), None);
    assert_eq!(s.expire(at(110), 1).map(|q| q.request), Some(1));
    s.release(at(115));
    assert_eq!(s.take_next(at(115)).map(|q| q.request), Some(3));
    assert_eq!(s.queued(), 1);
}

#[test]
fn a_capacity_drop_starts_nothing_until_the_count_falls_below_it() {
    let mut spec = spec();
    spec.outages.clear();
    spec.queue = 5;
    let mut s = Service::new(&spec);
    let t = SimTime::ZERO;
    admit(&mut s, t, 0);
    admit(&mut s, t, 1);
    admit(&mut s, t, 2);
    s.set_concurrency(1);
    s.release(t);
    assert_eq!(s.take_next(t), None, "1 busy, 1 slot");
    s.release(t);
    assert_eq!(s.take_next(t).map(|q| q.request), Some(2));
    s.set_concurrency(3);
    assert_eq!(s.take_next(t), None, "queue empty");
}

#[test]
fn a_crash_loses_the_queue_and_frees_every_slot() {
    let mut spec = spec();
    spec.outages.clear();
    let mut s = Service::new(&spec);
    let t = SimTime::ZERO;
    admit(&mut s, t, 0);
    admit(&mut s, t, 1);
    admit(&mut s, t, 2);
    let g = s.generation();
    let lost = s.crash(SimTime(5), 0);
    assert_eq!(lost.len(), 1);
    assert_eq!((s.in_service(), s.queued()), (0, 0));
    assert_ne!(s.generation(), g);
}

#[test]
fn slowdown_counts_the_requests_held() {
    let mut spec = spec();
    spec.outages.clear();
    spec.queue = 10;
    spec.slowdown = Some(Slowdown::new(vec![(0.0, 1.0), (100.0, 2.0)]));
    let mut s = Service::new(&spec);
    let t = SimTime::ZERO;
    admit(&mut s, t, 0); // busy 1: the one starting
    assert_eq!(s.slowdown_at(t), 1.01);
    admit(&mut s, t, 1);
    admit(&mut s, t, 2); // queued
    assert_eq!(s.slowdown_at(t), 1.03);
}

#[test]
fn autoscaling_increases_after_warmup_and_decreases_at_once() {
    let mut spec = spec();
    spec.outages.clear();
    spec.concurrency = 10;
    spec.queue = 100;
    spec.autoscale = Some(Autoscale {
        min: 2,
        max: 40,
        target: 0.5,
        interval: SimDuration(1000),
        warmup: SimDuration(5000),
    });
    let mut s = Service::new(&spec);
    for r in 0..10 {
        s.admit(SimTime::ZERO, entry(r), false, 0, true, || 0.0);
    }
    // 10 busy for the whole interval: 10 / 0.5 = 20 wanted, after the warmup.
    assert_eq!(s.autoscale(SimTime(1000)), Scaling::Later(20, 1));
    // Still 10 busy: already heading to 20.
    assert_eq!(s.autoscale(SimTime(2000)), Scaling::Keep);
    for _ in 0..10 {
        s.release(SimTime(2000));
    }
    // Idle: a decrease at once, even while an increase warms up, and it calls that
    // increase off.
    assert_eq!(s.autoscale(SimTime(3000)), Scaling::Now(2));
    s.set_concurrency(2);
    assert_eq!(s.scale_up_lands(1), None);
    // A capacity step down to 1, then a saturated interval: compared with the 1 slot
    // there is, 1 / 0.5 wants 2 (not compared with the 20 once decided).
    s.set_concurrency(1);
    s.admit(SimTime(7000), entry(0), false, 0, true, || 0.0);
    assert_eq!(s.autoscale(SimTime(8000)), Scaling::Later(2, 2));
    assert_eq!(s.scale_up_lands(2), Some(2));
    // Still 1 slot, saturated: 2 wanted again; then a capacity step to 4 before those
    // land: the increase is moot, and the 4 slots stay.
    assert_eq!(s.autoscale(SimTime(9000)), Scaling::Later(2, 3));
    s.set_concurrency(4);
    assert_eq!(s.scale_up_lands(3), None, "a step to 4 came first");
}

/// Each decision supersedes the ones before it: an increase still warming up never lands
/// above what a later decision asks for. It is called off when that decision keeps the
/// slots as they are, lowered when it asks for fewer; a smaller one goes on. 10 slots,
/// target 0.5, decisions every 1 000 ns, warmup 5 000 ns.
#[test]
fn a_later_autoscaling_decision_calls_off_larger_increases_still_warming_up() {
    let mut spec = spec();
    spec.outages.clear();
    spec.concurrency = 10;
    spec.queue = 100;
    spec.autoscale = Some(Autoscale {
        min: 2,
        max: 40,
        target: 0.5,
        interval: SimDuration(1000),
        warmup: SimDuration(5000),
    });
    let mut s = Service::new(&spec);
    let busy = |s: &mut Service, n: u32, t: u64| {
        while s.in_service() > n {
            s.release(SimTime(t));
        }
        for r in s.in_service()..n {
            s.admit(SimTime(t), entry(r), false, 0, true, || 0.0);
        }
    };
    // 10 busy over [0, 1000): 10 / 0.5 = 20, due at 6 000.
    busy(&mut s, 10, 0);
    assert_eq!(s.autoscale(SimTime(1000)), Scaling::Later(20, 1));
    // 5 busy over [1000, 2000): 5 / 0.5 = 10, the slots there are: nothing to do now, and
    // the 20 is no longer wanted.
    busy(&mut s, 5, 1000);
    assert_eq!(s.autoscale(SimTime(2000)), Scaling::Keep);
    assert_eq!(s.scale_up_lands(1), None, "called off at 2 000");
    // 8 busy: 16 (decision 2); 10 busy: 20 (decision 3), on top of the 16 on its way;
    // then 9 busy: 18 lowers the 20 (due at 9 000) to 18, and leaves the 16.
    busy(&mut s, 8, 2000);
    assert_eq!(s.autoscale(SimTime(3000)), Scaling::Later(16, 2));
    busy(&mut s, 10, 3000);
    assert_eq!(s.autoscale(SimTime(4000)), Scaling::Later(20, 3));
    busy(&mut s, 9, 4000);
    assert_eq!(s.autoscale(SimTime(5000)), Scaling::Keep);
    // 7 busy: 14 lowers both to 14: the first is enough (lands at 8 000).
    busy(&mut s, 7, 5000);
    assert_eq!(s.autoscale(SimTime(6000)), Scaling::Keep);
    assert_eq!(s.scale_up_lands(2), Some(14), "16, lowered to 14, at 8 000");
    assert_eq!(s.scale_up_lands(3), None, "the 20 ended at 14 too");
    // Two increases on their way, then a decrease: both called off.
    busy(&mut s, 8, 6000);
    assert_eq!(s.autoscale(SimTime(7000)), Scaling::Later(16, 4));
    busy(&mut s, 9, 7000);
    assert_eq!(s.autoscale(SimTime(8000)), Scaling::Later(18, 5));
    busy(&mut s, 4, 8000);
    assert_eq!(s.autoscale(SimTime(9000)), Scaling::Now(8));
    assert_eq!((s.scale_up_lands(4), s.scale_up_lands(5)), (None, None));
}

#[test]
fn occ_writes_commit_only_on_the_version_they_expect() {
    let mut spec = spec();
    spec.outages.clear();
    spec.occ = Occ::ReadWrite;
    let mut s = Service::new(&spec);
    let t = SimTime::ZERO;
    assert_eq!(
        s.admit(t, entry(0), false, 0, true, || 0.0),
        Admission::Written
    );
    assert_eq!(s.version(), 1);
    assert_eq!(
        s.admit(t, entry(1), false, 0, true, || 0.0),
        Admission::Rejected {
            status: Status::Conflict,
            hint: None
        }
    );
    assert_eq!(
        s.admit(t, entry(1), false, 1, false, || 0.0),
        Admission::Hold {
            version: 1,
            answer: Status::Ok
        }
    );
    assert!(s.commit(1));
    assert!(!s.commit(1));
    spec.occ = Occ::WriteOnly;
    let mut w = Service::new(&spec);
    assert_eq!(
        w.admit(t, entry(0), false, 7, false, || 0.0),
        Admission::Hold {
            version: 0,
            answer: Status::Ok
        }
    );
    assert_eq!(w.in_service(), 0, "writes take no slot");
}

#[test]
fn outage_covers_start_but_not_end() {
    let mut s = Service::new(&spec());
    let start = SimTime(SimDuration::from_secs(1).0);
    let end = SimTime(SimDuration::from_secs(3).0);
    assert_eq!(
        admit(&mut s, start, 0),
        Admission::Rejected {
            status: Status::Unavailable,
            hint: Some(SimDuration::from_secs(2))
        }
    );
    assert!(matches!(
        admit(&mut s, SimTime(end.0 - 1), 0),
        Admission::Rejected { .. }
    ));
    assert!(matches!(admit(&mut s, end, 0), Admission::Serve(_)));
}

#[test]
fn rate_limiter_refuses_with_time_to_next_token_in_whole_seconds() {
    let mut spec = spec();
    spec.outages.clear();
    spec.queue = 100;
    spec.rate_limit = Some(RateLimiter {
        rate: 0.5,
        burst: 2.0,
        retry_after: Hint::Auto,
    });
    let mut s = Service::new(&spec);
    let t = SimTime::ZERO;
    assert!(!matches!(admit(&mut s, t, 0), Admission::Rejected { .. }));
    assert!(!matches!(admit(&mut s, t, 1), Admission::Rejected { .. }));
    // Empty bucket refilling at 0.5/s: the next token is 2 s away.
    assert_eq!(
        admit(&mut s, t, 2),
        Admission::Rejected {
            status: Status::TooManyRequests,
            hint: Some(SimDuration::from_secs(2))
        }
    );
    // 1.5 s later, 0.75 token: 0.5 s to go, sent as 1 s.
    let later = SimTime(SimDuration::from_millis(1500).0);
    assert_eq!(
        admit(&mut s, later, 3),
        Admission::Rejected {
            status: Status::TooManyRequests,
            hint: Some(SimDuration::from_secs(1))
        }
    );
}

#[test]
fn rate_limiter_earns_exactly_one_token_per_interval() {
    // 10 tokens/s, burst 1, arrivals every 10 ms from 1 ms: the token taken at 1 ms comes
    // back at exactly 101 ms, 201 ms, ... (summing ten 0.1 s refills in floats made
    // 0.9999999999999999 and refused each of them, admitting every 110 ms).
    let mut spec = spec();
    spec.outages.clear();
    spec.concurrency = 1000;
    spec.rate_limit = Some(RateLimiter {
        rate: 10.0,
        burst: 1.0,
        retry_after: Hint::None,
    });
    let mut s = Service::new(&spec);
    let admitted: Vec<u64> = (0..200u64)
        .map(|i| 1 + 10 * i)
        .filter(|&ms| {
            let t = SimTime(SimDuration::from_millis(ms).0);
            !matches!(admit(&mut s, t, ms as u32), Admission::Rejected { .. })
        })
        .collect();
    let every_100: Vec<u64> = (0..20).map(|i| 1 + 100 * i).collect();
    assert_eq!(admitted, every_100);
    // A burst of 3 at 2.5 tokens/s: three at once, then one exactly every 400 ms.
    spec.rate_limit = Some(RateLimiter {
        rate: 2.5,
        burst: 3.0,
        retry_after: Hint::None,
    });
    let mut s = Service::new(&spec);
    let at = |ms: u64| SimTime(SimDuration::from_millis(ms).0);
    let tries = [0, 0, 0, 0, 399, 400, 799, 800, 1200];
    let admitted: Vec<bool> = tries
        .iter()
        .enumerate()
        .map(|(i, &ms)| !matches!(admit(&mut s, at(ms), i as u32), Admission::Rejected { .. }))
        .collect();
    assert_eq!(
        admitted,
        [true, true, true, false, false, true, false, true, true]
    );
}

#[test]
fn hints_round_trip_through_events() {
    assert_eq!(decode_hint(encode_hint(None)), None);
    // Whole seconds (what a Retry-After header carries) travel exactly, up to 24.8 days:
    // 2 hours and urllib3's 6-hour maximum were cut at 71.6 minutes by a single scale.
    for secs in [3, 2_147, 2_148, 4_295, 7_200, 21_600, 2_000_000] {
        let h = Some(SimDuration::from_secs(secs));
        assert_eq!(decode_hint(encode_hint(h)), h, "{secs} s");
    }
    // Microsecond precision below 35.8 minutes, rounded up; a nanosecond hint is not none.
    let h = |ns: u64| decode_hint(encode_hint(Some(SimDuration(ns))));
    assert_eq!(h(1_500), Some(SimDuration(2_000)));
    assert_eq!(h(1), Some(SimDuration(1_000)));
    // Beyond, milliseconds rounded up, saturating at 2^31 - 1 ms.
    let long = 3_000_000_000_000 + 1;
    assert_eq!(h(long), Some(SimDuration(3_000_001_000_000)));
    let max = Some(SimDuration((u64::from(u32::MAX >> 1)) * 1_000_000));
    assert_eq!(h(u64::MAX), max);
}
