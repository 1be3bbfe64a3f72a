//! `--set dotted.key=value`: values written into a scenario's text before it is validated,
//! at paths of the form `[sweep]` takes (the same [`set_path`] writes them), keeping the
//! line of every other key so that messages about the file still point at it.

use std::path::Path;

use toml_edit::Value;

use super::sweep::{ScenarioFile, indexed_key, load_in, set_path};
use crate::error::{Fault, ScenarioError, ScenarioErrors};

/// One `--set dotted.key=value` of `run` or `check`: a value written into the scenario text
/// before it is validated, at a path of the form `[sweep]` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The dotted path, e.g. `server.outages.0.end`.
    pub path: String,
    /// The value as given on the command line, e.g. `5s`, `200`, `"full"`.
    pub text: String,
}

impl Setting {
    /// Parses `dotted.key=value` (split at the first `=`).
    pub fn parse(arg: &str) -> Result<Setting, String> {
        match arg.split_once('=') {
            Some((path, text)) if !path.trim().is_empty() => Ok(Setting {
                path: path.trim().to_string(),
                text: text.trim().to_string(),
            }),
            _ => Err(format!(
                "expected dotted.key=value such as clients.count=100 or server.outages.0.end=5s, found \"{arg}\""
            )),
        }
    }

    /// The path in the dotted form `[sweep]` uses: `server.outages[0].end`, the spelling
    /// messages print keys in, is `server.outages.0.end`, so a key copied from a message
    /// works.
    pub fn key(&self) -> String {
        dotted(&self.path)
    }

    /// The flag as the user gave it, for messages: `--set clients.count=100`.
    pub fn flag(&self) -> String {
        format!("--set {}={}", self.path, self.text)
    }

    /// Whether the text is an integer literal too large for TOML's 64 bits.
    fn is_oversized_integer(&self) -> bool {
        let digits = self.text.strip_prefix(['+', '-']).unwrap_or(&self.text);
        !digits.is_empty()
            && digits.starts_with(|c: char| c.is_ascii_digit())
            && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
            && self.text.parse::<Value>().is_err()
    }

    /// The TOML value: what the text means as a TOML value (a number, `true`, a quoted
    /// string, an array, an inline table), else the text as a string, so `5s` and `full`
    /// need no quotes.
    fn value(&self) -> Value {
        match self.text.parse::<Value>() {
            Ok(Value::Datetime(_)) | Err(_) => Value::from(self.text.as_str()),
            Ok(mut v) => {
                v.decor_mut().clear();
                v
            }
        }
    }
}

/// `msg` with the quotes its duration hints put around examples taken out (`such as
/// "100ms"`, `(write e.g. "5ms" or "5s")`, `(a duration needs a unit and quotes, ...)`),
/// for a value given on the command line. The value itself, echoed as `found "..."`, is
/// left as the user typed it, whatever it holds.
fn unquote_hints(msg: &str, value: &Value) -> String {
    let unquote = |part: &str| -> String {
        let mut part = part
            .replace("such as \"100ms\"", "such as 100ms")
            .replace(
                "expected \"none\" or a duration",
                "expected none or a duration",
            )
            .replace(
                "expected \"none\", \"auto\" or a duration",
                "expected none, auto or a duration",
            );
        for opener in ["(a duration ", "(write e.g. "] {
            if let Some(at) = part.find(opener)
                && let Some(len) = part[at..].find(')')
            {
                let hint = part[at..=at + len]
                    .replace(" and quotes", "")
                    .replace(" in quotes", "")
                    .replace("quotes and ", "")
                    .replace('"', "");
                part.replace_range(at..=at + len, &hint);
            }
        }
        part
    };
    let echo = match value {
        Value::String(v) => Some(format!("found \"{}\"", v.value())),
        _ => None,
    };
    match echo
        .as_deref()
        .and_then(|echo| Some((msg.find(echo)?, echo.len())))
    {
        Some((at, len)) => format!(
            "{}{}{}",
            unquote(&msg[..at]),
            &msg[at..at + len],
            unquote(&msg[at + len..])
        ),
        None => unquote(msg),
    }
}

/// For a setting whose path goes through a table the file does not have (`--set
/// server.rate_limit.rate=100`), the setting that writes that table whole as an inline
/// table (`server.rate_limit={ rate = 100 }`), when the scenario then has no problem at
/// that table (a misspelt table, one that is no table, one lacking a required key get
/// none) and it can be pasted as given: not through a list's index, not with a `'` inside
/// single quotes.
fn whole_table(doc: &toml_edit::DocumentMut, segments: &[&str], value: Value) -> Option<String> {
    // The deepest table that takes it: replacing a shallower one would drop the keys it
    // holds (helper-101: `clients.1.retry={ budget = ... }` wiped the population's policy).
    (1..segments.len()).rev().find_map(|k| {
        let (path, rest) = segments.split_at(k);
        if rest
            .iter()
            .any(|s| s.is_empty() || s.parse::<usize>().is_ok())
        {
            return None;
        }
        // Each key as TOML writes it: a `[sweep]` key's dots quoted (`"clients.count"`).
        let inline = rest.iter().rev().fold(value.to_string(), |inner, key| {
            format!("{{ {} = {inner} }}", toml_edit::Key::new(*key))
        });
        if inline.contains('\'') {
            return None;
        }
        let mut tried = doc.clone();
        set_path(tried.as_table_mut(), path, inline.parse().ok()?, "to set").ok()?;
        // Suggested only if the scenario then has no problem there.
        let at = path.join(".");
        if let Err(ScenarioErrors(problems)) = crate::scenario::validate("", &tried.to_string())
            && problems.iter().any(|e| {
                let key = dotted(&e.key);
                key == at || key.starts_with(&format!("{at}."))
            })
        {
            return None;
        }
        Some(format!("{at}={inline}"))
    })
}

/// How lines of a rewritten text map back to the lines of the text it was made from: the
/// lines before `prefix` (1-based, inclusive) and the last `suffix` lines are unchanged.
#[derive(Debug, Clone, Copy)]
struct LineShift {
    prefix: usize,
    suffix: usize,
    before: usize,
    after: usize,
}

impl LineShift {
    fn between(before: &str, after: &str) -> LineShift {
        let a: Vec<&str> = before.split('\n').collect();
        let b: Vec<&str> = after.split('\n').collect();
        let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let room = a.len().min(b.len()) - prefix;
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(room)
            .take_while(|(x, y)| x == y)
            .count();
        LineShift {
            prefix,
            suffix,
            before: a.len(),
            after: b.len(),
        }
    }

    /// The line in the earlier text of `line` in the later one; `None` inside the change.
    fn map(&self, line: usize) -> Option<usize> {
        if line <= self.prefix {
            Some(line)
        } else if line > self.after - self.suffix {
            Some(line + self.before - self.after)
        } else {
            None
        }
    }
}

/// Writes every setting into `src` (in order, so a later one wins), with `toml_edit`, leaving
/// the rest of the text as written. Returns the new text and, per setting, how its lines
/// moved.
fn apply_settings(
    file: &str,
    src: &str,
    settings: &[Setting],
) -> Result<(String, Vec<LineShift>), ScenarioErrors> {
    let mut doc = match src.parse::<toml_edit::DocumentMut>() {
        Ok(doc) => doc,
        // A syntax error: reported by validating the text as written.
        Err(_) => return Ok((src.to_string(), Vec::new())),
    };
    let mut text = src.to_string();
    let mut shifts = Vec::new();
    let mut errors = Vec::new();
    for setting in settings {
        let key = setting.key();
        // A `[sweep]` key is a whole path, quoted (`"clients.count" = [10, 20]`): so is
        // what follows `sweep.` here (quoted or not), the file's own key for that path in
        // whichever spelling (`"strategy[1].base"`), and `[sweep]` is added if the file has
        // none (and taken out again if the setting fails).
        let axis = key.strip_prefix("sweep.").map(|axis| swept_key(&doc, axis));
        let segments: Vec<&str> = match &axis {
            Some(axis) => vec!["sweep", axis],
            None => key.split('.').collect(),
        };
        let added_sweep = axis.is_some() && !doc.contains_key("sweep");
        if added_sweep {
            doc.insert("sweep", toml_edit::table());
        }
        match set_path(doc.as_table_mut(), &segments, setting.value(), "to set") {
            Ok(_) => {
                let next = doc.to_string();
                shifts.push(LineShift::between(&text, &next));
                text = next;
            }
            Err(msg) => {
                if added_sweep {
                    doc.remove("sweep");
                }
                let hint = whole_table(&doc, &segments, setting.value())
                    .map(|whole| format!(" (to add the table, set it whole: --set '{whole}')"))
                    .unwrap_or_default();
                errors.push(ScenarioError {
                    file: file.to_string(),
                    line: None,
                    col: None,
                    key: String::new(),
                    msg: format!("{}: {msg}{hint}", setting.flag()),
                    fault: Fault::Other,
                })
            }
        }
    }
    if errors.is_empty() {
        Ok((text, shifts))
    } else {
        Err(ScenarioErrors(errors))
    }
}

/// The `[sweep]` key a `--set sweep.AXIS=...` sets: AXIS without the quotes it may be
/// written in (`sweep."clients.count"`), or the key the file's `[sweep]` already has for
/// the same path in another spelling (`"strategy[1].base"` for `strategy.1.base`), so that
/// its list is replaced rather than a second key added for one value.
fn swept_key(doc: &toml_edit::DocumentMut, axis: &str) -> String {
    let unquoted = unquoted(axis);
    let same = canonical_path(unquoted);
    doc.get("sweep")
        .and_then(|sweep| sweep.as_table_like())
        .and_then(|sweep| {
            sweep
                .iter()
                .find(|(written, _)| canonical_path(written) == same)
                .map(|(written, _)| written.to_string())
        })
        .unwrap_or_else(|| unquoted.to_string())
}

/// `axis` without the quotes around it, if it is quoted (`"clients.count"`).
fn unquoted(axis: &str) -> &str {
    ['"', '\'']
        .iter()
        .find_map(|&q| axis.strip_prefix(q)?.strip_suffix(q))
        .unwrap_or(axis)
}

/// `path` in the dotted form `[sweep]` uses (`server.outages[0].end` is
/// `server.outages.0.end`); a bracket that is not an index is left as written, for the path
/// writer to refuse.
pub(super) fn dotted(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        let inside = &rest[open + 1..];
        match inside.find(']') {
            Some(close) if close > 0 && inside[..close].bytes().all(|b| b.is_ascii_digit()) => {
                out.push_str(&rest[..open]);
                out.push('.');
                out.push_str(&inside[..close]);
                rest = &inside[close + 1..];
            }
            // Not an index: left as written, for the path writer to refuse.
            _ => {
                out.push_str(&rest[..=open]);
                rest = inside;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value a path names, for telling two spellings of one apart: dotted, and every index
/// as its number (`server.outages[00].end`, `server.outages.0.end` and
/// `server.outages.00.end` are one value).
pub(crate) fn canonical_path(path: &str) -> String {
    dotted(path)
        .split('.')
        .map(|part| match part.parse::<u64>() {
            Ok(n) if part.bytes().all(|b| b.is_ascii_digit()) => n.to_string(),
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Refuses the same key set twice (in either spelling, `server.outages.0.end` and
/// `server.outages[0].end`): the later one would win silently, and one of the two is a
/// mistake, as with other conflicting flags. Names both flags.
pub fn check_repeats(settings: &[Setting]) -> Result<(), String> {
    // Indexes compared as numbers: `outages[00]` and `outages.0` are one entry; a swept
    // path quoted or not is one key (`sweep."clients.count"`, `sweep.clients.count`).
    let canonical = |s: &Setting| match dotted(&s.path).strip_prefix("sweep.") {
        Some(axis) => format!("sweep.{}", canonical_path(unquoted(axis))),
        None => canonical_path(&s.path),
    };
    for (i, later) in settings.iter().enumerate() {
        if let Some(earlier) = settings[..i]
            .iter()
            .find(|s| canonical(s) == canonical(later))
        {
            return Err(format!(
                "{} and {} set the same key `{}`: give it once",
                earlier.flag(),
                later.flag(),
                later.key()
            ));
        }
    }
    Ok(())
}

/// [`load_in`] after writing `settings` (`--set`) into the text. The result's `source` is
/// the text with the settings written in, the one the outputs reproduce and
/// [`crate::scenario::scenario_hash`] hashes. A problem caused by a setting names the flag
/// and has no position; others keep the position of the file as written.
pub fn load_with_settings(
    file: &str,
    src: &str,
    folder: &Path,
    settings: &[Setting],
) -> Result<ScenarioFile, ScenarioErrors> {
    if settings.is_empty() {
        return load_in(file, src, folder);
    }
    // A swept key first: the sweep replaces the value at every point, so whatever problem
    // the value would cause never happens (and a valid value would be refused anyway).
    let written_axes: Vec<String> = toml::from_str::<toml::Table>(src)
        .ok()
        .and_then(|t| match t.get("sweep") {
            Some(toml::Value::Table(sweep)) => Some(sweep.keys().cloned().collect()),
            _ => None,
        })
        .unwrap_or_default();
    let swept = swept_settings(file, settings, &written_axes);
    if !swept.is_empty() {
        return Err(ScenarioErrors(swept));
    }
    let (text, shifts) = apply_settings(file, src, settings)?;
    let loaded = load_in(file, &text, folder).map_err(|ScenarioErrors(errors)| {
        // What the file gives without some settings, asked only for a problem at a key no
        // setting wrote (a rule between keys), and at most once per subset.
        let mut without: Vec<Option<Vec<String>>> = vec![None; settings.len() + 1];
        let errors = errors
            .into_iter()
            .map(|mut e| {
                if e.file != file {
                    return e; // a trace file's own position
                }
                let set_by = settings.iter().rev().find(|s| {
                    let k = indexed_key(&s.key());
                    e.key == k
                        || e.key.starts_with(&format!("{k}."))
                        || e.key.starts_with(&format!("{k}["))
                });
                match set_by {
                    Some(s) => {
                        e.line = None;
                        e.col = None;
                        // An integer beyond 64 bits is no TOML value, so it reached the
                        // scenario as a string: say what it is, as for the same in a file.
                        if s.is_oversized_integer() {
                            e.msg = e.msg.replace(
                                &format!("found a string \"{}\"", s.text),
                                &format!(
                                    "found the integer {} {}",
                                    s.text,
                                    super::toml_errors::TOO_LARGE
                                ),
                            );
                        }
                        // A value typed after `--set key=` needs no quotes (the shell
                        // would take them): the hints for a bare number in a file do not
                        // apply. Inside an inline table or array they do, as in a file.
                        if e.key == indexed_key(&s.key()) {
                            e.msg = unquote_hints(&e.msg, &s.value());
                        }
                        e.msg = format!("{} (from {})", e.msg, s.flag());
                    }
                    None => {
                        let causes = causes(&e, file, src, folder, settings, &mut without);
                        if !causes.is_empty() {
                            let flags: Vec<String> = causes.iter().map(|s| s.flag()).collect();
                            e.msg = format!("{} (from {})", e.msg, flags.join(", "));
                        }
                        e.line = e
                            .line
                            .and_then(|l| shifts.iter().rev().try_fold(l, |l, s| s.map(l)));
                        if e.line.is_none() {
                            e.col = None;
                        }
                    }
                }
                e
            })
            .collect();
        ScenarioErrors(errors)
    })?;
    let axes: Vec<String> = loaded.axes.iter().map(|a| a.path.clone()).collect();
    let swept = swept_settings(file, settings, &axes);
    if swept.is_empty() {
        Ok(loaded)
    } else {
        Err(ScenarioErrors(swept))
    }
}

/// The refusals of the settings that set a key of `axes` (the `[sweep]` paths, in either
/// spelling).
fn swept_settings(file: &str, settings: &[Setting], axes: &[String]) -> Vec<ScenarioError> {
    settings
        .iter()
        .filter(|s| {
            axes.iter()
                .any(|a| canonical_path(a) == canonical_path(&s.path))
        })
        .map(|s| ScenarioError {
            file: file.to_string(),
            line: None,
            col: None,
            key: String::new(),
            msg: format!(
                "{}: `{}` is swept by [sweep], which would replace the value at every point: remove it from [sweep] to set it",
                s.flag(),
                s.path
            ),
            fault: Fault::Other,
        })
        .collect()
}

/// The settings that cause `e`, a problem found with every setting written in at a key none
/// of them wrote (a rule tying a set key to one the file writes: `cap >= base`, `end >
/// start`, unique names): none when the file has a problem at that key without any setting
/// (its own problem); else each setting without which the key has no problem, or all of them
/// when no single one is to blame. `without[i]` caches the problems found with every setting but
/// the `i`-th (their keys); `without[settings.len()]`, those of the file as written.
fn causes<'a>(
    e: &ScenarioError,
    file: &str,
    src: &str,
    folder: &Path,
    settings: &'a [Setting],
    without: &mut [Option<Vec<String>>],
) -> Vec<&'a Setting> {
    let mut found = |skip: usize| -> bool {
        without[skip]
            .get_or_insert_with(|| {
                let kept: Vec<Setting> = settings
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != skip && skip < settings.len())
                    .map(|(_, s)| s.clone())
                    .collect();
                problems(file, src, folder, &kept)
            })
            // By key, not message: messages quote values, which the setting may change
            // (`cap >= base (200ms)` with `--set base=200ms`, `(100ms)` without it).
            .contains(&e.key)
    };
    if found(settings.len()) {
        return Vec::new();
    }
    let blamed: Vec<&Setting> = (0..settings.len())
        .filter(|&i| !found(i))
        .map(|i| &settings[i])
        .collect();
    if blamed.is_empty() {
        settings.iter().collect()
    } else {
        blamed
    }
}

/// The key of every problem `file` has with `settings` written in (none if one of them
/// cannot be written).
fn problems(file: &str, src: &str, folder: &Path, settings: &[Setting]) -> Vec<String> {
    let Ok((text, _)) = apply_settings(file, src, settings) else {
        return Vec::new();
    };
    match load_in(file, &text, folder) {
        Ok(_) => Vec::new(),
        Err(ScenarioErrors(errors)) => errors
            .into_iter()
            .filter(|e| e.file == file)
            .map(|e| e.key)
            .collect(),
    }
}
