//! The `herdsim` binary: parse the command line, run, map the outcome to an exit status.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match herdsim::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout as clap renders them. Usage errors (exit 2) quote
            // the argument: printed plain, control characters escaped (herdsim::text).
            if e.use_stderr() {
                eprint!("{}", herdsim::text::escape_lines(&e.render().to_string()));
            } else {
                let _ = e.print();
            }
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    // From here on, Ctrl-C, SIGTERM and SIGHUP exit with the documented 130, whether they
    // come while a scenario or the shards are read or while output is written (which the
    // handler then removes); installed later, an early signal killed the process (143, 129).
    herdsim::report::output_dir::install_signal_cleanup();
    // `check` writes nothing even when every file is good: saying so would read as if a
    // problem had stopped it.
    let writes = !matches!(cli.command, herdsim::cli::Command::Check(_));
    match herdsim::app::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("herdsim: error: {e:#}");
            let (cause, written) = e.cause_and_written();
            if let herdsim::Error::Scenario(errors) = cause {
                let (n, more) = errors.count();
                eprintln!(
                    "herdsim: {n} problem{} found{}{}",
                    if n == 1 { "" } else { "s" },
                    if more { ", and more not checked" } else { "" },
                    match (writes, written.is_empty()) {
                        (false, _) => "",
                        (true, true) => "; nothing was written",
                        (true, false) => "; nothing of that file was written",
                    }
                );
            }
            // A sharded run puts each file's shard in place as soon as it is written: say
            // which are there, so that the failed file's shard is the one to run again.
            for folder in written {
                eprintln!(
                    "herdsim: written before it: {}",
                    herdsim::text::escape(&folder.display().to_string())
                );
            }
            ExitCode::from(e.exit_code())
        }
    }
}
