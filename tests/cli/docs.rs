//! The README and docs/ stand on their own: no references to files outside the repository
//! or to the documents the design came from, every shipped scenario in the README's table,
//! every link to a file of the repository resolving.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::herdsim;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 4, "{docs:?}");
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// Words that point outside the repository, or to the documents herdsim was designed from.
const FOREIGN: [&str; 6] = [
    "../shared",
    "seed 00",
    "seeds 00",
    "DESIGN.md",
    "POLICIES.md",
    "STYLE.md",
];

#[test]
fn readme_and_docs_point_at_nothing_outside_the_repository() {
    for (path, text) in documents() {
        let lower = text.to_lowercase();
        for word in FOREIGN {
            assert!(
                !lower.contains(&word.to_lowercase()),
                "{} mentions `{word}`",
                path.display()
            );
        }
    }
}

#[test]
fn help_points_at_nothing_outside_the_repository() {
    let mut pages = vec![vec!["--help"]];
    for c in [
        "run",
        "merge",
        "check",
        "schedule",
        "compare",
        "init",
        "completions",
        "man",
    ] {
        pages.push(vec![c, "--help"]);
    }
    for args in pages {
        let out = herdsim().args(&args).output().expect("run herdsim");
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).to_lowercase();
        assert!(text.len() > 100, "{args:?}: {text}");
        for word in FOREIGN {
            assert!(!text.contains(&word.to_lowercase()), "{args:?}: `{word}`");
        }
    }
}

#[test]
fn every_shipped_scenario_is_in_the_readme_table() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
    let mut names: Vec<String> = fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    for name in names {
        assert!(
            rows.iter().any(|r| r.starts_with(&format!("| `{name}` |"))),
            "scenarios/{name} has no row in the README's scenario table"
        );
    }
}

#[test]
fn the_readme_keeps_the_two_set_up_commands() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("\ncargo run --release -- run scenarios/quickstart.toml "));
    assert!(readme.contains("\ncargo test "));
}

/// Relative links `[text](path)` of the README and docs/ name files that exist. docs/charts.md
/// is written with the charts (its own branch) and is allowed to be missing here.
#[test]
fn links_to_repository_files_resolve() {
    for (path, text) in documents() {
        let dir = path.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.contains(' ') {
                continue;
            }
            let file = dir.join(target);
            if file.ends_with("docs/charts.md") || file.ends_with("charts.md") {
                continue;
            }
            assert!(
                Path::new(&file).exists(),
                "{}: link to {target}, which does not exist",
                path.display()
            );
        }
    }
}

/// Every strategy docs/libraries.md offers to paste is one `herdsim check` accepts: each
/// ```toml block, added to a small scenario of closed clients, passes with exit 0 and no
/// warning but Envoy's (its per-client budget never binds on them).
#[test]
fn every_policy_in_the_policies_page_checks() {
    let text = fs::read_to_string(root().join("docs/libraries.md")).expect("docs/libraries.md");
    let blocks: Vec<&str> = text
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().expect("a closed block"))
        .collect();
    assert!(blocks.len() >= 16, "{}", blocks.len());
    let base = "name = \"policy\"\n[clients]\ncount = 100\n\
                [network]\nlatency = { dist = \"constant\", value = \"10ms\" }\n\
                [server]\nconcurrency = 10\nservice = { dist = \"constant\", value = \"10ms\" }\n\
                [server.rate_limit]\nrate = 100\n";
    let dir = tempfile::tempdir().expect("a temporary folder");
    for block in blocks {
        let file = dir.path().join("policy.toml");
        fs::write(&file, format!("{base}{block}")).expect("written");
        let out = herdsim()
            .args(["check", file.to_str().expect("UTF-8")])
            .output()
            .expect("herdsim runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{block}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Envoy's sidecar budget (3 retries at once per client) never binds on closed
        // clients, one call at a time: the one warning a block draws here.
        let expected = if block.contains("kind = \"concurrent\"")
            && block.contains("scope = \"client\"")
        {
            format!(
                "warning: {}: strategy `envoy` sets a concurrent budget per client (scope = \"client\", min_retries = 3) but its clients are closed, one call at a time, so none has a retry in progress when it decides: it never refuses a retry\n",
                file.display()
            )
        } else {
            String::new()
        };
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{block}");
    }
}

/// scenarios/libraries.toml runs exactly the strategies docs/libraries.md offers: each
/// ```toml block of the page appears in the scenario verbatim, and the scenario has no
/// other strategy.
#[test]
fn the_libraries_scenario_runs_the_pages_blocks_verbatim() {
    let page = fs::read_to_string(root().join("docs/libraries.md")).expect("docs/libraries.md");
    let scenario =
        fs::read_to_string(root().join("scenarios/libraries.toml")).expect("libraries.toml");
    let blocks: Vec<&str> = page
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().expect("a closed block"))
        .collect();
    for block in &blocks {
        assert!(
            scenario.contains(block),
            "missing from the scenario:\n{block}"
        );
    }
    assert_eq!(scenario.matches("[[strategy]]").count(), blocks.len());
}
