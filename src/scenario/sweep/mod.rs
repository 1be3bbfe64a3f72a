//! `[sweep]`: one scenario file, many points.
//!
//! Keys of `[sweep]` are dotted paths into the file (`"clients.count"`,
//! `"server.outages.0.end"`), values are lists. The points are the Cartesian product of the
//! lists, first key outermost. Each point is made by writing its values into a copy of the
//! TOML document (`toml_edit`, so nothing else in the file changes), then parsing and
//! validating that text exactly like a hand-written file. A point that fails names the path
//! and value that produced it.
//!
//! The copy leaves out the `[sweep]` table itself (its text is replaced by its line breaks,
//! so every other key keeps its line and column): a point's text is the size of the file
//! without its lists, so expanding n values costs O(n), not O(n²) as when every point
//! carried every list. The number of points and runs is computed from the list lengths and
//! checked against [`limits::MAX_SWEEP_POINTS`] and [`limits::MAX_RUNS`] before any point
//! is built. Reading the `[sweep]` table and those counts are in `table`.

use std::ops::Range;
use std::path::Path;

use toml_edit::{Document, Item, TableLike, Value};

use crate::error::{ScenarioError, ScenarioErrors};
use crate::limits;
use crate::model::Scenario;
use crate::scenario::guess::guess_name;
use crate::scenario::trace::{TraceFile, Traces};
use crate::scenario::{error_at, validate_with};

pub use super::settings::{Setting, check_repeats, load_with_settings};

mod table;

use table::{check_size, parsed_sweep_span, read_axes, too_many_runs, without_sweep};

/// One swept key and the values it takes, as written.
#[derive(Debug, Clone)]
pub struct SweepAxis {
    /// The dotted path, e.g. `clients.count`; names the output column.
    pub path: String,
    /// The values as they appear in output columns (`10`, `5s`).
    pub labels: Vec<String>,
    values: Vec<Value>,
    /// Where each value is written in the file, for messages about the point it yields.
    spans: Vec<Option<Range<usize>>>,
    /// Where the list is written.
    span: Option<Range<usize>>,
}

impl SweepAxis {
    /// The path as validation names keys: `server.outages.0.end` -> `server.outages[0].end`.
    fn key(&self) -> String {
        indexed_key(&self.path)
    }
}

/// A dotted path as validation names keys: `server.outages.0.end` -> `server.outages[0].end`.
pub(super) fn indexed_key(path: &str) -> String {
    let mut key = String::new();
    for segment in path.split('.') {
        if !key.is_empty() && !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            key.push_str(&format!("[{segment}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(segment);
        }
    }
    key
}

impl PartialEq for SweepAxis {
    /// Values are compared by their labels (`toml_edit` values carry formatting, not equality).
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.labels == other.labels
    }
}

/// One point of a sweep: the value label of each axis, and the scenario it yields.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// One label per axis, in axis order (empty without a sweep).
    pub labels: Vec<String>,
    /// The validated scenario at this point.
    pub scenario: Scenario,
}

/// A scenario file after parsing, validation and sweep expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFile {
    /// The file as named by the user.
    pub file: String,
    /// Its text (reproduced in the HTML report).
    pub source: String,
    /// The swept keys, in file order (empty without a sweep).
    pub axes: Vec<SweepAxis>,
    /// At least one point; exactly one without a sweep.
    pub points: Vec<SweepPoint>,
    /// The trace files its points read, in the order first read (by the text as written,
    /// then point by point, populations in file order).
    pub traces: Vec<TraceFile>,
}

impl ScenarioFile {
    /// The files a run of it reads: the scenario file and its traces.
    pub fn inputs(&self) -> Vec<&std::path::Path> {
        std::iter::once(std::path::Path::new(&self.file))
            .chain(self.traces.iter().map(|t| t.path.as_path()))
            .collect()
    }

    /// Applies `--seed` and `--replications` (`None`: not given) to every point. A flag over
    /// a key the file sweeps is refused (the error names the flag, the file and the swept
    /// values): every point would run with one value under one label, rows that cannot be
    /// told apart though their numbers differ (the point still enters the run's seed).
    pub fn apply_flags(
        &mut self,
        seed: Option<u64>,
        replications: Option<u32>,
    ) -> Result<(), String> {
        for (key, value) in [
            ("seed", seed.map(|s| s.to_string())),
            ("replications", replications.map(|r| r.to_string())),
        ] {
            let Some(value) = value else { continue };
            if let Some(axis) = self.axes.iter().find(|a| a.path == key) {
                return Err(format!(
                    "--{key} {value}: {} sweeps `{key}` ([sweep] \"{key}\" = [{}]): every point would run with {key} {value} under the same label; drop --{key}, or the key from [sweep]",
                    crate::text::escape(&self.file),
                    axis.labels.join(", "),
                ));
            }
        }
        for p in &mut self.points {
            if let Some(seed) = seed {
                p.scenario.seed = seed;
            }
            if let Some(r) = replications {
                p.scenario.replications = r;
            }
        }
        Ok(())
    }

    /// The scenario as written (the first point, for its name and shared settings).
    pub fn first(&self) -> &Scenario {
        &self.points[0].scenario
    }

    /// The scenario of the last sweep point (the only one without a sweep): the point the
    /// verdict and the per-point charts show.
    pub fn last(&self) -> &Scenario {
        &self.points[self.points.len() - 1].scenario
    }

    /// The SHA-256 of each trace file it reads, in the order first read.
    pub fn trace_hashes(&self) -> impl Iterator<Item = &str> {
        self.traces.iter().map(|t| t.sha256.as_str())
    }

    /// Its [`crate::scenario::scenario_hash`]: the text and every trace's contents.
    pub fn hash(&self) -> String {
        crate::scenario::scenario_hash(&self.source, self.trace_hashes())
    }
}

/// Parses, validates and expands one scenario file. `file` names it in messages, and trace
/// files are read relative to its folder.
pub fn load_str(file: &str, src: &str) -> Result<ScenarioFile, ScenarioErrors> {
    load_in(file, src, Path::new(file).parent().unwrap_or(Path::new("")))
}

/// [`load_str`] for text whose trace paths are relative to `folder` (`""`: the current
/// directory), e.g. the built-in quickstart, which has no folder of its own.
pub fn load_in(file: &str, src: &str, folder: &Path) -> Result<ScenarioFile, ScenarioErrors> {
    load_with(file, src, Traces::new(folder))
}

/// The problems of the rest of the file, and those of its `[sweep]` table's own values
/// (lists, their types, the same key twice), which do not depend on the rest: one `check`
/// lists both, in line order. (Whether each swept path names a key is known only once the
/// rest reads: those come with the next check.) Left as they are when the file is no TOML,
/// has no `[sweep]`, or past the unreadable-key limit.
fn with_sweep_table_problems(file: &str, src: &str, mut errors: ScenarioErrors) -> ScenarioErrors {
    let not_all_checked = errors
        .0
        .iter()
        .any(|e| e.fault == crate::error::Fault::NotAllChecked);
    let Ok(parsed) = Document::parse(src) else {
        return errors;
    };
    // `[[sweep]]` is said as such by the check of the tables written as arrays.
    if not_all_checked
        || parsed
            .as_table()
            .get("sweep")
            .is_none_or(|s| s.is_array_of_tables())
    {
        return errors;
    }
    if let Err(sweep) = read_axes(file, src, &parsed) {
        for e in sweep.0 {
            if !errors.0.contains(&e) {
                errors.0.push(e);
            }
        }
        errors.0 = crate::scenario::in_file_order(file, errors.0);
    }
    errors
}

/// [`load_str`] reading trace files through `traces` (e.g. a shard's copies, for `merge`).
pub fn load_with(
    file: &str,
    src: &str,
    mut traces: Traces,
) -> Result<ScenarioFile, ScenarioErrors> {
    let (raw, base) = validate_with(file, src, &mut traces)
        .map_err(|errors| with_sweep_table_problems(file, src, errors))?;
    let Some(_) = raw.sweep else {
        let runs = base.strategies.len() as u64 * base.replications as u64;
        if runs > limits::MAX_RUNS {
            let span = raw.replications.as_ref().map(|r| r.span());
            return Err(ScenarioErrors(vec![error_at(
                file,
                src,
                span,
                "replications",
                format!(
                    "expected at most {} runs ({} strategies x replications), found {runs} ({} x {})",
                    limits::MAX_RUNS,
                    base.strategies.len(),
                    base.strategies.len(),
                    base.replications
                ),
            )]));
        }
        return Ok(ScenarioFile {
            file: file.to_string(),
            source: src.to_string(),
            axes: Vec::new(),
            points: vec![SweepPoint {
                labels: Vec::new(),
                scenario: base,
            }],
            traces: traces.into_files(),
        });
    };

    // Parsed with spans to point at the swept values; `[sweep]` stays in each point's text
    // (the file format allows it), so lines there are the file's lines.
    let parsed = Document::parse(src)
        .map_err(|e| ScenarioErrors(vec![error_at(file, src, None, "sweep", format!("{e}"))]))?;
    let axes = read_axes(file, src, &parsed)?;
    check_size(file, src, &parsed, &axes, &base)?;
    let template = without_sweep(src, &parsed);
    let doc = Document::parse(template)
        .map_err(|e| ScenarioErrors(vec![error_at(file, src, None, "sweep", format!("{e}"))]))?
        .into_mut();
    drop(parsed);

    let mut points = Vec::new();
    let mut errors = Vec::new();
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    for index in 0..total {
        // Mixed-radix digits of `index`, last axis fastest: the first key is outermost.
        let mut rest = index;
        let mut picks = vec![0; axes.len()];
        for (a, axis) in axes.iter().enumerate().rev() {
            picks[a] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        let mut point_doc = doc.clone();
        let mut failed = false;
        // Whether every swept key replaced one written in the file (so no line moved).
        let mut same_lines = true;
        for (axis, &pick) in axes.iter().zip(&picks) {
            // `strategy[1].jitter`, as `--set` takes it, is `strategy.1.jitter`.
            let dotted = super::settings::dotted(&axis.path);
            let segments: Vec<&str> = dotted.split('.').collect();
            let written = if segments.first() == Some(&"sweep") {
                // [sweep] is gone from the points; saying "no table `sweep`" would puzzle.
                Err("expected a key of the scenario, found one of [sweep] itself".to_string())
            } else {
                Ok(())
            };
            match written.and_then(|()| {
                set_path(
                    point_doc.as_table_mut(),
                    &segments,
                    axis.values[pick].clone(),
                    "to sweep into",
                )
            }) {
                Ok(replaced) => same_lines &= replaced,
                Err(msg) => {
                    errors.push(error_at(
                        file,
                        src,
                        axis.span.clone(),
                        format!("sweep.\"{}\"", axis.path),
                        msg,
                    ));
                    failed = true;
                }
            }
        }
        if failed {
            break; // a bad path fails the same way at every point
        }
        let text = point_doc.to_string();
        let context: Vec<String> = axes
            .iter()
            .zip(&picks)
            .map(|(a, &p)| format!("{} = {}", a.path, a.labels[p]))
            .collect();
        let context = format!("(at sweep point {})", context.join(", "));
        let result = validate_with(file, &text, &mut traces).map(|(_, scenario)| scenario);
        match result {
            Ok(scenario) => points.push(SweepPoint {
                labels: axes
                    .iter()
                    .zip(&picks)
                    .map(|(a, &p)| a.labels[p].clone())
                    .collect(),
                scenario,
            }),
            Err(ScenarioErrors(errs)) => {
                for e in errs {
                    // A fault in a swept key points at the swept value that caused it; others
                    // keep their position when the rewritten text has the file's lines.
                    let swept = axes.iter().zip(&picks).find(|(a, _)| {
                        let k = a.key();
                        e.key == k || e.key.starts_with(&format!("{k}."))
                    });
                    let (line, col) = match swept {
                        // A problem in a trace file keeps its place there.
                        _ if e.file != file => (e.line, e.col),
                        Some((axis, &pick)) => {
                            let at = error_at(file, src, axis.spans[pick].clone(), "", "");
                            (at.line, at.col)
                        }
                        None if same_lines => (e.line, e.col),
                        None => (None, None),
                    };
                    let e = ScenarioError {
                        line,
                        col,
                        msg: format!("{} {context}", e.msg),
                        ..e
                    };
                    // The same fault at several points (e.g. a misspelt swept key) shows once.
                    let seen = errors.iter().any(|f: &ScenarioError| {
                        f.key == e.key
                            && f.line == e.line
                            && f.msg.split(" (at sweep point").next()
                                == e.msg.split(" (at sweep point").next()
                    });
                    if !seen {
                        errors.push(e);
                    }
                }
            }
        }
    }
    // A swept `replications` makes the exact count known only now.
    let runs: u64 = points
        .iter()
        .map(|p| p.scenario.strategies.len() as u64 * p.scenario.replications as u64)
        .sum();
    if errors.is_empty() && runs > limits::MAX_RUNS {
        errors.push(too_many_runs(file, src, &parsed_sweep_span(src), runs));
    }
    if errors.is_empty() {
        Ok(ScenarioFile {
            file: file.to_string(),
            source: src.to_string(),
            axes,
            points,
            traces: traces.into_files(),
        })
    } else {
        Err(ScenarioErrors(errors))
    }
}

/// Writes `value` at the dotted path below `table`; numeric segments index arrays of tables.
/// Returns whether it replaced a key written in the file (rather than adding one). `into`
/// ends the message for a missing table (`"to sweep into"`).
pub(super) fn set_path(
    table: &mut dyn TableLike,
    segments: &[&str],
    value: Value,
    into: &str,
) -> Result<bool, String> {
    set_path_from(table, segments, 0, value, into)
}

/// [`set_path`] of `segments[at..]` below `table`, the table `segments[..at]` names (for
/// hints that spell out the whole path).
fn set_path_from(
    table: &mut dyn TableLike,
    segments: &[&str],
    at: usize,
    value: Value,
    into: &str,
) -> Result<bool, String> {
    let here = segments[..=at.min(segments.len().saturating_sub(1))].join(".");
    let (first, rest) = segments[at..]
        .split_first()
        .ok_or_else(|| "expected a dotted key path, found an empty one".to_string())?;
    if first.is_empty() {
        return Err(
            "expected a dotted key path such as `clients.count`, found an empty key".into(),
        );
    }
    if rest.is_empty() {
        match table.get(first) {
            Some(Item::ArrayOfTables(_)) => {
                return Err(format!(
                    "`{first}` is a list of tables, not a single value: name an entry and one of its keys after it (`{here}.0.KEY`)"
                ));
            }
            Some(i) if !i.is_value() => {
                return Err(format!(
                    "`{first}` is a table, not a single value: name one of its keys after it (`{here}.KEY`)"
                ));
            }
            _ => {}
        }
        let replaced = table.get(first).is_some();
        table.insert(first, Item::Value(value));
        return Ok(replaced);
    }
    if !table.contains_key(first) {
        // `servr.concurrency`: a table's name misspelt is the likely slip in a long path
        // (guessed among the keys holding tables or lists, where a path can go on).
        let written: Vec<String> = table
            .iter()
            .filter(|(_, item)| !item.is_value() || item.is_inline_table() || item.is_array())
            .map(|(k, _)| k.to_string())
            .collect();
        let guess = guess_name(first, written.iter().map(String::as_str));
        return Err(format!("no table `{first}` in the scenario {into}{guess}"));
    }
    let child = table.get_mut(first).expect("the key is written");
    // `clients.0.count` when `clients` is one table, not a list of them.
    let index_into_table = |t: &dyn toml_edit::TableLike| {
        let next = rest[0];
        (next.parse::<usize>().is_ok() && !t.contains_key(next)).then(|| {
            format!(
                "`{first}` is one table, not a list: expected a key of it, found the index {next}"
            )
        })
    };
    if let Some(t) = child.as_table_like_mut() {
        // `[table]` or an inline `{ ... }`.
        return match index_into_table(&*t) {
            Some(problem) => Err(problem),
            None => set_path_from(t, segments, at + 1, value, into),
        };
    }
    match child {
        Item::ArrayOfTables(array) => {
            let (index, rest) = rest.split_first().expect("rest is not empty");
            let i: usize = index
                .parse()
                .map_err(|_| format!("`{first}` is a list: expected an index, found `{index}`"))?;
            let len = array.len();
            let t = array.get_mut(i).ok_or_else(|| {
                format!(
                    "`{first}` has {}, found index {i}",
                    crate::text::counted(len, "entry", "entries")
                )
            })?;
            if rest.is_empty() {
                return Err(format!(
                    "`{first}.{i}` is a table, not a single value: name one of its keys after it"
                ));
            }
            set_path_from(t, segments, at + 2, value, into)
        }
        Item::Value(Value::Array(array)) => {
            let (index, rest) = rest.split_first().expect("rest is not empty");
            let i: usize = index
                .parse()
                .map_err(|_| format!("`{first}` is a list: expected an index, found `{index}`"))?;
            let len = array.len();
            match array.get_mut(i) {
                Some(Value::InlineTable(_)) if rest.is_empty() => Err(format!(
                    "`{first}.{i}` is a table, not a single value: name one of its keys after it"
                )),
                Some(Value::InlineTable(t)) => set_path_from(t, segments, at + 2, value, into),
                // [sweep] takes single values only, so only `--set` can give a list.
                Some(_) if into == "to set" => Err(format!(
                    "`{first}` is a list of values, not of tables: set the whole list (--set '{here}=[...]')"
                )),
                Some(_) => Err(format!(
                    "`{first}` is a list of values, not of tables: [sweep] varies single values, not the entries of a list"
                )),
                None => Err(format!(
                    "`{first}` has {}, found index {i}",
                    crate::text::counted(len, "entry", "entries")
                )),
            }
        }
        _ => Err(format!("`{first}` is a single value, not a table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
name = "s"
[clients]
count = 10
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 2
service = { dist = "constant", value = "10ms" }
[[server.outages]]
start = "0s"
end = "1s"
[retry]
max_attempts = 3
[[strategy]]
name = "a"
base = "10ms"
cap = "1s"
"#;

    #[test]
    fn points_are_the_cartesian_product_first_key_outermost() {
        let src = format!(
            "{BASE}\n[sweep]\n\"clients.count\" = [10, 20]\n\"server.outages.0.end\" = [\"1s\", \"5s\", \"9s\"]\n"
        );
        let f = load_str("s.toml", &src).unwrap();
        assert_eq!(f.axes.len(), 2);
        let labels: Vec<String> = f.points.iter().map(|p| p.labels.join("/")).collect();
        assert_eq!(
            labels,
            ["10/1s", "10/5s", "10/9s", "20/1s", "20/5s", "20/9s"]
        );
        assert_eq!(f.points[4].scenario.closed_clients(), 20);
        assert_eq!(
            f.points[4].scenario.entry().server.outages[0]
                .end
                .as_secs_f64(),
            5.0
        );
    }

    /// Numbers keep the text they were written with, so 1.0 and 1e0 stay two points.
    #[test]
    fn swept_numbers_are_labelled_as_written() {
        let src = format!(
            "{BASE}\n[sweep]\n\"strategy.0.multiplier\" = [1.0, 2.50, 1e0]\n\"clients.count\" = [0x2, 1_0]\n"
        );
        let f = load_str("s.toml", &src).unwrap();
        let labels: Vec<String> = f.points.iter().map(|p| p.labels.join("/")).collect();
        assert_eq!(
            labels,
            [
                "1.0/0x2", "1.0/1_0", "2.50/0x2", "2.50/1_0", "1e0/0x2", "1e0/1_0"
            ]
        );
        assert_eq!(f.points[3].scenario.closed_clients(), 10);
        assert_eq!(f.points[3].scenario.strategies[0].backoff.multiplier, 2.5);
    }

    #[test]
    fn a_bad_path_is_refused_naming_the_path() {
        let src = format!("{BASE}\n[sweep]\n\"clients.cuont\" = [1, 2]\n");
        let err = load_str("s.toml", &src).unwrap_err().to_string();
        assert!(err.contains("clients.cuont"), "{err}");
        let src = format!("{BASE}\n[sweep]\n\"nosuch.count\" = [1, 2]\n");
        let err = load_str("s.toml", &src).unwrap_err().to_string();
        assert!(err.contains("no table `nosuch`"), "{err}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_naming_the_point() {
        let src = format!("{BASE}\n[sweep]\n\"server.concurrency\" = [2, \"many\"]\n");
        let err = load_str("s.toml", &src).unwrap_err().to_string();
        assert!(err.contains("server.concurrency = many"), "{err}");
    }
}
