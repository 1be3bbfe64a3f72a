//! The CSV files: pure renderers from results to bytes.
//!
//! `summary.csv`, `timeseries.csv`, `services.csv`, `populations.csv`, `paired.csv` and
//! (on request) `requests.csv` and `attempts.csv`. Column names are the contract (new columns are only ever
//! appended). With a sweep, each file gains one leading column per swept key, named by its
//! path.

use crate::error::{Error, Result};
use crate::metrics::summary::StrategySummary;
use crate::model::outcome::GiveUpReason;
use crate::report::{fmt_num, push_num};
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
        fmt_num(s.amplification),
        fmt_num(s.latency_s[0]),
        fmt_num(s.latency_s[2]),
        fmt_num(s.wasted),
        opt(s.attempts_per_success),
        fmt_num(s.latency_s[1]),
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
        fmt_num(s.latency_mean_s),
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
    let w = table_into(writer(), csv_err, axes, columns, result, rows)?;
    finish(w)
}

/// [`table`] into any writer; `err` names a failed write.
fn table_into<W: std::io::Write>(
    mut w: csv::Writer<W>,
    err: impl Fn(csv::Error) -> Error,
    axes: &[SweepAxis],
    columns: &[&str],
    result: &ScenarioResult,
    rows: impl Fn(usize, &mut dyn FnMut(Vec<String>) -> Result<()>) -> Result<()>,
) -> Result<csv::Writer<W>> {
    w.write_record(header(axes, columns)).map_err(&err)?;
    for (p, point) in result.points.iter().enumerate() {
        let mut emit = |row: Vec<String>| -> Result<()> {
            w.write_record(point.labels.iter().cloned().chain(row))
                .map_err(&err)
        };
        rows(p, &mut emit)?;
    }
    Ok(w)
}

/// `summary.csv`: one row per (sweep point, strategy), in scenario order.
pub fn summary_csv(axes: &[SweepAxis], result: &ScenarioResult, seed: u64) -> Result<Vec<u8>> {
    table(axes, SUMMARY_COLUMNS, result, |p, emit| {
        for s in &result.points[p].strategies {
            emit(summary_values(&s.summary, seed))?;
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
/// a prefix (labels, strategy) and a suffix (service) quoted once per block by the csv
/// crate. A `String` per field, what [`table`] takes, cost more than the simulation of a
/// 5-replication Brooker sweep.
fn timeseries_into(
    out: &mut impl std::io::Write,
    file: &ScenarioFile,
    result: &ScenarioResult,
) -> std::io::Result<()> {
    let record = |fields: &mut dyn Iterator<Item = &str>| -> std::io::Result<Vec<u8>> {
        let mut w = writer();
        w.write_record(fields).map_err(std::io::Error::other)?;
        let mut bytes = w.into_inner().map_err(|e| e.into_error())?;
        bytes.pop(); // the terminator
        Ok(bytes)
    };
    let head = header(&file.axes, TIMESERIES_COLUMNS);
    out.write_all(&record(&mut head.iter().map(String::as_str))?)?;
    out.write_all(b"\n")?;
    let mut line = String::new();
    for (p, point) in result.points.iter().enumerate() {
        let services = &file.points[p].scenario.services;
        for s in &point.strategies {
            let labels = point.labels.iter().map(String::as_str);
            let prefix = record(&mut labels.chain([s.summary.strategy.as_str()]))?;
            for (service, timeline) in services.iter().zip(&s.timelines) {
                let suffix = record(&mut std::iter::once(service.name.as_str()))?;
                for b in timeline {
                    line.clear();
                    for v in std::iter::once(&b.t_s).chain(&b.values) {
                        line.push(',');
                        push_num(&mut line, *v);
                    }
                    line.push(',');
                    out.write_all(&prefix)?;
                    out.write_all(line.as_bytes())?;
                    out.write_all(&suffix)?;
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    Ok(())
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
                    fmt_num(v.amplification),
                    fmt_num(v.peak_rps),
                    fmt_num(v.requests),
                    fmt_num(v.timeouts),
                    fmt_num(v.lost),
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
                    fmt_num(v.amplification),
                    fmt_num(v.latency_p50_s),
                    fmt_num(v.latency_p99_s),
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
                        fmt_num(r.total_wait.as_secs_f64()),
                        r.retry_after
                            .map(|d| fmt_num(d.as_secs_f64()))
                            .unwrap_or_default(),
                        fmt_num(r.latency.as_secs_f64()),
                        populations[r.population as usize].name.clone(),
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
                        fmt_num(a.sent.as_secs_f64()),
                        a.outcome.label().to_string(),
                        populations[a.population as usize].name.clone(),
                    ])?;
                }
            }
        }
        Ok(())
    })
}
