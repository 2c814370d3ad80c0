//! No output of any command contains a value substituted from `{env:}` or `{file:}`, a
//! credential written into the config, or a secret in a rule file, except the prompt text
//! an agent sends (issue #43: one redaction pass for every output).
//!
//! Generated secrets go into configs the way real ones do (a header, an `{env:}` token in
//! an `instructions` URL, a `{file:}` key, a `{file:}` path; in clear: an `apiKey`, an MCP
//! server's `GITHUB_TOKEN`, a header, a `?token=` in a URL) in a valid config and in
//! configs broken in each way that makes ctxgraph quote the config back (JSONC syntax,
//! schema, a missing `{file:}`, an entry with too many brace expansions); and into rule
//! files (an AWS key, a `ghp_` token, a PEM body, a Stripe key in a `.env` that CLAUDE.md
//! imports). Every command runs in every format, the report and `serve` too; none may
//! print a secret outside the prompt text. The valid world's URLs are served by a server
//! on 127.0.0.1 started here (so their blocks, ids and sources exist), and one points at a
//! closed loopback port (so a failure names it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use proptest::prelude::*;

use ctxgraph_test_support::http::{Reply, Server};

use crate::support::{ctxgraph, git_repo};

/// The secrets of one case, each from a different channel.
struct Secrets {
    /// `{env:SECRET_TOKEN}`, in URLs and in `username`.
    token: String,
    /// `{env:API_KEY}`, in a header.
    api_key: String,
    /// The content of `keys/api.txt`, read through `{file:}`.
    file: String,
    /// Written into the config in clear: a provider's `apiKey`, an MCP server's
    /// `GITHUB_TOKEN`, a header, a `?token=` in an `instructions` URL.
    literal: String,
    /// Key-shaped secrets in rule files: an AWS key ID in AGENTS.md, a `ghp_` token in
    /// CLAUDE.md, a PEM body in GEMINI.md, a Stripe key in the `.env` CLAUDE.md imports.
    aws: String,
    github: String,
    pem_body: String,
    stripe: String,
}

impl Secrets {
    fn all(&self) -> [&str; 8] {
        [
            &self.token,
            &self.api_key,
            &self.file,
            &self.literal,
            &self.aws,
            &self.github,
            &self.pem_body,
            &self.stripe,
        ]
    }
}

/// A config for each way ctxgraph can quote a config back.
fn worlds(closed_port: u16, served: &Server, secrets: &Secrets) -> Vec<(&'static str, String)> {
    let literal = &secrets.literal;
    let valid = serde_json::json!({
        "instructions": [
            "AGENTS.md",
            format!("http://127.0.0.1:{closed_port}/rules.md?token={{env:SECRET_TOKEN}}"),
            format!("{}?token={{env:SECRET_TOKEN}}", served.url("/env.md")),
            format!("{}?a=1&token={literal}", served.url("/literal.md")),
        ],
        "username": "{env:SECRET_TOKEN}",
        "provider": {"p": {"options": {
            "headers": {"Authorization": "Bearer {env:API_KEY}", "X-Team": literal},
            "apiKey": "{file:keys/api.txt}",
        }}, "q": {"options": {"apiKey": literal}}},
        "mcp": {"gh": {
            "type": "local",
            "command": ["ctxgraph-test-no-such-mcp-server"],
            "environment": {"GITHUB_TOKEN": literal},
        }},
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
    &["lint", "--agent", "all"],
    &["lint", "--agent", "all", "--format", "sarif"],
    &["config", "--explain", "mcp"],
    &["config", "--explain", "provider.q.options.apiKey"],
    &["report", "-o", "../report.html"],
];

/// Whether a command's stdout is the prompt text an agent sends: the one output that
/// shows secrets, since the agent sends them (`build` promises exactly that text). Its JSON
/// holds that text in its blocks' `text` fields, and no secret anywhere else.
fn prints_prompt(args: &str) -> bool {
    args.starts_with("build") && !args.contains("--format json")
}

struct Output {
    args: String,
    code: Option<i32>,
    /// What may hold no secret: stderr, and stdout unless it is prompt text.
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
    fn output(self, root: &Path) -> Output {
        let output = self.child.wait_with_output().expect("wait");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stdout = if prints_prompt(&self.args) {
            "(prompt text)".to_owned()
        } else if self.args.starts_with("serve") {
            without_prompt_text(&stdout)
        } else if self.args.starts_with("build") {
            serde_json::from_str::<serde_json::Value>(&stdout).map_or_else(
                |_| stdout.clone().into_owned(),
                |mut doc| {
                    remove_texts(&mut doc);
                    doc.to_string()
                },
            )
        } else if self.args.starts_with("report") {
            std::fs::read_to_string(root.join("report.html")).unwrap_or_default()
        } else {
            stdout.into_owned()
        };
        Output {
            code: output.status.code(),
            text: format!("--- stdout\n{stdout}\n--- stderr\n{}", String::from_utf8_lossy(&output.stderr)),
            args: self.args,
        }
    }
}

/// `value` without any `text` field: the prompt text a JSON answer carries.
fn remove_texts(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("text");
            map.values_mut().for_each(remove_texts);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(remove_texts),
        _ => {}
    }
}

/// `serve`'s reply lines without the build reply's `text` (the prompt).
fn without_prompt_text(stdout: &str) -> String {
    stdout
        .lines()
        .map(|line| match serde_json::from_str::<serde_json::Value>(line) {
            Ok(mut reply) => {
                if let Some(result) = reply.get_mut("result").and_then(|r| r.as_object_mut()) {
                    result.remove("text");
                }
                reply.to_string()
            }
            Err(_) => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn lay_out(root: &Path, config: &str, secrets: &Secrets) {
    let write = |relative: &str, content: &str| {
        let path: PathBuf = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, content).expect("write");
    };
    git_repo(&root.join("repo"));
    write("repo/AGENTS.md", &format!("# Rules\n\nStaging uses {}.\n", secrets.aws));
    write("repo/CLAUDE.md", &format!("# Claude\n\nDeploy token {}\n\n@.env\n", secrets.github));
    write("repo/.env", &format!("DB_HOST=localhost\nSTRIPE_KEY={}\n", secrets.stripe));
    write(
        "repo/GEMINI.md",
        &format!(
            "# Gemini\n\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
            secrets.pem_body
        ),
    );
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
    let rules = || vec![Reply::ok("# Remote rules\n")];
    let served = Server::start([
        (format!("/env.md?token={}", secrets.token), rules()),
        (format!("/literal.md?a=1&token={}", secrets.literal), rules()),
    ]);
    for (world, config) in worlds(port, &served, secrets) {
        check_world(world, &config, secrets);
    }
    // The valid world's documents were fetched: their blocks are what the ids name.
    assert!(served.requests().len() >= 2, "{:?}", served.requests());
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
    let outputs: Vec<Output> = running.into_iter().map(|r| r.output(&root)).collect();
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
        // The served documents are blocks, named with their credentials masked.
        let json = &outputs[1];
        assert!(json.text.contains("/env.md?token=[REDACTED:env_value]"), "{}", json.text);
        assert!(json.text.contains("/literal.md?a=1&token=[REDACTED:url_param]"), "{}", json.text);
        let report = outputs.iter().find(|o| o.args.starts_with("report")).expect("report ran");
        assert!(
            report.text.contains("[REDACTED:aws_key]"),
            "the report previews AGENTS.md: {}",
            report.code.unwrap_or(-1)
        );
    } else {
        assert_eq!(build.code, Some(2), "world {world}: {}", build.text);
    }
}

proptest! {
    // Each case runs every command on five trees (105 processes), and one case covers every channel: the secrets are random hex, which takes no
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
    fn no_output_contains_a_secret(
        token in any::<[u8; 12]>(),
        api_key in any::<[u8; 12]>(),
        file in any::<[u8; 12]>(),
        literal in any::<[u8; 12]>(),
        keys in any::<[u8; 32]>(),
    ) {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().concat();
        // Key-shaped: the alphabet each kind allows, from the random bytes.
        let shaped = |alphabet: &[u8], len: usize, salt: usize| -> String {
            (0..len).map(|i| alphabet[usize::from(keys[(i + salt) % keys.len()]) * 7 % alphabet.len()] as char).collect()
        };
        let upper = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let alnum = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        check_no_leak(&Secrets {
            token: format!("tok{}", hex(&token)),
            api_key: format!("key{}", hex(&api_key)),
            file: format!("file{}", hex(&file)),
            literal: format!("lit{}", hex(&literal)),
            aws: format!("AKIA{}", shaped(upper, 16, 0)),
            github: format!("ghp_{}", shaped(alnum, 36, 3)),
            pem_body: format!("MII{}", shaped(alnum, 60, 5)),
            stripe: format!("sk_live_{}", shaped(alnum, 24, 7)),
        });
    }
}

/// An empty temporary tree as the CLI tests isolate one: `root/repo` a git worktree, and
/// the home, config and managed folders [`ctxgraph`] points at.
fn sandbox() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let repo = root.join("repo");
    git_repo(&repo);
    for dir in ["home", "config", "managed"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    (dir, root, repo)
}

/// A tree of rule files for the agents that read them, each holding one secret.
fn agents_tree(repo: &Path) {
    let write = |name: &str, text: String| std::fs::write(repo.join(name), text).expect("write");
    write("AGENTS.md", format!("# Rules\n\nStaging uses AKIA{}.\n", "Q".repeat(16)));
    write("CLAUDE.md", format!("# Claude\n\nDeploy token ghp_{}\n", "a".repeat(36)));
    // A random-looking value assigned to a secret name: no key shape, still a secret.
    write("GEMINI.md", "# Gemini\n\napi_key = \"Zq8LxT4vR9mK2pW7nB5cY3hJ\"\n".to_owned());
}

/// CG005 as `lint --agent all --format json` reports it: (file name, line, agents named).
fn secret_findings(repo: &Path, root: &Path, agent: &str) -> Vec<(String, u64, String)> {
    let output = ctxgraph(root)
        .args(["lint", "--agent", agent, "--format", "json"])
        .current_dir(repo)
        .output()
        .expect("run ctxgraph");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("lint JSON");
    let findings = report["findings"].as_array().expect("findings").clone();
    findings
        .iter()
        .filter(|f| f["code"] == "CG005")
        .map(|f| {
            let file = f["location"]["uri"].as_str().unwrap_or_default();
            let name =
                Path::new(file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (
                name,
                f["location"]["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn every_agents_sent_files_are_checked_for_secrets_each_file_once() {
    let (_dir, root, repo) = sandbox();
    agents_tree(&repo);
    let found = secret_findings(&repo, &root, "all");
    let files: Vec<(&str, u64)> = found.iter().map(|(name, line, _)| (name.as_str(), *line)).collect();
    assert_eq!(files, [("AGENTS.md", 3), ("CLAUDE.md", 3), ("GEMINI.md", 3)], "{found:#?}");
    let agents_of = |name: &str| found.iter().find(|f| f.0 == name).map(|f| f.2.clone()).unwrap_or_default();
    assert!(
        agents_of("AGENTS.md").contains("opencode") && agents_of("AGENTS.md").contains("codex"),
        "{found:#?}"
    );
    assert!(agents_of("CLAUDE.md").contains("claude-code"), "{found:#?}");
    assert!(
        agents_of("GEMINI.md").contains("gemini") && agents_of("GEMINI.md").contains("secret assignment")
    );
    // One agent alone: its own files.
    let gemini = secret_findings(&repo, &root, "gemini");
    assert_eq!(gemini.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["GEMINI.md"], "{gemini:#?}");
}

#[test]
fn control_characters_from_names_and_urls_are_escaped_in_every_terminal_output() {
    let (_dir, root, repo) = sandbox();
    // A file name that sets the terminal's title, and a URL that rings and moves the cursor.
    let name = "evil\u{1b}]0;pwned\u{7}.md";
    std::fs::write(repo.join(name), "# Rules\n").expect("write");
    let port = closed_port();
    let config =
        serde_json::json!({"instructions": [name, format!("http://127.0.0.1:{port}/x\u{7}\u{1b}[2J.md")]});
    std::fs::write(repo.join("opencode.json"), config.to_string()).expect("write");
    for args in [
        &["lint"][..],
        &["lint", "--format", "sarif"],
        &["explain"],
        &["config"],
        &["build", "--format", "json"],
        &["lint", "--agent", "all"],
    ] {
        let output = ctxgraph(&root)
            .args(args)
            .args(["--color", "never"])
            .current_dir(&repo)
            .output()
            .expect("run ctxgraph");
        let printed = [output.stdout, output.stderr].concat();
        let text = String::from_utf8_lossy(&printed);
        assert!(
            !printed.iter().any(|b| *b == 0x1b || *b == 0x07),
            "`ctxgraph {}` printed a raw control character:\n{text}",
            args.join(" ")
        );
        // Shown, escaped: as `\u{…}` in text, as JSON's own escapes in JSON.
        let shown = ["x\\u{7}\\u{1b}[2J.md", "x\\u0007\\u001b[2J.md"];
        assert!(shown.iter().any(|url| text.contains(url)), "{}: {text}", args.join(" "));
        if args == ["explain"] {
            assert!(text.contains("evil\\u{1b}]0;pwned\\u{7}.md"), "{text}");
        }
    }
}

/// The language server's diagnostics and hovers come out of the same redaction: a literal
/// `?token=` in an `instructions` URL is named masked.
#[test]
fn the_language_server_shows_url_credentials_masked() {
    use crate::lsp::{Client, uri};
    let (_dir, root, repo) = sandbox();
    let literal = "lit0123456789abcdef";
    let url = format!("http://127.0.0.1:{}/r.md?token={literal}", closed_port());
    let config_text = format!("{{\n  \"instructions\": [\"{url}\"]\n}}\n");
    let config = repo.join("opencode.json");
    std::fs::write(&config, &config_text).expect("write");
    std::fs::write(repo.join("AGENTS.md"), "# Rules\n").expect("write");
    let mut client = Client::start(&root, &repo);
    client.open(&config, &config_text);
    let diagnostics = client.diagnostics(&config, 1);
    let at = serde_json::json!({ "textDocument": { "uri": uri(&config) }, "position": { "line": 1, "character": 24 } });
    let hover = client.request("textDocument/hover", at);
    let shown = format!("{diagnostics:?}\n{hover}");
    assert!(!shown.contains(literal), "{shown}");
    assert!(shown.contains("token=[REDACTED:url_param]"), "the URL is shown, masked: {shown}");
    assert_eq!(client.finish(), Some(0));
}

/// `ctxgraph mcp`'s tools answer through the same redaction as `serve` and the CLI: a
/// literal `?token=`, a plain `apiKey` and a rule file's key are printed by none of them but
/// the prompt (`context_build`), which carries the rule file as the agent sends it.
#[test]
fn mcp_tools_show_no_secret_but_in_the_prompt() {
    use crate::mcp::{Proc, initialize, tool_call, tool_text};
    let (_dir, root, repo) = sandbox();
    let literal = "lit0123456789abcdef";
    let aws = format!("AKIA{}", "Q7".repeat(8));
    std::fs::write(repo.join("AGENTS.md"), format!("# Rules\n\nStaging uses {aws}.\n")).expect("write");
    let config = serde_json::json!({
        "instructions": ["AGENTS.md", format!("http://127.0.0.1:{}/r.md?token={literal}", closed_port())],
        "provider": {"p": {"options": {"apiKey": literal}}},
    });
    std::fs::write(repo.join("opencode.json"), config.to_string()).expect("write");
    let mut mcp = Proc::spawn(&root, &["mcp"]);
    initialize(&mut mcp);
    let calls = [
        ("context_lint", serde_json::json!({})),
        ("context_lint", serde_json::json!({"format": "json"})),
        ("context_explain", serde_json::json!({})),
        ("context_explain", serde_json::json!({"format": "json"})),
        ("context_config", serde_json::json!({})),
    ];
    let mut shown = String::new();
    for (id, (tool, arguments)) in (1_u64..).zip(calls) {
        let (text, error) = tool_text(&mcp.call(&tool_call(id, tool, arguments)));
        assert!(!error, "{tool}: {text}");
        assert!(!text.contains(literal) && !text.contains(&aws), "{tool} printed a secret: {text}");
        shown.push_str(&text);
    }
    assert!(shown.contains("token=[REDACTED:url_param]"), "the URL is named, masked: {shown}");
    let (prompt, _) = tool_text(&mcp.call(&tool_call(9, "context_build", serde_json::json!({}))));
    assert!(prompt.contains(&aws), "the prompt is what the agent sends: {prompt}");
    assert_eq!(mcp.finish().0, Some(0));
}
