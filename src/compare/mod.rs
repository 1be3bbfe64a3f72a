//! `herdsim compare DIR_A DIR_B`: two output folders side by side.
//!
//! Each folder's `summary.json` is read (else its `summary.csv`, for folders written before
//! `summary.json` existed). Rows are matched by sweep point and strategy; for each matched
//! row and metric the table shows A, B (with their 95% confidence half-widths where the
//! summary has a `<metric>_ci95` column), B/A, and whether the two intervals overlap, in
//! words: `B 1.53x lower` when they do not, as hyperfine says "1.53 times faster".
//!
//! Disjoint intervals are strong evidence of a difference; overlapping ones are not proof
//! of none (the test is conservative). Within one run, `paired.csv` is the sharper test:
//! it compares strategies replication by replication on the same workload.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::report::fmt_num;

mod read;
pub use read::read_summary;

/// The metrics compared when none are named.
pub const DEFAULT_METRICS: &[&str] = &[
    "calls",
    "completion_s",
    "peak_rps",
    "recovery_peak_rps",
    "succeeded",
    "gave_up",
    "latency_p99_s",
];

/// A sweep point's `(swept key, value)` pair.
type Point = (String, String);

/// One row of a summary: its sweep point, strategy and numeric columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `(swept key, value)` pairs, in column order.
    pub point: Vec<(String, String)>,
    /// The strategy's name.
    pub strategy: String,
    /// Numeric columns; `None` for an empty cell.
    pub values: BTreeMap<String, Option<f64>>,
}

/// A summary read from an output folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The file read.
    pub path: PathBuf,
    /// Scenario name, seed and hash (from `summary.json`; `None` from `summary.csv`).
    pub scenario: Option<String>,
    /// The seed of the run.
    pub seed: Option<u64>,
    /// [`crate::scenario::scenario_hash`] of the scenario text and its traces.
    pub hash: Option<String>,
    /// Every column, in order.
    pub columns: Vec<String>,
    /// The rows, in file order.
    pub rows: Vec<Row>,
}

/// Decimals for a number of this size in the table: 0 from 1 000, 1 from 10, else 3.
fn decimals(v: f64) -> i32 {
    match v.abs() {
        a if a >= 1000.0 => 0,
        a if a >= 10.0 => 1,
        _ => 3,
    }
}

/// Decimals for a value `v` shown with its CI `c`: those of [`decimals`], or more when the
/// CI would round to 0 with them (`33.08 ± 0.02`, not `33.1 ± 0`), up to 9.
fn ci_decimals(v: f64, c: f64) -> i32 {
    let d = decimals(v);
    if c > 0.0 && c.is_finite() {
        d.max((-c.log10()).ceil() as i32).min(9)
    } else {
        d
    }
}

/// The replications of every row of `s` when they are all the same (`None` when rows
/// differ, as under a sweep of `replications`, or the column is missing).
fn replications(s: &Summary) -> Option<u64> {
    let mut counts = s
        .rows
        .iter()
        .map(|r| r.values.get("replications").copied().flatten());
    let first = counts.next()??;
    (first >= 1.0 && counts.all(|c| c == Some(first))).then_some(first as u64)
}

/// `v` with `d` decimals at most, trailing zeros trimmed.
fn short(v: f64, d: i32) -> String {
    let scale = 10f64.powi(d);
    fmt_num((v * scale).round() / scale)
}

/// B/A with three decimals; `-` (no value, as for a missing number) when A is 0, 0 against
/// 0 included: that is no ratio of 1 (it printed "1" beside the "1.000" of equal values).
fn ratio_text(a: f64, b: f64) -> String {
    if a == 0.0 {
        "-".to_string()
    } else {
        format!("{:.3}", b / a)
    }
}

/// `never (N% of runs recovered)` for a row of metric `m` = `recovered_s` with no recovery time
/// but a share of runs that recovered: a trigger after which the runs did not all get back
/// to normal, as the console says it (`-` stays for a scenario without a trigger).
fn never_recovered(row: &Row, m: &str) -> Option<String> {
    if m != "recovered_s" || row.values.get(m).copied().flatten().is_some() {
        return None;
    }
    let share = row.values.get("recovered_share").copied().flatten()?;
    // Never rounded to 100%: a run that did not recover is not hidden.
    Some(format!(
        "never ({} of runs recovered)",
        crate::report::verdict::percent(share)
    ))
}

/// What the two intervals say, in words.
fn verdict(a: f64, b: f64, ci: Option<(f64, f64)>, single: bool) -> String {
    let Some((ca, cb)) = ci else {
        return "no CI".to_string();
    };
    if single {
        return "no CI (1 replication)".to_string();
    }
    if (a - b).abs() <= ca + cb {
        return "overlap".to_string();
    }
    let (word, factor) = if b > a {
        ("higher", (a > 0.0).then(|| b / a))
    } else {
        ("lower", (b > 0.0).then(|| a / b))
    };
    match factor {
        Some(f) => format!("apart: B {f:.2}x {word}"),
        None => format!("apart: B {word}"),
    }
}

/// The comparison table of `b` against `a` for `metrics` (default [`DEFAULT_METRICS`]).
pub fn compare(a: &Summary, b: &Summary, metrics: &[String]) -> Result<String> {
    let same = |x: &Row, y: &Row| x.point == y.point && x.strategy == y.strategy;
    if !a.rows.iter().any(|ra| b.rows.iter().any(|rb| same(ra, rb))) {
        return Err(Error::Usage(format!(
            "compare: {} and {} have no strategy (at the same sweep point) in common",
            a.path.display(),
            b.path.display()
        )));
    }
    // A recovery time is a number also where every run of a triggered scenario never
    // recovered (each row then reads "never").
    let numeric = |s: &Summary, m: &str| {
        let m = if m == "recovered_s" && s.rows.iter().any(|r| never_recovered(r, m).is_some()) {
            "recovered_share"
        } else {
            m
        };
        s.rows
            .iter()
            .any(|r| r.values.get(m).is_some_and(|v| v.is_some()))
    };
    let metrics: Vec<String> = if metrics.is_empty() {
        DEFAULT_METRICS
            .iter()
            .filter(|m| numeric(a, m) && numeric(b, m))
            .map(|m| m.to_string())
            .collect()
    } else {
        metrics.to_vec()
    };
    for m in &metrics {
        if !numeric(a, m) || !numeric(b, m) {
            let known: Vec<&str> = a
                .columns
                .iter()
                .filter(|c| numeric(a, c))
                .map(String::as_str)
                .collect();
            return Err(Error::Usage(format!(
                "--metric {m}: expected a numeric column of both summaries, one of: {}",
                known.join(", ")
            )));
        }
    }
    if metrics.is_empty() {
        return Err(Error::Usage(format!(
            "compare: {} and {} have none of the usual metrics ({}) in common: name one with --metric",
            a.path.display(),
            b.path.display(),
            DEFAULT_METRICS.join(", ")
        )));
    }
    let describe = |label: &str, s: &Summary| {
        let mut parts = Vec::new();
        if let Some(n) = &s.scenario {
            parts.push(n.clone());
        }
        if let Some(seed) = s.seed {
            parts.push(format!("seed {seed}"));
        }
        // Runs of different lengths compare with different CIs: the scenario hash does not
        // cover `--replications`, so the count is said.
        if let Some(r) = replications(s) {
            parts.push(crate::text::counted(r, "replication", "replications"));
        }
        if let Some(h) = &s.hash {
            parts.push(format!("scenario hash {}", &h[..h.len().min(12)]));
        }
        let parts = if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        };
        format!(
            "{label}: {}{parts}\n",
            crate::text::escape(&s.path.display().to_string())
        )
    };
    let mut out = describe("A", a);
    out.push_str(&describe("B", b));
    let axes: Vec<String> = a
        .rows
        .first()
        .map(|r| r.point.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut table: Vec<Vec<String>> = vec![{
        let mut h = axes.clone();
        h.extend(
            ["strategy", "metric", "A", "B", "B/A", "95% CIs"]
                .iter()
                .map(|s| s.to_string()),
        );
        h
    }];
    for ra in &a.rows {
        let Some(rb) = b.rows.iter().find(|rb| same(ra, rb)) else {
            continue;
        };
        // A swept `replications` is a sweep column (text), not a value.
        let single = [ra, rb].iter().any(|r| {
            r.values.get("replications").copied().flatten() == Some(1.0)
                || r.point.iter().any(|(k, v)| k == "replications" && v == "1")
        });
        for m in &metrics {
            let va = ra.values.get(m).copied().flatten();
            let vb = rb.values.get(m).copied().flatten();
            let ci_key = format!("{m}_ci95");
            let ci = |r: &Row| r.values.get(&ci_key).copied().flatten();
            let with_ci = |v: Option<f64>, c: Option<f64>, r: &Row| match (v, c) {
                (None, _) => never_recovered(r, m).unwrap_or_else(|| "-".to_string()),
                (Some(v), Some(c)) if !single => {
                    let d = ci_decimals(v, c);
                    format!("{} ± {}", short(v, d), short(c, d))
                }
                (Some(v), _) => short(v, decimals(v)),
            };
            let (ratio, words) = match (va, vb) {
                (Some(x), Some(y)) => {
                    let ratio = ratio_text(x, y);
                    let both = ci(ra).zip(ci(rb));
                    (ratio, verdict(x, y, both, single))
                }
                _ => ("-".to_string(), "-".to_string()),
            };
            let mut line: Vec<String> = ra.point.iter().map(|(_, v)| v.clone()).collect();
            line.extend([
                ra.strategy.clone(),
                m.clone(),
                with_ci(va, ci(ra), ra),
                with_ci(vb, ci(rb), rb),
                ratio,
                words,
            ]);
            table.push(line);
        }
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let text_columns = axes.len() + 2;
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < text_columns || i + 1 == row.len() {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let only = |s: &Summary, other: &Summary, label: &str| -> Vec<String> {
        s.rows
            .iter()
            .filter(|r| {
                !other
                    .rows
                    .iter()
                    .any(|o| o.point == r.point && o.strategy == r.strategy)
            })
            .map(|r| {
                let point: Vec<String> =
                    r.point.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                if point.is_empty() {
                    format!("only in {label}: {}", r.strategy)
                } else {
                    format!("only in {label}: {} ({})", r.strategy, point.join(", "))
                }
            })
            .collect()
    };
    for line in only(a, b, "A").into_iter().chain(only(b, a, "B")) {
        out.push_str(&crate::text::escape(&line));
        out.push('\n');
    }
    if let (Some(ha), Some(hb)) = (&a.hash, &b.hash)
        && ha != hb
    {
        out.push_str("note: the two runs used different scenario texts\n");
    }
    if let (Some(ra), Some(rb)) = (replications(a), replications(b))
        && ra != rb
    {
        out.push_str(&format!(
            "note: the two runs have different numbers of replications ({ra} and {rb}): their CIs differ in width for that alone\n"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CI keeps a significant digit: 33.08 ± 0.02, not 33.1 ± 0 (helper-98); an exact 0
    /// stays at the value's decimals.
    #[test]
    fn a_ci_is_never_rounded_to_nothing() {
        let shown = |v: f64, c: f64| {
            let d = ci_decimals(v, c);
            format!("{} ± {}", short(v, d), short(c, d))
        };
        assert_eq!(shown(33.081547062, 0.020685885), "33.08 ± 0.02");
        assert_eq!(shown(94176.8, 71.36), "94177 ± 71");
        assert_eq!(shown(33.081547062, 0.0), "33.1 ± 0");
        assert_eq!(shown(2.5, 0.0004), "2.5 ± 0.0004");
        assert_eq!(shown(1.0, 1e-30), "1 ± 0");
    }

    #[test]
    fn a_ratio_has_three_decimals_or_none() {
        assert_eq!(ratio_text(2.0, 2.0), "1.000");
        assert_eq!(ratio_text(3.0, 1.0), "0.333");
        assert_eq!(ratio_text(0.0, 5427.0), "-");
        assert_eq!(ratio_text(0.0, 0.0), "-");
    }

    /// A run with a trigger whose replications did not all recover has no recovery time:
    /// it reads "never", as on the console, not `-` as a run without a trigger.
    #[test]
    fn a_recovery_that_never_came_reads_never() {
        let summary = |recovered_s: Option<f64>, share: Option<f64>| Summary {
            path: PathBuf::from("x/summary.json"),
            scenario: Some("x".into()),
            seed: Some(1),
            hash: None,
            columns: vec!["strategy".into(), "recovered_s".into()],
            rows: vec![Row {
                point: Vec::new(),
                strategy: "s".into(),
                values: BTreeMap::from([
                    ("recovered_s".to_string(), recovered_s),
                    ("recovered_share".to_string(), share),
                ]),
            }],
        };
        let metric = ["recovered_s".to_string()];
        let table = compare(
            &summary(None, Some(0.25)),
            &summary(Some(3.0), Some(1.0)),
            &metric,
        )
        .expect("comparable");
        let row = table
            .lines()
            .find(|l| l.contains("recovered_s"))
            .expect("a row");
        assert!(row.contains("never (25.0% of runs recovered)"), "{table}");
        assert!(row.contains(" 3 "), "{table}");
        // Every run of A never recovered: still a number to compare.
        let table = compare(
            &summary(None, Some(0.0)),
            &summary(None, Some(1.0)),
            &metric,
        )
        .expect("comparable");
        assert!(table.contains("never (0% of runs recovered)"), "{table}");
        // 999 runs of 1 000 recovered: not rounded to a 100% that reads as all of them.
        let table = compare(
            &summary(None, Some(0.999)),
            &summary(None, Some(1.0)),
            &metric,
        )
        .expect("comparable");
        assert!(
            table.contains("never (99.90% of runs recovered)"),
            "{table}"
        );
        // Without a trigger there is no recovery time to compare.
        assert!(compare(&summary(None, None), &summary(None, None), &metric).is_err());
    }

    #[test]
    fn verdicts_say_which_way_and_how_much() {
        assert_eq!(
            verdict(100.0, 50.0, Some((1.0, 1.0)), false),
            "apart: B 2.00x lower"
        );
        assert_eq!(
            verdict(50.0, 100.0, Some((1.0, 1.0)), false),
            "apart: B 2.00x higher"
        );
        assert_eq!(verdict(100.0, 101.0, Some((1.0, 1.0)), false), "overlap");
        assert_eq!(
            verdict(100.0, 0.0, Some((1.0, 1.0)), false),
            "apart: B lower"
        );
        assert_eq!(verdict(100.0, 50.0, None, false), "no CI");
        assert_eq!(
            verdict(100.0, 50.0, Some((0.0, 0.0)), true),
            "no CI (1 replication)"
        );
    }
}
