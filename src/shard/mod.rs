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
mod read;
pub use arg::{ShardArg, parse_shard, shard_from_env};
pub use read::{check_partials, read_shards};

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
