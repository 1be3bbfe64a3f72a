//! Tagged tables (see [`crate::scenario::raw::tagged`]): the kind a `dist` or `kind` tag
//! names, the keys that kind does not take, and the distributions built from them. Retry
//! budgets, the other tagged table, are built in `budget.rs` with [`Check::kind_of`].

use std::ops::Range;

use toml::Spanned;

use super::{At, Check};
use crate::model::dist::Dist;
use crate::scenario::guess::{did_you_mean_keys, guess_name, guesses_unwritten, quoted_words};
use crate::scenario::raw::{DIST_KINDS, RawDist, RawDuration, Stray, Tag};
use crate::time::SimDuration;

/// `a`, `a` or `b`, or one of `a`, `b`, `c`: the keys or words a message expects.
fn one_of(names: &[&str]) -> String {
    match names {
        [one] => format!("`{one}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        all => format!(
            "one of {}",
            all.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Check<'_> {
    /// The kind a tagged table names out of `kinds` (`dist = "normal"`, `kind = "ratio"`),
    /// with every key that kind does not take reported as unknown, at the key. `None`,
    /// reported, when the tag is missing or names no kind; its keys are then not checked.
    pub(super) fn kind_of(
        &mut self,
        span: At,
        key: &str,
        tag_key: &str,
        tag: &Tag,
        kinds: &[(&'static str, &'static [&'static str])],
    ) -> Option<&'static str> {
        let tag_path = format!("{key}.{tag_key}");
        // In file order: the deserializer hands a table's keys over sorted by name.
        let mut strays: Vec<&Stray> = tag.stray.iter().collect();
        strays.sort_by_key(|stray| stray.value.start);
        let Some(written) = &tag.value else {
            // `dsit = "normal"`: the tag misspelt is one mistake, reported where it is written,
            // not as the tag missing.
            let misspelt = strays
                .iter()
                .find(|stray| !guess_name(&stray.key, [tag_key]).is_empty());
            match misspelt {
                Some(stray) => {
                    let at = self.key_span(&stray.key, stray.value.clone());
                    self.unknown_key(
                        Some(at),
                        &format!("{key}.{}", stray.key),
                        format!(
                            "unknown key `{}` in {key}{}, expected `{tag_key}` naming the kind",
                            stray.key,
                            guess_name(&stray.key, [tag_key])
                        ),
                        &[tag_key],
                    );
                }
                None => self.missing(span, &tag_path),
            }
            return None;
        };
        let name = written.get_ref().as_str();
        let Some(&(kind, keys)) = kinds.iter().find(|(kind, _)| Some(*kind) == name) else {
            let names: Vec<&str> = kinds.iter().map(|(kind, _)| *kind).collect();
            let found = match written.get_ref() {
                toml::Value::String(s) => format!(
                    "`{}`{}",
                    crate::text::escape(s),
                    guess_name(s, names.iter().copied())
                ),
                other => self.found(other, Some(written.span())),
            };
            self.err(
                Some(written.span()),
                &tag_path,
                format!("expected {}, found {found}", one_of(&names)),
            );
            return None;
        };
        for stray in strays {
            let at = self.key_span(&stray.key, stray.value.clone());
            // `median` under `dist = "exponential"` is no misspelt `mean`: it belongs to
            // another kind, which the message names instead of a guess.
            let owners: Vec<&str> = kinds
                .iter()
                .filter(|(_, keys)| keys.contains(&stray.key.as_str()))
                .map(|(kind, _)| *kind)
                .collect();
            let written: Vec<&str> = tag.written.iter().map(String::as_str).collect();
            // A key of another kind is guessed to be none of this kind's.
            let guesses = if owners.is_empty() {
                guesses_unwritten(&stray.key, keys.iter().copied(), &written)
            } else {
                Vec::new()
            };
            let guess = if owners.is_empty() {
                did_you_mean_keys(&guesses)
            } else {
                format!(" (a key of {tag_key} = {})", quoted_words(&owners, " or "))
            };
            self.unknown_key(
                Some(at),
                &format!("{key}.{}", stray.key),
                format!(
                    "unknown key `{}` in {key}{guess}, expected {}",
                    stray.key,
                    one_of(keys)
                ),
                &guesses,
            );
        }
        Some(kind)
    }

    /// Where `key` is written, found from where its value starts (`key = value`); the
    /// value's own span when the text before it is not that key (a dotted key).
    pub(super) fn key_span(&self, key: &str, value: Range<usize>) -> Range<usize> {
        let before = self.src.get(..value.start).unwrap_or("").trim_end();
        if let Some(before) = before.strip_suffix('=').map(str::trim_end) {
            for written in [format!("\"{key}\""), format!("'{key}'"), key.to_string()] {
                // An empty key is only ever quoted: `""`, not the empty text before `=`.
                if !written.is_empty() && before.ends_with(&written) {
                    return before.len() - written.len()..before.len();
                }
            }
        }
        value
    }

    /// A TOML value in "found ..." words: `the integer 3`, `the number 1e3` (as written).
    fn found(&self, v: &toml::Value, span: At) -> String {
        let written = span.and_then(|s| self.src.get(s)).map(str::trim);
        match v {
            toml::Value::String(s) => format!("a string \"{}\"", crate::text::escape(s)),
            toml::Value::Integer(i) => format!("the integer {i}"),
            toml::Value::Float(f) => format!("the number {}", written.unwrap_or(&f.to_string())),
            toml::Value::Boolean(b) => format!("the boolean {b}"),
            toml::Value::Datetime(d) => format!("the date-time {d}"),
            toml::Value::Array(_) => "an array".to_string(),
            toml::Value::Table(_) => "a table".to_string(),
        }
    }

    pub(super) fn dist(&mut self, v: &Spanned<RawDist>, key: &str) -> Dist {
        let span = Some(v.span());
        let raw = v.get_ref();
        let Some(kind) = self.kind_of(span.clone(), key, "dist", &raw.tag, DIST_KINDS) else {
            return Dist::Constant(SimDuration::ZERO);
        };
        // Every duration a distribution takes is required; a missing one is reported at the
        // table, a wrong one at its value.
        let valid =
            |c: &mut Self, x: &Option<Spanned<RawDuration>>, field: &str, positive: bool| {
                let path = format!("{key}.{field}");
                match x {
                    Some(x) => c.duration(x, &path, positive),
                    None => {
                        c.missing(span.clone(), &path);
                        None
                    }
                }
            };
        let d = |c: &mut Self, x: &Option<Spanned<RawDuration>>, field: &str, positive: bool| {
            valid(c, x, field, positive).unwrap_or(SimDuration::ZERO)
        };
        match kind {
            "constant" => Dist::Constant(d(self, &raw.value, "value", false)),
            "uniform" => {
                let (lo, hi) = (
                    valid(self, &raw.min, "min", false),
                    valid(self, &raw.max, "max", false),
                );
                // Compared only when both are durations (a wrong one is reported alone).
                let (lo, hi) = (
                    lo.unwrap_or(SimDuration::ZERO),
                    hi.unwrap_or(lo.unwrap_or(SimDuration::ZERO)),
                );
                if hi < lo {
                    self.err(
                        raw.max.as_ref().map(Spanned::span),
                        &format!("{key}.max"),
                        format!("expected max >= min ({lo}), found {hi}"),
                    );
                }
                Dist::Uniform {
                    min: lo,
                    max: hi.max(lo),
                }
            }
            "normal" => Dist::Normal {
                mean: d(self, &raw.mean, "mean", false),
                sd: d(self, &raw.sd, "sd", false),
            },
            "exponential" => Dist::Exponential {
                mean: d(self, &raw.mean, "mean", true),
            },
            _ => {
                let median = d(self, &raw.median, "median", true).max(SimDuration(1));
                let sigma = match &raw.sigma {
                    // Beyond 1000 every draw saturates: refused, not clamped unsaid.
                    Some(sigma) => self
                        .float(
                            sigma,
                            &format!("{key}.sigma"),
                            |x| (0.0..=1e3).contains(&x),
                            "a number from 0 to 1000",
                        )
                        .unwrap_or(0.0),
                    None => {
                        self.missing(span.clone(), &format!("{key}.sigma"));
                        0.0
                    }
                };
                Dist::LogNormal { median, sigma }
            }
        }
    }
}
