//! Issue 13's regression tests: each documented limit works at both ends, every accepted
//! input runs in bounded memory or is refused up front (exit 2, nothing written), and the
//! output folder is never a mix of two runs.

use crate::common::{self, Workspace, herdsim};

/// Two clients against a limiter that grants one token, ever: the first client succeeds,
/// the second meets only 429s and climbs the 429 ladder until it escalates.
fn ladder(max_retries: &str) -> String {
    format!(
        r#"
name = "ladder"
[clients]
count = 2
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
concurrency = 1
service = {{ dist = "constant", value = "1ms" }}
[server.rate_limit]
rate = 1e-9
burst = 1
[retry]
max_attempts = 3
base = "1ms"
cap = "1ms"
[[strategy]]
name = "ladder"
rate_limit = {{ {max_retries}, default_wait = "1ms", max_wait = "1ms" }}
"#
    )
}

fn ladder_run(max_retries: &str) -> herdsim::metrics::RunMetrics {
    common::run(&common::scenario(&ladder(max_retries)), 0)
}

/// The request escalates at the 429 that exceeds the count: with the documented maximum
/// (65 535) that is the 65 536th. A `u16` counter that saturated at 65 535 never got there
/// and the client retried until the time limit (1 200 001 calls in an hour).
#[test]
fn the_429_ladder_escalates_at_both_ends_of_its_range() {
    let rate_limit = herdsim::model::outcome::GiveUpReason::RateLimitEscalation as usize;
    for (key, calls) in [
        ("max_retries = 65535", 1 + 65_536),
        ("max_retries = 65534", 1 + 65_535),
        ("max_retries = 0", 1 + 1),
        ("max_retries = 65535, escalate_after = 65535", 1 + 65_536),
        ("max_retries = 65535, escalate_after = 0", 1 + 1),
    ] {
        let m = ladder_run(key);
        assert_eq!(m.entry().calls, calls, "{key}");
        assert_eq!(m.entry().succeeded, 1, "{key}");
        assert_eq!(m.entry().gave_up[rate_limit], 1, "{key}");
        assert!(!m.cut_short, "{key}");
    }
}

/// `max_attempts` at both ends: 1 attempt, and 65 535 (the transport counter is a `u16`).
#[test]
fn max_attempts_works_at_both_ends_of_its_range() {
    for attempts in [1u64, 65_535] {
        let text = common::exact_scenario(
            "1ns",
            "count = 1",
            "concurrency = 1\nservice = { dist = \"constant\", value = \"1ns\" }\n\
             [[server.outages]]\nstart = \"0s\"\nend = \"1h\"",
            &format!("max_attempts = {attempts}\nbase = \"1ns\"\ncap = \"1ns\""),
            "[[strategy]]\nname = \"a\"",
        );
        let m = common::run(&common::scenario(&text), 0);
        assert_eq!(m.entry().calls, attempts);
        let attempts_reason = herdsim::model::outcome::GiveUpReason::Attempts as usize;
        assert_eq!(m.entry().gave_up[attempts_reason], 1);
    }
}

/// Retries that take no simulated time: zero latency and service, a `down` outage, a zero
/// backoff and many attempts. `time_limit` cannot stop a loop at one instant; before, this
/// grew the event queue by 24 bytes per event until it aborted (6 GB in 4 s at 1 000
/// clients). Now the run stops with a clear error, exit 2, and nothing is written.
pub const ZERO_LOOP: &str = r#"
name = "zeroloop"
[clients]
count = 100
[network]
latency = { dist = "constant", value = "0s" }
[server]
concurrency = 1
service = { dist = "constant", value = "0s" }
[[server.outages]]
start = "0s"
end = "1s"
[retry]
max_attempts = 65535
base = "0s"
cap = "0s"
[[strategy]]
name = "a"
"#;

#[test]
fn a_retry_loop_at_one_instant_is_stopped_with_a_clear_error() {
    let ws = Workspace::new();
    let path = ws.file("zeroloop.toml", ZERO_LOOP);
    let out = herdsim()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(ws.out())
        .arg("--no-charts")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("strategy[0]: simulated time stopped advancing: strategy \"a\" processed more than 1025600 events at t = 0 s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot be stopped by time_limit"),
        "{stderr}"
    );
    assert!(!ws.out().exists(), "nothing is written");
}

/// A stalled scenario after a good one in the same command: the good one has run, but
/// nothing is put in place, so an older result in its folder is left exactly as it was
/// and nothing new appears (the message says "nothing was written").
#[test]
fn a_stalled_scenario_leaves_every_output_folder_as_it_was() {
    let ws = Workspace::new();
    let good = ws.file("tiny.toml", common::TINY);
    let stuck = ws.file("zeroloop.toml", ZERO_LOOP);
    let run = |files: &[&std::path::Path], seed: &str| {
        herdsim()
            .arg("run")
            .args(files)
            .args([
                "--out",
                ws.out().to_str().unwrap(),
                "--no-charts",
                "--quiet",
            ])
            .args(["--seed", seed])
            .output()
            .unwrap()
    };
    // Into a folder that did not exist: it does not appear, though the good file ran.
    let fresh = run(&[&good, &stuck], "1");
    assert_eq!(fresh.status.code(), Some(2));
    assert!(!ws.out().exists(), "no empty --out folder is left");
    let first = run(&[&good], "1");
    assert!(first.status.success());
    let summary = ws.out().join("tiny/summary.csv");
    let before = std::fs::read(&summary).unwrap();
    let out = run(&[&good, &stuck], "2");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(
        std::fs::read(&summary).unwrap(),
        before,
        "the older result stays"
    );
    assert!(!ws.out().join("zeroloop").exists());
    let entries: Vec<_> = std::fs::read_dir(ws.out()).unwrap().collect();
    assert_eq!(entries.len(), 1, "no staging folder is left behind");
    // Without the stalled file, the same command does replace it.
    assert!(run(&[&good], "2").status.success());
    assert_ne!(std::fs::read(&summary).unwrap(), before);
}

/// A sharded run puts each file's shard in place as soon as it is written, so a stalled
/// file after a good one leaves the good one's shard written: the message says so and names
/// it, not "nothing was written" (helper-98). Stalled first, nothing at all was written.
#[test]
fn a_stalled_file_after_a_written_shard_names_the_shard_written() {
    let ws = Workspace::new();
    let good = ws.file("tiny.toml", common::TINY);
    let stuck = ws.file("zeroloop.toml", ZERO_LOOP);
    let run = |files: &[&std::path::Path]| {
        let out = herdsim()
            .arg("run")
            .args(files)
            .args([
                "--out",
                ws.out().to_str().unwrap(),
                "--no-charts",
                "--quiet",
            ])
            .args(["--shard", "0/2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let shard = ws.out().join("tiny").join("shard-0-of-2");
    let stderr = run(&[&stuck, &good]);
    assert!(
        stderr.contains("1 problem found; nothing was written\n"),
        "{stderr}"
    );
    assert!(!ws.out().join("tiny").exists(), "{stderr}");
    let names = |stderr: &str, before: &str, shard: &std::path::Path| {
        let tail = format!("{before}herdsim: written before it: {}\n", shard.display());
        assert!(stderr.ends_with(&tail), "{stderr}");
    };
    let stderr = run(&[&good, &stuck]);
    names(
        &stderr,
        "1 problem found; nothing of that file was written\n",
        &shard,
    );
    assert!(shard.join("manifest.json").is_file());
    assert!(!ws.out().join("zeroloop").exists());
    // A shard is named as soon as it is in place: printing its line may fail after it
    // (stdout a full device here: exit 1), and the folder is there all the same
    // (helper-99: it went unnamed).
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .arg("run")
        .arg(&good)
        .args(["--out", ws.out().to_str().unwrap(), "--no-charts"])
        .args(["--shard", "1/2"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let second = ws.out().join("tiny").join("shard-1-of-2");
    names(&stderr, "", &second);
    assert!(second.join("manifest.json").is_file());
}

/// The same loop through the library: the run stops at the bound and says where.
#[test]
fn the_engine_marks_a_stalled_run() {
    let m = common::run(&common::scenario(ZERO_LOOP), 0);
    assert_eq!(m.stalled_at, Some(herdsim::time::SimTime::ZERO));
    assert_eq!(m.events, 1_000_000 + 256 * 100);
}

/// Runs herdsim in `ws` and checks a refusal: exit 2, nothing on stdout, no output folder.
/// Returns stderr.
pub fn refused(ws: &Workspace, args: &[&str]) -> String {
    let out = herdsim()
        .current_dir(ws.path())
        .args(args)
        .output()
        .expect("run herdsim");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit status; stderr:\n{stderr}");
    assert!(out.stdout.is_empty(), "stdout: {:?}", out.stdout);
    assert!(
        !ws.path().join("out").exists() && !ws.path().join("output").exists(),
        "a refused run must not create an output folder; stderr:\n{stderr}"
    );
    stderr
}

/// `bucket = "1ns"` with a 10 ms time limit stays within the 10 M-bucket limit, yet 6 runs
/// keep 10 M buckets each (3.2 GB peak measured, 1.25 GB per run reported). It is refused
/// when the estimate exceeds the limit, before anything runs.
#[test]
fn a_run_that_would_exceed_the_memory_limit_is_refused_with_its_estimate() {
    let ws = Workspace::new();
    ws.file(
        "fine.toml",
        &common::tiny_with(
            "replications = 2",
            "replications = 6\ntime_limit = \"10ms\"",
        )
        .replace("[retry]", "[metrics]\nbucket = \"1ns\"\n[retry]"),
    );
    let stderr = refused(
        &ws,
        &[
            "run",
            "fine.toml",
            "--out",
            "out",
            "--max-memory",
            "1GiB",
            "--threads",
            "2",
        ],
    );
    assert!(
        stderr.contains(
            // Two strategies: two groups accumulate at most, not one per thread and one
            // finishing (helper-98: three were counted).
            "herdsim: error: fine.toml: this run needs an estimated 16.0 GB (16.8 MB for the program, 12 runs x 0 B kept until the end, 2 x 1.3 GB in progress, 2 x 4.5 GB accumulating, 4.5 GB of reduced results, 2 x 3.4 MB drawing PNG charts) of memory"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("more than the limit of 1.1 GB (--max-memory)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("raise metrics.bucket or lower time_limit"),
        "{stderr}"
    );
    // The bitmaps of PNG charts count: a row of 260 pixels per strategy (helper-102: 1 000
    // strategies were accepted at 294 MB and drew their charts at 1.76 GB).
    let many: String = (0..1000)
        .map(|i| format!("\n[[strategy]]\nname = \"s{i}\"\nbase = \"100ms\"\ncap = \"2s\"\n"))
        .collect();
    ws.file(
        "many.toml",
        &format!(
            "{}{many}",
            common::tiny_with("count = 50", "count = 2")
                .replace("replications = 2", "replications = 2\ntime_limit = \"10s\"")
        ),
    );
    let run_many = [
        "run",
        "many.toml",
        "--out",
        "out",
        "--max-memory",
        "1GB",
        "--threads",
        "2",
    ];
    let stderr = refused(&ws, &run_many);
    assert!(
        stderr.contains(", 2 x 1.1 GB drawing PNG charts)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("draw no PNG charts (--no-charts, or --format svg)"),
        "{stderr}"
    );
    herdsim()
        .current_dir(ws.path())
        .args(run_many)
        .args(["--replications", "1", "--no-charts", "--quiet"])
        .assert()
        .code(0);
    // Its merge draws them likewise.
    herdsim()
        .current_dir(ws.path())
        .args(["run", "many.toml", "--out", "sh", "--shard", "0/1"])
        .args(["--replications", "1", "--quiet"])
        .assert()
        .code(0);
    let out = herdsim()
        .current_dir(ws.path())
        .args(["merge", "sh/tiny", "--max-memory", "1GB"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!ws.path().join("sh/tiny/summary.json").exists());
    assert!(
        stderr.contains(
            "drawing PNG charts), more than the limit of 1.0 GB (--max-memory): draw no PNG charts"
        ),
        "{stderr}"
    );
    herdsim()
        .current_dir(ws.path())
        .args([
            "merge",
            "sh/tiny",
            "--max-memory",
            "1GB",
            "--no-charts",
            "--quiet",
        ])
        .assert()
        .code(0);
}

/// `check` refuses what `run` would refuse before starting, with `run`'s defaults: an
/// arrival rate of 1e300 per second passed `check` as ok (helper-102). The other file of
/// the command is still said to be ok.
#[test]
fn check_refuses_what_run_would_refuse_for_memory() {
    let ws = Workspace::new();
    ws.file(
        "huge.toml",
        &common::tiny_with(
            "[clients]\ncount = 50",
            "[[clients]]\nname = \"x\"\nrate = 1e300\nend = \"1s\"\nprocess = \"uniform\"",
        ),
    );
    ws.file(
        "tiny.toml",
        &common::tiny_with("name = \"tiny\"", "name = \"other\""),
    );
    let out = herdsim()
        .current_dir(ws.path())
        .args(["check", "huge.toml", "tiny.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "tiny.toml: ok (other: 50 clients, 2 strategies, 2 replications)\n"
    );
    assert!(
        stderr.contains("herdsim: error: huge.toml: this run needs an estimated "),
        "{stderr}"
    );
    assert!(
        stderr.contains("Lower the arrival rate or its window (start, end)"),
        "{stderr}"
    );
}

/// The documented client maximum is accepted by `check` on a machine large enough, and
/// `run` refuses it up front when the estimate does not fit the limit (50 million clients
/// need gigabytes per run in progress; memory does not grow with replications, so the limit
/// is set low here). Both limits are given: the default is the machine's memory, and this
/// file's 16.1 GB would fail `check` on a smaller machine than this one's 24 GB.
#[test]
fn the_largest_population_is_checked_against_memory_before_running() {
    let ws = Workspace::new();
    let text = common::tiny_with("count = 50", "count = 50000000");
    ws.file("big.toml", &text);
    herdsim()
        .current_dir(ws.path())
        .args(["check", "big.toml", "--max-memory", "64GiB"])
        .assert()
        .code(0);
    let stderr = refused(&ws, &["check", "big.toml", "--max-memory", "2GiB"]);
    assert!(
        stderr.contains("this run needs an estimated 16.1 GB"),
        "{stderr}"
    );
    let stderr = refused(
        &ws,
        &["run", "big.toml", "--out", "out", "--max-memory", "2GiB"],
    );
    assert!(stderr.contains("this run needs an estimated"), "{stderr}");
    assert!(stderr.contains("--max-memory"), "{stderr}");
}

/// `--replications` takes the scenario file's range, 1 to 1 000 000; more was accepted and
/// then aborted on a 5.8 GB allocation.
#[test]
fn the_replications_flag_has_the_files_range() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    let stderr = refused(
        &ws,
        &[
            "run",
            "tiny.toml",
            "--out",
            "out",
            "--replications",
            "1000001",
        ],
    );
    assert!(
        stderr.contains("--replications: expected a number from 1 to 1000000, found 1000001"),
        "{stderr}"
    );
    // The file's own bound is the same.
    let one = common::tiny_with("replications = 2", "replications = 1000000").replace(
        "[[strategy]]\nname = \"full\"",
        "[[unused]]\nname = \"full\"",
    );
    let one = one.split("[[unused]]").next().unwrap().to_string();
    assert!(herdsim::scenario::sweep::load_str("a.toml", &one).is_ok());
    let over = one.replace("replications = 1000000", "replications = 1000001");
    let err = herdsim::scenario::sweep::load_str("a.toml", &over)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("replications: expected an integer from 1 to 1000000, found 1000001"),
        "{err}"
    );
    assert_eq!(herdsim::limits::MAX_REPLICATIONS, 1_000_000);
}

/// An open population's memory comes from its arrival rate and window, not from
/// `clients.count`: the refusal names the keys that set this file's number of requests.
#[test]
fn a_memory_refusal_names_the_keys_of_the_files_populations() {
    let ws = Workspace::new();
    let open = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/three-tier.toml"),
    )
    .unwrap();
    ws.file("open.toml", &open);
    let args = [
        "run",
        "open.toml",
        "--out",
        "out",
        "--set",
        "clients.rate=1e12",
    ];
    let stderr = refused(&ws, &args);
    assert!(
        stderr.contains(
            ". Lower the arrival rate or its window (start, end), replications or the sweep, raise metrics.bucket"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("clients' count"), "{stderr}");
}

/// A sweep times `--replications 1000000` is 20 million runs: refused by the run cap,
/// naming the numbers, instead of aborting on a 5.8 GB allocation.
#[test]
fn too_many_runs_are_refused_naming_the_numbers() {
    let ws = Workspace::new();
    let sweep = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweep-clients.toml"),
    )
    .unwrap();
    ws.file("sweep.toml", &sweep);
    let stderr = refused(
        &ws,
        &[
            "run",
            "sweep.toml",
            "--out",
            "out",
            "--replications",
            "1000000",
        ],
    );
    assert!(
        stderr.contains(
            "sweep.toml: 20000000 runs (5 sweep points x 4 strategies x 1000000 replications), more than the 1000000 one scenario may ask for"
        ),
        "{stderr}"
    );
    // Two strategies of 1 000 000 replications in the file itself: refused by `check`.
    ws.file(
        "reps.toml",
        &common::tiny_with("replications = 2", "replications = 1000000"),
    );
    let stderr = refused(&ws, &["check", "reps.toml"]);
    assert!(
        stderr.contains(
            "reps.toml:4:16: replications: expected at most 1000000 runs (2 strategies x replications), found 2000000 (2 x 1000000)"
        ),
        "{stderr}"
    );
}

/// Two swept keys of 1 000 values each are a million points: `check` used to hang with no
/// message; now the sizes are multiplied before any point is built.
#[test]
fn a_sweep_with_too_many_points_is_refused_before_expansion() {
    let ws = Workspace::new();
    let values: Vec<String> = (1..=1000).map(|v| v.to_string()).collect();
    let list = values.join(", ");
    ws.file(
        "sweep.toml",
        &format!(
            "{}\n[sweep]\n\"clients.count\" = [{list}]\n\"seed\" = [{list}]\n",
            common::TINY
        ),
    );
    let stderr = refused(&ws, &["check", "sweep.toml"]);
    assert!(
        stderr.contains(
            "sweep.toml:37:1: sweep: expected at most 100000 sweep points, found 1000000 (1000 x 1000 values)"
        ),
        "{stderr}"
    );
}

/// A long sweep expands point by point from a text without the swept lists: the points are
/// right and a fault in a key that is not swept still points at the file's own line.
#[test]
fn a_long_sweep_expands_with_positions_intact() {
    // The swept list sits before [clients], one value per line.
    let with_sweep = |key: &str, values: Vec<String>| {
        let sweep = format!("[sweep]\n\"{key}\" = [{}]\n\n[clients]", values.join(",\n"));
        common::tiny_with("[clients]", &sweep)
    };
    let src = with_sweep("clients.count", (1..=2000).map(|v| v.to_string()).collect());
    let f = herdsim::scenario::sweep::load_str("s.toml", &src).unwrap();
    assert_eq!(f.points.len(), 2000);
    assert_eq!(f.points[1999].scenario.closed_clients(), 2000);
    assert_eq!(f.points[1999].labels, ["2000"]);

    let mut bases: Vec<String> = (1..2000).map(|v| format!("\"{v}ms\"")).collect();
    bases.push("\"5s\"".into());
    let src = with_sweep("strategy.0.base", bases);
    let err = herdsim::scenario::sweep::load_str("s.toml", &src)
        .unwrap_err()
        .to_string();
    // TINY's line 28 (the first strategy's `cap`) is 2 002 lines further down here.
    assert_eq!(
        err,
        "s.toml:2030:7: strategy[0].cap: expected cap >= base (5s), found 2s (at sweep point strategy.0.base = 5s)"
    );
}

/// `--threads 100000` is bad input (exit 2): the pool could not start and it failed with
/// exit 1.
#[test]
fn too_many_threads_is_bad_input() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    let stderr = refused(
        &ws,
        &["run", "tiny.toml", "--out", "out", "--threads", "100000"],
    );
    assert!(
        stderr.contains("--threads: expected a number from 1 to 1024, found 100000"),
        "{stderr}"
    );
}

/// `schedule --clients 1000000000` kept 24 GB of delays; now what it keeps is estimated and
/// refused above the limit.
#[test]
fn schedule_refuses_a_population_that_does_not_fit() {
    let ws = Workspace::new();
    let stderr = refused(
        &ws,
        &[
            "schedule",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--clients",
            "1000000000",
            "--max-memory",
            "8GiB",
        ],
    );
    assert!(
        stderr.contains(
            "schedule: 1000000000 clients x 7 retries need an estimated 56.0 GB of memory, more than the limit of 8.6 GB (--max-memory)"
        ),
        "{stderr}"
    );
}

// ---- the output folder --------------------------------------------------------------------

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// Every file below `dir` (relative path -> bytes).
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        out.insert(name, std::fs::read(entry.path()).unwrap());
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `herdsim run tiny.toml --out out --no-charts` plus `extra`, in `ws`.
fn run_tiny(ws: &Workspace, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"));
    cmd.current_dir(ws.path())
        .args(["run", "tiny.toml", "--out", "out", "--quiet"])
        .args(extra);
    cmd
}

/// Limits the files the command may write to `bytes` (RLIMIT_FSIZE): a write beyond fails
/// with EFBIG, like a full disk, or, with `kill`, the kernel kills the process (SIGXFSZ)
/// in the middle of writing. Root is subject to it too.
pub fn limit_file_size(cmd: &mut std::process::Command, bytes: u64, kill: bool) {
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // async-signal-safe functions (setrlimit, signal).
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let action = if kill { libc::SIG_DFL } else { libc::SIG_IGN };
            libc::signal(libc::SIGXFSZ, action);
            Ok(())
        });
    }
}

/// A file that cannot be written (here: too large, as on a full disk) used to leave the
/// folder with the new summary.csv beside the old timeseries.csv and requests.csv. Now the
/// folder is exactly the previous run's, and nothing else is left in `--out`.
#[test]
fn a_failed_write_leaves_the_previous_output_whole() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    assert!(run_tiny(&ws, &["--requests"]).status().unwrap().success());
    let before = contents(&ws.out().join("tiny"));
    // 6 CSV files and summary.json, 6 charts (attempts, latency, load, paired, raster,
    // summary) as PNG and SVG, report.html.
    assert_eq!(before.len(), 20, "{:?}", before.keys());
    // requests.csv (about 5 kB) is the file that does not fit.
    let mut cmd = run_tiny(&ws, &["--seed", "99", "--no-charts", "--requests"]);
    limit_file_size(&mut cmd, 4096, false);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("herdsim: error: cannot write out/tiny/"),
        "{stderr}"
    );
    assert!(stderr.contains("File too large"), "{stderr}");
    assert_eq!(contents(&ws.out().join("tiny")), before);
    assert_eq!(names(&ws.out()), ["tiny"], "no staging folder is left");
}

/// Killed in the middle of writing (SIGXFSZ, like a SIGKILL: no handler runs), a run used
/// to leave a mixed folder and a half-written hidden temporary file in it. Now the folder is
/// the previous run's, and the next run removes the killed run's staging folder.
#[test]
fn a_run_killed_while_writing_leaves_the_previous_output_whole() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    assert!(run_tiny(&ws, &["--no-charts"]).status().unwrap().success());
    let before = contents(&ws.out().join("tiny"));
    let mut cmd = run_tiny(&ws, &["--seed", "99", "--requests", "--no-charts"]);
    limit_file_size(&mut cmd, 4096, true);
    let status = cmd.status().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGXFSZ), "{status:?}");
    assert_eq!(contents(&ws.out().join("tiny")), before);
    assert!(
        run_tiny(&ws, &["--seed", "5", "--no-charts"])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(
        names(&ws.out()),
        ["tiny"],
        "the leftover staging folder is gone"
    );
    assert_eq!(
        names(&ws.out().join("tiny")),
        [
            "paired.csv",
            "populations.csv",
            "services.csv",
            "summary.csv",
            "summary.json",
            "timeseries.csv"
        ]
    );
}

/// SIGTERM while the files are being written: the staging folder is removed before the
/// process exits (130), and the previous output is untouched.
#[test]
fn sigterm_while_writing_removes_the_staging_folder() {
    let ws = Workspace::new();
    // Two million buckets: formatting timeseries.csv takes long enough to be caught.
    ws.file(
        "tiny.toml",
        &common::tiny_with("replications = 2", "replications = 1\ntime_limit = \"2s\"")
            .replace("[retry]", "[metrics]\nbucket = \"1us\"\n[retry]"),
    );
    // A previous output (herdsim's: it has a summary.json) with a file of the user's.
    std::fs::create_dir_all(ws.out().join("tiny")).unwrap();
    std::fs::write(ws.out().join("tiny/old.txt"), "old").unwrap();
    std::fs::write(
        ws.out().join("tiny/summary.json"),
        r#"{"herdsim_version": "0.1.0"}"#,
    )
    .unwrap();
    let mut child = run_tiny(&ws, &["--no-charts"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the staging folder appears (or the run ends, which fails the test).
    let staged = loop {
        if let Some(name) = names(&ws.out())
            .into_iter()
            .find(|n| n.starts_with(".tiny."))
        {
            break name;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before writing"
        );
        std::thread::yield_now();
    };
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?} (staging {staged})");
    assert_eq!(names(&ws.out()), ["tiny"]);
    assert_eq!(names(&ws.out().join("tiny")), ["old.txt", "summary.json"]);
}

/// SIGTERM while writing into an `--out` the run created (`fresh/a/b`): the folders it made
/// go with the staging folder, as when a run fails, and the file system is as it was.
#[test]
fn sigterm_while_writing_into_a_new_nested_out_removes_the_folders_it_made() {
    let ws = Workspace::new();
    ws.file(
        "tiny.toml",
        &common::tiny_with("replications = 2", "replications = 1\ntime_limit = \"2s\"")
            .replace("[retry]", "[metrics]\nbucket = \"1us\"\n[retry]"),
    );
    let out = ws.path().join("fresh/a/b");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .current_dir(ws.path())
        .args([
            "run",
            "tiny.toml",
            "--out",
            "fresh/a/b",
            "--quiet",
            "--no-charts",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while !out.exists() || names(&out).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before writing"
        );
        std::thread::yield_now();
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!ws.path().join("fresh").exists(), "{:?}", names(ws.path()));
}

/// A previous output herdsim may not delete (a folder in it made read-only) is swapped out
/// all the same, and the warning names the hidden folder it stays in, instead of leaving it
/// there unseen. Run as `nobody` when the tests run as root (root may delete anything).
#[test]
fn a_previous_output_that_cannot_be_deleted_is_named_in_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    // `nobody` must be able to enter every folder above the workspace: `/tmp` lets anyone
    // in, where `TMPDIR` may lie inside a folder only its owner can enter.
    let ws = if unsafe { libc::geteuid() } == 0 {
        Workspace::in_dir(Path::new("/tmp"))
    } else {
        Workspace::new()
    };
    ws.file("tiny.toml", common::TINY);
    let keep = ws.out().join("tiny/keep");
    std::fs::create_dir_all(&keep).unwrap();
    std::fs::write(keep.join("old.txt"), "old").unwrap();
    // herdsim's previous output: it has a summary.json.
    std::fs::write(
        ws.out().join("tiny/summary.json"),
        r#"{"herdsim_version": "0.1.0"}"#,
    )
    .unwrap();
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    for open in [ws.path().to_path_buf(), ws.out(), ws.out().join("tiny")] {
        mode(&open, 0o777);
    }
    mode(&keep, 0o555);
    // A copy of the binary that `nobody` may run: the build's own may lie in a folder only
    // its owner can enter (a clone in `mktemp -d`).
    let binary = ws.path().join("herdsim");
    std::fs::copy(assert_cmd::cargo::cargo_bin!("herdsim"), &binary).unwrap();
    mode(&binary, 0o755);
    let as_nobody = || {
        let mut cmd = std::process::Command::new(&binary);
        cmd.current_dir(ws.path()).args([
            "run",
            "tiny.toml",
            "--out",
            "out",
            "--quiet",
            "--no-charts",
        ]);
        // SAFETY: the closure runs in the child between fork and exec and only calls
        // async-signal-safe functions (geteuid, setgroups, setgid, setuid).
        unsafe {
            cmd.pre_exec(|| {
                if libc::geteuid() == 0
                    && (libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(65534) != 0
                        || libc::setuid(65534) != 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // The copy was open for writing a moment ago, and a test on another thread may
        // have forked then: its child holds the file open until it execs, and running the
        // copy fails with "Text file busy" (ETXTBSY) meanwhile. Wait for that to pass.
        let mut tries = 0;
        loop {
            match cmd.output() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                result => break result.unwrap(),
            }
        }
    };
    let out = as_nobody();
    assert!(out.status.success(), "{out:?}");
    let hidden: Vec<String> = names(&ws.out())
        .into_iter()
        .filter(|n| n.starts_with(".tiny.herdsim-"))
        .collect();
    assert_eq!(hidden.len(), 1, "{:?}", names(&ws.out()));
    let left = format!("out/{}", hidden[0]);
    let how = format!(
        "could not be deleted (Permission denied (os error 13)); delete it with: chmod -R u+rwX '{left}' && rm -rf '{left}'\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("warning: {left} holds the previous output of out/tiny and {how}")
    );
    assert!(ws.out().join("tiny/summary.csv").exists());
    assert!(ws.out().join(&hidden[0]).join("keep/old.txt").exists());
    // The next run cannot delete it either, and says so again rather than leave it unseen.
    let out = as_nobody();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("warning: {left} holds a folder left by an earlier run and {how}")
    );
    mode(&ws.out().join(&hidden[0]).join("keep"), 0o755);
}

/// A signal before any output is staged (here while herdsim waits to read a FIFO: the
/// scenario of `run`, a shard's manifest for `merge`) exits with the documented 130 too, not
/// the shell's 128 + signal of a process the signal killed.
#[test]
fn a_signal_while_reading_the_input_exits_130() {
    let ws = Workspace::new();
    let fifo = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "{path:?}");
    };
    fifo(&ws.path().join("fifo.toml"));
    std::fs::create_dir_all(ws.path().join("out/tiny/shard-0-of-1")).unwrap();
    fifo(&ws.path().join("out/tiny/shard-0-of-1/manifest.json"));
    for (args, signal) in [
        (&["run", "fifo.toml", "--out", "out2"][..], libc::SIGTERM),
        (&["run", "fifo.toml", "--out", "out2"][..], libc::SIGHUP),
        (&["merge", "out/tiny"][..], libc::SIGTERM),
        (&["merge", "out/tiny"][..], libc::SIGHUP),
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
            .current_dir(ws.path())
            .args(args)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Blocked in open(2) until a writer comes: the kernel names that wait.
        let wchan = format!("/proc/{}/wchan", child.id());
        let start = std::time::Instant::now();
        while std::fs::read_to_string(&wchan).unwrap_or_default() != "wait_for_partner" {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "{args:?} never opened the FIFO"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{args:?} {signal}: {status:?}");
    }
    assert!(!ws.path().join("out2").exists(), "nothing written");
}

/// Two runs writing the same `--out` take turns: the second waits, says so, and the folder
/// ends up entirely one run's.
#[test]
fn a_second_run_waits_for_the_lock_on_the_output_folder() {
    use std::io::{BufRead, BufReader};
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    std::fs::create_dir_all(ws.out()).unwrap();
    let lock = std::fs::File::open(ws.out()).unwrap();
    lock.lock().unwrap();
    // Without --quiet (run_tiny's), which silences the wait.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .current_dir(ws.path())
        .args(["run", "tiny.toml", "--out", "out", "--no-charts"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.contains("out is being written by another herdsim run; waiting for it to finish"),
        "{line}"
    );
    assert!(!ws.out().join("tiny").exists());
    lock.unlock().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        names(&ws.out().join("tiny")),
        [
            "paired.csv",
            "populations.csv",
            "services.csv",
            "summary.csv",
            "summary.json",
            "timeseries.csv"
        ]
    );
}

/// `merge` in place waits for the folder above the shards as `run` does, and names it as
/// the user wrote it (`out`, not its resolved absolute path).
#[test]
fn a_merge_in_place_waits_for_the_lock_and_names_the_folder_as_given() {
    use std::io::{BufRead, BufReader};
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    herdsim()
        .current_dir(ws.path())
        .args([
            "run",
            "tiny.toml",
            "--shard",
            "0/1",
            "--out",
            "out",
            "--quiet",
        ])
        .assert()
        .success();
    let lock = std::fs::File::open(ws.out()).unwrap();
    lock.lock().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .current_dir(ws.path())
        .args(["merge", "out/tiny", "--no-charts"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line,
        "herdsim: out is being written by another herdsim run; waiting for it to finish\n"
    );
    lock.unlock().unwrap();
    assert!(child.wait().unwrap().success());
    assert!(ws.out().join("tiny/summary.csv").exists());
}

/// Waits (60 s at most) until `child` is blocked on an `flock`: /proc/locks lists a waiter
/// with `->` and its pid.
fn wait_until_blocked_on_a_lock(child: &std::process::Child) {
    let waiting = format!(" {} ", child.id());
    let start = std::time::Instant::now();
    while !std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|l| l.contains("->") && l.contains("FLOCK") && l.contains(&waiting))
    {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the run never waited for the lock: {}",
            std::fs::read_to_string("/proc/locks").unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The run that held the lock removed the `--out` it had created (an interrupted or failed
/// run does, when the folder is empty) while a second run waited for it: the second locks
/// the folder as it is now, created again, and writes its output (it failed with "entity not
/// found", its lock on a deleted folder).
#[test]
fn a_run_waiting_for_a_folder_the_holder_removed_creates_it_again() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    let out = ws.path().join("fresh/a/b");
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::File::open(&out).unwrap();
    lock.lock().unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .current_dir(ws.path())
        .args([
            "run",
            "tiny.toml",
            "--out",
            "fresh/a/b",
            "--quiet",
            "--no-charts",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_blocked_on_a_lock(&child);
    std::fs::remove_dir(&out).unwrap();
    std::fs::remove_dir(ws.path().join("fresh/a")).unwrap();
    std::fs::remove_dir(ws.path().join("fresh")).unwrap();
    lock.unlock().unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(out.join("tiny/summary.csv").exists());
}

/// With `--quiet` the wait for the lock is silent: it is progress, not a warning. The child
/// is seen waiting in /proc/locks (a blocked `flock` is listed with `->` and its pid) before
/// the lock is let go, so the silence is that of a run that did wait.
#[test]
fn a_quiet_run_waits_for_the_lock_without_a_word() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    std::fs::create_dir_all(ws.out()).unwrap();
    let lock = std::fs::File::open(ws.out()).unwrap();
    lock.lock().unwrap();
    // run_tiny passes --quiet.
    let child = run_tiny(&ws, &["--no-charts"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_blocked_on_a_lock(&child);
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(ws.out().join("tiny/summary.csv").exists());
}

// ---- messages -----------------------------------------------------------------------------

/// Control characters, ANSI escapes and bidi overrides in a scenario or a file name are
/// shown escaped, never sent to the terminal.
#[test]
fn control_characters_in_input_are_escaped_in_messages() {
    let ws = Workspace::new();
    let name = "evil\u{1b}[2J\u{202e}.toml";
    ws.file(
        name,
        &common::tiny_with("name = \"tiny\"", "name = \"t\\u001b[31m\\u0000\\u202Ex\""),
    );
    let stderr = refused(&ws, &["check", name]);
    assert!(
        stderr.contains(
            "evil\\u{1b}[2J\\u{202e}.toml:2:8: name: expected 1 to 64 characters from a-z, 0-9, '_' and '-' (it names files), found \"t\\u{1b}[31m\\u{0}\\u{202e}x\""
        ),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\0') && !stderr.contains('\u{202e}'));
    let stderr = refused(&ws, &["check", "missing\u{7}.toml"]);
    assert!(
        stderr.contains("missing\\u{7}.toml: cannot read"),
        "{stderr}"
    );
    // clap's own usage errors quote the argument too.
    let stderr = refused(&ws, &["run", "--seed", "\u{1b}[31mx\u{202e}"]);
    assert!(
        stderr.contains("invalid value 'x\\u{202e}' for '--seed"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\u{202e}'));
}

/// serde's internals (`internally tagged enum RawDist`, `i64`, `as i128`) never reach the
/// user; huge numbers are written short.
#[test]
fn messages_use_the_users_words_and_short_numbers() {
    let ws = Workspace::new();
    for (from, to, expected) in [
        (
            "latency = { dist = \"constant\", value = \"10ms\" }",
            "latency = \"10ms\"",
            "network.latency: expected a distribution table such as { dist = \"constant\", value = \"10ms\" }, found a string \"10ms\"",
        ),
        (
            "count = 50",
            "count = 99999999999999999999",
            "clients.count: expected an integer, found the integer 99999999999999999999 (above 9223372036854775807, the largest integer TOML holds)",
        ),
        (
            "[retry]",
            "[server.rate_limit]\nrate = -1e300\n[retry]",
            "server.rate_limit.rate: expected a rate > 0 (tokens per second), found -1e300",
        ),
    ] {
        ws.file("bad.toml", &common::tiny_with(from, to));
        let stderr = refused(&ws, &["check", "bad.toml"]);
        assert!(stderr.contains(expected), "{stderr}");
        for internal in ["RawDist", "i64", "i128", "internally tagged"] {
            assert!(!stderr.contains(internal), "{stderr}");
        }
    }
}

/// A dangling symbolic link as `--out` says what it is (it failed with "File exists").
#[test]
fn a_dangling_out_link_says_what_it_is() {
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    std::os::unix::fs::symlink(ws.path().join("nowhere"), ws.path().join("link")).unwrap();
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "tiny.toml", "--out", "link", "--no-charts"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--out: link is a symbolic link to ")
            && stderr.contains("nowhere, which does not exist (a dangling link)"),
        "{stderr}"
    );
    assert!(!ws.path().join("nowhere").exists());
    // A dangling link on the way to --out is refused at once too (it failed after the run).
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "tiny.toml", "--out", "link/run1", "--no-charts"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--out: link/run1 cannot be a folder: link is a symbolic link to ")
            && stderr.contains("nowhere, which does not exist (a dangling link)"),
        "{stderr}"
    );
    assert!(!ws.path().join("nowhere").exists());
}

/// report.html names the scenario by its file name: the same scenario run by two different
/// paths gives byte-identical reports.
#[test]
fn the_report_is_the_same_whichever_path_ran_the_scenario() {
    let a = Workspace::new();
    let b = Workspace::new();
    let reports: Vec<Vec<u8>> = [&a, &b]
        .iter()
        .map(|ws| {
            let file = ws.file("tiny.toml", common::TINY);
            herdsim()
                .arg("run")
                .arg(&file)
                .args(["--quiet", "--format", "svg", "--out"])
                .arg(ws.out())
                .assert()
                .success();
            std::fs::read(ws.out().join("tiny/report.html")).unwrap()
        })
        .collect();
    let html = String::from_utf8_lossy(&reports[0]);
    assert!(
        html.contains("<td>tiny.toml</td>") || html.contains(">tiny.toml<"),
        "file name shown"
    );
    assert!(!html.contains(&a.path().display().to_string()));
    assert!(reports[0] == reports[1], "the reports differ");
}

/// Output files used to be owner-only (tempfile's 0600) whatever the umask, so colleagues on
/// a shared host could not open report.html or the CSVs. Under umask 0022 every file now gets
/// 0644 and the folder 0755, what `File::create` and `mkdir` give.
#[test]
fn outputs_are_readable_by_others_under_umask_0022() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    ws.file("tiny.toml", common::TINY);
    let mut cmd = run_tiny(&ws, &["--format", "svg"]);
    // SAFETY: runs in the child between fork and exec; umask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    assert!(cmd.status().unwrap().success());
    let dir = ws.out().join("tiny");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o755);
    let files = names(&dir);
    assert!(files.contains(&"report.html".to_string()), "{files:?}");
    for name in files {
        assert_eq!(mode(&dir.join(&name)), 0o644, "{name}");
    }
}

/// The memory estimate counts what slow-call breakers and per-request caps keep per request
/// in flight (a closed client holds one for the whole run): 8 and 4 bytes for each of
/// TINY's 50 clients.
#[test]
fn the_estimate_counts_slow_call_times_and_request_caps() {
    let working = |retry: &str| {
        let text = common::tiny_with("timeout = \"1s\"", &format!("timeout = \"1s\"\n{retry}"));
        let file = herdsim::scenario::sweep::load_str("tiny.toml", &text).unwrap();
        herdsim::limits::estimate(&file, 1, false, None).per_run_working
    };
    let breaker = working("breaker = { failure_rate = 0.5 }");
    let slow = working("breaker = { failure_rate = 0.5, slow_call = \"500ms\" }");
    assert_eq!(slow - breaker, herdsim::limits::SLOW_CALL_BYTES * 50);
    let budget = working("budget = { kind = \"ratio\" }");
    let capped = working("budget = { kind = \"ratio\", per_request = 0.2 }");
    assert_eq!(capped - budget, herdsim::limits::REQUEST_CAP_BYTES * 50);
}

/// A run replaces `<out>/<name>` whole, so it refuses (exit 2, before running, nothing
/// deleted) a folder there that is not herdsim's, and one holding its own scenario or trace
/// (helper-102: `name = "src"` with `--out .` deleted the user's sources; `run
/// output/tiny/tiny.toml` deleted the scenario it ran). A herdsim folder, or an empty one,
/// is still replaced, and so are a shard's and a merge's folders.
#[test]
fn a_run_never_replaces_a_folder_that_is_not_herdsims_or_holds_its_inputs() {
    let ws = Workspace::new();
    let run = |args: &[&str]| {
        herdsim()
            .current_dir(ws.path())
            .args(args)
            .args(["--no-charts", "--quiet"])
            .output()
            .unwrap()
    };
    let refused = |out: &std::process::Output, says: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(out.stdout.is_empty());
    };
    // A user's folder named like the scenario.
    ws.file("tiny/main.rs", "fn main() {}\n");
    ws.file("tiny.toml", common::TINY);
    refused(
        &run(&["run", "tiny.toml", "--out", "."]),
        "--out: ./tiny exists and is not a herdsim output folder (it holds main.rs, and no herdsim summary.json or shard manifest)",
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tiny/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    // The shard's own folder inside it, when that is someone else's, is refused too.
    ws.file("tiny/shard-0-of-1/notes.txt", "mine\n");
    refused(
        &run(&["run", "tiny.toml", "--out", ".", "--shard", "0/1"]),
        // The folder of the shards is checked too: merging in place would replace it.
        "--out: ./tiny exists and is not a herdsim output folder (it holds main.rs, shard-0-of-1, and no herdsim summary.json or shard manifest)",
    );
    assert!(ws.path().join("tiny/shard-0-of-1/notes.txt").is_file());
    // Another program's manifest.json or summary.json does not make a folder herdsim's.
    ws.file("web/tiny/manifest.json", "{\"manifest_version\": 3}\n");
    ws.file("web/tiny/summary.json", "{}\n");
    refused(
        &run(&["run", "tiny.toml", "--out", "web"]),
        "--out: web/tiny exists and is not a herdsim output folder (it holds manifest.json, summary.json,",
    );
    assert!(ws.path().join("web/tiny/manifest.json").is_file());
    // The scenario inside the output folder it would replace, and a trace there.
    assert!(run(&["run", "tiny.toml", "--out", "out"]).status.success());
    std::fs::copy(
        ws.path().join("tiny.toml"),
        ws.path().join("out/tiny/tiny.toml"),
    )
    .unwrap();
    refused(
        &run(&["run", "out/tiny/tiny.toml", "--out", "out"]),
        "--out: out/tiny holds out/tiny/tiny.toml, an input of this run",
    );
    assert!(ws.path().join("out/tiny/tiny.toml").is_file());
    ws.file("out/tiny/arrivals.csv", "t_s\n0\n0.5\n");
    let traced = common::TINY.replace(
        "[clients]\ncount = 50",
        "[clients]\ntrace = \"out/tiny/arrivals.csv\"",
    );
    assert_ne!(traced, common::TINY);
    ws.file("traced.toml", &traced);
    refused(
        &run(&["run", "traced.toml", "--out", "out"]),
        "holds out/tiny/arrivals.csv, an input of this run",
    );
    assert!(ws.path().join("out/tiny/arrivals.csv").is_file());
    // herdsim's own folder (extra files go with it) and an empty folder are replaced.
    std::fs::remove_file(ws.path().join("out/tiny/tiny.toml")).unwrap();
    std::fs::remove_file(ws.path().join("out/tiny/arrivals.csv")).unwrap();
    ws.file("out/tiny/notes.txt", "goes with the old output\n");
    assert!(run(&["run", "tiny.toml", "--out", "out"]).status.success());
    assert!(!ws.path().join("out/tiny/notes.txt").exists());
    std::fs::create_dir_all(ws.path().join("empty/tiny")).unwrap();
    assert!(
        run(&["run", "tiny.toml", "--out", "empty"])
            .status
            .success()
    );
    assert!(ws.path().join("empty/tiny/summary.json").is_file());
    // Another shard still being written (its hidden staging folder) does not stop a shard.
    std::fs::create_dir_all(ws.path().join("sh/tiny/.shard-1-of-2.herdsim-AbC123")).unwrap();
    assert!(
        run(&["run", "tiny.toml", "--out", "sh", "--shard", "0/2"])
            .status
            .success()
    );
    std::fs::remove_dir_all(ws.path().join("sh")).unwrap();
    // A merge's --out folder likewise.
    assert!(
        run(&["run", "tiny.toml", "--out", "sh", "--shard", "0/1"])
            .status
            .success()
    );
    ws.file("merged/tiny/keep.txt", "mine\n");
    refused(
        &run(&["merge", "sh/tiny", "--out", "merged"]),
        "merged/tiny exists and is not a herdsim output folder (it holds keep.txt",
    );
    assert!(run(&["merge", "sh/tiny"]).status.success());
    assert!(ws.path().join("sh/tiny/summary.json").is_file());
}

/// A trace that lists 1 050 000 arrivals at one time (a log of one-second resolution) is a
/// valid burst, not time that stopped advancing: the stall guard counts a trace's largest
/// burst as its clients (helper-102: it counted the `clients` key, 1, and refused the run).
#[test]
fn a_trace_burst_at_one_instant_runs() {
    let ws = Workspace::new();
    let mut trace = String::from("t_s\n");
    for _ in 0..1_050_000 {
        trace.push_str("1\n");
    }
    ws.file("burst.csv", &trace);
    ws.file(
        "burst.toml",
        r#"
name = "burst"
time_limit = "1m"
[clients]
trace = "burst.csv"
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 200
queue = 400
service = { dist = "constant", value = "1ms" }
[retry]
max_attempts = 1
[[strategy]]
name = "once"
base = "100ms"
cap = "1s"
"#,
    );
    let out = herdsim()
        .current_dir(ws.path())
        .args([
            "run",
            "burst.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (header, rows) = common::read_csv(&ws.path().join("out/burst/summary.csv"));
    assert_eq!(rows[0][common::column(&header, "requests")], "1050000");
}
