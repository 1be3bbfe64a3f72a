//! `summary.json`: the rows of `summary.csv` with what produced them (scenario name, file,
//! seed, herdsim version, scenario hash, `--set` values), for scripts and for
//! `herdsim compare`.
//!
//! Each row is an object whose keys are the `summary.csv` columns in the same order (sweep
//! columns first); numbers are JSON numbers, empty cells `null`, `strategy` and the swept
//! values strings (as written in `[sweep]`).

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::error::{Error, Result};
use crate::report::csv::{SUMMARY_COLUMNS, summary_column_indices, summary_values};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::{ScenarioFile, Setting};

/// The format of `summary.json`; raised when a key changes meaning or goes away (keys may
/// be added without raising it).
pub const FORMAT: u32 = 1;

/// One row: the columns in order.
struct Row(Vec<(String, serde_json::Value)>);

impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Summary<'a> {
    format: u32,
    herdsim_version: &'a str,
    scenario: &'a str,
    file: &'a str,
    scenario_hash: String,
    seed: u64,
    replications: u32,
    set: Vec<String>,
    sweep: Vec<&'a str>,
    columns: Vec<&'a str>,
    rows: Vec<Row>,
}

/// A `summary.csv` cell as a JSON value: text columns as strings, numbers as numbers (whole
/// numbers as integers), an empty cell (no value) as `null`.
fn cell(text: String, is_text: bool) -> serde_json::Value {
    use serde_json::Value;
    if is_text {
        return Value::String(text);
    }
    if text.is_empty() {
        return Value::Null;
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    // A seed above i64::MAX (a library caller may pass any u64; `--seed` and the file stop
    // at i64::MAX) stays exact.
    if let Ok(u) = text.parse::<u64>() {
        return Value::from(u);
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Value::from(f),
        Ok(_) => Value::Null,
        Err(_) => Value::String(text),
    }
}

/// `summary.json` for `file`'s results, run with `seed` and `settings` (`--set`).
pub fn summary_json(
    file: &ScenarioFile,
    result: &ScenarioResult,
    seed: u64,
    settings: &[Setting],
) -> Result<Vec<u8>> {
    let first = file.first();
    let name = std::path::Path::new(&file.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.file.clone());
    let keep = summary_column_indices(&file.axes);
    let mut columns: Vec<&str> = file.axes.iter().map(|a| a.path.as_str()).collect();
    columns.extend(keep.iter().map(|&i| SUMMARY_COLUMNS[i]));
    let mut rows = Vec::new();
    for point in &result.points {
        for s in &point.strategies {
            let mut summary = summary_values(&s.summary, seed);
            let values = point.labels.iter().map(|l| (l.clone(), true)).chain(
                keep.iter()
                    .map(|&i| (std::mem::take(&mut summary[i]), i == 0)),
            );
            rows.push(Row(columns
                .iter()
                .zip(values)
                .map(|(c, (v, text))| (c.to_string(), cell(v, text)))
                .collect()));
        }
    }
    let summary = Summary {
        format: FORMAT,
        herdsim_version: env!("CARGO_PKG_VERSION"),
        scenario: &first.name,
        file: &name,
        scenario_hash: file.hash(),
        seed,
        replications: first.replications,
        set: settings
            .iter()
            .map(|s| format!("{}={}", s.path, s.text))
            .collect(),
        sweep: file.axes.iter().map(|a| a.path.as_str()).collect(),
        columns,
        rows,
    };
    let mut bytes = serde_json::to_vec_pretty(&summary).map_err(|e| {
        Error::io(
            "cannot format",
            "<json buffer>",
            std::io::Error::other(e.to_string()),
        )
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_their_type() {
        assert_eq!(
            cell("no-jitter".into(), true),
            serde_json::json!("no-jitter")
        );
        assert_eq!(cell("10".into(), true), serde_json::json!("10"));
        assert_eq!(cell("94197".into(), false), serde_json::json!(94197));
        assert_eq!(cell("33.082".into(), false), serde_json::json!(33.082));
        assert_eq!(cell(String::new(), false), serde_json::Value::Null);
        // Seeds are u64: above i64::MAX they stay exact integers, not floats.
        assert_eq!(
            cell("18446744073709551615".into(), false),
            serde_json::json!(u64::MAX)
        );
        assert_eq!(cell("inf".into(), false), serde_json::Value::Null);
    }
}
