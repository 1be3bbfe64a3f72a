//! Scale-out over a batch engine: run a scenario file's jobs as `n` shards on different
//! machines (a Slurm array, a Kubernetes Indexed Job, an AWS Batch array), then merge.
//!
//! `herdsim run FILE --shard i/n` runs only the jobs (sweep point, strategy, replication)
//! whose index in plan order is `i mod n`, and writes `<out>/<name>/shard-i-of-n/`:
//! `partial.json` (the unreduced accumulators of its jobs, see
//! [`crate::runner::Partial`]), `scenario.toml` (the scenario text it ran), `manifest.json`
//! (herdsim version, scenario hash, seed, replications, the `--seed`/`--replications` given,
//! shard, job indices, the options that change outputs, its trace files' names and SHA-256, and the SHA-256 of `partial.json`)
//! and a copy of each trace file, `trace-1.csv`, ..., which `merge` reads instead of the
//! trace files, so that it gives the same files wherever it runs. A re-run shard
//! replaces its own folder (idempotent). `herdsim merge <out>/<name>` checks that the shards
//! are of one scenario (one hash, one count, one version), that every job is present exactly
//! once, that no data file was altered and that each `partial.json` holds what its jobs give
//! (one entry per service, population and replication, ...), then reduces them: the
//! accumulators' folds are integer sums, mergeable latency sets and per-replication values,
//! so the merged files are byte for byte those of the unsharded run.
//!
//! `--shard auto` reads the shard from the batch engine's environment: Slurm's
//! `SLURM_ARRAY_TASK_ID` and `SLURM_ARRAY_TASK_COUNT` (the index made 0-based with
//! `SLURM_ARRAY_TASK_MIN` and divided by `SLURM_ARRAY_TASK_STEP`), Kubernetes'
//! `JOB_COMPLETION_INDEX` with `--shard-count`, or AWS Batch's `AWS_BATCH_JOB_ARRAY_INDEX`
//! and `AWS_BATCH_JOB_ARRAY_SIZE`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::runner::{Partial, Shard};
pub use crate::scenario::sha256;
use crate::scenario::sweep::ScenarioFile;

mod arg;
pub use arg::{ShardArg, parse_shard, shard_from_env};

/// `shard-i-of-n`, the folder of one shard inside the scenario's output folder.
pub fn folder_name(shard: Shard) -> String {
    format!("shard-{}-of-{}", shard.index, shard.count)
}

/// `manifest.json` of a shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The herdsim version that ran it (merging across versions is refused: results may
    /// differ).
    pub herdsim: String,
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file as named on the command line.
    pub file: String,
    /// SHA-256 of what decides every result: the scenario text, seed and replications.
    pub scenario_hash: String,
    /// The seed run (after `--seed`).
    pub seed: u64,
    /// The replications run (after `--replications`).
    pub replications: u32,
    /// This shard.
    pub shard: u32,
    /// The shard count.
    pub shards: u32,
    /// Jobs in the whole plan.
    pub total_jobs: usize,
    /// Indices of this shard's jobs in plan order.
    pub jobs: Vec<usize>,
    /// Whether per-request records were kept (`--requests`).
    pub requests: bool,
    /// Whether the attempt sample was taken in every replication (`--attempts`).
    pub attempts: bool,
    /// The `--set` settings (already written into `scenario.toml`), for `summary.json`.
    pub set: Vec<String>,
    /// The trace files the scenario reads, in the order first read (their contents are in
    /// `scenario_hash`). Absent without traces, so such manifests are as they always were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<ManifestTrace>,
    /// SHA-256 of `partial.json`.
    pub partial_sha256: String,
    /// The `--seed` and `--replications` given, which `merge` applies to every sweep point
    /// as `run` did (`seed` and `replications` above are the first point's, which a sweep
    /// may vary). Absent in the manifests of earlier versions, which applied those two to
    /// every point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<RunFlags>,
}

/// The command-line settings a shard ran with that change every sweep point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFlags {
    /// `--seed`, if given.
    pub seed: Option<u64>,
    /// `--replications`, if given.
    pub replications: Option<u32>,
}

/// The name of a shard's copy of the `k`-th trace (from 0) of its manifest: `trace-1.csv`, ...
pub fn trace_copy_name(k: usize) -> String {
    format!("trace-{}.csv", k + 1)
}

/// A trace file in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestTrace {
    /// Its path as written in the scenario (relative to the scenario's folder).
    pub file: String,
    /// SHA-256 of its contents.
    pub sha256: String,
}

impl Manifest {
    /// The SHA-256 of each trace, in order, as [`run_hash`] takes them.
    pub fn trace_hashes(&self) -> impl Iterator<Item = &str> {
        self.traces.iter().map(|t| t.sha256.as_str())
    }

    /// The files of its shard folder.
    pub fn file_names(&self) -> Vec<String> {
        let mut names: Vec<String> = ["manifest.json", "scenario.toml", "partial.json"]
            .map(String::from)
            .into();
        names.extend((0..self.traces.len()).map(trace_copy_name));
        names
    }
}

/// The hash that identifies a run's results: the scenario text with the SHA-256 of each
/// trace file it reads (`traces`, see [`crate::scenario::hashed_text`]), its seed and
/// replications.
pub fn run_hash<'a>(
    source: &str,
    traces: impl IntoIterator<Item = &'a str>,
    seed: u64,
    replications: u32,
) -> String {
    let text = crate::scenario::hashed_text(source, traces);
    sha256(format!("{text}\0seed={seed}\0replications={replications}").as_bytes())
}

/// The files of a shard folder, as bytes, in [`Manifest::file_names`] order: the manifest,
/// the scenario text, the partial results and a copy of each trace file `file` read.
pub fn shard_files(
    manifest: &mut Manifest,
    file: &ScenarioFile,
    partial: &Partial,
) -> Result<Vec<(String, Vec<u8>)>> {
    let data = serde_json::to_vec(partial)
        .map_err(|e| Error::io("cannot format", "partial.json", std::io::Error::other(e)))?;
    manifest.partial_sha256 = sha256(&data);
    let mut head = serde_json::to_vec_pretty(manifest)
        .map_err(|e| Error::io("cannot format", "manifest.json", std::io::Error::other(e)))?;
    head.push(b'\n');
    let mut contents = vec![head, file.source.as_bytes().to_vec(), data];
    for t in &file.traces {
        // Read again rather than kept from validation (a trace may be large, and only a
        // shard needs its bytes): the same bytes, or the shard did not run this trace.
        let bytes = std::fs::read(&t.path).map_err(|e| Error::io("cannot read", &t.path, e))?;
        if sha256(&bytes) != t.sha256 {
            return Err(Error::Usage(format!(
                "{}: the trace file changed while the shard ran; run the shard again",
                crate::text::escape(&t.path.display().to_string())
            )));
        }
        contents.push(bytes);
    }
    Ok(manifest.file_names().into_iter().zip(contents).collect())
}

/// The scenario the shards ran, for `merge`: `shard`'s text, with the seed and replications
/// of its manifest, and the traces the shard stored (never the trace files themselves, which
/// need not be where `merge` runs). A stored trace that is not the one the manifest names is
/// refused.
pub fn load_scenario(shard: &ShardData) -> Result<ScenarioFile> {
    let m = &shard.manifest;
    let folder = Path::new(&m.file).parent().unwrap_or(Path::new(""));
    let copies = m
        .traces
        .iter()
        .enumerate()
        .map(|(k, t)| (t.file.clone(), shard.dir.join(trace_copy_name(k))));
    let traces = crate::scenario::trace::Traces::from_copies(folder, copies);
    let mut file = crate::scenario::sweep::load_with(&m.file, &shard.source, traces)
        .map_err(|errors| {
            if errors
                .0
                .iter()
                .any(|e| e.msg.contains(crate::scenario::trace::NO_COPY))
            {
                // Its manifest names no trace, yet its scenario reads one: a shard of a
                // herdsim that neither hashed nor copied traces.
                Error::Usage(format!(
                    "merge: {}: expected a copy of every trace file its scenario reads, found none stored in the shard (made by an earlier herdsim, which stored no trace copies); run this shard again with this version",
                    crate::text::escape(&shard.dir.display().to_string())
                ))
            } else {
                Error::Scenario(errors)
            }
        })?;
    for (k, t) in m.traces.iter().enumerate() {
        if file.traces.get(k).map(|read| &read.sha256) != Some(&t.sha256) {
            return Err(Error::Usage(format!(
                "merge: {}: {} does not match its checksum in manifest.json (altered or truncated); run this shard again",
                crate::text::escape(&shard.dir.display().to_string()),
                trace_copy_name(k)
            )));
        }
    }
    // An earlier version's manifest has no flags and applied its seed and replications to
    // every point; a key the file sweeps keeps each point's value instead (applying it would
    // be refused as a flag nobody gave).
    let unswept = |key: &str| !file.axes.iter().any(|a| a.path == key);
    let flags = m.flags.unwrap_or(RunFlags {
        seed: unswept("seed").then_some(m.seed),
        replications: unswept("replications").then_some(m.replications),
    });
    // As `run` applies them (which refuses a flag over a swept key, so only a hand-edited
    // manifest can hold one).
    file.apply_flags(flags.seed, flags.replications)
        .map_err(|e| Error::Usage(format!("merge: {e}")))?;
    Ok(file)
}

/// One shard read back from its folder.
#[derive(Debug)]
pub struct ShardData {
    /// Its folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The scenario text it ran.
    pub source: String,
    /// Its accumulators.
    pub partial: Partial,
}

/// The bytes of every shard folder's `partial.json` under `dir` (those that exist), to
/// estimate the memory of a merge before reading them.
pub fn partial_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("shard-"))
        .filter_map(|e| std::fs::metadata(e.path().join("partial.json")).ok())
        .map(|m| m.len())
        .sum()
}

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
/// one scenario hash, one shard count, one herdsim version, every shard and every job
/// exactly once, data files intact. Refusals are [`Error::Usage`] (exit 2).
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
        shards.push(ShardData {
            dir: folder,
            manifest,
            source,
            partial,
        });
    }
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
        let differs = |what: &str, a: &str, b: &str| foreign(format!("{what}: {b} vs {a}"));
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
            return Err(differs(
                "shard count",
                &first.shards.to_string(),
                &m.shards.to_string(),
            ));
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
            return Err(differs(
                "seed",
                &first.seed.to_string(),
                &m.seed.to_string(),
            ));
        }
        if m.replications != first.replications {
            return Err(differs(
                "replications",
                &first.replications.to_string(),
                &m.replications.to_string(),
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
    let missing: Vec<String> = (0..first.shards)
        .filter(|i| !shards.iter().any(|s| s.manifest.shard == *i))
        .map(|i| {
            folder_name(Shard {
                index: i,
                count: first.shards,
            })
        })
        .collect();
    if !missing.is_empty() {
        // Named up to a screenful: an array of a million tasks merged early would print
        // every one of them on one line.
        let named = match missing.len() {
            n if n <= MISSING_NAMED => missing.join(", "),
            n => format!(
                "{} and {} more",
                missing[..MISSING_NAMED].join(", "),
                n - MISSING_NAMED
            ),
        };
        return Err(Error::Usage(format!(
            "merge: {shown} lacks {} of {} shards: {named} (run them, then merge again)",
            missing.len(),
            first.shards,
        )));
    }
    let mut seen = vec![0u32; first.total_jobs];
    for s in &shards {
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
    Ok(shards)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_jobs_round_robin() {
        let s = Shard { index: 1, count: 3 };
        assert_eq!(s.jobs(8), vec![1, 4, 7]);
        assert_eq!(Shard { index: 0, count: 1 }.jobs(3), vec![0, 1, 2]);
    }
}
