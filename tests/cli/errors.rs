//! Every user-facing error: exit status 2, a message naming file:line:col, the key, what was
//! expected and what was found, and no output folder (DESIGN.md "a refused scenario writes
//! nothing"). Each test starts from [`TINY`] and changes one thing, so the line numbers in
//! the expected messages are TINY's (line 1 is its leading blank line).

use std::path::Path;

use crate::common::{TINY, Workspace, herdsim, tiny_with};

/// Runs `herdsim <args>` in `ws` (so messages name files as given) and checks the refusal:
/// exit status 2, nothing on stdout, no output folder. Returns stderr.
pub(crate) fn refused_in(ws: &Workspace, args: &[&str]) -> String {
    let out = herdsim()
        .current_dir(ws.path())
        .args(args)
        .output()
        .expect("run herdsim");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit status; stderr:\n{stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout should be empty, found:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !ws.path().join("out").exists() && !ws.path().join("output").exists(),
        "a refused run must not create an output folder; stderr:\n{stderr}"
    );
    stderr
}

/// Writes `text` to bad.toml, runs it, checks the refusal and that stderr contains each of
/// `expected`. Returns stderr.
fn refused(text: &str, expected: &[&str]) -> String {
    let ws = Workspace::new();
    ws.file("bad.toml", text);
    let stderr = refused_in(&ws, &["run", "bad.toml", "--out", "out", "--no-charts"]);
    for e in expected {
        assert!(
            stderr.contains(e),
            "stderr should contain\n  {e}\nfound:\n{stderr}"
        );
    }
    stderr
}

/// The problem lines of a refusal (everything but the closing count line).
pub(crate) fn problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            let count = l.strip_prefix("herdsim: ").and_then(|l| l.split_once(' '));
            !count
                .is_some_and(|(n, rest)| n.parse::<usize>().is_ok() && rest.starts_with("problem"))
        })
        .collect()
}

// ---- keys -------------------------------------------------------------------------------

#[test]
fn fails_with_unknown_top_level_key() {
    let stderr = refused(
        &tiny_with("seed = 7\n", "seed = 7\nsede = 8\n"),
        &[
            "herdsim: error: bad.toml:4:1: sede: unknown key `sede` (did you mean `seed`?), expected one of `name`",
            "`seed`",
        ],
    );
    assert!(
        stderr.contains("herdsim: 1 problem found; nothing was written"),
        "{stderr}"
    );
}

/// Every unreadable key is found by parsing the file again, at most 200 times: 200 are
/// listed in line order (the parser finds them in key order: k0, k1, k10, k100...), and
/// with a 201st the refusal says that the rest was not checked. It used to stop silently at
/// 200, in key order, and count 200 problems (helper-90).
#[test]
fn past_200_unreadable_keys_the_refusal_says_the_rest_was_not_checked() {
    let keys = |n: usize| {
        let keys: String = (0..n).map(|i| format!("k{i} = {i}\n")).collect();
        tiny_with("seed = 7\n", &format!("seed = 7\n{keys}"))
    };
    let stderr = refused(
        &keys(200),
        &["herdsim: 200 problems found; nothing was written"],
    );
    assert!(!stderr.contains("not checked"), "{stderr}");
    let stderr = refused(
        &keys(201),
        &["herdsim: 200 problems found, and more not checked; nothing was written"],
    );
    let listed = problems(&stderr);
    assert_eq!(listed.len(), 201, "{stderr}");
    assert!(
        listed[0].starts_with(
            "herdsim: error: bad.toml: more than 200 keys that cannot be read: the first 200 found are listed, in line order, but not necessarily the first in the file; fix them, then check again"
        ),
        "{stderr}"
    );
    let lines: Vec<usize> = listed[1..]
        .iter()
        .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
}

#[test]
fn fails_with_unknown_key_in_second_strategy() {
    refused(
        &tiny_with("jitter = \"full\"\n", "jitter = \"full\"\nbsae = \"1s\"\n"),
        &[
            "bad.toml:36:1: strategy[1].bsae: unknown key `bsae` in strategy[1] (did you mean `base`?), expected one of `name`, `base`",
        ],
    );
}

/// A misspelt key or value is answered with the likely one; a required key misspelt is one
/// problem, where it was written, not also a missing key.
#[test]
fn misspellings_suggest_the_likely_name() {
    let stderr = refused(
        &tiny_with("concurrency = 5", "concurrancy = 5"),
        &[
            "bad.toml:13:1: server.concurrancy: unknown key `concurrancy` in server (did you mean `concurrency`?), expected one of `concurrency`, `queue`",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // Values too, whatever their case; a word far from every name gets no guess.
    let cases = [
        (
            "jitter = \"full\"",
            "jitter = \"Full\"",
            "found \"Full\" (did you mean \"full\"?)",
        ),
        (
            "jitter = \"full\"",
            "jitter = \"decorelated\"",
            "found \"decorelated\" (did you mean \"decorrelated\"?)",
        ),
        (
            "end = \"1s\"",
            "end = \"1s\"\nkind = \"dwon\"",
            "found \"dwon\" (did you mean \"down\"?)",
        ),
        (
            "dist = \"constant\", value = \"10ms\" }\n\n[server]",
            "dist = \"constnat\", value = \"10ms\" }\n\n[server]",
            "found `constnat` (did you mean `constant`?)",
        ),
        (
            "max_attempts = 8",
            "max_attempts = 8\nretry_on = [\"503\", \"timout\"]",
            "found \"timout\" (did you mean \"timeout\"?)",
        ),
        // A plural for a singular and the reverse: one slip, though `strategies` is three
        // edits from `strategy`.
        (
            "[[strategy]]\nname = \"none\"",
            "[[strategies]]\nname = \"none\"",
            "unknown key `strategies` (did you mean `strategy`?)",
        ),
        (
            "[[server.outages]]",
            "[[server.outage]]",
            "unknown key `outage` in server (did you mean `outages`?)",
        ),
        // A jitter table's one key misspelt.
        (
            "jitter = \"full\"",
            "jitter = { proportionl = 0.5 }",
            "found `proportionl` (did you mean `proportional`?)",
        ),
        // Of names equally close, the one not written yet: `mix` beside `max` is `min`.
        (
            "[server]",
            "[server]\nautoscale = { mix = 1, max = 2, target = 0.5, interval = \"1s\" }",
            "unknown key `mix` in server.autoscale (did you mean `min`?)",
        ),
        // Names equally close are all offered: `iifo` is one edit from each.
        (
            "[server]",
            "[server]\ndiscipline = \"iifo\"",
            "found \"iifo\" (did you mean \"fifo\" or \"lifo\"?)",
        ),
        // Another name of a discipline is answered with the one it means, though one
        // letter from the other: FILO is LIFO.
        (
            "[server]",
            "[server]\ndiscipline = \"FILO\"",
            "server.discipline: expected \"fifo\" or \"lifo\", found \"FILO\" (first in, last out: did you mean \"lifo\"?)",
        ),
        // Two letters swapped that are not neighbours: two edits, more than a word of four
        // letters may be off by, but the same letters.
        (
            "[server]",
            "[server]\nretry_after = \"aotu\"",
            "server.retry_after: expected \"none\", \"auto\" or a duration > 0, found \"aotu\" (did you mean \"auto\"?)",
        ),
        (
            "[server]",
            "[server]\ndiscipline = \"oiff\"",
            "found \"oiff\" (did you mean \"fifo\"?)",
        ),
    ];
    for (from, to, expected) in cases {
        refused(&tiny_with(from, to), &[expected]);
    }
    // A key of a distribution: one problem, the unknown key, not also the missing one.
    let stderr = refused(
        &tiny_with(
            "value = \"10ms\" }\n\n[server]",
            "valeu = \"10ms\" }\n\n[server]",
        ),
        &["unknown key `valeu` in network.latency (did you mean `value`?)"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // A kind of one key says what it expects too.
    assert!(
        stderr.contains("(did you mean `value`?), expected `value`"),
        "{stderr}"
    );
    // A key of another kind is named as such, not guessed to be a misspelt key of this one.
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"exponential\", median = \"10ms\" }",
        ),
        &[
            "unknown key `median` in server.service (a key of dist = \"lognormal\"), expected `mean`",
        ],
    );
    // Two misspellings of the tag: the first written is the one reported, not the first
    // by name.
    let stderr = refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dsit = \"constant\", dits = \"constant\", value = \"10ms\" }",
        ),
        &["server.service.dsit: unknown key `dsit` in server.service (did you mean `dist`?)"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // The tag misspelt is the unknown key it is, not the tag missing.
    let stderr = refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dsit = \"constant\", value = \"10ms\" }",
        ),
        &[
            "server.service.dsit: unknown key `dsit` in server.service (did you mean `dist`?), expected `dist` naming the kind",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // A misspelt key of a kind of two: guessed, and the key it misspells not also missing.
    let stderr = refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { maen = \"10ms\", sd = \"1ms\", dist = \"normal\" }",
        ),
        &["unknown key `maen` in server.service (did you mean `mean`?), expected `mean` or `sd`"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // A status code is not guessed at: 504 is no misspelt 503.
    let stderr = refused(
        &tiny_with("max_attempts = 8", "max_attempts = 8\nretry_on = [\"504\"]"),
        &["found \"504\""],
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    // Nor is anything with a digit in it: 50x, 50.3 and -503 are no misspelt 503.
    for written in ["\"50x\"", "50.3", "\"-503\""] {
        let stderr = refused(
            &tiny_with(
                "max_attempts = 8",
                &format!("max_attempts = 8\nretry_on = [{written}]"),
            ),
            &[&format!("found {written}")],
        );
        assert!(!stderr.contains("did you mean"), "{stderr}");
    }
    // A code with a space is a code with a space, not a 4xx never retried.
    refused(
        &tiny_with(
            "max_attempts = 8",
            "max_attempts = 8\nretry_on = [\"409 \"]",
        ),
        &["found \"409 \" (no spaces around it)"],
    );
    // A name with a space gets that hint alone, not also a guess at itself.
    let stderr = refused(
        &tiny_with(
            "max_attempts = 8",
            "max_attempts = 8\nretry_on = [\" timeout\"]",
        ),
        &["found \" timeout\" (no spaces around it)"],
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    // A 4xx with a space: both notes.
    refused(
        &tiny_with(
            "max_attempts = 8",
            "max_attempts = 8\nretry_on = [\" 404\"]",
        ),
        &["found \" 404\" (no spaces around it; 4xx other than 409 and 429 are never retried)"],
    );
    let stderr = refused(
        &tiny_with("jitter = \"full\"", "jitter = \"zzz\""),
        &["found \"zzz\""],
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    let stderr = refused(
        &tiny_with("seed = 7", "seed = 7\nqq = 1"),
        &["unknown key `qq`"],
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    // A short word two edits from a name is no misspelling of it: `time` is an unknown key,
    // and `name` is still missing.
    let stderr = refused(
        &tiny_with("name = \"none\"", "time = \"none\""),
        &[
            "bad.toml:26:1: strategy[0].time: unknown key `time` in strategy[0], expected one of",
            "bad.toml:25:1: strategy[0].name: missing required key `name` in strategy[0]",
        ],
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
}

#[test]
fn fails_with_unknown_key_in_outage() {
    refused(
        &tiny_with("end = \"1s\"\n", "end = \"1s\"\nstop = \"2s\"\n"),
        &[
            "bad.toml:20:1: server.outages[0].stop: unknown key `stop` in server.outages[0], expected one of `start`, `end`",
        ],
    );
}

#[test]
fn fails_with_unknown_key_in_distribution() {
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"constant\", value = \"10ms\", sd = \"1ms\" }",
        ),
        &[
            "bad.toml:15:48: server.service.sd: unknown key `sd` in server.service (a key of dist = \"normal\"), expected `value`",
        ],
    );
}

#[test]
fn fails_with_name_under_retry() {
    refused(
        &tiny_with("[retry]\n", "[retry]\nname = \"x\"\n"),
        &["bad.toml:22:8: retry.name: unknown key `name` in [retry]"],
    );
}

#[test]
fn fails_with_missing_name() {
    refused(
        &tiny_with("name = \"tiny\"\n", ""),
        &["bad.toml:1:1: name: missing required key `name`"],
    );
}

#[test]
fn fails_with_missing_clients_count() {
    refused(
        &tiny_with("count = 50\n", "requests = 1\n"),
        &[
            "bad.toml:6:1: clients: expected one of `count` (closed), `rate` or `profile` (open), `trace`, found none of them",
        ],
    );
}

#[test]
fn fails_with_missing_clients_table() {
    refused(
        &tiny_with("[clients]\ncount = 50\n", ""),
        &["bad.toml: clients: missing required table [clients]"],
    );
}

#[test]
fn fails_with_missing_network_latency() {
    refused(
        &tiny_with("latency = { dist = \"constant\", value = \"10ms\" }\n", ""),
        &["bad.toml:9:1: network.latency: missing required key `latency` in network"],
    );
}

#[test]
fn fails_with_missing_server_concurrency() {
    refused(
        &tiny_with("concurrency = 5\n", ""),
        &["bad.toml:12:1: server.concurrency: missing required key `concurrency` in server"],
    );
}

#[test]
fn fails_with_missing_server_service() {
    refused(
        &tiny_with("service = { dist = \"constant\", value = \"10ms\" }\n", ""),
        &["bad.toml:12:1: server.service: missing required key `service` in server"],
    );
}

#[test]
fn fails_with_missing_strategy_base() {
    refused(
        &tiny_with("name = \"full\"\nbase = \"100ms\"\n", "name = \"full\"\n"),
        &["bad.toml:31:1: strategy[1].base: missing required key `base` in strategy[1]"],
    );
}

#[test]
fn fails_with_missing_strategy_cap_and_says_nothing_about_cap_below_base() {
    let stderr = refused(
        &tiny_with(
            "base = \"100ms\"\ncap = \"2s\"\njitter = \"full\"",
            "base = \"100ms\"\njitter = \"full\"",
        ),
        &["bad.toml:31:1: strategy[1].cap: missing required key `cap` in strategy[1]"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

#[test]
fn fails_with_missing_max_attempts_said_once_for_retry() {
    let stderr = refused(
        &tiny_with("max_attempts = 8\n", ""),
        &[
            "bad.toml:21:1: retry.max_attempts: missing required key `max_attempts` in [retry] (or in every [[strategy]])",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

#[test]
fn fails_with_missing_max_attempts_in_the_strategy_without_it() {
    // One strategy sets it, so [retry] need not: only the other one is at fault.
    let stderr = refused(
        &tiny_with("max_attempts = 8\n", "").replacen(
            "jitter = \"full\"",
            "jitter = \"full\"\nmax_attempts = 3",
            1,
        ),
        &[
            "bad.toml:24:1: strategy[0].max_attempts: missing required key `max_attempts` in strategy[0] (set it in [retry] or in this [[strategy]])",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

#[test]
fn fails_with_missing_distribution_kind() {
    refused(
        &tiny_with(
            "latency = { dist = \"constant\", value = \"10ms\" }",
            "latency = { value = \"10ms\" }",
        ),
        &["bad.toml:10:11: network.latency.dist: missing required key `dist` in network.latency"],
    );
}

#[test]
fn fails_with_duplicate_key() {
    refused(
        &tiny_with("seed = 7\n", "seed = 7\nseed = 8\n"),
        &[
            "bad.toml:4:1: seed: duplicate key: expected each key once, found `seed` a second time (first at line 3, column 1)",
        ],
    );
    // The key is named with its table, the array index included, also inside an inline
    // table; a second table header is a duplicate too.
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = \"1s\"\ntimeout = \"2s\""),
        &[
            "bad.toml:24:1: retry.timeout: duplicate key: expected each key once, found `timeout` a second time (first at line 23, column 1)",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", ratio = 0.1, ratio = 0.2 }",
        ),
        &[
            "bad.toml:24:41: retry.budget.ratio: duplicate key: expected each key once, found `ratio` a second time (first at line 24, column 28)",
        ],
    );
    refused(
        &format!("{TINY}\n[server]\nqueue = 3\n"),
        &[
            "bad.toml:37:2: server: duplicate key: expected each table once, found `server` a second time (first at line 12, column 2)",
        ],
    );
    // Written first another way: `[clients]` before `[[clients]]`.
    refused(
        &format!("{TINY}\n[[clients]]\nrate = 1\n"),
        &[
            "bad.toml:37:3: clients: duplicate key: expected one form of `clients`, found both [clients] and [[clients]] (the first at line 6, column 2)",
        ],
    );
    // Inside an inline table in an array, with the array's index, also when the array
    // spans lines with comments holding brackets and commas.
    let outage = "[[server.outages]]\nstart = \"0s\"\nend = \"1s\"";
    refused(
        &tiny_with(
            outage,
            "outages = [{ start = \"0s\", end = \"1s\" }, { start = \"2s\", start = \"3s\" }]",
        ),
        &[
            "bad.toml:17:58: server.outages[1].start: duplicate key: expected each key once, found `start` a second time (first at line 17, column 44)",
        ],
    );
    refused(
        &tiny_with(
            outage,
            "outages = [  # down twice, {first} [then, again]\n  \
             { start = \"0s\", end = \"1s\" },\n  \
             { start = \"2s\", end = \"3s\", x = [1, { y = 1, y = 2 }] },\n]",
        ),
        &[
            "bad.toml:19:48: server.outages[1].x[1].y: duplicate key: expected each key once, found `y` a second time (first at line 19, column 41)",
        ],
    );
    // An inline table spanning lines (TOML 1.1), with a comment before the first key.
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", # 10%, then\n  ratio = 0.1,\n  ratio = 0.2 }",
        ),
        &[
            "bad.toml:26:3: retry.budget.ratio: duplicate key: expected each key once, found `ratio` a second time (first at line 25, column 3)",
        ],
    );
    // A dotted key through a key that holds a value writes that key a second time.
    refused(
        &tiny_with("count = 50", "count = 50\ncount.x = 2"),
        &[
            "bad.toml:8:1: clients.count: duplicate key: expected each key once, found `count` a second time, as a table in `count.x` (first at line 7, column 1)",
        ],
    );
    // The latest header it repeats, in the same [[strategy]], with its index.
    refused(
        &format!(
            "{TINY}\n[[strategy]]\nname = \"c\"\n[strategy.budget]\nkind = \"ratio\"\n\
             [[strategy]]\nname = \"d\"\n[strategy.budget]\nkind = \"ratio\"\n\
             [strategy.budget]\nkind = \"ratio\"\n"
        ),
        &[
            "bad.toml:45:11: strategy[3].budget: duplicate key: expected each table once, found `budget` a second time (first at line 43, column 11)",
        ],
    );
}

/// Keys written twice in the other forms TOML allows: each is named with its path (quoted
/// segments quoted, inline tables in arrays indexed) and placed where it was first written.
#[test]
fn fails_with_duplicate_key_in_any_form() {
    let cases: &[(&str, &str)] = &[
        // A dotted key repeated inside an inline table.
        (
            "x = { a.b = 1, a.b = 2 }\n",
            "bad.toml:1:18: x.a.b: duplicate key: expected each key once, found `b` a second time (first at line 1, column 9)",
        ),
        // A dotted key through a value, inside an inline table and in a header.
        (
            "x = { a = 1, a.b = 2 }\n",
            "bad.toml:1:14: x.a: duplicate key: expected each key once, found `a` a second time, as a table in `a.b` (first at line 1, column 7)",
        ),
        (
            "[a]\nb = 1\n[a.b.c]\n",
            "bad.toml:3:4: a.b: duplicate key: expected each key once, found `b` a second time, as a table in `[a.b.c]` (first at line 2, column 1)",
        ),
        (
            "x = { a = 1 }\nx.b = 2\n",
            "bad.toml:2:1: x: duplicate key: expected each key once, found `x` a second time in `x.b` (an inline table cannot be extended; first at line 1, column 1)",
        ),
        // Quoted keys holding a dot, an `=`, a `#`.
        (
            "\"a.b\" = 1\n\"a.b\" = 2\n",
            "bad.toml:2:1: \"a.b\": duplicate key: expected each key once, found `\"a.b\"` a second time (first at line 1, column 1)",
        ),
        (
            "[\"a#b\"]\n[\"a#b\"]\n",
            "bad.toml:2:2: \"a#b\": duplicate key: expected each table once, found `\"a#b\"` a second time (first at line 1, column 2)",
        ),
        // A line of a multi-line array that starts with `[` is not a header, and a header
        // written inside a multi-line string is not one either.
        (
            "x = [\n  [ { a = 1, a = 2 } ],\n]\n",
            "bad.toml:2:14: x[0][0].a: duplicate key: expected each key once, found `a` a second time (first at line 2, column 7)",
        ),
        (
            "[server]\ns = \"\"\"\n[server]\n\"\"\"\n[server]\n",
            "bad.toml:5:2: server: duplicate key: expected each table once, found `server` a second time (first at line 1, column 2)",
        ),
        // A byte-order mark before the key an inline table is the value of; a quoted
        // segment in the key written as TOML reads it.
        (
            "\u{feff}'x' = { 'b' . c = 1, b.c = 2 }\n",
            "bad.toml:1:24: x.b.c: duplicate key: expected each key once, found `c` a second time (first at line 1, column 15)",
        ),
        // An escaped backslash before an escaped quote in an earlier string.
        (
            "x = [ \"\\\\\\\"[\", { a = 1, a = 2 } ]\n",
            "bad.toml:1:25: x[1].a: duplicate key: expected each key once, found `a` a second time (first at line 1, column 18)",
        ),
    ];
    for (text, expected) in cases {
        let stderr = refused(text, &[expected]);
        assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    }
}

// ---- durations --------------------------------------------------------------------------

#[test]
fn fails_with_bare_number_duration() {
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = 1000"),
        &[
            "bad.toml:23:11: retry.timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found the bare number 1000",
        ],
    );
}

#[test]
fn fails_with_bare_number_in_a_duration_string() {
    refused(
        &tiny_with("start = \"0s\"", "start = \"0\""),
        &[
            "bad.toml:18:9: server.outages[0].start: expected a duration with a unit, such as \"100ms\", found \"0\", a number without a unit",
        ],
    );
}

#[test]
fn fails_with_unknown_duration_unit() {
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = \"1xs\""),
        &[
            "bad.toml:23:11: retry.timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"1xs\" (unknown time unit \"xs\"",
        ],
    );
}

/// A duration the parser cannot read is explained in the user's words (not humantime's
/// byte offsets), a TOML date-time is named as one, and a seed above TOML's integers says
/// where the limit is.
#[test]
fn fails_with_unreadable_values_in_the_users_words() {
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = \"soon\""),
        &[
            "bad.toml:23:11: retry.timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"soon\" (a duration is a number and a unit, such as \"100ms\" or \"1m30s\"; expected a number at character 1)",
        ],
    );
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = 1979-05-27T07:32:00Z"),
        &[
            "bad.toml:23:11: retry.timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found the date-time 1979-05-27T07:32:00Z (a duration needs quotes and a unit, e.g. \"100ms\")",
        ],
    );
    refused(
        &tiny_with("seed = 7", "seed = 18446744073709551615"),
        &[
            "bad.toml:3:8: seed: expected an integer of at most 9223372036854775807 (the largest TOML integer), found the integer 18446744073709551615",
        ],
    );
}

#[test]
fn fails_with_negative_duration() {
    refused(
        &tiny_with(
            "base = \"100ms\"\ncap = \"2s\"\njitter = \"full\"",
            "base = \"-100ms\"\ncap = \"2s\"\njitter = \"full\"",
        ),
        &[
            "bad.toml:33:8: strategy[1].base: expected a duration with a unit, such as \"100ms\", found \"-100ms\" (a duration cannot be negative)",
        ],
    );
}

#[test]
fn fails_with_zero_time_limit() {
    refused(
        &tiny_with("seed = 7\n", "seed = 7\ntime_limit = \"0s\"\n"),
        &[
            "bad.toml:4:14: time_limit: expected a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
        ],
    );
}

#[test]
fn fails_with_zero_metrics_bucket() {
    refused(
        &tiny_with("[clients]\n", "[metrics]\nbucket = \"0ms\"\n\n[clients]\n"),
        &[
            "bad.toml:7:10: metrics.bucket: expected a duration > 0 with a unit, such as \"100ms\", found \"0ms\"",
        ],
    );
}

#[test]
fn fails_with_more_buckets_than_memory_allows() {
    // 1 h / 1 us = 3.6e9 buckets of 40 bytes: refused instead of exhausting memory.
    refused(
        &tiny_with("[clients]\n", "[metrics]\nbucket = \"1us\"\n\n[clients]\n"),
        &[
            "bad.toml:7:10: metrics.bucket: expected at most 10000000 time-series buckets (time_limit / metrics.bucket), found 3600000000",
        ],
    );
}

#[test]
fn fails_with_zero_exponential_mean() {
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"exponential\", mean = \"0ms\" }",
        ),
        &[
            "bad.toml:15:42: server.service.mean: expected a duration > 0 with a unit, such as \"100ms\", found \"0ms\"",
        ],
    );
}

#[test]
fn fails_with_zero_timeout_reported_once_for_all_strategies() {
    // The [retry] default is inherited by both strategies: one problem, not two.
    let stderr = refused(
        &tiny_with("timeout = \"1s\"", "timeout = \"0ms\""),
        &[
            "bad.toml:23:11: retry.timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"0ms\"",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    assert!(stderr.contains("herdsim: 1 problem found"), "{stderr}");
}

#[test]
fn fails_with_zero_timeout_overridden_in_a_strategy() {
    let stderr = refused(
        &tiny_with(
            "jitter = \"full\"\n",
            "jitter = \"full\"\ntimeout = \"0s\"\n",
        ),
        &["bad.toml:36:11: strategy[1].timeout: expected \"none\" or a duration > 0"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

// ---- numbers ----------------------------------------------------------------------------

#[test]
fn fails_with_negative_integer() {
    refused(
        &tiny_with("count = 50", "count = -5"),
        &["bad.toml:7:9: clients.count: expected an integer from 1 to 50000000, found -5"],
    );
}

#[test]
fn fails_with_zero_concurrency() {
    refused(
        &tiny_with("concurrency = 5", "concurrency = 0"),
        &["bad.toml:13:15: server.concurrency: expected an integer >= 1, found 0"],
    );
}

#[test]
fn fails_with_more_clients_than_fit_in_memory() {
    refused(
        &tiny_with("count = 50", "count = 4294967295"),
        &["bad.toml:7:9: clients.count: expected an integer from 1 to 50000000, found 4294967295"],
    );
}

#[test]
fn fails_with_zero_replications() {
    refused(
        &tiny_with("replications = 2", "replications = 0"),
        &["bad.toml:4:16: replications: expected an integer from 1 to 1000000, found 0"],
    );
}

#[test]
fn fails_with_string_where_integer_expected() {
    refused(
        &tiny_with("count = 50", "count = \"fifty\""),
        &["bad.toml:7:9: clients.count: expected an integer, found a string \"fifty\""],
    );
}

// ---- strategies -------------------------------------------------------------------------

#[test]
fn fails_with_cap_below_base() {
    refused(
        &tiny_with(
            "cap = \"2s\"\njitter = \"full\"",
            "cap = \"50ms\"\njitter = \"full\"",
        ),
        &["bad.toml:34:7: strategy[1].cap: expected cap >= base (100ms), found 50ms"],
    );
}

#[test]
fn fails_with_duplicate_strategy_names() {
    refused(
        &tiny_with("name = \"full\"", "name = \"none\""),
        &[
            "bad.toml:32:8: strategy[1].name: expected a unique name, found \"none\" again (also strategy[0])",
        ],
    );
}

#[test]
fn fails_with_slash_in_strategy_name() {
    refused(
        &tiny_with("name = \"full\"", "name = \"a/b\""),
        &[
            "bad.toml:32:8: strategy[1].name: expected 1 to 64 characters from a-z, 0-9, '_' and '-' (it names files), found \"a/b\"",
        ],
    );
}

#[test]
fn fails_with_dot_dot_as_scenario_name() {
    refused(
        &tiny_with("name = \"tiny\"", "name = \"..\""),
        &[
            "bad.toml:2:8: name: expected 1 to 64 characters from a-z, 0-9, '_' and '-' (it names files), found \"..\"",
        ],
    );
}

#[test]
fn fails_with_uppercase_in_scenario_name() {
    refused(
        &tiny_with("name = \"tiny\"", "name = \"Tiny\""),
        &[
            "bad.toml:2:8: name: expected 1 to 64 characters",
            "found \"Tiny\"",
        ],
    );
}

#[test]
fn fails_with_no_strategy() {
    let text = &TINY[..TINY.find("[[strategy]]").expect("TINY has strategies")];
    refused(
        text,
        &["bad.toml: strategy: expected at least one [[strategy]] table, found none"],
    );
}

#[test]
fn fails_with_unknown_jitter_word() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = \"fulll\""),
        &[
            "bad.toml:35:10: strategy[1].jitter: expected \"none\", \"full\", \"equal\", \"decorrelated\", \"decorrelated-v2\", { proportional = f }, { fraction = j } or { additive = d }, found \"fulll\"",
        ],
    );
}

#[test]
fn fails_with_additive_jitter_that_is_not_a_duration() {
    // Read as any duration key is: at the value, with the reason.
    for (value, found) in [
        (
            "\"soon\"",
            "found \"soon\" (a duration is a number and a unit",
        ),
        (
            "0.5",
            "found the bare number 0.5 (a duration needs a unit and quotes, e.g. \"0.5s\")",
        ),
        ("\"-1s\"", "found \"-1s\" (a duration cannot be negative)"),
    ] {
        refused(
            &tiny_with(
                "jitter = \"full\"",
                &format!("jitter = {{ additive = {value} }}"),
            ),
            &[&format!(
                "bad.toml:35:23: strategy[1].jitter.additive: expected a duration with a unit, such as \"100ms\", {found}"
            )],
        );
    }
    // A number key keeps its own message, at the value, and only that one: the table
    // left empty once the value is set aside is not a second problem.
    let stderr = refused(
        &tiny_with("jitter = \"full\"", "jitter = { proportional = \"x\" }"),
        &[],
    );
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: bad.toml:35:27: strategy[1].jitter.proportional: expected a number, found a string \"x\""
        ]
    );
    // A table written empty is one.
    let stderr = refused(&tiny_with("jitter = \"full\"", "jitter = {}"), &[]);
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: bad.toml:35:10: strategy[1].jitter: expected { proportional = f }, { fraction = j } or { additive = d }; found an empty table"
        ]
    );
}

#[test]
fn fails_with_proportional_jitter_of_one() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = { proportional = 1.0 }"),
        &["bad.toml:35:27: strategy[1].jitter.proportional: expected a number in [0, 1), found 1"],
    );
}

#[test]
fn fails_with_negative_proportional_jitter() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = { proportional = -0.1 }"),
        &[
            "bad.toml:35:27: strategy[1].jitter.proportional: expected a number in [0, 1), found -0.1",
        ],
    );
}

#[test]
fn fails_with_jitter_fraction_above_one() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = { fraction = 1.5 }"),
        &["bad.toml:35:23: strategy[1].jitter.fraction: expected a number in [0, 1], found 1.5"],
    );
}

#[test]
fn fails_with_unknown_jitter_table_key() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = { fractoin = 0.5 }"),
        &[
            "bad.toml:35:10: strategy[1].jitter: expected { proportional = f }, { fraction = j } or { additive = d }",
            "found `fractoin`",
        ],
    );
    // Two keys: both named.
    refused(
        &tiny_with(
            "jitter = \"full\"",
            "jitter = { fraction = 0.5, additive = \"1s\" }",
        ),
        &["found `additive` and `fraction`"],
    );
}

#[test]
fn fails_with_multiplier_below_one() {
    refused(
        &tiny_with("jitter = \"full\"", "jitter = \"full\"\nmultiplier = 0.5"),
        &["bad.toml:36:14: strategy[1].multiplier: expected a multiplier >= 1, found 0.5"],
    );
}

// ---- seed semantics (issue 3) -----------------------------------------------------------

#[test]
fn fails_with_unknown_retry_on_class() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nretry_on = [\"503\", \"502\"]",
        ),
        &[
            "bad.toml:24:20: retry.retry_on[1]: expected one of \"503\", \"500\", \"429\", \"timeout\", \"unreachable\", \"409\", found \"502\"",
        ],
    );
}

#[test]
fn fails_with_400_in_retry_on() {
    refused(
        &tiny_with("timeout = \"1s\"", "timeout = \"1s\"\nretry_on = [\"400\"]"),
        &[
            "bad.toml:24:13: retry.retry_on[0]: expected one of \"503\", \"500\", \"429\", \"timeout\", \"unreachable\", \"409\", found \"400\" (4xx other than 409 and 429 are never retried)",
        ],
    );
}

#[test]
fn fails_with_error_rate_above_one() {
    refused(
        &tiny_with(
            "end = \"1s\"",
            "end = \"1s\"\nkind = \"errors\"\nerror_rate = 1.5",
        ),
        &["bad.toml:21:14: server.outages[0].error_rate: expected a share in [0, 1], found 1.5"],
    );
}

#[test]
fn fails_with_error_rate_on_a_down_outage() {
    refused(
        &tiny_with("end = \"1s\"", "end = \"1s\"\nerror_rate = 0.5"),
        &[
            "bad.toml:20:14: server.outages[0].error_rate: `error_rate` applies only to kind = \"errors\", found kind = \"down\"",
        ],
    );
}

#[test]
fn fails_with_unknown_outage_kind() {
    refused(
        &tiny_with("end = \"1s\"", "end = \"1s\"\nkind = \"broken\""),
        &[
            "bad.toml:20:8: server.outages[0].kind: expected \"down\", \"unreachable\", \"errors\", \"slow\" or \"crash\", found \"broken\"",
        ],
    );
}

/// A problem of the `[sweep]` table's own values is listed with those of the rest of the
/// file, in line order (helper-94: the misspelt key hid it until fixed).
#[test]
fn a_sweep_tables_problems_come_with_the_rest_of_the_files() {
    let text = tiny_with("concurrency = 5", "concurrancy = 5")
        + "[sweep]\n\"strategy.1.budget\" = [{ kind = \"ratio\" }]\n";
    let stderr = refused(&text, &[]);
    let lines = problems(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("herdsim: error: bad.toml:13:1: server.concurrancy: unknown key"),
        "{stderr}"
    );
    assert_eq!(
        lines[1],
        "bad.toml:37:24: sweep.\"strategy.1.budget\": expected numbers or strings (a duration, a word), found an inline table"
    );
    assert!(
        stderr.ends_with("herdsim: 2 problems found; nothing was written\n"),
        "{stderr}"
    );
}

#[test]
fn fails_with_client_error_rate_below_zero() {
    refused(
        &tiny_with("queue = 5", "queue = 5\nclient_error_rate = -0.1"),
        &["bad.toml:15:21: server.client_error_rate: expected a share in [0, 1], found -0.1"],
    );
}

#[test]
fn fails_with_retry_after_max_of_zero() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nretry_after = { honor = true, max = \"0s\" }",
        ),
        &[
            "bad.toml:24:37: retry.retry_after.max: expected a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
        ],
    );
}

#[test]
fn fails_with_unknown_retry_after_beyond() {
    refused(
        &tiny_with(
            "jitter = \"full\"",
            "jitter = \"full\"\nretry_after = { beyond = \"wrap\" }",
        ),
        &[
            "bad.toml:36:26: strategy[1].retry_after.beyond: expected \"ignore\" or \"clamp\", found \"wrap\"",
        ],
    );
}

#[test]
fn fails_with_escalate_after_above_max_retries() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nrate_limit = { max_retries = 2, escalate_after = 3 }",
        ),
        &[
            "bad.toml:24:50: retry.rate_limit.escalate_after: expected escalate_after <= max_retries (2), found 3",
        ],
    );
}

#[test]
fn fails_with_zero_server_rate_limit() {
    refused(
        &tiny_with("queue = 5", "queue = 5\nrate_limit = { rate = 0 }"),
        &["server.rate_limit.rate: expected a rate > 0 (tokens per second), found 0"],
    );
}

// ---- budgets, breakers, fallback (issue 4) ----------------------------------------------

#[test]
fn fails_with_a_concurrent_budget_out_of_range() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"concurrent\", percent = 150, min_retries = -1 }",
        ),
        &[
            "bad.toml:24:43: retry.budget.percent: expected a percentage in [0, 100], found 150",
            "bad.toml:24:62: retry.budget.min_retries: expected an integer >= 0, found -1",
        ],
    );
}

#[test]
fn fails_at_the_key_inside_a_budget_table_with_its_own_name() {
    // A wrong type inside `budget = {...}` names the key and points at its value (it used
    // to name only `retry.budget`, at the `{`); problems come in file order.
    let budget = |table: &str| {
        tiny_with(
            "timeout = \"1s\"",
            &format!("timeout = \"1s\"\nbudget = {table}"),
        )
    };
    refused(
        &budget("{ kind = \"quota\", capacity = 1.5 }"),
        &["bad.toml:24:39: retry.budget.capacity: expected an integer, found the number 1.5"],
    );
    refused(
        &budget("{ kind = \"token_bucket\", max_tokens = \"x\" }"),
        &["bad.toml:24:48: retry.budget.max_tokens: expected a number, found a string \"x\""],
    );
    refused(
        &budget("{ kind = \"ratio\", ratio = 1979-05-27 }"),
        &["bad.toml:24:36: retry.budget.ratio: expected a number, found the date-time 1979-05-27"],
    );
    let both = refused(
        &budget("{ kind = \"ratio\", min_per_s = -3, ratio = -1 }"),
        &[],
    );
    assert_eq!(
        problems(&both),
        [
            "herdsim: error: bad.toml:24:40: retry.budget.min_per_s: expected a rate >= 0, found -3",
            "bad.toml:24:52: retry.budget.ratio: expected a ratio in [0, 1000], found -1",
        ]
    );
    // A key written before `kind` is still checked against that kind's keys, at the key.
    refused(
        &budget("{ ratio = \"x\", kind = \"quota\" }"),
        &[
            "bad.toml:24:12: retry.budget.ratio: unknown key `ratio` in retry.budget (a key of kind = \"ratio\"), expected one of `capacity`, `retry_cost`, `timeout_cost`, `throttle_cost`, `success_refund`, `scope`",
        ],
    );
}

#[test]
fn fails_at_the_key_inside_a_distribution_table() {
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"lognormal\", median = \"10ms\", sigma = \"x\" }",
        ),
        &["bad.toml:15:58: server.service.sigma: expected a number, found a string \"x\""],
    );
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"normal\", mean = \"10ms\" }",
        ),
        &["bad.toml:15:11: server.service.sd: missing required key `sd` in server.service"],
    );
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"lognormal\", median = \"10ms\", sigma = 1e308 }",
        ),
        &["bad.toml:15:58: server.service.sigma: expected a number from 0 to 1000, found 1e308"],
    );
}

#[test]
fn fails_with_budget_ratio_above_finagles_scale() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", ratio = 1000.5 }",
        ),
        &["bad.toml:24:36: retry.budget.ratio: expected a ratio in [0, 1000], found 1000.5"],
    );
}

#[test]
fn fails_with_a_negative_per_request_cap_or_one_outside_a_ratio_budget() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", per_request = -0.2, deposit = \"always\" }",
        ),
        &[
            "bad.toml:24:42: retry.budget.per_request: expected a share of the balance >= 0, found -0.2",
            "bad.toml:24:58: retry.budget.deposit: expected \"request\" or \"success\", found \"always\"",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"quota\", per_request = 0.2 }",
        ),
        &[
            "bad.toml:24:28: retry.budget.per_request: unknown key `per_request` in retry.budget (a key of kind = \"ratio\"), expected one of `capacity`, `retry_cost`, `timeout_cost`, `throttle_cost`, `success_refund`, `scope`",
        ],
    );
}

#[test]
fn fails_with_budget_zero_window() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", window = \"0s\" }",
        ),
        &[
            "bad.toml:24:37: retry.budget.window: expected a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
        ],
    );
}

#[test]
fn fails_with_unknown_budget_kind() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"leaky\" }",
        ),
        &[
            "bad.toml:24:19: retry.budget.kind: expected one of `ratio`, `token_bucket`, `quota`, `adaptive`, `concurrent`, found `leaky`",
        ],
    );
}

#[test]
fn fails_with_budget_key_of_another_kind() {
    refused(
        &tiny_with(
            "jitter = \"full\"",
            "jitter = \"full\"\nbudget = { kind = \"ratio\", max_tokens = 10 }",
        ),
        &[
            "bad.toml:36:28: strategy[1].budget.max_tokens: unknown key `max_tokens` in strategy[1].budget (a key of kind = \"token_bucket\"), expected one of `ratio`",
        ],
    );
}

#[test]
fn fails_with_unknown_budget_scope() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"token_bucket\", scope = \"fleet\" }",
        ),
        &["bad.toml:24:43: retry.budget.scope: expected \"client\" or \"global\", found \"fleet\""],
    );
}

#[test]
fn fails_with_breaker_failure_rate_of_zero() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { failure_rate = 0.0 }",
        ),
        &["bad.toml:24:28: retry.breaker.failure_rate: expected a rate in (0, 1], found 0"],
    );
}

#[test]
fn fails_with_fallback_on_without_fallback() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nfallback_on = [\"budget\"]",
        ),
        &[
            "bad.toml:24:15: retry.fallback_on: `fallback_on` needs a [fallback] table describing the fallback server, found none",
        ],
    );
}

#[test]
fn fails_with_unknown_fallback_reason() {
    let text = tiny_with(
        "timeout = \"1s\"",
        "timeout = \"1s\"\nfallback_on = [\"boredom\"]",
    ) + "\n[fallback]\nconcurrency = 1\nservice = { dist = \"constant\", value = \"1ms\" }\n";
    refused(
        &text,
        &[
            "bad.toml:24:16: retry.fallback_on: expected one of \"attempts\", \"deadline\"",
            "found \"boredom\"",
        ],
    );
}

#[test]
fn fails_with_negative_budget_ratio() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"ratio\", ratio = -0.1 }",
        ),
        &["bad.toml:24:36: retry.budget.ratio: expected a ratio in [0, 1000], found -0.1"],
    );
}

#[test]
fn fails_with_budget_without_kind() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { ratio = 0.1 }",
        ),
        &["bad.toml:24:10: retry.budget.kind: missing required key `kind` in retry.budget"],
    );
}

#[test]
fn fails_with_token_bucket_above_grpcs_1000_tokens() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"token_bucket\", max_tokens = 1001 }",
        ),
        &["bad.toml:24:48: retry.budget.max_tokens: expected max_tokens in (0, 1000], found 1001"],
    );
}

#[test]
fn fails_with_adaptive_bucket_smaller_than_one_token() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"adaptive\", size = 0.5 }",
        ),
        &[
            "bad.toml:24:38: retry.budget.size: expected a size of at least 1 (a retry takes a whole token), found 0.5",
        ],
    );
}

#[test]
fn fails_with_adaptive_bucket_filled_both_ways() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"adaptive\", fill_per_call = 0.1, fill_per_success = 0.1 }",
        ),
        &[
            "bad.toml:24:52: retry.budget.fill_per_success: expected one of `fill_per_call` (each first attempt fills the bucket) or `fill_per_success` (each success does), found both",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbudget = { kind = \"adaptive\", fill_per_success = 0 }",
        ),
        &["bad.toml:24:50: retry.budget.fill_per_success: expected fill_per_success > 0, found 0"],
    );
}

#[test]
fn fails_with_a_rate_limit_ladder_on_a_status_that_is_never_retried() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nrate_limit = { on = [\"429\", \"404\"] }",
        ),
        &[
            "retry.rate_limit.on[1]: expected one of \"503\", \"500\", \"429\", \"timeout\", \"unreachable\", \"409\", found \"404\" (4xx other than 409 and 429 are never retried)",
        ],
    );
}

/// A default wait above the maximum wait would never be waited (the wait is min(hint or
/// default, max)); a max_wait set alone lowers the default instead.
#[test]
fn fails_with_a_rate_limit_default_wait_above_max_wait() {
    let ladder = |table: &str| {
        tiny_with(
            "timeout = \"1s\"",
            &format!("timeout = \"1s\"\nrate_limit = {table}"),
        )
    };
    refused(
        &ladder("{ default_wait = \"5s\", max_wait = \"1s\" }"),
        &[
            "bad.toml:24:48: retry.rate_limit.max_wait: expected max_wait >= default_wait (5s), found 1s",
        ],
    );
    refused(
        &ladder("{ default_wait = \"90s\" }"),
        &[
            "bad.toml:24:31: retry.rate_limit.default_wait: expected default_wait <= max_wait (1m, its default), found 1m 30s",
        ],
    );
    let s = crate::common::scenario(&ladder("{ max_wait = \"2s\" }"));
    let ladder = s.strategies[0].retry.rate_limit.expect("a ladder");
    assert_eq!(ladder.wait(None).as_nanos(), 2_000_000_000);
}

#[test]
fn fails_with_breaker_zero_window() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { window = \"0s\" }",
        ),
        &[
            "bad.toml:24:22: retry.breaker.window: expected a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
        ],
    );
}

#[test]
fn fails_with_breaker_zero_half_open_probes() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { half_open_probes = 0 }",
        ),
        &["bad.toml:24:32: retry.breaker.half_open_probes: expected an integer >= 1, found 0"],
    );
}

#[test]
fn fails_with_an_increment_under_decorrelated_jitter() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\njitter = \"decorrelated\"\nincrement = \"1s\"",
        ),
        &[
            "bad.toml:25:13: retry.increment: expected no increment with jitter \"decorrelated\", which does not use the ladder; found 1s",
        ],
    );
}

#[test]
fn fails_with_client_rate_limiter_values_out_of_range() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nclient_rate_limiter = { beta = 1.0, min_fill_rate = 0, scope = \"fleet\" }",
        ),
        &[
            "retry.client_rate_limiter.beta: expected a number in (0, 1), found 1",
            "retry.client_rate_limiter.min_fill_rate: expected a rate > 0 (tokens per second), found 0",
            "retry.client_rate_limiter.scope: expected \"client\" or \"global\", found \"fleet\"",
        ],
    );
}

#[test]
fn fails_with_jitter_past_cap_false_under_decorrelated_jitter() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\njitter = \"decorrelated\"\njitter_past_cap = false",
        ),
        &[
            "bad.toml:25:19: retry.jitter_past_cap: expected jitter_past_cap = true with jitter \"decorrelated\", which does not use the ladder; found false",
        ],
    );
}

#[test]
fn fails_with_breaker_time_and_count_windows_both() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { window = \"10s\", window_calls = 100 }",
        ),
        &[
            "bad.toml:24:44: retry.breaker.window_calls: expected either `window` (a time window) or `window_calls` (the last N calls), found both",
        ],
    );
}

#[test]
fn fails_with_a_slow_call_rate_alone_or_slow_call_values_out_of_range() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { slow_call_rate = 0.5 }",
        ),
        &[
            "bad.toml:24:30: retry.breaker.slow_call_rate: expected `slow_call` (the time after which a call is slow) beside slow_call_rate, found none",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { slow_call = \"0s\", slow_call_rate = 1.5 }",
        ),
        &[
            "bad.toml:24:25: retry.breaker.slow_call: expected a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
            "bad.toml:24:48: retry.breaker.slow_call_rate: expected a rate in (0, 1], found 1.5",
        ],
    );
}

#[test]
fn fails_with_window_buckets_without_a_time_window_or_buckets_from_alone() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { window_calls = 100, window_buckets = 10 }",
        ),
        &[
            "bad.toml:24:50: retry.breaker.window_buckets: expected a time `window` to cut into buckets, found `window_calls`",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { buckets_from = \"outcome\", trip_on = \"success\" }",
        ),
        &[
            "bad.toml:24:28: retry.breaker.buckets_from: expected `window_buckets` (the buckets whose start it sets) beside buckets_from, found none",
            "bad.toml:24:49: retry.breaker.trip_on: expected \"outcome\" or \"failure\", found \"success\"",
        ],
    );
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { window = \"5ns\", window_buckets = 10, buckets_from = \"epoch\" }",
        ),
        &[
            "bad.toml:24:46: retry.breaker.window_buckets: expected at most one bucket per nanosecond of the window (5ns), found 10",
            "bad.toml:24:65: retry.breaker.buckets_from: expected \"clock\" or \"outcome\", found \"epoch\"",
        ],
    );
}

#[test]
fn fails_with_breaker_zero_window_calls_or_unknown_half_open_rule() {
    refused(
        &tiny_with(
            "timeout = \"1s\"",
            "timeout = \"1s\"\nbreaker = { window_calls = 0, half_open = \"most\" }",
        ),
        &[
            "bad.toml:24:28: retry.breaker.window_calls: expected an integer >= 1, found 0",
            "bad.toml:24:43: retry.breaker.half_open: expected \"all\" or \"rate\", found \"most\"",
        ],
    );
}

// ---- distributions ----------------------------------------------------------------------

#[test]
fn fails_with_unknown_distribution() {
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"gamma\", mean = \"10ms\" }",
        ),
        &[
            "bad.toml:15:20: server.service.dist: expected one of `constant`, `uniform`, `normal`, `exponential`, `lognormal`, found `gamma`",
        ],
    );
}

#[test]
fn fails_with_uniform_max_below_min() {
    refused(
        &tiny_with(
            "latency = { dist = \"constant\", value = \"10ms\" }",
            "latency = { dist = \"uniform\", min = \"15ms\", max = \"5ms\" }",
        ),
        &["bad.toml:10:51: network.latency.max: expected max >= min (15ms), found 5ms"],
    );
}

#[test]
fn fails_with_missing_distribution_parameter() {
    refused(
        &tiny_with(
            "latency = { dist = \"constant\", value = \"10ms\" }",
            "latency = { dist = \"normal\", mean = \"10ms\" }",
        ),
        &["bad.toml:10:11: network.latency.sd: missing required key `sd` in network.latency"],
    );
}

// ---- outages ----------------------------------------------------------------------------

#[test]
fn fails_with_overlapping_outages() {
    refused(
        &tiny_with(
            "end = \"1s\"\n",
            "end = \"1s\"\n\n[[server.outages]]\nstart = \"500ms\"\nend = \"2s\"\n",
        ),
        &[
            "bad.toml:21:1: server.outages[1]: expected outages that do not overlap, found [500ms, 2s) overlapping server.outages[0] [0s, 1s)",
        ],
    );
}

#[test]
fn fails_with_outage_inside_a_longer_one_written_earlier() {
    // [0, 10s) then [4s, 5s) then [2s, 3s): both later windows overlap the first one.
    let stderr = refused(
        &tiny_with(
            "end = \"1s\"\n",
            "end = \"10s\"\n\n[[server.outages]]\nstart = \"4s\"\nend = \"5s\"\n\n[[server.outages]]\nstart = \"2s\"\nend = \"3s\"\n",
        ),
        &[
            "server.outages[1]: expected outages that do not overlap, found [4s, 5s) overlapping server.outages[0] [0s, 10s)",
            "server.outages[2]: expected outages that do not overlap, found [2s, 3s) overlapping server.outages[0] [0s, 10s)",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
}

#[test]
fn fails_with_outage_end_not_after_start() {
    refused(
        &tiny_with("end = \"1s\"", "end = \"0s\""),
        &["bad.toml:19:7: server.outages[0].end: expected end > start (0s), found 0s"],
    );
}

// ---- files ------------------------------------------------------------------------------

#[test]
fn fails_with_toml_syntax_error() {
    refused(
        &tiny_with("count = 50", "count = = 50"),
        &["bad.toml:7:9: TOML syntax: extra `=`, expected nothing, found `= 50`"],
    );
}

#[test]
fn fails_with_unclosed_table_header() {
    refused(
        &tiny_with("[clients]", "[clients"),
        &["bad.toml:6:9: TOML syntax: unclosed table, expected `]`, found the end of the line"],
    );
}

#[test]
fn fails_with_a_syntax_error_quoting_at_most_40_characters_of_a_long_line() {
    let long = format!("seed = 7 {}", "x".repeat(100_000));
    let stderr = refused(
        &tiny_with("seed = 7", &long),
        &["found `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`...\n"],
    );
    assert!(stderr.len() < 400, "{} bytes", stderr.len());
}

/// An inline table or array left open is blamed by the parser on the next header; the
/// message says where the bracket opened (strings holding brackets do not count).
#[test]
fn fails_with_an_unclosed_inline_table_naming_where_it_opened() {
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"constant\", value = \"10ms\"",
        )
        .replace(
            "name = \"tiny\"",
            "name = \"tiny\"\ndescription = \"a } and a ]\"",
        ),
        &[
            "missing key for inline table element, expected `,`, found `[[server.outages]]` (the `{` at line 16, column 11 is not closed)",
        ],
    );
}

/// Control characters where the parser stopped are shown escaped, not dropped (an escape
/// sequence's ESC) or trimmed away as blanks (a form feed).
#[test]
fn fails_with_a_syntax_error_showing_control_characters() {
    refused(
        &tiny_with("seed = 7", "seed = 7 \u{1b}[31mRED"),
        &["found `\\u{1b}[31mRED`"],
    );
    refused(
        &tiny_with("seed = 7", "seed = 7 # c\u{c}"),
        &["expected printable characters, found `\\u{c}`"],
    );
}

/// A strategy's retry key may be set in `[retry]` instead: a misspelling there is the
/// reason a strategy lacks the key, reported once. Not the other way round: a misspelling
/// in one strategy says nothing of the others, so `[retry]` lacking the key is reported.
#[test]
fn a_retry_key_misspelt_in_retry_is_reported_once() {
    let scenario = |retry: &str, strategy: &str| {
        format!(
            "name = \"r\"\n[clients]\ncount = 10\n[network]\n\
             latency = {{ dist = \"constant\", value = \"10ms\" }}\n[server]\nconcurrency = 5\n\
             service = {{ dist = \"constant\", value = \"10ms\" }}\n\
             [retry]\ncap = \"1s\"\n{retry}\n[[strategy]]\nname = \"a\"\n{strategy}\n"
        )
    };
    let stderr = refused(
        &scenario("bsae = \"100ms\"\nmax_attempts = 3", ""),
        &["retry.bsae: unknown key `bsae` in retry (did you mean `base`?)"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // `max_attempts`, whose message reads the other way round.
    let stderr = refused(
        &scenario(
            "base = \"100ms\"\nmax_atempts = 3",
            "\n[[strategy]]\nname = \"b\"\nmax_attempts = 2",
        ),
        &["retry.max_atempts: unknown key `max_atempts` in retry (did you mean `max_attempts`?)"],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    let stderr = refused(
        &scenario(
            "base = \"100ms\"",
            "max_atempts = 3\n[[strategy]]\nname = \"b\"",
        ),
        &[
            "strategy[0].max_atempts: unknown key `max_atempts` in strategy[0] (did you mean `max_attempts`?)",
            "retry.max_attempts: missing required key `max_attempts` in [retry] (or in every [[strategy]])",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
    // A misspelling guessed to be two missing keys explains neither.
    let stderr = refused(
        &scenario("base = \"100ms\"\nmax_attempts = 3", "").replace(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"uniform\", mix = \"2ms\" }",
        ),
        &[
            "unknown key `mix` in server.service (did you mean `min` or `max`?)",
            "missing required key `min`",
            "missing required key `max`",
        ],
    );
    assert_eq!(problems(&stderr).len(), 3, "{stderr}");
}

/// Found by fuzzing the error paths: each problem is reported once, where it is.
#[test]
fn fails_once_for_each_problem_found_by_fuzzing() {
    // A dotted key where a value belongs: one error, not also a made-up syntax error.
    let stderr = refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"constant\", value.x = 1 }",
        ),
        &[
            "bad.toml:15:32: server.service.value: expected a duration with a unit, such as \"100ms\", found a table",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // A uniform max that is no duration: not also "expected max >= min, found 0s".
    let stderr = refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"uniform\", min = \"1ms\", max = true }",
        ),
        &[
            "server.service.max: expected a duration with a unit, such as \"100ms\", found the boolean true",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
    // A negative bare number is not told to become "-5ms".
    refused(
        &tiny_with(
            "service = { dist = \"constant\", value = \"10ms\" }",
            "service = { dist = \"constant\", value = -5 }",
        ),
        &[
            "found the bare number -5 (a duration is never negative, and needs a unit and quotes, such as \"100ms\")",
        ],
    );
    // An array left open at the end of the file.
    refused(
        &format!("{TINY}seed2 = [1, 2\n"),
        &["TOML syntax: unclosed array, expected `]`, found the end of the file"],
    );
    // A float beyond 1.8e308 in an array of tables: the element's index, in words.
    refused(
        &tiny_with("jitter = \"full\"", "jitter = { proportional = 1e400 }"),
        &[
            "bad.toml:35:27: strategy[1].jitter.proportional: expected a number of at most 1.8e308, found 1e400",
        ],
    );
    // Text after a number is unexpected there; the number needs no quotes.
    refused(
        &tiny_with("seed = 7", "seed = 7 xxx"),
        &[
            "bad.toml:3:10: TOML syntax: unexpected key or value, expected newline, `#`, found `xxx`",
        ],
    );
    // A byte-order mark is no column.
    refused(
        &format!(
            "\u{feff}name = \"x\" 5\n{}",
            TINY.replace("name = \"tiny\"\n", "")
        ),
        &["bad.toml:1:12: TOML syntax: unexpected key or value"],
    );
}

#[test]
fn fails_with_nonexistent_scenario_file() {
    let ws = Workspace::new();
    let stderr = refused_in(&ws, &["run", "nope.toml", "--out", "out"]);
    assert!(
        stderr.contains("herdsim: error: nope.toml: cannot read the scenario file: "),
        "{stderr}"
    );
}

#[test]
fn fails_with_a_scenario_file_that_is_not_utf8_at_the_first_bad_byte() {
    let ws = Workspace::new();
    let path = ws.file("bad.toml", "");
    std::fs::write(&path, b"name = \"x\"\ndescription = \"caf\xe9\"\n").unwrap();
    let stderr = refused_in(&ws, &["run", "bad.toml", "--out", "out"]);
    assert_eq!(
        problems(&stderr),
        ["herdsim: error: bad.toml:2:19: expected UTF-8 text, found bytes that are not UTF-8"]
    );
}

/// A device or a huge file given as the scenario is refused after 16 MiB, not read whole.
#[cfg(target_os = "linux")]
#[test]
fn fails_with_a_scenario_file_larger_than_16_mib() {
    let ws = Workspace::new();
    let stderr = refused_in(&ws, &["check", "/dev/zero"]);
    assert!(
        stderr
            .contains("/dev/zero: expected a scenario file of at most 16 MiB, found a larger file"),
        "{stderr}"
    );
    ws.file(
        "bad.toml",
        &tiny_with("count = 50", "trace = \"/dev/zero\""),
    );
    let stderr = refused_in(&ws, &["check", "bad.toml"]);
    assert!(
        stderr.contains("found \"/dev/zero\": it holds more than 1 GiB, the most herdsim reads"),
        "{stderr}"
    );
}

/// A scenario file that exists but cannot be read is an I/O failure: exit 1, nothing
/// written (`/proc/self/mem` fails to read at offset 0, even for root).
#[cfg(target_os = "linux")]
#[test]
fn fails_with_exit_1_for_a_scenario_file_that_cannot_be_read() {
    let ws = Workspace::new();
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "/proc/self/mem", "--out", "out"])
        .output()
        .expect("run herdsim");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("herdsim: error: cannot read the scenario file /proc/self/mem: "),
        "{stderr}"
    );
    assert!(!ws.path().join("out").exists());
}

#[test]
fn fails_with_two_scenarios_of_the_same_name() {
    let ws = Workspace::new();
    ws.file("a.toml", TINY);
    ws.file("b.toml", TINY);
    let stderr = refused_in(&ws, &["run", "a.toml", "b.toml", "--out", "out"]);
    assert!(
        stderr.contains(
            "b.toml:2:8: name: expected a name not used by another scenario of this run (both write to the same folder), found \"tiny\" also in a.toml"
        ),
        "{stderr}"
    );
}

#[test]
fn fails_with_problems_of_every_file_reported_together() {
    let ws = Workspace::new();
    ws.file("a.toml", &tiny_with("count = 50", "count = 0"));
    ws.file("ok.toml", &tiny_with("name = \"tiny\"", "name = \"fine\""));
    ws.file(
        "b.toml",
        &tiny_with(
            "cap = \"2s\"\njitter = \"full\"",
            "cap = \"1ms\"\njitter = \"full\"",
        ),
    );
    let stderr = refused_in(&ws, &["run", "a.toml", "ok.toml", "b.toml", "--out", "out"]);
    let lines = problems(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].ends_with(
            "a.toml:7:9: clients.count: expected an integer from 1 to 50000000, found 0"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("b.toml:34:7: strategy[1].cap: expected cap >= base"),
        "{stderr}"
    );
    assert!(
        stderr.contains("herdsim: 2 problems found; nothing was written"),
        "{stderr}"
    );
}

#[test]
fn fails_with_every_problem_of_one_file_in_file_order() {
    // Three independent mistakes, each of a different kind: all three reported, in order.
    let text = tiny_with("count = 50", "count = 0")
        .replacen("timeout = \"1s\"", "timeout = \"1\"", 1)
        .replacen("jitter = \"full\"", "jitter = \"ful\"", 1);
    let stderr = refused(&text, &[]);
    let lines = problems(&stderr);
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].starts_with("herdsim: error: bad.toml:7:9: clients.count: "),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("bad.toml:23:11: retry.timeout: "),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with("bad.toml:35:10: strategy[1].jitter: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("herdsim: 3 problems found; nothing was written"),
        "{stderr}"
    );
}

#[test]
fn fails_with_unknown_keys_and_wrong_types_reported_with_the_other_problems() {
    // serde stops at the first unknown key or wrong type; herdsim goes on and reports all.
    let text = tiny_with("seed = 7\n", "seed = 7\nsede = 8\n")
        .replacen("concurrency = 5", "concurrency = \"five\"", 1)
        .replacen("end = \"1s\"", "end = \"0s\"", 1)
        .replacen(
            "jitter = \"full\"",
            "jitter = \"full\"\nbudget = { ratoi = 0.5, kind = \"ratio\" }",
            1,
        );
    let stderr = refused(&text, &[]);
    let lines = problems(&stderr);
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with("herdsim: error: bad.toml:4:1: sede: unknown key `sede`"),
        "{stderr}"
    );
    // The wrongly typed required key is not also reported as missing.
    assert_eq!(
        lines[1],
        "bad.toml:14:15: server.concurrency: expected an integer, found a string \"five\""
    );
    assert_eq!(
        lines[2],
        "bad.toml:20:7: server.outages[0].end: expected end > start (0s), found 0s"
    );
    assert!(
        lines[3].starts_with(
            "bad.toml:37:12: strategy[1].budget.ratoi: unknown key `ratoi` in strategy[1].budget"
        ),
        "{stderr}"
    );
}

#[test]
fn check_fails_with_the_same_message_and_writes_nothing() {
    let ws = Workspace::new();
    ws.file("bad.toml", &tiny_with("count = 50", "count = 0"));
    let stderr = refused_in(&ws, &["check", "bad.toml"]);
    assert!(
        stderr.contains(
            "bad.toml:7:9: clients.count: expected an integer from 1 to 50000000, found 0"
        ),
        "{stderr}"
    );
}

// ---- command line -----------------------------------------------------------------------

fn tiny_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.file("tiny.toml", TINY);
    ws
}

#[test]
fn fails_with_zero_threads() {
    let ws = tiny_workspace();
    let stderr = refused_in(&ws, &["run", "tiny.toml", "--out", "out", "--threads", "0"]);
    assert!(
        stderr.contains("herdsim: error: --threads: expected a number from 1 to 1024, found 0"),
        "{stderr}"
    );
}

/// Numbers in flags are refused in herdsim's words (not "invalid digit found in string"),
/// and a negative one reaches the check (not "unexpected argument '-5' found").
#[test]
fn fails_with_flag_numbers_that_are_not_whole_numbers() {
    let ws = tiny_workspace();
    for (flag, value, said) in [
        ("--seed", "-1", "expected a whole number, found \"-1\""),
        // The largest seed a scenario file holds (a signed 64-bit TOML integer), so that a
        // run's recorded seed can be written into its scenario (u64::MAX was taken).
        (
            "--seed",
            "9223372036854775808",
            "expected a whole number of at most 9223372036854775807, found \"9223372036854775808\"",
        ),
        ("--threads", "1.5", "expected a whole number, found \"1.5\""),
        // Too large for the flag's type: refused with the flag's range, not the type's.
        (
            "--threads",
            "99999999999999999999",
            "expected a number from 1 to 1024, found \"99999999999999999999\"",
        ),
        (
            "--replications",
            "99999999999",
            "expected a number from 1 to 1000000, found \"99999999999\"",
        ),
        (
            "--replications",
            "abc",
            "expected a whole number, found \"abc\"",
        ),
        ("--max-memory", "-5GB", "found \"-5GB\""),
        ("--shard", "-1/2", "found \"-1/2\""),
    ] {
        let stderr = refused_in(&ws, &["run", "tiny.toml", "--out", "out", flag, value]);
        assert!(
            stderr.contains(&format!("invalid value '{value}' for '{flag} "))
                && stderr.contains(said),
            "{flag} {value}: {stderr}"
        );
    }
}

#[test]
fn fails_with_zero_replications_flag() {
    let ws = tiny_workspace();
    let stderr = refused_in(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--replications", "0"],
    );
    assert!(
        stderr.contains(
            "herdsim: error: --replications: expected a number from 1 to 1000000, found 0"
        ),
        "{stderr}"
    );
}

#[test]
fn fails_with_negative_replications_flag() {
    let ws = tiny_workspace();
    let stderr = refused_in(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--replications", "-1"],
    );
    assert!(
        stderr.contains("invalid value '-1' for '--replications"),
        "{stderr}"
    );
}

#[test]
fn fails_with_unknown_flag() {
    let ws = tiny_workspace();
    let stderr = refused_in(&ws, &["run", "tiny.toml", "--out", "out", "--bogus"]);
    assert!(stderr.contains("unexpected argument '--bogus'"), "{stderr}");
}

#[test]
fn fails_with_check_and_no_scenario() {
    let ws = Workspace::new();
    let stderr = refused_in(&ws, &["check"]);
    assert!(stderr.contains("<SCENARIOS>"), "{stderr}");
}

#[test]
fn fails_with_schedule_cap_below_base() {
    let ws = Workspace::new();
    let stderr = refused_in(&ws, &["schedule", "--base", "1s", "--cap", "100ms"]);
    assert!(
        stderr.contains("herdsim: error: --cap: expected cap >= base (1s), found 100ms"),
        "{stderr}"
    );
}

#[test]
fn fails_with_schedule_zero_clients_naming_the_flag() {
    let ws = Workspace::new();
    let stderr = refused_in(
        &ws,
        &[
            "schedule",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--clients",
            "0",
        ],
    );
    assert!(
        stderr.contains("herdsim: error: --clients: expected a whole number >= 1, found 0"),
        "{stderr}"
    );
    let stderr = refused_in(
        &ws,
        &[
            "schedule",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--attempts",
            "0",
        ],
    );
    assert!(
        stderr.contains("herdsim: error: --attempts: expected a whole number >= 1, found 0"),
        "{stderr}"
    );
}

#[test]
fn fails_with_schedule_bare_number_duration() {
    let ws = Workspace::new();
    let stderr = refused_in(&ws, &["schedule", "--base", "100", "--cap", "10s"]);
    assert!(
        stderr.contains("invalid value '100' for '--base <BASE>'"),
        "{stderr}"
    );
    assert!(stderr.contains("no unit"), "{stderr}");
}

#[test]
fn fails_with_schedule_unknown_jitter() {
    let ws = Workspace::new();
    let stderr = refused_in(
        &ws,
        &[
            "schedule",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--jitter",
            "proportional=1.5",
        ],
    );
    assert!(
        stderr.contains("expected a number in [0, 1), found \"1.5\""),
        "{stderr}"
    );
}

// ---- sweeps -----------------------------------------------------------------------------

/// A sweep key spelled with an index in brackets, as `--set` takes it, sweeps that entry;
/// a key of [sweep] itself is refused as such.
#[test]
fn sweeps_a_key_with_a_bracketed_index_and_refuses_one_of_sweep_itself() {
    let file = herdsim::scenario::sweep::load_str(
        "s.toml",
        &format!("{TINY}\n[sweep]\n\"strategy[1].base\" = [\"20ms\", \"30ms\"]\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let bases: Vec<u64> = file
        .points
        .iter()
        .map(|p| p.scenario.strategies[1].backoff.base.as_nanos())
        .collect();
    assert_eq!(bases, [20_000_000, 30_000_000]);
    refused(
        &format!("{TINY}\n[sweep]\n\"sweep.x\" = [1, 2]\n"),
        &[
            "bad.toml:38:13: sweep.\"sweep.x\": expected a key of the scenario, found one of [sweep] itself",
        ],
    );
}

#[test]
fn fails_with_sweep_path_into_no_table() {
    refused(
        &format!("{TINY}\n[sweep]\n\"nosuch.count\" = [1, 2]\n"),
        &[
            "bad.toml:38:18: sweep.\"nosuch.count\": no table `nosuch` in the scenario to sweep into",
        ],
    );
    // A table's name misspelt gets the likely one.
    refused(
        &format!("{TINY}\n[sweep]\n\"clinets.count\" = [1, 2]\n"),
        &["no table `clinets` in the scenario to sweep into (did you mean `clients`?)"],
    );
}

#[test]
fn fails_with_sweep_path_to_a_misspelt_key_once() {
    let stderr = refused(
        &format!("{TINY}\n[sweep]\n\"clients.cuont\" = [1, 2]\n"),
        &[
            "bad.toml:38:20: clients.cuont: unknown key `cuont` in clients (did you mean `count`?), expected one of `count`",
            "(at sweep point clients.cuont = 1)",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

#[test]
fn fails_with_sweep_index_out_of_range() {
    refused(
        &format!("{TINY}\n[sweep]\n\"strategy.5.base\" = [\"1s\"]\n"),
        &["bad.toml:38:21: sweep.\"strategy.5.base\": `strategy` has 2 entries, found index 5"],
    );
}

#[test]
fn fails_with_sweep_value_of_the_wrong_type() {
    refused(
        &format!("{TINY}\n[sweep]\n\"server.concurrency\" = [2, \"many\"]\n"),
        &[
            "bad.toml:38:28: server.concurrency: expected an integer, found a string \"many\" (at sweep point server.concurrency = many)",
        ],
    );
}

#[test]
fn fails_with_sweep_value_out_of_range() {
    refused(
        &format!("{TINY}\n[sweep]\n\"strategy.1.cap\" = [\"1s\", \"50ms\"]\n"),
        &[
            "bad.toml:38:27: strategy[1].cap: expected cap >= base (100ms), found 50ms (at sweep point strategy.1.cap = 50ms)",
        ],
    );
}

#[test]
fn fails_with_sweep_that_is_not_a_list() {
    refused(
        &format!("{TINY}\n[sweep]\n\"server.concurrency\" = 5\n"),
        &[
            "bad.toml:38:24: sweep.\"server.concurrency\": expected a list of values, found an integer",
        ],
    );
}

/// Unquoted, `clients.count = [..]` is TOML for a table: the message says to quote it.
#[test]
fn fails_with_an_unquoted_dotted_sweep_key_saying_to_quote_it() {
    let stderr = refused(&format!("{TINY}\n[sweep]\nclients.count = [10, 20]\n"), &[]);
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: bad.toml:38:1: sweep.\"clients\": expected a list of values, found a table (a dotted path is one key only when quoted: \"clients.count\" = [...])"
        ]
    );
}

/// Two equal values would give two sets of rows with one key; refused at the second.
#[test]
fn fails_with_a_value_swept_twice() {
    let stderr = refused(
        &format!(
            "{TINY}\n[sweep]\n\"clients.count\" = [10, 20, 10]\n\"strategy.1.jitter\" = [\"equal\", \"equal\"]\n"
        ),
        &[],
    );
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: bad.toml:38:28: sweep.\"clients.count\": expected distinct values, found 10 twice (values 1 and 3)",
            "bad.toml:39:33: sweep.\"strategy.1.jitter\": expected distinct values, found \"equal\" twice (values 1 and 2)",
        ]
    );
}

/// One value under two spellings of its index would be swept twice over, the later key
/// winning at every point.
#[test]
fn fails_with_a_value_swept_under_two_spellings() {
    refused(
        &format!(
            "{TINY}\n[sweep]\n\"server.outages.0.end\" = [\"1s\", \"2s\"]\n\"server.outages.00.end\" = [\"3s\"]\n"
        ),
        &[
            "bad.toml:39:27: sweep.\"server.outages.00.end\": expected each value swept by one key, found `server.outages.00.end` naming the same value as `server.outages.0.end`",
        ],
    );
}

#[test]
fn fails_with_sweep_of_booleans() {
    refused(
        &format!("{TINY}\n[sweep]\n\"server.concurrency\" = [true]\n"),
        &[
            "bad.toml:38:25: sweep.\"server.concurrency\": expected numbers or strings (a duration, a word), found a boolean",
        ],
    );
}

/// `name` names the output folder every point writes into: sweeping it would write one
/// point's files under a name the verdict does not show. An inline table is "an" inline
/// table.
#[test]
fn fails_with_sweep_of_the_name_or_of_tables() {
    refused(
        &format!(
            "{TINY}\n[sweep]\n\"name\" = [\"x\", \"y\"]\n\"server.service\" = [{{ dist = \"constant\", value = \"1ms\" }}]\n"
        ),
        &[
            "bad.toml:38:10: sweep.\"name\": expected a key other than `name`: a sweep's points share one output folder, named by `name` (sweep the values that change, and name the file once)",
            "bad.toml:39:21: sweep.\"server.service\": expected numbers or strings (a duration, a word), found an inline table",
        ],
    );
}

#[test]
fn fails_with_empty_sweep() {
    refused(
        &format!("{TINY}\n[sweep]\n"),
        &["bad.toml: sweep: expected at least one swept key, found an empty [sweep]"],
    );
}

/// A guard on the helpers: a valid TINY passes through the same path with status 0.
#[test]
fn the_unchanged_tiny_scenario_is_accepted() {
    let ws = tiny_workspace();
    let out = herdsim()
        .current_dir(ws.path())
        .args(["check", "tiny.toml"])
        .output()
        .expect("run herdsim");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!Path::new(&ws.path().join("out")).exists());
}

// ---- messages never show parser internals ----------------------------------------------

/// Every value of TINY and V2 replaced, one at a time, by values of every other TOML type:
/// no message names a Rust type, a serde enum or serde's own wording.
#[test]
fn no_message_shows_parser_internals() {
    use toml_edit::{DocumentMut, Item, Value};

    const INTERNALS: [&str; 18] = [
        "$__toml_private",
        "untagged",
        "internally tagged",
        "invalid type",
        "invalid value",
        "data did not match",
        "expected i64",
        "i64",
        "u64",
        "u32",
        "u16",
        "f64",
        "Raw",
        "enum",
        "struct",
        "variant",
        "sequence",
        "Datetime",
    ];
    const REPLACEMENTS: [&str; 10] = [
        "\"10ms\"",
        "\"none\"",
        "5",
        "-1",
        "1.5",
        "true",
        "[1, \"a\"]",
        "{ x = 1 }",
        "1979-05-27T07:32:00Z",
        "1e300",
    ];
    /// Dotted paths (with array indices) of every value below `item`.
    fn paths(item: &Item, prefix: &str, out: &mut Vec<String>) {
        let join = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match item {
            Item::Table(t) => t.iter().for_each(|(k, v)| paths(v, &join(k), out)),
            Item::ArrayOfTables(a) => a.iter().enumerate().for_each(|(i, t)| {
                t.iter()
                    .for_each(|(k, v)| paths(v, &format!("{}.{k}", join(&i.to_string())), out))
            }),
            Item::Value(Value::InlineTable(t)) => {
                out.push(prefix.to_string());
                t.iter()
                    .for_each(|(k, v)| paths(&Item::Value(v.clone()), &join(k), out));
            }
            Item::Value(_) => out.push(prefix.to_string()),
            Item::None => {}
        }
    }
    fn set(t: &mut dyn toml_edit::TableLike, segments: &[&str], value: Value) {
        let (first, rest) = segments.split_first().unwrap();
        if rest.is_empty() {
            t.insert(first, Item::Value(value));
            return;
        }
        match t.get_mut(first).unwrap() {
            Item::ArrayOfTables(a) => {
                let i: usize = rest[0].parse().unwrap();
                set(a.get_mut(i).unwrap(), &rest[1..], value)
            }
            other => set(other.as_table_like_mut().unwrap(), rest, value),
        }
    }

    // TINY with the keys whose values are names or tagged tables.
    let named = tiny_with(
        "end = \"1s\"\n",
        "end = \"1s\"\nkind = \"down\"\n\n[server.rate_limit]\nrate = 100\n",
    )
    .replace(
        "queue = 5\n",
        "queue = 5\ndiscipline = \"fifo\"\nretry_after = \"auto\"\n",
    )
    .replace(
        "timeout = \"1s\"\n",
        "timeout = \"1s\"\nretry_on = [\"503\", \"timeout\"]\n\
         budget = { kind = \"ratio\", ratio = 0.1, scope = \"global\" }\n\
         breaker = { failure_rate = 0.5, scope = \"client\" }\n\
         retry_after = { honor = true, beyond = \"clamp\" }\n\
         rate_limit = { max_retries = 5 }\n",
    )
    .replace("jitter = \"full\"", "jitter = { proportional = 0.1 }");
    herdsim::scenario::sweep::load_str("named.toml", &named).expect("the base is valid");
    let mut checked = 0;
    let mut leaks = std::collections::BTreeSet::new();
    for base in [TINY, crate::common::V2, named.as_str()] {
        let doc: DocumentMut = base.parse().unwrap();
        let mut all = Vec::new();
        paths(doc.as_item(), "", &mut all);
        assert!(all.len() > 20, "{all:?}");
        for path in &all {
            for replacement in REPLACEMENTS {
                let mut mutated = doc.clone();
                let segments: Vec<&str> = path.split('.').collect();
                set(
                    mutated.as_table_mut(),
                    &segments,
                    replacement.parse::<Value>().unwrap(),
                );
                let text = mutated.to_string();
                let Err(errors) = herdsim::scenario::sweep::load_str("m.toml", &text) else {
                    continue;
                };
                checked += 1;
                for e in &errors.0 {
                    if let Some(word) = INTERNALS.iter().find(|w| e.msg.contains(*w)) {
                        leaks.insert(format!("{path} = {replacement}: `{word}` in {}", e.msg));
                    }
                }
            }
        }
    }
    assert!(leaks.is_empty(), "{}", {
        let leaks: Vec<String> = leaks.into_iter().collect();
        leaks.join("\n")
    });
    assert!(checked > 300, "{checked} refused mutations");
}

/// A string where a distribution table belongs says so in the user's words.
#[test]
fn a_string_for_a_distribution_names_the_table_form() {
    let stderr = refused(
        &tiny_with(
            "latency = { dist = \"constant\", value = \"10ms\" }",
            "latency = \"10ms\"",
        ),
        &[],
    );
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: bad.toml:10:11: network.latency: expected a distribution table such as { dist = \"constant\", value = \"10ms\" }, found a string \"10ms\""
        ]
    );
}

/// A fixed Retry-After longer than an event carries (2^31 - 1 ms, 24.8 days) is refused,
/// not silently shortened.
#[test]
fn fails_with_a_retry_after_hint_beyond_24_days() {
    refused(
        &tiny_with("end = \"1s\"", "end = \"1s\"\nretry_after = \"30d\""),
        &[
            "retry_after: expected \"none\", \"auto\" or a duration > 0 of at most \"2147483647ms\" (24.8 days, the longest hint an event carries), found 30days",
        ],
    );
}
