//! The one public error type, and the exit code each kind of failure maps to.
//!
//! Scenario faults carry their position (file, line, column, key) so the message points at the
//! spot to fix; I/O faults carry the path. `main` turns an [`Error`] into an exit status with
//! [`Error::exit_code`]: 2 for anything the user wrote wrong (scenario or arguments), 1 for
//! everything else.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file as the user named it (or `<built-in quickstart>`).
    pub file: String,
    /// 1-based line, when the parser knows the position.
    pub line: Option<usize>,
    /// 1-based column, when the parser knows the position.
    pub col: Option<usize>,
    /// Dotted key path, e.g. `strategy[2].base`; empty for whole-file faults.
    pub key: String,
    /// What was expected and what was found.
    pub msg: String,
    /// What kind of problem it is, for the checks that relate one problem to another (a
    /// misspelt key explains its table's missing key); never shown.
    pub fault: Fault,
}

/// The kinds of [`ScenarioError`] that other problems may follow from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Fault {
    /// Any other problem.
    #[default]
    Other,
    /// A key its table does not take.
    UnknownKey {
        /// The keys it is guessed to be a misspelling of (the message's "did you mean").
        guesses: Box<[String]>,
    },
    /// Not a problem of its own: the file has more problems than were looked for, and
    /// those listed are not all of them (not counted as one).
    NotAllChecked,
    /// A required key left out of its table.
    MissingKey {
        /// The key, without its table.
        key: Box<str>,
        /// A `[[strategy]]` key that `[retry]` may set for every strategy instead.
        or_in_retry: bool,
    },
}

impl ScenarioError {
    /// The same problem, said to be of kind `fault`.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }
}

impl fmt::Display for ScenarioError {
    /// `storm.toml:14:9: strategy[2].base: must be > 0 (found "0ms")`. File, key and message
    /// quote the user's input, so they go through [`crate::text::sanitize`]: control and
    /// bidi characters escaped, huge numbers short.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::text::sanitize;
        write!(f, "{}", sanitize(&self.file))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.col {
                write!(f, ":{col}")?;
            }
        }
        if !self.key.is_empty() {
            write!(f, ": {}", sanitize(&self.key))?;
        }
        write!(f, ": {}", sanitize(&self.msg))
    }
}

/// Every problem found in one or more scenario files, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl ScenarioErrors {
    /// How many problems are listed (a note that more were not checked is not one), and
    /// whether some file has more that were not looked for.
    pub fn count(&self) -> (usize, bool) {
        let notes = self
            .0
            .iter()
            .filter(|e| e.fault == Fault::NotAllChecked)
            .count();
        (self.0.len() - notes, notes > 0)
    }
}

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// herdsim's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// One or more scenario files are invalid. Exit status 2.
    #[error("{0}")]
    Scenario(ScenarioErrors),
    /// The command line is invalid in a way clap cannot see (e.g. `--threads 0`). Exit status 2.
    #[error("{}", crate::text::sanitize(.0))]
    Usage(String),
    /// The input is valid but running it would exceed a limit: the memory it would need,
    /// or the number of runs. Nothing is run or written. Exit status 2.
    #[error("{}", crate::text::sanitize(.0))]
    Limit(String),
    /// Reading or writing a file failed. Exit status 1.
    #[error("{action} {}: {source}", crate::text::escape(&path.display().to_string()))]
    Io {
        /// What was being done, e.g. "cannot write".
        action: &'static str,
        /// The file or folder that could not be read or written.
        path: PathBuf,
        /// The underlying cause.
        source: std::io::Error,
    },
    /// A chart could not be drawn. Exit status 1.
    #[error("{}: cannot draw chart: {msg}", crate::text::escape(&path.display().to_string()))]
    Chart {
        /// The chart file.
        path: PathBuf,
        /// What the drawing backend said.
        msg: String,
    },
    /// `run --shard` with several files failed on one of them after the shards of the files
    /// before it were written and put in place (each is, as soon as it is written: see
    /// `run_shards`). Exit status of `error`.
    #[error("{error}")]
    AfterShardsWritten {
        /// What stopped the run.
        error: Box<Error>,
        /// The shard folders written before it.
        written: Vec<PathBuf>,
    },
}

impl Error {
    /// The process exit status for this error: 2 for invalid input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Scenario(_) | Error::Usage(_) | Error::Limit(_) => 2,
            Error::Io { .. } | Error::Chart { .. } => 1,
            Error::AfterShardsWritten { error, .. } => error.exit_code(),
        }
    }

    /// What stopped the command, and the shard folders it wrote before (none but for
    /// [`Error::AfterShardsWritten`]).
    pub fn cause_and_written(&self) -> (&Error, &[PathBuf]) {
        match self {
            Error::AfterShardsWritten { error, written } => (error, written),
            other => (other, &[]),
        }
    }

    /// Wraps an I/O error with what was being done (`"cannot write"`) and the path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
