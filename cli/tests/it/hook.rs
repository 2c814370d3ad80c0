//! `ctxgraph hook`: the Claude Code entry printed and merged (README's snippet, run as
//! written), and `hook run`'s contract: Claude Code's `PostToolUse` JSON on stdin, a block
//! with the findings on stdout when the written file is one of its rule files, nothing
//! otherwise, a clear error and exit 2 on input that is not a hook's; Gemini CLI's and Qwen
//! Code's answers; and the real Claude Code (the oracle's `capture_cc.sh`) running the
//! installed hook.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::{Run, ctxgraph, git_repo, readme_snippet};

fn project(root: &Path) -> std::path::PathBuf {
    let project = root.join("project");
    for dir in ["home", "config", "managed", "project"] {
        std::fs::create_dir_all(root.join(dir)).expect("dirs");
    }
    git_repo(&project);
    project
}

fn hook_run(root: &Path, stdin: &[u8]) -> Run {
    hook_run_for(root, "claude-code", stdin)
}

fn hook_run_for(root: &Path, agent: &str, stdin: &[u8]) -> Run {
    let mut child = ctxgraph(root)
        .args(["hook", "run", "--agent", agent])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().expect("stdin").write_all(stdin).expect("write stdin");
    Run::scrubbed(root, child.wait_with_output().expect("wait"))
}

/// `text` as the agent's settings file `relative` in `project`.
fn settings_file(project: &Path, relative: &str, text: &str) -> std::path::PathBuf {
    let file = project.join(relative);
    std::fs::create_dir_all(file.parent().expect("dir")).expect("settings dir");
    std::fs::write(&file, text).expect("settings");
    file
}

/// Claude Code's `PostToolUse` input for a call that wrote `file`.
fn post_tool_use(cwd: &Path, tool: &str, file: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s",
        "transcript_path": "/dev/null",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": { "file_path": file, "content": "…" },
        "tool_response": { "success": true }
    }))
    .expect("json")
}

#[test]
fn the_readme_snippet_installs_the_entry_beside_what_is_there_once() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    let snippet = readme_snippet(
        "ctxgraph hook --install   # in the project: adds the PostToolUse hook to .claude/settings.json",
    );
    let command = snippet.split('#').next().expect("command").trim();
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(args[0], "ctxgraph", "{snippet}");
    let before = json!({
        "permissions": { "allow": ["Bash(npm test)"] },
        "hooks": { "PostToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "echo done" }] }] }
    });
    let settings_file = settings_file(&project, ".claude/settings.json", &before.to_string());
    for _ in 0..2 {
        let out = ctxgraph(root.path()).args(&args[1..]).current_dir(&project).output().expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let after: Value = serde_json::from_slice(&std::fs::read(&settings_file).expect("read")).expect("json");
    assert_eq!(after["permissions"], before["permissions"]);
    let post = after["hooks"]["PostToolUse"].as_array().expect("PostToolUse");
    assert_eq!(post.len(), 2, "installed twice, or the other hook dropped: {after:#}");
    assert_eq!(post[0], before["hooks"]["PostToolUse"][0]);
    assert_eq!(post[1]["matcher"], "Write|Edit|MultiEdit");
    assert_eq!(post[1]["hooks"][0]["command"], "ctxgraph hook run --agent claude-code");

    // What `ctxgraph hook` prints is the same entry.
    let printed = ctxgraph(root.path()).arg("hook").output().expect("run");
    let printed: Value = serde_json::from_slice(&printed.stdout).expect("printed JSON");
    assert_eq!(printed["hooks"]["PostToolUse"][0], post[1]);
}

#[test]
fn settings_that_are_not_json_are_left_alone() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    let settings_file = settings_file(&project, ".claude/settings.json", "{ \"hooks\": ");
    let out = Run::scrubbed(
        root.path(),
        ctxgraph(root.path()).args(["hook", "--install"]).current_dir(&project).output().expect("run"),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("[TMP]/project/.claude/settings.json: not JSON"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&settings_file).expect("read"), "{ \"hooks\": ");
}

#[test]
fn an_edited_rule_file_with_a_finding_blocks_with_it() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    // 9000 words: over the 4000-token budget per rule file (CG007).
    std::fs::write(project.join("CLAUDE.md"), "Be careful.\n".repeat(3000)).expect("CLAUDE.md");
    let run = hook_run(root.path(), &post_tool_use(&project, "Write", "CLAUDE.md"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).expect("one JSON answer");
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().expect("reason");
    assert!(reason.contains("CG007 rule-over-budget"), "{reason}");
    assert!(reason.contains("[TMP]/project/CLAUDE.md"), "{reason}");
    assert_eq!(answer.as_object().expect("object").len(), 2, "{answer}");

    // A file in .claude/rules/, named by its absolute path as Claude Code passes it.
    let rules = project.join(".claude/rules");
    std::fs::create_dir_all(&rules).expect("rules");
    std::fs::write(project.join("CLAUDE.md"), "Be careful.\n").expect("CLAUDE.md");
    std::fs::write(rules.join("big.md"), "Be careful.\n".repeat(3000)).expect("rule");
    let file = rules.join("big.md");
    let run = hook_run(root.path(), &post_tool_use(&project, "Edit", &file.to_string_lossy()));
    let answer: Value = serde_json::from_str(&run.stdout).expect("one JSON answer");
    assert!(answer["reason"].as_str().expect("reason").contains("big.md"), "{answer}");
}

/// An edit to Claude Code's settings that leaves a `claudeMdExcludes` pattern keeping
/// nothing out (CG025) blocks with the finding, saying the file is read, not sent.
#[test]
fn an_edited_settings_file_with_a_finding_says_it_is_read() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    std::fs::write(project.join("CLAUDE.md"), "Run the tests.\n").expect("CLAUDE.md");
    settings_file(&project, ".claude/settings.json", r#"{ "claudeMdExcludes": ["CLAUDE.local.md"] }"#);
    let run = hook_run(root.path(), &post_tool_use(&project, "Edit", ".claude/settings.json"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).expect("one JSON answer");
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().expect("reason");
    assert!(reason.contains("CG025 exclude-matches-nothing"), "{reason}");
    assert!(reason.contains("which Claude Code reads its settings from"), "{reason}");
    assert!(!reason.contains("sends to the model"), "{reason}");
}

#[test]
fn a_clean_edit_or_another_file_answers_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    std::fs::write(project.join("CLAUDE.md"), "Run the tests.\n").expect("CLAUDE.md");
    let run = hook_run(root.path(), &post_tool_use(&project, "Write", "CLAUDE.md"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // An oversized file no agent reads is not Claude Code's business here.
    std::fs::write(project.join("notes.md"), "Be careful.\n".repeat(3000)).expect("notes");
    let run = hook_run(root.path(), &post_tool_use(&project, "Write", "notes.md"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    // A tool call without a file (Bash's input has none).
    let run = hook_run(root.path(), br#"{"cwd":"/","tool_name":"Bash","tool_input":{"command":"ls"}}"#);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
}

#[test]
fn input_that_is_not_a_hook_call_is_an_error_naming_it() {
    let root = tempfile::tempdir().expect("tempdir");
    for stdin in [&b"not json"[..], b"[1]", b""] {
        let run = hook_run(root.path(), stdin);
        assert_eq!(run.code, 2, "{stdin:?}: {}", run.stderr);
        assert!(run.stderr.contains("stdin is not the agent's after-tool hook input"), "{}", run.stderr);
        assert_eq!(run.stdout, "");
    }
    let other = Run::scrubbed(
        root.path(),
        ctxgraph(root.path()).args(["hook", "--agent", "codex"]).output().expect("run"),
    );
    assert_eq!(other.code, 2);
    assert!(other.stderr.contains("no hook for codex"), "{}", other.stderr);
}

#[test]
fn gemini_cli_gets_the_findings_appended_to_the_tool_result() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    let settings_file =
        settings_file(&project, ".gemini/settings.json", r#"{"context": {"fileName": ["GEMINI.md"]}}"#);
    let out =
        ctxgraph(root.path()).args(["hook", "--agent", "gemini", "--install"]).current_dir(&project).output();
    assert!(out.expect("run").status.success());
    let settings: Value =
        serde_json::from_slice(&std::fs::read(&settings_file).expect("read")).expect("json");
    assert_eq!(settings["context"]["fileName"][0], "GEMINI.md");
    assert_eq!(settings["hooks"]["AfterTool"][0]["matcher"], "write_file|replace");
    assert_eq!(settings["hooks"]["AfterTool"][0]["hooks"][0]["command"], "ctxgraph hook run --agent gemini");

    std::fs::write(project.join("GEMINI.md"), "Be careful.\n".repeat(3000)).expect("GEMINI.md");
    let input = serde_json::to_vec(&json!({
        "session_id": "s", "cwd": project, "hook_event_name": "AfterTool", "timestamp": "2026-12-04T00:00:00Z",
        "tool_name": "write_file", "tool_input": { "file_path": project.join("GEMINI.md"), "content": "…" },
        "tool_response": { "llmContent": "ok" }
    }))
    .expect("json");
    let run = hook_run_for(root.path(), "gemini", &input);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).expect("one JSON answer");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "AfterTool");
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("additionalContext");
    assert!(context.contains("CG007 rule-over-budget") && context.contains("Gemini CLI"), "{context}");
    assert!(answer.get("decision").is_none(), "{answer}");
}

#[test]
fn qwen_code_gets_the_findings_as_additional_context() {
    let root = tempfile::tempdir().expect("tempdir");
    let project = project(root.path());
    let printed = ctxgraph(root.path()).args(["hook", "--agent", "qwen-code"]).output().expect("run");
    let printed: Value = serde_json::from_slice(&printed.stdout).expect("printed JSON");
    assert_eq!(printed["hooks"]["PostToolUse"][0]["matcher"], "^(write_file|edit)$");
    std::fs::write(project.join("QWEN.md"), "Be careful.\n".repeat(3000)).expect("QWEN.md");
    let input = serde_json::to_vec(&json!({
        "cwd": project, "hook_event_name": "PostToolUse", "tool_name": "edit",
        "tool_input": { "file_path": project.join("QWEN.md") }, "tool_response": {}
    }))
    .expect("json");
    let run = hook_run_for(root.path(), "qwen-code", &input);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|_| panic!("{}", run.stderr));
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("additionalContext");
    assert!(context.contains("CG007 rule-over-budget") && context.contains("QWEN.md"), "{context}");
}

/// The oracle scripts that run real agent CLIs offline: `$AGENTS_ORACLE`, else
/// `../shared/oracle/agents` beside the repository, else `/work/shared/oracle/agents`.
fn agents_oracle() -> std::path::PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = std::env::var_os("AGENTS_ORACLE")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain([repo.join("../shared/oracle/agents"), "/work/shared/oracle/agents".into()]);
    for dir in candidates {
        if dir.join("capture_cc.sh").is_file() {
            return dir;
        }
    }
    panic!(
        "this test runs the real Claude Code through the oracle's capture_cc.sh (loopback-only \
         network namespace, fake model): set AGENTS_ORACLE to its directory"
    )
}

/// What Claude Code sent the model after the Write: the request whose last message carries
/// the Write's tool result.
struct Capture {
    after_write: String,
    hook_calls: String,
}

/// Runs Claude Code 2.1.332 (`capture_cc.sh`) on a project with a clean CLAUDE.md and the hook
/// `ctxgraph hook --install` wrote; its fake model reads CLAUDE.md, then writes `content`
/// to it. `ctxgraph` on PATH is the binary under test, behind a shim that logs each call.
fn claude_code_writes_claude_md(content: &str) -> Capture {
    let oracle = agents_oracle();
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path();
    let proj = root.join("fixture/proj");
    std::fs::create_dir_all(&proj).expect("proj");
    std::fs::write(proj.join("CLAUDE.md"), "# Rules\n\nRun the tests.\n").expect("CLAUDE.md");
    let installed = ctxgraph(root).args(["hook", "--install"]).current_dir(&proj).output().expect("install");
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));

    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let log = root.join("hook-calls.log");
    let shim = bin.join("ctxgraph");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_ctxgraph")
        ),
    )
    .expect("shim");
    std::fs::set_permissions(
        &shim,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .expect("chmod");

    // Claude Code writes a file only after reading it; each call its own id.
    let tools = json!([
        { "name": "Read", "id": "toolu_ctxgraph_read", "input": { "file_path": "<proj>/CLAUDE.md" } },
        { "name": "Write", "id": "toolu_ctxgraph_write", "input": { "file_path": "<proj>/CLAUDE.md", "content": content } }
    ]);
    std::fs::write(root.join("tools.json"), tools.to_string()).expect("tools");
    std::fs::write(root.join("args"), "--permission-mode\nacceptEdits\n").expect("args");
    let out = root.join("out");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = std::process::Command::new(oracle.join("capture_cc.sh"))
        .arg("-T")
        .arg(root.join("tools.json"))
        .arg("-X")
        .arg(root.join("args"))
        .args(["-p", "update the rules"])
        .arg(root.join("fixture"))
        .arg(&out)
        .env("PATH", path)
        .output()
        .expect("capture_cc.sh");
    let said = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "capture_cc.sh failed:\n{said}");
    assert!(said.contains("connects (non-AF_UNIX, non-loopback):\nnone"), "{said}");

    let mut after_write = None;
    for n in 1..=60 {
        let Ok(text) = std::fs::read_to_string(out.join(format!("cap/req-{n}.json"))) else { break };
        let request: Value = serde_json::from_str(&text).expect("request JSON");
        let last = request["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
        let answers_write = last["content"]
            .as_array()
            .is_some_and(|parts| parts.iter().any(|p| p["tool_use_id"] == "toolu_ctxgraph_write"));
        if answers_write {
            after_write = Some(last.to_string());
        }
    }
    Capture {
        after_write: after_write.unwrap_or_else(|| panic!("no request carries the Write's result:\n{said}")),
        hook_calls: std::fs::read_to_string(&log).unwrap_or_default(),
    }
}

#[test]
fn claude_code_sends_the_hooks_finding_to_the_model_and_nothing_for_a_clean_edit() {
    // 3000 lines: over the 4000-token budget per rule file (CG007).
    let over = claude_code_writes_claude_md(&format!("# Rules\n\n{}", "Be careful.\n".repeat(3000)));
    assert_eq!(over.hook_calls, "hook run --agent claude-code\n", "the hook ran once, on the Write");
    assert!(over.after_write.contains("PostToolUse:Write hook blocking error"), "{}", over.after_write);
    assert!(over.after_write.contains("CG007 rule-over-budget"), "{}", over.after_write);
    assert!(over.after_write.contains("/run/proj/CLAUDE.md is "), "{}", over.after_write);

    let clean = claude_code_writes_claude_md("# Rules\n\nRun the tests, then lint.\n");
    assert_eq!(clean.hook_calls, "hook run --agent claude-code\n", "the hook ran once, on the Write");
    assert!(!clean.after_write.contains("ctxgraph lint"), "{}", clean.after_write);
    assert!(!clean.after_write.contains("hook"), "{}", clean.after_write);
}
