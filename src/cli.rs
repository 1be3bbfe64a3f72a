//! Command-line definitions (clap derive). Parsing only; [`crate::app`] does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::model::backoff::Jitter;
use crate::scenario::sweep::Setting;
use crate::time::{SimDuration, parse_duration};

/// A deterministic discrete-event simulator of retry storms (the thundering herd).
#[derive(Debug, Parser)]
#[command(
    name = "herdsim",
    version,
    about,
    long_about = "herdsim: a deterministic discrete-event simulator of the thundering herd.\n\n\
        N simulated clients call a capacity-limited server (or a graph of services) that has \
        outages, rate limits and brownouts; each client retries with a backoff strategy. \
        herdsim runs every strategy of a scenario file side by side and writes what a \
        capacity planner needs: total work, completion time, load peaks, give-ups, as CSV, \
        JSON, charts and a self-contained HTML report. The same scenario and seed always \
        give byte-identical files.\n\n\
        Start with `herdsim init`, which writes a commented scenario, then `herdsim check` \
        and `herdsim run`. Exit status: 0 success, 2 invalid input: a scenario or argument \
        that is wrong or names a file or folder that does not exist (nothing is written), \
        1 any other failure (a file that cannot be written or read), 130 interrupted."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios and write summary.csv, summary.json, timeseries.csv, charts and
    /// report.html.
    Run(RunArgs),
    /// Validate scenarios without running them.
    Check(CheckArgs),
    /// Print the retry delays a backoff policy produces for a few clients.
    Schedule(ScheduleArgs),
    /// Merge the shards of a sharded run (`run --shard`) into the files of the whole run.
    Merge(MergeArgs),
    /// Compare two output folders' summaries: per strategy and metric, A, B, B/A, and
    /// whether the 95% confidence intervals overlap.
    Compare(CompareArgs),
    /// Write a commented starter scenario that `check` accepts.
    Init(InitArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of herdsim or one of its commands.
    Man(ManArgs),
}

/// `herdsim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The scenario's output folder holding the `shard-i-of-n` folders (`<out>/<name>`).
    pub dir: PathBuf,
    /// Write `<out>/<name>/` here instead of into DIR itself.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Refuse to merge when the estimated memory exceeds this, e.g. 2GiB or 500MB
    /// (default: 80% of this machine's memory).
    #[arg(long, value_parser = size_arg, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
    /// Print nothing on stdout.
    #[arg(long)]
    pub quiet: bool,
    /// Chart formats, comma-separated: png, svg.
    #[arg(long, value_delimiter = ',', default_value = "png,svg")]
    pub format: Vec<ChartFormat>,
    /// Skip charts and report.html (so it takes no chart flag: `--format`, `--log-y`).
    #[arg(long, conflicts_with_all = ["format", "log_y"])]
    pub no_charts: bool,
    /// Draw every chart's y axis on a log scale (by default only where the data span more
    /// than 100x).
    #[arg(long)]
    pub log_y: bool,
}

/// `herdsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files (default: the built-in scenarios/quickstart.toml).
    pub scenarios: Vec<PathBuf>,
    /// Output folder; each scenario writes into `<out>/<name>/`.
    #[arg(long, default_value = "output")]
    pub out: PathBuf,
    /// Override the scenario's seed (0 to 9223372036854775807, as in the scenario file).
    #[arg(long, allow_negative_numbers = true, value_parser = seed_arg)]
    pub seed: Option<u64>,
    /// Override the number of replications (1 to 1000000, as in the scenario file).
    #[arg(long, allow_negative_numbers = true, value_parser = replications_arg)]
    pub replications: Option<u32>,
    /// Worker threads (1 to 1024; default: one per core). Results do not depend on it.
    #[arg(long, allow_negative_numbers = true, value_parser = threads_arg)]
    pub threads: Option<usize>,
    /// Refuse to start when the estimated memory exceeds this, e.g. 2GiB or 500MB
    /// (default: 80% of this machine's memory).
    #[arg(long, value_parser = size_arg, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
    /// Print nothing on stdout and no progress on stderr (errors and warnings still show).
    #[arg(long)]
    pub quiet: bool,
    /// Also write requests.csv, one row per logical request.
    #[arg(long)]
    pub requests: bool,
    /// Also write attempts.csv: every attempt of a sample of at most 2000 closed clients
    /// (all their requests) or open arrivals, in every replication.
    #[arg(long)]
    pub attempts: bool,
    /// Set a scenario key before validation, as `[sweep]` paths name it, e.g.
    /// clients.count=1000 or server.outages.0.end=5s; sweep.PATH=[...] sweeps PATH, e.g.
    /// 'sweep.clients.count=[100, 1000]' (repeatable; applies to every file).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = setting_arg)]
    pub set: Vec<Setting>,
    /// Draw every chart's y axis on a log scale (by default only where the data span more
    /// than 100x).
    #[arg(long)]
    pub log_y: bool,
    /// Chart formats, comma-separated: png, svg.
    #[arg(long, value_delimiter = ',', default_value = "png,svg")]
    pub format: Vec<ChartFormat>,
    /// Skip charts and report.html (so it takes no chart flag: `--format`, `--log-y`).
    #[arg(long, conflicts_with_all = ["format", "log_y"])]
    pub no_charts: bool,
    /// Run only shard I of N of the jobs (sweep point x strategy x replication, round
    /// robin) and write partial results to `<out>/<name>/shard-I-of-N/` for `herdsim
    /// merge`; `auto` reads the shard from a Slurm, Kubernetes Indexed Job or AWS Batch array.
    #[arg(long, value_name = "I/N|auto", value_parser = crate::shard::parse_shard, allow_hyphen_values = true)]
    pub shard: Option<crate::shard::ShardArg>,
    /// With `--shard auto` in a Kubernetes Indexed Job: the Job's completions (the shard
    /// count, which the Job does not put in the environment).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = u32_arg)]
    pub shard_count: Option<u32>,
}

/// A chart file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChartFormat {
    /// Bitmap, for slides.
    Png,
    /// Vector, for documents and report.html.
    Svg,
}

/// `herdsim check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files to validate.
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Set a scenario key before validation, as with `run` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = setting_arg)]
    pub set: Vec<Setting>,
    /// Refuse a file whose estimated memory, as `run` estimates it with its defaults,
    /// exceeds this, e.g. 64GB for a larger machine (default: 80% of this machine's memory).
    #[arg(long, value_parser = size_arg, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
}

/// `herdsim compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first output folder (e.g. output/quickstart): the baseline A.
    pub a: PathBuf,
    /// The second output folder: B, compared against A.
    pub b: PathBuf,
    /// Metrics to compare, any numeric summary.csv column (repeatable; default: calls,
    /// completion_s, peak_rps, recovery_peak_rps, succeeded, gave_up, latency_p99_s).
    #[arg(long = "metric", value_name = "COLUMN")]
    pub metrics: Vec<String>,
}

/// `herdsim init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The file to write (never overwritten); `-` prints the scenario instead.
    #[arg(default_value = "scenario.toml")]
    pub file: PathBuf,
}

/// `herdsim completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

/// `herdsim man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command whose page to print (run, merge, check, schedule, compare, init, completions);
    /// default: the page of herdsim itself.
    pub command: Option<String>,
}

/// `herdsim schedule`.
#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// Delay of the first retry, e.g. 100ms.
    #[arg(long, value_parser = duration_arg)]
    pub base: SimDuration,
    /// Largest un-jittered delay, e.g. 10s.
    #[arg(long, value_parser = duration_arg)]
    pub cap: SimDuration,
    /// none, full, equal, decorrelated, decorrelated-v2 (Polly), proportional=F, fraction=J or additive=D (e.g. additive=1s).
    #[arg(long, default_value = "full", value_parser = jitter_arg)]
    pub jitter: Jitter,
    /// Growth per retry (>= 1).
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true, value_parser = f64_arg)]
    pub multiplier: f64,
    /// Added to the ladder per retry after the first, e.g. 100ms (Polly's linear backoff:
    /// --multiplier 1 --increment equal to --base).
    #[arg(long, value_parser = duration_arg, default_value = "0s")]
    pub increment: SimDuration,
    /// false: a retry whose ladder has passed the cap waits exactly the cap, unjittered
    /// (aws-sdk-go-v2 before 2026), as the jitter_past_cap key.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub jitter_past_cap: bool,
    /// Retries sent at once before the ladder starts (urllib3 retries its first failure
    /// immediately: 1).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = immediate_retries_arg)]
    pub immediate_retries: u32,
    /// Attempts, counting the first (so attempts - 1 retries are shown).
    #[arg(
        long,
        default_value_t = 8,
        allow_negative_numbers = true,
        value_parser = u32_arg
    )]
    pub attempts: u32,
    /// Clients to draw schedules for.
    #[arg(
        long,
        default_value_t = 100,
        allow_negative_numbers = true,
        value_parser = u32_arg
    )]
    pub clients: u32,
    /// Refuse when the delays to keep (clients x retries x 8 bytes) exceed this, e.g. 1GiB
    /// (default: 80% of this machine's memory).
    #[arg(long, value_parser = size_arg, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = u64_arg)]
    pub seed: u64,
    /// A Retry-After header value received with every failure (e.g. "3", "3600", "soon"):
    /// seconds in (0, --retry-after-max] replace every delay; other values are unusable
    /// (a warning says why).
    #[arg(long)]
    pub retry_after: Option<String>,
    /// Largest usable Retry-After hint.
    #[arg(long, default_value = "60s", value_parser = duration_arg)]
    pub retry_after_max: SimDuration,
    /// The jitter's uniform draws instead of the seeded stream: a list such as 0.5,0.25,1
    /// (retry n takes the n-th, the last repeating; the same for every client), or
    /// minstd:S (client i, from 0, draws from the "minimal standard" generator, x 48271
    /// mod 2^31 - 1, seeded (i + 1) x S), to replay a published table.
    #[arg(long, value_parser = draws_arg, value_name = "DRAWS", conflicts_with = "seed")]
    pub draws: Option<Draws>,
}

/// `schedule --draws`: where the jitter's uniform numbers come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Draws {
    /// These numbers in [0, 1], retry n taking the n-th (the last repeating).
    List(Vec<f64>),
    /// Park and Miller's minimal standard generator (multiplier 48271), client i seeded
    /// (i + 1) x this.
    Minstd(u64),
}

/// The modulus of the minimal standard generator, 2^31 - 1.
pub const MINSTD_MODULUS: u64 = 2_147_483_647;

fn draws_arg(s: &str) -> Result<Draws, String> {
    if let Some(seed) = s.strip_prefix("minstd:") {
        return match seed.parse::<u64>() {
            Ok(n) if (1..MINSTD_MODULUS).contains(&n) => Ok(Draws::Minstd(n)),
            _ => Err(format!(
                "expected minstd:S with S from 1 to {}, found \"{s}\"",
                MINSTD_MODULUS - 1
            )),
        };
    }
    s.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    format!(
                        "expected numbers in [0, 1] separated by commas, or minstd:S, found \"{v}\""
                    )
                })
        })
        .collect::<Result<Vec<f64>, String>>()
        .map(Draws::List)
}

fn setting_arg(s: &str) -> Result<Setting, String> {
    Setting::parse(s)
}

/// A whole number of at most `max`, refused in herdsim's words (clap's would be "invalid
/// digit found in string"); the commands check each flag's own range and say it.
fn whole(s: &str, max: u64) -> Result<u64, String> {
    let shown = crate::text::escape(s);
    let digits = s.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected a whole number, found \"{shown}\""));
    }
    digits
        .parse::<u64>()
        .ok()
        .filter(|&n| n <= max)
        .ok_or_else(|| format!("expected a whole number of at most {max}, found \"{shown}\""))
}

fn u64_arg(s: &str) -> Result<u64, String> {
    whole(s, u64::MAX)
}

fn u32_arg(s: &str) -> Result<u32, String> {
    whole(s, u32::MAX.into()).map(|n| n as u32)
}

/// A seed a scenario file can hold too (TOML integers are signed 64-bit), so that a run's
/// recorded seed can be written back into its scenario.
fn seed_arg(s: &str) -> Result<u64, String> {
    whole(s, i64::MAX as u64)
}

/// `run` checks (and reports) these two ranges itself, for library callers too; a number too
/// large for the flag's type is refused here, naming the same range.
fn replications_arg(s: &str) -> Result<u32, String> {
    in_range(
        s,
        1,
        crate::limits::MAX_REPLICATIONS.into(),
        u32::MAX.into(),
    )
    .map(|n| n as u32)
}

fn threads_arg(s: &str) -> Result<usize, String> {
    in_range(s, 1, crate::limits::MAX_THREADS as u64, usize::MAX as u64).map(|n| n as usize)
}

/// [`whole`] up to `type_max`, with a whole number beyond it refused as outside `lo..=hi`.
fn in_range(s: &str, lo: u64, hi: u64, type_max: u64) -> Result<u64, String> {
    whole(s, type_max).map_err(|e| {
        let digits = s.trim();
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!(
                "expected a number from {lo} to {hi}, found \"{}\"",
                crate::text::escape(s)
            )
        } else {
            e
        }
    })
}

fn immediate_retries_arg(s: &str) -> Result<u32, String> {
    whole(s, 65_535).map(|n| n as u32)
}

fn f64_arg(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .ok_or_else(|| format!("expected a number, found \"{}\"", crate::text::escape(s)))
}

fn size_arg(s: &str) -> Result<u64, String> {
    crate::limits::parse_size(s)
}

fn duration_arg(s: &str) -> Result<SimDuration, String> {
    parse_duration(s)
}

/// The jitter words `--jitter` takes alone (the others take `=value`).
const JITTER_WORDS: [&str; 5] = ["none", "full", "equal", "decorrelated", "decorrelated-v2"];
/// The jitters `--jitter` takes as `key=value`.
const JITTER_KEYS: [&str; 3] = ["proportional", "fraction", "additive"];

fn jitter_arg(s: &str) -> Result<Jitter, String> {
    let number = |v: &str, ok: fn(f64) -> bool, range: &str| {
        v.parse::<f64>()
            .ok()
            .filter(|x| ok(*x))
            .ok_or_else(|| format!("expected a number in {range}, found \"{v}\""))
    };
    match s.split_once('=') {
        None => match s {
            "none" => Ok(Jitter::None),
            "full" => Ok(Jitter::Full),
            "equal" => Ok(Jitter::Equal),
            "decorrelated" => Ok(Jitter::Decorrelated),
            "decorrelated-v2" => Ok(Jitter::DecorrelatedV2),
            _ => Err(format!(
                "expected none, full, equal, decorrelated, decorrelated-v2, proportional=F, fraction=J or additive=D, found \"{s}\"{}",
                crate::scenario::guess_value(s, JITTER_WORDS)
            )),
        },
        Some(("proportional", v)) => {
            number(v, |x| (0.0..1.0).contains(&x), "[0, 1)").map(Jitter::Proportional)
        }
        Some(("fraction", v)) => {
            number(v, |x| (0.0..=1.0).contains(&x), "[0, 1]").map(Jitter::Fraction)
        }
        Some(("additive", v)) => parse_duration(v)
            .map(Jitter::Additive)
            .map_err(|_| format!("expected a duration such as 250ms, found \"{v}\"")),
        // The whole value echoed; scenario syntax (`{proportional=0.5}`) is read for its key.
        Some((k, _)) => {
            let key = k.trim().trim_start_matches('{').trim();
            let hint = if JITTER_KEYS.contains(&key) {
                format!(" (without braces: {key}=...)")
            } else {
                crate::scenario::guess_value(key, JITTER_KEYS)
            };
            Err(format!(
                "expected proportional=F, fraction=J or additive=D, found \"{s}\"{hint}"
            ))
        }
    }
}
