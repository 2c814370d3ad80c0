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
    assert!(explained.contains("memory (docs/memory.md §11)"), "{explained}");

    let forgotten: serde_json::Value =
        serde_json::from_str(&ws.ok(&["memory", "forget", "forget npm"])).unwrap();
    assert_eq!(forgotten["forgotten"].as_array().unwrap().len(), 1);
    assert!(!ws.ok(&["build"]).contains("pnpm"));
    let explained = ws.ok(&["explain"]);
    assert!(explained.contains("inactive (user-forget)"), "{explained}");
    // The same in JSON: what the block holds, and what was cut and why.
    let explained: serde_json::Value =
        serde_json::from_str(&ws.ok(&["explain", "--format", "json"])).unwrap();
    let facts = &explained["memory"]["blocks"][0];
    assert_eq!(facts["id"], "facts", "{explained}");
    assert_eq!(facts["recalled"].as_array().unwrap().len(), 1, "{explained}");
    assert_eq!(facts["cut"].as_array().unwrap().len(), 1, "{explained}");
    assert_eq!(facts["cut"][0]["id"], forgotten["forgotten"][0]);
    assert_eq!(facts["cut"][0]["reason"], "inactive");
    assert_eq!(facts["cut"][0]["why"], "inactive (user-forget)");
    assert!(
        explained["memory"]["chars"].as_u64().unwrap() <= explained["memory"]["max_chars"].as_u64().unwrap()
    );
}

#[test]
fn explain_json_has_no_memory_section_when_memory_is_off() {
    let ws = Workspace::new();
    ws.write("AGENTS.md", "# Rules");
    ws.ok(&["memory", "remember", "Use pnpm"]);
    let explained: serde_json::Value =
        serde_json::from_str(&ws.ok(&["explain", "--format", "json"])).unwrap();
    assert!(explained.get("memory").is_none(), "{explained}");
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

/// `ctxgraph mcp` through the official SDK's client, over the child's stdin/stdout.
mod mcp {
    use rmcp::model::{CallToolRequestParams, CallToolResult};
    use rmcp::service::{RoleClient, RunningService};
    use rmcp::transport::TokioChildProcess;
    use rmcp::{ServiceError, ServiceExt};
    use serde_json::{Value, json};

    use super::Workspace;

    type Client = RunningService<RoleClient, ()>;

    async fn connect(ws: &Workspace, session: &str) -> Client {
        let command = ws.command(&["mcp", "--session", session]);
        let transport = TokioChildProcess::new(tokio::process::Command::from(command)).unwrap();
        ().serve(transport).await.unwrap()
    }

    async fn call(client: &Client, tool: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)).await
    }

    /// The text of a call that succeeded.
    async fn ok(client: &Client, tool: &str, arguments: Value) -> String {
        let result = call(client, tool, arguments.clone()).await.unwrap();
        let text = text(&result);
        assert_eq!(result.is_error, Some(false), "{tool} {arguments}: {text}");
        text
    }

    /// The message of a call that failed as a tool error.
    async fn tool_error(client: &Client, tool: &str, arguments: Value) -> String {
        let result = call(client, tool, arguments.clone()).await.unwrap();
        let text = text(&result);
        assert_eq!(result.is_error, Some(true), "{tool} {arguments}: {text}");
        text
    }

    fn text(result: &CallToolResult) -> String {
        result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn two_sessions_remember_recall_and_forget_through_mcp() {
        let ws = Workspace::new();
        ws.write("AGENTS.md", "# Rules");
        ws.write("opencode.json", r#"{ "memory": { "enabled": true } }"#);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let a = connect(&ws, "ses_a").await;
            let b = connect(&ws, "ses_b").await;

            let mut tools: Vec<(String, Value)> = a
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| (t.name.to_string(), Value::Object((*t.input_schema).clone())))
                .collect();
            tools.sort_by(|x, y| x.0.cmp(&y.0));
            let names: Vec<&str> = tools.iter().map(|(name, _)| name.as_str()).collect();
            assert_eq!(
                names,
                [
                    "context_build",
                    "context_config",
                    "context_explain",
                    "context_lint",
                    "context_nearby",
                    "memory_forget",
                    "memory_recall",
                    "memory_remember",
                    "session_append",
                    "session_compact",
                    "session_explain",
                    "session_messages",
                    "session_open",
                    "session_rules",
                ]
            );
            let (_, recall_schema) = &tools[6];
            assert_eq!(recall_schema["type"], "object");
            assert_eq!(recall_schema["required"], json!(["query"]), "{recall_schema}");
            assert_eq!(recall_schema["properties"]["limit"]["type"], json!(["integer", "null"]));

            // Session a remembers; session b, another process, recalls it on its next call.
            let added = ok(&a, "memory_remember", json!({ "text": "Use pnpm, not npm, in this repo" })).await;
            let added: Value = serde_json::from_str(&added).unwrap();
            assert_eq!(added["result"], "added");
            let user =
                ok(&b, "memory_remember", json!({ "text": "Prefers small commits", "scope": "user" })).await;
            assert!(user.contains("\"added\""), "{user}");
            let recalled =
                ok(&b, "memory_recall", json!({ "query": "which package manager: pnpm or npm?" })).await;
            assert!(recalled.contains("- [project] Use pnpm, not npm, in this repo\n"), "{recalled}");
            assert!(!recalled.contains("small commits"), "{recalled}");

            // The prompt as the MCP tool builds it is byte for byte `ctxgraph build`'s.
            let built = ok(&b, "context_build", json!({})).await;
            assert_eq!(built, ws.ok(&["build"]));
            assert!(built.contains("## Remembered User/Project Facts\n"), "{built}");
            assert!(built.ends_with("\n</memory>"), "{built}");

            // Session b forgets what a remembered; a no longer recalls it.
            let forgotten =
                ok(&b, "memory_forget", json!({ "target": "forget that we use pnpm not npm" })).await;
            let forgotten: Value = serde_json::from_str(&forgotten).unwrap();
            assert_eq!(forgotten["forgotten"], json!([added["id"]]));
            let recalled = ok(&a, "memory_recall", json!({ "query": "pnpm" })).await;
            assert_eq!(recalled, "No stored memory matched \"pnpm\".\n");
            assert!(!ok(&a, "context_build", json!({})).await.contains("pnpm"));
            let explained = ok(&a, "context_explain", json!({ "format": "json" })).await;
            let explained: Value = serde_json::from_str(&explained).unwrap();
            assert_eq!(explained["memory"]["blocks"][0]["cut"][0]["why"], "inactive (user-forget)");
            assert!(ok(&a, "context_explain", json!({})).await.contains("memory (docs/memory.md §11)"));

            // Bad calls are tool errors the model can read; the server goes on serving.
            let error = tool_error(&a, "memory_recall", json!({ "quer": "pnpm" })).await;
            assert!(error.contains("unknown field `quer`"), "{error}");
            let error = tool_error(&a, "memory_recall", json!({ "query": "" })).await;
            assert!(error.contains("query: 1 to 2000 characters"), "{error}");
            let error = tool_error(&a, "memory_recall", json!({ "query": "x", "limit": 50 })).await;
            assert!(error.contains("limit: 1 to 20"), "{error}");
            let error = tool_error(&a, "memory_forget", json!({ "target": "fct_nothing" })).await;
            assert!(error.contains("no fact matches"), "{error}");
            let error = tool_error(&a, "memory_remember", json!({ "text": "   " })).await;
            assert!(error.contains("nothing to remember"), "{error}");
            let error = tool_error(&a, "context_build", json!({ "model": "no-slash" })).await;
            assert!(error.contains("expected PROVIDER/MODEL"), "{error}");
            assert!(call(&a, "no_such_tool", json!({})).await.is_err());
            ws.write("opencode.json", "{ \"memory\": ");
            let error = tool_error(&a, "context_build", json!({})).await;
            assert!(error.contains("opencode.json"), "{error}");
            ws.write("opencode.json", r#"{ "memory": { "enabled": true } }"#);
            assert!(ok(&a, "context_build", json!({})).await.contains("Prefers small commits"));

            a.cancel().await.unwrap();
            b.cancel().await.unwrap();
        });
    }

    /// A store file that is a FIFO used to block the server for good: now every memory tool
    /// answers at once with an error naming it, and the server goes on serving.
    #[test]
    fn a_store_file_that_is_a_fifo_is_a_tool_error() {
        let ws = Workspace::new();
        let path = super::facts_path(&ws);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let a = connect(&ws, "ses_a").await;
            for (tool, arguments) in [
                ("memory_remember", json!({ "text": "Use pnpm, not npm" })),
                ("memory_recall", json!({ "query": "pnpm" })),
                ("memory_forget", json!({ "target": "pnpm" })),
            ] {
                let answer =
                    tokio::time::timeout(std::time::Duration::from_secs(20), call(&a, tool, arguments));
                let result = answer.await.expect("answered within 20 s").unwrap();
                let text = text(&result);
                assert_eq!(result.is_error, Some(true), "{tool}: {text}");
                assert!(text.contains(path.to_str().unwrap()) && text.contains("FIFO"), "{tool}: {text}");
            }
            a.cancel().await.unwrap();
        });
    }

    #[test]
    fn a_missing_workspace_is_refused_at_start() {
        let ws = Workspace::new();
        std::fs::remove_dir_all(ws.repo()).unwrap();
        let output = ws.command(&["mcp"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", super::show(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(ws.repo().to_str().unwrap()), "{stderr}");
    }
}

/// A chat-completions endpoint on 127.0.0.1 that answers each request with `reply` (status,
/// body) in turn and keeps each request (head and body). It serves `replies.len()`
/// connections, or stops after 30 s.
fn fake_model(replies: Vec<(u16, String)>) -> (String, std::thread::JoinHandle<Vec<String>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::time::{Duration, Instant};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut requests = Vec::new();
        for (status, body) in replies {
            let stream = loop {
                match listener.accept() {
                    Ok((stream, _)) => break Some(stream),
                    Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                    Err(_) => break None,
                }
            };
            let Some(mut stream) = stream else { break };
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                head.push_str(&line);
            }
            let mut request = vec![0; length];
            reader.read_exact(&mut request).unwrap();
            write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            requests.push(head + &String::from_utf8(request).unwrap());
        }
        requests
    });
    (url, server)
}

#[test]
fn observe_asks_the_configured_model_once_per_evidence() {
    let ws = Workspace::new();
    let lesson = serde_json::json!({"observations": [{"kind": "gotcha", "l0": "bun test must run from packages/app", "keywords": ["bun"]}]});
    let reply =
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": lesson.to_string()}}]});
    let (url, server) =
        fake_model(vec![(200, reply.to_string()), (500, "{\"error\":\"overloaded\"}".to_owned())]);
    ws.write(
        "opencode.json",
        &serde_json::json!({
            "memory": { "enabled": true },
            "memory_model": "local/small",
            "provider": { "local": { "options": { "baseURL": url, "apiKey": "test-key" } } },
        })
        .to_string(),
    );
    let secret = format!("ghp_{}", "a".repeat(36));
    let output = ws.write("out.txt", &format!("error: preload not found (token {secret})\n"));
    let observe =
        ["memory", "observe", "bash", "error", "--input", "bun test", "--output", output.to_str().unwrap()];
    let first: serde_json::Value = serde_json::from_str(&ws.ok(&observe)).unwrap();
    assert_eq!(first["result"], "stored", "{first}");
    assert_eq!(first["ids"].as_array().unwrap().len(), 1, "{first}");
    // The same evidence again: answered from the hash set, no second request.
    let second: serde_json::Value = serde_json::from_str(&ws.ok(&observe)).unwrap();
    assert_eq!(second["result"], "seen", "{second}");
    assert!(ws.ok(&["build"]).contains("- (bash, gotcha) bun test must run from packages/app"));

    // New evidence meets a failing model: exit 2, naming the endpoint; nothing stored.
    let other = ws.write("other.txt", "error: timeout\n");
    let (code, stderr) =
        ws.fails(&["memory", "observe", "bash", "error", "--output", other.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/v1/chat/completions: HTTP 500"), "{stderr}");
    let requests = server.join().unwrap();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].starts_with("POST /v1/chat/completions"), "{}", requests[0]);
    assert!(requests[0].to_ascii_lowercase().contains("authorization: bearer test-key"));
    assert!(requests[0].contains("\"model\":\"small\""), "{}", requests[0]);
    assert!(requests[0].contains("bun test"), "{}", requests[0]);
    assert!(!requests[0].contains(&secret), "evidence is redacted before it is sent");
    let shown = ws.ok(&["memory", "recall", "bun"]);
    assert_eq!(shown.matches("(bash, gotcha)").count(), 1, "{shown}");
}

#[test]
fn observe_without_a_model_or_endpoint_exits_2() {
    let ws = Workspace::new();
    let output = ws.write("out.txt", "error\n");
    let observe = ["memory", "observe", "bash", "error", "--output", output.to_str().unwrap()];
    let (code, stderr) = ws.fails(&observe);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no model for extraction"), "{stderr}");
    ws.write("opencode.json", r#"{ "small_model": "local/small" }"#);
    let (code, stderr) = ws.fails(&observe);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("has no options.baseURL"), "{stderr}");
    // A closed loopback port: refused, exit 2, nothing stored.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut with_url = observe.to_vec();
    let url = format!("http://127.0.0.1:{port}/v1");
    with_url.extend(["--base-url", url.as_str()]);
    let (code, stderr) = ws.fails(&with_url);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&url), "{stderr}");
    assert!(!ws.repo().join(".opencode/memory/observations.jsonl").exists());
}

/// Runs `command` for at most 20 s (a FIFO used to block it for good): its exit code (-1
/// when it had to be killed) and stderr.
fn bounded(mut command: Command) -> (i32, String) {
    let mut child =
        command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    for _ in 0..400 {
        if child.try_wait().unwrap().is_some() {
            let output = child.wait_with_output().unwrap();
            return (
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    (-1, "killed after 20 s".to_owned())
}

fn facts_path(ws: &Workspace) -> PathBuf {
    ws.repo().join(".opencode/memory/facts.jsonl")
}

#[test]
fn a_torn_multibyte_last_line_does_not_brick_the_store() {
    let ws = Workspace::new();
    ws.ok(&["memory", "remember", "Use pnpm, not npm"]);
    let path = facts_path(&ws);
    let mut log = std::fs::read(&path).unwrap();
    // What a full disk leaves: the next record cut inside "é" (0xC3 0xA9).
    log.extend_from_slice(b"{\"type\":\"fact\",\"v\":1,\"text\":\"caf\xC3");
    std::fs::write(&path, &log).unwrap();
    let shown = ws.ok(&["memory", "show"]);
    assert!(shown.contains("Use pnpm, not npm"), "{shown}");
    assert!(shown.contains("skipped facts.jsonl:2: torn last line"), "{shown}");
    ws.ok(&["memory", "remember", "Prefers small commits"]);
    let log = std::fs::read(&path).unwrap();
    assert!(std::str::from_utf8(&log).is_ok(), "the torn line is cut off");
    assert!(!ws.ok(&["memory", "show"]).contains("skipped"));
    // A line that is not UTF-8 in the middle is listed, and the rest still read.
    let mut log = b"{\"v\":1,\"note\":\"\xFF\"}\n".to_vec();
    log.extend_from_slice(&std::fs::read(&path).unwrap());
    std::fs::write(&path, &log).unwrap();
    let shown = ws.ok(&["memory", "show"]);
    assert!(shown.contains("skipped facts.jsonl:1: not UTF-8"), "{shown}");
    assert!(shown.contains("Prefers small commits"), "{shown}");
}

#[test]
fn store_files_that_cannot_be_read_exit_2_naming_them() {
    let ws = Workspace::new();
    ws.write("opencode.json", r#"{ "memory": { "enabled": true } }"#);
    ws.ok(&["memory", "remember", "Use pnpm, not npm"]);
    let path = facts_path(&ws);
    let named = path.to_str().unwrap().to_owned();
    let check = |what: &str, reason: &str| {
        for args in [
            &["memory", "show"][..],
            &["memory", "recall", "pnpm"],
            &["memory", "remember", "Prefers small commits"],
            &["memory", "forget", "pnpm"],
            &["build"],
        ] {
            let (code, stderr) = bounded(ws.command(args));
            assert_eq!(code, 2, "{what}, {args:?}: {stderr}");
            assert!(stderr.contains(&named) && stderr.contains(reason), "{what}, {args:?}: {stderr}");
        }
    };
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    check("a directory", "directory");
    std::fs::remove_dir(&path).unwrap();
    assert!(Command::new("mkfifo").arg(&path).status().unwrap().success());
    check("a FIFO", "FIFO");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
    check("a link to /dev/zero", "not a regular file");
    std::fs::remove_file(&path).unwrap();
    // Past the limit (a 68 MB garbage line): loud, never an empty recall or a silent drop.
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(68_000_000).unwrap();
    check("68 MB", "67108864");
}

#[test]
fn the_store_never_writes_through_a_link_out_of_the_workspace() {
    let ws = Workspace::new();
    ws.ok(&["memory", "remember", "Use pnpm, not npm"]);
    let outside = ws.root.join("outside.jsonl");
    std::fs::write(&outside, "").unwrap();
    let path = facts_path(&ws);
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let (code, stderr) = ws.fails(&["memory", "remember", "Prefers small commits"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("outside the workspace"), "{stderr}");
    assert_eq!(std::fs::read(&outside).unwrap(), b"");
}

#[test]
fn a_session_export_must_be_a_regular_file() {
    let ws = Workspace::new();
    let fifo = ws.root.join("export.json");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let zero = ws.root.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for export in [&fifo, &zero] {
        let export = export.to_str().unwrap();
        for args in [
            &["explain", "--session", export][..],
            &["session", "compact", "--session", export],
            &["memory", "session-card", "add", "--from-export", export],
            &["memory", "handoff", "set", export],
        ] {
            let (code, stderr) = bounded(ws.command(args));
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stderr.contains(export) && stderr.contains("not a regular file"), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn no_secret_is_stored_or_echoed() {
    let ws = Workspace::new();
    let key = format!("AKIA{}", "IOSFODNN7EXAMPLE");
    ws.ok(&["memory", "--session", &key, "remember", "--category", &key, "Use pnpm, not npm"]);
    let recalled = ws.ok(&["memory", "recall", &format!("where is {key} kept")]);
    assert_eq!(recalled, "No stored memory matched \"where is [REDACTED:aws_key] kept\".\n");
    let (code, stderr) = ws.fails(&["memory", "forget", &format!("the {key} thing")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains(&key) && stderr.contains("[REDACTED:aws_key]"), "{stderr}");
    let handoff = ws.write("handoff.json", &format!(r#"{{"goal":"ship","sessionID":"{key}"}}"#));
    let printed = ws.ok(&["memory", "handoff", "set", handoff.to_str().unwrap()]);
    assert!(!printed.contains(&key), "{printed}");
    let printed = ws.ok(&["memory", "--session", &key, "handoff", "set", handoff.to_str().unwrap()]);
    assert!(!printed.contains(&key), "{printed}");
    for entry in std::fs::read_dir(ws.repo().join(".opencode/memory")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&key), "{}: {text}", path.display());
    }
    // A secret put in the store by hand is not printed either.
    let path = facts_path(&ws);
    let log = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Use pnpm, not npm", &format!("Use {key} for the bucket"));
    std::fs::write(&path, log).unwrap();
    for format in ["text", "json"] {
        let shown = ws.ok(&["memory", "show", "--format", format]);
        assert!(!shown.contains(&key) && shown.contains("[REDACTED:aws_key]"), "{shown}");
    }
}

#[test]
fn temporary_files_of_killed_writers_are_removed_by_the_next_write() {
    let ws = Workspace::new();
    let root = ws.repo().join(".opencode/memory");
    std::fs::create_dir_all(&root).unwrap();
    for name in [".handoff.json.aB3dEf.tmp", ".tool_stats.json.Zx81Qa.tmp"] {
        std::fs::write(root.join(name), "{").unwrap();
    }
    ws.ok(&["memory", "tool-outcome", "bash", "ok"]);
    let mut names: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, [".lock", "tool_stats.json"]);
}

/// A fact record as a hand-written log holds it: no `category` or `status` (their defaults),
/// which a compacted log writes out; `at` orders them by age.
fn fact_line(i: usize, at: i64) -> String {
    format!(
        r#"{{"type":"fact","v":1,"id":"fct_{i:04}","text":"fact number {i}","scope":"project","source":"explicit","hash":"h{i}","createdAt":{at},"updatedAt":{at}}}"#
    )
}

/// A log of `MAX_ACTIVE_FACTS` (200) active facts, the oldest first, then `junk` lines that
/// are not records.
fn full_log(ws: &Workspace, junk: usize) -> Vec<u8> {
    let mut log = String::new();
    for i in 0..200 {
        log.push_str(&fact_line(i, 1_700_000_000_000 + i64::try_from(i).unwrap()));
        log.push('\n');
    }
    log.push_str(&"x\n".repeat(junk));
    ws.write(".opencode/memory/facts.jsonl", &log);
    log.into_bytes()
}

/// `command` with the size of any file it writes limited to `bytes` (`RLIMIT_FSIZE`, set by
/// util-linux's `prlimit`), `SIGXFSZ` ignored so that a write past it fails with `EFBIG`
/// as a write to a full disk fails with `ENOSPC`: the same error path, without root.
fn with_file_size_limit(command: &Command, bytes: usize) -> Command {
    let mut limited = Command::new("/bin/sh");
    limited
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=\"$0\" -- \"$@\"")
        .arg(bytes.to_string())
        .arg(command.get_program())
        .args(command.get_args())
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            limited.env(key, value);
        }
    }
    limited
}

#[test]
fn remember_says_in_words_what_it_stored_and_what_the_cap_retired() {
    let ws = Workspace::new();
    full_log(&ws, 0);
    let said = ws.ok(&["memory", "remember", "Use pnpm, not npm"]);
    assert!(said.starts_with("Remembered as a new fact, fct_"), "{said}");
    assert!(said.contains("Retired 1 older fact to keep at most 200 active"), "{said}");
    assert!(said.contains("  fct_0000 fact number 0\n"), "{said}");
    assert!(!said.contains('{'), "no JSON for a person: {said}");
    let again = ws.ok(&["memory", "remember", "use pnpm,  not NPM"]);
    assert!(again.starts_with("Already known as fct_") && again.contains("nothing was stored"), "{again}");
    // JSON keeps the store's answer, with the retired facts.
    let json: serde_json::Value =
        serde_json::from_str(&ws.ok(&["memory", "remember", "--format", "json", "Prefers small commits"]))
            .unwrap();
    assert_eq!(json["result"], "added", "{json}");
    assert_eq!(json["evicted"], serde_json::json!([{ "id": "fct_0001", "text": "fact number 1" }]), "{json}");
    let shown = ws.ok(&["memory", "show"]);
    assert_eq!(shown.matches("(inactive: evicted)").count(), 2, "{shown}");
}

#[test]
fn a_full_disk_during_compaction_does_not_fail_a_stored_fact() {
    let ws = Workspace::new();
    // 200 facts and 500 lines of junk: due for compaction, and the compacted log (every
    // record written out whole) is larger than the log, so it cannot be written.
    let log = full_log(&ws, 500);
    let path = facts_path(&ws);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let command = ws.command(&["memory", "remember", "Use pnpm, not npm"]);
    let output = with_file_size_limit(&command, log.len() + 1000).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.starts_with("Remembered as a new fact"), "{stdout}");
    assert!(
        stderr.contains("compacting facts.jsonl failed") && stderr.contains("the next write tries again"),
        "{stderr}"
    );
    let stored = std::fs::read_to_string(&path).unwrap();
    assert_eq!(stored.matches("Use pnpm, not npm").count(), 1);
    assert!(stored.starts_with(std::str::from_utf8(&log).unwrap()), "the log is only appended to");
    // The next write, with room, compacts; the log keeps its mode.
    ws.ok(&["memory", "remember", "Prefers small commits"]);
    let compacted = std::fs::read_to_string(&path).unwrap();
    assert!(!compacted.contains("\nx\n"), "compacted: the junk lines are gone");
    assert_eq!(compacted.matches("Use pnpm, not npm").count(), 1);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o7777, 0o640);
}

#[test]
fn a_remember_that_fails_stores_nothing() {
    let ws = Workspace::new();
    let log = full_log(&ws, 0);
    // Room for part of the new fact's line only: the write fails half way.
    let command = ws.command(&["memory", "remember", "Use pnpm, not npm"]);
    let output = with_file_size_limit(&command, log.len() + 100).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", show(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("facts.jsonl"), "{}", show(&output));
    assert_eq!(std::fs::read(facts_path(&ws)).unwrap(), log, "nothing of the failed write is left");
    let said = ws.ok(&["memory", "remember", "Use pnpm, not npm"]);
    assert!(said.starts_with("Remembered as a new fact"), "{said}");
}
