//! `build` and `nearby` with `--agent claude-code` end to end: the JSON report with each
//! file's fate, the `~/.claude.json` approval as read, Claude Code's wording unavailable
//! (placeholders, a warning, `wording.from: "unavailable"`), and `check` scenarios. What Claude Code
//! sends is pinned by the recorded cases in `tests/agents/claude-code/`; this module checks
//! the binary's own surface.

use crate::agents::{build_report, run, snapshot_then_drift, tree};

const FILES: &[(&str, &str)] = &[
    ("home/.claude/CLAUDE.md", "User rules.\n"),
    ("repo/CLAUDE.md", "Root rules. @docs/style.md @../outside.md @docs/missing.md\n"),
    ("repo/docs/style.md", "Style.\n"),
    ("outside.md", "Outside the project.\n"),
    ("repo/.claude/rules/ts.md", "---\npaths: \"src/**/*.ts\"\n---\nTypeScript rule.\n"),
    ("repo/.claude/CLAUDE.md", "  \n"),
    ("repo/src/CLAUDE.md", "Src rules.\n"),
    ("repo/src/a.ts", "export {}\n"),
];

#[test]
fn json_lists_what_is_sent_and_why_the_rest_is_not() {
    let (_dir, root) = tree(FILES);
    let (report, text) = build_report(&root, "repo", "claude-code");
    insta::assert_snapshot!("claude_code_json", serde_json::to_string_pretty(&report).expect("JSON"));

    // No installation on PATH: placeholders, a warning, and the entries all the same.
    assert_eq!(report["wording"]["from"], "unavailable");
    assert!(text.stderr.starts_with("warning: Claude Code's own wording is unavailable"), "{}", text.stderr);
    assert!(text.stdout.contains("Contents of [TMP]/repo/docs/style.md"), "{}", text.stdout);
    assert!(!text.stdout.contains("Outside the project."), "{}", text.stdout);
}

#[test]
fn an_approval_in_claude_json_lets_imports_leave_the_working_directory() {
    let (_dir, root) = tree(FILES);
    let approval = format!(
        r#"{{"projects": {{"{}": {{"hasClaudeMdExternalIncludesApproved": true}}}}}}"#,
        root.join("repo").display()
    );
    std::fs::write(root.join("home/.claude.json"), approval).expect("write");
    let text = run(&root, "repo", &["build", "--agent", "claude-code"]);
    assert!(text.stdout.contains("Outside the project."), "{}", text.stdout);
    let json = run(&root, "repo", &["build", "--agent", "claude-code", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let approval = &report["settings"][0];
    assert_eq!(approval["name"], "hasClaudeMdExternalIncludesApproved", "{report}");
    assert_eq!(approval["value"], "true", "{report}");
    assert_eq!(approval["from"], "[TMP]/home/.claude.json", "{report}");
}

#[test]
fn a_broken_claude_json_is_reported_not_fatal() {
    let (_dir, root) = tree(FILES);
    std::fs::write(root.join("home/.claude.json"), "{\"projects\": [").expect("write");
    let json = run(&root, "repo", &["build", "--agent", "claude-code", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let approval = report["settings"][0]["value"].as_str().unwrap_or_default();
    assert!(approval.starts_with("cannot be used") && approval.contains("line 1"), "{report}");
    let outside = &report["left_out"][0];
    assert!(
        outside["reason"].as_str().is_some_and(|r| r.contains(".claude.json cannot be used")),
        "{outside}"
    );
}

#[test]
fn a_bundle_that_does_not_match_the_fingerprints_is_not_used() {
    let (_dir, root) = tree(FILES);
    // A "bundle" with the right shape and other words (over 1 MiB, so not a launcher).
    let mut bundle = "x".repeat(1024 * 1024).into_bytes();
    bundle.extend_from_slice(br#";var p="Other words.";function w(e){switch(e){case"Project":return" (p)";case"Local":return" (l)";case"User":return" (u)"}}"#);
    std::fs::write(root.join("cli.js"), bundle).expect("write");
    let cli = root.join("cli.js");
    let run = run(
        &root,
        "repo",
        &["build", "--agent", "claude-code", "--claude-code", cli.to_str().expect("utf-8")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("no preamble and labels matching Claude Code"), "{}", run.stderr);
    assert!(!run.stdout.contains("Other words."), "{}", run.stdout);
}

#[test]
fn nearby_shows_what_a_read_attaches() {
    let (_dir, root) = tree(FILES);
    let text = run(&root, "repo", &["nearby", "src/a.ts", "--agent", "claude-code"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(
        text.stdout,
        "<system-reminder>\nContents of [TMP]/repo/src/CLAUDE.md:\n\nSrc rules.\n\n</system-reminder>\n\n\
         <system-reminder>\nContents of [TMP]/repo/.claude/rules/ts.md:\n\nTypeScript rule.\n\n</system-reminder>"
    );
    let json = run(&root, "repo", &["nearby", "src/a.ts", "--agent", "claude-code", "--format", "json"]);
    let mut report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    crate::agents::check_blocks(&mut report, &text.raw_stdout);
    insta::assert_snapshot!("claude_code_nearby_json", serde_json::to_string_pretty(&report).expect("JSON"));

    let missing = run(&root, "repo", &["nearby", "src/nope.ts", "--agent", "claude-code"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

/// `check` pins what Claude Code sees, with its wording as fingerprints (no installation
/// needed in CI), and what a read attaches; an edit to a file it loads fails the check.
#[test]
fn check_pins_the_claude_code_block() {
    let (_dir, root) = tree(&[
        ("repo/CLAUDE.md", "Root rules.\n"),
        ("repo/src/CLAUDE.md", "Src rules.\n"),
        ("repo/src/a.ts", "export {}\n"),
        ("repo/ctxgraph.toml", "[scenario.claude]\nagent = \"claude-code\"\nreads = [\"src/a.ts\"]\n"),
    ]);
    let snap = snapshot_then_drift(&root, "claude", ("repo/src/CLAUDE.md", "Src rules, edited.\n"));
    assert!(snap.contains("\nprofile: claude-code-2.1.332\n"), "{snap}");
    assert!(snap.contains("<system-reminder>\n<prose:blake3="), "{snap}");
    assert!(snap.contains("Contents of <repo>/CLAUDE.md<prose:blake3="), "{snap}");
    assert!(
        snap.contains("--- read <repo>/src/a.ts ---\n<system-reminder>\nContents of <repo>/src/CLAUDE.md:"),
        "{snap}"
    );
}

/// CC16–CC20 end to end: `--section request` lists the project's skill and agent in send
/// order, each from its file, with the machine's blocks marked unstable; `-c
/// append-system-prompt` puts the text in the system message; a key Claude Code has not is
/// refused, as is `--section request` for an agent that does not build it.
#[test]
fn the_whole_request_lists_the_project_files_in_send_order() {
    let mut files = FILES.to_vec();
    files.push(("repo/.claude/skills/deploy/SKILL.md", "---\ndescription: Deploys.\n---\nBody.\n"));
    files.push(("repo/.claude/agents/rev.md", "---\nname: rev\ndescription: Reviews.\n---\nBody.\n"));
    let (_dir, root) = tree(&files);
    let args =
        ["build", "--agent", "claude-code", "--section", "request", "-c", "append-system-prompt=Be brief."];
    let json = run(&root, "repo", &[&args[..], &["--format", "json"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let blocks = report["blocks"].as_array().expect("blocks");
    let position = |what: &str| {
        blocks
            .iter()
            .position(|b| b["source"].as_str().is_some_and(|s| s.ends_with(what)))
            .unwrap_or(usize::MAX)
    };
    let (appended, agent, skill, rules) = (
        position("--append-system-prompt"),
        position(".claude/agents/rev.md"),
        position(".claude/skills/deploy/SKILL.md"),
        position("repo/CLAUDE.md"),
    );
    assert!(appended < agent && agent < skill && skill < rules && rules < blocks.len(), "{report}");
    assert_eq!(blocks[appended]["placement"], "system_message");
    assert_eq!(blocks[skill]["placement"], "first_user_message");
    assert_eq!(blocks[skill]["rule"], "CC17");
    assert_eq!(blocks[agent]["rule"], "CC18");
    assert!(blocks.iter().any(|b| b["source"] == "environment" && b["unstable"].is_string()), "{report}");
    let text = run(&root, "repo", &args);
    assert!(
        text.stdout.contains("\n\nBe brief.\n\n") && text.stdout.contains("- deploy: Deploys."),
        "{}",
        text.stdout
    );

    let refused =
        run(&root, "repo", &["build", "--agent", "claude-code", "--section", "request", "-c", "model=x"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("append-system-prompt"), "{}", refused.stderr);
    let replaced = run(
        &root,
        "repo",
        &["build", "--agent", "claude-code", "--section", "request", "-c", "system-prompt=Mine."],
    );
    assert!(
        replaced.stdout.contains("\n\nMine.\n\n") && !replaced.stdout.contains("<machine:git-status>"),
        "{}",
        replaced.stdout
    );
    let flag =
        ["build", "--agent", "claude-code", "--section", "request", "-c", "disable-slash-commands=maybe"];
    let refused = run(&root, "repo", &flag);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("disable-slash-commands=maybe"), "{}", refused.stderr);
    let explained =
        run(&root, "repo", &["explain", "--agent", "claude-code", ".claude/skills/deploy/SKILL.md"]);
    assert!(
        explained.stdout.contains("sent (first user message, a line of the skill list)"),
        "{}",
        explained.stdout
    );
    let refused = run(&root, "repo", &["build", "--agent", "gemini", "--section", "request"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("--section request"), "{}", refused.stderr);
}

/// CC22: `build --section request` starts the working directory's MCP servers as Claude Code
/// does (this repository's `tests/oracle/mcp_server.py`, over stdio) for their tool names and
/// instructions; one that cannot start is left out with why and a warning; `--no-mcp` starts
/// none and says each is not connected.
#[test]
fn the_whole_request_asks_the_mcp_servers() {
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/mcp_server.py");
    let server = server.display();
    let config = format!(
        r#"{{"mcpServers": {{
            "docs": {{"command": "python3", "args": ["{server}", "--instructions", "Use docs_find.", "--tools", "docs_find"]}},
            "gone": {{"command": "/nonexistent/ctxgraph-test-server"}}
        }}}}"#
    );
    let mut files = FILES.to_vec();
    files.push(("repo/.mcp.json", &config));
    let (_dir, root) = tree(&files);
    let args = ["build", "--agent", "claude-code", "--section", "request"];
    let text = run(&root, "repo", &args);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("mcp__docs__docs_find\n</system-reminder>"), "{}", text.stdout);
    assert!(text.stdout.contains("\n\n## docs\nUse docs_find.\n</system-reminder>"), "{}", text.stdout);
    assert!(
        text.stderr.contains("warning: MCP server \"gone\": could not start the command"),
        "{}",
        text.stderr
    );

    let json = run(&root, "repo", &[&args[..], &["--format", "json"]].concat());
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let left = report["left_out"].as_array().expect("left_out");
    assert!(
        left.iter().any(|l| l["rule"] == "CC22" && l["reason"].as_str().is_some_and(|r| r.contains("gone"))),
        "{report}"
    );

    let quiet = run(&root, "repo", &[&args[..], &["--no-mcp"]].concat());
    assert!(!quiet.stdout.contains("mcp__"), "{}", quiet.stdout);
    let json = run(&root, "repo", &[&args[..], &["--no-mcp", "--format", "json"]].concat());
    assert!(json.stdout.contains("the MCP server docs: not connected"), "{}", json.stdout);

    // `serve` connects them too, once, and answers the CLI's text.
    let mut serve = crate::mcp::Proc::spawn(&root, &["serve", "--stdio", "--no-watch"]);
    let params = serde_json::json!({"cwd": root.join("repo"), "agent": "claude-code", "section": "request"});
    let call = |id: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "build", "params": params}).to_string()
    };
    for id in 1..=2 {
        let reply = serve.call(call(id).as_bytes());
        let answered = reply["result"]["text"].as_str().unwrap_or_else(|| panic!("turn {id}: {reply}"));
        assert_eq!(answered.as_bytes(), text.raw_stdout, "turn {id}");
    }
    assert_eq!(serve.finish().0, Some(0));
}

/// `check` pins Claude Code's whole request with its MCP servers' tool names when the
/// scenario says `mcp = true` (CC22), started as `build` starts them; without it the servers
/// are left out as not connected, and the snapshot says so by their absence.
#[test]
fn check_pins_the_mcp_servers_of_the_whole_request() {
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/mcp_server.py");
    // A scenario's environment has no PATH: the interpreter by its absolute path.
    let python = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
        .expect("python3 on PATH");
    let config = serde_json::json!({"mcpServers": {"docs": {
        "command": python, "args": [server, "--instructions", "Use docs_find.", "--tools", "docs_find"]
    }}})
    .to_string();
    let scenarios = "[scenario.on]\nagent = \"claude-code\"\nsection = \"request\"\nmcp = true\n\n\
                     [scenario.off]\nagent = \"claude-code\"\nsection = \"request\"\n";
    let (_dir, root) = tree(&[
        ("repo/CLAUDE.md", "Root rules.\n"),
        ("repo/.mcp.json", &config),
        ("repo/ctxgraph.toml", scenarios),
    ]);
    let snapshot = run(&root, "repo", &["snapshot"]);
    assert_eq!(snapshot.code, 0, "{}", snapshot.stderr);
    let read = |name: &str| {
        std::fs::read_to_string(root.join("repo/.ctxgraph/snapshots").join(format!("{name}.snap")))
            .expect("snap")
    };
    let (on, off) = (read("on"), read("off"));
    assert!(on.contains("mcp__docs__docs_find\n") && on.contains("## docs\nUse docs_find.\n"), "{on}");
    assert!(!off.contains("mcp__docs__docs_find"), "{off}");
    let check = run(&root, "repo", &["check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}
