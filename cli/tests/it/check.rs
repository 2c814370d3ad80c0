//! End-to-end runs of `ctxgraph snapshot` / `check` / `init-check` on temporary
//! repositories.
//!
//! Every run has a poisoned environment: `HOME`, `XDG_CONFIG_HOME` and `OPENCODE_CONFIG_DIR`
//! point at a home full of rules (`~/.claude/CLAUDE.md`, `~/.config/opencode/AGENTS.md`)
//! whose text must never reach a snapshot.

use std::path::{Path, PathBuf};
use std::process::Command;

use ctxgraph_test_support::http::Server;

use crate::support::git_repo;

const POISON: &str = "POISON: this rule is on the machine, not in the repository";

struct Sandbox {
    dir: tempfile::TempDir,
    /// The repository, relative to the temp dir (it can be moved).
    repo: String,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit: {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

impl Sandbox {
    /// A git repository with a root rule, a package rule and a scenarios file, next to a
    /// poisoned home.
    fn new() -> Self {
        let sandbox = Self { dir: tempfile::tempdir().expect("temp dir"), repo: "repo".to_owned() };
        git_repo(&sandbox.repo());
        sandbox.write("AGENTS.md", "# Root\n\nRun the tests before pushing.\n");
        sandbox.write("packages/api/AGENTS.md", "# API\n\nValidate every input.\n");
        sandbox.write("packages/api/src/users.ts", "export {};\n");
        sandbox.write(
            "ctxgraph.toml",
            "[scenario.root]\ncwd = \".\"\nmodel = \"anthropic/claude-sonnet-4-5\"\n\n\
             [scenario.api]\ncwd = \"packages/api\"\nreads = [\"packages/api/src/users.ts\"]\n",
        );
        for file in [".claude/CLAUDE.md", ".config/opencode/AGENTS.md", "notes.md"] {
            let path = sandbox.root().join("poisoned-home").join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, POISON).expect("write");
        }
        sandbox
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    fn repo(&self) -> PathBuf {
        self.root().join(&self.repo)
    }

    /// Writes a file in the repository.
    fn write(&self, relative: &str, content: &str) {
        let path = self.repo().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parent dir");
        std::fs::write(path, content).expect("write");
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.repo().join(relative)).expect("read")
    }

    fn exists(&self, relative: &str) -> bool {
        self.repo().join(relative).exists()
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let home = self.root().join("poisoned-home");
        let output = Command::new(env!("CARGO_BIN_EXE_ctxgraph"))
            .args(args)
            .current_dir(self.repo())
            .env_clear()
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("OPENCODE_CONFIG_DIR", home.join(".config/opencode"))
            .envs(env.iter().copied())
            .output()
            .expect("run ctxgraph");
        let root = self.root().to_string_lossy().into_owned();
        let scrub = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&root, "[TMP]");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: scrub(&output.stdout),
            stderr: scrub(&output.stderr),
        }
    }

    /// Moves the repository elsewhere under the temp dir.
    fn move_repo(&mut self, to: &str) {
        let target = self.root().join(to);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("dir");
        std::fs::rename(self.repo(), &target).expect("move");
        to.clone_into(&mut self.repo);
    }
}

const SNAP: &str = ".ctxgraph/snapshots";

fn snapshot(sandbox: &Sandbox) {
    let run = sandbox.run(&["snapshot"]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn snapshot_then_check_passes() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["snapshot"]);
    assert_eq!(run.code, 0, "{run}");
    insta::assert_snapshot!("snapshot_output", run.stdout);
    // The file format, pinned: header, block manifest, and the body with <repo>.
    insta::assert_snapshot!("api_snap_file", sandbox.read(&format!("{SNAP}/api.snap")));

    let check = sandbox.run(&["check"]);
    assert_eq!(check.code, 0, "{check}");
    assert!(check.stdout.contains("2 scenarios of ctxgraph.toml match their snapshots"), "{check}");
    assert!(!sandbox.exists(&format!("{SNAP}/api.snap.new")));
}

#[test]
fn editing_a_rule_fails_with_the_diff_the_token_delta_and_the_source() {
    let sandbox = Sandbox::new();
    snapshot(&sandbox);
    // One more line: 112 → 119 o200k_base tokens for root ("Never force-push to main.\n").
    sandbox.write("AGENTS.md", "# Root\n\nRun the tests before pushing.\nNever force-push to main.\n");

    let ci = sandbox.run_with(&["check"], &[("CI", "true")]);
    assert_eq!(ci.code, 1, "{ci}");
    insta::assert_snapshot!("edited_rule_in_ci", ci.stdout);
    assert!(!sandbox.exists(&format!("{SNAP}/root.snap.new")), "CI must not write");

    let local = sandbox.run(&["check", "root"]);
    assert_eq!(local.code, 1, "{local}");
    assert!(local.stdout.contains("+7 tokens (112 → 119)"), "{local}");
    assert!(local.stdout.contains("+Never force-push to main."), "{local}");
    assert!(!local.stdout.contains('\x1b'), "piped output must not be coloured: {local}");
    assert!(sandbox.exists(&format!("{SNAP}/root.snap.new")));

    let accept = sandbox.run(&["check", "--accept"]);
    assert_eq!(accept.code, 0, "{accept}");
    assert_eq!(accept.stdout, "accepted root (.ctxgraph/snapshots/root.snap)\n");
    // Only root was accepted; api still differs.
    let after = sandbox.run_with(&["check"], &[("CI", "true")]);
    assert_eq!(after.code, 1, "{after}");
    assert!(after.stdout.contains("1 of 2 scenarios of ctxgraph.toml failed: api"), "{after}");
}

#[test]
fn a_claude_md_next_to_an_agents_md_changes_nothing() {
    let sandbox = Sandbox::new();
    snapshot(&sandbox);
    // I4: AGENTS.md wins at every level once it has any hit, so CLAUDE.md is never read.
    sandbox.write("CLAUDE.md", "# Claude\n\nThis is not loaded.\n");
    sandbox.write("packages/api/CLAUDE.md", "Nor is this.\n");
    let run = sandbox.run_with(&["check"], &[("CI", "true")]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn moving_the_repository_keeps_its_snapshots_valid() {
    let mut sandbox = Sandbox::new();
    snapshot(&sandbox);
    sandbox.move_repo("elsewhere/deeper/checkout");
    let run = sandbox.run_with(&["check"], &[("CI", "true")]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn nothing_from_the_machine_reaches_a_scenario() {
    let sandbox = Sandbox::new();
    let poisoned = sandbox.root().join("poisoned-home");
    // Config entries that would read the machine: `~/` (H), an absolute path outside the
    // repository, and a symlink out of it.
    sandbox.write(
        "opencode.json",
        &format!("{{\"instructions\": [\"~/notes.md\", \"{}/*.md\", \"linked/*.md\"]}}", poisoned.display()),
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink(&poisoned, sandbox.repo().join("linked")).expect("symlink");
    // A scenario with a home of its own, inside the repository.
    sandbox.write("ci/home/.claude/CLAUDE.md", "Home rule from the repository.\n");
    sandbox.write(
        "ctxgraph.toml",
        "[scenario.bare]\n\n[scenario.with-home]\nhome = \"ci/home\"\n\n\
         [scenario.claude-off]\nhome = \"ci/home\"\nenv = { OPENCODE_DISABLE_CLAUDE_CODE = \"1\" }\n",
    );
    snapshot(&sandbox);
    for name in ["bare", "with-home", "claude-off"] {
        let snap = sandbox.read(&format!("{SNAP}/{name}.snap"));
        assert!(!snap.contains("POISON"), "{name} leaked the machine's home:\n{snap}");
        assert!(!snap.contains(&*sandbox.root().to_string_lossy()), "{name} has a machine path:\n{snap}");
    }
    let with_home = sandbox.read(&format!("{SNAP}/with-home.snap"));
    assert!(
        with_home.contains("Instructions from: <home>/.claude/CLAUDE.md\nHome rule from the repository."),
        "{with_home}"
    );
    assert!(!sandbox.read(&format!("{SNAP}/claude-off.snap")).contains("<home>/.claude"));
    assert!(!sandbox.read(&format!("{SNAP}/bare.snap")).contains("<home>/.claude"));
}

#[test]
fn a_malformed_scenarios_file_names_the_line_and_column() {
    let cases = [
        ("toml_syntax", "[scenario.api]\ncwd = \"packages/api\n"),
        ("unknown_key", "[scenario.api]\ncwd = \"packages/api\"\nreeds = []\n"),
        ("cwd_outside_the_repository", "[scenario.api]\ncwd = \"../..\"\n"),
        ("missing_cwd", "[scenario.api]\ncwd = \"packages/nope\"\n"),
        ("bad_model", "[scenario.api]\nmodel = \"sonnet\"\n"),
        ("bad_date", "[scenario.api]\ndate = \"01/02/2026\"\n"),
        ("bad_name", "[scenario.\"a/b\"]\n"),
        ("home_in_env", "[scenario.api]\nenv = { HOME = \"/root\" }\n"),
        ("config_dir_name", "[scenario.api]\nconfig_dir = \"packages\"\n"),
    ];
    for (name, text) in cases {
        let sandbox = Sandbox::new();
        sandbox.write("ctxgraph.toml", text);
        let run = sandbox.run(&["check"]);
        assert_eq!(run.code, 2, "{name}: {run}");
        assert!(run.stdout.is_empty(), "{name}: {run}");
        insta::assert_snapshot!(format!("malformed_{name}"), run.stderr);
    }
}

#[test]
fn a_missing_snapshot_fails_in_ci_and_is_pending_otherwise() {
    let sandbox = Sandbox::new();
    for ci in ["true", "1", "woodpecker"] {
        let run = sandbox.run_with(&["check"], &[("CI", ci)]);
        assert_eq!(run.code, 1, "CI={ci}: {run}");
        assert!(!sandbox.exists(&format!("{SNAP}/root.snap.new")));
    }
    for ci in ["", "false", "0"] {
        let run = sandbox.run_with(&["check"], &[("CI", ci)]);
        assert_eq!(run.code, 0, "CI={ci:?}: {run}");
        assert!(sandbox.exists(&format!("{SNAP}/root.snap.new")));
    }
    let accept = sandbox.run(&["check", "--accept"]);
    assert_eq!(accept.code, 0, "{accept}");
    assert!(!sandbox.exists(&format!("{SNAP}/root.snap.new")));
    assert_eq!(sandbox.run_with(&["check"], &[("CI", "true")]).code, 0);
}

#[test]
fn a_final_newline_added_to_a_snapshot_is_caught() {
    let sandbox = Sandbox::new();
    // The body ends without a newline, the way a rule file without one ends the prompt.
    sandbox.write("AGENTS.md", "# Root\n\nRun the tests before pushing.");
    snapshot(&sandbox);
    let path = format!("{SNAP}/root.snap");
    sandbox.write(&path, &(sandbox.read(&path) + "\n"));
    let run = sandbox.run_with(&["check", "root"], &[("CI", "true")]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stdout.contains("does not match the blake3 in its header"), "{run}");
    assert!(run.stdout.contains("\\ No newline at end of file"), "{run}");
}

#[test]
fn machine_readable_formats() {
    let sandbox = Sandbox::new();
    snapshot(&sandbox);
    sandbox.write("packages/api/AGENTS.md", "# API\n");
    sandbox.write("docs/style.md", "Prefer named exports.\n");
    sandbox.write("opencode.json", "{\"instructions\": [\"docs/*.md\"]}\n");

    let json = sandbox.run_with(&["check", "--format", "json"], &[("CI", "true")]);
    assert_eq!(json.code, 1, "{json}");
    insta::assert_snapshot!("format_json", json.stdout);

    let summary = sandbox.root().join("step-summary.md");
    let summary_env = summary.to_string_lossy().into_owned();
    let github = sandbox.run_with(
        &["check", "--format", "github", "api"],
        &[("CI", "true"), ("GITHUB_STEP_SUMMARY", &summary_env)],
    );
    assert_eq!(github.code, 1, "{github}");
    insta::assert_snapshot!("format_github", github.stdout);
    insta::assert_snapshot!(
        "format_github_summary",
        std::fs::read_to_string(&summary).expect("summary written")
    );
}

#[test]
fn a_scenario_whose_config_is_broken_is_bad_input() {
    let sandbox = Sandbox::new();
    snapshot(&sandbox);
    sandbox.write("opencode.json", "{\n  \"instructions\": [\"a.md\"]\n  \"model\": \"x/y\"\n}\n");
    let run = sandbox.run_with(&["check", "root"], &[("CI", "true")]);
    assert_eq!(run.code, 2, "{run}");
    insta::assert_snapshot!("broken_config", run.stdout);
}

#[test]
fn init_check_proposes_a_scenario_per_rule_directory() {
    let sandbox = Sandbox::new();
    std::fs::remove_file(sandbox.repo().join("ctxgraph.toml")).expect("remove");
    sandbox.write("packages/web/CLAUDE.md", "web\n");
    sandbox.write("docs/CONTEXT.md", "context\n");
    sandbox.write("node_modules/dep/AGENTS.md", "ignored\n");
    sandbox.write(".gitignore", "node_modules/\n");
    let run = sandbox.run(&["init-check"]);
    assert_eq!(run.code, 0, "{run}");
    insta::assert_snapshot!("init_check", sandbox.read("ctxgraph.toml"));
    // A second run leaves the file alone and prints the proposal.
    let again = sandbox.run(&["snapshot", "--init"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(again.stdout.contains("[scenario.packages-web]"), "{again}");
    // The proposal is a valid scenarios file.
    let check = sandbox.run(&["snapshot"]);
    assert_eq!(check.code, 0, "{check}");
    assert!(Path::new(&sandbox.repo().join(SNAP).join("packages-web.snap")).is_file());
}

/// Remote URLs add a block only in scenarios that opt in with `fetch_remote = true`.
#[test]
fn remote_instructions_only_when_the_scenario_fetches() {
    let server = Server::body("/team.md", "Team rule.\n", 4);
    let url = server.url("/team.md");
    let sandbox = Sandbox::new();
    sandbox.write("opencode.json", &serde_json::json!({ "instructions": [url] }).to_string());
    sandbox.write(
        "ctxgraph.toml",
        "[scenario.offline]\nsection = \"instructions\"\n\n\
         [scenario.online]\nsection = \"instructions\"\nfetch_remote = true\n",
    );
    snapshot(&sandbox);
    let offline = sandbox.read(&format!("{SNAP}/offline.snap"));
    let online = sandbox.read(&format!("{SNAP}/online.snap"));
    assert!(!offline.contains("Team rule."), "{offline}");
    assert!(online.contains(&format!("Instructions from: {url}\nTeam rule.\n")), "{online}");
    let check = sandbox.run(&["check"]);
    assert_eq!(check.code, 0, "{check}");
}

/// The workflow commands a GitHub runner would execute on `stdout`: lines are split at
/// CR, LF and CRLF (as the runner reads them), and `::stop-commands::TOKEN` switches
/// command processing off until a `::TOKEN::` line.
fn runner_commands(stdout: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut stopped: Option<String> = None;
    for line in stdout.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
            }
            continue;
        }
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_owned());
        } else if line.starts_with("::") {
            commands.push(line.to_owned());
        }
    }
    commands
}

#[test]
fn github_output_runs_no_command_it_did_not_mean_to() {
    let sandbox = Sandbox::new();
    // A directory whose name carries workflow commands, and a rule that does too.
    let evil = "x\n::error file=/etc/passwd::injected\r::add-mask::y";
    sandbox.write(&format!("{evil}/AGENTS.md"), "::warning::from a rule\n");
    sandbox.write(
        "ctxgraph.toml",
        &format!("[scenario.evil]\ncwd = {}\n", serde_json::to_string(evil).expect("toml string")),
    );
    snapshot(&sandbox);
    sandbox.write(&format!("{evil}/AGENTS.md"), "::warning::changed\n::error::x\n");
    let run = sandbox.run_with(&["check", "--format", "github"], &[("CI", "true")]);
    assert_eq!(run.code, 1, "{run}");
    // Exactly ours: the failed snapshot, the rule file added and removed, the log group.
    let commands = runner_commands(&run.stdout);
    let names: Vec<&str> = commands.iter().map(|c| c[2..].split([' ', ':']).next().unwrap_or("")).collect();
    assert_eq!(names, ["error", "warning", "warning", "group", "endgroup"], "{run}");
    // The warning on the changed rule names it, escaped.
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("::warning file=x%0A%3A%3Aerror file=/etc/passwd%3A%3Ainjected%0D")),
        "{commands:#?}"
    );
}

#[cfg(unix)]
#[test]
fn check_never_reads_a_snapshot_symlinked_out_of_the_repository() {
    let sandbox = Sandbox::new();
    snapshot(&sandbox);
    // A file outside the repository that looks like a snapshot.
    let outside = sandbox.root().join("outside.snap");
    std::fs::write(&outside, "---\nblake3: 0\n---\nOUTSIDE SECRET\n").expect("write");
    let snap = sandbox.repo().join(SNAP).join("root.snap");
    std::fs::remove_file(&snap).expect("remove");
    std::os::unix::fs::symlink(&outside, &snap).expect("symlink");
    for env in [&[("CI", "true")][..], &[]] {
        let run = sandbox.run_with(&["check", "root"], env);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains("leads outside the repository"), "{run}");
        assert!(!run.stdout.contains("OUTSIDE SECRET") && !run.stderr.contains("OUTSIDE SECRET"), "{run}");
    }
    // A snapshot symlinked to another place inside the repository is fine.
    std::fs::rename(sandbox.repo().join(SNAP).join("api.snap"), sandbox.repo().join("api.snap")).expect("mv");
    std::os::unix::fs::symlink(sandbox.repo().join("api.snap"), sandbox.repo().join(SNAP).join("api.snap"))
        .expect("symlink");
    let run = sandbox.run_with(&["check", "api"], &[("CI", "true")]);
    assert_eq!(run.code, 0, "{run}");
}

#[cfg(unix)]
#[test]
fn snapshot_never_writes_through_a_snapshot_dir_symlinked_out_of_the_repository() {
    let sandbox = Sandbox::new();
    let outside = sandbox.root().join("elsewhere");
    std::fs::create_dir_all(&outside).expect("dir");
    std::fs::create_dir_all(sandbox.repo().join(".ctxgraph")).expect("dir");
    std::os::unix::fs::symlink(&outside, sandbox.repo().join(SNAP)).expect("symlink");
    for args in [&["snapshot"][..], &["check"], &["check", "--accept"]] {
        let run = sandbox.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run}");
        assert!(run.stderr.contains("leads outside the repository"), "{run}");
        assert_eq!(std::fs::read_dir(&outside).expect("list").count(), 0, "{args:?} wrote outside");
    }
    // The same through a symlinked `.ctxgraph`.
    std::fs::remove_file(sandbox.repo().join(SNAP)).expect("rm");
    std::fs::remove_dir(sandbox.repo().join(".ctxgraph")).expect("rmdir");
    std::os::unix::fs::symlink(&outside, sandbox.repo().join(".ctxgraph")).expect("symlink");
    let run = sandbox.run(&["snapshot"]);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(std::fs::read_dir(&outside).expect("list").count(), 0);
}

#[cfg(unix)]
#[test]
fn snapshots_follow_the_umask_and_a_killed_run_leaves_no_temporary_file() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    // What a run killed between writing and renaming leaves, two hours ago; and a file
    // of another program with a similar name.
    let dir = sandbox.repo().join(SNAP);
    std::fs::create_dir_all(&dir).expect("dir");
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
    for name in [".ctxgraph-tmp-a1B2c3", ".tmpXYZ123"] {
        std::fs::write(dir.join(name), vec![0u8; 4096]).expect("write");
        let file = std::fs::File::options().write(true).open(dir.join(name)).expect("open");
        file.set_modified(two_hours_ago).expect("mtime");
    }
    snapshot(&sandbox);
    assert!(!dir.join(".ctxgraph-tmp-a1B2c3").exists(), "our leftover is swept");
    assert!(dir.join(".tmpXYZ123").exists(), "another program's file is left alone");

    let mode = |path: &Path| std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777;
    let plain = sandbox.root().join("plain");
    std::fs::write(&plain, "x").expect("write");
    assert_eq!(mode(&dir.join("root.snap")), mode(&plain), "a snapshot is created like any file");
}

/// A scenario that pins the whole message: opencode's own texts come from the installation
/// (outside the jail); without one the scenario fails saying so, it never pins a placeholder.
#[test]
fn a_message_scenario_needs_the_opencode_installation() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "ctxgraph.toml",
        "[scenario.whole]\nsection = \"message\"\nmodel = \"anthropic/claude-sonnet-4-5\"\nopencode_agent = \"plan\"\n",
    );
    let missing = sandbox.run_with(&["snapshot"], &[("CTXGRAPH_OPENCODE", "/nonexistent/opencode")]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(
        missing.stderr.contains("/nonexistent/opencode") && missing.stderr.contains("installation"),
        "{missing}"
    );
    assert!(!sandbox.exists(&format!("{SNAP}/whole.snap")));

    let bin = ctxgraph_test_support::opencode::installed();
    let with = [("CTXGRAPH_OPENCODE", bin.to_str().expect("utf-8 path"))];
    let run = sandbox.run_with(&["snapshot"], &with);
    assert_eq!(run.code, 0, "{run}");
    let snap = sandbox.read(&format!("{SNAP}/whole.snap"));
    // The manifest names the model prompt's block first; the body then holds the rules.
    assert!(snap.contains("model-prompt"), "{snap}");
    assert!(snap.contains("Instructions from: <repo>/AGENTS.md"), "{snap}");
    let check = sandbox.run_with(&["check"], &with);
    assert_eq!(check.code, 0, "{check}");
}
