//! The commands behind the CLI: `run`, `merge`, `check`, `schedule`, `compare`, `init`,
//! `completions` and `man`. Loading the scenario files is in `load`, `run` in [`run`],
//! `check` in `check`, sharded runs and `merge` in `shards`, the progress bar in
//! `progress`, `schedule` in `schedule`; the small commands are here.
//!
//! Order of work, as in hyperfine's `main`: load and validate *every* scenario first (a
//! refused scenario writes nothing), then run each one on a rayon pool of `--threads`
//! workers, then hand the results to the exporters in [`crate::report`]. Only this module
//! and `report` print; the library below them returns data.

use std::io::Write;
use std::path::Path;

use crate::cli::{Cli, Command, CompareArgs, CompletionsArgs, InitArgs, ManArgs};
use crate::error::{Error, Result};

mod check;
mod load;
mod progress;
mod run;
mod schedule;
mod shards;

use check::{check_command, warnings};
pub use load::{MAX_SCENARIO_BYTES, load_files};
pub use progress::{estimate_events, progress_message};
use run::run_command;
use schedule::schedule_command;
pub use schedule::schedule_table;
use shards::merge_command;

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
