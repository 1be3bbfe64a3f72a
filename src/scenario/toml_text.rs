//! TOML text read by hand, for positions the parsers do not give: where a pair ends, which
//! inline tables are open on a line, where a bracket left open was opened. Used by error
//! reporting only (`toml_errors`, and the blanking of a refused pair in the parent module),
//! never for values: those come from `toml` and `toml_edit`.

/// The characters of `text` outside one-line quoted strings (the quotes themselves left
/// out), with their byte offsets: what the scanners below look at for brackets and commas.
/// A quote after a backslash does not close its string.
fn outside_strings(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut quote = None;
    let mut prev = ' ';
    text.char_indices().filter(move |&(_, c)| {
        let outside = match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => {
                quote = None;
                false
            }
            (Some(_), _) => false,
            (None, '"' | '\'') => {
                quote = Some(c);
                false
            }
            _ => true,
        };
        prev = c;
        outside
    })
}

/// Where the `key = value` pair going on at byte `from` ends: at the next `,`, `}` or line
/// end outside brackets and strings.
pub(super) fn pair_end(text: &str, from: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in outside_strings(&text[from..]) {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' if depth > 0 => depth -= 1,
            ',' | '}' | '\n' if depth == 0 => return from + i,
            _ => {}
        }
    }
    text.len()
}

/// The innermost `{` or `[` still open at byte `end` of `src`, opened on an earlier line:
/// the bracket and where. Strings and comments are skipped; `None` when every bracket
/// before `end` is closed, or the open one is on `end`'s own line (the parser's message
/// then points close enough).
pub(super) fn unclosed_bracket(src: &str, end: usize) -> Option<(char, usize)> {
    let text = src.get(..end)?;
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '#' => {
                // A comment runs to the end of its line.
                while chars.next_if(|&(_, c)| c != '\n').is_some() {}
            }
            '"' | '\'' => {
                let triple = text[i..].starts_with(if c == '"' { "\"\"\"" } else { "\'\'\'" });
                let close: &str = match (c, triple) {
                    ('"', true) => "\"\"\"",
                    ('"', false) => "\"",
                    (_, true) => "\'\'\'",
                    _ => "\'",
                };
                let from = i + close.len();
                let mut j = from;
                // The closing quote: not escaped in a basic string, and not past the line
                // end in a one-line string.
                let end_at = loop {
                    match text[j..].find(close) {
                        None => break None,
                        Some(k) => {
                            let at = j + k;
                            let escaped = c == '"'
                                && text[from..at].ends_with('\\')
                                && !text[from..at].ends_with("\\\\");
                            if escaped {
                                j = at + 1;
                            } else {
                                break Some(at + close.len());
                            }
                        }
                    }
                };
                // An unclosed string: the parser's own message says so.
                let after = end_at?;
                if !triple && text[i..after].contains('\n') {
                    return None;
                }
                while chars.next_if(|&(k, _)| k < after).is_some() {}
            }
            '{' | '[' => open.push((c, i)),
            '}' | ']' => {
                open.pop();
            }
            _ => {}
        }
    }
    let (bracket, at) = *open.last()?;
    text[at..].contains('\n').then_some((bracket, at))
}

/// The inline tables still open at the end of `text` (one line), outermost first: the key
/// each is the value of (empty inside an array), and where its first key starts.
pub(super) fn open_inline_tables(text: &str) -> Vec<(String, usize)> {
    let mut open = Vec::new();
    for (i, c) in outside_strings(text) {
        match c {
            '{' => {
                let parent = text[..i]
                    .trim_end()
                    .strip_suffix('=')
                    .map(|t| {
                        t.trim_end()
                            .rsplit([' ', '{', ',', '\t'])
                            .next()
                            .unwrap_or("")
                    })
                    .unwrap_or("")
                    .trim_matches(['"', '\'']);
                open.push((parent.to_string(), i + 1));
            }
            '}' => {
                open.pop();
            }
            _ => {}
        }
    }
    open
}

/// Where the keys of an inline table's own pairs start in `inside` (the text after its
/// `{`): at its start and after each comma outside nested tables, arrays and strings.
pub(super) fn top_level_keys(inside: &str) -> Vec<usize> {
    let mut starts = vec![inside.len() - inside.trim_start().len()];
    let mut depth = 0i32;
    for (i, c) in outside_strings(inside) {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                let rest = &inside[i + 1..];
                starts.push(i + 1 + rest.len() - rest.trim_start().len());
            }
            _ => {}
        }
    }
    starts
}
