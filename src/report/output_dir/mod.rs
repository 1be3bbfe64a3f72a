//! The output folder of one scenario, replaced as a whole: never half old, half new.
//!
//! A run's files are written into a fresh hidden sibling folder, `<out>/.<name>.herdsim-XXXXXX`
//! (random suffix, created exclusively by `tempfile`, mode 0777 less the umask as for
//! `mkdir`, since it becomes the output folder), and only when every
//! file is written is that folder swapped with `<out>/<name>` in one step (Linux
//! `renameat2(RENAME_EXCHANGE)`; elsewhere, or on a file system without it, two renames with
//! the old folder moved aside first). So `<out>/<name>` is always entirely the previous
//! run's or entirely the new one's, whether a file cannot be written (exit 1), the disk fills
//! or the process is killed. The old content is then deleted.
//!
//! Two runs writing the same `<out>` take turns: the writer holds an exclusive lock on the
//! `<out>` folder itself (`flock` on its descriptor, so no lock file can be planted) from its
//! first staging folder until its last is put in place, and a second run waits for it,
//! saying so on stderr unless `--quiet`. While it holds the lock, leftovers of an
//! earlier killed run (its hidden staging folders) are removed. On SIGINT, SIGTERM or SIGHUP
//! the staging folder is removed before the process exits (status 130); a SIGKILL leaves it
//! for the next run to remove.
//!
//! Nothing here follows a symbolic link it did not create: the staging folder and every file
//! in it are new, `<out>/<name>` is renamed (never opened), and a `<out>/<name>` that is a
//! link or a file is refused.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once, Weak};

use crate::error::{Error, Result};

mod checks;
pub use checks::{check_out, check_replaceable};

/// Staging folders a signal must remove before the process exits.
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The `<out>` locks this process holds, shared by its stagings: a run that stages several
/// scenarios into one `<out>` before putting any in place takes the lock once (a second
/// `flock` on a new descriptor of the same folder would wait for the first forever).
static HELD: Mutex<Vec<(PathBuf, Weak<File>)>> = Mutex::new(Vec::new());
/// The `<out>` folders (and missing parents) this process created, deepest first: a run
/// that fails writes nothing, so a staging dropped without commit removes them again when
/// they are empty (the last staging of a shared `<out>` to go succeeds).
static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SIGNALS: Once = Once::new();

/// Installs (once) the SIGINT / SIGTERM / SIGHUP handler that removes the staging folders
/// in progress, then exits with status 130. Without a handler the process would die with
/// the hidden folder left behind.
pub fn install_signal_cleanup() {
    SIGNALS.call_once(|| {
        // Failing to install it (another handler is set) only loses the cleanup.
        let _ = ctrlc::set_handler(|| {
            // Taking the lock waits for a swap in progress to finish (see `commit`).
            let staged = STAGING.lock().unwrap_or_else(|e| e.into_inner());
            for dir in staged.iter() {
                // A writer thread may still be adding files while the tree is removed,
                // which makes one pass fail with "directory not empty": try again.
                for _ in 0..100 {
                    if fs::remove_dir_all(dir).is_ok() || !dir.exists() {
                        break;
                    }
                }
            }
            // Folders this run created for `--out` (`fresh/a/b`) go too when empty, as when
            // a run fails: an interrupted run leaves the file system as it found it.
            if let Ok(created) = CREATED.try_lock() {
                for folder in created.iter() {
                    let _ = fs::remove_dir(folder);
                }
            }
            std::process::exit(130);
        });
    });
}

/// The lock on `out`: the one this process already holds, or a new one (waiting while
/// another herdsim run holds it, and saying so on stderr unless `quiet`).
fn lock_out(out: &Path, quiet: bool) -> Result<Arc<File>> {
    let key = fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    held.retain(|(_, lock)| lock.strong_count() > 0);
    if let Some(lock) = held
        .iter()
        .find(|(path, _)| *path == key)
        .and_then(|(_, lock)| lock.upgrade())
    {
        return Ok(lock);
    }
    let lock = File::open(out).map_err(|e| Error::io("cannot open folder", out, e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            if !quiet {
                eprintln!(
                    "herdsim: {} is being written by another herdsim run; waiting for it to finish",
                    crate::text::escape(&out.display().to_string())
                );
            }
            lock.lock()
                .map_err(|e| Error::io("cannot lock folder", out, e))?;
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(Error::io("cannot lock folder", out, e));
        }
    }
    let lock = Arc::new(lock);
    held.push((key, Arc::downgrade(&lock)));
    Ok(lock)
}

/// Creates `out` and its missing parents (remembered in [`CREATED`], to be removed again if
/// nothing is written) and locks it.
fn create_and_lock(out: &Path, quiet: bool) -> Result<Arc<File>> {
    let missing: Vec<PathBuf> = out
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .take_while(|p| fs::symlink_metadata(p).is_err())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(out).map_err(|e| Error::io("cannot create folder", out, e))?;
    CREATED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(missing);
    lock_out(out, quiet)
}

/// Whether `lock` holds the folder now at `out` (not one deleted since it was opened).
fn locks_folder(lock: &File, out: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (lock.metadata(), fs::metadata(out)) {
            (Ok(held), Ok(there)) => held.dev() == there.dev() && held.ino() == there.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = lock;
        out.is_dir()
    }
}

fn unregister(dir: &Path) {
    STAGING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|d| d != dir);
}

/// A scenario's output being written: the staging folder and the lock on `<out>`.
/// Dropped without [`Staging::commit`], it removes the staging folder and the previous
/// output stays as it was.
#[derive(Debug)]
pub struct Staging {
    dir: Option<PathBuf>,
    target: PathBuf,
    _lock: Arc<File>,
}

/// The hidden staging folders of scenario `name` start with this.
fn staging_prefix(name: &str) -> String {
    format!(".{name}.herdsim-")
}

impl Staging {
    /// Creates `out` if needed, locks it (waiting for another herdsim that holds it), removes
    /// leftovers of killed runs of `name`, and creates a fresh staging folder. The wait is
    /// announced on stderr unless `quiet` (`--quiet`: it is progress, not a warning).
    pub fn begin(out: &Path, name: &str, quiet: bool) -> Result<Staging> {
        // A file where the folder goes (a sharded run's `<out>/<name>`): said as a
        // replaced output says it, not as the system's "File exists".
        if fs::metadata(out).is_ok_and(|m| !m.is_dir()) {
            return Err(Error::io(
                "cannot create folder",
                out,
                io::Error::other("it exists and is not a folder (a file)"),
            ));
        }
        let mut lock = create_and_lock(out, quiet)?;
        // The run that held the lock may have removed `out` on its way out (a failed or
        // interrupted run removes the folders it created, when empty) while this one
        // waited: the lock is then on a deleted folder. Lock the one there now.
        for _ in 0..8 {
            if locks_folder(&lock, out) {
                break;
            }
            drop(lock);
            lock = create_and_lock(out, quiet)?;
        }
        let prefix = staging_prefix(name);
        if let Ok(entries) = fs::read_dir(out) {
            for entry in entries.flatten() {
                let stale = entry.file_name().to_string_lossy().starts_with(&prefix)
                    && entry.file_type().is_ok_and(|t| t.is_dir());
                if stale
                    && let Err(e) = fs::remove_dir_all(entry.path())
                    && entry.path().exists()
                {
                    warn_undeletable(
                        &out.join(entry.file_name()),
                        "a folder left by an earlier run",
                        &e,
                    );
                }
            }
        }
        // Created and registered under the lock, so a signal arriving in between finds
        // the folder registered rather than leaving it behind.
        let mut staged = STAGING.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir_in(out)
            // tempfile's error repeats the path; the kind says what went wrong.
            .map_err(|e| Error::io("cannot create a folder in", out, io::Error::from(e.kind())))?
            .keep();
        staged.push(dir.clone());
        drop(staged);
        Ok(Staging {
            dir: Some(dir),
            target: out.join(name),
            _lock: lock,
        })
    }

    /// The folder to write the run's files into.
    pub fn path(&self) -> &Path {
        self.dir.as_deref().expect("present until commit")
    }

    /// The folder the files will be in once committed: `<out>/<name>`.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// `e` with paths inside the staging folder shown at their final place (`<out>/<name>/
    /// summary.csv`), so a message names the file the user will look for.
    pub fn name_target(&self, e: Error) -> Error {
        let Some(dir) = self.dir.as_deref() else {
            return e;
        };
        let fix = |p: PathBuf| match p.strip_prefix(dir) {
            Ok(rest) => self.target.join(rest),
            Err(_) => p,
        };
        match e {
            Error::Io {
                action,
                path,
                source,
            } => Error::Io {
                action,
                path: fix(path),
                source,
            },
            Error::Chart { path, msg } => Error::Chart {
                path: fix(path),
                msg,
            },
            other => other,
        }
    }

    /// Swaps the staging folder into place as `<out>/<name>` and deletes the old content.
    pub fn commit(mut self) -> Result<()> {
        let dir = self.dir.take().expect("committed once");
        // Held across the swap, so a signal handler sees either the staging folder (before)
        // or the old content (after) under `dir`, and removes the right one.
        let mut staged = STAGING.lock().unwrap_or_else(|e| e.into_inner());
        let swapped = swap_into_place(&dir, &self.target, &mut staged);
        drop(staged);
        match swapped {
            Ok(Some(old)) => {
                // `old` now holds the previous output; still registered, so a signal while
                // it is deleted finishes the job. The new output is in place whatever
                // happens here; a previous output herdsim may not delete (a folder in it made
                // read-only) stays under its hidden name, which the user must hear of: it
                // would otherwise linger unseen, at the size of a whole run's files.
                if let Err(e) = fs::remove_dir_all(&old)
                    && old.exists()
                {
                    // Named beside the target, as the user wrote `--out`.
                    let shown = match (self.target.parent(), old.file_name()) {
                        (Some(out), Some(name)) => out.join(name),
                        _ => old.clone(),
                    };
                    let what = format!(
                        "the previous output of {}",
                        crate::text::escape(&self.target.display().to_string())
                    );
                    warn_undeletable(&shown, &what, &e);
                }
                unregister(&dir);
                unregister(&old);
                Ok(())
            }
            Ok(None) => {
                unregister(&dir);
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                unregister(&dir);
                Err(e)
            }
        }
    }
}

/// Says on stderr (whatever `--quiet` says: data is left on disk) that `dir`, `what` it
/// holds, could not be deleted, and how to: a folder in it is read-only (or unreadable),
/// and `rm -rf` alone would fail as herdsim did.
fn warn_undeletable(dir: &Path, what: &str, e: &io::Error) {
    let shown = crate::text::escape(&dir.display().to_string()).into_owned();
    // A command to paste only when the text shown is the path itself (no escaped or
    // replaced character), inside single quotes, and not read as an option.
    let pasteable =
        dir.to_str() == Some(shown.as_str()) && !shown.contains('\'') && !shown.starts_with('-');
    let how = if pasteable {
        format!("delete it with: chmod -R u+rwX '{shown}' && rm -rf '{shown}'")
    } else {
        "make it readable and writable (chmod -R u+rwX) and delete it".to_string()
    };
    eprintln!("warning: {shown} holds {what} and could not be deleted ({e}); {how}");
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = fs::remove_dir_all(&dir);
            unregister(&dir);
            // Folders this run created stay only if something was put in them.
            let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
            created.retain(|folder| fs::remove_dir(folder).is_err() && folder.exists());
        }
    }
}

/// Puts `staging` at `target`. Returns where the previous content of `target` now is (to be
/// deleted), or `None` when there was none. `staged` is the locked list of folders a signal
/// removes (the caller holds the lock across the swap).
fn swap_into_place(
    staging: &Path,
    target: &Path,
    staged: &mut Vec<PathBuf>,
) -> Result<Option<PathBuf>> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::rename(staging, target).map_err(|e| Error::io("cannot write", target, e))?;
            Ok(None)
        }
        Err(e) => Err(Error::io("cannot write", target, e)),
        Ok(m) if m.is_dir() => {
            if exchange(staging, target).is_ok() {
                return Ok(Some(staging.to_path_buf()));
            }
            swap_by_renames(staging, target, staged).map(Some)
        }
        Ok(_) => Err(Error::io(
            "cannot write",
            target,
            io::Error::other("it exists and is not a folder (a file or a symbolic link)"),
        )),
    }
}

/// Atomically exchanges two paths (Linux `renameat2` with `RENAME_EXCHANGE`).
/// Without an atomic exchange: moves the old folder aside, then the new one in. In between
/// `target` is briefly absent, never a mix. Returns where the old folder went.
fn swap_by_renames(staging: &Path, target: &Path, staged: &mut Vec<PathBuf>) -> Result<PathBuf> {
    // The staging folder's name is random and `<out>` is locked: `-old` beside it is ours.
    let mut aside = staging.as_os_str().to_owned();
    aside.push("-old");
    let aside = PathBuf::from(aside);
    fs::rename(target, &aside).map_err(|e| Error::io("cannot write", target, e))?;
    staged.push(aside.clone());
    if let Err(e) = fs::rename(staging, target) {
        let _ = fs::rename(&aside, target);
        staged.retain(|d| d != &aside);
        return Err(Error::io("cannot write", target, e));
    }
    Ok(aside)
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both pointers are valid NUL-terminated strings that outlive the call;
    // renameat2 only reads them.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// No atomic exchange off Linux: the caller falls back to two renames.
#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The fallback used where the kernel has no atomic exchange: the old folder is set
    /// aside (and registered for a signal to remove), the new one takes its place.
    #[test]
    fn the_rename_fallback_swaps_and_registers_the_old_folder() {
        let out = tempfile::tempdir().unwrap();
        let (staging, target) = (out.path().join(".x.herdsim-abc"), out.path().join("x"));
        fs::create_dir(&staging).unwrap();
        fs::create_dir(&target).unwrap();
        fs::write(staging.join("new.csv"), "new").unwrap();
        fs::write(target.join("old.csv"), "old").unwrap();
        let mut staged = vec![staging.clone()];
        let aside = swap_by_renames(&staging, &target, &mut staged).unwrap();
        assert_eq!(aside, out.path().join(".x.herdsim-abc-old"));
        assert_eq!(staged, [staging, aside.clone()]);
        assert_eq!(names(&target), ["new.csv"]);
        assert_eq!(names(&aside), ["old.csv"]);
    }

    #[test]
    fn a_commit_replaces_the_whole_folder() {
        let out = tempfile::tempdir().unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        fs::write(s.path().join("a.csv"), "1").unwrap();
        fs::write(s.path().join("old-only.csv"), "1").unwrap();
        s.commit().unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        fs::write(s.path().join("a.csv"), "2").unwrap();
        s.commit().unwrap();
        assert_eq!(names(out.path()), ["x"]);
        assert_eq!(names(&out.path().join("x")), ["a.csv"]);
        assert_eq!(fs::read(out.path().join("x/a.csv")).unwrap(), b"2");
    }

    #[test]
    fn a_dropped_staging_leaves_the_old_folder_and_no_trace() {
        let out = tempfile::tempdir().unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        fs::write(s.path().join("a.csv"), "1").unwrap();
        s.commit().unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        fs::write(s.path().join("a.csv"), "half").unwrap();
        drop(s);
        assert_eq!(names(out.path()), ["x"]);
        assert_eq!(fs::read(out.path().join("x/a.csv")).unwrap(), b"1");
    }

    #[test]
    fn leftovers_of_a_killed_run_are_removed() {
        let out = tempfile::tempdir().unwrap();
        fs::create_dir(out.path().join(".x.herdsim-abc123")).unwrap();
        fs::write(out.path().join(".x.herdsim-abc123/half.csv"), "1").unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        s.commit().unwrap();
        assert_eq!(names(out.path()), ["x"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_file_in_place_of_the_folder_is_refused_and_left_alone() {
        let out = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), out.path().join("x")).unwrap();
        let s = Staging::begin(out.path(), "x", false).unwrap();
        fs::write(s.path().join("a.csv"), "1").unwrap();
        let err = s.commit().unwrap_err().to_string();
        assert!(err.contains("exists and is not a folder"), "{err}");
        assert!(names(elsewhere.path()).is_empty());
        assert_eq!(names(out.path()), ["x"]);
    }
}
