//! End-to-end runs of `ctxgraph serve --stdio` and `ctxgraph watch` as child processes, on
//! temporary trees with a clean environment. Every read from the child is bounded in time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use ctxgraph_db::installation::known_assets;

use crate::support::{ctxgraph, git_repo, stdout_lines};

/// How long a test waits for a line before it calls the server hung. Only a bound on a hang,
/// never a claim about speed: a debug build's first turn reads opencode's 180 MB executable,
/// and a loaded 2-core machine took longer than the 20 s this once was.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    /// `repo/` is a git worktree with a root `AGENTS.md`; `repo/pkg` is the working directory.
    fn new() -> Self {
        let tree = Tree { dir: tempfile::tempdir().expect("temp dir") };
        git_repo(&tree.path("repo"));
        tree.write("repo/AGENTS.md", "root rules");
        tree.write("repo/pkg/src/main.rs", "fn main() {}");
        tree.write("repo/pkg/AGENTS.md", "pkg rules");
        std::fs::create_dir_all(tree.path("home")).expect("home");
        std::fs::create_dir_all(tree.path("config/opencode")).expect("config");
        tree
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn cwd(&self) -> String {
        self.path("repo/pkg").display().to_string()
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parent dir");
        std::fs::write(path, content).expect("write");
    }

    fn spawn(&self, args: &[&str]) -> Proc {
        self.spawn_with(args, &[])
    }

    /// `ctxgraph ARGS` run to its end in the repository, with the same clean environment as
    /// [`Tree::spawn`]: its standard output.
    fn run_cli(&self, args: &[&str]) -> Vec<u8> {
        let root = self.root();
        let out = ctxgraph(&root).args(args).current_dir(root.join("repo")).output().expect("ctxgraph runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// `spawn` with variables added to the clean environment.
    fn spawn_with(&self, args: &[&str], vars: &[(&str, &std::ffi::OsStr)]) -> Proc {
        let root = self.root();
        let mut child = ctxgraph(&root)
            .envs(vars.iter().copied())
            .args(args)
            .current_dir(root.join("repo"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ctxgraph");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let lines = stdout_lines(stdout);
        Proc { child, stdin: Some(stdin), lines, root }
    }
}

struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    root: PathBuf,
}

impl Proc {
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write request");
        stdin.flush().expect("flush");
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(REPLY_TIMEOUT).expect("a line from ctxgraph in time")
    }

    /// Sends one line and returns the reply, parsed.
    fn call_raw(&mut self, line: &str) -> Value {
        self.send_raw(format!("{line}\n").as_bytes());
        serde_json::from_str(&self.line()).expect("a JSON reply")
    }

    /// A request; `params` is left out when null.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            request["params"] = params;
        }
        self.call_raw(&request.to_string())
    }

    fn build(&mut self, id: u64, cwd: &str) -> Value {
        let reply = self.call(id, "build", json!({ "cwd": cwd }));
        reply.get("result").cloned().unwrap_or_else(|| panic!("build failed: {reply}"))
    }

    /// The exit code after closing stdin, waiting a bounded time.
    fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let start = Instant::now();
        while start.elapsed() < REPLY_TIMEOUT {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        None
    }

    /// A reply with the temp dir as `[TMP]` and hashes and the date scrubbed.
    fn scrub(&self, reply: &Value) -> String {
        let text = serde_json::to_string_pretty(reply).expect("json");
        let text = text.replace(&self.root.display().to_string(), "[TMP]");
        // Execution counts belong to the query layer; other tests pin them.
        let text = scrub_counts(&regex_lite_hash(&text));
        text.lines()
            .map(|line| match line.find("Today's date: ") {
                Some(at) => format!("{}Today's date: [DATE]\\n</env>{}", &line[..at], after_env(line)),
                None => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Replaces every 64-digit hex string (a blake3 hash) by `[HASH]`.
fn regex_lite_hash(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if run == 64 {
            out.push_str("[HASH]");
            i += run;
        } else {
            let step = run.max(1);
            out.push_str(&text[i..i + step]);
            i += step;
        }
    }
    out
}

/// `"executed": 37` → `"executed": "[N]"`.
fn scrub_counts(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once("\"executed\": ") {
            Some((head, _)) => format!("{head}\"executed\": \"[N]\""),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn after_env(line: &str) -> &str {
    line.find("\\n</env>").map_or("", |at| &line[at + "\\n</env>".len()..])
}

#[test]
fn a_session_of_good_and_bad_requests() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let cwd = tree.cwd();
    let mut transcript = Vec::new();
    let mut record = |label: &str, reply: Value, server: &Proc| {
        transcript.push(format!("# {label}\n{}", server.scrub(&reply)));
    };

    let first = server.call(1, "build", json!({ "cwd": cwd }));
    record("first build: every block is new", first, &server);
    let again = server.call(2, "build", json!({ "cwd": cwd }));
    record("second build: nothing changed, the whole text is a stable prefix", again, &server);
    let section = server.call(3, "build", json!({ "cwd": cwd, "section": "instructions" }));
    record("instructions section: compared with the previous build of that section", section, &server);
    let reply = server.call_raw("this is not json");
    record("garbage", reply, &server);
    let reply = server.call_raw("{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"build\", ");
    record("truncated", reply, &server);
    let reply = server.call_raw("{}");
    record("empty object", reply, &server);
    let reply = server.call_raw("[1]");
    record("batch with a non-object", reply, &server);
    let reply = server.call_raw(r#"{"jsonrpc":"1.0","id":4,"method":"stats"}"#);
    record("wrong version", reply, &server);
    let reply = server.call_raw(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"stats"}"#);
    record("object id", reply, &server);
    let reply = server.call_raw(r#"{"jsonrpc":"2.0","id":null,"method":"compile"}"#);
    record("null id: a request, answered with a null id", reply, &server);
    let reply = server.call(5, "compile", json!({}));
    record("unknown method", reply, &server);
    let reply = server.call(6, "build", json!({}));
    record("missing cwd", reply, &server);
    let reply = server.call(7, "build", json!({ "cwd": cwd, "section": "everything" }));
    record("bad section", reply, &server);
    let reply = server.call(8, "build", json!({ "cwd": cwd, "model": "no-slash" }));
    record("bad model", reply, &server);
    let reply = server.call(9, "build", json!({ "cwd": cwd, "colour": "blue" }));
    record("unknown param", reply, &server);
    let reply = server.call(10, "build", json!({ "cwd": tree.path("nowhere") }));
    record("missing working directory", reply, &server);
    let reply = server.call(11, "nearby", json!({ "cwd": tree.path("repo"), "file": "pkg/src/main.rs" }));
    record("nearby", reply, &server);
    // A notification gets no reply: the next line answered is the shutdown.
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"stats\"}\n");
    server.send_raw(b"\xff\xfe not utf-8\n");
    let reply: Value = serde_json::from_str(&server.line()).expect("json");
    record("invalid UTF-8 after a notification", reply, &server);
    let reply = server.call_raw(r#"{"jsonrpc":"2.0","id":12,"method":"shutdown","params":null}"#);
    record("null params", reply, &server);
    let reply = server.call(13, "shutdown", json!(null));
    record("shutdown", reply, &server);

    insta::assert_snapshot!(transcript.join("\n\n"));
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn a_second_build_reports_nothing_changed_and_executes_nothing() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.build(1, &cwd);
    let second = server.build(2, &cwd);
    assert_eq!(second["changed"], json!([]));
    assert_eq!(second["stable_prefix_bytes"], first["bytes"]);
    assert_eq!(second["executed"], json!(0));
    let stats = server.call(3, "stats", json!({}))["result"].clone();
    assert_eq!(stats["total_executions"], first["executed"]);
    assert!(stats["watched_dirs"].as_u64().is_some_and(|n| n > 0), "{stats}");
}

#[test]
fn a_client_that_knows_the_text_gets_a_small_reply_or_only_the_changed_blocks() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let cwd = tree.cwd();
    let first = server.build(1, &cwd);
    let known = first["hash"].clone();
    assert_eq!(first["unchanged"], json!(false));

    // Nothing changed: the hash, no text, no blocks.
    let request = json!({ "jsonrpc": "2.0", "id": 2, "method": "build", "params": { "cwd": cwd, "known_hash": known } });
    server.send_raw(format!("{request}\n").as_bytes());
    let line = server.line();
    assert!(line.len() < 300, "{} bytes: {line}", line.len());
    let same: Value = serde_json::from_str(&line).expect("json");
    let same = &same["result"];
    assert_eq!(same["unchanged"], json!(true));
    assert_eq!(same["hash"], known);
    assert!(same.get("text").is_none() && same.get("blocks").is_none(), "{same}");

    // One rule edited: the new text and that block alone.
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let edited = server.call(3, "build", json!({ "cwd": cwd, "known_hash": known }))["result"].clone();
    let id = format!("file:{}", tree.path("repo/pkg/AGENTS.md").display());
    assert_eq!(edited["unchanged"], json!(false));
    assert!(edited["text"].as_str().is_some_and(|text| text.contains("pkg rules, edited")));
    let blocks: Vec<&Value> = edited["blocks"].as_array().expect("blocks").iter().collect();
    assert_eq!(blocks.iter().map(|b| &b["id"]).collect::<Vec<_>>(), [&json!(id)]);
    assert_eq!(edited["changed"], json!([id]));

    // A hash the server never sent: everything.
    let stranger =
        server.call(4, "build", json!({ "cwd": cwd, "known_hash": "0".repeat(64) }))["result"].clone();
    assert_eq!(stranger["blocks"].as_array().map(Vec::len), first["blocks"].as_array().map(Vec::len));
    assert!(stranger["text"].is_string());
}

#[test]
fn an_edit_between_turns_is_reported_without_a_watcher() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let cwd = tree.cwd();
    let first = server.build(1, &cwd);
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let second = server.build(2, &cwd);
    let id = format!("file:{}", tree.path("repo/pkg/AGENTS.md").display());
    assert_eq!(second["changed"], json!([id]));
    // Everything before the edited block is still cacheable.
    let edited = second["blocks"].as_array().expect("blocks").iter().find(|b| b["id"] == id).expect("block");
    let prefix = second["stable_prefix_bytes"].as_u64().expect("prefix");
    assert!(prefix >= edited["start"].as_u64().expect("start"), "{second}");
    assert!(prefix < first["bytes"].as_u64().expect("bytes"));
}

#[test]
fn an_edit_between_turns_is_reported_by_the_watcher() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    server.build(1, &cwd);
    // No waiting: a build sent after a write has completed reflects it (#13.1).
    for request in 2..52 {
        let text = format!("root rules, edit {request} done");
        tree.write("repo/AGENTS.md", &text);
        let reply = server.build(request, &cwd);
        let id = format!("file:{}", tree.path("repo/AGENTS.md").display());
        assert_eq!(reply["changed"], json!([id]), "request {request}");
        assert!(reply["text"].as_str().is_some_and(|t| t.contains(&text)), "request {request}: {reply}");
    }
}

#[test]
fn serve_ends_quietly_at_end_of_input() {
    let tree = Tree::new();
    let server = tree.spawn(&["serve", "--stdio"]);
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn watch_prints_a_line_per_rebuild() {
    let tree = Tree::new();
    let cwd = tree.cwd();
    let watch = tree.spawn(&["watch", "--cwd", &cwd]);
    let first = watch.line();
    assert!(first.contains(" bytes  blocks +3 -0 ~0  "), "{first}");
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let second = watch.line();
    assert!(second.contains(" blocks +0 -0 ~1  "), "{second}");
    // The file's content query, its text, its rendered block and the laid-out prompt; and
    // for the files the profile's answer lists as left out, the prompt the explanation
    // reads and its instruction blocks. Nothing else re-runs.
    assert!(second.ends_with("  6 queries"), "{second}");
    assert_ne!(first[..16], second[..16]);
}

#[test]
fn watch_prints_a_json_object_per_rebuild() {
    let tree = Tree::new();
    let cwd = tree.cwd();
    let watch = tree.spawn(&["watch", "--cwd", &cwd, "--format", "json"]);
    let first: serde_json::Value = serde_json::from_str(&watch.line()).expect("a JSON line");
    assert_eq!(first["added"].as_array().map(Vec::len), Some(3), "{first}");
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let second: serde_json::Value = serde_json::from_str(&watch.line()).expect("a JSON line");
    let pkg = tree.path("repo/pkg/AGENTS.md");
    assert_eq!(second["modified"], serde_json::json!([format!("file:{}", pkg.display())]), "{second}");
    assert_eq!(second["executed"], 6, "{second}");
    assert_ne!(first["hash"], second["hash"]);
}

/// A broken `opencode.json` is opencode's answer to give (its build says where), not a reason
/// to refuse another agent's questions: serve's refresh of what opencode's config names
/// does not stand in their way.
#[test]
fn a_broken_opencode_json_stops_only_opencode() {
    let tree = Tree::new();
    tree.write("repo/opencode.json", "{ not json");
    let cwd = tree.cwd();
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let asks = [
        ("build", json!({ "cwd": cwd, "agent": "codex" })),
        ("build", json!({ "cwd": cwd, "agent": "claude-code", "section": "request" })),
        ("nearby", json!({ "cwd": cwd, "agent": "gemini", "file": "src/main.rs" })),
        ("explain", json!({ "cwd": cwd, "agent": "codex" })),
        ("lint", json!({ "cwd": cwd, "agent": "codex" })),
    ];
    for (id, (method, params)) in (1..).zip(asks) {
        let reply = server.call(id, method, params.clone());
        assert!(reply.get("result").is_some(), "{method} {params}: {reply}");
    }
    let opencode = server.call(9, "build", json!({ "cwd": cwd }));
    let message = opencode["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("opencode.json") && message.contains("JSONC"), "{opencode}");
    assert_eq!(server.finish(), Some(0));
}

/// An MCP server is a process the user's config starts: serve starts opencode's only for an
/// answer of opencode's that waits on them (its explanation's B4 facts), never for another
/// agent's question, and each server once.
#[test]
fn opencode_mcp_servers_start_only_for_opencode() {
    let tree = Tree::new();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/mcp_server.py");
    let started = tree.path("started");
    // The command notes each start before it becomes the server.
    let command =
        format!("echo x >> '{}'; exec python3 '{}' --tools helper_find", started.display(), server.display());
    let config = json!({ "mcp": { "helper": { "type": "local", "command": ["sh", "-c", command] } } });
    tree.write("repo/opencode.json", &config.to_string());
    let cwd = tree.cwd();
    let mut serve = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let asks = [
        ("build", json!({ "cwd": cwd, "agent": "codex" })),
        ("explain", json!({ "cwd": cwd, "agent": "codex" })),
        ("lint", json!({ "cwd": cwd, "agent": "gemini" })),
        ("nearby", json!({ "cwd": cwd, "file": "src/main.rs" })),
        ("build", json!({ "cwd": cwd })),
    ];
    for (id, (method, params)) in (1..).zip(asks) {
        let reply = serve.call(id, method, params.clone());
        assert!(reply.get("result").is_some(), "{method} {params}: {reply}");
    }
    assert!(!started.exists(), "no answer above waits on opencode's MCP servers");
    let explained = serve.call(10, "explain", json!({ "cwd": cwd }));
    let text = explained.to_string();
    assert!(text.contains("helper_find"), "{explained}");
    let again = serve.call(11, "lint", json!({ "cwd": cwd }));
    assert!(again.get("result").is_some(), "{again}");
    assert_eq!(std::fs::read_to_string(&started).expect("started once"), "x\n");
    assert_eq!(serve.finish(), Some(0));
}

/// `watch --agent codex`: another agent's text, rebuilt on an edit with the blocks named as
/// every agent's are, and a broken `opencode.json` (not Codex's concern) never read.
#[test]
fn watch_follows_any_agent() {
    let tree = Tree::new();
    tree.write("repo/opencode.json", "{ not json");
    let cwd = tree.cwd();
    let watch = tree.spawn(&["watch", "--cwd", &cwd, "--agent", "codex", "--format", "json"]);
    let first: serde_json::Value = serde_json::from_str(&watch.line()).expect("a JSON line");
    let root = format!("file:{}", tree.path("repo/AGENTS.md").display());
    let pkg = format!("file:{}", tree.path("repo/pkg/AGENTS.md").display());
    assert_eq!(first["added"], serde_json::json!([root, pkg]), "{first}");
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let second: serde_json::Value = serde_json::from_str(&watch.line()).expect("a JSON line");
    assert_eq!(second["modified"], serde_json::json!([pkg]), "{second}");
    assert!(second["stable_prefix_bytes"].as_u64().is_some_and(|n| n > 0), "{second}");
}

/// #14.4: `ctxgraph watch > watch.log` inside the tree. Appending to a file no query read
/// must not rebuild (on `main` before the fix: hundreds of lines a second).
#[test]
fn watch_does_not_rebuild_on_its_own_output() {
    let tree = Tree::new();
    let root = tree.root();
    let log = tree.path("repo/pkg/watch.log");
    let mut child = ctxgraph(&root)
        .args(["watch", "--cwd", &tree.cwd()])
        .current_dir(root.join("repo"))
        .stdout(std::fs::File::create(&log).expect("create watch.log"))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ctxgraph watch");
    let lines = || std::fs::read_to_string(&log).map_or(0, |text| text.lines().count());
    let wait_for = |count: usize| {
        let start = Instant::now();
        while lines() < count && start.elapsed() < REPLY_TIMEOUT {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(1);
    // Long enough for a feedback loop to write many lines (the debouncer flushes every 10 ms).
    std::thread::sleep(Duration::from_millis(1500));
    let idle = lines();
    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    wait_for(idle + 1);
    std::thread::sleep(Duration::from_millis(500));
    let after_edit = lines();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((idle, after_edit), (1, 2), "{}", std::fs::read_to_string(&log).unwrap_or_default());
}

/// A block's range in `text` holds the bytes its hash is of: a reply carries each block's
/// bytes once, in the text.
fn assert_block_bytes(text: &str, block: &Value) {
    let at = |key: &str| usize::try_from(block[key].as_u64().expect("a byte offset")).expect("fits");
    let bytes =
        text.get(at("start")..at("end")).unwrap_or_else(|| panic!("a range outside the text: {block}"));
    assert_eq!(blake3::hash(bytes.as_bytes()).to_hex().as_str(), block["hash"], "{block}");
}

/// Issue #42: `build` answers every agent, opencode included, in one shape, and each block
/// is the CLI's (`build --agent NAME --format json`) field for field, with its id: what it
/// comes from, where it goes, its range and hash, its status and rule.
#[test]
fn build_blocks_are_the_cli_s_for_every_agent() {
    let tree = Tree::new();
    tree.write("repo/CLAUDE.md", "claude root\n");
    tree.write("repo/GEMINI.md", "gemini root\n@pkg/AGENTS.md\n");
    tree.write("repo/.github/copilot-instructions.md", "copilot rules\n");
    tree.write("repo/.clinerules/a.md", "cline rule\n");
    tree.write("repo/CONVENTIONS.md", "aider conventions\n");
    tree.write("repo/.aider.conf.yml", "read: CONVENTIONS.md\n");
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let cwd = tree.cwd();
    let turn_fields = [
        "kind",
        "source",
        "placement",
        "start",
        "end",
        "hash",
        "status",
        "rule",
        "placeholder",
        "unstable",
        "unordered",
    ];
    let mut shapes = std::collections::BTreeSet::new();
    let mut with_blocks = Vec::new();
    for (id, profile) in (1..).zip(ctxgraph_engine::PROFILES) {
        let agent = profile.agent().name();
        let reply = server.call(id, "build", json!({ "cwd": cwd, "agent": agent }))["result"].clone();
        let cli: Value = serde_json::from_slice(
            &tree.run_cli(&["build", "--agent", agent, "--cwd", &cwd, "--format", "json"]),
        )
        .unwrap_or_else(|err| panic!("{agent}: build --format json: {err}"));
        assert_eq!(reply["agent"], agent, "{reply}");
        assert_eq!(reply["bytes"], cli["bytes"], "{agent}: {reply}");
        let expected: Vec<Value> = cli["blocks"]
            .as_array()
            .expect("the CLI's blocks")
            .iter()
            .map(|block| {
                turn_fields.iter().filter_map(|&k| Some((k.to_owned(), block.get(k)?.clone()))).collect()
            })
            .collect();
        let blocks: Vec<Value> = reply["blocks"]
            .as_array()
            .unwrap_or_else(|| panic!("{agent}: no blocks in {reply}"))
            .iter()
            .map(|block| {
                let mut block = block.as_object().expect("a block").clone();
                assert!(
                    block.remove("id").is_some_and(|id| id.is_string()),
                    "{agent}: a block without an id"
                );
                shapes.insert(
                    block
                        .keys()
                        .filter(|k| !["placeholder", "unstable", "unordered"].contains(&k.as_str()))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
                Value::Object(block)
            })
            .collect();
        assert_eq!(blocks, expected, "{agent}: serve's blocks are not the CLI's");
        if !blocks.is_empty() {
            with_blocks.push(agent);
        }
        let keys: std::collections::BTreeSet<&str> =
            reply.as_object().expect("a reply").keys().map(String::as_str).collect();
        let required =
            ["agent", "bytes", "changed", "executed", "hash", "removed", "stable_prefix_bytes", "unchanged"];
        assert!(required.iter().all(|k| keys.contains(k)), "{agent}: {keys:?}");
    }
    // Every agent's blocks have the same fields (the optional flags aside).
    assert_eq!(shapes.len(), 1, "{shapes:?}");
    assert!(with_blocks.len() >= 10, "only these agents sent blocks here: {with_blocks:?}");
}

/// `build` with `agent`: Codex's message, Gemini's context and Claude Code's block from the
/// same warm server, a known hash answered with `unchanged`, an edit seen on the next turn,
/// opencode's parameters refused.
#[test]
fn build_serves_every_agent() {
    let tree = Tree::new();
    tree.write("repo/GEMINI.md", "gemini root\n@pkg/AGENTS.md\n");
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    let cwd = tree.cwd();
    let codex = server.call(1, "build", json!({ "cwd": cwd, "agent": "codex" }))["result"].clone();
    assert_eq!(codex["agent"], "codex");
    assert!(
        codex["text"].as_str().is_some_and(|t| t.starts_with("# AGENTS.md instructions for ")),
        "{codex}"
    );
    assert_eq!(codex["blocks"].as_array().map(Vec::len), Some(2), "{codex}");

    let gemini = server.call(2, "build", json!({ "cwd": cwd, "agent": "gemini" }))["result"].clone();
    let text = gemini["text"].as_str().expect("text");
    assert!(text.contains("<project_context>\n--- Context from: ") && text.contains("pkg rules"), "{text}");
    assert_eq!(gemini["blocks"][0]["placement"], "first_user_message");
    assert_block_bytes(text, &gemini["blocks"][0]);
    assert_eq!(gemini["hash"].as_str().map(str::len), Some(64));

    let known = gemini["hash"].clone();
    let same =
        server.call(3, "build", json!({ "cwd": cwd, "agent": "gemini", "known_hash": known }))["result"]
            .clone();
    assert_eq!((same["unchanged"].clone(), same.get("text")), (json!(true), None), "{same}");

    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let edited =
        server.call(4, "build", json!({ "cwd": cwd, "agent": "gemini", "known_hash": known }))["result"]
            .clone();
    assert!(edited["text"].as_str().is_some_and(|t| t.contains("pkg rules, edited")), "{edited}");
    // The client holds the server's previous build: only the block that changed comes back
    // (GEMINI.md, which inlines the edited import), named as every agent's blocks are, with
    // the bytes a prompt cache can still reuse.
    let root = format!("file:{}", tree.path("repo/GEMINI.md").display());
    assert_eq!(edited["changed"], json!([root]), "{edited}");
    let blocks = edited["blocks"].as_array().expect("blocks");
    assert_eq!(blocks.iter().map(|b| b["id"].clone()).collect::<Vec<_>>(), [json!(root)], "{edited}");
    let prefix = edited["stable_prefix_bytes"].as_u64().expect("a prefix");
    let text = edited["text"].as_str().expect("text");
    assert!(prefix > 0 && text[..usize::try_from(prefix).expect("fits")].ends_with("pkg rules"), "{edited}");
    assert_eq!(edited["removed"], json!([]), "{edited}");

    // opencode's parameters are its settings, which Gemini does not model; a section it
    // does not build is refused the same way.
    let refused = server.call(5, "build", json!({ "cwd": cwd, "agent": "gemini", "model": "a/b" }));
    let message = |reply: &Value| reply["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message(&refused).contains("does not model gemini's `model`"), "{refused}");
    let refused = server.call(51, "build", json!({ "cwd": cwd, "agent": "gemini", "section": "request" }));
    assert!(message(&refused).contains("Gemini CLI builds only rules"), "{refused}");

    // Any agent's sections and settings, as `build --section` and `-c` take them: the text
    // is the CLI's.
    let params = json!({ "cwd": cwd, "agent": "codex", "section": "request", "settings": ["project_doc_max_bytes=8"] });
    let request = server.call(52, "build", params)["result"].clone();
    let args =
        ["build", "--cwd", &cwd, "--agent", "codex", "--section", "request", "-c", "project_doc_max_bytes=8"];
    let cli = String::from_utf8(tree.run_cli(&args)).expect("UTF-8");
    assert!(cli.contains("root rul\n</INSTRUCTIONS>"), "the setting cut the file: {cli}");
    assert_eq!(request["text"].as_str(), Some(cli.as_str()), "{request}");
    let bad = server.call(53, "build", json!({ "cwd": cwd, "agent": "codex", "settings": ["no-equals"] }));
    assert!(message(&bad).contains("is not KEY=VALUE"), "{bad}");
    let unknown = server.call(6, "build", json!({ "cwd": cwd, "agent": "nobody" }));
    assert!(unknown.get("error").is_some(), "{unknown}");

    // Claude Code: its CLAUDE.md block; with no installation in the server's environment,
    // its own wording is placeholders and the reply says why.
    tree.write("repo/CLAUDE.md", "claude rules\n");
    let claude = server.call(7, "build", json!({ "cwd": cwd, "agent": "claude-code" }))["result"].clone();
    assert_eq!(claude["agent"], "claude-code", "{claude}");
    let text = claude["text"].as_str().expect("text");
    assert!(text.starts_with("<system-reminder>") && text.contains("claude rules"), "{text}");
    assert_eq!(claude["blocks"][0]["source"], json!(tree.path("repo/CLAUDE.md")), "{claude}");
    assert!(claude["unavailable"].is_string(), "{claude}");
    let known = claude["hash"].clone();
    let same = server.call(8, "build", json!({ "cwd": cwd, "agent": "claude-code", "known_hash": known }));
    assert_eq!(same["result"]["unchanged"], json!(true), "{same}");
}

/// `build` with `"agent": "qwen-code"`, through the generic profile path: Qwen's context and
/// rule blocks placed in its text, its own wording unavailable without an installation, and
/// a second turn with nothing changed answered without executing a query (a count, not a
/// time), then an edit seen.
#[test]
fn build_serves_qwen_code_and_a_warm_turn_executes_nothing() {
    let tree = Tree::new();
    tree.write("repo/QWEN.md", "qwen root\n@pkg/AGENTS.md\n");
    tree.write("repo/.qwen/rules/all.md", "qwen rule\n");
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.call(1, "build", json!({ "cwd": cwd, "agent": "qwen-code" }))["result"].clone();
    assert_eq!(first["agent"], "qwen-code", "{first}");
    let text = first["text"].as_str().expect("text");
    assert!(
        text.starts_with(
            "--- Context from: ../QWEN.md ---\nqwen root\n<!-- Imported from: pkg/AGENTS.md -->\npkg rules"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "--- Rule from: .qwen/rules/all.md ---\nqwen rule\n--- End of Rule from: .qwen/rules/all.md ---"
        ),
        "{text}"
    );
    let blocks = first["blocks"].as_array().expect("blocks");
    for block in blocks {
        assert_block_bytes(text, block);
        assert_eq!(block["placement"], "system_message", "{block}");
    }
    let rules: Vec<&str> = blocks.iter().filter_map(|b| b["rule"].as_str()).collect();
    assert_eq!(rules, ["QW1", "QW1", "QW1", "QW3", "QW9"], "{first}");
    assert!(
        first["unavailable"].as_str().is_some_and(|r| r.contains("no Qwen Code installation")),
        "{first}"
    );
    assert!(first["executed"].as_u64().is_some_and(|n| n > 0), "{first}");

    let second = server.call(2, "build", json!({ "cwd": cwd, "agent": "qwen-code" }))["result"].clone();
    assert_eq!(
        (second["executed"].clone(), second["hash"].clone()),
        (json!(0), first["hash"].clone()),
        "{second}"
    );
    let known = first["hash"].clone();
    let same =
        server.call(3, "build", json!({ "cwd": cwd, "agent": "qwen-code", "known_hash": known }))["result"]
            .clone();
    assert_eq!(
        (same["unchanged"].clone(), same["executed"].clone(), same.get("text")),
        (json!(true), json!(0), None),
        "{same}"
    );

    tree.write("repo/pkg/AGENTS.md", "pkg rules, edited");
    let edited =
        server.call(4, "build", json!({ "cwd": cwd, "agent": "qwen-code", "known_hash": known }))["result"]
            .clone();
    assert!(edited["text"].as_str().is_some_and(|t| t.contains("pkg rules, edited")), "{edited}");
    // The client holds the server's previous build: only the blocks that changed come back
    // (QWEN.md inlines the edited file, which is also sent on its own), named as every
    // agent's blocks are, with the bytes a prompt cache can still reuse.
    let ids = [
        format!("file:{}", tree.path("repo/QWEN.md").display()),
        format!("file:{}", tree.path("repo/pkg/AGENTS.md").display()),
    ];
    assert_eq!(edited["changed"], json!(ids), "{edited}");
    let blocks = edited["blocks"].as_array().expect("blocks");
    assert_eq!(
        blocks.iter().map(|b| b["id"].clone()).collect::<Vec<_>>(),
        ids.map(|id| json!(id)),
        "{edited}"
    );
    let prefix = edited["stable_prefix_bytes"].as_u64().expect("a prefix");
    let text = edited["text"].as_str().expect("text");
    assert!(prefix > 0 && text[..usize::try_from(prefix).expect("fits")].ends_with("pkg rules"), "{edited}");
    assert_eq!(edited["removed"], json!([]), "{edited}");
    assert_eq!(edited["unchanged"], json!(false), "{edited}");
}

/// `build` with `"agent": "kilo"`: the `Instructions from:` parts (the root `AGENTS.md` and
/// `pkg/AGENTS.md`, nearest first, then the working directory's rule folder), a warm turn
/// with nothing changed executes no query, and an edit is seen.
#[test]
fn build_serves_kilo_and_a_warm_turn_executes_nothing() {
    let tree = Tree::new();
    tree.write("repo/pkg/.kilo/rules/r.md", "kilo rule\n");
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.call(1, "build", json!({ "cwd": cwd, "agent": "kilo" }))["result"].clone();
    assert_eq!(first["agent"], "kilo", "{first}");
    let root = tree.root().display().to_string();
    assert_eq!(
        first["text"].as_str(),
        Some(
            format!(
                "Instructions from: {root}/repo/pkg/AGENTS.md\npkg rules\n\
                 Instructions from: {root}/repo/AGENTS.md\nroot rules\n\
                 Instructions from: {root}/repo/pkg/.kilo/rules/r.md\nkilo rule\n"
            )
            .as_str()
        ),
        "{first}"
    );
    let rules: Vec<&str> =
        first["blocks"].as_array().expect("blocks").iter().filter_map(|b| b["rule"].as_str()).collect();
    assert_eq!(rules, ["KI2", "KI2", "KI4"], "{first}");
    assert!(first["executed"].as_u64().is_some_and(|n| n > 0), "{first}");

    let known = first["hash"].clone();
    let same = server.call(2, "build", json!({ "cwd": cwd, "agent": "kilo", "known_hash": known }))["result"]
        .clone();
    assert_eq!(
        (same["unchanged"].clone(), same["executed"].clone(), same.get("text")),
        (json!(true), json!(0), None),
        "{same}"
    );
    tree.write("repo/pkg/.kilo/rules/r.md", "kilo rule, edited\n");
    let edited =
        server.call(3, "build", json!({ "cwd": cwd, "agent": "kilo", "known_hash": known }))["result"]
            .clone();
    assert!(edited["text"].as_str().is_some_and(|t| t.ends_with("kilo rule, edited\n")), "{edited}");
}

/// `build` with `"agent": "cline"`: the `# Rules` section of the working directory, each rule
/// a block placed in the text; a warm turn with nothing changed executes no query, and a new
/// rule file in the workspace's `.clinerules` folder is seen.
#[test]
fn build_serves_cline_and_a_warm_turn_executes_nothing() {
    let tree = Tree::new();
    tree.write("repo/pkg/.clinerules/b.md", "b rule\n");
    tree.write("repo/pkg/AGENTS.md", "workspace agents\n");
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.call(1, "build", json!({ "cwd": cwd, "agent": "cline" }))["result"].clone();
    assert_eq!(first["agent"], "cline", "{first}");
    assert_eq!(first["text"], "# Rules\n## b\nb rule\n\n## Workspace AGENTS.md\nworkspace agents", "{first}");
    let text = first["text"].as_str().expect("text");
    for block in first["blocks"].as_array().expect("blocks") {
        assert_block_bytes(text, block);
        assert_eq!(block["rule"], "CL8", "{block}");
    }
    assert!(first["executed"].as_u64().is_some_and(|n| n > 0), "{first}");
    let second = server.call(2, "build", json!({ "cwd": cwd, "agent": "cline" }))["result"].clone();
    assert_eq!(
        (second["executed"].clone(), second["hash"].clone()),
        (json!(0), first["hash"].clone()),
        "{second}"
    );

    tree.write("repo/pkg/.clinerules/a.md", "a rule\n");
    let edited = server.call(3, "build", json!({ "cwd": cwd, "agent": "cline" }))["result"].clone();
    assert!(
        edited["text"].as_str().is_some_and(|t| t.starts_with("# Rules\n## a\na rule\n\n## b\n")),
        "{edited}"
    );
}

/// `build` with `"agent": "continue"`: the userRules block, a warm turn executing no query,
/// and an edit of the agent file seen.
#[test]
fn build_serves_continue_and_a_warm_turn_executes_nothing() {
    let tree = Tree::new();
    tree.write("repo/pkg/AGENTS.md", "agents\n");
    tree.write("repo/pkg/.continue/rules/r.md", "rule\n");
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.call(1, "build", json!({ "cwd": cwd, "agent": "continue" }))["result"].clone();
    assert_eq!(first["text"], "<context name=\"userRules\">\nagents\n\n\nrule\n\n</context>", "{first}");
    let rules: Vec<&str> =
        first["blocks"].as_array().expect("blocks").iter().filter_map(|b| b["rule"].as_str()).collect();
    assert_eq!(rules, ["CN2", "CN3"], "{first}");
    let second = server.call(2, "build", json!({ "cwd": cwd, "agent": "continue" }))["result"].clone();
    assert_eq!(
        (second["executed"].clone(), second["hash"].clone()),
        (json!(0), first["hash"].clone()),
        "{second}"
    );
    tree.write("repo/pkg/AGENTS.md", "agents, edited\n");
    let edited = server.call(3, "build", json!({ "cwd": cwd, "agent": "continue" }))["result"].clone();
    assert!(edited["text"].as_str().is_some_and(|t| t.contains("agents, edited")), "{edited}");
}

/// `build` with `"agent": "aider"`, through the generic profile path: the read-only files of
/// the nearest `.aider.conf.yml` in the first user message, marked unordered, Aider's wording
/// unavailable without an installation, a warm turn executing no query, then an edit seen.
#[test]
fn build_serves_aider_and_a_warm_turn_executes_nothing() {
    let tree = Tree::new();
    tree.write("repo/.aider.conf.yml", "read: [../AGENTS.md, NOTES.md]\n");
    tree.write("repo/pkg/NOTES.md", "pkg notes\n");
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let cwd = tree.cwd();
    let first = server.call(1, "build", json!({ "cwd": cwd, "agent": "aider" }))["result"].clone();
    assert_eq!(first["agent"], "aider", "{first}");
    let text = first["text"].as_str().expect("text");
    // `read:` of the root's file, taken from the working directory (pkg): ../AGENTS.md is the
    // root's, NOTES.md is pkg's (AI2).
    assert!(text.contains("\nAGENTS.md\n```\nroot rules```\n"), "{text}");
    assert!(text.contains("\npkg/NOTES.md\n```\npkg notes\n```\n"), "{text}");
    let blocks = first["blocks"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 2, "{first}");
    for block in blocks {
        assert_block_bytes(text, block);
        assert_eq!(
            (&block["placement"], &block["unordered"]),
            (&json!("first_user_message"), &json!(true)),
            "{block}"
        );
    }
    assert!(first["unavailable"].as_str().is_some_and(|r| r.contains("no Aider installation")), "{first}");
    let second = server.call(2, "build", json!({ "cwd": cwd, "agent": "aider" }))["result"].clone();
    assert_eq!(
        (second["executed"].clone(), second["hash"].clone()),
        (json!(0), first["hash"].clone()),
        "{second}"
    );
    tree.write("repo/pkg/NOTES.md", "pkg notes, edited\n");
    let known = first["hash"].clone();
    let edited =
        server.call(3, "build", json!({ "cwd": cwd, "agent": "aider", "known_hash": known }))["result"]
            .clone();
    assert!(edited["text"].as_str().is_some_and(|t| t.contains("pkg notes, edited")), "{edited}");
}

/// `build` with `section: "message"`: the whole message's block ids, and turns over it.
#[test]
fn the_whole_message_has_its_own_block_ids_and_turns() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let params = |system: &str| json!({ "cwd": tree.cwd(), "section": "message", "model": "a/claude-x", "opencode_agent": "plan", "user_system": system });
    let first = server.call(1, "build", params("Last."))["result"].clone();
    let ids: Vec<&str> =
        first["blocks"].as_array().expect("blocks").iter().map(|b| b["id"].as_str().expect("id")).collect();
    let pkg = format!("file:{}/repo/pkg/AGENTS.md", tree.root().display());
    let root = format!("file:{}/repo/AGENTS.md", tree.root().display());
    assert_eq!(ids, ["model-prompt", "environment", pkg.as_str(), root.as_str(), "skills", "user-system"]);
    // No opencode on this server's PATH: the model prompt and the skills block's own
    // sentences are marked placeholders.
    for placeholder in [0, 4] {
        let reason = first["blocks"][placeholder]["placeholder"].as_str().unwrap_or_default();
        assert!(reason.contains("opencode"), "{first}");
    }
    assert!(first["unavailable"].is_string(), "{first}");
    let text = first["text"].as_str().expect("text");
    assert!(
        text.contains("root rules\n[ctxgraph: opencode's text skills/intro is unavailable: ")
            && text.ends_with("</available_skills>\nLast."),
        "{first}"
    );
    let again = server.call(2, "build", params("Last."))["result"].clone();
    assert_eq!((again["changed"].clone(), again["executed"].clone()), (json!([]), json!(0)));
    let other = server.call(3, "build", params("Other."))["result"].clone();
    assert_eq!(other["changed"], json!(["user-system"]), "{other}");
}

/// `installation`: opencode's texts by asset name, loaded from `$CTXGRAPH_OPENCODE` and
/// verified (L1–L2), so a client inside opencode (the plugin) needs none of its words.
#[test]
fn installation_answers_opencode_s_texts_by_name_verified() {
    let tree = Tree::new();
    let bin = ctxgraph_test_support::opencode::installed();
    let mut server = tree.spawn_with(&["serve", "--stdio"], &[("CTXGRAPH_OPENCODE", bin.as_os_str())]);
    let names = ["references/intro", "skills/intro", "skills/how-to-load", "structured-output"];
    let reply = server.call(1, "installation", json!({ "texts": names }))["result"].clone();
    assert_eq!(reply["version"], ctxgraph_test_support::opencode::VERSION, "{reply}");
    // The executable the launcher leads to (L1), whatever npm named it.
    assert!(reply["binary"].as_str().is_some_and(|b| std::path::Path::new(b).is_file()), "{reply}");
    assert_eq!(reply["unavailable"], json!({}), "{reply}");
    let table = known_assets(ctxgraph_test_support::opencode::VERSION).expect("table");
    for name in names {
        let text = reply["texts"][name].as_str().unwrap_or_else(|| panic!("no {name}: {reply}"));
        let record = &table[name];
        assert_eq!(text.len(), record.bytes, "{name}");
        assert_eq!(blake3::hash(text.as_bytes()).to_hex().as_str(), record.blake3, "{name}");
    }
}

/// Without an installation every text is unavailable, with L1's reason; a name no table has
/// is a bad request, and the server keeps serving.
#[test]
fn installation_says_why_a_text_is_unavailable_and_refuses_unknown_names() {
    let tree = Tree::new();
    let mut server = tree.spawn(&["serve", "--stdio"]);
    let unknown = server.call(1, "installation", json!({ "texts": ["skills/intro", "skills/outro"] }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let message = unknown["error"]["message"].as_str().expect("message");
    assert!(message.contains("\"skills/outro\"") && message.contains("skills/intro"), "{message}");
    let reply = server.call(2, "installation", json!({ "texts": ["skills/intro"] }))["result"].clone();
    assert_eq!(
        (reply["binary"].clone(), reply["version"].clone(), reply["texts"].clone()),
        (Value::Null, Value::Null, json!({}))
    );
    let reason = reply["unavailable"]["skills/intro"].as_str().expect("a reason");
    assert!(reason.contains("CTXGRAPH_OPENCODE"), "{reason}");
    let missing = server.call(3, "installation", json!({}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(server.finish(), Some(0));
}

/// `ctxgraph ARGS` in `dir` with the tree's clean environment: the CLI's answer to compare a
/// method's with.
fn cli_json(tree: &Tree, dir: &std::path::Path, args: &[&str]) -> Value {
    let output = ctxgraph(&tree.root()).args(args).current_dir(dir).output().expect("run ctxgraph");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&output.stderr)))
}

/// The error code and message of a reply that must be an error.
fn error_of(reply: &Value) -> (i64, String) {
    let error = reply.get("error").unwrap_or_else(|| panic!("not an error: {reply}"));
    (error["code"].as_i64().expect("code"), error["message"].as_str().expect("message").to_owned())
}

fn result_of(reply: Value) -> Value {
    reply.get("result").cloned().unwrap_or_else(|| panic!("not a result: {reply}"))
}

/// The session methods over stdio: opened from a file, appended to, compacted, its next
/// messages and its explanation, each the answer the CLI gives for the same session; and a
/// refusal for each.
#[test]
fn session_methods_answer_as_the_cli_does_and_refuse_bad_requests() {
    let tree = Tree::new();
    let export_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/session/s11_all_fit/export.json");
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(&export_path).expect("fixture")).expect("json");
    let messages = export["messages"].as_array().expect("messages");
    // All but the last message in the file; the last one arrives by `session/append`.
    let mut head = export.clone();
    head["messages"].as_array_mut().expect("messages").pop();
    tree.write("head.json", &head.to_string());
    let id = export["info"]["id"].as_str().expect("id").to_owned();
    let cwd = tree.cwd();
    let limits = ["--context", "30000", "--output", "4000"];
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);

    let opened = result_of(server.call(1, "session/open", json!({ "path": tree.path("head.json") })));
    assert_eq!(opened, json!({ "session": id, "messages": messages.len() - 1 }));
    let appended = result_of(server.call(
        2,
        "session/append",
        json!({ "session": id, "message": messages.last().expect("last") }),
    ));
    assert_eq!(appended, json!({ "messages": messages.len() }));

    let whole = tree.path("export.json");
    std::fs::copy(&export_path, &whole).expect("copy");
    let whole = whole.display().to_string();
    let pkg = tree.path("repo/pkg");
    let compact = result_of(server.call(
        3,
        "session/compact",
        json!({ "session": id, "cwd": cwd, "context": 30000, "output": 4000 }),
    ));
    let cli = cli_json(
        &tree,
        &pkg,
        &[&["session", "compact", "--session", &whole, "--format", "json"][..], &limits].concat(),
    );
    assert_eq!(compact, cli);
    assert_eq!(compact["usable"], 26000);
    assert!(compact["request"].as_str().is_some_and(|r| r.contains("<conversation>")), "{compact}");

    let next = result_of(server.call(4, "session/messages", json!({ "session": id })));
    let cli = cli_json(&tree, &pkg, &["session", "messages", "--session", &whole, "--format", "json"]);
    assert_eq!(next["messages"], cli);

    let explained = result_of(server.call(
        5,
        "session/explain",
        json!({ "session": id, "cwd": cwd, "context": 30000, "output": 4000 }),
    ));
    let cli =
        cli_json(&tree, &pkg, &[&["explain", "--session", &whole, "--format", "json"][..], &limits].concat());
    assert_eq!(explained, cli);
    assert_eq!(explained["messages"], messages.len());

    // Refusals: each method answers, the server goes on serving.
    let (code, message) = error_of(&server.call(6, "session/open", json!({})));
    assert_eq!((code, message.as_str()), (-32602, "give one of path, export"));
    let (code, message) =
        error_of(&server.call(7, "session/append", json!({ "session": id, "message": { "info": {} } })));
    assert!(code == -32602 && message.contains("$.info"), "{message}");
    let (code, message) = error_of(&server.call(8, "session/compact", json!({ "session": id })));
    assert_eq!((code, message.as_str()), (-32602, "invalid params: missing field `cwd`"));
    let (code, message) = error_of(&server.call(9, "session/messages", json!({ "session": "nope" })));
    assert_eq!((code, message.as_str()), (-32602, "no open session \"nope\""));
    let (code, message) = error_of(&server.call(
        10,
        "session/explain",
        json!({ "session": id, "cwd": cwd, "context": 30000, "message": "msg_nope" }),
    ));
    assert!(code == -32000 && message.contains("msg_nope"), "{code} {message}");
    let (code, message) =
        error_of(&server.call(11, "session/explain", json!({ "session": id, "cwd": cwd, "colour": "blue" })));
    assert!(code == -32602 && message.contains("unknown field `colour`"), "{message}");
    assert_eq!(server.call(12, "shutdown", Value::Null)["result"], Value::Null);
    assert_eq!(server.finish(), Some(0));
}

/// `explain`, `lint`, `config` and the memory methods over stdio, each the CLI's answer for
/// the same directory, and a refusal for each.
#[test]
fn explain_lint_config_and_memory_methods_answer_as_the_cli_does() {
    let tree = Tree::new();
    let cwd = tree.cwd();
    let pkg = tree.path("repo/pkg");
    // A secret in the config: `config` masks it as the CLI does.
    tree.write(
        "repo/pkg/opencode.json",
        r#"{ "provider": { "p": { "options": { "apiKey": "sk-live-secret" } } } }"#,
    );
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);

    let explained = result_of(server.call(1, "explain", json!({ "cwd": cwd, "target": "AGENTS.md" })));
    assert_eq!(explained, cli_json(&tree, &pkg, &["explain", "AGENTS.md", "--format", "json"]));
    let whole = result_of(server.call(2, "explain", json!({ "cwd": cwd })));
    let in_prompt: Vec<String> = whole["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|item| item["in_prompt"] == true)
        .filter_map(|item| item["source"]["value"].as_str().map(str::to_owned))
        .collect();
    let rules = ["repo/pkg/AGENTS.md", "repo/AGENTS.md"].map(|rule| tree.path(rule).display().to_string());
    assert_eq!(in_prompt, rules, "{whole}");

    let lint = result_of(server.call(3, "lint", json!({ "cwd": cwd })));
    assert_eq!(lint, cli_json(&tree, &pkg, &["lint", "--format", "json"]));
    let config = result_of(server.call(4, "config", json!({ "cwd": cwd })));
    assert_eq!(config, cli_json(&tree, &pkg, &["config", "--format", "json"]));
    assert!(!config.to_string().contains("sk-live-secret"), "{config}");

    let added = result_of(server.call(
        5,
        "memory/remember",
        json!({ "cwd": cwd, "session": "ses_a", "text": "Use pnpm, not npm, in this repo" }),
    ));
    assert_eq!(added["result"], "added", "{added}");
    let recalled = result_of(server.call(6, "memory/recall", json!({ "cwd": cwd, "query": "pnpm or npm?" })));
    assert!(
        recalled["text"].as_str().is_some_and(|t| t.contains("Use pnpm, not npm, in this repo")),
        "{recalled}"
    );
    let forgotten = result_of(server.call(7, "memory/forget", json!({ "cwd": cwd, "target": added["id"] })));
    assert_eq!(forgotten, json!({ "forgotten": [added["id"]] }));
    let recalled = result_of(server.call(8, "memory/recall", json!({ "cwd": cwd, "query": "pnpm" })));
    assert_eq!(recalled["text"], "No stored memory matched \"pnpm\".\n");

    let refusals = [
        ("explain", json!({ "target": "AGENTS.md" }), -32602, "missing field `cwd`"),
        ("lint", json!({ "cwd": cwd, "max_total_tokens": "many" }), -32602, "invalid type"),
        ("config", json!({ "cwd": cwd, "show_secrets": true }), -32602, "unknown field `show_secrets`"),
        ("explain", json!({ "cwd": tree.path("nowhere") }), -32000, "nowhere"),
        ("memory/recall", json!({ "cwd": cwd, "query": "" }), -32602, "query: 1 to 2000 characters"),
        ("memory/remember", json!({ "cwd": cwd, "text": "   " }), -32000, "nothing to remember"),
        ("memory/forget", json!({ "cwd": cwd, "target": "fct_nothing" }), -32000, "no fact matches"),
        ("memory/forget", json!({ "cwd": cwd, "session": 7, "target": "x" }), -32602, "invalid type"),
    ];
    for (n, (method, params, expected, fragment)) in refusals.into_iter().enumerate() {
        let (code, message) = error_of(&server.call(20 + n as u64, method, params.clone()));
        assert!(code == expected && message.contains(fragment), "{method} {params}: {code} {message}");
    }
    assert_eq!(server.finish(), Some(0));
}

/// `session/rules` answers for every agent whose records ctxgraph reads what `session rules
/// --format json` prints: a recorded Claude Code transcript, a Codex rollout and an opencode
/// export; an agent whose sessions are not modelled is refused, and serving goes on. `nearby`
/// with a `record` answers what `nearby --session RECORD` prints.
#[test]
fn session_rules_answers_as_the_cli_does_for_each_agent() {
    let tree = Tree::new();
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests");
    let records = [
        ("claude-code", tests.join("agents/claude-code/sessions/parallel-nested/transcript.jsonl")),
        ("codex", tests.join("agents/codex/sessions/resumed-in-sub/rollout.jsonl")),
        ("opencode", tests.join("session/s11_all_fit/export.json")),
    ];
    let cwd = tree.cwd();
    let pkg = tree.path("repo/pkg");
    let mut server = tree.spawn(&["serve", "--stdio", "--no-watch"]);
    for (id, (agent, record)) in (1..).zip(&records) {
        let record = record.display().to_string();
        let answer = result_of(server.call(
            id,
            "session/rules",
            json!({ "cwd": cwd, "agent": agent, "record": record }),
        ));
        let cli = cli_json(
            &tree,
            &pkg,
            &["session", "rules", "--agent", agent, "--session", &record, "--format", "json"],
        );
        assert_eq!(answer, cli, "{agent}");
        assert!(answer["steps"].as_array().is_some_and(|s| !s.is_empty()), "{agent}: {answer}");
    }
    let (code, message) = error_of(&server.call(
        9,
        "session/rules",
        json!({ "cwd": cwd, "agent": "gemini", "record": records[0].1 }),
    ));
    assert!(message.contains("does not model Gemini CLI's sessions"), "{code} {message}");

    // `nearby` at a record's next step, as `nearby --session RECORD` answers it.
    let record = records[0].1.display().to_string();
    let params = json!({ "cwd": cwd, "agent": "claude-code", "file": "src/main.rs", "record": record });
    let answer = result_of(server.call(10, "nearby", params));
    let args = ["nearby", "--agent", "claude-code", "--session", &record, "src/main.rs", "--format", "json"];
    assert_eq!(answer, cli_json(&tree, &pkg, &args), "nearby in a record");
    let params = json!({ "cwd": cwd, "agent": "gemini", "file": "src/main.rs", "record": record });
    let (_, message) = error_of(&server.call(11, "nearby", params));
    assert!(message.contains("does not model Gemini CLI's sessions"), "{message}");
    let params = json!({ "cwd": cwd, "file": "src/main.rs", "record": record, "session": "s" });
    let (code, message) = error_of(&server.call(12, "nearby", params));
    assert!(code == -32602 && message.contains("not both"), "{code} {message}");
    assert_eq!(server.finish(), Some(0));
}
