//! #13.1: a `build` sent right after a write reflects it, every time, through the JSON-RPC
//! server as a host sees it: the server's sync point before each request (the watcher's
//! queue drained, or a cookie round trip on the portable backend) is what makes the warm
//! build fresh. Both backends; the engine's own watcher tests (engine/tests/it/watcher.rs)
//! cover the watcher below the server.

#![allow(clippy::print_stderr, reason = "the run reports its count and timing for by-hand runs")]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use ctxgraph_engine::watch::{BackendKind, Watcher};
use ctxgraph_engine::{Engine, HostEnv, OsSystem};
use ctxgraph_server::rpc::Server;

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

fn a_build_right_after_a_write_is_never_stale(backend: BackendKind) {
    let tries: usize =
        std::env::var("CTXGRAPH_FRESHNESS_TRIES").ok().and_then(|n| n.parse().ok()).unwrap_or(200);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    // `repo/` is a git worktree with `instructions: ["rules/**/*.md"]`; the working
    // directory is `repo/pkg/api`, below the nested `AGENTS.md` that comes and goes.
    write(&root.join("repo/.git/HEAD"), "ref: refs/heads/main\n");
    write(&root.join("repo/.git/objects/.keep"), "");
    write(&root.join("repo/.git/refs/.keep"), "");
    write(&root.join("repo/opencode.json"), r#"{ "instructions": ["rules/**/*.md"] }"#);
    write(&root.join("repo/rules/base.md"), "base");
    let cwd = root.join("repo/pkg/api");
    std::fs::create_dir_all(&cwd).expect("cwd");
    std::fs::create_dir_all(root.join("home/.config/opencode")).expect("home");

    let engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed(root.join("home")));
    let watcher = Watcher::with_backend(backend).expect("watcher");
    let mut server = Server::new(engine, Some(watcher));
    let request =
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "build", "params": { "cwd": cwd } })
            .to_string();
    let mut stale = Vec::new();
    let started = Instant::now();
    for n in 0..tries {
        // Alternate content edits with a rule file appearing and disappearing.
        let marker = format!("revision {n} end");
        write(&root.join("repo/AGENTS.md"), &marker);
        let nested = root.join("repo/pkg/AGENTS.md");
        if n % 2 == 0 {
            write(&nested, "nested rules");
        } else {
            std::fs::remove_file(&nested).expect("rm");
        }
        let reply = server.handle_line(&request).line.expect("a reply");
        let reply: serde_json::Value = serde_json::from_str(&reply).expect("json");
        let text = reply["result"]["text"].as_str().unwrap_or_default();
        if !text.contains(&marker) || text.contains("nested rules") != (n % 2 == 0) {
            stale.push(n);
        }
    }
    eprintln!(
        "freshness: {tries} write-then-build round trips in {:?}, {} stale",
        started.elapsed(),
        stale.len()
    );
    assert!(stale.is_empty(), "stale replies at tries {stale:?}");
}

#[test]
fn on_inotify_a_build_right_after_a_write_is_never_stale() {
    a_build_right_after_a_write_is_never_stale(BackendKind::Inotify);
}

#[test]
fn on_notify_a_build_right_after_a_write_is_never_stale() {
    a_build_right_after_a_write_is_never_stale(BackendKind::Notify);
}
