//! The checks made before anything runs, so that a run that cannot put its output in place
//! is refused (exit 2) rather than failing after the simulation: `--out` itself (a file, a
//! dangling link, a folder herdsim may not create in), and the folder a run would replace
//! whole (not someone else's, holding none of the run's inputs).

use std::fs::{self, File};
use std::io;
use std::path::Path;

use crate::error::{Error, Result};

/// Checks `--out` before anything runs: a dangling symbolic link, a link to a file or a
/// file are refused (exit 2) with what they are; a missing folder is fine (it is created).
pub fn check_out(out: &Path) -> Result<()> {
    let shown = out.display();
    let meta = match fs::symlink_metadata(out) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A folder on the way may be a dangling link (`gone/run1`, `gone` pointing
            // nowhere): creating the path would fail only after the simulation.
            let dangling = out.ancestors().skip(1).find(|p| {
                fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
                    && fs::metadata(p).is_err()
            });
            if let Some(link) = dangling {
                let target = fs::read_link(link)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "an unreadable target".into());
                return Err(Error::Usage(format!(
                    "--out: {shown} cannot be a folder: {} is a symbolic link to {target}, which does not exist (a dangling link): remove it or create {target}",
                    link.display()
                )));
            }
            return check_can_create(out);
        }
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            // A file where the path needs a folder: `--out results.csv/run1`.
            let file = out
                .ancestors()
                .skip(1)
                .find(|p| fs::metadata(p).is_ok_and(|m| !m.is_dir()));
            return Err(Error::Usage(match file {
                Some(file) => format!(
                    "--out: {shown} cannot be a folder: {} is a file, not a folder",
                    file.display()
                ),
                // `results.csv/`: the path names the file itself.
                None => format!("--out: {shown} is a file, not a folder"),
            }));
        }
        Err(e) => return Err(Error::io("cannot read", out, e)),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(out)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "an unreadable target".into());
        return match fs::metadata(out) {
            Ok(m) if m.is_dir() => check_can_create(out),
            Ok(_) => Err(Error::Usage(format!(
                "--out: {shown} is a symbolic link to {target}, a file, not a folder"
            ))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::Usage(format!(
                "--out: {shown} is a symbolic link to {target}, which does not exist (a dangling link): remove it or create {target}"
            ))),
            Err(e) => Err(Error::io("cannot follow the link", out, e)),
        };
    }
    if !meta.is_dir() {
        return Err(Error::Usage(format!(
            "--out: {shown} is a file, not a folder"
        )));
    }
    check_can_create(out)
}

/// Checks, before anything runs, that the folder a run will replace whole, `target`
/// (`<out>/<name>`, or a shard's folder), may go: refused (exit 2) when it holds one of the
/// command's `inputs` (scenario files, traces), or when it exists, is not empty, and is not
/// herdsim's: a scenario named like a folder of the user's (`name = "src"`, `--out .`)
/// would otherwise delete that folder's files. herdsim's is a folder whose `summary.json`
/// is herdsim's, a shard folder whose `manifest.json` is, or a folder holding nothing but
/// herdsim's shard folders (a sharded run's, which `merge` replaces in place); a file of the
/// same name from another program (a web app's `manifest.json`) does not count.
pub fn check_replaceable(target: &Path, inputs: &[&Path]) -> Result<()> {
    let shown = || crate::text::escape(&target.display().to_string()).to_string();
    let Ok(meta) = fs::symlink_metadata(target) else {
        // Nothing there yet (or nothing readable: the write will say why).
        return Ok(());
    };
    if !meta.is_dir() {
        // A link or a file where the folder goes is refused when the output is put in place.
        return Ok(());
    }
    if let Ok(folder) = fs::canonicalize(target) {
        for input in inputs {
            if fs::canonicalize(input).is_ok_and(|p| p.starts_with(&folder)) {
                return Err(Error::Usage(format!(
                    "--out: {} holds {}, an input of this run, and herdsim replaces that folder whole with the run's output: move the file out of it, or give another --out",
                    shown(),
                    crate::text::escape(&input.display().to_string())
                )));
            }
        }
    }
    if written_by_herdsim(&target.join("summary.json"), "\"herdsim_version\"")
        || written_by_herdsim(&target.join("manifest.json"), "\"herdsim\"")
    {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(target) else {
        return Ok(());
    };
    let mut others: Vec<String> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Another task's shard being written (its hidden staging folder) is herdsim's:
            // the tasks of an array job start together.
            if name.starts_with('.') && name.contains(".herdsim-") {
                return false;
            }
            let shard = name.starts_with("shard-")
                && name.contains("-of-")
                && entry.file_type().is_ok_and(|t| t.is_dir())
                && written_by_herdsim(&entry.path().join("manifest.json"), "\"herdsim\"");
            !shard
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    others.sort();
    let listed: Vec<String> = others
        .iter()
        .take(3)
        .map(|n| crate::text::escape(n).to_string())
        .collect();
    Err(Error::Usage(format!(
        "--out: {} exists and is not a herdsim output folder (it holds {}{}, and no herdsim summary.json or shard manifest): herdsim replaces its output folder whole, which would delete them; give another --out, or another name to the scenario",
        shown(),
        listed.join(", "),
        if others.len() > 3 {
            format!(" and {} more", others.len() - 3)
        } else {
            String::new()
        }
    )))
}

/// Whether the file at `path` is one herdsim wrote: its first kilobyte holds `key` (the
/// version key of a `summary.json` or a shard's `manifest.json`).
fn written_by_herdsim(path: &Path, key: &str) -> bool {
    use std::io::Read;
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(1024);
    file.take(1024).read_to_end(&mut head).is_ok() && String::from_utf8_lossy(&head).contains(key)
}

/// Whether herdsim may create folders in `out`, or, when `out` does not exist yet, in its
/// nearest existing ancestor: tried with a probe folder (removed at once), so that a
/// read-only `--out` fails before the simulation rather than after it.
fn check_can_create(out: &Path) -> Result<()> {
    let Some(existing) = out
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| fs::metadata(p).is_ok())
    else {
        return Ok(());
    };
    match tempfile::Builder::new()
        .prefix(".herdsim-probe-")
        .tempdir_in(existing)
    {
        Ok(_probe) => Ok(()),
        Err(e) => Err(Error::io(
            "cannot create folders in",
            existing,
            io::Error::from(e.kind()),
        )),
    }
}
