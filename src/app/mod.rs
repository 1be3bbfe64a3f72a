//! The commands behind the CLI: `run`, `merge`, `check`, `schedule`, `compare`, `init`,
//! `completions` and `man`. `check` is in [`check`], sharded runs and `merge` in
//! [`shards`], the progress bar in [`progress`], `schedule` in [`schedule`].
//!
//! Order of work, as in hyperfine's `main`: load and validate *every* scenario first (a
//! refused scenario writes nothing), then run each one on a rayon pool of `--threads`
//! workers, then hand the results to the exporters in [`crate::report`]. Only this module
//! and `report` print; the library below them returns data.

use crate::text::counted;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cli::{Cli, Command, CompareArgs, CompletionsArgs, InitArgs, ManArgs, RunArgs};
use crate::error::{Error, Result, ScenarioError, ScenarioErrors};
use crate::limits::{self, MAX_REPLICATIONS, MAX_THREADS, MemoryLimit};
use crate::report::output_dir::{self, Staging};
use crate::report::{self, OutputLayout, console};
use crate::runner::{self, RunOptions, ScenarioResult};
use crate::scenario::sweep::{ScenarioFile, Setting, load_with_settings};
use crate::scenario::{QUICKSTART, QUICKSTART_NAME};

mod check;
mod progress;
mod schedule;
mod shards;

use check::{check_command, warnings};
use progress::Progress;
pub use progress::{estimate_events, progress_message};
use schedule::schedule_command;
pub use schedule::schedule_table;
use shards::{merge_command, run_shards};

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
    let (files, errors) = load_each(paths, settings)?;
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(Error::Scenario(ScenarioErrors(errors)))
    }
}

/// [`load_files`]'s work: the files that loaded and every problem found (a file with a
/// problem, a name taken by an earlier file included, is among the problems' files). An
/// error only for a bad command line (the same `--set` key twice).
fn load_each(
    paths: &[PathBuf],
    settings: &[Setting],
) -> Result<(Vec<ScenarioFile>, Vec<ScenarioError>)> {
    crate::scenario::sweep::check_repeats(settings).map_err(Error::Usage)?;
    if paths.is_empty() {
        // Built in: its trace paths (it has none today) would start from here.
        return Ok(
            match load_with_settings(QUICKSTART_NAME, QUICKSTART, Path::new(""), settings) {
                Ok(f) => (vec![f], Vec::new()),
                Err(ScenarioErrors(e)) => (Vec::new(), e),
            },
        );
    }
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        match read_scenario(path, &name)? {
            Err(problem) => errors.push(problem),
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
    Ok((files, errors))
}

/// The largest scenario file herdsim reads. Scenarios are a few kilobytes; a file near this
/// size is not one (a trace, a log, a device such as `/dev/zero`), and reading it whole
/// would take memory without bound.
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// Reads a scenario file: its text; or a problem with it, listed with every other file's
/// (exit 2: no such file, a folder, too large, not UTF-8); or an I/O failure (exit 1: a
/// file that exists but cannot be read, such as one without read permission).
fn read_scenario(path: &Path, name: &str) -> Result<std::result::Result<String, ScenarioError>> {
    use std::io::{ErrorKind, Read};
    let problem = |at: Option<(usize, usize)>, msg: String| ScenarioError {
        file: name.to_string(),
        line: at.map(|(line, _)| line),
        col: at.map(|(_, col)| col),
        key: String::new(),
        msg,
    };
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes));
    match read {
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::IsADirectory) => {
            return Ok(Err(problem(
                None,
                format!("cannot read the scenario file: {e}"),
            )));
        }
        Err(e) => return Err(Error::io("cannot read the scenario file", path, e)),
        Ok(_) => {}
    }
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Ok(Err(problem(
            None,
            format!(
                "expected a scenario file of at most {} MiB, found a larger file (is it the scenario?)",
                MAX_SCENARIO_BYTES >> 20
            ),
        )));
    }
    Ok(String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).expect("valid up to here");
        problem(
            Some(crate::scenario::line_col(valid, valid.len())),
            "expected UTF-8 text, found bytes that are not UTF-8".to_string(),
        )
    }))
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
        )?;
    }
    output_dir::check_out(&args.out)?;
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
/// it, which holds every group's accumulator until the end.
fn check_limits(
    file: &ScenarioFile,
    threads: usize,
    requests: bool,
    attempts: Option<bool>,
    memory: MemoryLimit,
    sharded: bool,
) -> Result<()> {
    let mut estimate = limits::estimate(file, threads, requests, attempts);
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
            "{}: this run needs an estimated {estimate} of memory, more than the limit of {memory}. Lower {}, replications or the sweep, raise metrics.bucket or lower time_limit{}; or change the limit with --max-memory",
            file.file,
            knobs.join(", "),
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
    let mut lines = Vec::new();
    if result.cut_short > 0 {
        lines.push(format!(
            "warning: {name}: time_limit ({}) cut {} of {} short; their client requests open (or not yet started) at the limit count as gave_up (time_limit)",
            console::time_limit(file),
            result.cut_short,
            counted(runs, "run", "runs")
        ));
    }
    if !quiet {
        lines.push(simulated_line(name, runs, result.events, wall));
    }
    lines
}

/// `NAME: R runs, E events simulated in W s wall (X M events/s)`.
fn simulated_line(name: &str, runs: u64, events: u64, wall: f64) -> String {
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

/// Writes `lines` to stderr; a failure to write there is not worth failing the run for.
fn print_stderr(lines: &[String]) {
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "{line}");
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
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                && let Some(parent) = args.file.parent().filter(|p| !p.exists()) =>
        {
            let folder = crate::text::escape(&parent.display().to_string()).to_string();
            return Err(Error::Usage(format!(
                "init: the folder {folder} does not exist: create it first (mkdir -p {folder}) or name a file in an existing folder"
            )));
        }
        Err(e) => return Err(Error::io("cannot create", &args.file, e)),
    };
    if let Err(e) = f.write_all(text.as_bytes()).and_then(|_| f.sync_all()) {
        drop(f);
        let _ = std::fs::remove_file(&args.file);
        return Err(Error::io("cannot write", &args.file, e));
    }
    // In the commands, a path the shell would split or expand is single-quoted.
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-/+,:@%".contains(c);
    // A leading dash would read as a flag: `./-x.toml`.
    let path_arg = if shown.starts_with('-') {
        format!("./{shown}")
    } else {
        shown.clone()
    };
    let arg = if path_arg.chars().all(plain) {
        path_arg
    } else {
        format!("'{}'", path_arg.replace('\'', "'\\''"))
    };
    print_stdout(&format!(
        "wrote {shown}: a commented scenario to edit; then `herdsim check {arg}` and `herdsim run {arg}`\n"
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
