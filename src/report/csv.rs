//! The CSV files: pure renderers from results to bytes.
//!
//! `summary.csv`, `timeseries.csv`, `services.csv`, `populations.csv`, `paired.csv` and
//! (on request) `requests.csv` and `attempts.csv`. Column names are the contract (new columns are only ever
//! appended). With a sweep, each file gains one leading column per swept key, named by its
//! path.

use crate::error::{Error, Result};
use crate::metrics::summary::StrategySummary;
use crate::model::outcome::GiveUpReason;
use crate::report::{fmt_num, fmt_secs, push_num};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::{ScenarioFile, SweepAxis};

/// `summary.csv` columns after the sweep columns, in order.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "strategy",
    "clients",
    "replications",
    "calls",
    "calls_ci95",
    "completion_s",
    "completion_s_ci95",
    "peak_rps",
    "recovery_peak_rps",
    "succeeded",
    "gave_up",
    "amplification",
    "latency_p50_s",
    "latency_p99_s",
    "wasted",
    "attempts_per_success",
    "latency_p95_s",
    "success_p95_s",
    "success_p99_s",
    "retries_503",
    "retries_500",
    "retries_429",
    "retries_timeout",
    "retries_unreachable",
    "gave_up_attempts",
    "gave_up_deadline",
    "gave_up_non_retryable",
    "gave_up_rate_limit",
    "gave_up_budget",
    "gave_up_breaker",
    "gave_up_time_limit",
    "budget_refused",
    "budget_refusal_rate",
    "breaker_open_s",
    "fallback_calls",
    "fallback_succeeded",
    "peak_rps_ci95",
    "seed",
    "retries_409",
    "requests",
    "shed",
    "recovered_s",
    "recovered_share",
    "latency_mean_s",
    "gave_up_ci95",
    "recovery_peak_rps_ci95",
];

/// `timeseries.csv` columns after the sweep columns, in order.
pub const TIMESERIES_COLUMNS: &[&str] = &[
    "strategy",
    "t_s",
    "arrivals",
    "accepted",
    "rejected",
    "completed",
    "in_service",
    "queued",
    "retries",
    "budget_refused",
    "breakers_open",
    "fallback_arrivals",
    "shed",
    "first_attempts",
    "succeeded",
    "gave_up",
    "timeouts",
    "concurrency",
    "service",
];

/// `services.csv` columns after the sweep columns, in order.
pub const SERVICES_COLUMNS: &[&str] = &[
    "strategy",
    "service",
    "calls",
    "accepted",
    "rejected",
    "shed",
    "wasted",
    "succeeded",
    "gave_up",
    "amplification",
    "peak_rps",
    "requests",
    "timeouts",
    "lost",
    "breaker_open_s",
];

/// `populations.csv` columns after the sweep columns, in order.
pub const POPULATIONS_COLUMNS: &[&str] = &[
    "strategy",
    "population",
    "requests",
    "calls",
    "succeeded",
    "gave_up",
    "amplification",
    "latency_p50_s",
    "latency_p99_s",
];

/// `paired.csv` columns after the sweep columns, in order.
pub const PAIRED_COLUMNS: &[&str] = &[
    "strategy",
    "baseline",
    "metric",
    "mean_diff",
    "ci95",
    "ratio",
];

/// `requests.csv` columns after the sweep columns, in order.
pub const REQUESTS_COLUMNS: &[&str] = &[
    "strategy",
    "replication",
    "client",
    "request",
    "outcome",
    "last_status",
    "attempts",
    "total_wait_s",
    "retry_after_s",
    "latency_s",
    "population",
    "start_s",
];

/// `attempts.csv` columns after the sweep columns, in order.
pub const ATTEMPTS_COLUMNS: &[&str] = &[
    "strategy",
    "replication",
    "client",
    "request",
    "attempt",
    "sent_s",
    "outcome",
    "population",
];

fn opt(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_default()
}

/// The values of one summary row, in [`SUMMARY_COLUMNS`] order.
pub fn summary_values(s: &StrategySummary, seed: u64) -> Vec<String> {
    let gave = |r: GiveUpReason| fmt_num(s.gave_up_for(r));
    let mut row = vec![
        s.strategy.clone(),
        s.clients.to_string(),
        s.replications.to_string(),
        fmt_num(s.calls.mean),
        fmt_num(s.calls.ci95),
        fmt_num(s.completion_s.mean),
        fmt_num(s.completion_s.ci95),
        fmt_num(s.peak_rps.mean),
        fmt_num(s.recovery_peak_rps.mean),
        fmt_num(s.succeeded),
        fmt_num(s.gave_up),
        opt(s.amplification),
        opt(s.latency_s.map(|l| l[0])),
        opt(s.latency_s.map(|l| l[2])),
        fmt_num(s.wasted),
        opt(s.attempts_per_success),
        opt(s.latency_s.map(|l| l[1])),
        opt(s.success_s.map(|x| x[0])),
        opt(s.success_s.map(|x| x[1])),
    ];
    // 409 (the OCC extension) comes after `seed`: columns are only ever appended.
    row.extend(s.retries[..5].iter().map(|v| fmt_num(*v)));
    row.extend([
        gave(GiveUpReason::Attempts),
        gave(GiveUpReason::Deadline),
        gave(GiveUpReason::NonRetryable),
        gave(GiveUpReason::RateLimitEscalation),
        gave(GiveUpReason::Budget),
        gave(GiveUpReason::BreakerOpen),
        gave(GiveUpReason::TimeLimit),
        fmt_num(s.budget_refused),
        fmt_num(s.budget_refusal_rate),
        fmt_num(s.breaker_open_s),
        fmt_num(s.fallback_calls),
        fmt_num(s.fallback_succeeded),
        fmt_num(s.peak_rps.ci95),
        seed.to_string(),
        fmt_num(s.retries[5]),
        fmt_num(s.requests),
        fmt_num(s.shed),
        opt(s.recovered_s),
        opt(s.recovered_share),
        opt(s.latency_mean_s),
        fmt_num(s.gave_up_ci95),
        fmt_num(s.recovery_peak_rps.ci95),
    ]);
    row
}

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    w.into_inner()
        .map_err(|e| Error::io("cannot format", "<csv buffer>", e.into_error()))
}

fn header(axes: &[SweepAxis], columns: &[&str]) -> Vec<String> {
    axes.iter()
        .map(|a| a.path.clone())
        .chain(columns.iter().map(|c| c.to_string()))
        .collect()
}

fn csv_err(e: csv::Error) -> Error {
    Error::io("cannot format", "<csv buffer>", std::io::Error::other(e))
}

/// Writes a file of `columns`: for each sweep point, the rows `rows` gives, each prefixed
/// with the point's labels.
fn table(
    axes: &[SweepAxis],
    columns: &[&str],
    result: &ScenarioResult,
    rows: impl Fn(usize, &mut dyn FnMut(Vec<String>) -> Result<()>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(header(axes, columns)).map_err(csv_err)?;
    for (p, point) in result.points.iter().enumerate() {
        let mut emit = |row: Vec<String>| -> Result<()> {
            w.write_record(point.labels.iter().cloned().chain(row))
                .map_err(csv_err)
        };
        rows(p, &mut emit)?;
    }
    finish(w)
}

/// The indices into [`SUMMARY_COLUMNS`] that `summary.csv` and `summary.json` write after
/// the sweep columns: all but those a swept key already names (`seed`, `replications`),
/// whose leading sweep column holds the point's value; a second column of the same name
/// would hold the same value at best, and readers keyed by name would see only one of them.
pub fn summary_column_indices(axes: &[SweepAxis]) -> Vec<usize> {
    (0..SUMMARY_COLUMNS.len())
        .filter(|&i| !axes.iter().any(|a| a.path == SUMMARY_COLUMNS[i]))
        .collect()
}

/// `summary.csv`: one row per (sweep point, strategy), in scenario order. `seed` is the seed
/// of every point when the sweep does not vary it.
pub fn summary_csv(axes: &[SweepAxis], result: &ScenarioResult, seed: u64) -> Result<Vec<u8>> {
    let keep = summary_column_indices(axes);
    let columns: Vec<&str> = keep.iter().map(|&i| SUMMARY_COLUMNS[i]).collect();
    table(axes, &columns, result, |p, emit| {
        for s in &result.points[p].strategies {
            let values = summary_values(&s.summary, seed);
            emit(keep.iter().map(|&i| values[i].clone()).collect())?;
        }
        Ok(())
    })
}

/// `timeseries.csv`: one row per (sweep point, strategy, service, bucket), means over
/// replications; one block of rows per service.
pub fn timeseries_csv(file: &ScenarioFile, result: &ScenarioResult) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    timeseries_into(&mut out, file, result)
        .map_err(|e| Error::io("cannot format", "<csv buffer>", e))?;
    Ok(out)
}

/// [`timeseries_csv`] written into `out` (the file at `path`) as it is formatted: a long
/// sweep's series runs to many megabytes, and building them in memory first would double
/// the peak memory of a run that keeps it independent of replications.
pub fn write_timeseries_csv(
    file: &ScenarioFile,
    result: &ScenarioResult,
    out: impl std::io::Write,
    path: &std::path::Path,
) -> Result<()> {
    let mut out = std::io::BufWriter::new(out);
    timeseries_into(&mut out, file, result)
        .and_then(|()| std::io::Write::flush(&mut out))
        .map_err(|e| Error::io("cannot write", path, e))
}

/// The rows of `timeseries.csv`. A long sweep has millions of numbers: they are formatted
/// into one reused line and written as they are (a number never needs CSV quoting), between
/// the row's text fields, quoted once per block by the csv crate ([`Affixes`]). A `String`
/// per field, what [`table`] takes, cost more than the simulation of a 5-replication
/// Brooker sweep.
fn timeseries_into(
    out: &mut impl std::io::Write,
    file: &ScenarioFile,
    result: &ScenarioResult,
) -> std::io::Result<()> {
    let head = header(&file.axes, TIMESERIES_COLUMNS);
    out.write_all(&csv_record(head.iter().map(String::as_str))?)?;
    out.write_all(b"\n")?;
    let mut line = String::new();
    for (p, point) in result.points.iter().enumerate() {
        let services = &file.points[p].scenario.services;
        for s in &point.strategies {
            for (service, timeline) in services.iter().zip(&s.timelines) {
                let affixes = Affixes::new(&point.labels, &s.summary.strategy, &service.name)?;
                for b in timeline {
                    line.clear();
                    for (i, v) in std::iter::once(&b.t_s).chain(&b.values).enumerate() {
                        if i > 0 {
                            line.push(',');
                        }
                        push_num(&mut line, *v);
                    }
                    affixes.write_row(out, line.as_bytes())?;
                }
            }
        }
    }
    Ok(())
}

/// The text fields around a `timeseries.csv` row's numbers, as the csv crate writes them:
/// `prefix` is the labels and the strategy and their trailing comma, `suffix` the comma
/// and the service. Each is written as a record of at least two fields (with an empty
/// one), so an empty name comes out as the csv crate writes it inside a longer record
/// (nothing), not as a lone empty record (`""`).
struct Affixes {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
}

impl Affixes {
    fn new(labels: &[String], strategy: &str, service: &str) -> std::io::Result<Self> {
        let leading = labels.iter().map(String::as_str).chain([strategy, ""]);
        Ok(Affixes {
            prefix: csv_record(leading)?,
            suffix: csv_record(["", service])?,
        })
    }

    /// One row: the prefix, `numbers` (comma-separated, never quoted), the suffix.
    fn write_row(&self, out: &mut impl std::io::Write, numbers: &[u8]) -> std::io::Result<()> {
        out.write_all(&self.prefix)?;
        out.write_all(numbers)?;
        out.write_all(&self.suffix)?;
        out.write_all(b"\n")
    }
}

/// One record as the csv crate writes it, without its terminator.
fn csv_record<'a>(fields: impl IntoIterator<Item = &'a str>) -> std::io::Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(fields).map_err(std::io::Error::other)?;
    let mut bytes = w.into_inner().map_err(|e| e.into_error())?;
    bytes.pop(); // the terminator
    Ok(bytes)
}

/// `services.csv`: one row per (sweep point, strategy, service), means per replication.
pub fn services_csv(axes: &[SweepAxis], result: &ScenarioResult) -> Result<Vec<u8>> {
    table(axes, SERVICES_COLUMNS, result, |p, emit| {
        for s in &result.points[p].strategies {
            for v in &s.services {
                emit(vec![
                    s.summary.strategy.clone(),
                    v.service.clone(),
                    fmt_num(v.calls),
                    fmt_num(v.accepted),
                    fmt_num(v.rejected),
                    fmt_num(v.shed),
                    fmt_num(v.wasted),
                    fmt_num(v.succeeded),
                    fmt_num(v.gave_up),
                    opt(v.amplification),
                    fmt_num(v.peak_rps),
                    fmt_num(v.requests),
                    fmt_num(v.timeouts),
                    fmt_num(v.lost),
                    fmt_num(v.breaker_open_s),
                ])?;
            }
        }
        Ok(())
    })
}

/// `populations.csv`: one row per (sweep point, strategy, population).
pub fn populations_csv(axes: &[SweepAxis], result: &ScenarioResult) -> Result<Vec<u8>> {
    table(axes, POPULATIONS_COLUMNS, result, |p, emit| {
        for s in &result.points[p].strategies {
            for v in &s.populations {
                emit(vec![
                    s.summary.strategy.clone(),
                    v.population.clone(),
                    fmt_num(v.requests),
                    fmt_num(v.calls),
                    fmt_num(v.succeeded),
                    fmt_num(v.gave_up),
                    opt(v.amplification),
                    opt(v.latency_p50_s),
                    opt(v.latency_p99_s),
                ])?;
            }
        }
        Ok(())
    })
}

/// `paired.csv`: every strategy after the first against the first, per metric.
pub fn paired_csv(axes: &[SweepAxis], result: &ScenarioResult) -> Result<Vec<u8>> {
    table(axes, PAIRED_COLUMNS, result, |p, emit| {
        for r in &result.points[p].paired {
            emit(vec![
                r.strategy.clone(),
                r.baseline.clone(),
                r.metric.to_string(),
                fmt_num(r.mean_diff),
                fmt_num(r.ci95),
                opt(r.ratio),
            ])?;
        }
        Ok(())
    })
}

/// `requests.csv`: one row per client request of every run, in replication order.
pub fn requests_csv(file: &ScenarioFile, result: &ScenarioResult) -> Result<Vec<u8>> {
    table(&file.axes, REQUESTS_COLUMNS, result, |p, emit| {
        let populations = &file.points[p].scenario.populations;
        for s in &result.points[p].strategies {
            for (replication, records) in s.requests.iter().enumerate() {
                for r in records {
                    emit(vec![
                        s.summary.strategy.clone(),
                        replication.to_string(),
                        r.client.to_string(),
                        r.request.to_string(),
                        r.outcome.label().to_string(),
                        r.last_status
                            .map(|s| s.label().to_string())
                            .unwrap_or_default(),
                        r.attempts.to_string(),
                        fmt_secs(r.total_wait.0),
                        r.retry_after.map(|d| fmt_secs(d.0)).unwrap_or_default(),
                        r.latency.map(|d| fmt_secs(d.0)).unwrap_or_default(),
                        populations[r.population as usize].name.clone(),
                        r.latency.map(|_| fmt_secs(r.start.0)).unwrap_or_default(),
                    ])?;
                }
            }
        }
        Ok(())
    })
}

/// `attempts.csv`: every attempt of the sampled client requests of every run, by strategy,
/// then replication, in the order the attempts ended.
pub fn attempts_csv(file: &ScenarioFile, result: &ScenarioResult) -> Result<Vec<u8>> {
    table(&file.axes, ATTEMPTS_COLUMNS, result, |p, emit| {
        let populations = &file.points[p].scenario.populations;
        for s in &result.points[p].strategies {
            for (replication, records) in s.attempts.iter().enumerate() {
                for a in records {
                    emit(vec![
                        s.summary.strategy.clone(),
                        replication.to_string(),
                        a.client.to_string(),
                        a.request.to_string(),
                        a.attempt.to_string(),
                        fmt_secs(a.sent.0),
                        a.outcome.label().to_string(),
                        populations[a.population as usize].name.clone(),
                    ])?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row built from the affixes is the record the csv crate writes for the same fields,
    /// whatever the names hold: empty, commas, quotes, line breaks, no sweep labels.
    #[test]
    fn timeseries_rows_quote_text_fields_as_the_csv_crate_does() {
        let names = ["", "full", "a,b", "say \"hi\"", "two\nlines", " spaced "];
        let label_sets: [&[&str]; 3] = [&[], &["10"], &["", "x,y"]];
        for labels in label_sets {
            let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
            for strategy in names {
                for service in names {
                    let affixes = Affixes::new(&labels, strategy, service).unwrap();
                    let mut row = Vec::new();
                    affixes.write_row(&mut row, b"0.5,3").unwrap();
                    let mut w = writer();
                    let fields = labels.iter().map(String::as_str);
                    w.write_record(fields.chain([strategy, "0.5", "3", service]))
                        .unwrap();
                    let expected = finish(w).unwrap();
                    assert_eq!(
                        String::from_utf8(row).unwrap(),
                        String::from_utf8(expected).unwrap(),
                        "labels {labels:?}, strategy {strategy:?}, service {service:?}"
                    );
                }
            }
        }
    }
}
