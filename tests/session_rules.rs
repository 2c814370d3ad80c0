//! `session rules`. Claude Code 2.1.332 first: every recorded
//! session in `agents/claude-code/sessions/<case>/` (recorded by `oracle/cc_sessions.py`),
//! on both `System` backends. The transcript is Claude Code's own, its wording replaced by
//! placeholders of the same length; `expected.json` holds, per main-loop request, the bytes
//! of each rule file the captured request body carried, computed by the recorder from the
//! request bodies, not from the transcript and not by ctxgraph. Codex 0.171.0 the same way
//! (`agents/codex/sessions/`, `oracle/codex_sessions.py`): its rollout, and the project and
//! home as the session left them. Then opencode's `session rules` over one of its recorded
//! sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::{Agent, Engine, HostEnv, OsSystem};

/// Per step: each file's bytes.
type Steps = Vec<BTreeMap<String, u64>>;

/// Claude Code's recorded sessions.
fn cases() -> Vec<PathBuf> {
    cases_of("claude-code")
}

/// The recorded sessions of the agent in `tests/agents/<folder>/sessions/`.
fn cases_of(folder: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents").join(folder).join("sessions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|err| panic!("{}: {err}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn expected(dir: &Path) -> Steps {
    expected_in(dir, "<run>")
}

/// The recorded bytes for a case laid out in the folder `run`: a recording that counted the
/// run folder's name in a text (`run_mentions`, Codex's) wrote it `<run>`.
fn expected_in(dir: &Path, run: &str) -> Steps {
    let longer = run.len() as u64 - "<run>".len() as u64;
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let steps = value["steps"].as_array().expect("steps");
    steps
        .iter()
        .map(|step| {
            let files = step["files"].as_array().expect("files");
            files
                .iter()
                .map(|f| {
                    let mentions = f["run_mentions"].as_u64().unwrap_or_default();
                    let bytes = f["bytes"].as_u64().expect("bytes") + mentions * longer;
                    (f["path"].as_str().expect("path").to_owned(), bytes)
                })
                .collect()
        })
        .collect()
}

/// The transcript laid out on one backend, and what `session rules` makes of it.
fn measured(dir: &Path, disk: bool) -> Steps {
    let transcript = std::fs::read(dir.join("transcript.jsonl")).expect("transcript.jsonl");
    let scratch = tempfile::tempdir().expect("temp dir");
    let (system, root): (Arc<dyn System>, PathBuf) = if disk {
        let root = std::fs::canonicalize(scratch.path()).expect("canonical");
        std::fs::write(root.join("session.jsonl"), &transcript).expect("write");
        (Arc::new(OsSystem), root)
    } else {
        let fs = MemorySystem::new();
        let root = PathBuf::from("/tmp/cc-sessions");
        fs.write_file(root.join("session.jsonl"), transcript);
        (Arc::new(fs), root)
    };
    let mut engine = Engine::new(system, HostEnv::fixed(root.join("home")));
    let ws = engine.open(&root).expect("open");
    let costs =
        engine.session_costs(ws, Agent::ClaudeCode, Path::new("session.jsonl")).expect("session rules");
    let total: u64 = costs.total.iter().map(|f| f.bytes).sum();
    let summed: u64 = costs.steps.iter().flat_map(|s| &s.files).map(|f| f.bytes).sum();
    assert_eq!(total, summed, "the totals are the steps' sums");
    let steps: Steps = costs
        .steps
        .iter()
        .map(|step| step.files.iter().map(|f| (f.path.to_string_lossy().into_owned(), f.bytes)).collect())
        .collect();
    // `explain --session`: every file that joined or left a step says why.
    for (index, step) in costs.steps.iter().enumerate().skip(1) {
        let explained: std::collections::BTreeSet<String> =
            step.why.iter().map(|w| w.path.to_string_lossy().into_owned()).collect();
        let (now, before) = (&steps[index], &steps[index - 1]);
        for path in now
            .keys()
            .filter(|p| !before.contains_key(*p))
            .chain(before.keys().filter(|p| !now.contains_key(*p)))
        {
            assert!(
                explained.contains(path),
                "{} step {}: {path} joined or left unexplained",
                dir.display(),
                index + 1
            );
        }
    }
    steps
}

#[test]
fn every_recorded_session_matches_the_request_bodies() {
    let dirs = cases();
    assert!(dirs.len() >= 2, "recorded sessions: {dirs:?}");
    for dir in &dirs {
        let want = expected(dir);
        for disk in [false, true] {
            let got = measured(dir, disk);
            assert_eq!(got, want, "{} (disk: {disk}): per-step bytes", dir.display());
        }
    }
}

/// An engine over an in-memory `/tmp/cc-sessions` holding one file.
fn in_memory(name: &str, text: String) -> (Engine, ctxgraph_db::Workspace) {
    in_memory_with(&[(name, text)])
}

/// An engine over an in-memory `/tmp/cc-sessions` holding these files.
fn in_memory_with(files: &[(&str, String)]) -> (Engine, ctxgraph_db::Workspace) {
    let fs = MemorySystem::new();
    let root = PathBuf::from("/tmp/cc-sessions");
    for (name, text) in files {
        fs.write_file(root.join(name), text.clone());
    }
    let mut engine = Engine::new(Arc::new(fs), HostEnv::fixed(root.join("home")));
    let ws = engine.open(&root).expect("open");
    (engine, ws)
}

/// A record cut in the middle of a line is refused at that line, never half-reported:
/// Claude Code's transcript and Codex's rollout alike.
#[test]
fn a_cut_record_is_refused_at_its_line() {
    for (agent, folder, record) in
        [(Agent::ClaudeCode, "claude-code", "transcript.jsonl"), (Agent::Codex, "codex", "rollout.jsonl")]
    {
        let dir = &cases_of(folder)[0];
        let text = std::fs::read_to_string(dir.join(record)).expect("record");
        let lines: Vec<&str> = text.lines().collect();
        let cut = format!("{}\n{}\n", lines[..3].join("\n"), &lines[3][..lines[3].len() / 2]);
        let (engine, ws) = in_memory("session.jsonl", cut);
        let err = engine.session_costs(ws, agent, Path::new("session.jsonl")).expect_err("cut");
        let message = err.to_string();
        assert!(message.contains("/tmp/cc-sessions/session.jsonl:4: not JSON"), "{agent}: {message}");
    }
}

/// Every file below `from`, relative to it.
fn files_below(from: &Path, below: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(from.join(below)).expect("case folder").filter_map(Result::ok) {
        let rel = below.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            files_below(from, &rel, out);
        } else {
            out.push((rel, std::fs::read(entry.path()).expect("read")));
        }
    }
}

/// A Codex case laid out on one backend (its rollout, `proj/` as a git repository, `home/`):
/// what `session rules` makes of it, and what the recording says for that layout.
fn rollout_measured(dir: &Path, disk: bool) -> (Steps, Steps) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut tree = Vec::new();
    for top in ["proj", "home"] {
        files_below(dir, Path::new(top), &mut tree);
    }
    let root =
        if disk { std::fs::canonicalize(scratch.path()).expect("canonical") } else { "/tmp/cx-run".into() };
    let run = root.to_string_lossy().into_owned();
    let rollout = std::fs::read_to_string(dir.join("rollout.jsonl")).expect("rollout").replace("<run>", &run);
    tree.push(("rollout.jsonl".into(), rollout.into_bytes()));
    let system: Arc<dyn System> = if disk {
        for (rel, bytes) in &tree {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, bytes).expect("write");
        }
        let git =
            std::process::Command::new("git").args(["init", "-q"]).current_dir(root.join("proj")).status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
        Arc::new(OsSystem)
    } else {
        let fs = MemorySystem::new();
        for (rel, bytes) in tree {
            fs.write_file(root.join(rel), bytes);
        }
        fs.init_git_repo(root.join("proj"));
        Arc::new(fs)
    };
    let mut engine = Engine::new(system, HostEnv::fixed(root.join("home")));
    let ws = engine.open(&root.join("proj")).expect("open");
    let costs = engine.session_costs(ws, Agent::Codex, &root.join("rollout.jsonl")).expect("session rules");
    let total: u64 = costs.total.iter().map(|f| f.bytes).sum();
    let summed: u64 = costs.steps.iter().flat_map(|s| &s.files).map(|f| f.bytes).sum();
    assert_eq!(total, summed, "the totals are the steps' sums");
    let got = costs
        .steps
        .iter()
        .map(|step| {
            step.files.iter().map(|f| (f.path.to_string_lossy().replace(&run, "<run>"), f.bytes)).collect()
        })
        .collect();
    (got, expected_in(dir, &run))
}

#[test]
fn every_recorded_codex_rollout_matches_the_request_bodies() {
    let dirs = cases_of("codex");
    assert!(dirs.len() >= 2, "recorded sessions: {dirs:?}");
    for dir in &dirs {
        for disk in [false, true] {
            let (got, want) = rollout_measured(dir, disk);
            assert_eq!(got, want, "{} (disk: {disk}): per-request bytes", dir.display());
        }
    }
}

/// opencode's `session rules` over the manual-compaction recording (`tests/session/e04…`,
/// recorded from opencode 1.18.33): the read's rule piece, as the export holds the read's
/// output, rides in every later step, is gone from the first step after the compaction (whose
/// real request, `next-1.json`, carries no rule), and comes back with the read after it.
#[test]
fn an_opencode_session_carries_a_read_rule_until_the_compaction() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("session/e04_manual_then_reread");
    let export = std::fs::read_to_string(dir.join("export.json")).expect("export");
    let value: serde_json::Value = serde_json::from_str(&export).expect("JSON");
    let output = value["messages"][1]["parts"][1]["state"]["output"].as_str().expect("the read's output");
    let start = output.find("Instructions from: ").expect("the reminder");
    let piece = &output[start..output.rfind("\n</system-reminder>").expect("its end")];
    let next = std::fs::read_to_string(dir.join("next-1.json")).expect("next-1.json");
    assert!(!next.contains("Instructions from: "), "the request after the compaction carries no rule");

    let (engine, ws) = in_memory("export.json", export);
    let costs = engine.session_costs(ws, Agent::Opencode, Path::new("export.json")).expect("session rules");
    let bytes: Vec<u64> = costs.steps.iter().map(|s| s.files.iter().map(|f| f.bytes).sum()).collect();
    let piece = piece.len() as u64;
    assert_eq!(bytes, [0, piece, piece, 0, piece], "one step per assistant message but the summary");
    assert!(costs.steps[3].after_compaction);
    assert_eq!(costs.total[0].path, Path::new("<PROJ>/sub/AGENTS.md"));
}

/// `nearby --session` for Claude Code: a Read at a recorded session's next step attaches what
/// the real Claude Code attached to that Read. Each session is cut just after the request
/// before a step whose model answer was one Read; what that step's recorded request gained
/// per rule file (`expected.json`: this step's bytes minus the step before's) must be what
/// ctxgraph attaches, read on the fixture as the session left it (`files.json`). Reads before
/// a compaction are left out where the session changed a rule file later (the fixture holds
/// only the final text).
#[test]
fn a_read_at_a_recorded_step_attaches_what_claude_code_attached() {
    let (mut checked, mut attaching) = (0, 0);
    for dir in cases() {
        let text = std::fs::read_to_string(dir.join("transcript.jsonl")).expect("transcript");
        let lines: Vec<&str> = text.lines().collect();
        let records: Vec<serde_json::Value> =
            lines.iter().map(|l| serde_json::from_str(l).expect("JSON")).collect();
        let kind = |i: usize| records[i]["type"].as_str().unwrap_or_default().to_owned();
        let requests: Vec<usize> = (0..records.len()).filter(|&i| kind(i) == "api-request").collect();
        let compaction = (0..records.len()).rfind(|&i| records[i]["subtype"] == "compact_boundary");
        let files: BTreeMap<String, String> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("files.json")).expect("files.json"))
                .expect("files.json");
        let want_steps = expected(&dir);
        for k in 1..requests.len() {
            if compaction.is_some_and(|c| requests[k - 1] < c) {
                continue;
            }
            let calls: Vec<&serde_json::Value> = (requests[k - 1]..requests[k])
                .filter(|&i| kind(i) == "assistant")
                .flat_map(|i| records[i]["message"]["content"].as_array().expect("content"))
                .collect();
            let [call] = calls.as_slice() else { continue };
            if call["name"] != "Read" {
                continue;
            }
            let read = call["input"]["file_path"].as_str().expect("file_path");
            let fs = MemorySystem::new();
            for (path, text) in &files {
                fs.write_file(path, text.clone());
            }
            fs.write_file("/w/session.jsonl", lines[..=requests[k - 1]].join("\n"));
            let mut engine = Engine::new(Arc::new(fs), HostEnv::fixed("/w/home"));
            let ws = engine.open(Path::new("/w/proj")).expect("open");
            let layout = engine
                .agent_read_in_session(
                    ws,
                    Agent::ClaudeCode,
                    Path::new(read),
                    &ctxgraph_db::profile::Request::default(),
                    Path::new("/w/session.jsonl"),
                )
                .expect("nearby --session");
            let got: BTreeMap<String, u64> = layout
                .blocks
                .iter()
                .map(|b| (b.source.display(), (b.range.end - b.range.start) as u64))
                .collect();
            let want: BTreeMap<String, u64> = want_steps[k]
                .iter()
                .filter(|(path, _)| !path.starts_with('('))
                .filter_map(|(path, &bytes)| {
                    let before = want_steps[k - 1].get(path).copied().unwrap_or_default();
                    (bytes > before).then(|| (path.clone(), bytes - before))
                })
                .collect();
            assert_eq!(got, want, "{} step {}: a Read of {read}", dir.display(), k + 1);
            checked += 1;
            attaching += usize::from(!want.is_empty());
        }
    }
    assert!(checked >= 4 && attaching >= 1, "reads checked: {checked}, {attaching} attaching");
}

/// opencode's savings: the working directory's `AGENTS.md`, moved to the folder the recorded
/// session (e01: parallel reads under `sub/` in its first step) read under, would have been
/// absent from the one call before those reads' results.
#[test]
fn an_opencode_root_rules_file_moved_to_the_folder_read_saves_the_calls_before_the_read() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("session/e01_nearby_claims");
    let (engine, ws) = in_memory_with(&[
        (
            "export.json",
            std::fs::read_to_string(dir.join("export.json"))
                .expect("export")
                .replace("<PROJ>", "/tmp/cc-sessions"),
        ),
        ("AGENTS.md", "root rules\n".to_owned()),
    ]);
    let costs = engine.session_costs(ws, Agent::Opencode, Path::new("export.json")).expect("session rules");
    let root = costs
        .total
        .iter()
        .find(|f| f.path == Path::new("/tmp/cc-sessions/AGENTS.md"))
        .expect("the root file");
    let steps = costs.steps.len() as u64;
    assert!(steps >= 2 && root.bytes % steps == 0, "sent whole with every call: {root:?}");
    let saving = costs.savings.iter().find(|s| s.change == "move to sub/AGENTS.md").expect("a saving");
    assert_eq!(saving.bytes, root.bytes / steps, "{saving:?}");
}
