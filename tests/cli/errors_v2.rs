//! Every refusal of the v2 keys (populations, trace files, service graphs, servers that
//! degrade): exit status 2, `file:line:col: key: expected ..., found ...`, nothing written.
//! Each test starts from [`V2`] and changes one thing, so line numbers are V2's. Most go
//! through `herdsim check`; a few through `herdsim run`, which must write nothing.

use crate::common::{TINY, V2, Workspace, tiny_with, v2_with};
use crate::errors::{problems, refused_in};

/// Writes `text` to bad.toml (and `files`, e.g. traces) in a fresh workspace, runs
/// `herdsim <command> bad.toml`, checks the refusal (exit 2, nothing written) and that stderr
/// contains each of `expected`. Returns stderr.
fn refused_with(command: &str, text: &str, files: &[(&str, &str)], expected: &[&str]) -> String {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path().join("data")).expect("data folder");
    for (name, body) in files {
        ws.file(name, body);
    }
    ws.file("bad.toml", text);
    let stderr = match command {
        "run" => refused_in(&ws, &["run", "bad.toml", "--out", "out", "--no-charts"]),
        _ => refused_in(&ws, &["check", "bad.toml"]),
    };
    for e in expected {
        assert!(
            stderr.contains(e),
            "stderr should contain\n  {e}\nfound:\n{stderr}"
        );
    }
    stderr
}

/// `herdsim check` refuses `text` with exactly one problem, which contains `expected`.
fn refused_once(text: &str, expected: &str) {
    let stderr = refused_with("check", text, &[], &[expected]);
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

/// V2 whose second population (`web`) replays `data/arrivals.csv`.
fn with_trace() -> String {
    v2_with(
        "rate = 50\nend = \"10s\"\n",
        "trace = \"data/arrivals.csv\"\n",
    )
}

// ---- populations ------------------------------------------------------------------------

#[test]
fn fails_with_unknown_population_key_and_writes_nothing() {
    refused_with(
        "run",
        &v2_with("count = 20\n", "count = 20\ncuont = 3\n"),
        &[],
        &[
            "bad.toml:7:1: clients[0].cuont: unknown key `cuont` in clients[0] (did you mean `count`?), expected one of `count`",
        ],
    );
}

#[test]
fn fails_with_rate_and_count_in_one_population() {
    refused_once(
        &v2_with("rate = 50\n", "rate = 50\ncount = 5\n"),
        "bad.toml:10:8: clients[1].rate: `rate` makes an open population; `count` a closed one: a population has exactly one source (expected one, found both)",
    );
}

#[test]
fn fails_with_rate_and_profile_together() {
    refused_once(
        &v2_with("rate = 50\n", "rate = 50\nprofile = [[\"0s\", 10]]\n"),
        "bad.toml:11:11: clients[1].profile: `rate` and `profile` both set an open population's arrival rate: expected one of them, found both",
    );
}

#[test]
fn fails_with_no_source_of_requests() {
    refused_once(
        &v2_with("rate = 50\nend = \"10s\"\n", ""),
        "bad.toml:8:1: clients[1]: expected one of `count` (closed), `rate` or `profile` (open), `trace`, found none of them",
    );
}

#[test]
fn fails_with_end_missing_for_an_open_population_and_writes_nothing() {
    refused_with(
        "run",
        &v2_with("end = \"10s\"\n", ""),
        &[],
        &[
            "bad.toml:8:1: clients[1].end: missing required key `end` in clients[1]: an open population needs the time its arrivals stop",
        ],
    );
}

#[test]
fn fails_with_end_not_after_start() {
    refused_once(
        &v2_with("end = \"10s\"\n", "start = \"10s\"\nend = \"10s\"\n"),
        "bad.toml:12:7: clients[1].end: expected end > start (10s), found 10s",
    );
}

#[test]
fn fails_with_closed_keys_in_an_open_population() {
    let stderr = refused_with(
        "check",
        &v2_with(
            "rate = 50\n",
            "rate = 50\nrequests = 3\nthink = { dist = \"constant\", value = \"1ms\" }\nstart_spread = \"1s\"\n",
        ),
        &[],
        &[
            "bad.toml:11:12: clients[1].requests: `requests` applies only to closed populations (`count`), found it in an open population (`rate`)",
            "bad.toml:12:9: clients[1].think: `think` applies only to closed populations (`count`)",
            "bad.toml:13:16: clients[1].start_spread: `start_spread` applies only to closed populations (`count`)",
        ],
    );
    assert_eq!(problems(&stderr).len(), 3, "{stderr}");
}

#[test]
fn fails_with_open_keys_in_a_closed_population() {
    let stderr = refused_with(
        "check",
        &v2_with(
            "count = 20\n",
            "count = 20\nprocess = \"uniform\"\nend = \"5s\"\nclients = 3\n",
        ),
        &[],
        &[
            "bad.toml:7:11: clients[0].process: `process` applies only to open populations (`rate` or `profile`), found it in a closed population (`count`)",
            "bad.toml:8:7: clients[0].end: `end` applies only to open populations",
            "bad.toml:9:11: clients[0].clients: `clients` applies only to open and trace populations, found it in a closed population (`count`)",
        ],
    );
    assert_eq!(problems(&stderr).len(), 3, "{stderr}");
}

#[test]
fn fails_with_unknown_arrival_process() {
    refused_once(
        &v2_with("rate = 50\n", "rate = 50\nprocess = \"bursty\"\n"),
        "bad.toml:11:11: clients[1].process: expected \"poisson\" or \"uniform\", found \"bursty\"",
    );
}

#[test]
fn fails_with_zero_rate() {
    refused_once(
        &v2_with("rate = 50\n", "rate = 0\n"),
        "bad.toml:10:8: clients[1].rate: expected a rate > 0 (requests per second), found 0",
    );
}

#[test]
fn fails_with_profile_times_going_back() {
    refused_once(
        &v2_with(
            "rate = 50\n",
            "profile = [[\"0s\", 10], [\"60s\", 10], [\"30s\", 40]]\n",
        ),
        "bad.toml:10:37: clients[1].profile[2]: expected times in non-decreasing order (>= 1m), found 30s",
    );
}

#[test]
fn fails_with_a_negative_profile_rate_and_a_point_that_is_not_a_pair() {
    let stderr = refused_with(
        "check",
        &v2_with(
            "rate = 50\n",
            "profile = [[\"0s\", -10], [\"60s\"], [\"90s\", 5]]\n",
        ),
        &[],
        &[
            "bad.toml:10:12: clients[1].profile[0]: expected a rate >= 0 (requests per second), found -10",
            "bad.toml:10:25: clients[1].profile[1]: expected a [time, rate] point such as [\"60s\", 400], found [\"60s\"]",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
}

#[test]
fn fails_with_a_profile_of_zero_rates() {
    refused_once(
        &v2_with("rate = 50\n", "profile = [[\"0s\", 0], [\"10s\", 0]]\n"),
        "bad.toml:10:11: clients[1].profile: expected at least one rate > 0, found only zero rates",
    );
}

#[test]
fn fails_with_missing_population_name_in_an_array() {
    refused_once(
        &v2_with("name = \"web\"\n", ""),
        "bad.toml:8:1: clients[1].name: missing required key `name` in clients[1]",
    );
}

#[test]
fn fails_with_duplicate_population_names() {
    refused_once(
        &v2_with("name = \"web\"\n", "name = \"herd\"\n"),
        "bad.toml:9:8: clients[1].name: expected a unique name, found \"herd\" again (also clients[0])",
    );
}

#[test]
fn fails_with_clients_of_the_wrong_shape() {
    let text = format!(
        "clients = 5\n{}",
        V2.replace("[[clients]]\nname = \"herd\"\ncount = 20\n", "")
            .replace(
                "[[clients]]\nname = \"web\"\nrate = 50\nend = \"10s\"\n",
                ""
            )
    );
    refused_once(
        &text,
        "bad.toml:1:11: clients: expected a [clients] table or [[clients]] tables, found the number 5",
    );
}

#[test]
fn fails_with_more_closed_clients_than_memory_allows_in_all() {
    refused_once(
        &v2_with("count = 20\n", "count = 30000000\n")
            .replace("rate = 50\nend = \"10s\"\n", "count = 30000000\n"),
        "bad.toml:10:9: clients[1].count: expected at most 50000000 closed clients in all populations together, found 60000000 with this one",
    );
}

#[test]
fn fails_with_zero_clients_behind_an_open_population() {
    refused_once(
        &v2_with("rate = 50\n", "rate = 50\nclients = 0\n"),
        "bad.toml:11:11: clients[1].clients: expected an integer from 1 to 50000000, found 0",
    );
}

// ---- population retry overrides ---------------------------------------------------------

#[test]
fn fails_with_an_override_cap_below_an_inherited_base() {
    // cap = 500ms is below strategy `slow`'s base (1s), not `full`'s (100ms from [retry]).
    refused_once(
        &v2_with("count = 20\n", "count = 20\nretry = { cap = \"500ms\" }\n"),
        "bad.toml:7:17: clients[0].retry.cap: expected cap >= base (1s, set by strategy[1].base), found 500ms",
    );
}

#[test]
fn fails_with_a_bad_override_once_though_every_strategy_inherits_it() {
    refused_once(
        &v2_with(
            "count = 20\n",
            "count = 20\nretry = { jitter = \"fuzzy\" }\n",
        ),
        "bad.toml:7:20: clients[0].retry.jitter: expected \"none\", \"full\", \"equal\", \"decorrelated\", \"decorrelated-v2\", { proportional = f }, { fraction = j } or { additive = d }, found \"fuzzy\"",
    );
}

#[test]
fn fails_with_a_name_in_a_population_override() {
    refused_once(
        &v2_with("count = 20\n", "count = 20\nretry = { name = \"x\" }\n"),
        "bad.toml:7:18: clients[0].retry.name: unknown key `name` in clients[0].retry",
    );
}

#[test]
fn fails_with_an_unknown_key_in_a_population_override() {
    refused_once(
        &v2_with("count = 20\n", "count = 20\nretry = { bsae = \"1s\" }\n"),
        "bad.toml:7:11: clients[0].retry.bsae: unknown key `bsae` in clients[0].retry (did you mean `base`?), expected one of `base`, `cap`",
    );
}

// ---- traces -----------------------------------------------------------------------------

#[test]
fn fails_with_a_decreasing_trace_time_at_the_trace_files_line_and_writes_nothing() {
    let stderr = refused_with(
        "run",
        &with_trace(),
        &[("data/arrivals.csv", "t_s\n1\n2\n12.5\n12.25\n13\n")],
        &[
            "herdsim: error: data/arrivals.csv:5:1: t_s: expected a time >= the previous one (12.5), found 12.25",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

#[test]
fn fails_with_a_non_numeric_trace_cell() {
    refused_with(
        "check",
        &with_trace(),
        &[("data/arrivals.csv", "t_s\n1\nsoon\n")],
        &[
            "data/arrivals.csv:3:1: t_s: expected a time in seconds (a finite number >= 0), found \"soon\"",
        ],
    );
}

#[test]
fn trace_problems_name_the_physical_line_with_crlf_ends_and_blank_lines() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "t_s\r\nx\r\n",
            &[
                "data/arrivals.csv:2:1: t_s: expected a time in seconds (a finite number >= 0), found \"x\"",
            ],
        ),
        (
            "t_s\r\n1\r\n2\r\n3\r\n4\r\n5\r\nx\r\ny\r\n",
            &[
                "data/arrivals.csv:7:1: t_s: expected a time in seconds",
                "data/arrivals.csv:8:1: t_s: expected a time in seconds",
            ],
        ),
        (
            "t_s\r\n0.1\r\n0.05\r\n",
            &["data/arrivals.csv:3:1: t_s: expected a time >= the previous one (0.1), found 0.05"],
        ),
        (
            "t_s\n1\n\n\n\nx\n",
            &[
                "data/arrivals.csv:6:1: t_s: expected a time in seconds (a finite number >= 0), found \"x\"",
            ],
        ),
        (
            "t_s\n0.1\n\n0.05\n",
            &["data/arrivals.csv:4:1: t_s: expected a time >= the previous one (0.1), found 0.05"],
        ),
    ];
    for (trace, expected) in cases {
        let stderr = refused_with(
            "check",
            &with_trace(),
            &[("data/arrivals.csv", trace)],
            expected,
        );
        assert_eq!(
            problems(&stderr).len(),
            expected.len(),
            "{trace:?}: {stderr}"
        );
    }
}

#[test]
fn whitespace_only_trace_lines_are_skipped() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path().join("data")).expect("data folder");
    ws.file("data/arrivals.csv", "t_s\r\n0.5\r\n   \r\n1\r\n\t\r\n");
    ws.file("ok.toml", &with_trace());
    let out = crate::common::herdsim()
        .current_dir(ws.path())
        .args(["check", "ok.toml"])
        .output()
        .expect("run herdsim");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fails_with_a_bad_trace_header() {
    refused_with(
        "check",
        &with_trace(),
        &[("data/arrivals.csv", "time\n1\n")],
        &[
            "data/arrivals.csv:1:1: t_s: expected the header `t_s` (one column: arrival times in seconds), found `time`",
        ],
    );
}

#[test]
fn fails_with_an_empty_trace() {
    refused_with(
        "check",
        &with_trace(),
        &[("data/arrivals.csv", "t_s\n")],
        &[
            "data/arrivals.csv:1:1: t_s: expected at least one row (one per logical request) after the header, found none",
        ],
    );
}

#[test]
fn fails_with_an_unreadable_trace_at_the_scenarios_trace_key() {
    refused_with(
        "check",
        &with_trace(),
        &[],
        &[
            "bad.toml:10:9: clients[1].trace: expected a readable CSV file (paths are relative to the scenario's folder), found \"data/arrivals.csv\": ",
        ],
    );
}

#[test]
fn trace_paths_are_relative_to_the_scenarios_folder() {
    // Run from the workspace root on sub/bad.toml: the trace is sub/data/arrivals.csv, and
    // its problems name it so.
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path().join("sub/data")).expect("folders");
    ws.file("sub/bad.toml", &with_trace());
    ws.file("sub/data/arrivals.csv", "t_s\n1\n-2\n");
    let stderr = refused_in(&ws, &["check", "sub/bad.toml"]);
    assert!(
        stderr.contains(
            "sub/data/arrivals.csv:3:1: t_s: expected a time in seconds (a finite number >= 0), found -2"
        ),
        "{stderr}"
    );
}

#[test]
fn trace_problems_follow_the_scenarios_own() {
    let stderr = refused_with(
        "check",
        &with_trace().replace("concurrency = 4", "concurrency = 0"),
        &[("data/arrivals.csv", "t_s\n2\n1\n")],
        &[],
    );
    let p = problems(&stderr);
    assert_eq!(p.len(), 2, "{stderr}");
    assert!(
        p[0].contains("bad.toml:17:15: service[0].concurrency"),
        "{stderr}"
    );
    assert!(p[1].starts_with("data/arrivals.csv:3:1: t_s:"), "{stderr}");
}

// ---- service graph ----------------------------------------------------------------------

#[test]
fn fails_with_server_and_service_together_and_writes_nothing() {
    refused_with(
        "run",
        &v2_with(
            "[[service]]\nname = \"api\"",
            "[server]\nconcurrency = 1\nservice = { dist = \"constant\", value = \"1ms\" }\n\n[[service]]\nname = \"api\"",
        ),
        &[],
        &[
            "bad.toml:20:1: service: expected either [server] (one server) or [[service]] tables (a service graph), found both",
        ],
    );
}

#[test]
fn fails_with_a_call_cycle_naming_it() {
    refused_once(
        &v2_with(
            "service = { dist = \"constant\", value = \"2ms\" }\n",
            "service = { dist = \"constant\", value = \"2ms\" }\ncalls = [\"cache\"]\n\n\
             [[service]]\nname = \"cache\"\nconcurrency = 1\n\
             service = { dist = \"constant\", value = \"1ms\" }\ncalls = [\"db\"]\n",
        ),
        // At the call that closes it (cache's, written last), not at db's.
        "bad.toml:32:10: service[2].calls[0]: expected calls that form no cycle, found db -> cache -> db",
    );
    // Named by its index as written, refused names before it included.
    let stderr = refused_with(
        "check",
        &v2_with(
            "service = { dist = \"constant\", value = \"2ms\" }\n",
            "service = { dist = \"constant\", value = \"2ms\" }\ncalls = [\"cache\"]\n\n\
             [[service]]\nname = \"cache\"\nconcurrency = 1\n\
             service = { dist = \"constant\", value = \"1ms\" }\ncalls = [\"nope\", \"db\"]\n",
        ),
        &[],
        &[
            "bad.toml:32:18: service[2].calls[1]: expected calls that form no cycle, found db -> cache -> db",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
}

/// An OCC row answers at its commit: downstream calls from it would never be made.
#[test]
fn fails_with_calls_on_an_occ_service() {
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = [\"db\"]\nocc = true"),
        "bad.toml:20:9: service[0].calls: expected no `calls` on an OCC service (occ is set: it answers at its commit and calls nothing), found a list of services",
    );
}

#[test]
fn fails_with_an_unknown_service_in_calls() {
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = [\"db\", \"dbx\"]"),
        "bad.toml:20:16: service[0].calls[1]: expected the name of a [[service]] (one of `db`), found \"dbx\" (did you mean \"db\"?)",
    );
    // The only call misspelt: `db` is then called by nothing, which follows from the typo
    // and is not reported again.
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = [\"dbx\"]"),
        "bad.toml:20:10: service[0].calls[0]: expected the name of a [[service]] (one of `db`), found \"dbx\" (did you mean \"db\"?)",
    );
    // A service the typo cannot have meant is still reported as called by nothing.
    let orphan = "[[service]]\nname = \"orphan\"\nconcurrency = 1\n\
                  service = { dist = \"constant\", value = \"2ms\" }\n\n[retry]";
    let stderr = refused_with(
        "check",
        &v2_with("calls = [\"db\"]", "calls = [\"dbx\"]").replacen("[retry]", orphan, 1),
        &[],
        &[
            "service[0].calls[0]: expected the name of a [[service]] (one of `db`, `orphan`), found \"dbx\" (did you mean \"db\"?)",
            "found \"orphan\", which nothing calls",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
}

#[test]
fn fails_with_a_service_calling_itself() {
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = [\"db\", \"api\"]"),
        "bad.toml:20:16: service[0].calls[1]: expected the names of other services (a service may not call itself), found \"api\"",
    );
}

#[test]
fn fails_with_an_unused_service_at_its_name() {
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = []"),
        "bad.toml:23:8: service[1].name: expected a service that clients reach (the first service, `api`, or one it calls, directly or not), found \"db\", which nothing calls",
    );
}

#[test]
fn fails_with_missing_service_name() {
    // Nothing can call a service without a name: `api` calls none.
    refused_once(
        &v2_with("name = \"db\"\n", "").replace("calls = [\"db\"]", "calls = []"),
        "bad.toml:22:1: service[1].name: missing required key `name` in service[1]",
    );
}

#[test]
fn fails_with_duplicate_service_names() {
    refused_once(
        &format!(
            "{V2}\n[[service]]\nname = \"db\"\nconcurrency = 1\nservice = {{ dist = \"constant\", value = \"1ms\" }}\n"
        ),
        "bad.toml:42:8: service[2].name: expected a unique name, found \"db\" again (also service[1])",
    );
}

#[test]
fn fails_with_a_service_retry_word_other_than_strategy() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nretry = \"exponential\"",
        ),
        "bad.toml:21:9: service[0].retry: expected \"strategy\" (the compared strategy) or a policy table such as { max_attempts = 3, base = \"10ms\", cap = \"1s\" }, found \"exponential\"",
    );
}

#[test]
fn fails_with_fallback_on_in_a_service_retry() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nretry = { max_attempts = 2, fallback_on = [\"attempts\"] }",
        ),
        "bad.toml:21:43: service[0].retry.fallback_on: unknown key `fallback_on` in service[0].retry: fallback is for client requests only, not a service's calls",
    );
}

/// An unknown key in `[fallback]` is answered with the keys `[fallback]` takes: its own
/// `latency` among them, not the service-graph keys it refuses (it offered `calls`, then
/// refused it: helper-90).
#[test]
fn fails_with_an_unknown_fallback_key_offering_only_fallback_keys() {
    let text = format!(
        "{TINY}\n[fallback]\nconcurrency = 1\nservice = {{ dist = \"constant\", value = \"1ms\" }}\ncall = [\"x\"]\n"
    );
    let stderr = refused_with(
        "check",
        &text,
        &[],
        &[
            "fallback.call: unknown key `call` in fallback, expected one of `concurrency`, `queue`, `service`",
        ],
    );
    assert!(stderr.contains("`latency`"), "{stderr}");
    for refused in ["`name`", "`calls`", "`retry`", "`propagate_deadline`"] {
        assert!(!stderr.contains(refused), "{refused}: {stderr}");
    }
}

#[test]
fn fails_with_an_inline_service_policy_error_named_after_the_service() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nretry = { max_attempts = 2, cap = \"10ms\" }",
        ),
        "bad.toml:21:35: service[0].retry.cap: expected cap >= base (100ms, set by retry.base), found 10ms",
    );
}

#[test]
fn fails_without_network_when_a_service_has_no_latency() {
    refused_once(
        &v2_with(
            "[network]\nlatency = { dist = \"constant\", value = \"1ms\" }\n",
            "",
        ),
        "bad.toml: network: missing required table [network] (with `latency`), needed unless every [[service]] and [fallback] sets its own `latency`",
    );
}

#[test]
fn fails_with_service_keys_in_server() {
    let stderr = refused_with(
        "check",
        &tiny_with("queue = 5\n", "queue = 5\ncalls = [\"db\"]\n"),
        &[],
        &[
            "bad.toml:15:9: server.calls: unknown key `calls` in [server]: `calls` is a key of [[service]] tables, and [server] is the only service",
        ],
    );
    assert_eq!(problems(&stderr).len(), 1, "{stderr}");
}

// ---- servers that degrade ---------------------------------------------------------------

#[test]
fn fails_with_slowdown_points_out_of_order() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nslowdown = [[0, 1.0], [200, 1.0], [100, 4.0]]",
        ),
        "bad.toml:21:35: service[0].slowdown[2]: expected h strictly increasing (> 200), found 100",
    );
}

#[test]
fn fails_with_a_repeated_slowdown_point() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nslowdown = [[0, 1.0], [0, 2.0]]",
        ),
        "bad.toml:21:23: service[0].slowdown[1]: expected h strictly increasing (> 0), found 0",
    );
}

#[test]
fn fails_with_a_negative_slowdown_factor() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nslowdown = [[0, 1.0], [100, -2.0]]",
        ),
        "bad.toml:21:23: service[0].slowdown[1]: expected a factor >= 0 (a service-time multiplier), found -2",
    );
}

/// The last segment goes on with its slope: 2 - h/2 is -3 at h = 10, the most the api can
/// hold with 4 slots and 6 queue places (at 4 slots and no queue it ends at 0: accepted),
/// and autoscaling up to 10 slots counts its largest size.
#[test]
fn fails_with_a_slowdown_that_falls_below_zero_where_the_server_can_hold() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nqueue = 6\nslowdown = [[0, 2.0], [1, 1.5]]",
        ),
        "bad.toml:22:12: service[0].slowdown: expected a curve that stays >= 0 up to h = 10, the most requests the server can hold (4 slots + 6 queue places; beyond the last point the last segment goes on with its slope), found -3 at h = 10",
    );
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nautoscale = { min = 1, max = 10 }\nslowdown = [[0, 2.0], [1, 1.5]]",
        ),
        "bad.toml:22:12: service[0].slowdown: expected a curve that stays >= 0 up to h = 10, the most requests the server can hold (10 slots + 0 queue places; beyond the last point the last segment goes on with its slope), found -3 at h = 10",
    );
    let ok = v2_with(
        "calls = [\"db\"]",
        "calls = [\"db\"]\nslowdown = [[0, 2.0], [1, 1.5]]",
    );
    herdsim::scenario::sweep::load_str("ok.toml", &ok).expect("0 at h = 4 is allowed");
    // Exactly 0 at h = 40, which the extension computes as -1.7e-16: rounding, allowed.
    let rounded = v2_with(
        "calls = [\"db\"]",
        "calls = [\"db\"]\nqueue = 36\nslowdown = [[0, 0.4], [10, 0.3]]",
    );
    herdsim::scenario::sweep::load_str("ok.toml", &rounded).expect("0 at h = 40 is allowed");
    // A real fall is refused, with the value as herdsim prints numbers (not -0.0099999...).
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nqueue = 37\nslowdown = [[0, 0.4], [10, 0.3]]",
        ),
        "bad.toml:22:12: service[0].slowdown: expected a curve that stays >= 0 up to h = 41, the most requests the server can hold (4 slots + 37 queue places; beyond the last point the last segment goes on with its slope), found -0.01 at h = 41",
    );
}

#[test]
fn fails_with_slowdown_items_that_are_not_pairs() {
    let stderr = refused_with(
        "check",
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nslowdown = [[0, 1.0, 2.0], 5]",
        ),
        &[],
        &[
            "bad.toml:21:13: service[0].slowdown[0]: expected a pair [h, factor] of numbers (requests held, service-time multiplier) such as [200, 1.5], found [0, 1.0, 2.0]",
            "bad.toml:21:28: service[0].slowdown[1]: expected a pair [h, factor] of numbers (requests held, service-time multiplier) such as [200, 1.5], found 5",
        ],
    );
    assert_eq!(problems(&stderr).len(), 2, "{stderr}");
}

#[test]
fn fails_with_an_empty_slowdown() {
    refused_once(
        &v2_with("calls = [\"db\"]", "calls = [\"db\"]\nslowdown = []"),
        "bad.toml:21:12: service[0].slowdown: expected at least one [h, factor] pair, found none",
    );
}

#[test]
fn fails_with_autoscale_min_above_max() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nautoscale = { min = 10, max = 5 }",
        ),
        "bad.toml:21:31: service[0].autoscale.max: expected max >= min (10), found 5",
    );
}

#[test]
fn fails_with_autoscale_target_outside_zero_one() {
    for target in ["0", "1.5"] {
        refused_once(
            &v2_with(
                "calls = [\"db\"]",
                &format!("calls = [\"db\"]\nautoscale = {{ min = 1, max = 5, target = {target} }}"),
            ),
            &format!(
                "bad.toml:21:42: service[0].autoscale.target: expected a target utilisation in (0, 1], found {target}"
            ),
        );
    }
}

#[test]
fn fails_with_autoscale_without_max() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nautoscale = { min = 1 }",
        ),
        "bad.toml:21:13: service[0].autoscale.max: missing required key `max` in service[0].autoscale",
    );
}

#[test]
fn fails_with_capacity_steps_out_of_order() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]\n",
            "calls = [\"db\"]\n[[service.capacity]]\nat = \"30s\"\nconcurrency = 1\n\
             [[service.capacity]]\nat = \"20s\"\nconcurrency = 4\n",
        ),
        "bad.toml:25:6: service[0].capacity[1].at: expected steps in increasing `at` order (after 30s), found 20s",
    );
}

#[test]
fn fails_with_a_negative_capacity_step() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]\n",
            "calls = [\"db\"]\n[[service.capacity]]\nat = \"30s\"\nconcurrency = -1\n",
        ),
        "bad.toml:23:15: service[0].capacity[0].concurrency: expected an integer >= 0, found -1",
    );
}

#[test]
fn fails_with_unknown_discipline() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\ndiscipline = \"random\"",
        ),
        "bad.toml:21:14: service[0].discipline: expected \"fifo\" or \"lifo\", found \"random\"",
    );
}

#[test]
fn fails_with_zero_queue_timeout() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]",
            "calls = [\"db\"]\nqueue_timeout = \"0s\"",
        ),
        "bad.toml:21:17: service[0].queue_timeout: expected \"none\" or a duration > 0 with a unit, such as \"100ms\", found \"0s\"",
    );
}

#[test]
fn fails_with_occ_write_without_occ() {
    refused_once(
        &v2_with(
            "concurrency = 2\n",
            "concurrency = 2\nocc_write = { dist = \"constant\", value = \"1ms\" }\n",
        ),
        "bad.toml:25:13: service[1].occ_write: `occ_write` applies only to an OCC server (occ = true, \"read-write\" or \"write-only\"), found no `occ`",
    );
}

#[test]
fn fails_with_an_unknown_occ_mode() {
    refused_once(
        &v2_with("concurrency = 2\n", "occ = \"read-only\"\n"),
        "bad.toml:24:7: service[1].occ: expected true, false, \"read-write\" or \"write-only\", found \"read-only\"",
    );
    refused_once(
        &v2_with("concurrency = 2\n", "occ = \"read_write\"\n"),
        "service[1].occ: expected true, false, \"read-write\" or \"write-only\", found \"read_write\" (did you mean \"read-write\"?)",
    );
}

#[test]
fn fails_with_retry_after_on_a_crash_outage() {
    refused_once(
        &v2_with(
            "calls = [\"db\"]\n",
            "calls = [\"db\"]\n[[service.outages]]\nstart = \"1s\"\nend = \"2s\"\nkind = \"crash\"\nretry_after = \"1s\"\n",
        ),
        "bad.toml:25:15: service[0].outages[0].retry_after: `retry_after` applies only to kind = \"down\", found kind = \"crash\"",
    );
}

#[test]
fn fails_with_a_bare_number_trigger_end() {
    refused_once(
        &format!("{V2}\n[metrics]\ntrigger_end = 30\n"),
        "bad.toml:42:15: metrics.trigger_end: expected a duration with a unit, such as \"100ms\", found the bare number 30",
    );
}

// ---- sweeps into the new tables ---------------------------------------------------------

#[test]
fn fails_with_a_swept_value_out_of_range_in_a_population_array() {
    refused_once(
        &format!("{V2}\n[sweep]\n\"clients.1.rate\" = [5, 0]\n"),
        "bad.toml:42:24: clients[1].rate: expected a rate > 0 (requests per second), found 0 (at sweep point clients.1.rate = 0)",
    );
}

#[test]
fn the_unchanged_v2_scenario_is_accepted() {
    let ws = Workspace::new();
    ws.file("v2.toml", V2);
    crate::common::herdsim()
        .current_dir(ws.path())
        .args(["check", "v2.toml"])
        .assert()
        .success();
}
