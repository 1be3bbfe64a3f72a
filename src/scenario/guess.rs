//! Guesses at what a misspelt name meant, for messages: `(did you mean `seed`?)` after an
//! unknown key, `(did you mean "full"?)` after an unknown value. Close spellings only (see
//! [`closest`]), all of the equally close ones, so a guess is a likely fix and never a coin
//! toss; and the quoted lists of the words a value may take.

/// The words a string value may take, quoted, for "expected ...": `"a", "b" or "c"` with
/// `last` = `" or "`, `"a", "b", "c"` with `", "`.
pub(in crate::scenario) fn quoted_words(words: &[&str], last: &str) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((end, rest)) => format!("{}{last}{end}", rest.join(", ")),
    }
}

/// ` (did you mean `x`?)` when one of `names` is a likely misspelling of `found`, for
/// names shown in backquotes (keys, distribution kinds), else nothing.
pub(in crate::scenario) fn guess_name<'a>(
    found: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> String {
    did_you_mean_any(&closest(found, names), '`')
}

/// The names [`guess_name`] would offer for a key of a table that has the keys `written`:
/// of names equally close, those not written yet (`mix` beside `max = 2` is `min`). A
/// single guess is kept even when written: it tells the user what the stray key resembles.
pub(in crate::scenario) fn guesses_unwritten<'a>(
    found: &str,
    names: impl IntoIterator<Item = &'a str>,
    written: &[&str],
) -> Vec<&'a str> {
    let mut guesses = closest(found, names);
    if guesses.iter().any(|g| !written.contains(g)) {
        guesses.retain(|g| !written.contains(g));
    }
    guesses
}

/// ` (did you mean `x`?)` naming each key of `guesses`, or nothing when there is none.
pub(in crate::scenario) fn did_you_mean_keys(guesses: &[&str]) -> String {
    did_you_mean_any(guesses, '`')
}

/// ` (did you mean "x"?)` when one of `names` is a likely misspelling of the string value
/// `found`, else nothing.
pub(crate) fn guess_value<'a>(found: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean_any(&closest(found, names), '"')
}

/// ` (did you mean x?)` naming each of `guesses` between `quote`s (`a` or `b`; `a`, `b`
/// or `c`), or nothing when there is none.
fn did_you_mean_any(guesses: &[&str], quote: char) -> String {
    let quoted: Vec<String> = guesses
        .iter()
        .map(|g| format!("{quote}{g}{quote}"))
        .collect();
    match quoted.split_last() {
        None => String::new(),
        Some((only, [])) => format!(" (did you mean {only}?)"),
        Some((last, rest)) => format!(" (did you mean {} or {last}?)", rest.join(", ")),
    }
}

/// The names of `names` closest to `word` in spelling, when close enough to be what was
/// meant, ignoring case: one edit (a letter added, dropped, changed, or two neighbours
/// swapped) for a word of up to five letters, two for a longer one, and never more than
/// half the word's length. (Two edits turn `time` into `name`: a guess that loose would
/// answer a key that is simply unknown.) Names equally close are all given, in list order
/// (`iifo` is one edit from both `fifo` and `lifo`: picking one by its place in the list
/// would be a coin toss the user cannot see). A word of more than 64 characters is no
/// misspelt name.
fn closest<'a>(word: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let written = word;
    let word: Vec<char> = word.to_lowercase().chars().collect();
    if word.len() > 64 {
        return Vec::new();
    }
    let limit = if word.len() >= 6 { 2 } else { 1 }.min(word.len() / 2);
    let scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter(|&name| name != written)
        .map(|name| {
            let name_chars: Vec<char> = name.to_lowercase().chars().collect();
            let d = if plural_pair(&word, &name_chars) {
                1
            } else {
                edits(&word, &name_chars)
            };
            (d, name)
        })
        .filter(|&(d, name)| d <= limit || (d == 2 && swapped_apart(&word, name)))
        .collect();
    let Some(best) = scored.iter().map(|&(d, _)| d).min() else {
        return Vec::new();
    };
    let mut guesses: Vec<&str> = Vec::new();
    for (d, name) in scored {
        if d == best && !guesses.contains(&name) {
            guesses.push(name);
        }
    }
    guesses
}

/// Whether one of `a` and `b` is the English plural of the other (`strategies` and
/// `strategy`, `outage` and `outages`, `class` and `classes`): one slip, however many
/// letters the ending changes (`[[strategies]]` is three edits from `strategy`).
fn plural_pair(a: &[char], b: &[char]) -> bool {
    let plural_of = |plural: &[char], single: &[char]| {
        let (p, s): (String, String) = (plural.iter().collect(), single.iter().collect());
        s.len() >= 3
            && (p == format!("{s}s")
                || p == format!("{s}es")
                || s.strip_suffix('y')
                    .is_some_and(|stem| p == format!("{stem}ies")))
    };
    plural_of(a, b) || plural_of(b, a)
}

/// Whether `name` is `word` (lowercased) with two letters that are not neighbours swapped:
/// `aotu` for `auto`. Two edits apart, more than a four-letter word may be off by, but the
/// same letters in nearly the same order are a slip of the fingers, not another word.
fn swapped_apart(word: &[char], name: &str) -> bool {
    let name: Vec<char> = name.to_lowercase().chars().collect();
    let differ: Vec<usize> = (0..word.len())
        .filter(|&i| name.get(i) != Some(&word[i]))
        .collect();
    word.len() >= 4
        && name.len() == word.len()
        && matches!(differ[..], [i, j] if word[i] == name[j] && word[j] == name[i])
}

/// The optimal string alignment distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbours, each one edit.
fn edits(a: &[char], b: &[char]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}
