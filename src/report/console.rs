//! What `herdsim run` prints per scenario on stdout: a header naming the bucket every peak
//! is measured over, the verdict (see [`crate::report::verdict`]), then short aligned tables
//! with the CSV files' column names: one row per strategy, then, when the scenario has
//! several populations or services, their breakdown.

use crate::metrics::summary::StrategySummary;
use crate::model::{Scenario, Source};
use crate::report::fmt_num;
use crate::report::verdict::{Verdict, cells, verdict};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;
use crate::text::counted;

/// Renders the tables: one line of context (with the bucket), the verdict, a header, one
/// row per (point, strategy); then a row per (point, strategy, population) and per (point,
/// strategy, service) when there is more than one.
pub fn table(file: &ScenarioFile, result: &ScenarioResult) -> String {
    let first = file.first();
    let mut out = format!(
        "{} ({}): {}, {} x {}{}, bucket {}\n",
        first.name,
        crate::text::escape(&file.file),
        workload(file),
        counted(first.strategies.len(), "strategy", "strategies"),
        counted(replications(file), "replication", "replications"),
        if file.points.len() > 1 {
            format!(", {} sweep points", file.points.len())
        } else {
            String::new()
        },
        bucket(file),
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
    for (point, at) in result.points.iter().zip(&file.points) {
        // Trouble that ends at or after time_limit, or in the last bucket before it: the run
        // cannot see a recovery.
        let unseen = crate::metrics::recovery::unseen(&at.scenario);
        for s in &point.strategies {
            let m = &s.summary;
            let mut row = point.labels.clone();
            row.extend([
                m.strategy.clone(),
                round(m.calls.mean, 1),
                round(m.completion_s.mean, 3),
                rate(m.peak_rps.mean),
                rate(m.recovery_peak_rps.mean),
                round(m.succeeded, 1),
                round(m.gave_up, 1),
                round(m.latency_s.map_or(f64::NAN, |l| l[2]), 3),
            ]);
            if recovery {
                row.push(recovered_cell(m, unseen));
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
                        rate(v.peak_rps),
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
                    .map(|l| format!("{}. {}{}", l.rank, l.strategy, loses_mark(l)))
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

/// ` (loses more)` after a strategy outside the leading group, as the report marks it.
fn loses_mark(l: &super::verdict::Line) -> &'static str {
    if l.loses_more { " (loses more)" } else { "" }
}

/// The ranked lines, trades and paired sentences of a verdict, indented.
fn verdict_lines(v: &Verdict) -> String {
    let mut out = String::new();
    let rows: Vec<Vec<String>> = v
        .lines
        .iter()
        .map(|l| {
            let mut row = vec![
                format!("{}.", l.rank),
                format!("{}{}", l.strategy, loses_mark(l)),
            ];
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

/// The `recovered_s` cell of the console and report tables: seconds, or `never (80.0% of
/// runs recovered)` with the share of runs that did, or `n/a (why)` when the scenario leaves
/// no run a chance to be seen recovering (`unseen`: [`crate::metrics::recovery::unseen`]).
pub(crate) fn recovered_cell(m: &StrategySummary, unseen: Option<&str>) -> String {
    match (m.recovered_s, m.recovered_share, unseen) {
        (Some(s), _, _) => round(s, 2),
        (None, Some(_), Some(why)) => format!("n/a ({why})"),
        (None, Some(share), None) => format!(
            "never ({} of runs recovered)",
            super::verdict::percent(share)
        ),
        (None, None, _) => String::new(),
    }
}

fn round(v: f64, places: i32) -> String {
    let f = 10f64.powi(places);
    fmt_num((v * f).round() / f)
}

/// A rate in requests per second: whole numbers from 100 on, three significant digits
/// below (a peak of 0.333 req/s in a long bucket is not "0").
fn rate(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || v.abs() >= 100.0 {
        return round(v, 0);
    }
    let places = 2 - v.abs().log10().floor() as i32;
    round(v, places)
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
/// with `+`; a value a sweep varies (a client count, a rate, a trace's length) shows as its
/// range over the sweep points (`10..200 clients`), never as the first point's value.
pub fn workload(file: &ScenarioFile) -> String {
    let first = file.first();
    if first.populations.len() == 1 && first.populations[0].is_closed() {
        return counted(client_range(file), "client", "clients");
    }
    (0..first.populations.len())
        .map(|i| describe_population(file, i))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The `i`-th population over every sweep point (a sweep changes values, never the kind of
/// a population).
fn describe_population(file: &ScenarioFile, i: usize) -> String {
    let p = &file.first().populations[i];
    let closed = |s: &Scenario| match &s.populations[i].source {
        Source::Closed(c) => c.count,
        _ => 0,
    };
    fn open(s: &Scenario, i: usize) -> Option<&crate::model::population::Open> {
        match &s.populations[i].source {
            Source::Open(o) => Some(o),
            _ => None,
        }
    }
    match &p.source {
        Source::Closed(_) => format!(
            "{}: {}",
            p.name,
            counted(spread(file, closed, whole), "client", "clients")
        ),
        Source::Open(_) => {
            let mut processes: Vec<&str> = Vec::new();
            for o in file.points.iter().filter_map(|pt| open(&pt.scenario, i)) {
                if !processes.contains(&o.process.label()) {
                    processes.push(o.process.label());
                }
            }
            let processes = processes.join("/");
            let constant = file
                .points
                .iter()
                .all(|pt| open(&pt.scenario, i).is_some_and(|o| o.rate.as_constant().is_some()));
            if constant {
                let rate =
                    |s: &Scenario| open(s, i).and_then(|o| o.rate.as_constant()).unwrap_or(0.0);
                format!(
                    "{}: open {} req/s ({processes})",
                    p.name,
                    spread(file, rate, |r| if r.fract() == 0.0 {
                        whole(r as u64)
                    } else {
                        fmt_num(r)
                    })
                )
            } else {
                format!("{}: open profile ({processes})", p.name)
            }
        }
        Source::Trace(_) => {
            let rows = |s: &Scenario| match &s.populations[i].source {
                Source::Trace(t) => t.times.len(),
                _ => 0,
            };
            format!(
                "{}: trace of {} requests",
                p.name,
                spread(file, rows, |n| whole(n as u64))
            )
        }
    }
}

/// The seed, or its range when a sweep varies it (`1..3`).
pub fn seeds(file: &ScenarioFile) -> String {
    spread(file, |s| s.seed, |n| n.to_string())
}

/// The replications, or their range when a sweep varies them (`1..5`).
pub fn replications(file: &ScenarioFile) -> String {
    spread(file, |s| s.replications, |n| n.to_string())
}

/// The time-series bucket (`100 ms`), or its range when a sweep varies it (`50 ms..200 ms`).
pub fn bucket(file: &ScenarioFile) -> String {
    spread(
        file,
        |s| s.bucket.as_nanos(),
        |ns| crate::report::verdict::bucket_label(crate::time::SimDuration::from_nanos(ns)),
    )
}

/// `time_limit` (`1h`), or its range when a sweep varies it (`500ms..1m 40s`).
pub fn time_limit(file: &ScenarioFile) -> String {
    spread(
        file,
        |s| s.time_limit.as_nanos(),
        |ns| crate::time::SimDuration::from_nanos(ns).to_string(),
    )
}

/// `show(v)` when `value` is `v` at every sweep point, else `show(lo)..show(hi)`, the range
/// the sweep covers; empty without points.
fn spread<T: PartialOrd + Copy>(
    file: &ScenarioFile,
    value: impl Fn(&Scenario) -> T,
    show: impl Fn(T) -> String,
) -> String {
    let mut values = file.points.iter().map(|p| value(&p.scenario));
    let Some(first) = values.next() else {
        return String::new();
    };
    let (lo, hi) = values.fold((first, first), |(lo, hi), v| {
        (if v < lo { v } else { lo }, if v > hi { v } else { hi })
    });
    if lo < hi {
        format!("{}..{}", show(lo), show(hi))
    } else {
        show(lo)
    }
}

/// The client count, or its range when a sweep varies it (`10..200`, `10 000`).
pub fn client_range(file: &ScenarioFile) -> String {
    spread(file, |s| s.closed_clients(), whole)
}

/// A count in prose, written as the verdict and the report write numbers: thousands apart
/// from 10 000 (`10 000 clients` under `capacity 10 000 req/s`). Only the numbers herdsim
/// puts into a sentence go through it, never a name the user chose.
fn whole(n: impl Into<u64>) -> String {
    crate::report::chart::fmt_value(n.into() as f64)
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_keep_three_significant_digits_below_100() {
        let shown: Vec<String> = [0.0, 0.3333, 0.0125, 2.5, 26.1675, 99.94, 100.4, 139_790.0]
            .into_iter()
            .map(rate)
            .collect();
        assert_eq!(
            shown,
            [
                "0", "0.333", "0.0125", "2.5", "26.2", "99.9", "100", "139790"
            ]
        );
    }
}
