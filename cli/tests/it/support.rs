//! What the end-to-end modules share: the `ctxgraph` binary, isolated in a temporary tree.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{ChildStdout, Command, Output};
use std::sync::mpsc::{self, Receiver};

use ctxgraph_test_support::tree::{DiskWriter, git_worktree};

/// `ctxgraph`, seeing nothing of the machine that runs the tests: an empty environment
/// but `HOME` = `root/home`, `XDG_CONFIG_HOME` = `root/config` and opencode's managed
/// config directory = `root/managed` (so not even `/etc/opencode` leaks in). The caller
/// adds arguments, the working directory and variables of its own.
pub fn ctxgraph(root: &Path) -> Command {
    isolated(env!("CARGO_BIN_EXE_ctxgraph"), root)
}

/// `program` in the same isolation as [`ctxgraph`], for a tool that runs ctxgraph itself (a
/// script, git with a hook): PATH is the ctxgraph under test, then `/usr/bin:/bin`.
pub fn with_ctxgraph_on_path(program: impl AsRef<std::ffi::OsStr>, root: &Path) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_ctxgraph")).parent().expect("the binary's directory");
    let mut command = isolated(program, root);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    command
}

fn isolated(program: impl AsRef<std::ffi::OsStr>, root: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_clear()
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("OPENCODE_TEST_MANAGED_CONFIG_DIR", root.join("managed"));
    command
}

/// Makes `repo` a git worktree on disk (see [`git_worktree`]).
pub fn git_repo(repo: &Path) {
    git_worktree(repo, &mut DiskWriter);
}

/// A finished `ctxgraph` run, its output as printed and with the temp root shown as `[TMP]`
/// (so snapshots do not depend on where the test ran).
pub struct Run {
    pub code: i32,
    /// Exactly what was printed.
    pub raw_stdout: Vec<u8>,
    /// Printed text with `root` shown as `[TMP]`.
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn scrubbed(root: &Path, output: Output) -> Self {
        let scrub = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&*root.to_string_lossy(), "[TMP]");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: scrub(&output.stdout),
            stderr: scrub(&output.stderr),
            raw_stdout: output.stdout,
        }
    }
}

/// A server's stdout as a channel of lines, read on a thread of its own so that a test can
/// wait for a line with a bound (`recv_timeout`) instead of blocking on a hung server.
pub fn stdout_lines(stdout: ChildStdout) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The fenced code block of README.md whose first line is `first_line`, without that line's
/// fence: the snippets the integration tests run, so README and tests cannot drift.
pub fn readme_snippet(first_line: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
        .expect("README.md");
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            let block: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
            if block.first().is_some_and(|first| first.trim() == first_line) {
                return block.join("\n") + "\n";
            }
        }
    }
    panic!("README.md has no code block starting with {first_line:?}")
}

/// A YAML document as JSON (mappings with string keys, sequences, scalars), for tests that
/// read action.yml, .pre-commit-hooks.yaml or a README snippet as their tools would.
pub fn yaml(text: &str) -> serde_json::Value {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    fn convert(node: &Yaml) -> serde_json::Value {
        match node {
            Yaml::Mapping(map) => serde_json::Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let serde_json::Value::String(key) = convert(k) else {
                            panic!("a non-string key {k:?}")
                        };
                        (key, convert(v))
                    })
                    .collect(),
            ),
            Yaml::Sequence(items) => serde_json::Value::Array(items.iter().map(convert).collect()),
            Yaml::Value(Scalar::String(s)) => serde_json::Value::String(s.to_string()),
            Yaml::Value(Scalar::Boolean(b)) => serde_json::Value::Bool(*b),
            Yaml::Value(Scalar::Integer(i)) => serde_json::Value::from(*i),
            Yaml::Value(Scalar::Null) => serde_json::Value::Null,
            other => panic!("unexpected YAML node {other:?}"),
        }
    }
    let docs = Yaml::load_from_str(text).unwrap_or_else(|err| panic!("not YAML: {err}\n{text}"));
    convert(docs.first().expect("one YAML document"))
}
