//! Keys written twice, named in the user's words: toml stops at a duplicate key (`seed`
//! twice, `[server]` twice) or at a dotted key that runs through a key holding a value
//! (`count.x = 2` after `count = 50`) with neither the key's path nor where it was first
//! written. Both are rebuilt here: the text before the statement is parsed again (with
//! `toml_edit`, which keeps positions), and the key is walked down from the table the
//! statement belongs to, array indices included (`strategy[1].budget`,
//! `server.outages[1].start`).

use toml_edit::{Item, Key, TableLike, Value};

use super::toml_text::{self, Segment};

/// What toml stopped at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Twice {
    /// "duplicate key": the key at the position was written before.
    Duplicate,
    /// "cannot extend value of type ...": the key at the position holds a value, and a
    /// dotted key or a header goes through it.
    Through,
}

/// The key path and message for what toml reported at byte `at` of `src` (the key segment
/// at fault); `None` when the text does not show it (the caller keeps toml's words).
pub(super) fn written_twice(src: &str, at: usize, twice: Twice) -> Option<(String, String)> {
    let place = Place::of(src, at)?;
    let segments = place.segments(src);
    // The segment at `at`: the dots before it in the key, outside quotes.
    let index = toml_text::code(src.get(place.key.start..at).unwrap_or(""))
        .map_while(|item| item)
        .filter(|&(_, c)| c == '.')
        .count()
        .min(segments.len().checked_sub(1)?);
    let (context, shift) = place.context(src)?;
    let steps = walk(context.table(), &segments[..=index], place.header.is_some());
    // The path: the table's, then each segment (as the walk showed it, with the index of an
    // array of tables a header goes into).
    let mut path = place.base.clone();
    for (i, segment) in segments[..=index].iter().enumerate() {
        if !path.is_empty() {
            path.push('.');
        }
        match steps.get(i) {
            Some(step) => path.push_str(&step.shown),
            None => path.push_str(&display(segment)),
        }
    }
    let leaf = display(&segments[index]);
    let step = steps.get(index).filter(|_| steps.len() == index + 1);
    let first = step
        .and_then(|s| s.at)
        .map(|offset| {
            let (line, col) = super::line_col(src, (offset + shift.0).saturating_sub(shift.1));
            format!(" (first at line {line}, column {col})")
        })
        .unwrap_or_default();
    let written = &src[place.key.clone()];
    match (twice, &place.header, step) {
        // `[clients]` and `[[clients]]`, either first.
        (Twice::Duplicate, Some(array), Some(step))
            if step.header_kind.is_some_and(|kind| kind != *array) =>
        {
            let plain: Vec<String> = segments[..=index].iter().map(display).collect();
            let plain = plain.join(".");
            let first = first.replace(" (first at", " (the first at");
            Some((
                plain.clone(),
                format!(
                    "duplicate key: expected one form of `{plain}`, found both [{plain}] and [[{plain}]]{first}"
                ),
            ))
        }
        (Twice::Duplicate, header, _) => {
            let what = if header.is_some() { "table" } else { "key" };
            Some((
                path,
                format!(
                    "duplicate key: expected each {what} once, found `{leaf}` a second time{first}"
                ),
            ))
        }
        (Twice::Through, header, Some(step)) if !step.table || step.inline => {
            let written = match header {
                Some(true) => format!("[[{written}]]"),
                Some(false) => format!("[{written}]"),
                None => written.to_string(),
            };
            let msg = if step.inline {
                let first = first.replace(" (first at", "; first at");
                format!(
                    "duplicate key: expected each key once, found `{leaf}` a second time in `{written}` (an inline table cannot be extended{}",
                    if first.is_empty() {
                        ")".to_string()
                    } else {
                        first
                    }
                )
            } else {
                format!(
                    "duplicate key: expected each key once, found `{leaf}` a second time, as a table in `{written}`{first}"
                )
            };
            Some((path, msg))
        }
        (Twice::Through, _, _) => None,
    }
}

/// Where the key at fault is written: a `[table]` header, a pair of a table, or a pair of
/// an inline table (perhaps inside arrays, perhaps spanning lines).
struct Place {
    /// The key's text (a header's name, a pair's key before its `=`), trimmed.
    key: std::ops::Range<usize>,
    /// For a header, whether it heads an array of tables (`[[x]]`).
    header: Option<bool>,
    /// The path of the table the key is written in (empty for a header: its name is
    /// absolute), array indices included.
    base: String,
    /// Where the text the key's table was written in starts: `src[..statement]` for a
    /// header or a table's pair; for an inline table, its own earlier pairs.
    statement: usize,
    /// For an inline table, where its pairs start, and the start of the pair at fault.
    inline: Option<(usize, usize)>,
}

impl Place {
    fn of(src: &str, at: usize) -> Option<Place> {
        // A byte-order mark is not part of the first line's text.
        let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
        let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1).max(bom);
        let statement = toml_text::statement_start(src, at).max(bom);
        // The key written from `from` to `end` (or the line's end), trimmed.
        let key_after = |from: usize, end: char| -> std::ops::Range<usize> {
            let text = &src[from..];
            let stop = toml_text::code(text)
                .map_while(|item| item)
                .find(|&(_, c)| c == end || c == '\n')
                .map_or(text.len(), |(i, _)| i);
            let key = &text[..stop];
            let start = from + key.len() - key.trim_start().len();
            start..start + key.trim().len()
        };
        // A header: its line starts with `[`, and no bracket of an earlier line is open (a
        // line of a multi-line array may start with `[` too).
        let line = &src[line_start..];
        if statement == line_start && line.trim_start().starts_with('[') {
            let open = line_start + line.len() - line.trim_start().len();
            let array = src[open..].starts_with("[[");
            let name_from = open + if array { 2 } else { 1 };
            return Some(Place {
                key: key_after(name_from, ']'),
                header: Some(array),
                base: String::new(),
                statement: line_start,
                inline: None,
            });
        }
        let doc = toml_edit::Document::parse(&src[..statement]).ok()?;
        let (table_path, _) = last_table(&doc);
        let text = &src[statement..at];
        if let Some((inner, keys)) = toml_text::open_inline_table(text) {
            let keys = statement + keys;
            // The last pair starting at or before `at` (its key is where toml stopped).
            let pair = keys
                + toml_text::top_level_keys(&src[keys..])
                    .into_iter()
                    .take_while(|&i| keys + i <= at)
                    .last()?;
            return Some(Place {
                key: key_after(pair, '='),
                header: None,
                base: inner.iter().fold(table_path, |mut path, segment| {
                    match segment {
                        Segment::Index(i) => path.push_str(&format!("[{i}]")),
                        Segment::Key(written) => {
                            for key in segments_of(written) {
                                if !path.is_empty() {
                                    path.push('.');
                                }
                                path.push_str(&display(&key));
                            }
                        }
                    }
                    path
                }),
                statement,
                inline: Some((keys, pair)),
            });
        }
        Some(Place {
            key: key_after(statement, '='),
            header: None,
            base: table_path,
            statement,
            inline: None,
        })
    }

    /// The key's segments.
    fn segments(&self, src: &str) -> Vec<Key> {
        segments_of(&src[self.key.clone()])
    }

    /// The document the key's table is read from, and how its offsets map to `src`'s
    /// (`offset + .0 - .1`): the text before the statement (offsets equal), or for an
    /// inline table its earlier pairs written as one `x = { ... }` of its own.
    fn context(&self, src: &str) -> Option<(Context, (usize, usize))> {
        match self.inline {
            None => {
                let doc = toml_edit::Document::parse(src[..self.statement].to_string()).ok()?;
                Some((Context::Document(doc, self.header.is_some()), (0, 0)))
            }
            Some((keys, pair)) => {
                const OPEN: &str = "x = {";
                // The pairs before the one at fault, without the comma after the last (a
                // blank in its place keeps the offsets).
                let mut pairs = src[keys..pair].to_string();
                if let Some((comma, ',')) = toml_text::code(&pairs).map_while(|item| item).last() {
                    pairs.replace_range(comma..=comma, " ");
                }
                let text = format!("{OPEN}{pairs}\n}}");
                let doc = toml_edit::Document::parse(text).ok()?;
                Some((Context::Inline(doc), (keys, OPEN.len())))
            }
        }
    }
}

/// A parsed document and the table a key is looked up in.
enum Context {
    /// The text before a statement: for a header, its root; else its last table.
    Document(toml_edit::Document<String>, bool),
    /// An inline table's earlier pairs, as the value of `x`.
    Inline(toml_edit::Document<String>),
}

impl Context {
    fn table(&self) -> &dyn TableLike {
        match self {
            Context::Document(doc, true) => doc.as_table(),
            Context::Document(doc, false) => last_table(doc).1,
            Context::Inline(doc) => match doc.get("x") {
                Some(Item::Value(Value::InlineTable(t))) => t,
                _ => doc.as_table(),
            },
        }
    }
}

/// One segment of a key found already written.
struct Step {
    /// Where its key is written (an offset in the context's text).
    at: Option<usize>,
    /// Whether it holds a table (a header's, a dotted key's or an inline one).
    table: bool,
    /// Whether that table is an inline one.
    inline: bool,
    /// What a header may have written it as: an array of tables (`Some(true)`), a table
    /// (`Some(false)`); `None` for a value or a table of dotted keys.
    header_kind: Option<bool>,
    /// The segment as shown in a path: with the index of the last table of an array of
    /// tables, which a header extends (`strategy[2]`).
    shown: String,
}

/// The segments of `segments` already written under `table`, in order, up to the first
/// one that is not written or holds no table. A header's path goes into the last table of
/// an array of tables (`[strategy.budget]`); a key's does not.
fn walk(table: &dyn TableLike, segments: &[Key], header: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut here = Some(table);
    for segment in segments {
        let Some((key, item)) = here.and_then(|t| t.get_key_value(segment.get())) else {
            break;
        };
        let mut shown = display(segment);
        let (next, inline): (Option<&dyn TableLike>, bool) = match item {
            Item::Table(t) => (Some(t), false),
            Item::Value(Value::InlineTable(t)) => (Some(t), true),
            Item::ArrayOfTables(a) if header && !a.is_empty() => {
                shown = format!("{shown}[{}]", a.len() - 1);
                (a.get(a.len() - 1).map(|t| t as &dyn TableLike), false)
            }
            _ => (None, false),
        };
        steps.push(Step {
            at: key.span().map(|s| s.start),
            table: next.is_some(),
            inline,
            header_kind: match item {
                Item::ArrayOfTables(_) => Some(true),
                Item::Table(t) if !t.is_dotted() => Some(false),
                _ => None,
            },
            shown,
        });
        here = next;
    }
    steps
}

/// The segments of a key as written (`count.a` is `count`, `a`; quotes and escapes read as
/// TOML reads them), or its text split at dots when it does not read as a key.
fn segments_of(written: &str) -> Vec<Key> {
    Key::parse(written).unwrap_or_else(|_| {
        written
            .split('.')
            .map(|s| Key::new(s.trim().trim_matches(['"', '\''])))
            .collect()
    })
}

/// A key segment as a path shows it: bare when it can be (`server`), else quoted
/// (`"a.b"`, `""`).
fn display(key: &Key) -> String {
    Key::new(key.get()).display_repr().into_owned()
}

/// The table whose header comes last in `doc` (the one a following `key = value` belongs
/// to), with its path (array indices included); the root table when there is no header.
pub(super) fn last_table<S>(doc: &toml_edit::Document<S>) -> (String, &toml_edit::Table) {
    use toml_edit::Table;
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
