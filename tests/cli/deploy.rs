//! The files of deploy/ run as written: each batch engine's per-shard command (the Slurm
//! script's array task, the Kubernetes Indexed Job's container, the AWS Batch job
//! definition's container), given the environment that engine sets, writes shards that the
//! deploy files' merge command turns into the unsharded run's files. The engines themselves
//! are not here: scripts/slurm-local.sh runs a real Slurm; Kubernetes and AWS are not
//! reachable from a test.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Workspace, herdsim};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The variables a batch engine sets, removed so the test's own environment cannot leak in.
const ENGINE_VARS: [&str; 9] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_CPUS_PER_TASK",
    "JOB_COMPLETION_INDEX",
    "AWS_BATCH_JOB_ARRAY_INDEX",
    "AWS_BATCH_JOB_ARRAY_SIZE",
];

/// Runs herdsim with `args` (without the leading `herdsim`) and `env`, and asserts exit 0.
fn run(args: &[String], env: &[(&str, String)]) {
    assert_eq!(args[0], "herdsim", "{args:?}");
    let mut cmd = herdsim();
    for v in ENGINE_VARS {
        cmd.env_remove(v);
    }
    cmd.args(&args[1..]).arg("--quiet");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The files (not folders) of `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `herdsim run scenarios/sweep-clients.toml` on one machine, the reference.
fn unsharded(ws: &Workspace) -> BTreeMap<String, Vec<u8>> {
    let out = ws.path().join("whole");
    run(
        &[
            "herdsim".into(),
            "run".into(),
            root()
                .join("scenarios/sweep-clients.toml")
                .display()
                .to_string(),
            "--out".into(),
            out.display().to_string(),
            "--format".into(),
            "svg".into(),
        ],
        &[],
    );
    let whole = files(&out.join("sweep-clients"));
    assert!(whole.contains_key("summary.csv") && whole.contains_key("report.html"));
    whole
}

/// A container's paths mapped into the workspace: `/scenarios/` (the ConfigMap),
/// `/results` (the shared volume) and the image's `/usr/share/herdsim/scenarios/`.
fn mapped(args: &[String], ws: &Workspace, results: &str) -> Vec<String> {
    args.iter()
        .map(|a| {
            if let Some(rest) = a.strip_prefix("/usr/share/herdsim/scenarios/") {
                root().join("scenarios").join(rest).display().to_string()
            } else if let Some(rest) = a.strip_prefix("/scenarios/") {
                ws.path().join("scenarios").join(rest).display().to_string()
            } else if let Some(rest) = a.strip_prefix("/results") {
                format!("{}{rest}", ws.path().join(results).display())
            } else {
                a.clone()
            }
        })
        .collect()
}

/// The YAML documents of deploy/k8s-indexed-job.yaml, as text.
fn k8s_documents() -> Vec<String> {
    read("deploy/k8s-indexed-job.yaml")
        .split("\n---\n")
        .map(str::to_string)
        .collect()
}

fn k8s_document(kind_and_name: (&str, &str)) -> String {
    let (kind, name) = kind_and_name;
    k8s_documents()
        .into_iter()
        .find(|d| {
            d.contains(&format!("kind: {kind}\n")) && d.contains(&format!("  name: {name}\n"))
        })
        .unwrap_or_else(|| panic!("no {kind} {name} in deploy/k8s-indexed-job.yaml"))
}

/// The container `command:` of a Job document: a flow list (`["a", "b"]`) or a block list
/// (`- a` lines, with `# comments`).
fn k8s_command(doc: &str) -> Vec<String> {
    let mut lines = doc
        .lines()
        .skip_while(|l| l.trim() != "command:" && !l.trim().starts_with("command: ["));
    let first = lines.next().expect("a command");
    if let Some(flow) = first.trim().strip_prefix("command: ") {
        return serde_json::from_str(flow).expect("a flow list of strings");
    }
    lines
        .map(str::trim)
        .take_while(|l| l.starts_with("- "))
        .map(|l| {
            let item = l[2..].split(" #").next().unwrap().trim();
            item.trim_matches('"').to_string()
        })
        .collect()
}

/// The number after `key: ` in `doc`.
fn k8s_number(doc: &str, key: &str) -> u32 {
    doc.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn the_kubernetes_configmap_holds_the_shipped_scenario() {
    let cm = k8s_document(("ConfigMap", "herdsim-scenario"));
    let body = cm
        .split_once("  sweep-clients.toml: |\n")
        .expect("the scenario key")
        .1;
    let mut text = String::new();
    for line in body.lines() {
        match line.strip_prefix("    ") {
            Some(l) => text.push_str(l),
            None if line.is_empty() => {}
            None => break,
        }
        text.push('\n');
    }
    assert_eq!(
        text,
        read("scenarios/sweep-clients.toml"),
        "deploy/k8s-indexed-job.yaml's ConfigMap is not a copy of scenarios/sweep-clients.toml"
    );
}

#[test]
fn the_kubernetes_indexed_job_runs_as_written() {
    let ws = Workspace::new();
    let whole = unsharded(&ws);
    fs::create_dir(ws.path().join("scenarios")).unwrap();
    fs::write(
        ws.path().join("scenarios/sweep-clients.toml"),
        read("scenarios/sweep-clients.toml"),
    )
    .unwrap();
    let job = k8s_document(("Job", "herdsim-shards"));
    assert!(job.contains("completionMode: Indexed"));
    let completions = k8s_number(&job, "completions");
    let command = k8s_command(&job);
    let count = command.iter().position(|a| a == "--shard-count").unwrap();
    assert_eq!(
        command[count + 1],
        completions.to_string(),
        "--shard-count = completions"
    );
    assert!(command.windows(2).any(|w| w == ["--shard", "auto"]));
    for index in 0..completions {
        run(
            &mapped(&command, &ws, "results"),
            &[("JOB_COMPLETION_INDEX", index.to_string())],
        );
    }
    let merge = k8s_command(&k8s_document(("Job", "herdsim-merge")));
    let mut merge = mapped(&merge, &ws, "results");
    merge.extend(["--format".into(), "svg".into()]);
    run(&merge, &[]);
    assert_eq!(files(&ws.path().join("results/sweep-clients")), whole);
}

/// The JSON a heredoc of deploy/aws-batch.md writes into `file`, with the shell variables
/// replaced (`$SCENARIO`, `$NAME` and `$SUBNETS` as step 0 sets them, the others by `x`).
fn aws_json(file: &str) -> serde_json::Value {
    let md = read("deploy/aws-batch.md");
    // `<<EOF` (variables expanded) or `<<'EOF'` (taken as written).
    let body = [
        format!("cat > {file} <<EOF\n"),
        format!("cat > {file} <<'EOF'\n"),
    ]
    .iter()
    .find_map(|start| md.split_once(start.as_str()))
    .unwrap_or_else(|| panic!("no {file}"))
    .1;
    let body = body.split_once("\nEOF\n").unwrap().0;
    let mut text = body
        .replace(
            "$SCENARIO",
            "/usr/share/herdsim/scenarios/sweep-clients.toml",
        )
        .replace("$NAME", "sweep-clients")
        // Step 0 makes $SUBNETS a list's items: "subnet-a","subnet-b".
        .replace("$SUBNETS", "\"subnet-a\",\"subnet-b\"");
    while let Some(i) = text.find('$') {
        let end = text[i + 1..]
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .map_or(text.len(), |e| i + 1 + e);
        text.replace_range(i..end, "x");
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}\n{text}"))
}

/// A job definition's container command, `Ref::` parameters substituted.
fn aws_command(def: &serde_json::Value) -> Vec<String> {
    def["containerProperties"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let a = a.as_str().unwrap();
            match a.strip_prefix("Ref::") {
                Some(p) => def["parameters"][p].as_str().unwrap().to_string(),
                None => a.to_string(),
            }
        })
        .collect()
}

#[test]
fn the_aws_batch_job_definitions_run_as_written() {
    for f in [
        "trust.json",
        "s3-write.json",
        "compute-environment.json",
        "herdsim-to-s3.json",
    ] {
        aws_json(f);
    }
    let ws = Workspace::new();
    let whole = unsharded(&ws);
    let shard = aws_command(&aws_json("herdsim-shard.json"));
    assert!(shard.windows(2).any(|w| w == ["--shard", "auto"]));
    let size = 3;
    for index in 0..size {
        run(
            &mapped(&shard, &ws, "efs"),
            &[
                ("AWS_BATCH_JOB_ARRAY_INDEX", index.to_string()),
                ("AWS_BATCH_JOB_ARRAY_SIZE", size.to_string()),
            ],
        );
    }
    let mut merge = mapped(&aws_command(&aws_json("herdsim-merge.json")), &ws, "efs");
    merge.extend(["--format".into(), "svg".into()]);
    run(&merge, &[]);
    assert_eq!(files(&ws.path().join("efs/sweep-clients")), whole);
}

#[test]
fn the_slurm_script_runs_its_array_tasks_as_written() {
    let script = root().join("deploy/slurm-array.sh");
    let Ok(syntax) = Command::new("bash").arg("-n").arg(&script).output() else {
        eprintln!("no bash: deploy/slurm-array.sh not run");
        return;
    };
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let ws = Workspace::new();
    let whole = unsharded(&ws);
    let bin = assert_cmd::cargo::cargo_bin!("herdsim");
    // An array submitted as --array=1-3: task IDs 1, 2, 3; shards 0, 1, 2 of 3.
    for task in 1..=3 {
        let mut cmd = Command::new("bash");
        for v in ENGINE_VARS {
            cmd.env_remove(v);
        }
        let out = cmd
            .arg(&script)
            .current_dir(root())
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_ARRAY_JOB_ID", "42")
            .env("SLURM_CPUS_PER_TASK", "1")
            .env("SCENARIO", "scenarios/sweep-clients.toml")
            .env("OUT", ws.path().join("shared"))
            .env("HERDSIM", bin)
            .env("HERDSIM_ARGS", "--quiet")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&format!("task {task} (from 1) of 3")),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let dir = ws.path().join("shared/sweep-clients");
    run(
        &[
            "herdsim".into(),
            "merge".into(),
            dir.display().to_string(),
            "--format".into(),
            "svg".into(),
        ],
        &[],
    );
    assert_eq!(files(&dir), whole);
    // Submitted by sbatch without --array: refused, nothing run.
    let out = Command::new("bash")
        .arg(&script)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env("ENVIRONMENT", "BATCH")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without --array"));
}
