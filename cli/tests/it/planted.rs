//! A secret planted in a rule file or in a session export reaches the text the agent itself
//! sends, and nothing else.
//!
//! `build`, `nearby` and the history `session messages`/`session compact` print are what the
//! agent sends: a key in `AGENTS.md` is in opencode's request too, and hiding it there would
//! make those commands lie (the `lint` finding CG005 is how ctxgraph warns about it). Every
//! other output (explanations, lint, config, the session analysis, memory, the servers'
//! non-prompt replies, errors) quotes or summarises those files and must never carry the key.
//! Each verbatim command is also asserted to contain it, so the planting is proven to reach
//! the commands that must not print it.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::support::{ctxgraph, git_repo};
use Verbatim::{Not, Sends};

/// A fake key of the AWS access-key shape, assembled at run time (no key-shaped literal in
/// the source). The files also glue it into identifiers by `_`, as ids and variable names do.
fn planted_key() -> String {
    format!("AKIA{}", "Q7".repeat(8))
}

struct Run {
    args: String,
    code: Option<i32>,
    stdout: String,
    text: String,
}

fn run(root: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut child = ctxgraph(root)
        .args(args)
        .current_dir(root.join("repo"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("XDG_DATA_HOME", root.join("data"))
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ctxgraph");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("stdin");
    }
    let output = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Run {
        args: args.join(" "),
        code: output.status.code(),
        text: format!("--- stdout\n{stdout}\n--- stderr\n{}", String::from_utf8_lossy(&output.stderr)),
        stdout,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

/// Runs every command, asserting the key is in exactly the verbatim ones.
fn assert_only_verbatim(root: &Path, key: &str, commands: &[(&[&str], Verbatim)]) {
    for (args, verbatim) in commands {
        let out = run(root, args, None);
        assert!(
            matches!(out.code, Some(0 | 1)),
            "`ctxgraph {}` failed (exit {:?}):\n{}",
            out.args,
            out.code,
            out.text
        );
        match verbatim {
            Verbatim::Sends => {
                assert!(
                    out.stdout.contains(key),
                    "`ctxgraph {}` lost what the agent sends:\n{}",
                    out.args,
                    out.text
                );
            }
            Verbatim::Not => {
                assert!(
                    !out.text.contains(key),
                    "`ctxgraph {}` printed the planted key:\n{}",
                    out.args,
                    out.text
                );
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Verbatim {
    /// The output is (or holds) the text the agent sends.
    Sends,
    /// Any other output.
    Not,
}

#[test]
fn a_key_in_a_rule_file_reaches_only_the_prompt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let key = planted_key();
    let repo = root.join("repo");
    git_repo(&repo);
    write(&repo.join("AGENTS.md"), &format!("# Rules\n\nDeploy with deploy_{key} and key {key}.\n"));
    write(&repo.join("src/AGENTS.md"), &format!("# Source\n\nstaging_{key}\n"));
    write(&repo.join("src/main.ts"), "export {};\n");
    write(&repo.join("CLAUDE.md"), &format!("claude {key}\n"));
    std::fs::create_dir_all(root.join("home")).expect("home");
    let commands: &[(&[&str], Verbatim)] = &[
        (&["build"], Sends),
        // Every agent's JSON carries the text it sends, block by block.
        (&["build", "--format", "json"], Sends),
        (&["build", "--agent", "claude-code"], Sends),
        (&["nearby", "src/main.ts"], Sends),
        (&["explain"], Not),
        (&["explain", "--format", "json"], Not),
        (&["explain", "--format", "dot"], Not),
        (&["explain", "AGENTS.md"], Not),
        (&["explain", "--agent", "all", "src/AGENTS.md"], Not),
        (&["explain", "--agent", "all", "--format", "json", "AGENTS.md"], Not),
        (&["lint"], Not),
        (&["lint", "--format", "json"], Not),
        (&["lint", "--format", "sarif"], Not),
        (&["lint", "--agent", "all"], Not),
        (&["config"], Not),
    ];
    assert_only_verbatim(&root, &key, commands);
    // The one lint finding that is about the key names it by kind and place only.
    let lint = run(&root, &["lint", "--format", "json"], None);
    assert!(lint.stdout.contains("AWS access key ID"), "{}", lint.text);

    // serve: `build` replies with the prompt; explain and lint replies do not carry the key.
    let cwd = repo.display().to_string();
    let request = |id: u32, method: &str, params: serde_json::Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let input = [
        request(1, "build", serde_json::json!({"cwd": cwd})),
        request(2, "explain", serde_json::json!({"cwd": cwd})),
        request(3, "lint", serde_json::json!({"cwd": cwd})),
        request(4, "nearby", serde_json::json!({"cwd": cwd, "file": "src/main.ts"})),
        request(5, "shutdown", serde_json::json!({})),
    ]
    .join("\n")
        + "\n";
    let serve = run(&root, &["serve", "--stdio", "--no-watch"], Some(&input));
    let replies: Vec<serde_json::Value> =
        serve.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let reply = |id: u32| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no reply {id}:\n{}", serve.text))
            .to_string()
    };
    assert!(reply(1).contains(&key), "serve build lost the prompt:\n{}", serve.text);
    assert!(reply(4).contains(&key), "serve nearby lost the reminder:\n{}", serve.text);
    for id in [2, 3] {
        assert!(!reply(id).contains(&key), "serve reply {id} carries the key:\n{}", serve.text);
        assert!(reply(id).contains("result"), "serve reply {id} is an error:\n{}", serve.text);
    }
}

fn session_fixture(repo: &Path, key: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session/e01_nearby_claims/export.json");
    let text = std::fs::read_to_string(path).expect("fixture").replace("<PROJ>", &repo.display().to_string());
    let mut export: serde_json::Value = serde_json::from_str(&text).expect("json");
    let messages = export["messages"].as_array_mut().expect("messages");
    // The user's prompt, a read's output and the assistant's answer each carry the key.
    messages[0]["parts"][0]["text"] = format!("read two files with token_{key}").into();
    let read = &mut messages[1]["parts"][1]["state"]["output"];
    *read = format!("{}\nsecret_{key}\n", read.as_str().expect("output")).into();
    messages[2]["parts"][1]["text"] = format!("both read; the key is {key}").into();
    export.to_string()
}

#[test]
fn a_key_in_a_session_export_reaches_only_the_history_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let key = planted_key();
    let repo = root.join("repo");
    git_repo(&repo);
    for (file, text) in [("sub/AGENTS.md", "sub rule\n"), ("sub/deep/AGENTS.md", "deep rule\n")] {
        write(&repo.join(file), text);
    }
    for file in ["sub/a.txt", "sub/deep/b.txt", "sub/deep/c.txt"] {
        write(&repo.join(file), "x\n");
    }
    std::fs::create_dir_all(root.join("home")).expect("home");
    let session = root.join("s.json");
    write(&session, &session_fixture(&repo, &key));
    let s = session.display().to_string();
    let limits = ["--context", "30000", "--output", "4000"];
    let with_limits =
        |args: &[&str]| -> Vec<String> { args.iter().chain(&limits).map(|a| (*a).to_owned()).collect() };
    let plain = |args: &[&str]| -> Vec<String> { args.iter().map(|a| (*a).to_owned()).collect() };
    let commands: Vec<(Vec<String>, Verbatim)> = vec![
        (plain(&["session", "messages", "--session", &s]), Sends),
        (with_limits(&["session", "compact", "--session", &s]), Sends),
        (with_limits(&["explain", "--session", &s]), Not),
        (with_limits(&["explain", "--session", &s, "--format", "json"]), Not),
        (with_limits(&["explain", "--session", &s, "--message", "msg_0003"]), Not),
        (plain(&["nearby", "--session", &s, "sub/a.txt"]), Not),
        (plain(&["memory", "session-card", "add", "--from-export", &s]), Not),
        (plain(&["memory", "show"]), Not),
        (plain(&["memory", "show", "--format", "json"]), Not),
        (plain(&["memory", "recall", "read two files"]), Not),
    ];
    let borrowed: Vec<(Vec<&str>, Verbatim)> =
        commands.iter().map(|(args, v)| (args.iter().map(String::as_str).collect(), *v)).collect();
    let borrowed: Vec<(&[&str], Verbatim)> = borrowed.iter().map(|(args, v)| (args.as_slice(), *v)).collect();
    assert_only_verbatim(&root, &key, &borrowed);

    // serve alike: the next messages are what the agent sends; the session's analysis is not.
    let cwd = repo.display().to_string();
    let request = |id: u32, method: &str, params: serde_json::Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let serve = |lines: &[String]| {
        let replies = run(&root, &["serve", "--stdio", "--no-watch"], Some(&(lines.join("\n") + "\n")));
        let parsed: Vec<serde_json::Value> =
            replies.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        (parsed, replies.text)
    };
    let open = request(1, "session/open", serde_json::json!({"path": s}));
    let (opened, text) = serve(std::slice::from_ref(&open));
    let id = opened[0]["result"]["session"].as_str().unwrap_or_else(|| panic!("{text}")).to_owned();
    let (replies, text) = serve(&[
        open,
        request(2, "session/messages", serde_json::json!({"session": id})),
        request(
            3,
            "session/explain",
            serde_json::json!({"cwd": cwd, "session": id, "context": 30000, "output": 4000}),
        ),
        request(4, "shutdown", serde_json::json!({})),
    ]);
    let reply = |n: u32| replies.iter().find(|r| r["id"] == n).map(ToString::to_string).unwrap_or_default();
    assert!(reply(2).contains(&key), "serve session/messages lost what the agent sends:\n{text}");
    assert!(reply(3).contains("result") && !reply(3).contains(&key), "serve session/explain:\n{text}");
}

/// A key written into a config that ctxgraph refuses: the error quotes the line, a schema
/// issue quotes the value, and neither shows the key (the caret still points at the place).
#[test]
fn a_key_in_a_refused_config_reaches_no_error() {
    let key = format!("sk-ant-api03-{}", "d".repeat(40));
    let worlds = [
        ("jsonc", format!(r#"{{"provider": {{"p": {{"options": {{"apiKey": "{key}"}}}}}} "x": 1}}"#)),
        ("schema", format!(r#"{{"share": "{key}"}}"#)),
        ("long line", format!(r#"{{"a": "{}", "b": "{key}" "x": 1}}"#, "y".repeat(500))),
    ];
    for (world, config) in worlds {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        git_repo(&root.join("repo"));
        write(&root.join("repo/opencode.json"), &config);
        std::fs::create_dir_all(root.join("home")).expect("home");
        for args in [
            &["build"][..],
            &["build", "--format", "json"],
            &["lint"],
            &["lint", "--format", "json"],
            &["explain"],
        ] {
            let out = run(&root, args, None);
            assert_eq!(out.code, Some(2), "{world}: `ctxgraph {}`:\n{}", out.args, out.text);
            assert!(
                !out.text.contains(&key),
                "{world}: `ctxgraph {}` printed the key:\n{}",
                out.args,
                out.text
            );
            assert!(
                out.text.contains("[REDACTED:anthropic_key]"),
                "{world}: `ctxgraph {}`:\n{}",
                out.args,
                out.text
            );
        }
    }
}
