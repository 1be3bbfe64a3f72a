//! Making input safe to echo on a terminal: control characters escaped, huge numbers short.
//!
//! Messages quote what the user wrote (file names, keys, values). Written as is, an ANSI
//! escape in a scenario could recolour or rewrite the terminal, a NUL or a carriage return
//! could hide text, and a bidi override could show a key other than the one at fault. So
//! every message goes through [`escape`] before it is printed: such characters appear as
//! `\u{..}` (or `\n`, `\t`, `\r`), everything else unchanged. [`shorten_numbers`] writes a
//! 300-digit number as `1e300`, and [`shorten_quotes`] a 10 000-character value as its ends
//! and its length, so a message stays one readable line.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as is: C0 and C1 controls, DEL, bidi controls
/// (embeddings, overrides, isolates, marks), zero-width and line/paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `text` with every [`is_unsafe`] character written as an escape (`\n`, `\t`, `\r`,
/// `\u{1b}`); borrowed when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Like [`escape`], but keeps line breaks (for multi-line text such as clap's usage errors).
pub fn escape_lines(text: &str) -> String {
    text.split('\n')
        .map(|l| escape(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Longest run of digits (with its point) written as is; longer ones become `1.5e300`.
const LONG_NUMBER: usize = 24;

/// `text` with every number longer than 24 characters (`1000…0`, `0.000…01`, as Rust prints
/// huge and tiny floats) written in exponent form.
pub fn shorten_numbers(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let is_num = |b: u8| b.is_ascii_digit() || b == b'.';
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_num(bytes[i]) {
            i += 1;
        }
        // A trailing point ends a sentence, not the number.
        let end = if bytes[i - 1] == b'.' { i - 1 } else { i };
        let run = &text[start..end];
        if run.len() > LONG_NUMBER
            && let Ok(v) = run.parse::<f64>()
        {
            out.push_str(&text[copied..start]);
            out.push_str(&format!("{v:e}"));
            copied = end;
        }
    }
    if copied == 0 {
        Cow::Borrowed(text)
    } else {
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// Longest quoted value (in characters, between its quotes) a message shows whole.
const LONG_QUOTE: usize = 80;

/// `text` with every double-quoted value longer than 80 characters cut to its first 40 and
/// last 20 around an ellipsis, with its length: `"xxxx…xxxx" (10000 characters)`. A message
/// echoing a pasted blob stays a line or two. An escaped quote (`\"`) does not end a value.
pub fn shorten_quotes(text: &str) -> Cow<'_, str> {
    // A value's quotes stand apart from the words around it: `found "x", ...`. A quote
    // inside a word (`name='b"'` echoed from a flag) neither opens nor closes one.
    let opens = |before: Option<char>| {
        before.is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '=' | ':' | ','))
    };
    let closes = |after: Option<char>| {
        after.is_none_or(|c| c.is_whitespace() || matches!(c, ')' | ']' | ',' | ';' | ':' | '.'))
    };
    let mut out = String::new();
    let mut copied = 0;
    let mut rest = text.char_indices().peekable();
    let mut before = None;
    while let Some((open, c)) = rest.next() {
        let previous = before.replace(c);
        if c != '"' || !opens(previous) {
            continue;
        }
        let mut close = None;
        let mut escaped = false;
        for (i, c) in rest.by_ref() {
            match c {
                '"' if !escaped => {
                    close = Some(i);
                    break;
                }
                '\\' => escaped = !escaped,
                _ => escaped = false,
            }
        }
        let Some(close) = close else { break };
        before = Some('"');
        if !closes(text[close + 1..].chars().next()) {
            continue;
        }
        let inner = &text[open + 1..close];
        let count = inner.chars().count();
        if count > LONG_QUOTE {
            let head: String = inner.chars().take(40).collect();
            let tail: String = inner.chars().skip(count - 20).collect();
            out.push_str(&text[copied..open]);
            out.push_str(&format!("\"{head}…{tail}\" ({count} characters)"));
            copied = close + 1;
        }
    }
    if copied == 0 {
        Cow::Borrowed(text)
    } else {
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// [`shorten_numbers`], [`shorten_quotes`], then [`escape`]: what every message echoing
/// input goes through.
pub fn sanitize(text: &str) -> String {
    escape(&shorten_quotes(&shorten_numbers(text))).into_owned()
}

/// `one` when `count` (a number as shown, or a range such as "1..4") is "1", else `many`:
/// "1 run", "2 runs", "1..4 replications".
pub fn noun<'a>(count: &str, one: &'a str, many: &'a str) -> &'a str {
    if count == "1" { one } else { many }
}

/// `what` with its indefinite article: "a string", "an inline table", "an integer".
pub fn with_article(what: &str) -> String {
    let vowel = what.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {what}", if vowel { "an" } else { "a" })
}

/// `n` and its noun: `counted(1, "run", "runs")` is "1 run".
pub fn counted(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let shown = n.to_string();
    let noun = noun(&shown, one, many);
    format!("{shown} {noun}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_one_take_the_singular() {
        assert_eq!(counted(1, "run", "runs"), "1 run");
        assert_eq!(counted(0, "run", "runs"), "0 runs");
        assert_eq!(counted(2u64, "slot", "slots"), "2 slots");
        assert_eq!(
            counted("1..4", "replication", "replications"),
            "1..4 replications"
        );
        assert_eq!(noun("1", "strategy", "strategies"), "strategy");
    }

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(escape("plain \"text\" é"), "plain \"text\" é");
        assert_eq!(escape("a\u{1b}[31mred"), "a\\u{1b}[31mred");
        assert_eq!(escape("nul\0"), "nul\\u{0}");
        assert_eq!(escape("x\u{202E}y"), "x\\u{202e}y");
        assert_eq!(escape("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape("\u{9b}"), "\\u{9b}");
        assert_eq!(escape_lines("one\u{7}\ntwo"), "one\\u{7}\ntwo");
    }

    #[test]
    fn long_quoted_values_are_cut_with_their_length() {
        let long = format!("found \"{}\", expected \"a\"", "ab".repeat(100));
        assert_eq!(
            shorten_quotes(&long),
            format!(
                "found \"{}…{}\" (200 characters), expected \"a\"",
                "ab".repeat(20),
                "ab".repeat(10)
            )
        );
        let short = "found \"100ms\" and \"2s\"";
        assert_eq!(shorten_quotes(short), short);
        // An escaped quote is part of the value; an unclosed quote is left alone.
        let inner = format!("\"{}\\\"{}\" end", "x".repeat(50), "y".repeat(50));
        assert!(shorten_quotes(&inner).ends_with("\" (102 characters) end"));
        let unclosed = format!("found \"{}", "z".repeat(200));
        assert_eq!(shorten_quotes(&unclosed), unclosed);
        // A quote inside a word is no value's: the flag echoed after the value keeps it.
        let flag = format!(
            "found \"{0}\\\"\" (from --set name='{0}\"')",
            "b".repeat(85)
        );
        assert_eq!(
            shorten_quotes(&flag),
            format!(
                "found \"{}…{}\" (87 characters) (from --set name='{}\"')",
                "b".repeat(40),
                "b".repeat(18) + "\\\"",
                "b".repeat(85)
            )
        );
        // Multi-byte characters are counted and cut as characters.
        let wide = format!("\"{}\"", "é".repeat(90));
        assert_eq!(
            shorten_quotes(&wide),
            format!("\"{}…{}\" (90 characters)", "é".repeat(40), "é".repeat(20))
        );
    }

    #[test]
    fn huge_numbers_become_short() {
        let huge = format!("found {}", 1e300);
        assert_eq!(shorten_numbers(&huge), "found 1e300");
        let tiny = format!("found {}.", 1.5e-30);
        assert_eq!(shorten_numbers(&tiny), "found 1.5e-30.");
        assert_eq!(
            shorten_numbers("found 9223372036854775807 and 1.25"),
            "found 9223372036854775807 and 1.25"
        );
        assert_eq!(shorten_numbers("v1.2.3"), "v1.2.3");
    }
}
