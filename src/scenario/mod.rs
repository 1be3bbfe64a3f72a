//! Reading scenario files: TOML text in, [`RawScenario`] out, with positioned errors.
//!
//! This module owns the file format: serde parsing into [`raw`] types with unknown keys
//! refused, turning toml's byte spans into `file:line:col` messages (serde's messages
//! reworded in `toml_errors`), and [`check`], which
//! turns the raw types into the validated [`crate::model::Scenario`]. Nothing else in the
//! crate imports TOML. Sweeps (`[sweep]`) are expanded here too, on the TOML document, so
//! that each sweep point is parsed and validated exactly like a hand-written file.

pub mod check;
mod guess;
pub mod raw;
mod settings;
pub mod sweep;
mod toml_errors;
mod toml_keys;
mod toml_text;
pub mod trace;

pub use raw::RawScenario;

use std::ops::Range;

use crate::error::{Fault, ScenarioError, ScenarioErrors};
use crate::model::Scenario;
pub(crate) use guess::guess_value;
#[cfg(test)]
use toml_errors::table_at;
pub(crate) use toml_errors::toml_error;
use toml_errors::toml_error_in;
use trace::Traces;

/// The scenario that `herdsim run` uses when no file is named; embedded in the binary.
pub const QUICKSTART: &str = include_str!("../../scenarios/quickstart.toml");

/// The display name used for the built-in quickstart in messages.
pub const QUICKSTART_NAME: &str = "scenarios/quickstart.toml";

/// The commented scenario `herdsim init` writes, with `NAME` and `FILE` to fill in.
const STARTER: &str = include_str!("starter.toml");

/// The starter scenario for `file`: its `name` is made from the file's stem (lowercased,
/// leading dots dropped, characters outside `[a-z0-9_-]` replaced by `-`, at most 64), or
/// `scenario`.
pub fn starter(file: &std::path::Path) -> String {
    // The name without its `.toml` and without the dots that hide a file: `.toml` alone
    // is a file with no stem (`file_stem` would give `.toml`, named `-toml`).
    let file_name = file
        .file_name()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let stem = file_name
        .strip_suffix(".toml")
        .or_else(|| {
            file_name
                .rsplit_once('.')
                .map(|(s, _)| s)
                .filter(|s| !s.is_empty())
        })
        .unwrap_or(&file_name)
        .trim_start_matches('.');
    let mut name: String = stem
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '-',
        })
        .take(64)
        .collect();
    if name.trim_matches('-').is_empty() {
        name = "scenario".to_string();
    }
    let shown = file.display().to_string();
    let plain = !shown.is_empty()
        && shown != "-"
        && shown
            .chars()
            .all(|c| !c.is_control() && c != '"' && c != '\\' && c != ' ');
    let text = STARTER.replace("NAME", &name);
    if plain {
        text.replace("FILE", &shown)
    } else {
        text.replace("FILE", "scenario.toml")
    }
}

/// The scenario hash of `summary.json`: the SHA-256 of [`hashed_text`], as 64 lowercase hex
/// digits. For a file without traces run without `--set` it equals `sha256sum FILE`; it does
/// not depend on the machine, the version or the file's name (nor the traces' names).
pub fn scenario_hash<'a>(text: &str, traces: impl IntoIterator<Item = &'a str>) -> String {
    sha256(hashed_text(text, traces).as_bytes())
}

/// What decides a scenario's results besides its seed and replications: the scenario text
/// (after any `--set`), then for each trace file it reads (`traces`: their SHA-256 in hex,
/// in the order first read), a NUL byte and that hash. A trace's contents change the results
/// as much as the text does, and a NUL cannot occur in TOML text, so no text with traces
/// hashes like another text. Without traces it is the text alone, the hash it always was.
pub fn hashed_text<'a>(text: &str, traces: impl IntoIterator<Item = &'a str>) -> String {
    let mut hashed = text.to_string();
    for trace in traces {
        hashed.push('\0');
        hashed.push_str(trace);
    }
    hashed
}

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Converts a byte offset in `src` to a 1-based (line, column), counting columns in chars.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..floor_char_boundary(src, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    // A byte-order mark opening the file is no column an editor shows.
    let col = before[line_start..]
        .trim_start_matches('\u{feff}')
        .chars()
        .count()
        + 1;
    (line, col)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where the top-level `name = ...` value is written in `src`: 1-based (line, column), or
/// `(None, None)` when the text has no such key.
pub fn name_position(src: &str) -> (Option<usize>, Option<usize>) {
    toml_edit::Document::parse(src)
        .ok()
        .and_then(|doc| doc.as_table().get("name").and_then(|n| n.span()))
        .map(|span| {
            let (line, col) = line_col(src, span.start);
            (Some(line), Some(col))
        })
        .unwrap_or((None, None))
}

/// Builds a positioned error from a byte span.
pub fn error_at(
    file: &str,
    src: &str,
    span: Option<std::ops::Range<usize>>,
    key: impl Into<String>,
    msg: impl Into<String>,
) -> ScenarioError {
    let (line, col) = match span {
        Some(span) => {
            let (l, c) = line_col(src, span.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    ScenarioError {
        file: file.to_string(),
        line,
        col,
        key: key.into(),
        msg: msg.into(),
        fault: Fault::Other,
    }
}

/// Parses scenario text. A syntax or type error stops at the first fault, as TOML parsers do
/// (the error holds that one); semantic problems are collected later by [`check::scenario`].
pub fn parse(file: &str, src: &str) -> Result<RawScenario, ScenarioErrors> {
    toml::from_str::<RawScenario>(src).map_err(|e| ScenarioErrors(vec![toml_error(file, src, e)]))
}

/// Parses and validates scenario text, reporting every problem of the file at once, in file
/// order.
///
/// serde stops at the first unknown key or wrongly typed value. To go on, that key-value pair
/// is blanked out (overwritten with spaces, so every position stays the same) and the text
/// parsed again; problems that only follow from a blanked pair (`missing required key` for
/// the key just blanked) are not reported. A TOML syntax error still stops at the first.
pub fn validate(file: &str, src: &str) -> Result<(RawScenario, Scenario), ScenarioErrors> {
    validate_with(file, src, &mut Traces::beside(file))
}

/// The top-level tables written as arrays of tables (`[[server]]` for `[server]`): said as
/// such, at the first header. Read as an array, they failed deeper in, with messages about
/// something else (`server[0]: expected an integer, found a table`; `[[network]]` gave
/// "missing required key `dist`" beside a `dist`).
fn tables_written_as_arrays(file: &str, src: &str) -> Vec<ScenarioError> {
    const TABLES: [&str; 6] = ["server", "network", "retry", "metrics", "fallback", "sweep"];
    let Ok(doc) = toml_edit::Document::parse(src) else {
        return Vec::new();
    };
    TABLES
        .iter()
        .filter_map(|&key| {
            let tables = doc.as_table().get(key)?.as_array_of_tables()?;
            let first = tables.iter().next()?;
            Some(error_at(
                file,
                src,
                first.span(),
                key,
                format!(
                    "expected one table `[{key}]`, found an array of tables `[[{key}]]` ({} of them): write its header `[{key}]`, once",
                    tables.len()
                ),
            ))
        })
        .collect()
}

/// [`validate`], reading trace files through `traces` (relative to its folder, each once).
pub fn validate_with(
    file: &str,
    src: &str,
    traces: &mut Traces,
) -> Result<(RawScenario, Scenario), ScenarioErrors> {
    let doubled = tables_written_as_arrays(file, src);
    if !doubled.is_empty() {
        return Err(ScenarioErrors(doubled));
    }
    let mut text = src.to_string();
    let mut errors: Vec<ScenarioError> = Vec::new();
    let mut blanked: Vec<String> = Vec::new();
    let mut rounds = 0;
    let raw = loop {
        rounds += 1;
        let e = match toml::from_str::<RawScenario>(&text) {
            Ok(raw) => break Some(raw),
            Err(e) => e,
        };
        let error = toml_error_in(file, &text, src, e);
        // Each round blanks one more pair, so this ends; the bound only caps the work (each
        // round parses the whole text again), and says so.
        if !error.key.is_empty() && rounds > MAX_PARSE_ROUNDS {
            errors.push(ScenarioError {
                fault: Fault::NotAllChecked,
                ..error_at(
                    file,
                    src,
                    None,
                    "",
                    format!(
                        "more than {MAX_PARSE_ROUNDS} keys that cannot be read: the first {MAX_PARSE_ROUNDS} found are listed, in line order, but not necessarily the first in the file; fix them, then check again"
                    ),
                )
            });
            break None;
        }
        let follows = follows_from(&error, &blanked);
        if !follows {
            errors.push(error.clone());
        }
        // Give up recovering after a syntax error, or when the pair cannot be found.
        let range = (!error.key.is_empty())
            .then(|| blank_range(&text, &error.key))
            .flatten();
        let Some((path, range)) = range else {
            break None;
        };
        let mut bytes = text.into_bytes();
        for b in &mut bytes[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        text = String::from_utf8(bytes)
            .expect("the range holds whole characters, now all spaces: still UTF-8");
        blanked.push(path);
    };
    let scenario = raw.map(|raw| {
        let result = check::scenario(&raw, file, src, traces);
        (raw, result)
    });
    match scenario {
        Some((raw, Ok(scenario))) if errors.is_empty() => Ok((raw, scenario)),
        Some((_, result)) => {
            if let Err(ScenarioErrors(more)) = result {
                errors.extend(more.into_iter().filter(|e| !follows_from(e, &blanked)));
            }
            Err(ScenarioErrors(without_missing_misspelt(in_file_order(
                file, errors,
            ))))
        }
        None => Err(ScenarioErrors(without_missing_misspelt(in_file_order(
            file, errors,
        )))),
    }
}

/// Keys that cannot be read (unknown, or of the wrong type) that [`validate_with`] reports
/// before it stops: each is found by parsing the whole text again.
const MAX_PARSE_ROUNDS: usize = 200;

/// File order: file-level problems (no position) first; then those of the trace files it
/// names, each in its own order. (The parser finds unknown keys table by table, in key
/// order, not in line order.) The sort is stable.
pub(crate) fn in_file_order(file: &str, mut errors: Vec<ScenarioError>) -> Vec<ScenarioError> {
    errors.sort_by_key(|e| (e.file != file, e.line.unwrap_or(0), e.col.unwrap_or(0)));
    errors
}

/// Drops a required key's "missing required key" when the same table has an unknown key
/// that is likely that key misspelt (guessed to be it: see [`Fault`]): `concurrancy =
/// 20` is one mistake, reported once, where the user wrote it. A misspelling whose guesses
/// name several missing keys (`mix` for `min` and `max`) explains none of them: only one
/// can be what was meant, and the other would go unreported until it is fixed.
fn without_missing_misspelt(mut errors: Vec<ScenarioError>) -> Vec<ScenarioError> {
    let table = |e: &ScenarioError| {
        let key = e.key.rsplit_once('.').map_or("", |(table, _)| table);
        (e.file.clone(), key.to_string())
    };
    fn missing_key(e: &ScenarioError) -> Option<&str> {
        match &e.fault {
            Fault::MissingKey { key, .. } => Some(key),
            _ => None,
        }
    }
    // A strategy's key may be set in `[retry]` instead: a misspelling in `[retry]` is why
    // the strategy lacks it. (Not the other way round: `[retry]` lacks a key when some
    // strategy does, and a misspelling in one strategy says nothing of the others.)
    let explains = |e: &ScenarioError, t: &(String, String)| {
        let here = table(e);
        *t == here
            || (t.0 == here.0
                && t.1 == "retry"
                && here.1.starts_with("strategy[")
                && matches!(
                    e.fault,
                    Fault::MissingKey {
                        or_in_retry: true,
                        ..
                    }
                ))
    };
    // Each misspelling's table and the names it is guessed to be (`a`, `b` or `c`).
    let misspelt: Vec<((String, String), &[String])> = errors
        .iter()
        .filter_map(|e| match &e.fault {
            Fault::UnknownKey { guesses } if !guesses.is_empty() => Some((table(e), &**guesses)),
            _ => None,
        })
        .collect();
    let dropped: Vec<bool> = errors
        .iter()
        .map(|e| {
            let Some(missing) = missing_key(e) else {
                return false;
            };
            misspelt.iter().any(|(t, names)| {
                explains(e, t)
                    && names.iter().any(|name| name == missing)
                    && names
                        .iter()
                        .filter(|name| {
                            errors.iter().any(|other| {
                                explains(other, t) && missing_key(other) == Some(name.as_str())
                            })
                        })
                        .count()
                        == 1
            })
        })
        .collect();
    let mut dropped = dropped.into_iter();
    errors.retain(|_| !dropped.next().unwrap_or(false));
    errors
}

/// Whether `e` is only a consequence of blanking the pairs at `blanked` (dotted key paths).
fn follows_from(e: &ScenarioError, blanked: &[String]) -> bool {
    blanked.iter().any(|b| {
        e.key == *b
            || e.key.starts_with(&format!("{b}."))
            || (matches!(e.fault, Fault::MissingKey { .. })
                && e.key.rsplit('.').next() == b.rsplit('.').next())
            // "expected one of `count`, ..., found none of them" for a table with a blanked
            // pair: the blanked key may have been the one.
            // So is "found an empty table" for a jitter table whose one pair was blanked.
            || ((e.msg.ends_with("found none of them") || e.msg.ends_with("found an empty table"))
                && b.starts_with(&format!("{}.", e.key)))
            // A blanked `service = ...` may have been the graph that replaces [server].
            || (e.key == "server" && e.msg.starts_with("missing required table") && b == "service")
    })
}

/// The byte range of the `key = value` pair at `path` (`strategy[1].budget.ratio`), with a
/// comma that follows it inside an inline table; else the pair of the nearest enclosing key.
/// Returns the path actually found. `None` for keys of `[table]` headers.
fn blank_range(text: &str, path: &str) -> Option<(String, Range<usize>)> {
    use toml_edit::{Item, TableLike, Value};
    let doc = toml_edit::Document::parse(text).ok()?;
    let segments: Vec<&str> = path.split('.').collect();
    for len in (1..=segments.len()).rev() {
        let mut table: &dyn TableLike = doc.as_table();
        let (leaf, parents) = segments[..len].split_last()?;
        let mut found = true;
        for segment in parents {
            let (name, index) = match segment.split_once('[') {
                Some((name, i)) => (name, i.trim_end_matches(']').parse::<usize>().ok()),
                None => (*segment, None),
            };
            let next: Option<&dyn TableLike> = match (table.get(name), index) {
                (Some(Item::Table(t)), None) => Some(t),
                (Some(Item::Value(Value::InlineTable(t))), None) => Some(t),
                (Some(Item::ArrayOfTables(a)), Some(i)) => a.get(i).map(|t| t as &dyn TableLike),
                (Some(Item::Value(Value::Array(a))), Some(i)) => match a.get(i) {
                    Some(Value::InlineTable(t)) => Some(t),
                    _ => None,
                },
                _ => None,
            };
            match next {
                Some(t) => table = t,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found || leaf.contains('[') {
            continue;
        }
        let Some((key, Item::Value(value))) = table.get_key_value(leaf) else {
            continue;
        };
        let (Some(k), Some(v)) = (key.span(), value.span()) else {
            return None;
        };
        // A dotted key (`value.x = 1`): its span is its first part only, and the pair runs
        // on to the next comma, brace or line end (blanking `value` alone left `.x = 1`).
        let v_end = if text[k.end..].trim_start().starts_with('.') {
            toml_text::pair_end(text, k.end).max(v.end)
        } else {
            v.end
        };
        let rest = &text[v_end..];
        let comma = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let end = if rest[comma..].starts_with(',') {
            v_end + comma + 1
        } else {
            v_end
        };
        return Some((segments[..len].join("."), k.start..end));
    }
    None
}

#[cfg(test)]
mod tests;
