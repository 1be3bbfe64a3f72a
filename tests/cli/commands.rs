//! The commands as a user runs them: `run` (outputs, console, determinism, flags), `check`
//! and `schedule`. Errors live in `errors.rs`. Every run uses TINY or the quickstart with one
//! replication, so the whole module takes about a second in a debug build.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TINY, Workspace, column, herdsim, read_csv, tiny_with};

/// summary.csv's first columns, in order (DESIGN.md "Outputs").
const SUMMARY_PREFIX: [&str; 15] = [
    "strategy",
    "clients",
    "replications",
    "calls",
    "calls_ci95",
    "completion_s",
    "completion_s_ci95",
    "peak_rps",
    "recovery_peak_rps",
    "succeeded",
    "gave_up",
    "amplification",
    "latency_p50_s",
    "latency_p99_s",
    "wasted",
];

/// Columns v1's issues and v2 add to summary.csv (after the DESIGN.md prefix, in any order).
const SUMMARY_EXTENSIONS: [&str; 26] = [
    "latency_mean_s",
    "requests",
    "shed",
    "recovered_s",
    "recovered_share",
    "attempts_per_success",
    "latency_p95_s",
    "success_p95_s",
    "success_p99_s",
    "retries_503",
    "retries_500",
    "retries_429",
    "retries_timeout",
    "retries_unreachable",
    "gave_up_attempts",
    "gave_up_deadline",
    "gave_up_non_retryable",
    "gave_up_rate_limit",
    "gave_up_budget",
    "gave_up_breaker",
    "budget_refused",
    "budget_refusal_rate",
    "breaker_open_s",
    "fallback_calls",
    "fallback_succeeded",
    "seed",
];

/// timeseries.csv's header: DESIGN.md's columns, then v1's issue 4's, then v2's (with the
/// service last).
const TIMESERIES_HEADER: &str = "strategy,t_s,arrivals,accepted,rejected,completed,in_service,queued,retries,budget_refused,breakers_open,fallback_arrivals,shed,first_attempts,succeeded,gave_up,timeouts,concurrency,service";

/// requests.csv's header (v1's issue 3, then v2's population).
const REQUESTS_HEADER: &str = "strategy,replication,client,request,outcome,last_status,attempts,total_wait_s,retry_after_s,latency_s,population,start_s";

/// The data files every run writes.
const CSV_FILES: [&str; 6] = [
    "paired.csv",
    "populations.csv",
    "services.csv",
    "summary.csv",
    "summary.json",
    "timeseries.csv",
];

/// Runs `herdsim <args>` in `ws`, asserting exit status 0. Returns the output.
fn ok(ws: &Workspace, args: &[&str]) -> Output {
    let out = herdsim()
        .current_dir(ws.path())
        .args(args)
        .output()
        .expect("run herdsim");
    assert_eq!(
        out.status.code(),
        Some(0),
        "herdsim {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// A workspace holding tiny.toml (TINY, or `text`).
fn workspace_with(text: &str) -> Workspace {
    let ws = Workspace::new();
    ws.file("tiny.toml", text);
    ws
}

/// Runs tiny.toml into `out` with `extra` flags; returns the scenario's output folder.
fn run_tiny(ws: &Workspace, out: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["run", "tiny.toml", "--out", out, "--no-charts", "--quiet"];
    args.extend_from_slice(extra);
    ok(ws, &args);
    ws.path().join(out).join("tiny")
}

fn number(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| panic!("expected a number, found {s:?}"))
}

fn bytes(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read folder") {
            let path = entry.expect("folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("below dir");
                found.insert(rel.to_string_lossy().into_owned());
            }
        }
    }
    found
}

// ---- run --------------------------------------------------------------------------------

#[test]
fn run_without_a_scenario_uses_the_builtin_quickstart() {
    let ws = Workspace::new();
    let out = ok(
        &ws,
        &["run", "--replications", "1", "--out", "out", "--no-charts"],
    );
    let (header, rows) = read_csv(&ws.path().join("out/quickstart/summary.csv"));
    assert_eq!(&header[..SUMMARY_PREFIX.len()], SUMMARY_PREFIX);
    assert_eq!(rows.len(), 4, "one row per strategy");
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["no-jitter", "full", "equal", "decorrelated"]);
    for row in &rows {
        assert_eq!(row[column(&header, "clients")], "10000");
        assert_eq!(
            row[column(&header, "replications")],
            "1",
            "--replications 1"
        );
    }
    // The header writes the clients as the verdict below it writes capacity: thousands
    // apart ("10000 clients" stood above "capacity 10 000 req/s").
    assert!(
        stdout(&out).starts_with(
            "quickstart (scenarios/quickstart.toml): 10\u{2009}000 clients, 4 strategies x 1 replication, bucket 100 ms\n"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn run_writes_summary_and_timeseries_with_the_documented_columns() {
    let ws = workspace_with(TINY);
    let dir = run_tiny(&ws, "out", &[]);
    assert_eq!(
        files_below(&dir),
        BTreeSet::from(CSV_FILES.map(String::from)),
        "--no-charts writes the data files and nothing else"
    );

    let (header, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(&header[..SUMMARY_PREFIX.len()], SUMMARY_PREFIX);
    for name in SUMMARY_EXTENSIONS {
        assert!(
            header[SUMMARY_PREFIX.len()..].iter().any(|h| h == name),
            "summary.csv lacks `{name}`: {header:?}"
        );
    }
    assert_eq!(
        rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(),
        ["none", "full"],
        "one row per strategy, in scenario order"
    );
    for row in &rows {
        assert_eq!(row.len(), header.len());
        assert_eq!(row[column(&header, "clients")], "50");
        assert_eq!(row[column(&header, "replications")], "2");
        let ended =
            number(&row[column(&header, "succeeded")]) + number(&row[column(&header, "gave_up")]);
        assert_eq!(ended, 50.0, "each logical request ends once: {row:?}");
    }

    let text = fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    assert_eq!(text.lines().next(), Some(TIMESERIES_HEADER));
    let (header, rows) = read_csv(&dir.join("timeseries.csv"));
    let (t, arrivals, accepted, rejected) = (
        column(&header, "t_s"),
        column(&header, "arrivals"),
        column(&header, "accepted"),
        column(&header, "rejected"),
    );
    for strategy in ["none", "full"] {
        let own: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == strategy).collect();
        assert!(!own.is_empty(), "buckets of {strategy}");
        for (i, row) in own.iter().enumerate() {
            let expected = i as f64 * 0.1;
            assert!(
                (number(&row[t]) - expected).abs() < 1e-9,
                "{strategy}: bucket {i} starts at {expected} s, found {}",
                row[t]
            );
            assert_eq!(
                number(&row[arrivals]),
                number(&row[accepted]) + number(&row[rejected]),
                "arrivals = accepted + rejected: {row:?}"
            );
        }
        // The outage [0, 1s) refuses every arrival of the first ten buckets.
        assert!(own[..10].iter().all(|r| number(&r[accepted]) == 0.0));
        // The herd arrives at 10 ms; full jitter sends some retries within the first 100 ms.
        assert!(
            number(&own[0][arrivals]) >= 50.0,
            "the herd arrives at once"
        );
    }
    // Without jitter: refused at 10 ms, answered at 20 ms, retried 100 ms later, arriving
    // at 130 ms: exactly the 50 clients in each of the first two buckets.
    let none: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "none").collect();
    assert_eq!(number(&none[0][arrivals]), 50.0);
    assert_eq!(number(&none[1][arrivals]), 50.0);
}

#[test]
fn quiet_prints_nothing() {
    let ws = workspace_with(TINY);
    let out = ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"],
    );
    assert!(out.stdout.is_empty(), "stdout: {}", stdout(&out));
    assert!(out.stderr.is_empty(), "stderr: {}", stderr(&out));
    assert!(ws.path().join("out/tiny/summary.csv").is_file());
}

#[test]
fn run_prints_a_table_with_every_strategy_and_a_closing_line() {
    let ws = workspace_with(TINY);
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    let table = stdout(&out);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("tiny (tiny.toml): 50 clients, 2 strategies x 2 replications"),
        "{table}"
    );
    assert!(
        lines.iter().any(|l| l.trim_start().starts_with("strategy")),
        "{table}"
    );
    for name in ["none", "full"] {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "no row for {name}:\n{table}"
        );
    }
    // stderr: "tiny: 4 runs, N events simulated in W s wall (R M events/s)".
    let err = stderr(&out);
    let closing = err
        .lines()
        .find(|l| l.starts_with("tiny: 4 runs, "))
        .unwrap_or_else(|| panic!("no closing line on stderr:\n{err}"));
    let events: u64 = closing["tiny: 4 runs, ".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no event count in {closing:?}"));
    assert!(events > 0, "{closing}");
    assert!(closing.contains(" events simulated in "), "{closing}");
    assert!(closing.contains(" s wall ("), "{closing}");
    // In whichever unit shows the rate's digits (a tiny run printed "0.0 M events/s").
    assert!(closing.ends_with(" events/s)"), "{closing}");
    assert!(!closing.contains("(0.0 M"), "{closing}");
    assert!(
        !table.contains("events simulated"),
        "figures go to stderr only"
    );
}

/// The header writes the counts it puts into its sentence thousands apart, as the verdict
/// writes capacity, and never touches a name the user chose (a population called "10000"
/// read "10 000" when the whole line was regrouped).
#[test]
fn the_header_groups_its_own_counts_and_leaves_names_alone() {
    let text = tiny_with(
        "[clients]\ncount = 50",
        "[[clients]]\nname = \"10000\"\ncount = 20000\n[[clients]]\nname = \"pool-12000\"\nrate = 12000\nend = \"10ms\"",
    );
    let ws = workspace_with(&text);
    let out = ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--format", "svg"],
    );
    let table = stdout(&out);
    assert!(
        table.starts_with(
            "tiny (tiny.toml): 10000: 20\u{2009}000 clients + pool-12000: open 12\u{2009}000 req/s (poisson), "
        ),
        "{table}"
    );
    let html = fs::read_to_string(ws.path().join("out/tiny/report.html")).unwrap();
    assert!(
        html.contains("10000: 20\u{2009}000 clients + pool-12000: open 12\u{2009}000 req/s"),
        "the report's workload line"
    );
}

/// The report's server line shows each setting that changes how the server answers over
/// the run, not only its slots, queue and service time; an OCC server shows its row.
#[test]
fn the_report_describes_how_the_server_degrades() {
    let ws = workspace_with(TINY);
    let sets = [
        "server.discipline=lifo",
        "server.queue_timeout=1s",
        "server.slowdown=[[0, 1.0], [10, 2.5]]",
        "server.capacity=[{ at = \"500ms\", concurrency = 2 }]",
        "server.rate_limit={ rate = 100 }",
    ];
    let mut args = vec![
        "run",
        "tiny.toml",
        "--out",
        "out",
        "--quiet",
        "--format",
        "svg",
    ];
    for s in &sets {
        args.extend(["--set", s]);
    }
    ok(&ws, &args);
    let html = fs::read_to_string(ws.path().join("out/tiny/report.html")).unwrap();
    let line = "<dt>server</dt><dd>server: 5 slots, 5 queue places (lifo), queue timeout 1s, service constant 10ms, slowdown x1 at 0, x2.5 at 10 requests held, capacity steps 2 at 500ms, down outage [0s, 1s), rate limit 100/s (burst 100)</dd>";
    assert!(html.contains(line), "{html}");
    let occ = [
        "run",
        "tiny.toml",
        "--out",
        "occ",
        "--quiet",
        "--format",
        "svg",
        "--set",
        "server.occ=\"write-only\"",
        "--set",
        "server.occ_write={ dist = \"constant\", value = \"2ms\" }",
    ];
    ok(&ws, &occ);
    let html = fs::read_to_string(ws.path().join("occ/tiny/report.html")).unwrap();
    let line = "<dt>server</dt><dd>server: OCC row (write-only), write time constant 2ms, down outage [0s, 1s)</dd>";
    assert!(html.contains(line), "{html}");
}

/// A sweep's header shows what it sweeps as a range over its points (client counts, open
/// rates, replications, bucket), never the first point's value as if it were the scenario's.
#[test]
fn a_sweep_header_shows_the_range_of_each_swept_value() {
    let text = tiny_with(
        "[clients]\ncount = 50",
        "[[clients]]\nname = \"herd\"\ncount = 20\n[[clients]]\nname = \"open\"\nrate = 50\nend = \"1s\"",
    ) + "\n[metrics]\nbucket = \"100ms\"\n\n[sweep]\n\"clients.0.count\" = [10, 30]\n\"clients.1.rate\" = [50, 100]\n\"replications\" = [1, 2]\n\"metrics.bucket\" = [\"50ms\", \"200ms\"]\n";
    let ws = workspace_with(&text);
    let out = ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--format", "svg"],
    );
    let table = stdout(&out);
    assert_eq!(
        table.lines().next(),
        Some(
            "tiny (tiny.toml): herd: 10..30 clients + open: open 50..100 req/s (poisson), 2 strategies x 1..2 replications, 16 sweep points, bucket 50 ms..200 ms"
        ),
        "{table}"
    );
    let out = ok(&ws, &["check", "tiny.toml"]);
    assert_eq!(
        stdout(&out),
        "tiny.toml: ok (tiny: 2 populations (10..30 closed clients, 1 open), 2 strategies, 1..2 replications, 16 sweep points)\n"
    );
    let html = fs::read_to_string(ws.path().join("out/tiny/report.html")).unwrap();
    assert!(
        html.contains("<dt>replications</dt><dd>1..2</dd>"),
        "{html}"
    );
    // The summary table's intervals and bucket, and the sweep charts' titles, are the
    // sweep's too (the first point has 1 replication and no interval).
    assert!(
        html.contains("Means per run, ± 95% confidence interval; columns as in summary.csv, peaks per 50 ms..200 ms bucket."),
        "{html}"
    );
    let chart = fs::read_to_string(ws.path().join("out/tiny/sweep_calls.svg")).unwrap();
    assert!(
        chart.contains("(mean of 1..2 runs, whiskers: 95% CI)"),
        "{chart}"
    );
}

#[test]
fn run_of_two_scenarios_writes_two_folders() {
    let ws = workspace_with(TINY);
    ws.file(
        "other.toml",
        &tiny_with("name = \"tiny\"", "name = \"other\""),
    );
    ok(
        &ws,
        &[
            "run",
            "tiny.toml",
            "other.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
        ],
    );
    assert!(ws.path().join("out/tiny/summary.csv").is_file());
    assert!(ws.path().join("out/other/summary.csv").is_file());
}

#[test]
fn a_run_cut_short_by_time_limit_warns_even_when_quiet() {
    // The outage lasts 1 s: nothing can succeed before a 500 ms time limit.
    let ws = workspace_with(&tiny_with("seed = 7", "seed = 7\ntime_limit = \"500ms\""));
    let out = ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"],
    );
    let err = stderr(&out);
    assert!(
        err.contains("warning: tiny: time_limit (500ms) cut 4 of 4 runs short"),
        "{err}"
    );
    let (header, rows) = read_csv(&ws.path().join("out/tiny/summary.csv"));
    for row in rows {
        assert_eq!(row[column(&header, "succeeded")], "0");
        assert_eq!(row[column(&header, "gave_up")], "50");
        assert_eq!(row[column(&header, "gave_up_time_limit")], "50");
    }
    // A swept limit is named by its range, not by the first point's value (which cut
    // nothing here).
    let ws =
        workspace_with(&(TINY.to_string() + "\n[sweep]\n\"time_limit\" = [\"100s\", \"500ms\"]\n"));
    let err = stderr(&ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"],
    ));
    assert!(
        err.contains("warning: tiny: time_limit (500ms..1m 40s) cut 4 of 8 runs short"),
        "{err}"
    );
}

/// Times far beyond what a double holds to the nanosecond print exactly: one client, a
/// 10.000001 ms network, an outage of 3 000 days and a retry after 2 000 days. The request
/// gives up at 2 000 days + 4 legs of 10.000001 ms (172800000.040000004 s: a double would
/// print 172800000.04), having waited 2 000 days.
#[test]
fn times_of_years_print_to_the_nanosecond() {
    let ws = Workspace::new();
    ws.file(
        "long.toml",
        r#"name = "long"
time_limit = "10000d"
[clients]
count = 1
[network]
latency = { dist = "constant", value = "10000001ns" }
[server]
concurrency = 1
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "3000d"
[retry]
max_attempts = 2
[[strategy]]
name = "s"
base = "2000d"
cap = "2000d"
[metrics]
bucket = "1d"
"#,
    );
    ok(
        &ws,
        &[
            "run",
            "long.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
            "--requests",
            "--attempts",
        ],
    );
    let (header, rows) = read_csv(&ws.path().join("out/long/requests.csv"));
    let value = |name: &str| rows[0][column(&header, name)].clone();
    assert_eq!(value("latency_s"), "172800000.040000004");
    assert_eq!(value("total_wait_s"), "172800000");
    assert_eq!(value("attempts"), "2");
    let (header, rows) = read_csv(&ws.path().join("out/long/attempts.csv"));
    let sent: Vec<&str> = rows
        .iter()
        .map(|r| r[column(&header, "sent_s")].as_str())
        .collect();
    assert_eq!(sent, ["0", "172800000.020000002"]);
}

/// A retry whose wait would end past the clock's end (2^64 ns, about 584 years) waits until
/// `time_limit` like any other: its wait is the limit less the two network round trips.
#[test]
fn a_wait_past_the_end_of_the_clock_is_cut_at_the_time_limit() {
    let ws = Workspace::new();
    ws.file(
        "far.toml",
        r#"name = "far"
time_limit = "584y"
[clients]
count = 1
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "500y"
[retry]
max_attempts = 5
[[strategy]]
name = "a"
base = "100y"
cap = "485y"
multiplier = 1000.0
[metrics]
bucket = "1y"
"#,
    );
    ok(
        &ws,
        &[
            "run",
            "far.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
            "--requests",
        ],
    );
    let (header, rows) = read_csv(&ws.path().join("out/far/requests.csv"));
    let value = |name: &str| rows[0][column(&header, name)].clone();
    assert_eq!(value("outcome"), "time_limit");
    assert_eq!(value("latency_s"), "18429638400");
    assert_eq!(value("total_wait_s"), "18429638399.96");
}

/// The ranking judges give-ups replication by replication, as the paired sentences under it
/// do. Here the db behind the api is down for 10 s; retrying at the client saves about 190
/// requests more than a single attempt, in every replication, but the two strategies' own
/// `gave_up` intervals overlap (each holds the noise of the arrivals both faced). Judged by
/// those intervals, the lighter single attempt ranked first, above a paired line saying it
/// loses requests.
#[test]
fn the_ranking_agrees_with_the_paired_give_ups() {
    let ws = Workspace::new();
    ws.file(
        "tiers.toml",
        r#"name = "tiers"
seed = 11
replications = 3
time_limit = "5m"
[clients]
rate = 200
end = "60s"
clients = 200
[network]
latency = { dist = "constant", value = "2ms" }
[[service]]
name = "api"
concurrency = 100
queue = 100
service = { dist = "exponential", mean = "5ms" }
calls = ["db"]
retry = { max_attempts = 4, base = "100ms", cap = "2s", jitter = "full" }
[[service]]
name = "db"
concurrency = 20
queue = 50
service = { dist = "exponential", mean = "10ms" }
[[service.outages]]
start = "20s"
end = "30s"
[retry]
max_attempts = 4
timeout = "3s"
base = "100ms"
cap = "2s"
jitter = "full"
[metrics]
bucket = "1s"
[[strategy]]
name = "client-1"
max_attempts = 1
[[strategy]]
name = "retry-both"
"#,
    );
    let out = ok(
        &ws,
        &[
            "run",
            "tiers.toml",
            "--out",
            "out",
            "--no-charts",
            "--requests",
        ],
    );
    // Each strategy's give-ups per replication, and their mean ± 1.96 sd / sqrt(3).
    let (header, rows) = read_csv(&ws.path().join("out/tiers/requests.csv"));
    let gave_up = |strategy: &str| {
        let per_run: Vec<f64> = (0..3)
            .map(|r| {
                rows.iter()
                    .filter(|row| {
                        row[column(&header, "strategy")] == strategy
                            && row[column(&header, "replication")] == r.to_string()
                            && row[column(&header, "outcome")] != "success"
                    })
                    .count() as f64
            })
            .collect();
        let mean = per_run.iter().sum::<f64>() / 3.0;
        let var = per_run.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0;
        let half = 1.96 * var.sqrt() / 3f64.sqrt();
        (mean - half, mean + half)
    };
    let (single, retrying) = (gave_up("client-1"), gave_up("retry-both"));
    assert!(
        single.0 < retrying.1,
        "the premise: the intervals overlap ({single:?}, {retrying:?})"
    );
    let (header, rows) = read_csv(&ws.path().join("out/tiers/paired.csv"));
    let succeeded = rows
        .iter()
        .find(|r| r[column(&header, "metric")] == "succeeded")
        .expect("a succeeded row");
    let diff = number(&succeeded[column(&header, "mean_diff")]);
    let ci = number(&succeeded[column(&header, "ci95")]);
    assert!(
        diff - ci > 0.0,
        "retrying saves requests in every replication: {diff} ± {ci}"
    );
    let verdict = String::from_utf8_lossy(&out.stdout).into_owned();
    let rank = |s: &str| verdict.find(&format!(".  {s} ")).expect(s);
    assert!(rank("retry-both") < rank("client-1"), "{verdict}");
}

// ---- determinism ------------------------------------------------------------------------

/// The three CSV files of a run with `--requests` and `extra` flags.
fn csv_bytes(ws: &Workspace, out: &str, extra: &[&str]) -> [Vec<u8>; 3] {
    let mut flags = vec!["--requests"];
    flags.extend_from_slice(extra);
    let dir = run_tiny(ws, out, &flags);
    ["summary.csv", "timeseries.csv", "requests.csv"].map(|f| bytes(&dir.join(f)))
}

#[test]
fn same_files_whatever_the_thread_count_st_mt() {
    let ws = workspace_with(TINY);
    let one = csv_bytes(&ws, "one", &["--threads", "1"]);
    let two = csv_bytes(&ws, "two", &["--threads", "2"]);
    for (name, (a, b)) in ["summary.csv", "timeseries.csv", "requests.csv"]
        .iter()
        .zip(one.iter().zip(&two))
    {
        assert!(a == b, "{name} differs between --threads 1 and --threads 2");
    }
}

#[test]
fn same_files_on_a_repeated_run() {
    let ws = workspace_with(TINY);
    let first = csv_bytes(&ws, "first", &[]);
    let second = csv_bytes(&ws, "second", &[]);
    assert!(first == second, "a repeated run wrote different files");
}

#[test]
fn seed_flag_changes_the_results_and_is_recorded() {
    let ws = workspace_with(TINY);
    let default = run_tiny(&ws, "default", &[]);
    let other = run_tiny(&ws, "other", &["--seed", "8"]);
    let (header, a) = read_csv(&default.join("summary.csv"));
    let (_, b) = read_csv(&other.join("summary.csv"));
    let seed = column(&header, "seed");
    assert!(
        a.iter().all(|r| r[seed] == "7"),
        "the scenario's seed: {a:?}"
    );
    assert!(b.iter().all(|r| r[seed] == "8"), "--seed 8: {b:?}");
    // The jittered strategy draws different delays; the un-jittered one has no randomness
    // here (constant latency and service), so it must not change.
    assert_eq!(
        a[0][1..seed],
        b[0][1..seed],
        "strategy none has no random draw"
    );
    assert_ne!(a[1], b[1], "strategy full with another seed");
    assert_ne!(
        bytes(&default.join("timeseries.csv")),
        bytes(&other.join("timeseries.csv"))
    );
}

// ---- requests.csv -----------------------------------------------------------------------

#[test]
fn requests_flag_writes_one_row_per_logical_request() {
    // 50 clients x 2 requests x 2 replications x 2 strategies = 400 rows.
    let ws = workspace_with(&tiny_with("count = 50", "count = 50\nrequests = 2"));
    let dir = run_tiny(&ws, "out", &["--requests"]);
    let text = fs::read_to_string(dir.join("requests.csv")).expect("requests.csv");
    assert_eq!(text.lines().next(), Some(REQUESTS_HEADER));
    let (header, rows) = read_csv(&dir.join("requests.csv"));
    assert_eq!(rows.len(), 400);

    let mut keys = BTreeSet::new();
    for row in &rows {
        assert_eq!(row.len(), header.len());
        assert!(["none", "full"].contains(&row[0].as_str()), "{row:?}");
        let key = (
            row[0].clone(),
            number(&row[1]) as u32,
            number(&row[2]) as u32,
            number(&row[3]) as u32,
        );
        assert!(
            key.1 < 2 && key.2 < 50 && key.3 < 2,
            "indices in range: {row:?}"
        );
        assert!(keys.insert(key), "each logical request once: {row:?}");
        let outcome = row[column(&header, "outcome")].as_str();
        let status = row[column(&header, "last_status")].as_str();
        assert!(
            ["succeeded", "attempts", "deadline", "time_limit"].contains(&outcome),
            "outcome {outcome}"
        );
        assert_eq!(outcome == "succeeded", status == "200", "{row:?}");
        let attempts = number(&row[column(&header, "attempts")]);
        assert!((1.0..=8.0).contains(&attempts), "max_attempts = 8: {row:?}");
        assert_eq!(
            row[column(&header, "retry_after_s")],
            "",
            "no hint is ever sent"
        );
    }
    // A closed client's second request starts once its first has ended: start_s of
    // request 1 is at least start_s + latency_s of request 0 (all clients start at 0).
    let at = |row: &Vec<String>, c: &str| number(&row[column(&header, c)]);
    for first in rows.iter().filter(|r| r[3] == "0") {
        assert_eq!(at(first, "start_s"), 0.0, "{first:?}");
        let second = rows
            .iter()
            .find(|r| r[0] == first[0] && r[1] == first[1] && r[2] == first[2] && r[3] == "1")
            .expect("each client's second request");
        if second[column(&header, "start_s")].is_empty() {
            assert_eq!(
                second[column(&header, "outcome")],
                "time_limit",
                "{second:?}"
            );
            continue;
        }
        assert!(
            at(second, "start_s") >= at(first, "start_s") + at(first, "latency_s") - 1e-9,
            "{first:?} then {second:?}"
        );
    }

    // It agrees with summary.csv: succeeded there is the mean per replication.
    let (sh, summary) = read_csv(&dir.join("summary.csv"));
    for srow in &summary {
        let succeeded = rows
            .iter()
            .filter(|r| r[0] == srow[0] && r[4] == "succeeded")
            .count() as f64;
        assert_eq!(succeeded / 2.0, number(&srow[column(&sh, "succeeded")]));
    }
}

#[test]
fn no_requests_csv_without_the_flag() {
    let ws = workspace_with(TINY);
    let dir = run_tiny(&ws, "out", &[]);
    assert!(!dir.join("requests.csv").exists());
}

// ---- files ------------------------------------------------------------------------------

#[test]
fn outputs_are_renamed_into_place_leaving_no_temporary_file() {
    let ws = workspace_with(TINY);
    let dir = run_tiny(&ws, "out", &["--requests"]);
    // A second run over the first replaces the files in place.
    let before = bytes(&dir.join("summary.csv"));
    run_tiny(&ws, "out", &["--requests", "--seed", "99"]);
    assert_ne!(
        before,
        bytes(&dir.join("summary.csv")),
        "files were replaced"
    );
    let files = files_below(&dir);
    assert_eq!(
        files,
        CSV_FILES
            .iter()
            .chain(&["requests.csv"])
            .map(|f| f.to_string())
            .collect::<BTreeSet<_>>(),
        "only the outputs, no temporary file"
    );
    assert!(!files.iter().any(|f| f.contains(".tmp-")));
}

/// `--out` through a file (`a-file/out`) can never be a folder: an invalid argument,
/// refused before anything runs (exit 2), naming the file in the way.
#[test]
fn fails_with_exit_2_when_the_output_folder_would_be_inside_a_file() {
    let ws = workspace_with(TINY);
    ws.file("a-file", "not a folder");
    let out = herdsim()
        .current_dir(ws.path())
        .args([
            "run",
            "tiny.toml",
            "--out",
            "a-file/out",
            "--no-charts",
            "--quiet",
        ])
        .output()
        .expect("run herdsim");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        "herdsim: error: --out: a-file/out cannot be a folder: a-file is a file, not a folder\n"
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("a-file")).expect("a-file"),
        "not a folder"
    );
}

// ---- check ------------------------------------------------------------------------------

#[test]
fn check_prints_ok_and_writes_nothing() {
    let ws = workspace_with(TINY);
    ws.file(
        "other.toml",
        &tiny_with("name = \"tiny\"", "name = \"other\""),
    );
    let before = files_below(ws.path());
    let out = ok(&ws, &["check", "tiny.toml", "other.toml"]);
    assert_eq!(
        stdout(&out),
        "tiny.toml: ok (tiny: 50 clients, 2 strategies, 2 replications)\n\
         other.toml: ok (other: 50 clients, 2 strategies, 2 replications)\n"
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(files_below(ws.path()), before, "check writes nothing");
}

/// The same file twice: the second copy's name is taken, the first is good and says so
/// (both were left without a line when good files were told apart by path).
#[test]
fn check_of_the_same_file_twice_says_the_first_is_ok() {
    let ws = workspace_with(TINY);
    let out = herdsim()
        .current_dir(ws.path())
        .args(["check", "tiny.toml", "tiny.toml"])
        .output()
        .expect("run herdsim");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stdout(&out),
        "tiny.toml: ok (tiny: 50 clients, 2 strategies, 2 replications)\n"
    );
    assert!(
        stderr(&out).contains("found \"tiny\" also in tiny.toml"),
        "{}",
        stderr(&out)
    );
    // `check` writes nothing anyway: its count of problems does not say so, as if a
    // problem had stopped it (run's does: it would have written).
    assert!(
        stderr(&out).ends_with("\nherdsim: 1 problem found\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_counts_sweep_points() {
    let ws = workspace_with(&format!(
        "{TINY}\n[sweep]\n\"clients.count\" = [10, 20, 30]\n"
    ));
    let out = ok(&ws, &["check", "tiny.toml"]);
    assert_eq!(
        stdout(&out),
        "tiny.toml: ok (tiny: 10..30 clients, 2 strategies, 2 replications, 3 sweep points)\n"
    );
}

/// Every scenario shipped in `scenarios/` validates, from the repository's root (trace files
/// resolve from each scenario's folder), and `check` names each one once.
#[test]
fn check_accepts_every_shipped_scenario() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = fs::read_dir(root.join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .map(|n| format!("scenarios/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut args = vec!["check".to_string()];
    args.extend(files.iter().cloned());
    let out = herdsim()
        .current_dir(root)
        .args(&args)
        .output()
        .expect("run herdsim");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for f in &files {
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with(&format!("{f}: ok (")))
                .count(),
            1,
            "{f}:\n{text}"
        );
    }
}

// ---- schedule ---------------------------------------------------------------------------

/// The rows of the table `herdsim schedule` prints, by column name.
fn schedule(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let ws = Workspace::new();
    let mut all = vec!["schedule"];
    all.extend_from_slice(args);
    let text = stdout(&ok(&ws, &all));
    let mut lines = text
        .lines()
        .skip_while(|l| *l != "delays in ms")
        .skip(1)
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>());
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("no table in:\n{text}"));
    (header, lines.collect())
}

fn schedule_column(args: &[&str], name: &str) -> Vec<String> {
    let (header, rows) = schedule(args);
    let c = column(&header, name);
    rows.into_iter().map(|r| r[c].clone()).collect()
}

/// `--draws` replays published tables: the three workers of a full-jitter demo drawing from
/// a minimal standard generator seeded 7919, 2 x 7919 and 3 x 7919 (its Math.floor'd table:
/// 17, 74, 44, 535, 385 / 35, 148, 89, 271, 771 / 53, 23, 133, 7, 1157 ms), and equal
/// jitter (`fraction=0.5`) at the draw 1.0: half the ladder.
#[test]
fn schedule_draws_replay_a_published_table() {
    let args = |line: &'static str| line.split(' ').collect::<Vec<_>>();
    let workers = args("--base 100ms --cap 2s --attempts 6 --clients 3 --draws minstd:7919");
    let floored = |name: &str| -> Vec<u64> {
        schedule_column(&workers, name)
            .iter()
            .map(|v| v.parse::<f64>().unwrap().floor() as u64)
            .collect()
    };
    assert_eq!(floored("client-0"), [17, 74, 44, 535, 385]);
    assert_eq!(floored("client-1"), [35, 148, 89, 271, 771]);
    assert_eq!(floored("client-2"), [53, 23, 133, 7, 1157]);
    let half = args("--base 500ms --cap 8s --jitter fraction=0.5 --clients 1 --draws 1");
    assert_eq!(
        schedule_column(&half, "client-0"),
        ["250", "500", "1000", "2000", "4000", "4000", "4000"]
    );
    // Polly's decorrelated V2 at the draw 0.5: (g(t) - g(t - 1)) x base / 1.4 with
    // g(t) = 2^t tanh(sqrt(4t)) at t = 0.5, 1.5, 2.5.
    let polly =
        args("--base 1s --cap 1h --jitter decorrelated-v2 --attempts 4 --clients 1 --draws 0.5");
    assert_eq!(
        schedule_column(&polly, "client-0"),
        ["897.405", "1093.004", "2035.748"]
    );
    // Decorrelated jitters do not draw around the ladder: no `expo` column beside them.
    for jitter in ["decorrelated", "decorrelated-v2"] {
        let (header, _) = schedule(&["--base", "1s", "--cap", "1h", "--jitter", jitter]);
        assert_eq!(header[..2], ["retry", "client-0"], "{jitter}");
    }
    let (header, _) = schedule(&["--base", "1s", "--cap", "1h", "--jitter", "equal"]);
    assert_eq!(header[..3], ["retry", "expo", "client-0"]);
    // urllib3's immediate first retry, then backoff_factor x 2^(c - 1) (base = 2 x factor).
    let urllib3 = args(
        "--base 200ms --cap 120s --jitter none --immediate-retries 1 --attempts 5 --clients 1",
    );
    assert_eq!(
        schedule_column(&urllib3, "client-0"),
        ["0", "200", "400", "800"]
    );
    assert_eq!(
        schedule_column(&urllib3, "expo"),
        ["0", "200", "400", "800"]
    );
    // Polly's linear backoff (base x n, MaxDelay 700 ms) with its jitter U(0.75, 1.25) x d
    // at the draws 0 and 0.5: 150, 400, 600, 700 ms.
    let linear = args(
        "--base 200ms --cap 700ms --multiplier 1 --increment 200ms --jitter proportional=0.25 \
         --attempts 5 --clients 1 --draws 0,0.5",
    );
    assert_eq!(
        schedule_column(&linear, "expo"),
        ["200", "400", "600", "700"]
    );
    assert_eq!(
        schedule_column(&linear, "client-0"),
        ["150", "400", "600", "700"]
    );
    // aws-sdk-go-v2 before 2026: U(0, 2^attempt) s, exactly 20 s once past it.
    let go =
        args("--base 2s --cap 20s --jitter-past-cap false --attempts 7 --clients 1 --draws 0.5");
    assert_eq!(
        schedule_column(&go, "client-0"),
        ["1000", "2000", "4000", "8000", "20000", "20000"]
    );
    // A list: retry n takes the n-th draw, the last repeating.
    let list = args("--base 1s --cap 1s --clients 1 --draws 0,0.5");
    assert_eq!(
        schedule_column(&list, "client-0"),
        ["0", "500", "500", "500", "500", "500", "500"]
    );
    let ws = Workspace::new();
    for (bad, found) in [("1.5", "1.5"), ("0.5,x", "x"), ("minstd:0", "minstd:0")] {
        let out = herdsim()
            .current_dir(ws.path())
            .args(["schedule", "--base", "1s", "--cap", "1s", "--draws", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("found \"{found}\"")), "{err}");
    }
}

/// `schedule` refuses what a scenario file refuses for the keys its flags stand for.
#[test]
fn schedule_refuses_values_a_scenario_would_refuse() {
    let ws = Workspace::new();
    for (flag, value, message) in [
        (
            "--multiplier",
            "inf",
            "herdsim: error: --multiplier: expected a number >= 1, found inf\n",
        ),
        (
            "--attempts",
            "65536",
            "herdsim: error: --attempts: expected at most 65535 (as max_attempts in a scenario), found 65536\n",
        ),
        (
            "--retry-after-max",
            "0s",
            "herdsim: error: --retry-after-max: expected a duration > 0 (as retry_after.max in a scenario), found 0s\n",
        ),
    ] {
        let out = herdsim()
            .current_dir(ws.path())
            .args(["schedule", "--base", "1s", "--cap", "1s", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message);
        assert!(out.stdout.is_empty());
    }
    // A misspelt jitter gets the likely one, the value echoed whole.
    for (jitter, expected) in [
        ("ful", "found \"ful\" (did you mean \"full\"?)"),
        (
            "{proportionl=0.5}",
            "found \"{proportionl=0.5}\" (did you mean \"proportional\"?)",
        ),
        // Spelt right in a scenario's braces: no guess that repeats it.
        (
            "{proportional=0.5}",
            "found \"{proportional=0.5}\" (without braces: proportional=...)",
        ),
    ] {
        let out = herdsim()
            .current_dir(ws.path())
            .args([
                "schedule", "--base", "1s", "--cap", "9s", "--jitter", jitter,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{jitter}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = herdsim()
        .current_dir(ws.path())
        .args(["schedule", "--base", "1s", "--cap", "9s"])
        .args(["--jitter", "decorrelated", "--increment", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "herdsim: error: --increment: expected no increment with jitter \"decorrelated\", which does not use the ladder (as the increment key in a scenario); found 1s\n"
    );
    let out = herdsim()
        .current_dir(ws.path())
        .args(["schedule", "--base", "1s", "--cap", "9s"])
        .args(["--jitter", "decorrelated-v2", "--jitter-past-cap", "false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "herdsim: error: --jitter-past-cap: expected true with jitter \"decorrelated-v2\", which does not use the ladder (as the jitter_past_cap key in a scenario); found false\n"
    );
}

#[test]
fn schedule_without_jitter_prints_the_capped_ladder() {
    let args = ["--base", "100ms", "--cap", "1s", "--jitter", "none"];
    let (header, rows) = schedule(&args);
    let ladder = ["100", "200", "400", "800", "1000", "1000", "1000"];
    assert_eq!(rows.len(), 7, "8 attempts by default: 7 retries");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[column(&header, "retry")], (i + 1).to_string());
        for col in ["expo", "client-0", "client-1", "client-2", "min", "max"] {
            assert_eq!(
                row[column(&header, col)],
                ladder[i],
                "{col} of retry {}",
                i + 1
            );
        }
        assert_eq!(
            row[column(&header, "distinct")],
            "1",
            "every client in step"
        );
    }
}

#[test]
fn schedule_multiplier_and_attempts_shape_the_ladder() {
    let args = [
        "--base",
        "100ms",
        "--cap",
        "10s",
        "--jitter",
        "none",
        "--multiplier",
        "3",
        "--attempts",
        "5",
    ];
    assert_eq!(
        schedule_column(&args, "expo"),
        ["100", "300", "900", "2700"]
    );
}

#[test]
fn schedule_with_full_jitter_gives_every_client_its_own_delay() {
    let args = [
        "--base",
        "100ms",
        "--cap",
        "10s",
        "--jitter",
        "full",
        "--clients",
        "40",
    ];
    let (header, rows) = schedule(&args);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[column(&header, "distinct")], "40", "retry {}", i + 1);
        let expo = number(&row[column(&header, "expo")]);
        let (min, max) = (
            number(&row[column(&header, "min")]),
            number(&row[column(&header, "max")]),
        );
        assert!(
            0.0 <= min && min < max && max <= expo,
            "U(0, {expo}): {row:?}"
        );
    }
}

#[test]
fn schedule_honors_a_retry_after_hint_everywhere() {
    let args = ["--base", "100ms", "--cap", "10s", "--retry-after", "3"];
    let (header, rows) = schedule(&args);
    assert_eq!(rows.len(), 7);
    for row in rows {
        for col in ["client-0", "client-1", "client-2", "min", "max"] {
            assert_eq!(row[column(&header, col)], "3000", "{col}: {row:?}");
        }
        assert_eq!(row[column(&header, "distinct")], "1");
    }
}

/// A `--retry-after` value the engine would not use leaves the table the backoff's, and
/// says so on stderr (helper-94: the header echoed "soon" and an HTTP-date as if applied).
#[test]
fn schedule_says_when_a_retry_after_value_is_unusable() {
    let schedule_with = |extra: &[&str]| {
        let base = [
            "schedule",
            "--base",
            "100ms",
            "--cap",
            "1s",
            "--attempts",
            "2",
        ];
        let out = herdsim()
            .args(base)
            .args(["--clients", "1"])
            .args(extra)
            .output();
        out.unwrap()
    };
    let stderr_of = |value: &str| {
        let out = schedule_with(&["--retry-after", value]);
        assert_eq!(out.status.code(), Some(0), "{value}");
        let plain = schedule_with(&[]);
        let table = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join("\n")
        };
        let used = table(&out) != table(&plain);
        (String::from_utf8_lossy(&out.stderr).into_owned(), used)
    };
    let unusable = |value: &str, why: &str| {
        (
            format!(
                "warning: --retry-after \"{value}\" {why}: unusable, so every delay is the backoff's\n"
            ),
            false,
        )
    };
    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    let not_seconds = "is not a number of seconds (the HTTP-date form is not simulated)";
    assert_eq!(stderr_of("soon"), unusable("soon", not_seconds));
    assert_eq!(stderr_of(date), unusable(date, not_seconds));
    assert_eq!(
        stderr_of("0"),
        unusable("0", "asks for no wait (a hint must be more than 0)")
    );
    assert_eq!(
        stderr_of("120"),
        unusable("120", "is more than --retry-after-max (1m)")
    );
    assert_eq!(stderr_of("3"), (String::new(), true));
}

#[test]
fn schedule_is_deterministic_and_seeded() {
    let args = ["--base", "100ms", "--cap", "10s", "--clients", "5"];
    let a = schedule_column(&args, "client-0");
    assert_eq!(
        a,
        schedule_column(&args, "client-0"),
        "same seed, same delays"
    );
    let mut seeded = args.to_vec();
    seeded.extend(["--seed", "2"]);
    assert_ne!(a, schedule_column(&seeded, "client-0"), "another seed");
}

/// Counts of one read in the singular in `check`'s line and `run`'s header and summary
/// line (a new user saw "1 strategies x 1 replications").
#[test]
fn counts_of_one_are_singular_in_check_and_run() {
    let ws = Workspace::new();
    let one = tiny_with("count = 50", "count = 1")
        .replace("replications = 2", "replications = 1")
        .replace("concurrency = 5", "concurrency = 1");
    let one = &one[..one
        .find("[[strategy]]\nname = \"full\"")
        .expect("two strategies")];
    ws.file("one.toml", one);
    let check = herdsim()
        .current_dir(ws.path())
        .args(["check", "one.toml"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        "one.toml: ok (tiny: 1 client, 1 strategy, 1 replication)\n"
    );
    let run = herdsim()
        .current_dir(ws.path())
        .args(["run", "one.toml", "--out", "out", "--no-charts"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.starts_with("tiny (one.toml): 1 client, 1 strategy x 1 replication, bucket"),
        "{stdout}"
    );
    assert!(stdout.contains("(1 slot / 10ms mean service)"), "{stdout}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("tiny: 1 run, "), "{stderr}");
}

/// A sweep over `seed` and `replications` used to give summary.csv two columns of each name
/// (the fixed `seed` one holding the file's seed in every row) and summary.json rows with
/// repeated keys. Each is now one column, the sweep's, holding the point's value.
#[test]
fn a_swept_seed_or_replications_is_one_column_holding_the_points_value() {
    let ws = workspace_with(&format!(
        "{TINY}\n[sweep]\n\"replications\" = [1, 2]\n\"seed\" = [7, 8]\n"
    ));
    let dir = run_tiny(&ws, "out", &[]);
    let csv = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..4], ["replications", "seed", "strategy", "clients"]);
    for name in ["seed", "replications"] {
        assert_eq!(header.iter().filter(|c| **c == name).count(), 1, "{name}");
    }
    // 2 x 2 points x 2 strategies, in sweep order (the last key varies fastest).
    let leading: Vec<String> = lines
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        leading,
        [
            "1,7,none", "1,7,full", "1,8,none", "1,8,full", "2,7,none", "2,7,full", "2,8,none",
            "2,8,full"
        ]
    );
    let json = fs::read_to_string(dir.join("summary.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let columns: Vec<&str> = doc["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns, header);
    // Once at the top level (the first point's) and once per row: no row repeats a key.
    assert_eq!(json.matches("\"seed\":").count(), 1 + 8, "{json}");
    assert_eq!(json.matches("\"replications\":").count(), 1 + 8);
    assert_eq!(doc["rows"][2]["seed"], "8");
    assert_eq!(doc["rows"][2]["replications"], "1");
    // The other files have no column of those names: the sweep's are their only ones.
    for file in [
        "services.csv",
        "populations.csv",
        "paired.csv",
        "timeseries.csv",
    ] {
        let text = fs::read_to_string(dir.join(file)).unwrap();
        let head = text.lines().next().unwrap();
        assert!(
            head.starts_with("replications,seed,strategy,"),
            "{file}: {head}"
        );
        assert_eq!(head.matches("seed").count(), 1, "{file}: {head}");
    }
    // compare names no one seed for a summary that sweeps it.
    let out = ok(&ws, &["compare", "out/tiny", "out/tiny"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("A: out/tiny/summary.json (tiny, scenario hash "),
        "{text}"
    );
}

/// `--seed` over a swept `seed` (or `--replications` over swept `replications`) would run
/// every point with the flag's value under one label: rows that cannot be told apart
/// though their numbers differ. Refused, naming the flag, the file and the swept values;
/// nothing written.
#[test]
fn a_flag_over_a_swept_key_is_refused() {
    let ws = workspace_with(&format!(
        "{TINY}\n[sweep]\n\"seed\" = [7, 8]\n\"replications\" = [1, 2]\n"
    ));
    let stderr =
        crate::errors::refused_in(&ws, &["run", "tiny.toml", "--out", "out", "--seed", "5"]);
    assert_eq!(
        stderr,
        "herdsim: error: --seed 5: tiny.toml sweeps `seed` ([sweep] \"seed\" = [7, 8]): every point would run with seed 5 under the same label; drop --seed, or the key from [sweep]\n"
    );
    let stderr = crate::errors::refused_in(
        &ws,
        &[
            "run",
            "tiny.toml",
            "--out",
            "out",
            "--replications",
            "3",
            "--shard",
            "0/2",
        ],
    );
    assert!(
        stderr.contains(
            "--replications 3: tiny.toml sweeps `replications` ([sweep] \"replications\" = [1, 2])"
        ),
        "{stderr}"
    );
    // Without the flags it runs, one row per point and strategy.
    let dir = run_tiny(&ws, "out", &[]);
    let (header, rows) = read_csv(&dir.join("summary.csv"));
    assert_eq!(header[..3], ["seed", "replications", "strategy"]);
    let leading: Vec<String> = rows.iter().map(|r| r[..2].join(",")).collect();
    assert_eq!(
        leading,
        ["7,1", "7,1", "7,2", "7,2", "8,1", "8,1", "8,2", "8,2"]
    );
}

/// Requests served before the outage began say nothing about recovering from it: each
/// client's first two requests succeed before 1 s, every third one (sent at about 1.04 s)
/// meets the outage [1 s, 30 s) and gives up at its 2 s deadline, and nothing is served
/// after. That run answered nobody once the trouble began: never recovered (it read `0`,
/// recovered at once, because the early successes counted).
#[test]
fn successes_before_the_outage_began_are_no_recovery() {
    let text = tiny_with(
        "[clients]\ncount = 50",
        "[clients]\ncount = 20\nrequests = 3\nthink = { dist = \"constant\", value = \"500ms\" }",
    )
    .replace("timeout = \"1s\"", "timeout = \"1s\"\ndeadline = \"2s\"");
    let with_outage = |start: &str, end: &str| {
        text.replace(
            "start = \"0s\"\nend = \"1s\"",
            &format!("start = \"{start}\"\nend = \"{end}\""),
        )
    };
    let ws = workspace_with(&with_outage("1s", "30s"));
    let dir = run_tiny(&ws, "out", &[]);
    let never = |s: &str| [s, "40", "20", "", "0"].map(String::from);
    assert_eq!(recovery_columns(&dir), [never("none"), never("full")]);
    // An earlier blip, [200 ms, 300 ms) while every client thinks, is over before the
    // outage the trigger ends began: the second requests' successes after it still do not
    // count (it read 0 when the trouble was taken to start at the first outage).
    let blip = with_outage("1s", "30s").replace(
        "[[server.outages]]",
        "[[server.outages]]\nstart = \"200ms\"\nend = \"300ms\"\n\n[[server.outages]]",
    );
    let ws = workspace_with(&blip);
    let dir = run_tiny(&ws, "out", &[]);
    assert_eq!(recovery_columns(&dir), [never("none"), never("full")]);
    // Over at 1.6 s: the third requests get through after it, recovered.
    let ws = workspace_with(&with_outage("1s", "1.6s"));
    let dir = run_tiny(&ws, "out", &[]);
    for row in recovery_columns(&dir) {
        assert_eq!(row[1], "60", "{row:?}");
        assert!(!row[3].is_empty() && row[4] == "1", "{row:?}");
    }
    // From 1.5 s, after every request ended: the outage met nobody, recovered at once.
    let ws = workspace_with(&with_outage("1.5s", "30s"));
    let dir = run_tiny(&ws, "out", &[]);
    let at_once = |s: &str| [s, "60", "0", "0", "1"].map(String::from);
    assert_eq!(recovery_columns(&dir), [at_once("none"), at_once("full")]);
}

/// `recovery_peak_rps` counts the buckets from the end of the last outage, as the contract
/// defines it, and equals `peak_rps` without one: a capacity cut or `[metrics] trigger_end`
/// moves `recovered_s`'s trigger, not this column.
#[test]
fn the_recovery_peak_starts_at_the_end_of_the_last_outage_only() {
    let peaks = |text: &str| {
        let ws = workspace_with(text);
        let (header, rows) = read_csv(&run_tiny(&ws, "out", &[]).join("summary.csv"));
        let cols = ["strategy", "peak_rps", "recovery_peak_rps"].map(|c| column(&header, c));
        rows.iter()
            .map(|r| cols.map(|c| r[c].clone()).join(" "))
            .collect::<Vec<_>>()
    };
    // One request at 10 ms, a cut to 0 slots over [150 ms, 200 ms), no outage.
    let cut = "name = \"tiny\"\n[clients]\ncount = 1\n\
               [network]\nlatency = { dist = \"constant\", value = \"10ms\" }\n\
               [server]\nconcurrency = 2\nservice = { dist = \"constant\", value = \"300ms\" }\n\
               [[server.capacity]]\nat = \"150ms\"\nconcurrency = 0\n\
               [[server.capacity]]\nat = \"200ms\"\nconcurrency = 3\n\
               [retry]\nmax_attempts = 1\n[[strategy]]\nname = \"s\"\nbase = \"10ms\"\ncap = \"10ms\"\n";
    assert_eq!(peaks(cut), ["s 10 10"]);
    // Four arrivals at 10 ms refused by an outage over [0, 200 ms); the one client that
    // retries arrives again at 330 ms. trigger_end = 0 does not move the recovery peak.
    let outage = "name = \"tiny\"\n\
                  [[clients]]\nname = \"a\"\ncount = 3\nretry = { max_attempts = 1 }\n\
                  [[clients]]\nname = \"b\"\ncount = 1\n\
                  [network]\nlatency = { dist = \"constant\", value = \"10ms\" }\n\
                  [server]\nconcurrency = 1\nservice = { dist = \"constant\", value = \"100ms\" }\n\
                  [[server.outages]]\nstart = \"0s\"\nend = \"200ms\"\n\
                  [retry]\nmax_attempts = 3\n\
                  [[strategy]]\nname = \"s\"\nbase = \"300ms\"\ncap = \"300ms\"\n\
                  [metrics]\ntrigger_end = \"0s\"\n";
    assert_eq!(peaks(outage), ["s 40 10"]);
}

/// (strategy, succeeded, gave_up, recovered_s, recovered_share) of each summary.csv row.
fn recovery_columns(dir: &Path) -> Vec<[String; 5]> {
    let (header, rows) = read_csv(&dir.join("summary.csv"));
    let cols = [
        "strategy",
        "succeeded",
        "gave_up",
        "recovered_s",
        "recovered_share",
    ]
    .map(|c| column(&header, c));
    rows.iter().map(|r| cols.map(|c| r[c].clone())).collect()
}

/// An autoscaling interval that gives a run more than 10^7 decisions before its time limit
/// (`"1ns"` meant as `"1s"`) draws a warning from `check` and `run`: each decision is an
/// event, and such a run took minutes with no word why. TINY's time limit is 1 h: 100 µs
/// gives 3.6 x 10^7 decisions, 1 ms 3.6 x 10^6 (no warning).
#[test]
fn an_autoscaling_interval_that_makes_runs_slow_is_warned_of() {
    let ws = workspace_with(&tiny_with(
        "queue = 5\n",
        "queue = 5\nautoscale = { min = 5, max = 10, interval = \"100us\" }\n",
    ));
    let out = ok(&ws, &["check", "tiny.toml"]);
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: service `server` makes an autoscaling decision every 100us: up to 36000000 per run before time_limit (1h), each an event of its own, so every run may take long\n"
    );
    let out = ok(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "server.autoscale.interval=1ms",
        ],
    );
    assert_eq!(stderr(&out), "");
    let out = ok(
        &ws,
        &[
            "run",
            "tiny.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
            "--set",
            "time_limit=60s",
        ],
    );
    assert_eq!(stderr(&out), "", "60 s / 100 us is 600 000 decisions");
}

/// An outage past the time limit (`end = "5M"`, months, meant as minutes) and a strategy
/// that lost every request used to show `recovered_s 0`, `recovered_share 1`: recovered at
/// once. Neither got back to normal within the run: empty and 0. An outage past the end of
/// the run draws a warning from `check` and `run`.
#[test]
fn a_run_that_answered_nobody_never_recovered() {
    let ws = workspace_with(TINY);
    let warning = "warning: tiny.toml: outage [0s, 1month) of `server` ends at or after time_limit (1h), the end of the run: the run never sees it end, so recovered_s stays empty and recovery_peak_rps is 0\n";
    let out = ok(
        &ws,
        &["check", "tiny.toml", "--set", "server.outages.0.end=1M"],
    );
    assert_eq!(stderr(&out), warning);
    let dir = ws.path().join("out/tiny");
    let run_with = |set: &str| {
        let run = ["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"];
        ok(&ws, &[&run[..], &["--set", set]].concat())
    };
    let out = run_with("server.outages.0.end=1M");
    assert!(stderr(&out).starts_with(warning), "{}", stderr(&out));
    let never = |s: &str| [s, "0", "50", "", "0"].map(String::from);
    assert_eq!(recovery_columns(&dir), [never("none"), never("full")]);
    // A single attempt during the outage: every request gives up at once, before the
    // trigger's end, and nobody is served after it.
    run_with("retry.max_attempts=1");
    assert_eq!(recovery_columns(&dir), [never("none"), never("full")]);
    // The file as it is recovers (its numbers are in the other tests); no warning.
    let out = ok(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"],
    );
    assert_eq!(stderr(&out), "");
    for row in recovery_columns(&dir) {
        assert_eq!(row[4], "1", "{row:?}");
        assert!(!row[3].is_empty(), "{row:?}");
    }
}

/// `clamp_to_deadline` without a deadline is valid but never acts: `check` and `run` say
/// so for each strategy it leaves inert, and say nothing once a deadline is set.
#[test]
fn a_clamp_without_a_deadline_draws_a_warning() {
    let ws = workspace_with(TINY);
    let clamp = "retry.clamp_to_deadline=true";
    let out = ok(&ws, &["check", "tiny.toml", "--set", clamp]);
    let warning = |s: &str| {
        format!(
            "warning: tiny.toml: strategy `{s}` sets clamp_to_deadline but has no deadline: the clamp never acts\n"
        )
    };
    assert_eq!(stderr(&out), warning("none") + &warning("full"));
    let run = ["run", "tiny.toml", "--out", "out", "--no-charts", "--quiet"];
    let out = ok(&ws, &[&run[..], &["--set", clamp]].concat());
    assert_eq!(stderr(&out), warning("none") + &warning("full"));
    // A deadline for one strategy silences its warning only; one for all, every warning.
    let one = ["--set", clamp, "--set", "strategy.1.deadline=1m"];
    let out = ok(&ws, &[&["check", "tiny.toml"][..], &one].concat());
    assert_eq!(stderr(&out), warning("none"));
    let all = ["--set", clamp, "--set", "retry.deadline=1m"];
    let out = ok(&ws, &[&["check", "tiny.toml"][..], &all].concat());
    assert_eq!(stderr(&out), "");
}

/// A `throttle_base` that no 429 reaches draws a warning: 429 not in `retry_on`, or a
/// `rate_limit` ladder that takes the 429s; none when 429s are retried on the ladder.
#[test]
fn a_throttle_base_no_429_reaches_draws_a_warning() {
    let ws = workspace_with(TINY);
    let warning = |s: &str, why: &str| {
        format!("warning: tiny.toml: strategy `{s}` sets throttle_base but {why}: it never acts\n")
    };
    let check = |sets: &[&str]| {
        let mut args = vec!["check", "tiny.toml"];
        for s in sets {
            args.extend(["--set", s]);
        }
        stderr(&ok(&ws, &args))
    };
    let base = "strategy.1.throttle_base=1s";
    assert_eq!(check(&[base]), "");
    assert_eq!(
        check(&[base, "strategy.1.retry_on=[\"503\"]"]),
        warning("full", "its retry_on does not list \"429\"")
    );
    assert_eq!(
        check(&[base, "strategy.1.rate_limit={ max_retries = 3 }"]),
        warning("full", "its rate_limit ladder takes the 429s")
    );
}

/// A breaker's `slow_call` that no attempt can exceed (every attempt times out sooner, or
/// exactly then: a slow call takes strictly longer) draws a warning; a longer last timeout
/// (timeout_multiplier) or a shorter slow_call silences it.
#[test]
fn a_slow_call_no_attempt_can_exceed_draws_a_warning() {
    let ws = workspace_with(TINY);
    let check = |sets: &[&str]| {
        let mut args = vec!["check", "tiny.toml"];
        for s in sets {
            args.extend(["--set", s]);
        }
        stderr(&ok(&ws, &args))
    };
    // TINY: 8 attempts, each timing out after 1 s.
    let breaker = |over: &str| format!("strategy.1.breaker={{ slow_call = \"{over}\" }}");
    assert_eq!(
        check(&[&breaker("1s")]),
        "warning: tiny.toml: strategy `full` sets breaker.slow_call but its attempts time out within 1s, never more than slow_call (1s) after they are sent: no call is ever slow\n"
    );
    assert_eq!(check(&[&breaker("999ms")]), "");
    assert_eq!(
        check(&[&breaker("1s"), "strategy.1.timeout_multiplier=1.5"]),
        ""
    );
}

/// A concurrent budget per client in front of closed clients (one call at a time) never
/// refuses a retry, whatever its min_retries above 0: a warning; none once it is global or
/// allows no retry by itself (min_retries = 0).
#[test]
fn a_client_concurrent_budget_over_closed_clients_draws_a_warning() {
    let ws = workspace_with(TINY);
    let check = |budget: &str| {
        let set = format!("strategy.1.budget={{ kind = \"concurrent\", {budget} }}");
        stderr(&ok(&ws, &["check", "tiny.toml", "--set", &set]))
    };
    assert_eq!(
        check("scope = \"client\""),
        "warning: tiny.toml: strategy `full` sets a concurrent budget per client (scope = \"client\", min_retries = 3) but its clients are closed, one call at a time, so none has a retry in progress when it decides: it never refuses a retry\n"
    );
    assert_eq!(check("scope = \"global\""), "");
    assert_eq!(check("scope = \"client\", min_retries = 0"), "");
}

/// A `client_rate_limiter` whose clients call a service with no rate limiter (the only
/// source of 429s, which enable it) draws a warning; none once the service has one.
#[test]
fn a_client_rate_limiter_no_429_enables_draws_a_warning() {
    let ws = workspace_with(TINY);
    let limiter = "strategy.1.client_rate_limiter={ scope = \"client\" }";
    let out = ok(&ws, &["check", "tiny.toml", "--set", limiter]);
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: strategy `full` sets client_rate_limiter but service `server` has no rate_limit, so no 429 ever enables it: it never acts\n"
    );
    let limited = "server.rate_limit={ rate = 100 }";
    let out = ok(
        &ws,
        &["check", "tiny.toml", "--set", limiter, "--set", limited],
    );
    assert_eq!(stderr(&out), "");
}

/// Settings that cannot act draw warnings from `check` (valid, so exit 0): a population
/// starting at or after the time limit, a queue timeout or LIFO order without a queue.
#[test]
fn settings_that_cannot_act_draw_warnings() {
    let ws = workspace_with(TINY);
    let sets = [
        "server.queue=0",
        "server.queue_timeout=1s",
        "server.discipline=lifo",
        "clients.start=2h",
    ];
    let mut args = vec!["check", "tiny.toml"];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let out = ok(&ws, &args);
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: population `clients` starts at 2h, at or after time_limit (1h), the end of the run: none of its requests starts\n\
         warning: tiny.toml: service `server` sets queue_timeout but has no queue (queue = 0): it never acts\n\
         warning: tiny.toml: service `server` sets discipline = \"lifo\" but has no queue (queue = 0): it never acts\n"
    );
    // With a queue, or an earlier start, nothing to say.
    let out = ok(
        &ws,
        &["check", "tiny.toml", "--set", "server.queue_timeout=1s"],
    );
    assert_eq!(stderr(&out), "");
    // Under a sweep, only the point without a queue is named.
    ws.file(
        "swept.toml",
        &format!("{TINY}\n[sweep]\n\"server.queue\" = [0, 10]\n"),
    );
    let out = ok(
        &ws,
        &["check", "swept.toml", "--set", "server.queue_timeout=1s"],
    );
    assert_eq!(
        stderr(&out),
        "warning: swept.toml: service `server` sets queue_timeout but has no queue (queue = 0): it never acts (at sweep point server.queue = 0)\n"
    );
    // What lies past the end of the run names its point too (helper-98: it did not), and a
    // warning that holds at every point names none.
    ws.file(
        "limits.toml",
        &format!("{TINY}\n[sweep]\n\"time_limit\" = [\"1m\", \"3h\"]\n"),
    );
    let out = ok(
        &ws,
        &[
            "check",
            "limits.toml",
            "--set",
            "clients.start=2h",
            "--set",
            "server.queue=0",
            "--set",
            "server.queue_timeout=1s",
        ],
    );
    assert_eq!(
        stderr(&out),
        "warning: limits.toml: population `clients` starts at 2h, at or after time_limit (1m), the end of the run: none of its requests starts (at sweep point time_limit = 1m)\n\
         warning: limits.toml: service `server` sets queue_timeout but has no queue (queue = 0): it never acts\n"
    );
}

/// A network round trip as long as the run (a `"10m"` meant as `"10ms"`) draws a warning:
/// the run ends before almost any answer comes back. Just shorter, nothing.
#[test]
fn a_round_trip_as_long_as_the_run_draws_a_warning() {
    let ws = workspace_with(TINY);
    let latency = |v: &str| format!("network.latency={{ dist = \"constant\", value = \"{v}\" }}");
    let check = |v: &str| {
        ok(
            &ws,
            &[
                "check",
                "tiny.toml",
                "--set",
                &latency(v),
                "--set",
                "time_limit=1m",
            ],
        )
    };
    assert_eq!(
        stderr(&check("30s")),
        "warning: tiny.toml: the round trip to `server` (30s each way, on average) lasts as long as the run (time_limit 1m) or longer: almost no answer comes back within it\n"
    );
    assert_eq!(stderr(&check("29999ms")), "");
    // The [fallback] server's own latency too.
    let out = ok(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "time_limit=1m",
            "--set",
            "fallback={ concurrency = 1, service = { dist = \"constant\", value = \"1ms\" }, latency = { dist = \"constant\", value = \"10m\" } }",
            "--set",
            "retry.fallback_on=[\"attempts\"]",
        ],
    );
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: the round trip to `[fallback]` (10m each way, on average) lasts as long as the run (time_limit 1m) or longer: almost no answer comes back within it\n"
    );
}

/// An OCC server has no slots, queue or service time: the settings that act only on those
/// (how the queue is served and timed out, the overload hint, slowdown, capacity steps,
/// autoscaling, a `slow` outage) draw one warning per server, the [fallback] server's
/// included, and one in all under a sweep that does not change them; `concurrency`,
/// `queue` and `service`, which the docs say may be left in place, draw none.
#[test]
fn settings_an_occ_server_cannot_use_draw_warnings() {
    let ws = workspace_with(TINY);
    let occ = ["check", "tiny.toml", "--set", "server.occ=true"];
    let out = ok(&ws, &occ);
    assert_eq!(stderr(&out), "");
    let mut args = occ.to_vec();
    args.extend([
        "--set",
        "server.capacity=[{ at = \"1s\", concurrency = 1 }]",
        "--set",
        "server.queue_timeout=1s",
    ]);
    let out = ok(&ws, &args);
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: service `server` is an OCC server (occ is set: no slots, queue or service time): its writes ignore queue_timeout, capacity steps\n"
    );
    let out = ok(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "server.outages.0.kind=slow",
            "--set",
            "server.outages.0.slowdown=3",
            "--set",
            "fallback={ occ = true, autoscale = { min = 1, max = 4 } }",
            "--set",
            "retry.fallback_on=[\"attempts\"]",
        ],
    );
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: the [fallback] server is an OCC server (occ is set: no slots, queue or service time): its writes ignore autoscale\n"
    );
    let mut args = occ.to_vec();
    args.extend([
        "--set",
        "server.outages.0.kind=slow",
        "--set",
        "server.outages.0.slowdown=3",
        "--set",
        "server.retry_after=auto",
    ]);
    let out = ok(&ws, &args);
    assert_eq!(
        stderr(&out),
        "warning: tiny.toml: service `server` is an OCC server (occ is set: no slots, queue or service time): its writes ignore retry_after, a `slow` outage\n"
    );
    // Under a sweep that does not change them, said once, naming no point.
    ws.file(
        "swept.toml",
        &format!("{TINY}\n[sweep]\n\"clients.count\" = [10, 20, 30]\n"),
    );
    let out = ok(
        &ws,
        &[
            "check",
            "swept.toml",
            "--set",
            "server.occ=true",
            "--set",
            "server.autoscale={ min = 1, max = 4 }",
        ],
    );
    assert_eq!(
        stderr(&out),
        "warning: swept.toml: service `server` is an OCC server (occ is set: no slots, queue or service time): its writes ignore autoscale\n"
    );
}

/// Requests the time limit kept from starting are counted at once when requests.csv is not
/// written, one record each when it is: the same summary either way. 50 clients x 1 000
/// requests, a 5 ms limit: every first request is in flight (10 ms latency), so all 50 000
/// give up as `time_limit`, 49 950 of them never started.
#[test]
fn requests_that_never_started_count_the_same_with_or_without_records() {
    let ws = workspace_with(&tiny_with("count = 50", "count = 50\nrequests = 1000"));
    let base = [
        "run",
        "tiny.toml",
        "--no-charts",
        "--quiet",
        "--set",
        "time_limit=5ms",
    ];
    ok(&ws, &[&base[..], &["--out", "plain"]].concat());
    ok(
        &ws,
        &[&base[..], &["--out", "records", "--requests"]].concat(),
    );
    let plain = fs::read(ws.path().join("plain/tiny/summary.csv")).unwrap();
    let records = fs::read(ws.path().join("records/tiny/summary.csv")).unwrap();
    assert_eq!(plain, records);
    let (header, rows) = read_csv(&ws.path().join("plain/tiny/summary.csv"));
    for row in &rows {
        for (col, value) in [
            ("requests", "50000"),
            ("gave_up", "50000"),
            ("gave_up_time_limit", "50000"),
            // A call counts when it reaches the server (10 ms): none did.
            ("calls", "0"),
        ] {
            assert_eq!(row[column(&header, col)], value, "{col}");
        }
    }
    let records = fs::read_to_string(ws.path().join("records/tiny/requests.csv")).unwrap();
    assert_eq!(
        records.lines().count(),
        1 + 2 * 2 * 50_000,
        "header + strategies x reps x requests"
    );
}

#[test]
fn an_outage_that_outlasts_the_run_is_reported_by_the_whole_runs_peak() {
    // A 20% failure rate all run (the outage ends after time_limit): no bucket starts after
    // it, so recovery_peak_rps is 0 in the CSV, but the verdict gives the whole run's peak
    // and the console says why there is no recovered_s.
    let ws = workspace_with(&tiny_with(
        "end = \"1s\"",
        "end = \"1h\"\nkind = \"errors\"\nerror_rate = 0.2",
    ));
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    let text = stdout(&out);
    assert!(!text.contains("recovery peak"), "{text}");
    assert!(text.contains("  peak "), "{text}");
    assert!(text.contains("n/a (trouble outlasts the run)"), "{text}");
    assert!(!text.contains("never ("), "{text}");
    let (header, rows) = read_csv(&ws.path().join("out/tiny/summary.csv"));
    for row in rows {
        assert_eq!(row[column(&header, "recovery_peak_rps")], "0");
        assert_ne!(row[column(&header, "peak_rps")], "0");
        assert_eq!(row[column(&header, "recovered_s")], "");
    }
    // Ending inside the last bucket before time_limit is the same: no bucket starts after
    // it (the recovery peak skips a bucket the outage covers in part).
    let ws = workspace_with(&tiny_with("end = \"1s\"", "end = \"950ms\"").replacen(
        "seed = 7",
        "seed = 7\ntime_limit = \"1s\"",
        1,
    ));
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    let text = stdout(&out);
    assert!(!text.contains("recovery peak"), "{text}");
    assert!(text.contains("n/a (trouble outlasts the run)"), "{text}");
    let err = stderr(&out);
    assert!(
        err.contains("the last outage ends at 950ms, inside the last 100ms bucket before time_limit (1s): no bucket starts after it, so recovered_s stays empty and recovery_peak_rps is 0"),
        "{err}"
    );
}

/// Open work judged on 10 buckets of load after the trigger: an outage ending 9 buckets
/// before the load does leaves no window, so every strategy would read "never" for the
/// scenario's sake, not its own (helper-98). It reads `n/a`, and `check` warns; 10 buckets
/// before, a window judges and the run recovers.
#[test]
fn an_open_load_ending_too_soon_after_the_trigger_reads_n_a() {
    let scenario = |outage_end: &str| {
        format!(
            "name = \"open\"\ntime_limit = \"10s\"\n\
             [clients]\nrate = 100\nprocess = \"uniform\"\nend = \"5s\"\n\
             [network]\nlatency = {{ dist = \"constant\", value = \"1ms\" }}\n\
             [server]\nconcurrency = 10\nservice = {{ dist = \"constant\", value = \"1ms\" }}\n\
             [[server.outages]]\nstart = \"1s\"\nend = \"{outage_end}\"\n\
             [retry]\nmax_attempts = 1\n[metrics]\nbucket = \"100ms\"\n\
             [[strategy]]\nname = \"a\"\nbase = \"1s\"\ncap = \"1s\"\n"
        )
    };
    let ws = workspace_with(&scenario("4100ms"));
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    let text = stdout(&out);
    assert!(
        text.contains("n/a (too little load after the trigger)"),
        "{text}"
    );
    assert_eq!(
        stderr(&out).lines().next(),
        Some(
            "warning: tiny.toml: the trigger ends at 4s 100ms, less than 10 buckets of 100ms before the open load ends (5s): recovery of open work is judged on 10 buckets of load after the trigger, so recovered_s stays empty"
        )
    );
    let (header, rows) = read_csv(&ws.path().join("out/open/summary.csv"));
    assert_eq!(rows[0][column(&header, "recovered_s")], "");
    assert_eq!(rows[0][column(&header, "recovered_share")], "0");
    // An outage past the load's end (here 6 s): the trouble outlasts the load (helper-101:
    // the warning said "before the open load ends").
    let ws = workspace_with(&scenario("6s"));
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    assert!(
        stdout(&out).contains("n/a (trouble outlasts the load)"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains(
            "warning: tiny.toml: the trigger ends at 6s, at or after the open load ends (5s): recovery of open work is judged on 10 buckets of load after the trigger, so recovered_s stays empty"
        ),
        "{}",
        stderr(&out)
    );
    let ws = workspace_with(&scenario("4s"));
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    assert!(!stdout(&out).contains("n/a"), "{}", stdout(&out));
    assert_eq!(
        stderr(&out).matches("warning").count(),
        0,
        "{}",
        stderr(&out)
    );
    let (header, rows) = read_csv(&ws.path().join("out/open/summary.csv"));
    assert_eq!(rows[0][column(&header, "recovered_s")], "0");
}

#[test]
fn a_share_of_runs_that_recovered_is_printed_as_the_verdict_prints_it() {
    // A metastable queue: a 10 s burst to 20 req/s into a 20 req/s server; of the 5 runs,
    // 4 recover within time_limit. The console says "80.0%", as the verdict and compare
    // do (it said "80%", and rounded 999 of 1 000 to "100%").
    let ws = workspace_with(
        r#"name = "tiny"
seed = 21
replications = 5
time_limit = "10m"

[clients]
profile = [["0s", 8], ["60s", 8], ["60s", 20], ["70s", 20], ["70s", 8]]
end = "300s"
clients = 100

[network]
latency = { dist = "constant", value = "5ms" }

[server]
concurrency = 1
queue = 256
service = { dist = "exponential", mean = "50ms" }

[retry]
max_attempts = 4
timeout = "750ms"
base = "0s"
cap = "0s"

[metrics]
bucket = "2s"
trigger_end = "70s"

[[strategy]]
name = "immediate"
"#,
    );
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out", "--no-charts"]);
    let text = stdout(&out);
    assert!(text.contains("never (80.0% of runs recovered)"), "{text}");
    let (header, rows) = read_csv(&ws.path().join("out/tiny/summary.csv"));
    assert_eq!(rows[0][column(&header, "recovered_share")], "0.8");
    assert_eq!(rows[0][column(&header, "recovered_s")], "");
}
