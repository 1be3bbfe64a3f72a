//! The command-line conveniences of issue 11: `--set`, `summary.json`, `compare`, `init`,
//! `completions`, `man`, `--attempts` (attempts.csv) and the progress bar, as a user runs
//! them. Every run uses TINY (50 clients), so the module takes a few seconds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TINY, Workspace, column, herdsim, read_csv, tiny_with};
use crate::errors::{problems, refused_in};

fn run_in(ws: &Workspace, args: &[&str]) -> Output {
    herdsim()
        .current_dir(ws.path())
        .args(args)
        .output()
        .expect("run herdsim")
}

/// Runs `herdsim <args>` in `ws`, asserting exit status 0.
fn ok(ws: &Workspace, args: &[&str]) -> Output {
    let out = run_in(ws, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "herdsim {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `herdsim <args>` in `ws`, asserting `code`; returns stderr.
fn fails(ws: &Workspace, args: &[&str], code: i32) -> String {
    let out = run_in(ws, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "herdsim {args:?}:\n{stderr}");
    stderr
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

fn tiny_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.file("tiny.toml", TINY);
    ws
}

/// Runs tiny.toml into `out` with `extra` flags; returns the scenario's output folder.
fn run_tiny(ws: &Workspace, out: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["run", "tiny.toml", "--out", out, "--no-charts", "--quiet"];
    args.extend_from_slice(extra);
    ok(ws, &args);
    ws.path().join(out).join("tiny")
}

// ---- --set ------------------------------------------------------------------------------

/// `--set` gives exactly what editing the file gives: the same summary.csv, byte for byte.
#[test]
fn set_writes_values_into_the_scenario_like_an_edit() {
    let ws = tiny_workspace();
    let edited = TINY
        .replace("count = 50", "count = 20")
        .replace("end = \"1s\"", "end = \"2s\"")
        .replace("queue = 5\n", "queue = 5\nqueue_timeout = \"500ms\"\n");
    ws.file("edited.toml", &edited);
    let set = run_tiny(
        &ws,
        "set",
        &[
            "--set",
            "clients.count=20",
            "--set",
            "server.outages.0.end=2s",
            "--set",
            "server.queue_timeout=500ms",
        ],
    );
    ok(
        &ws,
        &[
            "run",
            "edited.toml",
            "--out",
            "edited",
            "--no-charts",
            "--quiet",
        ],
    );
    let a = fs::read(set.join("summary.csv")).unwrap();
    let b = fs::read(ws.path().join("edited/tiny/summary.csv")).unwrap();
    assert_eq!(text(&a), text(&b));
    let (header, rows) = read_csv(&set.join("summary.csv"));
    assert_eq!(rows[0][column(&header, "clients")], "20");
    // Without --set the file's values hold.
    let plain = run_tiny(&ws, "plain", &[]);
    let (header, rows) = read_csv(&plain.join("summary.csv"));
    assert_eq!(rows[0][column(&header, "clients")], "50");
}

/// `--set sweep.PATH=[...]` sweeps PATH (a `[sweep]` key is one quoted path): it adds
/// `[sweep]` to a file without one, exactly as the edit would, and replaces the list of a
/// file that sweeps it. It was refused as "no table `sweep`", with a hint to set
/// `sweep={ clients = { count = [...] } }`, itself refused.
#[test]
fn set_sweeps_a_path_like_an_edit() {
    let ws = tiny_workspace();
    ws.file(
        "swept.toml",
        &format!("{TINY}\n[sweep]\n\"clients.count\" = [10, 20]\n"),
    );
    let set = run_tiny(&ws, "set", &["--set", "sweep.clients.count=[10, 20]"]);
    ok(
        &ws,
        &[
            "run",
            "swept.toml",
            "--out",
            "edit",
            "--no-charts",
            "--quiet",
        ],
    );
    let a = text(&fs::read(set.join("summary.csv")).unwrap());
    let b = text(&fs::read(ws.path().join("edit/tiny/summary.csv")).unwrap());
    assert_eq!(a, b);
    let (header, rows) = read_csv(&set.join("summary.csv"));
    let counts: Vec<&str> = rows
        .iter()
        .map(|r| r[column(&header, "clients.count")].as_str())
        .collect();
    assert_eq!(counts, ["10", "10", "20", "20"]);
    // A file's own sweep list is replaced; the index spelling of messages works too.
    for (file, setting, said) in [
        (
            "swept.toml",
            "sweep.clients.count=[5, 6, 7]",
            "5..7 clients",
        ),
        (
            "tiny.toml",
            "sweep.server.outages[0].end=[\"1s\", \"2s\"]",
            "2 sweep points",
        ),
    ] {
        let out = text(&ok(&ws, &["check", file, "--set", setting]).stdout);
        assert!(out.contains(said), "{setting}: {out}");
    }
    // The file's key for the path in another spelling is the one replaced (helper-107: a
    // second key for the same value was refused), and a quoted path is the path.
    ws.file(
        "bracketed.toml",
        &format!("{TINY}\n[sweep]\n\"strategy[1].base\" = [\"10ms\", \"20ms\"]\n"),
    );
    for setting in [
        "sweep.strategy[1].base=[\"30ms\", \"40ms\", \"50ms\"]",
        "sweep.strategy.1.base=[\"30ms\", \"40ms\", \"50ms\"]",
        "sweep.\"strategy.1.base\"=[\"30ms\", \"40ms\", \"50ms\"]",
    ] {
        let out = text(&ok(&ws, &["check", "bracketed.toml", "--set", setting]).stdout);
        assert!(out.contains("3 sweep points"), "{setting}: {out}");
    }
    // The same swept path twice, quoted once, is the same key twice.
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "sweep.clients.count=[1]",
            "--set",
            "sweep.\"clients.count\"=[2]",
        ],
    );
    assert!(
        stderr.contains("set the same key `sweep.\"clients.count\"`: give it once"),
        "{stderr}"
    );
    // A failed sweep setting leaves no empty `[sweep]` for the next one to trip on.
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "sweep.=[1]",
            "--set",
            "sweep={ \"clients.count\" = [1] }",
        ],
    );
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: tiny.toml: --set sweep.=[1]: expected a dotted key path such as `clients.count`, found an empty key"
        ]
    );
    // A path that names no key is refused at the point, naming the flag.
    let stderr = refused_in(
        &ws,
        &["check", "tiny.toml", "--set", "sweep.clients.cont=[1,2]"],
    );
    assert!(
        stderr.contains("clients.cont: unknown key `cont` in clients (did you mean `count`?)")
            && stderr.contains("(from --set sweep.clients.cont=[1,2])"),
        "{stderr}"
    );
}

#[test]
fn set_applies_to_check_and_to_the_built_in_quickstart() {
    let ws = tiny_workspace();
    let out = ok(&ws, &["check", "tiny.toml", "--set", "clients.count=7"]);
    assert!(
        text(&out.stdout).contains("7 clients"),
        "{}",
        text(&out.stdout)
    );
    let out = ok(
        &ws,
        &["check", "tiny.toml", "--set", "strategy.1.jitter=equal"],
    );
    assert!(text(&out.stdout).contains("ok"));
    let out = ok(
        &ws,
        &[
            "run",
            "--set",
            "clients.count=300",
            "--replications",
            "1",
            "--out",
            "q",
            "--no-charts",
            "--quiet",
        ],
    );
    assert!(out.stdout.is_empty());
    let (header, rows) = read_csv(&ws.path().join("q/quickstart/summary.csv"));
    assert_eq!(rows[0][column(&header, "clients")], "300");
}

#[test]
fn set_refuses_a_path_with_no_table_naming_the_flag() {
    let ws = tiny_workspace();
    let stderr = refused_in(&ws, &["run", "tiny.toml", "--set", "nosuch.count=1"]);
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: tiny.toml: --set nosuch.count=1: no table `nosuch` in the scenario to set"
        ]
    );
    let check_with = |setting: &str| refused_in(&ws, &["check", "tiny.toml", "--set", setting]);
    for (setting, expected) in [
        (
            "servr.concurrency=5",
            "no table `servr` in the scenario to set (did you mean `server`?)",
        ),
        // A key holding a value is no table a path goes through: `bsae` is no misspelt `base`.
        (
            "strategy.0.bsae.x=1",
            "no table `bsae` in the scenario to set",
        ),
        // A table the file does not have (here a server's rate limit) can be set whole, as
        // an inline table, with the value as given (a string quoted, as it needs).
        (
            "server.rate_limit.rate=100",
            "no table `rate_limit` in the scenario to set (to add the table, set it whole: --set 'server.rate_limit={ rate = 100 }')",
        ),
        (
            "strategy.1.budget.kind=ratio",
            "(to add the table, set it whole: --set 'strategy.1.budget={ kind = \"ratio\" }')",
        ),
        (
            "strategy.5.base=1s",
            "--set strategy.5.base=1s: `strategy` has 2 entries, found index 5",
        ),
        // A single table is not a list.
        (
            "clients.0.count=5",
            "--set clients.0.count=5: `clients` is one table, not a list: expected a key of it, found the index 0",
        ),
    ] {
        let stderr = check_with(setting);
        assert!(stderr.contains(expected), "{stderr}");
    }
    let stderr = check_with("strategy.0.bsae.x=1");
    assert!(!stderr.contains("did you mean"), "{stderr}");
    // The deepest table that takes it is suggested: replacing a population's whole `retry`
    // table would drop the keys it holds (helper-101).
    ws.file(
        "fleet.toml",
        &TINY.replace(
            "[clients]\ncount = 50",
            "[[clients]]\nname = \"herd\"\ncount = 50\nretry = { max_attempts = 6 }",
        ),
    );
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "fleet.toml",
            "--set",
            "clients.0.retry.budget.kind=ratio",
        ],
    );
    assert!(
        stderr.contains(
            "(to add the table, set it whole: --set 'clients.0.retry.budget={ kind = \"ratio\" }')"
        ),
        "{stderr}"
    );
    // No table to suggest where the format takes none: a misspelt or unknown table, a key
    // that holds a number, a path through a list's index (the hint would make a table of
    // it), a `'` (it would end the hint's quotes).
    for setting in [
        "server.rate_limt.rate=1",
        "nosuch.count=1",
        "server.queue_timeout.x=1",
        "service.1.rate_limit.rate=5",
        "server.rate_limit.kind='token'",
    ] {
        let stderr = check_with(setting);
        assert!(stderr.contains("no table"), "{setting}: {stderr}");
        assert!(!stderr.contains("set it whole"), "{setting}: {stderr}");
    }
    // A --set value needs no quotes: the hint for a bare number says so.
    let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", "retry.timeout=2"]);
    assert!(
        stderr.contains(
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found the bare number 2 (a duration needs a unit, e.g. 2ms or 2s) (from --set retry.timeout=2)"
        ),
        "{stderr}"
    );
    // Inside an inline table the quotes are needed, as in a file: the hint keeps them.
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "server.service={dist=\"constant\",value=5}",
        ],
    );
    assert!(
        stderr.contains(
            "server.service.value: expected a duration with a unit, such as \"100ms\", found the bare number 5 (a duration needs a unit and quotes, e.g. \"5ms\" or \"5s\") (from --set server.service={dist=\"constant\",value=5})"
        ),
        "{stderr}"
    );
    // Text that only looks like an array is a string, a scalar: no quotes. Nor in the hint
    // for a number without a unit.
    for (value, expected) in [
        (
            "[5",
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found \"[5\" (a duration is a number and a unit, such as 100ms or 1m30s",
        ),
        (
            "05",
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found \"05\", a number without a unit (write e.g. 05ms or 05s) (from --set retry.timeout=05)",
        ),
        // A table where the duration goes: the example is what to type after `=`, and the
        // key still says what it takes (none, or a duration > 0).
        (
            "{a=1}",
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found a table (from --set retry.timeout={a=1})",
        ),
        // The value is echoed as typed, even when it reads like a hint.
        (
            "such as \"100ms\"",
            "found \"such as \"100ms\"\" (a duration is a number and a unit, such as 100ms or 1m30s",
        ),
    ] {
        let setting = format!("retry.timeout={value}");
        let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", &setting]);
        assert!(stderr.contains(expected), "{stderr}");
    }
    // One entry is singular ("has 1 entries" before).
    let stderr = refused_in(
        &ws,
        &["check", "tiny.toml", "--set", "server.outages.1.end=8s"],
    );
    assert!(
        stderr.contains("--set server.outages.1.end=8s: `outages` has 1 entry, found index 1"),
        "{stderr}"
    );
}

/// Values that look like numbers but are not durations get messages about what they are:
/// a table set to a number, infinity (no "write e.g. infms"), a fraction of a nanosecond
/// (not "too large" alone).
#[test]
fn set_explains_tables_infinities_and_fractions_of_a_nanosecond() {
    let ws = tiny_workspace();
    let cases = [
        (
            "server.outages.0=5",
            "--set server.outages.0=5: `outages.0` is a table, not a single value: name one of its keys after it",
        ),
        // A whole table or list of tables, and an entry of a list of values (helper-90: all
        // were "a table, not a number or duration", or "no table").
        (
            "server={}",
            "--set server={}: `server` is a table, not a single value: name one of its keys after it (`server.KEY`)",
        ),
        (
            "strategy=[]",
            "--set strategy=[]: `strategy` is a list of tables, not a single value: name an entry and one of its keys after it (`strategy.0.KEY`)",
        ),
        // The hint spells the whole path out (helper-92: `outages.0.KEY`).
        (
            "server.outages=5",
            "--set server.outages=5: `outages` is a list of tables, not a single value: name an entry and one of its keys after it (`server.outages.0.KEY`)",
        ),
        (
            "retry.timeout=inf",
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found inf (a duration is a number and a unit, such as 100ms) (from --set retry.timeout=inf)",
        ),
        (
            "retry.timeout=0.5ns",
            "retry.timeout: expected none or a duration > 0 with a unit, such as 100ms, found \"0.5ns\" (the number is too large, or has digits finer than 1ns, the smallest unit of time) (from --set retry.timeout=0.5ns)",
        ),
        // Beyond 64 bits: an integer, too large, as the same in the file says (not "a
        // string").
        (
            "clients.count=99999999999999999999",
            "clients.count: expected an integer, found the integer 99999999999999999999 (above 9223372036854775807, the largest integer TOML holds) (from --set clients.count=99999999999999999999)",
        ),
    ];
    for (set, expected) in cases {
        let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", set]);
        assert!(stderr.contains(expected), "{set}: {stderr}");
    }
    // An entry of a list of values: the list is set whole.
    ws.file(
        "tiny.toml",
        &tiny_with("max_attempts = 8", "max_attempts = 8\nretry_on = [\"503\"]"),
    );
    let stderr = refused_in(
        &ws,
        &["check", "tiny.toml", "--set", "retry.retry_on.0=500"],
    );
    assert!(
        stderr.contains("--set retry.retry_on.0=500: `retry_on` is a list of values, not of tables: set the whole list (--set 'retry.retry_on=[...]')"),
        "{stderr}"
    );
}

#[test]
fn set_refuses_a_value_of_the_wrong_type_or_range_naming_the_flag() {
    let ws = tiny_workspace();
    let stderr = refused_in(
        &ws,
        &[
            "run",
            "tiny.toml",
            "--set",
            "server.concurrency=many",
            "--set",
            "clients.count=0",
            "--set",
            "clients.cuont=5",
        ],
    );
    let p = problems(&stderr);
    assert_eq!(p.len(), 3, "{stderr}");
    assert!(
        stderr.contains(
            "tiny.toml: server.concurrency: expected an integer, found a string \"many\" (from --set server.concurrency=many)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "tiny.toml: clients.count: expected an integer from 1 to 50000000, found 0 (from --set clients.count=0)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("clients.cuont: unknown key `cuont` in clients")
            && stderr.contains("(from --set clients.cuont=5)"),
        "{stderr}"
    );
    // A set value has no place in the file: no line number is claimed for it.
    assert!(
        !stderr
            .match_indices("tiny.toml:")
            .any(|(i, m)| stderr[i + m.len()..].starts_with(|c: char| c.is_ascii_digit())),
        "{stderr}"
    );
}

/// A number is quoted as written, `1e4`, not as serde prints it (`10000.0`), from `--set`
/// and from the file alike.
#[test]
fn a_wrong_number_is_quoted_as_written() {
    let ws = tiny_workspace();
    let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", "clients.count=1e4"]);
    assert_eq!(
        problems(&stderr),
        [
            "herdsim: error: tiny.toml: clients.count: expected an integer, found the number 1e4 (from --set clients.count=1e4)"
        ]
    );
    ws.file("tiny.toml", &tiny_with("count = 50", "count = 5.0e1"));
    let stderr = refused_in(&ws, &["check", "tiny.toml"]);
    let p = problems(&stderr);
    assert_eq!(p.len(), 1, "{stderr}");
    assert!(
        p[0].ends_with(": clients.count: expected an integer, found the number 5.0e1"),
        "{stderr}"
    );
}

/// A set value can break a rule that ties it to another key the file writes (cap >= base,
/// end > start, unique names): the problem is reported at that other key, where the file has
/// it, and still says which `--set` caused it. A problem of the file itself, with `--set`
/// given for something else, reads exactly as without `--set`.
#[test]
fn set_names_the_flag_when_it_breaks_a_rule_with_another_key() {
    let ws = tiny_workspace();
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "strategy.0.base=5s",
            "--set",
            "server.outages.0.start=3s",
            "--set",
            "strategy.1.name=none",
        ],
    );
    let p = problems(&stderr);
    assert_eq!(p.len(), 3, "{stderr}");
    for (key, flag) in [
        (
            "strategy[0].cap: expected cap >= base (5s), found 2s",
            "strategy.0.base=5s",
        ),
        (
            "server.outages[0].end: expected end > start (3s), found 1s",
            "server.outages.0.start=3s",
        ),
        ("name: expected a unique name", "strategy.1.name=none"),
    ] {
        assert!(
            p.iter()
                .any(|l| l.contains(key) && l.ends_with(&format!("(from --set {flag})"))),
            "no `{key} ... (from --set {flag})` in:\n{stderr}"
        );
    }

    // The file's own problem, with an unrelated setting: the message of a run without it.
    let ws = Workspace::new();
    ws.file(
        "bad.toml",
        &tiny_with(
            "cap = \"2s\"\njitter = \"full\"",
            "cap = \"1ms\"\njitter = \"full\"",
        ),
    );
    let plain = refused_in(&ws, &["check", "bad.toml"]);
    let set = refused_in(&ws, &["check", "bad.toml", "--set", "clients.count=60"]);
    assert_eq!(set, plain);
    // Still the file's own when the setting changes a value its message quotes (base).
    let related = refused_in(
        &ws,
        &["check", "bad.toml", "--set", "strategy.1.base=200ms"],
    );
    assert!(
        related.contains("strategy[1].cap: expected cap >= base (200ms), found 1ms")
            && !related.contains("--set"),
        "{related}"
    );
    assert!(
        plain.contains("bad.toml:")
            && plain.contains("strategy[1].cap: expected cap >= base")
            && !plain.contains("--set"),
        "{plain}"
    );
}

/// Messages print keys with brackets (`server.outages[0].end`): copied into --set, that
/// spelling works as the dotted one does, and gives the same files.
#[test]
fn set_takes_the_bracket_spelling_of_messages_too() {
    let ws = tiny_workspace();
    let dotted = run_tiny(
        &ws,
        "dotted",
        &[
            "--set",
            "server.outages.0.end=2s",
            "--set",
            "strategy.1.jitter=equal",
        ],
    );
    let bracket = run_tiny(
        &ws,
        "bracket",
        &[
            "--set",
            "server.outages[0].end=2s",
            "--set",
            "strategy[1].jitter=equal",
        ],
    );
    let a = text(&fs::read(dotted.join("summary.csv")).unwrap());
    let b = text(&fs::read(bracket.join("summary.csv")).unwrap());
    assert_eq!(a, b);
    let plain = text(&fs::read(run_tiny(&ws, "plain", &[]).join("summary.csv")).unwrap());
    assert_ne!(a, plain, "the settings changed the run");
    // Messages name the flag as it was written.
    let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", "strategy[5].base=1s"]);
    assert!(
        stderr.contains("--set strategy[5].base=1s: `strategy` has 2 entries, found index 5"),
        "{stderr}"
    );
    // A bracket that is not an index is no path.
    let stderr = refused_in(
        &ws,
        &["check", "tiny.toml", "--set", "server.outages[x].end=1s"],
    );
    assert!(
        stderr.contains("no table `outages[x]` in the scenario to set"),
        "{stderr}"
    );
}

/// The same key set twice would have the last one win silently: refused, like other flags
/// that contradict each other, naming both (in either spelling).
#[test]
fn set_refuses_the_same_key_twice_naming_both() {
    let ws = tiny_workspace();
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "clients.count=5000",
            "--set",
            "clients.count=6000",
        ],
    );
    assert_eq!(
        stderr,
        "herdsim: error: --set clients.count=5000 and --set clients.count=6000 set the same key `clients.count`: give it once\n"
    );
    let stderr = refused_in(
        &ws,
        &[
            "run",
            "tiny.toml",
            "--out",
            "o",
            "--set",
            "server.outages.0.end=2s",
            "--set",
            "server.outages[0].end=3s",
        ],
    );
    assert!(
        stderr.contains(
            "--set server.outages.0.end=2s and --set server.outages[0].end=3s set the same key `server.outages.0.end`"
        ),
        "{stderr}"
    );
    assert!(!ws.path().join("o").exists(), "nothing written");
    // Indexes are numbers: `[00]` and `.0` are the same entry.
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "server.outages[00].end=2s",
            "--set",
            "server.outages.0.end=3s",
        ],
    );
    assert!(
        stderr.contains(
            "--set server.outages[00].end=2s and --set server.outages.0.end=3s set the same key `server.outages.0.end`"
        ),
        "{stderr}"
    );
    // `--seed` and `--replications` set a key too: with `--set` of the same key, the flag
    // silently won.
    for (flag, setting, expected) in [
        (
            ["--seed", "1"],
            "seed=3",
            "herdsim: error: --seed 1 and --set seed=3 set the same key `seed`: give it once\n",
        ),
        (
            ["--replications", "2"],
            "replications=3",
            "herdsim: error: --replications 2 and --set replications=3 set the same key `replications`: give it once\n",
        ),
    ] {
        let stderr = refused_in(
            &ws,
            &[
                &["run", "tiny.toml", "--out", "o", "--set", setting][..],
                &flag[..],
            ]
            .concat(),
        );
        assert_eq!(stderr, expected);
        assert!(!ws.path().join("o").exists(), "nothing written");
    }
}

/// `check` prints its line for every good file even when another file fails (errors on
/// stderr, exit 2).
#[test]
fn check_prints_the_ok_line_of_each_good_file_when_another_fails() {
    let ws = tiny_workspace();
    ws.file("bad.toml", &tiny_with("count = 50", "count = 0"));
    ws.file(
        "other.toml",
        &tiny_with("name = \"tiny\"", "name = \"other\""),
    );
    let out = run_in(&ws, &["check", "tiny.toml", "bad.toml", "other.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        "tiny.toml: ok (tiny: 50 clients, 2 strategies, 2 replications)\n\
         other.toml: ok (other: 50 clients, 2 strategies, 2 replications)\n"
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad.toml:"), "{stderr}");
    assert!(!stderr.contains("tiny.toml") && !stderr.contains("other.toml"));
}

#[test]
fn set_refuses_an_argument_without_a_value() {
    let ws = tiny_workspace();
    let stderr = refused_in(&ws, &["run", "tiny.toml", "--set", "clients.count"]);
    assert!(
        stderr.contains("--set") && stderr.contains("expected dotted.key=value"),
        "{stderr}"
    );
}

#[test]
fn set_refuses_a_swept_key() {
    let ws = Workspace::new();
    ws.file(
        "tiny.toml",
        &format!("{TINY}\n[sweep]\n\"clients.count\" = [10, 20]\n"),
    );
    let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", "clients.count=5"]);
    assert!(
        stderr.contains("--set clients.count=5: `clients.count` is swept by [sweep]"),
        "{stderr}"
    );
    // Whatever the spelling of its indexes: `[00]` names the swept `.0.`.
    ws.file(
        "tiny.toml",
        &format!("{TINY}\n[sweep]\n\"server.outages.0.end\" = [\"1s\", \"2s\"]\n"),
    );
    let stderr = refused_in(
        &ws,
        &["check", "tiny.toml", "--set", "server.outages[00].end=3s"],
    );
    assert!(
        stderr.contains(
            "--set server.outages[00].end=3s: `server.outages[00].end` is swept by [sweep]"
        ),
        "{stderr}"
    );
    // A value the file would refuse is refused as swept, alone: the sweep replaces it at
    // every point, so its problem never happens (a base above the cap was reported instead,
    // and the sweep only once the value was valid: helper-90).
    ws.file(
        "tiny.toml",
        &format!("{TINY}\n[sweep]\n\"strategy.0.base\" = [\"100ms\", \"200ms\"]\n"),
    );
    let stderr = refused_in(&ws, &["check", "tiny.toml", "--set", "strategy.0.base=1h"]);
    assert_eq!(
        crate::errors::problems(&stderr),
        [
            "herdsim: error: tiny.toml: --set strategy.0.base=1h: `strategy.0.base` is swept by [sweep], which would replace the value at every point: remove it from [sweep] to set it"
        ],
        "{stderr}"
    );
}

/// Problems elsewhere in the file keep their line although a set key added a line above.
#[test]
fn other_problems_keep_the_files_line_numbers_under_set() {
    let bad = tiny_with("jitter = \"full\"", "jitter = \"fulll\"");
    let line = bad
        .lines()
        .position(|l| l.contains("fulll"))
        .expect("the typo")
        + 1;
    let ws = Workspace::new();
    ws.file("tiny.toml", &bad);
    let plain = refused_in(&ws, &["check", "tiny.toml"]);
    assert!(plain.contains(&format!("tiny.toml:{line}:")), "{plain}");
    // Adds `think` under [clients] and `queue_timeout` under [server], both above the typo.
    let stderr = refused_in(
        &ws,
        &[
            "check",
            "tiny.toml",
            "--set",
            "clients.think={ dist = \"constant\", value = \"1s\" }",
            "--set",
            "server.queue_timeout=2s",
        ],
    );
    assert_eq!(problems(&stderr), problems(&plain), "{stderr}");
}

// ---- summary.json -----------------------------------------------------------------------

fn read_json(path: &Path) -> serde_json::Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn summary_json_has_the_csv_rows_and_what_produced_them() {
    let ws = tiny_workspace();
    let dir = run_tiny(&ws, "out", &[]);
    let json = read_json(&dir.join("summary.json"));
    assert_eq!(json["herdsim_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(json["scenario"], "tiny");
    assert_eq!(json["file"], "tiny.toml");
    assert_eq!(json["seed"], 7);
    assert_eq!(json["replications"], 2);
    assert_eq!(json["set"], serde_json::json!([]));
    let hash = json["scenario_hash"].as_str().expect("a hash");
    assert_eq!(hash, herdsim::scenario::scenario_hash(TINY, []));
    assert_eq!(hash.len(), 64);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));

    let (header, rows) = read_csv(&dir.join("summary.csv"));
    let columns: Vec<&str> = json["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns, header);
    let json_rows = json["rows"].as_array().expect("rows");
    assert_eq!(json_rows.len(), rows.len());
    for (row, object) in rows.iter().zip(json_rows) {
        let object = object.as_object().expect("a row object");
        let keys: Vec<&String> = object.keys().collect();
        assert_eq!(keys.len(), header.len());
        for (name, cell) in header.iter().zip(row) {
            let value = &object[name];
            match value {
                serde_json::Value::String(s) => assert_eq!(s, cell, "{name}"),
                serde_json::Value::Null => assert_eq!(cell, "", "{name}"),
                serde_json::Value::Number(n) => {
                    let x: f64 = cell.parse().unwrap();
                    assert!((n.as_f64().unwrap() - x).abs() <= 1e-12 * x.abs(), "{name}");
                }
                other => panic!("{name}: unexpected {other}"),
            }
        }
        assert!(object["strategy"].is_string());
        assert!(object["calls"].is_number());
    }
}

#[test]
fn summary_json_records_set_values_and_seed_and_hashes_the_text_after_set() {
    let ws = tiny_workspace();
    let dir = run_tiny(
        &ws,
        "out",
        &[
            "--set",
            "clients.count=20",
            "--seed",
            "9",
            "--replications",
            "1",
        ],
    );
    let json = read_json(&dir.join("summary.json"));
    assert_eq!(json["set"], serde_json::json!(["clients.count=20"]));
    assert_eq!(json["seed"], 9);
    assert_eq!(json["rows"][0]["seed"], 9);
    assert_eq!(json["rows"][0]["clients"], 20);
    let hash = json["scenario_hash"].as_str().unwrap();
    assert_ne!(hash, herdsim::scenario::scenario_hash(TINY, []));
    let again = run_tiny(&ws, "again", &["--set", "clients.count=20"]);
    assert_eq!(
        read_json(&again.join("summary.json"))["scenario_hash"],
        hash
    );
}

#[test]
fn summary_json_keeps_swept_values_as_written() {
    let ws = Workspace::new();
    ws.file(
        "tiny.toml",
        &format!("{TINY}\n[sweep]\n\"server.outages.0.end\" = [\"1s\", \"2s\"]\n"),
    );
    let dir = run_tiny(&ws, "out", &["--replications", "1"]);
    let json = read_json(&dir.join("summary.json"));
    assert_eq!(json["sweep"], serde_json::json!(["server.outages.0.end"]));
    assert_eq!(json["columns"][0], "server.outages.0.end");
    let points: Vec<&str> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["server.outages.0.end"].as_str().unwrap())
        .collect();
    assert_eq!(points, ["1s", "1s", "2s", "2s"]);
}

// ---- compare ----------------------------------------------------------------------------

/// The lines of a compare table for `strategy` and `metric`, split on runs of two spaces.
fn compare_row<'a>(table: &'a str, strategy: &str, metric: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.len() >= 2 && cells[0] == strategy && cells[1] == metric)
        .unwrap_or_else(|| panic!("no row {strategy} {metric} in\n{table}"))
}

#[test]
fn compare_shows_a_b_ratio_and_whether_the_cis_overlap() {
    let ws = tiny_workspace();
    run_tiny(&ws, "a", &[]);
    run_tiny(&ws, "b", &["--set", "clients.count=100"]);
    let out = ok(&ws, &["compare", "a/tiny", "b/tiny"]);
    let table = text(&out.stdout);
    assert!(
        table.starts_with("A: a/tiny/summary.json (tiny, seed 7, 2 replications, scenario hash "),
        "{table}"
    );
    assert!(
        table.contains("B/A") && table.contains("95% CIs"),
        "{table}"
    );
    for strategy in ["none", "full"] {
        for metric in herdsim::compare::DEFAULT_METRICS {
            compare_row(&table, strategy, metric);
        }
    }
    // Twice the clients: about twice the calls, far outside both intervals.
    let calls = compare_row(&table, "full", "calls");
    let ratio: f64 = calls[4].parse().unwrap();
    assert!((1.5..2.5).contains(&ratio), "{calls:?}");
    assert!(
        calls[5].starts_with("apart: B ") && calls[5].ends_with("x higher"),
        "{calls:?}"
    );
    let a: f64 = calls[2].split(" ± ").next().unwrap().parse().unwrap();
    let b: f64 = calls[3].split(" ± ").next().unwrap().parse().unwrap();
    assert!((b / a - ratio).abs() < 0.01, "{calls:?}");
    let succeeded = compare_row(&table, "none", "succeeded");
    assert_eq!(succeeded[5], "no CI", "{succeeded:?}");
    assert!(table.contains("note: the two runs used different scenario texts"));

    // A folder against itself: ratios of 1 and overlapping intervals.
    let out = ok(&ws, &["compare", "a/tiny", "a/tiny", "--metric", "calls"]);
    let table = text(&out.stdout);
    let calls = compare_row(&table, "none", "calls");
    assert_eq!(&calls[4..], ["1.000", "overlap"], "{table}");
    assert!(!table.contains("completion_s"), "{table}");
    assert!(!table.contains("note:"), "{table}");

    // Runs of different lengths: the header says each count and a note says they differ
    // (helper-98: nothing did, and the hash does not cover --replications).
    run_tiny(&ws, "c", &["--replications", "3"]);
    let out = ok(&ws, &["compare", "a/tiny", "c/tiny"]);
    let table = text(&out.stdout);
    assert!(
        table.contains("B: c/tiny/summary.json (tiny, seed 7, 3 replications, scenario hash "),
        "{table}"
    );
    assert!(
        table.ends_with("note: the two runs have different numbers of replications (2 and 3): their CIs differ in width for that alone\n"),
        "{table}"
    );
}

#[test]
fn compare_reads_summary_csv_when_there_is_no_summary_json() {
    let ws = tiny_workspace();
    run_tiny(&ws, "a", &[]);
    run_tiny(&ws, "b", &["--seed", "8"]);
    fs::remove_file(ws.path().join("a/tiny/summary.json")).unwrap();
    let out = ok(&ws, &["compare", "a/tiny", "b/tiny"]);
    let table = text(&out.stdout);
    assert!(
        table.starts_with("A: a/tiny/summary.csv (2 replications)\n"),
        "{table}"
    );
    assert!(
        table.contains("B: b/tiny/summary.json (tiny, seed 8, "),
        "{table}"
    );
    compare_row(&table, "full", "completion_s");
}

#[test]
fn compare_refuses_folders_that_are_not_outputs() {
    let ws = tiny_workspace();
    run_tiny(&ws, "a", &[]);
    let stderr = fails(&ws, &["compare", "a/tiny", "nosuch"], 2);
    assert!(
        stderr.contains("compare: nosuch: no such folder"),
        "{stderr}"
    );
    fs::create_dir(ws.path().join("empty")).unwrap();
    let stderr = fails(&ws, &["compare", "empty", "a/tiny"], 2);
    assert!(
        stderr.contains("compare: empty: no summary.json or summary.csv in this folder"),
        "{stderr}"
    );
    let stderr = fails(&ws, &["compare", "a/tiny", "tiny.toml"], 2);
    assert!(stderr.contains("expected an output folder"), "{stderr}");
    fs::create_dir(ws.path().join("junk")).unwrap();
    ws.file("junk/summary.csv", "a,b\n1,2\n");
    let stderr = fails(&ws, &["compare", "a/tiny", "junk"], 2);
    assert!(
        stderr.contains("junk/summary.csv: not a herdsim summary: no `strategy` column"),
        "{stderr}"
    );
    ws.file("junk/summary.json", "{ not json");
    let stderr = fails(&ws, &["compare", "a/tiny", "junk"], 2);
    assert!(
        stderr.contains("junk/summary.json: not a JSON file"),
        "{stderr}"
    );
    // Nothing in common.
    fs::remove_file(ws.path().join("junk/summary.json")).unwrap();
    ws.file("junk/summary.csv", "strategy,calls\nother,5\n");
    let stderr = fails(&ws, &["compare", "a/tiny", "junk"], 2);
    assert!(stderr.contains("have no strategy"), "{stderr}");
    let stderr = fails(&ws, &["compare", "a/tiny", "a/tiny", "--metric", "nope"], 2);
    assert!(
        stderr.contains("--metric nope: expected a numeric column of both summaries"),
        "{stderr}"
    );
    // A cell that is no number, or a strategy listed twice, is an altered summary: named
    // with its row (the column was skipped as non-numeric, "inf" and "NaN" were shown, and
    // the second row dropped: helper-90).
    for (body, said) in [
        (
            "full,abc\n",
            "row 2: calls: expected a number, found \"abc\"",
        ),
        (
            "full,1e400\n",
            "row 2: calls: expected a number, found \"1e400\"",
        ),
        (
            "full,NaN\n",
            "row 2: calls: expected a number, found \"NaN\"",
        ),
        (
            "full,5\nfull,6\n",
            "row 3: strategy `full` appears twice (also in row 2): expected one row per strategy and sweep point",
        ),
    ] {
        ws.file("junk/summary.csv", &format!("strategy,calls\n{body}"));
        let stderr = fails(&ws, &["compare", "a/tiny", "junk"], 2);
        assert!(
            stderr.contains(&format!("compare: junk/summary.csv: {said}")),
            "{stderr}"
        );
    }
    ws.file(
        "junk/summary.json",
        r#"{"columns": ["strategy", "calls"], "rows": [{"strategy": "full", "calls": "5"}]}"#,
    );
    let stderr = fails(&ws, &["compare", "a/tiny", "junk"], 2);
    assert!(
        stderr.contains("junk/summary.json: not a herdsim summary.json: row 0: calls: expected a number or null, found \"5\""),
        "{stderr}"
    );
}

#[test]
fn compare_fails_with_exit_1_when_a_summary_cannot_be_read() {
    let ws = tiny_workspace();
    run_tiny(&ws, "a", &[]);
    // A folder where the file should be: it exists and cannot be read as a file.
    fs::create_dir_all(ws.path().join("odd/summary.json")).unwrap();
    let stderr = fails(&ws, &["compare", "a/tiny", "odd"], 1);
    assert!(stderr.contains("cannot read odd/summary.json"), "{stderr}");
}

// ---- init -------------------------------------------------------------------------------

#[test]
fn init_writes_a_commented_scenario_that_check_and_run_accept() {
    let ws = Workspace::new();
    let out = ok(&ws, &["init"]);
    assert!(text(&out.stdout).contains("wrote scenario.toml"));
    let written = fs::read_to_string(ws.path().join("scenario.toml")).unwrap();
    assert!(written.starts_with("# A herdsim scenario"), "{written}");
    assert!(
        written
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .count()
            > 20
    );
    assert!(written.contains("name = \"scenario\""));
    let out = ok(&ws, &["check", "scenario.toml"]);
    assert!(
        text(&out.stdout).starts_with("scenario.toml: ok (scenario: 2000 clients, 3 strategies"),
        "{}",
        text(&out.stdout)
    );
    // Its name comes from the file's name; it runs. The commands it suggests quote a path
    // the shell would split.
    let out = ok(&ws, &["init", "Checkout API.toml"]);
    assert_eq!(
        text(&out.stdout),
        "wrote Checkout API.toml: a commented scenario to edit; then `herdsim check 'Checkout API.toml'` and `herdsim run 'Checkout API.toml'`\n"
    );
    let written = fs::read_to_string(ws.path().join("Checkout API.toml")).unwrap();
    assert!(written.contains("name = \"checkout-api\""), "{written}");
    ok(
        &ws,
        &[
            "run",
            "Checkout API.toml",
            "--replications",
            "1",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
        ],
    );
    assert!(ws.path().join("out/checkout-api/summary.json").is_file());
    // It shows the herd a newcomer came for: with its own 3 replications, the strategy
    // without jitter loses requests that both jittered ones save, and ranks last.
    let out = ok(
        &ws,
        &["run", "scenario.toml", "--out", "out", "--no-charts"],
    );
    let verdict = text(&out.stdout);
    let rank = |s: &str| verdict.find(&format!(".  {s} ")).expect(s);
    assert!(
        rank("no-jitter") > rank("full") && rank("no-jitter") > rank("equal"),
        "{verdict}"
    );
    let summary = fs::read_to_string(ws.path().join("out/scenario/summary.csv")).unwrap();
    let succeeded = |s: &str| -> f64 {
        let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
        let column = header.iter().position(|c| *c == "succeeded").unwrap();
        let row = summary
            .lines()
            .find(|l| l.starts_with(&format!("{s},")))
            .expect(s);
        row.split(',').nth(column).unwrap().parse().unwrap()
    };
    assert!(
        succeeded("no-jitter") < 0.8 * succeeded("full"),
        "{summary}"
    );
    assert_eq!(succeeded("equal"), 2000.0, "{summary}");
}

#[test]
fn init_never_overwrites_a_file() {
    let ws = Workspace::new();
    ws.file("mine.toml", "precious");
    let stderr = fails(&ws, &["init", "mine.toml"], 2);
    assert!(
        stderr.contains("init: mine.toml already exists; herdsim init never overwrites a file"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("mine.toml")).unwrap(),
        "precious"
    );
    ok(&ws, &["init"]);
    let stderr = fails(&ws, &["init"], 2);
    assert!(stderr.contains("scenario.toml already exists"), "{stderr}");
    // A folder that does not exist is an argument naming nothing (exit 2, as `--help`
    // says), not a failure to write.
    let stderr = fails(&ws, &["init", "no/such/dir.toml"], 2);
    assert!(
        stderr.contains(
            "init: the folder no/such does not exist: create it first (mkdir -p no/such)"
        ),
        "{stderr}"
    );
    assert!(!ws.path().join("no").exists());
}

/// `--no-charts` with a chart flag is a contradiction: refused before anything runs.
#[test]
fn no_charts_refuses_chart_flags() {
    let ws = Workspace::new();
    ws.file("tiny.toml", crate::common::TINY);
    for (flag, shown) in [
        (&["--format", "png"][..], "'--format <FORMAT>'"),
        (&["--log-y"][..], "'--log-y'"),
    ] {
        let mut args = vec!["run", "tiny.toml", "--no-charts", "--out", "o"];
        args.extend(flag);
        let stderr = fails(&ws, &args, 2);
        assert!(
            stderr.contains(&format!(
                "the argument '--no-charts' cannot be used with {shown}"
            )),
            "{stderr}"
        );
        assert!(!ws.path().join("o").exists());
    }
}

#[test]
fn init_dash_prints_the_scenario() {
    let ws = Workspace::new();
    let out = ok(&ws, &["init", "-"]);
    let printed = text(&out.stdout);
    assert!(printed.contains("name = \"scenario\""));
    herdsim::scenario::sweep::load_str("starter.toml", &printed).expect("valid");
    assert_eq!(fs::read_dir(ws.path()).unwrap().count(), 0);
}

// ---- completions and man ----------------------------------------------------------------

#[test]
fn completions_for_every_shell_name_the_commands() {
    let ws = Workspace::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = ok(&ws, &["completions", shell]);
        let script = text(&out.stdout);
        assert!(script.len() > 1000, "{shell}: {script}");
        for word in ["herdsim", "compare", "set", "attempts", "log-y"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let stderr = fails(&ws, &["completions", "tcsh"], 2);
    assert!(stderr.contains("tcsh"), "{stderr}");
}

#[test]
fn man_prints_roff_pages() {
    let ws = Workspace::new();
    let page = text(&ok(&ws, &["man"]).stdout);
    assert!(page.contains(".TH herdsim 1"), "{page}");
    assert!(
        page.contains(".SH SUBCOMMANDS") || page.contains("compare"),
        "{page}"
    );
    let page = text(&ok(&ws, &["man", "run"]).stdout);
    assert!(page.contains(".TH herdsim-run 1"), "{page}");
    assert!(page.contains("\\-\\-set"), "{page}");
    let stderr = fails(&ws, &["man", "nosuch"], 2);
    assert!(
        stderr.contains("man: expected one of run, check"),
        "{stderr}"
    );
}

// ---- --attempts -------------------------------------------------------------------------

#[test]
fn attempts_csv_holds_every_attempt_of_the_sample_consistent_with_requests_csv() {
    let ws = tiny_workspace();
    let dir = run_tiny(&ws, "out", &["--attempts", "--requests"]);
    let (header, rows) = read_csv(&dir.join("attempts.csv"));
    assert_eq!(
        header.join(","),
        "strategy,replication,client,request,attempt,sent_s,outcome,population"
    );
    let (rheader, requests) = read_csv(&dir.join("requests.csv"));
    // (strategy, replication, population, client, request) -> attempt numbers, send times
    type Key = (String, String, String, String, String);
    let mut sampled: std::collections::BTreeMap<Key, Vec<(u32, f64)>> = Default::default();
    for r in &rows {
        assert!(
            ["served", "rejected", "shed", "timed_out"].contains(&r[6].as_str()),
            "{r:?}"
        );
        sampled
            .entry((
                r[0].clone(),
                r[1].clone(),
                r[7].clone(),
                r[2].clone(),
                r[3].clone(),
            ))
            .or_default()
            .push((r[4].parse().unwrap(), r[5].parse().unwrap()));
    }
    // TINY has 50 clients, under the sample size: every request of every replication.
    assert_eq!(sampled.len(), requests.len());
    let replications: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(replications.into_iter().collect::<Vec<_>>(), ["0", "1"]);
    let c = |n: &str| column(&rheader, n);
    for q in &requests {
        let key = (
            q[c("strategy")].clone(),
            q[c("replication")].clone(),
            q[c("population")].clone(),
            q[c("client")].clone(),
            q[c("request")].clone(),
        );
        let mut attempts = sampled
            .remove(&key)
            .unwrap_or_else(|| panic!("no attempts for {key:?}"));
        attempts.sort_by_key(|a| a.0);
        let n: u32 = q[c("attempts")].parse().unwrap();
        let numbers: Vec<u32> = attempts.iter().map(|a| a.0).collect();
        assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "{key:?}");
        assert!(
            attempts.windows(2).all(|w| w[0].1 <= w[1].1),
            "send times in attempt order: {attempts:?}"
        );
    }
}

/// The sample holds at most 2 000 requests per run also when an open population's Poisson
/// arrivals outrun the count its stride was chosen from: 400 req/s for 10 s is 4 000
/// expected, every 2nd arrival; with this seed both replications see more (the sample held
/// 2 013 and 2 026 requests), and the sample stops at 2 000.
#[test]
fn an_open_populations_sample_stops_at_its_share() {
    let ws = Workspace::new();
    ws.file(
        "open.toml",
        r#"name = "open"
seed = 5
replications = 2
[clients]
rate = 400
end = "10s"
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 100
service = { dist = "constant", value = "1ms" }
[retry]
max_attempts = 2
[[strategy]]
name = "a"
base = "10ms"
cap = "10ms"
"#,
    );
    ok(
        &ws,
        &[
            "run",
            "open.toml",
            "--out",
            "out",
            "--no-charts",
            "--quiet",
            "--attempts",
            "--requests",
        ],
    );
    let (header, rows) = read_csv(&ws.path().join("out/open/attempts.csv"));
    let (rheader, requests) = read_csv(&ws.path().join("out/open/requests.csv"));
    for replication in ["0", "1"] {
        let arrivals = requests
            .iter()
            .filter(|r| r[column(&rheader, "replication")] == replication)
            .count();
        assert!(arrivals > 4000, "the premise: {arrivals} arrivals");
        let sampled: std::collections::BTreeSet<&str> = rows
            .iter()
            .filter(|r| r[column(&header, "replication")] == replication)
            .map(|r| r[column(&header, "request")].as_str())
            .collect();
        assert_eq!(sampled.len(), 2000, "replication {replication}");
    }
}

#[test]
fn no_attempts_csv_without_the_flag() {
    let ws = tiny_workspace();
    let dir = run_tiny(&ws, "out", &[]);
    assert!(!dir.join("attempts.csv").exists());
    assert!(dir.join("summary.json").is_file());
}

/// The sample records at most `ATTEMPT_SAMPLE_MAX` attempts per run: 2 000 sampled clients
/// retrying 100 times against a server that is always down would make 200 000.
#[test]
fn the_attempt_sample_stops_at_its_bound() {
    let ws = Workspace::new();
    ws.file(
        "down.toml",
        r#"name = "down"
seed = 1
replications = 1
[clients]
count = 2000
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 1
service = { dist = "constant", value = "1ms" }
[[server.outages]]
start = "0s"
end = "1h"
[retry]
max_attempts = 100
[[strategy]]
name = "fixed"
base = "10ms"
cap = "10ms"
jitter = "none"
"#,
    );
    let out = herdsim()
        .current_dir(ws.path())
        .args([
            "run",
            "down.toml",
            "--out",
            "out",
            "--quiet",
            "--no-charts",
            "--attempts",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(ws.path().join("out/down/attempts.csv")).unwrap();
    assert_eq!(
        csv.lines().count() - 1,
        herdsim::engine::ATTEMPT_SAMPLE_MAX,
        "rows of attempts.csv"
    );
    let summary = std::fs::read_to_string(ws.path().join("out/down/summary.csv")).unwrap();
    assert!(
        summary.contains(",200000,"),
        "every attempt still counts: {summary}"
    );
}

// ---- progress ---------------------------------------------------------------------------

/// On a terminal the bar shows runs and events; `script` gives the run a terminal.
#[test]
fn the_progress_bar_counts_runs_and_events_on_a_terminal() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` command to give herdsim a terminal");
        return;
    }
    let ws = tiny_workspace();
    let bin = assert_cmd::cargo::cargo_bin!("herdsim");
    let command = format!(
        "{} run tiny.toml --out out --no-charts --threads 1 --replications 1 --set clients.count=100000",
        bin.display()
    );
    let out = std::process::Command::new("script")
        .current_dir(ws.path())
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("run script");
    let screen = text(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(screen.contains("tiny ["), "no bar on a terminal:\n{screen}");
    assert!(screen.contains("/2 runs, "), "{screen}");
    assert!(
        screen.contains(" k events") || screen.contains(" M events"),
        "{screen}"
    );
    // Not on a pipe, nor with --quiet.
    let out = ok(&ws, &["run", "tiny.toml", "--out", "out2", "--no-charts"]);
    assert!(
        !text(&out.stderr).contains("/4 runs"),
        "{}",
        text(&out.stderr)
    );
}
