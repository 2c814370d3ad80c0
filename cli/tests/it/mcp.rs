//! `ctxgraph mcp` at the protocol level, over the real binary's stdin and stdout: every line
//! gets an answer (the one `ctxgraph serve` gives for the same line), and a client that
//! leaves is no error. Every read from the child is bounded in time.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{ctxgraph, git_repo, stdout_lines};

const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// `ctxgraph ARGS` in `root/repo`, its stdout read line by line on a thread, its stderr
/// kept in a file.
pub(crate) struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: PathBuf,
}

impl Proc {
    pub(crate) fn spawn(root: &Path, args: &[&str]) -> Proc {
        let stderr = root.join(format!("stderr-{}", args[0]));
        let mut child = ctxgraph(root)
            .args(args)
            .env("CTXGRAPH_OFFLINE", "1")
            .current_dir(root.join("repo"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("spawn ctxgraph");
        let stdout = child.stdout.take().expect("stdout");
        let lines = stdout_lines(stdout);
        Proc { stdin: child.stdin.take(), child, lines, stderr }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write request");
        stdin.flush().expect("flush");
    }

    /// The next line, parsed; `None` when none comes in time.
    pub(crate) fn reply(&self) -> Option<Value> {
        let line = self.lines.recv_timeout(REPLY_TIMEOUT).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Sends one line and returns the reply.
    pub(crate) fn call(&mut self, line: &[u8]) -> Value {
        self.send(line);
        self.send(b"\n");
        self.reply().unwrap_or_else(|| {
            panic!("no reply to {}", String::from_utf8_lossy(&line[..line.len().min(200)]))
        })
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits (a bounded time) for the exit code and stderr.
    pub(crate) fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let start = Instant::now();
        let code = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status.code();
            }
            if start.elapsed() > REPLY_TIMEOUT {
                let _ = self.child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::fs::File::open(&self.stderr).expect("stderr").read_to_string(&mut stderr).expect("read stderr");
        (code, stderr)
    }
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    git_repo(&dir.path().join("repo"));
    std::fs::write(dir.path().join("repo/AGENTS.md"), "# Rules").expect("rules");
    std::fs::create_dir_all(dir.path().join("home")).expect("home");
    dir
}

/// The lines no JSON-RPC method ever sees: over the line limit (16 MiB is also over
/// `rmcp`'s own cap), not JSON, nested past any parser's depth, not UTF-8, not a request.
fn bad_lines() -> Vec<(&'static str, Vec<u8>)> {
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut huge = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 17 * 1024 * 1024));
    huge.extend_from_slice(b"\"}}}");
    vec![
        ("over the line limit", huge),
        ("malformed JSON", b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": ".to_vec()),
        ("not JSON", b"this is not json".to_vec()),
        ("100k-deep nesting", deep.into_bytes()),
        (
            "deep nesting inside a request",
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"a":{}1{}}}}}"#,
                "[".repeat(100_000),
                "]".repeat(100_000)
            )
            .into_bytes(),
        ),
        ("not UTF-8", b"\xff\xfe not utf-8".to_vec()),
        ("not an object", b"42".to_vec()),
        ("empty object", b"{}".to_vec()),
        ("wrong version", br#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#.to_vec()),
        ("object id", br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#.to_vec()),
        ("null params", br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":null}"#.to_vec()),
    ]
}

pub(crate) fn initialize(server: &mut Proc) {
    let reply = server.call(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})
        .to_string()
        .as_bytes(),
    );
    assert!(reply["result"]["serverInfo"]["name"] == "ctxgraph", "{reply}");
    server.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
}

#[test]
fn every_bad_line_gets_the_answer_serve_gives() {
    let dir = tree();
    let mut mcp = Proc::spawn(dir.path(), &["mcp"]);
    let mut serve = Proc::spawn(dir.path(), &["serve", "--stdio", "--no-watch"]);
    initialize(&mut mcp);
    for (label, line) in bad_lines() {
        let expected = serve.call(&line);
        let reply = mcp.call(&line);
        assert_eq!(reply, expected, "{label}");
        let code = reply["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32700 | -32600)), "{label}: {reply}");
    }
    // A method MCP serves, with params that do not fit it: invalid params, naming it.
    for params in [json!([]), json!({"arguments": {}}), json!({"name": 7})] {
        let request = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
        let reply = mcp.call(request.to_string().as_bytes());
        assert_eq!(reply["id"], 9, "{reply}");
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains("tools/call"), "{reply}");
    }
    // MCP has no batches.
    let reply = mcp.call(br#"[{"jsonrpc":"2.0","id":10,"method":"ping"}]"#);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    // An unknown method is still that, and after all of it the server still serves.
    let reply = mcp.call(br#"{"jsonrpc":"2.0","id":11,"method":"tools/compile","params":{}}"#);
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    let reply = mcp.call(br#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#);
    assert_eq!(reply["id"], 12, "{reply}");
    assert!(reply["result"]["tools"].as_array().is_some_and(|t| t.len() == 14), "{reply}");
    assert_eq!(mcp.finish().0, Some(0));
    assert_eq!(serve.finish().0, Some(0));
}

#[test]
fn a_client_leaving_early_is_a_clean_exit() {
    let dir = tree();
    let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let cases: [(&str, &[u8]); 3] = [
        ("nothing sent", b""),
        ("half a line", &initialize[..40]),
        ("initialize not acknowledged", initialize),
    ];
    for (label, input) in cases {
        let mut mcp = Proc::spawn(dir.path(), &["mcp"]);
        mcp.send(input);
        let (code, stderr) = mcp.finish();
        assert_eq!(code, Some(0), "{label}: {stderr}");
        assert!(stderr.lines().count() <= 1, "{label}: {stderr}");
    }
}

/// A `tools/call` line.
pub(crate) fn tool_call(id: u64, tool: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        .to_string()
        .into_bytes()
}

/// A tool result's text, and whether it is a tool error.
pub(crate) fn tool_text(reply: &Value) -> (String, bool) {
    let result = &reply["result"];
    let text =
        result["content"].as_array().expect("content").iter().filter_map(|c| c["text"].as_str()).collect();
    (text, result["isError"] == true)
}

/// Every tool `serve` has a method for answers what that method answers, as JSON text, and
/// fails with the message the method's error has: both servers call one operation.
#[test]
fn every_new_tool_answers_what_the_serve_method_answers() {
    let dir = tree();
    let repo = std::fs::canonicalize(dir.path().join("repo")).expect("repo");
    std::fs::create_dir_all(repo.join("src")).expect("src");
    std::fs::write(repo.join("src/main.rs"), "fn main() {}").expect("main.rs");
    std::fs::write(repo.join("src/AGENTS.md"), "# Source rules").expect("rules");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session/s11_all_fit/export.json");
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("fixture")).expect("json");
    let mut head = export.clone();
    let last = head["messages"].as_array_mut().expect("messages").pop().expect("a message");
    let head_path = dir.path().join("head.json");
    std::fs::write(&head_path, head.to_string()).expect("write export");
    let session = export["info"]["id"].clone();

    let mut mcp = Proc::spawn(dir.path(), &["mcp"]);
    let mut serve = Proc::spawn(dir.path(), &["serve", "--stdio", "--no-watch"]);
    initialize(&mut mcp);
    let limits = json!({"context": 30000, "output": 4000});
    let with = |base: Value, extra: &Value| {
        let mut merged = base;
        for (key, value) in extra.as_object().expect("object") {
            merged[key] = value.clone();
        }
        merged
    };
    let cwd = json!({ "cwd": repo });
    // (tool, its arguments, the method, its params beyond the tool's arguments)
    let cases = [
        ("context_nearby", json!({"file": "src/main.rs", "format": "json"}), "nearby", cwd.clone()),
        ("context_explain", json!({"target": "AGENTS.md", "format": "json"}), "explain", cwd.clone()),
        ("context_lint", json!({"format": "json"}), "lint", cwd.clone()),
        ("context_config", json!({}), "config", cwd.clone()),
        ("session_open", json!({"path": head_path}), "session/open", json!({})),
        ("session_append", json!({"session": session, "message": last}), "session/append", json!({})),
        ("session_compact", with(json!({"session": session}), &limits), "session/compact", cwd.clone()),
        ("session_messages", json!({"session": session}), "session/messages", json!({})),
        ("session_explain", with(json!({"session": session}), &limits), "session/explain", cwd.clone()),
        (
            "context_nearby",
            json!({"file": "src/main.rs", "session": session, "format": "json"}),
            "nearby",
            cwd.clone(),
        ),
    ];
    for (n, (tool, arguments, method, scope)) in cases.into_iter().enumerate() {
        let id = 100 + n as u64;
        let (text, failed) = tool_text(&mcp.call(&tool_call(id, tool, arguments.clone())));
        assert!(!failed, "{tool} {arguments}: {text}");
        let params = with(arguments.clone(), &scope);
        let params = match params.as_object() {
            // `format` is how the tool prints; the method always answers JSON.
            Some(members) => {
                Value::Object(members.clone().into_iter().filter(|(k, _)| k != "format").collect())
            }
            None => params,
        };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let expected = serve.call(request.to_string().as_bytes());
        let answer: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tool}: not JSON ({e}): {text}"));
        assert_eq!(answer, expected["result"], "{tool} against {method}");
    }

    // One refusal per tool: a tool error with the message the method's error has.
    let refusals = [
        ("context_nearby", json!({"file": "src/missing.rs"}), "nearby", cwd.clone()),
        ("context_lint", json!({"max_rule_tokens": -1}), "lint", cwd.clone()),
        ("context_config", json!({"show_secrets": true}), "config", cwd.clone()),
        ("session_open", json!({}), "session/open", json!({})),
        ("session_append", json!({"session": "nope", "message": {}}), "session/append", json!({})),
        ("session_compact", json!({"session": session}), "session/compact", cwd.clone()),
        ("session_messages", json!({"session": "nope"}), "session/messages", json!({})),
        (
            "session_explain",
            with(json!({"session": session, "message": "msg_nope"}), &limits),
            "session/explain",
            cwd.clone(),
        ),
    ];
    for (n, (tool, arguments, method, scope)) in refusals.into_iter().enumerate() {
        let id = 200 + n as u64;
        let (text, failed) = tool_text(&mcp.call(&tool_call(id, tool, arguments.clone())));
        assert!(failed, "{tool} {arguments}: {text}");
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": with(arguments.clone(), &scope)});
        let expected = serve.call(request.to_string().as_bytes());
        let message = expected["error"]["message"].as_str().unwrap_or_else(|| panic!("{method}: {expected}"));
        // The tool says "invalid arguments" where the method says "invalid params".
        assert_eq!(text.replace("invalid arguments", "invalid params"), message, "{tool} against {method}");
    }
    assert_eq!(mcp.finish().0, Some(0));
    assert_eq!(serve.finish().0, Some(0));
}

/// The protocol's table (docs/protocol.md is rendered from it) names what the servers serve:
/// every method is one `serve` knows, every tool one `mcp` lists, and `mcp` lists no other.
#[test]
fn the_protocol_table_names_every_method_and_tool_served() {
    let dir = tree();
    let mut mcp = Proc::spawn(dir.path(), &["mcp"]);
    let mut serve = Proc::spawn(dir.path(), &["serve", "--stdio", "--no-watch"]);
    initialize(&mut mcp);
    let methods = ctxgraph_server::protocol::METHODS;
    for (n, method) in methods.iter().filter(|m| m.name != "shutdown").enumerate() {
        // `[]` fits no method's params: a known method refuses them as -32602 (or, taking
        // none, answers); only an unknown one is -32601.
        let request = json!({"jsonrpc": "2.0", "id": n, "method": method.name, "params": []});
        let reply = serve.call(request.to_string().as_bytes());
        let answered = reply["error"]["code"] == -32602 || reply.get("result").is_some();
        assert!(answered, "{}: {reply}", method.name);
    }
    let reply = mcp.call(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let mut listed: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    listed.sort_unstable();
    let mut tools: Vec<&str> = methods.iter().filter_map(|m| m.tool).collect();
    tools.sort_unstable();
    assert_eq!(listed, tools);
    assert_eq!(mcp.finish().0, Some(0));
    assert_eq!(serve.finish().0, Some(0));
}

/// A secret planted in MCP arguments (a fact to remember, its category, a recall query, a
/// forget target, the session id of the exchange) never comes back in any reply, and is not
/// written to the store as given: the one secrets table redacts every path out.
#[test]
fn a_secret_in_an_mcp_argument_never_reaches_a_reply_or_the_store() {
    let dir = tree();
    // Built at run time: no key-shaped literal sits in the source.
    let secret = format!("AKIA{}", "Q7".repeat(8));
    // The session id is the secret itself (an identifier glued to it, `ses_AKIA…`, is one word
    // to the patterns, which match whole words only).
    let mut mcp = Proc::spawn(dir.path(), &["mcp", "--session", &secret]);
    initialize(&mut mcp);
    let calls = [
        (
            "memory_remember",
            json!({"text": format!("deploy with key {secret} from the vault"), "category": format!("tooling {secret}")}),
        ),
        ("memory_recall", json!({"query": format!("which key {secret}")})),
        ("memory_recall", json!({"query": "deploy vault"})),
        ("memory_forget", json!({"target": secret.clone()})),
        ("context_explain", json!({})),
    ];
    for (id, (tool, arguments)) in calls.into_iter().enumerate() {
        let reply = mcp.call(&tool_call(u64::try_from(id).expect("id") + 10, tool, arguments));
        let line = reply.to_string();
        assert!(!line.contains(&secret), "{tool} echoed the secret: {line}");
        assert!(reply.get("result").is_some(), "{tool}: {line}");
    }
    let store = dir.path().join("repo/.opencode/memory");
    let mut files = 0;
    for entry in std::fs::read_dir(&store).expect("the remember call created the store") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read store file");
        assert!(!String::from_utf8_lossy(&bytes).contains(&secret), "{} holds the secret", path.display());
        files += 1;
    }
    assert!(files > 0, "the remember call wrote nothing to {}", store.display());
}

/// Rule files for all ten agents in one repository, and a source file under nested ones.
const EVERY_AGENT: &[(&str, &str)] = &[
    ("repo/AGENTS.md", "Root agents.\n"),
    ("repo/CLAUDE.md", "Root claude.\n"),
    ("repo/.claude/rules/ts.md", "---\npaths: src/**/*.ts\n---\nTS rule.\n"),
    ("repo/GEMINI.md", "Gemini root.\n"),
    ("repo/QWEN.md", "Qwen root.\n"),
    ("repo/.github/copilot-instructions.md", "Copilot root.\n"),
    ("repo/.clinerules/style.md", "Cline style.\n"),
    ("repo/.continue/rules/style.md", "Continue style.\n"),
    ("repo/.kilocode/rules/style.md", "Kilo style.\n"),
    ("repo/CONVENTIONS.md", "Conventions.\n"),
    ("repo/.aider.conf.yml", "read: CONVENTIONS.md\n"),
    ("repo/.augment/rules/style.md", "Augment style.\n"),
    ("repo/src/AGENTS.md", "Src agents.\n"),
    ("repo/src/CLAUDE.md", "Src claude.\n"),
    ("repo/src/GEMINI.md", "Src gemini.\n"),
    ("repo/src/QWEN.md", "Src qwen.\n"),
    ("repo/src/a.ts", "export const a = 1;\n"),
];

/// Every agent through every surface: `serve`'s `nearby`, `explain`, `lint` and `config`
/// with `agent` answer exactly the CLI's `--format json` (four per agent), `nearby` has one
/// shape for all (an agent that attaches nothing answers with no blocks and a note, exit 0),
/// MCP's `context_build` and `context_nearby` give the CLI's text and `context_config` its
/// JSON.
#[test]
fn every_agent_answers_alike_on_every_surface() {
    use ctxgraph_db::agent::Agent;

    let (_dir, root) = crate::agents::tree(EVERY_AGENT);
    let repo = root.join("repo");
    let mut serve = Proc::spawn(&root, &["serve", "--stdio", "--no-watch"]);
    let cli_json = |args: &[&str]| -> Value {
        let run = crate::agents::run(&root, "repo", args);
        serde_json::from_slice(&run.raw_stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}), exit {:?}: {}", run.code, run.stderr))
    };
    let mut id = 0;
    let mut call = |serve: &mut Proc, method: &str, params: Value| -> Value {
        id += 1;
        let reply = serve.call(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string().as_bytes(),
        );
        reply.get("result").cloned().unwrap_or_else(|| panic!("{method} {params}: {reply}"))
    };
    let mut equal = 0;
    let mut shapes = std::collections::BTreeSet::new();
    for agent in Agent::ALL.map(Agent::name) {
        let nearby = cli_json(&["nearby", "--agent", agent, "src/a.ts", "--format", "json"]);
        let served = call(&mut serve, "nearby", json!({"cwd": repo, "file": "src/a.ts", "agent": agent}));
        assert_eq!(served, nearby, "nearby --agent {agent}");
        let keys = nearby.as_object().expect("object").keys();
        shapes
            .insert(keys.filter(|k| !matches!(k.as_str(), "note" | "opencode")).cloned().collect::<Vec<_>>());
        let reads_attach =
            ctxgraph_engine::profiles::profile(agent.parse().expect("an agent's name")).attaches_on_read();
        if reads_attach {
            assert!(nearby.get("note").is_none(), "{nearby}");
        } else {
            assert_eq!(nearby["blocks"], json!([]), "{agent}");
            assert!(nearby["note"].as_str().is_some_and(|n| n.contains("attaches nothing")), "{nearby}");
        }
        if ["opencode", "claude-code", "gemini", "copilot", "kilo"].contains(&agent) {
            assert_ne!(nearby["blocks"], json!([]), "{agent} attaches the nested rules: {nearby}");
        }

        let explain = cli_json(&["explain", "--agent", agent, "--format", "json"]);
        let served = call(&mut serve, "explain", json!({"cwd": repo, "agent": agent}));
        assert_eq!(served, explain, "explain --agent {agent}");

        let lint = cli_json(&["lint", "--agent", agent, "--format", "json"]);
        let served = call(&mut serve, "lint", json!({"cwd": repo, "agent": agent}));
        assert_eq!(served, lint, "lint --agent {agent}");

        let config = cli_json(&["config", "--agent", agent, "--format", "json"]);
        let served = call(&mut serve, "config", json!({"cwd": repo, "agent": agent}));
        assert_eq!(served, config, "config --agent {agent}");
        assert_eq!(config["agent"], agent, "{config}");
        equal += 4;
    }
    assert_eq!(equal, 4 * Agent::ALL.len());
    assert_eq!(shapes.len(), 1, "one nearby shape: {shapes:?}");
    let file = repo.join("src/CLAUDE.md");
    let all = cli_json(&["explain", "--agent", "all", file.to_str().expect("path"), "--format", "json"]);
    let served = call(&mut serve, "explain", json!({"cwd": repo, "agent": "all", "target": "src/CLAUDE.md"}));
    assert_eq!(served, all, "explain --agent all FILE");
    assert_eq!(serve.finish().0, Some(0));

    let mut mcp = Proc::spawn(&root, &["mcp", "--cwd", repo.to_str().expect("path")]);
    initialize(&mut mcp);
    for (n, agent) in ["kilo", "claude-code", "auggie"].into_iter().enumerate() {
        let built = crate::agents::run(&root, "repo", &["build", "--agent", agent]);
        let (text, failed) =
            tool_text(&mcp.call(&tool_call(10 + n as u64, "context_build", json!({"agent": agent}))));
        assert!(!failed && !built.raw_stdout.is_empty(), "{agent}: {text}");
        assert_eq!(text.as_bytes(), built.raw_stdout, "context_build for {agent}");
        if agent == "auggie" {
            // Auggie attaches nothing on reads: its build is the part worth comparing.
            continue;
        }
        let read = crate::agents::run(&root, "repo", &["nearby", "--agent", agent, "src/a.ts"]);
        let arguments = json!({"agent": agent, "file": "src/a.ts"});
        let (text, failed) = tool_text(&mcp.call(&tool_call(20 + n as u64, "context_nearby", arguments)));
        assert!(!failed && !read.raw_stdout.is_empty(), "{agent}: {text}");
        assert_eq!(text.as_bytes(), read.raw_stdout, "context_nearby for {agent}");
    }
    for (n, agent) in ["claude-code", "gemini"].into_iter().enumerate() {
        let config = cli_json(&["config", "--agent", agent, "--format", "json"]);
        let (text, failed) =
            tool_text(&mcp.call(&tool_call(40 + n as u64, "context_config", json!({"agent": agent}))));
        assert!(!failed, "{agent}: {text}");
        let served: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{agent}: {e}: {text}"));
        assert_eq!(served, config, "context_config for {agent}");
    }
    // A section and a setting, as `build --section` and `-c` take them.
    let args = ["build", "--agent", "codex", "--section", "request", "-c", "project_doc_max_bytes=12"];
    let built = crate::agents::run(&root, "repo", &args);
    let arguments = json!({"agent": "codex", "section": "request", "settings": ["project_doc_max_bytes=12"]});
    let (text, failed) = tool_text(&mcp.call(&tool_call(30, "context_build", arguments)));
    assert!(!failed && built.code == 0, "{text} {}", built.stderr);
    assert_eq!(text.as_bytes(), built.raw_stdout, "context_build with a section and a setting");
    assert_eq!(mcp.finish().0, Some(0));
}
