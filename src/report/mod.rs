//! Everything that leaves the process: output files and console text.
//!
//! Exporters are pure functions from results to bytes (`csv`, `console`, `chart`, `html`);
//! this module decides where the bytes go. Every output path is built by [`OutputLayout`].
//! A run's files are written into a fresh staging folder that replaces the scenario's folder
//! as a whole once every file is written ([`output_dir`]), and each file is written to a new,
//! randomly named temporary file (created exclusively, so never through a planted symbolic
//! link) renamed into place, so an error or an interruption never leaves a half-written file
//! nor a folder mixing two runs.

pub mod chart;
pub mod console;
pub mod csv;
pub mod html;
pub mod json;
pub mod output_dir;
pub mod verdict;

pub use chart::ChartOptions;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::ChartFormat;
use crate::error::{Error, Result};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

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

    /// The layout of files written straight into `dir` (a staging folder).
    pub fn at(dir: &Path) -> Self {
        OutputLayout {
            dir: dir.to_path_buf(),
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

    /// `summary.json`.
    pub fn summary_json(&self) -> PathBuf {
        self.dir.join("summary.json")
    }

    /// `timeseries.csv`.
    pub fn timeseries_csv(&self) -> PathBuf {
        self.dir.join("timeseries.csv")
    }

    /// A CSV file of the scenario by its stem (`services`, `populations`, `paired`,
    /// `attempts`).
    pub fn csv(&self, stem: &str) -> PathBuf {
        self.dir.join(format!("{stem}.csv"))
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
        fs::create_dir_all(&self.dir).map_err(|e| Error::io("cannot create folder", &self.dir, e))
    }
}

/// Writes `bytes` to `path` atomically: a new temporary file in the same folder, flushed,
/// then renamed over `path`. On error the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |tmp| {
        // The temporary file exists (created exclusively): open it without creating, so the
        // write cannot be redirected.
        fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(tmp)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| Error::io("cannot write", path, e))
    })
}

/// Like [`write_atomic`], for writers that need a path rather than bytes (the PNG encoder):
/// `write` writes the temporary file it is given, which keeps `path`'s extension because
/// encoders choose the format by it; the file is then flushed and renamed over `path`.
/// On error the temporary file is removed.
///
/// The temporary file is created by `tempfile` before `write` sees it: exclusively (never
/// through an existing file or symbolic link), with a random name (`.<stem>.XXXXXX.<ext>`),
/// so nobody can plant a link at a predictable name and have the write land outside the
/// folder. It is created with mode 0666 less the umask, what `File::create` gives, not
/// tempfile's private 0600: it becomes the output file, and colleagues on a shared host must
/// be able to read the report and the CSVs as they can read the folder.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let prefix = format!(".{stem}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(&ext);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode is passed to open(2), which applies the umask, as for `File::create`.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot write", path, e))?;
    // Dropping `tmp` on any error below removes the temporary file.
    write(tmp.path())?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io("cannot write", path, e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("cannot write", path, e.error))?;
    Ok(())
}

/// Draws every chart of `file` in `formats` (with `options`, e.g. `--log-y`) and writes
/// `report.html` beside them.
///
/// The report always embeds SVG, so SVG is rendered in memory even when only PNG files are
/// asked for. Charts render in parallel (each is independent; file contents do not depend on
/// the order), and a failure is returned as [`Error::Chart`] or [`Error::Io`] (exit status 1).
pub fn write_charts_and_report(
    layout: &OutputLayout,
    file: &ScenarioFile,
    result: &ScenarioResult,
    formats: &[ChartFormat],
    options: &ChartOptions,
) -> Result<()> {
    use rayon::prelude::*;

    let charts = chart::charts(file, result, options);
    let png = formats.contains(&ChartFormat::Png);
    let svg = formats.contains(&ChartFormat::Svg);
    let figures = charts
        .par_iter()
        .map(|c| {
            let stem = c.kind().stem();
            let svg_path = layout.chart(stem, "svg");
            let text = chart::render_svg(c).map_err(|msg| Error::Chart {
                path: svg_path.clone(),
                msg,
            })?;
            if svg {
                write_atomic(&svg_path, text.as_bytes())?;
            }
            if png {
                let png_path = layout.chart(stem, "png");
                write_atomic_with(&png_path, |tmp| {
                    chart::render_png(c, tmp).map_err(|msg| Error::Chart {
                        path: png_path.clone(),
                        msg,
                    })
                })?;
            }
            Ok(html::Figure {
                kind: c.kind(),
                svg: text,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let page = html::render(file, result, &figures, formats);
    write_atomic(&layout.report_html(), page.as_bytes())
}

/// Formats a number for CSV and tables: integers without a fraction, others with at most 9
/// decimals (nanosecond resolution for seconds), trailing zeros trimmed; NaN as empty.
pub fn fmt_num(v: f64) -> String {
    let mut s = String::new();
    push_num(&mut s, v);
    s
}

/// A whole number of nanoseconds as seconds, exactly (`3155759999.94`, `0.000000001`, `0`).
/// For a single simulated time or duration: through a double, [`fmt_num`] gives the same
/// digits below 2^23 s (97 days), but above, it shows the double's rounding
/// (`3155759999.9399996`).
pub fn fmt_secs(nanos: u64) -> String {
    let mut s = String::new();
    push_digits(&mut s, nanos / 1_000_000_000, 1);
    let fraction = nanos % 1_000_000_000;
    if fraction > 0 {
        s.push('.');
        push_digits(&mut s, fraction, 9);
        let kept = s.trim_end_matches('0').len();
        s.truncate(kept);
    }
    s
}

/// [`fmt_num`] appended to `out`, without allocating: `timeseries.csv` formats millions of
/// numbers, and a `String` each was a third of a long sweep's instructions.
pub fn push_num(out: &mut String, v: f64) {
    if v.is_nan() {
        return;
    }
    // Integral and below 1e15 (`v.fract() == 0.0`, but `fract`, like `round`, is a libm
    // call on baseline x86-64 and this runs millions of times).
    if v.abs() < 1e15 && (v as i64) as f64 == v {
        return push_int(out, v as i64);
    }
    if push_nanos(out, v) {
        return;
    }
    use std::fmt::Write;
    let start = out.len();
    // The shortest decimal that reads back as `v`, when it has at most 9 decimals: above
    // about 4e6 (48 days in seconds) a double's spacing exceeds 1e-9, and rounding its
    // exact binary value at the ninth decimal would show that spacing as noise
    // (86400000.04 s is stored as 86400000.0400000066). Below, both give the same digits.
    write!(out, "{v}").expect("formatting into a String cannot fail");
    match out[start..].split_once('.') {
        Some((_, decimals)) if decimals.len() > 9 => out.truncate(start),
        _ => return,
    }
    write!(out, "{v:.9}").expect("formatting into a String cannot fail");
    let kept = out[start..]
        .trim_end_matches('0')
        .trim_end_matches('.')
        .len();
    out.truncate(start + kept);
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

/// `v` to 9 decimals, trimmed, by integer arithmetic, when that gives exactly what
/// `format!("{v:.9}")` and the trimming give; false (nothing written) otherwise.
///
/// `{:.9}` rounds the exact binary value of `v` at the ninth decimal. `v * 1e9` is that
/// value scaled, within half an ulp: below 2^40 the ulp is at most 2^-12, so unless the
/// scaled value is within 0.001 of a rounding tie (x.5), rounding it gives the same
/// integer. Means over replications (k / 5, k / 20...) rarely sit near a tie; those that do
/// take the exact path.
fn push_nanos(out: &mut String, v: f64) -> bool {
    let scaled = v * 1e9;
    // (Never NaN: `push_num` writes NaN as nothing before it gets here.)
    if scaled.abs() >= (1u64 << 40) as f64 {
        return false;
    }
    // Truncation and the remainder are exact at this size (no libm `round`).
    let truncated = scaled as i64;
    let fraction = scaled - truncated as f64;
    if (fraction.abs() - 0.5).abs() < 1e-3 {
        return false;
    }
    let nanos = truncated + i64::from(fraction > 0.5) - i64::from(fraction < -0.5);
    if nanos == 0 {
        out.push('0');
        return true;
    }
    if nanos < 0 {
        out.push('-');
    }
    let whole = nanos.unsigned_abs() / 1_000_000_000;
    let mut fraction = nanos.unsigned_abs() % 1_000_000_000;
    push_digits(out, whole, 1);
    if fraction > 0 {
        let mut digits = 9;
        while fraction.is_multiple_of(10) {
            fraction /= 10;
            digits -= 1;
        }
        out.push('.');
        push_digits(out, fraction, digits);
    }
    true
}

/// An integer in decimal, as `Display` writes it.
fn push_int(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_digits(out, v.unsigned_abs(), 1);
}

/// `n` in decimal, zero-padded to at least `width` (1 to 20) digits. Digit by digit: a copy
/// call (and a UTF-8 check) cost more than the few pushes.
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut i = digits.len();
    while n > 0 || digits.len() - i < width {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    digits[i..].iter().for_each(|&d| out.push(char::from(d)));
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
        assert_eq!(fmt_num(-3.0), "-3");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(999_999_999_999_999.0), "999999999999999");
        assert_eq!(fmt_num(1e15), "1000000000000000");
        assert_eq!(fmt_num(-2.5), "-2.5");
        // Large times keep their decimals, without the binary spacing's noise.
        assert_eq!(fmt_num(86_400_000.04), "86400000.04");
        assert_eq!(fmt_num(9_467_280_000.02), "9467280000.02");
        assert_eq!(fmt_num(99_928_562.4), "99928562.4");
    }

    /// A simulated time prints exactly whatever its size; below 2^23 s (97 days) with the
    /// digits it had through a double, so outputs of ordinary runs did not change.
    #[test]
    fn simulated_times_print_exactly() {
        assert_eq!(fmt_secs(0), "0");
        assert_eq!(fmt_secs(1), "0.000000001");
        assert_eq!(fmt_secs(40_000_000), "0.04");
        assert_eq!(fmt_secs(2_000_000_000), "2");
        assert_eq!(fmt_secs(3_155_759_999_940_000_000), "3155759999.94");
        assert_eq!(fmt_secs(u64::MAX), "18446744073.709551615");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every magnitude below 2^23 s, and whole milliseconds (the usual times).
            let nanos = ((x >> 11) >> (x % 53)) % (1_000_000_000 << 23);
            for ns in [nanos, nanos / 1_000_000 * 1_000_000] {
                assert_eq!(fmt_secs(ns), fmt_num(ns as f64 / 1e9), "{ns} ns");
            }
        }
    }

    /// The allocation-free formatter writes what `format!` wrote, appended after what the
    /// buffer already holds; below 2^23 that is `{:.9}` trimmed (the formatting of earlier
    /// versions, so ordinary outputs did not change), above it the shortest decimal that
    /// reads back, when it has at most 9 decimals.
    #[test]
    fn push_num_matches_the_formatting_it_replaced() {
        fn reference(v: f64) -> String {
            if v.is_nan() {
                return String::new();
            }
            if v.fract() == 0.0 && v.abs() < 1e15 {
                return format!("{}", v as i64);
            }
            let shortest = format!("{v}");
            if v.abs() >= (1u64 << 23) as f64
                && shortest.split_once('.').is_none_or(|(_, d)| d.len() <= 9)
            {
                return shortest;
            }
            let s = format!("{v:.9}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            if s == "-0" {
                "0".to_string()
            } else {
                s.to_string()
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1e15,
            -1e15,
            1e300,
            5e-324,
            i64::MAX as f64,
            i64::MIN as f64,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let scale = [1.0, 1e-9, 1e-3, 1e3, 1e9, 1e18][(x % 6) as usize];
            values.push(
                (x >> 11) as f64 / (1u64 << 53) as f64
                    * scale
                    * if x & 1 == 0 { 1.0 } else { -1.0 },
            );
            values.push(((x >> 40) as f64) / 5.0);
            // Means over replications, and values on and next to rounding ties.
            let k = (x >> 20) % 100_000;
            for reps in [3.0, 7.0, 20.0, 1000.0, 1024.0, 3e9] {
                values.push(k as f64 / reps);
            }
            let tie = ((x >> 24) % 1_000_000) as f64 * 1e-9 + 5e-10;
            values.extend([
                tie,
                -tie,
                f64::from_bits(tie.to_bits() + 1),
                f64::from_bits(tie.to_bits() - 1),
            ]);
        }
        for v in values {
            let mut out = String::from("x,");
            push_num(&mut out, v);
            assert_eq!(out, format!("x,{}", reference(v)), "{v:e}");
        }
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

    /// Output files get the mode `File::create` would give in the same folder (0666 less
    /// the umask), not tempfile's 0600, so others can read them where the umask lets them.
    #[cfg(unix)]
    #[test]
    fn atomic_writes_get_the_mode_of_a_created_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        fs::File::create(&reference).unwrap();
        let want = fs::metadata(&reference).unwrap().permissions().mode() & 0o777;
        write_atomic(&dir.path().join("a.csv"), b"data").unwrap();
        write_atomic_with(&dir.path().join("a.png"), |tmp| {
            fs::write(tmp, b"png").map_err(|e| Error::io("cannot write", tmp, e))
        })
        .unwrap();
        for name in ["a.csv", "a.png"] {
            let mode = fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, want, "{name}: {mode:o} against {want:o}");
        }
        // Under the usual umask 0022 that is 0644 where tempfile alone gives 0600; the CLI
        // test `outputs_are_readable_by_others_under_umask_0022` pins the umask.
    }

    /// The old name `.<stem>.tmp-<pid>.<ext>` was predictable and opened with truncation,
    /// following links: a link planted there made herdsim overwrite its target.
    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        for ext in ["csv", "png"] {
            let planted = dir
                .path()
                .join(format!(".a.tmp-{}.{ext}", std::process::id()));
            std::os::unix::fs::symlink(&victim, &planted).unwrap();
        }
        write_atomic(&dir.path().join("a.csv"), b"data").unwrap();
        write_atomic_with(&dir.path().join("a.png"), |tmp| {
            fs::write(tmp, b"png").map_err(|e| Error::io("cannot write", tmp, e))
        })
        .unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read(dir.path().join("a.csv")).unwrap(), b"data");
        assert_eq!(fs::read(dir.path().join("a.png")).unwrap(), b"png");
    }
}
