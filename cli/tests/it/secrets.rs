//! No output of any command contains a value substituted from `{env:}` or `{file:}`.
//!
//! Generated secrets go into configs the way real ones do (a header, an `{env:}` token in
//! an `instructions` URL, a `{file:}` key, a `{file:}` path) in a valid config and in
//! configs broken in each way that makes ctxgraph quote the config back (JSONC syntax,
//! schema, a missing `{file:}`, an entry with too many brace expansions). Every command
//! runs in every format; none may print a secret. The prompt itself is the one place a
//! substituted URL would belong (opencode sends it), so the URL is never fetched: it
//! points at a closed loopback port.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use proptest::prelude::*;

use crate::support::{ctxgraph, git_repo};

/// The secrets of one case, each from a different channel.
struct Secrets {
    /// `{env:SECRET_TOKEN}`, in a URL and in `username`.
    token: String,
    /// `{env:API_KEY}`, in a header.
    api_key: String,
    /// The content of `keys/api.txt`, read through `{file:}`.
    file: String,
}

impl Secrets {
    fn all(&self) -> [&str; 3] {
        [&self.token, &self.api_key, &self.file]
    }
}

/// A config for each way ctxgraph can quote a config back.
fn worlds(closed_port: u16) -> Vec<(&'static str, String)> {
    let valid = serde_json::json!({
        "instructions": [
            "AGENTS.md",
            format!("http://127.0.0.1:{closed_port}/rules.md?token={{env:SECRET_TOKEN}}"),
        ],
        "username": "{env:SECRET_TOKEN}",
        "provider": {"p": {"options": {
            "headers": {"Authorization": "Bearer {env:API_KEY}"},
            "apiKey": "{file:keys/api.txt}",
        }}},
    });
    vec![
        ("valid", serde_json::to_string_pretty(&valid).expect("json")),
        // Every secret on one minified line, then a syntax error on it.
        (
            "jsonc",
            r#"{"username": "{env:SECRET_TOKEN}", "k": "{file:keys/api.txt}", "h": "{env:API_KEY}" "x": 1}"#
                .to_owned(),
        ),
        // A schema error whose value holds the secrets.
        (
            "schema",
            r#"{"instructions": [{"headers": {"Authorization": "Bearer {env:API_KEY} {file:keys/api.txt}"}}], "share": "{env:SECRET_TOKEN}"}"#
                .to_owned(),
        ),
        // A `{file:}` path built from a secret, which does not exist.
        ("file-path", r#"{"model": "{file:{env:SECRET_TOKEN}/key.txt}"}"#.to_owned()),
        // An entry past the brace-expansion bound, with a secret in it.
        ("braces", format!(r#"{{"instructions": ["{{env:SECRET_TOKEN}}/{}.md"]}}"#, "{a,b}".repeat(11))),
    ]
}

/// Every command, in every output format.
const COMMANDS: &[&[&str]] = &[
    &["build"],
    &["build", "--format", "json"],
    &["build", "--section", "instructions", "--strict"],
    &["config"],
    &["config", "--format", "json"],
    &["config", "--explain", "instructions"],
    &["config", "--explain", "provider.p.options.headers.Authorization"],
    &["explain"],
    &["explain", "--format", "json"],
    &["explain", "--format", "dot"],
    &["explain", "AGENTS.md"],
    &["lint"],
    &["lint", "--format", "json"],
    &["lint", "--format", "sarif"],
    &["nearby", "src/main.ts"],
];

struct Output {
    args: String,
    code: Option<i32>,
    text: String,
}

/// One command started; [`Running::output`] waits for it.
struct Running {
    args: String,
    child: std::process::Child,
}

fn start(bin_args: &[&str], root: &Path, secrets: &Secrets, stdin: Option<&str>) -> Running {
    let mut child = ctxgraph(root)
        .args(bin_args)
        .current_dir(root.join("repo"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("SECRET_TOKEN", &secrets.token)
        .env("API_KEY", &secrets.api_key)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ctxgraph");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("stdin");
    }
    Running { args: bin_args.join(" "), child }
}

impl Running {
    fn output(self) -> Output {
        let output = self.child.wait_with_output().expect("wait");
        Output {
            args: self.args,
            code: output.status.code(),
            text: format!(
                "--- stdout\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }
}

fn lay_out(root: &Path, config: &str, secrets: &Secrets) {
    let write = |relative: &str, content: &str| {
        let path: PathBuf = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, content).expect("write");
    };
    git_repo(&root.join("repo"));
    write("repo/AGENTS.md", "# Rules\n");
    write("repo/src/main.ts", "export {};\n");
    write("repo/keys/api.txt", &format!("{}\n", secrets.file));
    write("repo/opencode.json", config);
    std::fs::create_dir_all(root.join("home")).expect("home");
}

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.local_addr().expect("addr").port()
}

fn check_no_leak(secrets: &Secrets) {
    let port = closed_port();
    for (world, config) in worlds(port) {
        check_world(world, &config, secrets);
    }
}

fn check_world(world: &str, config: &str, secrets: &Secrets) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    lay_out(&root, config, secrets);
    let cwd = root.join("repo").display().to_string();
    let serve_input = format!(
        "{}\n{}\n",
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "build", "params": {"cwd": cwd}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    );
    // A world's commands all at once: in the valid world each one that fetches the URL waits
    // out R5's two retries of the closed port (0.6–0.9 s), and one after the other that
    // sleeping made this the CLI suite's longest test (11 s for 2 s of CPU).
    let mut running: Vec<Running> = COMMANDS.iter().map(|args| start(args, &root, secrets, None)).collect();
    running.push(start(&["serve", "--stdio", "--no-watch"], &root, secrets, Some(&serve_input)));
    let outputs: Vec<Output> = running.into_iter().map(Running::output).collect();
    for output in &outputs {
        for secret in secrets.all() {
            assert!(
                !output.text.contains(secret),
                "world {world}: `ctxgraph {}` (exit {:?}) printed the secret {secret}:\n{}",
                output.args,
                output.code,
                output.text
            );
        }
    }
    // The worlds do what they are for: the broken ones are refused, the valid one
    // names the URL as written.
    let build = &outputs[0];
    if world == "valid" {
        assert!(build.text.contains("?token={env:SECRET_TOKEN}"), "{}", build.text);
    } else {
        assert_eq!(build.code, Some(2), "world {world}: {}", build.text);
    }
}

proptest! {
    // Each case runs every command on five trees (80 processes), and one case covers every channel: the secrets are random hex, which takes no
    // path of its own through the substitution or the redaction, so a second case only
    // repeated the first.
    #![proptest_config(ProptestConfig {
        cases: 1,
        // Random hex shrinks to nothing useful; the message names the command and the secret.
        max_shrink_iters: 0,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_output_contains_a_substituted_secret(
        token in any::<[u8; 12]>(),
        api_key in any::<[u8; 12]>(),
        file in any::<[u8; 12]>(),
    ) {
        let hex = |bytes: [u8; 12]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().concat();
        check_no_leak(&Secrets {
            token: format!("tok{}", hex(token)),
            api_key: format!("key{}", hex(api_key)),
            file: format!("file{}", hex(file)),
        });
    }
}
