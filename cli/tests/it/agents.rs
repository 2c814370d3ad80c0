//! `build --agent codex` end to end: the JSON report, the budget from `config.toml`, and
//! the bad inputs (a broken `config.toml`, `-c` settings ctxgraph does not model) that must
//! exit 2. What Codex sends is pinned by the recorded cases in `tests/agents/codex/`; this
//! module checks the binary's own surface.

use std::path::{Path, PathBuf};

use crate::support::{Run, ctxgraph, git_repo};

/// `root/repo` (a git worktree) and `root/home` with the given files.
pub(crate) fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
    git_repo(&root.join("repo"));
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parent dir");
        std::fs::write(path, text).expect("write");
    }
    (dir, root)
}

pub(crate) fn run(root: &Path, cwd: &str, args: &[&str]) -> Run {
    let output = ctxgraph(root).args(args).current_dir(root.join(cwd)).output().expect("run ctxgraph");
    Run::scrubbed(root, output)
}

/// `build --agent AGENT --format json` and the text `build --agent AGENT` prints, from `cwd`:
/// the report must measure that text (bytes, blake3). The text names the temp dir, so its
/// hash differs per run; the report comes back with it checked and replaced by `[HASH]`.
pub(crate) fn build_report(root: &Path, cwd: &str, agent: &str) -> (serde_json::Value, Run) {
    let json = run(root, cwd, &["build", "--agent", agent, "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let text = run(root, cwd, &["build", "--agent", agent]);
    let mut report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(report["bytes"].as_u64(), Some(text.raw_stdout.len() as u64), "the report measures the text");
    assert_eq!(report["hash"].as_str(), Some(blake3::hash(&text.raw_stdout).to_hex().as_str()));
    report["hash"] = "[HASH]".into();
    check_blocks(&mut report, &text.raw_stdout);
    (report, text)
}

/// Every block's range names its bytes in the printed text and its hash is theirs; the
/// hashes (of texts naming the temp dir) are then replaced by `[HASH]`.
pub(crate) fn check_blocks(report: &mut serde_json::Value, text: &[u8]) {
    let Some(blocks) = report["blocks"].as_array_mut() else { return };
    for block in blocks {
        let at = |key: &str| usize::try_from(block[key].as_u64().expect("a byte offset")).expect("fits");
        let bytes = &text[at("start")..at("end")];
        assert_eq!(block["hash"].as_str(), Some(blake3::hash(bytes).to_hex().as_str()), "{block}");
        block["hash"] = "[HASH]".into();
    }
}

/// What every agent's `check` test does around its own assertions: `snapshot` in `repo`
/// (returning the snapshot `name` it wrote), a clean `check`, then `edit` (a path below the
/// root and its new text) and a `check` under CI that must fail with exit 1.
pub(crate) fn snapshot_then_drift(root: &Path, name: &str, edit: (&str, &str)) -> String {
    let snapshot = run(root, "repo", &["snapshot"]);
    assert_eq!(snapshot.code, 0, "{}", snapshot.stderr);
    let path = root.join("repo/.ctxgraph/snapshots").join(format!("{name}.snap"));
    let snap = std::fs::read_to_string(path).expect("snapshot");

    let clean = run(root, "repo", &["check"]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    std::fs::write(root.join(edit.0), edit.1).expect("write");
    let output = ctxgraph(root)
        .args(["check"])
        .env("CI", "true")
        .current_dir(root.join("repo"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stdout));
    snap
}

const FILES: &[(&str, &str)] = &[
    ("home/.codex/AGENTS.md", "Global rules.\n"),
    ("home/.codex/config.toml", "model = \"x\"\nproject_doc_max_bytes = 40\n"),
    ("repo/AGENTS.md", "Root rules: thirty bytes long.\n"),
    ("repo/pkg/AGENTS.md", "Shadowed by the override.\n"),
    ("repo/pkg/AGENTS.override.md", "Override: cut by the budget after ten bytes.\n"),
    ("repo/pkg/deep/AGENTS.md", "Skipped: nothing left.\n"),
    ("repo/pkg/deep/empty/AGENTS.md", " \n"),
];

#[test]
fn json_lists_what_is_sent_and_why_the_rest_is_not() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo/pkg/deep/empty", "codex");
    insta::assert_snapshot!("codex_json", serde_json::to_string_pretty(&report).expect("JSON"));
    assert!(
        text.stdout.contains("Override:") && !text.stdout.contains("cut by the budget"),
        "{}",
        text.stdout
    );

    // A -c setting beats config.toml, as Codex's -c does.
    let wide =
        run(&root, "repo/pkg/deep/empty", &["build", "--agent", "codex", "-c", "project_doc_max_bytes=4096"]);
    assert!(wide.stdout.contains("Skipped: nothing left."), "{}", wide.stdout);
}

#[test]
fn nothing_to_send_prints_nothing() {
    let (_dir, root) = tree(&[("repo/README.md", "no rules\n")]);
    let run = run(&root, "repo", &["build", "--agent", "codex"]);
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (0, "", ""));
}

#[test]
fn bad_input_exits_2() {
    let (_dir, root) = tree(&[("home/.codex/config.toml", "model = \"x\"\nproject_doc_max_bytes = [\n")]);
    let broken = run(&root, "repo", &["build", "--agent", "codex"]);
    assert_eq!(broken.code, 2, "{broken:?}", broken = broken.stderr);
    // The line Codex refuses, with a caret under the place, as an opencode.json mistake is
    // shown; and as data with the rule that reads the file.
    let snippet = "error: codex would not start here: [TMP]/home/.codex/config.toml: unclosed array, expected `]`\n \
                   --> [TMP]/home/.codex/config.toml:2:26\n  |\n  |\n2 | project_doc_max_bytes = [\n  |                          ^";
    assert!(broken.stderr.starts_with(snippet), "{}", broken.stderr);
    let json = run(&root, "repo", &["build", "--agent", "codex", "--format", "json"]);
    let error: serde_json::Value = serde_json::from_str(&json.stdout).expect("an error as JSON");
    assert_eq!(json.code, 2);
    assert_eq!(
        (
            &error["error"]["code"],
            &error["error"]["line"],
            &error["error"]["column"],
            &error["error"]["rule"]
        ),
        (&"invalid-config".into(), &2.into(), &26.into(), &"CX5".into()),
        "{error}"
    );
    assert_eq!(error["error"]["line_text"], "project_doc_max_bytes = [", "{error}");
    assert!(error["error"]["message"].as_str().is_some_and(|m| m.contains("config.toml:2:26: ")), "{error}");

    let (_dir, root) = tree(&[("home/.codex/config.toml", "project_doc_max_bytes = \"big\"\n")]);
    let typed = run(&root, "repo", &["build", "--agent", "codex"]);
    assert_eq!(typed.code, 2);
    assert!(
        typed.stderr.contains("config.toml: project_doc_max_bytes must be a non-negative integer\n --> [TMP]/home/.codex/config.toml:1:1\n"),
        "{}",
        typed.stderr
    );

    for args in [
        &["build", "--agent", "codex", "-c", "model=x"][..],
        &["build", "--agent", "codex", "-c", "project_doc_max_bytes=-1"],
        &["build", "--agent", "codex", "-c", "nonsense"],
        &["build", "--agent", "codex", "--model", "a/b"],
        &["build", "-c", "project_doc_max_bytes=1"],
    ] {
        let run = run(&root, "repo", args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{args:?}: {}", run.stderr);
    }
}

/// `check` pins what Codex sees: a scenario with `agent = "codex"` snapshots the message,
/// and an edit to a file Codex loads fails the check in CI.
#[test]
fn check_pins_the_codex_message() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.codex/AGENTS.md", "Global rules.\n"),
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/pkg/AGENTS.md", "Pkg rules.\n"),
        (
            "repo/ctxgraph.toml",
            "[scenario.codex-pkg]\nagent = \"codex\"\ncwd = \"pkg\"\nhome = \"ci/home\"\n",
        ),
    ]);
    let snap = snapshot_then_drift(&root, "codex-pkg", ("repo/pkg/AGENTS.override.md", "Override.\n"));
    assert!(snap.contains("\nprofile: codex-0.171.0\n"), "{snap}");
    assert!(snap.contains("# AGENTS.md instructions for <repo>/pkg\n"), "{snap}");
    assert!(snap.contains("Global rules.\n\n--- project-doc ---\n\nRoot rules.\n\n\nPkg rules.\n"), "{snap}");

    std::fs::write(root.join("repo/ctxgraph.toml"), "[scenario.x]\nagent = \"codex\"\nmodel = \"a/b\"\n")
        .expect("write");
    let refused = run(&root, "repo", &["check"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("`model`: Codex takes no model setting"), "{}", refused.stderr);
}

/// `section = "request"` pins Codex's skills message beside its `AGENTS.md` message (CX10):
/// a changed skill description fails the check; opencode has no such section.
#[test]
fn check_pins_the_codex_skills_message() {
    let (_dir, root) = tree(&[
        ("repo/ci/home/.codex/config.toml", "[skills]\nbundled.enabled = false\n"),
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/.codex/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ships the app.\n---\nbody\n"),
        (
            "repo/ctxgraph.toml",
            "[scenario.codex-request]\nagent = \"codex\"\nsection = \"request\"\nhome = \"ci/home\"\n",
        ),
    ]);
    let snap = snapshot_then_drift(
        &root,
        "codex-request",
        ("repo/.codex/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ships it twice.\n---\n"),
    );
    assert!(snap.contains("\nsection: request\n"), "{snap}");
    assert!(snap.contains("- deploy: Ships the app. (file: r0/deploy/SKILL.md)\n"), "{snap}");
    assert!(snap.contains("# AGENTS.md instructions for <repo>\n"), "{snap}");

    std::fs::write(root.join("repo/ctxgraph.toml"), "[scenario.x]\nsection = \"request\"\n").expect("write");
    let refused = run(&root, "repo", &["check"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "section = \"request\": opencode builds only system, environment, instructions, message"
        ),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("ctxgraph.toml:1:1"), "{}", refused.stderr);
    std::fs::write(
        root.join("repo/ctxgraph.toml"),
        "[scenario.x]\nagent = \"gemini\"\nsection = \"request\"\n",
    )
    .expect("write");
    let refused = run(&root, "repo", &["check"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("section = \"request\": Gemini CLI builds only system"),
        "{}",
        refused.stderr
    );
}

/// `lint --agent codex` says which skills Codex drops (CG020, CX8) and when its listing is
/// over the budget (CG024, CX13): Codex itself says so only on stderr, or not at all.
#[test]
fn lint_names_the_skills_codex_drops_and_cuts() {
    let long = "word ".repeat(200);
    let (_dir, root) = tree(&[
        ("home/.codex/config.toml", "model_context_window = 2000\n\n[skills]\nbundled.enabled = false\n"),
        ("repo/.codex/skills/broken/SKILL.md", "---\nname: broken\n---\nno description\n"),
        ("repo/.codex/skills/long/SKILL.md", &format!("---\nname: long\ndescription: {long}\n---\n")),
        ("repo/.codex/skills/fine/SKILL.md", "---\nname: fine\ndescription: short\n---\n"),
    ]);
    let lint = run(&root, "repo", &["lint", "--agent", "codex", "--format", "json"]);
    let findings: serde_json::Value = serde_json::from_str(&lint.stdout).expect("JSON");
    let codes: Vec<&str> = findings["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(codes, ["CG020", "CG024"], "{}", lint.stdout);
    assert!(lint.stdout.contains("missing field `description`"), "{}", lint.stdout);
    assert!(
        lint.stdout.contains("budget of 40 estimated tokens (2% of a 2000-token context window)"),
        "{}",
        lint.stdout
    );
}

/// `config` on hostile settings files: a FIFO and `/dev/zero` are layers that cannot be read
/// (no hang, no read of an endless file), bytes that are not a JSON object a layer Claude
/// Code reads nothing from; a settings value of the wrong type stops Gemini CLI, named by
/// its file (exit 2, no `file:0:0` for a fault without a position).
#[test]
fn config_on_hostile_settings_files() {
    let (_dir, root) = tree(&[
        ("home/.claude/settings.json", "\u{feff}[1, 2]"),
        ("repo/.gemini/settings.json", "{ \"context\": { \"fileName\": 3 } }"),
    ]);
    std::fs::create_dir_all(root.join("repo/.claude")).expect("mkdir");
    let fifo = root.join("repo/.claude/settings.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", root.join("repo/.claude/settings.local.json")).expect("symlink");
    let out = run(&root, "repo", &["config", "--agent", "claude-code"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = [
        "user settings [TMP]/home/.claude/settings.json [CC14] (not a JSON object: Claude Code reads no setting from it)",
        "project settings [TMP]/repo/.claude/settings.json [CC14] (cannot be read: is a FIFO (named pipe), not a regular file)",
        "local project settings [TMP]/repo/.claude/settings.local.json [CC14] (cannot be read: is a character device, not a regular file)",
    ];
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), expected, "{}", out.stdout);

    let gemini = run(&root, "repo", &["config", "--agent", "gemini"]);
    assert_eq!(gemini.code, 2, "{}", gemini.stdout);
    let message = "gemini would not start here: [TMP]/repo/.gemini/settings.json: context.fileName must be";
    assert!(gemini.stderr.contains(message) && !gemini.stderr.contains(":0:0"), "{}", gemini.stderr);
}
