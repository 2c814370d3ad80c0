//! `ctxgraph lsp` at the protocol level, over the real binary's stdin and stdout: the
//! editor's unsaved text is what is linted, findings and config errors arrive at their
//! ranges, the lenses name what every agent attaches, and a stale computation is
//! interrupted (`$/cancelRequest`, a new edit). Every wait is bounded.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use ctxgraph_test_support::tree::{DiskWriter, git_worktree};
use serde_json::{Value, json};

use crate::support::ctxgraph;

const WAIT: Duration = Duration::from_secs(60);
const SECRET: &str = "AKIAQQQQQQQQQQQQQQQQ";

/// A running `ctxgraph lsp` and what it sent that nobody waited for yet.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications read while waiting for something else, in order.
    pending: Vec<Value>,
}

/// `file://` + the path (the test trees' paths need no escaping).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Client {
    /// Starts the server in `root/repo` (isolated as every CLI test is) and initializes it
    /// with `workspace` as its only folder.
    pub fn start(root: &Path, workspace: &Path) -> Client {
        Client::start_with_stderr(root, workspace, Stdio::inherit())
    }

    /// [`Client::start`], the server's stderr going to `stderr` (piped: see
    /// [`Client::take_stderr`]).
    pub fn start_with_stderr(root: &Path, workspace: &Path, stderr: Stdio) -> Client {
        let mut child = ctxgraph(root)
            .arg("lsp")
            .env("CTXGRAPH_OFFLINE", "1")
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn ctxgraph lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client =
            Client { stdin: child.stdin.take(), child, messages, next_id: 0, pending: Vec::new() };
        let folder = json!([{ "uri": uri(workspace), "name": "repo" }]);
        let reply = client.request("initialize", json!({ "capabilities": {}, "workspaceFolders": folder }));
        assert!(reply["result"]["capabilities"]["codeLensProvider"].is_object(), "{reply}");
        client.notify("initialized", json!({}));
        client
    }

    fn write(&mut self, message: &Value) {
        let body = message.to_string();
        self.write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).expect("write");
    }

    /// Sends bytes as they are: a message, a part of one, or anything else (an error once
    /// the server stopped reading).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// The server's stderr, when started with it piped.
    pub fn take_stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.child.stderr.take()
    }

    /// Closes the server's stdin: the editor hung up.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// A `key:` line of the server's `/proc/PID/status` (`VmHWM`, `Threads`), its first
    /// number (kB for memory).
    pub fn proc_status(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        let line = status.lines().find(|l| l.starts_with(&format!("{key}:"))).expect("key in status");
        let number = line.split_whitespace().nth(1).expect("a value");
        number.parse().expect("a number")
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// A fresh request id (for a request written by hand).
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The response to request `id`, keeping the notifications and other responses that
    /// come first (the server answers in the order its work finishes).
    pub fn response(&mut self, id: i64) -> Value {
        let answers = |m: &Value| m["id"] == json!(id) && m.get("method").is_none();
        if let Some(at) = self.pending.iter().position(answers) {
            return self.pending.remove(at);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.messages.recv_timeout(left).unwrap_or_else(|_| panic!("no response to {id}"));
            if answers(&message) {
                return message;
            }
            self.pending.push(message);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// The next diagnostics published for `path` at `version`.
    pub fn diagnostics(&mut self, path: &Path, version: i64) -> Vec<Value> {
        let wanted = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == json!(uri(path))
                && m["params"]["version"] == json!(version)
        };
        if let Some(at) = self.pending.iter().position(wanted) {
            let message = self.pending.remove(at);
            return message["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no diagnostics for {} at version {version}", path.display()));
            if wanted(&message) {
                return message["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            }
            self.pending.push(message);
        }
    }

    pub fn open(&mut self, path: &Path, text: &str) {
        let document = json!({ "uri": uri(path), "languageId": "markdown", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document }));
    }

    pub fn change(&mut self, path: &Path, version: i64, text: &str) {
        let document = json!({ "uri": uri(path), "version": version });
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": document, "contentChanges": [{ "text": text }] }),
        );
    }

    /// `shutdown`, `exit`, and the exit code (bounded).
    pub fn finish(mut self) -> Option<i32> {
        let reply = self.request("shutdown", Value::Null);
        assert!(reply.get("error").is_none(), "{reply}");
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        self.exit_code()
    }

    /// `exit` with no `shutdown` before it, stdin left open; the exit code (bounded).
    pub fn exit_without_shutdown(mut self) -> Option<i32> {
        self.notify("exit", Value::Null);
        self.exit_code()
    }

    /// The exit code once the server stopped by itself (bounded; killed after WAIT).
    pub fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        None
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One message of the base protocol: `Content-Length` headers, a blank line, the body.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A git repository under `root/repo`: a root AGENTS.md, opencode.json with one
/// `instructions` glob, and a package with a nearby AGENTS.md and a source file.
pub fn repository(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    for dir in ["home", "config", "managed", "repo/docs/agents", "repo/packages/api/src"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    git_worktree(&repo, &mut DiskWriter);
    let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).expect("write");
    write("AGENTS.md", "# Rules\n\n- run the tests before pushing\n");
    write("opencode.json", "{\n  \"instructions\": [\"docs/agents/*.md\"]\n}\n");
    write("docs/agents/style.md", "# Style\n\n- short functions\n");
    write("docs/agents/testing.md", "# Testing\n\n- one assertion per behaviour\n");
    write("packages/api/AGENTS.md", "# API\n\n- never edit an applied migration\n");
    write("packages/api/src/users.ts", "export const users = [];\n");
    repo
}

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().filter_map(|d| d["code"].as_str()).collect()
}

#[test]
fn unsaved_edits_are_linted_at_their_range_and_never_read_from_disk() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let agents = repo.join("AGENTS.md");
    let on_disk = std::fs::read_to_string(&agents).expect("read");
    let mut client = Client::start(temp.path(), &repo);
    client.open(&agents, &on_disk);
    assert_eq!(codes(&client.diagnostics(&agents, 1)), Vec::<&str>::new());

    // Typed, not saved: the secret is underlined where it is, with the rule's doc.
    let edited = format!("# Rules\n\n- run the tests before pushing\n- key é {SECRET}\n");
    client.change(&agents, 2, &edited);
    let found = client.diagnostics(&agents, 2);
    assert_eq!(codes(&found), ["CG005"], "{found:?}");
    assert_eq!(
        found[0]["range"],
        json!({ "start": { "line": 3, "character": 8 }, "end": { "line": 3, "character": 28 } })
    );
    assert_eq!(found[0]["severity"], json!(1));
    assert!(found[0]["codeDescription"]["href"].as_str().is_some_and(|h| h.ends_with("docs/lint.md#cg005")));
    assert_eq!(std::fs::read_to_string(&agents).expect("read"), on_disk, "the disk is untouched");

    // Undone: the finding goes.
    client.change(&agents, 3, &on_disk);
    assert_eq!(codes(&client.diagnostics(&agents, 3)), Vec::<&str>::new());

    // A broken config, unsaved: opencode's error at its key; then a JSONC syntax error.
    let config = repo.join("opencode.json");
    client.open(&config, "{\n  \"instructions\": [\"docs/agents/*.md\"]\n}\n");
    assert_eq!(codes(&client.diagnostics(&config, 1)), Vec::<&str>::new());
    client.change(&config, 2, "{\n  \"instructions\": [\"docs/agents/*.md\"],\n  \"model\": 3\n}\n");
    let found = client.diagnostics(&config, 2);
    assert_eq!(codes(&found), ["config"], "{found:?}");
    assert_eq!(
        found[0]["range"],
        json!({ "start": { "line": 2, "character": 2 }, "end": { "line": 2, "character": 9 } })
    );
    // Named by the agent that refuses it, not "the agent".
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(message.ends_with("(opencode refuses this config)"), "{message}");
    client.change(&config, 3, "{\n  \"instructions\": [\"docs/agents/*.md\"] ]\n}\n");
    let found = client.diagnostics(&config, 3);
    assert_eq!(codes(&found), ["config"], "{found:?}");
    assert_eq!(found[0]["range"]["start"]["line"], json!(1), "{found:?}");
    assert!(found[0]["message"].as_str().is_some_and(|m| m.contains("invalid JSONC")), "{found:?}");
    assert_eq!(client.finish(), Some(0));
}

/// Another agent's broken settings file, unsaved, is underlined where its reader stops, as
/// opencode's config is: the place comes from the agent's own error, whichever agent.
#[test]
fn another_agents_broken_settings_are_underlined_at_their_place() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    std::fs::create_dir_all(repo.join(".gemini")).expect("mkdir");
    let settings = repo.join(".gemini/settings.json");
    std::fs::write(&settings, "{}\n").expect("write");
    let mut client = Client::start(temp.path(), &repo);
    client.open(&settings, "{}\n");
    assert_eq!(codes(&client.diagnostics(&settings, 1)), Vec::<&str>::new());
    client.change(&settings, 2, "{\n  \"context\": {\"fileName\": \"X.md\"},\n  \"é\": ]\n}\n");
    let found = client.diagnostics(&settings, 2);
    assert_eq!(codes(&found), ["config"], "{found:?}");
    // The `]` after `"é": `: column 8 in UTF-16 units, 1-based.
    let at = json!({ "start": { "line": 2, "character": 7 }, "end": { "line": 2, "character": 8 } });
    assert_eq!(found[0]["range"], at, "{found:?}");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("gemini would not start here: "), "{found:?}");
    assert_eq!(client.finish(), Some(0));
}

/// A `claudeMdExcludes` pattern that keeps nothing out (CG025), typed into an unsaved
/// `.claude/settings.json`, is underlined where the pattern starts.
#[test]
fn a_claude_md_exclude_that_matches_nothing_is_underlined_as_typed() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    std::fs::create_dir_all(repo.join(".claude")).expect("mkdir");
    let settings = repo.join(".claude/settings.json");
    std::fs::write(&settings, "{}\n").expect("write");
    let mut client = Client::start(temp.path(), &repo);
    client.open(&settings, "{}\n");
    assert_eq!(codes(&client.diagnostics(&settings, 1)), Vec::<&str>::new());
    client.change(&settings, 2, "{\n  \"claudeMdExcludes\": [\"**/vendor/**\", \"CLAUDE.local.md\"]\n}\n");
    let found = client.diagnostics(&settings, 2);
    assert_eq!(codes(&found), ["CG025"], "{found:?}");
    assert_eq!(found[0]["range"]["start"], json!({ "line": 1, "character": 39 }), "{found:?}");
    assert!(found[0]["message"].as_str().is_some_and(|m| m.contains("`CLAUDE.local.md`")), "{found:?}");
    // Fixed as the hint says: nothing left to underline.
    client.change(&settings, 3, "{\n  \"claudeMdExcludes\": [\"**/vendor/**\", \"**/CLAUDE.local.md\"]\n}\n");
    assert_eq!(codes(&client.diagnostics(&settings, 3)), Vec::<&str>::new());
    assert_eq!(client.finish(), Some(0));
}

/// Hovering a key of a settings file says, for each agent that reads the file, whether its
/// value is in effect there or which later file replaced it: Claude Code's `outputStyle` in
/// the project's `settings.json` loses to `settings.local.json`; opencode's and Kilo's
/// `instructions` in the project's `opencode.json` are in effect.
#[test]
fn a_settings_key_says_whether_its_value_is_in_effect() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    std::fs::create_dir_all(repo.join(".claude")).expect("mkdir");
    let project = repo.join(".claude/settings.json");
    std::fs::write(&project, "{\n  \"outputStyle\": \"Explanatory\"\n}\n").expect("write");
    let local = repo.join(".claude/settings.local.json");
    std::fs::write(&local, "{ \"outputStyle\": \"Learning\" }\n").expect("write");
    let mut client = Client::start(temp.path(), &repo);
    let hover_at = |client: &mut Client, file: &std::path::Path, line: u32, character: u32| {
        let at = json!({ "textDocument": { "uri": uri(file) }, "position": { "line": line, "character": character } });
        client.request("textDocument/hover", at)
    };
    let hover = hover_at(&mut client, &project, 1, 5);
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(text.contains("**Claude Code** `outputStyle` = `\"Learning\"`: this file's value is replaced by the local project settings"), "{text}");
    assert_eq!(hover["result"]["range"]["start"], json!({ "line": 1, "character": 2 }), "{hover}");
    let hover = hover_at(&mut client, &local, 0, 4);
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(text.contains("`outputStyle` = `\"Learning\"`: in effect, from this file"), "{text}");
    // A value, not a key: nothing to say.
    let hover = hover_at(&mut client, &project, 1, 20);
    assert_eq!(hover["result"], Value::Null, "{hover}");
    // opencode's config: every agent that reads the file answers.
    let hover = hover_at(&mut client, &repo.join("opencode.json"), 1, 5);
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    for agent in ["opencode", "Kilo Code"] {
        let line =
            format!("**{agent}** `instructions` = `[\"docs/agents/*.md\"]`: in effect, from this file");
        assert!(text.contains(&line), "{text}");
    }
    assert_eq!(client.finish(), Some(0));
}

/// The titles of a code-lens reply, each checked to sit on line 1.
pub fn lens_titles(reply: &Value) -> Vec<String> {
    let lenses = reply["result"].as_array().unwrap_or_else(|| panic!("no lenses: {reply}"));
    for lens in lenses {
        assert_eq!(lens["range"]["start"]["line"], json!(0), "on line 1: {lens}");
    }
    lenses.iter().filter_map(|l| l["command"]["title"].as_str().map(str::to_owned)).collect()
}

#[test]
fn code_lenses_name_what_every_agent_attaches_and_does_with_a_rule_file() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let mut client = Client::start(temp.path(), &repo);
    let source = repo.join("packages/api/src/users.ts");
    let reply = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&source) } }));
    let titles = lens_titles(&reply);
    // One lens, the agents grouped by what they attach; its details name every agent in
    // the engine's registry, in its order.
    let agents: Vec<String> = ctxgraph_engine::PROFILES.iter().map(|p| p.agent().to_string()).collect();
    assert_eq!(titles.len(), 1, "{titles:#?}");
    let details = reply["result"][0]["command"]["arguments"][0].as_array().cloned().unwrap_or_default();
    let named: Vec<&str> = details.iter().filter_map(|d| d["agent"].as_str()).collect();
    assert_eq!(named, agents, "{reply}");
    assert!(
        details[0]["verdict"].as_str().is_some_and(|v| v.starts_with("attaches packages/api/AGENTS.md ("))
    );
    let opencode = titles[0].clone();
    assert!(opencode.starts_with("on read, attaches packages/api/AGENTS.md ("), "{opencode}");
    assert!(opencode.contains(" tokens): opencode"), "{opencode}");

    // The rule file itself: sent from its own directory only; attached on reads from above.
    let rule = repo.join("packages/api/AGENTS.md");
    let titles = lens_titles(
        &client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&rule) } })),
    );
    assert_eq!(
        titles[0], "rule file: in the system prompt from 1 of 3 working directories (. down to its own)",
        "{titles:#?}"
    );
    assert!(titles[1].starts_with("on read 2/3, sent 1/3: opencode"), "{titles:#?}");
    assert!(titles[2].starts_with("on read, "), "{titles:#?}");
    assert_eq!(titles.len(), 3);

    // The lens follows the unsaved buffer: the nearby file grown, its token count with it.
    client.open(&rule, &"# API\n\n- never edit an applied migration\n".repeat(20));
    client.diagnostics(&rule, 1);
    let titles = lens_titles(
        &client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&source) } })),
    );
    assert!(titles[0].starts_with("on read, attaches packages/api/AGENTS.md ("), "{titles:#?}");
    assert_ne!(titles[0], opencode, "{titles:#?}");
    assert_eq!(client.finish(), Some(0));
}

#[test]
fn instructions_entries_hover_link_and_go_to_their_files() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let config = repo.join("opencode.json");
    let mut client = Client::start(temp.path(), &repo);
    let at = json!({ "textDocument": { "uri": uri(&config) }, "position": { "line": 1, "character": 24 } });
    let hover = client.request("textDocument/hover", at.clone());
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(text.contains("- in `.`: `docs/agents/style.md`, `docs/agents/testing.md`"), "{text}");
    assert_eq!(
        hover["result"]["range"],
        json!({ "start": { "line": 1, "character": 19 }, "end": { "line": 1, "character": 37 } })
    );
    let definition = client.request("textDocument/definition", at);
    let targets: Vec<&str> =
        definition["result"].as_array().into_iter().flatten().filter_map(|l| l["uri"].as_str()).collect();
    let style = uri(&repo.join("docs/agents/style.md"));
    let testing = uri(&repo.join("docs/agents/testing.md"));
    assert_eq!(targets, [style.as_str(), testing.as_str()], "{definition}");
    let links =
        client.request("textDocument/documentLink", json!({ "textDocument": { "uri": uri(&config) } }));
    assert_eq!(links["result"][0]["target"], json!(style), "{links}");

    // An @import: hover names the file it resolves to, and go-to-definition goes there.
    let rule = repo.join("AGENTS.md");
    client.open(&rule, "# Rules\n\nSee @packages/api/AGENTS.md\n");
    client.diagnostics(&rule, 1);
    let at = json!({ "textDocument": { "uri": uri(&rule) }, "position": { "line": 2, "character": 8 } });
    let hover = client.request("textDocument/hover", at.clone());
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(text.contains(&format!("→ `{}`", repo.join("packages/api/AGENTS.md").display())), "{text}");
    let definition = client.request("textDocument/definition", at);
    assert_eq!(
        definition["result"][0]["uri"],
        json!(uri(&repo.join("packages/api/AGENTS.md"))),
        "{definition}"
    );

    // Claude Code follows a CLAUDE.md's imports: the hover says what it made of this one.
    let claude = repo.join("CLAUDE.md");
    std::fs::write(&claude, "@AGENTS.md\n").expect("write");
    // As an editor reports a file created on disk (the server watches through the editor).
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri(&claude), "type": 1 }] }),
    );
    client.open(&claude, "@AGENTS.md\n");
    client.diagnostics(&claude, 1);
    let at = json!({ "textDocument": { "uri": uri(&claude) }, "position": { "line": 0, "character": 3 } });
    let hover = client.request("textDocument/hover", at);
    let text = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(text.contains(&format!("claude-code: sent: imported by {} (CC4)", claude.display())), "{text}");
    assert_eq!(client.finish(), Some(0));
}

/// A tree whose `instructions` glob walks every directory: cold, a document-link request
/// on its config takes long enough for a cancellation sent right after it to find it
/// still running.
pub fn slow_repository(root: &Path) -> PathBuf {
    let repo = repository(root);
    std::fs::write(repo.join("opencode.json"), "{\n  \"instructions\": [\"**/*.md\"]\n}\n").expect("write");
    for a in 0..40 {
        for b in 0..25 {
            let dir = repo.join(format!("gen/d{a}/e{b}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            for c in 0..4 {
                std::fs::write(dir.join(format!("f{c}.txt")), "x\n").expect("write");
            }
        }
    }
    repo
}

#[test]
fn cancel_request_and_a_new_edit_interrupt_the_stale_computation() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = slow_repository(temp.path());
    let config = repo.join("opencode.json");
    let mut client = Client::start(temp.path(), &repo);
    let links = json!({ "textDocument": { "uri": uri(&config) } });
    let id = client.send_request("textDocument/documentLink", links.clone());
    client.notify("$/cancelRequest", json!({ "id": id }));
    let reply = client.response(id);
    assert_eq!(reply["error"]["code"], json!(-32800), "RequestCancelled: {reply}");

    // Open, then ask; an edit right after makes the answer stale: ContentModified.
    let text = "{\n  \"instructions\": [\"**/*.md\"]\n}\n";
    client.open(&config, text);
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri(&repo.join("gen")), "type": 1 }] }),
    );
    let id = client.send_request("textDocument/documentLink", links.clone());
    client.change(&config, 2, "{\n  \"instructions\": [\"**/*.md\", \"AGENTS.md\"]\n}\n");
    let reply = client.response(id);
    assert_eq!(reply["error"]["code"], json!(-32801), "ContentModified: {reply}");
    // The server goes on answering, from the new text.
    let reply = client.request("textDocument/documentLink", links);
    assert_eq!(reply["result"].as_array().map(Vec::len), Some(2), "{reply}");
    assert_eq!(client.finish(), Some(0));
}

/// The protocol's exit codes: `exit` after `shutdown` is 0, `exit` alone is 1 (the server
/// stops at once, not waiting for stdin to close).
#[test]
fn exit_without_shutdown_exits_1() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path().canonicalize().expect("canonical").join("repo");
    std::fs::create_dir_all(&repo).expect("repo");
    assert_eq!(Client::start(temp.path(), &repo).exit_without_shutdown(), Some(1));
    assert_eq!(Client::start(temp.path(), &repo).finish(), Some(0));
}

/// An editor that leaves before `initialize` is a clean stop (exit 0), as one that leaves
/// later is; bytes that are not a Language Server Protocol message are bad input (exit 2)
/// with a bounded error that names the problem and hides a key in what was sent.
#[test]
fn a_client_leaving_early_exits_0_and_a_malformed_message_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("repo")).expect("repo");
    let big = format!(r#"{{"text": "{SECRET} {}""#, "x".repeat(1_000_000));
    let cases: [(&str, String, i32); 4] = [
        ("nothing", String::new(), 0),
        ("cut payload", format!("Content-Length: {}\r\n\r\n{big}", big.len()), 2),
        ("no header", "garbage\r\n\r\n".to_owned(), 2),
        ("not a message", "Content-Length: 2\r\n\r\n{}".to_owned(), 2),
    ];
    for (case, input, code) in cases {
        let mut child = ctxgraph(&root)
            .arg("lsp")
            .current_dir(root.join("repo"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ctxgraph lsp");
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        // Collected on a thread of its own, so an output bigger than a pipe cannot stall the
        // wait; a server that never exits is killed after WAIT.
        let pid = child.id();
        let (sender, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(child.wait_with_output());
        });
        let Ok(output) = finished.recv_timeout(WAIT) else {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{case}: ctxgraph lsp did not exit within {WAIT:?}");
        };
        let output = output.expect("output");
        writer.join().expect("writer");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{case}: {stderr}");
        assert!(stderr.len() < 2_000 && !stderr.contains(SECRET), "{case}: {stderr}");
        if code == 2 {
            assert!(stderr.contains("not a Language Server Protocol message"), "{case}: {stderr}");
        }
    }
}
