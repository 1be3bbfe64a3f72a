//! The commands behind the CLI: `run`, `check` and `schedule`.
//!
//! Order of work, as in hyperfine's `main`: load and validate *every* scenario first (a
//! refused scenario writes nothing), then run each one on a rayon pool of `--threads`
//! workers, then hand the results to the exporters in [`crate::report`]. Only this module
//! and `report` print; the library below them returns data.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::{RngExt, SeedableRng};

use crate::cli::{CheckArgs, Cli, Command, RunArgs, ScheduleArgs};
use crate::engine::SimRng;
use crate::error::{Error, Result, ScenarioError, ScenarioErrors};
use crate::limits::{self, MAX_REPLICATIONS, MAX_THREADS, MemoryLimit};
use crate::model::Source;
use crate::model::backoff::Backoff;
use crate::model::policy::{Beyond, RetryAfterPolicy, next_delay, parse_retry_after_header};
use crate::report::output_dir::{self, Staging};
use crate::report::{self, OutputLayout, console};
use crate::runner::{self, RunOptions, ScenarioResult};
use crate::scenario::sweep::{ScenarioFile, load_in, load_str};
use crate::scenario::{QUICKSTART, QUICKSTART_NAME};
use crate::time::SimDuration;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run_command(&args),
        Command::Check(args) => check_command(&args),
        Command::Schedule(args) => schedule_command(&args),
    }
}

/// Reads, validates and expands scenario files; the built-in quickstart when `paths` is
/// empty. Problems of every file are reported together.
pub fn load_files(paths: &[PathBuf]) -> Result<Vec<ScenarioFile>> {
    if paths.is_empty() {
        // Built in: its trace paths (it has none today) would start from here.
        return load_in(QUICKSTART_NAME, QUICKSTART, Path::new(""))
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
            Ok(src) => match load_str(&name, &src) {
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
    let files = load_files(&args.scenarios)?;
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
    if let Some(r) = args.replications
        && !(1..=MAX_REPLICATIONS).contains(&r)
    {
        return Err(Error::Usage(format!(
            "--replications: expected a number from 1 to {MAX_REPLICATIONS}, found {r}"
        )));
    }
    let mut files = load_files(&args.scenarios)?;
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
    for f in &files {
        check_limits(f, threads, args.requests, memory)?;
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

    for file in &files {
        let total: u64 = runner::plan(file).len() as u64;
        let progress = progress_bar(total, args.quiet, &file.first().name);
        let started = Instant::now();
        let result = pool.install(|| {
            runner::run_scenario(
                file,
                RunOptions {
                    record_requests: args.requests,
                    // The raster chart draws the attempt sample of the first replication.
                    sample_attempts: (!args.no_charts).then_some(false),
                    ..Default::default()
                },
                &|| progress.inc(1),
            )
        });
        let wall = started.elapsed().as_secs_f64();
        progress.finish_and_clear();
        let result = result?;
        // Written into a fresh folder that replaces <out>/<name> whole once complete.
        let staging = Staging::begin(&args.out, &file.first().name)?;
        let layout = OutputLayout::at(staging.path());
        write_outputs(&layout, file, &result, args).map_err(|e| staging.name_target(e))?;
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
    memory: MemoryLimit,
) -> Result<()> {
    let estimate = limits::estimate(file, threads, requests);
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
            if requests { ", drop --requests" } else { "" }
        )));
    }
    Ok(())
}

/// A run stopped because simulated time stopped advancing: a problem of the scenario (exit
/// 2), found only by running it; nothing of that scenario is written.
fn write_outputs(
    layout: &OutputLayout,
    file: &ScenarioFile,
    result: &ScenarioResult,
    args: &RunArgs,
) -> Result<()> {
    layout.create()?;
    let seed = file.first().seed;
    report::write_atomic(
        &layout.summary_csv(),
        &report::csv::summary_csv(&file.axes, result, seed)?,
    )?;
    report::write_atomic(
        &layout.timeseries_csv(),
        &report::csv::timeseries_csv(file, result)?,
    )?;
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
    if !args.no_charts {
        report::write_charts_and_report(
            layout,
            file,
            result,
            &args.format,
            &report::ChartOptions::default(),
        )?;
    }
    Ok(())
}

fn progress_bar(total: u64, quiet: bool, name: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
    )
    .expect("static template is valid")
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(name.to_string());
    bar
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
