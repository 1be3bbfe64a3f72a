//! Trace files: `trace = "FILE.csv"` populations, read into arrival times.
//!
//! This module owns the trace format: a header `t_s`, then one row per logical request with
//! its arrival time in seconds (finite, >= 0, non-decreasing); blank lines (empty or only
//! whitespace) are skipped. Each bad row is reported with the trace file's own
//! `file:line:col`, its physical line whatever the line ends. Paths are resolved relative to
//! the scenario file's folder, and [`Traces`] reads each file once however many sweep points
//! use it, keeping each file's SHA-256 for the scenario hash. `merge` reads the copies a
//! shard stored instead ([`Traces::from_copies`]), so it never depends on where it runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Fault, ScenarioError};
use crate::time::{NANOS_PER_SEC, SimTime};

/// The trace column, and the key every trace problem names.
pub const COLUMN: &str = "t_s";

/// Why [`Traces::from_copies`] cannot read a trace: the shard stored no copy of it (a shard
/// made by a herdsim that stored no copies); `merge` looks for it in the messages.
pub const NO_COPY: &str = "the shard stored no copy of this trace";

/// The largest trace file herdsim reads (about 50 million arrivals): a file is read whole,
/// so a larger one, or a device such as `/dev/zero`, would take memory without bound.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

/// The bytes of a trace file, at most [`MAX_TRACE_BYTES`].
fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>, TraceProblem> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_TRACE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| TraceProblem::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(TraceProblem::Unreadable(format!(
            "it holds more than {} GiB, the most herdsim reads",
            MAX_TRACE_BYTES >> 30
        )));
    }
    Ok(bytes)
}

/// Problems reported per trace file before reading stops.
const MAX_PROBLEMS: usize = 10;

/// Why a trace could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceProblem {
    /// The file cannot be opened or read: the reason (reported at the scenario's `trace` key).
    Unreadable(String),
    /// The file was read, and these rows (or its header) are wrong.
    Invalid(Vec<ScenarioError>),
}

/// A trace file a scenario reads, as the scenario hash and a shard record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFile {
    /// The path as written in the scenario (relative to its folder).
    pub written: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// The SHA-256 of its bytes, as 64 lowercase hex digits.
    pub sha256: String,
}

/// Trace files read so far, and the folder relative trace paths start from.
#[derive(Debug, Clone)]
pub struct Traces {
    folder: PathBuf,
    /// For `merge`: the file each trace is read from instead, by the trace's own path; no
    /// other trace is read. `None`: each trace from its own path.
    copies: Option<HashMap<PathBuf, PathBuf>>,
    read: HashMap<PathBuf, Result<Arc<Vec<SimTime>>, TraceProblem>>,
    /// Every file read, in the order first asked for: what the scenario hash covers.
    files: Vec<TraceFile>,
}

impl Traces {
    /// Resolves relative paths against `folder` (`""`: the current directory).
    pub fn new(folder: impl Into<PathBuf>) -> Self {
        Traces {
            folder: folder.into(),
            copies: None,
            read: HashMap::new(),
            files: Vec::new(),
        }
    }

    /// For a scenario read from `file`: its folder (the current directory for a bare name).
    pub fn beside(file: &str) -> Self {
        Traces::new(Path::new(file).parent().unwrap_or(Path::new("")))
    }

    /// Reads each trace written as `copies[i].0` (relative to `folder`, as in [`Traces::new`])
    /// from the file `copies[i].1`, and refuses any other trace: what a shard stored, so that
    /// `merge` reads the traces the shard ran, wherever it runs.
    pub fn from_copies(
        folder: impl Into<PathBuf>,
        copies: impl IntoIterator<Item = (String, PathBuf)>,
    ) -> Self {
        let mut traces = Traces::new(folder);
        let copies = copies
            .into_iter()
            .map(|(written, copy)| (traces.folder.join(written), copy))
            .collect();
        traces.copies = Some(copies);
        traces
    }

    /// Where the trace written as `written` is read from: its own path, or its copy; `None`
    /// when there are copies and none is of this trace.
    fn source(&self, written: &str) -> Option<PathBuf> {
        let own = self.folder.join(written);
        match &self.copies {
            None => Some(own),
            Some(copies) => copies.get(&own).cloned(),
        }
    }

    /// Where the trace written as `written` is read from, as messages show it.
    pub fn path(&self, written: &str) -> PathBuf {
        self.source(written)
            .unwrap_or_else(|| self.folder.join(written))
    }

    /// The arrival times of the trace written as `written`, read once.
    pub fn get(&mut self, written: &str) -> Result<Arc<Vec<SimTime>>, TraceProblem> {
        let path = self.path(written);
        if let Some(read) = self.read.get(&path) {
            return read.clone();
        }
        let read = match self.source(written) {
            Some(source) => read_bounded(&source),
            None => Err(TraceProblem::Unreadable(NO_COPY.to_string())),
        };
        let read = read.and_then(|text| {
            self.files.push(TraceFile {
                written: written.to_string(),
                path: path.clone(),
                sha256: super::sha256(&text),
            });
            parse(&path.display().to_string(), &text)
                .map(Arc::new)
                .map_err(TraceProblem::Invalid)
        });
        self.read.insert(path, read.clone());
        read
    }

    /// The files read, in the order first asked for.
    pub fn into_files(self) -> Vec<TraceFile> {
        self.files
    }
}

/// Parses trace text. `file` names it in messages.
///
/// Blank lines (empty or only whitespace) are skipped. Every message names the physical
/// line of the file, whatever its line ends: the csv crate's own line count is not that
/// (it misses the `\n` of a CRLF row end and the blank lines it skips before a row), so
/// lines are counted from the byte offsets it gives instead, by `Lines`.
pub fn parse(file: &str, input: &[u8]) -> Result<Vec<SimTime>, Vec<ScenarioError>> {
    let at = |line: u64, msg: String| ScenarioError {
        file: file.to_string(),
        line: Some(line as usize),
        col: Some(1),
        key: COLUMN.to_string(),
        msg,
        fault: Fault::Other,
    };
    let mut lines = Lines::new(input);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    // One record read into row after row, its fields trimmed as they are used: a record
    // per row, and the crate's trimming (which copies it), spent half the time of reading
    // a 5 M-row trace in the allocator.
    let mut record = csv::StringRecord::new();
    // Reads the next row that is not blank into `record`: its line, and whether it read.
    let mut next_row = |record: &mut csv::StringRecord| loop {
        let read = reader.read_record(record);
        if let Ok(false) = read {
            return None;
        }
        let line = lines.of(match &read {
            Ok(_) => record.position(),
            Err(e) => e.position(),
        });
        if !lines.blank() {
            return Some((line, read.map(|_| ())));
        }
    };
    // The header is the first line that is not blank, so read as a row like the others.
    let header_line = match next_row(&mut record) {
        None => 1,
        Some((line, Ok(()))) => line,
        Some((line, Err(e))) => return Err(vec![at(line, csv_problem(&e))]),
    };
    if record.len() != 1 || record[0].trim() != COLUMN {
        let header = fields(&record);
        let found = if header.iter().all(|f| f.is_empty()) {
            "an empty first line".to_string()
        } else {
            format!("`{}`", header.join(","))
        };
        return Err(vec![at(
            header_line,
            format!(
                "expected the header `{COLUMN}` (one column: arrival times in seconds), found {found}"
            ),
        )]);
    }
    // At most one time per line: reserved whole, as a trace may hold tens of millions
    // (growing by doubling held 1.5 times the final size while copying).
    let mut times = Vec::with_capacity(input.iter().filter(|&&b| b == b'\n').count() + 1);
    let mut problems = Vec::new();
    // The previous good time, as written (one buffer, not a string per row) and in
    // nanoseconds.
    let mut previous: Option<u64> = None;
    let mut previous_text = String::new();
    while let Some((line, read)) = next_row(&mut record) {
        if problems.len() == MAX_PROBLEMS {
            problems.push(at(
                line,
                format!("expected at most {MAX_PROBLEMS} problems per trace file, found more: fix the ones above first"),
            ));
            break;
        }
        if let Err(e) = read {
            problems.push(at(line, csv_problem(&e)));
            continue;
        }
        if record.len() != 1 {
            let fields = fields(&record);
            problems.push(at(
                line,
                format!(
                    "expected one field per row (the time in seconds), found {}: \"{}\"",
                    record.len(),
                    fields.join(",")
                ),
            ));
            continue;
        }
        let text = record[0].trim();
        let secs = match text.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 && x * (NANOS_PER_SEC as f64) < u64::MAX as f64 => x,
            Ok(x) if x.is_finite() && x >= 0.0 => {
                problems.push(at(
                    line,
                    format!("expected a time in seconds below 18446744073 (simulated time ends there), found {text}"),
                ));
                continue;
            }
            Ok(_) => {
                problems.push(at(
                    line,
                    format!("expected a time in seconds (a finite number >= 0), found {text}"),
                ));
                continue;
            }
            Err(_) => {
                problems.push(at(
                    line,
                    format!("expected a time in seconds (a finite number >= 0), found \"{text}\""),
                ));
                continue;
            }
        };
        let nanos = (secs * NANOS_PER_SEC as f64).round() as u64;
        if let Some(before) = previous
            && nanos < before
        {
            problems.push(at(
                line,
                format!("expected a time >= the previous one ({previous_text}), found {text}"),
            ));
            continue;
        }
        previous = Some(nanos);
        previous_text.clear();
        previous_text.push_str(text);
        times.push(SimTime(nanos));
    }
    if problems.is_empty() && times.is_empty() {
        problems.push(at(
            header_line,
            "expected at least one row (one per logical request) after the header, found none"
                .to_string(),
        ));
    }
    if problems.is_empty() {
        // Blank lines reserved room for no time.
        if times.capacity() > times.len() + times.len() / 8 {
            times.shrink_to_fit();
        }
        Ok(times)
    } else {
        Err(problems)
    }
}

/// Physical line numbers (1-based) of the rows the csv crate reads, from their byte offsets.
///
/// A line ends at `\n`, `\r\n` or a lone `\r`, as for the csv crate. Rows are looked up in
/// file order, so the whole file is scanned once.
struct Lines<'a> {
    input: &'a [u8],
    /// Where the last row looked up starts, and its line.
    at: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    fn new(input: &'a [u8]) -> Self {
        Lines {
            input,
            at: 0,
            line: 1,
        }
    }

    /// The line of the row the csv crate placed at `position`. The crate places a row just
    /// after the previous row's end, so before the rest of a CRLF and any empty lines: the
    /// row starts at the first byte from there that is not a line end. Without a position
    /// (never the case for rows read from a slice), the first line.
    fn of(&mut self, position: Option<&csv::Position>) -> u64 {
        let Some(offset) = position.map(|p| p.byte() as usize) else {
            return 1;
        };
        let offset = offset.min(self.input.len());
        if offset < self.at {
            // Not in file order: count again from the start.
            (self.at, self.line) = (0, 1);
        }
        let mut i = self.at;
        while i < self.input.len() && (i < offset || matches!(self.input[i], b'\n' | b'\r')) {
            let lone_cr = self.input[i] == b'\r' && self.input.get(i + 1) != Some(&b'\n');
            if self.input[i] == b'\n' || lone_cr {
                self.line += 1;
            }
            i += 1;
        }
        self.at = i;
        self.line
    }

    /// Whether the line of the last row looked up holds only whitespace: a blank line the
    /// csv crate reads as a row of one empty field (it skips only empty lines itself).
    fn blank(&self) -> bool {
        self.input[self.at..]
            .iter()
            .take_while(|&&b| b != b'\n' && b != b'\r')
            .all(u8::is_ascii_whitespace)
    }
}

/// The fields of `record`, trimmed (Unicode whitespace, as the csv crate's `Trim::All`).
fn fields(record: &csv::StringRecord) -> Vec<&str> {
    record.iter().map(str::trim).collect()
}

/// A CSV-level fault in plain words (the csv crate's own wording names its internals).
fn csv_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => {
            "expected UTF-8 text, found bytes that are not UTF-8".to_string()
        }
        csv::ErrorKind::Io(io) => format!("expected a readable file, found a read error: {io}"),
        _ => format!("expected a CSV row, found a malformed one ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<u64> {
        parse("a.csv", text.as_bytes())
            .unwrap_or_else(|e| panic!("{e:?}"))
            .iter()
            .map(|t| t.0)
            .collect()
    }

    fn bad(text: &str) -> Vec<String> {
        parse("a.csv", text.as_bytes())
            .expect_err("refused")
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn times_are_seconds_rounded_to_the_nearest_nanosecond() {
        assert_eq!(
            ok("t_s\n0\n0.5\n0.5\n1.0000000004\n1.0000000006\n2e1\n"),
            [
                0,
                500_000_000,
                500_000_000,
                1_000_000_000,
                1_000_000_001,
                20_000_000_000
            ]
        );
        // Spaces around values, CRLF line ends and a missing final newline are fine.
        assert_eq!(ok("t_s\r\n 1 \r\n2"), [1_000_000_000, 2_000_000_000]);
        // Spaces around the header are allowed too, as around a value.
        assert_eq!(ok(" t_s \n1"), [1_000_000_000]);
    }

    #[test]
    fn a_decreasing_time_names_its_line_and_the_previous_time_as_written() {
        assert_eq!(
            bad("t_s\n1\n12.5\n12.25\n13\n"),
            ["a.csv:4:1: t_s: expected a time >= the previous one (12.5), found 12.25"]
        );
    }

    #[test]
    fn lines_are_the_files_own_whatever_the_line_ends_and_blank_lines() {
        let found = |line: usize, text: &str| {
            format!(
                "a.csv:{line}:1: t_s: expected a time in seconds (a finite number >= 0), found \"{text}\""
            )
        };
        let earlier = |line: usize, shown: &str| {
            format!(
                "a.csv:{line}:1: t_s: expected a time >= the previous one ({shown}), found 0.05"
            )
        };
        assert_eq!(bad("t_s\r\nx\r\n"), [found(2, "x")]);
        assert_eq!(
            bad("t_s\r\n1\r\n2\r\n3\r\n4\r\n5\r\nx\r\ny\r\n"),
            [found(7, "x"), found(8, "y")]
        );
        assert_eq!(bad("t_s\r\n0.1\r\n0.05\r\n"), [earlier(3, "0.1")]);
        assert_eq!(bad("t_s\n1\n\n\n\nx\n"), [found(6, "x")]);
        assert_eq!(bad("t_s\n0.1\n\n0.05\n"), [earlier(4, "0.1")]);
        // Blank lines in CRLF and old Mac (CR) files, and before the header, count too.
        assert_eq!(bad("t_s\r\n\r\n1\r\n\r\nx"), [found(5, "x")]);
        assert_eq!(bad("t_s\r1\r\rx\r"), [found(4, "x")]);
        assert_eq!(
            bad("\n \r\ntime\n1\n"),
            [
                "a.csv:3:1: t_s: expected the header `t_s` (one column: arrival times in seconds), found `time`"
            ]
        );
        let many = format!("t_s\r\n\r\n{}", "x\r\n".repeat(20));
        assert!(bad(&many)[MAX_PROBLEMS].starts_with("a.csv:13:1: t_s: expected at most 10"));
    }

    #[test]
    fn whitespace_only_lines_are_skipped_like_empty_ones() {
        assert_eq!(
            ok("t_s\n1\n   \n\t\n2\r\n \r\n3\n  "),
            [1_000_000_000, 2_000_000_000, 3_000_000_000]
        );
        assert_eq!(
            bad("t_s\n \n1\n \nx\n"),
            ["a.csv:5:1: t_s: expected a time in seconds (a finite number >= 0), found \"x\""]
        );
        // An empty quoted field is a value, not a blank line.
        assert_eq!(
            bad("t_s\n\"\"\n"),
            ["a.csv:2:1: t_s: expected a time in seconds (a finite number >= 0), found \"\""]
        );
        // Only blank lines after the header is still no row.
        assert!(bad("t_s\n \n\n")[0].contains("expected at least one row"));
    }

    #[test]
    fn every_bad_row_is_reported_up_to_a_limit() {
        assert_eq!(
            bad("t_s\nabc\n-1\ninf\n1,2\n"),
            [
                "a.csv:2:1: t_s: expected a time in seconds (a finite number >= 0), found \"abc\"",
                "a.csv:3:1: t_s: expected a time in seconds (a finite number >= 0), found -1",
                "a.csv:4:1: t_s: expected a time in seconds (a finite number >= 0), found inf",
                "a.csv:5:1: t_s: expected one field per row (the time in seconds), found 2: \"1,2\"",
            ]
        );
        let many = format!("t_s\n{}", "x\n".repeat(50));
        let p = bad(&many);
        assert_eq!(p.len(), MAX_PROBLEMS + 1);
        assert!(p[MAX_PROBLEMS].starts_with("a.csv:12:1: t_s: expected at most 10 problems"));
    }

    #[test]
    fn the_header_must_be_t_s_and_rows_must_follow() {
        assert_eq!(
            bad("time\n1\n"),
            [
                "a.csv:1:1: t_s: expected the header `t_s` (one column: arrival times in seconds), found `time`"
            ]
        );
        assert_eq!(
            bad("t_s,client\n1,2\n"),
            [
                "a.csv:1:1: t_s: expected the header `t_s` (one column: arrival times in seconds), found `t_s,client`"
            ]
        );
        assert_eq!(
            bad(""),
            [
                "a.csv:1:1: t_s: expected the header `t_s` (one column: arrival times in seconds), found an empty first line"
            ]
        );
        assert_eq!(
            bad("t_s\n"),
            [
                "a.csv:1:1: t_s: expected at least one row (one per logical request) after the header, found none"
            ]
        );
    }

    #[test]
    fn a_trace_is_read_once_and_relative_to_its_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.csv"), "t_s\n1\n").expect("write");
        let mut traces = Traces::new(dir.path());
        let first = traces.get("a.csv").expect("read");
        std::fs::remove_file(dir.path().join("a.csv")).expect("remove");
        let again = traces.get("a.csv").expect("cached");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(matches!(
            traces.get("missing.csv"),
            Err(TraceProblem::Unreadable(_))
        ));
        assert_eq!(
            Traces::beside("scenarios/x.toml").path("d/a.csv"),
            Path::new("scenarios/d/a.csv")
        );
        assert_eq!(Traces::beside("x.toml").path("a.csv"), Path::new("a.csv"));
    }

    #[test]
    fn from_copies_reads_the_copies_and_no_other_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let copy = dir.path().join("trace-1.csv");
        std::fs::write(&copy, "t_s\n3\n").expect("write");
        std::fs::write(dir.path().join("b.csv"), "t_s\n1\n").expect("write");
        let mut traces = Traces::from_copies(dir.path(), [("a.csv".to_string(), copy.clone())]);
        assert_eq!(
            traces.get("a.csv").expect("the copy")[0],
            SimTime(3_000_000_000)
        );
        assert_eq!(traces.path("a.csv"), copy);
        // b.csv is there, but the shard stored no copy of it.
        assert!(matches!(
            traces.get("b.csv"),
            Err(TraceProblem::Unreadable(_))
        ));
        let files = traces.into_files();
        assert_eq!(files.len(), 1);
        assert_eq!(
            (files[0].written.as_str(), files[0].sha256.as_str()),
            ("a.csv", crate::scenario::sha256(b"t_s\n3\n").as_str())
        );
    }
}
