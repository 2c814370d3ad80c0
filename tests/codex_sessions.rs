//! `session rules --agent codex` against the real Codex 0.171.0: every recorded session in
//! `agents/codex/sessions/<case>/` (recorded by `oracle/codex_sessions.py`), on both `System`
//! backends. The rollout is Codex's own, its wording replaced by `<prose:…>` tokens;
//! `proj/` and `home/` are the folders as the session left them; `expected.json` holds, per
//! request, the bytes of each rule-like file the captured request body carried, computed by
//! the recorder from the request bodies, not from the rollout and not by ctxgraph.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::system::{MemorySystem, System};
use ctxgraph_engine::{Agent, Engine, HostEnv, OsSystem};

/// Per step: each file's bytes, paths with the run folder as `<run>`.
type Steps = Vec<BTreeMap<String, u64>>;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/codex/sessions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/agents/codex/sessions")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The recorded bytes, for the run folder `run` (the recording counts it as `<run>`).
fn expected(dir: &Path, run: &str) -> Steps {
    let longer = run.len() as u64 - "<run>".len() as u64;
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    value["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| {
            step["files"]
                .as_array()
                .expect("files")
                .iter()
                .map(|f| {
                    let bytes = f["bytes"].as_u64().expect("bytes")
                        + f["run_mentions"].as_u64().expect("run") * longer;
                    (f["path"].as_str().expect("path").to_owned(), bytes)
                })
                .collect()
        })
        .collect()
}

/// Every file below `from`, relative to it.
fn files(from: &Path, below: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(from.join(below)).expect("case folder").filter_map(Result::ok) {
        let rel = below.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            files(from, &rel, out);
        } else {
            out.push((rel, std::fs::read(entry.path()).expect("read")));
        }
    }
}

/// The case laid out on one backend: what `session rules` makes of it, and what the
/// recording says for that layout.
fn measured(dir: &Path, disk: bool) -> (Steps, Steps) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut tree = Vec::new();
    for top in ["proj", "home"] {
        files(dir, Path::new(top), &mut tree);
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
        Arc::new(OsSystem)
    } else {
        let fs = MemorySystem::new();
        for (rel, bytes) in tree {
            fs.write_file(root.join(rel), bytes);
        }
        fs.init_git_repo(root.join("proj"));
        Arc::new(fs)
    };
    if disk {
        let git =
            std::process::Command::new("git").args(["init", "-q"]).current_dir(root.join("proj")).status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
    }
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
    (got, expected(dir, &run))
}

#[test]
fn every_recorded_rollout_matches_the_request_bodies() {
    let dirs = cases();
    assert!(dirs.len() >= 2, "recorded sessions: {dirs:?}");
    for dir in &dirs {
        for disk in [false, true] {
            let (got, want) = measured(dir, disk);
            assert_eq!(got, want, "{} (disk: {disk}): per-request bytes", dir.display());
        }
    }
}

/// A rollout cut in the middle of a line is refused at that line, never half-reported.
#[test]
fn a_cut_rollout_is_refused_at_its_line() {
    let dir = &cases()[0];
    let text = std::fs::read_to_string(dir.join("rollout.jsonl")).expect("rollout");
    let lines: Vec<&str> = text.lines().collect();
    let cut = format!("{}\n{}\n", lines[..2].join("\n"), &lines[2][..lines[2].len() / 2]);
    let fs = MemorySystem::new();
    fs.write_file("/tmp/cx/rollout.jsonl", cut);
    let mut engine = Engine::new(Arc::new(fs), HostEnv::fixed("/tmp/cx/home"));
    let ws = engine.open(Path::new("/tmp/cx")).expect("open");
    let err = engine.session_costs(ws, Agent::Codex, Path::new("rollout.jsonl")).expect_err("cut");
    assert!(err.to_string().contains("/tmp/cx/rollout.jsonl:3: not JSON"), "{err}");
}
