//! Loading the scenarios of a command: each file read (bounded, UTF-8), its `--set` settings
//! written in, parsed, validated and expanded into its runs, with the problems of every file
//! gathered, so that one report lists them all and a refused scenario writes nothing.

use std::path::{Path, PathBuf};

use crate::error::{Error, Fault, Result, ScenarioError, ScenarioErrors};
use crate::scenario::sweep::{ScenarioFile, Setting, load_with_settings};
use crate::scenario::{QUICKSTART, QUICKSTART_NAME};

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
pub(super) fn load_each(
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
                fault: Fault::Other,
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
        fault: Fault::Other,
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
