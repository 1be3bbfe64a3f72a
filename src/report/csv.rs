//! `summary.csv`, `timeseries.csv` and `requests.csv`: pure renderers from results to bytes.
//!
//! Column names are the contract of DESIGN.md (new columns are only ever appended). With a
//! sweep, each file gains one leading column per swept key, named by its path.

use crate::error::{Error, Result};
use crate::metrics::summary::StrategySummary;
use crate::model::outcome::GiveUpReason;
use crate::report::fmt_num;
use crate::runner::ScenarioResult;
use crate::scenario::sweep::SweepAxis;

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
];

/// The values of one summary row, in [`SUMMARY_COLUMNS`] order.
pub fn summary_values(s: &StrategySummary, seed: u64) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_default();
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
    // 409 (issue-less OCC extension) comes last: columns are only ever appended.
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

/// `summary.csv`: one row per (sweep point, strategy), in scenario order.
pub fn summary_csv(axes: &[SweepAxis], result: &ScenarioResult, seed: u64) -> Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(header(axes, SUMMARY_COLUMNS))
        .map_err(csv_err)?;
    for point in &result.points {
        for s in &point.strategies {
            let row = point
                .labels
                .iter()
                .cloned()
                .chain(summary_values(&s.summary, seed));
            w.write_record(row).map_err(csv_err)?;
        }
    }
    finish(w)
}

/// `timeseries.csv`: one row per (sweep point, strategy, bucket), means over replications.
pub fn timeseries_csv(axes: &[SweepAxis], result: &ScenarioResult) -> Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(header(axes, TIMESERIES_COLUMNS))
        .map_err(csv_err)?;
    for point in &result.points {
        for s in &point.strategies {
            for b in &s.timeline {
                let values = [
                    b.t_s,
                    b.arrivals,
                    b.accepted,
                    b.rejected,
                    b.completed,
                    b.in_service,
                    b.queued,
                    b.retries,
                    b.budget_refused,
                    b.breakers_open,
                    b.fallback_arrivals,
                ];
                let row = point
                    .labels
                    .iter()
                    .cloned()
                    .chain(std::iter::once(s.summary.strategy.clone()))
                    .chain(values.iter().map(|v| fmt_num(*v)));
                w.write_record(row).map_err(csv_err)?;
            }
        }
    }
    finish(w)
}

/// `requests.csv`: one row per logical request of every run, in run order.
pub fn requests_csv(axes: &[SweepAxis], result: &ScenarioResult) -> Result<Vec<u8>> {
    let mut w = writer();
    w.write_record(header(axes, REQUESTS_COLUMNS))
        .map_err(csv_err)?;
    for point in &result.points {
        for s in &point.strategies {
            for (replication, records) in s.requests.iter().enumerate() {
                for r in records {
                    let row = point.labels.iter().cloned().chain([
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
                    ]);
                    w.write_record(row).map_err(csv_err)?;
                }
            }
        }
    }
    finish(w)
}
