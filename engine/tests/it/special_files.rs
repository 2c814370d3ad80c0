//! #14.5: a FIFO (or socket, or device) where a rule file, config or `{file:}` target is
//! expected must never block a build: nothing but a regular file is opened for reading,
//! and the reason names what the path is instead. Each build runs on a thread with a
//! bounded wait, so a regression fails instead of hanging the suite.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use ctxgraph_engine::HostEnv;
use ctxgraph_engine::{Engine, OsSystem, read_regular_file};

const BOUND: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let status = Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A repository at `<tmp>/repo` (the cwd) with `files`, and `fifo` made a named pipe.
fn repo(files: &[(&str, &str)], fifo: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    for (relative, content) in files {
        let path = root.join("repo").join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }
    std::fs::create_dir_all(root.join("repo/.git/objects")).expect("git");
    std::fs::create_dir_all(root.join("repo/.git/refs")).expect("git");
    std::fs::write(root.join("repo/.git/HEAD"), "ref: refs/heads/main\n").expect("git");
    mkfifo(&root.join("repo").join(fifo));
    (dir, root)
}

/// Explanation of the build for `<root>/repo` (or the error), computed on a thread and
/// waited for at most [`BOUND`].
fn explain_within_bound(root: &Path) -> Result<String, String> {
    let root = root.to_path_buf();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed(root.join("home")));
        let result = engine
            .open(&root.join("repo"))
            .and_then(|ws| {
                engine.system_prompt(ws, None)?;
                engine.explain(ws)
            })
            .map(|explanation| format!("{explanation:#?}"))
            .map_err(|err| err.to_string());
        let _ = tx.send(result);
    });
    rx.recv_timeout(BOUND).expect("the build finished instead of blocking on the FIFO")
}

#[test]
fn a_fifo_is_refused_without_being_opened_for_a_blocking_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_regular_file(&fifo).map_err(|err| err.to_string()));
    });
    let result = rx.recv_timeout(BOUND).expect("the read returned instead of blocking");
    assert_eq!(result, Err("is a FIFO (named pipe), not a regular file".to_owned()));
}

#[test]
fn a_fifo_as_agents_md_is_unreadable_and_says_so() {
    let (_dir, root) = repo(&[("pkg/AGENTS.md", "other")], "AGENTS.md");
    let explanation = explain_within_bound(&root).expect("the build succeeds without that file");
    assert!(explanation.contains("is a FIFO (named pipe), not a regular file"), "{explanation}");
}

#[test]
fn a_fifo_as_opencode_json_fails_the_build_naming_it() {
    let (_dir, root) = repo(&[("AGENTS.md", "rules")], "opencode.json");
    let result = explain_within_bound(&root);
    let text = match result {
        Ok(explanation) => explanation,
        Err(error) => error,
    };
    assert!(text.contains("FIFO"), "{text}");
}

#[test]
fn a_fifo_as_a_file_substitution_target_fails_naming_it() {
    let (_dir, root) =
        repo(&[("AGENTS.md", "rules"), ("opencode.json", r#"{ "model": "{file:./secret}" }"#)], "secret");
    let text = match explain_within_bound(&root) {
        Ok(explanation) => explanation,
        Err(error) => error,
    };
    assert!(text.contains("FIFO"), "{text}");
}
