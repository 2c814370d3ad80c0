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
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: PathBuf,
}

impl Proc {
    fn spawn(root: &Path, args: &[&str]) -> Proc {
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

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write request");
        stdin.flush().expect("flush");
    }

    /// The next line, parsed; `None` when none comes in time.
    fn reply(&self) -> Option<Value> {
        let line = self.lines.recv_timeout(REPLY_TIMEOUT).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Sends one line and returns the reply.
    fn call(&mut self, line: &[u8]) -> Value {
        self.send(line);
        self.send(b"\n");
        self.reply().unwrap_or_else(|| {
            panic!("no reply to {}", String::from_utf8_lossy(&line[..line.len().min(200)]))
        })
    }

    /// Closes stdin and waits (a bounded time) for the exit code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
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

fn initialize(server: &mut Proc) {
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
    assert!(reply["result"]["tools"].as_array().is_some_and(|t| t.len() == 13), "{reply}");
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
