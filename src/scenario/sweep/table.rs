//! The `[sweep]` table itself: reading its axes (paths, values and the labels outputs show),
//! where it is written (for messages, and to leave it out of every point's text), and the
//! count of points and runs refused before any point is built.

use std::ops::Range;

use toml_edit::{Document, Item, Value};

use super::SweepAxis;
use crate::error::{ScenarioError, ScenarioErrors};
use crate::limits;
use crate::model::Scenario;
use crate::scenario::error_at;

/// Where `[sweep]` is written, for messages about the sweep as a whole.
pub(super) fn parsed_sweep_span(src: &str) -> Option<Range<usize>> {
    Document::parse(src)
        .ok()
        .and_then(|d| sweep_region(src, &d))
}

pub(super) fn too_many_runs(
    file: &str,
    src: &str,
    span: &Option<Range<usize>>,
    runs: u64,
) -> ScenarioError {
    error_at(
        file,
        src,
        span.clone(),
        "sweep",
        format!(
            "expected at most {} runs (sweep points x strategies x replications), found {runs}: sweep fewer values or lower replications",
            limits::MAX_RUNS
        ),
    )
}

/// Refuses a sweep with more points than [`limits::MAX_SWEEP_POINTS`], or more runs than
/// [`limits::MAX_RUNS`] at the file's own strategies and replications, from the list
/// lengths alone: before a single point is built.
pub(super) fn check_size(
    file: &str,
    src: &str,
    parsed: &Document<&str>,
    axes: &[SweepAxis],
    base: &Scenario,
) -> Result<(), ScenarioErrors> {
    let span = sweep_region(src, parsed);
    let lengths: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
    let points = axes
        .iter()
        .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    match points {
        Some(p) if p <= limits::MAX_SWEEP_POINTS => {
            let runs = p
                .saturating_mul(base.strategies.len() as u64)
                .saturating_mul(base.replications as u64);
            if runs > limits::MAX_RUNS {
                return Err(ScenarioErrors(vec![too_many_runs(file, src, &span, runs)]));
            }
            Ok(())
        }
        _ => Err(ScenarioErrors(vec![error_at(
            file,
            src,
            span,
            "sweep",
            format!(
                "expected at most {} sweep points, found {} ({} values)",
                limits::MAX_SWEEP_POINTS,
                points.map_or_else(|| "more than 2^64".to_string(), |p| p.to_string()),
                lengths.join(" x ")
            ),
        )])),
    }
}

/// The bytes of the `[sweep]` table (header to last value) or the `sweep = { .. }` pair.
fn sweep_region(src: &str, doc: &Document<&str>) -> Option<Range<usize>> {
    let (key, item) = doc.as_table().get_key_value("sweep")?;
    let mut start = usize::MAX;
    let mut end = 0;
    let mut cover = |r: Option<Range<usize>>| {
        if let Some(r) = r {
            start = start.min(r.start);
            end = end.max(r.end);
        }
    };
    match item {
        Item::Table(t) => {
            cover(t.span());
            for (k, v) in t.iter() {
                cover(t.key(k).and_then(|k| k.span()));
                cover(v.span());
            }
        }
        other => {
            cover(key.span());
            cover(other.span());
        }
    }
    (start < end && end <= src.len()).then_some(start..end)
}

/// `src` with the `[sweep]` table reduced to its line breaks: every other key keeps its
/// line and column, and a point's text no longer carries every swept list.
pub(super) fn without_sweep(src: &str, doc: &Document<&str>) -> String {
    match sweep_region(src, doc) {
        None => src.to_string(),
        Some(r) => {
            let breaks: String = src[r.clone()].chars().filter(|c| *c == '\n').collect();
            format!("{}{breaks}{}", &src[..r.start], &src[r.end..])
        }
    }
}

/// The dotted path, below `table`, of its first list: `count` for the table an unquoted
/// `clients.count = [..]` makes.
fn first_list(table: &dyn toml_edit::TableLike) -> Option<String> {
    table.iter().find_map(|(k, v)| {
        if v.is_array() {
            Some(k.to_string())
        } else {
            v.as_table_like()
                .and_then(first_list)
                .map(|rest| format!("{k}.{rest}"))
        }
    })
}

pub(super) fn read_axes(
    file: &str,
    src: &str,
    doc: &Document<&str>,
) -> Result<Vec<SweepAxis>, ScenarioErrors> {
    let mut errors = Vec::new();
    let mut axes = Vec::new();
    let table = doc
        .as_table()
        .get("sweep")
        .and_then(|s| s.as_table_like())
        .ok_or_else(|| {
            ScenarioErrors(vec![error_at(
                file,
                src,
                None,
                "sweep",
                "expected a table of `\"path\" = [values]`",
            )])
        })?;
    for (path, item) in table.iter() {
        let span = item.span();
        let key = format!("sweep.\"{path}\"");
        // Two spellings of one value (`server.outages.0.end` and `server.outages.00.end`)
        // would sweep it twice over, the later key silently winning at every point.
        let canonical = crate::scenario::settings::canonical_path(path);
        if let Some(earlier) = axes
            .iter()
            .find(|a: &&SweepAxis| crate::scenario::settings::canonical_path(&a.path) == canonical)
        {
            errors.push(error_at(
                file,
                src,
                span,
                key,
                format!(
                    "expected each value swept by one key, found `{path}` naming the same value as `{}`",
                    earlier.path
                ),
            ));
            continue;
        }
        if canonical == "name" {
            // Every point writes into the folder named by `name`: one folder per point would
            // split a sweep's outputs, and one for all cannot be named by a swept value.
            errors.push(error_at(
                file,
                src,
                span,
                key,
                "expected a key other than `name`: a sweep's points share one output folder, named by `name` (sweep the values that change, and name the file once)",
            ));
            continue;
        }
        let Some(array) = item.as_array() else {
            // `clients.count = [..]` unquoted is TOML for a table `clients` holding `count`:
            // say how to write the path as one key.
            let hint = match item.as_table_like().and_then(first_list) {
                Some(rest) => format!(
                    " (a dotted path is one key only when quoted: \"{path}.{rest}\" = [...])"
                ),
                None => String::new(),
            };
            errors.push(error_at(
                file,
                src,
                span,
                key,
                format!(
                    "expected a list of values, found {}{hint}",
                    crate::text::with_article(item.type_name())
                ),
            ));
            continue;
        };
        if array.is_empty() {
            errors.push(error_at(
                file,
                src,
                span,
                key,
                "expected a non-empty list of values, found []",
            ));
            continue;
        }
        let mut values = Vec::new();
        let mut labels = Vec::new();
        let mut spans = Vec::new();
        // 1-based position in the list of each value kept, for messages.
        let mut positions = Vec::new();
        for (n, v) in array.iter().enumerate() {
            // Numbers are labelled as written (`2.50`, `1e0`, `1_000`), so that two values
            // written apart stay apart in every output; strings by their content.
            let as_written = |fallback: String| {
                v.span()
                    .and_then(|r| src.get(r))
                    .map_or(fallback, |t| t.trim().to_string())
            };
            let label = match v {
                Value::Integer(i) => as_written(i.value().to_string()),
                Value::Float(f) => as_written(f.value().to_string()),
                Value::String(s) => s.value().clone(),
                other => {
                    errors.push(error_at(
                        file,
                        src,
                        v.span().or(span.clone()),
                        key.clone(),
                        format!(
                            "expected numbers or strings (a duration, a word), found {}",
                            crate::text::with_article(other.type_name())
                        ),
                    ));
                    continue;
                }
            };
            // Two equal values would give two sets of rows under one key, which every
            // output and `compare` would mix up.
            if let Some(k) = labels.iter().position(|l| *l == label) {
                errors.push(error_at(
                    file,
                    src,
                    v.span().or(span.clone()),
                    key.clone(),
                    format!(
                        "expected distinct values, found {} twice (values {} and {})",
                        as_written(label.clone()),
                        positions[k],
                        n + 1
                    ),
                ));
                continue;
            }
            let mut clean = v.clone();
            clean.decor_mut().clear();
            spans.push(v.span());
            positions.push(n + 1);
            values.push(clean);
            labels.push(label);
        }
        axes.push(SweepAxis {
            path: path.to_string(),
            labels,
            values,
            spans,
            span,
        });
    }
    if axes.is_empty() && errors.is_empty() {
        errors.push(error_at(
            file,
            src,
            None,
            "sweep",
            "expected at least one swept key, found an empty [sweep]",
        ));
    }
    if errors.is_empty() {
        Ok(axes)
    } else {
        Err(ScenarioErrors(errors))
    }
}
