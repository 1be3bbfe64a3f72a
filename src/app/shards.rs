//! Sharded runs: `run --shard` runs one shard of each scenario's jobs and writes its
//! partial results with a manifest; `merge` checks the shards of a run and writes the files
//! of the whole run, byte for byte those of an unsharded `run`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::progress::Progress;
use super::run::{Outputs, cut_short_warning, simulated_line, write_outputs};
use super::{print_stderr, print_stdout};
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::report::output_dir::{self, Staging};
use crate::report::{self, OutputLayout, console};
use crate::runner::{self, RunOptions};
use crate::scenario::sweep::ScenarioFile;

/// Runs one shard of every file (`--shard`) and writes each file's partial results into
/// `<out>/<name>/shard-i-of-n/`, replacing an earlier run of the same shard.
pub(super) fn run_shards(
    files: &[ScenarioFile],
    shard: crate::shard::ShardArg,
    args: &RunArgs,
    pool: &rayon::ThreadPool,
) -> Result<()> {
    use crate::shard::ShardArg;
    let shard = match shard {
        ShardArg::Fixed(s) => s,
        ShardArg::Auto => {
            crate::shard::shard_from_env(|k| std::env::var(k).ok(), args.shard_count)?
        }
    };
    // Each shard's folder, checked for every file before any runs, as `run` checks
    // `<out>/<name>`.
    let inputs: Vec<&Path> = files.iter().flat_map(|f| f.inputs()).collect();
    for file in files {
        let folder = args.out.join(&file.first().name);
        output_dir::check_replaceable(&folder.join(crate::shard::folder_name(shard)), &inputs)?;
    }
    // Each file's shard is put in place as soon as it is written: its folder is this shard's
    // alone, and holding the lock on `<out>/<name>` until every file has run would make the
    // other shards of the same sweep wait (or, given the files in another order, deadlock).
    // A shard that is missing because a later file failed is named by `merge`, and the
    // error says which were written before it ([`Error::AfterShardsWritten`]).
    let mut written = Vec::new();
    for file in files {
        run_file_shard(file, shard, args, pool, &mut written).map_err(|error| {
            if written.is_empty() {
                error
            } else {
                Error::AfterShardsWritten {
                    error: Box::new(error),
                    written: std::mem::take(&mut written),
                }
            }
        })?;
    }
    Ok(())
}

/// Runs and writes this shard of `file` (`run_shards`' loop body), adding its folder to
/// `written` as soon as it is in place (what follows, printing, may still fail).
fn run_file_shard(
    file: &ScenarioFile,
    shard: crate::runner::Shard,
    args: &RunArgs,
    pool: &rayon::ThreadPool,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
    use crate::shard::{Manifest, ManifestTrace, folder_name, run_hash, shard_files};
    {
        let first = file.first();
        let total = runner::plan(file).len();
        let mine = shard.jobs(total).len() as u64;
        let progress = Progress::new(file, mine, pool.current_num_threads(), args.quiet);
        let started = Instant::now();
        let options = RunOptions {
            record_requests: args.requests,
            // Always the first replication's sample (a few thousand attempts at most): the
            // merge may draw the raster chart although the shards were run without charts.
            sample_attempts: Some(args.attempts),
            on_events: Some(&|n| progress.events(n)),
        };
        let partial =
            pool.install(|| runner::run_shard(file, shard, options, &|| progress.run_done()));
        let wall = started.elapsed().as_secs_f64();
        progress.finish();
        let partial = partial?;
        let mut manifest = Manifest {
            herdsim: env!("CARGO_PKG_VERSION").to_string(),
            scenario: first.name.clone(),
            file: file.file.clone(),
            scenario_hash: run_hash(
                &file.source,
                file.trace_hashes(),
                first.seed,
                first.replications,
            ),
            seed: first.seed,
            replications: first.replications,
            shard: shard.index,
            shards: shard.count,
            total_jobs: total,
            jobs: partial.jobs.clone(),
            requests: args.requests,
            attempts: args.attempts,
            set: args
                .set
                .iter()
                .map(|s| format!("{}={}", s.path, s.text))
                .collect(),
            traces: file
                .traces
                .iter()
                .map(|t| ManifestTrace {
                    file: t.written.clone(),
                    sha256: t.sha256.clone(),
                })
                .collect(),
            partial_sha256: String::new(),
            flags: Some(crate::shard::RunFlags {
                seed: args.seed,
                replications: args.replications,
            }),
        };
        let files_bytes = shard_files(&mut manifest, file, &partial)?;
        let folder = args.out.join(&first.name);
        let staging = Staging::begin(&folder, &folder_name(shard), args.quiet)?;
        for (name, bytes) in &files_bytes {
            report::write_atomic(&staging.path().join(name), bytes)
                .map_err(|e| staging.name_target(e))?;
        }
        let target = staging.target().to_path_buf();
        staging.commit()?;
        written.push(target.clone());
        if !args.quiet {
            print_stdout(&format!(
                "{}: shard {} of {}: {mine} of {total} runs written to {}\n",
                first.name,
                shard.index,
                shard.count,
                crate::text::escape(&target.display().to_string())
            ))?;
        }
        // As `run` warns, whatever `--quiet` says: of this shard's runs.
        let cut_short = partial.groups.iter().flatten().map(|g| g.cut_short()).sum();
        if let Some(warning) = cut_short_warning(file, cut_short, mine) {
            print_stderr(&[warning]);
        }
        if !args.quiet {
            let events: u64 = partial.groups.iter().flatten().map(|g| g.events()).sum();
            print_stderr(&[simulated_line(&first.name, mine, events, wall)]);
        }
    }
    Ok(())
}

/// `path` with its links, `.` and `..` resolved: its nearest existing ancestor
/// canonicalised, the rest of it appended as written; `None` when nothing of it resolves.
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(found) = std::fs::canonicalize(at) {
            return Some(rest.iter().rev().fold(found, |p, c| p.join(c)));
        }
        rest.push(at.file_name()?.to_owned());
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
}

/// `herdsim merge DIR`: checks and merges the shards in DIR and writes the files of the
/// whole run, byte for byte those of an unsharded run, into DIR (keeping the shard
/// folders) or into `--out`.
pub(super) fn merge_command(args: &crate::cli::MergeArgs) -> Result<()> {
    // Every partial result is read into memory: refuse before reading what cannot fit.
    let partial = crate::shard::partial_bytes(&args.dir);
    let estimate = crate::limits::merge_estimate(partial);
    let memory = crate::limits::MemoryLimit::new(args.max_memory);
    if estimate > memory.bytes {
        return Err(Error::Limit(format!(
            "merge: {}: the shards' partial results ({}) need an estimated {} of memory to merge, more than the limit of {memory}: merge on a machine with more memory, or change the limit with --max-memory",
            crate::text::escape(&args.dir.display().to_string()),
            crate::limits::Bytes(partial),
            crate::limits::Bytes(estimate),
        )));
    }
    let shards = crate::shard::read_shards(&args.dir)?;
    let m = shards[0].manifest.clone();
    // The stored text already has the run's `--set` settings written in.
    let file = crate::shard::load_scenario(&shards[0])?;
    // Its PNG charts are drawn as `run` draws them, one per thread at once.
    if !args.no_charts && args.format.contains(&crate::cli::ChartFormat::Png) {
        let threads = rayon::current_num_threads() as u64;
        let charts = threads.saturating_mul(crate::limits::largest_png_chart(&file));
        if estimate.saturating_add(charts) > memory.bytes {
            return Err(Error::Limit(format!(
                "merge: {}: merging needs an estimated {} of memory ({} for the shards' partial results, {threads} x {} drawing PNG charts), more than the limit of {memory}: draw no PNG charts (--no-charts, or --format svg), or change the limit with --max-memory",
                crate::text::escape(&args.dir.display().to_string()),
                crate::limits::Bytes(estimate.saturating_add(charts)),
                crate::limits::Bytes(estimate),
                crate::limits::Bytes(charts / threads.max(1)),
            )));
        }
    }
    if runner::plan(&file).len() != m.total_jobs {
        return Err(Error::Usage(format!(
            "merge: the scenario of the shards plans {} jobs, their manifests {}",
            runner::plan(&file).len(),
            m.total_jobs
        )));
    }
    crate::shard::check_partials(&shards, &file)?;
    let partials: Vec<runner::Partial> = shards.iter().map(|s| s.partial.clone()).collect();
    let result = runner::merge(&file, partials);
    let outputs = Outputs {
        requests: m.requests,
        attempts: m.attempts,
        set: m
            .set
            .iter()
            .map(|s| crate::scenario::sweep::Setting::parse(s))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::Usage(format!("merge: a manifest's --set settings: {e}")))?,
        charts: (!args.no_charts).then(|| args.format.clone()),
        log_y: args.log_y,
    };
    let name = file.first().name.clone();
    // The shards' folder as the file system knows it: `.`, `..` and links name a folder
    // whose own name and parent only the resolved path gives.
    let dir = std::fs::canonicalize(&args.dir).unwrap_or_else(|_| args.dir.clone());
    let (out, in_place) = match &args.out {
        // `--out` naming the folder above the shards' (as the shards were run) merges in
        // place too: replacing that folder without its shards would delete them.
        Some(out) => {
            let target = std::fs::canonicalize(out.join(&name));
            // Deeper inside it, the shards would go with the folder replaced.
            if let Ok(target) = &target
                && dir.starts_with(target)
                && *target != dir
            {
                return Err(Error::Usage(format!(
                    "merge: --out {} would replace {}, which holds the shards in {}: give another --out, or none to merge in place",
                    crate::text::escape(&out.display().to_string()),
                    crate::text::escape(&out.join(&name).display().to_string()),
                    crate::text::escape(&args.dir.display().to_string()),
                )));
            }
            // Inside a shard's own folder, the merged run would sit among that shard's
            // files, and the next merge would read it as part of the shard (helper-98).
            // (A folder still to be made is where its nearest existing parent resolves.)
            let inside = resolved(out).and_then(|o| {
                shards
                    .iter()
                    .find(|s| std::fs::canonicalize(&s.dir).is_ok_and(|shard| o.starts_with(shard)))
            });
            if let Some(shard) = inside {
                return Err(Error::Usage(format!(
                    "merge: --out {} lies inside the shard folder {}: give another --out, or none to merge in place",
                    crate::text::escape(&out.display().to_string()),
                    crate::text::escape(&shard.dir.display().to_string()),
                )));
            }
            (out.clone(), target.is_ok_and(|t| t == dir))
        }
        None => (in_place_out(&args.dir, &dir), true),
    };
    if in_place && dir.file_name().is_none_or(|n| n.to_string_lossy() != name) {
        return Err(Error::Usage(format!(
            "merge: {} holds shards of scenario \"{name}\"; merging in place needs the folder to be named {name} (or give --out)",
            crate::text::escape(&args.dir.display().to_string())
        )));
    }
    output_dir::check_out(&out)?;
    // The scenario the shards were run from, where the merge can see it.
    output_dir::check_replaceable(&out.join(&name), &[Path::new(&m.file)])?;
    output_dir::install_signal_cleanup();
    let staging = Staging::begin(&out, &name, args.quiet)?;
    let layout = OutputLayout::at(staging.path());
    write_outputs(&layout, &file, &result, &outputs).map_err(|e| staging.name_target(e))?;
    if in_place {
        // The folder is replaced whole: the shards go along (copied, so a failed swap loses
        // nothing), and merging again gives the same files.
        for s in &shards {
            let to = staging
                .path()
                .join(s.dir.file_name().expect("a shard folder has a name"));
            std::fs::create_dir(&to).map_err(|e| Error::io("cannot create folder", &to, e))?;
            for f in s.manifest.file_names() {
                std::fs::copy(s.dir.join(&f), to.join(&f))
                    .map_err(|e| Error::io("cannot write", to.join(&f), e))?;
            }
        }
    }
    staging.commit()?;
    if !args.quiet {
        print_stdout(&console::table(&file, &result))?;
    }
    let runs = runner::plan(&file).len() as u64;
    if let Some(warning) = cut_short_warning(&file, result.cut_short, runs) {
        print_stderr(&[warning]);
    }
    Ok(())
}

/// The folder a merge in place writes into: the one above the shards' folder `given` (as
/// the user wrote it), which resolves to `resolved`. Named as the user wrote it when that
/// is the same folder (`output` for `output/sweep`, `.` for `sweep`), so messages read as
/// those of `run` do (links on the way included: `plink/sweep` names `plink`); otherwise
/// (`.`, `..`, or the shards' folder itself a link to elsewhere) by the resolved path.
fn in_place_out(given: &Path, resolved: &Path) -> PathBuf {
    let above = resolved
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let written = match given.parent() {
        Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
        Some(p) => p.to_path_buf(),
        None => return above,
    };
    let same =
        given.file_name().is_some() && std::fs::canonicalize(&written).is_ok_and(|w| w == above);
    if same { written } else { above }
}
