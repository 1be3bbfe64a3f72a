//! Sharded runs: any shard count and thread count, merged, give byte for byte the files of
//! the unsharded run; missing, foreign, renamed or altered shards are refused.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{Workspace, herdsim, tiny_with};

/// A small sweep: 2 points x 2 strategies x 3 replications = 12 jobs, an open and a closed
/// population (so common random numbers, paired.csv and populations.csv are exercised).
fn sweep() -> String {
    tiny_with("replications = 2", "replications = 3")
        .replace(
            "[clients]\ncount = 50",
            "[[clients]]\nname = \"herd\"\ncount = 50\n[[clients]]\nname = \"web\"\nrate = 40\nend = \"2s\"",
        )
        + "\n[sweep]\n\"server.concurrency\" = [2, 5]\n"
}

/// Every file under `dir` except the shard folders, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() {
            out.insert(name, fs::read(entry.path()).unwrap());
        }
    }
    out
}

fn run(ws: &Workspace, out: &str, extra: &[&str]) {
    let status = herdsim()
        .current_dir(ws.path())
        .args(["run", "sweep.toml", "--quiet", "--out", out])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

fn merge(ws: &Workspace, dir: &str, extra: &[&str]) -> std::process::Output {
    herdsim()
        .current_dir(ws.path())
        .args(["merge", dir, "--quiet"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn merged_shards_equal_the_unsharded_run_for_any_shard_and_thread_count() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "whole", &["--no-charts", "--requests"]);
    let whole = files(&ws.path().join("whole/tiny"));
    assert!(whole.contains_key("paired.csv") && whole.contains_key("requests.csv"));
    for n in [1u32, 2, 3, 7] {
        let out = format!("sharded{n}");
        for i in 0..n {
            let threads = if i % 2 == 0 { "1" } else { "2" };
            run(
                &ws,
                &out,
                &[
                    "--no-charts",
                    "--requests",
                    "--threads",
                    threads,
                    "--shard",
                    &format!("{i}/{n}"),
                ],
            );
        }
        let dir = format!("{out}/tiny");
        let merged = merge(&ws, &dir, &["--no-charts"]);
        assert!(
            merged.status.success(),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
        assert_eq!(files(&ws.path().join(&dir)), whole, "{n} shards");
        // Merging again (the shards were kept) gives the same files.
        assert!(merge(&ws, &dir, &["--no-charts"]).status.success());
        assert_eq!(
            files(&ws.path().join(&dir)),
            whole,
            "{n} shards, merged twice"
        );
    }
}

/// `--out` naming the folder the shards were run into (so `OUT/<name>` is the shards'
/// folder), and the shards' folder named `.` from inside it, both merge in place: the
/// shards are kept and merging again gives the same files. The first deleted every shard.
#[test]
fn merging_into_the_shards_own_folder_keeps_the_shards() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "whole", &["--no-charts"]);
    let whole = files(&ws.path().join("whole/tiny"));
    for i in 0..2 {
        run(
            &ws,
            "results",
            &["--no-charts", "--shard", &format!("{i}/2")],
        );
    }
    let shards = |ws: &Workspace| {
        let mut names: Vec<String> = fs::read_dir(ws.path().join("results/tiny"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("shard-"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(shards(&ws), ["shard-0-of-2", "shard-1-of-2"]);
    // A merge succeeded, kept both shards and wrote the unsharded run's files.
    let merged_in_place = |merged: std::process::Output| {
        assert!(
            merged.status.success(),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
        assert_eq!(shards(&ws), ["shard-0-of-2", "shard-1-of-2"]);
        assert_eq!(files(&ws.path().join("results/tiny")), whole);
    };
    merged_in_place(merge(
        &ws,
        "results/tiny",
        &["--no-charts", "--out", "results"],
    ));
    merged_in_place(
        herdsim()
            .current_dir(ws.path().join("results/tiny"))
            .args(["merge", ".", "--quiet", "--no-charts"])
            .output()
            .unwrap(),
    );
    // Shards deeper inside `OUT/<name>` (run with `--out nest/tiny`): replacing that folder
    // would delete them, so the merge is refused and nothing changes.
    for i in 0..2 {
        run(
            &ws,
            "nest/tiny",
            &["--no-charts", "--shard", &format!("{i}/2")],
        );
    }
    let refused = merge(&ws, "nest/tiny/tiny", &["--no-charts", "--out", "nest"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "herdsim: error: merge: --out nest would replace nest/tiny, which holds the shards in nest/tiny/tiny: give another --out, or none to merge in place\n"
    );
    assert!(
        ws.path()
            .join("nest/tiny/tiny/shard-1-of-2/partial.json")
            .is_file()
    );
    // Into a shard's own folder: the merged run would sit among that shard's files
    // (helper-98: it did, exit 0).
    let refused = merge(
        &ws,
        "results/tiny",
        &["--no-charts", "--out", "results/tiny/shard-0-of-2"],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "herdsim: error: merge: --out results/tiny/shard-0-of-2 lies inside the shard folder results/tiny/shard-0-of-2: give another --out, or none to merge in place\n"
    );
    assert!(!ws.path().join("results/tiny/shard-0-of-2/tiny").exists());
    // Or a folder inside it still to be made (helper-99: only an existing one was refused).
    let refused = merge(
        &ws,
        "results/tiny",
        &[
            "--no-charts",
            "--out",
            "results/tiny/shard-0-of-2/new/deeper",
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "herdsim: error: merge: --out results/tiny/shard-0-of-2/new/deeper lies inside the shard folder results/tiny/shard-0-of-2: give another --out, or none to merge in place\n"
    );
    assert!(!ws.path().join("results/tiny/shard-0-of-2/new").exists());
}

/// Runs the time limit cut short are reported as `run` reports them: by each shard (of its
/// own runs) and by `merge` (of all), on stderr, even with `--quiet`. Neither said a word.
#[test]
fn shards_and_merge_warn_of_runs_the_time_limit_cut() {
    let ws = Workspace::new();
    // The outage lasts 1 s: every one of the 12 runs is cut at 500 ms.
    ws.file(
        "sweep.toml",
        &sweep().replace("seed = 7", "seed = 7\ntime_limit = \"500ms\""),
    );
    // The line about the time limit (the scenario's own warning about its outage aside).
    let cut = |out: std::process::Output| {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
            .lines()
            .filter(|l| l.starts_with("warning: tiny: time_limit"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let run = |extra: &[&str]| {
        herdsim()
            .current_dir(ws.path())
            .args(["run", "sweep.toml", "--quiet", "--no-charts"])
            .args(extra)
            .output()
            .unwrap()
    };
    let expected = "warning: tiny: time_limit (500ms) cut 12 of 12 runs short; their client requests open (or not yet started) at the limit count as gave_up (time_limit)";
    assert_eq!(cut(run(&["--out", "whole"])), expected);
    for i in 0..2 {
        let shard = run(&["--out", "sharded", "--shard", &format!("{i}/2")]);
        assert_eq!(cut(shard), expected.replace("12 of 12", "6 of 6"));
    }
    assert_eq!(cut(merge(&ws, "sharded/tiny", &["--no-charts"])), expected);
}

/// A file where a sharded run's `<out>/<name>` folder goes is said to be one, as `run` says
/// of a file where its output folder goes (exit 1); it was the system's "File exists".
#[test]
fn a_file_where_the_shards_folder_goes_is_named() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    fs::create_dir(ws.path().join("out")).unwrap();
    ws.file("out/tiny", "not a folder");
    let out = herdsim()
        .current_dir(ws.path())
        .args([
            "run",
            "sweep.toml",
            "--quiet",
            "--no-charts",
            "--out",
            "out",
            "--shard",
            "0/2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "herdsim: error: cannot create folder out/tiny: it exists and is not a folder (a file)\n"
    );
}

/// A sweep may vary the replications (or the seed) per point: merge keeps each point's,
/// and applies `--seed`/`--replications` to every point only when they were given (over a
/// key the file does not sweep: over a swept one `run` refuses them).
#[test]
fn a_sweep_over_replications_and_seed_merges_into_the_unsharded_files() {
    let ws = Workspace::new();
    let cases: [(&str, &[&str]); 3] = [
        ("\"replications\" = [1, 3]\n\"seed\" = [4, 9]", &[]),
        ("\"replications\" = [1, 3]", &["--seed", "11"]),
        ("\"seed\" = [4, 9]", &["--replications", "2"]),
    ];
    for (swept, extra) in cases {
        ws.file(
            "sweep.toml",
            &sweep().replace(
                "\"server.concurrency\" = [2, 5]",
                &format!("\"server.concurrency\" = [2, 5]\n{swept}"),
            ),
        );
        let label = extra.join("");
        let whole = format!("whole{label}");
        run(&ws, &whole, &[&["--no-charts"][..], extra].concat());
        let sharded = format!("sharded{label}");
        for i in 0..3 {
            let shard = format!("{i}/3");
            run(
                &ws,
                &sharded,
                &[&["--no-charts", "--shard", shard.as_str()][..], extra].concat(),
            );
        }
        let dir = format!("{sharded}/tiny");
        let merged = merge(&ws, &dir, &["--no-charts"]);
        assert!(
            merged.status.success(),
            "{label}: {}",
            String::from_utf8_lossy(&merged.stderr)
        );
        assert_eq!(
            files(&ws.path().join(&dir)),
            files(&ws.path().join(format!("{whole}/tiny"))),
            "{label}"
        );
    }
}

/// A manifest of an earlier version has no `flags` (it applied its seed and replications
/// to every point): over a file that sweeps `seed`, merge keeps each point's seed, and gives
/// the unsharded files, instead of refusing a `--seed` nobody gave.
#[test]
fn a_manifest_without_flags_merges_a_swept_seed() {
    let ws = Workspace::new();
    ws.file(
        "sweep.toml",
        &sweep().replace(
            "\"server.concurrency\" = [2, 5]",
            "\"server.concurrency\" = [2, 5]\n\"seed\" = [4, 9]",
        ),
    );
    run(&ws, "whole", &["--no-charts"]);
    for i in 0..2 {
        let shard = format!("{i}/2");
        run(&ws, "sharded", &["--no-charts", "--shard", shard.as_str()]);
        let manifest = ws
            .path()
            .join(format!("sharded/tiny/shard-{i}-of-2/manifest.json"));
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
        assert!(doc.as_object_mut().unwrap().remove("flags").is_some());
        fs::write(&manifest, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    let merged = merge(&ws, "sharded/tiny", &["--no-charts"]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(
        files(&ws.path().join("sharded/tiny")),
        files(&ws.path().join("whole/tiny"))
    );
}

#[test]
fn merged_charts_and_report_equal_the_unsharded_ones() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "whole", &["--format", "svg"]);
    // Shards run without charts still carry the first replication's attempt sample, so the
    // merge draws the same raster chart.
    for i in 0..2 {
        run(&ws, "parts", &["--no-charts", "--shard", &format!("{i}/2")]);
    }
    let merged = merge(&ws, "parts/tiny", &["--format", "svg", "--out", "merged"]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let whole = files(&ws.path().join("whole/tiny"));
    assert!(whole.contains_key("raster.svg"), "{:?}", whole.keys());
    assert_eq!(files(&ws.path().join("merged/tiny")), whole);
}

#[test]
fn a_missing_shard_is_refused_by_name() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--shard", "0/3"]);
    run(&ws, "out", &["--no-charts", "--shard", "2/3"]);
    let m = merge(&ws, "out/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(
        stderr.contains("lacks 1 of 3 shards: shard-1-of-3"),
        "{stderr}"
    );
    assert!(!ws.path().join("out/tiny/summary.csv").exists());
    // Of many missing shards, the first 20 are named and the rest counted (one shard of a
    // million merged early printed a 25 MB line).
    run(&ws, "many", &["--no-charts", "--shard", "0/30"]);
    let m = merge(&ws, "many/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let named: Vec<String> = (1..21).map(|i| format!("shard-{i}-of-30")).collect();
    assert_eq!(
        String::from_utf8_lossy(&m.stderr),
        format!(
            "herdsim: error: merge: many/tiny lacks 29 of 30 shards: {} and 9 more (run them, then merge again)\n",
            named.join(", ")
        )
    );
    // A shard count far above the plan's jobs is counted, not listed: merging one shard of
    // a billion took 24 GB before it could say so (helper-102).
    run(&ws, "billion", &["--no-charts", "--shard", "3/1000000000"]);
    let m = merge(&ws, "billion/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let named: Vec<String> = (0..21)
        .filter(|&i| i != 3)
        .map(|i| format!("shard-{i}-of-1000000000"))
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&m.stderr),
        format!(
            "herdsim: error: merge: billion/tiny lacks 999999999 of 1000000000 shards: {} and 999999979 more (run them, then merge again)
",
            named.join(", ")
        )
    );
}

/// A shard of another scenario put among a run's shards is named as such, not by the seed
/// or the text in which the two scenarios also differ.
#[test]
fn a_shard_of_another_scenario_is_refused_by_its_name() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--shard", "0/2"]);
    ws.file(
        "sweep.toml",
        &sweep()
            .replace("name = \"tiny\"", "name = \"other\"")
            .replace("seed = 7", "seed = 8"),
    );
    run(&ws, "out", &["--no-charts", "--shard", "1/2"]);
    fs::rename(
        ws.path().join("out/other/shard-1-of-2"),
        ws.path().join("out/tiny/shard-1-of-2"),
    )
    .unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(
        stderr.contains(
            "is a shard of another run than out/tiny/shard-0-of-2 (scenario: other vs tiny)"
        ),
        "{stderr}"
    );
}

/// A folder named like a shard but without a manifest (a shard still running, or one that
/// failed) is bad input, exit 2, with the folder named; before, it was an I/O error, exit 1.
#[test]
fn a_shard_folder_without_a_manifest_is_refused() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--shard", "0/2"]);
    run(&ws, "out", &["--no-charts", "--shard", "1/2"]);
    std::fs::create_dir_all(ws.path().join("out/tiny/shard-1-of-3")).unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(
        stderr.contains("shard-1-of-3: holds no manifest.json: not a finished shard"),
        "{stderr}"
    );
    assert!(!ws.path().join("out/tiny/summary.csv").exists());
    // A folder named like a shard that cannot exist is not asked to be run again.
    std::fs::remove_dir(ws.path().join("out/tiny/shard-1-of-3")).unwrap();
    for stray in ["shard-5-of-x", "shard-5-of-3"] {
        std::fs::create_dir_all(ws.path().join("out/tiny").join(stray)).unwrap();
        let m = merge(&ws, "out/tiny", &[]);
        assert_eq!(m.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert!(
            stderr.contains(&format!(
                "{stray}: is named like a shard folder but is none (shard-i-of-n, i from 0 to n - 1): remove or rename it"
            )),
            "{stderr}"
        );
        std::fs::remove_dir(ws.path().join("out/tiny").join(stray)).unwrap();
    }
    // A manifest cut short is said to be so, not in the JSON reader's words.
    let manifest = ws.path().join("out/tiny/shard-0-of-2/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, &text[..text.len() / 2]).unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(
        stderr.contains("manifest.json is not a herdsim shard manifest (it ends early, at line "),
        "{stderr}"
    );
}

/// A folder that is not there (or is a file) is a bad argument, exit 2, as a missing
/// scenario file is for `run`.
#[test]
fn merging_a_folder_that_is_not_there_is_a_bad_argument() {
    let ws = Workspace::new();
    ws.file("a-file", "x");
    for (dir, found) in [
        ("nowhere", "found nothing there"),
        ("a-file", "found a file"),
    ] {
        let m = merge(&ws, dir, &[]);
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert_eq!(m.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "merge: {dir}: expected a folder of shard-i-of-n folders, {found}"
            )),
            "{stderr}"
        );
    }
}

/// The merge reads every partial result into memory: above `--max-memory` it refuses
/// before reading any (exit 2, the estimate and the limit), and writes nothing.
#[test]
fn a_merge_beyond_the_memory_limit_is_refused_with_its_estimate() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    for i in 0..2 {
        run(&ws, "out", &["--no-charts", "--shard", &format!("{i}/2")]);
    }
    let m = merge(&ws, "out/tiny", &["--max-memory", "1MB"]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(
        stderr.contains("merge: out/tiny: the shards' partial results (")
            && stderr.contains("of memory to merge, more than the limit of 1.0 MB (--max-memory)"),
        "{stderr}"
    );
    assert!(!ws.path().join("out/tiny/summary.csv").exists());
    // Within the limit, the same shards merge.
    assert!(merge(&ws, "out/tiny", &["--no-charts"]).status.success());
    assert!(ws.path().join("out/tiny/summary.csv").exists());
}

#[test]
fn shards_of_another_run_are_refused() {
    // Shard 0 of 2 as written; shard 1 with `second` flags, after `edit` of the scenario (a
    // text replaced).
    // The refusal names the difference, not only the scenario hash it changes.
    // (second shard's flags, a text replaced in the scenario before it, the refusal)
    type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 5] = [
        (
            &["--shard", "1/2", "--seed", "8"],
            None,
            "merge: out/tiny/shard-1-of-2 is a shard of another run than out/tiny/shard-0-of-2 (run with: --seed 8 vs no --seed or --replications)",
        ),
        (
            &["--shard", "1/2", "--set", "server.queue=6"],
            None,
            "(--set: server.queue=6 vs none)",
        ),
        // The --set that changed the seed is named, not the seed it changed.
        (
            &["--shard", "1/2", "--set", "seed=9"],
            None,
            "(--set: seed=9 vs none)",
        ),
        (
            &["--shard", "1/2"],
            Some(("queue = 5", "queue = 6")),
            "(scenario.toml differs from line 19 on)",
        ),
        (&["--shard", "1/3"], None, "(shard count: 3 vs 2)"),
    ];
    for (second, edit, expected) in cases {
        let ws = Workspace::new();
        ws.file("sweep.toml", &sweep());
        run(&ws, "out", &["--no-charts", "--shard", "0/2"]);
        if let Some((from, to)) = edit {
            ws.file("sweep.toml", &sweep().replace(from, to));
        }
        run(&ws, "out", &[&["--no-charts"][..], second].concat());
        let m = merge(&ws, "out/tiny", &[]);
        assert_eq!(m.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!ws.path().join("out/tiny/summary.csv").exists());
    }
}

#[test]
fn a_copied_or_altered_shard_is_refused() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--shard", "0/2"]);
    run(&ws, "out", &["--no-charts", "--shard", "1/2"]);
    let dir = ws.path().join("out/tiny");
    // A duplicate under another name.
    fs::create_dir(dir.join("shard-2-of-2")).unwrap();
    for f in ["manifest.json", "scenario.toml", "partial.json"] {
        fs::copy(
            dir.join("shard-1-of-2").join(f),
            dir.join("shard-2-of-2").join(f),
        )
        .unwrap();
    }
    let stderr = String::from_utf8_lossy(&merge(&ws, "out/tiny", &[]).stderr).into_owned();
    assert!(stderr.contains("renamed or copied"), "{stderr}");
    fs::remove_dir_all(dir.join("shard-2-of-2")).unwrap();
    // A data file changed after the run.
    let data = dir.join("shard-0-of-2/partial.json");
    let mut bytes = fs::read(&data).unwrap();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b']' { b'}' } else { b']' };
    fs::write(&data, bytes).unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    assert_eq!(m.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert!(stderr.contains("does not match its checksum"), "{stderr}");
}

/// A shard missing one of its files is bad input, named with the shard and the file (exit
/// 2, as an altered file is): it was exit 1 with the operating system's words, which a
/// batch engine retrying failed jobs (exit 1) would have retried in vain.
#[test]
fn a_shard_missing_a_file_is_refused_by_name() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--shard", "0/2"]);
    run(&ws, "out", &["--no-charts", "--shard", "1/2"]);
    let shard = ws.path().join("out/tiny/shard-1-of-2");
    for file in ["partial.json", "scenario.toml"] {
        let kept = fs::read(shard.join(file)).unwrap();
        fs::remove_file(shard.join(file)).unwrap();
        let m = merge(&ws, "out/tiny", &["--no-charts"]);
        assert_eq!(m.status.code(), Some(2), "{file}");
        assert_eq!(
            String::from_utf8_lossy(&m.stderr),
            format!(
                "herdsim: error: merge: out/tiny/shard-1-of-2: expected {file}, found no such file: the shard is incomplete (a deleted file); run this shard again\n"
            )
        );
        fs::write(shard.join(file), kept).unwrap();
    }
    assert!(merge(&ws, "out/tiny", &["--no-charts"]).status.success());
}

/// Asserts that the run `out` succeeded and wrote the shard folder `dir` (its manifest).
fn wrote_shard(ws: &Workspace, out: &std::process::Output, dir: &str) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ws.path().join(dir).join("manifest.json").exists(), "{dir}");
}

#[test]
fn shard_auto_reads_the_batch_engines_environment() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    for (id, vars) in [
        (
            0,
            vec![
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
        ),
        (1, vec![("JOB_COMPLETION_INDEX", "1")]),
    ] {
        let mut cmd = herdsim();
        cmd.current_dir(ws.path())
            .args([
                "run",
                "sweep.toml",
                "--quiet",
                "--no-charts",
                "--out",
                "auto",
            ])
            .args(["--shard", "auto", "--shard-count", "2"]);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        wrote_shard(
            &ws,
            &cmd.output().unwrap(),
            &format!("auto/tiny/shard-{id}-of-2"),
        );
    }
    assert!(merge(&ws, "auto/tiny", &["--no-charts"]).status.success());
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "sweep.toml", "--shard", "auto", "--out", "x"])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("AWS_BATCH_JOB_ARRAY_INDEX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no batch array found"));
    // A task id below the array's first is no task of it: refused, nothing written.
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "sweep.toml", "--shard", "auto", "--out", "low"])
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_ARRAY_TASK_MIN", "4")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "herdsim: error: --shard auto: SLURM_ARRAY_TASK_ID 3 is below SLURM_ARRAY_TASK_MIN 4, expected a task of the array\n"
    );
    assert!(!ws.path().join("low").exists(), "nothing written");
}

/// A stepped Slurm array (`--array=0-6:2`: tasks 0, 2, 4, 6) is four shards, numbered by
/// step; a list with gaps (`--array=0,1,5`) has no numbering and every task refuses it.
#[test]
fn shard_auto_numbers_a_stepped_slurm_array_and_refuses_a_list_with_gaps() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    let slurm = |out: &str, id: &str, max: &str, step: &str, count: &str| {
        herdsim()
            .current_dir(ws.path())
            .args(["run", "sweep.toml", "--quiet", "--no-charts", "--out", out])
            .args(["--shard", "auto"])
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("AWS_BATCH_JOB_ARRAY_INDEX")
            .env("SLURM_ARRAY_TASK_ID", id)
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_MAX", max)
            .env("SLURM_ARRAY_TASK_STEP", step)
            .env("SLURM_ARRAY_TASK_COUNT", count)
            .output()
            .unwrap()
    };
    for (task, shard) in [("0", 0), ("2", 1), ("4", 2), ("6", 3)] {
        let out = slurm("stepped", task, "6", "2", "4");
        wrote_shard(&ws, &out, &format!("stepped/tiny/shard-{shard}-of-4"));
    }
    assert!(
        merge(&ws, "stepped/tiny", &["--no-charts"])
            .status
            .success()
    );
    run(&ws, "whole", &["--no-charts"]);
    assert_eq!(
        files(&ws.path().join("stepped/tiny")),
        files(&ws.path().join("whole/tiny"))
    );
    // --array=0,1,5: three tasks whose ids are not one step apart.
    for task in ["0", "1", "5"] {
        let out = slurm("gaps", task, "5", "1", "3");
        assert_eq!(out.status.code(), Some(2), "task {task}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "herdsim: error: --shard auto: this Slurm array's 3 task ids do not run from 0 to 5 in steps of 1 (SLURM_ARRAY_TASK_COUNT, _MIN, _MAX, _STEP): they are not evenly spaced; submit --array=0-N or a stepped range such as --array=0-14:2, or use --shard i/n\n"
            )
        );
    }
    // A task between two steps is no task of the array.
    assert_eq!(slurm("gaps", "3", "6", "2", "4").status.code(), Some(2));
    assert!(!ws.path().join("gaps").exists(), "nothing written");
}

#[test]
fn shard_count_without_shard_auto_is_refused() {
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    for extra in [
        &["--shard", "0/3", "--shard-count", "5"][..],
        &["--shard-count", "5"],
    ] {
        let mut args = vec!["run", "sweep.toml", "--no-charts", "--quiet"];
        args.extend_from_slice(extra);
        let out = herdsim()
            .current_dir(ws.path())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("--shard-count: only read with --shard auto"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!ws.path().join("output").exists(), "nothing written");
    }
}

// ---- trace populations --------------------------------------------------------------------

/// A sweep whose second population replays `data/arrivals.csv` (relative to the scenario's
/// folder), swept between that trace and `data/other.csv`: 2 points x 2 strategies x 3
/// replications.
fn with_traces() -> String {
    tiny_with("replications = 2", "replications = 3").replace(
        "[clients]\ncount = 50",
        "[[clients]]\nname = \"herd\"\ncount = 20\n[[clients]]\nname = \"replay\"\ntrace = \"data/arrivals.csv\"\nclients = 10",
    ) + "\n[sweep]\n\"clients.1.trace\" = [\"data/arrivals.csv\", \"data/other.csv\"]\n"
}

/// `rows` arrival times, 20 ms apart from `first` seconds.
fn trace(rows: usize, first: f64) -> String {
    let mut text = String::from("t_s\n");
    for i in 0..rows {
        text.push_str(&format!("{:.3}\n", first + i as f64 * 0.02));
    }
    text
}

/// Writes `sim/trace.toml` and its two traces into `ws`.
fn trace_scenario(ws: &Workspace, arrivals: &str) {
    fs::create_dir_all(ws.path().join("sim/data")).unwrap();
    ws.file("sim/trace.toml", &with_traces());
    ws.file("sim/data/arrivals.csv", arrivals);
    ws.file("sim/data/other.csv", &trace(40, 0.5));
}

fn run_file(ws: &Workspace, file: &str, out: &str, extra: &[&str]) -> std::process::Output {
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", file, "--out", out])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn summary_hash(dir: &Path) -> String {
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap();
    json["scenario_hash"].as_str().unwrap().to_string()
}

/// The scenario hash covers the traces' contents: another trace at the same path is
/// another run, for `summary.json` and for `merge`.
#[test]
fn shards_run_against_another_trace_are_refused() {
    let ws = Workspace::new();
    trace_scenario(&ws, &trace(100, 0.0));
    let quiet = ["--quiet", "--no-charts"];
    run_file(&ws, "sim/trace.toml", "a", &quiet);
    run_file(
        &ws,
        "sim/trace.toml",
        "out",
        &[&quiet[..], &["--shard", "0/2"]].concat(),
    );
    ws.file("sim/data/arrivals.csv", &trace(100, 0.01));
    run_file(&ws, "sim/trace.toml", "b", &quiet);
    run_file(
        &ws,
        "sim/trace.toml",
        "out",
        &[&quiet[..], &["--shard", "1/2"]].concat(),
    );
    assert_ne!(
        summary_hash(&ws.path().join("a/tiny")),
        summary_hash(&ws.path().join("b/tiny")),
        "same scenario text, another trace"
    );
    let m = merge(&ws, "out/tiny", &[]);
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert_eq!(m.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("out/tiny/shard-1-of-2 is a shard of another run than out/tiny/shard-0-of-2 (the trace file \"data/arrivals.csv\" holds other data)"),
        "{stderr}"
    );
    assert!(!ws.path().join("out/tiny/summary.csv").exists());
}

/// Every file of `dir` (not the shard folders) equals the one of the same name in `whole`.
fn assert_same_files(dir: &Path, whole: &Path) {
    let (got, expected) = (files(dir), files(whole));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &expected {
        assert!(
            got[name] == *bytes,
            "{name} differs from the unsharded run's"
        );
    }
}

/// `merge` never reads the trace files: shards moved to another folder, where the trace is
/// missing or another file sits at the same path, merge into the unsharded run's files.
#[test]
fn merge_needs_no_trace_file_where_it_runs() {
    let ws = Workspace::new();
    trace_scenario(&ws, &trace(100, 0.0));
    let charts = ["--format", "svg"];
    let whole = run_file(&ws, "sim/trace.toml", "whole", &charts);
    for i in 0..2 {
        let shard = format!("{i}/2");
        run_file(
            &ws,
            "sim/trace.toml",
            "parts",
            &["--quiet", "--shard", &shard],
        );
    }
    let whole_dir = ws.path().join("whole/tiny");
    let elsewhere = Workspace::new();
    for (trace_there, arrivals) in [(false, ""), (true, "t_s\n0.5\n")] {
        let there = elsewhere.path().join("moved/tiny");
        let _ = fs::remove_dir_all(elsewhere.path().join("moved"));
        let _ = fs::remove_dir_all(elsewhere.path().join("merged"));
        for i in 0..2 {
            let name = format!("shard-{i}-of-2");
            fs::create_dir_all(there.join(&name)).unwrap();
            for f in fs::read_dir(ws.path().join("parts/tiny").join(&name)).unwrap() {
                let f = f.unwrap();
                fs::copy(f.path(), there.join(&name).join(f.file_name())).unwrap();
            }
        }
        if trace_there {
            // Another trace at the path the scenario names, from merge's folder.
            trace_scenario(&elsewhere, arrivals);
        }
        let m = herdsim()
            .current_dir(elsewhere.path())
            .args(["merge", "moved/tiny", "--out", "merged"])
            .args(charts)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert!(m.status.success(), "trace there: {trace_there}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&m.stdout),
            String::from_utf8_lossy(&whole.stdout),
            "the table and its header"
        );
        assert_same_files(&elsewhere.path().join("merged/tiny"), &whole_dir);
        // In place, twice: the shard folders go along and merge again.
        for _ in 0..2 {
            let m = herdsim()
                .current_dir(elsewhere.path())
                .args(["merge", "moved/tiny", "--quiet"])
                .args(charts)
                .output()
                .unwrap();
            assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
            assert_same_files(&there, &whole_dir);
        }
    }
}

/// A shard's copy of a trace is checked like its partial results.
#[test]
fn an_altered_or_missing_trace_copy_is_refused() {
    let ws = Workspace::new();
    trace_scenario(&ws, &trace(100, 0.0));
    for i in 0..2 {
        let shard = format!("{i}/2");
        run_file(
            &ws,
            "sim/trace.toml",
            "out",
            &["--quiet", "--no-charts", "--shard", &shard],
        );
    }
    let copy = ws.path().join("out/tiny/shard-0-of-2/trace-2.csv");
    assert_eq!(fs::read_to_string(&copy).unwrap(), trace(40, 0.5));
    fs::write(&copy, trace(40, 0.6)).unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert_eq!(m.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "merge: out/tiny/shard-0-of-2: trace-2.csv does not match its checksum in manifest.json"
        ),
        "{stderr}"
    );
    fs::remove_file(&copy).unwrap();
    let m = merge(&ws, "out/tiny", &[]);
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert_eq!(m.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "merge: out/tiny/shard-0-of-2: expected trace-2.csv, the shard's copy of the trace file \"data/other.csv\", found no such file: the trace copy is missing"
        ) && stderr.contains("run this shard again with this version"),
        "{stderr}"
    );
    assert!(!ws.path().join("out/tiny/summary.csv").exists());
}

/// Any alteration of a trace copy, in any shard, is refused by its checksum before the copy
/// is read as a trace: a line appended that leaves the CSV invalid (a time before the
/// previous one) gave that parse error instead, without "run this shard again", and a
/// shard other than the first, whose copies `merge` does not read, was merged (in place, its
/// altered copy carried along).
#[test]
fn a_trace_copy_altered_in_any_shard_is_refused_by_its_checksum_before_it_is_read() {
    let ws = Workspace::new();
    trace_shards(&ws);
    for (shard, copy) in [(0, "trace-1.csv"), (0, "trace-2.csv"), (1, "trace-1.csv")] {
        let path = ws
            .path()
            .join(format!("out/tiny/shard-{shard}-of-2/{copy}"));
        let original = fs::read(&path).unwrap();
        let mut altered = original.clone();
        altered.extend_from_slice(b"1\n");
        fs::write(&path, &altered).unwrap();
        for extra in [&[][..], &["--out", "merged"][..]] {
            let m = merge(&ws, "out/tiny", extra);
            let stderr = String::from_utf8_lossy(&m.stderr);
            assert_eq!(
                m.status.code(),
                Some(2),
                "{shard} {copy} {extra:?}: {stderr}"
            );
            assert_eq!(
                stderr,
                format!(
                    "herdsim: error: merge: out/tiny/shard-{shard}-of-2: {copy} does not match its checksum in manifest.json (altered or truncated); run this shard again\n"
                ),
                "{extra:?}"
            );
            assert!(!ws.path().join("out/tiny/summary.csv").exists());
            assert!(!ws.path().join("merged").exists());
        }
        fs::write(&path, &original).unwrap();
    }
    let m = merge(&ws, "out/tiny", &["--out", "merged"]);
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
}

/// Runs the two shards of `sim/trace.toml` into `out/tiny`.
fn trace_shards(ws: &Workspace) {
    trace_scenario(ws, &trace(100, 0.0));
    for i in 0..2 {
        let shard = format!("{i}/2");
        run_file(
            ws,
            "sim/trace.toml",
            "out",
            &["--quiet", "--no-charts", "--shard", &shard],
        );
    }
}

/// Merges `out/tiny` in place and `--out merged`, asserting each is refused as bad input
/// (exit 2) with `expected` on stderr and nothing written.
fn refused_merge(ws: &Workspace, expected: &str) {
    for extra in [&[][..], &["--out", "merged"][..]] {
        let m = merge(ws, "out/tiny", extra);
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert_eq!(m.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(
            stderr.contains(expected) && stderr.contains("run this shard again with this version"),
            "{extra:?}: {stderr}"
        );
        assert!(!ws.path().join("out/tiny/summary.csv").exists());
        assert!(!ws.path().join("merged").exists());
    }
}

/// A shard of an earlier herdsim, which named its traces in manifest.json but stored no
/// copy of them, is refused as bad input naming the shard, whichever shard it is (merge
/// reads the scenario from the first shard only, but merging in place copies every shard's
/// files, which failed as an I/O error, exit 1).
#[test]
fn a_shard_without_its_trace_copy_is_refused_as_made_by_an_earlier_version() {
    let ws = Workspace::new();
    trace_shards(&ws);
    fs::remove_file(ws.path().join("out/tiny/shard-1-of-2/trace-1.csv")).unwrap();
    refused_merge(
        &ws,
        "merge: out/tiny/shard-1-of-2: expected trace-1.csv, the shard's copy of the trace file \"data/arrivals.csv\", found no such file: the trace copy is missing (a shard made by an earlier herdsim, which stored no trace copies, or a deleted file)",
    );
}

/// A shard of a herdsim older still, whose manifest names no trace (nor hashes one) and
/// which stored no copy, is refused the same way.
#[test]
fn a_shard_whose_manifest_names_no_trace_is_refused_as_made_by_an_earlier_version() {
    let ws = Workspace::new();
    trace_shards(&ws);
    for i in 0..2 {
        let dir = ws.path().join(format!("out/tiny/shard-{i}-of-2"));
        let mut m: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        let object = m.as_object_mut().unwrap();
        let traces = object.remove("traces").unwrap();
        for k in 0..traces.as_array().unwrap().len() {
            fs::remove_file(dir.join(format!("trace-{}.csv", k + 1))).unwrap();
        }
        let source = fs::read_to_string(dir.join("scenario.toml")).unwrap();
        let hash = herdsim::shard::run_hash(
            &source,
            [],
            object["seed"].as_u64().unwrap(),
            object["replications"].as_u64().unwrap() as u32,
        );
        object.insert("scenario_hash".into(), hash.into());
        fs::write(
            dir.join("manifest.json"),
            serde_json::to_vec_pretty(&m).unwrap(),
        )
        .unwrap();
    }
    refused_merge(
        &ws,
        "merge: out/tiny/shard-0-of-2: expected a copy of every trace file its scenario reads, found none stored in the shard (made by an earlier herdsim, which stored no trace copies)",
    );
}

// ---- partial results altered with their checksum recomputed ------------------------------

/// Writes `partial` as `shard`'s `partial.json` and records its SHA-256 in the shard's
/// manifest, as an edit that recomputes the checksum does: only the merge's own checks of
/// the partial results can then refuse it.
fn write_partial(shard: &Path, partial: &serde_json::Value) {
    let bytes = serde_json::to_vec(partial).unwrap();
    fs::write(shard.join("partial.json"), &bytes).unwrap();
    let path = shard.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    manifest["partial_sha256"] = herdsim::shard::sha256(&bytes).into();
    fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

/// A `partial.json` of the right types whose contents contradict the scenario or each other
/// (what no run writes), its checksum recomputed, is refused as bad input (exit 2) naming the
/// shard, the place in the file, what was expected and what was found, and nothing is written,
/// in place or with `--out`. Each of these panicked in the merge (exit 101) before it checked.
#[test]
fn an_inconsistent_partial_with_a_recomputed_checksum_is_refused() {
    use serde_json::{Value, json};
    let ws = Workspace::new();
    ws.file("sweep.toml", &sweep());
    run(&ws, "out", &["--no-charts", "--requests", "--shard", "0/2"]);
    run(&ws, "out", &["--no-charts", "--requests", "--shard", "1/2"]);
    let shard = ws.path().join("out/tiny/shard-0-of-2");
    let original: Value =
        serde_json::from_slice(&fs::read(shard.join("partial.json")).unwrap()).unwrap();
    // Shard 0 of 2 runs jobs 0, 2, 4, ...: replications 0 and 2 of group 0 (the first sweep
    // point's first strategy), replication 1 of group 1.
    let g0 = &original["groups"][0];
    assert!(g0["replicates"][1].is_null() && !g0["replicates"][0].is_null());
    let len = |v: &Value| v.as_array().unwrap().len();
    let samples = len(&g0["populations"][0]["latencies"]["exact"]);
    let all_samples = len(&g0["latencies"]["exact"]);
    let buckets = len(&g0["services"][0]["timeline"]);
    let records = len(&g0["requests"][0]);
    assert!(samples > 0 && all_samples > 0 && buckets > 0 && records > 0);
    type Mutation = Box<dyn Fn(&mut Value)>;
    let pop = |v: &mut Value| {
        v.as_array_mut().unwrap().pop().unwrap();
    };
    let cases: Vec<(Mutation, String)> = vec![
        (
            Box::new(|p| p["groups"][0]["replicates"][0]["service_peaks"] = json!([])),
            "groups[0].replicates[0].service_peaks: expected 1 value (one per service), found 0".into(),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"][0]["services"])),
            "groups[0].services: expected 1 entry (one per service), found 0".into(),
        ),
        (
            Box::new(|p| p["groups"][0]["replicates"][0]["service_ends"] = json!([])),
            "groups[0].replicates[0].service_ends: expected 1 entry (one per service), found 0".into(),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"][0]["replicates"])),
            "groups[0].replicates: expected 3 entries (one per replication), found 2".into(),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"][0]["populations"][0]["latencies"]["exact"])),
            format!(
                "groups[0].populations[0].latencies.exact: expected {samples} samples (its count), found {}",
                samples - 1
            ),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"][0]["latencies"]["exact"])),
            format!(
                "groups[0].latencies.exact: expected {all_samples} samples (its count), found {}",
                all_samples - 1
            ),
        ),
        (
            Box::new(|p| p["groups"][0]["replicates"][0] = Value::Null),
            "groups[0].replicates[0]: expected the results of replication 0 (a job of this shard), found null".into(),
        ),
        (
            Box::new(|p| p["groups"][0]["replicates"][1] = p["groups"][0]["replicates"][0].clone()),
            "groups[0].replicates[1]: expected null (replication 1 is another shard's job), found a replication's results".into(),
        ),
        (
            Box::new(|p| p["groups"][1] = Value::Null),
            "groups[1]: expected the runs of this shard's jobs of strategy \"full\" at sweep point server.concurrency = 2, found null".into(),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"])),
            "groups: expected 4 entries (one per sweep point and strategy), found 3".into(),
        ),
        (
            Box::new(move |p| pop(&mut p["groups"][0]["services"][0]["timeline"])),
            format!(
                "groups[0].services[0].timeline: expected {buckets} buckets (the longest series in replicates[..].service_ends), found {}",
                buckets - 1
            ),
        ),
        (
            Box::new(|p| {
                let copy = p["groups"][0]["populations"][0].clone();
                p["groups"][0]["populations"].as_array_mut().unwrap().push(copy);
            }),
            "groups[0].populations: expected 2 entries (one per population), found 3".into(),
        ),
        (
            Box::new(|p| p["groups"][0]["requests"][0][0]["population"] = json!(2)),
            "groups[0].requests[0][0].population: expected a population index below 2, found 2".into(),
        ),
        (
            Box::new(|p| p["groups"][0]["requests"][1] = p["groups"][0]["requests"][0].clone()),
            format!(
                "groups[0].requests[1]: expected no records (replication 1 is another shard's job), found {records} records"
            ),
        ),
    ];
    for (mutate, expected) in &cases {
        let mut partial = original.clone();
        mutate(&mut partial);
        assert_ne!(partial, original, "{expected}");
        write_partial(&shard, &partial);
        for extra in [&[][..], &["--out", "merged"][..]] {
            let m = merge(&ws, "out/tiny", extra);
            let stderr = String::from_utf8_lossy(&m.stderr);
            assert_eq!(m.status.code(), Some(2), "{expected}, {extra:?}: {stderr}");
            assert_eq!(
                stderr,
                format!(
                    "herdsim: error: merge: out/tiny/shard-0-of-2: partial.json is inconsistent: {expected}; run this shard again\n"
                ),
                "{extra:?}"
            );
            assert!(m.stdout.is_empty());
            assert!(!ws.path().join("out/tiny/summary.csv").exists());
            assert!(!ws.path().join("merged").exists());
        }
    }
    // The same shard with its original contents, written the same way, merges.
    write_partial(&shard, &original);
    let m = merge(&ws, "out/tiny", &["--out", "merged"]);
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    assert!(ws.path().join("merged/tiny/summary.csv").exists());
}
