//! `serve --stdio` and `mcp` under 400 random lines each from a seeded generator (proptest's
//! `ChaCha`; the same lines on every run, a failure names the line): requests of every method
//! and tool with parameters of random shape (unknown agents, paths that leave the workspace,
//! wrong types), notifications, truncated and nested JSON, bytes that are not UTF-8. After
//! each line a probe request must be answered: no line stops, hangs or kills a server. At
//! the end each server's peak memory (`VmHWM`) stays under 200 MB and closing stdin exits 0.
//! Bounded in count; every wait is bounded.

use serde_json::{Value, json};

use crate::lsp_fuzz::Random;
use crate::mcp::{Proc, initialize};

const LINES: usize = 400;
const SEED: u64 = 0x5E_4E_11_E5;
/// Replies to random lines that may come before a probe's (a notification gets none).
const MAX_REPLIES_PER_PROBE: usize = 8;
const MAX_HWM_KB: u64 = 200 * 1024;

/// A value of any JSON type, some of them what a parameter expects.
fn value(random: &mut Random, depth: usize) -> Value {
    match random.below(if depth > 2 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(random.below(3) == 0),
        2 => json!(i64::try_from(random.below(1 << 20)).unwrap_or(0) - 1000),
        3 => json!(random.pick(&[
            "opencode",
            "codex",
            "claude-code",
            "gemini",
            "copilot",
            "qwen-code",
            "kilo",
            "cline",
            "continue",
            "aider",
            "all",
            "nobody",
            "",
        ])),
        4 => json!(random.pick(&[
            "AGENTS.md",
            "src/a.ts",
            "../../../../etc/hostname",
            "/dev/zero",
            "no/such/file.md",
            ".",
            "\u{1b}[31mred\u{7}",
            "https://127.0.0.1:9/x.md?token=abc",
        ])),
        5 => json!("x".repeat(random.below(20_000))),
        6 => Value::Array((0..random.below(4)).map(|_| value(random, depth + 1)).collect()),
        _ => params(random, depth + 1),
    }
}

/// An object with some of the keys the methods and tools take.
fn params(random: &mut Random, depth: usize) -> Value {
    let keys = [
        "cwd",
        "file",
        "agent",
        "target",
        "section",
        "model",
        "known_hash",
        "session",
        "message",
        "format",
        "max_total_tokens",
        "max_rule_tokens",
        "query",
        "text",
        "texts",
        "limit",
        "budget",
        "extra",
    ];
    let mut object = serde_json::Map::new();
    for _ in 0..random.below(5) {
        let key = (*random.pick(&keys)).to_owned();
        object.insert(key, value(random, depth));
    }
    Value::Object(object)
}

/// One line for a server whose methods are `methods`.
fn line(random: &mut Random, methods: &[&str], n: usize, cwd: &str) -> Vec<u8> {
    match random.below(10) {
        0 => {
            // Not UTF-8, not JSON, no newline inside.
            let len = random.below(200);
            (0..len).map(|_| u8::try_from(random.below(256)).unwrap_or(0)).filter(|b| *b != b'\n').collect()
        }
        1 => {
            let text = json!({"jsonrpc": "2.0", "id": n, "method": random.pick(methods), "params": params(random, 0)})
                .to_string();
            let cut = random.below(text.len().max(1));
            text.as_bytes()[..cut].to_vec()
        }
        2 => {
            let depth = 1 + random.below(2_000);
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
        }
        3 => json!({"jsonrpc": "2.0", "method": random.pick(methods), "params": params(random, 0)})
            .to_string()
            .into_bytes(),
        _ => {
            let mut params = params(random, 0);
            if random.below(2) == 0 {
                params["cwd"] = json!(cwd);
            }
            let method = *random.pick(methods);
            let request = if method == "tools/call" {
                let tool = random.pick(&[
                    "context_build",
                    "context_nearby",
                    "context_explain",
                    "context_lint",
                    "context_config",
                    "memory_recall",
                    "memory_remember",
                    "memory_forget",
                    "session_open",
                    "session_explain",
                    "no_such_tool",
                ]);
                json!({"jsonrpc": "2.0", "id": n, "method": method, "params": {"name": tool, "arguments": params}})
            } else {
                json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
            };
            request.to_string().into_bytes()
        }
    }
}

/// Sends `line`, then `probe`, and waits (bounded) for the probe's reply among the replies.
fn survives(server: &mut Proc, line: &[u8], probe: &Value) {
    server.send(line);
    server.send(b"\n");
    server.send(probe.to_string().as_bytes());
    server.send(b"\n");
    for _ in 0..=MAX_REPLIES_PER_PROBE {
        let reply = server.reply().unwrap_or_else(|| {
            panic!("no reply to the probe after {}", String::from_utf8_lossy(&line[..line.len().min(300)]))
        });
        if reply["id"] == probe["id"] {
            assert!(reply.get("result").is_some(), "the probe failed: {reply}");
            return;
        }
    }
    panic!("the probe's reply never came after {}", String::from_utf8_lossy(&line[..line.len().min(300)]));
}

fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

fn world() -> (tempfile::TempDir, std::path::PathBuf) {
    crate::agents::tree(&[
        ("repo/AGENTS.md", "Root rules.\n"),
        ("repo/CLAUDE.md", "Claude rules.\n"),
        ("repo/src/AGENTS.md", "Src rules.\n"),
        ("repo/src/a.ts", "export const a = 1;\n"),
        ("home/.keep", ""),
    ])
}

#[test]
fn serve_answers_after_every_random_line() {
    let (_dir, root) = world();
    let cwd = root.join("repo").display().to_string();
    let methods = [
        "build",
        "nearby",
        "explain",
        "lint",
        "config",
        "stats",
        "installation",
        "session/open",
        "session/messages",
        "session/explain",
        "memory/recall",
        "memory/remember",
        "memory/forget",
        "nope",
    ];
    let mut serve = Proc::spawn(&root, &["serve", "--stdio", "--no-watch"]);
    let mut random = Random::seeded(SEED);
    for n in 0..LINES {
        let line = line(&mut random, &methods, n, &cwd);
        survives(
            &mut serve,
            &line,
            &json!({"jsonrpc": "2.0", "id": format!("probe-{n}"), "method": "stats"}),
        );
    }
    let peak = peak_kb(serve.pid());
    assert!(peak < MAX_HWM_KB, "serve's peak memory: {peak} kB");
    let (code, stderr) = serve.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn mcp_answers_after_every_random_line() {
    let (_dir, root) = world();
    let cwd = root.join("repo").display().to_string();
    let methods = ["tools/call", "tools/call", "tools/list", "ping", "resources/list", "initialize", "nope"];
    let mut mcp = Proc::spawn(&root, &["mcp", "--cwd", &cwd]);
    initialize(&mut mcp);
    let mut random = Random::seeded(SEED ^ 1);
    for n in 0..LINES {
        let line = line(&mut random, &methods, n, &cwd);
        survives(&mut mcp, &line, &json!({"jsonrpc": "2.0", "id": format!("probe-{n}"), "method": "ping"}));
    }
    let peak = peak_kb(mcp.pid());
    assert!(peak < MAX_HWM_KB, "mcp's peak memory: {peak} kB");
    let (code, stderr) = mcp.finish();
    assert_eq!(code, Some(0), "{stderr}");
}
