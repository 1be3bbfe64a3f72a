//! The validation rules that involve more than one key: [retry] defaults and their
//! per-strategy overrides, and which key an error names. Single-key refusals are
//! covered through the binary in tests/cli/errors.rs.

use super::*;
use crate::model::Source;
use crate::model::backoff::Jitter;
use crate::model::outcome::{Status, StatusSet};
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
    assert_eq!(
        e[0].msg,
        "expected cap >= base (2s, set by strategy[1].base), found 1s"
    );
    assert_eq!(e[0].line, Some(line_of(&src, "cap = \"1s\"")));
}

#[test]
fn a_population_base_above_the_inherited_cap_is_named() {
    let src = text(
        "max_attempts = 3\ncap = \"1s\"\nbase = \"100ms\"\n",
        &["name = \"a\""],
    )
    .replace("[clients]\n", "[clients]\nretry = { base = \"2s\" }\n");
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].key, "retry.cap");
    assert_eq!(
        e[0].msg,
        "expected cap >= base (2s, set by clients.retry.base), found 1s"
    );
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
fn clamp_to_deadline_is_inherited_from_retry() {
    let s = ok(&text(
        "max_attempts = 3\ndeadline = \"1m\"\nclamp_to_deadline = true\n",
        &[
            "name = \"a\"\nbase = \"1ms\"\ncap = \"1s\"",
            "name = \"b\"\nbase = \"1ms\"\ncap = \"1s\"\nclamp_to_deadline = false",
        ],
    ));
    assert!(s.strategies[0].retry.clamp_to_deadline);
    assert!(!s.strategies[1].retry.clamp_to_deadline);
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
        "expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"0ms\""
    );
}

/// A limit takes the word `none` too: the message says so, and guesses it when misspelt.
#[test]
fn a_limit_names_none_and_guesses_it() {
    let e = errors(&text(
        "max_attempts = 3\ndeadline = \"nnoe\"\n",
        &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
    ));
    assert_eq!(
        e[0].msg,
        "expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"nnoe\" (did you mean \"none\"?)"
    );
    let e = errors(&text(
        "max_attempts = 3\ntimeout = { a = 1 }\n",
        &["name = \"a\"\nbase = \"1ms\"\ncap = \"1s\""],
    ));
    assert_eq!(
        e[0].msg,
        "expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found a table"
    );
}
