//! The other agents' conformance cases: `tests/agents/<agent>/<ID>/` holds a fixture
//! (`proj/`, made a git repository, and `home/`), `case.toml` (the working directory, the
//! agent's `-c` settings, the file the model reads) and what the real agent sent, recorded by
//! `oracle/record-agents.sh` with its scratch run directory written as `<run>`: Codex's
//! `oracle.out`; Gemini's `oracle.system`, `oracle.user` and `oracle.read`; Qwen Code's
//! `oracle.system` and `oracle.read` (its own wording as `<prose:blake3=…>`, the profile's
//! fingerprints, checked against the real package by a test); Copilot's `oracle.system`,
//! `oracle.read` and, for a run it refuses, `oracle.refused`; Kilo's `oracle.system` and
//! `oracle.read`; Cline's and Continue's `oracle.system` (their rules section) and, for a
//! read, `oracle.read` (the tool's result with the file as `<file>`: nothing attached); Aider's
//! `oracle.user` and, for each other order of its read-only files seen in repeated captures,
//! `oracle.user-N`. Each case runs on both `System` backends and must match byte for byte
//! (Aider's files in any order, since its own order is a Python set's).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_agents::copilot::{Prose as CopilotProse, ProseSource as CopilotProseSource};
use ctxgraph_db::agent::Agent;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_db::profile::{Block, Request};
use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::profiles::profile;
use ctxgraph_engine::{Engine, HostEnv, O200k, OsSystem};
use ctxgraph_test_support::tree::{DiskWriter, MemoryWriter, TreeWriter, copy_tree, git_worktree};
use serde::Deserialize;

/// Where in-memory runs live.
const MEMORY_RUN: &str = "/tmp/agents/run";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[allow(dead_code, reason = "documentation for the reader of case.toml")]
    description: String,
    #[allow(dead_code, reason = "tests/rule_ids.rs checks them")]
    #[serde(default)]
    rules: Vec<String>,
    #[serde(default)]
    run: Run,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Run {
    #[serde(default = "dot")]
    cwd: String,
    /// The agent's `-c KEY=VALUE` settings.
    #[serde(default)]
    config: Vec<String>,
    /// Gemini, Qwen Code: the file (relative to `proj/`) the model reads first.
    #[serde(default)]
    read: Option<String>,
    /// Claude Code: files (relative to `proj`) the model reads one after the other;
    /// `oracle.read` holds what each Read result carried after the file.
    #[serde(default)]
    reads: Vec<String>,
    /// Copilot, Aider: the agent is expected to send no request at all (`oracle.refused`).
    #[serde(default)]
    refused: bool,
    /// Aider: `KEY=VALUE` variables in the agent's environment (`$AIDER_READ`).
    #[serde(default)]
    env: Vec<String>,
}

fn dot() -> String {
    ".".to_owned()
}

/// Every case directory of `agent`, sorted.
fn case_dirs(agent: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents").join(agent);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|err| panic!("{}: {err}", root.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| dir.join("case.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> Case {
    let path = dir.join("case.toml");
    let text = std::fs::read_to_string(&path).expect("case.toml is readable");
    toml::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The capture scripts' layout: `<run>/proj` (a git repository), `<run>/home`, and the
/// fixture's `above/` in `<run>` itself (the folder that holds the git root).
fn lay_out(dir: &Path, run: &Path, out: &mut dyn TreeWriter) {
    out.dir(&run.join("home"));
    copy_tree(&dir.join("above"), run, out);
    copy_tree(&dir.join("proj"), &run.join("proj"), out);
    copy_tree(&dir.join("home"), &run.join("home"), out);
    git_worktree(&run.join("proj"), out);
}

/// An engine over the case laid out on `backend`, with HOME inside the run as the capture
/// scripts set it.
fn engine(dir: &Path, disk: bool) -> (Engine, PathBuf, Option<tempfile::TempDir>) {
    engine_with(dir, disk, |_, _, _| {})
}

/// [`engine`], with `extra` writing more of the run before the engine starts.
fn engine_with(
    dir: &Path,
    disk: bool,
    extra: fn(&Path, &Path, &mut dyn TreeWriter),
) -> (Engine, PathBuf, Option<tempfile::TempDir>) {
    engine_with_env(dir, disk, extra, &[])
}

/// [`engine_with`], with `env` (`KEY=VALUE`) in the host's variables besides `HOME`.
fn engine_with_env(
    dir: &Path,
    disk: bool,
    extra: fn(&Path, &Path, &mut dyn TreeWriter),
    env: &[String],
) -> (Engine, PathBuf, Option<tempfile::TempDir>) {
    let (system, run, scratch): (Arc<dyn System>, PathBuf, _) = if disk {
        let scratch = tempfile::tempdir().expect("temp dir");
        let run = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
        lay_out(dir, &run, &mut DiskWriter);
        extra(dir, &run, &mut DiskWriter);
        (Arc::new(OsSystem), run, Some(scratch))
    } else {
        let fs = MemorySystem::new();
        let run = PathBuf::from(MEMORY_RUN);
        lay_out(dir, &run, &mut MemoryWriter(&fs));
        extra(dir, &run, &mut MemoryWriter(&fs));
        (Arc::new(fs), run, None)
    };
    let home = run.join("home");
    let mut vars: std::collections::BTreeMap<String, String> =
        [("HOME".to_owned(), home.to_string_lossy().into_owned())].into();
    vars.extend(env.iter().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned())));
    let env = HostEnv { vars, home, platform: "linux".to_owned(), date: String::new() };
    (Engine::new(system, env), run, scratch)
}

/// The case's `-c` settings as the profile's request takes them.
fn request(case: &Case, agent: Agent) -> Request {
    let settings = case
        .run
        .config
        .iter()
        .map(|setting| {
            let (key, value) = setting.split_once('=').expect("KEY=VALUE");
            (key.to_owned(), value.to_owned())
        })
        .collect();
    Request { settings, wording: profile(agent).fingerprints() }
}

/// Every block of a layout is the bytes its range names, and its hash is theirs.
fn check_blocks(text: &str, blocks: &[Block]) -> Result<(), String> {
    for block in blocks {
        let bytes = text.get(block.range.clone()).ok_or("a block's range is outside the text")?;
        if ContentHash::of(bytes) != block.hash {
            return Err(format!("{}: the hash is not the range's", block.source.display()));
        }
    }
    Ok(())
}

/// A case's recorded output file `name` (`oracle.system`, `oracle.read`, …).
fn recorded(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect("oracle files: run tests/oracle/record-agents.sh")
}

fn codex_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = std::fs::read_to_string(dir.join("oracle.out"))
        .expect("oracle.out: run tests/oracle/record-agents.sh");
    let (mut engine, run, _scratch) = engine(dir, disk);
    let ws = engine.open(&run.join("proj").join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let layout =
        engine.agent_layout(ws, Agent::Codex, &request(&case, Agent::Codex)).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let got = layout.text.replace(run.to_string_lossy().as_ref(), "<run>");
    if got == expected {
        Ok(())
    } else {
        Err(format!("--- codex sent\n{expected:?}\n--- ctxgraph built\n{got:?}"))
    }
}

fn gemini_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine(dir, disk);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let context = engine.gemini_context(ws).map_err(|e| e.to_string())?;
    let portable =
        |text: Option<&str>| text.unwrap_or_default().replace(run.to_string_lossy().as_ref(), "<run>");
    let mut got = vec![
        ("oracle.system", portable(context.system.as_deref())),
        ("oracle.user", portable(context.user.as_deref())),
    ];
    // The profile's layout is the same text, every block placed in it.
    let layout =
        engine.agent_layout(ws, Agent::Gemini, &request(&case, Agent::Gemini)).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    if layout.text != context.text() {
        return Err("the profile's layout is not the context's text".to_owned());
    }
    if let Some(read) = &case.run.read {
        let attached = engine
            .agent_read(ws, Agent::Gemini, &proj.join(read), &request(&case, Agent::Gemini))
            .map_err(|e| e.to_string())?;
        check_blocks(&attached.text, &attached.blocks)?;
        got.push(("oracle.read", portable(Some(attached.text.as_str()).filter(|t| !t.is_empty()))));
    }
    let diffs: Vec<String> = got
        .into_iter()
        .filter(|(name, text)| *text != expected(name))
        .map(|(name, text)| {
            format!("--- {name}: gemini sent\n{:?}\n--- ctxgraph built\n{text:?}", expected(name))
        })
        .collect();
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n")) }
}

/// Fixture files may name the run directory as `<run>` (absolute imports, the keys of
/// `~/.claude.json`); the recorder writes the real one in before capturing, and so does this.
fn substitute_run(dir: &Path, run: &Path, out: &mut dyn TreeWriter) {
    fn walk(from: &Path, to: &Path, run: &Path, out: &mut dyn TreeWriter) {
        let Ok(entries) = std::fs::read_dir(from) else { return };
        for entry in entries.filter_map(Result::ok) {
            let (source, target) = (entry.path(), to.join(entry.file_name()));
            if source.is_dir() {
                walk(&source, &target, run, out);
            } else if let Ok(text) = std::fs::read_to_string(&source)
                && text.contains("<run>")
            {
                out.file(&target, text.replace("<run>", &run.to_string_lossy()).into_bytes());
            }
        }
    }
    for part in ["proj", "home"] {
        walk(&dir.join(part), &run.join(part), run, out);
    }
    walk(&dir.join("above"), run, run, out);
}

fn claude_code_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = std::fs::read_to_string(dir.join("oracle.out"))
        .expect("oracle.out: run tests/oracle/record-agents.sh");
    let (mut engine, run, _scratch) = engine_with(dir, disk, substitute_run);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let scrub = |text: String| text.replace(run.to_string_lossy().as_ref(), "<run>");
    let layout = engine
        .agent_layout(ws, Agent::ClaudeCode, &request(&case, Agent::ClaudeCode))
        .map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let got = scrub(layout.text);
    if got != expected {
        return Err(format!("--- claude code sent\n{expected}\n--- ctxgraph built\n{got}"));
    }
    if !case.run.reads.is_empty() {
        let expected = std::fs::read_to_string(dir.join("oracle.read")).expect("oracle.read");
        let files: Vec<PathBuf> = case.run.reads.iter().map(|read| proj.join(read)).collect();
        let attachments = engine.claude_code_reads(ws, &files).map_err(|e| e.to_string())?;
        let got: String = case
            .run
            .reads
            .iter()
            .zip(&attachments)
            .map(|(read, attachment)| scrub(format!("--- read {read} ---\n{}\n", attachment.text())))
            .collect();
        if got != expected {
            return Err(format!(
                "--- claude code attached to the Read\n{expected}\n--- ctxgraph built\n{got}"
            ));
        }
    }
    Ok(())
}

fn qwen_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine_with(dir, disk, substitute_run);
    let proj = run.join("proj");
    let cwd = ctxgraph_db::path::normalize(&proj.join(&case.run.cwd));
    let ws = engine.open(&cwd).map_err(|e| e.to_string())?;
    // Qwen's own text (the output-language file it writes) as the recordings keep it: its
    // fingerprint.
    let request = request(&case, Agent::QwenCode);
    let layout = engine.agent_layout(ws, Agent::QwenCode, &request).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let portable = |text: &str| text.replace(run.to_string_lossy().as_ref(), "<run>");
    let mut got = vec![("oracle.system", portable(&layout.text))];
    if let Some(read) = &case.run.read {
        let target = ctxgraph_db::path::normalize(&proj.join(read));
        let attached =
            engine.agent_read(ws, Agent::QwenCode, &target, &request).map_err(|e| e.to_string())?;
        check_blocks(&attached.text, &attached.blocks)?;
        got.push(("oracle.read", portable(&attached.text)));
    }
    let diffs: Vec<String> = got
        .into_iter()
        .filter(|(name, text)| *text != expected(name))
        .map(|(name, text)| format!("--- {name}: qwen sent\n{}\n--- ctxgraph built\n{text}", expected(name)))
        .collect();
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n")) }
}

fn copilot_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine(dir, disk);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let scrub = |text: &str| text.replace(run.to_string_lossy().as_ref(), "<run>");
    let request = request(&case, Agent::Copilot);
    let layout = engine.agent_layout(ws, Agent::Copilot, &request).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let context = engine.copilot_context(ws);
    if layout.blocks.len() != context.sent().count() {
        return Err("a sent file has no block in the layout".to_owned());
    }
    // CP13: the verdict with the host's tokenizer, and the layout's own estimate, agree with
    // what Copilot did.
    let budget = context.budget(&CopilotProse::fingerprints(), &O200k);
    if budget.refused != case.run.refused || layout.note.is_some() != case.run.refused {
        return Err(format!("copilot refused: {}; ctxgraph's budget: {budget:?}", case.run.refused));
    }
    if case.run.refused {
        assert_eq!(expected("oracle.refused").trim(), "compaction_static_context_blocked");
        return Ok(());
    }
    let mut diffs = Vec::new();
    let got = scrub(&layout.text);
    if got != expected("oracle.system") {
        diffs.push(format!(
            "--- oracle.system: copilot sent\n{}\n--- ctxgraph built\n{got}",
            expected("oracle.system")
        ));
    }
    if let Some(read) = &case.run.read {
        let attached =
            engine.agent_read(ws, Agent::Copilot, &proj.join(read), &request).map_err(|e| e.to_string())?;
        check_blocks(&attached.text, &attached.blocks)?;
        let got = scrub(&attached.text);
        if got != expected("oracle.read") {
            diffs.push(format!(
                "--- oracle.read: copilot sent\n{}\n--- ctxgraph built\n{got}",
                expected("oracle.read")
            ));
        }
    }
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n")) }
}

fn cline_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine(dir, disk);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let request = request(&case, Agent::Cline);
    let layout = engine.agent_layout(ws, Agent::Cline, &request).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let got = layout.text.replace(run.to_string_lossy().as_ref(), "<run>");
    if got != expected("oracle.system") {
        return Err(format!("--- cline sent\n{}\n--- ctxgraph built\n{got}", expected("oracle.system")));
    }
    if let Some(read) = &case.run.read {
        // CL10: what the real read_files result held besides the file's own lines: nothing,
        // and the profile attaches nothing either.
        let recorded: serde_json::Value =
            serde_json::from_str(&expected("oracle.read")).map_err(|e| format!("oracle.read: {e}"))?;
        let result = recorded[0]["result"].as_str().ok_or("oracle.read: no result")?;
        let own_lines = result
            .lines()
            .all(|line| line.split_once(" | ").is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok()));
        if !own_lines || layout.blocks.iter().any(|b| result.contains(layout.text_of(b))) {
            return Err(format!("the recorded read result holds more than the file: {result:?}"));
        }
        if !engine
            .agent_read(ws, Agent::Cline, &proj.join(read), &request)
            .map_err(|e| e.to_string())?
            .text
            .is_empty()
        {
            return Err("the Cline profile attaches something to a read".to_owned());
        }
    }
    Ok(())
}

fn continue_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine(dir, disk);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let request = request(&case, Agent::Continue);
    let layout = engine.agent_layout(ws, Agent::Continue, &request).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let got = layout.text.replace(run.to_string_lossy().as_ref(), "<run>");
    if got != expected("oracle.system") {
        return Err(format!("--- continue sent\n{}\n--- ctxgraph built\n{got}", expected("oracle.system")));
    }
    if let Some(read) = &case.run.read {
        // CN8: the real Read result held the file under one line naming it, and nothing more;
        // the profile attaches nothing either.
        let recorded = expected("oracle.read");
        let named = format!("Content of <run>/proj/{read}:\n<file>");
        if recorded.trim_end_matches('\n') != named {
            return Err(format!("the recorded Read result holds more than the file: {recorded:?}"));
        }
        if !engine
            .agent_read(ws, Agent::Continue, &proj.join(read), &request)
            .map_err(|e| e.to_string())?
            .text
            .is_empty()
        {
            return Err("the Continue profile attaches something to a read".to_owned());
        }
    }
    Ok(())
}

fn check_all(agent: &str, run: fn(&Path, bool) -> Result<(), String>) {
    let dirs = case_dirs(agent);
    assert!(!dirs.is_empty(), "no {agent} cases");
    let mut failures = Vec::new();
    for dir in &dirs {
        for disk in [false, true] {
            if let Err(diff) = run(dir, disk) {
                let backend = if disk { "disk" } else { "memory" };
                failures.push(format!("{} ({backend}):\n{diff}", dir.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs differ from the oracle:\n{}",
        failures.len(),
        dirs.len() * 2,
        failures.join("\n\n")
    );
}

#[test]
fn codex_cases_match_the_recorded_binary() {
    check_all("codex", codex_case);
}

#[test]
fn gemini_cases_match_the_recorded_binary() {
    check_all("gemini", gemini_case);
}

#[test]
fn claude_code_cases_match_the_recorded_binary() {
    check_all("claude-code", claude_code_case);
}

#[test]
fn cline_cases_match_the_recorded_binary() {
    check_all("cline", cline_case);
}

#[test]
fn continue_cases_match_the_recorded_binary() {
    check_all("continue", continue_case);
}

#[test]
fn qwen_code_cases_match_the_recorded_binary() {
    check_all("qwen-code", qwen_case);
}

/// The Qwen Code fingerprints the cases keep are the real package's wording: through the
/// engine's generic loader, the installed 0.24.4's output-language text for each recorded
/// language hashes to the token, and a case's layout says where its wording came from.
/// The package is installed from the npm registry into the test cache once, under the lock
/// every test binary shares (test-support), as opencode is.
#[test]
fn qwen_code_fingerprints_are_the_installed_wording() {
    use ctxgraph_agents::qwen_code::Wording;
    use ctxgraph_db::profile::WordingSource;

    let package = ctxgraph_test_support::qwen_code::installed();
    let loaded = ctxgraph_engine::wording::load(
        Agent::QwenCode,
        Some(&package),
        &std::collections::BTreeMap::default(),
    )
    .expect("Qwen Code has wording of its own");
    let wording = (loaded.as_ref() as &dyn std::any::Any).downcast_ref::<Wording>().expect("a qwen Wording");
    assert!(!wording.is_unavailable(), "{}: {:?}", package.display(), wording.source);
    let fingerprints = Wording::fingerprints();
    for language in [None, Some("French"), Some("Chinese")] {
        let own = wording.written(language);
        let token = format!("<prose:blake3={}>", blake3::hash(own.as_bytes()).to_hex());
        assert_eq!(fingerprints.written(language), token, "{language:?}");
    }

    let dir = case_dirs("qwen-code").into_iter().find(|d| d.ends_with("QW-07")).expect("QW-07");
    let case = load(&dir);
    let (mut engine, run, _scratch) = engine_with(&dir, false, substitute_run);
    let ws = engine.open(&run.join("proj").join(&case.run.cwd)).expect("open");
    let request = Request { settings: Vec::new(), wording: Some(loaded.clone()) };
    let layout = engine.agent_layout(ws, Agent::QwenCode, &request).expect("layout");
    assert!(matches!(layout.wording, WordingSource::Installation { ref version, .. } if version == "0.24.4"));
    check_blocks(&layout.text, &layout.blocks).expect("blocks");
    let own = wording.written(Some("French"));
    let text = layout.text.replace(&own, &fingerprints.written(Some("French")));
    let expected = std::fs::read_to_string(dir.join("oracle.system")).expect("oracle.system");
    assert_eq!(text.replace(run.to_string_lossy().as_ref(), "<run>"), expected);
}

/// Kilo's cases: the `Instructions from:` parts of its system message (`oracle.system`) and
/// what a read's result carries after the file (`oracle.read`).
fn kilo_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let expected = |name: &str| recorded(dir, name);
    let (mut engine, run, _scratch) = engine(dir, disk);
    let proj = run.join("proj");
    let ws = engine.open(&proj.join(&case.run.cwd)).map_err(|e| e.to_string())?;
    let request = request(&case, Agent::Kilo);
    let layout = engine.agent_layout(ws, Agent::Kilo, &request).map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let portable = |text: &str| text.replace(run.to_string_lossy().as_ref(), "<run>");
    let mut got = vec![("oracle.system", portable(&layout.text))];
    if let Some(read) = &case.run.read {
        let attached =
            engine.agent_read(ws, Agent::Kilo, &proj.join(read), &request).map_err(|e| e.to_string())?;
        check_blocks(&attached.text, &attached.blocks)?;
        got.push(("oracle.read", portable(&attached.text)));
    }
    let diffs: Vec<String> = got
        .into_iter()
        .filter(|(name, text)| *text != expected(name))
        .map(|(name, text)| format!("--- {name}: kilo sent\n{}\n--- ctxgraph built\n{text}", expected(name)))
        .collect();
    if diffs.is_empty() { Ok(()) } else { Err(diffs.join("\n")) }
}

#[test]
fn kilo_cases_match_the_recorded_binary() {
    check_all("kilo", kilo_case);
}

/// `text` is `prefix` then every one of `parts` exactly once, in some order: Aider's read-only
/// files come in a Python set's order (AI5). Parts are tried in turn at each position, with
/// backtracking (a part may be a prefix of another); bounded by the few parts a case has.
fn is_some_order(text: &str, prefix: &str, parts: &[&str]) -> bool {
    fn rest_matches(rest: &str, parts: &[&str], used: &mut Vec<bool>) -> bool {
        if used.iter().all(|u| *u) {
            return rest.is_empty();
        }
        for i in 0..parts.len() {
            if !used[i] && rest.starts_with(parts[i]) {
                used[i] = true;
                if rest_matches(&rest[parts[i].len()..], parts, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    text.strip_prefix(prefix).is_some_and(|rest| rest_matches(rest, parts, &mut vec![false; parts.len()]))
}

fn aider_case(dir: &Path, disk: bool) -> Result<(), String> {
    let case = load(dir);
    let mut recorded: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("case dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("oracle.user")))
        .collect();
    recorded.sort();
    let (mut engine, run, _scratch) = engine_with_env(dir, disk, |_, _, _| {}, &case.run.env);
    let cwd = ctxgraph_db::path::normalize(&run.join("proj").join(&case.run.cwd));
    let ws = engine.open(&cwd).map_err(|e| e.to_string())?;
    let built = engine.agent_layout(ws, Agent::Aider, &request(&case, Agent::Aider));
    if case.run.refused {
        assert!(dir.join("oracle.refused").is_file(), "oracle.refused: run tests/oracle/record-agents.sh");
        return match built {
            Err(err) if err.to_string().contains("would not start") => Ok(()),
            other => Err(format!("aider refused to start; ctxgraph built {other:?}")),
        };
    }
    if recorded.is_empty() {
        return Err("no oracle.user: run tests/oracle/record-agents.sh".to_owned());
    }
    let layout = built.map_err(|e| e.to_string())?;
    check_blocks(&layout.text, &layout.blocks)?;
    let portable = |text: &str| text.replace(run.to_string_lossy().as_ref(), "<run>");
    let text = portable(&layout.text);
    let prefix = layout.blocks.first().map_or(text.as_str(), |b| &text[..b.range.start]);
    let parts: Vec<String> = layout.blocks.iter().map(|b| portable(layout.text_of(b))).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    // AI5: several orders recorded, or several files, is exactly what the layout marks unordered.
    let unordered = layout.blocks.iter().all(|b| b.unordered && b.unstable.is_some());
    if (recorded.len() > 1 && !unordered)
        || (layout.blocks.len() > 1) != (unordered && !layout.blocks.is_empty())
    {
        return Err(format!(
            "{} orders recorded, {} blocks, unordered: {unordered}",
            recorded.len(),
            layout.blocks.len()
        ));
    }
    for path in &recorded {
        let expected = std::fs::read_to_string(path).expect("oracle.user");
        let same = if unordered { is_some_order(&expected, prefix, &parts) } else { expected == text };
        if !same {
            return Err(format!(
                "--- {}: aider sent\n{expected}\n--- ctxgraph built\n{text}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    Ok(())
}

#[test]
fn aider_cases_match_the_recorded_binary() {
    check_all("aider", aider_case);
}

#[test]
fn an_order_check_takes_every_part_once() {
    assert!(is_some_order("P-b-a", "P", &["-a", "-b"]));
    assert!(is_some_order("P-a-ab", "P", &["-a", "-ab"]), "backtracks when one part prefixes another");
    assert!(!is_some_order("P-a-a", "P", &["-a", "-b"]));
    assert!(!is_some_order("P-a", "P", &["-a", "-b"]));
    assert!(!is_some_order("Q-a-b", "P", &["-a", "-b"]));
}

/// AI9: the wording comes from the installed package (pip's launcher followed to its virtual
/// environment's `aider/coders/base_prompts.py`), and it is what the recordings keep as a
/// token: a case built with it, the token written back, is the recording. The package is
/// installed from the Python package index into the test cache once, under the lock every test binary shares.
#[test]
fn aider_wording_is_read_from_the_installed_package() {
    use ctxgraph_agents::aider::Wording;
    use ctxgraph_agents::claude_code::ProseSource;

    let launcher = ctxgraph_test_support::aider::installed();
    let wording = ctxgraph_engine::aider::aider_wording(Some(&launcher), &std::collections::BTreeMap::new());
    assert!(
        matches!(&wording.source, ProseSource::Installation { version, .. } if version == "0.86.2"),
        "{:?}",
        wording.source
    );
    let token = format!("<prose:blake3={}>", blake3::hash(wording.read_only_prefix.as_bytes()).to_hex());
    assert_eq!(token, Wording::fingerprints().read_only_prefix);

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/aider/AI-04");
    let (mut engine, run, _scratch) = engine(&dir, false);
    let ws = engine.open(&run.join("proj")).expect("workspace");
    let request = Request { settings: Vec::new(), wording: Some(Arc::new(wording.clone())) };
    let layout = engine.agent_layout(ws, Agent::Aider, &request).expect("layout");
    assert!(matches!(layout.wording, ctxgraph_db::profile::WordingSource::Installation { .. }));
    let expected = std::fs::read_to_string(dir.join("oracle.user")).expect("oracle.user");
    assert_eq!(layout.text.replacen(&wording.read_only_prefix, &token, 1), expected);
}

/// AI9: no installation, or a path without the package, is a placeholder with the reason.
#[test]
fn aider_wording_without_an_installation_is_a_placeholder() {
    let none = ctxgraph_engine::aider::aider_wording(None, &std::collections::BTreeMap::new());
    assert!(none.is_unavailable() && none.read_only_prefix.contains("unavailable"), "{none:?}");
    assert!(format!("{:?}", none.source).contains("--agent-path"));
    let scratch = tempfile::tempdir().expect("temp dir");
    let elsewhere =
        ctxgraph_engine::aider::aider_wording(Some(scratch.path()), &std::collections::BTreeMap::new());
    assert!(format!("{:?}", elsewhere.source).contains("no aider package"), "{elsewhere:?}");
}

#[test]
fn copilot_cases_match_the_recorded_binary() {
    check_all("copilot", copilot_case);
}

/// CP16: the wording comes from the installed package (the npm launcher followed to the
/// platform executable and the runtime in its archive), and it is what the recordings keep
/// as tokens: a case built with it, the tokens written back, is the recording.
#[test]
fn copilot_wording_is_read_from_the_installed_package() {
    let launcher = ctxgraph_test_support::copilot::installed();
    let prose = ctxgraph_engine::copilot::copilot_prose(Some(&launcher), &std::collections::BTreeMap::new());
    assert!(
        matches!(&prose.source, CopilotProseSource::Installation { version, .. } if version == "1.0.102"),
        "{:?}",
        prose.source
    );
    let token = |text: &str| format!("<prose:blake3={}>", blake3::hash(text.as_bytes()).to_hex());
    let fingerprints = CopilotProse::fingerprints();
    assert_eq!(token(&prose.table_intro), fingerprints.table_intro);
    assert_eq!(token(&prose.read_before), fingerprints.read_before);
    assert_eq!(token(&prose.read_after), fingerprints.read_after);

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/copilot/CP-01");
    let (mut engine, run, _scratch) = engine(&dir, false);
    let ws = engine.open(&run.join("proj")).expect("workspace");
    let section = engine.copilot_context(ws).section(&prose);
    let tokens = section.replace(&prose.table_intro, &fingerprints.table_intro);
    let expected = std::fs::read_to_string(dir.join("oracle.system")).expect("oracle.system");
    assert_eq!(tokens.replace(run.to_string_lossy().as_ref(), "<run>"), expected);
}

/// CP16: anything else is refused with a reason, and the text gets placeholders.
#[test]
fn copilot_wording_without_an_installation_is_a_placeholder() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let fake = scratch.path().join("copilot");
    std::fs::write(&fake, vec![b'x'; 2 * 1024 * 1024]).expect("write");
    let prose = ctxgraph_engine::copilot::copilot_prose(Some(&fake), &std::collections::BTreeMap::new());
    assert!(prose.is_unavailable() && prose.table_intro.contains("unavailable"), "{prose:?}");
    let none = ctxgraph_engine::copilot::copilot_prose(None, &std::collections::BTreeMap::new());
    assert!(
        matches!(none.source, CopilotProseSource::Unavailable { ref reason } if reason.contains("--copilot"))
    );
}
