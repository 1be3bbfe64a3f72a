//! Reading scenario files: TOML text in, [`RawScenario`] out, with positioned errors.
//!
//! This module owns the file format's *syntax*: serde parsing with unknown keys refused, and
//! turning toml's byte spans into `file:line:col` messages. What the values mean is checked
//! by [`crate::model`]. Sweeps (`[sweep]`) are expanded here too, on the TOML document, so
//! that each sweep point is parsed and validated exactly like a hand-written file.

pub mod raw;
pub mod sweep;

pub use raw::RawScenario;

use crate::error::ScenarioError;

/// The scenario that `herdsim run` uses when no file is named; embedded in the binary.
pub const QUICKSTART: &str = include_str!("../../scenarios/quickstart.toml");

/// The display name used for the built-in quickstart in messages.
pub const QUICKSTART_NAME: &str = "scenarios/quickstart.toml";

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
/// semantic problems are collected later by [`crate::model::Scenario::from_raw`].
pub fn parse(file: &str, src: &str) -> Result<RawScenario, ScenarioError> {
    toml::from_str::<RawScenario>(src).map_err(|e| toml_error(file, src, e))
}

/// Turns a toml/serde error into a positioned [`ScenarioError`].
pub(crate) fn toml_error(file: &str, src: &str, e: toml::de::Error) -> ScenarioError {
    // toml keeps the key path private, but prints it ("in `a.b`") when it has no input to
    // quote; that is the only way to recover it for messages like `clients.count: ...`.
    let mut bare = e.clone();
    bare.set_input(None);
    let printed = bare.to_string();
    let key = printed
        .lines()
        .find_map(|l| l.strip_prefix("in `").and_then(|l| l.strip_suffix('`')))
        .unwrap_or("")
        .to_string();
    let msg = e.message().trim().replace('\n', "; ");
    let msg = friendlier(&msg);
    error_at(file, src, e.span(), key, msg)
}

/// Rewords serde's terse messages where a user would otherwise have to guess.
fn friendlier(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        return format!("unknown key {rest}");
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("missing required key {rest}");
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return format!("unknown value {rest}");
    }
    msg.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let src = "a = 1\nbb = 2\n";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 6), (2, 1));
        assert_eq!(line_col(src, 9), (2, 4));
    }

    #[test]
    fn unknown_key_is_reported_with_its_position_and_path() {
        let src = "name = \"x\"\n[clients]\ncount = 5\ncuont = 6\n";
        let err = parse("s.toml", src).unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
        assert!(err.msg.contains("unknown key `cuont`"), "{err}");
        assert!(err.to_string().starts_with("s.toml:4:"), "{err}");
    }
}
