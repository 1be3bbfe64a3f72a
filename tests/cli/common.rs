//! Helpers shared by the integration tests.

#![allow(dead_code)] // each test module uses a different subset

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// The `herdsim` binary built for this test run.
pub fn herdsim() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
}

/// A temporary folder holding scenario files and outputs; removed on drop.
pub struct Workspace {
    pub dir: TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        Workspace {
            dir: tempfile::tempdir().expect("create a temporary folder"),
        }
    }

    /// A workspace in `parent` instead of the temporary folder's (`TMPDIR`).
    pub fn in_dir(parent: &Path) -> Self {
        Workspace {
            dir: tempfile::tempdir_in(parent).expect("create a temporary folder"),
        }
    }

    /// Writes `text` to `name` in the workspace and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the file's folder");
        }
        std::fs::write(&path, text).expect("write scenario");
        path
    }

    /// The output folder the tests pass as `--out`.
    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A small valid scenario: 50 clients, 5 slots, constant 10 ms latency and service, a 1 s
/// outage at t = 0, two strategies. Runs in milliseconds.
pub const TINY: &str = r#"
name = "tiny"
seed = 7
replications = 2

[clients]
count = 50

[network]
latency = { dist = "constant", value = "10ms" }

[server]
concurrency = 5
queue = 5
service = { dist = "constant", value = "10ms" }

[[server.outages]]
start = "0s"
end = "1s"

[retry]
max_attempts = 8
timeout = "1s"

[[strategy]]
name = "none"
base = "100ms"
cap = "2s"
jitter = "none"

[[strategy]]
name = "full"
base = "100ms"
cap = "2s"
jitter = "full"
"#;

/// TINY with the one occurrence of `from` replaced by `to`.
pub fn tiny_with(from: &str, to: &str) -> String {
    assert_eq!(
        TINY.matches(from).count(),
        1,
        "`{from}` must occur exactly once in TINY"
    );
    TINY.replacen(from, to, 1)
}

/// Parses and validates scenario text through the library, panicking with the messages.
pub fn scenario(text: &str) -> herdsim::model::Scenario {
    let file = herdsim::scenario::sweep::load_str("test.toml", text)
        .unwrap_or_else(|e| panic!("scenario invalid:\n{e}"));
    file.points[0].scenario.clone()
}

/// Runs one strategy of `scenario` once with the streams of replication 0.
pub fn run(scenario: &herdsim::model::Scenario, strategy: usize) -> herdsim::metrics::RunMetrics {
    let seed = herdsim::engine::RunSeed {
        seed: scenario.seed,
        replication: 0,
        point: 0,
    };
    herdsim::engine::Simulation::new(scenario, strategy, seed, true).run()
}

/// A scenario for exact hand-worked tests: constant one-way `latency` (e.g. `"10ms"`), the
/// bodies of `[clients]`, `[server]` (outages included) and `[retry]`, then `rest` verbatim
/// (strategies, `[fallback]`, ...). Constant latencies make every instant exact.
pub fn exact_scenario(
    latency: &str,
    clients: &str,
    server: &str,
    retry: &str,
    rest: &str,
) -> String {
    format!(
        r#"
name = "exact"
[clients]
{clients}
[network]
latency = {{ dist = "constant", value = "{latency}" }}
[server]
{server}
[retry]
{retry}
{rest}
"#
    )
}

/// A small valid v2 scenario: a closed and an open population calling a graph of two
/// services (`api` calls `db`), two strategies. Only validated in tests (`check` or the
/// library), never run: the v2 engine is not in this crate yet. Line numbers in expected
/// messages are V2's (line 1 is its leading blank line).
pub const V2: &str = r#"
name = "v2"

[[clients]]
name = "herd"
count = 20

[[clients]]
name = "web"
rate = 50
end = "10s"

[network]
latency = { dist = "constant", value = "1ms" }

[[service]]
name = "api"
concurrency = 4
service = { dist = "constant", value = "5ms" }
calls = ["db"]

[[service]]
name = "db"
concurrency = 2
service = { dist = "constant", value = "2ms" }

[retry]
max_attempts = 4
base = "100ms"
cap = "2s"

[[strategy]]
name = "full"
jitter = "full"

[[strategy]]
name = "slow"
base = "1s"
cap = "5s"
"#;

/// V2 with the one occurrence of `from` replaced by `to`.
pub fn v2_with(from: &str, to: &str) -> String {
    assert_eq!(
        V2.matches(from).count(),
        1,
        "`{from}` must occur exactly once in V2"
    );
    V2.replacen(from, to, 1)
}

/// A CSV file as (header, rows).
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let header = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            r.expect("a well-formed row")
                .iter()
                .map(String::from)
                .collect()
        })
        .collect();
    (header, rows)
}

/// The index of column `name` in `header`.
pub fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}
