//! `report.html`: one self-contained page for a design review.
//!
//! It holds the summary table (the best value of each column highlighted, per sweep point),
//! every chart inline as SVG with a one-line caption saying how to read it and links to the
//! chart files, and the scenario text. No script, no network: the page is a pure function of
//! the results and the SVG the charts rendered, so it is byte-identical from run to run and
//! opens the same from a mail attachment as from the output folder. The tables below the
//! verdict are in `tables`.

use crate::text::counted;
use std::fmt::Write as _;

use crate::cli::ChartFormat;
use crate::report::chart::{ChartKind, fmt_count, fmt_value};
use crate::report::verdict::{cells, verdict};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

mod facts;
mod tables;

use facts::describe_services;
use tables::{breakdowns, summary_table};

/// A chart as the report embeds it.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Which chart.
    pub kind: ChartKind,
    /// Its SVG document.
    pub svg: String,
}

/// A column heading: escaped, with a line-break opportunity after each `_` and `.`, so a
/// narrow column breaks `recovery_peak_rps` as `recovery_` / `peak_rps`, never mid-word.
pub fn heading(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(['_', '.']) {
        let (word, tail) = rest.split_at(at + 1);
        out.push_str(&escape(word));
        // Not before a unit or an index of one or two characters: `completion_s`, `0.`.
        let next = tail.split(['_', '.']).next().unwrap_or("");
        if next.chars().count() > 2 {
            out.push_str("<wbr>");
        }
        rest = tail;
    }
    out.push_str(&escape(rest));
    out
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
table.summary { border-collapse: collapse; font-size: 13px; width: 100%; }
table.summary th, table.summary td { border: 1px solid #d4d4d4; padding: 3px 6px; text-align: right; white-space: nowrap; }
table.summary th { background: #f0f0f0; vertical-align: bottom; white-space: normal; overflow-wrap: normal; min-width: 4em; }
table.summary td.name, table.summary th.name { text-align: left; }
table.summary tbody + tbody { border-top: 3px solid #999; }
td.best { background: #cde9f7; font-weight: bold; }
th .unit { font-weight: normal; color: #555; font-size: 12px; }
section#verdict { background: #f4f8fb; border: 1px solid #cfdde8; padding: 4px 16px 10px; margin: 16px 0 8px; }
section#verdict h2 { margin-top: 12px; border: none; }
p.rule { color: #444; font-size: 14px; }
table.verdict { border-collapse: collapse; font-size: 15px; }
table.verdict td { padding: 3px 12px 3px 0; white-space: nowrap; }
table.verdict td.rank { font-weight: bold; }
table.verdict tr.loses td { color: #8a3b12; }
table.verdict td.lost { color: #666; font-size: 13px; }
ul.trades li { color: #8a3b12; }
td .ci { color: #666; font-size: 11px; font-weight: normal; display: block; }
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
    // The charts show the last sweep point (the sweep charts all of them): so do their
    // captions.
    let shown = file.last();
    let bucket = crate::report::verdict::bucket_label(shown.bucket);
    let whiskers = if shown.replications > 1 {
        " Whiskers are 95% confidence intervals over replications."
    } else {
        ""
    };
    let log = " A value axis marked (log) is logarithmic: its data span more than 100x.";
    // The sweep charts plot the entry service's calls and peaks: a graph's by name, since
    // another of its services may be called `server`.
    let entry = if shown.services.len() > 1 {
        escape(&shown.entry().name)
    } else {
        "the server".to_string()
    };
    match kind {
        ChartKind::Summary => format!(
            "The verdict as bars, strategies in rank order (fewest requests lost first). Calls: \
             the dashed line is one call per request (fewer when requests ended without a \
             call, as after a breaker's fast-fail); the label gives the multiple. {peaks} \
             Right: the share of requests that succeeded and gave up.{whiskers}{log}",
            peaks = if shown.recovery_seen().is_some() {
                format!(
                    "Peaks: the busiest {bucket} bucket of the whole run (pale) beside the \
                     busiest one after the last outage (the recovery peak, solid), with the \
                     capacity dashed."
                )
            } else {
                format!(
                    "Peak: the busiest {bucket} bucket of the run, with the capacity dashed \
                     ({}: no recovery peak).",
                    if shown.outage_outlasts_run() {
                        "the last outage lasts to the end of the run"
                    } else {
                        "no outage"
                    }
                )
            }
        ),
        ChartKind::Attempts => format!(
            "Each row is one strategy: client attempts sent to the entry service per second, \
             per {bucket} bucket by when they were sent, first attempts (blue) with the retries \
             (orange) stacked on top (what arrived, a network delay later, is in the load \
             chart). The \
             dashed step line is the capacity (slots over time / mean service time); shaded \
             windows are outages, labelled by kind. Retries rising above the capacity in waves \
             are the herd; a flat band just under it is a well-spread recovery.{log}"
        ),
        ChartKind::Load => format!(
            "Each row is one strategy, each column a service: attempts arriving per second \
             (per {bucket} bucket), outages shaded, capacity as a dashed step line. With one \
             service, the right column shows what the server holds (in service + queued) \
             against its slots and queue.{log}"
        ),
        ChartKind::Raster => {
            "One row per sampled client request (the first run's attempt sample: at most 2 000), \
             one mark per attempt at the time it was sent, coloured by what became of it. Rows \
             are sorted by the request's first failure, then its first success: clients \
             retrying in lockstep line up, and their waves show as vertical bands; jitter \
             turns them into a spray."
                .to_string()
        }
        ChartKind::Latency => {
            "A point (x, y) means y% of requests had ended, by success or by giving \
             up, within x seconds of when they began (a client rate limiter's wait \
             included): further left and steeper is better; a long flat tail is \
             requests left waiting. Markers sit at p50, p90 and p99."
                .to_string()
        }
        ChartKind::Populations => format!(
            "One group per population, one row per strategy: calls per request (the dashed \
             line is one call each) and the share of the population's requests that \
             succeeded and gave up.{log}"
        ),
        ChartKind::Services => format!(
            "One group per service, one row per strategy: calls at the service per client \
             request (amplification; dashed: one each), and the service's busiest {bucket} \
             bucket as a multiple of its own capacity (dashed: at capacity).{log}"
        ),
        ChartKind::Paired => format!(
            "Each strategy minus {}, replication by replication (every strategy of a \
             replication faces the same workload), as a percentage of {}'s mean, with the 95% \
             interval of the differences: filled when it excludes 0 (significant), hollow \
             when not.",
            shown.strategies[0].name, shown.strategies[0].name
        ),
        ChartKind::SweepCalls => format!(
            "Each line is a strategy as {axis} grows; the dashed line is one call per request \
             (no retries), so the gap above it is retry work {entry} had to absorb.{whiskers}"
        ),
        ChartKind::SweepCompletion => format!(
            "Time until the last request ended, per strategy, as {axis} grows: flatter lines \
             scale better.{whiskers}"
        ),
        ChartKind::SweepPeak => format!(
            "The busiest {bucket} bucket's arrival rate, per strategy, as {axis} grows: the \
             load {entry} must survive.{whiskers}"
        ),
        ChartKind::SweepSucceeded => format!(
            "The share of logical requests that succeeded, per strategy, as {axis} grows: \
             what the retries bought (mean over replications, without an interval; the \
             per-strategy charts above show the last point's successes and give-ups)."
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
    verdict_section(&mut h, file, result);
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
        ("seed", crate::report::console::seeds(file)),
        ("replications", crate::report::console::replications(file)),
        (
            "bucket",
            format!(
                "{}: every peak is the busiest bucket's arrivals per second",
                crate::report::console::bucket(file)
            ),
        ),
        ("workload", escape(&crate::report::console::workload(file))),
        (
            if s.services.len() > 1 {
                "services"
            } else {
                "server"
            },
            describe_services(file),
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
            "<p class=\"warn\">time_limit ({}) cut {} short: their client requests open \
             (or not yet started) at the limit count as gave_up.</p>",
            escape(&crate::report::console::time_limit(file)),
            counted(result.cut_short, "run", "runs")
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

/// The verdict section: the rule, the capacity and bucket, one ranked row per strategy,
/// what each strategy that loses more traded, and the significant paired differences; with a
/// sweep, for the last point (the one the charts show), then the ranking at every point.
fn verdict_section(h: &mut String, file: &ScenarioFile, result: &ScenarioResult) {
    let Some((last, point)) = result.points.iter().enumerate().next_back() else {
        return;
    };
    let v = verdict(point, &file.points[last].scenario);
    let at = crate::report::chart::point_label(file, last);
    let _ = writeln!(
        h,
        "<section id=\"verdict\">\n<h2>Verdict{}</h2>\n<p class=\"rule\">{}.<br>{}.</p>",
        escape(&at),
        escape(&upper_first(&v.rule())),
        escape(&upper_first(&v.capacity_line()))
    );
    h.push_str("<table class=\"verdict\">\n<tbody>\n");
    for l in &v.lines {
        let rgb = crate::report::chart::color(l.index);
        let _ = write!(
            h,
            "<tr{}><td class=\"rank\">{}.</td><td class=\"name\"><span class=\"swatch\" \
             style=\"background:#{:02x}{:02x}{:02x}\"></span>{}</td>",
            if l.loses_more { " class=\"loses\"" } else { "" },
            l.rank,
            rgb.0,
            rgb.1,
            rgb.2,
            escape(&l.strategy)
        );
        for cell in cells(l) {
            let _ = write!(h, "<td>{}</td>", escape(&cell));
        }
        let _ = writeln!(
            h,
            "<td class=\"lost\">gave up {}{}</td></tr>",
            // As the summary table writes its gave_up cell below, so the two agree digit for
            // digit: the count to 0.1, the interval as its half-width, none when it is 0.
            fmt_count(l.gave_up.mean),
            if v.replications > 1 && l.gave_up.ci95 > 0.0 {
                format!(" ± {}", tables::half_width(true, l.gave_up.ci95))
            } else {
                String::new()
            }
        );
    }
    h.push_str("</tbody>\n</table>\n");
    let trades: Vec<&String> = v.lines.iter().filter_map(|l| l.trade.as_ref()).collect();
    if !trades.is_empty() {
        h.push_str("<ul class=\"trades\">\n");
        for t in trades {
            let _ = writeln!(h, "<li>{}</li>", escape(t));
        }
        h.push_str("</ul>\n");
    }
    if !v.paired.is_empty() {
        let _ = writeln!(
            h,
            "<p>Paired differences from {} (each replication faces the same workload; 95% \
             interval of the differences over {} replications):</p>\n<ul class=\"paired\">",
            escape(&file.points[last].scenario.strategies[0].name),
            v.replications
        );
        for p in &v.paired {
            let _ = writeln!(h, "<li>{}</li>", escape(p));
        }
        h.push_str("</ul>\n");
    }
    if result.points.len() > 1 {
        h.push_str(
            "<p>Ranking at each sweep point:</p>\n<div class=\"scroll\">\n<table class=\"summary\">\n<thead><tr>",
        );
        for a in &file.axes {
            let _ = write!(h, "<th class=\"name\">{}</th>", heading(&a.path));
        }
        h.push_str("<th class=\"name\">ranking</th></tr></thead>\n<tbody>\n");
        for (i, p) in result.points.iter().enumerate() {
            let v = verdict(p, &file.points[i].scenario);
            h.push_str("<tr>");
            for label in &p.labels {
                let _ = write!(h, "<td class=\"name\">{}</td>", escape(label));
            }
            let ranking: Vec<String> = v
                .lines
                .iter()
                .map(|l| {
                    format!(
                        "{}.&nbsp;{}{}",
                        l.rank,
                        escape(&l.strategy),
                        if l.loses_more {
                            "&nbsp;(loses more)"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            let _ = writeln!(
                h,
                "<td class=\"name\">{}</td></tr>",
                ranking.join(" &ensp; ")
            );
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    }
    h.push_str("</section>\n");
}

/// `text` with its first letter in upper case.
fn upper_first(text: &str) -> String {
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
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
    fn headings_break_between_words_only() {
        assert_eq!(heading("recovery_peak_rps"), "recovery_<wbr>peak_<wbr>rps");
        assert_eq!(heading("completion_s"), "completion_s");
        assert_eq!(
            heading("server.outages.0.error_rate"),
            "server.<wbr>outages.0.<wbr>error_<wbr>rate"
        );
        assert_eq!(heading("a<b"), "a&lt;b");
    }

    #[test]
    fn strips_an_xml_prolog_before_inlining() {
        assert_eq!(strip_prolog("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_prolog("<svg/>"), "<svg/>");
    }
}
