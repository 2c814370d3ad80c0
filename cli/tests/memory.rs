//! `ctxgraph memory …` and memory in `build`, end to end through the binary: two sessions
//! sharing a workspace remember, recall and forget through the CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Workspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::write(root.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        Workspace { _dir: dir, root }
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.repo().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxgraph"));
        command
            .args(args)
            .arg("--cwd")
            .arg(self.repo())
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("home/.config"))
            .env("CTXGRAPH_OFFLINE", "1")
            .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", self.root.join("managed"));
        command
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", show(&output));
        String::from_utf8(output.stdout).unwrap()
    }

    fn fails(&self, args: &[&str]) -> (i32, String) {
        let output = self.command(args).output().unwrap();
        (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn show(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn two_sessions_share_a_workspace_memory() {
    let ws = Workspace::new();
    ws.write("AGENTS.md", "# Rules");
    let before = ws.ok(&["build"]);
    // Two sessions write at the same time.
    let a = ws
        .command(&["memory", "--session", "ses_a", "remember", "Use pnpm, not npm, in this repo"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let b = ws
        .command(&["memory", "--session", "ses_b", "remember", "--scope", "user", "Prefers small commits"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(a.wait_with_output().unwrap().status.success());
    assert!(b.wait_with_output().unwrap().status.success());

    let recalled = ws.ok(&["memory", "--session", "ses_b", "recall", "which package manager, pnpm or npm?"]);
    assert!(recalled.contains("- [project] Use pnpm, not npm, in this repo"), "{recalled}");
    let json: serde_json::Value =
        serde_json::from_str(&ws.ok(&["memory", "recall", "commits", "--format", "json"])).unwrap();
    assert_eq!(json["blocks"][0]["items"].as_array().unwrap().len(), 1);
    assert!(json["blocks"][0]["items"][0]["score"].as_f64().unwrap() > 0.0);

    // Off by default: build is byte for byte what it was.
    assert_eq!(ws.ok(&["build"]), before);
    ws.write("opencode.json", r#"{ "memory": { "enabled": true } }"#);
    let built = ws.ok(&["build"]);
    assert!(built.starts_with(&before), "{built}");
    // The two sessions wrote concurrently, so either fact may be the newer one.
    assert!(built.contains("- [user] Prefers small commits\n"), "{built}");
    assert!(built.contains("- [project] Use pnpm, not npm, in this repo\n"), "{built}");
    assert!(built.ends_with("\n</memory>"), "{built}");
    assert!(built.chars().count() - before.chars().count() <= 9001);
    let explained = ws.ok(&["explain"]);
    assert!(explained.contains("memory (memory.md §11)"), "{explained}");

    let forgotten: serde_json::Value =
        serde_json::from_str(&ws.ok(&["memory", "forget", "forget npm"])).unwrap();
    assert_eq!(forgotten["forgotten"].as_array().unwrap().len(), 1);
    assert!(!ws.ok(&["build"]).contains("pnpm"));
    let explained = ws.ok(&["explain"]);
    assert!(explained.contains("inactive (user-forget)"), "{explained}");
}

#[test]
fn handoff_tool_stats_and_session_cards_reach_the_prompt() {
    let ws = Workspace::new();
    ws.write("opencode.jsonc", "{ // ctxgraph's own key\n \"memory\": { \"enabled\": true } }");
    let handoff = ws.write(
        "handoff.json",
        r#"{"goal":"Move CI to pnpm","status":"in_progress","next":["update the lockfile"]}"#,
    );
    ws.ok(&["memory", "--session", "ses_1", "handoff", "set", handoff.to_str().unwrap()]);
    assert!(ws.ok(&["memory", "handoff", "show"]).contains("\"goal\": \"Move CI to pnpm\""));
    for _ in 0..4 {
        ws.ok(&["memory", "tool-outcome", "edit", "error", "--message", "oldString not found in content"]);
    }
    ws.ok(&["memory", "tool-outcome", "edit", "ok"]);
    let export = ws.write(
        "export.json",
        r#"{"info":{"id":"ses_0","title":"Add the pnpm workspace","time":{"created":1}},"messages":[{"info":{"role":"user"},"parts":[{"type":"text","text":"Create pnpm-workspace.yaml"}]}]}"#,
    );
    ws.ok(&["memory", "session-card", "add", "--from-export", export.to_str().unwrap()]);
    let built = ws.ok(&["build"]);
    assert!(built.contains("## Previous Task Handoff (from an earlier session)\nGoal: Move CI to pnpm\nStatus: in_progress\nNext: 1) update the lockfile"), "{built}");
    assert!(built.contains("- edit: 4/5 recent calls failed (mostly not_found)."), "{built}");
    assert!(built.contains("## Related Prior Sessions\n- \"Add the pnpm workspace\" (today, unknown): Create pnpm-workspace.yaml"), "{built}");
    let shown: serde_json::Value =
        serde_json::from_str(&ws.ok(&["memory", "show", "--format", "json"])).unwrap();
    assert_eq!(shown["handoff"]["goal"], "Move CI to pnpm");
}

#[test]
fn bad_input_exits_2_with_the_file_named() {
    let ws = Workspace::new();
    let broken = ws.write("broken.json", "{\"goal\": ");
    let (code, stderr) = ws.fails(&["memory", "handoff", "set", broken.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not JSON at line 1"), "{stderr}");
    let (code, stderr) = ws.fails(&["memory", "forget", "fct_nothing"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _) = ws.fails(&["memory", "remember", "   "]);
    assert_eq!(code, 2);
    ws.write(".opencode/memory/tool_stats.json", "{oops");
    let (code, stderr) = ws.fails(&["memory", "tool-outcome", "bash", "ok"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("tool_stats.json"), "{stderr}");
    let missing = Path::new("/nonexistent/export.json");
    let (code, _) = ws.fails(&["memory", "session-card", "add", "--from-export", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
}
