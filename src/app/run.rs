//! `herdsim run`: the command-line checks (threads, memory, shards), the runs of every
//! loaded scenario on a rayon pool with a progress bar, and the outputs written through a
//! staging folder, so a run that fails leaves no half-written results.

use std::time::Instant;

use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::limits::{self, MAX_REPLICATIONS, MAX_THREADS, MemoryLimit};
use crate::report::output_dir::{self, Staging};
use crate::report::{self, OutputLayout, console};
use crate::runner::{self, RunOptions, ScenarioResult};
use crate::scenario::sweep::ScenarioFile;
use crate::text::counted;

use super::load::load_files;
use super::progress::Progress;
use super::shards::run_shards;
use super::{print_stderr, print_stdout, warnings};

pub(super) fn run_command(args: &RunArgs) -> Result<()> {
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
    // `--seed 1 --set seed=3`: one would win silently, and one of them is a mistake.
    for (flag, value, key) in [
        ("--seed", args.seed.map(|s| s.to_string()), "seed"),
        (
            "--replications",
            args.replications.map(|r| r.to_string()),
            "replications",
        ),
    ] {
        if let Some(value) = value
            && let Some(set) = args.set.iter().find(|s| s.key() == key)
        {
            return Err(Error::Usage(format!(
                "{flag} {value} and {} set the same key `{key}`: give it once",
                set.flag()
            )));
        }
    }
    let mut files = load_files(&args.scenarios, &args.set)?;
    for f in &mut files {
        f.apply_flags(args.seed, args.replications)
            .map_err(Error::Usage)?;
    }
    // Every file is checked against the limits before anything runs or is written.
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let memory = MemoryLimit::new(args.max_memory);
    let sample_attempts = sample_attempts(args);
    for f in &files {
        check_limits(
            f,
            threads,
            args.requests,
            sample_attempts,
            memory,
            args.shard.is_some(),
            // A shard draws no chart; its merge does, and checks its own estimate.
            args.shard.is_none()
                && !args.no_charts
                && args.format.contains(&crate::cli::ChartFormat::Png),
        )?;
    }
    output_dir::check_out(&args.out)?;
    // Every output folder against every input of the command: one file's folder may hold
    // another's scenario. For a sharded run, `<out>/<name>` is the folder of its shards,
    // which `merge` replaces in place; each shard's folder is checked once the shard is
    // known.
    let inputs: Vec<&std::path::Path> = files.iter().flat_map(|f| f.inputs()).collect();
    for f in &files {
        output_dir::check_replaceable(&args.out.join(&f.first().name), &inputs)?;
    }
    for f in &files {
        print_stderr(&warnings(f));
    }
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
    // Every file's outputs wait in their staging folders until every file has run: a later
    // file whose run fails (simulated time stopped advancing: exit 2) leaves every output
    // folder as it was, as its message says.
    let mut finished = Vec::with_capacity(files.len());
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
        let staging = Staging::begin(&args.out, &file.first().name, args.quiet)?;
        let layout = OutputLayout::at(staging.path());
        let outputs = Outputs {
            requests: args.requests,
            attempts: args.attempts,
            set: args.set.clone(),
            charts: (!args.no_charts).then(|| args.format.clone()),
            log_y: args.log_y,
        };
        write_outputs(&layout, file, &result, &outputs).map_err(|e| staging.name_target(e))?;
        let table = (!args.quiet).then(|| console::table(file, &result));
        let closing = closing_lines(file, &result, wall, total, args.quiet);
        finished.push((staging, table, closing));
    }
    // Every folder first, then the tables: a closed stdout must not leave files unput.
    let mut reports = Vec::with_capacity(finished.len());
    for (staging, table, closing) in finished {
        staging.commit()?;
        reports.push((table, closing));
    }
    for (table, closing) in reports {
        if let Some(table) = table {
            print_stdout(&table)?;
        }
        print_stderr(&closing);
    }
    Ok(())
}

/// Refuses a file whose runs exceed [`limits::MAX_RUNS`] or whose estimated memory exceeds
/// `memory` (exit 2), naming the numbers and what to change. `sharded`: for one shard of
/// it, which holds every group's accumulator until the end. `png_charts`: PNG charts are
/// drawn after the runs.
pub(super) fn check_limits(
    file: &ScenarioFile,
    threads: usize,
    requests: bool,
    attempts: Option<bool>,
    memory: MemoryLimit,
    sharded: bool,
    png_charts: bool,
) -> Result<()> {
    let mut estimate = limits::estimate(file, threads, requests, attempts);
    if png_charts {
        // Charts are drawn on the global thread pool, whatever `--threads` says.
        estimate = estimate.drawing_png_charts(file, rayon::current_num_threads());
    }
    if sharded {
        let groups = file
            .points
            .iter()
            .map(|p| p.scenario.strategies.len() as u64);
        estimate = estimate.holding_every_group(groups.sum());
    }
    let s = file.first();
    if estimate.runs > limits::MAX_RUNS {
        return Err(Error::Limit(format!(
            "{}: {} runs ({} x {} x {}), more than the {} one scenario may ask for: sweep fewer values or lower replications (--replications)",
            file.file,
            estimate.runs,
            counted(file.points.len(), "sweep point", "sweep points"),
            counted(s.strategies.len(), "strategy", "strategies"),
            counted(console::replications(file), "replication", "replications"),
            limits::MAX_RUNS
        )));
    }
    if estimate.total > memory.bytes {
        // Name the keys that set the number of requests in this file's populations.
        use crate::model::Source;
        let has = |kind: fn(&Source) -> bool| s.populations.iter().any(|p| kind(&p.source));
        let mut knobs = Vec::new();
        if has(|k| matches!(k, Source::Closed(_))) {
            knobs.push("the clients' count or requests");
        }
        if has(|k| matches!(k, Source::Open(_))) {
            knobs.push("the arrival rate or its window (start, end)");
        }
        if has(|k| matches!(k, Source::Trace(_))) {
            knobs.push("the trace's rows");
        }
        return Err(Error::Limit(format!(
            "{}: this run needs an estimated {estimate} of memory, more than the limit of {memory}. Lower {}, replications or the sweep, raise metrics.bucket or lower time_limit{}{}; or change the limit with --max-memory",
            file.file,
            knobs.join(", "),
            match (requests, attempts == Some(true)) {
                (true, true) => ", drop --requests or --attempts",
                (true, false) => ", drop --requests",
                (false, true) => ", drop --attempts",
                (false, false) => "",
            },
            if estimate.per_chart > 0 {
                ", draw no PNG charts (--no-charts, or --format svg)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// What a run writes besides the CSV files every run writes.
pub(super) struct Outputs {
    /// `requests.csv`.
    pub(super) requests: bool,
    /// `attempts.csv`.
    pub(super) attempts: bool,
    /// The `--set` settings, reported in `summary.json`.
    pub(super) set: Vec<crate::scenario::sweep::Setting>,
    /// Charts in these formats and report.html.
    pub(super) charts: Option<Vec<crate::cli::ChartFormat>>,
    /// `--log-y`: every chart's value axis logarithmic.
    pub(super) log_y: bool,
}

pub(super) fn write_outputs(
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

/// The lines a finished scenario prints on stderr: a warning when `time_limit` cut runs
/// short, then (unless `quiet`) what was simulated and how fast.
fn closing_lines(
    file: &ScenarioFile,
    result: &ScenarioResult,
    wall: f64,
    runs: u64,
    quiet: bool,
) -> Vec<String> {
    let name = &file.first().name;
    let mut lines: Vec<String> = cut_short_warning(file, result.cut_short, runs)
        .into_iter()
        .collect();
    if !quiet {
        lines.push(simulated_line(name, runs, result.events, wall));
    }
    lines
}

/// The warning that `cut_short` of `runs` runs of `file` reached its time limit with work
/// left (`None` when none did). Printed whatever `--quiet` says, by `run`, by each shard of
/// a sharded run (its own runs) and by `merge` (all of them).
pub(super) fn cut_short_warning(file: &ScenarioFile, cut_short: u32, runs: u64) -> Option<String> {
    (cut_short > 0).then(|| {
        format!(
            "warning: {}: time_limit ({}) cut {cut_short} of {} short; their client requests open (or not yet started) at the limit count as gave_up (time_limit)",
            file.first().name,
            console::time_limit(file),
            counted(runs, "run", "runs")
        )
    })
}

/// `NAME: R runs, E events simulated in W s wall (X M events/s)`.
pub(super) fn simulated_line(name: &str, runs: u64, events: u64, wall: f64) -> String {
    let rate = events as f64 / wall.max(1e-9);
    format!(
        "{name}: {}, {events} events simulated in {wall:.3} s wall ({})",
        counted(runs, "run", "runs"),
        events_per_second(rate)
    )
}

/// An event rate in the unit that shows its digits: `9.8 M events/s` for a real run, but
/// `4000 events/s` or `450 k events/s` for a tiny one, never `0.0 M events/s`.
fn events_per_second(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.1} M events/s", rate / 1e6)
    } else if rate >= 1e4 {
        format!("{:.0} k events/s", rate / 1e3)
    } else {
        format!("{rate:.0} events/s")
    }
}

#[cfg(test)]
mod rate_tests {
    use super::events_per_second;

    /// A tiny run printed `0.0 M events/s`.
    #[test]
    fn event_rates_keep_their_digits() {
        assert_eq!(events_per_second(9_812_345.0), "9.8 M events/s");
        assert_eq!(events_per_second(1_000_000.0), "1.0 M events/s");
        assert_eq!(events_per_second(450_400.0), "450 k events/s");
        assert_eq!(events_per_second(10_000.0), "10 k events/s");
        assert_eq!(events_per_second(4_000.0), "4000 events/s");
        assert_eq!(events_per_second(0.0), "0 events/s");
    }
}
