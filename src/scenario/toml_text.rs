//! TOML text read by hand, for positions the parsers do not give: where a pair ends, where
//! a statement begins, which inline table is open where a key was written twice, where a
//! bracket left open was opened. Used by error reporting only (`toml_errors`, `toml_keys`,
//! and the blanking of a refused pair in the parent module), never for values: those come
//! from `toml` and `toml_edit`.

/// Where the `key = value` pair going on at byte `from` ends: at the next `,`, `}` or line
/// end outside brackets, strings and comments.
pub(super) fn pair_end(text: &str, from: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in code(&text[from..]).map_while(|item| item) {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' if depth > 0 => depth -= 1,
            ',' | '}' | '\n' if depth == 0 => return from + i,
            _ => {}
        }
    }
    text.len()
}

/// The characters of `text` outside strings and comments, with their byte offsets (a
/// comment runs to its line's end; strings may be triple-quoted and span lines); a string
/// shows as its opening quote alone. The last item is `None` when a string is left
/// unclosed: callers give up there, as the parser's own message says so.
pub(super) fn code(text: &str) -> impl Iterator<Item = Option<(usize, char)>> + '_ {
    let mut chars = text.char_indices().peekable();
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        while let Some((i, c)) = chars.next() {
            match c {
                '#' => {
                    // A comment runs to the end of its line.
                    while chars.next_if(|&(_, c)| c != '\n').is_some() {}
                }
                '"' | '\'' => {
                    let Some(after) = string_end(text, i, c) else {
                        done = true;
                        return Some(None);
                    };
                    while chars.next_if(|&(k, _)| k < after).is_some() {}
                    return Some(Some((i, c)));
                }
                _ => return Some(Some((i, c))),
            }
        }
        None
    })
}

/// Where the string opened by quote `c` at byte `i` of `text` ends (just past its closing
/// quote); `None` when it is not closed, or a one-line string runs past its line's end.
fn string_end(text: &str, i: usize, c: char) -> Option<usize> {
    let triple = text[i..].starts_with(if c == '"' { "\"\"\"" } else { "\'\'\'" });
    let close: &str = match (c, triple) {
        ('"', true) => "\"\"\"",
        ('"', false) => "\"",
        (_, true) => "\'\'\'",
        _ => "\'",
    };
    let from = i + close.len();
    let mut j = from;
    // The closing quote: not escaped in a basic string (an odd number of backslashes before
    // it; `\\` is an escaped backslash).
    let after = loop {
        let at = j + text[j..].find(close)?;
        let backslashes = text[from..at].len() - text[from..at].trim_end_matches('\\').len();
        let escaped = c == '"' && backslashes % 2 == 1;
        if escaped {
            j = at + 1;
        } else {
            break at + close.len();
        }
    };
    (triple || !text[i..after].contains('\n')).then_some(after)
}

/// The `{` and `[` still open at byte `end` of `src`, outermost first, with where each was
/// opened (strings and comments skipped); `None` when a string before `end` is unclosed.
fn open_brackets(src: &str, end: usize) -> Option<Vec<(char, usize)>> {
    let mut open: Vec<(char, usize)> = Vec::new();
    for item in code(src.get(..end)?) {
        match item? {
            (i, c @ ('{' | '[')) => open.push((c, i)),
            (_, '}' | ']') => {
                open.pop();
            }
            _ => {}
        }
    }
    Some(open)
}

/// The innermost `{` or `[` still open at byte `end` of `src`, opened on an earlier line:
/// the bracket and where. Strings and comments are skipped; `None` when every bracket
/// before `end` is closed, or the open one is on `end`'s own line (the parser's message
/// then points close enough).
pub(super) fn unclosed_bracket(src: &str, end: usize) -> Option<(char, usize)> {
    let (bracket, at) = *open_brackets(src, end)?.last()?;
    src[at..end].contains('\n').then_some((bracket, at))
}

/// Where the statement going on at byte `end` of `src` begins: the start of the line of
/// its outermost bracket still open (an array may span lines), else of `end`'s own line.
pub(super) fn statement_start(src: &str, end: usize) -> usize {
    let from = open_brackets(src, end)
        .and_then(|open| open.first().map(|&(_, at)| at))
        .unwrap_or(end);
    src[..from].rfind('\n').map_or(0, |i| i + 1)
}

/// A step of the path down into a value: a key as written (perhaps dotted, perhaps quoted),
/// or an array's item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Segment<'s> {
    Key(&'s str),
    Index(usize),
}

/// The place inside a value still open at the end of `statement` (the text of a `key =
/// value` pair so far): the path from the pair's key down to the innermost open inline
/// table (`outages`, `[1]` for `outages = [{ ... }, { start = "2s", `; indices count the
/// items before), and where that table's first key starts. `None` when no inline table is
/// open, or the innermost open bracket is an array's.
pub(super) fn open_inline_table(statement: &str) -> Option<(Vec<Segment<'_>>, usize)> {
    // Each open bracket: `{` or `[`, its place in the path, for an array the items seen,
    // and where its content starts.
    let mut open: Vec<(char, Segment, usize, usize)> = Vec::new();
    let mut start = 0;
    for item in code(statement) {
        let (i, c) = item?;
        match c {
            '{' | '[' => {
                let segment = match open.last() {
                    Some(('[', _, items, _)) => Segment::Index(*items),
                    // The key before the `=`, on the bracket's line (a TOML 1.1 inline
                    // table may hold comments and line breaks before it; the file may
                    // begin with a byte-order mark).
                    _ => Segment::Key(
                        statement[start..i]
                            .trim_end()
                            .strip_suffix('=')
                            .unwrap_or("")
                            .rsplit('\n')
                            .next()
                            .unwrap_or("")
                            .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}'),
                    ),
                };
                open.push((c, segment, 0, i + 1));
                start = i + 1;
            }
            '}' | ']' => {
                open.pop();
                start = i + 1;
            }
            ',' => {
                if let Some(('[', _, items, _)) = open.last_mut() {
                    *items += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    let &('{', _, _, keys) = open.last()? else {
        return None;
    };
    Some((
        open.iter().map(|&(_, segment, _, _)| segment).collect(),
        keys,
    ))
}

/// Where the keys of an inline table's own pairs start in `inside` (the text after its
/// `{`): the first text after it and after each comma outside nested tables, arrays,
/// strings and comments (a TOML 1.1 inline table may span lines and hold comments).
pub(super) fn top_level_keys(inside: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut depth = 0i32;
    let mut key_next = true;
    for (i, c) in code(inside).map_while(|item| item) {
        if key_next && !c.is_whitespace() {
            starts.push(i);
            key_next = false;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => key_next = true,
            _ => {}
        }
    }
    starts
}
