//! `.pre-commit-hooks.yaml`: its `files:` pattern is what the profiles say (`ctxgraph hook
//! files-regex --with-scenarios`), and the real pre-commit (from the Python package index, installed once into the
//! cache by test-support) runs its hooks from README's config snippet in a temporary
//! repository: a commit adding a secret to AGENTS.md is refused with the finding shown,
//! the fixed commit passes. No network: the hooks repository is a local clone, and the
//! hooks run the ctxgraph under test from PATH (`language: system`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{ctxgraph, readme_snippet, with_ctxgraph_on_path, yaml};

const SECRET: &str = "AKIAQQQQQQQQQQQQQQQQ";

fn hooks_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.pre-commit-hooks.yaml")
}

fn files_regex(root: &Path) -> String {
    let out = ctxgraph(root).args(["hook", "files-regex", "--with-scenarios"]).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8").trim_end().to_owned()
}

#[test]
fn the_hooks_match_the_files_the_profiles_list() {
    let root = tempfile::tempdir().expect("tempdir");
    let expected = files_regex(root.path());
    let hooks = yaml(&std::fs::read_to_string(hooks_file()).expect(".pre-commit-hooks.yaml"));
    let hooks = hooks.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks.iter().filter_map(|h| h["id"].as_str()).collect();
    assert_eq!(ids, ["ctxgraph-lint", "ctxgraph-check"]);
    for hook in hooks {
        assert_eq!(
            hook["files"].as_str(),
            Some(expected.as_str()),
            "{}'s files: differs from `ctxgraph hook files-regex --with-scenarios`; paste its output there",
            hook["id"]
        );
        assert_eq!(hook["language"], "system");
        assert_eq!(hook["pass_filenames"], false);
    }
    // What the pattern means: each agent's files at any depth, nothing else.
    let pattern = regex::Regex::new(&expected).expect("a Rust regex too");
    for path in [
        "AGENTS.md",
        "pkg/api/CLAUDE.md",
        ".claude/rules/style.md",
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".github/instructions/rust.instructions.md",
        ".clinerules/a.md",
        ".continue/rules/x.md",
        ".aider.conf.yml",
        "opencode.json",
        "ctxgraph.toml",
        ".ctxgraph/snapshots/root.snap",
    ] {
        assert!(pattern.is_match(path), "{path} is not matched");
    }
    for path in ["README.md", "src/main.rs", "docs/AGENTS.md.bak", ".github/workflows/ci.yml"] {
        assert!(!pattern.is_match(path), "{path} is matched");
    }
}

/// `program args…` in `dir` with the test's environment: PATH = the ctxgraph under test and
/// the system's, HOME and pre-commit's cache inside `root`, git's identity set.
fn run(root: &Path, dir: &Path, program: &Path, args: &[&str]) -> Output {
    with_ctxgraph_on_path(program, root)
        .args(args)
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", root.join("pre-commit-cache"))
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap_or_else(|err| panic!("{}: {err}", program.display()))
}

fn ok(output: Output, what: &str) -> String {
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

fn git(root: &Path, dir: &Path, args: &[&str]) -> String {
    ok(run(root, dir, Path::new("git"), args), &format!("git {}", args.join(" ")))
}

#[test]
fn pre_commit_refuses_a_secret_in_agents_md_and_accepts_the_fix() {
    let pre_commit = ctxgraph_test_support::precommit::installed();
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path();
    for dir in ["home", "config", "managed", "hooks", "project"] {
        std::fs::create_dir_all(root.join(dir)).expect("dirs");
    }
    // This checkout's hooks file, as the commit pre-commit clones.
    let hooks = root.join("hooks");
    std::fs::copy(hooks_file(), hooks.join(".pre-commit-hooks.yaml")).expect("copy hooks");
    git(root, &hooks, &["init", "-q"]);
    git(root, &hooks, &["add", "-A"]);
    git(root, &hooks, &["commit", "-qm", "hooks"]);
    let rev = git(root, &hooks, &["rev-parse", "HEAD"]).trim().to_owned();

    // README's config, pointed at that clone.
    let config = readme_snippet(
        "# .pre-commit-config.yaml (ctxgraph on PATH: cargo install --locked --git https://github.com/ctxgraph/ctxgraph ctxgraph-cli)",
    );
    assert!(config.contains("repo: https://github.com/ctxgraph/ctxgraph\n"), "{config}");
    assert!(config.contains("rev: main\n"), "{config}");
    let config = config
        .replace("repo: https://github.com/ctxgraph/ctxgraph\n", &format!("repo: {}\n", hooks.display()))
        .replace("rev: main\n", &format!("rev: {rev}\n"));

    let project = root.join("project");
    git(root, &project, &["init", "-q"]);
    std::fs::write(project.join(".pre-commit-config.yaml"), config).expect("config");
    std::fs::write(project.join("AGENTS.md"), "# Rules\n\nRun the tests before every commit.\n")
        .expect("AGENTS.md");
    std::fs::write(project.join("ctxgraph.toml"), "[scenario.root]\ncwd = \".\"\n").expect("ctxgraph.toml");
    ok(run(root, &project, Path::new(env!("CARGO_BIN_EXE_ctxgraph")), &["snapshot"]), "ctxgraph snapshot");
    git(root, &project, &["add", "-A"]);
    git(root, &project, &["commit", "-qm", "rules"]);
    ok(run(root, &project, &pre_commit, &["install"]), "pre-commit install");

    // The secret: refused, with the finding.
    std::fs::write(
        project.join("AGENTS.md"),
        format!("# Rules\n\nRun the tests before every commit.\nDeploy with {SECRET}.\n"),
    )
    .expect("AGENTS.md");
    git(root, &project, &["add", "AGENTS.md"]);
    let refused = run(root, &project, Path::new("git"), &["commit", "-m", "deploy key"]);
    let said =
        format!("{}{}", String::from_utf8_lossy(&refused.stdout), String::from_utf8_lossy(&refused.stderr));
    assert!(!refused.status.success(), "the commit went through:\n{said}");
    assert!(said.contains("ctxgraph lint"), "{said}");
    assert!(said.contains("CG005 likely-secret"), "the finding is not shown:\n{said}");
    assert!(said.contains("AGENTS.md:4"), "{said}");
    let head = git(root, &project, &["log", "--oneline"]);
    assert_eq!(head.lines().count(), 1, "{head}");

    // The fix, with the snapshot brought up to date: accepted, both hooks run.
    std::fs::write(
        project.join("AGENTS.md"),
        "# Rules\n\nRun the tests before every commit.\nDeploy with the key in $DEPLOY_KEY.\n",
    )
    .expect("AGENTS.md");
    ok(run(root, &project, Path::new(env!("CARGO_BIN_EXE_ctxgraph")), &["snapshot"]), "ctxgraph snapshot");
    git(root, &project, &["add", "-A"]);
    let accepted = git(root, &project, &["commit", "-m", "deploy key from the environment"]);
    assert!(accepted.contains("ctxgraph lint") && accepted.contains("Passed"), "{accepted}");
    assert!(accepted.contains("ctxgraph check"), "{accepted}");
    assert!(!accepted.contains("Failed"), "{accepted}");
}
