//! End-to-end runs of the `ctxgraph` binary on real temporary trees.
//!
//! Every run gets a clean environment: `HOME` and the XDG dirs point into the temp tree,
//! so nothing from the machine running the tests leaks in.

use std::path::PathBuf;

use ctxgraph_test_support::http::Server;

use crate::support::{Run, ctxgraph, git_repo};

struct Sandbox {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Sandbox {
    /// A temp dir with `repo/` (a git worktree), `home/` and `config/`.
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Self { dir, env: Vec::new() };
        git_repo(&sandbox.path("repo"));
        std::fs::create_dir_all(sandbox.path("home")).expect("home");
        std::fs::create_dir_all(sandbox.path("config/opencode")).expect("config");
        sandbox
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parent dir");
        std::fs::write(path, content).expect("write");
    }

    fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    fn run(&self, args: &[&str]) -> Run {
        let root = self.root();
        let output = ctxgraph(&root)
            .args(args)
            .current_dir(root.join("repo"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run ctxgraph");
        Run::scrubbed(&root, output)
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit: {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

/// A panic is a bug: exit 3 (not Rust's 101), the panic's own message, then a request for
/// a report, whatever the command and format, and nothing on stdout. The panic comes from
/// `CTXGRAPH_TEST_PANIC`, a hook only debug builds have (cli/src/panic.rs), so this test
/// exists only where the binary under test is one.
#[cfg(debug_assertions)]
#[test]
fn a_panic_exits_3_and_asks_for_a_report() {
    for args in [&["build"][..], &["lint", "--format", "json"], &["config", "--format", "json"]] {
        let run = Sandbox::new().env("CTXGRAPH_TEST_PANIC", "on purpose").run(args);
        assert_eq!(run.code, 3, "{args:?}: {run}");
        assert!(run.stderr.contains("CTXGRAPH_TEST_PANIC is set (on purpose)"), "{args:?}: {run}");
        let report = "this is a bug in ctxgraph";
        assert!(run.stderr.contains(report), "{args:?}: {run}");
        assert!(run.stderr.trim_end().ends_with("/issues"), "{args:?}: {run}");
        assert!(run.stdout.is_empty(), "{args:?}: {run}");
    }
    // Without the variable the same run succeeds: the hook is the only panic.
    let sandbox = Sandbox::new();
    sandbox.write("repo/AGENTS.md", "rule\n");
    let run = sandbox.run(&["build"]);
    assert_eq!(run.code, 0, "{run}");
}

const BROKEN: &str = "{\n  \"instructions\": [\"a.md\"]\n  \"model\": \"x/y\"\n}\n";

/// Broken JSONC in each config layer: exit 2, the file, line and column, the line
/// itself, and no prompt on stdout.
#[test]
fn broken_jsonc_in_every_layer() {
    let in_file = |path: &str| {
        let sandbox = Sandbox::new();
        sandbox.write(path, BROKEN);
        sandbox
    };
    let env_file = in_file("extra.json");
    let env_path = env_file.path("extra.json");
    let layers = [
        ("global", in_file("config/opencode/opencode.json")),
        ("project", in_file("repo/opencode.jsonc")),
        (".opencode", in_file("repo/.opencode/opencode.json")),
        ("managed", in_file("managed/opencode.json")),
        ("OPENCODE_CONFIG", env_file.env("OPENCODE_CONFIG", &env_path.to_string_lossy())),
        ("OPENCODE_CONFIG_CONTENT", Sandbox::new().env("OPENCODE_CONFIG_CONTENT", BROKEN)),
    ];
    for (name, sandbox) in layers {
        sandbox.write("repo/AGENTS.md", "rule\n");
        let run = sandbox.run(&["build"]);
        assert_eq!(run.code, 2, "{name}: {run}");
        assert!(run.stdout.is_empty(), "{name}: a partial prompt was printed: {run}");
        insta::assert_snapshot!(format!("broken_jsonc_{name}"), run.to_string());
    }
}

#[test]
fn file_reference_to_a_missing_file() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", "{\n  \"instructions\": [\"{file:./missing.txt}\"]\n}\n");
    insta::assert_snapshot!(sandbox.run(&["build"]).to_string());
}

#[test]
fn invalid_instructions_type() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", "{\"instructions\": \"docs/*.md\"}");
    insta::assert_snapshot!(sandbox.run(&["build"]).to_string());
}

#[test]
fn config_path_that_is_a_directory() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.path("repo/opencode.json")).expect("dir");
    insta::assert_snapshot!(sandbox.run(&["build"]).to_string());
}

#[test]
fn invalid_runtime_flag() {
    let sandbox = Sandbox::new().env("OPENCODE_DISABLE_CLAUDE_CODE", "maybe");
    insta::assert_snapshot!(sandbox.run(&["build"]).to_string());
}

#[test]
fn working_directory_that_does_not_exist() {
    let sandbox = Sandbox::new();
    insta::assert_snapshot!(sandbox.run(&["build", "--cwd", "no/such/dir"]).to_string());
}

#[test]
fn nearby_on_a_missing_file() {
    let sandbox = Sandbox::new();
    insta::assert_snapshot!(sandbox.run(&["nearby", "src/missing.rs"]).to_string());
}

/// A rule file over the size limit is refused, not silently dropped or read into memory.
#[test]
fn huge_rule_file() {
    let sandbox = Sandbox::new();
    let file = std::fs::File::create(sandbox.path("repo/AGENTS.md")).expect("create");
    file.set_len(ctxgraph_engine::MAX_FILE_BYTES + 1).expect("sparse file");
    insta::assert_snapshot!(sandbox.run(&["build", "--section", "instructions"]).to_string());
}

/// #24 D9: a config over 4 MiB is refused with exit 2, naming the file and the limit, before
/// it is parsed (each byte of config costs ~100 bytes of memory); one at the limit loads.
#[test]
fn config_over_the_size_limit() {
    use ctxgraph_opencode::config::MAX_CONFIG_BYTES;
    assert_eq!(MAX_CONFIG_BYTES, 4 * 1024 * 1024, "the limit README and docs/opencode/config.md state");
    let sandbox = Sandbox::new();
    let padded = |len: usize| format!("{{{}}}", " ".repeat(len - 2));
    sandbox.write("repo/opencode.json", padded(MAX_CONFIG_BYTES + 1));
    let run = sandbox.run(&["build", "--section", "instructions"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains(
            "[TMP]/repo/opencode.json: config is 4194305 bytes, over ctxgraph's limit of 4194304 bytes"
        ),
        "{run}"
    );
    let json = sandbox.run(&["build", "--format", "json"]);
    assert!(json.stdout.contains("\"config-too-large\""), "{json}");
    sandbox.write("repo/opencode.json", padded(MAX_CONFIG_BYTES));
    let run = sandbox.run(&["build", "--section", "instructions"]);
    assert_eq!(run.code, 0, "{run}");
}

/// A directory named `AGENTS.md` exists (so `CLAUDE.md` is not used) and reads as empty.
#[test]
fn directory_named_agents_md() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.path("repo/AGENTS.md")).expect("dir");
    sandbox.write("repo/CLAUDE.md", "claude\n");
    let run = sandbox.run(&["build", "--section", "instructions"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
}

/// A symlink loop under a globbed directory terminates and adds nothing twice.
#[test]
fn symlink_loop_under_a_glob_terminates() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", r#"{"instructions": ["rules/**/*.md"]}"#);
    sandbox.write("repo/rules/a.md", "a\n");
    std::os::unix::fs::symlink(".", sandbox.path("repo/rules/loop")).expect("symlink");
    std::os::unix::fs::symlink("y", sandbox.path("repo/rules/x.md")).expect("symlink");
    std::os::unix::fs::symlink("x.md", sandbox.path("repo/rules/y")).expect("symlink");
    insta::assert_snapshot!(sandbox.run(&["build", "--section", "instructions"]).to_string());
}

/// Text output is exactly the bytes (no trailing newline added); json describes them.
#[test]
fn text_and_json_agree() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/AGENTS.md", "root\n");
    sandbox.write("repo/pkg/AGENTS.md", "pkg");
    let cwd = sandbox.path("repo/pkg");
    let text = sandbox.run(&["build", "--cwd", &cwd.to_string_lossy(), "--section", "instructions"]);
    assert_eq!(
        text.stdout,
        "Instructions from: [TMP]/repo/pkg/AGENTS.md\npkg\nInstructions from: [TMP]/repo/AGENTS.md\nroot\n"
    );
    let json = sandbox.run(&["build", "--cwd", &cwd.to_string_lossy(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let full = sandbox.run(&["build", "--cwd", &cwd.to_string_lossy()]).raw_stdout;
    for block in report["blocks"].as_array().expect("blocks") {
        let offset = |key: &str| usize::try_from(block[key].as_u64().expect(key)).expect("offset fits usize");
        let (start, end) = (offset("start"), offset("end"));
        let slice = &full[start..end];
        assert_eq!(block["hash"].as_str(), Some(blake3::hash(slice).to_hex().as_str()), "{block}");
    }
    // The sandbox's path is in the text, so its hashes, its length and the blocks' offsets
    // vary with the machine: each is replaced where it is present (checked above), so a field
    // gone missing still shows in the snapshot.
    let mut redacted = report;
    redact(&mut redacted, &[("hash", "[hash]"), ("bytes", "[bytes]")]);
    // A block's text and length carry the sandbox's path and the environment block's date.
    for block in redacted["blocks"].as_array_mut().expect("blocks") {
        redact(
            block,
            &[
                ("hash", "[hash]"),
                ("start", "[offset]"),
                ("end", "[offset]"),
                ("bytes", "[bytes]"),
                ("text", "[text]"),
            ],
        );
    }
    insta::assert_json_snapshot!(redacted);
}

fn redact(value: &mut serde_json::Value, fields: &[(&str, &str)]) {
    for &(key, mask) in fields {
        if let Some(field) = value.get_mut(key) {
            *field = mask.into();
        }
    }
}

/// opencode takes the one road every agent's `build` takes: `--model` is its `-c model=`,
/// the same text either way, shown among the layout's settings; a bad value is bad input;
/// another agent refuses opencode's options as settings it does not model, and opencode's
/// own sections are refused by an agent that does not build them.
#[test]
fn opencode_s_options_are_its_settings() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/AGENTS.md", "root\n");
    let flag = sandbox.run(&["build", "--section", "environment", "--model", "acme/claude-x"]);
    let setting = sandbox.run(&["build", "--section", "environment", "-c", "model=acme/claude-x"]);
    assert_eq!((flag.code, setting.code), (0, 0), "{flag}\n{setting}");
    assert!(flag.stdout.contains("acme/claude-x"), "{flag}");
    assert_eq!(flag.raw_stdout, setting.raw_stdout);
    let json = sandbox.run(&["build", "-c", "model=acme/claude-x", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(report["settings"], serde_json::json!([{"name": "model", "value": "acme/claude-x"}]));

    let bad = sandbox.run(&["build", "-c", "model=sonnet"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("model: expected PROVIDER/MODEL, got \"sonnet\""), "{bad}");
    let codex = sandbox.run(&["build", "--agent", "codex", "--model", "acme/claude-x"]);
    assert_eq!(codex.code, 2, "{codex}");
    assert!(codex.stderr.contains("ctxgraph does not model codex's `model`"), "{codex}");
    // Another agent's whole request reads nothing of opencode's config, broken or not.
    sandbox.write("repo/opencode.json", "{ not json");
    let request = sandbox.run(&["build", "--agent", "claude-code", "--section", "request"]);
    assert_eq!(request.code, 0, "{request}");
    // Nor do another agent's lint and explain, as serve's do not.
    for args in [&["lint", "--agent", "codex"][..], &["explain", "--agent", "codex"]] {
        let other = sandbox.run(args);
        assert_eq!(other.code, 0, "{args:?}: {other}");
    }
    let opencode = sandbox.run(&["lint"]);
    assert!(opencode.code == 2 && opencode.stderr.contains("opencode.json"), "{opencode}");
    let section = sandbox.run(&["build", "--agent", "gemini", "--section", "message"]);
    assert_eq!(section.code, 2, "{section}");
    assert!(section.stderr.contains("--section message: Gemini CLI builds only rules"), "{section}");
}

#[test]
fn nearby_prints_the_reminder_only() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/AGENTS.md", "root\n");
    sandbox.write("repo/src/AGENTS.md", "src rules\n");
    sandbox.write("repo/src/lib.rs", "");
    let run = sandbox.run(&["nearby", "src/lib.rs"]);
    assert_eq!(
        run.stdout,
        "<system-reminder>\nInstructions from: [TMP]/repo/src/AGENTS.md\nsrc rules\n\n</system-reminder>"
    );
    assert!(sandbox.run(&["nearby", "AGENTS.md"]).stdout.is_empty());
}

/// Issue #4's promise: a pinned remote rule gives the same prompt online and offline, and
/// when a remote rule is missing the user sees why.
#[test]
fn pinned_remote_rule_online_and_offline() {
    const BODY: &str = "Team rule: squash before merging.\n";
    let server = Server::body("/team-rules.md", BODY, 1);
    let url = server.url("/team-rules.md");
    let pinned = format!("{url}#blake3={}", blake3::hash(BODY.as_bytes()).to_hex());
    let sandbox = Sandbox::new();
    sandbox.write("repo/AGENTS.md", "local\n");
    sandbox.write("repo/opencode.json", serde_json::json!({ "instructions": [pinned] }).to_string());
    let online = sandbox.run(&["build", "--section", "instructions"]);
    assert_eq!((online.code, online.stderr.as_str()), (0, ""), "{online}");
    assert!(online.stdout.ends_with(&format!("Instructions from: {pinned}\n{BODY}")), "{online}");
    // The server is gone now (it served its one request): offline builds from the cache.
    let offline = sandbox.run(&["build", "--section", "instructions", "--offline"]);
    assert_eq!(offline.stdout, online.stdout, "{offline}");

    // A wrong pin: no block, a warning that says why, and the reason in JSON.
    let wrong = format!("{url}#sha256={}", "0".repeat(64));
    sandbox.write("repo/opencode.json", serde_json::json!({ "instructions": [wrong] }).to_string());
    let run = sandbox.run(&["build", "--section", "instructions", "--offline"]);
    let json = sandbox.run(&["build", "--format", "json", "--offline"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let strict = sandbox.run(&["build", "--offline", "--strict"]);
    let port = url.split(':').nth(2).and_then(|p| p.split('/').next()).expect("port");
    insta::assert_snapshot!(
        format!("{run}\n--- json remote\n{:#}\n--- strict\n{strict}", report["remote"]).replace(port, "PORT")
    );
}

/// `ctxgraph config`: layers grouped by source (no colours when piped), the JSON opencode
/// prints, secrets shown as their tokens unless asked for.
#[test]
fn config_text_json_and_secrets() {
    let sandbox = Sandbox::new().env("API_TOKEN", "s3cr3t").env("NO_COLOR", "1");
    sandbox.write(
        "config/opencode/opencode.json",
        "{\"model\": \"global/model\", \"instructions\": [\"g.md\"]}",
    );
    sandbox.write(
        "repo/opencode.jsonc",
        "{\n  // project\n  \"model\": \"project/model\",\n  \"instructions\": [\"p.md\"],\n  \"provider\": {\"x\": {\"options\": {\"apiKey\": \"{env:API_TOKEN}\", \"baseURL\": \"{env:API_TOKEN}-url\"}}}\n}\n",
    );
    let text = sandbox.run(&["config"]);
    assert!(!text.raw_stdout.contains(&0x1b), "no colours when piped");
    insta::assert_snapshot!("config_text", text.to_string());
    insta::assert_snapshot!("config_json", sandbox.run(&["config", "--format", "json"]).to_string());
    let shown = sandbox.run(&["config", "--format", "json", "--show-secrets"]);
    assert!(
        shown.stdout.contains("s3cr3t-url") && shown.stdout.contains("\"apiKey\": \"s3cr3t\""),
        "{shown}"
    );
    insta::assert_snapshot!(
        "config_explain_model",
        sandbox.run(&["config", "--explain", "model"]).to_string()
    );
    insta::assert_snapshot!(
        "config_explain_instructions",
        sandbox.run(&["config", "--explain", "instructions"]).to_string()
    );
    insta::assert_snapshot!(
        "config_explain_json",
        sandbox.run(&["config", "--explain", "provider.x.options.baseURL", "--format", "json"]).to_string()
    );
    let missing = sandbox.run(&["config", "--explain", "nope.nothing"]);
    assert_eq!(missing.code, 2, "{missing}");
}

/// Invalid config: exit 2, a snippet with a caret in text, the same facts as JSON data.
#[test]
fn config_errors_as_text_and_json() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", BROKEN);
    insta::assert_snapshot!("config_jsonc_error_text", sandbox.run(&["config"]).to_string());
    insta::assert_snapshot!(
        "config_jsonc_error_json",
        sandbox.run(&["config", "--format", "json"]).to_string()
    );
    sandbox.write("repo/opencode.json", "{\"compaction\": {\"tail_turns\": -1}, \"share\": 3}");
    insta::assert_snapshot!(
        "config_schema_error_json",
        sandbox.run(&["config", "--format", "json"]).to_string()
    );
    // S2 makes opencode refuse to start, so `build` refuses too.
    let build = sandbox.run(&["build"]);
    assert_eq!((build.code, build.stdout.as_str()), (2, ""), "{build}");
}

/// `serve` loads remote instructions too: a warm host sees the URL block opencode sends.
#[test]
fn serve_includes_remote_instructions() {
    use std::io::{BufRead, Write};
    const BODY: &str = "Served rule.\n";
    let server = Server::body("/team-rules.md", BODY, 1);
    let url = server.url("/team-rules.md");
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", serde_json::json!({ "instructions": [url] }).to_string());
    let root = sandbox.root();
    let mut child = ctxgraph(&root)
        .args(["serve", "--stdio", "--no-watch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "build",
        "params": { "cwd": root.join("repo"), "section": "instructions" },
    });
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{request}").expect("write request");
    drop(stdin);
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read reply");
    let _ = child.wait();
    let reply: serde_json::Value = serde_json::from_str(&line).expect("json reply");
    assert_eq!(reply["result"]["text"], format!("Instructions from: {url}\n{BODY}"), "{reply}");
    assert_eq!(reply["result"]["blocks"][0]["id"], format!("url:{url}"), "{reply}");
}

/// Brace expansion is bounded (README, deviations): 2^12 patterns from one entry is an
/// error naming the config file, line and entry, not minutes of globbing.
#[test]
fn an_instructions_entry_with_too_many_brace_expansions() {
    let sandbox = Sandbox::new();
    let entry = format!("docs/{}.md", "{a,b}".repeat(12));
    sandbox
        .write("repo/opencode.json", format!("{{\n  \"instructions\": [\"AGENTS.md\", \"{entry}\"]\n}}\n"));
    sandbox.write("repo/AGENTS.md", "rule\n");
    for args in [&["build"][..], &["explain"], &["lint"]] {
        let run = sandbox.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run}");
        assert!(run.stdout.is_empty(), "{run}");
        assert!(run.stderr.contains("[TMP]/repo/opencode.json:2:"), "{run}");
        assert!(run.stderr.contains(&format!("{entry:?}")), "{run}");
        assert!(run.stderr.contains("more than 1024 glob patterns"), "{run}");
    }
    // 2^10 is within the bound.
    sandbox
        .write("repo/opencode.json", format!("{{\"instructions\": [\"docs/{}.md\"]}}", "{a,b}".repeat(10)));
    assert_eq!(sandbox.run(&["build"]).code, 0);
}

/// A syntax error deep in a 4 MB one-line config (just under the size limit), or 100k
/// levels down, prints a window of the line around the column, not the line (#14 item 8).
#[test]
fn error_snippets_are_bounded_on_huge_lines() {
    let sandbox = Sandbox::new();
    let huge = format!("{{\"x\": \"{}\" \"y\": 1}}", "a".repeat(4_000_000));
    sandbox.write("repo/opencode.json", &huge);
    let run = sandbox.run(&["build"]);
    assert_eq!(run.code, 2, "{run}");
    // `{"x": "` is 7 characters, then the string and a space: the second key is the error.
    assert!(run.stderr.contains("opencode.json:1:4000010"), "{}", run.stderr);
    assert!(run.stderr.len() < 1_000, "{} bytes of stderr", run.stderr.len());
    let json = sandbox.run(&["build", "--format", "json"]);
    assert!(json.stdout.len() < 1_000, "{} bytes of JSON", json.stdout.len());

    sandbox.write("repo/opencode.json", "[".repeat(100_000));
    let run = sandbox.run(&["build"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.len() < 1_000, "{} bytes of stderr", run.stderr.len());
}

/// Every command asked for JSON reports its error as JSON on stdout, in one shape.
#[test]
fn errors_are_json_under_format_json() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", BROKEN);
    sandbox.write("repo/src/a.rs", "");
    for args in [
        &["build", "--format", "json"][..],
        &["config", "--format", "json"],
        &["explain", "--format", "json"],
        &["lint", "--format", "json"],
        &["nearby", "src/a.rs", "--format", "json"],
    ] {
        let run = sandbox.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run}");
        let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON on stdout");
        assert_eq!(json["error"]["code"], "invalid-jsonc", "{args:?}: {run}");
        assert_eq!(json["error"]["rule"], "J2", "{args:?}: {run}");
    }
}

/// One colour rule for every command: `--color`, else `NO_COLOR`/`CLICOLOR_FORCE`, else a
/// terminal (never, for a pipe).
#[test]
fn colour_follows_color_flag_and_environment() {
    let sandbox = Sandbox::new();
    sandbox.write("repo/opencode.json", BROKEN);
    let styled = |run: &Run| run.stderr.contains('\u{1b}');
    assert!(!styled(&sandbox.run(&["build"])), "a pipe gets no colour");
    assert!(styled(&sandbox.run(&["build", "--color", "always"])));
    let forced = Sandbox::new().env("CLICOLOR_FORCE", "1");
    forced.write("repo/opencode.json", BROKEN);
    assert!(styled(&forced.run(&["build"])));
    assert!(!styled(&forced.run(&["build", "--color", "never"])));
    let no_color = Sandbox::new().env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1");
    no_color.write("repo/opencode.json", BROKEN);
    assert!(!styled(&no_color.run(&["build"])), "NO_COLOR wins over CLICOLOR_FORCE");
}

#[test]
fn completions_for_every_shell() {
    let sandbox = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = sandbox.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run}");
        assert!(run.stdout.contains("ctxgraph"), "{shell}");
        assert!(run.stdout.contains("explain"), "{shell}: subcommands are completed");
    }
}

/// `build --section message` without an installation: the blocks of opencode's texts are
/// placeholders, each with its `placeholder` reason in JSON, with a warning; `explain --opencode-agent`
/// names the agent prompt's source; an unknown agent is bad input.
#[test]
fn message_without_an_installation_and_with_an_agent_prompt() {
    let temp = tempfile::tempdir().expect("temp");
    let root = std::fs::canonicalize(temp.path()).expect("canonical");
    let proj = root.join("proj");
    git_repo(&proj);
    std::fs::write(proj.join("AGENTS.md"), "Rule.\n").expect("write");
    std::fs::write(
        proj.join("opencode.json"),
        r#"{"agent": {"mine": {"mode": "primary", "prompt": "{file:./p.md}"}}}"#,
    )
    .expect("write");
    std::fs::write(proj.join("p.md"), "Be brief.").expect("write");
    let run = |args: &[&str]| {
        Run::scrubbed(
            &root,
            ctxgraph(&root).args(args).current_dir(&proj).env("PATH", "").output().expect("run"),
        )
    };

    let json =
        run(&["build", "--section", "message", "--model", "a/claude-x", "--json-schema", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let blocks = report["blocks"].as_array().expect("blocks");
    let sources: Vec<String> = blocks
        .iter()
        .map(|b| format!("{}:{}", b["kind"].as_str().expect("kind"), b["source"].as_str().expect("source")))
        .collect();
    assert_eq!(
        sources,
        [
            "agent:model-prompt",
            "agent:environment",
            "file:[TMP]/proj/AGENTS.md",
            "agent:skills",
            "agent:structured-output"
        ]
    );
    assert!(blocks[0]["placeholder"].as_str().expect("reason").contains("PATH"));
    assert!(json.stderr.contains("warning: opencode's own wording is unavailable"), "{}", json.stderr);
    assert!(blocks[3]["placeholder"].as_str().is_some(), "{}", blocks[3]);
    assert!(blocks[1].get("placeholder").is_none(), "{}", blocks[1]);

    let text = run(&["build", "--section", "message", "--opencode-agent", "mine", "--user-system", "Last."]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.starts_with("Be brief.\nHere is some useful information"), "{}", text.stdout);
    // B5: the skills block (only the built-in skill); opencode's sentences and the skill's
    // description are placeholders here.
    assert!(
        text.stdout.contains("Rule.\n\n[ctxgraph: opencode's text skills/intro is unavailable: "),
        "{}",
        text.stdout
    );
    assert!(text.stdout.ends_with("</available_skills>\nLast."), "{}", text.stdout);

    let explain = run(&["explain", "--opencode-agent", "mine"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(explain.stdout.contains("message prompt (A2, 9 bytes): the mine agent's prompt from [TMP]/proj/opencode.json (written `{file:./p.md}`)"), "{}", explain.stdout);

    let unknown = run(&["build", "--section", "message", "--opencode-agent", "nope"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("opencode has no agent \"nope\""), "{}", unknown.stderr);
}
