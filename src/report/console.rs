//! What `herdsim run` prints per scenario on stdout: a header naming the bucket every peak
//! is measured over, the verdict (see [`crate::report::verdict`]), then short aligned tables
//! with the CSV files' column names: one row per strategy, then, when the scenario has
//! several populations or services, their breakdown.

use crate::model::{Population, Source};
use crate::report::fmt_num;
use crate::report::verdict::{Verdict, cells, verdict};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// Renders the tables: one line of context (with the bucket), the verdict, a header, one
/// row per (point, strategy); then a row per (point, strategy, population) and per (point,
/// strategy, service) when there is more than one.
pub fn table(file: &ScenarioFile, result: &ScenarioResult) -> String {
    let first = file.first();
    let mut out = format!(
        "{} ({}): {}, {} strategies x {} replications{}, bucket {}\n",
        first.name,
        crate::text::escape(&file.file),
        workload(file),
        first.strategies.len(),
        first.replications,
        if file.points.len() > 1 {
            format!(", {} sweep points", file.points.len())
        } else {
            String::new()
        },
        crate::report::verdict::bucket_label(first.bucket),
    );
    out.push_str(&verdict_text(file, result));
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
    head.extend(
        [
            "strategy",
            "calls",
            "completion_s",
            "peak_rps",
            "recovery_peak_rps",
            "succeeded",
            "gave_up",
            "latency_p99_s",
        ]
        .map(String::from),
    );
    let recovery = first.trigger().is_some();
    if recovery {
        head.push("recovered_s".into());
    }
    rows.push(head);
    for point in &result.points {
        for s in &point.strategies {
            let m = &s.summary;
            let mut row = point.labels.clone();
            row.extend([
                m.strategy.clone(),
                round(m.calls.mean, 1),
                round(m.completion_s.mean, 3),
                round(m.peak_rps.mean, 0),
                round(m.recovery_peak_rps.mean, 0),
                round(m.succeeded, 1),
                round(m.gave_up, 1),
                round(m.latency_s.map_or(f64::NAN, |l| l[2]), 3),
            ]);
            if recovery {
                row.push(match (m.recovered_s, m.recovered_share) {
                    (Some(s), _) => round(s, 2),
                    (None, Some(share)) => format!("never ({} recovered)", percent(share)),
                    (None, None) => String::new(),
                });
            }
            rows.push(row);
        }
    }
    align(&mut out, rows, file.axes.len() + 1);
    if first.populations.len() > 1 {
        let mut rows = vec![header(
            file,
            &[
                "strategy",
                "population",
                "requests",
                "calls",
                "amplification",
                "succeeded",
                "gave_up",
                "latency_p99_s",
            ],
        )];
        for point in &result.points {
            for s in &point.strategies {
                for p in &s.populations {
                    let mut row = point.labels.clone();
                    row.extend([
                        s.summary.strategy.clone(),
                        p.population.clone(),
                        round(p.requests, 1),
                        round(p.calls, 1),
                        round(p.amplification.unwrap_or(f64::NAN), 2),
                        round(p.succeeded, 1),
                        round(p.gave_up, 1),
                        round(p.latency_p99_s.unwrap_or(f64::NAN), 3),
                    ]);
                    rows.push(row);
                }
            }
        }
        out.push_str("populations:\n");
        align(&mut out, rows, file.axes.len() + 2);
    }
    if first.services.len() > 1 {
        let mut rows = vec![header(
            file,
            &[
                "strategy",
                "service",
                "calls",
                "amplification",
                "rejected",
                "shed",
                "wasted",
                "gave_up",
                "peak_rps",
            ],
        )];
        for point in &result.points {
            for s in &point.strategies {
                for v in &s.services {
                    let mut row = point.labels.clone();
                    row.extend([
                        s.summary.strategy.clone(),
                        v.service.clone(),
                        round(v.calls, 1),
                        round(v.amplification.unwrap_or(f64::NAN), 2),
                        round(v.rejected, 1),
                        round(v.shed, 1),
                        round(v.wasted, 1),
                        round(v.gave_up, 1),
                        round(v.peak_rps, 0),
                    ]);
                    rows.push(row);
                }
            }
        }
        out.push_str("services (amplification = calls per client request):\n");
        align(&mut out, rows, file.axes.len() + 2);
    }
    out
}

/// The verdict block: the rule, the capacity, one ranked line per strategy, the trades of
/// the strategies that lose more, the paired differences. With a sweep, the full verdict of
/// the last point (the one the charts show) and the ranking at every point.
pub fn verdict_text(file: &ScenarioFile, result: &ScenarioResult) -> String {
    let Some((last, point)) = result.points.iter().enumerate().next_back() else {
        return String::new();
    };
    let scenario = &file.points[last].scenario;
    let v = verdict(point, scenario);
    let at = crate::report::chart::point_label(file, last);
    let mut out = format!("verdict{at}: {}\n  {}\n", v.rule(), v.capacity_line());
    out.push_str(&verdict_lines(&v));
    if file.points.len() > 1 {
        out.push_str("ranking at each sweep point:\n");
        let mut rows = Vec::new();
        for (i, p) in result.points.iter().enumerate() {
            let v = verdict(p, &file.points[i].scenario);
            let mut row = p.labels.clone();
            row.push(
                v.lines
                    .iter()
                    .map(|l| format!("{}. {}", l.rank, l.strategy))
                    .collect::<Vec<_>>()
                    .join("  "),
            );
            rows.push(row);
        }
        let mut head: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
        head.push("ranking".into());
        rows.insert(0, head);
        let columns = rows[0].len();
        align(&mut out, rows, columns);
    }
    out
}

/// The ranked lines, trades and paired sentences of a verdict, indented.
fn verdict_lines(v: &Verdict) -> String {
    let mut out = String::new();
    let rows: Vec<Vec<String>> = v
        .lines
        .iter()
        .map(|l| {
            let mut row = vec![format!("{}.", l.rank), l.strategy.clone()];
            row.extend(cells(l));
            row
        })
        .collect();
    align(&mut out, rows, 6);
    for l in &v.lines {
        if let Some(t) = &l.trade {
            out.push_str(&format!("  {t}\n"));
        }
    }
    if !v.paired.is_empty() {
        out.push_str(&format!(
            "  paired differences (95%, {} replications):\n",
            v.replications
        ));
        for p in &v.paired {
            out.push_str(&format!("    {p}\n"));
        }
    }
    out
}

fn round(v: f64, places: i32) -> String {
    let f = 10f64.powi(places);
    fmt_num((v * f).round() / f)
}

fn percent(share: f64) -> String {
    format!("{}%", round(share * 100.0, 0))
}

/// The sweep columns, then `columns`.
fn header(file: &ScenarioFile, columns: &[&str]) -> Vec<String> {
    let mut head: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
    head.extend(columns.iter().map(|c| c.to_string()));
    head
}

/// Appends `rows` to `out` as an aligned table: the first `text_columns` columns aligned
/// left, numbers right.
fn align(out: &mut String, rows: Vec<Vec<String>>, text_columns: usize) {
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c < text_columns {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
}

/// What sends the requests: `10000 clients`, `open 8 req/s`, or the populations joined
/// with `+`; a swept client count shows as its range.
pub fn workload(file: &ScenarioFile) -> String {
    let first = file.first();
    if first.populations.len() == 1 && first.populations[0].is_closed() {
        return format!("{} clients", client_range(file));
    }
    first
        .populations
        .iter()
        .map(describe_population)
        .collect::<Vec<_>>()
        .join(" + ")
}

fn describe_population(p: &Population) -> String {
    match &p.source {
        Source::Closed(c) => format!("{}: {} clients", p.name, c.count),
        Source::Open(o) => match o.rate.as_constant() {
            Some(r) => format!(
                "{}: open {} req/s ({})",
                p.name,
                fmt_num(r),
                o.process.label()
            ),
            None => format!("{}: open profile ({})", p.name, o.process.label()),
        },
        Source::Trace(t) => format!("{}: trace of {} requests", p.name, t.times.len()),
    }
}

/// The client count, or its range when a sweep varies it (`10..200`).
pub fn client_range(file: &ScenarioFile) -> String {
    let counts = file.points.iter().map(|p| p.scenario.closed_clients());
    let (lo, hi) = (counts.clone().min(), counts.max());
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo != hi => format!("{lo}..{hi}"),
        (Some(n), _) => n.to_string(),
        _ => String::new(),
    }
}
