//! toml and serde errors as positioned [`ScenarioError`]s in the user's words: the key path
//! with the index of each array element (`strategy[1].budget`), the line and column, and
//! serde's terse messages reworded so that every one says what was expected and what was
//! found, without Rust type names.

use super::{ScenarioError, error_at, toml_text};

/// What an integer beyond 64 bits is, in "found the integer ... (this)": no key takes one.
pub(crate) const TOO_LARGE: &str = "(above 9223372036854775807, the largest integer TOML holds)";

/// How much of the text where the parser stopped a syntax error quotes.
const QUOTED_CHARS: usize = 40;

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
    let mut key = match &span {
        Some(span) => indexed_path(src, path, span.start),
        None => path.to_string(),
    };
    let raw = e.message().trim().replace('\n', "; ");
    if raw.starts_with("cannot extend value of type ")
        && let Some((span, path, msg)) = span.as_ref().and_then(|s| dotted_over_value(src, s.start))
    {
        return error_at(file, src_for_positions, Some(span), path, msg);
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
        let leaf = text.trim().trim_matches(['"', '\'']);
        let (path, msg) = duplicate_key(src, span.start, leaf);
        return error_at(file, src_for_positions, Some(span.clone()), path, msg);
    }
    let table = match key.rsplit_once('.') {
        Some((table, _)) if named.is_some() => format!(" in {table}"),
        _ => String::new(),
    };
    let mut msg = friendlier(&raw, &table);
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
    error_at(file, src_for_positions, span, key, msg)
}

/// A duplicate key (or table header) `leaf` written at byte `at`: its full path with array
/// indices (`strategy[1].base`), and a message saying where it was first written. toml stops
/// at the duplicate with no path, so the path is rebuilt from the text before its statement.
fn duplicate_key(src: &str, at: usize, leaf: &str) -> (String, String) {
    let join = |a: &str, b: &str| match a {
        "" => b.to_string(),
        a => format!("{a}.{b}"),
    };
    let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = src[line_start..].lines().next().unwrap_or("");
    let before = &src[line_start..at];
    let said = |first: Option<usize>, what: &str| match first {
        Some(offset) => {
            let (l, c) = super::line_col(src, offset);
            format!(
                "duplicate key: expected each {what} once, found `{leaf}` a second time (first at line {l}, column {c})"
            )
        }
        None => format!("duplicate key: expected each {what} once, found `{leaf}` a second time"),
    };
    // A second `[table]` header: the one it repeats is the same line, earlier (the latest,
    // as `[strategy.budget]` may also head the tables of earlier strategies).
    if before.trim_start().starts_with('[') {
        let header = line.split('#').next().unwrap_or("").trim();
        // `["server"]` is `[server]`.
        let name = header
            .trim_matches(['[', ']'])
            .split('.')
            .map(|segment| segment.trim().trim_matches(['"', '\'']))
            .collect::<Vec<_>>()
            .join(".");
        let plain = name;
        let name = indexed_path(&src[..line_start], &plain, line_start);
        let same = src[..line_start]
            .match_indices(header)
            .map(|(i, _)| i)
            .filter(|&i| i == 0 || src.as_bytes()[i - 1] == b'\n')
            .last();
        if same.is_some() {
            return (name, said(same, "table"));
        }
        // Written another way: `[clients]` before `[[clients]]`, `outages = []` before
        // `[[server.outages]]`.
        let earlier = key_written_at(&src[..line_start], &name);
        let array_header = header.starts_with("[[");
        return match earlier {
            Some((at, Some(array))) if array != array_header => {
                let (l, c) = super::line_col(src, at);
                (
                    plain.clone(),
                    format!(
                        "duplicate key: expected one form of `{plain}`, found both [{plain}] and [[{plain}]] (the first at line {l}, column {c})"
                    ),
                )
            }
            _ => (name, said(earlier.map(|(at, _)| at), "table")),
        };
    }
    // The table the statement belongs to: the one whose header comes last before it (an
    // array of inline tables may have begun lines before).
    let statement_start = toml_text::statement_start(src, at);
    let Ok(doc) = toml_edit::Document::parse(&src[..statement_start]) else {
        return (leaf.to_string(), said(None, "key"));
    };
    let (table_path, table) = last_table(&doc);
    // Inside an inline table: `budget = { kind = "a", kind = "b" }`, `outages = [{ .. }]`.
    let statement = &src[statement_start..at];
    if let Some((inner, keys_start)) = toml_text::open_inline_table(statement) {
        let inside = &statement[keys_start..];
        let first = toml_text::top_level_keys(inside)
            .into_iter()
            .find(|&i| {
                let rest = inside[i..].trim_start_matches(['"', '\'']);
                rest.starts_with(leaf)
                    && rest[leaf.len()..]
                        .trim_start_matches(['"', '\''])
                        .trim_start()
                        .starts_with('=')
            })
            .map(|i| statement_start + keys_start + i);
        return (join(&join(&table_path, &inner), leaf), said(first, "key"));
    }
    // A `key = value` line, the key perhaps dotted (`count.a`).
    let segments = dotted_key(line);
    let written = written_keys(table, &segments);
    let first = (written.len() == segments.len())
        .then(|| written.last().and_then(|&(at, _)| at))
        .flatten();
    (join(&table_path, &segments.join(".")), said(first, "key"))
}

/// The segments of the key of a `key = value` line, unquoted: `count.a` is `count`, `a`.
fn dotted_key(line: &str) -> Vec<&str> {
    line.split('=')
        .next()
        .unwrap_or("")
        .trim()
        .split('.')
        .map(|s| s.trim().trim_matches(['"', '\'']))
        .collect()
}

/// Where each segment of a dotted key is already written under `table` (the start of its
/// key, if known), and whether it holds a table, for as many segments as are written: the
/// walk stops at the first one that is not, or that holds a value.
fn written_keys(table: &dyn toml_edit::TableLike, segments: &[&str]) -> Vec<(Option<usize>, bool)> {
    use toml_edit::{Item, Value};
    let mut written = Vec::new();
    let mut here = Some(table);
    for segment in segments {
        let Some((key, item)) = here.and_then(|t| t.get_key_value(segment)) else {
            break;
        };
        here = match item {
            Item::Table(t) => Some(t as &dyn toml_edit::TableLike),
            Item::Value(Value::InlineTable(t)) => Some(t),
            _ => None,
        };
        written.push((key.span().map(|s| s.start), here.is_some()));
    }
    written
}

/// `count.x = 2` after `count = 50`: a dotted key that runs through a key already holding a
/// value, at byte `at` (the start of its line). Said as a duplicate of that key, with its
/// path and where it was first written; `None` when the text does not show it.
fn dotted_over_value(src: &str, at: usize) -> Option<(std::ops::Range<usize>, String, String)> {
    let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = src[line_start..].lines().next()?;
    let doc = toml_edit::Document::parse(&src[..line_start]).ok()?;
    let (table_path, table) = last_table(&doc);
    let segments = dotted_key(line);
    let written = written_keys(table, &segments);
    let (Some(first), false) = *written.last()? else {
        return None;
    };
    let culprit = written.len() - 1;
    if culprit + 1 == segments.len() {
        return None;
    }
    let key_at = line_start + line.len() - line.trim_start().len();
    let (l, c) = super::line_col(src, first);
    let leaf = segments[culprit];
    let path = segments[..=culprit]
        .iter()
        .fold(table_path, |path, segment| match path.as_str() {
            "" => segment.to_string(),
            _ => format!("{path}.{segment}"),
        });
    Some((
        key_at..key_at + 1,
        path,
        format!(
            "duplicate key: expected each key once, found `{leaf}` a second time, as a table in `{}` (first at line {l}, column {c})",
            segments.join(".")
        ),
    ))
}

/// The table whose header comes last in `doc` (the one a following `key = value` belongs
/// to), with its path (array indices included); the root table when there is no header.
fn last_table<'d>(doc: &'d toml_edit::Document<&str>) -> (String, &'d toml_edit::Table) {
    use toml_edit::{Item, Table};
    fn last_header<'d>(t: &'d Table, path: String, best: &mut (usize, String, &'d Table)) {
        let consider = |sub: &'d Table, p: String, best: &mut (usize, String, &'d Table)| {
            if let Some(s) = sub.span()
                && s.start >= best.0
            {
                *best = (s.start, p.clone(), sub);
            }
            last_header(sub, p, best);
        };
        for (k, item) in t.iter() {
            let p = if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            };
            match item {
                // A dotted key's table (`count.a = 1`) has no header of its own.
                Item::Table(sub) if !sub.is_dotted() => consider(sub, p, best),
                Item::ArrayOfTables(a) => {
                    for (i, sub) in a.iter().enumerate() {
                        consider(sub, format!("{p}[{i}]"), best);
                    }
                }
                _ => {}
            }
        }
    }
    let mut best = (0, String::new(), doc.as_table());
    last_header(doc.as_table(), String::new(), &mut best);
    (best.1, best.2)
}

/// Where the last key of `path` (`server.outages`, `strategy[1].budget`) is written in
/// `text`, when `text` parses, and whether it holds an array of tables (`Some(true)`), a
/// table with a header (`Some(false)`) or a value (`None`).
fn key_written_at(text: &str, path: &str) -> Option<(usize, Option<bool>)> {
    use toml_edit::{Item, TableLike, Value};
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut table: &dyn TableLike = doc.as_table();
    let segments: Vec<&str> = path.split('.').collect();
    let (last, parents) = segments.split_last()?;
    for segment in parents {
        let (name, index) = match segment.split_once('[') {
            Some((name, i)) => (name, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (*segment, None),
        };
        table = match (table.get(name)?, index) {
            (Item::Table(t), None) => t,
            (Item::Value(Value::InlineTable(t)), None) => t,
            (Item::ArrayOfTables(a), Some(i)) => a.get(i)?,
            _ => return None,
        };
    }
    let (key, item) = table.get_key_value(last.split('[').next()?)?;
    let kind = match item {
        Item::ArrayOfTables(_) => Some(true),
        Item::Table(_) => Some(false),
        _ => None,
    };
    key.span().map(|s| (s.start, kind))
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

/// The dotted `path` with the index of each array element the byte `offset` falls in:
/// `strategy.budget` -> `strategy[1].budget`. Unchanged when the text cannot be re-read.
pub(super) fn indexed_path(src: &str, path: &str, offset: usize) -> String {
    use toml_edit::{Item, TableLike, Value};
    if path.is_empty() {
        return String::new();
    }
    // A value toml_edit refuses too (a float beyond 1.8e308): the text before its line,
    // which holds every array element up to it.
    let before_line = || {
        let end = src[..floor_boundary(src, offset)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        toml_edit::Document::parse(&src[..end])
    };
    let Ok(doc) = toml_edit::Document::parse(src).or_else(|_| before_line()) else {
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

/// serde's list of expected keys (`one of `a`, `b``) without the keys a table shares with
/// another type but refuses itself (check explains each: a `[server]` has no `name`, a
/// service's `retry` no `fallback_on`), so that the list offers only keys that work there.
pub(super) fn without_keys_refused_in(expected: &str, table: &str) -> String {
    let table = table.strip_prefix(" in ").unwrap_or(table);
    let refused: &[&str] = if table == "server" {
        &["latency", "name", "calls", "retry", "propagate_deadline"]
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

/// Rewords serde's terse messages where a user would otherwise have to guess: every message
/// says what was expected and what was found. `table` is ` in <table>` for key messages.
fn friendlier(msg: &str, table: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let expected = without_keys_refused_in(expected, table);
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
