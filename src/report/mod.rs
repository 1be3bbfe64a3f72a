//! Everything that leaves the process: output files and console text.
//!
//! Exporters are pure functions from results to bytes (`csv`, `console`, `chart`, `html`);
//! this module decides where the bytes go. Every output path is built by [`OutputLayout`],
//! and every file is written to a temporary name in the same folder and renamed into place,
//! so an error or an interruption never leaves a half-written file.

pub mod console;
pub mod csv;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The output folder of one scenario: `<out>/<scenario name>/`.
#[derive(Debug, Clone)]
pub struct OutputLayout {
    dir: PathBuf,
}

impl OutputLayout {
    /// The layout for scenario `name` (already validated as `[a-z0-9_-]{1,64}`) under `out`.
    pub fn new(out: &Path, name: &str) -> Self {
        OutputLayout {
            dir: out.join(name),
        }
    }

    /// The scenario's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `summary.csv`.
    pub fn summary_csv(&self) -> PathBuf {
        self.dir.join("summary.csv")
    }

    /// `timeseries.csv`.
    pub fn timeseries_csv(&self) -> PathBuf {
        self.dir.join("timeseries.csv")
    }

    /// `requests.csv`.
    pub fn requests_csv(&self) -> PathBuf {
        self.dir.join("requests.csv")
    }

    /// A chart file, e.g. `load.svg`.
    pub fn chart(&self, stem: &str, extension: &str) -> PathBuf {
        self.dir.join(format!("{stem}.{extension}"))
    }

    /// `report.html`.
    pub fn report_html(&self) -> PathBuf {
        self.dir.join("report.html")
    }

    /// Creates the folder (and its parents).
    pub fn create(&self) -> Result<()> {
        fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed, then
/// renamed over `path`. On error the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Formats a number for CSV and tables: integers without a fraction, others with at most 9
/// decimals (nanosecond resolution for seconds), trailing zeros trimmed; NaN as empty.
pub fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        return String::new();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_exactly_and_briefly() {
        assert_eq!(fmt_num(42.0), "42");
        assert_eq!(fmt_num(0.1 + 0.2), "0.3");
        assert_eq!(fmt_num(5.123456789), "5.123456789");
        assert_eq!(fmt_num(-0.0000000001), "0");
        assert_eq!(fmt_num(f64::NAN), "");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
