//! Charts and `report.html`: which files a run writes, that they are valid PNG / SVG / HTML
//! with the expected content, that `--format` and `--no-charts` are obeyed, and that a
//! failure to write a chart is exit status 1.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{TINY, Workspace, herdsim};

const PLAIN: &[&str] = &["load", "summary", "latency"];
const SWEEP: &[&str] = &["sweep_calls", "sweep_completion", "sweep_peak"];

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
        assert!(w >= 1000 && h >= 400, "{stem}.png is {w}x{h}");
        // A blank or text-less image compresses to a few kB; a drawn chart does not.
        assert!(idat > 15_000, "{stem}.png has {idat} bytes of image data");
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

#[test]
fn svg_charts_name_the_strategies_and_label_their_axes() {
    let ws = Workspace::new();
    let dir = run(&ws, TINY, &["--format", "svg"]);
    let load = check_svg(&dir.join("load.svg"));
    for text in [
        "none: arrivals at the server",
        "full: arrivals at the server",
        "full: held by the server",
        "req/s",
        "requests",
        "time since start (s)",
        "outage",
        // 5 slots / 10 ms constant service.
        "capacity 500 req/s",
    ] {
        assert!(load.contains(text), "load.svg lacks {text:?}");
    }
    let summary = check_svg(&dir.join("summary.svg"));
    for text in [
        "attempts reaching the server",
        "completion time (s)",
        "peak arrivals (req/s)",
        // Bar labels: plotters writes each text on its own line.
        ">\nnone\n<",
        ">\nfull\n<",
        "whiskers: 95% CI",
    ] {
        assert!(summary.contains(text), "summary.svg lacks {text:?}");
    }
    let latency = check_svg(&dir.join("latency.svg"));
    for text in ["latency (s", "requests finished within (%)", "none", "full"] {
        assert!(latency.contains(text), "latency.svg lacks {text:?}");
    }
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
    // Self-contained: no script, nothing fetched (the SVG namespace is a name, not a fetch).
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\""));
    assert_eq!(
        html.matches("http").count(),
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    // The scenario text, escaped.
    assert!(html.contains("name = &quot;tiny&quot;"));
    assert!(html.contains("latency = { dist = &quot;constant&quot;, value = &quot;10ms&quot; }"));

    // The summary table: one row per strategy; in each numeric column the best value is
    // highlighted unless every strategy has the same value. Checked against summary.csv for
    // calls (lowest is best), succeeded (highest) and wasted.
    assert!(html.contains("<table class=\"summary\">"));
    let csv = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let rows_csv: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let table = &html[html.find("<table").unwrap()..html.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect(); // skip the header row
    assert_eq!(rows.len(), rows_csv.len());
    // (summary.csv column, table cell index after the name, higher is better)
    for (column, cell, higher) in [
        ("calls", 0, false),
        ("succeeded", 4, true),
        ("wasted", 9, false),
    ] {
        let k = header.iter().position(|h| *h == column).unwrap();
        let values: Vec<f64> = rows_csv.iter().map(|r| r[k].parse().unwrap()).collect();
        let best = if higher {
            values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        } else {
            values.iter().copied().fold(f64::INFINITY, f64::min)
        };
        let all_equal = values.iter().all(|v| *v == values[0]);
        for (r, value) in rows_csv.iter().zip(&values) {
            let name = &r[0];
            let row = rows
                .iter()
                .find(|row| row.contains(&format!("</span>{name}</td>")))
                .unwrap_or_else(|| panic!("no row for {name}"));
            let cells: Vec<&str> = row.split("<td").skip(2).collect(); // skip the name cell
            let highlighted = cells[cell].starts_with(" class=\"best\"");
            assert_eq!(
                highlighted,
                *value == best && !all_equal,
                "{name}: {column} = {value}, best {best}"
            );
        }
    }
    assert!(table.contains("class=\"best\""));
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
        assert!(
            svg.contains(">\nnone\n<") && svg.contains(">\nfull\n<"),
            "{stem}: legend"
        );
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
    assert_eq!(files.len(), 13);
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
