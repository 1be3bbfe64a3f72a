//! Charts and `report.html`: which files a run writes, that they are valid PNG / SVG / HTML
//! with the expected content, that the report opens with the verdict and never highlights a
//! strategy that loses more requests, that `--format` and `--no-charts` are obeyed, and that
//! a failure to write a chart is exit status 1.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{TINY, Workspace, column, herdsim, read_csv};

/// The charts of a scenario with one population, one service, two strategies and two
/// replications (so paired comparisons).
const PLAIN: &[&str] = &["summary", "attempts", "load", "raster", "latency", "paired"];
const SWEEP: &[&str] = &[
    "sweep_calls",
    "sweep_completion",
    "sweep_peak",
    "sweep_succeeded",
];

/// Runs `text` (saved as `s.toml`) with `args`, asserts success, returns the output folder.
fn run(ws: &Workspace, text: &str, args: &[&str]) -> PathBuf {
    let file = ws.file("s.toml", text);
    herdsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(ws.out())
        .arg("--quiet")
        .args(args)
        .assert()
        .success();
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.split('"').next())
        .expect("scenario has a name");
    ws.out().join(name)
}

fn tiny_sweep() -> String {
    // [sweep] goes last: keys after a table header belong to that table.
    TINY.replace("name = \"tiny\"", "name = \"tiny-sweep\"")
        + "\n[sweep]\n\"clients.count\" = [10, 20, 40]\n"
}

/// The chart and report files in `dir`, sorted.
fn chart_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png") || n.ends_with(".svg") || n.ends_with(".html"))
        .collect();
    names.sort();
    names
}

fn expected(stems: &[&str], exts: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = stems
        .iter()
        .flat_map(|s| exts.iter().map(move |e| format!("{s}.{e}")))
        .chain(["report.html".to_string()])
        .collect();
    names.sort();
    names
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Checks the PNG structure: signature, IHDR first, every chunk's CRC, IDAT present, IEND
/// last. Returns (width, height, bytes of compressed image data).
fn check_png(path: &Path) -> (u32, u32, usize) {
    let data = fs::read(path).unwrap();
    assert_eq!(
        &data[..8],
        b"\x89PNG\r\n\x1a\n",
        "{}: PNG signature",
        path.display()
    );
    let mut at = 8;
    let mut chunks = Vec::new();
    let (mut width, mut height, mut idat) = (0, 0, 0);
    while at < data.len() {
        let len = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let kind = &data[at + 4..at + 8];
        let body = &data[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(data[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(
            crc,
            crc32(&data[at + 4..at + 8 + len]),
            "{}: CRC of chunk {}",
            path.display(),
            String::from_utf8_lossy(kind)
        );
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap());
                height = u32::from_be_bytes(body[4..8].try_into().unwrap());
            }
            b"IDAT" => idat += len,
            _ => {}
        }
        chunks.push(String::from_utf8_lossy(kind).into_owned());
        at += 12 + len;
    }
    assert_eq!(at, data.len(), "{}: no trailing bytes", path.display());
    assert_eq!(chunks.first().map(String::as_str), Some("IHDR"));
    assert_eq!(chunks.last().map(String::as_str), Some("IEND"));
    (width, height, idat)
}

/// Checks an SVG document's frame and returns its text.
fn check_svg(path: &Path) -> String {
    let svg = fs::read_to_string(path).unwrap();
    assert!(
        svg.starts_with("<svg "),
        "{}: starts with <svg",
        path.display()
    );
    assert!(
        svg.contains("viewBox=\"0 0 "),
        "{}: scalable",
        path.display()
    );
    assert!(
        svg.trim_end().ends_with("</svg>"),
        "{}: complete",
        path.display()
    );
    assert!(svg.len() > 5_000, "{}: {} bytes", path.display(), svg.len());
    svg
}

#[test]
fn a_run_writes_every_chart_as_png_and_svg_and_the_report() {
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &[]);
    assert_eq!(chart_files(&dir), expected(PLAIN, &["png", "svg"]));
    for stem in PLAIN {
        let (w, h, idat) = check_png(&dir.join(format!("{stem}.png")));
        assert!(w >= 1000 && h >= 200, "{stem}.png is {w}x{h}");
        // A blank or text-less image compresses to a few kB; a drawn chart does not.
        assert!(idat > 8_000, "{stem}.png has {idat} bytes of image data");
        check_svg(&dir.join(format!("{stem}.svg")));
    }
    // No temporary files are left behind.
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Whether an SVG chart shows `text`: its glyphs are paths, with the words in an invisible
/// `<text>` element over them.
fn shows(svg: &str, text: &str) -> bool {
    svg.split("<text ")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')
                .and_then(|(_, rest)| rest.split_once("</text>"))
        })
        .any(|(words, _)| words.contains(text))
}

#[test]
fn svg_charts_name_the_strategies_and_label_their_axes() {
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &["--format", "svg"]);
    let load = check_svg(&dir.join("load.svg"));
    for text in [
        "none: arrivals",
        "full: arrivals",
        "full: held by the server",
        "req/s",
        "requests",
        "time since start (s)",
        "outage: down",
        "per 100 ms bucket",
        // 5 slots / 10 ms constant service.
        "capacity 500 req/s: 5 slots / 10ms mean service",
    ] {
        assert!(shows(&load, text), "load.svg lacks {text:?}");
    }
    let summary = check_svg(&dir.join("summary.svg"));
    for text in [
        "work: calls",
        "completion_s",
        "peaks per 100 ms bucket",
        "succeeded vs gave up",
        "one call per request",
        "capacity (500 req/s)",
        "none",
        "full",
        "whiskers: 95% CI",
    ] {
        assert!(shows(&summary, text), "summary.svg lacks {text:?}");
    }
    let latency = check_svg(&dir.join("latency.svg"));
    for text in ["latency (s", "requests finished within (%)", "none", "full"] {
        assert!(shows(&latency, text), "latency.svg lacks {text:?}");
    }
    let attempts = check_svg(&dir.join("attempts.svg"));
    for text in [
        "first attempts",
        "retries",
        "down",
        "attempts sent/s",
        // Counted when sent, not when they arrive: the title must not say "reaching".
        "tiny: client attempts sent to the server per second, by send time, per 100 ms bucket",
    ] {
        assert!(shows(&attempts, text), "attempts.svg lacks {text:?}");
    }
    assert!(!shows(&attempts, "reaching"), "attempts.svg says reaching");
    let raster = check_svg(&dir.join("raster.svg"));
    assert!(shows(&raster, "by first failure"));
    assert!(shows(&raster, "rejected (503, 429, 500, ...)"));
    assert!(
        raster.contains("href=\"data:image/png;base64,"),
        "marks embedded"
    );
    let paired = check_svg(&dir.join("paired.svg"));
    assert!(shows(&paired, "difference vs none"));
    // Glyphs are defined once per chart, with ids unique to it.
    assert!(load.contains("<path id=\"load-g"));
    assert!(!load.contains("id=\"summary-g"));
}

#[test]
fn the_report_inlines_every_chart_and_highlights_the_best_values() {
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &[]);
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for stem in PLAIN {
        assert!(
            html.contains(&format!("<figure id=\"chart-{stem}\">")),
            "{stem}"
        );
        assert!(html.contains(&format!("href=\"{stem}.png\"")), "{stem}");
        assert!(html.contains(&format!("href=\"{stem}.svg\"")), "{stem}");
    }
    assert_eq!(html.matches("<svg ").count(), PLAIN.len(), "charts inline");
    assert_eq!(html.matches("<figcaption>").count(), PLAIN.len());
    // With an outage to recover from, the summary table has the console's `recovered_s`
    // column, cell for cell (it had none).
    assert!(html.contains("<th>recovered_s</th>"), "{html}");
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "recovered_s").unwrap();
    for row in summary.lines().skip(1) {
        let recovered = row.split(',').nth(at).unwrap();
        assert!(!recovered.is_empty(), "{row}");
        // As the console rounds it: to 0.01 s.
        let shown = (recovered.parse::<f64>().unwrap() * 100.0).round() / 100.0;
        assert!(
            html.contains(&format!(">{shown}</td></tr>")),
            "{shown} in {html}"
        );
    }
    // The attempts chart's caption names the colours the chart draws (it said grey).
    assert!(
        html.contains("first attempts (blue) with the retries (orange) stacked on top"),
        "{html}"
    );
    let attempts = fs::read_to_string(dir.join("attempts.svg")).unwrap();
    assert!(attempts.contains("fill=\"#0072B2\"") && attempts.contains("fill=\"#D55E00\""));
    // Counts that are means (calls, succeeded, gave_up) all keep one decimal, as the console
    // writes them: the cells read as summary.csv rounded to 0.1, the trailing .0 dropped.
    let csv = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let body = &html[html.find("<table class=\"summary\"").unwrap()..];
    let body = &body[..body.find("</table>").unwrap()];
    for row in lines {
        let cells: Vec<&str> = row.split(',').collect();
        let tr = body
            .split("<tr>")
            .find(|r| r.contains(&format!("</span>{}</td>", cells[0])))
            .unwrap();
        for column in ["calls", "succeeded", "gave_up"] {
            let v: f64 = cells[head.iter().position(|h| *h == column).unwrap()]
                .parse()
                .unwrap();
            let tenths = (v * 10.0).round();
            let want = if tenths % 10.0 == 0.0 {
                format!("{}", tenths / 10.0)
            } else {
                format!("{:.1}", tenths / 10.0)
            };
            assert!(
                tr.contains(&format!("<td>{want}")) || tr.contains(&format!("\"best\">{want}")),
                "{column} {v} as {want}: {tr}"
            );
        }
        // The verdict's "gave up" reads as the table's gave_up cell, mean and interval (it
        // wrote 2279 where the table said 2279.4, and ± 2.81 beside ± 2.8).
        let text = |cell: &str| {
            let cell = &cell[cell.find('>').unwrap() + 1..];
            let cell = &cell[..cell.find("</td>").unwrap()];
            cell.replace("<span class=\"ci\">", "")
                .replace("</span>", "")
        };
        let gave_up_at = body
            .split("<th")
            .filter(|th| th.starts_with('>') || th.starts_with(' '))
            .position(|th| th.starts_with(">gave_up<"))
            .unwrap();
        let table_cell = text(tr.split("<td").nth(gave_up_at + 1).unwrap());
        let verdict = &html[html.find("<table class=\"verdict\">").unwrap()..];
        let verdict_row = verdict
            .split("<tr")
            .find(|r| r.contains(&format!("</span>{}</td>", cells[0])))
            .unwrap();
        assert_eq!(
            text(&verdict_row[verdict_row.find("class=\"lost\"").unwrap()..]),
            format!("gave up {table_cell}"),
            "{verdict_row} / {tr}"
        );
    }
    // Self-contained: no script, nothing fetched (the SVG namespace is a name, not a fetch).
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\""));
    let without_data: String = html
        .split("data:image/png;base64,")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                &part[part.find('"').unwrap()..]
            }
        })
        .collect();
    assert_eq!(
        without_data.matches("http").count(),
        without_data
            .matches("xmlns=\"http://www.w3.org/2000/svg\"")
            .count()
    );
    // The scenario text, escaped.
    assert!(html.contains("name = &quot;tiny&quot;"));
    assert!(html.contains("latency = { dist = &quot;constant&quot;, value = &quot;10ms&quot; }"));

    // The verdict comes first, before the facts and the summary table.
    let verdict = html.find("<section id=\"verdict\">").expect("a verdict");
    assert!(verdict < html.find("<dl class=\"facts\">").unwrap());
    assert!(verdict < html.find("id=\"summary\"").unwrap());
    let losers = losers(&html);

    // The summary table: one row per strategy; in each numeric column the best value among
    // the strategies that lose no more requests than any other is highlighted, unless there
    // is only one such strategy or they all have the same value. Checked against summary.csv
    // for calls (lowest is best), succeeded (highest) and wasted.
    assert!(html.contains("<table class=\"summary\">"));
    let csv = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let rows_csv: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let table = &html[html.find("<table class=\"summary\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect(); // skip the header row
    assert_eq!(rows.len(), rows_csv.len());
    // (summary.csv column, table cell index after the name (rank first), higher is better)
    for (column, cell, higher) in [
        ("calls", 1, false),
        ("succeeded", 5, true),
        ("wasted", 10, false),
    ] {
        let k = header.iter().position(|h| *h == column).unwrap();
        let leading: Vec<f64> = rows_csv
            .iter()
            .filter(|r| !losers.contains(&r[0]))
            .map(|r| r[k].parse().unwrap())
            .collect();
        let best = if higher {
            leading.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        } else {
            leading.iter().copied().fold(f64::INFINITY, f64::min)
        };
        let comparable = leading.len() > 1 && leading.iter().any(|v| *v != leading[0]);
        for r in &rows_csv {
            let name = &r[0];
            let value: f64 = r[k].parse().unwrap();
            let row = rows
                .iter()
                .find(|row| row.contains(&format!("</span>{name}</td>")))
                .unwrap_or_else(|| panic!("no row for {name}"));
            let cells: Vec<&str> = row.split("<td").skip(2).collect(); // skip the name cell
            let highlighted = cells[cell].starts_with(" class=\"best\"");
            assert_eq!(
                highlighted,
                comparable && !losers.contains(name) && value == best,
                "{name}: {column} = {value}, best {best}, losers {losers:?}"
            );
        }
    }
}

/// The strategies the verdict says lose more requests than another.
fn losers(html: &str) -> Vec<String> {
    let section = &html[html.find("<section id=\"verdict\">").expect("a verdict")..];
    let section = &section[..section.find("</section>").unwrap()];
    section
        .split("<tr class=\"loses\">")
        .skip(1)
        .map(|row| {
            let name = row.split("</span>").nth(1).unwrap();
            name[..name.find("</td>").unwrap()].to_string()
        })
        .collect()
}

#[test]
fn a_sweep_adds_the_sweep_charts_to_files_and_report() {
    let ws = Workspace::new();
    let dir = run(&ws, &tiny_sweep(), &[]);
    let all: Vec<&str> = PLAIN.iter().chain(SWEEP).copied().collect();
    assert_eq!(chart_files(&dir), expected(&all, &["png", "svg"]));
    for stem in SWEEP {
        check_png(&dir.join(format!("{stem}.png")));
        let svg = check_svg(&dir.join(format!("{stem}.svg")));
        assert!(svg.contains("clients.count"), "{stem}: x axis named");
        assert!(shows(&svg, "none") && shows(&svg, "full"), "{stem}: legend");
    }
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    for stem in &all {
        assert!(
            html.contains(&format!("<figure id=\"chart-{stem}\">")),
            "{stem}"
        );
    }
    // Single charts show the last sweep point, and say so.
    let load = fs::read_to_string(dir.join("load.svg")).unwrap();
    assert!(load.contains("at clients.count = 40"));
    // One body of the summary table per sweep point.
    let summary = html.split("id=\"summary\"").nth(1).unwrap();
    let summary = summary.split("<h2").next().unwrap();
    assert_eq!(summary.matches("<tbody>").count(), 3);
    // The verdict of the last point, then the ranking at every point.
    let verdict = html.split("<section id=\"verdict\">").nth(1).unwrap();
    let verdict = verdict.split("</section>").next().unwrap();
    assert!(
        verdict.contains("<h2>Verdict at clients.count = 40</h2>"),
        "{verdict}"
    );
    assert!(verdict.contains("Ranking at each sweep point"));
    // The facts describe the server as every point has it (a sweep of clients leaves it).
    assert!(
        html.contains("<dt>server</dt><dd>server: 5 slots, 5 queue places"),
        "{html}"
    );
    assert!(!html.contains("the verdict's point"));
    let peak = check_svg(&dir.join("sweep_peak.svg"));
    assert!(shows(
        &peak,
        "peak arrivals at the server per 100 ms bucket"
    ));
    let calls = check_svg(&dir.join("sweep_calls.svg"));
    assert!(shows(
        &calls,
        "tiny-sweep: calls the server absorbed vs clients.count"
    ));
    // The success share, on a linear axis in percent, means without whiskers.
    let succeeded = check_svg(&dir.join("sweep_succeeded.svg"));
    assert!(shows(
        &succeeded,
        "tiny-sweep: share of requests that succeeded vs clients.count (mean of 2 runs)"
    ));
    assert!(shows(&succeeded, "succeeded (% of logical requests)"));
    assert!(!shows(&succeeded, "(log)"));
    assert!(!shows(&succeeded, "whiskers"));
}

/// A sweep that changes the server: the facts describe it as the verdict's point (the last)
/// has it, and say so; they gave the first point's, under a verdict about the last
/// (helper-98).
#[test]
fn a_swept_server_is_described_at_the_verdicts_point() {
    let ws = Workspace::new();
    let text = TINY.replace("name = \"tiny\"", "name = \"swept-server\"")
        + "\n[sweep]\n\"server.concurrency\" = [2, 7]\n";
    let dir = run(&ws, &text, &["--format", "svg"]);
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains(
            "<dt>server</dt><dd>server: 7 slots, 5 queue places, service constant 10ms, down outage [0s, 1s)<br>(as at server.concurrency = 7, the verdict's point: the sweep changes it)</dd>"
        ),
        "{html}"
    );
}

/// A graph whose entry tier is `api` and whose second service is called `server`: the sweep
/// charts plot the entry service's calls and peaks, so they must name `api`, never "the
/// server".
#[test]
fn the_sweep_charts_of_a_graph_name_its_entry_service() {
    let ws = Workspace::new();
    let text = TINY
        .replace("name = \"tiny\"", "name = \"tiny-graph\"")
        .replace(
            "[server]\n",
            "[[service]]\nname = \"api\"\ncalls = [\"server\"]\nconcurrency = 20\n\
             service = { dist = \"constant\", value = \"1ms\" }\n\n[[service]]\nname = \"server\"\n",
        )
        .replace("[[server.outages]]", "[[service.outages]]")
        + "\n[sweep]\n\"clients.count\" = [10, 20]\n";
    let dir = run(&ws, &text, &["--format", "svg"]);
    let calls = check_svg(&dir.join("sweep_calls.svg"));
    assert!(
        shows(&calls, "tiny-graph: calls api absorbed vs clients.count"),
        "{calls}"
    );
    assert!(shows(&calls, "calls (attempts reaching api)"));
    let peak = check_svg(&dir.join("sweep_peak.svg"));
    assert!(shows(
        &peak,
        "tiny-graph: peak load at api vs clients.count"
    ));
    assert!(shows(
        &peak,
        "peak arrivals at api per 100 ms bucket (req/s)"
    ));
    for svg in [&calls, &peak] {
        assert!(!shows(svg, "the server"));
    }
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("retry work api had to absorb"));
    assert!(html.contains("the load api must survive"));
    assert!(!html.contains("the server had to") && !html.contains("the server must"));
}

/// A sweep over whole numbers (slot counts 2, 3, 4) ticks its x axis at whole numbers: it
/// read 0, 0.5, 1, ... 4, half a slot being no value anyone can set.
#[test]
fn a_sweep_over_whole_numbers_has_whole_ticks() {
    let ws = Workspace::new();
    let text = TINY.replace("name = \"tiny\"", "name = \"tiny-slots\"")
        + "\n[sweep]\n\"server.concurrency\" = [2, 3, 4]\n";
    let dir = run(&ws, &text, &["--format", "svg"]);
    let calls = check_svg(&dir.join("sweep_calls.svg"));
    let ticks: Vec<&str> = calls
        .split("<text ")
        .skip(1)
        .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
        .map(|(words, _)| words)
        .collect();
    let x_desc = ticks
        .iter()
        .position(|t| *t == "server.concurrency")
        .unwrap();
    for v in ["0", "1", "2", "3", "4"] {
        assert!(ticks[x_desc..].contains(&v), "{v} in {ticks:?}");
    }
    assert!(
        !ticks[x_desc + 1..].iter().any(|t| t.contains('.')),
        "{ticks:?}"
    );
}

/// The budgets.toml case, small: a breaker shared by the fleet opens at the first failure
/// and stays open, so every request gives up at once, with almost no calls: fastest and
/// lightest, and last.
const LOSER: &str = r#"
name = "loser"
seed = 3
replications = 3

[clients]
count = 200

[network]
latency = { dist = "constant", value = "5ms" }

[server]
concurrency = 5
queue = 10
service = { dist = "constant", value = "10ms" }

[[server.outages]]
start = "0s"
end = "1s"

[retry]
max_attempts = 10
base = "50ms"
cap = "1s"
jitter = "full"

[[strategy]]
name = "retry"

[[strategy]]
name = "breaker"
breaker = { failure_rate = 0.5, window = "10s", min_calls = 1, open_for = "1h", half_open_probes = 1, scope = "global" }
"#;

#[test]
fn a_strategy_that_gives_up_on_everything_ranks_last_and_is_never_highlighted() {
    let ws = Workspace::new();
    let file = ws.file("s.toml", LOSER);
    let out = herdsim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(ws.out())
        .output()
        .unwrap();
    assert!(out.status.success());
    let console = String::from_utf8_lossy(&out.stdout);
    // The header names the bucket; the verdict comes before the table, ranked.
    let lines: Vec<&str> = console.lines().collect();
    assert!(lines[0].ends_with(", bucket 100 ms"), "{console}");
    assert!(
        lines[1].starts_with("verdict: ranked by give-ups"),
        "{console}"
    );
    let first = lines
        .iter()
        .position(|l| l.trim_start().starts_with("1."))
        .unwrap();
    assert!(lines[first].contains("retry"), "{console}");
    assert!(
        lines[first + 1].trim_start().starts_with("2.") && lines[first + 1].contains("breaker")
    );
    assert!(lines[first + 1].contains("succeeded 0%"), "{console}");
    // Marked as the report marks it (helper-98: the console did not).
    assert!(
        lines[first + 1].contains(" breaker (loses more) "),
        "{console}"
    );
    assert!(!lines[first].contains("loses more"), "{console}");
    assert!(
        console.contains("breaker: fastest, lightest")
            && console.contains("because it gave up on 100%"),
        "{console}"
    );
    let table = lines
        .iter()
        .position(|l| l.trim_start().starts_with("strategy"))
        .unwrap();
    assert!(
        table > first + 1,
        "the verdict opens the output:\n{console}"
    );
    // Column names are the CSV's.
    for column in [
        "calls",
        "completion_s",
        "peak_rps",
        "recovery_peak_rps",
        "latency_p99_s",
    ] {
        assert!(
            lines[table].split_whitespace().any(|c| c == column),
            "{column}"
        );
    }

    let html = fs::read_to_string(ws.out().join("loser/report.html")).unwrap();
    assert_eq!(losers(&html), ["breaker"]);
    assert!(
        html.contains("<li>breaker: fastest, lightest"),
        "the trade, in words"
    );
    let table = &html[html.find("<table class=\"summary\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let breaker = table
        .split("<tr>")
        .find(|r| r.contains("</span>breaker</td>"))
        .unwrap();
    assert!(!breaker.contains("class=\"best\""), "{breaker}");
    // One strategy leads: nothing to compare it with, so nothing is highlighted, and the
    // caption does not explain a highlight that is not there.
    assert!(!table.contains("class=\"best\""));
    assert!(!html.contains("Highlighted:"));
    // Peaks name their bucket; headings break between words only.
    assert!(table.contains("peak_<wbr>rps<br><span class=\"unit\">per 100 ms</span>"));
    assert!(table.contains("<th>completion_s</th>"));
    // Linear axes (these values span less than 100x) are not marked; log ones (here by
    // --log-y) are, in every panel of the bar charts: ticks of 100, 1000 and 10k read as a
    // linear axis to anyone not told.
    let summary = check_svg(&ws.out().join("loser/summary.svg"));
    assert!(shows(&summary, "calls per run (label: x per request)"));
    assert!(!shows(&summary, "(log)"));
    let log = ws.path().join("log");
    herdsim()
        .args(["run", "--quiet", "--log-y", "--format", "svg", "--out"])
        .arg(&log)
        .arg(&file)
        .assert()
        .success();
    let summary = check_svg(&log.join("loser/summary.svg"));
    for axis in [
        "calls per run (label: x per request) (log)",
        "time until the last request ended (s) (log)",
        // Wrapped on two lines.
        "(label: x capacity) (log)",
    ] {
        assert!(shows(&summary, axis), "{axis}");
    }
}

/// Two populations calling a graph of two services, the database down at first.
const GRAPH: &str = r#"
name = "graph"
seed = 5
replications = 2

[[clients]]
name = "web"
count = 60

[[clients]]
name = "batch"
rate = 40
end = "2s"

[network]
latency = { dist = "constant", value = "2ms" }

[[service]]
name = "api"
concurrency = 20
service = { dist = "constant", value = "5ms" }
calls = ["db"]

[[service]]
name = "db"
concurrency = 3
queue = 5
service = { dist = "constant", value = "10ms" }
retry = "strategy"

[[service.outages]]
start = "0s"
end = "500ms"

[retry]
max_attempts = 4
timeout = "1s"

[[strategy]]
name = "none"
base = "50ms"
cap = "500ms"

[[strategy]]
name = "full"
base = "50ms"
cap = "500ms"
jitter = "full"
"#;

#[test]
fn populations_and_services_get_a_breakdown_chart_each_and_the_load_a_panel_per_service() {
    let ws = Workspace::new();
    let dir = run(&ws, GRAPH, &[]);
    let mut stems: Vec<&str> = PLAIN.to_vec();
    stems.extend(["populations", "services"]);
    assert_eq!(chart_files(&dir), expected(&stems, &["png", "svg"]));
    for stem in &stems {
        check_png(&dir.join(format!("{stem}.png")));
    }
    let load = check_svg(&dir.join("load.svg"));
    for text in [
        "none: arrivals at api",
        "full: arrivals at db",
        "outage: down",
    ] {
        assert!(shows(&load, text), "load.svg lacks {text:?}");
    }
    let services = check_svg(&dir.join("services.svg"));
    for text in ["api: 20 slots", "db: 3 slots", "calls per client request"] {
        assert!(shows(&services, text), "services.svg lacks {text:?}");
    }
    let populations = check_svg(&dir.join("populations.svg"));
    for text in [
        "web: 60 requests per run",
        "batch: ",
        "succeeded vs gave up",
    ] {
        assert!(shows(&populations, text), "populations.svg lacks {text:?}");
    }
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(html.matches("<figure ").count(), stems.len());
    // The verdict's multiples are of the entry service's capacity: it says whose.
    assert!(
        html.contains("(api, the entry service: 20 slots / "),
        "the capacity note names the entry service"
    );
    // And, for sizing, the service with the least capacity of its own.
    assert!(
        html.contains("; the least of any service: db, "),
        "the capacity note names the tightest service"
    );
}

/// In a graph, the capacity note names the service that takes the fewest client requests
/// per second: its own capacity over the calls it gets per request (db, called three
/// times, before the smaller but once-called and autoscaled cache), also behind an entry
/// with no service time of its own (a router, whose capacity is not defined).
#[test]
fn the_capacity_note_names_the_tier_that_saturates_first() {
    let text = r#"
name = "g"
time_limit = "10s"
[clients]
count = 10
requests = 1
[network]
latency = { dist = "constant", value = "1ms" }
[[service]]
name = "api"
concurrency = 100
service = { dist = "constant", value = "0ms" }
calls = ["db", "db", "db", "cache"]
[[service]]
name = "db"
concurrency = 20
service = { dist = "constant", value = "1ms" }
[[service]]
name = "cache"
concurrency = 10
service = { dist = "constant", value = "1ms" }
autoscale = { target = 0.5, min = 10, max = 100, interval = "1s", warmup = "0s" }
[retry]
max_attempts = 1
[[strategy]]
name = "s"
base = "100ms"
cap = "1s"
"#;
    let ws = Workspace::new();
    ws.file("g.toml", text);
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "g.toml", "--out", "out", "--no-charts"])
        .output()
        .expect("run herdsim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  capacity n/a (zero service time; the least of any service for the clients' requests: db, 20\u{2009}000 req/s (20 slots / 1ms mean service), 3 calls per request: 6667 requests/s); peaks per "),
        "{stdout}"
    );
    // With db called once, cache is the least, and its figure is the one at the start.
    ws.file(
        "g.toml",
        &text.replace("[\"db\", \"db\", \"db\", \"cache\"]", "[\"db\", \"cache\"]"),
    );
    let out = herdsim()
        .current_dir(ws.path())
        .args(["run", "g.toml", "--out", "out2", "--no-charts"])
        .output()
        .expect("run herdsim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(zero service time; the least of any service: cache, 10\u{2009}000 req/s (10 slots / 1ms mean service at the start)); peaks per "),
        "{stdout}"
    );
}

#[test]
fn no_charts_writes_only_the_csv_files() {
    let ws = Workspace::new();
    let dir = run(&ws, &tiny_sweep(), &["--no-charts"]);
    assert!(chart_files(&dir).is_empty(), "{:?}", chart_files(&dir));
    assert!(dir.join("summary.csv").exists());
    assert!(dir.join("timeseries.csv").exists());
}

#[test]
fn format_svg_writes_no_png_and_format_png_no_svg() {
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &["--format", "svg"]);
    assert_eq!(chart_files(&dir), expected(PLAIN, &["svg"]));
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(!html.contains(".png\""), "no link to a file not written");

    let ws = Workspace::new();
    let dir = run(&ws, TINY, &["--format", "png"]);
    assert_eq!(chart_files(&dir), expected(PLAIN, &["png"]));
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(
        html.matches("<svg ").count(),
        PLAIN.len(),
        "the report still inlines SVG"
    );
    assert!(!html.contains(".svg\""), "no link to a file not written");
}

#[test]
fn charts_and_report_are_byte_identical_across_runs_and_threads() {
    let ws = Workspace::new();
    // One scenario file (its path is in the report), two output folders.
    let file = ws.file("s.toml", &tiny_sweep());
    let dirs: Vec<PathBuf> = [("a", "1"), ("b", "3")]
        .iter()
        .map(|(out, threads)| {
            let out = ws.path().join(out);
            herdsim()
                .arg("run")
                .arg(&file)
                .args(["--quiet", "--threads", threads, "--out"])
                .arg(&out)
                .assert()
                .success();
            out.join("tiny-sweep")
        })
        .collect();
    let files = chart_files(&dirs[0]);
    assert_eq!(files.len(), 2 * (PLAIN.len() + SWEEP.len()) + 1);
    assert_eq!(files, chart_files(&dirs[1]));
    for f in files {
        assert!(
            fs::read(dirs[0].join(&f)).unwrap() == fs::read(dirs[1].join(&f)).unwrap(),
            "{f} differs"
        );
    }
}

#[test]
fn fails_with_exit_1_naming_the_chart_that_cannot_be_written() {
    let ws = Workspace::new();
    let file = ws.file("s.toml", TINY);
    // Files over 8 kB cannot be written: the CSV files fit, the first chart does not.
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"));
    cmd.arg("run")
        .arg(&file)
        .arg("--out")
        .arg(ws.out())
        .arg("--quiet");
    crate::hardening::limit_file_size(&mut cmd, 8000, false);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("/out/tiny/") && (stderr.contains(".svg") || stderr.contains(".png")),
        "{stderr}"
    );
    assert!(
        !ws.out().join("tiny").exists(),
        "nothing of the run is left"
    );
}

/// An OCC server without outages fails only lost writes: the raster's legend says 409, not
/// the codes of a server that refuses.
#[test]
fn an_occ_rasters_failures_are_named_as_conflicts() {
    let text = r#"
name = "occ"
seed = 1
replications = 1
[clients]
count = 20
[network]
latency = { dist = "constant", value = "5ms" }
[server]
occ = true
[retry]
max_attempts = 100
base = "5ms"
cap = "100ms"
jitter = "full"
[[strategy]]
name = "full"
"#;
    let ws = Workspace::new();
    let dir = run(&ws, text, &["--format", "svg"]);
    let raster = check_svg(&dir.join("raster.svg"));
    assert!(shows(&raster, "conflict (409: another write won)"));
    assert!(!shows(&raster, "503"));
}

/// Calls to a fallback server are not in `calls` (the primary's): the verdict shows them
/// beside the work, and the summary table gets their columns, only when some were made.
#[test]
fn the_load_sent_to_a_fallback_server_is_shown_beside_the_work() {
    let text = r#"
name = "fb"
seed = 7
replications = 2
[clients]
count = 300
[network]
latency = { dist = "constant", value = "10ms" }
[server]
concurrency = 20
service = { dist = "constant", value = "10ms" }
[server.rate_limit]
rate = 50
burst = 10
[fallback]
concurrency = 50
service = { dist = "constant", value = "10ms" }
[retry]
max_attempts = 4
base = "100ms"
cap = "1s"
jitter = "full"
rate_limit = { max_retries = 1, escalate_after = 1, default_wait = "1s", max_wait = "5s" }
[[strategy]]
name = "give-up"
[[strategy]]
name = "fallback"
fallback_on = ["rate_limit_escalation"]
"#;
    let ws = Workspace::new();
    let dir = run(&ws, text, &["--format", "svg"]);
    let (header, rows) = read_csv(&dir.join("summary.csv"));
    let fallback: f64 = rows[1][column(&header, "fallback_calls")].parse().unwrap();
    let requests = 300.0;
    assert!(fallback > 0.0);
    assert_eq!(rows[0][column(&header, "fallback_calls")], "0");
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    let shown = format!(
        "+ {} fallback",
        herdsim::report::verdict::times(fallback / requests)
    );
    assert!(html.contains(&shown), "{shown}");
    assert!(html.contains("<th>fallback_<wbr>calls</th>"));
    // Without a fallback, no such column.
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &["--format", "svg"]);
    let html = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(!html.contains("fallback_"));
}

/// A log sweep axis over a few values spread over decades ticks each of them (1-2-5 ticks
/// left 3600 without a label); values too close for their labels get the 1-2-5 ticks.
#[test]
fn a_log_sweep_axis_ticks_its_values_when_they_are_apart() {
    let sweep = |values: &str| {
        TINY.replace("replications = 2", "replications = 1")
            + &format!("\n[sweep]\n\"clients.count\" = [{values}]\n")
    };
    let ticks = |svg: &str| -> Vec<String> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
            .map(|(w, _)| w.to_string())
            .collect()
    };
    let ws = Workspace::new();
    let dir = run(&ws, &sweep("1, 10, 60, 3600"), &["--format", "svg"]);
    let texts = ticks(&check_svg(&dir.join("sweep_calls.svg")));
    // 60 and 3600 are no 1-2-5 ticks of either axis.
    for tick in ["60", "3600"] {
        assert!(texts.iter().any(|t| t == tick), "{tick}: {texts:?}");
    }
    let ws = Workspace::new();
    let close = (10..=20)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
        + ", 2000";
    let dir = run(&ws, &sweep(&close), &["--format", "svg"]);
    let texts = ticks(&check_svg(&dir.join("sweep_calls.svg")));
    for tick in ["11", "13", "17"] {
        assert!(!texts.iter().any(|t| t == tick), "{tick}: {texts:?}");
    }
}
