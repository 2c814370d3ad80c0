//! `ctxgraph lsp` under 1,000 random messages from a seeded generator (proptest's) (the same messages on
//! every run; a failure names the seed and the message): random methods, parameters of
//! the wrong shape, URIs that escape the workspace or name a FIFO or a device, documents
//! past the size limit, cancellations of anything; then broken framing (bad headers, huge
//! `Content-Length`, bodies that are not JSON-RPC) in sessions of their own, since the
//! server stops on those. Checked: no abort, every request answered (a result or an
//! error), the exit codes, and the server's peak memory (`VmHWM`) and thread count at the
//! end, read from `/proc`. Bounded in count; every wait is bounded.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::{Value, json};

use crate::lsp::{Client, repository, uri};

/// Messages in the long session.
const SESSION_MESSAGES: usize = 850;
/// Sessions that end on broken framing, each with a few good messages first.
const BROKEN_SESSIONS: usize = 25;
/// The peak memory allowed, in kB.
const MAX_HWM_KB: u64 = 200 * 1024;

/// proptest's `ChaCha` generator from a fixed seed, so a failure reproduces (the serve and
/// MCP line tests use it too).
pub(crate) struct Random(TestRng);

impl Random {
    pub(crate) fn seeded(seed: u64) -> Random {
        let bytes: Vec<u8> = seed.to_le_bytes().iter().copied().cycle().take(32).collect();
        Random(TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const SEED: u64 = 0x00C7_0A7F;

/// A URI a client might send: inside the workspace, escaping it, or not a file at all.
fn random_uri(random: &mut Random, repo: &Path) -> String {
    let inside = [
        "AGENTS.md",
        "opencode.json",
        "packages/api/AGENTS.md",
        "packages/api/src/users.ts",
        "fifo.md",
        "zero.md",
        "new/file.md",
        "docs/agents/style.md",
    ];
    let base = uri(repo);
    match random.below(10) {
        0..=4 => format!("{base}/{}", random.pick(&inside)),
        5 => format!("{base}/../outside/AGENTS.md"),
        6 => format!("{base}/{}etc/hostname", "../".repeat(1 + random.below(8))),
        7 => format!("{base}/%2e%2e/%2E%2E/proc/self/status"),
        8 => (*random.pick(&[
            "untitled:Untitled-1",
            "http://127.0.0.1:9/x",
            "file:relative",
            "file://host/x",
            "file:///",
            "file:///%FF%00x",
        ]))
        .to_owned(),
        _ => format!("{base}/{}", "a/".repeat(random.below(300))),
    }
}

/// Text for a document: mostly small, with a key now and then; sometimes over the limit.
fn random_text(random: &mut Random) -> String {
    match random.below(40) {
        0 => "x".repeat((1 << 20) + 1 + random.below(1 << 19)),
        1..=5 => "- key AKIAQQQQQQQQQQQQQQQQ\n@missing.md\n".to_owned(),
        6..=8 => "{\n  \"instructions\": [\"docs/agents/*.md\", \"../../*\"]\n}\n".to_owned(),
        _ => {
            let length = random.below(200);
            let alphabet: Vec<char> = " \n#-@*/\"{}[]abcé😀".chars().collect();
            (0..length).map(|_| *random.pick(&alphabet)).collect()
        }
    }
}

/// Parameters of the right shape or of any other.
fn random_params(random: &mut Random, repo: &Path) -> Value {
    let document = json!({ "uri": random_uri(random, repo) });
    let position = json!({ "line": random.below(5), "character": random.below(50) });
    match random.below(8) {
        0 => Value::Null,
        1 => json!([1, "two", null]),
        2 => json!({ "textDocument": 42 }),
        3 => {
            json!({ "textDocument": { "uri": random_uri(random, repo) }, "position": { "line": -1, "character": u64::MAX } })
        }
        _ => json!({ "textDocument": document, "position": position }),
    }
}

/// One well-framed message; the id when it is a request.
fn random_message(random: &mut Random, repo: &Path, id: i64) -> (Value, Option<i64>) {
    let answered = [
        "textDocument/codeLens",
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/documentLink",
    ];
    let others = ["textDocument/completion", "initialize", "workspace/executeCommand", "$/unknown"];
    match random.below(10) {
        0..=4 => {
            let method = if random.below(5) == 0 { random.pick(&others) } else { random.pick(&answered) };
            let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": random_params(random, repo) });
            (request, Some(id))
        }
        5..=7 => {
            let document = json!({ "uri": random_uri(random, repo), "languageId": "markdown", "version": random.below(100), "text": random_text(random) });
            let params = match random.below(4) {
                0 => json!({ "textDocument": document }),
                1 => {
                    json!({ "textDocument": { "uri": document["uri"], "version": random.below(100) }, "contentChanges": [{ "text": random_text(random) }] })
                }
                2 => json!({ "textDocument": { "uri": document["uri"] } }),
                _ => json!({ "changes": [{ "uri": document["uri"], "type": 1 + random.below(3) }] }),
            };
            let method = random.pick(&[
                "textDocument/didOpen",
                "textDocument/didChange",
                "textDocument/didClose",
                "textDocument/didSave",
                "workspace/didChangeWatchedFiles",
            ]);
            (json!({ "jsonrpc": "2.0", "method": method, "params": params }), None)
        }
        8 => {
            let target = i64::try_from(random.below(usize::try_from(id).unwrap_or(1).max(1))).unwrap_or(0);
            (json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": target } }), None)
        }
        _ => (json!({ "jsonrpc": "2.0", "id": format!("client-{id}"), "result": random_text(random) }), None),
    }
}

fn fixture(root: &Path) -> PathBuf {
    let repo = repository(root);
    let fifo = std::process::Command::new("mkfifo").arg(repo.join("fifo.md")).status().expect("mkfifo");
    assert!(fifo.success());
    std::os::unix::fs::symlink("/dev/zero", repo.join("zero.md")).expect("symlink");
    std::fs::create_dir_all(root.join("outside")).expect("mkdir");
    std::fs::write(root.join("outside/AGENTS.md"), "# Outside\n").expect("write");
    repo
}

#[test]
fn a_thousand_random_messages_neither_crash_nor_exhaust_the_server() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = fixture(temp.path());
    let mut random = Random::seeded(SEED);
    let mut client = Client::start(temp.path(), &repo);
    let mut asked = Vec::new();
    for n in 0..SESSION_MESSAGES {
        let id = client.next_id();
        let (message, request) = random_message(&mut random, &repo, id);
        let body = message.to_string();
        client.write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap_or_else(
            |err| panic!("seed {SEED:#x}, message {n}: the server stopped reading ({err}): {body:.300}"),
        );
        asked.extend(request);
    }
    let mut answers = std::collections::BTreeMap::<String, usize>::new();
    for id in asked {
        let reply = client.response(id);
        assert!(reply.get("result").is_some() || reply["error"]["code"].is_i64(), "seed {SEED:#x}: {reply}");
        let kind =
            reply["error"]["code"].as_i64().map_or_else(|| "result".to_owned(), |code| code.to_string());
        *answers.entry(kind).or_default() += 1;
    }
    let hwm = client.proc_status("VmHWM");
    let threads = client.proc_status("Threads");
    // Not all refused: the server computed answers among the noise.
    assert!(answers.get("result").is_some_and(|&n| n > 0), "seed {SEED:#x}: {answers:?}");
    assert!(hwm < MAX_HWM_KB, "seed {SEED:#x}: peak memory {hwm} kB");
    assert!(threads <= 8, "seed {SEED:#x}: {threads} threads");
    assert_eq!(client.finish(), Some(0), "seed {SEED:#x}");
}

/// Framing the server cannot read past: it says what is wrong and exits 2, after answering
/// what came before.
fn broken_frame(random: &mut Random) -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","id":99,"method":"textDocument/hover"}"#;
    match random.below(9) {
        0 => format!("Content-Length: {}\r\n\r\n{{", 1 + random.next() % 1_000_000_000_000_000).into_bytes(),
        1 => b"Content-Length: 3000000000\r\n\r\n".to_vec(),
        2 => b"Content-Length: nope\r\n\r\n{}".to_vec(),
        3 => format!("Content-Type: x\r\n\r\n{body}").into_bytes(),
        4 => format!("Content-Length: {}\n\n{body}", body.len()).into_bytes(),
        5 => b"Content-Length: 7\r\n\r\n{\"a\":1}".to_vec(),
        6 => b"Content-Length: 9\r\n\r\nnot json!".to_vec(),
        7 => format!("X-{}: y\r\n", "h".repeat(5000)).into_bytes(),
        _ => format!("Content-Length: {}\r\n\r\n{}", body.len() + 10, body).into_bytes(),
    }
}

#[test]
fn broken_framing_is_refused_with_exit_2_after_every_earlier_request_is_answered() {
    let temp = tempfile::tempdir().expect("tempdir");
    let repo = fixture(temp.path());
    let mut random = Random::seeded(SEED ^ 0xF00D);
    for session in 0..BROKEN_SESSIONS {
        let mut client = Client::start_with_stderr(temp.path(), &repo, Stdio::piped());
        let mut stderr = client.take_stderr().expect("stderr");
        let collected = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        for _ in 0..3 {
            let id = client.next_id();
            let (message, request) = random_message(&mut random, &repo, id);
            let body = message.to_string();
            client
                .write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
                .expect("write");
            if let Some(id) = request {
                let reply = client.response(id);
                assert!(reply.get("result").is_some() || reply["error"]["code"].is_i64(), "{reply}");
            }
        }
        let frame = broken_frame(&mut random);
        // The server may stop reading before the end of a long frame.
        let _ = client.write_raw(&frame);
        client.close_stdin();
        let code = client.exit_code();
        let stderr = collected.join().expect("stderr");
        let shown = String::from_utf8_lossy(&frame[..frame.len().min(60)]).into_owned();
        assert_eq!(code, Some(2), "session {session}, {shown:?}: {stderr}");
        assert!(stderr.contains("not a Language Server Protocol message"), "{shown:?}: {stderr}");
        assert!(stderr.len() < 2_000, "{shown:?}: {stderr}");
    }
}
