//! Reading a summary back for `compare`: `summary.json`, else `summary.csv`, into rows of
//! numbers by sweep point and strategy; anything herdsim would not have written there (no
//! `strategy` column, a cell that is no number, a strategy listed twice) is refused with its
//! file and row (exit 2).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Point, Row, Summary};
use crate::error::{Error, Result};

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Usage(format!("compare: {}: {what}", path.display()))
}

/// Reads the summary of output folder `dir` (or the `summary.json` / `summary.csv` file
/// itself). Exit status 2 for a folder that is not an output folder or a file that is not a
/// summary; 1 when a file exists but cannot be read.
pub fn read_summary(dir: &Path) -> Result<Summary> {
    let meta = std::fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad(dir, "no such folder"),
        _ => Error::io("cannot read", dir, e),
    })?;
    let (json, csv) = if meta.is_dir() {
        (dir.join("summary.json"), dir.join("summary.csv"))
    } else {
        match dir.extension().and_then(|e| e.to_str()) {
            Some("json") => (dir.to_path_buf(), PathBuf::new()),
            Some("csv") => (PathBuf::new(), dir.to_path_buf()),
            _ => {
                return Err(bad(
                    dir,
                    "expected an output folder such as output/quickstart, found a file",
                ));
            }
        }
    };
    let read = |path: &Path| -> Result<Option<Vec<u8>>> {
        if path.as_os_str().is_empty() {
            return Ok(None);
        }
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("cannot read", path, e)),
        }
    };
    if let Some(bytes) = read(&json)? {
        return parse_json(&json, &bytes);
    }
    if let Some(bytes) = read(&csv)? {
        return parse_csv(&csv, &bytes);
    }
    Err(bad(
        dir,
        "no summary.json or summary.csv in this folder: expected a folder herdsim run wrote, such as output/quickstart",
    ))
}

/// The part of a header before `strategy`: the swept keys.
fn split_columns(path: &Path, columns: &[String]) -> Result<usize> {
    columns
        .iter()
        .position(|c| c == "strategy")
        .ok_or_else(|| bad(path, "not a herdsim summary: no `strategy` column"))
}

fn parse_csv(path: &Path, bytes: &[u8]) -> Result<Summary> {
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| bad(path, format!("not a CSV file: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    let strategy = split_columns(path, &columns)?;
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(path, format!("row {}: {e}", i + 2)))?;
        let mut row = Row {
            point: Vec::new(),
            strategy: String::new(),
            values: BTreeMap::new(),
        };
        for (c, (column, cell)) in columns.iter().zip(record.iter()).enumerate() {
            if c < strategy {
                row.point.push((column.clone(), cell.to_string()));
            } else if c == strategy {
                row.strategy = cell.to_string();
            } else if cell.is_empty() {
                row.values.insert(column.clone(), None);
            } else {
                // herdsim writes finite numbers or nothing: anything else was altered.
                let v = cell.parse::<f64>().ok().filter(|v| v.is_finite());
                let v = v.ok_or_else(|| {
                    bad(
                        path,
                        format!(
                            "row {}: {column}: expected a number, found \"{}\"",
                            i + 2,
                            crate::text::escape(cell)
                        ),
                    )
                })?;
                row.values.insert(column.clone(), Some(v));
            }
        }
        rows.push(row);
    }
    no_repeated_rows(path, &rows, |i| format!("row {}", i + 2))?;
    Ok(Summary {
        path: path.to_path_buf(),
        scenario: None,
        seed: None,
        hash: None,
        columns,
        rows,
    })
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<Summary> {
    use serde_json::Value;
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| bad(path, format!("not a JSON file: {e}")))?;
    let not_summary = |what: &str| bad(path, format!("not a herdsim summary.json: {what}"));
    let columns: Vec<String> = doc
        .get("columns")
        .and_then(Value::as_array)
        .ok_or_else(|| not_summary("no `columns` list"))?
        .iter()
        .map(|c| c.as_str().map(String::from))
        .collect::<Option<_>>()
        .ok_or_else(|| not_summary("`columns` holds a non-string"))?;
    let strategy = split_columns(path, &columns)?;
    let mut rows = Vec::new();
    for (i, r) in doc
        .get("rows")
        .and_then(Value::as_array)
        .ok_or_else(|| not_summary("no `rows` list"))?
        .iter()
        .enumerate()
    {
        let object = r
            .as_object()
            .ok_or_else(|| not_summary(&format!("row {i} is not an object")))?;
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        let mut row = Row {
            point: columns[..strategy]
                .iter()
                .map(|c| (c.clone(), text(object.get(c))))
                .collect(),
            strategy: text(object.get("strategy")),
            values: BTreeMap::new(),
        };
        for c in &columns[strategy + 1..] {
            match object.get(c) {
                Some(Value::Number(n)) => {
                    row.values.insert(c.clone(), n.as_f64());
                }
                Some(Value::Null) => {
                    row.values.insert(c.clone(), None);
                }
                None => {}
                Some(other) => {
                    return Err(not_summary(&format!(
                        "row {i}: {c}: expected a number or null, found {}",
                        crate::text::escape(&other.to_string())
                    )));
                }
            }
        }
        rows.push(row);
    }
    no_repeated_rows(path, &rows, |i| format!("row {i}"))?;
    Ok(Summary {
        path: path.to_path_buf(),
        scenario: doc
            .get("scenario")
            .and_then(Value::as_str)
            .map(String::from),
        // A sweep over `seed` has no one seed: the top-level value is the first point's.
        seed: doc
            .get("seed")
            .and_then(Value::as_u64)
            .filter(|_| !columns[..strategy].iter().any(|c| c == "seed")),
        hash: doc
            .get("scenario_hash")
            .and_then(Value::as_str)
            .map(String::from),
        columns,
        rows,
    })
}

/// Refuses a strategy listed twice at one sweep point: which of the two rows to compare
/// would be a guess. `row(i)` names the `i`-th row as its file counts them.
fn no_repeated_rows(path: &Path, rows: &[Row], row: impl Fn(usize) -> String) -> Result<()> {
    // A row's sweep point and strategy, and where it was first seen.
    let mut seen: BTreeMap<(&[Point], &str), usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if let Some(&j) = seen.get(&(r.point.as_slice(), r.strategy.as_str())) {
            return Err(bad(
                path,
                format!(
                    "{}: strategy `{}`{} appears twice (also in {}): expected one row per strategy and sweep point",
                    row(i),
                    crate::text::escape(&r.strategy),
                    if r.point.is_empty() {
                        ""
                    } else {
                        " at this sweep point"
                    },
                    row(j)
                ),
            ));
        }
        seen.insert((&r.point, &r.strategy), i);
    }
    Ok(())
}
