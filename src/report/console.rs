//! The short aligned table `herdsim run` prints per scenario on stdout.

use crate::report::fmt_num;
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// Renders the table: one line of context, a header, one row per (point, strategy).
pub fn table(file: &ScenarioFile, result: &ScenarioResult) -> String {
    let first = file.first();
    let mut out = format!(
        "{} ({}): {} clients, {} strategies x {} replications{}\n",
        first.name,
        crate::text::escape(&file.file),
        client_range(file),
        first.strategies.len(),
        first.replications,
        if file.points.len() > 1 {
            format!(", {} sweep points", file.points.len())
        } else {
            String::new()
        }
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
    head.extend(
        [
            "strategy",
            "calls",
            "completion_s",
            "peak_rps",
            "recovery_rps",
            "succeeded",
            "gave_up",
            "p99_s",
        ]
        .map(String::from),
    );
    rows.push(head);
    let round = |v: f64, places: i32| {
        let f = 10f64.powi(places);
        fmt_num((v * f).round() / f)
    };
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
                round(m.latency_s[2], 3),
            ]);
            rows.push(row);
        }
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let text_columns = file.axes.len() + 1; // labels and strategy names align left
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
    out
}

/// The client count, or its range when a sweep varies it (`10..200`).
pub fn client_range(file: &ScenarioFile) -> String {
    let counts = file.points.iter().map(|p| p.scenario.clients.count);
    let (lo, hi) = (counts.clone().min(), counts.max());
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo != hi => format!("{lo}..{hi}"),
        (Some(n), _) => n.to_string(),
        _ => String::new(),
    }
}
