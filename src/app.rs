//! The commands behind the CLI: `run`, `check`, `schedule`, `compare`, `init`,
//! `completions` and `man`.
//!
//! Order of work, as in hyperfine's `main`: load and validate *every* scenario first (a
//! refused scenario writes nothing), then run each one on a rayon pool of `--threads`
//! workers, then hand the results to the exporters in [`crate::report`]. Only this module
//! and `report` print; the library below them returns data.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::{RngExt, SeedableRng};

use crate::cli::{
    CheckArgs, Cli, Command, CompareArgs, CompletionsArgs, InitArgs, ManArgs, RunArgs, ScheduleArgs,
};
use crate::engine::SimRng;
use crate::error::{Error, Result, ScenarioError, ScenarioErrors};
use crate::limits::{self, MAX_REPLICATIONS, MAX_THREADS, MemoryLimit};
use crate::model::Source;
use crate::model::backoff::Backoff;
use crate::model::policy::{Beyond, RetryAfterPolicy, next_delay, parse_retry_after_header};
use crate::report::output_dir::{self, Staging};
use crate::report::{self, OutputLayout, console};
use crate::runner::{self, RunOptions, ScenarioResult};
use crate::scenario::sweep::{ScenarioFile, Setting, load_with_settings};
use crate::scenario::{QUICKSTART, QUICKSTART_NAME};
use crate::time::SimDuration;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run_command(&args),
        Command::Check(args) => check_command(&args),
        Command::Schedule(args) => schedule_command(&args),
        Command::Merge(args) => merge_command(&args),
        Command::Compare(args) => compare_command(&args),
        Command::Init(args) => init_command(&args),
        Command::Completions(args) => completions_command(&args),
        Command::Man(args) => man_command(&args),
    }
}

/// Reads, validates and expands scenario files, after writing `settings` (`--set`) into
/// each; the built-in quickstart when `paths` is empty. Problems of every file are reported
/// together.
pub fn load_files(paths: &[PathBuf], settings: &[Setting]) -> Result<Vec<ScenarioFile>> {
    if paths.is_empty() {
        // Built in: its trace paths (it has none today) would start from here.
        return load_with_settings(QUICKSTART_NAME, QUICKSTART, Path::new(""), settings)
            .map(|f| vec![f])
            .map_err(Error::Scenario);
    }
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        match std::fs::read_to_string(path) {
            Err(e) => errors.push(ScenarioError {
                file: name,
                line: None,
                col: None,
                key: String::new(),
                msg: format!("cannot read the scenario file: {e}"),
            }),
            Ok(src) => match load_with_settings(
                &name,
                &src,
                path.parent().unwrap_or(Path::new("")),
                settings,
            ) {
                Ok(f) => files.push(f),
                Err(ScenarioErrors(mut e)) => errors.append(&mut e),
            },
        }
    }
    for (i, f) in files.iter().enumerate() {
        let name = &f.first().name;
        if let Some(other) = files[..i].iter().find(|g| &g.first().name == name) {
            let (line, col) = crate::scenario::name_position(&f.source);
            errors.push(ScenarioError {
                file: f.file.clone(),
                line,
                col,
                key: "name".into(),
                msg: format!(
                    "expected a name not used by another scenario of this run (both write to the same folder), found \"{name}\" also in {}",
                    other.file
                ),
            });
        }
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(Error::Scenario(ScenarioErrors(errors)))
    }
}

fn check_command(args: &CheckArgs) -> Result<()> {
    let files = load_files(&args.scenarios, &args.set)?;
    let mut out = String::new();
    for f in &files {
        let s = f.first();
        out.push_str(&format!(
            "{}: ok ({}: {}, {} strategies, {} replications{})\n",
            crate::text::escape(&f.file),
            s.name,
            check_counts(f),
            s.strategies.len(),
            s.replications,
            if f.points.len() > 1 {
                format!(", {} sweep points", f.points.len())
            } else {
                String::new()
            }
        ));
    }
    print_stdout(&out)
}

/// Who calls what, for `check`: `50 clients` for one closed population and one server (v1);
/// else the populations by kind, and the services when there are several.
fn check_counts(f: &ScenarioFile) -> String {
    let s = f.first();
    let closed = s.populations.iter().filter(|p| p.is_closed()).count();
    let mut text = if s.populations.len() == 1 && closed == 1 {
        format!("{} clients", console::client_range(f))
    } else {
        let count =
            |kind: fn(&Source) -> bool| s.populations.iter().filter(|p| kind(&p.source)).count();
        let mut kinds = Vec::new();
        if closed > 0 {
            kinds.push(format!("{} closed clients", console::client_range(f)));
        }
        let open = count(|k| matches!(k, Source::Open(_)));
        if open > 0 {
            kinds.push(format!("{open} open"));
        }
        let trace = count(|k| matches!(k, Source::Trace(_)));
        if trace > 0 {
            kinds.push(format!("{trace} trace"));
        }
        let n = s.populations.len();
        format!(
            "{n} population{} ({})",
            if n == 1 { "" } else { "s" },
            kinds.join(", ")
        )
    };
    if s.services.len() > 1 {
        text.push_str(&format!(", {} services", s.services.len()));
    }
    text
}

fn run_command(args: &RunArgs) -> Result<()> {
    if let Some(t) = args.threads
        && !(1..=MAX_THREADS).contains(&t)
    {
        return Err(Error::Usage(format!(
            "--threads: expected a number from 1 to {MAX_THREADS}, found {t}"
        )));
    }
    if args.shard_count.is_some() && !matches!(args.shard, Some(crate::shard::ShardArg::Auto)) {
        // Silently ignoring it would run another split than the user asked for.
        return Err(Error::Usage(
            "--shard-count: only read with --shard auto (a Kubernetes Indexed Job's completions); with --shard I/N the count is N".into(),
        ));
    }
    if let Some(r) = args.replications
        && !(1..=MAX_REPLICATIONS).contains(&r)
    {
        return Err(Error::Usage(format!(
            "--replications: expected a number from 1 to {MAX_REPLICATIONS}, found {r}"
        )));
    }
    let mut files = load_files(&args.scenarios, &args.set)?;
    for f in &mut files {
        for p in &mut f.points {
            if let Some(seed) = args.seed {
                p.scenario.seed = seed;
            }
            if let Some(r) = args.replications {
                p.scenario.replications = r;
            }
        }
    }
    // Every file is checked against the limits before anything runs or is written.
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let memory = MemoryLimit::new(args.max_memory);
    let sample_attempts = sample_attempts(args);
    for f in &files {
        check_limits(f, threads, args.requests, sample_attempts, memory)?;
    }
    output_dir::check_out(&args.out)?;
    output_dir::install_signal_cleanup();
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = args.threads {
        pool = pool.num_threads(t);
    }
    let pool = pool
        .build()
        .map_err(|e| Error::io("cannot start", "the thread pool", std::io::Error::other(e)))?;

    if let Some(shard) = args.shard {
        return run_shards(&files, shard, args, &pool);
    }
    for file in &files {
        let total: u64 = runner::plan(file).len() as u64;
        let progress = Progress::new(file, total, threads, args.quiet);
        let started = Instant::now();
        let result = pool.install(|| {
            runner::run_scenario(
                file,
                RunOptions {
                    record_requests: args.requests,
                    sample_attempts,
                    on_events: Some(&|n| progress.events(n)),
                },
                &|| progress.run_done(),
            )
        });
        let wall = started.elapsed().as_secs_f64();
        progress.finish();
        let result = result?;
        // Written into a fresh folder that replaces <out>/<name> whole once complete.
        let staging = Staging::begin(&args.out, &file.first().name)?;
        let layout = OutputLayout::at(staging.path());
        let outputs = Outputs {
            requests: args.requests,
            attempts: args.attempts,
            set: args.set.clone(),
            charts: (!args.no_charts).then(|| args.format.clone()),
            log_y: args.log_y,
        };
        write_outputs(&layout, file, &result, &outputs).map_err(|e| staging.name_target(e))?;
        staging.commit()?;
        if !args.quiet {
            print_stdout(&console::table(file, &result))?;
        }
        report_closing(file, &result, wall, total, args.quiet);
    }
    Ok(())
}

/// Refuses a file whose runs exceed [`limits::MAX_RUNS`] or whose estimated memory exceeds
/// `memory` (exit 2), naming the numbers and what to change.
fn check_limits(
    file: &ScenarioFile,
    threads: usize,
    requests: bool,
    attempts: Option<bool>,
    memory: MemoryLimit,
) -> Result<()> {
    let estimate = limits::estimate(file, threads, requests, attempts);
    let s = file.first();
    if estimate.runs > limits::MAX_RUNS {
        return Err(Error::Limit(format!(
            "{}: {} runs ({} sweep points x {} strategies x {} replications), more than the {} one scenario may ask for: sweep fewer values or lower replications (--replications)",
            file.file,
            estimate.runs,
            file.points.len(),
            s.strategies.len(),
            s.replications,
            limits::MAX_RUNS
        )));
    }
    if estimate.total > memory.bytes {
        return Err(Error::Limit(format!(
            "{}: this run needs an estimated {estimate} of memory, more than the limit of {memory}. Lower clients.count, clients.requests, replications or the sweep, raise metrics.bucket or lower time_limit{}; or change the limit with --max-memory",
            file.file,
            match (requests, attempts == Some(true)) {
                (true, true) => ", drop --requests or --attempts",
                (true, false) => ", drop --requests",
                (false, true) => ", drop --attempts",
                (false, false) => "",
            }
        )));
    }
    Ok(())
}

/// A run stopped because simulated time stopped advancing: a problem of the scenario (exit
/// 2), found only by running it; nothing of that scenario is written.
/// What a run writes besides the CSV files every run writes.
struct Outputs {
    /// `requests.csv`.
    requests: bool,
    /// `attempts.csv`.
    attempts: bool,
    /// The `--set` settings, reported in `summary.json`.
    set: Vec<crate::scenario::sweep::Setting>,
    /// Charts in these formats and report.html.
    charts: Option<Vec<crate::cli::ChartFormat>>,
    /// `--log-y`: every chart's value axis logarithmic.
    log_y: bool,
}

/// Runs one shard of every file (`--shard`) and writes each file's partial results into
/// `<out>/<name>/shard-i-of-n/`, replacing an earlier run of the same shard.
fn run_shards(
    files: &[ScenarioFile],
    shard: crate::shard::ShardArg,
    args: &RunArgs,
    pool: &rayon::ThreadPool,
) -> Result<()> {
    use crate::shard::{Manifest, ShardArg, folder_name, run_hash, shard_files};
    let shard = match shard {
        ShardArg::Fixed(s) => s,
        ShardArg::Auto => {
            crate::shard::shard_from_env(|k| std::env::var(k).ok(), args.shard_count)?
        }
    };
    for file in files {
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
            scenario_hash: run_hash(&file.source, first.seed, first.replications),
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
            partial_sha256: String::new(),
        };
        let files_bytes = shard_files(&mut manifest, &file.source, &partial)?;
        let folder = args.out.join(&first.name);
        let staging = Staging::begin(&folder, &folder_name(shard))?;
        for (name, bytes) in &files_bytes {
            report::write_atomic(&staging.path().join(name), bytes)
                .map_err(|e| staging.name_target(e))?;
        }
        let target = staging.target().to_path_buf();
        staging.commit()?;
        if !args.quiet {
            print_stdout(&format!(
                "{}: shard {} of {}: {mine} of {total} runs written to {}\n",
                first.name,
                shard.index,
                shard.count,
                crate::text::escape(&target.display().to_string())
            ))?;
            let events: u64 = partial.groups.iter().flatten().map(|g| g.events()).sum();
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "{}: {mine} runs, {events} events simulated in {wall:.3} s wall",
                first.name
            );
        }
    }
    Ok(())
}

/// `herdsim merge DIR`: checks and merges the shards in DIR and writes the files of the
/// whole run, byte for byte those of an unsharded run, into DIR (keeping the shard
/// folders) or into `--out`.
fn merge_command(args: &crate::cli::MergeArgs) -> Result<()> {
    let shards = crate::shard::read_shards(&args.dir)?;
    let m = shards[0].manifest.clone();
    // The stored text already has the run's `--set` settings written in.
    let mut file =
        crate::scenario::sweep::load_str(&m.file, &shards[0].source).map_err(Error::Scenario)?;
    for p in &mut file.points {
        p.scenario.seed = m.seed;
        p.scenario.replications = m.replications;
    }
    if runner::plan(&file).len() != m.total_jobs {
        return Err(Error::Usage(format!(
            "merge: the scenario of the shards plans {} jobs, their manifests {}",
            runner::plan(&file).len(),
            m.total_jobs
        )));
    }
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
    let (out, in_place) = match &args.out {
        Some(out) => (out.clone(), false),
        None => (
            args.dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            true,
        ),
    };
    if in_place
        && args
            .dir
            .file_name()
            .is_none_or(|n| n.to_string_lossy() != name)
    {
        return Err(Error::Usage(format!(
            "merge: {} holds shards of scenario \"{name}\"; merging in place needs the folder to be named {name} (or give --out)",
            crate::text::escape(&args.dir.display().to_string())
        )));
    }
    output_dir::check_out(&out)?;
    output_dir::install_signal_cleanup();
    let staging = Staging::begin(&out, &name)?;
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
            for f in ["manifest.json", "scenario.toml", "partial.json"] {
                std::fs::copy(s.dir.join(f), to.join(f))
                    .map_err(|e| Error::io("cannot write", to.join(f), e))?;
            }
        }
    }
    staging.commit()?;
    if !args.quiet {
        print_stdout(&console::table(&file, &result))?;
    }
    Ok(())
}

fn write_outputs(
    layout: &OutputLayout,
    file: &ScenarioFile,
    result: &ScenarioResult,
    args: &Outputs,
) -> Result<()> {
    layout.create()?;
    let seed = file.first().seed;
    report::write_atomic(
        &layout.summary_csv(),
        &report::csv::summary_csv(&file.axes, result, seed)?,
    )?;
    report::write_atomic(
        &layout.summary_json(),
        &report::json::summary_json(file, result, seed, &args.set)?,
    )?;
    let timeseries = layout.timeseries_csv();
    report::write_atomic_with(&timeseries, |tmp| {
        // The temporary file exists (created exclusively): opened without creating.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(tmp)
            .map_err(|e| Error::io("cannot write", &timeseries, e))?;
        report::csv::write_timeseries_csv(file, result, f, &timeseries)
    })?;
    report::write_atomic(
        &layout.csv("services"),
        &report::csv::services_csv(&file.axes, result)?,
    )?;
    report::write_atomic(
        &layout.csv("populations"),
        &report::csv::populations_csv(&file.axes, result)?,
    )?;
    report::write_atomic(
        &layout.csv("paired"),
        &report::csv::paired_csv(&file.axes, result)?,
    )?;
    if args.requests {
        report::write_atomic(
            &layout.requests_csv(),
            &report::csv::requests_csv(file, result)?,
        )?;
    }
    if args.attempts {
        report::write_atomic(
            &layout.csv("attempts"),
            &report::csv::attempts_csv(file, result)?,
        )?;
    }
    if let Some(format) = &args.charts {
        report::write_charts_and_report(
            layout,
            file,
            result,
            format,
            &report::ChartOptions { log_y: args.log_y },
        )?;
    }
    Ok(())
}

/// Whether runs record the attempt sample: in every replication with `--attempts`
/// (attempts.csv), else in the first replication only when the raster chart needs it.
fn sample_attempts(args: &RunArgs) -> Option<bool> {
    if args.attempts {
        Some(true)
    } else {
        (!args.no_charts).then_some(false)
    }
}

/// Events a run is assumed to simulate per client request before any run of the file has
/// finished: the quickstart herd's 26 (the outage herd retries several times). A steadier
/// workload needs fewer, so the bar jumps ahead when the first run ends rather than
/// stalling near its end.
const EVENTS_PER_REQUEST: u64 = 26;

/// The progress bar of one scenario file on stderr: runs done, events simulated, and a bar
/// over the estimated events of the whole file, so it moves inside long runs. Hidden with
/// `--quiet` or when stderr is not a terminal.
struct Progress {
    bar: ProgressBar,
    runs: u64,
    threads: u64,
    prior: u64,
    events: AtomicU64,
    done: AtomicU64,
}

impl Progress {
    fn new(file: &ScenarioFile, runs: u64, threads: usize, quiet: bool) -> Progress {
        let prior = file
            .points
            .iter()
            .map(|p| {
                let s = &p.scenario;
                limits::requests_per_run(s)
                    .saturating_mul(EVENTS_PER_REQUEST)
                    .saturating_mul(s.strategies.len() as u64 * s.replications as u64)
            })
            .fold(0, u64::saturating_add)
            .max(1);
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(Some(prior), ProgressDrawTarget::stderr());
            bar.set_message(progress_message(0, runs, 0));
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {msg}, {elapsed} elapsed, ETA {eta}",
            )
            .expect("static template is valid")
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(file.first().name.clone());
            bar
        };
        let progress = Progress {
            bar,
            runs,
            threads: threads.max(1) as u64,
            prior,
            events: AtomicU64::new(0),
            done: AtomicU64::new(0),
        };
        progress.update();
        progress
    }

    /// Called from worker threads with the events simulated since the last call.
    fn events(&self, n: u64) {
        self.events.fetch_add(n, Ordering::Relaxed);
        self.update();
    }

    /// Called from worker threads when a run has ended.
    fn run_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.update();
    }

    fn update(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let events = self.events.load(Ordering::Relaxed);
        let done = self.done.load(Ordering::Relaxed);
        let total = estimate_events(self.runs, done, self.threads, events, self.prior);
        self.bar.set_length(total);
        self.bar.set_position(events.min(total));
        self.bar
            .set_message(progress_message(done, self.runs, events));
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The estimated events of all `runs` of a file, `done` of them finished, `events`
/// simulated so far on `threads` workers: before a run has finished, `prior` (grown as the
/// events pass 90% of it); after, the mean per run so far (in-progress runs counted as half
/// done) times the runs. Never below the events simulated so far.
pub fn estimate_events(runs: u64, done: u64, threads: u64, events: u64, prior: u64) -> u64 {
    let grown = events.saturating_add(events / 9);
    if done == 0 {
        return prior.max(grown);
    }
    let running = threads.min(runs.saturating_sub(done));
    let per_run = events as f64 / (done as f64 + 0.5 * running as f64);
    let total = (per_run * runs as f64) as u64;
    if done >= runs {
        events
    } else {
        total.max(grown)
    }
}

/// The text beside the bar: `2/4 runs, 53.1 M events`.
pub fn progress_message(done: u64, runs: u64, events: u64) -> String {
    let events = if events >= 1_000_000 {
        format!("{:.1} M", events as f64 / 1e6)
    } else if events >= 1_000 {
        format!("{:.0} k", events as f64 / 1e3)
    } else {
        events.to_string()
    };
    format!("{done}/{runs} runs, {events} events")
}

fn report_closing(file: &ScenarioFile, result: &ScenarioResult, wall: f64, runs: u64, quiet: bool) {
    let name = &file.first().name;
    let mut err = std::io::stderr().lock();
    if result.cut_short > 0 {
        let _ = writeln!(
            err,
            "warning: {name}: time_limit ({}) cut {} of {runs} runs short; their open requests count as gave_up (time_limit)",
            file.first().time_limit,
            result.cut_short
        );
    }
    if !quiet {
        let rate = result.events as f64 / wall.max(1e-9);
        let _ = writeln!(
            err,
            "{name}: {runs} runs, {} events simulated in {wall:.3} s wall ({:.1} M events/s)",
            result.events,
            rate / 1e6
        );
    }
}

/// Writes to stdout; a closed pipe (`herdsim run | head`) is not an error, so it ends
/// quietly with status 0, as ripgrep does.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("cannot write to", Path::new("<stdout>"), e)),
        Ok(()) => Ok(()),
    }
}

/// The table `herdsim schedule` prints: per retry, the un-jittered ladder, a few sample
/// clients' delays, and min / max / distinct count across all clients.
pub fn schedule_table(args: &ScheduleArgs) -> Result<String> {
    if args.multiplier.is_nan() || args.multiplier < 1.0 {
        return Err(Error::Usage(format!(
            "--multiplier: expected a number >= 1, found {}",
            args.multiplier
        )));
    }
    if args.cap < args.base {
        return Err(Error::Usage(format!(
            "--cap: expected cap >= base ({}), found {}",
            args.base, args.cap
        )));
    }
    if args.clients == 0 || args.attempts == 0 {
        return Err(Error::Usage(
            "--clients and --attempts: expected numbers >= 1, found 0".into(),
        ));
    }
    let backoff = Backoff {
        base: args.base,
        cap: args.cap,
        multiplier: args.multiplier,
        jitter: args.jitter,
    };
    let policy = RetryAfterPolicy {
        honor: true,
        max: args.retry_after_max,
        beyond: Beyond::Ignore,
    };
    let hint = args
        .retry_after
        .as_deref()
        .map(|h| parse_retry_after_header(h).unwrap_or(SimDuration::ZERO));
    let retries = args.attempts - 1;
    // Every delay is kept (the distinct count needs them all): refuse before allocating
    // when they would not fit, rather than abort on a failed allocation.
    let memory = MemoryLimit::new(args.max_memory);
    let needed = (args.clients as u64)
        .saturating_mul(retries as u64)
        .saturating_mul(std::mem::size_of::<SimDuration>() as u64)
        .saturating_add(limits::BASE_BYTES);
    if needed > memory.bytes {
        return Err(Error::Limit(format!(
            "schedule: {} clients x {retries} retries need an estimated {} of memory, more than the limit of {memory}: lower --clients or --attempts, or change the limit with --max-memory",
            args.clients,
            limits::Bytes(needed)
        )));
    }
    // columns[retry][client], each client drawing from its own seeded stream.
    let mut columns: Vec<Vec<SimDuration>> = (0..retries)
        .map(|_| Vec::with_capacity(args.clients as usize))
        .collect();
    for client in 0..args.clients {
        let seed = runner::derive_seed(args.seed, 0, client, 0);
        let mut rng = SimRng::from_seed(seed);
        let mut prev = backoff.base;
        for (n, column) in (1..=retries).zip(&mut columns) {
            let u = rng.random::<f64>();
            let d = next_delay(&backoff, &policy, n, prev, hint, u);
            prev = d;
            column.push(d);
        }
    }
    let ms = |d: SimDuration| report::fmt_num((d.as_secs_f64() * 1e6).round() / 1e3);
    let samples = args.clients.min(3) as usize;
    let mut out = format!(
        "schedule: base {}, cap {}, multiplier {}, jitter {}, {} attempts, {} clients, seed {}{}\ndelays in ms\n",
        args.base,
        args.cap,
        args.multiplier,
        args.jitter.describe(),
        args.attempts,
        args.clients,
        args.seed,
        args.retry_after
            .as_ref()
            .map(|h| format!(", Retry-After \"{h}\""))
            .unwrap_or_default()
    );
    let mut rows = vec![{
        let mut h = vec!["retry".to_string(), "expo".to_string()];
        h.extend((0..samples).map(|c| format!("client-{c}")));
        h.extend(["min", "max", "distinct"].map(String::from));
        h
    }];
    for (r, column) in columns.iter_mut().enumerate() {
        let mut row = vec![(r + 1).to_string(), ms(backoff.expo(r as u32 + 1))];
        row.extend(column.iter().take(samples).map(|d| ms(*d)));
        // Sorted in place, once its samples are taken: no copy of the column.
        column.sort_unstable();
        let distinct = 1 + column.windows(2).filter(|w| w[0] != w[1]).count();
        row.extend([
            ms(*column.first().expect("clients >= 1")),
            ms(*column.last().expect("clients >= 1")),
            distinct.to_string(),
        ]);
        rows.push(row);
        // Freed as soon as it is printed.
        *column = Vec::new();
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    Ok(out)
}

fn schedule_command(args: &ScheduleArgs) -> Result<()> {
    let table = schedule_table(args)?;
    print_stdout(&table)
}

fn compare_command(args: &CompareArgs) -> Result<()> {
    let a = crate::compare::read_summary(&args.a)?;
    let b = crate::compare::read_summary(&args.b)?;
    let table = crate::compare::compare(&a, &b, &args.metrics)?;
    print_stdout(&table)
}

/// Writes the starter scenario to a new file (never over an existing one: exit 2), or to
/// stdout for `-`.
fn init_command(args: &InitArgs) -> Result<()> {
    let text = crate::scenario::starter(&args.file);
    if args.file.as_os_str() == "-" {
        return print_stdout(&text);
    }
    let shown = crate::text::escape(&args.file.display().to_string()).to_string();
    // Created exclusively: an existing file, or a link planted at the name, is never
    // written through.
    let mut f = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.file)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Error::Usage(format!(
                "init: {shown} already exists; herdsim init never overwrites a file: name another file (herdsim init my-scenario.toml) or remove this one"
            )));
        }
        Err(e) => return Err(Error::io("cannot create", &args.file, e)),
    };
    if let Err(e) = f.write_all(text.as_bytes()).and_then(|_| f.sync_all()) {
        drop(f);
        let _ = std::fs::remove_file(&args.file);
        return Err(Error::io("cannot write", &args.file, e));
    }
    print_stdout(&format!(
        "wrote {shown}: a commented scenario to edit; then `herdsim check {shown}` and `herdsim run {shown}`\n"
    ))
}

fn completions_command(args: &CompletionsArgs) -> Result<()> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(args.shell, &mut command, "herdsim", &mut bytes);
    print_stdout(&String::from_utf8_lossy(&bytes))
}

/// The roff manual page of herdsim, or of one of its commands (`herdsim-run(1)`).
pub fn man_page(command: Option<&str>) -> Result<String> {
    use clap::CommandFactory;
    let mut root = Cli::command();
    root.build();
    let page = match command {
        None => root,
        Some(name) => {
            let names: Vec<String> = root
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .filter(|n| n != "help")
                .collect();
            let sub = root
                .find_subcommand(name)
                .filter(|_| name != "help")
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "man: expected one of {}, found \"{name}\"",
                        names.join(", ")
                    ))
                })?
                .clone();
            // clap names commands with static strings; one page per process, so leaked once.
            let full: &'static str = Box::leak(format!("herdsim-{name}").into_boxed_str());
            sub.name(full)
                .bin_name(full)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut bytes)
        .map_err(|e| Error::io("cannot format", "<manual page>", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn man_command(args: &ManArgs) -> Result<()> {
    print_stdout(&man_page(args.command.as_deref())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_estimate_moves_inside_runs_and_settles_on_the_count() {
        // Nothing finished: the prior, until the events near it.
        assert_eq!(estimate_events(4, 0, 2, 1_000, 100_000), 100_000);
        assert_eq!(estimate_events(4, 0, 2, 99_000, 100_000), 110_000);
        // One of 4 runs done, 2 in progress on 2 threads: 3 M events are 2 runs' worth.
        assert_eq!(estimate_events(4, 1, 2, 3_000_000, 1), 6_000_000);
        // All done: exactly the events.
        assert_eq!(estimate_events(4, 4, 2, 6_100_000, 1), 6_100_000);
    }

    #[test]
    fn the_progress_message_counts_runs_and_events() {
        assert_eq!(
            progress_message(2, 4, 53_140_000),
            "2/4 runs, 53.1 M events"
        );
        assert_eq!(progress_message(0, 4, 262_144), "0/4 runs, 262 k events");
        assert_eq!(progress_message(0, 4, 12), "0/4 runs, 12 events");
    }
}
