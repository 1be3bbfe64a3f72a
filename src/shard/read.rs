//! Reading a scenario's shard folders back for `merge`, and refusing what cannot be merged:
//! a folder that is no finished shard, a file altered since its shard wrote it, shards of
//! different runs, a missing shard, a job present twice. Every refusal is
//! [`Error::Usage`] (exit 2), naming the folder and what to do about it.

use std::path::{Path, PathBuf};

use super::{Manifest, RunFlags, ShardData, folder_name, run_hash, sha256, trace_copy_name};
use crate::error::{Error, Result};
use crate::runner::{Partial, Shard};
use crate::scenario::sweep::ScenarioFile;

/// What is wrong with a JSON file herdsim wrote, in words rather than the JSON reader's.
fn json_problem(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("line {}, column {}", e.line(), e.column());
    match e.classify() {
        Category::Eof => format!("it ends early, at {at}: cut short?"),
        Category::Syntax => format!("it is not valid JSON at {at}: altered?"),
        Category::Data => format!(
            "a value at {at} is not what herdsim writes there: altered, or written by another herdsim?"
        ),
        Category::Io => format!("it could not be read at {at}"),
    }
}

/// How many missing shards the refusal names (it counts them all).
const MISSING_NAMED: usize = 20;

/// Reads and checks every `shard-*-of-*` folder of `dir` (a scenario's output folder):
/// data files intact, one run (one herdsim version, scenario, shard count, flags, seed,
/// replications, scenario text and traces), every shard and every job exactly once.
/// Refusals are [`Error::Usage`] (exit 2).
pub fn read_shards(dir: &Path) -> Result<Vec<ShardData>> {
    let shown = crate::text::escape(&dir.display().to_string()).to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        // A folder named on the command line that is not there is a bad argument (exit 2),
        // as a missing scenario file is for `run`.
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => Error::Usage(format!(
            "merge: {shown}: expected a folder of shard-i-of-n folders, found {}",
            if e.kind() == std::io::ErrorKind::NotFound {
                "nothing there"
            } else {
                "a file"
            }
        )),
        _ => Error::io("cannot read folder", dir, e),
    })?;
    let mut folders: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("shard-") && name.contains("-of-") && e.path().is_dir()
        })
        .map(|e| e.path())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(Error::Usage(format!(
            "merge: {shown} holds no shard-i-of-n folder (run `herdsim run FILE --shard i/n --out ...` first)"
        )));
    }
    let mut shards = Vec::new();
    for folder in folders {
        shards.push(read_shard(folder)?);
    }
    same_run(&shards, &shown)?;
    every_job_once(&shards, &shown)?;
    Ok(shards)
}

/// Reads one shard folder and checks it on its own: a manifest that names this folder,
/// `partial.json` and each trace copy matching their checksums, `scenario.toml` matching
/// the scenario hash.
fn read_shard(folder: PathBuf) -> Result<ShardData> {
    let bad = |what: String| {
        Error::Usage(format!(
            "merge: {}: {what}",
            crate::text::escape(&folder.display().to_string())
        ))
    };
    // A file of the shard that is not there is bad input (a shard altered by hand, exit
    // 2, which running it again fixes); one that cannot be read is an I/O failure (exit
    // 1: a permission, a disk), which running the shard again would not fix.
    let read = |name: &str| {
        let path = folder.join(name);
        std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => bad(format!(
                "expected {name}, found no such file: the shard is incomplete (a deleted file); run this shard again"
            )),
            _ => Error::io("cannot read", path, e),
        })
    };
    let manifest_path = folder.join("manifest.json");
    let has_manifest = match std::fs::metadata(&manifest_path) {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io("cannot read", manifest_path, e)),
    };
    if !has_manifest {
        // A folder named like a shard but holding no manifest is bad input (a shard
        // still running, one that failed, a stray folder), not an I/O failure.
        let named = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let valid_name = named
            .strip_prefix("shard-")
            .and_then(|rest| rest.split_once("-of-"))
            .and_then(|(i, n)| Some((i.parse::<u32>().ok()?, n.parse::<u32>().ok()?)))
            .is_some_and(|(i, n)| i < n && folder_name(Shard { index: i, count: n }) == named);
        // One that no run makes (shard 5 of 3) is not asked to be run again.
        if !valid_name {
            return Err(bad(
                "is named like a shard folder but is none (shard-i-of-n, i from 0 to n - 1): remove or rename it".into(),
            ));
        }
        return Err(bad(
            "holds no manifest.json: not a finished shard (still running, or failed); run this shard again, or remove the folder".into(),
        ));
    }
    let manifest: Manifest = serde_json::from_slice(&read("manifest.json")?).map_err(|e| {
        bad(format!(
            "manifest.json is not a herdsim shard manifest ({})",
            json_problem(&e)
        ))
    })?;
    let expected = folder_name(Shard {
        index: manifest.shard,
        count: manifest.shards,
    });
    if folder
        .file_name()
        .is_none_or(|n| n.to_string_lossy() != expected)
    {
        return Err(bad(format!(
            "its manifest is that of {expected}: a shard folder was renamed or copied"
        )));
    }
    let data = read("partial.json")?;
    if sha256(&data) != manifest.partial_sha256 {
        return Err(bad(
            "partial.json does not match its checksum in manifest.json (altered or truncated); run this shard again".into(),
        ));
    }
    let partial: Partial = serde_json::from_slice(&data).map_err(|e| {
        bad(format!(
            "partial.json cannot be read ({})",
            json_problem(&e)
        ))
    })?;
    let source = String::from_utf8(read("scenario.toml")?)
        .map_err(|_| bad("scenario.toml is not UTF-8".into()))?;
    for (k, t) in manifest.traces.iter().enumerate() {
        // Shards of an earlier herdsim name their traces but stored no copy, and merge
        // reads nothing else; an in-place merge copies every shard's files along.
        let copy = trace_copy_name(k);
        if !folder.join(&copy).is_file() {
            return Err(bad(format!(
                "expected {copy}, the shard's copy of the trace file \"{}\", found no such file: the trace copy is missing (a shard made by an earlier herdsim, which stored no trace copies, or a deleted file); run this shard again with this version",
                crate::text::escape(&t.file)
            )));
        }
        // Checked before `load_scenario` parses it, so that any alteration is reported
        // as one (not as whatever parse error it makes), and in every shard, as merging
        // in place copies each shard's files along.
        if sha256(&read(&copy)?) != t.sha256 {
            return Err(bad(format!(
                "{copy} does not match its checksum in manifest.json (altered or truncated); run this shard again"
            )));
        }
    }
    let hash = run_hash(
        &source,
        manifest.trace_hashes(),
        manifest.seed,
        manifest.replications,
    );
    if hash != manifest.scenario_hash {
        return Err(bad(
            "scenario.toml does not match the scenario hash in manifest.json".into(),
        ));
    }
    Ok(ShardData {
        dir: folder,
        manifest,
        source,
        partial,
    })
}

/// Refuses a shard of another run than the first one, naming the most telling difference.
fn same_run(shards: &[ShardData], shown: &str) -> Result<()> {
    let first = &shards[0].manifest;
    for s in &shards[1..] {
        let m = &s.manifest;
        let foreign = |why: String| {
            Error::Usage(format!(
                "merge: {} is a shard of another run than {} ({why}); keep one run's shards in {shown}",
                crate::text::escape(&s.dir.display().to_string()),
                crate::text::escape(&shards[0].dir.display().to_string()),
            ))
        };
        let differs = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
            foreign(format!("{what}: {b} vs {a}"))
        };
        // The most telling difference first; the scenario hash, which covers the scenario
        // text, the traces, the seed and the replications, only when none of those shows.
        if m.herdsim != first.herdsim {
            return Err(differs("herdsim version", &first.herdsim, &m.herdsim));
        }
        // A shard of another scenario altogether: its name says so before its seed does.
        if m.scenario != first.scenario {
            return Err(differs("scenario", &first.scenario, &m.scenario));
        }
        if m.shards != first.shards {
            return Err(differs("shard count", &first.shards, &m.shards));
        }
        if m.flags != first.flags {
            // As the command lines had them: `--seed 8` vs `no --seed or --replications`.
            let shown = |f: Option<RunFlags>| match f {
                None => "not recorded".to_string(),
                Some(RunFlags {
                    seed: None,
                    replications: None,
                }) => "no --seed or --replications".to_string(),
                Some(f) => {
                    let seed = f.seed.map(|s| format!("--seed {s}"));
                    let reps = f.replications.map(|r| format!("--replications {r}"));
                    [seed, reps]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            };
            return Err(differs("run with", &shown(first.flags), &shown(m.flags)));
        }
        // A --set can change the seed or the replications: named first, as the cause.
        if m.set != first.set {
            let shown = |set: &[String]| match set {
                [] => "none".to_string(),
                set => set.join(" "),
            };
            return Err(differs("--set", &shown(&first.set), &shown(&m.set)));
        }
        if m.seed != first.seed {
            return Err(differs("seed", &first.seed, &m.seed));
        }
        if m.replications != first.replications {
            return Err(differs(
                "replications",
                &first.replications,
                &m.replications,
            ));
        }
        if s.source != shards[0].source {
            let line = s
                .source
                .lines()
                .zip(shards[0].source.lines())
                .take_while(|(a, b)| a == b)
                .count()
                + 1;
            return Err(foreign(format!(
                "scenario.toml differs from line {line} on"
            )));
        }
        if let Some(t) = m
            .traces
            .iter()
            .zip(&first.traces)
            .find(|(a, b)| a.sha256 != b.sha256)
            .map(|(t, _)| t)
        {
            return Err(foreign(format!(
                "the trace file \"{}\" holds other data",
                crate::text::escape(&t.file)
            )));
        }
        if m.scenario_hash != first.scenario_hash {
            return Err(differs(
                "scenario hash",
                &first.scenario_hash,
                &m.scenario_hash,
            ));
        }
        if (m.requests, m.attempts) != (first.requests, first.attempts) {
            return Err(differs(
                "--requests/--attempts",
                &format!("{}/{}", first.requests, first.attempts),
                &format!("{}/{}", m.requests, m.attempts),
            ));
        }
    }
    Ok(())
}

/// Refuses a missing shard, and a job that is not present exactly once.
fn every_job_once(shards: &[ShardData], shown: &str) -> Result<()> {
    let first = &shards[0].manifest;
    // The shards present, and the missing ones counted and the first few named without
    // walking every index: the count is the user's (`--shard 0/1000000000` of a 4-job plan
    // is accepted, and listing its missing shards took 24 GB).
    let present: std::collections::BTreeSet<u32> = shards
        .iter()
        .map(|s| s.manifest.shard)
        .filter(|&i| i < first.shards)
        .collect();
    let missing_count = u64::from(first.shards) - present.len() as u64;
    if missing_count > 0 {
        // Named up to a screenful: an array of a million tasks merged early would print
        // every one of them on one line.
        let named: Vec<String> = (0..first.shards)
            .filter(|i| !present.contains(i))
            .take(MISSING_NAMED)
            .map(|i| {
                folder_name(Shard {
                    index: i,
                    count: first.shards,
                })
            })
            .collect();
        let more = missing_count - named.len() as u64;
        let named = match more {
            0 => named.join(", "),
            more => format!("{} and {more} more", named.join(", ")),
        };
        return Err(Error::Usage(format!(
            "merge: {shown} lacks {missing_count} of {} shards: {named} (run them, then merge again)",
            first.shards,
        )));
    }
    let mut seen = vec![0u32; first.total_jobs];
    for s in shards {
        if s.manifest.jobs != s.partial.jobs {
            return Err(Error::Usage(format!(
                "merge: {}: the jobs in manifest.json and partial.json differ",
                crate::text::escape(&s.dir.display().to_string())
            )));
        }
        for &j in &s.manifest.jobs {
            if j >= seen.len() {
                return Err(Error::Usage(format!(
                    "merge: {}: job {j} is beyond the plan's {} jobs",
                    crate::text::escape(&s.dir.display().to_string()),
                    first.total_jobs
                )));
            }
            seen[j] += 1;
        }
    }
    if let Some(j) = seen.iter().position(|&c| c != 1) {
        return Err(Error::Usage(format!(
            "merge: job {j} is present {} times across the shards of {shown}, expected exactly once",
            seen[j]
        )));
    }
    Ok(())
}

/// Checks every shard's partial results against `file`, the scenario they ran (as
/// [`load_scenario`] gives it), before they are merged: a `partial.json` whose checksum
/// matches can still hold what no run gives (edited with its checksum recomputed), which
/// merging would fold in or fail on. Refusals are [`Error::Usage`] (exit 2).
pub fn check_partials(shards: &[ShardData], file: &ScenarioFile) -> Result<()> {
    for s in shards {
        s.partial.check(file).map_err(|e| {
            Error::Usage(format!(
                "merge: {}: partial.json is inconsistent: {e}; run this shard again",
                crate::text::escape(&s.dir.display().to_string())
            ))
        })?;
    }
    Ok(())
}
