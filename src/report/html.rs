//! `report.html`: one self-contained page for a design review.
//!
//! It holds the summary table (the best value of each column highlighted, per sweep point),
//! every chart inline as SVG with a one-line caption saying how to read it and links to the
//! chart files, and the scenario text. No script, no network: the page is a pure function of
//! the results and the SVG the charts rendered, so it is byte-identical from run to run and
//! opens the same from a mail attachment as from the output folder.

use std::fmt::Write as _;

use crate::cli::ChartFormat;
use crate::metrics::summary::{Stat, StrategySummary};
use crate::report::chart::{ChartKind, fmt_value};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// A chart as the report embeds it.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Which chart.
    pub kind: ChartKind,
    /// Its SVG document.
    pub svg: String,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Which way a column improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

/// One numeric column of the summary table.
struct Column {
    head: &'static str,
    better: Better,
    value: fn(&StrategySummary) -> Stat,
}

fn plain(v: f64) -> Stat {
    Stat { mean: v, ci95: 0.0 }
}

const COLUMNS: &[Column] = &[
    Column {
        head: "calls",
        better: Better::Lower,
        value: |s| s.calls,
    },
    Column {
        head: "completion (s)",
        better: Better::Lower,
        value: |s| s.completion_s,
    },
    Column {
        head: "peak (req/s)",
        better: Better::Lower,
        value: |s| s.peak_rps,
    },
    Column {
        head: "recovery peak (req/s)",
        better: Better::Lower,
        value: |s| s.recovery_peak_rps,
    },
    Column {
        head: "succeeded",
        better: Better::Higher,
        value: |s| plain(s.succeeded),
    },
    Column {
        head: "gave up",
        better: Better::Lower,
        value: |s| plain(s.gave_up),
    },
    Column {
        head: "calls per request",
        better: Better::Lower,
        value: |s| plain(s.amplification),
    },
    Column {
        head: "p50 latency (s)",
        better: Better::Lower,
        value: |s| plain(s.latency_s[0]),
    },
    Column {
        head: "p99 latency (s)",
        better: Better::Lower,
        value: |s| plain(s.latency_s[2]),
    },
    Column {
        head: "wasted",
        better: Better::Lower,
        value: |s| plain(s.wasted),
    },
];

const STYLE: &str = "
body { font: 15px/1.45 'DejaVu Sans', Verdana, sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.lead { margin: 0 0 6px; color: #444; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.facts dt { color: #666; }
dl.facts dd { margin: 0; }
p.warn { background: #fff3cd; border: 1px solid #e0c36a; padding: 6px 10px; }
div.scroll { overflow-x: auto; }
table.summary { border-collapse: collapse; font-size: 14px; width: 100%; }
table.summary th, table.summary td { border: 1px solid #d4d4d4; padding: 4px 8px; text-align: right; white-space: nowrap; }
table.summary th { background: #f0f0f0; vertical-align: bottom; white-space: normal; }
table.summary td.name, table.summary th.name { text-align: left; }
table.summary tbody + tbody { border-top: 3px solid #999; }
td.best { background: #cde9f7; font-weight: bold; }
td .ci { color: #666; font-size: 12px; font-weight: normal; }
span.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 6px; vertical-align: baseline; }
figure { margin: 24px 0 0; }
figure .chart svg { max-width: 100%; height: auto; display: block; margin: 0 auto; border: 1px solid #e4e4e4; }
figcaption { margin-top: 6px; color: #333; }
figcaption .files { color: #666; font-size: 13px; }
pre.scenario { background: #f6f6f6; border: 1px solid #ddd; padding: 12px; overflow-x: auto; font: 13px/1.4 'DejaVu Sans Mono', Menlo, monospace; }
footer { margin-top: 32px; color: #888; font-size: 12px; }
";

/// The one-line reading guide under each chart.
fn caption(kind: ChartKind, file: &ScenarioFile) -> String {
    let axis = file.axes.first().map(|a| a.path.as_str()).unwrap_or("");
    let whiskers = if file.first().replications > 1 {
        " Whiskers are 95% confidence intervals over replications."
    } else {
        ""
    };
    match kind {
        ChartKind::Load => {
            "Each row is one strategy. Left: attempts reaching the server per second; \
             right: requests the server holds (in service + queued). Grey bands are outages, the \
             dashed line is capacity: spikes far above it are the herd hitting the server at \
             once, a curve that hugs it is a well-spread recovery."
                .to_string()
        }
        ChartKind::Summary => format!(
            "Lower is better in every panel: calls the server absorbed (dashed: one call per \
             request, the minimum), time until the last request ended, and the busiest \
             bucket's arrival rate (dashed: capacity).{whiskers}"
        ),
        ChartKind::Latency => {
            "A point (x, y) means y% of requests had ended, by success or by giving \
             up, within x seconds of their first send: further left and steeper is better; a \
             long flat tail is requests left waiting."
                .to_string()
        }
        ChartKind::SweepCalls => format!(
            "Each line is a strategy as {axis} grows; the dashed line is one call per request \
             (no retries), so the gap above it is retry work the server had to absorb.{whiskers}"
        ),
        ChartKind::SweepCompletion => format!(
            "Time until the last request ended, per strategy, as {axis} grows: flatter lines \
             scale better.{whiskers}"
        ),
        ChartKind::SweepPeak => format!(
            "The busiest bucket's arrival rate, per strategy, as {axis} grows: the load the \
             server must survive.{whiskers}"
        ),
    }
}

/// Renders the report. `figures` are the rendered charts in report order; `formats` are the
/// chart files written next to the report (linked from each caption).
pub fn render(
    file: &ScenarioFile,
    result: &ScenarioResult,
    figures: &[Figure],
    formats: &[ChartFormat],
) -> String {
    let s = file.first();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>herdsim: {name}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>herdsim report: {name}</h1>\n",
        name = escape(&s.name)
    );
    if !s.description.is_empty() {
        let _ = writeln!(h, "<p class=\"lead\">{}</p>", escape(&s.description));
    }
    let runs: usize = file
        .points
        .iter()
        .map(|p| p.scenario.strategies.len() * p.scenario.replications as usize)
        .sum();
    let mut facts = vec![
        // The file name, not the path it was run by: the same scenario gives the same report
        // from any folder (and the report does not reveal the machine's folders).
        (
            "scenario file",
            escape(
                &std::path::Path::new(&file.file)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| file.file.clone()),
            ),
        ),
        ("seed", s.seed.to_string()),
        ("replications", s.replications.to_string()),
        ("workload", escape(&crate::report::console::workload(file))),
        (
            if s.services.len() > 1 {
                "services"
            } else {
                "server"
            },
            s.services
                .iter()
                .map(|svc| {
                    let calls: Vec<&str> = svc
                        .calls
                        .iter()
                        .map(|&c| s.services[c].name.as_str())
                        .collect();
                    format!(
                        "{}: {} slots, {} queue places, service {}{}",
                        escape(&svc.name),
                        svc.server.concurrency,
                        svc.server.queue,
                        escape(&svc.server.service.describe()),
                        if calls.is_empty() {
                            String::new()
                        } else {
                            format!(", calls {}", escape(&calls.join(", ")))
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("<br>"),
        ),
        (
            "runs",
            format!(
                "{runs} ({} events simulated)",
                fmt_value(result.events as f64)
            ),
        ),
    ];
    if !file.axes.is_empty() {
        let axes: Vec<String> = file
            .axes
            .iter()
            .map(|a| format!("{} = [{}]", escape(&a.path), escape(&a.labels.join(", "))))
            .collect();
        facts.push((
            "sweep",
            format!("{} ({} points)", axes.join("; "), file.points.len()),
        ));
    }
    h.push_str("<dl class=\"facts\">\n");
    for (k, v) in facts {
        let _ = writeln!(h, "<dt>{k}</dt><dd>{v}</dd>");
    }
    h.push_str("</dl>\n");
    if result.cut_short > 0 {
        let _ = writeln!(
            h,
            "<p class=\"warn\">time_limit ({}) cut {} runs short: their open requests count as \
             gave_up.</p>",
            escape(&s.time_limit.to_string()),
            result.cut_short
        );
    }

    summary_table(&mut h, file, result);
    breakdowns(&mut h, file, result);

    if !figures.is_empty() {
        h.push_str("<h2 id=\"charts\">Charts</h2>\n");
    }
    for f in figures {
        let stem = f.kind.stem();
        let links: Vec<String> = [ChartFormat::Png, ChartFormat::Svg]
            .iter()
            .filter(|fmt| formats.contains(fmt))
            .map(|fmt| {
                let ext = match fmt {
                    ChartFormat::Png => "png",
                    ChartFormat::Svg => "svg",
                };
                format!("<a href=\"{stem}.{ext}\">{stem}.{ext}</a>")
            })
            .collect();
        let _ = write!(
            h,
            "<figure id=\"chart-{stem}\">\n<div class=\"chart\">{}</div>\n\
             <figcaption><b>{stem}</b>: {}",
            strip_prolog(&f.svg),
            escape(&caption(f.kind, file))
        );
        if !links.is_empty() {
            let _ = write!(h, " <span class=\"files\">({})</span>", links.join(", "));
        }
        h.push_str("</figcaption>\n</figure>\n");
    }

    let _ = write!(
        h,
        "<h2 id=\"scenario\">Scenario</h2>\n<pre class=\"scenario\">{}</pre>\n\
         <footer>herdsim {} · same scenario and seed give the same report</footer>\n\
         </main>\n</body>\n</html>\n",
        escape(&file.source),
        env!("CARGO_PKG_VERSION")
    );
    h
}

/// An SVG document without an XML prolog, ready to inline.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The summary table: one row per (sweep point, strategy), one `<tbody>` per point, the best
/// value of each column within a point highlighted (`td.best`).
fn summary_table(h: &mut String, file: &ScenarioFile, result: &ScenarioResult) {
    let ci = file.first().replications > 1;
    h.push_str("<h2 id=\"summary\">Summary</h2>\n");
    let _ = writeln!(
        h,
        "<p>Means per run{}. <span class=\"swatch\" style=\"background:#cde9f7\"></span>\
         Highlighted: the best value of each column{} (lowest, except succeeded: highest).</p>",
        if ci {
            ", ± 95% confidence interval"
        } else {
            ""
        },
        if file.axes.is_empty() {
            ""
        } else {
            " within each sweep point"
        }
    );
    // The wrapper scrolls sideways on a narrow screen instead of squeezing the numbers.
    h.push_str("<div class=\"scroll\">\n<table class=\"summary\">\n<thead><tr>");
    for a in &file.axes {
        let _ = write!(h, "<th class=\"name\">{}</th>", escape(&a.path));
    }
    h.push_str("<th class=\"name\">strategy</th>");
    for c in COLUMNS {
        let _ = write!(h, "<th>{}</th>", c.head);
    }
    h.push_str("</tr></thead>\n");
    for point in &result.points {
        h.push_str("<tbody>\n");
        let best: Vec<Option<f64>> = COLUMNS
            .iter()
            .map(|c| {
                if point.strategies.len() < 2 {
                    return None; // nothing to compare against
                }
                let values = point.strategies.iter().map(|s| (c.value)(&s.summary).mean);
                let lo = values.clone().fold(f64::INFINITY, f64::min);
                let hi = values.fold(f64::NEG_INFINITY, f64::max);
                if lo == hi {
                    return None; // all equal: no strategy is better here
                }
                Some(match c.better {
                    Better::Lower => lo,
                    Better::Higher => hi,
                })
            })
            .collect();
        for (i, s) in point.strategies.iter().enumerate() {
            h.push_str("<tr>");
            for label in &point.labels {
                let _ = write!(h, "<td class=\"name\">{}</td>", escape(label));
            }
            let rgb = crate::report::chart::color(i);
            let _ = write!(
                h,
                "<td class=\"name\"><span class=\"swatch\" style=\"background:#{:02x}{:02x}{:02x}\"></span>{}</td>",
                rgb.0,
                rgb.1,
                rgb.2,
                escape(&s.summary.strategy)
            );
            for (c, b) in COLUMNS.iter().zip(&best) {
                let v = (c.value)(&s.summary);
                let class = if *b == Some(v.mean) {
                    " class=\"best\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}", fmt_value(v.mean));
                if ci && v.ci95 > 0.0 {
                    let _ = write!(h, " <span class=\"ci\">± {}</span>", fmt_value(v.ci95));
                }
                h.push_str("</td>");
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n");
    }
    h.push_str("</table>\n</div>\n");
}

/// The per-population and per-service tables (when there is more than one), and the paired
/// comparisons against the first strategy (when there are several strategies and
/// replications).
fn breakdowns(h: &mut String, file: &ScenarioFile, result: &ScenarioResult) {
    let s = file.first();
    let axes: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
    let table = |h: &mut String,
                 id: &str,
                 title: &str,
                 lead: &str,
                 head: &[&str],
                 rows: Vec<Vec<String>>| {
        let _ = writeln!(h, "<h2 id=\"{id}\">{title}</h2>\n<p>{lead}</p>");
        h.push_str("<div class=\"scroll\">\n<table class=\"summary\">\n<thead><tr>");
        for (i, c) in axes
            .iter()
            .map(String::as_str)
            .chain(head.iter().copied())
            .enumerate()
        {
            let class = if i < axes.len() + 2 {
                " class=\"name\""
            } else {
                ""
            };
            let _ = write!(h, "<th{class}>{}</th>", escape(c));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for row in rows {
            h.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if i < axes.len() + 2 {
                    " class=\"name\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}</td>", escape(cell));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    };
    if s.populations.len() > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for st in &point.strategies {
                for p in &st.populations {
                    let mut row = point.labels.clone();
                    row.extend([
                        st.summary.strategy.clone(),
                        p.population.clone(),
                        fmt_value(p.requests),
                        fmt_value(p.calls),
                        fmt_value(p.amplification),
                        fmt_value(p.succeeded),
                        fmt_value(p.gave_up),
                        fmt_value(p.latency_p50_s),
                        fmt_value(p.latency_p99_s),
                    ]);
                    rows.push(row);
                }
            }
        }
        table(
            h,
            "populations",
            "Populations",
            "Means per run of each population's requests; latencies pooled over runs.",
            &[
                "strategy",
                "population",
                "requests",
                "calls",
                "calls per request",
                "succeeded",
                "gave up",
                "p50 latency (s)",
                "p99 latency (s)",
            ],
            rows,
        );
    }
    if s.services.len() > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for st in &point.strategies {
                for v in &st.services {
                    let mut row = point.labels.clone();
                    row.extend([
                        st.summary.strategy.clone(),
                        v.service.clone(),
                        fmt_value(v.calls),
                        fmt_value(v.amplification),
                        fmt_value(v.rejected),
                        fmt_value(v.shed),
                        fmt_value(v.wasted),
                        fmt_value(v.gave_up),
                        fmt_value(v.peak_rps),
                    ]);
                    rows.push(row);
                }
            }
        }
        table(
            h,
            "services",
            "Services",
            "Means per run at each service. Amplification: calls at the service per client request; gave up: the service's own requests (calls to it) that gave up.",
            &[
                "strategy",
                "service",
                "calls",
                "amplification",
                "rejected",
                "shed",
                "wasted",
                "gave up",
                "peak (req/s)",
            ],
            rows,
        );
    }
    if s.strategies.len() > 1 && s.replications > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for r in &point.paired {
                let mut row = point.labels.clone();
                row.extend([
                    r.strategy.clone(),
                    r.metric.to_string(),
                    format!("{} ± {}", fmt_value(r.mean_diff), fmt_value(r.ci95)),
                    r.ratio.map(fmt_value).unwrap_or_default(),
                    if r.significant() { "yes" } else { "no" }.to_string(),
                ]);
                rows.push(row);
            }
        }
        let baseline = s.strategies[0].name.as_str();
        table(
            h,
            "paired",
            "Paired comparisons",
            &format!(
                "Each strategy minus {}, replication by replication (every strategy of a replication faces the same workload), with the 95% interval of the paired differences; significant when the interval excludes 0.",
                escape(baseline)
            ),
            &["strategy", "metric", "difference", "ratio", "significant"],
            rows,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn strips_an_xml_prolog_before_inlining() {
        assert_eq!(strip_prolog("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_prolog("<svg/>"), "<svg/>");
    }
}
