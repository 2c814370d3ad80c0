//! `ctxgraph lsp` against a hostile editor or repository (issue 43): files that are not
//! regular, URIs that leave the workspace, framing that asks for absurd sizes, the
//! protocol's exit codes, changes to documents never opened, and a burst of work. Every
//! wait is bounded; the resource checks read the server's `/proc/PID/status`.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::lsp::{Client, lens_titles, repository, slow_repository, uri};
use crate::support::ctxgraph;

const WAIT: Duration = Duration::from_secs(60);

fn error_message(reply: &Value) -> &str {
    reply["error"]["message"].as_str().unwrap_or_else(|| panic!("an error reply: {reply}"))
}

fn hover_at(path_uri: &str) -> Value {
    json!({ "textDocument": { "uri": path_uri }, "position": { "line": 0, "character": 0 } })
}

/// Runs `ctxgraph lsp` on `input`, stdin left open (a client that goes on waiting), and
/// returns its exit code and stderr; killed after WAIT.
fn run_raw(root: &Path, input: &[u8]) -> (Option<i32>, String) {
    let mut child = ctxgraph(root)
        .arg("lsp")
        .current_dir(root.join("repo"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ctxgraph lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("write");
    stdin.flush().expect("flush");
    let mut stderr = child.stderr.take().expect("stderr");
    let mut stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let pid = child.id();
    let (sender, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = sender.send((child.wait().ok().and_then(|s| s.code()), text));
    });
    let Ok(done) = finished.recv_timeout(WAIT) else {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!(
            "ctxgraph lsp did not stop within {WAIT:?} on {:?}",
            String::from_utf8_lossy(&input[..64.min(input.len())])
        );
    };
    drop(stdin);
    done
}

#[test]
fn files_that_are_not_open_are_read_only_when_regular_and_never_block() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let fifo = repo.join("notes.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", repo.join("zero.md")).expect("symlink");
    let mut client = Client::start(temp.path(), &repo);
    let reply = client.request("textDocument/hover", hover_at(&uri(&fifo)));
    assert!(error_message(&reply).contains("is a FIFO (named pipe), not a regular file"), "{reply}");
    let reply = client.request(
        "textDocument/documentLink",
        json!({ "textDocument": { "uri": uri(&repo.join("zero.md")) } }),
    );
    assert!(error_message(&reply).contains("is a character device, not a regular file"), "{reply}");
    // The server was never stuck: the next request is answered, from a file it may read.
    let reply = client.request("textDocument/hover", hover_at(&uri(&repo.join("opencode.json"))));
    assert!(reply.get("error").is_none(), "{reply}");
    assert!(client.proc_status("VmHWM") < 200_000, "{} kB", client.proc_status("VmHWM"));
    assert_eq!(client.finish(), Some(0));
}

#[test]
fn uris_that_leave_the_workspace_are_refused() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("AGENTS.md"), "# Outside\n").expect("write");
    std::os::unix::fs::symlink(&outside, repo.join("link")).expect("symlink");
    let mut client = Client::start(temp.path(), &repo);
    let escapes = [
        format!("{}/../outside/notes.md", uri(&repo)),
        format!("{}/%2E%2E/outside/AGENTS.md", uri(&repo)),
        format!("{}/../../../../etc/hostname", uri(&repo)),
        uri(&repo.join("link/AGENTS.md")),
    ];
    for escape in &escapes {
        let reply = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": escape } }));
        assert!(error_message(&reply).contains("outside the workspace"), "{escape}: {reply}");
        let reply = client.request("textDocument/hover", hover_at(escape));
        assert!(error_message(&reply).contains("outside the workspace"), "{escape}: {reply}");
    }
    // Inside, the same request is answered.
    let inside = format!("{}/docs/../AGENTS.md", uri(&repo));
    let reply = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": inside } }));
    assert!(reply["result"].is_array(), "{reply}");
    assert_eq!(client.finish(), Some(0));
}

#[test]
fn a_content_length_over_the_limit_is_refused_before_anything_is_read() {
    let temp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(temp.path().join("repo")).expect("repo");
    for length in ["1000000000000000", "3000000000", "67108865"] {
        let (code, stderr) = run_raw(temp.path(), format!("Content-Length: {length}\r\n\r\n{{").as_bytes());
        assert_eq!(code, Some(2), "{length}: {stderr}");
        assert!(
            stderr.contains(&format!("a message of {length} bytes is over the limit of 64 MiB")),
            "{stderr}"
        );
    }
}

/// The protocol's exit codes: 0 after `shutdown` (by `exit` or a hang-up), 1 for an `exit`
/// without one, also before `initialize`; a request after `shutdown` is refused, not fatal.
#[test]
fn exit_codes_follow_the_protocol() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    let (code, stderr) =
        run_raw(temp.path(), format!("Content-Length: {}\r\n\r\n{exit}", exit.len()).as_bytes());
    assert_eq!(code, Some(1), "exit before initialize: {stderr}");

    let mut client = Client::start(temp.path(), &repo);
    let reply = client.request("shutdown", Value::Null);
    assert!(reply.get("error").is_none(), "{reply}");
    let reply = client
        .request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&repo.join("AGENTS.md")) } }));
    assert_eq!(reply["error"]["code"], json!(-32600), "InvalidRequest: {reply}");
    client.notify("exit", Value::Null);
    assert_eq!(client.exit_code(), Some(0), "exit after shutdown and a refused request");

    let mut client = Client::start(temp.path(), &repo);
    let reply = client.request("shutdown", Value::Null);
    assert!(reply.get("error").is_none(), "{reply}");
    client.close_stdin();
    assert_eq!(client.exit_code(), Some(0), "stdin closed after shutdown");

    // The editor stops reading (its end of stdout closed): the server's writes fail with
    // a broken pipe; that is the editor gone, not a server failure.
    let mut child = ctxgraph(temp.path())
        .arg("lsp")
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let folder = json!([{ "uri": uri(&repo), "name": "repo" }]);
    let messages = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {}, "workspaceFolders": folder } }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }),
    ];
    for message in messages {
        let body = message.to_string();
        let _ = write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len());
    }
    drop(stdin);
    let pid = child.id();
    let (sender, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let Ok(output) = finished.recv_timeout(WAIT) else {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("ctxgraph lsp did not stop on a broken pipe");
    };
    let output = output.expect("output");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}

fn opencode_lens(client: &mut Client, source: &Path) -> String {
    let reply = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(source) } }));
    let lenses = reply["result"].as_array().unwrap_or_else(|| panic!("lenses: {reply}"));
    let titles: Vec<&str> = lenses.iter().filter_map(|l| l["command"]["title"].as_str()).collect();
    let found = titles.iter().find(|t| t.contains("packages/api/AGENTS.md"));
    found.map_or_else(|| panic!("{titles:#?}"), |t| (*t).to_owned())
}

#[test]
fn changes_to_documents_never_opened_are_ignored_and_an_open_one_is_capped() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let mut client = Client::start(temp.path(), &repo);
    let source = repo.join("packages/api/src/users.ts");
    let rule = repo.join("packages/api/AGENTS.md");
    let before = opencode_lens(&mut client, &source);
    client.change(&rule, 2, &"- a rule nobody opened\n".repeat(20_000));
    assert_eq!(opencode_lens(&mut client, &source), before, "a change to a document never opened");

    // Opened, then grown past the limit: one diagnostic says so, and it is not analysed.
    client.open(&rule, "# API\n");
    client.diagnostics(&rule, 1);
    client.change(&rule, 2, &format!("{SECRET_LINE}{}", "x".repeat(2 << 20)));
    let found = client.diagnostics(&rule, 2);
    assert_eq!(found.len(), 1, "{found:?}");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("over the limit of 1 MiB for an open document"), "{message}");
    let reply = client.request("textDocument/hover", hover_at(&uri(&rule)));
    assert!(error_message(&reply).contains("over the limit"), "{reply}");
    // Back under it: analysed again (the key is found), and closed: the disk's text.
    client.change(&rule, 3, SECRET_LINE);
    assert_eq!(
        client.diagnostics(&rule, 3).iter().filter_map(|d| d["code"].as_str()).collect::<Vec<_>>(),
        ["CG005"]
    );
    assert!(client.proc_status("VmHWM") < 200_000, "{} kB", client.proc_status("VmHWM"));
    assert_eq!(client.finish(), Some(0));
}

const SECRET_LINE: &str = "- key AKIAQQQQQQQQQQQQQQQQ\n";

/// Documents outside the workspace and a burst of requests: the work goes to one bounded
/// pool, so the thread count stays small however much is asked at once.
#[test]
fn a_burst_of_work_runs_on_a_bounded_pool_of_threads() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let outside = temp.path().join("elsewhere");
    let mut client = Client::start(temp.path(), &repo);
    for n in 0..40 {
        let dir = outside.join(format!("d{n}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join("AGENTS.md");
        std::fs::write(&file, "# Rules\n").expect("write");
        client.open(&file, "# Rules\n");
        client.change(&file, 2, "# Rules, typed\n");
    }
    let source = uri(&repo.join("packages/api/src/users.ts"));
    let ids: Vec<i64> = (0..40)
        .map(|_| client.send_request("textDocument/codeLens", json!({ "textDocument": { "uri": source } })))
        .collect();
    let mut most = client.proc_status("Threads");
    for id in ids {
        let reply = client.response(id);
        assert!(reply["result"].is_array(), "{reply}");
        most = most.max(client.proc_status("Threads"));
    }
    assert!(most <= 8, "{most} threads");
    assert_eq!(client.finish(), Some(0));
}

/// What the editor shows is placed and worded for a person: an `@import` Gemini CLI cannot
/// inline is underlined where it is written, a URL's state is said in words, and the
/// agents' verdicts are grouped into a few lenses instead of one per agent.
#[test]
fn import_findings_sit_on_their_import_and_lenses_and_hovers_speak_in_words() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = repository(temp.path());
    let gemini = repo.join("GEMINI.md");
    let text = "# Gemini\n\nSee @missing.md for more.\n";
    std::fs::write(&gemini, text).expect("write");
    std::fs::write(
        repo.join("opencode.json"),
        "{\n  \"instructions\": [\"http://127.0.0.1:9/rules.md\"]\n}\n",
    )
    .expect("write");
    let mut client = Client::start(temp.path(), &repo);
    client.open(&gemini, text);
    let found = client.diagnostics(&gemini, 1);
    let cg015: Vec<&Value> = found.iter().filter(|d| d["code"] == "CG015").collect();
    assert_eq!(cg015.len(), 1, "{found:#?}");
    assert_eq!(
        cg015[0]["range"],
        json!({ "start": { "line": 2, "character": 4 }, "end": { "line": 2, "character": 15 } })
    );

    let at = json!({ "textDocument": { "uri": uri(&gemini) }, "position": { "line": 2, "character": 6 } });
    let hover = client.request("textDocument/hover", at);
    let words = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(words.contains("gemini: not sent: `@missing.md` in ") && !words.contains("Failed {"), "{words}");
    let config = repo.join("opencode.json");
    let at = json!({ "textDocument": { "uri": uri(&config) }, "position": { "line": 1, "character": 24 } });
    let hover = client.request("textDocument/hover", at);
    let words = hover["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("{hover}"));
    assert!(words.contains("a URL, from ") && words.contains("not fetched"), "{words}");
    assert!(!words.contains("NotFetched") && !words.contains("Offline"), "{words}");

    let lenses = |client: &mut Client, path: &Path| -> Vec<String> {
        lens_titles(&client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(path) } })))
    };
    let source = lenses(&mut client, &repo.join("packages/api/src/users.ts"));
    assert_eq!(source.len(), 1, "{source:#?}");
    assert!(source[0].starts_with("on read, attaches packages/api/AGENTS.md ("), "{source:#?}");
    let rule = lenses(&mut client, &gemini);
    assert_eq!(rule.len(), 3, "{rule:#?}");
    assert!(rule[1].contains("gemini"), "{rule:#?}");
    assert_eq!(client.finish(), Some(0));
}

/// A request still computing when `shutdown` arrives is answered all the same: the
/// protocol refuses only the requests that come after it.
#[test]
fn a_request_in_flight_at_shutdown_is_still_answered() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = slow_repository(temp.path());
    let mut client = Client::start(temp.path(), &repo);
    let config = uri(&repo.join("opencode.json"));
    let id = client.send_request("textDocument/documentLink", json!({ "textDocument": { "uri": config } }));
    let reply = client.request("shutdown", Value::Null);
    assert!(reply.get("error").is_none(), "{reply}");
    let reply = client.response(id);
    assert!(reply["result"].is_array(), "{reply}");
    client.notify("exit", Value::Null);
    assert_eq!(client.exit_code(), Some(0));
}
