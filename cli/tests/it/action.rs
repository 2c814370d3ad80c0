//! The GitHub Action (action.yml): its inputs against what integrations/github/run.sh reads,
//! and the script run here as the action's step runs it, with the `GITHUB_*` files in a
//! temporary folder and the ctxgraph under test on PATH, with the inputs of README's
//! workflow snippet: on a repository with a secret and an oversized rule file (exit
//! non-zero, SARIF valid, both in the summary) and on a clean one (exit 0).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::explain_lint::sarif_validator;
use crate::support::{ctxgraph, git_repo, readme_snippet, with_ctxgraph_on_path, yaml};

const SECRET: &str = "AKIAQQQQQQQQQQQQQQQQ";

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn action() -> Value {
    yaml(&std::fs::read_to_string(repo_file("action.yml")).expect("action.yml"))
}

/// `INPUT_…` names the script reads, in the order it reads them.
fn script_inputs() -> Vec<String> {
    let script = std::fs::read_to_string(repo_file("integrations/github/run.sh")).expect("run.sh");
    let mut names = Vec::new();
    for (at, _) in script.match_indices("${INPUT_") {
        let name: String =
            script[at + 2..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// GitHub's environment name for an input: `INPUT_` and the name upper-cased, `-` as `_`
/// (what the composite step's `env:` spells out).
fn env_name(input: &str) -> String {
    format!("INPUT_{}", input.to_uppercase().replace('-', "_"))
}

#[test]
fn every_input_the_script_reads_is_declared_and_passed() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    let declared: Vec<String> =
        action["inputs"].as_object().expect("inputs").keys().map(|k| env_name(k)).collect();
    let read = script_inputs();
    assert!(!read.is_empty(), "run.sh reads no INPUT_ variable");
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let run_step = steps.iter().find(|s| s["id"] == "run").expect("a step with id: run");
    assert!(run_step["run"].as_str().unwrap_or_default().contains("integrations/github/run.sh"));
    for name in &read {
        assert!(declared.contains(name), "run.sh reads {name}, which action.yml does not declare");
        assert!(run_step["env"][name].is_string(), "the run step does not pass {name}");
    }
    for name in &declared {
        assert!(read.contains(name), "action.yml declares {name}, which run.sh never reads");
    }
    // The upload runs after a failing step too, and names what the script wrote.
    let upload = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@")))
        .expect("the SARIF upload step");
    assert!(upload["if"].as_str().unwrap_or_default().contains("always()"));
    assert_eq!(upload["with"]["sarif_file"], "${{ steps.run.outputs.sarif }}");
    let cache = steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@")));
    assert!(cache.is_some(), "no actions/cache step");
}

/// The README's workflow, checked to use this action, and the inputs it passes it.
fn readme_inputs() -> serde_json::Map<String, Value> {
    let workflow = yaml(&readme_snippet("# .github/workflows/ctxgraph.yml"));
    let steps = workflow["jobs"]["ctxgraph"]["steps"].as_array().expect("the snippet's steps").clone();
    let step = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("ctxgraph/ctxgraph@")))
        .expect("the snippet uses ctxgraph/ctxgraph@…");
    step["with"].as_object().cloned().unwrap_or_default()
}

struct ActionRun {
    code: i32,
    summary: String,
    outputs: String,
    log: String,
}

/// run.sh in `repo` as the composite step runs it: each input from `with`, else its
/// default in action.yml; `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT` and `RUNNER_TEMP` in `root`.
fn run_action(root: &Path, repo: &Path, with: &serde_json::Map<String, Value>) -> ActionRun {
    let action = action();
    let github = root.join("github");
    std::fs::create_dir_all(github.join("temp")).expect("github dir");
    let mut command = with_ctxgraph_on_path("bash", root);
    command
        .arg(repo_file("integrations/github/run.sh"))
        .current_dir(repo)
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", github.join("summary.md"))
        .env("GITHUB_OUTPUT", github.join("output"))
        .env("RUNNER_TEMP", github.join("temp"));
    for (name, input) in action["inputs"].as_object().expect("inputs") {
        let value = with.get(name).unwrap_or(&input["default"]);
        let value = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        command.env(env_name(name), value);
    }
    let output = command.output().expect("run bash");
    let read = |name: &str| std::fs::read_to_string(github.join(name)).unwrap_or_default();
    ActionRun {
        code: output.status.code().unwrap_or(-1),
        summary: read("summary.md"),
        outputs: read("output"),
        log: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// A repository with AGENTS.md and two scenarios (opencode's and Gemini CLI's context),
/// snapshotted clean.
fn snapshotted_repo(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    for dir in ["home", "config", "managed", "repo"] {
        std::fs::create_dir_all(root.join(dir)).expect("dirs");
    }
    git_repo(&repo);
    std::fs::write(repo.join("AGENTS.md"), "# Rules\n\nRun the tests before every commit.\n")
        .expect("AGENTS.md");
    std::fs::write(
        repo.join("ctxgraph.toml"),
        "[scenario.root]\ncwd = \".\"\n\n[scenario.gemini]\nagent = \"gemini\"\ncwd = \".\"\n",
    )
    .expect("ctxgraph.toml");
    let out = ctxgraph(root).arg("snapshot").current_dir(&repo).output().expect("snapshot");
    assert!(out.status.success(), "snapshot: {}", String::from_utf8_lossy(&out.stderr));
    repo
}

#[test]
fn a_secret_and_an_oversized_rule_fail_the_job_with_sarif_and_summary() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = snapshotted_repo(root.path());
    std::fs::write(
        repo.join("AGENTS.md"),
        format!("# Rules\n\nRun the tests before every commit.\nDeploy key: {SECRET}\n"),
    )
    .expect("AGENTS.md");
    std::fs::write(repo.join("GEMINI.md"), "Be thorough and careful.\n".repeat(1500)).expect("GEMINI.md");

    let run = run_action(root.path(), &repo, &readme_inputs());
    assert_eq!(run.code, 1, "exit status; log:\n{}", run.log);
    for (name, text) in [("summary", &run.summary), ("outputs", &run.outputs), ("log", &run.log)] {
        // Only the lines: the oversized file makes the whole text too long to read.
        let leaks: Vec<&str> = text.lines().filter(|l| l.contains(SECRET)).collect();
        assert!(leaks.is_empty(), "the secret is in the {name}: {leaks:?}");
    }
    // The summary: both scenarios changed, with tokens, then both findings.
    assert!(run.summary.contains("## ctxgraph check: 2 of 2 failed"), "{}", run.summary);
    assert!(run.summary.contains("| root | ❌ changed |"), "{}", run.summary);
    assert!(run.summary.contains("+ AGENTS.md") || run.summary.contains("AGENTS.md"), "{}", run.summary);
    assert!(run.summary.contains("CG005"), "no secret finding in the summary:\n{}", run.summary);
    assert!(run.summary.contains("CG007"), "no oversized-rule finding in the summary:\n{}", run.summary);
    assert!(run.log.contains("::error file=.ctxgraph/snapshots/root.snap"), "{}", run.log);

    let sarif_path = run.outputs.lines().find_map(|l| l.strip_prefix("sarif=")).expect("sarif output");
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).expect("SARIF file")).expect("SARIF JSON");
    let validator = sarif_validator();
    let errors: Vec<String> = validator.iter_errors(&sarif).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "SARIF invalid: {errors:?}");
    let rules: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    assert!(rules.contains(&"CG005") && rules.contains(&"CG007"), "{rules:?}");
    assert!(!sarif.to_string().contains(SECRET));
}

#[test]
fn a_clean_repository_passes() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = snapshotted_repo(root.path());
    let run = run_action(root.path(), &repo, &readme_inputs());
    assert_eq!(run.code, 0, "exit status; log:\n{}\nsummary:\n{}", run.log, run.summary);
    assert!(run.summary.contains("## ctxgraph check: all prompts match"), "{}", run.summary);
    assert!(run.summary.contains("| root | ✅ unchanged |"), "{}", run.summary);
    assert!(run.summary.contains("## ctxgraph lint --agent all"), "{}", run.summary);
    assert!(!run.summary.contains("error["), "{}", run.summary);
    assert!(run.outputs.contains("sarif="), "{}", run.outputs);
}

#[test]
fn a_bad_fail_on_is_refused_by_name() {
    let root = tempfile::tempdir().expect("tempdir");
    let repo = snapshotted_repo(root.path());
    let mut with = readme_inputs();
    with.insert("fail-on".into(), Value::String("sometimes".into()));
    let run = run_action(root.path(), &repo, &with);
    assert_eq!(run.code, 2, "{}", run.log);
    assert!(run.log.contains("fail-on is 'sometimes'"), "{}", run.log);
}
