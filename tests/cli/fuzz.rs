//! Structured fuzzing of scenario validation (issue 13): mutations of the shipped scenarios
//! (deleted keys, swapped value types, swapped units, extreme numbers, unicode, truncation)
//! must never panic, and through the binary must end with exit 0 or 2 only, writing nothing
//! on a refusal. Thousands of cases in-process, a few dozen end to end; `fuzz/` has the
//! cargo-fuzz target for long local runs.

use std::path::Path;
use std::process::Stdio;

use proptest::prelude::*;

use crate::common::{self, Workspace};

/// Every scenario shipped in `scenarios/`, in name order.
fn shipped() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Values that replace a value: other types, other units, extremes, unicode.
const VALUES: &[&str] = &[
    "\"10ms\"",
    "\"0s\"",
    "\"1ns\"",
    "\"5h\"",
    "\"10\"",
    "\"-1s\"",
    "\"1e300s\"",
    "\"none\"",
    "\"auto\"",
    "\"\u{202e}\u{1b}[2J\"",
    "\"é\u{0}\"",
    "0",
    "-1",
    "1",
    "65535",
    "65536",
    "50000001",
    "9223372036854775807",
    "99999999999999999999",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "0.5",
    "true",
    "[]",
    "[1, \"2s\"]",
    "{}",
    "{ dist = \"constant\", value = \"0s\" }",
    "{ dist = \"lognormal\", median = \"1ns\", sigma = 1e300 }",
    "{ proportional = 2 }",
];

/// Unit swaps inside a duration string.
const UNITS: &[(&str, &str)] = &[
    ("ms\"", "s\""),
    ("s\"", "ns\""),
    ("ms\"", "h\""),
    ("s\"", "\""),
    ("ms\"", "parsecs\""),
];

/// One mutation: what to do, where (an index reduced modulo the candidates) and with what.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    ReplaceValue(usize, usize),
    SwapUnit(usize, usize),
    InsertUnicode(usize, usize),
    Truncate(usize),
    DuplicateLine(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => any::<usize>().prop_map(Mutation::DeleteLine),
        5 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::ReplaceValue(a, b)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapUnit(a, b)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::InsertUnicode(a, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
    ]
}

/// Applies `m` to `text`. Lines with `key = value` are the targets of value mutations.
fn apply(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let assignments: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with('#') && l.contains(" = "))
        .map(|(i, _)| i)
        .collect();
    let join = |lines: Vec<String>| lines.join("\n") + "\n";
    let owned = || lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    match *m {
        Mutation::DeleteLine(i) if !assignments.is_empty() => {
            let mut l = owned();
            l.remove(assignments[i % assignments.len()]);
            join(l)
        }
        Mutation::ReplaceValue(i, v) if !assignments.is_empty() => {
            let mut l = owned();
            let at = assignments[i % assignments.len()];
            let key = l[at].split(" = ").next().unwrap().to_string();
            l[at] = format!("{key} = {}", VALUES[v % VALUES.len()]);
            join(l)
        }
        Mutation::SwapUnit(i, u) => {
            let (from, to) = UNITS[u % UNITS.len()];
            let hits: Vec<usize> = text.match_indices(from).map(|(p, _)| p).collect();
            if hits.is_empty() {
                return text.to_string();
            }
            let at = hits[i % hits.len()];
            format!("{}{to}{}", &text[..at], &text[at + from.len()..])
        }
        Mutation::InsertUnicode(i, c) => {
            let inserts = [
                "\u{202e}",
                "é",
                "\u{1b}[31m",
                "\u{0}",
                "\u{feff}",
                "😀",
                "\r",
            ];
            let at = floor_boundary(text, i % (text.len() + 1));
            format!(
                "{}{}{}",
                &text[..at],
                inserts[c % inserts.len()],
                &text[at..]
            )
        }
        Mutation::Truncate(i) => text[..floor_boundary(text, i % (text.len() + 1))].to_string(),
        Mutation::DuplicateLine(i) if !assignments.is_empty() => {
            let mut l = owned();
            let at = assignments[i % assignments.len()];
            let line = l[at].clone();
            l.insert(at, line);
            join(l)
        }
        _ => text.to_string(),
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Validation of a mutated text: no panic; an accepted file can be estimated, a refused one
/// printed.
fn validate_without_panic(name: &str, text: &str) -> Result<(), String> {
    let result =
        std::panic::catch_unwind(|| match herdsim::scenario::sweep::load_str(name, text) {
            Ok(file) => {
                let e = herdsim::limits::estimate(&file, 2, true, Some(true));
                assert!(e.total >= herdsim::limits::BASE_BYTES);
                assert!(e.runs >= 1 && e.runs <= herdsim::limits::MAX_RUNS);
            }
            Err(errors) => {
                let shown = errors.to_string();
                assert!(!shown.is_empty());
                assert!(
                    shown
                        .lines()
                        .all(|l| !l.chars().any(herdsim::text::is_unsafe))
                );
            }
        });
    result.map_err(|_| format!("panic on:\n{text}"))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Thousands of mutated shipped scenarios: validation never panics.
    #[test]
    fn mutated_scenarios_never_panic(
        file in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let files = shipped();
        let (name, text) = &files[file % files.len()];
        let mut text = text.clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        prop_assert!(validate_without_panic(name, &text).is_ok(), "panic on {name} after {mutations:?}");
    }
}

/// Runs `herdsim` with `args` in `ws`; `None` when it outlived its time budget (killed:
/// a mutated scenario may legitimately take long, and that is not what this test checks).
fn run_with_budget(ws: &Workspace, args: &[&str]) -> Option<(Option<i32>, String)> {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .current_dir(ws.path())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            return Some((status.code(), stderr));
        }
        if started.elapsed().as_secs() >= 20 {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 40,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Mutations of a small scenario, end to end: `check` and `run` end with 0 or 2 only,
    /// and a refused run writes nothing.
    #[test]
    fn mutated_scenarios_exit_0_or_2_and_write_nothing_on_refusal(
        mutations in proptest::collection::vec(mutation(), 1..3),
    ) {
        let mut text = common::TINY.to_string();
        for m in &mutations {
            text = apply(&text, m);
        }
        let ws = Workspace::new();
        std::fs::write(ws.path().join("m.toml"), &text).unwrap();
        if let Some((code, stderr)) = run_with_budget(&ws, &["check", "m.toml"]) {
            prop_assert!(matches!(code, Some(0) | Some(2)), "check: {code:?}\n{stderr}\n{text}");
        }
        let run = [
            "run", "m.toml", "--out", "out", "--no-charts", "--quiet", "--threads", "1",
            "--max-memory", "64MB",
        ];
        if let Some((code, stderr)) = run_with_budget(&ws, &run) {
            prop_assert!(matches!(code, Some(0) | Some(2)), "run: {code:?}\n{stderr}\n{text}");
            if code == Some(2) {
                prop_assert!(!ws.path().join("out").exists(), "refused but wrote:\n{text}");
            }
            prop_assert!(!stderr.contains('\u{1b}'), "raw escape echoed:\n{stderr}");
        }
    }
}
