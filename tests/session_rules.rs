//! `session rules`. Claude Code 2.1.332 first: every recorded
//! session in `agents/claude-code/sessions/<case>/` (recorded by `oracle/cc_sessions.py`),
//! on both `System` backends. The transcript is Claude Code's own, its wording replaced by
//! placeholders of the same length; `expected.json` holds, per main-loop request, the bytes
//! of each rule file the captured request body carried, computed by the recorder from the
//! request bodies, not from the transcript and not by ctxgraph. The last test is opencode's
//! `session rules` over one of its recorded sessions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::{Agent, Engine, HostEnv, OsSystem};

/// Per step: each file's bytes.
type Steps = Vec<BTreeMap<String, u64>>;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/claude-code/sessions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/agents/claude-code/sessions")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn expected(dir: &Path) -> Steps {
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let steps = value["steps"].as_array().expect("steps");
    steps
        .iter()
        .map(|step| {
            let files = step["files"].as_array().expect("files");
            files
                .iter()
                .map(|f| (f["path"].as_str().expect("path").to_owned(), f["bytes"].as_u64().expect("bytes")))
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
    costs
        .steps
        .iter()
        .map(|step| step.files.iter().map(|f| (f.path.to_string_lossy().into_owned(), f.bytes)).collect())
        .collect()
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
    let fs = MemorySystem::new();
    let root = PathBuf::from("/tmp/cc-sessions");
    fs.write_file(root.join(name), text);
    let mut engine = Engine::new(Arc::new(fs), HostEnv::fixed(root.join("home")));
    let ws = engine.open(&root).expect("open");
    (engine, ws)
}

/// A transcript cut in the middle of a line is refused at that line, never half-reported.
#[test]
fn a_cut_transcript_is_refused_at_its_line() {
    let dir = &cases()[0];
    let text = std::fs::read_to_string(dir.join("transcript.jsonl")).expect("transcript");
    let lines: Vec<&str> = text.lines().collect();
    let cut = format!("{}\n{}\n", lines[..3].join("\n"), &lines[3][..lines[3].len() / 2]);
    let (engine, ws) = in_memory("session.jsonl", cut);
    let err = engine.session_costs(ws, Agent::ClaudeCode, Path::new("session.jsonl")).expect_err("cut");
    let message = err.to_string();
    assert!(message.contains("/tmp/cc-sessions/session.jsonl:4: not JSON"), "{message}");
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
