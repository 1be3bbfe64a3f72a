//! Reading scenario files: TOML text in, [`RawScenario`] out, with positioned errors.
//!
//! This module owns the file format: serde parsing into [`raw`] types with unknown keys
//! refused, turning toml's byte spans into `file:line:col` messages, and [`check`], which
//! turns the raw types into the validated [`crate::model::Scenario`]. Nothing else in the
//! crate imports TOML. Sweeps (`[sweep]`) are expanded here too, on the TOML document, so
//! that each sweep point is parsed and validated exactly like a hand-written file.

pub mod check;
pub mod raw;
mod settings;
pub mod sweep;
pub mod trace;

pub use raw::RawScenario;

use std::ops::Range;

use crate::error::{ScenarioError, ScenarioErrors};
use crate::model::Scenario;
use trace::Traces;

/// The scenario that `herdsim run` uses when no file is named; embedded in the binary.
pub const QUICKSTART: &str = include_str!("../../scenarios/quickstart.toml");

/// The display name used for the built-in quickstart in messages.
pub const QUICKSTART_NAME: &str = "scenarios/quickstart.toml";

/// The commented scenario `herdsim init` writes, with `NAME` and `FILE` to fill in.
const STARTER: &str = include_str!("starter.toml");

/// The starter scenario for `file`: its `name` is made from the file's stem (lowercased,
/// characters outside `[a-z0-9_-]` replaced by `-`, at most 64), or `scenario`.
pub fn starter(file: &std::path::Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
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
    let col = before[line_start..].chars().count() + 1;
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
    }
}

/// Parses scenario text. A syntax or type error stops at the first fault, as TOML parsers do;
/// semantic problems are collected later by [`check::scenario`].
pub fn parse(file: &str, src: &str) -> Result<RawScenario, ScenarioError> {
    toml::from_str::<RawScenario>(src).map_err(|e| toml_error(file, src, e))
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

/// [`validate`], reading trace files through `traces` (relative to its folder, each once).
pub fn validate_with(
    file: &str,
    src: &str,
    traces: &mut Traces,
) -> Result<(RawScenario, Scenario), ScenarioErrors> {
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
        let follows = follows_from(&error, &blanked);
        if !follows {
            errors.push(error.clone());
        }
        // Give up recovering after a syntax error, or when the pair cannot be found.
        // Each round blanks one more pair, so this ends; the bound only caps the work.
        let range = (!error.key.is_empty() && rounds < 200)
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
            // File order; file-level problems (no position) first; then those of the trace
            // files it names, each in its own order. The sort is stable.
            errors.sort_by_key(|e| (e.file != file, e.line.unwrap_or(0), e.col.unwrap_or(0)));
            Err(ScenarioErrors(errors))
        }
        None => Err(ScenarioErrors(errors)),
    }
}

/// Whether `e` is only a consequence of blanking the pairs at `blanked` (dotted key paths).
fn follows_from(e: &ScenarioError, blanked: &[String]) -> bool {
    blanked.iter().any(|b| {
        e.key == *b
            || e.key.starts_with(&format!("{b}."))
            || (e.msg.starts_with("missing required key")
                && e.key.rsplit('.').next() == b.rsplit('.').next())
            // "expected one of `count`, ..., found none of them" for a table with a blanked
            // pair: the blanked key may have been the one.
            || (e.msg.ends_with("found none of them") && b.starts_with(&format!("{}.", e.key)))
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
        let rest = &text[v.end..];
        let comma = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let end = if rest[comma..].starts_with(',') {
            v.end + comma + 1
        } else {
            v.end
        };
        return Some((segments[..len].join("."), k.start..end));
    }
    None
}

/// Turns a toml/serde error into a positioned [`ScenarioError`].
pub(crate) fn toml_error(file: &str, src: &str, e: toml::de::Error) -> ScenarioError {
    toml_error_in(file, src, src, e)
}

/// [`toml_error`] for an error in `text`, a copy of `src` with some pairs blanked out:
/// key paths are read from `text`, positions computed on `src` (they are the same offsets).
fn toml_error_in(file: &str, text: &str, src: &str, e: toml::de::Error) -> ScenarioError {
    let src_for_positions = src;
    let src = text;
    // toml keeps the key path private, but prints it ("in `a.b`") when it has no input to
    // quote; that is the only way to recover it for messages like `clients.count: ...`.
    let mut bare = e.clone();
    bare.set_input(None);
    let printed = bare.to_string();
    let path = printed
        .lines()
        .find_map(|l| l.strip_prefix("in `").and_then(|l| l.strip_suffix('`')))
        .unwrap_or("");
    let span = e.span();
    // toml's path has no array indices (`strategy`, not `strategy[1]`): find them from the
    // position, so the key says which [[strategy]] or outage is at fault.
    let mut key = match &span {
        Some(span) => indexed_path(src, path, span.start),
        None => path.to_string(),
    };
    let raw = e.message().trim().replace('\n', "; ");
    // Not TOML at all: say so, and what stands where the parser stopped.
    if path.is_empty() && raw != "duplicate key" && src.parse::<toml_edit::DocumentMut>().is_err() {
        let found = span
            .as_ref()
            .and_then(|s| src.get(s.start..))
            .map(|rest| rest.lines().next().unwrap_or("").trim())
            .map_or("the end of the file".to_string(), |rest| match rest {
                "" => "the end of the line".to_string(),
                rest => format!("`{}`", crate::text::escape(rest)),
            });
        return error_at(
            file,
            src_for_positions,
            span,
            key,
            format!("TOML syntax: {raw}, found {found}"),
        );
    }
    // toml hands a date-time to serde as a table with one private key: say what was written.
    let datetime = span
        .as_ref()
        .and_then(|s| src.get(s.clone()))
        .map(str::trim)
        .filter(|t| t.parse::<toml_edit::Datetime>().is_ok())
        .map(String::from);
    if let Some(datetime) = datetime {
        let expected = raw
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split_once(", expected "))
            .map(|(_, expected)| match expected {
                "variant identifier" => tag_names(&key).to_string(),
                e => expected_words(e),
            })
            .unwrap_or_else(|| "a table".to_string());
        return error_at(
            file,
            src_for_positions,
            span,
            key,
            format!("expected {expected}, found the date-time {datetime}"),
        );
    }
    // serde's "variant identifier" is the tag of a tagged table (`dist`, a budget's `kind`);
    // an array there is read as [tag, ...], so the fault is at its first element.
    if raw.ends_with("expected variant identifier") {
        let found = raw
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split_once(", expected "))
            .map(|(found, _)| found_words(found))
            .unwrap_or_default();
        let msg = if let Some(table) = key.strip_suffix("[0]") {
            key = table.to_string();
            format!("expected {}, found an array", tagged_table(&key))
        } else {
            format!("expected {}, found {found}", tag_names(&key))
        };
        return error_at(file, src_for_positions, span, key, msg);
    }
    // A table given as an array: serde reads structs from sequences too.
    if raw.starts_with("invalid length ") && raw.contains(", expected struct ") {
        return error_at(
            file,
            src_for_positions,
            span,
            key,
            "expected a table, found an array",
        );
    }
    // Name the offending key itself, not only the table holding it.
    let named = raw
        .strip_prefix("unknown field `")
        .or_else(|| raw.strip_prefix("missing field `"))
        .and_then(|rest| rest.split('`').next());
    if let Some(leaf) = named {
        key = if key.is_empty() {
            leaf.to_string()
        } else {
            format!("{key}.{leaf}")
        };
    }
    if raw == "duplicate key"
        && let Some(span) = &span
        && let Some(text) = src.get(span.clone())
    {
        let leaf = text.trim().trim_matches(['"', '\'']);
        key = if key.is_empty() {
            leaf.to_string()
        } else {
            format!("{key}.{leaf}")
        };
    }
    let table = match key.rsplit_once('.') {
        Some((table, _)) if named.is_some() => format!(" in {table}"),
        _ => String::new(),
    };
    error_at(file, src_for_positions, span, key, friendlier(&raw, &table))
}

/// The dotted `path` with the index of each array element the byte `offset` falls in:
/// `strategy.budget` -> `strategy[1].budget`. Unchanged when the text cannot be re-read.
fn indexed_path(src: &str, path: &str, offset: usize) -> String {
    use toml_edit::{Item, TableLike, Value};
    if path.is_empty() {
        return String::new();
    }
    let Ok(doc) = toml_edit::Document::parse(src) else {
        return path.to_string();
    };
    let mut out: Vec<String> = Vec::new();
    let mut table: Option<&dyn TableLike> = Some(doc.as_table());
    for segment in path.split('.') {
        let Some(item) = table.and_then(|t| t.get(segment)) else {
            out.push(segment.to_string());
            table = None;
            continue;
        };
        table = None;
        match item {
            Item::Table(t) => {
                out.push(segment.to_string());
                table = Some(t);
            }
            Item::Value(Value::InlineTable(t)) => {
                out.push(segment.to_string());
                table = Some(t);
            }
            // A table's span is its `[[header]]`: the fault is in the last one before it.
            Item::ArrayOfTables(array) => {
                let i = array
                    .iter()
                    .filter(|t| t.span().is_some_and(|s| s.start <= offset))
                    .count()
                    .saturating_sub(1);
                out.push(format!("{segment}[{i}]"));
                table = array.get(i).map(|t| t as &dyn TableLike);
            }
            Item::Value(Value::Array(array)) => {
                match array
                    .iter()
                    .position(|v| v.span().is_some_and(|s| s.contains(&offset)))
                {
                    Some(i) => {
                        out.push(format!("{segment}[{i}]"));
                        if let Some(Value::InlineTable(t)) = array.get(i) {
                            table = Some(t);
                        }
                    }
                    None => out.push(segment.to_string()),
                }
            }
            _ => out.push(segment.to_string()),
        }
    }
    out.join(".")
}

/// Rewords serde's terse messages where a user would otherwise have to guess: every message
/// says what was expected and what was found. `table` is ` in <table>` for key messages.
fn friendlier(msg: &str, table: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        return if expected.is_empty() {
            format!("unknown key {found}{table}")
        } else {
            format!("unknown key {found}{table}, expected {expected}")
        };
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("missing required key {rest}{table}");
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        return format!("expected {expected}, found {found}");
    }
    if msg == "duplicate key" {
        return "duplicate key: each key may appear only once in a table".to_string();
    }
    let typed = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "));
    if let Some(rest) = typed
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        // A 64-bit integer above TOML's largest (a u64 seed): say where the limit is.
        if expected == "i64" && found.starts_with("integer ") && !found.contains(" as ") {
            return format!(
                "expected an integer of at most {} (the largest TOML integer), found {}",
                i64::MAX,
                found_words(found)
            );
        }
        return format!(
            "expected {}, found {}",
            expected_words(expected),
            found_words(found)
        );
    }
    // Anything else serde or toml says is shown as is, minus Rust type names.
    strip_type_names(msg)
}

/// The names the tag at `key` takes: a budget's `kind` or a distribution's `dist`.
fn tag_names(key: &str) -> &'static str {
    if key.ends_with(".kind") {
        "one of `ratio`, `token_bucket`, `quota`, `adaptive`"
    } else {
        "one of `constant`, `uniform`, `normal`, `exponential`, `lognormal`"
    }
}

/// The tagged table expected at `key`: a budget or a distribution.
fn tagged_table(key: &str) -> &'static str {
    if key.ends_with("budget") {
        "a budget table such as { kind = \"ratio\", ratio = 0.1 }"
    } else {
        "a distribution table such as { dist = \"constant\", value = \"10ms\" }"
    }
}

/// serde's "expected" side in the user's words: no Rust type or enum names.
fn expected_words(expected: &str) -> String {
    match expected {
        "i64" | "u64" | "i32" | "u32" | "u16" | "u8" | "i128" | "u128" | "usize" => {
            "an integer".to_string()
        }
        "f64" | "f32" => "a number".to_string(),
        "a sequence" => "an array".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        e if e.contains("RawDist") => tagged_table("").to_string(),
        e if e.contains("RawBudget") => tagged_table("budget").to_string(),
        e if e.starts_with("struct ") || e.starts_with("map") => "a table".to_string(),
        e if e.starts_with("internally tagged enum") || e.starts_with("enum ") => {
            "one of the documented forms".to_string()
        }
        e => strip_type_names(e),
    }
}

/// serde's "found" side: `string "x"` -> `a string "x"`, ``integer `5` `` -> `the integer 5`,
/// an integer beyond 64 bits (``... as i128``) said to be too large.
fn found_words(found: &str) -> String {
    let value = |s: &str| s.trim().trim_matches('`').to_string();
    if let Some(v) = found.strip_prefix("integer ") {
        return match v.split_once(" as ") {
            Some((n, _)) => format!("the integer {} (too large)", value(n)),
            None => format!("the integer {}", value(v)),
        };
    }
    if let Some(v) = found.strip_prefix("floating point ") {
        return format!("the number {}", value(v));
    }
    if let Some(v) = found.strip_prefix("string ") {
        return format!("a string {v}");
    }
    if let Some(v) = found.strip_prefix("boolean ") {
        return format!("the boolean {}", value(v));
    }
    match found {
        "sequence" => "an array".to_string(),
        "map" => "a table".to_string(),
        f => strip_type_names(f),
    }
}

/// Removes Rust type names (`i64`, `u32`, `RawDist`, ...) that serde puts in messages.
fn strip_type_names(msg: &str) -> String {
    let mut out = msg.to_string();
    for (rust, words) in [
        (" as i128", ""),
        (" as u128", ""),
        ("internally tagged enum RawDist", "a distribution table"),
        ("i64", "integer"),
        ("u64", "integer"),
        ("u32", "integer"),
        ("u16", "integer"),
        ("f64", "number"),
    ] {
        out = out.replace(rust, words);
    }
    out
}

#[cfg(test)]
mod tests;
