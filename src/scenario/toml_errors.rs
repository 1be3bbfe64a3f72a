//! toml and serde errors as positioned [`ScenarioError`]s in the user's words: the key path
//! with the index of each array element (`strategy[1].budget`), the line and column, and
//! serde's terse messages reworded so that every one says what was expected and what was
//! found, without Rust type names.

use super::guess::{did_you_mean_keys, guesses_unwritten};
use super::toml_keys::{self, Twice};
use super::{ScenarioError, error_at, toml_text};
use crate::error::Fault;

/// What an integer beyond 64 bits is, in "found the integer ... (this)": no key takes one.
pub(crate) const TOO_LARGE: &str = "(above 9223372036854775807, the largest integer TOML holds)";

/// How much of the text where the parser stopped a syntax error quotes.
const QUOTED_CHARS: usize = 40;

/// The start of the key of `src` with the most dotted parts (`a.b.c` has 3), and how many
/// it has: keys of lines, of headers and of inline tables, read with a small scanner
/// (neither toml nor `toml_edit` reads such a file), which skips comments, strings (a
/// quoted part's dots are not parts) and values (a float's dot is no part).
fn most_dotted_key(src: &str) -> Option<(usize, usize)> {
    let b = src.as_bytes();
    // Brackets open in the value being read: `[` arrays, `{` inline tables.
    let mut open: Vec<u8> = Vec::new();
    // A key may start here: at a line's start outside any value, after `{` or `,` in an
    // inline table.
    let mut expect_key = true;
    // The key being read: its start, its dots, and whether it is a header's (ends at `]`).
    let mut key: Option<(usize, usize, bool)> = None;
    let mut most: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                if expect_key && key.is_none() {
                    key = Some((i, 0, false));
                }
                i = past_string(b, i);
                continue;
            }
            b'\n' if open.is_empty() => {
                key = None;
                expect_key = true;
            }
            // A line end inside an array or inline table is blank space.
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'.' if key.is_some() => {
                if let Some((_, dots, _)) = key.as_mut() {
                    *dots += 1;
                }
            }
            b'=' | b']' if key.is_some() => {
                let (start, dots, _) = key.take().expect("a key is being read");
                if most.is_none_or(|(_, parts)| dots + 1 > parts) {
                    most = Some((start, dots + 1));
                }
                expect_key = false;
            }
            b'[' if expect_key && key.is_none() && open.is_empty() => {
                // A header, `[table]` or `[[array]]`: its key starts after the brackets.
                let mut start = i + 1;
                while start < b.len() && matches!(b[start], b'[' | b' ' | b'\t') {
                    start += 1;
                }
                key = Some((start, 0, true));
                i = start;
                continue;
            }
            b'[' | b'{' if key.is_none() => {
                open.push(c);
                expect_key = c == b'{';
            }
            b']' | b'}' if key.is_none() => {
                open.pop();
                expect_key = false;
            }
            b',' if open.last() == Some(&b'{') => expect_key = true,
            _ if expect_key && key.is_none() => key = Some((i, 0, false)),
            _ => {}
        }
        i += 1;
    }
    most
}

/// Where the TOML string starting at `b[at]` (`"`, `'`, or a `"""` or `\'\'\'` block) ends:
/// just past its closing quotes (the end of the text if it has none).
fn past_string(b: &[u8], at: usize) -> usize {
    let q = b[at];
    let block = b.len() >= at + 3 && b[at + 1] == q && b[at + 2] == q;
    let mut i = at + if block { 3 } else { 1 };
    while i < b.len() {
        if b[i] == b'\\' && q == b'"' {
            i += 2;
            continue;
        }
        if !block && b[i] == b'\n' {
            return i;
        }
        if b[i] == q && (!block || b[i..].starts_with(&[q, q, q])) {
            return i + if block { 3 } else { 1 };
        }
        i += 1;
    }
    b.len()
}

/// Turns a toml/serde error into a positioned [`ScenarioError`].
pub(crate) fn toml_error(file: &str, src: &str, e: toml::de::Error) -> ScenarioError {
    toml_error_in(file, src, src, e)
}

/// [`toml_error`] for an error in `text`, a copy of `src` with some pairs blanked out:
/// key paths are read from `text`, positions computed on `src` (they are the same offsets).
pub(super) fn toml_error_in(
    file: &str,
    text: &str,
    src: &str,
    e: toml::de::Error,
) -> ScenarioError {
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
    // The keys the table at fault has, for guesses (see `guesses_unwritten`).
    let (mut key, written) = match &span {
        Some(span) => table_at(src, path, span.start),
        None => (path.to_string(), Vec::new()),
    };
    let raw = e.message().trim().replace('\n', "; ");
    // A dotted key or a header through a key holding a value: that key written twice.
    if raw.starts_with("cannot extend value of type ")
        && let Some(at) = span.as_ref().map(|s| s.start)
        && let Some((path, msg)) = toml_keys::written_twice(src, at, Twice::Through)
    {
        return error_at(file, src_for_positions, span, path, msg);
    }
    // A dotted key of about 80 parts or more meets serde's recursion limit, which toml
    // reports with no position ("recursion limit, found the end of the file"): point at
    // the key with the most parts.
    if raw == "recursion limit"
        && let Some((start, parts)) = most_dotted_key(src)
    {
        return error_at(
            file,
            src_for_positions,
            Some(start..start),
            "",
            format!(
                "TOML syntax: expected a key of a few dotted parts, found one of {parts}, nested deeper than the parser reads"
            ),
        );
    }
    // Not TOML at all: say so, and what stands where the parser stopped.
    if path.is_empty() && raw != "duplicate key" && src.parse::<toml_edit::DocumentMut>().is_err() {
        let (span, raw) = value_then_text(src, span, raw);
        let found = span
            .as_ref()
            .and_then(|s| {
                // The parser may stop just past a control character (an escape sequence's
                // ESC): quote from it, so that it is shown.
                let control = src
                    .get(..s.start)?
                    .chars()
                    .next_back()
                    .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
                src.get(s.start - control.map_or(0, char::len_utf8)..)
            })
            // Only blanks are trimmed: a form feed or other control character is shown.
            .map(|rest| {
                // Nothing but blanks to the end: the end of the file, not of a line.
                if rest.trim().is_empty() {
                    return None;
                }
                Some(
                    rest.split(['\n', '\r'])
                        .next()
                        .unwrap_or("")
                        .trim_matches([' ', '\t']),
                )
            })
            .map_or("the end of the file".to_string(), |rest| match rest {
                None => "the end of the file".to_string(),
                Some("") => "the end of the line".to_string(),
                // A long line (a minified value, 200 000 brackets) is quoted up to a point.
                Some(rest) => match rest.char_indices().nth(QUOTED_CHARS) {
                    Some((cut, _)) => format!("`{}`...", crate::text::escape(&rest[..cut])),
                    None => format!("`{}`", crate::text::escape(rest)),
                },
            });
        // A `{` or `[` left open runs on to the next lines (TOML 1.1 inline tables may span
        // lines), so the parser stops far below it, at the next header: say where it opened.
        let unclosed = span
            .as_ref()
            .and_then(|s| toml_text::unclosed_bracket(src, s.start))
            .map_or(String::new(), |(bracket, at)| {
                let (line, col) = super::line_col(src, at);
                format!(" (the `{bracket}` at line {line}, column {col} is not closed)")
            });
        return error_at(
            file,
            src_for_positions,
            span,
            key,
            format!("TOML syntax: {raw}, found {found}{unclosed}"),
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
            .map(|(_, expected)| expected_words(expected))
            .unwrap_or_else(|| "a table".to_string());
        return error_at(
            file,
            src_for_positions,
            span,
            key,
            format!("expected {expected}, found the date-time {datetime}"),
        );
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
        let (path, msg) = toml_keys::written_twice(src, span.start, Twice::Duplicate)
            .unwrap_or_else(|| {
                let leaf = text.trim().trim_matches(['"', '\'']);
                (
                    leaf.to_string(),
                    format!("duplicate key: expected each key once, found `{leaf}` a second time"),
                )
            });
        return error_at(file, src_for_positions, Some(span.clone()), path, msg);
    }
    let table = match key.rsplit_once('.') {
        Some((table, _)) if named.is_some() => format!(" in {table}"),
        _ => String::new(),
    };
    let (mut msg, fault) = friendlier(&raw, &table, &written);
    if raw == "floating-point number overflowed"
        && let Some(written) = span.as_ref().and_then(|s| src.get(s.clone()))
    {
        msg = format!(
            "expected a number of at most 1.8e308, found {}",
            crate::text::escape(written.trim())
        );
    }
    // serde shows a float as Rust prints it (`1e4` as `10000.0`): quote what was written.
    if let Some(shown) = raw
        .split("floating point `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        && let Some(written) = span
            .as_ref()
            .and_then(|s| src.get(s.clone()))
            .map(str::trim)
        && written
            .parse::<toml_edit::Value>()
            .is_ok_and(|v| v.is_float())
    {
        msg = msg.replace(
            &format!("the number {shown}"),
            &format!("the number {written}"),
        );
    }
    error_at(file, src_for_positions, span, key, msg).with_fault(fault)
}

/// `seed = 42 xxx`: toml reads `42 xxx` as one unquoted word and asks for quotes around
/// it, which would make a valid number a string. Said as for `name = "x" y`: the text after
/// the value is unexpected, at that text.
fn value_then_text(
    src: &str,
    span: Option<std::ops::Range<usize>>,
    raw: String,
) -> (Option<std::ops::Range<usize>>, String) {
    let Some(at) = span.as_ref().map(|s| s.start) else {
        return (span, raw);
    };
    if !raw.starts_with("string values must be quoted") {
        return (span, raw);
    }
    let line = src
        .get(at..)
        .and_then(|rest| rest.split(['\n', '\r']).next())
        .unwrap_or("");
    let head = line.split([' ', '\t']).next().unwrap_or("");
    let tail = line[head.len()..].trim_start_matches([' ', '\t']);
    if tail.is_empty() || tail.starts_with('#') || head.parse::<toml_edit::Value>().is_err() {
        return (span, raw);
    }
    let start = at + line.len() - tail.len();
    (
        Some(start..start + 1),
        "unexpected key or value, expected newline, `#`".to_string(),
    )
}

/// The largest char boundary of `s` at or before `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The dotted `path` with the index of each array element the byte `offset` falls in
/// (`strategy.budget` -> `strategy[1].budget`; unchanged when the text cannot be re-read),
/// and the keys written in the table it leads to (none when the text cannot be re-read or
/// the path does not end at a table).
pub(super) fn table_at(src: &str, path: &str, offset: usize) -> (String, Vec<String>) {
    use toml_edit::{Item, TableLike, Value};
    // A value toml_edit refuses too (a float beyond 1.8e308): the text before its line,
    // which holds every array element up to it.
    let before_line = || {
        let end = src[..floor_boundary(src, offset)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        toml_edit::Document::parse(&src[..end])
    };
    let Ok(doc) = toml_edit::Document::parse(src).or_else(|_| before_line()) else {
        return (path.to_string(), Vec::new());
    };
    let mut out: Vec<String> = Vec::new();
    let mut table: Option<&dyn TableLike> = Some(doc.as_table());
    for segment in path.split('.').filter(|s| !s.is_empty()) {
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
    let keys = table.map_or(Vec::new(), |t| {
        t.iter().map(|(k, _)| k.to_string()).collect()
    });
    (out.join("."), keys)
}

/// serde's list of expected keys (`one of `a`, `b``) without the keys a table shares with
/// another type but refuses itself (check explains each: a `[server]` or `[fallback]` has
/// no `name`, a service's `retry` no `fallback_on`), so that the list offers only keys that work there.
pub(super) fn without_keys_refused_in(expected: &str, table: &str) -> String {
    let table = table.strip_prefix(" in ").unwrap_or(table);
    let refused: &[&str] = if table == "server" {
        &["latency", "name", "calls", "retry", "propagate_deadline"]
    } else if table == "fallback" {
        // Its own latency, but no place in the service graph.
        &["name", "calls", "retry", "propagate_deadline"]
    } else if table == "retry" {
        &["name"]
    } else if table.starts_with("service[") && table.ends_with("].retry") {
        &["name", "fallback_on"]
    } else if table == "clients.retry"
        || (table.starts_with("clients[") && table.ends_with("].retry"))
    {
        &["name"]
    } else {
        &[]
    };
    let Some(list) = expected.strip_prefix("one of ") else {
        return expected.to_string();
    };
    let kept: Vec<&str> = list
        .split(", ")
        .filter(|k| !refused.contains(&k.trim_matches('`')))
        .collect();
    format!("one of {}", kept.join(", "))
}

/// The backquoted names in `expected` (`one of `a`, `b``) that `found` (backquoted too) is
/// likely a misspelling of; `written`: as for [`guesses_unwritten`].
fn guessed_names<'a>(found: &str, expected: &'a str, written: &[String]) -> Vec<&'a str> {
    let found = found.trim_matches('`');
    let names = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| !name.is_empty());
    let written: Vec<&str> = written.iter().map(String::as_str).collect();
    guesses_unwritten(found, names, &written)
}

/// Rewords serde's terse messages where a user would otherwise have to guess: every message
/// says what was expected and what was found. `table` is ` in <table>` for key messages,
/// `written` the keys that table has.
fn friendlier(msg: &str, table: &str, written: &[String]) -> (String, Fault) {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let expected = without_keys_refused_in(expected, table);
        let guesses = guessed_names(found, &expected, written);
        let msg = if expected.is_empty() {
            format!("unknown key {found}{table}")
        } else {
            let guess = did_you_mean_keys(&guesses);
            format!("unknown key {found}{table}{guess}, expected {expected}")
        };
        let guesses = guesses.into_iter().map(str::to_string).collect();
        return (msg, Fault::UnknownKey { guesses });
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let fault = Fault::MissingKey {
            key: rest.trim_matches('`').into(),
            or_in_retry: false,
        };
        return (format!("missing required key {rest}{table}"), fault);
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let guess = did_you_mean_keys(&guessed_names(found, expected, &[]));
        return (
            format!("expected {expected}, found {found}{guess}"),
            Fault::Other,
        );
    }
    (reworded_type_error(msg), Fault::Other)
}

/// [`friendlier`] for the other messages: type errors, with serde's type names in words.
fn reworded_type_error(msg: &str) -> String {
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

/// serde's "expected" side in the user's words: no Rust type or enum names.
fn expected_words(expected: &str) -> String {
    match expected {
        "i64" | "u64" | "i32" | "u32" | "u16" | "u8" | "i128" | "u128" | "usize" => {
            "an integer".to_string()
        }
        "f64" | "f32" => "a number".to_string(),
        "a sequence" => "an array".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
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
            Some((n, _)) => format!("the integer {} {TOO_LARGE}", value(n)),
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

/// Removes Rust type names (`i64`, `u32`, ...) that serde puts in messages.
fn strip_type_names(msg: &str) -> String {
    let mut out = msg.to_string();
    for (rust, words) in [
        (" as i128", ""),
        (" as u128", ""),
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
